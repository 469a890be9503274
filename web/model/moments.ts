/*
 * moments.ts - a lesson step can point at a moment of its recorded runs
 * ("the first SEEK_DATA after 16 MiB") and check a statement about it
 * ("before, its range lock walks more than a thousand records; after, one").
 * Pure: the lesson player and the headless lesson test use the same code.
 *
 * A moment is an operation found in one run: the n-th operation of a kind
 * whose arguments satisfy `where` (the kind's argument names, as in
 * engine/src/kernel/trace_kinds.def). The moment is that operation done: the
 * position just before the next operation starts. The other run is held at
 * the same operation (the n-th of that kind in it), as playback's "same
 * operation" does.
 */
import type { Variant } from '../engine/types';
import { alignedPos } from './playback';
import { bitNames, ioKey, Replay, type ReplayState } from './replay';
import { arg, opPositions, type Trace } from './trace';

export type Bound = number | { gte?: number; gt?: number; lte?: number; lt?: number };

export interface MomentFind {
  /** the operation kind without "op:" ("lseek", "drop", "create") */
  op: string;
  /** the run it is found in */
  variant: Variant;
  /** the n-th match (0-based, default 0) */
  nth?: number;
  /** conditions on the operation's arguments */
  where?: Record<string, Bound>;
}

export type MomentOp = 'lt' | 'gt' | 'between';

export interface MomentCheck {
  label: string;
  variant: Variant;
  quantity: Quantity;
  op: MomentOp;
  value?: number;
  range?: [number, number];
}

export interface Moment {
  /** what the moment is, for people ("the first SEEK_DATA after 16 MiB") */
  title: string;
  find: MomentFind;
  checks: MomentCheck[];
}

/** What a check can read at a moment, and what it means. */
export const QUANTITIES = {
  op_events: 'events the operation took',
  op_visits: 'tree blocks the operation visited',
  lock_pass_records: "records the operation's io_tree range lock walked (lseek)",
  iotree_records: "records in the operation's inode's io_tree",
  iotree_records_ahead: "of those, records at or past the operation's offset",
  uptodate_records: 'io_tree records carrying EXTENT_UPTODATE',
  qgroup_records: 'qgroup records in the running transaction',
  freed_blocks: 'tree blocks freed in the running transaction (gone at its commit)',
  locks_held: 'block locks held',
  commits: 'commits since the recording started',
} as const;
export type Quantity = keyof typeof QUANTITIES;

const satisfies = (x: number, b: Bound): boolean =>
  typeof b === 'number' ? x === b : (b.gte === undefined || x >= b.gte) && (b.gt === undefined || x > b.gt) && (b.lte === undefined || x <= b.lte) && (b.lt === undefined || x < b.lt);

/** The operation a find names: [start, end] positions (after its op event;
 * just before the next operation), or null. */
export function findOp(tr: Trace, f: MomentFind): { start: number; end: number; index: number } | null {
  const kind = tr.kindId[`op:${f.op}`];
  if (kind === undefined) return null;
  const names = tr.kinds[kind]!.args;
  const ops = opPositions(tr);
  let seen = 0;
  for (let i = 0; i < tr.n; i++) {
    if (tr.kind[i] !== kind) continue;
    const ok = Object.entries(f.where ?? {}).every(([k, b]) => {
      const j = names.indexOf(k);
      return j >= 0 && satisfies(arg(tr, i, j), b);
    });
    if (!ok) continue;
    if (seen++ < (f.nth ?? 0)) continue;
    const next = ops.find((p) => p > i + 1);
    return { start: i + 1, end: next !== undefined ? next - 1 : tr.n, index: i };
  }
  return null;
}

/** Where each run stands at the moment (null: the moment is not in the run it names). */
export function momentPositions(traces: Partial<Record<Variant, Trace>>, f: MomentFind): Partial<Record<Variant, number>> | null {
  const home = traces[f.variant];
  if (!home) return null;
  const op = findOp(home, f);
  if (!op) return null;
  const out: Partial<Record<Variant, number>> = { [f.variant]: op.end };
  for (const [v, tr] of Object.entries(traces) as [Variant, Trace][]) {
    if (v === f.variant) continue;
    out[v] = alignedPos(home, tr, op.end, opPositions(tr));
  }
  return out;
}

/** The start of the operation a position is in (its op event's position + 1), or 0. */
function opStartOf(tr: Trace, pos: number): number {
  for (let i = Math.min(pos, tr.n) - 1; i >= 0; i--) if (tr.kinds[tr.kind[i]!]!.op) return i + 1;
  return 0;
}

/** A quantity at a position of a run. */
export function quantityAt(tr: Trace, replay: Replay, pos: number, q: Quantity): number {
  const s: ReplayState = replay.stateAt(pos);
  const start = opStartOf(tr, pos);
  const opEvent = start > 0 ? start - 1 : -1;
  const args: Record<string, number> = {};
  if (opEvent >= 0) tr.kinds[tr.kind[opEvent]!]!.args.forEach((n, j) => (args[n] = arg(tr, opEvent, j)));
  const io = args.ino !== undefined ? s.io.get(ioKey(args.fs ?? 0, args.ino)) : [...s.io.values()].sort((x, y) => y.recs.size - x.recs.size)[0];
  const kindIs = (name: string): number => tr.kindId[name] ?? -1;
  switch (q) {
    case 'op_events':
      return pos - start;
    case 'op_visits': {
      const k = kindIs('visit');
      let n = 0;
      for (let i = start; i < pos; i++) if (tr.kind[i] === k) n++;
      return n;
    }
    case 'lock_pass_records': {
      const k = kindIs('eio_lock_pass');
      for (let i = pos - 1; i >= start; i--) if (tr.kind[i] === k) return arg(tr, i, 4);
      return 0;
    }
    case 'iotree_records':
      return io ? io.recs.size : 0;
    case 'iotree_records_ahead': {
      const off = args.offset ?? 0;
      let n = 0;
      if (io) for (const r of io.recs.values()) if (r.end >= off) n++;
      return n;
    }
    case 'uptodate_records': {
      let n = 0;
      if (io) for (const r of io.recs.values()) if (bitNames(r.bits).includes('UPTODATE')) n++;
      return n;
    }
    case 'qgroup_records':
      return s.qgRecords;
    case 'freed_blocks': {
      let n = 0;
      for (const b of s.blocks.values()) if (b.freedAt >= 0) n++;
      return n;
    }
    case 'locks_held':
      return s.locks.length;
    case 'commits':
      return s.counts.commits;
  }
}

export interface MomentOutcome {
  check: MomentCheck;
  pass: boolean;
  actual: number;
  detail: string;
}

/** Evaluate a moment's checks on the runs' recordings. */
export function evaluateMoment(m: Moment, traces: Partial<Record<Variant, Trace>>): { positions: Partial<Record<Variant, number>> | null; outcomes: MomentOutcome[] } {
  const positions = momentPositions(traces, m.find);
  const replays: Partial<Record<Variant, Replay>> = {};
  const outcomes = m.checks.map((c): MomentOutcome => {
    const tr = traces[c.variant];
    const pos = positions?.[c.variant];
    if (!tr || pos === undefined) return { check: c, pass: false, actual: NaN, detail: positions ? `no recording of ${c.variant}` : `the moment "${m.title}" is not in the ${m.find.variant} run` };
    const r = (replays[c.variant] ??= new Replay(tr));
    const x = quantityAt(tr, r, pos, c.quantity);
    let pass: boolean;
    let rhs: string;
    if (c.op === 'lt') {
      pass = x < c.value!;
      rhs = `< ${c.value}`;
    } else if (c.op === 'gt') {
      pass = x > c.value!;
      rhs = `> ${c.value}`;
    } else {
      pass = x >= c.range![0] && x <= c.range![1];
      rhs = `in [${c.range![0]}, ${c.range![1]}]`;
    }
    return { check: c, pass, actual: x, detail: `${c.variant} ${c.quantity} = ${x} ${rhs}` };
  });
  return { positions, outcomes };
}

/** Problems with a moment (lesson validation), with JSON paths. */
export function validateMoment(m: unknown, path: string, variants: string[]): string[] {
  const errs: string[] = [];
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);
  if (!isObj(m)) return [`${path}: must be an object {title, find, checks}`];
  if (typeof m.title !== 'string' || !m.title.trim()) errs.push(`${path}.title: must be a non-empty string`);
  const f = m.find;
  if (!isObj(f)) errs.push(`${path}.find: must be an object {op, variant, nth?, where?}`);
  else {
    if (typeof f.op !== 'string' || !/^[a-z_]+$/.test(f.op)) errs.push(`${path}.find.op: must name an operation kind ("lseek", "drop"...)`);
    if (typeof f.variant !== 'string' || !variants.includes(f.variant)) errs.push(`${path}.find.variant: must be a variant the step runs (${variants.join(', ')})`);
    if (f.nth !== undefined && !(Number.isInteger(f.nth) && (f.nth as number) >= 0)) errs.push(`${path}.find.nth: must be a whole number >= 0`);
    if (f.where !== undefined) {
      if (!isObj(f.where)) errs.push(`${path}.find.where: must map argument names to a number or {gte, gt, lte, lt}`);
      else
        for (const [k, b] of Object.entries(f.where))
          if (!(typeof b === 'number' || (isObj(b) && Object.keys(b).length > 0 && Object.entries(b).every(([bk, bv]) => ['gte', 'gt', 'lte', 'lt'].includes(bk) && typeof bv === 'number'))))
            errs.push(`${path}.find.where.${k}: must be a number or {gte, gt, lte, lt}`);
    }
  }
  if (!Array.isArray(m.checks) || m.checks.length === 0) errs.push(`${path}.checks: must be a non-empty array`);
  else
    m.checks.forEach((c: unknown, j: number) => {
      const cp = `${path}.checks[${j}]`;
      if (!isObj(c)) return void errs.push(`${cp}: must be an object`);
      if (typeof c.label !== 'string' || !c.label.trim()) errs.push(`${cp}.label: must be a non-empty string`);
      if (typeof c.variant !== 'string' || !variants.includes(c.variant)) errs.push(`${cp}.variant: must be a variant the step runs (${variants.join(', ')})`);
      if (typeof c.quantity !== 'string' || !(c.quantity in QUANTITIES)) errs.push(`${cp}.quantity: must be one of ${Object.keys(QUANTITIES).join(', ')}`);
      if (c.op === 'between') {
        if (!Array.isArray(c.range) || c.range.length !== 2 || c.range.some((x) => typeof x !== 'number') || (c.range[0] as number) > (c.range[1] as number))
          errs.push(`${cp}.range: must be [low, high]`);
      } else if (c.op === 'lt' || c.op === 'gt') {
        if (typeof c.value !== 'number' || !Number.isFinite(c.value)) errs.push(`${cp}.value: must be a number`);
      } else errs.push(`${cp}.op: must be lt, gt or between`);
    });
  return errs;
}
