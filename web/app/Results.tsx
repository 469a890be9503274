/*
 * Results.tsx - what a finished run shows: the experiment's own picture
 * (from the view registry), one panel per variant with its headline numbers,
 * and the metrics table where every number says where it comes from.
 */
import { Fragment } from 'react';
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import { fmtChange, fmtNs, fmtNum, fmtPct, fmtUnit } from '../model/format';
import { publishedFor, relError } from '../model/provenance';
import type { Emphasis } from '../model/urlState';
import { viewFor } from '../views/registry';
import { VARIANT_COLOR, VARIANT_LABEL, type PreviousRun } from '../views/types';

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  variants: Variant[];
  runs: Partial<Record<Variant, RunResult>>;
  emphasis: Emphasis;
  stale: boolean;
  previous?: PreviousRun;
  seed?: number;
  onParams?: (params: Record<string, string>) => void;
}

const dim = (emphasis: Emphasis, v: Variant): boolean => emphasis !== 'none' && v !== 'base' && v !== emphasis;

export function Tag({ kind, title }: { kind: 'simulated' | 'published' | 'fitted' | 'measured'; title?: string }) {
  const short = { simulated: 'sim', published: 'pub', fitted: 'fit', measured: 'meas' }[kind];
  return (
    <span className={`tag tag-${kind}`} title={title ?? kind}>
      {short}
    </span>
  );
}

function Panel({ info, variant, run, emphasis }: { info: ExperimentInfo; variant: Variant; run: RunResult | undefined; emphasis: Emphasis }) {
  const head = info.metricInfo.slice(0, 3);
  return (
    <section
      className={`panel${dim(emphasis, variant) ? ' panel-dim' : ''}`}
      style={{ borderTopColor: VARIANT_COLOR[variant] }}
      data-testid={`panel-${variant}`}
      aria-label={VARIANT_LABEL[variant]}
    >
      <h3 style={{ color: VARIANT_COLOR[variant] }}>{VARIANT_LABEL[variant]}</h3>
      {run ? (
        <>
          <div className="headline">
            {head.map((m) => (
              <div key={m.name} className="headline-item">
                <div className="headline-value" data-testid={`value-${variant}-${m.name}`}>
                  {fmtNum(run.metrics[m.name])}
                  <span className="headline-unit"> {fmtUnit(m.unit)}</span>
                </div>
                <div className="headline-label">{m.name}</div>
              </div>
            ))}
          </div>
          <div className="panel-foot muted">
            {fmtNs(run.simNs)} simulated · {fmtNum(run.events)} events · {fmtNum(run.wallMs)} ms on this computer
          </div>
        </>
      ) : (
        <div className="panel-empty muted">Not run yet: press Run (<kbd>r</kbd>).</div>
      )}
    </section>
  );
}

/** A snake_case name that may wrap after its underscores (not mid-word) in a narrow column. */
function breakAfterUnderscores(name: string) {
  const parts = name.split('_');
  return parts.map((p, i) => (
    <Fragment key={i}>
      {p}
      {i < parts.length - 1 && (
        <>
          _<wbr />
        </>
      )}
    </Fragment>
  ));
}

export function MetricsTable({ info, params, variants, runs, emphasis }: Omit<Props, 'stale' | 'onParams' | 'previous'>) {
  const pair = variants.includes('before') && variants.includes('after');
  return (
    // A before/after table with its published column can be wider than a
    // lesson's right-hand column: it scrolls there instead of widening the page.
    <div className="table-scroll">
      <table className="metrics" data-testid="metrics">
        <thead>
          <tr>
            <th scope="col">metric</th>
            {variants.map((v) => (
              <th scope="col" key={v} className={dim(emphasis, v) ? 'col-dim' : ''} style={{ color: VARIANT_COLOR[v] }}>
                {VARIANT_LABEL[v]}
              </th>
            ))}
            {pair && <th scope="col">after vs before</th>}
            <th scope="col">published</th>
          </tr>
        </thead>
        <tbody>
          {info.metricInfo.map((m) => {
            const pubs = variants.flatMap((v) => publishedFor(info.published, m.name, v, info.params, params).map((pm) => ({ v, m: pm })));
            return (
              <tr key={m.name} data-testid={`metric-${m.name}`}>
                <th scope="row" title={m.help}>
                  {breakAfterUnderscores(m.name)}
                  <div className="metric-help">{m.help}</div>
                </th>
                {variants.map((v) => (
                  <td key={v} className={`num${dim(emphasis, v) ? ' col-dim' : ''}`}>
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
                {pair && <td className="num">{fmtChange(runs.before?.metrics[m.name], runs.after?.metrics[m.name])}</td>}
                <td className="pub">
                  {pubs.length === 0 ? (
                    <span className="muted">–</span>
                  ) : (
                    pubs.map(({ v, m: { row: r, differs } }, i) => {
                      const sim = runs[v]?.metrics[m.name];
                      const exact = differs.length === 0;
                      return (
                        <div key={i} className={exact ? '' : 'pub-other'} data-testid={`published-${v}-${m.name}`} data-exact={exact}>
                          <span className="num" style={{ color: VARIANT_COLOR[v] }}>
                            {fmtNum(r.value)}
                          </span>{' '}
                          <Tag kind="published" title={r.source} /> <span className="source">{r.source}</span>
                          {exact && sim !== undefined && (
                            <span className={Math.abs(relError(sim, r.value)) <= r.tolerance ? 'err-ok' : 'err-bad'}>
                              {' '}
                              (sim {fmtPct(relError(sim, r.value))})
                            </span>
                          )}
                          {!exact && <span className="muted"> (compared at the default {differs.join(', ')}; this run differs)</span>}
                        </div>
                      );
                    })
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

export function Results({ info, params, variants, runs, emphasis, stale, previous, seed, onParams }: Props) {
  const View = viewFor(info.name);
  const any = variants.some((v) => runs[v]);
  return (
    <div className={`results${stale ? ' results-stale' : ''}`} data-testid="results">
      {View && any && <View info={info} params={params} runs={runs} emphasis={emphasis} previous={previous} seed={seed} onParams={onParams} />}
      <div className={`panels panels-${variants.length}`}>
        {variants.map((v) => (
          <Panel key={v} info={info} variant={v} run={runs[v]} emphasis={emphasis} />
        ))}
      </div>
      {any && (
        <>
          <p className="legend muted">
            <Tag kind="simulated" /> simulated by this run · <Tag kind="published" /> published (hover for the source) · <Tag kind="fitted" /> a constant fitted to
            measurements · <Tag kind="measured" /> measured on real hardware
          </p>
          <MetricsTable info={info} params={params} variants={variants} runs={runs} emphasis={emphasis} />
        </>
      )}
    </div>
  );
}
