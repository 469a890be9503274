/*
 * ioLayout.ts - an inode's io_tree (replay.ts IoRec) as ranges on the file
 * offset axis. Pure. A file of 16,384 records on a 1000 px strip would be
 * sixteen records per pixel, so records that fall in the same pixel column
 * merge into one rectangle that keeps their count and the union of their
 * bits; a small file keeps one rectangle per record. The range lock of the
 * current lseek ([offset, EOF], eio_lock_pass) and the ordered extents in
 * flight come out as spans on the same axis.
 */
import type { IoRec, LockPass } from './replay';

export interface IoRect {
  x: number;
  w: number;
  bits: number;
  count: number;
  start: number;
  end: number;
  /** the last change to any of its records (an event index) */
  at: number;
}

export interface IoLayout {
  rects: IoRect[];
  lock: { x0: number; x1: number; records: number; at: number } | null;
  ordered: { x0: number; x1: number }[];
  scale: (off: number) => number;
}

export interface IoLayoutOptions {
  width: number;
  /** file range shown [from, to) in bytes */
  from: number;
  to: number;
  lockPass?: LockPass | null;
  ordered?: Map<number, number>;
}

export function layoutIoTree(recs: IoRec[], o: IoLayoutOptions): IoLayout {
  const span = Math.max(1, o.to - o.from);
  const scale = (off: number): number => ((off - o.from) / span) * o.width;
  const rects: IoRect[] = [];
  let cur: IoRect | null = null;
  let col = -1;
  for (const r of recs) {
    if (r.end < o.from || r.start >= o.to) continue;
    const x0 = Math.max(0, scale(r.start));
    const x1 = Math.min(o.width, scale(r.end + 1));
    const c = Math.floor(x0);
    if (cur && (c === col || x0 < cur.x + cur.w) && x1 - x0 < 1) {
      // shares a pixel with the previous one: merge
      cur.w = Math.max(cur.w, x1 - cur.x);
      cur.bits |= r.bits;
      cur.count++;
      cur.end = r.end;
      cur.at = Math.max(cur.at, r.at);
      continue;
    }
    cur = { x: x0, w: Math.max(x1 - x0, 0), bits: r.bits, count: 1, start: r.start, end: r.end, at: r.at };
    col = c;
    rects.push(cur);
  }
  const lp = o.lockPass;
  const lock = lp ? { x0: Math.max(0, scale(lp.start)), x1: Math.min(o.width, scale(lp.end + 1)), records: lp.records, at: lp.at } : null;
  const ordered: { x0: number; x1: number }[] = [];
  if (o.ordered) for (const [s, len] of o.ordered) ordered.push({ x0: Math.max(0, scale(s)), x1: Math.min(o.width, scale(s + len)) });
  return { rects, lock, ordered, scale };
}
