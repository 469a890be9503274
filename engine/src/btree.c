/*
 * btree.c - the copy-on-write B-tree (see btree.h for the model).
 *
 * The structure follows fs/btrfs/ctree.c closely where it decides shapes:
 * btrfs_search_slot (split full nodes on the way down for inserts, balance
 * sparse ones for deletes), split_leaf (push to the right and left
 * neighbours first, then split at the middle, or start a new empty leaf
 * when appending), push_leaf_left/right, btrfs_del_items (push or merge a
 * leaf under 1/3 full, free empty leaves). Node balancing is simplified:
 * balance_level merges or redistributes with one sibling and restarts the
 * search.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"

int bt_key_cmp(const bt_key *a, const bt_key *b)
{
	if (a->objectid != b->objectid)
		return a->objectid < b->objectid ? -1 : 1;
	if (a->type != b->type)
		return a->type < b->type ? -1 : 1;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	return 0;
}

const bt_key *bt_node_key(const bt_node *n, int i)
{
	return n->level ? &n->ptrs[i].key : &n->items[i].key;
}

/* ------------------------------------------------------------ node memory */

/* Make room for `need` entries in n's array. Returns 0 or LAB_ENOMEM. */
static int node_reserve(bt_node *n, int need)
{
	if (need <= n->cap)
		return 0;
	/* grow by 1/8: leaves are many and long-lived, slack is memory */
	int cap = n->cap ? n->cap : 8;
	while (cap < need)
		cap += cap / 8 + 4;
	if (n->level) {
		int max = (int)BT_NODE_PTRS;
		if (cap > max)
			cap = max > need ? max : need;
		bt_ptr *p = realloc(n->ptrs, (size_t)cap * sizeof(*p));
		if (!p)
			return LAB_ENOMEM;
		n->ptrs = p;
	} else {
		bt_item *p = realloc(n->items, (size_t)cap * sizeof(*p));
		if (!p)
			return LAB_ENOMEM;
		n->items = p;
	}
	n->cap = cap;
	return 0;
}

static void node_free_mem(bt_node *n)
{
	free(n->items);
	free(n->ptrs);
	free(n);
}

/* Allocate a new block at `level` for tree tr in the running transaction
 * (models btrfs_alloc_tree_block). mrefs starts at 1: the caller links it. */
static bt_node *node_new(bt_tree *tr, int level, task *t)
{
	fs_info *fs = tr->fs;
	uint64_t bytenr;
	if (fs_tree_block_alloc(fs, tr, level, &bytenr))
		return NULL;
	bt_node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	fs_charge(fs, t, ALLOC_NS_FIND);
	n->bytenr = bytenr;
	n->generation = fs->transid;
	n->owner = tr->id;
	n->level = level;
	n->mrefs = 1;
	if (level)
		n->used = 0;
	return n;
}

/* Put a dead block on the deferred list: its memory stays readable (commit
 * roots, stale paths) until bt_release_deferred at the commit. */
static void node_defer(fs_info *fs, bt_node *n)
{
	assert(!n->dead);
	n->dead = 1;
	n->dnext = fs->deferred;
	fs->deferred = n;
	if (!fs->opts.keep_commit_roots) {
		/* nobody reads the old copy: keep only the shell (bytenr, gen) */
		free(n->items);
		free(n->ptrs);
		n->items = NULL;
		n->ptrs = NULL;
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
		node_free_mem(n);
		n = next;
	}
}

/* ---------------------------------------------------------- cost, locks */

static void visit(bt_tree *tr, task *t, const bt_node *n)
{
	fs_info *fs = tr->fs;
	if (fs->accounting_off)
		return;
	int steps = 1;
	for (int x = n->nritems; x > 1; x >>= 1)
		steps++;
	tr->nodes_visited++;
	tr->bsearch_steps += (uint64_t)steps;
	if (fs->sim)
		sim_count(fs->sim, fs->c_node_visits, 1);
	fs_charge(fs, t, BT_NS_NODE_VISIT + (uint64_t)steps * BT_NS_BSEARCH_STEP);
}

static void lock_level(bt_path *p, int level, int write)
{
	bt_node *n = p->nodes[level];
	if (!p->t || !n || p->locks[level])
		return;
	simtime_t before = p->t->clock;
	if (write)
		simlock_write(&n->lock, p->t);
	else
		simlock_read(&n->lock, p->t);
	if (p->t->clock > before && p->tree)
		p->tree->lock_waits++;
	p->locks[level] = write ? BT_LOCK_WRITE : BT_LOCK_READ;
}

static void unlock_level(bt_path *p, int level)
{
	bt_node *n = p->nodes[level];
	if (!p->t || !n || !p->locks[level]) {
		p->locks[level] = 0;
		return;
	}
	if (p->locks[level] == BT_LOCK_WRITE)
		simlock_write_release(&n->lock, p->t->clock);
	else
		simlock_read_release(&n->lock, p->t->clock);
	p->locks[level] = 0;
}

/* Lock a block that is not on the path (a sibling) for the span of a push:
 * waits like a path lock, released by tmp_unlock at the current time. */
static void tmp_lock(task *t, bt_node *n)
{
	if (t)
		simlock_write(&n->lock, t);
}

static void tmp_unlock(task *t, bt_node *n)
{
	if (t)
		simlock_write_release(&n->lock, t->clock);
}

void bt_path_init(bt_path *p, bt_tree *tr, task *t)
{
	memset(p, 0, sizeof(*p));
	p->tree = tr;
	p->t = t;
}

void bt_path_release(bt_path *p)
{
	for (int i = 0; i < BT_MAX_LEVEL; i++) {
		unlock_level(p, i);
		p->nodes[i] = NULL;
		p->slots[i] = 0;
	}
}

/* Release the locks above `level` (lock coupling), unless keep_locks. */
static void unlock_above(bt_path *p, int level)
{
	if (p->keep_locks)
		return;
	for (int i = level + 1; i < BT_MAX_LEVEL; i++)
		unlock_level(p, i);
}

/* ------------------------------------------------------------ references */

/* Queue a ref change for every regular/prealloc file extent item of leaf n
 * as referenced from tree tr (models btrfs_inc_ref / btrfs_dec_ref for a
 * leaf). */
static void leaf_data_refs(bt_tree *tr, const bt_node *n, int delta)
{
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type != BTRFS_EXTENT_DATA_KEY || it->aux == FE_INLINE ||
		    it->v[0] == 0)
			continue;
		fs_ref_op op = {
			.bytenr = it->v[0], .num_bytes = fe_disk_len(it),
			.root = tr->id, .owner = it->key.objectid,
			.offset = it->key.offset - fe_ext_off(it),
			.delta = (int8_t)delta, .is_tree = 0,
		};
		fs_ref_queue(tr->fs, &op);
	}
}

/* Queue a tree-block ref change for block n as referenced from tree tr. */
static void tree_ref(bt_tree *tr, const bt_node *n, int delta)
{
	fs_ref_op op = {
		.bytenr = n->bytenr, .num_bytes = BT_NODESIZE, .root = tr->id,
		.owner = (uint64_t)n->level, .offset = 0,
		.delta = (int8_t)delta, .is_tree = 1,
	};
	fs_ref_queue(tr->fs, &op);
}

void bt_free_block(bt_tree *tr, bt_node *n, task *t)
{
	fs_info *fs = tr->fs;
	if (n->mrefs > 1) {
		n->mrefs--;
		tree_ref(tr, n, -1);
		return;
	}
	if (n->level == 0)
		leaf_data_refs(tr, n, -1);
	fs_hooks_free(fs, tr, n->bytenr, n->level, n->owner);
	tree_ref(tr, n, -1);
	n->mrefs = 0;
	node_defer(fs, n);
	(void)t;
}

/* ------------------------------------------------------------------ COW */

/* Copy block n (linked from the path at `level`) into a new block of this
 * transaction unless it already belongs to it (models btrfs_cow_block with
 * should_cow_block and update_ref_for_cow). parent/pslot locate the pointer
 * to update (parent NULL: n is the root). Returns the block to modify. */
static bt_node *cow_block(bt_tree *tr, task *t, bt_node *n, bt_node *parent,
			  int pslot)
{
	fs_info *fs = tr->fs;
	if (n->generation == fs->transid && n->mrefs <= 1 && !n->dead)
		return n;
	bt_node *c = node_new(tr, n->level, t);
	if (!c)
		return NULL;
	int cnt = n->nritems;
	if (node_reserve(c, cnt ? cnt : 1)) {
		node_free_mem(c);
		return NULL;
	}
	if (n->level && cnt)
		memcpy(c->ptrs, n->ptrs, (size_t)cnt * sizeof(bt_ptr));
	else if (cnt)
		memcpy(c->items, n->items, (size_t)cnt * sizeof(bt_item));
	c->nritems = cnt;
	c->used = n->used;
	c->lock = n->lock; /* the same lock as far as waiters are concerned */
	fs_hooks_cow(fs, tr, n->bytenr, c->bytenr, n->level);
	if (n->mrefs > 1) {
		/* shared: the other owners keep n; c adds a ref to each child */
		if (n->level) {
			for (int i = 0; i < cnt; i++) {
				c->ptrs[i].child->mrefs++;
				tree_ref(tr, c->ptrs[i].child, +1);
			}
		} else {
			leaf_data_refs(tr, c, +1);
		}
		n->mrefs--;
		tree_ref(tr, n, -1);
	} else {
		fs_hooks_free(fs, tr, n->bytenr, n->level, n->owner);
		tree_ref(tr, n, -1);
		n->mrefs = 0;
		node_defer(fs, n);
	}
	if (parent) {
		parent->ptrs[pslot].child = c;
		parent->ptrs[pslot].gen = c->generation;
	} else {
		tr->root = c;
	}
	tr->cows++;
	if (fs->sim)
		sim_count(fs->sim, fs->c_cows, 1);
	fs_charge(fs, t, BT_NS_COW);
	return c;
}

/* COW the block at path level `level` (its parent, if any, is already
 * COWed) and put the copy in the path. */
static int cow_path_level(bt_tree *tr, bt_path *p, int level)
{
	bt_node *parent = level + 1 < BT_MAX_LEVEL ? p->nodes[level + 1] : NULL;
	bt_node *c = cow_block(tr, p->t, p->nodes[level], parent,
			       parent ? p->slots[level + 1] : 0);
	if (!c)
		return LAB_ENOMEM;
	p->nodes[level] = c;
	return 0;
}

/* COW child `slot` of a (COWed) parent outside the path (a sibling). */
static bt_node *cow_sibling(bt_tree *tr, task *t, bt_node *parent, int slot)
{
	return cow_block(tr, t, parent->ptrs[slot].child, parent, slot);
}

/* --------------------------------------------------------------- search */

/* Binary search in a block: returns 0 and the slot of an exact match, or 1
 * and the first slot with a greater key (may be nritems). */
static int bin_search(const bt_node *n, const bt_key *key, int *slot)
{
	int lo = 0, hi = n->nritems;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = bt_key_cmp(bt_node_key(n, mid), key);
		if (c < 0)
			lo = mid + 1;
		else if (c > 0)
			hi = mid;
		else {
			*slot = mid;
			return 0;
		}
	}
	*slot = lo;
	return 1;
}

static uint32_t leaf_free(const bt_node *n)
{
	return BT_LEAF_DATA_SIZE - n->used;
}

static uint32_t leaf_space_used(const bt_node *n, int start, int nr)
{
	uint32_t s = 0;
	for (int i = start; i < start + nr; i++)
		s += BT_ITEM_HEADER + n->items[i].size;
	return s;
}

static int split_node(bt_tree *tr, bt_path *p, int level);
static int balance_level(bt_tree *tr, bt_path *p, int level);
static int split_leaf(bt_tree *tr, bt_path *p, const bt_key *key, uint32_t data_size,
		      int extend);

int bt_search(bt_tree *tr, bt_path *p, const bt_key *key, int ins_len, int cow)
{
	task *t = p->t;
	p->tree = tr;
	int restarts = 0;
again:
	bt_path_release(p);
	if (++restarts > 64)
		return LAB_EENGINE;
	bt_node *n = tr->root;
	int level = n->level;
	p->nodes[level] = n;
	lock_level(p, level, cow);
	if (cow) {
		int r = cow_path_level(tr, p, level);
		if (r)
			return r;
		n = p->nodes[level];
	}
	for (;;) {
		visit(tr, t, n);
		int slot;
		int ret = bin_search(n, key, &slot);
		if (level > 0) {
			if (ret && slot > 0)
				slot--;
			p->slots[level] = slot;
			if (ins_len > 0 && n->nritems >= (int)BT_NODE_PTRS - 3) {
				int r = split_node(tr, p, level);
				if (r < 0)
					return r;
				n = p->nodes[level];
				slot = p->slots[level];
			} else if (ins_len < 0 && n->nritems < (int)BT_NODE_PTRS / 2) {
				int r = balance_level(tr, p, level);
				if (r < 0)
					return r;
				if (r > 0)
					goto again;
			}
			bt_node *child = n->ptrs[slot].child;
			p->nodes[level - 1] = child;
			p->slots[level - 1] = 0;
			lock_level(p, level - 1, cow);
			if (cow) {
				int r = cow_path_level(tr, p, level - 1);
				if (r)
					return r;
			}
			unlock_above(p, cow ? level : level - 1);
			level--;
			n = p->nodes[level];
			continue;
		}
		p->slots[0] = slot;
		if (ins_len > 0 && leaf_free(n) < (uint32_t)ins_len) {
			int r = split_leaf(tr, p, key, (uint32_t)ins_len, ret == 0);
			if (r < 0)
				return r;
		}
		return ret;
	}
}

/* ------------------------------------------------------- key fix-ups */

/* The first key of the block at `level` changed: update the pointer keys
 * up the path while the block is the first child (models fixup_low_keys). */
static void fixup_low_keys(bt_path *p, const bt_key *key, int level)
{
	for (int i = level; i < BT_MAX_LEVEL; i++) {
		bt_node *n = p->nodes[i];
		if (!n)
			break;
		n->ptrs[p->slots[i]].key = *key;
		if (p->slots[i] != 0)
			break;
	}
}

/* Insert a pointer to child at `slot` of node n. */
static int insert_ptr(bt_node *n, int slot, const bt_key *key, bt_node *child)
{
	assert(n->nritems < (int)BT_NODE_PTRS);
	int r = node_reserve(n, n->nritems + 1);
	if (r)
		return r;
	memmove(&n->ptrs[slot + 1], &n->ptrs[slot],
		(size_t)(n->nritems - slot) * sizeof(bt_ptr));
	n->ptrs[slot].key = *key;
	n->ptrs[slot].child = child;
	n->ptrs[slot].gen = child->generation;
	n->nritems++;
	n->used = (uint32_t)n->nritems * BT_KEY_PTR_SIZE;
	return 0;
}

/* Remove pointer `slot` from node n (models del_ptr; the caller deals with
 * an emptied node). */
static void del_ptr(bt_node *n, int slot)
{
	memmove(&n->ptrs[slot], &n->ptrs[slot + 1],
		(size_t)(n->nritems - slot - 1) * sizeof(bt_ptr));
	n->nritems--;
	n->used = (uint32_t)n->nritems * BT_KEY_PTR_SIZE;
}

/* Add a new root above the current one at `level` (models insert_new_root). */
static int insert_new_root(bt_tree *tr, bt_path *p, int level)
{
	if (level >= BT_MAX_LEVEL)
		return LAB_ENOSPC;
	bt_node *lower = p->nodes[level - 1];
	bt_node *c = node_new(tr, level, p->t);
	if (!c)
		return LAB_ENOMEM;
	bt_key k = lower->nritems ? *bt_node_key(lower, 0) : bt_mkkey(0, 0, 0);
	int r = insert_ptr(c, 0, &k, lower);
	if (r)
		return r;
	/* lower keeps its one reference, now held by c instead of the root */
	tr->root = c;
	p->nodes[level] = c;
	p->slots[level] = 0;
	lock_level(p, level, 1);
	return 0;
}

/* ---------------------------------------------------- node split/balance */

/* Move the first n pointers of src to the end of dst. */
static void move_ptrs_left(bt_node *dst, bt_node *src, int n)
{
	node_reserve(dst, dst->nritems + n);
	memcpy(&dst->ptrs[dst->nritems], src->ptrs, (size_t)n * sizeof(bt_ptr));
	memmove(src->ptrs, &src->ptrs[n], (size_t)(src->nritems - n) * sizeof(bt_ptr));
	dst->nritems += n;
	src->nritems -= n;
	dst->used = (uint32_t)dst->nritems * BT_KEY_PTR_SIZE;
	src->used = (uint32_t)src->nritems * BT_KEY_PTR_SIZE;
}

/* Move the last n pointers of src to the front of dst. */
static void move_ptrs_right(bt_node *dst, bt_node *src, int n)
{
	node_reserve(dst, dst->nritems + n);
	memmove(&dst->ptrs[n], dst->ptrs, (size_t)dst->nritems * sizeof(bt_ptr));
	memcpy(dst->ptrs, &src->ptrs[src->nritems - n], (size_t)n * sizeof(bt_ptr));
	dst->nritems += n;
	src->nritems -= n;
	dst->used = (uint32_t)dst->nritems * BT_KEY_PTR_SIZE;
	src->used = (uint32_t)src->nritems * BT_KEY_PTR_SIZE;
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
			tmp_lock(p->t, left);
			left = cow_sibling(tr, p->t, parent, pslot - 1);
			if (!left)
				return LAB_ENOMEM;
			int push = max - left->nritems;
			if (push > mid->nritems - 8)
				push = mid->nritems - 8;
			int orig = p->slots[level];
			move_ptrs_left(left, mid, push);
			parent->ptrs[pslot].key = mid->ptrs[0].key;
			tr->pushes++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			tmp_unlock(p->t, left);
			if (orig < push) {
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
			tmp_lock(p->t, right);
			right = cow_sibling(tr, p->t, parent, pslot + 1);
			if (!right)
				return LAB_ENOMEM;
			int push = max - right->nritems;
			if (push > max_push)
				push = max_push;
			int orig = p->slots[level];
			move_ptrs_right(right, mid, push);
			parent->ptrs[pslot + 1].key = right->ptrs[0].key;
			tr->pushes++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			tmp_unlock(p->t, right);
			if (orig >= mid->nritems) {
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
static int split_node(bt_tree *tr, bt_path *p, int level)
{
	bt_node *c = p->nodes[level];
	if (c == tr->root) {
		int r = insert_new_root(tr, p, level + 1);
		if (r)
			return r;
	} else {
		int r = push_nodes_for_insert(tr, p, level);
		if (r <= 0)
			return r;
		c = p->nodes[level];
	}
	int mid = (c->nritems + 1) / 2;
	bt_node *split = node_new(tr, level, p->t);
	if (!split)
		return LAB_ENOMEM;
	int n = c->nritems - mid;
	if (node_reserve(split, n))
		return LAB_ENOMEM;
	memcpy(split->ptrs, &c->ptrs[mid], (size_t)n * sizeof(bt_ptr));
	split->nritems = n;
	split->used = (uint32_t)n * BT_KEY_PTR_SIZE;
	c->nritems = mid;
	c->used = (uint32_t)mid * BT_KEY_PTR_SIZE;
	bt_node *parent = p->nodes[level + 1];
	int r = insert_ptr(parent, p->slots[level + 1] + 1, &split->ptrs[0].key, split);
	if (r)
		return r;
	tr->splits++;
	if (tr->fs->sim)
		sim_count(tr->fs->sim, tr->fs->c_splits, 1);
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	if (p->slots[level] >= mid) {
		unlock_level(p, level);
		p->nodes[level] = split;
		p->slots[level] -= mid;
		p->slots[level + 1]++;
		lock_level(p, level, 1);
	}
	return 0;
}

/* Free an emptied block that the caller already unlinked from its parent. */
static void free_empty_block(bt_tree *tr, task *t, bt_node *n)
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
static int balance_level(bt_tree *tr, bt_path *p, int level)
{
	bt_node *mid = p->nodes[level];
	const int max = (int)BT_NODE_PTRS;
	if (mid == tr->root) {
		if (mid->nritems != 1)
			return 0;
		/* promote the only child (the path's locks cover it) */
		bt_node *child = cow_block(tr, p->t, mid->ptrs[0].child, mid, 0);
		if (!child)
			return LAB_ENOMEM;
		mid->nritems = 0;
		mid->used = 0;
		tr->root = child; /* child's one reference moves from mid to root */
		unlock_level(p, level);
		p->nodes[level] = NULL;
		free_empty_block(tr, p->t, mid);
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
			tmp_lock(p->t, left);
			left = cow_sibling(tr, p->t, parent, pslot - 1);
			if (!left)
				return LAB_ENOMEM;
			move_ptrs_left(left, mid, mid->nritems);
			tmp_unlock(p->t, left);
			del_ptr(parent, pslot);
			unlock_level(p, level);
			p->nodes[level] = NULL;
			free_empty_block(tr, p->t, mid);
			tr->merges++;
			fs_charge(tr->fs, p->t, BT_NS_SPLIT);
			return 1;
		}
	}
	if (pslot + 1 < parent->nritems) {
		bt_node *right = parent->ptrs[pslot + 1].child;
		tmp_lock(p->t, right);
		right = cow_sibling(tr, p->t, parent, pslot + 1);
		if (!right)
			return LAB_ENOMEM;
		if (right->nritems + mid->nritems <= max) {
			move_ptrs_left(mid, right, right->nritems);
			tmp_unlock(p->t, right);
			del_ptr(parent, pslot + 1);
			free_empty_block(tr, p->t, right);
			tr->merges++;
			changed = 1;
		} else {
			int push = (right->nritems - mid->nritems) / 2;
			if (push > 0) {
				move_ptrs_left(mid, right, push);
				parent->ptrs[pslot + 1].key = right->ptrs[0].key;
				tr->pushes++;
				changed = 1;
			}
			tmp_unlock(p->t, right);
		}
		fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	}
	return changed;
}

/* ------------------------------------------------------ leaf push/split */

/* Move items [start, start+n) of src to the end of dst. */
static void move_items_left(bt_node *dst, bt_node *src, int n)
{
	node_reserve(dst, dst->nritems + n);
	uint32_t bytes = leaf_space_used(src, 0, n);
	memcpy(&dst->items[dst->nritems], src->items, (size_t)n * sizeof(bt_item));
	memmove(src->items, &src->items[n], (size_t)(src->nritems - n) * sizeof(bt_item));
	dst->nritems += n;
	src->nritems -= n;
	dst->used += bytes;
	src->used -= bytes;
}

static void move_items_right(bt_node *dst, bt_node *src, int n)
{
	node_reserve(dst, dst->nritems + n);
	uint32_t bytes = leaf_space_used(src, src->nritems - n, n);
	memmove(&dst->items[n], dst->items, (size_t)dst->nritems * sizeof(bt_item));
	memcpy(dst->items, &src->items[src->nritems - n], (size_t)n * sizeof(bt_item));
	dst->nritems += n;
	src->nritems -= n;
	dst->used += bytes;
	src->used -= bytes;
}

/*
 * Push items from the path's leaf into its right sibling (models
 * push_leaf_right / __push_leaf_right). data_size: room the caller needs;
 * empty: push everything possible (delete path); min_slot: lowest item that
 * may move. Returns 0 when items moved (or the path moved to the sibling),
 * 1 when nothing could be done, negative on error.
 */
static int push_leaf_right(bt_tree *tr, bt_path *p, uint32_t data_size, int empty,
			   int min_slot)
{
	bt_node *left = p->nodes[0], *upper = p->nodes[1];
	if (!upper)
		return 1;
	int slot = p->slots[1];
	if (slot >= upper->nritems - 1)
		return 1;
	bt_node *right = upper->ptrs[slot + 1].child;
	if (leaf_free(right) < data_size)
		return 1;
	tmp_lock(p->t, right);
	right = cow_sibling(tr, p->t, upper, slot + 1);
	if (!right)
		return LAB_ENOMEM;
	uint32_t free_space = leaf_free(right);
	int left_nritems = left->nritems;
	if (free_space < data_size || left_nritems == 0) {
		tmp_unlock(p->t, right);
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
				uint32_t space = leaf_free(left);
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
		tmp_unlock(p->t, right);
		return 1;
	}
	move_items_right(right, left, push_items);
	upper->ptrs[slot + 1].key = right->items[0].key;
	tr->pushes++;
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	tmp_unlock(p->t, right);
	if (p->slots[0] >= left->nritems) {
		p->slots[0] -= left->nritems;
		unlock_level(p, 0);
		p->nodes[0] = right;
		p->slots[1]++;
		lock_level(p, 0, 1);
	}
	return 0;
}

/* Push items from the path's leaf into its left sibling (models
 * push_leaf_left / __push_leaf_left). Same conventions as push_leaf_right;
 * max_slot bounds the items that may move. */
static int push_leaf_left(bt_tree *tr, bt_path *p, uint32_t data_size, int empty,
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
	if (leaf_free(left) < data_size)
		return 1;
	tmp_lock(p->t, left);
	left = cow_sibling(tr, p->t, upper, slot - 1);
	if (!left)
		return LAB_ENOMEM;
	uint32_t free_space = leaf_free(left);
	if (free_space < data_size) {
		tmp_unlock(p->t, left);
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
				uint32_t space = leaf_free(right);
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
		tmp_unlock(p->t, left);
		return 1;
	}
	int old_left = left->nritems;
	move_items_left(left, right, push_items);
	if (right->nritems)
		fixup_low_keys(p, &right->items[0].key, 1);
	tr->pushes++;
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	tmp_unlock(p->t, left);
	if (p->slots[0] < push_items) {
		p->slots[0] += old_left;
		unlock_level(p, 0);
		p->nodes[0] = left;
		p->slots[1]--;
		lock_level(p, 0, 1);
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
	if (node_reserve(right, n > 0 ? n : 1))
		return LAB_ENOMEM;
	uint32_t bytes = leaf_space_used(l, mid, n);
	memcpy(right->items, &l->items[mid], (size_t)n * sizeof(bt_item));
	right->nritems = n;
	right->used = bytes;
	l->nritems = mid;
	l->used -= bytes;
	int r = insert_ptr(p->nodes[1], p->slots[1] + 1, &right->items[0].key, right);
	if (r)
		return r;
	if (mid <= slot) {
		unlock_level(p, 0);
		p->nodes[0] = right;
		p->slots[0] = slot - mid;
		p->slots[1]++;
		lock_level(p, 0, 1);
	}
	return 0;
}

/*
 * Make room for data_size bytes (item + header) at the path's leaf (models
 * split_leaf): push to neighbours, else split at the middle, at the insert
 * slot, or into a new empty leaf when inserting at either end of a full
 * leaf; a second split when one is not enough.
 */
static int split_leaf(bt_tree *tr, bt_path *p, const bt_key *ins_key, uint32_t data_size,
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
			space_needed -= leaf_free(l) < space_needed ? leaf_free(l) : space_needed;
		int w = push_leaf_right(tr, p, space_needed, 0, 0);
		if (w < 0)
			return w;
		if (w) {
			space_needed = data_size;
			if (slot > 0)
				space_needed -= leaf_free(l) < space_needed ? leaf_free(l) : space_needed;
			w = push_leaf_left(tr, p, space_needed, 0, 1 << 30);
			if (w < 0)
				return w;
		}
		if (leaf_free(p->nodes[0]) >= data_size)
			return 0;
	}
	if (!p->nodes[1]) {
		int r = insert_new_root(tr, p, 1);
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
		    leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE) {
			if (slot >= nritems) {
				split = 0;
			} else {
				mid = slot;
				if (mid != nritems &&
				    leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE)
					split = 2;
			}
		}
	} else {
		if (leaf_space_used(l, 0, mid) + data_size > BT_LEAF_DATA_SIZE) {
			if (!extend && data_size && slot == 0) {
				split = 0;
			} else if ((extend || !data_size) && slot == 0) {
				mid = 1;
			} else {
				mid = slot;
				if (mid != nritems &&
				    leaf_space_used(l, mid, nritems - mid) + data_size > BT_LEAF_DATA_SIZE)
					split = 2;
			}
		}
	}
	bt_node *right = node_new(tr, 0, p->t);
	if (!right)
		return LAB_ENOMEM;
	tr->splits++;
	if (tr->fs->sim)
		sim_count(tr->fs->sim, tr->fs->c_splits, 1);
	fs_charge(tr->fs, p->t, BT_NS_SPLIT);
	if (split == 0) {
		if (node_reserve(right, 1))
			return LAB_ENOMEM;
		if (mid <= slot) {
			int r = insert_ptr(p->nodes[1], p->slots[1] + 1, ins_key, right);
			if (r)
				return r;
			unlock_level(p, 0);
			p->nodes[0] = right;
			p->slots[0] = 0;
			p->slots[1]++;
			lock_level(p, 0, 1);
		} else {
			int r = insert_ptr(p->nodes[1], p->slots[1], ins_key, right);
			if (r)
				return r;
			unlock_level(p, 0);
			p->nodes[0] = right;
			p->slots[0] = 0;
			lock_level(p, 0, 1);
			if (p->slots[1] == 0)
				fixup_low_keys(p, ins_key, 1);
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

/* ------------------------------------------------------ insert / delete */

int bt_insert(bt_tree *tr, task *t, const bt_key *key, uint32_t size,
	      const bt_item *it, bt_path *out)
{
	if (size > BT_MAX_ITEM_SIZE)
		return LAB_EINVAL;
	bt_path local, *p = out ? out : &local;
	bt_path_init(p, tr, t);
	int ret = bt_search(tr, p, key, (int)(size + BT_ITEM_HEADER), 1);
	if (ret < 0 || ret == 0) {
		if (!out || ret < 0)
			bt_path_release(p);
		return ret < 0 ? ret : 1;
	}
	bt_node *l = p->nodes[0];
	int slot = p->slots[0];
	assert(leaf_free(l) >= size + BT_ITEM_HEADER);
	int r = node_reserve(l, l->nritems + 1);
	if (r) {
		bt_path_release(p);
		return r;
	}
	uint32_t moved = l->nritems ? (uint32_t)((uint64_t)l->used * (uint64_t)(l->nritems - slot) / (uint64_t)l->nritems) : 0;
	memmove(&l->items[slot + 1], &l->items[slot],
		(size_t)(l->nritems - slot) * sizeof(bt_item));
	bt_item *ni = &l->items[slot];
	if (it)
		*ni = *it;
	else
		memset(ni, 0, sizeof(*ni));
	ni->key = *key;
	ni->size = size;
	l->nritems++;
	l->used += size + BT_ITEM_HEADER;
	if (slot == 0 && p->nodes[1])
		fixup_low_keys(p, key, 1);
	fs_charge(tr->fs, t, BT_NS_ITEM_FILL + (uint64_t)moved * BT_NS_MOVE_PER_KIB / 1024);
	if (!out)
		bt_path_release(p);
	return 0;
}

/* Unlink and free the (empty) leaf at the path (models btrfs_del_leaf);
 * cascades to a parent node emptied by it. */
static void del_leaf(bt_tree *tr, bt_path *p, bt_node *leaf)
{
	int level = 1;
	bt_node *child = leaf;
	while (level < BT_MAX_LEVEL && p->nodes[level]) {
		bt_node *parent = p->nodes[level];
		del_ptr(parent, p->slots[level]);
		free_empty_block(tr, p->t, child);
		if (parent->nritems > 0) {
			if (p->slots[level] == 0)
				fixup_low_keys(p, &parent->ptrs[0].key, level + 1);
			return;
		}
		if (parent == tr->root) {
			/* the tree became empty: the root turns into a leaf */
			parent->level = 0;
			free(parent->ptrs);
			parent->ptrs = NULL;
			parent->cap = 0;
			parent->used = 0;
			return;
		}
		child = parent;
		level++;
	}
}

int bt_del_items(bt_tree *tr, bt_path *p, int nr)
{
	bt_node *leaf = p->nodes[0];
	int slot = p->slots[0];
	if (!leaf || slot + nr > leaf->nritems || nr <= 0) {
		bt_path_release(p);
		return LAB_EINVAL;
	}
	uint32_t bytes = leaf_space_used(leaf, slot, nr);
	memmove(&leaf->items[slot], &leaf->items[slot + nr],
		(size_t)(leaf->nritems - slot - nr) * sizeof(bt_item));
	leaf->nritems -= nr;
	leaf->used -= bytes;
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL + (uint64_t)leaf->used * BT_NS_MOVE_PER_KIB / 2048);
	if (leaf->nritems == 0) {
		if (leaf != tr->root)
			del_leaf(tr, p, leaf);
		bt_path_release(p);
		return 0;
	}
	if (slot == 0 && p->nodes[1])
		fixup_low_keys(p, &leaf->items[0].key, 1);
	if (leaf != tr->root && leaf->used < BT_LEAF_DATA_SIZE / 3) {
		int pslot = p->slots[1];
		int w = push_leaf_left(tr, p, 1, 1, 1 << 30);
		if (w < 0) {
			bt_path_release(p);
			return w;
		}
		if (p->nodes[0] == leaf && leaf->nritems) {
			w = push_leaf_right(tr, p, 1, 1, 0);
			if (w < 0) {
				bt_path_release(p);
				return w;
			}
		}
		if (leaf->nritems == 0) {
			/* everything moved out: point the path back at the leaf */
			p->nodes[0] = leaf;
			p->slots[1] = pslot;
			del_leaf(tr, p, leaf);
			tr->merges++;
		}
	}
	bt_path_release(p);
	return 0;
}

int bt_delete(bt_tree *tr, task *t, const bt_key *key)
{
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, key, -1, 1);
	if (ret) {
		bt_path_release(&p);
		return ret;
	}
	return bt_del_items(tr, &p, 1);
}

int bt_extend_item(bt_tree *tr, bt_path *p, uint32_t new_size)
{
	bt_node *l = p->nodes[0];
	bt_item *it = &l->items[p->slots[0]];
	if (new_size < it->size || new_size > BT_MAX_ITEM_SIZE)
		return LAB_EINVAL;
	uint32_t grow = new_size - it->size;
	if (leaf_free(l) < grow)
		return LAB_ENOSPC;
	it->size = new_size;
	l->used += grow;
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
	return 0;
}

void bt_truncate_item(bt_tree *tr, bt_path *p, uint32_t new_size)
{
	bt_node *l = p->nodes[0];
	bt_item *it = &l->items[p->slots[0]];
	assert(new_size <= it->size);
	l->used -= it->size - new_size;
	it->size = new_size;
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
}

void bt_set_item_key(bt_tree *tr, bt_path *p, const bt_key *key)
{
	bt_node *l = p->nodes[0];
	int slot = p->slots[0];
	assert(slot == 0 || bt_key_cmp(&l->items[slot - 1].key, key) < 0);
	assert(slot + 1 >= l->nritems || bt_key_cmp(&l->items[slot + 1].key, key) > 0);
	l->items[slot].key = *key;
	if (slot == 0 && p->nodes[1])
		fixup_low_keys(p, key, 1);
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
}

bt_item *bt_path_item(const bt_path *p)
{
	bt_node *l = p->nodes[0];
	if (!l || p->slots[0] >= l->nritems || p->slots[0] < 0)
		return NULL;
	return &l->items[p->slots[0]];
}

void bt_mark_dirty(bt_tree *tr, bt_path *p)
{
	assert(p->nodes[0] && p->nodes[0]->generation == tr->fs->transid);
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
}

/* ------------------------------------------------------------ iteration */

int bt_next_leaf(bt_tree *tr, bt_path *p)
{
	int level = 1;
	while (level < BT_MAX_LEVEL && p->nodes[level] &&
	       p->slots[level] + 1 >= p->nodes[level]->nritems)
		level++;
	if (level >= BT_MAX_LEVEL || !p->nodes[level])
		return 1;
	p->slots[level]++;
	lock_level(p, level, 0);
	while (level > 0) {
		bt_node *child = p->nodes[level]->ptrs[p->slots[level]].child;
		level--;
		unlock_level(p, level);
		p->nodes[level] = child;
		p->slots[level] = 0;
		lock_level(p, level, 0);
		visit(tr, p->t, child);
		unlock_level(p, level + 1);
	}
	return p->nodes[0]->nritems ? 0 : 1;
}

int bt_prev_leaf(bt_tree *tr, bt_path *p)
{
	int level = 1;
	while (level < BT_MAX_LEVEL && p->nodes[level] && p->slots[level] == 0)
		level++;
	if (level >= BT_MAX_LEVEL || !p->nodes[level])
		return 1;
	p->slots[level]--;
	lock_level(p, level, 0);
	while (level > 0) {
		bt_node *child = p->nodes[level]->ptrs[p->slots[level]].child;
		level--;
		unlock_level(p, level);
		p->nodes[level] = child;
		p->slots[level] = child->nritems ? child->nritems - 1 : 0;
		lock_level(p, level, 0);
		visit(tr, p->t, child);
		unlock_level(p, level + 1);
	}
	return p->nodes[0]->nritems ? 0 : 1;
}

int bt_next_item(bt_tree *tr, bt_path *p)
{
	if (!p->nodes[0])
		return 1;
	p->slots[0]++;
	if (p->slots[0] < p->nodes[0]->nritems)
		return 0;
	return bt_next_leaf(tr, p);
}

/* ---------------------------------------------------- tree life cycle */

int bt_tree_init(fs_info *fs, bt_tree *tr, uint64_t id, task *t)
{
	memset(tr, 0, sizeof(*tr));
	tr->fs = fs;
	tr->id = id;
	bt_node *n = node_new(tr, 0, t);
	if (!n)
		return LAB_ENOMEM;
	tr->root = n;
	tr->commit_root = NULL;
	return 0;
}

/* Drop one in-memory reference; free memory (recursively) at zero. */
static void node_put_mem(bt_node *n)
{
	if (--n->mrefs > 0)
		return;
	if (n->level)
		for (int i = 0; i < n->nritems; i++)
			node_put_mem(n->ptrs[i].child);
	node_free_mem(n);
}

void bt_tree_destroy(bt_tree *tr)
{
	if (tr->root && !tr->root->dead)
		node_put_mem(tr->root);
	tr->root = NULL;
	tr->commit_root = NULL;
}

int bt_tree_height(const bt_tree *tr)
{
	return tr->root ? tr->root->level + 1 : 0;
}

static void count_rec(bt_node *n, uint32_t epoch, uint64_t *leaves, uint64_t *nodes,
		      uint64_t *items)
{
	if (n->mark == epoch)
		return;
	n->mark = epoch;
	if (n->level == 0) {
		(*leaves)++;
		*items += (uint64_t)n->nritems;
		return;
	}
	(*nodes)++;
	for (int i = 0; i < n->nritems; i++)
		count_rec(n->ptrs[i].child, epoch, leaves, nodes, items);
}

void bt_count_blocks(const bt_tree *tr, uint64_t *leaves, uint64_t *nodes,
		     uint64_t *items)
{
	uint64_t l = 0, n = 0, it = 0;
	fs_info *fs = tr->fs;
	uint32_t epoch = ++fs->check_epoch;
	if (tr->root)
		count_rec(tr->root, epoch, &l, &n, &it);
	if (leaves)
		*leaves = l;
	if (nodes)
		*nodes = n;
	if (items)
		*items = it;
}

int bt_copy_root(bt_tree *src, bt_tree *dst, task *t)
{
	fs_info *fs = src->fs;
	if (dst->root) {
		/* drop the empty leaf bt_tree_init made */
		bt_node *old = dst->root;
		if (old->nritems || old->level)
			return LAB_EINVAL;
		dst->root = NULL;
		free_empty_block(dst, t, old);
	}
	bt_node *s = src->root;
	bt_node *c = node_new(dst, s->level, t);
	if (!c)
		return LAB_ENOMEM;
	if (node_reserve(c, s->nritems ? s->nritems : 1))
		return LAB_ENOMEM;
	if (s->level && s->nritems) {
		memcpy(c->ptrs, s->ptrs, (size_t)s->nritems * sizeof(bt_ptr));
		for (int i = 0; i < s->nritems; i++) {
			c->ptrs[i].child->mrefs++;
			tree_ref(dst, c->ptrs[i].child, +1);
		}
	} else if (s->nritems) {
		memcpy(c->items, s->items, (size_t)s->nritems * sizeof(bt_item));
	}
	c->nritems = s->nritems;
	c->used = s->used;
	if (!s->level)
		leaf_data_refs(dst, c, +1);
	dst->root = c;
	fs_charge(fs, t, BT_NS_COW);
	return 0;
}

/* Post-order free of the blocks reachable only through this tree. */
static void free_rec(bt_tree *tr, bt_node *n, task *t)
{
	if (n->mrefs > 1) {
		bt_free_block(tr, n, t);
		return;
	}
	if (n->level)
		for (int i = 0; i < n->nritems; i++)
			free_rec(tr, n->ptrs[i].child, t);
	bt_free_block(tr, n, t);
}

void bt_free_tree(bt_tree *tr, task *t)
{
	if (!tr->root)
		return;
	free_rec(tr, tr->root, t);
	tr->root = NULL;
}

/* ------------------------------------------------------------- snapshot */

static void key_json(strbuf *sb, const char *k, const bt_key *key)
{
	js_key(sb, k);
	js_arr(sb);
	js_num(sb, (double)key->objectid);
	js_int(sb, key->type);
	js_num(sb, (double)key->offset);
	js_arr_end(sb);
}

static void node_json(const bt_tree *tr, strbuf *sb, const bt_node *n)
{
	js_obj(sb);
	js_knum(sb, "bytenr", (double)n->bytenr);
	js_knum(sb, "gen", (double)n->generation);
	js_knum(sb, "owner", (double)n->owner);
	js_kint(sb, "level", n->level);
	js_kint(sb, "nritems", n->nritems);
	double fill = n->level ? (double)n->nritems / BT_NODE_PTRS
			       : (double)n->used / BT_LEAF_DATA_SIZE;
	js_knum(sb, "fill", (double)(int)(fill * 1000.0 + 0.5) / 1000.0);
	if (n->nritems) {
		key_json(sb, "first", bt_node_key(n, 0));
		key_json(sb, "last", bt_node_key(n, n->nritems - 1));
	}
	simtime_t now = tr->fs->sim ? sim_now(tr->fs->sim) : 0;
	const char *lk = n->lock.write_until > now ? "write"
			 : n->lock.read_until > now ? "read" : "none";
	js_kstr(sb, "locked", lk);
	js_kbool(sb, "shared", n->mrefs > 1);
	js_obj_end(sb);
}

void bt_snapshot_json(const bt_tree *tr, strbuf *sb, int max_nodes)
{
	js_obj(sb);
	js_knum(sb, "id", (double)tr->id);
	int height = bt_tree_height(tr);
	js_kint(sb, "height", height);
	/* per-level summaries (complete) and a breadth-first window of nodes */
	uint64_t cnt[BT_MAX_LEVEL] = {0};
	double fill[BT_MAX_LEVEL] = {0};
	size_t qcap = 64, qn = 0;
	const bt_node **q = malloc(qcap * sizeof(*q));
	if (q && tr->root)
		q[qn++] = tr->root;
	js_key(sb, "nodes");
	js_arr(sb);
	int shown = 0;
	uint64_t shown_lvl[BT_MAX_LEVEL] = {0};
	for (size_t i = 0; q && i < qn; i++) {
		const bt_node *n = q[i];
		cnt[n->level]++;
		fill[n->level] += n->level ? (double)n->nritems / BT_NODE_PTRS
					   : (double)n->used / BT_LEAF_DATA_SIZE;
		if (shown < max_nodes) {
			node_json(tr, sb, n);
			shown++;
			shown_lvl[n->level]++;
		}
		if (n->level) {
			if (qn + (size_t)n->nritems > qcap) {
				while (qn + (size_t)n->nritems > qcap)
					qcap *= 2;
				const bt_node **nq = realloc(q, qcap * sizeof(*q));
				if (!nq) {
					free(q);
					q = NULL;
					break;
				}
				q = nq;
			}
			for (int j = 0; j < n->nritems; j++)
				q[qn++] = n->ptrs[j].child;
		}
	}
	free(q);
	js_arr_end(sb);
	js_key(sb, "levels");
	js_arr(sb);
	for (int l = height - 1; l >= 0; l--) {
		js_obj(sb);
		js_kint(sb, "level", l);
		js_knum(sb, "count", (double)cnt[l]);
		js_knum(sb, "shown", (double)shown_lvl[l]);
		double af = cnt[l] ? fill[l] / (double)cnt[l] : 0;
		js_knum(sb, "avg_fill", (double)(int)(af * 1000.0 + 0.5) / 1000.0);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_knum(sb, "nodes_visited", (double)tr->nodes_visited);
	js_knum(sb, "cows", (double)tr->cows);
	js_knum(sb, "splits", (double)tr->splits);
	js_obj_end(sb);
}
