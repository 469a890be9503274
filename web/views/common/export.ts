/*
 * export.ts - take a chart or a run out of the lab: a chart as a
 * standalone SVG (styles inlined, so it looks the same in a slide or a
 * paper) or as a PNG at twice its size, and a run as CSV (one row per
 * metric) or JSON (everything the engine returned). The string builders
 * are pure and unit-tested; download() is the only part that touches the
 * document.
 */
import type { ExperimentInfo, RunResult, Variant } from '../../engine/types';

/** Presentation properties copied from the computed style onto each element. */
const PROPS = ['fill', 'stroke', 'stroke-width', 'stroke-dasharray', 'opacity', 'fill-opacity', 'font-size', 'font-weight', 'font-family', 'paint-order', 'text-anchor', 'dominant-baseline'];

/** A standalone SVG document of drawn charts (several are placed as they
 * sit on the page, inside one document): every style inlined, a white
 * background. */
export function svgText(svgs: SVGSVGElement[]): string {
  const first = svgs[0];
  if (!first) return '';
  const boxes = svgs.map((s) => s.getBoundingClientRect());
  const left = Math.min(...boxes.map((b) => b.left));
  const top = Math.min(...boxes.map((b) => b.top));
  const width = Math.round(Math.max(...boxes.map((b) => b.right)) - left);
  const height = Math.round(Math.max(...boxes.map((b) => b.bottom)) - top);
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
    const src = [svg, ...svg.querySelectorAll('*')];
    const dst = [clone, ...clone.querySelectorAll('*')];
    src.forEach((el, i) => {
      const cs = getComputedStyle(el);
      dst[i]?.setAttribute('style', PROPS.map((p) => `${p}:${cs.getPropertyValue(p)}`).join(';'));
    });
    const b = boxes[k]!;
    clone.setAttribute('x', String(Math.round(b.left - left)));
    clone.setAttribute('y', String(Math.round(b.top - top)));
    clone.setAttribute('width', String(Math.round(b.width)));
    clone.setAttribute('height', String(Math.round(b.height)));
    root.appendChild(clone);
  });
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

export function downloadSvg(svgs: SVGSVGElement[], name: string): void {
  download(`${name}.svg`, new Blob([svgText(svgs)], { type: 'image/svg+xml' }));
}

/** The chart as a PNG at `scale` times its drawn size (sharp on a slide). */
export async function downloadPng(svgs: SVGSVGElement[], name: string, scale = 2): Promise<void> {
  const text = svgText(svgs);
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
