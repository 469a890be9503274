/* pick.ts - per experiment: which tree a replay shows first, and how the
 * page's other pictures follow it. */
import { findTree, type ReplayState, type TreeInfo } from '../../model/replay';
import { eventAt, opAt, type Trace } from '../../model/trace';

/** qgroup-drop: the subvolume being dropped (the lowest-numbered dead one
 * still there), else the fs tree. */
export function droppingTree(s: ReplayState): TreeInfo | undefined {
  let best: TreeInfo | undefined;
  for (const t of s.trees.values()) {
    if (t.gone || t.id < 256 || !t.root) continue;
    const root = s.blocks.get(t.root * 64 + t.fs);
    if (!root) continue;
    const dropping = s.lastOp?.kind === 'op:drop' && s.lastOp.args[1] === t.id;
    if (dropping) return t;
    if (!best || t.id < best.id) best = t;
  }
  return best ?? findTree(s, 1, 5);
}

/** sparse-cp: the page's lseek cursor (v.cursor, a fraction of the file)
 * follows the lseek the replay is in. */
export function lseekCursor(tr: Trace, pos: number): Record<string, string | undefined> {
  const op = opAt(tr, pos);
  if (!op || op.kind !== 'op:lseek') return {};
  const e = eventAt(tr, op.start - 1).args;
  if (!e.i_size) return {};
  return { cursor: String(Math.round((e.offset! / e.i_size) * 1000) / 1000) };
}
