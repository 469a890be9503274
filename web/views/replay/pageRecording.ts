/*
 * pageRecording.ts - what each experiment page records for its pictures
 * (web/app/usePageRecording.ts makes the recordings when the page's runs
 * are in): the moment the page is about, as an operation the engine
 * starts the recording at (the same rule for both kernels), the kinds of
 * event the picture needs (a full-scale run keeps its window small), and
 * what to draw. Pure: data and small functions of the finished runs.
 */
import type { RecordSpec, RunResult, Variant } from '../../engine/types';
import { fmtNum } from '../../model/format';
import { longestLeafClone, sameLeafClone } from '../../model/pageMoments';
import { findTree, type ReplayState, type TreeInfo } from '../../model/replay';
import type { Trace } from '../../model/trace';

export interface PageWindow {
  record: RecordSpec;
  /** says which window ("from cp's first lseek") */
  window: string;
  /** it begins at the run's first operation of its kind */
  fromFirst: boolean;
}

export interface PageRecordingSpec {
  /** where the recordings start, from the page's finished runs; null: the
   * moment did not happen in them */
  start(runs: Partial<Record<Variant, RunResult>>, params: Record<string, string>): PageWindow | null;
  /** the kinds of event kept (trace_kinds.def; op kinds by name) */
  only?: string[];
  maxEvents?: number;
  /** what the page says when there is no such moment */
  missing?: string;
  picture: 'lseek' | 'trees' | 'items';
  /** the trees each kernel's side shows, biggest story first */
  pickTrees?: (s: ReplayState) => TreeInfo[];
  /** where the player starts, a position in the first kernel's recording
   * (the other at the same operation); default: where the kernels first
   * differ, else the window's first operation */
  initial?: (first: Trace) => number;
  /** a sentence on the moment the player starts at (both kernels) */
  caption?: (first: Trace, second: Trace | undefined, pos: number) => string | null;
  /** the figure the picture compares at that moment, per kernel (the
   * page marks it up, so a test can read the difference without the text) */
  compare?: (first: Trace, second: Trace | undefined, pos: number) => { what: string; before: number; after: number } | null;
  /** one or two sentences: what to look at */
  blurb: string;
}

/** B-tree structure: what a tree picture needs to rebuild its blocks. */
export const TREE_KINDS = ['tree', 'root', 'blk', 'link', 'unlink', 'move', 'cow', 'split', 'free', 'unref', 'tree_end', 'fs', 'commit', 'commit_phase'];
/** cp's lseeks: the io_tree, each call, its lock and its searches, and
 * the fs tree's searches (which leaf of file extent items each call reads). */
export const LSEEK_KINDS = ['eio', 'eio_del', 'eio_reset', 'eio_lock_pass', 'op:lseek', 'lseek_ret', 'eio_count', 'oe_add', 'oe_done', 'search', ...TREE_KINDS];

const fromOp = (kind: string, nth: number, window: string): PageWindow => ({ record: { fromOp: { kind, nth } }, window, fromFirst: nth === 0 });

/** qgroup-drop: the subvolume being dropped, else the lowest-numbered one still there. */
export function droppedTrees(s: ReplayState): TreeInfo[] {
  let best: TreeInfo | undefined;
  for (const t of s.trees.values()) {
    if (t.gone || t.id < 256 || !t.root) continue;
    if (!s.blocks.get(t.root * 64 + t.fs)) continue;
    if (s.lastOp?.kind === 'op:drop' && s.lastOp.args[1] === t.id) return [t];
    if (!best || t.id < best.id) best = t;
  }
  return best ? [best] : [];
}

/** bonnie: the subvolume's tree (the leaves an fsync read-locks and
 * clones) and the log tree they are copied into. */
export function bonnieTrees(s: ReplayState): TreeInfo[] {
  const out: TreeInfo[] = [];
  const fst = findTree(s, 1, 5);
  if (fst) out.push(fst);
  let log: TreeInfo | undefined;
  for (const t of s.trees.values()) if (!t.gone && t.root && (t.id === -6 || t.id > 1e18) && s.blocks.get(t.root * 64 + t.fs)) log = t;
  if (log) out.push(log);
  return out;
}

/** receive: the received subvolume on the destination (the second file system). */
export function receivedTrees(s: ReplayState): TreeInfo[] {
  let dst = 0;
  for (const t of s.trees.values()) dst = Math.max(dst, t.fs);
  const t = findTree(s, dst, 256) ?? findTree(s, dst, 5);
  return t ? [t] : [];
}

/** bonnie's moment: the operation where the before kernel's longest
 * allocation under a leaf's read lock happened (details.moments), the
 * same operation in both kernels; else its longest leaf hold. */
export function bonnieMoment(runs: Partial<Record<Variant, RunResult>>): PageWindow | null {
  for (const v of ['before', 'after'] as Variant[]) {
    const mo = (runs[v]?.details?.moments ?? {}) as Record<string, { op?: string; nth?: number; ms?: number }>;
    for (const key of ['alloc_locked', 'leaf_hold']) {
      const m = mo[key];
      if (m && typeof m.op === 'string' && typeof m.nth === 'number') {
        const what = key === 'alloc_locked' ? `the longest allocation under a leaf's read lock (${v}, ${m.ms?.toFixed(1)} ms)` : `the longest leaf lock (${v})`;
        return fromOp(m.op, m.nth, `from ${m.op.slice(3).replace('_', ' ')} #${m.nth + 1}, ${what}`);
      }
    }
  }
  return null;
}

/** A page's recording as its picture receives it (web/app/usePageRecording.ts). */
export interface PageRecordingState {
  status: 'idle' | 'waiting' | 'recording' | 'done' | 'none' | 'error';
  progress: number;
  sides: { variant: Variant; trace: Trace }[];
  window: string;
  fromFirst: boolean;
  error: string | null;
  wallMs: number;
  /** record another window: from a simulated time (ms), or the page's moment (null) */
  recordFrom(ms: number | null): void;
}

/** bonnie: how long the clone the player starts at held the leaf's read lock, in both kernels (ms). */
export function bonnieCompare(a: Trace, b: Trace | undefined, pos: number): { what: string; before: number; after: number } | null {
  const c = sameLeafClone(a, b, pos);
  return c.a && c.b ? { what: 'leaf read lock held (ms)', before: c.a.holdMs, after: c.b.holdMs } : null;
}

/** bonnie: the clone the player starts at, in both kernels. */
export function bonnieCaption(a: Trace, b: Trace | undefined, pos: number): string | null {
  const c = sameLeafClone(a, b, pos);
  if (!c.a) return null;
  const ms = (x: number): string => (x > 0 && x < 0.1 ? `${fmtNum(x * 1000)} µs` : `${fmtNum(x)} ms`);
  const before = `before, the leaf's read lock was held ${ms(c.a.holdMs)}${c.a.allocMs > 0 ? `, ${ms(c.a.allocMs)} of it allocating the copy's extent buffer` : ''}`;
  const after = c.b ? `; after, the same copy held it ${ms(c.b.holdMs)}${c.b.allocMs > 0 ? ` (${ms(c.b.allocMs)} allocating)` : ', its buffer allocated before the lock'}` : '';
  return `This fsync copies a subvolume leaf into the log tree: ${before}${after}.`;
}

export const PAGE_RECORDINGS: Record<string, PageRecordingSpec> = {
  'sparse-cp': {
    start: () => fromOp('op:lseek', 0, "from cp's first lseek"),
    only: LSEEK_KINDS,
    maxEvents: 600_000,
    picture: 'lseek',
    blurb: '',
  },
  'qgroup-drop': {
    start: () => fromOp('op:drop', 0, "from the drop's first step to the commit that accounts it"),
    only: [...TREE_KINDS, 'op:drop', 'qg_record'],
    maxEvents: 400_000,
    picture: 'trees',
    pickTrees: droppedTrees,
    blurb:
      "The cleaner drops a deleted subvolume leaf by leaf: each dropped leaf turns to a ghost and queues qgroup records in the running transaction, until a commit accounts them all at once. Before the patch they pile up until the transaction's own commit; after it, a commit every threshold records.",
  },
  bonnie: {
    start: (runs) => bonnieMoment(runs),
    only: [...TREE_KINDS, 'search', 'visit', 'lock', 'unlock', 'fsync', 'log_commit', 'leaf_copy', 'op:seq_create', 'op:rand_create', 'op:seq_delete', 'op:rand_delete'],
    maxEvents: 150_000,
    missing: 'No fsync cloned a leaf in these runs.',
    picture: 'trees',
    pickTrees: bonnieTrees,
    initial: longestLeafClone,
    caption: bonnieCaption,
    compare: bonnieCompare,
    blurb:
      "The create where a leaf was held longest: its fsync read-locks the file's leaf in the subvolume and copies it into the log tree. Before the patch the copy is a fresh extent buffer allocated while the lock is held, and under memory pressure that allocation waits; after it, a buffer allocated before the lock.",
  },
  receive: {
    // the whole receive: its items appear at the truncate (before) or at
    // the sync at the very end
    start: () => fromOp('op:mkfile', 0, "from the receive's first file to its sync"),
    only: ['op:mkfile', 'op:truncate', 'op:sync', 'oe_add', 'oe_done'],
    maxEvents: 400_000,
    picture: 'items',
    blurb: '',
  },
};
