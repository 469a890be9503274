/*
 * screenshots.spec.ts - pixels, where only pixels show it.
 *
 * Two committed references: the home page and the device (fio) page at
 * 1280 px, compared with e2e/__screenshots__/ (1% of the pixels may
 * differ). They catch what no DOM assertion does (fonts, the layout's
 * overall look). Everything else a picture must satisfy (shared scales,
 * legible text, no overlaps, the palette) is asserted on the DOM by the
 * design tests over every page and lesson step (design.spec.ts,
 * projector.spec.ts), and each view's marks are compared as SVG text by
 * Vitest snapshots: a change there reads as a diff, not as a new PNG.
 *
 * The full set (every experiment page and every lesson step, run, at 1024,
 * 1280 and 1920 px) is generated on demand, not committed:
 *
 *     npm run screenshots            # writes screenshots/*.png (ignored by git)
 *     npm run screenshots:update     # rewrites the two references
 *
 * With SCREENSHOTS=1 it also writes docs/screenshot.png (the README's: the
 * sparse-cp page at its defaults, where a patch's difference shows most on
 * first sight: cp two orders of magnitude faster, the published figures
 * beside both bars, the series' nine switches).
 * Deterministic on a fresh machine: the fonts are bundled (DejaVu, from
 * npm), animations and transitions are off (reducedMotion, the fixture's
 * style), the engine is seeded, and the one number that depends on the
 * computer (a run's wall time) is masked.
 */
import type { Locator, Page } from '@playwright/test';
import { WIDTHS, experimentNames, lessonFiles, runStep, settle } from './design';
import { expect, test } from './fixtures';

const masks = (page: Page): Locator[] => [page.locator('.run-feet'), page.locator('.panel-foot')];
const ALL = !!process.env.SCREENSHOTS;
const OUT = 'screenshots';

async function shoot(page: Page, name: string): Promise<void> {
  for (const [w, h] of WIDTHS) {
    await page.setViewportSize({ width: w, height: h });
    await settle(page);
    await page.screenshot({ path: `${OUT}/${name}-${w}.png`, fullPage: true, mask: masks(page) });
  }
}

test('the home page and the device page at 1280 px match their references', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 800 });
  await lab.open('#/');
  await settle(page);
  await expect(page).toHaveScreenshot('home-1280.png', { mask: masks(page), maxDiffPixelRatio: 0.01 });
  await lab.open('#/exp/fio');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  await settle(page);
  await expect(page).toHaveScreenshot('exp-fio-1280.png', { mask: masks(page), maxDiffPixelRatio: 0.01 });
});

test.describe('on demand: every page and lesson step at 1024, 1280 and 1920 px', () => {
  test.skip(!ALL, 'npm run screenshots');

  test('every experiment page and the home page', async ({ lab }) => {
    test.setTimeout(600_000);
    const { page } = lab;
    await lab.open('#/');
    await shoot(page, 'home');
    for (const name of await experimentNames(page)) {
      await test.step(name, async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        await lab.open(`#/exp/${name}`);
        await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
        if (name === 'sparse-cp') {
          await settle(page);
          await page.screenshot({ path: 'docs/screenshot.png', mask: masks(page) });
        }
        await shoot(page, `exp-${name}`);
      });
    }
  });

  for (const { id, steps } of lessonFiles()) {
    test(`lesson ${id}: every step, run`, async ({ lab }) => {
      test.setTimeout(600_000);
      const { page } = lab;
      for (let i = 0; i < steps; i++) {
        await test.step(`step ${i + 1}`, async () => {
          await page.setViewportSize({ width: 1280, height: 800 });
          await lab.open(`#/lesson/${id}?step=${i}`);
          await runStep(page);
          await page.mouse.move(0, 0); // no hover on the button just pressed
          await shoot(page, `lesson-${id}-${i + 1}`);
        });
      }
    });
  }
});
