/*
 * t_lab.h - opening a run for the tests that drive the public API
 * (test_labmem, test_cancel): the open must succeed.
 */
#ifndef T_LAB_H
#define T_LAB_H
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
#endif
