/*
 * noisy.ts - figures that are one run of a noisy process (a maximum
 * latency, a tail): which metrics are, and their spread over the seeds
 * run for the page. Such a figure is never a headline on its own: the page
 * draws its median and 5-95% band over the seeds with it (web/DESIGN.md §1),
 * so it never states a direction the model's own distribution contradicts.
 */
import type { ExperimentInfo, Variant } from '../engine/types';
import { publishedFor } from './provenance';
import { spreadOf, valuesOf, type SeedRuns, type Spread } from './spread';

/** Runs over the seeds before a median and band are drawn (fewer is no spread). */
export const SPREAD_MIN = 10;

/**
 * Is `metric` one run of a noisy process at this setting? Declared so
 * (views/registry.ts: a maximum or a tail), or a published row at exactly
 * this setting is marked noisy.
 */
export function isNoisy(info: ExperimentInfo, metric: string, params: Record<string, string>, declared: readonly string[] = []): boolean {
  if (declared.includes(metric)) return true;
  return info.variants.some((v) => publishedFor(info.published, metric, v, info.params, params).some((p) => p.differs.length === 0 && p.row.noisy));
}

/** A metric's spread for a kernel over the seeds run so far, or null when fewer than SPREAD_MIN ran. */
export function seedSpread(rows: readonly SeedRuns[], variant: Variant, metric: string): Spread | null {
  const v = valuesOf(rows, variant, metric);
  return v.length >= SPREAD_MIN ? spreadOf(v) : null;
}
