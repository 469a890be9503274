/*
 * seeds.c - runs over consecutive seeds and their spreads (seeds.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab.h"
#include "labmem.h"
#include "seeds.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double quantile_sorted(const double *v, int n, double q)
{
	if (n <= 0)
		return NAN;
	double h = (double)(n - 1) * q;
	int lo = (int)floor(h);
	if (lo >= n - 1)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

void spread_of(double *v, int n, spread *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n <= 0)
		return;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += v[i];
	out->mean = sum / n;
	double ss = 0;
	for (int i = 0; i < n; i++)
		ss += (v[i] - out->mean) * (v[i] - out->mean);
	out->sd = n > 1 ? sqrt(ss / (n - 1)) : 0;
	out->p5 = quantile_sorted(v, n, 0.05);
	out->p50 = quantile_sorted(v, n, 0.5);
	out->p95 = quantile_sorted(v, n, 0.95);
	out->min = v[0];
	out->max = v[n - 1];
}

void spread_json(const spread *s, strbuf *out)
{
	if (s->n <= 0) {
		js_null(out);
		return;
	}
	js_obj(out);
	js_kint(out, "n", s->n);
	js_knum(out, "mean", s->mean);
	js_knum(out, "sd", s->sd);
	js_knum(out, "p5", s->p5);
	js_knum(out, "p50", s->p50);
	js_knum(out, "p95", s->p95);
	js_knum(out, "min", s->min);
	js_knum(out, "max", s->max);
	js_obj_end(out);
}

static double wall_ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void seeds_free(seeds_result *r)
{
	for (int m = 0; m < EXP_MAX_METRICS; m++)
		free(r->val[m]);
	free(r->sim_ns);
	free(r->events);
	memset(r, 0, sizeof *r);
}

int seeds_alloc(const lab_exp *e, int n, seeds_result *out)
{
	memset(out, 0, sizeof *out);
	for (int m = 0; m < e->nmetrics; m++)
		if (!(out->val[m] = lab_calloc((size_t)n, sizeof(double))))
			return LAB_ENOMEM;
	out->sim_ns = lab_calloc((size_t)n, sizeof(double));
	out->events = lab_calloc((size_t)n, sizeof(double));
	if (!out->sim_ns || !out->events)
		return LAB_ENOMEM;
	return 0;
}

int seeds_run(const lab_exp *e, const char *variant, const char *params, uint64_t seed0,
	      int n, seeds_result *out)
{
	int arc = seeds_alloc(e, n, out);
	if (arc)
		return arc;
	double t0 = wall_ms_now();
	for (int k = 0; k < n; k++) {
		uint64_t seed = seed0 + (uint64_t)k;
		lab_run *r = NULL;
		char *msg = NULL;
		int rc = lab_open(e->name, variant, params, (uint32_t)seed, (uint32_t)(seed >> 32), &r,
				  &msg);
		if (rc) {
			strncpy(out->errmsg, msg ? msg : lab_strerror(rc), sizeof out->errmsg - 1);
			lab_free(msg);
			return rc;
		}
		int done = 0;
		while (!done && rc == 0)
			rc = lab_step(r, 1u << 20, &done);
		if (rc) {
			snprintf(out->errmsg, sizeof out->errmsg, "seed %llu: %s%s%s",
				 (unsigned long long)seed, lab_strerror(rc), r->errmsg[0] ? ": " : "",
				 r->errmsg);
			lab_close(r);
			return rc;
		}
		for (int m = 0; m < e->nmetrics; m++)
			if (r->m_set[m])
				out->val[m][out->nval[m]++] = r->m[m];
		out->sim_ns[k] = (double)sim_now(r->sim);
		out->events[k] = (double)sim_events(r->sim);
		out->n = k + 1;
		lab_close(r);
	}
	out->wall_ms = wall_ms_now() - t0;
	return 0;
}

void seeds_spread(const seeds_result *r, int metric, spread *out)
{
	int n = r->nval[metric];
	double *v = n ? lab_malloc((size_t)n * sizeof *v) : NULL;
	if (n && !v) {
		memset(out, 0, sizeof *out);
		return;
	}
	if (n)
		memcpy(v, r->val[metric], (size_t)n * sizeof *v);
	spread_of(v, n, out);
	free(v);
}
