/*
 * test_ordered.c - the ordered-extent array: sorted order, lookups and
 * removals at the front, in the middle and at the back, against a plain
 * reference model, over long random sequences (the array shifts its
 * shorter side and compacts or grows inside its allocation).
 */
#include <stdlib.h>
#include <string.h>

#include "ordered.h"
#include "sim.h"
#include "t.h"

#define SLOTS 4096 /* extent k covers [k * 8192, k * 8192 + 4096) */

static int ref[SLOTS];

static void check_same(const ordered_tree *t)
{
	uint64_t j = 0;
	for (int k = 0; k < SLOTS; k++) {
		if (!ref[k])
			continue;
		if (j >= t->n || t->v[j].file_off != (uint64_t)k * 8192) {
			CHECK(0);
			return;
		}
		j++;
	}
	CHECK_EQ(j, t->n);
}

static void test_front_and_back(void)
{
	ordered_tree t;
	ordered_init(&t);
	memset(ref, 0, sizeof(ref));
	for (int k = 0; k < 1000; k++) {
		CHECK_EQ(ordered_add(&t, (uint64_t)k * 8192, 4096, 1), 0);
		ref[k] = 1;
	}
	/* completions oldest first, as a sync's are */
	for (int k = 0; k < 600; k++) {
		CHECK_EQ(ordered_remove(&t, (uint64_t)k * 8192), 0);
		ref[k] = 0;
	}
	check_same(&t);
	CHECK_EQ(ordered_lookup_range(&t, 0, 600 * 8192, NULL), -1);
	CHECK_EQ(ordered_lookup_range(&t, 600 * 8192, 1, NULL), 0);
	/* new extents at the front reuse the room there */
	for (int k = 599; k >= 500; k--) {
		CHECK_EQ(ordered_add(&t, (uint64_t)k * 8192, 4096, 1), 0);
		ref[k] = 1;
	}
	check_same(&t);
	CHECK_EQ(ordered_remove(&t, 12345), 1); /* none starts there */
	for (int k = 999; k >= 500; k--) {
		CHECK_EQ(ordered_remove(&t, (uint64_t)k * 8192), 0);
		ref[k] = 0;
	}
	CHECK_EQ(t.n, 0);
	CHECK_EQ(t.completed, 1100); /* 600 + 500, 100 of them re-added */
	ordered_destroy(&t);
}

static void test_random(void)
{
	prng p;
	prng_seed(&p, 7);
	ordered_tree t;
	ordered_init(&t);
	memset(ref, 0, sizeof(ref));
	for (int step = 0; step < 200000; step++) {
		int k = (int)prng_below(&p, SLOTS);
		if (ref[k]) {
			CHECK_EQ(ordered_remove(&t, (uint64_t)k * 8192), 0);
			ref[k] = 0;
		} else {
			CHECK_EQ(ordered_add(&t, (uint64_t)k * 8192, 4096, (uint64_t)k), 0);
			ref[k] = 1;
		}
		if (step % 997 == 0) {
			check_same(&t);
			int64_t i = ordered_first_overlap(&t, (uint64_t)k * 8192, 4096);
			CHECK(ref[k] ? i >= 0 && t.v[i].disk_bytenr == (uint64_t)k : i < 0);
		}
	}
	check_same(&t);
	ordered_destroy(&t);
}

int main(void)
{
	test_front_and_back();
	test_random();
	T_DONE();
}
