/* test_ebmem.c - extent-buffer allocation latency: fast path, pressure
 * dependence of direct reclaim, the lognormal tail, determinism. */
#include <stdlib.h>

#include "costs.h"
#include "ebmem.h"
#include "lab.h"
#include "variation.h"
#include "t.h"

static const uint64_t GiB = 1ull << 30;

/* Per-page direct-reclaim fraction over n allocations at a given usage. */
static double slow_fraction(uint64_t seed, double p_max, double share, int n)
{
	sim *s = sim_create(seed, 0);
	ebmem_cfg c;
	ebmem_cfg_default(&c);
	c.ram_bytes = GiB;
	c.slow_p_max = p_max;
	ebmem *m;
	CHECK_EQ(ebmem_create(s, &c, &m), 0);
	ebmem_set_usage(m, 0, (uint64_t)(share * (double)GiB));
	for (int i = 0; i < n; i++) {
		ebmem_eb *eb;
		CHECK_EQ(ebmem_alloc(m, NULL, &eb, NULL), 0);
		ebmem_free(m, eb);
	}
	double f = (double)m->slow_pages / (double)(m->slow_pages + m->fast_pages);
	ebmem_destroy(m);
	sim_destroy(s);
	return f;
}

/* Sum of latencies of n clones: the fingerprint of a seed. */
static uint64_t run_fingerprint(uint64_t seed, int sources)
{
	sim *s = sim_create(seed, 0);
	if (sources)
		var_attach(s, seed, var_default_mask()); /* as lab_open does */
	ebmem_cfg c;
	ebmem_cfg_default(&c);
	c.ram_bytes = GiB;
	c.slow_p_max = 0.05;
	ebmem *m;
	ebmem_create(s, &c, &m);
	ebmem_set_usage(m, GiB / 2, GiB / 2);
	bt_node leaf;
	memset(&leaf, 0, sizeof(leaf));
	uint64_t sum = 0;
	for (int i = 0; i < 2000; i++) {
		ebmem_eb *eb;
		uint64_t lat;
		ebmem_clone(m, NULL, &leaf, &eb, &lat);
		sum = sum * 31 + lat;
		ebmem_free(m, eb);
	}
	ebmem_destroy(m);
	sim_destroy(s);
	return sum;
}

int main(void)
{
	/* lhist: quantiles within a bucket (12.5%), max exact */
	lhist h;
	lhist_init(&h);
	for (uint64_t i = 1; i <= 1000; i++)
		lhist_add(&h, i * 1000);
	CHECK_EQ(h.n, 1000);
	CHECK_EQ(h.max_ns, 1000000);
	CHECK_EQ(lhist_quantile(&h, 1.0), 1000000);
	CHECK_NEAR((double)lhist_quantile(&h, 0.5), 500000.0, 0.13);
	CHECK_NEAR((double)lhist_quantile(&h, 0.99), 990000.0, 0.13);
	CHECK(lhist_quantile(&h, 0.5) >= 500000);
	CHECK_NEAR(lhist_mean(&h), 500500.0, 1e-9);

	/* config validation at the boundary */
	ebmem_cfg c;
	ebmem_cfg_default(&c);
	CHECK_EQ(ebmem_cfg_check(&c), 0);
	c.slow_p_max = 1.5;
	CHECK_EQ(ebmem_cfg_check(&c), LAB_ERANGE);
	ebmem_cfg_default(&c);
	c.slow_p99_ns = c.slow_median_ns / 2;
	CHECK_EQ(ebmem_cfg_check(&c), LAB_ERANGE);
	ebmem_cfg_default(&c);
	c.ram_bytes = 0;
	ebmem *bad = (ebmem *)1;
	CHECK_EQ(ebmem_create(NULL, &c, &bad), LAB_ERANGE);
	CHECK(bad == NULL);
	CHECK_EQ(ebmem_cfg_check(NULL), LAB_EINVAL);

	/* no pressure: always the fast path, 1-3 us for a clone */
	{
		sim *s = sim_create(1, 0);
		ebmem *m;
		ebmem_cfg_default(&c);
		c.ram_bytes = GiB;
		CHECK_EQ(ebmem_create(s, &c, &m), 0);
		ebmem_set_usage(m, GiB / 10, GiB / 10);
		CHECK(ebmem_slow_prob(m) == 0.0);
		task tk;
		memset(&tk, 0, sizeof(tk));
		bt_node leaf;
		memset(&leaf, 0, sizeof(leaf));
		bt_item items[3];
		memset(items, 0, sizeof(items));
		items[2].key.objectid = 77;
		leaf.items = items;
		leaf.nritems = 3;
		leaf.used = 3 * (25 + 160);
		leaf.bytenr = 4096 * 10;
		for (int i = 0; i < 100; i++) {
			ebmem_eb *eb;
			uint64_t lat;
			uint64_t before = tk.clock;
			CHECK_EQ(ebmem_clone(m, &tk, &leaf, &eb, &lat), 0);
			CHECK(lat >= 1000 && lat <= 3000);
			/* clone = allocation + 16 KiB copy, all CPU */
			CHECK_EQ(tk.clock - before, lat + EBMEM_NS_COPY_16K);
			CHECK(tk.clock - before <= 3000);
			CHECK_EQ(eb->nitems, 3);
			CHECK_EQ(eb->items[2].key.objectid, 77);
			CHECK_EQ(eb->src_bytenr, 40960);
			ebmem_free(m, eb);
		}
		CHECK_EQ(tk.wait_ns, 0);
		CHECK_EQ(m->slow_pages, 0);
		CHECK_EQ(m->live_ebs, 0);
		ebmem_destroy(m);
		sim_destroy(s);
	}

	/* pressure dependence: 0 under the watermark, quadratic ramp above */
	double f_low = slow_fraction(7, 0.1, 0.5, 20000);
	double f_mid = slow_fraction(7, 0.1, 0.8, 20000);
	double f_full = slow_fraction(7, 0.1, 1.0, 20000);
	CHECK(f_low == 0.0);
	double r = (0.8 - EBMEM_WATERMARK) / (1.0 - EBMEM_WATERMARK);
	CHECK_NEAR(f_mid, 0.1 * r * r, 0.15);
	CHECK_NEAR(f_full, 0.1, 0.08);
	CHECK(f_low < f_mid && f_mid < f_full);

	/* the slow path's distribution: lognormal, median 5 ms, p99 150 ms */
	{
		sim *s = sim_create(3, 0);
		ebmem *m;
		ebmem_cfg_default(&c);
		c.ram_bytes = GiB;
		c.slow_p_max = 1.0;
		CHECK_EQ(ebmem_create(s, &c, &m), 0);
		ebmem_set_usage(m, GiB / 2, GiB / 2);
		task tk;
		memset(&tk, 0, sizeof(tk));
		for (int i = 0; i < 20000; i++) {
			ebmem_eb *eb;
			CHECK_EQ(ebmem_alloc(m, &tk, &eb, NULL), 0);
			ebmem_free(m, eb);
		}
		CHECK_EQ(m->slow_lat.n, 80000);
		CHECK_NEAR((double)lhist_quantile(&m->slow_lat, 0.5), EBMEM_SLOW_MEDIAN_NS, 0.15);
		CHECK_NEAR((double)lhist_quantile(&m->slow_lat, 0.99), EBMEM_SLOW_P99_NS, 0.2);
		/* direct reclaim is waiting, the fast path is CPU */
		CHECK(tk.wait_ns > 0);
		CHECK_EQ(tk.cpu_ns, 20000ull * (EBMEM_NS_SLAB + 4 * EBMEM_NS_PAGE));
		CHECK_EQ(tk.wait_ns, m->slow_lat.sum_ns);
		ebmem_destroy(m);
		sim_destroy(s);
	}

	/* failures: a dummy allocation may fail, a clone retries */
	{
		sim *s = sim_create(5, 0);
		ebmem *m;
		ebmem_cfg_default(&c);
		c.ram_bytes = GiB;
		c.slow_p_max = 1.0;
		c.fail_p = 0.5;
		CHECK_EQ(ebmem_create(s, &c, &m), 0);
		ebmem_set_usage(m, GiB, 0);
		int fails = 0;
		for (int i = 0; i < 200; i++) {
			ebmem_eb *eb;
			int rc = ebmem_alloc(m, NULL, &eb, NULL);
			CHECK(rc == 0 || rc == LAB_ENOMEM);
			CHECK((rc == 0) == (eb != NULL));
			if (rc)
				fails++;
			ebmem_free(m, eb);
		}
		/* 1 - 0.5^4 of allocations see at least one failing page */
		CHECK(fails > 150 && fails < 200);
		bt_node leaf;
		memset(&leaf, 0, sizeof(leaf));
		ebmem_eb *eb;
		CHECK_EQ(ebmem_clone(m, NULL, &leaf, &eb, NULL), 0);
		CHECK(eb != NULL);
		ebmem_free(m, eb);
		CHECK_EQ(m->live_ebs, 0);
		strbuf sb;
		sb_init(&sb);
		ebmem_details_json(m, &sb);
		CHECK(strstr(sb.buf, "\"reclaim\"") != NULL);
		sb_free(&sb);
		ebmem_destroy(m);
		sim_destroy(s);
	}

	/* determinism by seed */
	CHECK_EQ(run_fingerprint(11, 1), run_fingerprint(11, 1));
	CHECK(run_fingerprint(11, 1) != run_fingerprint(12, 1));
	/* a simulator without sources of variation: alloc_luck off, every
	 * seed draws alike */
	CHECK_EQ(run_fingerprint(11, 0), run_fingerprint(12, 0));
	T_DONE();
}
