/*
 * test_labmem.c - a failed allocation fails the runs that were open, with
 * LAB_ENOMEM and a message, instead of letting them finish with a result
 * that silently lost whatever the allocation was for (the WASM build once
 * printed fewer qgroup records than the native one for a large "both" run).
 * A run opened after the failure is not affected.
 */
#include <stdint.h>
#include <stdlib.h>

#include "exp.h"
#include "lab.h"
#include "labmem.h"
#include "t.h"

static lab_run *open_run(void)
{
	lab_run *r = NULL;
	char *err = NULL;
	int rc = lab_open("fio", "base", "ios=2000", 1, 0, &r, &err);
	CHECK_EQ(rc, 0);
	lab_free(err);
	return r;
}

static void test_oom_fails_open_runs(void)
{
	lab_run *a = open_run(), *b = open_run();
	int done = 0;
	CHECK_EQ(lab_step(a, 10, &done), 0);
	CHECK_EQ(done, 0);

	/* What lab_malloc does when malloc returns NULL (an allocation that
	 * really fails is not something a test can do portably under ASan). */
	lab_oom_events++;

	CHECK_EQ(lab_step(a, 10, &done), LAB_ENOMEM);
	CHECK(strstr(a->errmsg, "more memory") != NULL);
	CHECK_EQ(lab_step(a, 10, &done), LAB_ENOMEM);   /* stays failed */
	CHECK_EQ(lab_step(b, 1000000, &done), LAB_ENOMEM);
	char *json = NULL;
	CHECK_EQ(lab_result_json(b, &json), LAB_ESTATE);  /* no result to read */
	lab_close(a);
	lab_close(b);

	lab_run *c = open_run();
	done = 0;
	while (!done && lab_step(c, 100000, &done) == 0)
		;
	CHECK_EQ(done, 1);
	lab_close(c);
}

static void test_wrappers_count(void)
{
	uint64_t before = lab_oom_events;
	void *p = lab_malloc(64), *q = lab_calloc(4, 16);
	p = lab_realloc(p, 128);
	char *s = lab_strdup("extent");
	CHECK(p && q && s && strcmp(s, "extent") == 0);
	CHECK_EQ(lab_oom_events, before);
	free(p);
	free(q);
	free(s);
#ifndef __SANITIZE_ADDRESS__
	/* an allocation no machine grants; ASan would report it instead */
	CHECK(lab_malloc(SIZE_MAX / 2) == NULL);
	CHECK_EQ(lab_oom_events, before + 1);
#endif
}

int main(void)
{
	test_oom_fails_open_runs();
	test_wrappers_count();
	T_DONE();
}
