// scripts/bench-replay.mjs - the replay's speed, for `npm run bench` (reports,
// never asserts):
//
//  1. a classroom-scale run with recording on, WASM under Node: engine run
//     + the trace's JSON + decoding it (goal: <= 0.5 s each), for every
//     experiment whose page has a replay, at the classroom setting the page
//     records (web/views/registry.ts), each of its variants (the engine's
//     registry);
//  2. scrubbing a recording of >= 100,000 events in Chromium (the built app
//     in `vite preview`, driven by Playwright): a drag along the scrubber and
//     random jumps, one position per frame (goal: >= 50 frames a second).
//     Beside the wall-clock rate it prints the main thread's busy time per
//     frame (Chrome's own TaskDuration), which a shared, loaded host
//     inflates less, and the host's load average.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { callCli } from '../cli/lab.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fmt = (x, d = 1) => Number(x).toFixed(d);

/** [experiment, variant, params] of every replay the pages offer: the
 * views' registry says which experiments have one and at what classroom
 * setting (loaded through Vite, as the app is built), the engine's which
 * variants each runs. */
async function replayCases(M) {
  const { runnerImport } = await import('vite');
  const { module } = await runnerImport(join(root, 'web/views/registry.ts'), { root, configFile: false, logLevel: 'error' });
  const list = callCli(M, ['lab', 'list', '--json']);
  if (list.status !== 0) throw new Error(`lab list: ${list.err}`);
  const variants = new Map(JSON.parse(list.out).experiments.map((e) => [e.name, e.variants]));
  return Object.entries(module.VIEWS).flatMap(([exp, view]) => {
    const classroom = view.replay?.classroom;
    if (!classroom || !variants.has(exp)) return [];
    const params = Object.entries(classroom).map(([k, v]) => `${k}=${v}`).join('\n');
    return variants.get(exp).map((variant) => [exp, variant, params]);
  });
}

/** 1. recording cost, classroom scale */
export async function benchRecording(loadEngine) {
  const M = await loadEngine();
  const call = (name, ...a) => M[`_${name}`](...a);
  const str = (s) => {
    const n = M.lengthBytesUTF8(s) + 1;
    const p = M._malloc(n);
    M.stringToUTF8(s, p, n);
    return p;
  };
  const cases = await replayCases(M);
  console.log('\nReplay: a classroom-scale run recorded, WASM under Node (run + trace JSON + parse; goal <= 0.5 s each):');
  for (const [exp, variant, params] of cases) {
    let best = Infinity;
    let events = 0;
    for (let rep = 0; rep < 3; rep++) {
      const out = M._malloc(4);
      const pe = str(exp), pv = str(variant), pp = str(params);
      const t0 = performance.now();
      if (call('lab_open', pe, pv, pp, 1, 0, out, 0) !== 0) throw new Error(`lab_open ${exp}`);
      const run = M.getValue(out, 'i32');
      call('lab_record', run, 0, 400000);
      const done = M._malloc(4);
      M.setValue(done, 0, 'i32');
      while (!M.getValue(done, 'i32')) call('lab_step', run, 1000000, done);
      M.setValue(out, 0, 'i32');
      call('lab_trace_json', run, 0, out);
      const sp = M.getValue(out, 'i32');
      const doc = JSON.parse(M.UTF8ToString(sp));
      const ms = performance.now() - t0;
      events = doc.trace.events.length;
      call('lab_free', sp);
      call('lab_close', run);
      for (const p of [out, done, pe, pv, pp]) M._free(p);
      best = Math.min(best, ms);
    }
    console.log(`  ${exp} ${variant} ${params.replace(/\n/g, ' ')}: ${fmt(best / 1000, 2)} s host, ${events} events`);
  }
}

/** 2. scrubbing in Chromium */
export async function benchScrub() {
  const port = Number(process.env.LAB_BENCH_PORT ?? 4391);
  if (!existsSync(join(root, 'dist/index.html'))) {
    console.log('\nReplay scrubbing: dist/ missing (run npm run build)');
    return;
  }
  let chromium;
  try {
    ({ chromium } = await import('@playwright/test'));
  } catch {
    console.log('\nReplay scrubbing: Playwright not installed (bash scripts/setup.sh --test)');
    return;
  }
  const server = spawn(join(root, 'node_modules/.bin/vite'), ['preview', '--port', String(port), '--strictPort'], { cwd: root, stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`http://localhost:${port}/`)).ok) break;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const b = await chromium.launch({ executablePath: process.env.PW_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
    const p = await b.newPage({ viewport: { width: 1280, height: 900 } });
    // 12 MiB cold: ~114,000 events in the before run (the scrubber runs over them)
    await p.goto(`http://localhost:${port}/#/exp/sparse-cp?p.file_mib=12&p.state=cold&v.at=t:0`);
    await p.getByTestId('replay').waitFor({ timeout: 180000 });
    const events = await p.evaluate(() => Number(document.querySelector('[data-testid=replay-scrub]').max));
    const cdp = await p.context().newCDPSession(p);
    await cdp.send('Performance.enable');
    const busy = async () => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration').value;
    console.log(`\nReplay scrubbing in Chromium (${events} events in the first run, two kernels drawn; goal >= 50 frames/s; host load ${loadavg().map((x) => fmt(x)).join(' ')}):`);
    for (const mode of ['warm-up', 'drag', 'jump']) {
      const b0 = await busy();
      const r = await p.evaluate(async (m) => {
        const el = document.querySelector('[data-testid=replay-scrub]');
        const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
        const max = Number(el.max);
        let seed = 7;
        const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
        const frame = () => new Promise((res) => requestAnimationFrame(() => res(performance.now())));
        const frames = 200;
        await frame();
        const t0 = performance.now();
        const times = [];
        let last = t0;
        for (let i = 0; i < frames; i++) {
          set.call(el, String(m !== 'jump' ? Math.round((i / frames) * max) : Math.round(rnd() * max)));
          el.dispatchEvent(new Event('input', { bubbles: true }));
          const t = await frame();
          times.push(t - last);
          last = t;
        }
        times.sort((x, y) => x - y);
        return { frames, ms: performance.now() - t0, p50: times[frames >> 1], p95: times[Math.floor(frames * 0.95)] };
      }, mode);
      const b1 = await busy();
      // the first drag also builds the replay's checkpoints (once per recording)
      if (mode === 'warm-up') {
        console.log(`  first drag over the whole recording (builds the checkpoints): ${fmt(r.ms / 1000, 2)} s`);
        continue;
      }
      const perFrame = ((b1 - b0) * 1000) / r.frames;
      console.log(
        `  ${mode === 'drag' ? 'drag (a position per frame, left to right)' : 'random jumps'}: ${fmt(r.frames / (r.ms / 1000))} frames/s ` +
          `(frame p50 ${fmt(r.p50)} ms, p95 ${fmt(r.p95)} ms); main thread busy ${fmt(perFrame)} ms a frame = ${fmt(1000 / perFrame)} frames/s on an idle core`,
      );
    }
    await b.close();
  } finally {
    server.kill();
  }
}
