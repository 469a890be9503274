/*
 * Vite + Vitest configuration for the lab's front end.
 *
 * The app lives in web/ (index.html is web/index.html); the engine's WASM
 * build is imported from build/wasm/, outside the Vite root, so the dev
 * server is allowed to read the whole repository. Nothing is loaded from a
 * CDN: every asset is bundled into dist/.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';
import type { Plugin } from 'vite';
import { lessonSchema } from './lessons/schema/plugin.ts';

const repo = fileURLToPath(new URL('.', import.meta.url));

/* The built app may load nothing from outside its own origin. (Only in the
 * build: the dev server's hot-reload preamble is an inline script.) */
const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; " +
  "style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'";
const csp = (): Plugin => ({
  name: 'lab-csp',
  apply: 'build',
  transformIndexHtml: (html) => html.replace('<head>', `<head>\n    <meta http-equiv="Content-Security-Policy" content="${CSP}" />`),
});

export default defineConfig({
  root: 'web',
  base: './',
  plugins: [react(), csp(), lessonSchema()],
  server: { fs: { allow: [repo] } },
  worker: { format: 'es' },
  build: {
    outDir: '../dist',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
    // which chunks each page loads (scripts/bench.mjs sums a cold page's JS and WASM)
    manifest: true,
  },
  preview: { port: 4173, strictPort: true },
  test: {
    root: repo,
    include: ['web/**/*.test.{ts,tsx}', 'lessons/**/*.test.ts'],
    environment: 'node',
    testTimeout: 120_000,
  },
});
