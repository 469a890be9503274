/*
 * seedStrip.ts - the layout of "Run ×20": for one metric, a strip per
 * kernel on one shared x axis (web/DESIGN.md: a before/after pair shares
 * its scale): a dot per seed's run, the 5-95% band and the median, and the
 * published figure of that kernel as a vertical line, so "is the published
 * run one the model could have drawn?" is read at a glance. Pure; the
 * component (app/SeedsPanel.tsx) only draws.
 */
import { scaleLinear } from 'd3-scale';
import type { Variant } from '../engine/types';
import { axisTitle, labelWidth, marginsFor, scaleTicks, type ChartFrame } from './axis';
import { spreadOf, type Spread } from './spread';

export interface StripRow {
  variant: Variant;
  /** y of the row's centre line */
  y: number;
  dots: { x: number; y: number; value: number; seed: number }[];
  spread: Spread | null;
  band: { x0: number; x1: number } | null;
  median: number | null;
  /** the kernel's published figure, drawn as a line across its row */
  published: { x: number; value: number; inside: boolean } | null;
}

export interface StripLayout extends ChartFrame {
  rows: StripRow[];
  rowHeight: number;
  xTitle: string;
}

export interface StripInput {
  variant: Variant;
  values: { seed: number; value: number }[];
  published?: number;
}

/**
 * Lay out one metric's strips. Dots that would overlap are stacked up and
 * down from the row's line (a beeswarm by order), so 20 equal runs read as
 * 20, not as one dot.
 */
export function layoutStrip(rowsIn: StripInput[], width: number, fontPx: number, label: string, unit: string): StripLayout {
  const all = rowsIn.flatMap((r) => [...r.values.map((v) => v.value), ...(r.published !== undefined ? [r.published] : [])]).filter(Number.isFinite);
  let lo = all.length ? Math.min(...all) : 0;
  let hi = all.length ? Math.max(...all) : 1;
  if (hi === lo) {
    const pad = Math.abs(hi) * 0.05 || 1;
    lo -= pad;
    hi += pad;
  }
  const rowHeight = Math.round(fontPx * 3.2);
  const names = rowsIn.map((r) => r.variant);
  const m = marginsFor(fontPx, names, { yTitle: false });
  m.left = Math.round(Math.max(...names.map((n) => labelWidth(n, fontPx))) + fontPx);
  const height = m.top + m.bottom + rowHeight * rowsIn.length;
  const x = scaleLinear().domain([lo, hi]).nice().range([m.left, width - m.right]);
  const r = Math.max(3, fontPx * 0.28);
  const rows: StripRow[] = rowsIn.map((row, i) => {
    const y = m.top + rowHeight * (i + 0.5);
    // beeswarm: each dot goes to the nearest free offset from the line
    const placed: { x: number; y: number }[] = [];
    const dots = [...row.values]
      .sort((a, b) => a.value - b.value)
      .map((v) => {
        const px = x(v.value);
        let k = 0;
        let py = y;
        for (;;) {
          const off = (k % 2 === 0 ? 1 : -1) * Math.ceil(k / 2) * r * 1.9;
          py = y + off;
          if (!placed.some((p) => Math.hypot(p.x - px, p.y - py) < r * 1.9) || Math.abs(off) > rowHeight / 2 - r) break;
          k++;
        }
        placed.push({ x: px, y: py });
        return { x: px, y: py, value: v.value, seed: v.seed };
      });
    const spread = spreadOf(row.values.map((v) => v.value));
    return {
      variant: row.variant,
      y,
      dots,
      spread,
      band: spread ? { x0: x(spread.p5), x1: x(spread.p95) } : null,
      median: spread ? x(spread.p50) : null,
      published:
        row.published !== undefined && Number.isFinite(row.published)
          ? { x: x(row.published), value: row.published, inside: !!spread && spread.p5 <= row.published && row.published <= spread.p95 }
          : null,
    };
  });
  return {
    width,
    height,
    margin: m,
    fontPx,
    xTicks: scaleTicks(x, 'x', width - m.left - m.right, fontPx),
    yTicks: [],
    rows,
    rowHeight,
    xTitle: axisTitle(label, unit),
  };
}
