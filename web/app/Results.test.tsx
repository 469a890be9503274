/*
 * The results framework on a fixture: before and after panels, the metrics
 * table with a provenance tag on every simulated number, and a published
 * value beside the simulated one only when the run's parameters match.
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ExperimentInfo, RunResult } from '../engine/types';
import { Results } from './Results';

const info: ExperimentInfo = {
  name: 'demo',
  seed: '002',
  title: 'Demo',
  variants: ['before', 'after'],
  params: [{ name: 'threshold', type: 'int-or-inf', default: 4096, min: 1, help: '' }],
  metrics: ['account_max_ms', 'commits'],
  metricInfo: [
    { name: 'account_max_ms', unit: 'ms', help: 'longest call' },
    { name: 'commits', unit: 'count', help: 'commits' },
  ],
  published: [
    { variant: 'before', params: {}, metric: 'account_max_ms', value: 770, source: 'seed 002, row inf', tolerance: 0.25 },
    { variant: 'after', params: { threshold: 4096 }, metric: 'account_max_ms', value: 146, source: 'seed 002, row 4K', tolerance: 0.25 },
  ],
};
const run = (ms: number, commits: number): RunResult => ({ metrics: { account_max_ms: ms, commits }, simNs: 1e9, events: 10, details: {}, wallMs: 3 });

const render = (params: Record<string, string>) =>
  renderToStaticMarkup(
    <Results info={info} params={params} variants={info.variants} runs={{ before: run(745, 1), after: run(151, 5) }} emphasis="after" stale={false} />,
  );

describe('Results', () => {
  it('opens with the headline comparison, then the table with the change and the matching published rows', () => {
    const html = render({ threshold: '4096' });
    expect(html.indexOf('data-testid="headline"')).toBeLessThan(html.indexOf('data-testid="metrics"'));
    expect(html).toContain('data-testid="headline-bar-before"');
    expect(html).toContain('data-testid="headline-bar-after"');
    expect(html).toContain('4.93× less');
    expect(html).toContain('data-testid="published-before-account_max_ms"');
    expect(html).toContain('data-testid="published-after-account_max_ms"');
    expect(html).toContain('seed 002, row 4K');
    expect(html).toMatch(/sim \+3\.4%/); // 151 vs 146
    expect((html.match(/tag-simulated/g) ?? []).length).toBeGreaterThanOrEqual(4); // every simulated cell + legend
    // what belongs to a kernel says so: emphasis (e) dims the other kernel's marks by CSS
    expect(html).toMatch(/<th[^>]*data-variant="before"/);
    expect(html).toMatch(/<td[^>]*col-dim[^>]*data-variant="before"/);
  });

  it('collapses the table to the rows that differ or have a published figure, the rest behind "show all"', () => {
    const html = renderToStaticMarkup(
      <Results info={info} params={{ threshold: '8192' }} variants={info.variants} runs={{ before: run(745, 5), after: run(150, 5) }} emphasis="none" stale={false} />,
    );
    expect(html).toMatch(/data-testid="metric-commits" data-differs="false" hidden=""/);
    expect(html).toMatch(/data-testid="metric-account_max_ms" data-differs="true"/);
    expect(html).toContain('Show all 2 metrics (1 the same in both kernels)');
  });

  it('hides a row whose own parameters differ, and sets apart one published at other settings', () => {
    const html = render({ threshold: '8192' });
    expect(html).not.toContain('data-testid="published-after-account_max_ms"');
    expect(html).toContain('data-testid="published-before-account_max_ms" data-exact="false"');
    expect(html).toContain('(compared at the default threshold=4096; this run differs)');
    expect(html).not.toMatch(/\(sim [^)]*%\)/); // no error figure for an unlike comparison
  });

  it("states no direction for a noisy figure's one run in the table; with the seeds, the medians' direction", () => {
    const noisyInfo: ExperimentInfo = {
      ...info,
      published: [{ variant: 'before', params: {}, metric: 'account_max_ms', value: 770, source: 'seed 002', tolerance: 0.25, noisy: true }],
    };
    const one = renderToStaticMarkup(<Results info={noisyInfo} params={{}} variants={info.variants} runs={{ before: run(100, 1), after: run(300, 5) }} emphasis="none" stale={false} />);
    expect(one).toMatch(/data-testid="change-account_max_ms"[^>]*>one run: no direction</);
    expect(one).toMatch(/data-testid="change-commits"[^>]*>5× more</); // not noisy: this run's change
    const rows = Array.from({ length: 12 }, (_, i) => ({ seed: i + 1, runs: { before: run(700 + i, 1), after: run(150 + i, 5) } }));
    const med = renderToStaticMarkup(
      <Results info={noisyInfo} params={{}} variants={info.variants} runs={{ before: run(100, 1), after: run(300, 5) }} emphasis="none" stale={false} spread={{ rows, state: 'done', total: 12 }} />,
    );
    expect(med).toMatch(/data-testid="change-account_max_ms"[^>]*>[\d.]+× less \(medians of 12 runs\)</);
  });
});
