/*
 * sandboxEngine.ts - the page's handle on the sandbox worker
 * (engine/sandboxWorker.ts): started on the sandbox page's first run with
 * the engine the page compiled once, requests answered in order by id.
 */
import type { SandboxRequest, SandboxResponse } from '../engine/sandboxWorker';
import { LabError, type RecordSpec, type RunResult, type Variant } from '../engine/types';
import type { ModuleMessage } from '../engine/protocol';
import type { Side } from '../engine/sandboxSession';
import { compiledEngine } from './engine';

type Pending = { ok: (r: SandboxResponse) => void };

let worker: Worker | null = null;
let nextId = 1;
const pending = new Map<number, Pending>();

function get(): Worker {
  if (worker) return worker;
  const w = new Worker(new URL('../engine/sandboxWorker.ts', import.meta.url), { type: 'module', name: 'lab-sandbox' });
  void compiledEngine.then((module) => w.postMessage({ type: 'module', module } satisfies ModuleMessage));
  w.onmessage = (ev: MessageEvent<SandboxResponse>) => {
    const p = pending.get(ev.data.id);
    pending.delete(ev.data.id);
    p?.ok(ev.data);
  };
  w.onerror = () => {
    // the worker itself died: every request fails, the next starts a new one
    for (const [id, p] of pending) p.ok({ id, ok: false, lost: true, error: { code: -100, codeName: 'LAB_EENGINE', message: 'The sandbox engine stopped; run again.' } });
    pending.clear();
    worker = null;
  };
  return (worker = w);
}

type Req = SandboxRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

function ask(req: Req): Promise<SandboxResponse> {
  const id = nextId++;
  return new Promise((ok) => {
    pending.set(id, { ok });
    get().postMessage({ ...req, id } as SandboxRequest);
  });
}

/** An engine refusal or failure; `lost`: the worker's runs are gone. */
export class SandboxFailure extends LabError {
  constructor(
    info: ConstructorParameters<typeof LabError>[0],
    readonly lost: boolean,
  ) {
    super(info);
  }
}

async function result(p: Promise<SandboxResponse>): Promise<RunResult> {
  const r = await p;
  if (!r.ok) throw new SandboxFailure(r.error, r.lost);
  return r.result!;
}

export const sandboxEngine = {
  /** A fresh run of the script for one side of the page, kept open. */
  start: (side: Side, variant: Variant, params: Record<string, string>, script: string, record?: RecordSpec): Promise<RunResult> =>
    result(ask({ op: 'start', side, variant, params, script, record })),
  /** More commands for the open run of that side. */
  append: (side: Side, text: string): Promise<RunResult> => result(ask({ op: 'append', side, text })),
  close: (): Promise<SandboxResponse> => ask({ op: 'close' }),
};
