/*
 * test_untar.c - seed 000 end to end: the untar experiment's archive (a
 * Firefox-like tree: counts, sizes, the inline share), its switches (the
 * kernel preset and each switch overriding it, before ignoring them), the
 * mechanism on a file system that runs short of metadata space (5.10
 * flushes a few whole inodes per cycle and needs many more cycles than
 * the fix, whose cycles write about the pages they asked for; 5.9 checks
 * its tickets before its wait), and every input acting on the run.
 */
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "t.h"
#include "t_lab.h"

/* The whole result (metrics and details) of a run. */
static char *result_of(const char *variant, const char *params)
{
	lab_run *r = t_open("untar", variant, params, 1);
	if (!r)
		return NULL;
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 1u << 20, &done);
	CHECK_EQ(rc, 0);
	char *json = NULL;
	CHECK_EQ(lab_result_json(r, &json), 0);
	lab_close(r);
	return json;
}

/* A number of the details object: the first "key": after `after` (or
 * the start), -1 if absent. */
static double detail(const char *json, const char *after, const char *key)
{
	const char *p = json;
	if (after && !(p = strstr(json, after)))
		return -1;
	char k[64];
	snprintf(k, sizeof k, "\"%s\":", key);
	p = strstr(p, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

/* The archive: 226,000 files and 22,600 directories at scale 1 (here a
 * twentieth, the same strata), lognormal sizes with median 1.2 KB and
 * mean 6.3 KB, most files small enough to be inline, and a tar archive of
 * 1.5 GiB at full scale. */
static void test_archive(void)
{
	char *j = result_of("after", "scale=0.05\ndecompress=none");
	CHECK(j != NULL);
	if (!j)
		return;
	CHECK_EQ(detail(j, NULL, "files"), 11300);
	CHECK_EQ(detail(j, NULL, "dirs"), 1130);
	double mean = detail(j, "\"archive\"", "mean_bytes");
	double small = detail(j, "\"archive\"", "at_most_2k");
	double ppf = detail(j, "\"archive\"", "pages_per_file");
	double mib = detail(j, NULL, "archive_mib");
	fprintf(stderr, "archive at 5%%: mean %.0f B, %.1f%% at most 2 KiB, %.2f pages a file, "
		"%.1f MiB (x20: %.2f GiB)\n", mean, 100 * small, ppf, mib, mib * 20 / 1024);
	CHECK(mean > 6000 && mean < 6600);
	CHECK(small > 0.60 && small < 0.63);
	CHECK(ppf > 2.1 && ppf < 2.4);
	CHECK(mib * 20 / 1024 > 1.45 && mib * 20 / 1024 < 1.55);
	lab_free(j);
	/* the same tree in every run: the seed draws what varies, not it */
	char *a = result_of("after", "scale=0.002\ndecompress=none");
	lab_run *r = t_open("untar", "after", "scale=0.002\ndecompress=none", 9);
	int done = 0;
	while (r && !done && lab_step(r, 1u << 20, &done) == 0)
		;
	char *b = NULL;
	CHECK(r && lab_result_json(r, &b) == 0);
	CHECK(a && b && detail(a, "\"archive\"", "data_bytes") == detail(b, "\"archive\"", "data_bytes"));
	lab_close(r);
	lab_free(a);
	lab_free(b);
}

/* The kernel preset and the switches: kernel=5.9 is 5.9's three values;
 * a switch overrides the preset; before runs 5.10 whatever is set. */
static void test_switches(void)
{
	const char *base = "scale=0.01\nfs_gib=3\nfs_used_gib=0\ndecompress=zstd";
	char p1[256], p2[256];
	/* 5.9 = the flusher, no data tickets, tickets checked first */
	snprintf(p1, sizeof p1, "%s\nkernel=5.9", base);
	snprintf(p2, sizeof p2, "%s\nkernel=5.10\nflush=flusher\ndata_tickets=0\ncheck_tickets_first=1",
		 base);
	char *a = result_of("after", p1), *b = result_of("after", p2);
	CHECK(a && b && strcmp(a, b) == 0);
	lab_free(a);
	lab_free(b);
	/* the after kernel with 5.10's flush is 5.10: the before run */
	snprintf(p1, sizeof p1, "%s\nflush=inodes", base);
	a = result_of("after", p1);
	b = result_of("before", base);
	CHECK(a && b && strcmp(a, b) == 0);
	lab_free(a);
	lab_free(b);
	/* before ignores the switches */
	snprintf(p1, sizeof p1, "%s\nflush=pages\nkernel=5.9", base);
	a = result_of("before", p1);
	b = result_of("before", base);
	CHECK(a && b && strcmp(a, b) == 0);
	lab_free(a);
	lab_free(b);
	/* the bits a preset and a switch give the after run */
	lab_run *r = t_open("untar", "after", "kernel=5.9\nflush=pages", 1);
	CHECK(r && patch_on(&r->patches, P_000_START_DELALLOC_ROOTS) &&
	      patch_on(&r->patches, P_000_FLUSH_BY_PAGES) && !patch_on(&r->patches, P_000_DATA_TICKETS) &&
	      !patch_on(&r->patches, P_000_TICKET_CHECK_AFTER_WAIT));
	lab_close(r);
	r = t_open("untar", "after", "check_tickets_first=1\ndata_tickets=0", 1);
	CHECK(r && patch_on(&r->patches, P_000_FLUSH_BY_PAGES) &&
	      !patch_on(&r->patches, P_000_DATA_TICKETS) &&
	      !patch_on(&r->patches, P_000_TICKET_CHECK_AFTER_WAIT));
	lab_close(r);
	r = t_open("untar", "before", "kernel=5.9", 1);
	CHECK(r && patch_on(&r->patches, P_000_START_DELALLOC_ROOTS) &&
	      !patch_on(&r->patches, P_000_FLUSH_BY_PAGES) && patch_on(&r->patches, P_000_DATA_TICKETS));
	lab_close(r);
	/* bad values are refused before anything runs */
	const char *bad[] = { "flush=whole", "kernel=5.8", "data_tickets=yes", "fs_gib=0",
			      "scale=0", "ram_gib=0", "cpus=0", "decompress=gzip",
			      "meta_profile=raid1", "fs_used_gib=-1",
			      /* more in chunks than the device holds */
			      "fs_gib=512\nfs_used_gib=512", "fs_gib=13" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *err = NULL;
		lab_run *x = NULL;
		CHECK(lab_open("untar", "after", bad[i], 1, 0, &x, &err) != 0);
		CHECK(x == NULL && err != NULL);
		lab_free(err);
	}
}

/*
 * The mechanism, on a file system whose overcommit ceiling the untar
 * reaches (a twentieth of the tree on 13 GiB: the seed's run scaled
 * down): 5.10 flushes `items` whole inodes per round (about 20 pages),
 * the fix about the pages it asked for (hundreds), so 5.10 needs many
 * more cycles and its writer waits much longer; 5.9 flushes by pages too.
 */
static void test_cycles(void)
{
	const char *p = "scale=0.05\nfs_gib=13\nfs_used_gib=0";
	t_res b = t_run("untar", "before", p, 1);
	t_res a = t_run("untar", "after", p, 1);
	t_res n = t_run("untar", "after", "scale=0.05\nfs_gib=13\nfs_used_gib=0\nkernel=5.9", 1);
	double cb = t_metric(&b, "reclaim_cycles"), ca = t_metric(&a, "reclaim_cycles");
	fprintf(stderr, "13 GiB, 5%%: untar 5.10 %.2f s, fix %.2f s, 5.9 %.2f s; cycles %.0f / %.0f / "
		"%.0f; pages per cycle %.1f / %.1f / %.1f; inodes per cycle %.1f / %.1f\n",
		t_metric(&b, "elapsed_s"), t_metric(&a, "elapsed_s"), t_metric(&n, "elapsed_s"), cb, ca,
		t_metric(&n, "reclaim_cycles"), t_metric(&b, "pages_flushed_per_cycle"),
		t_metric(&a, "pages_flushed_per_cycle"), t_metric(&n, "pages_flushed_per_cycle"),
		t_metric(&b, "inodes_per_cycle"), t_metric(&a, "inodes_per_cycle"));
	CHECK(t_metric(&b, "meta_tickets") > 0 && t_metric(&a, "meta_tickets") > 0);
	CHECK(cb > 5 * ca);
	CHECK(t_metric(&b, "pages_flushed_per_cycle") * 5 < t_metric(&a, "pages_flushed_per_cycle"));
	/* 5.10: at most `items` inodes a round, 3 rounds a cycle */
	CHECK(t_metric(&b, "inodes_per_cycle") <= 3 * 20);
	/* the fix writes what it asked for, give or take a file */
	CHECK_NEAR(t_metric(&a, "pages_flushed_per_cycle"), t_metric(&a, "pages_needed_per_cycle"),
		   0.05 * t_metric(&a, "pages_needed_per_cycle"));
	CHECK(t_metric(&b, "writer_ticket_s") > 10 * t_metric(&a, "writer_ticket_s"));
	CHECK(t_metric(&b, "elapsed_s") > 1.5 * t_metric(&a, "elapsed_s"));
	CHECK(t_metric(&n, "pages_flushed_per_cycle") > 5 * t_metric(&b, "pages_flushed_per_cycle"));
	/* every file ends up extracted in all three */
	CHECK_EQ(t_metric(&b, "files"), 11300);
	CHECK_EQ(t_metric(&a, "files"), 11300);
	/* the peak reservation sits at the ceiling (the end's: the tree
	 * blocks written since take a little of it) */
	CHECK(t_metric(&b, "peak_may_use_gib") <= t_metric(&b, "overcommit_limit_gib") * 1.02);
	CHECK(t_metric(&b, "peak_may_use_gib") > 0.95 * t_metric(&b, "overcommit_limit_gib"));
}

/* A ceiling the untar never reaches (a fresh 2 TiB file system at a
 * fiftieth of the tree): no ticket, no reclaim, the three kernels the
 * same, and tar as fast as the decompressor lets it go. */
static void test_no_tickets(void)
{
	const char *p = "scale=0.02\nfs_used_gib=0";
	t_res b = t_run("untar", "before", p, 1);
	t_res a = t_run("untar", "after", p, 1);
	CHECK_EQ(t_metric(&b, "meta_tickets"), 0);
	CHECK_EQ(t_metric(&b, "reclaim_cycles"), 0);
	CHECK_EQ(t_metric(&b, "elapsed_s"), t_metric(&a, "elapsed_s"));
	CHECK(t_metric(&b, "peak_may_use_gib") < t_metric(&b, "overcommit_limit_gib"));
	/* the limit: total_bytes + an eighth of ~2 TiB unallocated */
	CHECK(t_metric(&b, "overcommit_limit_gib") > 250 && t_metric(&b, "overcommit_limit_gib") < 260);
	/* xz sets the pace: tar ends a moment after the decompressor */
	CHECK_NEAR(t_metric(&b, "elapsed_s"), t_metric(&b, "decompress_s"),
		   0.02 * t_metric(&b, "elapsed_s"));
}

/* Every input acts through the mechanism. */
static void test_inputs(void)
{
	const char *p = "scale=0.02\nfs_gib=5\nfs_used_gib=0";
	t_res xz = t_run("untar", "before", p, 1);
	t_res zs = t_run("untar", "before", "scale=0.02\nfs_gib=5\nfs_used_gib=0\ndecompress=zstd", 1);
	t_res no = t_run("untar", "before", "scale=0.02\nfs_gib=5\nfs_used_gib=0\ndecompress=none", 1);
	/* the decompressor's CPU: xz ~11x zstd's, none at all */
	CHECK(t_metric(&xz, "decompress_s") > 8 * t_metric(&zs, "decompress_s"));
	CHECK_EQ(t_metric(&no, "decompress_s"), 0);
	CHECK(t_metric(&no, "elapsed_s") <= t_metric(&zs, "elapsed_s"));
	/* a bigger file system: a higher ceiling, fewer tickets */
	t_res big = t_run("untar", "before", "scale=0.02\nfs_gib=10\nfs_used_gib=0\ndecompress=none", 1);
	CHECK(t_metric(&big, "overcommit_limit_gib") > 1.5 * t_metric(&no, "overcommit_limit_gib"));
	CHECK(t_metric(&big, "meta_tickets") < t_metric(&no, "meta_tickets"));
	/* little memory: background writeback starts past 10% of the
	 * dirtyable memory (97 MiB of 1 GiB), so less is dirty when tar
	 * exits than with 256 GiB, where nothing is written back */
	t_res r1 = t_run("untar", "before", "scale=0.1\ndecompress=none\nram_gib=1", 1);
	t_res r256 = t_run("untar", "before", "scale=0.1\ndecompress=none", 1);
	fprintf(stderr, "dirty at exit: %.0f MiB with 1 GiB of RAM, %.0f MiB with 256\n",
		t_metric(&r1, "dirty_mib_at_exit"), t_metric(&r256, "dirty_mib_at_exit"));
	CHECK(t_metric(&r1, "dirty_mib_at_exit") < 0.6 * t_metric(&r256, "dirty_mib_at_exit"));
	CHECK(t_metric(&r1, "dirty_mib_at_exit") < 110);
	/* a disk: each reclaim write waits for a seek */
	t_res hdd = t_run("untar", "before",
			  "scale=0.02\nfs_gib=5\nfs_used_gib=0\ndecompress=none\ndevice=hdd", 1);
	CHECK(t_metric(&hdd, "elapsed_s") > t_metric(&no, "elapsed_s"));
	/* cpus: flush_workers has min(cpus + 2, 8) threads; with one CPU
	 * tar, the decompressor and the workers share it */
	t_res one = t_run("untar", "before", "scale=0.02\nfs_gib=5\nfs_used_gib=0\ncpus=1", 1);
	CHECK(t_metric(&one, "elapsed_s") > t_metric(&xz, "elapsed_s"));
	/* scale: the tree's share */
	CHECK_NEAR(t_metric(&xz, "files"), 4520, 0.5);
}

/* The file system's state: space already in chunks leaves less to back
 * reservations, so the same untar on the same device meets tickets;
 * DUP metadata halves what the unallocated space backs, and a disk gets
 * DUP by default (mkfs of 2020 on a rotational device). */
static void test_fs_state(void)
{
	const char *fresh = "scale=0.02\nfs_gib=64\nfs_used_gib=0\ndecompress=none";
	const char *used = "scale=0.02\nfs_gib=64\nfs_used_gib=56\ndecompress=none";
	t_res f = t_run("untar", "before", fresh, 1);
	t_res u = t_run("untar", "before", used, 1);
	t_res ua = t_run("untar", "after", used, 1);
	t_res ud = t_run("untar", "before", "scale=0.02\nfs_gib=64\nfs_used_gib=56\ndecompress=none\n"
					    "meta_profile=dup", 1);
	t_res hdd = t_run("untar", "before", "scale=0.02\nfs_gib=64\nfs_used_gib=56\ndecompress=none\n"
					     "device=hdd", 1);
	t_res hdd1 = t_run("untar", "before", "scale=0.02\nfs_gib=64\nfs_used_gib=56\ndecompress=none\n"
					      "device=hdd\nmeta_profile=single", 1);
	fprintf(stderr, "64 GiB, 2%%: limit fresh %.2f GiB, 56 GiB used %.2f (DUP %.2f, disk %.2f); "
		"5.10 %.2f s / fix %.2f s with %.0f / %.0f cycles (fresh %.2f s)\n",
		t_metric(&f, "overcommit_limit_gib"), t_metric(&u, "overcommit_limit_gib"),
		t_metric(&ud, "overcommit_limit_gib"), t_metric(&hdd, "overcommit_limit_gib"),
		t_metric(&u, "elapsed_s"), t_metric(&ua, "elapsed_s"), t_metric(&u, "reclaim_cycles"),
		t_metric(&ua, "reclaim_cycles"), t_metric(&f, "elapsed_s"));
	/* fresh: total + (64 - 2 GiB in chunks) / 8; used: (64 - 56 - 2) / 8 */
	CHECK(t_metric(&f, "overcommit_limit_gib") > 8.5 && t_metric(&f, "overcommit_limit_gib") < 8.8);
	CHECK(t_metric(&u, "overcommit_limit_gib") > 1.6 && t_metric(&u, "overcommit_limit_gib") < 1.8);
	CHECK_EQ(t_metric(&f, "reclaim_cycles"), 0);
	CHECK(t_metric(&u, "reclaim_cycles") > 10);
	CHECK(t_metric(&u, "elapsed_s") > 1.3 * t_metric(&ua, "elapsed_s"));
	CHECK(t_metric(&u, "elapsed_s") > 1.3 * t_metric(&f, "elapsed_s"));
	/* DUP: (64 - 56 - 3) / 16 + 1 GiB of the new chunk */
	CHECK(t_metric(&ud, "overcommit_limit_gib") < 0.85 * t_metric(&u, "overcommit_limit_gib"));
	CHECK(t_metric(&ud, "reclaim_cycles") > t_metric(&u, "reclaim_cycles"));
	CHECK_EQ(t_metric(&hdd, "overcommit_limit_gib"), t_metric(&ud, "overcommit_limit_gib"));
	CHECK_EQ(t_metric(&hdd1, "overcommit_limit_gib"), t_metric(&u, "overcommit_limit_gib"));
}

int main(void)
{
	test_archive();
	test_switches();
	test_cycles();
	test_no_tickets();
	test_inputs();
	test_fs_state();
	T_DONE();
}
