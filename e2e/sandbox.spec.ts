/*
 * sandbox.spec.ts - #/sandbox typed from the keyboard: each command redraws
 * the trees it touched (the fs tree grows with a mkdir, an fsync makes a log
 * tree, a sync commits it away); a bad line is refused with one line and the
 * script before it stays; ◀ ▶ step through the commands; the script is in
 * the URL and a link reopens it; compare kernels marks the first difference
 * (or says there is none), on the kernels the settings name; a power cut
 * lists what survived. At 1024 px the
 * page fits its width. Opened from the header, a typed script redraws each
 * tree it changes (a COW to a new address, a log tree's items that come and go),
 * and stepping back draws the tree as it was. The redraw time of a command
 * is measured on 10,000 files (printed, not asserted: npm run bench
 * measures speed).
 *
 * Screenshots (SCREENSHOTS=1): test-results/shots/sandbox-*.png.
 */
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures';

const SHOTS = !!process.env.SCREENSHOTS;

async function type(page: Page, cmd: string): Promise<void> {
  const box = page.getByTestId('sandbox-input');
  await box.fill(cmd);
  await box.press('Enter');
  await expect(page.getByTestId('sandbox-busy')).toHaveCount(0, { timeout: 30_000 });
}

async function cmdCount(page: Page): Promise<number> {
  return page.getByTestId('sandbox-script').locator('li').count();
}

test('sandbox: typed commands redraw the trees they touch', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1024, height: 800 });
  await lab.open('#/sandbox');
  await expect(page.getByTestId('sandbox-page')).toBeVisible();

  await type(page, 'mkdir /d');
  await expect.poll(() => cmdCount(page)).toBe(1);
  const fs = page.getByTestId('sandbox-side-after').getByTestId('sandbox-tree-fs');
  // mkdir: the fs tree's leaf COWed, four items added (inode, ref, dir item, dir index)
  await expect(fs).toHaveAttribute('data-cows', '1');
  await expect(fs).toHaveAttribute('data-items', '4');
  await expect(fs.getByTestId('tree-view').first()).toBeVisible();

  await type(page, 'touch /d/f');
  await type(page, 'pwrite 0 64k');
  await expect(page.getByTestId('sandbox-facts')).toContainText('16'); // dirty pages
  await type(page, 'fsync');
  // the fsync logged the inode: a log tree appears
  const log = page.getByTestId('sandbox-side-after').getByTestId('sandbox-tree-log');
  await expect(log).toBeVisible();
  expect(Number(await log.getAttribute('data-items'))).toBeGreaterThan(0);
  await expect(log.getByTestId('tree-view')).toHaveCount(1);
  if (SHOTS) await page.screenshot({ path: 'test-results/shots/sandbox-fsync-1024.png', fullPage: true });

  // a bad line: one message, nothing lost, the text stays in the box
  await type(page, 'rm /d');
  await expect(page.getByTestId('sandbox-error')).toContainText('line 5: rm /d: directory not empty');
  expect(await cmdCount(page)).toBe(4);
  await expect(page.getByTestId('sandbox-input')).toHaveValue('rm /d');

  await type(page, 'sync');
  await expect.poll(() => cmdCount(page)).toBe(5);
  await expect(page.getByTestId('sandbox-error')).toHaveCount(0);
  // the commit freed the log: the log tree's items went
  const logAfter = page.getByTestId('sandbox-side-after').getByTestId('sandbox-tree-log');
  expect(Number(await logAfter.getAttribute('data-items'))).toBeLessThan(0);

  // step back to the fsync and forward again, from the keyboard
  await page.getByTestId('sandbox-at').click();
  await page.keyboard.press('ArrowLeft');
  await expect(page.getByTestId('sandbox-at')).toContainText('command 4 of 5');
  await expect(page.getByTestId('sandbox-cmd-3')).toHaveClass(/sandbox-cur/);
  await page.keyboard.press('ArrowRight');
  await expect(page.getByTestId('sandbox-at')).toContainText('command 5 of 5');

  // the page fits 1024 px
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);

  // the script is in the URL: a reload gets it back
  expect(page.url()).toContain('#/sandbox?');
  expect(decodeURIComponent(page.url())).toContain('fsync');
  await page.reload();
  await expect.poll(() => cmdCount(page), { timeout: 30_000 }).toBe(5);
  await expect(page.getByTestId('sandbox-side-after').getByTestId('sandbox-tree-fs')).toBeVisible();
  expect(lab.consoleErrors).toEqual([]);
});

/** The blocks one tree of the after side draws now: their addresses. */
async function blocks(page: Page, tree: string): Promise<string[]> {
  const g = page.getByTestId('sandbox-side-after').getByTestId(`sandbox-tree-${tree}`).locator('g.tree-block');
  return (await g.evaluateAll((els) => els.map((e) => e.getAttribute('data-bytenr') ?? ''))).sort();
}

test('sandbox: from the header, a typed script redraws each tree as it changes', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 900 });
  await lab.open('#/');
  await page.getByTestId('nav-sandbox').click();
  await expect(page.getByTestId('sandbox-page')).toBeVisible();
  await expect(page.getByTestId('nav-sandbox')).toHaveAttribute('aria-current', 'page');
  // the page's primary button is the experiment pages' green Run
  await expect(page.getByTestId('sandbox-run')).toHaveClass(/btn-run/);
  const side = page.getByTestId('sandbox-side-after');
  const tree = (name: string) => side.getByTestId(`sandbox-tree-${name}`);

  // a file: its four items in the fs tree, the leaf COWed (filled) in the running transaction
  await page.getByTestId('sandbox-input').fill('touch /f');
  await page.getByTestId('sandbox-run').click();
  await expect(page.getByTestId('sandbox-busy')).toHaveCount(0);
  await expect(tree('fs')).toHaveAttribute('data-items', '4');
  await expect(tree('fs').locator('g.tree-block.cowed')).not.toHaveCount(0);

  // a buffered write: pages dirtied, no tree changes
  await type(page, 'pwrite /f 0 64k');
  await expect(tree('fs')).toHaveAttribute('data-items', '0');
  await expect(page.getByTestId('sandbox-cmd-1')).toContainText('no tree change');

  // fsync: the data written (a checksum item), the inode logged (a log tree is drawn)
  await type(page, 'fsync /f');
  await expect(tree('csum')).toHaveAttribute('data-items', '1');
  await expect(tree('csum').getByTestId('tree-view')).toHaveCount(1);
  await expect(tree('log').getByTestId('tree-view')).toHaveCount(1);
  expect(Number(await tree('log').getAttribute('data-items'))).toBeGreaterThan(0);

  // sync: a commit COWs the root tree, adds the data extent's item, and the log's items go
  await type(page, 'sync');
  await expect(tree('root')).toHaveAttribute('data-cows', '1');
  await expect(tree('extent')).toHaveAttribute('data-items', '1');
  expect(Number(await tree('log').getAttribute('data-items'))).toBeLessThan(0);
  const fsAtSync = await blocks(page, 'fs');
  expect(fsAtSync.length).toBeGreaterThan(0);

  // mkdir in the new transaction: the fs leaf COWed again, to a new address
  await type(page, 'mkdir /d');
  await expect(tree('fs')).toHaveAttribute('data-items', '4');
  const fsAtMkdir = await blocks(page, 'fs');
  expect(fsAtMkdir).not.toEqual(fsAtSync);

  // stepping back redraws the tree as it was, stepping on as it is
  await page.getByTestId('sandbox-prev').click();
  await expect(page.getByTestId('sandbox-at')).toContainText('command 4 of 5');
  await expect.poll(() => blocks(page, 'fs')).toEqual(fsAtSync);
  await page.getByTestId('sandbox-next').click();
  await expect.poll(() => blocks(page, 'fs')).toEqual(fsAtMkdir);
  if (SHOTS)
    for (const w of [1024, 1280, 1920]) {
      await page.setViewportSize({ width: w, height: 900 });
      await page.screenshot({ path: `test-results/shots/sandbox-typed-${w}.png`, fullPage: true });
    }
  expect(lab.consoleErrors).toEqual([]);
});

test('sandbox: compare kernels and a power cut', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 900 });
  const script = ['touch /f', 'pwrite /f 0 64k', 'fsync /f', 'touch -n 200 /g', 'fsync /f', 'seek /f -h 0', 'pwrite /f 128k 4k', 'powercut'];
  await lab.open(`#/sandbox?sv=1&cmp=1&s=${encodeURIComponent(script.join('\n'))}`);
  await expect.poll(() => cmdCount(page), { timeout: 30_000 }).toBe(script.length);
  await expect(page.getByTestId('sandbox-side-before')).toBeVisible();
  await expect(page.getByTestId('sandbox-side-after')).toBeVisible();
  // either a command is marked as the first difference, or the page says there is none
  const marked = page.locator('[data-first-diff="1"]');
  const none = page.getByText('Both kernels did the same at every command.');
  await expect(marked.or(none)).toHaveCount(1);
  // the power cut: the fsynced file is back as fsynced, with its size then
  const cut = page.getByTestId('sandbox-powercut');
  await expect(cut).toContainText('/f');
  await expect(cut).toContainText('as fsynced');
  if (SHOTS) await page.screenshot({ path: 'test-results/shots/sandbox-compare-1280.png', fullPage: true });
  expect(lab.consoleErrors).toEqual([]);
});

test('sandbox: compare kernels runs the kernels the settings name', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 900 });
  // patch 003 (4.17): a truncate to the same size no longer writes the last page back
  const script = ['touch /f', 'pwrite /f 0 10k', 'fsync', 'pwrite /f 0 10k', 'truncate /f 10k', 'sync'];
  await lab.open(`#/sandbox?sv=1&cmp=1&p.kernel=4.17&p.vs_kernel=4.16&s=${encodeURIComponent(script.join('\n'))}`);
  await expect.poll(() => cmdCount(page), { timeout: 30_000 }).toBe(script.length);
  await expect(page.getByTestId('sandbox-side-before')).toContainText('kernel 4.16');
  await expect(page.getByTestId('sandbox-side-after')).toContainText('kernel 4.17');
  await expect(page.getByTestId('sandbox-cmd-4')).toHaveAttribute('data-first-diff', '1');
  await expect(page.getByTestId('sandbox-cmd-4')).toContainText('first difference');
  // the settings: the same kernel on both sides, then nothing differs
  await page.getByTestId('sandbox-settings').locator('summary').click();
  await expect(page.getByTestId('sandbox-p-kernel')).toHaveValue('4.17');
  if (SHOTS) await page.screenshot({ path: 'test-results/shots/sandbox-settings-1280.png', fullPage: true });
  await page.getByTestId('sandbox-p-vs').selectOption('4.17');
  await expect(page.getByText('Both kernels did the same at every command.')).toBeVisible();
  expect(decodeURIComponent(page.url())).toContain('p.vs_kernel=4.17');
  // a switch of the right kernel: 003 is not one (kernel only), the lseek patches are
  await expect(page.getByTestId('sandbox-p-p9_file_cache')).toHaveValue('kernel');
  expect(lab.consoleErrors).toEqual([]);
});

test('sandbox: a command on 10,000 files redraws (time printed)', async ({ lab }) => {
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 900 });
  const script = ['mkdir /a', 'mkdir /b', 'mkdir /c', 'mkdir /d', 'mkdir /e'];
  for (const d of ['a', 'b', 'c', 'd', 'e']) script.push(`touch -n 2000 /${d}/f`);
  await lab.open(`#/sandbox?sv=1&s=${encodeURIComponent(script.slice(0, -1).join('\n'))}&p.check=0`);
  await expect.poll(() => cmdCount(page), { timeout: 60_000 }).toBe(script.length - 1);
  // the last 2,000 files bring the file system to 10,005 names: then one more command
  await type(page, script[script.length - 1]!);
  await expect.poll(() => cmdCount(page), { timeout: 60_000 }).toBe(script.length);
  const t0 = Date.now();
  await type(page, 'touch /a/one-more');
  await expect.poll(() => cmdCount(page), { timeout: 60_000 }).toBe(script.length + 1);
  await expect(page.getByTestId('sandbox-side-after').getByTestId('tree-view').first()).toBeVisible();
  const wall = Date.now() - t0;
  const hook = await page.evaluate(() => ({ run: window.__lab?.sandboxRunMs, draw: window.__lab?.sandboxDrawMs }));
  console.log(`sandbox on 10,006 names: command to redraw ${wall} ms (engine run ${hook.run?.toFixed(0)} ms, draw ${hook.draw?.toFixed(0)} ms)`);
  expect(lab.consoleErrors).toEqual([]);
});
