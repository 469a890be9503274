/*
 * Axes.tsx - the grid, axis lines, tick labels and titles every chart of
 * the lab draws the same way, at the font size its layout was computed
 * for (ChartFrame.fontPx). Positions come from the caller's layout (axis.ts
 * helpers in the views' model files); this only draws them.
 */
import { placeTitle, type ChartFrame } from '../../model/axis';

export interface AxesProps extends ChartFrame {
  /** the x title, with its unit (axisTitle) */
  xTitle: string;
  /** drawn rotated along the y axis when given */
  yTitle?: string;
  /** vertical grid lines at the x ticks too (default: horizontal only) */
  xGrid?: boolean;
  /** anchor the first and last x labels inwards so they are never clipped */
  clampEnds?: boolean;
}

export function Axes({ width, height, margin: m, xTicks, yTicks, xTitle, yTitle, xGrid, clampEnds, fontPx }: AxesProps) {
  const bottom = height - m.bottom;
  // a title is centred on its axis, moved inwards rather than clipped at the
  // chart's edge, and squeezed only when longer than the chart (placeTitle)
  const xt = xTitle ? placeTitle(xTitle, fontPx, (m.left + width - m.right) / 2, width) : null;
  const yt = yTitle ? placeTitle(yTitle, fontPx, (m.top + bottom) / 2, height) : null;
  const squeeze = (t: { length?: number } | null) => (t?.length ? { textLength: t.length, lengthAdjust: 'spacingAndGlyphs' as const } : {});
  const anchor = (pos: number): 'start' | 'middle' | 'end' =>
    !clampEnds ? 'middle' : pos > width - m.right - fontPx * 1.5 ? 'end' : pos < m.left + fontPx * 1.5 ? 'start' : 'middle';
  return (
    <>
      <g className="grid">
        {xGrid && xTicks.map((t) => <line key={`x${t.label}${t.pos}`} x1={t.pos} x2={t.pos} y1={m.top} y2={bottom} />)}
        {yTicks.map((t) => (
          <line key={`y${t.label}${t.pos}`} x1={m.left} x2={width - m.right} y1={t.pos} y2={t.pos} />
        ))}
      </g>
      <g className="axis" fontSize={fontPx}>
        <line x1={m.left} x2={width - m.right} y1={bottom} y2={bottom} />
        <line x1={m.left} x2={m.left} y1={m.top} y2={bottom} />
        {xTicks.map((t) => (
          <text key={`x${t.label}${t.pos}`} className="tick tick-x" x={t.pos} y={bottom + fontPx * 1.15} textAnchor={anchor(t.pos)}>
            {t.label}
          </text>
        ))}
        {yTicks.map((t) => (
          <text key={`y${t.label}${t.pos}`} className="tick tick-y" x={m.left - fontPx * 0.45} y={t.pos} dy="0.35em" textAnchor="end">
            {t.label}
          </text>
        ))}
        {xTitle && xt && (
          <text className="axis-title axis-title-x" x={xt.at} y={height - fontPx * 0.35} textAnchor="middle" data-squeeze={xt.squeeze < 1 ? xt.squeeze.toFixed(2) : undefined} {...squeeze(xt)}>
            {xTitle}
          </text>
        )}
        {yTitle && yt && (
          <text className="axis-title axis-title-y" transform={`translate(${fontPx * 0.95},${yt.at}) rotate(-90)`} textAnchor="middle" data-squeeze={yt.squeeze < 1 ? yt.squeeze.toFixed(2) : undefined} {...squeeze(yt)}>
            {yTitle}
          </text>
        )}
      </g>
    </>
  );
}
