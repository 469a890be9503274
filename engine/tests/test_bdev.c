/*
 * test_bdev.c - the simulated block device: queueing behaviour, profiles,
 * flush costs, determinism and bad input.
 */
#include <stdlib.h>

#include "bdev.h"
#include "bdev_profile.h"
#include "fio_points.h"
#include "exp.h"
#include "lab.h"
#include "t.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Closed loop at `depth` on an idle device: `n` IOs of `bs` bytes, each
 * resubmitted the moment one completes. Returns IOPS; *lat_us gets the
 * mean latency. */
static double closed_loop(const char *profile, int op, uint64_t bs, int depth,
			  int n, int seq, double *lat_us)
{
	sim *s = sim_create(7, 0);
	bdev *d = NULL;
	CHECK_EQ(bdev_create(s, profile, &d), 0);
	simtime_t *done = calloc((size_t)depth, sizeof *done);
	double sum = 0;
	simtime_t first = 0, last = 0;
	uint64_t off = 0;
	for (int i = 0; i < n; i++) {
		/* the slot that frees first takes the next IO */
		int k = 0;
		for (int j = 1; j < depth; j++)
			if (done[j] < done[k])
				k = j;
		simtime_t at = done[k];
		uint64_t o = seq ? off : prng_below(sim_prng(s), 1u << 20) * bs;
		off += bs;
		bio b = { .op = op, .offset = o, .bytes = bs, .sequential = seq };
		simtime_t c = bdev_submit(d, &b, at);
		done[k] = c;
		if (i == n / 4)
			first = c;
		if (i > n / 4)
			sum += (double)(c - at);
		if (c > last)
			last = c;
	}
	*lat_us = sum / (n - n / 4 - 1) / 1000.0;
	double iops = (double)(n - n / 4 - 1) * 1e9 / (double)(last - first);
	free(done);
	bdev_destroy(d);
	sim_destroy(s);
	return iops;
}

static void test_bad_input(void)
{
	sim *s = sim_create(1, 0);
	bdev *d = (bdev *)&d;
	CHECK_EQ(bdev_create(s, "no-such-drive", &d), LAB_ENOENT);
	CHECK(d == NULL);
	CHECK_EQ(bdev_create(s, NULL, &d), LAB_EINVAL);
	CHECK_EQ(bdev_create(NULL, "ideal", &d), LAB_EINVAL);
	CHECK(bdev_profile_find("nope") == NULL);
	/* every name the experiments accept is a real profile */
	for (int i = 0; bdev_profile_names[i]; i++) {
		CHECK_EQ(bdev_create(s, bdev_profile_names[i], &d), 0);
		CHECK(strcmp(bdev_profile_name(d), bdev_profile_names[i]) == 0);
		bdev_destroy(d);
	}
	CHECK(strcmp(bdev_profile_names[0], "nvme-dc") == 0);
	sim_destroy(s);
}

static void test_ideal(void)
{
	sim *s = sim_create(1, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "ideal", &d), 0);
	CHECK_EQ(bdev_io(d, BIO_READ, 0, 1 << 20, 1234), 1234);
	CHECK_EQ(bdev_io(d, BIO_WRITE, 4096, 4 << 20, 1234), 1234);
	CHECK_EQ(bdev_flush(d, 99), 99);
	const bdev_stats *st = bdev_get_stats(d);
	CHECK_EQ(st->reads, 1);
	CHECK_EQ(st->writes, 1);
	CHECK_EQ(st->flushes, 1);
	CHECK_EQ(st->read_bytes, 1 << 20);
	CHECK_EQ(st->busy_ns, 0);
	bdev_destroy(d);
	sim_destroy(s);
}

/* At depth 1 a read costs the link plus one op on a flash unit: the
 * median must be the profile's own service time (the tail table has its
 * median at 1). */
static void test_qd1_service_time(void)
{
	const char *names[] = { "nvme-dc", "consumer-ssd", "consumer-nvme" };
	for (int i = 0; i < 3; i++) {
		const bdev_profile *p = bdev_profile_find(names[i]);
		sim *s = sim_create(3, 0);
		bdev *d;
		CHECK_EQ(bdev_create(s, names[i], &d), 0);
		enum { N = 2001 };
		static uint64_t lat[N];
		simtime_t t = 0;
		for (int k = 0; k < N; k++) {
			simtime_t c = bdev_io(d, BIO_READ, (uint64_t)k * 7919 * 4096, 4096, t);
			lat[k] = c - t;
			t = c + 1000;
		}
		qsort(lat, N, sizeof lat[0], cmp_u64);
		double want = p->link_ns + 4096 * p->link_byte_ns + p->rd_op_ns + 4096 * p->rd_byte_ns;
		CHECK_NEAR((double)lat[N / 2], want, 0.05);
		bdev_destroy(d);
		sim_destroy(s);
	}
}

/* Median latency of `n` depth-1 random reads of `bs` bytes on `profile`. */
static double qd1_read_median(const char *profile, uint64_t bs)
{
	sim *s = sim_create(5, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, profile, &d), 0);
	enum { N = 2001 };
	static uint64_t lat[N];
	simtime_t t = 0;
	for (int k = 0; k < N; k++) {
		simtime_t c = bdev_io(d, BIO_READ, (uint64_t)k * 7919 * bs, bs, t);
		lat[k] = c - t;
		t = c + 1000;
	}
	qsort(lat, N, sizeof lat[0], cmp_u64);
	bdev_destroy(d);
	sim_destroy(s);
	return (double)lat[N / 2];
}

/* NAND with a partial-page read mode (consumer-nvme): a read op up to
 * rd_part_bytes pays rd_op_ns, a larger one the full-page sense
 * rd_page_op_ns, so 8 KiB at depth 1 costs much more than 4 KiB while
 * 16 KiB (still one page, one op) costs only its extra bytes more. */
static void test_partial_page_read(void)
{
	const bdev_profile *p = bdev_profile_find("consumer-nvme");
	CHECK(p->rd_part_bytes == 4096 && p->rd_page_op_ns > p->rd_op_ns);
	CHECK(p->chunk_bytes >= 16384);
	double l4 = qd1_read_median("consumer-nvme", 4096);
	double l8 = qd1_read_median("consumer-nvme", 8192);
	double l16 = qd1_read_median("consumer-nvme", 16384);
	double want8 = p->link_ns + 8192 * p->link_byte_ns + p->rd_page_op_ns +
		       8192 * p->rd_byte_ns;
	double want16 = p->link_ns + 16384 * p->link_byte_ns + p->rd_page_op_ns +
			16384 * p->rd_byte_ns;
	CHECK_NEAR(l8, want8, 0.05);
	CHECK_NEAR(l16, want16, 0.05);
	CHECK(l8 > 1.3 * l4);
	CHECK(l16 - l8 < 0.5 * (l8 - l4));
	/* without the mode (nvme-dc) an 8 KiB read is two 4 KiB ops on two
	 * units in parallel: barely slower than one */
	const bdev_profile *dc = bdev_profile_find("nvme-dc");
	CHECK_EQ(dc->rd_part_bytes, 0);
	CHECK(qd1_read_median("nvme-dc", 8192) < 1.2 * qd1_read_median("nvme-dc", 4096));
}

/* Multi-plane read (consumer-nvme has planes > 1): at high depth reads
 * queued on a die share one sense, so random reads go faster than the
 * dies could serve them one at a time, but never more than planes times
 * faster; at depth 1 nothing is queued and the latency is one op's (the
 * partial-page test above checks that median). */
static void test_multi_plane_read(void)
{
	const bdev_profile *p = bdev_profile_find("consumer-nvme");
	CHECK(p->planes > 1);
	double one_op_ns = p->rd_page_op_ns + 8192 * p->rd_byte_ns;
	double serial = p->nunits * 1e9 / one_op_ns; /* IOPS one op per die */
	double lat;
	double deep = closed_loop("consumer-nvme", BIO_READ, 8192, 256, 40000, 0, &lat);
	CHECK(deep > 1.3 * serial);
	CHECK(deep < p->planes * serial);
	/* a profile without the mode cannot beat its dies */
	const bdev_profile *dc = bdev_profile_find("nvme-dc");
	CHECK(dc->planes <= 1);
	double dc_serial = dc->nunits * 1e9 / (dc->rd_op_ns + 4096 * dc->rd_byte_ns);
	double dc_deep = closed_loop("nvme-dc", BIO_READ, 4096, 1024, 40000, 0, &lat);
	CHECK(dc_deep <= 1.02 * dc_serial);
}

/* Median and p99 (ns) of lat[from, to). Sorts that window in place. */
static void window_quantiles(uint64_t *lat, int from, int to, double *p50, double *p99)
{
	qsort(lat + from, (size_t)(to - from), sizeof lat[0], cmp_u64);
	*p50 = (double)lat[from + (to - from) / 2];
	*p99 = (double)lat[from + (to - from) * 99 / 100];
}

/* Random writes above the drain rate into a full write cache reach a
 * steady state: a late window of the run has the latency of an early one
 * (with a random unit per write the backlog spread apart without bound,
 * so the median fell and p99 grew with the run's length). Little's law
 * holds: the median is about depth / IOPS. */
static void test_write_steady_state(void)
{
	sim *s = sim_create(11, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "nvme-dc", &d), 0);
	bdev_precondition(d, 0);
	enum { DEPTH = 256, N = 120000 };
	static uint64_t lat[N];
	simtime_t done[DEPTH] = { 0 };
	simtime_t t_early = 0, t_end = 0;
	for (int i = 0; i < N; i++) {
		int k = 0;
		for (int j = 1; j < DEPTH; j++)
			if (done[j] < done[k])
				k = j;
		simtime_t at = done[k];
		uint64_t off = prng_below(sim_prng(s), 1u << 24) * 4096;
		simtime_t c = bdev_io(d, BIO_WRITE, off, 4096, at);
		lat[i] = c - at;
		done[k] = c;
		if (i == N / 2)
			t_early = c;
		if (c > t_end)
			t_end = c;
	}
	double iops = (double)(N / 2) * 1e9 / (double)(t_end - t_early);
	double e50, e99, l50, l99;
	window_quantiles(lat, N / 10, N / 5, &e50, &e99);
	window_quantiles(lat, N - N / 10, N, &l50, &l99);
	CHECK_NEAR(l50, e50, 0.05);
	CHECK_NEAR(l99, e99, 0.10);
	CHECK_NEAR(l50, DEPTH / iops * 1e9, 0.10);
	bdev_destroy(d);
	sim_destroy(s);
}

/* Writes at depth `depth` from `nq` submission queues (slot k on queue
 * k % nq) into a full cache of `profile`; returns IOPS; the latency
 * median and p99 (us) go to the last two arguments. */
/* The steady part of a closed-loop run (after its first quarter): sorts
 * lat[n/4..n), sets its median and p99 (us); returns IOPS over the
 * completions from `first` to `last`. */
static double steady_summary(uint64_t *lat, int n, simtime_t first, simtime_t last,
			     double *p50, double *p99)
{
	int m = n - n / 4;
	qsort(lat + n / 4, (size_t)m, sizeof lat[0], cmp_u64);
	*p50 = (double)lat[n / 4 + m / 2] / 1000.0;
	*p99 = (double)lat[n / 4 + m * 99 / 100] / 1000.0;
	return (double)(m - 1) * 1e9 / (double)(last - first);
}

static double write_loop(const char *profile, uint64_t bs, int depth, int nq, int n,
			 double *p50, double *p99)
{
	sim *s = sim_create(13, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, profile, &d), 0);
	bdev_precondition(d, 0);
	simtime_t *done = calloc((size_t)depth, sizeof *done);
	uint64_t *lat = calloc((size_t)n, sizeof *lat);
	simtime_t first = 0, last = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		for (int j = 1; j < depth; j++)
			if (done[j] < done[k])
				k = j;
		simtime_t at = done[k];
		bio b = { .op = BIO_WRITE, .offset = prng_below(sim_prng(s), 1u << 24) * bs,
			  .bytes = bs, .queue = k % nq };
		simtime_t c = bdev_submit(d, &b, at);
		lat[i] = c - at;
		done[k] = c;
		if (i == n / 4)
			first = c;
		if (c > last)
			last = c;
	}
	double iops = steady_summary(lat, n, first, last, p50, p99);
	free(done);
	free(lat);
	bdev_destroy(d);
	sim_destroy(s);
	return iops;
}

/* wr_serial: one submission queue's writes enter the cache one at a time,
 * so one fio job writing 4 KiB at depth 128 is capped near 1 / wr_ns
 * (the P4510's 137-150k IOPS), while several queues together reach the
 * drain rate. Reads are not serialised per queue. */
static void test_write_queue_serial(void)
{
	const bdev_profile *p = bdev_profile_find("nvme-dc");
	CHECK(p->wr_serial);
	double p50, p99;
	double one = write_loop("nvme-dc", 4096, 128, 1, 60000, &p50, &p99);
	double four = write_loop("nvme-dc", 4096, 512, 4, 60000, &p50, &p99);
	/* only a write's intake up to the median is serial: a little faster
	 * than one per wr_ns, far below the drain rate */
	CHECK(one <= 1.1e9 / p->wr_ns);
	CHECK(one >= 0.8e9 / p->wr_ns);
	CHECK(four > 1.4 * one);
	double drain = 1e9 / (4096 * p->drain_byte_ns);
	CHECK(four < 1.1 * drain);
}

/* Garbage collection varies the drain rate from band to band
 * (drain_sigma > 0): saturated writes' p99 is well above their median
 * (a steady drain gives p99 ~ median), while the long-run rate stays
 * the mean drain rate 1 / drain_byte_ns. */
static void test_write_bands(void)
{
	const bdev_profile *p = bdev_profile_find("nvme-dc");
	CHECK(p->drain_sigma > 0 && p->seg_bytes > 0);
	double p50, p99;
	double iops = write_loop("nvme-dc", 8192, 1024, 8, 400000, &p50, &p99);
	CHECK(p99 > 1.2 * p50);
	CHECK_NEAR(iops, 1e9 / (8192 * p->drain_byte_ns), 0.12);
}

/* The spread comes from the GC victims' valid fraction v (gc_valid +-
 * drain_sigma, a band draining at 1 / (1 - v)): none without a spread, a
 * wider tail with a wider one, and the long-run rate the same. */
static void test_write_gc_valid(void)
{
	bdev_profile q = *bdev_profile_find("nvme-dc");
	CHECK(q.gc_valid > 0 && q.drain_sigma > 0);
	const double spread[3] = { 0.0, q.drain_sigma, 1.5 * q.drain_sigma };
	double p50[3], p99[3];
	for (int k = 0; k < 3; k++) {
		q.drain_sigma = spread[k];
		bdev_profile_override(&q);
		double iops = write_loop("nvme-dc", 8192, 1024, 8, 200000, &p50[k], &p99[k]);
		bdev_profile_override(NULL);
		CHECK_NEAR(iops, 1e9 / (8192 * q.drain_byte_ns), 0.12);
	}
	CHECK(p99[0] < 1.1 * p50[0]);
	CHECK(p99[1] > 1.2 * p50[1]);
	CHECK(p99[2] / p50[2] > 1.2 * (p99[1] / p50[1]));
}

/* One writer at `depth` that resubmits each slot `gap` ns after its
 * completion (fio's own time per IO); returns IOPS, the median and p99
 * latency (us) and the share of writes slower than 2 x median + 100 us. */
static double stall_loop(int depth, simtime_t gap, int n, double *p50, double *p99,
			 double *slow)
{
	sim *s = sim_create(17, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "consumer-ssd", &d), 0);
	bdev_precondition(d, 0);
	simtime_t *next = calloc((size_t)depth, sizeof *next);
	uint64_t *lat = calloc((size_t)n, sizeof *lat);
	simtime_t first = 0, last = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		for (int j = 1; j < depth; j++)
			if (next[j] < next[k])
				k = j;
		simtime_t at = next[k];
		bio b = { .op = BIO_WRITE, .offset = prng_below(sim_prng(s), 1u << 24) * 4096,
			  .bytes = 4096 };
		simtime_t c = bdev_submit(d, &b, at);
		lat[i] = c - at;
		next[k] = c + gap;
		if (i == n / 4)
			first = c;
		if (c > last)
			last = c;
	}
	double iops = steady_summary(lat, n, first, last, p50, p99);
	int m = n - n / 4, nslow = 0;
	for (int i = n / 4; i < n; i++)
		nslow += (double)lat[i] / 1000.0 > 2 * *p50 + 100;
	*slow = (double)nslow / m;
	free(next);
	free(lat);
	bdev_destroy(d);
	sim_destroy(s);
	return iops;
}

/* Write stalls (defer_ns): the 860 PRO's controller owes background work
 * per batch of commands, does it while idle, and stalls for it when it
 * piles up. At depth 1 fio's own time between writes leaves it idle
 * enough: hardly a stall (a few in 20000 writes). At depth 4 and 32 a
 * few % of writes wait for a stall of about defer_max_ns, fewer per
 * write at depth 32 (bigger batches), so
 * IOPS grow with depth although the link bounds them between stalls. */
static void test_write_stalls(void)
{
	const bdev_profile *p = bdev_profile_find("consumer-ssd");
	CHECK(p->defer_ns > 0 && p->defer_max_ns > 0);
	CHECK(bdev_profile_find("nvme-dc")->defer_ns == 0);
	CHECK(bdev_profile_find("consumer-nvme")->defer_ns == 0);
	simtime_t gap = (simtime_t)p->host_ns;
	double p50, p99, slow1, slow4, slow32;
	stall_loop(1, gap, 20000, &p50, &p99, &slow1);
	CHECK(slow1 < 0.001); /* the 860 PRO: p99.99 249 us, 0.01% slower */
	CHECK(p99 < 1.5 * p50);
	double i4 = stall_loop(4, gap, 40000, &p50, &p99, &slow4);
	CHECK(slow4 > 0.01 && slow4 < 0.05);
	CHECK(p99 > 0.5 * p->defer_max_ns / 1000);
	double i32 = stall_loop(32, gap, 80000, &p50, &p99, &slow32);
	CHECK(slow32 > 0.01 && slow32 < 0.05);
	CHECK(i32 > 1.2 * i4);
	/* between stalls a write takes its link time */
	double link_us = (p->link_ns + 4096 * p->link_byte_ns + p->wr_link_ns) / 1000;
	CHECK(p50 > 0.8 * 32 * link_us && p50 < 1.1 * 32 * link_us);
}

/* IOPS grow with depth and then saturate at the slowest stage; beyond
 * saturation latency grows as depth / IOPS (Little's law). */
static void test_saturation(void)
{
	double lat[6], iops[6];
	int depth[6] = { 1, 4, 16, 64, 256, 1024 };
	for (int i = 0; i < 6; i++)
		iops[i] = closed_loop("nvme-dc", BIO_READ, 4096, depth[i], 40000, 0, &lat[i]);
	for (int i = 1; i < 6; i++)
		CHECK(iops[i] >= 0.97 * iops[i - 1]);
	CHECK(iops[2] > 10 * iops[0]);              /* parallel units */
	CHECK(iops[5] < 1.1 * iops[4]);             /* saturated */
	CHECK_NEAR(lat[5], 1024 / iops[5] * 1e6, 0.1); /* Little's law */
	CHECK(lat[5] > 3 * lat[4]);
	/* a single SATA command queue: beyond NCQ depth 32 nothing changes */
	double l32, l128;
	double i32 = closed_loop("consumer-ssd", BIO_READ, 4096, 32, 20000, 0, &l32);
	double i128 = closed_loop("consumer-ssd", BIO_READ, 4096, 128, 20000, 0, &l128);
	CHECK_NEAR(i128, i32, 0.05);
	CHECK_NEAR(l128, 4 * l32, 0.15);
}

/* Big sequential reads are bounded by bandwidth, small random ones by
 * operations; a disk pays a seek per random IO and none when streaming. */
static void test_bandwidth_and_disk(void)
{
	double lat;
	double seq = closed_loop("nvme-dc", BIO_READ, 131072, 64, 5000, 1, &lat);
	const bdev_profile *p = bdev_profile_find("nvme-dc");
	double link_bw = 1e9 / p->link_byte_ns; /* bytes/s */
	CHECK(seq * 131072 <= 1.01 * link_bw);
	CHECK(seq * 131072 > 0.5 * link_bw);
	double hr = closed_loop("hdd", BIO_READ, 4096, 1, 400, 0, &lat);
	CHECK(lat > 6000 && lat < 10000);           /* ~8 ms random access */
	CHECK(hr > 100 && hr < 170);
	double hs = closed_loop("hdd", BIO_READ, 1 << 20, 4, 400, 1, &lat);
	CHECK_NEAR(hs * (1 << 20), 150e6, 0.1);     /* ~150 MB/s streaming */
}

/* Writes land in the write cache; a sustained stream above the drain
 * rate waits for room, so throughput falls to the drain bandwidth. */
static void test_write_cache(void)
{
	const bdev_profile *p = bdev_profile_find("nvme-dc");
	sim *s = sim_create(5, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "nvme-dc", &d), 0);
	simtime_t c = bdev_io(d, BIO_WRITE, 0, 4096, 0);
	CHECK(c < 100 * NS_PER_US); /* a cache hit, not a NAND program */
	/* 4x the cache, all submitted at once */
	uint64_t n = (uint64_t)(4 * p->cache_bytes / 65536);
	simtime_t last = 0;
	for (uint64_t i = 0; i < n; i++) {
		c = bdev_io(d, BIO_WRITE, i * 65536, 65536, 0);
		if (c > last)
			last = c;
	}
	/* three caches' worth must drain first; garbage collection varies
	 * the drain rate from band to band (a cycle averages out), so allow
	 * the bands of this short burst to run fast */
	double drain_ns = 3.0 * p->cache_bytes * p->drain_byte_ns;
	CHECK((double)last >= 0.7 * drain_ns);
	bdev_destroy(d);
	sim_destroy(s);
}

/* Each profile's flush assumption. */
static void test_flush(void)
{
	struct { const char *name; double p50_us; double tol; } want[] = {
		{ "nvme-dc", 0, 0 },          /* power-loss protected: ~free */
		{ "consumer-ssd", 334, 0.1 }, /* SATA write+fdatasync */
		{ "consumer-nvme", 6783, 0.1 }, /* consumer NVMe, no PLP */
	};
	for (int i = 0; i < 3; i++) {
		sim *s = sim_create(11, 0);
		bdev *d;
		CHECK_EQ(bdev_create(s, want[i].name, &d), 0);
		enum { N = 801 };
		static uint64_t lat[N];
		simtime_t t = 0;
		for (int k = 0; k < N; k++) {
			simtime_t c = bdev_flush(d, t);
			lat[k] = c - t;
			t = c + NS_PER_MS;
		}
		qsort(lat, N, sizeof lat[0], cmp_u64);
		double med_us = (double)lat[N / 2] / 1000.0;
		if (want[i].p50_us == 0)
			CHECK(med_us < 5);
		else
			CHECK_NEAR(med_us, want[i].p50_us, want[i].tol);
		CHECK_EQ(bdev_get_stats(d)->flushes, N);
		bdev_destroy(d);
		sim_destroy(s);
	}
	/* without PLP a flush waits for what the cache still holds */
	const bdev_profile *p = bdev_profile_find("consumer-ssd");
	sim *s = sim_create(2, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "consumer-ssd", &d), 0);
	for (int k = 0; k < 256; k++)
		bdev_io(d, BIO_WRITE, (uint64_t)k << 20, 1 << 20, 0);
	simtime_t f = bdev_flush(d, 0);
	CHECK((double)f >= 0.9 * 256.0 * (1 << 20) * p->drain_byte_ns); /* bands vary */
	bdev_destroy(d);
	sim_destroy(s);
}

/* Same seed, same completion times; another seed, other times. */
static uint64_t run_hash(uint64_t seed)
{
	sim *s = sim_create(seed, 0);
	bdev *d;
	bdev_create(s, "consumer-ssd", &d);
	uint64_t h = 1469598103934665603ull;
	for (int k = 0; k < 3000; k++) {
		simtime_t c = bdev_io(d, k % 3 ? BIO_READ : BIO_WRITE, (uint64_t)k * 4096, 4096,
				      (simtime_t)k * 5000);
		h = (h ^ c) * 1099511628211ull;
	}
	h ^= bdev_flush(d, 3000 * 5000);
	bdev_destroy(d);
	sim_destroy(s);
	return h;
}

static void test_determinism(void)
{
	CHECK(run_hash(42) == run_hash(42));
	CHECK(run_hash(42) != run_hash(43));
}

/* end_io runs as a simulator event at the completion time. */
static int ended;
static simtime_t ended_at;
static void on_end(sim *s, bio *b)
{
	ended++;
	ended_at = sim_now(s);
	CHECK_EQ(sim_now(s), b->complete);
}

static void test_end_io_and_stats(void)
{
	sim *s = sim_create(9, 0);
	bdev *d;
	CHECK_EQ(bdev_create(s, "nvme-dc", &d), 0);
	bio b[8];
	for (int i = 0; i < 8; i++) {
		b[i] = (bio){ .op = BIO_READ, .offset = (uint64_t)i << 20, .bytes = 4096,
			      .end_io = on_end };
		bdev_submit(d, &b[i], 0);
		CHECK_EQ(b[i].submit, 0);
		CHECK(b[i].complete > 0);
	}
	sim_run(s, 1000, SIMTIME_MAX);
	CHECK_EQ(ended, 8);
	const bdev_stats *st = bdev_get_stats(d);
	CHECK_EQ(st->reads, 8);
	CHECK_EQ(st->read_bytes, 8 * 4096);
	CHECK_EQ(st->max_inflight, 8);
	CHECK(st->busy_ns <= ended_at && st->busy_ns > 0);
	bdev_destroy(d);
	sim_destroy(s);
}

/* A shape measured twice (the 980 PRO's pinned and unpinned runs both
 * have 4 KiB reads at depth 16, one job): the point the profile was
 * fitted on is the one found; a shape measured once is found as is. */
static void test_point_find(void)
{
	const bdev_point *p = bdev_point_find("consumer-nvme", "randread", 4096, 16, 1);
	CHECK(p != NULL);
	if (p) {
		CHECK(p->fit == 1);
		CHECK(strstr(p->source, "inc_proc") != NULL);
	}
	int n = 0;
	for (int i = 0; i < bdev_npoints; i++)
		if (strcmp(bdev_points[i].profile, "consumer-nvme") == 0 &&
		    bdev_points[i].bs == 4096 && bdev_points[i].iodepth == 16 &&
		    bdev_points[i].numjobs == 1)
			n++;
	CHECK_EQ(n, 2);
	const bdev_point *q = bdev_point_find("nvme-dc", "randwrite", 4096, 1, 1);
	CHECK(q != NULL && strstr(q->source, "4k_w_1") != NULL);
	CHECK(bdev_point_find("nvme-dc", "randwrite", 4096, 3, 1) == NULL);
	CHECK(bdev_point_find("no-such", "randread", 4096, 1, 1) == NULL);
	/* the pair is the same job; another shape is not */
	const bdev_point *a = bdev_point_find("consumer-nvme", "randread", 4096, 16, 1);
	for (int i = 0; a && i < bdev_npoints; i++) {
		const bdev_point *b = &bdev_points[i];
		int same = strcmp(b->profile, "consumer-nvme") == 0 && strcmp(b->rw, "randread") == 0 &&
			   b->bs == 4096 && b->iodepth == 16 && b->numjobs == 1;
		CHECK_EQ(bdev_point_same_job(a, b), same);
	}
}

/* The fio run's details name the job's other measured runs (the page draws
 * them beside the first): the P4510's 9-job 4 KiB write was measured twice,
 * its 2-job 8 KiB write once. */
static void test_details_other_runs(void)
{
	static const struct {
		const char *params, *want;
	} cases[] = {
		{ "device=nvme-dc\nrw=randwrite\nbs=4096\niodepth=128\nnumjobs=9\nios=2000",
		  "\"measured_also\":[{" },
		{ "device=nvme-dc\nrw=randwrite\nbs=8192\niodepth=128\nnumjobs=2\nios=2000",
		  "\"measured_also\":[]" },
	};
	for (int k = 0; k < 2; k++) {
		lab_run *r = NULL;
		char *msg = NULL, *json = NULL;
		CHECK_EQ(lab_open("fio", "base", cases[k].params, 1, 0, &r, &msg), 0);
		int done = 0;
		while (r && !done && lab_step(r, 1u << 20, &done) == 0)
			;
		CHECK(done);
		CHECK_EQ(r ? lab_result_json(r, &json) : -1, 0);
		CHECK(json && strstr(json, cases[k].want) != NULL);
		if (k == 0) {
			const char *also = json ? strstr(json, "\"measured_also\"") : NULL;
			CHECK(also && strstr(also, "5G_3.19/4k_w_9.txt") != NULL);
			CHECK(also && strstr(also, "\"fitted\":false") != NULL);
		}
		lab_free(json);
		lab_free(msg);
		lab_close(r);
	}
}

int main(void)
{
	test_bad_input();
	test_point_find();
	test_details_other_runs();
	test_ideal();
	test_qd1_service_time();
	test_partial_page_read();
	test_multi_plane_read();
	test_saturation();
	test_bandwidth_and_disk();
	test_write_cache();
	test_write_steady_state();
	test_write_queue_serial();
	test_write_bands();
	test_write_gc_valid();
	test_write_stalls();
	test_flush();
	test_determinism();
	test_end_io_and_stats();
	T_DONE();
}
