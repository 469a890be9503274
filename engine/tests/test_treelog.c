/* test_treelog.c - log transactions and fsync: log_writers accounting,
 * sync_log waiting for writers, full vs fast fsync, and the patch-001
 * switch (leaf lock hold time and other tasks' waits under pressure). */
#include <stdlib.h>

#include "costs.h"
#include "ebmem.h"
#include "items.h"
#include "lab.h"
#include "t.h"
#include "treelog.h"
#include "vfs.h"

/* ------------------------------------------------ a hand-built subvolume */

#define NLEAF_MAX 64
typedef struct world {
	sim *s;
	ebmem *mem;
	treelog *tl;
	fs_info fs;
	struct btrfs_root root;
	bt_node *leaves[NLEAF_MAX];
	int nleaves;
	bt_node *top;
	struct inode inodes[256];
	int ninodes;
} world;

static bt_node *node_new(int level, int cap, uint64_t bytenr)
{
	bt_node *n = calloc(1, sizeof(*n));
	n->level = level;
	n->cap = cap;
	n->bytenr = bytenr;
	if (level == 0)
		n->items = calloc((size_t)cap, sizeof(bt_item));
	else
		n->ptrs = calloc((size_t)cap, sizeof(bt_ptr));
	return n;
}

/* Inodes 257.. each with an inode item, an inode ref and `ext[i]` file
 * extent items, packed into leaves of at most per_leaf items, under one
 * root node. */
static void world_init(world *w, uint64_t seed, double p_slow, int prealloc,
		       int ninodes, const int *ext, int per_leaf)
{
	memset(w, 0, sizeof(*w));
	w->s = sim_create(seed, 0);
	ebmem_cfg mc;
	ebmem_cfg_default(&mc);
	mc.ram_bytes = 1ull << 30;
	mc.slow_p_max = p_slow;
	CHECK_EQ(ebmem_create(w->s, &mc, &w->mem), 0);
	ebmem_set_usage(w->mem, 1ull << 29, 1ull << 29); /* RAM full */
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	CHECK_EQ(treelog_create(w->s, NULL, w->mem, &tc, &w->tl), 0);
	patch_set(&w->fs.opts.patches, P_001_PREALLOC_SCRATCH_EB, prealloc);
	w->fs.generation = 1;
	w->fs.transid = 2;
	w->fs.sim = w->s; /* as fs_mount sets it: the log's reads charge its tasks */
	w->root.id = 5;
	w->root.fs = &w->fs;
	w->root.tree.id = 5;
	w->root.tree.fs = &w->fs;
	w->top = node_new(1, NLEAF_MAX, 1 << 20);
	bt_node *leaf = NULL;
	for (int i = 0; i < ninodes; i++) {
		uint64_t ino = 257 + (uint64_t)i;
		struct inode *in = &w->inodes[w->ninodes++];
		in->ino = ino;
		in->flags = INODE_NEEDS_FULL_SYNC;
		in->transid = 2;
		int nit = 2 + ext[i];
		for (int k = 0; k < nit; k++) {
			if (!leaf || leaf->nritems == per_leaf) {
				leaf = node_new(0, per_leaf, (2u + (unsigned)w->nleaves) << 14);
				w->leaves[w->nleaves++] = leaf;
			}
			bt_item *it = &leaf->items[leaf->nritems++];
			if (k == 0) {
				it->key = bt_mkkey(ino, BTRFS_INODE_ITEM_KEY, 0);
				it->size = SZ_INODE_ITEM;
			} else if (k == 1) {
				it->key = bt_mkkey(ino, BTRFS_INODE_REF_KEY, 256);
				it->size = SZ_INODE_REF_BASE + 8;
			} else {
				it->key = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, (uint64_t)(k - 2) * 4096);
				it->size = SZ_FE_REG;
				/* contiguous 4 KiB extents: no hole to log */
				it->aux = FE_REG;
				it->v[0] = (1ull << 30) + ino * (1ull << 24) + (uint64_t)(k - 2) * 4096;
				it->v[1] = 4096;
				it->v[2] = fe_pack(4096, 0);
				in->size = (uint64_t)(k - 1) * 4096;
			}
			leaf->used += BT_ITEM_HEADER + it->size;
		}
	}
	for (int l = 0; l < w->nleaves; l++) {
		w->top->ptrs[l].key = w->leaves[l]->items[0].key;
		w->top->ptrs[l].child = w->leaves[l];
	}
	w->top->nritems = w->nleaves;
	w->root.tree.root = w->top;
}

static void world_free(world *w)
{
	for (int l = 0; l < w->nleaves; l++) {
		free(w->leaves[l]->items);
		free(w->leaves[l]);
	}
	free(w->top->ptrs);
	free(w->top);
	CHECK_EQ(w->mem->live_ebs, 0);
	treelog_destroy(w->tl);
	lab_pool_destroy(&w->fs.inode_log_pool); /* the inodes' log parts */
	bt_release_deferred(&w->fs); /* log blocks COWed away */
	ebmem_destroy(w->mem);
	sim_destroy(w->s);
}

/* An fsync loop: fsync inodes first..first+n-1 (one after another), each
 * made full-sync (a new file) or fast (new_extents > 0). */
typedef struct fsyncer {
	world *w;
	int first, n, done;
	int full;
	simtime_t gap;           /* think time between fsyncs */
	tl_fsync f;
	int active;
	tl_rec recs[64];
	int err;
} fsyncer;

static int fsyncer_step(sim *s, task *t)
{
	fsyncer *c = t->ctx;
	if (!c->active) {
		if (c->done == c->n)
			return TASK_DONE;
		struct inode *in = &c->w->inodes[c->first + c->done];
		if (c->full)
			in->flags |= INODE_NEEDS_FULL_SYNC;
		else
			in->flags &= ~(uint32_t)INODE_NEEDS_FULL_SYNC;
		treelog_fsync_init(&c->f, &c->w->root, in, 1);
		c->active = 1;
	}
	int r = treelog_fsync_step(c->w->tl, t, &c->f);
	if (r < 0) {
		c->err = r;
		return TASK_DONE;
	}
	if (r == TASK_DONE) {
		if (c->done < 64)
			c->recs[c->done] = c->f.rec;
		c->done++;
		c->active = 0;
		task_wait_until(t, t->clock + c->gap);
		return TASK_RUN;
	}
	return r;
}

/* A writer that needs one leaf write-locked every `period` (the next
 * create in the same directory, finish_ordered_io of a neighbour). */
typedef struct locker {
	world *w;
	bt_node *leaf;
	int n, done;
	simtime_t period, hold;
	uint64_t wait_sum, wait_max;
} locker;

static int locker_step(sim *s, task *t)
{
	locker *k = t->ctx;
	if (k->done == k->n)
		return TASK_DONE;
	simtime_t before = t->clock;
	simlock_write(&k->leaf->lock, t);
	uint64_t w = t->clock - before;
	k->wait_sum += w;
	if (w > k->wait_max)
		k->wait_max = w;
	if (w)
		treelog_note_leaf_wait(k->w->tl, w);
	task_cpu(s, t, k->hold);
	simlock_write_release(&k->leaf->lock, t->clock);
	k->done++;
	task_wait_until(t, before + k->period > t->clock ? before + k->period : t->clock);
	return TASK_RUN;
}

static void run(world *w)
{
	int fin = sim_run(w->s, 50000000, SIMTIME_MAX);
	CHECK(fin);
}

/* ---------------------------------------------------------------- tests */

static void test_full_vs_fast(void)
{
	world w;
	int ext[4] = {3, 1, 700, 2};
	world_init(&w, 1, 0.0, 0, 4, ext, 100);
	/* inode 259 (700 extents) spans several leaves */
	CHECK(w.nleaves >= 8);
	fsyncer a = {.w = &w, .first = 0, .n = 1, .full = 1};
	task_spawn(w.s, "fsync", fsyncer_step, &a, 0);
	run(&w);
	CHECK_EQ(a.err, 0);
	CHECK_EQ(a.done, 1);
	CHECK_EQ(a.recs[0].full, 1);
	CHECK_EQ(a.recs[0].leaves, 1);
	CHECK_EQ(w.tl->items_logged, 5);      /* inode item, ref, 3 extents */
	CHECK_EQ(w.tl->clones, 1);
	CHECK_EQ(w.inodes[0].flags & INODE_NEEDS_FULL_SYNC, 0);
	CHECK_EQ(w.tl->log_commits, 1);
	/* a full sync of the big inode copies every leaf it spans */
	fsyncer b = {.w = &w, .first = 2, .n = 1, .full = 1};
	task_spawn(w.s, "fsync", fsyncer_step, &b, sim_now(w.s));
	run(&w);
	int expect_leaves = 0;
	for (int l = 0; l < w.nleaves; l++) {
		int has = 0;
		for (int i = 0; i < w.leaves[l]->nritems; i++)
			has |= w.leaves[l]->items[i].key.objectid == 259;
		expect_leaves += has;
	}
	CHECK_EQ(b.recs[0].leaves, expect_leaves);
	CHECK_EQ(w.tl->items_logged, 5 + 702);
	CHECK_EQ(w.tl->clones, 1 + (uint64_t)expect_leaves);
	/* fast fsync: the inode item and new extents from memory, no leaf */
	uint64_t copied = w.tl->leaves_copied;
	fsyncer c = {.w = &w, .first = 2, .n = 1, .full = 0};
	task_spawn(w.s, "fsync", fsyncer_step, &c, sim_now(w.s));
	run(&w);
	CHECK_EQ(c.recs[0].full, 0);
	CHECK_EQ(c.recs[0].leaves, 0);
	CHECK_EQ(w.tl->leaves_copied, copied);
	/* the inode item from memory; the hand-built leaves are older than
	 * the running transaction, so no extent changed since the commit */
	CHECK_EQ(w.tl->items_logged, 5 + 702 + 1);
	CHECK_EQ(w.tl->fast, 1);
	CHECK_EQ(w.tl->full, 2);
	/* nothing changed since the last commit: nothing to log */
	w.inodes[3].flags = 0;
	w.inodes[3].transid = 1;
	fsyncer d = {.w = &w, .first = 3, .n = 1, .full = 0};
	task_spawn(w.s, "fsync", fsyncer_step, &d, sim_now(w.s));
	run(&w);
	CHECK_EQ(d.recs[0].skipped, 1);
	CHECK_EQ(w.tl->log_commits, 3);
	tl_root *lr = treelog_root(w.tl, 5);
	CHECK_EQ(lr->log_writers, 0);
	CHECK_EQ(lr->log_transid_committed, 3);
	/* in the log tree: inode 257's 5 items, 259's inode item and ref
	 * (its 700 logged extents dropped by the fast fsync: none changed) */
	CHECK_EQ(lr->log_items, 5 + 2);
	CHECK(lr->log.root != NULL);
	uint64_t lv, nd, it;
	bt_count_blocks(&lr->log, &lv, &nd, &it);
	CHECK_EQ(it, 7);
	CHECK_EQ(lr->log_blocks, lv + nd);
	treelog_on_commit(w.tl, 2);
	CHECK_EQ(lr->log_items, 0);
	CHECK(lr->log.root == NULL);
	CHECK_EQ(lr->log_blocks, 0);
	world_free(&w);
}

/* Concurrent fsyncers: writers accounted, batching of log commits. */
static void test_writers_accounting(void)
{
	world w;
	int ext[40];
	for (int i = 0; i < 40; i++)
		ext[i] = 1;
	world_init(&w, 2, 0.05, 0, 40, ext, 60);
	fsyncer f[4];
	for (int i = 0; i < 4; i++) {
		f[i] = (fsyncer){.w = &w, .first = i * 10, .n = 10, .full = 1,
				 .gap = 20 * NS_PER_US};
		task_spawn(w.s, "fsync", fsyncer_step, &f[i], (simtime_t)i * 3 * NS_PER_US);
	}
	run(&w);
	tl_root *lr = treelog_root(w.tl, 5);
	int committed = 0, waited = 0;
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(f[i].err, 0);
		CHECK_EQ(f[i].done, 10);
		for (int k = 0; k < 10; k++) {
			committed += f[i].recs[k].committed;
			waited += f[i].recs[k].commit_wait_ns > 0 || f[i].recs[k].writer_wait_ns > 0;
		}
	}
	CHECK_EQ(lr->log_writers, 0);
	CHECK_EQ(w.tl->fsyncs, 40);
	CHECK_EQ((int)w.tl->log_commits, committed);
	CHECK_EQ(lr->log_commits, w.tl->log_commits);
	/* several fsyncs shared a log commit */
	CHECK(w.tl->log_commits < 40);
	CHECK(waited > 0);
	CHECK_EQ(lr->log_transid, lr->log_transid_committed + 1);
	CHECK_EQ(w.tl->nrecs, 40);
	CHECK_EQ(sim_counter(w.s, "fsyncs"), 40);
	CHECK_EQ(sim_counter(w.s, "log_commits"), (int64_t)w.tl->log_commits);
	CHECK_EQ(w.tl->phase_lat[0].n, 40);
	/* the writers series went up to > 1 */
	strbuf sb;
	sb_init(&sb);
	treelog_details_json(w.tl, &sb, 5);
	CHECK(strstr(sb.buf, "\"records\":[{") != NULL);
	CHECK(strstr(sb.buf, "\"writer_wait\"") != NULL);
	sb_free(&sb);
	/* queue lengths over time */
	sb_init(&sb);
	sim_series_json(w.s, &sb);
	CHECK(strstr(sb.buf, "\"log_writers\"") != NULL);
	CHECK(strstr(sb.buf, "\"log_sync_waiters\"") != NULL);
	CHECK(strstr(sb.buf, "\"fsync_ms_default\"") != NULL);
	sb_free(&sb);
	world_free(&w);
}

/* A fast fsyncer reaching sync_log while a full-sync task is inside the log
 * transaction, cloning under memory pressure, waits for it (before); after
 * the patch the slow allocation happens before joining, so it does not. */
static void test_sync_waits_for_writers(int prealloc, uint64_t *b_writer_wait,
					uint64_t *a_alloc_locked)
{
	world w;
	int ext[2] = {1, 1};
	world_init(&w, 3, 1.0, prealloc, 2, ext, 10); /* every page slow */
	fsyncer a = {.w = &w, .first = 0, .n = 1, .full = 1};
	fsyncer b = {.w = &w, .first = 1, .n = 1, .full = 0};
	task_spawn(w.s, "full", fsyncer_step, &a, 0);
	task_spawn(w.s, "fast", fsyncer_step, &b, 10 * NS_PER_US);
	run(&w);
	CHECK_EQ(a.done, 1);
	CHECK_EQ(b.done, 1);
	*b_writer_wait = b.recs[0].writer_wait_ns;
	*a_alloc_locked = a.recs[0].alloc_locked_ns;
	/* the slow path was taken either way: 4 pages in direct reclaim */
	CHECK(w.mem->slow_pages == 4);
	if (!prealloc) {
		CHECK_EQ(b.recs[0].committed, 1);
		/* B waited for A's end_log_trans, i.e. through A's clone */
		CHECK(b.recs[0].writer_wait_ns >= a.recs[0].alloc_locked_ns - 10 * NS_PER_US);
		CHECK(a.recs[0].hold_max_ns >= a.recs[0].alloc_locked_ns);
	} else {
		CHECK_EQ(a.recs[0].scratch, 1);
		CHECK_EQ(a.recs[0].alloc_locked_ns, 0);
		CHECK(a.recs[0].hold_max_ns < 5 * NS_PER_US);
		CHECK_EQ(w.tl->clones, 0);
		CHECK_EQ(w.tl->scratch_used, 1);
	}
	world_free(&w);
}

/* Hold time per leaf: before = search + alloc + copy, after = search +
 * copy; other tasks needing the leaf write-locked wait less after. */
static void test_patch001_lock_hold(uint64_t seed, int prealloc,
				    uint64_t *locker_wait, uint64_t *locker_max,
				    uint64_t *hold_max, uint64_t *fsync_p100)
{
	world w;
	int ext[64];
	for (int i = 0; i < 64; i++)
		ext[i] = 1;
	/* all 64 inodes in one leaf: the hot leaf of a directory's creates */
	world_init(&w, seed, 0.05, prealloc, 64, ext, 200);
	CHECK_EQ(w.nleaves, 1);
	fsyncer f[4];
	for (int i = 0; i < 4; i++) {
		f[i] = (fsyncer){.w = &w, .first = i * 16, .n = 16, .full = 1,
				 .gap = 50 * NS_PER_US};
		task_spawn(w.s, "fsync", fsyncer_step, &f[i], (simtime_t)i * 7 * NS_PER_US);
	}
	locker k = {.w = &w, .leaf = w.leaves[0], .n = 4000,
		    .period = 50 * NS_PER_US, .hold = 2 * NS_PER_US};
	task_spawn(w.s, "create", locker_step, &k, 1 * NS_PER_US);
	run(&w);
	uint64_t max_hold = 0;
	for (int i = 0; i < 4; i++) {
		CHECK_EQ(f[i].done, 16);
		for (int j = 0; j < 16; j++) {
			const tl_rec *r = &f[i].recs[j];
			CHECK_EQ(r->leaves, 1);
			if (r->hold_max_ns > max_hold)
				max_hold = r->hold_max_ns;
			if (prealloc) {
				CHECK_EQ(r->alloc_locked_ns, 0);
				/* leaf search + slot scan + 16 KiB copy, nothing more */
				CHECK(r->hold_max_ns <= 2 * NS_PER_US);
				CHECK(r->hold_max_ns >= BT_NS_NODE_VISIT + EBMEM_NS_COPY_16K);
			} else {
				CHECK(r->alloc_locked_ns >= EBMEM_NS_SLAB + 4 * EBMEM_NS_PAGE);
				CHECK(r->hold_max_ns >= BT_NS_NODE_VISIT + r->alloc_locked_ns +
				      EBMEM_NS_COPY_16K);
			}
		}
	}
	CHECK_EQ(treelog_root(w.tl, 5)->log_writers, 0);
	*locker_wait = k.wait_sum;
	*locker_max = k.wait_max;
	*hold_max = max_hold;
	*fsync_p100 = treelog_phase_quantile(w.tl, "default", 1.0);
	world_free(&w);
}


/* ------------------------------------------- on the real metadata core */

/* bonnie++'s file phase, per task: create a file in the shared directory,
 * give it one written extent, fsync it (a full sync: a new inode). */
typedef struct creator {
	fs_info *fs;
	struct btrfs_root *root;
	treelog *tl;
	int id, n, done, state;
	struct inode *in;
	tl_fsync f;
	uint64_t create_max, create_sum, fsync_max;
	simtime_t fsync_start;
	int err;
} creator;

static int creator_step(sim *s, task *t)
{
	creator *c = t->ctx;
	if (c->state == 0) {
		if (c->done == c->n)
			return TASK_DONE;
		char name[32];
		snprintf(name, sizeof(name), "f%d_%d", c->id, c->done);
		simtime_t t0 = t->clock;
		int r = vfs_create(c->fs, t, c->root, 256, name, 0644, &c->in);
		uint64_t lat = t->clock - t0;
		c->create_sum += lat;
		if (lat > c->create_max)
			c->create_max = lat;
		uint64_t disk;
		if (!r)
			r = alloc_extent(&c->fs->alloc, ALLOC_DATA, 8192, &disk);
		if (!r)
			r = fs_file_extent_insert(c->fs, t, c->in, 0, 8192, disk, 8192, FE_REG);
		c->in->size = 8192;
		if (!r)
			r = fs_inode_update(c->fs, t, c->in);
		if (r) {
			c->err = r;
			return TASK_DONE;
		}
		CHECK(c->in->flags & INODE_NEEDS_FULL_SYNC);
		treelog_fsync_init(&c->f, c->root, c->in, 1);
		c->fsync_start = t->clock;
		c->state = 1;
		return TASK_RUN;
	}
	int r = treelog_fsync_step(c->tl, t, &c->f);
	if (r < 0) {
		c->err = r;
		return TASK_DONE;
	}
	if (r == TASK_DONE) {
		uint64_t lat = t->clock - c->fsync_start;
		if (lat > c->fsync_max)
			c->fsync_max = lat;
		c->done++;
		c->state = 0;
		return TASK_RUN;
	}
	return r;
}

typedef struct realres {
	uint64_t create_max, create_sum, fsync_max, leaves, clones, victim_max;
} realres;

static void test_real_fs(int prealloc, int with_trans, realres *res)
{
	sim *s = sim_create(21, 0);
	bdev *dev;
	CHECK_EQ(bdev_create(s, "ideal", &dev), 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, dev, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	ebmem_cfg mc;
	ebmem_cfg_default(&mc);
	mc.ram_bytes = 1ull << 30;
	mc.slow_p_max = 0.05;
	ebmem *mem;
	CHECK_EQ(ebmem_create(s, &mc, &mem), 0);
	ebmem_set_usage(mem, 1ull << 29, 1ull << 29);
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	patch_set(&fs->opts.patches, P_001_PREALLOC_SCRATCH_EB, prealloc);
	treelog *tl;
	CHECK_EQ(treelog_create(s, dev, mem, &tc, &tl), 0);
	CHECK_EQ(treelog_attach(tl, fs), 0);
	trans_mgr tm;
	if (with_trans) {
		CHECK_EQ(trans_init(&tm, fs), 0);
		treelog_set_trans(tl, &tm);
	}
	treelog_set_phase(tl, "create");
	creator c[3];
	for (int i = 0; i < 3; i++) {
		c[i] = (creator){.fs = fs, .root = root, .tl = tl, .id = i, .n = 60};
		task_spawn(s, "bonnie", creator_step, &c[i], (simtime_t)i * 5 * NS_PER_US);
	}
	CHECK(sim_run(s, 50000000, SIMTIME_MAX));
	memset(res, 0, sizeof(*res));
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(c[i].err, 0);
		CHECK_EQ(c[i].done, 60);
		if (c[i].create_max > res->create_max)
			res->create_max = c[i].create_max;
		if (c[i].fsync_max > res->fsync_max)
			res->fsync_max = c[i].fsync_max;
		res->create_sum += c[i].create_sum;
	}
	/* a digest of everything the log recorded: native and WASM builds
	 * must print the same one */
	strbuf sb;
	sb_init(&sb);
	treelog_details_json(tl, &sb, 1000);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sb.len; i++)
		h = (h ^ (unsigned char)sb.buf[i]) * 1099511628211ull;
	fprintf(stderr, "real fs (prealloc %d, trans %d): details digest %016llx (%zu bytes)\n",
		prealloc, with_trans, (unsigned long long)h, sb.len);
	sb_free(&sb);
	res->leaves = tl->leaves_copied;
	res->clones = tl->clones;
	CHECK_EQ(tl->full, 180);
	CHECK(tl->leaves_copied >= 180);
	CHECK(tl->blocks_written > 0);
	CHECK_EQ(treelog_root(tl, 5)->log_writers, 0);
	CHECK(treelog_root(tl, 5)->log_items >= 180 * 3);
	if (with_trans) {
		CHECK_EQ(tm.handles_started, tm.handles_ended);
		CHECK(tm.handles_started >= 180);
	}
	/* the items copied are the inodes' own: inode item, ref, extent */
	CHECK_EQ(tl->items_logged, 180 * 3);
	/* a transaction commit frees the log */
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(treelog_root(tl, 5)->log_items, 0);
	CHECK_EQ(mem->live_ebs, 0);
	if (with_trans)
		trans_destroy(&tm);
	treelog_destroy(tl);
	ebmem_destroy(mem);
	fs_unmount(fs);
	bdev_destroy(dev);
	sim_destroy(s);
}

/* One fsync of `in` that logs `parent` too. */
typedef struct parent_fsyncer {
	world *w;
	struct inode *in, *parent;
	tl_fsync f;
	int started, done, err;
} parent_fsyncer;

static int parent_step(sim *s, task *t)
{
	parent_fsyncer *c = t->ctx;
	if (!c->started) {
		c->err = treelog_fsync_init_parent(&c->f, &c->w->root, c->in, 0, c->parent);
		c->started = 1;
		if (c->err)
			return TASK_DONE;
	}
	int r = treelog_fsync_step(c->w->tl, t, &c->f);
	if (r < 0)
		c->err = r;
	if (r == TASK_DONE)
		c->done = 1;
	return r < 0 ? TASK_DONE : r;
}

/* A directory's fsync logs its DIR_INDEX items from the leaves changed in
 * this transaction only, one leaf copy (a clone before the patch) each. */
static void test_dir_fsync(int prealloc)
{
	world w;
	world_init(&w, 5, 0.0, prealloc, 0, NULL, 10);
	struct inode *dir = &w.inodes[w.ninodes++];
	dir->ino = 256;
	dir->mode = S_IFDIR_ | 0755;
	dir->transid = 2;
	dir->flags = prealloc ? INODE_COPY_EVERYTHING : 0;
	/* L0 (old): inode item + index 2..99; L1, L2 (this transaction):
	 * index 100..199, 200..249 and then another inode's item */
	uint64_t idx = 2;
	for (int l = 0; l < 3; l++) {
		bt_node *leaf = node_new(0, 128, (10u + (unsigned)l) << 14);
		leaf->generation = l == 0 ? 1 : 2;
		if (l == 0) {
			bt_item *it = &leaf->items[leaf->nritems++];
			it->key = bt_mkkey(256, BTRFS_INODE_ITEM_KEY, 0);
			it->size = SZ_INODE_ITEM;
		}
		uint64_t end = l == 0 ? 100 : l == 1 ? 200 : 250;
		for (; idx < end; idx++) {
			bt_item *it = &leaf->items[leaf->nritems++];
			it->key = bt_mkkey(256, BTRFS_DIR_INDEX_KEY, idx);
			it->size = SZ_DIR_ITEM_BASE + 10;
		}
		if (l == 2) {
			bt_item *it = &leaf->items[leaf->nritems++];
			it->key = bt_mkkey(300, BTRFS_INODE_ITEM_KEY, 0);
			it->size = SZ_INODE_ITEM;
		}
		for (int i = 0; i < leaf->nritems; i++)
			leaf->used += BT_ITEM_HEADER + leaf->items[i].size;
		w.leaves[w.nleaves++] = leaf;
		w.top->ptrs[l].key = leaf->items[0].key;
		w.top->ptrs[l].child = leaf;
	}
	w.top->nritems = 3;
	fsyncer f = {.w = &w, .first = 0, .n = 1, .full = prealloc};
	task_spawn(w.s, "fsync-dir", fsyncer_step, &f, 0);
	run(&w);
	CHECK_EQ(f.err, 0);
	CHECK_EQ(f.done, 1);
	if (prealloc) {
		/* full: the inode item copied from L0, then L1 and L2 entries */
		CHECK_EQ(f.recs[0].leaves, 3);
		/* + one DIR_LOG_INDEX range over the two changed leaves in
		 * a row (log_dir_items walks on while leaves are new) */
		CHECK_EQ(w.tl->items_logged, 1 + 100 + 50 + 1);
		CHECK_EQ(w.tl->clones, 0);
		CHECK_EQ(w.tl->scratch_used, 3);
	} else {
		/* fast: the inode item from memory (1 + 2 * new_extents items),
		 * entries from the two changed leaves, each cloned */
		CHECK_EQ(f.recs[0].leaves, 2);
		CHECK_EQ(w.tl->items_logged, 1 + 100 + 50 + 1);
		CHECK_EQ(w.tl->clones, 2);
	}
	/* a file fsync that also logs its parent: the parent's inode item
	 * plus its changed entries (L1, L2) */
	uint64_t items0 = w.tl->items_logged, leaves0 = w.tl->leaves_copied;
	struct inode *file = &w.inodes[w.ninodes++];
	file->ino = 300;
	file->mode = S_IFREG_ | 0644;
	file->transid = 2;
	tl_fsync pf;
	CHECK_EQ(treelog_fsync_init_parent(&pf, &w.root, file, 0, file), LAB_EINVAL);
	CHECK_EQ(treelog_fsync_init_parent(&pf, &w.root, dir, 0, file), LAB_EINVAL);
	parent_fsyncer pk = {.w = &w, .in = file, .parent = dir};
	task_spawn(w.s, "fsync-file", parent_step, &pk, sim_now(w.s));
	run(&w);
	CHECK_EQ(pk.err, 0);
	CHECK_EQ(pk.done, 1);
	CHECK_EQ(w.tl->leaves_copied - leaves0, 2);
	/* the parent's entries are in the log already: only its inode item,
	 * the file's and the range again */
	CHECK_EQ(w.tl->items_logged - items0, 1 + 1 + 1);
	/* the log holds the dir's 150 changed entries, once each, and one
	 * range from past the old leaf's entries to the end */
	tl_root *lr = treelog_root(w.tl, 5);
	CHECK_EQ(lr->log_items, 1 + 1 + 150 + 1);
	bt_key rk = bt_mkkey(256, BTRFS_DIR_LOG_INDEX_KEY, 100);
	bt_path rp;
	bt_path_init(&rp, &lr->log, NULL);
	CHECK_EQ(bt_search(&lr->log, &rp, &rk, 0, 0), 0);
	CHECK_EQ(bt_path_item(&rp)->v[0], UINT64_MAX);
	bt_path_release(&rp);
	world_free(&w);
}

/* Bad input at the boundary: error codes, no crash. */
static void test_errors(void)
{
	sim *s = sim_create(1, 0);
	ebmem *mem;
	CHECK_EQ(ebmem_create(s, NULL, &mem), 0);
	treelog *tl = (treelog *)1;
	CHECK_EQ(treelog_create(s, NULL, NULL, NULL, &tl), LAB_EINVAL);
	CHECK(tl == NULL);
	treelog_cfg c;
	treelog_cfg_default(&c);
	c.max_records = 0;
	CHECK_EQ(treelog_create(s, NULL, mem, &c, &tl), LAB_ERANGE);
	treelog_cfg_default(&c);
	c.log_area_bytes = 4096;
	CHECK_EQ(treelog_create(s, NULL, mem, &c, &tl), LAB_ERANGE);
	CHECK_EQ(treelog_create(s, NULL, mem, NULL, &tl), 0);
	tl_fsync f;
	CHECK_EQ(treelog_fsync_init(&f, NULL, NULL, 0), LAB_EINVAL);
	CHECK_EQ(treelog_fsync_step(tl, NULL, &f), LAB_EINVAL);
	CHECK_EQ(treelog_fsync_step(NULL, NULL, NULL), LAB_EINVAL);
	/* phases are bounded */
	int last = 0;
	for (int i = 0; i < TL_MAX_PHASES + 2; i++) {
		char nm[16];
		snprintf(nm, sizeof(nm), "p%d", i);
		last = treelog_set_phase(tl, nm);
	}
	CHECK_EQ(last, LAB_ENOMEM);
	CHECK_EQ(treelog_set_phase(tl, "default"), 0);
	CHECK_EQ(treelog_phase_quantile(tl, "nope", 0.5), 0);
	treelog_destroy(tl);
	ebmem_destroy(mem);
	sim_destroy(s);
}

/* The allocator asks the data path for dirty and cached bytes. */
static uint64_t probe_dirty;
static void probe(void *ctx, uint64_t *dirty, uint64_t *cached)
{
	(void)ctx;
	*dirty = probe_dirty;
	*cached = 0;
}

static void test_probe(void)
{
	sim *s = sim_create(1, 0);
	ebmem_cfg mc;
	ebmem_cfg_default(&mc);
	mc.ram_bytes = 1ull << 30;
	mc.slow_p_max = 1.0;
	ebmem *m;
	CHECK_EQ(ebmem_create(s, &mc, &m), 0);
	m->probe = probe;
	ebmem_eb *eb;
	probe_dirty = 0;
	CHECK_EQ(ebmem_alloc(m, NULL, &eb, NULL), 0);
	ebmem_free(m, eb);
	CHECK_EQ(m->slow_pages, 0);
	probe_dirty = 1ull << 30;
	CHECK_EQ(ebmem_alloc(m, NULL, &eb, NULL), 0);
	ebmem_free(m, eb);
	CHECK_EQ(m->slow_pages, 4);
	CHECK(ebmem_pressure(m) == 1.0);
	ebmem_destroy(m);
	sim_destroy(s);
}

int main(void)
{
	test_errors();
	test_probe();
	test_full_vs_fast();
	test_writers_accounting();
	test_dir_fsync(0);
	test_dir_fsync(1);

	uint64_t bw_before, bw_after, al_before, al_after;
	test_sync_waits_for_writers(0, &bw_before, &al_before);
	test_sync_waits_for_writers(1, &bw_after, &al_after);
	CHECK(al_before > NS_PER_MS);        /* 4 slow pages: milliseconds */
	CHECK(bw_before > NS_PER_MS);
	CHECK_EQ(bw_after, 0);
	CHECK_EQ(al_after, 0);

	uint64_t w0, m0, h0, p0, w1, m1, h1, p1;
	test_patch001_lock_hold(9, 0, &w0, &m0, &h0, &p0);
	test_patch001_lock_hold(9, 1, &w1, &m1, &h1, &p1);
	fprintf(stderr, "patch001: creator wait before %.3f ms (max %.3f), after %.3f ms (max %.3f); "
		"leaf hold max %.3f ms -> %.3f ms; fsync max %.3f -> %.3f ms\n",
		w0 / 1e6, m0 / 1e6, w1 / 1e6, m1 / 1e6, h0 / 1e6, h1 / 1e6, p0 / 1e6, p1 / 1e6);
	CHECK(h0 > NS_PER_MS);               /* a clone went to direct reclaim */
	CHECK(h1 < 5 * NS_PER_US);
	CHECK(w0 > 10 * w1);                 /* the creates' waits collapse */
	CHECK(m0 > NS_PER_MS);
	CHECK(m1 < 50 * NS_PER_US);

	/* determinism */
	uint64_t w2, m2, h2, p2;
	test_patch001_lock_hold(9, 0, &w2, &m2, &h2, &p2);
	CHECK_EQ(w2, w0);
	CHECK_EQ(p2, p0);
	CHECK_EQ(h2, h0);
	realres rb, ra, rt;
	test_real_fs(0, 0, &rb);
	test_real_fs(1, 0, &ra);
	test_real_fs(1, 1, &rt);
	fprintf(stderr, "real fs: create max %.3f ms -> %.3f ms (sum %.3f -> %.3f ms), "
		"fsync max %.3f -> %.3f ms, leaves %llu, clones %llu -> %llu\n",
		rb.create_max / 1e6, ra.create_max / 1e6, rb.create_sum / 1e6,
		ra.create_sum / 1e6, rb.fsync_max / 1e6, ra.fsync_max / 1e6,
		(unsigned long long)rb.leaves, (unsigned long long)rb.clones,
		(unsigned long long)ra.clones);
	CHECK_EQ(rb.clones, rb.leaves);
	CHECK_EQ(ra.clones, 0);
	CHECK(rb.create_sum > ra.create_sum);
	T_DONE();
}
