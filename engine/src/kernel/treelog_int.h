/*
 * treelog_int.h - what the log's files (treelog.c, treelog_fsync.c,
 * treelog_copy.c, treelog_sync.c) share and nothing else may use.
 */
#ifndef TREELOG_INT_H
#define TREELOG_INT_H
#include "treelog.h"

/* ---- treelog_copy.c: items into the log tree */

/* The log tree of lr, made by the first log transaction after a commit
 * (start_log_trans -> btrfs_add_log_tree). */
int tl_log_tree(treelog *tl, task *t, tl_root *lr, fs_info *fs);
/* Put one item into the log tree; an item of that key already logged is
 * replaced, or with replace = 0 left as it is. */
int tl_log_put(treelog *tl, task *t, tl_root *lr, const bt_item *it, int replace);
/* Drop an inode's items of types min_type..max_type from the log before
 * logging it again (drop_inode_items). */
int tl_log_drop_inode(treelog *tl, task *t, tl_root *lr, uint64_t ino, uint8_t min_type,
		      uint8_t max_type);
/* An explicit hole [from, to) in the log (btrfs_log_holes). */
int tl_log_hole(treelog *tl, task *t, tl_fsync *f, uint64_t from, uint64_t to);
/* An inode item filled from the in-memory inode (fill_inode_item). */
bt_item tl_inode_item(const struct inode *in);
/* The name of in (of root) in dir, its INODE_REF from the subvolume
 * tree, into the log (none if the tree has none). */
int tl_log_ref(treelog *tl, task *t, tl_root *lr, struct btrfs_root *root, struct inode *in,
	       uint64_t dir);
/* A directory made in this transaction logged as existing with its name
 * (log_new_ancestors' LOG_INODE_EXISTS): its inode item from memory, its
 * ref; logged in this transaction from then on. */
int tl_log_new_dir(treelog *tl, task *t, tl_root *lr, struct btrfs_root *root, struct inode *d);
/* Copy the next leaf's worth of inode ino's items of types <= max_type
 * (leaves older than min_trans passed over); 1 when the inode has no more
 * items, 0 to continue, negative on error. */
int tl_copy_leaf(treelog *tl, task *t, tl_fsync *f, uint64_t ino, uint8_t max_type,
		 uint64_t min_trans);
/* Insert the leaf tl_copy_leaf copied into the log; 1 when the pass has no
 * more leaves, 0 to continue, negative on error. */
int tl_put_pending(treelog *tl, task *t, tl_fsync *f);
/* The fast fsync's logging: the inode item and the changed extents. */
int tl_log_fast(treelog *tl, task *t, tl_fsync *f);
/* A dir pass: its delayed items first, its queued deletions at its end,
 * its open logged range flushed; the deletion list's buffer put back. */
int tl_dir_delayed_start(treelog *tl, task *t, tl_fsync *f);
int tl_dir_delayed_end(treelog *tl, task *t, tl_fsync *f);
int tl_range_flush(treelog *tl, task *t, tl_fsync *f);
void tl_dl_del_put(treelog *tl, tl_fsync *f);

/* ---- treelog_sync.c */

/* btrfs_sync_log for a task that left the log transaction: a TASK_*. */
int tl_sync(treelog *tl, task *t, tl_fsync *f);

#endif
