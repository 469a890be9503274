/*
 * SandboxPage.tsx - #/sandbox: the student's own commands on a fresh file
 * system (the engine's `sandbox` experiment, exp_sandbox.c). A command box
 * with history and completion; the script so far, each command with what
 * it changed; after the command shown, the trees it touched, replayed from
 * the run's recording (views/sandbox/SandboxTrees over the replay's
 * TreeView). Step back and forth through the commands (the ◀ ▶ buttons,
 * or ← → outside the box); "compare kernels" runs the script on two
 * kernels (6.1 and 6.2 unless the settings say others; the right one with
 * the patch switches set there) and marks the first command where they
 * differ. The settings are the experiment's parameters. The script, the
 * command shown and the comparison are in the URL.
 *
 * A new command runs alone on the runs the sandbox worker keeps open
 * (lab_append: the same result as the whole script run afresh); the
 * engine refuses a bad line with one message, and the script before it
 * stays as it was.
 */
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { RECORD_EVENTS, type RunResult, type Variant } from '../engine/types';
import { fmtNum } from '../model/format';
import {
  COMMAND_HELP,
  complete,
  EXAMPLE,
  firstDifference,
  MAX_COMMANDS,
  SANDBOX_OP_KINDS,
  sandboxDetails,
  scriptParam,
  scriptPaths,
  splitScript,
  treesTouched,
  type SandboxCmd,
  type SandboxDetails,
} from '../model/sandbox';
import { KERNEL_COLOR } from '../views/common';
import { TREE_KINDS } from '../views/replay/pageRecording';
import { SandboxTrees } from '../views/sandbox/SandboxTrees';
import { ErrorBanner } from './ErrorBanner';
import { testHook } from './testHook';
import { appendTrace } from '../model/sandboxTrace';
import type { Side } from '../engine/sandboxSession';
import type { ParamInfo } from '../engine/types';
import { engine } from './engine';
import { SandboxFailure, sandboxEngine } from './sandboxEngine';

interface Props {
  script: string[];
  at?: number;
  compare: boolean;
  params: Record<string, string>;
  onChange: (next: { script: string[]; at?: number; compare: boolean; params?: Record<string, string> }, push: boolean) => void;
}

/** The page's own setting (not the engine's): the kernel of the left side when comparing. */
const VS_KERNEL = 'vs_kernel';
/** What both sides share: the machine and the checker. The left side runs its
 * kernel as it is; the kernel and the switches set here are the right side's. */
const MACHINE = ['device', 'ram_gib', 'fs_gib', 'check'];
const DEFAULT_KERNEL = '6.2';
const DEFAULT_VS = '6.1';

/** The engine's parameters of one side (both run the `after` variant, each with its kernel). */
export function sideParams(params: Record<string, string>, side: Side): Record<string, string> {
  const engine = Object.fromEntries(Object.entries(params).filter(([k]) => k !== VS_KERNEL));
  if (side === 'after') return engine;
  const left = Object.fromEntries(Object.entries(engine).filter(([k]) => MACHINE.includes(k)));
  return { ...left, kernel: params[VS_KERNEL] ?? DEFAULT_VS };
}

/** A side's name: its kernel, and whether switches change it. */
function sideName(params: Record<string, string>, side: Side): string {
  if (side === 'before') return `kernel ${params[VS_KERNEL] ?? DEFAULT_VS}`;
  const switched = Object.keys(params).some((k) => k !== VS_KERNEL && k !== 'kernel' && !MACHINE.includes(k) && params[k] !== 'kernel');
  return `kernel ${params.kernel ?? DEFAULT_KERNEL}${switched ? ' with switches' : ''}`;
}


/** The trees and the commands only: a smaller recording, a quicker redraw. */
const RECORD = { fromNs: 0, maxEvents: RECORD_EVENTS, only: [...TREE_KINDS, ...SANDBOX_OP_KINDS] };

interface Shown {
  script: string[];
  compare: boolean;
  /** the parameters it ran with (a change of them runs the script again) */
  params: Record<string, string>;
  results: Partial<Record<Variant, RunResult>>;
}

function summary(c: SandboxCmd | undefined): string {
  if (!c || !c.ran) return 'not run';
  const parts: string[] = [];
  // the log's "COWs" are the blocks its syncs wrote: said as log blocks
  const cows = Object.entries(c.cows ?? {}).reduce((a, [k, v]) => a + (k === 'log' ? 0 : v), 0);
  const items = c.items ? Object.entries(c.items).filter(([, v]) => v !== 0) : [];
  const sgn = (v: number): string => `${v > 0 ? '+' : '−'}${Math.abs(v)}`;
  if (cows) parts.push(`${cows} COW`);
  if (items.length) parts.push(items.map(([k, v]) => `${k} ${sgn(v)} item${Math.abs(v) === 1 ? '' : 's'}`).join(', '));
  const blocks = c.blocks ? Object.entries(c.blocks).filter(([, v]) => v !== 0) : [];
  if (blocks.length) parts.push(blocks.map(([k, v]) => `${k} ${sgn(v)} block${Math.abs(v) === 1 ? '' : 's'}`).join(', '));
  if (c.pages_written) parts.push(`${c.pages_written} pages written`);
  if (c.commits) parts.push('commit');
  if (c.log_commits) parts.push('log sync');
  if (c.result !== undefined) parts.push(`→ ${c.result < 0 ? 'ENXIO' : fmtNum(c.result)}`);
  return parts.join(' · ') || 'no tree change';
}

export function SandboxPage({ script, at, compare, params, onChange }: Props) {
  const [shown, setShown] = useState<Shown | null>(null);
  const [busy, setBusy] = useState(false);
  /** what the sandbox worker holds open: the script and its kernels */
  const session = useRef<{ key: string; cmds: string[]; results: Partial<Record<Variant, RunResult>> } | null>(null);
  /** the latest request: an older one's answer is not shown */
  const seq = useRef(0);
  const [error, setError] = useState<string | null>(null);
  const [typed, setTyped] = useState('');
  const [hist, setHist] = useState<number | null>(null);
  const [width, setWidth] = useState(800);
  const treesRef = useRef<HTMLDivElement>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  /** when the last results arrived: their redraw's time is measured */
  const drawFrom = useRef<number | null>(null);
  const variants: Variant[] = compare ? ['before', 'after'] : ['after'];

  /** Run a script; the results replace the shown ones only if it ran.
   * A script that extends the one the worker holds open (same kernels and
   * parameters) runs only its new commands (lab_append); any other is
   * run afresh and kept open in turn. */
  const runScript = useCallback(
    async (cmds: string[], cmp: boolean): Promise<boolean> => {
      const vs: Side[] = cmp ? ['before', 'after'] : ['after'];
      const key = JSON.stringify([params, vs]);
      const my = ++seq.current;
      const t0 = performance.now();
      setBusy(true);
      const s = session.current;
      const extend = !!s && s.key === key && cmds.length > s.cmds.length && s.cmds.every((c, i) => c === cmds[i]);
      let changed = false;
      try {
        const res: Partial<Record<Variant, RunResult>> = {};
        if (extend) {
          const text = scriptParam(cmds.slice(s!.cmds.length));
          for (const v of vs) {
            const r = await sandboxEngine.append(v, text);
            changed = true;
            // the worker sends the new commands' events: added to those held
            const had = s!.results[v]?.recording;
            if (r.recording && had) r.recording = appendTrace(had, r.recording);
            res[v] = r;
          }
        } else {
          session.current = null;
          changed = true;
          for (const v of vs) res[v] = await sandboxEngine.start(v, 'after', sideParams(params, v), scriptParam(cmds), RECORD);
        }
        session.current = { key, cmds, results: res };
        if (my !== seq.current) return false;
        drawFrom.current = performance.now();
        setShown({ script: cmds, compare: cmp, params, results: res });
        setError(null);
        testHook().sandboxRunMs = drawFrom.current - t0;
        return true;
      } catch (e) {
        // a refusal of the first kernel's append left both runs as they were
        if (changed || (e instanceof SandboxFailure && e.lost)) session.current = null;
        if (my === seq.current) setError(e instanceof Error ? e.message : String(e));
        return false;
      } finally {
        if (my === seq.current) setBusy(false);
      }
    },
    [params],
  );

  // the URL's script: run it when it is not what is shown
  const key = JSON.stringify([script, compare, params]);
  const ranKey = useRef<string | null>(null);
  useEffect(() => {
    if (ranKey.current === key) return;
    ranKey.current = key;
    if (shown && JSON.stringify([shown.script, shown.compare, shown.params]) === key) return;
    if (script.length === 0) {
      setShown(null);
      return;
    }
    void runScript(script, compare);
  }, [key, script, compare, params, shown, runScript]);

  // the redraw's time: results in, to the next frame after React drew them
  useEffect(() => {
    const from = drawFrom.current;
    if (from === null) return;
    drawFrom.current = null;
    requestAnimationFrame(() => {
      testHook().sandboxDrawMs = performance.now() - from;
    });
  }, [shown]);

  // the trees' width follows the column
  useEffect(() => {
    const el = treesRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);

  const details = useMemo(() => {
    const out: Partial<Record<Variant, SandboxDetails>> = {};
    for (const v of variants) {
      const d = sandboxDetails(shown?.results[v]?.details);
      if (d) out[v] = d;
    }
    return out;
  }, [shown, variants.join()]); // eslint-disable-line react-hooks/exhaustive-deps

  const cmds = shown?.script ?? [];
  const n = cmds.length;
  const cur = n ? Math.min(at ?? n - 1, n - 1) : 0;
  const main = details.after;
  const diff = compare && details.before && details.after ? firstDifference(details.before.commands, details.after.commands) : null;

  const submit = async (): Promise<void> => {
    const add = splitScript(typed);
    if (!add.length) return;
    if (cmds.length + add.length > MAX_COMMANDS) {
      setError(`A script holds at most ${MAX_COMMANDS} commands.`);
      return;
    }
    const next = [...cmds, ...add];
    const ok = await runScript(next, compare);
    if (ok) {
      setTyped('');
      setHist(null);
      ranKey.current = JSON.stringify([next, compare, params]);
      onChange({ script: next, compare }, true);
    }
  };

  const step = (d: 1 | -1): void => {
    if (!n) return;
    const nx = Math.max(0, Math.min(n - 1, cur + d));
    onChange({ script: cmds, compare, at: nx === n - 1 ? undefined : nx }, false);
  };

  // ← / → step outside the command box
  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      const t = e.target as HTMLElement | null;
      if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA')) return;
      if (e.key === 'ArrowLeft') step(-1);
      else if (e.key === 'ArrowRight') step(1);
      else return;
      e.preventDefault();
      e.stopPropagation();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  });

  const onInputKey = (e: React.KeyboardEvent<HTMLInputElement>): void => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void submit();
    } else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      // history: the script's commands, newest first
      if (!cmds.length) return;
      e.preventDefault();
      const h = hist === null ? (e.key === 'ArrowUp' ? cmds.length - 1 : null) : Math.max(0, Math.min(cmds.length, hist + (e.key === 'ArrowUp' ? -1 : 1)));
      if (h === null || h >= cmds.length) {
        setHist(null);
        setTyped('');
      } else {
        setHist(h);
        setTyped(cmds[h]!);
      }
    } else if (e.key === 'Tab') {
      const c = complete(typed, scriptPaths(cmds));
      if (c.length) {
        e.preventDefault();
        setTyped(c[0]! + (c.length === 1 ? ' ' : ''));
      }
    }
  };

  const exportScript = (): void => {
    const blob = new Blob([`# btrfs patch lab sandbox script (lab run sandbox --script FILE)\n${cmds.join('\n')}\n`], { type: 'text/plain' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'sandbox.txt';
    a.click();
    URL.revokeObjectURL(a.href);
  };

  const suggestions = complete(typed, scriptPaths(cmds)).slice(0, 6);
  const curCmd = main?.commands[cur];
  const trees = treesTouched(curCmd).concat(compare && details.before ? treesTouched(details.before.commands[cur]) : []);
  const treeList = [...new Set(trees)];
  const sideWidth = compare ? Math.max(200, Math.floor((width - 16) / 2)) : width;

  return (
    <div className="sandbox-page" data-testid="sandbox-page">
      <header className="sandbox-head">
        <h1>Sandbox</h1>
        <p className="muted">
          Your own commands on a fresh btrfs, simulated: after each one, the trees it changed. Blocks written in the running transaction are filled grey; hover a block for its
          generation and keys.
        </p>
      </header>
      <div className="sandbox-grid">
        <section className="sandbox-left" aria-label="commands">
          <form
            className="sandbox-box"
            onSubmit={(e) => {
              e.preventDefault();
              void submit();
            }}
          >
            <label htmlFor="sandbox-input" className="sandbox-prompt">
              $
            </label>
            <input
              id="sandbox-input"
              ref={inputRef}
              data-testid="sandbox-input"
              value={typed}
              autoComplete="off"
              spellCheck={false}
              placeholder={n ? 'next command' : 'e.g. touch /f'}
              title="Enter runs it; Tab completes commands and paths; ↑ ↓ the script's commands"
              onChange={(e) => {
                setTyped(e.target.value);
                setHist(null);
              }}
              onKeyDown={onInputKey}
              disabled={busy && !shown}
            />
            {/* the experiment pages' green Run, narrower: the command box beside it needs the room */}
            <button type="submit" className="btn btn-run" style={{ minWidth: '5rem' }} data-testid="sandbox-run" disabled={busy}>
              Run
            </button>
          </form>
          {suggestions.length > 0 && typed && (
            <ul className="sandbox-suggest muted" data-testid="sandbox-suggest">
              {suggestions.map((s) => (
                <li key={s}>
                  <button type="button" className="btn-quiet" onClick={() => (setTyped(s + ' '), inputRef.current?.focus())}>
                    {s}
                  </button>
                  {COMMAND_HELP[s.split(' ')[0]!] && s.split(' ').length <= 3 && <span> {COMMAND_HELP[s.split(' ')[0]!]}</span>}
                </li>
              ))}
            </ul>
          )}
          {error && (
            <div data-testid="sandbox-error">
              <ErrorBanner error={error} />
            </div>
          )}
          {busy && <p className="muted" data-testid="sandbox-busy">running {variants.map((v) => sideName(params, v as Side)).join(' and ')}…</p>}
          <div className="sandbox-tools">
            <label>
              <input
                type="checkbox"
                checked={compare}
                data-testid="sandbox-compare"
                onChange={(e) => onChange({ script: cmds.length ? cmds : script, compare: e.target.checked, at }, false)}
              />{' '}
              compare kernels ({params[VS_KERNEL] ?? DEFAULT_VS} · {params.kernel ?? DEFAULT_KERNEL})
            </label>
            <button type="button" className="btn-quiet" onClick={exportScript} disabled={!n}>
              export
            </button>
            <button type="button" className="btn-quiet" onClick={() => onChange({ script: cmds.slice(0, -1), compare }, true)} disabled={!n || busy} data-testid="sandbox-undo">
              undo last
            </button>
            <button type="button" className="btn-quiet" onClick={() => onChange({ script: [], compare }, true)} disabled={!n}>
              clear
            </button>
            {!n && (
              <button type="button" className="btn-quiet" onClick={() => onChange({ script: EXAMPLE, compare }, true)} data-testid="sandbox-example">
                an example
              </button>
            )}
          </div>
          <Settings params={params} compare={compare} busy={busy} onParams={(next) => onChange({ script: cmds.length ? cmds : script, compare, at, params: next }, true)} />
          <ol className="sandbox-script" data-testid="sandbox-script">
            {cmds.map((c, i) => {
              const rec = main?.commands[i];
              const first = diff?.index === i;
              return (
                <li key={i} className={i === cur ? 'sandbox-cur' : undefined} data-testid={`sandbox-cmd-${i}`} data-first-diff={first ? '1' : undefined}>
                  <button type="button" className="sandbox-cmd" onClick={() => onChange({ script: cmds, compare, at: i === n - 1 ? undefined : i }, false)}>
                    <code>{c}</code>
                    <span className="sandbox-sum">{summary(rec)}</span>
                    {first && (
                      <span className="sandbox-first-diff" title={diff!.what.join(', ')}>
                        first difference: {diff!.what.slice(0, 3).join(', ')}
                      </span>
                    )}
                  </button>
                </li>
              );
            })}
          </ol>
          {compare && shown?.compare && !diff && n > 0 && <p className="muted">Both kernels did the same at every command.</p>}
        </section>
        <section className="sandbox-right" aria-label="trees">
          <div className="sandbox-stepper">
            <button type="button" className="btn-quiet" onClick={() => step(-1)} disabled={cur <= 0} data-testid="sandbox-prev" title="previous command (←)">
              ◀
            </button>
            <span data-testid="sandbox-at">
              {n ? (
                <>
                  command {cur + 1} of {n}: <code>{cmds[cur]}</code>
                </>
              ) : (
                'no command yet'
              )}
            </span>
            <button type="button" className="btn-quiet" onClick={() => step(1)} disabled={cur >= n - 1} data-testid="sandbox-next" title="next command (→)">
              ▶
            </button>
          </div>
          {curCmd && curCmd.ran === 1 && <CmdFacts c={curCmd} other={compare ? details.before?.commands[cur] : undefined} names={[sideName(params, 'before'), sideName(params, 'after')]} />}
          {main?.powercut && cur === n - 1 && <Powercut d={main} />}
          <div ref={treesRef} className={compare ? 'sandbox-sides two' : 'sandbox-sides'}>
            {shown &&
              variants.map((v) => {
                const tr = shown.results[v]?.recording;
                if (!tr) return null;
                return (
                  <SandboxTrees
                    key={v}
                    variant={v}
                    label={sideName(params, v as Side)}
                    trace={tr}
                    at={cur}
                    cmd={details[v]?.commands[cur]}
                    trees={treeList}
                    width={sideWidth}
                    differs={diff?.index === cur}
                  />
                );
              })}
          </div>
        </section>
      </div>
    </div>
  );
}

function CmdFacts({ c, other, names }: { c: SandboxCmd; other?: SandboxCmd; names: [string, string] }) {
  const row = (label: string, v: number | undefined, o: number | undefined, unit = '') => (
    <tr key={label}>
      <th scope="row">{label}</th>
      {other && <td style={{ color: KERNEL_COLOR.before }}>{o === undefined ? '–' : `${fmtNum(o)}${unit}`}</td>}
      <td style={{ color: KERNEL_COLOR.after }}>{v === undefined ? '–' : `${fmtNum(v)}${unit}`}</td>
    </tr>
  );
  return (
    <table className="sandbox-facts" data-testid="sandbox-facts">
      {other && (
        <thead>
          <tr>
            <th />
            <th>{names[0]}</th>
            <th>{names[1]}</th>
          </tr>
        </thead>
      )}
      <tbody>
        {row('simulated time', c.ns !== undefined ? c.ns / 1000 : undefined, other?.ns !== undefined ? other.ns / 1000 : undefined, ' µs')}
        {row('transaction', c.transid, other?.transid)}
        {row('commits', c.commits, other?.commits)}
        {row('dirty pages after', c.dirty_pages, other?.dirty_pages)}
        {row('data pages written', c.pages_written, other?.pages_written)}
        {row('log items after', c.log_items, other?.log_items)}
        {row('log syncs', c.log_commits, other?.log_commits)}
        {row('metadata reserved after', c.meta_reserved !== undefined ? c.meta_reserved / 1024 : undefined, other?.meta_reserved !== undefined ? other.meta_reserved / 1024 : undefined, ' KiB')}
      </tbody>
    </table>
  );
}

function Powercut({ d }: { d: SandboxDetails }) {
  const files = d.powercut?.files ?? [];
  // each file a line when it was fsynced or is there; the others counted
  const shown = files.filter((f) => f.fsynced || f.found).slice(0, 40);
  const gone = files.filter((f) => !f.fsynced && !f.found);
  return (
    <div className="sandbox-powercut" data-testid="sandbox-powercut">
      <strong>After the power cut</strong> (the last commit, then the log replayed, as a mount does):
      <ul>
        {shown.map((f) => (
          <li key={f.path}>
            <code>{f.path}</code>: {f.found ? `${fmtNum(f.found_size ?? 0)} bytes` : 'not there'} ({f.verdict}; {fmtNum(f.size_now)} bytes before the cut
            {f.fsynced ? `, ${fmtNum(f.fsync_size ?? 0)} at its fsync` : ''})
          </li>
        ))}
        {gone.length > 0 && (
          <li data-testid="sandbox-powercut-gone">
            {fmtNum(gone.length)} file{gone.length === 1 ? '' : 's'} not there, none fsynced since the last commit:{' '}
            {gone
              .slice(0, 6)
              .map((f) => f.path)
              .join(', ')}
            {gone.length > 6 ? ', …' : ''}
          </li>
        )}
        {files.length === 0 && <li>no files</li>}
      </ul>
    </div>
  );
}

/** The engine's parameters of the sandbox (device, memory, file system
 * size, checker, kernel, each patch switch) and the left side's kernel:
 * each change runs the script afresh. */
function Settings({ params, compare, busy, onParams }: { params: Record<string, string>; compare: boolean; busy: boolean; onParams: (p: Record<string, string>) => void }) {
  const [info, setInfo] = useState<ParamInfo[] | null>(null);
  useEffect(() => {
    let live = true;
    engine
      .list()
      .then((xs) => live && setInfo(xs.find((e) => e.name === 'sandbox')?.params ?? []))
      .catch(() => live && setInfo([]));
    return () => {
      live = false;
    };
  }, []);
  if (!info) return null;
  const value = (p: ParamInfo): string => params[p.name] ?? String(p.default);
  const set = (name: string, v: string, def: string): void => {
    const next = { ...params };
    if (v === def) delete next[name];
    else next[name] = v;
    onParams(next);
  };
  const kernel = info.find((p) => p.name === 'kernel');
  const field = (p: ParamInfo) => {
    const id = `sandbox-p-${p.name}`;
    const def = String(p.default);
    let input: React.ReactNode;
    if (p.type === 'enum')
      input = (
        <select id={id} data-testid={id} value={value(p)} disabled={busy} onChange={(e) => set(p.name, e.target.value, def)}>
          {(p.values ?? []).map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      );
    else if (p.type === 'bool')
      input = <input id={id} data-testid={id} type="checkbox" checked={value(p) === 'true' || value(p) === '1'} disabled={busy} onChange={(e) => set(p.name, e.target.checked ? 'true' : 'false', def)} />;
    else
      input = (
        <input
          id={id}
          data-testid={id}
          type="number"
          key={value(p)}
          defaultValue={value(p)}
          min={p.min}
          max={p.max}
          step={p.type === 'int' ? 1 : 'any'}
          disabled={busy}
          onBlur={(e) => e.target.value !== value(p) && set(p.name, e.target.value, def)}
          onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()}
        />
      );
    return (
      <div key={p.name} className="sandbox-setting" title={p.help}>
        <label htmlFor={id}>
          {p.name}
          {p.unit ? ` (${p.unit})` : ''}
        </label>{' '}
        {input}
      </div>
    );
  };
  const machine = info.filter((p) => MACHINE.includes(p.name));
  const switches = info.filter((p) => !MACHINE.includes(p.name) && p.name !== 'kernel');
  return (
    <details className="sandbox-settings" data-testid="sandbox-settings">
      <summary>
        Kernels and machine: {compare ? `${params[VS_KERNEL] ?? DEFAULT_VS} · ` : ''}
        {sideName(params, 'after').replace('kernel ', '')}, {params.device ?? String(info.find((p) => p.name === 'device')?.default ?? '')}
      </summary>
      <div className="sandbox-settings-body" style={{ display: 'flex', flexWrap: 'wrap', gap: '0.35rem 1rem', marginTop: '0.4rem' }}>
        {kernel && (
          <>
            {field({ ...kernel, help: `${kernel.help}` })}
            <div className="sandbox-setting" title="compare kernels: the left side runs this kernel as it is (no switch)">
              <label htmlFor="sandbox-p-vs">compared with</label>{' '}
              <select id="sandbox-p-vs" data-testid="sandbox-p-vs" value={params[VS_KERNEL] ?? DEFAULT_VS} disabled={busy} onChange={(e) => set(VS_KERNEL, e.target.value, DEFAULT_VS)}>
                {(kernel.values ?? []).map((v) => (
                  <option key={v} value={v}>
                    {v}
                  </option>
                ))}
              </select>
            </div>
          </>
        )}
        {machine.map(field)}
        <p className="muted sandbox-settings-note" style={{ flexBasis: '100%', margin: '0.3rem 0 0' }}>Patch switches of the right kernel (kernel: as that kernel has it):</p>
        {switches.map(field)}
      </div>
    </details>
  );
}
