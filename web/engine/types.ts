/*
 * types.ts - the plain typed objects the engine hands to the front end.
 *
 * Nothing here touches WASM memory: bridge.ts parses the engine's JSON into
 * these shapes, and the worker, the client and every component use only them.
 */

import type { Trace } from '../model/trace';

export type Variant = 'before' | 'after' | 'base';
export type ParamType = 'int' | 'float' | 'enum' | 'int-or-inf' | 'bool';
export type ParamValue = number | string | boolean;

/** One parameter of an experiment, as `lab_list_json` declares it. */
export interface ParamInfo {
  name: string;
  type: ParamType;
  default: ParamValue;
  min?: number;
  max?: number;
  /** The minimum itself is not allowed (a float in (min, max]). */
  min_exclusive?: boolean;
  /** An int must be a multiple of this (a block size, 4 KiB extents). */
  multiple_of?: number;
  values?: string[];
  unit?: string;
  help: string;
}

export interface MetricInfo {
  name: string;
  unit: string;
  help: string;
}

/** A published figure the lab reproduces, with the parameters it was measured at. */
export interface PublishedRow {
  variant: Variant;
  params: Record<string, ParamValue>;
  metric: string;
  value: number;
  source: string;
  tolerance: number;
  /** One run of a noisy quantity: judged against the spread of 20 seeds, not one run. */
  noisy?: boolean;
  /** A constant was fitted on this row (FIT); otherwise the row is a prediction. */
  fit?: boolean;
  /** A mean's row: the published standard deviation over `runs` runs. */
  sd?: number;
  runs?: number;
}

/** A patch an experiment exposes, as `list --json` declares it (engine/src/kernel/patches.def). */
export interface PatchInfo {
  /** "P_004_NO_HOLE_UPTODATE" */
  id: string;
  /** the seed file (the patch number people say: "patch 004") */
  seed: string;
  /** its place in its series ("1/9"; "1/1" alone) */
  series: string;
  /** upstream commit (12 hex digits), or null when not on file */
  commit: string | null;
  kernel?: string;
  /** "model": the simulated kernel asks for it; "none": it changes nothing the model can see
   *  (help says why); "not yet": the model runs one side of it so far */
  effect?: 'model' | 'none' | 'not yet';
  title: string;
  help: string;
  /** the parameter that switches it in the after kernel, or null (the before/after pair is the switch) */
  switch: string | null;
  /** whether each variant's kernel has it */
  applied?: Partial<Record<Variant, boolean>>;
  /** an enum switch an experiment declares itself: whether each of its
   * values applies the patch in the after run, or (a value following the
   * `kernel` preset) whether it does for each preset */
  switch_values?: Record<string, boolean | Record<string, boolean>>;
}

/** lab_estimate: a run's work and its defaults', in the experiment's unit. */
export interface WorkEstimate {
  work: number;
  defaultWork: number;
}

export interface ExperimentInfo {
  name: string;
  seed: string;
  title: string;
  variants: Variant[];
  params: ParamInfo[];
  metrics: string[];
  metricInfo: MetricInfo[];
  published: PublishedRow[];
  /** Published rows the page's engine build leaves out (the fio device's
   * measured points): `published` is empty until web/engine/published.ts
   * loads them, for the pages that show them. */
  publishedSeparate?: number;
  /** The patches it exposes (list --json's `patches`: engine/src/kernel/patches.def). */
  patches?: PatchInfo[];
  /** The kernel each variant runs ("6.1", "6.2": patches.def's kernels). */
  kernels?: Partial<Record<Variant, string>>;
  /** The unit of its work estimate (lab_estimate): "operations", "IOs"... */
  workUnit?: string;
}

/** What to run: parameters as the text the user typed ("4096", "inf", "nvme-dc"). */
export interface RunSpec {
  experiment: string;
  variant: Variant;
  params: Record<string, string>;
  seed: number;
  /**
   * The run's sources of run-to-run variation (engine/src/kernel/variation.def):
   * "on" (the default: each at its table switch), "off" (the deterministic
   * model), or the engine's list form ("off,timer_phase", "-syscall").
   */
  variation?: string;
}

/**
 * Extra state a view wants from a finished run, collected in the worker
 * before the run is closed: named structure snapshots (lab_snapshot_json)
 * and the trace with its sampled series (lab_trace_json).
 */
export interface CollectSpec {
  snapshots?: string[];
  trace?: boolean;
  /** Record the run (lab_record): from simulated time fromNs (default 0),
   * at most maxEvents (default RECORD_EVENTS); the result's `recording`. */
  record?: RecordSpec;
}

export interface RecordSpec {
  fromNs?: number;
  maxEvents?: number;
  /** Start instead at the run's nth (from 0) operation of this kind
   * ("op:lseek", "op:drop"...): the engine lists the structures at that
   * moment (lab_record_opts from_op / nth). The same rule gives both
   * kernels the same moment of their own runs. */
  fromOp?: { kind: string; nth: number };
  /** Keep only these kinds of event (the listing's included). */
  only?: string[];
  /** Stop the run once the window is full: the result then carries the
   * recording only (`stopped`, no metrics): for a picture, not a result. */
  stopWhenFull?: boolean;
}

/** A recording's default bound: a classroom-scale run fits whole. */
export const RECORD_EVENTS = 400_000;

/** A finished run: metrics, simulated time, events, experiment-specific details. */
export interface RunResult {
  metrics: Record<string, number>;
  simNs: number;
  events: number;
  details: Record<string, unknown>;
  wallMs: number;
  /** By name, when requested; a snapshot that failed holds {error: message}. */
  snapshots?: Record<string, unknown>;
  trace?: unknown;
  /** The recorded events, decoded (model/trace.ts), when `record` was asked. */
  recording?: Trace;
  /** The run was stopped once its recording was full (RecordSpec
   * stopWhenFull): metrics and details are empty. */
  stopped?: boolean;
}

/** An engine error as plain data (it crosses the worker boundary). */
export interface LabErrorInfo {
  code: number;
  codeName: string;
  message: string;
}

/**
 * The engine's error codes by name (engine/include/lab.h's LAB_ERRORS), as
 * `list --json` lists them ("errors"): the front end reads them, it never
 * types them. Filled when a list is read (parseExperimentList in the
 * worker, the list's answer in the page).
 */
const labCodes = new Map<string, number>();

export function setLabCodes(errors: Record<string, number> | undefined): void {
  if (errors) for (const [name, code] of Object.entries(errors)) labCodes.set(name, code);
}

export function labCodesObject(): Record<string, number> {
  return Object.fromEntries(labCodes);
}

/** "LAB_EINVAL" for -1, once the engine's codes were read. */
export function labCodeName(code: number): string | undefined {
  for (const [name, c] of labCodes) if (c === code) return name;
  return undefined;
}

/** A failure the front end reports in the engine's terms (a cancelled run is
 * LAB_ECANCELED): its code is the engine's (NaN before the engine was read). */
export function labError(codeName: string, message: string): LabError {
  return new LabError({ code: labCodes.get(codeName) ?? NaN, codeName, message });
}

/** The one code the front end itself raises (never returned by the engine). */
export const CODE_WORKER_CRASHED = -100;

/**
 * The one exception type for engine failures. `message` is for people; `code`
 * is the LAB_E* value (or CODE_WORKER_CRASHED) for programs.
 */
export class LabError extends Error {
  readonly code: number;
  readonly codeName: string;

  constructor(info: LabErrorInfo) {
    super(info.message);
    this.name = 'LabError';
    this.code = info.code;
    this.codeName = info.codeName;
  }

  toInfo(): LabErrorInfo {
    return { code: this.code, codeName: this.codeName, message: this.message };
  }

  static from(e: unknown): LabError {
    if (e instanceof LabError) return e;
    if (e && typeof e === 'object' && 'code' in e && 'codeName' in e && 'message' in e) {
      const o = e as LabErrorInfo;
      return new LabError({ code: Number(o.code), codeName: String(o.codeName), message: String(o.message) });
    }
    const msg = e instanceof Error ? e.message : String(e);
    return labError('LAB_EENGINE', msg);
  }
}
