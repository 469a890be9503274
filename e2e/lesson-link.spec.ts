/*
 * lesson-link.spec.ts - a link to a lesson step the lesson has not
 * (step=-1, 99999, abc, or one past its end) says so in a notice, as a bad
 * seed does on an experiment page, and opens the nearest step; the notice
 * goes once the student moves, and the page keeps working.
 * Screenshots of the notice, to /tmp/lesson-link/,
 * at 1024, 1280 and 1920 px.
 */
import fs from 'node:fs';
import { expect, test } from './fixtures';

const lesson = JSON.parse(fs.readFileSync('lessons/ssd-4k-write.json', 'utf8')) as { id: string; steps: { title: string }[] };
const n = lesson.steps.length;

test.afterEach(async ({ lab }) => {
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
  expect(lab.consoleErrors, 'console errors').toEqual([]);
});

const cases: { step: string; shown: number }[] = [
  { step: '-1', shown: 1 },
  { step: 'abc', shown: 1 },
  { step: '99999', shown: n },
  { step: String(n), shown: n }, // one past the end: in the URL's range, not the lesson's
];

for (const { step, shown } of cases) {
  test(`step=${step}: a notice, and step ${shown} opens`, async ({ lab }) => {
    const { page } = lab;
    await lab.open(`#/lesson/${lesson.id}?step=${encodeURIComponent(step)}`);
    const notice = page.getByTestId('bad-step');
    await expect(notice).toBeVisible();
    await expect(notice).toContainText(`The link's step ${step} is not a step of this lesson`);
    await expect(notice).toContainText(`so step ${shown} is shown`);
    await expect(page.getByTestId('step-title')).toContainText(`${shown}. ${lesson.steps[shown - 1]!.title}`);
    await expect(page.locator('.step-dot-on')).toHaveText(String(shown));
  });
}

test('a good step has no notice; moving on from a bad link drops it', async ({ lab }) => {
  const { page } = lab;
  await lab.open(`#/lesson/${lesson.id}?step=1`);
  await expect(page.getByTestId('step-title')).toContainText(`2. ${lesson.steps[1]!.title}`);
  await expect(page.getByTestId('bad-step')).toHaveCount(0);
  await lab.open(`#/lesson/${lesson.id}?step=-1`);
  await expect(page.getByTestId('bad-step')).toBeVisible();
  for (const width of [1024, 1280, 1920]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: `/tmp/lesson-link/bad-step-${width}.png` });
  }
  await page.getByTestId('step-next').click();
  await expect(page.getByTestId('step-title')).toContainText(`2. ${lesson.steps[1]!.title}`);
  await expect(page.getByTestId('bad-step')).toHaveCount(0);
  await expect(page).toHaveURL(/step=1$/);
});
