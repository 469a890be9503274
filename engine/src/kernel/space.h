/*
 * space.h - space reservation as btrfs 5.10 does it (space-info.c,
 * block-rsv.c, delalloc-space.c): the per-type space_info counters, the
 * overcommit rule, reservation tickets, block reserves and the sizes
 * btrfs reserves for each operation.
 *
 * A reservation first tries to fit (used + bytes <= total) or to
 * overcommit against unallocated device space. If it cannot, and the
 * caller may flush, it becomes a ticket {bytes, error, waitq} on the FIFO
 * `tickets` (or `priority_tickets` for FLUSH_LIMIT/FLUSH_EVICT callers),
 * reclaim_size grows by its bytes and the async reclaim worker is kicked
 * (reclaim.h). The reserving task parks on the ticket's waitq. Every
 * release of bytes_may_use (and every unpin or chunk allocation) runs
 * space_try_grant(): tickets are granted in FIFO order while they fit,
 * tickets_id is bumped per grant and the waiter is woken at that moment.
 *
 * Counters are bytes. Nothing here allocates: tickets live in the caller's
 * state, as the kernel keeps them on the reserving task's stack.
 *
 * Errors: 0, SPACE_WAIT (a ticket was queued and the task parked), or a
 * negative LAB_E* (LAB_ENOSPC, LAB_EINVAL).
 */
#ifndef SPACE_H
#define SPACE_H

#include <stdint.h>

#include "sim.h"
#include "strbuf.h"

enum { SPACE_DATA = 0, SPACE_META = 1, SPACE_KINDS = 2 };

/* Reservation flush modes (enum btrfs_reserve_flush_enum). */
enum space_flush {
	RESERVE_NO_FLUSH = 0,     /* fail at once if it does not fit */
	RESERVE_FLUSH_LIMIT,      /* priority ticket, limited flushing */
	RESERVE_FLUSH_EVICT,      /* priority ticket (inode eviction) */
	RESERVE_FLUSH_DATA,       /* data ticket, async data reclaim */
	RESERVE_FLUSH_ALL,        /* normal ticket, async metadata reclaim */
	RESERVE_FLUSH_ALL_STEAL,  /* like FLUSH_ALL (global rsv stealing not modelled) */
};

#define SPACE_WAIT 1     /* a normal ticket was queued; the task is parked */
#define SPACE_PRIORITY 2 /* a priority ticket was queued; the task is NOT
			  * parked: it flushes for itself (reclaim_prio) */

#define SPACE_MAX_LEVEL 8          /* BTRFS_MAX_LEVEL */
#define SPACE_EXTENT_PER_ITEM (256ull << 10) /* EXTENT_SIZE_PER_ITEM */
#define SPACE_MAX_EXTENT (128ull << 20)      /* BTRFS_MAX_EXTENT_SIZE */

/* A reservation ticket (struct reserve_ticket). Owned by the waiter. */
typedef struct space_ticket {
	uint64_t bytes;       /* still wanted; 0 once granted */
	uint64_t orig_bytes;
	int error;            /* 0 or LAB_ENOSPC once failed */
	int queued;           /* on a ticket list */
	int priority;         /* on priority_tickets */
	int kind;             /* SPACE_DATA / SPACE_META */
	uint64_t seq;         /* queue order, for traces */
	simtime_t t_queued, t_done;
	waitq wait;           /* the reserving task parks here */
	struct space_ticket *prev, *next;
} space_ticket;

typedef struct ticket_list {
	space_ticket *head, *tail;
	uint64_t n;
} ticket_list;

struct space_ctl;

/* One space_info (struct btrfs_space_info, reduced). */
typedef struct space_info {
	int kind;
	struct space_ctl *sc;
	uint64_t total_bytes;    /* bytes in allocated chunks */
	uint64_t bytes_used;     /* allocated extents */
	uint64_t bytes_reserved; /* allocated, not yet referenced */
	uint64_t bytes_pinned;   /* freed in the running transaction */
	uint64_t bytes_readonly;
	uint64_t bytes_may_use;  /* reservations not yet allocated */
	uint64_t reclaim_size;   /* sum of queued tickets' bytes */
	uint64_t tickets_id;     /* bumped per grant / failure */
	ticket_list tickets, priority_tickets;
	int flush;               /* the async reclaim worker is running */
	int preempt;             /* a preemptive reclaim was asked for */
	int full;                /* no more chunks can be allocated */
	/* statistics */
	uint64_t reserves, reserves_fit, reserves_overcommit, reserves_enospc;
	uint64_t tickets_queued, tickets_granted, tickets_failed;
	uint64_t ticket_wait_ns, ticket_wait_max_ns;
	uint64_t peak_tickets, peak_reclaim_size, peak_may_use;
	uint64_t preempt_kicks;
	uint64_t released_bytes;
} space_info;

/* A block reserve (struct btrfs_block_rsv, reduced). */
typedef struct block_rsv {
	uint64_t size;     /* wanted */
	uint64_t reserved; /* held (counted in bytes_may_use) */
	int kind;          /* space_info it draws on */
	int full;
} block_rsv;

/* An inode's delalloc metadata reservation: its block_rsv plus the two
 * numbers that size it (btrfs_inode.outstanding_extents, csum_bytes). */
typedef struct inode_rsv {
	block_rsv rsv;
	uint32_t outstanding_extents;
	uint64_t csum_bytes;
} inode_rsv;

typedef struct space_ctl {
	sim *sim;
	uint32_t nodesize, sectorsize;
	int meta_factor;          /* metadata RAID factor: 1 single, 2 dup/raid1 */
	/* Unallocated device bytes (fs_info->free_chunk_space): from the fn
	 * when set, else the field (kept by space_add_chunk). */
	uint64_t unallocated;
	uint64_t (*unallocated_fn)(void *ctx);
	void *unallocated_ctx;
	space_info info[SPACE_KINDS];
	/* Wake the async reclaim worker of si at time `at` (reclaim.c). */
	void (*kick)(void *ctx, space_info *si, simtime_t at);
	void *kick_ctx;
	uint64_t ticket_seq;
	int ncpus;                /* num_online_cpus, for the reclaim target */
	/* sim series ids */
	int ser_tickets, ser_reclaim, ser_may_use, ser_data_tickets;
	int trace_ticket, trace_grant;
} space_ctl;

/* Set up both space_infos with no chunks; nodesize 16 KiB. */
void space_init(space_ctl *sc, sim *s);

/* ---- sizes btrfs reserves (ctree.h / delalloc-space.c) */
/* btrfs_calc_insert_metadata_size: nodesize * MAX_LEVEL * 2 per item. */
uint64_t space_insert_metadata_size(const space_ctl *sc, uint64_t items);
/* btrfs_calc_metadata_size: nodesize * MAX_LEVEL per item. */
uint64_t space_metadata_size(const space_ctl *sc, uint64_t items);
/* btrfs_csum_bytes_to_leaves: csum leaves covering `bytes` of data. */
uint64_t space_csum_leaves(const space_ctl *sc, uint64_t bytes);
/* count_max_extents: extents a delalloc range of `bytes` becomes. */
uint64_t space_count_max_extents(uint64_t bytes);
/* calc_reclaim_items_nr: max(1, to_reclaim / insert_metadata_size(1)). */
uint64_t space_reclaim_items(const space_ctl *sc, uint64_t to_reclaim);

/* ---- counters and the overcommit rule */
/* btrfs_space_info_used: used + reserved + pinned + readonly (+ may_use). */
uint64_t space_used(const space_info *si, int with_may_use);
/* calc_available_free_space: unallocated / RAID factor, then /8 for
 * FLUSH_ALL or /2 otherwise. */
uint64_t space_avail(const space_ctl *sc, const space_info *si, int flush);
/* btrfs_can_overcommit: used + bytes < total + avail; never for data. */
int space_can_overcommit(const space_ctl *sc, const space_info *si,
			 uint64_t bytes, int flush);
/* btrfs_calc_reclaim_metadata_size: how much the async worker should
 * reclaim (reclaim_size plus any overcommit overage; else a threshold
 * target when close to full). ncpus sizes the no-ticket case. */
uint64_t space_reclaim_target(const space_ctl *sc, const space_info *si,
			      int ncpus);

/* ---- reservations and tickets */
/*
 * Reserve `bytes` of kind into bytes_may_use (models __reserve_bytes).
 * A metadata reservation that fits but leaves the space_info above 98%
 * with something to reclaim kicks the worker preemptively
 * (need_do_async_reclaim).
 * Returns 0 when granted now; LAB_ENOSPC for a NO_FLUSH reservation that
 * does not fit; SPACE_WAIT when a ticket was queued in *tk and t parked on
 * tk->wait (the step must return TASK_BLOCKED; after the wake call
 * space_ticket_result()); SPACE_PRIORITY for FLUSH_LIMIT / FLUSH_EVICT:
 * the ticket is on priority_tickets and t runs reclaim_priority_*()
 * itself, then calls space_ticket_result(). t charges the CPU and gives the time; it must be
 * non-NULL unless flush is RESERVE_NO_FLUSH.
 */
int space_reserve(space_ctl *sc, int kind, task *t, uint64_t bytes, int flush,
		  space_ticket *tk);
/* The outcome of a ticket after its waiter was woken: 0 if granted, else
 * LAB_ENOSPC (the ticket is removed if still queued: models the tail of
 * handle_reserve_ticket). Updates the wait statistics. */
int space_ticket_result(space_ctl *sc, space_ticket *tk, simtime_t now);
/* Give bytes back from bytes_may_use, then try to grant tickets; wakeups
 * happen at `at` (models btrfs_space_info_free_bytes_may_use). */
void space_release(space_ctl *sc, int kind, uint64_t bytes, simtime_t at);
/* Grant queued tickets FIFO (priority list first) while they fit; bump
 * tickets_id per grant and wake the waiter at `at` (models
 * btrfs_try_granting_tickets). Returns tickets granted. */
int space_try_grant(space_ctl *sc, space_info *si, simtime_t at);
/* Fail tickets with ENOSPC from the head while nothing changed, stopping
 * at a ticket smaller than the first (models maybe_fail_all_tickets).
 * Returns 1 if tickets_id moved (the worker should go round again). */
int space_fail_tickets(space_ctl *sc, space_info *si, simtime_t at);
/* Sample the series (tickets waiting, reclaim_size, may_use) now. */
void space_sample(space_ctl *sc, space_info *si, simtime_t at);
/* Tickets queued on both lists. */
uint64_t space_tickets_waiting(const space_info *si);

/* ---- allocation-side transitions */
/* Reserved bytes become allocated extents: may_use -= bytes (if
 * from_may_use), used += bytes (btrfs_add_reserved_bytes + update). */
void space_bytes_use(space_ctl *sc, int kind, uint64_t bytes, int from_may_use,
		     simtime_t at);
/* An allocated extent is freed: used -> pinned until the commit. */
void space_bytes_pin(space_ctl *sc, int kind, uint64_t bytes);
/* The commit unpins: pinned bytes become free; grant tickets. */
void space_bytes_unpin(space_ctl *sc, int kind, uint64_t bytes, simtime_t at);
/* A new chunk of `bytes` for kind: total grows, the unallocated field
 * shrinks by bytes times the RAID factor; grant tickets. */
void space_add_chunk(space_ctl *sc, int kind, uint64_t bytes, simtime_t at);

/* bytes of a reservation became an allocated extent (the may_use part of
 * btrfs_add_reserved_bytes; bytes_reserved itself comes from the
 * allocator through space_sync_alloc). Not counted as released. */
void space_may_use_consume(space_ctl *sc, int kind, uint64_t bytes);

/* ---- wiring to the allocator (alloc.h) */
struct alloc_ctl;
/* Mirror the allocator's chunks and extents into both space_infos:
 * total_bytes, bytes_used, bytes_reserved (allocated, item not yet
 * inserted) and bytes_pinned from its counters, the
 * unallocated field from the device bytes not in a chunk; then grant any
 * ticket that now fits. Call after a commit (unpin) and after chunk or
 * extent allocations. Reservations (may_use) are left alone. */
void space_sync_alloc(space_ctl *sc, const struct alloc_ctl *a, simtime_t at);
/* An unallocated_fn reading an alloc_ctl (ctx) live. */
uint64_t space_alloc_unallocated(void *alloc_ctl);

/* ---- block reserves (block-rsv.c) */
void space_rsv_init(block_rsv *rsv, int kind);
/* btrfs_block_rsv_add_bytes: reserved += bytes (and size if update_size). */
void space_rsv_add(block_rsv *rsv, uint64_t bytes, int update_size);
/* block_rsv_release_bytes: size -= bytes (UINT64_MAX: all), give any
 * reserved beyond size back to the space_info. Returns bytes released. */
uint64_t space_rsv_release(space_ctl *sc, block_rsv *rsv, uint64_t bytes,
			   simtime_t at);
/* A tree block of `bytes` is allocated against rsv (btrfs_use_block_rsv
 * -> btrfs_block_rsv_use_bytes, then btrfs_add_reserved_bytes takes it
 * out of bytes_may_use). 0, or LAB_ENOSPC if rsv holds less (the kernel
 * then falls back to the global reserve; nothing is taken here). */
int space_rsv_use(space_ctl *sc, block_rsv *rsv, uint64_t bytes);
/* Reserve bytes into rsv (btrfs_block_rsv_add). 0 / SPACE_WAIT / LAB_E*.
 * After SPACE_WAIT, call space_rsv_reserve_finish() once woken. */
int space_rsv_reserve(space_ctl *sc, block_rsv *rsv, task *t, uint64_t bytes,
		      int flush, space_ticket *tk);
int space_rsv_reserve_finish(space_ctl *sc, block_rsv *rsv, space_ticket *tk,
			     simtime_t now);
/* A transaction handle for `items` items reserves
 * insert_metadata_size(items) (btrfs_start_transaction: a create's 5 items
 * are 1.25 MiB, held until the handle ends: space_rsv_release(UINT64_MAX)). */
int space_trans_reserve(space_ctl *sc, block_rsv *rsv, task *t, uint64_t items,
			int flush, space_ticket *tk);

/* ---- the inode's delalloc reservation (delalloc-space.c) */
void space_inode_rsv_init(inode_rsv *ir);
/* What a buffered write of num_bytes reserves up front
 * (calc_inode_reservations): insert_metadata_size(extents + csum leaves)
 * + metadata_size(1) for the inode update. */
uint64_t space_delalloc_calc(const space_ctl *sc, uint64_t num_bytes);
/*
 * btrfs_delalloc_reserve_metadata for a buffered write of num_bytes:
 * reserve, then count the extents and csum bytes and resize the rsv.
 * 0 / LAB_ENOSPC / SPACE_WAIT (then space_delalloc_reserve_finish()).
 */
int space_delalloc_reserve(space_ctl *sc, inode_rsv *ir, task *t,
			   uint64_t num_bytes, int flush, space_ticket *tk);
int space_delalloc_reserve_finish(space_ctl *sc, inode_rsv *ir,
				  uint64_t num_bytes, space_ticket *tk,
				  simtime_t now);
/* btrfs_delalloc_release_extents: the write copied its pages; drop the
 * extents it counted (a merge with the neighbour range leaves fewer) and
 * give back what the rsv no longer needs. */
void space_delalloc_release_extents(space_ctl *sc, inode_rsv *ir,
				    uint64_t num_bytes, simtime_t at);
/* btrfs_mod_outstanding_extents: +1 per ordered extent added, -1 per
 * ordered extent removed, +-n when delalloc ranges split or merge; the rsv
 * is resized and any excess released. */
void space_delalloc_mod_extents(space_ctl *sc, inode_rsv *ir, int64_t delta,
				simtime_t at);
/* btrfs_delalloc_release_metadata: num_bytes of csums were inserted (the
 * ordered extent finished); resize and release the excess. */
void space_delalloc_release_metadata(space_ctl *sc, inode_rsv *ir,
				     uint64_t num_bytes, simtime_t at);
/* The rsv size for the inode's current counts
 * (btrfs_calculate_inode_block_rsv_size). */
uint64_t space_inode_rsv_size(const space_ctl *sc, const inode_rsv *ir);

/*
 * Invariants of both space_infos: ticket lists well linked with their
 * counts, every queued ticket flagged and wanting bytes, reclaim_size ==
 * the sum of queued tickets, a queued normal ticket implies the worker
 * was kicked (flush set). ctx is the space_ctl; fs may be NULL, else the
 * failures are reported with check_report(). Returns failures found (a
 * check_fn: register it with check_register()).
 */
struct fs_info;
int space_check(struct fs_info *fs, void *ctx);

/* The space_infos, tickets and statistics as a JSON object. */
void space_json(const space_ctl *sc, strbuf *out);

#endif /* SPACE_H */
