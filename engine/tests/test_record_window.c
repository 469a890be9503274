/*
 * test_record_window.c - recordings a page asks for without knowing times
 * (lab_record_opts), and the lseek's own events (trace_kinds.def eio_count,
 * lseek_ret):
 *   - from_op: the recording starts at the n-th operation of a kind: the
 *     listing, then that operation's start as the first task event; the
 *     same rule puts both kernels at the same operation of their own runs;
 *     a run that never reaches it records nothing; the result is
 *     byte-identical to a run that does not record;
 *   - only: the kinds not asked for are neither kept nor counted;
 *   - the lseek's events add up to the run's metrics (lseek_calls,
 *     lock_records_avg, search_records_avg, state_cache_hits / misses);
 *     6.1 never has a cached state, 6.2 hits it, 6.2 without 9/9 is 6.1
 *     again; where the cached state points is a record of the io_tree;
 *   - bad options are refused (LAB_EINVAL), a second recording too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exp.h"
#include "lab.h"
#include "sim.h"
#include "t.h"
#include "t_lab.h"

static int kind_is(const sim *s, int kind, const char *name)
{
	return strcmp(sim_trace_kind_name(s, kind), name) == 0;
}

/* Step a run to its end. */
static void finish(lab_run *r)
{
	int done = 0;
	while (!done)
		if (lab_step(r, 50000, &done))
			break;
	CHECK(done);
}

static char *result_of(lab_run *r)
{
	char *out = NULL;
	CHECK_EQ(lab_result_json(r, &out), 0);
	return out;
}

static const char *const DELALLOC = "file_mib=1\nstate=delalloc\ndirty_expire_s=600";

/* from_op: the window starts at the operation, the run is unchanged. */
static void test_from_op(void)
{
	for (int v = 0; v < 2; v++) {
		const char *variant = v ? "after" : "before";
		lab_run *plain = t_open("sparse-cp", variant, DELALLOC, 3);
		finish(plain);
		char *want = result_of(plain);
		lab_close(plain);

		lab_run *r = t_open("sparse-cp", variant, DELALLOC, 3);
		CHECK_EQ(lab_record_opts(r, "from_op=op:lseek\nnth=100\nmax_events=5000"), 0);
		CHECK_EQ(lab_record_state(r), 1);
		finish(r);
		CHECK_EQ(lab_record_state(r), 2);
		char *got = result_of(r);
		CHECK(want && got && strcmp(want, got) == 0);
		/* the listing (no task), then op:lseek with its offset: the 101st
		 * call of cp, SEEK_DATA at the 50th hole (4 KiB extents and holes) */
		sim_rec_it it = {0};
		sim_rec_ev ev;
		int listed = 0, first = 1, lseeks = 0;
		while (sim_rec_next(r->sim, &it, &ev)) {
			if (first && ev.task < 0) {
				listed++;
				continue;
			}
			if (first) {
				CHECK(kind_is(r->sim, ev.kind, "op:lseek"));
				CHECK_EQ(ev.a[2], 3);            /* SEEK_DATA */
				CHECK_EQ(ev.a[3], 49 * 8192 + 4096); /* its offset */
				first = 0;
			}
			if (kind_is(r->sim, ev.kind, "op:lseek"))
				lseeks++;
		}
		CHECK(listed > 4); /* the trees and the io_tree's records */
		CHECK_EQ(lseeks, 256 - 100);
		char *tr = NULL;
		CHECK_EQ(lab_trace_json(r, 0, &tr), 0);
		CHECK(strstr(tr, "\"complete\":true") != NULL);
		lab_free(tr);
		lab_free(want);
		lab_free(got);
		lab_close(r);
	}
	/* an operation the run never reaches: nothing recorded */
	lab_run *r = t_open("sparse-cp", "before", DELALLOC, 3);
	CHECK_EQ(lab_record_opts(r, "from_op=op:lseek\nnth=100000"), 0);
	finish(r);
	CHECK_EQ(lab_record_state(r), 1);
	CHECK_EQ(sim_rec_kept(r->sim), 0);
	char *tr = NULL;
	CHECK_EQ(lab_trace_json(r, 0, &tr), 0);
	CHECK(strstr(tr, "\"recording\":false") != NULL);
	lab_free(tr);
	lab_close(r);
	/* a kind no experiment has: the same */
	r = t_open("qgroup-drop", "before", "subvols=1\nfiles=16", 3);
	CHECK_EQ(lab_record_opts(r, "from_op=op:nothing"), 0);
	finish(r);
	CHECK_EQ(sim_rec_kept(r->sim), 0);
	lab_close(r);
	/* qgroup-drop: the drop's first step, in both kernels at the same
	 * operation; the window is full before the run ends */
	for (int v = 0; v < 2; v++) {
		r = t_open("qgroup-drop", v ? "after" : "before", "subvols=2\nfiles=64\nthreshold=16", 3);
		CHECK_EQ(lab_record_opts(r, "from_op=op:drop\nmax_events=300"), 0);
		finish(r);
		CHECK_EQ(lab_record_state(r), 3);
		CHECK_EQ(sim_rec_kept(r->sim), 300);
		CHECK(sim_rec_unkept(r->sim) > 0);
		sim_rec_it it = {0};
		sim_rec_ev ev;
		while (sim_rec_next(r->sim, &it, &ev) && ev.task < 0)
			;
		CHECK(kind_is(r->sim, ev.kind, "op:drop"));
		CHECK_EQ(ev.a[2], 0); /* no leaf dropped yet */
		lab_close(r);
	}
}

/* only=: the other kinds are neither kept nor counted as left out. */
static void test_only(void)
{
	lab_run *all = t_open("sparse-cp", "after", DELALLOC, 3);
	CHECK_EQ(lab_record_opts(all, "from_op=op:lseek"), 0);
	finish(all);
	uint64_t n_all = sim_rec_kept(all->sim), want = 0;
	sim_rec_it it = {0};
	sim_rec_ev ev;
	while (sim_rec_next(all->sim, &it, &ev))
		if (kind_is(all->sim, ev.kind, "op:lseek") || kind_is(all->sim, ev.kind, "lseek_ret"))
			want++;
	lab_close(all);

	lab_run *r = t_open("sparse-cp", "after", DELALLOC, 3);
	CHECK_EQ(lab_record_opts(r, "from_op=op:lseek\nonly=op:lseek,lseek_ret"), 0);
	finish(r);
	CHECK_EQ(sim_rec_kept(r->sim), want);
	CHECK(want < n_all);
	CHECK_EQ(sim_rec_unkept(r->sim), 0);
	it.pos = 0;
	while (sim_rec_next(r->sim, &it, &ev))
		CHECK(kind_is(r->sim, ev.kind, "op:lseek") || kind_is(r->sim, ev.kind, "lseek_ret"));
	lab_close(r);
}

/* The lseeks' events add up to the run's metrics. */
typedef struct lseek_sum {
	uint64_t calls, lock, search, hits, misses, counts[3], cs_set;
	int cs_outside; /* a cached state pointing at no record of the run */
} lseek_sum;

static lseek_sum sum_lseeks(const char *variant, const char *params, t_res *m)
{
	lseek_sum s;
	memset(&s, 0, sizeof s);
	lab_run *r = t_open("sparse-cp", variant, params, 3);
	CHECK_EQ(lab_record_opts(r, "from_op=op:lseek\nonly=op:lseek,lseek_ret,eio_count,eio,eio_del"), 0);
	finish(r);
	/* the records the io_tree ever had, to check the cached state's */
	sim_rec_it it = {0};
	sim_rec_ev ev;
	while (sim_rec_next(r->sim, &it, &ev)) {
		if (kind_is(r->sim, ev.kind, "lseek_ret")) {
			s.calls++;
			s.lock += (uint64_t)ev.a[4];
			s.search += (uint64_t)ev.a[5];
			s.hits += (uint64_t)ev.a[6];
			s.misses += (uint64_t)ev.a[7];
		} else if (kind_is(r->sim, ev.kind, "eio_count")) {
			CHECK(ev.a[4] >= 0 && ev.a[4] <= 2);
			s.counts[ev.a[4] & 3]++;
			if (ev.a[6] >= 0) {
				s.cs_set++;
				/* a record of the file, page-aligned, inclusive end */
				CHECK(ev.a[6] % 4096 == 0 && (ev.a[7] + 1) % 4096 == 0 && ev.a[7] > ev.a[6]);
				if (ev.a[7] >= (1 << 20))
					s.cs_outside++;
			}
		}
	}
	lab_close(r);
	*m = t_run("sparse-cp", variant, params, 3);
	return s;
}

static void test_lseek_events(void)
{
	char p9off[200];
	snprintf(p9off, sizeof p9off, "%s\np9_file_cache=false", DELALLOC);
	struct { const char *variant, *params; } cases[] = {
		{ "before", DELALLOC }, { "after", DELALLOC }, { "after", p9off },
		{ "before", "file_mib=1\nstate=cold" }, { "after", "file_mib=1\nstate=cold" },
	};
	lseek_sum s[5];
	for (int i = 0; i < 5; i++) {
		t_res m;
		s[i] = sum_lseeks(cases[i].variant, cases[i].params, &m);
		double n = (double)s[i].calls;
		CHECK_EQ(s[i].calls, (uint64_t)t_metric(&m, "lseek_calls"));
		CHECK_NEAR((double)s[i].lock / n, t_metric(&m, "lock_records_avg"), 1e-6);
		CHECK_NEAR((double)s[i].search / n + 1e-9, t_metric(&m, "search_records_avg") + 1e-9, 1e-6);
		CHECK_EQ(s[i].hits, (uint64_t)t_metric(&m, "state_cache_hits"));
		CHECK_EQ(s[i].misses, (uint64_t)t_metric(&m, "state_cache_misses"));
		/* each search's own hit or miss adds up to the calls' */
		CHECK_EQ(s[i].counts[1], s[i].hits);
		CHECK_EQ(s[i].counts[2], s[i].misses);
		CHECK_EQ(s[i].cs_outside, 0);
	}
	/* 6.1: every delalloc search descends from the root, no cached state */
	CHECK(s[0].counts[0] >= s[0].calls); /* at least one per call */
	CHECK_EQ(s[0].hits + s[0].misses + s[0].cs_set, 0);
	/* 6.2: the searches start at the cached state; it points at a record */
	CHECK(s[1].hits >= s[1].calls - 1);
	CHECK_EQ(s[1].counts[0], 0);
	CHECK_EQ(s[1].cs_set, s[1].counts[1] + s[1].counts[2]);
	/* 6.2 without 9/9: no cached state across calls, descents again */
	CHECK_EQ(s[2].hits + s[2].misses, 0);
	CHECK_EQ(s[2].counts[0], s[0].counts[0]);
	/* cold: no delalloc, no search at all (the io_tree is not asked) */
	CHECK_EQ(s[3].counts[0] + s[3].counts[1] + s[3].counts[2], 0);
	CHECK_EQ(s[4].counts[0] + s[4].counts[1] + s[4].counts[2], 0);
}

static void test_errors(void)
{
	lab_run *r = t_open("sparse-cp", "before", "file_mib=1", 1);
	CHECK_EQ(lab_record_opts(NULL, ""), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, NULL), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "max_events=0"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "max_events=1000001"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "max_events=12.5"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "nth=-1"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "from_op=lseek"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "from_op=op:"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "from_op=op:lseek\nfrom_ns=5"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "colour=blue"), LAB_EINVAL);
	CHECK_EQ(lab_record_opts(r, "max_events"), LAB_EINVAL);
	CHECK_EQ(lab_record_state(r), 0);
	CHECK_EQ(lab_record_opts(r, "\nmax_events=10\n"), 0);
	CHECK_EQ(lab_record_opts(r, "max_events=10"), LAB_ESTATE);
	CHECK_EQ(lab_record(r, 0, 10), LAB_ESTATE);
	lab_close(r);
	CHECK_EQ(lab_record_state(NULL), 0);
}

int main(void)
{
	test_from_op();
	test_only();
	test_lseek_events();
	test_errors();
	T_DONE();
}
