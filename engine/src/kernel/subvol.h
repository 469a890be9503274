/*
 * subvol.h - subvolumes and snapshots: create, snapshot (shared tree
 * blocks), delete (unlink from the parent, orphan the root), and the
 * cleaner kthread's btrfs_drop_snapshot loop that frees a deleted tree
 * leaf by leaf.
 *
 * The drop (models btrfs_drop_snapshot with walk_down_tree/walk_up_tree):
 * each iteration walks down to the next leaf and frees it, then walks up,
 * freeing every node whose last child went. For an unshared leaf that
 * means: the data refs of its regular file extents are dropped (one
 * qgroup record per data extent, inline extents give none),
 * btrfs_qgroup_trace_leaf_items (all duplicates by then), and the tree
 * block itself (one record). A child still shared with another tree (a
 * kept snapshot) is not entered: btrfs_qgroup_trace_subtree traces
 * everything under it and only this tree's reference is dropped. After
 * each iteration drop_progress is recorded and, when
 * btrfs_should_end_transaction says so, the root item is updated and the
 * handle ended (5.10), or, with the RFC (the fs's patch
 * P_002_QGROUP_DIRTY_THRESHOLD), the transaction is committed if
 * nr_dirty_extents reached the threshold (trans_should_commit).
 */
#ifndef SUBVOL_H
#define SUBVOL_H

#include <stdint.h>

#include "qgroup.h"
#include "strbuf.h"
#include "trans.h"

typedef struct sv_pic_leaf {
	uint64_t bytenr;
	uint16_t nritems;
	uint16_t data;        /* regular file extent items */
	uint16_t fill;        /* per mille of the leaf's bytes */
	uint8_t shared;       /* still shared with a kept snapshot */
	uint64_t transid;     /* transaction that freed it (0: not yet) */
	simtime_t freed_at;
} sv_pic_leaf;

#define SV_PIC_MAX 4096
#define SV_PIC_ROOTS 64

typedef struct subvol_ctx {
	fs_info *fs;
	trans_mgr *tm;
	qgroup_ctx *q;
	/* fs_info->dead_roots */
	struct btrfs_root **dead;
	int ndead, dcap, next;
	/* the cleaner and its drop state */
	task *cleaner;
	int cleaner_idle;             /* blocked waiting for work */
	struct btrfs_root *cur;
	bt_node *nodes[BT_MAX_LEVEL];
	int slots[BT_MAX_LEVEL];
	int level, top, started;
	trans_handle h;
	int have_handle, committing;
	bt_key drop_progress;
	int drop_level;
	/* what the drop did */
	uint64_t leaves_dropped, nodes_dropped, shared_skipped, iterations;
	uint64_t handles_ended, threshold_commits, roots_dropped;
	uint64_t blocks_total;        /* blocks of the queued trees (progress) */
	simtime_t drop_start, drop_end;
	int drop_started;
	/* a picture of the dropped trees: their leaves in drop order, and for
	 * each the transaction (and time) whose records freed it */
	sv_pic_leaf *pic;
	int npic, pic_cap, pic_next;
	uint64_t pic_root;            /* the first tree dropped */
	int pic_height, pic_nodes;    /* its height; nodes of all trees */
	uint64_t picroots[SV_PIC_ROOTS][3]; /* root id, first leaf, leaves */
	int npicroots;
	/* called when the cleaner runs out of dead roots */
	void (*on_idle)(void *ctx, simtime_t at);
	void *idle_ctx;
	int failed;                   /* a LAB_E* from the cleaner, or 0 */
} subvol_ctx;

int subvol_init(subvol_ctx *sc, fs_info *fs, trans_mgr *tm, qgroup_ctx *q);
void subvol_destroy(subvol_ctx *sc);

/* Create a subvolume named name in directory dir of parent (models
 * btrfs_mksubvol); its qgroup is created when quota is on. */
int subvol_create(subvol_ctx *sc, task *t, struct btrfs_root *parent,
		  uint64_t dir, const char *name, struct btrfs_root **out);
/* Snapshot src into a new root sharing all of src's blocks (models
 * create_pending_snapshot: btrfs_copy_root). Not linked into a directory.
 * With quota on, the new qgroup is filled at the next commit. */
int subvol_snapshot(subvol_ctx *sc, task *t, struct btrfs_root *src,
		    struct btrfs_root **out);
/* Delete a subvolume inside handle h (models btrfs_delete_subvolume):
 * remove its DIR_ITEM/DIR_INDEX in the parent directory and its
 * ROOT_REF/ROOT_BACKREF, update the parent directory inode, set the root's
 * refs to 0, add an orphan item for it, queue it for the cleaner, and
 * evict its cached inodes (btrfs_prune_dentries). A snapshot left unlinked by subvol_snapshot has no name (name may be
 * NULL): only the orphan item and the queueing. */
int subvol_delete(subvol_ctx *sc, trans_handle *h, struct btrfs_root *root,
		  const char *name);
/* Spawn the cleaner kthread; tm->wake_cleaner is pointed at it. */
int subvol_cleaner_start(subvol_ctx *sc, simtime_t at);
/* Wake the cleaner if it is idle (models wake_up_process(cleaner)). */
void subvol_wake_cleaner(void *ctx, simtime_t at);
/* The picture of the dropped trees as JSON (null before the first). */
void subvol_pic_json(const subvol_ctx *sc, strbuf *out);
/* Progress of the drops queued so far, in [0,1]. */
double subvol_drop_progress(const subvol_ctx *sc);

#endif /* SUBVOL_H */
