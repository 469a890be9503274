/*
 * registry.ts - experiment name -> the view that draws its picture from the
 * runs' `details` (and, if it asks, structure snapshots and the trace,
 * collected in the worker when the run finishes). One line per experiment;
 * an experiment without an entry shows only the panels and the metrics table.
 *
 * To add a view: write web/views/<name>/<Name>View.tsx exporting a component
 * that takes ViewProps, and add one line below, e.g.
 *   'qgroup-drop': { load: () => import('./qgroup/QgroupView').then((m) => m.QgroupView), collect: { snapshots: ['tree:dropping'] } },
 * Each view is its own chunk (with what only it draws), loaded when a page
 * of its experiment first asks for it (viewFor), not with every page.
 *
 * Views only draw. What a view needs run besides the page's own runs (a
 * sweep over a parameter, every measured job) is declared here as data
 * (`sweeps`: the points, the runs of a point, the row a point gives); the
 * app runs it (app/Results.tsx, app/useSweep.ts) and hands the view its
 * rows, state and run / stop (ViewProps.sweeps). No file under web/views/
 * imports the engine client, the runner or the sweep hook
 * (web/layering.test.ts fails if one does).
 * An experiment also names its headline metrics (the page's big
 * before/after comparison and the panels) and human labels for its
 * metrics (LABELS); without them the page uses the first metrics and the
 * engine's help lines.
 */
import { createElement, lazy, Suspense, type ComponentType } from 'react';
import type { CollectSpec, ExperimentInfo, MetricInfo, RunResult, RunSpec } from '../engine/types';
import { metricLabel } from './common/labels';
import { distinctJobs, jobParams, measuredPoints, type MeasuredFioPoint } from '../model/fitCheck';
import { isNoisy } from '../model/noisy';
import { jobKey, measuredJobs } from '../model/fioJobs';
import { publishedSetups } from '../model/params';
import type { ReplaySpec, ViewProps } from './types';
import { droppingTree, lseekCursor } from './replay/pick';
import { subvolTree } from './bonnie/pick';
import { SWEEP_THRESHOLDS, sweepRow } from './qgroup/model';
import { receivedTree } from './receive/pick';
import { creationRow, sweepSpawns } from './sparsecp/model';
import { fillPoints, fillRow } from './untar/fill';

/** What a sweep's functions are given: the page's experiment, parameters and seed. */
export interface SweepContext {
  info: ExperimentInfo;
  params: Record<string, string>;
  seed: number;
}

/**
 * A sweep a view draws, as data: its points, the runs one point needs and
 * the row the view draws from their results. The app runs the points one
 * after another (each point's runs in order, each cancellable) and hands
 * the view `sweeps[id]`: { rows, state, err, total, run, stop }.
 */
export interface SweepSpec<P = string, R = unknown> {
  id: string;
  /** the points for this setting ([]: the sweep does not apply) */
  points(ctx: SweepContext): P[];
  /** the runs of one point */
  runs(point: P, ctx: SweepContext): RunSpec[];
  /** the row the view draws, from the runs' results (in the order of `runs`) */
  row(point: P, results: RunResult[], ctx: SweepContext): R;
  /** what the rows depend on besides the points (default: every parameter and the seed) */
  setting?(ctx: SweepContext): unknown;
  /** The view state (v.* in the URL) that says the sweep was run: started
   * by hand, it is written; a link that carries it runs the sweep by itself. */
  viewKey?: [string, string];
}

/** A sweep spec whose point and row types are its own. */
const sweep = <P, R>(s: SweepSpec<P, R>): SweepSpec<P, R> => s;

export interface ViewEntry {
  /** The view's module, loaded on demand (its own chunk). */
  load: () => Promise<ComponentType<ViewProps>>;
  /** Sweeps the view draws, run by the app (see SweepSpec). */
  sweeps?: SweepSpec<any, any>[]; // each keeps its own point and row types
  /** Snapshots / trace the view needs from each finished run. */
  collect?: CollectSpec;
  /** Parameter sets the keyboard's next / previous step through on the
   * experiment's page (default: the published rows' setups; a lesson keeps
   * its own steps). */
  steps?: (info: ExperimentInfo, values: Record<string, string>) => Record<string, string>[];
  /** "Watch it happen": record the runs and play them back (views/replay/README.md) */
  replay?: ReplaySpec;
}

/**
 * Per experiment: the headline metrics, first the one the patch is about
 * (the page opens with it, before and after on one scale), and what each
 * metric is called on the page (the identifier stays in the tooltip, the
 * CSV and the CLI). A metric missing here is named from the engine's help.
 */
export const METRICS: Record<string, { headline: string[]; labels: Record<string, string>; noisy?: string[] }> = {
  fio: {
    headline: ['iops', 'clat_p50_us', 'clat_p99_us'],
    labels: {
      iops: 'IOPS',
      bw_mib_s: 'bandwidth',
      clat_avg_us: 'mean latency',
      clat_p50_us: 'median latency (p50)',
      clat_p90_us: 'p90 latency',
      clat_p99_us: 'p99 latency',
      clat_p999_us: 'p99.9 latency',
    },
  },
  bonnie: {
    // the allocation that moved first: the latency rows are single draws
    // of a noisy tail, drawn with their spread over 20 seeds
    headline: ['alloc_locked_max_ms', 'seq_delete_lat_ms', 'rand_delete_lat_ms', 'seq_create_lat_ms', 'rand_create_lat_ms'],
    // maxima of one run: each the tail of a noisy process (allocation luck, the drive, the timer wheel)
    noisy: [
      'seq_create_lat_ms',
      'seq_stat_lat_ms',
      'seq_delete_lat_ms',
      'rand_create_lat_ms',
      'rand_stat_lat_ms',
      'rand_delete_lat_ms',
      'alloc_locked_max_ms',
      'leaf_hold_max_ms',
      'worker_leaf_wait_max_ms',
    ],
    labels: {
      seq_create_lat_ms: 'slowest sequential create',
      seq_stat_lat_ms: 'slowest sequential stat + read',
      seq_delete_lat_ms: 'slowest sequential delete',
      rand_create_lat_ms: 'slowest random create',
      rand_stat_lat_ms: 'slowest random stat + read',
      rand_delete_lat_ms: 'slowest random delete',
      seq_create_p99_ms: 'sequential create, p99',
      seq_stat_p99_ms: 'sequential stat, p99',
      seq_delete_p99_ms: 'sequential delete, p99',
      rand_create_p99_ms: 'random create, p99',
      rand_stat_p99_ms: 'random stat, p99',
      rand_delete_p99_ms: 'random delete, p99',
      seq_create_per_s: 'sequential creates per second',
      seq_stat_per_s: 'sequential stats per second',
      seq_delete_per_s: 'sequential deletes per second',
      rand_create_per_s: 'random creates per second',
      rand_stat_per_s: 'random stats per second',
      rand_delete_per_s: 'random deletes per second',
      eb_allocs: 'extent buffers allocated by the log',
      eb_stalls: 'eb pages through direct reclaim',
      page_stalls: 'written pages through direct reclaim',
      alloc_locked_max_ms: 'longest allocation inside a leaf lock',
      leaf_hold_max_ms: 'longest leaf read lock',
      leaves_copied: 'leaves copied into the log',
      log_commits: 'log commits',
      commits: 'transaction commits',
    },
  },
  'qgroup-drop': {
    headline: ['account_max_ms', 'account_calls', 'account_total_ms'],
    labels: {
      account_calls: 'accounting calls',
      account_avg_ms: 'average accounting call',
      account_max_ms: 'longest accounting call',
      account_total_ms: 'all accounting calls together',
      dirty_extents: 'qgroup records',
      commits: 'transaction commits',
      drop_s: 'time to drop the subvolumes',
      run_s: 'delete to last commit',
      rec_data: 'records: data extents',
      rec_leaves: 'records: freed leaves',
      rec_nodes: 'records: freed nodes',
      rec_parent: 'records: parent tree blocks',
      rec_subtree: 'records: under shared subtrees',
      leaves_per_subvol: 'leaves per subvolume',
      inline_files: 'inline files',
    },
  },
  receive: {
    headline: ['receive_s', 'writeback_waits', 'extents_per_file'],
    labels: {
      receive_s: 'receive time',
      send_s: 'send time',
      truncates: 'TRUNCATE commands',
      writeback_waits: 'tail-page writes waited for',
      extents_per_file: 'extents per received file',
      sync_wait_avg_ms: 'one tail-page wait',
      sync_wait_s: 'all tail-page waits',
      recv_mkfile_s: 'time in MKFILE',
      recv_rename_s: 'time in RENAME',
      recv_write_s: 'time in WRITE',
      recv_truncate_s: 'time in TRUNCATE',
      recv_chown_s: 'time in CHOWN',
      recv_chmod_s: 'time in CHMOD',
      recv_utimes_s: 'time in UTIMES',
      recv_commit_s: "time in the receive's commits",
      files: 'files received',
      data_extents: 'data extents',
      recv_device_writes: 'disk writes during the receive',
      stream_mib: 'send stream',
      create_s: 'source creation time',
    },
  },
  'sparse-cp': {
    headline: ['cp_ms', 'records_per_lseek_avg', 'lseek_calls'],
    labels: {
      cp_ms: 'cp time',
      lseek_calls: 'lseek calls',
      tree_nodes_visited: 'tree nodes visited',
      cache_hits: 'page cache hits',
      cache_misses: 'page cache misses',
      metadata_reads: 'tree blocks read',
      records_per_lseek_avg: 'io_tree records per lseek',
      records_per_lseek_max: 'most records in one lseek',
      lock_records_avg: 'records per range lock',
      search_records_avg: 'records per delalloc search',
      state_cache_hits: 'cached-state hits',
      state_cache_misses: 'cached-state misses',
      create_s: 'file creation time',
      delalloc_extents_at_cp: 'delalloc extents at cp',
      iotree_records_max: 'most io_tree records',
      lseek_wait_ms: 'lseek waits on locked ranges',
      flushes: 'writeback passes',
    },
  },
  untar: {
    headline: ['elapsed_s', 'reclaim_cycles', 'pages_flushed_per_cycle'],
    labels: {
      elapsed_s: 'untar time',
      flush_calls: 'delalloc flush rounds',
      pages_flushed: 'pages written by reclaim',
      inodes_flushed: 'inodes written by reclaim',
      ticket_wait_s: 'time tickets waited',
      reclaim_cycles: 'reclaim cycles',
      pages_needed_per_cycle: 'pages asked for per cycle',
      pages_flushed_per_cycle: 'pages written per cycle',
      inodes_per_cycle: 'inodes written per cycle',
      writer_ticket_s: 'tar parked on tickets',
      writer_tickets: 'times tar parked on a ticket',
      peak_may_use_gib: 'peak metadata reserved',
      overcommit_limit_gib: 'overcommit limit',
      meta_tickets: 'metadata tickets',
      data_tickets: 'data tickets',
      decompress_s: "decompressor's CPU",
      tar_cpu_s: "tar's CPU",
      files: 'files',
      dirs: 'directories',
      archive_mib: 'tar archive',
      inline_files: 'inline files written by reclaim',
      dirty_mib_at_exit: 'dirty when tar exits',
      commits: 'transaction commits',
    },
  },
  torture: {
    headline: ['check_failures', 'commits', 'ops'],
    labels: { ops: 'operations', commits: 'commits (each checked)', fsyncs: 'fsyncs', check_failures: 'invariant violations', max_tree_height: 'tallest tree', full_checks: 'whole-file-system checks' },
  },
};

/** What the page calls a metric of an experiment. */
export const labelOf = (info: ExperimentInfo, m: MetricInfo | string): string =>
  metricLabel(METRICS[info.name]?.labels, typeof m === 'string' ? (info.metricInfo.find((x) => x.name === m) ?? { name: m }) : m);

/** Is a metric of the experiment one run of a noisy process at these parameters (declared, or published as noisy)? */
export const noisyOf = (info: ExperimentInfo, params: Record<string, string>) => (metric: string): boolean => isNoisy(info, metric, params, METRICS[info.name]?.noisy);

/** Does the page's headline show a noisy figure (so it needs its spread over the seeds)? */
export const headlineNoisy = (info: ExperimentInfo, params: Record<string, string>): boolean => headlineOf(info).some((m) => noisyOf(info, params)(m.name));

/** The experiment's headline metrics (declared, else its first three). */
export const headlineOf = (info: ExperimentInfo): MetricInfo[] => {
  const names = METRICS[info.name]?.headline ?? info.metricInfo.slice(0, 3).map((m) => m.name);
  return names.map((n) => info.metricInfo.find((m) => m.name === n)).filter((m): m is MetricInfo => m !== undefined);
};

/** The device page's fit check: every fio job measured on the profile, the fitted model itself (variation off). */
const FIT_CHECK = sweep<MeasuredFioPoint, { key: string; metrics: Record<string, number> }>({
  id: 'fit-check',
  points: ({ info, params }) => distinctJobs(measuredPoints(info.published, params.device ?? '')),
  runs: (j, { params, seed }) => [{ experiment: 'fio', variant: 'base', params: { ...params, ...jobParams(j) }, seed, variation: 'off' }],
  row: (j, [r]) => ({ key: jobKey(j), metrics: r?.metrics ?? {} }),
  // the job's own parameters are the points; the rest of the form is the setting
  setting: ({ params, seed }) => {
    const { rw: _rw, bs: _bs, iodepth: _qd, numjobs: _nj, ...rest } = params;
    return [rest, seed];
  },
});

/** qgroup-drop: the patched kernel at each threshold of the RFC's table. */
const THRESHOLD_SWEEP = sweep({
  id: 'threshold',
  points: () => SWEEP_THRESHOLDS,
  runs: (t, { params, seed }) => [{ experiment: 'qgroup-drop', variant: 'after', params: { ...params, threshold: t }, seed }],
  row: (t, [r]) => sweepRow(t, r?.metrics ?? {}),
  setting: ({ params, seed }) => [{ ...params, threshold: undefined }, seed], // the sweep sets threshold itself
  viewKey: ['sweep', '1'],
});

/** sparse-cp with delalloc left at cp: both kernels at a few creation speeds around the run's. */
const CREATION_SWEEP = sweep({
  id: 'creation',
  points: ({ info, params }) => (params.state === 'delalloc' ? sweepSpawns(Number(params.spawn_us), Number(info.params.find((q) => q.name === 'spawn_us')?.default)) : []),
  runs: (sp, { params, seed }) => (['before', 'after'] as const).map((variant) => ({ experiment: 'sparse-cp', variant, params: { ...params, spawn_us: sp }, seed })),
  row: (sp, [b, a]) => creationRow(sp, b?.metrics ?? {}, a?.metrics ?? {}),
  viewKey: ['sweep', '1'],
});

/** untar: both kernels with more and more of the device in chunks (when does it bite?). */
const FILL_SWEEP = sweep({
  id: 'fill',
  points: ({ params }) => fillPoints(Number(params.fs_gib), Number(params.fs_used_gib)),
  runs: (used, { params, seed }) => (['before', 'after'] as const).map((variant) => ({ experiment: 'untar', variant, params: { ...params, fs_used_gib: used }, seed })),
  row: (used, [b, a]) => fillRow(used, b?.metrics ?? {}, a?.metrics ?? {}),
  setting: ({ params, seed }) => [{ ...params, fs_used_gib: undefined }, seed], // the sweep sets fs_used_gib itself
  viewKey: ['sweep', 'fill'],
});

export const VIEWS: Record<string, ViewEntry> = {
  // → / ← walk the jobs fio measured on the profile, as the job picker lists them
  fio: { load: () => import('./device/DeviceView').then((m) => m.DeviceView), steps: (info, v) => measuredJobs(info.published, v.device ?? '').map((j) => j.params), sweeps: [FIT_CHECK] },
  bonnie: {
    load: () => import('./bonnie/BonnieView').then((m) => m.BonnieView),
    replay: {
      blurb:
        "bonnie++ on a classroom box: creates, stats and deletes, each create and delete fsyncing the file and its directory. Step through a create (shift+→): the fsync read-locks the file's subvolume leaf while copying it into the log tree; before the patch the copy is a fresh clone allocated under that lock.",
      pickTree: subvolTree,
      classroom: { files: '40', dirs: '2', file_bytes: '16384', ram_gib: '1' },
    },
  },
  // → / ← walk the sweep's thresholds (the RFC table's 1K-8K and infinite, and 16K)
  'qgroup-drop': {
    load: () => import('./qgroup/QgroupView').then((m) => m.QgroupView),
    steps: () => SWEEP_THRESHOLDS.map((threshold) => ({ threshold })),
    sweeps: [THRESHOLD_SWEEP],
    replay: {
      blurb: 'The cleaner drops each deleted subvolume leaf by leaf (op:drop steps): watch its tree turn to ghosts, the qgroup records pile up in the transaction, and the commit that accounts them; after the patch, the threshold commits part-way.',
      pickTree: droppingTree,
      classroom: { subvols: '2', files: '256', threshold: '64' },
    },
  },
  receive: {
    load: () => import('./receive/ReceiveView').then((m) => m.ReceiveView),
    replay: {
      blurb:
        "The received subvolume's tree, file by file: its inode, its ref, then, before the patch, the tail page's file extent item already at the truncate (written and waited for), the first page's only at the sync; after, one item per file, at the sync.",
      pickTree: receivedTree,
      classroom: { files_per_writer: '40', writers: '2' },
    },
  },
  'sparse-cp': {
    load: () => import('./sparsecp/SparseCpView').then((m) => m.SparseCpView),
    sweeps: [CREATION_SWEEP],
    replay: {
      blurb: "Each lseek locks the io_tree from its offset to EOF and walks every record in that range: before the series, the hole reads' UPTODATE records pile up ahead of cp's cursor; after it, the lock meets one record.",
      showIo: true,
      classroom: { file_mib: '8', state: 'cold' },
      drive: lseekCursor,
    },
  },
  untar: {
    load: () => import('./untar/UntarView').then((m) => m.UntarView),
    sweeps: [FILL_SWEEP],
    replay: {
      blurb:
        'tar entry by entry (op:extract, op:mkdir): the fs tree growing by four items per file, each file\'s io_tree turning DELALLOC, and, once the metadata limit is reached, reclaim\'s flushes clearing it: a few files per cycle before the fix, hundreds after.',
      showIo: true,
      classroom: { scale: '0.004', fs_gib: '1', fs_used_gib: '0' },
    },
  },
  torture: {
    load: () => import('./torture/TortureView').then((m) => m.TortureView),
    collect: { trace: true },
    replay: {
      blurb: 'Step through any operation (shift+→): the search path down the fs tree, the blocks it COWs and locks, the splits, and each commit.',
      classroom: { ops: '1000', subvols: '1' },
    },
  },
};

/** A view whose module has not arrived yet keeps the picture's place: the
 * page's frame stays where it is instead of flashing empty. */
const viewLoading = () => createElement('div', { className: 'view-loading loading', role: 'status', style: { minHeight: '20rem' } }, 'Loading the picture…');

/** A view whose chunk did not load (offline, a new build deployed under
 * the page): said in place; the rest of the page keeps working. */
const viewFailed = (err: unknown): ComponentType<ViewProps> =>
  function ViewFailed() {
    return createElement('div', { className: 'error', role: 'alert' }, `The picture could not be loaded (${err instanceof Error ? err.message : String(err)}); reload the page to try again.`);
  };

/** Per experiment: its view, loaded once, drawn through React.lazy under
 * its own Suspense (always that one tree, so the view is never remounted
 * when its module arrives). */
const deferred = new Map<string, { view: ComponentType<ViewProps>; preload: () => Promise<ComponentType<ViewProps>> }>();

function deferredView(experiment: string, entry: ViewEntry) {
  let loaded: ComponentType<ViewProps> | null = null;
  let pending: Promise<ComponentType<ViewProps>> | null = null;
  const preload = () =>
    (pending ??= entry.load().then(
      (c) => (loaded = c),
      (err: unknown) => (loaded = viewFailed(err)),
    ));
  // React.lazy is handed a thenable that answers as soon as the module is
  // here: at once when it already is, so the view is drawn in its first
  // render with no fallback (a resolved Promise would still suspend it for
  // a tick: a flash), else in the same tick the module arrives.
  type Loaded = { default: ComponentType<ViewProps> };
  const Lazy = lazy(
    () =>
      ({
        then: (ok: (m: Loaded) => void) => (loaded ? ok({ default: loaded }) : void preload().then((c) => ok({ default: c }))),
      }) as unknown as Promise<Loaded>,
  );
  function DeferredView(props: ViewProps) {
    return createElement(Suspense, { fallback: viewLoading() }, createElement(Lazy, props));
  }
  DeferredView.displayName = `View(${experiment})`;
  return { view: DeferredView, preload };
}

function deferredFor(experiment: string) {
  const entry = VIEWS[experiment];
  if (!entry) return null;
  let d = deferred.get(experiment);
  if (!d) deferred.set(experiment, (d = deferredView(experiment, entry)));
  return d;
}

/** The view for an experiment, or null. Asking for it starts loading its
 * module (a page asks as it opens, long before its first run has a result). */
export function viewFor(experiment: string): ComponentType<ViewProps> | null {
  const d = deferredFor(experiment);
  if (!d) return null;
  void d.preload();
  return d.view;
}

/** Load the experiment's view now (a page about to open); resolves when it is here. */
export function preloadView(experiment: string): Promise<unknown> {
  return deferredFor(experiment)?.preload() ?? Promise.resolve();
}

/** What the experiment's view wants collected from each run (undefined: nothing). */
export function collectFor(experiment: string): CollectSpec | undefined {
  return VIEWS[experiment]?.collect;
}

/** The sweeps the experiment's view draws (none: []). */
export function sweepsFor(experiment: string): SweepSpec<unknown, unknown>[] {
  return (VIEWS[experiment]?.sweeps ?? []) as SweepSpec<unknown, unknown>[];
}

/** The experiment's replay, if it has one. */
export function replayFor(experiment: string): ReplaySpec | undefined {
  return VIEWS[experiment]?.replay;
}

/** The parameter sets next / previous step through on the experiment's page (none: []). */
export function stepsFor(info: ExperimentInfo, values: Record<string, string>): Record<string, string>[] {
  const steps = VIEWS[info.name]?.steps;
  return steps ? steps(info, values) : publishedSetups(info);
}
