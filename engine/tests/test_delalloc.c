/*
 * test_delalloc.c - shrink_delalloc's cost driver on a small fake file
 * system: inodes with dirty delalloc pages holding their metadata
 * reservations, a writepages that starts one ordered extent per call, a
 * device that completes them, and finish_ordered_io giving the
 * reservation back. A "tar" task creates small files under a full
 * metadata space_info; the async reclaim worker flushes with each variant.
 *
 * Asserted shapes (counts from the simulation, no published numbers):
 * small files: 5.10 flushes ~64/p pages per cycle fewer than the fixed
 * kernel and needs that many more cycles; one huge file: 5.10 flushes the
 * whole file while the fixed kernel flushes about nr_pages.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "delalloc.h"
#include "lab.h"
#include "reclaim.h"
#include "sim.h"
#include "space.h"
#include "t.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define PAGE 4096ull

/* ------------------------------------------------------- the fake fs */

typedef struct finode {
	uint64_t dirty; /* delalloc pages not yet written */
	uint64_t ext;   /* outstanding extents counted for the delalloc range */
	int no_flush;   /* BTRFS_INODE_NO_DELALLOC_FLUSH (a clone holds it) */
	inode_rsv ir;
} finode;

typedef struct foe {
	finode *ino;
	uint64_t pages;
	simtime_t done;
} foe;

typedef struct ffs {
	sim *s;
	space_ctl *sc;
	finode *ino;
	uint64_t n, cap, head;
	uint64_t ndirty, delalloc_bytes;
	simtime_t dev_busy;
	foe *oe;
	uint64_t oe_head, oe_len, oe_cap;
	task *ordered_waiter;
	int raise;   /* writepages raises nr_to_write to finish a range */
	int inline1; /* one-page files are inline extents: the flush itself
		      * releases their reservation (cow_file_range_inline) */
	int hdd;     /* a disk: one seek per write, one write at a time */
	uint64_t pages_written, ordered_done;
} ffs;

static uint64_t f_delalloc_bytes(void *ctx)
{
	return ((ffs *)ctx)->delalloc_bytes;
}

static uint64_t f_nr_inodes(void *ctx)
{
	return ((ffs *)ctx)->ndirty;
}

/* Dirty inodes in creation order (the delalloc_inodes FIFO). */
static uint64_t f_list(void *ctx, void **out, uint64_t max)
{
	ffs *f = ctx;
	while (f->head < f->n && f->ino[f->head].dirty == 0)
		f->head++;
	uint64_t k = 0;
	for (uint64_t i = f->head; i < f->n && k < max; i++)
		if (f->ino[i].dirty)
			out[k++] = &f->ino[i];
	return k;
}

/* finish_ordered_io: the ordered extent goes, its csums are inserted, the
 * inode's reservation shrinks and the excess goes back to the space_info. */
static void f_complete(sim *s, void *arg)
{
	ffs *f = arg;
	assert(f->oe_len > 0);
	foe *o = &f->oe[f->oe_head];
	f->oe_head = (f->oe_head + 1) % f->oe_cap;
	f->oe_len--;
	space_delalloc_mod_extents(f->sc, &o->ino->ir, -1, sim_now(s));
	space_delalloc_release_metadata(f->sc, &o->ino->ir, o->pages * PAGE, sim_now(s));
	f->ordered_done++;
}

static int64_t f_writepages(void *ctx, task *t, void *inode, int64_t *nr)
{
	ffs *f = ctx;
	finode *ino = inode;
	if (f->raise && (uint64_t)*nr < ino->dirty) {
		/* writepage_delalloc: a delalloc range (at most 128 MiB) is run
		 * whole, and nr_to_write is raised towards it, capped at 8192
		 * pages unless the range is under 16384 */
		uint64_t range = ino->dirty < 32768 ? ino->dirty : 32768;
		uint64_t thresh = range < 2 * 8192 ? range : 8192;
		if ((uint64_t)*nr < range)
			*nr = (int64_t)(range < thresh ? range : thresh);
	}
	uint64_t k = ino->dirty < (uint64_t)*nr ? ino->dirty : (uint64_t)*nr;
	if (k == 0)
		return 0;
	if (f->inline1 && ino->dirty == 1) {
		/* an inline extent: no bio, no ordered extent; the range's
		 * extent and csum reservation go as delalloc is cleared */
		task_cpu(f->s, t, 3000);
		ino->dirty = 0;
		f->delalloc_bytes -= PAGE;
		*nr -= 1;
		f->pages_written++;
		f->ndirty--;
		space_delalloc_mod_extents(f->sc, &ino->ir, -(int64_t)ino->ext, t->clock);
		ino->ext = 0;
		space_delalloc_release_metadata(f->sc, &ino->ir, PAGE, t->clock);
		f->ordered_done++;
		return 1;
	}
	/* cow_file_range + page writeback: 3 us per extent, 0.3 us per page */
	task_cpu(f->s, t, 3000 + 300 * k);
	ino->dirty -= k;
	f->delalloc_bytes -= k * PAGE;
	*nr -= (int64_t)k;
	f->pages_written += k;
	space_delalloc_mod_extents(f->sc, &ino->ir, 1, t->clock); /* ordered */
	uint64_t ext = space_count_max_extents(ino->dirty * PAGE);
	space_delalloc_mod_extents(f->sc, &ino->ir, (int64_t)ext - (int64_t)ino->ext,
				   t->clock);
	ino->ext = ext;
	if (ino->dirty == 0)
		f->ndirty--;
	/* the device: an SSD streams 2 GB/s and completes a write 50 us
	 * later, many in flight; a disk seeks 5 ms per write and moves
	 * 150 MB/s, one write at a time */
	simtime_t start = t->clock > f->dev_busy ? t->clock : f->dev_busy;
	simtime_t done;
	if (f->hdd) {
		f->dev_busy = start + 5 * NS_PER_MS + 27 * k * NS_PER_US;
		done = f->dev_busy;
	} else {
		f->dev_busy = start + 2 * k * NS_PER_US;
		done = f->dev_busy + 50 * NS_PER_US;
	}
	if (f->oe_len == f->oe_cap) {
		uint64_t cap = f->oe_cap ? f->oe_cap * 2 : 256;
		foe *v = malloc(cap * sizeof *v);
		for (uint64_t i = 0; i < f->oe_len; i++)
			v[i] = f->oe[(f->oe_head + i) % f->oe_cap];
		free(f->oe);
		f->oe = v;
		f->oe_cap = cap;
		f->oe_head = 0;
	}
	f->oe[(f->oe_head + f->oe_len) % f->oe_cap] = (foe){ino, k, done};
	f->oe_len++;
	sim_at(f->s, done, f_complete, f);
	return (int64_t)k;
}

static void f_wake_waiter(sim *s, void *arg)
{
	ffs *f = arg;
	task *t = f->ordered_waiter;
	f->ordered_waiter = NULL;
	task_wake(s, t, sim_now(s));
}

/* Wait for the first nr ordered extents in flight (they complete in
 * submission order on this device). */
static int f_wait_ordered(void *ctx, task *t, uint64_t nr)
{
	ffs *f = ctx;
	if (f->oe_len == 0 || nr == 0)
		return 0;
	uint64_t k = nr < f->oe_len ? nr : f->oe_len;
	simtime_t until = f->oe[(f->oe_head + k - 1) % f->oe_cap].done;
	f->ordered_waiter = t;
	sim_at(f->s, until, f_wake_waiter, f);
	return DELALLOC_PARKED;
}

static int f_no_flush(void *ctx, void *inode)
{
	(void)ctx;
	return ((finode *)inode)->no_flush;
}

static const delalloc_ops fake_ops = {
	.delalloc_bytes = f_delalloc_bytes,
	.nr_inodes = f_nr_inodes,
	.list_inodes = f_list,
	.writepages = f_writepages,
	.wait_ordered = f_wait_ordered,
	.inode_no_flush = f_no_flush,
};

/* A buffered write of `pages` to a new inode, its reservation already
 * granted: count the delalloc range (set_delalloc_extent) and drop the
 * write's own extent count (btrfs_delalloc_release_extents). */
static void f_dirty(ffs *f, finode *ino, uint64_t pages, simtime_t at)
{
	uint64_t bytes = pages * PAGE;
	ino->ext = space_count_max_extents(bytes);
	space_delalloc_mod_extents(f->sc, &ino->ir, (int64_t)ino->ext, at);
	space_delalloc_release_extents(f->sc, &ino->ir, bytes, at);
	ino->dirty = pages;
	f->ndirty++;
	f->delalloc_bytes += bytes;
}

/* ------------------------------------------------------- "tar" */

typedef struct tar {
	ffs *f;
	uint64_t files, pages_per_file, done_files;
	int phase;
	block_rsv trans;
	space_ticket tk;
	finode *cur;
	simtime_t finished;
	int error;
} tar;

/* One step per reservation: create (a 5-item transaction held while the
 * inode is created), then write the file (its delalloc reservation). */
static int tar_step(sim *s, task *t)
{
	(void)s;
	tar *w = t->ctx;
	ffs *f = w->f;
	int r;
	for (;;) {
		switch (w->phase) {
		case 0:
			if (w->done_files == w->files) {
				w->finished = t->clock;
				return TASK_DONE;
			}
			space_rsv_init(&w->trans, SPACE_META);
			r = space_trans_reserve(f->sc, &w->trans, t, 5, RESERVE_FLUSH_ALL,
						&w->tk);
			w->phase = 1;
			if (r == SPACE_WAIT)
				return TASK_BLOCKED;
			if (r) {
				w->error = r;
				return TASK_DONE;
			}
			break;
		case 1:
			if (w->tk.queued || w->tk.orig_bytes) {
				r = space_rsv_reserve_finish(f->sc, &w->trans, &w->tk, t->clock);
				w->tk = (space_ticket){0};
				if (r) {
					w->error = r;
					return TASK_DONE;
				}
			}
			assert(f->n < f->cap);
			w->cur = &f->ino[f->n++];
			space_inode_rsv_init(&w->cur->ir);
			task_cpu(f->s, t, 10 * NS_PER_US); /* the create */
			space_rsv_release(f->sc, &w->trans, UINT64_MAX, t->clock);
			r = space_delalloc_reserve(f->sc, &w->cur->ir, t,
						   w->pages_per_file * PAGE,
						   RESERVE_FLUSH_ALL, &w->tk);
			w->phase = 2;
			if (r == SPACE_WAIT)
				return TASK_BLOCKED;
			if (r) {
				w->error = r;
				return TASK_DONE;
			}
			break;
		case 2:
			if (w->tk.queued || w->tk.orig_bytes) {
				r = space_delalloc_reserve_finish(f->sc, &w->cur->ir,
								  w->pages_per_file * PAGE,
								  &w->tk, t->clock);
				w->tk = (space_ticket){0};
				if (r) {
					w->error = r;
					return TASK_DONE;
				}
			}
			task_cpu(f->s, t, 2 * NS_PER_US * w->pages_per_file);
			f_dirty(f, w->cur, w->pages_per_file, t->clock);
			w->done_files++;
			w->phase = 0;
			return TASK_RUN;
		}
	}
}

/* ------------------------------------------------------- the rig */

static int g_items_factor = 2;
/* shrink_delalloc's ticket check: after the wait (0, 5.10) or right after
 * the flush (1, 5.9); the flush-path tests keep 5.10's order */
static int g_check_first = 0;

typedef struct rig {
	sim *s;
	space_ctl sc;
	ffs f;
	delalloc_ctl dc;
	patchset kernel;  /* the fake file system's: its flush path */
	reclaim_ctl rc;
} rig;

static void rig_init(rig *g, int variant, uint64_t meta_total, uint64_t max_inodes)
{
	memset(g, 0, sizeof *g);
	g->s = sim_create(3, 0);
	space_init(&g->sc, g->s);
	g->sc.info[SPACE_META].total_bytes = meta_total;
	g->f.s = g->s;
	g->f.sc = &g->sc;
	g->f.cap = max_inodes;
	g->f.ino = calloc(max_inodes, sizeof *g->f.ino);
	delalloc_ops ops = fake_ops;
	ops.ctx = &g->f;
	delalloc_flush_patches(variant, &g->kernel);
	patch_set(&g->kernel, P_000_TICKET_CHECK_AFTER_WAIT, !g_check_first);
	CHECK_EQ(delalloc_init(&g->dc, g->s, &g->sc, &ops, &g->kernel, 8), 0);
	CHECK_EQ(reclaim_init(&g->rc, g->s, &g->sc, &g->dc, NULL, 8), 0);
	g->dc.items_factor = g_items_factor;
}

static void rig_free(rig *g)
{
	reclaim_destroy(&g->rc);
	delalloc_destroy(&g->dc);
	sim_destroy(g->s);
	free(g->f.ino);
	free(g->f.oe);
}

typedef struct untar_result {
	uint64_t flushes, pages, inodes, wanted, tickets;
	uint64_t shrinks, jiffies;
	simtime_t elapsed;
	int error;
	uint64_t files;
} untar_result;

static int g_inline1 = 0; /* run_untar: one-page files are inline */

/* Untar `files` files of `pages` pages into 1 GiB of metadata (room for
 * ~1600 small dirty files, more than a fixed-kernel cycle flushes). */
static untar_result run_untar(int variant, uint64_t files, uint64_t pages, int hdd)
{
	rig g;
	rig_init(&g, variant, 1024 * MiB, files);
	g.f.raise = 1;
	g.f.hdd = hdd;
	g.f.inline1 = g_inline1;
	tar w = {.f = &g.f, .files = files, .pages_per_file = pages};
	task_spawn(g.s, "tar", tar_step, &w, 0);
	sim_run(g.s, UINT64_MAX, SIMTIME_MAX);
	untar_result r = {
		.flushes = g.dc.flushes,
		.pages = g.dc.pages_flushed,
		.inodes = g.dc.inodes_touched,
		.wanted = g.dc.pages_wanted,
		.tickets = g.sc.info[SPACE_META].tickets_queued,
		.shrinks = g.dc.shrinks,
		.jiffies = g.dc.jiffy_sleeps,
		.elapsed = w.finished,
		.error = w.error,
		.files = w.done_files,
	};
	/* every flush went through FLUSH_DELALLOC records */
	CHECK_EQ(g.rc.per_state[FLUSH_DELALLOC].pages_flushed +
			 g.rc.per_state[FLUSH_DELALLOC_WAIT].pages_flushed,
		 g.dc.pages_flushed);
	CHECK_EQ(g.sc.info[SPACE_META].tickets_failed, 0);
	CHECK_EQ(space_check(NULL, &g.sc), 0);
	if (variant == DELALLOC_INODES)
		CHECK(g.dc.flush_workers.jobs_run == g.dc.inodes_touched);
	if (variant == DELALLOC_FLUSHER)
		CHECK(g.dc.flusher.jobs_run == g.dc.flushes);
	if (variant == DELALLOC_PAGES)
		CHECK(g.dc.jobs_queued == 0); /* everything inline */
	/* the details an experiment shows; its hash is printed so that the
	 * native and WASM builds can be compared byte for byte */
	strbuf sb;
	sb_init(&sb);
	space_details_json(&g.sc, &g.rc, &g.dc, &sb);
	CHECK(!sb.oom && strstr(sb.buf, "\"pages_flushed\"") != NULL);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sb.len; i++)
		h = (h ^ (unsigned char)sb.buf[i]) * 1099511628211ull;
	printf("  details %s, %llu-page files: %zu bytes, fnv1a %016llx\n",
	       delalloc_flush_name(variant), (unsigned long long)pages, sb.len,
	       (unsigned long long)h);
	if (getenv("DELALLOC_DUMP"))
		puts(sb.buf);
	sb_free(&sb);
	rig_free(&g);
	return r;
}

static void test_small_files(uint64_t pages)
{
	const uint64_t files = 8000;
	untar_result v59 = run_untar(DELALLOC_FLUSHER, files, pages, 0);
	untar_result v510 = run_untar(DELALLOC_INODES, files, pages, 0);
	untar_result fix = run_untar(DELALLOC_PAGES, files, pages, 0);
	double ppc59 = (double)v59.pages / (double)v59.flushes;
	double ppc510 = (double)v510.pages / (double)v510.flushes;
	double ppcfix = (double)fix.pages / (double)fix.flushes;
	printf("  %llu-page files: pages/cycle v5.9 %.1f, v5.10 %.1f, fixed %.1f;"
	       " cycles %llu / %llu / %llu; untar %.1f / %.1f / %.1f ms\n",
	       (unsigned long long)pages, ppc59, ppc510, ppcfix,
	       (unsigned long long)v59.flushes, (unsigned long long)v510.flushes,
	       (unsigned long long)fix.flushes, v59.elapsed / 1e6,
	       v510.elapsed / 1e6, fix.elapsed / 1e6);
	CHECK(v59.error == 0 && v510.error == 0 && fix.error == 0);
	CHECK(v59.files == files && v510.files == files && fix.files == files);
	/* the unit of the flush: 64 pages per item against one inode per item */
	double ratio = ppcfix / ppc510;
	double expect = 64.0 / (double)pages;
	/* (files over 64 pages: writepages finishes the last file's range, so
	 * the fixed kernel writes up to one file more than asked) */
	double slack = pages > 64 ? 1.5 : 1.1;
	CHECK(ratio > 0.75 * expect && ratio < slack * expect);
	/* 5.10 needs that many more cycles for the same files */
	double cycles = (double)v510.flushes / (double)fix.flushes;
	CHECK(cycles > 0.5 * expect && cycles < 1.5 * expect);
	/* 5.10 touches exactly `items` inodes per cycle while they last:
	 * inodes per cycle == pages per cycle / p */
	CHECK_NEAR((double)v510.inodes / (double)v510.flushes, ppc510 / (double)pages,
		   1e-9);
	/* the fixed kernel flushes what it asked for (plus the rest of the
	 * last delalloc range it started) */
	CHECK(fix.pages >= fix.wanted && fix.pages <= fix.wanted + fix.flushes * pages);
	if (pages <= 64)
		CHECK_NEAR((double)fix.pages, (double)fix.wanted, 0.02);
	/* 5.9's flusher writes by pages too, but gives each inode a chunk of
	 * at least 1024 pages: it may finish the last file it starts */
	CHECK(ppc59 > 0.9 * ppcfix && ppc59 <= ppcfix + (double)pages);
	/* each cycle is paced by a jiffy: with small files 5.10 is much
	 * slower; with files past 64 pages it flushes more per cycle than the
	 * fixed kernel and is the faster one */
	if (expect >= 4)
		CHECK(v510.elapsed > 2 * fix.elapsed);
	if (expect <= 0.5)
		CHECK(v510.elapsed < fix.elapsed);
	CHECK(v510.elapsed > v510.flushes * RECLAIM_NS_JIFFY);
}

/*
 * Where shrink_delalloc looks at the tickets (P_000_TICKET_CHECK_AFTER_WAIT):
 * 5.9 checked right after the flush and skipped the wait when no ticket
 * was left; 5.10 (and the fix) sleep their jiffy first, every round.
 */
static void test_check_order(void)
{
	const uint64_t files = 4000;
	/* one-page files are inline: the flush itself frees their space, so
	 * the first flush of a cycle grants the ticket. Checked first, the
	 * cycle ends without a wait; checked after, every round sleeps. */
	g_inline1 = 1;
	untar_result late = run_untar(DELALLOC_PAGES, files, 1, 0);
	g_check_first = 1;
	untar_result early = run_untar(DELALLOC_PAGES, files, 1, 0);
	untar_result early59 = run_untar(DELALLOC_FLUSHER, files, 1, 0);
	g_check_first = 0;
	untar_result late59 = run_untar(DELALLOC_FLUSHER, files, 1, 0);
	g_inline1 = 0;
	printf("  inline files: jiffies/round %.2f after the wait, %.2f checked first "
	       "(5.9's flusher %.2f / %.2f)\n",
	       (double)late.jiffies / (double)late.flushes,
	       (double)early.jiffies / (double)early.flushes,
	       (double)late59.jiffies / (double)late59.flushes,
	       (double)early59.jiffies / (double)early59.flushes);
	CHECK(late.error == 0 && early.error == 0 && early59.error == 0 && late59.error == 0);
	CHECK(late.files == files && early.files == files);
	CHECK(late.flushes > 0 && early.flushes > 0 && early59.flushes > 0);
	CHECK_EQ(late.jiffies, late.flushes);      /* a jiffy every round */
	CHECK_EQ(late59.jiffies, late59.flushes);
	CHECK_EQ(early.jiffies, 0);                 /* never one */
	CHECK_EQ(early59.jiffies, 0);
	/* the same flushes either way: the order changes the waits only */
	CHECK_EQ(early.pages, late.pages);

	/* on disk-backed files the space comes back as each write
	 * completes: checked first, a round whose writes all completed
	 * during the flush (an SSD, a long flush) skips its wait too */
	g_check_first = 1;
	untar_result e2 = run_untar(DELALLOC_PAGES, files, 2, 0);
	g_check_first = 0;
	untar_result l2 = run_untar(DELALLOC_PAGES, files, 2, 0);
	printf("  2-page files: jiffies %llu checked first, %llu after the wait (rounds %llu / %llu)\n",
	       (unsigned long long)e2.jiffies, (unsigned long long)l2.jiffies,
	       (unsigned long long)e2.flushes, (unsigned long long)l2.flushes);
	CHECK(e2.error == 0 && l2.error == 0);
	CHECK_EQ(l2.jiffies, l2.flushes);
	CHECK(e2.jiffies < l2.jiffies);
}

/* A task that reserves `bytes` of metadata once. */
typedef struct waiter {
	space_ctl *sc;
	uint64_t bytes;
	space_ticket tk;
	int phase, done, result;
	simtime_t done_at;
} waiter;

static int waiter_step(sim *s, task *t)
{
	(void)s;
	waiter *w = t->ctx;
	if (w->phase == 0) {
		w->phase = 1;
		int r = space_reserve(w->sc, SPACE_META, t, w->bytes, RESERVE_FLUSH_ALL,
				      &w->tk);
		if (r == SPACE_WAIT)
			return TASK_BLOCKED;
		w->result = r;
	} else {
		w->result = space_ticket_result(w->sc, &w->tk, t->clock);
	}
	w->done = 1;
	w->done_at = t->clock;
	return TASK_DONE;
}

/* On a disk every write costs a seek: reclaim is paced by the device, not
 * by the flush unit, and 5.10's regression fades ("not on HDD"). */
static void test_hdd(void)
{
	const uint64_t files = 2400;
	untar_result v510 = run_untar(DELALLOC_INODES, files, 1, 1);
	untar_result fix = run_untar(DELALLOC_PAGES, files, 1, 1);
	untar_result v510s = run_untar(DELALLOC_INODES, files, 1, 0);
	untar_result fixs = run_untar(DELALLOC_PAGES, files, 1, 0);
	double hdd = (double)v510.elapsed / (double)fix.elapsed;
	double ssd = (double)v510s.elapsed / (double)fixs.elapsed;
	printf("  disk: untar v5.10 %.0f ms, fixed %.0f ms (x%.2f); SSD x%.2f\n",
	       v510.elapsed / 1e6, fix.elapsed / 1e6, hdd, ssd);
	CHECK(v510.error == 0 && fix.error == 0);
	CHECK(hdd < 1.5);
	CHECK(ssd > 4 * hdd);
}

/* One huge dirty file fills the metadata space; a task needs 256 KiB. */
typedef struct huge_result {
	uint64_t first_flushed, first_wanted, first_inodes, first_rounds;
	uint64_t total_flushed;
	int granted;
} huge_result;

static huge_result run_huge(int variant, uint64_t pages, int raise)
{
	rig g;
	rig_init(&g, variant, 0, 4);
	g.f.raise = raise;
	space_info *m = &g.sc.info[SPACE_META];
	finode *big = &g.f.ino[g.f.n++];
	space_inode_rsv_init(&big->ir);
	m->total_bytes = space_delalloc_calc(&g.sc, pages * PAGE);
	task fake = {.queued = 1};
	space_ticket tk;
	CHECK_EQ(space_delalloc_reserve(&g.sc, &big->ir, &fake, pages * PAGE,
					RESERVE_FLUSH_ALL, &tk), 0);
	f_dirty(&g.f, big, pages, 0);
	CHECK_EQ(m->bytes_may_use, m->total_bytes);
	waiter w = {.sc = &g.sc, .bytes = 256 * KiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, UINT64_MAX, SIMTIME_MAX);
	huge_result r = {0};
	r.granted = w.done && w.result == 0;
	for (uint64_t i = 0; i < reclaim_records(&g.rc); i++) {
		const reclaim_record *rec = reclaim_record_at(&g.rc, i);
		if (rec->state == FLUSH_DELALLOC) {
			r.first_flushed = rec->pages_flushed;
			r.first_wanted = rec->pages_wanted;
			r.first_inodes = rec->inodes;
			r.first_rounds = rec->rounds;
			break;
		}
	}
	r.total_flushed = g.dc.pages_flushed;
	rig_free(&g);
	return r;
}

static void test_huge_file(void)
{
	const uint64_t pages = 65536; /* 256 MiB */
	huge_result v59 = run_huge(DELALLOC_FLUSHER, pages, 0);
	huge_result v510 = run_huge(DELALLOC_INODES, pages, 0);
	huge_result fix = run_huge(DELALLOC_PAGES, pages, 0);
	printf("  one %llu-page file, 256 KiB ticket: first flush v5.9 %llu, v5.10 %llu,"
	       " fixed %llu pages (wanted %llu); until granted %llu / %llu / %llu\n",
	       (unsigned long long)pages, (unsigned long long)v59.first_flushed,
	       (unsigned long long)v510.first_flushed,
	       (unsigned long long)fix.first_flushed,
	       (unsigned long long)fix.first_wanted,
	       (unsigned long long)v59.total_flushed,
	       (unsigned long long)v510.total_flushed,
	       (unsigned long long)fix.total_flushed);
	CHECK(v59.granted && v510.granted && fix.granted);
	/* 256 KiB -> 2 items -> 512 KiB -> 128 pages wanted per round; 5.10
	 * frees enough in its first round, the fixed kernel needs several
	 * (128 pages do not free a whole csum leaf of this file) */
	CHECK_EQ(v510.first_wanted, 2 * SPACE_EXTENT_PER_ITEM / PAGE);
	CHECK_EQ(fix.first_wanted % (2 * SPACE_EXTENT_PER_ITEM / PAGE), 0);
	/* fixed: exactly nr_pages; 5.10: the whole inode; 5.9: the flusher's
	 * minimum chunk per inode */
	CHECK_EQ(fix.first_flushed, fix.first_wanted);
	CHECK_EQ(v510.first_flushed, pages);
	CHECK_EQ(v510.first_inodes, 1);
	CHECK_EQ(v510.first_rounds, 1);
	CHECK_EQ(fix.first_wanted, fix.first_rounds * 2 * SPACE_EXTENT_PER_ITEM / PAGE);
	CHECK_EQ(v59.first_flushed, DELALLOC_MIN_WRITEBACK_PAGES);
	/* the over-flush: 5.10 wrote the whole file to free 256 KiB */
	CHECK(v510.total_flushed == pages);
	CHECK(fix.total_flushed < pages / 16);

	/* with writepages finishing delalloc ranges (the nr_to_write raise,
	 * capped at 8192 pages), the fixed kernel writes 32 MiB, 5.10 still
	 * the whole 256 MiB */
	huge_result fixr = run_huge(DELALLOC_PAGES, pages, 1);
	huge_result v510r = run_huge(DELALLOC_INODES, pages, 1);
	printf("  with the nr_to_write raise: first flush v5.10 %llu, fixed %llu pages\n",
	       (unsigned long long)v510r.first_flushed,
	       (unsigned long long)fixr.first_flushed);
	CHECK(fixr.granted && v510r.granted);
	CHECK(fixr.first_rounds >= 1 && fixr.first_rounds <= 3);
	CHECK_EQ(fixr.first_flushed, 8192 * fixr.first_rounds);
	CHECK_EQ(v510r.first_rounds, 1);
	CHECK_EQ(v510r.first_flushed, pages);

	/* without shrink_delalloc's doubling each round asks for half */
	g_items_factor = 1;
	huge_result fix1 = run_huge(DELALLOC_PAGES, pages, 0);
	g_items_factor = 2;
	CHECK_EQ(fix1.first_wanted, fix1.first_rounds * SPACE_EXTENT_PER_ITEM / PAGE);
	CHECK(fix1.granted);
}

/* An inode being cloned (NO_DELALLOC_FLUSH) is skipped by
 * btrfs_start_delalloc_roots in both forms, not by the 5.9 flusher. */
static void run_no_flush(int variant, uint64_t *skipped, uint64_t *a_left,
			 int *granted)
{
	rig g;
	rig_init(&g, variant, 0, 4);
	space_info *m = &g.sc.info[SPACE_META];
	static const uint64_t pages[3] = {10, 1, 1};
	task fake = {.queued = 1};
	for (int i = 0; i < 3; i++) {
		finode *ino = &g.f.ino[g.f.n++];
		space_inode_rsv_init(&ino->ir);
		m->total_bytes += space_delalloc_calc(&g.sc, pages[i] * PAGE);
		space_ticket tk;
		CHECK_EQ(space_delalloc_reserve(&g.sc, &ino->ir, &fake, pages[i] * PAGE,
						RESERVE_FLUSH_ALL, &tk), 0);
		f_dirty(&g.f, ino, pages[i], 0);
	}
	g.f.ino[0].no_flush = 1;
	waiter w = {.sc = &g.sc, .bytes = 256 * KiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, UINT64_MAX, SIMTIME_MAX);
	*skipped = g.dc.skipped_no_flush;
	*a_left = g.f.ino[0].dirty;
	*granted = w.done && w.result == 0;
	rig_free(&g);
}

static void test_no_flush(void)
{
	uint64_t skipped, left;
	int granted;
	run_no_flush(DELALLOC_INODES, &skipped, &left, &granted);
	CHECK(granted && skipped >= 1 && left == 10);
	run_no_flush(DELALLOC_PAGES, &skipped, &left, &granted);
	CHECK(granted && skipped >= 1 && left == 10);
	run_no_flush(DELALLOC_FLUSHER, &skipped, &left, &granted);
	CHECK(granted && skipped == 0 && left == 0); /* flushed: the deadlock */
}

/* Bad setup is refused. */
static void test_init_errors(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	delalloc_ctl dc;
	delalloc_ops ops = fake_ops;
	patchset k510;
	CHECK_EQ(patch_kernel("5.10", &k510), 0);
	CHECK_EQ(delalloc_init(&dc, s, &sc, &ops, NULL, 4), LAB_EINVAL);
	ops.writepages = NULL;
	CHECK_EQ(delalloc_init(&dc, s, &sc, &ops, &k510, 4), LAB_EINVAL);
	ops = fake_ops;
	CHECK_EQ(delalloc_init(&dc, s, &sc, &ops, &k510, 2), 0);
	CHECK_EQ(dc.flush_workers.nthreads, 4); /* min(ncpus + 2, 8) */
	delalloc_destroy(&dc);
	CHECK_EQ(delalloc_init(&dc, s, &sc, &ops, &k510, 56), 0);
	CHECK_EQ(dc.flush_workers.nthreads, 8);
	delalloc_destroy(&dc);
	CHECK_EQ(delalloc_flush_parse("inodes"), DELALLOC_INODES);
	CHECK_EQ(delalloc_flush_parse("nope"), -1);
	/* the kernels' flush paths: 5.9 the flusher, 5.10 whole inodes,
	 * 5.10+fix pages; the fix alone (nothing to fix) is the flusher's */
	patchset k;
	patch_kernel("5.9", &k);
	CHECK_EQ(delalloc_flush_of(&k), DELALLOC_FLUSHER);
	CHECK_EQ(delalloc_flush_of(&k510), DELALLOC_INODES);
	patch_kernel("5.10+fix", &k);
	CHECK_EQ(delalloc_flush_of(&k), DELALLOC_PAGES);
	patch_kernel("5.9", &k);
	patch_set(&k, P_000_FLUSH_BY_PAGES, 1);
	CHECK_EQ(delalloc_flush_of(&k), DELALLOC_FLUSHER);
	for (int f = 0; f < DELALLOC_NFLUSH; f++) {
		delalloc_flush_patches(f, &k);
		CHECK_EQ(delalloc_flush_of(&k), f);
	}
	sim_destroy(s);
}

int main(void)
{
	test_init_errors();
	test_no_flush();
	test_small_files(1);
	test_small_files(2);
	test_small_files(16);
	test_small_files(256);
	test_huge_file();
	test_check_order();
	test_hdd();
	T_DONE();
}
