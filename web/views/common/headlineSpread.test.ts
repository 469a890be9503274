/*
 * The headline with the page's Run ×20 and a published mean ± sd (seed
 * 003): the seeds on a strip under each bar, their 5-95% band as lab run
 * --seeds computes it, and the published sd as a bracket on one x scale.
 */
import { describe, expect, it } from 'vitest';
import { layoutHeadline } from './Headline';

const m = { name: 'receive_s', unit: 's', help: '' };
const seeds = (base: number, step: number) => Array.from({ length: 20 }, (_, i) => ({ seed: i + 1, value: base + step * i }));

describe('headline spread', () => {
  it('draws each seed under its bar, the band 5-95%, the published mean ± one sd', () => {
    const L = layoutHeadline(
      m,
      [
        { variant: 'before', value: 21.8, published: [{ value: 26.49, source: 's', sd: 2.53, runs: 5 }], seeds: seeds(21, 0.1) },
        { variant: 'after', value: 12.5, published: [{ value: 12.51, source: 's', sd: 0.32, runs: 5 }], seeds: seeds(12, 0.05) },
      ],
      800,
      16,
    );
    const [b, a] = L.bars;
    expect(b!.seeds!.n).toBe(20);
    expect(b!.seeds!.dots).toHaveLength(20);
    // the strip is under the bar, the published marks on it
    expect(b!.seeds!.y).toBeGreaterThan(b!.y + b!.h);
    expect(b!.markY).toBe(b!.seeds!.y);
    expect(a!.seeds!.y).toBeLessThan(L.height);
    // one x scale: the bars from one origin, the sd bracket symmetric about the mean
    const px = (b!.x1 - b!.x0) / 21.8;
    const p = b!.published[0]!;
    expect(p.sd!.x1 - p.x).toBeCloseTo(p.x - p.sd!.x0, 6);
    expect((p.sd!.x1 - p.sd!.x0) / px).toBeCloseTo(2 * 2.53, 6);
    // the 5-95% band: 21 + 0.1 x (0.05 x 19) to 21 + 0.1 x (0.95 x 19)
    expect((b!.seeds!.band!.x0 - b!.x0) / px).toBeCloseTo(21.095, 6);
    expect((b!.seeds!.band!.x1 - b!.x0) / px).toBeCloseTo(22.805, 6);
    // the axis reaches the published mean + sd
    expect(L.width - L.margin.right).toBeGreaterThanOrEqual(p.sd!.x1);
  });
  it('without seeds the marks sit on the bar, as before', () => {
    const L = layoutHeadline(m, [{ variant: 'before', value: 21.8, published: [{ value: 26.49, source: 's', sd: 2.53, runs: 5 }] }], 800, 16);
    const b = L.bars[0]!;
    expect(b.seeds).toBeUndefined();
    expect(b.markY).toBe(b.y + b.h / 2);
  });
});
