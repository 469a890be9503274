/*
 * Playwright end-to-end tests: the built app, served by `vite preview`,
 * driven in Debian's chromium. Retries and forbidOnly only on CI; a trace
 * is kept on the first retry.
 */
import { defineConfig, devices } from '@playwright/test';

const CI = !!process.env.CI;
/* Not npm start's 4173: the suite must run while the lab is being served,
 * and must never test whatever build that server happens to hold. */
const PORT = Number(process.env.LAB_E2E_PORT ?? 4317);

export default defineConfig({
  testDir: 'e2e',
  fullyParallel: false,
  forbidOnly: CI,
  retries: CI ? 2 : 0,
  workers: 1,
  timeout: 60_000,
  expect: { timeout: 20_000, toHaveScreenshot: { animations: 'disabled', caret: 'hide', scale: 'css' } },
  /* one reference per picture (one browser, one platform: CI's is this one) */
  snapshotPathTemplate: '{testDir}/__screenshots__/{arg}{ext}',
  reporter: CI ? 'line' : 'list',
  use: {
    baseURL: `http://localhost:${PORT}/`,
    trace: 'on-first-retry',
    viewport: { width: 1280, height: 800 },
    reducedMotion: 'reduce',
    launchOptions: {
      executablePath: process.env.PW_CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-gpu'],
    },
  },
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'], viewport: { width: 1280, height: 800 } } }],
  webServer: {
    command: `npx vite build && npx vite preview --port ${PORT} --strictPort`,
    url: `http://localhost:${PORT}/`,
    reuseExistingServer: false,
    timeout: 180_000,
  },
});
