/*
 * fill.ts - the untar's fill sweep, pure: the same untar on the same
 * device with more and more of it already in chunks (fs_used_gib), both
 * kernels at each point. What an untar reserves does not depend on the
 * fill; the overcommit limit does (an eighth of the unallocated space), so
 * 5.10 loses only once the limit drops below what the untar would reserve
 * unhindered. The points, a row per point, where the regression starts,
 * and the chart's layout. No drawing.
 */
import { scaleLinear } from 'd3-scale';
import { axisTitle, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';

/** Shares of the file system in chunks before the untar, one point each. */
export const FILL_SHARES = [0, 0.25, 0.5, 0.625, 0.75, 0.8125, 0.875, 0.9];

/** The points (fs_used_gib values) for a file system of fsGib GiB: the
 * shares above and the page's own value, sorted, each below the size. */
export function fillPoints(fsGib: number, current?: number): string[] {
  if (!Number.isFinite(fsGib) || fsGib < 2) return [];
  const vals = FILL_SHARES.map((s) => Math.floor(fsGib * s));
  if (current !== undefined && Number.isFinite(current) && current >= 0 && current < fsGib) vals.push(Math.floor(current));
  return [...new Set(vals.filter((v) => v < fsGib))].sort((a, b) => a - b).map(String);
}

export interface FillRow {
  usedGib: number;
  /** the overcommit limit at the end of the run (what bytes_may_use may reach) */
  limitGib: number;
  /** peak reservations of the fix's run (5.10's peaks the same or at the limit) */
  peakGib: number;
  beforeS: number;
  afterS: number;
  cyclesBefore: number;
  cyclesAfter: number;
}

const num = (x: unknown): number => (typeof x === 'number' && Number.isFinite(x) ? x : NaN);

export function fillRow(used: string, before: Record<string, number>, after: Record<string, number>): FillRow {
  return {
    usedGib: Number(used),
    limitGib: num(before.overcommit_limit_gib),
    peakGib: num(after.peak_may_use_gib),
    beforeS: num(before.elapsed_s),
    afterS: num(after.elapsed_s),
    cyclesBefore: num(before.reclaim_cycles),
    cyclesAfter: num(after.reclaim_cycles),
  };
}

/** What the untar reserves when nothing stops it: the largest peak of the
 * rows whose limit was not reached (NaN when every row reached it). */
export function unhinderedGib(rows: FillRow[]): number {
  const free = rows.filter((r) => r.cyclesBefore === 0 && Number.isFinite(r.peakGib));
  return free.length ? Math.max(...free.map((r) => r.peakGib)) : NaN;
}

/** The first fill (sorted) at which 5.10 takes `margin` longer than the
 * fix, or undefined. */
export function biteAt(rows: FillRow[], margin = 0.05): number | undefined {
  return [...rows].sort((a, b) => a.usedGib - b.usedGib).find((r) => r.beforeS > (1 + margin) * r.afterS)?.usedGib;
}

export interface FillLayout extends ChartFrame {
  series: { variant: 'before' | 'after'; d: string; points: { x: number; y: number; v: number; row: FillRow }[] }[];
  /** where the limit falls to what the untar reserves unhindered (x), if the rows say */
  cross?: { x: number; used: number };
  xTitle: string;
  yTitle: string;
}

/** Untar time (linear, from 0) against fs_used_gib, one series per kernel;
 * a vertical mark where the limit meets the unhindered reservations
 * (interpolated between the rows on either side). */
export function layoutFillSweep(rows: FillRow[], width: number, height: number, fontPx = 16): FillLayout {
  const ok = rows.filter((r) => Number.isFinite(r.usedGib)).sort((a, b) => a.usedGib - b.usedGib);
  const xs = ok.map((r) => r.usedGib);
  const lo = xs.length ? Math.min(...xs) : 0;
  const hi = xs.length ? Math.max(...xs) : 1;
  const ys = ok.flatMap((r) => [r.beforeS, r.afterS]).filter((v) => Number.isFinite(v));
  const m = marginsFor(fontPx, ['100']);
  const x = scaleLinear()
    .domain([lo, hi > lo ? hi : lo + 1])
    .range([m.left, width - m.right]);
  const y = scaleLinear()
    .domain([0, (ys.length ? Math.max(...ys) : 1) * 1.1])
    .range([height - m.bottom, m.top])
    .nice();
  const series = (['before', 'after'] as const).map((variant) => {
    const points = ok
      .map((row) => ({ row, v: variant === 'before' ? row.beforeS : row.afterS }))
      .filter((p) => Number.isFinite(p.v))
      .map((p) => ({ x: x(p.row.usedGib), y: y(p.v), v: p.v, row: p.row }));
    const d = points.map((p, i) => `${i ? 'L' : 'M'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join('');
    return { variant, d, points };
  });
  let cross: FillLayout['cross'];
  const need = unhinderedGib(ok);
  for (let i = 1; Number.isFinite(need) && i < ok.length && !cross; i++) {
    const a = ok[i - 1]!;
    const b = ok[i]!;
    if (a.limitGib >= need && b.limitGib < need) {
      const f = (a.limitGib - need) / (a.limitGib - b.limitGib);
      const used = a.usedGib + f * (b.usedGib - a.usedGib);
      cross = { x: x(used), used };
    }
  }
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: scaleTicks(y, 'y', height - m.top - m.bottom, fontPx),
    series,
    cross,
    xTitle: axisTitle('space already in chunks (fs_used_gib)', 'GiB'),
    yTitle: axisTitle('untar time', 's'),
  };
}
