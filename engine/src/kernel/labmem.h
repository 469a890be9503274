#ifndef LABMEM_H
#define LABMEM_H
/*
 * Every engine allocation goes through these. A failed allocation is the
 * simulator's, not the simulated kernel's: wherever a caller drops the NULL
 * (a record not traced, a sample not kept), the result would silently
 * differ, and the WASM build (a few hundred MiB) would disagree with the
 * native one. So each failure is counted, and the lab_open or lab_step
 * during which one happened fails its run with LAB_ENOMEM (the engine is
 * single-threaded: an allocation made during a run's call is that run's).
 * Other open runs go on; if the heap is really exhausted their own next
 * allocation fails them in turn.
 *
 * The failing allocation itself is retried from a reserve (labmem.c), so
 * the code that asked for it gets its memory and leaves its structures
 * whole; the run then stops at the end of the event in progress. Only if
 * the reserve is gone too does a caller see NULL.
 */
#include <stddef.h>
#include <stdint.h>

extern uint64_t lab_oom_events;
/* Allocations made so far, and (tests only; 0 = never) the number of the
 * one that is to fail. */
extern uint64_t lab_alloc_count;
extern uint64_t lab_alloc_fail_at;

/* Hold the reserve again if it was used (lab_open and lab_step do). */
void lab_reserve_arm(void);

void *lab_malloc(size_t n);
void *lab_calloc(size_t n, size_t size);
void *lab_realloc(void *p, size_t n);
char *lab_strdup(const char *s);

/* An allocation the run can do without (a recording's buffer, sim.h):
 * neither counted nor retried from the reserve, so it never fails a run
 * nor renumbers the test hook's allocations; the caller copes with NULL. */
void *lab_try_realloc(void *p, size_t n);

/*
 * A pool of fixed-size objects for structures a run makes by the hundred
 * thousand (an inode per file): objects are carved from chunks allocated
 * with lab_malloc (so a failed chunk fails the run like any allocation),
 * a freed object goes on the pool's free list, and destroying the pool
 * gives every chunk back at once. Objects come zeroed.
 */
typedef struct lab_pool {
	size_t size;       /* object size, rounded to 8 */
	size_t per_chunk;  /* objects per chunk */
	void *free;        /* freed objects, linked through their first word */
	char **chunks;
	size_t nchunks, cap;
	size_t left;       /* unused objects at the end of the last chunk */
	size_t live;       /* objects handed out and not freed */
} lab_pool;

void lab_pool_init(lab_pool *p, size_t size, size_t per_chunk);
/* A zeroed object, or NULL when a chunk could not be allocated. */
void *lab_pool_zalloc(lab_pool *p);
/* Give obj (from this pool) back; NULL is ignored. */
void lab_pool_free(lab_pool *p, void *obj);
/* Free every chunk (objects still live go with them). */
void lab_pool_destroy(lab_pool *p);

#endif
