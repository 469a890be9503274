/*
 * ReplayPanel.tsx - playback of one or two recorded runs (before | after,
 * or a single base run), side by side: a scrubber over simulated time with
 * play / pause, step by event and by operation, speed, one clock or aligned
 * on the same operation, "first divergence"; each side draws the pictures
 * of its run at the cursor (a B-tree, the file's io_tree, the transaction's
 * queues). Keyboard while it is open: space, ← / →, shift + ← / →.
 * See README.md in this folder for how a view embeds it.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { activePlayer } from '../../app/commands';
import { testHook } from '../../app/testHook';
import { useWidth } from '../common/useWidth';
import type { Variant } from '../../engine/types';
import { fmtNs, fmtNum } from '../../model/format';
import { convert, cursorTime, endTime, formatCursor, parseCursor, positions, sides, startTime, step, type Cursor, type Sides, type Sync } from '../../model/playback';
import { findTree, Replay, type ReplayState, type TreeInfo } from '../../model/replay';
import { eventAt, firstDivergence, opAt, type Trace } from '../../model/trace';
import { treeChoices } from '../../model/treeLayout';
import { KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, NEUTRAL } from '../common';
import { IoTreeView } from './IoTreeView';
import { TreeLegend, TreeView } from './TreeView';

export interface ReplaySide {
  variant: Variant;
  trace: Trace;
}

export interface ReplayPanelProps {
  /** one or two runs; the first is the reference of op-aligned playback */
  runs: ReplaySide[];
  /** the tree each side shows first: (fs, root id) or a chooser; default the fs tree */
  pickTree?: (s: ReplayState) => TreeInfo | undefined;
  /** several trees each side shows (bonnie: the subvolume and its log
   * tree), over pickTree; the chooser then replaces them with one */
  pickTrees?: (s: ReplayState) => TreeInfo[];
  /** the arrows and space drive this player (default); a picture that is
   * always on the page leaves them to the page's own steps */
  keys?: boolean;
  /** where the cursor starts when the URL has none */
  initial?: Cursor;
  /** say that a recording is a window (default); off where the page says
   * which window it recorded */
  windowNote?: boolean;
  /** the prefix of its test ids ("replay": replay-before, replay-play...) */
  testPrefix?: string;
  /** draw the io_tree of the inode with the most records (sparse-cp) */
  showIo?: boolean;
  /** the URL's position, and where to put it (absent: not kept); `first`
   * is the first run's trace and position, for a page whose other
   * pictures follow the replay */
  at?: string;
  onAt?: (at: string | null, first?: { trace: Trace; pos: number }) => void;
  /** extra words above the player: what to watch */
  children?: ReactNode;
}

const SPEEDS = [1, 4, 15, 60, 250, 1000, 4000];
const PHASES = ['waiting for writers', 'running delayed refs', 'qgroup accounting', 'writing blocks'];
const WHENCE: Record<number, string> = { 3: 'SEEK_DATA', 4: 'SEEK_HOLE' };

/** One sentence for an operation in progress. */
function opCaption(tr: Trace, pos: number): string {
  const op = opAt(tr, pos);
  if (!op) return pos === 0 ? 'the recording starts' : 'before the first operation';
  const e = eventAt(tr, op.start - 1);
  const name = op.kind.slice(3);
  // an operation numbered by the engine (its index in its phase or stream)
  const n = e.args.n !== undefined ? e.args.n + 1 : op.nth + 1;
  if (name === 'lseek') {
    const w = WHENCE[e.args.whence!] ?? `whence ${e.args.whence}`;
    return `lseek #${op.nth + 1}: ${w} from ${fmtNum(e.args.offset! / 1024)} KiB (inode ${e.args.ino})`;
  }
  if (name === 'drop') return `drop step #${op.nth + 1} of subvolume ${e.args.id} (${fmtNum(e.args.leaves_dropped!)} leaves dropped so far)`;
  return `${name} #${fmtNum(n)}`;
}

function eventCaption(tr: Trace, pos: number): string {
  if (pos <= 0) return '';
  const e = eventAt(tr, pos - 1);
  const args = Object.entries(e.args)
    .slice(0, 6)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `${e.kind}${e.task ? ` (${e.task})` : ''} ${args}`;
}

/** The most qgroup records a transaction held in a recording (qg_record). */
function qgMaxOf(tr: Trace): number {
  const k = tr.kindId['qg_record'];
  let m = 0;
  if (k === undefined) return 0;
  for (let i = 0; i < tr.n; i++) if (tr.kind[i] === k) m = Math.max(m, tr.args[tr.off[i]! + 3]!);
  return m;
}

function Side({ side, replay, pos, width, pickTree, pickTrees, treeSel, onTree, showIo, qgMax, tp }: {
  side: ReplaySide;
  replay: Replay;
  pos: number;
  width: number;
  pickTree?: (s: ReplayState) => TreeInfo | undefined;
  pickTrees?: (s: ReplayState) => TreeInfo[];
  treeSel: number | null;
  onTree: (id: number) => void;
  showIo: boolean;
  /** the scale of the qgroup records' gauge (both kernels' most) */
  qgMax: number;
  tp: string;
}) {
  const s = replay.stateAt(pos);
  const hasQg = useMemo(() => {
    const k = side.trace.kindId['qg_record'];
    return k !== undefined && side.trace.kind.includes(k);
  }, [side.trace]);
  const choices = useMemo(() => treeChoices(s), [s, s.pos]);
  const chosen = treeSel !== null ? choices.find((c) => c.tree.id === treeSel)?.tree : undefined;
  const picked = !chosen && pickTrees ? pickTrees(s) : [];
  const tree = chosen ?? picked[0] ?? pickTree?.(s) ?? findTree(s, 1, 5) ?? choices[0]?.tree;
  const more = picked.slice(1);
  const io = showIo ? [...s.io.values()].sort((x, y) => y.recs.size - x.recs.size || y.ordered.size - x.ordered.size)[0] : undefined;
  const opEv = opAt(side.trace, pos);
  const lseekSize = opEv && opEv.kind === 'op:lseek' ? eventAt(side.trace, opEv.start - 1).args.i_size : undefined;
  const ioSize = lseekSize ?? (io ? Math.max(0, ...[...io.recs.values()].map((r) => r.end + 1)) : 0);
  const ioNow = s.ioReqs.filter((r) => r.done > cursorT(side.trace, pos)).length;
  return (
    <section className="replay-side" style={{ borderTopColor: KERNEL_COLOR[side.variant] }} data-testid={`${tp}-${side.variant}`} data-pos={pos}>
      <h3 style={{ color: KERNEL_TEXT[side.variant] }}>
        {KERNEL_LABEL[side.variant]} <span className="replay-t">t = {fmtNs(cursorT(side.trace, pos))}</span>
      </h3>
      <div className="replay-caption" data-testid={`${tp}-op-${side.variant}`}>
        {opCaption(side.trace, pos)}
      </div>
      <div className="replay-event muted" data-testid={`${tp}-event-${side.variant}`}>
        event {fmtNum(pos)} of {fmtNum(side.trace.n)}: {eventCaption(side.trace, pos)}
      </div>
      <div className="replay-queues">
        <span data-testid={`${tp}-commit-${side.variant}`}>
          {s.commit ? (
            <b>
              commit {s.commit.transid}: {PHASES[s.commit.phase] ?? `phase ${s.commit.phase}`}
            </b>
          ) : (
            <>transaction {[...s.transid.values()][0] ?? '?'} running</>
          )}
        </span>
        {hasQg && (
          <span className="replay-qg" data-testid={`${tp}-qg-${side.variant}`} data-records={s.qgRecords}>
            qgroup records in the transaction: <b>{fmtNum(s.qgRecords)}</b>
            {qgMax > 0 && (
              <svg className="qg-gauge" width={Math.max(60, width - 20)} height={12} aria-hidden="true">
                <rect x={0} y={1} width={Math.max(60, width - 20)} height={10} fill="#fff" stroke={NEUTRAL.mid} />
                <rect x={0} y={1} width={(Math.max(60, width - 20) * s.qgRecords) / qgMax} height={10} fill={NEUTRAL.dark} />
              </svg>
            )}
          </span>
        )}
        <span>locks held: {s.locks.length}</span>
        <span>device requests in flight: {ioNow}</span>
        {s.tickets > 0 && <span>tickets waiting: {s.tickets}</span>}
        <span>
          COWs {fmtNum(s.counts.cows)} · splits {fmtNum(s.counts.splits)} · frees {fmtNum(s.counts.frees)}
        </span>
      </div>
      {io && <IoTreeView io={io} size={ioSize} width={width} pos={pos} lastEvent={pos - 1} />}
      {tree && (
        <>
          <label className="replay-tree-pick">
            tree{' '}
            <select value={tree.id} onChange={(e) => onTree(Number(e.target.value))} data-testid={`${tp}-tree-${side.variant}`}>
              {choices.map((c) => (
                <option key={c.tree.h} value={c.tree.id}>
                  {c.name} ({fmtNum(c.blocks)} blocks)
                </option>
              ))}
            </select>
          </label>
          <TreeView key={tree.h} state={s} tree={tree} width={width} tasks={side.trace.tasks} />
        </>
      )}
      {more.map((t) => (
        <TreeView key={t.h} state={s} tree={t} width={width} tasks={side.trace.tasks} />
      ))}
    </section>
  );
}

const cursorT = (tr: Trace, pos: number): number => (pos > 0 ? tr.tmax[Math.min(pos, tr.n) - 1]! : tr.fromNs);

export function ReplayPanel({ runs, pickTree, pickTrees, keys = true, initial: startAt, windowNote: sayWindow = true, testPrefix: tp = 'replay', showIo = false, at, onAt, children }: ReplayPanelProps) {
  const a = runs[0]!;
  const b = runs[1];
  const S: Sides = useMemo(() => sides(a.trace, b?.trace), [a.trace, b?.trace]);
  const replays = useMemo(() => runs.map((r) => new Replay(r.trace)), [runs]);
  const start = replays[0]!.start;
  const initial = (): Cursor => parseCursor(at) ?? startAt ?? { sync: 'time', t: cursorT(a.trace, start) };
  const [cursor, setCursor] = useState<Cursor>(initial);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(15);
  const [treeSel, setTreeSel] = useState<number | null>(null);
  const [boxRef, boxW] = useWidth<HTMLDivElement>(900);
  // two kernels side by side where both fit (the grid follows this, not
  // the window's width: an SVG laid out for half the box must not be
  // stretched over all of it)
  const twoCols = !!b && boxW >= 860;
  const sideW = Math.max(260, twoCols ? Math.floor((boxW - 16) / 2) - 24 : boxW - 24);
  const P = positions(S, cursor);
  const divergence = useMemo(() => (b ? firstDivergence(a.trace, b.trace) : -1), [a.trace, b]);
  const qgMax = useMemo(() => Math.max(0, ...runs.map((r) => qgMaxOf(r.trace))), [runs]);
  useEffect(() => {
    // the page's own picture player is not "the open replay"
    if (keys) testHook().replayDivergence = divergence;
  }, [divergence, keys]);

  // the URL keeps the cursor while it is not playing
  const onAtRef = useRef(onAt);
  onAtRef.current = onAt;
  // (a quarter of a second after the last move: writing the URL renders the
  // whole page, which a scrub must not do at every frame)
  useEffect(() => {
    if (playing) return;
    const id = setTimeout(() => onAtRef.current?.(formatCursor(cursor), { trace: S.a, pos: positions(S, cursor).a }), 250);
    return () => clearTimeout(id);
  }, [cursor, playing, S]);

  const doStep = useCallback((dir: 1 | -1, unit: 'event' | 'op') => {
    setPlaying(false);
    setCursor((c) => step(S, c, dir, unit));
  }, [S]);

  // arrows and space drive this player while it is open
  useEffect(() => {
    if (!keys) return;
    const cmds = { step: doStep, playPause: () => setPlaying((p) => !p) };
    activePlayer.current = cmds;
    return () => {
      if (activePlayer.current === cmds) activePlayer.current = null;
    };
  }, [doStep, keys]);

  // play: `speed` events a second (either side's), one frame at a time
  useEffect(() => {
    if (!playing) return;
    let raf = 0;
    let last = performance.now();
    let owed = 0;
    const tick = (now: number): void => {
      owed += ((now - last) / 1000) * speed;
      last = now;
      const k = Math.floor(owed);
      if (k > 0) {
        owed -= k;
        setCursor((c) => {
          let x = c;
          for (let i = 0; i < k; i++) x = step(S, x, 1, 'event');
          const p = positions(S, x);
          if (p.a >= S.a.n && (!S.b || p.b >= S.b.n)) setPlaying(false);
          return x;
        });
      }
      raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [playing, speed, S]);

  const t0 = startTime(S);
  const t1 = endTime(S);
  const tNow = cursorTime(S, cursor);
  // the scrubber runs over the first run's events (in time mode, to the
  // time of each): it moves where things happen, not through idle seconds
  const sliderMax = S.a.n;
  const sliderVal = P.a;
  const onSlider = (v: number): void => {
    setPlaying(false);
    setCursor(cursor.sync === 'time' ? { sync: 'time', t: v > 0 ? S.a.tmax[v - 1]! : t0 } : { sync: 'op', pos: v });
  };
  const setSync = (to: Sync): void => setCursor((c) => convert(S, c, to));
  const windowNote = runs
    .filter((r) => !r.trace.complete)
    .map((r) => `${r.variant}: a window from ${fmtNs(r.trace.fromNs)} to ${fmtNs(r.trace.lastNs)}, ${fmtNum(r.trace.unkept)} later events not kept`);

  return (
    <div className="replay" ref={boxRef} data-testid={tp} data-sync={cursor.sync} data-at={formatCursor(cursor)}>
      {children}
      <div className="player" role="group" aria-label="Playback">
        <div className="player-buttons">
          <button type="button" className="btn-mini" onClick={() => doStep(-1, 'op')} title="Previous operation (shift+←)" data-testid={`${tp}-prev-op`}>
            ◀◀ op
          </button>
          <button type="button" className="btn-mini" onClick={() => doStep(-1, 'event')} title="Previous event (←)" data-testid={`${tp}-prev`}>
            ◀
          </button>
          <button type="button" className="btn-mini btn-play" onClick={() => setPlaying((p) => !p)} title="Play / pause (space)" data-testid={`${tp}-play`} aria-pressed={playing}>
            {playing ? '⏸ pause' : '▶ play'}
          </button>
          <button type="button" className="btn-mini" onClick={() => doStep(1, 'event')} title="Next event (→)" data-testid={`${tp}-next`}>
            ▶
          </button>
          <button type="button" className="btn-mini" onClick={() => doStep(1, 'op')} title="Next operation (shift+→)" data-testid={`${tp}-next-op`}>
            op ▶▶
          </button>
          <label className="player-speed">
            speed{' '}
            <select value={speed} onChange={(e) => setSpeed(Number(e.target.value))} data-testid={`${tp}-speed`}>
              {SPEEDS.map((x) => (
                <option key={x} value={x}>
                  {x} events/s
                </option>
              ))}
            </select>
          </label>
          {b && (
            <span className="player-sync" role="radiogroup" aria-label="Hold the two kernels">
              <button type="button" className={`btn-mini${cursor.sync === 'time' ? ' on' : ''}`} aria-pressed={cursor.sync === 'time'} onClick={() => setSync('time')} data-testid={`${tp}-sync-time`} title="Both kernels at the same simulated time">
                one clock
              </button>
              <button type="button" className={`btn-mini${cursor.sync === 'op' ? ' on' : ''}`} aria-pressed={cursor.sync === 'op'} onClick={() => setSync('op')} data-testid={`${tp}-sync-op`} title="Both kernels at the same (n-th) operation">
                same operation
              </button>
            </span>
          )}
          {b && (
            <button
              type="button"
              className="btn-mini"
              disabled={divergence < 0}
              onClick={() => {
                setPlaying(false);
                setCursor({ sync: 'op', pos: divergence + 1 });
              }}
              data-testid={`${tp}-diverge`}
              title={divergence < 0 ? 'The two runs did the same things' : 'Both kernels at the first event where they differ'}
            >
              first divergence
            </button>
          )}
        </div>
        <input
          type="range"
          className="player-scrub"
          min={0}
          max={sliderMax}
          value={sliderVal}
          onChange={(e) => onSlider(Number(e.target.value))}
          aria-label="Position: the first run's events"
          data-testid={`${tp}-scrub`}
        />
        <div className="player-readout" data-testid={`${tp}-readout`}>
          t = {fmtNs(tNow)} of {fmtNs(t1)}
          {cursor.sync === 'op' ? ' · aligned on the same operation' : ' · one clock'}
          {b && divergence >= 0 && P.a === divergence + 1 && ' · the first event where the kernels differ'}
        </div>
        {sayWindow && windowNote.length > 0 && (
          <p className="notice" data-testid={`${tp}-window`}>
            Recorded as a window (the run is larger than a recording keeps): {windowNote.join('; ')}.
          </p>
        )}
      </div>
      <div className={`replay-sides${twoCols ? ' two' : ''}`}>
        {runs.map((r, i) => (
          <Side key={r.variant} side={r} replay={replays[i]!} pos={i === 0 ? P.a : P.b} width={sideW} pickTree={pickTree} pickTrees={pickTrees} treeSel={treeSel} onTree={setTreeSel} showIo={showIo} qgMax={qgMax} tp={tp} />
        ))}
      </div>
      <TreeLegend />
    </div>
  );
}
