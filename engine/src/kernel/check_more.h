/*
 * check_more.h - invariant checks over the subsystems above the metadata
 * core, registered with check_register() so check_fs() runs them:
 *
 *   - qgroups against a recount from the trees: every level-0 qgroup's
 *     rfer/excl equals what a walk of the live subvolume trees says (each
 *     tree block and each regular/prealloc data extent counted once per
 *     root that reaches it; exclusive when one root does). This is
 *     independent of the reachability index qgroup_check() compares with.
 *   - the log tree: no fsync is left inside a log transaction
 *     (log_writers == 0) and no log commit is half done, for every root.
 *   - transaction handles: handles started minus handles ended equals the
 *     writers of the running transaction (no handle leaked or ended twice).
 *   - space counters: the allocator's per-kind total/used/reserved/pinned
 *     (btrfs's space_info counters) equal the sums over the block groups,
 *     and each block group's counters match the sectors its bitmap marks;
 *     with reservations on (space_fs.h), each space_info mirrors the
 *     allocator, bytes_may_use equals what its holders hold, no inode
 *     holds more than its delalloc / ordered state needs (so may_use is 0
 *     once everything is written back), and the ticket queues are sound.
 *
 * And one comparison the caller runs itself: a received subvolume against
 * the snapshot it was sent from (names, sizes, data ranges).
 */
#ifndef CHECK_MORE_H
#define CHECK_MORE_H

#include "fs.h"
#include "qgroup.h"
#include "send.h"
#include "trans.h"
#include "treelog.h"

/* Register the qgroup recount (q must outlive fs's checks). */
int check_more_qgroups(fs_info *fs, qgroup_ctx *q);
/* Register the log-tree state check. */
int check_more_treelog(fs_info *fs, treelog *tl);
/* Register the transaction-handle balance check. */
int check_more_handles(fs_info *fs, trans_mgr *tm);
/* Register the space-counter check. */
int check_more_space(fs_info *fs);

/* The check bodies (exported for tests); each returns its failures. */
int check_qgroup_recount(fs_info *fs, void *q);
int check_treelog_idle(fs_info *fs, void *tl);
int check_trans_handles(fs_info *fs, void *tm);
int check_space_counters(fs_info *fs, void *ctx);

/*
 * Compare the subvolume received by r (on r->fs) with the snapshot snap
 * of src it was sent from: every inode of the snapshot exists on the
 * receiver under the same name in the corresponding directory, with the
 * same type and size, and its data covers the same 4 KiB pages below the
 * size (the receiver writes its own extents, so only the ranges compare);
 * no other inode was received; each received file is written back (its
 * data path holds no dirty page or ordered extent: the data is in the
 * receiver's trees). name_of gives source names (send_name_fn).
 * Failures are reported on src (check_report). Returns the failure count.
 */
int check_send_received(fs_info *src, struct btrfs_root *snap, recv_ctx *r,
			send_name_fn name_of, void *name_ctx);

#endif /* CHECK_MORE_H */
