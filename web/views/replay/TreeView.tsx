/*
 * TreeView.tsx - a B-tree of a replayed state, drawn as btrfs's blocks:
 * nodes and leaves (a bar inside shows how full each is), the current
 * search's path, COWed / freed / shared blocks, read and write locks and
 * waiters; hover a block for its keys. A tree too wide for its leaves is a
 * window over the leaf row with a summary per level; the − / + buttons
 * zoom (fewer / more leaves), ◀ ▶ pan. See README.md in this folder.
 *
 * Colours: greys only (web/DESIGN.md: orange and blue are the two
 * kernels'); the marks are MARK below, explained by <TreeLegend>.
 */
import { useMemo, useState } from 'react';
import { fmtNum } from '../../model/format';
import { keyText, type ReplayState, type TreeInfo } from '../../model/replay';
import { layoutTree, treeName, type LaidNode } from '../../model/treeLayout';
import { GHOST, INK, labelWidth, NEUTRAL, smallPx, useChartTheme } from '../common';

/** Marks, in the greys of web/DESIGN.md (orange and blue are the kernels'
 * alone): a status is told by lightness and shape, never by a hue. */
export const MARK = {
  block: '#ffffff', // untouched since the last commit
  cowFill: NEUTRAL.light, // written in the running transaction
  edge: NEUTRAL.mid,
  fill: NEUTRAL.dark, // how full a block is
  path: INK, // the current search's path
  lock: INK, // a lock band: solid = write, hollow = read
  freed: GHOST, // freed, gone at the commit
} as const;

export interface TreeViewProps {
  state: ReplayState;
  tree: TreeInfo;
  width: number;
  /** task names, for lock holders */
  tasks?: string[];
  /** initial leaves before the tree collapses to a window */
  maxLeaves?: number;
  /** a short label for tests and screen readers */
  label?: string;
}

function nodeTitle(n: LaidNode, tasks: string[] | undefined): string {
  const kind = n.level ? `node (level ${n.level})` : 'leaf';
  const fill = `${Math.round(n.fill * 100)}% full`;
  const keys = n.nritems ? `${keyText(n.k0)} … ${keyText(n.k1)}` : 'empty';
  const marks: string[] = [];
  if (n.cowed) marks.push('written (COWed or new) in this transaction');
  if (n.freed) marks.push('freed in this transaction');
  if (n.unref) marks.push('given up to a snapshot');
  if (n.onPath) marks.push("on the current search's path");
  if (n.lock) marks.push(`${n.lock}-locked by ${n.holders.map((t) => tasks?.[t] ?? `task ${t}`).join(', ')}`);
  if (n.waitedNs > 0) marks.push(`its last locker waited ${fmtNum(n.waitedNs / 1000)} µs`);
  return `${kind} ${n.bytenr}, gen ${n.gen}: ${n.nritems} ${n.level ? 'pointers' : 'items'}, ${fill}\nkeys ${keys}${marks.length ? `\n${marks.join('; ')}` : ''}`;
}

export function TreeView({ state, tree, width, tasks, maxLeaves: initial, label }: TreeViewProps) {
  const theme = useChartTheme();
  const fs = theme.fontPx;
  // level labels sit in a gutter of their own (never over the tree's
  // lines); a leaf is never narrower than its item count in the chart font
  const small = smallPx(theme, 0.75);
  const right = 4;
  const minLeaf = Math.max(36, fs * 2.3);
  const [maxLeaves, setMaxLeaves] = useState<number | null>(initial ?? null);
  const [pan, setPan] = useState<number | null>(null);
  const [hover, setHover] = useState<LaidNode | null>(null);
  const levelGap = Math.round(fs * 3.6);
  const { L, gutter, leaves } = useMemo(() => {
    const lay = (g: number) => {
      const plotW = Math.max(120, width - g - right);
      const n = maxLeaves ?? Math.max(4, Math.floor(plotW / minLeaf));
      return { L: layoutTree(state, tree, { width: plotW, maxLeaves: n, focus: pan ?? undefined, levelGap, leafHeight: Math.round(fs * 1.7), nodeHeight: Math.round(fs * 1.3) }), gutter: g, leaves: n };
    };
    const first = lay(Math.round(fs * 5));
    // the gutter is as wide as its widest label (24 px text in focus mode)
    const need = Math.ceil(
      Math.max(
        ...first.L.levels.map((lv) =>
          Math.max(
            labelWidth(lv.level ? `level ${lv.level}` : 'leaves', small),
            labelWidth(`${fmtNum(lv.total)} · ${Math.round(lv.avgFill * 100)}%`, small),
            lv.hiddenLeft > 0 || lv.hiddenRight > 0 ? labelWidth(`◀${fmtNum(lv.hiddenLeft)} ${fmtNum(lv.hiddenRight)}▶`, small) : 0,
          ),
        ),
      ) + small * 0.6,
    );
    return need > first.gutter ? lay(need) : first;
    // state is the replay's own object: its position says when it changed
  }, [state, state.pos, tree, width, maxLeaves, minLeaf, pan, levelGap, fs, small]);
  const name = label ?? treeName(tree.id);
  const top = Math.round(fs * 1.3);
  const h = L.height + top + 6;
  return (
    <figure className="tree-view" data-testid="tree-view" data-tree={tree.id} data-leaves={L.leafTotal} data-shown={L.window[1] - L.window[0]} aria-label={`${name}: ${L.leafTotal} leaves`}>
      <div className="tree-head">
        <span className="tree-name">{name}</span>
        <span className="muted">
          {' '}
          height {L.levels.length} · {fmtNum(L.leafTotal)} leaves
          {!L.whole && ` · showing ${L.window[0] + 1}–${L.window[1]}`}
        </span>
        <span className="tree-zoom">
          <button type="button" className="btn-mini" title="Fewer leaves (zoom in)" onClick={() => setMaxLeaves(Math.max(4, Math.floor(leaves / 2)))}>
            −
          </button>
          <button type="button" className="btn-mini" title="More leaves (zoom out)" onClick={() => setMaxLeaves(Math.min(4096, leaves * 2))}>
            +
          </button>
          {!L.whole && (
            <>
              <button type="button" className="btn-mini" title="Pan left" onClick={() => setPan(Math.max(0, L.focus - Math.floor(leaves / 2)))}>
                ◀
              </button>
              <button type="button" className="btn-mini" title="Pan right" onClick={() => setPan(Math.min(L.leafTotal - 1, L.focus + Math.floor(leaves / 2)))}>
                ▶
              </button>
              {pan !== null && (
                <button type="button" className="btn-mini" title="Follow the current search" onClick={() => setPan(null)}>
                  follow
                </button>
              )}
            </>
          )}
        </span>
      </div>
      <svg className="chart tree-svg" width={width} height={h} viewBox={`0 0 ${width} ${h}`} role="img" aria-label={`${name} blocks`}>
        {L.levels.map((lv) => (
          <g key={lv.level} className="tree-level" fontSize={small}>
            <text x={0} y={top + lv.y + fs * 0.55} className="tree-level-label" data-level={lv.level}>
              <tspan x={0}>{lv.level ? `level ${lv.level}` : 'leaves'}</tspan>
              <tspan x={0} dy={fs * 0.95} className="tree-level-count">
                {fmtNum(lv.total)} · {Math.round(lv.avgFill * 100)}%
              </tspan>
              {(lv.hiddenLeft > 0 || lv.hiddenRight > 0) && (
                <tspan x={0} dy={fs * 0.95} className="tree-hidden">
                  ◀{fmtNum(lv.hiddenLeft)} {fmtNum(lv.hiddenRight)}▶
                </tspan>
              )}
            </text>
          </g>
        ))}
        <g transform={`translate(${gutter},${top})`}>
          {L.edges.map((e, i) => (
            <line
              key={i}
              x1={e.x1}
              y1={e.y1}
              x2={e.x2}
              y2={e.y2}
              stroke={e.onPath ? MARK.path : '#b8c0c8'}
              strokeWidth={e.onPath ? 2.5 : 1}
              strokeDasharray={e.ghost ? '3 3' : undefined}
            />
          ))}
          {L.nodes.map((n) => {
            const x = n.x - n.w / 2;
            const ghost = n.freed;
            return (
              <g
                key={n.bytenr}
                className={`tree-block${n.onPath ? ' on-path' : ''}${n.cowed ? ' cowed' : ''}${ghost ? ' freed' : ''}${n.lock ? ` lock-${n.lock}` : ''}`}
                data-bytenr={n.bytenr}
                data-level={n.level}
                data-w={Math.round(n.w)}
                onMouseEnter={() => setHover(n)}
                onMouseLeave={() => setHover(null)}
              >
                <title>{nodeTitle(n, tasks)}</title>
                <rect
                  x={x}
                  y={n.y}
                  width={n.w}
                  height={n.h}
                  rx={2}
                  fill={ghost ? '#fff' : n.cowed ? MARK.cowFill : MARK.block}
                  stroke={n.onPath ? MARK.path : ghost ? MARK.freed : MARK.edge}
                  strokeWidth={n.onPath ? 3 : 1.2}
                  strokeDasharray={ghost ? '3 2' : undefined}
                />
                {!ghost && n.w >= 6 && <rect x={x + 1.5} y={n.y + n.h - 5} width={Math.max(0, (n.w - 3) * n.fill)} height={3.5} fill={MARK.fill} />}
                {n.lock && n.w >= 8 && (
                  <rect x={x + 1} y={n.y - 7} width={n.w - 2} height={5} rx={1} fill={n.lock === 'write' ? MARK.lock : '#fff'} stroke={MARK.lock} strokeWidth={1.2} />
                )}
                {n.waitedNs > 0 && n.w >= 10 && <Hourglass x={n.x} y={n.y - 19} />}
                {n.touched && <rect x={x - 3} y={n.y - 3} width={n.w + 6} height={n.h + 6} rx={4} fill="none" stroke="#000" strokeWidth={1} strokeDasharray="2 2" />}
                {n.w >= small * 2.2 && !ghost && (
                  <text x={n.x} y={n.y + n.h / 2 + small * 0.3} textAnchor="middle" className="tree-count" fontSize={small}>
                    {n.nritems}
                  </text>
                )}
              </g>
            );
          })}
        </g>
      </svg>
      <div className="tree-hover" data-testid="tree-hover" aria-live="polite">
        {hover ? nodeTitle(hover, tasks).split('\n').join(' · ') : 'Hover a block for its keys; the number in a block is its items.'}
      </div>
    </figure>
  );
}

/** A waiter's mark: two triangles, tip to tip (no font has one for sure). */
function Hourglass({ x, y }: { x: number; y: number }) {
  return <path d={`M${x - 4},${y} h8 l-8,10 h8 z`} fill={NEUTRAL.dark} stroke={INK} strokeWidth={0.8} className="tree-wait" />;
}

/** What the marks mean (one legend for any number of tree views). */
export function TreeLegend() {
  const sw = (fill: string, stroke: string, width = 1.2, dash?: string) => (
    <svg width={18} height={12} aria-hidden="true">
      <rect x={1} y={1} width={16} height={10} rx={2} fill={fill} stroke={stroke} strokeWidth={width} strokeDasharray={dash} />
    </svg>
  );
  const band = (fill: string) => (
    <svg width={18} height={12} aria-hidden="true">
      <rect x={1} y={3} width={16} height={6} rx={1} fill={fill} stroke={MARK.lock} strokeWidth={1.2} />
    </svg>
  );
  return (
    <div className="tree-legend">
      <span>{sw(MARK.cowFill, MARK.edge)} written in this transaction (COWed / new)</span>
      <span>{sw(MARK.block, MARK.path, 3)} the search's path</span>
      <span>{band(MARK.lock)} write-locked</span>
      <span>{band('#fff')} read-locked</span>
      <span>
        <svg width={12} height={12} aria-hidden="true">
          <Hourglass x={6} y={1} />
        </svg>{' '}
        its locker waited
      </span>
      <span>{sw('#fff', MARK.freed, 1.2, '3 2')} freed (gone at the commit)</span>
      <span>bar: how full</span>
    </div>
  );
}
