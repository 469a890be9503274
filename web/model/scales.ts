/*
 * scales.ts - one domain for a before/after pair. Two charts of the same
 * quantity are drawn on the same scale, or the eye compares bar heights
 * that mean different things (a 745 ms bar as tall as a 183 ms one).
 * Views compute the domain here, from every run they draw, and pass it to
 * each chart's layout.
 */
import { scaleLinear, scaleLog } from 'd3-scale';

/** [0, max] over every value of every run, rounded out to a nice number (d3's nice). */
export function pairDomain(values: Iterable<number>, minMax = 1): [number, number] {
  let hi = minMax;
  for (const v of values) if (Number.isFinite(v) && v > hi) hi = v;
  const d = scaleLinear().domain([0, hi]).nice().domain();
  return [0, d[1] ?? hi];
}

/** [lo, hi] for a log axis over every positive value of every run, out to whole powers of ten. */
export function pairLogDomain(values: Iterable<number>, floor = 1e-9): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values)
    if (Number.isFinite(v) && v > floor) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  if (!Number.isFinite(lo)) return [1, 10];
  const d0 = 10 ** Math.floor(Math.log10(lo));
  let d1 = 10 ** Math.ceil(Math.log10(hi));
  if (d1 <= d0) d1 = d0 * 10;
  return [d0, d1];
}

/** The largest value a set of series reaches (for a shared domain of step or line charts). */
export function maxOf(series: Iterable<Iterable<number>>): number {
  let m = -Infinity;
  for (const s of series) for (const v of s) if (Number.isFinite(v) && v > m) m = v;
  return m;
}

export { scaleLinear, scaleLog };
