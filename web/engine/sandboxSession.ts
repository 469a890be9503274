/*
 * sandboxSession.ts - the sandbox's runs kept open between commands (one
 * per kernel), so that a new command runs alone (lab_append) instead of
 * the whole script again: the engine stops after a script's last command
 * with its next step queued, and an appended command goes on from there
 * exactly as one run of the longer script would (test_sandbox_append.c
 * checks the result and the recording byte for byte). The recording goes
 * on with each command: only its new events are read and decoded, and the
 * page adds them to the ones it has (model/sandboxTrace.ts).
 *
 * Worker-independent (Node tests run it on the Node bridge); the sandbox
 * worker (sandboxWorker.ts) wraps it in messages.
 */
import type { Bridge, RunHandle } from './bridge';
import { decodeTrace, type RawTrace } from '../model/trace';
import type { RecordSpec, RunResult, Variant } from './types';

/** Which of the page's two runs: the left (older) or the right kernel. */
export type Side = 'before' | 'after';

interface Open {
  h: RunHandle;
  /** the recording's last event read (lab_trace_json's "next") */
  next: number;
}

export class SandboxSessions {
  private readonly runs = new Map<Side, Open>();

  constructor(private readonly b: Bridge) {}

  /** The sides held open. */
  get open(): Side[] {
    return [...this.runs.keys()];
  }

  /** A fresh run of `script` for one side (a variant and its parameters:
   * the page runs `after` on both sides, each with its own kernel), kept
   * open for append(). */
  start(side: Side, variant: Variant, params: Record<string, string>, script: string, record?: RecordSpec): RunResult {
    this.close(side);
    const t0 = performance.now();
    const h = this.b.open({ experiment: 'sandbox', variant, params: { ...params, script }, seed: 1 });
    try {
      if (record) this.b.recordSpec(h, record);
      const o: Open = { h, next: 0 };
      const res = this.finish(o, t0);
      this.runs.set(side, o);
      return res;
    } catch (e) {
      this.b.close(h);
      throw e;
    }
  }

  /** More commands for an open run. Refused (a LabError with the
   * engine's line): the run is as it was. A run that fails while running
   * them is closed (start again). */
  append(side: Side, text: string): RunResult {
    const o = this.runs.get(side);
    if (!o) throw new Error(`no open sandbox run for ${side}`);
    const t0 = performance.now();
    this.b.append(o.h, text);
    try {
      return this.finish(o, t0);
    } catch (e) {
      this.close(side);
      throw e;
    }
  }

  close(side?: Side): void {
    for (const v of side ? [side] : [...this.runs.keys()]) {
      const o = this.runs.get(v);
      if (o) this.b.close(o.h);
      this.runs.delete(v);
    }
  }

  /** Step to the end (a sandbox script is bounded: classroom sizes), then
   * the result with the recording's new events only (start: all of it;
   * append: those of the new commands, for model/sandboxTrace's
   * appendTrace: what crosses to the page stays small). */
  private finish(o: Open, t0: number): RunResult {
    while (!this.b.step(o.h, 1_000_000));
    const res = this.b.result(o.h, performance.now() - t0);
    if (this.b.recordState(o.h) > 0) {
      const doc = this.b.trace(o.h, o.next) as { trace?: RawTrace & { next?: number } };
      if (doc.trace) {
        res.recording = decodeTrace(doc.trace);
        o.next = doc.trace.next ?? o.next + res.recording.n;
      }
    }
    res.wallMs = performance.now() - t0;
    return res;
  }
}
