/*
 * emap.h - an inode's extent map tree: file range -> disk extent (or hole),
 * the in-memory cache btrfs_get_extent fills from the fs tree on reads and
 * cow_file_range fills when delalloc is flushed. Entries live until the
 * pages go (here: until a remount drops them).
 *
 * The kernel keeps them in an rb-tree; the lab keeps a sorted array (the
 * data path inserts them in nearly ascending order) and charges a lookup
 * as a descent of a balanced tree of the same size (eio_depth).
 */
#ifndef EMAP_H
#define EMAP_H

#include <stdint.h>

#define EM_HOLE UINT64_MAX /* block_start of a hole map */

typedef struct extent_map {
	uint64_t start, len;
	uint64_t block_start; /* disk bytenr, or EM_HOLE */
} extent_map;

typedef struct emap_tree {
	extent_map *v;
	uint64_t n, cap;
	uint64_t lookups, nodes_visited;
} emap_tree;

void emap_init(emap_tree *t);
void emap_destroy(emap_tree *t);
/* Drop every map (page cache dropped, inode evicted). */
void emap_clear(emap_tree *t);
/* Insert a map; an existing map overlapping it is replaced (models
 * btrfs_add_extent_mapping's replace path in a simple form). Returns 0
 * or LAB_ENOMEM. */
int emap_insert(emap_tree *t, uint64_t start, uint64_t len, uint64_t block_start);
/* First map overlapping [start, start + len), or -1 (models
 * lookup_extent_mapping). *nodes receives the descent's node visits. */
int64_t emap_lookup(emap_tree *t, uint64_t start, uint64_t len, uint64_t *nodes);
/* Drop the maps at or after `off`, trimming one that crosses it. */
void emap_drop_from(emap_tree *t, uint64_t off);
/* The map after index i, or -1 (models btrfs_next_extent_map). */
int64_t emap_next(const emap_tree *t, int64_t i);

#endif /* EMAP_H */
