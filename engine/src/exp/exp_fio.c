/*
 * exp_fio.c - the `fio` experiment: drive the simulated block device alone,
 * with fio's job shape, so each device profile can be compared point by
 * point with the fio runs it was fitted to (../shared/calibration).
 *
 * numjobs jobs each keep iodepth IOs in flight (a closed loop, like fio's
 * libaio/io_uring engines). Every submission and every completion is a
 * simulator event. A job is one thread: reaping a completion and
 * submitting the next IO costs it the profile's host_ns of CPU, so a job
 * that is busy notices completions late, and fio counts that wait in clat
 * (a single job at depth 128 is CPU-bound exactly this way).
 * The first 2 x (numjobs x iodepth) completions are a warm-up (fio's
 * ramp_time), a write run starts preconditioned (write cache full), and the
 * run stops at the last measured completion with the loop still closed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "fio_points.h"
#include "bdev_profile.h"
#include "exp.h"
#include "sortutil.h"
#include "lab.h"
#include "labmem.h"

static const char *const rw_values[] = { "randread", "randwrite", "read", "write", NULL };

static const param_desc fio_params[] = {
	{ "device", PT_ENUM, 0, 0, 0, 0, bdev_profile_names, NULL,
	  "device profile (fitted to measured drives)" },
	{ "rw", PT_ENUM, 0, 0, 0, 0, rw_values, NULL,
	  "fio rw: random or sequential, read or write" },
	{ "bs", PT_INT, 4096, 512, 4194304, 0, NULL, "bytes",
	  "block size of each IO (a multiple of 512)", 512 },
	{ "iodepth", PT_INT, 1, 1, 1024, 0, NULL, "IOs", "IOs each job keeps in flight" },
	{ "numjobs", PT_INT, 1, 1, 64, 0, NULL, "jobs", "fio jobs (threads)" },
	/* 200 000: a saturated run's p99 is within a few % of its long-run
	 * value (the measured runs had 0.3-3.7 M IOs); see fit-device.mjs */
	{ "ios", PT_INT, 200000, 100, 10000000, 0, NULL, "IOs",
	  "IOs to measure after the warm-up" },
};

static const metric_desc fio_metrics[] = {
	{ "iops", "IO/s", "completed IOs per second of simulated time" },
	{ "bw_mib_s", "MiB/s", "bandwidth" },
	{ "clat_avg_us", "us", "mean completion latency (submit to reap)" },
	{ "clat_p50_us", "us", "median completion latency" },
	{ "clat_p90_us", "us", "90th percentile completion latency" },
	{ "clat_p99_us", "us", "99th percentile completion latency" },
	{ "clat_p999_us", "us", "99.9th percentile completion latency" },
};

#define FIO_CDF_POINTS 100

typedef struct fio_job {
	simtime_t cpu_free;  /* the job's thread is busy until */
	uint64_t next_off;   /* next sequential offset */
	uint64_t base, span; /* the job's region of the device */
} fio_job;

typedef struct fio_slot {
	bio b;
	int job;
	struct fio_ctx *ctx;
} fio_slot;

typedef struct fio_ctx {
	bdev *dev;
	const bdev_profile *prof;
	int rw_write, rw_seq;
	uint64_t bs;
	int njobs, depth;
	fio_job *jobs;
	fio_slot *slots;
	uint64_t done, warm, total; /* completions: so far, warm-up, all */
	simtime_t t0, tend;
	double *lat_us;      /* clat of each measured IO; freed by collect */
	uint64_t nlat;
	double cdf[FIO_CDF_POINTS + 1];
} fio_ctx;

/* The span of the device fio's offsets cover (fio's size=). */
#define FIO_DEV_BYTES (256ull << 30)

static void fio_end_io(sim *s, bio *b);

/*
 * fio_submit_event - a job submits the IO of one in-flight slot at now:
 * a random block-aligned offset in the job's region, or the next one of
 * its sequential stream. Models fio's td_io_queue().
 */
static void fio_submit_event(sim *s, void *arg)
{
	fio_slot *sl = arg;
	fio_ctx *c = sl->ctx;
	fio_job *j = &c->jobs[sl->job];
	uint64_t off;
	if (c->rw_seq) {
		if (j->next_off + c->bs > j->base + j->span)
			j->next_off = j->base;
		off = j->next_off;
		j->next_off += c->bs;
	} else {
		off = j->base + prng_below(sim_prng(s), j->span / c->bs) * c->bs;
	}
	memset(&sl->b, 0, sizeof sl->b);
	sl->b.op = c->rw_write ? BIO_WRITE : BIO_READ;
	sl->b.offset = off;
	sl->b.bytes = c->bs;
	sl->b.sequential = c->rw_seq;
	sl->b.end_io = fio_end_io;
	sl->b.priv = sl;
	sl->b.queue = sl->job; /* each job runs on its own CPU: its own queue */
	bdev_submit(c->dev, &sl->b, sim_now(s));
}

/*
 * fio_end_io - a completion: the job notices it when its thread is free
 * (that ends clat), spends host_ns reaping it and queueing the next IO,
 * which is submitted when that CPU time is over. Models fio's
 * io_u_queued_complete() loop. Completions are reaped one at a time, each
 * with its own timestamp: fio's iodepth_batch_complete_min and _max both
 * default to 1, so a burst of completions (after a write stall) is seen
 * host_ns apart, not as one batch with one clat end.
 */
static void fio_end_io(sim *s, bio *b)
{
	fio_slot *sl = b->priv;
	fio_ctx *c = sl->ctx;
	fio_job *j = &c->jobs[sl->job];
	simtime_t now = sim_now(s);
	simtime_t seen = j->cpu_free > now ? j->cpu_free : now;
	j->cpu_free = seen + (simtime_t)(c->prof->host_ns + 0.5);
	c->done++;
	if (c->done == c->warm)
		c->t0 = seen;
	if (c->done > c->warm) {
		c->lat_us[c->nlat++] = (double)(seen - b->submit) / 1000.0;
		c->tend = seen;
	}
	if (c->done == c->total) {
		/* Like a time-based fio run, stop with the loop still closed:
		 * the IOs in flight are not waited for. */
		sim_stop(s);
		return;
	}
	if (sim_at(s, j->cpu_free, fio_submit_event, sl) != 0)
		sim_stop(s); /* host OOM: end early; collect reports what ran */
}

/*
 * fio_setup - build the device and the jobs, and queue each job's first
 * iodepth submissions (one host_ns apart: a job submits serially).
 */
static int fio_setup(struct lab_run *r)
{
	fio_ctx *c = lab_calloc(1, sizeof *c);
	if (!c)
		return LAB_ENOMEM;
	r->ctx = c;
	const char *dev = exp_param_enum_name(r, "device");
	const char *rw = exp_param_enum_name(r, "rw");
	c->bs = (uint64_t)exp_param(r, "bs");
	c->depth = (int)exp_param(r, "iodepth");
	c->njobs = (int)exp_param(r, "numjobs");
	uint64_t ios = (uint64_t)exp_param(r, "ios");
	c->rw_write = strstr(rw, "write") != NULL;
	c->rw_seq = strncmp(rw, "rand", 4) != 0;
	c->prof = bdev_profile_find(dev);
	int rc = bdev_create(r->sim, dev, &c->dev);
	if (rc)
		return exp_fail(r, rc, "no device profile '%s'", dev);
	if (c->rw_write)
		bdev_precondition(c->dev, 0); /* steady state: cache full */

	uint64_t inflight = (uint64_t)c->depth * (uint64_t)c->njobs;
	c->warm = 2 * inflight; /* every slot has cycled twice */
	c->total = ios + c->warm;
	c->lat_us = lab_malloc((size_t)ios * sizeof *c->lat_us);
	c->jobs = lab_calloc((size_t)c->njobs, sizeof *c->jobs);
	c->slots = lab_calloc((size_t)inflight, sizeof *c->slots);
	if (!c->lat_us || !c->jobs || !c->slots)
		return exp_fail(r, LAB_ENOMEM, "out of memory for %llu IOs",
				(unsigned long long)ios);
	uint64_t span = FIO_DEV_BYTES / (uint64_t)c->njobs / c->bs * c->bs;
	if (span < c->bs)
		span = c->bs;
	simtime_t host = (simtime_t)(c->prof->host_ns + 0.5);
	int k = 0;
	for (int j = 0; j < c->njobs; j++) {
		c->jobs[j].base = span * (uint64_t)j;
		c->jobs[j].span = span;
		c->jobs[j].next_off = c->jobs[j].base;
		for (int q = 0; q < c->depth; q++, k++) {
			c->jobs[j].cpu_free += host;
			c->slots[k].job = j;
			c->slots[k].ctx = c;
			if (sim_at(r->sim, c->jobs[j].cpu_free, fio_submit_event, &c->slots[k]))
				return exp_fail(r, LAB_ENOMEM, "out of memory");
		}
	}
	return 0;
}

/* fio_progress - completions so far over all the run will wait for. */
static double fio_progress(struct lab_run *r)
{
	fio_ctx *c = r->ctx;
	return c->total ? (double)c->done / (double)c->total : 1.0;
}

/* The q-quantile of sorted latencies, nearest rank below (as the fit). */
static double quantile(const double *v, uint64_t n, double q)
{
	uint64_t i = (uint64_t)(q * (double)n);
	return n ? v[i < n ? i : n - 1] : 0.0;
}

/*
 * fio_collect - fio's summary over the measured IOs: IOPS and bandwidth
 * over the measured interval, clat mean and percentiles.
 */
static int fio_collect(struct lab_run *r)
{
	fio_ctx *c = r->ctx;
	if (c->nlat == 0)
		return exp_fail(r, LAB_EENGINE, "no IO completed");
	if (sort_doubles_nonneg(c->lat_us, (size_t)c->nlat))
		return exp_fail(r, LAB_ENOMEM, "out of memory sorting latencies");
	double sum = 0;
	for (uint64_t i = 0; i < c->nlat; i++)
		sum += c->lat_us[i];
	double el = (double)(c->tend - c->t0);
	double iops = el > 0 ? (double)c->nlat * 1e9 / el : 0.0;
	exp_metric(r, "iops", iops);
	exp_metric(r, "bw_mib_s", iops * (double)c->bs / 1048576.0);
	exp_metric(r, "clat_avg_us", sum / (double)c->nlat);
	exp_metric(r, "clat_p50_us", quantile(c->lat_us, c->nlat, 0.50));
	exp_metric(r, "clat_p90_us", quantile(c->lat_us, c->nlat, 0.90));
	exp_metric(r, "clat_p99_us", quantile(c->lat_us, c->nlat, 0.99));
	exp_metric(r, "clat_p999_us", quantile(c->lat_us, c->nlat, 0.999));
	for (int i = 0; i <= FIO_CDF_POINTS; i++)
		c->cdf[i] = quantile(c->lat_us, c->nlat, (double)i / FIO_CDF_POINTS);
	/* fidelity keeps hundreds of finished runs open: drop the samples. */
	free(c->lat_us);
	c->lat_us = NULL;
	return 0;
}

/* A measured fio point as the page reads it (web/model/fioDetails.ts). */
static void point_json(strbuf *out, const bdev_point *p)
{
	js_obj(out);
	js_knum(out, "iops", p->iops);
	js_knum(out, "bw_mib_s", p->bw_mib_s);
	js_key(out, "clat_us");
	js_obj(out);
	const char *names[] = { "avg", "p50", "p90", "p99", "p999" };
	double vals[] = { p->clat_avg_us, p->clat_p50_us, p->clat_p90_us, p->clat_p99_us,
			  p->clat_p999_us };
	for (int i = 0; i < 5; i++) {
		js_key(out, names[i]);
		if (vals[i] < 0)
			js_null(out);
		else
			js_num(out, vals[i]);
	}
	js_obj_end(out);
	js_kbool(out, "fitted", p->fit);
	js_kstr(out, "why", p->why ? p->why : "");
	js_kstr(out, "source", p->source);
	js_obj_end(out);
}

/*
 * fio_details - for the front end: the simulated clat CDF (101 quantiles,
 * in us), the device's counters, and the measured point of the same shape
 * with its source file, when the calibration data has one, and any other
 * runs of that shape (measured_also).
 */
static void fio_details(struct lab_run *r, strbuf *out)
{
	fio_ctx *c = r->ctx;
	const char *rw = exp_param_enum_name(r, "rw");
	js_obj(out);
	js_kstr(out, "profile", c->prof->name);
	js_kstr(out, "title", c->prof->title);
	js_kstr(out, "notes", c->prof->notes);
	js_key(out, "cdf");
	js_arr(out);
	for (int i = 0; i <= FIO_CDF_POINTS; i++) {
		js_arr(out);
		js_num(out, (double)i / FIO_CDF_POINTS);
		js_num(out, c->cdf[i]);
		js_arr_end(out);
	}
	js_arr_end(out);
	const bdev_stats *st = bdev_get_stats(c->dev);
	js_key(out, "device");
	js_obj(out);
	js_kint(out, "reads", (int64_t)st->reads);
	js_kint(out, "writes", (int64_t)st->writes);
	js_kint(out, "busy_ns", (int64_t)st->busy_ns);
	js_kint(out, "max_inflight", (int64_t)st->max_inflight);
	js_obj_end(out);
	const bdev_point *p = bdev_point_find(c->prof->name, rw, (uint32_t)c->bs,
					      c->depth, c->njobs);
	js_key(out, "measured");
	if (!p)
		js_null(out);
	else
		point_json(out, p);
	/* The same job measured in other runs (a replicate, another drive
	 * state): the page draws them beside the first, so the drive's own
	 * scatter is in view. */
	js_key(out, "measured_also");
	js_arr(out);
	for (int i = 0; p && i < bdev_npoints; i++) {
		const bdev_point *q = &bdev_points[i];
		if (q != p && bdev_point_same_job(q, p))
			point_json(out, q);
	}
	js_arr_end(out);
	js_obj_end(out);
}

/* fio_teardown - free the device, the jobs and whatever collect left. */
static void fio_teardown(struct lab_run *r)
{
	fio_ctx *c = r->ctx;
	if (!c)
		return;
	bdev_destroy(c->dev);
	free(c->lat_us);
	free(c->jobs);
	free(c->slots);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events: a submission and a completion per IO, the
 * measured ones and the warm-up's (every slot cycled twice: 2 x numjobs x
 * iodepth, as fio_setup counts them). */
static double fio_estimate(const struct lab_run *r)
{
	double inflight = exp_param(r, "iodepth") * exp_param(r, "numjobs");
	return 2 * (exp_param(r, "ios") + 2 * inflight) + 4;
}

static const small_run fio_small[] = {
	{ "base", "ios=200" },
	{ "base", "ios=200\nrw=randwrite\niodepth=8\nnumjobs=2" },
};

const lab_exp exp_fio = {
	.name = "fio",
	.seed = "-",
	.title = "fio on the simulated device, beside the measured drives",
	.has_variants = 0,
	.params = fio_params,
	.nparams = (int)(sizeof fio_params / sizeof fio_params[0]),
	.metrics = fio_metrics,
	.nmetrics = (int)(sizeof fio_metrics / sizeof fio_metrics[0]),
#ifdef LAB_WEB_BUILD
	.npublished_separate = EXP_FIO_NPUBLISHED, /* exp.h: the page loads them */
#else
	.published = exp_fio_published,
	.npublished = EXP_FIO_NPUBLISHED,
#endif
	.small = fio_small,
	.nsmall = (int)(sizeof fio_small / sizeof fio_small[0]),
	.setup = fio_setup,
	.progress = fio_progress,
	.collect = fio_collect,
	.details = fio_details,
	.teardown = fio_teardown,
	.estimate = fio_estimate,
	.work_unit = "simulated events",
};
