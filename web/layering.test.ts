/*
 * layering.test.ts - the front end's layers, as a lint (issue 31 item 5).
 *
 * Views only draw. Whatever runs the engine (the worker client, the
 * runner, the sweep hook, the node bridge) belongs to the app: a view
 * declares what it needs run in views/registry.ts and is handed its rows,
 * state and run / stop through its props. So no file under web/views/
 * (tests aside, which may build their fixtures with the engine) reaches one
 * of those modules, directly or through another file; a view imports
 * from web/app/ only the keyboard's registration and the test hook. Below
 * the drawing layer, web/model/ and web/engine/ import nothing from the
 * views or the app.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Modules that run the engine: a view must not reach them. */
export const ENGINE_RUNNERS = [
  'web/app/engine.ts', // the page's EngineClient
  'web/engine/client.ts',
  'web/engine/worker.ts',
  'web/engine/workerCore.ts',
  'web/engine/bridge.ts',
  'web/engine/node.ts',
  'web/app/useRunner.ts',
  'web/app/useSweep.ts',
];

/** What a view may import from web/app/ (neither runs anything). */
export const APP_ALLOWED_IN_VIEWS = ['web/app/commands.ts', 'web/app/testHook.ts'];

const isTest = (f: string): boolean => /\.test\.tsx?$/.test(f);

function walk(dir: string): string[] {
  return readdirSync(join(repo, dir)).flatMap((n) => {
    const p = `${dir}/${n}`;
    if (statSync(join(repo, p)).isDirectory()) return walk(p);
    return /\.tsx?$/.test(n) && !n.endsWith('.d.ts') ? [p] : [];
  });
}

/** The module specifiers a source imports: static imports and re-exports (type-only ones too), dynamic import(), new URL(..., import.meta.url). */
export function importsOf(src: string): string[] {
  const out: string[] = [];
  const res = [
    /\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bnew\s+URL\(\s*['"]([^'"]+)['"]\s*,\s*import\.meta\.url/g,
  ];
  for (const re of res) for (const m of src.matchAll(re)) out.push(m[1]!);
  return out;
}

/** A relative specifier from `file`, resolved to a repository path (null: a package). */
function resolveSpec(file: string, spec: string, exists: (p: string) => boolean): string | null {
  if (!spec.startsWith('.')) return null;
  const base = relative(repo, resolve(repo, dirname(file), spec)).replaceAll('\\', '/');
  for (const c of [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]) if (exists(c)) return c;
  return base;
}

export type Graph = Map<string, string[]>;

/** Each file's imports, resolved. */
export function buildGraph(files: string[], read: (f: string) => string, exists: (p: string) => boolean): Graph {
  const g: Graph = new Map();
  for (const f of files) g.set(f, importsOf(read(f)).flatMap((s) => resolveSpec(f, s, exists) ?? []));
  return g;
}

/** The first chain from `from` to a module in `targets`, or null. */
export function chainTo(g: Graph, from: string, targets: readonly string[]): string[] | null {
  const seen = new Set<string>([from]);
  const queue: string[][] = [[from]];
  while (queue.length) {
    const path = queue.shift()!;
    const last = path[path.length - 1]!;
    if (path.length > 1 && targets.includes(last)) return path;
    for (const n of g.get(last) ?? [])
      if (!seen.has(n)) {
        seen.add(n);
        queue.push([...path, n]);
      }
  }
  return null;
}

/** Every problem of the layering in a graph: views reaching an engine runner or importing the app, model and engine importing up. */
export function layeringProblems(g: Graph): string[] {
  const out: string[] = [];
  for (const f of [...g.keys()].sort()) {
    if (isTest(f)) continue;
    if (f.startsWith('web/views/')) {
      const chain = chainTo(g, f, ENGINE_RUNNERS);
      if (chain) out.push(`${f} reaches ${chain[chain.length - 1]} (${chain.join(' -> ')})`);
      for (const d of g.get(f) ?? []) if (d.startsWith('web/app/') && !APP_ALLOWED_IN_VIEWS.includes(d)) out.push(`${f} imports ${d} (the app: views only draw)`);
    }
    if (f.startsWith('web/model/') || f.startsWith('web/engine/'))
      for (const d of g.get(f) ?? []) if (d.startsWith('web/views/') || d.startsWith('web/app/')) out.push(`${f} imports ${d} (below the drawing layer, it must not)`);
  }
  return out;
}

describe('layering', () => {
  it('finds the imports of every form', () => {
    expect(
      importsOf(`import a from './a';
import type { B } from "../b";
import { c,
  d } from './c';
export * from './e';
export { f } from './f';
const g = await import('./g');
new Worker(new URL('../engine/worker.ts', import.meta.url));
import 'react';`),
    ).toEqual(['./a', '../b', './c', './e', './f', 'react', './g', '../engine/worker.ts']);
  });

  it('catches a view that reaches the engine through another file, or imports the app, and a model that imports a view', () => {
    const files: Record<string, string> = {
      'web/views/x/XView.tsx': "import { helper } from './helper';\nimport { Tag } from '../../app/Other';",
      'web/views/x/helper.ts': "import { engine } from '../../app/engine';",
      'web/views/x/x.test.ts': "import { loadNodeBridge } from '../../engine/node';",
      'web/views/y/YView.tsx': "import { activePlayer } from '../../app/commands';",
      'web/model/m.ts': "import { KERNEL_COLOR } from '../views/common/palette';",
      'web/app/engine.ts': '',
      'web/app/commands.ts': '',
      'web/app/Other.tsx': '',
      'web/engine/node.ts': '',
      'web/views/common/palette.ts': '',
    };
    const g = buildGraph(Object.keys(files), (f) => files[f]!, (p) => p in files);
    expect(layeringProblems(g)).toEqual([
      'web/model/m.ts imports web/views/common/palette.ts (below the drawing layer, it must not)',
      'web/views/x/XView.tsx reaches web/app/engine.ts (web/views/x/XView.tsx -> web/views/x/helper.ts -> web/app/engine.ts)',
      'web/views/x/XView.tsx imports web/app/Other.tsx (the app: views only draw)',
      'web/views/x/helper.ts reaches web/app/engine.ts (web/views/x/helper.ts -> web/app/engine.ts)',
      'web/views/x/helper.ts imports web/app/engine.ts (the app: views only draw)',
    ]);
  });

  it('holds in the lab: views only draw; model/ and engine/ import nothing from above', () => {
    const files = walk('web');
    expect(files.length).toBeGreaterThan(50);
    expect(files).toContain('web/views/registry.ts');
    const exists = (p: string): boolean => {
      try {
        return statSync(join(repo, p)).isFile();
      } catch {
        return false;
      }
    };
    const g = buildGraph(files, (f) => readFileSync(join(repo, f), 'utf8'), exists);
    // the app does reach the engine (the lint looks at the right files)
    expect(chainTo(g, 'web/app/Results.tsx', ENGINE_RUNNERS)).not.toBeNull();
    expect(layeringProblems(g)).toEqual([]);
  });
});
