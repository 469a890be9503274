/*
 * delayed_inode.h - btrfs's delayed items (fs/btrfs/delayed-inode.c, as
 * in 5.x/6.x): the changes a metadata operation does not put into the
 * subvolume tree itself but queues on the inode's delayed node, for a
 * kernel worker or the transaction commit to insert later.
 *
 * What is delayed (and what is not) in the kernel:
 *   - a new name's DIR_INDEX item (btrfs_insert_dir_item ->
 *     btrfs_insert_delayed_dir_index); its DIR_ITEM and the child's
 *     INODE_REF (and a new inode's INODE_ITEM, btrfs_create_new_inode)
 *     are inserted directly;
 *   - a removed name's DIR_INDEX deletion (__btrfs_unlink_inode ->
 *     btrfs_delete_delayed_dir_index): cancels the queued insertion if the
 *     name was never inserted, else queues a deletion; the DIR_ITEM and
 *     INODE_REF are deleted directly;
 *   - every INODE_ITEM update of a subvolume inode (btrfs_update_inode ->
 *     btrfs_delayed_update_inode): the node keeps the latest copy.
 *
 * The delayed root counts its items (one per queued insertion or deletion,
 * one per dirty inode). btrfs_balance_delayed_items, called at the end of
 * create, unlink and btrfs_dirty_inode: at >= BTRFS_DELAYED_BACKGROUND
 * items it queues the async worker (btrfs_async_run_delayed_root) for a
 * batch of BTRFS_DELAYED_BATCH nodes; at >= BTRFS_DELAYED_WRITEBACK it
 * queues an unbounded run and the caller waits until the worker finished
 * a batch of items or the count fell below the background mark. The
 * worker takes prepared nodes oldest first, joins the transaction for
 * each, and inserts its items into the subvolume tree through the B-tree
 * (write locks on the leaves: it waits on a leaf an fsync holds
 * read-locked); it stops once fewer than BACKGROUND / 2 items remain.
 * A transaction commit runs every node (btrfs_run_delayed_items) before it
 * waits for the writers and again once they left. An fsync of a directory
 * logs the directory's delayed items straight from its node (6.1+,
 * "btrfs: use delayed items when logging a directory"; treelog_copy.c).
 *
 * Attached to an fs (fs->slot[FS_SLOT_DELAYED]) the VFS operations and
 * fs_inode_update use it; without one they change the tree directly, as
 * every experiment did before it existed.
 */
#ifndef DELAYED_INODE_H
#define DELAYED_INODE_H

#include <stdint.h>

#include "btree.h"
#include "ebmem.h"
#include "fs.h"
#include "sim.h"
#include "strbuf.h"
#include "trans.h"

/* fs/btrfs/delayed-inode.c */
#define BTRFS_DELAYED_WRITEBACK 512
#define BTRFS_DELAYED_BACKGROUND 128
#define BTRFS_DELAYED_BATCH 16
/* btrfs_workqueue_normal_congested: more than 2 x thresh works pending
 * (the delayed-meta workqueue's thresh is DFT_THRESHOLD, 32) */
#define DL_WQ_CONGESTED 64
#define DL_MAX_WORKS 128

/* A queued insertion: a DIR_INDEX item of the node's directory. */
typedef struct dl_ins {
	uint64_t index;
	uint32_t size;
	bt_item it;
} dl_ins;

/* A queued deletion: a DIR_INDEX item of the node's directory. */
typedef struct dl_del {
	uint64_t index;
	int logged;               /* taken by a log (btrfs_delayed_item.logged):
				   * a later fsync in the transaction does not
				   * log it again */
} dl_del;

/* struct btrfs_delayed_node: one inode's queued changes. */
typedef struct dl_node {
	struct btrfs_root *root;
	struct inode *inode;
	uint64_t ino;
	dl_ins *ins;              /* sorted by index */
	int nins, cins;
	dl_del *del;              /* sorted by index */
	int ndel, cdel;
	int inode_dirty;
	bt_item inode_item;       /* the latest btrfs_update_inode */
	struct dl_node *prev, *next; /* the prepare list (oldest first) */
	struct dl_node *all_next;
	int flushing;             /* a step is inserting it */
} dl_node;

/* A wait for a subvolume block lock by a task inserting delayed items. */
enum { DLW_WORKER = 0, DLW_COMMIT = 1, DLW_OTHER = 2 };
typedef struct dl_wait_ev {
	int task;
	int who;                  /* DLW_* */
	uint64_t ino;             /* the delayed node being inserted */
	uint64_t bytenr;          /* the block waited on */
	int level;
	simtime_t from, to;
	int fsync_leaf;           /* an fsync held it read-locked (treelog) */
	uint64_t fsync_ino;       /* the inode that fsync was logging */
} dl_wait_ev;

typedef struct delayed_root {
	sim *sim;
	fs_info *fs;
	trans_mgr *tm;            /* optional: the worker joins transactions */
	dl_node *head, *tail;     /* prepared nodes */
	dl_node *all;             /* every node (freed at destroy) */
	lab_pool node_pool;       /* where they live: one a file, all freed
				   * at once at destroy */
	uint64_t items;           /* delayed_root->items */
	uint64_t dirty_nodes;     /* nodes holding an inode item update */
	uint64_t items_seq;
	/* the worker (a delayed-meta kworker) and its queued works */
	task *worker;
	waitq worker_wq;
	int works[DL_MAX_WORKS];  /* ring of each work's nr */
	int nworks, work_head;
	int active, cur_nr, cur_done;
	trans_handle wh;
	int wh_held;
	int stop;
	waitq bal_wq;             /* callers of balance waiting for the worker */
	dl_node *flush_node;      /* the node a step is inserting */
	task *flush_task;
	int flush_who;
	bt_item *batch;           /* a flush's batch of insertions */
	int batch_cap;
	/* counters */
	uint64_t queued_ins, queued_del, cancelled, inode_updates;
	uint64_t inserted, deleted, inodes_written;
	uint64_t works_queued, works_run, nodes_run, commit_runs;
	uint64_t balance_waits, congested;
	uint64_t waits, fsync_waits;  /* lock waits while inserting; on an fsync's leaf */
	uint64_t wait_ns, fsync_wait_ns, fsync_wait_max_ns;
	uint64_t balance_wait_ns;
	lhist worker_wait;        /* the worker's waits on fsync-held leaves */
	/* optional observer: a wait while inserting delayed items */
	void (*on_wait)(void *ctx, const dl_wait_ev *ev);
	void *obs_ctx;
} delayed_root;

/* Create and attach to fs (fs->slot[FS_SLOT_DELAYED]); spawns the worker
 * task, parked until work is queued. tm may be NULL. */
int dl_create(sim *s, fs_info *fs, trans_mgr *tm, delayed_root **out);
/* Stop the worker (it exits when next woken) and free everything. */
void dl_destroy(delayed_root *dr);
/* The fs's delayed root, or NULL when none is attached. */
static inline delayed_root *dl_of(const fs_info *fs)
{
	return fs ? (delayed_root *)fs->slot[FS_SLOT_DELAYED] : NULL;
}

/* Queue a DIR_INDEX item of dir (btrfs_insert_delayed_dir_index). */
int dl_insert_dir_index(delayed_root *dr, task *t, struct inode *dir, uint64_t index,
			uint32_t size, const bt_item *it);
/* Queue the deletion of dir's DIR_INDEX `index`, or cancel its queued
 * insertion (btrfs_delete_delayed_dir_index). */
int dl_delete_dir_index(delayed_root *dr, task *t, struct inode *dir, uint64_t index);
/* Keep the inode item's new content (btrfs_delayed_update_inode). */
int dl_update_inode(delayed_root *dr, task *t, struct inode *in);
/* The inode item's queued content: 1 and *it when there is one. */
int dl_pending_inode_item(const delayed_root *dr, const struct inode *in, bt_item *it);
/* The directory's queued insertions (for the log), sorted by index, and
 * how many deletions it has queued; counts 0 when it has none. Valid
 * until the next change. */
void dl_dir_items(const delayed_root *dr, const struct inode *dir, const dl_ins **ins,
		  int *nins, int *ndel);
/* btrfs_log_get_delayed_items' deletions: the directory's queued
 * deletions no log has taken yet, in index order, copied to out (room
 * for dl_dir_items' ndel) and marked logged, as btrfs_log_put_delayed_items
 * marks them: a later fsync in the transaction does not log them again.
 * Returns how many. */
int dl_log_take_deletions(delayed_root *dr, struct inode *dir, uint64_t *out);

/* Insert one inode's queued items now, in t (btrfs_commit_inode_delayed_items;
 * the caller is inside a transaction). */
int dl_commit_inode(delayed_root *dr, task *t, struct inode *in);
/* Insert every queued item, in t (btrfs_run_delayed_items at commit). */
int dl_run_all(delayed_root *dr, task *t, int who);
/* The inode is going away: drop its queued changes (btrfs_kill_delayed_inode_items). */
void dl_kill_inode(delayed_root *dr, struct inode *in);

/* btrfs_balance_delayed_items at the end of an operation. *waiting must
 * be 0 on the first call. Returns 0 (go on) or 1: t is parked until the
 * worker has done a batch; call again with the same *waiting when woken. */
int dl_balance(delayed_root *dr, task *t, int *waiting, uint64_t *seq);

/* {"items","queued_ins","queued_del","cancelled","inode_updates",
 *  "inserted","deleted","inodes_written","works_queued","works_run",
 *  "nodes_run","commit_runs","balance_waits","waits","fsync_waits",
 *  "fsync_wait_ms","fsync_wait_max_ms","worker_wait":lhist} */
void dl_details_json(const delayed_root *dr, strbuf *sb);

#endif /* DELAYED_INODE_H */
