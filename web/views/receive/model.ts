/*
 * model.ts - pure transforms for the receive view (seed 003): read the
 * engine's `details` of a run into typed data and lay out its pictures:
 * files received against time (both kernels on one chart), the zoomed
 * timeline of a dozen files with each truncate's wait for its tail page
 * and the destination disk's requests underneath, the receive's time per
 * command type, the disk's requests per second over the receive, and
 * where a few received files' extents sit on the disk. No drawing.
 */
import { scaleBand, scaleLinear } from 'd3-scale';
import { axisTitle, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { fmtNum } from '../../model/format';

export interface RcCmd {
  op: string;
  file: number;
  t0: number; // ms from the window's first command
  t1: number;
  /** a TRUNCATE's wait for its tail page (ms), if it waited */
  wait?: [number, number];
}

export interface RcIo {
  op: string;
  off: number;
  bytes: number;
  t0: number;
  t1: number;
}

export interface RcExtent {
  off: number;
  len: number;
  disk: number;
  diskLen: number;
  type: string;
}

export interface RcFile {
  name: string;
  size: number;
  syncWrites: number;
  extents: RcExtent[];
}

export interface ReceiveDetails {
  files: number;
  fileBytes: number;
  receiveS: number;
  zoom: { firstFile: number; atS: number; cmds: RcCmd[] };
  /** [s since the receive started, files received] */
  progress: [number, number][];
  ops: Record<string, { count: number; s: number }>;
  device: { ios: RcIo[]; bucketS: number; requests: number[] };
  layout: RcFile[];
}

const num = (x: unknown, d = 0): number => (typeof x === 'number' && Number.isFinite(x) ? x : d);
const obj = (x: unknown): Record<string, unknown> => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : {});
const arr = (x: unknown): unknown[] => (Array.isArray(x) ? x : []);
const str = (x: unknown): string => (typeof x === 'string' ? x : '');

/** Read a run's details; missing or malformed parts become empty. */
export function readReceiveDetails(details: Record<string, unknown> | undefined): ReceiveDetails {
  const d = obj(details);
  const z = obj(d.zoom);
  const dev = obj(d.device);
  const ops: Record<string, { count: number; s: number }> = {};
  for (const [k, v] of Object.entries(obj(d.ops))) ops[k] = { count: num(obj(v).count), s: num(obj(v).s) };
  return {
    files: num(d.files),
    fileBytes: num(d.file_bytes),
    receiveS: num(d.receive_s),
    zoom: {
      firstFile: num(z.first_file, 1),
      atS: num(z.at_s),
      cmds: arr(z.cmds).map((c) => {
        const o = obj(c);
        const cmd: RcCmd = { op: str(o.op), file: num(o.file), t0: num(o.t0_ms), t1: num(o.t1_ms) };
        if (typeof o.wait0_ms === 'number' && typeof o.wait1_ms === 'number') cmd.wait = [o.wait0_ms, o.wait1_ms];
        return cmd;
      }),
    },
    progress: arr(d.progress)
      .map((p) => arr(p))
      .filter((p) => p.length === 2)
      .map((p) => [num(p[0]), num(p[1])] as [number, number]),
    ops,
    device: {
      ios: arr(dev.zoom_ios).map((x) => {
        const o = obj(x);
        return { op: str(o.op), off: num(o.off), bytes: num(o.bytes), t0: num(o.t0_ms), t1: num(o.t1_ms) };
      }),
      bucketS: num(dev.bucket_s, 0.05),
      requests: arr(dev.requests).map((x) => num(x)),
    },
    layout: arr(d.layout).map((f) => {
      const o = obj(f);
      return {
        name: str(o.name),
        size: num(o.size),
        syncWrites: num(o.sync_writes),
        extents: arr(o.extents).map((e) => {
          const x = obj(e);
          return { off: num(x.off), len: num(x.len), disk: num(x.disk), diskLen: num(x.disk_len), type: str(x.type) };
        }),
      };
    }),
  };
}

type Scale = Parameters<typeof scaleTicks>[0];

/** A chart's frame: its size, margins and the ticks of its x (and y) scale. */
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

/** The stream's command types in the order receive replays a file's. */
export const OPS = ['mkfile', 'rename', 'utimes', 'write', 'truncate', 'chown', 'chmod'] as const;

/* ---- files received against time ------------------------------------ */

export interface LineSeries {
  key: string;
  d: string;
  end: { x: number; y: number };
}

export interface ProgressLayout extends ChartFrame {
  series: LineSeries[];
  /** published receive times: a mark on the x axis at the files' level */
  marks: { key: string; x: number; y: number; value: number }[];
  xTitle: string;
  yTitle: string;
}

/**
 * Files received against seconds of receive, one line per run given, on
 * one pair of axes (the kernels share them by construction). `published`
 * puts a mark at each published receive time, at the files' count.
 */
export function layoutProgress(
  runs: { key: string; d: ReceiveDetails }[],
  published: { key: string; value: number }[],
  width: number,
  height: number,
  fontPx = 16,
): ProgressLayout {
  const tMax = Math.max(1e-3, ...runs.map((r) => r.d.receiveS), ...published.map((p) => p.value));
  const fMax = Math.max(1, ...runs.map((r) => r.d.files));
  const y0 = scaleLinear().domain([0, fMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, tMax]).nice().range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const series = runs.map(({ key, d }) => {
    const pts: [number, number][] = [[0, 0], ...d.progress, [d.receiveS, d.files]];
    const path = pts.map((p, i) => `${i ? 'L' : 'M'}${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join('');
    return { key, d: path, end: { x: x(d.receiveS), y: y(d.files) } };
  });
  return {
    ...frame(width, height, m, fontPx, x, y),
    series,
    marks: published.filter((p) => p.value > 0).map((p) => ({ key: p.key, x: x(p.value), y: y(fMax), value: p.value })),
    xTitle: axisTitle('time since the receive started', 's'),
    yTitle: axisTitle('files received'),
  };
}

/* ---- the zoomed timeline --------------------------------------------- */

export interface TimelineBar {
  x: number;
  w: number;
  y: number;
  h: number;
  op: string;
  file: number;
}

export interface TimelineLayout extends ChartFrame {
  rows: { file: number; y: number; label: string }[];
  bars: TimelineBar[];
  waits: { x: number; w: number; y: number; h: number; file: number; ms: number }[];
  /** the disk lane under the files */
  disk: { y: number; h: number; label: string };
  ios: { x: number; w: number; op: string }[];
  xTitle: string;
}

/** The end of a window (ms): its last command or request. */
export const windowEnd = (d: ReceiveDetails): number =>
  Math.max(0, ...d.zoom.cmds.map((c) => c.t1), ...d.device.ios.map((i) => i.t1));

/**
 * One row per file of the window, each command a bar from its start to its
 * end; a truncate's wait for its tail page drawn over it; under the files,
 * the destination disk's lane with each request from submission to
 * completion. xMaxMs (the longer of the two windows) shares the x axis of
 * the before and after panels.
 */
export function layoutTimeline(d: ReceiveDetails, width: number, fontPx = 16, xMaxMs?: number): TimelineLayout {
  const files = [...new Set(d.zoom.cmds.map((c) => c.file))].sort((a, b) => a - b);
  const labels = files.map((f) => `file_${f}`);
  const rowH = Math.round(fontPx * 1.35);
  const m = marginsFor(fontPx, [...labels, 'disk'], { yTitle: false });
  const top = m.top;
  const diskY = top + files.length * rowH + Math.round(fontPx * 0.6);
  const height = diskY + rowH + m.bottom;
  const tMax = Math.max(1e-3, xMaxMs ?? windowEnd(d));
  const x = scaleLinear().domain([0, tMax]).nice().range([m.left, width - m.right]);
  const band = scaleBand<number>().domain(files).range([top, top + files.length * rowH]).paddingInner(0.2);
  const bh = band.bandwidth();
  const bars = d.zoom.cmds
    .filter((c) => band(c.file) !== undefined)
    .map((c) => ({ x: x(c.t0), w: Math.max(1, x(c.t1) - x(c.t0)), y: band(c.file) ?? 0, h: bh, op: c.op, file: c.file }));
  const waits = d.zoom.cmds
    .filter((c) => c.wait && band(c.file) !== undefined)
    .map((c) => ({ x: x(c.wait![0]), w: Math.max(1, x(c.wait![1]) - x(c.wait![0])), y: band(c.file) ?? 0, h: bh, file: c.file, ms: c.wait![1] - c.wait![0] }));
  return {
    ...frame(width, height, m, fontPx, x),
    rows: files.map((f, i) => ({ file: f, y: (band(f) ?? 0) + bh / 2, label: labels[i]! })),
    bars,
    waits,
    disk: { y: diskY, h: rowH * 0.8, label: 'disk' },
    ios: d.device.ios.map((io) => ({ x: x(io.t0), w: Math.max(1.5, x(io.t1) - x(io.t0)), op: io.op })),
    xTitle: axisTitle('time in this window', 'ms'),
  };
}

/* ---- time per command type ------------------------------------------- */

export interface OpsLayout extends ChartFrame {
  bars: { op: string; key: string; x: number; w: number; y: number; h: number; s: number }[];
  rows: { op: string; y: number }[];
  xTitle: string;
}

/**
 * The receive's time in each command type, one bar per run given (the two
 * kernels side by side in each row), on one x scale.
 */
export function layoutOps(runs: { key: string; d: ReceiveDetails }[], width: number, fontPx = 16): OpsLayout {
  const ops = OPS.filter((op) => runs.some((r) => (r.d.ops[op]?.count ?? 0) > 0));
  const rowH = Math.round(fontPx * 1.25) * Math.max(1, runs.length) + Math.round(fontPx * 0.5);
  const m = marginsFor(fontPx, ops.map(String), { yTitle: false });
  const height = m.top + ops.length * rowH + m.bottom;
  const sMax = Math.max(1e-3, ...runs.flatMap((r) => ops.map((op) => r.d.ops[op]?.s ?? 0)));
  const x = scaleLinear().domain([0, sMax]).nice().range([m.left, width - m.right]);
  const row = scaleBand<string>().domain(ops).range([m.top, m.top + ops.length * rowH]).paddingInner(0.25);
  const sub = scaleBand<string>()
    .domain(runs.map((r) => r.key))
    .range([0, row.bandwidth()])
    .paddingInner(0.1);
  const bars = ops.flatMap((op) =>
    runs.map((r) => {
      const s = r.d.ops[op]?.s ?? 0;
      return { op, key: r.key, x: x(0), w: Math.max(0, x(s) - x(0)), y: (row(op) ?? 0) + (sub(r.key) ?? 0), h: sub.bandwidth(), s };
    }),
  );
  return {
    ...frame(width, height, m, fontPx, x),
    bars,
    rows: ops.map((op) => ({ op, y: (row(op) ?? 0) + row.bandwidth() / 2 })),
    xTitle: axisTitle('time the receive spent in it', 's'),
  };
}

/* ---- disk requests per second over the receive --------------------- */

export interface RateLayout extends ChartFrame {
  series: { key: string; d: string }[];
  xTitle: string;
  yTitle: string;
}

/** Requests per second, per bucket, as a step line per run (shared axes). */
export function layoutRate(runs: { key: string; d: ReceiveDetails }[], width: number, height: number, fontPx = 16): RateLayout {
  const rates = runs.map((r) => r.d.device.requests.map((n) => n / Math.max(1e-9, r.d.device.bucketS)));
  const tMax = Math.max(1e-3, ...runs.map((r) => r.d.receiveS));
  const vMax = Math.max(1, ...rates.flat());
  const y0 = scaleLinear().domain([0, vMax]).nice();
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear().domain([0, tMax]).nice().range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const series = runs.map((r, i) => {
    const w = r.d.device.bucketS;
    let path = `M${x(0).toFixed(1)},${y(0).toFixed(1)}`;
    (rates[i] ?? []).forEach((v, k) => {
      const t0 = Math.min(k * w, r.d.receiveS);
      const t1 = Math.min((k + 1) * w, r.d.receiveS);
      path += `L${x(t0).toFixed(1)},${y(v).toFixed(1)}L${x(t1).toFixed(1)},${y(v).toFixed(1)}`;
    });
    path += `L${x(r.d.receiveS).toFixed(1)},${y(0).toFixed(1)}`;
    return { key: r.key, d: path };
  });
  return {
    ...frame(width, height, m, fontPx, x, y),
    series,
    xTitle: axisTitle('time since the receive started', 's'),
    yTitle: axisTitle('disk requests', '/s'),
  };
}

/* ---- where the files' extents sit on disk --------------------------- */

/** Extents closer than this on disk are drawn as one run of addresses. */
export const CLUSTER_GAP = 64 * 1024;

export interface DiskCluster {
  /** first and last address (bytes) of the run of extents */
  from: number;
  to: number;
}

/** The runs of nearby disk addresses the files' extents occupy, in address order. */
export function diskClusters(files: RcFile[]): DiskCluster[] {
  const ex = files
    .flatMap((f) => f.extents.filter((e) => e.disk > 0 && e.type !== 'inline'))
    .sort((a, b) => a.disk - b.disk);
  const out: DiskCluster[] = [];
  for (const e of ex) {
    const last = out[out.length - 1];
    if (last && e.disk - last.to <= CLUSTER_GAP) last.to = Math.max(last.to, e.disk + e.diskLen);
    else out.push({ from: e.disk, to: e.disk + e.diskLen });
  }
  return out;
}

/** The bytes the clusters span together (for a shared px-per-byte). */
export const clusterBytes = (c: DiskCluster[]): number => c.reduce((s, x) => s + (x.to - x.from), 0);

export interface ExtentLayout {
  width: number;
  height: number;
  fontPx: number;
  files: { name: string; y: number; h: number; pages: { x: number; w: number; extent: number; off: number; len: number }[]; extents: number }[];
  /** the disk: runs of nearby addresses, with a break (and the gap's
   * size) between runs far apart */
  disk: { y: number; h: number; boxes: { x: number; w: number; file: number; extent: number; disk: number }[]; breaks: { x: number; gap: number }[] };
  links: { x1: number; y1: number; x2: number; y2: number; file: number }[];
  fileX: { x0: number; x1: number };
  /** baselines of the captions above the files and above the disk */
  captions: { files: number; disk: number };
}

/**
 * Each file as its bytes from offset 0, one box per file extent, and under
 * them the disk: the runs of addresses the extents occupy, in address
 * order, drawn at one scale with a break between runs far apart (labelled
 * with the distance); a line from each extent to its place on disk.
 * `bytesAcross` and `breaksAcross` (the larger of the two runs' clusterBytes
 * and jumps) share the disk scale between the before and after panels.
 */
export function layoutExtents(files: RcFile[], width: number, fontPx = 16, bytesAcross?: number, breaksAcross?: number): ExtentLayout {
  const rowH = Math.round(fontPx * 1.5);
  const labelW = Math.round(fontPx * 0.64 * Math.max(6, ...files.map((f) => f.name.length)) + fontPx);
  const x0 = labelW;
  const x1 = Math.max(x0 + 40, x0 + (width - x0) * 0.5 - fontPx * 1.5);
  const maxBytes = Math.max(1, ...files.map((f) => Math.max(f.size, ...f.extents.map((e) => e.off + e.len))));
  const fx = scaleLinear().domain([0, maxBytes]).range([x0, x1]);
  const clusters = diskClusters(files);
  const breakW = fontPx * 5;
  const pad = x0; // the disk starts under the files, its label in their column
  const breaks = Math.max(clusters.length - 1, breaksAcross ?? 0, 0);
  const room = Math.max(20, width - pad - fontPx * 0.5 - breaks * breakW);
  const pxPerByte = room / Math.max(1, bytesAcross ?? 0, clusterBytes(clusters));
  // each cluster's left edge
  const left: number[] = [];
  let cx = pad;
  clusters.forEach((c, i) => {
    left.push(cx);
    cx += (c.to - c.from) * pxPerByte + (i < clusters.length - 1 ? breakW : 0);
  });
  const at = (disk: number): number => {
    const i = clusters.findIndex((c) => disk >= c.from && disk < c.to);
    return i < 0 ? pad : left[i]! + (disk - clusters[i]!.from) * pxPerByte;
  };
  // a caption row above the files and one above the disk
  const top = fontPx * 1.6;
  const diskY = top + fontPx * 0.5 + files.length * rowH + fontPx * 2.4;
  const out: ExtentLayout = {
    width,
    height: diskY + rowH + fontPx * 2.2,
    fontPx,
    captions: { files: fontPx * 1.1, disk: diskY - fontPx * 0.45 },
    files: [],
    disk: {
      y: diskY,
      h: rowH * 0.8,
      boxes: [],
      breaks: clusters.slice(1).map((c, i) => ({ x: left[i + 1]! - breakW / 2, gap: c.from - clusters[i]!.to })),
    },
    links: [],
    fileX: { x0, x1 },
  };
  files.forEach((f, i) => {
    const y = top + fontPx * 0.5 + i * rowH;
    const h = rowH * 0.75;
    const pages = f.extents.map((e, k) => ({ x: fx(e.off), w: Math.max(1, fx(e.off + e.len) - fx(e.off)), extent: k, off: e.off, len: e.len }));
    out.files.push({ name: f.name, y, h, pages, extents: f.extents.filter((e) => e.type !== 'inline').length });
    f.extents.forEach((e, k) => {
      if (e.disk <= 0 || e.type === 'inline') return;
      const bx = at(e.disk);
      const bw = Math.max(2, e.diskLen * pxPerByte);
      out.disk.boxes.push({ x: bx, w: bw, file: i, extent: k, disk: e.disk });
      out.links.push({ x1: fx(e.off + e.len / 2), y1: y + h, x2: bx + bw / 2, y2: diskY, file: i });
    });
  });
  return out;
}
