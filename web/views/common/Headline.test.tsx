/*
 * The headline of a noisy figure (issue 31 item 4): one run of a noisy
 * process is never shown alone. Without the runs over the seeds it says it
 * is one run and states no direction; with them its bars are the medians,
 * each over a strip of the seeds' runs with their 5-95% band and this run
 * outlined, and the change in words is the medians' (here the opposite of
 * this one run's). A figure published as a mean ± sd (receive) is drawn
 * from the same seeds: the strip, and the published sd as a bracket.
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
    // the seeds so far are drawn as they come in, the bars stay this run's
    expect(html).toContain('data-testid="headline-seeds-before" data-n="3"');
    expect(html).toMatch(/data-testid="headline-bar-before" data-value="232"/);
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

  it('the bars of medians share their scale with the seeds, their band and this run', () => {
    const m = metrics[0]!;
    const pts = (vals: number[]) => vals.map((value, i) => ({ seed: i + 1, value }));
    const L = layoutHeadline(
      m,
      [
        { variant: 'before', value: 600, median: true, seeds: pts([232, 500, 600, 700, 1000]), current: 1, published: [] },
        { variant: 'after', value: 428, median: true, seeds: pts([457, 390, 428, 470, 400]), current: 1, published: [] },
      ],
      800,
      16,
    );
    const [b, a] = L.bars;
    expect(b!.seeds!.band!.x1).toBeLessThanOrEqual(800 - L.margin.right + 0.5); // the band inside the plot
    const cur = (bar: typeof b) => bar!.seeds!.dots.find((d) => d.current)!;
    expect(cur(b).x).toBeLessThan(b!.x1); // this run left of the median
    expect(cur(a).x).toBeGreaterThan(a!.x1);
    expect(b!.seeds!.y).toBeGreaterThan(b!.y + b!.h); // the strip under its bar, above the next row
    expect(b!.seeds!.y + b!.seeds!.h / 2).toBeLessThan(a!.y);
    expect(b!.median).toBe(true);
  });
});

describe('a published mean ± sd beside the seeds (receive)', () => {
  const rinfo: ExperimentInfo = {
    ...info,
    metrics: ['ops'],
    metricInfo: [{ name: 'ops', unit: 's', help: 'receive time' }],
    published: [
      { variant: 'before', params: {}, metric: 'ops', value: 10, sd: 1, runs: 5, source: 'seed 003', tolerance: 0.25 },
      { variant: 'after', params: {}, metric: 'ops', value: 4, sd: 0.5, runs: 5, source: 'seed 003', tolerance: 0.25 },
    ],
  };
  const rruns = { before: res({ ops: 9 }), after: res({ ops: 4.2 }) };
  const rseeds: SeedRuns[] = Array.from({ length: 20 }, (_, i) => ({ seed: i + 1, runs: { before: res({ ops: 9 + i * 0.05 }), after: res({ ops: 4.2 + i * 0.02 }) } }));
  const run = () => {};

  it('before Run ×20: the bracket on the bar, the button offered, no strip', () => {
    const html = renderToStaticMarkup(<Headline info={rinfo} params={{}} runs={rruns} metrics={rinfo.metricInfo} label={label} spread={{ rows: [], state: 'idle', total: 20, run }} seed={1} />);
    expect(html).toContain('data-testid="headline-published-sd-before"');
    expect(html).toContain('data-testid="headline-run-seeds"');
    expect(html).toContain('published mean ± one sd');
    expect(html).not.toContain('headline-seeds-before');
    expect(html).toContain('data-spread="none"');
  });

  it('after: a dot per seed, this run outlined, the band; the bars stay this run, the change is this run\'s', () => {
    const html = renderToStaticMarkup(<Headline info={rinfo} params={{}} runs={rruns} metrics={rinfo.metricInfo} label={label} spread={{ rows: rseeds, state: 'done', total: 20, run }} seed={1} />);
    expect(html).toContain('data-testid="headline-seeds-before" data-n="20"');
    expect(html.match(/class="headline-seed"/g)).toHaveLength(40);
    expect(html).toContain('data-testid="headline-run-after"');
    expect(html).toContain('data-testid="headline-band-after"');
    expect(html).toContain('data-spread="seeds"');
    expect(html).toMatch(/data-testid="headline-bar-before" data-value="9"/);
    expect(html).not.toContain('median of');
  });
});
