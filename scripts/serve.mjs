// scripts/serve.mjs - serve the built lab (dist/) on localhost and print the
// URL. Uses Vite's preview server: the same one the Playwright suite uses.
import { preview } from 'vite';

const port = Number(process.env.PORT ?? 4173);
const server = await preview({ preview: { port, strictPort: false, host: '127.0.0.1' }, logLevel: 'warn' });
const url = server.resolvedUrls?.local?.[0] ?? `http://127.0.0.1:${port}/`;
console.log(`btrfs patch lab is running at ${url}  (Ctrl-C to stop)`);
