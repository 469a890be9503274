/*
 * Replay end to end ("Watch it happen"): recording both kernels draws the
 * player, the trees and the io_tree; stepping moves the position; the URL
 * keeps it and a link restores it; "first divergence" lands on the first
 * event where the two recordings differ; the arrow keys step the replay
 * while it is open and the setups again once it is closed.
 */
import { expect, test } from './fixtures';
import type { Page } from '@playwright/test';

const pos = async (page: Page, v: string): Promise<number> => Number(await page.getByTestId(`replay-${v}`).getAttribute('data-pos'));

test('sparse-cp: record, step, the URL keeps the position, a link restores it', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/sparse-cp?p.file_mib=2&p.state=cold');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('replay-open').click();
  await expect(page.getByTestId('replay')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('replay-before')).toBeVisible();
  await expect(page.getByTestId('replay-after')).toBeVisible();
  await expect(page.getByTestId('io-view').first()).toBeVisible();
  await expect(page.getByTestId('tree-view').first()).toBeVisible();
  await test.step('step by operation: both sides move to the next lseek', async () => {
    const a0 = await pos(page, 'before');
    await page.getByTestId('replay-next-op').click();
    await expect.poll(() => pos(page, 'before')).toBeGreaterThan(a0);
    await page.getByTestId('replay-next-op').click();
    await page.getByTestId('replay-next-op').click();
    await expect(page.getByTestId('replay-op-before')).toContainText('lseek');
  });
  await test.step('keyboard: → one event, shift+→ one operation, space plays and pauses', async () => {
    const a = await pos(page, 'before');
    const b = await pos(page, 'after');
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await pos(page, 'before')) + (await pos(page, 'after'))).toBeGreaterThan(a + b);
    const c = await pos(page, 'before');
    await page.keyboard.press('Shift+ArrowRight');
    await expect.poll(() => pos(page, 'before')).toBeGreaterThan(c);
    await page.keyboard.press(' ');
    await expect(page.getByTestId('replay-play')).toHaveAttribute('aria-pressed', 'true');
    await page.keyboard.press(' ');
    await expect(page.getByTestId('replay-play')).toHaveAttribute('aria-pressed', 'false');
  });
  let url = '';
  let at: [number, number] = [0, 0];
  await test.step('the URL holds the position', async () => {
    await page.getByTestId('replay-next').click();
    // the URL follows the position a moment after the last move
    const want = await page.getByTestId('replay').getAttribute('data-at');
    expect(want).toMatch(/^t:\d+$/);
    await expect.poll(() => page.url()).toContain(`v.at=${encodeURIComponent(want!)}`);
    url = page.url();
    // the page's own lseek cursor follows the replay: the call it shows is this lseek's
    const offKiB = Number((await page.getByTestId('replay-op-before').textContent())?.match(/from ([\d,.]+) KiB/)?.[1]?.replace(/,/g, ''));
    const frac = Number(new URL(url).hash.match(/v\.cursor=([\d.]+)/)?.[1]);
    expect(frac).toBeCloseTo(offKiB / 2048, 2);
    at = [await pos(page, 'before'), await pos(page, 'after')];
    expect(at[0]).toBeGreaterThan(0);
  });
  await test.step('a link restores it', async () => {
    await page.goto('about:blank');
    await page.goto(url);
    await expect(page.getByTestId('replay')).toBeVisible({ timeout: 60_000 });
    await expect.poll(() => pos(page, 'before')).toBe(at[0]);
    expect(await pos(page, 'after')).toBe(at[1]);
  });
  await test.step('first divergence: both sides at the first event where they differ', async () => {
    await page.getByTestId('replay-diverge').click();
    await expect(page.locator('[data-testid=replay]')).toHaveAttribute('data-sync', 'op');
    await expect(page.getByTestId('replay-readout')).toContainText('first event where the kernels differ');
    const d = await pos(page, 'before');
    expect(await pos(page, 'after')).toBe(d);
    // the events just before agree and the one shown differs
    const evs = await page.evaluate(() => window.__lab?.replayDivergence);
    expect(evs).toBe(d - 1);
    const eb = await page.getByTestId('replay-event-before').textContent();
    const ea = await page.getByTestId('replay-event-after').textContent();
    expect(eb).not.toBe(ea);
  });
  await test.step('close: the arrows step the setups again', async () => {
    await page.getByTestId('replay-close').click();
    await expect(page.getByTestId('replay')).toHaveCount(0);
    await expect.poll(() => page.url()).not.toMatch(/v.at=/);
  });
  expect(lab.consoleErrors).toEqual([]);
});

test('qgroup-drop: the dropped subvolume turns to ghosts leaf by leaf, then the commit', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/qgroup-drop?p.subvols=2&p.files=256&p.threshold=64');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('replay-open').click();
  await expect(page.getByTestId('replay')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('replay-sync-op').click();
  for (let i = 0; i < 12; i++) await page.getByTestId('replay-next-op').click();
  await expect(page.getByTestId('replay-op-before')).toContainText('drop step #12');
  // before: the dropped leaves wait for the one commit as ghosts, and the
  // qgroup records pile up; after: the threshold committed part-way
  const ghosts = page.locator('[data-testid=replay-before] .tree-block.freed');
  await expect(ghosts.first()).toBeVisible();
  expect(await ghosts.count()).toBeGreaterThan(5);
  await expect(page.locator('[data-testid=replay-after] .tree-block.freed')).toHaveCount(0);
  await expect(page.getByTestId('replay-qg-before')).toContainText(/qgroup records in the transaction: [1-9]/);
  expect(lab.consoleErrors).toEqual([]);
});

test('a lesson points at a moment: the first SEEK_DATA after 16 MiB, checked in the browser', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/lesson/sparse-cp?step=1');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('checks')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('moment-open').click();
  await expect(page.getByTestId('replay')).toBeVisible({ timeout: 90_000 });
  await expect(page.getByTestId('moment-check')).toHaveCount(4);
  for (const c of await page.getByTestId('moment-check').all()) await expect(c).toHaveAttribute('data-pass', 'true');
  // the replay stands at that lseek, in both kernels
  await expect(page.getByTestId('replay-op-before')).toContainText(/SEEK_DATA from (16,384|1[6-9],\d{3}|[2-9]\d,\d{3}) KiB/);
  await expect(page.getByTestId('replay-op-after')).toContainText('SEEK_DATA');
  await expect(page.locator('[data-testid=replay]')).toHaveAttribute('data-sync', 'op');
  expect(lab.consoleErrors).toEqual([]);
});
