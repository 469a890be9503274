/*
 * ebmem.c - extent-buffer memory with pressure-dependent latency, and the
 * log-bucket latency histogram. See ebmem.h.
 */
#include "ebmem.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "lab.h"
#include "labmem.h"
#include "variation.h"

#define EB_PAGES 4        /* 16 KiB nodesize on 4 KiB pages */
#define PAGE_BYTES 4096u
/* z of the 99th percentile of N(0,1) */
#define Z99 2.3263478740408408

/* ------------------------------------------------------------- lhist */

/* Zero a histogram. */
void lhist_init(lhist *h)
{
	memset(h, 0, sizeof(*h));
}

/* Bucket of a duration: octave = floor(log2(ns)), then LHIST_SUB linear
 * sub-buckets inside the octave. Integer-only, so native and WASM agree. */
static unsigned lhist_bucket(uint64_t ns)
{
	if (ns < 1)
		ns = 1;
	unsigned oct = 63u - (unsigned)__builtin_clzll(ns);
	unsigned sub;
	if (oct >= 3)
		sub = (unsigned)((ns >> (oct - 3)) & (LHIST_SUB - 1));
	else
		sub = (unsigned)((ns << (3 - oct)) & (LHIST_SUB - 1));
	unsigned b = oct * LHIST_SUB + sub;
	if (b >= LHIST_OCT * LHIST_SUB)
		b = LHIST_OCT * LHIST_SUB - 1;
	return b;
}

/* Lower edge (ns) of bucket b. */
static uint64_t lhist_lo(unsigned b)
{
	unsigned oct = b / LHIST_SUB, sub = b % LHIST_SUB;
	if (oct >= 3)
		return (1ull << oct) + ((uint64_t)sub << (oct - 3));
	return (1ull << oct) + (((uint64_t)sub << oct) >> 3);
}

/* Record one duration. */
void lhist_add(lhist *h, uint64_t ns)
{
	if (h->n == 0 || ns < h->min_ns)
		h->min_ns = ns;
	h->n++;
	h->sum_ns += ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->b[lhist_bucket(ns)]++;
}

/* The q-quantile as the upper edge of its bucket, capped at the maximum
 * (so the 1.0-quantile is the exact maximum). */
uint64_t lhist_quantile(const lhist *h, double q)
{
	if (h->n == 0)
		return 0;
	if (q >= 1.0)
		return h->max_ns;
	if (q < 0)
		q = 0;
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < LHIST_OCT * LHIST_SUB; b++) {
		seen += h->b[b];
		if (seen >= rank) {
			uint64_t hi = b + 1 < LHIST_OCT * LHIST_SUB ? lhist_lo(b + 1) : h->max_ns;
			return hi < h->max_ns ? hi : h->max_ns;
		}
	}
	return h->max_ns;
}

/* Mean duration (0 when empty). */
double lhist_mean(const lhist *h)
{
	return h->n ? (double)h->sum_ns / (double)h->n : 0.0;
}

/* The histogram as JSON: summary quantiles plus the non-empty buckets. */
void lhist_json(const lhist *h, strbuf *out)
{
	js_obj(out);
	js_kint(out, "n", (int64_t)h->n);
	js_knum(out, "mean_ns", lhist_mean(h));
	js_kint(out, "p50_ns", (int64_t)lhist_quantile(h, 0.50));
	js_kint(out, "p90_ns", (int64_t)lhist_quantile(h, 0.90));
	js_kint(out, "p99_ns", (int64_t)lhist_quantile(h, 0.99));
	js_kint(out, "max_ns", (int64_t)h->max_ns);
	js_key(out, "buckets");
	js_arr(out);
	for (unsigned b = 0; b < LHIST_OCT * LHIST_SUB; b++) {
		if (!h->b[b])
			continue;
		js_arr(out);
		js_int(out, (int64_t)lhist_lo(b));
		js_int(out, h->b[b]);
		js_arr_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}

/* ---------------------------------------------------------- allocator */

void ebmem_cfg_default(ebmem_cfg *c)
{
	c->ram_bytes = 8ull << 30;
	c->watermark = EBMEM_WATERMARK;
	c->slow_p_max = EBMEM_SLOW_P_MAX;
	c->slow_median_ns = EBMEM_SLOW_MEDIAN_NS;
	c->slow_p99_ns = EBMEM_SLOW_P99_NS;
	c->fail_p = 0.0;
}

/* Validate a configuration at the module boundary. */
int ebmem_cfg_check(const ebmem_cfg *c)
{
	if (!c)
		return LAB_EINVAL;
	if (c->ram_bytes < (1ull << 20))
		return LAB_ERANGE;
	if (!(c->watermark >= 0.0 && c->watermark < 1.0))
		return LAB_ERANGE;
	if (!(c->slow_p_max >= 0.0 && c->slow_p_max <= 1.0))
		return LAB_ERANGE;
	if (!(c->slow_median_ns > 0.0 && c->slow_median_ns < 1e12))
		return LAB_ERANGE;
	if (!(c->slow_p99_ns >= c->slow_median_ns && c->slow_p99_ns < 1e13))
		return LAB_ERANGE;
	if (!(c->fail_p >= 0.0 && c->fail_p <= 1.0))
		return LAB_ERANGE;
	return 0;
}

/* Create an allocator; its PRNG is the run's alloc_luck stream. */
int ebmem_create(sim *s, const ebmem_cfg *cfg, ebmem **out)
{
	ebmem_cfg def;
	if (!out)
		return LAB_EINVAL;
	*out = NULL;
	if (!cfg) {
		ebmem_cfg_default(&def);
		cfg = &def;
	}
	int rc = ebmem_cfg_check(cfg);
	if (rc)
		return rc;
	ebmem *m = lab_calloc(1, sizeof(*m));
	if (!m)
		return LAB_ENOMEM;
	m->sim = s;
	m->cfg = *cfg;
	/* which allocations meet direct reclaim: the run's own luck, from
	 * its source's stream (variation.def alloc_luck); the draw from the
	 * simulator's stream is still taken, so the streams forked after it
	 * (a device created later) stay where they were */
	if (s)
		(void)prng_next(sim_prng(s));
	prng_seed(&m->rng, var_seed(s, V_ALLOC_LUCK));
	m->mu = dm_log(cfg->slow_median_ns);
	m->sigma = cfg->slow_p99_ns > cfg->slow_median_ns
		? dm_log(cfg->slow_p99_ns / cfg->slow_median_ns) / Z99 : 0.0;
	lhist_init(&m->lat);
	lhist_init(&m->slow_lat);
	m->c_slow = s ? sim_counter_id(s, "eb_alloc_slow") : -1;
	m->s_pressure = s ? sim_series_id(s, "mem_pressure") : -1;
	*out = m;
	return 0;
}

/* Free the allocator (its ebs must have been freed). */
void ebmem_destroy(ebmem *m)
{
	for (ebmem_eb *eb = m->eb_free, *nx; eb; eb = nx) {
		nx = eb->next_free;
		free(eb->items);
		free(eb);
	}
	free(m);
}

/* Set the dirty and cached bytes the pressure is computed from. */
void ebmem_set_usage(ebmem *m, uint64_t dirty_bytes, uint64_t cached_bytes)
{
	m->dirty_bytes = dirty_bytes;
	m->cached_bytes = cached_bytes;
}

/* Share of the RAM in use by dirty and cached pages and by our own live
 * extent buffers, clamped to [0,1]. */
double ebmem_pressure(const ebmem *m)
{
	double used = (double)m->dirty_bytes + (double)m->cached_bytes +
		      (double)m->live_ebs * EB_PAGES * PAGE_BYTES;
	double share = used / (double)m->cfg.ram_bytes;
	return share > 1.0 ? 1.0 : share;
}

/* Probability that one page allocation enters direct reclaim: zero below
 * the watermark, rising quadratically to slow_p_max at a full RAM (the
 * gap between allocation rate and kswapd's reclaim grows as free memory
 * shrinks). */
double ebmem_slow_prob(const ebmem *m)
{
	double share = ebmem_pressure(m);
	if (share <= m->cfg.watermark)
		return 0.0;
	double r = (share - m->cfg.watermark) / (1.0 - m->cfg.watermark);
	return m->cfg.slow_p_max * r * r;
}

/* Draw the time of allocating the slab object and 4 pages. Each page may
 * enter direct reclaim independently; *failed is set if a reclaim did not
 * free a page (GFP_NOFS, no NOFAIL). Returns (fast ns, slow ns). */
static void ebmem_draw(ebmem *m, uint64_t *fast, uint64_t *slow, int *failed)
{
	if (m->probe)
		m->probe(m->probe_ctx, &m->dirty_bytes, &m->cached_bytes);
	double p = ebmem_slow_prob(m);
	*fast = EBMEM_NS_SLAB;
	*slow = 0;
	*failed = 0;
	for (int i = 0; i < EB_PAGES; i++) {
		*fast += EBMEM_NS_PAGE;
		if (p > 0.0 && prng_unit(&m->rng) < p) {
			double d = prng_lognormal(&m->rng, m->mu, m->sigma);
			*slow += (uint64_t)d;
			lhist_add(&m->slow_lat, (uint64_t)d);
			m->slow_pages++;
			if (m->c_slow >= 0)
				sim_count(m->sim, m->c_slow, 1);
			if (m->cfg.fail_p > 0.0 && prng_unit(&m->rng) < m->cfg.fail_p)
				*failed = 1;
		} else {
			m->fast_pages++;
		}
	}
}

/* Charge an allocation's time: the fast path is CPU, direct reclaim is
 * counted as waiting (it sleeps on writeback and throttling as much as it
 * scans). */
static void ebmem_charge(task *t, uint64_t fast, uint64_t slow, sim *s)
{
	if (!t)
		return;
	task_cpu(s, t, fast);
	if (slow)
		task_wait_until(t, t->clock + slow);
}

/* A new, empty eb descriptor (the memory itself was priced already). */
static ebmem_eb *ebmem_eb_new(ebmem *m, int dummy)
{
	ebmem_eb *eb = m->eb_free;
	if (eb) {
		m->eb_free = eb->next_free;
		m->n_eb_free--;
		bt_item *items = eb->items;
		int cap = eb->cap;
		memset(eb, 0, sizeof(*eb));
		eb->items = items;
		eb->cap = cap;
	} else {
		eb = lab_calloc(1, sizeof(*eb));
		if (!eb)
			return NULL;
	}
	eb->id = ++m->next_id;
	eb->dummy = dummy;
	m->live_ebs++;
	return eb;
}

/* Allocate a dummy extent buffer (alloc_dummy_extent_buffer). */
int ebmem_alloc(ebmem *m, task *t, ebmem_eb **out, uint64_t *lat_ns)
{
	uint64_t fast, slow;
	int failed;
	*out = NULL;
	ebmem_draw(m, &fast, &slow, &failed);
	ebmem_charge(t, fast, slow, m->sim);
	if (lat_ns)
		*lat_ns = fast + slow;
	m->allocs++;
	lhist_add(&m->lat, fast + slow);
	if (m->sim && m->s_pressure >= 0 && t)
		sim_series_add(m->sim, m->s_pressure, t->clock, ebmem_pressure(m));
	if (failed) {
		m->fails++;
		return LAB_ENOMEM;
	}
	ebmem_eb *eb = ebmem_eb_new(m, 1);
	if (!eb)
		return LAB_ENOMEM;
	*out = eb;
	return 0;
}

int ebmem_copy_slots(ebmem *m, task *t, ebmem_eb *eb, const bt_node *leaf, int first, int last)
{
	assert(leaf && leaf->level == 0 && first >= 0 && last <= leaf->nritems);
	if (leaf->nritems > eb->cap) {
		int cap = eb->cap ? eb->cap : 16;
		while (cap < leaf->nritems)
			cap *= 2;
		bt_item *it = lab_realloc(eb->items, (size_t)cap * sizeof(*it));
		if (!it)
			return LAB_ENOMEM;
		eb->items = it;
		eb->cap = cap;
	}
	if (last > first)
		memcpy(eb->items + first, leaf->items + first, (size_t)(last - first) * sizeof(bt_item));
	eb->nitems = leaf->nritems;
	eb->used = leaf->used;
	eb->src_bytenr = leaf->bytenr;
	m->copies++;
	if (t)
		task_cpu(m->sim, t, EBMEM_NS_COPY_16K);
	return 0;
}

/* Clone a leaf (btrfs_clone_extent_buffer): allocation + copy. A failed
 * page allocation is retried (the struct is __GFP_NOFAIL and the clone
 * path has no fallback), each retry paying its own draw. */
int ebmem_clone(ebmem *m, task *t, const bt_node *leaf, ebmem_eb **out,
		uint64_t *lat_ns)
{
	return ebmem_clone_slots(m, t, leaf, 0, leaf->nritems, out, lat_ns);
}

int ebmem_clone_slots(ebmem *m, task *t, const bt_node *leaf, int first, int last,
		      ebmem_eb **out, uint64_t *lat_ns)
{
	uint64_t total = 0;
	*out = NULL;
	for (int tries = 0;; tries++) {
		uint64_t fast, slow;
		int failed;
		ebmem_draw(m, &fast, &slow, &failed);
		ebmem_charge(t, fast, slow, m->sim);
		total += fast + slow;
		if (!failed || tries >= 16)
			break;
		m->fails++;
	}
	m->allocs++;
	m->clones++;
	lhist_add(&m->lat, total);
	if (m->sim && m->s_pressure >= 0 && t)
		sim_series_add(m->sim, m->s_pressure, t->clock, ebmem_pressure(m));
	if (lat_ns)
		*lat_ns = total;
	ebmem_eb *eb = ebmem_eb_new(m, 0);
	if (!eb)
		return LAB_ENOMEM;
	int rc = ebmem_copy_slots(m, t, eb, leaf, first, last);
	if (rc) {
		ebmem_free(m, eb);
		return rc;
	}
	*out = eb;
	return 0;
}

/* Release an eb (free_extent_buffer of the last reference). The caller
 * charges EBMEM_NS_FREE if it runs in a task. */
void ebmem_free(ebmem *m, ebmem_eb *eb)
{
	if (!eb)
		return;
	assert(m->live_ebs > 0);
	m->live_ebs--;
	m->frees++;
	if (m->n_eb_free < 64) {
		eb->next_free = m->eb_free;
		m->eb_free = eb;
		m->n_eb_free++;
		return;
	}
	free(eb->items);
	free(eb);
}

/* A buffered write's page cache pages under pressure. The per-page draw
 * is a geometric gap to the next page that enters reclaim, so a write of
 * many pages costs one draw when none does. */
uint64_t ebmem_pages(ebmem *m, task *t, uint64_t npages)
{
	if (m->probe)
		m->probe(m->probe_ctx, &m->dirty_bytes, &m->cached_bytes);
	double p = ebmem_slow_prob(m);
	uint64_t slow = 0;
	m->data_pages += npages;
	if (p <= 0.0)
		return 0;
	double lq = p >= 1.0 ? 0.0 : dm_log(1.0 - p);
	uint64_t left = npages;
	while (left) {
		/* pages before the next one that enters reclaim */
		uint64_t gap = 0;
		if (lq < 0.0) {
			double u = prng_unit(&m->rng);
			double g = dm_log(1.0 - u) / lq;
			gap = g >= (double)left ? left : (uint64_t)g;
		}
		if (gap >= left)
			break;
		left -= gap + 1;
		double d = prng_lognormal(&m->rng, m->mu, m->sigma);
		slow += (uint64_t)d;
		lhist_add(&m->slow_lat, (uint64_t)d);
		m->slow_pages++;
		m->data_slow++;
		if (m->c_slow >= 0)
			sim_count(m->sim, m->c_slow, 1);
	}
	m->data_stall_ns += slow;
	if (slow && t)
		task_wait_until(t, t->clock + slow);
	return slow;
}

/* Configuration, counters and latency distributions as JSON. */
void ebmem_details_json(const ebmem *m, strbuf *out)
{
	js_obj(out);
	js_key(out, "cfg");
	js_obj(out);
	js_kint(out, "ram_bytes", (int64_t)m->cfg.ram_bytes);
	js_knum(out, "watermark", m->cfg.watermark);
	js_knum(out, "slow_p_max", m->cfg.slow_p_max);
	js_knum(out, "slow_median_ns", m->cfg.slow_median_ns);
	js_knum(out, "slow_p99_ns", m->cfg.slow_p99_ns);
	js_knum(out, "fail_p", m->cfg.fail_p);
	js_obj_end(out);
	js_knum(out, "pressure", ebmem_pressure(m));
	js_knum(out, "slow_prob", ebmem_slow_prob(m));
	js_kint(out, "allocs", (int64_t)m->allocs);
	js_kint(out, "clones", (int64_t)m->clones);
	js_kint(out, "copies", (int64_t)m->copies);
	js_kint(out, "slow_pages", (int64_t)m->slow_pages);
	js_kint(out, "fails", (int64_t)m->fails);
	js_kint(out, "data_pages", (int64_t)m->data_pages);
	js_kint(out, "data_slow", (int64_t)m->data_slow);
	js_kint(out, "live", (int64_t)m->live_ebs);
	js_key(out, "latency");
	lhist_json(&m->lat, out);
	js_key(out, "reclaim");
	lhist_json(&m->slow_lat, out);
	js_obj_end(out);
}
