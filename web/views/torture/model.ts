/*
 * model.ts - pure transforms for the torture view: the engine's sampled
 * series (queue lengths over simulated time, from lab_trace_json) and the
 * commits with their phases (the run's details, in qgroup-drop's format),
 * laid out for small charts. No drawing.
 */
import { scaleLinear } from 'd3-scale';
import type { ChartFrame } from '../Axes';
import { PHASES, type Commit, type Phase } from '../qgroup/model';

/** What each series the engine samples means, in the order they are shown. */
export const SERIES_INFO: { name: string; label: string; unit: string }[] = [
  { name: 'space_tickets', label: 'metadata reservation tickets waiting', unit: 'tickets' },
  { name: 'space_data_tickets', label: 'data reservation tickets waiting', unit: 'tickets' },
  { name: 'space_reclaim_size', label: 'bytes the waiting tickets want (reclaim_size)', unit: 'bytes' },
  { name: 'space_meta_may_use', label: 'metadata reserved, not yet used (bytes_may_use)', unit: 'bytes' },
  { name: 'delalloc_extents', label: 'delalloc extents (dirty, not yet written back)', unit: 'extents' },
  { name: 'ordered_extents', label: 'ordered extents in flight', unit: 'extents' },
  { name: 'iotree_records', label: 'io_tree records', unit: 'records' },
  { name: 'dirty_extents', label: 'qgroup dirty extents in the running transaction', unit: 'records' },
  { name: 'log_writers', label: 'log writers (fsyncs inside the log transaction)', unit: 'tasks' },
  { name: 'log_sync_waiters', label: 'fsyncs waiting for the log sync', unit: 'tasks' },
  { name: 'fsync_ms', label: 'fsync latency', unit: 'ms' },
  { name: 'mem_pressure', label: 'extent-buffer allocator memory pressure (0 to 1)', unit: '' },
  { name: 'recv_dirty_pages', label: 'dirty pages of the receiving file system', unit: 'pages' },
];

export interface Series {
  name: string;
  label: string;
  unit: string;
  /** [simulated ms, value], in time order */
  points: [number, number][];
}

/**
 * The non-empty series of a trace (lab_trace_json's `series`), known ones
 * first in SERIES_INFO's order, then any other the engine adds. Samples are
 * put in time order: each task stamps them with its own clock, which may
 * run ahead of another's. fsync latency is also kept per workload phase
 * (`fsync_ms_<phase>`); a single phase repeats `fsync_ms` and is dropped.
 */
export function readSeries(trace: unknown): Series[] {
  const raw = (trace as { series?: Record<string, { t?: number[]; v?: number[] }> } | undefined)?.series ?? {};
  const names = [
    ...SERIES_INFO.map((s) => s.name).filter((n) => n in raw),
    ...Object.keys(raw)
      .filter((n) => !SERIES_INFO.some((s) => s.name === n))
      .sort(),
  ];
  const phases = names.filter((n) => n.startsWith('fsync_ms_'));
  const out: Series[] = [];
  for (const name of names) {
    if (phases.length === 1 && name === phases[0] && 'fsync_ms' in raw) continue;
    const t = raw[name]?.t ?? [];
    const v = raw[name]?.v ?? [];
    const n = Math.min(t.length, v.length);
    if (n === 0) continue;
    const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => t[a]! - t[b]! || a - b);
    const info = SERIES_INFO.find((s) => s.name === name);
    out.push({
      name,
      label: info?.label ?? (name.startsWith('fsync_ms_') ? `fsync latency, phase ${name.slice(9)}` : name.replace(/_/g, ' ')),
      unit: info?.unit ?? (name.startsWith('fsync_ms_') ? 'ms' : ''),
      points: idx.map((i) => [t[i]! / 1e6, v[i]!]),
    });
  }
  return out;
}

export interface SeriesLayout extends ChartFrame {
  /** a step line: the value holds until the next sample */
  path: string;
}

const MARGIN = { top: 8, right: 14, bottom: 30, left: 64 };

export function fmtValue(v: number, unit: string): string {
  if (unit === 'bytes') {
    if (v >= 1 << 30) return `${+(v / (1 << 30)).toPrecision(3)} GiB`;
    if (v >= 1 << 20) return `${+(v / (1 << 20)).toPrecision(3)} MiB`;
    if (v >= 1 << 10) return `${+(v / (1 << 10)).toPrecision(3)} KiB`;
    return `${v} B`;
  }
  if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (Math.abs(v) >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

export function fmtMs(ms: number): string {
  if (ms >= 1000) return `${+(ms / 1000).toPrecision(3)} s`;
  return `${+ms.toPrecision(3)} ms`;
}

/** One series over [0, tMaxMs] as a step line in a width x height box. */
export function layoutSeries(s: Series, tMaxMs: number, width: number, height: number): SeriesLayout {
  const m = MARGIN;
  const x = scaleLinear().domain([0, Math.max(1e-6, tMaxMs)]).range([m.left, width - m.right]);
  const vMax = Math.max(1, ...s.points.map((p) => p[1]));
  const y = scaleLinear().domain([0, vMax]).nice(3).range([height - m.bottom, m.top]);
  let path = '';
  s.points.forEach(([t, v], i) => {
    const px = x(t).toFixed(1);
    const py = y(v).toFixed(1);
    path += i === 0 ? `M${px},${py}` : `H${px}V${py}`;
  });
  const last = s.points.at(-1);
  if (last) path += `H${x(tMaxMs).toFixed(1)}`;
  return {
    width,
    height,
    margin: m,
    xTicks: x.ticks(Math.max(2, Math.floor(width / 140))).map((v) => ({ pos: x(v), label: fmtMs(v) })),
    yTicks: y.ticks(3).map((v) => ({ pos: y(v), label: fmtValue(v, s.unit) })),
    path,
  };
}

/** Time per phase summed over all commits, and the longest commit. */
export function commitSummary(commits: Commit[]): { phases: [Phase, number][]; longest: Commit | null } {
  let longest: Commit | null = null;
  for (const c of commits) if (!longest || c.endS - c.startS > longest.endS - longest.startS) longest = c;
  return { phases: PHASES.map((p) => [p, commits.reduce((s, c) => s + c.phasesMs[p], 0)]), longest };
}

export interface CommitLayout extends ChartFrame {
  bars: { key: string; phase: Phase; x: number; y: number; height: number; ms: number; commit: Commit }[];
}

/** Each commit as a thin bar at its start time, its phases stacked bottom-up. */
export function layoutCommits(commits: Commit[], tMaxMs: number, width: number, height: number): CommitLayout {
  const m = { top: 12, right: 14, bottom: 34, left: 72 };
  const x = scaleLinear().domain([0, Math.max(1e-6, tMaxMs)]).range([m.left, width - m.right]);
  const total = (c: Commit): number => PHASES.reduce((s, p) => s + c.phasesMs[p], 0);
  const y = scaleLinear()
    .domain([0, Math.max(1e-3, ...commits.map(total))])
    .nice(4)
    .range([height - m.bottom, m.top]);
  const bars: CommitLayout['bars'] = [];
  for (const c of commits) {
    let acc = 0;
    for (const p of PHASES) {
      const y0 = y(acc);
      acc += c.phasesMs[p];
      const y1 = y(acc);
      if (y0 - y1 > 0) bars.push({ key: `${c.transid}-${p}`, phase: p, x: x(c.startS * 1000), y: y1, height: y0 - y1, ms: c.phasesMs[p], commit: c });
    }
  }
  return {
    width,
    height,
    margin: m,
    xTicks: x.ticks(Math.max(2, Math.floor(width / 140))).map((v) => ({ pos: x(v), label: fmtMs(v) })),
    yTicks: y.ticks(4).map((v) => ({ pos: y(v), label: fmtMs(v) })),
    bars,
  };
}
