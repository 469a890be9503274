/*
 * params.ts - the parameter form's model: default text for each parameter,
 * and validation of what the user typed against the experiment's declared
 * type and range, with a message a student can act on. The engine validates
 * again at its boundary; this only gives earlier, clearer feedback.
 */
import type { ExperimentInfo, ParamInfo, ParamValue } from '../engine/types';

/** The text form of a parameter value ("4096", "inf", "nvme-dc", "true"). */
export function valueText(p: ParamInfo, v: ParamValue): string {
  if (p.type === 'int-or-inf' && typeof v === 'number' && !Number.isFinite(v)) return 'inf';
  if (p.type === 'bool') return v === true || v === 1 || v === 'true' ? 'true' : 'false';
  return String(v);
}

/** Default text for every parameter. */
export function defaultParams(params: ParamInfo[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of params) out[p.name] = valueText(p, p.default);
  return out;
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(6))));

/** Why `text` is not a valid value of `p`, or null if it is. */
export function validateParam(p: ParamInfo, text: string): string | null {
  const t = text.trim();
  if (t === '') return `${p.name} needs a value.`;
  const range = (x: number): string | null => {
    if (p.min !== undefined && x < p.min) return `${p.name} must be at least ${fmt(p.min)}${p.unit ? ` ${p.unit}` : ''}.`;
    if (p.max !== undefined && x > p.max) return `${p.name} must be at most ${fmt(p.max)}${p.unit ? ` ${p.unit}` : ''}.`;
    return null;
  };
  switch (p.type) {
    case 'int': {
      if (!/^-?\d+$/.test(t)) return `${p.name} must be a whole number.`;
      const x = Number(t);
      const r = range(x);
      if (r || !p.multiple_of || x % p.multiple_of === 0) return r;
      return `${p.name} must be a multiple of ${fmt(p.multiple_of)}${p.unit ? ` ${p.unit}` : ''}.`;
    }
    case 'int-or-inf':
      if (t === 'inf') return null;
      if (!/^-?\d+$/.test(t)) return `${p.name} must be a whole number or "inf".`;
      return range(Number(t));
    case 'float': {
      const x = Number(t);
      if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t) || !Number.isFinite(x)) return `${p.name} must be a number.`;
      if (p.min_exclusive && p.min !== undefined && x <= p.min) return `${p.name} must be greater than ${fmt(p.min)}${p.unit ? ` ${p.unit}` : ''}.`;
      return range(x);
    }
    case 'enum':
      return p.values && p.values.includes(t) ? null : `${p.name} must be one of: ${(p.values ?? []).join(', ')}.`;
    case 'bool':
      return ['true', 'false', '0', '1'].includes(t) ? null : `${p.name} must be true or false.`;
  }
}

/** Every invalid field's message, by parameter name (empty when all are valid). */
export function validateAll(params: ParamInfo[], values: Record<string, string>): Record<string, string> {
  const errs: Record<string, string> = {};
  for (const p of params) {
    const e = validateParam(p, values[p.name] ?? valueText(p, p.default));
    if (e) errs[p.name] = e;
  }
  for (const k of Object.keys(values)) if (!params.some((p) => p.name === k)) errs[k] = `There is no parameter called "${k}".`;
  return errs;
}

/** Defaults overlaid with the given values (unknown names kept, so validation can flag them). */
export function withDefaults(params: ParamInfo[], values: Record<string, string>): Record<string, string> {
  return { ...defaultParams(params), ...values };
}

/** Only the values that differ from the defaults (for short URLs). */
export function nonDefault(params: ParamInfo[], values: Record<string, string>): Record<string, string> {
  const d = defaultParams(params);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(values)) if (d[k] !== v) out[k] = v;
  return out;
}

/**
 * The parameter set `dir` steps (+1 next, -1 previous) from `values` in a
 * list of sets (each naming some parameters): the neighbour of the first set
 * `values` matches, or, when none matches, the first set (next) or the last
 * (previous). Null at either end: stepping stops there rather than wrap.
 */
export function stepParams(sets: Record<string, string>[], values: Record<string, string>, dir: 1 | -1): Record<string, string> | null {
  if (sets.length === 0) return null;
  const at = sets.findIndex((s) => Object.entries(s).every(([k, v]) => values[k] === v));
  if (at < 0) return (dir > 0 ? sets[0] : sets[sets.length - 1]) ?? null;
  return sets[at + dir] ?? null;
}

/**
 * The distinct setups of an experiment's published rows, as parameter text,
 * in the rows' order (a row at the defaults names no parameter and adds
 * none): what an instructor steps through on the experiment's page.
 */
export function publishedSetups(info: ExperimentInfo): Record<string, string>[] {
  const seen = new Map<string, Record<string, string>>();
  for (const r of info.published) {
    const set: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.params)) {
      const p = info.params.find((x) => x.name === k);
      set[k] = p ? valueText(p, v) : String(v);
    }
    const key = JSON.stringify(Object.entries(set).sort());
    if (Object.keys(set).length > 0 && !seen.has(key)) seen.set(key, set);
  }
  return [...seen.values()];
}
