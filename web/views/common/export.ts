/*
 * export.ts - take a chart or a run out of the lab: a chart as a
 * standalone SVG (styles inlined, so it looks the same in a slide or a
 * paper) or as a PNG at twice its size, and a run as CSV (one row per
 * metric) or JSON (everything the engine returned). The string builders
 * are pure and unit-tested; download() is the only part that touches the
 * document.
 */
import type { ExperimentInfo, RunResult, Variant } from '../../engine/types';
import { labelWidth } from '../../model/axis';

/** Presentation properties copied from the computed style onto each element. */
const PROPS = ['fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity', 'fill-opacity', 'font-size', 'font-weight', 'font-family', 'paint-order', 'text-anchor', 'dominant-baseline'];

/** What an exported chart carries around its charts: the figure's title, its legend and where it came from. */
export interface ExportFrame {
  title: string;
  /** each legend item: its text and its swatch (an svg of the page's legend) or a glyph */
  legend: { text: string; swatch: SVGSVGElement | null; glyph?: string }[];
  /** the lab and the page it came from */
  footer: string;
}

/** Greedy word wrap by the charts' label-width estimate. */
export function wrapText(text: string, fontPx: number, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(/\s+/).filter(Boolean)) {
    const next = line ? `${line} ${w}` : w;
    if (line && labelWidth(next, fontPx) > maxWidth) {
      lines.push(line);
      line = w;
    } else line = next;
  }
  if (line) lines.push(line);
  return lines;
}

export const EXPORT_FONT = { title: 18, legend: 14, footer: 11, pad: 12, swatch: 30 };

/**
 * Where the frame's parts go in an export `width` px wide: the title's
 * lines above the charts (which take `chartsHeight`), the legend's items
 * flowing in rows below them, then the footer. Pure.
 */
export function exportLayout(frame: Pick<ExportFrame, 'title' | 'footer'> & { legend: { text: string }[] }, width: number, chartsHeight: number) {
  const F = EXPORT_FONT;
  const inner = Math.max(100, width - 2 * F.pad);
  const titleLines = frame.title ? wrapText(frame.title, F.title, inner) : [];
  const titleH = titleLines.length ? titleLines.length * F.title * 1.3 + F.pad * 0.5 : 0;
  const chartsY = F.pad + titleH;
  let x = F.pad;
  let y = chartsY + chartsHeight + F.pad + F.legend;
  const items = frame.legend.map((it) => {
    const w = F.swatch + labelWidth(it.text, F.legend) * 0.92 + F.pad;
    if (x > F.pad && x + w > width - F.pad) {
      x = F.pad;
      y += F.legend * 1.6;
    }
    const at = { x, y, text: it.text };
    x += w;
    return at;
  });
  const legendBottom = items.length ? y + F.legend * 0.6 : chartsY + chartsHeight;
  // the source: words wrapped, a link too long for a line cut into lines
  const perLine = Math.max(10, Math.floor(inner / labelWidth('0', F.footer)));
  const footerLines = wrapText(frame.footer, F.footer, inner).flatMap((l) => (l.length > perLine ? (l.match(new RegExp(`.{1,${perLine}}`, 'g')) ?? [l]) : [l]));
  const footerY = legendBottom + F.pad + F.footer;
  const footer = footerLines.map((text, i) => ({ text, x: F.pad, y: footerY + i * F.footer * 1.3 }));
  const bottom = footer.length ? footer[footer.length - 1]!.y : legendBottom;
  return { titleLines: titleLines.map((t, i) => ({ text: t, x: F.pad, y: F.pad + F.title * (1 + i * 1.3) })), chartsY, items, footerY, footer, height: Math.ceil(bottom + F.pad * 0.5) };
}

/** The frame of a figure on the page: its title's text, its legend's items and the page's address. */
export function figureFrame(fig: Element): ExportFrame {
  const title = (fig.querySelector('.chart-title')?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const legend = [...fig.querySelectorAll('.chart-legend > span')].map((el) => {
    const words = el.cloneNode(true) as Element;
    words.querySelectorAll('svg, .legend-glyph').forEach((e) => e.remove());
    return {
      text: (words.textContent ?? '').replace(/\s+/g, ' ').trim(),
      swatch: el.querySelector('svg'),
      glyph: el.querySelector('.legend-glyph')?.textContent ?? undefined,
    };
  });
  return { title, legend: legend.filter((l) => l.text), footer: `btrfs patch lab · simulated · ${typeof location === 'undefined' ? '' : location.href}` };
}

/** Inline every presentation property of `src`'s subtree onto the matching elements of `dst` (a clone). */
function inlineStyles(src: Element, dst: Element): void {
  const a = [src, ...src.querySelectorAll('*')];
  const b = [dst, ...dst.querySelectorAll('*')];
  a.forEach((el, i) => {
    const cs = getComputedStyle(el);
    b[i]?.setAttribute('style', PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';'));
  });
}

/** A standalone SVG document of drawn charts (several are placed as they
 * sit on the page, inside one document): every style inlined, a white
 * background; with a frame, the figure's title above them and its legend
 * and source below, so the file says what it shows on its own. */
export function svgText(svgs: SVGSVGElement[], frame?: ExportFrame): string {
  const first = svgs[0];
  if (!first) return '';
  const boxes = svgs.map((s) => s.getBoundingClientRect());
  const left = Math.min(...boxes.map((b) => b.left));
  const top = Math.min(...boxes.map((b) => b.top));
  const chartsW = Math.round(Math.max(...boxes.map((b) => b.right)) - left);
  const chartsH = Math.round(Math.max(...boxes.map((b) => b.bottom)) - top);
  const L = frame ? exportLayout(frame, chartsW + 2 * EXPORT_FONT.pad, chartsH) : null;
  const width = L ? chartsW + 2 * EXPORT_FONT.pad : chartsW;
  const height = L ? L.height : chartsH;
  const dx = L ? EXPORT_FONT.pad : 0;
  const dy = L ? L.chartsY : 0;
  const NS = 'http://www.w3.org/2000/svg';
  const root = document.createElementNS(NS, 'svg');
  root.setAttribute('xmlns', NS);
  root.setAttribute('width', String(width));
  root.setAttribute('height', String(height));
  root.setAttribute('viewBox', `0 0 ${width} ${height}`);
  const bg = document.createElementNS(NS, 'rect');
  bg.setAttribute('width', '100%');
  bg.setAttribute('height', '100%');
  bg.setAttribute('fill', '#ffffff');
  root.appendChild(bg);
  svgs.forEach((svg, k) => {
    const clone = svg.cloneNode(true) as SVGSVGElement;
    inlineStyles(svg, clone);
    const b = boxes[k]!;
    clone.setAttribute('x', String(Math.round(b.left - left + dx)));
    clone.setAttribute('y', String(Math.round(b.top - top + dy)));
    clone.setAttribute('width', String(Math.round(b.width)));
    clone.setAttribute('height', String(Math.round(b.height)));
    root.appendChild(clone);
  });
  if (frame && L) {
    const F = EXPORT_FONT;
    const text = (x: number, y: number, t: string, size: number, attrs: Record<string, string> = {}): void => {
      const e = document.createElementNS(NS, 'text');
      e.setAttribute('x', String(Math.round(x)));
      e.setAttribute('y', String(Math.round(y)));
      e.setAttribute('style', `font-family:'DejaVu Sans', sans-serif;font-size:${size}px;fill:#111418`);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      e.textContent = t;
      root.appendChild(e);
    };
    for (const l of L.titleLines) text(l.x, l.y, l.text, F.title, { 'font-weight': '700', class: 'export-title' });
    L.items.forEach((at, i) => {
      const it = frame.legend[i]!;
      if (it.swatch && !it.glyph) {
        const sw = it.swatch.cloneNode(true) as SVGSVGElement;
        inlineStyles(it.swatch, sw);
        const w = Number(it.swatch.getAttribute('width') ?? 14);
        const h = Number(it.swatch.getAttribute('height') ?? 14);
        sw.setAttribute('x', String(Math.round(at.x)));
        sw.setAttribute('y', String(Math.round(at.y - F.legend * 0.5 - h / 2)));
        sw.setAttribute('width', String(w));
        sw.setAttribute('height', String(h));
        root.appendChild(sw);
      } else if (it.glyph) text(at.x + 4, at.y, it.glyph, F.legend, { 'font-weight': '700' });
      text(at.x + F.swatch, at.y, at.text, F.legend, { class: 'export-legend' });
    });
    for (const l of L.footer) text(l.x, l.y, l.text, F.footer, { style: `font-family:'DejaVu Sans', sans-serif;font-size:${F.footer}px;fill:#5b6472`, class: 'export-footer' });
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(root)}`;
}

/** Offer `data` to the user as a file. */
export function download(name: string, data: Blob): void {
  const url = URL.createObjectURL(data);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function downloadSvg(svgs: SVGSVGElement[], name: string, frame?: ExportFrame): void {
  download(`${name}.svg`, new Blob([svgText(svgs, frame)], { type: 'image/svg+xml' }));
}

/** The chart as a PNG at `scale` times its drawn size (sharp on a slide), with its frame. */
export async function downloadPng(svgs: SVGSVGElement[], name: string, frame?: ExportFrame, scale = 2): Promise<void> {
  const text = svgText(svgs, frame);
  const m = /width="(\d+)" height="(\d+)"/.exec(text);
  const width = Number(m?.[1] ?? 0);
  const height = Number(m?.[2] ?? 0);
  const img = new Image();
  // a data: URL, not a blob: the page's CSP allows images from data: only
  const url = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await new Promise<void>((ok, fail) => {
    img.onload = () => ok();
    img.onerror = () => fail(new Error('the chart could not be rendered to an image'));
    img.src = url;
  });
  const canvas = document.createElement('canvas');
  canvas.width = Math.round(width * scale);
  canvas.height = Math.round(height * scale);
  const ctx = canvas.getContext('2d');
  if (!ctx) throw new Error('no 2D canvas');
  ctx.scale(scale, scale);
  ctx.drawImage(img, 0, 0, width, height);
  const blob = await new Promise<Blob | null>((ok) => canvas.toBlob(ok, 'image/png'));
  if (!blob) throw new Error('the PNG could not be encoded');
  download(`${name}.png`, blob);
}

const csvCell = (v: string | number | undefined): string => {
  if (v === undefined) return '';
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : v;
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

/** One row per metric: its name, label, unit, and the value of each run (full precision). */
export function runCsv(info: ExperimentInfo, runs: Partial<Record<Variant, RunResult>>, label: (metric: string) => string): string {
  const vs = info.variants.filter((v) => runs[v]);
  const head = ['metric', 'label', 'unit', ...vs];
  const rows = info.metricInfo.map((m) => [m.name, label(m.name), m.unit, ...vs.map((v) => runs[v]?.metrics[m.name])]);
  return [head, ...rows].map((r) => r.map(csvCell).join(',')).join('\n') + '\n';
}

/** Everything about a run: experiment, parameters, random seed, and per kernel its metrics and details. */
export function runJson(info: ExperimentInfo, params: Record<string, string>, seed: number, runs: Partial<Record<Variant, RunResult>>): string {
  const out = {
    experiment: info.name,
    patch: info.seed,
    params,
    seed,
    runs: Object.fromEntries(
      info.variants
        .filter((v) => runs[v])
        .map((v) => {
          const r = runs[v]!;
          return [v, { metrics: r.metrics, sim_ns: r.simNs, events: r.events, details: r.details }];
        }),
    ),
  };
  return `${JSON.stringify(out, null, 2)}\n`;
}
