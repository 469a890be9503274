/*
 * QgroupView.tsx - seed 002, "dropping subvolumes with quota on": the
 * mechanism pictures under the page's headline comparison. Side by side on
 * one time scale, each kernel's commits (a bar per commit split into its
 * phases, accounting the darkest), the dirty-extent count rising and
 * falling, the dropped leaves shaded by the accounting call that took their
 * records, where the records come from, and the threshold sweep (declared
 * in the registry and run by the app; its having run is in the URL, so a
 * link shows it). Drawing only: model.ts lays it all out.
 */
import { SweepButton } from '../common/SweepButton';
import { Tag } from '../common/Tag';
import { ColumnHeads, PointSeries } from '../SweepParts';
import type { Variant } from '../../engine/types';
import { Axes, ChartFigure, KERNEL_COLOR, KERNEL_LABEL, KERNEL_TEXT, NEUTRAL, fmtNum, type LegendItem } from '../common';
import { sweepOf, type SweepHandle, type ViewProps } from '../types';
import {
  PHASES,
  PHASE_COLOR,
  PHASE_LABEL,
  SWEEP_THRESHOLDS,
  fmtMs,
  layoutCommits,
  layoutDirty,
  layoutSweep,
  layoutTree,
  longestCommitMs,
  readQgroupDetails,
  type QgroupPicture,
  type SweepRow,
} from './model';

const PHASE_LEGEND: LegendItem[] = PHASES.map((p) => ({ label: PHASE_LABEL[p], color: PHASE_COLOR[p] }));

function CommitTimeline({ pic, variant, yMaxMs, reference }: { pic: QgroupPicture; variant: Variant; yMaxMs: number; reference: boolean }) {
  return (
    <ChartFigure
      testId={`qg-commits-${variant}`}
      className={reference ? 'figure-reference' : undefined}
      exportName={`qgroup-commits-${variant}`}
      data={{ variant, ymax: String(yMaxMs) }}
      title={
        <>
          <strong style={{ color: KERNEL_TEXT[variant] }}>{KERNEL_LABEL[variant]}</strong>
          {reference && <span className="ref-badge">reference</span>}: {pic.commits.length === 1 ? 'its one commit' : `its ${pic.commits.length} commits`}, by phase
        </>
      }
      legend={PHASE_LEGEND}
      note="The number above a bar is the qgroup records its commit accounted (hover a bar for its phases)."
    >
      {(width, theme) => {
        const height = Math.round(theme.fontPx * 15);
        const L = layoutCommits(pic.commits, width, height, theme.fontPx, yMaxMs);
        return (
          <svg className="chart" data-variant={variant} data-pair="qg-commits" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${KERNEL_LABEL[variant]}: commit durations by phase`}>
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} />
            {L.bars.map((b) => (
              <g key={b.index} data-testid="qg-commit-bar" data-records={b.records} data-hl-key="commits">
                {b.segments.map((s) => (
                  <rect key={s.phase} x={b.x} y={s.y} width={b.width} height={s.height} fill={PHASE_COLOR[s.phase]} stroke="#fff" strokeWidth={0.75} data-hl-key={s.phase === 'qgroup_account' ? 'qgroup-phase' : undefined}>
                    <title>
                      {PHASE_LABEL[s.phase]}: {fmtMs(s.ms)}
                    </title>
                  </rect>
                ))}
                {/* the kernel's colour along the bar's top: whose commit it is */}
                <rect x={b.x} y={(b.segments[b.segments.length - 1]?.y ?? 0) - 4} width={b.width} height={4} fill={KERNEL_COLOR[variant]} />
                {b.showLabel && (
                  <text x={b.x + b.width / 2} y={(b.segments[b.segments.length - 1]?.y ?? 0) - theme.fontPx * 0.5} textAnchor="middle" className="marker-label" fontSize={theme.fontPx}>
                    {fmtNum(b.records)}
                  </text>
                )}
                <title>
                  {fmtNum(b.records)} records accounted; commit {fmtMs(b.totalMs)}
                </title>
              </g>
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

function DirtyChart({ pics, threshold, reference }: { pics: [Variant, QgroupPicture][]; threshold: number | null; reference?: Variant }) {
  const allCommits = pics.flatMap(([, p]) => p.commits);
  const dropEnd = Math.max(...pics.map(([, p]) => p.drop.end_s ?? 0));
  const legend: LegendItem[] = pics.map(([v]) => ({ label: `${KERNEL_LABEL[v]}${v === reference ? ' (reference)' : ''}`, color: KERNEL_COLOR[v], shape: v === reference ? 'dash' : 'line' }));
  if (threshold !== null) legend.push({ label: `threshold ${fmtNum(threshold)}`, color: NEUTRAL.dark, shape: 'dash' });
  return (
    <ChartFigure
      testId="qg-dirty"
      exportName="qgroup-dirty-extents"
      title="Qgroup records queued in the running transaction, during the drop"
      legend={legend}
      note={<DirtyNote pics={pics} dropEnd={dropEnd} />}
    >
      {(width, theme) => {
        const height = Math.round(theme.fontPx * 15);
        const L = layoutDirty(
          pics.map(([v, p]) => ({ id: v, points: p.dirty })),
          allCommits,
          threshold,
          dropEnd,
          width,
          height,
          theme.fontPx,
        );
        return (
          <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Dirty extents over time">
            <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} />
            {L.threshold && <line x1={L.margin.left} x2={width - L.margin.right} y1={L.threshold.y} y2={L.threshold.y} stroke={NEUTRAL.dark} strokeWidth={2} strokeDasharray="6 5" data-hl-key="threshold" />}
            {L.paths.map((p) => (
              <path
                key={p.id}
                d={p.d}
                fill="none"
                stroke={KERNEL_COLOR[p.id as Variant]}
                strokeWidth={theme.strokePx}
                strokeDasharray={p.id === reference ? '8 6' : undefined}
                data-variant={p.id}
                data-testid={`qg-dirty-${p.id}`}
                data-hl-key="records"
              />
            ))}
          </svg>
        );
      }}
    </ChartFigure>
  );
}

/** What the dirty chart cannot show to scale: the periodic commit long after the drop. */
function DirtyNote({ pics, dropEnd }: { pics: [Variant, QgroupPicture][]; dropEnd: number }) {
  const late = pics
    .map(([v, p]) => [v, p.commits.filter((c) => c.startS > dropEnd * 3 + 1).sort((a, b) => a.startS - b.startS)[0]] as const)
    .filter(([, c]) => c !== undefined);
  if (late.length === 0) return <>Each fall to zero is a commit accounting the queued records.</>;
  return (
    <>
      The chart ends when the drop does. What is still queued then stays queued until the periodic commit,{' '}
      {late.map(([v, c], i) => (
        <span key={v}>
          {i > 0 && ', '}
          <span style={{ color: KERNEL_TEXT[v] }}>{v}</span> at {fmtNum(c!.startS)} s
        </span>
      ))}
      , off the chart's right edge: there it falls to zero.
    </>
  );
}

function TreePicture({ pic, variant }: { pic: QgroupPicture; variant: Variant }) {
  const tree = pic.tree;
  if (!tree) return null;
  return (
    <ChartFigure
      testId="qg-tree"
      exportName="qgroup-dropped-leaves"
      title={
        <>
          The {fmtNum(tree.leaves.length)} dropped leaves, shaded by the accounting call that took them (<span style={{ color: KERNEL_TEXT[variant] }}>{variant}</span>)
        </>
      }
      note={
        <>
          {fmtNum(tree.roots.length)} subvolume{tree.roots.length === 1 ? '' : 's'}, tree height {tree.height}, in drop order; the first call lightest.
          {tree.leaves.some((l) => l.shared) && ' A black outline: shared with the kept snapshot (traced by btrfs_qgroup_trace_subtree).'}
        </>
      }
    >
      {(width) => {
        const L = layoutTree(tree, pic.calls, width);
        const legend = L.legend.length <= 8 ? L.legend : [L.legend[0]!, { color: 'transparent', label: '…' }, L.legend[L.legend.length - 1]!];
        return (
          <>
            <svg className="chart" width={width} height={L.height + 4} viewBox={`0 0 ${width} ${L.height + 4}`} role="img" aria-label="Leaves of the dropped tree">
              {L.cells.map((c, i) => (
                <rect key={i} x={c.x} y={c.y} width={c.size} height={c.size} fill={c.color} stroke={c.shared ? '#000' : NEUTRAL.light} strokeWidth={c.shared ? 2 : 0.5} data-testid="qg-leaf">
                  <title>{c.title}</title>
                </rect>
              ))}
            </svg>
            <div className="chart-legend">
              {legend.map((l) => (
                <span key={l.label}>
                  {l.color !== 'transparent' && (
                    <svg width="14" height="14" aria-hidden="true">
                      <rect width="14" height="14" fill={l.color} stroke={NEUTRAL.light} />
                    </svg>
                  )}{' '}
                  {l.label}
                </span>
              ))}
            </div>
          </>
        );
      }}
    </ChartFigure>
  );
}

function Breakdown({ pic }: { pic: QgroupPicture }) {
  const b = pic.breakdown;
  const s = pic.structure;
  const rows: [string, string, number][] = [
    ['data_extents', 'regular data extents (dropped refs)', b.data_extents ?? 0],
    ['leaves', 'freed subvolume leaves', b.leaves ?? 0],
    ['nodes', 'freed nodes and roots', b.nodes ?? 0],
    ['parent_cows', 'parent fs tree blocks COWed by the deletes', b.parent_cows ?? 0],
    ['shared_subtree', 'traced under shared subtrees', b.shared_subtree ?? 0],
  ];
  const total = rows.reduce((a, r) => a + r[2], 0);
  return (
    <figure className="figure" data-testid="qg-breakdown">
      <figcaption className="figure-head">
        <span className="chart-title">
          Where the {fmtNum(total)} records come from <Tag kind="simulated" />
        </span>
      </figcaption>
      <table className="metrics">
        <tbody>
          {rows.map(([k, label, v]) => (
            <tr key={k} data-testid={`qg-rec-${k}`}>
              <th scope="row">{label}</th>
              <td className="num">{fmtNum(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="chart-note prose muted">
        {fmtNum(s.subvols)} subvolumes × {fmtNum(s.files_per_subvol)} files; {fmtNum(s.inline_files)} stored inline (max_inline={fmtNum(s.max_inline)}); {fmtNum(s.leaves_per_subvol)} leaves and{' '}
        {fmtNum(s.nodes_per_subvol)} node(s) per subvolume. One record per bytenr per transaction. The RFC's five calls at 4K need 16,385 to 20,480 records: the count with its 2 KiB files as extents
        (max_inline below 2048); with the kernel's default they are inline and the count is about 10,000.
      </p>
    </figure>
  );
}

const SWEEP_LEGEND = (series: { id: string; label: string; dash?: string }[]): LegendItem[] =>
  series.map((s) => ({ id: s.id, label: s.label, color: KERNEL_COLOR.after, shape: s.dash ? 'dash' : 'line' }));

/** The threshold sweep: several runs of `after`, run by the app (registry: THRESHOLD_SWEEP). */
function Sweep({ sweep }: { sweep: SweepHandle<SweepRow> }) {
  const { rows, state, err, run, stop } = sweep;
  return (
    <ChartFigure
      testId="qg-sweep"
      exportName="qgroup-threshold-sweep"
      data={{ state }}
      title={<>Threshold sweep: the patched kernel at {SWEEP_THRESHOLDS.join(', ')} dirty extents</>}
      actions={
        <SweepButton
          state={state}
          done={rows.length}
          total={sweep.total}
          label="Run sweep"
          testId="qg-sweep-run"
          onRun={run}
          onStop={stop}
        />
      }
      legend={rows.length > 0 ? SWEEP_LEGEND([...layoutSweep(rows, 'counts', 300, 200).series, ...layoutSweep(rows, 'ms', 300, 200).series]) : undefined}
      note="The 8K, 2K and 1K rows of the RFC are withheld: these points are the model's predictions. The total stays flat while the longest call falls with the threshold; the price is the extra commits."
    >
      {(width, theme) => {
        const pw = Math.max(260, Math.floor(width >= 640 ? (width - 16) / 2 : width));
        const height = Math.round(theme.fontPx * 14);
        return (
          <>
            {err && <p className="error">{err}</p>}
            <div style={{ display: 'flex', flexWrap: 'wrap', gap: '16px' }}>
              {rows.length > 0 &&
                (['counts', 'ms'] as const).map((which) => {
                  const L = layoutSweep(rows, which, pw, height, theme.fontPx);
                  return (
                    <svg key={which} className="chart" style={{ width: pw }} width={pw} height={height} viewBox={`0 0 ${pw} ${height}`} role="img" aria-label={`sweep ${which}`} data-testid={`qg-sweep-${which}`}>
                      <Axes {...L} xTitle={L.xTitle} yTitle={L.yTitle} />
                      {L.series.map((s) => (
                        <PointSeries key={s.id} d={s.d} dash={s.dash} color={KERNEL_COLOR.after} points={s.points} testId={`qg-sweep-pt-${s.id}`} title={(p) => `${s.label}: ${fmtNum(p.v)}`} />
                      ))}
                    </svg>
                  );
                })}
            </div>
            {rows.length > 0 && (
              <table className="metrics prose" data-testid="qg-sweep-table">
                <ColumnHeads cols={['threshold', 'calls', 'commits', 'average call', 'longest call', 'all calls']} />
                <tbody>
                  {rows.map((r) => (
                    <tr key={String(r.threshold)} data-testid="qg-sweep-row">
                      <td className="num">{Number.isFinite(r.threshold) ? fmtNum(r.threshold) : '∞'}</td>
                      <td className="num">{fmtNum(r.calls)}</td>
                      <td className="num">{fmtNum(r.commits)}</td>
                      <td className="num">{fmtMs(r.avgMs)}</td>
                      <td className="num">{fmtMs(r.maxMs)}</td>
                      <td className="num">{fmtMs(r.totalMs)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        );
      }}
    </ChartFigure>
  );
}

export function QgroupView(props: ViewProps) {
  const { params, runs, reference } = props;
  const sweep = sweepOf<SweepRow>(props, 'threshold');
  const variants = (['before', 'after'] as Variant[]).filter((v) => runs[v]);
  if (variants.length === 0) return null;
  const pics = variants.map((v) => [v, readQgroupDetails(runs[v]?.details)] as [Variant, QgroupPicture]);
  const thr = params.threshold === undefined || params.threshold === 'inf' ? null : Number(params.threshold);
  // the tree and the breakdown: the run the page is about (a lesson's own kernel, not its reference)
  const [mainV, main] = pics.find(([v]) => v !== reference && v === 'after') ?? pics.find(([v]) => v !== reference) ?? pics[0]!;
  const yMaxMs = longestCommitMs(...pics.map(([, p]) => p.commits));
  return (
    <section className="qgroup-view" data-testid="qgroup-view">
      <div className="pair-grid">
        {pics.map(([v, p]) => (
          <CommitTimeline key={v} pic={p} variant={v} yMaxMs={yMaxMs} reference={v === reference} />
        ))}
      </div>
      <div className="pair-grid">
        <DirtyChart pics={pics} threshold={runs.after ? thr : null} reference={reference} />
        <TreePicture pic={main} variant={mainV} />
      </div>
      <Breakdown pic={main} />
      {sweep && <Sweep sweep={sweep} />}
    </section>
  );
}
