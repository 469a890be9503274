/*
 * fs.h - the simulated btrfs instance: fs_info (trees, roots, block groups,
 * inodes, mount options, hooks), roots (subvolumes) and in-memory inodes.
 *
 * Transactions. fs->transid is the running transaction; blocks with an
 * older generation are COWed before modification. Tree block allocations,
 * frees and data extent references are queued (fs->refq) as the kernel
 * queues delayed refs, and applied to the extent tree by fs_run_refs().
 * fs_commit() is the tree part of btrfs_commit_transaction: run the queued
 * refs, update root items, write dirty blocks and the superblock, unpin
 * freed extents, then start the next transaction. trans.c (another
 * engineer) builds handles, reservations and the commit state machine on
 * top and may call the pieces (fs_run_refs, fs_commit_roots, ...) itself.
 *
 * Extensibility: struct btrfs_root, struct inode and struct fs_info carry
 * opaque per-subsystem pointers (slot[] / io / log / priv) so the data
 * path, the log tree, transactions and qgroups keep their own state.
 */
#ifndef FS_H
#define FS_H

#include <stdint.h>

#include "alloc.h"
#include "bdev.h"
#include "btree.h"
#include "check.h"
#include "patches.h"
#include "labmem.h"
#include "sim.h"
#include "space.h"

/* Per-subsystem slots in fs_info.slot[] and btrfs_root.slot[]. */
enum {
	FS_SLOT_DATA = 0,   /* data path: delalloc lists, writeback */
	FS_SLOT_TRANS = 1,  /* transactions, space reservation */
	FS_SLOT_DREF = 2,   /* delayed refs */
	FS_SLOT_QGROUP = 3, /* qgroups, subvolume drop */
	FS_SLOT_LOG = 4,    /* tree log */
	FS_SLOT_EXP = 5,    /* the experiment */
	FS_SLOT_DELAYED = 6, /* delayed items (delayed_inode.h) */
	FS_SLOT_MAX = 8,
};

typedef struct fs_opts {
	uint64_t dev_bytes;   /* device size; default 1 TiB */
	uint32_t max_inline;  /* max_inline mount option; default 2048 */
	uint32_t nodesize;    /* fixed 16384 (BT_NODESIZE) */
	int no_holes;         /* always 1: holes are implicit */
	int write_blocks;     /* 1: commit writes dirty blocks to the bdev */
	int keep_commit_roots; /* 1: COWed-away blocks keep their contents until
				* the commit (readable commit roots); 0 (default):
				* only the block shell stays, saving memory */
	patchset patches;     /* the kernel's patches (patches.def), 1 =
				* applied; default PATCH_DEFAULT_KERNEL's */
	int meta_dup;         /* metadata profile: 0 single (default), 1 DUP
			       * (mkfs.btrfs's default on a rotational device
			       * before btrfs-progs 5.15) */
	/* A file system in use before this mount (default 0: fresh): device
	 * bytes already in chunks, all full, of which used_meta_bytes are
	 * metadata chunks' device extents (alloc_prefill). */
	uint64_t used_bytes, used_meta_bytes;
} fs_opts;

void fs_opts_default(fs_opts *o);

/* Inode flags */
enum {
	INODE_NEEDS_FULL_SYNC = 1u << 0,
	INODE_COPY_EVERYTHING = 1u << 1,
	INODE_ORPHAN = 1u << 2,        /* an orphan item exists */
	INODE_DELETED = 1u << 3,       /* unlinked and evicted */
	INODE_HAS_ASYNC_EXTENT = 1u << 4,
};
_Static_assert(INODE_HAS_ASYNC_EXTENT <= 0xffffu, "inode.flags is 16-bit");

#define S_IFMT_ 0170000u
#define S_IFDIR_ 0040000u
#define S_IFREG_ 0100000u

struct btrfs_root;

/* The log tree's part of an inode, allocated the first time one of its
 * fields is set (an fsync that logs the inode, a rename): an inode that
 * never met the log reads them all as 0 (inode_log_get). */
typedef struct inode_log {
	uint64_t last_log_commit;
	uint64_t logged_trans;  /* transaction it was last logged in (0: never) */
	uint64_t last_dir_index_offset; /* directories: the last dir index
				 * logged in logged_trans (later fsyncs copy
				 * only the newer ones) */
	uint64_t last_unlink_trans; /* renamed (or a name renamed out of it)
				 * in that transaction while neither side
				 * was logged: its fsync commits instead */
} inode_log;

/* An in-memory inode (struct btrfs_inode, reduced). One per file, and
 * untar holds 249,000: 104 bytes each on wasm32. */
struct inode {
	uint64_t ino;
	struct btrfs_root *root;
	void *io;              /* data path state (io_tree, pages, ordered) */
	inode_log *log;        /* NULL until needed (above) */
	void *delayed;         /* its delayed node (delayed_inode.h); fills
				 * what was padding before size on wasm32 */
	uint32_t nlink;
	/* 16-bit: S_IFMT | 07777, and INODE_* */
	uint16_t mode;
	uint16_t flags;        /* INODE_* */
	uint64_t size;         /* i_size */
	uint64_t nbytes;       /* bytes of file extents (inode_get_bytes) */
	uint64_t generation;   /* transid that created it */
	uint64_t transid;      /* last transid that changed it */
	uint64_t dir_index;    /* directories: next DIR_INDEX offset (from 2) */
	uint64_t parent;       /* directories: parent dir ino (for ..) */
	uint64_t nentries;     /* directories: entries */
	simlock i_rwsem;       /* the VFS inode lock */
};

/* Hash table of in-memory inodes of one root, keyed by ino (open
 * addressing on ino: iteration order depends only on inos). */
typedef struct inode_slot {
	uint64_t ino;      /* in->ino: a probe reads no inode (cache misses) */
	struct inode *in;  /* NULL: empty */
} inode_slot;
typedef struct inode_table {
	inode_slot *slots;
	uint64_t cap, count;
} inode_table;

/* A subvolume / tree root (struct btrfs_root, reduced). */
struct btrfs_root {
	uint64_t id;
	struct fs_info *fs;
	bt_tree tree;
	uint64_t highest_ino;   /* last inode number handed out */
	uint64_t root_dirid;    /* 256 */
	uint64_t refs;          /* root item refs (0 = deleted) */
	uint64_t last_snapshot; /* transid of the last snapshot taken of it */
	uint64_t parent_root;   /* root holding its directory entry (0: none) */
	uint64_t parent_dir;
	int dead;               /* deleted, waiting for the cleaner */
	int deleted;            /* fully dropped */
	int item_dirty;         /* root item must be written at commit */
	inode_table inodes;
	void *slot[FS_SLOT_MAX];
};

/* Observers of tree-block and extent reference changes (qgroups turn these
 * into dirty-extent records; delayed refs count them). Any callback may be
 * NULL. tree is the tree being modified. */
typedef struct fs_hooks {
	void *ctx;
	void (*on_cow)(void *ctx, bt_tree *tree, uint64_t old_bytenr,
		       uint64_t new_bytenr, int level);
	void (*on_alloc)(void *ctx, bt_tree *tree, uint64_t bytenr, int level,
			 uint64_t owner);
	void (*on_free)(void *ctx, bt_tree *tree, uint64_t bytenr, int level,
			uint64_t owner);
	/* a data extent gained (delta > 0) or lost a reference */
	void (*on_data_ref)(void *ctx, uint64_t root, uint64_t bytenr,
			    uint64_t num_bytes, uint64_t ino, uint64_t offset,
			    int delta);
	/* name `index` of dir -> inode was removed (unlink, rename, rmdir):
	 * models btrfs_del_inode_ref_in_log / btrfs_del_dir_entries_in_log */
	void (*on_unlink)(void *ctx, task *t, struct inode *dir, struct inode *inode,
			  uint64_t index, int for_rename);
	/* a rename gave inode its new name in dir: models btrfs_log_new_name */
	void (*on_new_name)(void *ctx, task *t, struct inode *inode, struct inode *old_dir,
			    struct inode *dir);
	/* an inode is being evicted (unlinked, last link gone) */
	void (*on_inode_evict)(void *ctx, struct inode *inode);
	/* the commit is about to run refs / has finished (transid committed) */
	void (*on_commit_start)(void *ctx, uint64_t transid);
	void (*on_commit_done)(void *ctx, uint64_t transid);
	/* a check (full or incremental, check.h) is done: what it looked at
	 * counts as checked */
	void (*on_check_done)(void *ctx, int full);
} fs_hooks;
#define FS_MAX_HOOKS 8

/* A queued extent reference change (a delayed ref, reduced). */
typedef struct fs_ref_op {
	uint64_t bytenr, num_bytes;
	uint64_t root;     /* referencing root */
	uint64_t owner;    /* tree blocks: level; data: inode number */
	uint64_t offset;   /* data: file offset minus extent offset */
	int8_t delta;      /* +1 / -1 */
	uint8_t is_tree;
} fs_ref_op;

typedef struct fs_check_ent {
	const char *name;
	check_fn fn;
	void *ctx;
} fs_check_ent;

/* A name whose crc32c collided with an existing DIR_ITEM in that dir. */
typedef struct dir_collision {
	uint64_t root, dir, crc, namehash, child;
	uint32_t type;
} dir_collision;

typedef struct fs_info {
	sim *sim;
	bdev *dev;
	fs_opts opts;
	uint64_t generation;   /* last committed transaction */
	uint64_t transid;      /* running transaction (generation + 1) */
	bt_tree root_tree, extent_tree, csum_tree;
	struct btrfs_root **roots; /* sorted by id */
	uint64_t highest_root_id; /* never reused, as the root tree's highest objectid */
	int nroots, roots_cap;
	alloc_ctl alloc;
	fs_hooks hooks[FS_MAX_HOOKS];
	int nhooks;
	fs_ref_op *refq;       /* queued extent ref changes */
	uint64_t nrefq, refq_cap;
	uint64_t refs_run;     /* applied so far */
	bt_node *deferred;     /* COWed-away blocks, freed at commit */
	uint64_t dirty_blocks; /* blocks written in the running transaction */
	uint64_t meta_write_pos; /* where commit writes go (a log-structured hint) */
	uint64_t commits;
	uint64_t cpu_untasked_ns; /* CPU charged with no task */
	lab_pool inode_pool;      /* struct inode objects (labmem.h) */
	lab_pool inode_log_pool;  /* their inode_log parts */
	fs_check_ent checks[16];
	int nchecks;
	char check_msg[4][200];
	uint64_t check_failures_total;
	int check_verbose;
	int check_midrun;      /* check_fs_midrun: between two steps, not at a
				* commit (check.h) */
	int check_incr;        /* check_fs_incr: registered checks look at
				* what changed since the last check */
	void *check_shadow;    /* check_incr.c's record of the trees */
	uint32_t check_epoch;
	int accounting_off;    /* the checker walks: no visits, no CPU charged */
	dir_collision *collisions;
	int ncollisions, collisions_cap;
	/* Space reservation (space_fs.h): the data and metadata space_infos,
	 * mirrored from alloc; the reserve tree blocks are taken from while a
	 * reserving operation runs (trans->block_rsv); the reclaim wiring. */
	space_ctl space;
	int space_on;          /* 0 without a sim: no accounting */
	block_rsv *cur_rsv;
	void *space_fs;
	/* sim counter ids */
	int c_node_visits, c_cows, c_splits, c_commits, c_blocks_written;
	int64_t rec_fs;        /* this instance's number in a recording (sim.h) */
	/* Optional: the page allocator behind a buffered write's new page
	 * cache pages (btrfs_alloc_write_mask: GFP_NOFS, may enter direct
	 * reclaim). Called with the pages a write adds to the cache; it
	 * charges their allocation to t. NULL: allocations cost nothing
	 * beyond the write's own CPU. */
	void (*page_alloc)(void *ctx, task *t, uint64_t npages);
	void *page_alloc_ctx;
	void *slot[FS_SLOT_MAX];
} fs_info;

/*
 * Make a fresh filesystem on dev and mount it (mkfs + mount): root, extent
 * and csum trees, the top-level subvolume (id 5) with its root directory
 * (inode 256), block groups, one commit. dev may be NULL (no IO timing).
 * opts may be NULL for defaults.
 */
int fs_mount(sim *s, bdev *dev, const fs_opts *opts, fs_info **out);
/* Free everything (no commit). */
void fs_unmount(fs_info *fs);

/* Hooks */
int fs_hooks_register(fs_info *fs, const fs_hooks *h);

/* CPU accounting: charge ns to t (task_cpu) or to fs->cpu_untasked_ns.
 * Inline: every B-tree node visit charges. */
static inline void fs_charge(fs_info *fs, task *t, uint64_t ns)
{
	if (t && fs->sim)
		task_cpu(fs->sim, t, ns);
	else
		fs->cpu_untasked_ns += ns;
}

/* Is patch id (patches.def) applied in this file system's kernel? */
static inline int fs_patch_on(const fs_info *fs, patch_id id)
{
	return patch_on(&fs->opts.patches, id);
}

/* Roots. */
struct btrfs_root *fs_root_lookup(fs_info *fs, uint64_t id);
/* The tree a lab_snapshot names, as JSON (bt_snapshot_json, 200 nodes):
 * "tree:fs" (top, the experiment's top-level subvolume), "tree:<root id>",
 * "tree:extent", "tree:csum", "tree:root". LAB_ENOENT for anything else. */
struct strbuf;
int fs_tree_snapshot(fs_info *fs, const bt_tree *top, const char *what, struct strbuf *out);
/* Create a root with an empty tree and its ROOT_ITEM (no directory entry,
 * no root dir inode): the primitive for subvolume create and snapshot. */
int fs_root_create(fs_info *fs, task *t, uint64_t id, struct btrfs_root **out);
/* Next free root id (>= 256; a dropped root's id is never handed out again). */
uint64_t fs_root_next_id(const fs_info *fs);
/*
 * Create a subvolume named `name` in directory parent_dir of parent: a new
 * root, its root directory inode (256), ROOT_REF/ROOT_BACKREF in the root
 * tree, and the directory entry (DIR_ITEM/DIR_INDEX of type subvol) in the
 * parent. Models btrfs_mksubvol / create_subvol.
 */
int fs_create_subvol(fs_info *fs, task *t, struct btrfs_root *parent,
		     uint64_t parent_dir, const char *name,
		     struct btrfs_root **out);
/* Write the root item (bytenr, generation, level, refs) into the root
 * tree (models btrfs_update_root). */
int fs_root_update_item(fs_info *fs, task *t, struct btrfs_root *root);
/* Remove a root from fs->roots and free its memory (the tree's blocks must
 * have been dropped already, e.g. with bt_free_tree, or are shared). */
void fs_root_forget(fs_info *fs, struct btrfs_root *root);

/* In-memory inodes. */
struct inode *fs_inode_get(struct btrfs_root *root, uint64_t ino);
/* Allocate a new in-memory inode with the next inode number. */
int fs_inode_new(struct btrfs_root *root, uint32_t mode, struct inode **out);
/* What an inode's log part reads: the fields, or all 0 without one. */
static inline inode_log inode_log_get(const struct inode *in)
{
	return in->log ? *in->log : (inode_log){0};
}
/* The log part of in (an inode of fs), allocated on first use; NULL when
 * out of memory (the run then fails with LAB_ENOMEM: labmem.h). */
inode_log *fs_inode_log(fs_info *fs, struct inode *in);
/* Remove from the table and free (after on_inode_evict hooks ran). */
void fs_inode_forget(struct btrfs_root *root, struct inode *inode);
/* Call fn on every in-memory inode of root in ascending ino order. */
void fs_inode_foreach(struct btrfs_root *root,
		      void (*fn)(struct inode *inode, void *ctx), void *ctx);
/* A remount: every in-memory inode of every root is read back from its
 * inode item without the log's runtime state, so the next fsync of each
 * copies everything (INODE_NEEDS_FULL_SYNC, last_log_commit 0). */
void fs_inodes_reread(fs_info *fs);
/* Run the on_inode_evict hooks for an inode leaving memory. */
void fs_inode_evict_hooks(fs_info *fs, struct inode *in);
/* A subvolume being deleted: its cached inodes leave memory
 * (btrfs_delete_subvolume -> btrfs_prune_dentries -> evict): the evict
 * hooks run for each, in ascending ino order, and each is freed; their
 * items stay (the cleaner drops the tree). Nothing may hold one of them
 * (an open file: the callers refuse the delete then). */
void fs_root_prune_inodes(fs_info *fs, struct btrfs_root *root);

/* Tree block allocation for btree.c: allocate a metadata block, report it
 * to hooks, queue its ref (+1 for tree `tr`). */
int fs_tree_block_alloc(fs_info *fs, bt_tree *tr, int level, uint64_t *bytenr);
/* Queue an extent ref change and tell the hooks. */
int fs_ref_queue(fs_info *fs, const fs_ref_op *op);
void fs_hooks_cow(fs_info *fs, bt_tree *tr, uint64_t old_b, uint64_t new_b, int level);
void fs_hooks_free(fs_info *fs, bt_tree *tr, uint64_t bytenr, int level, uint64_t owner);

/* Apply one ref change to the extent tree now (models the body of
 * run_one_delayed_ref: __btrfs_inc_extent_ref / __btrfs_free_extent). */
int fs_apply_ref(fs_info *fs, task *t, const fs_ref_op *op);
/* Apply all queued ref changes, including those the extent tree's own
 * COWs queue while they run (models btrfs_run_delayed_refs(0)). */
int fs_run_refs(fs_info *fs, task *t);

/* Commit pieces and the whole tree commit. */
int fs_commit_roots(fs_info *fs, task *t);   /* dirty root items -> root tree */
int fs_commit(fs_info *fs, task *t);

/* Generic fs-wide lookups used by several subsystems. */
int fs_tree_height_max(fs_info *fs);

#endif /* FS_H */
