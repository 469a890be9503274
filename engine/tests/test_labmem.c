/*
 * test_labmem.c - a failed allocation fails the run it happened in, with
 * LAB_ENOMEM and a message, instead of letting it finish with a result that
 * silently lost whatever the allocation was for (the WASM build once printed
 * fewer qgroup records than the native one for a large "both" run). Another
 * open run goes on unharmed. And wherever an allocation fails, nothing
 * crashes, leaks (LeakSanitizer) or hangs: every experiment is run with each
 * of its allocations failing in turn (labmem.h's test hook).
 */
#include <stdint.h>
#include <stdlib.h>

#include "exp.h"
#include "lab.h"
#include "labmem.h"
#include "t.h"
#include "t_lab.h"

/* Run to the end; 0 or the error code of the step that failed. */
static int finish(lab_run *r)
{
	int done = 0, rc = 0;
	while (!done && !(rc = lab_step(r, 5000, &done)))
		;
	return rc;
}

static void test_oom_fails_its_run_only(void)
{
	const char *p = "ops=300";
	lab_run *ref = t_open("torture", "base", p, 1);
	CHECK_EQ(finish(ref), 0);
	char *want = NULL;
	CHECK_EQ(lab_result_json(ref, &want), 0);
	lab_close(ref);

	lab_run *a = t_open("torture", "base", p, 1), *b = t_open("torture", "base", p, 1);
	int done = 0;
	CHECK_EQ(lab_step(b, 10, &done), 0);
	/* a's next allocation fails (torture allocates as it runs: inodes,
	 * extents, tree nodes) */
	lab_alloc_fail_at = lab_alloc_count + 1;
	CHECK_EQ(finish(a), LAB_ENOMEM);
	CHECK(strstr(a->errmsg, "more memory") != NULL);
	CHECK_EQ(lab_step(a, 10, &done), LAB_ENOMEM);   /* stays failed */
	char *json = NULL;
	CHECK_EQ(lab_result_json(a, &json), LAB_ESTATE);  /* no result to read */
	lab_alloc_fail_at = 0;

	/* b was open all along and finishes with the very result of a run
	 * that never saw a failure */
	CHECK_EQ(finish(b), 0);
	char *got = NULL;
	CHECK_EQ(lab_result_json(b, &got), 0);
	CHECK(want && got && strcmp(want, got) == 0);
	lab_free(want);
	lab_free(got);
	lab_close(a);
	lab_close(b);
}

/*
 * Fail allocation k of a whole run (open, steps, result), for k = 1, 2, ...
 * until a run needs fewer than k. A failure during lab_open or a step must
 * end the run in LAB_ENOMEM from that call; one while the result is built
 * (after the run) is served from the reserve and the result is whole.
 * Returns how many allocations the run made.
 */
static uint64_t sweep(const char *exp, const char *variant, const char *params)
{
	int failures = 0;
	for (uint64_t k = 1;; k++) {
		uint64_t base = lab_alloc_count;
		lab_alloc_fail_at = base + k;
		lab_run *r = NULL;
		char *err = NULL, *json = NULL;
		int rc = lab_open(exp, variant, params, 1, 0, &r, &err);
		if (!rc)
			rc = finish(r);
		uint64_t run_allocs = lab_alloc_count - base;
		int jrc = rc ? 0 : lab_result_json(r, &json);
		int hit = lab_alloc_count - base >= k;
		lab_alloc_fail_at = 0;
		int ok = !hit ? rc == 0 && jrc == 0
			: k <= run_allocs ? rc == LAB_ENOMEM && (!r || strstr(r->errmsg, "more memory"))
			: rc == 0 && jrc == 0 && json;
		if (!ok) {
			fprintf(stderr, "%s %s: allocation %llu of %llu failed: run %d, result %d\n",
				exp, variant, (unsigned long long)k, (unsigned long long)run_allocs, rc, jrc);
			failures++;
		}
		lab_free(err);
		lab_free(json);
		lab_close(r);
		if (!hit) {
			CHECK_EQ(failures, 0);
			return k - 1;
		}
	}
}

/* Every small run of every registered experiment (exp.h's small_run): a
 * new experiment cannot be left out. */
static void test_every_allocation_may_fail(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		CHECK(e->nsmall > 0);
		for (int k = 0; k < e->nsmall; k++) {
			uint64_t n = sweep(e->name, e->small[k].variant, e->small[k].params);
			printf("  %s %s (small run %d): %llu allocations, each failed in turn\n",
			       e->name, e->small[k].variant, k, (unsigned long long)n);
			CHECK(n > 10);
		}
	}
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
	/* a failure is counted and served from the reserve... */
	lab_reserve_arm();
	lab_alloc_fail_at = lab_alloc_count + 1;
	char *t = lab_strdup("extent");
	CHECK(t && strcmp(t, "extent") == 0);
	CHECK_EQ(lab_oom_events, before + 1);
	free(t);
	/* ...once: with the reserve spent, the caller sees NULL */
	lab_alloc_fail_at = lab_alloc_count + 1;
	CHECK(lab_malloc(64) == NULL);
	CHECK_EQ(lab_oom_events, before + 2);
	lab_alloc_fail_at = 0;
	lab_reserve_arm();
#ifndef __SANITIZE_ADDRESS__
	/* an allocation no machine grants, reserve or not; ASan would report
	 * it instead */
	CHECK(lab_malloc(SIZE_MAX / 2) == NULL);
	CHECK_EQ(lab_oom_events, before + 3);
	lab_reserve_arm();
#endif
}

int main(void)
{
	test_oom_fails_its_run_only();
	test_wrappers_count();
	test_every_allocation_may_fail();
	T_DONE();
}
