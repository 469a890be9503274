/*
 * model.ts - pure transforms for the torture view: the engine's sampled
 * series (queue lengths over simulated time, from lab_trace_json) and the
 * commits with their phases (the run's details, in qgroup-drop's format),
 * laid out for small charts. No drawing.
 */
import { scaleLinear } from 'd3-scale';
import { axisTitle, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { PHASES, type Commit, type Phase } from '../qgroup/model';
import { fmtBytes, fmtMs, fmtNum, pickByteUnit, pickTimeUnit } from '../../model/format';

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
  xTitle: string;
  yTitle: string;
}

/** A series' value with its unit, for a caption ("peak 1.5 MiB", "peak 12 tickets"). */
export function fmtValue(v: number, unit: string): string {
  if (unit === 'bytes') return fmtBytes(v);
  if (unit === 'ms') return fmtMs(v);
  return unit ? `${fmtNum(v)} ${unit}` : fmtNum(v);
}

export { fmtMs };

/** The time axis of the run: one unit (ms or s), from tMaxMs. */
const timeAxis = (tMaxMs: number) => pickTimeUnit(Math.max(1e-6, tMaxMs));

/** One series over [0, tMaxMs] as a step line in a width x height box; its unit on the y axis. */
export function layoutSeries(s: Series, tMaxMs: number, width: number, height: number, fontPx = 16): SeriesLayout {
  const tu = timeAxis(tMaxMs);
  const vMax = Math.max(s.unit === 'bytes' ? 1024 : 1, ...s.points.map((p) => p[1]));
  const bu = s.unit === 'bytes' ? pickByteUnit(vMax) : { unit: s.unit === 'ms' ? 'ms' : s.unit, per: 1 };
  const y0 = scaleLinear().domain([0, vMax / bu.per]).nice(3);
  const m = marginsFor(fontPx, y0.ticks(3).map(fmtNum), { top: Math.round(fontPx * 0.6) });
  const x = scaleLinear().domain([0, Math.max(1e-6, tMaxMs) / tu.per]).range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  let path = '';
  s.points.forEach(([t, v], i) => {
    const px = x(t / tu.per).toFixed(1);
    const py = y(v / bu.per).toFixed(1);
    path += i === 0 ? `M${px},${py}` : `H${px}V${py}`;
  });
  const last = s.points.at(-1);
  if (last) path += `H${x(tMaxMs / tu.per).toFixed(1)}`;
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    path,
    xTitle: axisTitle('simulated time', tu.unit),
    yTitle: bu.unit || '0 to 1',
  };
}

/** Time per phase summed over all commits, and the longest commit. */
export function commitSummary(commits: Commit[]): { phases: [Phase, number][]; longest: Commit | null } {
  let longest: Commit | null = null;
  for (const c of commits) if (!longest || c.endS - c.startS > longest.endS - longest.startS) longest = c;
  return { phases: PHASES.map((p) => [p, commits.reduce((s, c) => s + c.phasesMs[p], 0)]), longest };
}

/**
 * The time span a commit chart draws (ms): the whole run when every commit
 * is there, else from the first commit given (the engine keeps the last
 * 400) to the end, so no part of the axis is empty for want of data.
 */
export function commitWindow(commits: Commit[], total: number, tMaxMs: number): { all: boolean; window: [number, number] } {
  const all = commits.length >= total || commits.length === 0;
  return { all, window: all ? [0, tMaxMs] : [commits[0]!.startS * 1000, tMaxMs] };
}

export interface CommitLayout extends ChartFrame {
  bars: { key: string; phase: Phase; x: number; y: number; height: number; ms: number; commit: Commit }[];
  /** the time window drawn, in ms (all commits: from 0; a window of the last ones: from the first's start) */
  window: [number, number];
  xTitle: string;
  yTitle: string;
  barWidth: number;
}

/**
 * Each commit as a thin bar at its start time, its phases stacked bottom-up.
 * `window` is the time span drawn (ms): the whole run when every commit is
 * there, else from the first commit given (the engine keeps the last 400),
 * so no part of the axis is empty for want of data. One time unit per axis.
 */
export function layoutCommits(commits: Commit[], tMaxMs: number, width: number, height: number, fontPx = 16, window: [number, number] = [0, tMaxMs]): CommitLayout {
  const [w0, w1] = window;
  const tu = timeAxis(w1);
  const total = (c: Commit): number => PHASES.reduce((s, p) => s + c.phasesMs[p], 0);
  const du = pickTimeUnit(Math.max(1e-3, ...commits.map(total)));
  const y0 = scaleLinear()
    .domain([0, Math.max(1e-3, ...commits.map(total)) / du.per])
    .nice(4);
  const m = marginsFor(fontPx, y0.ticks(4).map(fmtNum));
  const x = scaleLinear()
    .domain([w0 / tu.per, Math.max(w0 + 1e-6, w1) / tu.per])
    .range([m.left, width - m.right]);
  const y = y0.range([height - m.bottom, m.top]);
  const bars: CommitLayout['bars'] = [];
  for (const c of commits) {
    let acc = 0;
    for (const p of PHASES) {
      const b = y(acc / du.per);
      acc += c.phasesMs[p];
      const t = y(acc / du.per);
      if (b - t > 0) bars.push({ key: `${c.transid}-${p}`, phase: p, x: x((c.startS * 1000) / tu.per), y: t, height: b - t, ms: c.phasesMs[p], commit: c });
    }
  }
  const n = Math.max(1, commits.length);
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    bars,
    window: [w0, w1],
    xTitle: axisTitle('simulated time the commit started', tu.unit),
    yTitle: axisTitle('duration', du.unit),
    barWidth: Math.max(1.5, Math.min(8, ((width - m.left - m.right) / n) * 0.6)),
  };
}

/** What the run's random work did (the engine's details), in words, the non-zero parts only. */
export function workDone(details: unknown, fsyncs: number | undefined): string[] {
  const d = (details ?? {}) as Record<string, unknown>;
  const all = (d.all ?? {}) as Record<string, unknown>;
  const n = (o: Record<string, unknown>, k: string): number => (typeof o[k] === 'number' ? (o[k] as number) : 0);
  const parts: [number, string][] = [
    [fsyncs ?? 0, 'fsyncs'],
    [n(all, 'log_commits'), 'log-tree commits'],
    [n(all, 'fsync_storms'), 'fsync storms'],
    [n(all, 'snapshots_taken') || n(d, 'snapshots'), 'snapshots'],
    [n(all, 'snapshots_deleted') + n(all, 'subvols_deleted'), 'subvolumes and snapshots deleted'],
    [n(all, 'roots_dropped'), 'trees dropped by the cleaner'],
    [n(all, 'sends'), 'send/receive round trips compared'],
    [n(all, 'remounts'), 'remounts'],
    [n(all, 'power_cuts'), `power cuts${n(all, 'power_cuts_replayed') ? ` (${fmtNum(n(all, 'power_cuts_replayed'))} replayed from the log)` : ''}`],
    [n(d, 'lseeks'), 'lseeks'],
    [n(d, 'reads'), 'reads'],
  ];
  return parts.filter(([v]) => v > 0).map(([v, what]) => `${fmtNum(v)} ${what}`);
}
