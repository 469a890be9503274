/* RunExport.tsx - download the run on screen as CSV (one row per metric) or JSON (metrics and details of each kernel). */
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import { download, runCsv, runJson } from '../views/common/export';
import { labelOf } from '../views/registry';

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  seed: number;
  runs: Partial<Record<Variant, RunResult>>;
}

export function RunExport({ info, params, seed, runs }: Props) {
  const name = `${info.name}-seed${seed}`;
  return (
    <span className="export" aria-label="export this run">
      <span className="muted">this run:</span>{' '}
      <button type="button" className="btn-tiny" data-testid="export-csv" title="Download every metric of this run as CSV" onClick={() => download(`${name}.csv`, new Blob([runCsv(info, runs, (m) => labelOf(info, m))], { type: 'text/csv' }))}>
        CSV
      </button>
      <button type="button" className="btn-tiny" data-testid="export-json" title="Download this run (parameters, random seed, metrics and details) as JSON" onClick={() => download(`${name}.json`, new Blob([runJson(info, params, seed, runs)], { type: 'application/json' }))}>
        JSON
      </button>
    </span>
  );
}
