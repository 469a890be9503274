/*
 * lessonRun.ts - turning a lesson step into engine runs: the run specs of a
 * step's scenario (experiment defaults filled in), the earlier steps its
 * checks depend on, and a headless runner used by the lesson test (the
 * player uses the same specs through the worker).
 */
import type { ExperimentInfo, RunResult, RunSpec } from '../engine/types';
import { evaluateStep, type CheckOutcome, type StepMetrics } from './lessonChecks';
import type { Lesson, LessonStep } from './lessonFormat';
import { withDefaults } from './params';

/** The run specs of a step's scenario, with the experiment's defaults filled in. */
export function stepSpecs(step: LessonStep, info: ExperimentInfo): RunSpec[] {
  const params = withDefaults(info.params, step.scenario.params);
  return step.scenario.variants.map((variant) => ({ experiment: info.name, variant, params, seed: step.scenario.seed }));
}

/** Earlier steps whose metrics step `i`'s checks refer to. */
export function stepDeps(lesson: Lesson, i: number): number[] {
  const deps = new Set<number>();
  for (const c of lesson.steps[i]?.checks ?? []) if (c.of?.step !== undefined && c.of.step < i) deps.add(c.of.step);
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
  const all: StepMetrics[] = [];
  return lesson.steps.map((s, i) => {
    const info = experiments.find((e) => e.name === s.scenario.experiment);
    if (!info) throw new Error(`${lesson.id} step ${i}: no experiment "${s.scenario.experiment}"`);
    const runs: Record<string, RunResult> = {};
    for (const spec of stepSpecs(s, info)) runs[spec.variant] = run(spec);
    all[i] = metricsOf(runs);
    return evaluateStep(s, i, all);
  });
}
