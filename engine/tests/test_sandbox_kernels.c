/*
 * test_sandbox_kernels.c - the sandbox's parameters: `kernel` picks the
 * after run's kernel from every one patches.def has (6.1 there is the
 * before run, byte for byte), each switch left at "kernel" follows it and
 * otherwise wins, and fs_gib is the device the file system is made on.
 */
#include <stdlib.h>
#include <string.h>

#include "fs.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

static const char *script = "touch /f; pwrite /f 0 64k; pwrite 1m 4k; seek -d 70k; seek -h 0; "
			    "pread 0 128k; truncate 8k; fsync; seek -d 4k; powercut";

static char *details(const char *variant, const char *params)
{
	char p[1024];
	snprintf(p, sizeof p, "script=%s%s%s", script, *params ? "\n" : "", params);
	lab_run *r = t_open("sandbox", variant, p, 1);
	if (!r)
		return NULL;
	int done = 0, rc = 0;
	while (!done && !rc)
		rc = lab_step(r, 100000, &done);
	CHECK_EQ(rc, 0);
	char *js = NULL;
	CHECK_EQ(lab_result_json(r, &js), 0);
	lab_close(r);
	char *d = js ? strstr(js, "\"details\":") : NULL;
	char *out = d ? strdup(d) : NULL;
	lab_free(js);
	return out;
}

static patchset bits(const char *params)
{
	lab_run *r = t_open("sandbox", "after", params, 1);
	patchset ps = { 0 };
	if (r) {
		ps = r->patches;
		lab_close(r);
	}
	return ps;
}

int main(void)
{
	/* the kernels: every one of patches.def, in its order; 6.2 by default */
	const lab_exp *e = exp_find("sandbox");
	int ki = exp_param_index(e, "kernel");
	CHECK(ki >= 0);
	const param_desc *kd = exp_param_desc(e, ki);
	int n = 0;
	for (; kd->values[n]; n++)
		CHECK(!strcmp(kd->values[n], patch_kernel_get(n)->name));
	CHECK_EQ(n, patch_kernel_count());
	CHECK(!strcmp(kd->values[(int)kd->def], "6.2"));

	/* the after run on 6.1 is the before run */
	char *b = details("before", ""), *a61 = details("after", "kernel=6.1"), *a = details("after", "");
	CHECK(b && a61 && a && !strcmp(b, a61));
	CHECK(a && b && strcmp(a, b) != 0); /* and 6.2's lseek differs */
	free(b), free(a61), free(a);

	/* a switch at "kernel" follows the kernel; 0 / 1 win */
	patchset k61, k62, ps;
	CHECK_EQ(patch_kernel("6.1", &k61), 0);
	CHECK_EQ(patch_kernel("6.2", &k62), 0);
	CHECK_EQ(bits("").bits, k62.bits);
	CHECK_EQ(bits("kernel=6.1").bits, k61.bits);
	ps = bits("kernel=6.1\np9_file_cache=1");
	CHECK(patch_on(&ps, P_004_LSEEK_CACHED_STATE) && !patch_on(&ps, P_004_NO_HOLE_UPTODATE));
	ps = bits("p1_no_hole_uptodate=0");
	CHECK(!patch_on(&ps, P_004_NO_HOLE_UPTODATE) && patch_on(&ps, P_004_ORDERED_SEARCH));
	ps = bits("kernel=4.16");
	CHECK(!patch_on(&ps, P_003_TRUNC_SKIP_SAME_SIZE_WB) && !patch_on(&ps, P_000_DATA_TICKETS));
	ps = bits("kernel=5.9\nflush=pages\ndata_tickets=1\ncheck_tickets_first=0");
	CHECK(patch_on(&ps, P_000_FLUSH_BY_PAGES) && patch_on(&ps, P_000_DATA_TICKETS) &&
	      patch_on(&ps, P_000_TICKET_CHECK_AFTER_WAIT));
	ps = bits("kernel=6.9\ncheck_tickets_first=1");
	CHECK(!patch_on(&ps, P_000_TICKET_CHECK_AFTER_WAIT) && patch_on(&ps, P_001_PREALLOC_SCRATCH_EB));
	/* bad values: one line, exit 2 at the CLI */
	lab_run *r = NULL;
	char *err = NULL;
	CHECK(lab_open("sandbox", "after", "kernel=7.0", 1, 0, &r, &err) != 0);
	CHECK(r == NULL && err && !strchr(err, '\n'));
	lab_free(err);

	/* fs_gib: the device the file system is made on */
	r = t_open("sandbox", "after", "fs_gib=3\nscript=touch /f; pwrite /f 0 1m; sync", 1);
	if (r) {
		fs_info *fs = *(fs_info **)r->ctx;
		CHECK_EQ(fs->opts.dev_bytes, 3ull << 30);
		int done = 0, rc = 0;
		while (!done && !rc)
			rc = lab_step(r, 100000, &done);
		CHECK_EQ(rc, 0);
		CHECK_EQ(lab_check(r), 0);
		lab_close(r);
	}
	T_DONE();
}
