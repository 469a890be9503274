/*
 * test_fio_fidelity.c - run the fio experiment through lab.h for every
 * measured fio point and compare IOPS, median and p99 completion latency
 * with the measurement.
 *
 * The target is every fitted point within 15% on all three. The model
 * does not reach it everywhere (the table this prints marks those rows
 * "FITTED!"; the summary counts them per profile: 117 of 122, nvme-dc
 * 62 of 66, consumer-ssd 22 of 23, consumer-nvme 33 of 33), so what is
 * asserted is the level it does reach, as a regression guard.
 * Every run is exp_fio's default 200 000 IOs with seed 1. A saturated
 * run's p99 still moves a few % with the seed (its slowest drain bands
 * and stalls), and one seed moves every run's luck the same way: with
 * seeds 2-5 the count is 113-117 (`node engine/tools/fit-device.mjs
 * --eval --dry-run --seed N` prints it). The bounds are seed 1's:
 *   - each fitted point: its errors within point_bounds[] for its profile
 *     and rw, which are also the tolerances of the fio experiment's
 *     published rows (checked here: the generator and this test agree);
 *   - nvme-dc p99 within 15% on at least NVME_P99_WITHIN of its points;
 *   - every profile: at least prof_bounds[].within fitted points within
 *     15% on all three, and RMS error over its fitted points within
 *     prof_bounds[]; all profiles together at least FIT_WITHIN.
 * Held-out points (never seen by engine/tools/fit-device.mjs) and points
 * outside the model (with the reason) are reported per profile and never
 * fail: they are the out-of-sample error; their published rows must have
 * a negative tolerance. FIO_FIDELITY_VERBOSE=1 prints every row.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fio_points.h"
#include "bdev_profile.h"
#include "exp.h"
#include "lab.h"
#include "t.h"

#define TOL 0.15
#define NVME_P99_WITHIN 65
#define FIT_WITHIN 117 /* fitted points within 15% on all three, all profiles */

/* Per-point bounds on fitted points: |error| of iops, p50, p99. */
static const struct {
	const char *profile, *rw;
	double iops, p50, p99;
} point_bounds[] = {
	{ "nvme-dc", "randread", 0.10, 0.22, 0.26 },
	{ "nvme-dc", "randwrite", 0.15, 0.20, 0.60 },
	{ "nvme-dc", "read", 0.10, 0.20, 0.20 },
	{ "nvme-dc", "write", 0.15, 0.20, 0.20 },
	{ "consumer-ssd", "randread", 0.12, 0.15, 0.20 },
	{ "consumer-ssd", "randwrite", 0.20, 0.20, 0.30 },
	{ "consumer-nvme", "randread", 0.10, 0.15, 0.20 },
};

/* Per profile: fitted points within 15% on all three (at least), and
 * RMS relative error bounds over its fitted points. */
static const struct {
	const char *profile;
	int within;
	double iops, p50, p99;
} prof_bounds[] = {
	{ "nvme-dc", 62, 0.06, 0.07, 0.11 },
	{ "consumer-ssd", 22, 0.06, 0.08, 0.095 },
	{ "consumer-nvme", 33, 0.04, 0.05, 0.07 },
};

/* Metric value of a finished run, by name. */
static double metric(const lab_run *r, const char *name)
{
	for (int i = 0; i < r->exp->nmetrics; i++)
		if (strcmp(r->exp->metrics[i].name, name) == 0)
			return r->m_set[i] ? r->m[i] : NAN;
	return NAN;
}

typedef struct acc {
	int n;
	double se_iops, se_p50, se_p99; /* sums of squared relative errors */
	int within;
} acc;

static void acc_add(acc *a, double ei, double e50, double e99)
{
	a->n++;
	a->se_iops += ei * ei;
	a->se_p50 += e50 * e50;
	a->se_p99 += e99 * e99;
	a->within += fabs(ei) <= TOL && fabs(e50) <= TOL && fabs(e99) <= TOL;
}

/* The published row of point `p` for `metric`, or NULL. */
static const published_row *row_of(const bdev_point *p, const char *metric)
{
	char params[192];
	snprintf(params, sizeof params, "device=%s\nrw=%s\nbs=%u\niodepth=%d\nnumjobs=%d",
		 p->profile, p->rw, (unsigned)p->bs, p->iodepth, p->numjobs);
	for (int i = 0; i < EXP_FIO_NPUBLISHED; i++) {
		const published_row *r = &exp_fio_published[i];
		if (strcmp(r->params, params) == 0 && strcmp(r->metric, metric) == 0 &&
		    strncmp(r->source, p->source, strlen(p->source)) == 0)
			return r;
	}
	return NULL;
}

/* The per-point bounds of a fitted point's profile and rw, or -1. */
static int bounds_of(const bdev_point *p)
{
	for (int k = 0; k < (int)(sizeof point_bounds / sizeof point_bounds[0]); k++)
		if (strcmp(point_bounds[k].profile, p->profile) == 0 &&
		    strcmp(point_bounds[k].rw, p->rw) == 0)
			return k;
	return -1;
}

/* RMS of an accumulator's relative errors, in percent. */
static void acc_print(const char *label, const acc *a)
{
	if (!a->n)
		return;
	printf("  %-22s %3d, %3d within %.0f%% on all three; RMS iops %5.1f%% p50 %5.1f%% "
	       "p99 %5.1f%%\n",
	       label, a->n, a->within, 100 * TOL, 100 * sqrt(a->se_iops / a->n),
	       100 * sqrt(a->se_p50 / a->n), 100 * sqrt(a->se_p99 / a->n));
}

/*
 * The drive against itself: for each job measured twice, the second run's
 * error against the first on iops, p50 and p99, counted as a model's would
 * be. A model should not be asked to come closer to one run than the
 * drive's own second run does; the device page prints the same count
 * (web/model/fitCheck.ts).
 */
static void report_replicates(const char *profile)
{
	int pairs = 0, within = 0;
	for (int i = 0; i < bdev_npoints; i++) {
		const bdev_point *b = &bdev_points[i], *a = NULL;
		if (strcmp(b->profile, profile) != 0)
			continue;
		int earlier = 0;
		for (int j = 0; j < i; j++)
			if (bdev_point_same_job(&bdev_points[j], b) && !earlier++)
				a = &bdev_points[j];
		if (earlier != 1)
			continue; /* the first run of a job, or a third one */
		pairs++;
		within += fabs(b->iops / a->iops - 1) <= TOL &&
			  fabs(b->clat_p50_us / a->clat_p50_us - 1) <= TOL &&
			  fabs(b->clat_p99_us / a->clat_p99_us - 1) <= TOL;
	}
	if (pairs)
		printf("  %-13s %3d jobs measured twice, %3d of them within %.0f%% of their first run "
		       "on all three\n", profile, pairs, within, 100 * TOL);
}

int main(void)
{
	int verbose = getenv("FIO_FIDELITY_VERBOSE") != NULL;
	acc fit = { 0 }, held = { 0 }, outside = { 0 };
	enum { NPROF = sizeof prof_bounds / sizeof prof_bounds[0] };
	acc per[NPROF], per_held[NPROF], per_out[NPROF];
	memset(per, 0, sizeof per);
	memset(per_held, 0, sizeof per_held);
	memset(per_out, 0, sizeof per_out);
	int nvme_fit = 0, nvme_p99_ok = 0;
	int held_header = 0;
	for (int i = 0; i < bdev_npoints; i++) {
		const bdev_point *p = &bdev_points[i];
		/* exactly the run `lab fidelity` makes for this point's published
		 * rows: their parameters, the default ios, seed 1, variation off */
		const published_row *ri = row_of(p, "iops"), *r50 = row_of(p, "clat_p50_us"),
				    *r99 = row_of(p, "clat_p99_us");
		CHECK(ri && r50 && r99);
		if (!ri || !r50 || !r99)
			continue;
		char params[512];
		snprintf(params, sizeof params, "%s\nvariation=off", ri->params);
		lab_run *r = NULL;
		char *msg = NULL;
		int rc = lab_open("fio", "base", params, 1, 0, &r, &msg);
		CHECK_EQ(rc, 0);
		if (rc) {
			fprintf(stderr, "lab_open(%s): %s\n", params, msg ? msg : "?");
			lab_free(msg);
			continue;
		}
		int done = 0;
		while (!done && lab_step(r, 1u << 20, &done) == 0)
			;
		CHECK(done);
		double iops = metric(r, "iops"), p50 = metric(r, "clat_p50_us"),
		       p99 = metric(r, "clat_p99_us");
		double ei = iops / p->iops - 1, e50 = p50 / p->clat_p50_us - 1,
		       e99 = p99 / p->clat_p99_us - 1;
		int ok = fabs(ei) <= TOL && fabs(e50) <= TOL && fabs(e99) <= TOL;
		int k = 0;
		while (k < NPROF && strcmp(p->profile, prof_bounds[k].profile) != 0)
			k++;
		CHECK(k < NPROF);
		if (p->fit) {
			int b = bounds_of(p);
			CHECK(b >= 0);
			if (b >= 0) {
				CHECK(fabs(ei) <= point_bounds[b].iops);
				CHECK(fabs(e50) <= point_bounds[b].p50);
				CHECK(fabs(e99) <= point_bounds[b].p99);
				/* the published rows claim exactly this level */
				CHECK(ri && ri->tolerance == point_bounds[b].iops);
				CHECK(r50 && r50->tolerance == point_bounds[b].p50);
				CHECK(r99 && r99->tolerance == point_bounds[b].p99);
			}
			acc_add(&fit, ei, e50, e99);
			if (k < NPROF)
				acc_add(&per[k], ei, e50, e99);
			if (strcmp(p->profile, "nvme-dc") == 0) {
				nvme_fit++;
				nvme_p99_ok += fabs(e99) <= TOL;
			}
		} else {
			/* not fitted: reported only */
			CHECK(ri && ri->tolerance < 0);
			CHECK(r50 && r50->tolerance < 0);
			CHECK(r99 && r99->tolerance < 0);
			int is_held = strncmp(p->why, "held out", 8) == 0;
			CHECK(is_held || strncmp(p->why, "outside the model", 17) == 0);
			acc_add(is_held ? &held : &outside, ei, e50, e99);
			if (k < NPROF)
				acc_add(is_held ? &per_held[k] : &per_out[k], ei, e50, e99);
		}
		if (!p->fit || !ok || verbose) {
			if (!p->fit && !held_header++)
				printf("not fitted (held out, or outside the model; reported, never failed):\n");
			printf("%-9s %-13s %-9s bs %7u qd %4d jobs %2d  iops %+6.1f%%  p50 %+6.1f%%  "
			       "p99 %+6.1f%%  %s  %s%s%s\n",
			       p->fit ? (ok ? "fitted" : "FITTED!") : p->why[0] == 'h' ? "held out" : "outside",
			       p->profile, p->rw,
			       (unsigned)p->bs, p->iodepth, p->numjobs, 100 * ei, 100 * e50, 100 * e99,
			       ok ? "ok " : "off", p->source, p->fit ? "" : " -- ", p->why);
		}
		lab_close(r);
	}
	printf("fitted points:   %d, %d within %.0f%% on iops, p50 and p99; RMS error iops %.1f%% "
	       "p50 %.1f%% p99 %.1f%%\n",
	       fit.n, fit.within, 100 * TOL, 100 * sqrt(fit.se_iops / fit.n),
	       100 * sqrt(fit.se_p50 / fit.n), 100 * sqrt(fit.se_p99 / fit.n));
	printf("held out:        %d, %d within %.0f%%; RMS error iops %.1f%% p50 %.1f%% p99 %.1f%% "
	       "(out of sample)\n",
	       held.n, held.within, 100 * TOL, 100 * sqrt(held.se_iops / held.n),
	       100 * sqrt(held.se_p50 / held.n), 100 * sqrt(held.se_p99 / held.n));
	printf("outside model:   %d, %d within %.0f%%; RMS error iops %.1f%% p50 %.1f%% p99 %.1f%%\n",
	       outside.n, outside.within, 100 * TOL, 100 * sqrt(outside.se_iops / outside.n),
	       100 * sqrt(outside.se_p50 / outside.n), 100 * sqrt(outside.se_p99 / outside.n));
	printf("per profile, fitted points:\n");
	for (int k = 0; k < NPROF; k++) {
		acc *a = &per[k];
		double ri = sqrt(a->se_iops / a->n), r50 = sqrt(a->se_p50 / a->n),
		       r99 = sqrt(a->se_p99 / a->n);
		printf("  %-13s %3d fitted, %3d within %.0f%% on all three (>= %d); RMS iops %5.1f%% "
		       "p50 %5.1f%% p99 %5.1f%% (bounds %.1f/%.1f/%.1f%%)\n",
		       prof_bounds[k].profile, a->n, a->within, 100 * TOL, prof_bounds[k].within,
		       100 * ri, 100 * r50, 100 * r99, 100 * prof_bounds[k].iops,
		       100 * prof_bounds[k].p50, 100 * prof_bounds[k].p99);
		CHECK(a->n >= 10);
		CHECK(a->within >= prof_bounds[k].within);
		CHECK(ri <= prof_bounds[k].iops);
		CHECK(r50 <= prof_bounds[k].p50);
		CHECK(r99 <= prof_bounds[k].p99);
	}
	printf("per profile, not fitted (reported only):\n");
	for (int k = 0; k < NPROF; k++) {
		char label[64];
		snprintf(label, sizeof label, "%s held out", prof_bounds[k].profile);
		acc_print(label, &per_held[k]);
		snprintf(label, sizeof label, "%s outside", prof_bounds[k].profile);
		acc_print(label, &per_out[k]);
	}
	printf("the drive against itself (measured, no simulation):\n");
	for (int k = 0; k < NPROF; k++)
		report_replicates(prof_bounds[k].profile);
	printf("  nvme-dc p99 within %.0f%% on %d of %d fitted points\n", 100 * TOL, nvme_p99_ok,
	       nvme_fit);
	CHECK(nvme_fit > 0 && nvme_p99_ok >= NVME_P99_WITHIN);
	CHECK(fit.n > 50);
	CHECK(fit.within >= FIT_WITHIN);
	CHECK(held.n > 20);
	T_DONE();
}
