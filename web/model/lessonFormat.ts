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
 * Its structure is lessons/schema/lesson.schema.json (editors complete a
 * lesson's fields from it; the build compiles it into the validator here).
 * validateLesson() returns every problem with a JSON path, so a lesson
 * author sees exactly what to fix; nothing is half-loaded.
 *
 * Text fields are "markdown-light": paragraphs separated by blank lines,
 * **bold**, `code`, and lines starting with "- " as a list.
 */
import type { Variant } from '../engine/types';
import { claimsIn, parseShown } from './lessonClaims';
import { validateMoment, type Moment } from './moments';
import type { SpreadStat } from './spread';
import { tree as schemaTree, validate as validateSchema, type SchemaNode } from 'virtual:lesson-schema';

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
  /** On a step over seeds: the statistic of the runs asked for (default: their median). */
  stat?: SpreadStat;
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

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Optional knowledge of the engine, to check experiment/metric/param names too. */
export interface LessonContext {
  experiments: { name: string; variants: string[]; metrics: string[]; params: { name: string }[] }[];
}

/** A JSON pointer of the lesson ("/steps/0/checks/1/op") as a path people read ("steps[0].checks[1].op"). */
function pathOf(pointer: string, extra?: string): string {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (extra !== undefined) parts.push(extra);
  if (parts.length === 0) return 'lesson';
  let out = parts[0] === 'steps' ? '' : 'lesson';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out;
}

/** The schema's node for a place in the lesson, its $ref followed; and the first node on the way that holds a oneOf, with its place. */
function schemaAt(pointer: string): { node: SchemaNode | undefined; oneOf?: { node: SchemaNode; pointer: string } } {
  const deref = (n: SchemaNode | undefined): SchemaNode | undefined => (n?.$ref ? schemaTree.definitions?.[n.$ref.replace('#/definitions/', '')] : n);
  let n = deref(schemaTree);
  let oneOf: { node: SchemaNode; pointer: string } | undefined;
  let at = '';
  for (const seg of pointer.split('/').slice(1)) {
    if (!n) break;
    if (n.oneOf && !oneOf) oneOf = { node: n, pointer: at };
    n = deref(n.properties?.[seg] ?? (/^\d+$/.test(seg) ? n.items : undefined) ?? n.additionalProperties);
    at += `/${seg}`;
  }
  if (n?.oneOf && !oneOf) oneOf = { node: n, pointer: at };
  return { node: n, ...(oneOf ? { oneOf } : {}) };
}

/** A schema keyword's problem in words (where the schema gives none of its own). */
function wording(keyword: string, p: Record<string, unknown>): string {
  switch (keyword) {
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'type':
      return `must be ${['array', 'object', 'integer'].includes(String(p.type)) ? 'an' : 'a'} ${p.type}`;
    case 'minItems':
      return `must have at least ${p.limit} item${p.limit === 1 ? '' : 's'}`;
    case 'maxItems':
      return `must have at most ${p.limit} items`;
    case 'minLength':
    case 'pattern':
      return 'must be a non-empty string';
    case 'maxLength':
      return `must be at most ${p.limit} characters`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${p.comparison} ${p.limit}`;
    case 'minProperties':
      return 'must not be empty';
    default:
      return `does not hold to the schema (${keyword})`;
  }
}

/** The structural problems, from the schema (lessons/schema/lesson.schema.json), worded by its errorMessage where it has one. */
function schemaProblems(x: unknown): string[] {
  if (validateSchema(x)) return [];
  const out = new Set<string>();
  for (const e of validateSchema.errors ?? []) {
    const p = e.params;
    const { node, oneOf } = schemaAt(e.instancePath);
    // a value that can take one of several forms: one problem, at its place
    if (oneOf) out.add(`${pathOf(oneOf.pointer)}: ${oneOf.node.errorMessage ?? 'does not have any of the forms it may take'}`);
    else if (e.keyword === 'required') out.add(`${pathOf(e.instancePath, String(p.missingProperty))}: is missing`);
    else if (e.keyword === 'additionalProperties') out.add(`${pathOf(e.instancePath, String(p.additionalProperty))}: is not a field here (a typo?)`);
    else {
      out.add(`${pathOf(e.instancePath)}: ${node?.errorMessage ?? wording(e.keyword, p)}`);
    }
  }
  return [...out];
}

/**
 * Validate a parsed lesson. Returns the list of problems ("steps[1].checks[0].op:
 * must be one of lt, gt, ..."); an empty list means `x` is a Lesson. The
 * schema checks the structure; what it cannot (metric, parameter and
 * experiment names against the engine, references to other steps, the
 * numbers in the text, the diff's hunks) is checked here.
 */
export function validateLesson(x: unknown, ctx?: LessonContext): string[] {
  const errs: string[] = schemaProblems(x);
  const err = (path: string, msg: string): void => void errs.push(`${path}: ${msg}`);
  if (!isObj(x)) return errs.length ? errs : ['lesson: must be a JSON object'];
  if (!Array.isArray(x.steps)) return errs;
  x.steps.forEach((s: unknown, i: number) => {
    const sp = `steps[${i}]`;
    if (!isObj(s)) return;
    const exp = validateScenario(s.scenario, `${sp}.scenario`, err, ctx);
    const variants = isObj(s.scenario) && Array.isArray(s.scenario.variants) ? (s.scenario.variants as string[]) : [];
    const metricOk = (m: unknown, path: string, e = exp): void => {
      if (typeof m !== 'string' || m === '') return;
      if (e && !e.metrics.includes(m)) err(path, `"${m}" is not a metric of ${e.name} (${e.metrics.join(', ')})`);
    };
    const variantOk = (v: unknown, path: string, among: string[]): void => {
      if (typeof v !== 'string') return;
      if (!among.includes(v)) err(path, `"${v}" is not run by this step (it runs ${among.join(', ') || 'nothing'})`);
    };
    if (isObj(s.prediction)) {
      metricOk(s.prediction.metric, `${sp}.prediction.metric`);
      variantOk(s.prediction.variant, `${sp}.prediction.variant`, variants);
      if (s.prediction.stat !== undefined && !(isObj(s.scenario) && typeof s.scenario.seeds === 'number'))
        err(`${sp}.prediction.stat`, 'is a statistic of runs over seeds: give the scenario "seeds"');
    }
    if (Array.isArray(s.checks))
      s.checks.forEach((c: unknown, j: number) => {
        const cp = `${sp}.checks[${j}]`;
        if (!isObj(c) || typeof c.op !== 'string') return;
        metricOk(c.metric, `${cp}.metric`);
        variantOk(c.variant, `${cp}.variant`, variants);
        const needsRange = c.op === 'between' || c.op === 'ratio_between';
        if (needsRange) {
          if (!Array.isArray(c.range) || c.range.length !== 2 || !isNum(c.range[0]) || !isNum(c.range[1]) || c.range[0] > c.range[1])
            err(`${cp}.range`, `${c.op} needs [low, high] with low <= high`);
        } else if (!isNum(c.value)) err(`${cp}.value`, `${c.op} needs a number`);
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
          if (c.atLeast !== undefined && seeds && (c.atLeast as number) > seeds) err(`${cp}.atLeast`, `must be a whole number of runs, 1..${seeds}`);
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
        if (!refVariants.includes(c.variant)) err(cp, `"${c.variant}" is not run by step ${refStep} (it runs ${refVariants.join(', ') || 'nothing'})`);
        metricOk(c.metric, cp, ctx?.experiments.find((e) => refScenario && e.name === refScenario.experiment));
        if (parseShown(c.text) === null) err(cp, 'must show a number');
        if (c.stat !== undefined && !(refScenario && typeof refScenario.seeds === 'number'))
          err(cp, `~${c.stat} is a statistic of runs over seeds: step ${refStep} runs one seed (give its scenario "seeds")`);
      });
    }
    // the prompt sits beside the field before the run: no claim, no marks
    if (isObj(s.prediction) && typeof s.prediction.prompt === 'string' && claimsIn(s.prediction.prompt).length > 0)
      err(`${sp}.prediction.prompt`, 'is shown before the run: state no result in it');
    if (s.moment !== undefined) for (const e of validateMoment(s.moment, `${sp}.moment`, variants)) if (!errs.includes(e)) errs.push(e);
    if (isObj(s.diff) && typeof s.diff.text === 'string') {
      const hunks = (s.diff.text.match(/^@@ /gm) ?? []).length;
      if (hunks === 0) err(`${sp}.diff.text`, 'needs an @@ header for each hunk (a note is tied to a hunk)');
      const notes = Array.isArray(s.diff.notes) ? s.diff.notes.filter(isObj) : [];
      notes.forEach((n, k) => {
        if (typeof n.hunk === 'number' && n.hunk >= hunks) err(`${sp}.diff.notes[${k}].hunk`, `must be the index of one of the diff's ${hunks} hunks (0-based)`);
      });
      // every hunk says what it changes in the picture
      const missing = Array.from({ length: hunks }, (_, h) => h).filter((h) => !notes.some((n) => n.hunk === h));
      if (missing.length > 0 && Array.isArray(s.diff.notes)) err(`${sp}.diff.notes`, `no note for hunk ${missing.join(', ')}: say what each hunk changes in the picture`);
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
  if (!isObj(s)) return undefined;
  const exp = ctx?.experiments.find((e) => e.name === s.experiment);
  if (ctx && typeof s.experiment === 'string' && !exp)
    err(`${path}.experiment`, `no experiment "${s.experiment}" (have ${ctx.experiments.map((e) => e.name).join(', ')})`);
  if (Array.isArray(s.variants) && exp)
    s.variants.forEach((v: unknown, i: number) => {
      if (typeof v === 'string' && !exp.variants.includes(v)) err(`${path}.variants[${i}]`, `${exp.name} has variants ${exp.variants.join(', ')}`);
    });
  if (isObj(s.params) && exp)
    for (const k of Object.keys(s.params)) if (!exp.params.some((p) => p.name === k)) err(`${path}.params.${k}`, `${exp.name} has no parameter "${k}"`);
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
