/*
 * qgroup.test.ts - the qgroup-drop view's transforms, on the real engine's
 * output: details parse into the pictures' data, the layouts are sane, the
 * threshold sweep behaves as the mechanism says (calls ~ records /
 * threshold, total flat, worst call shrinking), and the lesson's checks
 * pass on the real engine (and fail when turned around).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Bridge } from '../../engine/bridge';
import { loadNodeBridge } from '../../engine/node';
import type { RunResult } from '../../engine/types';
import { parseLesson } from '../../model/lessonFormat';
import { runLessonHeadless } from '../../model/lessonRun';
import { PHASES, SWEEP_THRESHOLDS, layoutCommits, layoutDirty, layoutSweep, layoutTree, readQgroupDetails, sweepRow, type SweepRow } from './model';

let b: Bridge;
let before: RunResult;
let after: RunResult;
beforeAll(async () => {
  b = await loadNodeBridge();
  before = b.run({ experiment: 'qgroup-drop', variant: 'before', params: {}, seed: 1 });
  after = b.run({ experiment: 'qgroup-drop', variant: 'after', params: { threshold: '4096' }, seed: 1 });
}, 60_000);

describe('details -> pictures', () => {
  it('parses calls, commits with phases, the dirty-extent series and the tree', () => {
    const p = readQgroupDetails(after.details);
    expect(p.calls.filter((c) => c.records > 0)).toHaveLength(after.metrics.account_calls!);
    expect(p.commits.length).toBe(after.metrics.commits);
    for (const c of p.commits) for (const ph of PHASES) expect(c.phasesMs[ph]).toBeGreaterThanOrEqual(0);
    const accounted = p.commits.reduce((s, c) => s + c.records, 0);
    expect(accounted).toBe(after.metrics.dirty_extents);
    expect(p.dirty.length).toBeGreaterThan(10);
    expect(Math.max(...p.dirty.map((d) => d[1]))).toBeGreaterThanOrEqual(4096);
    expect(p.tree?.leaves.length).toBe(after.metrics.rec_leaves);
    expect(p.tree?.roots).toHaveLength(16);
    expect(p.tree?.roots[0]?.[2]).toBe(after.metrics.leaves_per_subvol);
    const bd = p.breakdown;
    expect(bd.data_extents! + bd.leaves! + bd.nodes! + bd.parent_cows! + bd.shared_subtree! + bd.other!).toBe(after.metrics.dirty_extents);
  });

  it('tolerates missing or malformed details', () => {
    const p = readQgroupDetails({ calls: 'x', commits: [{}], tree: null });
    expect(p.calls).toEqual([]);
    expect(p.commits[0]!.records).toBe(0);
    expect(p.tree).toBeNull();
  });

  it('lays the commits out as bars whose phases stack to the duration', () => {
    const p = readQgroupDetails(before.details);
    const L = layoutCommits(p.commits, 400, 240);
    expect(L.bars).toHaveLength(1);
    const bar = L.bars[0]!;
    const stacked = bar.segments.reduce((s, x) => s + x.height, 0);
    expect(stacked).toBeGreaterThan(100); // the tallest bar fills the plot
    const q = bar.segments.find((s) => s.phase === 'qgroup_account')!;
    expect(q.ms / bar.totalMs).toBeGreaterThan(0.9); // accounting dominates the big commit
  });

  it('draws the dirty-extent count on one frame and reports the late periodic commit', () => {
    const pb = readQgroupDetails(before.details);
    const pa = readQgroupDetails(after.details);
    const L = layoutDirty(
      [
        { id: 'before', points: pb.dirty },
        { id: 'after', points: pa.dirty },
      ],
      [...pb.commits, ...pa.commits],
      4096,
      Math.max(pb.drop.end_s!, pa.drop.end_s!),
      400,
      240,
    );
    expect(L.paths.map((x) => x.d.startsWith('M'))).toEqual([true, true]);
    expect(L.lateCommitS).toBeGreaterThan(29);
    expect(L.threshold).not.toBeNull();
  });

  it('colours every leaf by an accounting call', () => {
    const p = readQgroupDetails(after.details);
    const L = layoutTree(p.tree!, p.calls, 400);
    expect(L.cells).toHaveLength(p.tree!.leaves.length);
    expect(L.cells.every((c) => c.color !== '#bbbbbb')).toBe(true);
    expect(L.legend).toHaveLength(after.metrics.account_calls!); // the drop spans every call
  });
});

describe('threshold sweep through the engine', () => {
  let rows: SweepRow[];
  beforeAll(() => {
    rows = SWEEP_THRESHOLDS.map((t) => sweepRow(t, b.run({ experiment: 'qgroup-drop', variant: 'after', params: { threshold: t }, seed: 1 }).metrics));
  }, 120_000);

  it('calls follow records / threshold; the total stays flat; the worst call shrinks', () => {
    const recs = after.metrics.dirty_extents!;
    for (const r of rows) {
      if (Number.isFinite(r.threshold)) {
        expect(r.calls).toBeLessThanOrEqual(Math.ceil(recs / r.threshold));
        expect(r.calls).toBeGreaterThanOrEqual(Math.floor(recs / (r.threshold + 100)));
      } else expect(r.calls).toBe(1);
      expect(r.totalMs / rows[0]!.totalMs).toBeGreaterThan(0.95);
      expect(r.totalMs / rows[0]!.totalMs).toBeLessThan(1.05);
    }
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.maxMs).toBeGreaterThanOrEqual(rows[i - 1]!.maxMs);
    expect(rows.find((r) => r.threshold === 4096)?.calls).toBe(5);
  });

  it('lays out both panels with a point per threshold and ∞ last', () => {
    for (const which of ['counts', 'ms'] as const) {
      const L = layoutSweep(rows, which, 360, 230);
      expect(L.xTicks.at(-1)?.label).toBe('∞');
      for (const s of L.series) {
        expect(s.d.startsWith('M')).toBe(true);
        const xs = s.points.map((p) => p.x);
        expect([...xs].sort((a, c) => a - c)).toEqual(xs);
      }
      expect(L.yTicks.length).toBeGreaterThan(0);
    }
  });
});

describe('the lesson', () => {
  it("lessons/qgroup-drop.json: every step's checks pass on the real engine, and fail turned around", () => {
    const text = readFileSync(new URL('../../../lessons/qgroup-drop.json', import.meta.url), 'utf8');
    const lesson = parseLesson(text, 'qgroup-drop.json', { experiments: b.list() });
    const outcomes = runLessonHeadless(lesson, b.list(), (spec) => b.run(spec));
    expect(outcomes.flatMap((os, i) => os.filter((o) => !o.pass).map((o) => `step ${i}: ${o.check.label} (${o.detail})`))).toEqual([]);
    expect(lesson.steps.some((s) => s.prediction?.metric === 'account_calls')).toBe(true);
    const FLIP = { lt: 'gt', gt: 'lt', ratio_lt: 'ratio_gt', ratio_gt: 'ratio_lt' } as const;
    const flipped = structuredClone(lesson);
    for (const s of flipped.steps)
      for (const c of s.checks) {
        if (c.op === 'between' || c.op === 'ratio_between') c.range = [c.range![1] + 1, c.range![1] + 2];
        else c.op = FLIP[c.op];
      }
    expect(runLessonHeadless(flipped, b.list(), (spec) => b.run(spec)).flat().filter((o) => o.pass)).toEqual([]);
  }, 120_000);
});
