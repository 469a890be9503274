/*
 * exp_bonnie.c - seed 001: bonnie++ 2.00a's file phase as the seed's
 * test.sh runs it, `-n 20:384100:384100:20 -b` on a fresh btrfs mounted
 * `-o ssd`, on the seed's VM:
 *
 *   20 directories, then 20 x 1024 files of exactly 384,100 bytes, each
 *   created as one timed operation: open(O_CREAT|O_EXCL|O_WRONLY), 47
 *   write()s of 8 KiB (the last 7,268 bytes), fsync(file), fsync(dir)
 *   (-b), close; a sync() after the loop (not timed). Then each file
 *   stat()ed and read: stat, open, 47 read()s, close. Then each file
 *   unlinked: unlink + fsync(dir). Sequential order first (names: 10 hex
 *   digits then 0-12 random characters; files spread 1,025 per directory,
 *   the last one 1,005; stat and delete in directory order), then the same
 *   in random order (the random part first; creates, stats and deletes in
 *   a random order). One process. (mechanisms.md section 2, corrections.)
 *
 * bonnie's "Latency" of a phase is its slowest single operation; the
 * phase's p99 and the files per second the lab measures are reported
 * beside it. The seed's file-phase "/sec" columns all print 20480: bonnie
 * 2.00a passes a double to a "%d" (x86-64 reads an integer register that
 * holds the file count), so the seed gives no file-phase rate and the lab
 * fits none.
 *
 * Memory as the seed's VM saw it: test.sh sizes everything from
 * MemTotal, and the printed sizes (Size 7501M = 2 MemTotal / 1 MiB, files
 * of 384,100 = 2 MemTotal / 20,480 bytes) give MemTotal = 3,933 MB
 * (3.663 GiB), a 4 GiB guest, not the 8 GB the text says. The IO phase
 * that runs first (-s 7501M) writes, rewrites and reads a 7.5 GiB file
 * and deletes it: its pages leave the cache with it (evict ->
 * truncate_inode_pages_final), so the file phase starts with free memory
 * and its own 7.5 GiB of data fills the cache halfway through the creates.
 * The page cache may hold MemTotal less the memory that is not cache
 * (costs.h BONNIE_NONCACHE_BYTES); its state drives the allocator's
 * pressure (ebmem.c): every extent buffer (the clones before patch 001,
 * the scratch eb after) and every page cache page a write adds can enter
 * direct reclaim.
 *
 * The disk: the seed's IO phase prints block writes at 1.4 GiB/s and
 * block reads at 2.5 (before) and 2.3 GiB/s (after). Of the lab's fitted
 * profiles, nvme-dc (the Intel P4510) streams 1 MiB reads at 2.47-2.58
 * GiB/s at 8-32 IOs in flight and writes at 1.08 GiB/s (fio experiment,
 * rw=read/write, bs=1M): reads as the seed's, writes 23% slower; the
 * consumer NVMe reads 2.6 times faster, the SATA drives 5 times slower.
 * So `device` defaults to nvme-dc.
 *
 * Kernel threads run beside bonnie: the transaction kthread (a commit
 * every 30 s, which waits for the fsync's transaction handle and runs the
 * delayed items), the flusher, ordered-extent completion at the end of
 * each write bio, and the delayed-items worker (delayed_inode.h): creates
 * and unlinks queue their DIR_INDEX changes and inode updates, and
 * btrfs_balance_delayed_items after each queues the worker at 128 items
 * (the caller waits at 512); the worker inserts them through the tree's
 * leaf locks, so it can wait on a leaf an fsync holds read-locked.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "bdev.h"
#include "check.h"
#include "costs.h"
#include "delayed_inode.h"
#include "ebmem.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "space_fs.h"
#include "trans.h"
#include "treelog.h"
#include "variation.h"
#include "vfs.h"
#include "vfs_io.h"

static const param_desc bn_params[] = {
	{ "ram_gib", PT_FLOAT, 3.663, 0.03125, 64, 0, NULL, "GiB",
	  "the VM's MemTotal (the seed's sizes imply 3.663 GiB = 3,933 MB)" },
	{ "files", PT_INT, 20480, 1, 200000, 0, NULL, "files",
	  "files per phase (-n 20: 20 x 1024)" },
	{ "dirs", PT_INT, 20, 1, 1000, 0, NULL, "dirs",
	  "directories the files are spread over (-n ...:20)" },
	{ "file_bytes", PT_INT, 384100, 0, 64 << 20, 0, NULL, "bytes",
	  "size of every file, written in 8 KiB write()s (-n 20:384100:384100)" },
	{ "device", PT_ENUM, 0, 0, 0, 0, bdev_profile_names, NULL,
	  "device profile (default nvme-dc: the seed's IO-phase block rates)" },
	{ "scale", PT_FLOAT, 1, 0, 1, 1, NULL, NULL,
	  "share of the files AND of the memory (0 < scale <= 1; 1 is the published size)" },
};

enum { PX_SEQ_CREATE, PX_SEQ_STAT, PX_SEQ_DELETE, PX_RAND_CREATE, PX_RAND_STAT, PX_RAND_DELETE,
       PX_N };
static const char *const px_name[PX_N] = {
	"seq_create", "seq_stat", "seq_delete", "rand_create", "rand_stat", "rand_delete",
};

static const metric_desc bn_metrics[] = {
	{ "seq_create_lat_ms", "ms", "bonnie's Latency of the sequential create: its slowest create" },
	{ "seq_stat_lat_ms", "ms", "the slowest sequential stat + read of a file" },
	{ "seq_delete_lat_ms", "ms", "the slowest sequential delete (unlink + fsync(dir))" },
	{ "rand_create_lat_ms", "ms", "the slowest create in random order" },
	{ "rand_stat_lat_ms", "ms", "the slowest stat + read in random order" },
	{ "rand_delete_lat_ms", "ms", "the slowest delete in random order" },
	{ "seq_create_p99_ms", "ms", "99th percentile of the sequential creates" },
	{ "seq_stat_p99_ms", "ms", "99th percentile of the sequential stats" },
	{ "seq_delete_p99_ms", "ms", "99th percentile of the sequential deletes" },
	{ "rand_create_p99_ms", "ms", "99th percentile of the random creates" },
	{ "rand_stat_p99_ms", "ms", "99th percentile of the random stats" },
	{ "rand_delete_p99_ms", "ms", "99th percentile of the random deletes" },
	{ "seq_create_per_s", "files/s", "sequential creates per second (the lab's; the seed prints none)" },
	{ "seq_stat_per_s", "files/s", "sequential stats per second" },
	{ "seq_delete_per_s", "files/s", "sequential deletes per second" },
	{ "rand_create_per_s", "files/s", "random creates per second" },
	{ "rand_stat_per_s", "files/s", "random stats per second" },
	{ "rand_delete_per_s", "files/s", "random deletes per second" },
	{ "eb_allocs", "count", "extent buffers the log allocated (clones before, scratch ebs after)" },
	{ "eb_stalls", "count", "eb pages that went through direct reclaim" },
	{ "page_stalls", "count", "page cache pages of the writes that went through direct reclaim" },
	{ "alloc_locked_max_ms", "ms", "longest eb allocation made while holding a subvolume leaf's read lock" },
	{ "leaf_hold_max_ms", "ms", "longest read-lock hold of a subvolume leaf by an fsync" },
	{ "leaves_copied", "count", "subvolume leaves copied into the log" },
	{ "log_commits", "count", "log commits (btrfs_sync_log writes)" },
	{ "worker_leaf_waits", "count", "waits of the delayed-items worker for a subvolume leaf an fsync held read-locked" },
	{ "worker_leaf_wait_max_ms", "ms", "the longest of those waits" },
	{ "delayed_balance_waits", "count", "operations that waited for the delayed-items worker (>= 512 items queued)" },
	{ "commits", "count", "transaction commits" },
};

/* Seed 001's bonnie++ output: the file phase's Latency row, before and
 * after. Each is the maximum of one run's 20,480 operations: judged
 * inside the model's 5-95% range over 20 seeds. The stat ("Read") rows
 * are reported only: the patch cannot touch them. */
static const published_row bn_published[] = {
	{ "before", "", "seq_create_lat_ms", 411, "seed 001, before: Sequential Create Latency 411ms", 0, 1, 1 },
	{ "after", "", "seq_create_lat_ms", 320, "seed 001, after: Sequential Create Latency 320ms", 0, 1, 1 },
	{ "before", "", "seq_delete_lat_ms", 119, "seed 001, before: Sequential Delete Latency 119ms", 0, 1, 1 },
	{ "after", "", "seq_delete_lat_ms", 77.779, "seed 001, after: Sequential Delete Latency 77779us", 0, 1, 1 },
	{ "before", "", "rand_create_lat_ms", 617, "seed 001, before: Random Create Latency 617ms", 0, 1, 1 },
	{ "after", "", "rand_create_lat_ms", 518, "seed 001, after: Random Create Latency 518ms", 0, 1, 1 },
	{ "before", "", "rand_delete_lat_ms", 110, "seed 001, before: Random Delete Latency 110ms", 0, 1, 1 },
	{ "after", "", "rand_delete_lat_ms", 86.389, "seed 001, after: Random Delete Latency 86389us", 0, 1, 1 },
	{ "before", "", "seq_stat_lat_ms", 11.914, "seed 001, before: Sequential Read Latency 11914us", -1, 1 },
	{ "after", "", "seq_stat_lat_ms", 11.237, "seed 001, after: Sequential Read Latency 11237us", -1, 1 },
	{ "before", "", "rand_stat_lat_ms", 10.296, "seed 001, before: Random Read Latency 10296us", -1, 1 },
	{ "after", "", "rand_stat_lat_ms", 6.470, "seed 001, after: Random Read Latency 6470us", -1, 1 },
};

/* Program phases (PX_* are the timed ones). */
enum {
	BP_MKDIR, BP_SEQ_CREATE, BP_SEQ_SYNC, BP_SEQ_STAT, BP_SEQ_DELETE,
	BP_RAND_CREATE, BP_RAND_SYNC, BP_RAND_STAT, BP_RAND_DELETE, BP_DONE,
};

/* The steps of one operation. */
enum {
	OS_START, OS_WRITE, OS_FSYNC_DATA, OS_FSYNC_LOG, OS_DFSYNC, OS_CLOSE,
	OS_READ, OS_UNLINK, OS_COMMIT, OS_BALANCE,
};

#define BN_WRITE 8192u
#define BN_MAX_LEAVES 24   /* leaf copies kept per slowest operation */
#define BN_MAX_LCOMMITS 8
#define BN_MAX_WAITERS 16  /* others' lock waits kept per slowest operation */

typedef struct bn_file {
	struct inode *in;
	uint32_t dir;
	uint8_t nlen;
	char name[24];
} bn_file;

/* One operation as the view draws it: its parts and the leaves it held. */
typedef struct bn_op {
	/* scalars first: bn_op_begin clears the struct up to leaf[] (the
	 * arrays are read only up to their counts) */
	uint32_t file;
	char name[24];
	simtime_t t0, t1;
	simtime_t t_open, t_write, t_fsync, t_dfsync; /* when each part ended */
	uint64_t page_stall_ns;
	simtime_t bal0, bal1;     /* its wait in btrfs_balance_delayed_items */
	int nleaf;
	int nlc;
	int nsc;                  /* its scratch eb allocations (patch 001) */
	int nlt;                  /* its log transactions: join .. end_log_trans */
	int nw;                   /* lock waits of the tasks inserting delayed items */
	tl_leaf_ev leaf[BN_MAX_LEAVES];
	simtime_t lc0[BN_MAX_LCOMMITS], lc1[BN_MAX_LCOMMITS];
	simtime_t sc0[BN_MAX_LCOMMITS], sc1[BN_MAX_LCOMMITS];
	simtime_t lt0[BN_MAX_LCOMMITS], lt1[BN_MAX_LCOMMITS];
	dl_wait_ev w[BN_MAX_WAITERS];
} bn_op;

typedef struct bn_ctx {
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	int tm_ready;
	ebmem *mem;
	treelog *tl;
	delayed_root *dl;
	int bal_waiting;          /* parked in btrfs_balance_delayed_items */
	uint64_t bal_seq;
	struct btrfs_root *root;
	uint64_t files, dirs, bytes, per_dir, noncache;
	bn_file *f;
	uint32_t *order;          /* the phase's file order */
	struct inode **dir;       /* the directories */
	prng rng;                 /* bonnie's own (bonnie_rand) */
	task *proc;
	int phase, op, err;
	uint64_t i;               /* next position in order[] */
	uint64_t off;             /* next write / read offset */
	vio_file file;            /* the open file of a stat (its readahead) */
	tl_fsync fs_f;            /* the fsync in progress */
	int fs_active;
	trans_handle h;
	int h_started;
	bn_op cur;                /* the operation in progress */
	/* per timed phase */
	lhist lat[PX_N];
	bn_op slowest[PX_N];
	simtime_t ph0[PX_N], ph1[PX_N];
	uint64_t nops[PX_N];
	uint64_t alloc_locked_max, leaf_hold_max;
	/* where each maximum happened: the timed phase (-1 none) and the
	 * operation's number in it, the moment a page records (details) */
	int alloc_max_px, hold_max_px;
	uint64_t alloc_max_i, hold_max_i;
} bn_ctx;

static int bn_timed(int phase)
{
	switch (phase) {
	case BP_SEQ_CREATE: return PX_SEQ_CREATE;
	case BP_SEQ_STAT: return PX_SEQ_STAT;
	case BP_SEQ_DELETE: return PX_SEQ_DELETE;
	case BP_RAND_CREATE: return PX_RAND_CREATE;
	case BP_RAND_STAT: return PX_RAND_STAT;
	case BP_RAND_DELETE: return PX_RAND_DELETE;
	default: return -1;
	}
}

static void bn_fail(bn_ctx *c, sim *s, int rc)
{
	if (!c->err)
		c->err = rc;
	sim_stop(s);
}

/* ---------------------------------------------------------- observers */

/* The allocator's view of memory: the page cache's pages (dirty and
 * clean) plus what is not cache. */
static void bn_probe(void *ctx, uint64_t *dirty, uint64_t *cached)
{
	bn_ctx *c = ctx;
	dfs *df = vio_dfs(c->fs);
	*dirty = df->pcg.dirty * PC_PAGE;
	*cached = (df->pcg.cached - df->pcg.dirty) * PC_PAGE + c->noncache;
}

/* A buffered write's new page cache pages (fs_info.page_alloc). */
static void bn_page_alloc(void *ctx, task *t, uint64_t npages)
{
	bn_ctx *c = ctx;
	c->cur.page_stall_ns += ebmem_pages(c->mem, t, npages);
}

static void bn_on_leaf(void *ctx, const tl_leaf_ev *ev)
{
	bn_ctx *c = ctx;
	uint64_t hold = ev->released - ev->locked_at;
	if (hold > c->leaf_hold_max) {
		c->leaf_hold_max = hold;
		c->hold_max_px = bn_timed(c->phase);
		c->hold_max_i = c->i;
	}
	if (ev->alloc_ns > c->alloc_locked_max) {
		c->alloc_locked_max = ev->alloc_ns;
		c->alloc_max_px = bn_timed(c->phase);
		c->alloc_max_i = c->i;
	}
	if (c->cur.nleaf < BN_MAX_LEAVES)
		c->cur.leaf[c->cur.nleaf++] = *ev;
}

static void bn_on_log_commit(void *ctx, uint64_t root, simtime_t start, simtime_t end,
			     uint64_t blocks, uint64_t inodes)
{
	bn_ctx *c = ctx;
	(void)root, (void)blocks, (void)inodes;
	if (c->cur.nlc < BN_MAX_LCOMMITS) {
		c->cur.lc0[c->cur.nlc] = start;
		c->cur.lc1[c->cur.nlc++] = end;
	}
}

static void bn_on_log_trans(void *ctx, int tid, int join, simtime_t at, int writers)
{
	bn_ctx *c = ctx;
	(void)tid, (void)writers;
	if (join) {
		if (c->cur.nlt < BN_MAX_LCOMMITS) {
			c->cur.lt0[c->cur.nlt] = at;
			c->cur.lt1[c->cur.nlt++] = at;
		}
	} else if (c->cur.nlt > 0) {
		c->cur.lt1[c->cur.nlt - 1] = at;
	}
}

static void bn_on_scratch(void *ctx, int tid, simtime_t start, simtime_t end)
{
	bn_ctx *c = ctx;
	(void)tid;
	if (c->cur.nsc < BN_MAX_LCOMMITS) {
		c->cur.sc0[c->cur.nsc] = start;
		c->cur.sc1[c->cur.nsc++] = end;
	}
}

/* A task inserting delayed items waited for a subvolume block lock: kept
 * with the operation it overlaps. */
static void bn_on_dl_wait(void *ctx, const dl_wait_ev *ev)
{
	bn_ctx *c = ctx;
	if (ev->level == 0 && ev->to > c->cur.t0 && c->cur.nw < BN_MAX_WAITERS)
		c->cur.w[c->cur.nw++] = *ev;
}

/* btrfs_balance_delayed_items at the end of create and unlink
 * (btrfs_btree_balance_dirty): 1 when parked until the worker did a
 * batch. */
static int bn_balance(bn_ctx *c, task *t)
{
	if (!c->dl)
		return 0;
	int was = c->bal_waiting;
	int r = dl_balance(c->dl, t, &c->bal_waiting, &c->bal_seq);
	if (r && !was)
		c->cur.bal0 = t->clock;
	if (!r && was) {
		c->cur.bal1 = t->clock;
		c->dl->balance_wait_ns += t->clock - c->cur.bal0;
	}
	return r;
}

/* ------------------------------------------------------------ the names */

/* bonnie's names: 10 hex digits of the file's number and 0-12 random
 * alphanumerics, the random part last (sequential) or first (random). */
static void bn_names(bn_ctx *c, int random_first)
{
	static const char an[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	/* prng_below's draws, without a division per character */
	const prng_div len13 = prng_div_make(13), alnum = prng_div_make(sizeof an - 1);
	for (uint64_t i = 0; i < c->files; i++) {
		bn_file *f = &c->f[i];
		char hex[24], tail[13];
		snprintf(hex, sizeof hex, "%010llx", (unsigned long long)i);
		int n = (int)prng_below_by(&c->rng, &len13);
		for (int k = 0; k < n; k++)
			tail[k] = an[prng_below_by(&c->rng, &alnum)];
		tail[n] = 0;
		char nm[48];
		snprintf(nm, sizeof nm, "%.12s%.16s", random_first ? tail : hex, random_first ? hex : tail);
		memcpy(f->name, nm, sizeof f->name - 1);
		f->name[sizeof f->name - 1] = 0;
		f->nlen = (uint8_t)strlen(f->name);
		f->dir = (uint32_t)(i / c->per_dir < c->dirs ? i / c->per_dir : c->dirs - 1);
		f->in = NULL;
	}
}

/* The order of a phase: the files in directory order, or shuffled. */
static void bn_order(bn_ctx *c, int shuffled)
{
	for (uint64_t i = 0; i < c->files; i++)
		c->order[i] = (uint32_t)i;
	if (!shuffled)
		return;
	for (uint64_t i = c->files - 1; i > 0; i--) {
		uint64_t j = prng_below(&c->rng, i + 1);
		uint32_t x = c->order[i];
		c->order[i] = c->order[j];
		c->order[j] = x;
	}
}

/* ---------------------------------------------------------- the process */

/* Commit through a handle from the process (sync(2)'s commit). Returns 0
 * when done, 1 when parked, < 0 on error. */
static int bn_commit(bn_ctx *c, task *t)
{
	int rc;
	if (!c->h_started) {
		rc = trans_start(&c->tm, t, &c->h);
		if (rc == TRANS_WAIT)
			return 1;
		if (rc)
			return rc;
		c->h_started = 1;
	}
	rc = trans_commit(&c->h, TCOMMIT_EXPLICIT);
	if (rc == TRANS_WAIT)
		return 1;
	c->h_started = 0;
	return rc;
}

/* bn_fsync_log's "not done yet": step again now, or when woken. */
#define BN_MORE 1
#define BN_PARK 2

/* One fsync's log part, to the end: BN_MORE / BN_PARK while it runs, 0
 * when done, < 0 on error. A log that cannot hold it commits. */
static int bn_fsync_log(bn_ctx *c, task *t, struct inode *in)
{
	int rc;
	if (!c->fs_active) {
		rc = treelog_fsync_init(&c->fs_f, c->root, in, 0);
		if (rc)
			return rc;
		c->fs_active = 1;
	}
	if (c->fs_active == 2) {
		rc = bn_commit(c, t); /* BTRFS_LOG_FORCE_COMMIT */
		if (rc == 1)
			return BN_PARK;
		c->fs_active = 0;
		return rc;
	}
	rc = treelog_fsync_step(c->tl, t, &c->fs_f);
	if (rc == TASK_RUN)
		return BN_MORE;
	if (rc == TASK_BLOCKED)
		return BN_PARK;
	c->fs_active = 0;
	if (rc < 0)
		return rc;
	if (c->fs_f.error)
		return c->fs_f.error;
	if (c->fs_f.need_commit) {
		c->fs_active = 2;
		return BN_MORE;
	}
	return 0;
}

/* An operation finished: its latency into its phase. */
static void bn_op_done(bn_ctx *c, task *t, int px)
{
	c->cur.t1 = t->clock;
	uint64_t lat = c->cur.t1 - c->cur.t0;
	if (c->nops[px] == 0)
		c->ph0[px] = c->cur.t0;
	c->ph1[px] = c->cur.t1;
	c->nops[px]++;
	if (lat >= c->lat[px].max_ns || c->lat[px].n == 0)
		c->slowest[px] = c->cur;
	lhist_add(&c->lat[px], lat);
	c->op = OS_START;
	c->i++;
}

/* Start of the next operation (or the end of the phase: returns 0).
 * Recording: it is an "op:<phase>" numbered in its phase (a replay steps
 * bonnie operation by operation; a recording can start at the n-th). */
static int bn_op_begin(bn_ctx *c, sim *s, task *t)
{
	if (c->i >= c->files)
		return 0;
	int px = bn_timed(c->phase);
	if (px >= 0 && sim_recording_ops(s)) {
		char kind[32];
		snprintf(kind, sizeof kind, "op:%s", px_name[px]);
		const int64_t a[] = { (int64_t)c->i, (int64_t)c->order[c->i] };
		sim_rec(s, sim_trace_kind_args(s, kind, "n,file"), t, 2, a);
	}
	/* its scalars and counts (bn_op puts them first): the arrays are
	 * read only up to their counts, and clearing all 2.9 KB of them
	 * every operation was ~1% of a run */
	memset(&c->cur, 0, offsetof(bn_op, leaf));
	c->cur.file = c->order[c->i];
	memcpy(c->cur.name, c->f[c->cur.file].name, sizeof c->cur.name);
	c->cur.t0 = t->clock;
	c->off = 0;
	return 1;
}

/* One create: open(O_CREAT|O_EXCL), 47 writes, fsync(file), fsync(dir),
 * close. Returns a TASK_* or < 0. */
static int bn_create_step(bn_ctx *c, task *t, int px)
{
	bn_file *f = &c->f[c->cur.file];
	struct inode *d = c->dir[f->dir];
	int rc;
	switch (c->op) {
	case OS_START:
		rc = vfs_create(c->fs, t, c->root, d->ino, f->name, 0644, &f->in);
		if (rc == FS_SPACE_WAIT)
			return TASK_BLOCKED;
		if (rc)
			return rc;
		c->op = OS_BALANCE;
		/* fall through */
	case OS_BALANCE:
		if (bn_balance(c, t))
			return TASK_BLOCKED;
		c->cur.t_open = t->clock;
		c->op = OS_WRITE;
		/* fall through */
	case OS_WRITE:
		/* The 47 write()s of 8 KiB, as one buffered write of the file
		 * plus a syscall entry per write(): nothing runs between them
		 * in a one-process benchmark, and the pages, the one delalloc
		 * range they merge into, the reservation and the new pages'
		 * allocations are the same. A write parked by a ticket or by
		 * dirty throttling resumes where it stopped. */
		if (c->off < c->bytes) {
			uint64_t calls = (c->bytes - c->off + BN_WRITE - 1) / BN_WRITE;
			rc = vio_write(c->fs, t, f->in, c->off, c->bytes - c->off);
			if (rc == FS_SPACE_WAIT)
				return TASK_BLOCKED;
			if (rc < 0)
				return rc;
			fs_charge(c->fs, t, var_ns_n(c->fs->sim, V_SYSCALL, C_SYSCALL_NS, calls));
			c->off = c->bytes;
			if (rc == 1)
				return TASK_BLOCKED; /* throttled: written, parked */
		}
		c->cur.t_write = t->clock;
		c->op = OS_FSYNC_DATA;
		return TASK_RUN;
	case OS_FSYNC_DATA:
		fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
		rc = vio_fsync(c->fs, t, f->in);
		if (rc == 1)
			return TASK_BLOCKED;
		if (rc)
			return rc;
		c->op = OS_FSYNC_LOG;
		/* fall through */
	case OS_FSYNC_LOG:
		rc = bn_fsync_log(c, t, f->in);
		if (rc)
			return rc == BN_MORE ? TASK_RUN : rc == BN_PARK ? TASK_BLOCKED : rc;
		c->cur.t_fsync = t->clock;
		c->op = OS_DFSYNC;
		return TASK_RUN;
	case OS_DFSYNC:
		if (!c->fs_active)
			fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
		rc = bn_fsync_log(c, t, d);
		if (rc)
			return rc == BN_MORE ? TASK_RUN : rc == BN_PARK ? TASK_BLOCKED : rc;
		c->cur.t_dfsync = t->clock;
		/* close */
		fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
		bn_op_done(c, t, px);
		return TASK_RUN;
	default:
		return LAB_EENGINE;
	}
}

/* One stat: stat(name), open, 47 reads, close. */
static int bn_stat_step(bn_ctx *c, task *t, int px)
{
	bn_file *f = &c->f[c->cur.file];
	int rc;
	switch (c->op) {
	case OS_START: {
		uint64_t ino;
		rc = vfs_lookup(c->fs, t, c->root, c->dir[f->dir]->ino, f->name, &ino);
		vfs_stat_info st;
		if (!rc)
			rc = vfs_stat(c->fs, t, c->root, ino, &st);
		if (rc)
			return rc;
		f->in = fs_inode_get(c->root, ino);
		if (!f->in)
			return LAB_EENGINE;
		fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL)); /* open */
		vio_file_open(&c->file);
		c->cur.t_open = t->clock;
		c->op = OS_READ;
	}
		/* fall through */
	case OS_READ:
		/* the 47 read()s of 8 KiB on one open file, whose readahead
		 * state carries from one read to the next; a read parked on a
		 * page in flight goes on from that read when woken. The
		 * syscall entries are charged once for all (one draw). */
		if (c->off < c->bytes) {
			rc = vio_read_calls(c->fs, t, f->in, &c->file, &c->off, c->bytes, BN_WRITE);
			if (rc == 1)
				return TASK_BLOCKED; /* a read in flight: again when woken */
			if (rc < 0)
				return rc;
			fs_charge(c->fs, t, var_ns_n(c->fs->sim, V_SYSCALL, C_SYSCALL_NS,
						     (c->bytes + BN_WRITE - 1) / BN_WRITE));
		}
		c->cur.t_write = t->clock;
		fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL)); /* close */
		bn_op_done(c, t, px);
		return TASK_RUN;
	default:
		return LAB_EENGINE;
	}
}

/* One delete: unlink(name) + fsync(dir). */
static int bn_delete_step(bn_ctx *c, task *t, int px)
{
	bn_file *f = &c->f[c->cur.file];
	struct inode *d = c->dir[f->dir];
	int rc;
	switch (c->op) {
	case OS_START:
		rc = vfs_unlink(c->fs, t, c->root, d->ino, f->name);
		if (rc == FS_SPACE_WAIT)
			return TASK_BLOCKED;
		if (rc)
			return rc;
		f->in = NULL;
		c->op = OS_BALANCE;
		/* fall through */
	case OS_BALANCE:
		if (bn_balance(c, t))
			return TASK_BLOCKED;
		c->cur.t_open = t->clock;
		c->op = OS_DFSYNC;
		/* fall through */
	case OS_DFSYNC:
		if (!c->fs_active)
			fs_charge(c->fs, t, var_ns(c->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
		rc = bn_fsync_log(c, t, d);
		if (rc)
			return rc == BN_MORE ? TASK_RUN : rc == BN_PARK ? TASK_BLOCKED : rc;
		c->cur.t_dfsync = t->clock;
		bn_op_done(c, t, px);
		return TASK_RUN;
	default:
		return LAB_EENGINE;
	}
}

static void bn_next_phase(bn_ctx *c, int phase)
{
	c->phase = phase;
	c->i = 0;
	c->op = OS_START;
	switch (phase) {
	case BP_SEQ_STAT:
	case BP_SEQ_DELETE:
		bn_order(c, 0);
		break;
	case BP_RAND_CREATE:
		bn_names(c, 1);
		bn_order(c, 1);
		break;
	case BP_RAND_STAT:
	case BP_RAND_DELETE:
		bn_order(c, 1);
		break;
	default:
		break;
	}
	int px = bn_timed(phase);
	if (px >= 0)
		treelog_set_phase(c->tl, px_name[px]);
}

/* The bonnie++ process. */
static int bn_proc_step(sim *s, task *t)
{
	bn_ctx *c = t->ctx;
	int rc = 0;
	if (c->err)
		return TASK_DONE;
	int px = bn_timed(c->phase);
	switch (c->phase) {
	case BP_MKDIR:
		for (uint64_t k = 0; k < c->dirs; k++) {
			if (c->dir[k])
				continue;
			char name[24];
			snprintf(name, sizeof name, "%05llu", (unsigned long long)k);
			rc = vfs_mkdir(c->fs, t, c->root, BTRFS_FIRST_FREE_OBJECTID, name, &c->dir[k]);
			if (rc == FS_SPACE_WAIT)
				return TASK_BLOCKED;
			if (rc)
				break;
		}
		if (rc)
			break;
		bn_names(c, 0);
		bn_order(c, 0);
		bn_next_phase(c, BP_SEQ_CREATE);
		return TASK_RUN;
	case BP_SEQ_CREATE:
	case BP_RAND_CREATE:
	case BP_SEQ_STAT:
	case BP_RAND_STAT:
	case BP_SEQ_DELETE:
	case BP_RAND_DELETE:
		if (c->op == OS_START && !bn_op_begin(c, s, t)) {
			bn_next_phase(c, c->phase + 1);
			return TASK_RUN;
		}
		rc = c->phase == BP_SEQ_CREATE || c->phase == BP_RAND_CREATE ? bn_create_step(c, t, px)
		     : c->phase == BP_SEQ_STAT || c->phase == BP_RAND_STAT ? bn_stat_step(c, t, px)
									     : bn_delete_step(c, t, px);
		break;
	case BP_SEQ_SYNC:
	case BP_RAND_SYNC:
		/* sync(2) after the create loop, not timed */
		if (c->op != OS_COMMIT) {
			rc = vio_sync(c->fs, t);
			if (rc == 1)
				return TASK_BLOCKED;
			if (rc)
				break;
			c->op = OS_COMMIT;
		}
		rc = bn_commit(c, t);
		if (rc == 1)
			return TASK_BLOCKED;
		if (rc)
			break;
		bn_next_phase(c, c->phase + 1);
		return TASK_RUN;
	case BP_DONE:
	default:
		/* what is still queued goes into the tree as the unmount's
		 * commit would put it (not timed; nothing waits) */
		if (c->dl && dl_run_all(c->dl, NULL, DLW_OTHER) < 0) {
			bn_fail(c, s, LAB_EENGINE);
			return TASK_DONE;
		}
		/* the flusher and the kthread would tick forever */
		vio_dfs(c->fs)->flusher_armed = 0;
		c->tm.kthread_stop = 1;
		sim_stop(s);
		return TASK_DONE;
	}
	if (rc == TASK_RUN || rc == TASK_BLOCKED)
		return rc;
	bn_fail(c, s, rc ? rc : LAB_EENGINE);
	return TASK_DONE;
}

/* ------------------------------------------------------------- the run */

/* The run's files (files x scale) and memory (ram_gib x scale, at least
 * 8 MiB; what the rest of the system keeps, at most half of it). */
static void bn_sizes(const struct lab_run *r, uint64_t *files, uint64_t *ram, uint64_t *noncache)
{
	double scale = exp_param(r, "scale");
	double n = exp_param(r, "files") * scale;
	*files = n < 1 ? 1 : (uint64_t)(n + 0.5);
	*ram = (uint64_t)(exp_param(r, "ram_gib") * scale * (double)(1ull << 30));
	*noncache = (uint64_t)((double)BONNIE_NONCACHE_BYTES * scale);
	if (*ram < (8ull << 20))
		*ram = 8ull << 20;
	if (*noncache > *ram / 2)
		*noncache = *ram / 2;
}

/* Limits between parameters (lab_exp.validate): every file of a phase is
 * on the device at once (the creates come before the deletes), and the
 * page cache must hold one file while it is written (the model's writer
 * cannot make room for a file bigger than the cache: it would wait
 * forever, so such a setting is refused here, not run). */
static int bn_validate(struct lab_run *r)
{
	uint64_t files, ram, noncache;
	bn_sizes(r, &files, &ram, &noncache);
	double bytes = exp_param(r, "file_bytes");
	double cache = (double)(ram - noncache);
	if (bytes > cache)
		return exp_fail(r, LAB_ERANGE,
				"file_bytes (%.0f) is more than the %.0f-byte page cache of ram_gib x scale: "
				"the model's writer cannot yet make room for a file bigger than it", bytes, cache);
	fs_opts fo;
	fs_opts_default(&fo);
	/* data in whole sectors; a tenth of the device kept for metadata
	 * chunks (DUP) and the allocator's slack */
	double data = (double)files * ceil(bytes / SECTORSIZE) * SECTORSIZE;
	double room = 0.9 * (double)fo.dev_bytes;
	if (data > room)
		return exp_fail(r, LAB_ERANGE,
				"file_bytes (%.0f) x %.0f files (files x scale) is %.0f GiB of data: more than "
				"the %.0f GiB the simulated %.0f GiB device holds for data", bytes, (double)files,
				data / (1ull << 30), room / (1ull << 30), (double)fo.dev_bytes / (1ull << 30));
	return 0;
}

static int bn_setup(struct lab_run *r)
{
	bn_ctx *c = lab_calloc(1, sizeof(*c));
	if (!c)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	r->ctx = c;
	c->alloc_max_px = c->hold_max_px = -1;
	uint64_t ram;
	bn_sizes(r, &c->files, &ram, &c->noncache);
	c->dirs = (uint64_t)exp_param(r, "dirs");
	if (c->dirs > c->files)
		c->dirs = c->files;
	/* bonnie: files / dirs + 1 per directory, the last one the rest */
	c->per_dir = c->files / c->dirs + (c->dirs > 1 ? 1 : 0);
	c->bytes = (uint64_t)exp_param(r, "file_bytes");
	prng_seed(&c->rng, var_seed(r->sim, V_BONNIE_RAND));
	c->f = lab_calloc(c->files, sizeof(*c->f));
	c->order = lab_calloc(c->files, sizeof(*c->order));
	c->dir = lab_calloc(c->dirs, sizeof(*c->dir));
	if (!c->f || !c->order || !c->dir)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	const char *prof = exp_param_enum_name(r, "device");
	int rc = bdev_create(r->sim, prof, &c->dev);
	if (rc)
		return exp_fail(r, rc, "no device profile '%s'", prof);
	fs_opts fo;
	fs_opts_default(&fo);
	fo.patches = r->patches;
	rc = fs_mount(r->sim, c->dev, &fo, &c->fs);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	c->root = fs_root_lookup(c->fs, BTRFS_FS_TREE_OBJECTID);
	rc = trans_init(&c->tm, c->fs);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	c->tm_ready = 1;
	data_opts o;
	vio_opts_default(&o);
	/* the page cache may use what is not taken otherwise; dirty limits
	 * as a percentage of it (vm.dirty_background_ratio 10, dirty_ratio
	 * 20) */
	o.ram_bytes = ram - c->noncache;
	o.dirty_bg_bytes = o.ram_bytes / 10;
	rc = vio_attach(c->fs, &o, &c->tm);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	vio_dfs(c->fs)->sync_io = 0;
	dfs_start_flusher(vio_dfs(c->fs));
	rc = trans_kthread_start(&c->tm, 0);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	ebmem_cfg mc;
	ebmem_cfg_default(&mc);
	mc.ram_bytes = ram;
	rc = ebmem_create(r->sim, &mc, &c->mem);
	if (rc)
		return exp_fail(r, rc, "eb allocator");
	c->mem->probe = bn_probe;
	c->mem->probe_ctx = c;
	c->fs->page_alloc = bn_page_alloc;
	c->fs->page_alloc_ctx = c;
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	tc.max_records = 256;
	rc = treelog_create(r->sim, c->dev, c->mem, &tc, &c->tl);
	if (!rc)
		rc = treelog_attach(c->tl, c->fs);
	if (rc)
		return exp_fail(r, rc, "log tree");
	treelog_set_trans(c->tl, &c->tm);
	rc = dl_create(r->sim, c->fs, &c->tm, &c->dl);
	if (rc)
		return exp_fail(r, rc, "delayed items");
	c->dl->on_wait = bn_on_dl_wait;
	c->dl->obs_ctx = c;
	c->tl->on_leaf = bn_on_leaf;
	c->tl->on_log_commit = bn_on_log_commit;
	c->tl->on_log_trans = bn_on_log_trans;
	c->tl->on_scratch = bn_on_scratch;
	c->tl->obs_ctx = c;
	for (int i = 0; i < PX_N; i++)
		lhist_init(&c->lat[i]);
	c->proc = task_spawn(r->sim, "bonnie++", bn_proc_step, c, 0);
	if (!c->proc)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	return 0;
}

static double bn_progress(struct lab_run *r)
{
	bn_ctx *c = r->ctx;
	if (!c || !c->files)
		return 0;
	int k;
	switch (c->phase) {
	case BP_MKDIR: return 0;
	case BP_SEQ_CREATE: k = 0; break;
	case BP_SEQ_SYNC: k = 1; break;
	case BP_SEQ_STAT: k = 1; break;
	case BP_SEQ_DELETE: k = 2; break;
	case BP_RAND_CREATE: k = 3; break;
	case BP_RAND_SYNC: k = 4; break;
	case BP_RAND_STAT: k = 4; break;
	case BP_RAND_DELETE: k = 5; break;
	default: return 1;
	}
	/* creates are most of the work */
	static const double w0[7] = { 0, 0.3, 0.4, 0.5, 0.8, 0.9, 1.0 };
	double within = c->phase == BP_SEQ_SYNC || c->phase == BP_RAND_SYNC
		? 0 : (double)c->i / (double)c->files;
	return w0[k] + (w0[k + 1] - w0[k]) * within;
}

static int bn_collect(struct lab_run *r)
{
	bn_ctx *c = r->ctx;
	if (c->err)
		return exp_fail(r, c->err, "the run failed: %s", lab_strerror(c->err));
	if (c->phase != BP_DONE)
		return exp_fail(r, LAB_EENGINE, "bonnie++ did not finish");
	char name[40];
	for (int p = 0; p < PX_N; p++) {
		snprintf(name, sizeof name, "%s_lat_ms", px_name[p]);
		exp_metric(r, name, (double)c->lat[p].max_ns / 1e6);
		snprintf(name, sizeof name, "%s_p99_ms", px_name[p]);
		exp_metric(r, name, (double)lhist_quantile(&c->lat[p], 0.99) / 1e6);
		snprintf(name, sizeof name, "%s_per_s", px_name[p]);
		double secs = (double)(c->ph1[p] - c->ph0[p]) / 1e9;
		exp_metric(r, name, secs > 0 ? (double)c->nops[p] / secs : 0);
	}
	exp_metric(r, "eb_allocs", (double)c->mem->allocs);
	exp_metric(r, "eb_stalls", (double)(c->mem->slow_pages - c->mem->data_slow));
	exp_metric(r, "page_stalls", (double)c->mem->data_slow);
	exp_metric(r, "alloc_locked_max_ms", (double)c->alloc_locked_max / 1e6);
	exp_metric(r, "leaf_hold_max_ms", (double)c->leaf_hold_max / 1e6);
	exp_metric(r, "leaves_copied", (double)c->tl->leaves_copied);
	exp_metric(r, "log_commits", (double)c->tl->log_commits);
	exp_metric(r, "worker_leaf_waits", (double)c->dl->worker_wait.n);
	exp_metric(r, "worker_leaf_wait_max_ms", (double)c->dl->worker_wait.max_ns / 1e6);
	exp_metric(r, "delayed_balance_waits", (double)c->dl->balance_waits);
	exp_metric(r, "commits", (double)c->tm.ncommits);
	return 0;
}

/* The slowest operation of a phase, times in ms from its start. */
static void bn_op_json(const bn_ctx *c, const bn_op *op, strbuf *sb)
{
	simtime_t z = op->t0;
	js_obj(sb);
	js_kint(sb, "file", op->file);
	js_kint(sb, "dir", c->f[op->file].dir);
	js_kstr(sb, "name", op->name);
	js_knum(sb, "at_s", (double)op->t0 / 1e9);
	js_knum(sb, "lat_ms", (double)(op->t1 - op->t0) / 1e6);
	js_knum(sb, "open_ms", op->t_open ? (double)(op->t_open - z) / 1e6 : 0);
	js_knum(sb, "write_ms", op->t_write ? (double)(op->t_write - z) / 1e6 : 0);
	js_knum(sb, "fsync_ms", op->t_fsync ? (double)(op->t_fsync - z) / 1e6 : 0);
	js_knum(sb, "dfsync_ms", op->t_dfsync ? (double)(op->t_dfsync - z) / 1e6 : 0);
	js_knum(sb, "page_stall_ms", (double)op->page_stall_ns / 1e6);
	js_key(sb, "leaves");
	js_arr(sb);
	for (int i = 0; i < op->nleaf; i++) {
		const tl_leaf_ev *e = &op->leaf[i];
		js_obj(sb);
		js_kint(sb, "leaf", (int64_t)e->bytenr);
		js_kint(sb, "ino", (int64_t)e->ino);
		js_knum(sb, "t0_ms", ((double)e->locked_at - (double)z) / 1e6);
		js_knum(sb, "t1_ms", ((double)e->released - (double)z) / 1e6);
		js_knum(sb, "alloc_ms", (double)e->alloc_ns / 1e6);
		js_kbool(sb, "scratch", e->scratch);
		js_kbool(sb, "dir", e->dirpass);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_key(sb, "scratch");
	js_arr(sb);
	for (int i = 0; i < op->nsc; i++) {
		js_arr(sb);
		js_num(sb, ((double)op->sc0[i] - (double)z) / 1e6);
		js_num(sb, ((double)op->sc1[i] - (double)z) / 1e6);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	js_key(sb, "log_trans");
	js_arr(sb);
	for (int i = 0; i < op->nlt; i++) {
		js_arr(sb);
		js_num(sb, ((double)op->lt0[i] - (double)z) / 1e6);
		js_num(sb, ((double)op->lt1[i] - (double)z) / 1e6);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	/* the lock waits of the tasks inserting delayed items meanwhile */
	static const char *const who[] = { "worker", "commit", "other" };
	js_key(sb, "waiters");
	js_arr(sb);
	for (int i = 0; i < op->nw; i++) {
		const dl_wait_ev *w = &op->w[i];
		js_obj(sb);
		js_kstr(sb, "who", who[w->who < 3 ? w->who : 2]);
		js_kint(sb, "leaf", (int64_t)w->bytenr);
		js_kint(sb, "ino", (int64_t)w->ino);
		js_knum(sb, "t0_ms", ((double)w->from - (double)z) / 1e6);
		js_knum(sb, "t1_ms", ((double)w->to - (double)z) / 1e6);
		js_kbool(sb, "fsync_leaf", w->fsync_leaf);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_knum(sb, "balance_wait_ms", op->bal1 > op->bal0 ? (double)(op->bal1 - op->bal0) / 1e6 : 0);
	js_key(sb, "log_commits");
	js_arr(sb);
	for (int i = 0; i < op->nlc; i++) {
		js_arr(sb);
		js_num(sb, ((double)op->lc0[i] - (double)z) / 1e6);
		js_num(sb, ((double)op->lc1[i] - (double)z) / 1e6);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	/* transaction commits that overlapped it (the kthread's) */
	js_key(sb, "commits");
	js_arr(sb);
	for (int i = 0; i < c->tm.ncommits; i++) {
		const commit_rec *cr = &c->tm.commits[i];
		if (cr->end < op->t0 || cr->start > op->t1)
			continue;
		js_arr(sb);
		js_num(sb, ((double)cr->start - (double)z) / 1e6);
		js_num(sb, ((double)cr->end - (double)z) / 1e6);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	js_obj_end(sb);
}

static void bn_details(struct lab_run *r, strbuf *sb)
{
	bn_ctx *c = r->ctx;
	js_obj(sb);
	js_kint(sb, "files", (int64_t)c->files);
	js_kint(sb, "dirs", (int64_t)c->dirs);
	js_kint(sb, "file_bytes", (int64_t)c->bytes);
	js_kint(sb, "ram_bytes", (int64_t)c->mem->cfg.ram_bytes);
	js_kint(sb, "cache_limit_bytes", (int64_t)vio_dfs(c->fs)->o.ram_bytes);
	js_kbool(sb, "prealloc_scratch", fs_patch_on(c->fs, P_001_PREALLOC_SCRATCH_EB));
	/* the operations a recording of the page starts at (lab_record_opts
	 * from_op / nth): the longest allocation under a leaf's read lock and
	 * the longest leaf hold */
	js_key(sb, "moments");
	js_obj(sb);
	const struct { const char *k; int px; uint64_t i, ns; } mo[] = {
		{ "alloc_locked", c->alloc_max_px, c->alloc_max_i, c->alloc_locked_max },
		{ "leaf_hold", c->hold_max_px, c->hold_max_i, c->leaf_hold_max },
	};
	for (int k = 0; k < 2; k++) {
		if (mo[k].px < 0 || !mo[k].ns)
			continue;
		char op[32];
		snprintf(op, sizeof op, "op:%s", px_name[mo[k].px]);
		js_key(sb, mo[k].k);
		js_obj(sb);
		js_kstr(sb, "op", op);
		js_kint(sb, "nth", (int64_t)mo[k].i);
		js_knum(sb, "ms", (double)mo[k].ns / 1e6);
		js_obj_end(sb);
	}
	js_obj_end(sb);
	js_key(sb, "phases");
	js_obj(sb);
	for (int p = 0; p < PX_N; p++) {
		js_key(sb, px_name[p]);
		js_obj(sb);
		js_kint(sb, "ops", (int64_t)c->nops[p]);
		js_knum(sb, "start_s", (double)c->ph0[p] / 1e9);
		js_knum(sb, "end_s", (double)c->ph1[p] / 1e9);
		js_key(sb, "latency");
		lhist_json(&c->lat[p], sb);
		js_key(sb, "slowest");
		bn_op_json(c, &c->slowest[p], sb);
		js_obj_end(sb);
	}
	js_obj_end(sb);
	js_key(sb, "log");
	treelog_details_json(c->tl, sb, 0);
	js_key(sb, "mem");
	ebmem_details_json(c->mem, sb);
	js_key(sb, "delayed");
	dl_details_json(c->dl, sb);
	js_key(sb, "commits");
	trans_commits_json(&c->tm, 0, 64, sb);
	js_obj_end(sb);
}

static int bn_check(struct lab_run *r)
{
	bn_ctx *c = r->ctx;
	if (!c || c->phase != BP_DONE || c->fs->nrefq)
		return 0;
	return check_fs(c->fs);
}

static void bn_teardown(struct lab_run *r)
{
	bn_ctx *c = r->ctx;
	if (!c)
		return;
	if (c->tl && c->fs_active)
		treelog_fsync_abandon(c->tl, &c->fs_f);
	dl_destroy(c->dl);
	if (c->fs)
		vio_detach(c->fs);
	if (c->tm_ready)
		trans_destroy(&c->tm);
	treelog_destroy(c->tl);
	if (c->fs)
		fs_unmount(c->fs);
	ebmem_destroy(c->mem);
	bdev_destroy(c->dev);
	free(c->f);
	free(c->order);
	free(c->dir);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events: per file (files x scale, as bn_setup rounds
 * them) ~42 for its six phases' system calls, commits and log syncs, plus
 * its data's writeback (~1.2 x the square root of its pages: bigger files
 * go out in bigger bios); ~54 for the mount and the directories.
 * Coefficients: events per file of native runs (test_estimate keeps them
 * within a factor of 3 over random settings). */
static double bn_estimate(const struct lab_run *r)
{
	double n = exp_param(r, "files") * exp_param(r, "scale");
	double files = n < 1 ? 1 : floor(n + 0.5);
	double pages = ceil(exp_param(r, "file_bytes") / 4096);
	return 54 + files * (42 + 1.2 * sqrt(pages));
}

static const patch_id bn_patches[] = { P_001_PREALLOC_SCRATCH_EB };

/* both kernels, a size that is not the seed's, a single directory, and
 * memory small enough that the allocator meets pressure */
static const small_run bn_small[] = {
	{ "before", "files=60\nscale=1\nram_gib=0.25\nfile_bytes=65536\ndirs=3" },
	{ "after", "files=60\nram_gib=0.25\nfile_bytes=65536\ndirs=3" },
	{ "after", "files=12\ndirs=1\nfile_bytes=5000" },
};

const lab_exp exp_bonnie = {
	.name = "bonnie",
	.seed = "001",
	.title = "bonnie++ -b: an fsync that clones leaves under a read lock, or one scratch buffer",
	.has_variants = 1,
	.kernel = { [VAR_BEFORE] = "6.8", [VAR_AFTER] = "6.9" },
	.patches = bn_patches,
	.npatches = (int)(sizeof bn_patches / sizeof bn_patches[0]),
	.params = bn_params,
	.nparams = (int)(sizeof(bn_params) / sizeof(bn_params[0])),
	.metrics = bn_metrics,
	.nmetrics = (int)(sizeof(bn_metrics) / sizeof(bn_metrics[0])),
	.published = bn_published,
	.npublished = (int)(sizeof(bn_published) / sizeof(bn_published[0])),
	.small = bn_small,
	.nsmall = (int)(sizeof bn_small / sizeof bn_small[0]),
	.setup = bn_setup,
	.progress = bn_progress,
	.collect = bn_collect,
	.details = bn_details,
	.check = bn_check,
	.teardown = bn_teardown,
	.estimate = bn_estimate,
	.validate = bn_validate,
	.work_unit = "simulated events",
};
