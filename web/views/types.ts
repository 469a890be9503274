/*
 * types.ts - what every experiment view receives: the experiment's
 * metadata, the parameters the runs used, the finished runs by variant and
 * which variant the presenter emphasises; in a lesson, which kernel is only
 * a pinned reference; the view's own state in the URL; and the sweeps its
 * registry entry declares, run by the app (a view only draws: it never
 * runs the engine itself).
 */
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import type { ReplayState, TreeInfo } from '../model/replay';
import type { Trace } from '../model/trace';
import type { SeedRuns } from '../model/spread';
import type { Emphasis } from '../model/urlState';

export type SweepState = 'idle' | 'running' | 'done' | 'stopped' | 'error';

/** A sweep the app runs for a view (views/registry.ts `sweeps`): the rows
 * so far, where it stands, and its start and stop. */
export interface SweepHandle<R> {
  rows: R[];
  state: SweepState;
  err: string;
  /** points in the sweep */
  total: number;
  run(): void;
  stop(): void;
}

/** What an experiment's replay shows (views/registry.ts `replay`). */
export interface ReplaySpec {
  /** what to watch, one or two sentences */
  blurb: string;
  /** draw the file's io_tree */
  showIo?: boolean;
  /** the tree to show first (default: the fs tree) */
  pickTree?: (s: ReplayState) => TreeInfo | undefined;
  /** parameters that make a run classroom-sized (recorded whole) */
  classroom?: Record<string, string>;
  /** the page's other pictures follow the replay: the view state (v.* in
   * the URL) for the first run at a position (sparse-cp: its lseek cursor) */
  drive?: (trace: Trace, pos: number) => Record<string, string | undefined>;
}

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
  /** The sweeps the registry declares for this view, by id, run by the app. */
  sweeps?: Record<string, SweepHandle<unknown>>;
  /** The page's runs over the seeds, when it has them: a noisy figure the view shows goes with its spread. */
  spread?: SeedSpread;
}

/** A view's sweep by id, its rows typed as the registry's `row` makes them. */
export function sweepOf<R>(props: Pick<ViewProps, 'sweeps'>, id: string): SweepHandle<R> | undefined {
  return props.sweeps?.[id] as SweepHandle<R> | undefined;
}

/** The page's runs over the seeds (app/SeedsPanel.tsx useSeeds), for a noisy figure's spread. */
export interface SeedSpread {
  rows: SeedRuns[];
  state: SweepState;
  total: number;
  /** start it (absent: the page cannot, as in a lesson) */
  run?: () => void;
  stop?: () => void;
}
