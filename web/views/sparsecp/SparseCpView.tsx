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
import { useWidth } from '../../app/useWidth';
import { Axes } from '../Axes';
import { fmtNum, fmtOrdinal } from '../../model/format';
import type { Variant } from '../../engine/types';
import type { ViewProps } from '../types';
import { VARIANT_COLOR, VARIANT_LABEL } from '../types';
import { callNear, fmtBytes, layoutCallChart, layoutRecordsChart, layoutStrip, readSparseDetails, type SparseDetails } from './model';

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
            lseek({fmtBytes(call.off)}, SEEK_{call.whence.toUpperCase()}): <strong data-testid={`sparsecp-records-${variant}`}>{fmtNum(call.lockRecords + call.searchRecords)}</strong> records
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

export function SparseCpView({ params, runs }: ViewProps) {
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
    </section>
  );
}
