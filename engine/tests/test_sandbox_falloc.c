/*
 * test_sandbox_falloc.c - the sandbox's falloc (btrfs_fallocate mode 0):
 * a hole gets a prealloc file extent item (no checksums; its extent item
 * at the commit), what has an extent already is left alone, the size
 * grows; the range reads and seeks as a hole; the checker agrees. What
 * the engine cannot model is refused with one line.
 */
#include <stdlib.h>
#include <string.h>

#include "exp_sandbox.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

static char *run(const char *script)
{
	char p[2048];
	snprintf(p, sizeof p, "script=%s", script);
	lab_run *r = t_open("sandbox", "after", p, 1);
	if (!r)
		return NULL;
	int done = 0, rc = 0;
	while (!done && !rc)
		rc = lab_step(r, 100000, &done);
	CHECK_EQ(rc, 0);
	char *js = NULL;
	CHECK_EQ(lab_result_json(r, &js), 0);
	lab_close(r);
	return js;
}

/* The number after "key": in command n's object ("items\":{\"fs" reaches into the items). */
static double cmd_num(const char *js, int n, const char *key)
{
	const char *p = strstr(js, "\"commands\":[");
	for (int i = 0; p && i <= n; i++)
		p = strstr(p + 1, "{\"line\":");
	if (!p)
		return -1e300;
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	const char *q = strstr(p, k);
	const char *end = strstr(p + 1, "{\"line\":");
	if (!q || (end && q > end))
		return -1e300;
	return strtod(q + strlen(k), NULL);
}

int main(void)
{
	char *js = run("touch /f; falloc /f 64k 1m; seek -d 0; seek -h 64k; pread 0 2m; sync; "
		       "pwrite /f 0 8k; falloc 0 128k; sync; powercut");
	CHECK(js != NULL);
	if (js) {
		CHECK(strstr(js, "\"check_failures\":0"));
		/* one prealloc item in the fs tree, no checksum */
		CHECK_EQ(cmd_num(js, 1, "items\":{\"fs"), 1);
		CHECK_EQ(cmd_num(js, 1, "csum"), 0);
		CHECK_EQ(cmd_num(js, 1, "pages_written"), 0);
		/* a prealloc range is a hole to SEEK_DATA / SEEK_HOLE and reads */
		CHECK_EQ(cmd_num(js, 2, "result"), -1);
		CHECK_EQ(cmd_num(js, 3, "result"), 65536);
		CHECK_EQ(cmd_num(js, 4, "result"), 65536 + (1 << 20)); /* up to the new size */
		/* the commit: its extent item (one data ref) */
		CHECK_EQ(cmd_num(js, 5, "items\":{\"fs\":0,\"extent"), 1);
		/* over 8k of dirty data and the prealloc at 64k: the data is written
		 * first, the hole between gets the only new item */
		CHECK_EQ(cmd_num(js, 7, "pages_written"), 2);
		CHECK_EQ(cmd_num(js, 7, "items\":{\"fs"), 2); /* the data's extent and [8k, 64k) */
		CHECK(strstr(js, "\"found_size\":1114112"));
		free(js);
	}
	/* refused, one line each */
	sb_script s;
	char err[200];
	CHECK_EQ(sbs_parse("touch /f; falloc -k /f 0 4k", &s, err, sizeof err), LAB_ENOTSUP);
	CHECK(strstr(err, "line 2: falloc -k /f 0 4k: falloc -k is not modelled") && !strchr(err, '\n'));
	sbs_free(&s);
	CHECK_EQ(sbs_parse("touch /f; falloc /f 0 0", &s, err, sizeof err), LAB_EINVAL);
	sbs_free(&s);
	CHECK_EQ(sbs_parse("touch /f; falloc /f 60m 8m", &s, err, sizeof err), LAB_ERANGE);
	sbs_free(&s);
	CHECK_EQ(sbs_parse("touch /f; touch /g; reflink /f /g", &s, err, sizeof err), LAB_ENOTSUP);
	CHECK(strstr(err, "line 3: reflink /f /g: not modelled: the engine has no clone"));
	sbs_free(&s);
	CHECK_EQ(sbs_parse("touch /f; ln /f /g", &s, err, sizeof err), LAB_ENOTSUP);
	CHECK(strstr(err, "hard link"));
	sbs_free(&s);
	T_DONE();
}
