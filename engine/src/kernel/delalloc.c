/*
 * delalloc.c - shrink_delalloc and the three delalloc flush paths of
 * seed 000, with the flush_workers and flusher workqueues as sim tasks.
 * See delalloc.h.
 */
#include "delalloc.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "lab.h"
#include "labmem.h"

/* shrink_run phases */
enum {
	SR_START = 0,
	SR_FLUSH,     /* start a flush round */
	SR_FLUSHING,  /* a flush by pages goes on (it yielded) */
	SR_FLUSHED,   /* the round's writeback has been started */
	SR_ASYNC,     /* waited for async pages (5.9) */
	SR_CHECK,     /* after the ordered wait or the jiffy */
	SR_DONE,
};

static const char *const flush_names[DELALLOC_NFLUSH] = {
	"flusher", "inodes", "pages"};

const char *delalloc_flush_name(int flush)
{
	return flush >= 0 && flush < DELALLOC_NFLUSH ? flush_names[flush] : "?";
}

int delalloc_flush_parse(const char *name)
{
	for (int i = 0; i < DELALLOC_NFLUSH; i++)
		if (name && strcmp(name, flush_names[i]) == 0)
			return i;
	return -1;
}

/* e076ab2a2ca7 rewrote what 38d715f494f2 introduced: alone it is moot. */
int delalloc_flush_of(const patchset *ps)
{
	if (!patch_on(ps, P_000_START_DELALLOC_ROOTS))
		return DELALLOC_FLUSHER;
	return patch_on(ps, P_000_FLUSH_BY_PAGES) ? DELALLOC_PAGES : DELALLOC_INODES;
}

void delalloc_flush_patches(int flush, patchset *ps)
{
	patch_set(ps, P_000_START_DELALLOC_ROOTS, flush != DELALLOC_FLUSHER);
	patch_set(ps, P_000_FLUSH_BY_PAGES, flush == DELALLOC_PAGES);
}

/* Tell the observer (if any) a flush visited inode and wrote pages. */
static void observe(delalloc_ctl *dc, void *inode, uint64_t pages, simtime_t at)
{
	if (dc->observe)
		dc->observe(dc->observe_ctx, inode, pages, at);
}

/* ------------------------------------------------------- the workqueues */

/* Append a job to the workqueue's ring, growing it; 0 or LAB_ENOMEM. */
static int wq_push(dl_wq *wq, dl_job job)
{
	if (wq->len == wq->cap) {
		uint64_t cap = wq->cap ? wq->cap * 2 : 64;
		dl_job *q = lab_malloc(cap * sizeof *q);
		if (!q)
			return LAB_ENOMEM;
		for (uint64_t i = 0; i < wq->len; i++)
			q[i] = wq->q[(wq->head + i) % wq->cap];
		free(wq->q);
		wq->q = q;
		wq->cap = cap;
		wq->head = 0;
	}
	wq->q[(wq->head + wq->len) % wq->cap] = job;
	wq->len++;
	return 0;
}

/* Take the oldest job (the queue must not be empty). */
static dl_job wq_pop(dl_wq *wq)
{
	assert(wq->len > 0);
	dl_job j = wq->q[wq->head];
	wq->head = (wq->head + 1) % wq->cap;
	wq->len--;
	return j;
}

/* Fill dc->scratch with at most `limit` delalloc inodes from the head, in
 * flush order; returns the count (0 on allocation failure, counted as an
 * error). The limit keeps a walk that stops early from costing the whole
 * list (a real untar has tens of thousands of dirty inodes). */
static uint64_t snapshot_inodes(delalloc_ctl *dc, uint64_t limit)
{
	uint64_t n = dc->ops.nr_inodes(dc->ops.ctx);
	if (n > limit)
		n = limit;
	if (n > dc->scratch_cap) {
		void **v = lab_realloc(dc->scratch, n * sizeof *v);
		if (!v) {
			dc->errors++;
			return 0;
		}
		dc->scratch = v;
		dc->scratch_cap = n;
	}
	return n ? dc->ops.list_inodes(dc->ops.ctx, dc->scratch, n) : 0;
}

/* How many inodes a walk for nr pages may need to look at. */
static uint64_t walk_limit(int64_t nr)
{
	if (nr <= 0)
		return 0;
	return (uint64_t)nr > UINT64_MAX / 4 ? UINT64_MAX : 2 * (uint64_t)nr + 16;
}

/* A flush_workers job: filemap_flush of the whole inode, twice if it has
 * async extents (models btrfs_run_delalloc_work). Returns pages. */
static uint64_t job_flush_inode(delalloc_ctl *dc, task *t, void *inode)
{
	uint64_t pages = 0;
	for (int pass = 0; pass < 2; pass++) {
		int64_t nr = INT64_MAX;
		int64_t w = dc->ops.writepages(dc->ops.ctx, t, inode, &nr);
		if (w < 0) {
			dc->errors++;
			break;
		}
		pages += (uint64_t)w;
		if (!dc->ops.inode_async || !dc->ops.inode_async(dc->ops.ctx, inode))
			break;
	}
	observe(dc, inode, pages, t->clock);
	return pages;
}

/*
 * A flusher job: write nr_pages pages from the dirty inodes in order,
 * each inode getting a chunk of at least MIN_WRITEBACK_PAGES rounded
 * (models wb_writeback -> writeback_sb_inodes with writeback_chunk_size;
 * the bandwidth and dirty-limit caps of the chunk are not modelled: they
 * exceed a reclaim's request on a fast device).
 */
static uint64_t job_writeback_sb(delalloc_ctl *dc, task *t, int64_t nr_pages,
				 uint64_t *inodes)
{
	/* every inode on the list has delalloc: each visit writes a page or
	 * more, so nr_pages inodes (twice, for slack) are enough */
	uint64_t n = snapshot_inodes(dc, walk_limit(nr_pages));
	uint64_t pages = 0;
	for (uint64_t i = 0; i < n && nr_pages > 0; i++) {
		int64_t chunk = (nr_pages + DELALLOC_MIN_WRITEBACK_PAGES) /
				DELALLOC_MIN_WRITEBACK_PAGES *
				DELALLOC_MIN_WRITEBACK_PAGES;
		int64_t nr = chunk;
		task_cpu(dc->sim, t, DELALLOC_NS_INODE);
		int64_t w = dc->ops.writepages(dc->ops.ctx, t, dc->scratch[i], &nr);
		if (w < 0) {
			dc->errors++;
			break;
		}
		(*inodes)++;
		pages += (uint64_t)w;
		nr_pages -= chunk - nr;
		observe(dc, dc->scratch[i], (uint64_t)w, t->clock);
	}
	return pages;
}

/* A worker thread: run queued jobs one per step, then sleep on the
 * workqueue until more are queued (models a kworker / the flusher). */
static int wq_thread_step(sim *s, task *t)
{
	dl_wq *wq = t->ctx;
	delalloc_ctl *dc = wq->dc;
	if (wq->len == 0) {
		task_park(t, &wq->idle);
		return TASK_BLOCKED;
	}
	dl_job j = wq_pop(wq);
	uint64_t pages, inodes = 0;
	if (j.inode) {
		pages = job_flush_inode(dc, t, j.inode);
		inodes = 1;
	} else {
		pages = job_writeback_sb(dc, t, j.nr_pages, &inodes);
	}
	wq->jobs_run++;
	wq->pages += pages;
	dl_batch *b = j.batch;
	b->pages += pages;
	b->inodes += inodes;
	assert(b->pending > 0);
	if (--b->pending == 0 && b->waiter) {
		task_wake(s, b->waiter, t->clock + RECLAIM_NS_WAKEUP);
		b->waiter = NULL;
	}
	return TASK_RUN;
}

/* Queue a job and wake an idle thread (after a wakeup's latency). */
static int wq_queue(delalloc_ctl *dc, dl_wq *wq, dl_job job, simtime_t at)
{
	int ret = wq_push(wq, job);
	if (ret)
		return ret;
	job.batch->pending++;
	dc->jobs_queued++;
	waitq_wake_one(dc->sim, &wq->idle, at + RECLAIM_NS_WAKEUP);
	return 0;
}

/* Spawn the n threads of a workqueue, parked until jobs come. */
static int wq_init(delalloc_ctl *dc, dl_wq *wq, const char *name, int n)
{
	wq->name = name;
	wq->dc = dc;
	wq->nthreads = n;
	for (int i = 0; i < n; i++) {
		wq->threads[i] = task_spawn(dc->sim, name, wq_thread_step, wq,
					    sim_now(dc->sim));
		if (!wq->threads[i])
			return LAB_ENOMEM;
	}
	return 0;
}

int delalloc_init(delalloc_ctl *dc, sim *s, space_ctl *sc,
		  const delalloc_ops *ops, const patchset *patches, int ncpus)
{
	memset(dc, 0, sizeof *dc);
	if (!patches || !ops ||
	    !ops->delalloc_bytes || !ops->nr_inodes || !ops->list_inodes ||
	    !ops->writepages || !ops->wait_ordered || ncpus < 0)
		return LAB_EINVAL;
	dc->sim = s;
	dc->sc = sc;
	dc->ops = *ops;
	dc->patches = patches;
	dc->ncpus = ncpus > 0 ? ncpus : 1;
	dc->jiffy_ns = RECLAIM_NS_JIFFY;
	dc->items_factor = 2;
	dc->ser_inodes = sim_series_id(s, "delalloc_inodes");
	int nworkers = dc->ncpus + 2 < DELALLOC_MAX_WORKERS ? dc->ncpus + 2
							    : DELALLOC_MAX_WORKERS;
	int ret = wq_init(dc, &dc->flush_workers, "btrfs-flush_delalloc", nworkers);
	if (!ret)
		ret = wq_init(dc, &dc->flusher, "flush-btrfs", 1);
	return ret;
}

void delalloc_destroy(delalloc_ctl *dc)
{
	free(dc->flush_workers.q);
	free(dc->flusher.q);
	free(dc->scratch);
	dc->flush_workers.q = dc->flusher.q = NULL;
	dc->scratch = NULL;
}

void delalloc_sb_inode(delalloc_ctl *dc, void *inode, uint64_t pages, simtime_t at)
{
	dc->flusher.pages += pages;
	observe(dc, inode, pages, at);
}

void delalloc_sb_done(delalloc_ctl *dc, dl_batch *b, uint64_t pages, uint64_t inodes,
		      simtime_t at)
{
	dc->flusher.jobs_run++;
	b->pages += pages;
	b->inodes += inodes;
	assert(b->pending > 0);
	if (--b->pending == 0 && b->waiter) {
		task_wake(dc->sim, b->waiter, at + RECLAIM_NS_WAKEUP);
		b->waiter = NULL;
	}
}

/* ---------------------------------------------------- one flush per path */

/* start_delalloc_inodes in reclaim context: an inode flagged
 * NO_DELALLOC_FLUSH is passed over (its visit still costs the list walk). */
static int skip_no_flush(delalloc_ctl *dc, task *t, void *inode)
{
	if (!dc->ops.inode_no_flush || !dc->ops.inode_no_flush(dc->ops.ctx, inode))
		return 0;
	task_cpu(dc->sim, t, DELALLOC_NS_INODE);
	dc->skipped_no_flush++;
	return 1;
}

/*
 * btrfs_start_delalloc_roots with the work queue: one job per inode from
 * the list head, `items` inodes at most (UINT64_MAX: all). The caller
 * waits on sr->batch. Models start_delalloc_inodes before e076ab2a, and
 * its full-flush path after.
 */
static void flush_by_inodes(delalloc_ctl *dc, shrink_run *sr, task *t,
			    uint64_t items)
{
	/* skipped inodes do not count against items: look further then */
	uint64_t n = snapshot_inodes(dc, dc->ops.inode_no_flush ? UINT64_MAX : items);
	for (uint64_t i = 0; i < n && items; i++) {
		if (skip_no_flush(dc, t, dc->scratch[i]))
			continue;
		task_cpu(dc->sim, t, DELALLOC_NS_INODE + DELALLOC_NS_WORK);
		dl_job j = {.inode = dc->scratch[i], .batch = &sr->batch};
		if (wq_queue(dc, &dc->flush_workers, j, t->clock)) {
			dc->errors++;
			break;
		}
		if (items != UINT64_MAX)
			items--;
	}
}

/*
 * btrfs_start_delalloc_roots(nr_pages) after e076ab2a: sync_inode() on
 * each inode in the reclaim task itself with one writeback_control, so
 * nr_to_write runs down across inodes; stop when it is used up. Resumable
 * (sr->wbc_left, wbc_skip): returns 1 when t must yield and call again
 * (its clock ran a millisecond ahead: a bio that waited for a request,
 * many inodes), 0 when the flush is over. An inode flushed leaves the
 * lists, so a resumed walk starts past the ones it visited and left.
 */
static int flush_by_pages(delalloc_ctl *dc, shrink_run *sr, task *t)
{
	/* the list is read a batch at a time: a walk yields long before it
	 * has used the whole of walk_limit's slack */
	uint64_t batch = walk_limit(sr->wbc_left);
	if (batch > 64)
		batch = 64;
	uint64_t n = snapshot_inodes(dc, dc->ops.inode_no_flush ? UINT64_MAX
								 : sr->wbc_skip + batch);
	for (uint64_t i = sr->wbc_skip; sr->wbc_left > 0; i++) {
		if (i == n) {
			/* the batch is used up: those flushed left the list */
			if (n < sr->wbc_skip + batch)
				break; /* the list ended */
			n = snapshot_inodes(dc, sr->wbc_skip + batch);
			i = sr->wbc_skip;
			if (i >= n)
				break;
		}
		void *inode = dc->scratch[i];
		if (skip_no_flush(dc, t, inode)) {
			sr->wbc_skip++;
			continue;
		}
		task_cpu(dc->sim, t, DELALLOC_NS_INODE);
		uint64_t pages = 0;
		for (int pass = 0; pass < 2; pass++) {
			int64_t w = dc->ops.writepages(dc->ops.ctx, t, inode, &sr->wbc_left);
			if (w < 0) {
				dc->errors++;
				sr->wbc_left = 0;
				return 0;
			}
			pages += (uint64_t)w;
			dc->inline_syncs++;
			if (!dc->ops.inode_async || !dc->ops.inode_async(dc->ops.ctx, inode))
				break;
		}
		if (!pages)
			sr->wbc_skip++; /* still on the list (under writeback elsewhere) */
		sr->batch.pages += pages;
		sr->batch.inodes++;
		observe(dc, inode, pages, t->clock);
		if (sr->wbc_left > 0 && t->clock > sim_now(dc->sim) + NS_PER_MS)
			return 1;
	}
	return 0;
}

/* Start one flush round on the kernel's path. Returns 1 if the caller must
 * wait for queued jobs (sr->batch), 2 if it must yield and go on with
 * flush_by_pages, else 0. */
static int shrink_flush(delalloc_ctl *dc, shrink_run *sr, task *t,
			uint64_t nr_pages)
{
	sr->batch = (dl_batch){0};
	switch (delalloc_flush_of(dc->patches)) {
	case DELALLOC_FLUSHER: {
		/* writeback_inodes_sb_nr: hand nr_pages to the flusher and wait */
		task_cpu(dc->sim, t, DELALLOC_NS_SB_WORK);
		int64_t nr = nr_pages > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)nr_pages;
		if (dc->ops.queue_sb_work) {
			sr->batch.pending++;
			if (dc->ops.queue_sb_work(dc->ops.ctx, t, nr, &sr->batch)) {
				sr->batch.pending--;
				dc->errors++;
				return 0;
			}
			dc->jobs_queued++;
		} else {
			dl_job j = {.inode = NULL, .nr_pages = nr, .batch = &sr->batch};
			if (wq_queue(dc, &dc->flusher, j, t->clock)) {
				dc->errors++;
				return 0;
			}
		}
		dc->sb_works++;
		break;
	}
	case DELALLOC_INODES:
		flush_by_inodes(dc, sr, t, sr->items);
		break;
	case DELALLOC_PAGES:
		if (nr_pages == UINT64_MAX) {
			flush_by_inodes(dc, sr, t, UINT64_MAX);
			break;
		}
		sr->wbc_left = nr_pages > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)nr_pages;
		sr->wbc_skip = 0;
		if (flush_by_pages(dc, sr, t))
			return 2;
		break;
	}
	if (sr->batch.pending) {
		sr->batch.waiter = t;
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------ shrink_delalloc */

/* Where shrink_delalloc looks at the tickets: right after the flush (5.9)
 * or after the wait that follows it (P_000_TICKET_CHECK_AFTER_WAIT). */
static int ticket_check_first(const delalloc_ctl *dc)
{
	return !patch_on(dc->patches, P_000_TICKET_CHECK_AFTER_WAIT);
}

void delalloc_shrink_begin(delalloc_ctl *dc, shrink_run *sr, space_info *si,
			   uint64_t to_reclaim, int wait_ordered)
{
	*sr = (shrink_run){0};
	sr->si = si;
	sr->wait_ordered = wait_ordered;
	if (to_reclaim == UINT64_MAX) {
		sr->items = UINT64_MAX;
		sr->to_reclaim = UINT64_MAX;
	} else {
		/* Reclaiming data does not track metadata exactly: ask for twice
		 * the items (shrink_delalloc's comment). */
		sr->items = space_reclaim_items(dc->sc, to_reclaim) *
			    (uint64_t)(dc->items_factor > 0 ? dc->items_factor : 1);
		sr->to_reclaim = sr->items * SPACE_EXTENT_PER_ITEM;
	}
	sr->phase = SR_START;
	dc->shrinks++;
}

/* fs_info->dio_bytes, 0 when the data path has no direct IO. */
static uint64_t dio_bytes(delalloc_ctl *dc)
{
	return dc->ops.dio_bytes ? dc->ops.dio_bytes(dc->ops.ctx) : 0;
}

/*
 * Models shrink_delalloc (5.9 / 5.10 / 5.10+e076ab2a): up to three rounds
 * while delalloc remains of flush (the path of the kernel's patches),
 * then an ordered-extent wait (FLUSH_DELALLOC_WAIT) or one jiffy's sleep,
 * stopping as soon as no ticket waits: checked after the wait (5.10,
 * P_000_TICKET_CHECK_AFTER_WAIT), or between the flush and the wait
 * (5.9: a round whose flush satisfied every ticket pays no wait).
 */
int delalloc_shrink_step(delalloc_ctl *dc, shrink_run *sr, task *t)
{
	uint64_t delalloc, dio;
	int r;

	switch (sr->phase) {
	case SR_START:
		delalloc = dc->ops.delalloc_bytes(dc->ops.ctx);
		dio = dio_bytes(dc);
		if (delalloc == 0 && dio == 0) {
			sr->phase = SR_DONE;
			if (sr->wait_ordered) {
				dc->ordered_waits++;
				if (dc->ops.wait_ordered(dc->ops.ctx, t, sr->items) ==
				    DELALLOC_PARKED)
					return DELALLOC_PARKED;
			}
			return 0;
		}
		if (dio > delalloc)
			sr->wait_ordered = 1;
		sr->phase = SR_FLUSH;
		/* fallthrough */
	case SR_FLUSH: {
		delalloc = dc->ops.delalloc_bytes(dc->ops.ctx);
		uint64_t want = delalloc < sr->to_reclaim ? delalloc : sr->to_reclaim;
		sr->nr_pages = want >> 12; /* PAGE_SHIFT */
		sr->pages_wanted += sr->nr_pages;
		dc->pages_wanted += sr->nr_pages;
		sim_series_add(dc->sim, dc->ser_inodes, t->clock,
			       (double)dc->ops.nr_inodes(dc->ops.ctx));
		sr->phase = SR_FLUSHED;
		r = shrink_flush(dc, sr, t, sr->nr_pages);
		if (r == 2)
			sr->phase = SR_FLUSHING;
		return r == 1 ? DELALLOC_PARKED : DELALLOC_MORE;
	}
	case SR_FLUSHING:
		if (flush_by_pages(dc, sr, t))
			return DELALLOC_MORE;
		sr->phase = SR_FLUSHED;
		return DELALLOC_MORE;
	case SR_FLUSHED:
		sr->pages_flushed += sr->batch.pages;
		sr->inodes_touched += sr->batch.inodes;
		sr->flushes++;
		dc->flushes++;
		dc->pages_flushed += sr->batch.pages;
		dc->inodes_touched += sr->batch.inodes;
		sr->phase = SR_ASYNC;
		if (delalloc_flush_of(dc->patches) == DELALLOC_FLUSHER && dc->ops.async_pages &&
		    dc->ops.wait_async_pages) {
			/* wait until the compressed pages have been submitted */
			uint64_t async = dc->ops.async_pages(dc->ops.ctx);
			if (async) {
				uint64_t target = async <= sr->nr_pages ? 0
							  : async - sr->nr_pages;
				if (dc->ops.wait_async_pages(dc->ops.ctx, t, target) ==
				    DELALLOC_PARKED)
					return DELALLOC_PARKED;
			}
		}
		/* fallthrough */
	case SR_ASYNC:
		/* 5.9 checked the tickets here, before paying for a wait: no
		 * ticket left, no wait (38d715f494f2's series moved the check
		 * after it) */
		if (ticket_check_first(dc) && space_tickets_waiting(sr->si) == 0) {
			sr->phase = SR_DONE;
			return 0;
		}
		sr->loops++;
		sr->phase = SR_CHECK;
		if (sr->wait_ordered) {
			dc->ordered_waits++;
			r = dc->ops.wait_ordered(dc->ops.ctx, t, sr->items);
			if (r == DELALLOC_PARKED)
				return DELALLOC_PARKED;
		} else {
			/* schedule_timeout_killable(1): nothing signals a
			 * reclaim worker, so it sleeps the whole jiffy */
			dc->jiffy_sleeps++;
			task_wait_until(t, t->clock + dc->jiffy_ns);
		}
		return DELALLOC_MORE;
	case SR_CHECK:
		if (!ticket_check_first(dc) && space_tickets_waiting(sr->si) == 0) {
			sr->phase = SR_DONE;
			return 0;
		}
		delalloc = dc->ops.delalloc_bytes(dc->ops.ctx);
		dio = dio_bytes(dc);
		if ((delalloc || dio) && sr->loops < 3) {
			sr->phase = SR_FLUSH;
			return DELALLOC_MORE;
		}
		sr->phase = SR_DONE;
		return 0;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------- JSON */

/* One workqueue's counters as a JSON object. */
static void wq_json(const dl_wq *wq, strbuf *out)
{
	js_obj(out);
	js_kstr(out, "name", wq->name);
	js_kint(out, "threads", wq->nthreads);
	js_kint(out, "jobs_run", (int64_t)wq->jobs_run);
	js_kint(out, "pages", (int64_t)wq->pages);
	js_kint(out, "queued", (int64_t)wq->len);
	js_obj_end(out);
}

void delalloc_json(const delalloc_ctl *dc, strbuf *out)
{
	js_obj(out);
	js_kstr(out, "flush", delalloc_flush_name(delalloc_flush_of(dc->patches)));
	js_kint(out, "jiffy_ns", (int64_t)dc->jiffy_ns);
	js_kint(out, "items_factor", dc->items_factor);
	js_kint(out, "shrinks", (int64_t)dc->shrinks);
	js_kint(out, "flushes", (int64_t)dc->flushes);
	js_kint(out, "pages_wanted", (int64_t)dc->pages_wanted);
	js_kint(out, "pages_flushed", (int64_t)dc->pages_flushed);
	js_kint(out, "inodes_touched", (int64_t)dc->inodes_touched);
	js_kint(out, "jobs_queued", (int64_t)dc->jobs_queued);
	js_kint(out, "inline_syncs", (int64_t)dc->inline_syncs);
	js_kint(out, "sb_works", (int64_t)dc->sb_works);
	js_kint(out, "ordered_waits", (int64_t)dc->ordered_waits);
	js_kint(out, "jiffy_sleeps", (int64_t)dc->jiffy_sleeps);
	js_kint(out, "skipped_no_flush", (int64_t)dc->skipped_no_flush);
	js_kint(out, "errors", dc->errors);
	js_key(out, "flush_workers");
	wq_json(&dc->flush_workers, out);
	js_key(out, "flusher");
	wq_json(&dc->flusher, out);
	js_obj_end(out);
}
