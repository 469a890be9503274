/*
 * worker.ts - the engine's Web Worker: instantiates the WASM module the
 * page compiled once (engine.ts posts it as the worker's first message;
 * with none, the worker fetches and compiles the file itself) and hands
 * each request to workerCore's switch. The page never runs the engine on
 * its own thread.
 */
/// <reference lib="webworker" />
import createLabModule from '../../build/wasm-web/lab.mjs';
import wasmUrl from '../../build/wasm-web/lab.wasm?url';
import { Bridge, type LabFactory } from './bridge';
import { createWorkerCore } from './workerCore';
import { isModuleMessage, type WorkerRequest, type WorkerResponse, type ModuleMessage } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

let gotModule!: (m: WebAssembly.Module | null) => void;
const compiled = new Promise<WebAssembly.Module | null>((resolve) => (gotModule = resolve));

/** The page's compiled module, else the file's bytes, instantiated. */
async function loadBridge(): Promise<Bridge> {
  const mod = await compiled;
  if (mod) return Bridge.fromModule(createLabModule as unknown as LabFactory, mod);
  const res = await fetch(wasmUrl);
  if (!res.ok) throw new Error(`could not load the engine (${res.status} ${res.statusText})`);
  return Bridge.create(createLabModule as unknown as LabFactory, await res.arrayBuffer());
}

const handle = createWorkerCore(loadBridge, (msg: WorkerResponse) => self.postMessage(msg), { eager: true });
self.onmessage = (ev: MessageEvent<WorkerRequest | ModuleMessage>) => {
  const msg = ev.data;
  if (isModuleMessage(msg)) gotModule(msg.module);
  else void handle(msg);
};
