/*
 * fuzz_api.c - libFuzzer target over the public API (lab.h), as a front
 * end or a hostile caller would drive it: any experiment, any variant
 * text, any parameter text, then a program of calls decoded from the rest
 * of the input: lab_step in slices of any size, the queries (progress,
 * trace with any `since` bit pattern, snapshot of any name, result,
 * check), and lab_close at any point.
 *
 * Input: [variant byte][experiment name][0][parameter text][0]
 *        [seed: 2 bytes][program: opcode bytes with their operands]
 *
 * A run is only opened when lab_estimate says its work is at most the
 * default setup's (the fuzzer would otherwise spend its time building
 * 131,072-file trees; the size caps have their own CLI tests), and at
 * most STEP_BUDGET events are stepped per input. What is checked: no
 * crash, no sanitizer report, no leak, every return code is 0 or a
 * LAB_E*, strings come back NUL-terminated, progress stays in [0, 1].
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"

#define STEP_BUDGET 20000u

/* A reader over the fuzzer's bytes. */
typedef struct rd {
	const uint8_t *p;
	size_t n, at;
} rd;

static unsigned u8(rd *r) { return r->at < r->n ? r->p[r->at++] : 0; }

static uint64_t un(rd *r, int bytes)
{
	uint64_t v = 0;
	for (int i = 0; i < bytes; i++)
		v = v << 8 | u8(r);
	return v;
}

/* A code lab.h can return. */
static void ok_code(int rc)
{
	if (rc > 0 || rc < LAB_ENOTSUP)
		abort();
}

/* An engine string: free it (ASan checks it was a valid allocation). */
static void take(char *s)
{
	if (s)
		(void)strlen(s);
	lab_free(s);
}

static const char *const variants[] = { "before", "after", "base" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	rd r = { data, size, 0 };
	char *list = NULL;
	ok_code(lab_list_json(&list));
	take(list);
	unsigned v = u8(&r);
	/* the experiment's name, up to a 0 byte (the corpus and the
	 * dictionary name the registry's; anything else is refused) */
	char exp[33];
	size_t k = 0;
	while (r.at < r.n && data[r.at] && k + 1 < sizeof exp)
		exp[k++] = (char)data[r.at++];
	exp[k] = 0;
	while (r.at < r.n && data[r.at])
		r.at++;
	r.at++;
	const char *variant = variants[v % 3];
	/* the parameter text, up to a 0 byte */
	size_t start = r.at;
	while (r.at < r.n && data[r.at])
		r.at++;
	char *params = malloc(r.at - start + 1);
	if (!params)
		return 0;
	memcpy(params, data + start, r.at - start);
	params[r.at - start] = 0;
	r.at++;

	double work = 0, dwork = 0;
	char *msg = NULL;
	int rc = lab_estimate(exp, params, &work, &dwork, &msg);
	ok_code(rc);
	take(msg);
	msg = NULL;
	lab_run *run = NULL;
	if (rc == 0 && work <= dwork) {
		rc = lab_open(exp, variant, params, (uint32_t)un(&r, 2), 0, &run, &msg);
		ok_code(rc);
		take(msg);
		if (rc && run)
			abort(); /* a failed open hands out no run */
	}
	free(params);
	if (!run)
		return 0;

	uint32_t budget = STEP_BUDGET;
	int done = 0, closed = 0;
	while (!closed && r.at < r.n) {
		char *out = NULL;
		switch (u8(&r) % 8) {
		case 0: /* a slice of any size, within the budget */
		case 1: {
			uint32_t n = (uint32_t)un(&r, 2);
			if (n > budget)
				n = budget;
			budget -= n;
			rc = lab_step(run, n, &done);
			ok_code(rc);
			double p = lab_progress(run);
			if (!(p >= 0 && p <= 1))
				abort();
			(void)lab_sim_ns(run);
			(void)lab_events(run);
			break;
		}
		case 2: { /* any 8 bytes as `since`: NaN, inf, negative, huge */
			uint64_t bits = un(&r, 8);
			double since;
			memcpy(&since, &bits, sizeof since);
			rc = lab_trace_json(run, since, &out);
			ok_code(rc);
			if (rc == 0 && !(since >= 0 && since < 18446744073709551616.0))
				abort(); /* lab.h: LAB_EINVAL for these */
			take(out);
			break;
		}
		case 3: { /* a snapshot of any name */
			char what[24];
			unsigned kk = u8(&r) % sizeof what, i = 0;
			static const char *const known[] = { "tree:fs", "tree:extent", "tree:csum",
							     "tree:root", "tree:256", "tree:", "iotree" };
			if (kk < 7) {
				snprintf(what, sizeof what, "%s", known[kk]);
			} else {
				for (; i + 1 < kk && r.at < r.n; i++)
					what[i] = (char)u8(&r);
				what[i] = 0;
			}
			rc = lab_snapshot_json(run, what, &out);
			ok_code(rc);
			take(out);
			break;
		}
		case 4:
			rc = lab_result_json(run, &out);
			ok_code(rc);
			if ((rc == 0) != (done != 0))
				abort(); /* a result exactly when finished */
			take(out);
			break;
		case 5:
			rc = lab_check(run);
			if (rc > 0)
				abort(); /* an invariant broken: a bug */
			ok_code(rc);
			break;
		case 6:
			closed = 1;
			break;
		case 7: /* on to the end, within the budget */
			while (!done && budget) {
				uint32_t n = budget < 4096 ? budget : 4096;
				budget -= n;
				rc = lab_step(run, n, &done);
				ok_code(rc);
				if (rc)
					break;
			}
			break;
		}
	}
	lab_close(run);
	return 0;
}
