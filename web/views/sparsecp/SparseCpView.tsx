/*
 * SparseCpView.tsx - seed 004: cp of a sparse file walking it with
 * lseek(SEEK_DATA/SEEK_HOLE). Side by side, before and after: the file as
 * a strip of extents and holes (what was still delalloc when cp started)
 * with the lseek cursor on it; the call at the cursor (records the range
 * lock and the searches visited, cached-state hit or miss, time); time per
 * lseek against the offset; io_tree records over the copy. Drawing only:
 * the layouts come from ./model.ts. Toggling a patch switch re-runs the
 * after kernel, so only its panel changes.
 */
import { useState } from 'react';
import { SweepButton } from '../common/SweepButton';
import { ColumnHeads, PointSeries } from '../SweepParts';
import { publishedFor } from '../../model/provenance';
import type { ExperimentInfo, Variant } from '../../engine/types';
import { sweepOf, type SweepHandle, type ViewProps } from '../types';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, MEASURED, NEUTRAL, fmtMs, fmtNum, fmtOrdinal } from '../common';
import {
  callNear,
  fmtBytes,
  layoutCallChart,
  layoutCreationSweep,
  layoutRecordsChart,
  layoutStrip,
  readSparseDetails,
  sweepSpawns,
  type CreationRow,
  type SparseDetails,
} from './model';

interface PanelProps {
  info: ExperimentInfo;
  variant: Variant;
  d: SparseDetails;
  cpMs: number | undefined;
  /** the run's count_range_bits calls that started at the cached state, and those that could not */
  stateHits?: number;
  stateMisses?: number;
  cursor: number; // fraction of the file
  usMax: number;
  recMax: number;
  params: Record<string, string>;
  reference: boolean;
}

/** The after kernel's patches whose switch is off ("series without 1/9, 6/9"), from the patches the engine lists. */
export function seriesLabel(info: ExperimentInfo, params: Record<string, string>): string {
  const off = (info.patches ?? []).filter((p) => p.switch && (params[p.switch] === '0' || params[p.switch] === 'false')).map((p) => p.series);
  return off.length ? `series without ${off.join(', ')}` : 'whole series';
}

/**
 * How the call's delalloc searches began. A call that searched none (the
 * fs tree answered it, or the file has no delalloc: count_range_bits is
 * not called) has no cached state to use; 6.1 passes none, so its searches
 * descend from the root; 6.2 with 6/9 and 9/9 starts at the cached record
 * (a hit) or descends when it cannot (a miss).
 */
export function cachedText(call: { cacheHit: number; cacheMiss: number; searchRecords: number }): string {
  const { cacheHit: h, cacheMiss: m } = call;
  if (h && m) return `cached state: ${h} ${h === 1 ? 'hit' : 'hits'}, ${m} ${m === 1 ? 'miss' : 'misses'}`;
  if (h) return `cached state: ${h === 1 ? 'hit' : `${h} hits`}`;
  if (m) return `cached state: ${m === 1 ? 'a miss' : `${m} misses`} (searched from the root)`;
  if (call.searchRecords > 0) return 'no cached state: searched from the root';
  return 'no delalloc search';
}

function Panel({ info, variant, d, cpMs, stateHits, stateMisses, cursor, usMax, recMax, params, reference }: PanelProps) {
  const color = KERNEL_COLOR[variant];
  const curOff = cursor * d.fileBytes;
  const ci = callNear(d.calls, curOff);
  const call = ci >= 0 ? d.calls[ci] : undefined;
  return (
    <ChartFigure
      testId={`sparsecp-panel-${variant}`}
      className={`sparsecp-panel${reference ? ' figure-reference' : ''}`}
      exportName={`sparse-cp-${variant}`}
      data={{ variant }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[variant] }}>{KERNEL_LABEL[variant]}</strong>
          {reference && <span className="ref-badge">reference</span>} · {variant === 'after' ? seriesLabel(info, params) : `kernel ${info.kernels?.before ?? ''}`} · cp {cpMs !== undefined ? fmtMs(cpMs) : '–'}
        </>
      }
      note={
        <>
          delalloc extents when cp started {fmtNum(d.summary.delalloc_extents_at_cp)} · most io_tree records {fmtNum(d.summary.iotree_records_max)} · file written in {fmtNum(d.summary.create_s)} s
          {stateHits !== undefined && (
            <span data-testid={`sparsecp-state-hits-${variant}`}>
              {' '}
              · cached-state hits {fmtNum(stateHits)}, misses {fmtNum(stateMisses ?? 0)}
            </span>
          )}
          {d.stride > 1 ? ` · every ${fmtOrdinal(d.stride)} call shown` : ''}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(240, boxWidth);
        const strip = layoutStrip(d, width);
        const calls = layoutCallChart(d.calls, d.fileBytes, width, Math.round(theme.fontPx * 12), usMax, theme.fontPx);
        const recs = layoutRecordsChart(d.iotree, width, Math.round(theme.fontPx * 10), recMax, theme.fontPx);
        const cx = d.fileBytes > 0 ? (curOff / d.fileBytes) * width : 0;
        const callX = call && calls.xOf ? calls.xOf(call.off) : 0;
        return (
          <>
            <svg className="chart" data-variant={variant} width={width} height={34} viewBox={`0 0 ${width} 34`} role="img" aria-label="the file: extents, holes and the lseek cursor" data-testid={`sparsecp-strip-${variant}`}>
              {strip.map((c, i) => (
                <g key={i}>
                  <rect x={c.x} y={8} width={Math.max(0.5, c.w)} height={20} fill={NEUTRAL.faint} />
                  <rect x={c.x} y={8 + 20 * (1 - c.data)} width={Math.max(0.5, c.w)} height={20 * c.data} fill={NEUTRAL.mid} />
                  {c.delalloc > 0 && <rect x={c.x} y={1} width={Math.max(0.5, c.w)} height={5} fill={NEUTRAL.strong} opacity={c.delalloc} />}
                </g>
              ))}
              <line x1={cx} x2={cx} y1={0} y2={34} stroke={MEASURED} strokeWidth={3} data-testid={`sparsecp-cursor-${variant}`} />
            </svg>
            <div className="sparsecp-call" data-testid={`sparsecp-call-${variant}`} data-hl-key="lseek-call">
              {call ? (
                <>
                  lseek({fmtBytes(call.off)}, SEEK_{call.whence.toUpperCase()}): <strong data-testid={`sparsecp-records-${variant}`}>{fmtNum(call.lockRecords + call.searchRecords)}</strong>{' '}
                  {call.lockRecords + call.searchRecords === 1 ? 'record' : 'records'}
                  <span className="muted">
                    {' '}
                    (range lock + unlock {fmtNum(call.lockRecords)}, delalloc search {fmtNum(call.searchRecords)})
                  </span>
                  {' · '}
                  <span data-testid={`sparsecp-cached-${variant}`}>{cachedText(call)}</span>
                  {' · '}
                  {fmtNum(call.us)} µs
                </>
              ) : (
                <span className="muted">no lseek calls recorded</span>
              )}
            </div>
            <svg className="chart" data-variant={variant} data-pair="sp-calls" width={width} height={calls.height} viewBox={`0 0 ${width} ${calls.height}`} role="img" aria-label="time per lseek against the file offset" data-testid={`sparsecp-calls-${variant}`}>
              <Axes {...calls} clampEnds xTitle={calls.xTitle} yTitle={calls.yTitle} />
              {calls.dots.map((p) => (
                <circle key={p.i} cx={p.x} cy={p.y} r={theme.focus ? 2.6 : 1.8} fill={color} opacity={0.6} data-hl-key="lseek-times" />
              ))}
              {call && <line x1={callX} x2={callX} y1={calls.margin.top} y2={calls.height - calls.margin.bottom} stroke={MEASURED} strokeWidth={2} strokeDasharray="4 3" />}
            </svg>
            <svg className="chart" data-variant={variant} data-pair="sp-iotree" width={width} height={recs.height} viewBox={`0 0 ${width} ${recs.height}`} role="img" aria-label="io_tree records during the copy" data-testid={`sparsecp-iotree-${variant}`}>
              <Axes {...recs} clampEnds xTitle={recs.xTitle} yTitle={recs.yTitle} />
              <path d={recs.path} fill="none" stroke={color} strokeWidth={theme.strokePx} />
            </svg>
          </>
        );
      }}
    </ChartFigure>
  );
}

/**
 * The delalloc state's creation-speed sweep: both kernels at a few spawn_us
 * around the run's, run by the app (registry: CREATION_SWEEP). How much delalloc is left at cp
 * time depends on where creation ends against the flusher's ticks, and
 * cp's time on that; the published rows are drawn as lines, so one sees
 * which creation each of them needs and what the series changes at equal
 * creation.
 */
function CreationSweep({ info, params, sweep }: { info: ExperimentInfo; params: Record<string, string>; sweep: SweepHandle<CreationRow> }) {
  const spawns = sweepSpawns(Number(params.spawn_us), Number(info.params.find((q) => q.name === 'spawn_us')?.default));
  const { rows, state, err, run, stop } = sweep;
  // the published rows apply whatever spawn_us is: it is the lab's fitted
  // constant, not part of the published setup
  const { spawn_us: _spawn, ...setup } = params;
  const refs = (['before', 'after'] as const).flatMap((v) =>
    publishedFor(info.published, 'cp_ms', v, info.params, setup)
      .filter((m) => m.differs.length === 0)
      .map((m) => ({ variant: v, value: m.row.value })),
  );
  const worst = rows.reduce((w, r) => Math.max(w, Math.abs(r.beforeMs / r.afterMs - 1)), 0);
  return (
    <ChartFigure
      testId="sparsecp-sweep"
      exportName="sparse-cp-creation-sweep"
      data={{ state }}
      title={<>Creation speed sweep: both kernels at spawn_us {spawns.join(', ')}</>}
      actions={
        <SweepButton
          state={state}
          done={rows.length}
          total={sweep.total}
          label="Run sweep"
          testId="sparsecp-sweep-run"
          onRun={run}
          onStop={stop}
        />
      }
      legend={
        rows.length > 0
          ? [
              { label: KERNEL_LABEL.before, color: KERNEL_COLOR.before, shape: 'line' },
              { label: KERNEL_LABEL.after, color: KERNEL_COLOR.after, shape: 'line' },
              ...(refs.length > 0 ? [{ label: 'published (dashed, in its kernel\'s colour)', color: NEUTRAL.dark, shape: 'dash' as const }] : []),
            ]
          : undefined
      }
      note={
        <>
          Each point is a whole run: creation, then cp. Creation&apos;s length sets how much was written after the flusher&apos;s last expiry pass (the delalloc cp finds); each lseek&apos;s range lock walks all the
          delalloc ahead of it.{rows.length > 0 ? ` At equal creation the two kernels differ by at most ${fmtNum(worst * 100)}% here.` : ''}{' '}
          {refs.length > 0
            ? 'The published before and after rows (dashed) came from two separate runs: where a dashed line crosses the curves is the creation that run needed.'
            : 'No published row applies to these parameters (the seed withholds its 512M and 1G rows): these are predictions.'}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(320, Math.min(1100, boxWidth));
        const L = layoutCreationSweep(rows, refs, width, Math.round(theme.fontPx * 16), theme.fontPx);
        return (
          <>
            {err && <p className="error">{err}</p>}
            {rows.length > 0 && (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="cp time against creation time, both kernels" data-testid="sparsecp-sweep-chart">
                <Axes {...L} clampEnds xTitle={L.xTitle} yTitle={L.yTitle} />
                {L.refs.map((r) => (
                  <g key={r.variant} data-testid={`sparsecp-sweep-pub-${r.variant}`}>
                    <line x1={L.margin.left} x2={width - L.margin.right} y1={r.y} y2={r.y} stroke={KERNEL_COLOR[r.variant]} strokeDasharray="6 4" strokeWidth={2} />
                    <text x={L.margin.left + 6} y={r.y - 5} className="marker-label" fontSize={theme.fontPx}>
                      published {r.variant}: {fmtMs(r.value)}
                    </text>
                  </g>
                ))}
                {L.series.map((s) => (
                  <PointSeries
                    key={s.variant}
                    d={s.d}
                    color={KERNEL_COLOR[s.variant]}
                    points={s.points}
                    r={s.variant === 'before' ? 6 : 4}
                    testId={`sparsecp-sweep-pt-${s.variant}`}
                    title={(p) => `${KERNEL_LABEL[s.variant]}: spawn_us ${p.row.spawnUs}, creation ${fmtNum(p.row.createS)} s, ${fmtNum(p.row.delalloc)} delalloc extents left, cp ${fmtMs(p.v)}`}
                  />
                ))}
              </svg>
            )}
            {rows.length > 0 && (
              <table className="metrics prose" data-testid="sparsecp-sweep-table">
                <ColumnHeads
                  cols={['spawn_us', 'creation', 'delalloc left', { label: 'before', color: KERNEL_TEXT.before }, { label: 'after', color: KERNEL_TEXT.after }, 'before / after']}
                />
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.spawnUs} data-testid="sparsecp-sweep-row">
                      <td className="num">{r.spawnUs}</td>
                      <td className="num">{fmtNum(r.createS)} s</td>
                      <td className="num">{fmtNum(r.delalloc)}</td>
                      <td className="num">{fmtMs(r.beforeMs)}</td>
                      <td className="num">{fmtMs(r.afterMs)}</td>
                      <td className="num">{(r.beforeMs / r.afterMs).toFixed(3)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        );
      }}
    </ChartFigure>
  );
}

export function SparseCpView(props: ViewProps) {
  const { info, params, runs, reference, view, onView } = props;
  const sweep = sweepOf<CreationRow>(props, 'creation');
  // the lseek cursor: in the URL on the experiment page (v.cursor), local in a lesson
  const [localCursor, setLocalCursor] = useState(0.25);
  const urlCursor = Number(view?.cursor);
  const cursor = onView && Number.isFinite(urlCursor) && urlCursor >= 0 && urlCursor <= 1 && view?.cursor !== undefined ? urlCursor : localCursor;
  const setCursor = (c: number): void => {
    if (onView) onView({ cursor: c === 0.25 ? undefined : String(c) });
    else setLocalCursor(c);
  };
  const variants = (['before', 'after'] as Variant[]).filter((v) => runs[v]);
  if (variants.length === 0) return null;
  const data = variants.map((v) => readSparseDetails(runs[v]?.details));
  const first = data[0];
  if (!first) return null;
  const usMax = Math.max(10, ...data.flatMap((d) => d.calls.map((c) => c.us)));
  const recMax = Math.max(1, ...data.flatMap((d) => d.iotree.map((p) => p[1])));
  return (
    <section className="sparsecp-view" data-testid="sparsecp-view">
      <label className="sparsecp-cursor">
        lseek cursor{onView ? " (one with the lseek picture's)" : ''}: <strong>{fmtBytes(cursor * (first.fileBytes || 0))}</strong>{' '}
        <input
          type="range"
          min={0}
          max={1000}
          value={Math.round(cursor * 1000)}
          onChange={(e) => setCursor(Number(e.currentTarget.value) / 1000)}
          aria-label="lseek cursor position in the file"
          data-testid="sparsecp-slider"
        />
      </label>
      <div className="pair-grid">
        {variants.map((v, i) => (
          <Panel key={v} info={info} variant={v} d={data[i] ?? first} cpMs={runs[v]?.metrics.cp_ms} stateHits={runs[v]?.metrics.state_cache_hits} stateMisses={runs[v]?.metrics.state_cache_misses} cursor={cursor} usMax={usMax} recMax={recMax} params={params} reference={v === reference} />
        ))}
      </div>
      <p className="muted prose">
        The strip is the file: grey, data in each stretch; dark above it, extents still delalloc when cp started; the black line, the cursor. Each lseek locks the io_tree from its offset to EOF;
        the records it walks are the ones ahead of the cursor.
      </p>
      {sweep && sweep.total > 0 && <CreationSweep info={info} params={params} sweep={sweep} />}
    </section>
  );
}
