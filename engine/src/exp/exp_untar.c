/*
 * exp_untar.c - seed 000: `tar xJf firefox-*.source.tar.xz` on btrfs, the
 * test of the commit message (5.9 54.3 s, 5.10 86.2 s, 5.10 with the fix
 * 38.8 s on 256 GiB of RAM, 56 CPUs and a 2 TiB Intel NVMe).
 *
 * The run:
 *   1. mount a file system of fs_gib on `device`, fs_used_gib of it in
 *      chunks already (full: a file system in use; the seed does not say,
 *      so that is the one fitted input, see ut_published) and the
 *      metadata profile mkfs gave it (meta_profile), the data path
 *      with the kernel's dirty limits for ram_gib of memory (background
 *      10%, foreground 20% of the dirtyable memory, 30 s expiry, the
 *      flusher's 5 s wakeups on the timer wheel), the transaction kthread
 *      (30 s), reservations as btrfs makes them (space_fs.h) and the
 *      async reclaim workers sized for `cpus`;
 *   2. the decompressor (xz, zstd, or none: tar reads the archive from
 *      the page cache) is a task that writes the archive into a 64 KiB
 *      pipe, paying a CPU cost per byte (costs.h UNTAR_*_NS_PER_BYTE);
 *   3. tar (one task) reads the pipe in 10 KiB records and, entry by
 *      entry in archive order: mkdir (a directory's times are set when
 *      tar leaves it), or creat, write() per record piece, futimens,
 *      close. Each reservation that does not fit parks tar on a ticket;
 *      the reclaim worker flushes delalloc (shrink_delalloc: the kernel's
 *      flush path) and tar goes on once its ticket is granted;
 *   4. elapsed_s is the time tar exits (`time tar xf`: the data is still
 *      dirty in the page cache, as it was).
 *
 * The archive (exp_untar_archive.c): a Firefox-like source tree of 226,000
 * files and 22,600 directories at scale 1, the same in every run.
 *
 * Switches (the registry's `after` run; `before` is 5.10 as it is):
 * kernel (5.10+fix, 5.10, 5.9) is the preset; flush, data_tickets and
 * check_tickets_first override it when set (ut_switches).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "costs.h"
#include "delalloc.h"
#include "exp.h"
#include "exp_untar_archive.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "reclaim.h"
#include "space_fs.h"
#include "trans.h"
#include "variation.h"
#include "vfs.h"
#include "vfs_io.h"

/* ------------------------------------------------------------- parameters */

/* fs_used_gib's default: the one unstated input fitted for the seed's box
 * (see ut_published) */
#define UT_FS_USED_FIT 1776
/* Of the device space in chunks before the untar, the share in metadata
 * chunks [estimate: `btrfs filesystem df` of file systems of general
 * files shows metadata at 1-2% of data]. Every old chunk is full, so the
 * share changes only the space_infos' totals, not the overcommit limit
 * (their used bytes cancel against their size). */
#define UT_USED_META_SHARE 0.01

static const char *const ut_decompress[] = { "xz", "zstd", "none", NULL };
enum { UT_XZ = 0, UT_ZSTD = 1, UT_NONE = 2 };
/* the kernel preset of the after run, first the after kernel itself */
static const char *const ut_kernels[] = { "5.10+fix", "5.10", "5.9", NULL };
static const char *const ut_flush[] = { "preset", "flusher", "inodes", "pages", NULL };
static const char *const ut_bit[] = { "preset", "0", "1", NULL };
/* mkfs.btrfs's metadata profile: auto is its default for the device
 * (btrfs-progs before 5.15: DUP on a rotational device, single on a
 * non-rotational one) */
static const char *const ut_profiles[] = { "auto", "single", "dup", NULL };
enum { UT_PROF_AUTO = 0, UT_PROF_SINGLE = 1, UT_PROF_DUP = 2 };

static const param_desc ut_params[] = {
	{ "device", PT_ENUM, 0, 0, 0, 0, bdev_profile_names, NULL,
	  "device profile (the seed: a 2 TiB Intel NVMe, nvme-dc)" },
	{ "ram_gib", PT_INT, 256, 1, 4096, 0, NULL, "GiB",
	  "memory: sets the dirty limits as the kernel computes them (the seed: 256 GiB)" },
	{ "cpus", PT_INT, 56, 1, 1024, 0, NULL, "CPUs",
	  "online CPUs: the CPUs the tasks share, flush_workers' threads, the reclaim target (the seed: 56)" },
	{ "fs_gib", PT_INT, 2048, 1, 65536, 0, NULL, "GiB",
	  "size of the file system: its unallocated space sets the metadata overcommit limit "
	  "(the seed: 2 TiB)" },
	{ "fs_used_gib", PT_INT, UT_FS_USED_FIT, 0, 65535, 0, NULL, "GiB",
	  "device space already in chunks before the untar (btrfs fi show's used; every chunk "
	  "full): the rest, unallocated, sets the overcommit limit. Not in the seed: FITTED on its "
	  "5.10 row (see fidelity); 0 = a fresh file system" },
	{ "meta_profile", PT_ENUM, UT_PROF_AUTO, 0, 0, 0, ut_profiles, NULL,
	  "metadata profile mkfs gave it: DUP halves what the unallocated space can back; auto = "
	  "mkfs's default of 2020 for the device (dup if rotational, else single)" },
	{ "decompress", PT_ENUM, UT_XZ, 0, 0, 0, ut_decompress, NULL,
	  "what tar reads through: xz (the seed's .tar.xz), zstd, or none (a plain .tar in the page cache)" },
	{ "scale", PT_FLOAT, 1, 0, 1, 1, NULL, NULL,
	  "share of the tree (0 < scale <= 1; 1 is the 226,000 files of the published run)" },
	{ "kernel", PT_ENUM, 0, 0, 0, 0, ut_kernels, NULL,
	  "after: the kernel preset of the three switches below (5.10+fix; 5.10; 5.9: "
	  "flusher, no data tickets, tickets checked first)" },
	{ "flush", PT_ENUM, 0, 0, 0, 0, ut_flush, NULL,
	  "after: shrink_delalloc's flush: flusher (writeback_inodes_sb_nr, 5.9), inodes (one whole "
	  "inode per item on flush_workers, 5.10), pages (sync_inode by nr_to_write pages, the fix); "
	  "preset: the kernel's" },
	{ "data_tickets", PT_ENUM, 0, 0, 0, 0, ut_bit, NULL,
	  "after: data reservations through tickets and the async data worker (1, 5.10) or the "
	  "writer allocating data chunks itself (0, 5.9); preset: the kernel's" },
	{ "check_tickets_first", PT_ENUM, 0, 0, 0, 0, ut_bit, NULL,
	  "after: shrink_delalloc checks the tickets before its wait (1, 5.9) or after it (0, 5.10); "
	  "preset: the kernel's" },
};

static const metric_desc ut_metrics[] = {
	{ "elapsed_s", "s", "time tar took (`time tar xf`: until it exits)" },
	{ "flush_calls", "count", "delalloc flushes reclaim started (shrink_delalloc rounds)" },
	{ "pages_flushed", "count", "pages those flushes wrote" },
	{ "inodes_flushed", "count", "inodes those flushes wrote" },
	{ "ticket_wait_s", "s", "time metadata tickets waited, summed over tickets" },
	{ "reclaim_cycles", "count", "shrink_delalloc calls (flush_space FLUSH_DELALLOC / _WAIT)" },
	{ "pages_needed_per_cycle", "pages", "pages shrink_delalloc asked for, per cycle" },
	{ "pages_flushed_per_cycle", "pages", "pages written, per cycle" },
	{ "inodes_per_cycle", "count", "inodes written, per cycle" },
	{ "writer_ticket_s", "s", "time tar spent parked on tickets" },
	{ "writer_tickets", "count", "times tar parked on a ticket" },
	{ "peak_may_use_gib", "GiB", "peak metadata bytes_may_use" },
	{ "overcommit_limit_gib", "GiB",
	  "metadata overcommit limit on reservations at the end: total_bytes + unallocated / 8 "
	  "(/ 16 with DUP), less what the metadata chunks hold" },
	{ "meta_tickets", "count", "metadata tickets queued" },
	{ "data_tickets", "count", "data tickets queued" },
	{ "decompress_s", "s", "CPU time of the decompressor" },
	{ "tar_cpu_s", "s", "CPU time of tar (its own and the kernel's on its behalf)" },
	{ "files", "count", "files extracted" },
	{ "dirs", "count", "directories extracted" },
	{ "archive_mib", "MiB", "size of the tar archive (the decompressor's output)" },
	{ "inline_files", "count", "files written as inline extents by reclaim's flushes" },
	{ "dirty_mib_at_exit", "MiB", "dirty page cache left when tar exited" },
	{ "commits", "count", "transaction commits during the run" },
	{ "peak_drefs_gib", "GiB",
	  "peak of the delayed refs reserve (256 KiB per ref head until the heads run)" },
	{ "peak_dref_heads", "count", "most delayed ref heads waiting to run" },
	{ "enospc", "count", "1: the file system filled up and tar stopped there (\"No space left on device\"; elapsed_s is until then), 0: the untar finished" },
};

/*
 * Seed 000's commit message: "I redid the users original test and got the
 * following results on one of our test machines (256GiB of ram, 56 cores,
 * 2TiB Intel NVMe drive)". One run each. The consumer-SSD rows are
 * withheld (seeds/README.md): not here, and nothing is chosen with them in
 * mind.
 */
/*
 * The file system's state is not in the seed, and it decides everything:
 * on a fresh 2 TiB file system the metadata overcommit ceiling
 * (total_bytes + unallocated / 8) is 256 GiB, the untar's reservations
 * peak at ~137 GiB, nothing ever waits and the three kernels tie. The
 * seed's times differ, so its file system was not fresh: one unstated
 * input is fitted for this machine, on the 5.10 row, and is the
 * experiment's default (UT_FS_USED_FIT): the device space already in
 * chunks, fs_used_gib = 1776 GiB of the 2048 (86.7%), which leaves a
 * ceiling of ~34.7 GiB. Why that input: the seed names the drive's size,
 * its NVMe device makes mkfs's metadata profile single (DUP alone would
 * give 128 GiB, still never reached), and a test machine's file system
 * in use is the plainest state that gives a ceiling the untar reaches (a
 * 256 GiB partition on the same drive gives the same ceiling; nothing on
 * file tells them apart). The 5.10 time is flat around the fit (82.5 s
 * at 1700 GiB, 87.4 s at 1800). The other rows are predictions at that
 * state. The fix's row is also where UNTAR_XZ_NS_PER_BYTE was fitted (on
 * the fresh file system, where the run is xz's time); at the fitted
 * state its reclaim adds 0.2 s. 5.9 is not reached (docs/fidelity.md: why).
 */
static const published_row ut_published[] = {
	{ "before", "", "elapsed_s", 86.212,
	  "seed 000, `time` of the untar on 5.10 (1m26.212s). FIT: fs_used_gib = 1776 (the device "
	  "space in chunks before the untar, not in the seed; the one input fitted for the seed's "
	  "box, on this row: a ceiling of ~34.7 GiB)", 0.05, 0, 1 },
	{ "after", "", "elapsed_s", 38.800,
	  "seed 000, `time` of the untar on 5.10 with the patch (0m38.800s); fitted (xz's cost, "
	  "on a fresh file system, where the run is xz's time; at the fitted one the fix's reclaim "
	  "adds 0.2 s)", 0.25, 0, 1 },
	{ "after", "kernel=5.9", "elapsed_s", 54.258,
	  "seed 000, `time` of the untar on 5.9 (0m54.258s); not met: 5.9's flusher work writes "
	  "~676 pages a cycle, as the fix does, and tar waits 0.2 s on tickets where 54.3 s needs "
	  "~15.5 s (docs/fidelity.md, known gaps)", -0.25 },
};

/* ------------------------------------------------------------- the archive */

#define UT_PIPE_BYTES 65536u     /* a pipe's 16 buffers of a page */
#define UT_CHUNK 16384u          /* what the decompressor writes at once */
/* The zoomed picture: every reclaim cycle, the writer's waits and the
 * device's requests from the first metadata ticket on, for this long */
#define UT_ZOOM_NS (500 * NS_PER_MS)

/* ---------------------------------------------------------------- state */

struct ut_ctx;

/* The pipe from the decompressor to tar: what was written when, and what
 * was read when (so each side sees the other's bytes only from the time
 * they were written or freed). */
#define UT_PQ 64
typedef struct ut_pipe {
	uint64_t total;            /* the archive's bytes */
	uint64_t produced, consumed;
	struct { uint64_t end; simtime_t at; } w[UT_PQ], r[UT_PQ];
	uint64_t wh, wn, rh, rn;   /* rings of writes and reads */
	uint64_t r_base;           /* read before the oldest read kept */
	waitq reader, writer;
} ut_pipe;

/* tar's place in the archive */
enum {
	TS_ENTRY = 0,  /* next entry: its header */
	TS_LEAVE,      /* set the times of the directories tar leaves */
	TS_MKDIR,
	TS_CREATE,
	TS_DATA,
	TS_UTIMES,
	TS_FINAL,      /* end of archive: the remaining directories' times */
	TS_DONE,
};

#define UT_ZOOM_CYCLES 512
#define UT_ZOOM_INODES 8192
#define UT_ZOOM_PARKS 4096
#define UT_ZOOM_IOS 8192
/* bytes_may_use in the zoom window: at most one sample this close to the
 * last, but always at tar's parking and waking and at a cycle's end */
#define UT_ZOOM_SPACE 4096
#define UT_ZOOM_SPACE_NS (250 * NS_PER_US)
#define UT_SAMPLES 512
#define UT_BUCKETS 256

typedef struct ut_cycle {
	simtime_t t0, t1;
	uint32_t state, rounds;
	uint64_t to_reclaim, wanted, flushed, inodes;
	uint32_t first, n;         /* its inodes in zin[] (zoom window only) */
} ut_cycle;

typedef struct ut_zinode {
	uint32_t entry;            /* archive entry index */
	uint32_t pages;
	simtime_t at;
} ut_zinode;

typedef struct ut_ctx {
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	int tm_ready;
	struct btrfs_root *root;
	ut_entry *e;
	uint64_t ne, nfiles, ndirs;
	uint64_t *dir_ino;         /* directory index -> inode */
	uint32_t *ino_entry;       /* file inode - first_ino -> entry + 1 */
	uint64_t ino_base, ino_cap;
	int decompress;
	double ns_per_byte;        /* decompressor */
	ut_pipe p;
	task *tar, *dec;
	/* tar */
	int ts;
	uint64_t ei;               /* current entry */
	uint64_t rec_left;         /* bytes left in the record tar holds */
	uint64_t off, data_left;
	struct inode *in;
	uint32_t *stack;           /* directories tar is inside (indices) */
	int depth, stack_cap;
	uint64_t next_dir;
	int err;
	/* the writer's tickets */
	int parked;
	simtime_t park_t0;
	uint64_t parks, park_ns;
	/* results */
	simtime_t t_end;
	int enospc;        /* tar stopped on a full file system */
	uint64_t inline_files;
	uint64_t cycles, cyc_wanted, cyc_flushed, cyc_inodes, flush_rounds;
	/* the picture: sampled state, cycles over time, a zoom window */
	simtime_t zoom0, zoom1;    /* decided at the first ticket */
	int zoom_set;
	ut_cycle cyc[UT_ZOOM_CYCLES];
	int ncyc;
	ut_zinode zin[UT_ZOOM_INODES];
	uint32_t nzin;
	ut_zinode cur[UT_ZOOM_INODES]; /* the cycle in progress (zoom) */
	uint32_t ncur;
	uint64_t cur_pages, cur_inodes;
	struct { simtime_t t0, t1; uint64_t bytes; } zpark[UT_ZOOM_PARKS];
	uint64_t park_bytes;       /* the ticket tar parked on (its bytes) */
	int nzpark;
	struct { simtime_t t0, t1; uint64_t bytes; } zio[UT_ZOOM_IOS];
	int nzio;
	struct { simtime_t t; uint64_t may_use, limit; } zsp[UT_ZOOM_SPACE];
	int nzsp;
	/* time buckets of the whole run (doubled when outgrown) */
	simtime_t bucket_ns;
	uint32_t b_cycles[UT_BUCKETS], b_ios[UT_BUCKETS];
	uint64_t b_pages[UT_BUCKETS], b_park[UT_BUCKETS];
	/* samples of the space state (doubled stride when full) */
	struct { double t, may_use, limit, delalloc, tickets, dirty; } smp[UT_SAMPLES];
	int nsmp;
	simtime_t smp_every, smp_next;
	uint64_t limit_end, peak_may_use;
	/* the archive's shape */
	uint64_t data_bytes, file_pages, small_files, max_file;
	/* the metadata worker's flush states over the run: calls, tickets
	 * granted during them, time (kept from the reclaim workers) */
	struct { uint64_t calls, grants, ns; } st[FLUSH_NSTATES];
	int have_states;
} ut_ctx;

static void ut_release(ut_ctx *c);

static void ut_fail(ut_ctx *c, sim *s, int rc)
{
	if (!c->err)
		c->err = rc;
	sim_stop(s);
}

/* ------------------------------------------------------- archive building */

/* The archive (exp_untar_archive.c) into the run's state, with tar's
 * directory stack and the directories' inodes sized for it. */
static int ut_archive_build(ut_ctx *c, double scale)
{
	uint64_t nd = ut_archive_dirs(scale);
	c->dir_ino = lab_calloc(nd, sizeof *c->dir_ino);
	c->stack = lab_malloc((nd + 1) * sizeof *c->stack);
	if (!c->dir_ino || !c->stack)
		return LAB_ENOMEM;
	c->stack_cap = (int)nd + 1;
	ut_archive a;
	int rc = ut_archive_make(&a, scale, c->stack);
	c->e = a.e;
	if (rc)
		return rc;
	c->ne = a.ne;
	c->nfiles = a.nfiles;
	c->ndirs = a.ndirs;
	c->data_bytes = a.data_bytes;
	c->file_pages = a.file_pages;
	c->small_files = a.small_files;
	c->max_file = a.max_file;
	c->p.total = a.bytes;
	return 0;
}

/* ------------------------------------------------------------ the pipe */

/* The time the pipe holds bytes up to offset `end` (exclusive), or
 * SIMTIME_MAX if the decompressor has not written them yet. */
static simtime_t pipe_ready_at(const ut_pipe *p, uint64_t end)
{
	if (end <= p->consumed)
		return 0;
	for (uint64_t i = 0; i < p->wn; i++) {
		uint64_t k = (p->wh + i) % UT_PQ;
		if (p->w[k].end >= end)
			return p->w[k].at;
	}
	return SIMTIME_MAX;
}

/* Bytes tar had read out of the pipe by time `at` (reads are in time
 * order; r_base: read before the oldest one kept). */
static uint64_t pipe_read_by(const ut_pipe *p, simtime_t at)
{
	uint64_t got = p->r_base;
	for (uint64_t i = 0; i < p->rn; i++) {
		uint64_t k = (p->rh + i) % UT_PQ;
		if (p->r[k].at > at)
			break;
		got = p->r[k].end;
	}
	return got;
}

/*
 * The decompressor (xz -dc | tar): decode a chunk, write it into the
 * pipe; when the pipe is full at its time, wait for tar's next read (a
 * read tar already did at a later time of its own: until then; none yet:
 * sleep until tar reads, pipe_write's wait).
 */
static int ut_dec_step(sim *s, task *t)
{
	ut_ctx *c = t->ctx;
	ut_pipe *p = &c->p;
	if (c->err || p->produced >= p->total)
		return TASK_DONE;
	uint64_t held = p->produced - pipe_read_by(p, t->clock);
	if (held + 4096 > UT_PIPE_BYTES) {
		for (uint64_t i = 0; i < p->rn; i++) {
			uint64_t k = (p->rh + i) % UT_PQ;
			if (p->r[k].at > t->clock &&
			    p->produced - p->r[k].end + 4096 <= UT_PIPE_BYTES) {
				task_wait_until(t, p->r[k].at);
				return TASK_RUN;
			}
		}
		task_park(t, &p->writer);
		return TASK_BLOCKED;
	}
	uint64_t n = UT_PIPE_BYTES - held;
	if (n > UT_CHUNK)
		n = UT_CHUNK;
	if (n > p->total - p->produced)
		n = p->total - p->produced;
	task_cpu(s, t, (uint64_t)((double)n * c->ns_per_byte + 0.5));
	p->produced += n;
	if (p->wn == UT_PQ) { /* at most 16 writes are unread: the oldest was read */
		p->wh = (p->wh + 1) % UT_PQ;
		p->wn--;
	}
	uint64_t k = (p->wh + p->wn) % UT_PQ;
	p->w[k].end = p->produced;
	p->w[k].at = t->clock;
	p->wn++;
	waitq_wake_all(s, &p->reader, t->clock);
	return TASK_RUN;
}

/* tar read()s the next record: 0 (rec_left set), 1 (t is parked: the
 * step returns TASK_BLOCKED), 2 (t waits until the bytes are written:
 * TASK_RUN). GNU tar reads until the record is full. */
static int ut_read_record(ut_ctx *c, sim *s, task *t)
{
	ut_pipe *p = &c->p;
	uint64_t want = p->total - p->consumed < UT_RECORD ? p->total - p->consumed : UT_RECORD;
	if (c->decompress != UT_NONE) {
		simtime_t at = pipe_ready_at(p, p->consumed + want);
		if (at == SIMTIME_MAX) {
			task_park(t, &p->reader);
			return 1;
		}
		if (at > t->clock) {
			task_wait_until(t, at);
			return 2;
		}
	}
	/* read(2): the syscall and the copy out of the pipe (or the page
	 * cache: decompress=none reads a cached .tar) */
	task_cpu(s, t, var_ns(s, V_SYSCALL, VFS_NS_SYSCALL) +
			       (want + 4095) / 4096 * C_READ_COPY_NS);
	p->consumed += want;
	c->rec_left = want;
	if (c->decompress == UT_NONE)
		return 0;
	while (p->wn > 1 && p->w[p->wh].end <= p->consumed) {
		p->wh = (p->wh + 1) % UT_PQ;
		p->wn--;
	}
	if (p->rn == UT_PQ) {
		p->r_base = p->r[p->rh].end;
		p->rh = (p->rh + 1) % UT_PQ;
		p->rn--;
	}
	uint64_t k = (p->rh + p->rn) % UT_PQ;
	p->r[k].end = p->consumed;
	p->r[k].at = t->clock;
	p->rn++;
	waitq_wake_all(s, &p->writer, t->clock);
	return 0;
}

/* ----------------------------------------------------------- the picture */

/* Sample the space state every smp_every (the stride doubles when the
 * samples fill, so they always cover the whole run). */
static void ut_sample(ut_ctx *c, simtime_t now)
{
	if (now < c->smp_next)
		return;
	if (c->nsmp == UT_SAMPLES) {
		for (int i = 0; i < UT_SAMPLES / 2; i++)
			c->smp[i] = c->smp[2 * i];
		c->nsmp = UT_SAMPLES / 2;
		c->smp_every *= 2;
	}
	const space_info *m = &c->fs->space.info[SPACE_META];
	const dfs *df = vio_dfs(c->fs);
	c->smp[c->nsmp].t = (double)now / 1e9;
	c->smp[c->nsmp].may_use = (double)m->bytes_may_use;
	c->smp[c->nsmp].limit = (double)fs_space_limit(c->fs, SPACE_META);
	c->smp[c->nsmp].delalloc = (double)df->delalloc_total;
	c->smp[c->nsmp].tickets = (double)space_tickets_waiting(m);
	c->smp[c->nsmp].dirty = (double)df->pcg.dirty * 4096.0;
	c->nsmp++;
	c->smp_next = now - now % c->smp_every + c->smp_every;
}

/* The bucket of time `at`, the buckets merged pairwise while it is past
 * the last one. */
static int ut_bucket(ut_ctx *c, simtime_t at)
{
	uint64_t k = at / c->bucket_ns;
	while (k >= UT_BUCKETS) {
		for (int i = 0; i < UT_BUCKETS / 2; i++) {
			c->b_cycles[i] = c->b_cycles[2 * i] + c->b_cycles[2 * i + 1];
			c->b_ios[i] = c->b_ios[2 * i] + c->b_ios[2 * i + 1];
			c->b_pages[i] = c->b_pages[2 * i] + c->b_pages[2 * i + 1];
			c->b_park[i] = c->b_park[2 * i] + c->b_park[2 * i + 1];
		}
		memset(c->b_cycles + UT_BUCKETS / 2, 0, sizeof c->b_cycles / 2);
		memset(c->b_ios + UT_BUCKETS / 2, 0, sizeof c->b_ios / 2);
		memset(c->b_pages + UT_BUCKETS / 2, 0, sizeof c->b_pages / 2);
		memset(c->b_park + UT_BUCKETS / 2, 0, sizeof c->b_park / 2);
		c->bucket_ns *= 2;
		k = at / c->bucket_ns;
	}
	return (int)k;
}

/* Whether `at` is inside the zoom window. It opens when tar first parks on
 * a metadata ticket (ut_park): the same moment in every kernel, since they
 * are the same until reclaim first runs. */
static int ut_in_zoom(const ut_ctx *c, simtime_t at)
{
	return c->zoom_set && at >= c->zoom0 && at < c->zoom1;
}

/* The metadata reservations against the limit at `at`, in the zoom window
 * (force: a moment the picture needs, whatever the spacing). */
static void ut_zoom_space(ut_ctx *c, simtime_t at, int force)
{
	if (!ut_in_zoom(c, at) || c->nzsp == UT_ZOOM_SPACE)
		return;
	if (!force && c->nzsp && at < c->zsp[c->nzsp - 1].t + UT_ZOOM_SPACE_NS)
		return;
	const space_info *m = &c->fs->space.info[SPACE_META];
	c->zsp[c->nzsp].t = at;
	c->zsp[c->nzsp].may_use = m->bytes_may_use;
	c->zsp[c->nzsp].limit = fs_space_limit(c->fs, SPACE_META);
	c->nzsp++;
}

/* fs_space_observer: an inode a reclaim flush wrote. */
static void ut_obs_flushed(void *ctx, struct dinode *d, uint64_t pages, simtime_t at)
{
	ut_ctx *c = ctx;
	if (d->i_size <= c->fs->opts.max_inline && pages)
		c->inline_files++;
	c->cur_pages += pages;
	c->cur_inodes++;
	if (!ut_in_zoom(c, at) || c->ncur == UT_ZOOM_INODES)
		return;
	uint64_t i = d->ino - c->ino_base;
	uint32_t entry = i < c->ino_cap && c->ino_entry[i] ? c->ino_entry[i] - 1 : UINT32_MAX;
	c->cur[c->ncur++] = (ut_zinode){ .entry = entry, .pages = (uint32_t)pages, .at = at };
}

/* fs_space_observer: a flush_space call ended; a delalloc one is a cycle. */
static void ut_obs_record(void *ctx, const struct reclaim_record *r)
{
	ut_ctx *c = ctx;
	if (r->state != FLUSH_DELALLOC && r->state != FLUSH_DELALLOC_WAIT)
		return;
	c->cycles++;
	c->cyc_wanted += r->pages_wanted;
	c->cyc_flushed += r->pages_flushed;
	c->cyc_inodes += r->inodes;
	c->flush_rounds += r->rounds;
	int b = ut_bucket(c, r->t);
	c->b_cycles[b]++;
	c->b_pages[b] += r->pages_flushed;
	if (ut_in_zoom(c, r->t) && c->ncyc < UT_ZOOM_CYCLES) {
		ut_cycle *z = &c->cyc[c->ncyc++];
		*z = (ut_cycle){ .t0 = r->t, .t1 = r->t + r->duration, .state = r->state,
				 .rounds = r->rounds, .to_reclaim = r->to_reclaim,
				 .wanted = r->pages_wanted, .flushed = r->pages_flushed,
				 .inodes = r->inodes, .first = c->nzin };
		uint32_t room = UT_ZOOM_INODES - c->nzin;
		uint32_t n = c->ncur < room ? c->ncur : room;
		memcpy(c->zin + c->nzin, c->cur, n * sizeof *c->cur);
		c->nzin += n;
		z->n = n;
	}
	c->ncur = 0;
	c->cur_pages = c->cur_inodes = 0;
	ut_zoom_space(c, r->t + r->duration, 1);
}

/* Every request the device served (bdev observer). */
static void ut_dev_observe(void *ctx, const bio *b)
{
	ut_ctx *c = ctx;
	c->b_ios[ut_bucket(c, b->submit)]++;
	if (c->zoom_set && b->submit >= c->zoom0 && b->submit < c->zoom1 &&
	    c->nzio < UT_ZOOM_IOS) {
		c->zio[c->nzio].t0 = b->submit;
		c->zio[c->nzio].t1 = b->complete;
		c->zio[c->nzio].bytes = b->bytes;
		c->nzio++;
	}
	ut_zoom_space(c, b->complete, 0);
}

/* tar parked on a ticket; woken (at the start of its next step). */
static int ut_park(ut_ctx *c, task *t)
{
	if (!c->parked) {
		c->parked = 1;
		c->park_t0 = t->clock;
		c->parks++;
		/* one writer: the queue's bytes are its ticket's */
		uint64_t meta = c->fs->space.info[SPACE_META].reclaim_size;
		c->park_bytes = meta + c->fs->space.info[SPACE_DATA].reclaim_size;
		if (!c->zoom_set && meta) {
			c->zoom_set = 1;
			c->zoom0 = t->clock;
			c->zoom1 = t->clock + UT_ZOOM_NS;
		}
		ut_zoom_space(c, t->clock, 1);
	}
	return TASK_BLOCKED;
}

static void ut_unpark(ut_ctx *c, task *t)
{
	if (!c->parked)
		return;
	c->parked = 0;
	simtime_t ns = t->clock - c->park_t0;
	c->park_ns += ns;
	c->b_park[ut_bucket(c, c->park_t0)] += ns;
	ut_zoom_space(c, t->clock, 1);
	if (c->zoom_set && c->nzpark < UT_ZOOM_PARKS && c->park_t0 < c->zoom1 &&
	    t->clock >= c->zoom0) {
		c->zpark[c->nzpark].t0 = c->park_t0;
		c->zpark[c->nzpark].t1 = t->clock;
		c->zpark[c->nzpark].bytes = c->park_bytes;
		c->nzpark++;
	}
}

/* ------------------------------------------------------------------ tar */

static void ut_finish(ut_ctx *c, sim *s, task *t);

/* An operation returned rc: 0 done, FS_SPACE_WAIT parked on a ticket, else
 * a failure. Returns the TASK_* the step returns when not 0. */
static int ut_op(ut_ctx *c, sim *s, task *t, int rc)
{
	if (rc == FS_SPACE_WAIT)
		return ut_park(c, t);
	if (rc == LAB_ENOSPC) {
		/* the file system is full: tar says "Cannot write: No space
		 * left on device" and exits; the run reports it (enospc) */
		ut_unpark(c, t);
		c->enospc = 1;
		ut_finish(c, s, t);
		return TASK_DONE;
	}
	ut_fail(c, s, rc < 0 ? rc : LAB_EENGINE);
	return TASK_DONE;
}

/* A name of the tree: "f0001234.cpp" (12 bytes) or "d0001234" (by hand:
 * snprintf was a few % of a full-scale run). len >= 13. */
static void ut_name(char *buf, size_t len, int dir, uint64_t i)
{
	(void)len;
	buf[0] = dir ? 'd' : 'f';
	i %= 10000000;
	for (int k = 7; k >= 1; k--, i /= 10)
		buf[k] = (char)('0' + i % 10);
	if (dir) {
		buf[8] = 0;
	} else {
		memcpy(buf + 8, ".cpp", 5);
	}
}

/* The end: stop what would tick forever (flusher, kthread). */
static void ut_finish(ut_ctx *c, sim *s, task *t)
{
	c->t_end = t->clock;
	c->ts = TS_DONE;
	vio_dfs(c->fs)->flusher_armed = 0;
	c->tm.kthread_stop = 1;
	sim_stop(s);
}

/*
 * One step of tar: read a record when the one held is used up, then the
 * next thing the archive asks for (an entry's header, a directory's
 * times, mkdir, creat, one write() of the data in this record, futimens
 * and close). A reservation that waits parks tar; the same call is made
 * again when it is woken.
 */
static int ut_tar_step(sim *s, task *t)
{
	ut_ctx *c = t->ctx;
	if (c->err)
		return TASK_DONE;
	ut_unpark(c, t);
	ut_sample(c, t->clock);
	ut_zoom_space(c, t->clock, 0);
	fs_info *fs = c->fs;
	const ut_entry *e = c->ei < c->ne ? &c->e[c->ei] : NULL;
	char name[32];
	int rc;
	switch (c->ts) {
	case TS_ENTRY:
		if (!e) {
			c->ts = TS_FINAL;
			return TASK_RUN;
		}
		if (c->rec_left == 0) {
			int r = ut_read_record(c, s, t);
			if (r)
				return r == 1 ? TASK_BLOCKED : TASK_RUN;
		}
		/* the header: parse it, build the path, and so on */
		c->rec_left -= UT_BLOCK;
		if (sim_recording_ops(s)) {
			/* a replay steps the untar entry by entry and aligns the
			 * kernels on the n-th one */
			const int64_t a[] = { (int64_t)c->ei };
			sim_rec(s, sim_trace_kind_args(s, e->dir ? "op:mkdir" : "op:extract", "n"), t, 1, a);
		}
		task_cpu(s, t, TAR_NS_ENTRY);
		if (e->dir) {
			c->ts = TS_LEAVE;
		} else {
			c->ts = TS_CREATE;
			c->data_left = e->size;
			c->off = 0;
		}
		return TASK_RUN;
	case TS_LEAVE:
		/* extracting outside a directory: its delayed times are set
		 * (GNU tar's apply_nonancestor_delayed_set_stat) */
		if (c->depth > 0 && c->stack[c->depth - 1] != e->parent) {
			rc = vfs_setattr(fs, t, c->root, c->dir_ino[c->stack[c->depth - 1]]);
			if (rc)
				return ut_op(c, s, t, rc);
			c->depth--;
			return TASK_RUN;
		}
		c->ts = TS_MKDIR;
		/* fall through */
	case TS_MKDIR: {
		uint32_t di = e->dir - 1;
		uint64_t pino = di == 0 ? BTRFS_FIRST_FREE_OBJECTID : c->dir_ino[e->parent];
		struct inode *in;
		ut_name(name, sizeof name, 1, di);
		rc = vfs_mkdir(fs, t, c->root, pino, name, &in);
		if (rc)
			return ut_op(c, s, t, rc);
		c->dir_ino[di] = in->ino;
		c->stack[c->depth++] = di;
		c->ei++;
		c->ts = TS_ENTRY;
		return TASK_RUN;
	}
	case TS_CREATE: {
		ut_name(name, sizeof name, 0, c->ei);
		rc = vfs_create(fs, t, c->root, c->dir_ino[e->parent], name, 0644, &c->in);
		if (rc)
			return ut_op(c, s, t, rc);
		uint64_t i = c->in->ino - c->ino_base;
		if (i < c->ino_cap)
			c->ino_entry[i] = (uint32_t)c->ei + 1;
		c->ts = TS_DATA;
		return TASK_RUN;
	}
	case TS_DATA:
		if (c->data_left) {
			if (c->rec_left == 0) {
				int r = ut_read_record(c, s, t);
				if (r)
					return r == 1 ? TASK_BLOCKED : TASK_RUN;
			}
			uint64_t n = c->data_left < c->rec_left ? c->data_left : c->rec_left;
			rc = vio_write(fs, t, c->in, c->off, n);
			if (rc == FS_SPACE_WAIT || rc < 0)
				return ut_op(c, s, t, rc);
			c->off += n;
			c->data_left -= n;
			c->rec_left -= n;
			if (c->data_left == 0) /* the last block's padding */
				c->rec_left -= (UT_BLOCK - e->size % UT_BLOCK) % UT_BLOCK;
			return rc == 1 ? TASK_BLOCKED : TASK_RUN; /* 1: throttled */
		}
		c->ts = TS_UTIMES;
		/* fall through */
	case TS_UTIMES:
		rc = vfs_setattr(fs, t, c->root, c->in->ino);
		if (rc)
			return ut_op(c, s, t, rc);
		fs_charge(fs, t, var_ns(s, V_SYSCALL, VFS_NS_SYSCALL)); /* close */
		c->in = NULL;
		c->ei++;
		c->ts = TS_ENTRY;
		return TASK_RUN;
	case TS_FINAL:
		/* the end-of-archive blocks, then the times of the directories
		 * still open */
		if (c->p.consumed < c->p.total) {
			int r = ut_read_record(c, s, t);
			return r == 1 ? TASK_BLOCKED : TASK_RUN;
		}
		if (c->depth > 0) {
			rc = vfs_setattr(fs, t, c->root, c->dir_ino[c->stack[c->depth - 1]]);
			if (rc)
				return ut_op(c, s, t, rc);
			c->depth--;
			return TASK_RUN;
		}
		ut_finish(c, s, t);
		return TASK_DONE;
	default:
		return TASK_DONE;
	}
}

/* ---------------------------------------------------------------- setup */

/* The switches of the after run (lab_exp.switches): the kernel preset,
 * then each switch that is not "preset". */
static void ut_switches(const lab_exp *e, const double *p, patchset *ps)
{
	int k = (int)p[exp_param_index(e, "kernel")];
	patch_kernel(ut_kernels[k], ps);
	int f = (int)p[exp_param_index(e, "flush")];
	if (f > 0)
		delalloc_flush_patches(f - 1, ps); /* flusher, inodes, pages */
	int dt = (int)p[exp_param_index(e, "data_tickets")];
	if (dt > 0)
		patch_set(ps, P_000_DATA_TICKETS, dt == 2);
	int ct = (int)p[exp_param_index(e, "check_tickets_first")];
	if (ct > 0)
		patch_set(ps, P_000_TICKET_CHECK_AFTER_WAIT, ct == 1);
}

/* Limits between parameters (lab_exp.validate), before anything is
 * built; the room mkfs's first chunks need is checked by the mount
 * (ut_setup), still before the run. */
static int ut_validate(struct lab_run *r)
{
	int fs_gib = (int)exp_param(r, "fs_gib"), used_gib = (int)exp_param(r, "fs_used_gib");
	if (used_gib >= fs_gib)
		return exp_fail(r, LAB_ERANGE, "fs_used_gib (%d) must be below fs_gib (%d)", used_gib,
				fs_gib);
	return 0;
}

static int ut_setup(struct lab_run *r)
{
	ut_ctx *c = lab_calloc(1, sizeof *c);
	if (!c)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	r->ctx = c;
	int rc = ut_archive_build(c, exp_param(r, "scale"));
	if (rc)
		return exp_fail(r, rc, "out of memory");
	c->decompress = exp_param_enum(r, "decompress");
	c->ns_per_byte = c->decompress == UT_XZ	    ? UNTAR_XZ_NS_PER_BYTE
			 : c->decompress == UT_ZSTD ? UNTAR_ZSTD_NS_PER_BYTE
						    : 0;
	int cpus = (int)exp_param(r, "cpus");
	uint64_t ram = (uint64_t)exp_param(r, "ram_gib") << 30;
	sim_set_ncpus(r->sim, cpus);
	const char *prof = exp_param_enum_name(r, "device");
	rc = bdev_create(r->sim, prof, &c->dev);
	if (rc)
		return exp_fail(r, rc, "no device profile '%s'", prof);
	fs_opts fo;
	fs_opts_default(&fo);
	int fs_gib = (int)exp_param(r, "fs_gib"), used_gib = (int)exp_param(r, "fs_used_gib");
	fo.dev_bytes = (uint64_t)fs_gib << 30;
	int mprof = exp_param_enum(r, "meta_profile");
	fo.meta_dup = mprof == UT_PROF_DUP || (mprof == UT_PROF_AUTO && bdev_rotational(c->dev));
	fo.used_bytes = (uint64_t)used_gib << 30;
	fo.used_meta_bytes = (uint64_t)((double)fo.used_bytes * UT_USED_META_SHARE) / 4096 * 4096;
	fo.patches = r->patches;
	rc = fs_mount(r->sim, c->dev, &fo, &c->fs);
	/* mkfs's first chunks (system, metadata, data) come out of what the
	 * fill leaves unallocated: too little is a bad pair of inputs, not a
	 * failure of the engine */
	if (rc == LAB_ENOSPC && used_gib > 0)
		return exp_fail(r, LAB_ERANGE,
				"fs_used_gib (%d) leaves too little of fs_gib (%d) unallocated for mkfs's first chunks",
				used_gib, fs_gib);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	rc = trans_init(&c->tm, c->fs);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	c->tm_ready = 1;
	/* the dirty limits of a machine with `ram` (vio_opts_ram), 30 s
	 * expiry, the flusher's 5 s wakeups on an HZ=250 timer wheel at the
	 * run's boot phase */
	data_opts o;
	vio_opts_default(&o);
	vio_opts_ram(&o, ram);
	o.jiffy_ns = 4 * NS_PER_MS;
	o.jiffies0 = (uint64_t)(var_phase(r->sim, V_TIMER_PHASE) * (double)(1u << 20));
	/* tar never comes back to a file it wrote: its writeback state goes
	 * once the file is written back (memory only; vfs_data.h) */
	o.release_idle_x = 1;
	rc = vio_attach(c->fs, &o, &c->tm);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	vio_dfs(c->fs)->sync_io = 0;
	dfs_start_flusher(vio_dfs(c->fs));
	rc = fs_space_config(c->fs, cpus);
	if (!rc)
		rc = trans_kthread_start(&c->tm, 0);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	fs_space_observer ob = { .ctx = c, .flushed = ut_obs_flushed, .record = ut_obs_record };
	fs_space_observe(c->fs, &ob);
	bdev_set_observer(c->dev, ut_dev_observe, c);
	c->root = fs_root_lookup(c->fs, BTRFS_FS_TREE_OBJECTID);
	/* inode numbers come in creation order from the root's next free */
	c->ino_base = BTRFS_FIRST_FREE_OBJECTID + 1;
	c->ino_cap = c->ne + 64;
	c->ino_entry = lab_calloc(c->ino_cap, sizeof *c->ino_entry);
	if (!c->ino_entry)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	c->bucket_ns = 50 * NS_PER_MS;
	c->smp_every = 10 * NS_PER_MS;
	c->tar = task_spawn(r->sim, "tar", ut_tar_step, c, 0);
	if (!c->tar)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	if (c->decompress != UT_NONE) {
		c->dec = task_spawn(r->sim, ut_decompress[c->decompress], ut_dec_step, c, 0);
		if (!c->dec)
			return exp_fail(r, LAB_ENOMEM, "out of memory");
	} else {
		c->p.produced = c->p.total;
	}
	return 0;
}

static double ut_progress(struct lab_run *r)
{
	ut_ctx *c = r->ctx;
	return c && c->ne ? (double)c->ei / (double)c->ne : 0;
}

static int ut_collect(struct lab_run *r)
{
	ut_ctx *c = r->ctx;
	if (c->err)
		return exp_fail(r, c->err, "the run failed: %s", lab_strerror(c->err));
	if (c->ts != TS_DONE)
		return exp_fail(r, LAB_EENGINE, "tar did not finish");
	const space_info *m = &c->fs->space.info[SPACE_META];
	const space_info *d = &c->fs->space.info[SPACE_DATA];
	double cyc = c->cycles ? (double)c->cycles : 1;
	exp_metric(r, "elapsed_s", (double)c->t_end / 1e9);
	exp_metric(r, "flush_calls", (double)c->flush_rounds);
	exp_metric(r, "pages_flushed", (double)c->cyc_flushed);
	exp_metric(r, "inodes_flushed", (double)c->cyc_inodes);
	exp_metric(r, "ticket_wait_s", (double)m->ticket_wait_ns / 1e9);
	exp_metric(r, "reclaim_cycles", (double)c->cycles);
	exp_metric(r, "pages_needed_per_cycle", (double)c->cyc_wanted / cyc);
	exp_metric(r, "pages_flushed_per_cycle", (double)c->cyc_flushed / cyc);
	exp_metric(r, "inodes_per_cycle", (double)c->cyc_inodes / cyc);
	exp_metric(r, "writer_ticket_s", (double)c->park_ns / 1e9);
	exp_metric(r, "writer_tickets", (double)c->parks);
	exp_metric(r, "peak_may_use_gib", (double)m->peak_may_use / (double)(1ull << 30));
	exp_metric(r, "overcommit_limit_gib",
		   (double)fs_space_limit(c->fs, SPACE_META) / (double)(1ull << 30));
	exp_metric(r, "meta_tickets", (double)m->tickets_queued);
	exp_metric(r, "data_tickets", (double)d->tickets_queued);
	exp_metric(r, "decompress_s", c->dec ? (double)c->dec->cpu_ns / 1e9 : 0);
	exp_metric(r, "tar_cpu_s", (double)c->tar->cpu_ns / 1e9);
	exp_metric(r, "files", (double)c->nfiles);
	exp_metric(r, "dirs", (double)c->ndirs);
	exp_metric(r, "archive_mib", (double)c->p.total / (1024.0 * 1024.0));
	exp_metric(r, "inline_files", (double)c->inline_files);
	exp_metric(r, "dirty_mib_at_exit", (double)vio_dfs(c->fs)->pcg.dirty * 4096.0 / (1024.0 * 1024.0));
	exp_metric(r, "commits", (double)c->tm.ncommits);
	fs_space_stats sst;
	fs_space_get_stats(c->fs, &sst);
	exp_metric(r, "peak_drefs_gib", (double)sst.drefs_peak / (double)(1ull << 30));
	exp_metric(r, "peak_dref_heads", (double)sst.drefs_heads_peak);
	exp_metric(r, "enospc", c->enospc);
	c->limit_end = fs_space_limit(c->fs, SPACE_META);
	c->peak_may_use = m->peak_may_use;
	const reclaim_ctl *rcl = fs_space_reclaim(c->fs);
	for (int k = 0; rcl && k < FLUSH_NSTATES; k++) {
		c->st[k].calls = rcl->per_state[k].calls;
		c->st[k].grants = rcl->per_state[k].grants;
		c->st[k].ns = rcl->per_state[k].ns;
	}
	c->have_states = rcl != NULL;
	/* a full-scale run holds a few hundred MiB of simulated kernel: give
	 * it back before the other kernel's run starts */
	ut_release(c);
	return 0;
}

/* The picture (web/views/untar): the space state sampled over the run,
 * the cycles, pages, device requests and the writer's parked time per
 * time bucket, and the zoom window from the first ticket on (each cycle
 * with the files it wrote, the writer's waits, the device's requests; ms
 * from the window's start). */
static void ut_details(struct lab_run *r, strbuf *sb)
{
	ut_ctx *c = r->ctx;
	const double GiB = (double)(1ull << 30), MiB = (double)(1ull << 20);
	js_obj(sb);
	js_kint(sb, "files", (int64_t)c->nfiles);
	js_kint(sb, "dirs", (int64_t)c->ndirs);
	js_knum(sb, "archive_mib", (double)c->p.total / MiB);
	js_kstr(sb, "decompress", ut_decompress[c->decompress]);
	js_knum(sb, "elapsed_s", (double)c->t_end / 1e9);
	js_key(sb, "archive");
	js_obj(sb);
	js_kint(sb, "data_bytes", (int64_t)c->data_bytes);
	js_knum(sb, "mean_bytes", (double)c->data_bytes / (double)c->nfiles);
	js_knum(sb, "pages_per_file", (double)c->file_pages / (double)c->nfiles);
	js_knum(sb, "at_most_2k", (double)c->small_files / (double)c->nfiles);
	js_kint(sb, "max_bytes", (int64_t)c->max_file);
	js_obj_end(sb);
	js_knum(sb, "limit_gib", (double)c->limit_end / GiB);
	js_knum(sb, "peak_may_use_gib", (double)c->peak_may_use / GiB);
	/* the flush states reclaim ran: calls, the tickets granted during
	 * them, seconds spent (metadata and data workers, priority flushers) */
	js_key(sb, "states");
	js_arr(sb);
	for (int k = 1; c->have_states && k < FLUSH_NSTATES; k++) {
		if (!c->st[k].calls)
			continue;
		js_obj(sb);
		js_kstr(sb, "state", reclaim_state_name(k));
		js_kint(sb, "calls", (int64_t)c->st[k].calls);
		js_kint(sb, "grants", (int64_t)c->st[k].grants);
		js_knum(sb, "s", (double)c->st[k].ns / 1e9);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_key(sb, "series");
	js_obj(sb);
	static const char *const sk[] = { "t", "may_use_gib", "limit_gib", "delalloc_mib", "tickets",
					  "dirty_mib" };
	for (int k = 0; k < 6; k++) {
		js_key(sb, sk[k]);
		js_arr(sb);
		for (int i = 0; i < c->nsmp; i++) {
			double v = k == 0 ? c->smp[i].t : k == 1 ? c->smp[i].may_use / GiB
				   : k == 2 ? c->smp[i].limit / GiB : k == 3 ? c->smp[i].delalloc / MiB
				   : k == 4 ? c->smp[i].tickets : c->smp[i].dirty / MiB;
			js_num(sb, v);
		}
		js_arr_end(sb);
	}
	js_obj_end(sb);
	uint64_t nb = c->t_end / c->bucket_ns + 1;
	if (nb > UT_BUCKETS)
		nb = UT_BUCKETS;
	js_key(sb, "buckets");
	js_obj(sb);
	js_knum(sb, "bucket_s", (double)c->bucket_ns / 1e9);
	static const char *const bk[] = { "cycles", "pages", "ios", "park_s" };
	for (int k = 0; k < 4; k++) {
		js_key(sb, bk[k]);
		js_arr(sb);
		for (uint64_t i = 0; i < nb; i++) {
			double v = k == 0 ? c->b_cycles[i] : k == 1 ? (double)c->b_pages[i]
				   : k == 2 ? c->b_ios[i] : (double)c->b_park[i] / 1e9;
			js_num(sb, v);
		}
		js_arr_end(sb);
	}
	js_obj_end(sb);
	js_key(sb, "zoom");
	if (!c->zoom_set) {
		js_null(sb);
		js_obj_end(sb);
		return;
	}
	simtime_t z0 = c->zoom0;
	js_obj(sb);
	js_knum(sb, "t0_s", (double)z0 / 1e9);
	js_knum(sb, "t1_s", (double)c->zoom1 / 1e9);
	js_key(sb, "cycles");
	js_arr(sb);
	for (int i = 0; i < c->ncyc; i++) {
		const ut_cycle *y = &c->cyc[i];
		js_obj(sb);
		js_knum(sb, "t0_ms", (double)(y->t0 - z0) / 1e6);
		js_knum(sb, "t1_ms", (double)(y->t1 - z0) / 1e6);
		js_kstr(sb, "state", reclaim_state_name((int)y->state));
		js_kint(sb, "rounds", y->rounds);
		js_kint(sb, "to_reclaim", (int64_t)y->to_reclaim);
		js_kint(sb, "wanted", (int64_t)y->wanted);
		js_kint(sb, "flushed", (int64_t)y->flushed);
		js_kint(sb, "inodes", (int64_t)y->inodes);
		js_key(sb, "files");
		js_arr(sb);
		for (uint32_t k = 0; k < y->n; k++) {
			const ut_zinode *z = &c->zin[y->first + k];
			char name[32] = "?";
			if (z->entry < c->ne)
				ut_name(name, sizeof name, 0, z->entry);
			js_arr(sb);
			js_str(sb, name);
			js_int(sb, z->entry < c->ne ? c->e[z->entry].size : 0);
			js_int(sb, z->pages);
			js_num(sb, (double)(z->at - z0) / 1e6);
			js_arr_end(sb);
		}
		js_arr_end(sb);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_key(sb, "parks");
	js_arr(sb);
	for (int i = 0; i < c->nzpark; i++) {
		js_arr(sb);
		js_num(sb, ((double)c->zpark[i].t0 - (double)z0) / 1e6);
		js_num(sb, ((double)c->zpark[i].t1 - (double)z0) / 1e6);
		js_int(sb, (int64_t)c->zpark[i].bytes);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	js_key(sb, "ios");
	js_arr(sb);
	for (int i = 0; i < c->nzio; i++) {
		js_arr(sb);
		js_num(sb, ((double)c->zio[i].t0 - (double)z0) / 1e6);
		js_num(sb, ((double)c->zio[i].t1 - (double)z0) / 1e6);
		js_int(sb, (int64_t)c->zio[i].bytes);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	/* [ms, bytes_may_use GiB, limit GiB], in the order taken (a device
	 * completion may be taken ahead of tar's clock) */
	js_key(sb, "space");
	js_arr(sb);
	for (int i = 0; i < c->nzsp; i++) {
		js_arr(sb);
		js_num(sb, ((double)c->zsp[i].t - (double)z0) / 1e6);
		js_num(sb, (double)c->zsp[i].may_use / GiB);
		js_num(sb, (double)c->zsp[i].limit / GiB);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	js_obj_end(sb);
	js_obj_end(sb);
}

/* Free the simulated machine (file system, data path, device); what the
 * metrics and the picture need is in the ctx. The run's events still
 * queued are dropped with the simulator, never run. */
static void ut_release(ut_ctx *c)
{
	if (c->fs) {
		fs_space_observe(c->fs, NULL);
		vio_detach(c->fs);
		if (c->tm_ready)
			trans_destroy(&c->tm);
		c->tm_ready = 0;
		fs_unmount(c->fs);
		c->fs = NULL;
	}
	bdev_destroy(c->dev);
	c->dev = NULL;
	free(c->dir_ino);
	free(c->stack);
	free(c->ino_entry);
	c->dir_ino = NULL;
	c->stack = NULL;
	c->ino_entry = NULL;
}

static void ut_teardown(struct lab_run *r)
{
	ut_ctx *c = r->ctx;
	if (!c)
		return;
	ut_release(c);
	free(c->e);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events: ~5.7 per archive entry (its create or mkdir,
 * the read of the archive, the write, the writeback and the reclaim it
 * meets). Coefficients: events of native runs (test_estimate keeps them
 * within a factor of 3 over random settings). */
static double ut_estimate(const struct lab_run *r)
{
	return 10 + 5.7 * (double)(UT_FILES + UT_DIRS) * exp_param(r, "scale");
}

/* What 5.10+fix adds to 5.10, then what 5.9 lacks (the switches) */
static const patch_id ut_patches[] = { P_000_FLUSH_BY_PAGES, P_000_START_DELALLOC_ROOTS,
				       P_000_DATA_TICKETS, P_000_TICKET_CHECK_AFTER_WAIT };

/* each kernel on a file system small enough to run short of metadata
 * (tickets, reclaim), zstd; a disk, a plain .tar, little memory */
static const small_run ut_small[] = {
	{ "before", "scale=0.002\nfs_gib=1\nfs_used_gib=0" },
	{ "after", "scale=0.002\nfs_gib=1\nfs_used_gib=0" },
	{ "after", "scale=0.002\nfs_gib=1\nfs_used_gib=0\nkernel=5.9\ndecompress=zstd" },
	{ "after", "scale=0.002\nfs_gib=1\nfs_used_gib=0\ndecompress=none\ndevice=hdd\nram_gib=1\ncpus=2" },
	/* a file system in use, DUP metadata */
	{ "before", "scale=0.002\nfs_gib=4\nfs_used_gib=3\nmeta_profile=dup" },
};

const lab_exp exp_untar = {
	.name = "untar",
	.seed = "000",
	.title = "untar of the Firefox source: reclaim that flushes whole inodes instead of pages",
	.has_variants = 1,
	.kernel = { [VAR_BEFORE] = "5.10", [VAR_AFTER] = "5.10+fix" },
	.patches = ut_patches,
	.npatches = (int)(sizeof ut_patches / sizeof ut_patches[0]),
	.switches = ut_switches,
	.params = ut_params,
	.nparams = (int)(sizeof ut_params / sizeof ut_params[0]),
	.metrics = ut_metrics,
	.nmetrics = (int)(sizeof ut_metrics / sizeof ut_metrics[0]),
	.published = ut_published,
	.npublished = (int)(sizeof ut_published / sizeof ut_published[0]),
	.small = ut_small,
	.nsmall = (int)(sizeof ut_small / sizeof ut_small[0]),
	.setup = ut_setup,
	.progress = ut_progress,
	.collect = ut_collect,
	.details = ut_details,
	.teardown = ut_teardown,
	.estimate = ut_estimate,
	.validate = ut_validate,
	.work_unit = "simulated events",
};
