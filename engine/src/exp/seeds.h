/*
 * seeds.h - one experiment run over consecutive seeds, and the spread of
 * each metric (lab run --seeds N, the fidelity report's noisy rows).
 */
#ifndef SEEDS_H
#define SEEDS_H

#include <stdint.h>

#include "exp.h"
#include "strbuf.h"

/* Seeds over which `lab fidelity` judges a published row that is one run
 * of a noisy quantity. */
#define FIDELITY_SEEDS 20
#define SEEDS_MAX 1000

/* The spread of n values: mean, sample sd, min, max and the 5th, 50th and
 * 95th percentiles by linear interpolation between order statistics
 * (Hyndman & Fan type 7, numpy's default; web/model/spread.ts is the
 * same). */
typedef struct spread {
	int n;
	double mean, sd, p5, p50, p95, min, max;
} spread;

/* Sorts v in place. n = 0 gives a spread with n = 0 (printed as null). */
void spread_of(double *v, int n, spread *out);
double quantile_sorted(const double *v, int n, double q);
void spread_json(const spread *s, strbuf *out);

/* An experiment's variant run for seeds seed0 .. seed0+n-1. */
typedef struct seeds_result {
	int n;                          /* seeds run */
	double *val[EXP_MAX_METRICS];   /* per metric, the set values */
	int nval[EXP_MAX_METRICS];
	double *sim_ns, *events;
	double wall_ms;                 /* host time, all seeds */
	char errmsg[240];               /* when a run failed */
} seeds_result;

/* Returns 0, or the LAB_E* code of the first run that failed to open
 * (message in out->errmsg) or to run. */
/* out's arrays for n seeds of e, zeroed (seeds_free frees them, also
 * after a failure here). */
int seeds_alloc(const lab_exp *e, int n, seeds_result *out);
int seeds_run(const lab_exp *e, const char *variant, const char *params, uint64_t seed0,
	      int n, seeds_result *out);
void seeds_free(seeds_result *r);

/* The run's per-metric spread; spread.n == 0 if no seed set it. */
void seeds_spread(const seeds_result *r, int metric, spread *out);

#endif /* SEEDS_H */
