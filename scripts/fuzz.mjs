// scripts/fuzz.mjs [SECONDS] [--per-target S] [--seed N] [--merge] - `npm run fuzz --
// 600`: a coverage-guided fuzzing campaign over the engine's libFuzzer
// targets (engine/fuzz/), the time split evenly between them (or S
// seconds each with --per-target: CI runs `--per-target 60`), one after
// the other (the machine's cores are shared). Each target starts from its
// committed seed corpus (read-only) and keeps what it finds in
// build/fuzz/corpus/NAME, so a second campaign goes on where the first
// stopped. Crashes, leaks, sanitizer reports and failed invariants are
// written to build/fuzz/crashes/. Prints, per target: the seconds it ran,
// executions, coverage (edges and features, libFuzzer's cov / ft), corpus
// size and findings. --merge then folds into the committed corpus the
// inputs of build/fuzz/corpus that add coverage to it (libFuzzer
// -merge=1), so that `npm test` replays the campaign's growth.
// --seed N fixes libFuzzer's random seed (CI uses 1), so that a finding
// in CI comes back when the same command runs on the same commit (its
// first mutations are the same; how far it gets in S seconds depends on
// the machine). Exit status 1 if anything was found.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const merge = argv.includes('--merge');
const pt = argv.indexOf('--per-target');
const perTarget = pt >= 0 ? Number(argv[pt + 1]) : NaN;
const sd = argv.indexOf('--seed');
const fuzzSeed = sd >= 0 ? Number(argv[sd + 1]) : NaN;
const rest = argv.filter((a, i) => a !== '--merge' && (pt < 0 || (i !== pt && i !== pt + 1)) && (sd < 0 || (i !== sd && i !== sd + 1)));
const seconds = Number(rest[0] ?? 600);
const usage = 'usage: npm run fuzz -- [SECONDS | --per-target SECONDS] [--seed N] [--merge] (at least 2 s; N a whole number from 1)';
if ((pt >= 0 && (!(perTarget >= 1) || rest.length)) || rest.length > 1 || !Number.isFinite(seconds) || seconds < 2 || (sd >= 0 && !(Number.isInteger(fuzzSeed) && fuzzSeed >= 1))) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

const make = spawnSync('make', ['-s', '-C', join(root, 'engine'), 'fuzz'], { stdio: ['ignore', 'inherit', 'inherit'] });
if (make.status !== 0) {
  process.stderr.write('fuzz: building the targets failed (scripts/setup.sh --test installs clang)\n');
  process.exit(1);
}

const targets = readdirSync(join(root, 'engine/fuzz')).filter((f) => /^fuzz_.*\.c$/.test(f)).map((f) => f.slice(5, -2));
const per = pt >= 0 ? Math.floor(perTarget) : Math.max(1, Math.floor(seconds / targets.length));
const crashDir = join(root, 'build/fuzz/crashes');
mkdirSync(crashDir, { recursive: true });

/** Run one target for `per` seconds; resolve its figures. */
function campaign(name) {
  const work = join(root, 'build/fuzz/corpus', name);
  mkdirSync(work, { recursive: true });
  const args = [
    `-max_total_time=${per}`,
    '-print_final_stats=1',
    '-timeout=60',
    '-rss_limit_mb=3072',
    `-artifact_prefix=${crashDir}/${name}-`,
    work,
    join(root, 'engine/fuzz/corpus', name),
  ];
  const dict = join(root, 'engine/fuzz', `${name}.dict`);
  if (existsSync(dict)) args.unshift(`-dict=${dict}`);
  if (sd >= 0) args.unshift(`-seed=${fuzzSeed}`);
  const before = new Set(readdirSync(crashDir));
  const t0 = Date.now();
  return new Promise((resolve) => {
    const p = spawn(join(root, 'build/fuzz', `fuzz_${name}`), args, {
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1', UBSAN_OPTIONS: 'print_stacktrace=1' },
    });
    let log = '';
    p.stderr.on('data', (d) => {
      log += d;
      if (log.length > 1 << 20) log = log.slice(-(1 << 19));
    });
    p.on('close', (status) => {
      const execs = Number(/stat::number_of_executed_units:\s*(\d+)/.exec(log)?.[1] ?? NaN);
      const last = [...log.matchAll(/cov: (\d+) ft: (\d+) corp: (\d+)/g)].at(-1);
      const found = readdirSync(crashDir).filter((f) => !before.has(f) && f.startsWith(`${name}-`));
      resolve({ name, status, secs: Math.round((Date.now() - t0) / 1000), execs, cov: Number(last?.[1]), ft: Number(last?.[2]), corpus: Number(last?.[3]), found, tail: log.split('\n').slice(-30).join('\n') });
    });
  });
}

const results = [];
for (const t of targets) {
  process.stdout.write(`fuzz: ${t} for ${per} s\n`);
  results.push(await campaign(t));
}
process.stdout.write(`\n${'target'.padEnd(10)} ${'seconds'.padStart(8)} ${'executions'.padStart(11)} ${'exec/s'.padStart(8)} ${'cov'.padStart(6)} ${'ft'.padStart(7)} ${'corpus'.padStart(7)}  findings\n`);
for (const r of results) {
  process.stdout.write(
    `${r.name.padEnd(10)} ${String(r.secs).padStart(8)} ${String(r.execs).padStart(11)} ${String(Math.round(r.execs / Math.max(1, r.secs))).padStart(8)} ${String(r.cov).padStart(6)} ${String(r.ft).padStart(7)} ${String(r.corpus).padStart(7)}  ${r.found.length ? r.found.join(' ') : 'none'}\n`,
  );
}
if (merge) {
  for (const t of targets) {
    const seed = join(root, 'engine/fuzz/corpus', t);
    const n0 = readdirSync(seed).length;
    const m = spawnSync(join(root, 'build/fuzz', `fuzz_${t}`), ['-merge=1', '-timeout=60', '-rss_limit_mb=3072', seed, join(root, 'build/fuzz/corpus', t)], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ASAN_OPTIONS: 'detect_leaks=1' },
    });
    const n1 = readdirSync(seed).length;
    process.stdout.write(`merge: ${t}: ${n1 - n0} inputs that add coverage joined engine/fuzz/corpus/${t} (${n1} now)${m.status ? ` (merge exit ${m.status})` : ''}\n`);
  }
}
const bad = results.filter((r) => r.found.length > 0 || r.status !== 0);
for (const r of bad) process.stdout.write(`\n== ${r.name} (exit ${r.status}):\n${r.tail}\n`);
process.exit(bad.length ? 1 : 0);
