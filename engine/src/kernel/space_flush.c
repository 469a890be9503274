/*
 * space_flush.c - the file system side of space reclaim (space_fs.h): the
 * delalloc lists btrfs keeps per root, the delalloc operations
 * shrink_delalloc runs on the real data path, and the flush operations
 * (delayed refs, chunk allocation, commit) of the async reclaim workers,
 * started at the first ticket.
 */
#include "space_fs_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "costs.h"
#include "lab.h"
#include "labmem.h"

/* ------------------------------------------- the delalloc operations */

/* fs_info->delalloc_bytes: the data path's running total. */
static uint64_t dl_bytes(void *ctx)
{
	sfs *x = ctx;
	return x->df ? x->df->delalloc_total : 0;
}

/* An inode on the delalloc lists: it has delalloc and is not evicted. */
int sfs_on_list(const dinode *d)
{
	return d->sp_on_list && d->inode && !d->sp_gone;
}

/* The delalloc_roots entry of root id, added if absent; NULL when out of
 * memory (the inode then joins no list: reclaim does not see it). */
static sfs_droot *droot_get(sfs *x, uint64_t root)
{
	for (int i = 0; i < x->ndroots; i++)
		if (x->droots[i].root == root)
			return &x->droots[i];
	if (x->ndroots == x->droots_cap) {
		int nc = x->droots_cap ? x->droots_cap * 2 : 8;
		sfs_droot *n = lab_realloc(x->droots, (size_t)nc * sizeof *n);
		if (!n)
			return NULL;
		x->droots = n;
		x->droots_cap = nc;
	}
	sfs_droot *r = &x->droots[x->ndroots++];
	*r = (sfs_droot){.root = root};
	return r;
}

/*
 * Keep d's place on the delalloc lists (models btrfs_add_delalloc_inodes
 * and btrfs_del_delalloc_inode): an inode whose delalloc goes from 0 to
 * some joins the tail of its root's delalloc_inodes, the root joins the
 * tail of fs_info->delalloc_roots when it had none; an inode whose
 * delalloc is gone (written back, truncated, evicted) leaves.
 */
void sfs_list_update(sfs *x, dinode *d, int evict)
{
	int want = !evict && d->delalloc_bytes > 0 && d->inode;
	if (want == d->sp_on_list)
		return;
	sfs_droot *r = droot_get(x, want ? d->inode->root->id : d->sp_root_id);
	if (want) {
		if (!r)
			return;
		d->sp_on_list = 1;
		d->sp_root_id = d->inode->root->id;
		if (r->n++ == 0)
			r->seq = ++x->list_seq;
		d->sp_lprev = r->tail;
		d->sp_lnext = NULL;
		if (r->tail)
			r->tail->sp_lnext = d;
		else
			r->head = d;
		r->tail = d;
		x->nr_listed++;
	} else {
		d->sp_on_list = 0;
		if (r) {
			r->n--;
			if (d->sp_lprev)
				d->sp_lprev->sp_lnext = d->sp_lnext;
			else
				r->head = d->sp_lnext;
			if (d->sp_lnext)
				d->sp_lnext->sp_lprev = d->sp_lprev;
			else
				r->tail = d->sp_lprev;
		}
		d->sp_lnext = d->sp_lprev = NULL;
		x->nr_listed--;
	}
}

/* The delalloc inodes counted on the lists. */
static uint64_t dl_nr_inodes(void *ctx)
{
	sfs *x = ctx;
	return x->nr_listed;
}

/* Order of delalloc_roots: when each root (last) joined it. */
static int droot_cmp(const void *a, const void *b)
{
	const sfs_droot *p = *(const sfs_droot *const *)a, *q = *(const sfs_droot *const *)b;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

/* The delalloc inodes in flush order: roots in delalloc_roots order, each
 * root's delalloc_inodes from its head (btrfs_start_delalloc_roots). */
uint64_t sfs_list(void *ctx, void **out, uint64_t max)
{
	sfs *x = ctx;
	if (!x->df || !max || !x->ndroots)
		return 0;
	sfs_droot *one[1], **rs = one;
	if (x->ndroots > 1) {
		rs = lab_malloc((size_t)x->ndroots * sizeof *rs);
		if (!rs)
			return 0;
	}
	int nr = 0;
	for (int i = 0; i < x->ndroots; i++)
		if (x->droots[i].n)
			rs[nr++] = &x->droots[i];
	if (nr > 1)
		qsort(rs, (size_t)nr, sizeof *rs, droot_cmp);
	uint64_t n = 0;
	for (int i = 0; i < nr && n < max; i++)
		for (dinode *d = rs[i]->head; d && n < max; d = d->sp_lnext)
			out[n++] = d;
	if (rs != one)
		free(rs);
	return n;
}

/* writepages from reclaim: start writeback of the inode's delalloc on t
 * (vd_writeback_nr, WB_SYNC_NONE: its bios complete at end_io; with the
 * synchronous drive t waits for them). An inode under writeback already
 * is skipped. */
static int64_t dl_writepages(void *ctx, task *t, void *inode, int64_t *nr)
{
	sfs *x = ctx;
	dinode *d = inode;
	if (d->wb_active || !sfs_on_list(d))
		return 0;
	int64_t n = vd_writeback_nr(d, t, *nr, x->df->sync_io);
	if (n > 0 && *nr != INT64_MAX)
		*nr -= n;
	return n;
}

/* btrfs_wait_ordered_roots(nr): wait for the oldest nr ordered extents in
 * flight (their I/O and their completion) to finish. */
static int dl_wait_ordered(void *ctx, task *t, uint64_t nr)
{
	sfs *x = ctx;
	if (!x->df)
		return 0;
	return vd_wait_ordered(x->df, t, nr) ? DELALLOC_PARKED : 0;
}

/* writeback_inodes_sb_nr's work on the data path's flusher, for a
 * reclaim batch. */
typedef struct sb_work {
	dfs_work w;
	sfs *x;
	struct dl_batch *b;
	struct sb_work *prev, *next; /* on x->sb_works until done */
} sb_work;

static void sb_inode_done(void *ctx, dinode *d, uint64_t pages, simtime_t at)
{
	sb_work *sw = ctx;
	delalloc_sb_inode(&sw->x->dc, d, pages, at);
}

static void sb_done(void *ctx, dfs_work *w, simtime_t at)
{
	sb_work *sw = ctx;
	sfs *x = sw->x;
	delalloc_sb_done(&x->dc, sw->b, w->pages, w->inodes, at);
	if (sw->prev)
		sw->prev->next = sw->next;
	else
		x->sb_works = sw->next;
	if (sw->next)
		sw->next->prev = sw->prev;
	free(sw);
}

void sfs_sb_works_free(sfs *x)
{
	while (x->sb_works) {
		sb_work *n = x->sb_works->next;
		free(x->sb_works);
		x->sb_works = n;
	}
}

/* The 5.9 flush: queue the work (wb_queue_work) and wake the flusher,
 * which runs it after a wakeup's latency. */
static int dl_queue_sb_work(void *ctx, task *t, int64_t nr_pages, struct dl_batch *b)
{
	sfs *x = ctx;
	if (!x->df)
		return LAB_EINVAL;
	sb_work *sw = lab_calloc(1, sizeof *sw);
	if (!sw)
		return LAB_ENOMEM;
	sw->x = x;
	sw->b = b;
	sw->w.nr_pages = nr_pages;
	sw->w.inode_done = sb_inode_done;
	sw->w.done = sb_done;
	sw->w.ctx = sw;
	sw->next = x->sb_works;
	if (sw->next)
		sw->next->prev = sw;
	x->sb_works = sw;
	dfs_queue_work(x->df, &sw->w, t->clock + RECLAIM_NS_WAKEUP);
	return 0;
}

/* ---------------------------------------------- the flush operations */

/* FLUSH_DELAYED_REFS: run the queued refs (their extent items turn
 * reserved bytes into used, their frees pin). */
static int op_delayed_refs(void *ctx, task *t, uint64_t nr)
{
	sfs *x = ctx;
	(void)nr;
	x->st.ref_runs++;
	int r = x->tm ? trans_run_delayed_refs(x->tm, t) : fs_run_refs(x->fs, t);
	fs_space_sync(x->fs, t->clock);
	return r;
}

/* ALLOC_CHUNK / ALLOC_CHUNK_FORCE: btrfs_chunk_alloc through the
 * allocator. Without force, should_alloc_chunk: not before real usage
 * passes 80% of the kind's chunks. A kind whose chunk no longer fits on
 * the device is marked full. */
static int op_alloc_chunk(void *ctx, task *t, int kind, int force)
{
	return sfs_alloc_chunk(ctx, t, kind, force);
}

int sfs_alloc_chunk(sfs *x, task *t, int kind, int force)
{
	fs_info *fs = x->fs;
	space_info *si = &fs->space.info[kind];
	if (!force && space_used(si, 0) + (2ull << 20) < si->total_bytes / 10 * 8)
		return 0;
	int ak = kind == SPACE_DATA ? ALLOC_DATA : ALLOC_METADATA;
	if (!alloc_chunk_fits(&fs->alloc, ak)) {
		si->full = 1;
		return 0;
	}
	task_cpu(fs->sim, t, RECLAIM_NS_CHUNK_ALLOC);
	int r = alloc_chunk_new(&fs->alloc, ak);
	if (r == LAB_ENOSPC) {
		si->full = 1;
		return 0;
	}
	if (r)
		return r;
	x->st.chunk_allocs++;
	fs_space_sync(fs, t->clock);
	return 0;
}

/* COMMIT_TRANS: join and commit the running transaction; a wait (a
 * commit running, writers inside) parks the worker and the state machine
 * calls again (RECLAIM_RETRY). fs_commit's unpin grants the tickets. */
static int op_commit(void *ctx, task *t, int kind)
{
	sfs *x = ctx;
	if (!x->tm) {
		x->st.commits++;
		int r = fs_commit(x->fs, t);
		fs_space_sync(x->fs, t->clock);
		return r;
	}
	(void)kind;
	/* the async workers and priority flushers may commit at once: each
	 * keeps its own handle */
	sfs_commit *c = NULL;
	for (int i = 0; i < SFS_COMMITTERS && !c; i++)
		if (x->commit[i].state && x->commit[i].task_id == t->id)
			c = &x->commit[i];
	for (int i = 0; i < SFS_COMMITTERS && !c; i++)
		if (!x->commit[i].state)
			c = &x->commit[i];
	if (!c)
		return LAB_ENOMEM;
	c->task_id = t->id;
	if (c->state <= 1) {
		int r = trans_start(x->tm, t, &c->h);
		if (r == TRANS_WAIT) {
			c->state = 1;
			return RECLAIM_RETRY;
		}
		if (r) {
			c->state = 0;
			return r;
		}
		c->state = 2;
	}
	int r = trans_commit(&c->h, TCOMMIT_SPACE);
	if (r == TRANS_WAIT)
		return RECLAIM_RETRY;
	c->state = 0;
	x->st.commits++;
	return r;
}

/* may_commit_transaction: what a commit gives back besides the pinned
 * bytes, the delayed refs reserve (the delayed items' reserve is not
 * kept: the model's delayed items reserve nothing apart). */
static uint64_t op_commit_frees(void *ctx, int kind)
{
	sfs *x = ctx;
	return kind == SPACE_META ? x->drefs.reserved : 0;
}

/* Start the reclaim workers at the first ticket (so a run that never
 * runs short of space has no extra tasks or events). */
int sfs_start_workers(fs_info *fs, sfs *x, simtime_t at)
{
	if (x->df && !x->dc_ready) {
		delalloc_ops dops = {
			.ctx = x,
			.delalloc_bytes = dl_bytes,
			.nr_inodes = dl_nr_inodes,
			.list_inodes = sfs_list,
			.writepages = dl_writepages,
			.wait_ordered = dl_wait_ordered,
			.queue_sb_work = dl_queue_sb_work,
		};
		int r = delalloc_init(&x->dc, fs->sim, &fs->space, &dops, &fs->opts.patches,
				      x->ncpus);
		if (r)
			return r;
		x->dc_ready = 1;
	}
	reclaim_flush_ops ops = {
		.ctx = x,
		.run_delayed_refs = op_delayed_refs,
		.alloc_chunk = op_alloc_chunk,
		.commit = op_commit,
		.commit_frees = op_commit_frees,
	};
	int r = reclaim_init(&x->rc, fs->sim, &fs->space, x->dc_ready ? &x->dc : NULL,
			     &ops, x->ncpus);
	if (r)
		return r;
	x->rc_ready = 1;
	sfs_observe_apply(x);
	/* the workers' timelines begin when they are first kicked */
	task_wait_until(x->rc.meta.task, at);
	task_wait_until(x->rc.data.task, at);
	return 0;
}

/* space.h's kick before the workers exist: start them, then kick. */
void sfs_lazy_kick(void *ctx, space_info *si, simtime_t at)
{
	fs_info *fs = ctx;
	sfs *x = fs->space_fs;
	if (!x->rc_ready && sfs_start_workers(fs, x, at))
		return; /* out of memory: the tickets wait for releases */
	if (fs->space.kick && fs->space.kick != sfs_lazy_kick)
		fs->space.kick(fs->space.kick_ctx, si, at);
}

/* ------------------------------------------------------ the observer */

static void obs_flushed(void *ctx, void *inode, uint64_t pages, simtime_t at)
{
	sfs *x = ctx;
	if (x->obs.flushed)
		x->obs.flushed(x->obs.ctx, inode, pages, at);
}

static void obs_record(void *ctx, const reclaim_record *r)
{
	sfs *x = ctx;
	if (x->obs.record)
		x->obs.record(x->obs.ctx, r);
}

void sfs_observe_apply(sfs *x)
{
	int on = x->obs.flushed || x->obs.record;
	if (x->dc_ready) {
		x->dc.observe = on ? obs_flushed : NULL;
		x->dc.observe_ctx = x;
	}
	if (x->rc_ready) {
		x->rc.on_record = on ? obs_record : NULL;
		x->rc.on_record_ctx = x;
	}
}

void fs_space_observe(fs_info *fs, const fs_space_observer *o)
{
	sfs *x = get_sfs(fs);
	if (!x)
		return;
	if (o)
		x->obs = *o;
	else
		memset(&x->obs, 0, sizeof x->obs);
	sfs_observe_apply(x);
}

uint64_t fs_space_limit(fs_info *fs, int kind)
{
	if (!get_sfs(fs) || kind < 0 || kind >= SPACE_KINDS)
		return 0;
	const space_info *si = &fs->space.info[kind];
	uint64_t held = space_used(si, 0);
	uint64_t cap = si->total_bytes;
	if (kind == SPACE_META)
		cap += space_avail(&fs->space, si, RESERVE_FLUSH_ALL);
	return cap > held ? cap - held : 0;
}
