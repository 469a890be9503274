/* ErrorBanner.tsx - one clear message for a failure (bad parameter, engine error, worker crash); the page keeps working. */
import type { LabErrorInfo } from '../engine/types';

const HINT: Record<string, string> = {
  LAB_EINVAL: 'Check the parameters and run again.',
  LAB_ERANGE: 'A parameter is outside its range; the form shows the allowed values.',
  LAB_ENOENT: 'The engine does not know that name.',
  LAB_ENOMEM: 'The simulation ran out of memory: try a smaller workload.',
  LAB_EENGINE: 'This is a bug in the engine; the page still works.',
  WORKER_CRASHED: 'The engine will restart on the next run.',
};

export function ErrorBanner({ error, onDismiss }: { error: LabErrorInfo | string; onDismiss?: () => void }) {
  const info = typeof error === 'string' ? { code: 0, codeName: '', message: error } : error;
  const hint = HINT[info.codeName];
  return (
    <div className="error" role="alert" data-testid="error">
      <div>
        <strong>{info.codeName === 'WORKER_CRASHED' ? 'The engine stopped. ' : 'Could not run. '}</strong>
        <span data-testid="error-message">{info.message}</span>
        {hint && <span className="error-hint"> {hint}</span>}
      </div>
      {onDismiss && (
        <button type="button" className="btn-quiet" onClick={onDismiss} aria-label="Dismiss">
          ×
        </button>
      )}
    </div>
  );
}
