/* test_sim.c - the event core: ordering, tasks, waits, locks, series, trace,
 * the PRNG and the portable math. */
#include <stdint.h>
#include <stdlib.h>

#include "lab.h"
#include "sim.h"
#include "strbuf.h"
#include "t.h"

static int order[16], norder;
static void rec(sim *s, void *arg) { (void)s; order[norder++] = (int)(intptr_t)arg; }

static void test_event_order(void)
{
	sim *s = sim_create(1, 0);
	norder = 0;
	sim_at(s, 30, rec, (void *)3);
	sim_at(s, 10, rec, (void *)1);
	sim_at(s, 20, rec, (void *)2);
	sim_at(s, 20, rec, (void *)22); /* same time: FIFO by sequence */
	CHECK_EQ(sim_run(s, 100, SIMTIME_MAX), 1);
	CHECK_EQ(norder, 4);
	CHECK_EQ(order[0], 1);
	CHECK_EQ(order[1], 2);
	CHECK_EQ(order[2], 22);
	CHECK_EQ(order[3], 3);
	CHECK_EQ(sim_now(s), 30);
	CHECK_EQ(sim_events(s), 4);
	/* budget and horizon */
	norder = 0;
	sim_at(s, 40, rec, (void *)4);
	sim_at(s, 50, rec, (void *)5);
	CHECK_EQ(sim_run(s, 100, 45), 0);
	CHECK_EQ(norder, 1);
	CHECK_EQ(sim_run(s, 1, SIMTIME_MAX), 1);
	sim_destroy(s);
}

/* A worker that does 3 steps of 100 ns CPU each. */
static int worker(sim *s, task *t)
{
	task_cpu(s, t, 100);
	return ++t->state == 3 ? TASK_DONE : TASK_RUN;
}

static void test_tasks_cpus(void)
{
	sim *s = sim_create(1, 1); /* one CPU: two tasks serialise */
	task *a = task_spawn(s, "a", worker, NULL, 0);
	task *b = task_spawn(s, "b", worker, NULL, 0);
	sim_run(s, 1000, SIMTIME_MAX);
	CHECK(a->done && b->done);
	CHECK_EQ(a->cpu_ns + b->cpu_ns, 600);
	CHECK_EQ(a->clock > b->clock ? a->clock : b->clock, 600);
	CHECK(a->runq_ns + b->runq_ns > 0);
	sim_destroy(s);

	s = sim_create(1, 0); /* unlimited: they overlap */
	a = task_spawn(s, "a", worker, NULL, 0);
	b = task_spawn(s, "b", worker, NULL, 0);
	sim_run(s, 1000, SIMTIME_MAX);
	CHECK_EQ(a->clock, 300);
	CHECK_EQ(b->clock, 300);
	sim_destroy(s);
}

static waitq wq;
static int sleeper(sim *s, task *t)
{
	if (t->state++ == 0) {
		task_park(t, &wq);
		return TASK_BLOCKED;
	}
	return TASK_DONE;
}
static void waker(sim *s, void *arg) { waitq_wake_all(s, &wq, sim_now(s) + 5); }

static void test_waitq(void)
{
	sim *s = sim_create(1, 0);
	memset(&wq, 0, sizeof wq);
	task *a = task_spawn(s, "a", sleeper, NULL, 0);
	task *b = task_spawn(s, "b", sleeper, NULL, 10);
	sim_at(s, 1000, waker, NULL);
	sim_run(s, 1000, SIMTIME_MAX);
	CHECK(a->done && b->done);
	CHECK_EQ(a->clock, 1005);
	CHECK_EQ(a->wait_ns, 1005);
	CHECK_EQ(b->wait_ns, 995);
	CHECK_EQ(wq.len, 0);
	sim_destroy(s);
}

static void test_locks(void)
{
	simlock l = {0};
	task t1 = {0}, t2 = {0}, t3 = {0};
	t1.clock = 100;
	simtime_t at = simlock_read(&l, &t1);
	CHECK_EQ(at, 100);
	simlock_read_release(&l, 200);
	t2.clock = 150; /* a second reader does not wait */
	CHECK_EQ(simlock_read(&l, &t2), 150);
	simlock_read_release(&l, 180);
	t3.clock = 120; /* a writer waits for both readers */
	CHECK_EQ(simlock_write(&l, &t3), 200);
	CHECK_EQ(t3.clock, 200);
	CHECK_EQ(t3.wait_ns, 80);
	simlock_write_release(&l, 300);
	t1.clock = 250; /* a reader waits for the writer */
	CHECK_EQ(simlock_read(&l, &t1), 300);
	CHECK_EQ(t1.clock, 300);
	CHECK_EQ(t1.wait_ns, 50);
	CHECK_EQ(t2.wait_ns, 0);
}

static void test_prng(void)
{
	prng a, b;
	prng_seed(&a, 42);
	prng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		CHECK_EQ(prng_next(&a) == prng_next(&b), 1);
	prng_seed(&b, 43);
	CHECK(prng_next(&a) != prng_next(&b));
	/* moments of the distributions */
	double sum = 0, sum2 = 0, lsum = 0;
	int n = 200000, below[10] = {0};
	for (int i = 0; i < n; i++) {
		double z = prng_normal(&a);
		sum += z;
		sum2 += z * z;
		lsum += dm_log(prng_lognormal(&a, 1.0, 0.5));
		below[prng_below(&a, 10)]++;
	}
	CHECK(fabs(sum / n) < 0.01);
	CHECK(fabs(sum2 / n - 1) < 0.02);
	CHECK(fabs(lsum / n - 1.0) < 0.01);
	for (int i = 0; i < 10; i++)
		CHECK(abs(below[i] - n / 10) < n / 100);
	double esum = 0;
	for (int i = 0; i < n; i++)
		esum += prng_exponential(&a, 3.0);
	CHECK(fabs(esum / n - 3.0) < 0.05);
}

/* prng_below_by draws what prng_below draws, for small and huge n, and
 * its multiply gives r % n at the edges (r near 0, near n's multiples,
 * near 2^64). */
static void test_prng_below_by(void)
{
	const uint64_t ns[] = { 1, 2, 3, 10, 13, 39, 62, 1000, 1u << 20, 4294967291ull,
				(1ull << 32) + 15, 1ull << 40, (1ull << 63) - 1, 1ull << 63,
				(1ull << 63) + 12345, UINT64_MAX - 1, UINT64_MAX };
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
		prng a, b;
		prng_seed(&a, 7 + i);
		prng_seed(&b, 7 + i);
		prng_div d = prng_div_make(ns[i]);
		int same = 1;
		for (int k = 0; k < 20000; k++)
			same &= prng_below_by(&a, &d) == prng_below(&b, ns[i]);
		CHECK_EQ(same, 1);
		CHECK_EQ(prng_next(&a) == prng_next(&b), 1); /* as many draws */
		const uint64_t n = ns[i];
		const uint64_t rs[] = { 0, 1, n - 1, n, n + 1, 2 * n - 1, 2 * n, UINT64_MAX,
					UINT64_MAX - 1, UINT64_MAX - n, UINT64_MAX / n * n,
					UINT64_MAX / n * n - 1, (UINT64_MAX / n - 1) * n };
		for (size_t k = 0; k < sizeof rs / sizeof rs[0]; k++)
			CHECK_EQ(prng_mod(rs[k], &d), rs[k] % n);
	}
}

static void test_detmath(void)
{
	double xs[] = {1e-300, 1e-10, 0.001, 0.5, 0.7071, 1, 1.5, 2, 10, 12345.678, 1e200};
	for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
		CHECK(fabs(dm_log(xs[i]) - log(xs[i])) <= 1e-14 * fmax(1, fabs(log(xs[i]))));
		CHECK(fabs(dm_log2(xs[i]) - log2(xs[i])) <= 1e-13 * fmax(1, fabs(log2(xs[i]))));
	}
	double es[] = {-700, -20, -1, -1e-8, 0, 1e-8, 0.3, 1, 2.5, 50, 700};
	for (size_t i = 0; i < sizeof es / sizeof es[0]; i++)
		CHECK(fabs(dm_exp(es[i]) - exp(es[i])) <= 1e-14 * exp(es[i]));
	CHECK(fabs(dm_pow(2, 10) - 1024) < 1e-10);
	CHECK(fabs(dm_pow(10, -3) - 1e-3) < 1e-17);
	CHECK(isinf(dm_exp(1000)));
	CHECK_EQ(dm_exp(-1000), 0);
	CHECK(isnan(dm_log(-1)));
}

static void test_series_trace(void)
{
	sim *s = sim_create(7, 0);
	int id = sim_series_id(s, "q");
	CHECK_EQ(sim_series_id(s, "q"), id);
	for (int i = 0; i < 100000; i++)
		sim_series_add(s, id, (simtime_t)i, i);
	strbuf sb;
	sb_init(&sb);
	sim_series_json(s, &sb);
	/* bounded: decimated to at most the cap, still spanning the run */
	int commas = 0;
	for (size_t i = 0; i < sb.len; i++)
		commas += sb.buf[i] == ',';
	CHECK(commas < 2 * 1100);
	CHECK(strstr(sb.buf, "\"t\":[0,") != NULL);
	sb_free(&sb);

	int k = sim_trace_kind_args(s, "test_io", "x,y,z");
	CHECK(k >= TK_NKINDS);
	CHECK_EQ(sim_trace_kind(s, "test_io"), k);
	CHECK_EQ(sim_trace_kind(s, "blk"), TK_BLK);
	sim_trace(s, k, 1, 1, 2, 3); /* not recording: not kept */
	CHECK_EQ(sim_rec_kept(s), 0);
	CHECK_EQ(sim_record_start(s, sim_now(s), 0), LAB_EINVAL);
	CHECK_EQ(sim_record_start(s, sim_now(s), 1000), 0);
	CHECK_EQ(sim_record_start(s, sim_now(s), 1000), LAB_ESTATE);
	for (int i = 0; i < 1500; i++)
		sim_trace(s, k, 1, i, 0, -i);
	CHECK_EQ(sim_rec_kept(s), 1000);
	CHECK_EQ(sim_rec_unkept(s), 500);
	sim_rec_it it = {0};
	sim_rec_ev ev;
	int n = 0;
	while (sim_rec_next(s, &it, &ev)) {
		CHECK_EQ(ev.kind, k);
		CHECK_EQ(ev.n, 3);
		CHECK_EQ(ev.a[0], n);
		CHECK_EQ(ev.a[2], -n);
		n++;
	}
	CHECK_EQ(n, 1000);
	sb_init(&sb);
	sim_trace_json(s, 999, &sb);
	CHECK(strstr(sb.buf, "\"next\":1000") != NULL);
	CHECK(strstr(sb.buf, "\"complete\":false") != NULL);
	CHECK(strstr(sb.buf, "\"unkept\":500") != NULL);
	CHECK(strstr(sb.buf, "{\"name\":\"test_io\",\"args\":[\"x\",\"y\",\"z\"]}") != NULL);
	CHECK(strstr(sb.buf, "\"events\":[[") != NULL);
	CHECK(strstr(sb.buf, ",999,0,-999]]") != NULL);
	sb_free(&sb);

	int c = sim_counter_id(s, "pages");
	sim_count(s, c, 5);
	sim_count(s, c, 2);
	CHECK_EQ(sim_counter(s, "pages"), 7);
	CHECK_EQ(sim_counter(s, "nope"), 0);
	sim_destroy(s);
}

static void test_json(void)
{
	strbuf sb;
	sb_init(&sb);
	js_obj(&sb);
	js_kstr(&sb, "a", "x\"y\n");
	js_key(&sb, "b");
	js_arr(&sb);
	js_num(&sb, 1.5);
	js_num(&sb, 3);
	js_num(&sb, INFINITY);
	js_num(&sb, NAN);
	js_obj(&sb);
	js_obj_end(&sb);
	js_arr_end(&sb);
	js_kint(&sb, "c", -7);
	js_knum(&sb, "d", 0.1);
	js_obj_end(&sb);
	char *s = sb_take(&sb);
	CHECK(strcmp(s, "{\"a\":\"x\\\"y\\n\",\"b\":[1.5,3,\"inf\",null,{}],\"c\":-7,\"d\":0.1}") == 0);
	free(s);
}

int main(void)
{
	test_event_order();
	test_tasks_cpus();
	test_waitq();
	test_locks();
	test_prng();
	test_prng_below_by();
	test_detmath();
	test_series_trace();
	test_json();
	T_DONE();
}
