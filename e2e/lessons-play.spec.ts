/*
 * lessons-play.spec.ts - every step of every lesson in lessons/ (read from
 * the folder, so a new lesson or step is played without being listed), as a
 * lecture would play it, from the keyboard:
 *
 * - before the run, the page's visible text at 1024, 1280 and 1920 px and
 *   in focus mode holds no rendering of the answer (the true value, taken
 *   from the verdict after the run: model/lessonSpoilers.ts); at 1280x800
 *   the question and its field are above the fold;
 * - the guess goes in from the keyboard (digits typed on the page land in
 *   the field, or the field is filled), Enter runs the step, the verdict
 *   appears, every check passes, no number of the text is wrong, the
 *   step's pictures are drawn, "Look at" and "Why" appear;
 * - every diff hunk's note lights up marks of the picture and brings them
 *   into view (hovered at 1280 px, focused at 1024 px), and the diff's code
 *   lines fit at 1024 px;
 * - Esc leaves the field, → goes on from the field or the page, ← goes back;
 *   f (focus mode) works from the field that holds the guess its run judged.
 *
 * Screenshots (SCREENSHOTS=1): each step before and after its run at 1024,
 * 1280 and 1920 px and in focus mode, in test-results/shots/lessons/.
 */
import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { spoilersIn, verdictValue } from '../web/model/lessonSpoilers';
import { expect, test } from './fixtures';

interface StepFile {
  title: string;
  prediction?: { unit?: string };
  diff?: { notes?: { hunk: number; picture?: string | string[] }[] };
}
const lessons = fs
  .readdirSync('lessons')
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(`lessons/${f}`, 'utf8')) as { id: string; steps: StepFile[] });

const SHOTS = !!process.env.SCREENSHOTS;
const WIDTHS = [
  [1024, 768],
  [1280, 800],
  [1920, 1080],
] as const;
// typed the ways people type numbers
const GUESSES = ['1500', '1,500', '1.5k', '40', '0.5', '2e3', '300'];

/** The text of the page's main area as it is drawn: what a student (or the room) can read. The
 * step numbers of the lesson's own navigation and a diff's line numbers are not figures of a run. */
async function visibleText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const s = document.createElement('style');
    s.textContent = 'main nav, .diff-no { display: none !important; }';
    document.head.appendChild(s);
    const t = document.querySelector('main')?.innerText ?? '';
    s.remove();
    return t;
  });
}

/** Two animation frames, bounded (a frame that never comes on a loaded machine must not hang the suite). */
async function settle(page: Page): Promise<void> {
  await page.evaluate(() => Promise.race([new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))), new Promise((r) => setTimeout(r, 1000))]));
}

/** Is the element on screen: in the window and in every scrolled box around it? */
const onScreen = (page: Page, selector: string): Promise<boolean> =>
  page.evaluate((sel) => {
    const el = [...document.querySelectorAll(sel)].find((e) => {
      const r = e.getBoundingClientRect();
      return r.width > 0 || r.height > 0;
    });
    if (!el) return false;
    const r = el.getBoundingClientRect();
    const inside = (b: { top: number; bottom: number; left: number; right: number }): boolean => r.bottom > b.top && r.top < b.bottom && r.right > b.left && r.left < b.right;
    // below the sticky header, in the window
    const top = document.querySelector('header.top')?.getBoundingClientRect().bottom ?? 0;
    if (!inside({ top, left: 0, bottom: window.innerHeight, right: window.innerWidth })) return false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(cs.overflowY) && p.scrollHeight > p.clientHeight && !inside(p.getBoundingClientRect())) return false;
    }
    return true;
  }, selector);

for (const lesson of lessons) {
  test(`lesson ${lesson.id}: every step, before and after its run, from the keyboard`, async ({ lab }) => {
    test.setTimeout(900_000);
    const { page } = lab;
    const n = lesson.steps.length;
    const shot = async (name: string): Promise<void> => {
      if (SHOTS) await page.screenshot({ path: `test-results/shots/lessons/${lesson.id}-${name}.png` });
    };
    await page.setViewportSize({ width: 1280, height: 800 });
    await lab.open(`#/lesson/${lesson.id}`);
    for (let i = 0; i < n; i++) {
      const step = lesson.steps[i]!;
      await test.step(`step ${i + 1}: ${step.title}`, async () => {
        await expect(page).toHaveURL(i === 0 ? new RegExp(`lesson/${lesson.id}$`) : new RegExp(`lesson/${lesson.id}\\?step=${i}$`));
        await expect(page.getByTestId('step-title')).toContainText(step.title);
        await expect(page.getByTestId('watch')).toBeVisible();
        await expect(page.getByTestId('look')).toHaveCount(0);
        await expect(page.getByTestId('why')).toHaveCount(0);

        // what is on screen before the run, at every width and in focus mode
        const before: [string, string][] = [];
        for (const [w, h] of WIDTHS) {
          await page.setViewportSize({ width: w, height: h });
          await settle(page);
          before.push([`${w} px`, await visibleText(page)]);
          await shot(`${i + 1}-before-${w}`);
        }
        await page.keyboard.press('f');
        await expect(page.locator('html.focus-mode')).toHaveCount(1);
        await settle(page);
        before.push(['focus mode', await visibleText(page)]);
        await shot(`${i + 1}-before-focus`);
        await page.keyboard.press('f');
        await expect(page.locator('html.focus-mode')).toHaveCount(0);

        await page.setViewportSize({ width: 1280, height: 800 });
        await settle(page);
        const field = page.getByTestId('prediction');
        const predicts = (await field.count()) > 0;
        if (predicts) {
          // the question and its field above the fold at 1280x800
          for (const el of [page.locator('label[for="prediction"]'), field]) {
            const box = await el.boundingBox();
            expect(box && box.y >= 0 && box.y + box.height <= 800, `step ${i + 1}: the question and its field are above the fold`).toBe(true);
          }
          const guess = GUESSES[i % GUESSES.length]!;
          if (i % 2 === 0 && /^\d+$/.test(guess)) {
            // digits typed anywhere on the page go to the field; Enter there runs the step
            // a click on the page's margin only moves the focus off the field: no
            // wait for the whole body to be still (a picture may be playing)
            await page.locator('body').click({ position: { x: 2, y: 300 }, force: true, timeout: 20_000 });
            await page.keyboard.type(guess);
            await expect(field).toBeFocused();
          } else await field.fill(guess);
          await expect(field).toHaveValue(guess);
          await field.press('Enter');
        } else await page.keyboard.press('r');

        await expect(page.getByTestId('checks')).toBeVisible({ timeout: 240_000 });
        await expect(page.getByTestId('check').first()).toBeVisible();
        await expect(page.locator('[data-testid="check"][data-pass="false"]')).toHaveCount(0);
        await expect(page.getByTestId('claim-wrong')).toHaveCount(0);
        await expect(page.getByTestId('look')).toBeVisible();
        await expect(page.getByTestId('why')).toBeVisible();
        await expect(page.getByTestId('watch')).toHaveCount(0);

        // the step's pictures are drawn
        const view = page.locator('.lesson-picture [data-testid$="-view"]').first();
        await expect(view).toBeVisible();
        const marks = await view.evaluate(
          (v) => [...v.querySelectorAll('svg.chart :is(rect, path, circle, line)')].filter((e) => {
            const r = e.getBoundingClientRect();
            return r.width > 0 || r.height > 0;
          }).length,
        );
        expect(marks, `step ${i + 1}: marks drawn in its pictures`).toBeGreaterThan(5);

        if (predicts) {
          // the answer, from the verdict: nowhere on screen before the run
          const verdict = page.getByTestId('verdict');
          await expect(verdict).toBeVisible();
          const text = (await verdict.textContent()) ?? '';
          const shown = verdictValue(text);
          const exact = Number(await verdict.getAttribute('data-actual'));
          expect(shown, `step ${i + 1}: the verdict states the simulated value: "${text}"`).not.toBeNull();
          const unit = step.prediction?.unit ?? '';
          const spoiled = before.flatMap(([where, t]) =>
            [...spoilersIn(t, exact, unit), ...spoilersIn(t, shown!, unit)].map((s) => `step ${i + 1} at ${where}: "${s.shown}" (the answer is ${text})`),
          );
          expect(spoiled).toEqual([]);
        }
        await shot(`${i + 1}-after-1280`);

        // each diff hunk's note lights up its marks and brings them into view; the code fits at 1024 px
        const notes = page.locator('[data-testid="diff-note"][data-picture]');
        const withMarks = await notes.count();
        expect(withMarks, `step ${i + 1}: its diff's notes name marks`).toBe((step.diff?.notes ?? []).filter((x) => x.picture).length);
        for (let k = 0; k < withMarks; k++) {
          const note = notes.nth(k);
          const keys = ((await note.getAttribute('data-picture')) ?? '').split(' ');
          await note.scrollIntoViewIfNeeded({ timeout: 20_000 });
          await note.hover({ timeout: 20_000 });
          await expect(page.locator('body')).toHaveAttribute('data-hl', keys.join(' '));
          const lit = await page.locator('[data-hl-on]').count();
          expect(lit, `step ${i + 1} note ${k + 1}: marks ${keys.join(', ')} in the picture`).toBeGreaterThan(0);
          expect(await onScreen(page, '[data-hl-on]'), `step ${i + 1} note ${k + 1}: its marks brought into view (1280 px)`).toBe(true);
          // the picture column scrolls, not the page: the note stays under the pointer
          expect(await note.evaluate((e) => { const r = e.getBoundingClientRect(); return r.top >= -1 && r.bottom <= window.innerHeight + 1; }), `step ${i + 1} note ${k + 1} stays in view: ${await note.evaluate((e) => JSON.stringify([e.getBoundingClientRect().top, e.getBoundingClientRect().bottom, window.innerHeight, window.scrollY]))}`).toBe(true);
          await page.mouse.move(2, 2);
        }
        if (step.diff) {
          await page.setViewportSize({ width: 1024, height: 768 });
          await settle(page);
          const cut = await page.evaluate(() =>
            [...document.querySelectorAll<HTMLElement>('.diff-body, .diff-text')].filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent?.slice(0, 60)),
          );
          expect(cut, `step ${i + 1}: diff lines cut off at 1024 px`).toEqual([]);
          for (let k = 0; k < withMarks; k++) {
            await notes.nth(k).focus({ timeout: 20_000 });
            expect(await onScreen(page, '[data-hl-on]'), `step ${i + 1} note ${k + 1}: its marks brought into view (1024 px, focused)`).toBe(true);
          }
          if (withMarks) await page.keyboard.press('Escape');
          await page.setViewportSize({ width: 1280, height: 800 });
          await settle(page);
        }
        if (SHOTS) {
          for (const [w, h] of WIDTHS) {
            await page.setViewportSize({ width: w, height: h });
            await settle(page);
            await shot(`${i + 1}-after-${w}`);
          }
          await page.keyboard.press('f');
          await settle(page);
          await shot(`${i + 1}-after-focus`);
          await page.keyboard.press('f');
          await page.setViewportSize({ width: 1280, height: 800 });
        }

        // on: from the field (→ passes through it once the step has run), or Esc out of it, then →
        if (i === 0 && predicts) {
          // right after Enter ran the step, f (focus mode for the projector) works from the field holding the judged guess
          await field.focus();
          const judged = await field.inputValue();
          await page.keyboard.press('f');
          await expect(page.locator('html.focus-mode')).toHaveCount(1);
          await page.keyboard.press('f');
          await expect(page.locator('html.focus-mode')).toHaveCount(0);
          await expect(field).toHaveValue(judged);
          await field.focus();
          await page.keyboard.press('Escape');
          await expect(field).not.toBeFocused();
        }
        if (i < n - 1) await page.keyboard.press('ArrowRight');
      });
    }
    // ← goes back, from wherever focus is
    await page.keyboard.press('ArrowLeft');
    await expect(page).toHaveURL(new RegExp(`step=${n - 2}$`));
    const all = await page.evaluate(() => window.__lab?.lessonChecks ?? {});
    expect(Object.keys(all).filter((k) => k.startsWith(`${lesson.id}/`))).toHaveLength(n);
    expect(Object.values(all).flat().every(Boolean)).toBe(true);
    expect(lab.consoleErrors).toEqual([]);
  });
}

test('the header names each lesson; the keys overlay lists them with their titles', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/');
  for (const l of lessons) {
    const link = page.getByTestId(`nav-lesson-${l.id}`);
    await expect(link).toBeVisible();
    expect(((await link.textContent()) ?? '').trim()).not.toMatch(/^\d+$/);
    await expect(link).toHaveAttribute('title', new RegExp((l as unknown as { title: string }).title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  }
  await page.keyboard.press('?');
  const help = page.getByTestId('help-lessons');
  await expect(help).toBeVisible();
  for (const l of lessons) await expect(help).toContainText((l as unknown as { title: string }).title);
  await page.keyboard.press('Escape');
  // Enter with no number does not run: the guess comes first
  await lab.open(`#/lesson/${lessons[0]!.id}`);
  await page.getByTestId('prediction').fill('');
  await page.getByTestId('prediction').press('Enter');
  await expect(page.getByTestId('need-guess')).toBeVisible();
  await expect(page.getByTestId('checks')).toHaveCount(0);
});
