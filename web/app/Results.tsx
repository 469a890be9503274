/*
 * Results.tsx - what a finished run shows, in the order a reader needs it
 * (web/DESIGN.md): first the headline comparison (the patch's figure,
 * before against after on one scale), then the experiment's mechanism
 * pictures (its view, from the registry), then the metrics table collapsed
 * to the rows where the kernels differ or a published figure applies, the
 * rest behind "show all". Every number says where it comes from.
 */
import { useState, type ReactNode } from 'react';
import type { ExperimentInfo, MetricInfo, RunResult, Variant } from '../engine/types';
import { fmtChange, fmtNs, fmtNum, fmtPct, fmtUnit } from '../model/format';
import { seedSpread } from '../model/noisy';
import { publishedFor, relError } from '../model/provenance';
import type { Emphasis } from '../model/urlState';
import { KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT } from '../views/common/palette';
import { Headline } from '../views/common/Headline';
import { headlineOf, labelOf, noisyOf, sweepsFor, viewFor, type SweepContext } from '../views/registry';
import type { PreviousRun, SeedSpread, SweepHandle, ViewProps } from '../views/types';
import { engine } from './engine';
import { BACKGROUND } from '../engine/pool';
import { RunExport } from './RunExport';
import { tracked, useSweeps, type SweepDef } from './useSweep';
import { Tag } from '../views/common/Tag';

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  variants: Variant[];
  runs: Partial<Record<Variant, RunResult>>;
  emphasis: Emphasis;
  stale: boolean;
  /** a run is under way: what is shown is the last finished one */
  running?: boolean;
  previous?: PreviousRun;
  seed?: number;
  onParams?: (params: Record<string, string>) => void;
  /** a kernel shown only as a pinned reference (a lesson step runs the other) */
  reference?: Variant;
  view?: Record<string, string>;
  onView?: ViewProps['onView'];
  /** drawn between the headline comparison and the mechanism pictures (the page's patch switches) */
  controls?: ReactNode;
  /** the page's one Run ×20 (useSeeds): a noisy figure's median and band,
   * a published mean's sd beside the model's spread, the view's spreads */
  spread?: SeedSpread;
  /** the page's recorded picture (drawn when its recording arrives), between the controls and the view */
  pictures?: ReactNode;
}

const dim = (emphasis: Emphasis, v: Variant): boolean => emphasis !== 'none' && v !== 'base' && v !== emphasis;

/** A single run's headline numbers (pages without a patch: the device, torture). */
function Panel({ info, variant, run, running }: { info: ExperimentInfo; variant: Variant; run: RunResult | undefined; running?: boolean }) {
  const head = headlineOf(info);
  return (
    <section className="panel" style={{ borderTopColor: KERNEL_COLOR[variant] }} data-testid={`panel-${variant}`} data-variant={variant} aria-label={KERNEL_LABEL[variant]}>
      {run ? (
        <>
          <div className="headline">
            {head.map((m) => (
              <div key={m.name} className="headline-item">
                <div className="headline-value" data-testid={`value-${variant}-${m.name}`}>
                  {fmtNum(run.metrics[m.name])}
                  <span className="headline-unit"> {fmtUnit(m.unit)}</span>
                </div>
                <div className="headline-label" title={`${m.name}: ${m.help}`}>
                  {labelOf(info, m)}
                </div>
              </div>
            ))}
          </div>
          <RunFoot run={run} />
        </>
      ) : (
        <div className="panel-empty muted">{running ? 'Running…' : <>Not run yet: press Run (<kbd>r</kbd>).</>}</div>
      )}
    </section>
  );
}

function RunFoot({ run, variant }: { run: RunResult; variant?: Variant }) {
  return (
    <div className="panel-foot muted prose">
      {variant && <span style={{ color: KERNEL_TEXT[variant] }}>{variant}: </span>}
      {fmtNs(run.simNs)} simulated · {fmtNum(run.events)} events · {fmtNum(run.wallMs)} ms on this computer
    </div>
  );
}

/** Do the kernels' values of a metric differ as displayed? */
const differs = (m: MetricInfo, variants: Variant[], runs: Partial<Record<Variant, RunResult>>): boolean =>
  new Set(variants.filter((v) => runs[v]).map((v) => fmtNum(runs[v]?.metrics[m.name]))).size > 1;

/**
 * The change column's words for a metric. A noisy one (one run of a noisy
 * process) states a direction only from its medians over the seeds, and
 * says so; without them it says it is one run.
 */
function changeText(m: MetricInfo, runs: Partial<Record<Variant, RunResult>>, noisy: boolean, spread: SeedSpread | undefined): string {
  if (!noisy) return fmtChange(runs.before?.metrics[m.name], runs.after?.metrics[m.name]);
  const b = spread ? seedSpread(spread.rows, 'before', m.name) : null;
  const a = spread ? seedSpread(spread.rows, 'after', m.name) : null;
  return b && a ? `${fmtChange(b.p50, a.p50)} (medians of ${spread!.rows.length} runs)` : 'one run: no direction';
}

export function MetricsTable({ info, params, variants, runs, emphasis, reference, spread }: Omit<Props, 'stale' | 'onParams' | 'previous'>) {
  const noisy = noisyOf(info, params);
  const [all, setAll] = useState(false);
  const pair = variants.includes('before') && variants.includes('after');
  const shown = variants.filter((v) => runs[v] || !reference);
  const rows = info.metricInfo.map((m) => {
    const pubs = shown.flatMap((v) => (v === reference ? [] : publishedFor(info.published, m.name, v, info.params, params).map((pm) => ({ v, m: pm }))));
    return { m, pubs, keep: !pair || differs(m, shown, runs) || pubs.some((p) => p.m.differs.length === 0) };
  });
  const hidden = rows.filter((r) => !r.keep).length;
  return (
    // A before/after table with its published column can be wider than a
    // lesson's right-hand column: it scrolls there instead of widening the page.
    <div className="table-scroll prose">
      <table className="metrics" data-testid="metrics">
        <thead>
          <tr>
            <th scope="col">metric</th>
            {shown.map((v) => (
              <th scope="col" key={v} className={dim(emphasis, v) ? 'col-dim' : ''} style={{ color: KERNEL_TEXT[v] }} data-variant={v}>
                {KERNEL_LABEL[v]}
                {v === reference ? ' (reference)' : ''}
              </th>
            ))}
            {pair && <th scope="col">after vs before</th>}
            <th scope="col">published</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(({ m, pubs, keep }) => (
            <tr key={m.name} data-testid={`metric-${m.name}`} data-differs={keep} hidden={!all && !keep}>
              <th scope="row" title={`${m.name}: ${m.help}`}>
                {labelOf(info, m)}
                <div className="metric-id">{m.name}</div>
              </th>
              {shown.map((v) => (
                <td key={v} className={`num${dim(emphasis, v) ? ' col-dim' : ''}`} data-variant={v}>
                  {runs[v] ? (
                    <>
                      <span className="val">
                        <span data-testid={`cell-${v}-${m.name}`}>{fmtNum(runs[v]?.metrics[m.name])}</span>
                        <span className="unit"> {fmtUnit(m.unit)}</span>
                      </span>{' '}
                      <Tag kind="simulated" title="simulated by this run" />
                    </>
                  ) : (
                    '–'
                  )}
                </td>
              ))}
              {pair && (
                <td className="num" data-testid={`change-${m.name}`} title={noisy(m.name) ? 'one run of a noisy process: its direction is read from the medians over the seeds' : undefined}>
                  {changeText(m, runs, noisy(m.name), spread)}
                </td>
              )}
              <td className="pub">
                {pubs.length === 0 ? (
                  <span className="muted">–</span>
                ) : (
                  pubs.map(({ v, m: { row: r, differs: d } }, i) => {
                    const sim = runs[v]?.metrics[m.name];
                    const exact = d.length === 0;
                    return (
                      <div key={i} className={exact ? '' : 'pub-other'} data-testid={`published-${v}-${m.name}`} data-exact={exact}>
                        <span className="num" style={{ color: KERNEL_TEXT[v] }}>
                          {fmtNum(r.value)}
                        </span>{' '}
                        <Tag kind="published" title={r.source} /> <span className="source">{r.source}</span>
                        {exact && sim !== undefined && r.noisy && (
                          <span className="muted" title="the published figure is one run of a noisy quantity: it is judged against the spread of 20 seeds">
                            {' '}
                            (sim {fmtPct(relError(sim, r.value))}; one run of a noisy quantity)
                          </span>
                        )}
                        {exact && sim !== undefined && !r.noisy && (
                          <span className={Math.abs(relError(sim, r.value)) <= r.tolerance ? 'err-ok' : 'err-bad'}>
                            {' '}
                            (sim {fmtPct(relError(sim, r.value))})
                          </span>
                        )}
                        {!exact && <span className="muted"> (compared at the default {d.join(', ')}; this run differs)</span>}
                      </div>
                    );
                  })
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {hidden === rows.length && !all && <p className="muted">All {rows.length} metrics are the same in both kernels.</p>}
      {hidden > 0 && (
        <button type="button" className="btn-quiet show-all" onClick={() => setAll((x) => !x)} aria-expanded={all} data-testid="metrics-show-all">
          {all ? `Show only the rows that differ` : `Show all ${rows.length} metrics (${hidden} the same in both kernels)`}
        </button>
      )}
    </div>
  );
}

/**
 * The sweeps the experiment's view declares (views/registry.ts), run here:
 * the points and their runs side by side on the engine's pool, the rows handed
 * to the view with run / stop. A sweep whose view state says it was run
 * (v.sweep=1 in a link) runs by itself.
 */
function useViewSweeps(info: ExperimentInfo, params: Record<string, string>, seed: number, view?: Record<string, string>, onView?: ViewProps['onView']): Record<string, SweepHandle<unknown>> {
  const ctx: SweepContext = { info, params, seed };
  const defs: SweepDef<unknown, unknown>[] = sweepsFor(info.name).map((s) => ({
    id: `${info.name}:${s.id}`,
    setting: JSON.stringify(s.setting ? s.setting(ctx) : [params, seed]),
    points: s.points(ctx),
    runPoint: async (p, onRun) => {
      const results: RunResult[] = await Promise.all(s.runs(p, ctx).map((spec) => tracked(engine.run(spec, undefined, undefined, { priority: BACKGROUND }), onRun)));
      return s.row(p, results, ctx);
    },
    autoRun: s.viewKey !== undefined && view?.[s.viewKey[0]] === s.viewKey[1],
    onStart: () => {
      if (s.viewKey) onView?.({ [s.viewKey[0]]: s.viewKey[1] });
    },
  }));
  const handles = useSweeps(defs);
  return Object.fromEntries(sweepsFor(info.name).map((s) => [s.id, handles[`${info.name}:${s.id}`]!]));
}

export function Results({ info, params, variants, runs, emphasis, stale, running, previous, seed, onParams, reference, view, onView, controls, spread, pictures }: Props) {
  const View = viewFor(info.name);
  const sweeps = useViewSweeps(info, params, seed ?? 1, view, onView);
  const any = variants.some((v) => runs[v]);
  const pair = variants.includes('before') && variants.includes('after');
  const label = (m: MetricInfo): string => labelOf(info, m);
  return (
    <div className={`results${stale ? ' results-stale' : ''}`} data-testid="results" data-running={running ? '1' : '0'}>
      {pair && any && <Headline info={info} params={params} runs={runs} metrics={headlineOf(info)} label={label} reference={reference} running={running} noisy={noisyOf(info, params)} spread={spread} seed={seed} />}
      {!pair && (
        <div className={`panels panels-${variants.length}`}>
          {variants.map((v) => (
            <Panel key={v} info={info} variant={v} run={runs[v]} running={running} />
          ))}
        </div>
      )}
      {pair && !any && <div className="panel-empty muted">{running ? 'Running…' : <>Not run yet: press Run (<kbd>r</kbd>).</>}</div>}
      {controls}
      {pictures}
      {View && any && (
        <View info={info} params={params} runs={runs} emphasis={emphasis} previous={previous} seed={seed} onParams={onParams} reference={reference} view={view} onView={onView} sweeps={sweeps} spread={spread} />
      )}
      {any && (
        <>
          {pair && (
            <div className="run-feet">
              {variants.map((v) => {
                const r = runs[v];
                return r ? <RunFoot key={v} run={r} variant={v} /> : null;
              })}
            </div>
          )}
          <div className="table-head prose">
            <p className="legend muted">
              <Tag kind="simulated" /> simulated by this run · <Tag kind="published" /> published (hover for the source) · <Tag kind="fitted" /> a constant fitted to measurements ·{' '}
              <Tag kind="measured" /> measured on real hardware
            </p>
            <RunExport info={info} params={params} seed={seed ?? 1} runs={runs} />
          </div>
          <MetricsTable info={info} params={params} variants={variants} runs={runs} emphasis={emphasis} reference={reference} spread={spread} />
        </>
      )}
    </div>
  );
}
