/*
 * Layout: at 1280 px, the narrowest width the lab supports, no page is
 * wider than the window once it has run (a wide before/after table or a
 * long calibration path once pushed the sparse-cp lesson to 1,505 px).
 */
import fs from 'node:fs';
import { expect, test } from './fixtures';

test.afterEach(async ({ lab }) => {
  expect(lab.consoleErrors, 'console errors').toEqual([]);
});

test('no page is wider than a 1280 px window, lessons included', async ({ lab }) => {
  test.setTimeout(300_000);
  const { page } = lab;
  await page.setViewportSize({ width: 1280, height: 800 });
  const wide: string[] = [];
  const width = () => page.evaluate(() => document.documentElement.scrollWidth);
  for (const f of fs.readdirSync('lessons').filter((x) => x.endsWith('.json'))) {
    const lesson = JSON.parse(fs.readFileSync(`lessons/${f}`, 'utf8')) as { id: string; steps: unknown[] };
    for (let i = 0; i < lesson.steps.length; i++) {
      await lab.open(`#/lesson/${lesson.id}?step=${i}`);
      // the button, not the r key: a focused guess field would take the key
      await page.getByTestId('run').click();
      await expect(page.getByTestId('checks')).toBeVisible({ timeout: 120_000 });
      const w = await width();
      if (w > 1280) wide.push(`lesson ${lesson.id} step ${i + 1}: ${w} px`);
    }
  }
  for (const route of ['#/', '#/exp/fio?p.device=consumer-nvme&p.iodepth=16', '#/exp/sparse-cp?p.file_mib=8', '#/exp/qgroup-drop?p.subvols=2', '#/exp/torture?p.ops=500']) {
    await lab.open(route);
    if (route !== '#/') await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
    const w = await width();
    if (w > 1280) wide.push(`${route}: ${w} px`);
  }
  // focus mode (projector): a larger root font, the same px charts
  for (const route of ['#/lesson/sparse-cp?step=2', '#/lesson/ssd-4k-write?step=5', '#/lesson/qgroup-drop?step=1']) {
    await lab.open(route);
    await page.getByTestId('run').click();
    await expect(page.getByTestId('checks')).toBeVisible({ timeout: 120_000 });
    await page.getByTestId('focus-toggle').click();
    await expect(page.locator('html.focus-mode')).toHaveCount(1);
    const w = await width();
    if (w > 1280) wide.push(`${route} in focus mode: ${w} px`);
    // the "exit focus" button covers no link or control (it once hid the
    // lesson's "open in the lab" link)
    const covered = await page.evaluate(() => {
      const b = document.querySelector('.focus-exit')?.getBoundingClientRect();
      if (!b) return ['no exit-focus button'];
      return [...document.querySelectorAll('a, button, input, select')]
        .filter((e) => !e.classList.contains('focus-exit'))
        .filter((e) => {
          const r = e.getBoundingClientRect();
          return r.width > 0 && r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top;
        })
        .map((e) => e.textContent ?? e.tagName);
    });
    expect(covered, `${route}: controls under the exit-focus button`).toEqual([]);
  }
  expect(wide, 'pages wider than the window').toEqual([]);
});
