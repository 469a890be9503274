/*
 * test_space.c - space_info arithmetic, the overcommit rule, tickets (FIFO,
 * priority, failure), block reserves and the delalloc reservation sizes.
 */
#include <stdlib.h>

#include "alloc.h"
#include "costs.h"
#include "lab.h"
#include "sim.h"
#include "space.h"
#include "t.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define GiB (1024ull * 1024 * 1024)

static int kicks;
static void fake_kick(void *ctx, space_info *si, simtime_t at)
{
	(void)ctx;
	(void)si;
	(void)at;
	kicks++;
}

/* A task that reserves once and records the outcome. */
typedef struct waiter {
	space_ctl *sc;
	int kind, flush;
	uint64_t bytes;
	space_ticket tk;
	int phase, result, done;
	simtime_t done_at;
} waiter;

static int waiter_step(sim *s, task *t)
{
	(void)s;
	waiter *w = t->ctx;
	if (w->phase == 0) {
		int r = space_reserve(w->sc, w->kind, t, w->bytes, w->flush, &w->tk);
		if (r == SPACE_WAIT) {
			w->phase = 1;
			return TASK_BLOCKED;
		}
		w->result = r;
	} else {
		w->result = space_ticket_result(w->sc, &w->tk, t->clock);
	}
	w->done = 1;
	w->done_at = t->clock;
	return TASK_DONE;
}

typedef struct rel_ev {
	space_ctl *sc;
	int kind;
	uint64_t bytes;
} rel_ev;

static void release_event(sim *s, void *arg)
{
	rel_ev *e = arg;
	space_release(e->sc, e->kind, e->bytes, sim_now(s));
}

static void test_sizes(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	CHECK_EQ(space_insert_metadata_size(&sc, 1), 256 * KiB);
	CHECK_EQ(space_insert_metadata_size(&sc, 5), 1280 * KiB);
	CHECK_EQ(space_metadata_size(&sc, 1), 128 * KiB);
	CHECK_EQ(space_csum_leaves(&sc, 4096), 1);
	CHECK_EQ(space_csum_leaves(&sc, 0), 0);
	/* 16384 - 101 header - 25 item = 16258 bytes = 4064 crc32c per leaf */
	CHECK_EQ(space_csum_leaves(&sc, 4064ull * 4096), 1);
	CHECK_EQ(space_csum_leaves(&sc, 4065ull * 4096), 2);
	CHECK_EQ(space_count_max_extents(1), 1);
	CHECK_EQ(space_count_max_extents(128 * MiB), 1);
	CHECK_EQ(space_count_max_extents(128 * MiB + 1), 2);
	/* a small file's write: 1 extent + 1 csum leaf + inode update */
	CHECK_EQ(space_delalloc_calc(&sc, 4096), 640 * KiB);
	CHECK_EQ(space_reclaim_items(&sc, 1280 * KiB), 5);
	CHECK_EQ(space_reclaim_items(&sc, 100 * KiB), 1);
	sim_destroy(s);
}

static void test_overcommit(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	space_info *m = &sc.info[SPACE_META], *d = &sc.info[SPACE_DATA];
	m->total_bytes = 256 * MiB;
	sc.unallocated = 8 * GiB;
	CHECK_EQ(space_avail(&sc, m, RESERVE_FLUSH_ALL), 1 * GiB);
	CHECK_EQ(space_avail(&sc, m, RESERVE_NO_FLUSH), 4 * GiB);
	CHECK_EQ(space_avail(&sc, m, RESERVE_FLUSH_LIMIT), 4 * GiB);
	/* used + bytes < total + avail, strictly */
	m->bytes_used = 100 * MiB;
	m->bytes_may_use = 256 * MiB + 1 * GiB - 100 * MiB - 1 * MiB;
	CHECK(space_can_overcommit(&sc, m, 1 * MiB - 1, RESERVE_FLUSH_ALL));
	CHECK(!space_can_overcommit(&sc, m, 1 * MiB, RESERVE_FLUSH_ALL));
	CHECK(space_can_overcommit(&sc, m, 1 * MiB, RESERVE_NO_FLUSH));
	/* a DUP metadata profile halves the unallocated space first */
	sc.meta_factor = 2;
	CHECK_EQ(space_avail(&sc, m, RESERVE_FLUSH_ALL), 512 * MiB);
	CHECK(!space_can_overcommit(&sc, m, 1, RESERVE_FLUSH_ALL));
	/* data never overcommits */
	d->total_bytes = 1 * GiB;
	CHECK(!space_can_overcommit(&sc, d, 1, RESERVE_FLUSH_ALL));
	CHECK_EQ(space_used(m, 0), 100 * MiB);
	CHECK_EQ(space_used(m, 1), 256 * MiB + 1 * GiB - 1 * MiB);

	/* the reservation path: fit, overcommit, no-flush failure */
	sc.meta_factor = 1;
	m->bytes_used = 0;
	m->bytes_may_use = 0;
	sc.unallocated = 0;
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 200 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(m->reserves_fit, 1);
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 57 * MiB, RESERVE_NO_FLUSH, NULL),
		 LAB_ENOSPC);
	sc.unallocated = 8 * GiB; /* now 4 GiB may be promised without flushing */
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 57 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(m->reserves_overcommit, 1);
	CHECK_EQ(m->bytes_may_use, 257 * MiB);
	/* bad arguments */
	CHECK_EQ(space_reserve(&sc, 7, NULL, 1, RESERVE_NO_FLUSH, NULL), LAB_EINVAL);
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 1, RESERVE_FLUSH_ALL, NULL),
		 LAB_EINVAL);
	/* the reclaim target: tickets, or the overcommit overage */
	CHECK_EQ(space_reclaim_target(&sc, m, 4), 0);
	sc.unallocated = 0;
	CHECK_EQ(space_reclaim_target(&sc, m, 4), 1 * MiB); /* 257 - 256 */
	sim_destroy(s);
}

/* Three tasks queue tickets in order; releases grant them FIFO. */
static void test_tickets_fifo(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	sc.kick = fake_kick;
	kicks = 0;
	space_info *m = &sc.info[SPACE_META];
	m->total_bytes = 1 * MiB;
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 1 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(kicks, 1); /* 100% full with nothing used: a preemptive kick */
	CHECK_EQ(m->preempt_kicks, 1);
	kicks = 0;

	waiter w[3] = {
		{.sc = &sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL, .bytes = 100 * KiB},
		{.sc = &sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL, .bytes = 200 * KiB},
		{.sc = &sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL, .bytes = 50 * KiB},
	};
	for (int i = 0; i < 3; i++)
		task_spawn(s, "w", waiter_step, &w[i], (simtime_t)(i + 1) * 1000);
	sim_run(s, 1000, 10000);
	CHECK_EQ(m->tickets.n, 3);
	CHECK_EQ(m->reclaim_size, 350 * KiB);
	CHECK_EQ(space_check(NULL, &sc), 0);
	m->reclaim_size += 1; /* a broken counter is caught */
	CHECK_EQ(space_check(NULL, &sc), 1);
	m->reclaim_size -= 1;
	m->tickets.n++; /* and a wrong count */
	CHECK(space_check(NULL, &sc) >= 1);
	m->tickets.n--;
	m->flush = 0; /* tickets nobody reclaims for */
	CHECK_EQ(space_check(NULL, &sc), 1);
	m->flush = 1;
	CHECK_EQ(kicks, 1); /* the worker is kicked once, flush stays set */
	CHECK(m->flush);
	CHECK(m->tickets.head == &w[0].tk && m->tickets.tail == &w[2].tk);

	/* 150 KiB back: the 100 KiB ticket fits, the 200 KiB one does not, and
	 * the 50 KiB one behind it must wait its turn (FIFO) */
	rel_ev e1 = {&sc, SPACE_META, 150 * KiB};
	sim_at(s, 20000, release_event, &e1);
	sim_run(s, 1000, 30000);
	CHECK(w[0].done && w[0].result == 0 && w[0].done_at == 20000);
	CHECK(!w[1].done && !w[2].done);
	CHECK_EQ(m->tickets_id, 1);
	CHECK_EQ(m->reclaim_size, 250 * KiB);
	CHECK_EQ(m->bytes_may_use, 1 * MiB - 150 * KiB + 100 * KiB);

	/* 200 KiB more: 250 KiB free, both remaining tickets fit in order */
	rel_ev e2 = {&sc, SPACE_META, 200 * KiB};
	sim_at(s, 40000, release_event, &e2);
	sim_run(s, 1000, 50000);
	CHECK(w[1].done && w[1].result == 0);
	CHECK(w[2].done && w[2].result == 0);
	CHECK_EQ(m->tickets_id, 3);
	CHECK_EQ(m->reclaim_size, 0);
	CHECK_EQ(m->tickets.n, 0);
	CHECK_EQ(m->tickets_granted, 3);
	CHECK_EQ(m->bytes_may_use, 1 * MiB);
	/* w[1] queued at 2000 plus its reservation's CPU */
	CHECK_EQ(m->ticket_wait_max_ns, 40000 - (2000 + SPACE_NS_RESERVE + SPACE_NS_TICKET));

	/* a new reservation does not jump a queued ticket even if it fits */
	m->total_bytes = 2 * MiB;
	waiter big = {.sc = &sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		      .bytes = 2 * MiB};
	task_spawn(s, "big", waiter_step, &big, 60000);
	sim_run(s, 1000, 61000);
	CHECK_EQ(m->tickets.n, 1);
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 4 * KiB, RESERVE_NO_FLUSH, NULL),
		 LAB_ENOSPC);
	/* release everything: the big ticket is granted */
	space_release(&sc, SPACE_META, 1 * MiB, sim_now(s));
	sim_run(s, 1000, 70000);
	CHECK(big.done && big.result == 0);
	CHECK_EQ(space_check(NULL, &sc), 0);
	sim_destroy(s);
}

/* Priority tickets go first, with the NO_FLUSH (half) overcommit. */
static void test_priority(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	sc.kick = fake_kick;
	kicks = 0;
	space_info *m = &sc.info[SPACE_META];
	m->total_bytes = 1 * MiB;
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, 1 * MiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(kicks, 1); /* 100% full with nothing used: a preemptive kick */
	CHECK_EQ(m->preempt_kicks, 1);
	kicks = 0;
	waiter n = {.sc = &sc, .kind = SPACE_META, .flush = RESERVE_FLUSH_ALL,
		    .bytes = 300 * KiB};
	task_spawn(s, "n", waiter_step, &n, 1000);
	sim_run(s, 100, 2000);
	/* a FLUSH_LIMIT reservation jumps the normal queue onto priority */
	space_ticket ptk;
	task fake = {0};
	fake.clock = 3000;
	int r = space_reserve(&sc, SPACE_META, &fake, 200 * KiB, RESERVE_FLUSH_LIMIT, &ptk);
	CHECK_EQ(r, SPACE_PRIORITY);
	CHECK_EQ(m->priority_tickets.n, 1);
	CHECK_EQ(m->tickets.n, 1);
	CHECK_EQ(kicks, 1); /* only the normal ticket kicked the worker */
	CHECK_EQ(m->reclaim_size, 500 * KiB);
	/* 250 KiB back: the priority ticket (200) is granted, not the
	 * earlier normal one (300) */
	space_release(&sc, SPACE_META, 250 * KiB, 4000);
	CHECK_EQ(ptk.bytes, 0);
	CHECK_EQ(space_ticket_result(&sc, &ptk, 4000), 0);
	CHECK_EQ(m->tickets.n, 1);
	CHECK_EQ(m->reclaim_size, 300 * KiB);
	/* priority grants may overcommit up to half the unallocated space */
	space_ticket p2;
	fake.clock = 4500;
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fake, 400 * KiB, RESERVE_FLUSH_EVICT, &p2),
		 SPACE_PRIORITY);
	sc.unallocated = 1 * MiB; /* FLUSH_ALL: 128 KiB, NO_FLUSH: 512 KiB */
	CHECK_EQ(space_try_grant(&sc, m, 4600), 1);
	CHECK_EQ(p2.bytes, 0);          /* 1 MiB + 150 KiB < 1 MiB + 512 KiB */
	CHECK_EQ(m->tickets.n, 1);      /* 300 KiB more is over the 1/8 limit */
	CHECK_EQ(space_ticket_result(&sc, &p2, 4600), 0);
	/* an ungranted priority ticket comes back as ENOSPC and is removed */
	space_ticket p3;
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fake, 4 * MiB, RESERVE_FLUSH_LIMIT, &p3),
		 SPACE_PRIORITY);
	CHECK_EQ(space_ticket_result(&sc, &p3, 5000), LAB_ENOSPC);
	CHECK_EQ(m->priority_tickets.n, 0);
	CHECK_EQ(m->reclaim_size, 300 * KiB);
	/* drain: release so the normal waiter finishes */
	space_release(&sc, SPACE_META, 1 * MiB, 6000);
	sim_run(s, 1000, 100000);
	CHECK(n.done && n.result == 0);
	sim_destroy(s);
}

/* maybe_fail_all_tickets: fail from the head, stop at a smaller ticket. */
static void test_fail_tickets(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	space_info *m = &sc.info[SPACE_META];
	/* three stand-in tasks, marked queued so a wake does not schedule them */
	task fa = {.queued = 1}, fb = {.queued = 1}, fc = {.queued = 1};
	space_ticket a, b, c;
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fa, 200 * KiB, RESERVE_FLUSH_ALL, &a), SPACE_WAIT);
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fb, 300 * KiB, RESERVE_FLUSH_ALL, &b), SPACE_WAIT);
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fc, 100 * KiB, RESERVE_FLUSH_ALL, &c), SPACE_WAIT);
	CHECK_EQ(a.wait.len, 1);
	CHECK_EQ(m->tickets.n, 3);
	/* 200 fails, 300 (>= 200) fails, 100 < 200: stop, go round again */
	CHECK_EQ(space_fail_tickets(&sc, m, 0), 1);
	CHECK_EQ(a.error, LAB_ENOSPC);
	CHECK_EQ(b.error, LAB_ENOSPC);
	CHECK_EQ(c.error, 0);
	CHECK_EQ(m->tickets.n, 1);
	CHECK_EQ(m->reclaim_size, 100 * KiB);
	CHECK_EQ(space_ticket_result(&sc, &a, 10), LAB_ENOSPC);
	/* the last one fails and nothing was granted: 0 */
	CHECK_EQ(space_fail_tickets(&sc, m, 0), 0);
	CHECK_EQ(c.error, LAB_ENOSPC);
	CHECK_EQ(m->tickets_failed, 3);
	CHECK_EQ(m->reclaim_size, 0);
	sim_destroy(s);
}

/* Block reserves, a transaction handle, and an inode's delalloc rsv through
 * write, merge, ordered extent and completion. */
static void test_rsv(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	space_info *m = &sc.info[SPACE_META];
	m->total_bytes = 64 * MiB;
	task t = {0};

	block_rsv trans;
	space_rsv_init(&trans, SPACE_META);
	space_ticket tk;
	CHECK_EQ(space_trans_reserve(&sc, &trans, &t, 5, RESERVE_FLUSH_ALL, &tk), 0);
	CHECK_EQ(trans.size, 1280 * KiB);
	CHECK_EQ(m->bytes_may_use, 1280 * KiB);
	/* the handle used one block: 16 KiB of the rsv became used */
	trans.reserved -= 16 * KiB;
	trans.size -= 16 * KiB;
	space_bytes_use(&sc, SPACE_META, 16 * KiB, 1, 0);
	CHECK_EQ(space_rsv_release(&sc, &trans, UINT64_MAX, 0), 1264 * KiB);
	CHECK_EQ(m->bytes_may_use, 0);
	CHECK_EQ(m->bytes_used, 16 * KiB);

	inode_rsv ir;
	space_inode_rsv_init(&ir);
	/* first 4 KiB write: reserve (+1 extent), set_delalloc (+1), release
	 * the write's extents (-1) */
	CHECK_EQ(space_delalloc_reserve(&sc, &ir, &t, 4096, RESERVE_FLUSH_ALL, &tk), 0);
	space_delalloc_mod_extents(&sc, &ir, 1, 0);
	space_delalloc_release_extents(&sc, &ir, 4096, 0);
	CHECK_EQ(ir.outstanding_extents, 1);
	CHECK_EQ(ir.rsv.size, 640 * KiB);
	CHECK_EQ(ir.rsv.reserved, 640 * KiB);
	CHECK_EQ(m->bytes_may_use, 640 * KiB);
	/* an adjacent write merges with the range: its 640 KiB comes back */
	CHECK_EQ(space_delalloc_reserve(&sc, &ir, &t, 4096, RESERVE_FLUSH_ALL, &tk), 0);
	CHECK_EQ(m->bytes_may_use, 1280 * KiB);
	space_delalloc_mod_extents(&sc, &ir, 1, 0);
	space_delalloc_mod_extents(&sc, &ir, -1, 0); /* merge */
	space_delalloc_release_extents(&sc, &ir, 4096, 0);
	CHECK_EQ(ir.outstanding_extents, 1);
	CHECK_EQ(ir.csum_bytes, 8192);
	CHECK_EQ(m->bytes_may_use, 640 * KiB);
	/* writeback: an ordered extent (+1), delalloc cleared (-1) */
	space_delalloc_mod_extents(&sc, &ir, 1, 0);
	space_delalloc_mod_extents(&sc, &ir, -1, 0);
	CHECK_EQ(m->bytes_may_use, 640 * KiB); /* held until completion */
	/* finish_ordered_io: ordered extent removed, csums inserted */
	space_delalloc_mod_extents(&sc, &ir, -1, 0);
	space_delalloc_release_metadata(&sc, &ir, 8192, 0);
	CHECK_EQ(ir.rsv.size, 0);
	CHECK_EQ(ir.rsv.reserved, 0);
	CHECK_EQ(m->bytes_may_use, 0);
	CHECK_EQ(m->released_bytes, 1264 * KiB + 640 * KiB + 640 * KiB);

	/* chunk allocation and pin/unpin move the counters */
	sc.unallocated = 1 * GiB;
	space_add_chunk(&sc, SPACE_META, 256 * MiB, 0);
	CHECK_EQ(m->total_bytes, 320 * MiB);
	CHECK_EQ(sc.unallocated, 768 * MiB);
	space_bytes_pin(&sc, SPACE_META, 16 * KiB);
	CHECK_EQ(m->bytes_pinned, 16 * KiB);
	space_bytes_unpin(&sc, SPACE_META, 16 * KiB, 0);
	CHECK_EQ(m->bytes_pinned, 0);
	CHECK_EQ(m->bytes_used, 0);

	strbuf sb;
	sb_init(&sb);
	space_json(&sc, &sb);
	CHECK(sb.len > 100 && sb.buf[0] == '{');
	sb_free(&sb);
	sim_destroy(s);
}

/* The space_infos follow a real allocator: chunks, extents, pins. */
static void test_sync_alloc(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	alloc_ctl a;
	CHECK_EQ(alloc_init(&a, 10 * GiB), 0);
	uint64_t b1, b2;
	CHECK_EQ(alloc_extent(&a, ALLOC_METADATA, 16 * KiB, &b1), 0);
	CHECK_EQ(alloc_extent(&a, ALLOC_METADATA, 16 * KiB, &b2), 0);
	space_sync_alloc(&sc, &a, 0);
	CHECK_EQ(sc.info[SPACE_META].bytes_reserved, 32 * KiB);
	CHECK_EQ(alloc_mark_used(&a, b1, 16 * KiB), 0);
	CHECK_EQ(alloc_mark_used(&a, b2, 16 * KiB), 0);
	CHECK_EQ(alloc_free(&a, b2, 16 * KiB), 0);
	space_sync_alloc(&sc, &a, 0);
	space_info *m = &sc.info[SPACE_META];
	CHECK_EQ(m->total_bytes, a.total[ALLOC_METADATA]);
	CHECK(m->total_bytes > 0);
	CHECK_EQ(m->bytes_used, 16 * KiB);
	CHECK_EQ(m->bytes_pinned, 16 * KiB);
	CHECK_EQ(m->bytes_reserved, 0);
	CHECK_EQ(sc.unallocated, a.dev_bytes - a.dev_alloc);
	/* a ticket waiting for the pinned block is granted by the unpin */
	CHECK_EQ(space_reserve(&sc, SPACE_META, NULL, m->total_bytes - 32 * KiB,
			       RESERVE_NO_FLUSH, NULL), 0);
	sc.unallocated_fn = space_alloc_unallocated;
	sc.unallocated_ctx = &a;
	a.dev_alloc = a.dev_bytes; /* no room to overcommit */
	task fake = {.queued = 1};
	space_ticket tk;
	CHECK_EQ(space_reserve(&sc, SPACE_META, &fake, 16 * KiB, RESERVE_FLUSH_ALL, &tk),
		 SPACE_WAIT);
	alloc_unpin_all(&a);
	space_sync_alloc(&sc, &a, 100);
	CHECK_EQ(tk.bytes, 0);
	CHECK_EQ(space_ticket_result(&sc, &tk, 100), 0);
	alloc_destroy(&a);
	sim_destroy(s);
}

/* 5.10's data reservations: tickets on the normal list for the data
 * worker, but a FLUSH_DATA reservation only queues behind priority ones. */
static void test_data_tickets(void)
{
	sim *s = sim_create(1, 0);
	space_ctl sc;
	space_init(&sc, s);
	sc.kick = fake_kick;
	kicks = 0;
	space_info *d = &sc.info[SPACE_DATA];
	d->total_bytes = 1 * MiB;
	sc.unallocated = 1ull << 40; /* data never overcommits anyway */
	CHECK_EQ(space_reserve(&sc, SPACE_DATA, NULL, 900 * KiB, RESERVE_NO_FLUSH, NULL), 0);
	CHECK_EQ(kicks, 0); /* no preemptive reclaim for data */
	task fake = {.queued = 1};
	space_ticket tk;
	CHECK_EQ(space_reserve(&sc, SPACE_DATA, &fake, 200 * KiB, RESERVE_FLUSH_DATA, &tk),
		 SPACE_WAIT);
	CHECK_EQ(d->tickets.n, 1);
	CHECK_EQ(kicks, 1);
	task fake2 = {.queued = 1};
	space_ticket tk2;
	CHECK_EQ(space_reserve(&sc, SPACE_DATA, &fake2, 50 * KiB, RESERVE_FLUSH_DATA, &tk2), 0);
	CHECK_EQ(space_reserve(&sc, SPACE_DATA, NULL, 50 * KiB, RESERVE_NO_FLUSH, NULL),
		 LAB_ENOSPC);
	CHECK_EQ(d->bytes_may_use, 950 * KiB);
	space_release(&sc, SPACE_DATA, 200 * KiB, 10);
	CHECK_EQ(tk.bytes, 0);
	CHECK_EQ(space_ticket_result(&sc, &tk, 10), 0);
	sim_destroy(s);
}

int main(void)
{
	test_data_tickets();
	test_sync_alloc();
	test_sizes();
	test_overcommit();
	test_tickets_fifo();
	test_priority();
	test_fail_tickets();
	test_rsv();
	T_DONE();
}
