#include <stdlib.h>
#include <string.h>

#include "labmem.h"

uint64_t lab_oom_events;
uint64_t lab_alloc_count;
uint64_t lab_alloc_fail_at;

/* The reserve: memory held back so that, when the heap runs out in the
 * middle of an event, the event can still finish with consistent
 * structures (the io_tree's split, a B-tree's insert... have no way back
 * half-way). The failure is counted; the run stops at the end of the event
 * (sim_run) and fails with LAB_ENOMEM (lab.c); closing it gives the memory
 * back and the next call re-arms the reserve. Plain malloc: arming is not
 * an allocation of the simulation and its failure is not counted. */
#define RESERVE_BYTES (16u << 20)
static void *reserve;

void lab_reserve_arm(void)
{
	if (!reserve)
		reserve = malloc(RESERVE_BYTES);
}

/* An allocation failed (really, or by the test hook): count it, and give
 * the reserve back so that the caller's retry can succeed. */
static int out_of_memory(void)
{
	lab_oom_events++;
	if (!reserve)
		return 0;
	free(reserve);
	reserve = NULL;
	return 1;
}

/* The test hook: the allocation numbered lab_alloc_fail_at fails as if the
 * heap were exhausted (engine/tests/test_labmem.c walks it over a run). */
static int injected(void)
{
	return ++lab_alloc_count == lab_alloc_fail_at;
}

void *lab_malloc(size_t n)
{
	void *p = injected() ? NULL : malloc(n);
	if (!p && n && out_of_memory())
		p = malloc(n);
	return p;
}

void *lab_calloc(size_t n, size_t size)
{
	void *p = injected() ? NULL : calloc(n, size);
	if (!p && n && size && out_of_memory())
		p = calloc(n, size);
	return p;
}

void *lab_realloc(void *p, size_t n)
{
	void *q = injected() ? NULL : realloc(p, n);
	if (!q && n && out_of_memory())
		q = realloc(p, n);
	return q;
}

void *lab_try_realloc(void *p, size_t n)
{
	return realloc(p, n);
}

char *lab_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = lab_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* ------------------------------------------------------------ pools */

void lab_pool_init(lab_pool *p, size_t size, size_t per_chunk)
{
	memset(p, 0, sizeof *p);
	p->size = (size + 7) / 8 * 8;
	if (p->size < sizeof(void *))
		p->size = sizeof(void *);
	p->per_chunk = per_chunk ? per_chunk : 64;
}

void *lab_pool_zalloc(lab_pool *p)
{
	void *o = p->free;
	if (o) {
		p->free = *(void **)o;
	} else {
		if (!p->left) {
			if (p->nchunks == p->cap) {
				size_t cap = p->cap ? p->cap * 2 : 16;
				char **v = lab_realloc(p->chunks, cap * sizeof *v);
				if (!v)
					return NULL;
				p->chunks = v;
				p->cap = cap;
			}
			char *c = lab_malloc(p->size * p->per_chunk);
			if (!c)
				return NULL;
			p->chunks[p->nchunks++] = c;
			p->left = p->per_chunk;
		}
		o = p->chunks[p->nchunks - 1] + (p->per_chunk - p->left) * p->size;
		p->left--;
	}
	memset(o, 0, p->size);
	p->live++;
	return o;
}

void lab_pool_free(lab_pool *p, void *obj)
{
	if (!obj)
		return;
	*(void **)obj = p->free;
	p->free = obj;
	p->live--;
}

void lab_pool_destroy(lab_pool *p)
{
	for (size_t i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	size_t size = p->size, per = p->per_chunk;
	lab_pool_init(p, size, per);
}
