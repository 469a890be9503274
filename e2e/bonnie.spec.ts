/*
 * bonnie end to end (seed 001): the experiment page draws each fsync
 * phase's latency histogram (both kernels, the slowest marked), the
 * slowest operation of a phase lane by lane (before: the clone allocated
 * inside a leaf's read lock; after: none), and where each kernel
 * allocated its extent buffers. (Its lesson is played by lessons-play.spec.ts.)
 */
import { expect, test } from './fixtures';

test('bonnie: allocations inside leaf locks before, none after; the histograms and the slowest operation', async ({ lab }) => {
  test.setTimeout(180_000);
  const { page } = lab;
  await lab.open('#/exp/bonnie?p.scale=0.05');
  await test.step('run both kernels', async () => {
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
    await expect(page.getByTestId('bonnie-view')).toBeVisible();
  });
  await test.step('four histograms, each kernel with its slowest operation marked', async () => {
    for (const p of ['seq_create', 'seq_delete', 'rand_create', 'rand_delete']) {
      await expect(page.getByTestId(`bonnie-max-${p}-before`)).toHaveCount(1);
      await expect(page.getByTestId(`bonnie-max-${p}-after`)).toHaveCount(1);
    }
  });
  await test.step('where the log allocated: inside leaf locks before, before any lock after', async () => {
    const allocs = page.getByTestId('bonnie-allocs');
    expect(Number(await allocs.getAttribute('data-inside-before'))).toBeGreaterThan(0);
    expect(Number(await allocs.getAttribute('data-outside-before'))).toBe(0);
    expect(Number(await allocs.getAttribute('data-inside-after'))).toBe(0);
    expect(Number(await allocs.getAttribute('data-outside-after'))).toBeGreaterThan(0);
  });
  await test.step('the slowest delete: its leaves, no allocation inside a lock after the patch', async () => {
    await page.getByTestId('bonnie-phase-seq_delete').click();
    await expect(page.getByTestId('bonnie-op-after')).toHaveAttribute('data-locked', '0');
    await expect(page.getByTestId('bonnie-alloc-after')).toHaveCount(0);
    await expect(page.getByTestId('bonnie-bar-leaf-before').first()).toBeVisible();
  });
  await test.step('a lane for the delayed-items worker and its waits, in each kernel', async () => {
    for (const v of ['before', 'after']) await expect(page.getByTestId(`bonnie-op-chart-${v}`).getByText('delayed items', { exact: true })).toHaveCount(1);
  });
  if (process.env.SCREENSHOTS) {
    for (const w of [1024, 1280, 1920]) {
      await page.setViewportSize({ width: w, height: 900 });
      await page.screenshot({ path: `test-results/shots/bonnie-${w}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    for (const id of ['bonnie-hist-seq_delete', 'bonnie-hist-rand_create', 'bonnie-op-before', 'bonnie-op-after', 'bonnie-allocs'])
      await page.getByTestId(id).screenshot({ path: `test-results/shots/${id}.png` });
  }
  expect(lab.consoleErrors).toEqual([]);
});

