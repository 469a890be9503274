/*
 * trace.ts - a recorded run (engine: lab_record / lab_trace_json, kinds in
 * engine/src/kernel/trace_kinds.def) decoded into columns: one typed array
 * per field, so that a trace of a million events is a few compact arrays
 * that cross the worker boundary cheaply and that the replay reads by index.
 *
 * Events are kept in the order the engine did them, which is the order the
 * structures changed in. Their times are not monotonic (a task's step runs
 * ahead of the others), so `tmax` holds the running maximum: the scrubber
 * maps a simulated time to the last event at or before it through it.
 */

export interface TraceKind {
  name: string;
  args: string[];
  /** An operation's start ("op:lseek", "op:drop"...): step-by-operation stops here. */
  op: boolean;
}

export interface Trace {
  kinds: TraceKind[];
  /** kind name -> id (absent: the engine never registered it). */
  kindId: Record<string, number>;
  /** task names by id */
  tasks: string[];
  n: number;
  t: Float64Array;
  tmax: Float64Array;
  kind: Uint16Array;
  task: Int16Array;
  /** event i's arguments are args[off[i] .. off[i+1]) */
  off: Uint32Array;
  args: Float64Array;
  /** the recording's bounds and whether it is the whole run */
  fromNs: number;
  lastNs: number;
  complete: boolean;
  kept: number;
  unkept: number;
  maxEvents: number;
}

interface RawKind {
  name: string;
  args: string[];
}

/** The "trace" object of lab_trace_json. */
export interface RawTrace {
  recording?: boolean;
  from_ns?: number;
  last_ns?: number;
  complete?: boolean;
  kept?: number;
  unkept?: number;
  max_events?: number;
  kinds?: RawKind[];
  tasks?: string[];
  events?: number[][];
}

/** Decode lab_trace_json's "trace" object. Throws on a malformed one. */
export function decodeTrace(raw: RawTrace): Trace {
  if (!raw || !Array.isArray(raw.kinds) || !Array.isArray(raw.events)) throw new Error('not a recorded trace');
  const kinds: TraceKind[] = raw.kinds.map((k) => ({ name: String(k.name), args: (k.args ?? []).map(String), op: String(k.name).startsWith('op:') }));
  const kindId: Record<string, number> = {};
  kinds.forEach((k, i) => {
    kindId[k.name] = i;
  });
  const ev = raw.events;
  const n = ev.length;
  let nargs = 0;
  for (const e of ev) nargs += Math.max(0, e.length - 3);
  const t = new Float64Array(n);
  const tmax = new Float64Array(n);
  const kind = new Uint16Array(n);
  const task = new Int16Array(n);
  const off = new Uint32Array(n + 1);
  const args = new Float64Array(nargs);
  let p = 0;
  let run = 0;
  for (let i = 0; i < n; i++) {
    const e = ev[i]!;
    t[i] = e[0]!;
    run = Math.max(run, e[0]!);
    tmax[i] = run;
    kind[i] = e[1]!;
    task[i] = e[2]!;
    off[i] = p;
    for (let j = 3; j < e.length; j++) args[p++] = e[j]!;
  }
  off[n] = p;
  return {
    kinds,
    kindId,
    tasks: (raw.tasks ?? []).map(String),
    n,
    t,
    tmax,
    kind,
    task,
    off,
    args,
    fromNs: raw.from_ns ?? 0,
    lastNs: raw.last_ns ?? (n ? run : 0),
    complete: raw.complete ?? true,
    kept: raw.kept ?? n,
    unkept: raw.unkept ?? 0,
    maxEvents: raw.max_events ?? n,
  };
}

/** Argument j of event i. */
export const arg = (tr: Trace, i: number, j: number): number => tr.args[tr.off[i]! + j]!;

/** Event i as a plain object {kind, t, task, args by name} (hover text, tests). */
export function eventAt(tr: Trace, i: number): { i: number; kind: string; t: number; task: string; args: Record<string, number> } {
  const k = tr.kinds[tr.kind[i]!];
  const args: Record<string, number> = {};
  (k?.args ?? []).forEach((name, j) => {
    if (tr.off[i]! + j < tr.off[i + 1]!) args[name] = arg(tr, i, j);
  });
  const tk = tr.task[i]!;
  return { i, kind: k?.name ?? '?', t: tr.t[i]!, task: tk >= 0 ? (tr.tasks[tk] ?? `task ${tk}`) : '', args };
}

/** The number of events at or before simulated time `ns` (a position). */
export function positionAt(tr: Trace, ns: number): number {
  let lo = 0;
  let hi = tr.n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tr.tmax[mid]! <= ns) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The simulated time at a position (after `pos` events): the latest time reached. */
export const timeAt = (tr: Trace, pos: number): number => (pos <= 0 ? tr.fromNs : tr.tmax[Math.min(pos, tr.n) - 1]!);

/** Positions just after each operation start: op kinds (or one kind by name). */
export function opPositions(tr: Trace, name?: string): number[] {
  const out: number[] = [];
  const want = name !== undefined ? tr.kindId[name] : undefined;
  for (let i = 0; i < tr.n; i++) {
    const k = tr.kind[i]!;
    if (want !== undefined ? k === want : tr.kinds[k]!.op) out.push(i + 1);
  }
  return out;
}

/** The next / previous operation start from a position (pos itself excluded). */
export function stepOp(ops: number[], pos: number, dir: 1 | -1): number {
  if (dir > 0) {
    for (const p of ops) if (p > pos) return p;
    return ops.length ? Math.max(pos, ops[ops.length - 1]!) : pos;
  }
  for (let i = ops.length - 1; i >= 0; i--) if (ops[i]! < pos) return ops[i]!;
  return 0;
}

/**
 * The operation a position is in: its kind name, its ordinal among the ops
 * of that kind (0-based) and the position of its start; null before the first.
 */
export function opAt(tr: Trace, pos: number): { kind: string; nth: number; start: number } | null {
  let start = -1;
  for (let i = Math.min(pos, tr.n) - 1; i >= 0; i--)
    if (tr.kinds[tr.kind[i]!]!.op) {
      start = i;
      break;
    }
  if (start < 0) return null;
  const k = tr.kind[start]!;
  let nth = 0;
  for (let i = 0; i < start; i++) if (tr.kind[i] === k) nth++;
  return { kind: tr.kinds[k]!.name, nth, start: start + 1 };
}

/** The position just after the n-th (0-based) operation of kind `name`, or -1. */
export function nthOp(tr: Trace, name: string, nth: number): number {
  const k = tr.kindId[name];
  if (k === undefined) return -1;
  let c = 0;
  for (let i = 0; i < tr.n; i++)
    if (tr.kind[i] === k) {
      if (c === nth) return i + 1;
      c++;
    }
  return -1;
}

/**
 * The first event where two traces differ (kind, task or arguments; times
 * are allowed to differ, since the patch changes costs), or -1 if one is a
 * prefix of the other and they have the same length. Returns the position
 * just before it in both (the moment they still agree up to).
 */
export function firstDivergence(a: Trace, b: Trace): number {
  const n = Math.min(a.n, b.n);
  for (let i = 0; i < n; i++) {
    if (a.kinds[a.kind[i]!]!.name !== b.kinds[b.kind[i]!]!.name) return i;
    const la = a.off[i + 1]! - a.off[i]!;
    if (la !== b.off[i + 1]! - b.off[i]!) return i;
    for (let j = 0; j < la; j++) if (a.args[a.off[i]! + j] !== b.args[b.off[i]! + j]) return i;
  }
  return a.n === b.n ? -1 : n;
}

/** Whether events i of a and j of b are the same (kind, task name,
 * arguments; not the time). */
function sameEvent(a: Trace, i: number, b: Trace, j: number): boolean {
  if (a.kinds[a.kind[i]!]!.name !== b.kinds[b.kind[j]!]!.name) return false;
  const la = a.off[i + 1]! - a.off[i]!;
  if (la !== b.off[j + 1]! - b.off[j]!) return false;
  for (let q = 0; q < la; q++) if (a.args[a.off[i]! + q] !== b.args[b.off[j]! + q]) return false;
  return true;
}

/**
 * The first event where two recordings differ after their listings: each
 * is walked from its first operation (the listings of a window that starts
 * mid-run differ, since the kernels' structures do by then). Returns the
 * index of that event in each, or null when they agree to the end of one.
 */
export function firstDivergenceFromOps(a: Trace, b: Trace): { a: number; b: number } | null {
  const first = (t: Trace): number => {
    for (let i = 0; i < t.n; i++) if (t.kinds[t.kind[i]!]!.op) return i;
    return -1;
  };
  let i = first(a);
  let j = first(b);
  if (i < 0 || j < 0) return null;
  for (; i < a.n && j < b.n; i++, j++) if (!sameEvent(a, i, b, j)) return { a: i, b: j };
  return null;
}
