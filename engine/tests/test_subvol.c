/*
 * test_subvol.c - the snapshot drop: every block and regular data extent
 * of the deleted tree is traced once, the tree is fully freed, the
 * checker is clean afterwards; the RFC's loop commits at the threshold;
 * a kept snapshot's shared leaves go through trace_subtree.
 */
#include <stdlib.h>

#include "bdev.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "qgroup.h"
#include "subvol.h"
#include "t.h"
#include "trans.h"
#include "vfs.h"

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	qgroup_ctx q;
	subvol_ctx sc;
	struct btrfs_root *sv[4];
	char names[4][16];
	int nsv, deleted, idle;
	uint64_t leaves, nodes, data, inl;
} env;

static void build(env *e, int nsv, int files, double shared)
{
	memset(e, 0, sizeof *e);
	e->s = sim_create(11, 0);
	CHECK_EQ(bdev_create(e->s, "ideal", &e->dev), 0);
	CHECK_EQ(fs_mount(e->s, e->dev, NULL, &e->fs), 0);
	trans_init(&e->tm, e->fs);
	qgroup_init(&e->q, e->fs, &e->tm);
	subvol_init(&e->sc, e->fs, &e->tm, &e->q);
	struct btrfs_root *top = fs_root_lookup(e->fs, BTRFS_FS_TREE_OBJECTID);
	e->nsv = nsv;
	for (int j = 0; j < nsv; j++) {
		snprintf(e->names[j], sizeof e->names[j], "sv%d", j);
		CHECK_EQ(subvol_create(&e->sc, NULL, top, BTRFS_FIRST_FREE_OBJECTID, e->names[j], &e->sv[j]), 0);
		char name[32];
		for (int i = 0; i < files; i++) {
			struct inode *in;
			snprintf(name, sizeof name, "file_%d", i);
			CHECK_EQ(vfs_create(e->fs, NULL, e->sv[j], BTRFS_FIRST_FREE_OBJECTID, name, 0644, &in), 0);
			if (i % 3 == 0) { /* every third file inline */
				in->size = 1000;
				CHECK_EQ(fs_file_extent_insert_inline(e->fs, NULL, in, 1000), 0);
				e->inl++;
			} else {
				uint64_t b;
				CHECK_EQ(alloc_extent(&e->fs->alloc, ALLOC_DATA, 4096, &b), 0);
				in->size = 4096;
				CHECK_EQ(fs_file_extent_insert(e->fs, NULL, in, 0, 4096, b, 4096, FE_REG), 0);
				e->data++;
			}
		}
		CHECK_EQ(trans_commit_now(&e->tm, NULL, TCOMMIT_EXPLICIT), 0);
		if (shared > 0) {
			struct btrfs_root *snap;
			CHECK_EQ(subvol_snapshot(&e->sc, NULL, e->sv[j], &snap), 0);
		}
		uint64_t l = 0, n = 0, it = 0;
		bt_count_blocks(&e->sv[j]->tree, &l, &n, &it);
		e->leaves += l;
		e->nodes += n;
	}
	CHECK_EQ(trans_commit_now(&e->tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(qgroup_enable(&e->q, NULL), 0);
	CHECK_EQ(qgroup_rescan(&e->q, NULL), 0);
	CHECK_EQ(trans_commit_now(&e->tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(e->fs), 0);
}

static void on_idle(void *ctx, simtime_t at)
{
	env *e = ctx;
	if (e->deleted < e->nsv)
		return;
	e->idle = 1;
}

static int deleter(sim *s, task *t)
{
	env *e = t->ctx;
	trans_handle h;
	if (trans_start(&e->tm, t, &h))
		return TASK_BLOCKED;
	for (int j = 0; j < e->nsv; j++)
		CHECK_EQ(subvol_delete(&e->sc, &h, e->sv[j], e->names[j]), 0);
	e->deleted = e->nsv;
	trans_end(&h, 0);
	subvol_wake_cleaner(&e->sc, t->clock);
	return TASK_DONE;
}

static void run_drop(env *e)
{
	e->sc.on_idle = on_idle;
	e->sc.idle_ctx = e;
	task_spawn(e->s, "deleter", deleter, e, 0);
	CHECK_EQ(subvol_cleaner_start(&e->sc, 1000), 0);
	sim_run(e->s, 10000000, SIMTIME_MAX);
	CHECK(e->idle);
	CHECK_EQ(e->sc.failed, 0);
	/* the final commit (a sync) */
	CHECK_EQ(trans_commit_now(&e->tm, NULL, TCOMMIT_EXPLICIT), 0);
}

static void teardown(env *e)
{
	subvol_destroy(&e->sc);
	qgroup_destroy(&e->q);
	trans_destroy(&e->tm);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

static uint64_t total_records(const env *e)
{
	uint64_t n = 0;
	for (int i = 0; i < e->q.ncalls; i++)
		n += e->q.calls[i].records;
	return n;
}

/* 5.10: every record lands in the one transaction; all freed. */
static void test_drop_all(void)
{
	env e;
	build(&e, 2, 700, 0);
	CHECK(e.nodes >= 2); /* multi-leaf trees: a root node each */
	int c0 = e.q.ncalls;
	run_drop(&e);
	CHECK_EQ(e.sc.roots_dropped, 2);
	CHECK_EQ(e.sc.leaves_dropped, e.leaves);
	CHECK_EQ(e.sc.nodes_dropped, e.nodes);
	CHECK_EQ(e.q.rec_by_src[QREC_DATA], e.data);
	CHECK_EQ(e.q.rec_by_src[QREC_LEAF], e.leaves);
	CHECK_EQ(e.q.rec_by_src[QREC_NODE], e.nodes);
	CHECK(e.q.rec_by_src[QREC_PARENT] >= 2); /* the parent leaf's COW */
	CHECK_EQ(e.q.rec_by_src[QREC_SUBTREE], 0);
	/* one transaction held them all; one accounting call */
	CHECK_EQ(e.q.ncalls, c0 + 1);
	CHECK_EQ(e.q.calls[e.q.ncalls - 1].records,
		 e.data + e.leaves + e.nodes + e.q.rec_by_src[QREC_PARENT]);
	CHECK_EQ(fs_root_lookup(e.fs, e.sv[0] ? 256 : 0) == NULL, 1);
	CHECK_EQ(check_fs(e.fs), 0);
	/* nothing of the dropped trees is reachable any more */
	uint64_t left = 0;
	for (uint32_t i = 0; i < e.q.br.n; i++)
		if (rootset_has(&e.q.br.ents[i].roots, 256) || rootset_has(&e.q.br.ents[i].roots, 257))
			left++;
	CHECK_EQ(left, 0);
	teardown(&e);
}

/* The RFC: commits once nr_dirty_extents >= threshold, each call holding
 * at most threshold plus one iteration's records. */
static void test_drop_threshold(void)
{
	env e;
	build(&e, 2, 700, 0);
	e.tm.dirty_threshold = 300;
	patch_set(&e.fs->opts.patches, P_002_QGROUP_DIRTY_THRESHOLD, 1);
	int c0 = e.q.ncalls;
	run_drop(&e);
	uint64_t recs = total_records(&e);
	int calls = e.q.ncalls - c0;
	CHECK(calls >= (int)(recs / 350));
	CHECK_EQ(e.sc.threshold_commits, (uint64_t)calls - 1);
	for (int i = c0; i < e.q.ncalls - 1; i++) {
		CHECK(e.q.calls[i].records >= 300);
		CHECK(e.q.calls[i].records < 300 + 2 * 300); /* one leaf's worth over */
	}
	CHECK_EQ(e.sc.leaves_dropped, e.leaves);
	CHECK_EQ(check_fs(e.fs), 0);
	teardown(&e);
}

/* A kept snapshot: the deleted tree's leaves are shared, so the drop
 * skips them and traces their subtree instead; the snapshot keeps its
 * data and ends up owning it exclusively. */
static void test_drop_shared(void)
{
	env e;
	build(&e, 1, 700, 1.0);
	run_drop(&e);
	CHECK_EQ(e.sc.leaves_dropped, 0);
	CHECK_EQ(e.sc.shared_skipped, e.leaves);
	CHECK(e.q.rec_by_src[QREC_SUBTREE] >= e.data);
	CHECK_EQ(e.q.rec_by_src[QREC_DATA], 0);
	struct btrfs_root *snap = fs_root_lookup(e.fs, 257);
	CHECK(snap != NULL);
	qgroup *g = qgroup_find(&e.q, qgroup_mkid(0, 257));
	CHECK(g != NULL && g->excl == g->rfer && g->rfer > 0);
	CHECK_EQ(check_fs(e.fs), 0);
	teardown(&e);
}

int main(void)
{
	test_drop_all();
	test_drop_threshold();
	test_drop_shared();
	T_DONE();
}
