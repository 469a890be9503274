/*
 * TortureView.tsx - what the file system did during a torture run: each
 * commit as a bar split into its phases (all of them, or the window of the
 * last ones the engine keeps, labelled as such), and every queue the engine
 * samples (reservation tickets, delalloc and ordered extents, qgroup dirty
 * extents, log writers, fsync latency...) as small step charts on one time
 * axis. A single run, no kernels: lines in the simulated run's colour,
 * phases in neutral greys. First, what the page demonstrates: the run's
 * verdict (violations in how many checked commits) and what was checked.
 * Drawing only; the layouts come from ./model.ts.
 */
import { fmtNum } from '../../model/format';
import { Axes, ChartFigure, KERNEL_COLOR } from '../common';
import { PHASE_COLOR, PHASE_LABEL, PHASES, readQgroupDetails, type Commit } from '../qgroup/model';
import type { ViewProps } from '../types';
import { commitSummary, commitWindow, fmtMs, fmtValue, layoutCommits, layoutSeries, readSeries, workDone, type Series } from './model';

/** What the invariant checker holds the file system to after each commit
 * (engine/src/kernel/check.h, and the checks subsystems register). */
const CHECKS = [
  'every tree: keys in order, inside their parent\'s range; blocks within their size; levels and generations consistent',
  'every tree block and data extent: its reference count equals the references to it',
  'the allocator: extents inside their block groups, no overlap, each group\'s used bytes the sum of its extents',
  'checksums cover exactly the data written',
  'the io_tree, page accounting, ordered extents and qgroups agree with the trees',
];

function SeriesChart({ s, tMaxMs }: { s: Series; tMaxMs: number }) {
  const peak = Math.max(...s.points.map((p) => p[1]));
  return (
    <ChartFigure
      testId={`torture-series-${s.name}`}
      exportName={`torture-${s.name}`}
      fallbackWidth={360}
      title={
        <>
          {s.label} <span className="muted">· peak {fmtValue(peak, s.unit)}</span>
        </>
      }
    >
      {(width, theme) => {
        const L = layoutSeries(s, tMaxMs, width, Math.round(theme.fontPx * 10), theme.fontPx);
        return (
          <svg className="chart" width={L.width} height={L.height} viewBox={`0 0 ${L.width} ${L.height}`} role="img" aria-label={`${s.label} over simulated time`}>
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
            <path d={L.path} fill="none" stroke={KERNEL_COLOR.base} strokeWidth={theme.strokePx - 0.5} />
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function CommitChart({ commits, total, tMaxMs }: { commits: Commit[]; total: number; tMaxMs: number }) {
  const { phases, longest } = commitSummary(commits);
  const sum = (c: Commit): number => PHASES.reduce((s, p) => s + c.phasesMs[p], 0);
  // the engine keeps the last commits; draw the window they span, labelled, not an axis with nothing on most of it
  const { all, window } = commitWindow(commits, total, tMaxMs);
  return (
    <ChartFigure
      testId="torture-commits"
      exportName="torture-commits"
      data={{ drawn: String(commits.length), total: String(total) }}
      title={
        all ? (
          <>All {fmtNum(total)} commits, each a bar at its start, by phase</>
        ) : (
          <>
            The last {fmtNum(commits.length)} of {fmtNum(total)} commits ({fmtMs(window[0])} to {fmtMs(window[1])}), by phase
          </>
        )
      }
      legend={phases.map(([p, ms]) => ({ label: `${PHASE_LABEL[p]}: ${fmtMs(ms)} in all${all ? '' : ' shown'}`, color: PHASE_COLOR[p] }))}
      note={longest ? `Longest shown: transaction ${longest.transid} (${longest.reason}), ${fmtMs(sum(longest))}.` : undefined}
    >
      {(width, theme) => {
        const L = layoutCommits(commits, tMaxMs, width, Math.round(theme.fontPx * 13), theme.fontPx, window);
        return (
          <svg className="chart" width={L.width} height={L.height} viewBox={`0 0 ${L.width} ${L.height}`} role="img" aria-label="commit durations by phase over simulated time">
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
            {L.bars.map((b) => (
              <rect key={b.key} x={b.x - L.barWidth / 2} width={L.barWidth} y={b.y} height={b.height} fill={PHASE_COLOR[b.phase]}>
                <title>
                  transaction {b.commit.transid} ({b.commit.reason}): {PHASE_LABEL[b.phase]} {fmtMs(b.ms)}
                </title>
              </rect>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

export function TortureView({ runs }: ViewProps) {
  const run = runs.base;
  if (!run) return null;
  const series = readSeries(run.trace);
  const commits = readQgroupDetails(run.details).commits;
  const tMaxMs = run.simNs / 1e6;
  const failures = run.metrics.check_failures ?? 0;
  const total = run.metrics.commits ?? commits.length;
  const ops = run.metrics.ops ?? 0;
  const full = run.metrics.full_checks ?? 0;
  const work = workDone(run.details, run.metrics.fsyncs);
  return (
    <section className="torture-view" data-testid="torture-view">
      <div className={`torture-claim${failures ? ' bad' : ''}`} data-testid="torture-verdict" data-failures={failures}>
        <p className="torture-claim-head">
          {failures ? (
            <>
              {fmtNum(failures)} invariant {failures === 1 ? 'check' : 'checks'} failed in {fmtNum(total)} commits: the simulated file system lost its consistency (the first failure is in the details below).
            </>
          ) : (
            <>
              <span className="torture-ok" aria-hidden="true">
                ✓
              </span>{' '}
              {fmtNum(ops)} random operations, {fmtNum(total)} commits, each one checked: the simulated file system stayed consistent (0 violations).
            </>
          )}
        </p>
        <p className="torture-claim-sub">
          This page tests the lab&apos;s own model, not a patch: one kernel, random work, and after every commit the checker walks what changed ({fmtNum(full)} of the checks walked the whole file system):
        </p>
        <ul className="torture-checks" data-testid="torture-checks">
          {CHECKS.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
        {work.length > 0 && (
          <p className="torture-claim-sub" data-testid="torture-work">
            The random work it survived: {work.join(' · ')}.
          </p>
        )}
      </div>
      {commits.length > 0 && <CommitChart commits={commits} total={total} tMaxMs={tMaxMs} />}
      <div className="multiples">
        {series.map((s) => (
          <SeriesChart key={s.name} s={s} tMaxMs={tMaxMs} />
        ))}
      </div>
      {series.length === 0 && <p className="muted">This run sampled no queues.</p>}
      <p className="muted prose">
        Each small chart is a queue the engine samples as it changes (a step line: the value holds until the next sample). Series that stayed empty are not shown: with plenty of space no
        reservation ever waits, so the ticket queues appear only when the file system runs short.
      </p>
    </section>
  );
}
