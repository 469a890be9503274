/* pick.ts - which tree a replay shows first, per experiment. */
import { findTree, type ReplayState, type TreeInfo } from '../../model/replay';

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
