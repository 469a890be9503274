/*
 * ExtentItems.tsx - the received files' file extent items, before and
 * after on one byte axis: for the first files of the recording, each
 * EXTENT_DATA item the receive inserted (an ordered extent finished) as a
 * box over the bytes it covers, its grey saying what wrote it (the
 * TRUNCATE's own write of the tail page, the final sync, writeback), and
 * the items per file over the whole recording. Drawing only: the
 * transform is web/model/extentItems.ts.
 */
import { useMemo } from 'react';
import type { Variant } from '../../engine/types';
import { extentItems } from '../../model/extentItems';
import { fmtBytes, fmtNum } from '../../model/format';
import type { Trace } from '../../model/trace';
import { ChartFigure, INK, KERNEL_LABEL, KERNEL_TEXT, labelWidth, NEUTRAL, smallPx } from '../common';

const WHY_COLOUR: Record<string, string> = { truncate: NEUTRAL.strong, sync: NEUTRAL.mid, writeback: NEUTRAL.light };
const WHY_TEXT: Record<string, string> = { truncate: 'written by the TRUNCATE', sync: 'written at the sync', writeback: 'written by writeback' };
const ROWS = 6;

export function ExtentItems({ sides }: { sides: { variant: Variant; trace: Trace }[] }) {
  const data = useMemo(() => sides.map((s) => extentItems(s.trace)), [sides]);
  const size = Math.max(1, ...data.flatMap((d) => d.files.slice(0, ROWS).flatMap((f) => f.items.map((it) => it.start + it.len))));
  const whys = [...new Set(data.flatMap((d) => Object.keys(d.byWhy)))];
  return (
    <ChartFigure
      testId="extent-items"
      exportName="receive-extent-items"
      title={<>The received files&apos; file extent items, first {ROWS} files</>}
      legend={whys.map((w) => ({ label: WHY_TEXT[w] ?? w, color: WHY_COLOUR[w] ?? NEUTRAL.faint, shape: 'box' as const }))}
      note="Each box is one EXTENT_DATA item in the received subvolume's tree, over the bytes of the file it maps. Before the patch the TRUNCATE to the file's own size writes its last, partial page at once: that page gets an item of its own, and the rest of the file another one later. After it, the whole file is written once."
    >
      {(boxWidth, theme) => {
        const fs = theme.fontPx;
        const colW = sides.length > 1 && boxWidth >= 700 ? (boxWidth - 24) / 2 : boxWidth;
        const rowH = Math.round(fs * 1.9);
        const labelW = Math.round(Math.max(fs * 6, labelWidth(`inode ${Math.max(...data.flatMap((d) => d.files.map((f) => f.ino)), 0)}`, smallPx(theme, 0.8)) + fs * 0.5));
        const plotW = Math.max(120, colW - labelW - 8);
        const h = Math.round(fs * 1.6) + rowH * ROWS + Math.round(fs * 1.8);
        return (
          <div className={`extent-items-cols${colW < boxWidth ? ' two' : ''}`}>
            {sides.map((s, i) => {
              const d = data[i]!;
              const x = (b: number): number => labelW + (b / size) * plotW;
              return (
                <div key={s.variant} data-testid={`extent-items-${s.variant}`} data-per-file={d.perFile} data-items={d.items} data-files={d.files.length}>
                  <svg className="chart" width={colW} height={h} viewBox={`0 0 ${colW} ${h}`} role="img" aria-label={`${s.variant}: file extent items of the first received files`}>
                    <text x={0} y={fs} fontSize={fs} fontWeight={700} fill={KERNEL_TEXT[s.variant]}>
                      {KERNEL_LABEL[s.variant]}: {fmtNum(d.perFile)} {d.perFile === 1 ? 'item' : 'items'} per file
                    </text>
                    {d.files.slice(0, ROWS).map((f, r) => {
                      const y = Math.round(fs * 1.6) + r * rowH;
                      return (
                        <g key={f.ino}>
                          <text x={0} y={y + rowH * 0.62} fontSize={smallPx(theme, 0.8)} fill={NEUTRAL.dark}>
                            inode {f.ino}
                          </text>
                          <rect x={labelW} y={y + 3} width={plotW} height={rowH - 6} fill="#fff" stroke={NEUTRAL.faint} />
                          {f.items.map((it) => {
                            const x0 = x(it.start);
                            const w = Math.max(2, x(it.start + it.len) - x0 - 1);
                            const label = `${fmtBytes(it.start)}–${fmtBytes(it.start + it.len)}`;
                            return (
                              <g key={it.start} className="extent-item" data-why={it.why}>
                                <rect x={x0} y={y + 3} width={w} height={rowH - 6} fill={WHY_COLOUR[it.why] ?? NEUTRAL.faint} stroke={INK} strokeWidth={1} />
                                <title>{`${label}: ${WHY_TEXT[it.why] ?? it.why}`}</title>
                                {w > label.length * smallPx(theme, 0.7) * 0.62 && (
                                  <text x={x0 + 4} y={y + rowH * 0.62} fontSize={smallPx(theme, 0.7)} fill={it.why === 'truncate' ? '#fff' : INK}>
                                    {label}
                                  </text>
                                )}
                              </g>
                            );
                          })}
                        </g>
                      );
                    })}
                    <g fontSize={smallPx(theme, 0.75)} fill={INK}>
                      <text x={labelW} y={h - 4}>
                        0
                      </text>
                      <text x={labelW + plotW} y={h - 4} textAnchor="end">
                        {fmtBytes(size)} (offset in the file)
                      </text>
                    </g>
                  </svg>
                </div>
              );
            })}
          </div>
        );
      }}
    </ChartFigure>
  );
}
