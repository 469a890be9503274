/*
 * fixtures.ts - the views' snapshot fixtures: for each experiment a small
 * run of its kernels (classroom size) with what the engine reported,
 * numbers rounded, committed beside this file (<experiment>.json) and
 * written by generate.test.ts.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ExperimentInfo, RunResult, Variant } from '../../engine/types';
import { decodeTrace, type RawTrace, type Trace } from '../../model/trace';

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

/**
 * An experiment page's recorded picture (views/replay/pageRecording.ts),
 * recorded from the fixture's runs as the page records it, at most
 * PICTURE_EVENTS events a kernel: <experiment>.picture.json.
 */
export interface PictureFixture {
  experiment: string;
  params: Record<string, string>;
  window: string;
  fromFirst: boolean;
  sides: { variant: Variant; trace: RawTrace }[];
}

/** Events kept a kernel in a picture fixture (the page keeps up to 600,000). */
export const PICTURE_EVENTS = 4000;

/** Each page picture's fixture setup: the smallest run whose moment still
 * happens and whose recording of it fits in PICTURE_EVENTS. */
export const PICTURE_SETUPS: Record<string, { params: Record<string, string>; events?: number }> = {
  'sparse-cp': { params: { file_mib: '1', state: 'delalloc', extent_kib: '16', hole_kib: '16' } },
  'qgroup-drop': { params: { subvols: '2', files: '32', threshold: '16' } },
  // the create's fsync and its leaf clone come first in the window
  bonnie: { params: { files: '60', dirs: '1', file_bytes: '16384', ram_gib: '0.25' }, events: 1500 },
  receive: { params: { files_per_writer: '12', writers: '2' } },
};

export const picturePath = (name: string): string => fileURLToPath(new URL(`./${name}.picture.json`, import.meta.url));

export function readPicture(name: string): { params: Record<string, string>; window: string; fromFirst: boolean; sides: { variant: Variant; trace: Trace }[] } {
  const fx = JSON.parse(readFileSync(picturePath(name), 'utf8')) as PictureFixture;
  return { params: fx.params, window: fx.window, fromFirst: fx.fromFirst, sides: fx.sides.map((s) => ({ variant: s.variant, trace: decodeTrace(s.trace) })) };
}

/** A decoded recording back as lab_trace_json writes it (decodeTrace's inverse). */
export function encodeTrace(tr: Trace): RawTrace {
  const events: number[][] = [];
  for (let i = 0; i < tr.n; i++) events.push([tr.t[i]!, tr.kind[i]!, tr.task[i]!, ...tr.args.subarray(tr.off[i]!, tr.off[i + 1]!)]);
  return {
    recording: true,
    from_ns: tr.fromNs,
    last_ns: tr.lastNs,
    complete: tr.complete,
    kept: tr.kept,
    unkept: tr.unkept,
    max_events: tr.maxEvents,
    kinds: tr.kinds.map((k) => ({ name: k.name, args: k.args })),
    tasks: tr.tasks,
    events,
  };
}
