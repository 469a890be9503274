/*
 * Headline.tsx - the first thing an experiment page shows: its headline
 * figure, before against after, as two bars on one scale with the values
 * at their ends, the published figures as black diamonds, and the change
 * in words ("4.07× less"). A kernel that is only a pinned reference (a
 * lesson step runs the other) is drawn hollow and says so. The experiment's
 * other headline numbers follow in one line. Where the published figure
 * is a mean over runs with its standard deviation (seed 003), the page's
 * Run ×20 is drawn on each kernel's row too: a dot per seed, the 5-95%
 * band, and the published mean ± one sd as a bracket around its diamond. Layout is pure
 * (layoutHeadline); the component draws it.
 */
import { scaleLinear } from 'd3-scale';
import type { ExperimentInfo, MetricInfo, RunResult, Variant } from '../../engine/types';
import { publishedFor } from '../../model/provenance';
import { axisTitle, labelWidth, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { Axes } from './Axes';
import { ChartFigure } from './ChartFigure';
import { fmtChange, fmtNum, fmtQty, fmtUnit, pickTimeUnit } from '../../model/format';
import { GHOST, KERNEL_COLOR, KERNEL_LABEL, KERNEL_SHORT, KERNEL_TEXT, MEASURED } from './palette';
import type { SeedRuns } from '../../model/spread';
import { SweepButton } from './SweepButton';
import type { SweepState } from '../types';

/** The legend's swatch for the seeds' dots: neither kernel's colour alone. */
const GHOST_DOT = GHOST;
import { pairDomain } from '../../model/scales';

export interface HeadlineBar {
  variant: Variant;
  value: number;
  y: number;
  h: number;
  x0: number;
  x1: number;
  label: string;
  /** where the value label goes: inside the bar's end (white) when it fits, else after it, clear of a diamond */
  labelX: number;
  labelInside: boolean;
  published: { x: number; value: number; source: string; sd?: { x0: number; x1: number; value: number; runs: number } }[];
  /** the page's Run ×20, when given: a dot per seed and the 5-95% band,
   * on a strip under the bar (y), where the published marks go too */
  seeds?: { dots: { x: number; seed: number; value: number }[]; band: { x0: number; x1: number } | null; n: number; y: number; h: number };
  /** where the published marks sit: the bar's middle, or the seeds' strip */
  markY: number;
}

export interface HeadlineLayout extends ChartFrame {
  bars: HeadlineBar[];
  /** the unit the x axis is drawn in */
  unit: string;
}

/** Time metrics are drawn in the unit that reads best for the larger value. */
function unitScale(m: MetricInfo, max: number): { unit: string; per: number } {
  const u = fmtUnit(m.unit);
  if (u === 'ms') return pickTimeUnit(max);
  if (u === 's') return max < 10 ? pickTimeUnit(max * 1000) : { unit: 's', per: 1000 };
  return { unit: u, per: 1 };
}

/**
 * Horizontal bars, one per kernel, on one x scale from 0 (pairDomain of
 * every value drawn, published ones included), a row each; the label
 * column on the left is the y axis.
 */
export function layoutHeadline(
  m: MetricInfo,
  values: {
    variant: Variant;
    value: number;
    published: { value: number; source: string; sd?: number; runs?: number }[];
    seeds?: { seed: number; value: number }[];
  }[],
  width: number,
  fontPx: number,
  rowPx = fontPx * 2.6,
): HeadlineLayout {
  const all = values.flatMap((v) => [
    v.value,
    ...v.published.flatMap((p) => (p.sd ? [p.value - p.sd, p.value + p.sd] : [p.value])),
    ...(v.seeds ?? []).map((d) => d.value),
  ]);
  const baseMs = fmtUnit(m.unit) === 's' ? 1000 : 1;
  const us = unitScale(m, Math.max(...all.filter(Number.isFinite), 0) * baseMs);
  const k = baseMs / us.per; // metric's unit -> drawn unit
  const labels = values.map((v) => KERNEL_SHORT[v.variant]);
  // with the seeds drawn, each row is the bar over a strip of its seeds
  const strip = values.some((v) => v.seeds && v.seeds.length > 0);
  if (strip) rowPx *= 1.6;
  const texts = values.map((v) => (Number.isFinite(v.value) ? `${fmtNum(v.value * k)}${us.unit ? ` ${us.unit}` : ''}` : '–'));
  const valuePx = fontPx * 1.15;
  // room on the right for the longest value label, drawn after the longest bar
  const right = Math.round(Math.max(...texts.map((t) => labelWidth(t, valuePx))) + fontPx);
  const margin = marginsFor(fontPx, labels, { yTitle: false, top: Math.round(fontPx * 0.5), right });
  const height = Math.round(margin.top + margin.bottom + rowPx * values.length);
  const x = scaleLinear()
    .domain(pairDomain(all.map((v) => v * k)))
    .range([margin.left, width - margin.right]);
  const bars = values.map((v, i) => {
    const x0 = x(0);
    const x1 = x(Number.isFinite(v.value) ? v.value * k : 0);
    const label = texts[i]!;
    const w = labelWidth(label, valuePx);
    const published = v.published.map((p) => ({
      x: x(p.value * k),
      value: p.value,
      source: p.source,
      ...(p.sd ? { sd: { x0: x((p.value - p.sd) * k), x1: x((p.value + p.sd) * k), value: p.sd, runs: p.runs ?? 0 } } : {}),
    }));
    const sv = (v.seeds ?? []).map((d) => d.value).sort((a, b) => a - b);
    // the 5-95% band as lab run --seeds computes it (linear between order statistics)
    const q = (f: number): number => {
      const pos = f * (sv.length - 1);
      const lo = Math.floor(pos);
      return sv[lo]! + (pos - lo) * ((sv[Math.min(lo + 1, sv.length - 1)] ?? sv[lo]!) - sv[lo]!);
    };
    const y = margin.top + rowPx * i + rowPx * (strip ? 0.06 : 0.15);
    const h = rowPx * (strip ? 0.4 : 0.7);
    const stripY = y + h + rowPx * 0.26;
    const seeds = v.seeds && v.seeds.length
      ? { dots: v.seeds.map((d) => ({ x: x(d.value * k), seed: d.seed, value: d.value })), band: sv.length > 1 ? { x0: x(q(0.05) * k), x1: x(q(0.95) * k) } : null, n: sv.length, y: stripY, h: rowPx * 0.3 }
      : undefined;
    const inside = x1 - x0 >= w + fontPx;
    // outside: just after the bar, or after a diamond that would sit on the label
    const onBar = strip ? [] : published; // with a strip, the marks sit on it, not on the bar
    const hit = onBar.filter((p) => p.x > x1 - 8 && p.x < x1 + w + fontPx).map((p) => p.x + 9);
    // inside: end just before the bar's end, or before a diamond sitting on that stretch
    const near = onBar.filter((p) => p.x > x1 - w - fontPx && p.x < x1 + 9).map((p) => p.x - 9);
    const labelX = inside ? Math.min(x1, ...near) - fontPx * 0.4 : Math.max(x1, ...hit) + fontPx * 0.4;
    return { variant: v.variant, value: v.value, y, h, x0, x1, label, labelX, labelInside: inside, published, markY: strip ? stripY : y + h / 2, ...(seeds ? { seeds } : {}) };
  });
  return {
    width,
    height,
    margin,
    fontPx,
    bars,
    xTicks: scaleTicks(x, 'x', width - margin.left - margin.right, fontPx),
    yTicks: [],
    unit: us.unit,
  };
}

interface Props {
  info: ExperimentInfo;
  params: Record<string, string>;
  runs: Partial<Record<Variant, RunResult>>;
  metrics: MetricInfo[];
  label: (m: MetricInfo) => string;
  reference?: Variant;
  running?: boolean;
  /** the page's Run ×20 (useSeeds), drawn on the rows when the headline's
   * published figure is a mean with its spread */
  seeds?: readonly SeedRuns[];
  /** the page's Run ×20 control (useSeeds), offered in the caption when
   * the published figure is a mean with its spread */
  seedsControl?: { state: SweepState; done: number; total: number; run: () => void; stop: () => void };
}

export function Headline({ info, params, runs, metrics, label, reference, running, seeds, seedsControl }: Props) {
  const head = metrics[0];
  const variants = (['before', 'after'] as Variant[]).filter((v) => info.variants.includes(v) && runs[v]);
  if (!head || variants.length === 0) return null;
  const rows = variants.map((v) => ({
    variant: v,
    value: runs[v]?.metrics[head.name] ?? NaN,
    published: v === reference ? [] : publishedFor(info.published, head.name, v, info.params, params).filter((p) => p.differs.length === 0).map((p) => ({ value: p.row.value, source: p.row.source, sd: p.row.sd, runs: p.row.runs })),
    ...(seeds && seeds.length ? { seeds: seeds.flatMap((r) => (Number.isFinite(r.runs[v]?.metrics[head.name]) ? [{ seed: r.seed, value: r.runs[v]!.metrics[head.name]! }] : [])) } : {}),
  }));
  const spreadDrawn = rows.some((r) => r.seeds && r.seeds.length > 0);
  const meanSd = rows.some((r) => r.published.some((p) => p.sd));
  // a figure published as a mean with its sd (at any setting): offer its spread
  const spreadRows = info.published.filter((r) => r.metric === head.name && r.sd && r.runs);
  const b = runs.before?.metrics[head.name];
  const a = runs.after?.metrics[head.name];
  const change = b !== undefined && a !== undefined ? fmtChange(b, a) : null;
  return (
    <ChartFigure
      testId="headline"
      className="headline-figure"
      exportName={`${info.name}-${head.name}`}
      data={{ metric: head.name, running: running ? '1' : '0' }}
      title={
        <>
          <span className="headline-metric" title={`${head.name}: ${head.help}`}>
            {label(head)}
          </span>
          {change && (
            <span className="headline-change" data-testid="headline-change">
              {' '}
              · after: {change}
            </span>
          )}
          {spreadRows.length > 0 && seedsControl && (
            <span className="headline-seeds">
              {' '}
              <SweepButton state={seedsControl.state} done={seedsControl.done} total={seedsControl.total} label={`Run ×${seedsControl.total}`} testId="headline-run-seeds" onRun={seedsControl.run} onStop={seedsControl.stop} />
              {!spreadDrawn && <span className="muted"> the published figures are means of {Math.max(...spreadRows.map((r) => r.runs ?? 0))} runs: draw each kernel's spread</span>}
            </span>
          )}
        </>
      }
      legend={
        rows.some((r) => r.published.length > 0) || spreadDrawn
          ? [
              ...(rows.some((r) => r.published.length > 0)
                ? [{ label: meanSd ? 'published mean ± one sd (the patch’s own runs)' : 'published (the patch’s own measurement)', color: MEASURED, shape: 'diamond' as const }]
                : []),
              ...(spreadDrawn ? [{ label: `under each bar: a dot per seed (Run ×${Math.max(...rows.map((r) => r.seeds?.length ?? 0))}), the band 5-95%`, color: GHOST_DOT }] : []),
            ]
          : undefined
      }
    >
      {(width, theme) => {
        // in focus mode the pair is the picture the room looks at: tall bars
        const L = layoutHeadline(head, rows, width, theme.fontPx, theme.focus ? theme.fontPx * 4.4 : theme.fontPx * 2.6);
        return (
          <>
            <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label={`${label(head)}: before and after`} data-testid="headline-chart">
              <Axes {...L} xGrid xTitle={axisTitle(label(head), L.unit)} />
              {L.bars.map((bar) => {
                const ref = bar.variant === reference;
                return (
                  <g key={bar.variant} data-variant={bar.variant} data-testid={`headline-bar-${bar.variant}`} data-value={bar.value}>
                    <text className="tick" x={L.margin.left - theme.fontPx * 0.45} y={bar.y + bar.h / 2} dy="0.35em" textAnchor="end" fontSize={theme.fontPx} fill={KERNEL_TEXT[bar.variant]} fontWeight={700}>
                      {KERNEL_SHORT[bar.variant]}
                    </text>
                    <rect
                      x={bar.x0}
                      y={bar.y}
                      width={Math.max(1, bar.x1 - bar.x0)}
                      height={bar.h}
                      fill={ref ? '#fff' : KERNEL_COLOR[bar.variant]}
                      stroke={KERNEL_COLOR[bar.variant]}
                      strokeWidth={ref ? 3 : 0}
                      strokeDasharray={ref ? '8 5' : undefined}
                    >
                      <title>{`${KERNEL_LABEL[bar.variant]}${ref ? ' (reference)' : ''}: ${bar.label}`}</title>
                    </rect>
                    <text
                      className={bar.labelInside && !ref ? 'value-label value-inside' : 'value-label'}
                      x={bar.labelX}
                      y={bar.y + bar.h / 2}
                      dy="0.35em"
                      textAnchor={bar.labelInside ? 'end' : 'start'}
                      fontSize={theme.fontPx * 1.15}
                      fontWeight={800}
                      data-testid={`headline-value-${bar.variant}`}
                    >
                      {bar.label}
                    </text>
                    {bar.seeds && (
                      <g data-testid={`headline-seeds-${bar.variant}`} data-n={bar.seeds.n}>
                        {bar.seeds.band && (
                          <rect x={bar.seeds.band.x0} y={bar.seeds.y - bar.seeds.h / 2} width={Math.max(1, bar.seeds.band.x1 - bar.seeds.band.x0)} height={bar.seeds.h} fill={KERNEL_COLOR[bar.variant]} fillOpacity={0.2}>
                            <title>{`5-95% of ${bar.seeds.n} seeds`}</title>
                          </rect>
                        )}
                        {bar.seeds.dots.map((d) => (
                          <circle key={d.seed} cx={d.x} cy={bar.seeds!.y} r={Math.max(3, theme.fontPx * 0.22)} fill={KERNEL_COLOR[bar.variant]} fillOpacity={0.75} className="headline-seed">
                            <title>{`seed ${d.seed}: ${fmtQty(d.value, head.unit)}`}</title>
                          </circle>
                        ))}
                      </g>
                    )}
                    {bar.published.map((p) => (
                      <g key={p.source} transform={`translate(${p.x},${bar.markY})`} data-testid={`headline-published-${bar.variant}`}>
                        {p.sd && (
                          <g data-testid={`headline-published-sd-${bar.variant}`} stroke={MEASURED} strokeWidth={2.5}>
                            <line x1={p.sd.x0 - p.x} x2={p.sd.x1 - p.x} y1={0} y2={0} />
                            <line x1={p.sd.x0 - p.x} x2={p.sd.x0 - p.x} y1={-theme.fontPx * 0.5} y2={theme.fontPx * 0.5} />
                            <line x1={p.sd.x1 - p.x} x2={p.sd.x1 - p.x} y1={-theme.fontPx * 0.5} y2={theme.fontPx * 0.5} />
                          </g>
                        )}
                        <rect x={-7} y={-7} width={14} height={14} transform="rotate(45)" fill={MEASURED} stroke="#fff" strokeWidth={2} />
                        <title>{p.sd ? `published: mean ${fmtQty(p.value, head.unit)} ± ${fmtQty(p.sd.value, head.unit)} (one sd over ${p.sd.runs} runs; ${p.source})` : `published: ${fmtQty(p.value, head.unit)} (${p.source})`}</title>
                      </g>
                    ))}
                  </g>
                );
              })}
            </svg>
            {metrics.length > 1 && (
              <p className="headline-more">
                {metrics.slice(1).map((m) => (
                  <span key={m.name} className="headline-pair" title={`${m.name}: ${m.help}`}>
                    {label(m)}:{' '}
                    {variants.map((v, i) => (
                      <span key={v}>
                        {i > 0 && ' → '}
                        <strong style={{ color: KERNEL_TEXT[v] }} data-variant={v} data-testid={`value-${v}-${m.name}`}>
                          {fmtQty(runs[v]?.metrics[m.name], m.unit)}
                        </strong>
                      </span>
                    ))}
                  </span>
                ))}
              </p>
            )}
          </>
        );
      }}
    </ChartFigure>
  );
}
