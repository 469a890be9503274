/*
 * reclaim.c - the async metadata and data reclaim workers, flush_space,
 * and priority flushing (btrfs 5.10 space-info.c). See reclaim.h.
 */
#include "reclaim.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "lab.h"
#include "labmem.h"

#define RECLAIM_MORE DELALLOC_MORE

static const char *const state_names[FLUSH_NSTATES] = {
	"NONE",
	"FLUSH_DELAYED_ITEMS_NR",
	"FLUSH_DELAYED_ITEMS",
	"FLUSH_DELAYED_REFS_NR",
	"FLUSH_DELAYED_REFS",
	"FLUSH_DELALLOC",
	"FLUSH_DELALLOC_WAIT",
	"ALLOC_CHUNK",
	"ALLOC_CHUNK_FORCE",
	"RUN_DELAYED_IPUTS",
	"COMMIT_TRANS",
};

/* The data worker's loop (data_flush_states, 5.10). */
static const int data_states[] = {
	FLUSH_DELALLOC_WAIT, RUN_DELAYED_IPUTS, FLUSH_DELAYED_REFS, COMMIT_TRANS};
#define NDATA_STATES 4

/* What a priority ticket may do for itself (priority_flush_states and
 * evict_flush_states). */
static const int prio_states[] = {
	FLUSH_DELAYED_ITEMS_NR, FLUSH_DELAYED_ITEMS, ALLOC_CHUNK};
static const int evict_states[] = {
	FLUSH_DELAYED_ITEMS_NR, FLUSH_DELAYED_ITEMS, FLUSH_DELAYED_REFS_NR,
	FLUSH_DELAYED_REFS, FLUSH_DELALLOC, FLUSH_DELALLOC_WAIT, ALLOC_CHUNK,
	COMMIT_TRANS};

const char *reclaim_state_name(int state)
{
	return state >= 0 && state < FLUSH_NSTATES ? state_names[state] : "?";
}

/* --------------------------------------------------------- records */

/* Keep a flush_space record in the ring (the last RECLAIM_RECORDS). */
static void record_push(reclaim_ctl *rc, const reclaim_record *r)
{
	if (!rc->rec)
		return;
	rc->rec[rc->nrec % RECLAIM_RECORDS] = *r;
	rc->nrec++;
}

uint64_t reclaim_records(const reclaim_ctl *rc)
{
	return rc->nrec < RECLAIM_RECORDS ? rc->nrec : RECLAIM_RECORDS;
}

const reclaim_record *reclaim_record_at(const reclaim_ctl *rc, uint64_t i)
{
	uint64_t n = reclaim_records(rc);
	if (!rc->rec || i >= n)
		return NULL;
	uint64_t first = rc->nrec - n;
	return &rc->rec[(first + i) % RECLAIM_RECORDS];
}

/* ------------------------------------------------------ flush_space */

/*
 * The kernel's should_alloc_chunk + btrfs_chunk_alloc on the space_ctl's
 * own counters, for runs without an allocator op: without force a chunk
 * is added only once real usage (not reservations) passes 80% of the
 * chunks; a kind whose chunk no longer fits is marked full.
 */
static int default_alloc_chunk(reclaim_ctl *rc, space_info *si, int force,
			       task *t)
{
	space_ctl *sc = rc->sc;
	if (!force && space_used(si, 0) + (2ull << 20) < si->total_bytes / 10 * 8)
		return 0;
	if (sc->unallocated_fn)
		return 0; /* a real allocator owns the device: wire its op */
	uint64_t factor = si->kind == SPACE_META && sc->meta_factor > 1
				  ? (uint64_t)sc->meta_factor : 1;
	uint64_t chunk = si->kind == SPACE_META ? rc->meta_chunk_bytes
						: rc->data_chunk_bytes;
	uint64_t fits = sc->unallocated / factor;
	if (fits < chunk)
		chunk = fits / (1ull << 20) * (1ull << 20);
	if (chunk == 0) {
		si->full = 1;
		return 0;
	}
	task_cpu(rc->sim, t, RECLAIM_NS_CHUNK_ALLOC);
	space_add_chunk(sc, si->kind, chunk, t->clock);
	return 0;
}

/* Close a finished flush_space call: its record and totals. */
static void flush_finish(reclaim_ctl *rc, flush_call *fc, space_info *si,
			 task *t)
{
	reclaim_record *r = &fc->rec;
	r->duration = t->clock - r->t;
	r->tickets = (uint32_t)space_tickets_waiting(si);
	if (fc->is_shrink) {
		r->items = fc->sr.items;
		r->pages_wanted = fc->sr.pages_wanted;
		r->pages_flushed = fc->sr.pages_flushed;
		r->inodes = fc->sr.inodes_touched;
		r->rounds = (uint16_t)fc->sr.flushes;
	}
	record_push(rc, r);
	if (rc->on_record)
		rc->on_record(rc->on_record_ctx, r);
	int st = fc->state;
	rc->per_state[st].calls++;
	rc->per_state[st].ns += r->duration;
	rc->per_state[st].pages_wanted += r->pages_wanted;
	rc->per_state[st].pages_flushed += r->pages_flushed;
	rc->per_state[st].inodes += r->inodes;
	rc->per_state[st].grants += si->tickets_id - fc->tickets_id0;
	sim_series_add(rc->sim, rc->ser_state, t->clock, st);
	space_sample(rc->sc, si, t->clock);
	fc->active = 0;
}

/* The first ticket's bytes (priority first), 0 if none. */
static uint64_t first_ticket_bytes(const space_info *si)
{
	if (si->priority_tickets.head)
		return si->priority_tickets.head->bytes;
	return si->tickets.head ? si->tickets.head->bytes : 0;
}

/*
 * Whether a commit can satisfy the first ticket (models
 * may_commit_transaction, 5.10): the reserves a commit refills plus the
 * pinned bytes it unpins must cover it.
 */
static int may_commit(reclaim_ctl *rc, space_info *si)
{
	uint64_t need = first_ticket_bytes(si);
	if (!need)
		return 0;
	uint64_t frees = rc->ops.commit_frees ? rc->ops.commit_frees(rc->ops.ctx, si->kind)
					      : 0;
	return frees + si->bytes_pinned >= need;
}

/*
 * Call the operation of fc's state (models the switch of flush_space,
 * 5.10). Returns 0 when the call is complete, RECLAIM_PARKED /
 * RECLAIM_RETRY (fc->parked_op records which) or RECLAIM_MORE.
 */
static int flush_op(reclaim_ctl *rc, flush_call *fc, task *t)
{
	const reclaim_flush_ops *ops = &rc->ops;
	space_info *si = fc->si;
	uint64_t to_reclaim = fc->to_reclaim;
	int r = 0;

	switch (fc->state) {
	case FLUSH_DELAYED_ITEMS_NR:
	case FLUSH_DELAYED_ITEMS: {
		int64_t nr = fc->state == FLUSH_DELAYED_ITEMS_NR
				     ? (int64_t)space_reclaim_items(rc->sc, to_reclaim) * 2
				     : -1;
		fc->rec.items = nr < 0 ? 0 : (uint64_t)nr;
		if (ops->flush_delayed_items)
			r = ops->flush_delayed_items(ops->ctx, t, nr);
		break;
	}
	case FLUSH_DELAYED_REFS_NR:
	case FLUSH_DELAYED_REFS: {
		uint64_t nr = fc->state == FLUSH_DELAYED_REFS_NR
				      ? space_reclaim_items(rc->sc, to_reclaim) : 0;
		fc->rec.items = nr;
		if (ops->run_delayed_refs)
			r = ops->run_delayed_refs(ops->ctx, t, nr);
		break;
	}
	case FLUSH_DELALLOC:
	case FLUSH_DELALLOC_WAIT:
		if (rc->dc) {
			fc->is_shrink = 1;
			delalloc_shrink_begin(rc->dc, &fc->sr, si, to_reclaim,
					      fc->state == FLUSH_DELALLOC_WAIT);
			r = delalloc_shrink_step(rc->dc, &fc->sr, t);
			if (r)
				return r;
		}
		break;
	case ALLOC_CHUNK:
	case ALLOC_CHUNK_FORCE:
		if (ops->alloc_chunk)
			r = ops->alloc_chunk(ops->ctx, t, si->kind,
					     fc->state == ALLOC_CHUNK_FORCE);
		else
			r = default_alloc_chunk(rc, si, fc->state == ALLOC_CHUNK_FORCE, t);
		break;
	case RUN_DELAYED_IPUTS:
		if (ops->run_delayed_iputs)
			r = ops->run_delayed_iputs(ops->ctx, t);
		break;
	case COMMIT_TRANS:
		if (!may_commit(rc, si))
			rc->commits_skipped++;
		else if (ops->commit)
			r = ops->commit(ops->ctx, t, si->kind);
		break;
	default:
		assert(0 && "bad flush state");
	}
	if (r == RECLAIM_PARKED || r == RECLAIM_RETRY) {
		fc->parked_op = r;
		return RECLAIM_PARKED;
	}
	if (r < 0)
		rc->op_errors++;
	return 0;
}

/* Advance a flush_space call in progress after a park or a yield: 0
 * done, RECLAIM_PARKED, RECLAIM_MORE. */
static int flush_continue(reclaim_ctl *rc, flush_call *fc, space_info *si,
			  task *t)
{
	assert(fc->active);
	int r = 0;
	if (fc->parked_op == RECLAIM_RETRY) {
		fc->parked_op = 0;
		r = flush_op(rc, fc, t);
	} else if (fc->is_shrink) {
		r = delalloc_shrink_step(rc->dc, &fc->sr, t);
	}
	if (r)
		return r;
	fc->parked_op = 0;
	flush_finish(rc, fc, si, t);
	return 0;
}

/*
 * Begin flush_space(si, to_reclaim, state) on task t. Returns 0 when the
 * call is complete, RECLAIM_PARKED or RECLAIM_MORE (continue with
 * flush_continue once resumed).
 */
static int flush_begin(reclaim_ctl *rc, flush_call *fc, space_info *si,
		       uint64_t to_reclaim, int state, task *t)
{
	memset(fc, 0, sizeof *fc);
	fc->state = state;
	fc->active = 1;
	fc->si = si;
	fc->to_reclaim = to_reclaim;
	fc->tickets_id0 = si->tickets_id;
	fc->rec.t = t->clock;
	fc->rec.kind = (uint8_t)si->kind;
	fc->rec.state = (uint8_t)state;
	fc->rec.to_reclaim = to_reclaim;
	sim_trace(rc->sim, rc->trace_state, t->id, si->kind, state,
		  (int64_t)(to_reclaim > INT64_MAX ? INT64_MAX : to_reclaim));
	task_cpu(rc->sim, t, RECLAIM_NS_FLUSH_STATE);
	int r = flush_op(rc, fc, t);
	if (r)
		return r;
	flush_finish(rc, fc, si, t);
	return 0;
}

/* ------------------------------------------------------ the workers */

/* Park the worker until the next kick. */
static int worker_sleep(reclaim_worker *w, task *t)
{
	w->running = 0;
	task_park(t, &w->idle);
	return TASK_BLOCKED;
}

/* End the pass: nothing left to do for the tickets (flush = 0). */
static int worker_stop(reclaim_worker *w, task *t)
{
	w->si->flush = 0;
	return worker_sleep(w, t);
}

/*
 * After one metadata flush_space call: the loop body of
 * btrfs_async_reclaim_metadata_space (5.10).
 */
static int meta_after_state(reclaim_worker *w, task *t)
{
	reclaim_ctl *rc = w->rc;
	space_info *si = w->si;
	if (si->tickets.n == 0)
		return worker_stop(w, t);
	w->to_reclaim = space_reclaim_target(rc->sc, si, rc->ncpus);
	if (w->last_tickets_id == si->tickets_id) {
		w->state++;
	} else {
		/* progress: start over from the cheapest state */
		w->last_tickets_id = si->tickets_id;
		w->state = FLUSH_DELAYED_ITEMS_NR;
		w->restarts++;
		if (w->commit_cycles)
			w->commit_cycles--;
	}
	/* Rather use pinned space than force an underused chunk: only force
	 * one after a full pass including a commit. */
	if (w->state == ALLOC_CHUNK_FORCE && !w->commit_cycles)
		w->state++;
	if (w->state > COMMIT_TRANS) {
		w->commit_cycles++;
		if (w->commit_cycles > 2) {
			if (space_fail_tickets(rc->sc, si, t->clock)) {
				w->state = FLUSH_DELAYED_ITEMS_NR;
				w->commit_cycles--;
			} else {
				return worker_stop(w, t);
			}
		} else {
			w->state = FLUSH_DELAYED_ITEMS_NR;
		}
	}
	return TASK_RUN;
}

/* After one data flush_space call (btrfs_async_reclaim_data_space). */
static int data_after_state(reclaim_worker *w, task *t)
{
	space_info *si = w->si;
	if (si->tickets.n == 0)
		return worker_stop(w, t);
	if (w->forcing) {
		w->last_tickets_id = si->tickets_id;
		if (si->full) {
			w->forcing = 0;
			w->state = 0;
		}
		return TASK_RUN;
	}
	if (w->last_tickets_id == si->tickets_id) {
		w->state++;
	} else {
		w->last_tickets_id = si->tickets_id;
		w->state = 0;
		w->restarts++;
	}
	if (w->state >= NDATA_STATES) {
		if (si->full) {
			if (space_fail_tickets(w->rc->sc, si, t->clock))
				w->state = 0;
			else
				return worker_stop(w, t);
		} else {
			w->state = 0;
		}
	}
	return TASK_RUN;
}

/* One step of a reclaim worker: start a pass when kicked, run one flush
 * state (or continue the one in progress), then decide the next. */
static int worker_step(sim *s, task *t)
{
	(void)s;
	reclaim_worker *w = t->ctx;
	reclaim_ctl *rc = w->rc;
	space_info *si = w->si;
	int meta = si->kind == SPACE_META;
	int r;

	if (w->fc.active) {
		r = flush_continue(rc, &w->fc, si, t);
	} else {
		if (!w->running) {
			if (!si->flush && !si->preempt)
				return worker_sleep(w, t);
			si->preempt = 0;
			if (meta) {
				w->to_reclaim = space_reclaim_target(rc->sc, si, rc->ncpus);
				if (!w->to_reclaim)
					return worker_stop(w, t);
				w->state = FLUSH_DELAYED_ITEMS_NR;
			} else {
				if (si->tickets.n == 0)
					return worker_stop(w, t);
				w->to_reclaim = UINT64_MAX;
				w->forcing = !si->full;
				w->state = 0;
			}
			w->running = 1;
			w->passes++;
			w->commit_cycles = 0;
			w->last_tickets_id = si->tickets_id;
		}
		int state = meta ? w->state
				 : (w->forcing ? ALLOC_CHUNK_FORCE : data_states[w->state]);
		r = flush_begin(rc, &w->fc, si, w->to_reclaim, state, t);
	}
	if (r == RECLAIM_PARKED)
		return TASK_BLOCKED;
	if (r == RECLAIM_MORE)
		return TASK_RUN;
	return meta ? meta_after_state(w, t) : data_after_state(w, t);
}

/* space.h's kick: wake the kind's worker if it sleeps (queue_work). */
static void reclaim_kick(void *ctx, space_info *si, simtime_t at)
{
	reclaim_ctl *rc = ctx;
	reclaim_worker *w = si->kind == SPACE_META ? &rc->meta : &rc->data;
	if (!w->running)
		waitq_wake_one(rc->sim, &w->idle, at + RECLAIM_NS_WAKEUP);
}

/* Spawn one worker task for the space_info of kind. */
static int worker_init(reclaim_ctl *rc, reclaim_worker *w, int kind,
		       const char *name)
{
	w->rc = rc;
	w->si = &rc->sc->info[kind];
	w->task = task_spawn(rc->sim, name, worker_step, w, sim_now(rc->sim));
	return w->task ? 0 : LAB_ENOMEM;
}

int reclaim_init(reclaim_ctl *rc, sim *s, space_ctl *sc, delalloc_ctl *dc,
		 const reclaim_flush_ops *ops, int ncpus)
{
	memset(rc, 0, sizeof *rc);
	if (!s || !sc || ncpus < 0)
		return LAB_EINVAL;
	rc->sim = s;
	rc->sc = sc;
	rc->dc = dc;
	if (ops)
		rc->ops = *ops;
	rc->ncpus = ncpus > 0 ? ncpus : 1;
	sc->ncpus = rc->ncpus;
	rc->meta_chunk_bytes = 256ull << 20;
	rc->data_chunk_bytes = 1024ull << 20;
	rc->rec = lab_calloc(RECLAIM_RECORDS, sizeof *rc->rec);
	if (!rc->rec)
		return LAB_ENOMEM;
	rc->ser_state = sim_series_id(s, "reclaim_state");
	rc->trace_state = sim_trace_kind(s, "reclaim_flush");
	int ret = worker_init(rc, &rc->meta, SPACE_META, "btrfs-async-reclaim");
	if (!ret)
		ret = worker_init(rc, &rc->data, SPACE_DATA, "btrfs-async-data-reclaim");
	if (ret)
		return ret;
	sc->kick = reclaim_kick;
	sc->kick_ctx = rc;
	return 0;
}

void reclaim_destroy(reclaim_ctl *rc)
{
	if (rc->sc && rc->sc->kick_ctx == rc) {
		rc->sc->kick = NULL;
		rc->sc->kick_ctx = NULL;
	}
	free(rc->rec);
	rc->rec = NULL;
}

/* ------------------------------------------------- priority flushing */

void reclaim_priority_begin(reclaim_ctl *rc, reclaim_prio *p, space_ticket *tk,
			    int flush)
{
	memset(p, 0, sizeof *p);
	p->si = &rc->sc->info[tk->kind];
	p->tk = tk;
	if (flush == RESERVE_FLUSH_EVICT) {
		p->states = evict_states;
		p->nstates = (int)(sizeof evict_states / sizeof evict_states[0]);
	} else {
		p->states = prio_states;
		p->nstates = (int)(sizeof prio_states / sizeof prio_states[0]);
	}
}

/* Models priority_reclaim_metadata_space: one state per step, stopping
 * once the ticket is granted. */
int reclaim_priority_step(reclaim_ctl *rc, reclaim_prio *p, task *t)
{
	int r;
	if (!p->started) {
		p->started = 1;
		p->to_reclaim = space_reclaim_target(rc->sc, p->si, rc->ncpus);
		if (!p->to_reclaim)
			return 0;
	}
	if (p->fc.active) {
		r = flush_continue(rc, &p->fc, p->si, t);
	} else {
		if (p->idx >= p->nstates || p->tk->bytes == 0)
			return 0;
		r = flush_begin(rc, &p->fc, p->si, p->to_reclaim,
				p->states[p->idx++], t);
	}
	if (r)
		return r;
	if (p->tk->bytes == 0 || p->idx >= p->nstates)
		return 0;
	return RECLAIM_MORE;
}

/* ------------------------------------------------------------- JSON */

void reclaim_details_json(const reclaim_ctl *rc, strbuf *out)
{
	js_obj(out);
	js_key(out, "workers");
	js_obj(out);
	const reclaim_worker *ws[2] = {&rc->meta, &rc->data};
	for (int i = 0; i < 2; i++) {
		js_key(out, i == 0 ? "metadata" : "data");
		js_obj(out);
		js_kint(out, "passes", (int64_t)ws[i]->passes);
		js_kint(out, "restarts", (int64_t)ws[i]->restarts);
		js_kint(out, "cpu_ns", ws[i]->task ? (int64_t)ws[i]->task->cpu_ns : 0);
		js_kint(out, "wait_ns", ws[i]->task ? (int64_t)ws[i]->task->wait_ns : 0);
		js_obj_end(out);
	}
	js_obj_end(out);
	js_kint(out, "op_errors", (int64_t)rc->op_errors);
	js_kint(out, "commits_skipped", (int64_t)rc->commits_skipped);
	js_key(out, "states");
	js_arr(out);
	for (int s = 1; s < FLUSH_NSTATES; s++) {
		js_obj(out);
		js_kstr(out, "state", state_names[s]);
		js_kint(out, "calls", (int64_t)rc->per_state[s].calls);
		js_kint(out, "ns", (int64_t)rc->per_state[s].ns);
		js_kint(out, "pages_wanted", (int64_t)rc->per_state[s].pages_wanted);
		js_kint(out, "pages_flushed", (int64_t)rc->per_state[s].pages_flushed);
		js_kint(out, "inodes", (int64_t)rc->per_state[s].inodes);
		js_kint(out, "grants", (int64_t)rc->per_state[s].grants);
		js_obj_end(out);
	}
	js_arr_end(out);
	/* the kept records, column by column (compact for long runs) */
	uint64_t n = reclaim_records(rc);
	js_kint(out, "records_total", (int64_t)rc->nrec);
	js_key(out, "records");
	js_obj(out);
	static const char *const cols[] = {
		"t", "state", "kind", "to_reclaim", "items", "pages_wanted",
		"pages_flushed", "inodes", "tickets", "duration", "rounds"};
	for (int c = 0; c < 11; c++) {
		js_key(out, cols[c]);
		js_arr(out);
		for (uint64_t i = 0; i < n; i++) {
			const reclaim_record *r = reclaim_record_at(rc, i);
			uint64_t v = 0;
			switch (c) {
			case 0: v = r->t; break;
			case 1: v = r->state; break;
			case 2: v = r->kind; break;
			case 3: v = r->to_reclaim; break;
			case 4: v = r->items; break;
			case 5: v = r->pages_wanted; break;
			case 6: v = r->pages_flushed; break;
			case 7: v = r->inodes; break;
			case 8: v = r->tickets; break;
			case 9: v = r->duration; break;
			case 10: v = r->rounds; break;
			}
			js_num(out, v == UINT64_MAX ? -1.0 : (double)v);
		}
		js_arr_end(out);
	}
	js_obj_end(out);
	js_obj_end(out);
}

void space_details_json(const space_ctl *sc, const reclaim_ctl *rc,
			const delalloc_ctl *dc, strbuf *out)
{
	js_obj(out);
	js_key(out, "space");
	space_json(sc, out);
	if (dc) {
		js_key(out, "delalloc");
		delalloc_json(dc, out);
	}
	if (rc) {
		js_key(out, "reclaim");
		reclaim_details_json(rc, out);
	}
	js_obj_end(out);
}
