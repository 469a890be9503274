/*
 * subvol.c - subvolume create / snapshot / delete and the cleaner's
 * snapshot drop (see subvol.h).
 */
#include "subvol.h"

#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "items.h"
#include "lab.h"
#include "vfs.h"
#include "labmem.h"

/* Set up subvolume handling over fs/tm/q; the transaction kthread
 * will wake this cleaner. Returns 0. */
int subvol_init(subvol_ctx *sc, fs_info *fs, trans_mgr *tm, qgroup_ctx *q)
{
	memset(sc, 0, sizeof *sc);
	sc->fs = fs;
	sc->tm = tm;
	sc->q = q;
	tm->wake_cleaner = subvol_wake_cleaner;
	tm->cleaner_ctx = sc;
	return 0;
}

/* Free the dead-roots queue and the picture. */
void subvol_destroy(subvol_ctx *sc)
{
	free(sc->dead);
	free(sc->pic);
	sc->dead = NULL;
	sc->pic = NULL;
}

/* ---- create / snapshot ------------------------------------------------ */

int subvol_create(subvol_ctx *sc, task *t, struct btrfs_root *parent,
		  uint64_t dir, const char *name, struct btrfs_root **out)
{
	struct btrfs_root *r;
	int rc = fs_create_subvol(sc->fs, t, parent, dir, name, &r);
	if (rc)
		return rc;
	br_set_height(&sc->q->br, r->id, bt_tree_height(&r->tree));
	if (sc->q->enabled) {
		rc = qgroup_create(sc->q, qgroup_mkid(0, r->id));
		if (rc)
			return rc;
	}
	if (out)
		*out = r;
	return 0;
}

/* Mark every block under blk (not blk itself) and every data extent in
 * its leaves reachable (delta > 0) or no longer reachable from root. With
 * quota on each change is traced first (old_roots before it), so the
 * commit accounts it (duplicates of records already traced are free). */
static void reach_subtree(qgroup_ctx *q, const bt_node *blk, uint64_t root, int delta)
{
	if (blk->level == 0) {
		for (int i = 0; i < blk->nritems; i++) {
			const bt_item *it = &blk->items[i];
			if (it->key.type != BTRFS_EXTENT_DATA_KEY || it->aux == FE_INLINE || !it->v[0])
				continue;
			qgroup_trace_extent(q, it->v[0], fe_disk_len(it), q->in_subtree ? QREC_SUBTREE : QREC_OTHER);
			br_ref(&q->br, it->v[0], fe_disk_len(it), 0, 0, root, delta);
		}
		return;
	}
	for (int i = 0; i < blk->nritems; i++) {
		const bt_node *c = blk->ptrs[i].child;
		qgroup_trace_extent(q, c->bytenr, BT_NODESIZE, q->in_subtree ? QREC_SUBTREE : QREC_OTHER);
		br_ref(&q->br, c->bytenr, BT_NODESIZE, 1, c->level, root, delta);
		reach_subtree(q, c, root, delta);
	}
}

/*
 * Snapshot src (see subvol.h). The shared blocks gain a reference from
 * the new root, so everything src reaches becomes reachable from it too;
 * with quota on, the records this traces account the new qgroup at the
 * next commit (the effect of btrfs_qgroup_inherit for a full snapshot).
 */
int subvol_snapshot(subvol_ctx *sc, task *t, struct btrfs_root *src,
		    struct btrfs_root **out)
{
	fs_info *fs = sc->fs;
	struct btrfs_root *dst;
	int rc = fs_root_create(fs, t, fs_root_next_id(fs), &dst);
	if (rc)
		return rc;
	rc = bt_copy_root(&src->tree, &dst->tree, t);
	if (rc)
		return rc;
	if (sc->q->enabled) {
		/* btrfs_qgroup_inherit: the new qgroup exists before the commit
		 * accounts the snapshot's records */
		rc = qgroup_create(sc->q, qgroup_mkid(0, dst->id));
		if (rc)
			return rc;
	}
	sc->q->cur = t;
	reach_subtree(sc->q, src->tree.root, dst->id, +1);
	sc->q->cur = NULL;
	br_set_height(&sc->q->br, dst->id, bt_tree_height(&dst->tree));
	src->last_snapshot = fs->transid;
	if (out)
		*out = dst;
	return 0;
}

/* ---- delete ------------------------------------------------------------ */

/* Queue root on the dead roots list (models btrfs_add_dead_root). */
static int dead_add(subvol_ctx *sc, struct btrfs_root *root)
{
	if (sc->ndead == sc->dcap) {
		int nc = sc->dcap ? sc->dcap * 2 : 16;
		struct btrfs_root **n = lab_realloc(sc->dead, (size_t)nc * sizeof *n);
		if (!n)
			return LAB_ENOMEM;
		sc->dead = n;
		sc->dcap = nc;
	}
	sc->dead[sc->ndead++] = root;
	uint64_t leaves = 0, nodes = 0, items = 0;
	bt_count_blocks(&root->tree, &leaves, &nodes, &items);
	sc->blocks_total += leaves + nodes;
	return 0;
}

/* Find the ROOT_REF of child under parent; returns its dir index. */
static int root_ref_index(fs_info *fs, task *t, uint64_t parent, uint64_t child,
			  uint64_t *index)
{
	bt_path p;
	bt_path_init(&p, &fs->root_tree, t);
	bt_key k = bt_mkkey(parent, BTRFS_ROOT_REF_KEY, child);
	int rc = bt_search(&fs->root_tree, &p, &k, 0, 0);
	if (rc == 0)
		*index = bt_path_item(&p)->v[1];
	bt_path_release(&p);
	return rc < 0 ? rc : rc ? LAB_ENOENT : 0;
}

/* Remove root's name: its DIR_ITEM/DIR_INDEX in the parent directory, its
 * ROOT_REF/ROOT_BACKREF, and update the parent directory inode (the part
 * of btrfs_delete_subvolume before the orphan item). */
static int subvol_unlink(subvol_ctx *sc, task *t, struct btrfs_root *root,
			 const char *name)
{
	fs_info *fs = sc->fs;
	struct btrfs_root *parent = fs_root_lookup(fs, root->parent_root);
	if (!parent)
		return LAB_ENOENT;
	uint32_t len = (uint32_t)strlen(name);
	uint64_t index = 0;
	int rc = root_ref_index(fs, t, parent->id, root->id, &index);
	if (rc)
		return rc;
	bt_key k = bt_mkkey(root->parent_dir, BTRFS_DIR_ITEM_KEY, items_dir_key_hash(name, len));
	rc = bt_delete(&parent->tree, t, &k);
	if (rc == 0) {
		k = bt_mkkey(root->parent_dir, BTRFS_DIR_INDEX_KEY, index);
		rc = bt_delete(&parent->tree, t, &k);
	}
	if (rc == 0) {
		k = bt_mkkey(parent->id, BTRFS_ROOT_REF_KEY, root->id);
		rc = bt_delete(&fs->root_tree, t, &k);
	}
	if (rc == 0) {
		k = bt_mkkey(root->id, BTRFS_ROOT_BACKREF_KEY, parent->id);
		rc = bt_delete(&fs->root_tree, t, &k);
	}
	if (rc == 0) {
		struct inode *dir = fs_inode_get(parent, root->parent_dir);
		if (dir) {
			dir->size -= 2ull * len; /* btrfs_i_size_write(dir, size - name_len * 2) */
			if (dir->nentries)
				dir->nentries--;
			dir->transid = fs->transid;
			rc = fs_inode_update(fs, t, dir);
		}
	}
	return rc;
}

/*
 * Delete a subvolume (see subvol.h). The parent's leaves are COWed by the
 * deletions (with quota on: two records per COWed fs-tree block). A
 * snapshot subvol_snapshot left unlinked (no parent_root) has no name to
 * remove: name may then be NULL.
 */
int subvol_delete(subvol_ctx *sc, trans_handle *h, struct btrfs_root *root,
		  const char *name)
{
	fs_info *fs = sc->fs;
	task *t = h->t;
	if (!root || root->dead || (root->parent_root && !name))
		return LAB_EINVAL;
	int rc = 0;
	sc->q->cur = t;
	if (root->parent_root)
		rc = subvol_unlink(sc, t, root, name);
	if (rc == 0) {
		/* btrfs_insert_orphan_item(tree_root, root id) */
		bt_item it;
		memset(&it, 0, sizeof it);
		bt_key k = bt_mkkey(BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, root->id);
		rc = bt_insert(&fs->root_tree, t, &k, 0, &it, NULL);
	}
	sc->q->cur = NULL;
	if (rc)
		return rc < 0 ? rc : LAB_EENGINE;
	root->refs = 0;
	root->dead = 1;
	root->item_dirty = 1;
	rc = fs_root_update_item(fs, t, root);
	if (rc)
		return rc;
	br_set_height(&sc->q->br, root->id, bt_tree_height(&root->tree));
	return dead_add(sc, root);
}

/* ---- the drop ------------------------------------------------------------ */

/*
 * Skip a child still shared with another tree (models the do_walk_down
 * path for wc->refs[level - 1] > 1 in DROP_REFERENCE: need_account ->
 * btrfs_qgroup_trace_subtree, then btrfs_free_extent of this tree's ref).
 */
static void drop_shared_child(subvol_ctx *sc, task *t, bt_node *child)
{
	qgroup_ctx *q = sc->q;
	qgroup_trace_subtree(q, child);
	int was = q->in_subtree;
	q->in_subtree = 1;
	qgroup_trace_extent(q, child->bytenr, BT_NODESIZE, QREC_SUBTREE);
	q->in_subtree = was;
	/* nothing below is reachable from this root any more */
	br_ref(&q->br, child->bytenr, BT_NODESIZE, 1, child->level, sc->cur->id, -1);
	q->in_subtree = 1;
	reach_subtree(q, child, sc->cur->id, -1);
	q->in_subtree = was;
	bt_free_block(&sc->cur->tree, child, t);
	sc->shared_skipped++;
}

/* Record the leaves of a tree about to be dropped, in key order (nothing
 * of it is freed yet, so the whole tree can be walked); trees are appended
 * in drop order, up to SV_PIC_MAX leaves. */
static void pic_walk(subvol_ctx *sc, const bt_node *n, int shared)
{
	shared = shared || n->mrefs > 1;
	if (n->level) {
		sc->pic_nodes++;
		for (int i = 0; i < n->nritems; i++)
			pic_walk(sc, n->ptrs[i].child, shared);
		return;
	}
	if (sc->npic >= SV_PIC_MAX)
		return;
	if (sc->npic == sc->pic_cap) {
		int nc = sc->pic_cap ? sc->pic_cap * 2 : 256;
		sv_pic_leaf *np = lab_realloc(sc->pic, (size_t)nc * sizeof *np);
		if (!np)
			return;
		sc->pic = np;
		sc->pic_cap = nc;
	}
	sv_pic_leaf *l = &sc->pic[sc->npic++];
	memset(l, 0, sizeof *l);
	l->bytenr = n->bytenr;
	l->nritems = (uint16_t)n->nritems;
	l->fill = (uint16_t)(n->used * 1000u / BT_LEAF_DATA_SIZE);
	l->shared = (uint8_t)shared;
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type == BTRFS_EXTENT_DATA_KEY && it->aux != FE_INLINE && it->v[0])
			l->data++;
	}
}

/* Count leaves under n (n is alive: shared with a kept snapshot). */
static int leaves_under(const bt_node *n)
{
	if (!n->level)
		return 1;
	int c = 0;
	for (int i = 0; i < n->nritems; i++)
		c += leaves_under(n->ptrs[i].child);
	return c;
}

/* The next `count` leaves of the picture were freed now. */
static void pic_mark(subvol_ctx *sc, int count, simtime_t at)
{
	uint64_t tid = sc->tm->running ? sc->tm->running->transid : sc->fs->transid;
	for (int i = 0; i < count && sc->pic_next < sc->npic; i++, sc->pic_next++) {
		sc->pic[sc->pic_next].transid = tid;
		sc->pic[sc->pic_next].freed_at = at;
	}
}

/* The picture as JSON: {root, height, nodes, leaves, roots: [[id, first,
 * count]], leaf: [[nritems, fill, data, shared, transid, freed_s]]}. */
void subvol_pic_json(const subvol_ctx *sc, strbuf *out)
{
	if (!sc->pic_root) {
		js_null(out);
		return;
	}
	js_obj(out);
	js_knum(out, "root", (double)sc->pic_root);
	js_kint(out, "height", sc->pic_height);
	js_kint(out, "nodes", sc->pic_nodes);
	js_kint(out, "leaves", sc->npic);
	js_key(out, "roots");
	js_arr(out);
	for (int i = 0; i < sc->npicroots; i++) {
		js_arr(out);
		for (int k = 0; k < 3; k++)
			js_num(out, (double)sc->picroots[i][k]);
		js_arr_end(out);
	}
	js_arr_end(out);
	js_key(out, "leaf");
	js_arr(out);
	for (int i = 0; i < sc->npic; i++) {
		const sv_pic_leaf *l = &sc->pic[i];
		js_arr(out);
		js_int(out, l->nritems);
		js_num(out, l->fill / 1000.0);
		js_int(out, l->data);
		js_int(out, l->shared);
		js_num(out, (double)l->transid);
		js_num(out, (double)l->freed_at / 1e9);
		js_arr_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}

/* The child at the cursor of `level` is dropped (freed, or its shared ref
 * given up): unlink it from its parent, which stays in memory until the
 * walk frees it too, so that a run closed mid-drop (bt_tree_destroy)
 * does not put it a second time. Nothing else walks a deleted root. */
static void drop_slot_done(subvol_ctx *sc, int level)
{
	sc->nodes[level]->ptrs[sc->slots[level]].child = NULL;
	sc->slots[level]++;
}

/*
 * One iteration of the drop loop: walk_down_tree to the next leaf
 * (skipping shared children), free it (walk_up_proc at level 0), then
 * walk_up_tree freeing finished nodes. Returns 1 when the tree is gone.
 */
static int drop_iteration(subvol_ctx *sc, task *t)
{
	qgroup_ctx *q = sc->q;
	struct btrfs_root *root = sc->cur;
	SIM_REC_OP(sc->fs->sim, TK_OP_DROP, t, sc->fs->rec_fs, (int64_t)root->id,
		(int64_t)sc->leaves_dropped);
	if (!sc->started) {
		bt_node *rn = root->tree.root;
		if (!sc->pic_root) {
			sc->pic_root = root->id;
			sc->pic_height = rn->level + 1;
		}
		if (sc->npic < SV_PIC_MAX && sc->npicroots < SV_PIC_ROOTS) {
			sc->picroots[sc->npicroots][0] = root->id;
			sc->picroots[sc->npicroots][1] = (uint64_t)sc->npic;
			pic_walk(sc, rn, 0);
			sc->picroots[sc->npicroots][2] = (uint64_t)sc->npic - sc->picroots[sc->npicroots][1];
			sc->npicroots++;
		}
		sc->top = rn->level;
		memset(sc->nodes, 0, sizeof sc->nodes);
		memset(sc->slots, 0, sizeof sc->slots);
		sc->nodes[sc->top] = rn;
		sc->level = sc->top;
		sc->started = 1;
	}
	int level = sc->level;
	/* walk_down_tree */
	while (level > 0) {
		bt_node *n = sc->nodes[level];
		if (sc->slots[level] >= n->nritems)
			break;
		bt_node *child = n->ptrs[sc->slots[level]].child;
		fs_charge(sc->fs, t, DROP_NS_BLOCK);
		if (child->mrefs > 1) {
			pic_mark(sc, leaves_under(child), t->clock);
			drop_shared_child(sc, t, child);
			drop_slot_done(sc, level);
			continue;
		}
		sc->nodes[level - 1] = child;
		sc->slots[level - 1] = 0;
		level--;
	}
	if (level == 0) {
		/* walk_up_proc on the leaf: dec_ref, trace_leaf_items, free */
		bt_node *leaf = sc->nodes[0];
		fs_charge(sc->fs, t, DROP_NS_BLOCK);
		qgroup_trace_leaf_items(q, leaf);
		bt_free_block(&root->tree, leaf, t);
		pic_mark(sc, 1, t->clock);
		sc->leaves_dropped++;
		sc->nodes[0] = NULL;
		level = 1;
		if (level > sc->top) {
			sc->level = level;
			return 1;
		}
		drop_slot_done(sc, level);
	}
	/* walk_up_tree: free every node whose children are all done */
	while (level <= sc->top && sc->slots[level] >= sc->nodes[level]->nritems) {
		fs_charge(sc->fs, t, DROP_NS_BLOCK);
		bt_free_block(&root->tree, sc->nodes[level], t);
		sc->nodes_dropped++;
		sc->nodes[level] = NULL;
		level++;
		if (level <= sc->top)
			drop_slot_done(sc, level);
	}
	sc->level = level;
	if (level > sc->top)
		return 1;
	/* drop_progress: the key of the next slot at the walk's level */
	sc->drop_level = level;
	sc->drop_progress = *bt_node_key(sc->nodes[level], sc->slots[level]);
	return 0;
}

/* Finish a root: delete its root item and orphan item (models the tail
 * of btrfs_drop_snapshot: btrfs_del_root, btrfs_del_orphan_item). */
static int drop_finish_root(subvol_ctx *sc, task *t)
{
	fs_info *fs = sc->fs;
	struct btrfs_root *root = sc->cur;
	bt_key k = bt_mkkey(BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, root->id);
	int rc = bt_delete(&fs->root_tree, t, &k);
	if (rc < 0)
		return rc;
	k = bt_mkkey(root->id, BTRFS_ROOT_ITEM_KEY, 0);
	rc = bt_delete(&fs->root_tree, t, &k);
	if (rc < 0)
		return rc;
	root->tree.root = NULL;
	root->tree.commit_root = NULL;
	root->deleted = 1;
	fs_root_forget(fs, root);
	sc->cur = NULL;
	sc->started = 0;
	sc->roots_dropped++;
	return 0;
}

/*
 * The cleaner kthread's step: one drop iteration of the current dead root
 * (btrfs_clean_one_deleted_snapshot -> btrfs_drop_snapshot), with the
 * should-end check after it. Idle (blocked) when no dead root is left.
 */
static int cleaner_step(sim *s, task *t)
{
	subvol_ctx *sc = t->ctx;
	qgroup_ctx *q = sc->q;
	int rc;
	if (sc->committing) {
		rc = trans_commit(&sc->h, TCOMMIT_THRESHOLD);
		if (rc == TRANS_WAIT)
			return TASK_BLOCKED;
		sc->committing = 0;
		sc->have_handle = 0;
		if (rc < 0)
			goto fail;
	}
	if (!sc->cur) {
		if (sc->next >= sc->ndead) {
			sc->cleaner_idle = 1;
			if (sc->drop_started && !sc->drop_end)
				sc->drop_end = t->clock;
			if (sc->on_idle)
				sc->on_idle(sc->idle_ctx, t->clock);
			return TASK_BLOCKED;
		}
		sc->cur = sc->dead[sc->next++];
		sc->started = 0;
		if (!sc->drop_started) {
			sc->drop_started = 1;
			sc->drop_start = t->clock;
		}
	}
	if (!sc->have_handle) {
		rc = trans_start(sc->tm, t, &sc->h);
		if (rc == TRANS_WAIT)
			return TASK_BLOCKED;
		if (rc < 0)
			goto fail;
		sc->have_handle = 1;
	}
	q->cur = t;
	q->dropping = sc->cur->id;
	int done = drop_iteration(sc, t);
	sc->iterations++;
	if (done) {
		rc = drop_finish_root(sc, t);
		q->dropping = 0;
		q->cur = NULL;
		if (rc)
			goto fail;
		sc->have_handle = 0;
		sc->handles_ended++;
		rc = trans_end(&sc->h, 1);
		if (rc < 0)
			goto fail;
		return TASK_RUN;
	}
	rc = 0;
	if (trans_should_end(&sc->h)) {
		/* btrfs_update_root(trans, tree_root, &root->root_key, root_item) */
		sc->cur->item_dirty = 1;
		rc = fs_root_update_item(sc->fs, t, sc->cur);
		if (!rc && trans_should_commit(&sc->h)) {
			sc->threshold_commits++;
			sc->committing = 1;
			q->cur = NULL;
			q->dropping = 0;
			rc = trans_commit(&sc->h, TCOMMIT_THRESHOLD);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			sc->committing = 0;
			sc->have_handle = 0;
		} else if (!rc) {
			sc->handles_ended++;
			sc->have_handle = 0;
			rc = trans_end(&sc->h, 1);
		}
	}
	q->cur = NULL;
	q->dropping = 0;
	if (rc < 0)
		goto fail;
	return TASK_RUN;
fail:
	q->cur = NULL;
	q->dropping = 0;
	sc->failed = rc;
	if (sc->on_idle)
		sc->on_idle(sc->idle_ctx, t->clock);
	return TASK_DONE;
}

/* Spawn the cleaner kthread at `at`; 0 or LAB_ENOMEM. */
int subvol_cleaner_start(subvol_ctx *sc, simtime_t at)
{
	sc->cleaner = task_spawn(sc->fs->sim, "btrfs-cleaner", cleaner_step, sc, at);
	return sc->cleaner ? 0 : LAB_ENOMEM;
}

/* Wake the idle cleaner when dead roots wait (the kthread calls this on
 * every round, as transaction_kthread wakes cleaner_kthread). */
void subvol_wake_cleaner(void *ctx, simtime_t at)
{
	subvol_ctx *sc = ctx;
	if (!sc->cleaner || !sc->cleaner_idle || sc->next >= sc->ndead)
		return;
	sc->cleaner_idle = 0;
	task_wake(sc->fs->sim, sc->cleaner, at);
}

/* Blocks dropped or skipped over blocks queued, in [0,1]. */
double subvol_drop_progress(const subvol_ctx *sc)
{
	if (!sc->blocks_total)
		return 0;
	double p = (double)(sc->leaves_dropped + sc->nodes_dropped + sc->shared_skipped) /
		   (double)sc->blocks_total;
	return p > 1 ? 1 : p;
}
