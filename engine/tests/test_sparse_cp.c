/*
 * test_sparse_cp.c - the sparse-cp experiment (seed 004) end to end: the
 * visible 128M rows, and the shapes the mechanism must give: the cold
 * gain comes from patch 1/9 alone, the cached case is linear and nearly
 * unchanged, the delalloc case is no slower after, the lseek lock work
 * is bounded by readahead, not by the file size; same seed, same result.
 */
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

/* One variant of sparse-cp with random seed 1 (t_lab.h). */
static t_res run(const char *variant, const char *params)
{
	return t_run("sparse-cp", variant, params, 1);
}

#define M(x, name) t_metric(x, name)

static void test_published_rows(void)
{
	t_res cb = run("before", "state=cached"), ca = run("after", "state=cached");
	CHECK_NEAR(M(&cb, "cp_ms"), 122, 0.25);
	CHECK_NEAR(M(&ca, "cp_ms"), 109, 0.25);
	t_res ob = run("before", "state=cold"), oa = run("after", "state=cold");
	CHECK_NEAR(M(&ob, "cp_ms"), 20144, 0.25);
	CHECK_NEAR(M(&oa, "cp_ms"), 210, 0.25);
	/* 2 search lseeks per extent: 32768 at 128M */
	CHECK_EQ(M(&ob, "lseek_calls"), 32768);
	CHECK_EQ(M(&oa, "lseek_calls"), 32768);
	/* cold: the tree blocks are read again, cached: not */
	CHECK(M(&oa, "metadata_reads") > 50);
	CHECK_EQ(M(&ca, "metadata_reads"), 0);
	/* delalloc: not slower after (the visible rows: 16574 -> 6277 ms) */
	t_res db = run("before", "state=delalloc"), da = run("after", "state=delalloc");
	CHECK(M(&db, "cp_ms") >= M(&da, "cp_ms"));
	CHECK(M(&da, "cp_ms") > 5 * M(&ca, "cp_ms"));
	CHECK(M(&db, "delalloc_extents_at_cp") > 0);
	CHECK(M(&da, "state_cache_hits") > 0);
	CHECK_EQ(M(&db, "state_cache_hits"), 0);
}

static void test_cold_gain_is_patch_1(void)
{
	t_res b = run("before", "state=cold\nfile_mib=32");
	t_res a = run("after", "state=cold\nfile_mib=32");
	t_res no1 = run("after", "state=cold\nfile_mib=32\np1_no_hole_uptodate=0");
	t_res only1 = run("after", "state=cold\nfile_mib=32\np2_early_exit=0\np3_skip_searches=0\n"
			"p4_ordered_search=0\np6_cached_state=0\np9_file_cache=0");
	CHECK(M(&b, "cp_ms") > 20 * M(&a, "cp_ms"));
	/* turning 1/9 off brings most of the cost back */
	CHECK(M(&no1, "cp_ms") > 0.8 * M(&b, "cp_ms"));
	/* 1/9 alone gives the gain */
	CHECK_NEAR(M(&only1, "cp_ms"), M(&a, "cp_ms"), 0.05);
	/* what remains is the range lock walking the hole records ahead */
	CHECK(M(&b, "lock_records_avg") > 100 * M(&a, "lock_records_avg"));
}

static void test_shapes(void)
{
	/* cached: linear in the file size, nearly unchanged by the series */
	t_res c32 = run("before", "state=cached\nfile_mib=32");
	t_res c64 = run("before", "state=cached\nfile_mib=64");
	t_res c64a = run("after", "state=cached\nfile_mib=64");
	CHECK_NEAR(M(&c64, "cp_ms") / M(&c32, "cp_ms"), 2.0, 0.1);
	CHECK_NEAR(M(&c64a, "cp_ms"), M(&c64, "cp_ms"), 0.15);
	/* cold before: records per lseek bounded by the readahead window */
	t_res o32 = run("before", "state=cold\nfile_mib=32");
	t_res o64 = run("before", "state=cold\nfile_mib=64");
	CHECK_NEAR(M(&o64, "records_per_lseek_avg"), M(&o32, "records_per_lseek_avg"), 0.2);
	CHECK(M(&o64, "records_per_lseek_max") < 2 * 2048 * 2 + 8);
	/* so the cold cost grows about linearly (log n per descent) */
	double g = M(&o64, "cp_ms") / M(&o32, "cp_ms");
	CHECK(g > 1.9 && g < 2.6);
}

static void test_classroom_delalloc(void)
{
	/* a small file with a short expiry: some of it flushed at cp time */
	t_res b = run("before", "state=delalloc\nfile_mib=8\ndirty_expire_s=1\nwb_interval_s=0.5");
	t_res a = run("after", "state=delalloc\nfile_mib=8\ndirty_expire_s=1\nwb_interval_s=0.5");
	CHECK(M(&b, "delalloc_extents_at_cp") > 0);
	CHECK(M(&b, "delalloc_extents_at_cp") < 1024);
	CHECK(M(&b, "flushes") >= 1);
	CHECK(M(&b, "search_records_avg") > 0);
	CHECK(M(&b, "cp_ms") >= M(&a, "cp_ms"));
	/* no writeback: everything is still delalloc */
	t_res n = run("after", "state=delalloc\nfile_mib=8\ndirty_expire_s=600");
	CHECK_EQ(M(&n, "delalloc_extents_at_cp"), 1024);
}

static void test_determinism_and_params(void)
{
	t_res x = run("after", "state=cold\nfile_mib=16\nextent_kib=8\nhole_kib=12");
	t_res y = run("after", "state=cold\nfile_mib=16\nextent_kib=8\nhole_kib=12");
	CHECK_EQ(memcmp(x.m, y.m, sizeof(x.m)), 0);
	/* 16 MiB / 20 KiB per extent */
	CHECK_EQ(M(&x, "lseek_calls"), 2 * ((16 << 20) / (20 << 10) + 1));
	/* bad input is refused, not run */
	lab_run *r = NULL;
	char *err = NULL;
	CHECK(lab_open("sparse-cp", "after", "extent_kib=6", 1, 0, &r, &err) != 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("sparse-cp", "after", "file_mib=0", 1, 0, &r, &err) != 0);
	lab_free(err);
}

/* The "iotree" snapshot lists the io_tree records around cp's position;
 * other names are refused. */
static void test_snapshot(void)
{
	lab_run *r = NULL;
	char *err = NULL;
	CHECK_EQ(lab_open("sparse-cp", "before", "state=cold\nfile_mib=4", 1, 0, &r, &err), 0);
	int done = 0;
	while (!done)
		CHECK_EQ(lab_step(r, 1000000, &done), 0);
	char *js = NULL;
	CHECK_EQ(lab_snapshot_json(r, "iotree", &js), 0);
	CHECK(js && strstr(js, "\"records\":") && strstr(js, "\"ranges\":["));
	/* the whole file was read: every hole page left an UPTODATE record */
	CHECK(js && strstr(js, "UPTODATE"));
	lab_free(js);
	js = NULL;
	CHECK(lab_snapshot_json(r, "nosuch", &js) != 0);
	lab_free(js);
	lab_close(r);
}

/* What writes delalloc back while the creation loop runs, besides the
 * flusher's expiry: each 4 KiB range between holes is its own outstanding
 * extent holding 256 KiB of metadata reservation, so on a small device the
 * loop reaches the overcommit limit and reclaim flushes delalloc (its
 * pwrites wait on tickets); and with little memory the background
 * threshold writes back before the expiry does. */
static void test_creation_writeback(void)
{
	/* no expiry in reach: 1024 ranges, each holding 256 KiB */
	t_res a = t_run("sparse-cp", "after", "file_mib=8\nstate=delalloc\ndirty_expire_s=3600", 1);
	CHECK_EQ(t_metric(&a, "delalloc_extents_at_cp"), 1024);
	CHECK_NEAR(t_metric(&a, "meta_reserved_mib_at_cp"), 1024 * 0.25, 0.01);
	CHECK_EQ(t_metric(&a, "creation_ticket_waits"), 0);
	/* a 2 GiB device: 8192 ranges would hold 2 GiB, the limit is far
	 * lower: tickets, reclaim flushing */
	t_res s2 = t_run("sparse-cp", "after", "file_mib=64\nstate=delalloc\ndirty_expire_s=3600\nfs_gib=2", 1);
	t_res big = t_run("sparse-cp", "after", "file_mib=64\nstate=delalloc\ndirty_expire_s=3600", 1);
	fprintf(stderr, "64 MiB, no expiry: delalloc at cp %.0f extents (%.0f MiB reserved) on 256 GiB, "
		"%.0f (%.0f MiB, %.0f ticket waits, %.0f flushes) on 2 GiB\n",
		t_metric(&big, "delalloc_extents_at_cp"), t_metric(&big, "meta_reserved_mib_at_cp"),
		t_metric(&s2, "delalloc_extents_at_cp"), t_metric(&s2, "meta_reserved_mib_at_cp"),
		t_metric(&s2, "creation_ticket_waits"), t_metric(&s2, "flushes"));
	CHECK_EQ(t_metric(&big, "delalloc_extents_at_cp"), 8192);
	CHECK_EQ(t_metric(&big, "creation_ticket_waits"), 0);
	CHECK(t_metric(&s2, "creation_ticket_waits") > 0);
	CHECK(t_metric(&s2, "flushes") > 0);
	CHECK(t_metric(&s2, "delalloc_extents_at_cp") < 0.5 * 8192);
	CHECK(t_metric(&s2, "meta_reserved_mib_at_cp") < 0.5 * t_metric(&big, "meta_reserved_mib_at_cp"));
	/* 512 MiB of RAM: the background threshold (~49 MiB of dirty pages)
	 * writes the file back long before all 32768 ranges are written */
	t_res lo = t_run("sparse-cp", "after", "file_mib=256\nstate=delalloc\ndirty_expire_s=3600\nram_gib=0.5", 1);
	CHECK(t_metric(&lo, "flushes") > 0);
	CHECK(t_metric(&lo, "delalloc_extents_at_cp") < 32768 / 2);
}

int main(void)
{
	test_snapshot();
	test_creation_writeback();
	test_published_rows();
	test_cold_gain_is_patch_1();
	test_shapes();
	test_classroom_delalloc();
	test_determinism_and_params();
	T_DONE();
}
