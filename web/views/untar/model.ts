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

/** Metadata reservations against the limit at a moment of the window. */
export interface UtSpace {
  t: number; // ms from the window's start
  mayUseGib: number;
  limitGib: number;
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
  zoom: { t0S: number; t1S: number; cycles: UtCycle[]; parks: UtPark[]; ios: UtIo[]; space: UtSpace[] } | null;
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
      // taken in the engine's order (a completion may be ahead of tar's clock): by time
      space: arr(z.space)
        .map((p) => {
          const x = arr(p);
          return { t: num(x[0]), mayUseGib: num(x[1]), limitGib: num(x[2]) };
        })
        .sort((a, b) => a.t - b.t),
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

/** The zoom window on a whole-run chart's x axis (px), if the run has one. */
export interface WindowBand {
  x0: number;
  x1: number;
}

const windowBand = (d: UntarDetails, x: (s: number) => number): WindowBand | null =>
  d.zoom ? { x0: x(d.zoom.t0S), x1: Math.max(x(d.zoom.t0S) + 2, x(Math.min(d.zoom.t1S, d.elapsedS))) } : null;

export interface SpaceLayout extends ChartFrame {
  mayUse: string;
  limit: string;
  /** where the flush queue's window sits in the run */
  window: WindowBand | null;
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
    window: windowBand(d, x),
    reached,
    xTitle: axisTitle('time since tar started', 's'),
    yTitle: axisTitle('reserved', 'GiB'),
  };
}

/* ---- the whole run: delalloc bytes, both kernels ------------------------ */

export interface LinesLayout extends ChartFrame {
  series: { key: string; d: string }[];
  /** where the flush queue's window sits in the run (the same moment in both kernels) */
  window: WindowBand | null;
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
    window: runs[0] ? windowBand(runs[0].d, x) : null,
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
    window: runs[0] ? windowBand(runs[0].d, x) : null,
    xTitle: axisTitle('time since tar started', 's'),
    yTitle: axisTitle('cycles', 'per s'),
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

export type LaneKey = 'space' | 'writer' | 'cycles' | 'device';

export interface QueueLane {
  key: LaneKey;
  /** the lane's caption, above it (with the unit of its ticks) */
  label: string;
  y: number;
  h: number;
  /** ticks of the lane's own axis, on the right */
  ticks: { y: number; label: string }[];
}

export interface QueueLayout extends ChartFrame {
  xTitle: string;
  /** lanes, top to bottom: reservations against the limit, tar, reclaim cycles, the device */
  lanes: QueueLane[];
  /** metadata reserved minus the limit (MiB), a line; the limit is its 0 */
  space: string;
  limitY: number;
  parks: { x: number; w: number; bytes: number; ms: number }[];
  marks: QueueMark[];
  /** requests in flight: a step line in the device lane */
  inflight: string;
  inflightMax: number;
  ios: number;
}

/** The window's shared scales: its length (ms), the largest page count, requests in flight, and how far below the limit reservations fell (MiB). */
export function queueDomain(runs: UntarDetails[]): { ms: number; pagesMax: number; inflightMax: number; roomMib: number } {
  const ms = Math.max(1, ...runs.map((d) => (d.zoom ? (d.zoom.t1S - d.zoom.t0S) * 1000 : 0)));
  const pagesMax = Math.max(2, ...runs.flatMap((d) => (d.zoom ? d.zoom.cycles.flatMap((c) => [c.flushed, c.wanted]) : [])));
  const inflightMax = Math.max(1, ...runs.map((d) => (d.zoom ? maxInflight(d.zoom.ios) : 0)));
  const roomMib = Math.max(1, ...runs.flatMap((d) => (d.zoom ? d.zoom.space.map((p) => (p.limitGib - p.mayUseGib) * 1024) : [])));
  return { ms, pagesMax, inflightMax, roomMib };
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
 * One kernel's flush queue over the window, on the pair's shared scales
 * and one clock (ms since the first ticket, the same moment in both
 * kernels), in four lanes, each captioned above: the metadata reserved
 * against the overcommit limit (MiB below it: the line at 0 is the limit,
 * where reservations become tickets); tar (parked on its ticket: a bar per
 * wait); the reclaim cycles (each a bar from its start to its end, as tall
 * as the pages it wrote on a log scale, a tick at the pages it asked for);
 * the device (requests in flight). The numeric lanes' ticks are on the right.
 */
export function layoutQueue(d: UntarDetails, width: number, fontPx: number, dom: { ms: number; pagesMax: number; inflightMax: number; roomMib: number }): QueueLayout {
  const z = d.zoom;
  const cap = Math.round(fontPx * 1.5); // a lane's caption row
  const gap = Math.round(fontPx * 0.5);
  const sh = Math.round(fontPx * 5); // reservations
  const lh = Math.round(fontPx * 1.8); // tar
  const ch = Math.round(fontPx * 7); // the cycles
  const dh = Math.round(fontPx * 3); // the device
  const room = scaleLinear().domain([-dom.roomMib, 0]).nice();
  const roomLabels = room.ticks(3).map(fmtNum);
  const tickW = Math.max(labelWidth(fmtNum(dom.pagesMax), fontPx), labelWidth(fmtNum(dom.inflightMax), fontPx), ...roomLabels.map((l) => labelWidth(l, fontPx)));
  const m = { top: Math.round(fontPx * 0.3), right: Math.round(tickW + fontPx * 0.9), bottom: Math.round(fontPx * 3), left: Math.round(fontPx * 0.6) };
  const x = scaleLinear().domain([0, dom.ms]).range([m.left, width - m.right]);
  let y = m.top;
  // a caption runs the chart's width; a narrow chart (1024 px, a projector) takes the short one
  const fits = (t: string): boolean => labelWidth(t, fontPx) <= width - m.left - fontPx * 0.3;
  const lane = (key: LaneKey, label: string, short: string, h: number): QueueLane => {
    const l = { key, label: fits(label) ? label : short, y: y + cap, h, ticks: [] as { y: number; label: string }[] };
    y = l.y + h + gap;
    return l;
  };
  const space = lane('space', axisTitle('metadata reserved − the limit', 'MiB'), axisTitle('reserved − limit', 'MiB'), sh);
  const writer = lane('writer', 'tar, parked on its ticket', 'tar parked', lh);
  const cycles = lane('cycles', axisTitle('pages per reclaim cycle', 'log'), axisTitle('pages a cycle', 'log'), ch);
  const device = lane('device', 'device: requests in flight', 'requests in flight', dh);
  const height = y - gap + m.bottom;
  // a lane's top tick label sits inside its lane, clear of the caption above
  const inset = fontPx * 0.6;

  const sy = room.range([space.y + space.h, space.y + inset]);
  space.ticks = scaleTicks(sy, 'y', space.h, fontPx).map((t) => ({ y: t.pos, label: t.label }));
  const base = cycles.y + ch;
  const py = scaleLog()
    .domain([1, Math.max(2, dom.pagesMax)])
    .range([base, cycles.y + inset])
    .clamp(true);
  cycles.ticks = logTicks(py, 'y', ch, fontPx).map((t) => ({ y: t.pos, label: t.label }));
  const iy = scaleLinear()
    .domain([0, dom.inflightMax])
    .range([device.y + dh, device.y + inset]);
  device.ticks = [0, dom.inflightMax].map((v) => ({ y: iy(v), label: fmtNum(v) }));

  const clampX = (ms: number): number => x(Math.min(dom.ms, Math.max(0, ms)));
  const sp = (z?.space ?? []).filter((p) => p.t >= 0 && p.t <= dom.ms);
  const spacePts: [number, number][] = sp.map((p) => [clampX(p.t), sy(Math.min(0, (p.mayUseGib - p.limitGib) * 1024))]);
  if (spacePts.length) spacePts.push([x(dom.ms), spacePts[spacePts.length - 1]![1]]);
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
  const steps = inflightSteps(z?.ios ?? []).filter((p) => p[0] <= dom.ms);
  steps.push([dom.ms, steps.length ? steps[steps.length - 1]![1] : 0]);
  return {
    ...frame(width, height, m, fontPx, x),
    xTitle: axisTitle('time since the first ticket', 'ms'),
    lanes: [space, writer, cycles, device],
    space: path(spacePts),
    limitY: sy(0),
    parks,
    marks,
    inflight: path(steps.map(([t, n]) => [x(t), iy(n)])),
    inflightMax: dom.inflightMax,
    ios: z?.ios.length ?? 0,
  };
}

/** The files a cycle wrote, largest first when asked, else in the order written. */
export function cycleFiles(c: UtCycle, bySize = false): UtFile[] {
  return bySize ? [...c.files].sort((a, b) => b.pages - a.pages || b.size - a.size) : c.files;
}

/** A summary of the window: cycles, pages, inodes and the writer's wait, in it (not the run's). */
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

/**
 * Which window of the run a flush-queue chart shows, in words: "the
 * 500 ms from the first ticket, 8.22 to 8.72 s into the 85.3 s run" (the
 * window's counts are its own; the headline's are the whole run's).
 */
export function windowText(d: UntarDetails): string {
  const z = d.zoom;
  if (!z) return '';
  const ms = (z.t1S - z.t0S) * 1000;
  const end = Math.min(z.t1S, d.elapsedS);
  return `the ${fmtNum(ms)} ms from the first ticket, ${fmtNum(z.t0S)} to ${fmtNum(end)} s into the ${fmtNum(d.elapsedS)} s run`;
}
