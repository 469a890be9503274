/*
 * The replay and the tree layout on real recorded runs (the WASM engine
 * under Node): the state replayed from the events alone equals what the
 * engine's own snapshots say at the end (the fs tree block for block, the
 * io_tree record for record), the positions step as documented, and the
 * layout is a pure function with the properties the view relies on.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../engine/bridge';
import { loadNodeBridge } from '../engine/node';
import type { RunSpec } from '../engine/types';
import { findTree, ioRecords, bitNames, Replay, type ReplayState } from './replay';
import { decodeTrace, firstDivergence, nthOp, opAt, opPositions, positionAt, stepOp, timeAt, type RawTrace, type Trace } from './trace';
import { layoutTree, treeChoices } from './treeLayout';
import { layoutIoTree } from './ioLayout';

let b: Bridge;
beforeAll(async () => {
  b = await loadNodeBridge();
});

/** Run spec with recording; returns the decoded trace and the named snapshots at the end. */
function recorded(spec: RunSpec, snapshots: string[] = [], maxEvents = 400_000, fromNs = 0): { trace: Trace; snaps: Record<string, unknown>; metrics: Record<string, number> } {
  const h = b.open(spec);
  try {
    b.record(h, fromNs, maxEvents);
    while (!b.step(h, 100_000)) {
      /* to the end */
    }
    const doc = b.trace(h, 0) as { trace: RawTrace };
    const snaps: Record<string, unknown> = {};
    for (const s of snapshots) snaps[s] = b.snapshot(h, s);
    return { trace: decodeTrace(doc.trace), snaps, metrics: b.result(h).metrics };
  } finally {
    b.close(h);
  }
}

interface SnapNode {
  bytenr: number;
  gen: number;
  level: number;
  nritems: number;
  first?: number[];
  last?: number[];
}

/** The replayed tree breadth first, as bt_snapshot_json lists it. */
function bfs(s: ReplayState, fs: number, root: number): SnapNode[] {
  const out: SnapNode[] = [];
  const q = [root];
  for (let i = 0; i < q.length; i++) {
    const blk = s.blocks.get(q[i]! * 64 + fs);
    if (!blk) throw new Error(`block ${q[i]} missing from the replay`);
    out.push({ bytenr: blk.bytenr, gen: blk.gen, level: blk.level, nritems: blk.nritems, first: blk.nritems ? blk.k0 : undefined, last: blk.nritems ? blk.k1 : undefined });
    if (blk.level) q.push(...blk.kids);
  }
  return out;
}

describe('replay of a recorded run', () => {
  it('rebuilds the fs tree of a torture run block for block', () => {
    const { trace, snaps } = recorded({ experiment: 'torture', variant: 'base', params: { ops: '400', mix: 'all' }, seed: 3 }, ['tree:fs', 'tree:extent']);
    expect(trace.complete).toBe(true);
    expect(trace.unkept).toBe(0);
    const r = new Replay(trace);
    const s = r.stateAt(trace.n);
    for (const [name, id] of [['tree:fs', 5], ['tree:extent', 2]] as const) {
      const snap = snaps[name] as { nodes: SnapNode[]; height: number };
      const t = findTree(s, 1, id)!;
      expect(t).toBeDefined();
      const got = bfs(s, 1, t.root);
      expect(got.length).toBeGreaterThan(0);
      expect(snap.nodes.length).toBe(Math.min(200, got.length));
      snap.nodes.forEach((n, i) => {
        expect(got[i]).toMatchObject({ bytenr: n.bytenr, gen: n.gen, level: n.level, nritems: n.nritems });
        if (n.first) expect(got[i]!.first).toEqual(n.first);
        if (n.last) expect(got[i]!.last).toEqual(n.last);
      });
      expect(got[0]!.level + 1).toBe(snap.height);
    }
    // every lock taken was released by the end
    expect(s.locks).toEqual([]);
    // going back and forth lands on the same state as going straight there
    const mid = Math.floor(trace.n / 2);
    const a = bfs(r.stateAt(mid), 1, findTree(r.stateAt(mid), 1, 5)!.root);
    r.stateAt(trace.n);
    r.stateAt(3);
    const c = bfs(r.stateAt(mid), 1, findTree(r.stateAt(mid), 1, 5)!.root);
    expect(c).toEqual(a);
  });

  it('rebuilds the io_tree of sparse-cp, cold cache, and its range lock sweeps cursor to EOF', () => {
    const spec: RunSpec = { experiment: 'sparse-cp', variant: 'before', params: { file_mib: '2', state: 'cold' }, seed: 1 };
    const { trace, snaps, metrics } = recorded(spec, ['iotree']);
    const r = new Replay(trace);
    const s = r.stateAt(trace.n);
    const snap = snaps.iotree as { records: number; from: number; to: number; ranges: { start: number; end: number; bits: string }[] };
    const files = [...s.io.values()].filter((v) => v.recs.size > 0);
    expect(files.length).toBe(1);
    const recs = ioRecords(files[0]);
    expect(recs.length).toBe(snap.records);
    const inWindow = recs.filter((x) => x.end >= snap.from && x.start < snap.to).slice(0, snap.ranges.length);
    expect(inWindow.map((x) => [x.start, x.end])).toEqual(snap.ranges.map((x) => [x.start, x.end]));
    expect(bitNames(inWindow[0]!.bits).join('|')).toBe(snap.ranges[0]!.bits);
    // one op:lseek per call; each range lock runs from the offset's page to EOF
    const ops = opPositions(trace, 'op:lseek');
    expect(ops.length).toBe(metrics.lseek_calls);
    const k = trace.kindId['eio_lock_pass']!;
    const lseekK = trace.kindId['op:lseek']!;
    let passes = 0;
    let iSize = 0;
    let offset = 0;
    for (let i = 0; i < trace.n; i++) {
      if (trace.kind[i] === lseekK) {
        offset = trace.args[trace.off[i]! + 3]!;
        iSize = trace.args[trace.off[i]! + 4]!;
      }
      if (trace.kind[i] === k) {
        passes++;
        expect(trace.args[trace.off[i]! + 2]).toBe(offset - (offset % 4096));
        expect(trace.args[trace.off[i]! + 3]).toBe(Math.ceil(iSize / 4096) * 4096 - 1);
      }
    }
    expect(passes).toBeGreaterThan(ops.length * 0.9);
  });

  it('positions: time maps to positions monotonically; operations step and align', () => {
    const { trace } = recorded({ experiment: 'sparse-cp', variant: 'after', params: { file_mib: '1', state: 'cached' }, seed: 1 });
    for (let i = 1; i < trace.n; i++) expect(trace.tmax[i]!).toBeGreaterThanOrEqual(trace.tmax[i - 1]!);
    const ops = opPositions(trace);
    expect(ops.length).toBeGreaterThan(100);
    expect(stepOp(ops, 0, 1)).toBe(ops[0]);
    expect(stepOp(ops, ops[3]!, 1)).toBe(ops[4]);
    expect(stepOp(ops, ops[3]!, -1)).toBe(ops[2]);
    expect(stepOp(ops, ops[0]!, -1)).toBe(0);
    const at = opAt(trace, ops[5]! + 1)!;
    expect(at.kind).toBe('op:lseek');
    expect(nthOp(trace, at.kind, at.nth)).toBe(at.start);
    const p = ops[7]!;
    expect(positionAt(trace, timeAt(trace, p))).toBeGreaterThanOrEqual(p);
  });

  it('first divergence: before and after agree up to the first record a hole read leaves', () => {
    const params = { file_mib: '1', state: 'cold' };
    const before = recorded({ experiment: 'sparse-cp', variant: 'before', params, seed: 1 }).trace;
    const after = recorded({ experiment: 'sparse-cp', variant: 'after', params, seed: 1 }).trace;
    const d = firstDivergence(before, after);
    expect(d).toBeGreaterThan(0);
    for (let i = 0; i < d; i++) expect(before.kind[i]).toBe(after.kind[i]);
    const differs =
      before.kinds[before.kind[d]!]!.name !== after.kinds[after.kind[d]!]!.name ||
      [...before.args.subarray(before.off[d]!, before.off[d + 1]!)].join() !== [...after.args.subarray(after.off[d]!, after.off[d + 1]!)].join();
    expect(differs).toBe(true);
    // 1/9: the before kernel leaves an UPTODATE record for a hole page
    const r = new Replay(before);
    const s = r.stateAt(d + 1);
    expect([...s.io.values()].some((v) => [...v.recs.values()].some((x) => bitNames(x.bits).includes('UPTODATE')))).toBe(true);
  });

  it('a window: from a time, bounded, said so; the replay starts from what was listed then', () => {
    const spec: RunSpec = { experiment: 'qgroup-drop', variant: 'after', params: { subvols: '2', files: '64', threshold: '32' }, seed: 1 };
    const whole = recorded(spec).trace;
    const mid = whole.tmax[Math.floor(whole.n / 2)]!;
    const keep = Math.floor(whole.n / 8);
    const part = recorded(spec, [], keep, mid).trace;
    expect(part.complete).toBe(false);
    expect(part.n).toBe(keep);
    expect(part.unkept).toBeGreaterThan(0);
    expect(part.fromNs).toBe(mid);
    const r = new Replay(part);
    expect(r.start).toBeGreaterThan(0);
    const s = r.stateAt(r.start);
    expect([...s.trees.values()].length).toBeGreaterThan(2);
  });
});

describe('tree layout', () => {
  let trace: Trace;
  beforeAll(() => {
    trace = recorded({ experiment: 'qgroup-drop', variant: 'before', params: { subvols: '2', files: '256' }, seed: 1 }).trace;
  });

  it('draws a classroom tree whole: leaves in key order, parents over their children', () => {
    const r = new Replay(trace);
    const s = r.stateAt(r.start);
    const choices = treeChoices(s);
    expect(choices.map((c) => c.name)).toEqual(expect.arrayContaining(['fs tree', 'extent tree', 'root tree']));
    const sub = choices.find((c) => c.tree.id >= 256)!;
    const L = layoutTree(s, sub.tree, { width: 1200, maxLeaves: 400 });
    expect(L.whole).toBe(true);
    const leaves = L.nodes.filter((n) => n.level === 0);
    expect(leaves.length).toBe(L.leafTotal);
    for (let i = 1; i < leaves.length; i++) {
      expect(leaves[i]!.x).toBeGreaterThan(leaves[i - 1]!.x);
      const [a, b2] = [leaves[i - 1]!.k1, leaves[i]!.k0];
      expect(a[0] < b2[0] || (a[0] === b2[0] && (a[1] < b2[1] || (a[1] === b2[1] && a[2] < b2[2])))).toBe(true);
    }
    for (const e of L.edges) expect(e.y2).toBeGreaterThan(e.y1);
    for (const n of L.nodes) {
      expect(n.x).toBeGreaterThanOrEqual(0);
      expect(n.x).toBeLessThanOrEqual(L.width);
    }
    // pure: the same input, the same layout
    expect(layoutTree(s, sub.tree, { width: 1200, maxLeaves: 400 })).toEqual(L);
  });

  it('collapses a large tree to a window with level summaries, and follows the drop leaf by leaf', () => {
    const r = new Replay(trace);
    const drops = opPositions(trace, 'op:drop');
    expect(drops.length).toBeGreaterThan(10);
    const s = r.stateAt(drops[5]!);
    const dropping = [...s.trees.values()].find((t) => t.id >= 256 && !t.gone && s.blocks.get(t.root * 64 + t.fs))!;
    const L = layoutTree(s, dropping, { width: 600, maxLeaves: 8 });
    expect(L.whole).toBe(false);
    expect(L.window[1] - L.window[0]).toBe(8);
    const leafRow = L.levels.find((l) => l.level === 0)!;
    expect(leafRow.total).toBe(L.leafTotal);
    expect(leafRow.shown).toBe(8);
    expect(leafRow.hiddenLeft + leafRow.shown + leafRow.hiddenRight).toBe(leafRow.total);
    // the drop frees leaves from the left: by a later step more are ghosts
    const freedNow = (pos: number): number => {
      const st = r.stateAt(pos);
      return layoutTree(st, dropping, { width: 2000, maxLeaves: 1000 }).nodes.filter((n) => n.level === 0 && n.freed).length;
    };
    const f1 = freedNow(drops[2]!);
    const f2 = freedNow(drops[6]!);
    expect(f2).toBeGreaterThan(f1);
  });

  it('marks COWed blocks, the search path and locks at the moment of a write', () => {
    const t = recorded({ experiment: 'torture', variant: 'base', params: { ops: '1500' }, seed: 2 }).trace;
    const r = new Replay(t);
    const visitK = t.kindId['visit']!;
    // a search that COWs its way down: somewhere a leaf is reached with
    // the path drawn, its blocks COWed and write-locked
    let found = false;
    for (let i = r.start; i < t.n && !found; i++) {
      if (t.kind[i] !== visitK || t.args[t.off[i]! + 2] !== 0) continue;
      const s = r.stateAt(i + 1);
      const path = s.paths.get(t.args[t.off[i]!]!);
      if (!path || !path.cow || path.visited.length < 2) continue;
      const L = layoutTree(s, s.trees.get(path.tree)!, { width: 1000 });
      found = L.nodes.some((n) => n.cowed && n.onPath && n.lock === 'write' && n.level === 0) && L.nodes.some((n) => n.onPath && n.level > 0);
    }
    expect(found).toBe(true);
  });
});

describe('io_tree layout', () => {
  it('draws records as ranges on the file axis, merging what shares a pixel', () => {
    const recs = Array.from({ length: 5000 }, (_, i) => ({ start: i * 8192 + 4096, end: i * 8192 + 8191, bits: 8, at: i }));
    const L = layoutIoTree(recs, { width: 500, from: 0, to: 5000 * 8192, lockPass: { start: 4096 * 1000, end: 5000 * 8192 - 1, records: 4000, at: 1 } });
    expect(L.rects.length).toBeLessThanOrEqual(500);
    expect(L.rects.reduce((n, r) => n + r.count, 0)).toBe(5000);
    expect(L.lock!.x0).toBeCloseTo(500 * (4096 * 1000) / (5000 * 8192), 5);
    expect(L.lock!.x1).toBeCloseTo(500, 5);
    const few = layoutIoTree(recs.slice(0, 3), { width: 500, from: 0, to: 3 * 8192 });
    expect(few.rects.map((r) => r.count)).toEqual([1, 1, 1]);
    expect(few.rects[0]!.x).toBeCloseTo((4096 / (3 * 8192)) * 500, 5);
  });
});
