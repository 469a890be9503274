/*
 * test_pagecache_limit.c - the page cache's memory limit (clean pages of
 * the least recently used inode are evicted and read again on the next
 * access), dirty throttling past dirty_ratio (the writer parks until
 * writeback completes; with sync_io it writes back itself), and that
 * below the limits nothing changes.
 */
#include <stdlib.h>
#include <string.h>

#include "pagecache.h"
#include "t.h"
#include "t_data.h"

#define PG 4096ull

static int idle_step(sim *s, task *t)
{
	(void)s;
	(void)t;
	return TASK_BLOCKED;
}

/* The file system's kernel: 6.1, with or without 1/9 */
static patchset kernel_p1(int p1)
{
	patchset ps;
	patch_kernel("6.1", &ps);
	patch_set(&ps, P_004_NO_HOLE_UPTODATE, p1);
	return ps;
}

static data_opts opts(uint64_t ram, uint64_t dirty)
{
	data_opts o;
	memset(&o, 0, sizeof(o));
	o.dirty_expire = 30 * NS_PER_S;
	o.wb_interval = 5 * NS_PER_S;
	o.dirty_bg_bytes = 1ull << 40;
	o.ram_bytes = ram;
	o.dirty_bytes = dirty;
	return o;
}

/* Read every page of d on t (an idle task driven by hand), waiting for
 * reads in flight. Returns the largest cache size seen after a copy with
 * no read in flight. */
static uint64_t read_all(dfs *fs, dinode *d, task *t, uint64_t npages)
{
	dfile f;
	dfile_open(&f, d, 0);
	uint64_t peak = 0;
	for (uint64_t i = 0; i < npages; i++) {
		if (t->clock < sim_now(fs->s))
			t->clock = sim_now(fs->s);
		while (vd_read_page(&f, t, i * PG) == 1) {
			sim_run(fs->s, 1000, SIMTIME_MAX);
			t->clock = sim_now(fs->s);
		}
		int inflight = 0;
		dinode *const *in = dfs_inodes(fs);
		for (int k = 0; k < fs->ninodes; k++)
			inflight += in[k]->reads != NULL;
		if (!inflight && fs->pcg.cached > peak)
			peak = fs->pcg.cached;
	}
	dfile_close(&f);
	return peak;
}

/* Write pages [0, n) of d one at a time and write them back. */
static void fill(dfs *fs, dinode *d, task *t, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(vd_write(d, t, i * PG, PG), 0);
	vd_writeback_start(d, 1);
	sim_run(fs->s, 10000000, SIMTIME_MAX);
	t->clock = sim_now(fs->s);
	CHECK(vd_clean(d));
}

/* Past the limit the least recently used inode's clean pages go; a page
 * evicted is a miss (and a device read) the next time. */
static void test_eviction(void)
{
	data_opts o = opts(256 * PG, 1ull << 40);
	patchset kernel = kernel_p1(1);
	t_data m;
	t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
	sim *s = m.s;
	dfs *fs = m.fs;
	dinode *a, *b;
	a = t_data_file(&m);
	b = t_data_file(&m);
	task *t = task_spawn(s, "user", idle_step, NULL, 0);
	sim_run(s, 10, SIMTIME_MAX);
	fill(fs, a, t, 200);
	fill(fs, b, t, 200);
	CHECK_EQ(fs->pcg.cached, a->pc.present + b->pc.present);
	t_data_remount(&m, t);
	CHECK_EQ(fs->pcg.cached, 0);
	CHECK_EQ(fs->pcg.dirty + fs->pcg.writeback, 0);
	/* (b's writes evicted clean pages of a already; count from here) */
	uint64_t ev0 = fs->pages_evicted;
	int64_t cv0 = sim_counter(s, "pages_evicted");
	CHECK(ev0 > 0);

	/* a fits; then b pushes a's pages out, not its own */
	uint64_t peak = read_all(fs, a, t, 200);
	CHECK_EQ(peak, 200);
	CHECK_EQ(fs->pages_evicted, ev0);
	peak = read_all(fs, b, t, 200);
	CHECK(peak <= 256);
	CHECK_EQ(fs->pcg.cached, 256);
	CHECK_EQ(b->pc.present, 200);
	CHECK_EQ(a->pc.present, 56);
	CHECK_EQ(fs->pages_evicted - ev0, 144);
	CHECK_EQ(sim_counter(s, "pages_evicted") - cv0, 144);
	/* the lowest pages of a went: page 0 is a miss and a device read */
	CHECK(!(pc_flags(&a->pc, 0) & PG_PRESENT));
	CHECK(pc_flags(&a->pc, 199) & PG_PRESENT);
	uint64_t misses = fs->cache_misses, reads = fs->data_reads;
	read_all(fs, a, t, 1);
	CHECK_EQ(fs->cache_misses, misses + 1);
	CHECK(fs->data_reads > reads);
	/* now b is the least recently used: its pages make the room */
	CHECK(fs->pcg.cached <= 256);
	CHECK(b->pc.present < 200);
	CHECK(pc_flags(&a->pc, 0) & PG_PRESENT);
	/* a hit on a cached page reads nothing */
	misses = fs->cache_misses;
	reads = fs->data_reads;
	read_all(fs, a, t, 1);
	CHECK_EQ(fs->cache_misses, misses);
	CHECK_EQ(fs->data_reads, reads);
	CHECK_EQ(vd_check(a), 0);
	CHECK_EQ(vd_check(b), 0);
	t_data_unmount(&m);
}

/* Before patch 1/9 a hole page read leaves an UPTODATE record; evicting
 * the page drops it (try_release_extent_state), so a small cache keeps
 * fewer records. Returns the UPTODATE records after reading 400 pages
 * (data at even pages) with a cache of ram_pages (0: no limit). */
static uint64_t uptodate_records(uint64_t ram_pages)
{
	data_opts o = opts(ram_pages * PG, 1ull << 40);
	patchset kernel = kernel_p1(0);
	t_data m;
	t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
	sim *s = m.s;
	dfs *fs = m.fs;
	dinode *d;
	d = t_data_file(&m);
	task *t = task_spawn(s, "user", idle_step, NULL, 0);
	sim_run(s, 10, SIMTIME_MAX);
	for (uint64_t i = 0; i < 200; i++)
		vd_write(d, t, 2 * i * PG, PG);
	vd_writeback_start(d, 1);
	sim_run(s, 10000000, SIMTIME_MAX);
	t->clock = sim_now(s);
	t_data_remount(&m, t);
	read_all(fs, d, t, 399);
	sim_run(s, 10000000, SIMTIME_MAX);
	uint64_t n = d->io.recs_with[3];
	CHECK_EQ(eio_check(&d->io), 0);
	CHECK(!ram_pages || fs->pcg.cached <= ram_pages);
	t_data_unmount(&m);
	return n;
}

static void test_evict_io_tree(void)
{
	uint64_t all = uptodate_records(0), small = uptodate_records(64);
	printf("uptodate records after reading 400 pages: %llu with no limit, %llu with 64 pages\n",
	       (unsigned long long)all, (unsigned long long)small);
	CHECK(all >= 190);
	CHECK(small <= 64);
	CHECK(small > 0);
}

/* Dirty pages are never evicted: a cache of dirty pages stays over the
 * limit until writeback makes them clean. */
static void test_dirty_not_evicted(void)
{
	data_opts o = opts(64 * PG, 1ull << 40);
	patchset kernel = kernel_p1(1);
	t_data m;
	t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
	sim *s = m.s;
	dfs *fs = m.fs;
	dinode *d;
	d = t_data_file(&m);
	task *t = task_spawn(s, "user", idle_step, NULL, 0);
	sim_run(s, 10, SIMTIME_MAX);
	for (uint64_t i = 0; i < 100; i++)
		vd_write(d, t, i * PG, PG);
	CHECK_EQ(fs->pcg.cached, 100);
	CHECK_EQ(fs->pcg.dirty, 100);
	CHECK_EQ(fs->pages_evicted, 0);
	vd_writeback_start(d, 1);
	sim_run(s, 10000000, SIMTIME_MAX);
	CHECK_EQ(fs->pcg.dirty + fs->pcg.writeback, 0);
	t->clock = sim_now(s);
	/* the next write's shrink evicts the clean ones, lowest first */
	vd_write(d, t, 100 * PG, PG);
	CHECK_EQ(fs->pcg.cached, 64);
	CHECK_EQ(fs->pages_evicted, 37);
	CHECK(!(pc_flags(&d->pc, 36) & PG_PRESENT));
	CHECK(pc_flags(&d->pc, 37) & PG_PRESENT);
	CHECK(pc_flags(&d->pc, 100) & PG_DIRTY);
	t_data_unmount(&m);
}

/* A writer of n pages, one per step, parking when vd_write says so. */
typedef struct writer {
	dinode *d;
	uint64_t n, next;
	uint64_t throttles;
	uint64_t peak_pages;     /* dirty + writeback after a write */
	uint64_t resume_over;    /* resumed with dirty + writeback past the limit */
	uint64_t resume_no_io;   /* resumed before any write bio was done */
	int parked;
	simtime_t done_at;
} writer;

static int writer_step(sim *s, task *t)
{
	writer *w = t->ctx;
	dfs *fs = w->d->fs;
	if (w->parked) {
		w->parked = 0;
		if ((fs->pcg.dirty + fs->pcg.writeback) * PG > dfs_dirty_limit(fs))
			w->resume_over++;
		if (fs->ordered_done == 0)
			w->resume_no_io++;
	}
	if (w->next == w->n) {
		w->done_at = t->clock;
		return TASK_DONE;
	}
	int rc = vd_write(w->d, t, w->next * PG, PG);
	w->next++;
	uint64_t p = fs->pcg.dirty + fs->pcg.writeback;
	if (p > w->peak_pages)
		w->peak_pages = p;
	if (rc == 1) {
		w->throttles++;
		w->parked = 1;
		return TASK_BLOCKED;
	}
	CHECK_EQ(rc, 0);
	return TASK_RUN;
}

/* Run a writer of n pages against ram / dirty limits; fills *w. */
static void run_writer(uint64_t ram, uint64_t dirty, uint64_t n, writer *w, dfs *out)
{
	data_opts o = opts(ram, dirty);
	patchset kernel = kernel_p1(1);
	t_data m;
	t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
	sim *s = m.s;
	dfs *fs = m.fs;
	memset(w, 0, sizeof(*w));
	w->d = t_data_file(&m);
	w->n = n;
	task_spawn(s, "writer", writer_step, w, 0);
	sim_run(s, 100000000, SIMTIME_MAX);
	CHECK_EQ(w->next, n);
	CHECK_EQ(vd_check(w->d), 0);
	*out = *fs;
	out->inode_arr = NULL; /* freed below */
	out->ninodes = 0;
	t_data_unmount(&m);
}

/* Past dirty_ratio the writer parks until writeback completions bring
 * dirty + writeback back under it; the time is counted. */
static void test_throttle(void)
{
	writer w;
	dfs fs;
	/* 4 MiB of memory: dirty_ratio 20% = 204.8 pages */
	run_writer(1024 * PG, 0, 1000, &w, &fs);
	printf("throttle: %llu throttles, %llu ns throttled, peak %llu pages, "
	       "%llu write bios, writer done at %llu ns\n",
	       (unsigned long long)w.throttles, (unsigned long long)fs.throttle_ns,
	       (unsigned long long)w.peak_pages, (unsigned long long)fs.data_writes,
	       (unsigned long long)w.done_at);
	CHECK(w.throttles >= 4);
	CHECK_EQ(fs.throttled, w.throttles);
	CHECK(fs.throttle_ns > 0);
	CHECK(w.peak_pages <= 205);
	CHECK(w.peak_pages >= 204);
	CHECK_EQ(w.resume_over, 0);
	CHECK_EQ(w.resume_no_io, 0);
	CHECK(fs.data_writes >= w.throttles);
	/* an explicit dirty_bytes wins over the ratio */
	writer w2;
	dfs fs2;
	run_writer(1024 * PG, 100 * PG, 1000, &w2, &fs2);
	CHECK(w2.peak_pages <= 101);
	CHECK(w2.throttles > w.throttles);
}

/* Below the thresholds (or with no limit) nothing changes: same times,
 * same IO, no throttling, no eviction. */
static void test_below_limits(void)
{
	writer w0, w1;
	dfs f0, f1;
	run_writer(0, 0, 150, &w0, &f0);
	run_writer(1024 * PG, 0, 150, &w1, &f1);
	CHECK_EQ(w0.throttles, 0);
	CHECK_EQ(w1.throttles, 0);
	CHECK_EQ(f1.throttle_ns, 0);
	CHECK_EQ(w0.done_at, w1.done_at);
	CHECK_EQ(f0.data_writes, f1.data_writes);
	CHECK_EQ(f1.pages_evicted, 0);
	/* reads that fit: no eviction, same misses as with no limit */
	uint64_t miss[2], evicted[2];
	simtime_t end[2];
	for (int k = 0; k < 2; k++) {
		data_opts o = opts(k ? 8192 * PG : 0, 0);
		patchset kernel = kernel_p1(1);
		t_data m;
		t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
		sim *s = m.s;
		dfs *fs = m.fs;
		dinode *d;
		d = t_data_file(&m);
		task *t = task_spawn(s, "user", idle_step, NULL, 0);
		sim_run(s, 10, SIMTIME_MAX);
		fill(fs, d, t, 1000);
		t_data_remount(&m, t);
		read_all(fs, d, t, 1000);
		miss[k] = fs->cache_misses;
		evicted[k] = fs->pages_evicted;
		end[k] = t->clock;
		t_data_unmount(&m);
	}
	CHECK_EQ(miss[0], miss[1]);
	CHECK_EQ(evicted[1], 0);
	CHECK_EQ(end[0], end[1]);
}

/* With sync_io (the synchronous drive of vfs_io.h) a throttled writer
 * writes the oldest dirty inode back itself before returning. */
static void test_throttle_sync(void)
{
	data_opts o = opts(1024 * PG, 0);
	patchset kernel = kernel_p1(1);
	t_data m;
	t_data_mount(&m, 1, "nvme-dc", &kernel, &o);
	sim *s = m.s;
	dfs *fs = m.fs;
	fs->sync_io = 1;
	dinode *a, *b;
	a = t_data_file(&m);
	b = t_data_file(&m);
	task *t = task_spawn(s, "user", idle_step, NULL, 0);
	sim_run(s, 10, SIMTIME_MAX);
	for (uint64_t i = 0; i < 150; i++)
		CHECK_EQ(vd_write(a, t, i * PG, PG), 0);
	t->clock += NS_PER_MS;
	uint64_t peak = 0;
	int bad = 0;
	for (uint64_t i = 0; i < 300; i++) {
		bad += vd_write(b, t, i * PG, PG) != 0;
		uint64_t p = fs->pcg.dirty + fs->pcg.writeback;
		if (p > peak)
			peak = p;
	}
	CHECK_EQ(bad, 0);
	CHECK(fs->throttled >= 1);
	CHECK(fs->throttle_ns > 0);
	CHECK(peak <= 204);
	/* a, dirtied first, was written back first and completely */
	CHECK_EQ(a->pc.dirty, 0);
	CHECK_EQ(t_data_items(a), 1);
	CHECK(sim_counter(s, "dirty_throttle_ns") > 0);
	CHECK_EQ(vd_check(a), 0);
	CHECK_EQ(vd_check(b), 0);
	t_data_unmount(&m);
}

int main(void)
{
	test_eviction();
	test_dirty_not_evicted();
	test_evict_io_tree();
	test_throttle();
	test_below_limits();
	test_throttle_sync();
	T_DONE();
}
