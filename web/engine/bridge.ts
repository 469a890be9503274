/*
 * bridge.ts - the only module that touches the engine's WebAssembly memory.
 *
 * It owns every malloc/free, pointer, UTF-8 string and lab_free() call, turns
 * every negative LAB_E* return code into a LabError in one place (check()),
 * and hands out plain typed objects (ExperimentInfo, RunResult). It runs in
 * the browser's engine worker and under Node (Vitest, the headless lesson
 * test) alike: the caller supplies the Emscripten factory and the .wasm bytes.
 *
 * 64-bit values. lab.h keeps 64-bit integers off the WASM boundary (no
 * -sWASM_BIGINT): the seed goes in as two uint32 words (seed_lo, seed_hi),
 * an event budget is a uint32, a trace position a double (seedWords()).
 */
import { decodeTrace, type RawTrace } from '../model/trace';
import {
  LabError,
  RECORD_EVENTS,
  type RecordSpec,
  labCodeName,
  labError,
  setLabCodes,
  type ExperimentInfo,
  type MetricInfo,
  type ParamInfo,
  type PatchInfo,
  type PublishedRow,
  type RunResult,
  type RunSpec,
  type Variant,
  type WorkEstimate,
} from './types';

type Ptr = number;

/** The subset of the Emscripten module object the bridge uses (engine/exports.json). */
export interface LabModule {
  _malloc(n: number): Ptr;
  _free(p: Ptr): void;
  _lab_strerror(code: number): Ptr;
  _lab_free(p: Ptr): void;
  _lab_list_json(out: Ptr): number;
  _lab_open(exp: Ptr, variant: Ptr, params: Ptr, seedLo: number, seedHi: number, out: Ptr, errmsg: Ptr): number;
  _lab_estimate(exp: Ptr, params: Ptr, work: Ptr, defaultWork: Ptr, errmsg: Ptr): number;
  _lab_step(run: Ptr, maxEvents: number, done: Ptr): number;
  _lab_append(run: Ptr, text: Ptr, errmsg: Ptr): number;
  _lab_progress(run: Ptr): number;
  _lab_result_json(run: Ptr, out: Ptr): number;
  _lab_record(run: Ptr, fromNs: number, maxEvents: number): number;
  _lab_record_opts(run: Ptr, opts: Ptr): number;
  _lab_record_state(run: Ptr): number;
  _lab_trace_json(run: Ptr, since: number, out: Ptr): number;
  _lab_snapshot_json(run: Ptr, what: Ptr, out: Ptr): number;
  _lab_check(run: Ptr): number;
  _lab_close(run: Ptr): void;
  UTF8ToString(p: Ptr, maxBytes?: number): string;
  stringToUTF8(s: string, p: Ptr, maxBytes: number): void;
  lengthBytesUTF8(s: string): number;
  getValue(p: Ptr, type: string): number;
  setValue(p: Ptr, v: number, type: string): void;
}

export type LabFactory = (opts: Record<string, unknown>) => Promise<LabModule>;

/** An open run: an opaque handle, valid until close(). */
export interface RunHandle {
  readonly ptr: Ptr;
  readonly spec: RunSpec;
}

/** Raw JSON shapes of lab_list_json (snake_case, as the C side writes them). */
interface RawExperiment {
  name: string;
  seed: string;
  title?: string;
  variants: Variant[];
  params: ParamInfo[];
  metrics: string[];
  metric_info?: MetricInfo[];
  published?: PublishedRow[];
  published_separate?: number;
  patches?: PatchInfo[];
  kernels?: Partial<Record<Variant, string>>;
  work_unit?: string;
}

/**
 * Parse lab_list_json's document into ExperimentInfo objects, and take the
 * engine's error codes from it (setLabCodes). Exported so the pure parts can
 * be unit-tested on fixtures. Throws LabError on a bad shape.
 */
export function parseExperimentList(json: string): ExperimentInfo[] {
  const doc = JSON.parse(json) as { experiments?: RawExperiment[]; errors?: Record<string, number> };
  setLabCodes(doc?.errors);
  if (!doc || !Array.isArray(doc.experiments)) throw labError('LAB_EENGINE', 'lab_list_json: no "experiments" array');
  return doc.experiments.map((e) => ({
    name: e.name,
    seed: e.seed,
    title: e.title ?? e.name,
    variants: e.variants,
    params: e.params,
    metrics: e.metrics,
    metricInfo: e.metric_info ?? e.metrics.map((m) => ({ name: m, unit: '', help: '' })),
    published: e.published ?? [],
    ...(e.published_separate ? { publishedSeparate: e.published_separate } : {}),
    ...(e.work_unit ? { workUnit: e.work_unit } : {}),
    ...(Array.isArray(e.patches) ? { patches: e.patches } : {}),
    ...(e.kernels ? { kernels: e.kernels } : {}),
  }));
}

/** Parse lab_result_json's document. */
export function parseRunResult(json: string, wallMs: number): RunResult {
  const doc = JSON.parse(json) as { metrics?: Record<string, number>; sim_ns?: number; events?: number; details?: Record<string, unknown> };
  return {
    metrics: doc.metrics ?? {},
    simNs: doc.sim_ns ?? 0,
    events: doc.events ?? 0,
    details: doc.details ?? {},
    wallMs,
  };
}

/** "k=v\nk=v" text for lab_open, in a stable (sorted) order. */
export function paramsToText(params: Record<string, string>): string {
  return Object.keys(params)
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('\n');
}

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

export class Bridge {
  private readonly m: LabModule;
  private listCache: ExperimentInfo[] | null = null;

  private constructor(m: LabModule) {
    this.m = m;
  }

  /**
   * Instantiate the engine from its Emscripten factory and the .wasm bytes
   * (passing the bytes avoids the loader's fetch/locateFile logic, which
   * misbehaves under Node). Returns a ready Bridge.
   */
  /** From a module compiled once (the page's WebAssembly.compileStreaming, shared with every worker): each worker only instantiates it. */
  static async fromModule(factory: LabFactory, module: WebAssembly.Module): Promise<Bridge> {
    const m = await factory({
      instantiateWasm: (imports: WebAssembly.Imports, receive: (inst: WebAssembly.Instance, mod: WebAssembly.Module) => void) => {
        void WebAssembly.instantiate(module, imports).then((inst) => receive(inst, module));
        return {};
      },
      print: () => {},
      printErr: (s: string) => console.warn('[engine]', s),
    });
    return new Bridge(m);
  }

  static async create(factory: LabFactory, wasmBinary: ArrayBuffer | Uint8Array): Promise<Bridge> {
    const m = await factory({
      wasmBinary,
      print: () => {},
      printErr: (s: string) => console.warn('[engine]', s),
    });
    return new Bridge(m);
  }

  /** A seed in [0, 2^53) as its (low, high) uint32 words. */
  private seedWords(x: number): [number, number] {
    if (!Number.isInteger(x) || x < 0 || x > Number.MAX_SAFE_INTEGER)
      throw labError('LAB_EINVAL', `The seed must be a whole number from 0 to 2^53-1, not ${x}.`);
    return [x % 0x100000000 | 0, Math.floor(x / 0x100000000) | 0];
  }

  /** Copy a JS string into engine memory; the caller frees it. */
  private str(s: string): Ptr {
    const n = this.m.lengthBytesUTF8(s) + 1;
    const p = this.m._malloc(n);
    this.m.stringToUTF8(s, p, n);
    return p;
  }

  /** Read a string the engine allocated through a char** and lab_free it. */
  private takeString(out: Ptr): string {
    const p = this.m.getValue(out, 'i32');
    if (!p) return '';
    const s = this.m.UTF8ToString(p);
    this.m._lab_free(p);
    return s;
  }

  /** The one place a return code becomes an exception. */
  private check(code: number, what: string, detail?: string): number {
    if (code >= 0) return code;
    // the engine names its codes: its list, or lab_strerror ("LAB_EINVAL: ...")
    const codeName = labCodeName(code) ?? this.strerror(code).split(':')[0] ?? 'LAB_E?';
    const message = detail && detail.length > 0 ? detail : `${what}: ${this.strerror(code)}`;
    throw new LabError({ code, codeName, message });
  }

  /** Call fn with one char** out-slot; return the string it produced. */
  private withOut(fn: (out: Ptr) => number, what: string): string {
    const out = this.m._malloc(4);
    try {
      this.zero(out);
      const code = fn(out);
      const s = code >= 0 ? this.takeString(out) : '';
      this.check(code, what);
      return s;
    } finally {
      this.m._free(out);
    }
  }

  /** lab_strerror: the name and meaning of a code. */
  strerror(code: number): string {
    return this.m.UTF8ToString(this.m._lab_strerror(code));
  }

  /** The experiment registry (cached: it never changes). */
  list(): ExperimentInfo[] {
    if (!this.listCache) this.listCache = parseExperimentList(this.withOut((o) => this.m._lab_list_json(o), 'lab_list_json'));
    return this.listCache;
  }

  /** Open a run; throws LabError (with the engine's one-line message) on bad parameters. */
  open(spec: RunSpec): RunHandle {
    const pExp = this.str(spec.experiment);
    const pVar = this.str(spec.variant);
    const text = paramsToText(spec.params);
    const pPar = this.str(spec.variation ? `${text}${text ? '\n' : ''}variation=${spec.variation}` : text);
    const out = this.m._malloc(4);
    const err = this.m._malloc(4);
    try {
      this.zero(out);
      this.zero(err);
      const code = this.m._lab_open(pExp, pVar, pPar, ...this.seedWords(spec.seed), out, err);
      const msg = this.takeString(err);
      this.check(code, 'lab_open', msg);
      return { ptr: this.m.getValue(out, 'i32'), spec };
    } finally {
      for (const p of [pExp, pVar, pPar, out, err]) this.m._free(p);
    }
  }

  /**
   * lab_estimate: the work a run of these settings would do, in the
   * experiment's unit (ExperimentInfo.workUnit), and its defaults' work;
   * throws LabError on bad parameters.
   */
  estimate(experiment: string, params: Record<string, string>): WorkEstimate {
    const pExp = this.str(experiment);
    const pPar = this.str(paramsToText(params));
    const out = this.m._malloc(16);
    const err = this.m._malloc(4);
    try {
      this.zero(err);
      const code = this.m._lab_estimate(pExp, pPar, out, out + 8, err);
      this.check(code, 'lab_estimate', this.takeString(err));
      return { work: this.m.getValue(out, 'double'), defaultWork: this.m.getValue(out + 8, 'double') };
    } finally {
      for (const p of [pExp, pPar, out, err]) this.m._free(p);
    }
  }

  /** Advance by at most maxEvents simulated events; true once the run is done. */
  step(run: RunHandle, maxEvents: number): boolean {
    const done = this.m._malloc(4);
    try {
      this.zero(done);
      this.check(this.m._lab_step(run.ptr, Math.max(1, Math.min(maxEvents, 0xffffffff)) >>> 0, done), 'lab_step');
      return this.m.getValue(done, 'i32') !== 0;
    } finally {
      this.m._free(done);
    }
  }

  /** lab_append: more commands for a finished run of the sandbox (step
   * it again to run them); throws LabError with the engine's one line
   * when they are refused, and then the run is as it was. */
  append(run: RunHandle, text: string): void {
    const p = this.str(text);
    const err = this.m._malloc(4);
    try {
      this.zero(err);
      const code = this.m._lab_append(run.ptr, p, err);
      this.check(code, 'lab_append', this.takeString(err));
    } finally {
      this.m._free(p);
      this.m._free(err);
    }
  }

  progress(run: RunHandle): number {
    return this.m._lab_progress(run.ptr);
  }

  result(run: RunHandle, wallMs = 0): RunResult {
    return parseRunResult(this.withOut((o) => this.m._lab_result_json(run.ptr, o), 'lab_result_json'), wallMs);
  }

  /** Record the run from simulated time fromNs, keeping at most maxEvents (lab_record). */
  record(run: RunHandle, fromNs: number, maxEvents: number): void {
    this.check(this.m._lab_record(run.ptr, fromNs, Math.max(1, Math.min(maxEvents, 0xffffffff)) >>> 0), 'lab_record');
  }

  /** Record with options (lab_record_opts): a time or an operation to
   * start at, a bound, the kinds to keep. */
  recordSpec(run: RunHandle, spec: RecordSpec): void {
    if (!spec.fromOp && !spec.only) return this.record(run, spec.fromNs ?? 0, spec.maxEvents ?? RECORD_EVENTS);
    const lines = [`max_events=${Math.max(1, Math.min(Math.floor(spec.maxEvents ?? RECORD_EVENTS), 1_000_000))}`];
    if (spec.fromOp) lines.push(`from_op=${spec.fromOp.kind}`, `nth=${Math.max(0, Math.floor(spec.fromOp.nth))}`);
    else if (spec.fromNs) lines.push(`from_ns=${Math.max(0, Math.floor(spec.fromNs))}`);
    if (spec.only && spec.only.length) lines.push(`only=${spec.only.join(',')}`);
    const p = this.str(lines.join('\n'));
    try {
      this.check(this.m._lab_record_opts(run.ptr, p), 'lab_record_opts');
    } finally {
      this.m._free(p);
    }
  }

  /** 0 not asked, 1 waiting for its start, 2 recording, 3 full. */
  recordState(run: RunHandle): number {
    return this.m._lab_record_state(run.ptr);
  }

  /** A run stopped once its recording was full: the recording, no metrics. */
  stoppedResult(run: RunHandle, wallMs: number): RunResult {
    const recording = decodeTrace((this.trace(run, 0) as { trace: RawTrace }).trace);
    return { metrics: {}, simNs: recording.lastNs, events: 0, details: {}, wallMs, recording, stopped: true };
  }

  /** Trace events after `since` and the sampled series (experiment-defined JSON). */
  trace(run: RunHandle, since: number): unknown {
    return JSON.parse(this.withOut((o) => this.m._lab_trace_json(run.ptr, since, o), 'lab_trace_json'));
  }

  snapshot(run: RunHandle, what: string): unknown {
    const p = this.str(what);
    try {
      return JSON.parse(this.withOut((o) => this.m._lab_snapshot_json(run.ptr, p, o), 'lab_snapshot_json'));
    } finally {
      this.m._free(p);
    }
  }

  /** Invariant failures found in the run's structures (0 = consistent). */
  checkInvariants(run: RunHandle): number {
    return this.check(this.m._lab_check(run.ptr), 'lab_check');
  }

  close(run: RunHandle): void {
    this.m._lab_close(run.ptr);
  }

  /**
   * Open, step to the end and close: the headless path (tests, lessons).
   * `slice` is the event budget per lab_step call; with `record` the
   * result carries the decoded recording.
   */
  run(spec: RunSpec, slice = 1_000_000, record?: RecordSpec): RunResult {
    const t0 = now();
    const h = this.open(spec);
    try {
      if (record) this.recordSpec(h, record);
      while (!this.step(h, slice)) {
        if (record?.stopWhenFull && this.recordState(h) === 3) return this.stoppedResult(h, now() - t0);
      }
      const r = this.result(h, now() - t0);
      if (record) r.recording = decodeTrace((this.trace(h, 0) as { trace: RawTrace }).trace);
      return r;
    } finally {
      this.close(h);
    }
  }

  /** Clear a 4-byte out-slot (malloc does not). */
  private zero(p: Ptr): void {
    this.m.setValue(p, 0, 'i32');
  }
}
