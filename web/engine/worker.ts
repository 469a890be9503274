/*
 * worker.ts - the engine's Web Worker: loads the WASM build once and hands
 * each message to workerCore's switch. The page never runs the engine on its
 * own thread.
 */
/// <reference lib="webworker" />
import createLabModule from '../../build/wasm/lab.mjs';
import wasmUrl from '../../build/wasm/lab.wasm?url';
import { Bridge, type LabFactory } from './bridge';
import { createWorkerCore } from './workerCore';
import type { WorkerRequest, WorkerResponse } from './protocol';

declare const self: DedicatedWorkerGlobalScope;

/** Fetch the .wasm bytes (same origin) and instantiate the engine. */
async function loadBridge(): Promise<Bridge> {
  const res = await fetch(wasmUrl);
  if (!res.ok) throw new Error(`could not load the engine (${res.status} ${res.statusText})`);
  return Bridge.create(createLabModule as unknown as LabFactory, await res.arrayBuffer());
}

const handle = createWorkerCore(loadBridge, (msg: WorkerResponse) => self.postMessage(msg));
self.onmessage = (ev: MessageEvent<WorkerRequest>) => {
  void handle(ev.data);
};
