/*
 * ReplaySection.tsx - "Watch it happen" on an experiment page: records the
 * page's runs (both kernels) event by event in the worker, then plays them
 * back with ReplayPanel. A run too large for a recording is kept as a
 * window, and the section says so and offers to record from a later time
 * or at classroom size. The position is in the URL (?at=...): a link opens
 * the replay at that moment.
 */
import { useEffect, useRef, useState } from 'react';
import { useRunner } from './useRunner';
import { RECORD_EVENTS, type ExperimentInfo, type RunResult, type Variant } from '../engine/types';
import { fmtNs, fmtNum } from '../model/format';
import type { Trace } from '../model/trace';
import { ReplayPanel, type ReplaySide } from '../views/replay/ReplayPanel';
import type { ReplaySpec } from '../views/types';

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  seed: number;
  spec: ReplaySpec;
  at?: string;
  /** write the view state: the position (`at`) and what `drive` sets */
  onView?: (patch: Record<string, string | undefined>) => void;
  onParams?: (p: Record<string, string>) => void;
}

export function ReplaySection({ info, params, seed, spec, at, onView, onParams }: Props) {
  const onAt = (a: string | null, first?: { trace: Trace; pos: number }): void =>
    onView?.({ at: a ?? undefined, ...(a && first && spec.drive ? spec.drive(first.trace, first.pos) : {}) });
  const runner = useRunner();
  const [fromMs, setFromMs] = useState('0');
  const [open, setOpen] = useState(false);
  const key = JSON.stringify([info.name, params, seed]);
  const recordedFor = useRef<string | null>(null);

  const record = (from = 0): void => {
    setOpen(true);
    recordedFor.current = key;
    void runner.run(
      info.variants.map((variant) => ({ experiment: info.name, variant, params, seed })),
      { record: { fromNs: Math.max(0, from) * 1e6, maxEvents: RECORD_EVENTS } },
    );
  };

  // a link with a position opens the replay at once
  const auto = useRef(false);
  useEffect(() => {
    if (auto.current || !at) return;
    auto.current = true;
    record(0);
  });

  const close = (): void => {
    setOpen(false);
    runner.reset();
    onAt?.(null);
  };

  const { state } = runner;
  const results = state.results as Partial<Record<Variant, RunResult>>;
  const sides: ReplaySide[] = info.variants.flatMap((v) => (results[v]?.recording ? [{ variant: v, trace: results[v]!.recording! }] : []));
  const ready = state.status === 'done' && sides.length === info.variants.length;
  const stale = recordedFor.current !== null && recordedFor.current !== key;
  const partial = ready && sides.some((s) => !s.trace.complete);

  return (
    <section className="figure replay-section" data-testid="replay-section">
      <h2 className="replay-title">Watch it happen</h2>
      {!open && (
        <>
          <p className="muted">{spec.blurb}</p>
          <button type="button" className="btn" onClick={() => record(0)} data-testid="replay-open">
            Record and replay
          </button>
          {spec.classroom && onParams && (
            <button type="button" className="btn-quiet" onClick={() => onParams(spec.classroom!)} title={Object.entries(spec.classroom).map(([k, v]) => `${k}=${v}`).join(' ')}>
              classroom size
            </button>
          )}
        </>
      )}
      {open && state.status === 'running' && (
        <p className="muted" role="status" data-testid="replay-recording">
          Recording {state.current} … {Math.round(state.progress * 100)}%
        </p>
      )}
      {open && state.error && <p className="error">{state.error.message}</p>}
      {open && ready && (
        <>
          <div className="replay-bar">
            <button type="button" className="btn-quiet" onClick={close} data-testid="replay-close" title="Close the replay (the arrow keys step the setups again)">
              close replay
            </button>
            {stale && (
              <button type="button" className="btn-quiet" onClick={() => record(0)}>
                record the new parameters
              </button>
            )}
            <span className="muted">
              {sides.map((s) => `${s.variant}: ${fmtNum(s.trace.n)} events${s.trace.complete ? '' : ' (a window)'}`).join(' · ')}
            </span>
          </div>
          {partial && (
            <div className="notice">
              This run does more than a recording keeps ({fmtNum(RECORD_EVENTS)} events); the replay shows the window from{' '}
              {fmtNs(sides[0]!.trace.fromNs)} to {fmtNs(sides[0]!.trace.lastNs)}. Record from{' '}
              <input className="replay-from" value={fromMs} onChange={(e) => setFromMs(e.target.value)} aria-label="Record from (ms)" size={7} /> ms{' '}
              <button type="button" className="btn-quiet" onClick={() => record(Number(fromMs) || 0)}>
                record that window
              </button>
              {spec.classroom && onParams && (
                <button type="button" className="btn-quiet" onClick={() => onParams(spec.classroom!)}>
                  or go to classroom size
                </button>
              )}
            </div>
          )}
          <ReplayPanel key={sides.map((s) => s.trace.n).join()} runs={sides} pickTree={spec.pickTree} showIo={spec.showIo} at={at} onAt={onAt}>
            <p className="muted replay-blurb">{spec.blurb}</p>
          </ReplayPanel>
        </>
      )}
    </section>
  );
}
