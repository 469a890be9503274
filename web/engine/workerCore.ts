/*
 * workerCore.ts - the engine worker's logic, independent of the Worker
 * global so it runs under Node in tests: a switch over small functions, one
 * per request type. A run is stepped in slices sized to a host-time budget;
 * after each slice it posts progress and yields to the event loop, so a
 * Cancel message that arrived meanwhile is seen before the next slice.
 */
import type { Bridge, RunHandle } from './bridge';
import { MsgType, type CancelRequest, type EstimateRequest, type ListRequest, type RunRequest, type WorkerRequest, type WorkerResponse } from './protocol';
import { decodeTrace, type RawTrace } from '../model/trace';
import { LabError, labCodesObject, labError, type CollectSpec, type RunResult } from './types';

export type Post = (msg: WorkerResponse) => void;

const now = (): number => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/** Let queued messages (a Cancel) run before the next slice. */
const yieldToEvents = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** Add the requested snapshots and trace to a finished run's result. */
function collect(b: Bridge, h: RunHandle, result: RunResult, spec: CollectSpec | undefined): RunResult {
  if (!spec) return result;
  if (spec.trace || spec.record) {
    const doc = b.trace(h, 0) as { trace?: RawTrace };
    if (spec.record && doc.trace) result.recording = decodeTrace(doc.trace);
    // the events travel once, decoded; the rest (series, counters) as is
    if (spec.trace) result.trace = spec.record && doc.trace ? { ...doc, trace: { ...doc.trace, events: [] } } : doc;
  }
  if (spec.snapshots && spec.snapshots.length > 0) {
    result.snapshots = {};
    for (const name of spec.snapshots) {
      try {
        result.snapshots[name] = b.snapshot(h, name);
      } catch (e) {
        if (!(e instanceof LabError)) throw e;
        result.snapshots[name] = { error: e.message };
      }
    }
  }
  return result;
}

/**
 * Build the worker's message handler. `loadBridge` is called once, lazily
 * (the first request pays for instantiating the WASM module) unless `eager`;
 * `post` sends a
 * response to the page. Returns the function to call for each request.
 */
export function createWorkerCore(loadBridge: () => Promise<Bridge>, post: Post, opts?: { eager?: boolean }): (req: WorkerRequest) => Promise<void> {
  let bridge: Promise<Bridge> | null = null;
  const canceled = new Set<number>();
  const getBridge = (): Promise<Bridge> => (bridge ??= loadBridge());
  // eager: load the engine now, not on the first request (a failure is the first request's)
  if (opts?.eager) getBridge().catch(() => (bridge = null));

  const fail = (id: number, e: unknown): void => {
    post({ id, type: MsgType.Error, error: LabError.from(e).toInfo() });
  };

  async function onList(req: ListRequest): Promise<void> {
    const b = await getBridge();
    post({ id: req.id, type: MsgType.ListDone, experiments: b.list(), errors: labCodesObject() });
  }

  async function onRun(req: RunRequest): Promise<void> {
    const b = await getBridge();
    const target = req.sliceMs ?? 25;
    const t0 = now();
    const h = b.open(req.spec);
    try {
      const rec = req.collect?.record;
      if (rec) b.recordSpec(h, rec);
      let budget = 5000; // events per slice, adapted to the host's speed
      for (let slices = 1; ; slices++) {
        const s0 = now();
        const done = b.step(h, budget);
        const took = now() - s0;
        if (done) {
          post({ id: req.id, type: MsgType.RunDone, result: collect(b, h, b.result(h, now() - t0), req.collect) });
          return;
        }
        // a picture's recording: the rest of the run is not needed
        if (rec?.stopWhenFull && b.recordState(h) === 3) {
          post({ id: req.id, type: MsgType.RunDone, result: b.stoppedResult(h, now() - t0) });
          return;
        }
        // Aim the next slice at the target time, changing by at most 4x.
        budget = Math.max(1000, Math.min(budget * 4, Math.round((budget * target) / Math.max(took, 0.5))));
        post({ id: req.id, type: MsgType.Progress, progress: b.progress(h), slices });
        await yieldToEvents();
        if (canceled.has(req.id)) {
          canceled.delete(req.id);
          throw labError('LAB_ECANCELED', 'The run was cancelled.');
        }
      }
    } finally {
      b.close(h);
    }
  }

  async function onEstimate(req: EstimateRequest): Promise<void> {
    const b = await getBridge();
    post({ id: req.id, type: MsgType.EstimateDone, estimate: b.estimate(req.experiment, req.params) });
  }

  function onCancel(req: CancelRequest): void {
    canceled.add(req.target);
  }

  return async (req: WorkerRequest): Promise<void> => {
    try {
      switch (req.type) {
        case MsgType.List:
          return await onList(req);
        case MsgType.Run:
          return await onRun(req);
        case MsgType.Cancel:
          return onCancel(req);
        case MsgType.Estimate:
          return await onEstimate(req);
      }
    } catch (e) {
      // Anything but a LabError is a trap or abort inside the WASM module
      // (a failed engine assert): its memory can no longer be trusted, so
      // the next request instantiates a fresh module.
      if (!(e instanceof LabError)) bridge = null;
      fail(req.id, e);
    }
  };
}
