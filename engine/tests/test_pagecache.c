/*
 * test_pagecache.c - page accounting, the readahead ramp, background
 * writeback by expiry, writeback/ordered completion, and the UPTODATE
 * records hole reads leave before patch 1/9 (and not after).
 */
#include <stdlib.h>
#include <string.h>

#include "emap.h"
#include "pagecache.h"
#include "t.h"
#include "t_data.h"

#define PG 4096ull

static void test_counts(void)
{
	pc_inode p;
	pc_init(&p);
	CHECK_EQ(pc_reserve(&p, 100), 0);
	pc_set(&p, 3, PG_PRESENT | PG_UPTODATE | PG_DIRTY, 0);
	pc_set(&p, 4, PG_PRESENT | PG_UPTODATE, 0);
	CHECK_EQ(p.present, 2);
	CHECK_EQ(p.dirty, 1);
	pc_set(&p, 3, PG_WRITEBACK, PG_DIRTY);
	CHECK_EQ(p.dirty, 0);
	CHECK_EQ(p.writeback, 1);
	pc_drop_clean(&p);
	CHECK_EQ(p.present, 1); /* the page under writeback stays */
	pc_destroy(&p);
}

/* cp's pattern: a read every other page, from 0. The window ramps
 * 4 -> 16 (+64 merged: 80) -> 320 -> 640 -> 1280 -> 2048 (the doubled
 * 4 MiB bdi window) and stays there. */
static void test_readahead_ramp(void)
{
	pc_inode p;
	pc_init(&p);
	pc_reserve(&p, 1 << 16);
	file_ra ra;
	ra_init(&ra, 1024, 1);
	CHECK_EQ(ra.ra_pages, 2048);
	uint64_t sizes[16];
	int ns = 0;
	for (uint64_t idx = 0; idx < 20000 && ns < 16; idx += 2) {
		uint8_t f = pc_flags(&p, idx);
		ra_window w = {0, 0, 0};
		if (!(f & PG_PRESENT))
			w = ra_ondemand(&ra, &p, idx, 1, 0);
		else if (f & PG_READAHEAD) {
			pc_set(&p, idx, 0, PG_READAHEAD);
			w = ra_ondemand(&ra, &p, idx, 1, 1);
		}
		if (w.nr) {
			sizes[ns++] = w.nr;
			for (uint64_t i = w.start; i < w.start + w.nr; i++)
				pc_set(&p, i, PG_PRESENT | PG_UPTODATE, 0);
			if (w.mark != UINT64_MAX)
				pc_set(&p, w.mark, PG_READAHEAD, 0);
		}
		ra.prev_index = idx;
	}
	CHECK(ns >= 7);
	CHECK_EQ(sizes[0], 4);
	CHECK_EQ(sizes[1], 80);
	CHECK_EQ(sizes[2], 320);
	CHECK_EQ(sizes[3], 640);
	CHECK_EQ(sizes[4], 1280);
	CHECK_EQ(sizes[5], 2048);
	CHECK_EQ(sizes[6], 2048);
	pc_destroy(&p);
}

static int idle_step(sim *s, task *t)
{
	(void)s;
	(void)t;
	return TASK_BLOCKED;
}

static data_opts opts(void)
{
	data_opts o;
	memset(&o, 0, sizeof(o));
	o.dirty_expire = 2 * NS_PER_S;
	o.wb_interval = NS_PER_S;
	o.dirty_bg_bytes = 1ull << 40;
	return o;
}

/* A data path on a fresh device with one inode holding `extents` 4 KiB
 * extents, each followed by a 4 KiB hole, all still delalloc. */
typedef struct fx {
	t_data m;         /* the file system: 6.1, with or without 1/9 */
	sim *s;
	dfs *fs;
	dinode *d;
	task *t;
} fx;

static void fx_open(fx *f, const char *device, const data_opts *o, int p1, int extents)
{
	patchset kernel;
	patch_kernel("6.1", &kernel);
	patch_set(&kernel, P_004_NO_HOLE_UPTODATE, p1);
	t_data_mount(&f->m, 1, device, &kernel, o);
	f->s = f->m.s;
	f->fs = f->m.fs;
	f->d = t_data_file(&f->m);
	f->t = task_spawn(f->s, "user", idle_step, NULL, 0);
	sim_run(f->s, 10, SIMTIME_MAX);
	for (int i = 0; i < extents; i++)
		vd_write(f->d, f->t, (uint64_t)i * 2 * PG, PG);
}

static void fx_close(fx *f)
{
	t_data_unmount(&f->m);
}

/* Dirty data is written back by the flusher only once it is older than
 * the expiry; completion inserts the file extent items and empties the
 * io_tree. */
static void test_writeback_expiry(void)
{
	data_opts o = opts();
	fx x;
	fx_open(&x, "nvme-dc", &o, 1, 50);
	sim *s = x.s;
	dfs *fs = x.fs;
	dinode *d = x.d;
	CHECK_EQ(d->io.nrecords, 50); /* holes keep the extents apart */
	CHECK_EQ(d->delalloc_bytes, 50 * PG);
	CHECK_EQ(vd_outstanding(d), 50);
	dfs_start_flusher(fs);
	sim_run(s, 1000000, 1500 * NS_PER_MS);
	CHECK_EQ(d->pc.dirty, 50); /* 1 s tick: not expired */
	sim_run(s, 1000000, 3500 * NS_PER_MS);
	CHECK_EQ(d->pc.dirty, 0);
	CHECK_EQ(t_data_items(d), 50);
	CHECK_EQ(d->delalloc_bytes, 0);
	CHECK_EQ(vd_outstanding(d), 0);
	CHECK_EQ(d->io.nrecords, 0);
	CHECK_EQ(vd_em_r(d)->n, 50 + 49); /* 50 written extents, 49 holes mapped by the writes past EOF */
	CHECK(fs->flushes >= 1);
	CHECK_EQ(vd_check(d), 0);
	fs->flusher_armed = 0;
	sim_run(s, 1000000, SIMTIME_MAX);
	fx_close(&x);
}

/* The flusher's 5 s delayed work on the timer wheel: each wakeup lands
 * on the next 64-jiffy boundary (HZ=250: 256 ms), so with the boundaries
 * where jiffies0 = 10 puts them the 6th comes at 30.68 s, where exact
 * 5 s wakeups flush the file (dirtied at 0) at 30.0 s. */
static uint64_t flushed_dirty_at(simtime_t jiffy, simtime_t until)
{
	data_opts o = opts();
	o.dirty_expire = 30 * NS_PER_S;
	o.wb_interval = 5 * NS_PER_S;
	o.jiffy_ns = jiffy;
	o.jiffies0 = 10;
	fx x;
	fx_open(&x, "ideal", &o, 1, 50);
	sim *s = x.s;
	dfs *fs = x.fs;
	dinode *d = x.d;
	dfs_start_flusher(fs);
	sim_run(s, 10000000, until);
	uint64_t dirty = d->pc.dirty;
	fs->flusher_armed = 0;
	sim_run(s, 10000000, SIMTIME_MAX);
	fx_close(&x);
	return dirty;
}

static void test_flusher_timer_wheel(void)
{
	const simtime_t j = 4 * NS_PER_MS;
	CHECK_EQ(flushed_dirty_at(j, 30600 * NS_PER_MS), 50); /* 6th wakeup not yet */
	CHECK_EQ(flushed_dirty_at(j, 31000 * NS_PER_MS), 0);  /* 6th at 30.68 s */
	CHECK_EQ(flushed_dirty_at(0, 29900 * NS_PER_MS), 50); /* exact: before the 6th */
	CHECK_EQ(flushed_dirty_at(0, 30500 * NS_PER_MS), 0);  /* exact: the 6th at 30.0 s */
}

/* After a remount, reading the file through readahead leaves one
 * UPTODATE record per hole page read before 1/9, none after. */
static uint64_t hole_records_after_read(int p1, uint64_t *records_ahead)
{
	data_opts o = opts();
	fx x;
	fx_open(&x, "ideal", &o, p1, 4096);
	sim *s = x.s;
	dfs *fs = x.fs;
	dinode *d = x.d;
	task *t = x.t;
	vd_writeback_start(d, 1);
	sim_run(s, 10000000, SIMTIME_MAX);
	CHECK(vd_clean(d));
	t_data_remount(&x.m, t);
	CHECK_EQ(d->pc.present, 0);
	dfile f;
	dfile_open(&f, d, 1);
	/* read the first 64 data pages as cp does */
	for (int i = 0; i < 64; i++) {
		/* the task runs at the simulator's time (it is not stepped) */
		if (t->clock < sim_now(s))
			t->clock = sim_now(s);
		while (vd_read_page(&f, t, (uint64_t)i * 2 * PG) == 1) {
			sim_run(s, 1000, SIMTIME_MAX);
			t->clock = sim_now(s);
		}
	}
	sim_run(s, 1000000, SIMTIME_MAX);
	*records_ahead = 0;
	for (extent_state *st = eio_first_from(&d->io, 128 * PG); st; st = eio_next(st))
		(*records_ahead)++;
	uint64_t n = d->io.recs_with[3];
	CHECK(fs->metadata_reads > 0);
	CHECK_EQ(eio_check(&d->io), 0);
	dfile_close(&f);
	fx_close(&x);
	return n;
}

static void test_hole_uptodate(void)
{
	uint64_t ahead0, ahead1;
	uint64_t before = hole_records_after_read(0, &ahead0);
	uint64_t after = hole_records_after_read(1, &ahead1);
	/* readahead went well past the 128 pages cp read */
	CHECK(before > 200);
	CHECK(ahead0 > 100);
	CHECK_EQ(after, 0);
	CHECK_EQ(ahead1, 0);
}

/* fsync waits for the inode's data to be written; truncate drops pages,
 * delalloc and file extent items past the new end. */
static void test_fsync_truncate(void)
{
	data_opts o = opts();
	fx x;
	fx_open(&x, "nvme-dc", &o, 1, 20);
	sim *s = x.s;
	dinode *d = x.d;
	task *t = x.t;
	/* truncate away the last 10 delalloc extents */
	CHECK_EQ(vd_truncate(d, t, 20 * PG), 0);
	CHECK_EQ(d->delalloc_bytes, 10 * PG);
	CHECK_EQ(d->io.nrecords, 10);
	CHECK_EQ(d->pc.dirty, 10);
	CHECK_EQ(vd_outstanding(d), 10);
	/* fsync: parked until the data is on disk */
	CHECK_EQ(vd_fsync(d, t), 1);
	sim_run(s, 1000000, SIMTIME_MAX);
	t->clock = sim_now(s);
	CHECK_EQ(vd_fsync(d, t), 0);
	CHECK_EQ(t_data_items(d), 10);
	CHECK_EQ(d->nbytes, 10 * PG);
	/* a truncate inside the data: items past it go */
	CHECK_EQ(vd_truncate(d, t, 9 * PG), 0);
	CHECK_EQ(t_data_items(d), 5);
	CHECK_EQ(d->nbytes, 5 * PG);
	CHECK_EQ(d->i_size, 9 * PG);
	CHECK_EQ(vd_em_r(d)->n, 5 + 4); /* data and hole maps below the new end */
	/* growing makes a hole */
	CHECK_EQ(vd_truncate(d, t, 100 * PG), 0);
	CHECK_EQ(d->i_size, 100 * PG);
	CHECK_EQ(t_data_items(d), 5);
	CHECK_EQ(vd_check(d), 0);
	fx_close(&x);
}

/* The extent map tree: inserts anywhere (chunk splits), lookups, next,
 * replacement of overlapping maps, drop from an offset. */
static void test_emap(void)
{
	emap_tree t;
	emap_init(&t);
	for (int i = 0; i < 1000; i++) /* holes at odd pages */
		emap_insert(&t, (2 * i + 1) * PG, PG, EM_HOLE);
	for (int i = 999; i >= 0; i--) /* data at even pages, backwards */
		emap_insert(&t, 2 * i * PG, PG, 1000000 + i);
	CHECK_EQ(t.n, 2000);
	CHECK(t.nc > 2000 / EMAP_CHUNK);
	int bad = 0;
	uint64_t expect = 0;
	for (emap_pos p = emap_lookup(&t, 0, PG, NULL); emap_get(&t, p); p = emap_next(&t, p)) {
		if (emap_get(&t, p)->start != expect)
			bad++;
		expect += PG;
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(expect, 2000 * PG);
	const extent_map *m = emap_get(&t, emap_lookup(&t, 1234 * PG + 100, 10, NULL));
	CHECK(m && m->start == 1234 * PG && m->block_start == 1000000 + 617);
	/* a map over three old ones replaces them */
	emap_insert(&t, 10 * PG, 3 * PG, 42);
	CHECK_EQ(t.n, 1998);
	m = emap_get(&t, emap_lookup(&t, 11 * PG, 1, NULL));
	CHECK(m && m->start == 10 * PG && m->len == 3 * PG);
	/* nothing past the last map */
	CHECK(!emap_get(&t, emap_lookup(&t, 5000 * PG, PG, NULL)));
	emap_drop_from(&t, 100 * PG + 10);
	CHECK_EQ(t.n, 98 + 1);
	m = emap_get(&t, emap_lookup(&t, 100 * PG, 1, NULL));
	CHECK(m && m->len == 10);
	emap_destroy(&t);
}

/* pc_evict_run (eight flag bytes at a time) against a page-by-page
 * reference: the same run, flags, counts and lowest evictable index. */
static void test_evict_run(void)
{
	static const uint8_t kinds[] = {
		0, PG_PRESENT | PG_UPTODATE, PG_PRESENT | PG_UPTODATE | PG_READAHEAD,
		PG_PRESENT | PG_UPTODATE | PG_DIRTY, PG_PRESENT | PG_WRITEBACK,
		PG_PRESENT | PG_LOCKED, PG_PRESENT,
	};
	uint32_t seed = 99;
	int bad = 0, runs = 0;
	for (int it = 0; it < 300; it++) {
		pc_global g = {0};
		pc_inode p;
		pc_init(&p);
		p.g = &g;
		int np = 1 + it % 90;
		pc_reserve(&p, (uint64_t)np);
		uint8_t ref[128] = {0};
		for (int i = 0; i < np; i++) {
			seed = seed * 1103515245u + 12345u;
			/* runs of one kind, as a file's pages come */
			uint8_t k = kinds[(seed >> 8) % 7];
			int len = 1 + (int)((seed >> 16) % 12);
			for (int j = 0; j < len && i < np; j++, i++) {
				pc_set(&p, (uint64_t)i, k, 0);
				ref[i] = k;
			}
			i--;
		}
		int drained = 0;
		for (int guard = 0; guard < 200 && !drained; guard++) {
			seed = seed * 1103515245u + 12345u;
			uint64_t max = 1 + (seed >> 8) % 20, first = 0;
			uint32_t present = p.present, evictable = p.evictable;
			/* the reference: the first clean page, then its run */
			uint64_t i = 0, n = 0;
			while (i < p.npages_cap && !(ref[i] & PG_PRESENT &&
						    !(ref[i] & (PG_DIRTY | PG_WRITEBACK | PG_LOCKED))))
				i++;
			while (i + n < p.npages_cap && n < max && (ref[i + n] & PG_PRESENT) &&
			       !(ref[i + n] & (PG_DIRTY | PG_WRITEBACK | PG_LOCKED)))
				n++;
			uint64_t got = pc_evict_run(&p, max, &first);
			if (!evictable) {
				bad += got != 0;
				drained = 1;
				continue;
			}
			runs++;
			memset(ref + i, 0, n);
			bad += got != n || first != i || p.present != present - n ||
			       p.evictable != evictable - n || g.cached != p.present ||
			       p.evict_from != i + n || memcmp(p.pg, ref, p.npages_cap) != 0;
		}
		bad += !drained;
		pc_destroy(&p);
	}
	CHECK_EQ(bad, 0);
	CHECK(runs > 300);
}

int main(void)
{
	test_evict_run();
	test_emap();
	test_fsync_truncate();
	test_counts();
	test_readahead_ramp();
	test_writeback_expiry();
	test_flusher_timer_wheel();
	test_hole_uptodate();
	T_DONE();
}
