/*
 * types.ts - what every experiment view receives: the experiment's
 * metadata, the parameters the runs used, the finished runs by variant and
 * which variant the presenter emphasises; in a lesson, which kernel is only
 * a pinned reference; and the view's own state in the URL.
 */
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import type { Emphasis } from '../model/urlState';
import { KERNEL_COLOR, KERNEL_LABEL } from './common/palette';

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
  /** A kernel whose run is only a pinned reference (a lesson step runs the
   * other): drawn beside it, hollow or faded, and labelled so. */
  reference?: Variant;
  /** The view's own state, kept in the URL (`v.cursor=0.25`, `v.sweep=1`). */
  view?: Record<string, string>;
  /** Change it (undefined removes a key); absent where the URL is not the view's (a lesson). */
  onView?: (patch: Record<string, string | undefined>) => void;
}

/** The kernels' colours and names: views/common/palette.ts (kept here under their old names). */
export const VARIANT_COLOR = KERNEL_COLOR;
export const VARIANT_LABEL = KERNEL_LABEL;
