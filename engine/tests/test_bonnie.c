/* test_bonnie.c - seed 001's experiment: bonnie++'s file phase with fsync
 * (-b). The two clone paths (a clone per subvolume leaf under its read
 * lock before patch 001; one scratch eb per fsync, reused for every leaf,
 * after), what each op does (one create: two full-sync fsyncs; one
 * delete: one), the allocator's pressure coming from the page cache, the
 * time spent allocating inside leaf locks, and repeatability. */
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

/* 300 files of 128 KiB in 3 directories, on 64 MiB of RAM (half of it
 * not cache): the data set (37.5 MiB a phase) fills the page cache, so
 * allocations meet pressure. */
static const char *const SMALL = "files=300\ndirs=3\nfile_bytes=131072\nram_gib=0.0625";

static void test_clone_paths(void)
{
	t_res b = t_run("bonnie", "before", SMALL, 1);
	t_res a = t_run("bonnie", "after", SMALL, 1);
	double lb = t_metric(&b, "leaves_copied"), la = t_metric(&a, "leaves_copied");
	/* the same leaves are copied either way ... */
	CHECK(lb > 0);
	CHECK_NEAR(la, lb, 0.02);
	/* ... before, each into a fresh clone */
	CHECK_EQ(t_metric(&b, "eb_allocs"), lb);
	/* after, one scratch eb per full-sync fsync: two per create (the
	 * file, its directory), one per delete, reused for every leaf */
	CHECK_EQ(t_metric(&a, "eb_allocs"), 2 * (2 * 300) + 2 * 300);
	CHECK(la > 2 * t_metric(&a, "eb_allocs") / 2);
	CHECK(t_metric(&a, "eb_allocs") < lb);
	/* no allocation inside a leaf lock after the patch */
	CHECK_EQ(t_metric(&a, "alloc_locked_max_ms"), 0);
	CHECK(t_metric(&a, "leaf_hold_max_ms") < 0.05);
	/* one log commit per fsync in a one-process benchmark */
	CHECK_EQ(t_metric(&b, "log_commits"), 3 * 2 * 300);
	CHECK_EQ(t_metric(&a, "log_commits"), 3 * 2 * 300);
	/* every phase ran and has a latency, a p99 below it and a rate */
	static const char *const ph[] = { "seq_create", "seq_stat", "seq_delete",
					  "rand_create", "rand_stat", "rand_delete" };
	for (int i = 0; i < 6; i++) {
		char m[40], p[40], r[40];
		snprintf(m, sizeof m, "%s_lat_ms", ph[i]);
		snprintf(p, sizeof p, "%s_p99_ms", ph[i]);
		snprintf(r, sizeof r, "%s_per_s", ph[i]);
		CHECK(t_metric(&a, m) > 0);
		CHECK(t_metric(&a, p) <= t_metric(&a, m));
		CHECK(t_metric(&a, r) > 0);
	}
}

/* Under pressure, before the patch allocations happen inside leaf locks
 * and some of them stall there; the stalls follow the page cache: with
 * memory for the whole data set there is no pressure and no stall. */
static void test_pressure(void)
{
	int held_stall = 0;
	double stalls_b = 0, stalls_a = 0;
	for (uint32_t seed = 1; seed <= 4; seed++) {
		t_res b = t_run("bonnie", "before", SMALL, seed);
		t_res a = t_run("bonnie", "after", SMALL, seed);
		stalls_b += t_metric(&b, "eb_stalls");
		stalls_a += t_metric(&a, "eb_stalls");
		/* a leaf held across a stall: the hold includes the allocation */
		if (t_metric(&b, "alloc_locked_max_ms") > 0.5) {
			held_stall++;
			CHECK(t_metric(&b, "leaf_hold_max_ms") >= t_metric(&b, "alloc_locked_max_ms"));
		}
		CHECK(t_metric(&b, "page_stalls") > 0);
	}
	CHECK(held_stall >= 1);
	/* more allocations, more of them meet reclaim */
	CHECK(stalls_b > stalls_a);
	/* 1 GiB of RAM holds both phases' data: nothing stalls */
	t_res roomy = t_run("bonnie", "before", "files=300\ndirs=3\nfile_bytes=131072\nram_gib=1", 1);
	CHECK_EQ(t_metric(&roomy, "eb_stalls"), 0);
	CHECK_EQ(t_metric(&roomy, "page_stalls"), 0);
	CHECK(t_metric(&roomy, "alloc_locked_max_ms") < 0.01);
}

/* A delete fsyncs the directory: before the patch each index leaf the
 * transaction changed is cloned; the random order spreads the deletes
 * over more leaves than the sequential one. */
static void test_delete_leaves(void)
{
	const char *seq = "files=300\ndirs=1\nfile_bytes=4096\nram_gib=1";
	t_res b = t_run("bonnie", "before", seq, 1);
	t_res a = t_run("bonnie", "after", seq, 1);
	/* one directory of 300 entries spans several leaves: more leaves
	 * than fsyncs, so before allocates more than after */
	CHECK(t_metric(&b, "eb_allocs") > 1.5 * t_metric(&a, "eb_allocs"));
}

/* Same seed, same run; another seed draws other names and stalls. */
static void test_repeatable(void)
{
	t_res x = t_run("bonnie", "before", SMALL, 3);
	t_res y = t_run("bonnie", "before", SMALL, 3);
	t_res z = t_run("bonnie", "before", SMALL, 4);
	CHECK(memcmp(x.m, y.m, sizeof x.m) == 0);
	CHECK(memcmp(x.m, z.m, sizeof x.m) != 0);
}

/* Bad input is refused before anything runs. */
static void test_params(void)
{
	lab_run *r = NULL;
	char *err = NULL;
	CHECK(lab_open("bonnie", "before", "files=0", 1, 0, &r, &err) < 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("bonnie", "before", "scale=0", 1, 0, &r, &err) < 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("bonnie", "before", "ram_gib=0.01", 1, 0, &r, &err) < 0);
	lab_free(err);
	double est = 0;
	double def = 0;
	CHECK_EQ(lab_estimate("bonnie", "files=1000", &est, &def, NULL), 0);
	/* in events, per file plus the mount: 1000 files ~ 1000/20480 of
	 * the default's 20,480 */
	CHECK(est > 0 && est < def);
	CHECK_NEAR(est / def, 1000.0 / 20480, 0.05);
}

int main(void)
{
	test_params();
	test_clone_paths();
	test_pressure();
	test_delete_leaves();
	test_repeatable();
	T_DONE();
}
