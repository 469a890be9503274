/* pick.ts - the tree the bonnie replay shows first: the subvolume (fs
 * tree 5), whose leaves an fsync read-locks while it copies the inode's
 * and the directory's items into the log. */
import { findTree, type ReplayState, type TreeInfo } from '../../model/replay';

export function subvolTree(s: ReplayState): TreeInfo | undefined {
  return findTree(s, 1, 5);
}
