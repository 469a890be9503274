/*
 * UntarView.tsx - seed 000: untar of a Firefox-like tree. When metadata
 * reservations reach the overcommit limit, tar parks on a ticket and the
 * reclaim worker flushes delalloc: 5.10 a few whole inodes per cycle,
 * the fix (and 5.9) pages by the hundred. Pictures, the two kernels on
 * shared scales and one clock, the flush queue first: from the first
 * ticket on, the metadata reserved against the limit, tar parked on its
 * ticket, each reclaim cycle as a mark (pages written against pages asked
 * for, inodes touched; click one for its files), the device's requests in
 * flight; its window named and its counts labelled as the window's. Then
 * the whole run (the window shaded): bytes_may_use against the limit,
 * reclaim cycles per second, delalloc. Drawing only: the layouts come
 * from ./model.ts.
 */
import { useState } from 'react';
import type { Variant } from '../../engine/types';
import { sweepOf, type ViewProps } from '../types';
import { FillSweep } from './FillSweep';
import type { FillRow } from './fill';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, NEUTRAL, fmtBytes, fmtMs, fmtNum } from '../common';
import {
  cycleFiles,
  layoutCycleRate,
  layoutDelalloc,
  layoutQueue,
  layoutSpace,
  queueDomain,
  readUntarDetails,
  spaceDomain,
  windowSummary,
  windowText,
  type UntarDetails,
  type WindowBand,
} from './model';

interface Run {
  v: Variant;
  d: UntarDetails;
  /** the run's own reclaim cycles (the metric), beside the window's */
  cycles: number | undefined;
}

/** The overcommit limit's line: a neutral dashed line (not a kernel, not measured). */
const LIMIT = NEUTRAL.strong;

/** The flush queue's window on a whole-run chart: a light band, labelled. */
function Window({ band, top, bottom, fontPx }: { band: WindowBand | null; top: number; bottom: number; fontPx: number }) {
  if (!band) return null;
  return (
    <g data-testid="untar-window-band">
      <rect x={band.x0} y={top} width={band.x1 - band.x0} height={bottom - top} fill={NEUTRAL.faint} stroke={NEUTRAL.mid} strokeDasharray="3 3" />
      {/* at the foot of the band, where the lines (reservations, delalloc, cycle rates) mostly are not */}
      <text className="marker-label" x={band.x1 + fontPx * 0.25} y={bottom - fontPx * 0.4} fontSize={fontPx}>
        window
      </text>
    </g>
  );
}

function SpacePanel({ run, dom, reference }: { run: Run; dom: { tMax: number; gibMax: number }; reference: boolean }) {
  const { v, d } = run;
  const reached = d.zoom !== null;
  return (
    <ChartFigure
      testId={`untar-space-${v}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`untar-space-${v}`}
      data={{ reached: String(reached) }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[v] }}>{KERNEL_LABEL[v]}</strong>
          {reference && <span className="ref-badge">reference</span>} · peak {fmtNum(d.peakMayUseGib)} GiB of {fmtNum(d.limitGib)} GiB
          {reached ? ', the limit reached' : ', the limit never reached'}
        </>
      }
      legend={[
        { label: 'bytes_may_use (metadata)', color: KERNEL_COLOR[v], shape: 'line' as const, id: 'mu' },
        { label: 'overcommit limit', color: LIMIT, shape: 'dash' as const, id: 'lim' },
      ]}
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutSpace(d, width, Math.round(theme.fontPx * 12), theme.fontPx, dom);
        return (
          <svg className="chart" data-variant={v} data-pair="untar-space" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="metadata reserved against the overcommit limit" data-testid={`untar-space-chart-${v}`}>
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
            <Window band={L.window} top={L.margin.top} bottom={L.height - L.margin.bottom} fontPx={theme.fontPx} />
            <path d={L.limit} fill="none" stroke={LIMIT} strokeWidth={theme.strokePx - 0.5} strokeDasharray="7 5" />
            <path d={L.mayUse} fill="none" stroke={KERNEL_COLOR[v]} strokeWidth={theme.strokePx} data-hl-key="space" />
            {L.reached && <circle cx={L.reached.x} cy={L.reached.y} r={theme.fontPx * 0.35} fill="#fff" stroke={LIMIT} strokeWidth={2} data-testid={`untar-reached-${v}`} />}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function QueuePanel({
  run,
  dom,
  reference,
  selected,
  onSelect,
}: {
  run: Run;
  dom: { ms: number; pagesMax: number; inflightMax: number; roomMib: number };
  reference: boolean;
  selected: number | null;
  onSelect: (i: number) => void;
}) {
  const { v, d } = run;
  const sum = windowSummary(d);
  const total = run.cycles;
  return (
    <ChartFigure
      testId={`untar-queue-${v}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`untar-flush-queue-${v}`}
      data={{ cycles: String(sum.cycles), pages: String(sum.pages), window: windowText(d) }}
      legend={[
        { label: 'metadata reserved', color: KERNEL_COLOR[v], shape: 'line' as const, id: 'mu' },
        { label: 'the limit', color: LIMIT, shape: 'dash' as const, id: 'lim' },
        { label: 'tar asleep on its ticket; the pages a cycle wrote', color: KERNEL_COLOR[v], id: 'mark' },
        { label: 'the pages it asked for', color: NEUTRAL.strong, shape: 'line' as const, id: 'want' },
        { label: 'requests in flight', color: NEUTRAL.strong, shape: 'dash' as const, id: 'io' },
      ]}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[v] }}>{KERNEL_LABEL[v]}</strong>
          {reference && <span className="ref-badge">reference</span>} · in the window: {fmtNum(sum.cycles)} {sum.cycles === 1 ? 'cycle' : 'cycles'}
          {total !== undefined && total !== sum.cycles ? ` (of ${fmtNum(total)} in the run)` : ''}, {sum.cycles ? fmtNum(sum.pages / sum.cycles) : 0} pages each · tar parked {fmtMs(sum.parkedMs)} of {fmtMs(sum.ms)}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutQueue(d, width, theme.fontPx, dom);
        const lane = (k: string) => L.lanes.find((l) => l.key === k);
        const [space, writer, cycles, device] = [lane('space'), lane('writer'), lane('cycles'), lane('device')];
        const x0 = L.margin.left;
        const x1 = width - L.margin.right;
        return (
          <svg className="chart" data-variant={v} data-pair="untar-queue" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="group" aria-label="the flush queue: metadata reserved against the limit, tar's ticket waits, reclaim cycles, requests in flight" data-testid={`untar-queue-chart-${v}`}>
            <Axes {...L} xTitle={L.xTitle} xGrid clampEnds />
            {L.lanes.map((l) => (
              <rect key={`bg${l.key}`} x={x0} y={l.y} width={x1 - x0} height={l.h} fill={NEUTRAL.faint} opacity={0.6} />
            ))}
            <g fontSize={theme.fontPx}>
              {L.lanes.map((l) => (
                <g key={l.key}>
                  <text className="lane-label" x={x0} y={l.y - theme.fontPx * 0.35} data-testid={`untar-lane-${l.key}`}>
                    {l.label}
                  </text>
                  {l.ticks.map((t) => (
                    <g key={`${l.key}${t.label}`}>
                      <line x1={x1} x2={x1 + 4} y1={t.y} y2={t.y} stroke={NEUTRAL.mid} />
                      <text className="tick" x={x1 + theme.fontPx * 0.4} y={t.y} dy="0.35em">
                        {t.label}
                      </text>
                    </g>
                  ))}
                </g>
              ))}
            </g>
            {space && <line x1={x0} x2={x1} y1={L.limitY} y2={L.limitY} stroke={LIMIT} strokeWidth={2} strokeDasharray="7 5" />}
            {space && <path d={L.space} fill="none" stroke={KERNEL_COLOR[v]} strokeWidth={theme.strokePx - 0.5} data-testid={`untar-reserved-${v}`} data-hl-key="space" />}
            {writer &&
              L.parks.map((p, i) => (
                <rect key={`p${i}`} x={p.x} y={writer.y + 2} width={p.w} height={writer.h - 4} fill={KERNEL_COLOR[v]} data-testid={`untar-park-${v}`} data-hl-key="parks">
                  <title>{`tar parked ${fmtMs(p.ms)} on a ticket of ${fmtBytes(p.bytes)}`}</title>
                </rect>
              ))}
            {cycles && <line x1={x0} x2={x1} y1={cycles.y + cycles.h} y2={cycles.y + cycles.h} stroke={NEUTRAL.mid} />}
            {L.marks.map((mk) => {
              const on = selected === mk.i;
              const label = `cycle ${mk.i + 1} at ${fmtMs(mk.t0)}: ${fmtNum(mk.flushed)} pages written of ${fmtNum(mk.wanted)} asked for, ${fmtNum(mk.inodes)} inodes, ${mk.rounds} ${mk.rounds === 1 ? 'round' : 'rounds'}`;
              return (
                <g
                  key={`c${mk.i}`}
                  role="button"
                  tabIndex={0}
                  aria-label={label}
                  aria-pressed={on}
                  className="untar-cycle"
                  data-testid={`untar-cycle-${v}`}
                  data-hl-key="cycles"
                  onClick={() => onSelect(mk.i)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' || e.key === ' ') {
                      e.preventDefault();
                      onSelect(mk.i);
                    }
                  }}
                >
                  <title>{label}</title>
                  <rect x={mk.x} y={mk.yFlushed} width={mk.w} height={Math.max(1, mk.base - mk.yFlushed)} fill={KERNEL_COLOR[v]} stroke={on ? '#000' : '#fff'} strokeWidth={on ? 2.5 : 0.5} />
                  <line x1={mk.x - 2} x2={mk.x + mk.w + 2} y1={mk.yWanted} y2={mk.yWanted} stroke={NEUTRAL.strong} strokeWidth={2} />
                </g>
              );
            })}
            {device && <path d={L.inflight} fill="none" stroke={NEUTRAL.strong} strokeWidth={1.5} strokeDasharray="4 2" data-testid={`untar-inflight-${v}`} />}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function CycleList({ run, i }: { run: Run; i: number }) {
  const c = run.d.zoom?.cycles[i];
  if (!c) return null;
  const files = cycleFiles(c);
  const shown = files.slice(0, 40);
  return (
    <div className="untar-cycle-files" data-testid={`untar-cycle-files-${run.v}`}>
      <h3 style={{ color: KERNEL_TEXT[run.v] }}>
        {KERNEL_LABEL[run.v]}, cycle {i + 1}: {fmtNum(c.flushed)} pages of {fmtNum(c.wanted)} asked for ({c.rounds} {c.rounds === 1 ? 'round' : 'rounds'}), {fmtNum(c.inodes)} inodes, {fmtMs(c.t1 - c.t0)}
      </h3>
      <table className="metrics untar-files">
        <thead>
          <tr>
            <th>file</th>
            <th>size</th>
            <th>pages written</th>
            <th>at</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((f, k) => (
            <tr key={k}>
              <td>
                <code>{f.name}</code>
              </td>
              <td>{fmtBytes(f.size)}</td>
              <td>{f.pages === 0 ? '0 (inline or being written)' : fmtNum(f.pages)}</td>
              <td>{fmtMs(f.at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {files.length > shown.length && <p className="muted">… and {fmtNum(files.length - shown.length)} more files</p>}
    </div>
  );
}

/** The selected cycle per kernel, from the view state ("before:3") or local. */
function parseSel(s: string | undefined): { v: Variant; i: number } | null {
  const m = /^(before|after):(\d+)$/.exec(s ?? '');
  return m ? { v: m[1] as Variant, i: Number(m[2]) } : null;
}

export function UntarView(props: ViewProps) {
  const { runs, reference, view, onView, params } = props;
  const fill = sweepOf<FillRow>(props, 'fill');
  const order: Variant[] = ['before', 'after'];
  const [local, setLocal] = useState<string | undefined>(undefined);
  const all: Run[] = order.filter((v) => runs[v]).map((v) => ({ v, d: readUntarDetails(runs[v]?.details), cycles: runs[v]?.metrics.reclaim_cycles }));
  if (all.length === 0) return null;
  const sel = parseSel(onView ? view?.cycle : local);
  const select = (v: Variant, i: number): void => {
    const key = sel && sel.v === v && sel.i === i ? undefined : `${v}:${i}`;
    if (onView) onView({ cycle: key });
    else setLocal(key);
  };
  const sdom = spaceDomain(all.map((r) => r.d));
  const anyZoom = all.some((r) => r.d.zoom);
  const qdom = queueDomain(all.map((r) => r.d));
  const keyed = all.map((r) => ({ key: r.v, d: r.d }));
  const selRun = sel ? all.find((r) => r.v === sel.v) : undefined;
  const zoomed = all.find((r) => r.d.zoom);
  const d0 = all[0]!.d;
  return (
    <section className="untar-view" data-testid="untar-view">
      <p className="muted prose">
        {fmtNum(d0.files)} files in {fmtNum(d0.dirs)} directories ({fmtNum(d0.archiveMib)} MiB of tar through {d0.decompress === 'none' ? 'no decompressor' : d0.decompress}), mean {fmtBytes(d0.archive.meanBytes)}, {fmtNum(100 * d0.archive.atMost2k)}% of them at most 2 KiB.
      </p>
      {anyZoom ? (
        <>
          <h2 className="view-section-title" data-testid="untar-window">
            The flush queue in {windowText(zoomed!.d)}; its counts are this window&apos;s, the headline&apos;s the whole run&apos;s
          </h2>
          <div className="pair-grid">
            {all.map((r) => (
              <QueuePanel key={r.v} run={r} dom={qdom} reference={r.v === reference} selected={sel && sel.v === r.v ? sel.i : null} onSelect={(i) => select(r.v, i)} />
            ))}
          </div>
          <p className="muted prose untar-queue-note">
            The flush queue from the first ticket on, the same moment in both kernels (they are the same until then), on one clock. Top: the metadata reserved, in MiB below the overcommit limit (the dashed line at 0): a reservation that does not fit becomes a ticket. Then tar, in the kernel&apos;s colour while it sleeps on its ticket. Then each reclaim cycle (a <code>shrink_delalloc</code> call, up to three rounds of flush and wait) as a bar as tall as the pages it wrote, on a log scale, with a black tick at the pages it asked for; click one for its files. Bottom: the device&apos;s requests in flight.
          </p>
          {selRun && sel && <CycleList run={selRun} i={sel.i} />}
        </>
      ) : (
        <p className="notice" data-testid="untar-no-tickets">
          No reservation ever waited: the untar never reached the overcommit limit, so no ticket was queued and reclaim never flushed anything. Both kernels ran the same code path; a file system with more of its space in chunks (fs_used_gib), a smaller one (fs_gib) or DUP metadata brings the limit within reach.
        </p>
      )}

      <div className="pair-grid">
        {all.map((r) => (
          <SpacePanel key={r.v} run={r} dom={sdom} reference={r.v === reference} />
        ))}
      </div>
      <p className="muted prose">
        The whole run; the shaded band is the flush queue&apos;s window. Every file tar writes holds about 640 KiB of metadata reservation (one extent, one checksum leaf, the inode update) until its data is written; a create holds 1.25 MiB more while it runs. Reservations may promise the allocated metadata chunks plus an eighth of the unallocated space (the dashed line). Past it, each reservation becomes a ticket, tar sleeps on it, and the reclaim worker flushes delalloc until the tickets fit.
      </p>

      <div className="pair-grid">
        <ChartFigure
          testId="untar-rate"
          exportName="untar-cycle-rate"
          title="Reclaim cycles per second, over the whole run"
          legend={all.map((r) => ({ label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v], shape: 'line' as const, id: r.v }))}
        >
          {(boxWidth, theme) => {
            const width = Math.max(280, boxWidth);
            const L = layoutCycleRate(keyed, width, Math.round(theme.fontPx * 11), theme.fontPx, sdom.tMax);
            return (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="reclaim cycles per second, both kernels" data-testid="untar-rate-chart">
                <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
                <Window band={L.window} top={L.margin.top} bottom={L.height - L.margin.bottom} fontPx={theme.fontPx} />
                {L.series.map((s) => (
                  <path key={s.key} d={s.d} fill="none" stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx - 0.5} data-testid={`untar-rate-${s.key}`} />
                ))}
              </svg>
            );
          }}
        </ChartFigure>
        <ChartFigure
          testId="untar-delalloc"
          exportName="untar-delalloc"
          title="Delalloc: dirty data not yet allocated"
          legend={all.map((r) => ({ label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v], shape: 'line' as const, id: r.v }))}
          note="Each flush turns delalloc into extents and bios; the reservation comes back when the write completes (an inline file's at once)."
        >
          {(boxWidth, theme) => {
            const width = Math.max(280, boxWidth);
            const L = layoutDelalloc(keyed, width, Math.round(theme.fontPx * 11), theme.fontPx, sdom.tMax);
            return (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="delalloc over the run, both kernels" data-testid="untar-delalloc-chart">
                <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
                <Window band={L.window} top={L.margin.top} bottom={L.height - L.margin.bottom} fontPx={theme.fontPx} />
                {L.series.map((s) => (
                  <path key={s.key} d={s.d} fill="none" stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx - 0.5} />
                ))}
              </svg>
            );
          }}
        </ChartFigure>
      </div>
      {fill && fill.total > 0 && <FillSweep params={params} sweep={fill} />}
    </section>
  );
}
