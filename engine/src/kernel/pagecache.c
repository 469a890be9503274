/*
 * pagecache.c - page flags with counts, and the readahead window logic.
 */
#include "pagecache.h"

#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labmem.h"

void pc_init(pc_inode *p)
{
	memset(p, 0, sizeof(*p));
}

void pc_pools_init(pc_global *g)
{
	for (int k = 0; k < PC_POOL_CLASSES; k++) {
		size_t size = 16u << k;
		lab_pool_init(&g->pg_pool[k], size, size < 1024 ? 16384 / size : 16);
	}
	g->pooled = 1;
}

void pc_pools_destroy(pc_global *g)
{
	for (int k = 0; k < PC_POOL_CLASSES; k++)
		lab_pool_destroy(&g->pg_pool[k]);
	g->pooled = 0;
}

/* The pool of flag arrays of cap pages (a power of two), or NULL. */
static lab_pool *pg_pool(const pc_inode *p, uint64_t cap)
{
	if (!p->g || !p->g->pooled || cap > PC_POOL_MAX)
		return NULL;
	return &p->g->pg_pool[__builtin_ctzll(cap) - 4];
}

static void pg_free(pc_inode *p)
{
	lab_pool *pool = pg_pool(p, p->npages_cap);
	if (pool)
		lab_pool_free(pool, p->pg);
	else
		free(p->pg);
}

/* Take the inode's pages out of the totals and free its flags. */
void pc_destroy(pc_inode *p)
{
	if (p->g) {
		p->g->cached -= p->present;
		p->g->dirty -= p->dirty;
		p->g->writeback -= p->writeback;
	}
	if (p->pg)
		pg_free(p);
	memset(p, 0, sizeof(*p));
}

/* pc_reserve when the room is not there yet */
int pc_reserve_grow(pc_inode *p, uint64_t npages)
{
	if (npages <= p->npages_cap)
		return 0;
	if (npages > PC_MAX_PAGES)
		return LAB_ERANGE;
	uint64_t nc = p->npages_cap ? p->npages_cap : 16;
	while (nc < npages)
		nc *= 2;
	lab_pool *pool = pg_pool(p, nc);
	uint8_t *n;
	if (pool || (p->pg && pg_pool(p, p->npages_cap))) {
		n = pool ? lab_pool_zalloc(pool) : lab_malloc(nc);
		if (!n)
			return LAB_ENOMEM;
		if (p->pg) {
			memcpy(n, p->pg, p->npages_cap);
			pg_free(p);
		}
		if (!pool)
			memset(n + p->npages_cap, 0, nc - p->npages_cap);
	} else {
		n = lab_realloc(p->pg, nc);
		if (!n)
			return LAB_ENOMEM;
		memset(n + p->npages_cap, 0, nc - p->npages_cap);
	}
	p->pg = n;
	p->npages_cap = (uint32_t)nc; /* a power of two <= PC_MAX_PAGES */
	return 0;
}

/* Pages from idx (< end) on with the flags of page idx: how many. */
static uint64_t same_run(const uint8_t *pg, uint64_t idx, uint64_t end)
{
	uint8_t o = pg[idx];
	uint64_t k = 1;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* eight flag bytes at a time: the first that differs is the lowest
	 * set byte of the xor */
	const uint64_t o8 = o * 0x0101010101010101ull;
	while (idx + k + 8 <= end) {
		uint64_t w;
		memcpy(&w, pg + idx + k, sizeof w);
		if (w != o8)
			return k + ((uint64_t)__builtin_ctzll(w ^ o8) >> 3);
		k += 8;
	}
#endif
	while (idx + k < end && pg[idx + k] == o)
		k++;
	return k;
}

void pc_set_range(pc_inode *p, uint64_t first, uint64_t n, uint8_t set, uint8_t clear)
{
	/* deltas wrap as pc_set's (uint64_t)-1 steps do */
	uint64_t dp = 0, dd = 0, dw = 0, de = 0, ef = p->evict_from;
	uint8_t *pg = p->pg;
	/* by runs of pages with the same flags (a write's or a writeback's
	 * pages mostly all have the same) */
	for (uint64_t idx = first, end = first + n; idx < end;) {
		uint8_t o = pg[idx];
		uint64_t k = same_run(pg, idx, end);
		uint8_t nw = (uint8_t)((o & ~clear) | set);
		uint8_t x = o ^ nw;
		if (x & PG_PRESENT)
			dp += (nw & PG_PRESENT) ? k : (uint64_t)0 - k;
		if (x & PG_DIRTY)
			dd += (nw & PG_DIRTY) ? k : (uint64_t)0 - k;
		if (x & PG_WRITEBACK)
			dw += (nw & PG_WRITEBACK) ? k : (uint64_t)0 - k;
		int eo = pc_evictable_flags(o), en = pc_evictable_flags(nw);
		if (eo != en)
			de += en ? k : (uint64_t)0 - k;
		if (en && idx < ef)
			ef = idx;
		if (nw != o)
			memset(pg + idx, nw, k);
		idx += k;
	}
	p->present += dp;
	p->dirty += dd;
	p->writeback += dw;
	p->evictable += de;
	p->evict_from = ef;
	pc_global *g = p->g;
	if (g) {
		g->cached += dp;
		g->dirty += dd;
		g->writeback += dw;
	}
}

/* The flag bits that decide whether a page is evictable (it is when,
 * of these, only PG_PRESENT is set), and a byte of ones in each lane. */
#define PC_EVICT_BITS (PG_PRESENT | PG_DIRTY | PG_WRITEBACK | PG_LOCKED)
#define PC_ONES8 0x0101010101010101ull

uint64_t pc_evict_run(pc_inode *p, uint64_t max, uint64_t *first)
{
	uint64_t i = p->evict_from, cap = p->npages_cap;
	const uint8_t *pg = p->pg;
	if (!p->evictable || !max)
		return 0;
	/*
	 * Eight flag bytes at a time (page flags are scanned a lot while the
	 * cache is at its limit): x has a zero byte for each evictable page;
	 * the lowest byte flagged by the has-zero-byte test is exact.
	 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (i + 8 <= cap) {
		uint64_t w;
		memcpy(&w, pg + i, sizeof w);
		uint64_t x = (w & (PC_EVICT_BITS * PC_ONES8)) ^ (PG_PRESENT * PC_ONES8);
		uint64_t z = (x - PC_ONES8) & ~x & (0x80 * PC_ONES8);
		if (z) {
			i += (uint64_t)__builtin_ctzll(z) >> 3;
			goto found;
		}
		i += 8;
	}
#endif
	while (i < cap && !pc_evictable_flags(pg[i]))
		i++;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
found:;
#endif
	uint64_t n = 0, lim = cap - i < max ? cap - i : max;
	*first = i;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the run ends at the first page whose byte of x is not zero */
	while (n + 8 <= lim) {
		uint64_t w;
		memcpy(&w, pg + i + n, sizeof w);
		uint64_t x = (w & (PC_EVICT_BITS * PC_ONES8)) ^ (PG_PRESENT * PC_ONES8);
		if (x) {
			n += (uint64_t)__builtin_ctzll(x) >> 3;
			goto counted;
		}
		n += 8;
	}
#endif
	while (n < lim && pc_evictable_flags(pg[i + n]))
		n++;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
counted:
#endif
	/* what pc_set_range(p, i, n, 0, 0xff) does to clean pages: each
	 * leaves the cache and the evictable count; none is dirty or under
	 * writeback, and none becomes evictable */
	memset(p->pg + i, 0, n);
	p->present -= (uint32_t)n;
	p->evictable -= (uint32_t)n;
	if (p->g)
		p->g->cached -= n;
	p->evict_from = i + n;
	return n;
}

void pc_drop_clean(pc_inode *p)
{
	for (uint64_t i = 0; i < p->npages_cap; i++) {
		uint8_t f = p->pg[i];
		if ((f & PG_PRESENT) && !(f & (PG_DIRTY | PG_WRITEBACK | PG_LOCKED)))
			pc_set(p, i, 0, 0xff);
	}
}

void ra_init(file_ra *ra, uint64_t bdi_pages, int sequential)
{
	memset(ra, 0, sizeof(*ra));
	ra->ra_pages = sequential ? 2 * bdi_pages : bdi_pages;
}

/* get_init_ra_size: the first window for a request of `size` pages. */
static uint64_t init_size(uint64_t size, uint64_t max)
{
	uint64_t n = 1;
	while (n < size)
		n <<= 1;
	if (n <= max / 32)
		n *= 4;
	else if (n <= max / 4)
		n *= 2;
	else
		n = max;
	return n;
}

/* get_next_ra_size: the ramp. */
static uint64_t next_size(uint64_t cur, uint64_t max)
{
	if (cur < max / 16)
		return 4 * cur;
	if (cur <= max / 2)
		return 2 * cur;
	return max;
}

static uint64_t next_miss(const pc_inode *pc, uint64_t idx, uint64_t limit)
{
	while (idx < limit && (pc_flags(pc, idx) & PG_PRESENT))
		idx++;
	return idx;
}

ra_window ra_ondemand(file_ra *ra, const pc_inode *pc, uint64_t index,
		      uint64_t req, int hit_marker)
{
	ra_window w = {0, 0, UINT64_MAX};
	uint64_t max = ra->ra_pages;
	if (max == 0)
		return w;
	if (index == 0 || !ra->valid)
		goto initial;
	{
		uint64_t expected = ra->start + ra->size - ra->async_size;
		if (index == expected || index == ra->start + ra->size) {
			ra->start += ra->size;
			ra->size = next_size(ra->size, max);
			ra->async_size = ra->size;
			goto readit;
		}
	}
	if (hit_marker) {
		uint64_t start = next_miss(pc, index + 1, index + 1 + max);
		if (start - index > max)
			return w;
		ra->start = start;
		ra->size = start - index + req;
		ra->size = next_size(ra->size, max);
		ra->async_size = ra->size;
		goto readit;
	}
	if (req > max)
		goto initial;
	if (index - ra->prev_index <= 1)
		goto initial;
	/* random access: read just what was asked */
	w.start = index;
	w.nr = req;
	return w;
initial:
	ra->valid = 1;
	ra->start = index;
	ra->size = init_size(req, max);
	ra->async_size = ra->size > req ? ra->size - req : ra->size;
readit:
	if (index == ra->start && ra->size == ra->async_size) {
		uint64_t add = next_size(ra->size, max);
		if (ra->size + add <= max) {
			ra->async_size = add;
			ra->size += add;
		} else {
			ra->size = max;
			ra->async_size = max >> 1;
		}
	}
	w.start = ra->start;
	w.nr = ra->size;
	w.mark = ra->start + ra->size - ra->async_size;
	return w;
}
