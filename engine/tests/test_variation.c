/*
 * test_variation.c - the sources of run-to-run variation (variation.def):
 * the `variation=` setting, each source switched off reproducing the
 * deterministic run exactly and switched on changing the figures it should
 * and no others, draws that do not shift when another source is switched,
 * and the spreads of `lab run --seeds` (seeds.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ebmem.h"
#include "exp.h"
#include "lab.h"
#include "seeds.h"
#include "strbuf.h"
#include "t.h"
#include "t_lab.h"
#include "variation.h"

static void test_parse(void)
{
	char err[160];
	var_mask m = 0;
	CHECK_EQ(var_parse("on", &m, err, sizeof err), 0);
	CHECK_EQ(m, var_default_mask());
	CHECK_EQ(var_parse("off", &m, err, sizeof err), 0);
	CHECK_EQ(m, VAR_ALL_OFF);
	CHECK_EQ(var_parse("off,timer_phase", &m, err, sizeof err), 0);
	CHECK_EQ(m, (var_mask)1 << V_TIMER_PHASE);
	CHECK_EQ(var_parse("-timer_phase", &m, err, sizeof err), 0);
	CHECK_EQ(m & ((var_mask)1 << V_TIMER_PHASE), 0);
	CHECK_EQ(var_parse("nope", &m, err, sizeof err), LAB_ENOENT);
	CHECK(strstr(err, "'nope'") != NULL);
	CHECK_EQ(var_parse("", &m, err, sizeof err), LAB_EINVAL);
	CHECK_EQ(var_parse("on,", &m, err, sizeof err), LAB_EINVAL);
	CHECK_EQ(var_parse(",on", &m, err, sizeof err), LAB_EINVAL);
	/* the mask round-trips through its string */
	strbuf sb;
	sb_init(&sb);
	var_mask_str((var_mask)1 << V_TIMER_PHASE, &sb);
	var_mask back = 0;
	CHECK_EQ(var_parse(sb.buf, &back, err, sizeof err), 0);
	CHECK_EQ(back, (var_mask)1 << V_TIMER_PHASE);
	sb_free(&sb);
	/* every source is named, described and sourced */
	for (int i = 0; i < V_COUNT; i++) {
		const var_desc *d = var_desc_get(i);
		CHECK(d && d->name[0] && strlen(d->varies) > 20 && strlen(d->source) > 20);
		CHECK_EQ(var_find(d->name), i);
		CHECK(d->tag != 0);
		for (int j = 0; j < i; j++)
			CHECK(var_desc_get(j)->tag != d->tag);
	}
	CHECK(var_desc_get(V_COUNT) == NULL);
}

/* A simulator without sources answers as if every source were off. */
static void test_detached(void)
{
	sim *s = sim_create(5, 0);
	for (int i = 0; i < V_COUNT; i++) {
		CHECK(var_level(s, (var_id)i) == 1.0);
		CHECK_EQ(var_ns(s, (var_id)i, 123456789), 123456789);
		CHECK_EQ(var_on(s, (var_id)i), 0);
	}
	sim *s1 = sim_create(1, 0);
	CHECK_EQ(var_attach(s1, 1, var_default_mask()), 0);
	CHECK(var_phase(s, V_TIMER_PHASE) == var_phase(s1, V_TIMER_PHASE));
	CHECK_EQ(var_seed(s, V_TIMER_PHASE), var_seed(s1, V_TIMER_PHASE));
	sim_destroy(s);
	sim_destroy(s1);
}

/* timer_phase on draws what sparse-cp drew before it was a source (the
 * jiffies at boot below 2^20, from seed ^ "jiffie"); off, seed 1's. */
static void test_timer_phase_draw(void)
{
	for (uint64_t seed = 1; seed <= 40; seed++) {
		prng p;
		prng_seed(&p, seed ^ 0x6a6966666965ull);
		uint64_t old = prng_below(&p, 1u << 20);
		sim *on = sim_create(seed, 0), *off = sim_create(seed, 0);
		CHECK_EQ(var_attach(on, seed, var_default_mask()), 0);
		CHECK_EQ(var_attach(off, seed, VAR_ALL_OFF), 0);
		CHECK_EQ((uint64_t)(var_phase(on, V_TIMER_PHASE) * (double)(1u << 20)), old);
		prng_seed(&p, 1 ^ 0x6a6966666965ull);
		CHECK_EQ((uint64_t)(var_phase(off, V_TIMER_PHASE) * (double)(1u << 20)),
			 prng_below(&p, 1u << 20));
		sim_destroy(on);
		sim_destroy(off);
	}
}

typedef t_res res;
#define run t_run
#define M t_metric

static int same_metrics(const res *a, const res *b)
{
	return a->e && a->e == b->e && !memcmp(a->m, b->m, sizeof a->m);
}

/*
 * Each source, switched off, reproduces the deterministic run exactly;
 * switched on alone, it changes the metrics it should over a few seeds and
 * leaves the listed ones alone.
 */
typedef struct source_case {
	var_id id;
	const char *exp, *variant, *params;
	const char *changes[4]; /* metrics that must differ across seeds */
	const char *keeps[4];   /* metrics that must not (within 1e-6: a flush
				 * that moves may still cost its writer a few ns) */
} source_case;

static const source_case cases[] = {
	/* the flusher's first expiry flush moves against the creation: the
	 * delalloc left at cp, so cp's time; creation itself does not move */
	{ V_TIMER_PHASE, "sparse-cp", "after",
	  "state=delalloc\nfile_mib=8\ndirty_expire_s=1\nwb_interval_s=0.5\n",
	  { "delalloc_extents_at_cp", "cp_ms" }, { "create_s", "lseek_calls" } },
	/* each xfs_io process's cost: how long creation takes; nothing of
	 * cp's work (the flusher's phase is fixed, dirty_expire_s past the
	 * creation) */
	{ V_PROC_START, "sparse-cp", "before", "state=delalloc\nfile_mib=4\ndirty_expire_s=600\n",
	  { "create_s" }, { "lseek_calls", "cp_ms", "tree_nodes_visited" } },
	/* each syscall's cost: cp's time (cached: its lseeks and reads), not
	 * the work it does */
	{ V_SYSCALL, "sparse-cp", "after", "state=cached\nfile_mib=4\n",
	  { "cp_ms" }, { "lseek_calls", "tree_nodes_visited", "cache_hits" } },
	/* the drive's state: reads' and writes' latency and rate */
	{ V_DEVICE_STATE, "fio", "base", "rw=randread\nios=4000\n",
	  { "clat_p50_us", "iops" }, { NULL } },
	{ V_DEVICE_STATE, "fio", "base", "rw=randwrite\niodepth=32\nios=20000\n",
	  { "clat_p50_us", "iops" }, { NULL } },
	/* a virtual disk: its host drive's state moves its synchronous writes */
	{ V_DEVICE_STATE, "fio", "base", "device=vm-ssd\nrw=randwrite\nios=400\n",
	  { "clat_p50_us" }, { NULL } },
	/* the build's CPU speed: the accounting's time, not what it does */
	{ V_CPU_BUILD, "qgroup-drop", "after", "subvols=2\nfiles=64\nthreshold=64\n",
	  { "account_avg_ms" }, { "account_calls", "dirty_extents" } },
};

/* A source that does not apply leaves a run exactly as with it off. */
typedef struct inert_case {
	var_id id;
	const char *exp, *variant, *params;
} inert_case;

static const inert_case inert[] = {
	/* no drive state for a profile that is not fitted */
	{ V_DEVICE_STATE, "fio", "base", "device=hdd\nios=400\n" },
	{ V_DEVICE_STATE, "fio", "base", "device=ideal\nios=4000\n" },
	{ V_PROC_START, "fio", "base", "ios=4000\n" },
	{ V_PROC_START, "qgroup-drop", "after", "subvols=2\nfiles=64\n" },
	{ V_TIMER_PHASE, "fio", "base", "ios=4000\n" },
	{ V_ALLOC_LUCK, "sparse-cp", "after", "state=cold\nfile_mib=4\n" },
};

static void test_inert(void)
{
	for (size_t k = 0; k < sizeof inert / sizeof inert[0]; k++) {
		const inert_case *c = &inert[k];
		char off[256], only[256];
		snprintf(off, sizeof off, "%svariation=off", c->params);
		snprintf(only, sizeof only, "%svariation=off,%s", c->params, var_desc_get(c->id)->name);
		for (uint32_t seed = 2; seed <= 3; seed++) {
			res a = run(c->exp, c->variant, off, seed), b = run(c->exp, c->variant, only, seed);
			if (!same_metrics(&a, &b))
				fprintf(stderr, "source %s moved %s %s\n", var_desc_get(c->id)->name, c->exp,
					c->params);
			CHECK(same_metrics(&a, &b));
		}
	}
}

/* Switching one source leaves every other source's draws where they were:
 * each has its own stream. */
static void test_independent_streams(void)
{
	var_mask all = (((var_mask)1 << V_COUNT) - 1);
	for (int drop = 0; drop < V_COUNT; drop++) {
		sim *a = sim_create(9, 0), *b = sim_create(9, 0);
		CHECK_EQ(var_attach(a, 9, all), 0);
		CHECK_EQ(var_attach(b, 9, all & ~((var_mask)1 << drop)), 0);
		for (int i = 0; i < V_COUNT; i++) {
			if (i == drop)
				continue;
			const var_desc *d = var_desc_get(i);
			CHECK(var_level(a, (var_id)i) == var_level(b, (var_id)i));
			CHECK(var_phase(a, (var_id)i) == var_phase(b, (var_id)i));
			CHECK_EQ(var_seed(a, (var_id)i), var_seed(b, (var_id)i));
			if (d->kind == VK_JITTER)
				for (int k = 0; k < 50; k++)
					CHECK_EQ(var_ns(a, (var_id)i, 1000000), var_ns(b, (var_id)i, 1000000));
		}
		sim_destroy(a);
		sim_destroy(b);
	}
}

/* The distributions are what the table says: a jitter's mean is 1 and its
 * log-sd the table's; a level's median is 1 over many seeds. */
static void test_distributions(void)
{
	for (int i = 0; i < V_COUNT; i++) {
		const var_desc *d = var_desc_get(i);
		if (d->kind == VK_JITTER) {
			sim *s = sim_create(4, 0);
			CHECK_EQ(var_attach(s, 4, (var_mask)1 << i), 0);
			double sum = 0, sl = 0, sl2 = 0;
			const int n = 200000;
			for (int k = 0; k < n; k++) {
				double x = (double)var_ns(s, (var_id)i, 1000000000) / 1e9;
				sum += x;
				sl += dm_log(x);
				sl2 += dm_log(x) * dm_log(x);
			}
			CHECK_NEAR(sum / n, 1.0, 0.003);
			CHECK_NEAR(sqrt(sl2 / n - (sl / n) * (sl / n)), d->b, 0.01);
			sim_destroy(s);
		} else if (d->kind == VK_LEVEL && d->dist == VD_PER_DRIVE) {
			/* a standard normal z per run, 0 at seed 1 */
			double sum = 0, ss = 0;
			const int n = 2000;
			for (int k = 0; k < n; k++) {
				sim *s = sim_create((uint64_t)k + 1, 0);
				CHECK_EQ(var_attach(s, (uint64_t)k + 1, (var_mask)1 << i), 0);
				double z = var_z(s, (var_id)i);
				if (k == 0)
					CHECK(z == 0.0);
				sum += z;
				ss += z * z;
				sim_destroy(s);
			}
			CHECK(fabs(sum / n) < 0.08); /* 3.5 sd of a mean of 2000 */
			CHECK_NEAR(sqrt(ss / n - (sum / n) * (sum / n)), 1.0, 0.06);
		} else if (d->kind == VK_LEVEL || d->kind == VK_BUILD) {
			double v[401];
			for (int k = 0; k < 401; k++) {
				sim *s = sim_create((uint64_t)k + 1, 0);
				CHECK_EQ(var_attach(s, (uint64_t)k + 1, (var_mask)1 << i), 0);
				v[k] = var_level(s, (var_id)i);
				sim_destroy(s);
			}
			spread sp;
			spread_of(v, 401, &sp);
			CHECK_NEAR(sp.p50, d->a, 2 * d->b);
			/* p95 / p50 of a lognormal: exp(1.645 sigma) */
			CHECK_NEAR(dm_log(sp.p95 / sp.p50), 1.645 * d->b, 0.2);
		}
	}
}

/* alloc_luck: the extent-buffer allocator's draws under pressure are the
 * run's own; off, every run draws seed 1's. */
static uint64_t slow_pages(uint64_t seed, var_mask mask)
{
	sim *s = sim_create(seed, 0);
	CHECK_EQ(var_attach(s, seed, mask), 0);
	ebmem_cfg cfg;
	ebmem_cfg_default(&cfg);
	cfg.slow_p_max = 0.05;
	ebmem *m = NULL;
	CHECK_EQ(ebmem_create(s, &cfg, &m), 0);
	ebmem_set_usage(m, cfg.ram_bytes / 2, cfg.ram_bytes / 2);
	for (int k = 0; k < 400; k++) {
		ebmem_eb *eb = NULL;
		if (ebmem_alloc(m, NULL, &eb, NULL) == 0)
			ebmem_free(m, eb);
	}
	uint64_t n = m->slow_pages;
	ebmem_destroy(m);
	sim_destroy(s);
	return n;
}

static void test_alloc_luck(void)
{
	var_mask on = (var_mask)1 << V_ALLOC_LUCK;
	uint64_t off1 = slow_pages(1, VAR_ALL_OFF);
	int differ = 0;
	for (uint64_t seed = 2; seed <= 6; seed++) {
		CHECK_EQ(slow_pages(seed, VAR_ALL_OFF), off1);
		differ |= slow_pages(seed, on) != slow_pages(1, on);
		CHECK(slow_pages(seed, on) > 0);
	}
	CHECK(differ);
}

static void test_each_source(void)
{
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		const source_case *c = &cases[k];
		const char *name = var_desc_get(c->id)->name;
		char off[512], only[512];
		snprintf(off, sizeof off, "%svariation=off", c->params);
		snprintf(only, sizeof only, "%svariation=off,%s", c->params, name);
		/* off: every seed gives seed 1's deterministic run, whose draws
		 * of the other streams (the device's) are the seed's own, so
		 * compare what the source sets */
		res base = run(c->exp, c->variant, off, 1);
		res s1 = run(c->exp, c->variant, only, 1);
		int differs[4] = {0};
		for (uint32_t seed = 2; seed <= 8; seed++) {
			res o = run(c->exp, c->variant, off, seed);
			res on = run(c->exp, c->variant, only, seed);
			for (int j = 0; j < 4 && c->changes[j]; j++) {
				CHECK_NEAR(M(&o, c->changes[j]), M(&base, c->changes[j]), 0.02);
				differs[j] |= M(&on, c->changes[j]) != M(&s1, c->changes[j]);
			}
			for (int j = 0; j < 4 && c->keeps[j]; j++)
				CHECK_NEAR(M(&on, c->keeps[j]), M(&o, c->keeps[j]), 1e-6);
		}
		for (int j = 0; j < 4 && c->changes[j]; j++) {
			if (!differs[j])
				fprintf(stderr, "source %s did not move %s\n", name, c->changes[j]);
			CHECK(differs[j]);
		}
	}
}

/* With every source off, seed 1 is the run the lab gave before variation
 * had switches; and the sources' defaults at seed 1 are that run too while
 * only the timer's phase is on. */
static void test_off_is_todays_run(void)
{
	const char *p = "state=delalloc\nfile_mib=8\ndirty_expire_s=1\nwb_interval_s=0.5\n";
	char off[256];
	snprintf(off, sizeof off, "%svariation=off", p);
	res a = run("sparse-cp", "before", p, 1), b = run("sparse-cp", "before", off, 1);
	if (var_default_mask() == ((var_mask)1 << V_TIMER_PHASE))
		CHECK(same_metrics(&a, &b));
	/* the same settings twice: the same bytes */
	res c = run("sparse-cp", "before", off, 1);
	CHECK(same_metrics(&b, &c));
}

static void test_spread(void)
{
	double v[20];
	for (int i = 0; i < 20; i++)
		v[i] = 20 - i; /* unsorted on purpose */
	spread s;
	spread_of(v, 20, &s);
	CHECK_EQ(s.n, 20);
	CHECK_NEAR(s.mean, 10.5, 1e-12);
	CHECK_NEAR(s.sd, 5.916079783, 1e-9); /* sqrt(35), the sample sd */
	CHECK_NEAR(s.p5, 1.95, 1e-12);       /* 1 + 0.05 * 19 */
	CHECK_NEAR(s.p50, 10.5, 1e-12);
	CHECK_NEAR(s.p95, 19.05, 1e-12);
	CHECK(s.min == 1 && s.max == 20);
	double one = 7;
	spread_of(&one, 1, &s);
	CHECK(s.p5 == 7 && s.p95 == 7 && s.sd == 0);
	spread_of(NULL, 0, &s);
	CHECK_EQ(s.n, 0);
}

/* seeds_run: per seed exactly what a run of that seed gives. */
static void test_seeds_run(void)
{
	const char *p = "state=delalloc\nfile_mib=4\ndirty_expire_s=1\nwb_interval_s=0.5\n";
	const lab_exp *e = exp_find("sparse-cp");
	seeds_result sr;
	CHECK_EQ(seeds_run(e, "after", p, 3, 4, &sr), 0);
	CHECK_EQ(sr.n, 4);
	int cp = -1;
	for (int m = 0; m < e->nmetrics; m++)
		if (!strcmp(e->metrics[m].name, "cp_ms"))
			cp = m;
	CHECK_EQ(sr.nval[cp], 4);
	for (int k = 0; k < 4; k++) {
		res one = run("sparse-cp", "after", p, 3 + (uint32_t)k);
		CHECK(sr.val[cp][k] == M(&one, "cp_ms"));
	}
	seeds_free(&sr);
	CHECK_EQ(seeds_run(e, "after", "variation=nope", 1, 2, &sr), LAB_ENOENT);
	CHECK(strstr(sr.errmsg, "nope") != NULL);
	seeds_free(&sr);
}

/* A level is the run's: the same seed draws the same level, seed 1 draws
 * the fitted one (1), and a build level differs between the two kernels
 * of one seed while the device's state does not. */
static void test_levels_per_run(void)
{
	var_mask all = var_default_mask();
	for (uint64_t seed = 1; seed <= 12; seed++) {
		sim *a = sim_create(seed, 0), *b = sim_create(seed, 0), *c = sim_create(seed, 0);
		CHECK_EQ(var_attach_build(a, seed, all, 0x10), 0);
		CHECK_EQ(var_attach_build(b, seed, all, 0x10), 0);
		CHECK_EQ(var_attach_build(c, seed, all, 0x11), 0);
		CHECK(var_level(a, V_CPU_BUILD) == var_level(b, V_CPU_BUILD));
		CHECK(var_z(a, V_DEVICE_STATE) == var_z(b, V_DEVICE_STATE));
		CHECK(var_z(a, V_DEVICE_STATE) == var_z(c, V_DEVICE_STATE));
		if (seed == 1) {
			CHECK(var_level(a, V_CPU_BUILD) == 1.0 && var_level(c, V_CPU_BUILD) == 1.0);
			CHECK(var_z(a, V_DEVICE_STATE) == 0.0);
		} else {
			CHECK(var_level(a, V_CPU_BUILD) != var_level(c, V_CPU_BUILD));
			CHECK(var_z(a, V_DEVICE_STATE) != 0.0);
		}
		sim_destroy(a);
		sim_destroy(b);
		sim_destroy(c);
	}
	/* the per-drive sigmas: a line for each fitted drive, none for the
	 * hand-written ones */
	double rd, wr;
	CHECK(var_device_sigma("consumer-ssd", &rd, &wr) && rd > 0 && wr > 0);
	CHECK(var_device_sigma("nvme-dc", &rd, &wr) && rd > 0 && wr > 0);
	CHECK(var_device_sigma("consumer-nvme", &rd, &wr) && rd > 0 && wr > 0);
	CHECK(!var_device_sigma("hdd", &rd, &wr) && rd == 0 && wr == 0);
	CHECK(!var_device_sigma("vm-ssd", &rd, &wr));
}

/* The device's levels over many seeds are the documented distribution:
 * the consumer-ssd's write level (and a vm-ssd's host's) has the log-sd
 * of its VAR_DEVICE line, median 1. Seen through what a run gives: the
 * QD1 write latency of fio, whose other draws are the device's own. */
static void test_device_level_distribution(void)
{
	double rd, wr;
	CHECK(var_device_sigma("consumer-ssd", &rd, &wr));
	const int n = 400;
	double sl = 0, sl2 = 0;
	for (int k = 0; k < n; k++) {
		sim *s = sim_create((uint64_t)k + 2, 0);
		CHECK_EQ(var_attach(s, (uint64_t)k + 2, (var_mask)1 << V_DEVICE_STATE), 0);
		double l = wr * var_z(s, V_DEVICE_STATE); /* log of the write level */
		sl += l;
		sl2 += l * l;
		sim_destroy(s);
	}
	double mean = sl / n, sd = sqrt(sl2 / n - mean * mean);
	CHECK(fabs(mean) < 3 * wr / sqrt((double)n));
	CHECK_NEAR(sd / wr, 1.0, 0.1);
	/* and the run sees it: a vm-ssd QD1 write's median moves with the
	 * host drive's level, the same z giving the same latency */
	res a = run("fio", "base", "device=vm-ssd\nrw=randwrite\nios=300\nvariation=off,device_state", 5);
	res b = run("fio", "base", "device=vm-ssd\nrw=randwrite\nios=300\nvariation=off,device_state", 5);
	res o = run("fio", "base", "device=vm-ssd\nrw=randwrite\nios=300\nvariation=off", 5);
	CHECK(M(&a, "clat_p50_us") == M(&b, "clat_p50_us"));
	sim *s5 = sim_create(5, 0);
	CHECK_EQ(var_attach(s5, 5, (var_mask)1 << V_DEVICE_STATE), 0);
	double z5 = var_z(s5, V_DEVICE_STATE);
	sim_destroy(s5);
	/* the device share of that latency (host write + flush, ~370 of ~690
	 * us) moves by exp(wr z): the ratio lies between 1 and that factor */
	double f = dm_exp(wr * z5), ratio = M(&a, "clat_p50_us") / M(&o, "clat_p50_us");
	CHECK(z5 != 0.0);
	if (f > 1)
		CHECK(ratio > 1.0 && ratio < f);
	else
		CHECK(ratio < 1.0 && ratio > f);
}

/* The build's CPU level: charges scale with it, small ones included (the
 * roundings carry), and level 1 leaves every charge as it is. */
static void test_cpu_level(void)
{
	sim *s = sim_create(3, 0);
	task *t = task_spawn(s, "t", NULL, NULL, 0);
	CHECK(t != NULL);
	sim_set_cpu_level(s, 1.03);
	for (int k = 0; k < 100000; k++)
		task_cpu(s, t, 8);
	CHECK_NEAR((double)t->clock, 824000.0, 1.0);
	uint64_t c0 = t->clock;
	task_cpu(s, t, 1000000000);
	CHECK_NEAR((double)(t->clock - c0), 1.03e9, 1.0);
	sim_set_cpu_level(s, 1.0);
	c0 = t->clock;
	task_cpu(s, t, 7);
	CHECK_EQ(t->clock - c0, 7);
	sim_destroy(s);
	/* a run's level: qgroup's accounting time (CPU alone) scales by the
	 * after build's level of that seed */
	const char *p = "subvols=2\nfiles=64\nthreshold=64\nvariation=off,cpu_build\n";
	const char *q = "subvols=2\nfiles=64\nthreshold=64\nvariation=off\n";
	res on = run("qgroup-drop", "after", p, 7), off = run("qgroup-drop", "after", q, 7);
	CHECK(M(&on, "account_avg_ms") != M(&off, "account_avg_ms"));
	CHECK_NEAR(M(&on, "account_avg_ms") / M(&off, "account_avg_ms"), 1.0, 0.12);
	CHECK(M(&on, "account_calls") == M(&off, "account_calls"));
}

int main(void)
{
	test_parse();
	test_detached();
	test_timer_phase_draw();
	test_each_source();
	test_inert();
	test_independent_streams();
	test_distributions();
	test_alloc_luck();
	test_off_is_todays_run();
	test_spread();
	test_seeds_run();
	test_levels_per_run();
	test_device_level_distribution();
	test_cpu_level();
	T_DONE();
}
