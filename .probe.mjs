import { chromium } from '@playwright/test';
const base = 'http://localhost:4408/';
const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
for (const exp of process.argv.slice(2)) {
  const ctx = await b.newContext();
  await ctx.addInitScript(() => {
    new MutationObserver(() => { if (window.__fc === undefined && document.querySelector('[data-testid=results] svg')) window.__fc = performance.now(); }).observe(document, { childList: true, subtree: true });
    const lab = () => window.__lab;
    const iv = setInterval(() => { if (window.__le === undefined && lab()?.experiments?.length) window.__le = performance.now(); if (window.__lr === undefined && lab()?.lastRun) { window.__lr = performance.now(); clearInterval(iv); } }, 5);
  });
  const p = await ctx.newPage();
  await p.goto(base + '#/exp/' + exp);
  await p.waitForFunction(() => window.__fc, null, { timeout: 120000 });
  const r = await p.evaluate(() => ({ fc: window.__fc, list: window.__le, lastRun: window.__lr, res: performance.getEntriesByType('resource').map((e) => [e.name.replace(/.*\//, ''), Math.round(e.startTime), Math.round(e.responseEnd)]), dcl: performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd }));
  console.log(exp, JSON.stringify(r));
  await ctx.close();
}
await b.close();
