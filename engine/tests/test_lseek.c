/*
 * test_lseek.c - SEEK_DATA / SEEK_HOLE: results against a page-by-page
 * oracle for every combination of the series' switches, and what each
 * switch changes in the work done.
 */
#include <stdlib.h>
#include <string.h>

#include "lseek.h"
#include "t.h"
#include "t_data.h"

#define PG 4096ull

static int idle_step(sim *s, task *t)
{
	(void)s;
	(void)t;
	return TASK_BLOCKED;
}

typedef struct env {
	t_data m;         /* the file system, on the "ideal" device */
	sim *s;
	dinode *d;
	task *t;
} env;

/* 6.1 plus the series' patches in mask: bit 0 2/9, 1 3/9, 2 4/9, 3 6/9
 * and 9/9 together (no 1/9: no hole is read here) */
static void env_init(env *e, const data_opts *o, int mask)
{
	patchset kernel;
	patch_kernel("6.1", &kernel);
	patch_set(&kernel, P_004_DELALLOC_EARLY_EXIT, mask & 1);
	patch_set(&kernel, P_004_SKIP_DELALLOC_SEARCHES, (mask >> 1) & 1);
	patch_set(&kernel, P_004_ORDERED_SEARCH, (mask >> 2) & 1);
	patch_set(&kernel, P_004_COUNT_RANGE_BITS_CACHED, (mask >> 3) & 1);
	patch_set(&kernel, P_004_LSEEK_CACHED_STATE, (mask >> 3) & 1);
	t_data_mount(&e->m, 1, "ideal", &kernel, o);
	e->s = e->m.s;
	e->d = t_data_file(&e->m);
	e->t = task_spawn(e->s, "user", idle_step, NULL, 0);
	sim_run(e->s, 10, SIMTIME_MAX);
}

static void env_free(env *e)
{
	t_data_unmount(&e->m);
}

/* Write every extent in `pages` (1 = data) with the user task. */
static void write_layout(env *e, const char *pages, int n)
{
	for (int p = 0; p < n; p++)
		if (pages[p] == '1')
			vd_write(e->d, e->t, p * PG, PG);
}

/* Flush and complete everything dirty (sync), running the simulator. */
static void sync_all(env *e)
{
	vd_writeback_start(e->d, 1);
	sim_run(e->s, 10000000, SIMTIME_MAX);
}

/* An extent being flushed: DELALLOC cleared, an extent map and ordered
 * extent exist, the file extent item does not yet (what cow_file_range
 * leaves until the IO completes). */
static void fake_flushing(env *e, uint64_t off)
{
	dinode *d = e->d;
	uint64_t before = d->io.bytes_with[1];
	eio_clear_bits(&d->io, off, off + PG - 1, EXTENT_DELALLOC, NULL, NULL, NULL, 0);
	d->delalloc_bytes -= before - d->io.bytes_with[1];
	CHECK(vd_xw(d) != NULL);
	emap_insert(&d->x->em, off, PG, 1ull << 40 | off);
	ordered_add(&d->x->oe, off, PG, 1ull << 40 | off);
}

/* Oracle: page p holds data if it is delalloc, being flushed, or mapped. */
static int page_has_data(dinode *d, uint64_t p)
{
	uint64_t off = p * PG;
	if (eio_test_any(&d->io, off, off + PG - 1, EXTENT_DELALLOC))
		return 1;
	if (ordered_lookup_range(vd_oe_r(d), off, PG, NULL) >= 0)
		return 1;
	return t_data_mapped(d, off);
}

static int check_all_offsets(env *e, dfile *f)
{
	dinode *d = e->d;
	int bad = 0;
	uint64_t npg = (d->i_size + PG - 1) / PG;
	for (uint64_t off = 0; off < d->i_size; off += PG / 2) {
		for (int w = 0; w < 2; w++) {
			int whence = w ? LSEEK_HOLE : LSEEK_DATA;
			lseek_info li = {0};
			int rc = vd_lseek(f, e->t, off, whence, &li);
			uint64_t p = off / PG;
			while (p < npg && page_has_data(d, p) != (whence == LSEEK_DATA))
				p++;
			uint64_t want = p * PG < off ? off : p * PG;
			if (whence == LSEEK_DATA && p >= npg) {
				if (rc != LSEEK_ENXIO)
					bad++;
			} else {
				if (want > d->i_size)
					want = d->i_size;
				if (rc != 0 || li.result != want) {
					if (bad < 3)
						fprintf(stderr, "lseek(%llu, %s) = %d/%llu, want %llu\n",
							(unsigned long long)off, w ? "HOLE" : "DATA", rc,
							(unsigned long long)li.result, (unsigned long long)want);
					bad++;
				}
			}
		}
	}
	return bad;
}

static data_opts opts_mask(void)
{
	data_opts o;
	memset(&o, 0, sizeof(o));
	o.dirty_expire = 30 * NS_PER_S;
	o.wb_interval = 5 * NS_PER_S;
	o.dirty_bg_bytes = 1ull << 40;
	return o;
}

/* A mixed file: flushed extents, delalloc ones, extents being flushed,
 * adjacent and isolated, and a trailing hole. */
static void build_mixed(env *e)
{
	const char *first = "10101100111010001011";
	const char *second = "01010000110001100101101";
	write_layout(e, first, 20);
	sync_all(e);
	for (int p = 0; p < 23; p++)
		if (second[p] == '1')
			vd_write(e->d, e->t, (20 + p) * PG, PG);
	fake_flushing(e, 21 * PG);
	fake_flushing(e, 29 * PG);
	fake_flushing(e, 30 * PG);
	/* i_size beyond the last page: a trailing hole */
	e->d->i_size = 46 * PG;
}

static void test_results_all_switches(void)
{
	for (int m = 0; m < 16; m++) {
		data_opts o = opts_mask();
		env e;
		env_init(&e, &o, m);
		build_mixed(&e);
		dfile f;
		dfile_open(&f, e.d, 1);
		int bad = check_all_offsets(&e, &f);
		if (bad)
			fprintf(stderr, "switch mask %d: %d wrong\n", m, bad);
		CHECK_EQ(bad, 0);
		CHECK_EQ(vd_check(e.d), 0);
		dfile_close(&f);
		env_free(&e);
	}
}

/* The cp pattern over a delalloc region, returning what the lseeks did. */
static lseek_info cp_walk(env *e, dfile *f)
{
	lseek_info tot = {0};
	uint64_t pos = 0;
	while (pos < e->d->i_size) {
		lseek_info a = {0}, b = {0};
		if (vd_lseek(f, e->t, pos, LSEEK_DATA, &a))
			break;
		vd_lseek(f, e->t, a.result, LSEEK_HOLE, &b);
		tot.search_records += a.search_records + b.search_records;
		tot.search_nodes += a.search_nodes + b.search_nodes;
		tot.cache_hits += a.cache_hits + b.cache_hits;
		tot.cache_misses += a.cache_misses + b.cache_misses;
		tot.lock_records += a.lock_records + b.lock_records;
		tot.subranges += a.subranges + b.subranges;
		tot.cpu_ns += a.cpu_ns + b.cpu_ns;
		pos = b.result;
	}
	return tot;
}

/* A file whose first half is flushed (many extent maps) and whose second
 * half is isolated delalloc extents. */
static void build_half(env *e, int n)
{
	for (int i = 0; i < n; i++)
		vd_write(e->d, e->t, (uint64_t)i * 2 * PG, PG);
	sync_all(e);
	for (int i = n; i < 2 * n; i++)
		vd_write(e->d, e->t, (uint64_t)i * 2 * PG, PG);
}

static lseek_info run_half(int mask)
{
	data_opts o = opts_mask();
	env e;
	env_init(&e, &o, mask);
	build_half(&e, 512);
	dfile f;
	dfile_open(&f, e.d, 1);
	lseek_info li = cp_walk(&e, &f);
	dfile_close(&f);
	env_free(&e);
	return li;
}

static void test_switch_effects(void)
{
	lseek_info none = run_half(0);
	/* 4/9: the ordered tree (empty) instead of 512 extent maps */
	lseek_info p4 = run_half(4);
	CHECK(p4.search_nodes * 4 < none.search_nodes * 3);
	/* 6/9 + 9/9: the cached state saves the descents */
	lseek_info p6 = run_half(8);
	CHECK_EQ(none.cache_hits, 0);
	CHECK(p6.cache_hits > 500);
	CHECK(p6.search_nodes < none.search_nodes);
	/* the range lock is the same whatever the switches */
	CHECK_EQ(p4.lock_records, none.lock_records);
	CHECK_EQ(p6.lock_records, none.lock_records);
	/* every switch on costs less CPU than none */
	lseek_info all = run_half(15);
	CHECK(all.cpu_ns < none.cpu_ns);
}

/* 2/9: delalloc covering the whole hole range ends the search at once. */
static void test_p2_early_exit(void)
{
	uint64_t work[2];
	for (int on = 0; on < 2; on++) {
		data_opts o = opts_mask();
		env e;
		env_init(&e, &o, on ? 1 : 0);
		/* some flushed extents (extent maps), then a contiguous
		 * delalloc run to EOF */
		for (int i = 0; i < 64; i++)
			vd_write(e.d, e.t, (uint64_t)i * 2 * PG, PG);
		sync_all(&e);
		vd_write(e.d, e.t, 200 * PG, 56 * PG);
		dfile f;
		dfile_open(&f, e.d, 1);
		lseek_info li = {0};
		CHECK_EQ(vd_lseek(&f, e.t, 200 * PG, LSEEK_DATA, &li), 0);
		CHECK_EQ(li.result, 200 * PG);
		work[on] = li.search_nodes;
		dfile_close(&f);
		env_free(&e);
	}
	/* without 2/9 the extent maps are searched as well */
	CHECK(work[1] < work[0]);
}

/* 3/9: once the io_tree had nothing, later rounds skip it. */
static void test_p3_skip(void)
{
	uint64_t subr_records[2], descents[2];
	for (int on = 0; on < 2; on++) {
		data_opts o = opts_mask();
		env e;
		env_init(&e, &o, on ? 2 : 0);
		/* pages 0..7 delalloc, then 4..7 being flushed; delalloc far
		 * away keeps delalloc_bytes > 0 */
		vd_write(e.d, e.t, 0, 8 * PG);
		vd_write(e.d, e.t, 100 * PG, PG);
		for (int p = 0; p < 8; p++)
			fake_flushing(&e, p * PG);
		dfile f;
		dfile_open(&f, e.d, 1);
		lseek_info li = {0};
		uint64_t ns = 0, ds = 0, de = 0;
		extent_state *none = NULL;
		int r = vd_find_delalloc_in_range(e.d, 0, 50 * PG - 1, &none, &ds, &de, &li, &ns);
		CHECK_EQ(r, 1);
		CHECK_EQ(ds, 0);
		CHECK_EQ(de, 8 * PG - 1);
		subr_records[on] = li.subranges;
		descents[on] = li.search_records;
		if (none)
			eio_state_put(&e.d->io, none);
		dfile_close(&f);
		env_free(&e);
	}
	/* the same subranges are found; only the io_tree searches go */
	CHECK_EQ(subr_records[0], subr_records[1]);
	CHECK(descents[1] < descents[0]);
}

int main(void)
{
	test_results_all_switches();
	test_switch_effects();
	test_p2_early_exit();
	test_p3_skip();
	T_DONE();
}
