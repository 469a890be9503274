/*
 * runDiff.ts - name what distinguishes one run's parameters from another's
 * ("iodepth=1, numjobs=2"), to label a previous run shown for comparison.
 */

/** The settings of `prev` that differ from `cur`, as "k=v" in key order ("seed 3" if only the seed differs). */
export function diffLabel(prev: Record<string, string>, cur: Record<string, string>, prevSeed?: number, curSeed?: number): string {
  const keys = [...new Set([...Object.keys(prev), ...Object.keys(cur)])].sort();
  const parts = keys.filter((k) => prev[k] !== cur[k] && prev[k] !== undefined).map((k) => `${k}=${prev[k]}`);
  if (prevSeed !== undefined && curSeed !== undefined && prevSeed !== curSeed) parts.push(`seed ${prevSeed}`);
  return parts.length > 0 ? parts.join(', ') : 'same settings';
}
