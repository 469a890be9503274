/*
 * test_delayed_ref.c - the delayed ref root and the RFC's nr_dirty_extents
 * counter: incremented only by a non-duplicate insert, decremented per
 * accounted record, reset at transaction start and at teardown.
 */
#include <stdlib.h>

#include "delayed_ref.h"
#include "fs.h"
#include "lab.h"
#include "qgroup.h"
#include "t.h"
#include "trans.h"

static qg_record rec(uint64_t bytenr)
{
	qg_record r;
	memset(&r, 0, sizeof r);
	r.bytenr = bytenr;
	r.num_bytes = 4096;
	return r;
}

/* The counter on the bare structure. */
static void test_counter_lifecycle(void)
{
	delayed_ref_root d;
	dref_root_init(&d);
	CHECK_EQ(d.nr_dirty_extents, 0);
	qg_record a = rec(1 << 20), b = rec(2 << 20);
	CHECK_EQ(dref_trace_extent(&d, &a), 0);
	CHECK_EQ(d.nr_dirty_extents, 1);
	/* a duplicate bytenr is de-duplicated and does not count */
	CHECK_EQ(dref_trace_extent(&d, &a), 1);
	CHECK_EQ(d.nr_dirty_extents, 1);
	CHECK_EQ(d.dup_inserts, 1);
	CHECK_EQ(dref_trace_extent(&d, &b), 0);
	CHECK_EQ(d.nr_dirty_extents, 2);
	CHECK(dref_has_record(&d, 1 << 20));
	CHECK(!dref_has_record(&d, 3 << 20));
	/* many records: the map grows and keeps every key */
	for (uint64_t i = 0; i < 5000; i++) {
		qg_record r = rec((10000 + i * 7919 % 5000) << 14);
		dref_trace_extent(&d, &r);
	}
	CHECK_EQ(d.nr_dirty_extents, 5002);
	CHECK_EQ(d.nrecs, 5002);
	/* accounting order is ascending bytenr */
	dref_records_sort(&d);
	int sorted = 1;
	for (uint32_t i = 1; i < d.nrecs; i++)
		if (d.recs[i - 1].bytenr >= d.recs[i].bytenr)
			sorted = 0;
	CHECK(sorted);
	CHECK(dref_has_record(&d, 2 << 20));
	/* teardown with records left resets the counter
	 * (btrfs_qgroup_destroy_extent_records) */
	dref_root_destroy(&d);
	CHECK_EQ(d.nr_dirty_extents, 0);
	CHECK_EQ(d.nrecs, 0);
}

/* Heads merge per bytenr and are forgotten once run. */
static void test_heads(void)
{
	delayed_ref_root d;
	dref_root_init(&d);
	dref_add(&d, 4096, 0, +1);
	dref_add(&d, 4096, 0, -1);
	dref_add(&d, 8192, 1, -1);
	CHECK_EQ(dref_heads_pending(&d), 2);
	CHECK_EQ(d.num_entries, 3);
	CHECK_EQ(dref_heads_clear(&d), 2);
	CHECK_EQ(dref_heads_pending(&d), 0);
	dref_add(&d, 4096, 0, +1);
	CHECK_EQ(dref_heads_pending(&d), 1);
	dref_root_destroy(&d);
}

/* Through a real fs: the counter belongs to the running transaction,
 * starts at 0 in each new one, and is back at 0 after the accounting. */
static void test_counter_in_transactions(void)
{
	sim *s = sim_create(7, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	trans_mgr tm;
	qgroup_ctx q;
	CHECK_EQ(trans_init(&tm, fs), 0);
	CHECK_EQ(qgroup_init(&q, fs, &tm), 0);
	CHECK_EQ(qgroup_enable(&q, NULL), 0);
	CHECK_EQ(trans_commit_now(&tm, NULL, TCOMMIT_EXPLICIT), 0);
	transaction *tr = trans_current(&tm);
	CHECK(tr != NULL);
	CHECK_EQ(tr->delayed_refs.nr_dirty_extents, 0);
	CHECK_EQ(qgroup_trace_extent(&q, 1ull << 30, 4096, QREC_DATA), 0);
	CHECK_EQ(qgroup_trace_extent(&q, 1ull << 30, 4096, QREC_DATA), 1);
	CHECK_EQ(qgroup_trace_extent(&q, (1ull << 30) + 4096, 4096, QREC_DATA), 0);
	CHECK_EQ(tm.running->delayed_refs.nr_dirty_extents, 2);
	trans_handle h;
	CHECK_EQ(trans_start(&tm, NULL, &h), 0);
	CHECK(!trans_should_commit(&h)); /* no threshold */
	tm.dirty_threshold = 2;
	CHECK(!trans_should_commit(&h)); /* a threshold, but no RFC: 5.10 */
	patch_set(&fs->opts.patches, P_002_QGROUP_DIRTY_THRESHOLD, 1);
	CHECK(trans_should_commit(&h));
	CHECK(trans_should_end(&h));
	tm.dirty_threshold = 3;
	CHECK(!trans_should_commit(&h));
	int calls0 = q.ncalls;
	CHECK_EQ(trans_commit(&h, TCOMMIT_EXPLICIT), 0);
	CHECK_EQ(q.ncalls, calls0 + 1);
	CHECK_EQ(q.calls[q.ncalls - 1].records, 2);
	CHECK(tm.running == NULL);
	/* the next transaction starts from 0 */
	tr = trans_current(&tm);
	CHECK_EQ(tr->delayed_refs.nr_dirty_extents, 0);
	CHECK_EQ(tr->transid, fs->transid);
	qgroup_destroy(&q);
	trans_destroy(&tm);
	fs_unmount(fs);
	sim_destroy(s);
}

int main(void)
{
	test_counter_lifecycle();
	test_heads();
	test_counter_in_transactions();
	T_DONE();
}
