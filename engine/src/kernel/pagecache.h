/*
 * pagecache.h - an inode's page cache (one flag byte per 4 KiB page, with
 * counts for dirty-page accounting) and the VFS readahead state machine
 * (mm/readahead.c's ondemand_readahead, 6.1), which the data path drives.
 *
 * A page is present or not; a present page is uptodate or being read
 * (locked), and may be dirty or under writeback. Readahead marks one page
 * of each window PG_READAHEAD: a read that hits it starts the next window
 * asynchronously. Memory: one byte per page of the largest file offset
 * seen (the lab's files are at most a few GiB).
 *
 * Every inode's cache of one file system counts into a pc_global (the
 * node's NR_FILE_PAGES / NR_FILE_DIRTY / NR_WRITEBACK): the memory limit,
 * eviction and dirty throttling of vfs_data.c work on those totals. An
 * inode's clean pages (present, not dirty, under writeback or being
 * read) are the evictable ones; pc_evict_run drops them lowest index
 * first, and the inode's last_use orders inodes for eviction (an LRU of
 * inodes, a simplification of the kernel's per-page LRU lists).
 */
#ifndef PAGECACHE_H
#define PAGECACHE_H

#include <stdint.h>

#include "labmem.h"
#include "sim.h"

#define PC_PAGE 4096ull
#define PC_PAGE_SHIFT 12

enum {
	PG_PRESENT = 1u << 0,
	PG_UPTODATE = 1u << 1,
	PG_DIRTY = 1u << 2,
	PG_WRITEBACK = 1u << 3,
	PG_READAHEAD = 1u << 4,
	PG_LOCKED = 1u << 5, /* being read */
};

/* Flag arrays of up to PC_POOL_MAX pages come from pools, one per size
 * (a power of two from 16): a file system makes and drops one per file,
 * by the ten thousand. */
#define PC_POOL_CLASSES 7
#define PC_POOL_MAX (16u << (PC_POOL_CLASSES - 1))

/* The page cache totals of one file system, in pages. */
typedef struct pc_global {
	uint64_t cached, dirty, writeback;
	uint64_t use_seq; /* last value given to an inode's last_use */
	int pooled;       /* pc_pools_init was called (0: the heap) */
	lab_pool pg_pool[PC_POOL_CLASSES];
} pc_global;

/* Give the flag arrays of g's inodes pools; pc_pools_destroy frees them
 * (after every inode's pc_destroy). */
void pc_pools_init(pc_global *g);
void pc_pools_destroy(pc_global *g);

/* Page indexes and counts are 32-bit (one pc_inode per file: untar holds
 * 226,000): pc_reserve refuses a file of more than PC_MAX_PAGES pages
 * (8 TiB; vfs_io.h caps files at 16 GiB, sparse-cp at 4 GiB). */
#define PC_MAX_PAGES (1u << 31)

typedef struct pc_inode {
	uint8_t *pg;
	pc_global *g;            /* totals to keep (may be NULL) */
	uint32_t npages_cap;
	uint32_t present, dirty, writeback;
	uint32_t evictable;      /* clean pages (see above) */
	uint32_t evict_from;     /* no evictable page below this index */
	uint64_t last_use;       /* pc_global.use_seq of the last access */
	simtime_t dirtied_when; /* when the inode became dirty (0: clean) */
	waitq page_waiters;      /* readers waiting for a page being read */
	uint8_t is_dirty;
} pc_inode;

void pc_init(pc_inode *p);
void pc_destroy(pc_inode *p);
/* pc_reserve's slow path: grow the flags to hold npages. */
int pc_reserve_grow(pc_inode *p, uint64_t npages);
/* Make room for pages [0, npages). 0, LAB_ENOMEM, or LAB_ERANGE past
 * PC_MAX_PAGES. (Inline: every read of a page asks, and the room is
 * mostly there.) */
static inline int pc_reserve(pc_inode *p, uint64_t npages)
{
	return npages <= p->npages_cap ? 0 : pc_reserve_grow(p, npages);
}
static inline uint8_t pc_flags(const pc_inode *p, uint64_t idx)
{
	return idx < p->npages_cap ? p->pg[idx] : 0;
}
/* Whether a page with flags f may be evicted: cached and clean. */
static inline int pc_evictable_flags(uint8_t f)
{
	return (f & PG_PRESENT) && !(f & (PG_DIRTY | PG_WRITEBACK | PG_LOCKED));
}

/* Change one page's flags, keeping the inode's counts, the totals and
 * the lowest evictable index. (Inline: callers pass constant masks, and
 * the counts that cannot change then cost nothing.) */
static inline void pc_set(pc_inode *p, uint64_t idx, uint8_t set, uint8_t clear)
{
	uint8_t o = p->pg[idx];
	uint8_t n = (uint8_t)((o & ~clear) | set);
	pc_global *g = p->g;
	if ((o ^ n) & PG_PRESENT) {
		uint64_t d = (n & PG_PRESENT) ? 1 : (uint64_t)-1;
		p->present += d;
		if (g)
			g->cached += d;
	}
	if ((o ^ n) & PG_DIRTY) {
		uint64_t d = (n & PG_DIRTY) ? 1 : (uint64_t)-1;
		p->dirty += d;
		if (g)
			g->dirty += d;
	}
	if ((o ^ n) & PG_WRITEBACK) {
		uint64_t d = (n & PG_WRITEBACK) ? 1 : (uint64_t)-1;
		p->writeback += d;
		if (g)
			g->writeback += d;
	}
	int eo = pc_evictable_flags(o), en = pc_evictable_flags(n);
	if (eo != en)
		p->evictable += en ? 1 : (uint64_t)-1;
	if (en && idx < p->evict_from)
		p->evict_from = idx;
	p->pg[idx] = n;
}
/* pc_set of each page of [first, first + n) (the counts added once). */
void pc_set_range(pc_inode *p, uint64_t first, uint64_t n, uint8_t set, uint8_t clear);
/* Drop every clean page (drop_caches / unmount); dirty pages stay. */
void pc_drop_clean(pc_inode *p);
/* Record an access to the inode's cache (its place in the inode LRU).
 * (Inline: every read() of a cached page does it.) */
static inline void pc_touch(pc_inode *p)
{
	if (p->g)
		p->last_use = ++p->g->use_seq;
}
/* Evict one run of consecutive clean pages, at most max of them, the
 * lowest-indexed first (models the page half of shrink_folio_list ->
 * remove_mapping for a clean, unlocked file page). Returns the pages
 * evicted (0: none evictable) and sets *first to the run's first index. */
uint64_t pc_evict_run(pc_inode *p, uint64_t max, uint64_t *first);

/* Per-open-file readahead state (struct file_ra_state). */
typedef struct file_ra {
	uint64_t start, size, async_size;
	uint64_t ra_pages;   /* the window's maximum */
	uint64_t prev_index; /* last page read (prev_pos) */
	int valid;
} file_ra;

/* A window to read: pages [start, start + nr), marking `mark` (or
 * UINT64_MAX for none) PG_READAHEAD. */
typedef struct ra_window {
	uint64_t start, nr, mark;
} ra_window;

/* bdi_pages: the device's readahead pages; sequential: posix_fadvise
 * (SEQUENTIAL) doubles the file's window, as generic_fadvise does. */
void ra_init(file_ra *ra, uint64_t bdi_pages, int sequential);
/*
 * A read of req pages at page `index` missed the cache (hit_marker = 0) or
 * found a PG_READAHEAD page (hit_marker = 1). Returns the window to read
 * (nr = 0: nothing). Models ondemand_readahead with its initial window
 * (get_init_ra_size), ramp (get_next_ra_size: x4 below max/16, x2 up to
 * max/2, then max) and the merge of a window that would hit its own
 * marker. next_miss(index) is the first page at or after `index` not in
 * the cache (used when a marker is hit out of step).
 */
ra_window ra_ondemand(file_ra *ra, const pc_inode *pc, uint64_t index,
		      uint64_t req, int hit_marker);

#endif /* PAGECACHE_H */
