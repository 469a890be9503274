/*
 * lseek.h - lseek(SEEK_DATA / SEEK_HOLE) on btrfs, as 6.1 does it (the
 * "before" of seed 004) and as 6.2 does it with the series applied, each
 * behaviour-changing patch of the series a bit of the file system's
 * patches (P_004_*, patches.def).
 */
#ifndef LSEEK_H
#define LSEEK_H

#include <stdint.h>

#include "vfs_data.h"

enum { LSEEK_SET = 0, LSEEK_DATA = 3, LSEEK_HOLE = 4 };
#define LSEEK_ENXIO 2

/* What one call did, for metrics and the view. */
typedef struct lseek_info {
	uint64_t offset, result;
	int whence;
	uint64_t lock_records;    /* records the range lock + unlock walked */
	uint64_t lock_nodes;      /* io_tree nodes of their descents */
	uint64_t search_records;  /* records the delalloc searches walked */
	uint64_t search_nodes;    /* io_tree + extent map / ordered nodes */
	uint64_t fst_nodes;       /* fs tree blocks visited */
	uint64_t cache_hits, cache_misses; /* count_range_bits cached state */
	uint64_t subranges;       /* find_delalloc_subrange calls */
	uint64_t cpu_ns;
	simtime_t waited_ns;
	int parked;               /* the call parked and will be retried */
} lseek_info;

/*
 * lseek(fd, offset, whence) for SEEK_DATA / SEEK_HOLE (models
 * btrfs_file_llseek -> find_desired_extent). Returns 0 with li->result
 * set, LSEEK_ENXIO (SEEK_DATA past the last data, or offset >= i_size),
 * or 1 when t was parked on the io_tree because part of [offset, EOF] is
 * locked by a read in flight (call again when woken: the kernel's
 * lock_extent sleeps and retries the same way). li accumulates across a
 * retried call.
 */
int vd_lseek(dfile *f, task *t, uint64_t offset, int whence, lseek_info *li);

/*
 * After vd_lseek returned, writeback may have slipped in ahead of the
 * lock sweep and delayed the unlock: wait for it. Returns 1 if t waited
 * (step again), 0 when the call is over.
 */
int vd_lseek_settle(dinode *d, task *t, lseek_info *li);

/* The delalloc search of a hole range [start, end] (models
 * btrfs_find_delalloc_in_range); exported for unit tests. cached may be
 * NULL. Returns 1 and the first delalloc subrange, or 0. */
int vd_find_delalloc_in_range(dinode *d, uint64_t start, uint64_t end,
			      extent_state **cached, uint64_t *ds, uint64_t *de,
			      lseek_info *li, uint64_t *ns);

#endif /* LSEEK_H */
