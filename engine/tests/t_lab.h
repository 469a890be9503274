/*
 * t_lab.h - opening a run for the tests that drive the public API
 * (test_labmem, test_cancel): the open must succeed.
 */
#ifndef T_LAB_H
#define T_LAB_H
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "t.h"

static lab_run *t_open(const char *exp, const char *variant, const char *params, uint32_t seed)
{
	lab_run *r = NULL;
	char *err = NULL;
	int rc = lab_open(exp, variant, params, seed, 0, &r, &err);
	CHECK_EQ(rc, 0);
	lab_free(err);
	return r;
}
/* A finished run's metrics, by index of its experiment's list. */
typedef struct t_res {
	double m[EXP_MAX_METRICS];
	const lab_exp *e;
} t_res;

/* Run one variant of an experiment to the end (the open and every step
 * must succeed, and so must its invariant check) and keep its metrics. */
static inline t_res t_run(const char *exp, const char *variant, const char *params, uint32_t seed)
{
	t_res out;
	memset(&out, 0, sizeof(out));
	lab_run *r = t_open(exp, variant, params, seed);
	if (!r)
		return out;
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 1000000, &done);
	CHECK_EQ(rc, 0);
	out.e = r->exp;
	memcpy(out.m, r->m, sizeof(out.m));
	if (r->exp->check)
		CHECK_EQ(r->exp->check(r), 0);
	lab_close(r);
	return out;
}

/* A metric of a finished run by name; -1 (and a failed check) if the
 * experiment has none of that name. */
static inline double t_metric(const t_res *x, const char *name)
{
	for (int i = 0; x->e && i < x->e->nmetrics; i++)
		if (!strcmp(x->e->metrics[i].name, name))
			return x->m[i];
	fprintf(stderr, "no metric %s\n", name);
	CHECK(0);
	return -1;
}
#endif
