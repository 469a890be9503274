/*
 * sandboxTrace.ts - the sandbox's recording, one command at a time: the
 * worker sends the events of the new commands only (engine/
 * sandboxSession.ts), and they are added here to the columns the page
 * holds. A trace made so remembers the one it extends, so that a replay of
 * the shorter one can go on into it (Replay.extendedTo) instead of
 * replaying every event again.
 */
import type { Trace } from './trace';

const extended = new WeakMap<Trace, Trace>();

/** The trace `tr` was made from by appendTrace, if any. */
export const extendsTrace = (tr: Trace): Trace | undefined => extended.get(tr);

/** A trace with `add`'s events (those after the ones `prev` holds) added:
 * the columns copied once, the running maximum of times carried on. */
export function appendTrace(prev: Trace, add: Trace): Trace {
  const n = prev.n + add.n;
  const grow = <A extends Float64Array | Uint16Array | Int16Array | Uint32Array>(a: A, b: A, len: number, make: (n: number) => A): A => {
    const out = make(len);
    out.set(a.subarray(0, prev.n));
    out.set(b, prev.n);
    return out;
  };
  const t = grow(prev.t, add.t, n, (k) => new Float64Array(k));
  const tmax = new Float64Array(n);
  tmax.set(prev.tmax);
  let run = prev.n ? prev.tmax[prev.n - 1]! : -Infinity;
  for (let i = 0; i < add.n; i++) {
    run = Math.max(run, add.t[i]!);
    tmax[prev.n + i] = run;
  }
  const kind = grow(prev.kind, add.kind, n, (k) => new Uint16Array(k));
  const task = grow(prev.task, add.task, n, (k) => new Int16Array(k));
  const base = prev.off[prev.n]!;
  const off = new Uint32Array(n + 1);
  off.set(prev.off.subarray(0, prev.n));
  for (let i = 0; i <= add.n; i++) off[prev.n + i] = base + add.off[i]!;
  const args = new Float64Array(base + add.args.length);
  args.set(prev.args.subarray(0, base));
  args.set(add.args, base);
  const out: Trace = {
    ...add,
    n,
    t,
    tmax,
    kind,
    task,
    off,
    args,
    fromNs: prev.fromNs,
    lastNs: Math.max(prev.lastNs, add.lastNs),
  };
  extended.set(out, prev);
  return out;
}
