/*
 * fuzz_torture.c - libFuzzer target: torture's operation sequences
 * decoded from the fuzzer's bytes. The first bytes choose the mix, the
 * subvolumes and the seed; the rest is the script tort_below() reads in
 * place of the PRNG (exp_torture.c): each operation is chosen by two
 * bytes and its arguments (which file, offsets, lengths, fsync storms,
 * snapshots, sends, remounts) by the bytes after, so the fuzzer steers
 * the op mix itself. The run ends when the script is spent, with the
 * final commit and check. Any checker failure or failed operation is a
 * finding (abort), as are crashes and sanitizer reports.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"

#include "exp_torture_int.h"

/* The value of metric `name` of a finished run. */
static double metric(const lab_run *r, const char *name)
{
	for (int i = 0; i < r->exp->nmetrics; i++)
		if (!strcmp(r->exp->metrics[i].name, name))
			return r->m[i];
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 3)
		return 0;
	char params[64];
	/* ops: more than any script can ask for (the script ends the run) */
	snprintf(params, sizeof params, "ops=200000\nmix=%s\nsubvols=%u",
		 data[0] & 1 ? "all" : "files", 1 + data[1] % 8);
	lab_run *r = NULL;
	char *msg = NULL;
	int rc = lab_open("torture", "base", params, data[2], 0, &r, &msg);
	lab_free(msg);
	if (rc)
		abort(); /* these settings are always valid */
	tort *c = r->ctx;
	c->script = data + 3;
	c->script_len = size - 3;
	int done = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 1u << 16, &done);
	if (rc) {
		fprintf(stderr, "torture: %s (%s)\n", lab_strerror(rc), r->errmsg);
		abort();
	}
	if (metric(r, "check_failures") != 0 || c->errors) {
		fprintf(stderr, "torture: %llu failures, %llu op errors; first: %s\n",
			(unsigned long long)c->failures, (unsigned long long)c->errors, c->first_error);
		abort();
	}
	lab_close(r);
	return 0;
}
