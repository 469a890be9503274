/*
 * test_torture.c - the torture experiment finds no invariant violation
 * over many seeds for both mixes, finds the ones a test injects (so its
 * checks are not vacuous), and repeats itself exactly for a seed; the
 * checks of check_more.c each see the fault they are for.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bdev.h"
#include "check_more.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "qgroup.h"
#include "send.h"
#include "t.h"
#include "trans.h"
#include "treelog.h"
#include "vfs.h"
#include "vfs_data.h"
#include "vfs_io.h"

#include "exp_torture_int.h"

static double metric(lab_run *r, const char *name)
{
	for (int i = 0; i < r->exp->nmetrics; i++)
		if (strcmp(r->exp->metrics[i].name, name) == 0)
			return r->m[i];
	return NAN;
}

static lab_run *open_run(const char *params, uint32_t seed)
{
	lab_run *r = NULL;
	char *err = NULL;
	int rc = lab_open("torture", "base", params, seed, 0, &r, &err);
	if (rc) {
		fprintf(stderr, "lab_open(%s): %s\n", params, err ? err : "?");
		lab_free(err);
		return NULL;
	}
	return r;
}

static int finish(lab_run *r)
{
	int done = 0;
	while (!done && lab_step(r, 100000, &done) == 0)
		;
	return done;
}

/* Print the run's details (first_error and counters) when it failed. */
static void explain(lab_run *r, const char *params, uint32_t seed)
{
	char *js = NULL;
	if (lab_result_json(r, &js) == 0 && js) {
		fprintf(stderr, "torture %s seed %u: %s\n", params, seed, js);
		lab_free(js);
	}
}

/* Many seeds, both mixes: no failure, and the mix did what it says. */
static void test_soak(const char *mix, int seeds, int ops, int subvols)
{
	char params[96];
	snprintf(params, sizeof params, "mix=%s\nops=%d\nsubvols=%d", mix, ops, subvols);
	int all = strcmp(mix, "all") == 0;
	double fsyncs = 0, commits = 0;
	for (int s = 1; s <= seeds; s++) {
		lab_run *r = open_run(params, (uint32_t)s);
		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK(finish(r));
		double f = metric(r, "check_failures");
		CHECK_EQ(f, 0);
		CHECK_EQ(metric(r, "ops"), ops);
		if (f != 0)
			explain(r, params, (uint32_t)s);
		CHECK_EQ(lab_check(r), 0);
		fsyncs += metric(r, "fsyncs");
		commits += metric(r, "commits");
		if (s == 1) {
			/* the data path ran: reads and lseeks answered */
			char *js = NULL;
			CHECK_EQ(lab_result_json(r, &js), 0);
			CHECK(js && strstr(js, "\"reads\":") && !strstr(js, "\"reads\":0,"));
			CHECK(js && !strstr(js, "\"lseeks\":0,"));
			lab_free(js);
		}
		if (all && s == 1 && ops >= 3000) {
			char *js = NULL;
			CHECK_EQ(lab_result_json(r, &js), 0);
			/* every part of the mix ran */
			CHECK(js && strstr(js, "\"fsync_full\":") && !strstr(js, "\"fsync_full\":0,"));
			CHECK(js && !strstr(js, "\"fsync_fast\":0,"));
			CHECK(js && !strstr(js, "\"log_commits\":0,"));
			CHECK(js && !strstr(js, "\"snapshots_taken\":0,"));
			CHECK(js && !strstr(js, "\"roots_dropped\":0,"));
			CHECK(js && !strstr(js, "\"sends\":0,"));
			CHECK(js && !strstr(js, "\"remounts\":0"));
			lab_free(js);
		}
		lab_close(r);
	}
	CHECK(fsyncs > 0);
	CHECK(commits >= seeds);
	fprintf(stderr, "torture mix=%s subvols=%d: %d seeds x %d ops: %.0f commits checked, %.0f fsyncs\n",
		mix, subvols, seeds, ops, commits, fsyncs);
}

/* A check that cannot fail proves nothing: corrupt a qgroup counter in
 * the middle of a run and the run must count failures. */
static void test_injected_qgroup(void)
{
	lab_run *r = open_run("mix=all\nops=2000", 3);
	CHECK(r != NULL);
	if (!r)
		return;
	int done = 0;
	while (!done && lab_progress(r) < 0.3 && lab_step(r, 50, &done) == 0)
		;
	CHECK(!done);
	/* the run context starts with its fs_info; the qgroup context is
	 * the one registered for the "qgroups" check */
	fs_info *fs = *(fs_info **)r->ctx;
	qgroup_ctx *q = NULL;
	for (int i = 0; i < fs->nchecks; i++)
		if (!strcmp(fs->checks[i].name, "qgroups"))
			q = fs->checks[i].ctx;
	CHECK(q != NULL && q->nqgs > 0);
	if (q && q->nqgs)
		q->qgs[0].rfer += 4096;
	CHECK(finish(r));
	CHECK(metric(r, "check_failures") > 0);
	lab_close(r);
}

/* The same for a tree: swap two keys of a subvolume leaf. */
static void test_injected_key(void)
{
	lab_run *r = open_run("mix=files\nops=400", 5);
	CHECK(r != NULL);
	if (!r)
		return;
	int done = 0;
	while (!done && lab_progress(r) < 0.9 && lab_step(r, 50, &done) == 0)
		;
	fs_info *fs = *(fs_info **)r->ctx;
	struct btrfs_root *top = fs_root_lookup(fs, BTRFS_FS_TREE_OBJECTID);
	bt_node *n = top->tree.root;
	while (n->level)
		n = n->ptrs[n->nritems - 1].child;
	CHECK(n->nritems >= 2);
	/* between commits the block group items lag their counters (they
	 * are written at commit): count what a check finds now */
	int before = lab_check(r);
	CHECK(before >= 0);
	/* an out-of-order leaf, checked (and repaired) before the run goes on */
	bt_key k = n->items[n->nritems - 1].key;
	n->items[n->nritems - 1].key = n->items[n->nritems - 2].key;
	n->items[n->nritems - 2].key = k;
	CHECK(lab_check(r) > before);
	n->items[n->nritems - 2].key = n->items[n->nritems - 1].key;
	n->items[n->nritems - 1].key = k;
	CHECK_EQ(lab_check(r), before);
	CHECK(finish(r));
	CHECK_EQ(metric(r, "check_failures"), 0);
	lab_close(r);
}

/* Same seed, same result, to the byte. */
static void test_repeatable(void)
{
	char *a = NULL, *b = NULL;
	for (int k = 0; k < 2; k++) {
		lab_run *r = open_run("mix=all\nops=1500", 7);
		CHECK(r != NULL);
		if (!r)
			return;
		CHECK(finish(r));
		char *js = NULL;
		CHECK_EQ(lab_result_json(r, &js), 0);
		/* wall time is the host's: cut it off */
		char *w = js ? strstr(js, "\"wall_ms\"") : NULL;
		if (w)
			*w = 0;
		if (k == 0)
			a = js;
		else
			b = js;
		lab_close(r);
	}
	CHECK(a && b && strcmp(a, b) == 0);
	lab_free(a);
	lab_free(b);
}

/* Bad parameters are refused at the boundary. */
static void test_params(void)
{
	lab_run *r = NULL;
	char *err = NULL;
	CHECK(lab_open("torture", "base", "mix=some", 1, 0, &r, &err) < 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("torture", "base", "subvols=0", 1, 0, &r, &err) < 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("torture", "base", "subvols=65", 1, 0, &r, &err) < 0);
	lab_free(err);
}

/* ---- check_more.c's checks, each with the fault it is for */

static void test_check_log_and_handles(void)
{
	sim *s = sim_create(3, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	CHECK_EQ(trans_init(&tm, fs), 0);
	ebmem *mem;
	CHECK_EQ(ebmem_create(s, NULL, &mem), 0);
	treelog *tl;
	CHECK_EQ(treelog_create(s, NULL, mem, NULL, &tl), 0);
	CHECK_EQ(check_more_treelog(fs, tl), 0);
	CHECK_EQ(check_more_handles(fs, &tm), 0);
	CHECK_EQ(check_fs(fs), 0);
	tl_root *lr = treelog_root(tl, 5);
	lr->log_writers = 1; /* an fsync left inside its log transaction */
	CHECK_EQ(check_treelog_idle(fs, tl), 1);
	CHECK(check_fs(fs) > 0);
	lr->log_writers = 0;
	trans_handle h;
	CHECK_EQ(trans_start(&tm, NULL, &h), 0);
	CHECK_EQ(check_trans_handles(fs, &tm), 0); /* one open, one writer */
	tm.handles_ended++;                          /* ended twice */
	CHECK_EQ(check_trans_handles(fs, &tm), 1);
	tm.handles_ended--;
	CHECK_EQ(trans_end(&h, 0), 0);
	CHECK_EQ(check_fs(fs), 0);
	/* space counters: the per-kind sums and each block group's bitmap */
	CHECK_EQ(check_more_space(fs), 0);
	CHECK_EQ(check_space_counters(fs, NULL), 0);
	fs->alloc.used[ALLOC_METADATA] += 4096;
	CHECK_EQ(check_space_counters(fs, NULL), 1);
	CHECK(check_fs(fs) > 0);
	fs->alloc.used[ALLOC_METADATA] -= 4096;
	block_group *bg = &fs->alloc.bgs[0];
	bg->reserved += 4096; /* reserved without a sector marked */
	fs->alloc.reserved[bg->kind] += 4096;
	CHECK_EQ(check_space_counters(fs, NULL), 1);
	bg->reserved -= 4096;
	fs->alloc.reserved[bg->kind] -= 4096;
	CHECK_EQ(check_fs(fs), 0);
	treelog_destroy(tl);
	ebmem_destroy(mem);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

/* The recount from the trees sees a counter the index agrees with. */
static void test_check_qgroup_recount(void)
{
	sim *s = sim_create(4, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	CHECK_EQ(trans_init(&tm, fs), 0);
	qgroup_ctx q;
	CHECK_EQ(qgroup_init(&q, fs, &tm), 0);
	CHECK_EQ(check_more_qgroups(fs, &q), 0);
	struct btrfs_root *top = fs_root_lookup(fs, 5);
	for (int i = 0; i < 50; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%d", i);
		struct inode *in;
		CHECK_EQ(vfs_create(fs, NULL, top, 256, name, 0644, &in), 0);
		uint64_t b;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 8192, &b), 0);
		CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, 8192, b, 8192, FE_REG), 0);
		in->size = 8192;
		CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	}
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(qgroup_enable(&q, NULL), 0);
	CHECK_EQ(qgroup_rescan(&q, NULL), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(fs), 0);
	qgroup *g = qgroup_find(&q, qgroup_mkid(0, 5));
	CHECK(g != NULL && g->rfer >= 50 * 8192 && g->excl == g->rfer);
	g->excl -= 8192;
	CHECK_EQ(check_qgroup_recount(fs, &q), 1);
	g->excl += 8192;
	CHECK_EQ(check_qgroup_recount(fs, &q), 0);
	/* split an extent in two items (a write in its middle), then drop
	 * one half: the other half still holds it for the qgroup */
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, top, 256, "split", 0644, &in), 0);
	uint64_t b, b2;
	CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 65536, &b), 0);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, 65536, b, 65536, FE_REG), 0);
	in->size = 65536;
	CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 4096, &b2), 0);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 16384, 4096, b2, 4096, FE_REG), 0);
	CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(fs_drop_extents(fs, NULL, in, 0, 16384, NULL), 0);
	CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(fs), 0);
	const br_ent *be = br_lookup(&q.br, b);
	CHECK(be && rootset_has(&be->roots, 5));
	/* and the last half takes it */
	CHECK_EQ(fs_drop_extents(fs, NULL, in, 0, 65536, NULL), 0);
	CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(fs), 0);
	be = br_lookup(&q.br, b);
	CHECK(!be || !rootset_has(&be->roots, 5));
	/* a dropped root's id is not handed out again */
	struct btrfs_root *x;
	uint64_t id = fs_root_next_id(fs);
	CHECK_EQ(fs_root_create(fs, NULL, id, &x), 0);
	bt_free_tree(&x->tree, NULL);
	x->deleted = 1;
	bt_key rk = bt_mkkey(id, BTRFS_ROOT_ITEM_KEY, 0);
	CHECK_EQ(bt_delete(&fs->root_tree, NULL, &rk), 0);
	fs_root_forget(fs, x);
	CHECK_EQ(fs_root_lookup(fs, id) == NULL, 1);
	CHECK(fs_root_next_id(fs) > id);
	qgroup_destroy(&q);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

/* Quota enabled on a fresh file system: the top-level subvolume's mkfs
 * root leaf, made before the qgroup hooks, is accounted too. */
static void test_qgroup_fresh(void)
{
	sim *s = sim_create(6, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	CHECK_EQ(trans_init(&tm, fs), 0);
	qgroup_ctx q;
	CHECK_EQ(qgroup_init(&q, fs, &tm), 0);
	CHECK_EQ(check_more_qgroups(fs, &q), 0);
	CHECK_EQ(qgroup_enable(&q, NULL), 0);
	CHECK_EQ(qgroup_rescan(&q, NULL), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(check_fs(fs), 0);
	qgroup *g = qgroup_find(&q, qgroup_mkid(0, 5));
	CHECK(g != NULL && g->rfer == BT_NODESIZE && g->excl == BT_NODESIZE);
	qgroup_destroy(&q);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

typedef struct names {
	uint64_t ino[8], dir[8];
	char name[8][16];
	int n;
} names;

static int name_of(void *ctx, uint64_t ino, uint64_t parent, char *buf, size_t len)
{
	names *nm = ctx;
	for (int i = 0; i < nm->n; i++)
		if (nm->ino[i] == ino && nm->dir[i] == parent) {
			snprintf(buf, len, "%s", nm->name[i]);
			return 0;
		}
	return LAB_ENOENT;
}

/* Receive in a task (its data path needs one): the whole stream, then
 * the sync after it. */
static int recv_task(sim *s, task *t)
{
	(void)s;
	recv_ctx *r = t->ctx;
	int rc;
	do
		rc = recv_step(r, t);
	while (rc == TASK_RUN);
	CHECK_EQ(rc, TASK_DONE);
	CHECK_EQ(recv_flush(r, t), 0);
	return TASK_DONE;
}

/* A received copy compares equal; a changed size or a missing name does not. */
static void test_check_send(void)
{
	sim *s = sim_create(5, 0);
	fs_info *src, *dst;
	bdev *ddev;
	CHECK_EQ(bdev_create(s, "ideal", &ddev), 0);
	CHECK_EQ(fs_mount(s, NULL, NULL, &src), 0);
	CHECK_EQ(fs_mount(s, ddev, NULL, &dst), 0);
	struct btrfs_root *top = fs_root_lookup(src, 5);
	names nm = { .n = 0 };
	struct inode *d;
	CHECK_EQ(vfs_mkdir(src, NULL, top, 256, "d", &d), 0);
	nm.ino[nm.n] = d->ino, nm.dir[nm.n] = 256, snprintf(nm.name[nm.n++], 16, "d");
	for (int i = 0; i < 3; i++) {
		struct inode *in;
		char name[16];
		snprintf(name, sizeof name, "f%d", i);
		CHECK_EQ(vfs_create(src, NULL, top, i ? d->ino : 256, name, 0644, &in), 0);
		uint64_t b, len = (uint64_t)(i + 1) * 8192;
		CHECK_EQ(alloc_extent(&src->alloc, ALLOC_DATA, len, &b), 0);
		CHECK_EQ(fs_file_extent_insert(src, NULL, in, 4096, len, b, len, FE_REG), 0);
		in->size = 4096 + len + 100; /* a hole before, a hole after */
		CHECK_EQ(fs_inode_update(src, NULL, in), 0);
		nm.ino[nm.n] = in->ino, nm.dir[nm.n] = i ? d->ino : 256;
		snprintf(nm.name[nm.n++], 16, "%s", name);
	}
	/* an older directory moved under a younger one: sent after it */
	struct inode *e;
	CHECK_EQ(vfs_mkdir(src, NULL, top, 256, "e", &e), 0);
	CHECK(e->ino > d->ino);
	CHECK_EQ(vfs_rename(src, NULL, top, 256, "d", e->ino, "d"), 0);
	nm.dir[0] = e->ino;
	nm.ino[nm.n] = e->ino, nm.dir[nm.n] = 256, snprintf(nm.name[nm.n++], 16, "e");
	struct btrfs_root *snap;
	CHECK_EQ(fs_root_create(src, NULL, fs_root_next_id(src), &snap), 0);
	CHECK_EQ(bt_copy_root(&top->tree, &snap->tree, NULL), 0);
	CHECK_EQ(fs_commit(src, NULL), 0);
	send_stream st;
	CHECK_EQ(send_build(src, NULL, snap, NULL, name_of, &nm, &st), 0);
	recv_ctx r;
	CHECK_EQ(recv_init(&r, dst, fs_root_lookup(dst, 5), &st), 0);
	task_spawn(s, "receive", recv_task, &r, 0);
	sim_run(s, 1000000, SIMTIME_MAX);
	CHECK_EQ(r.error, 0);
	CHECK_EQ(fs_commit(dst, NULL), 0);
	CHECK_EQ(check_fs(dst), 0);
	CHECK_EQ(check_send_received(src, snap, &r, name_of, &nm), 0);
	/* the receiver's size differs */
	rcv_ino *ri = recv_lookup(&r, nm.ino[2]);
	CHECK(ri && ri->inode);
	ri->inode->size += 4096;
	CHECK_EQ(fs_inode_update(dst, NULL, ri->inode), 0);
	CHECK_EQ(check_send_received(src, snap, &r, name_of, &nm), 1);
	ri->inode->size -= 4096;
	CHECK_EQ(fs_inode_update(dst, NULL, ri->inode), 0);
	CHECK_EQ(check_send_received(src, snap, &r, name_of, &nm), 0);
	/* the source says another name */
	snprintf(nm.name[1], 16, "zz");
	CHECK_EQ(check_send_received(src, snap, &r, name_of, &nm), 1);
	recv_destroy(&r);
	send_stream_free(&st);
	fs_unmount(dst);
	fs_unmount(src);
	bdev_destroy(ddev);
	sim_destroy(s);
}

/* Find the item of key k in the leaves under n (NULL if none). */
static bt_item *find_item(bt_node *n, const bt_key *k)
{
	if (!n)
		return NULL;
	if (n->level == 0) {
		for (int i = 0; i < n->nritems; i++)
			if (bt_key_cmp(&n->items[i].key, k) == 0)
				return &n->items[i];
		return NULL;
	}
	for (int i = 0; i < n->nritems; i++) {
		bt_item *x = find_item(n->ptrs[i].child, k);
		if (x)
			return x;
	}
	return NULL;
}

/* The power-cut check runs during mix=all and finds a synced log that
 * lost a fsynced file's size (so it is not vacuous). */
static void test_power_cut(void)
{
	lab_run *r = open_run("ops=3000\nmix=all", 2);
	CHECK(r != NULL);
	if (!r)
		return;
	tort *c = r->ctx;
	int done = 0, hit = 0;
	while (!done && !hit && lab_step(r, 200, &done) == 0) {
		if (c->cuts < 3)
			continue;
		/* a file fsynced in this transaction, in its root's synced log */
		for (int i = 0; i < c->nents && !hit; i++) {
			tent *e = &c->ents[i];
			if (e->is_dir || e->dur_trans != c->fs->transid)
				continue;
			tl_root *lr = treelog_root(c->tl, c->sv[e->sv]->id);
			bt_key k = bt_mkkey(e->ino, BTRFS_INODE_ITEM_KEY, 0);
			bt_item *it = lr && lr->synced_root && lr->synced_transid == c->fs->transid
				? find_item(lr->synced_root, &k) : NULL;
			if (!it)
				continue;
			hit = 1;
			uint64_t f0 = c->failures;
			tort_power_cut_check(c);
			CHECK_EQ(c->failures, f0);
			it->v[0] += 4096; /* the log lies about its size */
			tort_power_cut_check(c);
			CHECK(c->failures > f0);
			it->v[0] -= 4096;
			uint64_t f1 = c->failures;
			tort_power_cut_check(c);
			CHECK_EQ(c->failures, f1);
		}
	}
	CHECK(hit);
	CHECK(c->cuts >= 3);
	CHECK(c->cuts_replayed >= 1);
	lab_close(r);
}

/*
 * The rule F1 broke (fuzz corpus torture-power-cut-1): an fsync of a
 * directory made in this transaction inside another one made in it logs
 * the outer one too (btrfs_log_inode_parent -> log_all_new_ancestors,
 * LOG_INODE_EXISTS with its name), so after a power cut the mount finds
 * it although nobody fsynced it; the power-cut check accepts exactly
 * that: a new directory above a logged inode, and reports new ones
 * without (both unlogged in the check's record); a new directory no
 * fsync logged is not found after the replay.
 * The operations come from a script as the fuzzer gives them
 * (tort_below): two bytes choose each operation (x % 1000, run_op), the
 * bytes after its arguments.
 */
static void test_power_cut_new_ancestor(void)
{
	lab_run *r = open_run("ops=100000\nmix=all\nsubvols=1", 3);
	CHECK(r != NULL);
	if (!r)
		return;
	tort *c = r->ctx;
	static uint8_t script[3 * 4 + 4 + 2 * 4000];
	size_t n = 0;
	/* mkdir A in the top directory: op 240, subvolume 0 (no entry to
	 * pick a directory from) */
	script[n++] = 0, script[n++] = 240, script[n++] = 0;
	/* mkdir B in A: op 240, subvolume 0, entry 0 (A) */
	script[n++] = 0, script[n++] = 240, script[n++] = 0, script[n++] = 0;
	/* mkdir C in A: entry 0 again */
	script[n++] = 0, script[n++] = 240, script[n++] = 0, script[n++] = 0;
	/* an fsync storm of one fsync (op 900, 1 + 0), of entry 1 (B) */
	script[n++] = 900 >> 8, script[n++] = 900 & 255, script[n++] = 0, script[n++] = 1;
	/* then stat(2) of entry 0 while the fsync runs: op 850 */
	while (n + 3 <= sizeof script)
		script[n++] = 850 >> 8, script[n++] = 850 & 255, script[n++] = 0;
	c->script = script;
	c->script_len = n;
	int done = 0;
	uint64_t transid = c->fs->transid;
	while (!done && c->fsyncs_done == 0 && lab_step(r, 1, &done) == 0)
		;
	CHECK_EQ(c->failures, 0);
	CHECK_EQ(c->fsyncs_done, 1);
	CHECK_EQ(c->fs->transid, transid); /* no commit since the mkdirs */
	CHECK_EQ(c->nents, 3);
	if (c->nents != 3 || c->fsyncs_done != 1 || c->fs->transid != transid) {
		lab_close(r);
		return;
	}
	tent *a = &c->ents[0], *b = &c->ents[1], *cc = &c->ents[2];
	CHECK(a->is_dir && b->is_dir && cc->is_dir);
	CHECK_EQ(a->dir, BTRFS_FIRST_FREE_OBJECTID);
	CHECK_EQ(b->dir, a->ino);
	CHECK_EQ(cc->dir, a->ino);
	/* B fsynced, A logged with it, C by nobody */
	CHECK_EQ(b->log_trans, transid);
	CHECK_EQ(a->log_trans, transid);
	CHECK(cc->log_trans != transid);
	tl_image im;
	CHECK_EQ(treelog_replay(c->tl, c->sv[0], &im), 0);
	CHECK(im.replayed);
	const tl_img_inode *ia = tl_image_inode(&im, a->ino), *ib = tl_image_inode(&im, b->ino);
	CHECK(ia && ia->nlink == 1);
	CHECK(ib && ib->nlink == 1);
	CHECK(tl_image_inode(&im, cc->ino) == NULL);
	tl_image_free(&im);
	/* the check accepts A as logged ... */
	uint64_t f0 = c->failures;
	tort_power_cut_check(c);
	CHECK_EQ(c->failures, f0);
	/* ... and as the directory above a logged inode, whichever fsync
	 * logged it ... */
	a->log_trans = 0;
	tort_power_cut_check(c);
	CHECK_EQ(c->failures, f0);
	/* ... and reports both when no fsync logged B either */
	b->log_trans = 0;
	tort_power_cut_check(c);
	CHECK_EQ(c->failures, f0 + 2);
	CHECK(strstr(c->first_error, "never fsynced") != NULL);
	lab_close(r);
}

/*
 * Fuzz finding torture-fsync-in-flight-1: a file fsynced in this
 * transaction, written again and fsynced again; a power cut while the
 * second fsync is in flight found the newer extents in the replayed log,
 * not the ones the first fsync saw. That is allowed: the second fsync has
 * copied the inode into the log (btrfs_log_inode) and another fsync's log
 * sync wrote the whole log tree with it (it waits for the copy: the
 * log_writers count). The check accepts the newer state exactly while an
 * fsync of the file that has begun its copy is in flight, and reports the
 * same image without one. Runs the corpus input as its script.
 */
static void test_power_cut_fsync_in_flight(void)
{
	FILE *f = fopen("fuzz/corpus/torture/torture-fsync-in-flight-1", "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	static uint8_t data[4096];
	size_t size = fread(data, 1, sizeof data, f);
	fclose(f);
	CHECK(size > 3 && (data[0] & 1));
	char params[64];
	snprintf(params, sizeof params, "ops=200000\nmix=all\nsubvols=%u", 1 + data[1] % 8);
	lab_run *r = open_run(params, data[2]);
	CHECK(r != NULL);
	if (!r)
		return;
	tort *c = r->ctx;
	c->script = data + 3;
	c->script_len = size - 3;
	int done = 0, seen = 0;
	while (!done && lab_step(r, 1, &done) == 0) {
		for (int i = 0; i < TS_MAX_FSYNC && !seen; i++) {
			tfsync *w = &c->fsw[i];
			int k = w->busy && w->f.state >= TLS_COPY ? tort_find(c, w->sv, w->ino) : -1;
			tent *e = k >= 0 ? &c->ents[k] : NULL;
			struct inode *in = e ? fs_inode_get(c->sv[w->sv], w->ino) : NULL;
			if (!in || e->is_dir || e->dur_trans != c->fs->transid ||
			    tl_tree_extents_hash(c->fs, in) == e->dur_hash)
				continue;
			tl_image im;
			CHECK_EQ(treelog_replay(c->tl, c->sv[w->sv], &im), 0);
			const tl_img_inode *ii = tl_image_inode(&im, w->ino);
			int newer = ii && ii->size == in->size &&
				    tl_image_extents_hash(ii) == tl_tree_extents_hash(c->fs, in);
			tl_image_free(&im);
			if (!newer)
				continue;
			seen = 1;
			uint64_t f0 = c->failures;
			tort_power_cut_check(c);
			CHECK_EQ(c->failures, f0);
			w->busy = 0; /* the same image with no fsync in flight */
			tort_power_cut_check(c);
			w->busy = 1;
			CHECK(c->failures > f0);
			CHECK(strstr(c->first_error, "replayed with size") != NULL);
			c->failures = f0;
			c->first_error[0] = 0;
		}
	}
	CHECK(done);
	CHECK(seen);
	CHECK_EQ(c->failures, 0);
	lab_close(r);
}

/*
 * Fuzz finding torture-rename-fsyncing-dir-1: a file made in this
 * transaction in a directory, renamed in it while an fsync of that
 * directory was in flight (logged, syncing the log: btrfs_sync_file has
 * unlocked the directory), was found by a power cut although no fsync of
 * it had run. That is allowed: the directory's logged_trans is this
 * transaction's, so btrfs_log_new_name logs the renamed inode and its new
 * name, and that log sync or a later one writes it. The check's record
 * counts the directory as logged while an fsync logging it is in flight
 * (tort_note_rename), so it accepts the file, and reports it without that
 * record. Runs the corpus input as its script.
 */
static void test_power_cut_rename_fsyncing_dir(void)
{
	FILE *f = fopen("fuzz/corpus/torture/torture-rename-fsyncing-dir-1", "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	static uint8_t data[4096];
	size_t size = fread(data, 1, sizeof data, f);
	fclose(f);
	CHECK(size > 3 && (data[0] & 1));
	char params[64];
	snprintf(params, sizeof params, "ops=200000\nmix=all\nsubvols=%u", 1 + data[1] % 8);
	lab_run *r = open_run(params, data[2]);
	CHECK(r != NULL);
	if (!r)
		return;
	tort *c = r->ctx;
	c->script = data + 3;
	c->script_len = size - 3;
	int done = 0, seen = 0;
	while (!done && lab_step(r, 1, &done) == 0) {
		for (int i = 0; i < c->nents && !seen; i++) {
			tent *e = &c->ents[i];
			struct inode *in = fs_inode_get(c->sv[e->sv], e->ino);
			int k = tort_find(c, e->sv, e->dir);
			/* a new file no fsync of its own logged, in a new
			 * directory logged in this transaction, on record as
			 * logged (the rename) */
			if (e->is_dir || !in || in->generation != c->fs->transid ||
			    e->log_trans != c->fs->transid || e->dur_trans == c->fs->transid ||
			    tort_pinned(c, e->sv, e->ino) || k < 0 ||
			    c->ents[k].log_trans != c->fs->transid)
				continue;
			tl_image im;
			CHECK_EQ(treelog_replay(c->tl, c->sv[e->sv], &im), 0);
			const tl_img_inode *ii = tl_image_inode(&im, e->ino);
			int found = ii && ii->nlink > 0;
			tl_image_free(&im);
			if (!found)
				continue;
			seen = 1;
			uint64_t f0 = c->failures;
			tort_power_cut_check(c);
			CHECK_EQ(c->failures, f0);
			e->log_trans = 0; /* the record without the rename's logging */
			tort_power_cut_check(c);
			e->log_trans = c->fs->transid;
			CHECK(c->failures > f0);
			CHECK(strstr(c->first_error, "never fsynced") != NULL);
			c->failures = f0;
			c->first_error[0] = 0;
		}
	}
	CHECK(done);
	CHECK(seen);
	CHECK_EQ(c->failures, 0);
	lab_close(r);
}

/* At every power cut of a few mix=all runs, the replay read in part
 * (treelog_replay_some, what the cut check uses) agrees with the whole
 * replay on its scope, for every subvolume, asked for every live file of
 * the subvolume or for none (the log's inodes alone). */
static void test_power_cut_partial(void)
{
	int cuts = 0, compared = 0, replayed = 0;
	for (uint32_t seed = 1; seed <= 3; seed++) {
		lab_run *r = open_run("ops=2500\nmix=all", seed);
		CHECK(r != NULL);
		if (!r)
			return;
		tort *c = r->ctx;
		uint64_t *want = NULL;
		int done = 0;
		uint64_t seen = 0;
		while (!done && lab_step(r, 1, &done) == 0) {
			if (c->cuts == seen)
				continue;
			seen = c->cuts;
			cuts++;
			free(want);
			want = malloc(((size_t)c->nents + 1) * sizeof(*want));
			for (int sv = 0; sv < c->nsv; sv++) {
				struct btrfs_root *root = c->sv[sv];
				if (!root || root->dead || !root->tree.commit_root)
					continue;
				int n = 0;
				for (int i = 0; i < c->nents; i++)
					if (c->ents[i].sv == sv && !c->ents[i].is_dir)
						want[n++] = c->ents[i].ino;
				tl_image all;
				CHECK_EQ(treelog_replay(c->tl, root, &all), 0);
				replayed += all.replayed;
				for (int pass = 0; pass < 2; pass++) {
					tl_image part;
					uint64_t where = 0;
					CHECK_EQ(treelog_replay_some(c->tl, root, want, pass ? n : 0, &part), 0);
					int ok = tl_image_agree(&all, &part, &where);
					if (!ok)
						fprintf(stderr, "seed %u cut %llu root %llu: differs at %llu\n", seed,
							(unsigned long long)c->cuts, (unsigned long long)root->id,
							(unsigned long long)where);
					CHECK(ok);
					compared++;
					tl_image_free(&part);
				}
				tl_image_free(&all);
			}
		}
		free(want);
		CHECK_EQ(metric(r, "check_failures"), 0);
		lab_close(r);
	}
	CHECK(cuts >= 20);
	CHECK(replayed >= 20);
	printf("torture power cuts: %d cuts, %d partial replays compared, %d whole ones replayed a log\n",
	       cuts, compared, replayed);
}

/* ---- what the speed-ups must keep (issue 32 item 5) ---------------------- */

/* The next-fit search as it was, a sector at a time: the first free run
 * of n at or after the cursor, else the first from the start. */
static int ref_find(const block_group *bg, uint64_t n, uint64_t *sector)
{
	uint64_t sectors = bg->length / ALLOC_SECTOR;
	if (bg->length - bg->used - bg->pinned - bg->reserved < n * ALLOC_SECTOR)
		return 1;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t i = pass ? 0 : bg->cursor;
		uint64_t end = pass ? bg->cursor + n : sectors;
		if (end > sectors)
			end = sectors;
		uint64_t run = 0;
		for (; i < end; i++) {
			if ((bg->bitmap[i >> 6] >> (i & 63)) & 1u) {
				run = 0;
				continue;
			}
			if (++run == n) {
				*sector = i + 1 - n;
				return 0;
			}
		}
	}
	return 1;
}

/* The allocator's word-at-a-time search and its memory of a size that
 * did not fit (bg->no_run) hand out exactly what the sector-by-sector
 * next-fit search would, through fragmentation, frees, pins and unpins. */
static void test_alloc_next_fit(void)
{
	alloc_ctl a;
	CHECK_EQ(alloc_init(&a, 640ull << 20), 0); /* 64 MiB data chunks */
	prng rng;
	prng_seed(&rng, 7);
	enum { MAXE = 4096 };
	static uint64_t at[MAXE], len[MAXE];
	static int used[MAXE];
	int ne = 0, checked = 0, misses = 0;
	for (int step = 0; step < 60000; step++) {
		uint64_t r = prng_below(&rng, 100);
		if (r < 55 && ne < MAXE) {
			/* mostly small, some larger than most holes */
			uint64_t n = prng_below(&rng, 10) == 0 ? 64 + prng_below(&rng, 400)
								: 1 + prng_below(&rng, 16);
			uint64_t want = 0;
			int found = 0;
			for (int g = 0; g < a.nbgs && !found; g++) {
				uint64_t sct;
				if (a.bgs[g].kind == ALLOC_DATA && !ref_find(&a.bgs[g], n, &sct)) {
					want = a.bgs[g].start + sct * ALLOC_SECTOR;
					found = 1;
				}
			}
			uint64_t got = 0;
			int rc = alloc_extent(&a, ALLOC_DATA, n * ALLOC_SECTOR, &got);
			if (found) {
				CHECK_EQ(rc, 0);
				CHECK_EQ(got, want);
				checked++;
			} else {
				misses++;
			}
			if (rc == 0) {
				at[ne] = got;
				len[ne] = n * ALLOC_SECTOR;
				used[ne] = 0;
				ne++;
			}
		} else if (r < 85 && ne) {
			int i = (int)prng_below(&rng, (uint64_t)ne);
			if (!used[i]) {
				CHECK_EQ(alloc_mark_used(&a, at[i], len[i]), 0);
				used[i] = 1;
			} else {
				CHECK_EQ(alloc_free(&a, at[i], len[i]), 0); /* pinned */
				at[i] = at[--ne];
				len[i] = len[ne];
				used[i] = used[ne];
			}
		} else if (r < 95 && ne) {
			int i = (int)prng_below(&rng, (uint64_t)ne);
			if (!used[i]) {
				CHECK_EQ(alloc_free_now(&a, at[i], len[i]), 0);
				at[i] = at[--ne];
				len[i] = len[ne];
				used[i] = used[ne];
			}
		} else {
			alloc_unpin_all(&a);
		}
	}
	/* the sequence got where the search matters: full groups, and sizes
	 * that fit nowhere but a new chunk */
	CHECK(checked > 20000);
	CHECK(misses > 10);
	CHECK(a.nbgs > 2);
	printf("allocator: %d allocations as next-fit places them, %d needed a new chunk, %d groups\n",
	       checked, misses, a.nbgs);
	alloc_destroy(&a);
}

/* vio_sync looks only at the inodes that may be dirty (vd_maybe_unclean):
 * at every step of torture runs of both mixes, each inode not clean is
 * among them, and they come in the order of every inode's walk. */
static void test_sync_candidates(void)
{
	const char *params[] = { "ops=3000\nmix=files", "ops=2000\nmix=all" };
	uint64_t steps = 0, dirty = 0;
	for (int k = 0; k < 2; k++) {
		lab_run *r = open_run(params[k], 3);
		CHECK(r != NULL);
		if (!r)
			return;
		tort *c = r->ctx;
		int done = 0;
		while (!done && lab_step(r, 1, &done) == 0) {
			dfs *df = vio_dfs(c->fs);
			if (!df)
				continue;
			dinode **maybe = NULL;
			int n = 0;
			CHECK_EQ(vd_maybe_unclean(df, &maybe, &n), 0);
			for (int i = 1; i < n; i++)
				CHECK(maybe[i - 1]->slot < maybe[i]->slot);
			dinode *const *all = dfs_inodes(df);
			int j = 0;
			for (int i = 0; i < df->ninodes; i++) {
				dinode *d = all[i];
				if (!d->inode || vd_clean(d))
					continue;
				dirty++;
				while (j < n && maybe[j] != d)
					j++;
				CHECK(j < n);
			}
			free(maybe);
			steps++;
		}
		CHECK_EQ(metric(r, "check_failures"), 0);
		lab_close(r);
	}
	CHECK(dirty > 1000); /* there was something to find */
	printf("sync candidates: %llu steps, %llu dirty inodes each found\n",
	       (unsigned long long)steps, (unsigned long long)dirty);
}

int main(void)
{
	test_alloc_next_fit();
	test_sync_candidates();
	test_power_cut_new_ancestor();
	test_power_cut_fsync_in_flight();
	test_power_cut_rename_fsyncing_dir();
	test_power_cut_partial();
	test_power_cut();
	test_params();
	test_check_log_and_handles();
	test_check_qgroup_recount();
	test_qgroup_fresh();
	test_check_send();
	test_injected_key();
	test_injected_qgroup();
	test_repeatable();
	test_soak("files", 8, 3000, 4);
	test_soak("all", 8, 3000, 4);
	/* the edges: only the top-level subvolume (its mkfs root leaf must be
	 * accounted), and every slot taken at the start */
	test_soak("all", 4, 1500, 1);
	test_soak("all", 2, 1500, 64);
	T_DONE();
}
