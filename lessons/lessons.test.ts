/*
 * Every lesson, replayed headless against the real engine (cf. Learn Git
 * Branching's solution replays): each file validates against the schema and
 * the engine's registry, each step's scenario runs through the WASM bridge,
 * each check, evaluated by the same module the lesson player uses, passes,
 * every number the text states is the run's, and no step shows its answer
 * before its run (e2e/lessons-play.spec.ts reads the page itself).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../web/engine/bridge';
import { loadNodeBridge } from '../web/engine/node';
import { parseLesson, type LessonContext } from '../web/model/lessonFormat';
import { checkStepClaims, withoutClaimMarks } from '../web/model/lessonClaims';
import { predictionMetrics, type SeedMetrics, type StepMetrics } from '../web/model/lessonChecks';
import { spoilersIn } from '../web/model/lessonSpoilers';
import { runLessonHeadless, runLessonSteps, stepSpecs } from '../web/model/lessonRun';
import { evaluateMoment } from '../web/model/moments';
import type { Variant } from '../web/engine/types';

const dir = fileURLToPath(new URL('.', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

let b: Bridge;
let ctx: LessonContext;
beforeAll(async () => {
  b = await loadNodeBridge();
  ctx = { experiments: b.list() };
});

describe('lessons', () => {
  it('there is at least one lesson', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  for (const f of files) {
    it(`${f}: validates and every step's checks pass on the real engine`, () => {
      const lesson = parseLesson(readFileSync(`${dir}${f}`, 'utf8'), f, ctx);
      expect(`${lesson.id}.json`).toBe(f);
      const { outcomes, metrics, seeds, moments } = runLessonSteps(lesson, b.list(), (spec, record) => b.run(spec, undefined, record ? {} : undefined));
      const failed = outcomes.flatMap((os, i) => os.filter((o) => !o.pass).map((o) => `step ${i}: ${o.check.label} (${o.detail})`));
      expect(failed).toEqual([]);
      expect(outcomes.flat().length).toBeGreaterThan(0);
      // A moment the step points at exists in its recorded runs, and what it says of it holds
      const momentFailed = moments.flatMap((os, i) => (os ?? []).filter((o) => !o.pass).map((o) => `step ${i} moment: ${o.check.label} (${o.detail})`));
      expect(momentFailed).toEqual([]);
      // ... and tells the kernels apart: with the two runs swapped, some statement fails
      lesson.steps.forEach((s, i) => {
        if (!s.moment || s.scenario.variants.length !== 2) return;
        const info = b.list().find((e) => e.name === s.scenario.experiment)!;
        const [va, vb] = s.scenario.variants as [Variant, Variant];
        const rec = Object.fromEntries(stepSpecs(s, info).map((spec) => [spec.variant, b.run(spec, undefined, {}).recording!]));
        const swapped = { [va]: rec[vb], [vb]: rec[va] };
        expect(evaluateMoment(s.moment, swapped).outcomes.some((o) => !o.pass), `step ${i}: its moment's checks hold whichever kernel is which`).toBe(true);
      });

      // Every number the text states about the run is what the run gives, rounded as the text writes it.
      const unitOf = (exp: string) => (m: string) => b.list().find((e) => e.name === exp)?.metricInfo.find((x) => x.name === m)?.unit ?? '';
      const wrong = lesson.steps.flatMap((s, i) =>
        checkStepClaims(s, i, metrics, unitOf(s.scenario.experiment), seeds)
          .filter((c) => !c.ok)
          .map((c) => `step ${i + 1}: "${c.claim.text}" (${c.claim.variant}.${c.claim.metric}) but the run gives ${c.shown}${c.problem ? `: ${c.problem}` : ''}`),
      );
      expect(wrong).toEqual([]);
      // Nothing before the run gives its answer: what the step shows before it (its title, setting, what to
      // watch for, the question, the diff's code) holds no rendering of the value the student predicts.
      // (e2e/lesson-play.spec.ts reads the page itself, at every width and in focus mode.)
      const spoiled = lesson.steps.flatMap((s, i) => {
        const p = s.prediction;
        const value = p && predictionMetrics(p, i, metrics, seeds)?.[p.variant]?.[p.metric];
        if (!p || value === undefined) return [];
        const before = [lesson.title, s.title, withoutClaimMarks(s.text), withoutClaimMarks(s.watch), p.prompt, s.diff?.title ?? '', s.diff?.text ?? ''].join('\n');
        return spoilersIn(before, value, p.unit).map((x) => `step ${i + 1}: "${x.shown}" shows ${p.variant}.${p.metric} = ${value} before the run`);
      });
      expect(spoiled).toEqual([]);
      // and the claims can fail: every number off by 60% is caught
      const skew = (m: StepMetrics): StepMetrics => Object.fromEntries(Object.entries(m).map(([v, r]) => [v, Object.fromEntries(Object.entries(r ?? {}).map(([k, x]) => [k, x * 1.6 + 1]))]));
      // (over seeds each run scaled, and a few runs moved apart, so a spread's sd moves too)
      const skewSeeds: SeedMetrics = seeds.map((runs) => runs?.map((m, k) => skew(k % 3 ? m : skew(m))));
      const off = lesson.steps.flatMap((s, i) => checkStepClaims(s, i, metrics.map(skew), unitOf(s.scenario.experiment), skewSeeds));
      expect(off.filter((c) => c.ok)).toEqual([]);

      // The checks can fail: with every comparison turned around, none passes.
      const FLIP = { lt: 'gt', gt: 'lt', ratio_lt: 'ratio_gt', ratio_gt: 'ratio_lt' } as const;
      const flipped = structuredClone(lesson);
      for (const s of flipped.steps)
        for (const c of s.checks) {
          if (c.op === 'between' || c.op === 'ratio_between') c.range = [c.range![1] + 1, c.range![1] + 2];
          else c.op = FLIP[c.op];
        }
      const flippedOutcomes = runLessonHeadless(flipped, b.list(), (spec) => b.run(spec));
      expect(flippedOutcomes.flat().filter((o) => o.pass)).toEqual([]);
    });
  }
});

describe('the app bundles the lessons', () => {
  it('loads every lessons/*.json through the app loader without errors', async () => {
    const { loadLessons } = await import('../web/lessons');
    const { lessons, errors } = loadLessons({ experiments: b.list() });
    expect(errors).toEqual([]);
    expect(lessons.map((l) => `${l.id}.json`).sort()).toEqual(files);
  });
});
