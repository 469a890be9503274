/*
 * ReceiveView.tsx - seed 003: btrfs receive of thousands of small files,
 * where every file's TRUNCATE(size) makes the kernel before the patch
 * write the file's last page back and wait for it. Pictures, the two
 * kernels on shared scales: files received against time; a dozen files of
 * the stream command by command, each truncate's wait for its tail page
 * highlighted, with the destination disk's requests underneath; the
 * receive's time per command type; the disk's requests per second; where
 * a few received files' extents sit on the disk (two per file before, one
 * after). Drawing only: the layouts come from ./model.ts.
 */
import type { Variant } from '../../engine/types';
import { publishedFor } from '../../model/provenance';
import type { ViewProps } from '../types';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, MEASURED, NEUTRAL, fmtBytes, fmtMs, fmtNum } from '../common';
import {
  clusterBytes,
  diskClusters,
  layoutExtents,
  layoutOps,
  layoutProgress,
  layoutRate,
  layoutTimeline,
  readReceiveDetails,
  windowEnd,
  type ReceiveDetails,
} from './model';

/**
 * The commands' greys in the timeline (never a kernel's colour): four
 * lightnesses far enough apart to tell apart, one per kind of command
 * (seven greys could not be); each bar's title names its own command.
 */
const OP_GROUPS = [
  { key: 'name', ops: ['mkfile', 'rename'], label: 'MKFILE, RENAME (create, then the final name)', color: NEUTRAL.light },
  { key: 'write', ops: ['write'], label: 'WRITE (pwrite)', color: NEUTRAL.dark },
  { key: 'truncate', ops: ['truncate'], label: 'TRUNCATE', color: NEUTRAL.strong },
  { key: 'attr', ops: ['chown', 'chmod', 'utimes'], label: 'CHOWN, CHMOD, UTIMES (attributes)', color: '#ffffff' },
] as const;
const OP_COLOR: Record<string, string> = Object.fromEntries(OP_GROUPS.flatMap((g) => g.ops.map((op) => [op, g.color])));
/** the white of the attribute commands needs an outline to show */
const OP_STROKE = (op: string): string => (OP_COLOR[op] === '#ffffff' ? NEUTRAL.dark : '#fff');
const OP_LABEL: Record<string, string> = {
  mkfile: 'MKFILE (creat)',
  rename: 'RENAME',
  utimes: 'UTIMES',
  write: 'WRITE (pwrite)',
  truncate: 'TRUNCATE',
  chown: 'CHOWN',
  chmod: 'CHMOD',
};

interface Run {
  v: Variant;
  d: ReceiveDetails;
  receiveS: number | undefined;
}

function TimelinePanel({ run, xMaxMs, reference }: { run: Run; xMaxMs: number; reference: boolean }) {
  const { v, d } = run;
  const color = KERNEL_COLOR[v];
  const waits = d.zoom.cmds.filter((c) => c.wait).length;
  const last = d.zoom.firstFile + Math.max(0, new Set(d.zoom.cmds.map((c) => c.file)).size - 1);
  const present = new Set(d.zoom.cmds.map((c) => c.op));
  return (
    <ChartFigure
      legend={[
        ...OP_GROUPS.filter((g) => g.ops.some((op) => present.has(op))).map((g) => ({ id: g.key, label: g.label, color: g.color, shape: 'box' as const, outline: g.color === '#ffffff' ? NEUTRAL.dark : undefined })),
        { id: 'wait', label: 'the truncate waiting for the tail page', color: color },
        { id: 'io', label: 'a disk request, submission to completion (bottom lane)', color: NEUTRAL.mid },
      ]}
      testId={`receive-timeline-${v}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`receive-timeline-${v}`}
      data={{ waits: String(waits) }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[v] }}>{KERNEL_LABEL[v]}</strong>
          {reference && <span className="ref-badge">reference</span>} · file_{d.zoom.firstFile}–file_{last}, {fmtNum(d.zoom.atS)} s into the receive · {waits} tail-page {waits === 1 ? 'wait' : 'waits'}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutTimeline(d, width, theme.fontPx, xMaxMs);
        return (
          <svg className="chart" data-variant={v} data-pair="receive-timeline" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="the receive's commands per file, and the disk's requests" data-testid={`receive-timeline-chart-${v}`}>
            <Axes {...L} xTitle={L.xTitle} xGrid clampEnds />
            <g fontSize={theme.fontPx}>
              {L.rows.map((r) => (
                <text key={r.file} className="tick tick-y" x={L.margin.left - theme.fontPx * 0.4} y={r.y} dy="0.35em" textAnchor="end">
                  {r.label}
                </text>
              ))}
              <text className="tick" x={L.margin.left - theme.fontPx * 0.4} y={L.disk.y + L.disk.h / 2} dy="0.35em" textAnchor="end">
                {L.disk.label}
              </text>
            </g>
            {L.bars.map((b, i) => (
              <rect key={i} x={b.x} y={b.y} width={b.w} height={b.h} fill={OP_COLOR[b.op] ?? NEUTRAL.mid} stroke={OP_STROKE(b.op)} strokeWidth={OP_STROKE(b.op) === '#fff' ? 0.5 : 1} data-op={b.op} data-hl-key={b.op === 'truncate' ? 'truncates' : undefined}>
                <title>{`file_${b.file}: ${OP_LABEL[b.op] ?? b.op}`}</title>
              </rect>
            ))}
            {L.waits.map((w, i) => (
              <rect key={`w${i}`} x={w.x} y={w.y - 2} width={w.w} height={w.h + 4} fill={color} opacity={0.9} data-testid={`receive-wait-${v}`} data-hl-key="tail-waits">
                <title>{`file_${w.file}: the truncate waits ${fmtMs(w.ms)} for its tail page to be written`}</title>
              </rect>
            ))}
            <rect x={L.margin.left} y={L.disk.y} width={width - L.margin.left - L.margin.right} height={L.disk.h} fill={NEUTRAL.faint} />
            {L.ios.map((io, i) => (
              <rect key={`io${i}`} x={io.x} y={L.disk.y + 2} width={io.w} height={L.disk.h - 4} fill={NEUTRAL.mid} data-testid={`receive-io-${v}`} data-hl-key="disk-writes">
                <title>{`disk ${io.op}`}</title>
              </rect>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function ExtentPanel({ run, bytesAcross, breaksAcross, reference }: { run: Run; bytesAcross: number; breaksAcross: number; reference: boolean }) {
  const { v, d } = run;
  const per = d.layout.length ? d.layout.reduce((s, f) => s + f.extents.length, 0) / d.layout.length : 0;
  return (
    <ChartFigure
      testId={`receive-extents-${v}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`receive-extents-${v}`}
      data={{ extents: String(per) }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[v] }}>{KERNEL_LABEL[v]}</strong>
          {reference && <span className="ref-badge">reference</span>} · {fmtNum(per)} {per === 1 ? 'extent' : 'extents'} per file, after the sync
        </>
      }
      legend={[
        { id: 'first', label: "the file's extent holding byte 0", color: NEUTRAL.dark },
        { id: 'next', label: 'its next extent', color: NEUTRAL.mid },
        { id: 'num', glyph: '3', label: 'on the disk: an extent of the file numbered 3 on the right', color: NEUTRAL.dark },
        { id: 'gap', glyph: '⋯', label: 'a jump between far addresses (its size under it), not to scale', color: NEUTRAL.dark },
      ]}
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutExtents(d.layout, width, theme.fontPx, bytesAcross, breaksAcross);
        return (
          <svg className="chart" data-variant={v} data-pair="receive-extents" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="each file's extents and where they sit on the disk" data-testid={`receive-extents-chart-${v}`}>
            <text className="lane-label" fontSize={theme.fontPx} x={L.fileX.x0} y={L.captions.files}>
              each file from byte 0
            </text>
            <text className="lane-label" fontSize={theme.fontPx} x={L.fileX.x0} y={L.captions.disk}>
              the disk, in address order
            </text>
            {L.files.map((f) => (
              <g key={f.name}>
                <text className="tick tick-y" fontSize={theme.fontPx} x={L.fileX.x0 - theme.fontPx * 0.4} y={f.y + f.h / 2} dy="0.35em" textAnchor="end">
                  {f.name}
                </text>
                <text className="tick" fontSize={theme.fontPx} x={L.fileX.x1 + theme.fontPx * 0.4} y={f.y + f.h / 2} dy="0.35em">
                  {L.files.indexOf(f) + 1}
                </text>
                {f.pages.map((p) => (
                  <rect key={p.extent} x={p.x} y={f.y} width={p.w} height={f.h} fill={p.extent % 2 ? NEUTRAL.mid : NEUTRAL.dark} stroke="#fff" strokeWidth={1.5} data-testid={`receive-extent-${v}`} data-hl-key="extents">
                    <title>{`${f.name}: bytes ${fmtBytes(p.off)}–${fmtBytes(p.off + p.len)}, extent ${p.extent + 1} of ${f.extents}`}</title>
                  </rect>
                ))}
              </g>
            ))}
            <text className="tick" fontSize={theme.fontPx} x={L.fileX.x0 - theme.fontPx * 0.4} y={L.disk.y + L.disk.h / 2} dy="0.35em" textAnchor="end">
              disk
            </text>
            {L.disk.boxes.map((b, i) => (
              <g key={`b${i}`}>
                <rect x={b.x} y={L.disk.y} width={b.w} height={L.disk.h} fill={b.extent % 2 ? NEUTRAL.mid : NEUTRAL.dark} stroke="#fff" strokeWidth={1} data-testid={`receive-disk-extent-${v}`}>
                  <title>{`${d.layout[b.file]?.name ?? ''}, extent ${b.extent + 1}: disk byte ${fmtNum(b.disk)}`}</title>
                </rect>
                {b.w >= theme.fontPx * 0.8 && (
                  <text x={b.x + b.w / 2} y={L.disk.y + L.disk.h / 2} dy="0.35em" textAnchor="middle" fontSize={theme.fontPx} fill="#fff">
                    {b.file + 1}
                  </text>
                )}
              </g>
            ))}
            {L.disk.breaks.map((b, i) => (
              <g key={`k${i}`}>
                <text className="tick" fontSize={theme.fontPx} x={b.x} y={L.disk.y + L.disk.h + theme.fontPx * 1.2} textAnchor="middle">
                  ⋯ {fmtBytes(b.gap)} ⋯
                </text>
                <line x1={b.x - 3} x2={b.x + 3} y1={L.disk.y - 2} y2={L.disk.y + L.disk.h + 2} stroke={MEASURED} strokeWidth={1.5} />
              </g>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

export function ReceiveView({ info, params, runs, reference }: ViewProps) {
  const order: Variant[] = ['before', 'after'];
  const all: Run[] = order
    .filter((v) => runs[v])
    .map((v) => ({ v, d: readReceiveDetails(runs[v]?.details), receiveS: runs[v]?.metrics.receive_s }));
  if (all.length === 0) return null;
  const keyed = all.map((r) => ({ key: r.v, d: r.d }));
  const published = order.flatMap((v) =>
    publishedFor(info.published, 'receive_s', v, info.params, params)
      .filter((m) => m.differs.length === 0)
      .map((m) => ({ key: v, value: m.row.value })),
  );
  const xMaxMs = Math.max(...all.map((r) => windowEnd(r.d)));
  const bytesAcross = Math.max(...all.map((r) => clusterBytes(diskClusters(r.d.layout))));
  const breaksAcross = Math.max(...all.map((r) => diskClusters(r.d.layout).length - 1));
  return (
    <section className="receive-view" data-testid="receive-view">
      <ChartFigure
        testId="receive-progress"
        exportName="receive-progress"
        title={<>Files received against time, {fmtNum(all[0]!.d.files)} files of {fmtBytes(all[0]!.d.fileBytes)}</>}
        legend={[
          ...all.map((r) => ({ label: `${KERNEL_LABEL[r.v]}: ${r.receiveS !== undefined ? `${fmtNum(r.receiveS)} s` : '–'}`, color: KERNEL_COLOR[r.v], shape: 'line' as const, id: r.v })),
          ...(published.length ? [{ label: 'published average of 5 runs', color: MEASURED, shape: 'diamond' as const }] : []),
        ]}
        note={
          <>
            Each TRUNCATE(size) the 2018 send puts right after a file&apos;s last WRITE reaches <code>btrfs_setsize</code> with the file&apos;s own size. Before the patch, <code>btrfs_truncate</code> still
            writes back the page holding the end of the file and waits for it: one synchronous 4 KiB write per file that is not a whole number of pages.
          </>
        }
      >
        {(boxWidth, theme) => {
          const width = Math.max(320, boxWidth);
          const L = layoutProgress(keyed, published, width, Math.round(theme.fontPx * 14), theme.fontPx);
          return (
            <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="files received against time, both kernels" data-testid="receive-progress-chart">
              <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
              {L.series.map((s) => (
                <path key={s.key} d={s.d} fill="none" stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx} data-testid={`receive-progress-${s.key}`} />
              ))}
              {L.marks.map((mk) => (
                <rect key={mk.key} x={mk.x - 6} y={mk.y - 6} width={12} height={12} transform={`rotate(45 ${mk.x} ${mk.y})`} fill={MEASURED} data-testid={`receive-published-${mk.key}`}>
                  <title>{`published ${mk.key}: ${fmtNum(mk.value)} s`}</title>
                </rect>
              ))}
            </svg>
          );
        }}
      </ChartFigure>

      <div className="pair-grid">
        {all.map((r) => (
          <TimelinePanel key={r.v} run={r} xMaxMs={xMaxMs} reference={r.v === reference} />
        ))}
      </div>
      <p className="muted prose receive-legend-note">
        Each row is a file of the stream, each bar a command as <code>btrfs receive</code> replays it, in stream order (hover a bar for its command); in the kernel&apos;s colour, the truncate
        waiting for the file&apos;s tail page. The bottom lane is the destination disk: each grey bar a request, from submission to completion.
      </p>

      <div className="pair-grid">
        <ChartFigure
          testId="receive-ops"
          exportName="receive-ops"
          title="The receive's time per command type"
          legend={all.map((r) => ({ label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v], id: r.v }))}
        >
          {(boxWidth, theme) => {
            const width = Math.max(280, boxWidth);
            const L = layoutOps(keyed, width, theme.fontPx);
            return (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="time per command type, both kernels" data-testid="receive-ops-chart">
                <Axes {...L} xTitle={L.xTitle} xGrid clampEnds />
                {L.rows.map((r) => (
                  <text key={r.op} className="tick" fontSize={theme.fontPx} x={L.margin.left - theme.fontPx * 0.4} y={r.y} dy="0.35em" textAnchor="end">
                    {r.op.toUpperCase()}
                  </text>
                ))}
                {L.bars.map((b) => (
                  <rect key={`${b.op}-${b.key}`} x={b.x} y={b.y} width={b.w} height={b.h} fill={KERNEL_COLOR[b.key as Variant]} data-testid={`receive-op-${b.op}-${b.key}`} data-hl-key={b.op === 'truncate' ? 'truncate-time' : undefined}>
                    <title>{`${b.op.toUpperCase()}, ${b.key}: ${fmtNum(b.s)} s`}</title>
                  </rect>
                ))}
              </svg>
            );
          }}
        </ChartFigure>
        <ChartFigure
          testId="receive-rate"
          exportName="receive-disk-rate"
          title="The destination disk's requests during the receive"
          legend={all.map((r) => ({ label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v], shape: 'line' as const, id: r.v }))}
          note="After the patch the receive leaves every page in the page cache: the disk sees only the two commits (the subvolume's and SET_RECEIVED_SUBVOL's) until the sync."
        >
          {(boxWidth, theme) => {
            const width = Math.max(280, boxWidth);
            const L = layoutRate(keyed, width, Math.round(theme.fontPx * 12), theme.fontPx);
            return (
              <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="disk requests per second over the receive" data-testid="receive-rate-chart">
                <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
                {L.series.map((s) => (
                  <path key={s.key} d={s.d} fill="none" stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx - 0.5} />
                ))}
              </svg>
            );
          }}
        </ChartFigure>
      </div>

      <div className="pair-grid">
        {all.map((r) => (
          <ExtentPanel key={r.v} run={r} bytesAcross={bytesAcross} breaksAcross={breaksAcross} reference={r.v === reference} />
        ))}
      </div>
      <p className="muted prose">
        Each file from byte 0, one box per file extent item (dark: the extent holding byte 0; grey: the next one), and under them the disk in address order, each extent numbered with its
        file (⋯ marks a jump). Before the patch each tail page was written by its truncate, during the receive, one after the other; the first pages only by the sync after it: two extents
        per file, far apart. After, the sync writes each file&apos;s two pages as one extent.
      </p>
    </section>
  );
}
