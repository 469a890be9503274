// cli/lab.mjs - the headless CLI over the WASM engine, under Node.
//
// The CLI itself is lab_cli() in the engine (engine/src/exp/cli.c), so this file
// only moves argv into WASM memory and the two output strings out, draws the
// progress line on a terminal, and runs `--jobs` workers. Under Node 20 the
// Emscripten 3.1.6 loader cannot find or fetch its .wasm, so the bytes are
// passed in as wasmBinary.
//
// --jobs: the engine describes the independent runs of `--seeds` and
// `fidelity` as a plan of units (`--x-plan`); each worker thread, with its
// own engine, runs units (`--x-units I-J`, exact result lines) and one last
// call formats them all (`--x-results`), so the output is the bytes a serial
// run prints.
import { readFileSync, writeSync } from 'node:fs';
import { availableParallelism, cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

let wasmBytes = null;

/** Load the WASM engine module under Node. */
export async function loadEngine() {
  const { default: createLabModule } = await import(pathToFileURL(join(root, 'build/wasm/lab.mjs')).href);
  wasmBytes ??= readFileSync(join(root, 'build/wasm/lab.wasm'));
  return createLabModule({ wasmBinary: wasmBytes });
}

/**
 * Call lab_cli() in a loaded module: argv (argv[0] is the program name) in,
 * {status, out, err} out. The only place the CLI's strings cross into WASM.
 */
export function callCli(M, argv) {
  const ptrs = argv.map((a) => {
    const n = M.lengthBytesUTF8(a) + 1;
    const p = M._malloc(n);
    M.stringToUTF8(a, p, n);
    return p;
  });
  const argvp = M._malloc(4 * ptrs.length);
  ptrs.forEach((p, i) => M.setValue(argvp + 4 * i, p, 'i32'));
  const outpp = M._malloc(8);
  const status = M._lab_cli(ptrs.length, argvp, outpp, outpp + 4);
  const outp = M.getValue(outpp, 'i32');
  const errp = M.getValue(outpp + 4, 'i32');
  const out = outp ? M.UTF8ToString(outp) : '';
  const err = errp ? M.UTF8ToString(errp) : '';
  M._lab_free(outp);
  M._lab_free(errp);
  ptrs.forEach((p) => M._free(p));
  M._free(argvp);
  M._free(outpp);
  return { status, out, err };
}

/**
 * `--script FILE` read here (the engine has no file system) and passed as
 * `--script-text TEXT`, as engine/src/exp/main.c does natively. Every
 * `--script` is read, so a second one is refused by the engine as given
 * twice. Returns the new argv, or an error line.
 */
export function readScriptArg(argv) {
  const out = [...argv];
  for (let i = out.indexOf('--script'); i >= 0 && i + 1 < out.length; i = out.indexOf('--script', i + 2)) {
    let text;
    try {
      text = readFileSync(out[i + 1], 'latin1');
    } catch {
      return { error: `lab: --script ${out[i + 1]}: cannot read the file\n` };
    }
    if (text.length > 65536) return { error: `lab: --script ${out[i + 1]}: longer than 64 KiB\n` };
    out.splice(i, 2, '--script-text', text);
  }
  return { argv: out };
}

/** Seconds for a person: "4.1 s", "2 min 05 s". */
function fmtSecs(ms) {
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${String(Math.floor(s - 60 * m)).padStart(2, '0')} s`;
}

/**
 * The progress line on stderr: runs done of total, elapsed, estimated time
 * left, redrawn in place. Only on a terminal (process.stderr.isTTY), from
 * `afterMs` on (a short run shows nothing), at most ten times a second; the
 * last line stays. LAB_PROGRESS=1 draws it without a terminal and =0 never
 * (tests, scripts); LAB_PROGRESS_AFTER_MS sets afterMs (default 1000).
 * Returns null when nothing is to be drawn.
 */
export function progressLine({ env = process.env, isTTY = process.stderr.isTTY, write = (s) => writeSync(2, s), now = () => performance.now() } = {}) {
  const on = env.LAB_PROGRESS === '1' || (env.LAB_PROGRESS !== '0' && isTTY);
  if (!on) return null;
  const afterMs = Number.isFinite(Number(env.LAB_PROGRESS_AFTER_MS)) && env.LAB_PROGRESS_AFTER_MS !== undefined ? Number(env.LAB_PROGRESS_AFTER_MS) : 1000;
  const t0 = now();
  let drawn = false;
  let lastDraw = -Infinity;
  let last = { done: 0, total: 0, frac: 0 };
  const line = ({ done, total, frac }, final) => {
    const el = now() - t0;
    const runs = `${done} of ${total} run${total === 1 ? '' : 's'} done`;
    if (final) return `lab: ${runs} in ${fmtSecs(el)}`;
    const got = done + frac;
    const left = got > 0 ? `about ${fmtSecs((el * (total - got)) / got)} left` : 'time left not known yet';
    return `lab: ${runs}, ${fmtSecs(el)} elapsed, ${left}`;
  };
  return {
    /** done runs of total, and `frac` (0..1 in all) of those under way. */
    update(done, total, frac = 0) {
      last = { done, total, frac };
      const t = now();
      if (t - t0 < afterMs || t - lastDraw < 100) return;
      lastDraw = t;
      drawn = true;
      write(`\r${line(last, false)}\x1b[K`);
    },
    finish() {
      if (drawn) write(`\r${line(last, true)}\x1b[K\n`);
    },
  };
}

function defaultJobs() {
  return typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;
}

/**
 * Run units 0..n-1 of a plan on `jobs` worker threads, each with its own
 * engine; returns their result lines in plan order, or {status, err} when
 * one could not run.
 */
async function runPool(cmdArgv, n, jobs, progress) {
  const lines = new Array(n);
  const under = new Map(); // worker -> progress of its unit in [0,1]
  let next = 0;
  let done = 0;
  let failed = false;
  const report = () => progress?.update(done, n, [...under.values()].reduce((a, b) => a + b, 0));
  const one = (w) =>
    new Promise((resolve) => {
      const go = () => {
        if (next >= n || failed) return resolve(null);
        const i = next++;
        under.set(w, 0);
        w.postMessage({ argv: [cmdArgv[0], cmdArgv[1], '--x-units', `${i}-${i + 1}`, ...cmdArgv.slice(2)] });
        w.removeAllListeners('message');
        w.on('message', (m) => {
          if (m.frac !== undefined) {
            under.set(w, m.frac);
            return report();
          }
          under.set(w, 0);
          if (m.status !== 0) {
            failed = true;
            return resolve({ status: m.status, err: m.err });
          }
          lines[i] = m.out;
          done++;
          report();
          go();
        });
      };
      w.once('error', (e) => (failed = true) && resolve({ status: 1, err: `lab: a --jobs worker failed: ${String(e?.message ?? e).split('\n')[0]}\n` }));
      go();
    });
  const workers = Array.from({ length: jobs }, () => new Worker(new URL(import.meta.url), { workerData: { labWorker: true } }));
  try {
    const ends = await Promise.all(workers.map(one));
    const fail = ends.find((e) => e);
    return fail ?? { lines };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Run the CLI with argv and print its output; returns the exit status. */
export async function runCli(argv0, io = { out: process.stdout, err: process.stderr }, env = process.env) {
  const { argv, error } = readScriptArg(argv0);
  const put = (stream, s) => (s ? new Promise((resolve) => stream.write(s, resolve)) : undefined);
  if (error) {
    await put(io.err, error);
    return 2;
  }
  const M = await loadEngine();
  let r;
  // a call that is itself the protocol's (a test, a debugging session) goes straight to the engine
  if ((argv[1] === 'run' || argv[1] === 'fidelity') && !argv.some((a) => a.startsWith('--x-'))) {
    // the plan: validates every argument first, as the call itself would
    const plan = callCli(M, [argv[0], argv[1], '--x-plan', ...argv.slice(2)]);
    if (plan.status !== 0) {
      await put(io.err, plan.err);
      return plan.status;
    }
    const [, units, asked, parallel] = /^units (\d+) jobs (\d+) parallel (\d)/.exec(plan.out).map(Number);
    const jobs = Math.min(asked || defaultJobs(), units);
    const progress = progressLine({ env, isTTY: io.err.isTTY });
    if (parallel && jobs > 1) {
      const pool = await runPool(argv, units, jobs, progress);
      progress?.finish();
      if (!pool.lines) {
        await put(io.err, pool.err);
        return pool.status;
      }
      r = callCli(M, [argv[0], argv[1], '--x-results', pool.lines.join(''), ...argv.slice(2)]);
    } else {
      M.labProgress = progress ? (done, total, frac) => progress.update(done, total, frac) : undefined;
      r = callCli(M, argv);
      progress?.finish();
    }
  } else {
    r = callCli(M, argv);
  }
  await put(io.out, r.out);
  await put(io.err, r.err);
  return r.status;
}

if (!isMainThread && workerData?.labWorker) {
  // a --jobs worker: its own engine, one unit a message
  const M = await loadEngine();
  let lastFrac = 0;
  M.labProgress = (done, total, frac) => {
    const t = performance.now();
    if (t - lastFrac < 100) return;
    lastFrac = t;
    parentPort.postMessage({ frac });
  };
  parentPort.on('message', ({ argv }) => parentPort.postMessage(callCli(M, argv)));
} else if (isMainThread && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(await runCli(['lab', ...process.argv.slice(2)]));
}
