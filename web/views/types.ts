/*
 * types.ts - what every experiment view receives: the experiment's
 * metadata, the parameters the runs used, the finished runs by variant and
 * which variant the presenter emphasises.
 */
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import type { Emphasis } from '../model/urlState';

export interface PreviousRun {
  /** What distinguishes it ("iodepth=1", "step 1"). */
  label: string;
  params: Record<string, string>;
  runs: Partial<Record<Variant, RunResult>>;
}

export interface ViewProps {
  info: ExperimentInfo;
  /** Parameter text the runs used (defaults filled in). */
  params: Record<string, string>;
  runs: Partial<Record<Variant, RunResult>>;
  emphasis: Emphasis;
  /** The run shown before this one, for comparison (a ghost in the picture), if any. */
  previous?: PreviousRun;
  /** The seed the runs used (a view that runs more, as a sweep, uses it too). */
  seed?: number;
  /** Set some parameters and run again (absent where parameters are fixed, as in a lesson). */
  onParams?: (params: Record<string, string>) => void;
}

/** The colour of each variant (Okabe-Ito), used everywhere. */
export const VARIANT_COLOR: Record<Variant, string> = {
  before: '#D55E00',
  after: '#0072B2',
  base: '#009E73',
};

export const VARIANT_LABEL: Record<Variant, string> = {
  before: 'before (no patch)',
  after: 'after (patched)',
  base: 'simulated',
};
