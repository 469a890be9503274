/*
 * storage.ts - what the user typed survives reloads: form values per
 * experiment and lesson predictions, in localStorage. Storage may be
 * unavailable (private mode, quota): then it silently does nothing.
 */
import { useEffect, useState } from 'react';

const PREFIX = 'btrfs-lab:';

export function loadJson<T>(key: string, fallback: T): T {
  try {
    const s = localStorage.getItem(PREFIX + key);
    return s === null ? fallback : (JSON.parse(s) as T);
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
export function useStoredState<T>(key: string, fallback: T): [T, (v: T) => void] {
  const [v, setV] = useState<T>(() => loadJson(key, fallback));
  useEffect(() => setV(loadJson(key, fallback)), [key]); // fallback is a constant per call site
  return [
    v,
    (nv: T) => {
      setV(nv);
      saveJson(key, nv);
    },
  ];
}
