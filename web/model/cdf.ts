/*
 * cdf.ts - layout of a latency CDF chart: log-scaled latency on x, and on y
 * the percentile on a "nines" scale (y = -log10(1 - p)), so the median, p90,
 * p99 and p99.9 sit at equal steps and the tail a device is judged by is not
 * squashed into the top pixel row. Pure: D3 computes scales and the path,
 * the component only draws the result.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { line } from 'd3-shape';
import { axisTitle, logTicks, marginsFor } from './axis';
import { fmtNum, fmtUs } from './format';

/** A point of a latency distribution: fraction p in (0,1) completes within us microseconds. */
export interface Quantile {
  p: number;
  us: number;
}

export interface MeasuredMarker extends Quantile {
  label: string; // "p99"
}

export interface CdfSeries {
  id: string;
  label: string;
  points: Quantile[];
}

export interface CdfLayoutInput {
  width: number;
  height: number;
  series: CdfSeries[];
  measured: MeasuredMarker[];
  /** the same job's percentiles from its other measured runs, drawn hollow */
  others?: MeasuredMarker[];
  /** Highest percentile shown (0.999 by default; 0.9999 if data reach it). */
  maxP?: number;
  /** chart font size (px) the margins and ticks are laid out for */
  fontPx?: number;
}

export interface Tick {
  pos: number;
  label: string;
}

/** A marker where it is drawn, with the side its label goes to. */
export type PlacedMarker = MeasuredMarker & { x: number; y: number; side: 'left' | 'right' };

export interface CdfLayout {
  width: number;
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
  xTicks: Tick[];
  yTicks: Tick[];
  paths: { id: string; label: string; d: string }[];
  markers: PlacedMarker[];
  otherMarkers: PlacedMarker[];
  /** x domain in us, for captions and tests. */
  domain: [number, number];
  fontPx: number;
  /** the x axis's title with the one unit its ticks are in */
  xTitle: string;
}

/** The nines transform: 0 -> 0, 0.9 -> 1, 0.99 -> 2, 0.999 -> 3. */
export const nines = (p: number): number => (p <= 0 ? 0 : -Math.log10(1 - Math.min(p, 1 - 1e-9)));

const Y_TICKS: [number, string][] = [
  [0, 'p0'],
  [0.5, 'p50'],
  [0.9, 'p90'],
  [0.99, 'p99'],
  [0.999, 'p99.9'],
  [0.9999, 'p99.99'],
];

/** A latency for a marker's label: "9.8 µs", "1.7 ms" (the one formatter). */
export const formatUs = fmtUs;

/**
 * Compute the chart layout. The x domain is padded out to whole powers of ten
 * around every simulated and measured latency; points outside (0, maxP] are
 * dropped from the paths (p = 1 has no place on a nines scale).
 */
export function layoutCdf(input: CdfLayoutInput): CdfLayout {
  const fontPx = input.fontPx ?? 16;
  const margin = { ...marginsFor(fontPx, ['p99.9']), top: Math.round(fontPx * 1.8), right: Math.round(fontPx * 2.6) };
  const maxP = input.maxP ?? 0.999;
  const others = input.others ?? [];
  const all = [...input.series.flatMap((s) => s.points), ...input.measured, ...others].map((q) => q.us).filter((u) => u > 0 && Number.isFinite(u));
  const lo = all.length ? Math.min(...all) : 1;
  const hi = all.length ? Math.max(...all) : 1000;
  const d0 = 10 ** Math.floor(Math.log10(lo));
  let d1 = 10 ** Math.ceil(Math.log10(hi));
  if (d1 <= d0) d1 = d0 * 10;
  const x = scaleLog().domain([d0, d1]).range([margin.left, input.width - margin.right]);
  const y = scaleLinear().domain([0, nines(maxP)]).range([input.height - margin.bottom, margin.top]);
  // one unit on the axis: µs up to 10 ms, ms beyond (ticks at 1, 2, 5 x 10^k when they fit)
  const inMs = d1 > 1e4;
  const xTicks = logTicks(x, 'x', input.width - margin.left - margin.right, fontPx, (v) => fmtNum(inMs ? v / 1000 : v));
  const yTicks = Y_TICKS.filter(([p]) => p <= maxP + 1e-12).map(([p, label]) => ({ pos: y(nines(p)), label }));
  const gen = line<Quantile>()
    .x((q) => x(q.us))
    .y((q) => y(nines(q.p)));
  const paths = input.series.map((s) => {
    const pts = s.points.filter((q) => q.p > 0 && q.p <= maxP + 1e-12 && q.us > 0).sort((a, b) => a.p - b.p);
    return { id: s.id, label: s.label, d: gen(pts) ?? '' };
  });
  const inRange = (m: MeasuredMarker) => m.p > 0 && m.p <= maxP + 1e-12 && m.us > 0;
  const shown = input.measured.filter(inRange);
  const shownOthers = others.filter(inRange);
  // Labels go right of the first run's markers and left of the other runs'
  // unless, at the same percentile, the other run lies left of the first:
  // then they swap, so two labels on one row never run into each other.
  const place = (ms: MeasuredMarker[], peers: MeasuredMarker[], own: 'left' | 'right'): PlacedMarker[] =>
    ms.map((m) => {
      const peer = peers.find((q) => Math.abs(q.p - m.p) < 1e-9);
      const away: 'left' | 'right' = own === 'right' ? 'left' : 'right';
      const swap = peer !== undefined && (own === 'right' ? m.us < peer.us : m.us > peer.us);
      return { ...m, x: x(m.us), y: y(nines(m.p)), side: swap ? away : own };
    });
  return {
    width: input.width,
    height: input.height,
    margin,
    xTicks,
    yTicks,
    paths,
    markers: place(shown, shownOthers, 'right'),
    otherMarkers: place(shownOthers, shown, 'left'),
    domain: [d0, d1],
    fontPx,
    xTitle: axisTitle('completion latency, log scale', inMs ? 'ms' : 'µs'),
  };
}

/**
 * Empirical quantiles of raw samples (us) at the given probabilities, by the
 * nearest-rank method, for tests and fixtures.
 */
export function quantilesOf(samples: number[], ps: number[]): Quantile[] {
  const s = [...samples].sort((a, b) => a - b);
  return ps.map((p) => ({ p, us: s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? NaN }));
}
