/* pick.ts - the tree the receive's replay shows first: the received
 * subvolume on the destination file system (the second one mounted),
 * whose leaves hold each received file's inode, ref and file extent
 * items (two EXTENT_DATA items per file before the patch, one after). */
import { findTree, type ReplayState, type TreeInfo } from '../../model/replay';

export function receivedTree(s: ReplayState): TreeInfo | undefined {
  let dst = 0;
  for (const t of s.trees.values()) dst = Math.max(dst, t.fs);
  return findTree(s, dst, 256) ?? findTree(s, dst, 5) ?? findTree(s, 1, 5);
}
