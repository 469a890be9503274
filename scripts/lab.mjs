// scripts/lab.mjs MODE ARGS... - `npm run lab` (MODE=wasm) and
// `npm run lab:native` (MODE=native). Builds what is missing first (make is
// a no-op when up to date; its output goes to stderr so --json stdout stays
// clean), then runs the CLI.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [mode, ...args] = process.argv.slice(2);
if (mode !== 'wasm' && mode !== 'native') {
  process.stderr.write('usage: node scripts/lab.mjs wasm|native ARGS...\n');
  process.exit(2);
}

const target = mode === 'wasm' ? 'wasm' : 'native';
const make = spawnSync('make', ['-s', '-C', join(root, 'engine'), target], {
  stdio: ['ignore', process.stderr, process.stderr],
  env: { ...process.env, NODE_PATH: '/usr/share/nodejs' },
});
if (make.status !== 0) {
  process.stderr.write(`lab: building the ${mode} engine failed\n`);
  process.exit(1);
}

if (mode === 'native') {
  const bin = join(root, 'build/native/lab');
  const r = spawnSync(bin, args, { stdio: 'inherit' });
  process.exit(r.status ?? 1);
} else {
  if (!existsSync(join(root, 'build/wasm/lab.wasm'))) {
    process.stderr.write('lab: build/wasm/lab.wasm is missing\n');
    process.exit(1);
  }
  const { runCli } = await import('../cli/lab.mjs');
  process.exit(await runCli(['lab', ...args]));
}
