/*
 * useRunner.ts - run one or more variants of an experiment through the
 * engine's pool of workers, all at once, with overall progress, cancel, and
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
    // every spec at once on the engine's pool, each result drawn as it arrives
    const progress = specs.map(() => 0);
    const firstLeft = (): Variant | null => specs.find((sp) => !results[sp.variant])?.variant ?? null;
    const tickets = specs.map((spec, i) =>
      engine.run(
        spec,
        (p) => {
          progress[i] = p;
          if (gen.current === my) setState((s) => ({ ...s, progress: progress.reduce((a, b) => a + b, 0) / specs.length, current: firstLeft() }));
        },
        collect,
      ),
    );
    cancelCurrent.current = () => tickets.forEach((t) => t.cancel());
    try {
      await Promise.all(
        tickets.map(async (t, i) => {
          const r = await t.promise;
          results[specs[i]!.variant] = r;
          progress[i] = 1;
          if (gen.current === my) setState((s) => ({ ...s, progress: progress.reduce((a, b) => a + b, 0) / specs.length, current: firstLeft(), results: { ...results } }));
        }),
      );
      if (gen.current !== my) return null;
      cancelCurrent.current = null;
      setState({ status: 'done', progress: 1, current: null, results: { ...results }, error: null, key, specs });
      testHook().lastRun = { experiment: specs[0]?.experiment ?? '', results: { ...results } };
      return results;
    } catch (e) {
      tickets.forEach((t) => t.cancel()); // one failed: the others are not needed
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
