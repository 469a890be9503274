/*
 * sandboxSession.test.ts - the sandbox's open runs on the WASM engine: a
 * script given one command at a time has the same records and the same
 * recording (every column) as the whole script at once, and a refused
 * command leaves the run as it was.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from './bridge';
import { loadNodeBridge } from './node';
import { SandboxSessions } from './sandboxSession';
import { appendTrace, extendsTrace } from '../model/sandboxTrace';
import { Replay } from '../model/replay';
import type { RunResult } from './types';

let b: Bridge;
beforeAll(async () => {
  b = await loadNodeBridge();
});

const RECORD = { fromNs: 0, maxEvents: 200_000, only: ['tree', 'root', 'blk', 'link', 'unlink', 'cow', 'split', 'free', 'commit', 'op:mkdir', 'op:touch', 'op:fsync', 'op:sync'] };
const SCRIPT = ['mkdir /d', 'touch /d/f', 'pwrite /d/f 0 64k', 'fsync', 'touch -n 50 /d/g', 'sync', 'rm /d/g3'];

function columns(r: RunResult): unknown {
  const t = r.recording!;
  return { n: t.n, t: [...t.t], tmax: [...t.tmax], kind: [...t.kind], task: [...t.task], off: [...t.off], args: [...t.args], kinds: t.kinds, tasks: t.tasks, complete: t.complete };
}

describe('sandbox sessions', () => {
  it('one command at a time gives what the whole script gives', () => {
    const whole = new SandboxSessions(b);
    const w = whole.start('after', 'after', {}, SCRIPT.join('; '), RECORD);
    whole.close();
    for (const cut of [1, 3, 6]) {
      const s = new SandboxSessions(b);
      let r = s.start('after', 'after', {}, SCRIPT.slice(0, cut).join('; '), RECORD);
      for (const c of SCRIPT.slice(cut)) {
        const had = r.recording!;
        r = s.append('after', c);
        // only the new command's events cross: added to those held
        expect(r.recording!.n).toBeLessThan(w.recording!.n);
        r.recording = appendTrace(had, r.recording!);
        expect(extendsTrace(r.recording)).toBe(had);
      }
      expect(r.details).toEqual(w.details);
      expect(r.metrics).toEqual(w.metrics);
      expect(columns(r)).toEqual(columns(w));
      s.close();
    }
  });

  it('a replay goes on into the longer recording and finds what a fresh one finds', () => {
    const s = new SandboxSessions(b);
    const r0 = s.start('after', 'after', {}, SCRIPT.slice(0, 5).join('; '), RECORD);
    const rp = new Replay(r0.recording!);
    rp.stateAt(r0.recording!.n);
    const r1 = s.append('after', SCRIPT.slice(5).join('; '));
    const longer = appendTrace(r0.recording!, r1.recording!);
    const went = rp.extendedTo(longer).stateAt(longer.n);
    const fresh = new Replay(longer).stateAt(longer.n);
    expect(went.pos).toBe(fresh.pos);
    const blocks = (st: typeof went): string => JSON.stringify([...st.blocks.entries()].sort((x, y) => x[0] - y[0]));
    expect(blocks(went)).toEqual(blocks(fresh));
    expect(JSON.stringify([...went.trees.values()])).toEqual(JSON.stringify([...fresh.trees.values()]));
    s.close();
  });

  it('a refused command changes nothing and names its line in the whole script', () => {
    const s = new SandboxSessions(b);
    const r0 = s.start('before', 'before', {}, 'mkdir /d; touch /d/f', RECORD);
    expect(() => s.append('before', 'rm /d')).toThrow('line 3: rm /d: directory not empty');
    expect(s.open).toEqual(['before']);
    const r1 = s.append('before', 'rm /d/f');
    expect((r1.details as { commands: unknown[] }).commands).toHaveLength(3);
    expect((r1.details as { commands: unknown[] }).commands.slice(0, 2)).toEqual((r0.details as { commands: unknown[] }).commands);
    s.close();
    expect(s.open).toEqual([]);
  });
});
