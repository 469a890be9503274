/*
 * The untar view's pure transforms, on a details object shaped as the
 * engine writes it, and on the real engine's output (through the WASM
 * bridge, as the app runs it): a twentieth of the tree on a file system
 * whose metadata limit it reaches, and a fiftieth on a fresh 2 TiB one,
 * where it never does.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeBridge } from '../../engine/node';
import type { Bridge } from '../../engine/bridge';
import {
  cycleFiles,
  inflightSteps,
  layoutCycleRate,
  layoutDelalloc,
  layoutQueue,
  layoutSpace,
  maxInflight,
  queueDomain,
  readUntarDetails,
  spaceDomain,
  windowSummary,
  windowText,
} from './model';

const fixture = {
  files: 4,
  dirs: 1,
  archive_mib: 0.03,
  decompress: 'xz',
  elapsed_s: 2,
  limit_gib: 1,
  peak_may_use_gib: 1,
  archive: { data_bytes: 9000, mean_bytes: 2250, pages_per_file: 1.25, at_most_2k: 0.5, max_bytes: 5000 },
  series: { t: [0, 1, 1.5], may_use_gib: [0, 0.5, 1], limit_gib: [1, 1, 1], delalloc_mib: [0, 3, 'x'], tickets: [0, 0, 1], dirty_mib: [0, 3, 4] },
  buckets: { bucket_s: 0.5, cycles: [0, 0, 0, 2], pages: [0, 0, 0, 40], ios: [0, 1, 2, 3], park_s: [0, 0, 0, 0.2] },
  zoom: {
    t0_s: 1.5,
    t1_s: 2,
    cycles: [
      {
        t0_ms: 1,
        t1_ms: 5,
        state: 'FLUSH_DELALLOC',
        rounds: 1,
        to_reclaim: 1310720,
        wanted: 640,
        flushed: 20,
        inodes: 10,
        files: [
          ['f0000001.cpp', 1200, 1, 1.5],
          ['f0000002.cpp', 9000, 3, 2.5],
          ['bad'],
        ],
      },
      { t0_ms: 9, t1_ms: 'x', state: 'FLUSH_DELALLOC', rounds: 3, wanted: 1920, flushed: 60, inodes: 30, files: [] },
    ],
    parks: [
      [0, 1, 1310720],
      [6, 9, 655360],
    ],
    ios: [
      [1, 2, 4096],
      [1.5, 3, 8192],
    ],
    // [ms, may_use GiB, limit GiB], in the engine's order (not sorted)
    space: [
      [0, 0.99, 1],
      [6, 0.995, 1],
      [5, 0.9, 1],
      ['x', 1, 1],
    ],
  },
};

describe('untar view model', () => {
  it('reads the details, malformed parts empty', () => {
    const d = readUntarDetails(fixture);
    expect(d.files).toBe(4);
    expect(d.zoom?.cycles).toHaveLength(2);
    expect(d.zoom?.cycles[1]!.t1).toBe(0); // 'x'
    expect(d.zoom?.cycles[0]!.files[2]).toEqual({ name: 'bad', size: 0, pages: 0, at: 0 });
    expect(d.series.delallocMib).toEqual([0, 3, 0]);
    expect(d.zoom?.space.map((p) => p.t)).toEqual([0, 0, 5, 6]); // by time
    expect(readUntarDetails(undefined).zoom).toBeNull();
    expect(readUntarDetails({ zoom: null }).zoom).toBeNull();
  });

  it('requests in flight step up at each submission and down at each completion', () => {
    const d = readUntarDetails(fixture);
    const s = inflightSteps(d.zoom!.ios);
    expect(maxInflight(d.zoom!.ios)).toBe(2);
    expect(s[s.length - 1]![1]).toBe(0);
    expect(inflightSteps([])).toEqual([[0, 0]]);
  });

  it('lays out the flush queue: a mark per cycle, written below asked for, the waits on the writer lane', () => {
    const d = readUntarDetails(fixture);
    const dom = queueDomain([d]);
    expect(dom.ms).toBeCloseTo(500);
    expect(dom.pagesMax).toBe(1920);
    const L = layoutQueue(d, 700, 16, dom);
    expect(L.marks).toHaveLength(2);
    for (const m of L.marks) {
      expect(m.yFlushed).toBeGreaterThan(m.yWanted); // fewer pages: lower (y grows down)
      expect(m.yFlushed).toBeLessThan(m.base);
      expect(m.w).toBeGreaterThanOrEqual(3);
    }
    expect(L.parks).toHaveLength(2);
    expect(L.parks[0]!.bytes).toBe(1310720);
    expect(L.lanes.map((l) => l.key)).toEqual(['space', 'writer', 'cycles', 'device']);
    expect(L.height).toBeGreaterThan(L.lanes[3]!.y + L.lanes[3]!.h);
    // lanes top to bottom, none over another, each captioned with its unit where it has an axis
    for (let k = 1; k < L.lanes.length; k++) expect(L.lanes[k]!.y).toBeGreaterThan(L.lanes[k - 1]!.y + L.lanes[k - 1]!.h + 16);
    const cyc = L.lanes[2]!;
    expect(cyc.ticks.length).toBeGreaterThan(1);
    expect(cyc.label).toContain('pages');
    expect(L.lanes[0]!.label).toBe('metadata reserved − the limit (MiB)');
    // the reservations: at most 100 MiB below the limit here; the limit is the lane's 0, at its top
    expect(dom.roomMib).toBeCloseTo(102.4);
    expect(L.limitY).toBeGreaterThanOrEqual(L.lanes[0]!.y);
    expect(L.limitY).toBeLessThan(L.lanes[0]!.y + L.lanes[0]!.h / 2);
    expect(L.lanes[0]!.ticks.map((t) => t.label)).toContain('0');
    expect(L.space.startsWith('M')).toBe(true);
    // marks in time order along x; a longer window squeezes them left
    expect(L.marks[1]!.x).toBeGreaterThan(L.marks[0]!.x);
    const L2 = layoutQueue(d, 700, 16, { ...dom, ms: 1000 });
    expect(L2.marks[1]!.x).toBeLessThan(L.marks[1]!.x);
    expect(windowSummary(d)).toEqual({ cycles: 2, pages: 80, inodes: 40, parkedMs: 4, ms: 500 });
    expect(windowText(d)).toBe('the 500 ms from the first ticket, 1.5 to 2 s into the 2 s run');
    expect(cycleFiles(d.zoom!.cycles[0]!, true)[0]!.name).toBe('f0000002.cpp');
  });

  it('lays out the run: may_use against the limit, cycles per second, delalloc', () => {
    const d = readUntarDetails(fixture);
    const dom = spaceDomain([d]);
    expect(dom.tMax).toBe(2);
    const S = layoutSpace(d, 600, 200, 16, dom);
    expect(S.reached).not.toBeNull();
    // the flush queue's window, shaded on the whole run: 1.5 to 2 s of it
    expect(S.window!.x0).toBeGreaterThan(S.margin.left + (600 - S.margin.left - S.margin.right) * 0.7);
    expect(S.window!.x1).toBeCloseTo(600 - S.margin.right);
    expect(S.mayUse.startsWith('M')).toBe(true);
    expect(S.yTitle).toContain('GiB');
    const R = layoutCycleRate([{ key: 'before', d }], 600, 200, 16, dom.tMax);
    expect(R.series[0]!.d.startsWith('M')).toBe(true);
    expect(R.yTitle).toContain('per s');
    const D = layoutDelalloc([{ key: 'before', d }], 600, 200, 16, dom.tMax);
    expect(D.yTitle).toContain('MiB');
  });
});

describe('untar view model on the real engine', () => {
  let b: Bridge;
  beforeAll(async () => {
    b = await loadNodeBridge();
  });

  it('the limit reached: 5.10 draws many more, shorter cycle marks than the fix, on one clock', () => {
    const run = (variant: 'before' | 'after') => b.run({ experiment: 'untar', variant, params: { scale: '0.05', fs_gib: '13', fs_used_gib: '0' }, seed: 1 });
    const [bd, ad] = [readUntarDetails(run('before').details), readUntarDetails(run('after').details)];
    expect(bd.zoom && ad.zoom).toBeTruthy();
    // the window opens at the first ticket: the same moment in both kernels
    expect(bd.zoom!.t0S).toBe(ad.zoom!.t0S);
    const dom = queueDomain([bd, ad]);
    const [lb, la] = [layoutQueue(bd, 800, 16, dom), layoutQueue(ad, 800, 16, dom)];
    expect(lb.marks.length).toBeGreaterThan(3 * la.marks.length);
    const avg = (L: typeof lb) => L.marks.reduce((s, m) => s + m.flushed, 0) / Math.max(1, L.marks.length);
    expect(avg(la)).toBeGreaterThan(5 * avg(lb));
    // the fix writes what it asks for; 5.10 a small share of it
    for (const m of la.marks) expect(m.flushed).toBeGreaterThanOrEqual(0.9 * m.wanted);
    expect(lb.marks.every((m) => m.flushed < 0.2 * m.wanted)).toBe(true);
    // a cycle lists the files it wrote: as many as it touched (while the window keeps them)
    const c = ad.zoom!.cycles[0]!;
    expect(c.files.length).toBe(c.inodes);
    expect(c.files.reduce((s, f) => s + f.pages, 0)).toBe(c.flushed);
    expect(windowSummary(bd).parkedMs).toBeGreaterThan(10 * windowSummary(ad).parkedMs);
    // reservations against the limit, sampled through the window: 5.10's
    // cycles free too little to leave tar room; the fix's free much more
    const room = (d: typeof bd) => Math.max(...d.zoom!.space.map((p) => (p.limitGib - p.mayUseGib) * 1024));
    expect(bd.zoom!.space.length).toBeGreaterThan(20);
    expect(room(ad)).toBeGreaterThan(3 * room(bd));
  });

  it('a fresh 2 TiB: the limit is never reached, no window, the same run in both kernels', () => {
    const run = (variant: 'before' | 'after') => b.run({ experiment: 'untar', variant, params: { scale: '0.02', fs_used_gib: '0' }, seed: 1 });
    const [bd, ad] = [readUntarDetails(run('before').details), readUntarDetails(run('after').details)];
    expect(bd.zoom).toBeNull();
    expect(ad.zoom).toBeNull();
    expect(bd.peakMayUseGib).toBeLessThan(bd.limitGib);
    const S = layoutSpace(bd, 600, 200, 16, spaceDomain([bd, ad]));
    expect(S.reached).toBeNull();
    expect(bd.elapsedS).toBe(ad.elapsedS);
  });
});
