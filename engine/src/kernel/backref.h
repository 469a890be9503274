/*
 * backref.h - who references an extent, and what finding out costs.
 *
 * btrfs answers "which subvolume roots reach this extent?" with a backref
 * walk (btrfs_find_all_roots -> find_parent_nodes): search the extent tree
 * for the extent item, and for every indirect reference search the
 * referencing root's tree down to the block that holds it, then climb to
 * the roots, one extent-tree lookup per ancestor block. Qgroups run that
 * walk twice per dirty extent: old_roots when the record is inserted and
 * new_roots at commit.
 *
 * The lab keeps the answer in a reachability index fed by the fs hooks
 * (tree block alloc/COW/free, data ref changes, snapshots), because the
 * extent tree's items carry only their first ref in their payload. The
 * cost is charged from the real trees: the extent tree's current height
 * and the height of each referencing root's tree (br_walk says how many
 * nodes a find_parent_nodes walk would visit).
 */
#ifndef BACKREF_H
#define BACKREF_H

#include <stdint.h>

#include "fs.h"

/* A small ulist of root ids (btrfs's struct ulist of roots). */
#define RS_MAX 8
typedef struct rootset {
	int n;
	uint64_t id[RS_MAX];
	uint32_t cnt[RS_MAX]; /* references from that root (data: items) */
} rootset;

int rootset_has(const rootset *s, uint64_t id);
/* Add cnt references from root id; returns 0 or LAB_ERANGE when full. */
int rootset_add(rootset *s, uint64_t id, uint32_t cnt);
/* Drop cnt references (all if cnt == 0); the root leaves at zero. */
void rootset_del(rootset *s, uint64_t id, uint32_t cnt);

/* Deterministic open-addressing map from a non-zero u64 key to a u32. */
typedef struct u64map {
	uint64_t *keys; /* 0 = empty slot */
	uint32_t *vals;
	uint32_t cap, count;
} u64map;

int u64map_put(u64map *m, uint64_t key, uint32_t val);
int u64map_get(const u64map *m, uint64_t key, uint32_t *val); /* 1 found */
void u64map_del(u64map *m, uint64_t key);
void u64map_clear(u64map *m);
void u64map_free(u64map *m);

/* One extent as the index knows it. */
typedef struct br_ent {
	uint64_t bytenr, num_bytes;
	int8_t is_tree;
	int8_t level;
	rootset roots; /* roots it is reachable from, with ref counts */
} br_ent;

/* Height remembered per root, so a walk through a root being dropped
 * still knows how deep its tree was. */
typedef struct br_height {
	uint64_t root;
	int height;
} br_height;

typedef struct backref_idx {
	br_ent *ents;
	uint32_t n, cap;
	u64map map;          /* bytenr -> index in ents */
	br_height *heights;
	int nheights, hcap;
	uint64_t walks, nodes; /* statistics */
} backref_idx;

/* Result of one walk. */
typedef struct br_walk {
	uint32_t nodes; /* tree nodes a find_parent_nodes walk visits */
	uint32_t refs;  /* backrefs resolved */
} br_walk;

void br_init(backref_idx *b);
void br_destroy(backref_idx *b);
/* A reference from root to the extent appeared (delta > 0) or went away.
 * Returns 0 or LAB_ENOMEM. */
int br_ref(backref_idx *b, uint64_t bytenr, uint64_t num_bytes, int is_tree,
	   int level, uint64_t root, int delta);
/* The index entry, or NULL if no root references the extent. */
const br_ent *br_lookup(const backref_idx *b, uint64_t bytenr);
/* Remember the height of a root's tree (called whenever it may change). */
void br_set_height(backref_idx *b, uint64_t root, int height);
int br_get_height(const backref_idx *b, uint64_t root);
/*
 * Find every root that reaches bytenr (models btrfs_find_all_roots): fills
 * *out (may be NULL) and *w with the nodes the walk visits: one extent-tree
 * search, then per referencing root a search of that root's tree to the
 * referencing block and one extent-tree search per ancestor on the way up.
 */
void br_find_all_roots(backref_idx *b, fs_info *fs, uint64_t bytenr,
		       rootset *out, br_walk *w);

#endif /* BACKREF_H */
