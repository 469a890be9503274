/*
 * receive end to end (seed 003): the experiment page draws files received
 * against time, the two timelines with the truncates' tail-page waits
 * (before only) and the disk's requests under them, the time per command
 * type and the extent layout (two extents per file before, one after); a
 * page-aligned size draws no wait in either kernel.
 */
import { expect, test } from './fixtures';

test('receive: tail-page waits before, none after; two extents per file before, one after', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/receive?p.scale=0.02');
  await test.step('run both kernels', async () => {
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect(page.getByTestId('receive-view')).toBeVisible();
  });
  await test.step('the timeline: each truncate waits before the patch, none after', async () => {
    await expect(page.getByTestId('receive-timeline-before')).toHaveAttribute('data-waits', '12');
    await expect(page.getByTestId('receive-timeline-after')).toHaveAttribute('data-waits', '0');
    await expect(page.getByTestId('receive-wait-before')).toHaveCount(12);
    await expect(page.getByTestId('receive-io-before')).toHaveCount(12);
    await expect(page.getByTestId('receive-io-after')).toHaveCount(0);
  });
  await test.step('the extents: two per file before, one after', async () => {
    await expect(page.getByTestId('receive-extents-before')).toHaveAttribute('data-extents', '2');
    await expect(page.getByTestId('receive-extents-after')).toHaveAttribute('data-extents', '1');
  });
  if (process.env.SCREENSHOTS) {
    await page.screenshot({ path: 'test-results/shots/receive-1280.png', fullPage: true });
    for (const id of ['receive-progress', 'receive-timeline-before', 'receive-timeline-after', 'receive-ops', 'receive-rate', 'receive-extents-before', 'receive-extents-after'])
      await page.getByTestId(id).screenshot({ path: `test-results/shots/${id}.png` });
  }
  await test.step('8192 bytes, a whole number of pages: no wait in either kernel', async () => {
    await lab.open('#/exp/receive?p.scale=0.02&p.file_bytes=8192');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect(page.getByTestId('receive-timeline-before')).toHaveAttribute('data-waits', '0');
    await expect(page.getByTestId('receive-extents-before')).toHaveAttribute('data-extents', '1');
  });
  expect(lab.consoleErrors).toEqual([]);
});

test('receive: the headline draws Run ×20 of both kernels beside the published mean ± one sd', async ({ lab }) => {
  test.setTimeout(180_000);
  const { page } = lab;
  // at the seed's size the published means are drawn with their sd
  await lab.open('#/exp/receive');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('headline-published-sd-before')).toHaveCount(1);
  await expect(page.getByTestId('headline-published-sd-after')).toHaveCount(1);
  if (process.env.SHOT_DIR) await page.getByTestId('headline').screenshot({ path: `${process.env.SHOT_DIR}/receive-headline.png` });
  // Run ×20 from the headline, at a small size
  await lab.open('#/exp/receive?p.scale=0.02');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('headline-seeds-before')).toHaveCount(0);
  await page.getByTestId('headline-run-seeds').click();
  await expect(page.getByTestId('headline-seeds-before')).toHaveAttribute('data-n', '20', { timeout: 150_000 });
  await expect(page.getByTestId('headline-seeds-after')).toHaveAttribute('data-n', '20');
  await expect(page.getByTestId('headline-seeds-before').locator('circle')).toHaveCount(20);
  if (process.env.SHOT_DIR) await page.getByTestId('headline').screenshot({ path: `${process.env.SHOT_DIR}/receive-headline-seeds.png` });
  expect(lab.consoleErrors).toEqual([]);
});

test('receive: watch it happen: the received subvolume tree, commands as operations, the kernels part at the first TRUNCATE', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/receive?p.files_per_writer=40&p.writers=2');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('replay-open').click();
  await expect(page.getByTestId('replay')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('tree-view').first()).toBeVisible();
  await test.step('first divergence: the first truncate, where the kernel before the patch writes the tail page', async () => {
    await page.getByTestId('replay-diverge').click();
    await expect(page.getByTestId('replay-op-before')).toContainText('truncate');
  });
  await test.step('the end: the sync has written every file; the tree view draws the received subvolume', async () => {
    await page.getByTestId('replay-scrub').focus();
    await page.keyboard.press('End');
    await expect(page.getByTestId('replay-op-before')).toContainText(/sync|set_received_subvol/);
    if (process.env.SCREENSHOTS) await page.getByTestId('replay').screenshot({ path: 'test-results/shots/receive-replay.png' });
  });
  expect(lab.consoleErrors).toEqual([]);
});
