/*
 * The pure parts of the pages' recorded pictures, on small hand-made
 * recordings: receive's file extent items (an ordered extent finished is
 * an item; what wrote it), bonnie's moment (the leaf clone with the
 * longest allocation, at its read lock), and where two recordings of
 * windows first differ after their listings. Then the extent items on a
 * real classroom-size receive: two per file before, one after, as the
 * run's extents_per_file metric says.
 */
import { describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../engine/node';
import { extentItems } from './extentItems';
import { longestLeafClone, sameLeafClone } from './pageMoments';
import { decodeTrace, firstDivergenceFromOps, type RawTrace, type Trace } from './trace';

const trace = (kinds: { name: string; args: string[] }[], events: number[][], tasks = ['shell', 'writeback']): Trace =>
  decodeTrace({ recording: true, from_ns: 0, complete: true, kinds, tasks, events } as RawTrace);

describe('extentItems', () => {
  const kinds = [
    { name: 'op:mkfile', args: ['n'] },
    { name: 'op:truncate', args: ['n'] },
    { name: 'op:sync', args: ['n'] },
    { name: 'oe_add', args: ['fs', 'ino', 'start', 'len'] },
    { name: 'oe_done', args: ['fs', 'ino', 'start', 'len'] },
  ];
  it('items per file, in offset order, each with what wrote it', () => {
    const tr = trace(kinds, [
      [1, 0, 0, 0],
      [2, 1, 0, 0],
      [3, 3, 0, 2, 257, 4096, 4096], // the truncate writes the tail page
      [4, 4, 0, 2, 257, 4096, 4096],
      [5, 0, 0, 1],
      [6, 3, 1, 2, 258, 0, 8192], // writeback, during the next file's commands
      [7, 2, 0, 0],
      [8, 3, 0, 2, 257, 0, 4096], // the sync writes the rest
      [9, 4, 0, 2, 257, 0, 4096],
      [10, 4, 1, 2, 258, 0, 8192],
      [11, 3, 0, 1, 999, 0, 4096], // another file system: one file, not the receive's
      [12, 4, 0, 1, 999, 0, 4096],
    ]);
    const r = extentItems(tr);
    expect(r.files.map((f) => [f.ino, f.items.map((i) => [i.start, i.len, i.why])])).toEqual([
      [
        257,
        [
          [0, 4096, 'sync'],
          [4096, 4096, 'truncate'],
        ],
      ],
      [258, [[0, 8192, 'writeback']]],
    ]);
    expect(r.perFile).toBe(1.5);
    expect(r.byWhy).toEqual({ sync: 1, truncate: 1, writeback: 1 });
    expect(r.files[0]!.items[1]!.tAdd).toBe(3);
    expect(r.files[0]!.items[1]!.tDone).toBe(4);
  });
  it('an extent not finished in the recording is not an item', () => {
    const tr = trace(kinds, [[1, 3, 0, 2, 257, 0, 4096]]);
    expect(extentItems(tr)).toMatchObject({ items: 0, perFile: 0, files: [] });
  });
});

describe('bonnie: the leaf clone with the longest allocation', () => {
  const kinds = [
    { name: 'lock', args: ['tree', 'bytenr', 'mode', 'wait_ns'] },
    { name: 'leaf_copy', args: ['bytenr', 'hold_ns', 'alloc_ns'] },
  ];
  it('the position right after its read lock', () => {
    const tr = trace(kinds, [
      [1, 0, 0, 4, 100, 1, 0],
      [2, 1, 0, 100, 5000, 0],
      [3, 0, 0, 4, 200, 2, 0], // a write lock on it: not the clone's
      [4, 0, 0, 4, 200, 1, 0], // the read lock the clone is made under
      [5, 0, 1, 4, 200, 1, 0], // another task's
      [6, 1, 0, 200, 9_000_000, 8_000_000],
      [7, 0, 0, 4, 300, 1, 0],
      [8, 1, 0, 300, 20_000_000, 10],
    ]);
    expect(longestLeafClone(tr)).toBe(4);
  });
  it('no clone waited: the longest hold; none at all: -1', () => {
    const tr = trace(kinds, [
      [1, 0, 0, 4, 100, 1, 0],
      [2, 1, 0, 100, 5000, 0],
      [3, 0, 0, 4, 300, 1, 0],
      [4, 1, 0, 300, 9000, 0],
    ]);
    expect(longestLeafClone(tr)).toBe(3);
    expect(longestLeafClone(trace(kinds, []))).toBe(-1);
  });
});

describe('bonnie: the same leaf clone in both kernels', () => {
  const kinds = [
    { name: 'op:rand_create', args: ['n', 'file'] },
    { name: 'lock', args: ['tree', 'bytenr', 'mode', 'wait_ns'] },
    { name: 'leaf_copy', args: ['bytenr', 'hold_ns', 'alloc_ns'] },
  ];
  const a = trace(kinds, [
    [0, 0, 0, 0, 7],
    [1, 2, 0, 100, 1e6, 0],
    [2, 0, 0, 1, 8],
    [3, 2, 0, 150, 2e6, 0],
    [4, 1, 0, 4, 200, 1, 0],
    [5, 2, 0, 200, 9e6, 8e6],
  ]);
  const b = trace(kinds, [
    [0, 0, 0, 0, 7],
    [1, 2, 0, 100, 1e6, 0],
    [2, 2, 0, 101, 1e6, 0],
    [3, 0, 0, 1, 8],
    [4, 2, 0, 160, 3e3, 0],
    [5, 1, 0, 4, 300, 1, 0],
    [6, 2, 0, 300, 5e3, 0],
  ]);
  it('the k-th clone of the n-th operation of the same kind', () => {
    expect(longestLeafClone(a)).toBe(5);
    const c = sameLeafClone(a, b, 5);
    expect(c.a).toEqual({ i: 5, bytenr: 200, holdMs: 9, allocMs: 8 });
    expect(c.b).toEqual({ i: 6, bytenr: 300, holdMs: 0.005, allocMs: 0 });
    expect(sameLeafClone(a, undefined, 1).a?.bytenr).toBe(100);
    expect(sameLeafClone(a, b, 99)).toEqual({ a: null, b: null });
  });
});

describe('firstDivergenceFromOps', () => {
  const kinds = [
    { name: 'fs', args: ['fs', 'generation'] },
    { name: 'op:x', args: ['n'] },
    { name: 'e', args: ['v'] },
  ];
  it('skips the listings (which differ) and compares from each first operation', () => {
    const a = trace(kinds, [
      [0, 0, -1, 1, 3],
      [0, 2, -1, 7],
      [1, 1, 0, 0],
      [2, 2, 0, 1],
      [3, 2, 0, 2],
    ]);
    const b = trace(kinds, [
      [0, 0, -1, 1, 2],
      [5, 1, 0, 0],
      [6, 2, 0, 1],
      [7, 2, 0, 9],
    ]);
    expect(firstDivergenceFromOps(a, b)).toEqual({ a: 4, b: 3 });
    expect(firstDivergenceFromOps(a, a)).toBeNull();
  });
});

describe('receive, recorded: extents per file as the run says', () => {
  it('two per file before (the truncate wrote the tail page), one after', async () => {
    const b = await loadNodeBridge();
    for (const [variant, want] of [
      ['before', 2],
      ['after', 1],
    ] as const) {
      const spec = { experiment: 'receive', variant, params: { files_per_writer: '40', writers: '2' }, seed: 1 };
      const r = b.run(spec, 200_000, { fromOp: { kind: 'op:mkfile', nth: 0 }, only: ['op:mkfile', 'op:truncate', 'op:sync', 'oe_add', 'oe_done'] });
      const items = extentItems(r.recording!);
      expect(items.files.length).toBe(r.metrics.files);
      expect(items.perFile).toBe(r.metrics.extents_per_file);
      expect(items.perFile).toBe(want);
      expect(Object.keys(items.byWhy).sort()).toEqual(variant === 'before' ? ['sync', 'truncate'] : ['sync']);
    }
  });
});
