/*
 * lseekPicture.ts on a small hand-made recording (three lseeks: one
 * answered by the fs tree, one search from the root, one from the cached
 * state), then on real recordings (the WASM engine under Node): the
 * picture's counts over a recording of cp from its first lseek are the
 * run's metrics, before, after and after without 9/9.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../engine/bridge';
import { loadNodeBridge } from '../engine/node';
import type { RunSpec } from '../engine/types';
import { callAtOffset, layoutLseekLane, lockWalk, lseekCalls, lseekTotals, markOf, totalsAsMetrics, windowAround } from './lseekPicture';
import { ioKey, ioRecords, Replay } from './replay';
import { decodeTrace, type RawTrace, type Trace } from './trace';

const KINDS = [
  { name: 'eio', args: ['fs', 'ino', 'start', 'end', 'bits', 'op'] },
  { name: 'eio_lock_pass', args: ['fs', 'ino', 'start', 'end', 'records'] },
  { name: 'op:lseek', args: ['fs', 'ino', 'whence', 'offset', 'i_size'] },
  { name: 'eio_count', args: ['fs', 'ino', 'start', 'end', 'cached', 'records', 'cs_start', 'cs_end'] },
  { name: 'lseek_ret', args: ['fs', 'ino', 'whence', 'result', 'lock_records', 'search_records', 'hits', 'misses'] },
];
const K = { eio: 0, lock: 1, op: 2, count: 3, ret: 4 };
const SZ = 64 * 1024;

/** Two delalloc records [16K, 20K) and [32K, 36K); three calls. */
function fixture(complete = true): Trace {
  const ev: number[][] = [
    [0, K.eio, -1, 1, 257, 16384, 20479, 2, 4],
    [0, K.eio, -1, 1, 257, 32768, 36863, 2, 4],
    // 0: SEEK_DATA 0 -> 0, answered by the fs tree: no search
    [10, K.op, 0, 1, 257, 3, 0, SZ],
    [11, K.lock, 0, 1, 257, 0, SZ - 1, 3],
    [12, K.ret, 0, 1, 257, 3, 0, 6, 0, 0, 0],
    // 1: SEEK_HOLE 4096: one search from the root (6.1 style)
    [20, K.op, 0, 1, 257, 4, 4096, SZ],
    [21, K.lock, 0, 1, 257, 4096, SZ - 1, 3],
    [22, K.count, 0, 1, 257, 4096, SZ - 1, 2, 2, 16384, 20479],
    [23, K.ret, 0, 1, 257, 4, 4096, 6, 2, 0, 1],
    // 2: SEEK_DATA 20480: starts at the cached record (a hit)
    [30, K.op, 0, 1, 257, 3, 20480, SZ],
    [31, K.lock, 0, 1, 257, 20480, SZ - 1, 2],
    [32, K.count, 0, 1, 257, 20480, SZ - 1, 1, 2, 32768, 36863],
    [33, K.ret, 0, 1, 257, 3, 32768, 4, 2, 1, 0],
  ];
  const raw: RawTrace = { recording: true, from_ns: 0, complete, kept: ev.length, unkept: complete ? 0 : 5, kinds: KINDS, tasks: ['cp'], events: ev };
  return decodeTrace(raw);
}

describe('lseekCalls on a fixture', () => {
  it('reads each call: offset, lock, searches and how they started, what lseek_ret counted', () => {
    const run = lseekCalls(fixture());
    expect(run.calls.map((c) => [c.offset, c.whence, c.result, c.mark])).toEqual([
      [0, 'data', 0, 'none'],
      [4096, 'hole', 4096, 'descent'],
      [20480, 'data', 32768, 'hit'],
    ]);
    expect(run.calls[1]!.lock).toEqual({ start: 4096, end: SZ - 1, records: 3 });
    expect(run.calls[1]!.searches).toEqual([{ start: 4096, end: SZ - 1, cached: 2, records: 2, cs: [16384, 20479] }]);
    expect(run.calls[2]!.hits).toBe(1);
    expect([run.fs, run.ino, run.iSize, run.whole]).toEqual([1, 257, SZ, true]);
    // positions step the replay: a call's state is after its lseek_ret
    expect(run.calls.map((c) => [c.pos, c.end])).toEqual([
      [3, 5],
      [6, 9],
      [10, 13],
    ]);
  });

  it('totals are the metrics the engine would print for these calls', () => {
    const { calls } = lseekCalls(fixture());
    const t = lseekTotals(calls);
    expect(t).toMatchObject({ calls: 3, hits: 1, misses: 1, descents: 1, hitCalls: 1, mixedCalls: 0, descentCalls: 1, noSearchCalls: 1, lockRecords: 16, searchRecords: 4 });
    expect(totalsAsMetrics(t)).toEqual({ lseek_calls: 3, state_cache_hits: 1, state_cache_misses: 1, lock_records_avg: 16 / 3, search_records_avg: 4 / 3, records_per_lseek_avg: 20 / 3 });
    // running counts up to the cursor
    expect(lseekTotals(calls, 1)).toMatchObject({ calls: 1, hits: 0, noSearchCalls: 1 });
    expect(lseekTotals(calls, 99).calls).toBe(3);
  });

  it('a window that left events out, or began after the first call, is not the whole run', () => {
    expect(lseekCalls(fixture(false)).whole).toBe(false);
    expect(lseekCalls(fixture(), false).whole).toBe(false);
  });

  it('marks: all from the cached state, some, none, or no search', () => {
    expect(markOf([])).toBe('none');
    const s = (cached: 0 | 1 | 2) => ({ start: 0, end: 1, cached, records: 1, cs: null });
    expect(markOf([s(1), s(1)])).toBe('hit');
    expect(markOf([s(2), s(1)])).toBe('mixed');
    expect(markOf([s(2), s(2)])).toBe('descent');
    expect(markOf([s(0)])).toBe('descent');
  });

  it('callAtOffset: the last call at or before an offset', () => {
    const { calls } = lseekCalls(fixture());
    expect(callAtOffset(calls, 0)).toBe(0);
    expect(callAtOffset(calls, 5000)).toBe(1);
    expect(callAtOffset(calls, 1e9)).toBe(2);
    expect(callAtOffset([], 5)).toBe(-1);
  });
});

describe('the lane', () => {
  const tr = fixture();
  const run = lseekCalls(tr);
  const replay = new Replay(tr);

  it('records in the window as marks, the lock to EOF, the cached record, the calls so far', () => {
    const s = replay.stateAt(run.calls[2]!.end);
    const io = [...s.io.values()][0]!;
    expect(io.cached).toMatchObject({ start: 32768, end: 36863 });
    const L = layoutLseekLane(ioRecords(io), run.calls, 2, io.cached, { width: 640, from: 0, to: 32768 });
    // [16K, 20K) inside, [32K, 36K) after the window
    expect(L.recs.map((r) => [r.x, r.w, r.cached])).toEqual([[320, 80, false]]);
    expect([L.before, L.after]).toEqual([0, 1]);
    // the lock runs from 20 KiB past the window's right edge (to EOF)
    expect(L.lock).toMatchObject({ x0: 400, x1: 640, past: true, records: 2 });
    // the cached record is to the right of the window: an arrow at its edge
    expect(L.cached).toMatchObject({ side: 1, x0: 640 });
    expect(L.calls.map((c) => [c.x, c.mark, c.current])).toEqual([
      [0, 'none', false],
      [80, 'descent', false],
      [400, 'hit', true],
    ]);
    expect(L.cursorX).toBe(400);
  });

  it('records sharing a pixel merge (counting them), the cached one never does', () => {
    const recs = Array.from({ length: 100 }, (_, i) => ({ start: i * 8192, end: i * 8192 + 4095, bits: 2, at: 0 }));
    const L = layoutLseekLane(recs, [], -1, { start: 50 * 8192, end: 50 * 8192 + 4095 }, { width: 50, from: 0, to: 100 * 8192 });
    expect(L.recs.reduce((n, r) => n + r.count, 0)).toBe(100);
    expect(L.recs.length).toBeLessThan(60);
    expect(L.recs.filter((r) => r.cached)).toHaveLength(1);
    expect(L.lock).toBeNull();
  });

  it('windowAround: a quarter behind the offset, inside the file', () => {
    expect(windowAround(100_000, 40_000, 1e6)).toEqual({ from: 90_000, to: 130_000 });
    expect(windowAround(0, 40_000, 1e6)).toEqual({ from: 0, to: 40_000 });
    expect(windowAround(999_000, 40_000, 1e6)).toEqual({ from: 960_000, to: 1e6 });
    expect(windowAround(10, 1e9, 65536).to).toBe(65536);
  });
});

describe('on real recordings: the counts are the run metrics', () => {
  let b: Bridge;
  beforeAll(async () => {
    b = await loadNodeBridge();
  });
  const only = ['op:lseek', 'lseek_ret', 'eio_lock_pass', 'eio_count', 'eio', 'eio_del', 'eio_reset'];
  const record = (spec: RunSpec): { trace: Trace; metrics: Record<string, number> } => {
    const r = b.run(spec, 200_000, { fromOp: { kind: 'op:lseek', nth: 0 }, only });
    expect(r.recording).toBeDefined();
    const plain = b.run(spec);
    return { trace: r.recording!, metrics: plain.metrics };
  };
  const params = { file_mib: '2', state: 'delalloc', dirty_expire_s: '600' };
  const cases: [string, RunSpec][] = [
    ['before', { experiment: 'sparse-cp', variant: 'before', params, seed: 1 }],
    ['after', { experiment: 'sparse-cp', variant: 'after', params, seed: 1 }],
    ['after without 9/9', { experiment: 'sparse-cp', variant: 'after', params: { ...params, p9_file_cache: 'false' }, seed: 1 }],
    ['after, cold', { experiment: 'sparse-cp', variant: 'after', params: { file_mib: '2', state: 'cold' }, seed: 1 }],
  ];
  const marks: Record<string, ReturnType<typeof lseekTotals>> = {};
  for (const [name, spec] of cases) {
    it(`${name}: lseek_calls, state_cache_hits / misses, records per lseek`, () => {
      const { trace, metrics } = record(spec);
      const run = lseekCalls(trace);
      expect(run.whole).toBe(true);
      const t = lseekTotals(run.calls);
      marks[name] = t;
      const m = totalsAsMetrics(t);
      for (const k of ['lseek_calls', 'state_cache_hits', 'state_cache_misses'] as const) expect(m[k]).toBe(metrics[k]);
      for (const k of ['lock_records_avg', 'search_records_avg', 'records_per_lseek_avg'] as const) expect(m[k]).toBeCloseTo(metrics[k]!, 6);
      // each call's range lock, counted again from the io_tree as the
      // replay has it when the lock is taken: the engine's own count
      const rp = new Replay(trace);
      let walked = 0;
      for (const c of run.calls) {
        const io = rp.stateAt(c.lockAt).io.get(ioKey(run.fs, run.ino));
        const w = lockWalk(ioRecords(io), c.lock!.start, c.lock!.end);
        expect(w.total, `call ${c.n} at ${c.offset}`).toBe(c.lockRecords);
        expect(w.lock + w.unlock).toBe(w.total);
        walked += w.total;
      }
      expect(walked / run.calls.length).toBeCloseTo(metrics.lock_records_avg!, 6);
    });
  }
  it('9/9 turns the hits into searches from the root; cold has no search', () => {
    expect(marks.before!.hitCalls).toBe(0);
    // on a file of delalloc each call's first search misses (the cached
    // record lies past its offset) and the next one hits
    expect(marks.after!.hitCalls + marks.after!.mixedCalls).toBeGreaterThan(marks.after!.calls * 0.9);
    expect(marks['after without 9/9']!.hitCalls + marks['after without 9/9']!.mixedCalls).toBe(0);
    expect(marks['after without 9/9']!.descentCalls).toBe(marks.before!.descentCalls);
    expect(marks['after, cold']!.noSearchCalls).toBe(marks['after, cold']!.calls);
  });
});
