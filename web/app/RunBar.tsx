/* RunBar.tsx - Run / Cancel and the progress bar of the current run. */
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

export function RunBar({ status, progress, current, invalid, badParams, stale, onRun, onCancel, label }: Props) {
  const running = status === 'running';
  const pct = Math.round(progress * 100);
  return (
    <div className="runbar">
      {running ? (
        <button type="button" className="btn btn-cancel" onClick={onCancel} data-testid="cancel">
          Cancel <kbd>Esc</kbd>
        </button>
      ) : (
        <button type="button" className="btn btn-run" onClick={onRun} disabled={invalid} data-testid="run" title={invalid ? 'Fix the parameters first' : undefined}>
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
