/*
 * model.ts - pure transforms for the bonnie view (seed 001): read the
 * engine's `details` of a run into typed data and lay out its pictures:
 * the latency histogram of a phase (both kernels on one log axis, each
 * one's slowest operation marked) and the timeline of a phase's slowest
 * operation (the process's syscalls, the subvolume leaves it held
 * read-locked with the allocation inside each hold, the waits of the tasks
 * inserting delayed items for a leaf meanwhile, its log transactions, the
 * log commits and the transaction kthread's commits). No drawing.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { axisTitle, labelWidth, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { fmtNum } from '../../model/format';

export const PHASES = ['seq_create', 'seq_stat', 'seq_delete', 'rand_create', 'rand_stat', 'rand_delete'] as const;
export type Phase = (typeof PHASES)[number];
export const PHASE_LABEL: Record<Phase, string> = {
  seq_create: 'sequential create',
  seq_stat: 'sequential stat + read',
  seq_delete: 'sequential delete',
  rand_create: 'random create',
  rand_stat: 'random stat + read',
  rand_delete: 'random delete',
};
/** The phases the patch can touch (they fsync). */
export const FSYNC_PHASES: Phase[] = ['seq_create', 'seq_delete', 'rand_create', 'rand_delete'];

export interface LeafHold {
  leaf: number;
  ino: number;
  t0: number; // ms from the operation's start
  t1: number;
  allocMs: number;
  scratch: boolean;
  dir: boolean;
}

/** A wait for a subvolume leaf by a task inserting delayed items (the
 * delayed-items worker, or a commit running them) while the op ran. */
export interface LeafWaiter {
  who: 'worker' | 'commit' | 'other';
  leaf: number;
  ino: number;
  t0: number; // ms from the operation's start
  t1: number;
  /** an fsync held the leaf read-locked: the wait ends at its release */
  fsyncLeaf: boolean;
}

export interface SlowOp {
  file: number;
  dir: number;
  name: string;
  atS: number;
  latMs: number;
  /** when each part ended (ms from the start; 0: the op has no such part) */
  openMs: number;
  writeMs: number;
  fsyncMs: number;
  dfsyncMs: number;
  pageStallMs: number;
  leaves: LeafHold[];
  /** patch 001's scratch allocations, before any lock (ms from the start) */
  scratch: [number, number][];
  logTrans: [number, number][];
  logCommits: [number, number][];
  commits: [number, number][];
  waiters: LeafWaiter[];
  /** its wait in btrfs_balance_delayed_items (>= 512 items queued) */
  balanceWaitMs: number;
}

export interface Hist {
  n: number;
  p50: number; // ns
  p99: number;
  max: number;
  buckets: [number, number][]; // [lower edge ns, count]
}

export interface PhaseDetails {
  ops: number;
  startS: number;
  endS: number;
  latency: Hist;
  slowest: SlowOp;
}

export interface BonnieDetails {
  files: number;
  dirs: number;
  fileBytes: number;
  ramBytes: number;
  cacheLimitBytes: number;
  prealloc: boolean;
  phases: Record<Phase, PhaseDetails>;
  log: { leavesCopied: number; clones: number; scratchUsed: number; fsyncs: number; logCommits: number; blocksWritten: number };
  mem: { allocs: number; slowPages: number; dataPages: number; dataSlow: number };
  /** delayed items: the worker's waits on leaves fsyncs held read-locked */
  delayed: { workerWaits: number; workerWaitMaxMs: number; fsyncWaits: number; nodesRun: number; inserted: number; balanceWaits: number };
}

const num = (x: unknown, d = 0): number => (typeof x === 'number' && Number.isFinite(x) ? x : d);
const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const str = (x: unknown): string => (typeof x === 'string' ? x : '');
const pairs = (x: unknown): [number, number][] =>
  arr(x)
    .map((p) => arr(p))
    .filter((p) => p.length === 2)
    .map((p) => [num(p[0]), num(p[1])] as [number, number]);

function readHist(x: unknown): Hist {
  const h = obj(x);
  return { n: num(h.n), p50: num(h.p50_ns), p99: num(h.p99_ns), max: num(h.max_ns), buckets: pairs(h.buckets) };
}

function readOp(x: unknown): SlowOp {
  const o = obj(x);
  return {
    file: num(o.file),
    dir: num(o.dir),
    name: str(o.name),
    atS: num(o.at_s),
    latMs: num(o.lat_ms),
    openMs: num(o.open_ms),
    writeMs: num(o.write_ms),
    fsyncMs: num(o.fsync_ms),
    dfsyncMs: num(o.dfsync_ms),
    pageStallMs: num(o.page_stall_ms),
    leaves: arr(o.leaves).map((l) => {
      const e = obj(l);
      return { leaf: num(e.leaf), ino: num(e.ino), t0: num(e.t0_ms), t1: num(e.t1_ms), allocMs: num(e.alloc_ms), scratch: e.scratch === true, dir: e.dir === true };
    }),
    scratch: pairs(o.scratch),
    logTrans: pairs(o.log_trans),
    logCommits: pairs(o.log_commits),
    commits: pairs(o.commits),
    waiters: arr(o.waiters).map((w) => {
      const e = obj(w);
      const who = e.who === 'worker' || e.who === 'commit' ? e.who : 'other';
      return { who, leaf: num(e.leaf), ino: num(e.ino), t0: num(e.t0_ms), t1: num(e.t1_ms), fsyncLeaf: e.fsync_leaf === true };
    }),
    balanceWaitMs: num(o.balance_wait_ms),
  };
}

/** Read a run's details; missing or malformed parts become empty. */
export function readBonnieDetails(details: Record<string, unknown> | undefined): BonnieDetails {
  const d = obj(details);
  const ph = obj(d.phases);
  const phases = {} as Record<Phase, PhaseDetails>;
  for (const p of PHASES) {
    const o = obj(ph[p]);
    phases[p] = { ops: num(o.ops), startS: num(o.start_s), endS: num(o.end_s), latency: readHist(o.latency), slowest: readOp(o.slowest) };
  }
  const log = obj(d.log);
  const mem = obj(d.mem);
  const dl = obj(d.delayed);
  const ww = obj(dl.worker_wait);
  return {
    files: num(d.files),
    dirs: num(d.dirs),
    fileBytes: num(d.file_bytes),
    ramBytes: num(d.ram_bytes),
    cacheLimitBytes: num(d.cache_limit_bytes),
    prealloc: d.prealloc_scratch === true,
    phases,
    log: {
      leavesCopied: num(log.leaves_copied),
      clones: num(log.clones),
      scratchUsed: num(log.scratch_used),
      fsyncs: num(log.fsyncs),
      logCommits: num(log.log_commits),
      blocksWritten: num(log.blocks_written),
    },
    mem: { allocs: num(mem.allocs), slowPages: num(mem.slow_pages), dataPages: num(mem.data_pages), dataSlow: num(mem.data_slow) },
    delayed: {
      workerWaits: num(ww.n),
      workerWaitMaxMs: num(ww.max_ns) / 1e6,
      fsyncWaits: num(dl.fsync_waits),
      nodesRun: num(dl.nodes_run),
      inserted: num(dl.inserted),
      balanceWaits: num(dl.balance_waits),
    },
  };
}

/** Allocations made inside a leaf lock, and their total (ms), in an op. */
export function lockedAlloc(op: SlowOp): { count: number; ms: number } {
  const inLock = op.leaves.filter((l) => !l.scratch);
  return { count: inLock.length, ms: inLock.reduce((s, l) => s + l.allocMs, 0) };
}

/* ---- the latency histogram of a phase -------------------------------- */

export interface HistSeries {
  key: string;
  /** the step outline of the histogram */
  d: string;
  /** the slowest operation: its x and the top of the chart */
  max: { x: number; ms: number };
}

export interface HistLayout extends ChartFrame {
  series: HistSeries[];
  /** published maxima: a mark at the top */
  marks: { key: string; x: number; ms: number }[];
  xTitle: string;
  yTitle: string;
  y0: number;
}

/** The domain (ms) that holds every histogram given (and published maxima). */
export function histDomainMs(hists: Hist[], extra: number[] = []): [number, number] {
  let lo = Infinity;
  let hi = 0;
  for (const h of hists) {
    for (const [b, c] of h.buckets) if (c > 0) lo = Math.min(lo, b / 1e6);
    hi = Math.max(hi, h.max / 1e6);
  }
  for (const v of extra) if (v > 0) hi = Math.max(hi, v);
  if (!Number.isFinite(lo) || lo <= 0) lo = 0.01;
  if (hi <= lo) hi = lo * 10;
  return [10 ** Math.floor(Math.log10(lo)), 10 ** Math.ceil(Math.log10(hi * 1.05))];
}

/**
 * Operations per latency bucket, both kernels on one log axis (x: ms) and
 * one log count axis; each kernel's slowest operation (bonnie's Latency)
 * a marked line, the published Latency of each kernel a mark at the top.
 */
export function layoutHist(
  runs: { key: string; h: Hist }[],
  published: { key: string; ms: number }[],
  domainMs: [number, number],
  width: number,
  height: number,
  fontPx = 16,
): HistLayout {
  const cMax = Math.max(1, ...runs.flatMap((r) => r.h.buckets.map(([, c]) => c)));
  const yTop = 10 ** Math.ceil(Math.log10(cMax * 1.2));
  const y0 = scaleLog().domain([0.7, yTop]);
  const m = marginsFor(fontPx, ['1', fmtNum(yTop)], { top: Math.round(fontPx * 1.6) });
  const x = scaleLog().domain(domainMs).range([m.left, width - m.right]).clamp(true);
  const y = y0.range([height - m.bottom, m.top]);
  const base = y(0.7);
  const series = runs.map(({ key, h }) => {
    const bs = [...h.buckets].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
    let path = '';
    for (let i = 0; i < bs.length; i++) {
      const [lo, c] = bs[i]!;
      // a bucket spans [lo, next lower edge): 8 per power of two
      const hiEdge = lo * 2 ** (1 / 8);
      const x0 = x(lo / 1e6);
      const x1 = Math.max(x0 + 1, x(hiEdge / 1e6));
      const yy = y(c);
      path += `M${x0.toFixed(1)},${base.toFixed(1)}V${yy.toFixed(1)}H${x1.toFixed(1)}V${base.toFixed(1)}`;
    }
    return { key, d: path, max: { x: x(h.max / 1e6), ms: h.max / 1e6 } };
  });
  // decades, each label clear of the last by a character at least
  const xTicks: { pos: number; label: string }[] = [];
  const [d0, d1] = domainMs;
  for (let e = Math.round(Math.log10(d0)); 10 ** e <= d1 * 1.0001; e++) {
    const label = fmtNum(10 ** e);
    const pos = x(10 ** e);
    const last = xTicks[xTicks.length - 1];
    if (!last || pos - last.pos >= (0.65 * (labelWidth(last.label, fontPx) + labelWidth(label, fontPx))) + 1.5 * fontPx) xTicks.push({ pos, label });
  }
  // decades only, spaced two lines of text apart at least
  const yTicks: { pos: number; label: string }[] = [];
  for (let e = 0; 10 ** e <= yTop; e++) {
    const pos = y(10 ** e);
    const last = yTicks[yTicks.length - 1];
    if (!last || last.pos - pos >= fontPx * 2) yTicks.push({ pos, label: fmtNum(10 ** e) });
  }
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks,
    yTicks,
    series,
    marks: published.filter((p) => p.ms > 0).map((p) => ({ key: p.key, x: x(p.ms), ms: p.ms })),
    xTitle: axisTitle('one operation', 'ms, log'),
    yTitle: axisTitle('operations', 'log'),
    y0: base,
  };
}

/* ---- the slowest operation's timeline -------------------------------- */

export interface Lane {
  key: string;
  label: string;
  y: number;
  h: number;
}

export interface Bar {
  lane: string;
  x: number;
  w: number;
  kind: string; // the part's name (open, write, fsync, ...)
  title: string;
}

export interface OpTimelineLayout extends ChartFrame {
  lanes: Lane[];
  bars: Bar[];
  /** inside the leaf-lock bars: the allocation (kernel colour) */
  allocs: { x: number; w: number; y: number; h: number; ms: number; leaf: number }[];
  /** in the waiters' lane: a wait that ended at an fsync's release of the leaf */
  waits: { x: number; w: number; y: number; h: number; ms: number; leaf: number; who: string; fsyncLeaf: boolean }[];
  /** in the process's lane: the scratch eb's allocation, no lock held (kernel colour, outlined) */
  scratch: { x: number; w: number; y: number; h: number; ms: number }[];
  xTitle: string;
}

/** The end of an operation's picture (ms): its end or its last commit's. */
export const opEndMs = (op: SlowOp): number =>
  Math.max(op.latMs, ...op.logCommits.map((c) => c[1]), ...op.commits.map((c) => Math.min(c[1], op.latMs * 1.5)));

const LANES = [
  { key: 'proc', label: 'bonnie++' },
  { key: 'leaf', label: 'leaf read lock' },
  { key: 'waiter', label: 'delayed items' },
  { key: 'logtrans', label: 'log writers' },
  { key: 'logcommit', label: 'log commit' },
  { key: 'commit', label: 'kthread commit' },
];

/**
 * The operation's parts in the process's lane (open/create or unlink, the
 * writes or reads, fsync(file), fsync(dir)), each subvolume leaf it held
 * read-locked (the clone's allocation inside the hold drawn in the
 * kernel's colour), its log transactions (log_writers = 1), the log
 * commits and the transaction commits, on a shared ms axis.
 */
export function layoutOpTimeline(op: SlowOp, isCreate: boolean, isStat: boolean, width: number, fontPx: number, xMaxMs: number): OpTimelineLayout {
  const rowH = Math.round(fontPx * 1.6);
  const gap = Math.round(fontPx * 0.5);
  const labels = LANES.map((l) => l.label);
  const m = marginsFor(fontPx, labels, { yTitle: false });
  const lanes: Lane[] = LANES.map((l, i) => ({ ...l, y: m.top + i * (rowH + gap), h: rowH }));
  const height = m.top + LANES.length * (rowH + gap) + m.bottom;
  const x = scaleLinear().domain([0, Math.max(1e-3, xMaxMs)]).range([m.left, width - m.right]).clamp(true);
  const bars: Bar[] = [];
  const add = (lane: string, t0: number, t1: number, kind: string, title: string) => {
    if (!(t1 >= t0)) return;
    const x0 = x(t0);
    bars.push({ lane, x: x0, w: Math.max(1, x(t1) - x0), kind, title });
  };
  const parts: [number, string, string][] = isStat
    ? [
        [op.openMs, 'open', 'stat + open'],
        [op.writeMs, 'read', '47 read()s'],
      ]
    : isCreate
      ? [
          [op.openMs, 'open', 'open(O_CREAT)'],
          [op.writeMs, 'write', '47 write()s'],
          [op.fsyncMs, 'fsync', 'fsync(file)'],
          [op.dfsyncMs, 'dfsync', 'fsync(dir)'],
        ]
      : [
          [op.openMs, 'open', 'unlink'],
          [op.dfsyncMs, 'dfsync', 'fsync(dir)'],
        ];
  let t = 0;
  for (const [end, kind, title] of parts) {
    if (end <= 0) continue;
    add('proc', t, end, kind, `${title}: ${fmtNum(end - t)} ms`);
    t = end;
  }
  if (op.latMs > t) add('proc', t, op.latMs, 'close', 'close');
  const leafLane = lanes[1]!;
  const allocs: OpTimelineLayout['allocs'] = [];
  for (const l of op.leaves) {
    add('leaf', l.t0, l.t1, l.dir ? 'leaf-dir' : 'leaf', `leaf ${l.leaf} (${l.dir ? 'dir index items' : 'inode items'}): read-locked ${fmtNum(l.t1 - l.t0)} ms`);
    if (l.allocMs > 0 && !l.scratch) {
      // the allocation comes after the search, just before the copy and
      // the release: the end of the hold
      const a0 = x(Math.max(l.t0, l.t1 - l.allocMs));
      allocs.push({ x: a0, w: Math.max(1.5, x(l.t1) - a0), y: leafLane.y, h: leafLane.h, ms: l.allocMs, leaf: l.leaf });
    }
  }
  const procLane = lanes[0]!;
  const scratch = op.scratch.map(([a, b]) => {
    const x0 = x(a);
    return { x: x0, w: Math.max(1.5, x(b) - x0), y: procLane.y, h: procLane.h, ms: b - a };
  });
  const waitLane = lanes[2]!;
  const WHO: Record<string, string> = { worker: 'the delayed-items worker', commit: 'a commit running delayed items', other: 'a task inserting delayed items' };
  const waits = op.waiters
    .filter((w) => w.t1 >= w.t0)
    .map((w) => {
      const x0 = x(Math.max(0, w.t0));
      return { x: x0, w: Math.max(1.5, x(w.t1) - x0), y: waitLane.y, h: waitLane.h, ms: w.t1 - w.t0, leaf: w.leaf, who: WHO[w.who] ?? w.who, fsyncLeaf: w.fsyncLeaf };
    });
  for (const [a, b] of op.logTrans) add('logtrans', a, b, 'logtrans', `inside the log transaction: ${fmtNum(b - a)} ms`);
  for (const [a, b] of op.logCommits) add('logcommit', a, b, 'logcommit', `btrfs_sync_log writes the log: ${fmtNum(b - a)} ms`);
  for (const [a, b] of op.commits) add('commit', Math.max(0, a), b, 'commit', `a transaction commit: ${fmtNum(b - a)} ms`);
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: [],
    lanes,
    bars,
    allocs,
    waits,
    scratch,
    xTitle: axisTitle('time into it', 'ms'),
  };
}
