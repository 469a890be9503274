/*
 * emap.c - the extent map tree as a sorted array (see emap.h).
 */
#include "emap.h"

#include <stdlib.h>
#include <string.h>

#include "eio.h"
#include "lab.h"

void emap_init(emap_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void emap_destroy(emap_tree *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

void emap_clear(emap_tree *t)
{
	t->n = 0;
}

/* Index of the first map whose end is > off (n if none). */
static uint64_t first_ending_after(const emap_tree *t, uint64_t off)
{
	uint64_t lo = 0, hi = t->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start + t->v[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int emap_insert(emap_tree *t, uint64_t start, uint64_t len, uint64_t block_start)
{
	uint64_t i = first_ending_after(t, start);
	uint64_t j = i;
	while (j < t->n && t->v[j].start < start + len)
		j++;
	/* maps [i, j) overlap the new one: replaced */
	if (j == i) {
		if (t->n == t->cap) {
			uint64_t nc = t->cap ? t->cap * 2 : 64;
			extent_map *nv = realloc(t->v, nc * sizeof(*nv));
			if (!nv)
				return LAB_ENOMEM;
			t->v = nv;
			t->cap = nc;
		}
		memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof(*t->v));
		t->n++;
	} else if (j > i + 1) {
		memmove(t->v + i + 1, t->v + j, (t->n - j) * sizeof(*t->v));
		t->n -= j - i - 1;
	}
	t->v[i].start = start;
	t->v[i].len = len;
	t->v[i].block_start = block_start;
	return 0;
}

int64_t emap_lookup(emap_tree *t, uint64_t start, uint64_t len, uint64_t *nodes)
{
	uint64_t d = eio_depth(t->n);
	t->lookups++;
	t->nodes_visited += d;
	if (nodes)
		*nodes += d;
	uint64_t i = first_ending_after(t, start);
	if (i < t->n && t->v[i].start < start + len)
		return (int64_t)i;
	return -1;
}

int64_t emap_next(const emap_tree *t, int64_t i)
{
	return (i >= 0 && (uint64_t)i + 1 < t->n) ? i + 1 : -1;
}

void emap_drop_from(emap_tree *t, uint64_t off)
{
	uint64_t i = first_ending_after(t, off);
	if (i < t->n && t->v[i].start < off) {
		t->v[i].len = off - t->v[i].start;
		i++;
	}
	t->n = i;
}
