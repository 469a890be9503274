/*
 * test_writeback_wait.c - the waits of space reclaim on the device, below
 * the reclaim state machine: btrfs_wait_ordered_roots(nr) waits for the
 * oldest nr ordered extents in flight (vd_wait_ordered); a bio sleeps for
 * a block-layer request when a SATA-depth queue is full
 * (bdev_tag_free_at); writeback_inodes_sb_nr's work runs on the data
 * path's own flusher, ahead of its kupdate writeback (dfs_queue_work); and
 * an inode's writeback state freed once it is clean and idle
 * (data_opts.release_idle_x) leaves reads working.
 */
#include <stdlib.h>

#include "t.h"
#include "bdev.h"
#include "fs.h"
#include "lab.h"
#include "sim.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_data.h"
#include "vfs_io.h"

#define NF 8

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	dfs *df;
	struct inode *in[NF];
	dinode *d[NF];
	int phase;
	uint64_t done0, done1, inflight0;
	int parked;
	int oe_left[NF];
} env;

static void env_open(env *e, const char *device, int release)
{
	memset(e, 0, sizeof *e);
	e->s = sim_create(3, 0);
	CHECK_EQ(bdev_create(e->s, device, &e->dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.dev_bytes = 8ull << 30;
	CHECK_EQ(fs_mount(e->s, e->dev, &o, &e->fs), 0);
	CHECK_EQ(trans_init(&e->tm, e->fs), 0);
	data_opts d;
	vio_opts_default(&d);
	d.release_idle_x = release;
	CHECK_EQ(vio_attach(e->fs, &d, &e->tm), 0);
	e->df = vio_dfs(e->fs);
	e->df->sync_io = 0;
	struct btrfs_root *root = fs_root_lookup(e->fs, BTRFS_FS_TREE_OBJECTID);
	for (int i = 0; i < NF; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%d", i);
		CHECK_EQ(vfs_create(e->fs, NULL, root, BTRFS_FIRST_FREE_OBJECTID, name, 0644, &e->in[i]),
			 0);
		e->d[i] = vio_dinode(e->fs, e->in[i]);
	}
}

static void env_close(env *e)
{
	vio_detach(e->fs);
	trans_destroy(&e->tm);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

/* Write the files (64 KiB each, not inline), start their writeback one
 * after another, then wait for the oldest 3 ordered extents. */
static int waiter_step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	switch (e->phase) {
	case 0:
		for (int i = 0; i < NF; i++)
			CHECK_EQ(vio_write(e->fs, t, e->in[i], 0, 65536), 0);
		for (int i = 0; i < NF; i++)
			CHECK_EQ(vd_writeback_nr(e->d[i], t, INT64_MAX, 0), 16);
		e->inflight0 = e->df->ordered_inflight;
		e->done0 = e->df->ordered_done;
		CHECK_EQ(e->inflight0, NF);
		e->phase = 1;
		if (vd_wait_ordered(e->df, t, 3)) {
			e->parked = 1;
			return TASK_BLOCKED;
		}
		return TASK_RUN;
	case 1:
		/* woken once the three oldest completed (FIFO on one device) */
		e->done1 = e->df->ordered_done;
		for (int i = 0; i < NF; i++)
			e->oe_left[i] = (int)vd_oe_n(e->d[i]);
		e->phase = 2;
		/* more than are in flight: all of them */
		if (vd_wait_ordered(e->df, t, 100))
			return TASK_BLOCKED;
		return TASK_RUN;
	case 2:
		CHECK_EQ(e->df->ordered_inflight, 0);
		/* none in flight: no wait */
		CHECK_EQ(vd_wait_ordered(e->df, t, 5), 0);
		e->phase = 3;
		return TASK_DONE;
	}
	return TASK_DONE;
}

static void test_wait_ordered(void)
{
	env e;
	env_open(&e, "hdd", 0);
	CHECK(task_spawn(e.s, "reclaim", waiter_step, &e, 0) != NULL);
	sim_run(e.s, 1000000, SIMTIME_MAX);
	CHECK_EQ(e.phase, 3);
	CHECK(e.parked);
	CHECK(e.done1 - e.done0 >= 3);
	CHECK(e.done1 - e.done0 < NF); /* not all of them */
	for (int i = 0; i < 3; i++)
		CHECK_EQ(e.oe_left[i], 0); /* the oldest three are done */
	CHECK(e.oe_left[NF - 1] > 0);     /* the newest is not */
	env_close(&e);
}

/* A disk has 64 block-layer requests (2 x NCQ 32 behind mq-deadline): a
 * 65th bio waits for the first completion; an NVMe drive never makes one
 * wait. */
static void test_tags(void)
{
	sim *s = sim_create(1, 0);
	bdev *hdd, *nvme;
	CHECK_EQ(bdev_create(s, "hdd", &hdd), 0);
	CHECK_EQ(bdev_create(s, "nvme-dc", &nvme), 0);
	simtime_t first = SIMTIME_MAX;
	for (int i = 0; i < 64; i++) {
		CHECK_EQ(bdev_tag_free_at(hdd, 0), 0);
		simtime_t c = bdev_io(hdd, BIO_WRITE, (uint64_t)(i * 7919 % 1000) << 24, 4096, 0);
		if (c < first)
			first = c;
		bdev_io(nvme, BIO_WRITE, (uint64_t)i << 24, 4096, 0);
	}
	CHECK_EQ(bdev_tag_free_at(hdd, 0), first);
	CHECK(first > 1000000); /* milliseconds of seeks */
	CHECK_EQ(bdev_tag_free_at(nvme, 0), 0);
	/* once the first completes, a request is free again */
	CHECK_EQ(bdev_tag_free_at(hdd, first), first);
	bdev_destroy(hdd);
	bdev_destroy(nvme);
	sim_destroy(s);
}

/* The flusher: a work queued while its periodic writeback is pending runs
 * first; it writes the inodes dirtied before it started, oldest first,
 * each a chunk, until its pages are used up. */
typedef struct wk {
	dfs_work w;
	int done;
	simtime_t at;
	dinode *order[NF];
	int n;
} wk;

static void wk_inode(void *ctx, dinode *d, uint64_t pages, simtime_t at)
{
	wk *k = ctx;
	(void)at;
	CHECK(pages > 0);
	if (k->n < NF)
		k->order[k->n++] = d;
}

static void wk_done(void *ctx, dfs_work *w, simtime_t at)
{
	wk *k = ctx;
	(void)w;
	k->done = 1;
	k->at = at;
}

static int writer_step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	/* one file every millisecond: each dirtied later than the one before */
	if (e->phase < NF) {
		CHECK_EQ(vio_write(e->fs, t, e->in[e->phase], 0, 8192), 0);
		e->phase++;
		task_wait_until(t, t->clock + NS_PER_MS);
		return TASK_RUN;
	}
	return TASK_DONE;
}

static void test_flusher_work(void)
{
	env e;
	env_open(&e, "nvme-dc", 0);
	CHECK(task_spawn(e.s, "writer", writer_step, &e, 0) != NULL);
	sim_run(e.s, 100000, 20 * NS_PER_MS);
	CHECK_EQ(e.phase, NF);
	wk k;
	memset(&k, 0, sizeof k);
	k.w.nr_pages = 5; /* three 2-page files: the third goes over */
	k.w.inode_done = wk_inode;
	k.w.done = wk_done;
	k.w.ctx = &k;
	dfs_queue_work(e.df, &k.w, 20 * NS_PER_MS);
	sim_run(e.s, 100000, 40 * NS_PER_MS);
	CHECK(k.done);
	CHECK_EQ(k.w.pages, 6);
	CHECK_EQ(k.w.inodes, 3);
	CHECK(k.n == 3 && k.order[0] == e.d[0] && k.order[1] == e.d[1] && k.order[2] == e.d[2]);
	CHECK_EQ(e.d[3]->pc.dirty, 2); /* the rest stay dirty */
	CHECK(e.df->work_head == NULL && e.df->work_cur == NULL);
	env_close(&e);
}

/* release_idle_x: once written back and idle, the inode keeps no
 * writeback state, and reading it back still works (the extent maps were
 * a cache of the fs tree). */
static int rw_step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	if (e->phase == 0) {
		CHECK_EQ(vio_write(e->fs, t, e->in[0], 0, 65536), 0);
		CHECK_EQ(vd_writeback_nr(e->d[0], t, INT64_MAX, 0), 16);
		CHECK(e->d[0]->x != NULL); /* bios in flight */
		e->phase = 1;
		task_wait_until(t, t->clock + 50 * NS_PER_MS);
		return TASK_RUN;
	}
	if (e->phase == 1) {
		CHECK(e->d[0]->x == NULL);
		uint64_t got = 0;
		CHECK_EQ(vio_read(e->fs, t, e->in[0], 0, 65536, &got), 0);
		CHECK_EQ(got, 65536);
		e->phase = 2;
	}
	return TASK_DONE;
}

static void test_release_idle_x(void)
{
	env e;
	env_open(&e, "nvme-dc", 1);
	CHECK(task_spawn(e.s, "rw", rw_step, &e, 0) != NULL);
	sim_run(e.s, 1000000, SIMTIME_MAX);
	CHECK_EQ(e.phase, 2);
	env_close(&e);
}

int main(void)
{
	test_wait_ordered();
	test_tags();
	test_flusher_work();
	test_release_idle_x();
	T_DONE();
}
