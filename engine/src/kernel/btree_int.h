/*
 * btree_int.h - helpers shared by btree.c, btree_mem.c, btree_split.c and
 * btree_walk.c (not part of the B-tree API: see btree.h).
 */
#ifndef BTREE_INT_H
#define BTREE_INT_H

#include <stdint.h>

#include "btree.h"
#include "costs.h"
#include "fs.h"

struct fs_info;

/* The generation a block must have to be changed in place: the running
 * transaction's, or a private tree's own (bt_priv_ops). */
static inline uint64_t btx_gen(const bt_tree *tr)
{
	return tr->priv ? tr->priv_gen : tr->fs->transid;
}

/* block memory (btree_mem.c) */
int btx_node_reserve(bt_node *n, int need);
/* Open a gap of nr entries at slot of n's array (room reserved), or close
 * the nr entries at slot; nritems not yet updated. */
void btx_node_ins_entries(bt_node *n, int slot, int nr);
void btx_node_del_entries(bt_node *n, int slot, int nr);
/* Give n's entry arrays back (to the pool). */
void btx_node_arrays_put(bt_node *n);
void btx_node_free_mem(bt_node *n);
bt_node *btx_node_new(bt_tree *tr, int level, task *t);
void btx_node_defer(struct fs_info *fs, bt_node *n);
void btx_free_empty_block(bt_tree *tr, task *t, bt_node *n);

/* recording (sim.h, trace_kinds.def): whether this tree's file system
 * records (inline: every search asks); the tree's handle, declared at its
 * first event; a block's contents; the tree's root */
static inline int btx_rec(const bt_tree *tr)
{
	return tr->fs && sim_recording(tr->fs->sim);
}
int64_t btx_rec_tree(bt_tree *tr);
void btx_rec_blk(bt_tree *tr, const task *t, const bt_node *n);
void btx_rec_root(bt_tree *tr, const task *t);
void btx_rec_visit(bt_tree *tr, const task *t, const bt_node *n);
/* The path's lock at `level` passes to block `to` without a lock call of
 * its own (the path is repointed at a block it holds): unlock + lock. */
void btx_rec_lock_moves(bt_tree *tr, const bt_path *p, int level, const bt_node *to);

/* cost and locks */
/* Charge a visit of block n (inline: every level of every search); rec:
 * btx_rec(tr), which a search asks once. */
static inline void btx_visit_rec(bt_tree *tr, task *t, const bt_node *n, int rec)
{
	fs_info *fs = tr->fs;
	if (fs->accounting_off)
		return;
	/* 1 + floor(log2(nritems)): the binary search's probes */
	int steps = n->nritems > 1 ? 32 - __builtin_clz((unsigned)n->nritems) : 1;
	tr->nodes_visited++;
	tr->bsearch_steps += (uint64_t)steps;
	if (rec)
		btx_rec_visit(tr, t, n);
	if (fs->sim)
		sim_count(fs->sim, fs->c_node_visits, 1);
	fs_charge(fs, t, BT_NS_NODE_VISIT + (uint64_t)steps * BT_NS_BSEARCH_STEP);
}

static inline void btx_visit(bt_tree *tr, task *t, const bt_node *n)
{
	btx_visit_rec(tr, t, n, btx_rec(tr));
}

void btx_lock_take(bt_path *p, int level, int write);
void btx_lock_drop(bt_path *p, int level);
/* Lock the block at path level `level` unless the path has no task, no
 * block there, or holds it already; unlock it if held. Inline: a search
 * tests every level, and most hold nothing. */
static inline void btx_lock_level(bt_path *p, int level, int write)
{
	if (p->t && p->nodes[level] && !(p->held & (1u << level)))
		btx_lock_take(p, level, write);
}
static inline void btx_unlock_level(bt_path *p, int level)
{
	if (p->held & (1u << level))
		btx_lock_drop(p, level);
}
void btx_tmp_lock(bt_tree *tr, task *t, bt_node *n);
void btx_tmp_unlock(bt_tree *tr, task *t, bt_node *n);

/* references and COW */
void btx_leaf_data_refs(bt_tree *tr, const bt_node *n, int delta);
void btx_tree_ref(bt_tree *tr, const bt_node *n, int delta);
bt_node *btx_cow_block(bt_tree *tr, task *t, bt_node *n, bt_node *parent, int pslot);
bt_node *btx_cow_sibling(bt_tree *tr, task *t, bt_node *parent, int slot);

/* leaf space and pointers */
uint32_t btx_leaf_free(const bt_node *n);
uint32_t btx_leaf_space_used(const bt_node *n, int start, int nr);
void btx_fixup_low_keys(bt_path *p, const bt_key *key, int level);
int btx_insert_ptr(bt_tree *tr, bt_node *n, int slot, const bt_key *key, bt_node *child);
void btx_del_ptr(bt_tree *tr, bt_node *n, int slot);
int btx_insert_new_root(bt_tree *tr, bt_path *p, int level);

/* splits, pushes, merges (btree_split.c) */
int btx_split_node(bt_tree *tr, bt_path *p, int level);
int btx_balance_level(bt_tree *tr, bt_path *p, int level);
int btx_split_leaf(bt_tree *tr, bt_path *p, const bt_key *ins_key, uint32_t data_size,
		   int extend);
int btx_push_leaf_right(bt_tree *tr, bt_path *p, uint32_t data_size, int empty, int min_slot);
int btx_push_leaf_left(bt_tree *tr, bt_path *p, uint32_t data_size, int empty, int max_slot);

#endif /* BTREE_INT_H */
