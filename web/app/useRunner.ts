/*
 * useRunner.ts - run one or more variants of an experiment through the
 * engine worker, one after the other, with overall progress, cancel, and
 * the results kept by variant. A newer run or a cancel makes older answers
 * irrelevant (a generation counter drops them).
 */
import { useCallback, useRef, useState } from 'react';
import { LabError, type CollectSpec, type LabErrorInfo, type RunResult, type RunSpec, type Variant } from '../engine/types';
import { engine } from './engine';
import { testHook } from './testHook';

export type RunStatus = 'idle' | 'running' | 'done' | 'error' | 'canceled';

export interface RunnerState {
  status: RunStatus;
  progress: number;
  current: Variant | null;
  results: Partial<Record<Variant, RunResult>>;
  error: LabErrorInfo | null;
  /** Identity of the specs the results belong to (see specKey). */
  key: string | null;
  /** The specs the results belong to. */
  specs: RunSpec[] | null;
}

/** A stable identity for a set of run specs, to tell when results are stale. */
export function specKey(specs: RunSpec[]): string {
  return JSON.stringify(specs.map((s) => [s.experiment, s.variant, s.seed, Object.entries(s.params).sort()]));
}

const idle: RunnerState = { status: 'idle', progress: 0, current: null, results: {}, error: null, key: null, specs: null };

export function useRunner(): {
  state: RunnerState;
  run(specs: RunSpec[], collect?: CollectSpec): Promise<Partial<Record<Variant, RunResult>> | null>;
  cancel(): void;
  reset(): void;
} {
  const [state, setState] = useState<RunnerState>(idle);
  const gen = useRef(0);
  const cancelCurrent = useRef<(() => void) | null>(null);

  const run = useCallback(async (specs: RunSpec[], collect?: CollectSpec) => {
    cancelCurrent.current?.();
    const my = ++gen.current;
    const key = specKey(specs);
    const results: Partial<Record<Variant, RunResult>> = {};
    setState({ status: 'running', progress: 0, current: specs[0]?.variant ?? null, results, error: null, key, specs });
    try {
      for (let i = 0; i < specs.length; i++) {
        const spec = specs[i]!;
        const t = engine.run(
          spec,
          (p) => {
            if (gen.current === my) setState((s) => ({ ...s, progress: (i + p) / specs.length, current: spec.variant }));
          },
          collect,
        );
        cancelCurrent.current = t.cancel;
        results[spec.variant] = await t.promise;
        if (gen.current !== my) return null;
        setState((s) => ({ ...s, progress: (i + 1) / specs.length, results: { ...results } }));
      }
      cancelCurrent.current = null;
      setState({ status: 'done', progress: 1, current: null, results: { ...results }, error: null, key, specs });
      testHook().lastRun = { experiment: specs[0]?.experiment ?? '', results: { ...results } };
      return results;
    } catch (e) {
      if (gen.current !== my) return null;
      const err = LabError.from(e);
      cancelCurrent.current = null;
      setState({
        status: err.codeName === 'LAB_ECANCELED' ? 'canceled' : 'error',
        progress: 0,
        current: null,
        results: { ...results },
        error: err.codeName === 'LAB_ECANCELED' ? null : err.toInfo(),
        key,
        specs,
      });
      return null;
    }
  }, []);

  const cancel = useCallback(() => {
    cancelCurrent.current?.();
    cancelCurrent.current = null;
  }, []);

  const reset = useCallback(() => {
    cancelCurrent.current?.();
    gen.current++;
    setState(idle);
  }, []);

  return { state, run, cancel, reset };
}
