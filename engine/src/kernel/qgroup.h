/*
 * qgroup.h - quota groups: enable, rescan, level-0 qgroups per subvolume
 * (and optional parents), the dirty-extent records traced while trees
 * change, and their accounting at commit.
 *
 * Tracing (models btrfs_qgroup_trace_extent / _nolock / _post): with quota
 * on, every reference change of an fs-tree extent inserts a record for its
 * bytenr into the running transaction's dirty_extent_root, unless one is
 * there already; a new record's old_roots comes from a backref walk at
 * once, and that walk's CPU is charged to the task doing the change.
 *
 * Accounting (models btrfs_qgroup_account_extents): at commit, for each
 * record in bytenr order: a backref walk for new_roots, then
 * btrfs_qgroup_account_extent compares old and new root sets through the
 * qgroup hierarchy and adjusts rfer/excl; nr_dirty_extents is decremented
 * per record. Each call's record count and duration are logged.
 *
 * The qgroup context also owns the reachability index (backref.h), fed by
 * fs hooks whether or not quota is enabled, so a rescan sees every extent.
 */
#ifndef QGROUP_H
#define QGROUP_H

#include <stdint.h>

#include "backref.h"
#include "delayed_ref.h"
#include "items.h"
#include "trans.h"

#define QG_MAX_PARENTS 4
#define QG_MAX_POINTS 2048

typedef struct qgroup {
	uint64_t id;           /* level << 48 | subvolume id */
	int64_t rfer, excl;    /* bytes */
	uint64_t parents[QG_MAX_PARENTS];
	int nparents;
	uint64_t old_refcnt, new_refcnt; /* seq-relative, as btrfs keeps them */
} qgroup;

static inline uint64_t qgroup_mkid(int level, uint64_t id) { return ((uint64_t)level << 48) | id; }

/* One call of btrfs_qgroup_account_extents. */
typedef struct qg_call {
	uint64_t transid;
	uint64_t records;
	simtime_t start;
	uint64_t ns;
	uint64_t walk_nodes; /* backref-walk nodes for new_roots */
} qg_call;

typedef struct qgroup_ctx {
	fs_info *fs;
	trans_mgr *tm;
	backref_idx br;
	int enabled;
	qgroup *qgs;           /* sorted by id */
	int nqgs, qcap;
	uint64_t seq;          /* fs_info->qgroup_seq */
	task *cur;             /* the task tree changes are charged to */
	uint64_t dropping;     /* root being dropped (to classify records) */
	int in_subtree;        /* inside btrfs_qgroup_trace_subtree */
	uint64_t rec_by_src[QREC_NSRC];
	uint64_t old_walk_nodes, old_walks;
	qg_call *calls;
	int ncalls, ccap;
	uint64_t last_insert_ns; /* CPU of the last record insert (tests) */
	int s_dirty;
	/* nr_dirty_extents over time, bounded (halved, stride doubled, when full) */
	double pt_t[QG_MAX_POINTS], pt_v[QG_MAX_POINTS];
	int npts, pstride, pskip;
} qgroup_ctx;

/* Set up over fs and tm: registers the hooks and the accounting step. */
int qgroup_init(qgroup_ctx *q, fs_info *fs, trans_mgr *tm);
void qgroup_destroy(qgroup_ctx *q);

/* Create a qgroup (level 0 for a subvolume) / relate child to parent. */
int qgroup_create(qgroup_ctx *q, uint64_t id);
int qgroup_add_relation(qgroup_ctx *q, uint64_t child, uint64_t parent);
qgroup *qgroup_find(qgroup_ctx *q, uint64_t id);

/* Models btrfs_quota_enable: a level-0 qgroup for every fs tree, quota on
 * (the caller commits, as the kernel does). */
int qgroup_enable(qgroup_ctx *q, task *t);
/* Models the rescan worker: zero every counter and account every extent
 * from scratch (old_roots empty, new_roots from a backref walk). */
int qgroup_rescan(qgroup_ctx *q, task *t);

/* Trace one extent (models btrfs_qgroup_trace_extent). src classifies the
 * record (QREC_*). Returns 0 inserted, 1 duplicate, or negative. */
int qgroup_trace_extent(qgroup_ctx *q, uint64_t bytenr, uint64_t num_bytes, int src);
/* Models btrfs_qgroup_trace_leaf_items: one trace per regular data extent
 * of the leaf (inline extents and holes are skipped). */
int qgroup_trace_leaf_items(qgroup_ctx *q, const bt_node *leaf);
/* Models btrfs_qgroup_trace_subtree: trace every block under (and
 * including) blk and every data extent in its leaves. */
int qgroup_trace_subtree(qgroup_ctx *q, const bt_node *blk);

/* Models btrfs_qgroup_account_extent: update rfer/excl for one extent. */
int qgroup_account_extent(qgroup_ctx *q, uint64_t num_bytes,
			  const rootset *old_roots, const rootset *new_roots);
/* Models btrfs_qgroup_account_extents for a transaction; returns the
 * records accounted or a negative error. Installed as tm->account. */
int qgroup_account_extents(void *ctx, transaction *trans, task *t);

/* Sample nr_dirty_extents of the running transaction at time at (s). */
void qgroup_sample(qgroup_ctx *q, simtime_t at, int force);

/* Whether root id is a subvolume tree (models is_fstree). */
static inline int qgroup_is_fstree(uint64_t id)
{
	return id == BTRFS_FS_TREE_OBJECTID ||
	       (id >= BTRFS_FIRST_FREE_OBJECTID && id <= BTRFS_LAST_FREE_OBJECTID);
}

/* Invariant check: every level-0 qgroup's rfer/excl equals what the index
 * says (registered with check_register by qgroup_init). */
int qgroup_check(fs_info *fs, void *ctx);

#endif /* QGROUP_H */
