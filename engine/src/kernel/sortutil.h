/*
 * sortutil.h - sorting the engine does itself.
 *
 * Why not qsort: musl (WASM) sorts with smoothsort and glibc (native) with
 * a merge sort, so large sorts ran ~5x slower in WASM, and qsort is not
 * stable, so equal keys may come out in a different order on each build.
 * These are LSD radix sorts: O(n), stable, identical on every build.
 */
#ifndef SORTUTIL_H
#define SORTUTIL_H

#include <stddef.h>
#include <stdint.h>

/* Sort n non-negative, non-NaN doubles ascending. Returns 0 or LAB_ENOMEM
 * (the sort needs n doubles of scratch). */
int sort_doubles_nonneg(double *v, size_t n);
/* Sort n uint64 ascending. Returns 0 or LAB_ENOMEM. */
int sort_u64(uint64_t *v, size_t n);

#endif /* SORTUTIL_H */
