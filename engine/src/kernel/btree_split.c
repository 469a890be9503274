/*
 * btree_split.c - making room and giving it back: node splits and pushes
 * on the way down an insert, leaf pushes into neighbours and leaf splits
 * (models split_leaf, push_leaf_left/right, split_node,
 * push_nodes_for_insert), and node balancing on the way down a delete (a
 * simplified balance_level). See btree.h for the model.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "btree_int.h"
#include "costs.h"
#include "fs.h"
#include "lab.h"

/* ------------------------------------------------------------ nodes */

/* Record a move of n entries src -> dst (dir: 0 to the end of dst, 1 to
 * its front) and both blocks' contents after it. */
static void rec_move(bt_tree *tr, task *t, const bt_node *src, const bt_node *dst,
		     int n, int dir)
{
	if (!btx_rec(tr))
		return;
	SIM_REC(tr->fs->sim, TK_MOVE, t, btx_rec_tree(tr), (int64_t)src->bytenr,
		(int64_t)dst->bytenr, n, dir);
	btx_rec_blk(tr, t, src);
	btx_rec_blk(tr, t, dst);
}

/* Move the first n pointers of src to the end of dst. */
static void move_ptrs_left(bt_tree *tr, task *t, bt_node *dst, bt_node *src, int n)
{
	btx_node_reserve(dst, dst->nritems + n);
	memcpy(&dst->ptrs[dst->nritems], src->ptrs, (size_t)n * sizeof(bt_ptr));
	memmove(src->ptrs, &src->ptrs[n], (size_t)(src->nritems - n) * sizeof(bt_ptr));
	dst->nritems += n;
	src->nritems -= n;
	dst->used = (uint32_t)dst->nritems * BT_KEY_PTR_SIZE;
	src->used = (uint32_t)src->nritems * BT_KEY_PTR_SIZE;
	rec_move(tr, t, src, dst, n, 0);
}

/* Move the last n pointers of src to the front of dst. */
static void move_ptrs_right(bt_tree *tr, task *t, bt_node *dst, bt_node *src, int n)
{
	btx_node_reserve(dst, dst->nritems + n);
	memmove(&dst->ptrs[n], dst->ptrs, (size_t)dst->nritems * sizeof(bt_ptr));
	memcpy(dst->ptrs, &src->ptrs[src->nritems - n], (size_t)n * sizeof(bt_ptr));
	dst->nritems += n;
	src->nritems -= n;
	dst->used = (uint32_t)dst->nritems * BT_KEY_PTR_SIZE;
	src->used = (uint32_t)src->nritems * BT_KEY_PTR_SIZE;
	rec_move(tr, t, src, dst, n, 1);
}

/* Before splitting node `level`, try to make room by pushing pointers into
 * its left sibling (all but 8, as push_node_left) or half into its right
 * one (balance_node_right). Models push_nodes_for_insert. Returns 0 when
 * room was made, 1 otherwise. */
static int push_nodes_for_insert(bt_tree *tr, bt_path *p, int level)
{
	bt_node *mid = p->nodes[level], *parent = p->nodes[level + 1];
	int pslot = p->slots[level + 1];
	const int max = (int)BT_NODE_PTRS;
	if (pslot > 0) {
		bt_node *left = parent->ptrs[pslot - 1].child;
		if (left->nritems < max - 1 && mid->nritems > 8) {
			btx_tmp_lock(tr, p->t, left);
			left = btx_cow_sibling(tr, p->t, parent, pslot - 1);
			if (!left)
				return LAB_ENOMEM;
			int push = max - left->nritems;
			if (push > mid->nritems - 8)
				push = mid->nritems - 8;
			int orig = p->slots[level];
			move_ptrs_left(tr, p->t, left, mid, push);
			parent->ptrs[pslot].key = mid->ptrs[0].key;
			tr->pushes++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			btx_tmp_unlock(tr, p->t, left);
			if (orig < push) {
				btx_rec_lock_moves(tr, p, level, left);
				p->nodes[level] = left;
				p->slots[level] = left->nritems - push + orig;
				p->slots[level + 1]--;
			} else {
				p->slots[level] = orig - push;
			}
			if (p->nodes[level]->nritems < max - 3)
				return 0;
			mid = p->nodes[level];
			pslot = p->slots[level + 1];
		}
	}
	if (pslot + 1 < parent->nritems) {
		bt_node *right = parent->ptrs[pslot + 1].child;
		int max_push = mid->nritems / 2 + 1;
		if (right->nritems < max - 1 && max_push < mid->nritems) {
			btx_tmp_lock(tr, p->t, right);
			right = btx_cow_sibling(tr, p->t, parent, pslot + 1);
			if (!right)
				return LAB_ENOMEM;
			int push = max - right->nritems;
			if (push > max_push)
				push = max_push;
			int orig = p->slots[level];
			move_ptrs_right(tr, p->t, right, mid, push);
			parent->ptrs[pslot + 1].key = right->ptrs[0].key;
			tr->pushes++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			btx_tmp_unlock(tr, p->t, right);
			if (orig >= mid->nritems) {
				btx_rec_lock_moves(tr, p, level, right);
				p->nodes[level] = right;
				p->slots[level] = orig - mid->nritems;
				p->slots[level + 1]++;
			}
			if (p->nodes[level]->nritems < max - 3)
				return 0;
		}
	}
	return 1;
}

/* Split a full internal node at path level `level` (models split_node). */
int btx_split_node(bt_tree *tr, bt_path *p, int level)
{
	bt_node *c = p->nodes[level];
	if (c == tr->root) {
		int r = btx_insert_new_root(tr, p, level + 1);
		if (r)
			return r;
	} else {
		int r = push_nodes_for_insert(tr, p, level);
		if (r <= 0)
			return r;
		c = p->nodes[level];
	}
	int mid = (c->nritems + 1) / 2;
	bt_node *split = btx_node_new(tr, level, p->t);
	if (!split)
		return LAB_ENOMEM;
	int n = c->nritems - mid;
	if (btx_node_reserve(split, n))
		return LAB_ENOMEM;
	memcpy(split->ptrs, &c->ptrs[mid], (size_t)n * sizeof(bt_ptr));
	split->nritems = n;
	split->used = (uint32_t)n * BT_KEY_PTR_SIZE;
	c->nritems = mid;
	c->used = (uint32_t)mid * BT_KEY_PTR_SIZE;
	if (btx_rec(tr))
		SIM_REC(tr->fs->sim, TK_SPLIT, p->t, btx_rec_tree(tr), (int64_t)c->bytenr,
			(int64_t)split->bytenr, level);
	rec_move(tr, p->t, c, split, n, 1);
	bt_node *parent = p->nodes[level + 1];
	int r = btx_insert_ptr(tr, parent, p->slots[level + 1] + 1, &split->ptrs[0].key, split);
	if (r)
		return r;
	tr->splits++;
	if (tr->fs->sim)
		sim_count(tr->fs->sim, tr->fs->c_splits, 1);
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	if (p->slots[level] >= mid) {
		btx_unlock_level(p, level);
		p->nodes[level] = split;
		p->slots[level] -= mid;
		p->slots[level + 1]++;
		btx_lock_level(p, level, 1);
	}
	return 0;
}

/* Free an emptied block that the caller already unlinked from its parent. */
void btx_free_empty_block(bt_tree *tr, task *t, bt_node *n)
{
	assert(n->nritems == 0);
	bt_free_block(tr, n, t);
}

/*
 * A node at `level` is under half full on a delete path: merge it into or
 * refill it from a sibling (a simplified balance_level), or shrink the
 * tree when the root has one child. Returns 1 if anything changed (the
 * caller restarts its search), 0 if not, or a negative error.
 */
int btx_balance_level(bt_tree *tr, bt_path *p, int level)
{
	bt_node *mid = p->nodes[level];
	const int max = (int)BT_NODE_PTRS;
	if (mid == tr->root) {
		if (mid->nritems != 1)
			return 0;
		/* promote the only child (the path's locks cover it) */
		bt_node *child = btx_cow_block(tr, p->t, mid->ptrs[0].child, mid, 0);
		if (!child)
			return LAB_ENOMEM;
		mid->nritems = 0;
		mid->used = 0;
		tr->root = child; /* child's one reference moves from mid to root */
		btx_rec_root(tr, p->t);
		btx_unlock_level(p, level);
		p->nodes[level] = NULL;
		btx_free_empty_block(tr, p->t, mid);
		tr->merges++;
		return 1;
	}
	if (mid->nritems > max / 4)
		return 0;
	bt_node *parent = p->nodes[level + 1];
	int pslot = p->slots[level + 1];
	int changed = 0;
	if (pslot > 0) {
		bt_node *left = parent->ptrs[pslot - 1].child;
		if (left->nritems + mid->nritems <= max) {
			btx_tmp_lock(tr, p->t, left);
			left = btx_cow_sibling(tr, p->t, parent, pslot - 1);
			if (!left)
				return LAB_ENOMEM;
			move_ptrs_left(tr, p->t, left, mid, mid->nritems);
			btx_tmp_unlock(tr, p->t, left);
			btx_del_ptr(tr, parent, pslot);
			btx_unlock_level(p, level);
			p->nodes[level] = NULL;
			btx_free_empty_block(tr, p->t, mid);
			tr->merges++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			return 1;
		}
	}
	if (pslot + 1 < parent->nritems) {
		bt_node *right = parent->ptrs[pslot + 1].child;
		btx_tmp_lock(tr, p->t, right);
		right = btx_cow_sibling(tr, p->t, parent, pslot + 1);
		if (!right)
			return LAB_ENOMEM;
		if (right->nritems + mid->nritems <= max) {
			move_ptrs_left(tr, p->t, mid, right, right->nritems);
			btx_tmp_unlock(tr, p->t, right);
			btx_del_ptr(tr, parent, pslot + 1);
			btx_free_empty_block(tr, p->t, right);
			tr->merges++;
			changed = 1;
		} else {
			int push = (right->nritems - mid->nritems) / 2;
			if (push > 0) {
				move_ptrs_left(tr, p->t, mid, right, push);
				parent->ptrs[pslot + 1].key = right->ptrs[0].key;
				tr->pushes++;
				changed = 1;
			}
			btx_tmp_unlock(tr, p->t, right);
		}
		fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	}
	return changed;
}

/* ------------------------------------------------------ leaf push/split */

/* Move items [start, start+n) of src to the end of dst. */
static void move_items_left(bt_tree *tr, task *t, bt_node *dst, bt_node *src, int n)
{
	btx_node_reserve(dst, dst->nritems + n);
	uint32_t bytes = btx_leaf_space_used(src, 0, n);
	memcpy(&dst->items[dst->nritems], src->items, (size_t)n * sizeof(bt_item));
	memmove(src->items, &src->items[n], (size_t)(src->nritems - n) * sizeof(bt_item));
	dst->nritems += n;
	src->nritems -= n;
	dst->used += bytes;
	src->used -= bytes;
	rec_move(tr, t, src, dst, n, 0);
}

static void move_items_right(bt_tree *tr, task *t, bt_node *dst, bt_node *src, int n)
{
	btx_node_reserve(dst, dst->nritems + n);
	uint32_t bytes = btx_leaf_space_used(src, src->nritems - n, n);
	memmove(&dst->items[n], dst->items, (size_t)dst->nritems * sizeof(bt_item));
	memcpy(dst->items, &src->items[src->nritems - n], (size_t)n * sizeof(bt_item));
	dst->nritems += n;
	src->nritems -= n;
	dst->used += bytes;
	src->used -= bytes;
	rec_move(tr, t, src, dst, n, 1);
}

/*
 * Push items from the path's leaf into its right sibling (models
 * push_leaf_right / __push_leaf_right). data_size: room the caller needs;
 * empty: push everything possible (delete path); min_slot: lowest item that
 * may move. Returns 0 when items moved (or the path moved to the sibling),
 * 1 when nothing could be done, negative on error.
 */
int btx_push_leaf_right(bt_tree *tr, bt_path *p, uint32_t data_size, int empty,
			   int min_slot)
{
	bt_node *left = p->nodes[0], *upper = p->nodes[1];
	if (!upper)
		return 1;
	int slot = p->slots[1];
	if (slot >= upper->nritems - 1)
		return 1;
	bt_node *right = upper->ptrs[slot + 1].child;
	if (btx_leaf_free(right) < data_size)
		return 1;
	btx_tmp_lock(tr, p->t, right);
	right = btx_cow_sibling(tr, p->t, upper, slot + 1);
	if (!right)
		return LAB_ENOMEM;
	uint32_t free_space = btx_leaf_free(right);
	int left_nritems = left->nritems;
	if (free_space < data_size || left_nritems == 0) {
		btx_tmp_unlock(tr, p->t, right);
		return 1;
	}
	/* Newer kernels (and not btrfs-progs 6.2, our oracle) move an insert at
	 * the very end of a full leaf straight into a right sibling with room;
	 * the 5.x code the lab models pushes items instead, as below. */
	int nr = empty ? 0 : (min_slot > 1 ? min_slot : 1);
	uint32_t push_space = 0;
	int push_items = 0;
	if (p->slots[0] >= left_nritems)
		push_space += data_size;
	for (int i = left_nritems - 1; i >= nr; i--) {
		if (!empty && push_items > 0) {
			if (p->slots[0] > i)
				break;
			if (p->slots[0] == i) {
				uint32_t space = btx_leaf_free(left);
				if (space + push_space * 2 > free_space)
					break;
			}
		}
		if (p->slots[0] == i)
			push_space += data_size;
		uint32_t sz = left->items[i].size + BT_ITEM_HEADER;
		if (sz + push_space > free_space)
			break;
		push_items++;
		push_space += sz;
		if (i == 0)
			break;
	}
	if (push_items == 0) {
		btx_tmp_unlock(tr, p->t, right);
		return 1;
	}
	move_items_right(tr, p->t, right, left, push_items);
	upper->ptrs[slot + 1].key = right->items[0].key;
	tr->pushes++;
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	btx_tmp_unlock(tr, p->t, right);
	if (p->slots[0] >= left->nritems) {
		p->slots[0] -= left->nritems;
		btx_unlock_level(p, 0);
		p->nodes[0] = right;
		p->slots[1]++;
		btx_lock_level(p, 0, 1);
	}
	return 0;
}

/* Push items from the path's leaf into its left sibling (models
 * push_leaf_left / __push_leaf_left). Same conventions as push_leaf_right;
 * max_slot bounds the items that may move. */
int btx_push_leaf_left(bt_tree *tr, bt_path *p, uint32_t data_size, int empty,
			  int max_slot)
{
	bt_node *right = p->nodes[0], *upper = p->nodes[1];
	if (!upper)
		return 1;
	int slot = p->slots[1];
	if (slot == 0)
		return 1;
	int right_nritems = right->nritems;
	if (right_nritems == 0)
		return 1;
	bt_node *left = upper->ptrs[slot - 1].child;
	if (btx_leaf_free(left) < data_size)
		return 1;
	btx_tmp_lock(tr, p->t, left);
	left = btx_cow_sibling(tr, p->t, upper, slot - 1);
	if (!left)
		return LAB_ENOMEM;
	uint32_t free_space = btx_leaf_free(left);
	if (free_space < data_size) {
		btx_tmp_unlock(tr, p->t, left);
		return 1;
	}
	int nr = empty ? right_nritems : right_nritems - 1;
	if (nr > max_slot)
		nr = max_slot;
	uint32_t push_space = 0;
	int push_items = 0;
	for (int i = 0; i < nr; i++) {
		if (!empty && push_items > 0) {
			if (p->slots[0] < i)
				break;
			if (p->slots[0] == i) {
				uint32_t space = btx_leaf_free(right);
				if (space + push_space * 2 > free_space)
					break;
			}
		}
		if (p->slots[0] == i)
			push_space += data_size;
		uint32_t sz = right->items[i].size + BT_ITEM_HEADER;
		if (sz + push_space > free_space)
			break;
		push_items++;
		push_space += sz;
	}
	if (push_items == 0) {
		btx_tmp_unlock(tr, p->t, left);
		return 1;
	}
	int old_left = left->nritems;
	move_items_left(tr, p->t, left, right, push_items);
	if (right->nritems)
		btx_fixup_low_keys(p, &right->items[0].key, 1);
	tr->pushes++;
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	btx_tmp_unlock(tr, p->t, left);
	if (p->slots[0] < push_items) {
		p->slots[0] += old_left;
		btx_unlock_level(p, 0);
		p->nodes[0] = left;
		p->slots[1]--;
		btx_lock_level(p, 0, 1);
	} else {
		p->slots[0] -= push_items;
	}
	return 0;
}

/* Move items [mid, nritems) of the path's leaf into a new right leaf and
 * link it; the path follows its slot (models copy_for_split). */
static int copy_for_split(bt_tree *tr, bt_path *p, bt_node *l, bt_node *right,
			  int slot, int mid)
{
	int n = l->nritems - mid;
	if (btx_node_reserve(right, n > 0 ? n : 1))
		return LAB_ENOMEM;
	uint32_t bytes = btx_leaf_space_used(l, mid, n);
	memcpy(right->items, &l->items[mid], (size_t)n * sizeof(bt_item));
	right->nritems = n;
	right->used = bytes;
	l->nritems = mid;
	l->used -= bytes;
	rec_move(tr, p->t, l, right, n, 1);
	int r = btx_insert_ptr(tr, p->nodes[1], p->slots[1] + 1, &right->items[0].key, right);
	if (r)
		return r;
	if (mid <= slot) {
		btx_unlock_level(p, 0);
		p->nodes[0] = right;
		p->slots[0] = slot - mid;
		p->slots[1]++;
		btx_lock_level(p, 0, 1);
	}
	return 0;
}

/*
 * Make room for data_size bytes (item + header) at the path's leaf (models
 * split_leaf): push to neighbours, else split at the middle, at the insert
 * slot, or into a new empty leaf when inserting at either end of a full
 * leaf; a second split when one is not enough.
 */
int btx_split_leaf(bt_tree *tr, bt_path *p, const bt_key *ins_key, uint32_t data_size,
		      int extend)
{
	bt_node *l = p->nodes[0];
	int slot = p->slots[0];
	if (extend && data_size + l->items[slot].size + BT_ITEM_HEADER > BT_LEAF_DATA_SIZE)
		return LAB_EINVAL;
	if (data_size && p->nodes[1] &&
	    !(tr->progs_split && ins_key->type == 84 /* BTRFS_DIR_ITEM_KEY */)) {
		uint32_t space_needed = data_size;
		if (slot < l->nritems)
			space_needed -= btx_leaf_free(l) < space_needed ? btx_leaf_free(l) : space_needed;
		int w = btx_push_leaf_right(tr, p, space_needed, 0, 0);
		if (w < 0)
			return w;
		if (w) {
			space_needed = data_size;
			if (slot > 0)
				space_needed -= btx_leaf_free(l) < space_needed ? btx_leaf_free(l) : space_needed;
			w = btx_push_leaf_left(tr, p, space_needed, 0, 1 << 30);
			if (w < 0)
				return w;
		}
		if (btx_leaf_free(p->nodes[0]) >= data_size)
			return 0;
	}
	if (!p->nodes[1]) {
		int r = btx_insert_new_root(tr, p, 1);
		if (r)
			return r;
	}
	int num_doubles = 0;
again:;
	int split = 1;
	l = p->nodes[0];
	slot = p->slots[0];
	int nritems = l->nritems;
	int mid = (nritems + 1) / 2;
	if (mid <= slot) {
		if (nritems == 1 ||
		    btx_leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE) {
			if (slot >= nritems) {
				split = 0;
			} else {
				mid = slot;
				if (mid != nritems &&
				    btx_leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE)
					split = 2;
			}
		}
	} else {
		if (btx_leaf_space_used(l, 0, mid) + data_size > BT_LEAF_DATA_SIZE) {
			if (!extend && data_size && slot == 0) {
				split = 0;
			} else if ((extend || !data_size) && slot == 0) {
				mid = 1;
			} else {
				mid = slot;
				if (mid != nritems &&
				    btx_leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE)
					split = 2;
			}
		}
	}
	bt_node *right = btx_node_new(tr, 0, p->t);
	if (!right)
		return LAB_ENOMEM;
	if (btx_rec(tr))
		SIM_REC(tr->fs->sim, TK_SPLIT, p->t, btx_rec_tree(tr), (int64_t)l->bytenr,
			(int64_t)right->bytenr, 0);
	tr->splits++;
	if (tr->fs->sim)
		sim_count(tr->fs->sim, tr->fs->c_splits, 1);
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	if (split == 0) {
		if (btx_node_reserve(right, 1))
			return LAB_ENOMEM;
		if (mid <= slot) {
			int r = btx_insert_ptr(tr, p->nodes[1], p->slots[1] + 1, ins_key, right);
			if (r)
				return r;
			btx_unlock_level(p, 0);
			p->nodes[0] = right;
			p->slots[0] = 0;
			p->slots[1]++;
			btx_lock_level(p, 0, 1);
		} else {
			int r = btx_insert_ptr(tr, p->nodes[1], p->slots[1], ins_key, right);
			if (r)
				return r;
			btx_unlock_level(p, 0);
			p->nodes[0] = right;
			p->slots[0] = 0;
			btx_lock_level(p, 0, 1);
			if (p->slots[1] == 0)
				btx_fixup_low_keys(p, ins_key, 1);
		}
		return 0;
	}
	int r = copy_for_split(tr, p, l, right, slot, mid);
	if (r)
		return r;
	if (split == 2) {
		assert(num_doubles == 0);
		num_doubles++;
		goto again;
	}
	return 0;
}

