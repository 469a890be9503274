/*
 * longRun.ts - when opening a page must not start its run unasked: the
 * setting's work, by the experiment's own estimate (lab_estimate: its
 * operations, IOs, files...), is more than LONG_FACTOR times the work of
 * its published setup, which every page runs on opening (the CLI tests
 * keep those within a couple of seconds of WASM). A 200,000-operation
 * torture link (10x the default) asks; a changed device or block size
 * does not.
 */
import type { WorkEstimate } from '../engine/types';
import { fmtNum } from './format';

export const LONG_FACTOR = 4;

export function isLongRun(e: WorkEstimate): boolean {
  return e.defaultWork > 0 && e.work > LONG_FACTOR * e.defaultWork;
}

/** The question, in words: what the setting asks for against the default. */
export function longRunText(e: WorkEstimate, unit = 'units of work'): string {
  const times = e.work / e.defaultWork;
  return `These settings ask for ${fmtNum(e.work)} ${unit}, ${fmtNum(times)} times the published setup's ${fmtNum(e.defaultWork)}: a long run, so it has not started.`;
}
