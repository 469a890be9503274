/* test_send_trunc.c - the truncate receive replays, on the real data path
 * (vio_setsize): patch 003's same-size switch, the shrink that waits for
 * its tail page in both kernels, inline tails, the aligned control, and
 * a truncate that finds an asynchronous writeback in flight. */
#include "t.h"
#include "bdev.h"
#include "btree.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"
#include "vfs_io.h"

#define K 1024ull

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	struct btrfs_root *root;
	struct inode *in;
	int before;            /* the kernel before patch 003 */
	int state;             /* the async scenario's step */
	vio_trunc_info ti;
	uint64_t writes0, dev_writes;
	simtime_t t_trunc;     /* time the truncate took */
	void (*body)(struct env *e, task *t);
} env;

static void env_open(env *e, int before)
{
	memset(e, 0, sizeof(*e));
	e->s = sim_create(7, 0);
	CHECK_EQ(bdev_create(e->s, "consumer-ssd", &e->dev), 0);
	CHECK_EQ(fs_mount(e->s, e->dev, NULL, &e->fs), 0);
	CHECK_EQ(fs_patch_on(e->fs, P_003_TRUNC_SKIP_SAME_SIZE_WB), 1); /* default: after */
	patch_set(&e->fs->opts.patches, P_003_TRUNC_SKIP_SAME_SIZE_WB, !before);
	e->before = before;
	CHECK_EQ(vio_attach(e->fs, NULL, NULL), 0);
	e->root = fs_root_lookup(e->fs, 5);
}

static void env_close(env *e)
{
	vio_detach(e->fs);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

static int step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	e->body(e, t);
	return TASK_DONE;
}

static void run(env *e, void (*body)(env *, task *))
{
	e->body = body;
	task_spawn(e->s, "body", step, e, 0);
	sim_run(e->s, 10000000, SIMTIME_MAX);
	CHECK_EQ(fs_commit(e->fs, NULL), 0);
	e->fs->check_verbose = 1;
	CHECK_EQ(check_fs(e->fs), 0);
}

/* The file extent items of the file as [off, len] pairs; the count. */
static int items(env *e, uint64_t (*out)[2], int *types)
{
	fe_iter it;
	fe_info fe;
	int n = 0;
	*types = 0;
	e->fs->accounting_off++;
	int r = fe_iter_first(e->fs, NULL, e->in, 0, &it, &fe);
	while (r == 0) {
		if (n < 8) {
			out[n][0] = fe.file_off;
			out[n][1] = fe.num_bytes;
		}
		*types |= 1 << fe.type;
		n++;
		r = fe_iter_next(e->fs, &it, &fe);
	}
	fe_iter_end(&it);
	e->fs->accounting_off--;
	return n;
}

/* Whether the inode has an orphan item. */
static int has_orphan(env *e)
{
	bt_key k = bt_mkkey(BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, e->in->ino);
	bt_path p;
	bt_path_init(&p, &e->root->tree, NULL);
	e->fs->accounting_off++;
	int r = bt_search(&e->root->tree, &p, &k, 0, 0);
	e->fs->accounting_off--;
	bt_path_release(&p);
	return r == 0;
}

/* Write `size` bytes at 0 (dirty, not written back), truncate to `to`,
 * recording what the truncate did and the device writes it made. */
static void write_truncate(env *e, task *t, uint64_t size, uint64_t to)
{
	CHECK_EQ(vfs_create(e->fs, t, e->root, 256, "f", 0644, &e->in), 0);
	CHECK_EQ(vio_write(e->fs, t, e->in, 0, size), 0);
	e->writes0 = bdev_get_stats(e->dev)->writes;
	simtime_t t0 = t->clock;
	CHECK_EQ(vio_setsize(e->fs, t, e->in, to, &e->ti), 0);
	e->t_trunc = t->clock - t0;
	e->dev_writes = bdev_get_stats(e->dev)->writes - e->writes0;
	CHECK_EQ(e->in->size, to);
	CHECK(!has_orphan(e));
}

/* The seed's file: 5000 bytes, truncated to its own size. */
static void body_same_5000(env *e, task *t)
{
	write_truncate(e, t, 5000, 5000);
	dinode *d = vio_dinode(e->fs, e->in);
	uint64_t ex[8][2];
	int types;
	CHECK_EQ(e->ti.shrink, 1);
	CHECK_EQ(e->ti.same_size, 1);
	if (e->before) {
		/* the tail page went to disk as its own extent, synchronously;
		 * the head page is still dirty */
		CHECK_EQ(e->ti.skipped, 0);
		CHECK_EQ(e->ti.sync_extents, 1);
		CHECK_EQ(e->ti.sync_bios, 1);
		CHECK_EQ(e->ti.sync_bytes, 4 * K);
		CHECK_EQ(e->dev_writes, 1);
		CHECK(e->ti.sync_ns > 0 && e->t_trunc >= e->ti.sync_ns);
		CHECK_EQ(items(e, ex, &types), 1);
		CHECK_EQ(ex[0][0], 4 * K);
		CHECK_EQ(ex[0][1], 4 * K);
		CHECK_EQ(d->pc.dirty, 1);
	} else {
		CHECK_EQ(e->ti.skipped, 1);
		CHECK_EQ(e->ti.sync_extents, 0);
		CHECK_EQ(e->ti.sync_ns, 0);
		CHECK_EQ(e->dev_writes, 0);
		CHECK_EQ(items(e, ex, &types), 0);
		CHECK_EQ(d->pc.dirty, 2);
	}
	/* the sync after: before, a second extent for the head; after, one */
	CHECK_EQ(vio_fsync(e->fs, t, e->in), 0);
	CHECK_EQ(items(e, ex, &types), e->before ? 2 : 1);
	CHECK_EQ(ex[0][0], 0);
	CHECK_EQ(ex[0][1], e->before ? 4 * K : 8 * K);
	CHECK_EQ(e->in->nbytes, 8 * K);
}

/* The control: an aligned size has an empty wait range in both kernels. */
static void body_same_aligned(env *e, task *t)
{
	write_truncate(e, t, 8 * K, 8 * K);
	CHECK_EQ(e->ti.same_size, 1);
	CHECK_EQ(e->ti.skipped, !e->before);
	CHECK_EQ(e->ti.sync_extents, 0);
	CHECK_EQ(e->dev_writes, 0);
	CHECK_EQ(vio_dinode(e->fs, e->in)->pc.dirty, 2);
}

/* A shrink waits for its new tail page in both kernels: the pages past
 * the new end go, the page holding it is written back alone. */
static void body_shrink(env *e, task *t)
{
	write_truncate(e, t, 100 * K, 10000);
	dinode *d = vio_dinode(e->fs, e->in);
	uint64_t ex[8][2];
	int types;
	CHECK_EQ(e->ti.shrink, 1);
	CHECK_EQ(e->ti.same_size, 0);
	CHECK_EQ(e->ti.skipped, 0);
	CHECK_EQ(e->ti.sync_bios, 1);
	CHECK_EQ(e->ti.sync_bytes, 4 * K);
	CHECK_EQ(e->dev_writes, 1);
	CHECK_EQ(d->pc.dirty, 2);
	CHECK_EQ(d->delalloc_bytes, 8 * K);
	CHECK_EQ(items(e, ex, &types), 1);
	CHECK_EQ(ex[0][0], 8 * K);
	CHECK_EQ(vio_fsync(e->fs, t, e->in), 0);
	CHECK_EQ(items(e, ex, &types), 2);
	CHECK_EQ(ex[0][0], 0);
	CHECK_EQ(ex[0][1], 8 * K);
	CHECK_EQ(e->in->nbytes, 12 * K);
	/* growing is not the truncate branch: no wait, no orphan */
	CHECK_EQ(vio_setsize(e->fs, t, e->in, 64 * K, &e->ti), 0);
	CHECK_EQ(e->ti.shrink, 0);
	CHECK_EQ(e->ti.sync_extents, 0);
	CHECK(!has_orphan(e));
}

/* A tiny file: before, the wait makes its only page an inline extent
 * (no bio); after, nothing happens until the sync, which inlines it. */
static void body_inline(env *e, task *t)
{
	write_truncate(e, t, 100, 100);
	uint64_t ex[8][2];
	int types;
	CHECK_EQ(e->ti.sync_bios, 0);
	CHECK_EQ(e->dev_writes, 0);
	CHECK_EQ(e->ti.sync_inline, e->before ? 1 : 0);
	CHECK_EQ(items(e, ex, &types), e->before ? 1 : 0);
	CHECK_EQ(vio_fsync(e->fs, t, e->in), 0);
	CHECK_EQ(items(e, ex, &types), 1);
	CHECK_EQ(types, 1 << FE_INLINE);
}

/* An asynchronous writeback of the file is in flight: the truncate parks
 * without doing anything and does its work once woken. */
static int step_async(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	if (e->state == 0) {
		CHECK_EQ(vfs_create(e->fs, t, e->root, 256, "f", 0644, &e->in), 0);
		CHECK_EQ(vio_write(e->fs, t, e->in, 0, 64 * K), 0);
		vd_writeback_start(vio_dinode(e->fs, e->in), 1);
		CHECK_EQ(vio_write(e->fs, t, e->in, 64 * K, 1000), 0);
		e->state = 1;
		return TASK_RUN; /* let the writeback task start */
	}
	if (e->state == 1) {
		CHECK_EQ(vio_setsize(e->fs, t, e->in, 30000, &e->ti), 1);
		CHECK_EQ(e->in->size, 64 * K + 1000);
		CHECK_EQ(e->ti.shrink, 0);
		e->state = 2;
		return TASK_BLOCKED;
	}
	CHECK_EQ(vio_setsize(e->fs, t, e->in, 30000, &e->ti), 0);
	CHECK_EQ(e->in->size, 30000);
	CHECK_EQ(e->ti.shrink, 1);
	CHECK_EQ(e->ti.sync_extents, 0); /* the tail was written back already */
	CHECK(!has_orphan(e));
	e->state = 3;
	return TASK_DONE;
}

static void test_async(void)
{
	env e;
	env_open(&e, 1);
	vio_dfs(e.fs)->sync_io = 0;
	task_spawn(e.s, "body", step_async, &e, 0);
	sim_run(e.s, 10000000, SIMTIME_MAX);
	CHECK_EQ(e.state, 3);
	CHECK_EQ(fs_commit(e.fs, NULL), 0);
	CHECK_EQ(check_fs(e.fs), 0);
	env_close(&e);
}

/* Bad input is refused, not crashed on. */
static void test_errors(void)
{
	env e;
	env_open(&e, 0);
	struct inode *dir;
	CHECK_EQ(vfs_mkdir(e.fs, NULL, e.root, 256, "d", &dir), 0);
	CHECK_EQ(vio_setsize(e.fs, NULL, dir, 0, NULL), LAB_EINVAL);
	CHECK_EQ(vio_setsize(NULL, NULL, dir, 0, NULL), LAB_ESTATE);
	CHECK_EQ(vio_setsize(e.fs, NULL, NULL, 0, NULL), LAB_EINVAL);
	env_close(&e);
}

int main(void)
{
	void (*bodies[])(env *, task *) = {
		body_same_5000, body_same_aligned, body_shrink, body_inline,
	};
	simtime_t took[2][4];
	for (int b = 0; b < 4; b++)
		for (int before = 0; before <= 1; before++) {
			env e;
			env_open(&e, before);
			run(&e, bodies[b]);
			took[before][b] = e.t_trunc;
			env_close(&e);
		}
	/* the seed's truncate waits a device write before the patch */
	fprintf(stderr, "same-size truncate of 5000 bytes: before %.1f us, after %.1f us\n",
		took[1][0] / 1e3, took[0][0] / 1e3);
	CHECK(took[1][0] > took[0][0] + 10000);
	/* the aligned control costs the same in both kernels */
	CHECK_EQ(took[1][1], took[0][1]);
	test_async();
	test_errors();
	T_DONE();
}
