/*
 * btree.c - the copy-on-write B-tree (see btree.h for the model).
 *
 * This file: keys, recording, locks, COW, search, insert/delete, iteration.
 * btree_mem.c: block memory and allocation.
 * btree_split.c: leaf and node splits, pushes and merges.
 * btree_walk.c: tree life cycle, whole-tree walks, snapshots for the UI.
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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "btree_int.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

/* ------------------------------------------------------------ recording */

int64_t btx_rec_tree(bt_tree *tr)
{
	if (!tr->rec_h) {
		sim *s = tr->fs->sim;
		tr->rec_h = sim_rec_handle(s);
		SIM_REC(s, TK_TREE, NULL, tr->rec_h, tr->fs->rec_fs, (int64_t)tr->id);
	}
	return tr->rec_h;
}

void btx_rec_blk(bt_tree *tr, const task *t, const bt_node *n)
{
	if (!btx_rec(tr))
		return;
	bt_key z = bt_mkkey(0, 0, 0);
	const bt_key *k0 = n->nritems ? bt_node_key(n, 0) : &z;
	const bt_key *k1 = n->nritems ? bt_node_key(n, n->nritems - 1) : &z;
	SIM_REC(tr->fs->sim, TK_BLK, t, btx_rec_tree(tr), (int64_t)n->bytenr, n->level,
		n->nritems, n->used, (int64_t)n->generation, (int64_t)k0->objectid, k0->type,
		(int64_t)k0->offset, (int64_t)k1->objectid, k1->type, (int64_t)k1->offset);
}

void btx_rec_root(bt_tree *tr, const task *t)
{
	if (btx_rec(tr) && tr->root)
		SIM_REC(tr->fs->sim, TK_ROOT, t, btx_rec_tree(tr), (int64_t)tr->root->bytenr);
}

void btx_rec_visit(bt_tree *tr, const task *t, const bt_node *n)
{
	SIM_REC(tr->fs->sim, TK_VISIT, t, btx_rec_tree(tr), (int64_t)n->bytenr, n->level);
}

void bt_rec_lock(bt_tree *tr, const task *t, const bt_node *n, int mode, simtime_t waited)
{
	if (btx_rec(tr))
		SIM_REC(tr->fs->sim, TK_LOCK, t, btx_rec_tree(tr), (int64_t)n->bytenr, mode,
			(int64_t)waited);
}

void bt_rec_unlock(bt_tree *tr, const task *t, const bt_node *n, int mode)
{
	if (btx_rec(tr))
		SIM_REC(tr->fs->sim, TK_UNLOCK, t, btx_rec_tree(tr), (int64_t)n->bytenr, mode);
}

void btx_rec_lock_moves(bt_tree *tr, const bt_path *p, int level, const bt_node *to)
{
	if (!btx_rec(tr) || !p->t || !(p->held & (1u << level)) || p->nodes[level] == to)
		return;
	bt_rec_unlock(tr, p->t, p->nodes[level], p->locks[level]);
	bt_rec_lock(tr, p->t, to, p->locks[level], 0);
}

/* ---------------------------------------------------------- cost, locks */

/* Inline here: a search takes and drops a lock per level; the other
 * files call the btx_ wrappers. */
/* rec: btx_rec(p->tree), which a search asks once rather than per lock */
static inline void lock_take(bt_path *p, int level, int write, int rec)
{
	bt_node *n = p->nodes[level];
	task *t = p->t;
	bt_tree *tr = p->tree;
	simtime_t before = t->clock;
	if (write)
		simlock_write(&n->lock, t);
	else
		simlock_read(&n->lock, t);
	if (t->clock > before && tr) {
		tr->lock_waits++;
		if (tr->on_lock_wait)
			tr->on_lock_wait(tr->lock_wait_ctx, t, n, before, t->clock);
	}
	int mode = write ? BT_LOCK_WRITE : BT_LOCK_READ;
	p->locks[level] = mode;
	p->held |= 1u << level;
	if (rec)
		bt_rec_lock(tr, t, n, mode, t->clock - before);
}

static inline void lock_drop(bt_path *p, int level, int rec)
{
	bt_node *n = p->nodes[level];
	task *t = p->t;
	int mode = p->locks[level];
	p->held &= ~(1u << level);
	p->locks[level] = 0;
	if (!t || !n)
		return;
	if (mode == BT_LOCK_WRITE)
		simlock_write_release(&n->lock, t->clock);
	else
		simlock_read_release(&n->lock, t->clock);
	if (rec)
		bt_rec_unlock(p->tree, t, n, mode);
}

/* btx_lock_level, inline */
static inline void lock_level(bt_path *p, int level, int write, int rec)
{
	if (p->t && p->nodes[level] && !(p->held & (1u << level)))
		lock_take(p, level, write, rec);
}

void btx_lock_take(bt_path *p, int level, int write)
{
	lock_take(p, level, write, p->tree && btx_rec(p->tree));
}

void btx_lock_drop(bt_path *p, int level)
{
	lock_drop(p, level, p->tree && btx_rec(p->tree));
}

/* Lock a block that is not on the path (a sibling) for the span of a push:
 * waits like a path lock, released by tmp_unlock at the current time. */
void btx_tmp_lock(bt_tree *tr, task *t, bt_node *n)
{
	if (!t)
		return;
	simtime_t before = t->clock;
	simlock_write(&n->lock, t);
	if (t->clock > before && tr->on_lock_wait)
		tr->on_lock_wait(tr->lock_wait_ctx, t, n, before, t->clock);
	bt_rec_lock(tr, t, n, BT_LOCK_WRITE, t->clock - before);
}

void btx_tmp_unlock(bt_tree *tr, task *t, bt_node *n)
{
	if (!t)
		return;
	simlock_write_release(&n->lock, t->clock);
	bt_rec_unlock(tr, t, n, BT_LOCK_WRITE);
}

void bt_path_release(bt_path *p)
{
	/* lowest level first */
	int rec = p->held && p->tree && btx_rec(p->tree);
	while (p->held)
		lock_drop(p, __builtin_ctz(p->held), rec);
	memset(p->nodes, 0, sizeof(p->nodes));
	memset(p->slots, 0, sizeof(p->slots));
}

/* Release the locks above `level` (lock coupling), unless keep_locks. */
static void unlock_above(bt_path *p, int level, int rec)
{
	if (p->keep_locks)
		return;
	uint32_t above = ~0u << (level + 1);
	while (p->held & above)
		lock_drop(p, __builtin_ctz(p->held & above), rec);
}

/* ------------------------------------------------------------ references */

/* Queue a ref change for every regular/prealloc file extent item of leaf n
 * as referenced from tree tr (models btrfs_inc_ref / btrfs_dec_ref for a
 * leaf). */
void btx_leaf_data_refs(bt_tree *tr, const bt_node *n, int delta)
{
	if (tr->priv)
		return; /* a log tree's extent items hold no references */
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
void btx_tree_ref(bt_tree *tr, const bt_node *n, int delta)
{
	if (tr->priv)
		return;
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
		btx_tree_ref(tr, n, -1);
		if (btx_rec(tr))
			SIM_REC(fs->sim, TK_UNREF, t, btx_rec_tree(tr), (int64_t)n->bytenr, n->level);
		return;
	}
	if (btx_rec(tr))
		SIM_REC(fs->sim, TK_FREE, t, btx_rec_tree(tr), (int64_t)n->bytenr, n->level);
	if (n->level == 0)
		btx_leaf_data_refs(tr, n, -1);
	if (tr->priv)
		tr->priv->free(tr->priv->ctx, tr, n);
	else
		fs_hooks_free(fs, tr, n->bytenr, n->level, n->owner);
	btx_tree_ref(tr, n, -1);
	n->mrefs = 0;
	btx_node_defer(fs, n);
}

/* ------------------------------------------------------------------ COW */

/* Copy n's first cnt entries into c (room reserved). */
static void node_copy_entries(bt_node *c, const bt_node *n, int cnt)
{
	if (n->level && cnt)
		memcpy(c->ptrs, n->ptrs, (size_t)cnt * sizeof(bt_ptr));
	else if (cnt)
		memcpy(c->items, n->items, (size_t)cnt * sizeof(bt_item));
}

/* Copy block n (linked from the path at `level`) into a new block of this
 * transaction unless it already belongs to it (models btrfs_cow_block with
 * should_cow_block and update_ref_for_cow). parent/pslot locate the pointer
 * to update (parent NULL: n is the root). Returns the block to modify. */
bt_node *btx_cow_block(bt_tree *tr, task *t, bt_node *n, bt_node *parent,
			  int pslot)
{
	fs_info *fs = tr->fs;
	if (n->generation == btx_gen(tr) && n->mrefs <= 1 && !n->dead)
		return n;
	bt_node *c = btx_node_new(tr, n->level, t);
	if (!c)
		return NULL;
	int cnt = n->nritems;
	if (btx_node_reserve(c, cnt ? cnt : 1)) {
		btx_node_free_mem(c);
		return NULL;
	}
	/* The entries are copied now, or (n unshared, not recorded) at the
	 * end: if n then keeps no contents the arrays are swapped instead
	 * (c takes n's, n's shell takes c's empty one), saving the copy of
	 * a whole block. Until then nothing reads c's entries: c is not
	 * linked yet and the hooks see block numbers. */
	int copied = 0;
	if (n->mrefs > 1 || btx_rec(tr)) {
		node_copy_entries(c, n, cnt);
		copied = 1;
	}
	c->nritems = cnt;
	c->used = n->used;
	c->lock = n->lock; /* the same lock as far as waiters are concerned */
	if (!tr->priv)
		fs_hooks_cow(fs, tr, n->bytenr, c->bytenr, n->level);
	if (btx_rec(tr)) {
		SIM_REC(fs->sim, TK_COW, t, btx_rec_tree(tr), (int64_t)n->bytenr,
			(int64_t)c->bytenr, parent ? (int64_t)parent->bytenr : 0);
		btx_rec_blk(tr, t, c);
		if (n->mrefs <= 1)
			SIM_REC(fs->sim, TK_FREE, t, btx_rec_tree(tr), (int64_t)n->bytenr, n->level);
	}
	if (n->mrefs > 1) {
		/* shared: the other owners keep n; c adds a ref to each child */
		if (n->level) {
			for (int i = 0; i < cnt; i++) {
				c->ptrs[i].child->mrefs++;
				btx_tree_ref(tr, c->ptrs[i].child, +1);
			}
		} else {
			btx_leaf_data_refs(tr, c, +1);
		}
		n->mrefs--;
		btx_tree_ref(tr, n, -1);
	} else {
		if (tr->priv)
			tr->priv->free(tr->priv->ctx, tr, n);
		else
			fs_hooks_free(fs, tr, n->bytenr, n->level, n->owner);
		btx_tree_ref(tr, n, -1);
		n->mrefs = 0;
		if (!copied) {
			if (cnt > 0 && !fs->opts.keep_commit_roots && !n->keep_mem) {
				/* btx_node_defer would drop n's entries */
				bt_item *it = n->items;
				bt_ptr *pt = n->ptrs;
				int cap = n->cap, head = n->head;
				n->items = c->items;
				n->ptrs = c->ptrs;
				n->cap = c->cap;
				n->head = c->head;
				c->items = it;
				c->ptrs = pt;
				c->cap = cap;
				c->head = head;
			} else {
				node_copy_entries(c, n, cnt);
			}
		}
		btx_node_defer(fs, n);
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

/* The COW of cow_path_level, out of line: most levels need none. */
static __attribute__((noinline)) int cow_path_copy(bt_tree *tr, bt_path *p, int level)
{
	bt_node *parent = level + 1 < BT_MAX_LEVEL ? p->nodes[level + 1] : NULL;
	bt_node *c = btx_cow_block(tr, p->t, p->nodes[level], parent,
				   parent ? p->slots[level + 1] : 0);
	if (!c)
		return LAB_ENOMEM;
	p->nodes[level] = c;
	return 0;
}

/* COW the block at path level `level` (its parent, if any, is already
 * COWed) and put the copy in the path. */
static inline int cow_path_level(bt_tree *tr, bt_path *p, int level)
{
	bt_node *n = p->nodes[level];
	/* btx_cow_block's own first test, inline: on a search most blocks
	 * already belong to the running transaction */
	if (n->generation == btx_gen(tr) && n->mrefs <= 1 && !n->dead)
		return 0;
	return cow_path_copy(tr, p, level);
}

/* COW child `slot` of a (COWed) parent outside the path (a sibling). */
bt_node *btx_cow_sibling(bt_tree *tr, task *t, bt_node *parent, int slot)
{
	return btx_cow_block(tr, t, parent->ptrs[slot].child, parent, slot);
}

/* --------------------------------------------------------------- search */

/*
 * Search n entries of `stride` bytes, each starting with its key (bt_item,
 * bt_ptr): returns 0 and the slot of an exact match, or 1 and the first
 * slot with a greater key (may be n). Keys in a block are strictly
 * increasing (the checker enforces it), so that slot is unique and any
 * search order finds it. Searches mostly come in file order, so the search
 * starts at the slot the block's previous search found (*hint) and gallops
 * from there: the probes near it are in cache, where a plain binary search
 * takes a cache miss per probe on a large leaf. Inlined (forced: gcc kept
 * the two copies out of line) into bt_search once per block kind, so that
 * the stride is a constant and the call's register saves go.
 */
_Static_assert(offsetof(bt_item, key) == 0 && offsetof(bt_ptr, key) == 0,
	       "search_keys reads the key at the start of an entry");
static inline __attribute__((always_inline))
int search_keys(const char *base, size_t stride, int n, const bt_key *key, int *hint, int *slot)
{
#define KEY_AT(i) ((const bt_key *)(base + (size_t)(i) * stride))
	int lo = 0, hi = n; /* the slot is in [lo, hi] */
	int h = *hint < n ? *hint : n - 1; /* past the end: appends, last child */
	if (h >= 0) {
		int c = bt_key_cmp(KEY_AT(h), key);
		if (c == 0) {
			*slot = h;
			return 0;
		}
		if (c < 0) {
			lo = h + 1;
			for (int step = 1; h + step < n; step *= 2) {
				int i = h + step;
				int ci = bt_key_cmp(KEY_AT(i), key);
				if (ci == 0) {
					*slot = *hint = i;
					return 0;
				}
				if (ci > 0) {
					hi = i;
					break;
				}
				lo = i + 1;
			}
		} else {
			hi = h;
			for (int step = 1; h - step >= 0; step *= 2) {
				int i = h - step;
				int ci = bt_key_cmp(KEY_AT(i), key);
				if (ci == 0) {
					*slot = *hint = i;
					return 0;
				}
				if (ci < 0) {
					lo = i + 1;
					break;
				}
				hi = i;
			}
		}
	}
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int c = bt_key_cmp(KEY_AT(mid), key);
		if (c < 0)
			lo = mid + 1;
		else if (c > 0)
			hi = mid;
		else {
			*slot = *hint = mid;
			return 0;
		}
	}
	*slot = *hint = lo;
	return 1;
#undef KEY_AT
}

/* Search a block: 0 and the slot of an exact match, or 1 and the first
 * slot with a greater key (may be nritems). */
static inline __attribute__((always_inline))
int bin_search(bt_node *n, const bt_key *key, int *slot)
{
	if (n->level)
		return search_keys((const char *)n->ptrs, sizeof(bt_ptr), n->nritems, key,
				   &n->search_hint, slot);
	return search_keys((const char *)n->items, sizeof(bt_item), n->nritems, key,
			   &n->search_hint, slot);
}

uint32_t btx_leaf_free(const bt_node *n)
{
	return BT_LEAF_DATA_SIZE - n->used;
}

uint32_t btx_leaf_space_used(const bt_node *n, int start, int nr)
{
	uint32_t s = 0;
	for (int i = start; i < start + nr; i++)
		s += BT_ITEM_HEADER + n->items[i].size;
	return s;
}


/* ------------------------------------------------- read-only search */

/* The compares a halving binary search of n keys makes when its answer
 * (the first key >= the key searched) is pos: key[mid] < key exactly when
 * mid < pos, so its path follows from pos alone. */
static int halving_steps(int n, int pos)
{
	int lo = 0, hi = n, k = 0;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		int lt = mid < pos;
		k++;
		lo = lt ? mid + 1 : lo;
		hi = lt ? hi : mid;
	}
	return k;
}

/* A read lock on n for a read-only path: the wait counted, recorded. */
static void rpath_lock(bt_tree *tr, task *t, bt_node *n, bt_rpath *p)
{
	simtime_t before = t->clock;
	simlock_read(&n->lock, t);
	bt_rec_lock(tr, t, n, BT_LOCK_READ, t->clock - before);
	p->lock_wait += t->clock - before;
	p->leaf_locked_at = t->clock;
}

static void rpath_unlock(bt_tree *tr, task *t, bt_node *n)
{
	simlock_read_release(&n->lock, t->clock);
	bt_rec_unlock(tr, t, n, BT_LOCK_READ);
}

bt_node *bt_search_read(bt_tree *tr, bt_node *root, task *t, const bt_key *key, int *hints,
			bt_rpath *p)
{
	p->has_next = 0;
	p->lock_wait = 0;
	p->leaf_locked_at = 0;
	p->top = root ? root->level : 0;
	p->nodes[0] = NULL;
	p->slots[0] = 0;
	bt_node *n = root;
	if (!n)
		return NULL;
	if (t)
		rpath_lock(tr, t, n, p);
	for (;;) {
		int level = n->level;
		int h = hints ? hints[level] : n->search_hint, slot;
		int exact = n->level ? !search_keys((const char *)n->ptrs, sizeof(bt_ptr),
						    n->nritems, key, &h, &slot)
				     : !search_keys((const char *)n->items, sizeof(bt_item),
						    n->nritems, key, &h, &slot);
		if (hints)
			hints[level] = h;
		if (t)
			task_cpu(tr->fs->sim, t,
				 BT_NS_NODE_VISIT +
					 (uint64_t)halving_steps(n->nritems, slot) * BT_NS_BSEARCH_STEP);
		if (level == 0) {
			p->nodes[0] = n;
			p->slots[0] = slot;
			return n;
		}
		/* the pointer covering key: the last one with a key <= it */
		int i = exact || slot == 0 ? slot : slot - 1;
		p->nodes[level] = n;
		p->slots[level] = i;
		if (i + 1 < n->nritems) {
			p->next_key = n->ptrs[i + 1].key;
			p->has_next = 1;
		}
		bt_node *c = n->ptrs[i].child;
		if (t) {
			rpath_lock(tr, t, c, p);
			rpath_unlock(tr, t, n);
		}
		n = c;
	}
}

void bt_rpath_unlock(bt_tree *tr, task *t, bt_rpath *p)
{
	rpath_unlock(tr, t, p->nodes[0]);
}

const bt_item *bt_rpath_item(bt_rpath *p)
{
	while (p->slots[0] >= p->nodes[0]->nritems) {
		int l = 1;
		while (l <= p->top && p->slots[l] + 1 >= p->nodes[l]->nritems)
			l++;
		if (l > p->top)
			return NULL;
		p->slots[l]++;
		for (; l > 0; l--) {
			p->nodes[l - 1] = p->nodes[l]->ptrs[p->slots[l]].child;
			p->slots[l - 1] = 0;
		}
	}
	return &p->nodes[0]->items[p->slots[0]];
}

const bt_item *bt_rpath_prev(bt_rpath *p)
{
	if (p->slots[0] > 0)
		return &p->nodes[0]->items[--p->slots[0]];
	int l = 1;
	while (l <= p->top && p->slots[l] == 0)
		l++;
	if (l > p->top)
		return NULL;
	p->slots[l]--;
	for (; l > 0; l--) {
		bt_node *c = p->nodes[l]->ptrs[p->slots[l]].child;
		p->nodes[l - 1] = c;
		p->slots[l - 1] = c->nritems - 1;
	}
	return p->slots[0] >= 0 ? &p->nodes[0]->items[p->slots[0]] : NULL;
}

int bt_items_lower(const bt_item *items, int n, const bt_key *key)
{
	int h = 0, slot;
	search_keys((const char *)items, sizeof(bt_item), n, key, &h, &slot);
	return slot;
}

int bt_items_upper(const bt_item *items, int from, int n, const bt_key *key)
{
	if (from >= n || bt_key_cmp(&items[n - 1].key, key) <= 0)
		return n;
	/* the answer is in [lo, hi]; a run from `from` is mostly short (a
	 * file's items) or ends the leaf (a directory's): gallop from from */
	int lo = from, hi = n - 1;
	for (int d = 1; lo + d - 1 < hi; d *= 2) {
		int i = lo + d - 1;
		if (bt_key_cmp(&items[i].key, key) > 0) {
			hi = i;
			break;
		}
		lo = i + 1;
	}
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (bt_key_cmp(&items[mid].key, key) > 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int bt_search(bt_tree *tr, bt_path *p, const bt_key *key, int ins_len, int cow)
{
	task *t = p->t;
	p->tree = tr;
	int restarts = 0;
again:
	/* bt_path_release, its call only when locks are held: callers mostly
	 * pass a fresh path */
	if (p->held) {
		bt_path_release(p);
	} else {
		memset(p->nodes, 0, sizeof(p->nodes));
		memset(p->slots, 0, sizeof(p->slots));
	}
	if (++restarts > 64)
		return LAB_EENGINE;
	/* recording does not start or stop within a search */
	const int rec = btx_rec(tr);
	if (rec)
		SIM_REC(tr->fs->sim, TK_SEARCH, t, btx_rec_tree(tr), (int64_t)key->objectid,
			key->type, (int64_t)key->offset, ins_len, cow);
	bt_node *n = tr->root;
	int level = n->level;
	p->nodes[level] = n;
	lock_level(p, level, cow, rec);
	if (cow) {
		int r = cow_path_level(tr, p, level);
		if (r)
			return r;
		n = p->nodes[level];
	}
	for (;;) {
		btx_visit_rec(tr, t, n, rec);
		int slot;
		int ret = bin_search(n, key, &slot);
		if (level > 0) {
			if (ret && slot > 0)
				slot--;
			p->slots[level] = slot;
			if (ins_len > 0 && n->nritems >= (int)BT_NODE_PTRS - 3) {
				int r = btx_split_node(tr, p, level);
				if (r < 0)
					return r;
				n = p->nodes[level];
				slot = p->slots[level];
			} else if (ins_len < 0 && n->nritems < (int)BT_NODE_PTRS / 2) {
				int r = btx_balance_level(tr, p, level);
				if (r < 0)
					return r;
				if (r > 0)
					goto again;
			}
			bt_node *child = n->ptrs[slot].child;
			p->nodes[level - 1] = child;
			p->slots[level - 1] = 0;
			lock_level(p, level - 1, cow, rec);
			if (cow) {
				int r = cow_path_level(tr, p, level - 1);
				if (r)
					return r;
			}
			unlock_above(p, cow ? level : level - 1, rec);
			level--;
			n = p->nodes[level];
			continue;
		}
		p->slots[0] = slot;
		if (ins_len > 0 && btx_leaf_free(n) < (uint32_t)ins_len) {
			int r = btx_split_leaf(tr, p, key, (uint32_t)ins_len, ret == 0);
			if (r < 0)
				return r;
		}
		return ret;
	}
}

/* ------------------------------------------------------- key fix-ups */

/* The first key of the block at `level` changed: update the pointer keys
 * up the path while the block is the first child (models fixup_low_keys). */
void btx_fixup_low_keys(bt_path *p, const bt_key *key, int level)
{
	for (int i = level; i < BT_MAX_LEVEL; i++) {
		bt_node *n = p->nodes[i];
		if (!n)
			break;
		n->ptrs[p->slots[i]].key = *key;
		if (p->tree)
			btx_rec_blk(p->tree, p->t, n);
		if (p->slots[i] != 0)
			break;
	}
}

/* Insert a pointer to child at `slot` of node n. */
int btx_insert_ptr(bt_tree *tr, bt_node *n, int slot, const bt_key *key, bt_node *child)
{
	assert(n->nritems < (int)BT_NODE_PTRS);
	int r = btx_node_reserve(n, n->nritems + 1);
	if (r)
		return r;
	btx_node_ins_entries(n, slot, 1);
	n->ptrs[slot].key = *key;
	n->ptrs[slot].child = child;
	n->ptrs[slot].gen = child->generation;
	n->nritems++;
	n->used = (uint32_t)n->nritems * BT_KEY_PTR_SIZE;
	if (btx_rec(tr)) {
		SIM_REC(tr->fs->sim, TK_LINK, NULL, btx_rec_tree(tr), (int64_t)n->bytenr, slot,
			(int64_t)child->bytenr);
		btx_rec_blk(tr, NULL, n);
	}
	return 0;
}

/* Remove pointer `slot` from node n (models del_ptr; the caller deals with
 * an emptied node). */
void btx_del_ptr(bt_tree *tr, bt_node *n, int slot)
{
	btx_node_del_entries(n, slot, 1);
	n->nritems--;
	n->used = (uint32_t)n->nritems * BT_KEY_PTR_SIZE;
	if (btx_rec(tr)) {
		SIM_REC(tr->fs->sim, TK_UNLINK, NULL, btx_rec_tree(tr), (int64_t)n->bytenr, slot);
		btx_rec_blk(tr, NULL, n);
	}
}

/* Add a new root above the current one at `level` (models insert_new_root). */
int btx_insert_new_root(bt_tree *tr, bt_path *p, int level)
{
	if (level >= BT_MAX_LEVEL)
		return LAB_ENOSPC;
	bt_node *lower = p->nodes[level - 1];
	bt_node *c = btx_node_new(tr, level, p->t);
	if (!c)
		return LAB_ENOMEM;
	bt_key k = lower->nritems ? *bt_node_key(lower, 0) : bt_mkkey(0, 0, 0);
	int r = btx_insert_ptr(tr, c, 0, &k, lower);
	if (r)
		return r;
	/* lower keeps its one reference, now held by c instead of the root */
	tr->root = c;
	btx_rec_root(tr, p->t);
	p->nodes[level] = c;
	p->slots[level] = 0;
	btx_lock_level(p, level, 1);
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
	assert(btx_leaf_free(l) >= size + BT_ITEM_HEADER);
	int r = btx_node_reserve(l, l->nritems + 1);
	if (r) {
		bt_path_release(p);
		return r;
	}
	uint32_t moved = l->nritems ? (uint32_t)((uint64_t)l->used * (uint64_t)(l->nritems - slot) / (uint64_t)l->nritems) : 0;
	btx_node_ins_entries(l, slot, 1);
	bt_item *ni = &l->items[slot];
	if (it)
		*ni = *it;
	else
		memset(ni, 0, sizeof(*ni));
	ni->key = *key;
	ni->size = (uint16_t)size; /* <= BT_MAX_ITEM_SIZE (above) */
	l->nritems++;
	l->used += size + BT_ITEM_HEADER;
	btx_rec_blk(tr, t, l);
	if (slot == 0 && p->nodes[1])
		btx_fixup_low_keys(p, key, 1);
	fs_charge(tr->fs, t, BT_NS_ITEM_FILL + (uint64_t)moved * BT_NS_MOVE_PER_KIB / 1024);
	if (!out)
		bt_path_release(p);
	return 0;
}

int bt_insert_items(bt_tree *tr, task *t, const bt_item *items, int nr)
{
	if (nr <= 0 || items[0].size > BT_MAX_ITEM_SIZE)
		return LAB_EINVAL;
	/* what one leaf can take of the batch, in key order */
	uint32_t total = items[0].size + BT_ITEM_HEADER;
	int n = 1;
	while (n < nr && items[n].size <= BT_MAX_ITEM_SIZE &&
	       total + items[n].size + BT_ITEM_HEADER <= BT_LEAF_DATA_SIZE &&
	       bt_key_cmp(&items[n - 1].key, &items[n].key) < 0) {
		total += items[n].size + BT_ITEM_HEADER;
		n++;
	}
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, &items[0].key, (int)total, 1);
	if (ret <= 0) {
		bt_path_release(&p);
		return ret;
	}
	bt_node *l = p.nodes[0];
	int slot = p.slots[0];
	/* the key the batch must stay below: the next item's, or past the
	 * leaf's end the next leaf's low key in the parents */
	const bt_key *bound = NULL;
	if (slot < l->nritems) {
		bound = &l->items[slot].key;
	} else {
		for (int lv = 1; lv < BT_MAX_LEVEL && p.nodes[lv]; lv++)
			if (p.slots[lv] + 1 < p.nodes[lv]->nritems) {
				bound = &p.nodes[lv]->ptrs[p.slots[lv] + 1].key;
				break;
			}
	}
	int k = 1;
	uint32_t bytes = items[0].size + BT_ITEM_HEADER;
	while (k < n && (!bound || bt_key_cmp(&items[k].key, bound) < 0)) {
		bytes += items[k].size + BT_ITEM_HEADER;
		k++;
	}
	assert(btx_leaf_free(l) >= bytes);
	int r = btx_node_reserve(l, l->nritems + k);
	if (r) {
		bt_path_release(&p);
		return r;
	}
	uint32_t moved = l->nritems ? (uint32_t)((uint64_t)l->used * (uint64_t)(l->nritems - slot) / (uint64_t)l->nritems) : 0;
	btx_node_ins_entries(l, slot, k);
	memcpy(&l->items[slot], items, (size_t)k * sizeof(bt_item));
	l->nritems += k;
	l->used += bytes;
	btx_rec_blk(tr, t, l);
	if (slot == 0 && p.nodes[1])
		btx_fixup_low_keys(&p, &items[0].key, 1);
	fs_charge(tr->fs, t, (uint64_t)k * BT_NS_ITEM_FILL + (uint64_t)moved * BT_NS_MOVE_PER_KIB / 1024);
	bt_path_release(&p);
	return k;
}

/* Unlink and free the (empty) leaf at the path (models btrfs_del_leaf);
 * cascades to a parent node emptied by it. */
static void del_leaf(bt_tree *tr, bt_path *p, bt_node *leaf)
{
	int level = 1;
	bt_node *child = leaf;
	while (level < BT_MAX_LEVEL && p->nodes[level]) {
		bt_node *parent = p->nodes[level];
		btx_del_ptr(tr, parent, p->slots[level]);
		btx_free_empty_block(tr, p->t, child);
		if (parent->nritems > 0) {
			if (p->slots[level] == 0)
				btx_fixup_low_keys(p, &parent->ptrs[0].key, level + 1);
			return;
		}
		if (parent == tr->root) {
			/* the tree became empty: the root turns into a leaf */
			parent->level = 0;
			btx_node_arrays_put(parent);
			parent->cap = 0;
			parent->used = 0;
			btx_rec_blk(tr, p->t, parent);
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
	uint32_t bytes = btx_leaf_space_used(leaf, slot, nr);
	btx_node_del_entries(leaf, slot, nr);
	leaf->nritems -= nr;
	leaf->used -= bytes;
	btx_rec_blk(tr, p->t, leaf);
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL + (uint64_t)leaf->used * BT_NS_MOVE_PER_KIB / 2048);
	if (leaf->nritems == 0) {
		if (leaf != tr->root)
			del_leaf(tr, p, leaf);
		bt_path_release(p);
		return 0;
	}
	if (slot == 0 && p->nodes[1])
		btx_fixup_low_keys(p, &leaf->items[0].key, 1);
	if (leaf != tr->root && leaf->used < BT_LEAF_DATA_SIZE / 3) {
		int pslot = p->slots[1];
		int w = btx_push_leaf_left(tr, p, 1, 1, 1 << 30);
		if (w < 0) {
			bt_path_release(p);
			return w;
		}
		if (p->nodes[0] == leaf && leaf->nritems) {
			w = btx_push_leaf_right(tr, p, 1, 1, 0);
			if (w < 0) {
				bt_path_release(p);
				return w;
			}
		}
		if (leaf->nritems == 0) {
			/* everything moved out: point the path back at the leaf */
			btx_rec_lock_moves(tr, p, 0, leaf);
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
	if (btx_leaf_free(l) < grow)
		return LAB_ENOSPC;
	it->size = (uint16_t)new_size;
	l->used += grow;
	btx_rec_blk(tr, p->t, l);
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
	return 0;
}

void bt_truncate_item(bt_tree *tr, bt_path *p, uint32_t new_size)
{
	bt_node *l = p->nodes[0];
	bt_item *it = &l->items[p->slots[0]];
	assert(new_size <= it->size);
	l->used -= it->size - new_size;
	it->size = (uint16_t)new_size;
	btx_rec_blk(tr, p->t, l);
	fs_charge(tr->fs, p->t, BT_NS_ITEM_FILL);
}

void bt_set_item_key(bt_tree *tr, bt_path *p, const bt_key *key)
{
	bt_node *l = p->nodes[0];
	int slot = p->slots[0];
	assert(slot == 0 || bt_key_cmp(&l->items[slot - 1].key, key) < 0);
	assert(slot + 1 >= l->nritems || bt_key_cmp(&l->items[slot + 1].key, key) > 0);
	l->items[slot].key = *key;
	btx_rec_blk(tr, p->t, l);
	if (slot == 0 && p->nodes[1])
		btx_fixup_low_keys(p, key, 1);
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
	assert(p->nodes[0] && p->nodes[0]->generation == btx_gen(tr));
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
	btx_lock_level(p, level, 0);
	while (level > 0) {
		bt_node *child = p->nodes[level]->ptrs[p->slots[level]].child;
		level--;
		btx_unlock_level(p, level);
		p->nodes[level] = child;
		p->slots[level] = 0;
		btx_lock_level(p, level, 0);
		btx_visit(tr, p->t, child);
		btx_unlock_level(p, level + 1);
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
	btx_lock_level(p, level, 0);
	while (level > 0) {
		bt_node *child = p->nodes[level]->ptrs[p->slots[level]].child;
		level--;
		btx_unlock_level(p, level);
		p->nodes[level] = child;
		p->slots[level] = child->nritems ? child->nritems - 1 : 0;
		btx_lock_level(p, level, 0);
		btx_visit(tr, p->t, child);
		btx_unlock_level(p, level + 1);
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
