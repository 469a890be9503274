/*
 * useSweep.ts - run lists of points side by side on the engine's pool of
 * workers (each point may be several runs), keeping the rows done so far so
 * a chart fills in as it goes, an error as a message rather than a broken
 * page, and a stop: like any long run, a sweep can be cancelled (the run in
 * flight is cancelled in the worker; the rows done stay).
 *
 * The views' sweeps are declared as data in views/registry.ts (`sweeps`);
 * the app runs them here (Results.tsx) and hands each view its rows, state
 * and run/stop through its props: a view never runs the engine itself.
 *
 * `autoRun`: start the sweep as soon as its setting shows no rows (the
 * view's URL says it was run: a link to a swept page shows the sweep).
 *
 * A view is unmounted while the page runs (its results are cleared), so a
 * finished or stopped sweep's rows are kept here by sweep and setting, and
 * come back when the view does: loading a point's job from the fit check
 * does not throw the check away.
 */
import { useEffect, useReducer, useRef } from 'react';
import type { SweepHandle, SweepState } from '../views/types';
import { engine } from './engine';

export type { SweepState, SweepHandle };

/** runPoint hands each engine run's cancel to `onRun`, so stop() can cancel it. */
export type SweepRunner<T, R> = (point: T, onRun: (cancel: () => void) => void) => Promise<R>;

/** One sweep: its name, what its rows depend on besides the points, the points and how to run one. */
export interface SweepDef<T, R> {
  id: string;
  /** The view's other parameters, the seed: when it changes, the rows
   * shown are that setting's (kept, or none) and a sweep still running is
   * stopped, so a chart never shows one setting's results under another's caption. */
  setting: string;
  points: T[];
  runPoint: SweepRunner<T, R>;
  autoRun?: boolean;
  /** called when the sweep is started by hand (a view writes v.sweep=1) */
  onStart?: () => void;
}

interface Control {
  key: string;
  stopped: boolean;
  /** the engine runs in flight (points run side by side) */
  cancels: Set<() => void>;
}

interface Live {
  key: string;
  rows: unknown[];
  state: SweepState;
  err: string;
  ctl: Control | null;
}

/** Finished and stopped sweeps, most recent last; a few are enough. */
const kept = new Map<string, { rows: unknown[]; state: 'done' | 'stopped' }>();
const KEEP = 16;

function keep(key: string, rows: unknown[], state: 'done' | 'stopped'): void {
  kept.delete(key);
  kept.set(key, { rows, state });
  while (kept.size > KEEP) kept.delete(kept.keys().next().value as string);
}

const keyOf = (d: { id: string; setting: string }): string => `${d.id}|${d.setting}`;

/** Several sweeps at once, by id (the number of sweeps may change between renders). */
export function useSweeps(defs: SweepDef<any, any>[]): Record<string, SweepHandle<unknown>> {
  const [, redraw] = useReducer((x: number) => x + 1, 0);
  const live = useRef(new Map<string, Live>());
  const mounted = useRef(true);
  const stopCtl = (c: Control | null | undefined): void => {
    if (!c) return;
    c.stopped = true;
    for (const f of c.cancels) f();
  };
  // leaving the page stops every sweep: no work for a view nobody sees
  useEffect(() => {
    mounted.current = true;
    const m = live.current;
    return () => {
      mounted.current = false;
      for (const l of m.values()) stopCtl(l.ctl);
    };
  }, []);
  // a sweep whose setting changed: stop it, show the new setting's rows
  const keys = defs.map(keyOf).join('\n');
  useEffect(() => {
    let changed = false;
    for (const d of defs) {
      const l = live.current.get(d.id);
      if (l && l.key !== keyOf(d)) {
        stopCtl(l.ctl);
        live.current.delete(d.id);
        changed = true;
      }
    }
    if (changed) redraw();
  }, [keys]);

  const run = async (d: SweepDef<unknown, unknown>): Promise<void> => {
    const key = keyOf(d);
    stopCtl(live.current.get(d.id)?.ctl);
    const c: Control = { key, stopped: false, cancels: new Set() };
    const entry: Live = { key, rows: [], state: 'running', err: '', ctl: c };
    live.current.set(d.id, entry);
    const current = (): boolean => mounted.current && live.current.get(d.id)?.ctl === c;
    redraw();
    // points side by side, as many as the engine has workers; the rows
    // done so far in the points' order, each drawn as it arrives
    const res: { row: unknown }[] = [];
    let out: unknown[] = [];
    let next = 0;
    const lane = async (): Promise<void> => {
      while (!c.stopped && next < d.points.length) {
        const i = next++;
        const row = await d.runPoint(d.points[i], (cancel) => c.cancels.add(cancel));
        res[i] = { row };
        out = res.filter(Boolean).map((x) => x.row);
        if (current()) {
          entry.rows = out;
          redraw();
        }
      }
    };
    try {
      try {
        await Promise.all(Array.from({ length: Math.max(1, Math.min(engine.size, d.points.length)) }, lane));
      } catch (e) {
        // one point failed: the others in flight are not needed
        for (const f of c.cancels) f();
        throw e;
      }
      keep(key, out, c.stopped ? 'stopped' : 'done');
      if (current()) {
        entry.state = c.stopped ? 'stopped' : 'done';
        entry.ctl = null;
        redraw();
      }
    } catch (e) {
      if (c.stopped) {
        keep(key, out, 'stopped');
        if (current()) {
          entry.state = 'stopped';
          entry.ctl = null;
          redraw();
        }
        return;
      }
      if (!current()) return;
      entry.err = e instanceof Error ? e.message : String(e);
      entry.state = 'error';
      entry.ctl = null;
      redraw();
    }
  };

  // a link that says the sweep was run: run it (once per setting)
  const auto = useRef(new Set<string>());
  useEffect(() => {
    for (const d of defs) {
      const key = keyOf(d);
      if (!d.autoRun || auto.current.has(key) || kept.has(key) || live.current.get(d.id)?.key === key) continue;
      auto.current.add(key);
      void run(d);
    }
  });

  const out: Record<string, SweepHandle<unknown>> = {};
  for (const d of defs) {
    const key = keyOf(d);
    const l = live.current.get(d.id);
    const shown = l && l.key === key ? l : { rows: kept.get(key)?.rows ?? [], state: kept.get(key)?.state ?? ('idle' as SweepState), err: '' };
    out[d.id] = {
      rows: shown.rows,
      state: shown.state,
      err: shown.err,
      total: d.points.length,
      run: () => {
        d.onStart?.();
        void run(d);
      },
      stop: () => stopCtl(live.current.get(d.id)?.ctl),
    };
  }
  return out;
}

/** One sweep (the app's own: the page's runs over 20 seeds). */
export function useSweep<T, R>(def: SweepDef<T, R>): SweepHandle<R> {
  return useSweeps([def])[def.id] as SweepHandle<R>;
}

/** Hand a run ticket's cancel to the sweep, and wait for its result. */
export function tracked<R>(ticket: { promise: Promise<R>; cancel(): void }, onRun: (cancel: () => void) => void): Promise<R> {
  onRun(() => ticket.cancel());
  return ticket.promise;
}
