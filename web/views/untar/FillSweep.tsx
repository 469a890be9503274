/*
 * FillSweep.tsx - "when does it bite?": the untar on the page's device and
 * file system with more and more of it already in chunks, both kernels at
 * each point (registry: FILL_SWEEP). Untar time against fs_used_gib, and a
 * table of the limit against what the untar reserves: 5.10 loses only once
 * the limit drops below the reservations of the files it holds dirty.
 * Drawing only: the layout comes from ./fill.ts.
 */
import { SweepButton } from '../common/SweepButton';
import { ColumnHeads, PointSeries } from '../SweepParts';
import type { SweepHandle } from '../types';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, NEUTRAL, fmtNum } from '../common';
import { biteAt, fillPoints, layoutFillSweep, unhinderedGib, type FillRow } from './fill';

export function FillSweep({ params, sweep }: { params: Record<string, string>; sweep: SweepHandle<FillRow> }) {
  const points = fillPoints(Number(params.fs_gib), Number(params.fs_used_gib));
  const { rows, state, err, run, stop } = sweep;
  const need = unhinderedGib(rows);
  const bite = biteAt(rows);
  return (
    <ChartFigure
      testId="untar-fill"
      exportName="untar-fill-sweep"
      data={{ state, bite: bite === undefined ? '' : String(bite) }}
      title={<>When does it bite? Both kernels with fs_used_gib {points.join(', ')} of the {params.fs_gib} GiB</>}
      actions={<SweepButton state={state} done={rows.length} total={sweep.total} label="Run sweep" testId="untar-fill-run" onRun={run} onStop={stop} />}
      legend={
        rows.length > 0
          ? [
              { label: KERNEL_LABEL.before, color: KERNEL_COLOR.before, shape: 'line' },
              { label: KERNEL_LABEL.after, color: KERNEL_COLOR.after, shape: 'line' },
              ...(Number.isFinite(need) ? [{ label: 'the limit meets what the untar reserves (dashed)', color: NEUTRAL.dark, shape: 'dash' as const }] : []),
            ]
          : undefined
      }
      note={
        <>
          Each point is the whole untar, on the same device with that much of it already in (full) chunks. What the untar reserves does not depend on the fill; the limit does: the allocated metadata chunks plus an eighth of the unallocated space.
          {Number.isFinite(need) ? ` Unhindered, the untar holds ${fmtNum(need)} GiB of reservations at its peak;` : ''}
          {bite !== undefined ? ` 5.10 starts to lose at ${bite} GiB in chunks, once the limit is below that.` : rows.length ? ' 5.10 never loses here: the limit stays above what the untar reserves.' : ''}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(320, Math.min(1100, boxWidth));
        const L = layoutFillSweep(rows, width, Math.round(theme.fontPx * 16), theme.fontPx);
        return (
          <>
            {err && <p className="error">{err}</p>}
            {rows.length > 0 && (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="untar time against the space already in chunks, both kernels" data-testid="untar-fill-chart">
                <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} />
                {L.cross && (
                  <g data-testid="untar-fill-cross">
                    <line x1={L.cross.x} x2={L.cross.x} y1={L.margin.top} y2={L.height - L.margin.bottom} stroke={NEUTRAL.dark} strokeDasharray="6 4" strokeWidth={2} />
                    <text x={L.cross.x + 6} y={L.margin.top + theme.fontPx} className="marker-label" fontSize={theme.fontPx}>
                      limit = {fmtNum(need)} GiB
                    </text>
                  </g>
                )}
                {L.series.map((s) => (
                  <PointSeries
                    key={s.variant}
                    d={s.d}
                    color={KERNEL_COLOR[s.variant]}
                    points={s.points}
                    r={s.variant === 'before' ? 6 : 4}
                    testId={`untar-fill-pt-${s.variant}`}
                    title={(p) => `${KERNEL_LABEL[s.variant]}: ${p.row.usedGib} GiB in chunks, limit ${fmtNum(p.row.limitGib)} GiB, ${fmtNum(p.v)} s`}
                  />
                ))}
              </svg>
            )}
            {rows.length > 0 && (
              <table className="metrics prose" data-testid="untar-fill-table">
                <ColumnHeads
                  cols={[
                    'in chunks',
                    'limit',
                    'reserved at the peak',
                    { label: `${KERNEL_LABEL.before}`, color: KERNEL_TEXT.before },
                    { label: `${KERNEL_LABEL.after}`, color: KERNEL_TEXT.after },
                    'before / after',
                    'reclaim cycles',
                  ]}
                />
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.usedGib} data-testid="untar-fill-row">
                      <td className="num">{r.usedGib} GiB</td>
                      <td className="num">{fmtNum(r.limitGib)} GiB</td>
                      <td className="num">{fmtNum(r.peakGib)} GiB</td>
                      <td className="num">{fmtNum(r.beforeS)} s</td>
                      <td className="num">{fmtNum(r.afterS)} s</td>
                      <td className="num">{(r.beforeS / r.afterS).toFixed(2)}</td>
                      <td className="num">
                        {fmtNum(r.cyclesBefore)} → {fmtNum(r.cyclesAfter)}
                      </td>
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
