/*
 * design.ts - what every page must hold to (web/DESIGN.md), as checks the
 * design and screenshot specs run on every page of the engine's registry
 * and every lesson step: no horizontal scroll, the header and the headline
 * pair on screen, no two tick labels overlapping (by their drawn bounding
 * boxes), every chart of a before/after pair on the same y axis, and the
 * numbers a lesson's text states equal to those the page shows.
 */
import fs from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { checkClaim } from '../web/model/lessonClaims';

export const WIDTHS = [
  [1024, 768],
  [1280, 800],
  [1920, 1080],
] as const;

/** The lessons, from the lessons folder the app bundles (not a hand list). */
export function lessonFiles(): { id: string; steps: number }[] {
  return fs
    .readdirSync('lessons')
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => {
      const l = JSON.parse(fs.readFileSync(`lessons/${f}`, 'utf8')) as { id: string; steps: unknown[] };
      return { id: l.id, steps: l.steps.length };
    });
}

/** The experiments of the engine the page loaded. */
export const experimentNames = (page: Page): Promise<string[]> => page.evaluate(() => window.__lab?.experiments ?? []);

/** Layout problems at the current viewport: horizontal scroll, the header or the headline bars off screen. */
export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const w = window.innerWidth;
    const sw = document.documentElement.scrollWidth;
    if (sw > w) out.push(`the page is ${sw} px wide in a ${w} px window`);
    for (const el of document.querySelectorAll('header.top button, header.top a, [data-testid^="headline-bar-"]')) {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && (r.right > w + 0.5 || r.left < -0.5)) out.push(`${el.textContent?.trim() || el.getAttribute('data-testid')} is off screen (${Math.round(r.left)}..${Math.round(r.right)})`);
    }
    return out;
  });
}

/** Tick labels of one axis of one chart that overlap, by their drawn boxes. */
export async function tickOverlaps(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    document.querySelectorAll('svg.chart').forEach((svg, k) => {
      for (const cls of ['tick-x', 'tick-y']) {
        const ts = [...svg.querySelectorAll<SVGTextElement>(`text.${cls}`)].map((t) => ({ t: t.textContent ?? '', r: t.getBoundingClientRect() })).filter((b) => b.r.width > 0);
        for (let i = 0; i < ts.length; i++)
          for (let j = i + 1; j < ts.length; j++) {
            const a = ts[i]!.r;
            const b = ts[j]!.r;
            if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
              out.push(`${svg.getAttribute('aria-label') ?? `chart ${k}`}: "${ts[i]!.t}" overlaps "${ts[j]!.t}"`);
          }
      }
    });
    return out;
  });
}

/** Charts of one before/after pair (data-pair) whose y axes differ: labels or positions. */
export async function pairMismatches(page: Page): Promise<{ pairs: number; bad: string[] }> {
  return page.evaluate(() => {
    const groups = new Map<string, SVGSVGElement[]>();
    for (const svg of document.querySelectorAll<SVGSVGElement>('svg.chart[data-pair]')) {
      const k = svg.getAttribute('data-pair')!;
      groups.set(k, [...(groups.get(k) ?? []), svg]);
    }
    const axis = (svg: SVGSVGElement): string =>
      [...svg.querySelectorAll('text.tick-y')].map((t) => `${t.textContent}@${Math.round(Number(t.getAttribute('y')))}`).join(' ');
    const bad: string[] = [];
    let pairs = 0;
    for (const [k, svgs] of groups) {
      if (svgs.length < 2) continue;
      pairs++;
      const first = axis(svgs[0]!);
      for (const s of svgs.slice(1)) if (axis(s) !== first) bad.push(`${k}: ${s.getAttribute('data-variant')} draws "${axis(s)}", ${svgs[0]!.getAttribute('data-variant')} "${first}"`);
    }
    return { pairs, bad };
  });
}

/**
 * Any text on the page smaller than minPx, by computed font size: chart
 * text, titles, legends, "Look at", buttons (focus mode on a projector:
 * every piece of text the room sees). Hidden elements are skipped.
 */
export async function smallPageText(page: Page, minPx: number): Promise<string[]> {
  return page.evaluate((min) => {
    const out: string[] = [];
    const seen = new Set<Element>();
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent?.trim();
      const el = n.parentElement;
      if (!text || !el || seen.has(el)) continue;
      seen.add(el);
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || el.closest('[hidden], .sr, title, desc')) continue;
      const px = parseFloat(cs.fontSize);
      if (px < min - 0.01) out.push(`"${text.slice(0, 60)}" (${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ')[0]}` : ''}) at ${Math.round(px * 10) / 10} px`);
    }
    return out;
  }, minPx);
}

/**
 * Axis titles that are clipped (their drawn box past their chart's) or
 * squeezed to fit by more than 15% (Axes' placeTitle marks data-squeeze).
 */
export async function clippedAxisTitles(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    for (const t of document.querySelectorAll<SVGTextElement>('svg.chart text.axis-title')) {
      const svg = t.ownerSVGElement;
      const r = t.getBoundingClientRect();
      if (!svg || r.width === 0) continue;
      const s = svg.getBoundingClientRect();
      const name = svg.getAttribute('aria-label') ?? 'a chart';
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1) out.push(`${name}: the axis title "${t.textContent}" is clipped`);
      const q = Number(t.getAttribute('data-squeeze') ?? '1');
      if (q < 0.85) out.push(`${name}: the axis title "${t.textContent}" is squeezed to ${Math.round(q * 100)}%`);
    }
    return out;
  });
}

/** The headline's change in words ("4.06× less") is set no smaller than the values it compares. */
export async function smallHeadlineChange(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const change = document.querySelector('[data-testid="headline-change"]');
    const values = [...document.querySelectorAll('[data-testid^="headline-value-"]')];
    if (!change || values.length === 0) return [];
    const px = (e: Element): number => parseFloat(getComputedStyle(e).fontSize);
    const big = Math.max(...values.map(px));
    return px(change) + 0.01 < big ? [`the change "${change.textContent?.trim()}" is ${px(change)} px, the values ${big} px`] : [];
  });
}

/**
 * The numbers a lesson step's text states about the run ([[…|variant.metric]]),
 * against the same metric as the page shows it (the metrics table's cell,
 * rounded for display): text and picture must agree.
 */
export async function claimsAgainstPage(page: Page): Promise<{ checked: number; bad: string[] }> {
  const claims = await page.evaluate(() =>
    [...document.querySelectorAll('.lesson-text .claim')].map((c) => ({ text: c.textContent ?? '', ref: c.getAttribute('data-claim') ?? '' })),
  );
  const bad: string[] = [];
  let checked = 0;
  for (const c of claims) {
    if (c.ref.includes('@')) continue; // about an earlier step's run, not the picture on screen
    if (c.ref.includes('~')) continue; // a statistic over the step's seeds (sd): no cell shows it; lessons.test.ts checks it against the runs
    const [variant, metric] = c.ref.split('.');
    const cell = page.getByTestId(`cell-${variant}-${metric}`);
    if ((await cell.count()) === 0) {
      bad.push(`"${c.text}": the page shows no ${c.ref}`);
      continue;
    }
    const shown = Number(((await cell.textContent()) ?? '').replace(/,/g, ''));
    const unit = ((await cell.locator('xpath=following-sibling::*[1]').textContent()) ?? '').trim();
    const r = checkClaim({ text: c.text, variant: variant as 'before', metric: metric! }, shown, unit === 'µs' ? 'us' : unit);
    checked++;
    if (!r.ok) bad.push(`the text says "${c.text}", the page shows ${shown} ${unit} (${c.ref})${r.problem ? `: ${r.problem}` : ''}`);
  }
  return { checked, bad };
}

/**
 * Let the page settle after a resize or a mode change: the fonts in, two
 * animation frames (bounded: a frame that never comes under a loaded
 * machine must not hang the suite; the checks then read the layout as it is).
 */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const frames = new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
    await Promise.race([Promise.all([document.fonts.ready, frames]), new Promise((r) => setTimeout(r, 1000))]);
  });
}

/** Run a lesson step from its button and wait for its checks. */
export async function runStep(page: Page): Promise<void> {
  await page.getByTestId('run').click();
  await expect(page.getByTestId('checks')).toBeVisible({ timeout: 120_000 });
}

/** Controls that focus mode's exit button sits on (it once hid the lesson's "open in the lab" link). */
export async function coveredByExit(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const b = document.querySelector('.focus-exit')?.getBoundingClientRect();
    if (!b) return ['no exit-focus button'];
    return [...document.querySelectorAll('a, button, input, select')]
      .filter((e) => !e.classList.contains('focus-exit'))
      .filter((e) => {
        const r = e.getBoundingClientRect();
        return r.width > 0 && r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top;
      })
      .map((e) => e.textContent ?? e.tagName);
  });
}
