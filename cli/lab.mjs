// cli/lab.mjs - the headless CLI over the WASM engine, under Node.
//
// The CLI itself is lab_cli() in the engine (engine/src/exp/cli.c), so this file
// only moves argv into WASM memory and the two output strings out. Under
// Node 20 the Emscripten 3.1.6 loader cannot find or fetch its .wasm, so the
// bytes are passed in as wasmBinary.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Load the WASM engine module under Node. */
export async function loadEngine() {
  const { default: createLabModule } = await import(pathToFileURL(join(root, 'build/wasm/lab.mjs')).href);
  return createLabModule({ wasmBinary: readFileSync(join(root, 'build/wasm/lab.wasm')) });
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
 * `--script-text TEXT`, as engine/src/exp/main.c does natively. Returns
 * the new argv, or an error line.
 */
export function readScriptArg(argv) {
  const i = argv.indexOf('--script');
  if (i < 0 || i + 1 >= argv.length) return { argv };
  let text;
  try {
    text = readFileSync(argv[i + 1], 'latin1');
  } catch {
    return { error: `lab: --script ${argv[i + 1]}: cannot read the file\n` };
  }
  if (text.length > 65536) return { error: `lab: --script ${argv[i + 1]}: longer than 64 KiB\n` };
  const out = [...argv];
  out.splice(i, 2, '--script-text', text);
  return { argv: out };
}

/** Run the CLI with argv and print its output; returns the exit status. */
export async function runCli(argv0, io = { out: process.stdout, err: process.stderr }) {
  const { argv, error } = readScriptArg(argv0);
  if (error) {
    await new Promise((resolve) => io.err.write(error, resolve));
    return 2;
  }
  const { status, out, err } = callCli(await loadEngine(), argv);
  await new Promise((resolve) => io.out.write(out, resolve));
  if (err) await new Promise((resolve) => io.err.write(err, resolve));
  return status;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(await runCli(['lab', ...process.argv.slice(2)]));
}
