/*
 * Axes.tsx - the grid, axis lines, tick labels and titles every chart of
 * the lab draws the same way. Positions come from the caller's layout
 * (d3 scales in the views' model files); this only draws them, so all
 * charts share one look on a projector.
 */
export interface AxisTick {
  pos: number;
  label: string;
}

/** A chart's frame as the views' model files lay it out: its size, its
 * margins and where the ticks go. A view's layout extends it with what
 * it draws inside (a path, dots, bars). */
export interface ChartFrame {
  width: number;
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
  xTicks: AxisTick[];
  yTicks: AxisTick[];
}

export interface AxesProps extends ChartFrame {
  xTitle: string;
  /** drawn rotated along the y axis when given */
  yTitle?: string;
  /** vertical grid lines at the x ticks too (default: horizontal only) */
  xGrid?: boolean;
  /** anchor the first and last x labels inwards so they are never clipped */
  clampEnds?: boolean;
  /** distances (px) of the x labels below the axis, the y labels left of
   * it, and the x title above the bottom edge */
  gaps?: { x: number; y: number; title: number };
}

export function Axes({ width, height, margin: m, xTicks, yTicks, xTitle, yTitle, xGrid, clampEnds, gaps = { x: 18, y: 8, title: 6 } }: AxesProps) {
  const bottom = height - m.bottom;
  const anchor = (pos: number): 'start' | 'middle' | 'end' =>
    !clampEnds ? 'middle' : pos > width - m.right - 24 ? 'end' : pos < m.left + 24 ? 'start' : 'middle';
  return (
    <>
      <g className="grid">
        {xGrid && xTicks.map((t) => <line key={`x${t.label}${t.pos}`} x1={t.pos} x2={t.pos} y1={m.top} y2={bottom} />)}
        {yTicks.map((t) => (
          <line key={`y${t.label}`} x1={m.left} x2={width - m.right} y1={t.pos} y2={t.pos} />
        ))}
      </g>
      <g className="axis">
        <line x1={m.left} x2={width - m.right} y1={bottom} y2={bottom} />
        <line x1={m.left} x2={m.left} y1={m.top} y2={bottom} />
        {xTicks.map((t) => (
          <text key={`x${t.label}${t.pos}`} x={t.pos} y={bottom + gaps.x} textAnchor={anchor(t.pos)}>
            {t.label}
          </text>
        ))}
        {yTicks.map((t) => (
          <text key={t.label} x={m.left - gaps.y} y={t.pos} dy="0.35em" textAnchor="end">
            {t.label}
          </text>
        ))}
        <text className="axis-title" x={(m.left + width - m.right) / 2} y={height - gaps.title} textAnchor="middle">
          {xTitle}
        </text>
        {yTitle && (
          <text className="axis-title" transform={`translate(12,${(m.top + bottom) / 2}) rotate(-90)`} textAnchor="middle">
            {yTitle}
          </text>
        )}
      </g>
    </>
  );
}
