/*
 * registry.ts - experiment name -> the view that draws its picture from the
 * runs' `details` (and, if it asks, structure snapshots and the trace,
 * collected in the worker when the run finishes). One line per experiment;
 * an experiment without an entry shows only the panels and the metrics table.
 *
 * To add a view: write web/views/<name>/<Name>View.tsx exporting a component
 * that takes ViewProps, and add one line below, e.g.
 *   'qgroup-drop': { component: QgroupView, collect: { snapshots: ['tree:dropping'] } },
 */
import type { ComponentType } from 'react';
import type { CollectSpec, ExperimentInfo } from '../engine/types';
import { measuredJobs } from '../model/fioJobs';
import { publishedSetups } from '../model/params';
import type { ViewProps } from './types';
import { DeviceView } from './device/DeviceView';
import { QgroupView } from './qgroup/QgroupView';
import { SWEEP_THRESHOLDS } from './qgroup/model';
import { SparseCpView } from './sparsecp/SparseCpView';
import { TortureView } from './torture/TortureView';

export interface ViewEntry {
  component: ComponentType<ViewProps>;
  /** Snapshots / trace the view needs from each finished run. */
  collect?: CollectSpec;
  /** Parameter sets the keyboard's next / previous step through on the
   * experiment's page (default: the published rows' setups; a lesson keeps
   * its own steps). */
  steps?: (info: ExperimentInfo, values: Record<string, string>) => Record<string, string>[];
}

export const VIEWS: Record<string, ViewEntry> = {
  // → / ← walk the jobs fio measured on the profile, as the job picker lists them
  fio: { component: DeviceView, steps: (info, v) => measuredJobs(info.published, v.device ?? '').map((j) => j.params) },
  // → / ← walk the sweep's thresholds (the RFC table's 1K-8K and infinite, and 16K)
  'qgroup-drop': { component: QgroupView, steps: () => SWEEP_THRESHOLDS.map((threshold) => ({ threshold })) },
  'sparse-cp': { component: SparseCpView },
  torture: { component: TortureView, collect: { trace: true } },
};

/** The view for an experiment, or null. */
export function viewFor(experiment: string): ComponentType<ViewProps> | null {
  return VIEWS[experiment]?.component ?? null;
}

/** What the experiment's view wants collected from each run (undefined: nothing). */
export function collectFor(experiment: string): CollectSpec | undefined {
  return VIEWS[experiment]?.collect;
}

/** The parameter sets next / previous step through on the experiment's page (none: []). */
export function stepsFor(info: ExperimentInfo, values: Record<string, string>): Record<string, string>[] {
  const steps = VIEWS[info.name]?.steps;
  return steps ? steps(info, values) : publishedSetups(info);
}
