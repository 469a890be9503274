/*
 * reclaim.h - the async space reclaim workers (btrfs 5.10 space-info.c:
 * btrfs_async_reclaim_metadata_space, btrfs_async_reclaim_data_space,
 * flush_space, priority_reclaim_metadata_space).
 *
 * The metadata worker is a sim task that sleeps until a ticket is queued
 * (space.h kicks it), then walks the flush states
 *
 *   FLUSH_DELAYED_ITEMS_NR -> FLUSH_DELAYED_ITEMS -> FLUSH_DELAYED_REFS_NR
 *   -> FLUSH_DELAYED_REFS -> FLUSH_DELALLOC -> FLUSH_DELALLOC_WAIT
 *   -> ALLOC_CHUNK -> ALLOC_CHUNK_FORCE -> RUN_DELAYED_IPUTS -> COMMIT_TRANS
 *
 * restarting at the first state whenever tickets_id moved (a ticket was
 * granted), stopping when no ticket remains, skipping ALLOC_CHUNK_FORCE on
 * the first pass and failing the tickets after the third fruitless commit.
 * The data worker forces data chunks while it can, then loops over
 * FLUSH_DELALLOC_WAIT, RUN_DELAYED_IPUTS, FLUSH_DELAYED_REFS, COMMIT_TRANS.
 *
 * Each state calls its operation and costs what the operation costs: the
 * delalloc states run shrink_delalloc (delalloc.h); the others go through
 * reclaim_flush_ops, a table the transaction / delayed-ref / allocator
 * code fills in (a unit test fills it with fakes). A missing op costs only
 * the state's fixed overhead, except alloc_chunk, which defaults to the
 * kernel's should_alloc_chunk rule on the space_ctl's own counters.
 *
 * Wiring an experiment (seed 000's untar):
 *   space_init(&sc, s); sc.info[SPACE_META].total_bytes = ... (or
 *     space_sync_alloc + sc.unallocated_fn = space_alloc_unallocated);
 *   delalloc_init(&dc, s, &sc, &data_path_ops, &fs->opts.patches, cpus);
 *   reclaim_init(&rc, s, &sc, &dc, &ops, cpus);
 *   each create: space_trans_reserve(5 items) ... space_rsv_release(ALL);
 *   each write: space_delalloc_reserve, then at set_delalloc
 *     space_delalloc_mod_extents(+n) and space_delalloc_release_extents;
 *   writepages: mod_extents(+1) per ordered extent and -n as delalloc
 *     ranges are cleared; finish_ordered_io: mod_extents(-1) and
 *     space_delalloc_release_metadata(len) (the release grants tickets);
 *   ops.commit: a trans_mgr commit keeps its handle across TRANS_WAIT by
 *     returning RECLAIM_RETRY, then space_sync_alloc() after the unpin.
 *   details hook: space_details_json(&sc, &rc, &dc, out).
 *
 * Observability: one record per flush_space call {time, state, to_reclaim,
 * items, pages wanted, pages flushed, inodes touched, tickets waiting,
 * duration} (the last RECLAIM_RECORDS kept), per-state totals, and
 * reclaim_details_json() for an experiment's details hook.
 */
#ifndef RECLAIM_H
#define RECLAIM_H

#include <stdint.h>

#include "delalloc.h"
#include "sim.h"
#include "space.h"
#include "strbuf.h"

enum flush_state {
	FLUSH_NONE = 0,
	FLUSH_DELAYED_ITEMS_NR = 1,
	FLUSH_DELAYED_ITEMS = 2,
	FLUSH_DELAYED_REFS_NR = 3,
	FLUSH_DELAYED_REFS = 4,
	FLUSH_DELALLOC = 5,
	FLUSH_DELALLOC_WAIT = 6,
	ALLOC_CHUNK = 7,
	ALLOC_CHUNK_FORCE = 8,
	RUN_DELAYED_IPUTS = 9,
	COMMIT_TRANS = 10,
	FLUSH_NSTATES = 11
};

#define RECLAIM_PARKED 1   /* an op parked the task; it wakes it when done */
#define RECLAIM_RETRY 3    /* an op parked the task; call it again when woken
			    * (trans.h's TRANS_WAIT convention) */
#define RECLAIM_RECORDS 4096

/*
 * The non-delalloc flush operations. Each runs on task t (charging its
 * CPU and waits to t) and returns 0 when done, RECLAIM_PARKED when it
 * parked t (it must task_wake() it when finished), RECLAIM_RETRY when it
 * parked t and wants to be called again once t is woken, or a negative
 * LAB_E* (counted and ignored, as flush_space ignores most errors). Any
 * may be NULL.
 *
 * COMMIT_TRANS follows may_commit_transaction: the commit op is called
 * only if the space a commit would free (bytes_pinned, plus what
 * commit_frees reports for reserves the commit refills) covers the first
 * ticket; otherwise the state is skipped as ENOSPC.
 */
typedef struct reclaim_flush_ops {
	void *ctx;
	/* btrfs_run_delayed_items_nr: nr items, or all when nr < 0 */
	int (*flush_delayed_items)(void *ctx, task *t, int64_t nr);
	/* btrfs_run_delayed_refs: nr refs, or all when nr == 0 */
	int (*run_delayed_refs)(void *ctx, task *t, uint64_t nr);
	/* btrfs_chunk_alloc for kind (SPACE_*); force = CHUNK_ALLOC_FORCE. It
	 * must report a new chunk with space_add_chunk(). */
	int (*alloc_chunk)(void *ctx, task *t, int kind, int force);
	/* btrfs_run_delayed_iputs + wait */
	int (*run_delayed_iputs)(void *ctx, task *t);
	/* btrfs_commit_transaction, once may_commit_transaction agreed */
	int (*commit)(void *ctx, task *t, int kind);
	/* Optional: bytes held in the delayed-item, delayed-refs and
	 * transaction reserves that a commit gives back (0 if NULL). */
	uint64_t (*commit_frees)(void *ctx, int kind);
} reclaim_flush_ops;

typedef struct reclaim_record {
	simtime_t t, duration;
	uint8_t kind, state;
	uint16_t rounds;         /* shrink_delalloc: flush rounds (at most 3) */
	uint32_t tickets;        /* tickets waiting when the call ended */
	uint64_t to_reclaim, items, pages_wanted, pages_flushed, inodes;
} reclaim_record;

struct reclaim_ctl;

/* One flush_space() call in progress. */
typedef struct flush_call {
	int state;
	int active;
	int parked_op;  /* waiting for an op that parked (RECLAIM_PARKED or
			 * RECLAIM_RETRY) */
	uint64_t to_reclaim;
	space_info *si;
	int is_shrink;
	uint64_t tickets_id0; /* si->tickets_id when the call began */
	shrink_run sr;
	reclaim_record rec;
} flush_call;

typedef struct reclaim_worker {
	struct reclaim_ctl *rc;
	space_info *si;
	task *task;
	waitq idle;
	int running;           /* inside a reclaim pass */
	int state;             /* metadata: enum flush_state; data: list index */
	int forcing;           /* data: the ALLOC_CHUNK_FORCE loop */
	int commit_cycles;
	uint64_t last_tickets_id;
	uint64_t to_reclaim;
	flush_call fc;
	uint64_t passes, restarts;
} reclaim_worker;

/* A priority ticket's own flushing (priority_reclaim_metadata_space). */
typedef struct reclaim_prio {
	space_info *si;
	space_ticket *tk;
	const int *states;
	int nstates, idx, started;
	uint64_t to_reclaim;
	flush_call fc;
} reclaim_prio;

typedef struct reclaim_ctl {
	sim *sim;
	space_ctl *sc;
	delalloc_ctl *dc;
	reclaim_flush_ops ops;
	int ncpus;
	uint64_t meta_chunk_bytes, data_chunk_bytes; /* default alloc_chunk */
	reclaim_worker meta, data;
	reclaim_record *rec; /* ring of the last RECLAIM_RECORDS */
	uint64_t nrec;       /* records ever written */
	struct {
		uint64_t calls, ns, pages_wanted, pages_flushed, inodes;
		uint64_t grants; /* tickets granted or failed during its calls */
	} per_state[FLUSH_NSTATES];
	uint64_t op_errors;
	uint64_t commits_skipped; /* may_commit_transaction said no */
	int ser_state;
	int trace_state;
	/* Optional observer: every flush_space call as it finishes. */
	void (*on_record)(void *ctx, const reclaim_record *r);
	void *on_record_ctx;
} reclaim_ctl;

/*
 * Set up the two workers (sim tasks, parked until kicked) and hook
 * sc->kick. dc may be NULL (the delalloc states then cost only their
 * overhead); ops may be NULL. Returns 0, LAB_EINVAL or LAB_ENOMEM.
 */
int reclaim_init(reclaim_ctl *rc, sim *s, space_ctl *sc, delalloc_ctl *dc,
		 const reclaim_flush_ops *ops, int ncpus);
void reclaim_destroy(reclaim_ctl *rc);
/* "FLUSH_DELAYED_ITEMS_NR", ... */
const char *reclaim_state_name(int state);

/* Records: the i-th of the kept ones, oldest first (NULL past the end). */
uint64_t reclaim_records(const reclaim_ctl *rc);
const reclaim_record *reclaim_record_at(const reclaim_ctl *rc, uint64_t i);

/*
 * Priority flushing for a ticket that space_reserve() queued on
 * priority_tickets (RESERVE_FLUSH_LIMIT / RESERVE_FLUSH_EVICT): the
 * reserving task runs a short list of flush states itself and stops as
 * soon as its ticket is granted. Call begin, then step until it returns
 * 0 (then space_ticket_result()); RECLAIM_PARKED: return TASK_BLOCKED;
 * DELALLOC_MORE: return TASK_RUN and step again.
 */
void reclaim_priority_begin(reclaim_ctl *rc, reclaim_prio *p, space_ticket *tk,
			    int flush);
int reclaim_priority_step(reclaim_ctl *rc, reclaim_prio *p, task *t);

/* The space_infos, delalloc counters, per-state totals and records. */
void reclaim_details_json(const reclaim_ctl *rc, strbuf *out);
/* Convenience for an experiment's details hook: space + reclaim + delalloc. */
void space_details_json(const space_ctl *sc, const reclaim_ctl *rc,
			const delalloc_ctl *dc, strbuf *out);

#endif /* RECLAIM_H */
