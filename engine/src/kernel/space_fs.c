/*
 * space_fs.c - space reservation wired into the file system (see
 * space_fs.h): the allocator mirror, the reservations of the operations
 * with their tickets, the inodes' delalloc holdings. The delalloc lists
 * and the reclaim workers' flush operations are in space_flush.c.
 */
#include "space_fs_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lab.h"
#include "labmem.h"

/* ------------------------------------------------------ the mirror */

/* Copy the allocator's per-kind counters into the space_infos (what
 * space_sync_alloc does, without granting). Returns 1 if a total grew. */
static int mirror(fs_info *fs)
{
	static const int kinds[SPACE_KINDS] = {ALLOC_DATA, ALLOC_METADATA};
	const alloc_ctl *a = &fs->alloc;
	int grew = 0;
	for (int k = 0; k < SPACE_KINDS; k++) {
		space_info *si = &fs->space.info[k];
		if (a->total[kinds[k]] > si->total_bytes)
			grew = 1;
		si->total_bytes = a->total[kinds[k]];
		si->bytes_used = a->used[kinds[k]];
		si->bytes_reserved = a->reserved[kinds[k]];
		si->bytes_pinned = a->pinned_bytes[kinds[k]];
	}
	return grew;
}

/* alloc.h's on_change: keep the space_infos current; a new chunk (made
 * on demand by an allocation) may let tickets through. */
static void on_alloc_change(void *ctx)
{
	fs_info *fs = ctx;
	if (mirror(fs))
		fs_space_sync(fs, sim_now(fs->sim));
}

/* Mirror, then grant what fits on both space_infos (after an unpin or a
 * new chunk: btrfs_try_granting_tickets). */
void fs_space_sync(fs_info *fs, simtime_t at)
{
	if (!fs->space_on)
		return;
	mirror(fs);
	for (int k = 0; k < SPACE_KINDS; k++)
		space_try_grant(&fs->space, &fs->space.info[k], at);
}

/* ------------------------------------------------------------- setup */

/* Mount time: the space_infos over the allocator, the lazy kick, the
 * allocator's change hook (models btrfs_init_space_info). */
void fs_space_init(fs_info *fs)
{
	if (!fs->sim)
		return;
	sfs *x = lab_calloc(1, sizeof *x);
	if (!x)
		return; /* no accounting; the fs still works */
	x->fs = fs;
	x->ncpus = 4;
	space_rsv_init(&x->drefs, SPACE_META);
	space_init(&fs->space, fs->sim);
	fs->space.unallocated_fn = space_alloc_unallocated;
	fs->space.unallocated_ctx = &fs->alloc;
	fs->space.kick = sfs_lazy_kick;
	fs->space.kick_ctx = fs;
	fs->alloc.on_change = on_alloc_change;
	fs->alloc.on_change_ctx = fs;
	fs->space_fs = x;
	fs->space_on = 1;
	mirror(fs);
}

/* Unmount: the workers' state, the waiter table, the lists. */
void fs_space_destroy(fs_info *fs)
{
	sfs *x = fs->space_fs;
	if (!x)
		return;
	if (x->rc_ready)
		reclaim_destroy(&x->rc);
	if (x->dc_ready)
		delalloc_destroy(&x->dc);
	sfs_sb_works_free(x);
	for (int i = 0; i < x->nw; i++)
		free(x->w[i]);
	free(x->w);
	free(x->spare);
	free(x->droots);
	free(x);
	fs->space_fs = NULL;
	fs->space_on = 0;
	fs->alloc.on_change = NULL;
}

/* What the flush operations work on (see space_fs.h). */
void fs_space_attach(fs_info *fs, struct trans_mgr *tm, struct dfs *df)
{
	sfs *x = get_sfs(fs);
	if (!x)
		return;
	x->tm = tm;
	x->df = df;
}

/* An unallocated_fn for a file system that may not overcommit. */
static uint64_t unallocated_none(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Overcommit on (the kernel) or off: calc_available_free_space then sees
 * no unallocated space, so reservations fit only in allocated chunks. */
int fs_space_overcommit(fs_info *fs, int on)
{
	if (!get_sfs(fs))
		return LAB_EINVAL;
	fs->space.unallocated_fn = on ? space_alloc_unallocated : unallocated_none;
	return 0;
}

/* The CPU count, before the workers start. */
int fs_space_config(fs_info *fs, int ncpus)
{
	sfs *x = get_sfs(fs);
	if (!x || ncpus < 1 || ncpus > 1024)
		return LAB_EINVAL;
	if (x->rc_ready)
		return LAB_ESTATE;
	x->ncpus = ncpus;
	return 0;
}

/* ------------------------------------------------------ reservations */

/* The waiter entry of (t, kind, prio), or -1. */
static int wait_find(const sfs *x, const task *t, int kind, int prio)
{
	for (int i = 0; i < x->nw; i++)
		if (x->w[i]->task_id == t->id && x->w[i]->kind == kind &&
		    x->w[i]->prio == prio)
			return i;
	return -1;
}

/* The index of entry e. */
static int wait_index(const sfs *x, const sfs_wait *e)
{
	for (int i = 0; i < x->nw; i++)
		if (x->w[i] == e)
			return i;
	assert(0 && "waiter not in the table");
	return -1;
}

/* Room for one more waiter entry; 0 or LAB_ENOMEM. */
static int wait_grow(sfs *x)
{
	int nc = x->wcap ? x->wcap * 2 : 8;
	sfs_wait **n = lab_realloc(x->w, (size_t)nc * sizeof *n);
	if (!n)
		return LAB_ENOMEM;
	x->w = n;
	x->wcap = nc;
	return 0;
}

/* A new waiter entry for (t, kind, prio); NULL when out of memory. */
static sfs_wait *wait_new(sfs *x, const task *t, int kind, int prio)
{
	if (x->nw == x->wcap && wait_grow(x))
		return NULL;
	sfs_wait *e = lab_calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->task_id = t->id;
	e->kind = kind;
	e->prio = prio;
	x->w[x->nw++] = e;
	return e;
}

/* Drop entry i (order kept: the table is searched, never iterated for
 * effects, but a stable order keeps runs reproducible). */
static void wait_del(sfs *x, int i)
{
	free(x->w[i]);
	memmove(x->w + i, x->w + i + 1, (size_t)(x->nw - i - 1) * sizeof *x->w);
	x->nw--;
}

/* `got` bytes are in may_use for a request of `bytes`: give back the
 * excess, or the whole grant if it falls short (the caller reserves anew).
 * Returns 1 when the request is covered. */
static int settle_grant(fs_info *fs, int kind, uint64_t got, uint64_t bytes,
			simtime_t at)
{
	if (got >= bytes) {
		space_release(&fs->space, kind, got - bytes, at);
		return 1;
	}
	space_release(&fs->space, kind, got, at);
	return 0;
}

/* The outcome of e's ticket once decided: the grant settled against
 * `bytes` (0), or its error. The entry is dropped. */
static int wait_collect(fs_info *fs, sfs *x, sfs_wait *e, task *t, uint64_t bytes)
{
	int r = space_ticket_result(&fs->space, &e->tk, t->clock);
	uint64_t got = e->tk.orig_bytes;
	int kind = e->kind;
	wait_del(x, wait_index(x, e));
	if (r) {
		x->st.enospc++;
		return r;
	}
	return settle_grant(fs, kind, got, bytes, t->clock) ? 0 : 1;
}

/* One step of a priority ticket's own flushing on t (models
 * priority_reclaim_metadata_space): FS_SPACE_WAIT while it goes on (t is
 * parked on a flush operation, or rescheduled at once to run the next
 * state), else the ticket's outcome as wait_collect gives it. */
static int prio_step(fs_info *fs, sfs *x, sfs_wait *e, task *t, uint64_t bytes)
{
	int r = reclaim_priority_step(&x->rc, &e->p, t);
	if (r == RECLAIM_PARKED)
		return FS_SPACE_WAIT;
	if (r) {
		task_wake(fs->sim, t, t->clock); /* RECLAIM_MORE: run again */
		return FS_SPACE_WAIT;
	}
	return wait_collect(fs, x, e, t, bytes);
}

/*
 * A data reservation before the ticketing series (5.9's
 * btrfs_alloc_data_chunk_ondemand, P_000_DATA_TICKETS off): the writer
 * checks the data space_info itself and, when the bytes do not fit,
 * allocates a data chunk in its own context (join the transaction,
 * btrfs_chunk_alloc forced) and looks again; no ticket, no queue, no
 * worker. Returns 0 (reserved), 1 (the kind is full: 5.9 then flushes all
 * delalloc and commits in the writer; the model hands that to the async
 * data worker through a ticket, the caller's fallback) or LAB_E*.
 */
static int data_reserve_ondemand(fs_info *fs, sfs *x, task *t, uint64_t bytes)
{
	space_info *si = &fs->space.info[SPACE_DATA];
	for (;;) {
		if (space_reserve(&fs->space, SPACE_DATA, t, bytes, RESERVE_NO_FLUSH, NULL) == 0)
			return 0;
		if (si->full)
			return 1;
		x->st.ondemand_chunks++;
		int r = sfs_alloc_chunk(x, t, SPACE_DATA, 1);
		if (r)
			return r;
	}
}

/*
 * A reservation for t (models __reserve_bytes, then the waiting of
 * handle_reserve_ticket across the task's retries): a kept grant or a
 * decided ticket of t's is collected first; else reserve, queueing a
 * ticket (normal: t parks on it; priority: t flushes for itself).
 */
int fs_space_reserve_flush(fs_info *fs, task *t, int kind, uint64_t bytes, int flush)
{
	sfs *x = get_sfs(fs);
	if (!x || bytes == 0)
		return 0;
	if (kind < 0 || kind >= SPACE_KINDS || flush < RESERVE_NO_FLUSH ||
	    flush > RESERVE_FLUSH_ALL_STEAL)
		return LAB_EINVAL;
	space_ctl *sc = &fs->space;
	if (!t || flush == RESERVE_NO_FLUSH)
		return space_reserve(sc, kind, t, bytes, RESERVE_NO_FLUSH, NULL);
	int prio = flush == RESERVE_FLUSH_LIMIT || flush == RESERVE_FLUSH_EVICT;
	int i = wait_find(x, t, kind, prio);
	if (i < 0 && kind == SPACE_DATA && flush == RESERVE_FLUSH_DATA &&
	    !fs_patch_on(fs, P_000_DATA_TICKETS)) {
		int r = data_reserve_ondemand(fs, x, t, bytes);
		if (r <= 0)
			return r;
	}
	if (i >= 0) {
		sfs_wait *e = x->w[i];
		int r;
		if (e->held) {
			uint64_t got = e->bytes;
			wait_del(x, i);
			r = settle_grant(fs, kind, got, bytes, t->clock) ? 0 : 1;
		} else if (e->flushing) {
			r = prio_step(fs, x, e, t, bytes);
		} else if (e->tk.queued) {
			task_park(t, &e->tk.wait); /* woken early: sleep on */
			return FS_SPACE_WAIT;
		} else {
			r = wait_collect(fs, x, e, t, bytes);
		}
		if (r <= 0 || r == FS_SPACE_WAIT)
			return r;
		/* 1: the grant fell short of this request: reserve anew */
	}
	/* The ticket lives in a spare entry, which joins the table only if
	 * the reservation queues (most are granted at once: no allocation) */
	if (!x->spare && !(x->spare = lab_calloc(1, sizeof *x->spare)))
		return LAB_ENOMEM;
	if (x->nw == x->wcap && wait_grow(x))
		return LAB_ENOMEM;
	sfs_wait *e = x->spare;
	int r = space_reserve(sc, kind, t, bytes, flush, &e->tk);
	if (r != SPACE_WAIT && r != SPACE_PRIORITY)
		return r;
	x->spare = NULL;
	e->task_id = t->id;
	e->kind = kind;
	e->prio = prio;
	e->held = e->flushing = 0;
	e->bytes = bytes;
	x->w[x->nw++] = e;
	if (r == SPACE_WAIT)
		return FS_SPACE_WAIT;
	x->st.prio_tickets++;
	if (!x->rc_ready && sfs_start_workers(fs, x, t->clock))
		return wait_collect(fs, x, e, t, bytes) ? LAB_ENOSPC : 0;
	reclaim_priority_begin(&x->rc, &e->p, &e->tk, flush);
	e->flushing = 1;
	return prio_step(fs, x, e, t, bytes);
}

/* The default flush modes: FLUSH_DATA for data, FLUSH_ALL for metadata. */
int fs_space_reserve(fs_info *fs, task *t, int kind, uint64_t bytes)
{
	return fs_space_reserve_flush(fs, t, kind, bytes,
				      kind == SPACE_DATA ? RESERVE_FLUSH_DATA
							 : RESERVE_FLUSH_ALL);
}

/* Keep a grant for t's retry (a held waiter entry). */
void fs_space_hold(fs_info *fs, task *t, int kind, uint64_t bytes)
{
	sfs *x = get_sfs(fs);
	if (!x || !bytes)
		return;
	sfs_wait *e = t ? wait_new(x, t, kind, 0) : NULL;
	if (!e) {
		space_release(&fs->space, kind, bytes, t ? t->clock : sim_now(fs->sim));
		return;
	}
	e->held = 1;
	e->bytes = bytes;
}

/* btrfs_migrate_to_delayed_refs_rsv: `bytes` already in may_use go to
 * the delayed refs reserve up to its size; the rest is given back. */
static void drefs_migrate(fs_info *fs, sfs *x, uint64_t bytes, simtime_t at)
{
	block_rsv *d = &x->drefs;
	uint64_t room = d->size > d->reserved ? d->size - d->reserved : 0;
	uint64_t mv = bytes < room ? bytes : room;
	d->reserved += mv;
	if (d->reserved >= d->size)
		d->full = 1;
	if (d->reserved > x->st.drefs_peak)
		x->st.drefs_peak = d->reserved;
	if (bytes > mv)
		space_release(&fs->space, SPACE_META, bytes - mv, at);
}

/* The operation t was retrying failed before it came back to its other
 * reservations (its start_transaction's ticket failed): what they were
 * granted goes back and a ticket still queued leaves its list, as the
 * kernel's error path releases what the call had reserved. */
static void abandon_task(fs_info *fs, sfs *x, task *t)
{
	for (int i = x->nw - 1; i >= 0; i--) {
		sfs_wait *e = x->w[i];
		if (e->task_id != t->id)
			continue;
		if (e->held) {
			uint64_t b = e->bytes;
			int kind = e->kind;
			wait_del(x, i);
			space_release(&fs->space, kind, b, t->clock);
			continue;
		}
		if (e->tk.queued || e->tk.error) {
			space_ticket_result(&fs->space, &e->tk, t->clock);
			wait_del(x, i);
			continue;
		}
		uint64_t b = e->tk.orig_bytes;
		int kind = e->kind;
		wait_del(x, i);
		space_release(&fs->space, kind, b, t->clock);
	}
}

/* start_transaction's reservation of insert_metadata_size(items) into the
 * handle's block_rsv, which becomes the one tree blocks are taken from;
 * while the delayed refs reserve is not full, as much again for it (so
 * a create of 5 items asks for 2.5 MiB, 20 reclaim items). */
int fs_space_meta_begin(fs_info *fs, task *t, uint64_t items, fs_space_op *op)
{
	memset(op, 0, sizeof *op);
	space_rsv_init(&op->rsv, SPACE_META);
	if (!fs->space_on)
		return 0;
	sfs *x = get_sfs(fs);
	uint64_t bytes = space_insert_metadata_size(&fs->space, items);
	uint64_t drefs = x && !x->drefs.full ? bytes : 0;
	int r = fs_space_reserve(fs, t, SPACE_META, bytes + drefs);
	if (r < 0 && t && x)
		abandon_task(fs, x, t);
	if (r)
		return r;
	if (drefs)
		drefs_migrate(fs, x, drefs, t ? t->clock : sim_now(fs->sim));
	space_rsv_add(&op->rsv, bytes, 1);
	op->prev = fs->cur_rsv;
	fs->cur_rsv = &op->rsv;
	op->active = 1;
	return 0;
}

/* __btrfs_end_transaction's btrfs_block_rsv_release of the handle. */
void fs_space_meta_end(fs_info *fs, task *t, fs_space_op *op)
{
	if (!op->active)
		return;
	assert(fs->cur_rsv == &op->rsv);
	fs->cur_rsv = op->prev;
	space_rsv_release(&fs->space, &op->rsv, UINT64_MAX,
			  t ? t->clock : sim_now(fs->sim));
	op->active = 0;
}

/* More for a running operation (btrfs_block_rsv_refill into its rsv). */
int fs_space_meta_add(fs_info *fs, task *t, uint64_t bytes, int flush, fs_space_op *op)
{
	if (!op->active)
		return 0;
	int r = fs_space_reserve_flush(fs, t, SPACE_META, bytes, flush);
	if (!r)
		space_rsv_add(&op->rsv, bytes, 1);
	return r;
}

/* The operation waits before doing anything: keep its bytes for the retry. */
void fs_space_meta_park(fs_info *fs, task *t, fs_space_op *op)
{
	if (!op->active)
		return;
	assert(fs->cur_rsv == &op->rsv);
	fs->cur_rsv = op->prev;
	fs_space_hold(fs, t, SPACE_META, op->rsv.reserved);
	op->active = 0;
}

/* The wiring's counters (zeros when reservations are off). */
void fs_space_get_stats(fs_info *fs, fs_space_stats *st)
{
	sfs *x = get_sfs(fs);
	if (x)
		*st = x->st;
	else
		memset(st, 0, sizeof *st);
}

void fs_space_dref_heads(fs_info *fs, int64_t delta, simtime_t at)
{
	sfs *x = get_sfs(fs);
	if (!x || !delta)
		return;
	uint64_t per = space_insert_metadata_size(&fs->space, 1);
	if (delta > 0) {
		x->drefs_heads += (uint64_t)delta;
		if (x->drefs_heads > x->st.drefs_heads_peak)
			x->st.drefs_heads_peak = x->drefs_heads;
		x->drefs.size += (uint64_t)delta * per;
		x->drefs.full = 0;
		return;
	}
	uint64_t n = (uint64_t)-delta;
	if (n > x->drefs_heads)
		n = x->drefs_heads;
	x->drefs_heads -= n;
	space_rsv_release(&fs->space, &x->drefs, n * per, at);
}

block_rsv *fs_space_drefs_rsv(fs_info *fs)
{
	sfs *x = get_sfs(fs);
	return x ? &x->drefs : NULL;
}

/* btrfs_use_block_rsv for a new tree block, from the current rsv. */
void fs_space_tree_block(fs_info *fs)
{
	if (fs->space_on && fs->cur_rsv)
		space_rsv_use(&fs->space, fs->cur_rsv, fs->space.nodesize);
}

/* trans.c's count of what open handles hold. */
void fs_space_handle_held(fs_info *fs, int64_t delta)
{
	sfs *x = get_sfs(fs);
	if (!x)
		return;
	assert(delta >= 0 || (uint64_t)-delta <= x->handle_held);
	x->handle_held = (uint64_t)((int64_t)x->handle_held + delta);
}

/* -------------------------------------------------- inode holdings */

/* The end of btrfs_delalloc_reserve_metadata and of
 * btrfs_check_data_free_space: the inode holds the write's bytes. */
void fs_space_inode_add(fs_info *fs, dinode *d, uint64_t data, uint64_t meta)
{
	if (!fs->space_on)
		return;
	vd_chk_touch(d);
	d->sp_data_held += data;
	d->sp_pending += data;
	space_rsv_add(&d->sp_rsv.rsv, meta, 0);
}

/* btrfs_delalloc_release_extents after the copy. */
void fs_space_inode_done(fs_info *fs, dinode *d, simtime_t at)
{
	if (!fs->space_on || !d->sp_pending)
		return;
	d->sp_pending = 0;
	if (!d->sp_gone)
		fs_space_inode_update(fs, d, at, 0);
}

/*
 * d's holdings follow its state: data down to its delalloc (consumed by
 * writeback's allocation, else released: btrfs_free_reserved_data_space),
 * metadata down to btrfs_calculate_inode_block_rsv_size of its extents
 * and csum bytes (btrfs_inode_rsv_release); the delalloc lists kept.
 */
void fs_space_inode_update(void *ctx, dinode *d, simtime_t at, int evict)
{
	fs_info *fs = ctx;
	if (!fs->space_on)
		return;
	sfs_list_update(fs->space_fs, d, evict);
	space_ctl *sc = &fs->space;
	inode_rsv *ir = &d->sp_rsv;
	if (evict)
		d->sp_pending = 0;
	uint64_t want = evict ? 0 : d->delalloc_bytes + d->sp_pending;
	if (d->sp_data_held > want) {
		/* writeback allocated it (cow_file_range: the reservation
		 * became bytes_reserved) or it went without an extent (an
		 * inline extent, a truncate: btrfs_free_reserved_data_space) */
		uint64_t drop = d->sp_data_held - want;
		uint64_t alloc = d->x ? d->x->sp_data_alloc : 0;
		uint64_t used = alloc < drop ? alloc : drop;
		d->sp_data_held = want;
		space_may_use_consume(sc, SPACE_DATA, used);
		space_release(sc, SPACE_DATA, drop - used, at);
	}
	if (d->x)
		d->x->sp_data_alloc = 0;
	if (evict) {
		ir->outstanding_extents = 0;
		ir->csum_bytes = 0;
	} else {
		uint64_t pend = d->sp_pending ? space_count_max_extents(d->sp_pending) : 0;
		ir->outstanding_extents = (uint32_t)(vd_outstanding(d) + pend);
		ir->csum_bytes = d->delalloc_bytes + vd_ordered_bytes(d) + d->sp_pending;
	}
	ir->rsv.size = space_inode_rsv_size(sc, ir);
	space_rsv_release(sc, &ir->rsv, 0, at);
}

/* ------------------------------------------------------ observation */

/* What every holder holds in bytes_may_use of kind (for the checker). */
uint64_t fs_space_held(fs_info *fs, int kind)
{
	sfs *x = get_sfs(fs);
	if (!x)
		return 0;
	uint64_t n = fs_space_held_others(fs, kind);
	dinode *const *in = x->df ? dfs_inodes(x->df) : NULL;
	for (int i = 0; x->df && i < x->df->ninodes; i++) {
		const dinode *d = in[i];
		n += kind == SPACE_DATA ? d->sp_data_held : d->sp_rsv.rsv.reserved;
	}
	return n;
}

uint64_t fs_space_held_others(fs_info *fs, int kind)
{
	sfs *x = get_sfs(fs);
	if (!x)
		return 0;
	uint64_t n = 0;
	for (int i = 0; i < x->nw; i++) {
		const sfs_wait *e = x->w[i];
		if (e->kind != kind)
			continue;
		if (e->held)
			n += e->bytes;
		else if (!e->tk.queued && !e->tk.error)
			n += e->tk.orig_bytes; /* granted, not yet collected */
	}
	if (kind == SPACE_META)
		n += x->handle_held + x->drefs.reserved;
	return n;
}

/* The lists in flush order (dl_list). */
uint64_t fs_space_delalloc_order(fs_info *fs, struct dinode **out, uint64_t max)
{
	sfs *x = get_sfs(fs);
	return x ? sfs_list(x, (void **)out, max) : 0;
}

/* Inodes on the delalloc lists. */
uint64_t fs_space_listed(fs_info *fs)
{
	sfs *x = get_sfs(fs);
	return x ? x->nr_listed : 0;
}

/* The reclaim workers, once started. */
struct reclaim_ctl *fs_space_reclaim(fs_info *fs)
{
	sfs *x = get_sfs(fs);
	return x && x->rc_ready ? &x->rc : NULL;
}

