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
    const h = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(raw);
    if (h) {
      o = Number(h[1]);
      n = Number(h[2]);
      out.push({ kind: 'hunk', text: raw });
    } else if (raw.startsWith('+')) out.push({ kind: 'add', text: raw.slice(1), newNo: n++ });
    else if (raw.startsWith('-')) out.push({ kind: 'del', text: raw.slice(1), oldNo: o++ });
    else if (raw.startsWith(' ') || raw === '') out.push({ kind: 'ctx', text: raw.slice(1), oldNo: o++, newNo: n++ });
    else out.push({ kind: 'meta', text: raw });
  }
  return out;
}
