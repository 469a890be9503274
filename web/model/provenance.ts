/*
 * provenance.ts - where each number in a metrics table comes from. A value
 * is "simulated" (computed by this run), "fitted" (a calibrated constant of
 * the model, named by the experiment's details) or "published" (a figure
 * from a patch's commit message or a measurement, with its source). A
 * published row is shown beside the simulated value when the run's
 * parameters match the row's.
 */
import type { ParamInfo, PublishedRow, Variant } from '../engine/types';
import { valueText, withDefaults } from './params';

export type Provenance = 'simulated' | 'fitted' | 'published' | 'measured';

/**
 * How a published row relates to this run: null if the variant or any
 * parameter the row names differs; otherwise the parameters the row does not
 * name but the run changed from their defaults ([] = an exact match: the
 * row's setup is "defaults + its own settings").
 */
export function rowRelation(row: PublishedRow, variant: Variant, params: ParamInfo[], values: Record<string, string>): string[] | null {
  if (row.variant !== variant) return null;
  const full = withDefaults(params, values);
  for (const [k, v] of Object.entries(row.params)) {
    const p = params.find((x) => x.name === k);
    const want = p ? valueText(p, v) : String(v);
    const have = full[k];
    if (have === undefined) return null;
    if (have !== want && !(Number.isFinite(Number(have)) && Number(have) === Number(want))) return null;
  }
  const defaults = withDefaults(params, {});
  return params.filter((p) => !(p.name in row.params) && full[p.name] !== defaults[p.name]).map((p) => `${p.name}=${defaults[p.name]}`);
}

/** Does a published row apply exactly to this run? */
export function rowMatches(row: PublishedRow, variant: Variant, params: ParamInfo[], values: Record<string, string>): boolean {
  return rowRelation(row, variant, params, values)?.length === 0;
}

export interface PublishedMatch {
  row: PublishedRow;
  /** Settings of the published setup that this run changed ("threshold=4096"); [] = exact. */
  differs: string[];
}

/**
 * The published rows for one metric of one run: exact matches, and rows
 * whose named parameters match but whose setup differs elsewhere (shown
 * apart, without an error figure, so nothing is compared unlike with unlike).
 */
export function publishedFor(rows: PublishedRow[], metric: string, variant: Variant, params: ParamInfo[], values: Record<string, string>): PublishedMatch[] {
  const out: PublishedMatch[] = [];
  for (const row of rows) {
    if (row.metric !== metric) continue;
    const differs = rowRelation(row, variant, params, values);
    if (differs) out.push({ row, differs });
  }
  return out.sort((a, b) => a.differs.length - b.differs.length);
}

/** simulated / published - 1, the fidelity table's error. */
export const relError = (simulated: number, published: number): number => simulated / published - 1;
