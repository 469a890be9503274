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
import { engine } from '../../app/engine';
import { SweepButton } from '../../app/SweepButton';
import { tracked, useSweep } from '../../app/useSweep';
import { useWidth } from '../../app/useWidth';
import { Axes } from '../Axes';
import { ColumnHeads, PointSeries } from '../SweepParts';
import { fmtNum, fmtOrdinal } from '../../model/format';
import { publishedFor } from '../../model/provenance';
import type { ExperimentInfo, Variant } from '../../engine/types';
import type { ViewProps } from '../types';
import { VARIANT_COLOR, VARIANT_LABEL } from '../types';
import {
  callNear,
  creationRow,
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
  variant: Variant;
  d: SparseDetails;
  cursor: number; // fraction of the file
  usMax: number;
  recMax: number;
  params: Record<string, string>;
}

function switchesOf(params: Record<string, string>): string {
  const on = (k: string) => params[k] !== '0' && params[k] !== 'false';
  const names: [string, string][] = [
    ['p1_no_hole_uptodate', '1'],
    ['p2_early_exit', '2'],
    ['p3_skip_searches', '3'],
    ['p4_ordered_search', '4'],
    ['p6_cached_state', '6'],
    ['p9_file_cache', '8+9'],
  ];
  const off = names.filter(([k]) => !on(k)).map(([, n]) => n);
  return off.length ? `series without ${off.join(', ')}/9` : 'whole series';
}

function Panel({ variant, d, cursor, usMax, recMax, params }: PanelProps) {
  const [box, boxWidth] = useWidth<HTMLDivElement>(460);
  const width = Math.max(240, boxWidth);
  const color = VARIANT_COLOR[variant];
  const strip = layoutStrip(d, width);
  const curOff = cursor * d.fileBytes;
  const ci = callNear(d.calls, curOff);
  const call = ci >= 0 ? d.calls[ci] : undefined;
  const calls = layoutCallChart(d.calls, d.fileBytes, width, 190, usMax);
  const recs = layoutRecordsChart(d.iotree, width, 150, recMax);
  const cx = d.fileBytes > 0 ? (curOff / d.fileBytes) * width : 0;
  const callX = call && d.fileBytes > 0 ? calls.margin.left + (call.off / d.fileBytes) * (width - calls.margin.left - calls.margin.right) : 0;
  return (
    <figure className="figure sparsecp-panel" data-testid={`sparsecp-panel-${variant}`} style={{ flex: '1 1 420px', minWidth: 0, margin: 0 }}>
      <div ref={box} style={{ width: '100%' }} />
      <figcaption>
        <strong style={{ color }}>{VARIANT_LABEL[variant]}</strong>
        <span className="muted"> · {variant === 'after' ? switchesOf(params) : '6.1'} · cp {d.state}</span>
      </figcaption>
      <svg className="chart" width={width} height={34} viewBox={`0 0 ${width} 34`} role="img" aria-label="the file: extents, holes and the lseek cursor" data-testid={`sparsecp-strip-${variant}`}>
        {strip.map((c, i) => (
          <g key={i}>
            <rect x={c.x} y={6} width={Math.max(0.5, c.w)} height={20} fill="#ddd" />
            <rect x={c.x} y={6 + 20 * (1 - c.data)} width={Math.max(0.5, c.w)} height={20 * c.data} fill="#777" />
            {c.delalloc > 0 && <rect x={c.x} y={2} width={Math.max(0.5, c.w)} height={4} fill="#E69F00" opacity={c.delalloc} />}
          </g>
        ))}
        <line x1={cx} x2={cx} y1={0} y2={34} stroke={color} strokeWidth={2} data-testid={`sparsecp-cursor-${variant}`} />
      </svg>
      <div className="sparsecp-call" data-testid={`sparsecp-call-${variant}`}>
        {call ? (
          <>
            lseek({fmtBytes(call.off)}, SEEK_{call.whence.toUpperCase()}): <strong data-testid={`sparsecp-records-${variant}`}>{fmtNum(call.lockRecords + call.searchRecords)}</strong>{' '}
            {call.lockRecords + call.searchRecords === 1 ? 'record' : 'records'}
            <span className="muted">
              {' '}
              (range lock + unlock {fmtNum(call.lockRecords)}, delalloc search {fmtNum(call.searchRecords)})
            </span>
            {' · '}cached state {call.cacheHit ? <span data-testid={`sparsecp-hit-${variant}`}>hit</span> : call.cacheMiss ? 'miss' : 'not used'}
            {' · '}
            {fmtNum(call.us)} µs
          </>
        ) : (
          <span className="muted">no lseek calls recorded</span>
        )}
      </div>
      <svg className="chart" width={width} height={calls.height} viewBox={`0 0 ${width} ${calls.height}`} role="img" aria-label="time per lseek against the file offset" data-testid={`sparsecp-calls-${variant}`}>
        <Axes {...calls} clampEnds gaps={{ x: 16, y: 6, title: 4 }} xTitle="file offset → time per lseek (log)" />
        {calls.dots.map((p) => (
          <circle key={p.i} cx={p.x} cy={p.y} r={1.6} fill={color} opacity={0.6} />
        ))}
        {call && <line x1={callX} x2={callX} y1={calls.margin.top} y2={calls.height - calls.margin.bottom} stroke="#000" strokeDasharray="3 3" />}
      </svg>
      <svg className="chart" width={width} height={recs.height} viewBox={`0 0 ${width} ${recs.height}`} role="img" aria-label="io_tree records during the copy" data-testid={`sparsecp-iotree-${variant}`}>
        <Axes {...recs} clampEnds gaps={{ x: 16, y: 6, title: 4 }} xTitle="time since cp started → io_tree records" />
        <path d={recs.path} fill="none" stroke={color} strokeWidth={2} />
      </svg>
      <p className="muted">
        delalloc extents when cp started {fmtNum(d.summary.delalloc_extents_at_cp)} · most io_tree records {fmtNum(d.summary.iotree_records_max)} · file written in {fmtNum(d.summary.create_s)} s
        {d.stride > 1 ? ` · every ${fmtOrdinal(d.stride)} call shown` : ''}
      </p>
    </figure>
  );
}

/**
 * The delalloc state's creation-speed sweep: both kernels at a few spawn_us
 * around the run's, through the worker. How much delalloc is left at cp
 * time depends on where creation ends against the flusher's ticks, and
 * cp's time on that; the published rows are drawn as lines, so one sees
 * which creation each of them needs and what the series changes at equal
 * creation.
 */
function CreationSweep({ info, params, seed }: { info: ExperimentInfo; params: Record<string, string>; seed: number }) {
  const [box, boxWidth] = useWidth<HTMLDivElement>(640);
  const spawns = sweepSpawns(Number(params.spawn_us), Number(info.params.find((q) => q.name === 'spawn_us')?.default));
  const { rows, state, err, run, stop } = useSweep('sparsecp-creation', spawns, async (sp: string, onRun): Promise<CreationRow> => {
    const p = { ...params, spawn_us: sp };
    const b = await tracked(engine.run({ experiment: 'sparse-cp', variant: 'before', params: p, seed }), onRun);
    const a = await tracked(engine.run({ experiment: 'sparse-cp', variant: 'after', params: p, seed }), onRun);
    return creationRow(sp, b.metrics, a.metrics);
  }, JSON.stringify([params, seed]));
  // the published rows apply whatever spawn_us is: it is the lab's fitted
  // constant, not part of the published setup
  const { spawn_us: _spawn, ...setup } = params;
  const refs = (['before', 'after'] as const).flatMap((v) =>
    publishedFor(info.published, 'cp_ms', v, info.params, setup)
      .filter((m) => m.differs.length === 0)
      .map((m) => ({ variant: v, value: m.row.value })),
  );
  const width = Math.max(320, Math.min(900, boxWidth));
  const L = layoutCreationSweep(rows, refs, width, 260);
  const worst = rows.reduce((w, r) => Math.max(w, Math.abs(r.beforeMs / r.afterMs - 1)), 0);
  return (
    <figure className="figure" data-testid="sparsecp-sweep" data-state={state} style={{ margin: '1rem 0 0' }}>
      <div ref={box} style={{ width: '100%' }} />
      <figcaption>
        Creation speed sweep (both kernels, these parameters, seed {seed}): spawn_us {spawns.join(', ')}{' '}
        <SweepButton state={state} done={rows.length} total={spawns.length} label="Run sweep" testId="sparsecp-sweep-run" onRun={() => void run()} onStop={stop} />
      </figcaption>
      {err && <p className="error">{err}</p>}
      {rows.length > 0 && (
        <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="cp time against creation time, both kernels" data-testid="sparsecp-sweep-chart">
          <Axes {...L} clampEnds xTitle="how long creation took → cp's time (log)" />
          {L.refs.map((r) => (
            <g key={r.variant} data-testid={`sparsecp-sweep-pub-${r.variant}`}>
              <line x1={L.margin.left} x2={width - L.margin.right} y1={r.y} y2={r.y} stroke={VARIANT_COLOR[r.variant]} strokeDasharray="6 4" strokeWidth={1.5} />
              <text x={L.margin.left + 6} y={r.y - 4} fill={VARIANT_COLOR[r.variant]} fontSize={12}>
                published {r.variant}: {fmtNum(r.value)} ms
              </text>
            </g>
          ))}
          {L.series.map((s) => (
            <PointSeries
              key={s.variant}
              d={s.d}
              color={VARIANT_COLOR[s.variant]}
              points={s.points}
              r={s.variant === 'before' ? 5 : 3.5}
              testId={`sparsecp-sweep-pt-${s.variant}`}
              title={(p) => `${VARIANT_LABEL[s.variant]}: spawn_us ${p.row.spawnUs}, creation ${fmtNum(p.row.createS)} s, ${fmtNum(p.row.delalloc)} delalloc extents left, cp ${fmtNum(p.v)} ms`}
            />
          ))}
        </svg>
      )}
      {rows.length > 0 && (
        <table className="metrics" data-testid="sparsecp-sweep-table">
          <ColumnHeads
            cols={['spawn_us', 'creation', 'delalloc left', { label: 'before', color: VARIANT_COLOR.before }, { label: 'after', color: VARIANT_COLOR.after }, 'before / after']}
          />
          <tbody>
            {rows.map((r) => (
              <tr key={r.spawnUs} data-testid="sparsecp-sweep-row">
                <td className="num">{r.spawnUs}</td>
                <td className="num">{fmtNum(r.createS)} s</td>
                <td className="num">{fmtNum(r.delalloc)}</td>
                <td className="num">{fmtNum(r.beforeMs)} ms</td>
                <td className="num">{fmtNum(r.afterMs)} ms</td>
                <td className="num">{(r.beforeMs / r.afterMs).toFixed(3)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted">
        Each point is a whole run: creation, then cp. Creation's length sets how much was written after the flusher's last expiry pass (the delalloc cp finds) and when its next pass
        comes while cp runs; each lseek's range lock walks all the delalloc ahead of it.{rows.length > 0 ? ` At equal creation the two kernels differ by at most ${(worst * 100).toFixed(1)}% here.` : ''}{' '}
        {refs.length > 0
          ? 'The published before and after rows (dashed) came from two separate runs: where a dashed line crosses the curves is the creation that run needed.'
          : 'No published row applies to these parameters (the seed withholds its 512M and 1G rows): these are predictions.'}
      </p>
    </figure>
  );
}

export function SparseCpView({ info, params, runs, seed }: ViewProps) {
  const [cursor, setCursor] = useState(0.25);
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
        lseek cursor: {fmtBytes(cursor * (first.fileBytes || 0))}{' '}
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
      <div className="sparsecp-panels" style={{ display: 'flex', flexWrap: 'wrap', gap: 16 }}>
        {variants.map((v, i) => (
          <Panel key={v} variant={v} d={data[i] ?? first} cursor={cursor} usMax={usMax} recMax={recMax} params={params} />
        ))}
      </div>
      <p className="muted">
        Grey: data in each stretch of the file; orange above it: extents still delalloc when cp started. Each lseek locks the io_tree from its offset to EOF; the
        records it walks are the ones ahead of the cursor.
      </p>
      {params.state === 'delalloc' && <CreationSweep info={info} params={params} seed={seed ?? 1} />}
    </section>
  );
}
