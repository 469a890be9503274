/*
 * SweepButton.tsx - the start / stop button every sweep shows: its label
 * when idle, "Stop" with the progress while it runs, and where a stopped
 * sweep got to.
 */
import type { SweepState } from '../types';

interface Props {
  state: SweepState;
  done: number;
  total: number;
  label: string;
  testId: string;
  onRun: () => void;
  onStop: () => void;
}

export function SweepButton({ state, done, total, label, testId, onRun, onStop }: Props) {
  if (state === 'running')
    return (
      <button type="button" data-testid={`${testId}-stop`} onClick={onStop}>
        Stop (running {Math.min(done + 1, total)}/{total})
      </button>
    );
  return (
    <>
      <button type="button" data-testid={testId} onClick={onRun}>
        {label}
      </button>
      {state === 'stopped' && (
        <span className="muted" data-testid={`${testId}-stopped`}>
          {' '}
          stopped after {done} of {total}
        </span>
      )}
    </>
  );
}
