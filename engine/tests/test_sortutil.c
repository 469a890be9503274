/* test_sortutil.c - the radix sorts against a reference, with ties and
 * edge cases. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "sortutil.h"
#include "t.h"

static int cmp_u(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	prng p;
	prng_seed(&p, 5);
	size_t sizes[] = {0, 1, 2, 3, 17, 1000, 100000};
	for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
		size_t n = sizes[k];
		uint64_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
		double *d = malloc((n + 1) * sizeof *d);
		for (size_t i = 0; i < n; i++) {
			/* mix small values with many ties and full-width ones */
			a[i] = i % 3 ? prng_below(&p, 50) : prng_next(&p);
			d[i] = i % 4 ? prng_lognormal(&p, 4.0, 1.5) : (double)prng_below(&p, 10);
		}
		memcpy(b, a, n * sizeof *a);
		CHECK_EQ(sort_u64(a, n), 0);
		qsort(b, n, sizeof *b, cmp_u);
		CHECK(n == 0 || memcmp(a, b, n * sizeof *a) == 0);
		CHECK_EQ(sort_doubles_nonneg(d, n), 0);
		int sorted = 1;
		for (size_t i = 1; i < n; i++)
			sorted &= d[i - 1] <= d[i];
		CHECK(sorted);
		free(a);
		free(b);
		free(d);
	}
	double z[] = {3.5, 0.0, 1e-300, 1e300, 2.0, 0.0};
	CHECK_EQ(sort_doubles_nonneg(z, 6), 0);
	CHECK(z[0] == 0.0 && z[1] == 0.0 && z[2] == 1e-300 && z[3] == 2.0 && z[5] == 1e300);
	T_DONE();
}
