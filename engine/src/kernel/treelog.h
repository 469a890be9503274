/*
 * treelog.h - the log tree and fsync: per-root log transactions
 * (log_transid, log_writers), inode logging (full sync copies the inode's
 * items out of the subvolume leaves; fast fsync logs the inode item and
 * the new extents from memory) and btrfs_sync_log (wait for the log
 * writers, write the log tree blocks and the super block, flush).
 *
 * Patch 001 (preallocate the temporary extent buffer) is the logged
 * root's file system's P_001_PREALLOC_SCRATCH_EB (fs_patch_on): BEFORE, each subvolume leaf is cloned (an extent-buffer allocation,
 * ebmem.h, plus a 16 KiB copy) while the leaf is still read-locked, and
 * the allocation's latency, heavy-tailed under memory pressure, is paid
 * inside the leaf lock and inside the log transaction. AFTER, a scratch
 * eb is allocated before the log transaction is joined and before any
 * tree lock is taken, reused for every leaf (a copy only), and freed
 * before btrfs_sync_log; if that allocation fails the fsync falls back to
 * cloning.
 *
 * How a caller uses it. An fsync runs inside a task's step function: the
 * data part (flush dirty pages, wait for ordered extents) is the data
 * path's; it then calls treelog_fsync_step() once per step until it
 * returns TASK_DONE, returning its TASK_RUN / TASK_BLOCKED result from its
 * own step otherwise. Each call does one unit of work (one leaf copied,
 * one wait), so other tasks interleave at leaf granularity.
 *
 * The subvolume tree is read with btree.h's read-only search
 * (bt_search_read: read-lock coupling on each block's simlock, as
 * btrfs_search_forward does); writers (creates, finish_ordered_io) that
 * need a leaf write-locked wait on the same simlocks.
 *
 * The log tree is a real B-tree per logged root (bt_tree with private
 * blocks, bt_priv_ops: they live in the log area, hold no extent
 * references and are COWed once written, as btrfs COWs a log block with
 * BTRFS_HEADER_FLAG_WRITTEN): copy_items inserts the inode's items into
 * its leaves, a log commit writes the blocks made since the last one plus
 * the log root tree block and the super block, and the transaction commit
 * frees the log (btrfs_free_log). A directory's logged index ranges are
 * DIR_LOG_INDEX items, as log_dir_items writes them. treelog_replay reads
 * what a power cut leaves (the committed trees and the last synced log)
 * and replays the log over it (btrfs_recover_log_trees).
 */
#ifndef TREELOG_H
#define TREELOG_H

#include <stdint.h>

#include "bdev.h"
#include "btree.h"
#include "ebmem.h"
#include "fs.h"
#include "sim.h"
#include "strbuf.h"
#include "trans.h"

#define TL_MAX_PHASES 12
#define TL_HOLD_RING 32
#define TL_MAX_ROOTS 64
#define TL_DIR_HINTS 64

typedef struct treelog_cfg {
	uint64_t log_area_offset; /* device offset where log blocks go */
	uint64_t log_area_bytes;  /* size of that area (writes wrap in it) */
	uint32_t max_records;     /* per-fsync records kept (ring) */
	int keep_synced;          /* keep the last synced log readable until
				   * the commit (treelog_replay needs it;
				   * costs memory on a long transaction) */
} treelog_cfg;

void treelog_cfg_default(treelog_cfg *c);

/* Per-root log state (the log fields of struct btrfs_root). */
typedef struct tl_root {
	uint64_t root_id;
	uint64_t log_transid;           /* the open log transaction */
	uint64_t log_transid_committed; /* last synced (0: none) */
	int log_writers;                /* tasks inside the log transaction */
	int committing;                 /* a sync of committing_transid runs */
	uint64_t committing_transid;
	simtime_t last_commit_end;      /* when the last log commit's IO ended */
	uint32_t log_batch;             /* joins, for the batching check */
	waitq writer_wait;              /* sync_log waiting for writers == 0 */
	waitq commit_wait;              /* waiting for a log commit */
	/* the log tree (log.root NULL: none since the last fs commit) */
	bt_tree log;
	uint64_t log_gen;               /* its generation: +1 per log commit */
	uint64_t log_items;             /* items in it */
	uint64_t log_blocks;            /* blocks in it */
	uint64_t dirty_blocks;          /* blocks made since the last log commit */
	uint64_t dirty_inodes;          /* inodes logged since then */
	bt_node *synced_root;           /* the log as the last log commit wrote it */
	uint64_t synced_transid;        /* the fs transaction it belongs to */
	uint64_t log_commits, blocks_written;
} tl_root;

/* One fsync's record (per-op observability). */
typedef struct tl_rec {
	uint64_t ino;
	simtime_t start, end;
	uint8_t full, committed, skipped, scratch, force_commit;
	uint8_t phase;
	uint32_t leaves;
	uint64_t hold_max_ns;      /* longest subvolume-leaf read-lock hold */
	uint64_t alloc_locked_ns;  /* allocation time inside leaf locks */
	uint64_t lock_wait_ns;     /* own waits for leaf locks */
	uint64_t writer_wait_ns;   /* sync_log waiting for log_writers == 0 */
	uint64_t commit_wait_ns;   /* waiting for another task's log commit */
} tl_rec;

enum tl_state {
	TLS_START = 0,
	TLS_JOIN,
	TLS_COPY,
	TLS_FAST,
	TLS_DIRS,
	TLS_ANC,
	TLS_END,
	TLS_SYNC,
	TLS_WAIT_WRITERS,
	TLS_WAIT_COMMIT,
	TLS_DONE,
};

/* The state of one fsync in progress (models struct btrfs_log_ctx plus the
 * locals of btrfs_sync_file / btrfs_log_inode). Initialise with
 * treelog_fsync_init; it owns no memory once TASK_DONE was returned. */
typedef struct tl_fsync {
	struct inode *inode;
	struct btrfs_root *root;
	uint32_t new_extents;     /* fast fsync: extents changed since logged */
	int state;
	tl_root *lr;
	uint64_t log_transid;
	bt_key next_key;          /* full sync: where the next leaf starts */
	int hints[BT_MAX_LEVEL];  /* per level, where the last descent landed */
	uint64_t range_start;     /* dir pass: where its next logged range starts */
	uint64_t range_lo, range_hi; /* dir pass: the range of the changed leaves
				   * copied in a row, logged as one when the
				   * run ends (range_open) */
	uint64_t range_ino;
	int range_open;
	uint64_t dir_logged_max;  /* dir pass: the last dir index it logged */
	int isdir;                /* a directory: its new dir index items too */
	struct inode *parent;     /* a parent directory to log as well */
	uint64_t dir_ino;         /* the directory of the running dir pass */
	int parent_done;
	/* log_all_new_ancestors: directories made in this transaction above
	 * the inode, logged with their names; anc_next: the next to log */
	uint64_t anc[8];
	int nanc, anc_next;
	/* btrfs_log_holes: the end of the last file extent logged */
	uint64_t fe_end;
	/* BTRFS_LOG_FORCE_COMMIT: the log cannot hold this fsync (a rename
	 * it could not record): the caller commits the transaction */
	int need_commit;
	ebmem_eb *scratch;        /* patch 001's ctx->scratch_eb */
	/* dir pass: the directory's delayed dir index deletions, taken
	 * before its leaves are searched (btrfs_log_get_delayed_items) and
	 * logged after them (log_delayed_deletion_items) */
	uint64_t *dl_del;
	int ndl_del, dl_del_cap;
	/* a leaf copied, to insert into the log in the next step */
	ebmem_eb *pend;
	int pend_clone, pend_first, pend_last, pend_more;
	uint64_t pend_ino, pend_end;
	trans_handle th;          /* btrfs_sync_file's transaction handle */
	int has_th;
	simtime_t parked_at;
	tl_rec rec;
	int error;
} tl_fsync;

/* A subvolume leaf an fsync copied (the observer's view of tl_copy_leaf):
 * read-locked from locked_at to released, of which alloc_ns in the
 * clone's allocation (0 with the scratch eb). */
typedef struct tl_leaf_ev {
	int task;
	uint64_t ino;          /* the inode (or directory) being logged */
	uint64_t bytenr;       /* the subvolume leaf */
	simtime_t locked_at, released;
	uint64_t alloc_ns;
	int scratch, dirpass;
} tl_leaf_ev;

typedef struct treelog {
	sim *sim;
	bdev *dev;                /* may be NULL: log IO takes no time */
	ebmem *mem;
	trans_mgr *tm;            /* optional: fsyncs join transactions */
	treelog_cfg cfg;
	const fs_info *fs;        /* treelog_attach's (NULL: not attached) */
	tl_root roots[TL_MAX_ROOTS];
	int nroots;
	uint64_t log_pos;         /* next log block offset in the area */
	uint64_t blk_seq;         /* log blocks handed out (their addresses) */
	uint64_t *dl_spare;       /* a dir pass's deletion list buffer kept */
	int dl_spare_cap;         /* for the next one (its capacity) */
	bt_item *batch;           /* copy_items' batch of items for the log */
	int batch_cap;
	/* search hints: per level, the slot the first descent of the last
	 * pass over a file's items found (a guess for the next file's), and
	 * the same per directory for its items' and its dir passes (a small
	 * cache by inode number) */
	int hints[BT_MAX_LEVEL];
	struct { uint64_t ino; int h[2][BT_MAX_LEVEL]; } dir_hints[TL_DIR_HINTS];
	bt_priv_ops ops;          /* the log trees' block allocator */
	/* phases */
	char phase_names[TL_MAX_PHASES][24];
	int nphases, phase;
	lhist phase_lat[TL_MAX_PHASES]; /* fsync latency per phase */
	int phase_series[TL_MAX_PHASES]; /* "fsync_ms_<phase>" series ids */
	/* distributions */
	lhist leaf_hold;          /* subvolume-leaf read-lock hold per leaf */
	lhist leaf_wait;          /* fsyncers' own leaf-lock waits (> 0) */
	lhist victim_wait;        /* waits others reported (treelog_note_leaf_wait) */
	lhist alloc_locked;       /* eb allocation time spent under a leaf lock */
	lhist writer_wait;        /* sync_log waits for log_writers == 0 (> 0) */
	lhist commit_wait;        /* waits for another task's log commit (> 0) */
	/* counters */
	uint64_t fsyncs, full, fast, skipped, leaves_copied, items_logged;
	uint64_t dels_logged;     /* queued dir index deletions logged */
	uint64_t clones, scratch_used, scratch_fallbacks, log_commits;
	uint64_t blocks_written, supers_written;
	/* records ring */
	tl_rec *recs;
	uint64_t nrecs;           /* total recorded (ring index = nrecs % max) */
	int s_writers, s_sync_waiters, s_fsync_ms; /* series ids */
	int c_fsync, c_log_commit;                 /* counter ids */
	int k_fsync, k_log_commit, k_leaf;         /* trace kinds */
	/* the last subvolume leaf holds by fsyncs (treelog_leaf_held) */
	struct { uint64_t bytenr, ino; simtime_t from, to; } holds[TL_HOLD_RING];
	uint32_t nholds;
	/* optional observers: a leaf copied, a log commit written */
	void (*on_leaf)(void *ctx, const tl_leaf_ev *ev);
	void (*on_log_commit)(void *ctx, uint64_t root, simtime_t start, simtime_t end,
			      uint64_t blocks, uint64_t inodes);
	/* a task joined (join = 1) or left the log transaction; writers: the
	 * log_writers count after it */
	void (*on_log_trans)(void *ctx, int task, int join, simtime_t at, int writers);
	/* patch 001's scratch eb was allocated from start to end (no lock held) */
	void (*on_scratch)(void *ctx, int task, simtime_t start, simtime_t end);
	void *obs_ctx;
} treelog;

/* Create the log for a file system. mem is the extent-buffer allocator
 * (required: full syncs allocate), dev may be NULL. */
int treelog_create(sim *s, bdev *dev, ebmem *mem, const treelog_cfg *cfg,
		   treelog **out);
void treelog_destroy(treelog *tl);

/* The per-root log state, created on first use (NULL when TL_MAX_ROOTS
 * roots are logged already). */
tl_root *treelog_root(treelog *tl, uint64_t root_id);

/* Name the current phase (e.g. "create", "delete"): fsync latencies are
 * recorded per phase. Returns the phase index or LAB_ENOMEM. */
int treelog_set_phase(treelog *tl, const char *name);

/*
 * Prepare an fsync of inode (in root) from btrfs_sync_file, once the data
 * part is done. new_extents: file extents changed since the inode was
 * last logged (what a fast fsync logs). Returns 0 or LAB_EINVAL.
 */
int treelog_fsync_init(tl_fsync *f, struct btrfs_root *root,
		       struct inode *inode, uint32_t new_extents);

/* Free what an fsync that will never finish owns (the run ended under it:
 * cancelled, or failed). Call before treelog_destroy. */
void treelog_fsync_abandon(treelog *tl, tl_fsync *f);

/*
 * Like treelog_fsync_init, and the parent directory is logged as well:
 * its inode item and its dir index items in leaves changed in this
 * transaction (btrfs_log_inode_parent logging the parent, e.g. when a
 * name was unlinked from it in this transaction: last_unlink_trans). The
 * caller decides when that applies. parent may be NULL.
 */
int treelog_fsync_init_parent(tl_fsync *f, struct btrfs_root *root,
			      struct inode *inode, uint32_t new_extents,
			      struct inode *parent);
/*
 * A directory's fsync also logs its DIR_INDEX items from the leaves that
 * changed in the running transaction (log_directory_changes ->
 * log_dir_items with min_trans; process_dir_items_leaf copies each such
 * leaf the same way: clone, or the scratch eb when one was preallocated).
 *
 * One step of the fsync: returns TASK_RUN (call again when the task is
 * next stepped), TASK_BLOCKED (the task is parked on a log waitq: call
 * again when woken), TASK_DONE (the log is on disk; f->rec holds the
 * record) or a negative LAB_E*. Models btrfs_log_dentry_safe (start_log_trans,
 * btrfs_log_inode, end_log_trans) followed by btrfs_sync_log.
 */
int treelog_fsync_step(treelog *tl, task *t, tl_fsync *f);

/* A transaction commit made the log unnecessary: the log trees are freed
 * (models btrfs_free_log at commit). In-flight fsyncs finish normally. */
void treelog_on_commit(treelog *tl, uint64_t transid);
/* Register treelog_on_commit as an fs commit hook. */
int treelog_attach(treelog *tl, fs_info *fs);

/* With a transaction manager, each fsync holds a handle from before it
 * joins the log transaction until its log is synced (btrfs_sync_file's
 * btrfs_start_transaction .. btrfs_end_transaction): a commit waits for
 * it, and it waits for a commit in progress. */
void treelog_set_trans(treelog *tl, trans_mgr *tm);

/* Record a wait for a subvolume leaf lock seen by another operation (a
 * create, finish_ordered_io) so the log's details show its victims. */
void treelog_note_leaf_wait(treelog *tl, uint64_t wait_ns);

/* Did an fsync hold subvolume leaf bytenr read-locked until `at` (a
 * waiter on it got the lock at the fsync's release)? 1 and the inode it
 * logged in *ino, else 0. Looks at the last TL_HOLD_RING holds. */
int treelog_leaf_held(const treelog *tl, uint64_t bytenr, simtime_t at, uint64_t *ino);

/* Fsync latency per phase: max and a quantile (0 when no fsync). */
uint64_t treelog_phase_quantile(const treelog *tl, const char *phase, double q);

/* ---- replay after a power cut (btrfs_recover_log_trees) */
typedef struct tl_img_ext {
	uint64_t off, len, disk, disk_len, ext_off;
	uint32_t type;
} tl_img_ext;
typedef struct tl_img_inode {
	uint64_t ino, size, nbytes, generation;
	uint32_t mode, nlink;
	int logged;                /* its inode item came from the log */
	tl_img_ext *ext;
	int next, extcap;
} tl_img_inode;
typedef struct tl_img_dent {
	uint64_t dir, index, child, namehash;
	uint32_t type;
} tl_img_dent;
/* What a mount after a power cut finds in one subvolume: its inodes (by
 * ino), their file extents (by offset) and the directory entries (by
 * dir, index). */
typedef struct tl_image {
	uint64_t root_id;
	tl_img_inode *inodes;
	int ninodes, icap;
	tl_img_dent *dents;
	int ndents, dcap;
	int replayed;              /* a synced log was replayed */
	uint64_t log_items;        /* items the replay read from it */
	/* a partial image (treelog_replay_some): the inodes it covers,
	 * sorted (partial 0: the whole subvolume) */
	int partial;
	uint64_t *scope;
	int nscope;
} tl_image;

/*
 * Cut the power now and mount: the subvolume as its last commit wrote it
 * (the commit root: needs fs_opts.keep_commit_roots) with the log tree
 * of its last log commit replayed over it (needs cfg.keep_synced), if
 * that log belongs to the running transaction. Models btrfs_recover_log_trees:
 * inode items replace the committed ones, a logged regular file is
 * truncated to its logged size and its logged extents replace the ranges
 * they cover (replay_one_extent), inode refs add their names
 * (add_inode_ref), dir index items add entries whose inode exists,
 * DIR_LOG_INDEX ranges drop the committed entries the log does not hold
 * (replay_dir_deletes), and an inode left without a name is gone. Nothing
 * is changed. 0, LAB_ESTATE (the state is not kept) or LAB_ENOMEM.
 */
int treelog_replay(treelog *tl, struct btrfs_root *root, tl_image *out);
/*
 * The same mount, read only as far as a power-cut check looks: the
 * inodes of want[] and every inode the log holds items of, then the
 * directories naming any of them (in the committed tree: each INODE_REF's
 * DIR_INDEX item; in the log: its refs and dir index items), to the top.
 * On that scope (out->scope) the image equals treelog_replay's: the same
 * inodes with the same items and link counts, the same entries naming
 * them (tl_image_agree), since a link count depends only on the names of
 * an inode and of the directories above it. Costs a few descents per
 * inode of the scope and a walk of the log, not a walk of the subvolume.
 * Assumes every committed DIR_INDEX item has its INODE_REF.
 */
int treelog_replay_some(treelog *tl, struct btrfs_root *root, const uint64_t *want, int nwant,
			tl_image *out);
/* Whether a partial image agrees with the whole one on its scope: 1, or
 * 0 with the first inode where they differ in *where. */
int tl_image_agree(const tl_image *whole, const tl_image *part, uint64_t *where);
void tl_image_free(tl_image *im);
tl_img_inode *tl_image_inode(const tl_image *im, uint64_t ino);
/* The entry (dir, index), or NULL. */
const tl_img_dent *tl_image_dent(const tl_image *im, uint64_t dir, uint64_t index);
/* A file's extents (offset, length, disk bytenr, offset in the extent) as
 * one FNV-1a hash, so a power-cut check compares what an fsync made durable
 * with what replay restored: the fs tree's now (not charged to any task)
 * and a replayed image's give the same number for the same extents. */
uint64_t tl_tree_extents_hash(fs_info *fs, struct inode *in);
uint64_t tl_image_extents_hash(const tl_img_inode *in);

/* {"prealloc_scratch" (the attached fs's patch 001),"fsyncs","full","fast","skipped","leaves_copied",
 *  "clones","scratch_used","scratch_fallbacks","log_commits",
 *  "blocks_written","phases":{name:lhist},"leaf_hold":lhist,
 *  "leaf_wait":..,"victim_wait":..,"alloc_locked":..,"writer_wait":..,
 *  "commit_wait":..,"roots":[...],"records":[last <= max_records]} */
void treelog_details_json(const treelog *tl, strbuf *out, int max_records);

#endif /* TREELOG_H */
