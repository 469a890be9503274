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

/** Does a published row apply to this run (same variant, every row parameter equal)? */
export function rowMatches(row: PublishedRow, variant: Variant, params: ParamInfo[], values: Record<string, string>): boolean {
  if (row.variant !== variant) return false;
  const full = withDefaults(params, values);
  for (const [k, v] of Object.entries(row.params)) {
    const p = params.find((x) => x.name === k);
    const want = p ? valueText(p, v) : String(v);
    const have = full[k];
    if (have === undefined) return false;
    if (have !== want && !(Number.isFinite(Number(have)) && Number(have) === Number(want))) return false;
  }
  // Parameters the row does not name must be at their defaults (the row is
  // "published setup + these settings").
  const defaults = withDefaults(params, {});
  for (const p of params) {
    if (p.name in row.params) continue;
    if (full[p.name] !== defaults[p.name]) return false;
  }
  return true;
}

/** The published rows for one metric of one run. */
export function publishedFor(rows: PublishedRow[], metric: string, variant: Variant, params: ParamInfo[], values: Record<string, string>): PublishedRow[] {
  return rows.filter((r) => r.metric === metric && rowMatches(r, variant, params, values));
}

/** simulated / published - 1, the fidelity table's error. */
export const relError = (simulated: number, published: number): number => simulated / published - 1;
