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
  await expect(page.getByTestId('torture-verdict')).toContainText('every tree, counter and cache agreed');
  // every commit drawn as a bar split into its phases
  await expect(page.getByTestId('torture-commits')).toContainText('commits, each a bar');
  // the checker's count is the chart's: the setup's commits are checked too
  const drawn = /^(\d+) commits/.exec((await page.getByTestId('torture-commits').innerText()).trim())?.[1];
  await expect(page.getByTestId('torture-verdict')).toContainText(`(${drawn} commits)`);
  expect(await page.getByTestId('torture-commits').locator('rect').count()).toBeGreaterThan(10);
  for (const name of ['delalloc_extents', 'ordered_extents', 'log_writers']) {
    const fig = page.getByTestId(`torture-series-${name}`);
    await expect(fig).toBeVisible();
    // a drawn step line, not an empty path
    expect((await fig.locator('path').last().getAttribute('d'))?.length ?? 0).toBeGreaterThan(20);
  }
});
