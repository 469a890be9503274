/*
 * The page's engine build (build/wasm-web) against the CLI's (build/wasm):
 * the page's list leaves the fio device's measured rows out and says how
 * many; published.ts loads them, and they are the CLI's rows, number for
 * number; runs are the same bytes in both builds (same sources, same flags).
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from './bridge';
import { loadNodeBridge } from './node';
import { needsPublished, withPublished } from './published';

const web = fileURLToPath(new URL('../../build/wasm-web/', import.meta.url));

let cli: Bridge;
let page: Bridge;
beforeAll(async () => {
  [cli, page] = await Promise.all([loadNodeBridge(), loadNodeBridge(web)]);
});

describe("the page's engine build", () => {
  it("lists fio without its measured rows, and says how many it left out", () => {
    const f = page.list().find((e) => e.name === 'fio')!;
    const full = cli.list().find((e) => e.name === 'fio')!;
    expect(f.published).toEqual([]);
    expect(full.published.length).toBeGreaterThan(100);
    expect(f.publishedSeparate).toBe(full.published.length);
    expect(needsPublished(f)).toBe(true);
    expect(needsPublished(full)).toBe(false);
  });

  it("loads the rows the CLI and fidelity judge, the same numbers", async () => {
    const f = page.list().find((e) => e.name === 'fio')!;
    const loaded = await withPublished(f);
    expect(loaded.published).toEqual(cli.list().find((e) => e.name === 'fio')!.published);
    expect(needsPublished(loaded)).toBe(false);
    // everything else of the list is the CLI's
    const { published: _a, publishedSeparate: _b, ...rest } = loaded;
    const { published: _c, ...restFull } = cli.list().find((e) => e.name === 'fio')!;
    expect(rest).toEqual(restFull);
  });

  it('keeps every other experiment as the CLI lists it', async () => {
    const others = page.list().filter((e) => e.name !== 'fio');
    expect(others.length).toBeGreaterThan(3);
    for (const e of others) {
      expect(needsPublished(e)).toBe(false);
      expect(await withPublished(e)).toBe(e);
      expect(e).toEqual(cli.list().find((x) => x.name === e.name));
    }
  });

  it('runs the same bytes as the CLI build, the measured point beside them', () => {
    const spec = { experiment: 'fio', variant: 'base' as const, params: { ios: '3000', device: 'nvme-dc', rw: 'randread', bs: '4096', iodepth: '1', numjobs: '1' }, seed: 7 };
    const a = cli.run(spec);
    const b = page.run(spec);
    expect(b.metrics).toEqual(a.metrics);
    expect(b.events).toBe(a.events);
    expect(b.details).toEqual(a.details);
    expect(b.details.measured).not.toBeNull();
  });

  it("refuses a table that does not match the engine's count, with a message", async () => {
    const f = page.list().find((e) => e.name === 'fio')!;
    await expect(withPublished({ ...f, publishedSeparate: f.publishedSeparate! + 1 })).rejects.toThrow(/expects \d+ published rows/);
  });
});
