/*
 * fixtures.ts - the lab page object for the end-to-end tests. Every test
 * gets a page that records console errors, page errors and any request that
 * tries to leave localhost (such requests are aborted and reported), with
 * animations and transitions off.
 */
import { test as base, expect, type Page } from '@playwright/test';
import type {} from '../web/app/testHook';

export interface LabPage {
  page: Page;
  consoleErrors: string[];
  external: string[];
  failed: string[];
  /** Open a hash route ("#/exp/fio") and wait until the engine's list is loaded. */
  open(hash: string): Promise<void>;
}

const LOCAL = /^(http:\/\/(localhost|127\.0\.0\.1)(:\d+)?\/|data:|blob:)/;

export const test = base.extend<{ lab: LabPage }>({
  lab: async ({ page }, use) => {
    const consoleErrors: string[] = [];
    const external: string[] = [];
    const failed: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => {
      if (LOCAL.test(r.url())) failed.push(`${r.url()} ${r.failure()?.errorText ?? ''}`);
    });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (LOCAL.test(url)) return route.continue();
      external.push(url);
      return route.abort('blockedbyclient');
    });
    await page.addInitScript(() => {
      window.addEventListener('DOMContentLoaded', () => {
        const s = document.createElement('style');
        s.textContent = '*,*::before,*::after{transition:none!important;animation:none!important;caret-color:transparent!important}';
        document.head.appendChild(s);
      });
    });
    const lab: LabPage = {
      page,
      consoleErrors,
      external,
      failed,
      async open(hash: string) {
        await page.goto(`/${hash}`);
        await expect.poll(() => page.evaluate(() => window.__lab?.experiments.length ?? 0)).toBeGreaterThan(0);
      },
    };
    await use(lab);
  },
});

/**
 * Play a lesson through in the browser, step by step: guess where the step
 * asks for a prediction (then the verdict shows), else run with `r`; every
 * check passes, the experiment's view (data-testid `view`) and the "why"
 * are drawn; → moves on. `each` runs extra assertions on step i. Returns
 * the number of steps.
 */
export async function playLesson(
  lab: LabPage,
  id: string,
  view: string,
  opts: { guess?: (i: number) => string; each?: (i: number) => Promise<void> } = {},
): Promise<number> {
  const { page } = lab;
  await lab.open(`#/lesson/${id}`);
  const steps = await page.locator('.step-dot').count();
  for (let i = 0; i < steps; i++) {
    await test.step(`step ${i + 1}`, async () => {
      await expect(page).toHaveURL(i === 0 ? new RegExp(`lesson/${id}$`) : new RegExp(`step=${i}`));
      const prediction = page.getByTestId('prediction');
      const predicts = (await prediction.count()) > 0;
      if (predicts) {
        await prediction.fill(opts.guess?.(i) ?? '1000');
        await prediction.press('Enter');
        await prediction.blur();
      } else await page.keyboard.press('r');
      await expect(page.getByTestId('checks')).toBeVisible({ timeout: 60_000 });
      expect(await page.getByTestId('check').count()).toBeGreaterThan(0);
      await expect(page.locator('[data-testid="check"][data-pass="false"]')).toHaveCount(0);
      await expect(page.getByTestId(view)).toBeVisible();
      await expect(page.getByTestId('why')).toBeVisible();
      if (predicts) await expect(page.getByTestId('verdict')).toBeVisible();
      await opts.each?.(i);
      if (i < steps - 1) await page.keyboard.press('ArrowRight');
    });
  }
  const all = await page.evaluate(() => window.__lab?.lessonChecks ?? {});
  expect(Object.keys(all)).toHaveLength(steps);
  expect(Object.values(all).flat().every(Boolean)).toBe(true);
  return steps;
}

export { expect };
