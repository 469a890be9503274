/*
 * node.ts - load the engine's WASM build under Node (Vitest, headless lesson
 * checks). The .wasm bytes are passed to the factory as wasmBinary: the
 * Emscripten 3.1.6 loader, built for web/worker, cannot fetch them itself
 * under Node 20.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bridge, type LabFactory } from './bridge';

const repo = fileURLToPath(new URL('../../', import.meta.url));

/** Instantiate the engine from build/wasm/ (or `dir`). Throws if not built. */
export async function loadNodeBridge(dir = `${repo}build/wasm/`): Promise<Bridge> {
  const wasm = await readFile(`${dir}lab.wasm`);
  const mod = (await import(/* @vite-ignore */ pathToFileURL(`${dir}lab.mjs`).href)) as { default: LabFactory };
  return Bridge.create(mod.default, new Uint8Array(wasm));
}
