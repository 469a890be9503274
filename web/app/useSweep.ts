/*
 * useSweep.ts - run a list of points one after another through the engine
 * worker (each point may be several runs), keeping the rows done so far so
 * a chart fills in as it goes, and an error as a message rather than a
 * broken page. Used by the views' parameter sweeps.
 */
import { useState } from 'react';

export type SweepState = 'idle' | 'running' | 'done' | 'error';

export function useSweep<T, R>(points: T[], runPoint: (point: T) => Promise<R>): { rows: R[]; state: SweepState; err: string; run: () => Promise<void> } {
  const [rows, setRows] = useState<R[]>([]);
  const [state, setState] = useState<SweepState>('idle');
  const [err, setErr] = useState('');
  const run = async (): Promise<void> => {
    setState('running');
    setRows([]);
    setErr('');
    try {
      const out: R[] = [];
      for (const p of points) {
        out.push(await runPoint(p));
        setRows([...out]);
      }
      setState('done');
    } catch (e) {
      setErr(e instanceof Error ? e.message : String(e));
      setState('error');
    }
  };
  return { rows, state, err, run };
}
