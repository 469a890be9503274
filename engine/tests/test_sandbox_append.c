/*
 * test_sandbox_append.c - lab_append on the sandbox: a script run in
 * pieces (the page adds one command at a time to a run it keeps open) has
 * the same result and the same recording, byte for byte, as the whole
 * script run at once; cut at every command, both kernels, scripts that
 * leave work to the cleaner between commands. A refused piece changes
 * nothing; the API refuses what it cannot do.
 */
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "t.h"
#include "t_lab.h"

static void run_to_end(lab_run *r)
{
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 700, &done);
	CHECK_EQ(rc, 0);
}

/* The result and the whole recording, as one string. */
static char *result_and_trace(lab_run *r)
{
	char *js = NULL, *tr = NULL;
	CHECK_EQ(lab_result_json(r, &js), 0);
	CHECK_EQ(lab_trace_json(r, 0, &tr), 0);
	if (!js || !tr) {
		lab_free(js);
		lab_free(tr);
		return NULL;
	}
	size_t n = strlen(js) + strlen(tr) + 2;
	char *out = malloc(n);
	snprintf(out, n, "%s\n%s", js, tr);
	lab_free(js);
	lab_free(tr);
	return out;
}

static lab_run *open_rec(const char *variant, const char *script)
{
	char params[4096];
	snprintf(params, sizeof params, "script=%s", script);
	lab_run *r = t_open("sandbox", variant, params, 1);
	if (r)
		CHECK_EQ(lab_record_opts(r, "max_events=200000"), 0);
	return r;
}

/* The commands of a script ("a; b; c") as pointers into a copy. */
static int split(char *s, char **cmds, int max)
{
	int n = 0;
	for (char *p = strtok(s, ";"); p && n < max; p = strtok(NULL, ";")) {
		while (*p == ' ')
			p++;
		cmds[n++] = p;
	}
	return n;
}

/* The script whole, then cut after each command k: the first k at open,
 * the rest one lab_append at a time. Every way gives the same bytes. */
static void same_in_pieces(const char *variant, const char *script)
{
	lab_run *r = open_rec(variant, script);
	if (!r)
		return;
	run_to_end(r);
	char *whole = result_and_trace(r);
	lab_close(r);
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", script);
	char *cmds[64];
	int n = split(buf, cmds, 64);
	/* k = 0, an empty script first: its task's look at the empty script
	 * is one event more (an empty run does something: the CLI's rule) */
	for (int k = 1; k < n; k++) {
		char head[4096] = "";
		for (int i = 0; i < k; i++)
			snprintf(head + strlen(head), sizeof head - strlen(head), "%s%s", i ? "; " : "", cmds[i]);
		r = open_rec(variant, head);
		if (!r)
			return;
		run_to_end(r);
		for (int i = k; i < n; i++) {
			char *err = NULL;
			int rc = lab_append(r, cmds[i], &err);
			if (rc)
				fprintf(stderr, "append '%s': %s\n", cmds[i], err ? err : "?");
			CHECK_EQ(rc, 0);
			lab_free(err);
			run_to_end(r);
		}
		char *pieces = result_and_trace(r);
		if (!whole || !pieces || strcmp(whole, pieces)) {
			fprintf(stderr, "%s: cut after %d commands of '%s' differs\n", variant, k, script);
			CHECK(0);
		}
		free(pieces);
		lab_close(r);
	}
	free(whole);
}

static void test_pieces(void)
{
	const char *a = "mkdir /d; touch /d/f; pwrite /d/f 0 64k; fsync; pwrite 1m 4k; truncate 8k; "
			"seek -h 0; pread 0 8k; mv /d/f /d/g; sync; pwrite /d/g 0 4k; fsync /d/g; "
			"touch /d/new; powercut";
	same_in_pieces("after", a);
	same_in_pieces("before", a);
	/* the cleaner drops /snap while the next commands run: the pieces
	 * must leave it exactly as far along */
	same_in_pieces("after", "btrfs quota enable; btrfs subvolume create /sv; touch /sv/a; "
				"pwrite /sv/a 0 16k; btrfs subvolume snapshot /sv /snap; sync; "
				"btrfs subvolume delete /snap; touch -n 30 /f; fsync /; sync; "
				"fdatasync /sv/a; powercut");
}

/* An empty script, then commands: the same records and recording (only
 * the count of events says the empty run looked once). */
static void test_from_empty(void)
{
	const char *script = "mkdir /d; touch /d/f; pwrite /d/f 0 8k; fsync /d/f";
	lab_run *r = open_rec("after", script);
	if (!r)
		return;
	run_to_end(r);
	char *whole = NULL, *wt = NULL;
	CHECK_EQ(lab_result_json(r, &whole), 0);
	CHECK_EQ(lab_trace_json(r, 0, &wt), 0);
	double ev = lab_events(r);
	lab_close(r);
	r = open_rec("after", "");
	if (!r)
		return;
	run_to_end(r);
	CHECK(lab_events(r) >= 1);
	CHECK_EQ(lab_append(r, script, NULL), 0);
	run_to_end(r);
	char *pieces = NULL, *pt = NULL;
	CHECK_EQ(lab_result_json(r, &pieces), 0);
	CHECK_EQ(lab_trace_json(r, 0, &pt), 0);
	CHECK_EQ(lab_events(r), ev + 1);
	char *d1 = whole ? strstr(whole, "\"details\"") : NULL, *d2 = pieces ? strstr(pieces, "\"details\"") : NULL;
	CHECK(d1 && d2 && !strcmp(d1, d2));
	char *e1 = wt ? strstr(wt, "\"events\"") : NULL, *e2 = pt ? strstr(pt, "\"events\"") : NULL;
	CHECK(e1 && e2 && !strcmp(e1, e2));
	lab_free(whole), lab_free(wt), lab_free(pieces), lab_free(pt);
	lab_close(r);
}

static void test_refusals(void)
{
	lab_run *r = open_rec("after", "mkdir /d; touch /d/f");
	if (!r)
		return;
	/* before the run finished */
	char *err = NULL;
	CHECK_EQ(lab_append(r, "sync", &err), LAB_ESTATE);
	lab_free(err);
	run_to_end(r);
	char *before = result_and_trace(r);
	/* a bad line: refused with the whole script's line number, nothing changes */
	err = NULL;
	CHECK_EQ(lab_append(r, "rm /d", &err), LAB_EINVAL);
	CHECK(err && !strcmp(err, "line 3: rm /d: directory not empty"));
	lab_free(err);
	CHECK_EQ(lab_append(r, "touch /x; rm /nope", &err), LAB_ENOENT);
	CHECK(err && strstr(err, "line 4: rm /nope"));
	lab_free(err);
	CHECK_EQ(lab_append(r, "  ", &err), LAB_EINVAL);
	lab_free(err);
	char *same = result_and_trace(r);
	CHECK(before && same && !strcmp(before, same));
	free(same);
	free(before);
	int done = 0;
	CHECK_EQ(lab_step(r, 10, &done), 0);
	CHECK_EQ(done, 1);
	/* then a good one runs */
	CHECK_EQ(lab_append(r, "rm /d/f; rm /d", NULL), 0);
	run_to_end(r);
	char *js = NULL;
	CHECK_EQ(lab_result_json(r, &js), 0);
	CHECK(js && strstr(js, "\"commands\":4,"));
	lab_free(js);
	/* after a power cut, nothing more */
	CHECK_EQ(lab_append(r, "powercut", NULL), 0);
	run_to_end(r);
	CHECK_EQ(lab_append(r, "sync", &err), LAB_EINVAL);
	CHECK(err && strstr(err, "line 6: sync"));
	lab_free(err);
	lab_close(r);
	/* an experiment without a script */
	r = t_open("untar", "before", "", 1);
	if (r) {
		CHECK_EQ(lab_append(r, "sync", &err), LAB_ENOTSUP);
		lab_free(err);
		lab_close(r);
	}
	CHECK_EQ(lab_append(NULL, "sync", NULL), LAB_EINVAL);
}

int main(void)
{
	test_pieces();
	test_from_empty();
	test_refusals();
	T_DONE();
}
