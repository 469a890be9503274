/*
 * lessonClaims.ts - numbers in a lesson's text that state what the run
 * shows. A lesson writes them as `[[744 ms|before.account_avg_ms]]`: the
 * student reads "744 ms"; the lesson test (and the player, on the run it
 * drew) checks that the run's before.account_avg_ms, in the text's unit
 * and rounded as the text writes it, is 744. `@N` names an earlier step
 * (0-based, as checks' `of.step`): `[[2,048|after.commits@1]]`. On a
 * step over seeds a claim reads the median, or the statistic it names after
 * a `~` (as a check's `stat`): `[[0.48 s|before.receive_s~sd]]`.
 *
 * Rounding as displayed: the text's decimals ("0.74 s": to 0.01 s); a
 * whole number to its last non-zero digit ("17,000": to the thousand;
 * "16,946": to the one). Words before the number ("about", "some") are
 * prose; the number itself must be right.
 */
import type { Variant } from '../engine/types';
import { statMetrics, type SeedMetrics, type StepMetrics } from './lessonChecks';
import type { LessonStep } from './lessonFormat';
import type { SpreadStat } from './spread';

export interface Claim {
  /** as the student reads it: "744 ms" */
  text: string;
  variant: Variant;
  metric: string;
  /** the step whose run it is about (default: its own) */
  step?: number;
  /** a statistic of the step's runs over seeds (default: their median) */
  stat?: SpreadStat;
}

const CLAIM_RE = /\[\[([^|\]]+)\|([a-z]+)\.([a-z0-9_]+)(?:@(\d+))?(?:~(p5|p50|p95|mean|sd|min|max))?\]\]/g;

/** The claims in a text, in order. */
export function claimsIn(text: string): Claim[] {
  const out: Claim[] = [];
  for (const m of text.matchAll(CLAIM_RE))
    out.push({
      text: m[1]!.trim(),
      variant: m[2] as Variant,
      metric: m[3]!,
      ...(m[4] !== undefined ? { step: Number(m[4]) } : {}),
      ...(m[5] !== undefined ? { stat: m[5] as SpreadStat } : {}),
    });
  return out;
}

/** Every claim of a step: its setting, what to watch for and look at, and why. */
export const stepClaims = (s: LessonStep): Claim[] => [...claimsIn(s.text), ...claimsIn(s.watch ?? ''), ...claimsIn(s.look), ...claimsIn(s.why)];

/** A text with its claims written as the student reads them. */
export const withoutClaimMarks = (text: string): string => text.replace(CLAIM_RE, (_m, t: string) => t);

/** How many of a unit one unit of its family is, in the family's base (ns, bytes). */
const UNITS: Record<string, [string, number]> = {
  ns: ['time', 1],
  us: ['time', 1e3],
  µs: ['time', 1e3],
  ms: ['time', 1e6],
  s: ['time', 1e9],
  min: ['time', 60e9],
  B: ['bytes', 1],
  KiB: ['bytes', 1024],
  MiB: ['bytes', 2 ** 20],
  GiB: ['bytes', 2 ** 30],
};

/** "0.74 s" -> {value: 0.74, unit: 's', step: 0.01}; "17,000" -> step 1000; null when there is no number. */
export function parseShown(text: string): { value: number; unit: string; step: number } | null {
  const m = /(−|-)?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?\s*(µs|us|ms|ns|min|s|KiB|MiB|GiB|B|%)?(?![\w])/.exec(text);
  if (!m) return null;
  const whole = m[2]!.replace(/,/g, '');
  const dec = m[3] ?? '';
  const value = (m[1] ? -1 : 1) * Number(`${whole}${dec ? `.${dec}` : ''}`);
  let step = 10 ** -dec.length;
  if (!dec) {
    const zeros = /0*$/.exec(whole)![0].length;
    step = whole.length > 1 ? 10 ** Math.min(zeros, whole.length - 1) : 1;
  }
  return { value, unit: m[4] ?? '', step };
}

export interface ClaimOutcome {
  claim: Claim;
  ok: boolean;
  /** the run's value as the text would write it */
  shown: string;
  problem?: string;
}

/** Check a claim against the run's value of its metric (in `metricUnit`, the engine's). */
export function checkClaim(claim: Claim, value: number | undefined, metricUnit: string): ClaimOutcome {
  const bad = (problem: string): ClaimOutcome => ({ claim, ok: false, shown: '?', problem });
  if (value === undefined || !Number.isFinite(value)) return bad(`the run has no ${claim.variant}.${claim.metric}`);
  const p = parseShown(claim.text);
  if (!p) return bad(`"${claim.text}" has no number`);
  let v = value;
  const from = UNITS[metricUnit];
  const to = UNITS[p.unit];
  if (p.unit && p.unit !== metricUnit) {
    if (!from || !to || from[0] !== to[0]) return bad(`"${claim.text}" is in ${p.unit}, the metric in ${metricUnit || 'a count'}`);
    v = (value * from[1]) / to[1];
  } else if (!p.unit && from) return bad(`"${claim.text}" needs its unit (${metricUnit})`);
  const rounded = Math.round(v / p.step) * p.step;
  const digits = Math.max(0, -Math.floor(Math.log10(p.step) + 1e-9));
  const shown = `${rounded.toFixed(digits)}${p.unit ? ` ${p.unit}` : ''}`;
  return { claim, ok: Math.abs(rounded - p.value) < p.step / 2, shown };
}

/**
 * Check every claim of step `i` against the runs' metrics (all[k] is step
 * k's; seeds[k], each seed's of a step over seeds: what a claim with a
 * statistic reads), `unitOf` giving a metric's unit.
 */
export function checkStepClaims(step: LessonStep, i: number, all: StepMetrics[], unitOf: (metric: string) => string, seeds?: SeedMetrics): ClaimOutcome[] {
  return stepClaims(step).map((c) => {
    const k = c.step ?? i;
    if (c.stat === undefined) return checkClaim(c, all[k]?.[c.variant]?.[c.metric], unitOf(c.metric));
    const runs = seeds?.[k];
    if (!runs) return { claim: c, ok: false, shown: '?', problem: `~${c.stat} reads runs over seeds; step ${k + 1} ran one` };
    return checkClaim(c, statMetrics(runs, c.stat)[c.variant]?.[c.metric], unitOf(c.metric));
  });
}
