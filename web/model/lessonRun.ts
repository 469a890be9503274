/*
 * lessonRun.ts - turning a lesson step into engine runs: the run specs of a
 * step's scenario (experiment defaults filled in), the earlier steps its
 * checks depend on, and a headless runner used by the lesson test (the
 * player uses the same specs through the worker).
 */
import type { ExperimentInfo, RunResult, RunSpec, Variant } from '../engine/types';
import { evaluateMoment, type MomentOutcome } from './moments';
import type { Trace } from './trace';
import { stepClaims } from './lessonClaims';
import { evaluateStep, statMetrics, type CheckOutcome, type SeedMetrics, type StepMetrics } from './lessonChecks';
import type { Lesson, LessonStep } from './lessonFormat';
import { withDefaults } from './params';

/** A step's run-to-run variation: its own, else off for one run and on over seeds. */
export const stepVariation = (step: LessonStep): 'on' | 'off' => step.scenario.variation ?? (step.scenario.seeds ? 'on' : 'off');

/** The run specs of a step's scenario, with the experiment's defaults filled in (at `seed`: one of a step's seeds). */
export function stepSpecs(step: LessonStep, info: ExperimentInfo, seed = step.scenario.seed): RunSpec[] {
  const params = withDefaults(info.params, step.scenario.params);
  const variation = stepVariation(step);
  return step.scenario.variants.map((variant) => ({ experiment: info.name, variant, params, seed, ...(variation === 'off' ? { variation } : {}) }));
}

/** The seeds a step runs: its seed, or seed..seed+seeds-1. */
export const stepSeeds = (step: LessonStep): number[] => Array.from({ length: step.scenario.seeds ?? 1 }, (_, k) => step.scenario.seed + k);

/** Earlier steps whose metrics step `i`'s checks, or the numbers its text states (claims), refer to. */
export function stepDeps(lesson: Lesson, i: number): number[] {
  const deps = new Set<number>();
  const s = lesson.steps[i];
  for (const c of s?.checks ?? []) if (c.of?.step !== undefined && c.of.step < i) deps.add(c.of.step);
  for (const c of s ? stepClaims(s) : []) if (c.step !== undefined && c.step < i) deps.add(c.step);
  return [...deps].sort((a, b) => a - b);
}

/** Metrics by variant from run results. */
export const metricsOf = (runs: Partial<Record<string, RunResult>>): StepMetrics =>
  Object.fromEntries(Object.entries(runs).map(([v, r]) => [v, r?.metrics ?? {}]));

/**
 * Run every step of a lesson in order with a synchronous runner (the
 * bridge's run()) and evaluate each step's checks. Returns the outcomes by
 * step. Throws if a step names an experiment the registry lacks.
 */
export function runLessonHeadless(lesson: Lesson, experiments: ExperimentInfo[], run: (spec: RunSpec) => RunResult): CheckOutcome[][] {
  return runLessonSteps(lesson, experiments, run).outcomes;
}

/**
 * The same, also returning each step's metrics (for the claims in its text;
 * a step over seeds: the medians), each seed's metrics of a step over
 * seeds, and, for a step with a moment, its checks on the recorded runs
 * (`run` is then asked to record: its second argument is true; a step over
 * seeds records its first seed's runs).
 */
export function runLessonSteps(
  lesson: Lesson,
  experiments: ExperimentInfo[],
  run: (spec: RunSpec, record?: boolean) => RunResult,
): { outcomes: CheckOutcome[][]; metrics: StepMetrics[]; seeds: SeedMetrics; moments: (MomentOutcome[] | null)[] } {
  const all: StepMetrics[] = [];
  const seeds: SeedMetrics = [];
  const moments: (MomentOutcome[] | null)[] = [];
  const outcomes = lesson.steps.map((s, i) => {
    const info = experiments.find((e) => e.name === s.scenario.experiment);
    if (!info) throw new Error(`${lesson.id} step ${i}: no experiment "${s.scenario.experiment}"`);
    const per = stepSeeds(s).map((seed, k) => {
      const runs: Record<string, RunResult> = {};
      for (const spec of stepSpecs(s, info, seed)) runs[spec.variant] = run(spec, !!s.moment && k === 0);
      if (k === 0) moments[i] = s.moment ? evaluateMoment(s.moment, recordingsOf(runs)).outcomes : null;
      return metricsOf(runs);
    });
    if (s.scenario.seeds) {
      seeds[i] = per;
      all[i] = statMetrics(per);
    } else all[i] = per[0]!;
    return evaluateStep(s, i, all, seeds);
  });
  return { outcomes, metrics: all, seeds, moments };
}

/** Recordings by variant from run results. */
export const recordingsOf = (runs: Partial<Record<string, RunResult>>): Partial<Record<Variant, Trace>> =>
  Object.fromEntries(Object.entries(runs).flatMap(([v, r]) => (r?.recording ? [[v, r.recording]] : [])));

/**
 * The pinned reference of a step that runs one kernel of a before/after
 * experiment: the other kernel, same parameters and random seed (the
 * player shows it beside the step's run; checks never read it). Null when
 * the step runs both, or the experiment has one.
 */
export function referenceSpec(step: LessonStep, info: ExperimentInfo): RunSpec | null {
  const v = step.scenario.variants;
  if (v.length !== 1 || !info.variants.includes('before') || !info.variants.includes('after')) return null;
  const other = v[0] === 'before' ? 'after' : v[0] === 'after' ? 'before' : null;
  if (!other) return null;
  const variation = stepVariation(step);
  return { experiment: info.name, variant: other, params: withDefaults(info.params, step.scenario.params), seed: step.scenario.seed, ...(variation === 'off' ? { variation } : {}) };
}
