/*
 * treelog_copy.c - copying an inode's items into the log tree: the
 * read-locked walk of the subvolume leaves (btrfs_search_forward),
 * copy_inode_items_to_log / log_dir_items with copy_items, the fast
 * fsync's changed extents (btrfs_log_changed_extents), holes and the
 * logged directory index ranges. See treelog.h.
 */
#include "treelog.h"
#include "treelog_int.h"

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "delayed_inode.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

/* Done with a dir pass's deletion list: its buffer is kept for the next
 * pass (one malloc per fsync of a directory saved), the larger of two. */
void tl_dl_del_put(treelog *tl, tl_fsync *f)
{
	uint64_t *b = f->dl_del;
	int cap = f->dl_del_cap;
	f->dl_del = NULL;
	f->ndl_del = 0;
	f->dl_del_cap = 0;
	if (!b)
		return;
	if (tl->dl_spare && tl->dl_spare_cap >= cap) {
		free(b);
		return;
	}
	free(tl->dl_spare);
	tl->dl_spare = b;
	tl->dl_spare_cap = cap;
}

/* ------------------------------------------------------------ logging */

/* The log tree of lr, made by the first log transaction after a commit
 * (start_log_trans -> btrfs_add_log_tree). */
int tl_log_tree(treelog *tl, task *t, tl_root *lr, fs_info *fs)
{
	if (lr->log.root)
		return 0;
	return bt_tree_init_priv(fs, &lr->log, BTRFS_TREE_LOG_OBJECTID, &tl->ops, lr->log_gen, t);
}

/* Put one item into the log tree (copy_items' btrfs_insert_empty_items and
 * the copy). An item of that key already logged is replaced, or with
 * replace = 0 left as it is (a dir index item logged before). A
 * replacement of the same size is written over the item the insert's
 * search found, as insert_dir_log_key and log_inode_item do (-EEXIST
 * leaves the path at it); another size is deleted and inserted again. */
int tl_log_put(treelog *tl, task *t, tl_root *lr, const bt_item *it, int replace)
{
	bt_tree *lt = &lr->log;
	bt_path p;
	int r = bt_insert(lt, t, &it->key, it->size, it, &p);
	if (r == 1) {
		bt_item *x = bt_path_item(&p);
		if (!replace) {
			bt_path_release(&p);
			return 0;
		}
		if (x && x->size == it->size) {
			*x = *it;
			bt_mark_dirty(lt, &p);
			bt_path_release(&p);
			tl->items_logged++;
			return 0;
		}
		bt_path_release(&p);
		r = bt_delete(lt, t, &it->key);
		if (r == 0)
			r = bt_insert(lt, t, &it->key, it->size, it, NULL);
		if (r == 0)
			lr->log_items--;
	} else if (r == 0) {
		bt_path_release(&p);
	}
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	lr->log_items++;
	tl->items_logged++;
	return 0;
}

/* Drop an inode's items of types min_type..max_type from the log before
 * logging it again, as btrfs_log_inode -> drop_inode_items does: a
 * deleting search for the inode's last such key, then all of them in
 * that leaf deleted as one batch (btrfs_del_items); only a batch that
 * began at the leaf's first slot can have more in the leaf before it,
 * and only then is the search repeated. */
int tl_log_drop_inode(treelog *tl, task *t, tl_root *lr, uint64_t ino, uint8_t min_type,
		      uint8_t max_type)
{
	bt_tree *lt = &lr->log;
	const bt_key first = bt_mkkey(ino, min_type, 0);
	(void)tl;
	for (;;) {
		bt_key k = bt_mkkey(ino, max_type, UINT64_MAX);
		bt_path p;
		bt_path_init(&p, lt, t);
		int r = bt_search(lt, &p, &k, -1, 1);
		if (r < 0) {
			bt_path_release(&p);
			return r;
		}
		int last = p.slots[0];
		if (r == 1) {
			/* the slot after the inode's last key: none left when
			 * that is the tree's first slot */
			if (last == 0) {
				bt_path_release(&p);
				return 0;
			}
			last--;
		}
		const bt_node *leaf = p.nodes[0];
		if (bt_key_cmp(bt_node_key(leaf, last), &first) < 0) {
			bt_path_release(&p);
			return 0;
		}
		int start = bt_items_lower(leaf->items, last, &first);
		p.slots[0] = start;
		r = bt_del_items(lt, &p, last - start + 1);
		if (r)
			return r < 0 ? r : LAB_EENGINE;
		lr->log_items -= (uint64_t)(last - start + 1);
		if (start != 0)
			return 0;
	}
}

/* A logged directory index range [start, end] (insert_dir_log_key): at
 * replay, a committed entry inside it that the log does not hold is
 * deleted. */
static int tl_log_range(treelog *tl, task *t, tl_root *lr, uint64_t dir, uint64_t start,
			uint64_t end)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(dir, BTRFS_DIR_LOG_INDEX_KEY, start);
	it.size = SZ_DIR_LOG_ITEM;
	it.v[0] = end;
	return tl_log_put(tl, t, lr, &it, 1);
}

/* A logged range that must cover [start, end]: kept when a range logged
 * from that index already does. */
static int tl_log_range_cover(treelog *tl, task *t, tl_root *lr, uint64_t dir, uint64_t start,
			      uint64_t end)
{
	bt_key k = bt_mkkey(dir, BTRFS_DIR_LOG_INDEX_KEY, start);
	bt_path p;
	bt_path_init(&p, &lr->log, t);
	int r = bt_search(&lr->log, &p, &k, 0, 0);
	uint64_t have = 0;
	if (r == 0)
		have = bt_path_item(&p)->v[0];
	bt_path_release(&p);
	if (r < 0)
		return r;
	if (r == 0 && have >= end)
		return 0;
	return tl_log_range(tl, t, lr, dir, start, end);
}

/* A dir pass's changed leaves copied in a row are covered by one logged
 * range, as log_dir_items logs one over the leaves it walks while they
 * are from the running transaction: the range grows with each leaf... */
static void tl_range_extend(tl_fsync *f, uint64_t ino, uint64_t hi)
{
	if (!f->range_open) {
		f->range_open = 1;
		f->range_lo = f->range_start;
		f->range_ino = ino;
	}
	f->range_hi = hi;
}

/* ... and is logged when the run ends: at an unchanged leaf, or at the
 * end of the pass. */
int tl_range_flush(treelog *tl, task *t, tl_fsync *f)
{
	if (!f->range_open)
		return 0;
	f->range_open = 0;
	return tl_log_range(tl, t, f->lr, f->range_ino, f->range_lo, f->range_hi);
}

/* The start of a dir pass (6.1+, "use delayed items when logging a
 * directory"): the directory's delayed items are taken first
 * (btrfs_log_get_delayed_items); its queued new names go into the log
 * straight from memory (log_delayed_insertion_items: no subvolume leaf
 * locked, nothing cloned); its queued deletions are kept for the end of
 * the pass. */
int tl_dir_delayed_start(treelog *tl, task *t, tl_fsync *f)
{
	fs_info *fs = f->root->fs;
	delayed_root *dr = dl_of(fs);
	tl_dl_del_put(tl, f);
	if (!dr)
		return 0;
	struct inode *d = fs_inode_get(f->root, f->dir_ino);
	const dl_ins *ins;
	int nins, ndel;
	dl_dir_items(dr, d, &ins, &nins, &ndel);
	if (!nins && !ndel)
		return 0;
	task_cpu(tl->sim, t, (uint64_t)(nins + ndel) * TL_NS_SLOT);
	inode_log dlg = d ? inode_log_get(d) : (inode_log){0};
	uint64_t skip_to = dlg.logged_trans == fs->transid ? dlg.last_dir_index_offset : 0;
	int rc = 0;
	for (int i = 0; i < nins && !rc; i++) {
		if (skip_to && ins[i].index <= skip_to)
			continue;
		rc = tl_log_put(tl, t, f->lr, &ins[i].it, 0);
		if (ins[i].index > f->dir_logged_max)
			f->dir_logged_max = ins[i].index;
	}
	if (!rc && ndel) {
		if (tl->dl_spare && tl->dl_spare_cap >= ndel) {
			f->dl_del = tl->dl_spare;
			f->dl_del_cap = tl->dl_spare_cap;
			tl->dl_spare = NULL;
		} else {
			f->dl_del = lab_malloc((size_t)ndel * sizeof(*f->dl_del));
			if (!f->dl_del)
				return LAB_ENOMEM;
			f->dl_del_cap = ndel;
		}
		f->ndl_del = dl_log_take_deletions(dr, d, f->dl_del);
		tl->dels_logged += (uint64_t)f->ndl_del;
	}
	return rc;
}

/* The end of a dir pass: the names deleted but still queued leave the log
 * and their indexes are logged as ranges, so a replay drops them from the
 * committed directory (log_delayed_deletion_items). */
int tl_dir_delayed_end(treelog *tl, task *t, tl_fsync *f)
{
	int rc = 0;
	for (int i = 0; i < f->ndl_del && !rc;) {
		int j = i;
		while (j + 1 < f->ndl_del && f->dl_del[j + 1] == f->dl_del[j] + 1)
			j++;
		for (int k = i; k <= j && !rc; k++) {
			bt_key key = bt_mkkey(f->dir_ino, BTRFS_DIR_INDEX_KEY, f->dl_del[k]);
			int r = bt_delete(&f->lr->log, t, &key);
			if (r == 0)
				f->lr->log_items--;
			else if (r < 0)
				rc = r;
		}
		if (!rc)
			rc = tl_log_range_cover(tl, t, f->lr, f->dir_ino, f->dl_del[i], f->dl_del[j]);
		i = j + 1;
	}
	tl_dl_del_put(tl, f);
	return rc;
}

/* The index items a directory logged before in this transaction
 * (inode->last_dir_index_offset): a dir pass skips them. Only grows while
 * an fsync holds its transaction handle. 0: none. */
static uint64_t tl_dir_skip_to(const tl_fsync *f, uint64_t dir_ino)
{
	fs_info *fs = f->root->fs;
	struct inode *dir = fs_inode_get(f->root, dir_ino);
	if (!dir || !fs || inode_log_get(dir).logged_trans != fs->transid)
		return 0;
	return inode_log_get(dir).last_dir_index_offset;
}

/* The first of items [from, to) past skip_to, when they are one
 * directory's index items (sorted by index: the ones logged before are a
 * prefix); else from (each item is checked on its own). */
static int tl_skip_logged(const bt_item *items, int from, int to, uint64_t skip_to)
{
	if (!skip_to || from >= to || items[from].key.type != items[to - 1].key.type)
		return from;
	bt_key k = items[from].key;
	k.offset = skip_to;
	from += bt_items_lower(items + from, to - from, &k);
	if (from < to && items[from].key.offset == skip_to)
		from++;
	return from;
}

/*
 * Copy the next leaf's worth of inode ino's items of types <= max_type
 * into the log (one step of copy_inode_items_to_log + copy_items, or of
 * log_dir_items + process_dir_items_leaf). Leaves older than min_trans
 * are passed over without a copy (btrfs_search_forward's min_trans).
 * Returns 1 when the inode has no more items, 0 to continue, negative on
 * error. The subvolume leaf is read-locked from the search until its
 * content is in a private buffer: BEFORE that includes the clone's
 * allocation, AFTER only a copy into the preallocated scratch eb.
 */
int tl_copy_leaf(treelog *tl, task *t, tl_fsync *f, uint64_t ino, uint8_t max_type,
		 uint64_t min_trans)
{
	bt_tree *tr = &f->root->tree;
	int dirpass = max_type == BTRFS_DIR_INDEX_KEY;
	/* search hints: a pass's first descent starts from where the last
	 * pass of its kind began, the later ones from the descent before */
	int first_desc = f->next_key.offset == 0 &&
			 f->next_key.type == (dirpass ? BTRFS_DIR_INDEX_KEY : 0);
	int *hints = f->hints;
	if (first_desc && (dirpass || f->isdir)) {
		unsigned k = (unsigned)(ino % TL_DIR_HINTS);
		if (tl->dir_hints[k].ino != ino) {
			memset(&tl->dir_hints[k], 0, sizeof(tl->dir_hints[k]));
			tl->dir_hints[k].ino = ino;
		}
		hints = tl->dir_hints[k].h[dirpass];
	} else if (first_desc) {
		hints = tl->hints;
	}
	/* btrfs_search_forward's descent: read locks coupled down to the
	 * leaf, which stays read-locked until its items are copied */
	bt_rpath rp;
	assert(tr->fs && tr->fs->sim == tl->sim);
	bt_node *leaf = bt_search_read(tr, tr->root, t, &f->next_key, hints, &rp);
	if (first_desc)
		memcpy(f->hints, hints, sizeof(f->hints));
	f->hints[0] = 0; /* the next descent starts a leaf */
	if (!leaf)
		return 1;
	int slot = rp.slots[0], has_next = rp.has_next;
	bt_key next_key = rp.next_key;
	uint64_t wait = rp.lock_wait;
	simtime_t locked_at = rp.leaf_locked_at;
	f->rec.lock_wait_ns += wait;
	if (wait)
		lhist_add(&tl->leaf_wait, wait);

	/* the search landed past this leaf's last item: continue in the next
	 * leaf (btrfs_search_forward moves on by itself) */
	if (slot >= leaf->nritems) {
		bt_rpath_unlock(tr, t, &rp);
		if (!has_next || bt_key_cmp(&next_key, &f->next_key) <= 0)
			return 1;
		f->next_key = next_key;
		return next_key.objectid == ino ? 0 : 1;
	}
	/* collect the inode's slots: the run from slot of keys of ino with
	 * type <= max_type. The keys are sorted, so once the slot's key is
	 * ino's, the run ends at the first key past (ino, max_type, ~0). */
	int first = slot, last = slot;
	if (leaf->items[slot].key.objectid == ino) {
		bt_key bound = bt_mkkey(ino, max_type, UINT64_MAX);
		last = bt_items_upper(leaf->items, slot, leaf->nritems, &bound);
	}
	task_cpu(tl->sim, t, (uint64_t)(last - first + 1) * TL_NS_SLOT);
	if (last == first) {
		int changed = leaf->generation >= min_trans;
		bt_rpath_unlock(tr, t, &rp);
		/* a directory with no entry left in a changed leaf: the
		 * range to its end is logged empty */
		if (dirpass && changed)
			tl_range_extend(f, ino, UINT64_MAX);
		return 1;
	}
	int more = last == leaf->nritems && has_next &&
		   next_key.objectid == ino && next_key.type <= max_type;
	bt_key resume = leaf->items[last - 1].key;
	if (leaf->generation < min_trans) {
		/* unchanged in this transaction: nothing of it to log; the
		 * next logged range starts after its entries */
		bt_rpath_unlock(tr, t, &rp);
		if (dirpass) {
			int rc = tl_range_flush(tl, t, f);
			if (rc)
				return rc;
			f->range_start = resume.offset + 1;
		}
		if (!more)
			return 1;
		f->next_key = next_key;
		return 0;
	}

	/* get the leaf into a private buffer while it is still locked. The
	 * simulated copy is of the whole leaf; the host copies only the
	 * items the put can use: a dir pass's items logged before are
	 * skipped there (the skip point cannot move back meanwhile) */
	if (dirpass)
		first = tl_skip_logged(leaf->items, first, last, tl_dir_skip_to(f, ino));
	ebmem_eb *clone = NULL;
	uint64_t lat = 0;
	int rc;
	if (f->scratch) {
		rc = ebmem_copy_slots(tl->mem, t, f->scratch, leaf, first, last);
		tl->scratch_used++;
	} else {
		rc = ebmem_clone_slots(tl->mem, t, leaf, first, last, &clone, &lat);
		f->rec.alloc_locked_ns += lat;
		lhist_add(&tl->alloc_locked, lat);
		tl->clones++;
	}
	bt_rpath_unlock(tr, t, &rp);
	uint64_t hold = t->clock - locked_at;
	lhist_add(&tl->leaf_hold, hold);
	sim_trace(tl->sim, tl->k_leaf, t->id, (int64_t)leaf->bytenr, (int64_t)hold,
		  (int64_t)lat);
	if (hold > f->rec.hold_max_ns)
		f->rec.hold_max_ns = hold;
	{
		uint32_t j = tl->nholds++ % TL_HOLD_RING;
		tl->holds[j].bytenr = leaf->bytenr;
		tl->holds[j].ino = ino;
		tl->holds[j].from = locked_at;
		tl->holds[j].to = t->clock;
	}
	if (tl->on_leaf) {
		tl_leaf_ev ev = { t->id, ino, leaf->bytenr, locked_at, t->clock, lat,
				  f->scratch != NULL, dirpass };
		tl->on_leaf(tl->obs_ctx, &ev);
	}
	if (rc)
		return rc;

	/* the copy goes into the log in the next step, with no subvolume
	 * lock held (copy_items after btrfs_release_path) */
	f->pend = f->scratch ? f->scratch : clone;
	f->pend_clone = clone != NULL;
	f->pend_first = first;
	f->pend_last = last;
	f->pend_ino = ino;
	f->pend_end = more ? next_key.offset - 1 : UINT64_MAX;
	f->pend_more = more;
	f->rec.leaves++;
	tl->leaves_copied++;
	if (!more)
		return 0;
	/* the next leaf starts right after the last key copied */
	f->next_key = resume;
	if (f->next_key.offset != UINT64_MAX) {
		f->next_key.offset++;
	} else if (f->next_key.type != 255) {
		f->next_key.type++;
		f->next_key.offset = 0;
	} else {
		f->pend_more = 0;
	}
	return 0;
}

/* An explicit hole in the log (btrfs_log_holes: with NO_HOLES a full sync
 * logs the gaps, so a replay punches what the committed file had there). */
int tl_log_hole(treelog *tl, task *t, tl_fsync *f, uint64_t from, uint64_t to)
{
	if (to <= from)
		return 0;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(f->inode->ino, BTRFS_EXTENT_DATA_KEY, from);
	it.size = SZ_FE_REG;
	it.aux = FE_REG;
	it.v[1] = to - from;
	return tl_log_put(tl, t, f->lr, &it, 1);
}

/* Put a batch of items, sorted by key, into the log: each run that one
 * search can place goes in at once (copy_items' btrfs_insert_empty_items
 * with the batch); an item already logged is handled on its own as
 * tl_log_put does (replaced, or with replace = 0 kept). */
static int tl_log_put_batch(treelog *tl, task *t, tl_root *lr, const bt_item *items, int n,
			    int replace)
{
	for (int i = 0; i < n;) {
		int r = bt_insert_items(&lr->log, t, items + i, n - i);
		if (r < 0)
			return r;
		if (r == 0) {
			r = tl_log_put(tl, t, lr, &items[i], replace);
			if (r)
				return r;
			i++;
			continue;
		}
		lr->log_items += (uint64_t)r;
		tl->items_logged += (uint64_t)r;
		i += r;
	}
	return 0;
}

/* Insert the leaf copied in the previous step into the log (copy_items:
 * the items gathered into one batch, the inode item filled from memory),
 * then free the clone. Returns 1 when the pass has no more leaves, 0 to
 * continue, negative on error. */
int tl_put_pending(treelog *tl, task *t, tl_fsync *f)
{
	const ebmem_eb *src = f->pend;
	int dirpass = f->state == TLS_DIRS;
	int rc = 0;
	struct inode *dir = dirpass ? fs_inode_get(f->root, f->pend_ino) : NULL;
	fs_info *fs = f->root->fs;
	/* dir index items logged before in this transaction */
	uint64_t skip_to = dirpass ? tl_dir_skip_to(f, f->pend_ino) : 0;
	int from = tl_skip_logged(src->items, f->pend_first, f->pend_last, skip_to);
	if (f->pend_last - from > tl->batch_cap) {
		/* an error goes on to free the clone below */
		int cap = f->pend_last - from;
		bt_item *b = lab_malloc((size_t)cap * sizeof(*b));
		if (b) {
			free(tl->batch);
			tl->batch = b;
			tl->batch_cap = cap;
		} else {
			rc = LAB_ENOMEM;
		}
	}
	bt_item *batch = tl->batch;
	int nb = 0;
	for (int i = from; i < f->pend_last && !rc; i++) {
		const bt_item *x = &src->items[i];
		if (dirpass && skip_to && x->key.offset <= skip_to)
			continue;
		if (dirpass && dir && x->key.offset > f->dir_logged_max)
			f->dir_logged_max = x->key.offset;
		if (!dirpass && x->key.type == BTRFS_EXTENT_DATA_KEY) {
			/* a hole before the extent: the batch so far goes
			 * first, the hole after it (btrfs_log_holes inserts
			 * each hole on its own) */
			if (x->key.offset > f->fe_end) {
				rc = tl_log_put_batch(tl, t, f->lr, batch, nb, 1);
				nb = 0;
				if (!rc)
					rc = tl_log_hole(tl, t, f, f->fe_end, x->key.offset);
			}
			uint64_t len = x->aux == FE_INLINE
				? (x->v[1] + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE : x->v[1];
			f->fe_end = x->key.offset + len;
			if (rc)
				break;
		}
		batch[nb] = *x;
		if (!dirpass && x->key.type == BTRFS_INODE_ITEM_KEY) {
			/* copy_items fills the logged inode item from the
			 * inode in memory (fill_inode_item): an update still
			 * queued as a delayed item is logged too */
			bt_item fresh;
			struct inode *in = fs_inode_get(f->root, x->key.objectid);
			if (in && dl_pending_inode_item(dl_of(fs), in, &fresh)) {
				fresh.key = x->key;
				fresh.size = x->size;
				batch[nb] = fresh;
			}
		}
		nb++;
	}
	if (!rc)
		rc = tl_log_put_batch(tl, t, f->lr, batch, nb, !dirpass);
	if (!rc && dirpass) {
		tl_range_extend(f, f->pend_ino, f->pend_end);
		f->range_start = f->pend_end == UINT64_MAX ? f->pend_end : f->pend_end + 1;
	}
	if (f->pend_clone) {
		ebmem_free(tl->mem, f->pend);
		task_cpu(tl->sim, t, EBMEM_NS_FREE);
	}
	f->pend = NULL;
	f->pend_clone = 0;
	if (rc)
		return rc;
	return f->pend_more ? 0 : 1;
}

/* An inode item filled from the in-memory inode (fill_inode_item). */
bt_item tl_inode_item(const struct inode *in)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(in->ino, BTRFS_INODE_ITEM_KEY, 0);
	it.size = SZ_INODE_ITEM;
	it.v[0] = in->size;
	it.v[1] = in->nbytes;
	it.v[2] = in->generation;
	it.aux = in->mode;
	return it;
}

int tl_log_ref(treelog *tl, task *t, tl_root *lr, struct btrfs_root *root, struct inode *in,
	       uint64_t dir)
{
	bt_tree *tr = &root->tree;
	bt_key k = bt_mkkey(in->ino, BTRFS_INODE_REF_KEY, dir);
	bt_path p;
	bt_path_init(&p, tr, t);
	int found = bt_search(tr, &p, &k, 0, 0);
	bt_item ref;
	if (found == 0)
		ref = *bt_path_item(&p);
	bt_path_release(&p);
	if (found < 0)
		return found;
	return found == 0 ? tl_log_put(tl, t, lr, &ref, 1) : 0;
}

int tl_log_new_dir(treelog *tl, task *t, tl_root *lr, struct btrfs_root *root, struct inode *d)
{
	bt_item ii = tl_inode_item(d);
	int r = tl_log_put(tl, t, lr, &ii, 1);
	if (!r)
		r = tl_log_ref(tl, t, lr, root, d, d->parent);
	inode_log *l = r || !root->fs ? NULL : fs_inode_log(root->fs, d);
	if (l)
		l->logged_trans = root->fs->transid;
	return r;
}

/* A hole item for [from, to) of inode ino (what log_one_extent logs for
 * a hole extent map: a regular extent with disk_bytenr 0). */
static bt_item tl_hole_item(uint64_t ino, uint64_t from, uint64_t to)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.key = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, from);
	it.size = SZ_FE_REG;
	it.aux = FE_REG;
	it.v[1] = to - from;
	return it;
}

/*
 * The fast fsync's logging: the inode item filled from memory and the
 * extents changed in this transaction, which btrfs takes from the
 * inode's modified extent maps (btrfs_log_changed_extents): here the
 * file extent items of the inode's leaves COWed in this transaction, read
 * without a subvolume lock (the extent maps are memory; no clone).
 *
 * The modified maps include holes: a write past EOF adds a hole map over
 * the gap from the old EOF (btrfs_cont_expand -> btrfs_replace_extent_map_range
 * with modified = true), and log_one_extent logs it as an extent with
 * disk_bytenr 0, which replay_one_extent replays as btrfs_drop_extents
 * over the range: the committed extents there (cut by a truncate earlier
 * in this transaction) are gone after a replay. The kernel's fast path
 * keeps the extents and holes logged before (drop_inode_items stops at
 * the xattrs); this one drops the inode's extent items (tls_join) and
 * logs those of the changed leaves again, so it logs the holes again
 * too: each gap before a changed extent, and the gap from the last
 * extent to EOF. A truncate is the only thing that removes a committed
 * extent without putting another over its range, and it removes the
 * tail, so what it removed lies in one of those gaps (fuzz finding
 * torture-fast-fsync-hole-1: a replay brought a truncated extent back
 * into the range a write past EOF grew the file over).
 */
int tl_log_fast(treelog *tl, task *t, tl_fsync *f)
{
	tl_root *lr = f->lr;
	struct inode *in = f->inode;
	bt_item ii = tl_inode_item(in);
	int rc = tl_log_put(tl, t, lr, &ii, 1);
	fs_info *fs = f->root->fs;
	if (rc || !fs || (in->mode & S_IFMT_) != S_IFREG_)
		return rc;
	bt_tree *tr = &f->root->tree;
	bt_key k = bt_mkkey(in->ino, BTRFS_EXTENT_DATA_KEY, 0);
	bt_path p;
	fs->accounting_off++;
	bt_path_init(&p, tr, NULL);
	int r = bt_search(tr, &p, &k, 0, 0);
	bt_item buf[16];
	int nbuf = 0;
	uint64_t fe_end = 0; /* the end of the extent before (btrfs_log_holes' walk) */
	while (r >= 0 && !rc) {
		const bt_item *x = bt_path_item(&p);
		if (!x) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		if (x->key.objectid != in->ino || x->key.type != BTRFS_EXTENT_DATA_KEY)
			break;
		if (p.nodes[0]->generation >= fs->transid) {
			if (x->key.offset > fe_end)
				buf[nbuf++] = tl_hole_item(in->ino, fe_end, x->key.offset);
			buf[nbuf++] = *x;
		}
		fe_end = x->key.offset + (x->aux == FE_INLINE
			? (x->v[1] + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE : x->v[1]);
		if (nbuf >= 15 || bt_next_item(tr, &p)) {
			/* insert outside the subvolume walk (room for a hole
			 * and an extent is kept) */
			bt_key resume = x->key;
			int end = nbuf < 15;
			bt_path_release(&p);
			fs->accounting_off--;
			for (int i = 0; i < nbuf && !rc; i++)
				rc = tl_log_put(tl, t, lr, &buf[i], 1);
			fs->accounting_off++;
			nbuf = 0;
			if (end)
				break;
			resume.offset++;
			bt_path_init(&p, tr, NULL);
			r = bt_search(tr, &p, &resume, 0, 0);
		}
	}
	bt_path_release(&p);
	fs->accounting_off--;
	/* and the hole from the last extent to EOF (a truncate up's hole
	 * map, or the one a full sync logged before) */
	uint64_t eof = (in->size + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
	if (r >= 0 && !rc && eof > fe_end)
		buf[nbuf++] = tl_hole_item(in->ino, fe_end, eof);
	for (int i = 0; i < nbuf && !rc; i++)
		rc = tl_log_put(tl, t, lr, &buf[i], 1);
	return r < 0 ? r : rc;
}
