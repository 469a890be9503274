/*
 * ordered.c - ordered extents as a sorted array (see ordered.h).
 */
#include "ordered.h"

#include <stdlib.h>
#include <string.h>

#include "eio.h"
#include "lab.h"
#include "labmem.h"

void ordered_init(ordered_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void ordered_set_pool(ordered_tree *t, struct lab_pool *pool)
{
	t->pool = pool;
}

static int base_pooled(const ordered_tree *t)
{
	return t->pool && t->cap == ORDERED_SMALL;
}

void ordered_destroy(ordered_tree *t)
{
	if (base_pooled(t))
		lab_pool_free(t->pool, t->base);
	else
		free(t->base);
	struct lab_pool *pool = t->pool;
	memset(t, 0, sizeof(*t));
	t->pool = pool;
}

/* Room for one more extent after v[n - 1]: move the array back to the
 * start of base when a quarter of it is free in front, else grow base. */
static int room_at_end(ordered_tree *t)
{
	uint64_t head = t->base ? (uint64_t)(t->v - t->base) : 0;
	if (head + t->n < t->cap)
		return 0;
	if (head > 0 && head >= t->cap / 4) {
		memmove(t->base, t->v, t->n * sizeof(*t->v));
		t->v = t->base;
		return 0;
	}
	uint64_t nc = t->cap ? t->cap * 2 : ORDERED_SMALL;
	ordered_extent *nb;
	if (t->pool && nc == ORDERED_SMALL) {
		nb = lab_pool_zalloc(t->pool);
	} else if (base_pooled(t)) {
		nb = lab_malloc(nc * sizeof(*nb));
		if (nb) {
			memcpy(nb, t->base, t->cap * sizeof(*nb));
			lab_pool_free(t->pool, t->base);
		}
	} else {
		nb = lab_realloc(t->base, nc * sizeof(*nb));
	}
	if (!nb)
		return LAB_ENOMEM;
	t->v = nb + head;
	t->base = nb;
	t->cap = nc;
	return 0;
}

/* Index of the first extent ending after off. */
static uint64_t first_ending_after(const ordered_tree *t, uint64_t off)
{
	uint64_t lo = 0, hi = t->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].file_off + t->v[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ordered_add(ordered_tree *t, uint64_t file_off, uint64_t len, uint64_t disk)
{
	uint64_t i = first_ending_after(t, file_off);
	if (t->base && t->v > t->base && i < t->n / 2) {
		/* the front is shorter: shift it down one */
		memmove(t->v - 1, t->v, i * sizeof(*t->v));
		t->v--;
	} else {
		if (room_at_end(t))
			return LAB_ENOMEM;
		memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof(*t->v));
	}
	t->v[i] = (ordered_extent){file_off, len, disk};
	t->n++;
	return 0;
}

int ordered_remove(ordered_tree *t, uint64_t file_off)
{
	uint64_t i = first_ending_after(t, file_off);
	if (i >= t->n || t->v[i].file_off != file_off)
		return 1;
	if (i < t->n / 2) {
		/* the front is shorter: shift it up one */
		memmove(t->v + 1, t->v, i * sizeof(*t->v));
		t->v++;
	} else {
		memmove(t->v + i, t->v + i + 1, (t->n - i - 1) * sizeof(*t->v));
	}
	t->n--;
	if (t->n == 0)
		t->v = t->base;
	t->completed++;
	return 0;
}

int64_t ordered_lookup_range(ordered_tree *t, uint64_t start, uint64_t len,
			     uint64_t *nodes)
{
	uint64_t d = eio_depth(t->n);
	if (nodes)
		*nodes += d;
	uint64_t i = first_ending_after(t, start);
	if (i < t->n && t->v[i].file_off < start + len)
		return (int64_t)i;
	return -1;
}

int64_t ordered_first_overlap(const ordered_tree *t, uint64_t start, uint64_t len)
{
	uint64_t i = first_ending_after((ordered_tree *)t, start);
	if (i < t->n && t->v[i].file_off < start + len)
		return (int64_t)i;
	return -1;
}
