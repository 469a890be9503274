/*
 * space.c - space_info counters, overcommit, tickets and block reserves
 * (btrfs 5.10 space-info.c, block-rsv.c, delalloc-space.c). See space.h.
 */
#include "space.h"

#include <assert.h>

#include "alloc.h"
#include "check.h"
#include "costs.h"
#include "lab.h"

#define BTRFS_HEADER_SIZE 101u /* struct btrfs_header */
#define BTRFS_ITEM_SIZE 25u    /* struct btrfs_item */
#define CSUM_SIZE 4u           /* crc32c */

static const char *const kind_names[SPACE_KINDS] = {"data", "metadata"};

/* Set up both space_infos empty, 16 KiB nodes, 4 KiB sectors, single
 * metadata profile, and register the series the front end plots. */
void space_init(space_ctl *sc, sim *s)
{
	*sc = (space_ctl){0};
	sc->sim = s;
	sc->nodesize = 16384;
	sc->sectorsize = 4096;
	sc->meta_factor = 1;
	sc->ncpus = 1;
	for (int k = 0; k < SPACE_KINDS; k++) {
		sc->info[k].kind = k;
		sc->info[k].sc = sc;
	}
	sc->ser_tickets = sim_series_id(s, "space_tickets");
	sc->ser_reclaim = sim_series_id(s, "space_reclaim_size");
	sc->ser_may_use = sim_series_id(s, "space_meta_may_use");
	sc->ser_data_tickets = sim_series_id(s, "space_data_tickets");
	sc->trace_ticket = sim_trace_kind(s, "space_ticket");
	sc->trace_grant = sim_trace_kind(s, "space_grant");
}

/* ------------------------------------------------------------- sizes */

uint64_t space_insert_metadata_size(const space_ctl *sc, uint64_t items)
{
	return (uint64_t)sc->nodesize * SPACE_MAX_LEVEL * 2 * items;
}

uint64_t space_metadata_size(const space_ctl *sc, uint64_t items)
{
	return (uint64_t)sc->nodesize * SPACE_MAX_LEVEL * items;
}

/* Csums of `bytes` of data, one crc32c per sector, packed into items of at
 * most BTRFS_MAX_ITEM_SIZE: that many leaves (btrfs_csum_bytes_to_leaves). */
uint64_t space_csum_leaves(const space_ctl *sc, uint64_t bytes)
{
	uint64_t max_item = sc->nodesize - BTRFS_HEADER_SIZE - BTRFS_ITEM_SIZE;
	uint64_t per_leaf = max_item / CSUM_SIZE;
	uint64_t csums = bytes / sc->sectorsize;
	return (csums + per_leaf - 1) / per_leaf;
}

uint64_t space_count_max_extents(uint64_t bytes)
{
	return (bytes + SPACE_MAX_EXTENT - 1) / SPACE_MAX_EXTENT;
}

uint64_t space_reclaim_items(const space_ctl *sc, uint64_t to_reclaim)
{
	uint64_t nr = to_reclaim / space_insert_metadata_size(sc, 1);
	return nr ? nr : 1;
}

/* ---------------------------------------------------- counters, rules */

uint64_t space_used(const space_info *si, int with_may_use)
{
	uint64_t u = si->bytes_used + si->bytes_reserved + si->bytes_pinned +
		     si->bytes_readonly;
	return with_may_use ? u + si->bytes_may_use : u;
}

/* fs_info->free_chunk_space: device bytes in no chunk. */
static uint64_t space_unallocated(const space_ctl *sc)
{
	return sc->unallocated_fn ? sc->unallocated_fn(sc->unallocated_ctx)
				  : sc->unallocated;
}

/* Half the unallocated space (an eighth when the caller can flush
 * everything) may be promised beyond the allocated chunks: a chunk can be
 * allocated later to back it. */
uint64_t space_avail(const space_ctl *sc, const space_info *si, int flush)
{
	uint64_t factor = si->kind == SPACE_META && sc->meta_factor > 1
				  ? (uint64_t)sc->meta_factor : 1;
	uint64_t avail = space_unallocated(sc) / factor;
	return flush == RESERVE_FLUSH_ALL ? avail >> 3 : avail >> 1;
}

int space_can_overcommit(const space_ctl *sc, const space_info *si,
			 uint64_t bytes, int flush)
{
	if (si->kind == SPACE_DATA)
		return 0;
	return space_used(si, 1) + bytes <
	       si->total_bytes + space_avail(sc, si, flush);
}

/*
 * How much the async worker should try to free (models
 * btrfs_calc_reclaim_metadata_size, 5.10): the queued tickets plus any
 * amount by which we are now overcommitted; with no tickets, nothing
 * unless we are above 90-95% of the chunks and cannot overcommit a
 * per-CPU batch. Data always reclaims for its tickets.
 */
uint64_t space_reclaim_target(const space_ctl *sc, const space_info *si,
			      int ncpus)
{
	uint64_t to_reclaim = si->reclaim_size;
	if (si->kind == SPACE_DATA)
		return to_reclaim;
	uint64_t avail = space_avail(sc, si, RESERVE_FLUSH_ALL);
	uint64_t used = space_used(si, 1);
	if (si->total_bytes + avail < used)
		to_reclaim += used - (si->total_bytes + avail);
	if (to_reclaim)
		return to_reclaim;
	uint64_t batch = (uint64_t)(ncpus > 0 ? ncpus : 1) << 20;
	if (batch > (16ull << 20))
		batch = 16ull << 20;
	if (space_can_overcommit(sc, si, batch, RESERVE_FLUSH_ALL))
		return 0;
	uint64_t expected =
		space_can_overcommit(sc, si, 1ull << 20, RESERVE_FLUSH_ALL)
			? si->total_bytes / 100 * 95
			: si->total_bytes / 100 * 90;
	to_reclaim = used > expected ? used - expected : 0;
	uint64_t cap = si->bytes_may_use + si->bytes_reserved;
	return to_reclaim < cap ? to_reclaim : cap;
}

uint64_t space_tickets_waiting(const space_info *si)
{
	return si->tickets.n + si->priority_tickets.n;
}

/* Sample the series after a change of the ticket queues. */
void space_sample(space_ctl *sc, space_info *si, simtime_t at)
{
	if (si->kind == SPACE_META) {
		sim_series_add(sc->sim, sc->ser_tickets, at,
			       (double)space_tickets_waiting(si));
		sim_series_add(sc->sim, sc->ser_reclaim, at,
			       (double)si->reclaim_size);
		sim_series_add(sc->sim, sc->ser_may_use, at,
			       (double)si->bytes_may_use);
	} else {
		sim_series_add(sc->sim, sc->ser_data_tickets, at,
			       (double)space_tickets_waiting(si));
	}
}

/* bytes_may_use grows (a reservation or a grant); keep its peak. */
static void may_use_add(space_info *si, uint64_t bytes)
{
	si->bytes_may_use += bytes;
	if (si->bytes_may_use > si->peak_may_use)
		si->peak_may_use = si->bytes_may_use;
}

/* bytes_may_use shrinks because a reservation was given back. */
static void may_use_sub(space_info *si, uint64_t bytes)
{
	assert(bytes <= si->bytes_may_use);
	si->bytes_may_use -= bytes;
	si->released_bytes += bytes;
}

/* ----------------------------------------------------------- tickets */

/* Queue a ticket at the tail (list_add_tail). */
static void ticket_list_add(ticket_list *l, space_ticket *tk)
{
	tk->next = NULL;
	tk->prev = l->tail;
	if (l->tail)
		l->tail->next = tk;
	else
		l->head = tk;
	l->tail = tk;
	l->n++;
}

/* Take a ticket off its list and out of reclaim_size (remove_ticket). */
static void ticket_remove(space_info *si, space_ticket *tk)
{
	ticket_list *l = tk->priority ? &si->priority_tickets : &si->tickets;
	assert(tk->queued && l->n > 0);
	if (tk->prev)
		tk->prev->next = tk->next;
	else
		l->head = tk->next;
	if (tk->next)
		tk->next->prev = tk->prev;
	else
		l->tail = tk->prev;
	l->n--;
	tk->prev = tk->next = NULL;
	tk->queued = 0;
	assert(si->reclaim_size >= tk->bytes);
	si->reclaim_size -= tk->bytes;
}

/*
 * After a metadata reservation fitted: if the space_info is now above 98%
 * full while real usage is not (so flushing can help), and there is
 * something to reclaim, wake the worker without a ticket (models
 * need_do_async_reclaim and the preemptive queue_work of 5.10).
 */
static void maybe_preempt(space_ctl *sc, space_info *si, simtime_t now)
{
	if (si->kind != SPACE_META || si->flush || si->preempt || !sc->kick)
		return;
	uint64_t thresh = si->total_bytes / 100 * 98;
	if (si->bytes_used + si->bytes_reserved >= thresh)
		return; /* plain full: flushing would only slow us down */
	if (space_used(si, 1) < thresh)
		return;
	if (!space_reclaim_target(sc, si, sc->ncpus))
		return;
	si->preempt = 1;
	si->preempt_kicks++;
	sc->kick(sc->kick_ctx, si, now);
}

/*
 * The reservation path (__reserve_bytes). A caller that may flush does not
 * jump over queued tickets: it only fits directly when no ticket waits,
 * which keeps the queue FIFO.
 */
int space_reserve(space_ctl *sc, int kind, task *t, uint64_t bytes, int flush,
		  space_ticket *tk)
{
	if (kind < 0 || kind >= SPACE_KINDS || flush < RESERVE_NO_FLUSH ||
	    flush > RESERVE_FLUSH_ALL_STEAL)
		return LAB_EINVAL;
	if (flush != RESERVE_NO_FLUSH && (!t || !tk))
		return LAB_EINVAL;
	space_info *si = &sc->info[kind];
	simtime_t now = t ? t->clock : sim_now(sc->sim);
	if (t)
		task_cpu(sc->sim, t, SPACE_NS_RESERVE);
	si->reserves++;
	if (bytes == 0)
		return 0;

	/* Who waits behind queued tickets (is_normal_flushing, and NO_FLUSH so
	 * that it does not jump everybody); 5.10 lets FLUSH_DATA, like the
	 * priority flushers, wait only behind priority tickets. */
	int normal_flushing = flush == RESERVE_FLUSH_ALL ||
			      flush == RESERVE_FLUSH_ALL_STEAL;
	int pending = normal_flushing || flush == RESERVE_NO_FLUSH
			      ? space_tickets_waiting(si) > 0
			      : si->priority_tickets.n > 0;
	/* which list a ticket goes on: the async worker's, or priority */
	int normal = normal_flushing || flush == RESERVE_FLUSH_DATA;
	if (!pending) {
		uint64_t used = space_used(si, 1);
		if (used + bytes <= si->total_bytes) {
			may_use_add(si, bytes);
			si->reserves_fit++;
			maybe_preempt(sc, si, now);
			return 0;
		}
		if (space_can_overcommit(sc, si, bytes, flush)) {
			may_use_add(si, bytes);
			si->reserves_overcommit++;
			maybe_preempt(sc, si, now);
			return 0;
		}
	}
	if (flush == RESERVE_NO_FLUSH) {
		si->reserves_enospc++;
		return LAB_ENOSPC;
	}

	/* Queue a ticket; the caller sleeps on it. */
	if (t)
		task_cpu(sc->sim, t, SPACE_NS_TICKET);
	now = t->clock;
	*tk = (space_ticket){0};
	tk->bytes = tk->orig_bytes = bytes;
	tk->kind = kind;
	tk->priority = !normal;
	tk->queued = 1;
	tk->seq = ++sc->ticket_seq;
	tk->t_queued = now;
	si->reclaim_size += bytes;
	ticket_list_add(tk->priority ? &si->priority_tickets : &si->tickets, tk);
	si->tickets_queued++;
	if (space_tickets_waiting(si) > si->peak_tickets)
		si->peak_tickets = space_tickets_waiting(si);
	if (si->reclaim_size > si->peak_reclaim_size)
		si->peak_reclaim_size = si->reclaim_size;
	sim_trace(sc->sim, sc->trace_ticket, t->id, kind, (int64_t)bytes,
		  (int64_t)space_tickets_waiting(si));
	space_sample(sc, si, now);
	if (normal && !si->flush) {
		si->flush = 1;
		if (sc->kick)
			sc->kick(sc->kick_ctx, si, now);
	}
	if (tk->priority)
		return SPACE_PRIORITY;
	task_park(t, &tk->wait);
	return SPACE_WAIT;
}

/* After the wake: granted, failed, or (not expected) woken while still
 * queued, which counts as ENOSPC as handle_reserve_ticket does. */
int space_ticket_result(space_ctl *sc, space_ticket *tk, simtime_t now)
{
	space_info *si = &sc->info[tk->kind];
	int ret = tk->error;
	if (tk->bytes || tk->error) {
		if (tk->queued)
			ticket_remove(si, tk);
		if (!ret)
			ret = LAB_ENOSPC;
	}
	uint64_t waited = now > tk->t_queued ? now - tk->t_queued : 0;
	si->ticket_wait_ns += waited;
	if (waited > si->ticket_wait_max_ns)
		si->ticket_wait_max_ns = waited;
	return ret;
}

/* Grant one list from its head while the head ticket fits. */
static int grant_list(space_ctl *sc, space_info *si, ticket_list *l, int flush,
		      simtime_t at)
{
	int n = 0;
	while (l->head) {
		space_ticket *tk = l->head;
		uint64_t used = space_used(si, 1);
		if (!(used + tk->bytes <= si->total_bytes ||
		      space_can_overcommit(sc, si, tk->bytes, flush)))
			break;
		may_use_add(si, tk->bytes);
		ticket_remove(si, tk);
		tk->bytes = 0;
		tk->t_done = at;
		si->tickets_id++;
		si->tickets_granted++;
		n++;
		sim_trace(sc->sim, sc->trace_grant, -1, si->kind,
			  (int64_t)tk->orig_bytes, (int64_t)(at - tk->t_queued));
		waitq_wake_all(sc->sim, &tk->wait, at);
	}
	return n;
}

int space_try_grant(space_ctl *sc, space_info *si, simtime_t at)
{
	if (at < sim_now(sc->sim))
		at = sim_now(sc->sim);
	int n = grant_list(sc, si, &si->priority_tickets, RESERVE_NO_FLUSH, at);
	n += grant_list(sc, si, &si->tickets, RESERVE_FLUSH_ALL, at);
	if (n)
		space_sample(sc, si, at);
	return n;
}

int space_fail_tickets(space_ctl *sc, space_info *si, simtime_t at)
{
	uint64_t id = si->tickets_id;
	uint64_t first = 0;
	if (at < sim_now(sc->sim))
		at = sim_now(sc->sim);
	while (si->tickets.head && id == si->tickets_id) {
		space_ticket *tk = si->tickets.head;
		if (first == 0)
			first = tk->bytes;
		else if (first > tk->bytes)
			return 1; /* a smaller ticket may still fit after a commit */
		ticket_remove(si, tk);
		tk->error = LAB_ENOSPC;
		tk->t_done = at;
		si->tickets_failed++;
		waitq_wake_all(sc->sim, &tk->wait, at);
		space_try_grant(sc, si, at);
	}
	space_sample(sc, si, at);
	return id != si->tickets_id;
}

void space_release(space_ctl *sc, int kind, uint64_t bytes, simtime_t at)
{
	assert(kind >= 0 && kind < SPACE_KINDS);
	if (!bytes)
		return;
	space_info *si = &sc->info[kind];
	may_use_sub(si, bytes);
	space_try_grant(sc, si, at);
}

/* -------------------------------------------- allocation transitions */

void space_bytes_use(space_ctl *sc, int kind, uint64_t bytes, int from_may_use,
		     simtime_t at)
{
	space_info *si = &sc->info[kind];
	if (from_may_use) {
		/* consumed, not given back: not counted in released_bytes */
		assert(bytes <= si->bytes_may_use);
		si->bytes_may_use -= bytes;
	}
	si->bytes_used += bytes;
	(void)at;
}

void space_bytes_pin(space_ctl *sc, int kind, uint64_t bytes)
{
	space_info *si = &sc->info[kind];
	assert(si->bytes_used >= bytes);
	si->bytes_used -= bytes;
	si->bytes_pinned += bytes;
}

void space_bytes_unpin(space_ctl *sc, int kind, uint64_t bytes, simtime_t at)
{
	space_info *si = &sc->info[kind];
	assert(si->bytes_pinned >= bytes);
	si->bytes_pinned -= bytes;
	space_try_grant(sc, si, at);
}

void space_add_chunk(space_ctl *sc, int kind, uint64_t bytes, simtime_t at)
{
	space_info *si = &sc->info[kind];
	si->total_bytes += bytes;
	if (!sc->unallocated_fn) {
		uint64_t raw = kind == SPACE_META && sc->meta_factor > 1
				       ? bytes * (uint64_t)sc->meta_factor : bytes;
		sc->unallocated = sc->unallocated > raw ? sc->unallocated - raw : 0;
	}
	space_try_grant(sc, si, at);
}

void space_may_use_consume(space_ctl *sc, int kind, uint64_t bytes)
{
	assert(kind >= 0 && kind < SPACE_KINDS);
	space_info *si = &sc->info[kind];
	assert(bytes <= si->bytes_may_use);
	si->bytes_may_use -= bytes;
}

/* ------------------------------------------------ wiring to alloc.h */

uint64_t space_alloc_unallocated(void *ctx)
{
	const alloc_ctl *a = ctx;
	return a->dev_bytes > a->dev_alloc ? a->dev_bytes - a->dev_alloc : 0;
}

void space_sync_alloc(space_ctl *sc, const alloc_ctl *a, simtime_t at)
{
	static const int kinds[SPACE_KINDS] = {ALLOC_DATA, ALLOC_METADATA};
	if (!sc->unallocated_fn)
		sc->unallocated = space_alloc_unallocated((void *)a);
	for (int k = 0; k < SPACE_KINDS; k++) {
		space_info *si = &sc->info[k];
		si->total_bytes = a->total[kinds[k]];
		si->bytes_used = a->used[kinds[k]];
		si->bytes_reserved = a->reserved[kinds[k]];
		si->bytes_pinned = a->pinned_bytes[kinds[k]];
		space_try_grant(sc, si, at);
	}
}

/* ------------------------------------------------------ block reserves */

void space_rsv_init(block_rsv *rsv, int kind)
{
	*rsv = (block_rsv){0};
	rsv->kind = kind;
}

void space_rsv_add(block_rsv *rsv, uint64_t bytes, int update_size)
{
	rsv->reserved += bytes;
	if (update_size)
		rsv->size += bytes;
	else if (rsv->reserved >= rsv->size)
		rsv->full = 1;
}

uint64_t space_rsv_release(space_ctl *sc, block_rsv *rsv, uint64_t bytes,
			   simtime_t at)
{
	if (bytes == UINT64_MAX || bytes > rsv->size)
		bytes = rsv->size;
	rsv->size -= bytes;
	uint64_t give = 0;
	if (rsv->reserved >= rsv->size) {
		give = rsv->reserved - rsv->size;
		rsv->reserved = rsv->size;
		rsv->full = 1;
	}
	if (give)
		space_release(sc, rsv->kind, give, at);
	return give;
}

int space_rsv_use(space_ctl *sc, block_rsv *rsv, uint64_t bytes)
{
	if (rsv->reserved < bytes)
		return LAB_ENOSPC;
	rsv->reserved -= bytes;
	if (rsv->reserved < rsv->size)
		rsv->full = 0;
	space_may_use_consume(sc, rsv->kind, bytes);
	return 0;
}

int space_rsv_reserve(space_ctl *sc, block_rsv *rsv, task *t, uint64_t bytes,
		      int flush, space_ticket *tk)
{
	int ret = space_reserve(sc, rsv->kind, t, bytes, flush, tk);
	if (ret == 0)
		space_rsv_add(rsv, bytes, 1);
	return ret;
}

int space_rsv_reserve_finish(space_ctl *sc, block_rsv *rsv, space_ticket *tk,
			     simtime_t now)
{
	int ret = space_ticket_result(sc, tk, now);
	if (ret == 0)
		space_rsv_add(rsv, tk->orig_bytes, 1);
	return ret;
}

int space_trans_reserve(space_ctl *sc, block_rsv *rsv, task *t, uint64_t items,
			int flush, space_ticket *tk)
{
	return space_rsv_reserve(sc, rsv, t, space_insert_metadata_size(sc, items),
				 flush, tk);
}

/* ------------------------------------------------ delalloc reservation */

void space_inode_rsv_init(inode_rsv *ir)
{
	*ir = (inode_rsv){0};
	space_rsv_init(&ir->rsv, SPACE_META);
}

uint64_t space_delalloc_calc(const space_ctl *sc, uint64_t num_bytes)
{
	uint64_t extents = space_count_max_extents(num_bytes);
	uint64_t leaves = space_csum_leaves(sc, num_bytes);
	return space_insert_metadata_size(sc, extents + leaves) +
	       space_metadata_size(sc, 1);
}

/* Insert size per outstanding extent plus one inode update while any
 * extent is outstanding, plus the csum leaves still to insert. */
uint64_t space_inode_rsv_size(const space_ctl *sc, const inode_rsv *ir)
{
	uint64_t size = 0;
	if (ir->outstanding_extents)
		size = space_insert_metadata_size(sc, ir->outstanding_extents) +
		       space_metadata_size(sc, 1);
	return size + space_insert_metadata_size(sc,
						 space_csum_leaves(sc, ir->csum_bytes));
}

/* v rounded up to a multiple of a. */
static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* The second half of btrfs_delalloc_reserve_metadata, once the bytes are
 * in bytes_may_use: count what the write adds and hold the bytes. */
static void delalloc_reserve_commit(space_ctl *sc, inode_rsv *ir,
				    uint64_t num_bytes, uint64_t meta)
{
	ir->outstanding_extents += (uint32_t)space_count_max_extents(num_bytes);
	ir->csum_bytes += num_bytes;
	ir->rsv.size = space_inode_rsv_size(sc, ir);
	space_rsv_add(&ir->rsv, meta, 0);
}

int space_delalloc_reserve(space_ctl *sc, inode_rsv *ir, task *t,
			   uint64_t num_bytes, int flush, space_ticket *tk)
{
	num_bytes = align_up(num_bytes, sc->sectorsize);
	uint64_t meta = space_delalloc_calc(sc, num_bytes);
	int ret = space_reserve(sc, SPACE_META, t, meta, flush, tk);
	if (ret == 0)
		delalloc_reserve_commit(sc, ir, num_bytes, meta);
	return ret;
}

int space_delalloc_reserve_finish(space_ctl *sc, inode_rsv *ir,
				  uint64_t num_bytes, space_ticket *tk,
				  simtime_t now)
{
	int ret = space_ticket_result(sc, tk, now);
	if (ret == 0)
		delalloc_reserve_commit(sc, ir, align_up(num_bytes, sc->sectorsize),
					tk->orig_bytes);
	return ret;
}

/* Resize the inode's rsv for its counts and give back the excess
 * (btrfs_inode_rsv_release). */
static void inode_rsv_settle(space_ctl *sc, inode_rsv *ir, simtime_t at)
{
	ir->rsv.size = space_inode_rsv_size(sc, ir);
	space_rsv_release(sc, &ir->rsv, 0, at);
}

void space_delalloc_release_extents(space_ctl *sc, inode_rsv *ir,
				    uint64_t num_bytes, simtime_t at)
{
	uint64_t n = space_count_max_extents(align_up(num_bytes, sc->sectorsize));
	assert(ir->outstanding_extents >= n);
	ir->outstanding_extents -= (uint32_t)n;
	inode_rsv_settle(sc, ir, at);
}

void space_delalloc_mod_extents(space_ctl *sc, inode_rsv *ir, int64_t delta,
				simtime_t at)
{
	(void)sc;
	(void)at;
	assert(delta >= 0 || (uint64_t)(-delta) <= ir->outstanding_extents);
	ir->outstanding_extents = (uint32_t)((int64_t)ir->outstanding_extents + delta);
}

void space_delalloc_release_metadata(space_ctl *sc, inode_rsv *ir,
				     uint64_t num_bytes, simtime_t at)
{
	num_bytes = align_up(num_bytes, sc->sectorsize);
	assert(ir->csum_bytes >= num_bytes);
	ir->csum_bytes -= num_bytes;
	inode_rsv_settle(sc, ir, at);
}

/* ------------------------------------------------------------ invariants */

/* Walk one ticket list: links, flags, count; add its bytes to *sum. */
static int list_check(struct fs_info *fs, const space_info *si,
		      const ticket_list *l, int priority, uint64_t *sum)
{
	int bad = 0;
	uint64_t n = 0;
	const space_ticket *prev = NULL;
	for (const space_ticket *tk = l->head; tk; tk = tk->next) {
		if (++n > l->n)
			break; /* a cycle or a wrong count */
		if (tk->prev != prev || !tk->queued || tk->priority != priority ||
		    tk->kind != si->kind || tk->bytes == 0) {
			bad++;
			if (fs)
				check_report(fs, "space %s: ticket %llu badly queued",
					     kind_names[si->kind],
					     (unsigned long long)tk->seq);
		}
		*sum += tk->bytes;
		prev = tk;
	}
	if (n != l->n || l->tail != prev) {
		bad++;
		if (fs)
			check_report(fs, "space %s: ticket list count %llu, walked %llu",
				     kind_names[si->kind], (unsigned long long)l->n,
				     (unsigned long long)n);
	}
	return bad;
}

int space_check(struct fs_info *fs, void *ctx)
{
	const space_ctl *sc = ctx;
	int bad = 0;
	for (int k = 0; k < SPACE_KINDS; k++) {
		const space_info *si = &sc->info[k];
		uint64_t sum = 0;
		bad += list_check(fs, si, &si->tickets, 0, &sum);
		bad += list_check(fs, si, &si->priority_tickets, 1, &sum);
		if (sum != si->reclaim_size) {
			bad++;
			if (fs)
				check_report(fs, "space %s: reclaim_size %llu != tickets %llu",
					     kind_names[k],
					     (unsigned long long)si->reclaim_size,
					     (unsigned long long)sum);
		}
		if (si->tickets.n && !si->flush && sc->kick) {
			bad++;
			if (fs)
				check_report(fs, "space %s: tickets wait, no reclaim",
					     kind_names[k]);
		}
	}
	return bad;
}

/* ---------------------------------------------------------------- JSON */

void space_json(const space_ctl *sc, strbuf *out)
{
	js_obj(out);
	js_kint(out, "unallocated", (int64_t)space_unallocated(sc));
	js_kint(out, "nodesize", sc->nodesize);
	js_kint(out, "meta_factor", sc->meta_factor);
	for (int k = 0; k < SPACE_KINDS; k++) {
		const space_info *si = &sc->info[k];
		js_key(out, kind_names[k]);
		js_obj(out);
		js_kint(out, "total_bytes", (int64_t)si->total_bytes);
		js_kint(out, "bytes_used", (int64_t)si->bytes_used);
		js_kint(out, "bytes_reserved", (int64_t)si->bytes_reserved);
		js_kint(out, "bytes_pinned", (int64_t)si->bytes_pinned);
		js_kint(out, "bytes_readonly", (int64_t)si->bytes_readonly);
		js_kint(out, "bytes_may_use", (int64_t)si->bytes_may_use);
		js_kint(out, "reclaim_size", (int64_t)si->reclaim_size);
		js_kint(out, "tickets_id", (int64_t)si->tickets_id);
		js_kint(out, "tickets_waiting", (int64_t)si->tickets.n);
		js_kint(out, "priority_tickets_waiting", (int64_t)si->priority_tickets.n);
		js_kint(out, "reserves", (int64_t)si->reserves);
		js_kint(out, "reserves_fit", (int64_t)si->reserves_fit);
		js_kint(out, "reserves_overcommit", (int64_t)si->reserves_overcommit);
		js_kint(out, "reserves_enospc", (int64_t)si->reserves_enospc);
		js_kint(out, "tickets_queued", (int64_t)si->tickets_queued);
		js_kint(out, "tickets_granted", (int64_t)si->tickets_granted);
		js_kint(out, "tickets_failed", (int64_t)si->tickets_failed);
		js_kint(out, "ticket_wait_ns", (int64_t)si->ticket_wait_ns);
		js_kint(out, "ticket_wait_max_ns", (int64_t)si->ticket_wait_max_ns);
		js_kint(out, "peak_tickets", (int64_t)si->peak_tickets);
		js_kint(out, "peak_reclaim_size", (int64_t)si->peak_reclaim_size);
		js_kint(out, "peak_may_use", (int64_t)si->peak_may_use);
		js_kint(out, "released_bytes", (int64_t)si->released_bytes);
		js_kint(out, "preempt_kicks", (int64_t)si->preempt_kicks);
		js_obj_end(out);
	}
	js_obj_end(out);
}
