/*
 * SpreadStrip.tsx - one metric over the seeds: a row per kernel on one x
 * axis, a dot per run (the page's own outlined), the 5-95% band, the
 * median and the published figure as a dashed line (web/model/seedStrip.ts
 * lays it out). Drawn by "Run ×20" and by the headline for a noisy figure.
 */
import { labelWidth } from '../../model/axis';
import { fmtNum, fmtUnit } from '../../model/format';
import type { StripLayout } from '../../model/seedStrip';
import { Axes } from './Axes';
import { KERNEL_COLOR, KERNEL_SHORT, KERNEL_TEXT, MEASURED } from './palette';

export function SpreadStrip({ layout: l, unit, current }: { layout: StripLayout; unit: string; /** the page's own run: its dot outlined */ current?: number }) {
  const r = Math.max(3, l.fontPx * 0.28);
  const bandH = l.rowHeight * 0.7;
  return (
    <svg className="chart seed-strip" width={l.width} height={l.height} role="img" aria-label={l.xTitle}>
      <Axes {...l} xTitle={l.xTitle} xGrid clampEnds />
      {l.rows.map((row) => (
        <g key={row.variant} data-variant={row.variant} data-testid={`strip-${row.variant}`}>
          <text x={l.margin.left - l.fontPx * 0.5} y={row.y} dy="0.35em" textAnchor="end" fontSize={l.fontPx} fill={KERNEL_TEXT[row.variant]}>
            {KERNEL_SHORT[row.variant]}
          </text>
          {row.band && (
            <rect
              className="seed-band"
              x={row.band.x0}
              y={row.y - bandH / 2}
              width={Math.max(1, row.band.x1 - row.band.x0)}
              height={bandH}
              fill={KERNEL_COLOR[row.variant]}
              fillOpacity={0.16}
            >
              <title>{`5-95% of ${row.spread?.n} runs: ${fmtNum(row.spread?.p5)} to ${fmtNum(row.spread?.p95)}${fmtUnit(unit) ? ` ${fmtUnit(unit)}` : ''}`}</title>
            </rect>
          )}
          {row.dots.map((d) => (
            <circle
              key={d.seed}
              className="seed-dot"
              cx={d.x}
              cy={d.y}
              r={d.seed === current ? r * 1.25 : r}
              fill={KERNEL_COLOR[row.variant]}
              fillOpacity={0.75}
              stroke={d.seed === current ? '#000' : undefined}
              strokeWidth={d.seed === current ? 2 : undefined}
              data-current={d.seed === current ? '1' : undefined}
            >
              <title>{`${d.seed === current ? 'this run, ' : ''}random seed ${d.seed}: ${fmtNum(d.value)}${fmtUnit(unit) ? ` ${fmtUnit(unit)}` : ''}`}</title>
            </circle>
          ))}
          {row.median !== null && (
            <line className="seed-median" x1={row.median} x2={row.median} y1={row.y - bandH / 2} y2={row.y + bandH / 2} stroke={KERNEL_COLOR[row.variant]} strokeWidth={3}>
              <title>{`median ${fmtNum(row.spread?.p50)}`}</title>
            </line>
          )}
          {row.published && (
            <g className="seed-published" data-inside={row.published.inside ? '1' : '0'} data-value={row.published.value}>
              <line x1={row.published.x} x2={row.published.x} y1={row.y - l.rowHeight / 2 + 2} y2={row.y + l.rowHeight / 2 - 2} stroke={MEASURED} strokeWidth={2} strokeDasharray="5 3" />
              {(() => {
                const text = `published ${fmtNum(row.published.value)}`;
                // smaller than the ticks, but never under a projector's 24 px
                const labelPx = l.fontPx >= 24 ? l.fontPx : l.fontPx * 0.8;
                // the label stays inside the chart: left of a line near the right edge
                const left = row.published.x + labelWidth(text, labelPx) + l.fontPx > l.width - l.margin.right / 2;
                return (
                  <text x={row.published.x} y={row.y - l.rowHeight / 2 + 2} dy="0.9em" dx={left ? '-0.3em' : '0.3em'} textAnchor={left ? 'end' : 'start'} fontSize={labelPx} fill={MEASURED}>
                    {text}
                  </text>
                );
              })()}
            </g>
          )}
        </g>
      ))}
    </svg>
  );
}

