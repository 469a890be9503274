/*
 * eio.h - the extent_io_tree: an inode's ranges of file offsets carrying
 * state bits (LOCKED, DELALLOC, DELALLOC_NEW, UPTODATE, NORESERVE).
 *
 * The kernel keeps `struct extent_state {start, end, state, refs}` records
 * in an rb-tree. Here they live in a treap (a balanced binary search tree
 * with random priorities from a fixed seed) augmented with subtree counts,
 * so that the number of records, and of gaps between them, in any range is
 * known in O(log n): the lseek range lock of a large file can then be
 * charged without walking thousands of records per call (see
 * eio_lock_pass_cost), while the record-by-record operations below are the
 * kernel's algorithms, used for everything that changes the tree.
 *
 * Cost accounting. Every operation adds what it did to an eio_call (root
 * descents, tree nodes visited, records visited, records allocated and
 * freed); eio_call_ns() turns that into CPU time with the constants of
 * costs.h. A root descent is charged eio_depth(n) node visits, the height
 * of a balanced tree of n records: the kernel's rb-tree, not our treap's
 * own path, is what is being priced.
 *
 * Records are refcounted like the kernel's: the tree holds one reference,
 * each cached-state pointer one more; a record taken out of the tree stays
 * allocated until its last reference is dropped (eio_state_put).
 */
#ifndef EIO_H
#define EIO_H

#include <stdint.h>

#include "sim.h"

/* State bits (the subset of extent-io-tree.h the lab uses). */
enum {
	EXTENT_LOCKED = 1u << 0,
	EXTENT_DELALLOC = 1u << 1,
	EXTENT_DELALLOC_NEW = 1u << 2,
	EXTENT_UPTODATE = 1u << 3,
	EXTENT_NORESERVE = 1u << 4,
	EXTENT_DEFRAG = 1u << 5,
};
_Static_assert(EXTENT_DEFRAG <= 0xffffu, "extent_state.bits is 16-bit");

#define EIO_OFF_MAX UINT64_MAX

typedef struct extent_state {
	uint64_t start, end;          /* inclusive range */
	/* treap links and augmentation */
	struct extent_state *left, *right, *parent;
	uint32_t prio;
	uint32_t cnt;                 /* records in this subtree */
	uint32_t adj_cnt;             /* of which adjacent to their predecessor */
	int refs;                     /* tree's own + cached holders */
	/* EXTENT_* (16 bits hold them all: 48 bytes a record on wasm32, with
	 * untar's 290,000 records alive at once) */
	uint16_t bits;
	uint8_t in_tree;
	uint8_t adj;                  /* start == predecessor's end + 1 */
} extent_state;

/* What one operation did; summed into the tree's totals as well. */
typedef struct eio_call {
	uint64_t descents;     /* searches from the root */
	uint64_t nodes;        /* tree nodes visited by those descents */
	uint64_t records;      /* records visited in order */
	uint64_t allocs;       /* records allocated and inserted */
	uint64_t frees;        /* records removed from the tree */
	uint64_t cache_hits;   /* a cached state let the call skip a descent */
	uint64_t cache_misses; /* a cached state was given but not usable */
} eio_call;

#define EIO_COUNTED_BITS 4

/* One per file (untar holds 226,000): pointers, then 32-bit fields,
 * then 64-bit ones, without padding. */
typedef struct eio_tree {
	extent_state *root;
	/* where records come from and go back to: a pool shared by the
	 * trees of one file system (their records are made and dropped by
	 * the million; a pool's are a pointer swap, and go back in bulk when
	 * the file system goes), or NULL for the heap (eio_set_pool) */
	struct lab_pool *pool;
	extent_state *finger;  /* last record a search found (a guess) */
	sim *rec_sim;          /* recording (sim.h): the owner's sim and ids */
	waitq lock_waiters;    /* tasks waiting for a LOCKED range */
	uint32_t nrecords;
	uint32_t rng;          /* treap priorities: a fixed-seed xorshift */
	/* records allocated and not yet freed (each is an allocation of its
	 * own: 2^32 of them would not fit any heap the lab runs in) */
	uint32_t live_alloc;
	/* bytes and records carrying each of the data path's bits (index =
	 * bit number: LOCKED, DELALLOC, DELALLOC_NEW, UPTODATE; the other
	 * bits are not counted) */
	uint32_t recs_with[EIO_COUNTED_BITS];
	uint64_t bytes_with[EIO_COUNTED_BITS];
	int64_t rec_fs, rec_ino;
} eio_tree;

void eio_init(eio_tree *t);
/* Take records from pool (sizeof(extent_state) objects) from now on: set
 * before the first record, and the pool outlives the tree. */
void eio_set_pool(eio_tree *t, struct lab_pool *pool);
/* Free every record (cached holders must have put theirs first, or the
 * records they hold are freed when they put them). */
void eio_destroy(eio_tree *t);
/* Name the tree in recordings (after eio_init): its changes are recorded
 * when s records, as inode ino of data-path instance fs. */
void eio_rec_attach(eio_tree *t, sim *s, int64_t fs, int64_t ino);
/* Recording: list every record (a recording starts). */
void eio_rec_dump(eio_tree *t);

/* Height of a balanced tree holding n records: the node visits of a root
 * descent. */
uint32_t eio_depth(uint64_t n);
/* CPU time (ns) of what a call did, from costs.h. */
uint64_t eio_call_ns(const eio_call *c);
/* *d += *s (inline: every tree operation adds twice). */
static inline void eio_call_add(eio_call *d, const eio_call *s)
{
	d->descents += s->descents;
	d->nodes += s->nodes;
	d->records += s->records;
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->cache_hits += s->cache_hits;
	d->cache_misses += s->cache_misses;
}

/* Drop one reference to a record (a cached state). */
void eio_state_put(eio_tree *t, extent_state *st);
/* Replace *cached with st (taking a reference), dropping the old one. */
void eio_cache_set(eio_tree *t, extent_state **cached, extent_state *st);

/*
 * Set `bits` on [start, end]. Models set_extent_bit (6.1): records at the
 * edges are split, gaps get new records, and after each inserted record or
 * each gap ahead the search restarts from the root (search_again); records
 * that follow each other without a gap are walked in order. If a record in
 * the range carries one of `exclusive` (EXTENT_LOCKED for a range lock),
 * nothing more is set, *failed_start receives that record's start and the
 * function returns 1 (the caller waits and retries from there); else 0.
 * cached (may be NULL) is used as the kernel's cached_state: a hit skips
 * the first descent; when it is empty it receives the first record set.
 */
int eio_set_bits(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits,
		 uint32_t exclusive, uint64_t *failed_start,
		 extent_state **cached, eio_call *c);

/*
 * Clear `bits` on [start, end]. Models __clear_extent_bit: edge records are
 * split, records whose bits become 0 are freed, the others are merged with
 * identical neighbours (never LOCKED ones). The walk is in order after one
 * descent (none if *cached contains start). If `wake` and LOCKED was
 * cleared, tasks waiting on the tree are woken at `now`. cached is
 * consumed (dropped) as unlock_extent_cached does.
 */
void eio_clear_bits(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits,
		    extent_state **cached, eio_call *c, sim *s, simtime_t now);

/*
 * The n calls eio_clear_bits(t, start + i * step, start + (i + 1) * step - 1,
 * bits, NULL, c, s, now), i = 0..n-1, in order (a read bio's completion
 * unlocks its pages one by one): the same tree and the same counts in *c.
 * When one record carrying exactly `bits` starts at `start` and covers
 * the run (each call then splits a piece off its front and frees it) the
 * counts are added up at once; otherwise the calls are made.
 */
void eio_clear_run(eio_tree *t, uint64_t start, uint64_t step, uint64_t n, uint32_t bits,
		   eio_call *c, sim *s, simtime_t now);

/*
 * Bytes in [*start, search_end] carrying all of `bits`, stopping at
 * max_bytes; with contig, only the first contiguous run counts. *start is
 * moved to the first such byte. Models count_range_bits. With cached ==
 * NULL every call descends from the root (6.1); with a cached pointer
 * (6.2, patch 6/9) the walk starts at *cached if it contains *start, or
 * if it begins after *start and either has no predecessor or its
 * predecessor starts at or before *start (then at the predecessor: the
 * first record ending at or after *start is one of the two); otherwise it
 * descends. The last record visited is stored back in *cached, with a
 * reference.
 */
uint64_t eio_count_range_bits(eio_tree *t, uint64_t *start, uint64_t search_end,
			      uint64_t max_bytes, uint32_t bits, int contig,
			      extent_state **cached, eio_call *c);

/* First record at or after `start` (end >= start) carrying any of `bits`.
 * Returns 0 and the range, or 1 if none. Models find_first_extent_bit. */
int eio_find_first_bit(eio_tree *t, uint64_t start, uint32_t bits,
		       uint64_t *out_start, uint64_t *out_end, eio_call *c);

/* Whether any byte of [start, end] carries one of `bits` (no cost). */
int eio_test_any(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits);

/* ---- read-only structure queries (no cost: bookkeeping for the lab) */
/* First record with end >= off, or NULL. */
extent_state *eio_first_from(eio_tree *t, uint64_t off);
extent_state *eio_next(extent_state *st);
extent_state *eio_prev(extent_state *st);

/* Records overlapping [start, end], and how many of those start right
 * where their predecessor (also in the range) ends. O(log n). */
void eio_range_counts(eio_tree *t, uint64_t start, uint64_t end,
		      uint64_t *records, uint64_t *adjacent);

/*
 * What eio_set_bits(LOCKED) followed by eio_clear_bits(LOCKED) over
 * [start, end] would do, in O(log n), without changing the tree: the
 * range lock an lseek takes and drops. Exact (a unit test compares it with
 * the record-by-record pass) when no record in the range is LOCKED. Adds
 * to *lock and *unlock.
 */
void eio_lock_pass_cost(eio_tree *t, uint64_t start, uint64_t end,
			eio_call *lock, eio_call *unlock);

/* Invariant check: order, no overlap, no zero-bit record, no mergeable
 * neighbours, augmentation consistent. Returns failures found. */
int eio_check(const eio_tree *t);

#endif /* EIO_H */
