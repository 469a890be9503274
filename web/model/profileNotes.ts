/*
 * profileNotes.ts - split a device profile's `notes` (one string written by
 * engine/tools/fit-device.mjs: "key: why; key: why; ...") into items the
 * device view lists one per line. On a projector a 900-character paragraph
 * in a narrow column is unreadable; a list with the constants' names first
 * is scanned in seconds.
 *
 * Items are separated by ";" outside parentheses (a note's own
 * parenthetical may contain ";"). An item's head, the text before its first
 * ": ", is shown as a name only when it looks like one: one or two words of
 * identifiers, optionally followed by a parenthesis ("max_queue",
 * "seg_bytes/gc_valid/drain_sigma", "write stalls (defer_ns, fitted)"),
 * not a clause of prose ("no write was measured on this drive").
 */
export interface NoteItem {
  /** the constants (or topic) the item is about, when it starts with one */
  head?: string;
  text: string;
}

const HEAD = /^[\w/.-]+(?: [\w/.-]+)?(?: \([^()]*\))?$/;

export function splitProfileNotes(notes: string): NoteItem[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of notes) {
    if (ch === '(') depth++;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ';' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  parts.push(cur);
  const items: NoteItem[] = [];
  for (const raw of parts) {
    const s = raw.trim();
    if (!s) continue;
    const i = s.indexOf(': ');
    const head = i > 0 ? s.slice(0, i) : '';
    if (head && HEAD.test(head)) items.push({ head, text: s.slice(i + 2).trim() });
    else items.push({ text: s });
  }
  return items;
}
