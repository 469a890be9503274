/*
 * lessonChecks.ts - evaluate a lesson step's checks and judge a prediction
 * against run metrics. Pure: the lesson player and the headless lesson test
 * call the same functions, so "the lesson passes" means the same thing in
 * the browser and in CI.
 */
import type { Variant } from '../engine/types';
import { fmtNum } from './format';
import type { Check, LessonStep, Prediction } from './lessonFormat';
import { spreadOf, type SpreadStat } from './spread';

/** Metrics of one step's runs, by variant. */
export type StepMetrics = Partial<Record<Variant, Record<string, number>>>;

export interface CheckOutcome {
  check: Check;
  pass: boolean;
  /** The value compared (a ratio for ratio_* ops), or NaN if missing. */
  actual: number;
  /** Why it failed, when it could not be evaluated. */
  problem?: string;
  /** "1.23 < 20" style summary for people. */
  detail: string;
}

/** Numbers as the panels print them (the one formatter): 16,414, not 16410. */
const show = fmtNum;

/** Each seed's metrics of a step that ran several seeds, by step (undefined: one run). */
export type SeedMetrics = (StepMetrics[] | undefined)[];

/** The median of each variant's metrics over the seeds: what the step's
 * checks and numbers read by default. */
export function statMetrics(runs: StepMetrics[], stat: SpreadStat = 'p50'): StepMetrics {
  const out: StepMetrics = {};
  for (const r of runs)
    for (const [v, ms] of Object.entries(r))
      for (const m of Object.keys(ms ?? {})) {
        const o = (out[v as Variant] ??= {});
        if (m in o) continue;
        const s = spreadOf(runs.map((x) => x[v as Variant]?.[m] ?? NaN));
        if (s) o[m] = s[stat];
      }
  return out;
}

/**
 * Evaluate one check. `stepIndex` is the index of the step it belongs to and
 * `all[i]` the metrics of step i (earlier steps may be referenced by ratio
 * checks); `seeds[i]`, each seed's metrics of a step that ran several
 * (atLeast: counted over them; stat: that statistic of them).
 */
export function evaluateCheck(check: Check, stepIndex: number, all: StepMetrics[], seeds?: SeedMetrics): CheckOutcome {
  if (check.atLeast === undefined && check.stat === undefined) return evaluateOne(check, stepIndex, all);
  const runs = seeds?.[stepIndex];
  if (!runs || runs.length === 0)
    return { check, pass: false, actual: NaN, problem: 'this check reads runs over seeds; none were run', detail: 'no runs over seeds' };
  const at = (m: StepMetrics): StepMetrics[] => all.map((x, k) => (k === stepIndex ? m : x));
  if (check.stat !== undefined) {
    const o = evaluateOne(check, stepIndex, at(statMetrics(runs, check.stat)));
    return { ...o, detail: `${check.stat} of ${runs.length} runs: ${o.detail}` };
  }
  const held = runs.filter((r) => evaluateOne(check, stepIndex, at(r)).pass).length;
  const need = check.atLeast ?? runs.length;
  return { check, pass: held >= need, actual: held, detail: `holds in ${held} of ${runs.length} runs (at least ${need} asked)` };
}

function evaluateOne(check: Check, stepIndex: number, all: StepMetrics[]): CheckOutcome {
  const missing = (problem: string): CheckOutcome => ({ check, pass: false, actual: NaN, problem, detail: problem });
  const get = (step: number, variant: Variant, metric: string): number | undefined => all[step]?.[variant]?.[metric];
  const x = get(stepIndex, check.variant, check.metric);
  if (x === undefined || !Number.isFinite(x)) return missing(`no value for ${check.variant}.${check.metric}`);
  let actual = x;
  let lhs = `${check.metric}=${show(x)}`;
  if (check.op.startsWith('ratio_')) {
    const ref = check.of ?? {};
    const rs = ref.step ?? stepIndex;
    const rv = ref.variant ?? check.variant;
    const rm = ref.metric ?? check.metric;
    const y = get(rs, rv, rm);
    if (y === undefined || !Number.isFinite(y)) return missing(`no value for step ${rs} ${rv}.${rm}`);
    if (y === 0) return missing(`${rv}.${rm} is 0; the ratio is undefined`);
    actual = x / y;
    lhs = `${show(x)} / ${show(y)} = ${show(actual)}`;
  }
  const v = check.value ?? NaN;
  const [lo, hi] = check.range ?? [NaN, NaN];
  let pass: boolean;
  let rhs: string;
  switch (check.op) {
    case 'lt':
    case 'ratio_lt':
      pass = actual < v;
      rhs = `< ${show(v)}`;
      break;
    case 'gt':
    case 'ratio_gt':
      pass = actual > v;
      rhs = `> ${show(v)}`;
      break;
    case 'between':
    case 'ratio_between':
      pass = actual >= lo && actual <= hi;
      rhs = `in [${show(lo)}, ${show(hi)}]`;
      break;
  }
  return { check, pass, actual, detail: `${lhs} ${rhs}` };
}

/** Evaluate every check of step `stepIndex`. */
export function evaluateStep(step: LessonStep, stepIndex: number, all: StepMetrics[], seeds?: SeedMetrics): CheckOutcome[] {
  return step.checks.map((c) => evaluateCheck(c, stepIndex, all, seeds));
}

export type Verdict = 'close' | 'off';

export interface PredictionOutcome {
  verdict: Verdict;
  guess: number;
  actual: number;
  /** actual / guess */
  ratio: number;
  message: string;
}

/**
 * A typed guess as a number, the way people write numbers: "150,000",
 * "150 000", "150_000", "150k", "1.5M", "2e5", and the step's unit may
 * follow ("12 ms", "120k IO/s"). Returns null unless the whole text reads
 * as a finite positive number: "1,5" or "12 apples" is refused, not
 * guessed at.
 */
export function parseGuess(text: string, unit?: string): number | null {
  let t = text.trim();
  if (unit && t.toLowerCase().endsWith(unit.toLowerCase())) t = t.slice(0, t.length - unit.length).trim();
  let scale = 1;
  if (/\d\s*[kK]$/.test(t)) scale = 1e3;
  else if (/\d\s*M$/.test(t)) scale = 1e6;
  if (scale !== 1) t = t.slice(0, -1).trim();
  if (/[,_\s\u00a0\u202f]/.test(t)) {
    // separators only between groups of three digits
    if (!/^\d{1,3}([,_\s\u00a0\u202f]\d{3})+(\.\d+)?$/.test(t)) return null;
    t = t.replace(/[,_\s\u00a0\u202f]/g, '');
  }
  if (!/^\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t)) return null;
  const v = Number(t) * scale;
  return Number.isFinite(v) && v > 0 ? v : null;
}

/**
 * Judge a student's guess: "close" when the simulated value lies within
 * `factor` times the guess either way (and "right" when the two read the
 * same as displayed). Returns null if the guess is not a
 * positive number or the metric is missing.
 */
/** The metrics a step's prediction reads: the step's own (a step over seeds: their median), or
 * the statistic of its runs the prediction names (`stat`). */
export function predictionMetrics(p: Prediction, stepIndex: number, all: StepMetrics[], seeds?: SeedMetrics): StepMetrics | undefined {
  if (p.stat === undefined) return all[stepIndex];
  const runs = seeds?.[stepIndex];
  return runs ? statMetrics(runs, p.stat) : undefined;
}

export function judgePrediction(p: Prediction, guess: number, metrics: StepMetrics): PredictionOutcome | null {
  const actual = metrics[p.variant]?.[p.metric];
  if (actual === undefined || !Number.isFinite(actual) || !Number.isFinite(guess) || guess <= 0) return null;
  const ratio = actual / guess;
  const close = ratio <= p.factor && ratio >= 1 / p.factor;
  const unit = p.unit ? ` ${p.unit}` : '';
  const how = ratio >= 1 ? `${show(ratio)}× higher than` : `${show(1 / ratio)}× lower than`;
  return {
    verdict: close ? 'close' : 'off',
    guess,
    actual,
    ratio,
    message:
      show(actual) === show(guess)
        ? `Right: the simulation gives ${show(actual)}${unit}, as you said.`
        : close
          ? `Close: the simulation gives ${show(actual)}${unit}, within ${p.factor}× of your ${show(guess)}${unit}.`
          : `The simulation gives ${show(actual)}${unit}, ${how} your ${show(guess)}${unit}.`,
  };
}
