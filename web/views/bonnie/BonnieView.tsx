/*
 * BonnieView.tsx - seed 001: bonnie++ -b, an fsync per create and per
 * delete. Pictures, the two kernels on shared scales: each phase's
 * latency histogram, both kernels on one log axis with each one's slowest
 * operation (bonnie's "Latency") marked beside the published one; the
 * slowest operation of the chosen phase laid out lane by lane, side by
 * side: the process's syscalls, each subvolume leaf it held read-locked
 * with the allocation inside the hold in the kernel's colour, the
 * delayed-items worker waiting for a leaf the fsync holds, the log
 * transaction it was a writer of, the log commit and the transaction
 * kthread's commits; and where each kernel allocated its extent buffers
 * (inside a leaf lock or before any). Drawing only: layouts come from
 * ./model.ts.
 */
import type { Variant } from '../../engine/types';
import { publishedFor } from '../../model/provenance';
import { seedSpread } from '../../model/noisy';
import type { SeedSpread, ViewProps } from '../types';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, MEASURED, NEUTRAL, fmtBytes, fmtMs, fmtNum } from '../common';
import {
  FSYNC_PHASES,
  PHASES,
  PHASE_LABEL,
  histDomainMs,
  layoutHist,
  layoutOpTimeline,
  lockedAlloc,
  opEndMs,
  readBonnieDetails,
  type BonnieDetails,
  type Phase,
} from './model';

const PART_COLOR: Record<string, string> = {
  open: NEUTRAL.light,
  write: NEUTRAL.mid,
  read: NEUTRAL.mid,
  fsync: NEUTRAL.dark,
  dfsync: NEUTRAL.strong,
  close: NEUTRAL.faint,
  leaf: NEUTRAL.mid,
  'leaf-dir': NEUTRAL.dark,
  logtrans: NEUTRAL.light,
  logcommit: NEUTRAL.dark,
  commit: NEUTRAL.strong,
};

interface Run {
  v: Variant;
  d: BonnieDetails;
}

/** The slowest operation of a phase is one run of a noisy process: said so, with its median over the seeds when the page has them. */
function slowestText(phase: Phase, all: Run[], spread: SeedSpread | undefined): string {
  const maxes = all.map((r) => `${r.v} ${fmtNum(r.d.phases[phase].latency.max / 1e6)}`).join(', ');
  const meds = spread ? all.map((r) => seedSpread(spread.rows, r.v, `${phase}_lat_ms`)?.p50) : [];
  const over = meds.length && meds.every((m) => m !== undefined) ? `; the median of ${spread!.rows.length} runs: ${meds.map((m) => fmtNum(m)).join(' → ')} ms` : '; one run of a noisy process';
  return `the slowest in this run (${maxes} ms)${over}`;
}

function HistPanel({ phase, all, published, domain, spread }: { phase: Phase; all: Run[]; published: { key: string; ms: number }[]; domain: [number, number]; spread?: SeedSpread }) {
  return (
    <ChartFigure
      testId={`bonnie-hist-${phase}`}
      exportName={`bonnie-hist-${phase}`}
      data={Object.fromEntries(all.map((r) => [`max-${r.v}`, String(r.d.phases[phase].latency.max / 1e6)]))}
      title={<>{PHASE_LABEL[phase]}: every operation&apos;s latency, this run</>}
      legend={[
        ...all.map((r) => ({ id: r.v, label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v] })),
        { id: 'max', label: slowestText(phase, all, spread), color: NEUTRAL.dark, shape: 'dash' as const },
        ...(published.length ? [{ id: 'pub', label: "published: that kernel's Latency (one run)", color: MEASURED, shape: 'diamond' as const }] : []),
      ]}
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutHist(
          all.map((r) => ({ key: r.v, h: r.d.phases[phase].latency })),
          published,
          domain,
          width,
          Math.round(theme.fontPx * 12),
          theme.fontPx,
        );
        return (
          <svg className="chart" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label={`${PHASE_LABEL[phase]}: operations per latency, both kernels`} data-testid={`bonnie-hist-chart-${phase}`}>
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} clampEnds />
            {L.series.map((s) => (
              <g key={s.key}>
                <path d={s.d} fill={KERNEL_COLOR[s.key as Variant]} fillOpacity={0.18} stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx - 1} />
                <line x1={s.max.x} x2={s.max.x} y1={L.margin.top - theme.fontPx * 0.4} y2={L.y0} stroke={KERNEL_COLOR[s.key as Variant]} strokeWidth={theme.strokePx} strokeDasharray="5 3" data-testid={`bonnie-max-${phase}-${s.key}`}>
                  <title>{`${s.key}: the slowest operation, ${fmtMs(s.max.ms)}`}</title>
                </line>
              </g>
            ))}
            {L.marks.map((mk) => (
              <rect key={mk.key} x={mk.x - 6} y={L.margin.top - theme.fontPx * 0.9 - 6} width={12} height={12} transform={`rotate(45 ${mk.x} ${L.margin.top - theme.fontPx * 0.9})`} fill={MEASURED} data-testid={`bonnie-published-${phase}-${mk.key}`}>
                <title>{`published ${mk.key}: ${fmtMs(mk.ms)}`}</title>
              </rect>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function OpPanel({ run, phase, xMaxMs, reference }: { run: Run; phase: Phase; xMaxMs: number; reference: boolean }) {
  const { v, d } = run;
  const op = d.phases[phase].slowest;
  const la = lockedAlloc(op);
  const color = KERNEL_COLOR[v];
  const isCreate = phase.endsWith('create');
  const isStat = phase.endsWith('stat');
  return (
    <ChartFigure
      testId={`bonnie-op-${v}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`bonnie-op-${phase}-${v}`}
      data={{ lat: String(op.latMs), locked: String(la.ms), leaves: String(op.leaves.length) }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[v] }}>{KERNEL_LABEL[v]}</strong>
          {reference && <span className="ref-badge">reference</span>} · the slowest {PHASE_LABEL[phase]}: {fmtMs(op.latMs)}, {op.leaves.length} {op.leaves.length === 1 ? 'leaf' : 'leaves'} copied,{' '}
          {la.count ? `${fmtMs(la.ms)} allocating inside leaf locks` : 'no allocation inside a leaf lock'}
          {op.waiters.some((w) => w.fsyncLeaf) ? `, delayed items waited ${fmtMs(Math.max(...op.waiters.filter((w) => w.fsyncLeaf).map((w) => w.t1 - w.t0)))} for its leaf` : ''}
        </>
      }
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const L = layoutOpTimeline(op, isCreate, isStat, width, theme.fontPx, xMaxMs);
        const laneY = Object.fromEntries(L.lanes.map((l) => [l.key, l]));
        return (
          <svg className="chart" data-variant={v} data-pair="bonnie-op" width={width} height={L.height} viewBox={`0 0 ${width} ${L.height}`} role="img" aria-label="the slowest operation, lane by lane" data-testid={`bonnie-op-chart-${v}`}>
            <Axes {...L} xTitle={L.xTitle} xGrid clampEnds />
            {L.lanes.map((l) => (
              <g key={l.key}>
                <rect x={L.margin.left} y={l.y} width={width - L.margin.left - L.margin.right} height={l.h} fill={NEUTRAL.faint} opacity={0.5} />
                <text className="tick tick-y" fontSize={theme.fontPx} x={L.margin.left - theme.fontPx * 0.4} y={l.y + l.h / 2} dy="0.35em" textAnchor="end">
                  {l.label}
                </text>
              </g>
            ))}
            {L.bars.map((b, i) => {
              const lane = laneY[b.lane]!;
              return (
                <rect key={i} x={b.x} y={lane.y + 2} width={b.w} height={lane.h - 4} fill={PART_COLOR[b.kind] ?? NEUTRAL.mid} stroke="#fff" strokeWidth={0.5} data-testid={`bonnie-bar-${b.lane}-${v}`}>
                  <title>{b.title}</title>
                </rect>
              );
            })}
            {L.scratch.map((a, i) => (
              <rect key={`s${i}`} x={a.x} y={a.y - 2} width={a.w} height={a.h + 4} fill={color} stroke="#fff" strokeWidth={1} data-testid={`bonnie-scratch-${v}`} data-hl-key="scratch">
                <title>{`the scratch extent buffer, allocated before any lock: ${fmtMs(a.ms)}`}</title>
              </rect>
            ))}
            {L.waits.map((a, i) => (
              <rect
                key={`w${i}`}
                x={a.x}
                y={a.y + 2}
                width={a.w}
                height={a.h - 4}
                fill={a.fsyncLeaf ? color : NEUTRAL.mid}
                fillOpacity={a.fsyncLeaf ? 0.45 : 1}
                stroke={a.fsyncLeaf ? color : '#fff'}
                strokeWidth={1}
                data-testid={`bonnie-wait-${v}`}
              >
                <title>{`${a.who} waits for leaf ${a.leaf}${a.fsyncLeaf ? ', read-locked by the fsync' : ''}: ${fmtMs(a.ms)}`}</title>
              </rect>
            ))}
            {L.allocs.map((a, i) => (
              <rect key={`a${i}`} x={a.x} y={a.y - 2} width={a.w} height={a.h + 4} fill={color} data-testid={`bonnie-alloc-${v}`} data-hl-key="clone-in-lock">
                <title>{`the clone of leaf ${a.leaf} allocates inside its read lock: ${fmtMs(a.ms)}`}</title>
              </rect>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function AllocPanel({ all }: { all: Run[] }) {
  const rows = all.map((r) => {
    const inside = r.d.prealloc ? 0 : r.d.log.clones;
    const outside = r.d.prealloc ? r.d.mem.allocs : 0;
    return { v: r.v, inside, outside, leaves: r.d.log.leavesCopied };
  });
  const max = Math.max(1, ...rows.map((r) => Math.max(r.inside + r.outside, r.leaves)));
  return (
    <ChartFigure
      testId="bonnie-allocs"
      exportName="bonnie-allocs"
      data={Object.fromEntries(rows.flatMap((r) => [[`inside-${r.v}`, String(r.inside)], [`outside-${r.v}`, String(r.outside)]]))}
      title="Extent buffers the log allocated, over the whole run: inside a leaf lock, or before any"
      legend={all.map((r) => ({ label: KERNEL_LABEL[r.v], color: KERNEL_COLOR[r.v], id: r.v }))}
      note="Before the patch each subvolume leaf copied into the log gets a fresh clone, allocated while the leaf is read-locked and the fsync is inside the log transaction. After it, each fsync that needs a full copy allocates one scratch extent buffer before taking any lock and copies every leaf into it."
    >
      {(boxWidth, theme) => {
        const width = Math.max(280, boxWidth);
        const rowH = Math.round(theme.fontPx * 1.6);
        const left = Math.round(theme.fontPx * 12);
        const right = Math.round(theme.fontPx * 6);
        const height = rows.length * 3 * (rowH + 4) + theme.fontPx;
        const xw = (n: number) => ((width - left - right) * n) / max;
        return (
          <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="extent buffers allocated, inside a leaf lock or outside" data-testid="bonnie-allocs-chart">
            {rows.map((r, i) => {
              const y = i * 3 * (rowH + 4);
              const items: [string, number, string, number][] = [
                ['leaves copied', r.leaves, NEUTRAL.mid, 1],
                ['allocated in a lock', r.inside, KERNEL_COLOR[r.v], 1],
                ['allocated before', r.outside, KERNEL_COLOR[r.v], 0.35],
              ];
              return (
                <g key={r.v} fontSize={theme.fontPx}>
                  {items.map(([label, n, c, o], k) => (
                    <g key={label}>
                      <text className="tick" x={left - theme.fontPx * 0.4} y={y + k * (rowH + 4) + rowH / 2} dy="0.35em" textAnchor="end">
                        {k === 0 ? `${r.v}: ` : ''}
                        {label}
                      </text>
                      <rect x={left} y={y + k * (rowH + 4)} width={Math.max(n ? 2 : 0, xw(n))} height={rowH} fill={c} fillOpacity={o} stroke={k ? c : 'none'} data-testid={`bonnie-alloc-bar-${r.v}-${k}`} data-hl-key={k === 1 ? 'allocs-in-lock' : k === 2 ? 'allocs-before' : undefined} />
                      <text className="tick" x={left + Math.max(n ? 2 : 0, xw(n)) + 6} y={y + k * (rowH + 4) + rowH / 2} dy="0.35em">
                        {fmtNum(n)}
                      </text>
                    </g>
                  ))}
                </g>
              );
            })}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

export function BonnieView({ info, params, runs, reference, view, onView, spread }: ViewProps) {
  const order: Variant[] = ['before', 'after'];
  const all: Run[] = order.filter((v) => runs[v]).map((v) => ({ v, d: readBonnieDetails(runs[v]?.details) }));
  if (all.length === 0) return null;
  const phase: Phase = PHASES.includes(view?.phase as Phase) ? (view!.phase as Phase) : 'seq_delete';
  const pub = (p: Phase) =>
    order.flatMap((v) =>
      publishedFor(info.published, `${p}_lat_ms`, v, info.params, params)
        .filter((m) => m.differs.length === 0)
        .map((m) => ({ key: v, ms: m.row.value })),
    );
  const domain = histDomainMs(
    all.flatMap((r) => FSYNC_PHASES.map((p) => r.d.phases[p].latency)),
    FSYNC_PHASES.flatMap((p) => pub(p).map((x) => x.ms)),
  );
  const xMaxMs = Math.max(...all.map((r) => opEndMs(r.d.phases[phase].slowest)));
  const d0 = all[0]!.d;
  return (
    <section className="bonnie-view" data-testid="bonnie-view">
      <p className="muted prose">
        {fmtNum(d0.files)} files of {fmtBytes(d0.fileBytes)} in {fmtNum(d0.dirs)} directories, on {fmtBytes(d0.ramBytes)} of RAM (page cache up to {fmtBytes(d0.cacheLimitBytes)}): each create
        is open, 47 writes, fsync(file), fsync(dir), close; each delete is unlink and fsync(dir). bonnie&apos;s &ldquo;Latency&rdquo; is the slowest one of a phase.
      </p>
      <div className="pair-grid bonnie-hists">
        {FSYNC_PHASES.map((p) => (
          <HistPanel key={p} phase={p} all={all} published={pub(p)} domain={domain} spread={spread} />
        ))}
      </div>
      <p className="muted prose">
        Outlined in each kernel&apos;s colour: how many operations took how long (both axes logarithmic); the dashed line is the slowest, the black diamond the published Latency of that kernel.
        The bulk is the same in both kernels; the patch moves the tail, where an allocation met direct reclaim.
      </p>
      <div className="bonnie-phase-picker" role="group" aria-label="the phase whose slowest operation is drawn">
        {PHASES.map((p) => (
          <button key={p} type="button" className={p === phase ? 'active' : undefined} aria-pressed={p === phase} data-testid={`bonnie-phase-${p}`} onClick={() => onView?.({ phase: p })} disabled={!onView && p !== phase}>
            {PHASE_LABEL[p]}
          </button>
        ))}
      </div>
      <div className="pair-grid">
        {all.map((r) => (
          <OpPanel key={r.v} run={r} phase={phase} xMaxMs={xMaxMs} reference={r.v === reference} />
        ))}
      </div>
      <p className="muted prose">
        Lanes, top to bottom: the one bonnie++ process (its syscalls in greys); each subvolume leaf its fsyncs held read-locked while copying it (in the kernel&apos;s colour, the clone&apos;s
        allocation inside the hold: no other task can write-lock that leaf meanwhile; after the patch, the scratch buffer&apos;s allocation sits in the process&apos;s lane, in the kernel&apos;s colour,
        before any lock); the delayed-items worker (or a commit) inserting the dir index items and inode updates that creates and unlinks queued, when it waited for a leaf (in the
        kernel&apos;s colour when the fsync held that leaf read-locked: the wait ends at its release; over the whole run it did so{' '}
        {all.map((r) => `${fmtNum(r.d.delayed.workerWaits)} times ${r.v} (the longest ${fmtMs(r.d.delayed.workerWaitMaxMs)})`).join(', ')}; the lane is mostly empty, since the create&apos;s own
        balance call wakes the worker and it is usually done before the fsync takes its leaves); the log transaction it was a writer of (a <code>btrfs_sync_log</code> waits for log_writers to reach 0:
        in a one-process benchmark nobody else is there to wait, so 0 tasks wait); the log commit; and the transaction kthread&apos;s commits, which wait for the fsync&apos;s transaction handle.
      </p>
      <AllocPanel all={all} />
    </section>
  );
}
