/*
 * projector.spec.ts - what an instructor relies on in front of a class:
 * the patch switches up front redraw the after kernel only; a link with
 * other parameters opened on the same page runs them; the lseek cursor and
 * a sweep are in the URL, so a link shows them; e dims the other kernel's
 * marks; a run keeps the last picture on screen; → opens the next lesson
 * step at its top; any chart exports as SVG and PNG and any run as CSV and
 * JSON; the high-contrast theme; the form folds at 1024 px.
 */
import fs from 'node:fs';
import { expect, test } from './fixtures';

test.afterEach(async ({ lab }) => {
  expect(lab.consoleErrors, 'console errors').toEqual([]);
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
});

test('the patch switches sit under the headline comparison, above the mechanism pictures, and each re-runs the after kernel', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.file_mib=16');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  const toggles = page.getByTestId('patch-toggles');
  await expect(toggles).toBeVisible();
  // the difference comes first, then the switches, then the pictures; one switch per switchable patch the engine declares
  expect((await toggles.boundingBox())!.y).toBeGreaterThan((await page.getByTestId('headline').boundingBox())!.y);
  expect((await toggles.boundingBox())!.y).toBeLessThan((await page.getByTestId('sparsecp-view').boundingBox())!.y);
  await expect(page.locator('[data-testid^="toggle-"]')).not.toHaveCount(0);
  const sw = page.getByTestId('toggle-p1_no_hole_uptodate');
  await expect(sw).toHaveAttribute('aria-checked', 'true');
  const before = await page.getByTestId('headline-value-before').textContent();
  await sw.click();
  await expect(page).toHaveURL(/p\.p1_no_hole_uptodate=false/);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(sw).toHaveAttribute('aria-checked', 'false');
  // the after kernel without 1/9 is as slow as before; before is untouched
  await expect(page.getByTestId('headline-value-before')).toHaveText(before ?? '');
  await expect(page.getByTestId('headline-change')).toContainText(/% (less|more)|same/);
});

test('a link with other parameters opened on the same page runs them', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=2');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  const calls = await page.getByTestId('value-after-account_calls').textContent();
  await page.evaluate(() => {
    window.location.hash = '#/exp/qgroup-drop?p.subvols=8';
  });
  await expect(page.getByTestId('param-subvols')).toHaveValue('8');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('value-after-account_calls')).not.toHaveText(calls ?? '');
  await expect(page.getByTestId('run-status')).toHaveText('Done'); // not "Parameters changed: run again"
});

test('the lseek cursor and a run sweep are in the URL: a link shows both', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.file_mib=16&p.state=delalloc&p.dirty_expire_s=4&p.wb_interval_s=1');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('sparsecp-slider').fill('800');
  await expect(page).toHaveURL(/v\.cursor=0\.8/);
  await page.getByTestId('sparsecp-sweep-run').click();
  await expect(page).toHaveURL(/v\.sweep=1/);
  await expect(page.getByTestId('sparsecp-sweep')).toHaveAttribute('data-state', 'done', { timeout: 120_000 });
  const link = page.url();
  const call = await page.getByTestId('sparsecp-call-before').textContent();
  // a fresh page from the link: same cursor, the sweep runs by itself
  await page.goto('about:blank');
  await page.goto(link);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('sparsecp-slider')).toHaveValue('800');
  await expect(page.getByTestId('sparsecp-call-before')).toHaveText(call ?? '');
  await expect(page.getByTestId('sparsecp-sweep')).toHaveAttribute('data-state', 'done', { timeout: 120_000 });
  await expect(page.getByTestId('sparsecp-sweep-row')).toHaveCount(7);
  // another setting: the sweep was for the old one, so the URL drops it
  await page.getByTestId('param-file_mib').fill('8');
  await expect(page).not.toHaveURL(/v\.sweep/);
  await expect(page).toHaveURL(/v\.cursor=0\.8/);
});

test('e dims the other kernel everywhere it is drawn; its badge sits in the header', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=4');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  await page.keyboard.press('e'); // before
  await expect(page.getByTestId('emph-badge')).toBeVisible();
  const opacity = (sel: string) => page.locator(sel).first().evaluate((e) => Number(getComputedStyle(e).opacity));
  expect(await opacity('[data-testid="headline-bar-after"]')).toBeLessThan(0.5);
  expect(await opacity('[data-testid="qg-commits-after"]')).toBeLessThan(0.5);
  expect(await opacity('[data-testid="qg-dirty-after"]')).toBeLessThan(0.5);
  expect(await opacity('[data-testid="headline-bar-before"]')).toBe(1);
  // the badge covers nothing: it is in the header, not over the form
  const badge = (await page.getByTestId('emph-badge').boundingBox())!;
  const reset = (await page.getByTestId('reset-params').boundingBox())!;
  expect(badge.y + badge.height <= reset.y || badge.x >= reset.x + reset.width).toBe(true);
});

test('a run keeps the last picture on screen, dimmed, instead of "Not run yet"', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=16');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('param-subvols').fill('64');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('results')).toHaveAttribute('data-running', '1');
  await expect(page.getByTestId('headline')).toBeVisible();
  await expect(page.getByText('Not run yet')).toHaveCount(0);
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
});

test('→ in a lesson opens the next step at its top', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/lesson/qgroup-drop');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('checks')).toBeVisible();
  // over the lesson's text: the picture column beside it scrolls on its own
  await page.mouse.move(100, 400);
  await page.mouse.wheel(0, 1500);
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(500);
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('ArrowRight');
  await expect(page).toHaveURL(/step=1/);
  await expect.poll(() => page.evaluate(() => window.scrollY)).toBe(0);
});

test('any chart exports as SVG and PNG, any run as CSV and JSON', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=4');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  const fig = page.getByTestId('headline');
  const get = async (click: () => Promise<void>) => {
    const [d] = await Promise.all([page.waitForEvent('download'), click()]);
    return { name: d.suggestedFilename(), body: fs.readFileSync((await d.path())!) };
  };
  const svg = await get(() => fig.getByTestId('export-svg').click());
  expect(svg.name).toBe('qgroup-drop-account_max_ms.svg');
  const text = svg.body.toString('utf8');
  expect(text).toMatch(/^<\?xml/);
  expect(text).toContain('xmlns="http://www.w3.org/2000/svg"');
  expect(text).toContain('longest accounting call (ms)'); // the axis title, with its unit
  expect(text).toMatch(/style="fill:/); // styles inlined: it looks the same outside the page
  // it says what it shows on its own: the figure's title, its legend, where it came from
  expect(text).toMatch(/class="export-title"[^>]*>longest accounting call · after: [^<]+</);
  expect([...text.matchAll(/class="export-footer">([^<]+)</g)].map((m) => m[1]).join('')).toMatch(/^btrfs patch lab · simulated · ?http:\/\/localhost:\d+\/#\/exp\/qgroup-drop/);
  const dirty = (await get(() => page.getByTestId('qg-dirty').getByTestId('export-svg').click())).body.toString('utf8');
  for (const item of ['before (no patch)', 'after (patched)', 'threshold 4,096']) expect(dirty).toContain(`class="export-legend">${item}<`);
  // the title, wrapped to the chart's width
  expect([...dirty.matchAll(/class="export-title">([^<]+)</g)].map((m) => m[1]).join(' ')).toBe('Qgroup records queued in the running transaction, during the drop');
  const png = await get(() => fig.getByTestId('export-png').click());
  expect(png.name).toBe('qgroup-drop-account_max_ms.png');
  expect([...png.body.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
  const csv = await get(() => page.getByTestId('export-csv').click());
  expect(csv.name).toBe('qgroup-drop-seed1.csv');
  const lines = csv.body.toString('utf8').trim().split('\n');
  expect(lines[0]).toBe('metric,label,unit,before,after');
  expect(lines.find((l) => l.startsWith('account_calls,'))).toMatch(/^account_calls,accounting calls,count,1,\d+$/);
  const json = await get(() => page.getByTestId('export-json').click());
  const doc = JSON.parse(json.body.toString('utf8')) as { experiment: string; seed: number; params: Record<string, string>; runs: Record<string, { metrics: Record<string, number> }> };
  expect(doc.experiment).toBe('qgroup-drop');
  expect(doc.params.subvols).toBe('4');
  expect(Object.keys(doc.runs).sort()).toEqual(['after', 'before']);
  expect(doc.runs.before!.metrics.account_calls).toBe(1);
});

test('the high-contrast projector theme (c) darkens text and thickens lines, and is in the URL', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=4');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  const tickSize = () => page.locator('svg.chart text.tick').first().evaluate((t) => parseFloat(getComputedStyle(t).fontSize));
  const normal = await tickSize();
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  await page.keyboard.press('c');
  await expect(page).toHaveURL(/hc=1/);
  await expect(page.locator('html.contrast')).toHaveCount(1);
  expect(await tickSize()).toBeGreaterThan(normal);
  const muted = await page.locator('.muted').first().evaluate((e) => getComputedStyle(e).color);
  expect(muted).toBe('rgb(43, 47, 54)');
  await page.keyboard.press('c');
  await expect(page).not.toHaveURL(/hc=1/);
});

test('at 1024 px the form folds above the results, and opens on request', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1024, height: 768 });
  await lab.open('#/exp/sparse-cp?p.file_mib=16');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('param-file_mib')).toBeHidden();
  // the comparison is on the first screen
  expect((await page.getByTestId('headline').boundingBox())!.y).toBeLessThan(768);
  await page.getByTestId('params-summary').click();
  await expect(page.getByTestId('param-file_mib')).toBeVisible();
  await expect(page.getByTestId('params-summary')).toContainText('1 changed');
});
