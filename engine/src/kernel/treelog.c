/*
 * treelog.c - log transactions, inode logging and btrfs_sync_log, with the
 * patch-001 switch (clone each leaf under its lock, or copy into a scratch
 * eb preallocated outside all locks). See treelog.h.
 */
#include "treelog.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "delayed_inode.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

#define SUPER_OFFSET 65536ull
#define SUPER_BYTES 4096ull

/* Defaults: a 256 MiB log area at 1 GiB. */
void treelog_cfg_default(treelog_cfg *c)
{
	c->log_area_offset = 1ull << 30;
	c->log_area_bytes = 256ull << 20;
	c->max_records = 4096;
	c->keep_synced = 0;
}

/* ------------------------------------------------ the log trees' blocks */

static tl_root *tl_root_of(bt_tree *tr)
{
	return (tl_root *)(void *)((char *)tr - offsetof(tl_root, log));
}

/* A new log block (btrfs_alloc_tree_block for a log root: from the log's
 * own space here; its address is its identity, the IO wraps in the log
 * area). It is dirty until the next log commit writes it. */
static int tl_blk_alloc(void *ctx, bt_tree *tr, int level, uint64_t *bytenr)
{
	treelog *tl = ctx;
	tl_root *lr = tl_root_of(tr);
	(void)level;
	*bytenr = tl->cfg.log_area_offset + tl->blk_seq++ * BT_NODESIZE;
	lr->log_blocks++;
	lr->dirty_blocks++;
	return 0;
}

/* A log block left its tree: COWed after a log commit wrote it, merged, or
 * freed with the log. A written one stays readable while it may be part
 * of the synced log (keep_synced). */
static void tl_blk_free(void *ctx, bt_tree *tr, bt_node *n)
{
	treelog *tl = ctx;
	tl_root *lr = tl_root_of(tr);
	assert(lr->log_blocks > 0);
	lr->log_blocks--;
	if (n->generation == tr->priv_gen) {
		assert(lr->dirty_blocks > 0);
		lr->dirty_blocks--;
	}
	if (tl->cfg.keep_synced)
		n->keep_mem = 1;
}

/* Recording (sim.h): the log trees as they are, when a recording starts
 * while a log is open (its blocks would otherwise be known only once
 * changed). A log tree shares no block: each gets an epoch of its own. */
static void tl_rec_dump(sim *s, void *ctx)
{
	treelog *tl = ctx;
	(void)s;
	for (int i = 0; i < tl->nroots; i++) {
		bt_tree *lt = &tl->roots[i].log;
		if (lt->root && lt->fs)
			bt_rec_dump(lt, ++lt->fs->check_epoch);
	}
}

/* Create the log state; validates the configuration. */
int treelog_create(sim *s, bdev *dev, ebmem *mem, const treelog_cfg *cfg,
		   treelog **out)
{
	treelog_cfg def;
	if (!out)
		return LAB_EINVAL;
	*out = NULL;
	if (!s || !mem)
		return LAB_EINVAL;
	if (!cfg) {
		treelog_cfg_default(&def);
		cfg = &def;
	}
	if (cfg->max_records == 0 || cfg->max_records > (1u << 22) ||
	    cfg->log_area_bytes < 16 * BT_NODESIZE ||
	    cfg->log_area_bytes % BT_NODESIZE || cfg->log_area_offset % 4096)
		return LAB_ERANGE;
	treelog *tl = lab_calloc(1, sizeof(*tl));
	if (!tl)
		return LAB_ENOMEM;
	tl->recs = lab_calloc(cfg->max_records, sizeof(tl_rec));
	if (!tl->recs) {
		free(tl);
		return LAB_ENOMEM;
	}
	tl->sim = s;
	tl->dev = dev;
	tl->mem = mem;
	tl->cfg = *cfg;
	tl->ops.ctx = tl;
	tl->ops.alloc = tl_blk_alloc;
	tl->ops.free = tl_blk_free;
	lhist_init(&tl->leaf_hold);
	lhist_init(&tl->leaf_wait);
	lhist_init(&tl->victim_wait);
	lhist_init(&tl->alloc_locked);
	lhist_init(&tl->writer_wait);
	lhist_init(&tl->commit_wait);
	treelog_set_phase(tl, "default");
	/* trace: fsync (ino, latency ns, full), log_commit (log transid,
	 * blocks, fsyncs in it), leaf_copy (leaf bytenr, hold ns, alloc ns) */
	tl->k_fsync = sim_trace_kind(s, "fsync");
	tl->k_log_commit = sim_trace_kind(s, "log_commit");
	tl->k_leaf = sim_trace_kind(s, "leaf_copy");
	tl->s_writers = sim_series_id(s, "log_writers");
	tl->s_sync_waiters = sim_series_id(s, "log_sync_waiters");
	tl->s_fsync_ms = sim_series_id(s, "fsync_ms");
	tl->c_fsync = sim_counter_id(s, "fsyncs");
	tl->c_log_commit = sim_counter_id(s, "log_commits");
	if (sim_rec_dumper(s, tl_rec_dump, tl)) {
		free(tl->recs);
		free(tl);
		return LAB_ENOMEM;
	}
	*out = tl;
	return 0;
}

/* Free the log state (fsyncs in flight must have finished). */
void treelog_destroy(treelog *tl)
{
	if (!tl)
		return;
	sim_rec_dumper_remove(tl->sim, tl);
	for (int i = 0; i < tl->nroots; i++) {
		/* memory only: the file system may be gone already */
		tl->roots[i].log.rec_h = 0;
		bt_tree_destroy(&tl->roots[i].log);
	}
	free(tl->dl_spare);
	free(tl->batch);
	free(tl->recs);
	free(tl);
}

/* The log state of a root: a linear table (few roots are ever logged). */
tl_root *treelog_root(treelog *tl, uint64_t root_id)
{
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == root_id)
			return &tl->roots[i];
	if (tl->nroots >= TL_MAX_ROOTS)
		return NULL;
	tl_root *lr = &tl->roots[tl->nroots++];
	memset(lr, 0, sizeof(*lr));
	lr->root_id = root_id;
	lr->log_transid = 1;
	lr->log_gen = 1;
	return lr;
}

/* Select (creating if new) the phase fsync latencies are recorded in. */
int treelog_set_phase(treelog *tl, const char *name)
{
	for (int i = 0; i < tl->nphases; i++)
		if (strcmp(tl->phase_names[i], name) == 0)
			return tl->phase = i;
	if (tl->nphases >= TL_MAX_PHASES)
		return LAB_ENOMEM;
	int i = tl->nphases++;
	snprintf(tl->phase_names[i], sizeof(tl->phase_names[i]), "%s", name);
	lhist_init(&tl->phase_lat[i]);
	char sname[40];
	snprintf(sname, sizeof(sname), "fsync_ms_%s", tl->phase_names[i]);
	tl->phase_series[i] = sim_series_id(tl->sim, sname);
	return tl->phase = i;
}

/* The q-quantile of a phase's fsync latencies (1.0: the maximum). */
uint64_t treelog_phase_quantile(const treelog *tl, const char *phase, double q)
{
	for (int i = 0; i < tl->nphases; i++)
		if (strcmp(tl->phase_names[i], phase) == 0)
			return lhist_quantile(&tl->phase_lat[i], q);
	return 0;
}

/* Attach (or detach with NULL) a transaction manager. */
void treelog_set_trans(treelog *tl, trans_mgr *tm)
{
	tl->tm = tm;
}

/* Record another operation's wait for a subvolume leaf lock. */
void treelog_note_leaf_wait(treelog *tl, uint64_t wait_ns)
{
	lhist_add(&tl->victim_wait, wait_ns);
}

int treelog_leaf_held(const treelog *tl, uint64_t bytenr, simtime_t at, uint64_t *ino)
{
	uint32_t n = tl->nholds < TL_HOLD_RING ? tl->nholds : TL_HOLD_RING;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (tl->nholds - 1 - i) % TL_HOLD_RING;
		if (tl->holds[j].bytenr == bytenr && tl->holds[j].from < at && at <= tl->holds[j].to) {
			if (ino)
				*ino = tl->holds[j].ino;
			return 1;
		}
	}
	return 0;
}

/* Models btrfs_free_log at transaction commit: the log trees go away, and
 * an inode changed before this commit no longer needs logging. */
void treelog_on_commit(treelog *tl, uint64_t transid)
{
	(void)transid;
	for (int i = 0; i < tl->nroots; i++) {
		tl_root *lr = &tl->roots[i];
		if (lr->log.root)
			bt_free_tree(&lr->log, NULL);
		lr->log_items = 0;
		lr->dirty_blocks = 0;
		lr->dirty_inodes = 0;
		lr->synced_root = NULL;
		lr->synced_transid = 0;
	}
}

/* fs_hooks.on_unlink: a name removed from a directory logged in this
 * transaction leaves the log too (btrfs_del_dir_entries_in_log,
 * btrfs_del_inode_ref_in_log), so a replay does not bring it back. */
static void tl_hook_unlink(void *ctx, task *t, struct inode *dir, struct inode *in,
			   uint64_t index, int for_rename)
{
	treelog *tl = ctx;
	fs_info *fs = dir->root->fs;
	/* btrfs_record_unlink_dir: a rename neither side of which is in the
	 * log cannot be found by a later fsync; those fsyncs commit */
	if (for_rename && fs && inode_log_get(dir).logged_trans != fs->transid &&
	    inode_log_get(in).logged_trans != fs->transid) {
		inode_log *li = fs_inode_log(fs, in), *ld = fs_inode_log(fs, dir);
		if (li)
			li->last_unlink_trans = fs->transid;
		if (ld)
			ld->last_unlink_trans = fs->transid;
	}
	tl_root *lr = NULL;
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == dir->root->id)
			lr = &tl->roots[i];
	if (!lr || !lr->log.root || !fs)
		return;
	if (inode_log_get(dir).logged_trans == fs->transid && index != UINT64_MAX) {
		bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, index);
		if (bt_delete(&lr->log, t, &k) == 0)
			lr->log_items--;
	}
	if (inode_log_get(in).logged_trans == fs->transid) {
		bt_key k = bt_mkkey(in->ino, BTRFS_INODE_REF_KEY, dir->ino);
		if (bt_delete(&lr->log, t, &k) == 0)
			lr->log_items--;
		/* its names changed since it was logged: its next fsync copies
		 * its items again, the refs with them (what btrfs_log_new_name
		 * does at the rename itself) */
		in->flags |= INODE_COPY_EVERYTHING;
	}
}

/* fs_hooks.on_commit_done: the log trees go with the commit. */
static void tl_hook_commit_done(void *ctx, uint64_t transid)
{
	treelog_on_commit(ctx, transid);
}

/* Hook the log to an fs: fs->slot[FS_SLOT_LOG] and the commit hook. */
int treelog_attach(treelog *tl, fs_info *fs)
{
	fs_hooks h;
	memset(&h, 0, sizeof(h));
	h.ctx = tl;
	h.on_commit_done = tl_hook_commit_done;
	h.on_unlink = tl_hook_unlink;
	fs->slot[FS_SLOT_LOG] = tl;
	tl->fs = fs;
	return fs_hooks_register(fs, &h);
}

/* Done with a dir pass's deletion list: its buffer is kept for the next
 * pass (one malloc per fsync of a directory saved), the larger of two. */
static void tl_dl_del_put(treelog *tl, tl_fsync *f)
{
	uint64_t *b = f->dl_del;
	int cap = f->dl_del_cap;
	f->dl_del = NULL;
	f->ndl_del = 0;
	f->dl_del_cap = 0;
	if (!b)
		return;
	if (tl->dl_spare && tl->dl_spare_cap >= cap) {
		free(b);
		return;
	}
	free(tl->dl_spare);
	tl->dl_spare = b;
	tl->dl_spare_cap = cap;
}

void treelog_fsync_abandon(treelog *tl, tl_fsync *f)
{
	tl_dl_del_put(tl, f);
	if (f->pend && f->pend_clone)
		ebmem_free(tl->mem, f->pend);
	f->pend = NULL;
	if (f->scratch) {
		ebmem_free(tl->mem, f->scratch);
		f->scratch = NULL;
	}
}

/* Prepare an fsync's log context (btrfs_init_log_ctx). */
int treelog_fsync_init(tl_fsync *f, struct btrfs_root *root,
		       struct inode *inode, uint32_t new_extents)
{
	return treelog_fsync_init_parent(f, root, inode, new_extents, NULL);
}

/* Prepare an fsync that also logs the parent directory's changes. */
int treelog_fsync_init_parent(tl_fsync *f, struct btrfs_root *root,
			      struct inode *inode, uint32_t new_extents,
			      struct inode *parent)
{
	if (!f || !root || !inode || parent == inode)
		return LAB_EINVAL;
	if (parent && (parent->mode & S_IFMT_) != S_IFDIR_)
		return LAB_EINVAL;
	memset(f, 0, sizeof(*f));
	f->root = root;
	f->inode = inode;
	f->new_extents = new_extents;
	f->state = TLS_START;
	f->parent = parent;
	f->rec.ino = inode->ino;
	return 0;
}

/* ------------------------------------------------ subvolume tree reading */

static int tl_key_cmp(const bt_key *a, const bt_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

/* a < b, without branches: a binary search's compare outcome is a coin
 * toss the host's branch predictor loses half the time. */
static inline int tl_key_lt(const bt_key *a, const bt_key *b)
{
	uint64_t ao = a->objectid, bo = b->objectid, af = a->offset, bf = b->offset;
	unsigned at = a->type, bt = b->type;
	return (ao < bo) | ((ao == bo) & ((at < bt) | ((at == bt) & (af < bf))));
}

/* The first of n keys, stride bytes apart, that is >= key (a lower
 * bound); *steps gets the compares of the classic halving search. */
static inline int tl_lower_bound(const char *base, size_t stride, int n, const bt_key *key,
				 int *steps)
{
	int lo = 0, hi = n, k = 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int lt = tl_key_lt((const bt_key *)(base + (size_t)mid * stride), key);
		k++;
		lo = lt ? mid + 1 : lo;
		hi = lt ? hi : mid;
	}
	*steps = k;
	return lo;
}

/* The compares the halving search of tl_lower_bound makes on n keys when
 * its answer is pos: key[mid] < key exactly when mid < pos, so its path
 * follows from pos alone. */
static inline int tl_lb_steps(int n, int pos)
{
	int lo = 0, hi = n, k = 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int lt = mid < pos;
		k++;
		lo = lt ? mid + 1 : lo;
		hi = lt ? hi : mid;
	}
	return k;
}

/* tl_lower_bound's answer and *steps, found from a guess h (a slot near
 * the answer: successive descents of an fsync land next to the last one)
 * by galloping, which reads a few keys instead of a whole halving
 * path's. The charged compares stay those of the halving search. */
static int tl_lower_bound_near(const char *base, size_t stride, int n, const bt_key *key,
			       int h, int *steps)
{
#define TL_KEY_AT(i) ((const bt_key *)(base + (size_t)(i) * stride))
	int lo, hi; /* the answer is in [lo, hi] */
	if (h > n)
		h = n;
	if (h < 0)
		h = 0;
	if (h == n || !tl_key_lt(TL_KEY_AT(h), key)) {
		hi = h;
		lo = 0;
		for (int d = 1; h - d >= 0; d *= 2) {
			if (tl_key_lt(TL_KEY_AT(h - d), key)) {
				lo = h - d + 1;
				break;
			}
			hi = h - d;
		}
	} else {
		lo = h + 1;
		hi = n;
		for (int d = 1; h + d < n; d *= 2) {
			if (!tl_key_lt(TL_KEY_AT(h + d), key)) {
				hi = h + d;
				break;
			}
			lo = h + d + 1;
		}
	}
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int lt = tl_key_lt(TL_KEY_AT(mid), key);
		lo = lt ? mid + 1 : lo;
		hi = lt ? hi : mid;
	}
#undef TL_KEY_AT
	*steps = tl_lb_steps(n, lo);
#ifdef TL_CHECK_HINT
	{
		int st2, lo2 = tl_lower_bound(base, stride, n, key, &st2);
		if (lo2 != lo || st2 != *steps)
			abort();
	}
#endif
	return lo;
}

/* Binary search in a block: the first slot whose key is >= key (leaf) or
 * the last pointer whose key is <= key (node). *steps gets the compares.
 * *hint: where the last search at this level landed (updated). */
static int tl_bsearch(const bt_node *n, const bt_key *key, int *steps, int *hint)
{
	if (n->level == 0)
		return *hint = tl_lower_bound_near((const char *)n->items, sizeof(bt_item),
						   n->nritems, key, *hint, steps);
	int lo = tl_lower_bound_near((const char *)n->ptrs, sizeof(bt_ptr), n->nritems, key,
				     *hint, steps);
	*hint = lo;
	/* node: child covering key */
	if (lo < n->nritems && tl_key_cmp(&n->ptrs[lo].key, key) == 0)
		return lo;
	return lo > 0 ? lo - 1 : 0;
}

/* Read-only descent to the leaf that holds key (or would), with read-lock
 * coupling: each child is locked before its parent is released. Returns
 * the leaf, read-locked by t (the caller releases it), and the first slot
 * >= key; *next_key receives the first key of the next leaf (or has
 * *has_next = 0 on the rightmost leaf). Models the search part of
 * btrfs_search_forward. Charges node visits and compares. */
static bt_node *tl_descend(bt_tree *tr, task *t, sim *s, const bt_key *key, int *hints,
			   int *slot, bt_key *next_key, int *has_next,
			   uint64_t *lock_wait, simtime_t *leaf_locked_at)
{
	bt_node *n = tr->root;
	*has_next = 0;
	if (!n)
		return NULL;
	simtime_t before = t->clock;
	simlock_read(&n->lock, t);
	bt_rec_lock(tr, t, n, BT_LOCK_READ, t->clock - before);
	*lock_wait += t->clock - before;
	*leaf_locked_at = t->clock;
	while (n->level > 0) {
		int steps;
		int i = tl_bsearch(n, key, &steps, &hints[n->level < BT_MAX_LEVEL ? n->level : 0]);
		task_cpu(s, t, BT_NS_NODE_VISIT + (uint64_t)steps * BT_NS_BSEARCH_STEP);
		if (i + 1 < n->nritems) {
			*next_key = n->ptrs[i + 1].key;
			*has_next = 1;
		}
		bt_node *c = n->ptrs[i].child;
		before = t->clock;
		simlock_read(&c->lock, t);
		bt_rec_lock(tr, t, c, BT_LOCK_READ, t->clock - before);
		*lock_wait += t->clock - before;
		*leaf_locked_at = t->clock;
		simlock_read_release(&n->lock, t->clock);
		bt_rec_unlock(tr, t, n, BT_LOCK_READ);
		n = c;
	}
	int steps;
	*slot = tl_bsearch(n, key, &steps, &hints[0]);
	task_cpu(s, t, BT_NS_NODE_VISIT + (uint64_t)steps * BT_NS_BSEARCH_STEP);
	return n;
}

/* Release the subvolume leaf's read lock (recorded: the replay marks the
 * leaf read-locked for as long as the copy holds it). */
static void tl_leaf_unlock(bt_tree *tr, task *t, bt_node *leaf)
{
	simlock_read_release(&leaf->lock, t->clock);
	bt_rec_unlock(tr, t, leaf, BT_LOCK_READ);
}

/* ------------------------------------------------------------ logging */

/* The log tree of lr, made by the first log transaction after a commit
 * (start_log_trans -> btrfs_add_log_tree). */
static int tl_log_tree(treelog *tl, task *t, tl_root *lr, fs_info *fs)
{
	if (lr->log.root)
		return 0;
	return bt_tree_init_priv(fs, &lr->log, BTRFS_TREE_LOG_OBJECTID, &tl->ops, lr->log_gen, t);
}

/* Put one item into the log tree (copy_items' btrfs_insert_empty_items and
 * the copy). An item of that key already logged is replaced, or with
 * replace = 0 left as it is (a dir index item logged before). A
 * replacement of the same size is written over the item the insert's
 * search found, as insert_dir_log_key and log_inode_item do (-EEXIST
 * leaves the path at it); another size is deleted and inserted again. */
static int tl_log_put(treelog *tl, task *t, tl_root *lr, const bt_item *it, int replace)
{
	bt_tree *lt = &lr->log;
	bt_path p;
	int r = bt_insert(lt, t, &it->key, it->size, it, &p);
	if (r == 1) {
		bt_item *x = bt_path_item(&p);
		if (!replace) {
			bt_path_release(&p);
			return 0;
		}
		if (x && x->size == it->size) {
			*x = *it;
			bt_mark_dirty(lt, &p);
			bt_path_release(&p);
			tl->items_logged++;
			return 0;
		}
		bt_path_release(&p);
		r = bt_delete(lt, t, &it->key);
		if (r == 0)
			r = bt_insert(lt, t, &it->key, it->size, it, NULL);
		if (r == 0)
			lr->log_items--;
	} else if (r == 0) {
		bt_path_release(&p);
	}
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	lr->log_items++;
	tl->items_logged++;
	return 0;
}

/* Drop an inode's items of types min_type..max_type from the log before
 * logging it again, as btrfs_log_inode -> drop_inode_items does: a
 * deleting search for the inode's last such key, then all of them in
 * that leaf deleted as one batch (btrfs_del_items); only a batch that
 * began at the leaf's first slot can have more in the leaf before it,
 * and only then is the search repeated. */
static int tl_log_drop_inode(treelog *tl, task *t, tl_root *lr, uint64_t ino, uint8_t min_type,
			     uint8_t max_type)
{
	bt_tree *lt = &lr->log;
	const bt_key first = bt_mkkey(ino, min_type, 0);
	(void)tl;
	for (;;) {
		bt_key k = bt_mkkey(ino, max_type, UINT64_MAX);
		bt_path p;
		bt_path_init(&p, lt, t);
		int r = bt_search(lt, &p, &k, -1, 1);
		if (r < 0) {
			bt_path_release(&p);
			return r;
		}
		int last = p.slots[0];
		if (r == 1) {
			/* the slot after the inode's last key: none left when
			 * that is the tree's first slot */
			if (last == 0) {
				bt_path_release(&p);
				return 0;
			}
			last--;
		}
		const bt_node *leaf = p.nodes[0];
		if (bt_key_cmp(bt_node_key(leaf, last), &first) < 0) {
			bt_path_release(&p);
			return 0;
		}
		int start = last;
		while (start > 0 && bt_key_cmp(bt_node_key(leaf, start - 1), &first) >= 0)
			start--;
		p.slots[0] = start;
		r = bt_del_items(lt, &p, last - start + 1);
		if (r)
			return r < 0 ? r : LAB_EENGINE;
		lr->log_items -= (uint64_t)(last - start + 1);
		if (start != 0)
			return 0;
	}
}

/* A logged directory index range [start, end] (insert_dir_log_key): at
 * replay, a committed entry inside it that the log does not hold is
 * deleted. */
static int tl_log_range(treelog *tl, task *t, tl_root *lr, uint64_t dir, uint64_t start,
			uint64_t end)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(dir, BTRFS_DIR_LOG_INDEX_KEY, start);
	it.size = SZ_DIR_LOG_ITEM;
	it.v[0] = end;
	return tl_log_put(tl, t, lr, &it, 1);
}

/* A logged range that must cover [start, end]: kept when a range logged
 * from that index already does. */
static int tl_log_range_cover(treelog *tl, task *t, tl_root *lr, uint64_t dir, uint64_t start,
			      uint64_t end)
{
	bt_key k = bt_mkkey(dir, BTRFS_DIR_LOG_INDEX_KEY, start);
	bt_path p;
	bt_path_init(&p, &lr->log, t);
	int r = bt_search(&lr->log, &p, &k, 0, 0);
	uint64_t have = 0;
	if (r == 0)
		have = bt_path_item(&p)->v[0];
	bt_path_release(&p);
	if (r < 0)
		return r;
	if (r == 0 && have >= end)
		return 0;
	return tl_log_range(tl, t, lr, dir, start, end);
}

/* A dir pass's changed leaves copied in a row are covered by one logged
 * range, as log_dir_items logs one over the leaves it walks while they
 * are from the running transaction: the range grows with each leaf... */
static void tl_range_extend(tl_fsync *f, uint64_t ino, uint64_t hi)
{
	if (!f->range_open) {
		f->range_open = 1;
		f->range_lo = f->range_start;
		f->range_ino = ino;
	}
	f->range_hi = hi;
}

/* ... and is logged when the run ends: at an unchanged leaf, or at the
 * end of the pass. */
static int tl_range_flush(treelog *tl, task *t, tl_fsync *f)
{
	if (!f->range_open)
		return 0;
	f->range_open = 0;
	return tl_log_range(tl, t, f->lr, f->range_ino, f->range_lo, f->range_hi);
}

/* The start of a dir pass (6.1+, "use delayed items when logging a
 * directory"): the directory's delayed items are taken first
 * (btrfs_log_get_delayed_items); its queued new names go into the log
 * straight from memory (log_delayed_insertion_items: no subvolume leaf
 * locked, nothing cloned); its queued deletions are kept for the end of
 * the pass. */
static int tl_dir_delayed_start(treelog *tl, task *t, tl_fsync *f)
{
	fs_info *fs = f->root->fs;
	delayed_root *dr = dl_of(fs);
	tl_dl_del_put(tl, f);
	if (!dr)
		return 0;
	struct inode *d = fs_inode_get(f->root, f->dir_ino);
	const dl_ins *ins;
	int nins, ndel;
	dl_dir_items(dr, d, &ins, &nins, &ndel);
	if (!nins && !ndel)
		return 0;
	task_cpu(tl->sim, t, (uint64_t)(nins + ndel) * TL_NS_SLOT);
	inode_log dlg = d ? inode_log_get(d) : (inode_log){0};
	uint64_t skip_to = dlg.logged_trans == fs->transid ? dlg.last_dir_index_offset : 0;
	int rc = 0;
	for (int i = 0; i < nins && !rc; i++) {
		if (skip_to && ins[i].index <= skip_to)
			continue;
		rc = tl_log_put(tl, t, f->lr, &ins[i].it, 0);
		if (ins[i].index > f->dir_logged_max)
			f->dir_logged_max = ins[i].index;
	}
	if (!rc && ndel) {
		if (tl->dl_spare && tl->dl_spare_cap >= ndel) {
			f->dl_del = tl->dl_spare;
			f->dl_del_cap = tl->dl_spare_cap;
			tl->dl_spare = NULL;
		} else {
			f->dl_del = lab_malloc((size_t)ndel * sizeof(*f->dl_del));
			if (!f->dl_del)
				return LAB_ENOMEM;
			f->dl_del_cap = ndel;
		}
		f->ndl_del = dl_log_take_deletions(dr, d, f->dl_del);
		tl->dels_logged += (uint64_t)f->ndl_del;
	}
	return rc;
}

/* The end of a dir pass: the names deleted but still queued leave the log
 * and their indexes are logged as ranges, so a replay drops them from the
 * committed directory (log_delayed_deletion_items). */
static int tl_dir_delayed_end(treelog *tl, task *t, tl_fsync *f)
{
	int rc = 0;
	for (int i = 0; i < f->ndl_del && !rc;) {
		int j = i;
		while (j + 1 < f->ndl_del && f->dl_del[j + 1] == f->dl_del[j] + 1)
			j++;
		for (int k = i; k <= j && !rc; k++) {
			bt_key key = bt_mkkey(f->dir_ino, BTRFS_DIR_INDEX_KEY, f->dl_del[k]);
			int r = bt_delete(&f->lr->log, t, &key);
			if (r == 0)
				f->lr->log_items--;
			else if (r < 0)
				rc = r;
		}
		if (!rc)
			rc = tl_log_range_cover(tl, t, f->lr, f->dir_ino, f->dl_del[i], f->dl_del[j]);
		i = j + 1;
	}
	tl_dl_del_put(tl, f);
	return rc;
}

/* The first slot at or after from whose key is past bound (nritems when
 * none): a run of one inode's items ends the leaf (a directory's index
 * items), else is short (a file's); both are found reading a few keys
 * near its ends rather than a halving path across the leaf. */
static int tl_run_end(const bt_node *leaf, int from, bt_key bound)
{
	const bt_item *it = leaf->items;
	int n = leaf->nritems;
	if (!tl_key_lt(&bound, &it[n - 1].key))
		return n;
	int lo = from, hi = n - 1; /* the answer is in [lo, hi] */
	for (int d = 1; lo + d - 1 < hi; d *= 2) {
		int p = lo + d - 1;
		if (tl_key_lt(&bound, &it[p].key)) {
			hi = p;
			break;
		}
		lo = p + 1;
	}
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int past = tl_key_lt(&bound, &it[mid].key);
		lo = past ? lo : mid + 1;
		hi = past ? mid : hi;
	}
	return lo;
}

/* The index items a directory logged before in this transaction
 * (inode->last_dir_index_offset): a dir pass skips them. Only grows while
 * an fsync holds its transaction handle. 0: none. */
static uint64_t tl_dir_skip_to(const tl_fsync *f, uint64_t dir_ino)
{
	fs_info *fs = f->root->fs;
	struct inode *dir = fs_inode_get(f->root, dir_ino);
	if (!dir || !fs || inode_log_get(dir).logged_trans != fs->transid)
		return 0;
	return inode_log_get(dir).last_dir_index_offset;
}

/* The first of items [from, to) past skip_to, when they are one
 * directory's index items (sorted by index: the ones logged before are a
 * prefix); else from (each item is checked on its own). */
static int tl_skip_logged(const bt_item *items, int from, int to, uint64_t skip_to)
{
	if (!skip_to || from >= to || items[from].key.type != items[to - 1].key.type)
		return from;
	bt_key k = items[from].key;
	int steps;
	k.offset = skip_to;
	from += tl_lower_bound((const char *)(items + from), sizeof(bt_item), to - from, &k,
			       &steps);
	if (from < to && items[from].key.offset == skip_to)
		from++;
	return from;
}

/*
 * Copy the next leaf's worth of inode ino's items of types <= max_type
 * into the log (one step of copy_inode_items_to_log + copy_items, or of
 * log_dir_items + process_dir_items_leaf). Leaves older than min_trans
 * are passed over without a copy (btrfs_search_forward's min_trans).
 * Returns 1 when the inode has no more items, 0 to continue, negative on
 * error. The subvolume leaf is read-locked from the search until its
 * content is in a private buffer: BEFORE that includes the clone's
 * allocation, AFTER only a copy into the preallocated scratch eb.
 */
static int tl_copy_leaf(treelog *tl, task *t, tl_fsync *f, uint64_t ino,
			uint8_t max_type, uint64_t min_trans)
{
	bt_tree *tr = &f->root->tree;
	int dirpass = max_type == BTRFS_DIR_INDEX_KEY;
	int slot, has_next;
	bt_key next_key;
	uint64_t wait = 0;
	simtime_t locked_at = 0;
	/* search hints: a pass's first descent starts from where the last
	 * pass of its kind began, the later ones from the descent before */
	int first_desc = f->next_key.offset == 0 &&
			 f->next_key.type == (dirpass ? BTRFS_DIR_INDEX_KEY : 0);
	int *hints = f->hints;
	if (first_desc && (dirpass || f->isdir)) {
		unsigned k = (unsigned)(ino % TL_DIR_HINTS);
		if (tl->dir_hints[k].ino != ino) {
			memset(&tl->dir_hints[k], 0, sizeof(tl->dir_hints[k]));
			tl->dir_hints[k].ino = ino;
		}
		hints = tl->dir_hints[k].h[dirpass];
	} else if (first_desc) {
		hints = tl->hints;
	}
	bt_node *leaf = tl_descend(tr, t, tl->sim, &f->next_key, hints, &slot,
				   &next_key, &has_next, &wait, &locked_at);
	if (first_desc)
		memcpy(f->hints, hints, sizeof(f->hints));
	f->hints[0] = 0; /* the next descent starts a leaf */
	if (!leaf)
		return 1;
	f->rec.lock_wait_ns += wait;
	if (wait)
		lhist_add(&tl->leaf_wait, wait);

	/* the search landed past this leaf's last item: continue in the next
	 * leaf (btrfs_search_forward moves on by itself) */
	if (slot >= leaf->nritems) {
		tl_leaf_unlock(tr, t, leaf);
		if (!has_next || tl_key_cmp(&next_key, &f->next_key) <= 0)
			return 1;
		f->next_key = next_key;
		return next_key.objectid == ino ? 0 : 1;
	}
	/* collect the inode's slots: the run from slot of keys of ino with
	 * type <= max_type. The keys are sorted, so once the slot's key is
	 * ino's, the run ends at the first key past (ino, max_type, ~0). */
	int first = slot, last = slot;
	if (leaf->items[slot].key.objectid == ino)
		last = tl_run_end(leaf, slot, bt_mkkey(ino, max_type, UINT64_MAX));
#ifdef TL_CHECK_HINT
	{
		int l2 = slot;
		while (l2 < leaf->nritems && leaf->items[l2].key.objectid == ino &&
		       leaf->items[l2].key.type <= max_type)
			l2++;
		if (l2 != last)
			abort();
	}
#endif
	task_cpu(tl->sim, t, (uint64_t)(last - first + 1) * TL_NS_SLOT);
	if (last == first) {
		int changed = leaf->generation >= min_trans;
		tl_leaf_unlock(tr, t, leaf);
		/* a directory with no entry left in a changed leaf: the
		 * range to its end is logged empty */
		if (dirpass && changed)
			tl_range_extend(f, ino, UINT64_MAX);
		return 1;
	}
	int more = last == leaf->nritems && has_next &&
		   next_key.objectid == ino && next_key.type <= max_type;
	bt_key resume = leaf->items[last - 1].key;
	if (leaf->generation < min_trans) {
		/* unchanged in this transaction: nothing of it to log; the
		 * next logged range starts after its entries */
		tl_leaf_unlock(tr, t, leaf);
		if (dirpass) {
			int rc = tl_range_flush(tl, t, f);
			if (rc)
				return rc;
			f->range_start = resume.offset + 1;
		}
		if (!more)
			return 1;
		f->next_key = next_key;
		return 0;
	}

	/* get the leaf into a private buffer while it is still locked. The
	 * simulated copy is of the whole leaf; the host copies only the
	 * items the put can use: a dir pass's items logged before are
	 * skipped there (the skip point cannot move back meanwhile) */
	if (dirpass)
		first = tl_skip_logged(leaf->items, first, last, tl_dir_skip_to(f, ino));
	ebmem_eb *clone = NULL;
	uint64_t lat = 0;
	int rc;
	if (f->scratch) {
		rc = ebmem_copy_slots(tl->mem, t, f->scratch, leaf, first, last);
		tl->scratch_used++;
	} else {
		rc = ebmem_clone_slots(tl->mem, t, leaf, first, last, &clone, &lat);
		f->rec.alloc_locked_ns += lat;
		lhist_add(&tl->alloc_locked, lat);
		tl->clones++;
	}
	tl_leaf_unlock(tr, t, leaf);
	uint64_t hold = t->clock - locked_at;
	lhist_add(&tl->leaf_hold, hold);
	sim_trace(tl->sim, tl->k_leaf, t->id, (int64_t)leaf->bytenr, (int64_t)hold,
		  (int64_t)lat);
	if (hold > f->rec.hold_max_ns)
		f->rec.hold_max_ns = hold;
	{
		uint32_t j = tl->nholds++ % TL_HOLD_RING;
		tl->holds[j].bytenr = leaf->bytenr;
		tl->holds[j].ino = ino;
		tl->holds[j].from = locked_at;
		tl->holds[j].to = t->clock;
	}
	if (tl->on_leaf) {
		tl_leaf_ev ev = { t->id, ino, leaf->bytenr, locked_at, t->clock, lat,
				  f->scratch != NULL, dirpass };
		tl->on_leaf(tl->obs_ctx, &ev);
	}
	if (rc)
		return rc;

	/* the copy goes into the log in the next step, with no subvolume
	 * lock held (copy_items after btrfs_release_path) */
	f->pend = f->scratch ? f->scratch : clone;
	f->pend_clone = clone != NULL;
	f->pend_first = first;
	f->pend_last = last;
	f->pend_ino = ino;
	f->pend_end = more ? next_key.offset - 1 : UINT64_MAX;
	f->pend_more = more;
	f->rec.leaves++;
	tl->leaves_copied++;
	if (!more)
		return 0;
	/* the next leaf starts right after the last key copied */
	f->next_key = resume;
	if (f->next_key.offset != UINT64_MAX) {
		f->next_key.offset++;
	} else if (f->next_key.type != 255) {
		f->next_key.type++;
		f->next_key.offset = 0;
	} else {
		f->pend_more = 0;
	}
	return 0;
}

/* An explicit hole in the log (btrfs_log_holes: with NO_HOLES a full sync
 * logs the gaps, so a replay punches what the committed file had there). */
static int tl_log_hole(treelog *tl, task *t, tl_fsync *f, uint64_t from, uint64_t to)
{
	if (to <= from)
		return 0;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(f->inode->ino, BTRFS_EXTENT_DATA_KEY, from);
	it.size = SZ_FE_REG;
	it.aux = FE_REG;
	it.v[1] = to - from;
	return tl_log_put(tl, t, f->lr, &it, 1);
}

/* Put a batch of items, sorted by key, into the log: each run that one
 * search can place goes in at once (copy_items' btrfs_insert_empty_items
 * with the batch); an item already logged is handled on its own as
 * tl_log_put does (replaced, or with replace = 0 kept). */
static int tl_log_put_batch(treelog *tl, task *t, tl_root *lr, const bt_item *items, int n,
			    int replace)
{
	for (int i = 0; i < n;) {
		int r = bt_insert_items(&lr->log, t, items + i, n - i);
		if (r < 0)
			return r;
		if (r == 0) {
			r = tl_log_put(tl, t, lr, &items[i], replace);
			if (r)
				return r;
			i++;
			continue;
		}
		lr->log_items += (uint64_t)r;
		tl->items_logged += (uint64_t)r;
		i += r;
	}
	return 0;
}

/* Insert the leaf copied in the previous step into the log (copy_items:
 * the items gathered into one batch, the inode item filled from memory),
 * then free the clone. Returns 1 when the pass has no more leaves, 0 to
 * continue, negative on error. */
static int tl_put_pending(treelog *tl, task *t, tl_fsync *f)
{
	const ebmem_eb *src = f->pend;
	int dirpass = f->state == TLS_DIRS;
	int rc = 0;
	struct inode *dir = dirpass ? fs_inode_get(f->root, f->pend_ino) : NULL;
	fs_info *fs = f->root->fs;
	/* dir index items logged before in this transaction */
	uint64_t skip_to = dirpass ? tl_dir_skip_to(f, f->pend_ino) : 0;
	int from = tl_skip_logged(src->items, f->pend_first, f->pend_last, skip_to);
	if (f->pend_last - from > tl->batch_cap) {
		/* an error goes on to free the clone below */
		int cap = f->pend_last - from;
		bt_item *b = lab_malloc((size_t)cap * sizeof(*b));
		if (b) {
			free(tl->batch);
			tl->batch = b;
			tl->batch_cap = cap;
		} else {
			rc = LAB_ENOMEM;
		}
	}
	bt_item *batch = tl->batch;
	int nb = 0;
	for (int i = from; i < f->pend_last && !rc; i++) {
		const bt_item *x = &src->items[i];
		if (dirpass && skip_to && x->key.offset <= skip_to)
			continue;
		if (dirpass && dir && x->key.offset > f->dir_logged_max)
			f->dir_logged_max = x->key.offset;
		if (!dirpass && x->key.type == BTRFS_EXTENT_DATA_KEY) {
			/* a hole before the extent: the batch so far goes
			 * first, the hole after it (btrfs_log_holes inserts
			 * each hole on its own) */
			if (x->key.offset > f->fe_end) {
				rc = tl_log_put_batch(tl, t, f->lr, batch, nb, 1);
				nb = 0;
				if (!rc)
					rc = tl_log_hole(tl, t, f, f->fe_end, x->key.offset);
			}
			uint64_t len = x->aux == FE_INLINE
				? (x->v[1] + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE : x->v[1];
			f->fe_end = x->key.offset + len;
			if (rc)
				break;
		}
		batch[nb] = *x;
		if (!dirpass && x->key.type == BTRFS_INODE_ITEM_KEY) {
			/* copy_items fills the logged inode item from the
			 * inode in memory (fill_inode_item): an update still
			 * queued as a delayed item is logged too */
			bt_item fresh;
			struct inode *in = fs_inode_get(f->root, x->key.objectid);
			if (in && dl_pending_inode_item(dl_of(fs), in, &fresh)) {
				fresh.key = x->key;
				fresh.size = x->size;
				batch[nb] = fresh;
			}
		}
		nb++;
	}
	if (!rc)
		rc = tl_log_put_batch(tl, t, f->lr, batch, nb, !dirpass);
	if (!rc && dirpass) {
		tl_range_extend(f, f->pend_ino, f->pend_end);
		f->range_start = f->pend_end == UINT64_MAX ? f->pend_end : f->pend_end + 1;
	}
	if (f->pend_clone) {
		ebmem_free(tl->mem, f->pend);
		task_cpu(tl->sim, t, EBMEM_NS_FREE);
	}
	f->pend = NULL;
	f->pend_clone = 0;
	if (rc)
		return rc;
	return f->pend_more ? 0 : 1;
}

/* An inode item filled from the in-memory inode (fill_inode_item). */
static bt_item tl_inode_item(const struct inode *in)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(in->ino, BTRFS_INODE_ITEM_KEY, 0);
	it.size = SZ_INODE_ITEM;
	it.v[0] = in->size;
	it.v[1] = in->nbytes;
	it.v[2] = in->generation;
	it.aux = in->mode;
	return it;
}

/* The fast fsync's logging: the inode item filled from memory and the
 * extents changed in this transaction, which btrfs takes from the
 * inode's modified extent maps (btrfs_log_changed_extents): here the
 * file extent items of the inode's leaves COWed in this transaction, read
 * without a subvolume lock (the extent maps are memory; no clone). */
static int tl_log_fast(treelog *tl, task *t, tl_fsync *f)
{
	tl_root *lr = f->lr;
	struct inode *in = f->inode;
	bt_item ii = tl_inode_item(in);
	int rc = tl_log_put(tl, t, lr, &ii, 1);
	fs_info *fs = f->root->fs;
	if (rc || !fs || (in->mode & S_IFMT_) != S_IFREG_)
		return rc;
	bt_tree *tr = &f->root->tree;
	bt_key k = bt_mkkey(in->ino, BTRFS_EXTENT_DATA_KEY, 0);
	bt_path p;
	fs->accounting_off++;
	bt_path_init(&p, tr, NULL);
	int r = bt_search(tr, &p, &k, 0, 0);
	bt_item buf[16];
	int nbuf = 0;
	while (r >= 0 && !rc) {
		const bt_item *x = bt_path_item(&p);
		if (!x) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		if (x->key.objectid != in->ino || x->key.type != BTRFS_EXTENT_DATA_KEY)
			break;
		if (p.nodes[0]->generation >= fs->transid)
			buf[nbuf++] = *x;
		if (nbuf == 16 || bt_next_item(tr, &p)) {
			/* insert outside the subvolume walk */
			bt_key resume = x->key;
			int end = nbuf < 16;
			bt_path_release(&p);
			fs->accounting_off--;
			for (int i = 0; i < nbuf && !rc; i++)
				rc = tl_log_put(tl, t, lr, &buf[i], 1);
			fs->accounting_off++;
			nbuf = 0;
			if (end)
				break;
			resume.offset++;
			bt_path_init(&p, tr, NULL);
			r = bt_search(tr, &p, &resume, 0, 0);
		}
	}
	bt_path_release(&p);
	fs->accounting_off--;
	for (int i = 0; i < nbuf && !rc; i++)
		rc = tl_log_put(tl, t, lr, &buf[i], 1);
	return r < 0 ? r : rc;
}

/*
 * Write what this log transaction dirtied and the super block (the IO
 * part of btrfs_sync_log): the log leaves and the path above them, the
 * log root tree block, wait for all; then a flush, the super block and a
 * FUA flush. Advances t's clock to the completion.
 */
static void tl_write_log(treelog *tl, task *t, tl_root *lr)
{
	/* the log blocks made since the last log commit (COWed, split, new)
	 * and the log root tree's block */
	uint64_t blocks = lr->dirty_blocks + 1;
	fs_info *fs = lr->log.fs;
	lr->synced_root = lr->log.root;
	lr->synced_transid = fs ? fs->transid : 0;
	/* written: the next change COWs them (BTRFS_HEADER_FLAG_WRITTEN) */
	lr->log_gen++;
	lr->log.priv_gen = lr->log_gen;
	lr->dirty_blocks = 0;
	task_cpu(tl->sim, t, TL_NS_SYNC_CPU);
	lr->blocks_written += blocks;
	tl->blocks_written += blocks;
	tl->supers_written++;
	if (!tl->dev)
		return;
	simtime_t at = t->clock, done = at;
	for (uint64_t i = 0; i < blocks; i++) {
		uint64_t off = tl->cfg.log_area_offset + tl->log_pos;
		tl->log_pos = (tl->log_pos + BT_NODESIZE) % tl->cfg.log_area_bytes;
		simtime_t c = bdev_io(tl->dev, BIO_WRITE, off, BT_NODESIZE, at);
		if (c > done)
			done = c;
	}
	done = bdev_flush(tl->dev, done);
	done = bdev_io(tl->dev, BIO_WRITE, SUPER_OFFSET, SUPER_BYTES, done);
	done = bdev_flush(tl->dev, done);
	task_wait_until(t, done);
}

/* Finish the record of an fsync and file it. */
static void tl_record(treelog *tl, task *t, tl_fsync *f)
{
	f->rec.end = t->clock;
	f->rec.phase = (uint8_t)tl->phase;
	uint64_t lat = f->rec.end - f->rec.start;
	lhist_add(&tl->phase_lat[tl->phase], lat);
	tl->recs[tl->nrecs % tl->cfg.max_records] = f->rec;
	tl->nrecs++;
	sim_series_add(tl->sim, tl->s_fsync_ms, f->rec.end, (double)lat / 1e6);
	if (tl->phase_series[tl->phase] >= 0)
		sim_series_add(tl->sim, tl->phase_series[tl->phase], f->rec.end, (double)lat / 1e6);
	sim_trace(tl->sim, tl->k_fsync, t->id, (int64_t)f->rec.ino, (int64_t)lat, f->rec.full);
	sim_count(tl->sim, tl->c_fsync, 1);
}

/* Sample the tasks parked in btrfs_sync_log: the committer waiting for
 * the writers plus those waiting for its commit. */
static void tl_sample_waiters(treelog *tl, const tl_root *lr, simtime_t at)
{
	sim_series_add(tl->sim, tl->s_sync_waiters, at,
		       lr->writer_wait.len + lr->commit_wait.len);
}

/* Wait (a known end time) for the IO of the last log commit. */
static void tl_wait_commit_io(treelog *tl, task *t, tl_fsync *f)
{
	simtime_t end = f->lr->last_commit_end;
	if (end > t->clock) {
		uint64_t w = end - t->clock;
		f->rec.commit_wait_ns += w;
		lhist_add(&tl->commit_wait, w);
		task_wait_until(t, end);
	}
}

/*
 * The sync part, for a task that left the log transaction (models
 * btrfs_sync_log). Another task's commit of our log transaction is
 * waited for; a commit of the previous one too. Otherwise this task
 * commits: waits for log_writers == 0, then writes. Returns a TASK_*.
 */
static int tl_sync(treelog *tl, task *t, tl_fsync *f)
{
	tl_root *lr = f->lr;
	if (lr->log_transid_committed >= f->log_transid) {
		/* committed in a step that ran ahead: its IO ends later */
		tl_wait_commit_io(tl, t, f);
		return TASK_DONE;
	}
	if (lr->committing) {
		/* someone syncs our transid or the one before it */
		f->state = TLS_WAIT_COMMIT;
		f->parked_at = t->clock;
		task_park(t, &lr->commit_wait);
		tl_sample_waiters(tl, lr, t->clock);
		return TASK_BLOCKED;
	}
	assert(f->log_transid == lr->log_transid);
	lr->committing = 1;
	lr->committing_transid = f->log_transid;
	f->rec.committed = 1;
	if (lr->log_writers > 0) {
		f->state = TLS_WAIT_WRITERS;
		f->parked_at = t->clock;
		task_park(t, &lr->writer_wait);
		tl_sample_waiters(tl, lr, t->clock);
		return TASK_BLOCKED;
	}
	/* no writer left: close this log transaction, later joiners start
	 * the next one; the previous log commit's IO must be over before
	 * ours starts (wait_log_commit of the other index) */
	tl_wait_commit_io(tl, t, f);
	lr->log_transid++;
	uint64_t blocks_before = lr->blocks_written;
	simtime_t wstart = t->clock;
	uint64_t inodes = lr->dirty_inodes;
	tl_write_log(tl, t, lr);
	if (tl->on_log_commit)
		tl->on_log_commit(tl->obs_ctx, lr->root_id, wstart, t->clock,
				  lr->blocks_written - blocks_before, inodes);
	lr->log_transid_committed = f->log_transid;
	lr->last_commit_end = t->clock;
	lr->committing = 0;
	sim_trace(tl->sim, tl->k_log_commit, t->id, (int64_t)f->log_transid,
		  (int64_t)(lr->blocks_written - blocks_before), (int64_t)lr->dirty_inodes);
	lr->dirty_inodes = 0;
	lr->log_commits++;
	tl->log_commits++;
	sim_count(tl->sim, tl->c_log_commit, 1);
	waitq_wake_all(tl->sim, &lr->commit_wait, t->clock);
	tl_sample_waiters(tl, lr, t->clock);
	return TASK_DONE;
}

/* The directory of ino's first name (its first INODE_REF), 0 if none: a
 * lookup the kernel does not pay (the dentry's parent is in memory). */
static uint64_t tl_ref_parent(fs_info *fs, struct btrfs_root *root, uint64_t ino)
{
	bt_tree *tr = &root->tree;
	bt_key k = bt_mkkey(ino, BTRFS_INODE_REF_KEY, 0);
	bt_path p;
	uint64_t par = 0;
	fs->accounting_off++;
	bt_path_init(&p, tr, NULL);
	int r = bt_search(tr, &p, &k, 0, 0);
	if (r >= 0) {
		const bt_item *x = bt_path_item(&p);
		if (!x && bt_next_leaf(tr, &p) == 0)
			x = bt_path_item(&p);
		if (x && x->key.objectid == ino && x->key.type == BTRFS_INODE_REF_KEY)
			par = x->key.offset;
	}
	bt_path_release(&p);
	fs->accounting_off--;
	return par;
}

/* btrfs_log_inode_parent's look at the ancestors: a rename the log could
 * not record above the inode forces a commit; directories made in this
 * transaction get logged with their names (log_all_new_ancestors). */
static void tl_ancestors(tl_fsync *f, fs_info *fs)
{
	struct inode *in = f->inode;
	if (inode_log_get(in).last_unlink_trans == fs->transid ||
	    (f->parent && inode_log_get(f->parent).last_unlink_trans == fs->transid)) {
		f->need_commit = 1;
		return;
	}
	uint64_t p = f->isdir ? in->parent : tl_ref_parent(fs, f->root, in->ino);
	for (int depth = 0; p && p != BTRFS_FIRST_FREE_OBJECTID && depth < 64; depth++) {
		struct inode *d = fs_inode_get(f->root, p);
		if (!d || d == in)
			break;
		if (inode_log_get(d).last_unlink_trans == fs->transid) {
			f->need_commit = 1;
			return;
		}
		if (d->generation == fs->transid && inode_log_get(d).logged_trans != fs->transid &&
		    d != f->parent) {
			if (f->nanc == (int)(sizeof f->anc / sizeof f->anc[0])) {
				f->need_commit = 1; /* deeper than we log: commit */
				return;
			}
			f->anc[f->nanc++] = d->ino;
		}
		p = d->parent;
	}
}

/* After the inode items: a directory's new entries, then the parent
 * directory's (inode item from memory, changed entries), the new
 * ancestors, else the end. */
static void tl_next_pass(treelog *tl, task *t, tl_fsync *f)
{
	fs_info *fs = f->root->fs;
	if (f->state == TLS_DIRS) {
		int r = tl_range_flush(tl, t, f);
		if (r) {
			f->error = r;
			f->state = TLS_END;
			return;
		}
	}
	if (f->state == TLS_DIRS && f->ndl_del) {
		int r = tl_dir_delayed_end(tl, t, f);
		if (r) {
			f->error = r;
			f->state = TLS_END;
			return;
		}
	}
	if (f->state == TLS_DIRS && fs) {
		/* the directory's index items up to here are in the log
		 * (inode->last_dir_index_offset) */
		struct inode *d = fs_inode_get(f->root, f->dir_ino);
		inode_log *l = d ? fs_inode_log(fs, d) : NULL;
		if (l) {
			if (l->logged_trans != fs->transid)
				l->last_dir_index_offset = 0;
			if (f->dir_logged_max > l->last_dir_index_offset)
				l->last_dir_index_offset = f->dir_logged_max;
			l->logged_trans = fs->transid;
		}
	}
	if (f->state == TLS_COPY && !f->isdir &&
	    (f->inode->mode & S_IFMT_) == S_IFREG_) {
		/* the hole from the last extent to EOF */
		uint64_t eof = (f->inode->size + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
		int r = tl_log_hole(tl, t, f, f->fe_end, eof);
		if (r) {
			f->error = r;
			f->state = TLS_END;
			return;
		}
		f->fe_end = eof;
	}
	if (f->isdir && f->dir_ino == 0) {
		f->dir_ino = f->inode->ino;
	} else if (f->parent && !f->parent_done) {
		f->parent_done = 1;
		f->dir_ino = f->parent->ino;
		bt_item ii = tl_inode_item(f->parent);
		int r = tl_log_put(tl, t, f->lr, &ii, 1);
		if (r) {
			f->error = r;
			f->state = TLS_END;
			return;
		}
	} else if (f->anc_next < f->nanc) {
		f->state = TLS_ANC;
		return;
	} else {
		f->state = TLS_END;
		return;
	}
	f->next_key = bt_mkkey(f->dir_ino, BTRFS_DIR_INDEX_KEY, 0);
	f->range_start = 0;
	f->range_open = 0;
	f->dir_logged_max = 0;
	f->state = TLS_DIRS;
	int r = tl_dir_delayed_start(tl, t, f);
	if (r) {
		f->error = r;
		f->state = TLS_END;
	}
}

/* One step of an fsync's log part; see treelog.h. */
int treelog_fsync_step(treelog *tl, task *t, tl_fsync *f)
{
	if (!tl || !t || !f || !f->inode || !f->root)
		return LAB_EINVAL;
	int r;
	switch (f->state) {
	case TLS_START: {
		f->rec.start = t->clock;
		tl->fsyncs++;
		fs_info *fs = f->root->fs;
		struct inode *in = f->inode;
		int full = (in->flags & (INODE_NEEDS_FULL_SYNC | INODE_COPY_EVERYTHING)) != 0;
		f->lr = treelog_root(tl, f->root->id);
		if (!f->lr)
			return LAB_ENOMEM;
		/* nothing changed since the last commit: the data is durable
		 * with that commit (skip_inode_logging) */
		if (fs && in->transid <= fs->generation && !full) {
			f->rec.skipped = 1;
			tl->skipped++;
			tl_record(tl, t, f);
			f->state = TLS_DONE;
			return TASK_DONE;
		}
		f->isdir = (in->mode & S_IFMT_) == S_IFDIR_;
		f->rec.full = (uint8_t)full;
		if (fs)
			tl_ancestors(f, fs);
		if (f->need_commit) {
			/* BTRFS_LOG_FORCE_COMMIT: btrfs_sync_file commits */
			f->rec.force_commit = 1;
			tl_record(tl, t, f);
			f->state = TLS_DONE;
			return TASK_DONE;
		}
		if (full && fs && fs_patch_on(fs, P_001_PREALLOC_SCRATCH_EB)) {
			/* patch 001: before any lock and before the log
			 * transaction; a failure only means cloning later */
			ebmem_eb *eb = NULL;
			simtime_t a0 = t->clock;
			int arc = ebmem_alloc(tl->mem, t, &eb, NULL);
			if (tl->on_scratch)
				tl->on_scratch(tl->obs_ctx, t->id, a0, t->clock);
			if (arc == 0) {
				f->scratch = eb;
				f->rec.scratch = 1;
			} else {
				tl->scratch_fallbacks++;
			}
		}
		f->state = TLS_JOIN;
		return TASK_RUN;
	}
	case TLS_JOIN:
		/* btrfs_start_transaction: a commit in progress parks us */
		if (tl->tm && !f->has_th) {
			r = trans_start(tl->tm, t, &f->th);
			if (r == TRANS_WAIT)
				return TASK_BLOCKED;
			if (r < 0)
				return r;
			f->has_th = 1;
		}
		/* start_log_trans */
		task_cpu(tl->sim, t, TL_NS_LOG_TRANS);
		f->lr->log_writers++;
		f->lr->log_batch++;
		f->log_transid = f->lr->log_transid;
		sim_series_add(tl->sim, tl->s_writers, t->clock, f->lr->log_writers);
		if (tl->on_log_trans)
			tl->on_log_trans(tl->obs_ctx, t->id, 1, t->clock, f->lr->log_writers);
		f->fe_end = 0;
		r = tl_log_tree(tl, t, f->lr, f->root->fs);
		/* what the log holds of the inode goes first: a full sync
		 * copies all of it again (a directory its inode items, its
		 * entries by range), a fast one its changed extents */
		if (!r)
			r = f->rec.full ? tl_log_drop_inode(tl, t, f->lr, f->inode->ino, 0,
							    f->isdir ? BTRFS_XATTR_ITEM_KEY : 255)
					: tl_log_drop_inode(tl, t, f->lr, f->inode->ino,
							    BTRFS_EXTENT_DATA_KEY, BTRFS_EXTENT_DATA_KEY);
		if (r) {
			f->error = r;
			f->state = TLS_END;
			return TASK_RUN;
		}
		if (f->rec.full) {
			f->next_key = bt_mkkey(f->inode->ino, 0, 0);
			f->state = TLS_COPY;
			tl->full++;
		} else {
			f->state = TLS_FAST;
			tl->fast++;
		}
		return TASK_RUN;
	case TLS_COPY:
		/* a directory's inode items stop at its xattrs: its entries
		 * are logged by the dir pass */
		r = f->pend ? tl_put_pending(tl, t, f)
			    : tl_copy_leaf(tl, t, f, f->inode->ino,
					   f->isdir ? BTRFS_XATTR_ITEM_KEY : 255, 0);
		if (r < 0) {
			f->error = r;
			f->state = TLS_END;
			return TASK_RUN;
		}
		if (r == 1)
			tl_next_pass(tl, t, f);
		return TASK_RUN;
	case TLS_FAST:
		r = tl_log_fast(tl, t, f);
		if (r < 0) {
			f->error = r;
			f->state = TLS_END;
			return TASK_RUN;
		}
		tl_next_pass(tl, t, f);
		return TASK_RUN;
	case TLS_DIRS: {
		fs_info *fs = f->root->fs;
		r = f->pend ? tl_put_pending(tl, t, f)
			    : tl_copy_leaf(tl, t, f, f->dir_ino, BTRFS_DIR_INDEX_KEY,
					   fs ? fs->transid : 0);
		if (r < 0) {
			f->error = r;
			f->state = TLS_END;
		} else if (r == 1) {
			tl_next_pass(tl, t, f);
		}
		return TASK_RUN;
	}
	case TLS_ANC: {
		/* a new ancestor: its inode item and its name */
		struct inode *d = fs_inode_get(f->root, f->anc[f->anc_next++]);
		r = 0;
		if (d) {
			bt_item ii = tl_inode_item(d);
			r = tl_log_put(tl, t, f->lr, &ii, 1);
			bt_tree *tr = &f->root->tree;
			bt_key k = bt_mkkey(d->ino, BTRFS_INODE_REF_KEY, d->parent);
			bt_path p;
			bt_path_init(&p, tr, t);
			int found = r ? -1 : bt_search(tr, &p, &k, 0, 0);
			bt_item ref;
			if (found == 0)
				ref = *bt_path_item(&p);
			bt_path_release(&p);
			if (found == 0)
				r = tl_log_put(tl, t, f->lr, &ref, 1);
			inode_log *l = r ? NULL : fs_inode_log(f->root->fs, d);
			if (l)
				l->logged_trans = f->root->fs->transid;
		}
		if (r) {
			f->error = r;
			f->state = TLS_END;
		} else {
			tl_next_pass(tl, t, f);
		}
		return TASK_RUN;
	}
	case TLS_END:
		tl_dl_del_put(tl, f);
		/* end_log_trans, then the scratch eb goes before the sync */
		task_cpu(tl->sim, t, TL_NS_LOG_TRANS);
		assert(f->lr->log_writers > 0);
		f->lr->log_writers--;
		f->lr->dirty_inodes++;
		sim_series_add(tl->sim, tl->s_writers, t->clock, f->lr->log_writers);
		if (tl->on_log_trans)
			tl->on_log_trans(tl->obs_ctx, t->id, 0, t->clock, f->lr->log_writers);
		if (f->lr->log_writers == 0)
			waitq_wake_all(tl->sim, &f->lr->writer_wait, t->clock);
		/* a directory keeps NEEDS_FULL_SYNC (btrfs_log_inode clears
		 * it for regular files only): each of its fsyncs copies */
		if (f->rec.full && !f->error && !f->isdir)
			f->inode->flags &= ~(uint32_t)(INODE_NEEDS_FULL_SYNC | INODE_COPY_EVERYTHING);
		if (f->root->fs) {
			inode_log *l = fs_inode_log(f->root->fs, f->inode);
			if (l) {
				l->last_log_commit = f->log_transid;
				l->logged_trans = f->root->fs->transid;
			}
			inode_log *lp = f->parent_done ? fs_inode_log(f->root->fs, f->parent) : NULL;
			if (lp)
				lp->logged_trans = f->root->fs->transid;
		}
		if (f->scratch) {
			ebmem_free(tl->mem, f->scratch);
			task_cpu(tl->sim, t, EBMEM_NS_FREE);
			f->scratch = NULL;
		}
		f->state = TLS_SYNC;
		/* fall through */
	case TLS_SYNC:
		r = tl_sync(tl, t, f);
		break;
	case TLS_WAIT_WRITERS: {
		uint64_t w = t->clock - f->parked_at;
		f->rec.writer_wait_ns += w;
		if (w)
			lhist_add(&tl->writer_wait, w);
		tl_root *lr = f->lr;
		if (lr->log_writers > 0) {
			f->parked_at = t->clock;
			task_park(t, &lr->writer_wait);
			return TASK_BLOCKED;
		}
		/* we hold the commit: take it over again in tl_sync */
		lr->committing = 0;
		f->state = TLS_SYNC;
		r = tl_sync(tl, t, f);
		break;
	}
	case TLS_WAIT_COMMIT: {
		uint64_t w = t->clock - f->parked_at;
		f->rec.commit_wait_ns += w;
		if (w)
			lhist_add(&tl->commit_wait, w);
		f->state = TLS_SYNC;
		r = tl_sync(tl, t, f);
		break;
	}
	case TLS_DONE:
		return TASK_DONE;
	default:
		return LAB_EENGINE;
	}
	if (r == TASK_DONE) {
		if (f->has_th) {
			int e = trans_end(&f->th, 0);
			f->has_th = 0;
			if (e < 0 && !f->error)
				f->error = e;
		}
		tl_record(tl, t, f);
		f->state = TLS_DONE;
		if (f->error)
			return f->error;
	}
	return r;
}

/* ------------------------------------------------------- observability */

void treelog_details_json(const treelog *tl, strbuf *out, int max_records)
{
	js_obj(out);
	js_kbool(out, "prealloc_scratch",
		 tl->fs && fs_patch_on(tl->fs, P_001_PREALLOC_SCRATCH_EB));
	js_kint(out, "fsyncs", (int64_t)tl->fsyncs);
	js_kint(out, "full", (int64_t)tl->full);
	js_kint(out, "fast", (int64_t)tl->fast);
	js_kint(out, "skipped", (int64_t)tl->skipped);
	js_kint(out, "leaves_copied", (int64_t)tl->leaves_copied);
	js_kint(out, "items_logged", (int64_t)tl->items_logged);
	js_kint(out, "clones", (int64_t)tl->clones);
	js_kint(out, "scratch_used", (int64_t)tl->scratch_used);
	js_kint(out, "scratch_fallbacks", (int64_t)tl->scratch_fallbacks);
	js_kint(out, "log_commits", (int64_t)tl->log_commits);
	js_kint(out, "blocks_written", (int64_t)tl->blocks_written);
	js_key(out, "phases");
	js_obj(out);
	for (int i = 0; i < tl->nphases; i++) {
		js_key(out, tl->phase_names[i]);
		lhist_json(&tl->phase_lat[i], out);
	}
	js_obj_end(out);
	js_key(out, "leaf_hold");
	lhist_json(&tl->leaf_hold, out);
	js_key(out, "leaf_wait");
	lhist_json(&tl->leaf_wait, out);
	js_key(out, "victim_wait");
	lhist_json(&tl->victim_wait, out);
	js_key(out, "alloc_locked");
	lhist_json(&tl->alloc_locked, out);
	js_key(out, "writer_wait");
	lhist_json(&tl->writer_wait, out);
	js_key(out, "commit_wait");
	lhist_json(&tl->commit_wait, out);
	js_key(out, "roots");
	js_arr(out);
	for (int i = 0; i < tl->nroots; i++) {
		const tl_root *lr = &tl->roots[i];
		js_obj(out);
		js_kint(out, "root", (int64_t)lr->root_id);
		js_kint(out, "log_transid", (int64_t)lr->log_transid);
		js_kint(out, "log_writers", lr->log_writers);
		js_kint(out, "log_commits", (int64_t)lr->log_commits);
		js_kint(out, "log_items", (int64_t)lr->log_items);
		js_kint(out, "blocks_written", (int64_t)lr->blocks_written);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "records");
	js_arr(out);
	uint64_t have = tl->nrecs < tl->cfg.max_records ? tl->nrecs : tl->cfg.max_records;
	uint64_t n = max_records < 0 ? 0 : (uint64_t)max_records;
	if (n > have)
		n = have;
	for (uint64_t k = tl->nrecs - n; k < tl->nrecs; k++) {
		const tl_rec *r = &tl->recs[k % tl->cfg.max_records];
		js_obj(out);
		js_kint(out, "ino", (int64_t)r->ino);
		js_kstr(out, "phase", tl->phase_names[r->phase]);
		js_kint(out, "start_ns", (int64_t)r->start);
		js_kint(out, "lat_ns", (int64_t)(r->end - r->start));
		js_kbool(out, "full", r->full);
		js_kbool(out, "committed", r->committed);
		js_kbool(out, "skipped", r->skipped);
		js_kbool(out, "scratch", r->scratch);
		js_kint(out, "leaves", r->leaves);
		js_kint(out, "hold_max_ns", (int64_t)r->hold_max_ns);
		js_kint(out, "alloc_locked_ns", (int64_t)r->alloc_locked_ns);
		js_kint(out, "lock_wait_ns", (int64_t)r->lock_wait_ns);
		js_kint(out, "writer_wait_ns", (int64_t)r->writer_wait_ns);
		js_kint(out, "commit_wait_ns", (int64_t)r->commit_wait_ns);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}
