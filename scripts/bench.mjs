// scripts/bench.mjs - `npm run bench`: reports, never asserts.
//
//  1. events per second on a standard device workload, native vs WASM
//     (Node), and their ratio (goal: WASM within 1.15x of native time);
//  2. the bundle size, JS + WASM, gzip: all of it, and what a cold page
//     loads first and later (goal: a page <= 350 KB);
//  3. the full-scale experiments' host time under WASM (goal: <= 2 s each)
//     and the WASM heap they needed (goal: <= 256 MiB); 20 seeds of
//     sparse-cp's delalloc rows, both kernels (goal: <= 10 s); 20 seeds of
//     bonnie at full size, both kernels (goal: <= 40 s);
//  5. the replay: a classroom-scale run recorded (goal <= 0.5 s) and
//     scrubbing a 100,000-event recording in Chromium (goal >= 50 fps);
//  7. what a user waits for in Chromium (scripts/bench-web.mjs): the cold
//     first chart of every page and lesson step (goal <= 1.0 s), Run x20 of
//     every experiment on the page's pool of workers (bonnie: <= 20 s on 2
//     cores); the CLI's --seeds 20 with --jobs, once the CLI has it.
//
// Its output is also written into docs/performance.md's generated block.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { callCli, loadEngine } from '../cli/lab.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

// everything printed also goes to docs/performance.md's block (at the end)
const printed = [];
const print = console.log.bind(console);
console.log = (...a) => {
  printed.push(a.join(' '));
  print(...a);
};

/** Run the CLI inside one WASM instance; returns {doc, heapBytes, ms, cpuMs}
 * (cpuMs: this process's CPU time, which a busy shared host does not inflate
 * as it does the wall time). */
async function wasmRun(args) {
  const M = await loadEngine();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const { status, out, err } = callCli(M, ['lab', ...args]);
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  if (status !== 0) throw new Error(`lab ${args.join(' ')}: ${err}`);
  return { doc: JSON.parse(out), heapBytes: M.HEAPU8.length, ms, cpuMs: (c.user + c.system) / 1000 };
}

function nativeRun(args) {
  const t0 = performance.now();
  const r = spawnSync(join(root, 'build/native/lab'), args, { encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`native lab ${args.join(' ')}: ${r.stderr}`);
  return { doc: JSON.parse(r.stdout), ms };
}

const sumRuns = (doc, key) => Object.values(doc.runs).reduce((s, r) => s + r[key], 0);
const fmt = (x, d = 2) => Number(x).toFixed(d);

// 1. events per second on a standard device workload
{
  const args = ['run', 'fio', '--set', 'rw=randread', '--set', 'bs=4096', '--set', 'iodepth=32',
    '--set', 'numjobs=4', '--set', 'ios=2000000', '--json'];
  const best = (f) => Math.min(...[0, 1, 2].map(() => f()));
  const nat = nativeRun(args);
  const nWall = best(() => nativeRun(args).doc.runs.base.wall_ms);
  let wWall = Infinity;
  for (let i = 0; i < 3; i++) wWall = Math.min(wWall, (await wasmRun(args)).doc.runs.base.wall_ms);
  const events = nat.doc.runs.base.events;
  console.log('Event core on a standard device workload (fio randread 4k, QD32 x 4 jobs, 2M IOs):');
  console.log(`  events: ${events}`);
  console.log(`  native: ${fmt(nWall, 1)} ms  ${fmt(events / nWall / 1e3, 2)} M events/s`);
  console.log(`  wasm:   ${fmt(wWall, 1)} ms  ${fmt(events / wWall / 1e3, 2)} M events/s`);
  console.log(`  WASM/native time ratio: ${fmt(wWall / nWall, 3)}  (goal <= 1.15)`);
}

// 2. bundle size: everything, and what a cold page loads first and later
//    (scripts/bench-bundle.mjs)
{
  const { benchBundle } = await import('./bench-bundle.mjs');
  benchBundle();
}

// 3. full-scale experiments under WASM: every experiment of the registry at
//    its defaults (the published setup; a new experiment is timed without
//    being added here), then larger setups of some of them
const registry = (await wasmRun(['list', '--json'])).doc.experiments;
const listed = new Set(registry.map((e) => e.name));
const cases = [
  ...registry.map((e) => ({ name: `${e.name}, its defaults (${e.variants.length > 1 ? 'both variants' : 'one run'})`, exp: e.name, sets: [] })),
  { name: 'sparse-cp, 1 GiB, cold, both variants', exp: 'sparse-cp', sets: ['file_mib=1024', 'state=cold'] },
  { name: 'sparse-cp, 1 GiB, delalloc, both variants', exp: 'sparse-cp', sets: ['file_mib=1024', 'state=delalloc'] },
  { name: 'torture, files mix', exp: 'torture', sets: ['mix=files'] },
  // the defaults fill the file system to where the metadata limit bites
  // (fs_used_gib, fitted); a fresh one never reaches it: tar alone
  { name: 'untar, a fresh file system (fs_used_gib=0), both variants', exp: 'untar', sets: ['fs_used_gib=0'] },
];
// Best of three, with the slowest beside it: this 2-core host is shared,
// and one run can be a third slower for reasons that are not the code's.
console.log('\nFull-scale experiments, WASM under Node, best of 3 (goal: <= 2 s each, heap <= 256 MiB):');
for (const c of cases) {
  if (!listed.has(c.exp)) {
    console.log(`  ${c.name}: not available yet`);
    continue;
  }
  const args = ['run', c.exp, ...c.sets.flatMap((s) => ['--set', s]), '--json'];
  const rs = [];
  for (let i = 0; i < 3; i++) rs.push(await wasmRun(args));
  const ms = rs.map((x) => x.ms);
  const r = rs[ms.indexOf(Math.min(...ms))];
  console.log(`  ${c.name}: ${fmt(r.ms / 1000, 2)} s host (slowest ${fmt(Math.max(...ms) / 1000, 2)}; ` +
    `CPU ${fmt(Math.min(...rs.map((x) => x.cpuMs)) / 1000, 2)} s), ` +
    `${sumRuns(r.doc, 'events')} events, WASM heap ${fmt(Math.max(...rs.map((x) => x.heapBytes)) / 2 ** 20, 0)} MiB`);
}
if (listed.has('qgroup-drop')) {
  const thresholds = ['1024', '2048', '4096', '8192', '16384', 'inf'];
  let total = 0;
  for (const t of thresholds) total += (await wasmRun(['run', 'qgroup-drop', '--variant', 'after', '--set', `threshold=${t}`, '--json'])).ms;
  console.log(`  qgroup-drop threshold sweep (6 points, after): ${fmt(total / 1000, 2)} s host`);
}

// 3b. a published row that is one run of a noisy quantity is judged over
//     20 seeds (lab fidelity, the pages' "Run x20"): sparse-cp's delalloc
//     rows at 128 MiB, both kernels, 20 seeds each (goal: <= 10 s).
if (listed.has('sparse-cp')) {
  const args = ['run', 'sparse-cp', '--set', 'state=delalloc', '--seeds', '20', '--json'];
  const rs = [];
  for (let i = 0; i < 3; i++) rs.push(await wasmRun(args));
  const ms = rs.map((x) => x.ms);
  const r = rs[ms.indexOf(Math.min(...ms))];
  const sp = (v) => r.doc.runs[v].spread.cp_ms;
  console.log(`\n20 seeds of sparse-cp, 128 MiB, delalloc, both variants, WASM under Node, best of 3 (goal <= 10 s):`);
  console.log(`  ${fmt(r.ms / 1000, 2)} s host (slowest ${fmt(Math.max(...ms) / 1000, 2)}; CPU ${fmt(r.cpuMs / 1000, 2)} s), WASM heap ${fmt(Math.max(...rs.map((x) => x.heapBytes)) / 2 ** 20, 0)} MiB; ` +
    `cp 5-95%: before [${fmt(sp('before').p5, 0)}, ${fmt(sp('before').p95, 0)}] ms, after [${fmt(sp('after').p5, 0)}, ${fmt(sp('after').p95, 0)}] ms`);
}

// 3c. seed 001's Latency rows are maxima of one run: lab fidelity judges
//     them over 20 seeds of the full-size run, both kernels (goal: <= 40 s).
//     One pass (it is long); the full-size run of both kernels is timed
//     with every experiment's defaults above (goal: <= 2 s).
if (listed.has('bonnie')) {
  const r = await wasmRun(['run', 'bonnie', '--seeds', '20', '--json']);
  const sp = (v, m) => r.doc.runs[v].spread[m];
  const rg = (v, m) => `[${fmt(sp(v, m).p5, 0)}, ${fmt(sp(v, m).p95, 0)}]`;
  console.log(`\n20 seeds of bonnie at full size (20,480 files x 375 KiB), both variants, WASM under Node, one pass (goal <= 40 s):`);
  console.log(`  ${fmt(r.ms / 1000, 2)} s host (CPU ${fmt(r.cpuMs / 1000, 2)} s), WASM heap ${fmt(r.heapBytes / 2 ** 20, 0)} MiB; ` +
    `slowest sequential delete 5-95%: before ${rg('before', 'seq_delete_lat_ms')} ms, after ${rg('after', 'seq_delete_lat_ms')} ms`);
}

// 4. the metadata core at scale: 300,000 files in one fs tree, 20,000 dirty
//    extents per transaction (engine/tests/bench_meta.c), native and WASM.
{
  const make = spawnSync('make', ['-s', '-C', join(root, 'engine'), 'bench-meta'], {
    stdio: ['ignore', 'ignore', process.stderr],
    env: { ...process.env, NODE_PATH: '/usr/share/nodejs' },
  });
  if (make.status !== 0) {
    console.log('\nMetadata core at scale: build failed');
  } else {
    console.log('\nMetadata core at scale (300,000 files, 20,000 dirty extents per commit, full check):');
    const runs = [
      ['native', join(root, 'build/native/bench_meta'), []],
      ['wasm  ', process.execPath, [join(root, 'build/wasm-bench/bench_meta.cjs')]],
    ];
    for (const [name, cmd, pre] of runs) {
      const r = spawnSync(cmd, [...pre, '300000'], { encoding: 'utf8', maxBuffer: 16 << 20 });
      const lines = r.stdout.trim().split('\n');
      console.log(`  ${name}: ${r.status === 0 ? lines.join('\n          ') : `failed: ${r.stderr.trim()}`}`);
    }
  }
}

// 5. the replay: a classroom-scale run recorded, and scrubbing a recording
//    in Chromium (scripts/bench-replay.mjs)
{
  const { benchRecording, benchScrub } = await import('./bench-replay.mjs');
  await benchRecording(loadEngine);
  await benchScrub();
}

// 6. torture's cost per operation (issue 32 item 5): each mix at 10^5
//    and 10^6 operations, native, seed 1, with the incremental check after
//    every commit and the whole one on its schedule (check_incr.c).
//    Goals: 10^6 operations <= 60 s, and 10x the operations <= 12x the
//    time. CPU seconds (user + sys) are the measure: the host is shared,
//    so the wall clock is printed beside them but not judged.
{
  const time = existsSync('/usr/bin/time');
  const { loadavg } = await import('node:os');
  console.log('\nTorture cost per operation, native, seed 1 (goals: 10^6 ops <= 60 s CPU; 10x ops <= 12x CPU):');
  for (const mix of ['files', 'all']) {
    const cpu = [];
    for (const ops of [100000, 1000000]) {
      const args = ['run', 'torture', '--set', `ops=${ops}`, '--set', `mix=${mix}`, '--json'];
      // a shared host's other work slows even CPU seconds (caches, SMT):
      // the 1-minute load beside each number says how busy it was
      const load = loadavg()[0];
      const cmd = time ? '/usr/bin/time' : join(root, 'build/native/lab');
      const r = spawnSync(cmd, time ? ['-f', '%U %S %M', join(root, 'build/native/lab'), ...args] : args,
        { encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status !== 0) {
        console.log(`  mix=${mix} ops=${ops}: failed: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}`);
        break;
      }
      const run = JSON.parse(r.stdout).runs.base;
      const m = run.metrics;
      const [user, sys, kb] = time ? r.stderr.trim().split('\n').at(-1).split(' ').map(Number) : [NaN, NaN, NaN];
      const c = time ? user + sys : run.wall_ms / 1000;
      cpu.push(c);
      console.log(`  mix=${mix} ops=${ops}: ${fmt(c, 1)} s CPU (${fmt(run.wall_ms / 1000, 1)} s wall), ` +
        `${fmt(kb / 1024, 0)} MiB, ${fmt((c * 1e6) / ops, 1)} us/op; ${m.commits} commits (${m.full_checks} full checks), ` +
        `check_failures ${m.check_failures}; host load ${fmt(load, 1)}`);
    }
    if (cpu.length === 2)
      console.log(`  mix=${mix}: 10x the operations took ${fmt(cpu[1] / cpu[0], 1)}x the time ` +
        `(goal <= 12x; 10^6 ops ${cpu[1] <= 60 ? 'within' : 'OVER'} 60 s)`);
  }
}

// 7. what a user waits for, in Chromium; the CLI's --jobs once it has one
{
  const { benchWeb } = await import('./bench-web.mjs');
  await benchWeb();
  const help = spawnSync(join(root, 'build/native/lab'), ['help', 'run'], { encoding: 'utf8' });
  if (/--jobs/.test(`${help.stdout}${help.stderr}`)) {
    console.log('\nThe CLI over 20 seeds, native, --jobs (wall clock):');
    for (const exp of ['bonnie', 'untar', 'sparse-cp', 'qgroup-drop', 'receive']) {
      if (!listed.has(exp)) continue;
      const line = [];
      for (const jobs of ['1', String(Math.min(4, (await import('node:os')).cpus().length))]) {
        const t0 = performance.now();
        const r = spawnSync(join(root, 'build/native/lab'), ['run', exp, '--seeds', '20', '--jobs', jobs, '--json'], { encoding: 'utf8', maxBuffer: 256 << 20 });
        line.push(r.status === 0 ? `--jobs ${jobs}: ${fmt((performance.now() - t0) / 1000, 1)} s` : `--jobs ${jobs}: failed`);
      }
      console.log(`  ${exp}: ${line.join(', ')}`);
    }
  } else {
    console.log('\nThe CLI over 20 seeds with --jobs: not in this build of the CLI yet');
  }
}

// docs/performance.md: the block `npm run bench` writes
{
  const { joinBlocks, splitBlocks } = await import('./docs.mjs');
  const file = join(root, 'docs/performance.md');
  const parts = splitBlocks(readFileSync(file, 'utf8'), 'docs/performance.md');
  const block = parts.find((p) => p.command === 'npm run bench');
  if (block) {
    const { loadavg } = await import('node:os');
    block.body = ['```', `npm run bench, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, host load ${loadavg().map((x) => fmt(x, 1)).join(' ')}`, ...printed.join('\n').trim().split('\n'), '```'].join('\n');
    writeFileSync(file, joinBlocks(parts));
    print('\n(written into docs/performance.md)');
  }
}
