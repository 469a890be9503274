/*
 * sparse-cp end to end: the experiment page draws both panels, toggling a
 * single patch re-runs and redraws the after panel only, and the lesson
 * "cp and the lseek that walked too far" plays through with every check
 * passing in the browser.
 */
import { expect, playLesson, test } from './fixtures';

test('sparse-cp: before and after panels; turning 1/9 off redraws the after panel', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.file_mib=16&p.state=cold');
  await test.step('run and see both panels', async () => {
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect(page.getByTestId('sparsecp-view')).toBeVisible();
    await expect(page.getByTestId('sparsecp-panel-before')).toBeVisible();
    await expect(page.getByTestId('sparsecp-panel-after')).toBeVisible();
    // the kernels and the series as the engine's patch table names them
    await expect(page.getByTestId('sparsecp-panel-before')).toContainText('kernel 6.1');
    await expect(page.getByTestId('sparsecp-panel-after')).toContainText('whole series');
  });
  const records = async (v: string): Promise<number> => Number((await page.getByTestId(`sparsecp-records-${v}`).textContent())?.replace(/[^0-9.]/g, '') ?? 'NaN');
  await test.step('cold cache: before walks thousands of records per lseek, after a couple', async () => {
    expect(await records('before')).toBeGreaterThan(500);
    expect(await records('after')).toBeLessThan(3);
  });
  await test.step('move the cursor: the call shown follows it', async () => {
    const before = await page.getByTestId('sparsecp-call-before').textContent();
    await page.getByTestId('sparsecp-slider').fill('900');
    await expect(page.getByTestId('sparsecp-call-before')).not.toHaveText(before ?? '');
  });
  await test.step('turn patch 1/9 off: the after panel walks the records again', async () => {
    await page.getByTestId('param-p1_no_hole_uptodate').selectOption('false');
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect.poll(() => records('after')).toBeGreaterThan(500);
    await expect(page.getByTestId('sparsecp-panel-after')).toContainText('series without 1/9');
  });
});

test('sparse-cp delalloc: the creation sweep runs both kernels and draws the published rows as lines', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.state=delalloc');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await page.getByTestId('sparsecp-sweep-run').click();
  await expect(page.getByTestId('sparsecp-sweep')).toHaveAttribute('data-state', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('sparsecp-sweep-row')).toHaveCount(7);
  await expect(page.getByTestId('sparsecp-sweep-pt-before')).toHaveCount(7);
  await expect(page.getByTestId('sparsecp-sweep-pt-after')).toHaveCount(7);
  // the seed's 128M setup: both published rows apply
  await expect(page.getByTestId('sparsecp-sweep-pub-before')).toBeVisible();
  await expect(page.getByTestId('sparsecp-sweep-pub-after')).toBeVisible();
  // each row: the two kernels within 2% of each other
  for (const r of await page.getByTestId('sparsecp-sweep-row').all()) {
    const ratio = Number(await r.locator('td').last().textContent());
    expect(Math.abs(ratio - 1)).toBeLessThan(0.02);
  }
  // another file size: the old sweep's rows are not shown under the new run
  await page.getByTestId('param-file_mib').fill('64');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('sparsecp-sweep')).toHaveAttribute('data-state', 'idle');
  await expect(page.getByTestId('sparsecp-sweep-row')).toHaveCount(0);
});

test('the sparse-cp lesson plays through with every check passing', async ({ lab }) => {
  expect(await playLesson(lab, 'sparse-cp', 'sparsecp-view')).toBeGreaterThan(3);
});

test('sparse-cp: → and ← step through the published setups (the three cache states), each run', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.file_mib=16&p.state=delalloc');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  const state = page.getByTestId('param-state');
  await page.keyboard.press('ArrowRight');
  await expect(state).toHaveValue('cached');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await page.keyboard.press('n');
  await expect(state).toHaveValue('cold');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  expect(page.url()).toContain('p.file_mib=16'); // the rest of the setting stays
  await page.keyboard.press('n'); // the last: stays
  await expect(state).toHaveValue('cold');
  await page.keyboard.press('p');
  await expect(state).toHaveValue('cached');
});
