/*
 * diff.ts - classify the lines of a unified diff for DiffView: file headers,
 * hunk headers, additions, removals and context, with old/new line numbers
 * taken from the hunk headers. Pure.
 */

export type DiffKind = 'file' | 'hunk' | 'add' | 'del' | 'ctx' | 'meta';

export interface DiffLine {
  kind: DiffKind;
  text: string;
  oldNo?: number;
  newNo?: number;
}

const num = (side: 'old' | 'new', x: number): Partial<DiffLine> => (Number.isNaN(x) ? {} : side === 'old' ? { oldNo: x } : { newNo: x });

/** Parse unified diff text into numbered, classified lines. */
export function parseDiff(text: string): DiffLine[] {
  const out: DiffLine[] = [];
  let o = 0;
  let n = 0;
  for (const raw of text.replace(/\n$/, '').split('\n')) {
    if (raw.startsWith('--- ') || raw.startsWith('+++ ') || raw.startsWith('diff ')) {
      out.push({ kind: 'file', text: raw });
      continue;
    }
    // a hunk header; an excerpt's header may name its function without line numbers ("@@ btrfs_truncate() @@"): its lines are then unnumbered
    if (raw.startsWith('@@')) {
      const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
      o = h ? Number(h[1]) : NaN;
      n = h ? Number(h[2]) : NaN;
      out.push({ kind: 'hunk', text: raw });
    } else if (raw.startsWith('+')) out.push({ kind: 'add', text: raw.slice(1), ...num('new', n++) });
    else if (raw.startsWith('-')) out.push({ kind: 'del', text: raw.slice(1), ...num('old', o++) });
    else if (raw.startsWith(' ') || raw === '') out.push({ kind: 'ctx', text: raw.slice(1), ...num('old', o++), ...num('new', n++) });
    else out.push({ kind: 'meta', text: raw });
  }
  return out;
}
