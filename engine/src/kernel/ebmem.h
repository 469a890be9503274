/*
 * ebmem.h - the memory behind extent buffers: allocating a 16 KiB extent
 * buffer (an eb struct from its slab plus 4 order-0 pages, GFP_NOFS) and
 * cloning a leaf into one, with a latency that depends on memory pressure.
 *
 * Models __alloc_extent_buffer + alloc_eb_folio_array (6.8-era extent_io.c)
 * as used by btrfs_clone_extent_buffer and alloc_dummy_extent_buffer.
 *
 * Latency. Each page allocation takes the fast path (the per-cpu free
 * lists: ~a hundred ns) unless free memory is low: then, with a
 * probability that rises with the share of the simulated RAM held by
 * dirty and cached pages, the allocator enters direct reclaim /
 * compaction, whose duration is lognormal with a heavy tail (median and
 * p99 are configuration, [estimate] defaults in costs.h). A slow-path
 * allocation may also fail (GFP_NOFS without NOFAIL): the caller decides
 * whether that is tolerated (the patch-001 scratch eb) or retried.
 *
 * Determinism: the draws come from a PRNG seeded once from the sim's
 * stream when the allocator is created, so the allocator's sequence does
 * not depend on how other subsystems interleave their own draws.
 *
 * Also here: lhist, a fixed-size log-bucket latency histogram (max exact,
 * quantiles to ~9%) shared by the log tree and send/receive.
 */
#ifndef EBMEM_H
#define EBMEM_H

#include <stdint.h>

#include "btree.h"
#include "sim.h"
#include "strbuf.h"

/* ---- latency histogram: 8 buckets per power of two, 1 ns .. ~2^40 ns */
#define LHIST_SUB 8
#define LHIST_OCT 42
typedef struct lhist {
	uint64_t n;
	uint64_t sum_ns;
	uint64_t max_ns;
	uint64_t min_ns;
	uint32_t b[LHIST_OCT * LHIST_SUB];
} lhist;

void lhist_init(lhist *h);
void lhist_add(lhist *h, uint64_t ns);
/* The q-quantile (0 <= q <= 1): the upper edge of the bucket holding it,
 * capped at the exact maximum; 0 when empty. */
uint64_t lhist_quantile(const lhist *h, double q);
double lhist_mean(const lhist *h);
/* {"n","mean_ns","p50_ns","p90_ns","p99_ns","max_ns","buckets":[[lo_ns,count]...]} */
void lhist_json(const lhist *h, strbuf *out);

/* ---- the allocator */
typedef struct ebmem_cfg {
	uint64_t ram_bytes;     /* simulated RAM */
	double watermark;       /* share of RAM in use under which no page
				 * allocation enters direct reclaim */
	double slow_p_max;      /* per-page probability of direct reclaim
				 * when dirty + cached fill the RAM */
	double slow_median_ns;  /* direct reclaim / compaction time: median */
	double slow_p99_ns;     /* ... and 99th percentile (lognormal) */
	double fail_p;          /* probability a slow-path allocation fails */
} ebmem_cfg;

/* Defaults from costs.h (all [estimate]). */
void ebmem_cfg_default(ebmem_cfg *c);
/* Check a configuration: LAB_EINVAL / LAB_ERANGE on a bad value. */
int ebmem_cfg_check(const ebmem_cfg *c);

/* An extent buffer detached from any tree: a clone of a leaf or a dummy
 * (the scratch eb of patch 001). It holds a copy of the leaf's items. */
typedef struct ebmem_eb {
	uint64_t id;          /* allocation sequence number */
	int dummy;            /* 1: alloc_dummy_extent_buffer, 0: a clone */
	int nitems, cap;
	uint32_t used;        /* leaf bytes copied */
	uint64_t src_bytenr;  /* leaf last copied in (0: none) */
	bt_item *items;
	struct ebmem_eb *next_free;  /* on ebmem.eb_free */
} ebmem_eb;

typedef struct ebmem {
	sim *sim;
	ebmem_cfg cfg;
	prng rng;
	double sigma, mu;            /* slow-path lognormal */
	uint64_t dirty_bytes, cached_bytes; /* set by the data path */
	/* optional probe, called before each allocation to refresh usage */
	void (*probe)(void *ctx, uint64_t *dirty, uint64_t *cached);
	void *probe_ctx;
	uint64_t live_ebs;
	uint64_t next_id;
	/* statistics */
	uint64_t allocs, clones, copies, frees;
	uint64_t slow_pages, fast_pages, fails;
	uint64_t data_pages, data_slow;  /* ebmem_pages: page cache pages */
	uint64_t data_stall_ns;
	lhist lat;                   /* whole-eb allocation latency */
	lhist slow_lat;              /* each direct reclaim, per page */
	int c_slow, s_pressure;      /* sim counter / series ids */
	/* freed ebs kept with their item arrays for the next one (a log
	 * copies a leaf-sized array per fsync: malloc's slow path) */
	ebmem_eb *eb_free;
	int n_eb_free;
} ebmem;

int ebmem_create(sim *s, const ebmem_cfg *cfg, ebmem **out);
void ebmem_destroy(ebmem *m);

/* Tell the allocator how much of the RAM dirty and cached pages hold. */
void ebmem_set_usage(ebmem *m, uint64_t dirty_bytes, uint64_t cached_bytes);
/* The share of RAM in use (dirty + cached + live extent buffers), [0,1]. */
double ebmem_pressure(const ebmem *m);
/* Per-page probability of direct reclaim at the current pressure. */
double ebmem_slow_prob(const ebmem *m);

/*
 * Allocate an extent buffer's memory (slab object + 4 pages). The latency
 * is charged to t (fast path as CPU, direct reclaim as a wait) or, with
 * t == NULL, only reported. *lat_ns (may be NULL) receives it. Returns 0
 * or LAB_ENOMEM (the allocation failed: *out is NULL, the time spent in
 * reclaim is still charged). Models alloc_dummy_extent_buffer.
 */
int ebmem_alloc(ebmem *m, task *t, ebmem_eb **out, uint64_t *lat_ns);
/* Allocate and copy a leaf into it (models btrfs_clone_extent_buffer).
 * Never fails: the clone path retries until it gets its pages
 * (__GFP_NOFAIL for the struct; page failures retry after reclaim). */
int ebmem_clone(ebmem *m, task *t, const bt_node *leaf, ebmem_eb **out,
		uint64_t *lat_ns);
/* Copy a leaf into an existing eb (copy_extent_buffer_full), for a caller
 * that will read only slots [first, last) of the copy: the time charged
 * is the whole 16 KiB copy's (the kernel copies the whole buffer), but the
 * model keeps only those items (at their slot numbers; the others are not
 * there). */
int ebmem_copy_slots(ebmem *m, task *t, ebmem_eb *eb, const bt_node *leaf, int first, int last);
int ebmem_clone_slots(ebmem *m, task *t, const bt_node *leaf, int first, int last,
		      ebmem_eb **out, uint64_t *lat_ns);
void ebmem_free(ebmem *m, ebmem_eb *eb);
/*
 * The page cache pages of a buffered write (prepare_pages with
 * btrfs_alloc_write_mask: GFP_NOFS, no __GFP_NORETRY): each of npages
 * enters direct reclaim with the same per-page probability as an eb's
 * pages, from the same stream; only the reclaim time is charged to t (a
 * wait: the fast path is in the write's own CPU cost). Returns the ns
 * waited. (A read's readahead pages are __GFP_NORETRY: they fail rather
 * than stall, and are not drawn here.)
 */
uint64_t ebmem_pages(ebmem *m, task *t, uint64_t npages);

/* {"cfg":{...},"pressure","slow_prob","allocs","clones","slow_pages",
 *  "fails","live","latency":lhist} */
void ebmem_details_json(const ebmem *m, strbuf *out);

#endif /* EBMEM_H */
