/*
 * torture in the browser: a run with mix=all shows the checker's verdict
 * and the queues the engine sampled (delalloc, ordered extents, log
 * writers...) as charts on one time axis, and the commits with their phases.
 */
import { expect, test } from './fixtures';

test('torture mix=all: the verdict and the sampled queues are drawn', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/torture?p.ops=3000&p.mix=all');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('torture-view')).toBeVisible();
  await expect(page.getByTestId('torture-verdict')).toContainText('stayed consistent (0 violations)');
  // every commit drawn as a bar split into its phases
  const chart = page.getByTestId('torture-commits');
  await expect(chart).toContainText('commits, each a bar');
  // the checker's count is the chart's: the setup's commits are checked too
  const drawn = await chart.getAttribute('data-drawn');
  await expect(chart).toHaveAttribute('data-total', drawn ?? '');
  await expect(page.getByTestId('torture-verdict')).toContainText(`${drawn} commits, each one checked`);
  expect(await page.getByTestId('torture-commits').locator('rect').count()).toBeGreaterThan(10);
  for (const name of ['delalloc_extents', 'ordered_extents', 'log_writers']) {
    const fig = page.getByTestId(`torture-series-${name}`);
    await expect(fig).toBeVisible();
    // a drawn step line, not an empty path
    expect((await fig.locator('path').last().getAttribute('d'))?.length ?? 0).toBeGreaterThan(20);
  }
});

test('torture: the commit chart has one unit per axis and bare-number ticks', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/torture?p.ops=3000&p.mix=all');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  const chart = page.getByTestId('torture-commits');
  const ticks = await chart.locator('text.tick-x').allTextContents();
  expect(ticks.length).toBeGreaterThan(2);
  expect(ticks.every((t) => /^[\d,.]+$/.test(t))).toBe(true);
  await expect(chart.locator('text.axis-title').first()).toHaveText(/\((ms|s)\)$/);
  // a peak too small for three decimals is a power of ten, not "0.00000954"
  for (const t of await page.locator('[data-testid^="torture-series-"] .chart-title').allTextContents()) expect(t).not.toMatch(/0\.0000/);
});
