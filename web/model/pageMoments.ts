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
