/*
 * engine.ts - the page's engine: a pool of engine workers (web/engine/pool.ts)
 * sized for this machine. The WASM file is fetched and compiled here once,
 * as soon as the app's code runs (streaming compilation: it compiles while
 * it downloads), and the compiled module is handed to every worker, which
 * then only instantiates it.
 */
import wasmUrl from '../../build/wasm-web/lab.wasm?url';
import type { WorkerLike } from '../engine/client';
import { EnginePool, poolSize } from '../engine/pool';
import type { ModuleMessage } from '../engine/protocol';
import { testHook } from './testHook';

/** Compile the engine once; null if this browser cannot (each worker then loads it itself). */
function compileEngine(): Promise<WebAssembly.Module | null> {
  if (typeof WebAssembly === 'undefined' || typeof fetch === 'undefined') return Promise.resolve(null);
  const viaBytes = (): Promise<WebAssembly.Module> => fetch(wasmUrl).then((r) => r.arrayBuffer()).then((b) => WebAssembly.compile(b));
  // compileStreaming needs the server's application/wasm type; without it, the bytes
  const go = typeof WebAssembly.compileStreaming === 'function' ? WebAssembly.compileStreaming(fetch(wasmUrl)).catch(viaBytes) : viaBytes();
  return go.catch(() => null);
}

export const compiledEngine = compileEngine();

const nav = typeof navigator !== 'undefined' ? (navigator as Navigator & { deviceMemory?: number }) : undefined;

export const engine = new EnginePool((i) => {
  const w = new Worker(new URL('../engine/worker.ts', import.meta.url), { type: 'module', name: `lab-engine-${i}` });
  void compiledEngine.then((module) => w.postMessage({ type: 'module', module } satisfies ModuleMessage));
  return w as unknown as WorkerLike;
}, poolSize(nav?.hardwareConcurrency, nav?.deviceMemory));

testHook().workers = engine.size;

// Before React renders anything: the workers start and instantiate the
// module as it compiles, and the registry is asked for (App's list() gets
// this answer), so a page's first run finds its engines ready.
if (typeof Worker !== 'undefined') {
  engine.warm(Math.min(engine.size, 2));
  engine.list().catch(() => {});
}
