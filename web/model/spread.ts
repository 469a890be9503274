/*
 * spread.ts - a metric over many seeds, as `lab run --seeds N` reports it
 * (engine/src/exp/seeds.c): n, mean, sample sd, min, max and the 5th, 50th
 * and 95th percentiles by linear interpolation between order statistics
 * (Hyndman & Fan type 7, numpy's default). The same definition here and in
 * the engine, so a page's "Run ×20" and the CLI agree on the same runs.
 */
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';

export interface Spread {
  n: number;
  mean: number;
  sd: number;
  p5: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

export type SpreadStat = keyof Omit<Spread, 'n'>;
export const SPREAD_STATS: readonly SpreadStat[] = ['mean', 'sd', 'p5', 'p50', 'p95', 'min', 'max'];

/** The q-quantile (0..1) of sorted values, type 7. */
export function quantileSorted(v: readonly number[], q: number): number {
  const n = v.length;
  if (n === 0) return NaN;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  if (lo >= n - 1) return v[n - 1]!;
  return v[lo]! + (h - lo) * (v[lo + 1]! - v[lo]!);
}

/** The spread of the finite values; null when there are none. */
export function spreadOf(values: readonly number[]): Spread | null {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  const n = v.length;
  if (n === 0) return null;
  // the engine's summation order: ascending
  let sum = 0;
  for (const x of v) sum += x;
  const mean = sum / n;
  let ss = 0;
  for (const x of v) ss += (x - mean) * (x - mean);
  return {
    n,
    mean,
    sd: n > 1 ? Math.sqrt(ss / (n - 1)) : 0,
    p5: quantileSorted(v, 0.05),
    p50: quantileSorted(v, 0.5),
    p95: quantileSorted(v, 0.95),
    min: v[0]!,
    max: v[n - 1]!,
  };
}

/** One seed's runs, by variant. */
export interface SeedRuns {
  seed: number;
  runs: Partial<Record<Variant, RunResult>>;
}

/** Each variant's values of one metric over the seeds, in seed order. */
export function valuesOf(rows: readonly SeedRuns[], variant: Variant, metric: string): number[] {
  return rows.map((r) => r.runs[variant]?.metrics[metric]).filter((x): x is number => x !== undefined && Number.isFinite(x));
}

/** Does a metric take more than one value over the seeds, in any variant? */
export function varies(rows: readonly SeedRuns[], variants: readonly Variant[], metric: string): boolean {
  return variants.some((v) => new Set(valuesOf(rows, v, metric)).size > 1);
}

const csvCell = (v: string | number | undefined): string => {
  if (v === undefined) return '';
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : v;
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** One row per metric and kernel: the spread, then the value of each seed. */
export function seedsCsv(info: ExperimentInfo, rows: readonly SeedRuns[], label: (metric: string) => string): string {
  const vs = info.variants.filter((v) => rows.some((r) => r.runs[v]));
  const head = ['metric', 'label', 'unit', 'variant', 'n', 'mean', 'sd', 'p5', 'p50', 'p95', 'min', 'max', ...rows.map((r) => `seed ${r.seed}`)];
  const out: (string | number | undefined)[][] = [head];
  for (const m of info.metricInfo)
    for (const v of vs) {
      const s = spreadOf(valuesOf(rows, v, m.name));
      out.push([m.name, label(m.name), m.unit, v, s?.n, s?.mean, s?.sd, s?.p5, s?.p50, s?.p95, s?.min, s?.max, ...rows.map((r) => r.runs[v]?.metrics[m.name])]);
    }
  return out.map((r) => r.map(csvCell).join(',')).join('\n') + '\n';
}

/** The runs over the seeds in the shape of `lab run --seeds N --json`, plus each seed's values. */
export function seedsJson(info: ExperimentInfo, params: Record<string, string>, variation: string, rows: readonly SeedRuns[]): string {
  const vs = info.variants.filter((v) => rows.some((r) => r.runs[v]));
  const out = {
    experiment: info.name,
    patch: info.seed,
    params,
    variation,
    seed: rows[0]?.seed ?? 1,
    seeds: rows.length,
    runs: Object.fromEntries(
      vs.map((v) => {
        const spread = Object.fromEntries(info.metricInfo.map((m) => [m.name, spreadOf(valuesOf(rows, v, m.name))]));
        return [
          v,
          {
            metrics: Object.fromEntries(info.metricInfo.map((m) => [m.name, spread[m.name]?.p50 ?? null])),
            spread,
            values: Object.fromEntries(info.metricInfo.map((m) => [m.name, rows.map((r) => r.runs[v]?.metrics[m.name] ?? null)])),
          },
        ];
      }),
    ),
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
