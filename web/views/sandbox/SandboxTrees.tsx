/*
 * SandboxTrees.tsx - one kernel's trees after a sandbox command: the
 * recording replayed to the end of that command (the next command's start),
 * each tree the command touched drawn by the replay's TreeView (blocks
 * written in the running transaction filled grey, their generation on
 * hover), with the command's own counts beside the tree's name.
 */
import { useMemo, useRef } from 'react';
import { findTree, Replay, type ReplayState, type TreeInfo } from '../../model/replay';
import { extendsTrace } from '../../model/sandboxTrace';
import { opPositions, type Trace } from '../../model/trace';
import { treeName } from '../../model/treeLayout';
import type { SandboxCmd, TreeName } from '../../model/sandbox';
import { KERNEL_COLOR } from '../common';
import type { Variant } from '../../engine/types';
import { TreeView } from '../replay/TreeView';

const ROOT_ID: Record<Exclude<TreeName, 'fs' | 'log'>, number> = { extent: 2, csum: 7, root: 1 };

/** The trees of one name in a replayed state: the subvolume trees for
 * "fs" (the top one first), the log trees for "log". */
export function treesNamed(s: ReplayState, name: TreeName): TreeInfo[] {
  const live = (t: TreeInfo): boolean => !t.gone && !!t.root && s.blocks.has(t.root * 64 + t.fs);
  if (name === 'fs') {
    const out: TreeInfo[] = [];
    const top = findTree(s, 1, 5);
    if (top && live(top)) out.push(top);
    for (const t of s.trees.values()) if (t.fs === 1 && t.id >= 256 && t.id < 1e15 && live(t)) out.push(t);
    return out;
  }
  if (name === 'log') return [...s.trees.values()].filter((t) => t.fs === 1 && (t.id === -6 || t.id > 1e18) && live(t));
  const t = findTree(s, 1, ROOT_ID[name]);
  return t && live(t) ? [t] : [];
}

/** The position after command i of a recording (before command i + 1 starts). */
export function positionAfter(trace: Trace, i: number): number {
  const ops = opPositions(trace);
  return i + 1 < ops.length ? ops[i + 1]! - 1 : trace.n;
}

interface Props {
  variant: Variant;
  /** the kernel's name ("kernel 6.9") */
  label: string;
  trace: Trace;
  /** the command shown (index in the script) and its record */
  at: number;
  cmd: SandboxCmd | undefined;
  trees: TreeName[];
  width: number;
  /** this side differs from the other at this command */
  differs?: boolean;
}

export function SandboxTrees({ variant, label, trace, at, cmd, trees, width, differs }: Props) {
  // a command added to the script: the replay goes on from where it was
  const last = useRef<Replay | null>(null);
  const replay = useMemo(() => {
    const prev = last.current;
    return (last.current = prev && extendsTrace(trace) === prev.trace ? prev.extendedTo(trace) : new Replay(trace));
  }, [trace]);
  const pos = positionAfter(trace, at);
  const s = replay.stateAt(pos);
  return (
    <div className="sandbox-side" data-testid={`sandbox-side-${variant}`} data-pos={pos} style={{ borderTop: `4px solid ${KERNEL_COLOR[variant]}` }}>
      <h3 className="sandbox-side-title">
        {label}
        {differs && <span className="sandbox-differs" data-testid="sandbox-differs"> · differs here</span>}
      </h3>
      {trees.map((name) => {
        const list = treesNamed(s, name);
        const cows = cmd?.cows?.[name] ?? 0;
        const items = cmd?.items?.[name] ?? 0;
        const blocks = cmd?.blocks?.[name] ?? 0;
        return (
          <div key={name} className="sandbox-tree" data-testid={`sandbox-tree-${name}`} data-cows={cows} data-items={items} data-blocks={blocks}>
            <div className="sandbox-tree-head">
              <strong>{name} tree</strong>{' '}
              <span className="muted">
                this command: {cows} block{cows === 1 ? '' : 's'} {name === 'log' ? 'written' : 'COWed'}, items {items >= 0 ? '+' : '−'}
                {Math.abs(items)}, blocks {blocks >= 0 ? '+' : '−'}
                {Math.abs(blocks)}
              </span>
            </div>
            {list.length === 0 ? (
              <p className="muted">{name === 'log' ? 'no log tree (none since the last commit)' : 'empty'}</p>
            ) : (
              list.map((t) => <TreeView key={`${t.fs}:${t.id}`} state={s} tree={t} width={width} tasks={trace.tasks} label={treeName(t.id)} />)
            )}
          </div>
        );
      })}
    </div>
  );
}
