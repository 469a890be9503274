/*
 * bdev.c - the simulated block device: a queueing model of an SSD (or a
 * disk) whose parameters were fitted to fio measurements of real drives.
 *
 * The device is a small pipeline of timeline reservations (see
 * bdev_profile.h for the parameters): a bounded command queue, a serial
 * link/controller stage, parallel flash units with a fitted service-time
 * distribution (multi-plane reads, a die held only for its sense), and for
 * drives with a DRAM write cache a per-unit share of that cache which the
 * unit drains by programming flash at a rate garbage collection varies
 * from band to band, fed in order per submission queue; and, for a drive
 * that stalls, background work the controller owes per batch of commands,
 * done while it is idle or else all at once (a stall). A bio's
 * completion time is computed when it is submitted; queueing delay appears
 * when a stage is still reserved by earlier bios, so IOPS saturate at the
 * slowest stage and latency then grows as Little's law says.
 *
 * Backends sit behind bdev_ops: the fitted model and the ideal device here;
 * a fault-injecting device can be added with its own table.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "bdev_profile.h"
#include "lab.h"
#include "labmem.h"
#include "variation.h"

/* Bands per garbage-collection cycle (see fitted_band_factor). */
#define BDEV_BANDS 16

/* Stalls per cycle of stall lengths (see fitted_defer). */
#define BDEV_DECK 16

/* Submission queues told apart (bio.queue modulo this). */
#define BDEV_NQUEUES 64

/* A binary min-heap of times (completion times of bios in flight). */
typedef struct theap {
	simtime_t *v;
	int n, cap;
} theap;

struct bdev {
	const bdev_ops *ops;
	const bdev_profile *prof;
	sim *s;
	prng rng;              /* the device's own stream: its draws do not
	                        * shift other subsystems' random numbers */
	simtime_t link_free;   /* link stage reserved until */
	simtime_t *unit_free;  /* each flash unit reserved until */
	simtime_t unit_max;    /* at least every unit_free (the latest
	                        * ever set): bounds a write's wait for room */
	struct bdev_batch {    /* each unit's last reserved op, for joining */
		simtime_t start;   /* when its sense begins */
		uint32_t planes;   /* planes it reads (bit mask); 0: not a read */
	} *batch;
	theap slots;           /* device command slots in use (max_queue) */
	double seg_left;       /* host bytes left in the band being written */
	double drain_mult;     /* its drain time factor (garbage collection) */
	double band[BDEV_BANDS]; /* the factors of the current cycle of bands */
	int band_i;            /* next one to use; BDEV_BANDS: draw a cycle */
	uint64_t last_end;     /* end offset of the last bio: sequentiality */
	theap inflight;        /* completion times, for max_inflight */
	simtime_t busy_end;    /* end of the current busy period */
	simtime_t q_free[BDEV_NQUEUES]; /* each submission queue's write
	                                  * intake busy until (wr_serial) */
	double defer;          /* background work owed (defer_ns), ns */
	double deck[BDEV_DECK]; /* stall length strata of the current cycle */
	double rd_level, wr_level; /* this run's drive state: a multiplier of
	                            * read and of write/drain/flush service
	                            * times (variation.def device_state) */
	int deck_i;            /* next one to use; BDEV_DECK: deal a cycle */
	bdev_observer obs;     /* bdev_set_observer */
	void *obs_ctx;
	bdev *host;            /* a virtual disk: the host's device */
	simtime_t io_free;     /* a virtual disk: the host I/O thread busy until */
	bdev_stats st;
	simtime_t *tag_tmp;    /* scratch for bdev_tag_free_at */
	int tag_cap;
};

/* ---- hand-written profiles ------------------------------------------ */

static const double hdd_q[] = { 0.0, 0.10, 0.50, 0.90, 0.99, 1.0 };
static const double hdd_m[] = { 0.30, 0.55, 1.00, 1.45, 1.70, 1.80 };

/*
 * "hdd": a textbook 7200 rpm disk. [estimate: 8.33 ms per revolution, so
 * 4.2 ms mean rotational delay, plus ~4 ms average seek = ~8 ms random
 * access, spread from a track-to-track seek to a full stroke; 150 MB/s
 * media rate; SATA link 600 MB/s; NCQ 32; writes go through (no volatile
 * cache modelled), so a flush is a command round trip.]
 */
static const bdev_profile hdd_profile = {
	.name = "hdd",
	.title = "textbook 7200 rpm SATA disk [estimate]",
	.max_queue = 32,
	.link_ns = 2000.0,
	.link_byte_ns = 1.0 / 0.6,
	.nunits = 1,
	.chunk_bytes = 1u << 30,
	.rd_op_ns = 8.0e6,
	.rd_byte_ns = 1.0 / 0.15,
	.wr_op_ns = 8.0e6,
	.wr_byte_ns = 1.0 / 0.15,
	.seq_op_ns = 0.0,
	.wcache = 0,
	.plp = 1,
	.host_ns = 2700.0,
	.rd_tail = { 6, hdd_q, hdd_m },
	.wr_tail = { 6, hdd_q, hdd_m },
	.notes = "[estimate] 7200 rpm: ~8 ms random access, 150 MB/s sequential, "
		 "write-through (no volatile cache), flush = one command",
	.rotational = 1,
};

/*
 * "vm-ssd": the disk of a KVM/QEMU guest (virtio; the guest calls it
 * /dev/vdX with virtio-blk, /dev/sdX with virtio-scsi), a raw partition of
 * a consumer SATA SSD on the host (the consumer-ssd profile: the fitted
 * Samsung 860 PRO, with the measured SATA write+fdatasync flush), with
 * QEMU's cache=writethrough: the host makes every guest write durable
 * (a flush of its drive, as a second request) before completing it, and
 * the guest sees a disk without a volatile cache. That is what makes a
 * synchronous 4 KiB write cost hundreds of microseconds, as seed 003's
 * published times need (../shared/design/mechanisms.md section 4): the
 * host drive's measured flush alone is 334 us. The virtualisation path,
 * for a 2018 x86 host (KVM with ioeventfd/irqfd, QEMU's default
 * aio=threads):
 *   virt_exit_ns  2 us: the virtqueue kick, a lightweight VM exit that
 *                 KVM turns into an eventfd signal, and the VM entry
 *                 back [estimate: exits cost ~1-2 us on Skylake-era
 *                 cores];
 *   virt_wake_ns  one wakeup of a sleeping host thread; a write takes
 *                 six: the I/O thread on the kick, a pool worker for the
 *                 pwritev, the I/O thread on its completion, a worker for
 *                 the flush, the I/O thread again, the halted vCPU on the
 *                 injected interrupt (a read: four). [estimate: 10 us,
 *                 the lab's one cross-CPU wakeup of an idle thread
 *                 (costs.h RECLAIM_NS_WAKEUP): the IPI, the idle core's
 *                 exit from C1E (10 us in intel_idle's tables of every
 *                 Intel core since Sandy Bridge) and the switch in. A host
 *                 whose idle cores reach C6 (85 us on Skylake, 133 us on
 *                 Haswell/Broadwell servers, intel_idle) would take longer:
 *                 nothing measured pins the seed's host. Not fitted: with
 *                 it seed 003's before row is a prediction (21.8 s against
 *                 26.49, -18%; 50.2 us would land it, the value fitted on
 *                 that row before).]
 *   virt_req_ns   4 us of the I/O thread's CPU per request (virtqueue
 *                 pop, request setup, completion, used ring, irqfd):
 *                 one thread, so a serial stage [estimate];
 *   virt_sys_ns   4 us: the host's pwritev/preadv/fdatasync on the raw
 *                 device and its block layer [estimate: a syscall and a
 *                 bio, ~1.5 us each as VFS_NS_SYSCALL, plus the copy].
 * A QD1 4 KiB write: ~37 us on the host drive + 334 us flush + 6 wakeups
 * + 2 I/O thread passes + 2 syscalls + the exit = ~450 us (fio on it:
 * `lab run fio --set device=vm-ssd --set rw=randwrite`).
 */
static const bdev_profile vm_ssd_profile = {
	.name = "vm-ssd",
	.title = "VM disk: KVM/QEMU virtio, cache=writethrough, on a SATA SSD host (consumer-ssd)",
	.host = "consumer-ssd",
	.virt_exit_ns = 2000.0,
	.virt_wake_ns = 10000.0, /* estimate: RECLAIM_NS_WAKEUP's 10 us */
	.virt_req_ns = 4000.0,
	.virt_sys_ns = 4000.0,
	.virt_writethrough = 1,
	.plp = 1, /* the guest sees no volatile cache: its flushes are no-ops */
	/* virtio_blk does not mark its queue non-rotational: the guest's
	 * /sys/block/vdX/queue/rotational reads 1 */
	.rotational = 1,
	/* fio's own CPU per IO in the guest [estimate: as on the rig that
	 * measured the host drive, consumer-ssd's fitted ~11 us] */
	.host_ns = 11000.0,
	.notes = "virtual disk: the host device is consumer-ssd (its fitted service times and "
		 "its measured write+fdatasync flush, 334 us median); QEMU cache=writethrough, so "
		 "every write completes only after a host flush, its own request; virtualisation "
		 "path: VM exit 2 us, I/O thread CPU 4 us per request (serial), host syscall and "
		 "block layer 4 us, a host thread wakeup 10 us, six per write, four per read "
		 "[estimates; the wakeup is a C1E exit: an idle host in C6 would take 85-133 us]; "
		 "the host drive's state is its own (variation.def device_state)",
};

/* "ideal": zero latency, infinite bandwidth (unit tests). host_ns is only
 * the fio job's own CPU time, so a fio run on it still has a finite rate
 * [estimate: ~1 us per IO for fio's submit and reap]. */
static const bdev_profile ideal_profile = {
	.name = "ideal",
	.title = "zero latency, infinite bandwidth (for tests)",
	.plp = 1,
	.host_ns = 1000.0,
	.notes = "no cost at all",
};

/* Every profile by name, the default (nvme-dc) first: experiments offer
 * these as their `device` parameter. */
const char *const bdev_profile_names[] = {
	"nvme-dc", "consumer-ssd", "consumer-nvme", "hdd", "vm-ssd", "ideal", NULL,
};

/*
 * bdev_profile_find - the profile called `name`, fitted or hand-written.
 * Returns NULL when there is none.
 */
/* A candidate profile under evaluation (engine/tools/fitdrv.c): it
 * stands in for the profile of its name until cleared. */
static const bdev_profile *override_p;

void bdev_profile_override(const bdev_profile *p)
{
	override_p = p;
}

const bdev_profile *bdev_profile_find(const char *name)
{
	if (!name)
		return NULL;
	if (override_p && strcmp(name, override_p->name) == 0)
		return override_p;
	if (strcmp(name, hdd_profile.name) == 0)
		return &hdd_profile;
	if (strcmp(name, ideal_profile.name) == 0)
		return &ideal_profile;
	if (strcmp(name, vm_ssd_profile.name) == 0)
		return &vm_ssd_profile;
	for (const bdev_profile *p = bdev_fitted_profiles; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

/* ---- helpers ---------------------------------------------------------- */

/* Push a time on a min-heap; returns 0 or LAB_ENOMEM. */
static inline int theap_push(theap *h, simtime_t t)
{
	if (h->n == h->cap) {
		int cap = h->cap ? 2 * h->cap : 64;
		simtime_t *v = lab_realloc(h->v, (size_t)cap * sizeof(*v));
		if (!v)
			return LAB_ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	int i = h->n++;
	while (i > 0 && h->v[(i - 1) / 2] > t) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = t;
	return 0;
}

/* Remove and return the smallest time; the heap must not be empty. */
static inline simtime_t theap_pop(theap *h)
{
	assert(h->n > 0);
	simtime_t top = h->v[0], last = h->v[--h->n];
	int i = 0;
	for (;;) {
		int c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

/* Drop every entry that has ended by `t`. */
static void theap_expire(theap *h, simtime_t t)
{
	while (h->n && h->v[0] <= t)
		theap_pop(h);
}

/*
 * qtable_sample - draw a service multiplier from a quantile table by
 * inverse transform sampling, interpolating linearly between the fitted
 * quantiles. An empty table means a deterministic service time (1).
 */
static double qtable_sample(const bdev_qtable *t, prng *r)
{
	if (t->n < 2)
		return 1.0;
	double u = prng_unit(r);
	int i = 1;
	while (i < t->n - 1 && t->q[i] <= u)
		i++;
	double q0 = t->q[i - 1], q1 = t->q[i];
	double f = q1 > q0 ? (u - q0) / (q1 - q0) : 0.0;
	return t->mult[i - 1] + f * (t->mult[i] - t->mult[i - 1]);
}

/* Nanoseconds as simulated time, rounded to the nearest ns (>= 0). */
static simtime_t ns_round(double ns)
{
	return ns <= 0.0 ? 0 : (simtime_t)(ns + 0.5);
}

/* ---- the fitted model ------------------------------------------------- */

/* What one op of a given size costs on its unit, at one IO's service
 * multiplier: its time from start to end, how long it holds the unit,
 * and (multi-plane) the transfer it adds when it joins a pending read. */
typedef struct op_cost {
	simtime_t dur, busy, xfer;
} op_cost;

static op_cost fitted_op_cost(const bdev_profile *p, int write, int seq, double op_ns,
			      double byte_ns, double x, uint64_t n)
{
	double fixed = op_ns;
	/* NAND that can sense a fraction of a page (a 4 KiB "small
	 * read") does so faster than the whole page; an op that needs
	 * more of the page pays the full sense time tR. This is why the
	 * 980 PRO reads 8 KiB at twice the latency of 4 KiB while 64 KiB
	 * costs little more than 8 KiB. */
	if (!write && !seq && p->rd_part_bytes && n > p->rd_part_bytes)
		fixed = p->rd_page_op_ns;
	double dur = (fixed + (double)n * byte_ns) * x;
	op_cost c;
	c.dur = ns_round(dur);
	/* The die is held only while it senses; moving the data out
	 * and the controller's ECC decode overlap the die's next
	 * op (rd_busy_frac of the op holds the unit). */
	c.busy = !write && p->rd_busy_frac > 0.0 && p->rd_busy_frac < 1.0
			 ? ns_round(dur * p->rd_busy_frac)
			 : c.dur;
	c.xfer = ns_round((double)n * byte_ns * x);
	return c;
}

/*
 * fitted_units - reserve the flash units for the ops of one IO starting no
 * earlier than `t`; returns when the last op ends. Models the FTL striping
 * an IO over dies: a random IO lands on a random unit, a sequential stream
 * walks the stripe, and ops on the same unit queue behind each other.
 *
 * Multi-plane read (profile planes > 1): a die has several planes that
 * can sense at the same time when one command names them all. A random
 * read op lands on a random plane of its unit; if the unit's last reserved
 * op is a read that has not started yet (it waits behind the op in
 * progress) and does not use that plane, the die's controller issues both
 * as one multi-plane read: the new op shares that sense and adds only its
 * own transfer (bytes x byte_ns). At low depth a unit rarely has a read
 * waiting, so latency is the single-plane one; at high depth the queued
 * reads are served several per sense, so throughput keeps growing after
 * the units are all busy (what the 980 PRO does between depth 16 and 64).
 *
 * A read holds its die only for rd_busy_frac of its op (the array sense):
 * moving the data out and the controller's ECC decode overlap the die's
 * next op, so two reads that land on one die at low depth wait only for
 * each other's sense (the 860 PRO's p99 at 2-4 reads in flight is 1.2x
 * its depth-1 p99, not 2x).
 */
static simtime_t fitted_units(bdev *d, const bio *b, int seq, simtime_t t)
{
	const bdev_profile *p = d->prof;
	int write = b->op == BIO_WRITE;
	const bdev_qtable *tail = write && p->wr_tail.n ? &p->wr_tail : &p->rd_tail;
	double op_ns = write ? p->wr_op_ns : p->rd_op_ns;
	double byte_ns = write ? p->wr_byte_ns : p->rd_byte_ns;
	if (seq && p->seq_op_ns >= 0.0)
		op_ns = p->seq_op_ns;
	/* One draw per IO: its ops share the luck of the pages they hit. */
	double x = qtable_sample(tail, &d->rng) * (write ? d->wr_level : d->rd_level);
	uint64_t chunk = p->chunk_bytes ? p->chunk_bytes : 4096;
	uint64_t left = b->bytes ? b->bytes : 1;
	/* The loop below runs once per op (32 for a 128 KiB read): it draws
	 * from a copy of the device's stream, which the compiler can keep in
	 * registers (the units' times in memory could alias d->rng), and
	 * stores it back after. The same draws in the same order. */
	prng rng = d->rng;
	/* A sequential IO follows the stripe, unless the drive's data was
	 * written at random (seq_scatter): then logically consecutive pieces
	 * sit on dies in no order, and each op goes to a random unit. */
	int scatter = seq && p->seq_scatter;
	prng_div units = prng_div_make((uint64_t)p->nunits);
	int u = seq && !scatter ? (int)((b->offset / chunk) % (uint64_t)p->nunits)
				: (int)prng_below_by(&rng, &units);
	int multi = !write && !seq && p->planes > 1;
	/* every op but the last is a whole chunk: its cost is computed once
	 * (the same roundings of the same values, so the same times) */
	uint64_t cost_n = 0;
	op_cost c = { 0, 0, 0 };
	simtime_t done = t;
	while (left) {
		uint64_t n = left < chunk ? left : chunk;
		if (n != cost_n) {
			c = fitted_op_cost(p, write, seq, op_ns, byte_ns, x, n);
			cost_n = n;
		}
		struct bdev_batch *bt = &d->batch[u];
		uint32_t plane = multi ? 1u << prng_below(&rng, (uint64_t)p->planes) : 0;
		simtime_t end, busy;
		if (multi && bt->planes && bt->start > t && !(bt->planes & plane)) {
			/* join the pending read: one sense, one more transfer */
			simtime_t own = bt->start + c.dur;
			end = d->unit_free[u] + c.xfer;
			if (own > end)
				end = own;
			busy = end;
			bt->planes |= plane;
		} else {
			simtime_t start = d->unit_free[u] > t ? d->unit_free[u] : t;
			end = start + c.dur;
			busy = start + c.busy;
			bt->start = start;
			bt->planes = plane; /* 0 unless a random multi-plane read */
		}
		d->unit_free[u] = busy;
		if (end > done)
			done = end;
		left -= n;
		if (scatter)
			u = (int)prng_below_by(&rng, &units);
		else if (++u == p->nunits)
			u = 0;
	}
	d->rng = rng;
	/* every op holds its unit until its end at the latest */
	if (done > d->unit_max)
		d->unit_max = done;
	return done;
}

/*
 * fitted_band_factor - the drain time factor for `bytes` more host data.
 * Models garbage collection in a log-structured FTL: host data is written
 * in bands striped over all dies, and while a band fills, the FTL also
 * relocates the still-valid pages of a victim band, so the share of
 * program bandwidth left for host data (1 - valid fraction of the victim)
 * changes from band to band. The factors come in cycles of BDEV_BANDS
 * bands, scaled so that each cycle's mean is exactly 1: 1 / (1 - v), v
 * the victim's valid fraction, uniform in gc_valid +- drain_sigma (a
 * bounded spread: the write amplification of the emptiest and fullest
 * victims; a lognormal factor, tried, put the P4510's saturated write
 * p99 15-25% high).
 * GC in steady state relocates, over a cycle of victims, what the
 * over-provisioning dictates, so the drain
 * rate averaged over a cycle is the fitted 1 / drain_byte_ns however the
 * victims vary (independent draws would let a short run's mean rate
 * wander by several percent). A saturated stream runs slower in some
 * bands than in others, and its latency (depth / current rate) spreads:
 * the measured p99 of saturated writes is 1.3-3x their median where a
 * steady drain gives p99 = median. Draws nothing when drain_sigma is 0.
 */
static double fitted_band_factor(bdev *d, uint64_t bytes)
{
	const bdev_profile *p = d->prof;
	if (p->drain_sigma <= 0.0 || p->seg_bytes <= 0.0)
		return 1.0;
	if (d->seg_left <= 0.0) {
		if (d->band_i >= BDEV_BANDS) {
			double sum = 0.0;
			for (int k = 0; k < BDEV_BANDS; k++) {
				/* the victim's valid fraction v, uniform in
				 * gc_valid +- drain_sigma: each host byte
				 * costs 1 / (1 - v) bytes programmed */
				double v = p->gc_valid + p->drain_sigma *
					(2.0 * prng_unit(&d->rng) - 1.0);
				/* a block that full is never a victim (GC
				 * would gain nothing): keep the factor finite */
				if (v > 0.98)
					v = 0.98;
				d->band[k] = 1.0 / (1.0 - (v > 0.0 ? v : 0.0));
				sum += d->band[k];
			}
			for (int k = 0; k < BDEV_BANDS; k++)
				d->band[k] *= BDEV_BANDS / sum;
			d->band_i = 0;
		}
		d->drain_mult = d->band[d->band_i++];
		d->seg_left = p->seg_bytes;
	}
	d->seg_left -= (double)bytes;
	return d->drain_mult;
}

/*
 * fitted_cache_write - a write into a DRAM write cache at `t`; returns its
 * completion. Each flash unit owns an equal share of the cache and drains
 * it by programming pages (at 1 / (drain_byte_ns x nunits) bytes per ns,
 * so all units together drain 1 / drain_byte_ns). A random write's pieces
 * go to the least busy units (the FTL writes new data wherever a die is
 * free), a sequential stream's to its stripe; it completes wr_ns x X after
 * it is admitted, and it is admitted once every unit it lands on has room,
 * i.e. has less than cache_bytes x drain_byte_ns of programming queued.
 * Sustained writes above the drain rate therefore wait for room in arrival
 * order, and the backlog stays even over the units however long the run
 * (with a random unit per write it spread apart without bound: the median
 * fell and p99 grew with the run's length). Programs also delay reads on
 * the same unit. The drain rate of the band being written comes from
 * fitted_band_factor; with wr_serial the writes of one submission queue
 * enter the cache one after another (b->queue).
 */
static simtime_t fitted_cache_write(bdev *d, const bio *b, int seq, simtime_t t)
{
	const bdev_profile *p = d->prof;
	double prog_byte_ns = p->drain_byte_ns * p->nunits * fitted_band_factor(d, b->bytes) *
			      d->wr_level;
	simtime_t room = ns_round(p->cache_bytes * p->drain_byte_ns);
	uint64_t chunk = p->chunk_bytes ? p->chunk_bytes : 4096;
	uint64_t nops = (b->bytes + chunk - 1) / chunk;
	if (nops == 0)
		nops = 1;
	if (nops > (uint64_t)p->nunits)
		nops = (uint64_t)p->nunits; /* a big write spreads over all units */
	uint64_t per = (b->bytes + nops - 1) / nops;
	/* The FTL is log-structured: new data goes to whichever die can take
	 * it first, not to a place fixed by its address, so a random write's
	 * pieces start at the least busy unit (lowest index on ties). A
	 * sequential stream stripes over the units in order either way. */
	int u0 = 0;
	if (seq) {
		u0 = (int)((b->offset / chunk) % (uint64_t)p->nunits);
	} else {
		simtime_t least = d->unit_free[0];
		for (int k = 1; k < p->nunits; k++)
			if (d->unit_free[k] < least) {
				least = d->unit_free[k];
				u0 = k;
			}
	}
	/* the units u0, u0 + 1... (wrapping) take one piece each; none has
	 * to drain first when even the latest unit has room at t (the
	 * usual case below saturation: no need to look at each) */
	simtime_t admit = t;
	if (d->unit_max > room && d->unit_max - room > t) {
		for (uint64_t k = 0, u = (uint64_t)u0; k < nops; k++) {
			simtime_t f = d->unit_free[u];
			if (f > room && f - room > admit)
				admit = f - room;
			if (++u == (uint64_t)p->nunits)
				u = 0;
		}
	}
	uint64_t left = b->bytes;
	/* every piece but the last is `per` bytes: its program time is
	 * computed once (the same rounding of the same value) */
	simtime_t prog_per = ns_round((double)per * prog_byte_ns);
	for (uint64_t k = 0, u = (uint64_t)u0; k < nops; k++) {
		uint64_t n = left < per ? left : per;
		simtime_t start = d->unit_free[u] > admit ? d->unit_free[u] : admit;
		d->unit_free[u] = start + (n == per ? prog_per : ns_round((double)n * prog_byte_ns));
		if (d->unit_free[u] > d->unit_max)
			d->unit_max = d->unit_free[u];
		d->batch[u].planes = 0; /* a program: no read can join it */
		left -= n;
		if (++u == (uint64_t)p->nunits)
			u = 0;
	}
	double x = qtable_sample(&p->wr_tail, &d->rng) * d->wr_level;
	simtime_t in = ns_round(p->wr_ns * x);
	if (!p->wr_serial)
		return admit + in;
	/* The controller moves one queue's write data into the cache in
	 * command order (one firmware path per submission queue): a write
	 * waiting for room holds up the queue behind it, and one queue takes
	 * at most one write per wr_ns. Only the typical intake time is
	 * serial: what a slow write takes beyond the median (the QD1 tail,
	 * p99 5x the median on the P4510) is spent after the queue has
	 * moved on to the next command. */
	simtime_t *qf = &d->q_free[(unsigned)b->queue % BDEV_NQUEUES];
	simtime_t start = *qf > admit ? *qf : admit;
	*qf = start + ns_round(p->wr_ns * (x < 1.0 ? x : 1.0));
	return start + in;
}

/*
 * fitted_defer - account a write's share of the controller's background
 * work, and stall the controller when too much is owed. Models a firmware
 * that commits the mapping-table updates of the commands it takes
 * together as one journal record (or runs one garbage-collection step per
 * batch): defer_ns of work per batch, so a write that arrives with n
 * commands in the device (itself included) owes defer_ns / n. The work is
 * done in the controller's idle time (fitted_submit); once defer_max_ns
 * has piled up (a queue that never leaves it idle) the controller does it
 * all before its next command, for that long times a factor spread evenly
 * over 1 +- defer_spread (how much the step has to move varies), and
 * every command behind it waits. The factors come in cycles of BDEV_DECK
 * stalls, one from each of BDEV_DECK equal strata of the spread in random
 * order, so that a short run which sees only a dozen stalls (depth 32,
 * 20 000 IOs) still sees their spread rather than a few draws' luck (as
 * the drain bands' cycles in fitted_band_factor). That is the 860 PRO's
 * write stall: ~1.6 ms, hit by ~2.5% of writes at depth 4-32 (rarer per
 * write the deeper the queue, as the batches grow), rarer at depth 2,
 * and none at depth 1, where fio's time between writes leaves the
 * controller idle enough.
 * Counts the commands with the device slots, so needs max_queue > 0
 * (else n = 1). Runs only on the write path of such a profile.
 */
static void fitted_defer(bdev *d)
{
	const bdev_profile *p = d->prof;
	int n = (p->max_queue > 0 ? d->slots.n : 0) + 1;
	d->defer += p->defer_ns / n;
	if (d->defer < p->defer_max_ns)
		return;
	double f = 1.0;
	if (p->defer_spread > 0.0) {
		if (d->deck_i >= BDEV_DECK) {
			for (int k = 0; k < BDEV_DECK; k++)
				d->deck[k] = (k + prng_unit(&d->rng)) / BDEV_DECK;
			for (int k = BDEV_DECK - 1; k > 0; k--) { /* Fisher-Yates */
				int j = (int)prng_below(&d->rng, (uint64_t)k + 1);
				double x = d->deck[k];
				d->deck[k] = d->deck[j];
				d->deck[j] = x;
			}
			d->deck_i = 0;
		}
		f = 1.0 + p->defer_spread * (2.0 * d->deck[d->deck_i++] - 1.0);
	}
	d->link_free += ns_round(d->defer * f);
	d->defer = 0.0;
}

/*
 * fitted_submit - completion time of a bio on the fitted model (the
 * bdev_ops submit hook). Models the path of an NVMe/SATA command: it waits
 * for a device slot, crosses the link, then either lands in the write
 * cache (waiting for space if the cache has not drained) or is served by
 * the flash units.
 */
static simtime_t fitted_submit(bdev *d, bio *b, simtime_t at)
{
	const bdev_profile *p = d->prof;
	int seq = b->sequential || b->offset == d->last_end;
	d->last_end = b->offset + b->bytes;

	simtime_t t = at;
	if (p->max_queue > 0) {
		theap_expire(&d->slots, t);
		if (d->slots.n >= p->max_queue) {
			simtime_t free_at = theap_pop(&d->slots);
			if (free_at > t)
				t = free_at;
		}
	}
	int write = b->op == BIO_WRITE;
	/* Owed background work is done while the controller is idle. */
	if (p->defer_ns > 0.0 && t > d->link_free) {
		d->defer -= (double)(t - d->link_free);
		if (d->defer < 0.0)
			d->defer = 0.0;
	}
	simtime_t ls = d->link_free > t ? d->link_free : t;
	d->link_free = ls + ns_round(p->link_ns + (double)b->bytes * p->link_byte_ns +
				     (write ? p->wr_link_ns : 0.0));
	t = d->link_free;
	if (write && p->defer_ns > 0.0 && p->defer_max_ns > 0.0)
		fitted_defer(d);

	simtime_t done;
	if (b->op == BIO_WRITE && p->wcache) {
		done = fitted_cache_write(d, b, seq, t);
	} else {
		done = fitted_units(d, b, seq, t);
	}
	if (p->max_queue > 0 && theap_push(&d->slots, done) != 0)
		d->slots.n = 0; /* host OOM: forget slots rather than fail IO */
	return done;
}

/*
 * fitted_flush - completion of a cache flush issued at `at`. Models what
 * REQ_PREFLUSH costs: nothing to wait for with power-loss protection (the
 * command's round trip); otherwise the cache must reach flash: the flush
 * completes once the cache has drained, and no earlier than the drive's
 * measured flush time after the command. That time was measured as the
 * fdatasync after a single 4 KiB write (calibration/README.md), so it
 * already covers programming what one small write leaves in the cache;
 * adding the drain of that write to it would count the program twice.
 */
static simtime_t fitted_flush(bdev *d, simtime_t at)
{
	const bdev_profile *p = d->prof;
	if (p->plp || !p->wcache)
		return at + ns_round(p->link_ns);
	simtime_t t = at;
	for (int u = 0; u < p->nunits; u++) /* the whole cache must drain */
		if (d->unit_free[u] > t)
			t = d->unit_free[u];
	double sigma = dm_log(p->flush_p99_ns / p->flush_p50_ns) / 2.3263478740;
	/* a flush programs what the cache holds: the drive's state paces it
	 * as it paces a write's drain */
	double ns = prng_lognormal(&d->rng, dm_log(p->flush_p50_ns), sigma) * d->wr_level;
	simtime_t f = at + ns_round(ns);
	return f > t ? f : t;
}

/* Both backends keep their state in struct bdev: nothing extra to free. */
static void fitted_destroy(bdev *d)
{
	(void)d;
}

static const bdev_ops fitted_ops = {
	.name = "fitted",
	.submit = fitted_submit,
	.flush = fitted_flush,
	.destroy = fitted_destroy,
};

/* ---- a virtual disk --------------------------------------------------- */

/*
 * virt_hop - QEMU's I/O thread takes a request at `t`: it is woken, does
 * its own work for the request (one thread: a serial stage) and hands the
 * blocking syscall to a thread-pool worker, which is woken too. Returns
 * when the syscall reaches the host's block layer. Models
 * virtio_blk_handle_vq -> blk_aio_pwritev -> thread_pool_submit_aio
 * (QEMU's default aio=threads).
 */
static simtime_t virt_hop(bdev *d, simtime_t t)
{
	const bdev_profile *p = d->prof;
	t += ns_round(p->virt_wake_ns);
	simtime_t start = d->io_free > t ? d->io_free : t;
	d->io_free = start + ns_round(p->virt_req_ns);
	return d->io_free + ns_round(p->virt_wake_ns + p->virt_sys_ns);
}

/* The way back: the I/O thread woken by the worker's completion, the
 * interrupt injected through irqfd waking the halted vCPU. */
static simtime_t virt_back(const bdev *d, simtime_t done)
{
	return done + ns_round(2.0 * d->prof->virt_wake_ns);
}

/*
 * virt_submit - a guest bio on a virtual disk: the kick (a VM exit), the
 * I/O thread's hop to a worker, the host device's own service of the
 * same IO (its fitted model) and, with writethrough, a flush: QEMU
 * emulates the FUA of a write-through disk with a flush request of its
 * own once the write is back in the I/O thread (bdrv_co_flush ->
 * fdatasync on another worker), and only then completes the guest's
 * request.
 */
static simtime_t virt_submit(bdev *d, bio *b, simtime_t at)
{
	/* the host device's own model, called directly: its IOs are the
	 * guest's, counted and traced once (by bdev_submit of the guest's) */
	bdev *h = d->host;
	bio hb = { .op = b->op, .offset = b->offset, .bytes = b->bytes,
		   .sequential = b->sequential, .queue = b->queue };
	simtime_t done = h->ops->submit(h, &hb, virt_hop(d, at + ns_round(d->prof->virt_exit_ns)));
	if (b->op == BIO_WRITE && d->prof->virt_writethrough)
		done = h->ops->flush(h, virt_hop(d, done));
	return virt_back(d, done);
}

/* A guest flush: with writethrough the guest sees no volatile cache and
 * the block layer completes it at once; otherwise the host runs
 * fdatasync, a flush of its device. */
static simtime_t virt_flush(bdev *d, simtime_t at)
{
	if (d->prof->virt_writethrough)
		return at;
	return virt_back(d, d->host->ops->flush(d->host,
						 virt_hop(d, at + ns_round(d->prof->virt_exit_ns))));
}

static void virt_destroy(bdev *d)
{
	bdev_destroy(d->host);
	d->host = NULL;
}

static const bdev_ops virt_ops = {
	.name = "virtual",
	.submit = virt_submit,
	.flush = virt_flush,
	.destroy = virt_destroy,
};

/* ---- the ideal device ------------------------------------------------- */

/* Zero-cost backend: every bio and flush completes when it is issued. */
static simtime_t ideal_submit(bdev *d, bio *b, simtime_t at)
{
	(void)d;
	(void)b;
	return at;
}

static simtime_t ideal_flush(bdev *d, simtime_t at)
{
	(void)d;
	return at;
}

static const bdev_ops ideal_ops = {
	.name = "ideal",
	.submit = ideal_submit,
	.flush = ideal_flush,
	.destroy = fitted_destroy,
};

/* ---- the public API --------------------------------------------------- */

/*
 * bdev_create - a device of the named profile on simulator `s`. Its random
 * stream is forked from the simulator's, so the same seed gives the same
 * device. Returns 0, LAB_EINVAL (NULL arguments), LAB_ENOENT (no such
 * profile) or LAB_ENOMEM.
 */
int bdev_create(sim *s, const char *profile, bdev **out)
{
	if (!s || !profile || !out)
		return LAB_EINVAL;
	*out = NULL;
	const bdev_profile *p = bdev_profile_find(profile);
	if (!p)
		return LAB_ENOENT;
	bdev *d = lab_calloc(1, sizeof(*d));
	if (!d)
		return LAB_ENOMEM;
	d->prof = p;
	d->s = s;
	d->ops = p == &ideal_profile ? &ideal_ops : p->host ? &virt_ops : &fitted_ops;
	prng_seed(&d->rng, prng_next(sim_prng(s)));
	if (p->host) {
		int rc = bdev_create(s, p->host, &d->host);
		if (rc) {
			free(d);
			return rc == LAB_ENOENT ? LAB_EENGINE : rc;
		}
	}
	if (p->nunits > 0) {
		d->unit_free = lab_calloc((size_t)p->nunits, sizeof(simtime_t));
		d->batch = lab_calloc((size_t)p->nunits, sizeof(*d->batch));
		if (!d->unit_free || !d->batch) {
			free(d->unit_free);
			free(d->batch);
			bdev_destroy(d->host);
			free(d);
			return LAB_ENOMEM;
		}
	}
	d->last_end = UINT64_MAX;
	d->band_i = BDEV_BANDS;
	d->deck_i = BDEV_DECK;
	/* the drive's state this run: one draw z moves its reads and its
	 * writes (drain and flush too) by its own sigmas; a virtual disk's
	 * host device (created above) draws its own drive's, from the same z */
	double zs = var_z(s, V_DEVICE_STATE), sr, sw;
	var_device_sigma(p->name, &sr, &sw);
	d->rd_level = sr > 0.0 && zs != 0.0 ? dm_exp(sr * zs) : 1.0;
	d->wr_level = sw > 0.0 && zs != 0.0 ? dm_exp(sw * zs) : 1.0;
	*out = d;
	return 0;
}

/* bdev_destroy - free the device (NULL is fine). */
void bdev_destroy(bdev *d)
{
	if (!d)
		return;
	d->ops->destroy(d);
	free(d->unit_free);
	free(d->batch);
	free(d->slots.v);
	free(d->inflight.v);
	free(d->tag_tmp);
	free(d);
}

/* bdev_profile_name - the profile the device was created with. */
const char *bdev_profile_name(const bdev *d)
{
	return d->prof->name;
}

/* The block layer's requests for the device (nr_requests): a SATA drive
 * of NCQ depth q behind mq-deadline has 2q (blk_mq_init_sched: twice the
 * tag set's depth, up to BLKDEV_MAX_RQ = 128 each); an NVMe drive's
 * per-CPU queues (1023 tags each) and a virtio disk's never run out in
 * the lab's workloads: 0, no limit. */
static int nr_requests(const bdev_profile *p)
{
	if (p->max_queue <= 0 || p->max_queue > 64)
		return 0;
	return 2 * (p->max_queue < 128 ? p->max_queue : 128);
}

simtime_t bdev_tag_free_at(bdev *d, simtime_t at)
{
	int nr = nr_requests(d->prof);
	theap_expire(&d->inflight, at);
	int n = d->inflight.n;
	if (!nr || n < nr)
		return at;
	/* the (n - nr + 1)-th completion frees the request this bio needs */
	if (n > d->tag_cap) {
		simtime_t *v = lab_realloc(d->tag_tmp, (size_t)n * sizeof *v);
		if (!v)
			return at; /* host OOM: do not wait rather than fail IO */
		d->tag_tmp = v;
		d->tag_cap = n;
	}
	memcpy(d->tag_tmp, d->inflight.v, (size_t)n * sizeof *d->tag_tmp);
	int k = n - nr, lo = 0, hi = n - 1;
	simtime_t *v = d->tag_tmp;
	while (lo < hi) { /* quickselect the k-th smallest */
		simtime_t piv = v[(lo + hi) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < piv)
				i++;
			while (v[j] > piv)
				j--;
			if (i <= j) {
				simtime_t x = v[i];
				v[i++] = v[j];
				v[j--] = x;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k] > at ? v[k] : at;
}

/* bdev_rotational - what the kernel reports as queue/rotational. */
int bdev_rotational(const bdev *d)
{
	return d->prof->rotational;
}

/* Trampoline from the simulator's event to the bio's completion hook. */
static void bdev_end_event(sim *s, void *arg)
{
	bio *b = arg;
	b->end_io(s, b);
}

/* Account a bio that occupies the device from `at` to `done`. */
static void bdev_account(bdev *d, simtime_t at, simtime_t done)
{
	simtime_t from = d->busy_end > at ? d->busy_end : at;
	if (done > from)
		d->st.busy_ns += done - from;
	if (done > d->busy_end)
		d->busy_end = done;
	theap_expire(&d->inflight, at);
	if (done > at && theap_push(&d->inflight, done) == 0 &&
	    (uint64_t)d->inflight.n > d->st.max_inflight)
		d->st.max_inflight = (uint64_t)d->inflight.n;
}

/*
 * bdev_submit - submit a bio at time `at` (>= the simulator's now when
 * end_io is set). Sets b->submit and b->complete, counts it, and schedules
 * b->end_io at completion. Returns the completion time. A BIO_FLUSH bio is
 * a flush. Models submit_bio on a blk-mq queue.
 */
simtime_t bdev_submit(bdev *d, bio *b, simtime_t at)
{
	assert(d && b);
	b->submit = at;
	if (b->op == BIO_FLUSH) {
		b->complete = d->ops->flush(d, at);
		d->st.flushes++;
	} else {
		assert(b->op == BIO_READ || b->op == BIO_WRITE);
		b->complete = d->ops->submit(d, b, at);
		if (b->op == BIO_READ) {
			d->st.reads++;
			d->st.read_bytes += b->bytes;
		} else {
			d->st.writes++;
			d->st.write_bytes += b->bytes;
		}
	}
	assert(b->complete >= at);
	if (sim_recording(d->s)) {
		const int64_t a[] = { b->op + 1, (int64_t)b->offset, (int64_t)b->bytes,
				      (int64_t)b->complete };
		sim_rec_at(d->s, TK_IO, -1, at, 4, a);
	}
	if (d->obs)
		d->obs(d->obs_ctx, b);
	bdev_account(d, at, b->complete);
	if (b->end_io)
		sim_at(d->s, b->complete, bdev_end_event, b);
	return b->complete;
}

void bdev_set_observer(bdev *d, bdev_observer fn, void *ctx)
{
	d->obs = fn;
	d->obs_ctx = ctx;
}

/* bdev_io - one synchronous read or write at `at`; returns completion. */
simtime_t bdev_io(bdev *d, int op, uint64_t offset, uint64_t bytes, simtime_t at)
{
	bio b = { .op = op, .offset = offset, .bytes = bytes };
	return bdev_submit(d, &b, at);
}

/* bdev_flush - a cache flush (REQ_PREFLUSH) at `at`; returns completion. */
simtime_t bdev_flush(bdev *d, simtime_t at)
{
	bio b = { .op = BIO_FLUSH };
	return bdev_submit(d, &b, at);
}

/*
 * bdev_precondition - fill the write cache with data still to drain at
 * `at`, as after minutes of writing: what fio's steady state sees. A
 * device without a write cache is unchanged.
 */
void bdev_precondition(bdev *d, simtime_t at)
{
	const bdev_profile *p = d->prof;
	if (d->host)
		bdev_precondition(d->host, at);
	if (d->ops != &fitted_ops || !p->wcache)
		return;
	/* owed background work half way to a stall: its mean in a long run */
	if (p->defer_ns > 0.0 && p->defer_max_ns > 0.0)
		d->defer = 0.5 * p->defer_max_ns;
	simtime_t full = at + ns_round(p->cache_bytes * p->drain_byte_ns);
	for (int u = 0; u < p->nunits; u++)
		if (full > d->unit_free[u])
			d->unit_free[u] = full;
	if (full > d->unit_max)
		d->unit_max = full;
}

/* bdev_get_stats - counters since creation (valid while d lives). */
const bdev_stats *bdev_get_stats(const bdev *d)
{
	return &d->st;
}
