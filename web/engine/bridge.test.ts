/*
 * The bridge against the real WASM build, under Node: the registry, a run
 * stepped in slices, determinism, bad parameters as typed errors, strerror,
 * and the worker core + client pair wired together without a real Worker.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from './bridge';
import { EngineClient, type WorkerLike } from './client';
import { loadNodeBridge } from './node';
import { MsgType, type WorkerRequest, type WorkerResponse } from './protocol';
import { LabError, labCodeName, labCodesObject, labError } from './types';
import { createWorkerCore } from './workerCore';
import { defaultParams, validateAll } from '../model/params';

let b: Bridge;
beforeAll(async () => {
  b = await loadNodeBridge();
});

const fio = (params: Record<string, string> = {}, seed = 1) => ({ experiment: 'fio', variant: 'base' as const, params: { ios: '3000', ...params }, seed });

describe('bridge (real WASM engine)', () => {
  it('lists experiments with typed params, metrics and published rows', () => {
    const xs = b.list();
    const f = xs.find((e) => e.name === 'fio');
    expect(f).toBeDefined();
    expect(f!.variants).toEqual(['base']);
    expect(f!.params.map((p) => p.name)).toEqual(expect.arrayContaining(['device', 'rw', 'bs', 'iodepth', 'numjobs', 'ios']));
    const dev = f!.params.find((p) => p.name === 'device')!;
    expect(dev.type).toBe('enum');
    expect(dev.values).toEqual(expect.arrayContaining(['nvme-dc', 'consumer-ssd']));
    expect(f!.metrics).toEqual(expect.arrayContaining(['iops', 'bw_mib_s', 'clat_avg_us', 'clat_p50_us', 'clat_p99_us']));
    expect(f!.metricInfo.length).toBe(f!.metrics.length);
    for (const row of f!.published) {
      expect(typeof row.value).toBe('number');
      expect(row.source.length).toBeGreaterThan(0);
    }
  });

  it('opens, steps in slices to the end and returns metrics and details', () => {
    const h = b.open(fio({ rw: 'randwrite' }));
    let slices = 0;
    let last = -1;
    while (!b.step(h, 500)) {
      slices++;
      const p = b.progress(h);
      expect(p).toBeGreaterThanOrEqual(last);
      expect(p).toBeLessThanOrEqual(1);
      last = p;
    }
    expect(slices).toBeGreaterThan(2); // 500-event slices cannot finish 3000 IOs at once
    const r = b.result(h);
    b.close(h);
    expect(r.metrics.iops).toBeGreaterThan(0);
    expect(r.metrics.clat_p99_us).toBeGreaterThanOrEqual(r.metrics.clat_p50_us!);
    expect(r.events).toBeGreaterThan(3000);
    expect(r.simNs).toBeGreaterThan(0);
    expect(Array.isArray(r.details.cdf)).toBe(true);
  });

  it('gives the same metrics for the same seed, different for another', () => {
    const a = b.run(fio({}, 7)).metrics;
    const a2 = b.run(fio({}, 7)).metrics;
    const c = b.run(fio({}, 8)).metrics;
    expect(a2).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('passes seeds above 2^32 through both words', () => {
    const lo = b.run(fio({}, 5)).metrics;
    const hi = b.run(fio({}, 5 + 2 ** 32)).metrics;
    expect(hi).not.toEqual(lo);
  });

  it('turns bad parameters into LabErrors with the engine message', () => {
    const bad = (params: Record<string, string>, experiment = 'fio') => {
      try {
        b.open({ ...fio(params), experiment });
      } catch (e) {
        return e as LabError;
      }
      throw new Error('open did not fail');
    };
    const e1 = bad({ bs: '0' });
    expect(e1).toBeInstanceOf(LabError);
    expect(e1.code).toBeLessThan(0);
    expect(['LAB_ERANGE', 'LAB_EINVAL']).toContain(e1.codeName);
    expect(e1.message).toMatch(/bs/);
    expect(bad({ device: 'floppy' }).message).toMatch(/device|floppy/);
    expect(bad({ nosuch: '1' }).codeName).toMatch(/LAB_E(NOENT|INVAL)/);
    expect(bad({}, 'no-such-experiment').codeName).toBe('LAB_ENOENT');
    expect(() => b.open(fio({}, -1))).toThrow(LabError);
  });

  it("every experiment's defaults pass the form's validation and open in the engine", () => {
    for (const e of b.list()) {
      const values = defaultParams(e.params);
      expect(validateAll(e.params, values), e.name).toEqual({});
      for (const variant of e.variants) b.close(b.open({ experiment: e.name, variant, params: values, seed: 1 }));
    }
  });

  it('estimates the work of a setting without running it (lab_estimate)', () => {
    const t = b.list().find((e) => e.name === 'torture')!;
    // every experiment's unit: the events its run takes (test_estimate.c
    // keeps the estimate within x3 of them): ~1.02 per file operation
    expect(t.workUnit).toBe('simulated events');
    expect(b.estimate('torture', { ops: '200000' })).toEqual({ work: 204004, defaultWork: 20404 });
    expect(b.estimate('torture', {})).toEqual({ work: 20404, defaultWork: 20404 });
    expect(() => b.estimate('torture', { ops: '0' })).toThrow(/ops/);
    // a limit between parameters is refused by the estimate, as by the open
    expect(() => b.estimate('receive', { file_bytes: '1048576' })).toThrow(/^file_bytes/);
    expect(() => b.estimate('nope', {})).toThrow(LabError);
  });

  it('names every error code', () => {
    expect(b.strerror(-1)).toMatch(/LAB_EINVAL/);
    expect(b.strerror(-4)).toMatch(/LAB_ERANGE/);
    expect(b.strerror(0).length).toBeGreaterThan(0);
    expect(b.strerror(-999).length).toBeGreaterThan(0);
  });

  it("takes the error codes from the engine's list, never from a copy", () => {
    b.list();
    const codes = labCodesObject();
    expect(Object.keys(codes).length).toBeGreaterThanOrEqual(10);
    // each name is the one lab_strerror gives its code
    for (const [name, code] of Object.entries(codes)) {
      expect(b.strerror(code).startsWith(`${name}:`)).toBe(true);
      expect(labCodeName(code)).toBe(name);
    }
    expect(labError('LAB_ECANCELED', 'x').code).toBe(codes.LAB_ECANCELED);
  });

  it("lists each experiment's patches and kernels from the engine's patch table", () => {
    const sc = b.list().find((e) => e.name === 'sparse-cp')!;
    expect(sc.kernels).toEqual({ before: '6.1', after: '6.2' });
    expect(sc.patches!.map((p) => p.series)).toEqual(['1/9', '2/9', '3/9', '4/9', '5/9', '6/9', '7/9', '8/9', '9/9']);
    // every switch is a bool parameter of the experiment
    for (const p of sc.patches!.filter((q) => q.switch)) expect(sc.params.find((q) => q.name === p.switch)?.type).toBe('bool');
  });
});

/** A fake Worker running workerCore in-process (messages cross as structured clones). */
function fakeWorker(bridge: Bridge): WorkerLike {
  const w: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(msg: WorkerRequest) {
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

describe('worker core + client', () => {
  it('lists, runs with progress, and reports errors by request', async () => {
    const c = new EngineClient(() => fakeWorker(b));
    expect((await c.list()).some((e) => e.name === 'fio')).toBe(true);
    const progress: number[] = [];
    const r = await c.run(fio({ ios: '20000' }), (p) => progress.push(p)).promise;
    expect(r.metrics.iops).toBeGreaterThan(0);
    expect(progress.length).toBeGreaterThan(0);
    await expect(c.run(fio({ bs: '7' })).promise).rejects.toMatchObject({ name: 'LabError', codeName: expect.stringMatching(/LAB_E/) });
    expect(await c.estimate('fio', { ios: '800000' })).toEqual({ work: 1600008, defaultWork: 400008 });
    await expect(c.estimate('fio', { ios: 'x' })).rejects.toMatchObject({ codeName: 'LAB_EINVAL' });
  });

  it('collects requested snapshots and the trace before closing the run', async (ctx) => {
    if (!b.list().some((e) => e.name === 'torture')) return ctx.skip();
    const c = new EngineClient(() => fakeWorker(b));
    const r = await c.run({ experiment: 'torture', variant: 'base', params: { ops: '300' }, seed: 1 }, undefined, { snapshots: ['tree:fs', 'no-such-structure'], trace: true }).promise;
    expect(r.snapshots?.['tree:fs']).toBeTypeOf('object');
    expect(r.snapshots?.['tree:fs']).not.toHaveProperty('error');
    expect(r.snapshots?.['no-such-structure']).toMatchObject({ error: expect.any(String) });
    expect(r.trace).toMatchObject({ sim_ns: expect.any(Number) });
    const plain = await c.run({ experiment: 'torture', variant: 'base', params: { ops: '300' }, seed: 1 }).promise;
    expect(plain.snapshots).toBeUndefined();
    expect(plain.metrics).toEqual(r.metrics);
  });

  it('cancels a long run between slices', async () => {
    const c = new EngineClient(() => fakeWorker(b));
    const t = c.run(fio({ ios: '2000000' }));
    setTimeout(() => t.cancel(), 30);
    await expect(t.promise).rejects.toMatchObject({ codeName: 'LAB_ECANCELED' });
    // the worker still answers afterwards
    expect((await c.run(fio()).promise).metrics.iops).toBeGreaterThan(0);
  });

  it('fails pending requests when the worker dies, then restarts it', async () => {
    let made = 0;
    const c = new EngineClient(() => {
      made++;
      const w = fakeWorker(b);
      if (made === 1) w.postMessage = () => setTimeout(() => w.onerror?.({ message: 'boom' }), 0);
      return w;
    });
    await expect(c.list()).rejects.toMatchObject({ codeName: 'WORKER_CRASHED', message: expect.stringMatching(/boom/) });
    expect((await c.list()).length).toBeGreaterThan(0);
    expect(made).toBe(2);
  });
});

describe('worker core recovery', () => {
  it('reloads the engine after a trap inside the module', async () => {
    let loads = 0;
    const posted: WorkerResponse[] = [];
    const core = createWorkerCore(async () => {
      loads++;
      if (loads === 1) {
        // a bridge whose module traps on open (as an engine assert would)
        return { list: () => b.list(), open: () => { throw new WebAssembly.RuntimeError('unreachable'); } } as unknown as Bridge;
      }
      return b;
    }, (m) => posted.push(m));
    await core({ id: 1, type: MsgType.Run, spec: fio() });
    expect(posted.at(-1)).toMatchObject({ id: 1, type: MsgType.Error, error: { codeName: 'LAB_EENGINE', message: 'unreachable' } });
    await core({ id: 2, type: MsgType.Run, spec: fio() });
    expect(posted.at(-1)).toMatchObject({ id: 2, type: MsgType.RunDone });
    expect(loads).toBe(2);
  });
});
