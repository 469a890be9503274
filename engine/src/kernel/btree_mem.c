/*
 * btree_mem.c - the blocks' memory: entry arrays pooled by size, the
 * block structs, room for entries (a gap opened or closed), a new
 * block allocated (btrfs_alloc_tree_block) and dead blocks kept until the
 * commit. See btree.h for the model.
 */
#include <assert.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "btree_int.h"
#include "costs.h"
#include "fs.h"
#include "lab.h"
#include "labmem.h"

/* ------------------------------------------------------------ node memory */

/*
 * Node arrays come in the few sizes btx_node_reserve's growth steps make,
 * and every COW allocates one and frees another of a leaf's size (KiBs:
 * malloc's slow path, a tenth of a bonnie run). Freed arrays wait on a
 * free list per size for the next node of that size. Bounded: past
 * ARR_POOL_BYTES, or for a size not among the first ARR_CLASSES seen,
 * they go back to free(). Memory only: contents are never relied on.
 */
#define ARR_CLASSES 64
#define ARR_POOL_BYTES (2u << 20)
#define ARR_SLOTS 128        /* hash table of the classes: a power of 2 */
static struct arr_class {
	size_t bytes;        /* 0: free slot */
	void *free;          /* linked through the first word */
} arr_pool[ARR_SLOTS];
static int arr_nclasses;
static size_t arr_pooled;

/* Open addressing: a scan of the classes cost more than the rest of a
 * COW's block bookkeeping. */
static struct arr_class *arr_class_of(size_t bytes)
{
	size_t i = (size_t)(((uint64_t)bytes * 0x9e3779b97f4a7c15ull) >> 57) & (ARR_SLOTS - 1);
	while (arr_pool[i].bytes) {
		if (arr_pool[i].bytes == bytes)
			return &arr_pool[i];
		i = (i + 1) & (ARR_SLOTS - 1);
	}
	if (arr_nclasses >= ARR_CLASSES)
		return NULL;
	arr_nclasses++;
	arr_pool[i].bytes = bytes;
	return &arr_pool[i];
}

static void *arr_get(size_t bytes)
{
	struct arr_class *c = arr_class_of(bytes);
	if (c && c->free) {
		void *p = c->free;
		memcpy(&c->free, p, sizeof(void *));
		arr_pooled -= bytes;
		return p;
	}
	return lab_malloc(bytes);
}

static void arr_put(void *p, size_t bytes)
{
	if (!p)
		return;
	struct arr_class *c = bytes >= sizeof(void *) && arr_pooled + bytes <= ARR_POOL_BYTES
		? arr_class_of(bytes) : NULL;
	if (!c) {
		free(p);
		return;
	}
	memcpy(p, &c->free, sizeof(void *));
	c->free = p;
	arr_pooled += bytes;
}

/*
 * Block shells (struct bt_node) likewise: every COW makes one and the
 * commit frees the one it replaced, which in malloc costs more than the
 * block's bookkeeping. Freed shells wait on a free list, linked through
 * dnext. Its bound is above what a commit interval defers (a bonnie
 * interval: ~10^5 shells; at 65536, 70% of the shells were malloc'ed
 * afresh): shells come back only from the deferred list, and new ones
 * are taken from the list first, so keeping them all never raises the
 * peak of live + deferred + pooled shells.
 */
#define NODE_POOL_MAX (1u << 20)
static bt_node *node_pool;
static size_t node_pooled;

static bt_node *node_get(void)
{
	bt_node *n = node_pool;
	if (!n)
		return lab_calloc(1, sizeof(*n));
	node_pool = n->dnext;
	node_pooled--;
	memset(n, 0, sizeof(*n));
	return n;
}

static void node_put(bt_node *n)
{
	if (node_pooled >= NODE_POOL_MAX) {
		free(n);
		return;
	}
	n->dnext = node_pool;
	node_pool = n;
	node_pooled++;
}

void bt_arr_pool_drain(void)
{
	while (node_pool) {
		bt_node *n = node_pool;
		node_pool = n->dnext;
		free(n);
	}
	node_pooled = 0;
	for (int i = 0; i < ARR_SLOTS; i++) {
		for (void *p = arr_pool[i].free, *nx; p; p = nx) {
			memcpy(&nx, p, sizeof(void *));
			free(p);
		}
		arr_pool[i].free = NULL;
	}
	arr_pooled = 0;
}

/* Drop n's arrays (the entries they hold are gone). */
void btx_node_arrays_put(bt_node *n)
{
	size_t total = (size_t)(n->head + n->cap);
	arr_put(n->items ? n->items - n->head : NULL, total * sizeof(bt_item));
	arr_put(n->ptrs ? n->ptrs - n->head : NULL, total * sizeof(bt_ptr));
	n->items = NULL;
	n->ptrs = NULL;
	n->head = 0;
}

/* A block's entry array as bytes: items of a leaf, key pointers of a
 * node; every array operation below works on either. */
static inline size_t node_esz(const bt_node *n)
{
	return n->level ? sizeof(bt_ptr) : sizeof(bt_item);
}

static inline char *node_arr(const bt_node *n)
{
	return n->level ? (char *)n->ptrs : (char *)n->items;
}

static inline void node_set_arr(bt_node *n, char *arr)
{
	if (n->level)
		n->ptrs = (bt_ptr *)(void *)arr;
	else
		n->items = (bt_item *)(void *)arr;
}

/* Make room for `need` entries in n's array. Returns 0 or LAB_ENOMEM. */
int btx_node_reserve(bt_node *n, int need)
{
	if (need <= n->cap)
		return 0;
	size_t esz = node_esz(n);
	char *arr = node_arr(n);
	int total = n->head + n->cap;
	/* the entries kept: realloc's copy, up to what n holds */
	size_t keep = n->nritems > 0 ? (size_t)(n->nritems < n->cap ? n->nritems : n->cap) : 0;
	if (need <= total) {
		/* room before the entries: slide them back to the start */
		char *base = arr - (size_t)n->head * esz;
		memmove(base, arr, keep * esz);
		arr = base;
	} else {
		/* grow by 1/8: leaves are many and long-lived, slack is memory */
		int cap = total ? total : 8;
		while (cap < need)
			cap += cap / 8 + 4;
		if (n->level) {
			int max = (int)BT_NODE_PTRS;
			if (cap > max)
				cap = max > need ? max : need;
		}
		char *a = arr_get((size_t)cap * esz);
		if (!a)
			return LAB_ENOMEM;
		if (keep && arr)
			memcpy(a, arr, keep * esz);
		if (arr)
			arr_put(arr - (size_t)n->head * esz, (size_t)total * esz);
		arr = a;
		total = cap;
	}
	node_set_arr(n, arr);
	n->head = 0;
	n->cap = total;
	return 0;
}

/* Delete entries [slot, slot + nr) of n's array (nritems not yet updated):
 * whichever side of them is shorter moves. */
void btx_node_del_entries(bt_node *n, int slot, int nr)
{
	size_t esz = node_esz(n);
	char *arr = node_arr(n);
	int after = n->nritems - slot - nr;
	if (slot < after) {
		memmove(arr + (size_t)nr * esz, arr, (size_t)slot * esz);
		node_set_arr(n, arr + (size_t)nr * esz);
		n->head += nr;
		n->cap -= nr;
	} else {
		memmove(arr + (size_t)slot * esz, arr + (size_t)(slot + nr) * esz, (size_t)after * esz);
	}
}

/* Open a gap of nr entries at `slot` of n's array (room reserved, nritems
 * not yet updated): into the room before the entries if there is enough
 * and that moves fewer. */
void btx_node_ins_entries(bt_node *n, int slot, int nr)
{
	size_t esz = node_esz(n);
	char *arr = node_arr(n);
	int after = n->nritems - slot;
	if (n->head >= nr && slot < after) {
		memmove(arr - (size_t)nr * esz, arr, (size_t)slot * esz);
		node_set_arr(n, arr - (size_t)nr * esz);
		n->head -= nr;
		n->cap += nr;
	} else {
		memmove(arr + (size_t)(slot + nr) * esz, arr + (size_t)slot * esz, (size_t)after * esz);
	}
}

void btx_node_free_mem(bt_node *n)
{
	btx_node_arrays_put(n);
	node_put(n);
}

/* Allocate a new block at `level` for tree tr in the running transaction
 * (models btrfs_alloc_tree_block). mrefs starts at 1: the caller links it. */
bt_node *btx_node_new(bt_tree *tr, int level, task *t)
{
	fs_info *fs = tr->fs;
	uint64_t bytenr;
	if (tr->priv ? tr->priv->alloc(tr->priv->ctx, tr, level, &bytenr)
		     : fs_tree_block_alloc(fs, tr, level, &bytenr))
		return NULL;
	bt_node *n = node_get();
	if (!n)
		return NULL;
	fs_charge(fs, t, ALLOC_NS_FIND);
	n->bytenr = bytenr;
	n->generation = btx_gen(tr);
	n->owner = tr->id;
	n->level = level;
	n->mrefs = 1;
	if (level)
		n->used = 0;
	btx_rec_blk(tr, t, n);
	return n;
}

/* Put a dead block on the deferred list: its memory stays readable (commit
 * roots, stale paths) until bt_release_deferred at the commit. */
void btx_node_defer(fs_info *fs, bt_node *n)
{
	assert(!n->dead);
	n->dead = 1;
	n->dnext = fs->deferred;
	fs->deferred = n;
	if (!fs->opts.keep_commit_roots && !n->keep_mem) {
		/* nobody reads the old copy: keep only the shell (bytenr, gen) */
		btx_node_arrays_put(n);
		n->nritems = 0;
		n->cap = 0;
		n->used = 0;
	}
}

void bt_release_deferred(fs_info *fs)
{
	bt_node *n = fs->deferred;
	fs->deferred = NULL;
	while (n) {
		bt_node *next = n->dnext;
		btx_node_free_mem(n);
		n = next;
	}
}
