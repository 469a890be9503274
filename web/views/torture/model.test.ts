import { describe, expect, it } from 'vitest';
import { commitSummary, commitWindow, layoutCommits, layoutSeries, readSeries, workDone } from './model';
import { readQgroupDetails } from '../qgroup/model';

describe('torture view model', () => {
  it('reads the non-empty series in time order, known ones first with their labels', () => {
    const s = readSeries({
      series: {
        zeta_custom: { t: [5e6], v: [1] },
        space_tickets: { t: [], v: [] },
        ordered_extents: { t: [3e6, 1e6, 2e6], v: [3, 1, 2] },
        delalloc_extents: { t: [1e6], v: [7] },
      },
    });
    expect(s.map((x) => x.name)).toEqual(['delalloc_extents', 'ordered_extents', 'zeta_custom']);
    expect(s[1]!.points).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(s[1]!.label).toMatch(/ordered extents/);
    expect(s[2]!.label).toBe('zeta custom');
  });

  it('drops the per-phase fsync series when it repeats fsync_ms, keeps several phases', () => {
    const one = readSeries({ series: { fsync_ms: { t: [1], v: [2] }, fsync_ms_default: { t: [1], v: [2] } } });
    expect(one.map((x) => x.name)).toEqual(['fsync_ms']);
    const two = readSeries({ series: { fsync_ms: { t: [1], v: [2] }, fsync_ms_create: { t: [1], v: [2] }, fsync_ms_delete: { t: [2], v: [3] } } });
    expect(two.map((x) => x.label)).toEqual(['fsync latency', 'fsync latency, phase create', 'fsync latency, phase delete']);
    expect(two[2]!.unit).toBe('ms');
  });

  it('survives a missing or malformed trace', () => {
    expect(readSeries(undefined)).toEqual([]);
    expect(readSeries({ series: { a: { t: [1, 2], v: [1] } } })[0]!.points).toEqual([[1e-6, 1]]);
  });

  it('draws a step line that holds each value until the next sample and to the end', () => {
    const [s] = readSeries({ series: { log_writers: { t: [0, 5e6], v: [2, 0] } } });
    const L = layoutSeries(s!, 10, 400, 150);
    expect(L.path.startsWith('M')).toBe(true);
    expect(L.path.match(/H/g)?.length).toBe(2); // to the second sample, then to the end
    expect(L.path.match(/V/g)?.length).toBe(1);
    expect(L.yTicks.length).toBeGreaterThan(1);
  });

  it('sums the phases of all commits and finds the longest', () => {
    const { commits } = readQgroupDetails({
      commits: [
        { transid: 7, reason: 'kthread', start_s: 1, end_s: 1.5, phases_ms: { wait_writers: 1, delayed_refs: 2, qgroup_account: 0, write_blocks: 3 } },
        { transid: 8, reason: 'explicit', start_s: 2, end_s: 4, phases_ms: { wait_writers: 0, delayed_refs: 1, qgroup_account: 5, write_blocks: 1 } },
      ],
    });
    const { phases, longest } = commitSummary(commits);
    expect(Object.fromEntries(phases)).toEqual({ wait_writers: 1, delayed_refs: 3, qgroup_account: 5, write_blocks: 4 });
    expect(longest?.transid).toBe(8);
    const L = layoutCommits(commits, 5000, 600, 200);
    // zero-length phases draw nothing; the bars stack bottom-up
    expect(L.bars.map((b) => b.key)).toEqual(['7-wait_writers', '7-delayed_refs', '7-write_blocks', '8-delayed_refs', '8-qgroup_account', '8-write_blocks']);
    expect(L.bars[1]!.y + L.bars[1]!.height).toBeCloseTo(L.bars[0]!.y);
    expect(L.bars[3]!.x).toBeGreaterThan(L.bars[0]!.x);
  });

  it('draws all commits from 0, or the window of the last ones the engine kept, in one time unit per axis', () => {
    const mk = (n: number, t0: number) =>
      readQgroupDetails({ commits: Array.from({ length: n }, (_, i) => ({ transid: i, start_s: t0 + i * 0.01, end_s: t0 + i * 0.01 + 0.002, phases_ms: { write_blocks: 2 } })) }).commits;
    expect(commitWindow(mk(34, 0), 34, 430)).toEqual({ all: true, window: [0, 430] });
    const last = mk(400, 52);
    const w = commitWindow(last, 3754, 60_000);
    expect(w.all).toBe(false);
    expect(w.window).toEqual([52_000, 60_000]);
    const L = layoutCommits(last, 60_000, 800, 200, 16, w.window);
    expect(L.xTitle).toBe('simulated time the commit started (s)');
    expect(L.xTicks.every((t) => /^[\d,.]+$/.test(t.label))).toBe(true);
    expect(Number(L.xTicks[0]!.label)).toBeGreaterThanOrEqual(52);
    expect(Math.min(...L.bars.map((b) => b.x))).toBeGreaterThanOrEqual(L.margin.left);
    expect(L.yTitle).toBe('duration (ms)');
  });
});

describe('workDone: the random work in words', () => {
  it('names the non-zero parts, the power cuts with how many were replayed', () => {
    const d = { snapshots: 0, reads: 21, lseeks: 0, all: { log_commits: 12, power_cuts: 3, power_cuts_replayed: 3, sends: 0, snapshots_taken: 4 } };
    expect(workDone(d, 99)).toEqual(['99 fsyncs', '12 log-tree commits', '4 snapshots', '3 power cuts (3 replayed from the log)', '21 reads']);
  });
  it('a files mix has no "all" block; nothing at all gives nothing', () => {
    expect(workDone({ snapshots: 0, reads: 5, lseeks: 9 }, 0)).toEqual(['9 lseeks', '5 reads']);
    expect(workDone(undefined, undefined)).toEqual([]);
  });
});
