/*
 * SweepParts.tsx - the pieces the sweep charts and tables share (the
 * creation sweep, the threshold sweep, the device fit check): a line with
 * a dot per run, each dot titled, and a table's column heads.
 */
import type { ReactNode } from 'react';

/** A series: its line, and a dot per point carrying a hover title. */
export function PointSeries<P extends { x: number; y: number }>({ d, color, dash, points, r = 4, testId, title }: {
  d: string;
  color: string;
  /** a dash pattern, where several series share the kernel's colour */
  dash?: string;
  points: P[];
  r?: number;
  testId: string;
  title: (p: P) => string;
}) {
  return (
    <g>
      <path d={d} fill="none" stroke={color} strokeWidth={2.5} strokeDasharray={dash} />
      {points.map((p, i) => (
        <circle key={i} cx={p.x} cy={p.y} r={r} fill={color} data-testid={testId}>
          <title>{title(p)}</title>
        </circle>
      ))}
    </g>
  );
}

/** A column head: its text, or its text in a series' colour. */
export type ColumnHead = string | { label: ReactNode; color: string };

/** A table's <thead> from its column heads. */
export function ColumnHeads({ cols }: { cols: ColumnHead[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c, i) =>
          typeof c === 'string' ? (
            <th key={i} scope="col">
              {c}
            </th>
          ) : (
            <th key={i} scope="col" style={{ color: c.color }}>
              {c.label}
            </th>
          ),
        )}
      </tr>
    </thead>
  );
}
