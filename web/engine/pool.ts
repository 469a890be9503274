/*
 * pool.ts - a pool of engine workers behind the EngineClient API.
 *
 * Runs are independent (each opens its own simulated machine from its spec
 * and seed), so the page's before and after, the seeds of Run x20, the
 * points of a sweep and a lesson step's runs can go to different workers
 * at once; a run's bytes do not depend on which worker ran it or when.
 * Each worker is one EngineClient (its own cancel, and crash restart: a
 * worker that dies fails only its own run and is started afresh on the
 * next one). A worker takes one run at a time (runs are CPU-bound); the
 * rest wait in a queue ordered by priority, then by arrival, so the page's
 * own run is never stuck behind a sweep's. Workers start on demand, and
 * all but the first stop after a while idle, giving their WASM memory back
 * (a WebAssembly.Memory never shrinks).
 */
import { EngineClient, type RunTicket, type WorkerLike } from './client';
import { LabError, labError, type CollectSpec, type ExperimentInfo, type RunResult, type RunSpec, type WorkEstimate } from './types';

/** What the app needs of the engine: one client or a pool. */
export interface Engine {
  list(): Promise<ExperimentInfo[]>;
  estimate(experiment: string, params: Record<string, string>): Promise<WorkEstimate>;
  run(spec: RunSpec, onProgress?: (p: number) => void, collect?: CollectSpec, opts?: RunOptions): RunTicket;
  terminate(): void;
}

export interface RunOptions {
  /** Lower runs first (default 0: what the user is looking at); sweeps and Run x20 use 1. */
  priority?: number;
}

/** A priority for background work (a sweep, Run x20): behind the page's own runs. */
export const BACKGROUND = 1;

/** The WASM heap a full-scale run may need (docs/performance.md: <= 256 MiB); a worker holds it until stopped. */
export const RUN_MEMORY_MIB = 256;

/**
 * Workers for this machine: one per core (navigator.hardwareConcurrency),
 * as many as half the device's memory holds at RUN_MEMORY_MIB a run
 * (navigator.deviceMemory, GiB, where the browser tells it), at least 1,
 * at most `max`.
 */
export function poolSize(cores: number | undefined, memoryGiB: number | undefined, max = 8): number {
  const c = Number.isFinite(cores) && cores! > 0 ? Math.floor(cores!) : 2;
  const byMem = Number.isFinite(memoryGiB) && memoryGiB! > 0 ? Math.floor((memoryGiB! * 1024) / 2 / RUN_MEMORY_MIB) : c;
  return Math.max(1, Math.min(c, byMem, max));
}

interface Job {
  id: number;
  spec: RunSpec;
  collect?: CollectSpec;
  onProgress?: (p: number) => void;
  priority: number;
  resolve(r: RunResult): void;
  reject(e: LabError): void;
  /** the running ticket in a worker, once dispatched */
  ticket?: RunTicket;
  done?: boolean;
}

interface Slot {
  client: EngineClient;
  job: Job | null;
  idleTimer: ReturnType<typeof setTimeout> | null;
}

export class EnginePool implements Engine {
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private readonly idleMs: number;

  /**
   * `makeWorker(i)` starts worker i (again after a crash or an idle stop);
   * `idleMs`: how long a worker other than the first may stay idle.
   */
  constructor(makeWorker: (i: number) => WorkerLike, size: number, idleMs = 60_000) {
    this.size = Math.max(1, Math.floor(size));
    this.idleMs = idleMs;
    for (let i = 0; i < this.size; i++) this.slots.push({ client: new EngineClient(() => makeWorker(i)), job: null, idleTimer: null });
  }

  private listed: Promise<ExperimentInfo[]> | null = null;

  /** The registry (from the first worker), asked once; asked again after a failure. */
  list(): Promise<ExperimentInfo[]> {
    this.listed ??= this.slots[0]!.client.list().catch((e: unknown) => {
      this.listed = null;
      throw e;
    });
    return this.listed;
  }

  /** Start `n` workers now (default: all), so the first runs find their engines loaded. */
  warm(n = this.size): void {
    for (const s of this.slots.slice(0, n)) s.client.start();
  }

  /** lab_estimate (nothing runs): an idle worker's answer, else the first's, between its slices. */
  estimate(experiment: string, params: Record<string, string>): Promise<WorkEstimate> {
    const s = this.slots.find((x) => !x.job && x.client.live) ?? this.slots.find((x) => !x.job) ?? this.slots[0]!;
    return s.client.estimate(experiment, params);
  }

  run(spec: RunSpec, onProgress?: (p: number) => void, collect?: CollectSpec, opts?: RunOptions): RunTicket {
    const id = this.nextId++;
    let job!: Job;
    const promise = new Promise<RunResult>((resolve, reject) => {
      job = { id, spec, collect, onProgress, priority: opts?.priority ?? 0, resolve, reject };
    });
    // after the last of its priority: runs of one priority keep their order
    const at = this.queue.findIndex((j) => j.priority > job.priority);
    this.queue.splice(at < 0 ? this.queue.length : at, 0, job);
    this.dispatch();
    return { id, promise, cancel: () => this.cancelJob(job) };
  }

  /** Runs waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Runs in a worker now. */
  get running(): number {
    return this.slots.filter((s) => s.job).length;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.job) continue;
      const job = this.queue.shift();
      if (!job) return;
      this.start(slot, job);
    }
  }

  private start(slot: Slot, job: Job): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    slot.job = job;
    const t = slot.client.run(job.spec, job.onProgress, job.collect);
    job.ticket = t;
    const finish = (): void => {
      if (slot.job === job) slot.job = null;
      this.idle(slot);
      this.dispatch();
    };
    t.promise.then(
      (r) => {
        finish();
        if (!job.done) {
          job.done = true;
          job.resolve(r);
        }
      },
      (e: unknown) => {
        finish();
        if (!job.done) {
          job.done = true;
          job.reject(LabError.from(e));
        }
      },
    );
  }

  /** A worker with nothing to do: stop it after a while (never the first). */
  private idle(slot: Slot): void {
    if (slot === this.slots[0] || slot.job || this.queue.length > 0) return;
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = setTimeout(() => {
      slot.idleTimer = null;
      if (!slot.job) slot.client.terminate();
    }, this.idleMs);
  }

  private cancelJob(job: Job): void {
    if (job.done) return;
    const q = this.queue.indexOf(job);
    if (q >= 0) this.queue.splice(q, 1);
    job.done = true;
    // in a worker: it stops after its current slice; its slot frees when the client rejects
    job.ticket?.cancel();
    job.reject(labError('LAB_ECANCELED', 'The run was cancelled.'));
  }

  /** Cancel everything and stop every worker. */
  terminate(): void {
    for (const j of [...this.queue]) this.cancelJob(j);
    for (const s of this.slots) {
      if (s.job) this.cancelJob(s.job);
      s.job = null;
      if (s.idleTimer) clearTimeout(s.idleTimer);
      s.idleTimer = null;
      s.client.terminate();
    }
  }
}
