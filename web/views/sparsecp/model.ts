/*
 * model.ts - pure transforms for the sparse-cp view: read the engine's
 * `details` for a run into typed data, lay out the file strip, find the
 * lseek call nearest a file offset, and lay out the two charts (time per
 * lseek against the offset, io_tree records over cp's run). No drawing.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import type { ChartFrame } from '../Axes';

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
}

const MIB = 1 << 20;

const MARGIN = { top: 12, right: 16, bottom: 36, left: 72 };

function fmtTick(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

function fmtBytes(v: number): string {
  if (v >= 1 << 30) return `${+(v / (1 << 30)).toPrecision(3)} GiB`;
  if (v >= 1 << 20) return `${+(v / (1 << 20)).toPrecision(3)} MiB`;
  if (v >= 1 << 10) return `${+(v / (1 << 10)).toPrecision(3)} KiB`;
  return `${v} B`;
}

/**
 * Time per lseek (µs, log scale) against the file offset; yMax lets the
 * before and after panels share an axis so they can be compared by eye.
 */
export function layoutCallChart(calls: LseekCall[], fileBytes: number, width: number, height: number, yMax?: number): ChartLayout {
  const m = MARGIN;
  // the offset axis in MiB, so its ticks land on round sizes
  const x = scaleLinear().domain([0, Math.max(1, fileBytes) / MIB]).range([m.left, width - m.right]);
  const top = Math.max(10, yMax ?? Math.max(10, ...calls.map((c) => c.us)));
  const y = scaleLog().domain([0.5, top]).range([height - m.bottom, m.top]).clamp(true);
  return {
    width,
    height,
    margin: m,
    xTicks: x.ticks(Math.max(2, Math.floor(width / 150))).map((v) => ({ pos: x(v), label: fmtBytes(v * MIB) })),
    yTicks: y.ticks(4).filter((v) => Number.isInteger(Math.log10(v))).map((v) => ({ pos: y(v), label: `${fmtTick(v)} µs` })),
    path: '',
    dots: calls.map((c, i) => ({ x: x(c.off / MIB), y: y(Math.max(0.5, c.us)), i })),
  };
}

/** io_tree records over cp's run (ms). */
export function layoutRecordsChart(points: [number, number][], width: number, height: number, yMax?: number): ChartLayout {
  const m = MARGIN;
  const tMax = Math.max(1e-3, ...points.map((p) => p[0]));
  const vMax = Math.max(1, yMax ?? Math.max(1, ...points.map((p) => p[1])));
  const x = scaleLinear().domain([0, tMax]).range([m.left, width - m.right]);
  const y = scaleLinear().domain([0, vMax]).nice().range([height - m.bottom, m.top]);
  const path = points.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
  return {
    width,
    height,
    margin: m,
    xTicks: x.ticks(Math.max(2, Math.floor(width / 150))).map((v) => ({ pos: x(v), label: `${fmtTick(v)} ms` })),
    yTicks: y.ticks(4).map((v) => ({ pos: y(v), label: fmtTick(v) })),
    path,
    dots: [],
  };
}

export { fmtBytes };
