/*
 * Axes.tsx - the grid, axis lines, tick labels and titles every chart of
 * the lab draws the same way, at the font size its layout was computed
 * for (ChartFrame.fontPx). Positions come from the caller's layout (axis.ts
 * helpers in the views' model files); this only draws them.
 */
import { labelWidth, type ChartFrame } from '../../model/axis';

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
  // a title longer than its axis is squeezed to fit rather than clipped
  const fit = (text: string, room: number) => (labelWidth(text, fontPx) * 0.92 > room ? { textLength: Math.max(10, room), lengthAdjust: 'spacingAndGlyphs' as const } : {});
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
        {xTitle && (
          <text className="axis-title" x={(m.left + width - m.right) / 2} y={height - fontPx * 0.35} textAnchor="middle" {...fit(xTitle, width - fontPx)}>
            {xTitle}
          </text>
        )}
        {yTitle && (
          <text className="axis-title" transform={`translate(${fontPx * 0.95},${(m.top + bottom) / 2}) rotate(-90)`} textAnchor="middle" {...fit(yTitle, bottom - m.top + m.bottom * 0.5)}>
            {yTitle}
          </text>
        )}
      </g>
    </>
  );
}
