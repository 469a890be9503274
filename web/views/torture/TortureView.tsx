/*
 * TortureView.tsx - what the file system did during a torture run: every
 * queue the engine samples (reservation tickets, delalloc and ordered
 * extents, qgroup dirty extents, log writers, fsync latency...) as small
 * step charts on one time axis, and each commit as a bar split into its
 * phases. Drawing only; the layouts come from ./model.ts.
 */
import { useWidth } from '../../app/useWidth';
import { fmtNum } from '../../model/format';
import { Axes } from '../Axes';
import { PHASE_COLOR, PHASE_LABEL, PHASES, readQgroupDetails, type Commit } from '../qgroup/model';
import type { ViewProps } from '../types';
import { VARIANT_COLOR } from '../types';
import { commitSummary, fmtMs, fmtValue, layoutCommits, layoutSeries, readSeries, type Series } from './model';

function SeriesChart({ s, tMaxMs }: { s: Series; tMaxMs: number }) {
  const [box, width] = useWidth<HTMLDivElement>(360);
  const L = layoutSeries(s, tMaxMs, width, 150);
  const peak = Math.max(...s.points.map((p) => p[1]));
  return (
    <figure className="figure" data-testid={`torture-series-${s.name}`}>
      <figcaption>
        {s.label} <span className="muted">· peak {fmtValue(peak, s.unit)} {s.unit !== 'bytes' ? s.unit : ''}</span>
      </figcaption>
      <div ref={box} className="chart-box">
        <svg className="chart" width={L.width} height={L.height} role="img" aria-label={`${s.label} over simulated time`}>
          <Axes {...L} xTitle="" gaps={{ x: 16, y: 6, title: 2 }} clampEnds />
          <path d={L.path} fill="none" stroke={VARIANT_COLOR.base} strokeWidth={2} />
        </svg>
      </div>
    </figure>
  );
}

function CommitChart({ commits, tMaxMs }: { commits: Commit[]; tMaxMs: number }) {
  const [box, width] = useWidth<HTMLDivElement>(720);
  const L = layoutCommits(commits, tMaxMs, width, 200);
  const { phases, longest } = commitSummary(commits);
  const total = (c: Commit): number => PHASES.reduce((s, p) => s + c.phasesMs[p], 0);
  return (
    <figure className="figure" data-testid="torture-commits">
      <figcaption>
        {commits.length} commits, each a bar at its start, split into its phases{' '}
        {longest && (
          <span className="muted">
            · longest: transaction {longest.transid} ({longest.reason}), {fmtMs(total(longest))}
          </span>
        )}
      </figcaption>
      <div ref={box} className="chart-box">
        <svg className="chart" width={L.width} height={L.height} role="img" aria-label="commit durations by phase over simulated time">
          <Axes {...L} xTitle="simulated time" gaps={{ x: 16, y: 6, title: 2 }} clampEnds />
          {L.bars.map((b) => (
            <rect key={b.key} x={b.x} width={3} y={b.y} height={b.height} fill={PHASE_COLOR[b.phase]}>
              <title>
                transaction {b.commit.transid} ({b.commit.reason}): {PHASE_LABEL[b.phase]} {fmtMs(b.ms)}
              </title>
            </rect>
          ))}
        </svg>
      </div>
      <div className="chart-legend" style={{ flexDirection: 'row', flexWrap: 'wrap', gap: '0.75rem' }}>
        {phases.map(([p, ms]) => (
          <span key={p}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={PHASE_COLOR[p]} />
            </svg>{' '}
            {PHASE_LABEL[p]}: {fmtMs(ms)} in all
          </span>
        ))}
      </div>
    </figure>
  );
}

export function TortureView({ runs }: ViewProps) {
  const run = runs.base;
  if (!run) return null;
  const series = readSeries(run.trace);
  const commits = readQgroupDetails(run.details).commits;
  const tMaxMs = run.simNs / 1e6;
  const failures = run.metrics.check_failures ?? 0;
  return (
    <section className="torture-view" data-testid="torture-view">
      <p style={failures ? { color: 'var(--bad)', fontWeight: 700 } : undefined} className={failures ? undefined : 'muted'} data-testid="torture-verdict">
        {failures
          ? `${fmtNum(failures)} invariant check(s) failed: the first is in the details below.`
          : `The checker ran after every commit: every tree, counter and cache agreed (${fmtNum(run.metrics.commits ?? 0)} commits).`}
      </p>
      {commits.length > 0 && <CommitChart commits={commits} tMaxMs={tMaxMs} />}
      <div style={{ display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(340px, 1fr))', gap: '0.75rem' }}>
        {series.map((s) => (
          <SeriesChart key={s.name} s={s} tMaxMs={tMaxMs} />
        ))}
      </div>
      {series.length === 0 && <p className="muted">This run sampled no queues.</p>}
      <p className="muted">
        Each chart is a queue the engine samples as it changes (a step line: the value holds until the next sample). Series that stayed empty are not
        shown: with plenty of space no reservation ever waits, so the ticket queues appear only when the file system runs short.
      </p>
    </section>
  );
}
