/*
 * fitCheck.ts - the device view's "every measured point" check, pure: read
 * a profile's measured fio points from the fio experiment's published rows
 * (one row per metric: IOPS, median and p99 clat; a fitted point carries a
 * tolerance, a point held out or outside the model carries -1 and says why
 * in its source), score a simulated run against each, count what is within
 * 15% as the C test does (engine/tests/test_fio_fidelity.c), and lay out
 * the error chart. No drawing, no engine.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { logTicks, marginsFor, thinTicks, type ChartFrame } from './axis';
import type { PublishedRow } from '../engine/types';
import { jobKey } from './fioJobs';
import { readWhy } from './fioDetails';

/** The bound the foundation issue sets on every fitted point and metric. */
export const WITHIN = 0.15;

export type PointStatus = 'fitted' | 'held out' | 'outside the model';

export interface MeasuredFioPoint {
  rw: string;
  bs: number;
  iodepth: number;
  numjobs: number;
  /** calibration file */
  source: string;
  status: PointStatus;
  /** why it was not fitted ('' if fitted) */
  why: string;
  iops: number;
  p50: number;
  p99: number;
}

/** The fio job a point was measured with, as the form's parameter text. */
export const jobParams = (p: { rw: string; bs: number; iodepth: number; numjobs: number }): Record<string, string> => ({
  rw: p.rw,
  bs: String(p.bs),
  iodepth: String(p.iodepth),
  numjobs: String(p.numjobs),
});


const METRIC_KEY: Record<string, 'iops' | 'p50' | 'p99'> = { iops: 'iops', clat_p50_us: 'p50', clat_p99_us: 'p99' };

/** Every measured point of `device`, in the rows' order (replicate runs of one job are separate points). */
export function measuredPoints(rows: PublishedRow[], device: string): MeasuredFioPoint[] {
  const byKey = new Map<string, MeasuredFioPoint>();
  for (const r of rows) {
    const p = r.params;
    const k = METRIC_KEY[r.metric];
    if (p.device !== device || !k) continue;
    const m = /^(.*?)(?: \[not fitted: (.*)\])?$/.exec(r.source);
    const source = m?.[1] ?? r.source;
    const why = m?.[2] ?? '';
    const shape = { rw: String(p.rw ?? ''), bs: Number(p.bs), iodepth: Number(p.iodepth ?? 1), numjobs: Number(p.numjobs ?? 1) };
    if (!shape.rw || ![shape.bs, shape.iodepth, shape.numjobs].every(Number.isFinite)) continue;
    const key = `${jobKey(shape)}|${source}`;
    let pt = byKey.get(key);
    if (!pt) {
      const status: PointStatus = r.tolerance >= 0 ? 'fitted' : readWhy(why).kind;
      pt = { ...shape, source, status, why, iops: NaN, p50: NaN, p99: NaN };
      byKey.set(key, pt);
    }
    pt[k] = r.value;
  }
  return [...byKey.values()];
}

/** The distinct jobs to run for a list of points (replicates share one run). */
export function distinctJobs(points: MeasuredFioPoint[]): MeasuredFioPoint[] {
  const seen = new Map<string, MeasuredFioPoint>();
  for (const p of points) if (!seen.has(jobKey(p))) seen.set(jobKey(p), p);
  return [...seen.values()];
}

export interface ScoredPoint extends MeasuredFioPoint {
  /** simulated / measured - 1; NaN where either is unknown */
  err: { iops: number; p50: number; p99: number };
  within: boolean;
}

const rel = (sim: number | undefined, meas: number): number =>
  sim !== undefined && Number.isFinite(sim) && Number.isFinite(meas) && meas > 0 ? sim / meas - 1 : NaN;

/** Score a point against the simulated run of its job (metrics of the fio experiment). */
export function scorePoint(p: MeasuredFioPoint, metrics: Record<string, number>): ScoredPoint {
  const err = { iops: rel(metrics.iops, p.iops), p50: rel(metrics.clat_p50_us, p.p50), p99: rel(metrics.clat_p99_us, p.p99) };
  // a metric the point lacks is not held against it; one the run lacks is
  const known = (['iops', 'p50', 'p99'] as const).filter((k) => Number.isFinite(p[k]));
  const within = known.length > 0 && known.every((k) => Math.abs(err[k]) <= WITHIN);
  return { ...p, err, within };
}

export interface FitSummary {
  status: PointStatus;
  points: number;
  within: number;
}

export function summarise(scored: ScoredPoint[]): FitSummary[] {
  return (['fitted', 'held out', 'outside the model'] as PointStatus[]).map((status) => {
    const s = scored.filter((p) => p.status === status);
    return { status, points: s.length, within: s.filter((p) => p.within).length };
  });
}

export interface ErrorDot {
  x: number;
  y: number;
  /** the error was beyond the axis and is drawn at its edge */
  clipped: boolean;
  point: ScoredPoint;
  err: number;
}

export interface ErrorLayout extends ChartFrame {
  dots: ErrorDot[];
  /** y of the +15% and -15% lines */
  band: [number, number];
  zero: number;
}

/** Largest error drawn; beyond it a dot sits on the edge, marked. */
export const ERR_CLIP = 0.6;

/**
 * One metric's errors: x the measured value (log), y simulated/measured - 1
 * (linear, clipped at +-60%), with the +-15% band.
 */
export function layoutErrors(points: ScoredPoint[], metric: 'iops' | 'p50' | 'p99', width: number, height: number, fontPx = 16): ErrorLayout {
  const margin = marginsFor(fontPx, ['+60%']);
  const vals = points.map((p) => p[metric]).filter((v) => Number.isFinite(v) && v > 0);
  const lo = vals.length ? Math.min(...vals) : 1;
  const hi = vals.length ? Math.max(...vals) : 10;
  const x = scaleLog()
    .domain([lo / 1.3, Math.max(hi * 1.3, lo * 2)])
    .range([margin.left, width - margin.right]);
  const y = scaleLinear().domain([-ERR_CLIP, ERR_CLIP]).range([height - margin.bottom, margin.top]);
  const dots: ErrorDot[] = [];
  for (const p of points) {
    const e = p.err[metric];
    if (!Number.isFinite(e) || !(p[metric] > 0)) continue;
    const c = Math.max(-ERR_CLIP, Math.min(ERR_CLIP, e));
    dots.push({ x: x(p[metric]), y: y(c), clipped: c !== e, point: p, err: e });
  }
  // powers of ten only, thinned: the unit is in the axis title
  const xTicks = logTicks(x, 'x', width - margin.left - margin.right, fontPx).filter((t) => /^1(0|,0)*$/.test(t.label));
  return {
    width,
    height,
    margin,
    fontPx,
    xTicks,
    yTicks: thinTicks(
      [-0.6, -0.3, -0.15, 0, 0.15, 0.3, 0.6].map((v) => ({ pos: y(v), label: `${v > 0 ? '+' : v < 0 ? '−' : ''}${Math.abs(Math.round(v * 100))}%` })),
      'y',
      fontPx,
    ),
    dots,
    band: [y(WITHIN), y(-WITHIN)],
    zero: y(0),
  };
}

export interface ReplicateAgreement {
  /** jobs measured twice (a replicate run) */
  pairs: number;
  /** of those, the second run within WITHIN of the first on every metric both have */
  within: number;
}

/**
 * How well the measured drive reproduces itself: for each job measured in
 * two runs, compare the second run with the first as the model is compared
 * with a run. A model should not be asked to come closer to one run than
 * the drive's own second run does: this is the yardstick the 15% target
 * sits beside.
 */
export function replicateAgreement(points: MeasuredFioPoint[]): ReplicateAgreement {
  const byJob = new Map<string, MeasuredFioPoint[]>();
  for (const p of points) byJob.set(jobKey(p), [...(byJob.get(jobKey(p)) ?? []), p]);
  let pairs = 0;
  let within = 0;
  for (const runs of byJob.values()) {
    const [a, b] = runs; // a third run, if any, is left out (as in the C test)
    if (!a || !b) continue;
    pairs++;
    if (scorePoint(a, { iops: b.iops, clat_p50_us: b.p50, clat_p99_us: b.p99 }).within) within++;
  }
  return { pairs, within };
}
