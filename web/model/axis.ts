/*
 * axis.ts - ticks and margins for every chart of the lab, in pixels, from
 * the chart's font size (theme.ts). Pure: the layouts in each view's
 * model.ts call these and the Axes component draws the result.
 *
 * Two rules (web/DESIGN.md): every axis says its unit, in its title
 * ("commit duration (ms)"), and its ticks are bare numbers in that one
 * unit; and no two tick labels overlap: ticks are asked for by the room
 * the axis has, then thinned by their estimated extents, so a chart
 * at 1024 px or at a projector's 26 px font stays readable.
 */
import { fmtNum } from './format';

export interface AxisTick {
  pos: number;
  label: string;
}

export interface Margin {
  top: number;
  right: number;
  bottom: number;
  left: number;
}

/** A chart's frame as the views' model files lay it out: its size, its
 * margins, the ticks and the font it was laid out for. A view's layout
 * extends it with what it draws inside (a path, dots, bars). */
export interface ChartFrame {
  width: number;
  height: number;
  margin: Margin;
  xTicks: AxisTick[];
  yTicks: AxisTick[];
  /** the chart font size (px) the margins and ticks were computed for */
  fontPx: number;
}

/** An axis title with its unit: "commit duration (ms)"; no unit, no brackets. */
export const axisTitle = (label: string, unit?: string): string => (unit ? `${label} (${unit})` : label);

/** Average advance of a character of the chart font, as a fraction of its size
 * (generous: digits of DejaVu Sans are 0.64 em; a label must never be
 * estimated narrower than it is drawn). */
const CHAR_EM = 0.64;

/** The estimated width of a label drawn at fontPx. */
export const labelWidth = (text: string, fontPx: number): number => text.length * CHAR_EM * fontPx;

/**
 * Drop ticks whose labels would touch their neighbour's: along x by the
 * labels' widths (centred on their position), along y by the line height.
 * The first tick always stays; the last stays when it fits (then a
 * neighbour before it goes instead).
 */
export function thinTicks(ticks: AxisTick[], axis: 'x' | 'y', fontPx: number): AxisTick[] {
  if (ticks.length <= 1) return ticks;
  const gap = axis === 'x' ? fontPx * 0.8 : fontPx * 0.35;
  const half = (t: AxisTick): number => (axis === 'x' ? labelWidth(t.label, fontPx) / 2 : fontPx * 0.6);
  const sorted = [...ticks].sort((a, b) => a.pos - b.pos);
  const fits = (a: AxisTick, b: AxisTick): boolean => Math.abs(b.pos - a.pos) >= half(a) + half(b) + gap;
  const out: AxisTick[] = [sorted[0]!];
  for (const t of sorted.slice(1)) if (fits(out[out.length - 1]!, t)) out.push(t);
  const last = sorted[sorted.length - 1]!;
  if (out[out.length - 1] !== last) {
    while (out.length > 1 && !fits(out[out.length - 1]!, last)) out.pop();
    if (fits(out[out.length - 1]!, last)) out.push(last);
  }
  return out;
}

/** How many ticks an axis of `lengthPx` has room for, at fontPx, with labels about `chars` long. */
export function tickCount(lengthPx: number, axis: 'x' | 'y', fontPx: number, chars = 5): number {
  const per = axis === 'x' ? labelWidth('0'.repeat(chars), fontPx) + fontPx * 1.6 : fontPx * 2.6;
  return Math.max(2, Math.floor(lengthPx / per));
}

/** A d3 continuous scale's ticks for an axis of lengthPx, formatted and thinned. */
export function scaleTicks(
  scale: { (v: number): number; ticks(n?: number): number[] },
  axis: 'x' | 'y',
  lengthPx: number,
  fontPx: number,
  fmt: (v: number) => string = fmtNum,
): AxisTick[] {
  const raw = scale.ticks(tickCount(lengthPx, axis, fontPx));
  const chars = Math.max(1, ...raw.map((v) => fmt(v).length));
  const n = tickCount(lengthPx, axis, fontPx, chars);
  const ticks = (n < raw.length ? scale.ticks(n) : raw).map((v) => ({ pos: scale(v), label: fmt(v) }));
  return thinTicks(ticks, axis, fontPx);
}

/** Log-scale ticks at 1, 2, 5 × 10^k (or decades only when they crowd), thinned. */
export function logTicks(
  scale: { (v: number): number; ticks(n?: number): number[]; domain(): number[] },
  axis: 'x' | 'y',
  lengthPx: number,
  fontPx: number,
  fmt: (v: number) => string = fmtNum,
): AxisTick[] {
  const [d0 = 1, d1 = 10] = scale.domain();
  const decades = Math.max(1, Math.log10(d1 / d0));
  const room = tickCount(lengthPx, axis, fontPx);
  const steps = room >= decades * 3 ? [1, 2, 5] : [1];
  const vals: number[] = [];
  for (let e = Math.floor(Math.log10(d0)); e <= Math.ceil(Math.log10(d1)); e++)
    for (const k of steps) {
      const v = k * 10 ** e;
      if (v >= d0 * (1 - 1e-9) && v <= d1 * (1 + 1e-9)) vals.push(v);
    }
  return thinTicks(
    vals.map((v) => ({ pos: scale(v), label: fmt(v) })),
    axis,
    fontPx,
  );
}

/**
 * Margins that fit the y labels, the titles and the x labels at fontPx:
 * left = the widest y label + the rotated y title; bottom = the x labels
 * + the x title.
 */
export function marginsFor(
  fontPx: number,
  yLabels: string[],
  opts: { xTitle?: boolean; yTitle?: boolean; xLabels?: boolean; top?: number; right?: number } = {},
): Margin {
  const { xTitle = true, yTitle = true, xLabels = true } = opts;
  const widest = Math.max(0, ...yLabels.map((l) => labelWidth(l, fontPx)));
  return {
    top: opts.top ?? Math.round(fontPx * 0.9),
    right: opts.right ?? Math.round(fontPx * 1.2),
    bottom: Math.round((xLabels ? fontPx * 1.6 : fontPx * 0.5) + (xTitle ? fontPx * 1.4 : 0)),
    left: Math.round(widest + fontPx * 0.6 + (yTitle ? fontPx * 1.5 : 0) + 4),
  };
}

/**
 * Where an axis title goes so that it is never clipped: centred on its
 * axis, moved inwards when it would run past the chart's edge, and only
 * when it is longer than the whole chart squeezed to fit (textLength) —
 * by how much, `squeeze`, which the design test bounds. `along` is the
 * axis's centre and `room` the chart's extent in the title's direction
 * (width for x, height for a rotated y title).
 */
export function placeTitle(text: string, fontPx: number, along: number, room: number): { at: number; length?: number; squeeze: number } {
  const pad = fontPx * 0.25;
  const w = labelWidth(text, fontPx) * 0.92; // DejaVu's average is under the estimate's
  const space = Math.max(10, room - 2 * pad);
  if (w > space) return { at: room / 2, length: space, squeeze: space / w };
  return { at: Math.min(Math.max(along, pad + w / 2), room - pad - w / 2), squeeze: 1 };
}
