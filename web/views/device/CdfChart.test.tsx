/*
 * Snapshot of a drawn picture (cf. Observable Plot's tests): the CDF chart
 * for a fixed input, rendered to SVG markup with numbers rounded to 0.1 px,
 * compared with the committed file. A change to the drawing shows up as a
 * readable SVG diff.
 */
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { CdfChart } from './CdfChart';

const normalise = (svg: string): string => svg.replace(/-?\d+\.\d+/g, (n) => String(Math.round(Number(n) * 10) / 10)).replace(/></g, '>\n<');

describe('CdfChart', () => {
  it('draws axes, a simulated line and measured markers', async () => {
    const html = renderToStaticMarkup(
      <CdfChart
        height={360}
        series={[
          {
            id: 'sim',
            label: 'simulated',
            color: '#009E73',
            points: [
              { p: 0.01, us: 8 },
              { p: 0.5, us: 10 },
              { p: 0.9, us: 11.5 },
              { p: 0.99, us: 55 },
              { p: 0.999, us: 104 },
            ],
          },
        ]}
        measured={[
          { p: 0.5, us: 9, label: 'p50' },
          { p: 0.99, us: 48, label: 'p99' },
        ]}
        measuredLabel="fixture"
      />,
    );
    expect(html).toContain('data-testid="cdf-line-sim"');
    expect((html.match(/data-testid="cdf-marker"/g) ?? []).length).toBe(2);
    await expect(normalise(html)).toMatchFileSnapshot('./__snapshots__/CdfChart.svg.html');
  });

  it('draws the same job\'s other measured runs hollow, inside the x domain', () => {
    const html = renderToStaticMarkup(
      <CdfChart
        height={300}
        series={[{ id: 'sim', label: 'simulated', color: '#009E73', points: [{ p: 0.5, us: 4400 }, { p: 0.99, us: 7800 }] }]}
        measured={[{ p: 0.99, us: 18744, label: 'p99' }]}
        others={[
          { p: 0.5, us: 4555, label: 'p50' },
          { p: 0.99, us: 53740, label: 'p99' },
        ]}
        othersLabel="5G/4k_w_9.txt"
      />,
    );
    expect((html.match(/data-testid="cdf-marker-other"/g) ?? []).length).toBe(2);
    expect((html.match(/data-testid="cdf-marker"/g) ?? []).length).toBe(1);
    expect(html).toContain('53.7 ms');
    expect(html).toContain('in another run: 53.7 ms (5G/4k_w_9.txt)');
  });
});
