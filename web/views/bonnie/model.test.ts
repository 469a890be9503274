/*
 * The bonnie view's pure transforms, on a details object shaped as the
 * engine writes it, and on the real engine's output for a classroom run
 * under memory pressure (through the WASM bridge, as the app runs it).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../../engine/node';
import type { Bridge } from '../../engine/bridge';
import { FSYNC_PHASES, PHASES, histDomainMs, layoutHist, layoutOpTimeline, lockedAlloc, opEndMs, readBonnieDetails } from './model';

const slow = {
  file: 7,
  dir: 1,
  name: '0000000007abc',
  at_s: 2,
  lat_ms: 40,
  open_ms: 0.01,
  write_ms: 0,
  fsync_ms: 0,
  dfsync_ms: 40,
  page_stall_ms: 0,
  leaves: [
    { leaf: 16384, ino: 257, t0_ms: 0.02, t1_ms: 30, alloc_ms: 29.9, scratch: false, dir: false },
    { leaf: 16384, ino: 257, t0_ms: 30.1, t1_ms: 30.2, alloc_ms: 0.001, scratch: false, dir: true },
    { leaf: 'bad' },
  ],
  scratch: [],
  log_trans: [[0.015, 30.3]],
  log_commits: [[30.3, 39.9]],
  commits: [[-5, 10]],
  waiters: [
    { who: 'worker', leaf: 16384, ino: 300, t0_ms: 5, t1_ms: 30, fsync_leaf: true },
    { who: 'commit', leaf: 32768, ino: 256, t0_ms: 31, t1_ms: 31.5, fsync_leaf: false },
    { who: 'nobody', leaf: 'x' },
  ],
};
const fixture = {
  files: 40,
  dirs: 2,
  file_bytes: 16384,
  ram_bytes: 1 << 30,
  cache_limit_bytes: 1 << 29,
  prealloc_scratch: false,
  phases: {
    seq_delete: { ops: 40, start_s: 1, end_s: 2, latency: { n: 40, p50_ns: 1e5, p99_ns: 1e6, max_ns: 4e7, buckets: [[65536, 30], [983040, 9], [33554432, 1]] }, slowest: slow },
  },
  log: { leaves_copied: 120, clones: 120, scratch_used: 0, fsyncs: 120, log_commits: 120 },
  mem: { allocs: 120, slow_pages: 1 },
};

describe('bonnie view model', () => {
  it('reads the details, dropping malformed parts and filling missing phases', () => {
    const d = readBonnieDetails(fixture);
    expect(d.files).toBe(40);
    expect(Object.keys(d.phases)).toEqual([...PHASES]);
    expect(d.phases.seq_create.ops).toBe(0);
    const op = d.phases.seq_delete.slowest;
    expect(op.leaves).toHaveLength(3);
    expect(op.leaves[2]!.leaf).toBe(0);
    expect(lockedAlloc(op).count).toBe(3);
    expect(lockedAlloc(op).ms).toBeCloseTo(29.901, 6);
    expect(readBonnieDetails(undefined).phases.rand_delete.latency.buckets).toEqual([]);
  });

  it('lays out a histogram per kernel on one log axis, the slowest marked', () => {
    const d = readBonnieDetails(fixture);
    const dom = histDomainMs([d.phases.seq_delete.latency], [119]);
    expect(dom[0]).toBeLessThanOrEqual(0.065536);
    expect(dom[1]).toBeGreaterThanOrEqual(119);
    const L = layoutHist([{ key: 'before', h: d.phases.seq_delete.latency }], [{ key: 'before', ms: 119 }], dom, 600, 240, 16);
    expect(L.series).toHaveLength(1);
    expect(L.series[0]!.d.match(/M/g)).toHaveLength(3); // three non-empty buckets
    // the slowest (40 ms) left of the published 119 ms
    expect(L.series[0]!.max.x).toBeLessThan(L.marks[0]!.x);
    expect(L.xTicks.length).toBeGreaterThan(1);
  });

  it('lays out the slowest operation: the allocation inside the leaf lock at the end of its hold', () => {
    const op = readBonnieDetails(fixture).phases.seq_delete.slowest;
    const L = layoutOpTimeline(op, false, false, 800, 16, opEndMs(op));
    expect(L.lanes.map((l) => l.key)).toEqual(['proc', 'leaf', 'waiter', 'logtrans', 'logcommit', 'commit']);
    expect(L.bars.filter((b) => b.lane === 'proc').map((b) => b.kind)).toEqual(['open', 'dfsync']);
    expect(L.bars.filter((b) => b.lane === 'leaf')).toHaveLength(3);
    // the clone's allocation, inside the first hold, ends with it
    const a = L.allocs.find((x) => x.ms > 1)!;
    const hold = L.bars.find((b) => b.lane === 'leaf')!;
    expect(a.x + a.w).toBeCloseTo(hold.x + hold.w, 0);
    expect(a.w).toBeGreaterThan(hold.w * 0.9);
    // the commit started before the operation: clipped to its start
    expect(L.bars.find((b) => b.lane === 'commit')!.x).toBe(L.margin.left);
    // the worker's wait for the leaf the fsync held ends at the hold's end, in its own lane
    expect(op.waiters.map((w) => w.who)).toEqual(['worker', 'commit', 'other']);
    const w = L.waits.find((x) => x.fsyncLeaf)!;
    expect(w.who).toMatch(/worker/);
    expect(w.x + w.w).toBeCloseTo(hold.x + hold.w, 0);
    expect(w.y).toBe(L.lanes[2]!.y);
    expect(L.waits.filter((x) => !x.fsyncLeaf)).toHaveLength(2);
  });
});

describe('bonnie view model on the engine', () => {
  let b: Bridge;
  beforeAll(async () => {
    b = await loadNodeBridge();
  });

  it('before: clones inside leaf locks; after: scratch buffers before any lock', () => {
    const params = { files: '300', dirs: '3', file_bytes: '131072', ram_gib: '0.0625' };
    const before = readBonnieDetails(b.run({ experiment: 'bonnie', variant: 'before', params, seed: 1 }).details);
    const after = readBonnieDetails(b.run({ experiment: 'bonnie', variant: 'after', params, seed: 1 }).details);
    expect(before.prealloc).toBe(false);
    expect(after.prealloc).toBe(true);
    expect(before.log.clones).toBe(before.log.leavesCopied);
    expect(after.log.clones).toBe(0);
    expect(after.log.scratchUsed).toBe(after.log.leavesCopied);
    for (const p of FSYNC_PHASES) {
      expect(after.phases[p].ops).toBe(300);
      const op = after.phases[p].slowest;
      expect(lockedAlloc(op).ms).toBeLessThan(0.01);
      expect(op.scratch.length).toBeGreaterThan(0);
      expect(op.latMs * 1e6).toBeCloseTo(after.phases[p].latency.max, -3);
    }
    // somewhere before the patch, a clone's allocation inside a lock is the op's tail
    const worst = Math.max(...FSYNC_PHASES.map((p) => lockedAlloc(before.phases[p].slowest).ms));
    expect(worst).toBeGreaterThan(1);
    // the delayed-items worker ran in both kernels
    expect(before.delayed.nodesRun).toBeGreaterThan(0);
    expect(after.delayed.inserted).toBeGreaterThan(0);
  });
});
