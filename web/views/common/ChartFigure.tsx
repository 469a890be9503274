/*
 * ChartFigure.tsx - the frame every chart of the lab sits in: a one-line
 * title, the chart(s), a legend, an optional note (prose: hidden in focus
 * mode), and buttons that export the figure's charts as SVG or PNG. The
 * width the charts should lay out at is measured here and handed to the
 * children with the chart theme.
 */
import { useRef, useState, type ReactNode } from 'react';
import { useWidth } from '../common/useWidth';
import { downloadPng, downloadSvg, figureFrame } from './export';
import { Legend, type LegendItem } from './Legend';
import { useChartTheme, type ChartTheme } from './theme';

interface Props {
  /** one line: what the chart shows */
  title: ReactNode;
  /** file name for the export, without extension ("qgroup-commits") */
  exportName: string;
  testId?: string;
  legend?: LegendItem[];
  /** a sentence or two on how to read it; prose, hidden in focus mode */
  note?: ReactNode;
  /** controls beside the title (a sweep's Run button) */
  actions?: ReactNode;
  className?: string;
  /** the figure's width before it is measured */
  fallbackWidth?: number;
  /** extra attributes for tests (data-state) */
  data?: Record<string, string>;
  children: (width: number, theme: ChartTheme) => ReactNode;
}

export function ChartFigure({ title, exportName, testId, legend, note, actions, className, fallbackWidth = 640, data, children }: Props) {
  const [box, width] = useWidth<HTMLDivElement>(fallbackWidth);
  const theme = useChartTheme();
  const fig = useRef<HTMLElement | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const charts = (): SVGSVGElement[] => [...(fig.current?.querySelectorAll<SVGSVGElement>('svg.chart') ?? [])];
  const dataAttrs = Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [`data-${k}`, v]));
  return (
    <figure ref={fig} className={`figure${className ? ` ${className}` : ''}`} data-testid={testId} {...dataAttrs}>
      <figcaption className="figure-head">
        <span className="chart-title">{title}</span>
        {actions}
        <span className="export chrome-export" aria-label="export this chart">
          <button type="button" className="btn-tiny" title="Download this chart as SVG" data-testid="export-svg" onClick={() => fig.current && downloadSvg(charts(), exportName, figureFrame(fig.current))}>
            SVG
          </button>
          <button
            type="button"
            className="btn-tiny"
            title="Download this chart as PNG (twice its size on screen)"
            data-testid="export-png"
            onClick={() => {
              setErr(null);
              downloadPng(charts(), exportName, fig.current ? figureFrame(fig.current) : undefined).catch((e: unknown) => setErr(e instanceof Error ? e.message : String(e)));
            }}
          >
            PNG
          </button>
        </span>
      </figcaption>
      {err && <p className="field-error">{err}</p>}
      <div ref={box} className="chart-box">
        {children(width, theme)}
      </div>
      {legend && <Legend items={legend} />}
      {note && <div className="chart-note prose muted">{note}</div>}
    </figure>
  );
}
