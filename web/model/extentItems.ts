/*
 * extentItems.ts - the file extent items a run inserted, file by file, from
 * its recording: an ordered extent (oe_add) becomes a file extent item
 * when it finishes (oe_done: btrfs_finish_ordered_io inserts the
 * EXTENT_DATA item), and the operation running when the extent was made
 * says why it was written (a receive's TRUNCATE writing the tail page at
 * once, its final sync, or background writeback). Pure.
 */
import type { Trace } from './trace';

export interface ExtentItem {
  start: number;
  len: number;
  /** when the ordered extent was created and when its item went in (ns) */
  tAdd: number;
  tDone: number;
  /** the operation running when it was created ("truncate", "sync", ...), or "writeback" */
  why: string;
}

export interface FileItems {
  fs: number;
  ino: number;
  items: ExtentItem[];
}

export interface ExtentItemsSummary {
  files: FileItems[];
  /** items per file (files with at least one), what extents_per_file counts */
  perFile: number;
  items: number;
  /** items by why */
  byWhy: Record<string, number>;
}

/** The files of the data-path instance with the most files in the
 * recording (the receive's destination), each with its items in order. */
export function extentItems(tr: Trace): ExtentItemsSummary {
  const kAdd = tr.kindId['oe_add'] ?? -1;
  const kDone = tr.kindId['oe_done'] ?? -1;
  const a = (i: number, j: number): number => tr.args[tr.off[i]! + j]!;
  const byFile = new Map<string, FileItems>();
  const open = new Map<string, ExtentItem>();
  let op = '';
  for (let i = 0; i < tr.n; i++) {
    const k = tr.kind[i]!;
    const kind = tr.kinds[k]!;
    if (kind.op) {
      op = kind.name.slice(3);
      continue;
    }
    if (k !== kAdd && k !== kDone) continue;
    const fs = a(i, 0);
    const ino = a(i, 1);
    const key = `${fs}:${ino}:${a(i, 2)}`;
    if (k === kAdd) {
      // a task's own operation made it; the flusher's or a worker's is writeback
      const task = tr.task[i]!;
      const name = task >= 0 ? (tr.tasks[task] ?? '') : '';
      const why = op === 'truncate' || op === 'sync' ? (/flush|writeback|kworker/.test(name) ? 'writeback' : op) : 'writeback';
      open.set(key, { start: a(i, 2), len: a(i, 3), tAdd: tr.t[i]!, tDone: -1, why });
      continue;
    }
    const it = open.get(key) ?? { start: a(i, 2), len: a(i, 3), tAdd: -1, tDone: -1, why: 'writeback' };
    open.delete(key);
    it.tDone = tr.t[i]!;
    const fk = `${fs}:${ino}`;
    let f = byFile.get(fk);
    if (!f) byFile.set(fk, (f = { fs, ino, items: [] }));
    f.items.push(it);
  }
  // the instance with the most files
  const perFs = new Map<number, number>();
  for (const f of byFile.values()) perFs.set(f.fs, (perFs.get(f.fs) ?? 0) + 1);
  let fsBest = -1;
  for (const [fs, n] of perFs) if (fsBest < 0 || n > perFs.get(fsBest)!) fsBest = fs;
  const files = [...byFile.values()].filter((f) => f.fs === fsBest).sort((x, y) => x.ino - y.ino);
  for (const f of files) f.items.sort((x, y) => x.start - y.start);
  const items = files.reduce((n, f) => n + f.items.length, 0);
  const byWhy: Record<string, number> = {};
  for (const f of files) for (const it of f.items) byWhy[it.why] = (byWhy[it.why] ?? 0) + 1;
  return { files, perFile: files.length ? items / files.length : 0, items, byWhy };
}
