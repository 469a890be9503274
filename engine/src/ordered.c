/*
 * ordered.c - ordered extents as a sorted array (see ordered.h).
 */
#include "ordered.h"

#include <stdlib.h>
#include <string.h>

#include "eio.h"
#include "lab.h"

void ordered_init(ordered_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void ordered_destroy(ordered_tree *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
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
	if (t->n == t->cap) {
		uint64_t nc = t->cap ? t->cap * 2 : 64;
		ordered_extent *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return LAB_ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	uint64_t i = first_ending_after(t, file_off);
	memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof(*t->v));
	t->v[i] = (ordered_extent){file_off, len, disk};
	t->n++;
	t->created++;
	return 0;
}

int ordered_remove(ordered_tree *t, uint64_t file_off)
{
	uint64_t i = first_ending_after(t, file_off);
	if (i >= t->n || t->v[i].file_off != file_off)
		return 1;
	memmove(t->v + i, t->v + i + 1, (t->n - i - 1) * sizeof(*t->v));
	t->n--;
	t->completed++;
	return 0;
}

int64_t ordered_lookup_range(ordered_tree *t, uint64_t start, uint64_t len,
			     uint64_t *nodes)
{
	uint64_t d = eio_depth(t->n);
	t->lookups++;
	t->nodes_visited += d;
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
