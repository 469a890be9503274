#!/usr/bin/env node
// published-json.mjs NATIVE_LAB WEB_DIR - print build/wasm-web/published.json:
// the published rows the web's engine build leaves out (exp.h,
// npublished_separate), as {"<experiment>": [row, ...]}, each row exactly
// as the native CLI's `list --json` writes it, so the page draws the same
// numbers the CLI and `lab fidelity` judge. Run by the Makefile; never edited.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nativeLab, webDir] = process.argv.slice(2);
if (!nativeLab || !webDir) {
  process.stderr.write('usage: published-json.mjs NATIVE_LAB WEB_DIR\n');
  process.exit(2);
}

const r = spawnSync(nativeLab, ['list', '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
if (r.status !== 0) {
  process.stderr.write(`published-json: ${nativeLab} list --json failed: ${r.stderr}`);
  process.exit(1);
}
const full = new Map(JSON.parse(r.stdout).experiments.map((e) => [e.name, e]));

// the web build's own list: which experiments it left rows out of, and how many
const { default: factory } = await import(pathToFileURL(join(webDir, 'lab.mjs')).href);
const M = await factory({ wasmBinary: readFileSync(join(webDir, 'lab.wasm')) });
const out = M._malloc(4);
if (M._lab_list_json(out) !== 0) throw new Error('published-json: lab_list_json failed in the web build');
const p = M.getValue(out, 'i32');
const web = JSON.parse(M.UTF8ToString(p));
M._lab_free(p);

const doc = {};
for (const e of web.experiments) {
  if (!e.published_separate) continue;
  const rows = full.get(e.name)?.published ?? [];
  if (rows.length !== e.published_separate || e.published.length !== 0) {
    process.stderr.write(`published-json: ${e.name}: the web build leaves out ${e.published_separate} rows, the native list has ${rows.length}\n`);
    process.exit(1);
  }
  doc[e.name] = rows;
}
process.stdout.write(`${JSON.stringify(doc)}\n`);
