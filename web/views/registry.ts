/*
 * registry.ts - experiment name -> the component that draws its picture
 * from the runs' `details`. One line per experiment; an experiment without
 * an entry shows only the panels and the metrics table.
 *
 * To add a view: write web/views/<name>/<Name>View.tsx exporting a
 * component that takes ViewProps, and add one line below.
 */
import type { ComponentType } from 'react';
import type { ViewProps } from './types';
import { DeviceView } from './device/DeviceView';

export const VIEWS: Record<string, ComponentType<ViewProps>> = {
  fio: DeviceView,
};

/** The view for an experiment, or null. */
export function viewFor(experiment: string): ComponentType<ViewProps> | null {
  return VIEWS[experiment] ?? null;
}
