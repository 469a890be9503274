/*
 * backref.c - the reachability index behind qgroup backref walks, and the
 * cost of a walk (see backref.h).
 */
#include "backref.h"

#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labmem.h"

/* ---- rootset (ulist of roots) -------------------------------------- */

/*
 * Whether root id is in the set. Linear: sets hold a handful of roots.
 */
int rootset_has(const rootset *s, uint64_t id)
{
	for (int i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return 1;
	return 0;
}

/*
 * Add cnt references from root id, keeping ids ascending so two sets with
 * the same roots compare equal and iterate in the same order. Returns 0, or
 * LAB_ERANGE if the set is full (more than RS_MAX sharing roots).
 */
int rootset_add(rootset *s, uint64_t id, uint32_t cnt)
{
	int i;
	for (i = 0; i < s->n; i++) {
		if (s->id[i] == id) {
			s->cnt[i] += cnt;
			return 0;
		}
		if (s->id[i] > id)
			break;
	}
	if (s->n == RS_MAX)
		return LAB_ERANGE;
	memmove(&s->id[i + 1], &s->id[i], (size_t)(s->n - i) * sizeof s->id[0]);
	memmove(&s->cnt[i + 1], &s->cnt[i], (size_t)(s->n - i) * sizeof s->cnt[0]);
	s->id[i] = id;
	s->cnt[i] = cnt;
	s->n++;
	return 0;
}

/*
 * Drop cnt references from root id (cnt == 0: all of them); the root
 * leaves the set when none remain. Unknown ids are ignored.
 */
void rootset_del(rootset *s, uint64_t id, uint32_t cnt)
{
	for (int i = 0; i < s->n; i++) {
		if (s->id[i] != id)
			continue;
		if (cnt && s->cnt[i] > cnt) {
			s->cnt[i] -= cnt;
			return;
		}
		memmove(&s->id[i], &s->id[i + 1], (size_t)(s->n - i - 1) * sizeof s->id[0]);
		memmove(&s->cnt[i], &s->cnt[i + 1], (size_t)(s->n - i - 1) * sizeof s->cnt[0]);
		s->n--;
		return;
	}
}

/* ---- u64map ---------------------------------------------------------- */

/* Slot of a key: Fibonacci hashing, so the layout depends only on keys. */
static uint32_t map_slot(const u64map *m, uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (m->cap - 1);
}

/* Double the table (or create it); returns 0 or LAB_ENOMEM. */
static int map_grow(u64map *m)
{
	uint32_t ncap = m->cap ? m->cap * 2 : 64;
	u64map n = { lab_calloc(ncap, sizeof(uint64_t)), lab_calloc(ncap, sizeof(uint32_t)), ncap, 0 };
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return LAB_ENOMEM;
	}
	for (uint32_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			u64map_put(&n, m->keys[i], m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = n;
	return 0;
}

/*
 * Insert key -> val or overwrite val. key must be non-zero (0 marks empty
 * slots; bytenrs are never 0). Returns 0 or LAB_ENOMEM.
 */
int u64map_put(u64map *m, uint64_t key, uint32_t val)
{
	if ((m->count + 1) * 2 >= m->cap) { /* load <= 1/2: short probes */
		int rc = map_grow(m);
		if (rc)
			return rc;
	}
	uint32_t i = map_slot(m, key);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->count++;
	m->keys[i] = key;
	m->vals[i] = val;
	return 0;
}

/* Look key up: 1 and *val if present, else 0. */
int u64map_get(const u64map *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return 0;
	uint32_t i = map_slot(m, key);
	while (m->keys[i]) {
		if (m->keys[i] == key) {
			if (val)
				*val = m->vals[i];
			return 1;
		}
		i = (i + 1) & (m->cap - 1);
	}
	return 0;
}

/* Remove key if present (backward-shift deletion keeps probes valid). */
void u64map_del(u64map *m, uint64_t key)
{
	if (!m->cap)
		return;
	uint32_t i = map_slot(m, key);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		return;
	m->keys[i] = 0;
	m->count--;
	uint32_t j = i;
	for (;;) {
		j = (j + 1) & (m->cap - 1);
		if (!m->keys[j])
			break;
		uint32_t home = map_slot(m, m->keys[j]);
		/* move j back to i if its home slot is not in (i, j] */
		int in = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
		if (!in) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
}

/* Empty the map, keeping its table. */
void u64map_clear(u64map *m)
{
	if (m->cap)
		memset(m->keys, 0, m->cap * sizeof m->keys[0]);
	m->count = 0;
}

/* Free the map's memory; it is left empty and usable. */
void u64map_free(u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---- the index ------------------------------------------------------- */

/* An empty index. */
void br_init(backref_idx *b)
{
	memset(b, 0, sizeof *b);
}

/* Free the index. */
void br_destroy(backref_idx *b)
{
	free(b->ents);
	free(b->heights);
	u64map_free(&b->map);
	memset(b, 0, sizeof *b);
}

/*
 * Record that root gained (delta > 0) or lost (delta < 0) a reference to
 * the extent at bytenr. Reachability is a set per extent: a root reaches
 * it or not. (A root whose file holds two items on one extent would lose
 * it at the first drop; the lab's workloads never split an extent and then
 * drop half of it.) An extent no root reaches keeps its slot with an empty
 * set. Returns 0, LAB_ENOMEM, or LAB_ERANGE (too many roots).
 */
int br_ref(backref_idx *b, uint64_t bytenr, uint64_t num_bytes, int is_tree,
	   int level, uint64_t root, int delta)
{
	uint32_t i;
	if (!u64map_get(&b->map, bytenr, &i)) {
		if (delta <= 0)
			return 0;
		if (b->n == b->cap) {
			uint32_t nc = b->cap ? b->cap * 2 : 1024;
			br_ent *ne = lab_realloc(b->ents, nc * sizeof *ne);
			if (!ne)
				return LAB_ENOMEM;
			b->ents = ne;
			b->cap = nc;
		}
		i = b->n++;
		memset(&b->ents[i], 0, sizeof b->ents[i]);
		b->ents[i].bytenr = bytenr;
		int rc = u64map_put(&b->map, bytenr, i);
		if (rc)
			return rc;
	}
	br_ent *e = &b->ents[i];
	if (delta > 0 && e->roots.n == 0) {
		/* (re)born: a freed bytenr may be reused for another extent */
		e->num_bytes = num_bytes;
		e->is_tree = (int8_t)is_tree;
		e->level = (int8_t)level;
	}
	if (delta > 0)
		return rootset_has(&e->roots, root) ? 0 : rootset_add(&e->roots, root, 1);
	rootset_del(&e->roots, root, 0);
	return 0;
}

/* The entry for bytenr if any root still reaches it, else NULL. */
const br_ent *br_lookup(const backref_idx *b, uint64_t bytenr)
{
	uint32_t i;
	if (!u64map_get(&b->map, bytenr, &i))
		return NULL;
	return b->ents[i].roots.n ? &b->ents[i] : NULL;
}

/* Remember root's tree height (kept after the tree is gone, so walks
 * through a root being dropped still know its depth). */
void br_set_height(backref_idx *b, uint64_t root, int height)
{
	for (int i = 0; i < b->nheights; i++) {
		if (b->heights[i].root == root) {
			b->heights[i].height = height;
			return;
		}
	}
	if (b->nheights == b->hcap) {
		int nc = b->hcap ? b->hcap * 2 : 32;
		br_height *nh = lab_realloc(b->heights, (size_t)nc * sizeof *nh);
		if (!nh)
			return; /* the walk then assumes height 1: cost only */
		b->heights = nh;
		b->hcap = nc;
	}
	b->heights[b->nheights].root = root;
	b->heights[b->nheights].height = height;
	b->nheights++;
}

/* The remembered height of root's tree (1 if never told). */
int br_get_height(const backref_idx *b, uint64_t root)
{
	for (int i = 0; i < b->nheights; i++)
		if (b->heights[i].root == root)
			return b->heights[i].height;
	return 1;
}

/*
 * Models btrfs_find_all_roots(): the root set comes from the index; the
 * node count follows find_parent_nodes + resolve_indirect_refs: one
 * extent-tree search for the extent item; per referencing root, a search
 * of that root's tree down to the level holding the reference (a data
 * extent is referenced from a leaf, a tree block from the level above
 * it), then one extent-tree search per ancestor block to climb to the
 * root (btrfs_find_all_roots_safe loops find_parent_nodes per block).
 */
void br_find_all_roots(backref_idx *b, fs_info *fs, uint64_t bytenr,
		       rootset *out, br_walk *w)
{
	int hext = bt_tree_height(&fs->extent_tree);
	if (hext < 1)
		hext = 1;
	w->nodes = (uint32_t)hext;
	w->refs = 0;
	if (out)
		memset(out, 0, sizeof *out);
	const br_ent *e = br_lookup(b, bytenr);
	b->walks++;
	if (!e) {
		b->nodes += w->nodes;
		return;
	}
	for (int i = 0; i < e->roots.n; i++) {
		int h = br_get_height(b, e->roots.id[i]);
		int from = e->is_tree ? e->level + 1 : 0; /* level of the referencing block */
		if (from > h - 1)
			from = h - 1;
		w->nodes += (uint32_t)(h - from);              /* search down to it */
		w->nodes += (uint32_t)((h - 1 - from) * hext); /* climb: one lookup per ancestor */
		w->refs++;
	}
	if (out)
		*out = e->roots;
	b->nodes += w->nodes;
}
