/* RunBar.tsx - Run / Cancel and the progress bar of the current run. */
import { useEffect, useRef } from 'react';
import type { Variant } from '../engine/types';
import type { RunStatus } from './useRunner';

interface Props {
  status: RunStatus;
  progress: number;
  current: Variant | null;
  invalid: boolean;
  /** Names of the parameters that need fixing (shown when invalid). */
  badParams?: string[];
  stale: boolean;
  onRun(): void;
  onCancel(): void;
  label?: string;
}

/** How long a freshly shown Cancel ignores clicks (a click aimed at Run). */
const CLICK_THROUGH_MS = 500;

export function RunBar({ status, progress, current, invalid, badParams, stale, onRun, onCancel, label }: Props) {
  const running = status === 'running';
  const pct = Math.round(progress * 100);
  // Cancel takes Run's place when a run starts. A run that starts by itself
  // (opening a page runs it) can swap the buttons under a pointer already on
  // its way to Run; a click that lands on Cancel within a moment of its
  // appearing meant Run, whose run is now under way, so it is not a cancel.
  // Esc (the page's keys) cancels at once. The two are distinct elements
  // (keys): React would otherwise turn the Run element itself into Cancel,
  // and a click already aimed at that element would land on Cancel.
  const shownAt = useRef(0);
  useEffect(() => {
    if (running) shownAt.current = performance.now();
  }, [running]);
  const cancelClick = (): void => {
    if (performance.now() - shownAt.current >= CLICK_THROUGH_MS) onCancel();
  };
  return (
    <div className="runbar">
      {running ? (
        <button key="cancel" type="button" className="btn btn-cancel" onClick={cancelClick} data-testid="cancel">
          Cancel <kbd>Esc</kbd>
        </button>
      ) : (
        <button key="run" type="button" className="btn btn-run" onClick={onRun} disabled={invalid} data-testid="run" title={invalid ? 'Fix the parameters first' : undefined}>
          {label ?? 'Run'} <kbd>r</kbd>
        </button>
      )}
      <div className="progress" role="progressbar" aria-label="run progress" aria-valuemin={0} aria-valuemax={100} aria-valuenow={running ? pct : status === 'done' ? 100 : 0} data-testid="progress">
        <div className="progress-fill" style={{ width: `${running ? pct : status === 'done' ? 100 : 0}%` }} />
      </div>
      <span className="runbar-status" data-testid="run-status" data-status={status}>
        {running
          ? `Running ${current ?? ''}… ${pct}%`
          : status === 'done'
            ? stale
              ? 'Parameters changed: run again'
              : 'Done'
            : status === 'canceled'
              ? 'Cancelled'
              : status === 'error'
                ? 'Failed'
                : invalid
                  ? `Fix ${badParams && badParams.length > 0 ? badParams.join(', ') : 'the parameters'}`
                  : 'Ready'}
      </span>
    </div>
  );
}
