/*
 * model.ts - pure transforms for the untar view (seed 000): read the
 * engine's `details` of a run into typed data and lay out its pictures:
 * the metadata reservations (bytes_may_use) against the overcommit limit
 * over the whole run, the delalloc bytes, reclaim cycles per second and
 * the pages each wrote, and the flush queue in the zoom window (from the
 * first ticket on, the same moment in both kernels): the writer parked on
 * its ticket, each reclaim cycle as a mark (pages needed against pages
 * written, inodes touched), the device's requests in flight. No drawing.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { axisTitle, labelWidth, logTicks, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { fmtNum } from '../../model/format';

export interface UtFile {
  name: string;
  size: number;
  pages: number;
  /** ms from the window's start, when the flush wrote it */
  at: number;
}

export interface UtCycle {
  t0: number; // ms from the window's start
  t1: number;
  state: string;
  rounds: number;
  toReclaim: number; // bytes the tickets asked for
  wanted: number; // pages shrink_delalloc asked for, all rounds
  flushed: number; // pages written
  inodes: number;
  files: UtFile[];
}

export interface UtPark {
  t0: number;
  t1: number;
  /** the ticket's bytes */
  bytes: number;
}

export interface UtIo {
  t0: number;
  t1: number;
  bytes: number;
}

export interface UntarDetails {
  files: number;
  dirs: number;
  archiveMib: number;
  decompress: string;
  elapsedS: number;
  limitGib: number;
  peakMayUseGib: number;
  archive: { dataBytes: number; meanBytes: number; pagesPerFile: number; atMost2k: number; maxBytes: number };
  series: { t: number[]; mayUseGib: number[]; limitGib: number[]; delallocMib: number[]; tickets: number[]; dirtyMib: number[] };
  buckets: { bucketS: number; cycles: number[]; pages: number[]; ios: number[]; parkS: number[] };
  /** null: no ticket was ever queued (the window never opened) */
  zoom: { t0S: number; t1S: number; cycles: UtCycle[]; parks: UtPark[]; ios: UtIo[] } | null;
}

const num = (x: unknown, d = 0): number => (typeof x === 'number' && Number.isFinite(x) ? x : d);
const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const str = (x: unknown): string => (typeof x === 'string' ? x : '');
const nums = (x: unknown): number[] => arr(x).map((v) => num(v));

/** Read a run's details; missing or malformed parts become empty. */
export function readUntarDetails(details: Record<string, unknown> | undefined): UntarDetails {
  const d = obj(details);
  const a = obj(d.archive);
  const s = obj(d.series);
  const b = obj(d.buckets);
  const z = d.zoom === null || d.zoom === undefined ? null : obj(d.zoom);
  return {
    files: num(d.files),
    dirs: num(d.dirs),
    archiveMib: num(d.archive_mib),
    decompress: str(d.decompress),
    elapsedS: num(d.elapsed_s),
    limitGib: num(d.limit_gib),
    peakMayUseGib: num(d.peak_may_use_gib),
    archive: {
      dataBytes: num(a.data_bytes),
      meanBytes: num(a.mean_bytes),
      pagesPerFile: num(a.pages_per_file),
      atMost2k: num(a.at_most_2k),
      maxBytes: num(a.max_bytes),
    },
    series: {
      t: nums(s.t),
      mayUseGib: nums(s.may_use_gib),
      limitGib: nums(s.limit_gib),
      delallocMib: nums(s.delalloc_mib),
      tickets: nums(s.tickets),
      dirtyMib: nums(s.dirty_mib),
    },
    buckets: {
      bucketS: num(b.bucket_s, 0.05),
      cycles: nums(b.cycles),
      pages: nums(b.pages),
      ios: nums(b.ios),
      parkS: nums(b.park_s),
    },
    zoom: z && {
      t0S: num(z.t0_s),
      t1S: num(z.t1_s),
      cycles: arr(z.cycles).map((c) => {
        const o = obj(c);
        return {
          t0: num(o.t0_ms),
          t1: num(o.t1_ms),
          state: str(o.state),
          rounds: num(o.rounds),
          toReclaim: num(o.to_reclaim),
          wanted: num(o.wanted),
          flushed: num(o.flushed),
          inodes: num(o.inodes),
          files: arr(o.files).map((f) => {
            const x = arr(f);
            return { name: str(x[0]), size: num(x[1]), pages: num(x[2]), at: num(x[3]) };
          }),
        };
      }),
      parks: arr(z.parks).map((p) => {
        const x = arr(p);
        return { t0: num(x[0]), t1: num(x[1]), bytes: num(x[2]) };
      }),
      ios: arr(z.ios).map((p) => {
        const x = arr(p);
        return { t0: num(x[0]), t1: num(x[1]), bytes: num(x[2]) };
      }),
    },
  };
}

type Scale = Parameters<typeof scaleTicks>[0];

function frame(width: number, height: number, margin: ChartFrame['margin'], fontPx: number, x: Scale, y?: Scale): ChartFrame {
  return {
    width,
    height,
    margin,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - margin.left - margin.right, fontPx),
    yTicks: y ? scaleTicks(y, 'y', height - margin.top - margin.bottom, fontPx) : [],
  };
}

const path = (pts: [number, number][]): string => pts.map((p, i) => `${i ? 'L' : 'M'}${p[0].toFixed(1)},${p[1].toFixed(1)}`).join('');

/* ---- the whole run: reservations against the limit -------------------- */

export interface SpaceLayout extends ChartFrame {
  mayUse: string;
  limit: string;
  /** where may_use first reached the limit (within 0.1%), if it did */
  reached: { x: number; y: number } | null;
  xTitle: string;
  yTitle: string;
}

/** The shared scales of a pair of space charts: the longest run, the highest line. */
export function spaceDomain(runs: UntarDetails[]): { tMax: number; gibMax: number } {
  return {
    tMax: Math.max(1e-3, ...runs.map((d) => d.elapsedS)),
    gibMax: Math.max(1e-3, ...runs.flatMap((d) => [d.limitGib, d.peakMayUseGib, ...d.series.limitGib, ...d.series.mayUseGib])),
  };
}

/**
 * One kernel's bytes_may_use (metadata) and the overcommit limit it may
 * not pass (total_bytes + unallocated / 8), in GiB, over seconds of the
 * run, on the pair's shared scales.
 */
export function layoutSpace(d: UntarDetails, width: number, height: number, fontPx: number, dom: { tMax: number; gibMax: number }): SpaceLayout {
  const y0 = scaleLinear().domain([0, dom.gibMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, dom.tMax]).nice().range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const s = d.series;
  const pts = (v: number[]): [number, number][] => s.t.map((t, i) => [x(t), y(v[i] ?? 0)]);
  const mu = pts(s.mayUseGib);
  const lim = pts(s.limitGib.length ? s.limitGib : s.t.map(() => d.limitGib));
  if (s.t.length) {
    mu.push([x(d.elapsedS), mu[mu.length - 1]![1]]);
    lim.push([x(d.elapsedS), lim[lim.length - 1]![1]]);
  }
  let reached: SpaceLayout['reached'] = null;
  for (let i = 0; i < s.t.length; i++) {
    const l = s.limitGib[i] ?? d.limitGib;
    if (l > 0 && (s.mayUseGib[i] ?? 0) >= l * 0.999) {
      reached = { x: x(s.t[i]!), y: y(s.mayUseGib[i]!) };
      break;
    }
  }
  return {
    ...frame(width, height, m, fontPx, x, y),
    mayUse: path(mu),
    limit: path(lim),
    reached,
    xTitle: axisTitle('time since tar started', 's'),
    yTitle: axisTitle('metadata reserved', 'GiB'),
  };
}

/* ---- the whole run: delalloc bytes, both kernels ------------------------ */

export interface LinesLayout extends ChartFrame {
  series: { key: string; d: string }[];
  xTitle: string;
  yTitle: string;
}

/** Delalloc (dirty, not yet allocated) MiB over the run, one line per kernel. */
export function layoutDelalloc(runs: { key: string; d: UntarDetails }[], width: number, height: number, fontPx: number, tMax: number): LinesLayout {
  const vMax = Math.max(1, ...runs.flatMap((r) => r.d.series.delallocMib));
  const y0 = scaleLinear().domain([0, vMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, tMax]).nice().range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  return {
    ...frame(width, height, m, fontPx, x, y),
    series: runs.map(({ key, d }) => ({ key, d: path(d.series.t.map((t, i) => [x(t), y(d.series.delallocMib[i] ?? 0)])) })),
    xTitle: axisTitle('time since tar started', 's'),
    yTitle: axisTitle('delalloc', 'MiB'),
  };
}

/* ---- the whole run: reclaim cycles per second --------------------------- */

/** Reclaim cycles per second in each time bucket, one line per kernel. */
export function layoutCycleRate(runs: { key: string; d: UntarDetails }[], width: number, height: number, fontPx: number, tMax: number): LinesLayout {
  const rate = (d: UntarDetails): [number, number][] =>
    d.buckets.cycles.map((c, i) => [(i + 0.5) * d.buckets.bucketS, c / Math.max(1e-9, d.buckets.bucketS)]);
  const vMax = Math.max(1, ...runs.flatMap((r) => rate(r.d).map((p) => p[1])));
  const y0 = scaleLinear().domain([0, vMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, tMax]).nice().range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  return {
    ...frame(width, height, m, fontPx, x, y),
    series: runs.map(({ key, d }) => {
      const pts = rate(d).filter((p) => p[0] <= d.elapsedS + d.buckets.bucketS);
      // steps: each bucket's rate held across the bucket
      const st: [number, number][] = [];
      for (const [t, v] of pts) {
        const h = d.buckets.bucketS / 2;
        st.push([x(Math.max(0, t - h)), y(v)], [x(Math.min(tMax, t + h)), y(v)]);
      }
      return { key, d: path(st) };
    }),
    xTitle: axisTitle('time since tar started', 's'),
    yTitle: axisTitle('reclaim cycles', 'per s'),
  };
}

/* ---- the flush queue: the zoom window ----------------------------------- */

export interface QueueMark {
  i: number; // the cycle's index in the window
  x: number;
  w: number;
  /** the bar of pages written, from the lane's baseline up */
  yFlushed: number;
  /** the tick at the pages asked for */
  yWanted: number;
  base: number;
  flushed: number;
  wanted: number;
  inodes: number;
  rounds: number;
  t0: number;
  t1: number;
}

export interface QueueLayout extends ChartFrame {
  xTitle: string;
  /** lane rows: label and band */
  lanes: { key: 'writer' | 'cycles' | 'device'; label: string; y: number; h: number }[];
  parks: { x: number; w: number; bytes: number; ms: number }[];
  marks: QueueMark[];
  /** the pages axis of the cycles lane (log), on the right */
  pageTicks: { y: number; label: string }[];
  pageTitle: string;
  /** requests in flight: a step line in the device lane */
  inflight: string;
  inflightMax: number;
  ios: number;
}

/** The window's shared scales: its length (ms) and the largest page count. */
export function queueDomain(runs: UntarDetails[]): { ms: number; pagesMax: number; inflightMax: number } {
  const ms = Math.max(1, ...runs.map((d) => (d.zoom ? (d.zoom.t1S - d.zoom.t0S) * 1000 : 0)));
  const pagesMax = Math.max(2, ...runs.flatMap((d) => (d.zoom ? d.zoom.cycles.flatMap((c) => [c.flushed, c.wanted]) : [])));
  const inflightMax = Math.max(1, ...runs.map((d) => (d.zoom ? maxInflight(d.zoom.ios) : 0)));
  return { ms, pagesMax, inflightMax };
}

/** Requests in flight over time: [ms, count] at every submission and completion. */
export function inflightSteps(ios: UtIo[]): [number, number][] {
  const ev: [number, number][] = [];
  for (const io of ios) {
    ev.push([io.t0, 1], [Math.max(io.t0, io.t1), -1]);
  }
  ev.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out: [number, number][] = [[0, 0]];
  let n = 0;
  for (const [t, k] of ev) {
    out.push([t, n]);
    n += k;
    out.push([t, n]);
  }
  return out;
}

export const maxInflight = (ios: UtIo[]): number => Math.max(0, ...inflightSteps(ios).map((p) => p[1]));

/**
 * One kernel's flush queue over the window, on the pair's shared scales:
 * the writer's lane (tar parked on its ticket: a bar per wait), the
 * cycles' lane (each reclaim cycle a bar from its start to its end, as
 * tall as the pages it wrote on a log scale, with a tick at the pages it
 * asked for), and the device's lane (requests in flight).
 */
export function layoutQueue(d: UntarDetails, width: number, fontPx: number, dom: { ms: number; pagesMax: number; inflightMax: number }): QueueLayout {
  const z = d.zoom;
  const lh = Math.round(fontPx * 2.2); // the writer's and the device's lanes
  const ch = Math.round(fontPx * 8); // the cycles' lane
  const gap = Math.round(fontPx * 0.8);
  const labels = ['tar', 'reclaim', 'device'];
  // lane names in the left margin; the cycles' page axis (log) and its
  // title on the right
  const right = Math.round(labelWidth(fmtNum(dom.pagesMax), fontPx) + fontPx * 2.4);
  const m = marginsFor(fontPx, labels, { yTitle: false, top: Math.round(fontPx * 0.6), right });
  const x = scaleLinear().domain([0, dom.ms]).range([m.left, width - m.right]);
  const writer = { key: 'writer' as const, label: 'tar', y: m.top, h: lh };
  const cycles = { key: 'cycles' as const, label: 'reclaim', y: writer.y + lh + gap, h: ch };
  const device = { key: 'device' as const, label: 'device', y: cycles.y + ch + gap, h: lh };
  const height = device.y + lh + m.bottom;
  const base = cycles.y + ch;
  const py = scaleLog()
    .domain([1, Math.max(2, dom.pagesMax)])
    .range([base, cycles.y + fontPx * 0.3])
    .clamp(true);
  const pageTicks = logTicks(py, 'y', ch, fontPx).map((t) => ({ y: t.pos, label: t.label }));
  const clampX = (ms: number): number => x(Math.min(dom.ms, Math.max(0, ms)));
  const parks = (z?.parks ?? [])
    .filter((p) => p.t1 > 0 && p.t0 < dom.ms)
    .map((p) => ({ x: clampX(p.t0), w: Math.max(1, clampX(p.t1) - clampX(p.t0)), bytes: p.bytes, ms: p.t1 - p.t0 }));
  const marks = (z?.cycles ?? []).map((c, i) => {
    const x0 = clampX(c.t0);
    return {
      i,
      x: x0,
      w: Math.max(3, clampX(c.t1) - x0),
      yFlushed: py(Math.max(1, c.flushed)),
      yWanted: py(Math.max(1, c.wanted)),
      base,
      flushed: c.flushed,
      wanted: c.wanted,
      inodes: c.inodes,
      rounds: c.rounds,
      t0: c.t0,
      t1: c.t1,
    };
  });
  const iy = scaleLinear()
    .domain([0, dom.inflightMax])
    .range([device.y + lh, device.y + 2]);
  const steps = inflightSteps(z?.ios ?? []).filter((p) => p[0] <= dom.ms);
  steps.push([dom.ms, steps.length ? steps[steps.length - 1]![1] : 0]);
  return {
    ...frame(width, height, m, fontPx, x),
    xTitle: axisTitle('time since the first ticket', 'ms'),
    lanes: [writer, cycles, device],
    parks,
    marks,
    pageTicks,
    pageTitle: axisTitle('pages', 'log'),
    inflight: path(steps.map(([t, n]) => [x(t), iy(n)])),
    inflightMax: dom.inflightMax,
    ios: z?.ios.length ?? 0,
  };
}

/** The files a cycle wrote, largest first when asked, else in the order written. */
export function cycleFiles(c: UtCycle, bySize = false): UtFile[] {
  return bySize ? [...c.files].sort((a, b) => b.pages - a.pages || b.size - a.size) : c.files;
}

/** A summary of the window: cycles, pages, inodes and the writer's wait. */
export function windowSummary(d: UntarDetails): { cycles: number; pages: number; inodes: number; parkedMs: number; ms: number } {
  const z = d.zoom;
  if (!z) return { cycles: 0, pages: 0, inodes: 0, parkedMs: 0, ms: 0 };
  const ms = (z.t1S - z.t0S) * 1000;
  return {
    cycles: z.cycles.length,
    pages: z.cycles.reduce((s, c) => s + c.flushed, 0),
    inodes: z.cycles.reduce((s, c) => s + c.inodes, 0),
    parkedMs: z.parks.reduce((s, p) => s + Math.max(0, Math.min(ms, p.t1) - Math.max(0, p.t0)), 0),
    ms,
  };
}
