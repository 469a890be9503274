/*
 * params.ts - the parameter form's model: default text for each parameter,
 * and validation of what the user typed against the experiment's declared
 * type and range, with a message a student can act on. The grammar is the
 * engine's (parseParam), so the form calls a value valid exactly when the
 * engine (and the CLI) accepts it; the engine still validates at its
 * boundary.
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

/**
 * What the engine makes of a parameter's text: its value, or why it is
 * refused ('syntax': not of the type's grammar, LAB_EINVAL; 'range': well
 * formed but outside the declared range, LAB_ERANGE).
 */
export type ParamCheck = { ok: true; value: number | string } | { ok: false; kind: 'syntax' | 'range'; message: string };

/* The grammar of engine/src/exp/exp.c (parse_one), over the ranges `list`
 * declares; a Vitest test runs one table of values through both. */
const INT = /^([+-]?)(\d+)([KkMmGg]?)$/;
const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const SHIFT: Record<string, bigint> = { '': 0n, k: 10n, m: 20n, g: 30n };
const INF = ['inf', 'infinite', 'infinity'];
const TRUE = ['true', '1', 'on'];
const FALSE = ['false', '0', 'off'];

/** Parse `text` as the engine does: no spaces, K/M/G = x1024^n on integers, exact ranges. */
export function parseParam(p: ParamInfo, text: string): ParamCheck {
  const unit = p.unit ? ` ${p.unit}` : '';
  const syntax = (message: string): ParamCheck => ({ ok: false, kind: 'syntax', message });
  const range = (message: string): ParamCheck => ({ ok: false, kind: 'range', message });
  if (text === '') return syntax(`${p.name} needs a value.`);
  if (text !== text.trim() && parseParam(p, text.trim()).ok) return syntax(`${p.name} has spaces around it: remove them.`);
  const outside = (below: boolean): ParamCheck =>
    range(below ? `${p.name} must be ${p.min_exclusive ? 'greater than' : 'at least'} ${fmt(p.min ?? 0)}${unit}.` : `${p.name} must be at most ${fmt(p.max ?? 0)}${unit}.`);
  switch (p.type) {
    case 'int':
    case 'int-or-inf': {
      if (p.type === 'int-or-inf' && INF.includes(text)) return { ok: true, value: Infinity };
      const m = INT.exec(text);
      if (!m) return syntax(`${p.name} must be a whole number${p.type === 'int-or-inf' ? ' or "inf"' : ''} (K, M, G: ×1024ⁿ).`);
      const mag = BigInt(m[2] ?? '0') << (SHIFT[(m[3] ?? '').toLowerCase()] ?? 0n);
      const x = m[1] === '-' ? -mag : mag;
      if (p.min !== undefined && x < BigInt(p.min)) return outside(true);
      if (p.max !== undefined && x > BigInt(p.max)) return outside(false);
      if (p.multiple_of && x % BigInt(p.multiple_of) !== 0n) return range(`${p.name} must be a multiple of ${fmt(p.multiple_of)}${unit}.`);
      return { ok: true, value: Number(x) };
    }
    case 'float': {
      if (!FLOAT.test(text)) return syntax(`${p.name} must be a number.`);
      const x = Number(text); // the nearest double, as strtod; overflow is ±Infinity
      if (p.min !== undefined && (p.min_exclusive ? x <= p.min : x < p.min)) return outside(true);
      if (p.max !== undefined && x > p.max) return outside(false);
      return { ok: true, value: x + 0 };
    }
    case 'enum':
      return p.values && p.values.includes(text) ? { ok: true, value: text } : syntax(`${p.name} must be one of: ${(p.values ?? []).join(', ')}.`);
    case 'bool':
      if (TRUE.includes(text)) return { ok: true, value: 1 };
      if (FALSE.includes(text)) return { ok: true, value: 0 };
      return syntax(`${p.name} must be true or false.`);
  }
}

/** Why `text` is not a valid value of `p`, or null if it is. */
export function validateParam(p: ParamInfo, text: string): string | null {
  const r = parseParam(p, text);
  return r.ok ? null : r.message;
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
