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

export { expect };
