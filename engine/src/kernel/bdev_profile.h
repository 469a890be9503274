/*
 * bdev_profile.h - the physical parameters of a simulated device profile,
 * and the measured fio points they were fitted to.
 *
 * The numbers live in two generated files, written by
 * engine/tools/fit-device.mjs from ../shared/calibration:
 *   bdev_profiles.c  the fitted parameters of each measured profile
 *   bdev_points.c    every measured fio point (and exp_fio's published rows)
 * The hand-written profiles ("ideal", "hdd") are in bdev.c.
 *
 * The model (bdev.c) a profile parameterises:
 *   host queue   at most max_queue commands inside the device (SATA NCQ
 *                has 32 slots; an NVMe controller fetches only as many
 *                commands as it has internal slots); later ones wait in
 *                the host queue in order, so a deep random load cannot
 *                pile up without bound on a few dies;
 *   link         one FIFO stage per command: link_ns + bytes * link_byte_ns
 *                (controller command processing and the bus transfer);
 *   units        nunits parallel flash units (dies); a read is cut
 *                into ops of at most chunk_bytes on consecutive units from a
 *                random one (random IO) or from the offset's stripe
 *                (sequential IO; with seq_scatter each op on a random
 *                unit, as on a drive whose data was written at random);
 *                an op takes (op_ns + bytes * byte_ns) * X,
 *                X drawn once per IO from the service-time quantile table;
 *                a read holds its unit for rd_busy_frac of that (the sense)
 *                while its transfer and ECC decode overlap the next op;
 *                on NAND with a partial-page read mode (rd_part_bytes), an
 *                op larger than that pays the full-page sense rd_page_op_ns
 *                instead of rd_op_ns; with planes > 1 a random read
 *                queued behind a unit's pending (not yet started) read
 *                of another plane is sensed together with it and adds
 *                only its transfer time (multi-plane read);
 *   write cache  (wcache) a write completes when it is in the DRAM cache,
 *                wr_ns * X after it is admitted; each unit owns an equal
 *                share of cache_bytes and drains it by programming flash,
 *                all together at 1 / drain_byte_ns bytes per ns; a random
 *                write is placed on the least busy unit (log-structured
 *                FTL), so a sustained write rate above the drain rate
 *                waits for room in arrival order; the drain rate of each
 *                band of seg_bytes host bytes is scaled by a factor, in
 *                cycles of 16 bands whose mean is 1 (garbage collection
 *                relocates a different amount of valid data for each
 *                band): 1 / (1 - v) with v, the valid fraction of the
 *                band's victim, uniform in gc_valid +- drain_sigma; so a
 *                saturated write stream's latency varies from band to
 *                band. With wr_serial the controller takes one submission
 *                queue's writes into the cache one after another, so a
 *                single queue (one fio job) is capped at about 1 / wr_ns
 *                writes per second (a slow write's time beyond the median
 *                is not serial);
 *   write stall  (defer_ns) the controller owes background work for its
 *                writes (committing their mapping-table updates, a
 *                garbage-collection step): defer_ns per batch of commands
 *                it takes together, i.e. defer_ns / n for a write that
 *                arrives with n commands in the device (n-1 others), so a
 *                deeper queue needs less of it per write. It does that
 *                work whenever its command stage (the link) is idle; when
 *                defer_max_ns of it has piled up it does it all before the
 *                next command, taking that much time times a factor
 *                spread evenly over 1 +- defer_spread (in cycles of 16
 *                stalls that cover the spread): every command in the
 *                device waits (the 860 PRO's ~1.6 ms write stalls,
 *                rarer per write the deeper the queue, and none at depth
 *                1, where fio's own time between writes leaves room);
 *                wr_link_ns is a write command's extra time on the link
 *                (SATA: the DMA Activate handshake before the data);
 *   flush        a device with power-loss protection (plp) acknowledges a
 *                flush at once; one without completes it when its cache
 *                has drained and, at the earliest, a lognormal flush
 *                latency (flush_p50/p99_ns, measured as fdatasync after
 *                one 4 KiB write, so it already includes programming
 *                that write) after the command.
 *   virtual disk (host) a VM's disk: the guest's IO crosses the
 *                virtualisation path (a VM exit for the kick, host thread
 *                wakeups, the host I/O thread's serial request handling,
 *                the host syscall) to the host device profile, which
 *                serves it with its own fitted model, and comes back by
 *                interrupt injection; with virt_writethrough the host
 *                flushes its device after every write.
 */
#ifndef BDEV_PROFILE_H
#define BDEV_PROFILE_H

#include <stdint.h>

/* A quantile table of a service-time multiplier: mult[i] at probability
 * q[i], q ascending from 0 to 1, mult normalised so the median is 1. */
typedef struct bdev_qtable {
	int n;
	const double *q;
	const double *mult;
} bdev_qtable;

typedef struct bdev_profile {
	const char *name;
	const char *title;        /* one line: what it stands for */
	int max_queue;            /* device command slots; 0 = unlimited */
	double link_ns;           /* per-command controller/link time */
	double link_byte_ns;      /* per-byte transfer time (1 / bandwidth) */
	int nunits;               /* parallel flash units */
	uint32_t chunk_bytes;     /* largest op a unit serves for one IO */
	double rd_op_ns;          /* median read op time (fixed part) */
	double rd_byte_ns;        /* read op time per byte */
	double wr_op_ns;          /* write op on a unit (no write cache) */
	double wr_byte_ns;
	uint32_t rd_part_bytes;   /* largest read op the NAND serves with a
	                           * partial-page sense; 0 = no such mode */
	double rd_page_op_ns;     /* fixed part of a larger read op: the
	                           * full-page sense (used if rd_part_bytes) */
	double rd_busy_frac;      /* share of a read op that holds its unit
	                           * (the array sense; transfer and ECC
	                           * overlap the next op); 0 or 1 = all */
	int planes;               /* planes per flash unit: a read queued on a
	                           * unit joins the unit's pending read of
	                           * another plane (multi-plane read);
	                           * 0 or 1 = no such mode */
	double seq_op_ns;         /* op fixed part when the IO is sequential
	                           * (a disk: no seek); < 0 = same as random */
	int seq_scatter;          /* sequential data sits on the units in no
	                           * order (a drive written at random): each
	                           * op of a sequential IO goes to a random
	                           * unit, not along the stripe */
	int wcache;               /* writes complete in a DRAM write cache */
	double wr_ns;             /* median write-cache completion time */
	int wr_serial;            /* a submission queue's writes enter the
	                           * cache one at a time (up to wr_ns each) */
	double cache_bytes;       /* write cache capacity */
	double drain_byte_ns;     /* sustained flash write time per byte */
	double seg_bytes;         /* host bytes written per band (segment)... */
	double gc_valid;          /* mean valid fraction v of a band's GC
	                           * victim: the band's drain time factor is
	                           * 1 / (1 - v) (write amplification) */
	double drain_sigma;       /* ...and the half-width of v's uniform
	                           * spread (each cycle of 16 bands' factors
	                           * is scaled to mean 1); 0 = a steady
	                           * drain */
	double wr_link_ns;        /* a write command's extra link time */
	double defer_ns;          /* background work owed per batch of
	                           * commands (defer_ns / n per write with n
	                           * commands in the device); 0 = none */
	double defer_max_ns;      /* owed work done at once (a stall) */
	double defer_spread;      /* a stall takes the owed work times a
	                           * factor in 1 +- defer_spread (uniform) */
	int plp;                  /* power-loss protection: flush is free */
	double flush_p50_ns;      /* flush latency without plp: median */
	double flush_p99_ns;      /*   and 99th percentile (lognormal) */
	double host_ns;           /* fio's per-IO CPU time on the rig that
	                           * measured the profile (exp_fio only) */
	/* A virtual disk: a VM's block device whose IOs the host serves on
	 * its own device (the profile named host), through the
	 * virtualisation path (bdev.c, virt_submit). host NULL: a physical
	 * device, and the fields below are unused. */
	const char *host;         /* host device profile */
	double virt_exit_ns;      /* the guest's virtqueue kick: a VM exit
	                           * to KVM's ioeventfd and back */
	double virt_wake_ns;      /* one sleeping host thread woken (the I/O
	                           * thread on its eventfd, a thread-pool
	                           * worker, the halted vCPU on its
	                           * interrupt): twice on the way in, twice
	                           * on the way out */
	double virt_req_ns;       /* the host I/O thread's CPU per request
	                           * (virtqueue pop, request setup, used-ring
	                           * push and irqfd): one thread, serial */
	double virt_sys_ns;       /* the host's syscall and block layer for
	                           * the request (pwritev/preadv) */
	int virt_writethrough;    /* the host makes each write durable before
	                           * completing it (QEMU cache=writethrough or
	                           * directsync: a host flush after every
	                           * write); the guest then sees no volatile
	                           * cache, so its own flushes cost nothing */
	bdev_qtable rd_tail;      /* read service multiplier */
	bdev_qtable wr_tail;      /* write completion multiplier */
	const char *notes;        /* provenance of the parameters */
	int rotational;           /* what the guest/host kernel reports in
	                           * /sys/block/X/queue/rotational (mkfs.btrfs
	                           * chose DUP metadata on 1 until 5.15) */
} bdev_profile;

/* Generated: the fitted profiles, NULL-name terminated. */
extern const bdev_profile bdev_fitted_profiles[];

/* Look up a profile by name (fitted or hand-written); NULL if unknown. */
const bdev_profile *bdev_profile_find(const char *name);

/* Make bdev_profile_find(p->name) return p (NULL: back to the compiled
 * profiles). Only the fitting driver (engine/tools/fitdrv.c) calls it, to
 * run the engine itself on a candidate; p must outlive its use. */
void bdev_profile_override(const bdev_profile *p);

/* One measured fio point. Unknown figures are < 0. */
typedef struct bdev_point {
	const char *profile;
	const char *rw;           /* randread, randwrite, read, write */
	uint32_t bs;
	int iodepth;
	int numjobs;
	double iops;
	double bw_mib_s;
	double clat_avg_us, clat_p50_us, clat_p90_us, clat_p99_us, clat_p999_us;
	int fit;                  /* 1: used by the fit; 0: not */
	const char *why;          /* why not: held out (out-of-sample check)
	                           * or outside the model; "" if fitted */
	const char *source;       /* calibration file */
} bdev_point;

#endif /* BDEV_PROFILE_H */
