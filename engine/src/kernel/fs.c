/*
 * fs.c - fs_info, roots, the in-memory inode table, the queue of extent
 * reference changes and the tree part of the transaction commit (fs.h).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "space_fs.h"
#include "labmem.h"

void fs_opts_default(fs_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dev_bytes = 1ull << 40;
	o->max_inline = 2048;
	o->nodesize = BT_NODESIZE;
	o->no_holes = 1;
	o->write_blocks = 1;
	patch_kernel(PATCH_DEFAULT_KERNEL, &o->patches);
}

int fs_hooks_register(fs_info *fs, const fs_hooks *h)
{
	if (fs->nhooks >= FS_MAX_HOOKS)
		return LAB_ENOMEM;
	fs->hooks[fs->nhooks++] = *h;
	return 0;
}

void fs_hooks_cow(fs_info *fs, bt_tree *tr, uint64_t old_b, uint64_t new_b, int level)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_cow)
			fs->hooks[i].on_cow(fs->hooks[i].ctx, tr, old_b, new_b, level);
}

void fs_hooks_free(fs_info *fs, bt_tree *tr, uint64_t bytenr, int level, uint64_t owner)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_free)
			fs->hooks[i].on_free(fs->hooks[i].ctx, tr, bytenr, level, owner);
}

/* ------------------------------------------------------------- ref queue */

int fs_ref_queue(fs_info *fs, const fs_ref_op *op)
{
	if (fs->nrefq == fs->refq_cap) {
		uint64_t cap = fs->refq_cap ? fs->refq_cap * 2 : 256;
		fs_ref_op *nq = lab_realloc(fs->refq, (size_t)cap * sizeof(*nq));
		if (!nq)
			return LAB_ENOMEM;
		fs->refq = nq;
		fs->refq_cap = cap;
	}
	fs->refq[fs->nrefq++] = *op;
	if (!op->is_tree)
		for (int i = 0; i < fs->nhooks; i++)
			if (fs->hooks[i].on_data_ref)
				fs->hooks[i].on_data_ref(fs->hooks[i].ctx, op->root, op->bytenr,
							 op->num_bytes, op->owner, op->offset,
							 op->delta);
	return 0;
}

int fs_tree_block_alloc(fs_info *fs, bt_tree *tr, int level, uint64_t *bytenr)
{
	int r = alloc_extent(&fs->alloc, ALLOC_METADATA, BT_NODESIZE, bytenr);
	if (r)
		return r;
	fs_space_tree_block(fs);
	fs_ref_op op = {
		.bytenr = *bytenr, .num_bytes = BT_NODESIZE, .root = tr->id,
		.owner = (uint64_t)level, .delta = 1, .is_tree = 1,
	};
	r = fs_ref_queue(fs, &op);
	if (r)
		return r;
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_alloc)
			fs->hooks[i].on_alloc(fs->hooks[i].ctx, tr, *bytenr, level, tr->id);
	fs->dirty_blocks++;
	return 0;
}

/*
 * Apply one reference change to the extent tree (models the body of
 * run_one_delayed_ref: insert the extent item on the first ref, add or
 * drop an inline backref, delete the item and free the extent on the last
 * drop, with the data extent's checksums).
 */
int fs_apply_ref(fs_info *fs, task *t, const fs_ref_op *op)
{
	bt_tree *ext = &fs->extent_tree;
	bt_key key = op->is_tree
		? bt_mkkey(op->bytenr, BTRFS_METADATA_ITEM_KEY, op->owner)
		: bt_mkkey(op->bytenr, BTRFS_EXTENT_ITEM_KEY, op->num_bytes);
	uint32_t refsz = op->is_tree ? SZ_INLINE_TREE_REF : SZ_INLINE_DATA_REF;
	fs_charge(fs, t, FS_NS_REF_APPLY);
	fs->refs_run++;
	bt_path p;
	bt_path_init(&p, ext, t);
	if (op->delta > 0) {
		int ret = bt_search(ext, &p, &key, (int)(refsz + BT_ITEM_HEADER), 1);
		if (ret < 0) {
			bt_path_release(&p);
			return ret;
		}
		if (ret == 0) {
			bt_item *it = bt_path_item(&p);
			it->v[0]++;
			int same = op->is_tree ? it->v[1] == op->root
					       : (it->v[1] == op->root && it->v[2] == op->owner);
			if (!same) {
				int r = bt_extend_item(ext, &p, it->size + refsz);
				if (r) {
					bt_path_release(&p);
					return r;
				}
				it->aux++;
			}
			bt_path_release(&p);
			return 0;
		}
		bt_path_release(&p);
		bt_item ni;
		memset(&ni, 0, sizeof(ni));
		ni.v[0] = 1;
		ni.v[1] = op->root;
		ni.v[2] = op->owner;
		ni.aux = 1;
		int r = bt_insert(ext, t, &key, items_extent_item_size(op->is_tree, 1), &ni, NULL);
		if (r)
			return r < 0 ? r : LAB_EENGINE;
		return alloc_mark_used(&fs->alloc, op->bytenr, op->num_bytes);
	}
	int ret = bt_search(ext, &p, &key, -1, 1);
	if (ret) {
		bt_path_release(&p);
		return ret < 0 ? ret : LAB_EENGINE; /* dropping a ref that does not exist */
	}
	bt_item *it = bt_path_item(&p);
	if (it->v[0] > 1) {
		it->v[0]--;
		int same = op->is_tree ? it->v[1] == op->root
				       : (it->v[1] == op->root && it->v[2] == op->owner);
		if (!same && it->aux > 1) {
			it->aux--;
			bt_truncate_item(ext, &p, it->size - refsz);
		}
		bt_path_release(&p);
		return 0;
	}
	int r = bt_del_items(ext, &p, 1);
	if (r)
		return r;
	if (!op->is_tree) {
		r = fs_csum_delete(fs, t, op->bytenr, op->num_bytes);
		if (r)
			return r;
	}
	return alloc_free(&fs->alloc, op->bytenr, op->num_bytes);
}

int fs_run_refs(fs_info *fs, task *t)
{
	/* Applying refs COWs extent-tree blocks, which queues more refs; each
	 * block is COWed once per transaction, so this converges. */
	int rounds = 0;
	while (fs->nrefq) {
		if (++rounds > 1000)
			return LAB_EENGINE;
		fs_ref_op *q = fs->refq;
		uint64_t n = fs->nrefq;
		fs->refq = NULL;
		fs->nrefq = 0;
		fs->refq_cap = 0;
		for (uint64_t i = 0; i < n; i++) {
			int r = fs_apply_ref(fs, t, &q[i]);
			if (r) {
				free(q);
				return r;
			}
		}
		free(q);
	}
	return 0;
}

/* ----------------------------------------------------------------- roots */

int fs_tree_snapshot(fs_info *fs, const bt_tree *top, const char *what, struct strbuf *out)
{
	const bt_tree *tr = NULL;
	if (!strcmp(what, "tree:fs"))
		tr = top;
	else if (!strcmp(what, "tree:extent"))
		tr = &fs->extent_tree;
	else if (!strcmp(what, "tree:csum"))
		tr = &fs->csum_tree;
	else if (!strcmp(what, "tree:root"))
		tr = &fs->root_tree;
	else if (!strncmp(what, "tree:", 5)) {
		char *end;
		unsigned long long id = strtoull(what + 5, &end, 10);
		struct btrfs_root *root = *end ? NULL : fs_root_lookup(fs, id);
		if (root && root->tree.root)
			tr = &root->tree;
	}
	if (!tr)
		return LAB_ENOENT;
	bt_snapshot_json(tr, out, 200);
	return 0;
}

struct btrfs_root *fs_root_lookup(fs_info *fs, uint64_t id)
{
	int lo = 0, hi = fs->nroots - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		uint64_t x = fs->roots[mid]->id;
		if (x == id)
			return fs->roots[mid];
		if (x < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

uint64_t fs_root_next_id(const fs_info *fs)
{
	uint64_t id = BTRFS_FIRST_FREE_OBJECTID;
	if (fs->highest_root_id >= id)
		id = fs->highest_root_id + 1; /* a dropped root's id is not reused */
	for (int i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->id >= id)
			id = fs->roots[i]->id + 1;
	return id;
}

/* The root item as it should be now. */
static void root_item_fill(const bt_tree *tr, uint64_t refs, bt_item *it)
{
	memset(it, 0, sizeof(*it));
	it->v[0] = tr->root->bytenr;
	it->v[1] = tr->root->generation;
	it->v[2] = refs;
	it->aux = (uint32_t)tr->root->level;
}

/* Insert or refresh the ROOT_ITEM of tree tr. Returns 1 when it changed. */
static int root_item_write(fs_info *fs, task *t, bt_tree *tr, uint64_t refs)
{
	bt_key key = bt_mkkey(tr->id, BTRFS_ROOT_ITEM_KEY, 0);
	bt_item want;
	root_item_fill(tr, refs, &want);
	/* read-only look first: most roots are unchanged at most commits */
	bt_path p;
	bt_path_init(&p, &fs->root_tree, t);
	int ret = bt_search(&fs->root_tree, &p, &key, 0, 0);
	if (ret < 0) {
		bt_path_release(&p);
		return ret;
	}
	if (ret == 0) {
		bt_item *it = bt_path_item(&p);
		int same = it->v[0] == want.v[0] && it->v[1] == want.v[1] &&
			   it->v[2] == want.v[2] && it->aux == want.aux;
		bt_path_release(&p);
		if (same)
			return 0;
		bt_path_init(&p, &fs->root_tree, t);
		ret = bt_search(&fs->root_tree, &p, &key, 0, 1);
		if (ret) {
			bt_path_release(&p);
			return ret < 0 ? ret : LAB_EENGINE;
		}
		it = bt_path_item(&p);
		/* the COW above may have changed nothing we store, but refresh */
		root_item_fill(tr, refs, &want);
		it->v[0] = want.v[0];
		it->v[1] = want.v[1];
		it->v[2] = want.v[2];
		it->aux = want.aux;
		bt_path_release(&p);
		return 1;
	}
	bt_path_release(&p);
	int r = bt_insert(&fs->root_tree, t, &key, SZ_ROOT_ITEM, &want, NULL);
	return r < 0 ? r : 1;
}

int fs_root_update_item(fs_info *fs, task *t, struct btrfs_root *root)
{
	int r = root_item_write(fs, t, &root->tree, root->refs);
	return r < 0 ? r : 0;
}

int fs_root_create(fs_info *fs, task *t, uint64_t id, struct btrfs_root **out)
{
	if (fs_root_lookup(fs, id))
		return LAB_EINVAL;
	struct btrfs_root *root = lab_calloc(1, sizeof(*root));
	if (!root)
		return LAB_ENOMEM;
	root->id = id;
	root->fs = fs;
	if (id > fs->highest_root_id && id <= BTRFS_LAST_FREE_OBJECTID)
		fs->highest_root_id = id;
	root->root_dirid = BTRFS_FIRST_FREE_OBJECTID;
	root->highest_ino = BTRFS_FIRST_FREE_OBJECTID - 1;
	root->refs = 1;
	int r = bt_tree_init(fs, &root->tree, id, t);
	if (r) {
		free(root);
		return r;
	}
	if (fs->nroots == fs->roots_cap) {
		int cap = fs->roots_cap ? fs->roots_cap * 2 : 8;
		struct btrfs_root **nr = lab_realloc(fs->roots, (size_t)cap * sizeof(*nr));
		if (!nr) {
			bt_tree_destroy(&root->tree);
			free(root);
			return LAB_ENOMEM;
		}
		fs->roots = nr;
		fs->roots_cap = cap;
	}
	int i = fs->nroots;
	while (i > 0 && fs->roots[i - 1]->id > id) {
		fs->roots[i] = fs->roots[i - 1];
		i--;
	}
	fs->roots[i] = root;
	fs->nroots++;
	r = root_item_write(fs, t, &root->tree, root->refs);
	if (r < 0)
		return r;
	if (out)
		*out = root;
	return 0;
}

static void inode_free(fs_info *fs, struct inode *in)
{
	if (in)
		lab_pool_free(&fs->inode_log_pool, in->log);
	lab_pool_free(&fs->inode_pool, in);
}

inode_log *fs_inode_log(fs_info *fs, struct inode *in)
{
	if (!in->log) {
		if (!fs->inode_log_pool.size) /* an fs_info a test laid out */
			lab_pool_init(&fs->inode_log_pool, sizeof(inode_log), 256);
		in->log = lab_pool_zalloc(&fs->inode_log_pool);
	}
	return in->log;
}

static void inode_table_free(fs_info *fs, inode_table *tb)
{
	for (uint64_t i = 0; i < tb->cap; i++)
		inode_free(fs, tb->slots[i].in);
	free(tb->slots);
	memset(tb, 0, sizeof(*tb));
}

void fs_root_forget(fs_info *fs, struct btrfs_root *root)
{
	int i = 0;
	while (i < fs->nroots && fs->roots[i] != root)
		i++;
	if (i == fs->nroots)
		return;
	memmove(&fs->roots[i], &fs->roots[i + 1], (size_t)(fs->nroots - i - 1) * sizeof(*fs->roots));
	fs->nroots--;
	bt_tree_destroy(&root->tree);
	inode_table_free(fs, &root->inodes);
	free(root);
}

/* ---------------------------------------------------------------- inodes */

/* Fibonacci hashing: the top bits of ino * 2^64/phi (the low bits of the
 * product repeat with a short period for consecutive inode numbers, which
 * made long probe chains). cap is a power of two. */
static uint64_t ino_hash(uint64_t ino, uint64_t cap)
{
	return (ino * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll(cap));
}

static int inode_table_grow(inode_table *tb)
{
	uint64_t cap = tb->cap ? tb->cap * 2 : 64;
	inode_slot *ns = lab_calloc((size_t)cap, sizeof(*ns));
	if (!ns)
		return LAB_ENOMEM;
	for (uint64_t i = 0; i < tb->cap; i++) {
		inode_slot x = tb->slots[i];
		if (!x.in)
			continue;
		uint64_t h = ino_hash(x.ino, cap);
		while (ns[h].in)
			h = (h + 1) & (cap - 1);
		ns[h] = x;
	}
	free(tb->slots);
	tb->slots = ns;
	tb->cap = cap;
	return 0;
}

struct inode *fs_inode_get(struct btrfs_root *root, uint64_t ino)
{
	inode_table *tb = &root->inodes;
	if (!tb->cap)
		return NULL;
	uint64_t h = ino_hash(ino, tb->cap);
	while (tb->slots[h].in) {
		if (tb->slots[h].ino == ino)
			return tb->slots[h].in;
		h = (h + 1) & (tb->cap - 1);
	}
	return NULL;
}

/* Put an inode in the table (its ino must be new). */
static int inode_table_add(inode_table *tb, struct inode *in)
{
	if ((tb->count + 1) * 4 > tb->cap * 3) {
		int r = inode_table_grow(tb);
		if (r)
			return r;
	}
	uint64_t h = ino_hash(in->ino, tb->cap);
	while (tb->slots[h].in)
		h = (h + 1) & (tb->cap - 1);
	tb->slots[h] = (inode_slot){ in->ino, in };
	tb->count++;
	return 0;
}

int fs_inode_new(struct btrfs_root *root, uint32_t mode, struct inode **out)
{
	fs_info *fs = root->fs;
	if (mode > 0xffffu) /* struct inode keeps 16 bits */
		return LAB_EINVAL;
	if (root->highest_ino >= BTRFS_LAST_FREE_OBJECTID)
		return LAB_ENOSPC;
	struct inode *in = lab_pool_zalloc(&fs->inode_pool);
	if (!in)
		return LAB_ENOMEM;
	in->ino = root->highest_ino + 1;
	in->root = root;
	in->mode = mode;
	in->nlink = 1;
	in->generation = fs->transid;
	in->transid = fs->transid;
	in->dir_index = 2;
	int r = inode_table_add(&root->inodes, in);
	if (r) {
		lab_pool_free(&fs->inode_pool, in);
		return r;
	}
	root->highest_ino = in->ino;
	*out = in;
	return 0;
}

void fs_inode_forget(struct btrfs_root *root, struct inode *inode)
{
	inode_table *tb = &root->inodes;
	if (!tb->cap)
		return;
	uint64_t h = ino_hash(inode->ino, tb->cap);
	while (tb->slots[h].in && tb->slots[h].in != inode)
		h = (h + 1) & (tb->cap - 1);
	if (!tb->slots[h].in)
		return;
	tb->slots[h].in = NULL;
	tb->count--;
	/* backward-shift deletion keeps probe chains intact */
	uint64_t i = h;
	for (;;) {
		i = (i + 1) & (tb->cap - 1);
		inode_slot x = tb->slots[i];
		if (!x.in)
			break;
		uint64_t home = ino_hash(x.ino, tb->cap);
		/* x may move to h if h lies cyclically in [home, i) */
		int move = h <= i ? (home <= h || home > i) : (home <= h && home > i);
		if (move) {
			tb->slots[h] = x;
			tb->slots[i].in = NULL;
			h = i;
		}
	}
	inode_free(root->fs, inode);
}

static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = (*(struct inode *const *)a)->ino, y = (*(struct inode *const *)b)->ino;
	return x < y ? -1 : x > y;
}

void fs_inode_foreach(struct btrfs_root *root, void (*fn)(struct inode *, void *), void *ctx)
{
	inode_table *tb = &root->inodes;
	if (!tb->count)
		return;
	struct inode **v = lab_malloc((size_t)tb->count * sizeof(*v));
	if (!v)
		return;
	uint64_t n = 0;
	for (uint64_t i = 0; i < tb->cap; i++)
		if (tb->slots[i].in)
			v[n++] = tb->slots[i].in;
	qsort(v, (size_t)n, sizeof(*v), cmp_ino);
	for (uint64_t i = 0; i < n; i++)
		fn(v[i], ctx);
	free(v);
}

static void inode_reread(struct inode *in, void *ctx)
{
	(void)ctx;
	in->flags |= INODE_NEEDS_FULL_SYNC;
	if (in->log)
		in->log->last_log_commit = 0;
}

void fs_inodes_reread(fs_info *fs)
{
	for (int i = 0; i < fs->nroots; i++)
		fs_inode_foreach(fs->roots[i], inode_reread, NULL);
}

void fs_inode_evict_hooks(fs_info *fs, struct inode *in)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_inode_evict)
			fs->hooks[i].on_inode_evict(fs->hooks[i].ctx, in);
}

static void inode_prune(struct inode *in, void *ctx)
{
	fs_inode_evict_hooks(ctx, in);
}

void fs_root_prune_inodes(fs_info *fs, struct btrfs_root *root)
{
	fs_inode_foreach(root, inode_prune, fs);
	/* btrfs_drop_inode says 1 for a root whose refs are 0, so iput
	 * evicts each at once; btrfs_evict_inode then leaves its items (no
	 * truncate, no orphan: the cleaner drops the whole tree) */
	inode_table_free(fs, &root->inodes);
}

/* ---------------------------------------------------------------- commit */

/* Insert missing BLOCK_GROUP_ITEMs and refresh their used counters in the
 * extent tree (models btrfs_write_dirty_block_groups). Returns 1 if any
 * item changed. */
static int block_group_items(fs_info *fs, task *t)
{
	int changed = 0;
	for (int i = 0; i < fs->alloc.nbgs; i++) {
		block_group *bg = &fs->alloc.bgs[i];
		bt_key key = bt_mkkey(bg->start, BTRFS_BLOCK_GROUP_ITEM_KEY, bg->length);
		bt_path p;
		bt_path_init(&p, &fs->extent_tree, t);
		int ret = bt_search(&fs->extent_tree, &p, &key, 0, 0);
		if (ret < 0) {
			bt_path_release(&p);
			return ret;
		}
		if (ret == 0 && bt_path_item(&p)->v[0] == bg->used) {
			bt_path_release(&p);
			continue;
		}
		bt_path_release(&p);
		changed = 1;
		if (ret == 1) {
			bt_item ni;
			memset(&ni, 0, sizeof(ni));
			ni.v[0] = bg->used;
			ni.aux = (uint32_t)bg->kind;
			int r = bt_insert(&fs->extent_tree, t, &key, SZ_BLOCK_GROUP_ITEM, &ni, NULL);
			if (r)
				return r < 0 ? r : LAB_EENGINE;
			continue;
		}
		bt_path_init(&p, &fs->extent_tree, t);
		ret = bt_search(&fs->extent_tree, &p, &key, 0, 1);
		if (ret) {
			bt_path_release(&p);
			return ret < 0 ? ret : LAB_EENGINE;
		}
		bt_path_item(&p)->v[0] = bg->used;
		bt_path_release(&p);
	}
	return changed;
}

int fs_commit_roots(fs_info *fs, task *t)
{
	/* Like commit_cowonly_roots: run refs and rewrite root items and block
	 * group items until nothing changes (each pass COWs less). */
	for (int pass = 0; pass < 100; pass++) {
		int r = fs_run_refs(fs, t);
		if (r)
			return r;
		int changed = 0;
		for (int i = 0; i < fs->nroots; i++) {
			struct btrfs_root *root = fs->roots[i];
			if (root->deleted)
				continue;
			r = root_item_write(fs, t, &root->tree, root->refs);
			if (r < 0)
				return r;
			changed |= r;
			root->item_dirty = 0;
		}
		r = root_item_write(fs, t, &fs->extent_tree, 1);
		if (r < 0)
			return r;
		changed |= r;
		r = root_item_write(fs, t, &fs->csum_tree, 1);
		if (r < 0)
			return r;
		changed |= r;
		r = block_group_items(fs, t);
		if (r < 0)
			return r;
		changed |= r;
		if (!changed && fs->nrefq == 0)
			return 0;
	}
	return LAB_EENGINE;
}

int fs_commit(fs_info *fs, task *t)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_commit_start)
			fs->hooks[i].on_commit_start(fs->hooks[i].ctx, fs->transid);
	int r = fs_commit_roots(fs, t);
	if (r)
		return r;
	/* write the transaction's blocks, then the superblock with a flush */
	if (fs->dev && t && fs->opts.write_blocks) {
		simtime_t done = t->clock;
		/* DUP metadata: every block goes to both stripes, the second
		 * a chunk further on (the elevator sorts each stripe's writes
		 * into one stream) */
		for (int copy = 0; copy < fs->alloc.meta_factor; copy++) {
			uint64_t left = fs->dirty_blocks;
			uint64_t pos = fs->meta_write_pos +
				       (uint64_t)copy * fs->alloc.chunk_bytes[ALLOC_METADATA];
			while (left) {
				uint64_t n = left > 32 ? 32 : left;
				simtime_t c = bdev_io(fs->dev, BIO_WRITE, pos, n * BT_NODESIZE,
						      t->clock);
				pos += n * BT_NODESIZE;
				if (c > done)
					done = c;
				left -= n;
			}
		}
		fs->meta_write_pos += fs->dirty_blocks * BT_NODESIZE;
		task_wait_until(t, done);
		simtime_t sb = bdev_io(fs->dev, BIO_WRITE, 65536, 4096, t->clock);
		task_wait_until(t, bdev_flush(fs->dev, sb));
	}
	if (fs->sim) {
		sim_count(fs->sim, fs->c_blocks_written, (int64_t)fs->dirty_blocks);
		sim_count(fs->sim, fs->c_commits, 1);
	}
	alloc_unpin_all(&fs->alloc);
	/* the unpinned bytes may satisfy tickets: grant them now */
	fs_space_sync(fs, t ? t->clock : (fs->sim ? sim_now(fs->sim) : 0));
	fs->root_tree.commit_root = fs->root_tree.root;
	fs->extent_tree.commit_root = fs->extent_tree.root;
	fs->csum_tree.commit_root = fs->csum_tree.root;
	for (int i = 0; i < fs->nroots; i++)
		fs->roots[i]->tree.commit_root = fs->roots[i]->tree.root;
	bt_release_deferred(fs);
	fs->generation = fs->transid;
	fs->transid++;
	fs->dirty_blocks = 0;
	fs->commits++;
	SIM_REC(fs->sim, TK_COMMIT, t, fs->rec_fs, (int64_t)fs->generation);
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_commit_done)
			fs->hooks[i].on_commit_done(fs->hooks[i].ctx, fs->generation);
	return 0;
}

int fs_tree_height_max(fs_info *fs)
{
	int h = bt_tree_height(&fs->root_tree);
	if (bt_tree_height(&fs->extent_tree) > h)
		h = bt_tree_height(&fs->extent_tree);
	if (bt_tree_height(&fs->csum_tree) > h)
		h = bt_tree_height(&fs->csum_tree);
	for (int i = 0; i < fs->nroots; i++)
		if (fs->roots[i]->tree.root && bt_tree_height(&fs->roots[i]->tree) > h)
			h = bt_tree_height(&fs->roots[i]->tree);
	return h;
}

/* ----------------------------------------------------------------- mount */

/* The root directory inode of a new root: inode item plus its ".." ref
 * (what mkfs and create_subvol write). */
int fs_make_root_dir(fs_info *fs, task *t, struct btrfs_root *root);
int fs_make_root_dir(fs_info *fs, task *t, struct btrfs_root *root)
{
	struct inode *dir;
	int r = fs_inode_new(root, S_IFDIR_ | 0755, &dir);
	if (r)
		return r;
	assert(dir->ino == BTRFS_FIRST_FREE_OBJECTID);
	dir->parent = dir->ino;
	r = fs_inode_item_insert(fs, t, dir);
	if (r)
		return r;
	bt_item ref;
	memset(&ref, 0, sizeof(ref));
	ref.v[0] = 0;
	ref.v[1] = items_name_hash("..", 2);
	bt_key k = bt_mkkey(dir->ino, BTRFS_INODE_REF_KEY, dir->ino);
	r = bt_insert(&root->tree, t, &k, SZ_INODE_REF_BASE + 2, &ref, NULL);
	return r < 0 ? r : (r ? LAB_EENGINE : 0);
}

/* Recording (sim.h): every tree of the file system as it is, blocks
 * shared between trees listed once. */
static void fs_rec_dump(sim *s, void *ctx)
{
	fs_info *fs = ctx;
	(void)s;
	uint32_t epoch = ++fs->check_epoch;
	SIM_REC(fs->sim, TK_FS, NULL, fs->rec_fs, (int64_t)fs->generation);
	bt_rec_dump(&fs->root_tree, epoch);
	bt_rec_dump(&fs->extent_tree, epoch);
	bt_rec_dump(&fs->csum_tree, epoch);
	for (int i = 0; i < fs->nroots; i++)
		bt_rec_dump(&fs->roots[i]->tree, epoch);
}

int fs_mount(sim *s, bdev *dev, const fs_opts *opts, fs_info **out)
{
	fs_info *fs = lab_calloc(1, sizeof(*fs));
	if (!fs)
		return LAB_ENOMEM;
	if (opts)
		fs->opts = *opts;
	else
		fs_opts_default(&fs->opts);
	/* btrfs clamps max_inline to the sector size; a file of a whole
	 * sector is never inlined anyway (cow_file_range_inline) */
	if (fs->opts.nodesize != BT_NODESIZE || fs->opts.max_inline > SECTORSIZE) {
		free(fs);
		return LAB_EINVAL;
	}
	fs->sim = s;
	fs->dev = dev;
	lab_pool_init(&fs->inode_pool, sizeof(struct inode), 256);
	lab_pool_init(&fs->inode_log_pool, sizeof(inode_log), 256);
	fs->generation = 0;
	fs->transid = 1;
	fs->meta_write_pos = 1ull << 20;
	if (s) {
		fs->c_node_visits = sim_counter_id(s, "bt_node_visits");
		fs->c_cows = sim_counter_id(s, "bt_cows");
		fs->c_splits = sim_counter_id(s, "bt_splits");
		fs->c_commits = sim_counter_id(s, "fs_commits");
		fs->c_blocks_written = sim_counter_id(s, "fs_blocks_written");
		fs->rec_fs = sim_rec_fsno(s);
		if (sim_rec_dumper(s, fs_rec_dump, fs)) {
			free(fs);
			return LAB_ENOMEM;
		}
	}
	int r = alloc_init(&fs->alloc, fs->opts.dev_bytes);
	if (!r) {
		alloc_set_meta_dup(&fs->alloc, fs->opts.meta_dup);
		if (fs->opts.used_bytes)
			r = alloc_prefill(&fs->alloc, fs->opts.used_bytes, fs->opts.used_meta_bytes);
	}
	if (!r) {
		fs_space_init(fs);
		fs->space.meta_factor = fs->alloc.meta_factor;
	}
	if (!r)
		r = bt_tree_init(fs, &fs->root_tree, BTRFS_ROOT_TREE_OBJECTID, NULL);
	if (!r)
		r = bt_tree_init(fs, &fs->extent_tree, BTRFS_EXTENT_TREE_OBJECTID, NULL);
	if (!r)
		r = bt_tree_init(fs, &fs->csum_tree, BTRFS_CSUM_TREE_OBJECTID, NULL);
	struct btrfs_root *top = NULL;
	if (!r)
		r = fs_root_create(fs, NULL, BTRFS_FS_TREE_OBJECTID, &top);
	if (!r)
		r = fs_make_root_dir(fs, NULL, top);
	/* mkfs.btrfs makes a data block group too: buffered writes reserve
	 * data space against it (an empty data space_info would send the
	 * first write to the reclaim worker for a chunk) */
	if (!r)
		r = alloc_chunk_new(&fs->alloc, ALLOC_DATA);
	if (!r)
		r = fs_commit(fs, NULL);
	if (r) {
		fs_unmount(fs);
		return r;
	}
	*out = fs;
	return 0;
}

void fs_unmount(fs_info *fs)
{
	if (!fs)
		return;
	if (fs->sim)
		sim_rec_dumper_remove(fs->sim, fs);
	for (int i = fs->nroots - 1; i >= 0; i--)
		fs_root_forget(fs, fs->roots[i]);
	free(fs->roots);
	bt_tree_destroy(&fs->root_tree);
	bt_tree_destroy(&fs->extent_tree);
	bt_tree_destroy(&fs->csum_tree);
	bt_release_deferred(fs);
	bt_arr_pool_drain();
	check_incr_free(fs);
	fs_space_destroy(fs);
	alloc_destroy(&fs->alloc);
	free(fs->refq);
	free(fs->collisions);
	lab_pool_destroy(&fs->inode_pool);
	lab_pool_destroy(&fs->inode_log_pool);
	free(fs);
}
