/* test_vfs_io.c - the data path on the substrate (vfs_io.h): files made
 * with vfs.h are written, fsynced, committed, remounted, read, lseeked and
 * truncated through the data path; ordered-extent completion puts the file
 * extent items, extent refs and checksums in the real trees, and the full
 * checker (with the data path's registered check) stays at 0. */
#include "t.h"
#include "bdev.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_io.h"

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	struct btrfs_root *root;
	void (*body)(struct env *e, task *t);
	simtime_t end;
} env;

static void env_open(env *e, uint64_t seed)
{
	memset(e, 0, sizeof(*e));
	e->s = sim_create(seed, 0);
	CHECK_EQ(bdev_create(e->s, "nvme-dc", &e->dev), 0);
	CHECK_EQ(fs_mount(e->s, e->dev, NULL, &e->fs), 0);
	CHECK_EQ(trans_init(&e->tm, e->fs), 0);
	CHECK_EQ(vio_attach(e->fs, NULL, &e->tm), 0);
	CHECK_EQ(vio_attach(e->fs, NULL, &e->tm), LAB_ESTATE);
	e->root = fs_root_lookup(e->fs, 5);
}

static void env_close(env *e)
{
	vio_detach(e->fs);
	trans_destroy(&e->tm);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

/* The scenario runs inside one task step, as a workload's op would. */
static int step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	e->body(e, t);
	e->end = t->clock;
	return TASK_DONE;
}

static void run(env *e, void (*body)(env *, task *))
{
	e->body = body;
	CHECK(task_spawn(e->s, "workload", step, e, 0) != NULL);
	sim_run(e->s, UINT64_MAX, SIMTIME_MAX);
}

static int fe_count(fs_info *fs, struct inode *in, uint64_t *bytes, int *types)
{
	fe_iter it;
	fe_info fe;
	int n = 0;
	*bytes = 0;
	*types = 0;
	for (int r = fe_iter_first(fs, NULL, in, 0, &it, &fe); r == 0; r = fe_iter_next(fs, &it, &fe)) {
		n++;
		*bytes += fe.num_bytes;
		*types |= 1 << fe.type;
	}
	fe_iter_end(&it);
	return n;
}

static void commit_check(env *e, task *t)
{
	CHECK_EQ(trans_commit_now(&e->tm, t, TCOMMIT_EXPLICIT), 0);
	int f = check_fs(e->fs);
	CHECK_EQ(f, 0);
	if (f)
		fprintf(stderr, "check: %s\n", check_last_error(e->fs));
}

static uint64_t seek(env *e, task *t, struct inode *in, uint64_t off, int whence)
{
	uint64_t r = UINT64_MAX;
	int rc = vio_lseek(e->fs, t, in, off, whence, &r);
	if (rc == LSEEK_ENXIO)
		return UINT64_MAX - 1;
	CHECK_EQ(rc, 0);
	return r;
}

#define K 1024ull

/* write -> (delalloc) lseek -> fsync -> items -> commit -> remount -> read */
static void body_basic(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in;
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "f", 0644, &in), 0);
	uint64_t csum0 = fs_csum_count(fs, 0, 1ull << 40);
	CHECK_EQ(vio_write(fs, t, in, 0, 64 * K), 0);
	CHECK_EQ(vio_write(fs, t, in, 1024 * K, 8 * K), 0);
	CHECK_EQ(in->size, 1032 * K);
	dinode *d = vio_dinode(fs, in);
	CHECK(d != NULL);
	CHECK_EQ(d->delalloc_bytes, 72 * K);
	uint64_t bytes;
	int types;
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 0); /* nothing in the tree yet */
	/* lseek answers from the delalloc ranges */
	CHECK_EQ(seek(e, t, in, 0, LSEEK_DATA), 0);
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 64 * K);
	CHECK_EQ(seek(e, t, in, 64 * K, LSEEK_DATA), 1024 * K);
	CHECK_EQ(seek(e, t, in, 1024 * K, LSEEK_HOLE), 1032 * K);
	CHECK_EQ(seek(e, t, in, 5, LSEEK_SET), 5);
	uint64_t r;
	CHECK_EQ(vio_lseek(fs, t, in, 0, 7, &r), LAB_EINVAL);

	simtime_t t0 = t->clock;
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	CHECK(t->clock > t0); /* waited for the device */
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 2);
	CHECK_EQ(bytes, 72 * K);
	CHECK_EQ(types, 1 << FE_REG);
	CHECK_EQ(in->nbytes, 72 * K);
	CHECK_EQ(d->delalloc_bytes, 0);
	CHECK_EQ(vd_oe_n(d), 0);
	CHECK_EQ(fs_csum_count(fs, 0, 1ull << 40) - csum0, 72 * K / SECTORSIZE);
	CHECK_EQ(vio_fsync(fs, t, in), 0); /* clean: nothing to do */
	commit_check(e, t);

	/* lseek now walks the tree's items */
	dfs *df = vio_dfs(fs);
	uint64_t v0 = df->fst_nodes_visited;
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 64 * K);
	CHECK_EQ(seek(e, t, in, 64 * K, LSEEK_DATA), 1024 * K);
	CHECK_EQ(seek(e, t, in, 1028 * K, LSEEK_DATA), 1028 * K);
	CHECK_EQ(seek(e, t, in, 1030 * K, LSEEK_HOLE), 1032 * K);
	CHECK_EQ(seek(e, t, in, 2000 * K, LSEEK_DATA), UINT64_MAX - 1); /* ENXIO */
	CHECK(df->fst_nodes_visited > v0);

	/* remount: reads come from the device, tree blocks too */
	CHECK_EQ(vio_sync(fs, t), 0);
	commit_check(e, t);
	CHECK_EQ(vio_remount(fs, t), 0);
	CHECK_EQ(d->pc.present, 0);
	uint64_t m0 = df->metadata_reads, r0 = df->data_reads, rb0 = df->data_read_bytes;
	uint64_t got = 0;
	CHECK_EQ(vio_read(fs, t, in, 0, 4 * K, &got), 0);
	CHECK_EQ(got, 4 * K);
	CHECK(df->metadata_reads > m0);   /* fs tree + csum tree blocks */
	CHECK(df->data_reads > r0);
	uint64_t m1 = df->metadata_reads;
	CHECK_EQ(vio_read(fs, t, in, 0, 2000 * K, &got), 0);
	CHECK_EQ(got, 1032 * K);          /* clipped at EOF */
	CHECK_EQ(df->metadata_reads, m1); /* those blocks are warm now */
	/* only the 72 KiB of data went to the device; holes were zeroed */
	CHECK_EQ(df->data_read_bytes - rb0, 72 * K);
	CHECK_EQ(d->pc.dirty, 0);
}

/* truncate down to an unaligned size: the items past it go, the crossing
 * one is trimmed and its last block kept as it is (a clean tail page is
 * not written again); the grow after it rewrites that page zeroed */
static void body_truncate(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in;
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "t", 0644, &in), 0);
	CHECK_EQ(vio_write(fs, t, in, 0, 64 * K), 0);
	CHECK_EQ(vio_write(fs, t, in, 128 * K, 64 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	commit_check(e, t);
	CHECK_EQ(vio_truncate(fs, t, in, 32 * K + 100), 0);
	CHECK_EQ(in->size, 32 * K + 100);
	uint64_t bytes;
	int types;
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 1);
	CHECK_EQ(bytes, 36 * K);
	dinode *d = vio_dinode(fs, in);
	CHECK_EQ(d->pc.dirty, 0); /* the page at 32 KiB was clean: kept */
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 1);
	CHECK_EQ(in->nbytes, 36 * K);
	commit_check(e, t);
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 32 * K + 100);
	/* growing moves i_size (a hole) and rewrites the partial old last
	 * page (btrfs_cont_expand): [0,32K) + a new [32K,36K) */
	CHECK_EQ(vio_truncate(fs, t, in, 1024 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 2);
	CHECK_EQ(bytes, 36 * K);
	commit_check(e, t);
	CHECK_EQ(seek(e, t, in, 40 * K, LSEEK_DATA), UINT64_MAX - 1);
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 36 * K);
	vfs_stat_info st;
	CHECK_EQ(vfs_stat(fs, t, e->root, in->ino, &st), 0);
	CHECK_EQ(st.size, 1024 * K);
	CHECK_EQ(st.nbytes, 36 * K);
}

/* a small file is stored inline; growing it turns page 0 regular */
static void body_inline(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in;
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "small", 0644, &in), 0);
	CHECK_EQ(vio_write(fs, t, in, 0, 100), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	uint64_t bytes;
	int types;
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 1);
	CHECK_EQ(types, 1 << FE_INLINE);
	CHECK_EQ(bytes, 100);
	CHECK_EQ(in->nbytes, 100);
	commit_check(e, t);
	CHECK_EQ(seek(e, t, in, 0, LSEEK_DATA), 0);
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 100);
	/* read it back cold: no data bio, the leaf holds the bytes */
	CHECK_EQ(vio_remount(fs, t), 0);
	dfs *df = vio_dfs(fs);
	uint64_t r0 = df->data_reads, got;
	CHECK_EQ(vio_read(fs, t, in, 0, 4096, &got), 0);
	CHECK_EQ(got, 100);
	CHECK_EQ(df->data_reads, r0);
	/* a write past the inline EOF rewrites page 0 as a regular extent */
	CHECK_EQ(vio_write(fs, t, in, 8 * K, 4 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 2);
	CHECK_EQ(types, 1 << FE_REG);
	CHECK_EQ(bytes, 8 * K);
	commit_check(e, t);
	/* shrinking it back below max_inline leaves the regular extent
	 * trimmed; a rewrite of the whole small file goes inline again */
	CHECK_EQ(vio_truncate(fs, t, in, 0), 0);
	CHECK_EQ(vio_write(fs, t, in, 0, 300), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 1);
	CHECK_EQ(types, 1 << FE_INLINE);
	commit_check(e, t);
}

/* overwrites split extents (refs stay right), unlink evicts the data
 * state even with dirty pages, the registered check can fail */
static void body_overwrite_unlink(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in, *u;
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "o", 0644, &in), 0);
	CHECK_EQ(vio_write(fs, t, in, 0, 256 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	commit_check(e, t);
	CHECK_EQ(vio_write(fs, t, in, 100 * K + 10, 20 * K), 0); /* unaligned */
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	uint64_t bytes;
	int types;
	CHECK_EQ(fe_count(fs, in, &bytes, &types), 3);
	CHECK_EQ(bytes, 256 * K);
	commit_check(e, t);

	CHECK_EQ(vfs_create(fs, t, e->root, 256, "u", 0644, &u), 0);
	CHECK_EQ(vio_write(fs, t, u, 0, 40 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, u), 0);
	CHECK_EQ(vio_write(fs, t, u, 0, 8 * K), 0); /* dirty when unlinked */
	CHECK(u->io != NULL);
	int n0 = vio_dfs(fs)->ninodes;
	CHECK_EQ(vfs_unlink(fs, t, e->root, 256, "u"), 0);
	CHECK_EQ(vio_dfs(fs)->ninodes, n0 - 1);
	CHECK_EQ(vio_sync(fs, t), 0);
	commit_check(e, t);

	/* a directory has no data path */
	struct inode *dir;
	CHECK_EQ(vfs_mkdir(fs, t, e->root, 256, "dir", &dir), 0);
	CHECK_EQ(vio_write(fs, t, dir, 0, 4096), LAB_EINVAL);
	CHECK_EQ(vio_write(fs, t, in, VIO_MAX_FILE_BYTES, 4096), LAB_ERANGE);
	/* the data path's check sees an inode whose nbytes disagrees with
	 * its items */
	commit_check(e, t);
	in->nbytes += 4096;
	CHECK(check_fs(fs) > 0);
	CHECK(strstr(check_last_error(fs), "data") != NULL);
	in->nbytes -= 4096;
	int f = check_fs(fs);
	CHECK_EQ(f, 0);
	if (f)
		fprintf(stderr, "check: %s\n", check_last_error(fs));
}

/* many small extents: several leaves; lseek's visits and cold reads come
 * from the real tree's shape */
static void body_many(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in;
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "sparse", 0644, &in), 0);
	const uint64_t n = 1500;
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(vio_write(fs, t, in, i * 8 * K, 4 * K), 0);
	CHECK_EQ(vio_fsync(fs, t, in), 0);
	uint64_t bytes;
	int types;
	CHECK_EQ(fe_count(fs, in, &bytes, &types), (int)n);
	commit_check(e, t);
	uint64_t leaves, nodes, items;
	bt_count_blocks(&e->root->tree, &leaves, &nodes, &items);
	CHECK(leaves >= 7); /* 1500 items of 78 bytes: > 208 per leaf */
	int h = bt_tree_height(&e->root->tree);
	CHECK(h >= 2);
	CHECK_EQ(vio_remount(fs, t), 0);
	dfs *df = vio_dfs(fs);
	uint64_t m0 = df->metadata_reads, v0 = df->fst_nodes_visited;
	/* SEEK_HOLE at 0: one descent; the hole after the first item */
	CHECK_EQ(seek(e, t, in, 0, LSEEK_HOLE), 4 * K);
	CHECK_EQ(df->metadata_reads - m0, (uint64_t)h); /* root to leaf, cold */
	CHECK_EQ(df->fst_nodes_visited - v0, (uint64_t)h);
	/* SEEK_DATA from the last hole: ENXIO past the last item */
	CHECK_EQ(seek(e, t, in, (n - 1) * 8 * K + 4 * K, LSEEK_DATA), UINT64_MAX - 1);
	/* a walk over the whole file, hole by hole, crosses every leaf */
	uint64_t m1 = df->metadata_reads, pos = 0, calls = 0;
	while (pos < in->size) {
		uint64_t dpos = seek(e, t, in, pos, LSEEK_DATA);
		if (dpos >= in->size)
			break;
		pos = seek(e, t, in, dpos, LSEEK_HOLE);
		calls++;
	}
	CHECK_EQ(calls, n);
	/* every leaf read once (plus the nodes above the first one) */
	CHECK(df->metadata_reads - m1 >= leaves - 1);
	CHECK(df->metadata_reads - m1 <= leaves + nodes);
	commit_check(e, t);
}

/* The asynchronous drive (sparse-cp's): writeback runs as its own task,
 * bios complete at end_io with no task and join the transaction there;
 * an fsync behind it parks until it is done. */
typedef struct async_env {
	env e;
	struct inode *in;
	int phase, parks;
	uint64_t items;
} async_env;

static int async_step(sim *s, task *t)
{
	async_env *a = t->ctx;
	env *e = &a->e;
	fs_info *fs = e->fs;
	(void)s;
	if (a->phase == 0) {
		CHECK_EQ(vfs_create(fs, t, e->root, 256, "a", 0644, &a->in), 0);
		for (int i = 0; i < 64; i++)
			CHECK_EQ(vio_write(fs, t, a->in, (uint64_t)i * 16 * K, 8 * K), 0);
		vd_writeback_start(vio_dinode(fs, a->in), 1);
		a->phase = 1;
	}
	int rc = vio_fsync(fs, t, a->in);
	if (rc == 1) {
		a->parks++;
		return TASK_BLOCKED;
	}
	CHECK_EQ(rc, 0);
	uint64_t bytes;
	int types;
	a->items = (uint64_t)fe_count(fs, a->in, &bytes, &types);
	CHECK_EQ(bytes, 64 * 8 * K);
	commit_check(e, t);
	return TASK_DONE;
}

static void test_async(void)
{
	async_env a;
	memset(&a, 0, sizeof(a));
	env_open(&a.e, 9);
	vio_dfs(a.e.fs)->sync_io = 0;
	CHECK(task_spawn(a.e.s, "fsync", async_step, &a, 0) != NULL);
	sim_run(a.e.s, UINT64_MAX, SIMTIME_MAX);
	CHECK(a.parks >= 1);
	CHECK_EQ(a.items, 64);
	CHECK(a.e.fs->cpu_untasked_ns > 0); /* the end_io inserts */
	CHECK_EQ(check_fs(a.e.fs), 0);
	env_close(&a.e);
}

static simtime_t run_one(void (*body)(env *, task *), uint64_t seed)
{
	env e;
	env_open(&e, seed);
	run(&e, body);
	CHECK_EQ(check_fs(e.fs), 0);
	simtime_t end = e.end;
	env_close(&e);
	return end;
}

/* An open file read in 8 KiB read()s from a cold cache (bonnie's stat):
 * its readahead state carries from call to call and each miss asks for
 * the call's pages, so the windows ramp up as filemap_read's do (8, 32,
 * 128 pages with btrfs's 4 MiB bdi window: a 2-page request starts at
 * 8, get_next_ra_size quadruples below 1/16 of the maximum) and the file
 * comes in a few bios. vio_read, which starts a fresh state every call,
 * reads it in more windows of its first size. */
static void body_read_file(env *e, task *t)
{
	fs_info *fs = e->fs;
	struct inode *in;
	const uint64_t size = 384100; /* 94 pages */
	CHECK_EQ(vfs_create(fs, t, e->root, 256, "r", 0644, &in), 0);
	CHECK_EQ(vio_write(fs, t, in, 0, size), 0);
	CHECK_EQ(vio_sync(fs, t), 0);
	commit_check(e, t);
	dfs *df = vio_dfs(fs);
	dinode *d = vio_dinode(fs, in);
	uint64_t got;

	CHECK_EQ(vio_remount(fs, t), 0);
	d = vio_dinode(fs, in);
	CHECK_EQ(d->pc.present, 0);
	vio_file f;
	vio_file_open(&f);
	uint64_t w0 = df->ra_windows, p0 = df->ra_pages, h0 = df->cache_hits,
		 m0 = df->cache_misses;
	CHECK_EQ(vio_read_file(fs, t, in, &f, 0, 8 * K, &got), 0);
	CHECK_EQ(got, 8 * K);
	CHECK_EQ(df->ra_windows - w0, 1);
	CHECK_EQ(df->ra_pages - p0, 8); /* the first window: 4x the request */
	for (uint64_t off = 8 * K; off < size; off += 8 * K)
		CHECK_EQ(vio_read_file(fs, t, in, &f, off, 8 * K, &got), 0);
	uint64_t windows = df->ra_windows - w0;
	CHECK_EQ(windows, 3);                   /* 8 + 32 + the rest of 128 */
	CHECK_EQ(df->ra_pages - p0, 94);        /* each page read once */
	uint64_t hits = df->cache_hits, misses = df->cache_misses;

	/* vio_read_calls: the same read() calls in one go, the same windows
	 * and the same hits and misses; past EOF they read nothing */
	CHECK_EQ(vio_remount(fs, t), 0);
	vio_file_open(&f);
	uint64_t w2 = df->ra_windows, p2 = df->ra_pages, h2 = df->cache_hits,
		 m2 = df->cache_misses, pos = 0;
	CHECK_EQ(vio_read_calls(fs, t, in, &f, &pos, size + 20 * K, 8 * K), 0);
	CHECK_EQ(pos, size + 20 * K);
	CHECK_EQ(df->ra_windows - w2, windows);
	CHECK_EQ(df->ra_pages - p2, 94);
	CHECK_EQ(df->cache_hits - h2, hits - h0);
	CHECK_EQ(df->cache_misses - m2, misses - m0);
	CHECK_EQ(vio_read_calls(fs, t, in, &f, &pos, size, 8 * K), 0); /* nothing left */
	CHECK_EQ(df->ra_windows - w2, windows);

	/* the same file, a fresh readahead state per call */
	CHECK_EQ(vio_remount(fs, t), 0);
	uint64_t w1 = df->ra_windows;
	for (uint64_t off = 0; off < size; off += 8 * K)
		CHECK_EQ(vio_read(fs, t, in, off, 8 * K, &got), 0);
	CHECK(df->ra_windows - w1 > 2 * windows);
}

int main(void)
{
	simtime_t a = run_one(body_basic, 1);
	run_one(body_truncate, 2);
	run_one(body_inline, 3);
	run_one(body_overwrite_unlink, 4);
	run_one(body_many, 5);
	run_one(body_read_file, 6);
	test_async();
	/* same seed, same simulated time */
	CHECK_EQ(run_one(body_basic, 1), a);
	T_DONE();
}
