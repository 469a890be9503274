/*
 * The sparse-cp view's pure transforms, on a details object shaped as the
 * engine writes it, and on the real engine's output for a small file
 * (through the WASM bridge, as the app runs it).
 */
import { describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../../engine/node';
import { callNear, creationRow, layoutCallChart, layoutCreationSweep, layoutRecordsChart, layoutStrip, readSparseDetails, sweepSpawns } from './model';

const fixture = {
  state: 'cold',
  file_bytes: 8 * 8192,
  extent_bytes: 4096,
  hole_bytes: 4096,
  lseeks: {
    stride: 1,
    calls: [
      { t_ms: 0, off: 0, whence: 'data', lock_records: 10, search_records: 0, cache_hit: 0, cache_miss: 0, us: 5 },
      { t_ms: 0.1, off: 0, whence: 'hole', lock_records: 10, search_records: 2, cache_hit: 1, cache_miss: 0, us: 6 },
      { t_ms: 0.2, off: 8192, whence: 'data', lock_records: 8, search_records: 0, cache_hit: 0, cache_miss: 1, us: 4 },
      { t_ms: 0.3, off: 16384, whence: 'data', lock_records: 6, search_records: 0, cache_hit: 0, cache_miss: 0, us: 3 },
    ],
  },
  iotree_records: [
    [0, 10],
    [0.2, 8],
    [0.3, 'x'],
  ],
  summary: { create_s: 1.5, delalloc_extents_at_cp: 2 },
  strip: { buckets: 4, extents: [2, 2, 2, 2], delalloc: [0, 0, 1, 2] },
};

describe('sparse-cp view model', () => {
  it('reads the details, dropping malformed points', () => {
    const d = readSparseDetails(fixture);
    expect(d.calls).toHaveLength(4);
    expect(d.calls[1]!).toMatchObject({ whence: 'hole', searchRecords: 2, cacheHit: 1 });
    expect(d.iotree).toEqual([
      [0, 10],
      [0.2, 8],
      [0.3, 0],
    ]);
    expect(d.summary.delalloc_extents_at_cp).toBe(2);
    expect(readSparseDetails(undefined).calls).toEqual([]);
  });

  it('finds the call nearest an offset', () => {
    const d = readSparseDetails(fixture);
    expect(callNear(d.calls, 0)).toBe(0);
    expect(callNear(d.calls, 9000)).toBe(2);
    expect(callNear(d.calls, 1e9)).toBe(3);
    expect(callNear([], 5)).toBe(-1);
  });

  it('lays out the strip: half of each bucket is data, delalloc share per bucket', () => {
    const cells = layoutStrip(readSparseDetails(fixture), 400);
    expect(cells).toHaveLength(4);
    expect(cells[1]!.x).toBe(100);
    expect(cells[0]!.data).toBeCloseTo(0.5);
    expect(cells.map((c) => c.delalloc)).toEqual([0, 0, 0.5, 1]);
  });

  it('lays out the charts on shared axes', () => {
    const d = readSparseDetails(fixture);
    const c = layoutCallChart(d.calls, d.fileBytes, 400, 200, 1000);
    expect(c.dots).toHaveLength(4);
    expect(c.dots[0]!.x).toBeLessThan(c.dots[3]!.x);
    expect(c.dots[0]!.y).toBeLessThan(c.dots[3]!.y); // 5 µs is higher than 3 µs
    expect(c.yTicks.map((t) => t.label)).toContain('1,000');
    expect(c.yTitle).toBe('per lseek, log (µs)');
    const r = layoutRecordsChart(d.iotree, 400, 150);
    expect(r.path.startsWith('M')).toBe(true);
    expect(r.path.split('L')).toHaveLength(3);
  });

  it('draws the real engine: the cold cache before walks thousands of records per call, after a couple', async () => {
    const b = await loadNodeBridge();
    const spec = { experiment: 'sparse-cp', params: { file_mib: '8', state: 'cold' }, seed: 1 };
    const before = readSparseDetails(b.run({ ...spec, variant: 'before' }).details);
    const after = readSparseDetails(b.run({ ...spec, variant: 'after' }).details);
    expect(before.calls.length).toBeGreaterThan(100);
    const mid = callNear(before.calls, before.fileBytes / 2);
    expect(before.calls[mid]!.lockRecords).toBeGreaterThan(500);
    expect(after.calls[callNear(after.calls, after.fileBytes / 2)]!.lockRecords).toBeLessThan(3);
    expect(before.iotree.length).toBeGreaterThan(10);
    expect(Math.max(...before.iotree.map((p) => p[1]))).toBeGreaterThan(500);
    expect(layoutStrip(before, 300)).toHaveLength(256);
  });

  it('lays out the creation sweep: rows by creation time, published rows as lines on the same log axis', () => {
    expect(sweepSpawns(2000, 1933)).toEqual(['1900', '1950', '2000', '2050', '2100', '2150', '2200']);
    expect(sweepSpawns(NaN, 1933)).toContain('1933');
    const rows = [
      creationRow('2000', { create_s: 33, cp_ms: 9000, delalloc_extents_at_cp: 900 }, { cp_ms: 8950 }),
      creationRow('1900', { create_s: 31, cp_ms: 5000, delalloc_extents_at_cp: 400 }, { cp_ms: 4990 }),
      creationRow('1950', { create_s: 32 }, {}), // a failed run: no cp_ms
    ];
    const L = layoutCreationSweep(rows, [{ variant: 'before', value: 16574 }, { variant: 'after', value: 6277 }], 600, 260);
    const before = L.series.find((s) => s.variant === 'before')!;
    expect(before.points.map((p) => p.row.spawnUs)).toEqual([1900, 2000]);
    expect(before.points[0]!.x).toBeLessThan(before.points[1]!.x);
    expect(before.points[0]!.y).toBeGreaterThan(before.points[1]!.y); // 5 s below 9 s
    const [pb, pa] = L.refs;
    expect(pb!.y).toBeLessThan(pa!.y); // 16.6 s above 6.3 s
    expect(pa!.y).toBeLessThan(before.points[0]!.y); // 6.3 s above 5 s
    expect(L.yTicks.length).toBeGreaterThan(1);
  });

  it('the real engine over a creation sweep: creation sets how much delalloc cp meets; at equal creation the series changes cp by under 2%', async () => {
    const b = await loadNodeBridge();
    const params = { file_mib: '32', state: 'delalloc', dirty_expire_s: '4', wb_interval_s: '1' };
    const rows = sweepSpawns(1933, 1933).map((sp) => {
      const p = { ...params, spawn_us: sp };
      const before = b.run({ experiment: 'sparse-cp', variant: 'before', params: p, seed: 1 }).metrics;
      const after = b.run({ experiment: 'sparse-cp', variant: 'after', params: p, seed: 1 }).metrics;
      return creationRow(sp, before, after);
    });
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.createS).toBeGreaterThan(rows[i - 1]!.createS);
    for (const r of rows) expect(Math.abs(r.beforeMs / r.afterMs - 1)).toBeLessThan(0.02);
    const ms = rows.map((r) => r.beforeMs);
    expect(Math.max(...ms) / Math.min(...ms)).toBeGreaterThan(2);
  });
});

describe('the after panel names the series as the engine lists it', () => {
  it('series places of the switched-off patches, from list --json', async () => {
    const { seriesLabel } = await import('./SparseCpView');
    const b = await loadNodeBridge();
    const info = b.list().find((e) => e.name === 'sparse-cp')!;
    expect(seriesLabel(info, {})).toBe('whole series');
    expect(seriesLabel(info, { p1_no_hole_uptodate: 'false', p9_file_cache: '0' })).toBe('series without 1/9, 9/9');
  });
});

describe("the call at the cursor says how its delalloc searches began", () => {
  it('hit, miss, both, 6.1 (no cached state), or no search at all (cold: no delalloc)', async () => {
    const { cachedText } = await import('./SparseCpView');
    expect(cachedText({ cacheHit: 1, cacheMiss: 0, searchRecords: 2 })).toBe('cached state: hit');
    expect(cachedText({ cacheHit: 1, cacheMiss: 1, searchRecords: 5 })).toBe('cached state: 1 hit, 1 miss');
    expect(cachedText({ cacheHit: 0, cacheMiss: 1, searchRecords: 2 })).toBe('cached state: a miss (searched from the root)');
    expect(cachedText({ cacheHit: 0, cacheMiss: 0, searchRecords: 1 })).toBe('no cached state: searched from the root');
    expect(cachedText({ cacheHit: 0, cacheMiss: 0, searchRecords: 0 })).toBe('no delalloc search');
  });
});
