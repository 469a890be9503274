/*
 * usePublished.ts - the experiments a page shows, with the published rows it
 * needs (web/engine/published.ts: the fio device's measured points are not
 * in the list every page loads). While a needed table loads, `experiments`
 * is null and the page shows its loading line, so it never draws a device
 * page without its measured points. If the table cannot be loaded, the page
 * opens without those rows and says why.
 */
import { useEffect, useMemo, useState } from 'react';
import { needsPublished, withPublished } from '../engine/published';
import { LabError, type ExperimentInfo } from '../engine/types';

export function usePublished(experiments: ExperimentInfo[] | null, names: string[]): { experiments: ExperimentInfo[] | null; error: string | null } {
  const [loaded, setLoaded] = useState<Record<string, ExperimentInfo>>({});
  const [errors, setErrors] = useState<Record<string, string>>({});
  const want = useMemo(
    () => (experiments ?? []).filter((e) => names.includes(e.name) && needsPublished(e)),
    [experiments, names.join('\n')], // names by value: a new array each render
  );
  useEffect(() => {
    let live = true;
    for (const e of want) {
      if (loaded[e.name] || errors[e.name]) continue;
      withPublished(e).then(
        (full) => live && setLoaded((m) => ({ ...m, [e.name]: full })),
        (err: unknown) => live && setErrors((m) => ({ ...m, [e.name]: LabError.from(err).message })),
      );
    }
    return () => {
      live = false;
    };
  }, [want, loaded, errors]);
  return useMemo(() => {
    if (experiments === null) return { experiments: null, error: null };
    if (want.some((e) => !loaded[e.name] && !errors[e.name])) return { experiments: null, error: null };
    const error = want.map((e) => errors[e.name]).find((x) => x !== undefined) ?? null;
    return { experiments: experiments.map((e) => loaded[e.name] ?? e), error };
  }, [experiments, want, loaded, errors]);
}
