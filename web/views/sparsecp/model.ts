/*
 * model.ts - pure transforms for the sparse-cp view: read the engine's
 * `details` for a run into typed data, lay out the file strip, find the
 * lseek call nearest a file offset, and lay out the two charts (time per
 * lseek against the offset, io_tree records over cp's run). No drawing.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { axisTitle, logTicks, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { fmtBytes, fmtNum, pickByteUnit, pickTimeUnit } from '../../model/format';

export interface LseekCall {
  tMs: number;
  off: number;
  whence: 'data' | 'hole';
  lockRecords: number;
  searchRecords: number;
  cacheHit: number;
  cacheMiss: number;
  us: number;
}

export interface SparseDetails {
  state: string;
  fileBytes: number;
  extentBytes: number;
  holeBytes: number;
  /** Every `stride`-th lseek call of the run (the engine decimates). */
  stride: number;
  calls: LseekCall[];
  /** [ms since cp started, io_tree records] */
  iotree: [number, number][];
  summary: Record<string, number>;
  strip: { buckets: number; extents: number[]; delalloc: number[] };
}

const num = (x: unknown, d = 0): number => (typeof x === 'number' && Number.isFinite(x) ? x : d);
const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);

/** Read a run's details; missing or malformed parts become empty. */
export function readSparseDetails(details: Record<string, unknown> | undefined): SparseDetails {
  const d = obj(details);
  const ls = obj(d.lseeks);
  const strip = obj(d.strip);
  const summary: Record<string, number> = {};
  for (const [k, v] of Object.entries(obj(d.summary))) if (typeof v === 'number') summary[k] = v;
  return {
    state: typeof d.state === 'string' ? d.state : '',
    fileBytes: num(d.file_bytes),
    extentBytes: num(d.extent_bytes),
    holeBytes: num(d.hole_bytes),
    stride: Math.max(1, num(ls.stride, 1)),
    calls: arr(ls.calls).map((c) => {
      const o = obj(c);
      return {
        tMs: num(o.t_ms),
        off: num(o.off),
        whence: o.whence === 'hole' ? 'hole' : 'data',
        lockRecords: num(o.lock_records),
        searchRecords: num(o.search_records),
        cacheHit: num(o.cache_hit),
        cacheMiss: num(o.cache_miss),
        us: num(o.us),
      };
    }),
    iotree: arr(d.iotree_records)
      .map((p) => arr(p))
      .filter((p) => p.length === 2)
      .map((p) => [num(p[0]), num(p[1])] as [number, number]),
    summary,
    strip: {
      buckets: num(strip.buckets),
      extents: arr(strip.extents).map((x) => num(x)),
      delalloc: arr(strip.delalloc).map((x) => num(x)),
    },
  };
}

/** Index of the call whose offset is nearest `off` (calls are in file order). -1 if none. */
export function callNear(calls: LseekCall[], off: number): number {
  if (calls.length === 0) return -1;
  let lo = 0;
  let hi = calls.length - 1;
  const at = (i: number): number => calls[i]?.off ?? 0;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (at(mid) < off) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && Math.abs(at(lo - 1) - off) <= Math.abs(at(lo) - off)) return lo - 1;
  return lo;
}

export interface StripCell {
  x: number;
  w: number;
  /** share of the bucket that is data (0..1) */
  data: number;
  /** share of the bucket's extents still delalloc when cp started (0..1) */
  delalloc: number;
}

/** The file as a strip of `width` px: one cell per bucket of the engine's strip. */
export function layoutStrip(d: SparseDetails, width: number): StripCell[] {
  const n = d.strip.buckets;
  if (n <= 0 || d.fileBytes <= 0) return [];
  const stride = d.extentBytes + d.holeBytes || 1;
  const perBucket = d.fileBytes / n / stride; // extents a full bucket holds
  const dataShare = d.extentBytes / stride;
  const w = width / n;
  return d.strip.extents.map((e, i) => ({
    x: i * w,
    w,
    data: perBucket > 0 ? Math.min(1, (e / perBucket) * dataShare) : 0,
    delalloc: e > 0 ? (d.strip.delalloc[i] ?? 0) / e : 0,
  }));
}

export interface ChartLayout extends ChartFrame {
  /** SVG path of the series (line charts) */
  path: string;
  /** positioned points (scatter charts) */
  dots: { x: number; y: number; i: number }[];
  xTitle: string;
  yTitle: string;
  /** x position of a file offset (the call chart) */
  xOf?: (off: number) => number;
}

/**
 * Time per lseek (µs, log scale) against the file offset; yMax (the
 * largest time of both runs) makes the before and after panels share
 * their y axis, and the file is the same, so they share x too.
 */
export function layoutCallChart(calls: LseekCall[], fileBytes: number, width: number, height: number, yMax?: number, fontPx = 16): ChartLayout {
  const top = Math.max(10, yMax ?? Math.max(10, ...calls.map((c) => c.us)));
  const y0 = scaleLog().domain([0.5, 10 ** Math.ceil(Math.log10(top))]).clamp(true);
  const bu = pickByteUnit(Math.max(1, fileBytes));
  const m = marginsFor(fontPx, ['10,000']);
  const x = scaleLinear().domain([0, Math.max(1, fileBytes) / bu.per]).range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: logTicks(y, 'y', height - m.top - m.bottom, fontPx).filter((t) => /^1(0|,0)*$/.test(t.label)),
    path: '',
    dots: calls.map((c, i) => ({ x: x(c.off / bu.per), y: y(Math.max(0.5, c.us)), i })),
    xTitle: axisTitle('offset in the file', bu.unit),
    yTitle: axisTitle('per lseek, log', 'µs'),
    xOf: (off: number) => x(off / bu.per),
  };
}

/**
 * io_tree records through cp's run. x is the share of cp's own run
 * (0-100%), the same axis for both kernels even when one copies 100 times
 * faster (its time is in the panel's title); yMax, the most records of
 * both runs, shares the y axis.
 */
export function layoutRecordsChart(points: [number, number][], width: number, height: number, yMax?: number, fontPx = 16): ChartLayout {
  const tMax = Math.max(1e-3, ...points.map((p) => p[0]));
  const vMax = Math.max(1, yMax ?? Math.max(1, ...points.map((p) => p[1])));
  const y0 = scaleLinear().domain([0, vMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, 100]).range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const path = points.map((p, i) => `${i ? 'L' : 'M'}${x((p[0] / tMax) * 100).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    path,
    dots: [],
    xTitle: axisTitle("share of cp's run", '%'),
    yTitle: axisTitle('io_tree records'),
  };
}

/* ---- the creation-speed sweep (state=delalloc) ---------------------- */

/** Multiples of the run's spawn_us the sweep tries: creation ~5% faster
 * to ~10% slower, the spread of one shell loop from boot to boot. */
export const SPAWN_FACTORS = [0.95, 0.975, 1, 1.025, 1.05, 1.075, 1.1];

/** The spawn_us texts the sweep runs, around the run's own value (else
 * around `fallback`, the parameter's default as the engine lists it). */
export function sweepSpawns(spawnUs: number, fallback: number): string[] {
  const base = Number.isFinite(spawnUs) && spawnUs > 0 ? spawnUs : fallback;
  return SPAWN_FACTORS.map((f) => String(Math.round(base * f)));
}

export interface CreationRow {
  spawnUs: number;
  createS: number;
  delalloc: number;
  beforeMs: number;
  afterMs: number;
}

export function creationRow(spawnUs: string, before: Record<string, number>, after: Record<string, number>): CreationRow {
  return {
    spawnUs: Number(spawnUs),
    createS: num(before.create_s, NaN),
    delalloc: num(before.delalloc_extents_at_cp, NaN),
    beforeMs: num(before.cp_ms, NaN),
    afterMs: num(after.cp_ms, NaN),
  };
}

export interface CreationLayout extends ChartFrame {
  series: { variant: 'before' | 'after'; d: string; points: { x: number; y: number; v: number; row: CreationRow }[] }[];
  /** published values as horizontal lines */
  refs: { variant: 'before' | 'after'; value: number; y: number }[];
  xTitle: string;
  yTitle: string;
}

/**
 * cp's time (log) against how long creation took (linear), one series per
 * kernel, with the published rows as horizontal lines: where the curves
 * cross a line is the creation that gives that published time.
 */
export function layoutCreationSweep(rows: CreationRow[], refs: { variant: 'before' | 'after'; value: number }[], width: number, height: number, fontPx = 16): CreationLayout {
  const ok = rows.filter((r) => Number.isFinite(r.createS)).sort((a, b) => a.createS - b.createS);
  const xs = ok.map((r) => r.createS);
  const lo = Math.min(...xs, Infinity);
  const hi = Math.max(...xs, -Infinity);
  const pad = Number.isFinite(lo) ? Math.max(0.05, (hi - lo) * 0.05) : 1;
  const vals = [...ok.flatMap((r) => [r.beforeMs, r.afterMs]), ...refs.map((r) => r.value)].filter((v) => Number.isFinite(v) && v > 0);
  const tu = pickTimeUnit(vals.length ? Math.max(...vals) : 1);
  const y0 = scaleLog().domain(vals.length ? [Math.max(0.1, Math.min(...vals) * 0.7) / tu.per, (Math.max(...vals) * 1.4) / tu.per] : [1, 10]);
  const m = marginsFor(fontPx, ['10,000']);
  const x = scaleLinear()
    .domain(Number.isFinite(lo) ? [lo - pad, hi + pad] : [0, 1])
    .range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const series = (['before', 'after'] as const).map((variant) => {
    const points = ok
      .map((row) => ({ row, v: variant === 'before' ? row.beforeMs : row.afterMs }))
      .filter((p) => Number.isFinite(p.v) && p.v > 0)
      .map((p) => ({ x: x(p.row.createS), y: y(p.v / tu.per), v: p.v, row: p.row }));
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('');
    return { variant, d, points };
  });
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: logTicks(y, 'y', height - m.top - m.bottom, fontPx),
    series,
    refs: refs.filter((r) => Number.isFinite(r.value) && r.value > 0).map((r) => ({ ...r, y: y(r.value / tu.per) })),
    xTitle: axisTitle('how long creation took', 's'),
    yTitle: axisTitle("cp's time, log", tu.unit),
  };
}

export { fmtBytes };
