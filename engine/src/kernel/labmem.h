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

#endif
