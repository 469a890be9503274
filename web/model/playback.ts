/*
 * playback.ts - the playback cursor over one or two recorded runs, pure.
 *
 * Two ways to hold two kernels side by side:
 *   'time': one clock. The cursor is a simulated time; each side shows the
 *           events it had done by then (the patched kernel is usually
 *           further along).
 *   'op':   aligned on the same operation. The cursor is a position in the
 *           first run; the other shows the same (n-th of its kind)
 *           operation, as far into it as the first is (never past its end).
 * Stepping by event or by operation moves to the next thing either side
 * does. The cursor round-trips through a URL value ("t:NS" / "op:POS").
 */
import { nthOp, opAt, opPositions, positionAt, timeAt, type Trace } from './trace';

export type Sync = 'time' | 'op';
export type Cursor = { sync: 'time'; t: number } | { sync: 'op'; pos: number };

export interface Sides {
  a: Trace;
  b?: Trace;
  /** operation starts of each (opPositions), computed once */
  opsA: number[];
  opsB?: number[];
}

export function sides(a: Trace, b?: Trace): Sides {
  return { a, b, opsA: opPositions(a), opsB: b ? opPositions(b) : undefined };
}

/** Where each side is for a cursor. */
export function positions(s: Sides, c: Cursor): { a: number; b: number } {
  if (c.sync === 'time') return { a: positionAt(s.a, c.t), b: s.b ? positionAt(s.b, c.t) : 0 };
  const a = Math.max(0, Math.min(s.a.n, c.pos));
  return { a, b: s.b ? alignedPos(s.a, s.b, a, s.opsB!) : 0 };
}

/** The position in b of the same operation as position pa in a, as far into it. */
export function alignedPos(a: Trace, b: Trace, pa: number, opsB: number[]): number {
  const op = opAt(a, pa);
  if (!op) return Math.min(pa, firstOp(opsB, b.n));
  const start = nthOp(b, op.kind, op.nth);
  if (start < 0) return b.n;
  let end = b.n;
  for (const p of opsB) if (p > start) {
    end = p - 1;
    break;
  }
  return Math.min(end, start + (pa - op.start));
}

const firstOp = (ops: number[], n: number): number => (ops.length ? ops[0]! - 1 : n);

/** The time a cursor stands for (op sync: the first side's). */
export function cursorTime(s: Sides, c: Cursor): number {
  return c.sync === 'time' ? c.t : timeAt(s.a, c.pos);
}

/** The same moment under the other sync. */
export function convert(s: Sides, c: Cursor, to: Sync): Cursor {
  if (c.sync === 'op') return to === 'op' ? c : { sync: 'time', t: timeAt(s.a, c.pos) };
  return to === 'time' ? c : { sync: 'op', pos: positionAt(s.a, c.t) };
}

/** The latest time in either trace. */
export function endTime(s: Sides): number {
  return Math.max(s.a.n ? s.a.tmax[s.a.n - 1]! : 0, s.b && s.b.n ? s.b.tmax[s.b.n - 1]! : 0);
}

export function startTime(s: Sides): number {
  return Math.min(s.a.fromNs, s.b ? s.b.fromNs : Infinity);
}

/** The next (dir 1) or previous (-1) event or operation start, from c. */
export function step(s: Sides, c: Cursor, dir: 1 | -1, unit: 'event' | 'op'): Cursor {
  if (c.sync === 'op') {
    if (unit === 'event') return { sync: 'op', pos: Math.max(0, Math.min(s.a.n, c.pos + dir)) };
    return { sync: 'op', pos: nextOpPos(s.opsA, c.pos, dir, s.a.n) };
  }
  const traces: [Trace, number[]][] = [[s.a, s.opsA]];
  if (s.b) traces.push([s.b, s.opsB!]);
  let best = dir > 0 ? Infinity : -Infinity;
  for (const [tr, ops] of traces) {
    const p = positionAt(tr, c.t);
    let target: number;
    if (unit === 'event') {
      if (dir > 0) target = p < tr.n ? tr.tmax[p]! : Infinity;
      else {
        const q = positionAt(tr, c.t - 1);
        target = q > 0 ? tr.tmax[q - 1]! : -Infinity;
      }
    } else {
      const np = nextOpPos(ops, p, dir, tr.n);
      target = dir > 0 ? (np > p ? tr.tmax[np - 1]! : Infinity) : np < p && np > 0 ? tr.tmax[np - 1]! : -Infinity;
      // an op whose start shares the cursor's time: look past it
      if (dir < 0 && target >= c.t) target = -Infinity;
    }
    best = dir > 0 ? Math.min(best, target) : Math.max(best, target);
  }
  if (!Number.isFinite(best)) return dir > 0 ? { sync: 'time', t: endTime(s) } : { sync: 'time', t: startTime(s) };
  return { sync: 'time', t: best };
}

function nextOpPos(ops: number[], pos: number, dir: 1 | -1, n: number): number {
  if (dir > 0) {
    for (const p of ops) if (p > pos) return p;
    return n;
  }
  for (let i = ops.length - 1; i >= 0; i--) if (ops[i]! < pos) return ops[i]!;
  return 0;
}

/** The cursor as a URL value. */
export function formatCursor(c: Cursor): string {
  return c.sync === 'time' ? `t:${Math.round(c.t)}` : `op:${c.pos}`;
}

/** A URL value back to a cursor (null if it is not one). */
export function parseCursor(v: string | null | undefined): Cursor | null {
  if (!v) return null;
  const m = /^(t|op):(\d{1,16})$/.exec(v);
  if (!m) return null;
  const x = Number(m[2]);
  return m[1] === 't' ? { sync: 'time', t: x } : { sync: 'op', pos: x };
}
