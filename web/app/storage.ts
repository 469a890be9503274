/*
 * storage.ts - what the user typed survives reloads: form values per
 * experiment and lesson predictions, in localStorage. Storage may be
 * unavailable (private mode, quota): then it silently does nothing.
 *
 * What is read back is checked against the shape the caller expects: a
 * value written by another version of the lab, or edited by hand, must not
 * take the page down (a stored `null` form once did), so a value of the
 * wrong shape reads as the fallback and is left in place untouched.
 */
import { useEffect, useState } from 'react';

const PREFIX = 'btrfs-lab:';

export type Guard<T> = (v: unknown) => v is T;

export const isString: Guard<string> = (v): v is string => typeof v === 'string';

/** A plain object of strings (an experiment's typed form values). */
export const isStringRecord: Guard<Record<string, string>> = (v): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

export function loadJson<T>(key: string, fallback: T, guard: Guard<T>): T {
  try {
    const s = localStorage.getItem(PREFIX + key);
    if (s === null) return fallback;
    const v: unknown = JSON.parse(s);
    return guard(v) ? v : fallback;
  } catch {
    return fallback;
  }
}

export function saveJson(key: string, v: unknown): void {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(v));
  } catch {
    /* storage full or disabled: keep working without it */
  }
}

/** useState persisted under `key`. */
export function useStoredState<T>(key: string, fallback: T, guard: Guard<T>): [T, (v: T) => void] {
  const [v, setV] = useState<T>(() => loadJson(key, fallback, guard));
  useEffect(() => setV(loadJson(key, fallback, guard)), [key]); // fallback and guard are constants per call site
  return [
    v,
    (nv: T) => {
      setV(nv);
      saveJson(key, nv);
    },
  ];
}
