/*
 * Headline.tsx - the first thing an experiment page shows: its headline
 * figure, before against after, as two bars on one scale with the values
 * at their ends, the published figures as black diamonds, and the change
 * in words ("4.07× less"). A kernel that is only a pinned reference (a
 * lesson step runs the other) is drawn hollow and says so. The experiment's
 * other headline numbers follow.
 *
 * The page's one Run ×20 (useSeeds: 20 seeds from the page's) is drawn
 * under each bar as a strip where the figure needs its spread: a dot per
 * seed, this run's outlined, and the 5-95% band. Two figures need it:
 * - one run of a noisy process (a maximum latency): never shown alone.
 *   The seeds start by themselves; once SPREAD_MIN have run, the bars are
 *   their medians and the change in words is the medians'; until then the
 *   page says it is one run and states no direction.
 * - a published mean over runs with its standard deviation (receive): the
 *   published mean ± one sd is a bracket on the strip, beside the model's
 *   own spread; the bars stay this run's (Run ×20 from the caption).
 * The other noisy headline figures are drawn as strips over the seeds (a
 * dot per run, band, median, published line).
 * Layout is pure (layoutHeadline, model/seedStrip.ts); the component draws it.
 */
import { scaleLinear } from 'd3-scale';
import type { ExperimentInfo, MetricInfo, RunResult, Variant } from '../../engine/types';
import { seedSpread, SPREAD_MIN } from '../../model/noisy';
import { layoutStrip } from '../../model/seedStrip';
import { publishedFor } from '../../model/provenance';
import type { SeedSpread } from '../types';
import { SpreadStrip } from './SpreadStrip';
import { axisTitle, labelWidth, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { Axes } from './Axes';
import { ChartFigure } from './ChartFigure';
import { fmtChange, fmtNum, fmtQty, fmtUnit, pickTimeUnit } from '../../model/format';
import { GHOST, KERNEL_COLOR, KERNEL_LABEL, KERNEL_SHORT, KERNEL_TEXT, MEASURED } from './palette';
import { quantileSorted } from '../../model/spread';
import { SweepButton } from './SweepButton';
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
  /** where the published marks sit: the bar's middle, or the seeds' strip */
  markY: number;
  /** the page's runs over the seeds, a strip under the bar: a dot per seed
   * (this run's outlined), the 5-95% band once two have run */
  seeds?: { dots: { x: number; seed: number; value: number; current: boolean }[]; band: { x0: number; x1: number } | null; n: number; y: number; h: number };
  /** the bar is the seeds' median */
  median: boolean;
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
export interface HeadlineValue {
  variant: Variant;
  /** the bar: this run's value, or the median over the seeds (median set) */
  value: number;
  published: { value: number; source: string; sd?: number; runs?: number }[];
  /** the page's runs over the seeds, drawn as a strip under the bar */
  seeds?: { seed: number; value: number }[];
  /** the page's seed: its dot is outlined */
  current?: number;
  median?: boolean;
}

export function layoutHeadline(m: MetricInfo, values: HeadlineValue[], width: number, fontPx: number, rowPx = fontPx * 2.6): HeadlineLayout {
  const all = values.flatMap((v) => [
    v.value,
    ...v.published.flatMap((p) => (p.sd ? [p.value - p.sd, p.value + p.sd] : [p.value])),
    ...(v.seeds ?? []).map((d) => d.value),
  ]);
  const baseMs = fmtUnit(m.unit) === 's' ? 1000 : 1;
  const us = unitScale(m, Math.max(...all.filter(Number.isFinite), 0) * baseMs);
  const k = baseMs / us.per; // metric's unit -> drawn unit
  const labels = values.map((v) => KERNEL_SHORT[v.variant]);
  const texts = values.map((v) => (Number.isFinite(v.value) ? `${fmtNum(v.value * k)}${us.unit ? ` ${us.unit}` : ''}` : '–'));
  const valuePx = fontPx * 1.15;
  // room on the right for the longest value label, drawn after the longest bar
  const right = Math.round(Math.max(...texts.map((t) => labelWidth(t, valuePx))) + fontPx);
  const margin = marginsFor(fontPx, labels, { yTitle: false, top: Math.round(fontPx * 0.5), right });
  // with the seeds drawn, each row is the bar over a strip of its seeds
  const strip = values.some((v) => v.seeds && v.seeds.length > 0);
  if (strip) rowPx *= 1.6;
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
    const y = margin.top + rowPx * i + rowPx * (strip ? 0.06 : 0.15);
    const h = rowPx * (strip ? 0.4 : 0.7);
    const stripY = y + h + rowPx * 0.26;
    const sv = (v.seeds ?? []).map((d) => d.value).sort((a, b) => a - b);
    const seeds = sv.length
      ? {
          dots: v.seeds!.map((d) => ({ x: x(d.value * k), seed: d.seed, value: d.value, current: d.seed === v.current })),
          // the 5-95% band as lab run --seeds computes it
          band: sv.length > 1 ? { x0: x(quantileSorted(sv, 0.05) * k), x1: x(quantileSorted(sv, 0.95) * k) } : null,
          n: sv.length,
          y: stripY,
          h: rowPx * 0.3,
        }
      : undefined;
    const inside = x1 - x0 >= w + fontPx;
    const onBar = strip ? [] : published; // with a strip, the marks sit on it, not on the bar
    // outside: just after the bar, or after a diamond that would sit on the label
    const hit = onBar.filter((p) => p.x > x1 - 8 && p.x < x1 + w + fontPx).map((p) => p.x + 9);
    // inside: end just before the bar's end, or before a diamond sitting on that stretch
    const near = onBar.filter((p) => p.x > x1 - w - fontPx && p.x < x1 + 9).map((p) => p.x - 9);
    const labelX = inside ? Math.min(x1, ...near) - fontPx * 0.4 : Math.max(x1, ...hit) + fontPx * 0.4;
    return { variant: v.variant, value: v.value, y, h, x0, x1, label, labelX, labelInside: inside, published, markY: strip ? stripY : y + h / 2, ...(seeds ? { seeds } : {}), median: !!v.median };
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
  /** is a metric one run of a noisy process here (registry: noisyOf) */
  noisy?: (metric: string) => boolean;
  /** the page's runs over the seeds (useSeeds): a noisy figure's median and
   * band, a published mean's sd beside the model's spread */
  spread?: SeedSpread;
  /** the page's random seed: its dot among the seeds' */
  seed?: number;
}

/** Where the spread stands, for a noisy figure without one yet. */
function spreadStatus(spread: SeedSpread | undefined): string {
  if (spread?.state === 'running') return `one run of a noisy process; its spread over ${spread.total} runs: ${spread.rows.length} of ${spread.total} done`;
  if (!spread || !spread.run) return 'one run of a noisy process: its spread over 20 runs is on the experiment\'s page (Run ×20)';
  return `one run of a noisy process; run it ${spread.total} times for its spread`;
}

export function Headline({ info, params, runs, metrics, label, reference, running, noisy = () => false, spread, seed }: Props) {
  const head = metrics[0];
  const variants = (['before', 'after'] as Variant[]).filter((v) => info.variants.includes(v) && runs[v]);
  if (!head || variants.length === 0) return null;
  const headNoisy = noisy(head.name);
  const sp = (v: Variant, m: string) => (spread ? seedSpread(spread.rows, v, m) : null);
  const medians = headNoisy && variants.every((v) => v === reference || sp(v, head.name));
  const publishedOf = (v: Variant) =>
    v === reference
      ? []
      : publishedFor(info.published, head.name, v, info.params, params)
          .filter((p) => p.differs.length === 0)
          .map((p) => ({ value: p.row.value, source: p.row.source, sd: p.row.sd, runs: p.row.runs }));
  // a figure published as a mean with its sd (at any setting) is drawn beside the model's spread
  const sdRows = info.published.filter((r) => r.metric === head.name && r.sd && r.runs);
  const wantsSpread = headNoisy || sdRows.length > 0;
  const n = spread?.rows.length ?? 0;
  const rows: HeadlineValue[] = variants.map((v) => {
    const runValue = runs[v]?.metrics[head.name] ?? NaN;
    const s = medians && v !== reference ? sp(v, head.name) : null;
    const seeds = wantsSpread && v !== reference && spread ? spread.rows.flatMap((r) => (Number.isFinite(r.runs[v]?.metrics[head.name]) ? [{ seed: r.seed, value: r.runs[v]!.metrics[head.name]! }] : [])) : [];
    return {
      variant: v,
      value: s ? s.p50 : runValue,
      published: publishedOf(v),
      ...(seeds.length ? { seeds, ...(seed !== undefined ? { current: seed } : {}) } : {}),
      ...(s ? { median: true } : {}),
    };
  });
  const b = rows.find((r) => r.variant === 'before')?.value;
  const a = rows.find((r) => r.variant === 'after')?.value;
  // a noisy figure states a direction only from its medians
  const change = b !== undefined && a !== undefined && (!headNoisy || medians) ? fmtChange(b, a) : null;
  const stripDrawn = rows.some((r) => r.seeds && r.seeds.length > 0);
  const meanSd = rows.some((r) => r.published.some((p) => p.sd));
  const others = metrics.slice(1);
  const plain = others.filter((m) => !noisy(m.name));
  const noisyOthers = others.filter((m) => noisy(m.name));
  const legend = [
    ...(rows.some((r) => r.published.length > 0)
      ? [{ label: meanSd ? 'published mean ± one sd (the patch’s own runs)' : 'published (the patch’s own measurement)', color: MEASURED, shape: 'diamond' as const }]
      : []),
    ...(stripDrawn
      ? [
          {
            label: `under each bar: a dot per run over ${n} random seeds (${spread!.rows[0]?.seed ?? 1} to ${spread!.rows[n - 1]?.seed ?? n}), the band 5-95%${medians ? '; the bar is their median' : ''}`,
            color: GHOST,
            id: 'band',
          },
          { label: `this run (random seed ${seed ?? 1})`, color: '#000', shape: 'dot' as const, id: 'run' },
        ]
      : []),
  ];
  return (
    <ChartFigure
      testId="headline"
      className="headline-figure"
      exportName={`${info.name}-${head.name}`}
      data={{ metric: head.name, running: running ? '1' : '0', spread: headNoisy ? (medians ? 'median' : 'one-run') : stripDrawn ? 'seeds' : 'none' }}
      title={
        <>
          <span className="headline-metric" title={`${head.name}: ${head.help}`}>
            {label(head)}
          </span>
          {medians && <span className="headline-basis"> · median of {n} runs</span>}
          {change && (
            <span className="headline-change" data-testid="headline-change">
              {' '}
              · after: {change}
            </span>
          )}
          {headNoisy && !medians && (
            <span className="headline-basis" data-testid="headline-one-run">
              {' '}
              · {spreadStatus(spread)}
            </span>
          )}
          {wantsSpread && spread?.run && (
            <span className="headline-seeds">
              {' '}
              <SweepButton state={spread.state} done={n} total={spread.total} label={`Run ×${spread.total}`} testId="headline-run-seeds" onRun={spread.run} onStop={spread.stop ?? (() => {})} />
              {!stripDrawn && sdRows.length > 0 && <span className="muted"> the published figures are means of {Math.max(...sdRows.map((r) => r.runs ?? 0))} runs: draw each kernel&apos;s spread</span>}
            </span>
          )}
        </>
      }
      legend={legend.length ? legend : undefined}
    >
      {(width, theme) => {
        // in focus mode the pair is the picture the room looks at: tall bars
        const L = layoutHeadline(head, rows, width, theme.fontPx, theme.focus ? theme.fontPx * 4.4 : theme.fontPx * 2.6);
        const dotR = Math.max(3, theme.fontPx * 0.22);
        return (
          <>
            <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label={`${label(head)}: before and after`} data-testid="headline-chart">
              <Axes {...L} xGrid xTitle={axisTitle(label(head), L.unit)} />
              {L.bars.map((bar) => {
                const ref = bar.variant === reference;
                const cur = bar.seeds?.dots.find((d) => d.current);
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
                      <title>{`${KERNEL_LABEL[bar.variant]}${ref ? ' (reference)' : ''}: ${bar.median ? 'median ' : ''}${bar.label}`}</title>
                    </rect>
                    {bar.seeds && (
                      <g data-testid={`headline-seeds-${bar.variant}`} data-n={bar.seeds.n}>
                        {bar.seeds.band && (
                          <rect data-testid={`headline-band-${bar.variant}`} x={bar.seeds.band.x0} y={bar.seeds.y - bar.seeds.h / 2} width={Math.max(1, bar.seeds.band.x1 - bar.seeds.band.x0)} height={bar.seeds.h} fill={KERNEL_COLOR[bar.variant]} fillOpacity={0.2}>
                            <title>{`5-95% of ${bar.seeds.n} runs`}</title>
                          </rect>
                        )}
                        {bar.seeds.dots.map((d) => (
                          <circle key={d.seed} cx={d.x} cy={bar.seeds!.y} r={dotR} fill={KERNEL_COLOR[bar.variant]} fillOpacity={d.current ? 0 : 0.75} className="headline-seed">
                            <title>{`seed ${d.seed}: ${fmtQty(d.value, head.unit)}`}</title>
                          </circle>
                        ))}
                      </g>
                    )}
                    {cur && (
                      // this run, outlined on top of the others
                      <circle cx={cur.x} cy={bar.seeds!.y} r={dotR * 1.5} fill="#fff" stroke="#000" strokeWidth={2} data-testid={`headline-run-${bar.variant}`}>
                        <title>{`this run (random seed ${cur.seed}): ${fmtQty(cur.value, head.unit)}`}</title>
                      </circle>
                    )}
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
            {plain.length > 0 && (
              <p className="headline-more">
                {plain.map((m) => (
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
            {noisyOthers.length > 0 && (
              <NoisyOthers metrics={noisyOthers} info={info} params={params} runs={runs} variants={variants} label={label} spread={spread} seed={seed} width={width} fontPx={theme.fontPx} reference={reference} />
            )}
          </>
        );
      }}
    </ChartFigure>
  );
}

/**
 * The other headline figures that are one run of a noisy process: with the
 * seeds run, a strip each (medians and bands, the published line, this run
 * outlined) and the medians in words; without, this run's values marked as
 * one run, with no arrow between them.
 */
function NoisyOthers({ metrics, info, params, runs, variants, label, spread, seed, width, fontPx, reference }: {
  metrics: MetricInfo[];
  info: ExperimentInfo;
  params: Record<string, string>;
  runs: Partial<Record<Variant, RunResult>>;
  variants: Variant[];
  label: (m: MetricInfo) => string;
  spread?: SeedSpread;
  seed?: number;
  width: number;
  fontPx: number;
  reference?: Variant;
}) {
  const n = spread?.rows.length ?? 0;
  if (!spread || n < SPREAD_MIN)
    return (
      <p className="headline-more" data-testid="headline-noisy-one-run">
        {metrics.map((m) => (
          <span key={m.name} className="headline-pair" title={`${m.name}: ${m.help}`}>
            {label(m)}:{' '}
            {variants.map((v, i) => (
              <span key={v}>
                {i > 0 && ', '}
                {KERNEL_SHORT[v]}{' '}
                <strong style={{ color: KERNEL_TEXT[v] }} data-variant={v} data-testid={`value-${v}-${m.name}`}>
                  {fmtQty(runs[v]?.metrics[m.name], m.unit)}
                </strong>
              </span>
            ))}
          </span>
        ))}
        <span className="headline-pair muted">(each one run of a noisy process: {spreadStatus(spread).replace(/^one run of a noisy process[;:] /, '')})</span>
      </p>
    );
  // two strips a row where they fit
  const cols = width >= 760 ? 2 : 1;
  const w = Math.floor((width - (cols - 1) * fontPx) / cols);
  const pub = (m: string, v: Variant) => (v === reference ? undefined : publishedFor(info.published, m, v, info.params, params).find((p) => p.differs.length === 0)?.row.value);
  return (
    <div className="headline-strips" data-testid="headline-noisy-strips" style={{ display: 'grid', gridTemplateColumns: `repeat(${cols}, 1fr)`, gap: `0 ${fontPx}px` }}>
      {metrics.map((m) => {
        const meds = variants.map((v) => seedSpread(spread.rows, v, m.name)?.p50);
        const L = layoutStrip(
          variants.map((v) => ({
            variant: v,
            values: spread.rows.map((r) => ({ seed: r.seed, value: r.runs[v]?.metrics[m.name] ?? NaN })).filter((x) => Number.isFinite(x.value)),
            published: pub(m.name, v),
          })),
          w,
          fontPx,
          label(m),
          fmtUnit(m.unit),
        );
        return (
          <div key={m.name} data-testid={`headline-strip-${m.name}`}>
            <div className="headline-strip-title" title={`${m.name}: ${m.help}`}>
              {label(m)}, median of {n} runs:{' '}
              {variants.map((v, i) => (
                <span key={v}>
                  {i > 0 && ' → '}
                  <strong style={{ color: KERNEL_TEXT[v] }} data-variant={v} data-testid={`median-${v}-${m.name}`}>
                    {fmtQty(meds[i], m.unit)}
                  </strong>
                </span>
              ))}
            </div>
            <SpreadStrip layout={L} unit={m.unit} current={seed} />
          </div>
        );
      })}
    </div>
  );
}
