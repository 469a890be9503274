/*
 * emap.c - the extent map tree as a list of sorted chunks (see emap.h).
 */
#include "emap.h"

#include <stdlib.h>
#include <string.h>

#include "eio.h"
#include "lab.h"
#include "labmem.h"

static const emap_pos NOPOS = {-1, 0};

void emap_init(emap_tree *t)
{
	memset(t, 0, sizeof(*t));
}

void emap_set_pool(emap_tree *t, struct lab_pool *pool)
{
	t->pool = pool;
}

static int chunk_pooled(const emap_tree *t, const emap_chunk *ch)
{
	return t->pool && ch->cap == EMAP_SMALL;
}

static void chunk_free(emap_tree *t, emap_chunk *ch)
{
	if (chunk_pooled(t, ch))
		lab_pool_free(t->pool, ch);
	else
		free(ch);
}

void emap_clear(emap_tree *t)
{
	for (uint64_t i = 0; i < t->nc; i++)
		chunk_free(t, t->c[i]);
	t->nc = 0;
	t->n = 0;
}

void emap_destroy(emap_tree *t)
{
	emap_clear(t);
	if (t->c != &t->c1)
		free(t->c);
	struct lab_pool *pool = t->pool;
	memset(t, 0, sizeof(*t));
	t->pool = pool;
}

static uint64_t em_end(const extent_map *m)
{
	return m->start + m->len;
}

static uint64_t chunk_end(const emap_tree *t, uint64_t ci)
{
	const emap_chunk *ch = t->c[ci];
	return em_end(&ch->v[ch->n - 1]);
}

/* Whether chunk ci is the first whose last map ends after off. */
static int chunk_is_first_after(const emap_tree *t, uint64_t ci, uint64_t off)
{
	return ci < t->nc && chunk_end(t, ci) > off && (ci == 0 || chunk_end(t, ci - 1) <= off);
}

/* Position of the first map whose end is > off (ci == nc if none). */
static emap_pos first_ending_after(emap_tree *t, uint64_t off)
{
	/*
	 * Writes append and reads, writeback and inserts walk a file forward,
	 * so the answer is mostly past the last map, or in the chunk of the
	 * previous answer or the next one: a binary search over the chunks
	 * costs a cache miss per probe on a large file. The hint is only a
	 * guess, checked against the chunks every time.
	 */
	emap_pos p = {(int64_t)t->nc, 0};
	if (t->nc == 0 || chunk_end(t, t->nc - 1) <= off)
		return p;
	uint64_t lo;
	if (chunk_is_first_after(t, t->hint, off)) {
		lo = t->hint;
	} else if (chunk_is_first_after(t, t->hint + 1, off)) {
		lo = t->hint + 1;
	} else {
		uint64_t hi = t->nc;
		lo = 0;
		while (lo < hi) { /* first chunk whose last map ends after off */
			uint64_t mid = lo + (hi - lo) / 2;
			if (chunk_end(t, mid) <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
	}
	p.ci = (int64_t)lo;
	t->hint = lo;
	const emap_chunk *ch = t->c[lo];
	/* the same walk within the chunk: the previous map, or the next */
	for (uint32_t j = t->hint_j; j <= t->hint_j + 1; j++) {
		if (j < ch->n && em_end(&ch->v[j]) > off && (j == 0 || em_end(&ch->v[j - 1]) <= off)) {
			p.j = t->hint_j = j;
			return p;
		}
	}
	uint32_t a = 0, b = ch->n;
	while (a < b) {
		uint32_t mid = a + (b - a) / 2;
		if (em_end(&ch->v[mid]) <= off)
			a = mid + 1;
		else
			b = mid;
	}
	p.j = t->hint_j = a;
	return p;
}

/* Remove the map at p (the chunk is freed when it empties). */
static void erase_at(emap_tree *t, emap_pos p)
{
	emap_chunk *ch = t->c[p.ci];
	memmove(ch->v + p.j, ch->v + p.j + 1, (ch->n - p.j - 1) * sizeof(extent_map));
	ch->n--;
	t->n--;
	if (ch->n == 0) {
		chunk_free(t, ch);
		memmove(t->c + p.ci, t->c + p.ci + 1, (t->nc - (uint64_t)p.ci - 1) * sizeof(*t->c));
		t->nc--;
	}
}

/* A chunk with room for cap maps. */
static emap_chunk *chunk_new(emap_tree *t, uint32_t cap)
{
	emap_chunk *ch = t->pool && cap == EMAP_SMALL ? lab_pool_zalloc(t->pool)
						      : lab_malloc(sizeof(*ch) + cap * sizeof(extent_map));
	if (ch) {
		ch->n = 0;
		ch->cap = cap;
	}
	return ch;
}

/* Make room for a chunk of cap maps at index ci. */
static int chunk_insert(emap_tree *t, uint64_t ci, uint32_t cap)
{
	if (t->cap == 0) {
		/* most trees never hold a second chunk */
		t->c = &t->c1;
		t->cap = 1;
	}
	if (t->nc == t->cap) {
		uint64_t nc = t->cap * 2;
		emap_chunk **n;
		if (t->c == &t->c1) {
			n = lab_malloc(nc * sizeof(*n));
			if (n)
				n[0] = t->c1;
		} else {
			n = lab_realloc(t->c, nc * sizeof(*n));
		}
		if (!n)
			return LAB_ENOMEM;
		t->c = n;
		t->cap = nc;
	}
	emap_chunk *ch = chunk_new(t, cap);
	if (!ch)
		return LAB_ENOMEM;
	memmove(t->c + ci + 1, t->c + ci, (t->nc - ci) * sizeof(*t->c));
	t->c[ci] = ch;
	t->nc++;
	return 0;
}

int emap_insert(emap_tree *t, uint64_t start, uint64_t len, uint64_t block_start)
{
	/* drop the maps the new one overlaps */
	for (;;) {
		emap_pos p = first_ending_after(t, start);
		if ((uint64_t)p.ci >= t->nc || t->c[p.ci]->v[p.j].start >= start + len)
			break;
		erase_at(t, p);
	}
	emap_pos p = first_ending_after(t, start);
	uint64_t ci = (uint64_t)p.ci;
	uint32_t j = p.j;
	if (t->nc == 0) {
		if (chunk_insert(t, 0, EMAP_SMALL))
			return LAB_ENOMEM;
		ci = 0;
		j = 0;
	} else if (ci == t->nc) {
		/* after every map: the end of the last chunk */
		ci = t->nc - 1;
		j = t->c[ci]->n;
	}
	emap_chunk *ch = t->c[ci];
	if (ch->n == ch->cap && ch->cap < EMAP_CHUNK) {
		/* a small chunk grows before it splits */
		uint32_t cap = ch->cap * 2 < EMAP_CHUNK ? ch->cap * 2 : EMAP_CHUNK;
		emap_chunk *g;
		if (chunk_pooled(t, ch)) {
			g = lab_malloc(sizeof(*ch) + cap * sizeof(extent_map));
			if (!g)
				return LAB_ENOMEM;
			memcpy(g, ch, sizeof(*ch) + ch->n * sizeof(extent_map));
			lab_pool_free(t->pool, ch);
		} else {
			g = lab_realloc(ch, sizeof(*ch) + cap * sizeof(extent_map));
			if (!g)
				return LAB_ENOMEM;
		}
		g->cap = cap;
		t->c[ci] = ch = g;
	}
	if (ch->n == EMAP_CHUNK) {
		/* split: the upper half moves to a new chunk */
		if (chunk_insert(t, ci + 1, EMAP_CHUNK))
			return LAB_ENOMEM;
		emap_chunk *hi = t->c[ci + 1];
		uint32_t half = EMAP_CHUNK / 2;
		memcpy(hi->v, ch->v + half, (EMAP_CHUNK - half) * sizeof(extent_map));
		hi->n = EMAP_CHUNK - half;
		ch->n = half;
		if (j > half) {
			ch = hi;
			j -= half;
		}
	}
	memmove(ch->v + j + 1, ch->v + j, (ch->n - j) * sizeof(extent_map));
	ch->v[j] = (extent_map){start, len, block_start};
	ch->n++;
	t->n++;
	return 0;
}

emap_pos emap_lookup(emap_tree *t, uint64_t start, uint64_t len, uint64_t *nodes)
{
	uint64_t d = eio_depth(t->n);
	if (nodes)
		*nodes += d;
	emap_pos p = first_ending_after(t, start);
	if ((uint64_t)p.ci < t->nc && t->c[p.ci]->v[p.j].start < start + len)
		return p;
	return NOPOS;
}

const extent_map *emap_get(const emap_tree *t, emap_pos p)
{
	if (p.ci < 0 || (uint64_t)p.ci >= t->nc || p.j >= t->c[p.ci]->n)
		return NULL;
	return &t->c[p.ci]->v[p.j];
}

emap_pos emap_next(const emap_tree *t, emap_pos p)
{
	if (p.ci < 0)
		return NOPOS;
	if (p.j + 1 < t->c[p.ci]->n)
		return (emap_pos){p.ci, p.j + 1};
	if ((uint64_t)p.ci + 1 < t->nc)
		return (emap_pos){p.ci + 1, 0};
	return NOPOS;
}

void emap_drop_from(emap_tree *t, uint64_t off)
{
	emap_pos p = first_ending_after(t, off);
	if ((uint64_t)p.ci >= t->nc)
		return;
	emap_chunk *ch = t->c[p.ci];
	if (ch->v[p.j].start < off) {
		ch->v[p.j].len = off - ch->v[p.j].start;
		p.j++;
	}
	t->n -= ch->n - p.j;
	ch->n = p.j;
	uint64_t keep = (uint64_t)p.ci + (ch->n ? 1 : 0);
	if (!ch->n)
		chunk_free(t, ch);
	for (uint64_t i = (uint64_t)p.ci + 1; i < t->nc; i++) {
		t->n -= t->c[i]->n;
		chunk_free(t, t->c[i]);
	}
	t->nc = keep;
}
