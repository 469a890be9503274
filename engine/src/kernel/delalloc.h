/*
 * delalloc.h - flushing delalloc to reclaim metadata space: shrink_delalloc
 * and the three ways btrfs has started that writeback (seed 000), chosen
 * by the kernel's patches (patches.def) P_000_START_DELALLOC_ROOTS (the
 * regression, 38d715f494f2) and P_000_FLUSH_BY_PAGES (the fix,
 * e076ab2a2ca7, which changes the regressed code and nothing without it):
 *
 *   DELALLOC_FLUSHER  neither (5.9): writeback_inodes_sb_nr(nr_pages): a
 *                   work item for the bdi flusher thread, which writes
 *                   nr_pages pages from the dirty inodes it visits; the
 *                   caller waits for it.
 *   DELALLOC_INODES the regression alone (5.10):
 *                   btrfs_start_delalloc_roots(items) queues one
 *                   flush_workers job per inode from the head of each
 *                   root's delalloc list, each flushing the WHOLE inode,
 *                   stops after `items` inodes and waits for them.
 *   DELALLOC_PAGES  both (5.10+fix): btrfs_start_delalloc_roots(nr_pages)
 *                   with a writeback_control: sync_inode() inline per
 *                   inode, each page written decrements nr_to_write, stop
 *                   at <= 0. A full flush (nr == U64_MAX) keeps the
 *                   workqueue path.
 *
 * The unit of the flush is the whole point: 64 pages per reclaim "item"
 * (256 KiB) against one inode per item. With 1-2 page files the 5.10 path
 * flushes 32-64x fewer pages per cycle; with one huge file it flushes the
 * whole file.
 *
 * The file system is reached through delalloc_ops (inodes are opaque
 * handles of the data path), so the state machine
 * runs against the real data path or against a unit test's fake. Workers
 * (flush_workers: min(ncpus + 2, 8) threads; the flusher: 1) are sim tasks
 * that run queued jobs and wake the waiter when its batch is done.
 *
 * shrink_delalloc is resumable: delalloc_shrink_step() does work on the
 * caller's task until it must wait (DELALLOC_PARKED: the step must return
 * TASK_BLOCKED, something wakes the task later), yields (DELALLOC_MORE:
 * return TASK_RUN and call again) or finishes (0).
 */
#ifndef DELALLOC_H
#define DELALLOC_H

#include <stdint.h>

#include "patches.h"
#include "sim.h"
#include "space.h"
#include "strbuf.h"

/* The flush path, derived from the patch bits (never stored). */
enum delalloc_flush {
	DELALLOC_FLUSHER = 0,
	DELALLOC_INODES = 1,
	DELALLOC_PAGES = 2,
	DELALLOC_NFLUSH
};

#define DELALLOC_PARKED 1
#define DELALLOC_MORE 2
#define DELALLOC_MAX_WORKERS 8
#define DELALLOC_MIN_WRITEBACK_PAGES 1024 /* fs-writeback.c: 4 MiB */

struct dl_batch;

/*
 * What the flushing needs from the file system. Every function is
 * required unless marked optional.
 */
typedef struct delalloc_ops {
	void *ctx;
	/* fs_info->delalloc_bytes: bytes of delalloc not yet run. */
	uint64_t (*delalloc_bytes)(void *ctx);
	/* fs_info->dio_bytes (optional: none). */
	uint64_t (*dio_bytes)(void *ctx);
	/* Inodes on the delalloc lists. */
	uint64_t (*nr_inodes)(void *ctx);
	/* Up to max delalloc inodes in flush order: roots in delalloc_roots
	 * order, each root's delalloc_inodes from its head. Returns count. */
	uint64_t (*list_inodes)(void *ctx, void **out, uint64_t max);
	/* Write back dirty delalloc pages of inode from offset 0, WB_SYNC_NONE
	 * (models btrfs_writepages through do_writepages), charging t. Each
	 * page written decrements *nr_to_write (INT64_MAX: the whole inode);
	 * the data path may raise it to finish a delalloc range. Returns pages
	 * written or a negative LAB_E*. */
	int64_t (*writepages)(void *ctx, task *t, void *inode,
			      int64_t *nr_to_write);
	/* Optional: the inode has async (compressed) extents in flight
	 * (BTRFS_INODE_HAS_ASYNC_EXTENT): btrfs writes it a second time. */
	int (*inode_async)(void *ctx, void *inode);
	/* Optional: the inode must not be flushed from reclaim
	 * (BTRFS_INODE_NO_DELALLOC_FLUSH, set while a clone of an inline
	 * extent holds it: flushing it from reclaim could deadlock, commit
	 * 3d45f221ce62). btrfs_start_delalloc_roots skips it; the 5.9
	 * flusher path does not know the flag. */
	int (*inode_no_flush)(void *ctx, void *inode);
	/* Wait for up to nr ordered extents to complete (models
	 * btrfs_wait_ordered_roots). Returns 0 when done (t->clock advanced)
	 * or DELALLOC_PARKED: t was parked and is woken when done. */
	int (*wait_ordered)(void *ctx, task *t, uint64_t nr);
	/* Optional (compression): async_delalloc_pages, and a wait until it is
	 * <= target (0 / DELALLOC_PARKED). */
	uint64_t (*async_pages)(void *ctx);
	int (*wait_async_pages)(void *ctx, task *t, uint64_t target);
	/* Optional (the 5.9 path): writeback_inodes_sb_nr on the file
	 * system's own flusher thread, the one its periodic and background
	 * writeback runs on: queue a work of nr_pages for batch b (t queues
	 * it, at t->clock) and return 0, or a LAB_E*. The data path then
	 * reports each inode it wrote (delalloc_sb_inode) and the work's end
	 * (delalloc_sb_done). Without it a flusher workqueue of delalloc's
	 * own stands in (unit tests' fakes). */
	int (*queue_sb_work)(void *ctx, task *t, int64_t nr_pages, struct dl_batch *b);
} delalloc_ops;

struct delalloc_ctl;

/* A set of queued jobs a task waits for. */
typedef struct dl_batch {
	uint64_t pending;
	uint64_t pages, inodes;
	task *waiter; /* woken when pending drops to 0 */
} dl_batch;

typedef struct dl_job {
	void *inode;         /* NULL: a writeback_inodes_sb_nr job */
	int64_t nr_pages;    /* sb job: pages to write */
	dl_batch *batch;
} dl_job;

/* A workqueue of sim tasks. */
typedef struct dl_wq {
	const char *name;
	struct delalloc_ctl *dc;
	task *threads[DELALLOC_MAX_WORKERS];
	int nthreads;
	waitq idle;
	dl_job *q;
	uint64_t head, len, cap;
	uint64_t jobs_run, pages;
} dl_wq;

/* One shrink_delalloc call in progress (the caller owns it). */
typedef struct shrink_run {
	space_info *si;
	uint64_t to_reclaim; /* after rounding to items * 256 KiB */
	uint64_t items;      /* UINT64_MAX: flush everything */
	uint64_t nr_pages;   /* pages wanted by the last flush */
	int wait_ordered;
	int phase;
	int loops;
	dl_batch batch;
	/* a flush by pages in progress across steps (the caller yields once
	 * its clock runs a millisecond ahead of the simulation, so that its
	 * tree work does not reserve locks in the others' future): pages
	 * left to write, list entries at the head it visited and left there */
	int64_t wbc_left;
	uint64_t wbc_skip;
	/* results */
	uint64_t pages_wanted, pages_flushed, inodes_touched, flushes;
} shrink_run;

typedef struct delalloc_ctl {
	sim *sim;
	space_ctl *sc;
	delalloc_ops ops;
	const patchset *patches; /* the file system's (not owned) */
	int ncpus;
	simtime_t jiffy_ns;      /* the WAIT-less sleep (RECLAIM_NS_JIFFY) */
	/* shrink_delalloc asks for items_factor x calc_reclaim_items_nr
	 * items: 2 in 5.10 ("reclaiming that much data doesn't really track
	 * exactly"); an experiment may set 1 to study a kernel without the
	 * doubling (which 5.9 had is not verified here). */
	int items_factor;
	dl_wq flush_workers, flusher;
	void **scratch;
	uint64_t scratch_cap;
	/* statistics */
	uint64_t shrinks, flushes, pages_wanted, pages_flushed, inodes_touched;
	uint64_t jobs_queued, inline_syncs, sb_works, ordered_waits, jiffy_sleeps;
	uint64_t skipped_no_flush;
	int ser_inodes;
	int errors;
	/* Optional observer: each inode a reclaim flush wrote (pages may be
	 * 0: visited, nothing written), on whichever task wrote it. */
	void (*observe)(void *ctx, void *inode, uint64_t pages, simtime_t at);
	void *observe_ctx;
} delalloc_ctl;

/* Set up the flushing of a file system running `patches` (not copied:
 * it must outlive dc); ncpus sizes flush_workers (min(ncpus + 2, 8)).
 * Spawns the worker tasks (parked until needed). Returns 0, LAB_EINVAL
 * (no patches, missing op) or LAB_ENOMEM. */
int delalloc_init(delalloc_ctl *dc, sim *s, space_ctl *sc,
		  const delalloc_ops *ops, const patchset *patches, int ncpus);
void delalloc_destroy(delalloc_ctl *dc);
/* The flush path of a kernel, and the patch bits that choose a path (the
 * two of seed 000 set or cleared, the others untouched). */
int delalloc_flush_of(const patchset *ps);
void delalloc_flush_patches(int flush, patchset *ps);
/* "flusher" / "inodes" / "pages", and the reverse (-1 if unknown). */
const char *delalloc_flush_name(int flush);
int delalloc_flush_parse(const char *name);

/*
 * Begin shrink_delalloc(to_reclaim) for space_info si: items =
 * items_factor (2) * calc_reclaim_items_nr(to_reclaim), to_reclaim =
 * items * 256 KiB
 * (to_reclaim == UINT64_MAX: items = UINT64_MAX, a full flush). With
 * wait_ordered (FLUSH_DELALLOC_WAIT) each round waits for up to `items`
 * ordered extents; otherwise it sleeps one jiffy.
 */
void delalloc_shrink_begin(delalloc_ctl *dc, shrink_run *sr, space_info *si,
			   uint64_t to_reclaim, int wait_ordered);
/* Advance it on task t: 0 (finished), DELALLOC_PARKED or DELALLOC_MORE. */
int delalloc_shrink_step(delalloc_ctl *dc, shrink_run *sr, task *t);

/* The file system's flusher wrote `pages` of inode for a work that
 * queue_sb_work queued. */
void delalloc_sb_inode(delalloc_ctl *dc, void *inode, uint64_t pages, simtime_t at);
/* That work is over (wb_wait_for_completion's wakeup): its batch gets
 * the pages and inodes, and its waiter is woken after a wakeup's
 * latency. */
void delalloc_sb_done(delalloc_ctl *dc, struct dl_batch *b, uint64_t pages, uint64_t inodes,
		      simtime_t at);

/* Counters and the workqueues as a JSON object. */
void delalloc_json(const delalloc_ctl *dc, strbuf *out);

#endif /* DELALLOC_H */
