/*
 * The headline of a noisy figure (issue 31 item 4): one run of a noisy
 * process is never shown alone. Without the runs over the seeds it says it
 * is one run and states no direction; with them its bars are the medians,
 * each with its 5-95% whisker and this run as a dot, and the change in
 * words is the medians' (here the opposite of this one run's).
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ExperimentInfo, RunResult } from '../../engine/types';
import { isNoisy, seedSpread, SPREAD_MIN } from '../../model/noisy';
import type { SeedRuns } from '../../model/spread';
import { Headline, layoutHeadline } from './Headline';

const info: ExperimentInfo = {
  name: 'demo',
  seed: '001',
  title: 'Demo',
  variants: ['before', 'after'],
  params: [{ name: 'files', type: 'int', default: 100, min: 1, help: '' }],
  metrics: ['create_max_ms', 'delete_max_ms', 'ops'],
  metricInfo: [
    { name: 'create_max_ms', unit: 'ms', help: 'slowest create' },
    { name: 'delete_max_ms', unit: 'ms', help: 'slowest delete' },
    { name: 'ops', unit: 'count', help: 'operations' },
  ],
  published: [
    { variant: 'before', params: {}, metric: 'delete_max_ms', value: 119, source: 'seed 001', tolerance: 0.25, noisy: true },
    { variant: 'after', params: {}, metric: 'delete_max_ms', value: 78, source: 'seed 001', tolerance: 0.25, noisy: true },
  ],
};
const res = (m: Record<string, number>): RunResult => ({ metrics: m, simNs: 1e9, events: 1, details: {}, wallMs: 1 });
// this run (seed 1): creates slower after; over the seeds: faster after
const runs = { before: res({ create_max_ms: 232, delete_max_ms: 100, ops: 5 }), after: res({ create_max_ms: 457, delete_max_ms: 80, ops: 5 }) };
const seeds: SeedRuns[] = Array.from({ length: 20 }, (_, i) => ({
  seed: i + 1,
  runs: i === 0 ? runs : { before: res({ create_max_ms: 500 + 10 * i, delete_max_ms: 110 + i, ops: 5 }), after: res({ create_max_ms: 380 + 5 * i, delete_max_ms: 75 + i, ops: 5 }) },
}));
const noisy = (m: string): boolean => isNoisy(info, m, {}, ['create_max_ms']);
const metrics = info.metricInfo;
const label = (m: { name: string }): string => m.name;

describe('noisy figures', () => {
  it('a metric is noisy when declared, or published as noisy at this setting', () => {
    expect(noisy('create_max_ms')).toBe(true);
    expect(noisy('delete_max_ms')).toBe(true);
    expect(noisy('ops')).toBe(false);
    expect(seedSpread(seeds.slice(0, SPREAD_MIN - 1), 'before', 'create_max_ms')).toBeNull();
    expect(seedSpread(seeds, 'before', 'create_max_ms')!.p50).toBe(595); // seeds 2-20: 520..690, and 232
  });

  it('one run alone: said to be one run, no direction in words, no arrow between the noisy values', () => {
    const html = renderToStaticMarkup(<Headline info={info} params={{}} runs={runs} metrics={metrics} label={label} noisy={noisy} spread={{ rows: seeds.slice(0, 3), state: 'running', total: 20 }} />);
    expect(html).not.toContain('data-testid="headline-change"');
    expect(html).toContain('data-testid="headline-one-run"');
    expect(html).toContain('3 of 20 done');
    expect(html).toContain('data-spread="one-run"');
    expect(html).not.toContain('headline-band-');
    expect(html).toContain('data-testid="headline-noisy-one-run"');
    expect(html).not.toMatch(/delete_max_ms:.*→/);
  });

  it('with the seeds: medians, whiskers, this run as a dot, the medians\' direction (not this run\'s)', () => {
    const html = renderToStaticMarkup(<Headline info={info} params={{}} runs={runs} metrics={metrics} label={label} noisy={noisy} spread={{ rows: seeds, state: 'done', total: 20 }} seed={1} />);
    expect(html).toContain('data-spread="median"');
    expect(html).toContain('median of 20 runs');
    expect(html).toMatch(/data-testid="headline-change">[^<]*· after: [^<]*less/); // 600 -> ~428: less, though this run went 232 -> 457
    expect(html).toContain('data-testid="headline-band-before"');
    expect(html).toContain('data-testid="headline-run-after"');
    expect(html).toContain('this run (random seed 1)');
    // the other noisy figure: a strip over the seeds with its published line, the medians in words
    expect(html).toContain('data-testid="headline-strip-delete_max_ms"');
    expect(html).toContain('data-testid="median-before-delete_max_ms"');
    expect(html).toContain('seed-published');
    expect(html).toContain('data-current="1"');
    // a figure that is not noisy stays a plain pair
    expect(html).toContain('data-testid="value-after-ops"');
  });

  it('the bars of medians share their scale with the whiskers and this run', () => {
    const m = metrics[0]!;
    const L = layoutHeadline(m, [{ variant: 'before', value: 600, band: [500, 1000], run: 232, published: [] }, { variant: 'after', value: 428, band: [390, 470], run: 457, published: [] }], 800, 16);
    const [b, a] = L.bars;
    expect(b!.band!.x1).toBeLessThanOrEqual(800 - L.margin.right + 0.5); // the whisker inside the plot
    expect(b!.run!.x).toBeLessThan(b!.x1); // this run left of the median
    expect(a!.run!.x).toBeGreaterThan(a!.x1);
    expect(b!.labelX).toBeGreaterThanOrEqual(b!.labelInside ? 0 : b!.band!.x1); // a label outside clears the whisker
  });
});
