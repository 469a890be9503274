/*
 * test_reclaim.c - the async reclaim state machine against fake flush
 * operations: the order of the states, the restart when a ticket is
 * granted, ALLOC_CHUNK_FORCE only after a commit cycle, failing tickets
 * after three fruitless cycles, operations that park, the data worker and
 * priority flushing.
 */
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "lab.h"
#include "reclaim.h"
#include "sim.h"
#include "space.h"
#include "t.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * 1024 * 1024)

typedef struct fake {
	space_ctl *sc;
	sim *s;
	int rel_calls[FLUSH_NSTATES]; /* calls of each state that give back */
	uint64_t release_bytes;
	int park_commit;       /* COMMIT_TRANS parks for 1 ms (1: and is done
				* when woken; 2: once, then runs again) */
	int retried;
	int calls[FLUSH_NSTATES];
	task *parked;
} fake;

static void fake_op(fake *f, int state, task *t)
{
	f->calls[state]++;
	task_cpu(f->s, t, 10 * NS_PER_US);
	if (f->rel_calls[state] > 0) {
		f->rel_calls[state]--;
		if (state == COMMIT_TRANS) /* a commit unpins what was freed */
			space_bytes_unpin(f->sc, SPACE_META,
					  f->sc->info[SPACE_META].bytes_pinned, t->clock);
		else
			space_release(f->sc, SPACE_META, f->release_bytes, t->clock);
	}
}

static int op_items(void *ctx, task *t, int64_t nr)
{
	fake_op(ctx, nr >= 0 ? FLUSH_DELAYED_ITEMS_NR : FLUSH_DELAYED_ITEMS, t);
	return 0;
}

static int op_refs(void *ctx, task *t, uint64_t nr)
{
	fake_op(ctx, nr ? FLUSH_DELAYED_REFS_NR : FLUSH_DELAYED_REFS, t);
	return 0;
}

static int op_iputs(void *ctx, task *t)
{
	fake_op(ctx, RUN_DELAYED_IPUTS, t);
	return 0;
}

static void commit_done(sim *s, void *arg)
{
	fake *f = arg;
	fake_op(f, COMMIT_TRANS, f->parked);
	task_wake(s, f->parked, sim_now(s));
	f->parked = NULL;
}

static void just_wake(sim *s, void *arg)
{
	fake *f = arg;
	task_wake(s, f->parked, sim_now(s));
	f->parked = NULL;
}

static int op_commit(void *ctx, task *t, int kind)
{
	fake *f = ctx;
	(void)kind;
	if (f->park_commit == 2 && !f->retried) {
		/* another commit is running: wait for it, then try again */
		f->retried = 1;
		f->parked = t;
		sim_at(f->s, t->clock + NS_PER_MS, just_wake, f);
		return RECLAIM_RETRY;
	}
	if (f->park_commit == 1) {
		/* the commit waits for writers: it finishes 1 ms later */
		f->parked = t;
		sim_at(f->s, t->clock + NS_PER_MS, commit_done, f);
		return RECLAIM_PARKED;
	}
	fake_op(f, COMMIT_TRANS, t);
	return 0;
}

static const reclaim_flush_ops fake_ops = {
	.flush_delayed_items = op_items,
	.run_delayed_refs = op_refs,
	.run_delayed_iputs = op_iputs,
	.commit = op_commit,
};

typedef struct waiter {
	space_ctl *sc;
	int kind, flush;
	uint64_t bytes;
	space_ticket tk;
	int phase, result, done;
	reclaim_ctl *rc;
	reclaim_prio prio;
} waiter;

static int waiter_step(sim *s, task *t)
{
	(void)s;
	waiter *w = t->ctx;
	int r;
	switch (w->phase) {
	case 0:
		r = space_reserve(w->sc, w->kind, t, w->bytes, w->flush, &w->tk);
		if (r == SPACE_WAIT) {
			w->phase = 1;
			return TASK_BLOCKED;
		}
		if (r == SPACE_PRIORITY) {
			reclaim_priority_begin(w->rc, &w->prio, &w->tk, w->flush);
			w->phase = 2;
			return TASK_RUN;
		}
		w->result = r;
		break;
	case 1:
		w->result = space_ticket_result(w->sc, &w->tk, t->clock);
		break;
	case 2:
		r = reclaim_priority_step(w->rc, &w->prio, t);
		if (r == RECLAIM_PARKED)
			return TASK_BLOCKED;
		if (r)
			return TASK_RUN;
		w->result = space_ticket_result(w->sc, &w->tk, t->clock);
		break;
	}
	w->done = 1;
	return TASK_DONE;
}

/* A full metadata space with no unallocated device space. */
typedef struct rig {
	sim *s;
	space_ctl sc;
	reclaim_ctl rc;
	fake f;
} rig;

static void rig_init(rig *g, uint64_t total)
{
	g->s = sim_create(7, 0);
	space_init(&g->sc, g->s);
	g->sc.info[SPACE_META].total_bytes = total;
	CHECK_EQ(space_reserve(&g->sc, SPACE_META, NULL, total, RESERVE_NO_FLUSH, NULL), 0);
	g->f = (fake){.sc = &g->sc, .s = g->s};
	reclaim_flush_ops ops = fake_ops;
	ops.ctx = &g->f;
	CHECK_EQ(reclaim_init(&g->rc, g->s, &g->sc, NULL, &ops, 4), 0);
}

/* Turn `bytes` of the full space's reservations into pinned bytes: what
 * a commit would give back. */
static void rig_pin(rig *g, uint64_t bytes)
{
	space_info *m = &g->sc.info[SPACE_META];
	m->bytes_may_use -= bytes;
	m->bytes_pinned += bytes;
}

static void rig_free(rig *g)
{
	CHECK_EQ(space_check(NULL, &g->sc), 0);
	reclaim_destroy(&g->rc);
	sim_destroy(g->s);
}

/* The states of the records, in order, compared with want[]. */
static int states_are(const reclaim_ctl *rc, const int *want, int n)
{
	if (reclaim_records(rc) != (uint64_t)n) {
		fprintf(stderr, "  %llu records, want %d:",
			(unsigned long long)reclaim_records(rc), n);
		for (uint64_t i = 0; i < reclaim_records(rc); i++)
			fprintf(stderr, " %d", reclaim_record_at(rc, i)->state);
		fprintf(stderr, "\n");
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (reclaim_record_at(rc, (uint64_t)i)->state != want[i])
			return 0;
	return 1;
}

/* Nothing helps until the commit: every state runs once, in order, and
 * ALLOC_CHUNK_FORCE is skipped on the first pass. */
static void test_order(int park_commit)
{
	rig g;
	rig_init(&g, 1 * MiB);
	g.f.rel_calls[COMMIT_TRANS] = 1;
	rig_pin(&g, 512 * KiB);
	g.f.park_commit = park_commit;
	waiter w = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		    .bytes = 256 * KiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w.done && w.result == 0);
	static const int want[] = {1, 2, 3, 4, 5, 6, 7, 9, 10};
	CHECK(states_are(&g.rc, want, 9));
	CHECK_EQ(g.rc.meta.passes, 1);
	CHECK_EQ(g.sc.info[SPACE_META].flush, 0);
	CHECK_EQ(g.f.calls[FLUSH_DELAYED_ITEMS_NR], 1);
	CHECK_EQ(g.f.calls[COMMIT_TRANS], 1);
	CHECK_EQ(g.f.retried, park_commit == 2);
	/* each state costs its fixed part plus the op */
	const reclaim_record *r0 = reclaim_record_at(&g.rc, 0);
	CHECK_EQ(r0->duration, RECLAIM_NS_FLUSH_STATE + 10 * NS_PER_US);
	CHECK_EQ(r0->to_reclaim, 256 * KiB);
	CHECK_EQ(r0->items, 2); /* calc_reclaim_items_nr(256 KiB) * 2 */
	/* the worker starts a wakeup after the ticket is queued */
	CHECK_EQ(r0->t, 1000 + SPACE_NS_RESERVE + SPACE_NS_TICKET + RECLAIM_NS_WAKEUP);
	const reclaim_record *rc = reclaim_record_at(&g.rc, 8);
	if (park_commit)
		CHECK(rc->duration >= NS_PER_MS);
	else
		CHECK(rc->duration < NS_PER_MS);
	CHECK_EQ(rc->tickets, 0);
	rig_free(&g);
}

/* A grant in FLUSH_DELAYED_REFS_NR restarts the machine at the first
 * state for the ticket still waiting. */
static void test_restart(void)
{
	rig g;
	rig_init(&g, 1 * MiB);
	g.f.rel_calls[FLUSH_DELAYED_REFS_NR] = 1;
	g.f.rel_calls[COMMIT_TRANS] = 1;
	g.f.release_bytes = 256 * KiB;
	rig_pin(&g, 256 * KiB);
	waiter a = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		    .bytes = 256 * KiB};
	waiter b = a;
	task_spawn(g.s, "a", waiter_step, &a, 1000);
	task_spawn(g.s, "b", waiter_step, &b, 2000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(a.done && a.result == 0);
	CHECK(b.done && b.result == 0);
	static const int want[] = {1, 2, 3, 1, 2, 3, 4, 5, 6, 7, 9, 10};
	CHECK(states_are(&g.rc, want, 12));
	CHECK_EQ(g.rc.meta.restarts, 1);
	CHECK_EQ(g.sc.info[SPACE_META].tickets_id, 2);
	rig_free(&g);
}

/* Nothing ever helps: three passes (the second and third with
 * ALLOC_CHUNK_FORCE), then the tickets fail with ENOSPC. */
static void test_enospc(void)
{
	rig g;
	rig_init(&g, 1 * MiB);
	waiter w = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		    .bytes = 256 * KiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w.done && w.result == LAB_ENOSPC);
	CHECK_EQ(reclaim_records(&g.rc), 9 + 10 + 10);
	CHECK_EQ(g.rc.per_state[ALLOC_CHUNK_FORCE].calls, 2);
	CHECK_EQ(g.rc.per_state[COMMIT_TRANS].calls, 3);
	/* nothing pinned: may_commit_transaction never lets it commit */
	CHECK_EQ(g.rc.commits_skipped, 3);
	CHECK_EQ(g.f.calls[COMMIT_TRANS], 0);
	CHECK_EQ(g.sc.info[SPACE_META].tickets_failed, 1);
	CHECK_EQ(g.sc.info[SPACE_META].flush, 0);
	CHECK(g.sc.info[SPACE_META].full); /* no device space for a chunk */

	/* a later ticket kicks the sleeping worker into a second pass */
	g.f.rel_calls[FLUSH_DELAYED_ITEMS] = 1;
	g.f.release_bytes = 128 * KiB;
	waiter w2 = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		     .bytes = 64 * KiB};
	task_spawn(g.s, "w2", waiter_step, &w2, sim_now(g.s) + 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w2.done && w2.result == 0);
	CHECK_EQ(g.rc.meta.passes, 2);
	CHECK_EQ(reclaim_records(&g.rc), 29 + 2);
	rig_free(&g);
}

/* With device space, ALLOC_CHUNK adds a metadata chunk once real usage
 * passes 80%, which grants the ticket. */
static void test_alloc_chunk(void)
{
	rig g;
	rig_init(&g, 1 * MiB);
	g.sc.unallocated = 1 * GiB;
	/* 1 MiB of chunks, overcommit up to 1/8 of 1 GiB: a 256 MiB ticket
	 * cannot overcommit */
	space_info *m = &g.sc.info[SPACE_META];
	m->bytes_used = 900 * KiB; /* real usage above 80% of the chunk */
	m->bytes_may_use -= 900 * KiB;
	waiter w = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		    .bytes = 256 * MiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w.done && w.result == 0);
	CHECK_EQ(m->total_bytes, 1 * MiB + 256 * MiB);
	CHECK_EQ(g.sc.unallocated, 768 * MiB);
	static const int want[] = {1, 2, 3, 4, 5, 6, 7};
	CHECK(states_are(&g.rc, want, 7));
	rig_free(&g);
}

/* The data worker forces data chunks while the device has room. */
static void test_data_worker(void)
{
	rig g;
	rig_init(&g, 1 * MiB);
	g.sc.unallocated = 4 * GiB;
	waiter w = {.sc = &g.sc, .kind = SPACE_DATA, .flush = RESERVE_FLUSH_DATA,
		    .bytes = 100 * MiB};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w.done && w.result == 0);
	CHECK_EQ(g.sc.info[SPACE_DATA].total_bytes, 1 * GiB);
	CHECK_EQ(reclaim_records(&g.rc), 1);
	CHECK_EQ(reclaim_record_at(&g.rc, 0)->state, ALLOC_CHUNK_FORCE);
	CHECK_EQ(reclaim_record_at(&g.rc, 0)->kind, SPACE_DATA);
	CHECK_EQ(g.rc.data.passes, 1);
	CHECK_EQ(g.rc.meta.passes, 0);

	/* a full device: the data loop runs its states, then fails */
	g.sc.unallocated = 0;
	waiter w2 = {.sc = &g.sc, .kind = SPACE_DATA, .flush = RESERVE_FLUSH_DATA,
		     .bytes = 2 * GiB};
	task_spawn(g.s, "w2", waiter_step, &w2, sim_now(g.s) + 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w2.done && w2.result == LAB_ENOSPC);
	CHECK(g.sc.info[SPACE_DATA].full);
	/* one forced chunk attempt, then FLUSH_DELALLOC_WAIT, iputs, refs,
	 * commit once each */
	CHECK_EQ(reclaim_records(&g.rc), 1 + 1 + 4);
	rig_free(&g);
}

/* A FLUSH_LIMIT reservation flushes for itself and stops once granted. */
static void test_priority_flush(void)
{
	rig g;
	rig_init(&g, 1 * MiB);
	g.f.rel_calls[FLUSH_DELAYED_ITEMS] = 1;
	g.f.release_bytes = 256 * KiB;
	waiter w = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_LIMIT,
		    .bytes = 200 * KiB, .rc = &g.rc};
	task_spawn(g.s, "w", waiter_step, &w, 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w.done && w.result == 0);
	static const int want[] = {1, 2};
	CHECK(states_are(&g.rc, want, 2));
	CHECK_EQ(g.rc.meta.passes, 0); /* the async worker was never kicked */

	/* nothing helps: the three priority states, then ENOSPC */
	waiter w2 = {.sc = &g.sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_LIMIT,
		     .bytes = 4 * MiB, .rc = &g.rc};
	task_spawn(g.s, "w2", waiter_step, &w2, sim_now(g.s) + 1000);
	sim_run(g.s, 100000, SIMTIME_MAX);
	CHECK(w2.done && w2.result == LAB_ENOSPC);
	CHECK_EQ(reclaim_records(&g.rc), 2 + 3);
	CHECK_EQ(reclaim_record_at(&g.rc, 4)->state, ALLOC_CHUNK);
	CHECK_EQ(g.sc.info[SPACE_META].priority_tickets.n, 0);

	strbuf sb;
	sb_init(&sb);
	space_details_json(&g.sc, &g.rc, NULL, &sb);
	CHECK(sb.len > 200);
	CHECK(strstr(sb.buf, "\"FLUSH_DELAYED_ITEMS_NR\"") != NULL);
	sb_free(&sb);
	rig_free(&g);
}

/* Above 98% with nothing waiting: one preemptive FLUSH_DELAYED_ITEMS_NR. */
static void test_preempt(void)
{
	rig g;
	g.s = sim_create(7, 0);
	space_init(&g.sc, g.s);
	space_info *m = &g.sc.info[SPACE_META];
	m->total_bytes = 100 * MiB;
	g.f = (fake){.sc = &g.sc, .s = g.s};
	reclaim_flush_ops ops = fake_ops;
	ops.ctx = &g.f;
	CHECK_EQ(reclaim_init(&g.rc, g.s, &g.sc, NULL, &ops, 4), 0);
	CHECK_EQ(space_reserve(&g.sc, SPACE_META, NULL, 97 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(m->preempt_kicks, 0); /* 97%: below the threshold */
	CHECK_EQ(space_reserve(&g.sc, SPACE_META, NULL, 2 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(m->preempt_kicks, 1);
	sim_run(g.s, 100000, SIMTIME_MAX);
	static const int want[] = {FLUSH_DELAYED_ITEMS_NR};
	CHECK(states_are(&g.rc, want, 1));
	/* 99 MiB used against 90 MiB expected */
	CHECK_EQ(reclaim_record_at(&g.rc, 0)->to_reclaim, 9 * MiB);
	CHECK_EQ(g.rc.meta.passes, 1);
	CHECK_EQ(m->flush, 0);
	CHECK_EQ(m->preempt, 0);
	/* really used space: flushing cannot help, no kick */
	m->bytes_may_use -= 99 * MiB;
	m->bytes_used += 99 * MiB;
	CHECK_EQ(space_reserve(&g.sc, SPACE_META, NULL, 512 * KiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(m->preempt_kicks, 1);
	rig_free(&g);
}

int main(void)
{
	test_preempt();
	test_order(0);
	test_order(1);
	test_order(2);
	test_restart();
	test_enospc();
	test_alloc_chunk();
	test_data_worker();
	test_priority_flush();
	T_DONE();
}
