/*
 * screenshots.spec.ts - every page of the engine's registry, the home page
 * and every step of every lesson (run), at 1024, 1280 and 1920 px wide,
 * compared with the committed references in e2e/__screenshots__/ (1% of
 * the pixels may differ). The pages and steps are enumerated, so a new
 * experiment or lesson gets references the first time they are made.
 *
 * Regenerate the references after an intended change to the pictures:
 *
 *     npm run screenshots:update
 *
 * Deterministic on a fresh machine: the fonts are bundled (DejaVu, from
 * npm), animations and transitions are off (reducedMotion, the fixture's
 * style), the engine is seeded, and the one number that depends on the
 * computer (a run's wall time) is masked.
 *
 * With SCREENSHOTS=1 it also writes docs/screenshot.png (the README's).
 */
import type { Locator, Page } from '@playwright/test';
import { WIDTHS, experimentNames, lessonFiles, runStep, settle } from './design';
import { expect, test } from './fixtures';

const masks = (page: Page): Locator[] => [page.locator('.run-feet'), page.locator('.panel-foot')];

async function atEveryWidth(page: Page, name: string): Promise<void> {
  for (const [w, h] of WIDTHS) {
    await page.setViewportSize({ width: w, height: h });
    await settle(page);
    await expect(page).toHaveScreenshot(`${name}-${w}.png`, { mask: masks(page), maxDiffPixelRatio: 0.01 });
  }
}

test('every experiment page and the home page, at 1024, 1280 and 1920 px', async ({ lab }) => {
  test.setTimeout(600_000);
  const { page } = lab;
  await lab.open('#/');
  await atEveryWidth(page, 'home');
  for (const name of await experimentNames(page)) {
    await test.step(name, async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await lab.open(`#/exp/${name}`);
      await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
      if (name === 'fio' && process.env.SCREENSHOTS) {
        await settle(page);
        await page.screenshot({ path: 'docs/screenshot.png', mask: masks(page) });
      }
      await atEveryWidth(page, `exp-${name}`);
    });
  }
});

for (const { id, steps } of lessonFiles()) {
  test(`lesson ${id}: every step, run, at 1024, 1280 and 1920 px`, async ({ lab }) => {
    test.setTimeout(600_000);
    const { page } = lab;
    for (let i = 0; i < steps; i++) {
      await test.step(`step ${i + 1}`, async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        await lab.open(`#/lesson/${id}?step=${i}`);
        await runStep(page);
        await page.mouse.move(0, 0); // no hover on the button just pressed
        await atEveryWidth(page, `lesson-${id}-${i + 1}`);
      });
    }
  });
}
