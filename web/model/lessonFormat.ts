/*
 * lessonFormat.ts - the lesson format (lessons/*.json) and its validator.
 *
 * A lesson is data (cf. Learn Git Branching's levels): steps, each with the
 * scenario it runs, the setting and what to watch for (shown before the
 * run, with no figure from it), an optional prediction the student makes
 * before running, what to look at in the picture and why (shown after the
 * run, with its numbers), checks that must hold on the run's metrics and
 * an optional diff excerpt of the patch, each hunk tied to the marks it
 * changes in the picture.
 * validateLesson() returns every problem with a JSON path, so a lesson author
 * sees exactly what to fix; nothing is half-loaded.
 *
 * Text fields are "markdown-light": paragraphs separated by blank lines,
 * **bold**, `code`, and lines starting with "- " as a list.
 */
import type { Variant } from '../engine/types';
import { claimsIn, parseShown } from './lessonClaims';
import { validateMoment, type Moment } from './moments';
import { SPREAD_STATS, type SpreadStat } from './spread';

export type CheckOp = 'lt' | 'gt' | 'between' | 'ratio_lt' | 'ratio_gt' | 'ratio_between';

/** A reference for a ratio check: the same metric of another variant/step by default. */
export interface CheckRef {
  variant?: Variant;
  metric?: string;
  /** Index of an earlier step of the lesson (default: this step). */
  step?: number;
}

export interface Check {
  /** What the check says, for people ("QD1 write latency is under 20 us"). */
  label: string;
  metric: string;
  variant: Variant;
  op: CheckOp;
  /** Bound for lt/gt/ratio_lt/ratio_gt. */
  value?: number;
  /** [low, high] for between/ratio_between. */
  range?: [number, number];
  /** The denominator of a ratio_* check. */
  of?: CheckRef;
  /**
   * On a step that runs several seeds: the check must hold in at least this
   * many of the seeds' runs, each seed's kernels compared with each other
   * ("after is below before in at least 18 of 20 runs").
   */
  atLeast?: number;
  /** On a step that runs several seeds: compare this statistic of the runs
   * (p5, p50, p95, mean, sd, min, max) instead of the median. */
  stat?: SpreadStat;
}

export interface Prediction {
  /** The question ("What median latency do you expect, in us?"). */
  prompt: string;
  metric: string;
  variant: Variant;
  unit?: string;
  /** A guess within this factor of the simulated value counts as close (e.g. 2 = within 2x). */
  factor: number;
}

export interface Scenario {
  experiment: string;
  variants: Variant[];
  params: Record<string, string>;
  seed: number;
  /** Run seeds seed..seed+seeds-1 of each variant (2-100): a distribution.
   * Checks without atLeast/stat, and the text's numbers, read the medians. */
  seeds?: number;
  /** The run-to-run variation a seed draws (engine/src/kernel/variation.def):
   * "off" by default (the deterministic model: the numbers a lesson states
   * are the same on every machine and day), "on" by default with seeds. */
  variation?: 'on' | 'off';
}

/** What one hunk of a diff changes in the step's picture: shown under the
 * hunk's header; `picture` names the marks it changes (their
 * data-hl-key), which light up while the note is hovered or focused. */
export interface HunkNote {
  /** 0-based, in the order of the diff's @@ headers */
  hunk: number;
  text: string;
  /** the data-hl-key(s) of the marks it changes; absent only for a hunk that changes nothing drawn */
  picture?: string | string[];
}

/** A note's mark keys as a list. */
export const noteKeys = (n: HunkNote): string[] => (n.picture === undefined ? [] : typeof n.picture === 'string' ? [n.picture] : n.picture);

export interface DiffExcerpt {
  title: string;
  /** Unified diff text. */
  text: string;
  notes?: HunkNote[];
}

export interface LessonStep {
  title: string;
  /** The setting, shown before the run: never a figure from this step's run. */
  text: string;
  scenario: Scenario;
  /** What to watch for in the picture, shown before the run (no figures from it). */
  watch: string;
  /** What to look at in the picture, with its numbers: shown after the run. */
  look: string;
  prediction?: Prediction;
  checks: Check[];
  why: string;
  diff?: DiffExcerpt;
  /** A moment of the step's recorded runs to step to, and checks on it (model/moments.ts). */
  moment?: Moment;
}

export interface Lesson {
  id: string;
  title: string;
  /** The lesson's name in the header's lesson bar (a few words). */
  short: string;
  /** The patch seed it teaches ("000".."004") or "-" for a general lesson. */
  seed: string;
  summary: string;
  steps: LessonStep[];
}

const VARIANTS: readonly string[] = ['before', 'after', 'base'];
const OPS: readonly string[] = ['lt', 'gt', 'between', 'ratio_lt', 'ratio_gt', 'ratio_between'];

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Optional knowledge of the engine, to check experiment/metric/param names too. */
export interface LessonContext {
  experiments: { name: string; variants: string[]; metrics: string[]; params: { name: string }[] }[];
}

/**
 * Validate a parsed lesson. Returns the list of problems ("steps[1].checks[0].op:
 * must be one of lt, gt, ..."); an empty list means `x` is a Lesson.
 */
export function validateLesson(x: unknown, ctx?: LessonContext): string[] {
  const errs: string[] = [];
  const err = (path: string, msg: string): void => void errs.push(`${path}: ${msg}`);
  const str = (o: Obj, k: string, path: string, optional = false): void => {
    if (o[k] === undefined && optional) return;
    if (typeof o[k] !== 'string' || (o[k] as string).trim() === '') err(`${path}.${k}`, 'must be a non-empty string');
  };
  if (!isObj(x)) return ['lesson: must be a JSON object'];
  str(x, 'id', 'lesson');
  if (typeof x.id === 'string' && !/^[a-z0-9][a-z0-9-]*$/.test(x.id)) err('lesson.id', 'use lower-case letters, digits and "-"');
  str(x, 'title', 'lesson');
  str(x, 'short', 'lesson');
  if (typeof x.short === 'string' && x.short.length > 18) err('lesson.short', 'must be a short name (at most 18 characters): the header shows it');
  str(x, 'seed', 'lesson');
  str(x, 'summary', 'lesson');
  if (!Array.isArray(x.steps) || x.steps.length === 0) {
    err('lesson.steps', 'must be a non-empty array');
    return errs;
  }
  x.steps.forEach((s: unknown, i: number) => {
    const sp = `steps[${i}]`;
    if (!isObj(s)) return err(sp, 'must be an object');
    for (const k of ['title', 'text', 'watch', 'look', 'why']) str(s, k, sp);
    const exp = validateScenario(s.scenario, `${sp}.scenario`, err, ctx);
    const variants = isObj(s.scenario) && Array.isArray(s.scenario.variants) ? (s.scenario.variants as string[]) : [];
    const metricOk = (m: unknown, path: string, e = exp): void => {
      if (typeof m !== 'string' || m === '') return err(path, 'must name a metric');
      if (e && !e.metrics.includes(m)) err(path, `"${m}" is not a metric of ${e.name} (${e.metrics.join(', ')})`);
    };
    const variantOk = (v: unknown, path: string, among: string[]): void => {
      if (typeof v !== 'string' || !VARIANTS.includes(v)) return err(path, 'must be "before", "after" or "base"');
      if (!among.includes(v)) err(path, `"${v}" is not run by this step (it runs ${among.join(', ') || 'nothing'})`);
    };
    if (s.prediction !== undefined) {
      const pp = `${sp}.prediction`;
      const p = s.prediction;
      if (!isObj(p)) err(pp, 'must be an object');
      else {
        str(p, 'prompt', pp);
        metricOk(p.metric, `${pp}.metric`);
        variantOk(p.variant, `${pp}.variant`, variants);
        str(p, 'unit', pp, true);
        if (!isNum(p.factor) || p.factor <= 1) err(`${pp}.factor`, 'must be a number > 1 (e.g. 2 = within 2x)');
      }
    }
    if (!Array.isArray(s.checks)) err(`${sp}.checks`, 'must be an array (may be empty)');
    else
      s.checks.forEach((c: unknown, j: number) => {
        const cp = `${sp}.checks[${j}]`;
        if (!isObj(c)) return err(cp, 'must be an object');
        str(c, 'label', cp);
        metricOk(c.metric, `${cp}.metric`);
        variantOk(c.variant, `${cp}.variant`, variants);
        if (typeof c.op !== 'string' || !OPS.includes(c.op)) return err(`${cp}.op`, `must be one of ${OPS.join(', ')}`);
        const needsRange = c.op === 'between' || c.op === 'ratio_between';
        if (needsRange) {
          if (!Array.isArray(c.range) || c.range.length !== 2 || !isNum(c.range[0]) || !isNum(c.range[1]) || c.range[0] > c.range[1])
            err(`${cp}.range`, 'must be [low, high] with low <= high');
        } else if (!isNum(c.value)) err(`${cp}.value`, 'must be a number');
        if (c.op.startsWith('ratio_')) {
          if (!isObj(c.of)) return err(`${cp}.of`, 'a ratio needs "of": {variant?, metric?, step?}');
          const of = c.of;
          const refStep = of.step === undefined ? i : of.step;
          if (!Number.isInteger(refStep) || (refStep as number) < 0 || (refStep as number) > i)
            return err(`${cp}.of.step`, `must be the index of this or an earlier step (0..${i})`);
          const refS = (x.steps as unknown[])[refStep as number];
          const refScenario = isObj(refS) && isObj(refS.scenario) ? refS.scenario : undefined;
          const refVariants = refScenario && Array.isArray(refScenario.variants) ? (refScenario.variants as string[]) : [];
          const refExp = ctx?.experiments.find((e) => refScenario && e.name === refScenario.experiment);
          if (of.variant !== undefined) variantOk(of.variant, `${cp}.of.variant`, refVariants);
          else if (!refVariants.includes(c.variant as string)) err(`${cp}.of`, 'the referenced step does not run this variant; name one');
          if (of.metric !== undefined) metricOk(of.metric, `${cp}.of.metric`, refExp);
          if (of.step === undefined && of.variant === undefined && of.metric === undefined) err(`${cp}.of`, 'a ratio of a value to itself says nothing');
        } else if (c.of !== undefined) err(`${cp}.of`, 'only ratio_* checks take "of"');
        const seeds = isObj(s.scenario) && Number.isInteger(s.scenario.seeds) ? (s.scenario.seeds as number) : 0;
        if (c.atLeast !== undefined || c.stat !== undefined) {
          if (!seeds) err(`${cp}`, 'atLeast and stat read runs over seeds: give the scenario "seeds"');
          if (c.atLeast !== undefined && c.stat !== undefined) err(`${cp}`, 'a check takes atLeast or stat, not both');
          if (c.atLeast !== undefined && (!Number.isInteger(c.atLeast) || (c.atLeast as number) < 1 || (seeds && (c.atLeast as number) > seeds)))
            err(`${cp}.atLeast`, `must be a whole number of runs, 1..${seeds || 'seeds'}`);
          if (c.stat !== undefined && (typeof c.stat !== 'string' || !SPREAD_STATS.includes(c.stat as SpreadStat)))
            err(`${cp}.stat`, `must be one of ${SPREAD_STATS.join(', ')}`);
        }
      });
    // numbers about the run ([[744 ms|before.account_avg_ms]]) name a variant the step runs and a metric;
    // what is shown before the run (the setting, what to watch for) states none of this step's
    for (const k of ['text', 'watch', 'look', 'why'] as const) {
      if (typeof s[k] !== 'string') continue;
      const preRun = k === 'text' || k === 'watch';
      claimsIn(s[k] as string).forEach((c, j) => {
        const cp = `${sp}.${k} claim ${j + 1} ("${c.text}")`;
        const refStep = c.step ?? i;
        if (preRun && refStep >= i)
          return err(cp, `"${k}" is shown before the run: it may state an earlier step's result (@0..@${i - 1}), never this run's; say it in "look" or "why"`);
        if (refStep > i) return err(cp, `@${refStep}: must be this or an earlier step (0..${i})`);
        const refS = (x.steps as unknown[])[refStep];
        const refScenario = isObj(refS) && isObj(refS.scenario) ? refS.scenario : undefined;
        const refVariants = refScenario && Array.isArray(refScenario.variants) ? (refScenario.variants as string[]) : [];
        variantOk(c.variant, cp, refVariants);
        metricOk(c.metric, cp, ctx?.experiments.find((e) => refScenario && e.name === refScenario.experiment));
        if (parseShown(c.text) === null) err(cp, 'must show a number');
      });
    }
    if (s.moment !== undefined) for (const e of validateMoment(s.moment, `${sp}.moment`, variants)) errs.push(e);
    if (s.diff !== undefined) {
      if (!isObj(s.diff)) err(`${sp}.diff`, 'must be an object {title, text}');
      else {
        str(s.diff, 'title', `${sp}.diff`);
        str(s.diff, 'text', `${sp}.diff`);
        const hunks = typeof s.diff.text === 'string' ? (s.diff.text.match(/^@@ /gm) ?? []).length : 0;
        if (s.diff.notes !== undefined) {
          if (!Array.isArray(s.diff.notes)) err(`${sp}.diff.notes`, 'must be a list of {hunk, text, picture?}');
          else
            s.diff.notes.forEach((n: unknown, k: number) => {
              const np = `${sp}.diff.notes[${k}]`;
              if (!isObj(n)) return err(np, 'must be an object {hunk, text, picture?}');
              if (typeof n.hunk !== 'number' || !Number.isInteger(n.hunk) || n.hunk < 0 || n.hunk >= hunks)
                err(`${np}.hunk`, `must be the index of one of the diff's ${hunks} hunks (0-based)`);
              if (typeof n.text !== 'string' || n.text.trim() === '') err(`${np}.text`, 'must say what the hunk changes in the picture');
              const keys = n.picture === undefined ? [] : typeof n.picture === 'string' ? [n.picture] : n.picture;
              if (n.picture !== undefined && (!Array.isArray(keys) || keys.length === 0 || keys.some((key: unknown) => typeof key !== 'string' || !/^[a-z0-9-]+$/.test(key))))
                err(`${np}.picture`, 'must be a key of the picture\'s marks (a-z, 0-9, -), or a list of them');
            });
        }
      }
    }
  });
  return errs;
}

function validateScenario(
  s: unknown,
  path: string,
  err: (p: string, m: string) => void,
  ctx?: LessonContext,
): LessonContext['experiments'][number] | undefined {
  if (!isObj(s)) {
    err(path, 'must be an object {experiment, variants, params, seed}');
    return undefined;
  }
  if (typeof s.experiment !== 'string' || s.experiment === '') err(`${path}.experiment`, 'must name an experiment');
  const exp = ctx?.experiments.find((e) => e.name === s.experiment);
  if (ctx && typeof s.experiment === 'string' && !exp)
    err(`${path}.experiment`, `no experiment "${s.experiment}" (have ${ctx.experiments.map((e) => e.name).join(', ')})`);
  if (!Array.isArray(s.variants) || s.variants.length === 0) err(`${path}.variants`, 'must be a non-empty array');
  else
    s.variants.forEach((v: unknown, i: number) => {
      if (typeof v !== 'string' || !VARIANTS.includes(v)) err(`${path}.variants[${i}]`, 'must be "before", "after" or "base"');
      else if (exp && !exp.variants.includes(v)) err(`${path}.variants[${i}]`, `${exp.name} has variants ${exp.variants.join(', ')}`);
    });
  if (!isObj(s.params)) err(`${path}.params`, 'must be an object of strings');
  else
    for (const [k, v] of Object.entries(s.params)) {
      if (typeof v !== 'string') err(`${path}.params.${k}`, 'must be a string (the text you would type, e.g. "4096")');
      if (exp && !exp.params.some((p) => p.name === k)) err(`${path}.params.${k}`, `${exp.name} has no parameter "${k}"`);
    }
  if (!Number.isInteger(s.seed) || (s.seed as number) < 0) err(`${path}.seed`, 'must be a non-negative integer');
  if (s.seeds !== undefined && (!Number.isInteger(s.seeds) || (s.seeds as number) < 2 || (s.seeds as number) > 100))
    err(`${path}.seeds`, 'must be a whole number of seeds, 2..100');
  if (s.variation !== undefined && s.variation !== 'on' && s.variation !== 'off') err(`${path}.variation`, 'must be "on" or "off"');
  return exp;
}

/** Parse and validate a lesson's JSON text; throws an Error listing every problem. */
export function parseLesson(text: string, name = 'lesson', ctx?: LessonContext): Lesson {
  let x: unknown;
  try {
    x = JSON.parse(text);
  } catch (e) {
    throw new Error(`${name}: not valid JSON (${(e as Error).message})`);
  }
  const errs = validateLesson(x, ctx);
  if (errs.length > 0) throw new Error(`${name} has ${errs.length} problem(s):\n  ${errs.join('\n  ')}`);
  return x as Lesson;
}
