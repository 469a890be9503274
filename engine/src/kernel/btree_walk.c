/*
 * btree_walk.c - tree life cycle and whole-tree walks: init/destroy,
 * height and block counts, the snapshot root copy (btrfs_copy_root), the
 * whole-tree free, and the JSON picture of a tree for the front end.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "btree_int.h"
#include "costs.h"
#include "fs.h"
#include "lab.h"
#include "labmem.h"

/* ---------------------------------------------------- tree life cycle */

int bt_tree_init(fs_info *fs, bt_tree *tr, uint64_t id, task *t)
{
	memset(tr, 0, sizeof(*tr));
	tr->fs = fs;
	tr->id = id;
	bt_node *n = btx_node_new(tr, 0, t);
	if (!n)
		return LAB_ENOMEM;
	tr->root = n;
	tr->commit_root = NULL;
	btx_rec_root(tr, t);
	return 0;
}

int bt_tree_init_priv(fs_info *fs, bt_tree *tr, uint64_t id, const bt_priv_ops *ops,
		      uint64_t gen, task *t)
{
	memset(tr, 0, sizeof(*tr));
	tr->fs = fs;
	tr->id = id;
	tr->priv = ops;
	tr->priv_gen = gen;
	bt_node *n = btx_node_new(tr, 0, t);
	if (!n)
		return LAB_ENOMEM;
	tr->root = n;
	btx_rec_root(tr, t);
	return 0;
}

/* Drop one in-memory reference; free memory (recursively) at zero. A NULL
 * child is one a subvolume drop in progress has already dropped. */
static void node_put_mem(bt_node *n)
{
	if (--n->mrefs > 0)
		return;
	if (n->level)
		for (int i = 0; i < n->nritems; i++)
			if (n->ptrs[i].child)
				node_put_mem(n->ptrs[i].child);
	btx_node_free_mem(n);
}

void bt_tree_destroy(bt_tree *tr)
{
	if (tr->rec_h && btx_rec(tr))
		SIM_REC(tr->fs->sim, TK_TREE_END, NULL, tr->rec_h);
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
		btx_free_empty_block(dst, t, old);
	}
	bt_node *s = src->root;
	bt_node *c = btx_node_new(dst, s->level, t);
	if (!c)
		return LAB_ENOMEM;
	if (btx_node_reserve(c, s->nritems ? s->nritems : 1))
		return LAB_ENOMEM;
	if (s->level && s->nritems) {
		memcpy(c->ptrs, s->ptrs, (size_t)s->nritems * sizeof(bt_ptr));
		for (int i = 0; i < s->nritems; i++) {
			c->ptrs[i].child->mrefs++;
			btx_tree_ref(dst, c->ptrs[i].child, +1);
		}
	} else if (s->nritems) {
		memcpy(c->items, s->items, (size_t)s->nritems * sizeof(bt_item));
	}
	c->nritems = s->nritems;
	c->used = s->used;
	if (!s->level)
		btx_leaf_data_refs(dst, c, +1);
	dst->root = c;
	if (btx_rec(dst)) {
		btx_rec_blk(dst, t, c);
		for (int i = 0; s->level && i < s->nritems; i++)
			SIM_REC(fs->sim, TK_LINK, t, btx_rec_tree(dst), (int64_t)c->bytenr, i,
				(int64_t)c->ptrs[i].child->bytenr);
		btx_rec_root(dst, t);
	}
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

/* ------------------------------------------------------------ recording */

static void dump_rec(bt_tree *tr, bt_node *n, uint32_t epoch)
{
	if (n->mark == epoch)
		return;
	n->mark = epoch;
	btx_rec_blk(tr, NULL, n);
	if (!n->level)
		return;
	sim *s = tr->fs->sim;
	/* a subvolume drop in progress has unlinked the children it dropped */
	int slot = 0;
	for (int i = 0; i < n->nritems; i++)
		if (n->ptrs[i].child)
			SIM_REC(s, TK_LINK, NULL, tr->rec_h, (int64_t)n->bytenr, slot++,
				(int64_t)n->ptrs[i].child->bytenr);
	for (int i = 0; i < n->nritems; i++)
		if (n->ptrs[i].child)
			dump_rec(tr, n->ptrs[i].child, epoch);
}

void bt_rec_dump(bt_tree *tr, uint32_t epoch)
{
	if (!btx_rec(tr) || !tr->root)
		return;
	tr->rec_h = 0; /* declared anew: a reader may start here */
	btx_rec_tree(tr);
	dump_rec(tr, tr->root, epoch);
	btx_rec_root(tr, NULL);
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
	const bt_node **q = lab_malloc(qcap * sizeof(*q));
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
				const bt_node **nq = lab_realloc(q, qcap * sizeof(*q));
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
