/* test_delayed_inode.c - delayed items (delayed_inode.h): the dir index
 * items and inode updates wait on their delayed nodes; the worker inserts
 * them once btrfs_balance_delayed_items sees 128 items (16 nodes a work)
 * and makes the caller wait at 512; a directory's fsync logs its own
 * queued names (a replay finds them); a commit inserts everything; and a
 * worker that meets a leaf an fsync holds read-locked records the wait. */
#include <stdlib.h>

#include "costs.h"
#include "delayed_inode.h"
#include "ebmem.h"
#include "items.h"
#include "lab.h"
#include "t.h"
#include "trans.h"
#include "treelog.h"
#include "vfs.h"

typedef struct world {
	sim *s;
	bdev *dev;
	fs_info *fs;
	struct btrfs_root *root;
	trans_mgr tm;
	ebmem *mem;
	treelog *tl;
	delayed_root *dr;
	struct inode *f[700];
	int nf;
} world;

/* A file system with n files in / made before the delayed items were
 * attached (their items are in the tree, committed). */
static void world_init(world *w, int nfiles, int prealloc, double p_slow)
{
	memset(w, 0, sizeof(*w));
	w->s = sim_create(5, 0);
	CHECK_EQ(bdev_create(w->s, "ideal", &w->dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.keep_commit_roots = 1;
	patch_set(&o.patches, P_001_PREALLOC_SCRATCH_EB, prealloc);
	CHECK_EQ(fs_mount(w->s, w->dev, &o, &w->fs), 0);
	w->root = fs_root_lookup(w->fs, BTRFS_FS_TREE_OBJECTID);
	CHECK_EQ(trans_init(&w->tm, w->fs), 0);
	ebmem_cfg mc;
	ebmem_cfg_default(&mc);
	mc.ram_bytes = 1ull << 30;
	mc.slow_p_max = p_slow;
	CHECK_EQ(ebmem_create(w->s, &mc, &w->mem), 0);
	ebmem_set_usage(w->mem, 1ull << 29, 1ull << 29);
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	tc.keep_synced = 1;
	CHECK_EQ(treelog_create(w->s, NULL, w->mem, &tc, &w->tl), 0);
	CHECK_EQ(treelog_attach(w->tl, w->fs), 0);
	treelog_set_trans(w->tl, &w->tm);
	for (int i = 0; i < nfiles; i++) {
		char name[24];
		snprintf(name, sizeof name, "old%04d", i);
		CHECK_EQ(vfs_create(w->fs, NULL, w->root, 256, name, 0644, &w->f[w->nf++]), 0);
	}
	CHECK_EQ(trans_commit_now(&w->tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(dl_create(w->s, w->fs, &w->tm, &w->dr), 0);
}

static void world_free(world *w)
{
	dl_destroy(w->dr);
	trans_destroy(&w->tm);
	treelog_destroy(w->tl);
	fs_unmount(w->fs);
	ebmem_destroy(w->mem);
	bdev_destroy(w->dev);
	sim_destroy(w->s);
}

/* The inode item's size as the subvolume tree holds it. */
static uint64_t tree_size(world *w, uint64_t ino)
{
	bt_key k = bt_mkkey(ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_path p;
	bt_path_init(&p, &w->root->tree, NULL);
	int r = bt_search(&w->root->tree, &p, &k, 0, 0);
	uint64_t v = r == 0 ? bt_path_item(&p)->v[0] : UINT64_MAX;
	bt_path_release(&p);
	return v;
}

static int tree_has(world *w, uint64_t objectid, uint8_t type, uint64_t off)
{
	bt_key k = bt_mkkey(objectid, type, off);
	bt_path p;
	bt_path_init(&p, &w->root->tree, NULL);
	int r = bt_search(&w->root->tree, &p, &k, 0, 0);
	bt_path_release(&p);
	return r == 0;
}

/* ---------------------------------------------- the balance thresholds */

typedef struct updater {
	world *w;
	int n, done, waiting, state, balanced, parked;
	uint64_t seq, seq_at_park, seq_at_resume;
} updater;

/* Update n inode items (each a delayed inode: one item), calling
 * btrfs_balance_delayed_items after each when `balanced`, else once at
 * the end. */
static int updater_step(sim *s, task *t)
{
	updater *u = t->ctx;
	(void)s;
	if (u->state == 0) {
		while (u->done < u->n) {
			struct inode *in = u->w->f[u->done++];
			in->size = 1000 + in->ino;
			CHECK_EQ(fs_inode_update(u->w->fs, t, in), 0);
			if (u->balanced)
				CHECK_EQ(dl_balance(u->w->dr, t, &u->waiting, &u->seq), 0);
		}
		u->state = 1;
		u->seq_at_park = u->w->dr->items_seq;
		if (u->balanced)
			return TASK_DONE;
	}
	int r = dl_balance(u->w->dr, t, &u->waiting, &u->seq);
	if (r) {
		u->parked++;
		return TASK_BLOCKED;
	}
	u->seq_at_resume = u->w->dr->items_seq;
	return TASK_DONE;
}

static void test_background_batch(void)
{
	world w;
	world_init(&w, 200, 0, 0);
	delayed_root *dr = w.dr;
	updater u = { .w = &w, .n = 127, .balanced = 1 };
	task_spawn(w.s, "update", updater_step, &u, 0);
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	/* 127 items: below BTRFS_DELAYED_BACKGROUND, nothing queued, the
	 * tree still has the old inode items */
	CHECK_EQ(dr->items, 127);
	CHECK_EQ(dr->works_queued, 0);
	CHECK_EQ(dr->inodes_written, 0);
	CHECK(tree_size(&w, w.f[0]->ino) == 0);
	/* stat sees the queued update */
	vfs_stat_info st;
	CHECK_EQ(vfs_stat(w.fs, NULL, w.root, w.f[0]->ino, &st), 0);
	CHECK_EQ(st.size, 1000 + w.f[0]->ino);
	/* the 128th: the worker is queued for a batch of 16 nodes, oldest
	 * first, and leaves the rest */
	updater u2 = { .w = &w, .n = 128, .balanced = 1 };
	u2.done = 127;
	task_spawn(w.s, "update", updater_step, &u2, sim_now(w.s));
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(dr->works_queued, 1);
	CHECK_EQ(dr->works_run, 1);
	CHECK_EQ(dr->nodes_run, BTRFS_DELAYED_BATCH);
	CHECK_EQ(dr->inodes_written, BTRFS_DELAYED_BATCH);
	CHECK_EQ(dr->items, 128 - BTRFS_DELAYED_BATCH);
	for (int i = 0; i < 20; i++)
		CHECK_EQ(tree_size(&w, w.f[i]->ino), i < BTRFS_DELAYED_BATCH ? 1000 + w.f[i]->ino : 0);
	CHECK_EQ(dr->balance_waits, 0);
	world_free(&w);
}

static void test_writeback_wait(void)
{
	world w;
	world_init(&w, 600, 0, 0);
	delayed_root *dr = w.dr;
	/* 600 items queued with no balance on the way, then one balance: at
	 * >= BTRFS_DELAYED_WRITEBACK the caller waits for the worker */
	updater u = { .w = &w, .n = 600, .balanced = 0 };
	task_spawn(w.s, "update", updater_step, &u, 0);
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(dr->balance_waits, 1);
	CHECK(u.parked >= 1);
	/* woken once the worker finished a batch of items */
	CHECK(u.seq_at_resume >= u.seq + BTRFS_DELAYED_BATCH);
	/* the unbounded work stops after BTRFS_DELAYED_WRITEBACK nodes */
	CHECK_EQ(dr->works_queued, 1);
	CHECK_EQ(dr->inodes_written, BTRFS_DELAYED_WRITEBACK);
	CHECK_EQ(dr->items, 600 - BTRFS_DELAYED_WRITEBACK);
	/* an inode already queued adds no item; below BACKGROUND no work */
	updater u2 = { .w = &w, .n = 600, .balanced = 1 };
	u2.done = 599;
	task_spawn(w.s, "update", updater_step, &u2, sim_now(w.s));
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(dr->items, 600 - BTRFS_DELAYED_WRITEBACK);
	CHECK_EQ(dr->works_queued, 1);
	world_free(&w);
}

/* --------------------------------- a directory's fsync, and the commit */

typedef struct dfsync {
	world *w;
	struct inode *in;
	tl_fsync f;
	int started, done, err;
} dfsync;

static int dfsync_step(sim *s, task *t)
{
	dfsync *d = t->ctx;
	(void)s;
	if (!d->started) {
		d->started = 1;
		d->err = treelog_fsync_init(&d->f, d->w->root, d->in, 0);
		if (d->err)
			return TASK_DONE;
	}
	int r = treelog_fsync_step(d->w->tl, t, &d->f);
	if (r < 0)
		d->err = r;
	if (r == TASK_DONE)
		d->done = 1;
	return r < 0 ? TASK_DONE : r;
}

static int img_has_name(const tl_image *im, uint64_t dir, uint64_t child)
{
	for (int k = 0; k < im->ndents; k++)
		if (im->dents[k].dir == dir && im->dents[k].child == child)
			return 1;
	return 0;
}

static void test_dir_fsync_and_commit(void)
{
	world w;
	world_init(&w, 0, 0, 0);
	delayed_root *dr = w.dr;
	struct inode *dir;
	CHECK_EQ(vfs_mkdir(w.fs, NULL, w.root, 256, "d", &dir), 0);
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(dr->items, 0);
	struct inode *a[10];
	uint64_t idx0 = dir->dir_index;
	for (int i = 0; i < 10; i++) {
		char name[16];
		snprintf(name, sizeof name, "a%d", i);
		CHECK_EQ(vfs_create(w.fs, NULL, w.root, dir->ino, name, 0644, &a[i]), 0);
	}
	uint64_t inserted0 = dr->inserted;
	/* the names' DIR_ITEMs and the inodes are in the tree, their
	 * DIR_INDEX items and the directory's update are queued */
	CHECK(tree_has(&w, dir->ino, BTRFS_DIR_ITEM_KEY,
		       items_dir_key_hash("a0", 2)));
	CHECK(tree_has(&w, a[0]->ino, BTRFS_INODE_ITEM_KEY, 0));
	CHECK(!tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0));
	CHECK_EQ(dr->items, 11);
	/* fsync the directory: its queued names go into the log from memory */
	uint64_t clones0 = w.tl->clones;
	dfsync d = { .w = &w, .in = dir };
	task_spawn(w.s, "fsync", dfsync_step, &d, sim_now(w.s));
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(d.err, 0);
	CHECK(d.done);
	/* still queued: logging them did not insert them */
	CHECK_EQ(dr->items, 11);
	CHECK(!tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0));
	/* no leaf of the dir index was changed in this transaction: only the
	 * directory's inode leaf was copied */
	CHECK_EQ(w.tl->clones - clones0, 1);
	/* ... but in the log */
	tl_root *lr = treelog_root(w.tl, 5);
	for (int i = 0; i < 10; i++) {
		bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + (uint64_t)i);
		bt_path p;
		bt_path_init(&p, &lr->log, NULL);
		CHECK_EQ(bt_search(&lr->log, &p, &k, 0, 0), 0);
		bt_path_release(&p);
	}
	/* the files' own fsyncs, then a power cut: every name comes back */
	for (int i = 0; i < 10; i++) {
		dfsync df = { .w = &w, .in = a[i] };
		task_spawn(w.s, "fsync", dfsync_step, &df, sim_now(w.s));
		CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
		CHECK_EQ(df.err, 0);
	}
	tl_image im;
	CHECK_EQ(treelog_replay(w.tl, w.root, &im), 0);
	CHECK(im.replayed);
	for (int i = 0; i < 10; i++)
		CHECK(tl_image_dent(&im, dir->ino, idx0 + (uint64_t)i) != NULL);
	tl_image_free(&im);
	/* a commit inserts everything */
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(dr->items, 0);
	CHECK_EQ(dr->inserted - inserted0, 10);
	for (int i = 0; i < 10; i++)
		CHECK(tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + (uint64_t)i));
	CHECK_EQ(tree_size(&w, dir->ino), dir->size);
	/* a name removed: its index deletion is queued; the dir's fsync
	 * logs it as a deleted range and a replay drops the name */
	uint64_t a3ino = a[3]->ino;
	CHECK_EQ(vfs_unlink(w.fs, NULL, w.root, dir->ino, "a3"), 0);
	CHECK(tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + 3));
	CHECK_EQ(dr->queued_del, 1);
	dfsync d2 = { .w = &w, .in = dir };
	task_spawn(w.s, "fsync", dfsync_step, &d2, sim_now(w.s));
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(d2.err, 0);
	CHECK_EQ(treelog_replay(w.tl, w.root, &im), 0);
	CHECK(im.replayed);
	for (int i = 0; i < 10; i++)
		if (i != 3)
			CHECK(img_has_name(&im, dir->ino, a[i]->ino));
	CHECK(!img_has_name(&im, dir->ino, a3ino));
	CHECK(!tl_image_dent(&im, dir->ino, idx0 + 3));
	tl_image_free(&im);
	/* two more names removed, the directory fsynced after each: each
	 * fsync logs only the deletion no log has taken yet (the delayed
	 * item's logged flag), and a replay drops all three names */
	uint64_t a5ino = a[5]->ino, a6ino = a[6]->ino;
	for (int i = 5; i <= 6; i++) {
		char name[16];
		snprintf(name, sizeof name, "a%d", i);
		CHECK_EQ(vfs_unlink(w.fs, NULL, w.root, dir->ino, name), 0);
		uint64_t taken0 = w.tl->dels_logged;
		dfsync d3 = { .w = &w, .in = dir };
		task_spawn(w.s, "fsync", dfsync_step, &d3, sim_now(w.s));
		CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
		CHECK_EQ(d3.err, 0);
		CHECK_EQ(w.tl->dels_logged - taken0, 1);
	}
	CHECK_EQ(dr->queued_del, 3);
	CHECK_EQ(treelog_replay(w.tl, w.root, &im), 0);
	CHECK(im.replayed);
	for (int i = 0; i < 10; i++)
		if (i != 3 && i != 5 && i != 6)
			CHECK(img_has_name(&im, dir->ino, a[i]->ino));
	CHECK(!img_has_name(&im, dir->ino, a3ino));
	CHECK(!img_has_name(&im, dir->ino, a5ino));
	CHECK(!img_has_name(&im, dir->ino, a6ino));
	tl_image_free(&im);
	/* a name created and removed before anything ran: nothing queued */
	uint64_t items = dr->items;
	CHECK_EQ(vfs_create(w.fs, NULL, w.root, dir->ino, "tmp", 0644, NULL), 0);
	CHECK_EQ(vfs_unlink(w.fs, NULL, w.root, dir->ino, "tmp"), 0);
	CHECK_EQ(dr->cancelled, 1);
	CHECK_EQ(dr->items, items);
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(dr->items, 0);
	CHECK(!tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + 3));
	CHECK(!tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + 6));
	CHECK_EQ(check_fs(w.fs), 0);
	world_free(&w);
}

/* ------------------- the worker waits on a leaf an fsync holds read-locked */

typedef struct waitobs {
	int n, fsync_leaf;
	uint64_t fsync_ino, max_ns;
} waitobs;

static void on_wait(void *ctx, const dl_wait_ev *ev)
{
	waitobs *o = ctx;
	if (ev->who != DLW_WORKER || ev->level != 0)
		return;
	o->n++;
	if (ev->fsync_leaf) {
		o->fsync_leaf++;
		o->fsync_ino = ev->fsync_ino;
	}
	if (ev->to - ev->from > o->max_ns)
		o->max_ns = ev->to - ev->from;
}

static void test_worker_waits_on_fsync(int prealloc, uint64_t *wait_max)
{
	world w;
	/* every eb allocation goes through direct reclaim (ms) */
	world_init(&w, 200, prealloc, 1.0);
	delayed_root *dr = w.dr;
	waitobs o = { 0 };
	dr->on_wait = on_wait;
	dr->obs_ctx = &o;
	/* file 0 needs a full sync (a new inode): its fsync copies its leaf */
	struct inode *x = w.f[0];
	x->flags |= INODE_NEEDS_FULL_SYNC;
	dfsync d = { .w = &w, .in = x };
	task_spawn(w.s, "fsync", dfsync_step, &d, 0);
	/* meanwhile 128 inode updates, file 0 first: the worker starts
	 * with file 0's node, whose inode item is in the leaf the fsync holds */
	updater u = { .w = &w, .n = 128, .balanced = 1 };
	task_spawn(w.s, "update", updater_step, &u, 2 * NS_PER_US);
	CHECK(sim_run(w.s, 1000000, SIMTIME_MAX));
	CHECK_EQ(d.err, 0);
	CHECK(d.done);
	CHECK(dr->nodes_run >= 1);
	CHECK_EQ(tree_size(&w, x->ino), 1000 + x->ino);
	if (!prealloc) {
		/* it waited for the fsync's release, the clone's allocation
		 * included, and said so: in its records, the log's victims
		 * and the view's observer */
		CHECK(o.fsync_leaf >= 1);
		CHECK_EQ(o.fsync_ino, x->ino);
		CHECK(o.max_ns > NS_PER_MS / 2);
		CHECK(dr->fsync_waits >= 1);
		CHECK_EQ(dr->worker_wait.n, (uint64_t)o.fsync_leaf);
		CHECK(w.tl->victim_wait.n >= 1);
		CHECK_EQ(w.tl->victim_wait.max_ns, dr->fsync_wait_max_ns);
	}
	*wait_max = o.max_ns;
	world_free(&w);
}

/* The flush of a node (__btrfs_commit_inode_delayed_items): a run of
 * consecutive new indexes goes in with one search
 * (btrfs_insert_delayed_item's batch), a run of deletions that are
 * neighbours in the leaf goes with one search (btrfs_batch_delete_items),
 * a deletion whose item is not in the tree is dropped. */
static void test_flush_batches(void)
{
	world w;
	world_init(&w, 0, 0, 0);
	delayed_root *dr = w.dr;
	bt_tree *tr = &w.root->tree;
	struct inode *dir;
	CHECK_EQ(vfs_mkdir(w.fs, NULL, w.root, 256, "d", &dir), 0);
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	uint64_t idx0 = dir->dir_index;
	for (int i = 0; i < 40; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%02d", i);
		CHECK_EQ(vfs_create(w.fs, NULL, w.root, dir->ino, name, 0644, NULL), 0);
	}
	int h = bt_tree_height(tr);
	uint64_t v0 = tr->nodes_visited, ins0 = dr->inserted;
	CHECK_EQ(dl_commit_inode(dr, NULL, dir), 0);
	CHECK_EQ(dr->inserted - ins0, 40);
	/* one descent for the 40 names (the tree may have grown a level on
	 * the way), one for the directory's inode item */
	CHECK(tr->nodes_visited - v0 <= (uint64_t)(2 * (h + 1)));
	for (int i = 0; i < 40; i++)
		CHECK(tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + (uint64_t)i));
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	/* f03..f12 unlinked: ten neighbours in a leaf, and a queued
	 * deletion of an index not in the tree */
	for (int i = 3; i <= 12; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%02d", i);
		CHECK_EQ(vfs_unlink(w.fs, NULL, w.root, dir->ino, name), 0);
	}
	CHECK_EQ(dl_delete_dir_index(dr, NULL, dir, idx0 + 1000), 0);
	h = bt_tree_height(tr);
	v0 = tr->nodes_visited;
	uint64_t del0 = dr->deleted;
	CHECK_EQ(dl_commit_inode(dr, NULL, dir), 0);
	CHECK_EQ(dr->deleted - del0, 11);
	CHECK(tr->nodes_visited - v0 <= (uint64_t)(3 * h));
	for (int i = 0; i < 40; i++)
		CHECK_EQ(tree_has(&w, dir->ino, BTRFS_DIR_INDEX_KEY, idx0 + (uint64_t)i),
			 i < 3 || i > 12);
	CHECK_EQ(trans_commit_now(&w.tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(dr->items, 0);
	CHECK_EQ(check_fs(w.fs), 0);
	world_free(&w);
}

int main(void)
{
	test_flush_batches();
	test_background_batch();
	test_writeback_wait();
	test_dir_fsync_and_commit();
	uint64_t before, after;
	test_worker_waits_on_fsync(0, &before);
	test_worker_waits_on_fsync(1, &after);
	/* after patch 001 the allocation is made before the leaf is locked */
	CHECK(after < before / 10);
	T_DONE();
}
