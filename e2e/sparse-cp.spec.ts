/*
 * sparse-cp end to end: the experiment page draws both panels, toggling a
 * single patch re-runs and redraws the after panel only. (Its lesson is
 * played by lessons-play.spec.ts.)
 */
import { expect, test } from './fixtures';

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

test('sparse-cp delalloc: Run ×20 draws both kernels over 20 seeds with the published figures as lines', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.state=delalloc');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await page.getByTestId('run-seeds').click();
  // it runs in the worker, seed after seed, and can be stopped
  await expect(page.getByTestId('seeds-progress')).toBeVisible();
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-state', 'done', { timeout: 180_000 });
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-done', '20');
  const cp = page.getByTestId('seeds-cp_ms');
  for (const v of ['before', 'after']) {
    const strip = cp.getByTestId(`strip-${v}`);
    await expect(strip.locator('circle.seed-dot')).toHaveCount(20);
    await expect(strip.locator('rect.seed-band')).toHaveCount(1);
    await expect(strip.locator('line.seed-median')).toHaveCount(1);
    await expect(strip.locator('g.seed-published')).toHaveCount(1);
  }
  // the published after run lies in the model's 5-95% band, the before run does not
  await expect(cp.getByTestId('strip-after').locator('g.seed-published')).toHaveAttribute('data-inside', '1');
  await expect(cp.getByTestId('strip-before').locator('g.seed-published')).toHaveAttribute('data-inside', '0');
  await expect(cp.getByTestId('strip-before').locator('g.seed-published')).toHaveAttribute('data-value', '16574');
  // the spread goes out with the export
  const [dl] = await Promise.all([page.waitForEvent('download'), page.getByTestId('seeds-json').click()]);
  const doc = JSON.parse(await (await dl.createReadStream()).toArray().then((b) => Buffer.concat(b).toString('utf8')));
  expect(doc.seeds).toBe(20);
  expect(doc.runs.after.spread.cp_ms.n).toBe(20);
  expect(doc.runs.before.values.cp_ms).toHaveLength(20);
  // variation off: the same conditions in every seed (one click); the spread of what the timer sets collapses
  await page.getByTestId('variation-toggle').locator('input').uncheck();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-state', 'idle');
  expect(page.url()).toContain('v.variation=off');
});

test('Run ×20 can be stopped part-way; the seeds done stay drawn', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.state=cached&p.file_mib=8');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await page.getByTestId('run-seeds').click();
  await expect.poll(async () => Number(await page.getByTestId('seeds-panel').getAttribute('data-done'))).toBeGreaterThan(1);
  await page.getByTestId('run-seeds-stop').click();
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-state', 'stopped');
  const done = Number(await page.getByTestId('seeds-panel').getAttribute('data-done'));
  expect(done).toBeLessThan(20);
  await expect(page.getByTestId('run-seeds-stopped')).toContainText(`stopped after ${done} of 20`);
  await expect(page.getByTestId('seeds-cp_ms').getByTestId('strip-after').locator('circle.seed-dot')).toHaveCount(done);
});
