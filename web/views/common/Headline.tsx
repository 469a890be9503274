/*
 * Headline.tsx - the first thing an experiment page shows: its headline
 * figure, before against after, as two bars on one scale with the values
 * at their ends, the published figures as black diamonds, and the change
 * in words ("4.07× less"). A kernel that is only a pinned reference (a
 * lesson step runs the other) is drawn hollow and says so. The experiment's
 * other headline numbers follow in one line. Layout is pure
 * (layoutHeadline); the component draws it.
 */
import { scaleLinear } from 'd3-scale';
import type { ExperimentInfo, MetricInfo, RunResult, Variant } from '../../engine/types';
import { publishedFor } from '../../model/provenance';
import { axisTitle, labelWidth, marginsFor, scaleTicks, type ChartFrame } from '../../model/axis';
import { Axes } from './Axes';
import { ChartFigure } from './ChartFigure';
import { fmtChange, fmtNum, fmtQty, fmtUnit, pickTimeUnit } from '../../model/format';
import { KERNEL_COLOR, KERNEL_LABEL, KERNEL_SHORT, KERNEL_TEXT, MEASURED } from './palette';
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
  published: { x: number; value: number; source: string }[];
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
  values: { variant: Variant; value: number; published: { value: number; source: string }[] }[],
  width: number,
  fontPx: number,
  rowPx = fontPx * 2.6,
): HeadlineLayout {
  const all = values.flatMap((v) => [v.value, ...v.published.map((p) => p.value)]);
  const baseMs = fmtUnit(m.unit) === 's' ? 1000 : 1;
  const us = unitScale(m, Math.max(...all.filter(Number.isFinite), 0) * baseMs);
  const k = baseMs / us.per; // metric's unit -> drawn unit
  const labels = values.map((v) => KERNEL_SHORT[v.variant]);
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
    const published = v.published.map((p) => ({ x: x(p.value * k), value: p.value, source: p.source }));
    const inside = x1 - x0 >= w + fontPx;
    // outside: just after the bar, or after a diamond that would sit on the label
    const hit = published.filter((p) => p.x > x1 - 8 && p.x < x1 + w + fontPx).map((p) => p.x + 9);
    // inside: end just before the bar's end, or before a diamond sitting on that stretch
    const near = published.filter((p) => p.x > x1 - w - fontPx && p.x < x1 + 9).map((p) => p.x - 9);
    const labelX = inside ? Math.min(x1, ...near) - fontPx * 0.4 : Math.max(x1, ...hit) + fontPx * 0.4;
    return { variant: v.variant, value: v.value, y: margin.top + rowPx * i + rowPx * 0.15, h: rowPx * 0.7, x0, x1, label, labelX, labelInside: inside, published };
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
}

export function Headline({ info, params, runs, metrics, label, reference, running }: Props) {
  const head = metrics[0];
  const variants = (['before', 'after'] as Variant[]).filter((v) => info.variants.includes(v) && runs[v]);
  if (!head || variants.length === 0) return null;
  const rows = variants.map((v) => ({
    variant: v,
    value: runs[v]?.metrics[head.name] ?? NaN,
    published: v === reference ? [] : publishedFor(info.published, head.name, v, info.params, params).filter((p) => p.differs.length === 0).map((p) => ({ value: p.row.value, source: p.row.source })),
  }));
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
        </>
      }
      legend={rows.some((r) => r.published.length > 0) ? [{ label: 'published (the patch’s own measurement)', color: MEASURED, shape: 'diamond' }] : undefined}
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
                    {bar.published.map((p) => (
                      <g key={p.source} transform={`translate(${p.x},${bar.y + bar.h / 2})`} data-testid={`headline-published-${bar.variant}`}>
                        <rect x={-7} y={-7} width={14} height={14} transform="rotate(45)" fill={MEASURED} stroke="#fff" strokeWidth={2} />
                        <title>{`published: ${fmtQty(p.value, head.unit)} (${p.source})`}</title>
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
