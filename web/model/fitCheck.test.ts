/*
 * The device view's measured-point check: reading a profile's points from
 * the fio experiment's published rows, scoring a run against them as the C
 * test does, and laying out the error chart.
 */
import { describe, expect, it } from 'vitest';
import type { PublishedRow } from '../engine/types';
import { distinctJobs, layoutErrors, measuredPoints, replicateAgreement, scorePoint, summarise } from './fitCheck';

const row = (device: string, job: [string, number, number, number], metric: string, value: number, source: string, tolerance: number): PublishedRow => ({
  variant: 'base',
  params: { device, rw: job[0], bs: job[1], iodepth: job[2], numjobs: job[3] },
  metric,
  value,
  source,
  tolerance,
});
const point = (device: string, job: [string, number, number, number], v: [number, number, number], source: string, tol: number): PublishedRow[] => [
  row(device, job, 'iops', v[0], source, tol),
  row(device, job, 'clat_p50_us', v[1], source, tol),
  row(device, job, 'clat_p99_us', v[2], source, tol),
];

const rows: PublishedRow[] = [
  ...point('d', ['randread', 4096, 1, 1], [10000, 90, 120], 'a.txt', 0.1),
  ...point('d', ['randread', 4096, 128, 1], [300000, 400, 900], 'b.txt', 0.1),
  ...point('d', ['randread', 4096, 128, 1], [290000, 420, 950], 'b2.txt [not fitted: held out: the replicate run]', -1),
  ...point('d', ['randwrite', 4096, 128, 9], [200000, 5000, 50000], 'c.txt [not fitted: outside the model: p99 > 6 x p50, a stall]', -1),
  ...point('other', ['randread', 4096, 1, 1], [1, 1, 1], 'z.txt', 0.1),
];

describe('fit check model', () => {
  it('reads one point per measured run of the profile, with its status and why', () => {
    const pts = measuredPoints(rows, 'd');
    expect(pts).toHaveLength(4);
    expect(pts.map((p) => p.status)).toEqual(['fitted', 'fitted', 'held out', 'outside the model']);
    expect(pts[2]).toMatchObject({ source: 'b2.txt', why: 'held out: the replicate run', iops: 290000, p50: 420, p99: 950 });
    expect(distinctJobs(pts)).toHaveLength(3); // the replicates share one run
  });

  it('scores a point within 15% only when IOPS, median and p99 all are', () => {
    const [p] = measuredPoints(rows, 'd');
    const ok = scorePoint(p!, { iops: 11000, clat_p50_us: 80, clat_p99_us: 135 });
    expect(ok.within).toBe(true);
    expect(ok.err.iops).toBeCloseTo(0.1);
    const bad = scorePoint(p!, { iops: 11000, clat_p50_us: 80, clat_p99_us: 140 }); // p99 +16.7%
    expect(bad.within).toBe(false);
    expect(scorePoint(p!, {}).within).toBe(false); // a run without the metrics is not a pass
    const sums = summarise([ok, bad]);
    expect(sums.find((s) => s.status === 'fitted')).toEqual({ status: 'fitted', points: 2, within: 1 });
  });

  it('lays out errors on a clipped axis with the 15% band', () => {
    const pts = measuredPoints(rows, 'd');
    const scored = [
      scorePoint(pts[0]!, { iops: 10000, clat_p50_us: 90, clat_p99_us: 120 }),
      scorePoint(pts[3]!, { iops: 200000, clat_p50_us: 5000, clat_p99_us: 5000 }), // p99 -90%
    ];
    const L = layoutErrors(scored, 'p99', 600, 230);
    expect(L.dots).toHaveLength(2);
    const [a, b] = L.dots;
    expect(a!.clipped).toBe(false);
    expect(a!.y).toBeCloseTo(L.zero);
    expect(b!.clipped).toBe(true);
    expect(b!.err).toBeCloseTo(-0.9);
    expect(b!.y).toBeGreaterThan(L.band[1]); // below the band, at the edge
    expect(a!.x).toBeLessThan(b!.x); // 120 us left of 50 ms
    for (let i = 1; i < L.xTicks.length; i++) expect(L.xTicks[i]!.pos - L.xTicks[i - 1]!.pos).toBeGreaterThanOrEqual(60);
  });

  it('compares the drive with itself on the jobs measured twice', () => {
    // b2 is within 15% of b on all three: one pair, agreeing
    expect(replicateAgreement(measuredPoints(rows, 'd'))).toEqual({ pairs: 1, within: 1 });
    const far = [...rows, ...point('d', ['randwrite', 4096, 128, 9], [190000, 5100, 18000], 'c2.txt', 0.1)];
    // c2's p99 is 64% below c's: a second pair, not agreeing
    expect(replicateAgreement(measuredPoints(far, 'd'))).toEqual({ pairs: 2, within: 1 });
    expect(replicateAgreement(measuredPoints(rows, 'other'))).toEqual({ pairs: 0, within: 0 });
  });
});
