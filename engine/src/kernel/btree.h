/*
 * btree.h - the miniature btrfs copy-on-write B-tree.
 *
 * Blocks are 16 KiB "extent buffers" laid out as btrfs lays them out, by
 * size only: a leaf is a 101-byte header plus, per item, a 25-byte item
 * header and the item's data; an internal node is a 101-byte header plus
 * 33-byte key pointers (493 per node). Item data is not stored byte for
 * byte: each item keeps its btrfs size and a small typed payload (items.h
 * says what the payload means per item type), so 300,000 files fit in a
 * modest heap.
 *
 * Copy-on-write: any block whose generation is older than the running
 * transaction is copied to a newly allocated block before it is modified,
 * once per transaction (models btrfs_cow_block / should_cow_block). The old
 * block's memory stays valid until the commit (it may be part of the commit
 * root), so readers of commit roots see a stable tree. Blocks shared between
 * trees (snapshots) carry an in-memory reference count; COWing a shared
 * block leaves the other owners' copy untouched and adds references to its
 * children (models update_ref_for_cow / btrfs_inc_ref).
 *
 * Every block allocation, COW and free is reported through the fs hooks
 * (fs.h: fs_hooks) and queued as an extent reference change that
 * fs_run_refs() applies to the extent tree.
 *
 * Locks: each block has a timeline simlock (sim.h). When an operation is
 * given a task, it read- or write-locks each block on its path as btrfs
 * does (lock coupling: upper levels are released once the child is held,
 * except the levels a split or merge may modify), and waiting costs
 * simulated time. With task == NULL nothing waits and CPU is charged to
 * fs->cpu_untasked_ns.
 *
 * Errors: 0 or a negative LAB_E* code; positive values are documented
 * per function (search: 1 = not found).
 */
#ifndef BTREE_H
#define BTREE_H

#include <stdint.h>

#include "sim.h"
#include "strbuf.h"

#define BT_NODESIZE 16384u
#define BT_HEADER_SIZE 101u
#define BT_ITEM_HEADER 25u
#define BT_KEY_PTR_SIZE 33u
#define BT_LEAF_DATA_SIZE (BT_NODESIZE - BT_HEADER_SIZE) /* 16283 */
#define BT_NODE_PTRS ((BT_NODESIZE - BT_HEADER_SIZE) / BT_KEY_PTR_SIZE) /* 493 */
#define BT_MAX_LEVEL 8
/* largest item data that fits a leaf alone (BTRFS_MAX_ITEM_SIZE) */
#define BT_MAX_ITEM_SIZE (BT_LEAF_DATA_SIZE - BT_ITEM_HEADER)

struct fs_info;

/* A btrfs key, ordered by (objectid, type, offset). Packed (17 bytes, as
 * btrfs_disk_key): in a bt_item the size fills the byte after it, so
 * an item is 48 bytes instead of 56, and the trees hold every item of the
 * file system (untar: a million). At the start of an item or a key
 * pointer its two 64-bit fields stay aligned. */
typedef struct __attribute__((packed)) bt_key {
	uint64_t objectid;
	uint64_t offset;
	uint8_t type;
} bt_key;

/* One leaf item: its key, its size as btrfs stores it, and a compact typed
 * payload (meaning per item type: see items.h). */
typedef struct bt_item {
	bt_key key;
	uint16_t size;   /* item data bytes (the 25-byte header not included;
			  * at most BT_MAX_ITEM_SIZE: bt_insert and
			  * bt_extend_item refuse more) */
	uint32_t aux;    /* payload */
	uint64_t v[3];   /* payload */
} bt_item;
_Static_assert(BT_MAX_ITEM_SIZE <= 0xffffu, "bt_item.size is 16-bit");

struct bt_node;

/* One key pointer of an internal node. */
typedef struct bt_ptr {
	bt_key key;
	struct bt_node *child;
	uint64_t gen;    /* generation recorded in the pointer */
} bt_ptr;

/* A tree block (extent buffer). The fields a search reads at every level
 * come first, together: a search's time is mostly cache misses. */
typedef struct bt_node {
	int level;            /* 0 = leaf */
	int nritems;
	int search_hint;      /* slot the last search found (a guess) */
	int mrefs;            /* in-memory references (parents + roots) */
	int dead;             /* COWed away or freed; memory kept to commit */
	int cap;              /* allocated entries in items/ptrs, from there on */
	int head;             /* and before: a deletion near the start of the
			       * block slides the start up instead of moving
			       * the rest down (btree.c) */
	uint32_t used;        /* leaf: sum of (25 + size); node: nritems*33 */
	bt_item *items;       /* level 0 */
	bt_ptr *ptrs;         /* level > 0 */
	uint64_t generation;  /* transid that last wrote (COWed) it */
	simlock lock;
	uint64_t bytenr;
	uint64_t owner;       /* root id that allocated it */
	int shared;           /* FULL_BACKREF-style: referenced by >1 tree */
	int keep_mem;         /* dead: keep its contents until the commit even
			       * without keep_commit_roots (a synced log) */
	uint32_t mark;        /* scratch for walkers (checker epochs) */
	struct bt_node *dnext;/* deferred-free list link */
} bt_node;

struct bt_tree;

/* A private tree's block allocator (the log trees, treelog.c): its blocks
 * come from elsewhere than the file system's extent allocator, hold no
 * extent references (no delayed refs, no hooks, no data refs for their
 * file extent items: btrfs_alloc_tree_block for BTRFS_TREE_LOG_OBJECTID
 * adds no delayed ref) and are COWed against the tree's own generation. */
typedef struct bt_priv_ops {
	void *ctx;
	/* a new block at `level`: 0 and its address, or a negative LAB_E* */
	int (*alloc)(void *ctx, struct bt_tree *tr, int level, uint64_t *bytenr);
	/* block n left the tree (COWed away, merged, or freed with it) */
	void (*free)(void *ctx, struct bt_tree *tr, struct bt_node *n);
} bt_priv_ops;

/* A tree: a root pointer plus counters. Embedded in struct btrfs_root and
 * struct fs_info (extent, csum and root trees). */
typedef struct bt_tree {
	struct fs_info *fs;
	uint64_t id;          /* root objectid (1 root, 2 extent, 5 fs, 7 csum...) */
	bt_node *root;
	bt_node *commit_root; /* the root as of the last commit (may be == root) */
	uint64_t nodes_visited;
	uint64_t bsearch_steps;
	uint64_t cows, splits, merges, pushes;
	uint64_t lock_waits;
	int no_cow_hooks;     /* 1: do not queue extent refs (not used by fs trees) */
	int64_t rec_h;        /* handle in a recording (0: not declared yet) */
	int progs_split;      /* 1: split like btrfs-progs' older ctree.c (no
			       * neighbour pushes for DIR_ITEM inserts); only
			       * the mkfs.btrfs oracle test sets it */
	const bt_priv_ops *priv; /* non-NULL: a private tree (see above) */
	uint64_t priv_gen;    /* a private tree's running generation: a block
			       * of an older one is COWed before a change */
	/* optional: told of each wait for a block lock of this tree (who
	 * waited, on which block, from when to when); delayed_inode.c sets
	 * it while it inserts delayed items, to name the leaves it waited on */
	void (*on_lock_wait)(void *ctx, const task *t, const struct bt_node *n,
			     simtime_t from, simtime_t to);
	void *lock_wait_ctx;
} bt_tree;

/* A search path: nodes[level], slots[level], lock held per level. */
enum { BT_LOCK_NONE = 0, BT_LOCK_READ = 1, BT_LOCK_WRITE = 2 };
typedef struct bt_path {
	bt_node *nodes[BT_MAX_LEVEL];
	int slots[BT_MAX_LEVEL];
	int locks[BT_MAX_LEVEL]; /* meaningful where `held` has the bit */
	uint32_t held;        /* bit per level whose locks[] is set: releases
			       * visit only those */
	task *t;              /* task holding the locks, or NULL */
	bt_tree *tree;
	int keep_locks;       /* do not release upper levels during descent */
} bt_path;

/* Inline: every search, insert and check compares keys (a call each was
 * a fifth of a long torture run). */
static inline int bt_key_cmp(const bt_key *a, const bt_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}
static inline bt_key bt_mkkey(uint64_t objectid, uint8_t type, uint64_t offset)
{
	bt_key k;
	k.objectid = objectid;
	k.type = type;
	k.offset = offset;
	return k;
}

/* A private tree (see bt_priv_ops): empty, one empty leaf from ops. */
int bt_tree_init_priv(struct fs_info *fs, bt_tree *tr, uint64_t id, const bt_priv_ops *ops,
		      uint64_t gen, task *t);

/* Tree life cycle. bt_tree_init creates an empty tree with one empty leaf
 * (allocated and reported like any block). */
int bt_tree_init(struct fs_info *fs, bt_tree *tr, uint64_t id, task *t);
/* Drop this tree's reference to its blocks (memory only, no extent refs):
 * used at unmount. Blocks still shared with other trees survive. */
void bt_tree_destroy(bt_tree *tr);

/* Paths */
/* Inline: every search starts with one, and a call costs more than the
 * stores. Not *p = (bt_path){0}: a clear of that size is a memory.fill in
 * WASM (an out-of-line call) and a rep stos here. locks[] is left as is:
 * it is read only at the levels `held` marks. */
static inline void bt_path_init(bt_path *p, bt_tree *tr, task *t)
{
	for (int i = 0; i < BT_MAX_LEVEL; i++) {
		p->nodes[i] = 0;
		p->slots[i] = 0;
	}
	p->held = 0;
	p->t = t;
	p->tree = tr;
	p->keep_locks = 0;
}
void bt_path_release(bt_path *p);

/*
 * Search for key (models btrfs_search_slot). ins_len > 0: the caller will
 * insert ins_len bytes (item data + 25); full nodes on the way are split and
 * the leaf made to have room (splits and pushes as btrfs). ins_len < 0: the
 * caller will delete; sparse nodes on the way are balanced. cow: COW every
 * block on the path (needed for any modification) and write-lock it.
 * Returns 0 if found (p->slots[0] is the item), 1 if not (slots[0] is the
 * insert position, possibly == nritems), or a negative LAB_E*.
 */
int bt_search(bt_tree *tr, bt_path *p, const bt_key *key, int ins_len, int cow);

/*
 * The read-only search: from root down to the leaf that holds key or
 * would hold it, for readers that change nothing (btrfs_search_slot with
 * no insert and no COW: btrfs_search_forward's descent for the log's
 * copy, the checker's lookups). Fills p: slots[0] the first slot of the
 * leaf with a key >= key (may be nritems), slots[level] the pointer
 * covering key, and next_key the first key of the next leaf (has_next 0 on
 * the rightmost one). Returns the leaf, NULL for an empty tree.
 * Without a task (t NULL) it reads memory only: no lock, no cost, nothing
 * written (tr may be NULL). With a task each block is read-locked by t
 * before its parent is released (lock coupling) and the leaf stays
 * locked (bt_rpath_unlock releases it); p->lock_wait is the time t waited
 * for them, p->leaf_locked_at when it got the leaf; each block's visit is
 * charged to t: BT_NS_NODE_VISIT plus BT_NS_BSEARCH_STEP per compare of a
 * halving binary search over the block (nothing is counted in tr's or the
 * file system's visit counters). hints (may be NULL): per level, the slot
 * the caller's last search found there, where this one starts looking
 * (updated; it saves host time only).
 */
typedef struct bt_rpath {
	bt_node *nodes[BT_MAX_LEVEL];
	int slots[BT_MAX_LEVEL];
	int top;                  /* the root's level */
	bt_key next_key;
	int has_next;
	uint64_t lock_wait;
	simtime_t leaf_locked_at;
} bt_rpath;
bt_node *bt_search_read(bt_tree *tr, bt_node *root, task *t, const bt_key *key, int *hints,
			bt_rpath *p);
/* Release the leaf a bt_search_read with a task left locked. */
void bt_rpath_unlock(bt_tree *tr, task *t, bt_rpath *p);
/* On a path searched without a task: the item at the path, moving on to
 * the next leaf past a leaf's end (NULL past the last item; slots[0]++
 * steps), and the item before the path's position (moving to the previous
 * leaf; NULL before the first). */
const bt_item *bt_rpath_item(bt_rpath *p);
const bt_item *bt_rpath_prev(bt_rpath *p);
/* In a sorted array of n items (a leaf's, or a copy of one): the first
 * index with a key >= key, and the first index at or after `from` with a
 * key > key (n when none). */
int bt_items_lower(const bt_item *items, int n, const bt_key *key);
int bt_items_upper(const bt_item *items, int from, int n, const bt_key *key);

/* Insert an item of `size` data bytes with payload copied from *it (its key
 * and size fields are overwritten by key and size). Returns 0, 1 if the key
 * already exists (nothing inserted), or a negative LAB_E*. If p is not NULL
 * it is left pointing at the new item (the caller releases it). */
int bt_insert(bt_tree *tr, task *t, const bt_key *key, uint32_t size,
	      const bt_item *it, bt_path *p);
/* Insert a batch of items, sorted by key, at one place (models
 * btrfs_insert_empty_items with a batch, as copy_items does): one search
 * for the first key, with room made for the whole batch. Inserts the
 * leading items that fit one leaf and sort before the key that follows
 * the insert position (so a batch never straddles an item already in the
 * tree). Returns how many were inserted (>= 1), 0 if items[0]'s key
 * exists (nothing inserted), or a negative LAB_E*. */
int bt_insert_items(bt_tree *tr, task *t, const bt_item *items, int nr);
/* Delete nr items at p->slots[0] of the leaf in p (obtained with
 * bt_search(..., ins_len < 0, cow=1)). Merges/frees sparse leaves as
 * btrfs_del_items does. The path is released. */
int bt_del_items(bt_tree *tr, bt_path *p, int nr);
/* Search + delete one item; returns 0, 1 if not found, or negative. */
int bt_delete(bt_tree *tr, task *t, const bt_key *key);
/* Grow / shrink the item at p->slots[0] to new_size bytes of data
 * (models btrfs_extend_item / btrfs_truncate_item). For extend, p must come
 * from a bt_search with ins_len >= the growth and cow=1. */
int bt_extend_item(bt_tree *tr, bt_path *p, uint32_t new_size);
void bt_truncate_item(bt_tree *tr, bt_path *p, uint32_t new_size);

/* Move the path to the first item of the next / last item of the previous
 * leaf (models btrfs_next_leaf / btrfs_prev_leaf). Returns 0, 1 at the end,
 * or negative. The path keeps read locks unless it was a cow path. */
int bt_next_leaf(bt_tree *tr, bt_path *p);
int bt_prev_leaf(bt_tree *tr, bt_path *p);
/* Advance p->slots[0] by one item, crossing into the next leaf if needed
 * (models btrfs_next_item). Returns 0, 1 at the end, or negative. */
int bt_next_item(bt_tree *tr, bt_path *p);

/* Change the key of the item at a cow path in place; the new key must keep
 * the leaf's order (models btrfs_set_item_key_safe). */
void bt_set_item_key(bt_tree *tr, bt_path *p, const bt_key *key);
/* Item at the path (NULL if slots[0] is past the end of the leaf). */
bt_item *bt_path_item(const bt_path *p);
/* Mark the item at the path modified: its payload changed in place. The
 * path must be a cow path (the leaf already belongs to this transaction). */
void bt_mark_dirty(bt_tree *tr, bt_path *p);

/* Node-level access for walkers (snapshot drop, checker, front end). */
static inline int bt_node_level(const bt_node *n) { return n->level; }
static inline int bt_node_nritems(const bt_node *n) { return n->nritems; }
static inline uint64_t bt_node_bytenr(const bt_node *n) { return n->bytenr; }
static inline uint64_t bt_node_gen(const bt_node *n) { return n->generation; }
static inline uint64_t bt_node_owner(const bt_node *n) { return n->owner; }
static inline bt_node *bt_node_child(const bt_node *n, int i) { return n->ptrs[i].child; }
static inline const bt_key *bt_node_key(const bt_node *n, int i)
{
	return n->level ? &n->ptrs[i].key : &n->items[i].key;
}
int bt_tree_height(const bt_tree *tr);
/* Leaves and internal nodes in the tree (walks it; shared blocks once). */
void bt_count_blocks(const bt_tree *tr, uint64_t *leaves, uint64_t *nodes,
		     uint64_t *items);

/*
 * Snapshot support (models btrfs_copy_root): make dst share src's blocks.
 * dst gets a COW copy of src's root node, owned by dst->id, whose children
 * gain one reference each (extent refs queued). dst must be initialised
 * with bt_tree_init (its empty leaf is freed) or zeroed with fs and id set.
 */
int bt_copy_root(bt_tree *src, bt_tree *dst, task *t);

/*
 * Free a whole tree's blocks, dropping one reference from each block this
 * tree owns exclusively and stopping at shared blocks (which lose one
 * reference). Used by subvolume drop in its simplest form; subvol.c may walk
 * leaf by leaf instead with the node-level accessors and bt_free_block.
 */
void bt_free_tree(bt_tree *tr, task *t);
/* Drop one reference to block n as seen from tree tr (freeing it if that
 * was the last): queues the extent ref drop and, for a leaf's last
 * reference, drops the data refs of its file extent items. */
void bt_free_block(bt_tree *tr, bt_node *n, task *t);

/*
 * Tree shape as JSON for the front end: {"id","height","nodes":[{bytenr,
 * gen,owner,level,nritems,fill,first,last,locked}...],"levels":[{level,
 * count,shown,avg_fill}]}. At most max_nodes nodes are listed (breadth
 * first from the root, then a window); per-level summaries are complete.
 */
void bt_snapshot_json(const bt_tree *tr, strbuf *out, int max_nodes);

/* Recording (sim.h): list every block of the tree (preorder: blk, and a
 * link per key pointer) and its root, each block once per `epoch` (blocks
 * shared between trees are listed with the first). */
void bt_rec_dump(bt_tree *tr, uint32_t epoch);
/* A lock on block n of tree tr taken outside a path (mode BT_LOCK_READ /
 * BT_LOCK_WRITE; waited: the time it waited), and its release. */
void bt_rec_lock(bt_tree *tr, const task *t, const bt_node *n, int mode, simtime_t waited);
void bt_rec_unlock(bt_tree *tr, const task *t, const bt_node *n, int mode);

/* Free memory of blocks COWed away before the commit (called by fs_commit
 * once the new roots are committed). */
void bt_release_deferred(struct fs_info *fs);
/* Give the node arrays and block shells kept for reuse back to the
 * allocator (a file system is unmounted: kept across runs they pinned heap
 * the next run could not use). */
void bt_arr_pool_drain(void);

#endif /* BTREE_H */
