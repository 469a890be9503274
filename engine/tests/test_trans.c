/*
 * test_trans.c - handles, should-end, the commit's phases, waiting for
 * writers, and the transaction kthread's periodic commit.
 */
#include <stdlib.h>

#include "bdev.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "qgroup.h"
#include "t.h"
#include "trans.h"
#include "vfs.h"

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	qgroup_ctx q;
} env;

static void env_up(env *e, const char *dev)
{
	memset(e, 0, sizeof *e);
	e->s = sim_create(3, 0);
	CHECK_EQ(bdev_create(e->s, dev, &e->dev), 0);
	CHECK_EQ(fs_mount(e->s, e->dev, NULL, &e->fs), 0);
	CHECK_EQ(trans_init(&e->tm, e->fs), 0);
	CHECK_EQ(qgroup_init(&e->q, e->fs, &e->tm), 0);
}

static void env_down(env *e)
{
	qgroup_destroy(&e->q);
	trans_destroy(&e->tm);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

/* A commit from a task: phases recorded in order, each >= 0, the write
 * phase takes device time, transid advances, the counter is consumed. */
typedef struct cctx {
	env *e;
	int step;
	int rc;
} cctx;

static int commit_task(sim *s, task *t)
{
	cctx *c = t->ctx;
	env *e = c->e;
	struct btrfs_root *top = fs_root_lookup(e->fs, BTRFS_FS_TREE_OBJECTID);
	trans_handle h;
	int rc = trans_start(&e->tm, t, &h);
	if (rc)
		return c->rc = rc, TASK_DONE;
	char name[32];
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "f%d", i);
		rc = vfs_create(e->fs, t, top, BTRFS_FIRST_FREE_OBJECTID, name, 0644, NULL);
		if (rc)
			return c->rc = rc, TASK_DONE;
	}
	c->rc = trans_commit(&h, TCOMMIT_EXPLICIT);
	return TASK_DONE;
}

static void test_commit_phases(void)
{
	env e;
	env_up(&e, "nvme-dc");
	CHECK_EQ(qgroup_enable(&e.q, NULL), 0);
	CHECK_EQ(trans_commit_now(&e.tm, NULL, TCOMMIT_EXPLICIT), 0);
	uint64_t tid = e.fs->transid;
	int n0 = e.tm.ncommits;
	cctx c = { &e, 0, -99 };
	CHECK(task_spawn(e.s, "committer", commit_task, &c, 0) != NULL);
	sim_run(e.s, 100000, SIMTIME_MAX);
	CHECK_EQ(c.rc, 0);
	CHECK_EQ(e.tm.ncommits, n0 + 1);
	const commit_rec *m = &e.tm.commits[n0];
	CHECK_EQ(m->transid, tid);
	CHECK_EQ(e.fs->transid, tid + 1);
	CHECK(m->end > m->start);
	uint64_t sum = 0;
	for (int p = 0; p < TPH_MAX; p++)
		sum += m->ph_ns[p];
	CHECK_EQ(sum, m->end - m->start);
	CHECK(m->ph_ns[TPH_WRITE] > 0);  /* blocks + superblock + flush */
	CHECK(m->ph_ns[TPH_QGROUP] > 0); /* the COWed fs-tree blocks' records */
	CHECK(m->records > 0);
	CHECK(m->blocks > 0);
	CHECK_EQ(m->ph_ns[TPH_WAIT], 0);
	CHECK(e.tm.running == NULL);
	env_down(&e);
}

/* should_end: heads piling up past the throttle, or a waiting commit. */
static void test_should_end(void)
{
	env e;
	env_up(&e, "ideal");
	trans_handle h;
	CHECK_EQ(trans_start(&e.tm, NULL, &h), 0);
	CHECK(!trans_should_end(&h));
	for (uint32_t i = 0; i < e.tm.dref_throttle_heads; i++)
		dref_add(&h.trans->delayed_refs, (1ull << 30) + i * 4096ull, 0, -1);
	CHECK(trans_should_end(&h));
	/* end with throttle runs them (btrfs_end_transaction_throttle) */
	CHECK_EQ(trans_end(&h, 1), 0);
	CHECK_EQ(e.tm.throttle_runs, 1);
	CHECK_EQ(dref_heads_pending(&e.tm.running->delayed_refs), 0);
	CHECK_EQ(trans_start(&e.tm, NULL, &h), 0);
	CHECK(!trans_should_end(&h));
	CHECK_EQ(trans_end(&h, 0), 0);
	env_down(&e);
}

/* A committer waits for another writer; the writer sees should_end. */
typedef struct wctx {
	env *e;
	trans_handle h;
	int state;
	simtime_t saw_should_end;
	simtime_t commit_done;
	int rc;
} wctx;

static int writer_task(sim *s, task *t)
{
	wctx *w = t->ctx;
	if (w->state == 0) {
		CHECK_EQ(trans_start(&w->e->tm, t, &w->h), 0);
		w->state = 1;
		task_cpu(s, t, 1000000); /* 1 ms inside the transaction */
		return TASK_RUN;
	}
	if (trans_should_end(&w->h)) {
		w->saw_should_end = t->clock;
		trans_end(&w->h, 0);
		return TASK_DONE;
	}
	task_cpu(s, t, 1000000);
	return TASK_RUN;
}

static int committer_task(sim *s, task *t)
{
	wctx *w = t->ctx;
	if (w->state == 0) {
		int rc = trans_start(&w->e->tm, t, &w->h);
		CHECK_EQ(rc, 0);
		w->state = 1;
	}
	int rc = trans_commit(&w->h, TCOMMIT_EXPLICIT);
	if (rc == TRANS_WAIT)
		return TASK_BLOCKED;
	w->rc = rc;
	w->commit_done = t->clock;
	return TASK_DONE;
}

static void test_wait_writers(void)
{
	env e;
	env_up(&e, "ideal");
	wctx wr, cm;
	memset(&wr, 0, sizeof wr);
	memset(&cm, 0, sizeof cm);
	wr.e = cm.e = &e;
	task_spawn(e.s, "writer", writer_task, &wr, 0);
	task_spawn(e.s, "committer", committer_task, &cm, 500000);
	sim_run(e.s, 10000, SIMTIME_MAX);
	CHECK_EQ(cm.rc, 0);
	CHECK(wr.saw_should_end > 0);
	CHECK(cm.commit_done >= wr.saw_should_end);
	CHECK_EQ(e.tm.ncommits, 1);
	CHECK(e.tm.commits[0].ph_ns[TPH_WAIT] > 0);
	env_down(&e);
}

/* The kthread commits a transaction once it is commit_interval old. */
static int dirtier_task(sim *s, task *t)
{
	env *e = t->ctx;
	struct btrfs_root *top = fs_root_lookup(e->fs, BTRFS_FS_TREE_OBJECTID);
	vfs_create(e->fs, t, top, BTRFS_FIRST_FREE_OBJECTID, "x", 0644, NULL);
	return TASK_DONE;
}

static void stop_kthread(sim *s, void *arg)
{
	((trans_mgr *)arg)->kthread_stop = 1;
}

static void test_kthread(void)
{
	env e;
	env_up(&e, "ideal");
	e.tm.commit_interval = 30ull * NS_PER_S;
	CHECK_EQ(trans_commit_now(&e.tm, NULL, TCOMMIT_EXPLICIT), 0);
	int n0 = e.tm.ncommits;
	task_spawn(e.s, "dirtier", dirtier_task, &e, 2 * NS_PER_S);
	CHECK_EQ(trans_kthread_start(&e.tm, 0), 0);
	sim_at(e.s, 100 * NS_PER_S, stop_kthread, &e.tm);
	sim_run(e.s, 100000, SIMTIME_MAX);
	CHECK_EQ(e.tm.ncommits, n0 + 1);
	const commit_rec *m = &e.tm.commits[n0];
	CHECK_EQ(m->reason, TCOMMIT_KTHREAD);
	/* started at 2 s, checked every 5 s: committed at the first check
	 * at or after 32 s */
	CHECK(m->start >= 32 * NS_PER_S && m->start <= 37 * NS_PER_S);
	env_down(&e);
}

int main(void)
{
	test_commit_phases();
	test_should_end();
	test_wait_writers();
	test_kthread();
	T_DONE();
}
