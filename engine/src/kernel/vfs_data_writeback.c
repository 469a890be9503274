/*
 * vfs_data_writeback.c - writeback: writepages of delalloc ranges into
 * ordered extents and bios, their completion (finish_ordered_io), the
 * synchronous writebacks of fsync, sync and space reclaim, and the
 * flusher thread. See vfs_data.h.
 */
#include "vfs_data.h"
#include "vfs_data_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "backref.h"
#include "btree.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "trans.h"
#include "labmem.h"

/* ------------------------------------------------------------------ */
/* writeback                                                           */

static void wbio_end(sim *s, bio *b);

/* see vfs_data_int.h */
dbio *vd_dbio_new(dinode *d, int read, uint64_t disk)
{
	dfs *fs = d->fs;
	dbio *db = fs->dbio_free;
	if (db) {
		fs->dbio_free = db->next;
		uint64_t *offs = db->offs;
		uint32_t cap = db->cap;
		memset(db, 0, sizeof(*db));
		db->offs = offs;
		db->cap = cap;
	} else {
		db = lab_calloc(1, sizeof(*db));
		assert(db);
	}
	db->d = d;
	db->read = read;
	db->b.op = read ? BIO_READ : BIO_WRITE;
	db->b.offset = disk;
	db->b.sequential = 1;
	db->b.priv = db;
	return db;
}

/* see vfs_data_int.h */
/* Room in the bio's page list for n more pages (doubling from 64). */
static void dbio_room(dbio *db, uint64_t n)
{
	if (db->n + n <= db->cap)
		return;
	uint32_t cap = db->cap;
	while (db->n + n > cap)
		cap = cap ? cap * 2 : 64;
	db->offs = lab_realloc(db->offs, cap * sizeof(*db->offs));
	assert(db->offs);
	db->cap = cap;
}

void vd_dbio_add(dbio *db, uint64_t off, uint64_t bytes)
{
	dbio_room(db, 1);
	db->offs[db->n++] = off;
	db->b.bytes += bytes;
}

/* see vfs_data_int.h */
void vd_dbio_add_pages(dbio *db, uint64_t off, uint64_t n)
{
	dbio_room(db, n);
	for (uint64_t k = 0; k < n; k++)
		db->offs[db->n++] = off + k * PG;
	db->b.bytes += n * PG;
}

/* Submit the bio being built. With wb_caller_waits the bio has no end_io:
 * vd_writeback_sync waits for it and completes it on its task. */
static void wb_submit(dinode *d, task *t)
{
	dinode_x *x = d->x;
	dbio *db = x ? x->wb_bio : NULL;
	if (!db)
		return;
	x->wb_bio = NULL;
	db->b.end_io = x->wb_caller_waits ? NULL : wbio_end;
	x->wb_inflight++;
	db->next = x->writes;
	x->writes = db;
	d->fs->data_writes++;
	d->fs->data_write_bytes += db->b.bytes;
	/* submit_bio sleeps for a request while the queue is full */
	task_wait_until(t, bdev_tag_free_at(d->fs->dev, t->clock));
	bdev_submit(d->fs->dev, &db->b, t->clock);
}

/* finish_ordered_io for the ordered extent starting at off: the item
 * goes into the fs tree, DELALLOC_NEW clears, the pages end writeback.
 * t may be NULL. */
static void finish_ordered(dinode *d, task *t, uint64_t off, eio_call *c)
{
	dfs *fs = d->fs;
	assert(d->x);
	int64_t k = ordered_lookup_range(&d->x->oe, off, 1, NULL);
	assert(k >= 0);
	ordered_extent oe = d->x->oe.v[k];
	if (vd_fe_finish_tree(d, t, &oe))
		fs->wb_errors++;
	eio_clear_bits(&d->io, oe.file_off, oe.file_off + oe.len - 1,
		       EXTENT_DELALLOC_NEW, NULL, c, NULL, 0);
	ordered_remove(&d->x->oe, oe.file_off);
	SIM_REC(fs->s, TK_OE_DONE, t, fs->rec_fs, (int64_t)d->ino, (int64_t)oe.file_off,
		(int64_t)oe.len);
	assert(d->x->ordered_bytes >= oe.len);
	d->x->ordered_bytes -= oe.len;
	fs->ordered_inflight--;
	simtime_t now = t ? t->clock : sim_now(fs->s);
	sim_series_add(fs->s, fs->series_ordered, sim_now(fs->s), (double)fs->ordered_inflight);
	pc_set_range(&d->pc, oe.file_off / PG,
		     (oe.file_off + oe.len + PG - 1) / PG - oe.file_off / PG, 0, PG_WRITEBACK);
	fs->ordered_done++;
	if (fs->ordered_wait.len && fs->ordered_done >= fs->ordered_wait_done)
		waitq_wake_all(fs->s, &fs->ordered_wait, now);
	vd_space_note(d, now, 0);
}

/* A write bio is done: finish_ordered_io for each extent in it. Returns
 * the CPU not charged to any timeline yet (the io_tree work); the trees
 * charge their own work to t (or, with t NULL, to fsi->cpu_untasked_ns).
 * All of it is counted in cpu_endio_ns. */
static uint64_t wbio_complete(dinode *d, dbio *db, task *t)
{
	dfs *fs = d->fs;
	fs_info *fsi = fs->fsi;
	uint64_t u0 = fsi->cpu_untasked_ns, c0 = t ? t->cpu_ns : 0;
	eio_call c = {0};
	for (uint32_t i = 0; i < db->n; i++)
		finish_ordered(d, t, db->offs[i], &c);
	uint64_t ns = eio_call_ns(&c);
	fs->cpu_endio_ns += ns;
	fs->cpu_endio_ns += (fsi->cpu_untasked_ns - u0) + (t ? t->cpu_ns - c0 : 0);
	d->x->wb_inflight--;
	for (dbio **pp = &d->x->writes; *pp; pp = &(*pp)->next)
		if (*pp == db) {
			*pp = db->next;
			break;
		}
	vd_dbio_free(db);
	vd_sample(d);
	return ns;
}

/* data_opts.release_idle_x: free d's writeback state once d is clean and
 * nothing holds or waits on it (the extent maps are a cache: the file
 * extent items live in the fs tree). */
static void release_idle_x(dinode *d, simtime_t now)
{
	dinode_x *x = d->x;
	if (!x || !d->fs->o.release_idle_x || !vd_clean(d) || x->wb_bio ||
	    x->writes || x->wb_task || x->wb_waiters.len || x->lseek_lock_until > now ||
	    x->wb_lock_until > now || d->reads)
		return;
	emap_destroy(&x->em);
	ordered_destroy(&x->oe);
	lab_pool_free(&d->fs->x_pool, x);
	d->x = NULL;
}

/* Bio completion (the endio workers' CPU is counted, not put on any
 * task's timeline). */
static void wbio_end(sim *s, bio *b)
{
	dbio *db = b->priv;
	dinode *d = db->d;
	wbio_complete(d, db, NULL);
	if (vd_clean(d) || !d->wb_active)
		waitq_wake_all(s, &d->x->wb_waiters, sim_now(s));
	vd_throttle_check(d->fs, sim_now(s), 1);
	release_idle_x(d, sim_now(s));
}

int vd_clean(const dinode *d)
{
	return d->pc.dirty == 0 && vd_oe_n(d) == 0 && vd_wb_inflight(d) == 0 && !d->wb_active;
}

/* What wb_extent did. */
enum { WB_EXTENT = 0, WB_NONE = 1, WB_WAITED = 2 };

/*
 * Flush the next delalloc range at or after wb_index (models
 * extent_write_cache_pages -> writepage_delalloc -> find_lock_delalloc_range
 * + cow_file_range, then bio submission). Returns WB_EXTENT, WB_NONE (no
 * delalloc left; the search was charged), WB_WAITED (t waited for an
 * lseek's range lock, or the range is still under writeback and was
 * skipped: call again), or a negative LAB_E* (allocation).
 */
static int wb_extent(dinode *d, task *t)
{
	dfs *fs = d->fs;
	sim *s = fs->s;
	eio_call c = {0};
	uint64_t ds, de;
	dinode_x *x = d->x; /* a writeback pass has it */
	if (eio_find_first_bit(&d->io, x->wb_index, EXTENT_DELALLOC, &ds, &de, &c)) {
		task_cpu(s, t, eio_call_ns(&c));
		fs->cpu_wb_ns += eio_call_ns(&c);
		return WB_NONE;
	}
	/* find_lock_delalloc_range never starts before the locked page: a
	 * range writeback from inside a delalloc extent leaves its head */
	if (ds < x->wb_index)
		ds = x->wb_index;
	if (de - ds + 1 > DATA_MAX_EXTENT)
		de = ds + DATA_MAX_EXTENT - 1;
	/*
	 * Pages dirtied again while an earlier pass's bio for them is in
	 * flight are not written twice at once: extent_write_cache_pages
	 * skips a page under writeback (WB_SYNC_NONE; WB_SYNC_ALL waits for
	 * it, and an fsync here comes back once the bio completes). The
	 * range stops before such an ordered extent, or moves past it.
	 */
	int64_t busy_k = vd_oe_n(d) ? ordered_first_overlap(&d->x->oe, ds, de - ds + 1) : -1;
	if (busy_k >= 0) {
		const ordered_extent *o = &d->x->oe.v[busy_k];
		x->wb_skipped = 1;
		if (o->file_off <= ds) {
			x->wb_index = o->file_off + o->len;
			task_cpu(s, t, eio_call_ns(&c));
			fs->cpu_wb_ns += eio_call_ns(&c);
			return WB_WAITED;
		}
		de = o->file_off - 1;
	}
	/*
	 * An lseek holds [start, EOF] over this range. If its lock sweep has
	 * not reached this extent yet, writeback locks it first and the sweep
	 * will wait for it (the lseek ends later); else wait for the unlock.
	 */
	int ahead_of_sweep = 0;
	if (vd_lseek_until(d) > t->clock && x->lseek_lock_start <= de) {
		uint64_t before = 0, adj;
		if (ds > x->lseek_lock_start)
			eio_range_counts(&d->io, x->lseek_lock_start, ds - 1, &before, &adj);
		simtime_t reach = x->lock_t0 + x->lock_delay;
		if (x->lock_recs)
			reach += (simtime_t)((double)(x->lock_t1 - x->lock_t0) *
					     (double)before / (double)x->lock_recs);
		if (t->clock >= reach) {
			task_wait_until(t, x->lseek_lock_until + vd_wakeup_ns(fs));
			return WB_WAITED;
		}
		ahead_of_sweep = 1;
	}
	uint64_t len = de - ds + 1;
	/* cow_file_range_inline: a file that fits max_inline, written from 0
	 * to EOF, goes into the leaf with no disk extent and no bio */
	int inline_ext = ds == 0 && de + 1 >= d->i_size && d->i_size > 0 &&
			 d->i_size <= fs->fsi->opts.max_inline && d->i_size < PG;
	uint64_t disk = FEXT_INLINE;
	if (!inline_ext) {
		/* btrfs_reserve_extent: when no free run is long enough, ask
		 * for half as much (down to a sector) and cover the rest of
		 * the range with the next extent */
		int rc = alloc_extent(&fs->fsi->alloc, ALLOC_DATA, len, &disk);
		while (rc == LAB_ENOSPC && len > PG) {
			len = len / 2 / PG * PG;
			rc = alloc_extent(&fs->fsi->alloc, ALLOC_DATA, len, &disk);
		}
		if (rc)
			return rc;
		de = ds + len - 1;
	}
	/* the range lock, cow_file_range, and the unlock clearing DELALLOC */
	uint64_t fail;
	int busy = eio_set_bits(&d->io, ds, de, EXTENT_LOCKED, EXTENT_LOCKED, &fail, NULL, &c);
	assert(!busy);
	(void)busy;
	if (inline_ext)
		emap_drop_from(&x->em, 0); /* the file is this one page */
	else
		emap_insert(&x->em, ds, len, disk);
	ordered_add(&x->oe, ds, len, disk);
	SIM_REC(s, TK_OE_ADD, t, fs->rec_fs, (int64_t)d->ino, (int64_t)ds, (int64_t)len);
	x->ordered_bytes += len;
	fs->ordered_inflight++;
	sim_series_add(s, fs->series_ordered, t->clock, (double)fs->ordered_inflight);
	eio_clear_bits(&d->io, ds, de, EXTENT_DELALLOC | EXTENT_LOCKED, NULL, &c, s, t->clock);
	assert(d->delalloc_bytes >= len);
	d->delalloc_bytes -= len;
	fs->delalloc_total -= len;
	pc_set_range(&d->pc, ds / PG, de / PG - ds / PG + 1, PG_WRITEBACK, PG_DIRTY);
	if (!inline_ext)
		x->sp_data_alloc += len;
	vd_space_note(d, t->clock, 0);
	uint64_t ns = C_COW_EXTENT_NS + eio_call_ns(&c);
	if (inline_ext) {
		/* the inline extent is complete at once (no bio) */
		eio_call c2 = {0};
		finish_ordered(d, t, ds, &c2);
		ns += eio_call_ns(&c2);
	} else {
		if (x->wb_bio && (x->wb_bio->b.offset + x->wb_bio->b.bytes != disk ||
				  x->wb_bio->b.bytes + len > DATA_MAX_BIO))
			wb_submit(d, t);
		if (!x->wb_bio)
			x->wb_bio = vd_dbio_new(d, 0, disk);
		vd_dbio_add(x->wb_bio, ds, len);
	}
	x->wb_lock_off = ds;
	x->wb_lock_until = t->clock + ns;
	if (ahead_of_sweep) {
		/* the sweep sleeps on this extent until writeback unlocks it */
		simtime_t hold = ns + vd_wakeup_ns(fs);
		x->lock_delay += hold;
		x->lseek_lock_until += hold;
	}
	task_cpu(s, t, ns);
	fs->cpu_wb_ns += ns;
	fs->wb_extents++;
	x->wb_index = de + 1;
	return WB_EXTENT;
}

/* A pass that skipped pages under writeback ends with nothing in
 * flight: the bio it skipped completed during the pass, so no end_io will
 * wake an fsync waiting for the inode; wake it here to write the rest. */
static int skipped_idle(dinode *d)
{
	int r = d->x->wb_skipped && d->x->wb_inflight == 0;
	d->x->wb_skipped = 0;
	return r;
}

/* redirty_tail_locked: d goes back to the newest end of b_dirty keeping
 * its dirtied_when, unless that would put it before an inode dirtied
 * later (then it becomes now): a file the writer keeps dirtying during
 * each pass stays expired, and the next kupdate pass writes it again. */
static void redirty_tail(dinode *d, simtime_t now)
{
	dfs *fs = d->fs;
	const dinode *newest = fs->dirty_tail == d ? d->dprev : fs->dirty_tail;
	simtime_t when = d->pc.dirtied_when;
	if (!d->pc.is_dirty || (newest && when < newest->pc.dirtied_when))
		when = now;
	vd_dirty_add(d, when);
}

/* A writeback pass over d ends (r: wb_extent's last result): the bio
 * being built goes out, d leaves b_dirty or, with pages dirtied during
 * the pass, goes to its tail (requeue_inode -> redirty_tail). */
static void wb_pass_end(dinode *d, task *t, int r)
{
	if (r < 0)
		d->fs->wb_errors++;
	wb_submit(d, t);
	d->wb_active = 0;
	d->x->wb_task = NULL;
	if (d->pc.dirty == 0)
		vd_dirty_clear(d);
	else
		redirty_tail(d, t->clock);
	if (vd_clean(d) || skipped_idle(d))
		waitq_wake_all(d->fs->s, &d->x->wb_waiters, t->clock);
	vd_throttle_check(d->fs, t->clock, r >= 0);
	release_idle_x(d, t->clock);
}

/* The writeback task's step (one extent). */
static int wb_one(sim *s, task *t)
{
	dinode *d = t->ctx;
	(void)s;
	int r = wb_extent(d, t);
	if (r == WB_EXTENT || r == WB_WAITED)
		return TASK_RUN;
	wb_pass_end(d, t, r);
	return TASK_DONE;
}

/* Wait for the inode's write bios in submission order (the list is newest
 * first), completing their ordered extents on t (the caller's own wait in
 * a synchronous writeback). */
static void wait_writes(dinode *d, task *t)
{
	while (d->x->writes) {
		dbio *db = d->x->writes;
		while (db->next)
			db = db->next;
		task_wait_until(t, db->b.complete);
		task_cpu(d->fs->s, t, wbio_complete(d, db, t));
	}
}

/* Writeback runs extent by extent; while no lseek holds a range lock
 * nothing can interleave with it, so several extents go in one step. */
static int wb_step(sim *s, task *t)
{
	dinode *d = t->ctx;
	for (int i = 0; i < 64; i++) {
		int r = wb_one(s, t);
		if (r != TASK_RUN || vd_lseek_until(d) > t->clock ||
		    sim_now(s) + NS_PER_MS < t->clock)
			return r;
	}
	return TASK_RUN;
}

int vd_writeback_sync(dinode *d, task *t)
{
	return vd_writeback_range_sync(d, t, 0);
}

int vd_writeback_range_sync(dinode *d, task *t, uint64_t start)
{
	assert(!d->wb_active);
	dfs *fs = d->fs;
	dinode_x *x = vd_xw(d);
	if (!x)
		return LAB_ENOMEM;
	d->wb_active = 1;
	x->wb_sync = 1;
	x->wb_caller_waits = 1;
	x->wb_index = start;
	fs->flushes++;
	int r;
	do
		r = wb_extent(d, t);
	while (r == WB_EXTENT || r == WB_WAITED);
	wb_submit(d, t);
	wait_writes(d, t);
	x->wb_caller_waits = 0;
	d->wb_active = 0;
	if (d->pc.dirty == 0)
		vd_dirty_clear(d);
	if (vd_clean(d))
		waitq_wake_all(fs->s, &x->wb_waiters, t->clock);
	return r < 0 ? r : 0;
}

int64_t vd_writeback_nr(dinode *d, task *t, int64_t max_pages, int wait)
{
	assert(!d->wb_active);
	dfs *fs = d->fs;
	uint64_t dirty0 = d->pc.dirty;
	dinode_x *x = vd_xw(d);
	if (!x)
		return LAB_ENOMEM;
	d->wb_active = 1;
	x->wb_caller_waits = (uint8_t)(wait != 0);
	x->wb_index = 0;
	fs->flushes++;
	int r;
	do
		r = wb_extent(d, t);
	while ((r == WB_EXTENT || r == WB_WAITED) &&
	       (int64_t)(dirty0 - d->pc.dirty) < max_pages);
	wb_submit(d, t);
	if (wait)
		wait_writes(d, t);
	x->wb_caller_waits = 0;
	d->wb_active = 0;
	if (d->pc.dirty == 0)
		vd_dirty_clear(d);
	if (vd_clean(d) || skipped_idle(d))
		waitq_wake_all(fs->s, &x->wb_waiters, t->clock);
	vd_throttle_check(fs, t->clock, r >= 0);
	int64_t wrote = (int64_t)(dirty0 - d->pc.dirty);
	release_idle_x(d, t->clock);
	return r < 0 ? r : wrote;
}

int vd_wait_ordered(dfs *fs, task *t, uint64_t nr)
{
	uint64_t n = nr < fs->ordered_inflight ? nr : fs->ordered_inflight;
	if (n == 0)
		return 0;
	uint64_t target = fs->ordered_done + n;
	/* several waiters: the earliest target wakes them all; a waiter
	 * woken early goes on as btrfs_wait_ordered_roots' caller would
	 * after its own extents (a small error only with two at once) */
	if (!fs->ordered_wait.len || target < fs->ordered_wait_done)
		fs->ordered_wait_done = target;
	task_park(t, &fs->ordered_wait);
	return 1;
}

void vd_writeback_start(dinode *d, int sync)
{
	/* writeback's state is in the dinode_x: like the task, it must be had */
	dinode_x *x = vd_xw(d);
	assert(x);
	if (sync)
		x->wb_sync = 1;
	if (d->wb_active)
		return;
	d->wb_active = 1;
	x->wb_index = 0;
	d->fs->flushes++;
	x->wb_task = task_spawn(d->fs->s, "writeback", wb_step, d, sim_now(d->fs->s));
	assert(x->wb_task);
}

/*
 * When the flusher's delayed work, queued now to run `delay` later, fires:
 * the timer wheel (kernel/time/timer.c) keeps a timer `delta` jiffies away
 * in level n, where level n starts at 63 << 3(n-1) jiffies and has a
 * granule of 8^n jiffies, and fires it at the first granule boundary after
 * its expiry (calc_index rounds up). So wakeups drift later than the
 * nominal period by up to a granule each time.
 */
static simtime_t flusher_due(const dfs *fs, simtime_t now, simtime_t delay)
{
	simtime_t j = fs->o.jiffy_ns;
	if (j == 0)
		return now + delay;
	uint64_t delta = (uint64_t)((delay + j - 1) / j);
	uint64_t gran = 1;
	for (uint64_t start = 63; delta >= start && gran < (1u << 24); start <<= 3)
		gran <<= 3;
	uint64_t expires = fs->o.jiffies0 + (uint64_t)(now / j) + delta;
	uint64_t fire = (expires / gran + 1) * gran;
	return (simtime_t)(fire - fs->o.jiffies0) * j;
}

/*
 * The next inode the flusher writes (wb_writeback -> queue_io ->
 * writeback_sb_inodes, oldest dirtied first): over the background
 * threshold (or while writers are throttled) the oldest dirty inode;
 * else, for a periodic (kupdate) wakeup, the oldest one dirtied before
 * now - dirty_expire; else none. Inodes whose dirty pages went (a
 * truncate) leave b_dirty on the way.
 */
static dinode *flusher_pick(dfs *fs, simtime_t now)
{
	int bg = (fs->o.dirty_bg_bytes && fs->pcg.dirty * PG > fs->o.dirty_bg_bytes) ||
		 (fs->wb_throttle && fs->dirty_throttle.len && vd_over_dirty_limit(fs));
	if (!bg)
		fs->wb_throttle = 0;
	dinode *d = fs->dirty_head;
	while (d) {
		dinode *nx = d->dnext;
		if (d->pc.dirty == 0) {
			vd_dirty_clear(d);
		} else if (!d->wb_active) {
			if (bg || (fs->wb_kupdate && now - d->pc.dirtied_when >= fs->o.dirty_expire))
				return d;
			if (!fs->wb_kupdate || now - d->pc.dirtied_when < fs->o.dirty_expire)
				return NULL; /* b_dirty is in dirtied_when order */
		}
		d = nx;
	}
	return NULL;
}

/* writeback_chunk_size for a WB_SYNC_NONE work of nr pages: at least
 * MIN_WRITEBACK_PAGES (4 MiB), rounded to it, and at most half a second
 * of the bdi's write bandwidth estimate (its initial INIT_BW, 100 MB/s:
 * 12800 pages); the dirty limit's share (dirty_limit / DIRTY_SCOPE) is
 * larger on any machine the lab models. */
static int64_t work_chunk(int64_t nr)
{
	const int64_t min_pages = 1024, bw_half = 12800;
	int64_t p = nr < bw_half ? nr : bw_half;
	return (p + min_pages) / min_pages * min_pages;
}

/* The next inode of the running work (queue_io with the work's
 * dirtied_before, then the oldest of b_io): dirtied before the work
 * started, with dirty pages, not under writeback by anyone else
 * (writeback_sb_inodes requeues an I_SYNC inode). */
static dinode *work_pick(dfs *fs, const dfs_work *w)
{
	for (dinode *d = fs->dirty_head; d; d = d->dnext) {
		if (d->pc.dirtied_when > w->started)
			return NULL; /* b_dirty is in dirtied_when order */
		if (d->pc.dirty && !d->wb_active)
			return d;
	}
	return NULL;
}

/* The running work is over: hand it back (finish_writeback_work). */
static void work_end(dfs *fs, task *t)
{
	dfs_work *w = fs->work_cur;
	fs->work_cur = NULL;
	if (w->done)
		w->done(w->ctx, w, t->clock);
}

/* Start writing d on the flusher (its writeback pass). */
static void flusher_begin(dfs *fs, task *t, dinode *d)
{
	dinode_x *x = vd_xw(d);
	assert(x); /* as vd_writeback_start's */
	d->wb_active = 1;
	x->wb_index = 0;
	x->wb_task = t;
	fs->flushes++;
	fs->flusher_cur = d;
	fs->work_dirty0 = d->pc.dirty;
}

/*
 * The flusher thread (wb_workfn): first the queued work items
 * (wb_do_writeback's work_list), each inode up to its chunk; then, for
 * its periodic (kupdate) wakeups and over the background threshold, its
 * own writeback, which yields to queued work between inodes. It writes
 * its inodes one after another, extent by extent, as the per-inode
 * writeback task does (several extents per step while nothing can
 * interleave), then parks until the next wakeup, kick or work.
 */
static int flusher_step(sim *s, task *t)
{
	dfs *fs = t->ctx;
	for (int i = 0; i < 64; i++) {
		dinode *d = fs->flusher_cur;
		if (!d) {
			if (!fs->work_cur && fs->work_head) {
				fs->work_cur = fs->work_head;
				fs->work_head = fs->work_cur->next;
				if (!fs->work_head)
					fs->work_tail = NULL;
				fs->work_cur->started = t->clock;
			}
			if (fs->work_cur) {
				d = fs->work_cur->nr_pages > 0 ? work_pick(fs, fs->work_cur) : NULL;
				if (!d) {
					work_end(fs, t);
					continue;
				}
			} else {
				d = flusher_pick(fs, t->clock);
			}
			if (!d) {
				fs->wb_kupdate = 0;
				fs->flusher_idle = 1;
				return TASK_BLOCKED;
			}
			flusher_begin(fs, t, d);
		}
		int r = wb_extent(d, t);
		dfs_work *w = fs->work_cur;
		int64_t wrote = (int64_t)(fs->work_dirty0 - d->pc.dirty);
		if ((r != WB_EXTENT && r != WB_WAITED) ||
		    (w && wrote >= work_chunk(w->nr_pages))) {
			fs->flusher_cur = NULL;
			wb_pass_end(d, t, r == WB_EXTENT || r == WB_WAITED ? WB_NONE : r);
			if (w) {
				w->nr_pages -= wrote;
				w->pages += (uint64_t)wrote;
				w->inodes++;
				if (w->inode_done)
					w->inode_done(w->ctx, d, (uint64_t)wrote, t->clock);
			}
		}
		if (vd_lseek_until(d) > t->clock || sim_now(s) + NS_PER_MS < t->clock)
			return TASK_RUN;
	}
	return TASK_RUN;
}

void dfs_queue_work(dfs *fs, dfs_work *w, simtime_t at)
{
	w->next = NULL;
	w->pages = w->inodes = 0;
	if (fs->work_tail)
		fs->work_tail->next = w;
	else
		fs->work_head = w;
	fs->work_tail = w;
	vd_flusher_kick(fs, at);
}

/* Wake the flusher (spawned on first use). */
void vd_flusher_kick(dfs *fs, simtime_t at)
{
	if (!fs->flusher) {
		fs->flusher = task_spawn(fs->s, "flush-btrfs", flusher_step, fs, at);
		assert(fs->flusher);
		return;
	}
	if (fs->flusher_idle) {
		fs->flusher_idle = 0;
		task_wake(fs->s, fs->flusher, at);
	}
}

/* The flusher's periodic wakeup (wb_workfn, kupdate style: inodes dirty
 * for longer than the expiry; over the background threshold, the oldest
 * whatever their age). */
static void flusher_tick(sim *s, void *arg)
{
	dfs *fs = arg;
	fs->wb_kupdate = 1;
	/* a wakeup that finds nothing to write goes back to sleep at once */
	if (!fs->flusher || fs->flusher_idle) {
		if (flusher_pick(fs, sim_now(s)))
			vd_flusher_kick(fs, sim_now(s));
		else
			fs->wb_kupdate = 0;
	}
	if (fs->flusher_armed)
		sim_at(s, flusher_due(fs, sim_now(s), fs->o.wb_interval), flusher_tick, fs);
}

void dfs_start_flusher(dfs *fs)
{
	if (fs->flusher_armed)
		return;
	fs->flusher_armed = 1;
	sim_at(fs->s, flusher_due(fs, sim_now(fs->s), fs->o.wb_interval), flusher_tick, fs);
}
