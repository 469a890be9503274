/*
 * pictures-figures.spec.ts - the pictures of issue 31 items 3, 4 and 6, at 1024
 * and 1920 px and in focus mode: what each must show and say, checked on
 * the DOM (and in focus mode at 1024 px, a projector's smallest), and each one's screenshot attached to the test's report (and
 * written to screenshots/ with SCREENSHOTS=1) to open and look at.
 *
 * - untar's flush queue: on by default where tickets happen, the window it
 *   shows named and its counts labelled as the window's (the run's beside
 *   them, equal to the run's metric), its four lanes apart, both kernels
 *   on one clock, the window shaded on the whole-run charts;
 * - a noisy headline (bonnie): one run is said to be one, with no
 *   direction, until the seeds have run; then medians, whiskers, this
 *   run's dot and the medians' direction;
 * - the device page's counters in words; receive's command greys told
 *   apart by a legend that stays in focus mode.
 */
import type { Locator, Page, TestInfo } from '@playwright/test';
import { smallPageText, settle } from './design';
import { expect, test } from './fixtures';

test.afterEach(async ({ lab }) => {
  expect(lab.consoleErrors, 'console errors').toEqual([]);
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
});

/** 1024 and 1920 px, then focus mode at 1920 and at 1024: run `check` at each, attach a screenshot of `shot`. */
async function atSizes(page: Page, info: TestInfo, name: string, shot: () => Locator, check: (where: string) => Promise<void>): Promise<void> {
  const sizes: [number, number, boolean][] = [
    [1024, 768, false],
    [1920, 1080, false],
    [1920, 1080, true],
    [1024, 768, true],
  ];
  for (const [w, h, focus] of sizes) {
    await page.setViewportSize({ width: w, height: h });
    if (focus) {
      await page.locator('body').click({ position: { x: 2, y: 300 } });
      await page.keyboard.press('f');
      await expect(page.locator('html.focus-mode')).toHaveCount(1);
    }
    await settle(page);
    const where = `${w}${focus ? ' focus' : ''}`;
    await check(where);
    const file = `${name}-${w}${focus ? '-focus' : ''}.png`;
    const png = await shot().screenshot();
    await info.attach(file, { body: png, contentType: 'image/png' });
    if (process.env.SCREENSHOTS) await shot().screenshot({ path: `screenshots/${file}` });
    if (focus) await page.keyboard.press('f');
  }
}

/** Boxes of `a` and `b` overlap (by more than half a pixel). */
const overlap = (a: { x: number; y: number; width: number; height: number }, b: { x: number; y: number; width: number; height: number }): boolean =>
  a.x < b.x + b.width - 0.5 && b.x < a.x + a.width - 0.5 && a.y < b.y + b.height - 0.5 && b.y < a.y + a.height - 0.5;

test("untar's flush queue: the window named, its counts the window's, four lanes apart, one clock", async ({ lab }, info) => {
  test.setTimeout(240_000);
  const { page } = lab;
  await lab.open('#/exp/untar?p.scale=0.05&p.fs_gib=13&p.fs_used_gib=0');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  const heading = page.getByTestId('untar-window');
  // on by default where tickets happen, and first among the pictures
  await expect(heading).toHaveText(/^The flush queue in the (\d+) ms from the first ticket, ([\d.]+) to ([\d.]+) s into the ([\d.]+) s run; its counts are this window's/);
  const q = (v: string) => page.getByTestId(`untar-queue-${v}`);
  expect((await heading.boundingBox())!.y).toBeLessThan((await page.getByTestId('untar-space-before').boundingBox())!.y);
  for (const v of ['before', 'after']) {
    // "in the window: N cycles (of M in the run)": M is the run's metric
    const total = (await page.getByTestId(`cell-${v}-reclaim_cycles`).textContent())!;
    await expect(q(v).locator('.chart-title')).toContainText(`in the window: ${await q(v).getAttribute('data-cycles')} cycle`);
    await expect(q(v).locator('.chart-title')).toContainText(`(of ${total} in the run)`);
    await expect(page.getByTestId(`untar-reserved-${v}`)).toHaveAttribute('d', /^M/);
  }
  // both kernels on one clock: the same x ticks
  const ticks = (v: string) => q(v).locator('text.tick-x').allTextContents();
  expect(await ticks('before')).toEqual(await ticks('after'));
  await expect(page.getByTestId('untar-window-band')).toHaveCount(4); // the space pair, the cycle rate, delalloc
  await atSizes(
    page,
    info,
    'untar-flush-queue',
    () => page.locator('.untar-view .pair-grid').first(),
    async (where) => {
      for (const v of ['before', 'after']) {
        const labels = q(v).locator('text.lane-label');
        // captions above their lanes, long where there is room, short in a narrow chart
        await expect(labels).toHaveText([/reserved − (the )?limit \(MiB\)/, /tar(, )?parked/, /pages (per reclaim cycle|a cycle) \(log\)/, /requests in flight/]);
        // captions above their lanes, none over a tick label or another caption
        const boxes = await Promise.all((await labels.all()).map((l) => l.boundingBox()));
        const tickBoxes = await Promise.all((await q(v).locator('text.tick').all()).map((t) => t.boundingBox()));
        for (let i = 0; i < boxes.length; i++) {
          for (let j = i + 1; j < boxes.length; j++) expect(overlap(boxes[i]!, boxes[j]!), `${where}: lane captions ${i} and ${j}`).toBe(false);
          for (const t of tickBoxes) if (t) expect(overlap(boxes[i]!, t), `${where}: lane caption ${i} over a tick label`).toBe(false);
        }
        // the chart inside its figure
        const fig = (await q(v).boundingBox())!;
        const svg = (await page.getByTestId(`untar-queue-chart-${v}`).boundingBox())!;
        expect(svg.x + svg.width, where).toBeLessThanOrEqual(fig.x + fig.width + 0.5);
      }
      if (where.endsWith('focus')) expect(await smallPageText(page, 24)).toEqual([]);
    },
  );
});

test('a noisy headline: one run says so and states no direction; with the seeds, medians and their direction', async ({ lab }, info) => {
  test.setTimeout(300_000);
  const { page } = lab;
  await lab.open('#/exp/bonnie?p.scale=0.02');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  const head = page.getByTestId('headline');
  // the seeds start by themselves; until ten have run, one run is said to be one
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-state', 'running', { timeout: 30_000 });
  if ((await head.getAttribute('data-spread')) === 'one-run') {
    await expect(page.getByTestId('headline-one-run')).toContainText('one run of a noisy process');
    await expect(page.getByTestId('headline-change')).toHaveCount(0);
  }
  await expect(head).toHaveAttribute('data-spread', 'median', { timeout: 240_000 });
  await expect(head.locator('.chart-title')).toContainText(/median of \d+ runs/);
  await expect(page.getByTestId('headline-change')).toBeVisible();
  await expect(page.getByTestId('headline-band-before')).toBeVisible();
  await expect(page.getByTestId('headline-run-before')).toBeVisible();
  await expect(page.getByTestId('headline-noisy-strips')).toBeVisible();
  await expect(page.getByTestId('seeds-panel')).toHaveAttribute('data-state', 'done', { timeout: 240_000 });
  await atSizes(
    page,
    info,
    'bonnie-noisy-headline',
    () => head,
    async (where) => {
      // the whisker inside the chart, the medians' strips on one axis each
      const chart = (await page.getByTestId('headline-chart').boundingBox())!;
      const band = (await page.getByTestId('headline-band-before').boundingBox())!;
      expect(band.x + band.width, where).toBeLessThanOrEqual(chart.x + chart.width + 0.5);
      if (where.endsWith('focus')) {
        expect(await smallPageText(page, 24)).toEqual([]);
        const px = async (l: Locator) => l.evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
        expect(await px(page.getByTestId('headline-change'))).toBeGreaterThanOrEqual(await px(page.getByTestId('headline-value-before')));
      }
    },
  );
});

test("the device page's counters in words; receive's commands told apart by a legend that stays on a projector", async ({ lab }, info) => {
  test.setTimeout(240_000);
  const { page } = lab;
  await lab.open('#/exp/fio?p.ios=20000');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  const counters = page.getByTestId('device-counters');
  await expect(counters).toContainText('reads served');
  await expect(counters).toContainText(/busy \(a request in service\)\s*[\d.]+ (s|ms) of the [\d.]+ (s|ms) run \([\d.]+%\)/);
  await expect(counters).not.toContainText('busy_ns');
  await expect(counters).not.toContainText(/\d{1,3}(,\d{3}){3}/); // no nanoseconds by the billion

  await lab.open('#/exp/receive?p.files_per_writer=200&p.writers=2');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
  const legend = page.getByTestId('receive-timeline-before').locator('.chart-legend');
  await expect(legend).toContainText('TRUNCATE');
  await expect(legend).toContainText('WRITE');
  // each kind of command its own grey: no two swatches alike
  const fills = await legend.locator('svg rect').evaluateAll((rs) => rs.map((r) => r.getAttribute('fill')));
  expect(new Set(fills).size).toBe(fills.length);
  await expect(page.getByTestId('receive-extents-before').locator('.chart-legend')).toContainText('a jump between far addresses');
  await atSizes(
    page,
    info,
    'receive-timeline',
    () => page.getByTestId('receive-timeline-before'),
    async (where) => {
      await expect(legend, where).toBeVisible(); // a legend, not prose: it stays in focus mode
      if (where.endsWith('focus')) expect(await smallPageText(page, 24)).toEqual([]);
    },
  );
});
