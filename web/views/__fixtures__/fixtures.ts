/*
 * fixtures.ts - the views' snapshot fixtures: for each experiment a small
 * run of its kernels (classroom size) with what the engine reported,
 * numbers rounded, committed beside this file (<experiment>.json) and
 * written by generate.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ExperimentInfo, RunResult, Variant } from '../../engine/types';

export interface ViewFixture {
  experiment: string;
  params: Record<string, string>;
  seed: number;
  info: ExperimentInfo;
  runs: Partial<Record<Variant, RunResult>>;
}

/** Each experiment's fixture run: small enough to commit, large enough to draw every picture. */
export const FIXTURE_SETUPS: Record<string, { params: Record<string, string> }> = {
  fio: { params: { device: 'nvme-dc', rw: 'randread', bs: '4096', iodepth: '1', numjobs: '1', ios: '2000' } },
  bonnie: { params: { files: '40', dirs: '2', file_bytes: '16384', ram_gib: '1' } },
  'qgroup-drop': { params: { subvols: '2', files: '256', threshold: '64' } },
  receive: { params: { files_per_writer: '40', writers: '2' } },
  'sparse-cp': { params: { file_mib: '1', state: 'cold' } },
  untar: { params: { scale: '0.004', fs_gib: '1' } },
  torture: { params: { ops: '300', subvols: '1' } },
};

export const fixturePath = (name: string): string => fileURLToPath(new URL(`./${name}.json`, import.meta.url));

export function readFixture(name: string): ViewFixture {
  return JSON.parse(readFileSync(fixturePath(name), 'utf8')) as ViewFixture;
}

/** Every number to 4 significant digits (integers below 10,000 stay exact). */
export function roundDeep(x: unknown): unknown {
  if (typeof x === 'number') return Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(4)) : x;
  if (Array.isArray(x)) return x.map(roundDeep);
  if (x && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, roundDeep(v)]));
  return x;
}

/** Rendered markup as a snapshot reads best: numbers to 0.1, a tag a line (Observable Plot's tests do the same). */
export const normaliseSvg = (html: string): string =>
  html.replace(/-?\d+\.\d+/g, (n) => String(Math.round(Number(n) * 10) / 10)).replace(/></g, '>\n<');
