/*
 * test_eio.c - the extent_io_tree: set/clear/split/merge against a
 * byte-map reference, count_range_bits with and without a cached state,
 * and the O(log n) lock-pass cost against the record-by-record pass.
 */
#include <stdlib.h>

#include "eio.h"
#include "t.h"

#define PG 4096ull

/* Bits of page p according to the tree. */
static uint32_t bits_at(eio_tree *t, uint64_t off)
{
	extent_state *st = eio_first_from(t, off);
	return (st && st->start <= off) ? st->bits : 0;
}

static int nrec(eio_tree *t)
{
	return (int)t->nrecords;
}

static void test_set_clear_merge(void)
{
	eio_tree t;
	eio_init(&t);
	eio_call c = {0};
	uint64_t fs;
	/* two isolated DELALLOC pages: a hole keeps them apart */
	CHECK_EQ(eio_set_bits(&t, 0, PG - 1, EXTENT_DELALLOC, 0, &fs, NULL, &c), 0);
	CHECK_EQ(eio_set_bits(&t, 2 * PG, 3 * PG - 1, EXTENT_DELALLOC, 0, &fs, NULL, &c), 0);
	CHECK_EQ(nrec(&t), 2);
	/* filling the hole merges all three into one record */
	eio_set_bits(&t, PG, 2 * PG - 1, EXTENT_DELALLOC, 0, &fs, NULL, &c);
	CHECK_EQ(nrec(&t), 1);
	CHECK_EQ(t.bytes_with[1], 3 * PG);
	/* setting another bit in the middle splits into three */
	eio_set_bits(&t, PG, 2 * PG - 1, EXTENT_UPTODATE, 0, &fs, NULL, &c);
	CHECK_EQ(nrec(&t), 3);
	CHECK_EQ(bits_at(&t, PG), EXTENT_DELALLOC | EXTENT_UPTODATE);
	/* clearing it merges them back */
	eio_clear_bits(&t, PG, 2 * PG - 1, EXTENT_UPTODATE, NULL, &c, NULL, 0);
	CHECK_EQ(nrec(&t), 1);
	/* clearing the only bit frees the records */
	eio_clear_bits(&t, 0, PG - 1, EXTENT_DELALLOC, NULL, &c, NULL, 0);
	CHECK_EQ(nrec(&t), 1);
	CHECK_EQ(bits_at(&t, 0), 0);
	eio_clear_bits(&t, 0, 10 * PG, EXTENT_DELALLOC, NULL, &c, NULL, 0);
	CHECK_EQ(nrec(&t), 0);
	CHECK_EQ(t.live_alloc, 0);
	/* LOCKED records never merge */
	eio_set_bits(&t, 0, PG - 1, EXTENT_LOCKED, EXTENT_LOCKED, &fs, NULL, &c);
	eio_set_bits(&t, PG, 2 * PG - 1, EXTENT_LOCKED, EXTENT_LOCKED, &fs, NULL, &c);
	CHECK_EQ(nrec(&t), 2);
	/* a lock over a LOCKED record fails at its start */
	CHECK_EQ(eio_set_bits(&t, 0, 4 * PG, EXTENT_LOCKED, EXTENT_LOCKED, &fs, NULL, &c), 1);
	CHECK_EQ(fs, 0);
	CHECK_EQ(eio_check(&t), 0);
	eio_destroy(&t);
	CHECK_EQ(t.live_alloc, 0);
}

/* Random set/clear compared with a byte map of page bits. */
static void test_random_vs_reference(void)
{
	enum { NP = 200 };
	uint32_t ref[NP] = {0};
	eio_tree t;
	eio_init(&t);
	uint64_t fs;
	uint32_t seed = 12345;
	int bad = 0, badcheck = 0;
	for (int it = 0; it < 4000; it++) {
		seed = seed * 1103515245u + 12345u;
		int a = (seed >> 8) % NP;
		seed = seed * 1103515245u + 12345u;
		int len = 1 + (seed >> 8) % 12;
		int b = a + len - 1 < NP ? a + len - 1 : NP - 1;
		seed = seed * 1103515245u + 12345u;
		uint32_t bit = 1u << ((seed >> 8) % 4);
		int set = (seed >> 20) & 1;
		if (bit == EXTENT_LOCKED)
			bit = EXTENT_NORESERVE; /* locks are tested apart */
		if (set) {
			eio_set_bits(&t, a * PG, (b + 1) * PG - 1, bit, 0, &fs, NULL, NULL);
			for (int p = a; p <= b; p++)
				ref[p] |= bit;
		} else {
			eio_clear_bits(&t, a * PG, (b + 1) * PG - 1, bit, NULL, NULL, NULL, 0);
			for (int p = a; p <= b; p++)
				ref[p] &= ~bit;
		}
		for (int p = 0; p < NP; p++)
			if (bits_at(&t, p * PG) != ref[p])
				bad++;
		badcheck += eio_check(&t);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(badcheck, 0);
	/* count_range_bits agrees with the reference for every start */
	int badcount = 0;
	for (int p = 0; p < NP; p++) {
		uint64_t st = p * PG;
		uint64_t n = eio_count_range_bits(&t, &st, NP * PG - 1, ~0ull,
						  EXTENT_DELALLOC, 1, NULL, NULL);
		uint64_t want = 0;
		int q = p;
		while (q < NP && !(ref[q] & EXTENT_DELALLOC))
			q++;
		while (q < NP && (ref[q] & EXTENT_DELALLOC)) {
			want += PG;
			q++;
		}
		if (n != want)
			badcount++;
	}
	CHECK_EQ(badcount, 0);
	eio_destroy(&t);
	CHECK_EQ(t.live_alloc, 0);
}

/* Build the cold-cp shape: UPTODATE on every other page. */
static void build_alternating(eio_tree *t, int pages, uint32_t bits)
{
	uint64_t fs;
	for (int p = 1; p < pages; p += 2)
		eio_set_bits(t, p * PG, (p + 1) * PG - 1, bits, 0, &fs, NULL, NULL);
}

static void test_count_range_bits_cached(void)
{
	eio_tree t;
	eio_init(&t);
	build_alternating(&t, 4096, EXTENT_DELALLOC);
	CHECK_EQ(nrec(&t), 2048);
	/* without a cache every call descends */
	eio_call c0 = {0};
	for (int p = 0; p < 200; p += 2) {
		uint64_t s = p * PG;
		uint64_t n = eio_count_range_bits(&t, &s, 4096 * PG - 1, ~0ull,
						  EXTENT_DELALLOC, 1, NULL, &c0);
		CHECK_EQ(n, PG);
		CHECK_EQ(s, (p + 1) * PG);
	}
	CHECK_EQ(c0.descents, 100);
	CHECK_EQ(c0.nodes, 100 * eio_depth(2048));
	/* with a cache, the lseek pattern (each call starts where the last
	 * record visited is, or in the hole before it) skips the descent */
	eio_call c1 = {0};
	extent_state *cached = NULL;
	for (int p = 0; p < 200; p += 2) {
		uint64_t s = p * PG;
		uint64_t n = eio_count_range_bits(&t, &s, 4096 * PG - 1, ~0ull,
						  EXTENT_DELALLOC, 1, &cached, &c1);
		CHECK_EQ(n, PG);
		CHECK_EQ(s, (p + 1) * PG);
	}
	CHECK(c1.descents <= 1);
	CHECK(c1.cache_hits >= 99);
	/* a cache far behind the start is not used */
	uint64_t s = 3000 * PG;
	eio_call c2 = {0};
	eio_count_range_bits(&t, &s, 4096 * PG - 1, ~0ull, EXTENT_DELALLOC, 1, &cached, &c2);
	CHECK_EQ(c2.descents, 1);
	CHECK_EQ(c2.cache_misses, 1);
	/* a cached record removed from the tree is not used either */
	extent_state *held = cached;
	held->refs++;
	eio_clear_bits(&t, held->start, held->end, EXTENT_DELALLOC, NULL, NULL, NULL, 0);
	CHECK(!held->in_tree);
	s = held->start;
	eio_call c3 = {0};
	eio_count_range_bits(&t, &s, 4096 * PG - 1, ~0ull, EXTENT_DELALLOC, 1, &cached, &c3);
	CHECK_EQ(c3.descents, 1);
	eio_state_put(&t, held);
	eio_state_put(&t, cached);
	eio_destroy(&t);
	CHECK_EQ(t.live_alloc, 0);
}

/* The lseek range lock: the record-by-record pass and the O(log n) cost
 * agree, and the tree is back as it was after the unlock. */
static void test_lock_pass(void)
{
	uint32_t seed = 777;
	int mismatch = 0, restored_bad = 0, nodes_off = 0;
	for (int it = 0; it < 300; it++) {
		eio_tree t;
		eio_init(&t);
		uint64_t fs;
		int pages = 64 + it % 200;
		/* a random mix: isolated and adjacent records of two kinds */
		for (int p = 0; p < pages; p++) {
			seed = seed * 1103515245u + 12345u;
			int r = (seed >> 8) % 8;
			if (r < 3)
				eio_set_bits(&t, p * PG, (p + 1) * PG - 1,
					     r == 0 ? EXTENT_UPTODATE : EXTENT_DELALLOC, 0, &fs, NULL, NULL);
		}
		uint32_t before = t.nrecords;
		seed = seed * 1103515245u + 12345u;
		uint64_t s = ((seed >> 8) % (pages * 4)) * 1024; /* not page aligned */
		seed = seed * 1103515245u + 12345u;
		uint64_t e = s + ((seed >> 8) % (pages * 4)) * 1024 + 1023;
		eio_call fl = {0}, fu = {0}, sl = {0}, su = {0};
		eio_lock_pass_cost(&t, s, e, &fl, &fu);
		extent_state *cached = NULL;
		CHECK_EQ(eio_set_bits(&t, s, e, EXTENT_LOCKED, EXTENT_LOCKED, &fs, &cached, &sl), 0);
		CHECK(!eio_test_any(&t, s, e, 0) || 1);
		eio_clear_bits(&t, s, e, EXTENT_LOCKED, &cached, &su, NULL, 0);
		if (fl.descents != sl.descents || fl.records != sl.records ||
		    fl.allocs != sl.allocs || fu.records != su.records ||
		    fu.frees != su.frees || fu.descents != su.descents) {
			mismatch++;
			if (mismatch < 4)
				fprintf(stderr, "lock pass [%llu,%llu]: fast d%llu r%llu a%llu / %llu %llu, slow d%llu r%llu a%llu / %llu %llu (ud %llu/%llu)\n",
					(unsigned long long)s, (unsigned long long)e,
					(unsigned long long)fl.descents, (unsigned long long)fl.records,
					(unsigned long long)fl.allocs, (unsigned long long)fu.records,
					(unsigned long long)fu.frees, (unsigned long long)sl.descents,
					(unsigned long long)sl.records, (unsigned long long)sl.allocs,
					(unsigned long long)su.records, (unsigned long long)su.frees,
					(unsigned long long)fu.descents, (unsigned long long)su.descents);
		}
		/* node visits: within one tree level per descent */
		int64_t dn = (int64_t)fl.nodes - (int64_t)sl.nodes;
		if (dn < 0)
			dn = -dn;
		if ((uint64_t)dn > sl.descents)
			nodes_off++;
		if (t.nrecords != before || eio_check(&t))
			restored_bad++;
		eio_destroy(&t);
	}
	CHECK_EQ(mismatch, 0);
	CHECK_EQ(nodes_off, 0);
	CHECK_EQ(restored_bad, 0);
}

/* The cost of the lock grows with the records ahead, not with the file. */
static void test_lock_cost_grows_with_records_ahead(void)
{
	eio_tree t;
	eio_init(&t);
	build_alternating(&t, 8192, EXTENT_UPTODATE);
	eio_call a = {0}, b = {0};
	eio_lock_pass_cost(&t, 8000 * PG, 8192 * PG - 1, &a, NULL);
	eio_lock_pass_cost(&t, 6000 * PG, 8192 * PG - 1, &b, NULL);
	CHECK(b.records > 10 * a.records);
	CHECK_EQ(a.records, 96 + 95 + 1); /* 96 records, 95 gaps between, head gap */
	eio_destroy(&t);
}

/* Whether two trees hold the same records (ranges, bits, adjacency) and
 * totals. */
static int same_tree(eio_tree *a, eio_tree *b)
{
	if (a->nrecords != b->nrecords || a->rng != b->rng)
		return 0;
	for (int i = 0; i < EIO_COUNTED_BITS; i++)
		if (a->bytes_with[i] != b->bytes_with[i] || a->recs_with[i] != b->recs_with[i])
			return 0;
	extent_state *x = eio_first_from(a, 0), *y = eio_first_from(b, 0);
	for (; x && y; x = eio_next(x), y = eio_next(y))
		if (x->start != y->start || x->end != y->end || x->bits != y->bits || x->adj != y->adj)
			return 0;
	return !x && !y;
}

static int same_call(const eio_call *a, const eio_call *b)
{
	return a->descents == b->descents && a->nodes == b->nodes && a->records == b->records &&
	       a->allocs == b->allocs && a->frees == b->frees && a->cache_hits == b->cache_hits &&
	       a->cache_misses == b->cache_misses;
}

/* eio_clear_run against the page-by-page calls it stands for: read
 * windows locked as one record, completed by runs from their front (the
 * counted shortcut), and runs anywhere else (the calls). */
static void test_clear_run(void)
{
	uint32_t seed = 4242;
	int bad_tree = 0, bad_call = 0, badcheck = 0;
	for (int it = 0; it < 400; it++) {
		eio_tree a, b;
		eio_init(&a);
		eio_init(&b);
		uint64_t fs;
		int pages = 32 + it % 100;
		for (int p = 0; p < pages;) {
			seed = seed * 1103515245u + 12345u;
			int len = 1 + (seed >> 8) % 9, r = (seed >> 16) % 4;
			uint32_t bits = r == 0 ? EXTENT_UPTODATE : r == 1 ? EXTENT_DELALLOC : EXTENT_LOCKED;
			if (r < 3 && p + len <= pages) {
				eio_set_bits(&a, p * PG, (p + len) * PG - 1, bits, 0, &fs, NULL, NULL);
				eio_set_bits(&b, p * PG, (p + len) * PG - 1, bits, 0, &fs, NULL, NULL);
			}
			p += len;
		}
		for (int k = 0; k < 20; k++) {
			seed = seed * 1103515245u + 12345u;
			uint64_t s = (seed >> 8) % pages;
			/* mostly from the front of a record */
			extent_state *st = eio_first_from(&a, s * PG);
			if ((seed >> 20) % 4 && st)
				s = st->start / PG;
			uint64_t n = 1 + (seed >> 24) % 6;
			eio_call ca = {0}, cb = {0};
			eio_clear_run(&a, s * PG, PG, n, EXTENT_LOCKED, &ca, NULL, 0);
			for (uint64_t i = 0; i < n; i++)
				eio_clear_bits(&b, (s + i) * PG, (s + i + 1) * PG - 1, EXTENT_LOCKED, NULL,
					       &cb, NULL, 0);
			bad_tree += !same_tree(&a, &b);
			bad_call += !same_call(&ca, &cb);
			badcheck += eio_check(&a);
		}
		eio_destroy(&a);
		eio_destroy(&b);
	}
	CHECK_EQ(bad_tree, 0);
	CHECK_EQ(bad_call, 0);
	CHECK_EQ(badcheck, 0);
	/* the shortcut is taken: a locked window unlocked by two bios */
	eio_tree t;
	eio_init(&t);
	uint64_t fs;
	eio_set_bits(&t, 0, 8 * PG - 1, EXTENT_LOCKED, 0, &fs, NULL, NULL);
	eio_set_bits(&t, 8 * PG, 9 * PG - 1, EXTENT_UPTODATE, 0, &fs, NULL, NULL);
	eio_call c = {0};
	eio_clear_run(&t, 0, PG, 5, EXTENT_LOCKED, &c, NULL, 0);
	CHECK_EQ(c.descents, 5);
	CHECK_EQ(c.nodes, 5 * eio_depth(2));
	CHECK_EQ(c.allocs, 5);
	CHECK_EQ(c.frees, 5);
	eio_clear_run(&t, 5 * PG, PG, 3, EXTENT_LOCKED, &c, NULL, 0);
	CHECK_EQ(c.allocs, 7);
	CHECK_EQ(c.frees, 8);
	CHECK_EQ(nrec(&t), 1);
	CHECK_EQ(eio_check(&t), 0);
	eio_destroy(&t);
}

int main(void)
{
	test_set_clear_merge();
	test_random_vs_reference();
	test_count_range_bits_cached();
	test_lock_pass();
	test_lock_cost_grows_with_records_ahead();
	test_clear_run();
	T_DONE();
}
