// scripts/bench-web.mjs - what a user waits for in the browser, for
// `npm run bench` (reports, never asserts). The built app (dist/) in
// `vite preview`, driven by Playwright in Debian's Chromium:
//
//  1. the cold first chart of every experiment page at its defaults and of
//     every lesson step: a fresh browser context (no HTTP cache, no
//     compiled module), the time from navigation start to the first chart
//     of the results (goal <= 1.0 s). A lesson step draws after its run:
//     the step is opened cold, a guess typed, Run pressed; the time from
//     the press to the chart is printed beside the page's own load;
//  2. Run x20 of every experiment at its defaults (the page's "Run x20":
//     20 seeds, each kernel, on the page's pool of workers), from the click
//     to the 20th seed drawn (goal: bonnie <= 20 s on this 2-core host,
//     <= 10 s on 4 cores).
//
//  3. the sandbox: a command typed on a file system of 10,005 names, from
//     the request to the frame after the trees were redrawn (goal <= 100 ms).
//
// Beside each figure: the workers the page used (its pool's size) and the
// host's load average (the host is shared; compare figures measured at one
// time, on one host). LAB_BENCH_PORT picks the preview port.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fmt = (x, d = 2) => Number(x).toFixed(d);

/** Watch for the first chart from the first script on: its time since navigation start. */
const WATCH = () => {
  const sel = '[data-testid=results] svg.chart, [data-testid=results] svg[role=img]';
  const look = () => {
    if (window.__firstChart === undefined && document.querySelector(sel)) window.__firstChart = performance.now();
  };
  new MutationObserver(look).observe(document, { childList: true, subtree: true, attributes: false });
};

async function startServer(port) {
  const server = spawn(join(root, 'node_modules/.bin/vite'), ['preview', '--port', String(port), '--strictPort'], { cwd: root, stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://localhost:${port}/`)).ok) return server;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  server.kill();
  throw new Error(`vite preview did not start on port ${port}`);
}

/** A fresh context: nothing cached. */
async function coldPage(browser) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.addInitScript(WATCH);
  const page = await ctx.newPage();
  return { ctx, page };
}

const firstChart = (page, timeout = 120000) => page.waitForFunction(() => window.__firstChart, null, { timeout, polling: 20 }).then((h) => h.jsonValue());

export async function benchWeb({ only } = {}) {
  if (!existsSync(join(root, 'dist/index.html'))) {
    console.log('\nIn Chromium: dist/ missing (run npm run build)');
    return;
  }
  let chromium;
  try {
    ({ chromium } = await import('@playwright/test'));
  } catch {
    console.log('\nIn Chromium: Playwright not installed (bash scripts/setup.sh --test)');
    return;
  }
  const port = Number(process.env.LAB_BENCH_PORT ?? 4391);
  const base = `http://localhost:${port}/`;
  const server = await startServer(port);
  const browser = await chromium.launch({ executablePath: process.env.PW_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  try {
    // what the app lists (the engine's registry, the lessons)
    const { ctx, page } = await coldPage(browser);
    await page.goto(base);
    await page.waitForFunction(() => window.__lab?.experiments?.length > 0, null, { timeout: 60000 });
    const { experiments, lessons, workers } = await page.evaluate(() => ({ experiments: window.__lab.experiments, lessons: window.__lab.lessons, workers: window.__lab.workers }));
    const steps = Object.fromEntries(lessons.map((id) => [id, JSON.parse(readFileSync(join(root, 'lessons', `${id}.json`), 'utf8')).steps.length]));
    await ctx.close();
    const want = (name) => !only || only.includes(name);

    console.log(`\nIn Chromium (vite preview of dist/; ${cpus().length} cores, the page's pool: ${workers ?? '?'} workers; host load ${loadavg().map((x) => fmt(x, 1)).join(' ')}):`);
    console.log('  Cold first chart of each experiment page at its defaults (navigation start to the first chart; goal <= 1.0 s):');
    const pageTimes = [];
    for (const exp of experiments.filter(want)) {
      const { ctx: c, page: p } = await coldPage(browser);
      await p.goto(`${base}#/exp/${exp}`);
      const ms = await firstChart(p);
      const scale = await p.evaluate(() => (document.querySelector('[data-testid=first-run]') ? 'classroom scale first (firstRun.ts)' : ''));
      pageTimes.push(ms);
      console.log(`    ${exp.padEnd(12)} ${fmt(ms / 1000)} s${scale ? `  (${scale})` : ''}`);
      await c.close();
    }

    console.log('  Lesson steps, cold (navigation start to the page ready; Run pressed to the first chart; goal <= 1.0 s):');
    for (const id of lessons.filter(want)) {
      const n = steps[id] || 0;
      for (let i = 0; i < n; i++) {
        const { ctx: c, page: p } = await coldPage(browser);
        await p.goto(`${base}#/lesson/${id}?step=${i}`);
        await p.getByTestId(`lesson-${id}`).waitFor();
        const ready = await p.evaluate(() => performance.now());
        const field = p.getByTestId('prediction');
        const t0 = await p.evaluate(() => performance.now());
        if (await field.count()) {
          await field.fill('1');
          await field.press('Enter');
        } else await p.keyboard.press('r');
        let ms;
        try {
          ms = (await firstChart(p)) - t0;
        } catch {
          ms = NaN;
        }
        console.log(`    ${id} step ${i + 1}: page ${fmt(ready / 1000)} s, run to chart ${Number.isNaN(ms) ? 'no chart' : `${fmt(ms / 1000)} s`}`);
        await c.close();
      }
    }

    console.log('  Run x20 of each experiment at its defaults (click to the 20th seed drawn; goal: bonnie <= 20 s here, <= 10 s on 4 cores):');
    for (const exp of experiments.filter(want)) {
      const { ctx: c, page: p } = await coldPage(browser);
      await p.goto(`${base}#/exp/${exp}`);
      await firstChart(p);
      await p.waitForSelector('[data-testid=run-status][data-status=done]', { timeout: 300000 });
      const t0 = Date.now();
      await p.getByTestId('run-seeds').click();
      await p.waitForSelector('[data-testid=seeds-panel][data-state=done]', { timeout: 600000 });
      console.log(`    ${exp.padEnd(12)} ${fmt((Date.now() - t0) / 1000, 1)} s`);
      await c.close();
    }

    if (want('sandbox')) {
      // the sandbox (#/sandbox): a file system of 10,005 names opened from its link, then
      // commands typed one at a time; each from the request to the engine to the frame after
      // the trees were drawn (the page's own marks: sandboxRunMs + sandboxDrawMs)
      console.log('  Sandbox, a command typed on 10,005 names (request to the next frame after the redraw; goal <= 100 ms on 2 cores):');
      const script = ['mkdir /a', 'mkdir /b', 'mkdir /c', 'mkdir /d', 'mkdir /e', ...['a', 'b', 'c', 'd', 'e'].map((d) => `touch -n 2000 /${d}/f`)];
      const typed = ['touch /a/one-more', 'pwrite /a/one-more 0 64k', 'fsync /a/one-more', 'mkdir /q', 'mv /a/f7 /q/g', 'rm /b/f3', 'sync'];
      for (const cmp of [false, true]) {
        const { ctx: c, page: p } = await coldPage(browser);
        await p.goto(`${base}#/sandbox?sv=1${cmp ? '&cmp=1' : ''}&p.check=0&s=${encodeURIComponent(script.join('\n'))}`);
        await p.waitForFunction((n) => document.querySelectorAll('[data-testid=sandbox-script] li').length === n, script.length, { timeout: 120000 });
        const opened = await p.evaluate(() => window.__lab?.sandboxRunMs ?? NaN);
        const each = [];
        for (const [i, cmd] of typed.entries()) {
          await p.getByTestId('sandbox-input').fill(cmd);
          await p.evaluate(() => {
            window.__lab.sandboxDrawMs = undefined;
          });
          await p.getByTestId('sandbox-input').press('Enter');
          await p.waitForFunction((n) => document.querySelectorAll('[data-testid=sandbox-script] li').length === n && window.__lab?.sandboxDrawMs !== undefined, script.length + i + 1, { timeout: 60000 });
          each.push(await p.evaluate(() => window.__lab.sandboxRunMs + window.__lab.sandboxDrawMs));
        }
        const sorted = [...each].sort((a, b) => a - b);
        console.log(`    ${cmp ? 'both kernels' : 'one kernel  '}  opening the link ${fmt(opened / 1000)} s; per command: median ${fmt(sorted[Math.floor(sorted.length / 2)], 0)} ms, max ${fmt(sorted[sorted.length - 1], 0)} ms (${each.map((x) => fmt(x, 0)).join(', ')})`);
        await c.close();
      }
    }
  } finally {
    await browser.close();
    server.kill();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchWeb({ only: process.argv.slice(2).length ? process.argv.slice(2) : undefined });
