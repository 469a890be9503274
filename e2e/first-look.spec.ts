/*
 * first-look.spec.ts - issue 31's measure, as a student meets the lab:
 * open every experiment page of the engine's registry cold (a fresh load,
 * nothing saved, the page's defaults) and, within the goal of 10 s, see
 * the difference the patch makes in one of the four pictures (the trees,
 * the flush queue, the qgroup commits, the lseek cache hits) or in the
 * headline; a page with one kernel (the device, torture) has its first
 * chart drawn within the same 10 s.
 *
 * What counts as "the kernels differ" is read from the DOM's data, never
 * from a result written here: the headline's bars (before / after not
 * 1.00x), the lseek picture's counts, the qgroup records in the dropped
 * subvolume's transaction, the trees picture's compared figure (bonnie's
 * leaf lock), the flush queue's cycles and pages, the extent items per
 * file. The time measured (from the navigation to the first evidence) is
 * in the test's annotations. The 10 s goal holds on a quiet machine; with
 * the machine loaded (load average above its cores, or CI) the assertion
 * allows up to three times as much, and the annotation says so.
 */
import os from 'node:os';
import type { Page } from '@playwright/test';
import { experimentNames } from './design';
import { expect, test } from './fixtures';

const GOAL_MS = 10_000;

test.afterEach(async ({ lab }) => {
  expect(lab.consoleErrors, 'console errors').toEqual([]);
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
});

/** How much slack the assertion gives the goal: 1 on a quiet machine, 3 under load (CI, load average above the cores). */
function slack(): { factor: number; why: string } {
  const load = os.loadavg()[0] ?? 0;
  const cores = os.cpus().length;
  if (process.env.CI) return { factor: 3, why: 'CI' };
  if (load > cores) return { factor: 3, why: `load average ${load.toFixed(1)} on ${cores} cores` };
  return { factor: 1, why: `load average ${load.toFixed(1)} on ${cores} cores` };
}

interface Evidence {
  /** the headline's bars differ */
  headline: string | null;
  /** one of the four pictures shows the kernels differing */
  picture: string | null;
  /** a page with one kernel: its first chart is drawn */
  chart: string | null;
}

/**
 * The signs on the page, now, that the two kernels differ (or, for a page
 * with one kernel, that its first chart is drawn), each a short name of
 * the evidence, or null.
 */
async function evidence(page: Page): Promise<Evidence> {
  return page.evaluate(() => {
    const q = (sel: string): Element | null => document.querySelector(sel);
    const num = (el: Element | null, attr: string): number => (el ? Number(el.getAttribute(attr)) : NaN);
    const differs = (a: number, b: number): boolean => Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) > 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
    const none = { headline: null, picture: null, chart: null };
    const status = q('[data-testid="run-status"]')?.getAttribute('data-status');
    if (status !== 'done') return none;
    const runs = Object.keys(window.__lab?.lastRun?.results ?? {});
    if (runs.includes('before') && runs.includes('after')) {
      // the headline: both bars drawn, their ratio not 1.00x
      const hb = num(q('[data-testid="headline-bar-before"]'), 'data-value');
      const ha = num(q('[data-testid="headline-bar-after"]'), 'data-value');
      const headline = Number.isFinite(hb) && Number.isFinite(ha) && (ha === 0 ? hb !== 0 : Math.abs(hb / ha - 1) >= 0.005) ? `the headline, ${hb.toPrecision(4)} vs ${ha.toPrecision(4)}` : null;
      const picture = ((): string | null => {
      // lseek cache hits: the counts under the picture
      const lb = q('[data-testid="lseek-counts-before"]');
      const la = q('[data-testid="lseek-counts-after"]');
      for (const k of ['data-state_cache_hits', 'data-lock_records_avg', 'data-search_records_avg'])
        if (differs(num(lb, k), num(la, k))) return `lseek picture ${k.slice(5)} ${num(lb, k)} vs ${num(la, k)}`;
      // qgroup commits: the records the running transaction holds
      const qb = num(q('[data-testid="page-qg-before"]'), 'data-records');
      const qa = num(q('[data-testid="page-qg-after"]'), 'data-records');
      if (differs(qb, qa)) return `qgroup records ${qb} vs ${qa}`;
      // the trees: the figure the picture compares at its moment
      const tr = q('[data-testid="page-trees"]');
      if (tr && differs(num(tr, 'data-before'), num(tr, 'data-after'))) return `trees: ${tr.getAttribute('data-compare')} ${num(tr, 'data-before')} vs ${num(tr, 'data-after')}`;
      // the flush queue: cycles and pages in its window
      const fb = q('[data-testid="untar-queue-before"]');
      const fa = q('[data-testid="untar-queue-after"]');
      for (const k of ['data-cycles', 'data-pages']) if (differs(num(fb, k), num(fa, k))) return `flush queue ${k.slice(5)} ${num(fb, k)} vs ${num(fa, k)}`;
      // receive's extent items per file
      const eb = num(q('[data-testid="extent-items-before"]'), 'data-per-file');
      const ea = num(q('[data-testid="extent-items-after"]'), 'data-per-file');
      if (differs(eb, ea)) return `extent items per file ${eb} vs ${ea}`;
      return null;
      })();
      return { headline, picture, chart: null };
    }
    // one kernel: the page's first chart has marks in it
    const chart = q('[data-testid="results"] svg.chart:not([data-testid="headline-chart"])');
    if (!chart) return none;
    const marks = [...chart.querySelectorAll('path, rect, circle')].filter((e) => (e.tagName === 'path' ? (e.getAttribute('d') ?? '').length > 20 : true));
    return { ...none, chart: marks.length > 2 ? `its first chart (${chart.getAttribute('aria-label') ?? 'a chart'})` : null };
  });
}

test(`every experiment page, opened cold, shows the difference (or its first chart) within the ${GOAL_MS / 1000} s goal`, async ({ lab }, info) => {
  test.setTimeout(900_000);
  const { page } = lab;
  await lab.open('#/');
  const names = await experimentNames(page);
  expect(names.length).toBeGreaterThan(2);
  const { factor, why } = slack();
  const seen: string[] = [];
  for (const name of names) {
    await test.step(name, async () => {
      // cold: a fresh document and nothing saved from the page before
      await page.evaluate(() => localStorage.clear());
      await page.goto('about:blank');
      const t0 = Date.now();
      await page.goto(`/#/exp/${name}`);
      // when each kind of evidence first appeared (ms after the navigation)
      const at: Partial<Record<keyof Evidence, { ms: number; what: string }>> = {};
      const limit = GOAL_MS * factor;
      // wait for the first sign; then, for a page with two kernels, a while
      // longer for a picture if the headline came first (reported, not asserted)
      for (;;) {
        const e = await evidence(page);
        const ms = Date.now() - t0;
        for (const k of ['headline', 'picture', 'chart'] as const) if (e[k] && !at[k]) at[k] = { ms, what: e[k]! };
        if (at.picture || at.chart || ms > limit) break;
        await page.waitForTimeout(150);
      }
      const first = Object.values(at).sort((a, b) => a.ms - b.ms)[0];
      const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
      const line = first
        ? `${name}: ${s(first.ms)} to ${first.what}${at.picture && at.picture !== first ? `; the picture at ${s(at.picture.ms)} (${at.picture.what})` : ''}${at.headline && !at.picture ? '; no picture within the limit' : ''} (goal ${GOAL_MS / 1000} s${factor > 1 ? `, allowed ${limit / 1000} s: ${why}` : ''})`
        : `${name}: nothing within ${limit / 1000} s`;
      info.annotations.push({ type: 'first look', description: line });
      seen.push(line);
      expect(first, line).toBeDefined();
      expect(first!.ms, line).toBeLessThanOrEqual(limit);
    });
  }
  expect(seen.length).toBe(names.length);
});
