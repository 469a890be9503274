// scripts/bench-bundle.mjs - the bundle's size, JS + WASM, gzip -9 (goal: what
// a page loads <= 350 KB). Part of `npm run bench`; alone: `node scripts/bench-bundle.mjs`
// (after `npm run build`). Reports, never asserts.
//
// From Vite's manifest (dist/.vite/manifest.json): what a cold page loads
// first (the entry's chunks, the page's own chunk and its imports, the
// engine worker and the WASM) and what it loads later, while its first run
// runs: its experiment's view (views/registry.ts) and, on the device page
// and its lesson, the fio device's measured points (web/engine/published.ts).
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kb = (n) => (n / 1024).toFixed(1);

export function benchBundle(log = console.log) {
  const dist = join(root, 'dist');
  if (!existsSync(dist)) {
    log('\nBundle: dist/ missing (run npm run build)');
    return;
  }
  const gzOf = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;
  let raw = 0;
  const gz = { js: 0, wasm: 0 };
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(js|mjs|wasm)$/.test(f)) {
        const b = readFileSync(p);
        raw += b.length;
        gz[f.endsWith('.wasm') ? 'wasm' : 'js'] += gzipSync(b, { level: 9 }).length;
      }
    }
  };
  walk(dist);
  log(`\nBundle (dist/, every chunk of every page): ${kb(raw)} KB raw, ${kb(gz.js + gz.wasm)} KB gzip (JS ${kb(gz.js)}, WASM ${kb(gz.wasm)})`);

  const manifest = join(dist, '.vite/manifest.json');
  if (!existsSync(manifest)) return;
  const m = JSON.parse(readFileSync(manifest, 'utf8'));
  const closure = (key, seen = new Set()) => {
    if (!m[key] || seen.has(key)) return seen;
    seen.add(key);
    for (const k of m[key].imports ?? []) closure(k, seen);
    return seen;
  };
  const filesOf = (keys) => new Set(keys.flatMap((k) => [...closure(k)]).map((k) => m[k].file));
  const sum = (files) => [...files].reduce((t, f) => t + gzOf(f), 0);
  const engine = readdirSync(join(dist, 'assets')).filter((f) => /^worker-.*\.js$|\.wasm$/.test(f)).map((f) => `assets/${f}`);
  const wasm = sum(engine.filter((f) => f.endsWith('.wasm')));
  const entry = Object.keys(m).find((k) => m[k].isEntry);
  const dyn = Object.keys(m).filter((k) => m[k].isDynamicEntry);
  const pages = dyn.filter((k) => k.startsWith('app/'));
  const views = dyn.filter((k) => k.startsWith('views/'));
  const later = dyn.filter((k) => !k.startsWith('app/') && !k.startsWith('views/'));
  const name = (k) => k.replace(/^.*\//, '').replace(/\.[^.]*$/, '').replace(/\?.*$/, '');

  log(`  what a cold page loads first, JS + WASM gzip (goal <= 350 KB; the WASM alone ${kb(wasm)} KB):`);
  const home = new Set([...filesOf([entry]), ...engine]);
  log(`    home ${kb(sum(home))} KB`);
  for (const p of pages) {
    const first = new Set([...filesOf([entry, p]), ...engine]);
    log(`    ${name(p)} ${kb(sum(first))} KB`);
  }
  // what an experiment page loads after its frame: its view, and the
  // device's measured points (the files it did not have yet)
  const expPage = pages.find((p) => /ExperimentPage/.test(p));
  if (expPage && (views.length > 0 || later.length > 0)) {
    const have = new Set([...filesOf([entry, expPage]), ...engine]);
    const extra = (keys) => kb(sum([...filesOf(keys)].filter((f) => !have.has(f))));
    log(`  then, while its first run runs: its view ${views.map((v) => `${name(v)} +${extra([v])}`).join(', ')} KB` +
      (later.length > 0 ? `; ${later.map((k) => `${name(k)} +${extra([k])}`).join(', ')} KB (the device page and its lesson)` : ''));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) benchBundle();
