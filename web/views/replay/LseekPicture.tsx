/*
 * LseekPicture.tsx - lseek cache hits: the inode's io_tree around cp's
 * cursor, before and after on one file-offset axis, from each kernel's
 * recording of cp (every lseek: op:lseek, eio_lock_pass, eio_count,
 * lseek_ret; web/model/lseekPicture.ts). One cursor, the n-th lseek of cp
 * in both kernels (they make the same calls), plays or scrubs through the
 * run. Per kernel, one band:
 *   file      the whole file: every record as a tick, the window the rows
 *             below show (a box) and the range lock (hatched), so records
 *             the lock walks far ahead of the cursor are on screen too;
 *   io_tree   its records as marks (greys by bits), the record the open
 *             file's cached state points at outlined and flagged;
 *   lock      the current call's range lock, from its offset to EOF (it
 *             runs on past the window), with the records it walks;
 *   lseeks    every call made so far at its offset: a filled dot when its
 *             delalloc searches started at the cached state (a hit), a
 *             hollow triangle when one descended from the root, a short
 *             tick when the call needed no search.
 * Under the picture, what each kernel's range lock walked in this call,
 * from the io_tree as the lock found it (model: lockWalk, the engine's
 * own count): the records in range and the gaps it fills with LOCKED
 * records, twice (lock and unlock). The fillers are freed within the call,
 * so the tree drawn after it never shows them.
 * Under it, the counts so far and over the whole recording, which are the
 * run's metrics when the recording holds every call.
 *
 * Drawing only: the runs' recordings come in as props (the page records
 * them when its results are in).
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { Variant } from '../../engine/types';
import { fmtBytes, fmtNum } from '../../model/format';
import { callAtOffset, layoutLseekLane, lockWalk, lseekCalls, lseekTotals, windowAround, type LockWalk, type LseekMark, type LseekRun } from '../../model/lseekPicture';
import { ioKey, ioRecords, Replay } from '../../model/replay';
import type { Trace } from '../../model/trace';
import { ChartFigure, INK, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, labelWidth, NEUTRAL, scaleTicks, smallPx } from '../common';
import { scaleLinear } from 'd3-scale';

export interface LseekSide {
  variant: Variant;
  trace: Trace;
}

export interface LseekPictureProps {
  sides: LseekSide[];
  /** the recordings began at cp's first lseek (their totals are the run's) */
  fromFirst?: boolean;
  /** a cursor as a share of the file (the page's v.cursor), and where to
   * report the picture's own moves */
  cursor?: number;
  onCursor?: (frac: number) => void;
  /** the kernels' extent + hole stride (the zoom's unit); default 8 KiB */
  strideBytes?: number;
}

/** io_tree bits in greys, darkest first (as IoTreeView). */
const BITS: [number, string, string][] = [
  [1 << 0, NEUTRAL.strong, 'LOCKED'],
  [1 << 1, NEUTRAL.dark, 'DELALLOC'],
  [1 << 2, NEUTRAL.mid, 'DELALLOC_NEW'],
  [1 << 3, NEUTRAL.light, 'UPTODATE'],
];
const colourOf = (bits: number): string => (BITS.find(([b]) => bits & b) ?? [0, NEUTRAL.faint])[1];

const SPEEDS = [5, 25, 100, 500, 2000];
/** While playing, how often the page's cursor follows (ms). */
const REPORT_MS = 200;
/** Window widths, in strides of the file (extent + hole): at the first,
 * a 4 KiB record is ~1/16 of the width, a mark per lseek ~1/32 apart. */
const ZOOMS = [16, 32, 64, 128, 512, Infinity];

/** An offset in KiB (cp's calls are 4 KiB apart: MiB would round them together). */
const kib = (b: number): string => `${fmtNum(Math.round(b / 1024))} KiB`;

const MARK_TEXT: Record<LseekMark, string> = {
  hit: 'searched from the cached state (a hit)',
  mixed: 'some searches from the cached state, some from the root',
  descent: 'searched from the root of the io_tree',
  none: 'no delalloc search',
};

function Mark({ mark, x, y, r, current }: { mark: LseekMark; x: number; y: number; r: number; current: boolean }) {
  const sw = current ? 2.5 : 1.4;
  if (mark === 'hit') return <circle cx={x} cy={y} r={r} fill={INK} stroke={INK} strokeWidth={sw} className="lseek-mark mark-hit" />;
  if (mark === 'mixed')
    return (
      <g className="lseek-mark mark-mixed">
        <circle cx={x} cy={y} r={r} fill="#fff" stroke={INK} strokeWidth={sw} />
        <path d={`M${x},${y - r} a${r},${r} 0 0 0 0,${2 * r} z`} fill={INK} />
      </g>
    );
  if (mark === 'descent')
    return <path d={`M${x - r},${y - r * 0.8} h${2 * r} l${-r},${r * 1.8} z`} fill="#fff" stroke={INK} strokeWidth={sw} className="lseek-mark mark-descent" />;
  return <line x1={x} x2={x} y1={y - r * 0.6} y2={y + r * 0.6} stroke={NEUTRAL.dark} strokeWidth={current ? 3 : 1.5} className="lseek-mark mark-none" />;
}

/** Two kernels' range locks of the same call walked the same records (one sentence says it for both). */
function sameWalk(a: { c?: { lockRecords: number }; walk: LockWalk | null }, b: { c?: { lockRecords: number }; walk: LockWalk | null }): boolean {
  return !!a.walk && !!b.walk && a.c?.lockRecords === b.c?.lockRecords && JSON.stringify(a.walk) === JSON.stringify(b.walk);
}

export function LseekPicture({ sides, fromFirst = true, cursor, onCursor, strideBytes = 8192 }: LseekPictureProps) {
  const runs: LseekRun[] = useMemo(() => sides.map((s) => lseekCalls(s.trace, fromFirst)), [sides, fromFirst]);
  const replays = useMemo(() => sides.map((s) => new Replay(s.trace)), [sides]);
  const n = Math.max(0, ...runs.map((r) => r.calls.length));
  const size = Math.max(1, ...runs.map((r) => r.iSize));
  const ref = runs[0]!;
  const [k, setK] = useState(() => (cursor !== undefined ? Math.max(0, callAtOffset(ref.calls, cursor * size)) : 0));
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(100);
  const [zoom, setZoom] = useState(0);

  // One cursor with the page: the page's cursor (its call slider) moves
  // the picture, and the picture's moves (a step, the scrubber, playing)
  // go to the page, so the page's panels show the same offset. What we
  // reported comes back as the page's cursor: those values are ours, not
  // a move of the page's (a few are kept: while playing, the next report
  // can leave before the last one is back).
  const said = useRef<number[]>([]);
  useEffect(() => {
    if (cursor === undefined) return;
    // an echo: forget it and the older ones (the page may later move to
    // the same value itself)
    const echo = said.current.indexOf(cursor);
    if (echo >= 0) {
      said.current = said.current.slice(echo + 1);
      return;
    }
    const i = callAtOffset(ref.calls, cursor * size);
    if (i >= 0) {
      setPlaying(false);
      setK(i);
    }
  }, [cursor, ref, size]);
  const onCursorRef = useRef(onCursor);
  onCursorRef.current = onCursor;
  const lastSaid = useRef(0);
  useEffect(() => {
    if (!onCursorRef.current) return;
    const c = ref.calls[k];
    // the page's cursor already stands on this call
    if (!c || (cursor !== undefined && callAtOffset(ref.calls, cursor * size) === k)) return;
    // a step or a drag: a moment after the last move; playing: a few
    // times a second (each report redraws the page's panels)
    const wait = playing ? Math.max(0, REPORT_MS - (performance.now() - lastSaid.current)) : 120;
    const id = setTimeout(() => {
      const f = Math.round((c.offset / size) * 1e6) / 1e6;
      said.current = [...said.current.slice(-7), f];
      lastSaid.current = performance.now();
      onCursorRef.current?.(f);
    }, wait);
    return () => clearTimeout(id);
  }, [k, playing, ref, size, cursor]);

  useEffect(() => {
    if (!playing) return;
    let raf = 0;
    let last = performance.now();
    let owed = 0;
    const tick = (now: number): void => {
      owed += ((now - last) / 1000) * speed;
      last = now;
      const step = Math.floor(owed);
      if (step > 0) {
        owed -= step;
        setK((x) => {
          const y = Math.min(n - 1, x + step);
          if (y >= n - 1) setPlaying(false);
          return y;
        });
      }
      raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [playing, speed, n]);

  const call = ref.calls[Math.min(k, ref.calls.length - 1)];
  const span = Number.isFinite(ZOOMS[zoom]!) ? ZOOMS[zoom]! * strideBytes : size;
  const win = windowAround(call?.offset ?? 0, span, size);
  const totals = useMemo(() => runs.map((r) => lseekTotals(r.calls)), [runs]);
  const noSearch = totals.every((t) => t.noSearchCalls === t.calls);

  return (
    <ChartFigure
      testId="lseek-picture"
      exportName="lseek-cache-hits"
      title={
        <>
          lseek cache hits: the io_tree around cp&apos;s cursor, {sides.map((s, i) => (
            <span key={s.variant}>
              {i > 0 && ' and '}
              <strong style={{ color: KERNEL_TEXT[s.variant] }}>{KERNEL_LABEL[s.variant]}</strong>
            </span>
          ))}{' '}
          on one file axis
        </>
      }
      data={{ k: String(k), calls: String(n) }}
      legend={[
        { label: 'a record of the io_tree (darker: LOCKED, DELALLOC, DELALLOC_NEW, UPTODATE)', color: NEUTRAL.dark, shape: 'box' },
        { label: 'the range lock, offset → EOF', color: NEUTRAL.dark, shape: 'line' },
      ]}
      note={
        <>
          Each lseek locks the io_tree from its offset to the end of the file and walks every record in that range; when the file has delalloc, it then looks for it with
          count_range_bits. Before the series that search starts at the root of the io_tree every time; after it (patches 6/9 and 9/9), at the record the open file&apos;s
          cached state points at, left there by the previous lseek. Switch 9/9 off and the hits become searches from the root again.
        </>
      }
    >
      {(boxWidth, theme) => {
        const fs = theme.fontPx;
        const width = Math.max(300, boxWidth);
        const gutter = Math.round(fs * 5.2);
        const plotW = width - gutter - 8;
        const rowH = Math.round(fs * 1.6);
        // a band: the kernel, the whole file, a line for what lies outside
        // the window, the three rows, then what this lseek did (each text on
        // a line of its own)
        const titleH = Math.round(fs * 1.3);
        const ovH = Math.round(fs * 1.1);
        const noteH = Math.round(fs * 1.2);
        const capH = Math.round(fs * 1.5);
        const bandH = titleH + ovH + noteH + rowH * 3 + capH;
        const axisH = Math.round(fs * 2.6);
        const h = bandH * sides.length + axisH;

        const unit = win.to - win.from >= 4 << 20 ? { per: 1 << 20, name: 'MiB' } : { per: 1024, name: 'KiB' };
        const ticks = scaleTicks(scaleLinear().domain([win.from / unit.per, win.to / unit.per]).range([0, plotW]), 'x', plotW, fs);
        const markR = Math.max(4, fs * 0.34);
        // per kernel: what this call's lock walked (the tree as the lock
        // found it), then the tree after the call, in the window and whole
        const bands = sides.map((side, i) => {
          const run = runs[i]!;
          const ci = Math.min(k, run.calls.length - 1);
          const c = run.calls[ci];
          const key = ioKey(run.fs, run.ino);
          const walk: LockWalk | null = c?.lock ? lockWalk(ioRecords(replays[i]!.stateAt(c.lockAt).io.get(key)), c.lock.start, c.lock.end) : null;
          const s = c ? replays[i]!.stateAt(c.end) : null;
          const io = s ? s.io.get(key) : undefined;
          const recs = io ? ioRecords(io) : [];
          const cached = io?.cached ? { start: io.cached.start, end: io.cached.end } : null;
          return {
            side,
            c,
            walk,
            nrec: io ? io.recs.size : 0,
            cached,
            L: layoutLseekLane(recs, run.calls, ci, cached, { width: plotW, from: win.from, to: win.to }),
            O: layoutLseekLane(recs, [], -1, null, { width: plotW, from: 0, to: size }),
          };
        });
        return (
          <>
            <div className="lseek-player" role="group" aria-label="cp's lseeks">
              <button type="button" className="btn-mini" onClick={() => { setPlaying(false); setK((x0) => Math.max(0, x0 - 1)); }} title="The previous lseek" data-testid="lseek-prev">
                ◀
              </button>
              <button type="button" className="btn-mini btn-play" onClick={() => setPlaying((p) => !p)} aria-pressed={playing} data-testid="lseek-play">
                {playing ? '⏸ pause' : '▶ play'}
              </button>
              <button type="button" className="btn-mini" onClick={() => { setPlaying(false); setK((x0) => Math.min(n - 1, x0 + 1)); }} title="The next lseek" data-testid="lseek-next">
                ▶
              </button>
              <label className="player-speed">
                <select value={speed} onChange={(e) => setSpeed(Number(e.target.value))} aria-label="lseeks per second">
                  {SPEEDS.map((v) => (
                    <option key={v} value={v}>
                      {v} lseeks/s
                    </option>
                  ))}
                </select>
              </label>
              <span className="lseek-zoom">
                <button type="button" className="btn-mini" disabled={zoom === 0} onClick={() => setZoom((z) => Math.max(0, z - 1))} title="Fewer records: zoom in" data-testid="lseek-zoom-in">
                  −
                </button>
                <button type="button" className="btn-mini" disabled={zoom === ZOOMS.length - 1} onClick={() => setZoom((z) => Math.min(ZOOMS.length - 1, z + 1))} title="More of the file: zoom out" data-testid="lseek-zoom-out">
                  +
                </button>
              </span>
              <input
                type="range"
                className="player-scrub"
                min={0}
                max={Math.max(0, n - 1)}
                value={k}
                onChange={(e) => {
                  setPlaying(false);
                  setK(Number(e.target.value));
                }}
                aria-label="cp's lseek: the same call in both kernels"
                data-testid="lseek-scrub"
              />
              <div className="player-readout" data-testid="lseek-readout">
                {call ? (
                  <>
                    lseek <b>{fmtNum(k + 1)}</b> of {fmtNum(n)}: SEEK_{call.whence.toUpperCase()} from {kib(call.offset)} → {call.result < 0 ? 'ENXIO' : kib(call.result)} · so far{' '}
                    {sides.map((sd, i) => {
                      const t = lseekTotals(runs[i]!.calls, k + 1);
                      return (
                        <span key={sd.variant} style={{ color: KERNEL_TEXT[sd.variant] }} data-testid={`lseek-sofar-${sd.variant}`}>
                          {i > 0 ? ' · ' : ''}
                          {sd.variant}: {fmtNum(t.hits)} hits, {fmtNum(t.descents)} from the root
                        </span>
                      );
                    })}
                  </>
                ) : (
                  'no lseek in the recording'
                )}
              </div>
            </div>
            <svg className="chart lseek-svg" width={width} height={h} viewBox={`0 0 ${width} ${h}`} role="img" aria-label="the io_tree around cp's cursor, before and after" data-testid="lseek-svg">
              {bands.map(({ side, c, walk, nrec, cached, L, O }, i) => {
                const y0 = i * bandH;
                const yOv = y0 + titleH;
                const yRec = yOv + ovH + noteH;
                const yLock = yRec + rowH;
                const yCalls = yLock + rowH;
                const recH = rowH - 6;
                const wx0 = (win.from / size) * plotW;
                const wx1 = Math.max(wx0 + 3, (win.to / size) * plotW);
                const ahead = walk && walk.inRange > 0 && L.recs.length === 0;
                return (
                  <g key={side.variant} data-testid={`lseek-band-${side.variant}`} data-records={nrec} data-mark={c?.mark ?? ''} data-cached={cached ? `${cached.start}-${cached.end}` : ''}>
                    <text x={0} y={y0 + fs} fontSize={fs} fontWeight={700} fill={KERNEL_TEXT[side.variant]}>
                      {KERNEL_LABEL[side.variant]}
                    </text>
                    <text x={0} y={yOv + ovH / 2 + fs * 0.3} fontSize={smallPx(theme, 0.8)} fill={NEUTRAL.dark}>
                      whole file
                    </text>
                    <g transform={`translate(${gutter},0)`} data-testid={`lseek-file-${side.variant}`}>
                      <rect x={0} y={yOv} width={plotW} height={ovH} fill="#fff" stroke={NEUTRAL.light} />
                      {c?.lock && <rect x={(c.lock.start / size) * plotW} y={yOv} width={Math.max(2, plotW - (c.lock.start / size) * plotW)} height={ovH} fill="url(#lseek-hatch)" opacity={0.6} />}
                      {O.recs.map((r) => (
                        <rect key={r.start} x={r.x} y={yOv + 2} width={Math.max(1, r.w)} height={ovH - 4} fill={colourOf(r.bits)} className="lseek-file-rec" />
                      ))}
                      <rect x={wx0} y={yOv - 2} width={wx1 - wx0} height={ovH + 4} fill="none" stroke={INK} strokeWidth={2} data-testid={`lseek-file-window-${side.variant}`}>
                        <title>the window drawn below</title>
                      </rect>
                    </g>
                    <text x={gutter} y={yCalls + rowH + capH * 0.7} fontSize={smallPx(theme, 0.8)} fill={INK} data-testid={`lseek-now-${side.variant}`}>
                      {c ? `this lseek: ${MARK_TEXT[c.mark]}${c.searches.length ? ` (${fmtNum(c.searchRecords)} record${c.searchRecords === 1 ? '' : 's'})` : ''}` : ''}
                    </text>
                    <rect x={gutter - 6} y={yOv} width={4} height={yCalls + rowH - yOv} fill={KERNEL_COLOR[side.variant]} />
                    <g fontSize={smallPx(theme, 0.8)} fill={NEUTRAL.dark}>
                      <text x={0} y={yRec + rowH / 2 + fs * 0.3}>io_tree</text>
                      <text x={0} y={yLock + rowH / 2 + fs * 0.3}>lock</text>
                      <text x={0} y={yCalls + rowH / 2 + fs * 0.3}>lseeks</text>
                    </g>
                    <g transform={`translate(${gutter},0)`}>
                      <rect x={0} y={yRec + 3} width={plotW} height={recH} fill="#fff" stroke={NEUTRAL.light} />
                      {L.recs.map((r) => (
                        <rect key={r.start} x={r.x} y={yRec + 3} width={Math.max(1, r.w)} height={recH} fill={colourOf(r.bits)} className="lseek-rec" data-start={r.start} data-count={r.count}>
                          <title>{`${fmtBytes(r.start)}–${fmtBytes(r.end + 1)}${r.count > 1 ? ` (${r.count} records)` : ''}`}</title>
                        </rect>
                      ))}
                      {L.before > 0 && (
                        <text x={0} y={yRec - noteH * 0.25} fontSize={smallPx(theme, 0.72)} fill={NEUTRAL.dark}>
                          ◀ {fmtNum(L.before)} records before
                        </text>
                      )}
                      {L.after > 0 && (
                        <text x={plotW} y={yRec - noteH * 0.25} fontSize={smallPx(theme, 0.72)} textAnchor="end" fill={NEUTRAL.dark}>
                          {fmtNum(L.after)} more to EOF ▶
                        </text>
                      )}
                      {L.cached && L.cached.side === 0 && (
                        <g className="lseek-cached" data-testid={`lseek-cached-${side.variant}`}>
                          <rect x={L.cached.x0 - 2} y={yRec} width={Math.max(3, L.cached.x1 - L.cached.x0) + 4} height={recH + 6} fill="none" stroke={INK} strokeWidth={2.5} />
                          <path d={`M${(L.cached.x0 + L.cached.x1) / 2},${yRec + 1} l-5,-7 h10 z`} fill={INK} />
                        </g>
                      )}
                      {L.cached && L.cached.side !== 0 && (
                        <text x={plotW / 2} y={yRec - noteH * 0.25} fontSize={smallPx(theme, 0.72)} textAnchor="middle" fill={INK} className="lseek-cached" data-testid={`lseek-cached-${side.variant}`}>
                          {L.cached.side < 0 ? `◀ cached state at ${fmtBytes(L.cached.start)}` : `cached state at ${fmtBytes(L.cached.start)} ▶`}
                        </text>
                      )}
                      {L.lock && (
                        <g data-testid={`lseek-lock-${side.variant}`}>
                          <rect x={L.lock.x0} y={yLock + 4} width={Math.max(2, L.lock.x1 - L.lock.x0)} height={rowH - 8} fill="url(#lseek-hatch)" stroke={INK} strokeWidth={1.5} />
                          <text x={Math.min(L.lock.x0 + 6, plotW - fs * 12)} y={yLock + rowH / 2 + fs * 0.3} fontSize={smallPx(theme, 0.8)} fill={INK} className="lseek-lock-label" paintOrder="stroke" stroke="#fff" strokeWidth={4}>
                            {`locked to EOF: lock + unlock walk ${fmtNum(c?.lockRecords ?? L.lock.records)} record${(c?.lockRecords ?? L.lock.records) === 1 ? '' : 's'}${L.lock.past ? ' ▶' : ''}`}
                          </text>
                        </g>
                      )}
                      <line x1={0} x2={plotW} y1={yCalls + rowH / 2} y2={yCalls + rowH / 2} stroke={NEUTRAL.faint} />
                      {L.calls.map((m) => (
                        <Mark key={m.n} mark={m.mark} x={m.x} y={yCalls + rowH / 2} r={m.current ? markR * 1.4 : markR} current={m.current} />
                      ))}
                      {L.cursorX !== null && <line x1={L.cursorX} x2={L.cursorX} y1={yRec - 2} y2={yCalls + rowH} stroke={INK} strokeWidth={1.5} strokeDasharray="4 3" />}
                    </g>
                    {ahead && (
                      <text x={gutter + plotW * 0.6} y={yRec + rowH / 2 + fs * 0.3} fontSize={smallPx(theme, 0.8)} textAnchor="middle" fill={INK} data-testid={`lseek-ahead-${side.variant}`}>
                        {`none here: the ${fmtNum(walk.inRange)} the lock walks lie ahead, from ${fmtBytes(walk.first ?? 0)}`}
                      </text>
                    )}

                  </g>
                );
              })}
              <defs>
                <pattern id="lseek-hatch" width={6} height={6} patternUnits="userSpaceOnUse" patternTransform="rotate(45)">
                  <rect width={6} height={6} fill="#fff" />
                  <line x1={0} y1={0} x2={0} y2={6} stroke={NEUTRAL.mid} strokeWidth={2} />
                </pattern>
              </defs>
              <g transform={`translate(${gutter},${bandH * sides.length})`} fontSize={smallPx(theme, 0.8)} fill={INK}>
                <line x1={0} x2={plotW} y1={2} y2={2} stroke={INK} />
                {ticks.map((t) => {
                  // a label at either end stays inside the picture
                  const half = labelWidth(t.label, smallPx(theme, 0.8)) / 2;
                  const anchor = t.pos + half > plotW + 8 ? 'end' : t.pos - half < -gutter ? 'start' : 'middle';
                  return (
                    <g key={t.label} transform={`translate(${t.pos},0)`}>
                      <line y1={2} y2={7} stroke={INK} />
                      <text y={fs + 4} textAnchor={anchor}>
                        {t.label}
                      </text>
                    </g>
                  );
                })}
                <text x={plotW} y={fs * 2.3} textAnchor="end" fill={NEUTRAL.dark}>
                  offset in the file ({unit.name})
                </text>
              </g>
            </svg>
            <div className="lseek-walks" data-testid="lseek-walks">
              {bands.map(({ side, c, walk }, i) =>
                c?.lock && walk ? (
                  <p
                    key={side.variant}
                    data-testid={`lseek-walk-${side.variant}`}
                    data-lock={walk.lock}
                    data-unlock={walk.unlock}
                    data-total={walk.total}
                    data-run={c.lockRecords}
                    hidden={i > 0 && sameWalk(bands[0]!, bands[i]!)}
                  >
                    {i === 0 && bands.length > 1 && sameWalk(bands[0]!, bands[1]!) ? (
                      <b>In both kernels</b>
                    ) : (
                      <b style={{ color: KERNEL_TEXT[side.variant] }}>{KERNEL_LABEL[side.variant]}</b>
                    )}
                    : this lseek locked {fmtBytes(c.lock.start)} → EOF, and lock + unlock walked{' '}
                    <b>{fmtNum(c.lockRecords)}</b> {c.lockRecords === 1 ? 'record' : 'records'}
                    {walk.total !== c.lockRecords ? (
                      '.'
                    ) : walk.inRange === 0 ? (
                      <>: no record of the io_tree lies in that range; the lock put one LOCKED record over it and the unlock freed it.</>
                    ) : (
                      <>
                        : the {fmtNum(walk.inRange)} {walk.inRange === 1 ? 'record' : 'records'} of the io_tree in that range ({fmtBytes(walk.first ?? 0)}–{fmtBytes((walk.last ?? 0) + 1)}) and the {fmtNum(walk.gaps)}{' '}
                        {walk.gaps === 1 ? 'gap' : 'gaps'} around them, each filled with a LOCKED record (the lock: {fmtNum(walk.lock)}), all walked again by the unlock, which frees the fillers ({fmtNum(walk.unlock)}).
                        The fillers live only inside the call, so the tree drawn after it has none{walk.first !== null && walk.first >= win.to ? '; the records walked lie ahead of the window (the whole-file row)' : ''}.
                      </>
                    )}
                  </p>
                ) : null,
              )}
            </div>
            <div className="lseek-key">
              <svg width={16} height={16} aria-hidden="true">
                <Mark mark="hit" x={8} y={8} r={5} current={false} />
              </svg>{' '}
              an lseek whose search started at the cached state (a hit){' '}
              <svg width={16} height={16} aria-hidden="true">
                <Mark mark="descent" x={8} y={8} r={5} current={false} />
              </svg>{' '}
              one that searched from the root{' '}
              <svg width={16} height={16} aria-hidden="true">
                <Mark mark="mixed" x={8} y={8} r={5} current={false} />
              </svg>{' '}
              both{' '}
              <svg width={16} height={16} aria-hidden="true">
                <Mark mark="none" x={8} y={8} r={6} current={false} />
              </svg>{' '}
              no delalloc search · outlined ▼: the record the cached state points at
            </div>
            {noSearch && (
              <p className="notice lseek-nosearch" data-testid="lseek-nosearch">
                No lseek here searched for delalloc: the file has none (it is on disk), so count_range_bits never runs and 9/9&apos;s cached state has nothing to speed up. What
                costs here is the range lock&apos;s walk (patch 1/9). Try <b>state = delalloc</b> to see the cached state at work.
              </p>
            )}
            <table className="metrics lseek-counts" data-testid="lseek-counts">
              <thead>
                <tr>
                  <th />
                  <th>lseek calls</th>
                  <th>cached-state hits</th>
                  <th>misses</th>
                  <th>searches from the root</th>
                  <th>records per range lock</th>
                  <th>records per search</th>
                </tr>
              </thead>
              <tbody>
                {sides.map((side, i) => {
                  const t = totals[i]!;
                  return (
                    <tr key={side.variant} data-testid={`lseek-counts-${side.variant}`} data-whole={runs[i]!.whole ? '1' : '0'} data-lseek_calls={t.calls} data-state_cache_hits={t.hits} data-state_cache_misses={t.misses} data-lock_records_avg={t.lockAvg} data-search_records_avg={t.searchAvg}>
                      <th style={{ color: KERNEL_TEXT[side.variant] }}>{KERNEL_LABEL[side.variant]}</th>
                      <td className="num">{fmtNum(t.calls)}</td>
                      <td className="num">
                        {fmtNum(t.hits)}
                      </td>
                      <td className="num">{fmtNum(t.misses)}</td>
                      <td className="num">
                        {fmtNum(t.descents)}
                      </td>
                      <td className="num">{fmtNum(t.lockAvg)}</td>
                      <td className="num">{fmtNum(t.searchAvg)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
            <p className="muted lseek-whole" data-testid="lseek-whole">
              {runs.every((r) => r.whole)
                ? "Counted over every lseek of cp's run: these are the run's metrics (lseek_calls, state_cache_hits, state_cache_misses, lock_records_avg, search_records_avg)."
                : `The recording holds ${runs.map((r, i) => `${fmtNum(r.calls.length)} lseeks (${sides[i]!.variant})`).join(', ')}, not the whole run: the counts are the window's.`}
            </p>
          </>
        );
      }}
    </ChartFigure>
  );
}
