/*
 * model.ts - pure transforms for the qgroup-drop view: read the engine's
 * `details` (accounting calls, commits with phases, the dirty-extent
 * count over time, the record breakdown, the dropped tree's leaves) into
 * typed objects, and lay out the four pictures (commit bars split into
 * phases, the dirty-extent line, the tree's leaves coloured by the commit
 * that accounted them, the threshold sweep). D3 computes scales and
 * paths; the components only draw.
 */
import { scaleBand, scaleLinear, scaleLog } from 'd3-scale';
import { line } from 'd3-shape';
import { axisTitle, logTicks, marginsFor, scaleTicks, thinTicks, type ChartFrame } from '../../model/axis';
import { NEUTRAL, greys } from '../common/palette';
import { fmtMs, fmtNum, pickTimeUnit } from '../../model/format';

export const PHASES = ['wait_writers', 'delayed_refs', 'qgroup_account', 'write_blocks'] as const;
export type Phase = (typeof PHASES)[number];
export const PHASE_LABEL: Record<Phase, string> = {
  wait_writers: 'wait for writers',
  delayed_refs: 'run delayed refs',
  qgroup_account: 'qgroup accounting',
  write_blocks: 'write blocks + super',
};
/** Neutral greys, one per phase (orange and blue are the kernels'); accounting,
 * the phase that matters, is the darkest. */
export const PHASE_COLOR: Record<Phase, string> = {
  wait_writers: NEUTRAL.faint,
  delayed_refs: NEUTRAL.light,
  qgroup_account: NEUTRAL.strong,
  write_blocks: NEUTRAL.mid,
};

export interface Call {
  transid: number;
  records: number;
  startS: number;
  ms: number;
  usPerRecord: number;
}
export interface Commit {
  transid: number;
  reason: string;
  startS: number;
  endS: number;
  records: number;
  blocks: number;
  phasesMs: Record<Phase, number>;
}
export interface TreeLeaf {
  nritems: number;
  fill: number;
  data: number;
  shared: boolean;
  transid: number;
  freedS: number;
}
export interface TreePicture {
  root: number;
  height: number;
  nodes: number;
  leaves: TreeLeaf[];
  /** [root id, index of its first leaf, leaf count] per dropped tree */
  roots: [number, number, number][];
}
export interface QgroupPicture {
  calls: Call[];
  commits: Commit[];
  dirty: [number, number][];
  breakdown: Record<string, number>;
  structure: Record<string, number>;
  drop: Record<string, number>;
  tree: TreePicture | null;
}

const num = (v: unknown, d = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : d);
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const nums = (v: unknown): Record<string, number> => Object.fromEntries(Object.entries(obj(v)).map(([k, x]) => [k, num(x)]));

/** Parse a run's details; missing or malformed parts become empty, never throw. */
export function readQgroupDetails(details: Record<string, unknown> | undefined): QgroupPicture {
  const d = obj(details);
  const calls = arr(d.calls).map((c) => {
    const o = obj(c);
    return { transid: num(o.transid), records: num(o.records), startS: num(o.start_s), ms: num(o.ms), usPerRecord: num(o.us_per_record) };
  });
  const commits = arr(d.commits).map((c) => {
    const o = obj(c);
    const ph = obj(o.phases_ms);
    return {
      transid: num(o.transid),
      reason: typeof o.reason === 'string' ? o.reason : '',
      startS: num(o.start_s),
      endS: num(o.end_s),
      records: num(o.records),
      blocks: num(o.blocks),
      phasesMs: Object.fromEntries(PHASES.map((p) => [p, num(ph[p])])) as Record<Phase, number>,
    };
  });
  const dirty = arr(d.dirty_extents)
    .map((p) => arr(p))
    .filter((p) => p.length === 2)
    .map((p) => [num(p[0]), num(p[1])] as [number, number]);
  const t = d.tree && typeof d.tree === 'object' ? obj(d.tree) : null;
  const tree: TreePicture | null = t
    ? {
        root: num(t.root),
        height: num(t.height),
        nodes: num(t.nodes),
        leaves: arr(t.leaf).map((l) => {
          const a = arr(l);
          return { nritems: num(a[0]), fill: num(a[1]), data: num(a[2]), shared: num(a[3]) === 1, transid: num(a[4]), freedS: num(a[5]) };
        }),
        roots: arr(t.roots).map((r) => {
          const a = arr(r);
          return [num(a[0]), num(a[1]), num(a[2])] as [number, number, number];
        }),
      }
    : null;
  return { calls, commits, dirty, breakdown: nums(d.breakdown), structure: nums(d.structure), drop: nums(d.drop), tree };
}

export { fmtMs };

/* ---- commit bars ---------------------------------------------------- */

export interface CommitBar {
  index: number;
  x: number;
  width: number;
  label: string;
  records: number;
  totalMs: number;
  /** the record count fits above the bar */
  showLabel: boolean;
  segments: { phase: Phase; y: number; height: number; ms: number }[];
}
export interface CommitLayout extends ChartFrame {
  bars: CommitBar[];
  /** the y axis's title, with the unit it was drawn in */
  yTitle: string;
  xTitle: string;
}

const commitMs = (c: Commit): number => PHASES.reduce((s, p) => s + c.phasesMs[p], 0);

/** The longest commit of several runs: the shared top of a before/after pair of timelines. */
export const longestCommitMs = (...runs: Commit[][]): number => Math.max(1, ...runs.flat().map(commitMs));

/**
 * One bar per commit (in order), height = commit duration, split into
 * phases bottom-up, on a y axis from 0 to yMaxMs (the pair's shared top:
 * longestCommitMs of both runs), in one time unit.
 */
export function layoutCommits(commits: Commit[], width: number, height: number, fontPx = 16, yMaxMs = longestCommitMs(commits)): CommitLayout {
  const tu = pickTimeUnit(yMaxMs);
  const y0 = scaleLinear().domain([0, yMaxMs / tu.per]).nice();
  const yLabels = y0.ticks(5).map(fmtNum);
  const m = marginsFor(fontPx, yLabels, { top: Math.round(fontPx * 1.6) });
  const y = y0.range([height - m.bottom, m.top]);
  const x = scaleBand<number>()
    .domain(commits.map((_, i) => i))
    .range([m.left, width - m.right])
    .padding(0.25);
  const bars = commits.map((c, i) => {
    let acc = 0;
    const segments = PHASES.map((p) => {
      const b = y(acc / tu.per);
      acc += c.phasesMs[p];
      const t = y(acc / tu.per);
      return { phase: p, y: t, height: Math.max(0, b - t), ms: c.phasesMs[p] };
    });
    const label = fmtNum(c.records);
    return {
      index: i,
      x: x(i) ?? 0,
      width: x.bandwidth(),
      label: fmtNum(c.endS),
      records: c.records,
      totalMs: commitMs(c),
      showLabel: false,
      segments,
      recLabel: label,
    };
  });
  // a record count above every bar when they all fit, else none (each bar keeps its tooltip)
  const fit = bars.every((b) => b.width + x.step() * x.paddingInner() >= (b.recLabel.length * 0.64 + 0.6) * fontPx * 0.9);
  for (const b of bars) b.showLabel = fit;
  const xTicks = thinTicks(
    bars.map((b) => ({ pos: b.x + b.width / 2, label: b.label })),
    'x',
    fontPx,
  );
  return {
    width,
    height,
    margin: m,
    fontPx,
    bars: bars.map(({ recLabel: _r, ...b }) => b),
    xTicks,
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    yTitle: axisTitle('commit duration', tu.unit),
    xTitle: axisTitle('each commit, by when it ended', 's'),
  };
}

/* ---- dirty extents over time -------------------------------------- */

export interface DirtyLayout extends ChartFrame {
  paths: { id: string; d: string }[];
  /** The periodic commit far to the right, shown as a note, not to scale. */
  lateCommitS: number | null;
  threshold: { y: number; label: string } | null;
  xTitle: string;
  yTitle: string;
}

/**
 * The count of queued records against time, one path per series on a
 * common frame, over the drop (0 .. dropEndS, when the cleaner finished).
 * A commit long after that (the 30 s kthread) is reported as lateCommitS instead of
 * squeezing the drop into a sliver; each path is held flat to the edge.
 */
export function layoutDirty(series: { id: string; points: [number, number][] }[], commits: Commit[], threshold: number | null, dropEndS: number, width: number, height: number, fontPx = 16): DirtyLayout {
  const all = series.flatMap((s) => s.points);
  const lastT = all.length ? Math.max(...all.map((p) => p[0])) : 1;
  const late = commits.filter((c) => c.startS > dropEndS * 3 + 1).sort((a, b) => a.startS - b.startS)[0];
  const tMax = Math.max(1e-3, late ? dropEndS : lastT) * 1.05;
  const thr = threshold !== null && Number.isFinite(threshold) ? threshold : 0;
  const vMax = Math.max(1, ...all.filter(([t]) => t <= tMax).map((p) => p[1]), thr);
  const tu = pickTimeUnit(tMax * 1000);
  const k = 1000 / tu.per; // seconds -> the axis's unit
  const y0 = scaleLinear().domain([0, vMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(5).map(fmtNum));
  const x = scaleLinear().domain([0, tMax * k]).range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const mk = line<[number, number]>()
    .x((p) => x(p[0] * k))
    .y((p) => y(p[1]));
  const paths = series.map((s) => {
    const shown = s.points.filter(([t]) => t <= tMax);
    const lastV = shown.length ? shown[shown.length - 1]![1] : 0;
    if (late && shown.length) shown.push([tMax, lastV]);
    return { id: s.id, d: mk(shown) ?? '' };
  });
  return {
    width,
    height,
    margin: m,
    fontPx,
    paths,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    lateCommitS: late ? late.startS : null,
    threshold: thr > 0 && thr <= (y.domain()[1] ?? 0) ? { y: y(thr), label: `threshold ${fmtNum(thr)}` } : null,
    xTitle: axisTitle('time since the delete', tu.unit),
    yTitle: axisTitle('queued records'),
  };
}

/* ---- the dropped tree ---------------------------------------------- */

export interface LeafCell {
  x: number;
  y: number;
  size: number;
  color: string;
  shared: boolean;
  title: string;
}

/**
 * Leaves in key order, row-major, coloured by the accounting call (commit)
 * whose records included them: sequential greys, the first call lightest,
 * so the order of the calls reads left to right and top to bottom however
 * many there are. Cells shrink to fit up to ~1000 leaves.
 */
export function layoutTree(tree: TreePicture, calls: Call[], width: number): { cells: LeafCell[]; height: number; legend: { color: string; label: string }[] } {
  const n = tree.leaves.length;
  // square-ish cells, as large as fit the width in rows of whole cells
  const size = Math.max(4, Math.min(22, Math.floor(Math.sqrt((width * 260) / Math.max(n, 1))) - 2));
  const cols = Math.max(1, Math.floor(width / (size + 2)));
  const order = [...new Set(calls.filter((c) => c.records > 0).map((c) => c.transid))];
  const ramp = greys(order.length);
  const colorOf = (tid: number): string => {
    const i = order.indexOf(tid);
    return i < 0 ? '#ffffff' : (ramp[i] ?? NEUTRAL.mid);
  };
  const cells = tree.leaves.map((l, i) => ({
    x: (i % cols) * (size + 2),
    y: Math.floor(i / cols) * (size + 2),
    size,
    color: colorOf(l.transid),
    shared: l.shared,
    title: `leaf ${i}: ${l.nritems} items, ${Math.round(l.fill * 100)}% full, ${l.data} data extents${l.shared ? ', shared with the snapshot' : ''}; accounted by call ${order.indexOf(l.transid) + 1} (transaction ${l.transid}) at ${fmtNum(l.freedS)} s`,
  }));
  const rows = Math.ceil(n / cols);
  const used = new Set(tree.leaves.map((l) => l.transid));
  const legend = order.filter((t) => used.has(t)).map((t) => ({ color: colorOf(t), label: `call ${order.indexOf(t) + 1}` }));
  return { cells, height: rows * (size + 2), legend };
}

/* ---- the threshold sweep -------------------------------------------- */

export interface SweepRow {
  threshold: number; // Infinity for "inf"
  calls: number;
  commits: number;
  avgMs: number;
  maxMs: number;
  totalMs: number;
}
/** Thresholds the sweep runs (the RFC's rows plus one above). */
export const SWEEP_THRESHOLDS = ['1024', '2048', '4096', '8192', '16384', 'inf'];

export function sweepRow(threshold: string, metrics: Record<string, number>): SweepRow {
  return {
    threshold: threshold === 'inf' ? Infinity : Number(threshold),
    calls: metrics.account_calls ?? NaN,
    commits: metrics.commits ?? NaN,
    avgMs: metrics.account_avg_ms ?? NaN,
    maxMs: metrics.account_max_ms ?? NaN,
    totalMs: metrics.account_total_ms ?? NaN,
  };
}

export interface SweepSeries {
  id: string;
  label: string;
  /** the line's dash pattern: every series is the patched kernel (blue); the dash says which figure */
  dash?: string;
  d: string;
  points: { x: number; y: number; v: number }[];
}
export interface SweepLayout extends ChartFrame {
  series: SweepSeries[];
  yTitle: string;
  xTitle: string;
}

/**
 * x: threshold on a log2 axis, "inf" one step past the largest finite
 * value; y: log scale (counts or ms span two decades). `which` picks the
 * panel: counts (calls, commits beyond the first) or times (avg, max, total).
 */
export function layoutSweep(rows: SweepRow[], which: 'counts' | 'ms', width: number, height: number, fontPx = 16): SweepLayout {
  const sorted = [...rows].sort((a, b) => a.threshold - b.threshold);
  const finite = sorted.filter((r) => Number.isFinite(r.threshold)).map((r) => r.threshold);
  const lo = Math.min(...finite, 1024);
  const hiFinite = Math.max(...finite, lo * 2);
  const infAt = hiFinite * 2;
  const xv = (t: number): number => (Number.isFinite(t) ? t : infAt);
  const defs: { id: string; label: string; dash?: string; get: (r: SweepRow) => number }[] =
    which === 'counts'
      ? [
          { id: 'calls', label: 'accounting calls', get: (r) => r.calls },
          { id: 'extra', label: 'extra commits (vs one)', dash: '7 5', get: (r) => r.commits - 1 },
        ]
      : [
          { id: 'max', label: 'longest call', get: (r) => r.maxMs },
          { id: 'avg', label: 'average call', dash: '7 5', get: (r) => r.avgMs },
          { id: 'total', label: 'all calls together', dash: '2 4', get: (r) => r.totalMs },
        ];
  const vals = sorted.flatMap((r) => defs.map((d) => d.get(r))).filter((v) => Number.isFinite(v) && v > 0);
  const y0 = scaleLog().domain([Math.max(0.5, Math.min(...vals, 1) * 0.7), Math.max(...vals, 2) * 1.3]);
  const m = marginsFor(fontPx, ['10,000']);
  const x = scaleLog().base(2).domain([lo, infAt]).range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const series = defs.map((d) => {
    const pts = sorted
      .map((r) => ({ t: xv(r.threshold), v: d.get(r) }))
      .filter((p) => Number.isFinite(p.v) && p.v > 0)
      .map((p) => ({ x: x(p.t), y: y(p.v), v: p.v }));
    const path =
      line<{ x: number; y: number }>()
        .x((p) => p.x)
        .y((p) => p.y)(pts) ?? '';
    return { id: d.id, label: d.label, dash: d.dash, d: path, points: pts };
  });
  const xTicks = thinTicks([...finite.map((t) => ({ pos: x(t), label: t >= 1024 ? `${t / 1024}K` : String(t) })), { pos: x(infAt), label: '∞' }], 'x', fontPx);
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks,
    yTicks: logTicks(y, 'y', height - m.top - m.bottom, fontPx),
    series,
    yTitle: which === 'counts' ? axisTitle('count, log scale') : axisTitle('time, log scale', 'ms'),
    xTitle: axisTitle('threshold', 'dirty extents'),
  };
}
