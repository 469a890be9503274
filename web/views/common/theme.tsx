/*
 * theme.tsx - the chart theme the app hands every chart: the font size
 * chart text is laid out and drawn at, and the stroke width. Normal pages
 * draw 16 px text; focus mode (a projector) scales it with the window, from
 * 24 px to 26 px at 1920 px wide; the high-contrast projector theme adds 2 px and
 * thicker lines. Layouts take fontPx, so margins grow with the text
 * instead of clipping it.
 */
import { createContext, useContext, useEffect, useState } from 'react';

export interface ChartTheme {
  fontPx: number;
  /** stroke width of a data line */
  strokePx: number;
  focus: boolean;
  contrast: boolean;
}

export const DEFAULT_THEME: ChartTheme = { fontPx: 16, strokePx: 2.5, focus: false, contrast: false };

/** The theme for a window `width` px wide, in focus mode or not, high-contrast or not. */
export function chartTheme(width: number, focus: boolean, contrast: boolean): ChartTheme {
  // focus mode: never under 24 px (the projector's floor), 26 px at 1920
  const base = focus ? Math.min(28, Math.max(24, Math.round(width / 74))) : 16;
  return { fontPx: base + (contrast ? 2 : 0), strokePx: contrast ? 4 : focus ? 3.5 : 2.5, focus, contrast };
}

export const ChartThemeContext = createContext<ChartTheme>(DEFAULT_THEME);

export const useChartTheme = (): ChartTheme => useContext(ChartThemeContext);

/** The window's inner width, kept current. */
export function useWindowWidth(): number {
  const [w, setW] = useState(() => (typeof window === 'undefined' ? 1280 : window.innerWidth));
  useEffect(() => {
    const on = (): void => setW(window.innerWidth);
    window.addEventListener('resize', on);
    return () => window.removeEventListener('resize', on);
  }, []);
  return w;
}

/** Projected text never goes under this (focus mode: the back of a lecture hall). */
export const FOCUS_MIN_PX = 24;

/**
 * A secondary text's size, `f` of the chart font (a tick, a count in a
 * block): on a page that fraction, in focus mode never under FOCUS_MIN_PX
 * (there every text is read from the back of the room).
 */
export function smallPx(theme: ChartTheme, f: number): number {
  const px = theme.fontPx * f;
  return theme.focus ? Math.max(FOCUS_MIN_PX + (theme.contrast ? 2 : 0), px) : px;
}
