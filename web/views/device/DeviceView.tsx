/*
 * DeviceView.tsx - "The device": the simulated completion-latency CDF of a
 * fio job against the percentiles fio measured on the real drive for the
 * same job (when the calibration data has that job), and IOPS / bandwidth
 * simulated vs measured, plus the profile's fitted constants.
 */
import type { RunResult } from '../../engine/types';
import type { Quantile } from '../../model/cdf';
import { deviceCounters, readFioDetails, type MeasuredPoint } from '../../model/fioDetails';
import { jobKey, measuredJobs } from '../../model/fioJobs';
import { fmtNum, fmtPct } from '../../model/format';
import { splitProfileNotes } from '../../model/profileNotes';
import { Tag } from '../common/Tag';
import { sweepOf, type ViewProps } from '../types';
import { ChartFigure, GHOST, KERNEL_COLOR, KERNEL_TEXT } from '../common';
import { CdfChart } from './CdfChart';
import { FitCheck, type FitRow } from './FitCheck';

/** A row of simulated against measured; `fio` is fio's own name for it (a tooltip: a student reads the words). */
function Compare({ label, fio, hl, unit, sim, meas }: { label: string; fio: string; hl?: string; unit: string; sim: number | undefined; meas: number | undefined }) {
  return (
    <tr data-hl-key={hl}>
      <th scope="row" title={`fio: ${fio}`}>
        {label}
      </th>
      <td className="num">
        {fmtNum(sim)} <span className="unit">{unit}</span> <Tag kind="simulated" />
      </td>
      <td className="num">
        {meas !== undefined ? (
          <>
            {fmtNum(meas)} <span className="unit">{unit}</span> <Tag kind="measured" />
          </>
        ) : (
          <span className="muted">–</span>
        )}
      </td>
      <td className="num">{sim !== undefined && meas !== undefined && meas !== 0 ? fmtPct(sim / meas - 1) : ''}</td>
    </tr>
  );
}

/** The engine's CDF has 101 quantiles (p0..p100 in steps of 1%); add the simulated p99.9 metric so the line reaches the tail markers. */
function withTail(points: Quantile[], p999: number | undefined): Quantile[] {
  if (p999 === undefined || points.some((q) => Math.abs(q.p - 0.999) < 1e-9)) return points;
  return [...points, { p: 0.999, us: p999 }].sort((a, b) => a.p - b.p);
}

/** How a measured point stands to the fit, for the legend. */
function whyText(m: MeasuredPoint): string {
  if (m.usedForFit) return 'the profile was fitted to this point';
  if (m.notFitted?.kind === 'outside the model') return `outside the model: ${m.notFitted.reason}`;
  return 'held out of the fit: a prediction';
}

export function DeviceView(props: ViewProps) {
  const { info, params, runs, previous, seed, onParams } = props;
  const fit = sweepOf<FitRow>(props, 'fit-check');
  const run: RunResult | undefined = runs.base;
  if (!run) return null;
  const pic = readFioDetails(run.details);
  const meas = pic.measured;
  const mm = (p: number): number | undefined => meas?.markers.find((k) => Math.abs(k.p - p) < 1e-9)?.us;
  const job = `${params.rw ?? ''} ${params.bs ?? ''} B, iodepth ${params.iodepth ?? ''}, ${params.numjobs ?? ''} job(s)`;
  const jobs = measuredJobs(info.published, params.device ?? '');
  const current = jobKey({ rw: params.rw ?? '', bs: params.bs ?? '', iodepth: params.iodepth ?? '', numjobs: params.numjobs ?? '' });
  const prev = previous?.runs.base ? readFioDetails(previous.runs.base.details) : null;
  const series = [
    ...(prev && prev.simulated.length > 0
      ? [{ id: 'prev', label: `previous run (${previous?.label})`, points: withTail(prev.simulated, previous?.runs.base?.metrics.clat_p999_us), color: GHOST, dash: '7 5' }]
      : []),
    { id: 'sim', label: 'simulated', points: withTail(pic.simulated, run.metrics.clat_p999_us), color: KERNEL_COLOR.base },
  ];
  // what the page demonstrates, first: the simulated drive against fio's
  // measurement of the same job on the real one
  const pairs = meas
    ? ([
        ['IOPS', run.metrics.iops, meas.iops, ''],
        ['median latency', run.metrics.clat_p50_us, mm(0.5), ' µs'],
        ['p99', run.metrics.clat_p99_us, mm(0.99), ' µs'],
      ] as [string, number | undefined, number | undefined, string][]).filter(([, a, b]) => a !== undefined && b !== undefined && b !== 0)
    : [];
  return (
    <section className="device-view" data-testid="device-view">
      <p className="device-summary" data-testid="device-summary">
        {pairs.length > 0 ? (
          <>
            Simulated <Tag kind="simulated" /> against fio on the real drive <Tag kind="measured" />, the same job:{' '}
            {pairs.map(([what, a, b, unit], i) => (
              <span key={what}>
                {i > 0 && ' · '}
                {what} <b>{fmtNum(a)}</b> vs <b>{fmtNum(b)}</b>
                {unit} ({fmtPct(a! / b! - 1)})
              </span>
            ))}
          </>
        ) : (
          <>No fio measurement of this exact job: the simulated drive extrapolates{onParams && jobs.length > 0 ? '; pick a measured job below to compare' : ''}.</>
        )}
      </p>
      {onParams && (
        <div className="jobpick">
          <label htmlFor="measured-job">Jobs fio measured on {params.device}:</label>{' '}
          <select
            id="measured-job"
            data-testid="measured-job"
            value={jobs.some((j) => jobKey(j) === current) ? current : ''}
            onChange={(e) => {
              const j = jobs.find((x) => jobKey(x) === e.target.value);
              if (j) onParams(j.params);
            }}
          >
            <option value="">{jobs.length > 0 ? `this job was not measured: pick one of ${jobs.length}` : 'none for this profile'}</option>
            {jobs.map((j) => (
              <option key={jobKey(j)} value={jobKey(j)}>
                {j.label}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="device-grid">
        <ChartFigure
          testId="device-cdf"
          exportName={`fio-${params.device ?? ''}-${params.rw ?? ''}-${params.bs ?? ''}-qd${params.iodepth ?? ''}-j${params.numjobs ?? ''}`}
          title={
            <>
              <strong>{pic.profile || params.device}</strong> · {job}
              {pic.title && <span className="muted"> · {pic.title}</span>}
            </>
          }
        >
          {() => (
            <>
          {pic.simulated.length > 0 ? (
            <CdfChart
              series={series}
              measured={meas?.markers ?? []}
              measuredLabel={meas?.source}
              others={pic.others.flatMap((o) => o.markers)}
              othersLabel={pic.others.map((o) => o.source).join(', ')}
            />
          ) : (
            <p className="muted">This run reported no latency distribution.</p>
          )}
          <div className="chart-legend">
            <span>
              <svg width="28" height="10" aria-hidden="true">
                <line x1="0" x2="28" y1="5" y2="5" stroke={KERNEL_COLOR.base} strokeWidth="3" />
              </svg>{' '}
              simulated (this run)
            </span>
            {prev && prev.simulated.length > 0 && (
              <span data-testid="previous-legend">
                <svg width="28" height="10" aria-hidden="true">
                  <line x1="0" x2="28" y1="5" y2="5" stroke={GHOST} strokeWidth="2.5" strokeDasharray="7 5" />
                </svg>{' '}
                previous run: {previous?.label}
              </span>
            )}
            <span>
              <svg width="14" height="14" aria-hidden="true">
                <rect x="3" y="3" width="8" height="8" transform="rotate(45 7 7)" fill="#000" />
              </svg>{' '}
              {meas ? (
                <>
                  measured by fio: <span className="source" data-testid="measured-source">{meas.source}</span>{' '}
                  <span className="muted" data-testid="measured-fit">
                    ({whyText(meas)})
                  </span>
                </>
              ) : (
                <span data-testid="measured-none">no measurement of this exact job: the model extrapolates</span>
              )}
            </span>
            {pic.others.map((o) => (
              <span key={o.source} data-testid="measured-other">
                <svg width="14" height="14" aria-hidden="true">
                  <rect x="3.5" y="3.5" width="7" height="7" transform="rotate(45 7 7)" fill="#fff" stroke="#000" strokeWidth="1.6" />
                </svg>{' '}
                the same job in another run: <span className="source">{o.source}</span>{' '}
                <span className="muted">({whyText(o)}; the drive&apos;s own scatter)</span>
              </span>
            ))}
          </div>
            </>
          )}
        </ChartFigure>
        <div className="device-side">
          <table className="metrics compare" data-testid="device-compare">
            <thead>
              <tr>
                <th scope="col" />
                <th scope="col" style={{ color: KERNEL_TEXT.base }}>
                  simulated
                </th>
                <th scope="col">measured</th>
                <th scope="col">error</th>
              </tr>
            </thead>
            <tbody>
              <Compare label="IOPS" fio="IOPS (IOs per second)" hl="iops" unit="IO/s" sim={run.metrics.iops} meas={meas?.iops} />
              <Compare label="bandwidth" fio="BW" unit="MiB/s" sim={run.metrics.bw_mib_s} meas={meas?.bwMibS} />
              <Compare label="latency, mean" fio="clat avg (completion latency)" unit="µs" sim={run.metrics.clat_avg_us} meas={meas?.clatAvgUs} />
              <Compare label="latency, median (p50)" fio="clat p50" hl="median" unit="µs" sim={run.metrics.clat_p50_us} meas={mm(0.5)} />
              <Compare label="latency p90" fio="clat p90" unit="µs" sim={run.metrics.clat_p90_us} meas={mm(0.9)} />
              <Compare label="latency p99" fio="clat p99" unit="µs" sim={run.metrics.clat_p99_us} meas={mm(0.99)} />
              <Compare label="latency p99.9" fio="clat p99.9" unit="µs" sim={run.metrics.clat_p999_us} meas={mm(0.999)} />
            </tbody>
          </table>
          {pic.notes && (
            <div className="fitted" data-testid="profile-notes">
              <strong>
                How <code>{pic.profile}</code> is modelled <Tag kind="fitted" title="constants fitted to the measurements in calibration/" />
              </strong>
              <ul className="notes-list">
                {splitProfileNotes(pic.notes).map((n, i) => (
                  <li key={i}>
                    {n.head && (
                      <>
                        <code>{n.head}</code>:{' '}
                      </>
                    )}
                    {n.text}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {Object.keys(pic.device).length > 0 && (
            <table className="metrics device-counters" data-testid="device-counters">
              <caption>What the simulated drive did in this run</caption>
              <tbody>
                {deviceCounters(pic.device, run.simNs).map((c) => (
                  <tr key={c.key} title={c.key}>
                    <th scope="row">{c.label}</th>
                    <td className="num">{c.value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </div>
      {fit && <FitCheck rows={info.published} params={params} seed={seed ?? 1} sweep={fit} onParams={onParams} />}
    </section>
  );
}
