/*
 * test_cancel.c - a run closed at any point (the page's Cancel, a new Run
 * that replaces it) frees everything it holds, whatever its tasks were in
 * the middle of: an fsync holding a scratch buffer, the transaction
 * kthread between rounds, writeback or readahead in flight. Each run is
 * closed after 1, 2, 3, 5, 8, ... events up to its end, under
 * LeakSanitizer (make test runs with detect_leaks=1), and a closed run
 * leaves no trace on a run opened after it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "exp.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

/* Events the whole run takes, and its result. */
static uint64_t full_run(const char *exp, const char *variant, const char *params, char **json)
{
	lab_run *r = t_open(exp, variant, params, 7);
	int done = 0;
	while (!done)
		if (lab_step(r, 100000, &done))
			break;
	CHECK_EQ(done, 1);
	uint64_t n = (uint64_t)lab_events(r);
	CHECK_EQ(lab_result_json(r, json), 0);
	lab_close(r);
	return n;
}

static void cancel_sweep(const char *exp, const char *variant, const char *params)
{
	char *want = NULL;
	uint64_t total = full_run(exp, variant, params, &want);
	int closes = 0;
	/* every event of a short run, else 1, 2, 3, 5, 8, ... (Fibonacci) */
	for (uint64_t a = 1, b = 2; a < total; total < 100 ? (a++, b++) : (b += a, a = b - a)) {
		lab_run *r = t_open(exp, variant, params, 7);
		int done = 0;
		uint64_t left = a;
		while (left > 0 && !done) {
			uint32_t step = left > 50000 ? 50000 : (uint32_t)left;
			CHECK_EQ(lab_step(r, step, &done), 0);
			left -= step;
		}
		CHECK_EQ(done, 0);
		lab_close(r);
		closes++;
	}
	/* and the runs closed early changed nothing for the next one */
	char *got = NULL;
	full_run(exp, variant, params, &got);
	CHECK(want && got && strcmp(want, got) == 0);
	lab_free(want);
	lab_free(got);
	printf("  %s %s: %llu events, closed part-way %d times\n", exp, variant,
	       (unsigned long long)total, closes);
}

/* Every small run of every registered experiment (exp.h's small_run). */
int main(void)
{
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		CHECK(e->nsmall > 0);
		for (int k = 0; k < e->nsmall; k++)
			cancel_sweep(e->name, e->small[k].variant, e->small[k].params);
	}
	T_DONE();
}
