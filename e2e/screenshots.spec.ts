/*
 * Screenshots for people to look at (README, design review): the device view,
 * a lesson step of the device and of sparse-cp, and the qgroup-drop page, at
 * 1280x800 and 1920x1080. Run with SCREENSHOTS=1; the
 * 1280x800 device view is saved as docs/screenshot.png.
 */
import { expect, test } from './fixtures';

test.skip(!process.env.SCREENSHOTS, 'set SCREENSHOTS=1 to take screenshots');

for (const [w, h] of [
  [1280, 800],
  [1920, 1080],
] as const) {
  test(`screenshots at ${w}x${h}`, async ({ lab }) => {
    const { page } = lab;
    await page.setViewportSize({ width: w, height: h });
    await lab.open('#/exp/fio?p.rw=randwrite');
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect(page.getByTestId('cdf-line-sim')).toBeVisible();
    await page.screenshot({ path: `test-results/shots/device-${w}x${h}.png` });
    if (w === 1280) await page.screenshot({ path: 'docs/screenshot.png' });
    await lab.open('#/lesson/ssd-4k-write?step=3');
    await page.getByTestId('prediction').fill('30000');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('checks')).toBeVisible();
    await page.screenshot({ path: `test-results/shots/lesson-${w}x${h}.png` });
    await lab.open('#/lesson/sparse-cp?step=6');
    await page.getByTestId('prediction').fill('15000');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('checks')).toBeVisible({ timeout: 60_000 });
    await page.screenshot({ path: `test-results/shots/lesson-sparse-cp-${w}x${h}.png`, fullPage: true });
    await lab.open('#/exp/qgroup-drop');
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
    await page.screenshot({ path: `test-results/shots/qgroup-drop-${w}x${h}.png`, fullPage: true });
    await lab.open('#/');
    await page.screenshot({ path: `test-results/shots/home-${w}x${h}.png` });
  });
}
