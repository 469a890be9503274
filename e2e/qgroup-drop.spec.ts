/*
 * qgroup-drop.spec.ts - seed 002 in the browser: the experiment page draws
 * the commit timeline and runs the threshold sweep through the engine
 * worker. (Its lesson is played by lessons-play.spec.ts.)
 */
import { expect, test } from './fixtures';

test('the qgroup-drop page draws the commits and runs the threshold sweep', async ({ lab }) => {
  test.setTimeout(180_000);
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=4&p.files=128&p.threshold=256');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await test.step('the picture of the runs', async () => {
    await expect(page.getByTestId('qgroup-view')).toBeVisible();
    await expect(page.getByTestId('qg-commits-before').getByTestId('qg-commit-bar')).toHaveCount(1);
    expect(await page.getByTestId('qg-commits-after').getByTestId('qg-commit-bar').count()).toBeGreaterThan(3);
    await expect(page.getByTestId('qg-dirty-after')).toBeVisible();
    expect(await page.getByTestId('qg-leaf').count()).toBeGreaterThan(1);
    await expect(page.getByTestId('qg-rec-data_extents')).toContainText('1,024');
  });
  await test.step('the sweep runs every threshold through the worker', async () => {
    await page.getByTestId('qg-sweep-run').click();
    await expect(page.getByTestId('qg-sweep')).toHaveAttribute('data-state', 'done', { timeout: 120_000 });
    await expect(page.getByTestId('qg-sweep-row')).toHaveCount(6);
    await expect(page.getByTestId('qg-sweep-counts')).toBeVisible();
    await expect(page.getByTestId('qg-sweep-ms')).toBeVisible();
    await expect(page.getByTestId('qg-sweep-pt-calls')).toHaveCount(6);
    // no threshold: one call
    await expect(page.getByTestId('qg-sweep-row').last().locator('td').nth(1)).toHaveText('1');
  });
  expect(lab.consoleErrors).toEqual([]);
});

test('qgroup-drop: → and ← step the threshold through the RFC table, each run', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=4&p.files=128');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  const threshold = page.getByTestId('param-threshold');
  await expect(threshold).toHaveValue('4096');
  await page.keyboard.press('ArrowRight');
  await expect(threshold).toHaveValue('8192');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await page.keyboard.press('p');
  await page.keyboard.press('p');
  await expect(threshold).toHaveValue('2048');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  expect(page.url()).toContain('p.threshold=2048');
  expect(page.url()).toContain('p.files=128'); // the rest of the setting stays
});
