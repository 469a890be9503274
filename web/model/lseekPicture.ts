/*
 * lseekPicture.ts - cp's lseeks out of a recorded run, for the picture of
 * the io_tree around cp's cursor (views/replay/LseekPicture.tsx). Pure.
 *
 * From the engine's events (engine/src/kernel/trace_kinds.def): op:lseek
 * starts a call (offset, whence, i_size); eio_lock_pass is its range lock
 * [offset's page, EOF]; each eio_count is one delalloc search
 * (count_range_bits) with how it started: 0 = no cached state (6.1, it
 * descends from the root), 1 = from the cached record (a hit), 2 = the
 * cached state was no use (a miss: it descends); lseek_ret ends the call
 * with what the whole call walked. Summed over a recording that holds
 * every call, the counts are the run's metrics (lseek_calls,
 * state_cache_hits, state_cache_misses, lock_records_avg,
 * search_records_avg): `totals` says which.
 *
 * The io_tree lane lays out the records of a window of the file around
 * the cursor, the range lock, the record the cached state points at and
 * the lseeks already made, each marked by how its searches started.
 */
import type { IoRec } from './replay';
import type { Trace } from './trace';

export type SearchStart = 0 | 1 | 2;

export interface LseekSearch {
  start: number;
  end: number;
  /** 0 no cached state (descends), 1 hit, 2 miss (descends) */
  cached: SearchStart;
  records: number;
  /** where the cached state points after it ([start, end]), or null */
  cs: [number, number] | null;
}

/** How a call's delalloc searches began: every one at the cached state
 * ('hit'), some there and some from the root ('mixed': cp on a file of
 * delalloc, where the first search of a call finds the cached record two
 * records ahead of its offset and descends, the next starts there), every
 * one from the root ('descent'), or none ran ('none'). */
export type LseekMark = 'hit' | 'mixed' | 'descent' | 'none';

export interface LseekCall {
  /** its number in the recording (0: the first call recorded) */
  n: number;
  /** replay positions: just after its op:lseek, just after its lseek_ret */
  pos: number;
  end: number;
  t: number;
  fs: number;
  ino: number;
  offset: number;
  whence: 'data' | 'hole';
  iSize: number;
  /** -1: ENXIO */
  result: number;
  lock: { start: number; end: number; records: number } | null;
  /** replay position just before its range lock (the io_tree the lock
   * walks: a readahead's LOCKED records it waited for are gone by then) */
  lockAt: number;
  /** what lseek_ret says the call walked */
  lockRecords: number;
  searchRecords: number;
  hits: number;
  misses: number;
  searches: LseekSearch[];
  mark: LseekMark;
}

export interface LseekTotals {
  calls: number;
  /** state_cache_hits / state_cache_misses */
  hits: number;
  misses: number;
  /** searches that descended from the root (no cached state, or a miss) */
  descents: number;
  /** calls by mark */
  hitCalls: number;
  mixedCalls: number;
  descentCalls: number;
  noSearchCalls: number;
  lockRecords: number;
  searchRecords: number;
  /** per call: lock_records_avg, search_records_avg, records_per_lseek_avg */
  lockAvg: number;
  searchAvg: number;
  recordsAvg: number;
}

export interface LseekRun {
  calls: LseekCall[];
  /** the inode cp reads (the first call's) */
  fs: number;
  ino: number;
  iSize: number;
  /** the recording holds every call of the run (window from the first,
   * nothing left out): its totals are the run's metrics */
  whole: boolean;
}

const WHENCE_DATA = 3;

/** The lseeks of a recording, in order. A call still open at the end of a
 * window (no lseek_ret) is left out. `fromFirst`: the recording began at
 * or before the run's first lseek (from time 0, or from_op op:lseek nth 0). */
export function lseekCalls(tr: Trace, fromFirst = true): LseekRun {
  const k = (n: string): number => tr.kindId[n] ?? -1;
  const kOp = k('op:lseek');
  const kRet = k('lseek_ret');
  const kLock = k('eio_lock_pass');
  const kCount = k('eio_count');
  const calls: LseekCall[] = [];
  let cur: LseekCall | null = null;
  const a = (i: number, j: number): number => tr.args[tr.off[i]! + j]!;
  const nargs = (i: number): number => tr.off[i + 1]! - tr.off[i]!;
  for (let i = 0; i < tr.n; i++) {
    const kind = tr.kind[i]!;
    if (kind === kOp) {
      cur = {
        n: calls.length,
        pos: i + 1,
        end: i + 1,
        t: tr.t[i]!,
        fs: a(i, 0),
        ino: a(i, 1),
        whence: a(i, 2) === WHENCE_DATA ? 'data' : 'hole',
        offset: a(i, 3),
        iSize: a(i, 4),
        result: -1,
        lock: null,
        lockAt: i + 1,
        lockRecords: 0,
        searchRecords: 0,
        hits: 0,
        misses: 0,
        searches: [],
        mark: 'none',
      };
    } else if (!cur) {
      continue;
    } else if (kind === kLock && a(i, 1) === cur.ino && a(i, 0) === cur.fs) {
      cur.lock = { start: a(i, 2), end: a(i, 3), records: a(i, 4) };
      cur.lockAt = i;
    } else if (kind === kCount && a(i, 1) === cur.ino && a(i, 0) === cur.fs) {
      const c = a(i, 4);
      cur.searches.push({ start: a(i, 2), end: a(i, 3), cached: (c === 1 ? 1 : c === 2 ? 2 : 0) as SearchStart, records: a(i, 5), cs: a(i, 6) >= 0 ? [a(i, 6), a(i, 7)] : null });
    } else if (kind === kRet && a(i, 1) === cur.ino && a(i, 0) === cur.fs) {
      cur.result = a(i, 3);
      cur.end = i + 1;
      // older recordings carry only the result
      if (nargs(i) >= 8) {
        cur.lockRecords = a(i, 4);
        cur.searchRecords = a(i, 5);
        cur.hits = a(i, 6);
        cur.misses = a(i, 7);
      }
      cur.mark = markOf(cur.searches);
      calls.push(cur);
      cur = null;
    }
  }
  const first = calls[0];
  return {
    calls,
    fs: first?.fs ?? 0,
    ino: first?.ino ?? 0,
    iSize: first?.iSize ?? 0,
    whole: fromFirst && tr.complete && cur === null,
  };
}

export function markOf(searches: LseekSearch[]): LseekMark {
  if (searches.length === 0) return 'none';
  const hits = searches.filter((s) => s.cached === 1).length;
  return hits === searches.length ? 'hit' : hits > 0 ? 'mixed' : 'descent';
}

/** The counts of calls [0, upto) (all when upto is absent). */
export function lseekTotals(calls: LseekCall[], upto = calls.length): LseekTotals {
  const t: LseekTotals = { calls: 0, hits: 0, misses: 0, descents: 0, hitCalls: 0, mixedCalls: 0, descentCalls: 0, noSearchCalls: 0, lockRecords: 0, searchRecords: 0, lockAvg: 0, searchAvg: 0, recordsAvg: 0 };
  const n = Math.max(0, Math.min(upto, calls.length));
  for (let i = 0; i < n; i++) {
    const c = calls[i]!;
    t.calls++;
    t.hits += c.hits;
    t.misses += c.misses;
    for (const s of c.searches) if (s.cached !== 1) t.descents++;
    if (c.mark === 'hit') t.hitCalls++;
    else if (c.mark === 'mixed') t.mixedCalls++;
    else if (c.mark === 'descent') t.descentCalls++;
    else t.noSearchCalls++;
    t.lockRecords += c.lockRecords;
    t.searchRecords += c.searchRecords;
  }
  if (t.calls) {
    t.lockAvg = t.lockRecords / t.calls;
    t.searchAvg = t.searchRecords / t.calls;
    t.recordsAvg = (t.lockRecords + t.searchRecords) / t.calls;
  }
  return t;
}

/** The run's metrics the totals stand for (names as the engine lists them). */
export function totalsAsMetrics(t: LseekTotals): Record<string, number> {
  return {
    lseek_calls: t.calls,
    state_cache_hits: t.hits,
    state_cache_misses: t.misses,
    lock_records_avg: t.lockAvg,
    search_records_avg: t.searchAvg,
    records_per_lseek_avg: t.recordsAvg,
  };
}

/** The call cp makes at a file offset: the last one at or before it (cp
 * walks the file forwards), else the first. -1 if none. */
export function callAtOffset(calls: LseekCall[], off: number): number {
  if (calls.length === 0) return -1;
  let lo = 0;
  let hi = calls.length - 1;
  if (calls[0]!.offset > off) return 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (calls[mid]!.offset <= off) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/* ---- the lane: a window of the file around the cursor ----------------- */

export interface LaneOptions {
  width: number;
  /** the file window [from, to) in bytes */
  from: number;
  to: number;
}

export interface LaneRec {
  x: number;
  w: number;
  bits: number;
  /** records merged into this mark (they share a pixel) */
  count: number;
  start: number;
  end: number;
  /** the cached state points at it */
  cached: boolean;
}

export interface LaneCall {
  x: number;
  n: number;
  mark: LseekMark;
  whence: 'data' | 'hole';
  current: boolean;
}

export interface LseekLane {
  recs: LaneRec[];
  /** records before / after the window */
  before: number;
  after: number;
  /** the current call's range lock on the window: x0..x1 (x1 = width when
   * it runs on past the window, as it does to EOF) */
  lock: { x0: number; x1: number; past: boolean; records: number; from: number; to: number } | null;
  /** the cached state: where it points (x range) or null; `inWindow`
   * false when the record is outside the window (an arrow at the edge) */
  cached: { x0: number; x1: number; side: -1 | 0 | 1; start: number; end: number } | null;
  /** the calls made so far whose offset falls in the window */
  calls: LaneCall[];
  /** the current call's offset */
  cursorX: number | null;
  scale: (off: number) => number;
}

/** Records sorted by start, as ioRecords gives them. */
export function layoutLseekLane(
  recs: IoRec[],
  calls: LseekCall[],
  k: number,
  cached: { start: number; end: number } | null,
  o: LaneOptions,
): LseekLane {
  const span = Math.max(1, o.to - o.from);
  const scale = (off: number): number => ((off - o.from) / span) * o.width;
  const out: LaneRec[] = [];
  let before = 0;
  let after = 0;
  let last: LaneRec | null = null;
  for (const r of recs) {
    if (r.end < o.from) {
      before++;
      continue;
    }
    if (r.start >= o.to) {
      after++;
      continue;
    }
    const x0 = Math.max(0, scale(r.start));
    const x1 = Math.min(o.width, scale(r.end + 1));
    const isCached = cached !== null && cached.start === r.start;
    if (last && x1 - x0 < 1 && x0 < last.x + last.w + 0.5 && !isCached && !last.cached) {
      last.w = Math.max(last.w, x1 - last.x);
      last.bits |= r.bits;
      last.count++;
      last.end = r.end;
      continue;
    }
    last = { x: x0, w: Math.max(0.5, x1 - x0), bits: r.bits, count: 1, start: r.start, end: r.end, cached: isCached };
    out.push(last);
  }
  const cur = k >= 0 && k < calls.length ? calls[k]! : null;
  let lock: LseekLane['lock'] = null;
  if (cur?.lock && cur.lock.end >= o.from && cur.lock.start < o.to) {
    lock = {
      x0: Math.max(0, scale(cur.lock.start)),
      x1: Math.min(o.width, scale(cur.lock.end + 1)),
      past: cur.lock.end + 1 > o.to,
      records: cur.lock.records,
      from: cur.lock.start,
      to: cur.lock.end,
    };
  }
  let cs: LseekLane['cached'] = null;
  if (cached) {
    const side: -1 | 0 | 1 = cached.end < o.from ? -1 : cached.start >= o.to ? 1 : 0;
    cs = { x0: side < 0 ? 0 : side > 0 ? o.width : Math.max(0, scale(cached.start)), x1: side < 0 ? 0 : side > 0 ? o.width : Math.min(o.width, scale(cached.end + 1)), side, start: cached.start, end: cached.end };
  }
  const lc: LaneCall[] = [];
  for (let i = 0; i <= k && i < calls.length; i++) {
    const c = calls[i]!;
    if (c.offset < o.from || c.offset >= o.to) continue;
    lc.push({ x: scale(c.offset), n: c.n, mark: c.mark, whence: c.whence, current: i === k });
  }
  return { recs: out, before, after, lock, cached: cs, calls: lc, cursorX: cur && cur.offset >= o.from && cur.offset < o.to ? scale(cur.offset) : null, scale };
}

/** The file window around an offset: `span` bytes, a quarter of it behind
 * the offset (cp reads forwards: what is ahead is what the lock walks),
 * inside [0, size). */
export function windowAround(offset: number, span: number, size: number): { from: number; to: number } {
  const s = Math.max(4096, Math.min(span, Math.max(4096, size)));
  let from = Math.max(0, Math.floor(offset - s / 4));
  if (size > 0 && from + s > size) from = Math.max(0, size - s);
  return { from, to: from + s };
}

/* ---- what a range lock walks ------------------------------------------ */

export interface LockWalk {
  /** records of the io_tree inside the locked range */
  inRange: number;
  /** stretches of the range no record covers: the lock fills each with a
   * LOCKED record of its own, which the unlock frees in the same call */
  gaps: number;
  /** records the lock (set_extent_bit LOCKED) and the unlock (clear) walk */
  lock: number;
  unlock: number;
  total: number;
  /** where the records in range begin and end (null: none) */
  first: number | null;
  last: number | null;
}

/**
 * What an lseek's range lock over [start, end] walks on the io_tree as it
 * stands (records sorted by start, as ioRecords gives them): the engine's
 * own count (eio_lock_pass_cost in engine/src/kernel/eio.c, which the
 * recording's lseek_ret carries), broken down so the picture can say where
 * the records are. The lock visits every record in range and fills every
 * gap with a LOCKED record; the unlock walks all of them again and frees
 * the fillers. None of the fillers outlives the call, so a picture of the
 * tree after the call never shows them.
 */
export function lockWalk(recs: IoRec[], start: number, end: number): LockWalk {
  let k = 0;
  let adj = 0;
  let first: IoRec | null = null;
  let last: IoRec | null = null;
  let beyond = false;
  let after: IoRec | null = null;
  for (const r of recs) {
    if (r.end < start) continue;
    if (r.start > end) {
      beyond = true;
      after ??= r;
      continue;
    }
    if (last && r.start === last.end + 1) adj++;
    first ??= r;
    last = r;
    k++;
  }
  if (k === 0 || !first || !last) {
    // one descent finds nothing in range (visiting the record beyond, if
    // any) and puts one record in; the unlock frees it
    const lock = after ? 1 : 0;
    return { inRange: 0, gaps: 1, lock, unlock: 1, total: lock + 1, first: null, last: null };
  }
  const hs = first.start < start ? 1 : 0;
  const hg = first.start > start ? 1 : 0;
  const ts = last.end > end ? 1 : 0;
  const tg = last.end < end ? 1 : 0;
  const over = k === 1 && hs && ts ? 1 : 0;
  const gi = k - 1 - adj;
  const lock = k + gi + hg + (tg && beyond ? 1 : 0) + over;
  const unlock = k + gi + hg + tg;
  return { inRange: k, gaps: gi + hg + tg, lock, unlock, total: lock + unlock, first: first.start, last: last.end };
}
