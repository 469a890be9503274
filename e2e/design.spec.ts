/*
 * design.spec.ts - web/DESIGN.md held on every page the engine's registry
 * lists and every step of every lesson (enumerated, so a new experiment or
 * lesson is covered without touching this file): at 1024, 1280 and 1920 px
 * no horizontal scroll and the header and headline pair on screen, no
 * overlapping tick labels, each before/after pair on one y axis, no
 * serious axe-core violations, no axis title clipped or squeezed; in focus
 * mode at 1920x1080 every text of the page (titles, legends, "Look at",
 * chart text) of at least 24 px with the prose hidden and the headline's
 * change as large as its values; and a lesson's numbers in the text equal
 * to the run's and to what the page shows.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { WIDTHS, claimsAgainstPage, clippedAxisTitles, coveredByExit, experimentNames, layoutProblems, lessonFiles, pairMismatches, runStep, settle, smallHeadlineChange, smallPageText, tickOverlaps } from './design';
import { expect, test } from './fixtures';

test.afterEach(async ({ lab }) => {
  expect(lab.consoleErrors, 'console errors').toEqual([]);
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
});

/** axe-core's serious and critical findings on the page as it stands. */
async function seriousA11y(page: Page): Promise<string[]> {
  const r = await new AxeBuilder({ page }).analyze();
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help} (${v.nodes.length}: ${v.nodes[0]?.target.join(' ')})`);
}

/** Every width: the layout holds and no tick labels collide. */
async function atEveryWidth(page: Page, where: string, problems: string[]): Promise<void> {
  for (const [w, h] of WIDTHS) {
    await page.setViewportSize({ width: w, height: h });
    await settle(page);
    for (const p of [...(await layoutProblems(page)), ...(await tickOverlaps(page)), ...(await clippedAxisTitles(page))]) problems.push(`${where} at ${w} px: ${p}`);
  }
}

test('every experiment page of the registry holds the design rules at 1024, 1280 and 1920 px, and in focus mode', async ({ lab }) => {
  test.setTimeout(600_000);
  const { page } = lab;
  await lab.open('#/');
  const names = await experimentNames(page);
  expect(names.length).toBeGreaterThan(2);
  const problems: string[] = [];
  let pairs = 0;
  for (const name of names) {
    await test.step(name, async () => {
      await page.setViewportSize({ width: 1280, height: 800 });
      await lab.open(`#/exp/${name}`);
      await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 120_000 });
      const info = await page.evaluate((n) => window.__lab?.lastRun?.experiment === n && Object.keys(window.__lab.lastRun.results), name);
      // a page with two kernels opens with the headline comparison, both bars on one axis
      if (info && info.includes('before') && info.includes('after')) {
        await expect(page.getByTestId('headline-bar-before')).toBeVisible();
        await expect(page.getByTestId('headline-bar-after')).toBeVisible();
        const top = await page.getByTestId('headline').boundingBox();
        expect(top?.y ?? 1e9, `${name}: the headline comparison starts on the first screen`).toBeLessThan(800);
      }
      const pm = await pairMismatches(page);
      pairs += pm.pairs;
      problems.push(...pm.bad.map((b) => `${name}: ${b}`));
      for (const a of await seriousA11y(page)) problems.push(`${name} (axe): ${a}`);
      await atEveryWidth(page, name, problems);
      // focus mode on a projector: chart text from 24 px, no prose, the headline first
      await page.setViewportSize({ width: 1920, height: 1080 });
      await page.keyboard.press('f');
      await expect(page.locator('html.focus-mode')).toHaveCount(1);
      await settle(page);
      for (const s of await smallPageText(page, 24)) problems.push(`${name} in focus mode: ${s}`);
      if ((await page.locator('.prose').count()) > 0) await expect(page.locator('.prose').first()).toBeHidden();
      for (const p of [...(await tickOverlaps(page)), ...(await clippedAxisTitles(page)), ...(await smallHeadlineChange(page))]) problems.push(`${name} in focus mode: ${p}`);
      for (const c of await coveredByExit(page)) problems.push(`${name} in focus mode: the exit button covers "${c}"`);
      await page.keyboard.press('f');
    });
  }
  expect(pairs, 'before/after pairs checked').toBeGreaterThan(0);
  expect(problems).toEqual([]);
});

for (const { id, steps } of lessonFiles()) {
  test(`lesson ${id}: every step holds the design rules, its text agrees with the run and the picture, the other kernel is shown`, async ({ lab }) => {
    test.setTimeout(600_000);
    const { page } = lab;
    const problems: string[] = [];
    for (let i = 0; i < steps; i++) {
      await test.step(`step ${i + 1}`, async () => {
        await page.setViewportSize({ width: 1280, height: 800 });
        await lab.open(`#/lesson/${id}?step=${i}`);
        await runStep(page);
        // the numbers in the text are the run's, rounded as the text writes them (checked in the page on the run drawn) ...
        const claims = await page.evaluate((k) => window.__lab?.lessonClaims[k] ?? [], `${id}/${i}`);
        problems.push(...claims.filter((c) => !c.ok).map((c) => `step ${i + 1}: the text says ${c.text}, the run gives ${c.shown}`));
        // ... and what the page shows for them
        const tp = await claimsAgainstPage(page);
        problems.push(...tp.bad.map((b) => `step ${i + 1}: ${b}`));
        // a step that runs one kernel of a pair shows the other as a reference
        const shown = await page.evaluate(() => Object.keys(window.__lab?.lastRun?.results ?? {}));
        if (shown.includes('before') || shown.includes('after')) expect(shown.sort(), `step ${i + 1} shows both kernels`).toEqual(['after', 'before']);
        const pm = await pairMismatches(page);
        problems.push(...pm.bad.map((b) => `step ${i + 1}: ${b}`));
        if (i === 0) for (const a of await seriousA11y(page)) problems.push(`step ${i + 1} (axe): ${a}`);
        await atEveryWidth(page, `step ${i + 1}`, problems);
      });
    }
    // focus mode on the last step: the picture, large; no prose
    await page.setViewportSize({ width: 1920, height: 1080 });
    await page.keyboard.press('f');
    await expect(page.locator('html.focus-mode')).toHaveCount(1);
    await settle(page);
    for (const s of await smallPageText(page, 24)) problems.push(`focus mode: ${s}`);
    for (const p of [...(await clippedAxisTitles(page)), ...(await smallHeadlineChange(page))]) problems.push(`focus mode: ${p}`);
    await expect(page.locator('.lesson-prose').first()).toBeHidden();
    for (const c of await coveredByExit(page)) problems.push(`focus mode: the exit button covers "${c}"`);
    for (const p of await layoutProblems(page)) problems.push(`focus mode: ${p}`);
    expect(problems).toEqual([]);
  });
}
