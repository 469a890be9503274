/*
 * The pool of engine workers against the real WASM build, under Node: each
 * fake worker runs workerCore over its own engine instance (as each Web
 * Worker instantiates its own), messages crossing as structured clones.
 * Runs side by side give the same bytes as one after another; the page's
 * runs overtake queued background work; cancel and a crash touch one run.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from './bridge';
import type { WorkerLike } from './client';
import { loadNodeBridge } from './node';
import { BACKGROUND, EnginePool, poolSize } from './pool';
import type { WorkerRequest, WorkerResponse } from './protocol';
import type { RunResult, RunSpec } from './types';
import { createWorkerCore } from './workerCore';

const bridges: Bridge[] = [];
beforeAll(async () => {
  for (let i = 0; i < 3; i++) bridges.push(await loadNodeBridge());
});

function fakeWorker(bridge: Bridge, log?: string[]): WorkerLike {
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(msg: WorkerRequest) {
      if (log && msg.type === 'run') log.push(`${msg.spec.experiment}:${msg.spec.seed}`);
      void core(structuredClone(msg));
    },
    terminate() {},
  };
  const core = createWorkerCore(
    async () => bridge,
    (m: WorkerResponse) => setTimeout(() => w.onmessage?.({ data: structuredClone(m) }), 0),
  );
  return w;
}

/** A run's output without its host time (the CLI's --json, less wall_ms). */
const bytes = (r: RunResult): string => JSON.stringify({ ...r, wallMs: 0 });

describe('engine pool', () => {
  it('sizes itself from the cores and the memory a run needs', () => {
    expect(poolSize(4, 8)).toBe(4);
    expect(poolSize(16, 8)).toBe(8); // max
    expect(poolSize(16, 2)).toBe(4); // 1 GiB for runs: 4 x 256 MiB
    expect(poolSize(8, 0.5)).toBe(1); // never 0
    expect(poolSize(undefined, undefined)).toBe(2);
    expect(poolSize(1, undefined)).toBe(1);
  });

  it('gives the same bytes side by side as one after another (same seeds)', async () => {
    // Run x20's shape: every seed of each kernel, here untar and sparse-cp at classroom scale
    const specs: RunSpec[] = [];
    for (const seed of [1, 2, 3, 4, 5])
      for (const variant of ['before', 'after'] as const) {
        specs.push({ experiment: 'untar', variant, params: { scale: '0.004', fs_gib: '1', fs_used_gib: '0' }, seed });
        specs.push({ experiment: 'sparse-cp', variant, params: { file_mib: '4' }, seed });
      }
    const serial = specs.map((s) => bytes(bridges[0]!.run(s)));
    const pool = new EnginePool((i) => fakeWorker(bridges[i]!), 3);
    const order: number[] = [];
    const side = await Promise.all(
      specs.map((s, i) =>
        pool.run(s).promise.then((r) => {
          order.push(i);
          return bytes(r);
        }),
      ),
    );
    expect(side).toEqual(serial);
    expect(new Set(side).size).toBe(specs.length); // the seeds differ: a real comparison
    pool.terminate();
  });

  it('runs the page’s own runs before queued background work', async () => {
    const log: string[] = [];
    const pool = new EnginePool(() => fakeWorker(bridges[0]!, log), 1);
    const fio = (seed: number): RunSpec => ({ experiment: 'fio', variant: 'base', params: { ios: '2000' }, seed });
    const bg = [1, 2, 3].map((s) => pool.run(fio(s), undefined, undefined, { priority: BACKGROUND }).promise);
    const fg = pool.run(fio(9)).promise;
    await Promise.all([...bg, fg]);
    // seed 1 had the worker already; the page's run goes next
    expect(log).toEqual(['fio:1', 'fio:9', 'fio:2', 'fio:3']);
    pool.terminate();
  });

  it('cancels a queued run without running it, and a running one in its worker', async () => {
    const log: string[] = [];
    const pool = new EnginePool(() => fakeWorker(bridges[0]!, log), 1);
    const long = pool.run({ experiment: 'fio', variant: 'base', params: { ios: '2000000' }, seed: 1 });
    const queued = pool.run({ experiment: 'fio', variant: 'base', params: { ios: '2000' }, seed: 2 });
    queued.cancel();
    await expect(queued.promise).rejects.toMatchObject({ codeName: 'LAB_ECANCELED' });
    setTimeout(() => long.cancel(), 30);
    await expect(long.promise).rejects.toMatchObject({ codeName: 'LAB_ECANCELED' });
    const after = await pool.run({ experiment: 'fio', variant: 'base', params: { ios: '2000' }, seed: 3 }).promise;
    expect(after.metrics.iops).toBeGreaterThan(0);
    expect(log).toEqual(['fio:1', 'fio:3']);
    pool.terminate();
  });

  it('fails only the crashed worker’s run, then restarts that worker', async () => {
    const made = [0, 0];
    const pool = new EnginePool((i) => {
      made[i]!++;
      const w = fakeWorker(bridges[i]!);
      if (i === 1 && made[1] === 1) w.postMessage = () => setTimeout(() => w.onerror?.({ message: 'boom' }), 0);
      return w;
    }, 2);
    const spec = (seed: number): RunSpec => ({ experiment: 'fio', variant: 'base', params: { ios: '2000' }, seed });
    const a = pool.run(spec(1));
    const b = pool.run(spec(2)); // worker 1: crashes
    await expect(b.promise).rejects.toMatchObject({ codeName: 'WORKER_CRASHED' });
    expect((await a.promise).metrics.iops).toBeGreaterThan(0);
    const c = pool.run(spec(3));
    const d = pool.run(spec(4));
    expect((await c.promise).metrics.iops).toBeGreaterThan(0);
    expect((await d.promise).metrics.iops).toBeGreaterThan(0);
    expect(made).toEqual([1, 2]);
    pool.terminate();
  });
});
