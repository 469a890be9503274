/*
 * sortutil.c - LSD radix sorts (see sortutil.h for why).
 */
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "sortutil.h"
#include "labmem.h"

/* 16-bit digits, four passes; a pass whose digit is the same for every key
 * is skipped (latencies in ns rarely use the top 32 bits). */
int sort_u64(uint64_t *v, size_t n)
{
	if (n < 2)
		return 0;
	uint64_t *tmp = lab_malloc(n * sizeof *tmp);
	size_t *count = lab_malloc(65536 * sizeof *count);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return LAB_ENOMEM;
	}
	uint64_t *src = v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 16) {
		memset(count, 0, 65536 * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xffff]++;
		if (count[(src[0] >> shift) & 0xffff] == n)
			continue; /* one digit value: this pass would not move anything */
		size_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xffff]++] = src[i];
		uint64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
	free(count);
	return 0;
}

/* For non-negative IEEE doubles the bit pattern, read as an unsigned
 * integer, orders exactly as the values do. */
int sort_doubles_nonneg(double *v, size_t n)
{
	_Static_assert(sizeof(double) == sizeof(uint64_t), "IEEE 754 binary64");
	return sort_u64((uint64_t *)(void *)v, n);
}
