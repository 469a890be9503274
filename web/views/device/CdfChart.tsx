/*
 * CdfChart.tsx - draw a latency CDF laid out by model/cdf.ts: a log-x
 * latency axis in one unit, percentiles on a nines scale, a line per
 * simulated series and a diamond per measured percentile (hollow for the
 * same job's other measured runs: larger and beneath, so where two runs
 * agree the filled diamond sits in a ring). Drawing only; no data logic.
 * A <title> gets one string: React renders a title of several children
 * empty on the server (the snapshot test renders there).
 */
import { useWidth } from '../common/useWidth';
import { Axes, useChartTheme } from '../common';
import { layoutCdf, formatUs, type CdfSeries, type MeasuredMarker } from '../../model/cdf';

interface Props {
  series: (CdfSeries & { color: string; dash?: string })[];
  measured: MeasuredMarker[];
  measuredLabel?: string;
  others?: MeasuredMarker[];
  othersLabel?: string;
  height?: number;
}

export function CdfChart({ series, measured, measuredLabel, others, othersLabel, height }: Props) {
  const [box, width] = useWidth<HTMLDivElement>();
  const theme = useChartTheme();
  const fontPx = theme.fontPx;
  height ??= Math.round(Math.min(fontPx * 28, Math.max(fontPx * 17, width * 0.38)));
  const L = layoutCdf({ width, height, series, measured, others, fontPx });
  const { margin: m } = L;
  return (
    <div ref={box} className="chart-box">
      <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Completion latency distribution" data-testid="cdf-chart">
        <Axes width={width} height={height} margin={m} xTicks={L.xTicks} yTicks={L.yTicks} xGrid fontPx={fontPx} xTitle={L.xTitle} yTitle="percentile" />
        {L.paths.map((p, i) => (
          <path
            key={p.id}
            d={p.d}
            fill="none"
            stroke={series[i]?.color ?? '#000'}
            strokeWidth={series[i]?.dash ? theme.strokePx : theme.strokePx + 0.5}
            strokeDasharray={series[i]?.dash}
            strokeLinejoin="round"
            data-testid={`cdf-line-${p.id}`}
            data-hl-key={series[i]?.dash ? undefined : 'latency-curve'}
          >
            <title>{p.label}</title>
          </path>
        ))}
        {L.otherMarkers.map((mk) => (
          <g key={`other-${mk.label}`} transform={`translate(${mk.x},${mk.y})`} data-testid="cdf-marker-other">
            <rect x={-7.5} y={-7.5} width={15} height={15} transform="rotate(45)" fill="#fff" stroke="#000" strokeWidth={2} />
            <text x={mk.side === 'right' ? 10 : -10} y={-8} className="marker-label" fontSize={fontPx} paintOrder="stroke" stroke="#fff" strokeWidth={4} strokeLinejoin="round" textAnchor={mk.side === 'right' ? undefined : 'end'}>
              {formatUs(mk.us)}
            </text>
            <title>{`measured ${mk.label} in another run: ${formatUs(mk.us)}${othersLabel ? ` (${othersLabel})` : ''}`}</title>
          </g>
        ))}
        {L.markers.map((mk) => (
          <g key={mk.label} transform={`translate(${mk.x},${mk.y})`} data-testid="cdf-marker">
            <rect x={-6} y={-6} width={12} height={12} transform="rotate(45)" fill="#000" stroke="#fff" strokeWidth={1.5} />
            <text x={mk.side === 'right' ? 10 : -10} y={-8} className="marker-label" fontSize={fontPx} paintOrder="stroke" stroke="#fff" strokeWidth={4} strokeLinejoin="round" textAnchor={mk.side === 'right' ? undefined : 'end'}>
              {mk.label} {formatUs(mk.us)}
            </text>
            <title>{`measured ${mk.label}: ${formatUs(mk.us)}${measuredLabel ? ` (${measuredLabel})` : ''}`}</title>
          </g>
        ))}
      </svg>
    </div>
  );
}
