/*
 * exp_untar_archive.c - the untar experiment's archive (exp_untar.c).
 *
 * A Firefox-like source tree, the same in every run (its own fixed PRNG
 * seed; a run's seed draws only what variation.def varies):
 *   - 226,000 files and 22,600 directories at scale 1: the count makes
 *     the tar archive 1.50 GiB [seed 000: "1.5GiB uncompressed"];
 *   - file sizes lognormal with median 1,200 B and mean 6,300 B
 *     (sigma 1.821) [mechanisms.md section 1, corrections: a 2015 survey
 *     of mozilla-central, median ~1.2 KB, mean ~6.3 KB], drawn as
 *     stratified quantiles (k + 0.5) / N and put in a fixed random order:
 *     61.5% of the files are at most 2 KiB (inline extents), 23 over
 *     1 MiB, 2.23 pages per file on average;
 *   - directories: one per 10 files [inferred: "a few x 10^4", the brief
 *     says unverified], each directory's files right after it (tar's
 *     preorder), files per directory geometric with mean 10, parents on a
 *     depth-first walk that returns up 1.2 levels per new directory on
 *     average (depths ~3-10);
 *   - names 12 bytes (file) and 8 (directory) [estimate].
 * `scale` keeps the distribution: N x scale files (their own strata),
 * D x scale directories.
 */
#include "exp_untar_archive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labmem.h"
#include "sim.h"

#define UT_MEDIAN 1200.0         /* bytes */
#define UT_SIGMA 1.8211139868792 /* sqrt(2 ln(6300 / 1200)) */
#define UT_ARCHIVE_SEED 0x66697265666f78ull /* "firefox": the same tree in every run */

/* Peter Acklam's rational approximation of the standard normal quantile
 * (relative error < 1.2e-9), with the engine's portable log (detmath.c) so
 * that native and WASM draw the same tree. */
static double ut_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r;
	if (p < 0.02425) {
		q = sqrt(-2 * dm_log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	if (p > 1 - 0.02425) {
		q = sqrt(-2 * dm_log(1 - p));
		return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

uint64_t ut_archive_dirs(double scale)
{
	uint64_t nd = (uint64_t)((double)UT_DIRS * scale + 0.5);
	return nd < 1 ? 1 : nd;
}

/* see exp_untar_archive.h */
int ut_archive_make(ut_archive *a, double scale, uint32_t *stack)
{
	uint64_t nf = (uint64_t)((double)UT_FILES * scale + 0.5);
	uint64_t nd = ut_archive_dirs(scale);
	if (nf < 1)
		nf = 1;
	memset(a, 0, sizeof *a);
	a->nfiles = nf;
	a->ndirs = nd;
	a->ne = nf + nd;
	uint32_t *sizes = lab_malloc(nf * sizeof *sizes);
	uint32_t *count = lab_calloc(nd, sizeof *count);
	uint32_t *parent = lab_malloc(nd * sizeof *parent);
	a->e = lab_malloc(a->ne * sizeof *a->e);
	if (!sizes || !count || !parent || !a->e) {
		free(sizes);
		free(count);
		free(parent);
		return LAB_ENOMEM;
	}
	prng g;
	prng_seed(&g, UT_ARCHIVE_SEED);
	/* sizes: the strata's quantiles, then a fixed shuffle */
	for (uint64_t k = 0; k < nf; k++) {
		double z = ut_norm_quantile(((double)k + 0.5) / (double)nf);
		double v = UT_MEDIAN * dm_exp(UT_SIGMA * z);
		sizes[k] = v < 1 ? 1 : v > 4e9 ? 4000000000u : (uint32_t)(v + 0.5);
	}
	for (uint64_t k = nf - 1; k > 0; k--) {
		uint64_t j = prng_below(&g, k + 1);
		uint32_t x = sizes[k];
		sizes[k] = sizes[j];
		sizes[j] = x;
	}
	/* files per directory: geometric with mean nf / nd, then trimmed or
	 * topped up at random directories to make nf */
	double mean = (double)nf / (double)nd;
	double q = mean / (mean + 1); /* P(one more) of a geometric from 0 */
	uint64_t sum = 0;
	for (uint64_t i = 0; i < nd; i++) {
		uint32_t k = 0;
		while (prng_unit(&g) < q && k < 100000)
			k++;
		count[i] = k;
		sum += k;
	}
	while (sum < nf) {
		count[prng_below(&g, nd)]++;
		sum++;
	}
	while (sum > nf) {
		uint64_t i = prng_below(&g, nd);
		if (count[i]) {
			count[i]--;
			sum--;
		}
	}
	/* the directory tree, depth first: each new directory's parent is
	 * reached by going up a geometric number of levels (mean 1.2) from
	 * the last one */
	int depth = 0;
	uint32_t *st = stack;
	st[depth++] = 0;
	parent[0] = 0;
	for (uint64_t i = 1; i < nd; i++) {
		while (depth > 1 && prng_unit(&g) < 1.2 / 2.2)
			depth--;
		parent[i] = st[depth - 1];
		st[depth++] = (uint32_t)i;
	}
	/* the archive: each directory, then its files */
	uint64_t n = 0, f = 0;
	for (uint64_t i = 0; i < nd; i++) {
		a->e[n++] = (ut_entry){ .size = 0, .parent = parent[i], .dir = (uint32_t)i + 1 };
		for (uint32_t k = 0; k < count[i]; k++)
			a->e[n++] = (ut_entry){ .size = sizes[f++], .parent = (uint32_t)i, .dir = 0 };
	}
	free(sizes);
	free(count);
	free(parent);
	/* the archive's bytes: a header per entry, file data in whole
	 * blocks, two zero blocks, padded to a whole record */
	uint64_t bytes = 2 * UT_BLOCK;
	for (uint64_t k = 0; k < a->ne; k++) {
		uint64_t sz = a->e[k].size;
		bytes += UT_BLOCK + (sz + UT_BLOCK - 1) / UT_BLOCK * UT_BLOCK;
		if (a->e[k].dir)
			continue;
		a->data_bytes += sz;
		a->file_pages += (sz + 4095) / 4096;
		a->small_files += sz <= 2048;
		if (sz > a->max_file)
			a->max_file = sz;
	}
	a->bytes = (bytes + UT_RECORD - 1) / UT_RECORD * UT_RECORD;
	return 0;
}
