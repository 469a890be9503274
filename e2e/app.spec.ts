/*
 * End-to-end: the built app in chromium. The page loads cleanly and stays on
 * localhost; a device run draws its chart; bad input gets a clear message
 * and the page keeps working; the URL reproduces the view; the keyboard
 * actions work. (The lessons are played by lessons-play.spec.ts.)
 */
import { expect, test } from './fixtures';

test.afterEach(async ({ lab }) => {
  expect(lab.external, 'requests that tried to leave localhost').toEqual([]);
  expect(lab.failed, 'failed local requests').toEqual([]);
  expect(lab.consoleErrors, 'console errors').toEqual([]);
});

test('the home page loads the engine and lists the device and the lessons', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/');
  await expect(page.getByTestId('home')).toBeVisible();
  await expect(page.getByTestId('home-device')).toBeVisible();
  await expect(page.getByTestId('home-lesson-ssd-4k-write')).toBeVisible();
  await expect(page.getByTestId('nav-device')).toBeVisible();
  // the lede counts the patch experiments the engine has, not a promise
  await expect(page.locator('.lede')).toContainText('(the five the lab is built for)');
});

test('a device run draws the simulated CDF against the measured percentiles', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio');
  await test.step('choose a 4 KiB random write at QD1 on nvme-dc', async () => {
    await page.getByTestId('param-device').selectOption('nvme-dc');
    await page.getByTestId('param-rw').selectOption('randwrite');
    await expect(page).toHaveURL(/p\.rw=randwrite/);
  });
  await test.step('run it', async () => {
    await page.getByTestId('run').click();
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  });
  await test.step('the chart has a simulated line and measured markers with their source', async () => {
    const line = page.getByTestId('cdf-line-sim');
    await expect(line).toBeVisible();
    await expect(line).toHaveAttribute('d', /^M[\d.]+,[\d.]+(L[\d.]+,[\d.]+){20,}/);
    await expect(page.getByTestId('cdf-marker')).toHaveCount(4);
    await expect(page.getByTestId('measured-source')).toContainText('4k_w_1');
    await expect(page.getByTestId('measured-fit')).toHaveText('(the profile was fitted to this point)');
  });
  await test.step('IOPS simulated and measured are both shown', async () => {
    const cmp = page.getByTestId('device-compare');
    await expect(cmp).toContainText('IOPS');
    await expect(cmp).toContainText('80,100');
    const iops = await page.evaluate(() => window.__lab?.lastRun?.results.base?.metrics.iops ?? 0);
    expect(iops).toBeGreaterThan(10000);
  });
  await test.step("the profile's fitted constants are listed one per line, by name", async () => {
    const notes = page.getByTestId('profile-notes');
    expect(await notes.locator('li').count()).toBeGreaterThanOrEqual(4);
    await expect(notes.locator('li code').first()).toHaveText('max_queue');
    await expect(notes).toContainText('power-loss protection');
  });
  await test.step('jump to another measured job: the form, the URL and the comparison follow', async () => {
    await page.getByTestId('measured-job').selectOption({ label: 'randread 4 KiB, QD1 × 8 jobs' });
    await expect(page).toHaveURL(/p\.numjobs=8/);
    await expect(page.getByTestId('param-numjobs')).toHaveValue('8');
    await expect(page.getByTestId('measured-source')).toContainText('4k_r_8');
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    // the run before stays on the chart as a ghost, labelled by what differed
    await expect(page.getByTestId('cdf-line-prev')).toBeVisible();
    await expect(page.getByTestId('previous-legend')).toContainText('numjobs=1');
  });
  await test.step('a measured point the profile was not fitted on says why', async () => {
    await page.getByTestId('param-device').selectOption('consumer-nvme');
    await page.getByTestId('measured-job').selectOption({ label: 'randread 8 KiB, QD16 × 1 job' });
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await expect(page.getByTestId('measured-source')).toContainText('bs_8k_qd_16');
    await expect(page.getByTestId('measured-fit')).toContainText('outside the model: the pinned run');
  });
});

test('every point measured on the 860 PRO, checked in the browser: the counts the C test asserts', async ({ lab }) => {
  test.setTimeout(240_000);
  const { page } = lab;
  await lab.open('#/exp/fio?p.device=consumer-ssd');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('fit-check-replicates')).toHaveCount(0); // each 860 PRO job was measured once
  // a sweep can be stopped like any long run; what it did stays
  await page.getByTestId('fit-check-run').click();
  await expect(page.getByTestId('fit-check-summary')).toBeVisible({ timeout: 60_000 });
  await page.getByTestId('fit-check-run-stop').click();
  await expect(page.getByTestId('fit-check')).toHaveAttribute('data-state', 'stopped');
  await expect(page.getByTestId('fit-check-run-stopped')).toContainText('stopped after');
  await expect(page.getByTestId('fit-check-summary')).toBeVisible();
  await page.getByTestId('fit-check-run').click();
  await expect(page.getByTestId('fit-check')).toHaveAttribute('data-state', 'done', { timeout: 200_000 });
  // engine/tests/test_fio_fidelity.c: consumer-ssd has 23 fitted points, at least 22 within 15%
  const fitted = page.getByTestId('fit-check-fitted');
  await expect(fitted).toHaveAttribute('data-points', '23');
  expect(Number(await fitted.getAttribute('data-within'))).toBeGreaterThanOrEqual(22);
  await expect(page.getByTestId('fit-dot-fitted')).toHaveCount(3 * 23);
  // a miss is listed; clicking a dot loads that job
  const misses = await page.getByTestId('fit-check-miss').count();
  expect(misses).toBe(23 - Number(await fitted.getAttribute('data-within')));
  // a miss loads its job from the table too (from the keyboard as well)
  await page.getByTestId('fit-check-miss').first().getByRole('button').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('measured-fit')).toContainText('fitted to this point');
  await expect(page.getByTestId('fit-check')).toHaveAttribute('data-state', 'done'); // the check stays
  // dots can overlap; a hover shows each one's job, the test clicks it directly
  await page.getByTestId('fit-dot-held-out').first().dispatchEvent('click');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('measured-fit')).toContainText('held out');
});

test('a bad parameter gets a clear message, nothing typed is lost, and the page keeps working', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio');
  await page.getByTestId('param-bs').fill('100');
  await expect(page.getByTestId('param-bs-error')).toHaveText('bs must be at least 512 bytes.');
  await expect(page.getByTestId('run')).toBeDisabled();
  await test.step('the typed value survives a reload (URL and localStorage)', async () => {
    await page.reload();
    await expect(page.getByTestId('param-bs')).toHaveValue('100');
    await page.goto('/#/');
    await page.getByTestId('nav-device').click();
    await expect(page.getByTestId('param-bs')).toHaveValue('100');
  });
  await page.getByTestId('param-bs').fill('8192');
  await expect(page.getByTestId('param-bs-error')).toHaveCount(0);
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await expect(page.getByTestId('cdf-line-sim')).toBeVisible();
});

test('a link naming a parameter the experiment does not have says so and offers to remove it', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?p.blocksize=8192&p.bs=8192');
  const notice = page.getByTestId('param-unknown-blocksize');
  await expect(notice).toContainText('no parameter called blocksize');
  await expect(page.getByTestId('run')).toBeDisabled();
  await page.getByTestId('param-unknown-blocksize-remove').click();
  await expect(notice).toHaveCount(0);
  await expect(page).not.toHaveURL(/blocksize/);
  await expect(page).toHaveURL(/p\.bs=8192/);
  await expect(page.getByTestId('param-bs')).toHaveValue('8192');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
});

test("a link whose seed is not one says which seed is used, and the corrected link drops it", async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?seed=abc&p.bs=8192');
  await expect(page.getByTestId('bad-seed')).toContainText('random seed abc is not a whole number');
  await expect(page.getByTestId('bad-seed')).toContainText('so random seed 1 is used');
  await expect(page.getByTestId('param-seed')).toHaveValue('1');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await page.getByTestId('param-bs').fill('4096');
  await expect(page.getByTestId('bad-seed')).toHaveCount(0);
  await expect(page).not.toHaveURL(/seed=/);
});

test('stored values of the wrong shape (another version, or edited by hand) are ignored, not fatal', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/');
  await page.evaluate(() => {
    localStorage.setItem('btrfs-lab:form:fio', 'null');
    localStorage.setItem('btrfs-lab:form:sparse-cp', '{"file_mib": 8}');
    localStorage.setItem('btrfs-lab:pred:ssd-4k-write:0', '42');
  });
  await lab.open('#/exp/fio');
  await expect(page.getByTestId('param-bs')).toHaveValue('4096');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  await lab.open('#/exp/sparse-cp');
  await expect(page.getByTestId('param-file_mib')).toHaveValue('128');
  await lab.open('#/lesson/ssd-4k-write?step=0');
  await expect(page.getByTestId('prediction')).toHaveValue('');
  await page.getByTestId('prediction').fill('30');
  await expect(page.getByTestId('prediction')).toHaveValue('30');
});

test('a mangled link shows a message instead of breaking the page', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/%E0%A4%A?p.%ZZ=1');
  await expect(page.getByText('There is no experiment called "%E0%A4%A"')).toBeVisible();
  await page.getByTestId('nav-device').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
  expect(lab.consoleErrors).toEqual([]);
});

test('a link reproduces the view, and the keyboard actions work', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?seed=3&p.device=consumer-ssd&p.iodepth=4&p.rw=randread');
  await expect(page.getByTestId('param-device')).toHaveValue('consumer-ssd');
  await expect(page.getByTestId('param-iodepth')).toHaveValue('4');
  await expect(page.getByTestId('param-seed')).toHaveValue('3');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done'); // a link runs once
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  await test.step('? opens the help generated from the actions table; Esc closes it', async () => {
    await page.keyboard.press('?');
    await expect(page.getByTestId('help')).toBeVisible();
    await expect(page.getByTestId('help')).toContainText('Focus mode');
    await page.keyboard.press('Escape');
    await expect(page.getByTestId('help')).toHaveCount(0);
  });
  await test.step('f toggles focus mode (in the URL); r runs', async () => {
    await page.keyboard.press('f');
    await expect(page).toHaveURL(/focus=1/);
    await expect(page.getByTestId('param-form')).toBeHidden();
    await page.keyboard.press('r');
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', /running|done/);
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
    await page.keyboard.press('f');
    await expect(page.getByTestId('param-form')).toBeVisible();
  });
  await test.step('e cycles the before/after emphasis (in the URL)', async () => {
    await page.keyboard.press('e');
    await expect(page).toHaveURL(/emph=before/);
    await page.keyboard.press('e');
    await expect(page).toHaveURL(/emph=after/);
    await page.keyboard.press('e');
    await expect(page).not.toHaveURL(/emph=/);
  });
});

test('a long run can be cancelled and the page keeps working', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?p.ios=5000000&p.iodepth=32');
  // 25 times the published setup's IOs: the link asks before it runs
  await page.getByTestId('long-run-confirm').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'running');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'canceled');
  await page.getByTestId('param-ios').fill('20000');
  await page.getByTestId('run').click();
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done');
});

test('the device page compares the measured drive with itself where a job was measured twice', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?p.device=nvme-dc');
  // measured data only, shown before any check is run; the same count as
  // engine/tests/test_fio_fidelity.c's "the drive against itself"
  const self = page.getByTestId('fit-check-replicates');
  await expect(self).toHaveAttribute('data-pairs', '50');
  await expect(self).toHaveAttribute('data-within', '40');
  await expect(self).toHaveText(
    'The drive against itself: 50 of these jobs were measured twice, and the second run is within 15% of the first on IOPS, median and p99 for 40 of them. ' +
      "A model should not be asked to come closer to one run than the drive's own second run does.",
  );
  // a job measured twice draws its second run hollow beside the first:
  // the 9-job 4 KiB write p99 was 18.7 ms in one run and 53.7 ms in the other
  await page.getByTestId('measured-job').selectOption({ label: 'randwrite 4 KiB, QD128 × 9 jobs' });
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('cdf-marker-other')).toHaveCount(4);
  await expect(page.getByTestId('cdf-chart')).toContainText('53.7 ms');
  await expect(page.getByTestId('measured-other')).toContainText('5G_3.19/4k_w_9.txt');
  await expect(page.getByTestId('measured-other')).toContainText('held out of the fit');
  // a job measured once has none
  await page.getByTestId('measured-job').selectOption({ label: 'randwrite 8 KiB, QD128 × 2 jobs' });
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('cdf-marker')).not.toHaveCount(0);
  await expect(page.getByTestId('cdf-marker-other')).toHaveCount(0);
  await expect(page.getByTestId('measured-other')).toHaveCount(0);
});

test('on the device page the keyboard walks the jobs fio measured (n / p, arrows), for a projector', async ({ lab }) => {
  const { page } = lab;
  await lab.open('#/exp/fio?p.device=nvme-dc&p.rw=randwrite&p.bs=4096&p.iodepth=1&p.numjobs=1');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  const job = page.getByTestId('measured-job');
  const label = async () => job.evaluate((s: HTMLSelectElement) => s.selectedOptions[0]?.textContent ?? '');
  expect(await label()).toBe('randwrite 4 KiB, QD1 × 1 job');
  await page.keyboard.press('n');
  await expect.poll(label).toBe('randwrite 4 KiB, QD1 × 2 jobs');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  await expect(page.getByTestId('param-numjobs')).toHaveValue('2'); // the form and the URL follow
  expect(page.url()).toContain('p.numjobs=2');
  await page.keyboard.press('ArrowLeft');
  await expect.poll(label).toBe('randwrite 4 KiB, QD1 × 1 job');
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-status', 'done', { timeout: 60_000 });
  // the help lists it
  await page.keyboard.press('?');
  await expect(page.getByText('its next setup (published setup, threshold, or measured job)')).toBeVisible();
});
