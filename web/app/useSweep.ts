/*
 * useSweep.ts - run a list of points one after another through the engine
 * worker (each point may be several runs), keeping the rows done so far so
 * a chart fills in as it goes, an error as a message rather than a broken
 * page, and a stop: like any long run, a sweep can be cancelled (the run in
 * flight is cancelled in the worker; the rows done stay). Used by the
 * views' parameter sweeps.
 */
import { useEffect, useRef, useState } from 'react';

export type SweepState = 'idle' | 'running' | 'done' | 'stopped' | 'error';

/** runPoint hands each engine run's cancel to `onRun`, so stop() can cancel it. */
export type SweepRunner<T, R> = (point: T, onRun: (cancel: () => void) => void) => Promise<R>;

interface Control {
  stopped: boolean;
  cancel?: () => void;
}

/**
 * `setting` names what the rows depend on besides the points (the view's
 * parameters, the seed): when it changes, the rows of the old setting are
 * dropped and a sweep still running is stopped, so a chart never shows one
 * setting's results under another's caption.
 */
export function useSweep<T, R>(
  points: T[],
  runPoint: SweepRunner<T, R>,
  setting: string,
): { rows: R[]; state: SweepState; err: string; run: () => Promise<void>; stop: () => void } {
  const [rows, setRows] = useState<R[]>([]);
  const [state, setState] = useState<SweepState>('idle');
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
  const shown = useRef(setting);
  useEffect(() => {
    if (shown.current === setting) return;
    shown.current = setting;
    stop();
    ctl.current = null;
    setRows([]);
    setErr('');
    setState('idle');
  }, [setting]);
  const run = async (): Promise<void> => {
    stop();
    const c: Control = { stopped: false };
    ctl.current = c;
    setState('running');
    setRows([]);
    setErr('');
    const out: R[] = [];
    try {
      for (const p of points) {
        if (c.stopped) break;
        out.push(await runPoint(p, (cancel) => (c.cancel = cancel)));
        if (c.stopped) break;
        setRows([...out]);
      }
      if (ctl.current === c) setState(c.stopped ? 'stopped' : 'done');
    } catch (e) {
      if (ctl.current !== c) return;
      if (c.stopped) {
        setState('stopped');
        return;
      }
      setErr(e instanceof Error ? e.message : String(e));
      setState('error');
    }
  };
  return { rows, state, err, run, stop };
}

/** Hand a run ticket's cancel to the sweep, and wait for its result. */
export function tracked<R>(ticket: { promise: Promise<R>; cancel(): void }, onRun: (cancel: () => void) => void): Promise<R> {
  onRun(() => ticket.cancel());
  return ticket.promise;
}
