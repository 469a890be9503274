/*
 * emap.h - an inode's extent map tree: file range -> disk extent (or hole),
 * the in-memory cache btrfs_get_extent fills from the fs tree on reads,
 * btrfs_cont_expand fills with holes when a write extends the file past a
 * gap, and cow_file_range fills when delalloc is flushed. Entries live
 * until the pages go (here: until a remount drops them).
 *
 * The kernel keeps them in an rb-tree; the lab keeps a sorted list of
 * fixed-size chunks (a one-level B+-tree: inserts anywhere cost at most a
 * chunk's memmove) and charges a lookup as a descent of a balanced tree of
 * the same size (eio_depth).
 */
#ifndef EMAP_H
#define EMAP_H

#include <stdint.h>

#define EM_HOLE UINT64_MAX /* block_start of a hole map */
#define EMAP_CHUNK 256

typedef struct extent_map {
	uint64_t start, len;
	uint64_t block_start; /* disk bytenr, or EM_HOLE */
} extent_map;

/* A chunk holds up to EMAP_CHUNK maps; a small file's only chunk starts
 * with room for a few and grows (most inodes have one or two maps). */
typedef struct emap_chunk {
	uint32_t n, cap;
	extent_map v[];
} emap_chunk;

/* A chunk's first size (maps). */
#define EMAP_SMALL 4

struct lab_pool;

typedef struct emap_tree {
	emap_chunk **c;             /* &c1 while one chunk fits */
	emap_chunk *c1;
	/* where chunks of EMAP_SMALL maps come from (NULL: the heap): a
	 * file system's files make and drop one each, by the ten thousand */
	struct lab_pool *pool;
	uint64_t nc, cap;
	uint64_t n;                 /* maps in the tree */
	uint64_t hint;              /* chunk of the last search (a guess) */
	uint32_t hint_j;            /* and the map in it */
} emap_tree;

/* A position in the tree (ci < 0: none). */
typedef struct emap_pos {
	int64_t ci;
	uint32_t j;
} emap_pos;

void emap_init(emap_tree *t);
/* Take small chunks from pool (objects of EMAP_SMALL_BYTES) from now on:
 * set before the first insert; the pool outlives the tree. (A zeroed
 * emap_tree is an empty one, as emap_init leaves it.) */
#define EMAP_SMALL_BYTES (sizeof(emap_chunk) + EMAP_SMALL * sizeof(extent_map))
void emap_set_pool(emap_tree *t, struct lab_pool *pool);
void emap_destroy(emap_tree *t);
/* Drop every map (page cache dropped, inode evicted). */
void emap_clear(emap_tree *t);
/* Insert a map; maps overlapping it are replaced (models
 * btrfs_add_extent_mapping's replace path in a simple form). Returns 0
 * or LAB_ENOMEM. */
int emap_insert(emap_tree *t, uint64_t start, uint64_t len, uint64_t block_start);
/* First map overlapping [start, start + len) (models
 * lookup_extent_mapping); *nodes receives the descent's node visits. */
emap_pos emap_lookup(emap_tree *t, uint64_t start, uint64_t len, uint64_t *nodes);
/* The map at pos, or NULL. */
const extent_map *emap_get(const emap_tree *t, emap_pos p);
/* The map after pos (models btrfs_next_extent_map). */
emap_pos emap_next(const emap_tree *t, emap_pos p);
/* Drop the maps at or after `off`, trimming one that crosses it. */
void emap_drop_from(emap_tree *t, uint64_t off);

#endif /* EMAP_H */
