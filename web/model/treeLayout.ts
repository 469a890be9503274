/*
 * treeLayout.ts - where each block of a B-tree goes on screen, from a
 * replayed state (replay.ts). Pure: the same state and options give the
 * same layout, and it is tested on real recorded runs.
 *
 * Leaves sit on the bottom row in key order, one slot each; a node sits
 * over the middle of the leaves under it, so the shape reads as btrfs's
 * tree does. A tree with more leaves than fit (maxLeaves) is drawn as a
 * window of consecutive leaves around a focus (by default the leaf the
 * current search reached) and its ancestors, and every level row says how
 * many blocks it has and how many are drawn: a classroom-scale tree is
 * drawn whole, a full-scale one as a level summary with a window to zoom.
 *
 * Marks (what the view colours): COWed or allocated in the running
 * transaction (generation = its transid), freed in it (a ghost until the
 * commit), shared with a snapshot that the tree gave up, on the current
 * search's path, read- or write-locked now, waited for, and changed by the
 * last event.
 */
import { blockKey, type Block, type Key, type ReplayState, type TreeInfo } from './replay';
import { BT_LEAF_DATA, BT_NODE_PTRS } from './btrfsConst';

export interface TreeLayoutOptions {
  /** drawing width in px */
  width: number;
  /** leaves drawn before the tree collapses to a window (default: one per 16 px, at least 8) */
  maxLeaves?: number;
  /** leaf index the window centres on (default: the current search's leaf) */
  focus?: number;
  /** px from one level's row to the next (default 56) */
  levelGap?: number;
  /** block heights (default 26 for a leaf, 20 for a node) */
  leafHeight?: number;
  nodeHeight?: number;
}

export interface LaidNode {
  bytenr: number;
  level: number;
  /** centre x, top y, size */
  x: number;
  y: number;
  w: number;
  h: number;
  nritems: number;
  /** share of the block in use: bytes for a leaf, key pointers for a node */
  fill: number;
  gen: number;
  k0: Key;
  k1: Key;
  /** written in the running transaction (COWed or allocated) */
  cowed: boolean;
  /** freed in the running transaction (shown until the commit) */
  freed: boolean;
  /** the tree gave up its reference: the block lives on in a snapshot */
  unref: boolean;
  onPath: boolean;
  lock: 'read' | 'write' | null;
  /** tasks holding it */
  holders: number[];
  /** the last lock on it was obtained after this long a wait (ns), 0 none */
  waitedNs: number;
  /** changed by the event just before the position */
  touched: boolean;
}

export interface LaidEdge {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  onPath: boolean;
  ghost: boolean;
}

export interface LevelRow {
  level: number;
  y: number;
  /** blocks at this level (the whole tree) */
  total: number;
  /** of which drawn */
  shown: number;
  avgFill: number;
  /** blocks left and right of the window */
  hiddenLeft: number;
  hiddenRight: number;
}

export interface TreeLayout {
  width: number;
  height: number;
  nodes: LaidNode[];
  edges: LaidEdge[];
  levels: LevelRow[];
  leafTotal: number;
  /** leaf indexes drawn: [first, last) */
  window: [number, number];
  whole: boolean;
  /** the leaf index the window is centred on */
  focus: number;
}

const blockFill = (b: Block): number => (b.level ? b.nritems / BT_NODE_PTRS : b.used / BT_LEAF_DATA);

interface Walked {
  /** per level, blocks in key order */
  rows: Block[][];
  leaves: Block[];
  /** leaf index range [first, last] under each block key */
  span: Map<number, [number, number]>;
  parent: Map<number, number>;
}

function walk(s: ReplayState, fs: number, root: number): Walked {
  const rows: Block[][] = [];
  const leaves: Block[] = [];
  const span = new Map<number, [number, number]>();
  const parent = new Map<number, number>();
  const rootBlock = s.blocks.get(blockKey(fs, root));
  if (!rootBlock) return { rows, leaves, span, parent };
  // iterative DFS in key order (deep trees of thousands of blocks)
  const stack: { b: Block; i: number; first: number }[] = [{ b: rootBlock, i: 0, first: 0 }];
  const seen = new Set<number>();
  while (stack.length) {
    const top = stack[stack.length - 1]!;
    const b = top.b;
    const key = blockKey(fs, b.bytenr);
    if (top.i === 0) {
      seen.add(key);
      (rows[b.level] ??= []).push(b);
      top.first = leaves.length;
      if (b.level === 0 || b.kids.length === 0) {
        if (b.level === 0) leaves.push(b);
        span.set(key, [top.first, leaves.length - 1]);
        stack.pop();
        continue;
      }
    }
    if (top.i < b.kids.length) {
      const ck = blockKey(fs, b.kids[top.i++]!);
      const c = s.blocks.get(ck);
      if (c && !seen.has(ck) && c.level < b.level) {
        parent.set(ck, key);
        stack.push({ b: c, i: 0, first: leaves.length });
      }
      continue;
    }
    span.set(key, [top.first, leaves.length - 1]);
    stack.pop();
  }
  return { rows, leaves, span, parent };
}

/** Lay out tree `tree` of state s. */
export function layoutTree(s: ReplayState, tree: TreeInfo, opts: TreeLayoutOptions): TreeLayout {
  const width = Math.max(120, opts.width);
  const gap = opts.levelGap ?? 56;
  const fs = tree.fs;
  const w = walk(s, fs, tree.root);
  const height0 = w.rows.length;
  const leafTotal = w.leaves.length;
  const maxLeaves = Math.max(8, Math.floor(opts.maxLeaves ?? width / 16));
  const path = s.paths.get(tree.h);
  const onPath = new Set(path ? path.visited : []);
  // default focus: the deepest block of the current search, or the leaf
  // locked since (a leaf read-locked while it is copied), else the leaf
  // changed last
  let focus = opts.focus ?? -1;
  if (focus < 0) {
    let at = -1;
    if (path && path.visited.length) {
      const sp = w.span.get(blockKey(fs, path.visited[path.visited.length - 1]!));
      if (sp) {
        focus = Math.floor((sp[0] + sp[1]) / 2);
        at = path.at;
      }
    }
    const leafAt = new Map(w.leaves.map((b, i) => [b.bytenr, i]));
    for (const l of s.locks)
      if (l.fs === fs && l.at > at && leafAt.has(l.bytenr)) {
        at = l.at;
        focus = leafAt.get(l.bytenr)!;
      }
  }
  if (focus < 0) {
    let best = -1;
    w.leaves.forEach((b, i) => {
      const at = Math.max(b.bornAt, b.freedAt);
      if (at > best) {
        best = at;
        focus = i;
      }
    });
  }
  focus = Math.max(0, Math.min(leafTotal - 1, focus));
  const whole = leafTotal <= maxLeaves;
  let first = 0;
  let last = leafTotal;
  if (!whole) {
    first = Math.max(0, Math.min(leafTotal - maxLeaves, focus - Math.floor(maxLeaves / 2)));
    last = first + maxLeaves;
  }
  const nShown = Math.max(1, last - first);
  const slot = width / nShown;
  const transid = s.transid.get(fs) ?? 0;
  const leafX = (i: number): number => (i - first + 0.5) * slot;
  const touchedAt = s.pos - 1;

  const nodes: LaidNode[] = [];
  const pos = new Map<number, LaidNode>();
  const levels: LevelRow[] = [];
  const lockBy = new Map<number, { mode: number; tasks: number[] }>();
  for (const l of s.locks) {
    if (l.fs !== fs) continue;
    const k = blockKey(fs, l.bytenr);
    const e = lockBy.get(k) ?? { mode: 0, tasks: [] };
    e.mode = Math.max(e.mode, l.mode);
    e.tasks.push(l.task);
    lockBy.set(k, e);
  }
  for (let level = height0 - 1; level >= 0; level--) {
    const row = w.rows[level] ?? [];
    const y = (height0 - 1 - level) * gap + 8;
    let shown = 0;
    let hiddenLeft = 0;
    let hiddenRight = 0;
    let fillSum = 0;
    // blocks of this level drawn side by side: their width follows the
    // narrowest spacing between neighbours
    const drawn: { b: Block; x: number }[] = [];
    for (const b of row) {
      fillSum += blockFill(b);
      const sp = w.span.get(blockKey(fs, b.bytenr));
      if (!sp || sp[1] < first) {
        hiddenLeft++;
        continue;
      }
      if (sp[0] >= last) {
        hiddenRight++;
        continue;
      }
      const a0 = Math.max(sp[0], first);
      const a1 = Math.min(sp[1], last - 1);
      drawn.push({ b, x: (leafX(a0) + leafX(a1)) / 2 });
      shown++;
    }
    let minGap = Infinity;
    for (let i = 1; i < drawn.length; i++) minGap = Math.min(minGap, drawn[i]!.x - drawn[i - 1]!.x);
    const bh = level === 0 ? (opts.leafHeight ?? 26) : (opts.nodeHeight ?? 20);
    // a block at most about three of its heights wide (a few wide blocks
    // are still blocks), else 82% of the spacing of its neighbours
    const bw = Math.max(3, Math.min(Math.max(level === 0 ? 64 : 72, bh * 3), (Number.isFinite(minGap) ? minGap : width) * 0.82));
    for (const { b, x } of drawn) {
      const key = blockKey(fs, b.bytenr);
      const lk = lockBy.get(key);
      const wait = s.waits.get(key);
      const n: LaidNode = {
        bytenr: b.bytenr,
        level,
        x,
        y,
        w: bw,
        h: bh,
        nritems: b.nritems,
        fill: Math.min(1, blockFill(b)),
        gen: b.gen,
        k0: b.k0,
        k1: b.k1,
        cowed: transid > 0 && b.gen >= transid && b.freedAt < 0,
        freed: b.freedAt >= 0,
        unref: b.unrefAt >= 0,
        onPath: onPath.has(b.bytenr),
        lock: lk ? (lk.mode >= 2 ? 'write' : 'read') : null,
        holders: lk ? lk.tasks : [],
        waitedNs: lk && wait ? wait.waitedNs : 0,
        touched: b.bornAt === touchedAt || b.freedAt === touchedAt,
      };
      nodes.push(n);
      pos.set(key, n);
    }
    levels.push({ level, y, total: row.length, shown, avgFill: row.length ? fillSum / row.length : 0, hiddenLeft, hiddenRight });
  }
  const edges: LaidEdge[] = [];
  for (const [ck, pk] of w.parent) {
    const c = pos.get(ck);
    const p = pos.get(pk);
    if (!c || !p) continue;
    edges.push({ x1: p.x, y1: p.y + p.h, x2: c.x, y2: c.y, onPath: c.onPath && p.onPath, ghost: c.freed });
  }
  return {
    width,
    height: Math.max(1, height0) * gap,
    nodes,
    edges,
    levels,
    leafTotal,
    window: [first, last],
    whole,
    focus,
  };
}

/** The trees of a state worth showing, biggest first, with a short name. */
export function treeChoices(s: ReplayState): { tree: TreeInfo; name: string; blocks: number }[] {
  const out: { tree: TreeInfo; name: string; blocks: number }[] = [];
  const fsCount = new Set([...s.trees.values()].map((t) => t.fs)).size;
  for (const t of s.trees.values()) {
    if (t.gone || !t.root) continue;
    const w = walk(s, t.fs, t.root);
    const blocks = w.rows.reduce((n, r) => n + r.length, 0);
    out.push({ tree: t, name: treeName(t.id) + (fsCount > 1 ? ` (fs ${t.fs})` : ''), blocks });
  }
  return out;
}

export function treeName(id: number): string {
  if (id === 5) return 'fs tree';
  if (id === 2) return 'extent tree';
  if (id === 7) return 'csum tree';
  if (id === 1) return 'root tree';
  if (id === -6 || id === 18446744073709552000) return 'log tree';
  if (id >= 256) return `subvolume ${id}`;
  return `tree ${id}`;
}
