#ifndef LABMEM_H
#define LABMEM_H
/*
 * Every engine allocation goes through these. A failed allocation is the
 * simulator's, not the simulated kernel's: wherever a caller drops the NULL
 * (a record not traced, a sample not kept), the result would silently
 * differ, and the WASM build (a few hundred MiB) would disagree with the
 * native one. So each failure is counted, and lab_open/lab_step fail every
 * run that was open when one happened, with LAB_ENOMEM.
 */
#include <stddef.h>
#include <stdint.h>

extern uint64_t lab_oom_events;

void *lab_malloc(size_t n);
void *lab_calloc(size_t n, size_t size);
void *lab_realloc(void *p, size_t n);
char *lab_strdup(const char *s);

#endif
