/*
 * labels.ts - metrics named for people. Each experiment's view entry
 * (views/registry.ts) carries a label table ("longest accounting call" for
 * account_max_ms); a metric missing from it is named from the engine's own
 * help line in `list` (up to its first bracket or semicolon), and the
 * identifier is always kept for the tooltip, the CSV and the CLI.
 */
import type { MetricInfo } from '../../engine/types';

/** A label from the engine's help: "mean duration of those calls (ms); ..." -> "mean duration of those calls". */
export function labelFromHelp(help: string): string {
  const cut = help.split(/\s*[(;:]\s*/)[0]?.trim() ?? '';
  return cut.length > 0 && cut.length <= 48 ? cut : '';
}

/** What to call a metric: the table's label, else a label from its help, else its name with spaces. */
export function metricLabel(table: Record<string, string> | undefined, m: MetricInfo | { name: string; help?: string }): string {
  return table?.[m.name] ?? (labelFromHelp(m.help ?? '') || m.name.replace(/_/g, ' '));
}

/** The seed file / patch number as people say it: "patch 002"; "-" (no patch) is the substrate. */
export const patchName = (seed: string): string => (seed && seed !== '-' ? `patch ${seed}` : 'substrate');

/** The random seed, never just "seed" (which reads as the seed *file*, the patch). */
export const seedName = (seed: number): string => `random seed ${seed}`;
