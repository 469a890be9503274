/*
 * usePageRecording.ts - the recording an experiment page draws its trees
 * and its lseek picture from, made without a click: once the page's runs
 * are in (their results are drawn first), each kernel is run again with
 * the same parameters, seed and variation and recorded from the moment
 * the page is about (the experiment's replay spec says which operation,
 * from the finished runs: the drop's first step, cp's first lseek, the
 * create whose leaf clone waited longest...), the same rule for both
 * kernels, at full scale. Each recording run stops as soon as its window
 * is full. A new run of the page cancels it; a view can ask for another
 * window (from a time, or from the start).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { LabError, type RecordSpec, type RunSpec } from '../engine/types';
import type { PageRecordingSpec, PageRecordingState } from '../views/replay/pageRecording';
import { engine } from './engine';
import { testHook } from './testHook';
import type { RunnerState } from './useRunner';

export interface PageRecording extends PageRecordingState {
  /** the main runs the recording belongs to (RunnerState.key) */
  key: string | null;
}

const IDLE = { status: 'idle' as const, progress: 0, sides: [], window: '', fromFirst: false, error: null, wallMs: 0, key: null };

export function usePageRecording(spec: PageRecordingSpec | undefined, main: RunnerState): PageRecording {
  const [st, setSt] = useState<Omit<PageRecording, 'recordFrom'>>(IDLE);
  const gen = useRef(0);
  const cancel = useRef<(() => void) | null>(null);
  const mainRef = useRef(main);
  mainRef.current = main;

  const record = useCallback(
    async (fromMs: number | null): Promise<void> => {
      const m = mainRef.current;
      cancel.current?.();
      const my = ++gen.current;
      if (!spec || m.status !== 'done' || !m.specs || !m.key) return;
      const start = fromMs === null ? spec.start(m.results, m.specs[0]!.params) : { record: { fromNs: Math.max(0, fromMs) * 1e6 }, window: `from ${fromMs} ms`, fromFirst: fromMs === 0 };
      if (!start) {
        setSt({ ...IDLE, status: 'none', key: m.key, window: spec.missing ?? 'the moment this page is about did not happen in these runs' });
        return;
      }
      const rec: RecordSpec = { maxEvents: spec.maxEvents, only: spec.only, stopWhenFull: true, ...start.record };
      const specs: RunSpec[] = m.specs;
      setSt({ ...IDLE, status: 'recording', key: m.key, window: start.window, fromFirst: start.fromFirst });
      const t0 = performance.now();
      const sides: PageRecording['sides'] = [];
      try {
        // both kernels side by side on the engine's pool
        const progress = specs.map(() => 0);
        const tickets = specs.map((spec, i) =>
          engine.run(
            spec,
            (p) => {
              progress[i] = p;
              if (gen.current === my) setSt((s) => ({ ...s, progress: progress.reduce((x, y) => x + y, 0) / specs.length }));
            },
            { record: rec },
          ),
        );
        cancel.current = () => tickets.forEach((t) => t.cancel());
        const rs = await Promise.all(tickets.map((t) => t.promise)).catch((e: unknown) => {
          tickets.forEach((t) => t.cancel());
          throw e;
        });
        if (gen.current !== my) return;
        rs.forEach((r, i) => {
          if (r.recording) sides.push({ variant: specs[i]!.variant, trace: r.recording });
        });
        cancel.current = null;
        const empty = sides.length < specs.length || sides.some((s) => s.trace.n === 0);
        const wallMs = performance.now() - t0;
        setSt({ ...IDLE, status: empty ? 'none' : 'done', progress: 1, sides: empty ? [] : sides, key: m.key, window: empty ? (spec.missing ?? start.window) : start.window, fromFirst: start.fromFirst, wallMs });
        testHook().pageRecording = { window: start.window, wallMs, events: sides.map((s) => s.trace.n) };
      } catch (e) {
        if (gen.current !== my) return;
        cancel.current = null;
        const err = LabError.from(e);
        setSt({ ...IDLE, status: err.codeName === 'LAB_ECANCELED' ? 'idle' : 'error', key: m.key, error: err.message, window: start.window });
      }
    },
    [spec],
  );

  // the page's runs are in: record them (once per set of runs); a new run
  // of the page cancels a recording under way
  useEffect(() => {
    if (!spec) return;
    if (main.status === 'running') {
      if (cancel.current) {
        cancel.current();
        cancel.current = null;
        gen.current++;
        setSt({ ...IDLE, status: 'waiting' });
      }
      return;
    }
    if (main.status === 'done' && main.key && main.key !== st.key) void record(null);
  }, [spec, main.status, main.key, st.key, record]);

  useEffect(
    () => () => {
      cancel.current?.();
      gen.current++;
    },
    [],
  );

  return { ...st, recordFrom: (ms) => void record(ms) };
}
