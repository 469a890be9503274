/*
 * published.ts - the published rows the page's engine build leaves out
 * (engine/src/exp/exp.h, npublished_separate: the fio device's 1,038
 * measured rows, a tenth of the page's first download), loaded when a page
 * shows them: the device page, its fit check and its lesson. The table is
 * build/wasm-web/published.json, which the build writes from the native
 * CLI's `list --json` (engine/tools/published-json.mjs), so the page shows
 * the rows the CLI and `lab fidelity` judge; it is a chunk of its own,
 * fetched once, the first time a page needs it.
 */
import { labError, type ExperimentInfo, type PublishedRow } from './types';

/** Does the page need to load the experiment's published rows before showing it? */
export const needsPublished = (info: ExperimentInfo): boolean => (info.publishedSeparate ?? 0) > 0 && info.published.length === 0;

let table: Promise<Record<string, PublishedRow[]>> | null = null;

function loadTable(): Promise<Record<string, PublishedRow[]>> {
  table ??= import('../../build/wasm-web/published.json?raw').then(
    (m) => JSON.parse(m.default) as Record<string, PublishedRow[]>,
    (err: unknown) => {
      table = null; // a later page tries again
      throw err;
    },
  );
  return table;
}

/** The experiment with its published rows (the same object when it has them). */
export async function withPublished(info: ExperimentInfo): Promise<ExperimentInfo> {
  if (!needsPublished(info)) return info;
  let rows: PublishedRow[] | undefined;
  try {
    rows = (await loadTable())[info.name];
  } catch (err) {
    throw labError('LAB_EENGINE', `could not load ${info.name}'s published measurements (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!rows || rows.length !== info.publishedSeparate)
    throw labError('LAB_EENGINE', `${info.name}: the engine expects ${info.publishedSeparate} published rows, this build's table has ${rows?.length ?? 0}`);
  return { ...info, published: rows };
}
