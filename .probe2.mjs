import { chromium } from '@playwright/test';
const base = 'http://localhost:4408/';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
for (const exp of process.argv.slice(2)) {
  const ctx = await b.newContext({ viewport: { width: 1280, height: 900 } });
  await ctx.addInitScript(() => {
    new MutationObserver(() => { if (window.__fc === undefined && document.querySelector('[data-testid=results] svg')) window.__fc = performance.now(); }).observe(document, { childList: true, subtree: true });
  });
  const p = await ctx.newPage();
  p.on('console', (m) => { if (m.type() === 'error') console.log('console:', m.text()); });
  p.on('pageerror', (e) => console.log('pageerror:', e.message));
  await p.goto(base + '#/exp/' + exp);
  await p.waitForFunction(() => window.__fc, null, { timeout: 120000 });
  const fc = await p.evaluate(() => window.__fc);
  await p.waitForSelector('[data-testid=run-status][data-status=done]', { timeout: 120000 });
  console.log(exp, 'first chart', Math.round(fc), 'ms; done at', Math.round(await p.evaluate(() => performance.now())), 'workers', await p.evaluate(() => window.__lab.workers));
  await p.screenshot({ path: `/tmp/sw-${exp}.png` });
  await ctx.close();
}
await b.close();
