import { describe, expect, it } from 'vitest';
import { checkStepClaims } from './lessonClaims';
import { evaluateCheck, evaluateStep, judgePrediction, parseGuess, predictionMetrics, type SeedMetrics, type StepMetrics } from './lessonChecks';
import { parseLesson, validateLesson, type Lesson, type LessonContext } from './lessonFormat';

const ctx: LessonContext = {
  experiments: [
    { name: 'fio', variants: ['base'], metrics: ['iops', 'clat_p50_us'], params: [{ name: 'device' }, { name: 'rw' }] },
    { name: 'qgroup-drop', variants: ['before', 'after'], metrics: ['account_max_ms'], params: [{ name: 'threshold' }] },
  ],
};

const good = (): Lesson => ({
  id: 'demo',
  title: 'Demo',
  short: 'Demo',
  seed: '-',
  summary: 'A demo.',
  steps: [
    {
      title: 'One',
      text: 'Run it.',
      watch: 'The line.',
      look: 'The line.',
      why: 'Because.',
      scenario: { experiment: 'fio', variants: ['base'], params: { device: 'nvme-dc' }, seed: 1 },
      prediction: { prompt: 'p50?', metric: 'clat_p50_us', variant: 'base', unit: 'µs', factor: 2 },
      checks: [{ label: 'fast', metric: 'clat_p50_us', variant: 'base', op: 'lt', value: 20 }],
    },
    {
      title: 'Two',
      text: 'Again.',
      watch: 'x',
      look: 'x',
      why: 'y',
      scenario: { experiment: 'fio', variants: ['base'], params: { device: 'consumer-ssd' }, seed: 1 },
      checks: [{ label: 'slower', metric: 'clat_p50_us', variant: 'base', op: 'ratio_gt', value: 3, of: { step: 0 } }],
    },
  ],
});

describe('lesson validator', () => {
  it('accepts a good lesson, with and without engine knowledge', () => {
    expect(validateLesson(good())).toEqual([]);
    expect(validateLesson(good(), ctx)).toEqual([]);
    expect(parseLesson(JSON.stringify(good()), 'demo.json', ctx).id).toBe('demo');
  });

  it('reports each problem with its path', () => {
    const l = good() as unknown as Record<string, any>;
    l.id = 'Bad Id';
    l.steps[0].scenario.variants = ['before'];
    l.steps[0].scenario.params.nope = 4;
    l.steps[0].checks[0].op = 'approx';
    l.steps[1].checks[0].of = { step: 5 };
    l.steps[0].prediction.factor = 1;
    const errs = validateLesson(l, ctx);
    expect(errs).toContain('lesson.id: use lower-case letters, digits and "-"');
    expect(errs).toContain('steps[0].scenario.variants[0]: fio has variants base');
    expect(errs).toContain('steps[0].scenario.params.nope: must be a string (the text you would type, e.g. "4096")');
    expect(errs).toContain('steps[0].scenario.params.nope: fio has no parameter "nope"');
    expect(errs.some((e) => e.startsWith('steps[0].checks[0].op: must be one of'))).toBe(true);
    expect(errs).toContain('steps[1].checks[0].of.step: must be the index of this or an earlier step (0..1)');
    expect(errs.some((e) => e.startsWith('steps[0].prediction.factor'))).toBe(true);
  });

  it('the schema words its problems: a typo, a missing field, a mark key', () => {
    const l = good() as unknown as Record<string, any>;
    l.steps[0].lok = 'typo';
    delete l.steps[1].watch;
    l.steps[0].diff = { title: 'd', text: '@@ -1 +1 @@\n-a\n+b\n', notes: [{ hunk: 0, text: 'n', picture: ['ok', 'Not A Key'] }] };
    const errs = validateLesson(l);
    expect(errs).toContain('steps[0].lok: is not a field here (a typo?)');
    expect(errs).toContain('steps[1].watch: is missing');
    expect(errs).toContain("steps[0].diff.notes[0].picture: must be a key of the picture's marks (a-z, 0-9, -), or a list of them");
  });

  it('nothing from the run before it: the setting and what to watch for state only earlier steps', () => {
    const l = good();
    l.steps[0]!.text = 'The median is [[9 µs|base.clat_p50_us]].';
    l.steps[1]!.watch = 'Against [[9 µs|base.clat_p50_us@0]] of step 1, and [[45 µs|base.clat_p50_us]] now.';
    l.steps[0]!.prediction!.prompt = 'More than [[9 µs|base.clat_p50_us]]?';
    const errs = validateLesson(l);
    expect(errs.filter((e) => e.includes('is shown before the run'))).toHaveLength(3);
    expect(errs.some((e) => e.startsWith('steps[1].watch claim 2'))).toBe(true);
    expect(errs.some((e) => e.startsWith('steps[1].watch claim 1'))).toBe(false);
    // the same numbers after the run are fine
    const ok = good();
    ok.steps[1]!.look = 'Against [[9 µs|base.clat_p50_us@0]] of step 1, and [[45 µs|base.clat_p50_us]] now.';
    expect(validateLesson(ok)).toEqual([]);
  });

  it('a statistic of runs (a claim ~sd, a prediction of the sd) only on a step over seeds', () => {
    const l = good();
    l.steps[0]!.look = 'They vary by [[2 µs|base.clat_p50_us~sd]].';
    l.steps[0]!.prediction!.stat = 'sd';
    const errs = validateLesson(l);
    expect(errs).toContain('steps[0].prediction.stat: is a statistic of runs over seeds: give the scenario "seeds"');
    expect(errs.some((e) => e.startsWith('steps[0].look claim 1 ("2 µs"): ~sd is a statistic of runs over seeds'))).toBe(true);
    l.steps[0]!.scenario.seeds = 5;
    expect(validateLesson(l)).toEqual([]);
    l.steps[0]!.prediction!.stat = 'spread' as never;
    expect(validateLesson(l).some((e) => e.startsWith('steps[0].prediction.stat'))).toBe(true);
  });

  it('a diff with notes says what every hunk changes in the picture', () => {
    const l = good();
    l.steps[0]!.diff = { title: 'd', text: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n@@ -9 +9 @@\n-c\n+d\n', notes: [{ hunk: 0, text: 'the line', picture: 'line' }] };
    expect(validateLesson(l)).toEqual(['steps[0].diff.notes: no note for hunk 1: say what each hunk changes in the picture']);
    l.steps[0]!.diff.notes!.push({ hunk: 1, text: 'nothing drawn' }, { hunk: 2, text: 'no such hunk' });
    expect(validateLesson(l)).toEqual(["steps[0].diff.notes[2].hunk: must be the index of one of the diff's 2 hunks (0-based)"]);
  });

  it('the schema compiles in strict mode, and every lesson file names it', async () => {
    const { lessonSchemaModule } = await import('../../lessons/schema/plugin');
    expect(lessonSchemaModule()).toMatch(/export const tree/);
    const { readdirSync, readFileSync } = await import('node:fs');
    for (const f of readdirSync('lessons').filter((n) => n.endsWith('.json')))
      expect(JSON.parse(readFileSync(`lessons/${f}`, 'utf8')).$schema, f).toBe('./schema/lesson.schema.json');
  });

  it('knows metric names when given the engine registry', () => {
    const l = good();
    l.steps[0]!.checks[0]!.metric = 'latency';
    expect(validateLesson(l, ctx)[0]).toMatch(/"latency" is not a metric of fio/);
    expect(validateLesson(l)).toEqual([]);
  });

  it('throws one error listing everything, or on bad JSON', () => {
    expect(() => parseLesson('{', 'x.json')).toThrow(/x.json: not valid JSON/);
    expect(() => parseLesson('{"id":"a"}', 'x.json')).toThrow(/x.json has 5 problem\(s\)/);
  });
});

describe('lesson checks', () => {
  const all: StepMetrics[] = [{ base: { clat_p50_us: 9, iops: 80000 } }, { base: { clat_p50_us: 45, iops: 20000 } }];
  const l = good();

  it('evaluates plain and ratio checks, across steps', () => {
    expect(evaluateStep(l.steps[0]!, 0, all).map((o) => o.pass)).toEqual([true]);
    const r = evaluateStep(l.steps[1]!, 1, all)[0]!;
    expect(r.pass).toBe(true);
    expect(r.actual).toBe(5);
    expect(r.detail).toBe('45 / 9 = 5 > 3');
  });

  it('fails when the value is on the wrong side, or missing', () => {
    expect(evaluateCheck({ label: '', metric: 'iops', variant: 'base', op: 'gt', value: 90000 }, 0, all).pass).toBe(false);
    expect(evaluateCheck({ label: '', metric: 'iops', variant: 'base', op: 'between', range: [70000, 90000] }, 0, all).pass).toBe(true);
    expect(evaluateCheck({ label: '', metric: 'iops', variant: 'base', op: 'ratio_between', range: [0.2, 0.3], of: { step: 0 } }, 1, all).pass).toBe(true);
    const miss = evaluateCheck({ label: '', metric: 'iops', variant: 'after', op: 'gt', value: 1 }, 0, all);
    expect(miss.pass).toBe(false);
    expect(miss.problem).toMatch(/no value for after.iops/);
  });

  it('judges predictions within a factor', () => {
    const p = l.steps[0]!.prediction!;
    expect(judgePrediction(p, 6, all[0]!)?.verdict).toBe('close');
    expect(judgePrediction(p, 100, all[0]!)?.verdict).toBe('off');
    expect(judgePrediction(p, 100, all[0]!)?.message).toMatch(/11.1× lower than your 100 µs/);
    expect(judgePrediction(p, -1, all[0]!)).toBeNull();
    // a guess that reads as the simulated value is right, not "within 1.3x"
    const actual = all[0]!.base!.clat_p50_us!;
    expect(judgePrediction(p, actual, all[0]!)?.message).toMatch(/^Right: /);
    expect(judgePrediction(p, 6, all[0]!)?.message).toMatch(/^Close: /);
  });

  it('over seeds: checks, claims and the prediction read the median, or the statistic they name', () => {
    const step = { ...good().steps[0]!, scenario: { ...good().steps[0]!.scenario, seeds: 4 } };
    // four runs: 8, 9, 10, 13 µs (median 9.5, sd 2.16)
    const runs: StepMetrics[] = [8, 9, 10, 13].map((x) => ({ base: { clat_p50_us: x } }));
    const seeds: SeedMetrics = [runs];
    const med: StepMetrics[] = [{ base: { clat_p50_us: 9.5 } }];
    step.look = 'A median run of [[9.5 µs|base.clat_p50_us]], a spread of [[2.2 µs|base.clat_p50_us~sd]], at most [[13 µs|base.clat_p50_us~max]].';
    expect(checkStepClaims(step, 0, med, () => 'us', seeds).map((c) => c.ok)).toEqual([true, true, true]);
    step.look = 'A spread of [[3.2 µs|base.clat_p50_us~sd]].';
    expect(checkStepClaims(step, 0, med, () => 'us', seeds)[0]).toMatchObject({ ok: false, shown: '2.2 µs' });
    expect(checkStepClaims(step, 0, med, () => 'us')[0]!.problem).toMatch(/~sd reads runs over seeds/);
    expect(evaluateCheck({ label: '', metric: 'clat_p50_us', variant: 'base', op: 'between', range: [2, 2.3], stat: 'sd' }, 0, med, seeds).pass).toBe(true);
    const p = { ...step.prediction!, stat: 'sd' as const };
    expect(predictionMetrics(p, 0, med, seeds)?.base?.clat_p50_us).toBeCloseTo(2.16, 2);
    expect(predictionMetrics(step.prediction!, 0, med, seeds)?.base?.clat_p50_us).toBe(9.5);
    expect(predictionMetrics(p, 0, med)).toBeUndefined();
    expect(judgePrediction(p, 2, predictionMetrics(p, 0, med, seeds)!)?.verdict).toBe('close');
  });
});

describe('parseGuess', () => {
  it('reads numbers as people type them', () => {
    expect(parseGuess('150000')).toBe(150000);
    expect(parseGuess(' 150,000 ')).toBe(150000);
    expect(parseGuess('150 000')).toBe(150000);
    expect(parseGuess('1_500_000.5')).toBe(1500000.5);
    expect(parseGuess('150k')).toBe(150000);
    expect(parseGuess('1.5M')).toBe(1500000);
    expect(parseGuess('2e5')).toBe(200000);
    expect(parseGuess('.5')).toBe(0.5);
    expect(parseGuess('12 ms', 'ms')).toBe(12);
    expect(parseGuess('120k IO/s', 'IO/s')).toBe(120000);
    expect(parseGuess('40µs', 'µs')).toBe(40);
  });
  it('refuses what is not a finite positive number', () => {
    for (const bad of ['', 'abc', '-5', '0', '1e999', 'Infinity', '1,5', '12,34,567', '12 apples', '12 ms', '1.2.3', 'k', '5kk'])
      expect(parseGuess(bad, bad === '12 ms' ? 'IO/s' : undefined), bad).toBeNull();
  });
});
