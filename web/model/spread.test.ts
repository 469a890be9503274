import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../engine/node';
import type { ExperimentInfo } from '../engine/types';
import { evaluateCheck, statMetrics, type StepMetrics } from './lessonChecks';
import { validateLesson } from './lessonFormat';
import { layoutStrip } from './seedStrip';
import { quantileSorted, seedsCsv, seedsJson, spreadOf, valuesOf, varies, type SeedRuns } from './spread';

describe('spreadOf', () => {
  it('gives the engine test values (type 7 quantiles, sample sd)', () => {
    const s = spreadOf(Array.from({ length: 20 }, (_, i) => 20 - i))!;
    expect(s.n).toBe(20);
    expect(s.mean).toBeCloseTo(10.5, 12);
    expect(s.sd).toBeCloseTo(Math.sqrt(35), 12);
    expect(s.p5).toBeCloseTo(1.95, 12);
    expect(s.p50).toBeCloseTo(10.5, 12);
    expect(s.p95).toBeCloseTo(19.05, 12);
    expect([s.min, s.max]).toEqual([1, 20]);
  });
  it('one value, none, non-finite ones', () => {
    expect(spreadOf([7])).toMatchObject({ n: 1, sd: 0, p5: 7, p95: 7 });
    expect(spreadOf([])).toBeNull();
    expect(spreadOf([NaN, 3, Infinity])?.n).toBe(1);
    expect(quantileSorted([1, 2], 1)).toBe(2);
  });
});

const info = {
  name: 'x',
  variants: ['before', 'after'],
  metricInfo: [
    { name: 'ms', unit: 'ms', help: 'time' },
    { name: 'n', unit: 'count', help: 'calls' },
  ],
} as unknown as ExperimentInfo;
const rows: SeedRuns[] = [3, 1, 2].map((k, i) => ({
  seed: 5 + i,
  runs: {
    before: { metrics: { ms: 10 * k, n: 4 }, simNs: 0, events: 0, details: {}, wallMs: 0 },
    after: { metrics: { ms: 5 * k, n: 4 }, simNs: 0, events: 0, details: {}, wallMs: 0 },
  },
}));

describe('runs over seeds', () => {
  it('values, what varies, and the exports', () => {
    expect(valuesOf(rows, 'before', 'ms')).toEqual([30, 10, 20]);
    expect(varies(rows, ['before', 'after'], 'ms')).toBe(true);
    expect(varies(rows, ['before', 'after'], 'n')).toBe(false);
    const csv = seedsCsv(info, rows, (m) => m).trim().split('\n');
    expect(csv[0]).toBe('metric,label,unit,variant,n,mean,sd,p5,p50,p95,min,max,seed 5,seed 6,seed 7');
    expect(csv[1]).toMatch(/^ms,ms,ms,before,3,20,10,11,20,29,10,30,30,10,20$/);
    const doc = JSON.parse(seedsJson(info, {}, 'on', rows));
    expect(doc.seeds).toBe(3);
    expect(doc.seed).toBe(5);
    expect(doc.runs.after.metrics.ms).toBe(10);
    expect(doc.runs.after.spread.ms).toMatchObject({ n: 3, p50: 10, min: 5, max: 15 });
    expect(doc.runs.after.values.ms).toEqual([15, 5, 10]);
  });

  it('the strip: a dot per run, the band and median on one axis for both kernels, the published line', () => {
    const l = layoutStrip(
      [
        { variant: 'before', values: valuesOf(rows, 'before', 'ms').map((value, i) => ({ seed: i, value })), published: 100 },
        { variant: 'after', values: valuesOf(rows, 'after', 'ms').map((value, i) => ({ seed: i, value })), published: 10 },
      ],
      600,
      16,
      'time',
      'ms',
    );
    expect(l.xTitle).toBe('time (ms)');
    expect(l.rows.map((r) => r.dots.length)).toEqual([3, 3]);
    const [b, a] = l.rows;
    // one axis: equal values sit at equal x in both rows
    expect(b!.dots.find((d) => d.value === 10)!.x).toBeCloseTo(a!.dots.find((d) => d.value === 10)!.x, 9);
    expect(b!.band!.x0).toBeLessThan(b!.median!);
    expect(b!.median!).toBeLessThan(b!.band!.x1);
    expect(b!.published).toMatchObject({ value: 100, inside: false });
    expect(a!.published).toMatchObject({ value: 10, inside: true });
    // the published line is inside the chart
    expect(b!.published!.x).toBeLessThanOrEqual(600 - l.margin.right + 1e-9);
    // equal runs are stacked, not drawn on top of each other
    const same = layoutStrip([{ variant: 'after', values: [1, 2, 3].map((seed) => ({ seed, value: 7 })) }], 600, 16, 't', '');
    const ys = same.rows[0]!.dots.map((d) => d.y);
    expect(new Set(ys).size).toBe(3);
  });
});

describe('a lesson check over seeds', () => {
  const per: StepMetrics[] = [
    { before: { ms: 10 }, after: { ms: 9 } },
    { before: { ms: 12 }, after: { ms: 11 } },
    { before: { ms: 11 }, after: { ms: 12 } },
  ];
  const all = [statMetrics(per)];
  it('atLeast counts the runs it holds in, each seed\'s kernels together', () => {
    const c = { label: 'after below before', metric: 'ms', variant: 'after' as const, op: 'ratio_lt' as const, value: 1, of: { variant: 'before' as const } };
    expect(evaluateCheck({ ...c, atLeast: 2 }, 0, all, [per])).toMatchObject({ pass: true, actual: 2 });
    expect(evaluateCheck({ ...c, atLeast: 3 }, 0, all, [per])).toMatchObject({ pass: false, actual: 2 });
    expect(evaluateCheck({ ...c, atLeast: 2 }, 0, all, [])).toMatchObject({ pass: false });
  });
  it('stat reads a statistic of the runs; without either, the medians', () => {
    expect(all[0]?.before?.ms).toBe(11);
    expect(evaluateCheck({ label: 'max', metric: 'ms', variant: 'before', op: 'lt', value: 12.5, stat: 'max' }, 0, all, [per]).pass).toBe(true);
    expect(evaluateCheck({ label: 'max', metric: 'ms', variant: 'before', op: 'lt', value: 11.5, stat: 'max' }, 0, all, [per]).pass).toBe(false);
    expect(evaluateCheck({ label: 'median', metric: 'ms', variant: 'before', op: 'lt', value: 11.5 }, 0, all, [per]).pass).toBe(true);
  });
  it('the format: seeds, atLeast, stat, variation', () => {
    const lesson = (scenario: Record<string, unknown>, check: Record<string, unknown>) => ({
      id: 'd', title: 'D', short: 'D', seed: '-', summary: 'S',
      steps: [{ title: 'T', text: 'x', watch: 'x', look: 'x', why: 'x', scenario: { experiment: 'e', variants: ['before', 'after'], params: {}, seed: 1, ...scenario }, checks: [{ label: 'l', metric: 'ms', variant: 'after', op: 'lt', value: 1, ...check }] }],
    });
    expect(validateLesson(lesson({ seeds: 20 }, { atLeast: 18 }))).toEqual([]);
    expect(validateLesson(lesson({ seeds: 20, variation: 'off' }, { stat: 'p95' }))).toEqual([]);
    expect(validateLesson(lesson({}, { atLeast: 18 })).join()).toMatch(/give the scenario "seeds"/);
    expect(validateLesson(lesson({ seeds: 20 }, { atLeast: 21 })).join()).toMatch(/atLeast/);
    expect(validateLesson(lesson({ seeds: 20 }, { stat: 'p99' })).join()).toMatch(/stat: must be one of/);
    expect(validateLesson(lesson({ seeds: 20 }, { stat: 'p5', atLeast: 3 })).join()).toMatch(/not both/);
    expect(validateLesson(lesson({ seeds: 1 }, {})).join()).toMatch(/seeds: must be/);
    expect(validateLesson(lesson({ variation: 'maybe' }, {})).join()).toMatch(/variation: must be/);
  });
});

describe('the page and the CLI agree on the same runs', () => {
  it('spreadOf over the bridge runs = lab run --seeds (WASM CLI)', async () => {
    const b = await loadNodeBridge();
    const params = { state: 'delalloc', file_mib: '4', dirty_expire_s: '1', wb_interval_s: '0.5' };
    const spec = (seed: number) => ({ experiment: 'sparse-cp', variant: 'after' as const, params, seed });
    const cp = [4, 5, 6, 7].map((s) => b.run(spec(s)).metrics.cp_ms!);
    const root = fileURLToPath(new URL('../../', import.meta.url));
    const args = ['cli/lab.mjs', 'run', 'sparse-cp', '--variant', 'after', '--seed', '4', '--seeds', '4', '--json', ...Object.entries(params).flatMap(([k, v]) => ['--set', `${k}=${v}`])];
    const r = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const cli = JSON.parse(r.stdout).runs.after.spread.cp_ms;
    const web = spreadOf(cp)!;
    // the engine prints 10 significant digits
    for (const k of ['mean', 'sd', 'p5', 'p50', 'p95', 'min', 'max'] as const) expect(web[k]).toBeCloseTo(cli[k], 6);
    // and variation off is the deterministic model: one phase for every seed
    const off = [4, 5].map((s) => b.run({ ...spec(s), variation: 'off' }).metrics.delalloc_extents_at_cp);
    expect(off[0]).toBe(off[1]);
  });
});
