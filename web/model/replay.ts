/*
 * replay.ts - the state of a recorded run at any position, rebuilt from its
 * events (trace.ts) alone: every B-tree block by block (level, items, bytes
 * used, generation, first and last key, children, freed or not), each
 * inode's io_tree record by record, the locks held and who waited, the path
 * of each tree's current search, the commit in progress, ordered extents
 * and device requests in flight, qgroup records of the transaction.
 *
 * Pure and fast enough to scrub: a Replay keeps a checkpoint every
 * CHECKPOINT events (made the first time that stretch is replayed);
 * blocks, locks and paths are never changed in place (they are replaced),
 * so a checkpoint is a shallow copy of a few maps.
 * stateAt(pos) is the nearest checkpoint plus at most CHECKPOINT events;
 * moving forward from the last state asked applies only the events in
 * between. The state it returns is the replay's own and changes with the
 * next call: derive what you draw from it at once (key memos on s.pos).
 *
 * A position is a number of events applied. The recording starts with the
 * structures listed as they were; `start` is the position right after that
 * listing (the first event a task made), where playback begins.
 */
import type { Trace } from './trace';

export type Key = [number, number, number];

export interface Block {
  fs: number;
  bytenr: number;
  /** the tree handle that last described it */
  tree: number;
  level: number;
  nritems: number;
  used: number;
  gen: number;
  k0: Key;
  k1: Key;
  /** child bytenrs (nodes); [] for a leaf */
  kids: number[];
  /** freed (or COWed away) at this event index; -1 alive */
  freedAt: number;
  /** event index that created or COWed it into being; -1: listed at the start */
  bornAt: number;
  /** a tree gave up its reference to it (still shared) */
  unrefAt: number;
}

export interface TreeInfo {
  h: number;
  fs: number;
  id: number;
  root: number;
  gone: boolean;
}

export interface IoRec {
  start: number;
  end: number;
  bits: number;
  /** the event index that last changed it */
  at: number;
}

export interface HeldLock {
  fs: number;
  bytenr: number;
  task: number;
  mode: number; // 1 read, 2 write
  at: number;
  waitedNs: number;
}

export interface SearchPath {
  tree: number;
  task: number;
  key: Key;
  insLen: number;
  cow: boolean;
  at: number;
  /** bytenrs visited, root first */
  visited: number[];
}

export interface LockPass {
  start: number;
  end: number;
  records: number;
  at: number;
}

export interface IoInode {
  fs: number;
  ino: number;
  recs: Map<number, IoRec>;
  lockPass: LockPass | null;
  /** the record an open file's cached state points at (lseek's delalloc
   * searches, eio_count), as of its last search; null: none (6.1) */
  cached: { start: number; end: number; at: number } | null;
  /** ordered extents in flight: start -> len */
  ordered: Map<number, number>;
}

export interface ReplayState {
  pos: number;
  trees: Map<number, TreeInfo>;
  blocks: Map<number, Block>;
  /** per fs: the running transaction (committed + 1; 0 unknown yet) */
  transid: Map<number, number>;
  locks: HeldLock[];
  /** the last lock obtained after a wait, per block key */
  waits: Map<number, { task: number; waitedNs: number; at: number }>;
  paths: Map<number, SearchPath>;
  io: Map<number, IoInode>;
  commit: { fs: number; transid: number; phase: number; reason: number; at: number } | null;
  /** device requests: [submitted ns, done ns, op, offset, bytes] of the recent ones */
  ioReqs: { t: number; done: number; op: number; offset: number; bytes: number }[];
  qgRecords: number;
  /** the last event of each kind name's meaning, for captions */
  lastOp: { kind: string; at: number; args: number[] } | null;
  tickets: number;
  counts: { cows: number; splits: number; frees: number; visits: number; commits: number };
}

export const blockKey = (fs: number, bytenr: number): number => bytenr * 64 + fs;
/** An io_tree's key in ReplayState.io: its data-path instance and inode. */
export const ioKey = (fs: number, ino: number): number => fs * 4294967296 + ino;

const CHECKPOINT = 512;
const KEEP_IOREQS = 64;

function emptyState(): ReplayState {
  return {
    pos: 0,
    trees: new Map(),
    blocks: new Map(),
    transid: new Map(),
    locks: [],
    waits: new Map(),
    paths: new Map(),
    io: new Map(),
    commit: null,
    ioReqs: [],
    qgRecords: 0,
    lastOp: null,
    tickets: 0,
    counts: { cows: 0, splits: 0, frees: 0, visits: 0, commits: 0 },
  };
}

/** A copy that shares every immutable part (blocks, records, arrays). */
function checkpointCopy(s: ReplayState): ReplayState {
  const io = new Map<number, IoInode>();
  for (const [k, v] of s.io) io.set(k, { ...v, recs: new Map(v.recs), ordered: new Map(v.ordered) });
  return {
    ...s,
    trees: new Map(s.trees),
    blocks: new Map(s.blocks),
    transid: new Map(s.transid),
    locks: s.locks.slice(),
    waits: new Map(s.waits),
    paths: new Map(s.paths),
    io,
    ioReqs: s.ioReqs.slice(),
    counts: { ...s.counts },
  };
}

/** Kind ids the replay reacts to (-1: absent from this trace). */
function kindIds(tr: Trace) {
  const k = (n: string): number => tr.kindId[n] ?? -1;
  return {
    tree: k('tree'), root: k('root'), blk: k('blk'), link: k('link'), unlink: k('unlink'), move: k('move'),
    cow: k('cow'), split: k('split'), free: k('free'), unref: k('unref'), search: k('search'), visit: k('visit'),
    lock: k('lock'), unlock: k('unlock'), treeEnd: k('tree_end'), commitPhase: k('commit_phase'), commit: k('commit'), fs: k('fs'),
    qg: k('qg_record'), eio: k('eio'), eioDel: k('eio_del'), eioReset: k('eio_reset'), lockPass: k('eio_lock_pass'), eioCount: k('eio_count'),
    oeAdd: k('oe_add'), oeDone: k('oe_done'), io: k('io'), ticket: k('space_ticket'), grant: k('space_grant'),
  };
}
type Kinds = ReturnType<typeof kindIds>;

function newBlock(fs: number, bytenr: number, tree: number): Block {
  return { fs, bytenr, tree, level: 0, nritems: 0, used: 0, gen: 0, k0: [0, 0, 0], k1: [0, 0, 0], kids: [], freedAt: -1, bornAt: -1, unrefAt: -1 };
}

export class Replay {
  readonly trace: Trace;
  /** position right after the structures were listed (the first task event) */
  readonly start: number;
  private readonly k: Kinds;
  private readonly checkpoints: ReplayState[] = [];
  private cur: ReplayState;

  constructor(trace: Trace) {
    this.trace = trace;
    this.k = kindIds(trace);
    let start = 0;
    while (start < trace.n && trace.task[start]! < 0 && !trace.kinds[trace.kind[start]!]!.op) start++;
    this.start = start;
    const s = emptyState();
    this.checkpoints.push(checkpointCopy(s));
    this.cur = s;
  }

  /** This replay over `longer`, a recording whose first events are this
   * one's (the sandbox's, one command later): the checkpoints made so far
   * still hold, so only the new events are replayed. This replay's state
   * goes to the new one: use one or the other afterwards. */
  extendedTo(longer: Trace): Replay {
    const r = new Replay(longer);
    if (longer.n < this.trace.n) return r;
    r.checkpoints.splice(0, r.checkpoints.length, ...this.checkpoints);
    r.cur = this.cur;
    return r;
  }

  /** The state after `pos` events (clamped to [0, n]). Do not mutate it.
   * Checkpoints are made on the way the first time a stretch is replayed,
   * so opening a long recording costs nothing until it is scrubbed. */
  stateAt(pos: number): ReplayState {
    const n = this.trace.n;
    const p = Math.max(0, Math.min(n, Math.floor(pos)));
    if (p < this.cur.pos || p - this.cur.pos > CHECKPOINT) {
      const from = Math.min(Math.floor(p / CHECKPOINT), this.checkpoints.length - 1);
      if (p < this.cur.pos || from * CHECKPOINT > this.cur.pos) this.cur = checkpointCopy(this.checkpoints[from]!);
    }
    while (this.cur.pos < p) {
      this.apply(this.cur, this.cur.pos);
      this.cur.pos++;
      if (this.cur.pos % CHECKPOINT === 0 && this.cur.pos / CHECKPOINT === this.checkpoints.length) this.checkpoints.push(checkpointCopy(this.cur));
    }
    return this.cur;
  }

  private block(s: ReplayState, fs: number, bytenr: number, tree: number): Block {
    const key = blockKey(fs, bytenr);
    let b = s.blocks.get(key);
    if (!b) {
      b = newBlock(fs, bytenr, tree);
      s.blocks.set(key, b);
    }
    return b;
  }

  private put(s: ReplayState, b: Block): void {
    s.blocks.set(blockKey(b.fs, b.bytenr), b);
  }

  private fsOf(s: ReplayState, h: number): number {
    return s.trees.get(h)?.fs ?? 0;
  }

  private io(s: ReplayState, fs: number, ino: number): IoInode {
    const key = ioKey(fs, ino);
    let v = s.io.get(key);
    if (!v) {
      v = { fs, ino, recs: new Map(), lockPass: null, cached: null, ordered: new Map() };
      s.io.set(key, v);
    }
    return v;
  }

  /** Apply event i to s (s.pos === i). Never mutates an object a checkpoint
   * may share: blocks, locks and paths are replaced; the io records' maps
   * and the locks array are s's own (checkpointCopy copies them). */
  private apply(s: ReplayState, i: number): void {
    const tr = this.trace;
    const K = this.k;
    const kind = tr.kind[i]!;
    const base = tr.off[i]!;
    const A = tr.args;
    const a = (j: number): number => A[base + j]!;
    const task = tr.task[i]!;
    if (tr.kinds[kind]!.op) {
      const args: number[] = [];
      for (let j = tr.off[i]!; j < tr.off[i + 1]!; j++) args.push(tr.args[j]!);
      s.lastOp = { kind: tr.kinds[kind]!.name, at: i, args };
      return;
    }
    switch (kind) {
      case K.tree: {
        s.trees.set(a(0), { h: a(0), fs: a(1), id: a(2), root: 0, gone: false });
        return;
      }
      case K.root: {
        const t = s.trees.get(a(0));
        if (t) s.trees.set(a(0), { ...t, root: a(1) });
        return;
      }
      case K.blk: {
        const fs = this.fsOf(s, a(0));
        const old = s.blocks.get(blockKey(fs, a(1)));
        const fresh = !old || old.freedAt >= 0;
        const b: Block = {
          ...(fresh ? newBlock(fs, a(1), a(0)) : old!),
          tree: a(0),
          level: a(2),
          nritems: a(3),
          used: a(4),
          gen: a(5),
          k0: [a(6), a(7), a(8)],
          k1: [a(9), a(10), a(11)],
        };
        if (fresh && this.start <= i) b.bornAt = i;
        if (old && !fresh && old.gen !== b.gen && i >= this.start) b.bornAt = i;
        if (b.level === 0 && b.kids.length) b.kids = [];
        this.put(s, b);
        return;
      }
      case K.link: {
        const fs = this.fsOf(s, a(0));
        const p = this.block(s, fs, a(1), a(0));
        const kids = p.kids.slice();
        kids.splice(Math.min(a(2), kids.length), 0, a(3));
        this.put(s, { ...p, kids });
        if (!s.blocks.has(blockKey(fs, a(3)))) this.put(s, newBlock(fs, a(3), a(0)));
        return;
      }
      case K.unlink: {
        const fs = this.fsOf(s, a(0));
        const p = this.block(s, fs, a(1), a(0));
        const kids = p.kids.slice();
        kids.splice(a(2), 1);
        this.put(s, { ...p, kids });
        return;
      }
      case K.move: {
        const fs = this.fsOf(s, a(0));
        const src = this.block(s, fs, a(1), a(0));
        const dst = this.block(s, fs, a(2), a(0));
        const n = a(3);
        if (src.level === 0 || n <= 0) return; // leaves: the blk events carry the counts
        const sk = src.kids.slice();
        const dk = dst.kids.slice();
        if (a(4) === 0) dk.push(...sk.splice(0, n));
        else dk.unshift(...sk.splice(sk.length - n, n));
        this.put(s, { ...src, kids: sk });
        this.put(s, { ...dst, kids: dk });
        return;
      }
      case K.cow: {
        const fs = this.fsOf(s, a(0));
        const old = this.block(s, fs, a(1), a(0));
        const prev = s.blocks.get(blockKey(fs, a(2)));
        this.put(s, { ...(prev && prev.freedAt < 0 ? prev : newBlock(fs, a(2), a(0))), level: old.level, kids: old.kids.slice(), bornAt: i, freedAt: -1, tree: a(0) });
        if (a(3)) {
          const p = this.block(s, fs, a(3), a(0));
          this.put(s, { ...p, kids: p.kids.map((c) => (c === a(1) ? a(2) : c)) });
        } else {
          const t = s.trees.get(a(0));
          if (t) s.trees.set(a(0), { ...t, root: a(2) });
        }
        // a lock held on the old block is the copy's now
        for (let q = 0; q < s.locks.length; q++) {
          const l = s.locks[q]!;
          if (l.fs === fs && l.bytenr === a(1)) s.locks[q] = { ...l, bytenr: a(2) };
        }
        for (const [h, p] of s.paths)
          if (p.visited.includes(a(1))) s.paths.set(h, { ...p, visited: p.visited.map((v) => (v === a(1) ? a(2) : v)) });
        s.counts.cows++;
        return;
      }
      case K.split:
        s.counts.splits++;
        return;
      case K.free: {
        const fs = this.fsOf(s, a(0));
        const b = this.block(s, fs, a(1), a(0));
        this.put(s, { ...b, freedAt: i });
        s.counts.frees++;
        return;
      }
      case K.unref: {
        const fs = this.fsOf(s, a(0));
        const b = this.block(s, fs, a(1), a(0));
        this.put(s, { ...b, unrefAt: i });
        return;
      }
      case K.search: {
        s.paths.set(a(0), { tree: a(0), task, key: [a(1), a(2), a(3)], insLen: a(4), cow: a(5) !== 0, at: i, visited: [] });
        return;
      }
      case K.visit: {
        s.counts.visits++;
        const p = s.paths.get(a(0));
        if (!p || p.task !== task) {
          s.paths.set(a(0), { tree: a(0), task, key: [0, 0, 0], insLen: 0, cow: false, at: i, visited: [a(1)] });
          return;
        }
        s.paths.set(a(0), { ...p, visited: [...p.visited, a(1)] });
        return;
      }
      case K.lock: {
        const fs = this.fsOf(s, a(0));
        // s.locks is s's own array (checkpointCopy copies it): push in place
        s.locks.push({ fs, bytenr: a(1), task, mode: a(2), at: i, waitedNs: a(3) });
        if (a(3) > 0) s.waits.set(blockKey(fs, a(1)), { task, waitedNs: a(3), at: i });
        return;
      }
      case K.unlock: {
        const fs = this.fsOf(s, a(0));
        let j = -1;
        for (let q = s.locks.length - 1; q >= 0; q--) {
          const l = s.locks[q]!;
          if (l.fs === fs && l.bytenr === a(1) && l.task === task && l.mode === a(2)) {
            j = q;
            break;
          }
        }
        if (j >= 0) s.locks.splice(j, 1);
        return;
      }
      case K.treeEnd: {
        const t = s.trees.get(a(0));
        if (t) s.trees.set(a(0), { ...t, gone: true });
        return;
      }
      case K.fs:
        s.transid.set(a(0), a(1) + 1);
        return;
      case K.commitPhase:
        s.commit = { fs: a(0), transid: a(1), phase: a(2), reason: a(3), at: i };
        return;
      case K.commit: {
        const fs = a(0);
        s.transid.set(fs, a(1) + 1);
        s.commit = null;
        s.qgRecords = 0;
        s.counts.commits++;
        // what the transaction freed is gone now: drop it from the maps
        // and from the parents that still list it (a dropped subvolume)
        const gone = new Set<number>();
        for (const [key, b] of s.blocks) if (b.fs === fs && b.freedAt >= 0) gone.add(key);
        if (gone.size) {
          for (const key of gone) s.blocks.delete(key);
          for (const [key, b] of s.blocks)
            if (b.fs === fs && b.kids.length && b.kids.some((c) => gone.has(blockKey(fs, c))))
              s.blocks.set(key, { ...b, kids: b.kids.filter((c) => !gone.has(blockKey(fs, c))) });
        }
        return;
      }
      case K.qg:
        s.qgRecords = a(3);
        return;
      case K.eio: {
        const v = this.io(s, a(0), a(1));
        v.recs.set(a(2), { start: a(2), end: a(3), bits: a(4), at: i });
        return;
      }
      case K.eioDel: {
        const v = this.io(s, a(0), a(1));
        v.recs.delete(a(2));
        return;
      }
      case K.eioReset: {
        const v = this.io(s, a(0), a(1));
        s.io.set(ioKey(a(0), a(1)), { ...v, recs: new Map(), lockPass: null });
        return;
      }
      case K.lockPass: {
        const v = this.io(s, a(0), a(1));
        s.io.set(ioKey(a(0), a(1)), { ...v, lockPass: { start: a(2), end: a(3), records: a(4), at: i } });
        return;
      }
      case K.eioCount: {
        const v = this.io(s, a(0), a(1));
        s.io.set(ioKey(a(0), a(1)), { ...v, cached: a(6) >= 0 ? { start: a(6), end: a(7), at: i } : null });
        return;
      }
      case K.oeAdd: {
        const v = this.io(s, a(0), a(1));
        const ordered = new Map(v.ordered);
        ordered.set(a(2), a(3));
        s.io.set(ioKey(a(0), a(1)), { ...v, ordered });
        return;
      }
      case K.oeDone: {
        const v = this.io(s, a(0), a(1));
        const ordered = new Map(v.ordered);
        ordered.delete(a(2));
        s.io.set(ioKey(a(0), a(1)), { ...v, ordered });
        return;
      }
      case K.io: {
        const r = { t: tr.t[i]!, done: a(3), op: a(0), offset: a(1), bytes: a(2) };
        s.ioReqs = [...s.ioReqs.slice(-(KEEP_IOREQS - 1)), r];
        return;
      }
      case K.ticket:
        s.tickets = a(2);
        return;
      case K.grant:
        s.tickets = Math.max(0, s.tickets - 1);
        return;
      default:
        return;
    }
  }
}

/* ---- reading a state ------------------------------------------------ */

/** Trees of the state by fs and root id (a tree listed twice: the live one). */
export function findTree(s: ReplayState, fs: number, id: number): TreeInfo | undefined {
  let found: TreeInfo | undefined;
  for (const t of s.trees.values()) if (t.fs === fs && t.id === id && (!found || found.gone || !t.gone)) found = t;
  return found;
}

/** The io_tree's records in file order. */
export function ioRecords(v: IoInode | undefined): IoRec[] {
  if (!v) return [];
  return [...v.recs.values()].sort((x, y) => x.start - y.start);
}

/** Locks held on a block now (by any task). */
export function locksOn(s: ReplayState, fs: number, bytenr: number): HeldLock[] {
  return s.locks.filter((l) => l.fs === fs && l.bytenr === bytenr);
}

/** EXTENT_* bits (engine/src/kernel/eio.h) by name, lowest first. */
export const EIO_BITS = ['LOCKED', 'DELALLOC', 'DELALLOC_NEW', 'UPTODATE', 'NORESERVE', 'DEFRAG'] as const;

export function bitNames(bits: number): string[] {
  return EIO_BITS.filter((_, i) => bits & (1 << i));
}

/** A key as btrfs prints it: (objectid TYPE offset). */
const KEY_TYPES: Record<number, string> = {
  1: 'INODE_ITEM', 12: 'INODE_REF', 24: 'XATTR_ITEM', 48: 'ORPHAN_ITEM', 84: 'DIR_ITEM', 96: 'DIR_INDEX',
  108: 'EXTENT_DATA', 128: 'EXTENT_CSUM', 132: 'ROOT_ITEM', 144: 'ROOT_BACKREF', 156: 'ROOT_REF',
  168: 'EXTENT_ITEM', 169: 'METADATA_ITEM', 176: 'TREE_BLOCK_REF', 178: 'EXTENT_DATA_REF', 192: 'BLOCK_GROUP_ITEM',
};
export function keyText(k: Key): string {
  return `(${k[0]} ${KEY_TYPES[k[1]] ?? k[1]} ${k[2]})`;
}
