/*
 * palette.ts - the lab's colours (web/DESIGN.md). Okabe-Ito vermillion and
 * blue belong to the two kernels and to nothing else: a reader who has
 * learnt "orange = before, blue = after" on one page can trust it on every
 * page. Everything inside a kernel's picture (phases, calls, categories) is
 * drawn in neutral greys, ordered by lightness, so it can never be read as
 * a kernel, and stays distinct for every kind of colour blindness.
 */
import type { Variant } from '../../engine/types';

/** The two kernels, and a single simulated run (pages without a patch). */
export const KERNEL_COLOR: Record<Variant, string> = {
  before: '#D55E00',
  after: '#0072B2',
  base: '#009E73',
};

/** The kernels' colours for text (names, values, column heads): the same
 * hues, dark enough for 4.5:1 on the page's backgrounds (WCAG AA); marks
 * (bars, lines, dots) keep KERNEL_COLOR. */
export const KERNEL_TEXT: Record<Variant, string> = {
  before: '#B84F00',
  after: '#0072B2',
  base: '#007A5A',
};

/** Long and short names of the kernels, used in every legend and panel. */
export const KERNEL_LABEL: Record<Variant, string> = {
  before: 'before (no patch)',
  after: 'after (patched)',
  base: 'simulated',
};
export const KERNEL_SHORT: Record<Variant, string> = { before: 'before', after: 'after', base: 'simulated' };

/** Text and axes. */
export const INK = '#111418';
/** A previous run drawn for comparison (dashed): a grey no Okabe-Ito hue is confused with. */
export const GHOST = '#7a8491';
/** What was measured on real hardware, or published: black marks (diamonds). */
export const MEASURED = '#000000';

/** Neutral greys, dark to light, for categories inside a kernel's picture. */
export const NEUTRAL = {
  strong: '#1d1f22',
  dark: '#565c65',
  mid: '#8d939b',
  light: '#bfc4ca',
  faint: '#e3e6ea',
} as const;

/**
 * n sequential greys, light to dark, for ordered categories (the 1st..nth
 * accounting call): neighbours differ in lightness, and the order reads as
 * "earlier = lighter". Never repeats, however many there are.
 */
export function greys(n: number): string[] {
  const lo = 0x2a; // darkest channel value
  const hi = 0xcc; // lightest
  if (n <= 1) return [NEUTRAL.mid]; // one call: a middle grey, so a black outline on it shows
  return Array.from({ length: n }, (_, i) => {
    const c = Math.round(hi - ((hi - lo) * i) / (n - 1));
    const h = c.toString(16).padStart(2, '0');
    return `#${h}${h}${h}`;
  });
}

/** The colours a category palette may not use (the kernels'), for tests. */
export const KERNEL_ONLY = [KERNEL_COLOR.before, KERNEL_COLOR.after, '#E69F00', '#56B4E9'];
