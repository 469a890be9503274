/*
 * The receive view's pure transforms, on a details object shaped as the
 * engine writes it, and on the real engine's output for 400 files
 * (through the WASM bridge, as the app runs it).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../../engine/node';
import type { Bridge } from '../../engine/bridge';
import { clusterBytes, diskClusters, layoutExtents, layoutOps, layoutProgress, layoutRate, layoutTimeline, readReceiveDetails, windowEnd, type RcFile } from './model';

const fixture = {
  files: 3,
  file_bytes: 5000,
  receive_s: 0.01,
  zoom: {
    first_file: 2,
    at_s: 0.002,
    cmds: [
      { op: 'mkfile', file: 2, t0_ms: 0, t1_ms: 0.1 },
      { op: 'write', file: 2, t0_ms: 0.1, t1_ms: 0.2 },
      { op: 'truncate', file: 2, t0_ms: 0.2, t1_ms: 1.0, wait0_ms: 0.25, wait1_ms: 0.95 },
      { op: 'mkfile', file: 3, t0_ms: 1.0, t1_ms: 1.1 },
      { op: 'truncate', file: 3, t0_ms: 1.1, t1_ms: 'x' },
    ],
  },
  progress: [
    [0.003, 1],
    [0.006, 2],
    ['bad'],
  ],
  ops: { mkfile: { count: 3, s: 0.001 }, truncate: { count: 3, s: 0.004 } },
  device: { zoom_ios: [{ op: 'write', off: 4096, bytes: 4096, t0_ms: 0.26, t1_ms: 0.94 }], bucket_s: 0.005, requests: [1, 2] },
  layout: [
    {
      name: 'file_2',
      size: 5000,
      sync_writes: 1,
      extents: [
        { off: 0, len: 4096, disk: 1 << 30, disk_len: 4096, type: 'regular' },
        { off: 4096, len: 4096, disk: 1 << 20, disk_len: 4096, type: 'regular' },
      ],
    },
  ],
};

describe('receive view model', () => {
  it('reads the details, dropping malformed parts', () => {
    const d = readReceiveDetails(fixture);
    expect(d.files).toBe(3);
    expect(d.zoom.cmds).toHaveLength(5);
    expect(d.zoom.cmds[2]!.wait).toEqual([0.25, 0.95]);
    expect(d.zoom.cmds[4]!.t1).toBe(0);
    expect(d.progress).toEqual([
      [0.003, 1],
      [0.006, 2],
    ]);
    expect(d.device.ios).toHaveLength(1);
    expect(d.layout[0]!.extents).toHaveLength(2);
    expect(readReceiveDetails(undefined).zoom.cmds).toEqual([]);
  });

  it('lays out the timeline: a row per file, the wait over its truncate, the disk lane under them', () => {
    const d = readReceiveDetails(fixture);
    const L = layoutTimeline(d, 600, 16);
    expect(L.rows.map((r) => r.label)).toEqual(['file_2', 'file_3']);
    expect(L.waits).toHaveLength(1);
    const trunc = L.bars.find((b) => b.op === 'truncate' && b.file === 2)!;
    expect(L.waits[0]!.x).toBeGreaterThanOrEqual(trunc.x);
    expect(L.waits[0]!.x + L.waits[0]!.w).toBeLessThanOrEqual(trunc.x + trunc.w + 1e-9);
    expect(L.ios).toHaveLength(1);
    expect(L.disk.y).toBeGreaterThan(Math.max(...L.rows.map((r) => r.y)));
    // a longer shared window shrinks this one's bars
    const wide = layoutTimeline(d, 600, 16, 10 * windowEnd(d));
    expect(wide.bars[0]!.w).toBeLessThan(L.bars[0]!.w);
  });

  it('groups the extents into runs of disk addresses and shares the scale', () => {
    const files: RcFile[] = readReceiveDetails(fixture).layout;
    const c = diskClusters(files);
    expect(c).toHaveLength(2);
    expect(clusterBytes(c)).toBe(8192);
    const L = layoutExtents(files, 500, 16);
    expect(L.disk.boxes).toHaveLength(2);
    expect(L.disk.breaks).toHaveLength(1);
    expect(L.disk.breaks[0]!.gap).toBe((1 << 30) - (1 << 20) - 4096);
    // page 1 sits left of page 0 on the disk (lower address)
    const [b0, b1] = [L.disk.boxes.find((b) => b.extent === 0)!, L.disk.boxes.find((b) => b.extent === 1)!];
    expect(b1.x).toBeLessThan(b0.x);
    const one: RcFile[] = [{ name: 'f', size: 5000, syncWrites: 0, extents: [{ off: 0, len: 8192, disk: 1 << 20, diskLen: 8192, type: 'regular' }] }];
    const shared = layoutExtents(one, 500, 16, 8192, 1);
    expect(shared.disk.boxes[0]!.w).toBeCloseTo(L.disk.boxes[0]!.w * 2, 6);
  });

  it('lays out progress, time per command type and the request rate on shared axes', () => {
    const d = readReceiveDetails(fixture);
    const d2 = { ...d, receiveS: 0.02 };
    const P = layoutProgress(
      [
        { key: 'before', d: d2 },
        { key: 'after', d },
      ],
      [{ key: 'before', value: 0.03 }],
      600,
      300,
      16,
    );
    expect(P.series).toHaveLength(2);
    expect(P.series[0]!.end.x).toBeGreaterThan(P.series[1]!.end.x);
    expect(P.marks[0]!.x).toBeGreaterThan(P.series[0]!.end.x);
    const O = layoutOps([{ key: 'before', d }], 600, 16);
    expect(O.rows.map((r) => r.op)).toEqual(['mkfile', 'truncate']);
    const R = layoutRate([{ key: 'before', d }], 600, 200, 16);
    expect(R.series[0]!.d.startsWith('M')).toBe(true);
  });
});

describe('receive view model on the real engine', () => {
  let b: Bridge;
  beforeAll(async () => {
    b = await loadNodeBridge();
  });

  it('before: a wait and a disk write per file of the window, two extents per file; after: none, one', () => {
    const run = (variant: 'before' | 'after') =>
      b.run({ experiment: 'receive', variant, params: { scale: '0.02' }, seed: 1 });
    const [bd, ad] = [readReceiveDetails(run('before').details), readReceiveDetails(run('after').details)];
    const xMax = Math.max(windowEnd(bd), windowEnd(ad));
    const [bt, at] = [layoutTimeline(bd, 800, 16, xMax), layoutTimeline(ad, 800, 16, xMax)];
    expect(bt.rows).toHaveLength(12);
    expect(bt.waits).toHaveLength(12);
    expect(bt.ios).toHaveLength(12);
    expect(at.waits).toHaveLength(0);
    expect(at.ios).toHaveLength(0);
    // every file's commands in the order of the stream, none overlapping
    for (const f of new Set(bd.zoom.cmds.map((c) => c.file))) {
      const cs = bd.zoom.cmds.filter((c) => c.file === f);
      expect(cs.map((c) => c.op)).toEqual(['mkfile', 'rename', 'utimes', 'write', 'truncate', 'chown', 'chmod', 'utimes']);
      for (let i = 1; i < cs.length; i++) expect(cs[i]!.t0).toBeGreaterThanOrEqual(cs[i - 1]!.t1);
    }
    expect(bd.layout.every((f) => f.extents.length === 2)).toBe(true);
    expect(ad.layout.every((f) => f.extents.length === 1)).toBe(true);
    // before: the tails side by side, the heads side by side, far apart
    expect(diskClusters(bd.layout)).toHaveLength(2);
    expect(diskClusters(ad.layout)).toHaveLength(1);
    expect(bd.progress[bd.progress.length - 1]![1]).toBeLessThanOrEqual(bd.files);
  });
});
