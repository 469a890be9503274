/*
 * ordered.h - an inode's ordered extents: one per extent being written,
 * created when delalloc is run (cow_file_range) and removed when its IO
 * has completed and finish_ordered_io has inserted the file extent item.
 * Short-lived, so the tree is small (patch 4/9 searches it instead of the
 * extent maps). Kept as an array sorted by file offset; a lookup is
 * charged as a descent of a balanced tree of the same size. The array
 * (v[0..n)) lives inside a larger allocation with room at both ends, so
 * adding or removing shifts the shorter side: a sync completes thousands
 * of ordered extents oldest first, and each removal at the front is O(1).
 */
#ifndef ORDERED_H
#define ORDERED_H

#include <stdint.h>

typedef struct ordered_extent {
	uint64_t file_off, len;
	uint64_t disk_bytenr;
} ordered_extent;

/* base's first size (extents) */
#define ORDERED_SMALL 4

struct lab_pool;

typedef struct ordered_tree {
	ordered_extent *v;    /* the first extent, inside base */
	uint64_t n, cap;      /* cap: extents base holds */
	ordered_extent *base;
	/* where bases of ORDERED_SMALL extents come from (NULL: the heap):
	 * a file system's files make and drop one each, by the ten thousand */
	struct lab_pool *pool;
	uint64_t completed;
} ordered_tree;

void ordered_init(ordered_tree *t);
/* Take small bases from pool (objects of ORDERED_SMALL extents) from now
 * on: set before the first add; the pool outlives the tree. (A zeroed
 * ordered_tree is an empty one, as ordered_init leaves it.) */
void ordered_set_pool(ordered_tree *t, struct lab_pool *pool);
void ordered_destroy(ordered_tree *t);
/* Add an ordered extent (models btrfs_add_ordered_extent). 0 or LAB_ENOMEM. */
int ordered_add(ordered_tree *t, uint64_t file_off, uint64_t len, uint64_t disk);
/* Remove the ordered extent starting at file_off (models
 * btrfs_remove_ordered_extent). Returns 0, or 1 if there is none. */
int ordered_remove(ordered_tree *t, uint64_t file_off);
/* First ordered extent overlapping [start, start + len), or -1 (models
 * btrfs_lookup_first_ordered_range). *nodes gets the node visits. */
int64_t ordered_lookup_range(ordered_tree *t, uint64_t start, uint64_t len,
			     uint64_t *nodes);
/* The same search for the data path's own use (writeback asking whether
 * pages are still under writeback): no lookup statistics. */
int64_t ordered_first_overlap(const ordered_tree *t, uint64_t start, uint64_t len);

#endif /* ORDERED_H */
