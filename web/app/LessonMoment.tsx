/*
 * LessonMoment.tsx - a lesson step's moment (model/moments.ts): "Step to
 * this moment" records the step's runs, opens the replay there (the
 * same operation in both kernels) and shows the step's statements about
 * it, checked on the recordings.
 */
import { useState } from 'react';
import { useRunner } from './useRunner';
import { testHook } from './testHook';
import { RECORD_EVENTS, type RunSpec, type Variant } from '../engine/types';
import { fmtNum } from '../model/format';
import { evaluateMoment, type Moment } from '../model/moments';
import type { Trace } from '../model/trace';
import { ReplayPanel, type ReplaySide } from '../views/replay/ReplayPanel';
import type { ReplaySpec } from '../views/types';

export function LessonMoment({ moment, specs, stepKey, spec }: { moment: Moment; specs: RunSpec[]; stepKey: string; spec?: ReplaySpec }) {
  const runner = useRunner();
  const [result, setResult] = useState<{ sides: ReplaySide[]; at: string | null; outcomes: ReturnType<typeof evaluateMoment>['outcomes'] } | null>(null);
  const go = async (): Promise<void> => {
    const r = await runner.run(specs, { record: { maxEvents: RECORD_EVENTS } });
    if (!r) return;
    const traces: Partial<Record<Variant, Trace>> = {};
    const sides: ReplaySide[] = [];
    for (const sp of specs) {
      const tr = r[sp.variant]?.recording;
      if (!tr) continue;
      traces[sp.variant] = tr;
      sides.push({ variant: sp.variant, trace: tr });
    }
    const ev = evaluateMoment(moment, traces);
    const first = sides[0]?.variant;
    const pos = first !== undefined ? ev.positions?.[first] : undefined;
    setResult({ sides, at: pos !== undefined ? `op:${pos}` : null, outcomes: ev.outcomes });
    testHook().lessonChecks[`${stepKey}/moment`] = ev.outcomes.map((o) => o.pass);
  };
  return (
    <section className="figure lesson-moment" data-testid="lesson-moment">
      <h2 className="replay-title">The moment: {moment.title}</h2>
      {!result && (
        <button type="button" className="btn" onClick={() => void go()} disabled={runner.state.status === 'running'} data-testid="moment-open">
          {runner.state.status === 'running' ? `Recording ${runner.state.current ?? ''} … ${Math.round(runner.state.progress * 100)}%` : 'Step to this moment'}
        </button>
      )}
      {runner.state.error && <p className="error">{runner.state.error.message}</p>}
      {result && (
        <>
          <ul className="checks" data-testid="moment-checks">
            {result.outcomes.map((o, k) => (
              <li key={k} className={o.pass ? 'check-pass' : 'check-fail'} data-testid="moment-check" data-pass={o.pass}>
                <span className="check-mark" aria-hidden="true">
                  {o.pass ? '✓' : '✗'}
                </span>
                {o.check.label} <span className="muted">({o.check.variant}: {fmtNum(o.actual)})</span>
              </li>
            ))}
          </ul>
          {result.at ? (
            <ReplayPanel runs={result.sides} showIo={spec?.showIo} pickTree={spec?.pickTree} at={result.at} />
          ) : (
            <p className="error">This moment is not in the recorded run.</p>
          )}
        </>
      )}
    </section>
  );
}
