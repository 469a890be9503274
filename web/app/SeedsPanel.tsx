/*
 * SeedsPanel.tsx - "Run ×20": the page's setting over 20 consecutive seeds
 * (from the page's seed), each kernel, on the engine's pool of workers
 * (progress, Stop), then per metric a strip of dots per kernel
 * with the median and the 5-95% band, the published figure as a line
 * (web/model/seedStrip.ts). A seed draws what varies between two real runs
 * (engine/src/kernel/variation.def); with variation off, only what the
 * model draws per IO is left. The spread goes out as CSV or JSON.
 */
import { useState } from 'react';
import type { ExperimentInfo, RunResult, Variant } from '../engine/types';
import { publishedFor } from '../model/provenance';
import { layoutStrip } from '../model/seedStrip';
import { SpreadStrip } from '../views/common/SpreadStrip';
import { seedsCsv, seedsJson, spreadOf, valuesOf, varies, type SeedRuns } from '../model/spread';
import { ChartFigure } from '../views/common/ChartFigure';
import { download } from '../views/common/export';
import { GHOST, KERNEL_COLOR, KERNEL_SHORT, KERNEL_TEXT, MEASURED } from '../views/common/palette';
import { fmtNum, fmtUnit } from '../model/format';
import { headlineOf, labelOf } from '../views/registry';
import { engine } from './engine';
import { BACKGROUND } from '../engine/pool';
import { SweepButton } from '../views/common/SweepButton';
import { tracked, useSweep, type SweepHandle } from './useSweep';

export const SEEDS = 20;
/** Strips drawn before "show all" (the rest are in the table). */
const FIRST = 4;

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  seed: number;
  variation: string;
  disabled?: boolean;
  /** the runs over the seeds (useSeeds, owned by the page) */
  sweep: SweepHandle<SeedRuns>;
}

/** The published figure of a metric for a kernel, at exactly this setting. */
function publishedValue(info: ExperimentInfo, metric: string, v: Variant, params: Record<string, string>): number | undefined {
  return publishedFor(info.published, metric, v, info.params, params).find((p) => p.differs.length === 0)?.row.value;
}

/** One chart per metric: each kernel's runs over the seeds, on one axis. */
export function SeedStrips({ info, params, rows, metrics, exportName }: { info: ExperimentInfo; params: Record<string, string>; rows: readonly SeedRuns[]; metrics: string[]; exportName: string }) {
  const vs = info.variants.filter((v) => rows.some((r) => r.runs[v]));
  const label = (m: string): string => labelOf(info, m);
  return (
    <>
      {metrics.map((name) => {
        const m = info.metricInfo.find((x) => x.name === name);
        if (!m) return null;
        return (
          <ChartFigure
            key={m.name}
            title={`${label(m.name)}: ${rows.length} runs per kernel`}
            exportName={`${exportName}-${m.name}`}
            testId={`seeds-${m.name}`}
            legend={[
              ...vs.map((v) => ({ label: `${KERNEL_SHORT[v]}: a dot per run, the band 5-95%, the bar the median`, color: KERNEL_COLOR[v] })),
              ...(vs.some((v) => publishedValue(info, m.name, v, params) !== undefined) ? [{ label: 'published (one run)', color: MEASURED, shape: 'dash' as const }] : []),
            ]}
          >
            {(width, theme) => (
              <SpreadStrip
                unit={m.unit}
                layout={layoutStrip(
                  vs.map((v) => ({
                    variant: v,
                    values: rows.map((r) => ({ seed: r.seed, value: r.runs[v]?.metrics[m.name] ?? NaN })).filter((x) => Number.isFinite(x.value)),
                    published: publishedValue(info, m.name, v, params),
                  })),
                  width,
                  theme.fontPx,
                  label(m.name),
                  fmtUnit(m.unit),
                )}
              />
            )}
          </ChartFigure>
        );
      })}
    </>
  );
}

/**
 * The page's setting over SEEDS consecutive seeds from the page's, each
 * kernel, side by side on the engine's pool. The page owns it: its rows
 * feed this panel and the headline's spread of a noisy figure alike.
 * `auto`: start by itself once the page's run is done (a headline that is
 * one run of a noisy process is never shown alone).
 */
export function useSeeds(info: ExperimentInfo, params: Record<string, string>, seed: number, variation: string, auto = false): SweepHandle<SeedRuns> {
  return useSweep<number, SeedRuns>({
    id: `seeds:${info.name}`,
    points: Array.from({ length: SEEDS }, (_, i) => seed + i),
    runPoint: async (s, onRun) => {
      // the kernels side by side on the pool, behind the page's own runs
      const done = await Promise.all(info.variants.map((variant) => tracked(engine.run({ experiment: info.name, variant, params, seed: s, variation }, undefined, undefined, { priority: BACKGROUND }), onRun)));
      const runs: Partial<Record<Variant, RunResult>> = Object.fromEntries(info.variants.map((v, i) => [v, done[i]]));
      return { seed: s, runs };
    },
    setting: JSON.stringify([params, seed, variation]),
    autoRun: auto,
  });
}

export function SeedsPanel({ info, params, seed, variation, disabled, sweep }: Props) {
  const { rows, state, err, run, stop } = sweep;
  const [all, setAll] = useState(false);
  const label = (m: string): string => labelOf(info, m);
  const vs = info.variants;
  // drawn: what has a published figure here, and what varies over the
  // seeds; published and headline metrics first (a constant is a table row)
  const published = new Set(info.published.filter((p) => vs.some((v) => publishedValue(info, p.metric, v, params) !== undefined)).map((p) => p.metric));
  const rank = (m: string): number => (published.has(m) ? 0 : headlineOf(info).some((h) => h.name === m) ? 1 : 2);
  const order = [...info.metricInfo].sort((a, b) => rank(a.name) - rank(b.name));
  const drawn = order.filter((m) => published.has(m.name) || varies(rows, vs, m.name));
  const shown = all ? drawn : drawn.slice(0, FIRST);
  const name = `${info.name}-seeds${seed}-${seed + SEEDS - 1}`;
  return (
    <section className="seeds-panel" data-testid="seeds-panel" data-state={state} data-done={rows.length}>
      <h2 className="seeds-title">Over {SEEDS} runs</h2>
      <div className="seeds-head">
        <SweepButton state={state} done={rows.length} total={SEEDS} label={`Run ×${SEEDS}`} testId="run-seeds" onRun={() => (disabled ? undefined : run())} onStop={stop} />
        {state === 'running' && (
          <div className="progress" role="progressbar" aria-label="seeds done" aria-valuemin={0} aria-valuemax={SEEDS} aria-valuenow={rows.length} data-testid="seeds-progress">
            <div className="progress-fill" style={{ width: `${(100 * rows.length) / SEEDS}%` }} />
          </div>
        )}
        <span className="muted prose">
          {rows.length === 0
            ? `seeds ${seed}-${seed + SEEDS - 1}, variation ${variation}: what a second run could give`
            : `${rows.length} of ${SEEDS} seeds (${seed}-${seed + rows.length - 1}), variation ${variation}`}
        </span>
        {rows.length > 0 && state !== 'running' && (
          <span className="export" aria-label="export the runs over the seeds">
            <button type="button" className="btn-tiny" data-testid="seeds-csv" title="Download each metric's spread and every seed's value as CSV" onClick={() => download(`${name}.csv`, new Blob([seedsCsv(info, rows, label)], { type: 'text/csv' }))}>
              CSV
            </button>
            <button type="button" className="btn-tiny" data-testid="seeds-json" title="Download the spreads (as lab run --seeds) and every seed's value as JSON" onClick={() => download(`${name}.json`, new Blob([seedsJson(info, params, variation, rows)], { type: 'application/json' }))}>
              JSON
            </button>
          </span>
        )}
      </div>
      {err && <p className="field-error">{err}</p>}
      {rows.length > 0 && <SeedStrips info={info} params={params} rows={rows} metrics={shown.map((m) => m.name)} exportName={name} />}
      {rows.length > 0 && drawn.length > FIRST && (
        <button type="button" className="btn-quiet" onClick={() => setAll((x) => !x)} aria-expanded={all} data-testid="seeds-show-all">
          {all ? `Show the first ${FIRST}` : `Show all ${drawn.length} metrics that vary`}
        </button>
      )}
      {rows.length > 0 && (
        <table className="metrics seeds-table" data-testid="seeds-table">
          <thead>
            <tr>
              <th scope="col">metric</th>
              {vs.map((v) => (
                <th key={v} scope="col" style={{ color: KERNEL_TEXT[v] }}>
                  {KERNEL_SHORT[v]}: median [5%, 95%]
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {info.metricInfo.map((m) => (
              <tr key={m.name} data-testid={`seeds-row-${m.name}`}>
                <th scope="row" title={m.name}>
                  {label(m.name)}
                </th>
                {vs.map((v) => {
                  const s = spreadOf(valuesOf(rows, v, m.name));
                  return (
                    <td key={v} className="num" style={s && s.sd === 0 ? { color: GHOST } : undefined}>
                      {s ? `${fmtNum(s.p50)} [${fmtNum(s.p5)}, ${fmtNum(s.p95)}]` : '–'}
                      {s ? <span className="unit"> {fmtUnit(m.unit)}</span> : null}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
