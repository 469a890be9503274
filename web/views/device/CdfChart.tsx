/*
 * CdfChart.tsx - draw a latency CDF laid out by model/cdf.ts: a log-x
 * latency axis, percentiles on a nines scale, a line per simulated series
 * and a diamond per measured percentile. Drawing only; no data logic here.
 */
import { useWidth } from '../../app/useWidth';
import { layoutCdf, formatUs, type CdfSeries, type MeasuredMarker } from '../../model/cdf';

interface Props {
  series: (CdfSeries & { color: string; dash?: string })[];
  measured: MeasuredMarker[];
  measuredLabel?: string;
  height?: number;
}

export function CdfChart({ series, measured, measuredLabel, height }: Props) {
  const [box, width] = useWidth<HTMLDivElement>();
  height ??= Math.round(Math.min(420, Math.max(260, width * 0.38)));
  const L = layoutCdf({ width, height, series, measured });
  const { margin: m } = L;
  const bottom = height - m.bottom;
  return (
    <div ref={box} className="chart-box">
    <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Completion latency distribution" data-testid="cdf-chart">
      <g className="grid">
        {L.xTicks.map((t) => (
          <line key={`x${t.label}`} x1={t.pos} x2={t.pos} y1={m.top} y2={bottom} />
        ))}
        {L.yTicks.map((t) => (
          <line key={`y${t.label}`} x1={m.left} x2={width - m.right} y1={t.pos} y2={t.pos} />
        ))}
      </g>
      <g className="axis">
        <line x1={m.left} x2={width - m.right} y1={bottom} y2={bottom} />
        <line x1={m.left} x2={m.left} y1={m.top} y2={bottom} />
        {L.xTicks.map((t) => (
          <text key={t.label} x={t.pos} y={bottom + 22} textAnchor="middle">
            {t.label}
          </text>
        ))}
        {L.yTicks.map((t) => (
          <text key={t.label} x={m.left - 10} y={t.pos} dy="0.35em" textAnchor="end">
            {t.label}
          </text>
        ))}
        <text className="axis-title" x={(m.left + width - m.right) / 2} y={height - 8} textAnchor="middle">
          completion latency (clat), log scale
        </text>
      </g>
      {L.paths.map((p, i) => (
        <path key={p.id} d={p.d} fill="none" stroke={series[i]?.color ?? '#000'} strokeWidth={series[i]?.dash ? 2.5 : 3} strokeDasharray={series[i]?.dash} strokeLinejoin="round" data-testid={`cdf-line-${p.id}`}>
          <title>{p.label}</title>
        </path>
      ))}
      {L.markers.map((mk) => (
        <g key={mk.label} transform={`translate(${mk.x},${mk.y})`} data-testid="cdf-marker">
          <rect x={-6} y={-6} width={12} height={12} transform="rotate(45)" fill="#000" stroke="#fff" strokeWidth={1.5} />
          <text x={10} y={-8} className="marker-label">
            {mk.label} {formatUs(mk.us)}
          </text>
          <title>
            measured {mk.label}: {formatUs(mk.us)}
            {measuredLabel ? ` (${measuredLabel})` : ''}
          </title>
        </g>
      ))}
    </svg>
    </div>
  );
}
