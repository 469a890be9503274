/*
 * FitCheck.tsx - "Check every measured point": each fio job measured on
 * the profile, run by the app (registry: FIT_CHECK), and draw each point's error in IOPS,
 * median and p99 against the measured drive, with the 15% band, fitted
 * points apart from those held out and those outside the model. The same
 * count the C test asserts, in the browser: a developer sees the whole fit,
 * misses included, and a click loads a point's job. Drawing only; the data
 * logic is in model/fitCheck.ts.
 */
import { SweepButton } from '../common/SweepButton';
import { useWidth } from '../common/useWidth';
import type { PublishedRow } from '../../engine/types';
import { jobKey, jobLabel } from '../../model/fioJobs';
import { ColumnHeads } from '../SweepParts';
import type { SweepHandle } from '../types';
import {
  distinctJobs,
  jobParams,
  layoutErrors,
  measuredPoints,
  replicateAgreement,
  scorePoint,
  summarise,
  WITHIN,
  type PointStatus,
  type ScoredPoint,
} from '../../model/fitCheck';
import { Axes, NEUTRAL, axisTitle, fmtNum, useChartTheme } from '../common';

/* categories, so neutral (orange and blue are the kernels'): filled, hollow, faint */
const STATUS_STYLE: Record<PointStatus, { fill: string; stroke: string; r: number; label: string }> = {
  fitted: { fill: NEUTRAL.strong, stroke: NEUTRAL.strong, r: 4, label: 'fitted on' },
  'held out': { fill: '#fff', stroke: NEUTRAL.strong, r: 4.5, label: 'held out (a prediction)' },
  'outside the model': { fill: NEUTRAL.light, stroke: NEUTRAL.light, r: 3, label: 'outside the model (reported only)' },
};

/** One decimal: a miss at +15.1% must not read "+15%". */
const pct1 = (e: number): string => (Number.isFinite(e) ? `${e > 0 ? '+' : e < 0 ? '−' : ''}${Math.abs(e * 100).toFixed(1)}%` : '–');

const METRICS = [
  ['iops', 'IOPS'],
  ['p50', 'p50 clat'],
  ['p99', 'p99 clat'],
] as const;

/** A job's run: the fitted model itself, no drive state drawn (variation off). */
export interface FitRow {
  key: string;
  metrics: Record<string, number>;
}

interface Props {
  rows: PublishedRow[];
  params: Record<string, string>;
  seed: number;
  sweep: SweepHandle<FitRow>;
  onParams?: (params: Record<string, string>) => void;
}

export function FitCheck({ rows, params, seed, sweep, onParams }: Props) {
  const device = params.device ?? '';
  const points = measuredPoints(rows, device);
  const jobs = distinctJobs(points);
  const { rows: done, state, err, run, stop } = sweep;
  const [box, boxWidth] = useWidth<HTMLDivElement>(900);
  const byJob = new Map(done.map((d) => [d.key, d.metrics]));
  const scored: ScoredPoint[] = points.filter((p) => byJob.has(jobKey(p))).map((p) => scorePoint(p, byJob.get(jobKey(p))!));
  const sums = summarise(scored);
  const selfCheck = replicateAgreement(points);
  const misses = scored.filter((p) => p.status === 'fitted' && !p.within);
  const theme = useChartTheme();
  const pw = Math.max(260, Math.floor(boxWidth >= 840 ? (boxWidth - 40) / 3 : boxWidth));
  if (points.length === 0) return null;
  return (
    <figure className="figure" data-testid="fit-check" data-state={state} style={{ marginTop: '1rem' }}>
      <div ref={box} style={{ width: '100%' }} />
      <figcaption>
        Every point measured on <code>{device}</code>: {points.length} points, {jobs.length} fio jobs, {fmtNum(Number(params.ios ?? 200000))} IOs each, random seed {seed}
        {Number(params.ios ?? 200000) === 200000 && seed === 1 ? ' (as the C test runs them)' : ' (the C test runs 200,000 IOs with seed 1, so its counts can differ)'}{' '}
        <SweepButton state={state} done={done.length} total={jobs.length} label="Check every measured point" testId="fit-check-run" onRun={run} onStop={stop} />
      </figcaption>
      {selfCheck.pairs > 0 && (
        <p className="muted" data-testid="fit-check-replicates" data-pairs={selfCheck.pairs} data-within={selfCheck.within}>
          The drive against itself: {selfCheck.pairs} of these jobs were measured twice, and the second run is within {Math.round(WITHIN * 100)}% of the first on IOPS, median and p99 for {selfCheck.within} of
          them. A model should not be asked to come closer to one run than the drive&apos;s own second run does.
        </p>
      )}
      {err && <p className="error">{err}</p>}
      {scored.length > 0 && (
        <>
          <p data-testid="fit-check-summary">
            {sums
              .filter((s) => s.points > 0)
              .map((s) => (
                <span key={s.status} data-testid={`fit-check-${s.status.replace(/ /g, '-')}`} data-within={s.within} data-points={s.points} style={{ marginRight: '1.5rem', display: 'inline-block' }}>
                  <strong>{s.status}</strong>: {s.within} of {s.points} within {Math.round(WITHIN * 100)}% on all three
                </span>
              ))}
          </p>
          <div style={{ display: 'flex', flexWrap: 'wrap', gap: 16 }}>
            {METRICS.map(([m, title]) => {
              const L = layoutErrors(scored, m, pw, Math.round(theme.fontPx * 15), theme.fontPx);
              return (
                <svg key={m} className="chart" style={{ width: pw }} width={pw} height={L.height} viewBox={`0 0 ${pw} ${L.height}`} role="img" aria-label={`error in ${title} at every measured point`} data-testid={`fit-check-${m}`}>
                  <rect x={L.margin.left} y={L.band[0]} width={pw - L.margin.left - L.margin.right} height={L.band[1] - L.band[0]} fill={NEUTRAL.faint} />
                  <Axes {...L} clampEnds xTitle={axisTitle(`measured ${title}, log`, m === 'iops' ? 'IO/s' : 'µs')} yTitle={axisTitle('simulated error', '%')} />
                  <line x1={L.margin.left} x2={pw - L.margin.right} y1={L.zero} y2={L.zero} stroke="#555" />
                  {(['outside the model', 'held out', 'fitted'] as PointStatus[]).flatMap((st) =>
                    L.dots
                      .filter((d) => d.point.status === st)
                      .map((d, i) => {
                        const s = STATUS_STYLE[st];
                        return (
                          <circle
                            key={`${st}${i}`}
                            cx={d.x}
                            cy={d.y}
                            r={d.clipped ? s.r + 1.5 : s.r}
                            fill={s.fill}
                            stroke={s.stroke}
                            strokeWidth={1.5}
                            style={onParams ? { cursor: 'pointer' } : undefined}
                            onClick={onParams ? () => onParams(jobParams(d.point)) : undefined}
                            data-testid={`fit-dot-${st.replace(/ /g, '-')}`}
                          >
                            <title>
                              {jobLabel(d.point)} ({d.point.source}): {title} {pct1(d.err)}
                              {d.clipped ? ' (off the chart)' : ''}
                              {d.point.why ? ` — not fitted: ${d.point.why}` : ''}
                            </title>
                          </circle>
                        );
                      }),
                  )}
                </svg>
              );
            })}
          </div>
          <div className="chart-legend" style={{ flexDirection: 'row', flexWrap: 'wrap', gap: '1rem' }}>
            {(Object.keys(STATUS_STYLE) as PointStatus[]).map((st) => (
              <span key={st}>
                <svg width="14" height="14" aria-hidden="true">
                  <circle cx="7" cy="7" r={STATUS_STYLE[st].r} fill={STATUS_STYLE[st].fill} stroke={STATUS_STYLE[st].stroke} strokeWidth={1.5} />
                </svg>{' '}
                {STATUS_STYLE[st].label}
              </span>
            ))}
            <span className="muted">shaded: within {Math.round(WITHIN * 100)}%; a bigger dot on the edge is off the chart; click a dot to load its job</span>
          </div>
          {misses.length > 0 && (
            <table className="metrics" data-testid="fit-check-misses">
              <caption className="muted" style={{ textAlign: 'left' }}>
                Fitted points outside {Math.round(WITHIN * 100)}% (docs/fidelity.md, "fio: the device", says what the model lacks for each)
              </caption>
              <ColumnHeads cols={['job', 'IOPS', 'median', 'p99', 'measured in']} />
              <tbody>
                {misses.map((p) => (
                  <tr key={`${jobKey(p)}|${p.source}`} data-testid="fit-check-miss">
                    <td>
                      {onParams ? (
                        <button type="button" className="linkish" onClick={() => onParams(jobParams(p))} title="load this job">
                          {jobLabel(p)}
                        </button>
                      ) : (
                        jobLabel(p)
                      )}
                    </td>
                    {(['iops', 'p50', 'p99'] as const).map((k) => (
                      <td key={k} className={`num ${Math.abs(p.err[k]) <= WITHIN ? 'err-ok' : 'err-bad'}`}>
                        {pct1(p.err[k])}
                      </td>
                    ))}
                    <td className="source">{p.source}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </figure>
  );
}
