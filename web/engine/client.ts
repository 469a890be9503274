/*
 * client.ts - the page's side of the engine worker protocol. Each request
 * gets an id and a Promise kept in a map until its answer arrives; a run can
 * be cancelled; if the worker dies, every pending request fails with a
 * LabError (CODE_WORKER_CRASHED) and the next request starts a fresh worker.
 */
import { MsgType, type WorkerRequest, type WorkerResponse } from './protocol';
import { CODE_WORKER_CRASHED, LabError, labError, setLabCodes, type CollectSpec, type ExperimentInfo, type RunResult, type RunSpec, type WorkEstimate } from './types';

/** What the client needs of a Worker (a real one, or a fake in tests). */
export interface WorkerLike {
  postMessage(msg: WorkerRequest): void;
  terminate(): void;
  onmessage: ((ev: { data: WorkerResponse }) => void) | null;
  onerror: ((ev: { message?: string } | Event) => void) | null;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: LabError): void;
  onProgress?: (progress: number) => void;
}

export interface RunTicket {
  id: number;
  promise: Promise<RunResult>;
  cancel(): void;
}

export class EngineClient {
  private worker: WorkerLike | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly makeWorker: () => WorkerLike;

  constructor(makeWorker: () => WorkerLike) {
    this.makeWorker = makeWorker;
  }

  /** Has a worker now (started, not crashed or stopped)? */
  get live(): boolean {
    return this.worker !== null;
  }

  /** Start the worker now (it loads the engine before its first request arrives). */
  start(): void {
    this.ensureWorker();
  }

  /** The live worker, started on first use (or after a crash). */
  private ensureWorker(): WorkerLike {
    if (this.worker) return this.worker;
    const w = this.makeWorker();
    w.onmessage = (ev) => this.onMessage(ev.data);
    w.onerror = (ev) => {
      const detail = ev && 'message' in ev && ev.message ? `: ${ev.message}` : '';
      this.crash(`The engine worker stopped${detail}. It will restart on the next run.`);
    };
    this.worker = w;
    return w;
  }

  /** Fail every pending request and drop the worker. */
  private crash(message: string): void {
    const err = new LabError({ code: CODE_WORKER_CRASHED, codeName: 'WORKER_CRASHED', message });
    this.worker?.terminate();
    this.worker = null;
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.reject(err);
  }

  private onMessage(msg: WorkerResponse): void {
    const p = this.pending.get(msg.id);
    if (!p) return; // answered already (e.g. cancelled)
    switch (msg.type) {
      case MsgType.Progress:
        p.onProgress?.(msg.progress);
        return;
      case MsgType.ListDone:
        this.pending.delete(msg.id);
        setLabCodes(msg.errors);
        p.resolve(msg.experiments);
        return;
      case MsgType.RunDone:
        this.pending.delete(msg.id);
        p.resolve(msg.result);
        return;
      case MsgType.EstimateDone:
        this.pending.delete(msg.id);
        p.resolve(msg.estimate);
        return;
      case MsgType.Error:
        this.pending.delete(msg.id);
        p.reject(new LabError(msg.error));
        return;
    }
  }

  private request<T>(make: (id: number) => WorkerRequest, onProgress?: (p: number) => void): { id: number; promise: Promise<T> } {
    const id = this.nextId++;
    const promise = new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, onProgress });
    });
    try {
      this.ensureWorker().postMessage(make(id));
    } catch (e) {
      this.pending.get(id)?.reject(LabError.from(e));
      this.pending.delete(id);
    }
    return { id, promise };
  }

  /** The experiment registry. */
  list(): Promise<ExperimentInfo[]> {
    return this.request<ExperimentInfo[]>((id) => ({ id, type: MsgType.List })).promise;
  }

  /** The work a setting would do and its defaults' (lab_estimate); nothing runs. */
  estimate(experiment: string, params: Record<string, string>): Promise<WorkEstimate> {
    return this.request<WorkEstimate>((id) => ({ id, type: MsgType.Estimate, experiment, params })).promise;
  }

  /**
   * Start a run; progress arrives through onProgress; `collect` names the
   * snapshots / trace to return with the result; cancel() rejects it with
   * LAB_ECANCELED.
   */
  run(spec: RunSpec, onProgress?: (p: number) => void, collect?: CollectSpec): RunTicket {
    const { id, promise } = this.request<RunResult>((rid) => ({ id: rid, type: MsgType.Run, spec, collect }), onProgress);
    return { id, promise, cancel: () => this.cancel(id) };
  }

  /** Cancel a run: its Promise rejects at once; the worker stops after its current slice. */
  cancel(id: number): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    this.worker?.postMessage({ id: this.nextId++, type: MsgType.Cancel, target: id });
    p.reject(labError('LAB_ECANCELED', 'The run was cancelled.'));
  }

  /** Cancel everything and stop the worker. */
  terminate(): void {
    for (const id of [...this.pending.keys()]) this.cancel(id);
    this.worker?.terminate();
    this.worker = null;
  }
}
