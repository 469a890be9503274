/*
 * useSweep.ts - run a list of points one after another through the engine
 * worker (each point may be several runs), keeping the rows done so far so
 * a chart fills in as it goes, an error as a message rather than a broken
 * page, and a stop: like any long run, a sweep can be cancelled (the run in
 * flight is cancelled in the worker; the rows done stay). Used by the
 * views' parameter sweeps.
 *
 * `autoRun`: start the sweep as soon as its setting shows no rows (the
 * view's URL says it was run: a link to a swept page shows the sweep).
 *
 * A view is unmounted while the page runs (its results are cleared), so a
 * finished or stopped sweep's rows are kept here by sweep and setting, and
 * come back when the view does: loading a point's job from the fit check
 * does not throw the check away.
 */
import { useEffect, useRef, useState } from 'react';

export type SweepState = 'idle' | 'running' | 'done' | 'stopped' | 'error';

/** runPoint hands each engine run's cancel to `onRun`, so stop() can cancel it. */
export type SweepRunner<T, R> = (point: T, onRun: (cancel: () => void) => void) => Promise<R>;

interface Control {
  key: string;
  stopped: boolean;
  cancel?: () => void;
}

/** Finished and stopped sweeps, most recent last; a few are enough. */
const kept = new Map<string, { rows: unknown[]; state: 'done' | 'stopped' }>();
const KEEP = 16;

function keep(key: string, rows: unknown[], state: 'done' | 'stopped'): void {
  kept.delete(key);
  kept.set(key, { rows, state });
  while (kept.size > KEEP) kept.delete(kept.keys().next().value as string);
}

/**
 * `id` names the sweep; `setting` what its rows depend on besides the
 * points (the view's other parameters, the seed). When the setting
 * changes, the rows shown are that setting's (kept, or none) and a sweep
 * still running is stopped, so a chart never shows one setting's results
 * under another's caption.
 */
export function useSweep<T, R>(
  id: string,
  points: T[],
  runPoint: SweepRunner<T, R>,
  setting: string,
  autoRun = false,
): { rows: R[]; state: SweepState; err: string; run: () => Promise<void>; stop: () => void } {
  const key = `${id}|${setting}`;
  const [rows, setRows] = useState<R[]>(() => (kept.get(key)?.rows as R[] | undefined) ?? []);
  const [state, setState] = useState<SweepState>(() => kept.get(key)?.state ?? 'idle');
  const [err, setErr] = useState('');
  const ctl = useRef<Control | null>(null);
  const stop = (): void => {
    const c = ctl.current;
    if (!c) return;
    c.stopped = true;
    c.cancel?.();
  };
  // leaving the page stops the sweep: no work for a view nobody sees
  useEffect(() => stop, []);
  const shown = useRef(key);
  useEffect(() => {
    if (shown.current === key) return;
    shown.current = key;
    stop();
    ctl.current = null;
    const k = kept.get(key);
    setRows((k?.rows as R[] | undefined) ?? []);
    setErr('');
    setState(k?.state ?? 'idle');
  }, [key]);
  const run = async (): Promise<void> => {
    stop();
    const c: Control = { key, stopped: false };
    ctl.current = c;
    const current = (): boolean => ctl.current === c;
    setState('running');
    setRows([]);
    setErr('');
    const out: R[] = [];
    try {
      for (const p of points) {
        if (c.stopped) break;
        out.push(await runPoint(p, (cancel) => (c.cancel = cancel)));
        if (current()) setRows([...out]);
      }
      keep(c.key, out, c.stopped ? 'stopped' : 'done');
      if (current()) setState(c.stopped ? 'stopped' : 'done');
    } catch (e) {
      if (c.stopped) {
        keep(c.key, out, 'stopped');
        if (current()) setState('stopped');
        return;
      }
      if (!current()) return;
      setErr(e instanceof Error ? e.message : String(e));
      setState('error');
    }
  };
  // a link that says the sweep was run: run it (once per setting)
  const auto = useRef<string | null>(null);
  useEffect(() => {
    if (!autoRun || auto.current === key || kept.has(key) || ctl.current) return;
    auto.current = key;
    void run();
  });
  return { rows, state, err, run, stop };
}

/** Hand a run ticket's cancel to the sweep, and wait for its result. */
export function tracked<R>(ticket: { promise: Promise<R>; cancel(): void }, onRun: (cancel: () => void) => void): Promise<R> {
  onRun(() => ticket.cancel());
  return ticket.promise;
}
