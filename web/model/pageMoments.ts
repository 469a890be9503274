/*
 * pageMoments.ts - where a page's tree picture puts its cursor first: the
 * moment the page is about, found in a recording's events. Pure.
 */
import type { Trace } from './trace';

const READ = 1;

/**
 * bonnie: the leaf an fsync cloned under its read lock with the longest
 * allocation (leaf_copy's alloc_ns; the longest hold when none waited):
 * the position just after that read lock was taken, so the picture shows
 * the leaf read-locked while the copy is being made. -1 if the recording
 * has no leaf copy.
 */
export function longestLeafClone(tr: Trace): number {
  const kCopy = tr.kindId['leaf_copy'];
  const kLock = tr.kindId['lock'];
  if (kCopy === undefined || kLock === undefined) return -1;
  const a = (i: number, j: number): number => tr.args[tr.off[i]! + j]!;
  let best = -1;
  let bestKey = -1;
  for (let i = 0; i < tr.n; i++) {
    if (tr.kind[i] !== kCopy) continue;
    // alloc_ns first, the hold to break ties (and when nothing waited)
    const key = a(i, 2) * 1e6 + a(i, 1) / 1e3;
    if (key > bestKey) {
      bestKey = key;
      best = i;
    }
  }
  if (best < 0) return -1;
  const bytenr = a(best, 0);
  const task = tr.task[best]!;
  for (let i = best - 1; i >= 0; i--)
    if (tr.kind[i] === kLock && tr.task[i] === task && a(i, 1) === bytenr && a(i, 2) === READ) return i + 1;
  return best + 1;
}

export interface LeafClone {
  /** the leaf_copy event */
  i: number;
  bytenr: number;
  holdMs: number;
  allocMs: number;
}

const cloneAt = (tr: Trace, i: number): LeafClone => {
  const o = tr.off[i]!;
  return { i, bytenr: tr.args[o]!, holdMs: tr.args[o + 1]! / 1e6, allocMs: tr.args[o + 2]! / 1e6 };
};

/**
 * The leaf clone a position is at (the first leaf_copy at or after it) in
 * the first recording, and the same clone in the second: the same
 * operation (the n-th of its kind), the same clone of it (its k-th).
 * Either is null when the recording has none.
 */
export function sameLeafClone(a: Trace, b: Trace | undefined, pos: number): { a: LeafClone | null; b: LeafClone | null } {
  const kA = a.kindId['leaf_copy'];
  if (kA === undefined) return { a: null, b: null };
  let ia = -1;
  for (let i = Math.max(0, pos - 1); i < a.n; i++)
    if (a.kind[i] === kA) {
      ia = i;
      break;
    }
  if (ia < 0) return { a: null, b: null };
  // the operation it belongs to, and which of its clones it is
  let opStart = -1;
  for (let i = ia; i >= 0; i--)
    if (a.kinds[a.kind[i]!]!.op) {
      opStart = i;
      break;
    }
  if (!b || opStart < 0) return { a: cloneAt(a, ia), b: null };
  let k = 0;
  for (let i = opStart; i < ia; i++) if (a.kind[i] === kA) k++;
  const opKind = a.kind[opStart]!;
  let nth = 0;
  for (let i = 0; i < opStart; i++) if (a.kind[i] === opKind) nth++;
  const name = a.kinds[opKind]!.name;
  const kOpB = b.kindId[name];
  const kB = b.kindId['leaf_copy'];
  if (kOpB === undefined || kB === undefined) return { a: cloneAt(a, ia), b: null };
  let j0 = -1;
  for (let j = 0, seen = 0; j < b.n; j++)
    if (b.kind[j] === kOpB && seen++ === nth) {
      j0 = j;
      break;
    }
  if (j0 < 0) return { a: cloneAt(a, ia), b: null };
  for (let j = j0 + 1, c = 0; j < b.n && !b.kinds[b.kind[j]!]!.op; j++)
    if (b.kind[j] === kB && c++ === k) return { a: cloneAt(a, ia), b: cloneAt(b, j) };
  return { a: cloneAt(a, ia), b: null };
}
