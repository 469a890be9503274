/*
 * The untar's fill sweep: its points for a file system, a row from two
 * runs' metrics, where the regression starts, and the chart's layout; then
 * on the real engine (the WASM bridge): a twentieth of the tree on 64 GiB,
 * where 5.10 loses only once the limit falls below what the untar
 * reserves unhindered.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../../engine/node';
import type { Bridge } from '../../engine/bridge';
import { biteAt, fillPoints, fillRow, layoutFillSweep, unhinderedGib, type FillRow } from './fill';

const row = (usedGib: number, limitGib: number, peakGib: number, beforeS: number, afterS: number, cyclesBefore = 0): FillRow => ({
  usedGib,
  limitGib,
  peakGib,
  beforeS,
  afterS,
  cyclesBefore,
  cyclesAfter: 0,
});

describe('untar fill sweep, pure', () => {
  it('points: shares of the file system and the page value, below its size', () => {
    expect(fillPoints(64)).toEqual(['0', '16', '32', '40', '48', '52', '56', '57']);
    expect(fillPoints(2048, 1776)).toEqual(['0', '512', '1024', '1280', '1536', '1664', '1776', '1792', '1843']);
    expect(fillPoints(64, 70)).toEqual(fillPoints(64));
    expect(fillPoints(1)).toEqual([]);
    expect(fillPoints(Number.NaN)).toEqual([]);
  });
  it('a row from the two runs; NaN for what is missing', () => {
    const r = fillRow('48', { overcommit_limit_gib: 2.75, elapsed_s: 3.9, reclaim_cycles: 200 }, { peak_may_use_gib: 2.7, elapsed_s: 1.94, reclaim_cycles: 20 });
    expect(r).toEqual({ usedGib: 48, limitGib: 2.75, peakGib: 2.7, beforeS: 3.9, afterS: 1.94, cyclesBefore: 200, cyclesAfter: 20 });
    expect(Number.isNaN(fillRow('0', {}, {}).beforeS)).toBe(true);
  });
  it('where it bites, what the untar reserves unhindered, and the mark between the rows', () => {
    const rows = [row(0, 8.75, 7, 1.93, 1.93), row(16, 6.75, 6.7, 2.26, 1.93, 150), row(32, 4.75, 4.7, 3.08, 1.93, 300), row(8, 7.75, 7, 1.94, 1.93)];
    expect(biteAt(rows)).toBe(16);
    expect(biteAt([row(0, 9, 7, 1, 1)])).toBeUndefined();
    expect(unhinderedGib(rows)).toBe(7);
    const L = layoutFillSweep(rows, 800, 300, 16);
    expect(L.series.map((s) => s.points.length)).toEqual([4, 4]);
    // x grows with the fill; the before line sits above the after line where it bites
    const pb = L.series[0]!.points;
    expect(pb.map((p) => p.row.usedGib)).toEqual([0, 8, 16, 32]);
    expect(pb[3]!.y).toBeLessThan(L.series[1]!.points[3]!.y);
    // the limit crosses 7 GiB between 8 (7.75) and 16 (6.75): at 8 + 0.75 x 8 = 14
    expect(L.cross?.used).toBeCloseTo(14, 6);
    expect(L.cross!.x).toBeGreaterThan(pb[1]!.x);
    expect(L.cross!.x).toBeLessThan(pb[2]!.x);
    expect(layoutFillSweep([], 800, 300, 16).series[0]!.points).toEqual([]);
  });
});

describe('untar fill sweep on the real engine', () => {
  let b: Bridge;
  beforeAll(async () => {
    b = await loadNodeBridge();
  });
  it('a twentieth of the tree on 64 GiB: the regression appears once the limit is below the reservations', () => {
    const params = { scale: '0.05', fs_gib: '64', decompress: 'zstd' };
    const rows = ['0', '16', '48'].map((u) => {
      const [bm, am] = (['before', 'after'] as const).map((variant) => b.run({ experiment: 'untar', variant, params: { ...params, fs_used_gib: u }, seed: 1 }).metrics);
      return fillRow(u, bm ?? {}, am ?? {});
    });
    const [fresh, mid, full] = rows as [FillRow, FillRow, FillRow];
    // fresh: the limit (8.75 GiB) is above what 11,300 files reserve: no cycle, a tie
    expect(fresh.limitGib).toBeGreaterThan(fresh.peakGib);
    expect(fresh.cyclesBefore).toBe(0);
    expect(fresh.beforeS).toBeCloseTo(fresh.afterS, 6);
    // more of the device in chunks: a lower limit, below the reservations, and 5.10 loses more
    expect(mid.limitGib).toBeLessThan(fresh.peakGib);
    expect(full.limitGib).toBeLessThan(mid.limitGib);
    expect(mid.beforeS / mid.afterS).toBeGreaterThan(1.05);
    expect(full.beforeS / full.afterS).toBeGreaterThan(mid.beforeS / mid.afterS);
    expect(biteAt(rows)).toBe(16);
    expect(unhinderedGib(rows)).toBeCloseTo(fresh.peakGib, 6);
  });
});
