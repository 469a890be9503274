import { describe, expect, it } from 'vitest';
import { formatUs, layoutCdf, nines, quantilesOf } from './cdf';

describe('cdf layout', () => {
  it('maps percentiles to equal steps on the nines scale', () => {
    expect(nines(0)).toBe(0);
    expect(nines(0.9)).toBeCloseTo(1, 12);
    expect(nines(0.99)).toBeCloseTo(2, 12);
    expect(nines(0.999)).toBeCloseTo(3, 12);
  });

  it('pads the log-x domain to decades around all points and places markers', () => {
    const L = layoutCdf({
      width: 800,
      height: 400,
      series: [{ id: 'sim', label: 'simulated', points: [{ p: 0.01, us: 7 }, { p: 0.5, us: 9 }, { p: 0.99, us: 48 }, { p: 1, us: 900 }] }],
      measured: [{ p: 0.5, us: 9, label: 'p50' }, { p: 0.999, us: 86, label: 'p99.9' }],
    });
    expect(L.domain).toEqual([1, 1000]);
    expect(L.xTicks.map((t) => t.label)).toEqual(['1', '10', '100', '1,000']);
    expect(L.yTicks.map((t) => t.label)).toEqual(['p0', 'p50', 'p90', 'p99', 'p99.9']);
    // p = 1 is dropped from the path: three points, so "M" + two "L"
    expect((L.paths[0]?.d.match(/L/g) ?? []).length).toBe(2);
    const [m50, m999] = L.markers;
    expect(m50?.x).toBeLessThan(m999?.x ?? 0);
    expect(m50?.y).toBeGreaterThan(m999?.y ?? Infinity); // higher percentile is higher up
    // the decade ticks are evenly spaced on a log axis
    const gaps = L.xTicks.slice(1).map((t, i) => t.pos - (L.xTicks[i]?.pos ?? 0));
    for (const g of gaps) expect(g).toBeCloseTo(gaps[0] ?? 0, 6);
  });

  it('places another run\'s markers with their labels clear of the first run\'s', () => {
    const L = layoutCdf({
      width: 800,
      height: 400,
      series: [],
      measured: [{ p: 0.5, us: 4752, label: 'p50' }, { p: 0.99, us: 18744, label: 'p99' }, { p: 0.9, us: 6456, label: 'p90' }],
      others: [{ p: 0.5, us: 4555, label: 'p50' }, { p: 0.99, us: 53740, label: 'p99' }, { p: 0.9999, us: 1e5, label: 'p99.99' }],
    });
    expect(L.domain).toEqual([1000, 100000]); // the other run's 53.7 ms is inside
    const side = (ms: typeof L.markers, label: string) => ms.find((m) => m.label === label)?.side;
    // p50: the other run is left of the first: labels outwards, left and right
    expect([side(L.otherMarkers, 'p50'), side(L.markers, 'p50')]).toEqual(['left', 'right']);
    // p99: the other run is right of the first: the two swap sides
    expect([side(L.markers, 'p99'), side(L.otherMarkers, 'p99')]).toEqual(['left', 'right']);
    expect(side(L.markers, 'p90')).toBe('right'); // alone on its row
    expect(L.otherMarkers.map((m) => m.label)).toEqual(['p50', 'p99']); // p99.99 is above the chart
  });

  it('adds 2x and 5x ticks when the axis spans few decades', () => {
    const L = layoutCdf({ width: 600, height: 300, series: [{ id: 's', label: 's', points: [{ p: 0.5, us: 300 }, { p: 0.99, us: 700 }] }], measured: [] });
    expect(L.domain).toEqual([100, 1000]);
    expect(L.xTicks.map((t) => t.label)).toEqual(['100', '200', '500', '1,000']); // one unit, in the title
    expect(L.xTitle).toBe('completion latency, log scale (µs)');
  });

  it('formats microseconds for tick labels', () => {
    expect(formatUs(10)).toBe('10 µs');
    expect(formatUs(1000)).toBe('1 ms');
    expect(formatUs(2.5e6)).toBe('2.5 s');
  });

  it('computes nearest-rank quantiles', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantilesOf(xs, [0.5, 0.99, 1])).toEqual([{ p: 0.5, us: 50 }, { p: 0.99, us: 99 }, { p: 1, us: 100 }]);
  });
});
