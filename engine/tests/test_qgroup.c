/*
 * test_qgroup.c - rfer/excl on a small scenario: one subvolume, a
 * snapshot sharing its data, a parent qgroup, accounting of single
 * extents, and the invariant check after commits.
 */
#include <stdlib.h>

#include "fs.h"
#include "items.h"
#include "lab.h"
#include "qgroup.h"
#include "subvol.h"
#include "t.h"
#include "trans.h"
#include "vfs.h"

#define K4 4096
#define K16 16384

static rootset rs(int n, uint64_t a, uint64_t b)
{
	rootset s;
	memset(&s, 0, sizeof s);
	if (n > 0)
		rootset_add(&s, a, 1);
	if (n > 1)
		rootset_add(&s, b, 1);
	return s;
}

/* btrfs_qgroup_account_extent on hand-made root sets. */
static void test_account_extent(void)
{
	sim *s = sim_create(1, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	qgroup_ctx q;
	trans_init(&tm, fs);
	qgroup_init(&q, fs, &tm);
	uint64_t A = 256, B = 257, P = qgroup_mkid(1, 100);
	CHECK_EQ(qgroup_create(&q, qgroup_mkid(0, A)), 0);
	CHECK_EQ(qgroup_create(&q, qgroup_mkid(0, B)), 0);
	CHECK_EQ(qgroup_create(&q, P), 0);
	CHECK_EQ(qgroup_create(&q, P), LAB_EINVAL);
	CHECK_EQ(qgroup_add_relation(&q, qgroup_mkid(0, A), P), 0);
	CHECK_EQ(qgroup_add_relation(&q, qgroup_mkid(0, B), P), 0);
	CHECK_EQ(qgroup_add_relation(&q, P, qgroup_mkid(0, A)), LAB_EINVAL);
	qgroup *qa = qgroup_find(&q, qgroup_mkid(0, A));
	qgroup *qb = qgroup_find(&q, qgroup_mkid(0, B));
	qgroup *qp = qgroup_find(&q, P);
	rootset none = rs(0, 0, 0), a = rs(1, A, 0), b = rs(1, B, 0), ab = rs(2, A, B);
	/* a new extent owned by A */
	qgroup_account_extent(&q, K4, &none, &a);
	CHECK_EQ(qa->rfer, K4);
	CHECK_EQ(qa->excl, K4);
	CHECK_EQ(qp->rfer, K4);
	CHECK_EQ(qp->excl, K4);
	/* B starts sharing it: A loses excl, B gains rfer; P still owns it */
	qgroup_account_extent(&q, K4, &a, &ab);
	CHECK_EQ(qa->rfer, K4);
	CHECK_EQ(qa->excl, 0);
	CHECK_EQ(qb->rfer, K4);
	CHECK_EQ(qb->excl, 0);
	CHECK_EQ(qp->rfer, K4);
	CHECK_EQ(qp->excl, K4);
	/* A drops it: B owns it exclusively */
	qgroup_account_extent(&q, K4, &ab, &b);
	CHECK_EQ(qa->rfer, 0);
	CHECK_EQ(qb->excl, K4);
	CHECK_EQ(qp->excl, K4);
	/* freed */
	qgroup_account_extent(&q, K4, &b, &none);
	CHECK_EQ(qb->rfer, 0);
	CHECK_EQ(qb->excl, 0);
	CHECK_EQ(qp->rfer, 0);
	CHECK_EQ(qp->excl, 0);
	qgroup_destroy(&q);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

/* A subvolume with files, rescan, a snapshot, and accounting at commit. */
static void test_subvol_scenario(void)
{
	sim *s = sim_create(1, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	qgroup_ctx q;
	subvol_ctx sc;
	trans_init(&tm, fs);
	qgroup_init(&q, fs, &tm);
	subvol_init(&sc, fs, &tm, &q);
	struct btrfs_root *top = fs_root_lookup(fs, BTRFS_FS_TREE_OBJECTID);
	struct btrfs_root *sv;
	CHECK_EQ(subvol_create(&sc, NULL, top, BTRFS_FIRST_FREE_OBJECTID, "sv", &sv), 0);
	struct inode *in[4];
	char name[16];
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "f%d", i);
		CHECK_EQ(vfs_create(fs, NULL, sv, BTRFS_FIRST_FREE_OBJECTID, name, 0644, &in[i]), 0);
		uint64_t b;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, K4, &b), 0);
		in[i]->size = K4;
		CHECK_EQ(fs_file_extent_insert(fs, NULL, in[i], 0, K4, b, K4, FE_REG), 0);
	}
	/* one inline file: no data extent */
	struct inode *il;
	CHECK_EQ(vfs_create(fs, NULL, sv, BTRFS_FIRST_FREE_OBJECTID, "small", 0644, &il), 0);
	il->size = 100;
	CHECK_EQ(fs_file_extent_insert_inline(fs, NULL, il, 100), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(qgroup_enable(&q, NULL), 0);
	CHECK_EQ(qgroup_rescan(&q, NULL), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	qgroup *g = qgroup_find(&q, qgroup_mkid(0, sv->id));
	CHECK(g != NULL);
	uint64_t leaves = 0, nodes = 0, items = 0;
	bt_count_blocks(&sv->tree, &leaves, &nodes, &items);
	int64_t expect = 4 * K4 + (int64_t)(leaves + nodes) * K16;
	CHECK_EQ(g->rfer, expect);
	CHECK_EQ(g->excl, expect);
	CHECK_EQ(check_fs(fs), 0);

	/* a kept snapshot shares everything below its own root */
	struct btrfs_root *snap;
	CHECK_EQ(subvol_snapshot(&sc, NULL, sv, &snap), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	g = qgroup_find(&q, qgroup_mkid(0, sv->id));
	qgroup *gs = qgroup_find(&q, qgroup_mkid(0, snap->id));
	CHECK(gs != NULL);
	CHECK_EQ(g->rfer, expect);
	CHECK(g->excl < expect);
	CHECK_EQ(gs->rfer, g->rfer);
	CHECK_EQ(check_fs(fs), 0);

	/* overwrite f0 in sv: a new extent for sv, the old one is the
	 * snapshot's alone; accounted at the commit */
	uint64_t nb;
	CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, K4, &nb), 0);
	int64_t snap_excl0 = gs->excl;
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in[0], 0, K4, nb, K4, FE_REG), 0);
	CHECK(tm.running && tm.running->delayed_refs.nr_dirty_extents > 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	g = qgroup_find(&q, qgroup_mkid(0, sv->id));
	gs = qgroup_find(&q, qgroup_mkid(0, snap->id));
	CHECK(gs->excl >= snap_excl0 + K4);
	CHECK_EQ(check_fs(fs), 0);
	subvol_destroy(&sc);
	qgroup_destroy(&q);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

int main(void)
{
	test_account_extent();
	test_subvol_scenario();
	T_DONE();
}
