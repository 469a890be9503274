/*
 * QgroupView.tsx - seed 002, "dropping subvolumes with quota on": side by
 * side, the commit timeline (each commit a bar split into its phases, the
 * qgroup accounting in orange, with its record count), the dirty-extent
 * count rising and falling, the first dropped subvolume's leaves coloured
 * by the accounting call that took their records, and a threshold sweep
 * run through the engine worker. Drawing only: model.ts lays it all out.
 */
import { engine } from '../../app/engine';
import { SweepButton } from '../../app/SweepButton';
import { tracked, useSweep } from '../../app/useSweep';
import { useWidth } from '../../app/useWidth';
import { Axes } from '../Axes';
import { ColumnHeads, PointSeries } from '../SweepParts';
import { Tag } from '../../app/Results';
import type { RunResult, Variant } from '../../engine/types';
import { fmtNum } from '../../model/format';
import type { ViewProps } from '../types';
import { VARIANT_COLOR, VARIANT_LABEL } from '../types';
import {
  MARGIN,
  PHASES,
  PHASE_COLOR,
  PHASE_LABEL,
  SWEEP_THRESHOLDS,
  fmtMs,
  layoutCommits,
  layoutDirty,
  layoutSweep,
  layoutTree,
  readQgroupDetails,
  sweepRow,
  type QgroupPicture,
  type SweepRow,
} from './model';

const GRID: React.CSSProperties = { display: 'grid', gridTemplateColumns: 'repeat(auto-fit, minmax(360px, 1fr))', gap: '1rem' };

function CommitTimeline({ pic, variant }: { pic: QgroupPicture; variant: Variant }) {
  const [box, width] = useWidth<HTMLDivElement>(420);
  const height = 240;
  const L = layoutCommits(pic.commits, width, height);
  return (
    <figure className="figure" data-testid={`qg-commits-${variant}`}>
      <figcaption>
        <strong style={{ color: VARIANT_COLOR[variant] }}>{VARIANT_LABEL[variant]}</strong>: each commit from the delete on, split into its phases; the number on a bar is the records it accounted
      </figcaption>
      <div ref={box} className="chart-box">
        <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Commit timeline">
          <Axes margin={MARGIN} width={width} height={height} xTicks={L.bars.map((b) => ({ pos: b.x + b.width / 2, label: b.label }))} yTicks={L.yTicks} xTitle="commit (ends at simulated time)" yTitle="commit duration" />
          {L.bars.map((b) => (
            <g key={b.index} data-testid="qg-commit-bar" data-records={b.records}>
              {b.segments.map((s) => (
                <rect key={s.phase} x={b.x} y={s.y} width={b.width} height={s.height} fill={PHASE_COLOR[s.phase]}>
                  <title>
                    {PHASE_LABEL[s.phase]}: {fmtMs(s.ms)}
                  </title>
                </rect>
              ))}
              <text x={b.x + b.width / 2} y={(b.segments[b.segments.length - 1]?.y ?? 0) - 4} textAnchor="middle" className="marker-label">
                {L.bars.length > 3 ? fmtNum(b.records) : `${fmtNum(b.records)} rec · ${fmtMs(b.totalMs)}`}
              </text>
              <title>
                {fmtNum(b.records)} records accounted; commit {fmtMs(b.totalMs)}
              </title>
            </g>
          ))}
        </svg>
      </div>
      <div className="chart-legend" style={{ flexDirection: 'row', flexWrap: 'wrap', gap: '0.75rem' }}>
        {PHASES.map((p) => (
          <span key={p}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={PHASE_COLOR[p]} />
            </svg>{' '}
            {PHASE_LABEL[p]}
          </span>
        ))}
      </div>
    </figure>
  );
}

function DirtyChart({ pics, threshold }: { pics: [Variant, QgroupPicture][]; threshold: number | null }) {
  const [box, width] = useWidth<HTMLDivElement>(420);
  const height = 240;
  const allCommits = pics.flatMap(([, p]) => p.commits);
  const L = layoutDirty(
    pics.map(([v, p]) => ({ id: v, points: p.dirty })),
    allCommits,
    threshold,
    Math.max(...pics.map(([, p]) => p.drop.end_s ?? 0)),
    width,
    height,
  );
  return (
    <figure className="figure" data-testid="qg-dirty">
      <figcaption>
        <code>nr_dirty_extents</code> of the running transaction during the drop
      </figcaption>
      <div ref={box} className="chart-box">
        <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label="Dirty extents over time">
          <Axes margin={MARGIN} width={width} height={height} xTicks={L.xTicks} yTicks={L.yTicks} xTitle="simulated time since the delete" yTitle="queued qgroup records" />
          {L.threshold && (
            <g>
              <line x1={MARGIN.left} x2={width - MARGIN.right} y1={L.threshold.y} y2={L.threshold.y} stroke={VARIANT_COLOR.after} strokeDasharray="5 4" />
              <text x={width - MARGIN.right} y={L.threshold.y - 4} textAnchor="end" className="marker-label">
                {L.threshold.label}
              </text>
            </g>
          )}
          {L.paths.map((p) => (
            <path key={p.id} d={p.d} fill="none" stroke={VARIANT_COLOR[p.id as Variant]} strokeWidth={2.5} data-testid={`qg-dirty-${p.id}`} />
          ))}
        </svg>
      </div>
      <p className="muted">
        {L.lateCommitS !== null
          ? `The drop ends at the right edge; what is still queued waits for the periodic commit at ${L.lateCommitS.toFixed(1)} s (not to scale).`
          : 'Each fall to zero is a commit accounting the queued records.'}
      </p>
    </figure>
  );
}

function TreePicture({ pic }: { pic: QgroupPicture }) {
  const [box, width] = useWidth<HTMLDivElement>(420);
  const tree = pic.tree;
  if (!tree) return null;
  const L = layoutTree(tree, pic.calls, width);
  return (
    <figure className="figure" data-testid="qg-tree">
      <figcaption>
        The dropped trees' {tree.leaves.length} leaves ({tree.roots.length} subvolume{tree.roots.length === 1 ? '' : 's'}, height {tree.height}, {tree.nodes} node{tree.nodes === 1 ? '' : 's'}), in drop order, coloured by the accounting call that took their records
      </figcaption>
      <div ref={box} className="chart-box">
        <svg className="chart" width={width} height={L.height + 4} viewBox={`0 0 ${width} ${L.height + 4}`} role="img" aria-label="Leaves of the dropped tree">
          {L.cells.map((c, i) => (
            <rect key={i} x={c.x} y={c.y} width={c.size} height={c.size} fill={c.color} stroke={c.shared ? '#000' : 'none'} strokeWidth={c.shared ? 2 : 0} data-testid="qg-leaf">
              <title>{c.title}</title>
            </rect>
          ))}
        </svg>
      </div>
      <div className="chart-legend" style={{ flexDirection: 'row', flexWrap: 'wrap', gap: '0.75rem' }}>
        {L.legend.map((l) => (
          <span key={l.label}>
            <svg width="12" height="12" aria-hidden="true">
              <rect width="12" height="12" fill={l.color} />
            </svg>{' '}
            {l.label}
          </span>
        ))}
        {tree.leaves.some((l) => l.shared) && <span>black outline: shared with the kept snapshot (traced by btrfs_qgroup_trace_subtree)</span>}
      </div>
    </figure>
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
      <figcaption>
        Where the {fmtNum(total)} records come from <Tag kind="simulated" />
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
      <p className="muted">
        {fmtNum(s.subvols)} subvolumes × {fmtNum(s.files_per_subvol)} files; {fmtNum(s.inline_files)} stored inline (max_inline={fmtNum(s.max_inline)}); {fmtNum(s.leaves_per_subvol)} leaves and {fmtNum(s.nodes_per_subvol)} node(s) per subvolume. One record per bytenr per transaction: the leaf's own
        trace of its items finds its data extents already queued. The RFC's five calls at 4K need 16,385 to 20,480 records: the count with its 2 KiB files as extents (max_inline below 2048); with the kernel's default they are inline and the count is about 10,000.
      </p>
    </figure>
  );
}

/** The threshold sweep: several runs of `after` through the worker. */
function Sweep({ params, seed }: { params: Record<string, string>; seed: number }) {
  const [boxA, wA] = useWidth<HTMLDivElement>(360);
  const height = 230;
  const { rows, state, err, run, stop } = useSweep('qgroup-threshold', SWEEP_THRESHOLDS, async (t: string, onRun): Promise<SweepRow> => {
    const r: RunResult = await tracked(engine.run({ experiment: 'qgroup-drop', variant: 'after', params: { ...params, threshold: t }, seed }), onRun);
    return sweepRow(t, r.metrics);
  }, JSON.stringify([{ ...params, threshold: undefined }, seed])); // the sweep sets threshold itself
  const pw = Math.max(280, Math.floor(wA >= 640 ? (wA - 16) / 2 : wA));
  const panels = (['counts', 'ms'] as const).map((which) => ({ which, L: layoutSweep(rows, which, pw, height) }));
  return (
    <figure className="figure" data-testid="qg-sweep" data-state={state}>
      <figcaption>
        Threshold sweep (patched kernel, these parameters, seed {seed}): thresholds {SWEEP_THRESHOLDS.join(', ')}{' '}
        <SweepButton state={state} done={rows.length} total={SWEEP_THRESHOLDS.length} label="Run sweep" testId="qg-sweep-run" onRun={() => void run()} onStop={stop} />
      </figcaption>
      {err && <p className="error">{err}</p>}
      <div ref={boxA} className="chart-box" style={{ display: 'flex', flexWrap: 'wrap', gap: '16px' }}>
        {rows.length > 0 &&
          panels.map(({ which, L }) => (
            <svg key={which} className="chart" style={{ width: pw }} width={pw} height={height} viewBox={`0 0 ${pw} ${height}`} role="img" aria-label={`sweep ${which}`} data-testid={`qg-sweep-${which}`}>
              <Axes margin={MARGIN} width={pw} height={height} xTicks={L.xTicks} yTicks={L.yTicks} xTitle="threshold (dirty extents)" yTitle={which === 'counts' ? 'count (log)' : 'ms (log)'} />
              {L.series.map((s) => (
                <PointSeries key={s.id} d={s.d} color={s.color} points={s.points} testId={`qg-sweep-pt-${s.id}`} title={(p) => `${s.label}: ${fmtNum(p.v)}`} />
              ))}
            </svg>
          ))}
      </div>
      {rows.length > 0 && (
        <table className="metrics" data-testid="qg-sweep-table">
          <ColumnHeads cols={['threshold', 'calls', 'commits', 'avg', 'worst', 'total']} />
          <tbody>
            {rows.map((r) => (
              <tr key={String(r.threshold)} data-testid="qg-sweep-row">
                <td className="num">{Number.isFinite(r.threshold) ? r.threshold : '∞'}</td>
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
      <div className="chart-legend" style={{ flexDirection: 'row', flexWrap: 'wrap', gap: '0.75rem' }}>
        {panels.flatMap(({ L }) => L.series).map((s) => (
          <span key={s.id}>
            <svg width="20" height="10" aria-hidden="true">
              <line x1="0" x2="20" y1="5" y2="5" stroke={s.color} strokeWidth="3" />
            </svg>{' '}
            {s.label}
          </span>
        ))}
      </div>
      <p className="muted">The 8K, 2K and 1K rows of the RFC are withheld: these points are the model's predictions. The total stays flat while the worst call falls with the threshold; the price is the extra commits.</p>
    </figure>
  );
}

export function QgroupView({ params, runs, seed }: ViewProps) {
  const variants = (['before', 'after'] as Variant[]).filter((v) => runs[v]);
  if (variants.length === 0) return null;
  const pics = variants.map((v) => [v, readQgroupDetails(runs[v]?.details)] as [Variant, QgroupPicture]);
  const thr = params.threshold === undefined || params.threshold === 'inf' ? null : Number(params.threshold);
  const main = pics[pics.length - 1]![1];
  return (
    <section className="qgroup-view" data-testid="qgroup-view" style={{ marginBottom: '1rem' }}>
      <div style={GRID}>
        {pics.map(([v, p]) => (
          <CommitTimeline key={v} pic={p} variant={v} />
        ))}
        <DirtyChart pics={pics} threshold={runs.after ? thr : null} />
        <TreePicture pic={main} />
        <Breakdown pic={main} />
      </div>
      <div style={{ marginTop: '1rem' }}>
        <Sweep params={params} seed={seed ?? 1} />
      </div>
    </section>
  );
}
