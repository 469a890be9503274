/*
 * bdev.h - the simulated block device, behind a table of operations
 * (submit, flush) so a fitted profile, an ideal device and a
 * fault-injecting device are interchangeable (cf. sqlite3_io_methods).
 *
 * Timing: a bio submitted at `at` gets a completion time from the device's
 * queue model (internal parallel units, per-op/size service time
 * distribution fitted to ../shared/calibration, tail latency). If end_io is
 * set it is scheduled as a simulator event at completion.
 */
#ifndef BDEV_H
#define BDEV_H

#include <stdint.h>

#include "sim.h"

enum bio_op { BIO_READ = 0, BIO_WRITE = 1, BIO_FLUSH = 2 };

typedef struct bio bio;
typedef void (*bio_end_fn)(sim *s, bio *b);

struct bio {
	int op;               /* enum bio_op */
	uint64_t offset;      /* bytes */
	uint64_t bytes;
	int sequential;       /* hint: part of a sequential stream */
	simtime_t submit;     /* set by bdev_submit */
	simtime_t complete;   /* set by bdev_submit */
	bio_end_fn end_io;    /* optional completion callback */
	void *priv;           /* owner's pointer */
	int queue;            /* submission queue: the submitting CPU or fio
	                       * job (NVMe has one per CPU); 0 unless set.
	                       * (Added by the device owner.) */
};

typedef struct bdev bdev;

typedef struct bdev_ops {
	const char *name;
	/* Compute b->complete for a bio submitted at `at`; return it. */
	simtime_t (*submit)(bdev *d, bio *b, simtime_t at);
	/* A cache flush (FLUSH/FUA) issued at `at`; returns completion. */
	simtime_t (*flush)(bdev *d, simtime_t at);
	void (*destroy)(bdev *d);
} bdev_ops;

/* Profiles by name: "nvme-dc", "consumer-ssd", "consumer-nvme", "ideal"
 * (zero latency, infinite bandwidth, for unit tests), "hdd" (textbook
 * seek+rotation), "vm-ssd" (a VM's disk on a consumer-ssd host). */
int bdev_create(sim *s, const char *profile, bdev **out);
void bdev_destroy(bdev *d);
const char *bdev_profile_name(const bdev *d);
/* 1 if the device reports itself rotational (queue/rotational). */
int bdev_rotational(const bdev *d);
/* When a bio submitted at `at` gets a request of the block layer: at, or
 * later when nr_requests are in flight already (blk_mq_get_tag puts the
 * submitter to sleep until one completes). Only a SATA-depth queue (a
 * disk or a SATA SSD behind mq-deadline, 2 x NCQ depth) runs out. */
simtime_t bdev_tag_free_at(bdev *d, simtime_t at);

/* Submit: sets b->submit/b->complete, schedules b->end_io if set.
 * Returns the completion time. */
simtime_t bdev_submit(bdev *d, bio *b, simtime_t at);
/* Synchronous convenience: one IO at `at`, returns completion time. */
simtime_t bdev_io(bdev *d, int op, uint64_t offset, uint64_t bytes, simtime_t at);
simtime_t bdev_flush(bdev *d, simtime_t at);
/* Put the device in the steady state a long benchmark measures (fio after
 * its ramp): a write cache full of data not yet on flash. A fresh device
 * starts with an empty cache. (Added by the device owner.) */
void bdev_precondition(bdev *d, simtime_t at);

/* An observer of every bio the device takes (an experiment drawing the
 * device queue): called by bdev_submit once b->submit and b->complete are
 * set. NULL removes it. */
typedef void (*bdev_observer)(void *ctx, const bio *b);
void bdev_set_observer(bdev *d, bdev_observer fn, void *ctx);

/* Statistics for metrics and the front end. */
typedef struct bdev_stats {
	uint64_t reads, writes, flushes;
	uint64_t read_bytes, write_bytes;
	uint64_t busy_ns;      /* union of time with at least one IO in flight */
	uint64_t max_inflight;
} bdev_stats;
const bdev_stats *bdev_get_stats(const bdev *d);

/* Every profile by name, NULL-terminated, the default (nvme-dc) first:
 * what an experiment offers as its `device` parameter. */
extern const char *const bdev_profile_names[];
/* The index of "vm-ssd" there (an experiment's default device; test_bdev
 * checks it). */
#define BDEV_PROFILE_VM_SSD 4

#endif /* BDEV_H */
