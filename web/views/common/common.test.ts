/*
 * The visual language's rules as tests: one number format, one unit per
 * axis, tick labels that never overlap, one domain for a before/after
 * pair, greys (never the kernels' colours) for categories, human labels,
 * and the run export.
 */
import { scaleLinear, scaleLog } from 'd3-scale';
import { describe, expect, it } from 'vitest';
import type { ExperimentInfo } from '../../engine/types';
import { layoutCommits, longestCommitMs, readQgroupDetails } from '../qgroup/model';
import { axisTitle, labelWidth, logTicks, marginsFor, placeTitle, scaleTicks, thinTicks } from '../../model/axis';
import { exportLayout, runCsv, wrapText } from './export';
import { layoutHeadline } from './Headline';
import { labelFromHelp, metricLabel, patchName, seedName } from './labels';
import { KERNEL_COLOR, KERNEL_ONLY, greys } from './palette';
import { pairDomain, pairLogDomain } from '../../model/scales';
import { chartTheme } from './theme';
import { fmtBytes, fmtMs, fmtNum, fmtQty, pickTimeUnit } from '../../model/format';

/** Do any two labels of an axis overlap, by their estimated boxes? */
const overlaps = (ticks: { pos: number; label: string }[], axis: 'x' | 'y', fontPx: number): boolean =>
  ticks.some((a, i) =>
    ticks.slice(i + 1).some((b) => {
      const d = Math.abs(a.pos - b.pos);
      return axis === 'x' ? d < (labelWidth(a.label, fontPx) + labelWidth(b.label, fontPx)) / 2 : d < fontPx;
    }),
  );

describe('numbers: one formatter', () => {
  it('prints thousands whole with separators, smaller numbers to 3 digits, tiny ones as powers of ten', () => {
    expect(fmtNum(16414)).toBe('16,414');
    expect(fmtNum(16410.4)).toBe('16,410');
    expect(fmtNum(999.7)).toBe('1,000');
    expect(fmtNum(744.09941)).toBe('744');
    expect(fmtNum(0.0954)).toBe('0.0954');
    expect(fmtNum(9.54e-6)).toBe('9.5×10⁻⁶');
    expect(fmtNum(-1234)).toBe('−1,234');
    expect(fmtNum(0)).toBe('0');
  });
  it('zero has no unit; times and sizes pick the unit that reads best', () => {
    expect(fmtQty(0, 'us')).toBe('0');
    expect(fmtQty(183.2, 'ms')).toBe('183 ms');
    expect(fmtQty(12, 'count')).toBe('12');
    expect(fmtMs(0.95)).toBe('950 µs');
    expect(fmtMs(20211)).toBe('20.2 s');
    expect(fmtBytes(128 * 2 ** 20)).toBe('128 MiB');
    expect(pickTimeUnit(60_000)).toEqual({ unit: 's', per: 1000 });
    expect(pickTimeUnit(800)).toEqual({ unit: 'ms', per: 1 });
  });
});

describe('axes', () => {
  it('titles carry the unit', () => {
    expect(axisTitle('commit duration', 'ms')).toBe('commit duration (ms)');
    expect(axisTitle('queued records')).toBe('queued records');
  });
  it('never lets tick labels overlap, however narrow the axis or large the font', () => {
    for (const fontPx of [14, 16, 26, 28])
      for (const len of [120, 240, 480, 1400]) {
        const x = scaleLinear().domain([0, 123456]).range([0, len]);
        expect(overlaps(scaleTicks(x, 'x', len, fontPx), 'x', fontPx)).toBe(false);
        const y = scaleLinear().domain([0, 800]).range([len, 0]);
        expect(overlaps(scaleTicks(y, 'y', len, fontPx), 'y', fontPx)).toBe(false);
        const lx = scaleLog().domain([1, 1e6]).range([0, len]);
        expect(overlaps(logTicks(lx, 'x', len, fontPx), 'x', fontPx)).toBe(false);
      }
  });
  it('thinning keeps the first tick and drops crowded ones', () => {
    const ticks = [0, 10, 20, 30, 40, 50].map((p) => ({ pos: p * 3, label: `${p},000` }));
    const t = thinTicks(ticks, 'x', 16);
    expect(t[0]!.label).toBe('0,000');
    expect(t.length).toBeLessThan(ticks.length);
    expect(overlaps(t, 'x', 16)).toBe(false);
  });
  it('margins grow with the font, so labels are not clipped', () => {
    const a = marginsFor(16, ['16,000']);
    const b = marginsFor(26, ['16,000']);
    expect(b.left).toBeGreaterThan(a.left);
    expect(b.bottom).toBeGreaterThan(a.bottom);
    expect(a.left).toBeGreaterThan(labelWidth('16,000', 16));
  });
});

describe('a before/after pair shares its scales', () => {
  it('one domain from both runs', () => {
    expect(pairDomain([745, 183])).toEqual([0, 800]);
    expect(pairLogDomain([3, 4651])).toEqual([1, 10000]);
  });
  it("the qgroup commit timelines: the 183 ms bar is a quarter of the 745 ms bar's height", () => {
    const ph = (ms: number) => ({ wait_writers: 0, delayed_refs: 0, qgroup_account: ms, write_blocks: 0 });
    const before = readQgroupDetails({ commits: [{ transid: 1, start_s: 30, end_s: 30.7, records: 16946, phases_ms: ph(745) }] }).commits;
    const after = readQgroupDetails({ commits: [1, 2, 3, 4].map((i) => ({ transid: i, start_s: i * 0.2, end_s: i * 0.2 + 0.18, records: 4100, phases_ms: ph(183) })) }).commits;
    const top = longestCommitMs(before, after);
    const hb = layoutCommits(before, 400, 240, 16, top).bars[0]!.segments.reduce((s, x) => s + x.height, 0);
    const ha = layoutCommits(after, 400, 240, 16, top).bars[0]!.segments.reduce((s, x) => s + x.height, 0);
    expect(ha / hb).toBeCloseTo(183 / 745, 2);
    expect(layoutCommits(after, 400, 240, 16, top).yTicks).toEqual(layoutCommits(before, 400, 240, 16, top).yTicks);
  });
  it('the headline bars: both kernels on one x scale from 0, values in the unit the axis uses', () => {
    const L = layoutHeadline(
      { name: 'cp_ms', unit: 'ms', help: '' },
      [
        { variant: 'before', value: 20211, published: [{ value: 20144, source: 'seed' }] },
        { variant: 'after', value: 226, published: [] },
      ],
      800,
      16,
    );
    const [b, a] = L.bars;
    expect(b!.x0).toBe(a!.x0);
    expect((a!.x1 - a!.x0) / (b!.x1 - b!.x0)).toBeCloseTo(226 / 20211, 3);
    expect(L.unit).toBe('s');
    expect(b!.label).toBe('20.2 s');
    expect(a!.label).toBe('0.226 s');
  });
});

describe('colour', () => {
  it('categories are greys: distinct, in order, never a kernel colour', () => {
    const g = greys(16);
    expect(new Set(g).size).toBe(16);
    for (const c of g) expect(KERNEL_ONLY.map((k) => k.toLowerCase())).not.toContain(c.toLowerCase());
    expect(parseInt(g[0]!.slice(1, 3), 16)).toBeGreaterThan(parseInt(g[15]!.slice(1, 3), 16)); // first lightest
    expect(KERNEL_COLOR.before).not.toBe(KERNEL_COLOR.after);
  });
});

describe('words', () => {
  it('labels a metric from the table, else from the engine help, keeping the identifier elsewhere', () => {
    expect(metricLabel({ account_max_ms: 'longest accounting call' }, { name: 'account_max_ms', help: 'longest call' })).toBe('longest accounting call');
    expect(metricLabel(undefined, { name: 'drop_s', help: 'time the cleaner took to drop every subvolume' })).toBe('time the cleaner took to drop every subvolume');
    expect(labelFromHelp('mean duration of those calls (ms); more')).toBe('mean duration of those calls');
    expect(metricLabel(undefined, { name: 'x_y', help: '' })).toBe('x y');
    expect(patchName('002')).toBe('patch 002');
    expect(seedName(1)).toBe('random seed 1');
  });
});

describe('focus mode', () => {
  it('chart text is at least 24 px at 1920 px wide, and larger still in the projector theme', () => {
    expect(chartTheme(1920, true, false).fontPx).toBeGreaterThanOrEqual(24);
    expect(chartTheme(1920, true, true).fontPx).toBeGreaterThan(chartTheme(1920, true, false).fontPx);
    expect(chartTheme(1280, false, false).fontPx).toBe(16);
    // a projector at 1024 px in focus mode: still 24 px
    expect(chartTheme(1024, true, false).fontPx).toBeGreaterThanOrEqual(24);
  });

  it('an axis title is moved inwards rather than clipped, squeezed only when longer than the chart', () => {
    // centred on a plot that starts far right: it would run past the edge, so it moves left
    const t = placeTitle('one operation (ms, log)', 26, 300, 400);
    const half = (labelWidth('one operation (ms, log)', 26) * 0.92) / 2;
    expect(t.squeeze).toBe(1);
    expect(t.at + half).toBeLessThanOrEqual(400);
    expect(t.at - half).toBeGreaterThanOrEqual(0);
    expect(placeTitle('ms', 16, 100, 400)).toEqual({ at: 100, squeeze: 1 });
    const long = placeTitle('a very long axis title that cannot fit', 26, 100, 200);
    expect(long.squeeze).toBeLessThan(0.5);
    expect(long.length).toBeLessThanOrEqual(200);
  });
});

describe('export', () => {
  it('a run as CSV: one row per metric, full precision, labels quoted when needed', () => {
    const info = {
      name: 'demo',
      variants: ['before', 'after'],
      metricInfo: [
        { name: 'account_max_ms', unit: 'ms', help: '' },
        { name: 'commits', unit: 'count', help: '' },
      ],
    } as unknown as ExperimentInfo;
    const run = (ms: number, c: number) => ({ metrics: { account_max_ms: ms, commits: c }, simNs: 0, events: 0, details: {}, wallMs: 0 });
    const csv = runCsv(info, { before: run(744.09941, 1), after: run(183.2, 5) }, (m) => (m === 'commits' ? 'commits, all' : m));
    expect(csv.split('\n')).toEqual(['metric,label,unit,before,after', 'account_max_ms,account_max_ms,ms,744.09941,183.2', 'commits,"commits, all",count,1,5', '']);
  });

  it('an exported chart carries its title above, its legend and its source below, inside its width', () => {
    expect(wrapText('one two three four', 16, labelWidth('one two', 16))).toEqual(['one two', 'three', 'four']);
    expect(wrapText('one two three four', 16, labelWidth('three four', 16))).toEqual(['one two', 'three four']);
    const frame = {
      title: 'Qgroup records queued in the running transaction, during the drop of both kernels',
      legend: ['before (no patch)', 'after (patched)', 'threshold 4,096'].map((text) => ({ text })),
      footer: 'btrfs patch lab · simulated',
    };
    const L = exportLayout(frame, 400, 300);
    expect(L.titleLines.length).toBeGreaterThan(1); // wrapped, not clipped
    expect(L.chartsY).toBeGreaterThan(L.titleLines[L.titleLines.length - 1]!.y);
    for (const it of L.items) {
      expect(it.y).toBeGreaterThan(L.chartsY + 300);
      expect(it.x).toBeLessThan(400);
    }
    expect(L.items.length).toBe(3);
    expect(L.footerY).toBeGreaterThan(Math.max(...L.items.map((i) => i.y)));
    expect(L.height).toBeGreaterThan(L.footerY);
    // a link longer than the chart is cut into lines that fit
    const F = exportLayout({ ...frame, footer: `btrfs patch lab · simulated · http://localhost:4403/#/exp/untar?${'p.scale=0.05&'.repeat(8)}` }, 400, 300);
    expect(F.footer.length).toBeGreaterThan(1);
    for (const l of F.footer) expect(labelWidth(l.text, 11)).toBeLessThanOrEqual(400);
    // no frame parts, no room taken
    expect(exportLayout({ title: '', legend: [], footer: '' }, 400, 300).chartsY).toBe(12);
  });
});
