/*
 * sandboxWorker.ts - the sandbox page's own engine worker: it holds the
 * script's runs open between commands (sandboxSession.ts), which the
 * pool's workers, one run per request, do not. Messages: the compiled
 * module first (as worker.ts gets it), then requests answered by id.
 */
/// <reference lib="webworker" />
import createLabModule from '../../build/wasm-web/lab.mjs';
import wasmUrl from '../../build/wasm-web/lab.wasm?url';
import { Bridge, type LabFactory } from './bridge';
import { isModuleMessage, type ModuleMessage } from './protocol';
import { SandboxSessions, type Side } from './sandboxSession';
import { LabError, type LabErrorInfo, type RecordSpec, type RunResult, type Variant } from './types';

declare const self: DedicatedWorkerGlobalScope;

export type SandboxRequest =
  | { id: number; op: 'start'; side: Side; variant: Variant; params: Record<string, string>; script: string; record?: RecordSpec }
  | { id: number; op: 'append'; side: Side; text: string }
  | { id: number; op: 'close' };

export type SandboxResponse = { id: number; ok: true; result?: RunResult } | { id: number; ok: false; error: LabErrorInfo; lost: boolean };

let gotModule!: (m: WebAssembly.Module | null) => void;
const compiled = new Promise<WebAssembly.Module | null>((resolve) => (gotModule = resolve));
let sessions: Promise<SandboxSessions> | null = null;

async function load(): Promise<SandboxSessions> {
  const mod = await compiled;
  if (mod) return new SandboxSessions(await Bridge.fromModule(createLabModule as unknown as LabFactory, mod));
  const res = await fetch(wasmUrl);
  if (!res.ok) throw new Error(`could not load the engine (${res.status} ${res.statusText})`);
  return new SandboxSessions(await Bridge.create(createLabModule as unknown as LabFactory, await res.arrayBuffer()));
}

async function handle(req: SandboxRequest): Promise<SandboxResponse> {
  let s: SandboxSessions | null = null;
  try {
    s = await (sessions ??= load());
    if (req.op === 'start') return { id: req.id, ok: true, result: s.start(req.side, req.variant, req.params, req.script, req.record) };
    if (req.op === 'append') return { id: req.id, ok: true, result: s.append(req.side, req.text) };
    s.close();
    return { id: req.id, ok: true };
  } catch (e) {
    // anything but the engine's refusal is a trap in the module: a new one, the runs gone
    const trap = !(e instanceof LabError);
    if (trap) sessions = null;
    // a refused command leaves the run open; a failed one closes it
    const lost = trap || !s || (req.op !== 'close' && !s.open.includes(req.side));
    return { id: req.id, ok: false, error: LabError.from(e).toInfo(), lost };
  }
}

self.onmessage = (ev: MessageEvent<SandboxRequest | ModuleMessage>) => {
  const msg = ev.data;
  if (isModuleMessage(msg)) gotModule(msg.module);
  else void handle(msg).then((r) => self.postMessage(r));
};
