/*
 * treelog_fsync.c - one fsync's log part as a state machine, one function
 * per state (tls_*, enum tl_state in treelog.h): btrfs_sync_file's choice
 * (skip, commit, full or fast log), btrfs_log_dentry_safe
 * (start_log_trans, btrfs_log_inode's copy passes, end_log_trans), then
 * btrfs_sync_log (treelog_sync.c). See treelog.h.
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

void treelog_fsync_abandon(treelog *tl, tl_fsync *f)
{
	tl_dl_del_put(tl, f);
	if (f->pend && f->pend_clone)
		ebmem_free(tl->mem, f->pend);
	f->pend = NULL;
	if (f->scratch) {
		ebmem_free(tl->mem, f->scratch);
		f->scratch = NULL;
	}
}

/* Prepare an fsync's log context (btrfs_init_log_ctx). */
int treelog_fsync_init(tl_fsync *f, struct btrfs_root *root,
		       struct inode *inode, uint32_t new_extents)
{
	return treelog_fsync_init_parent(f, root, inode, new_extents, NULL);
}

/* Prepare an fsync that also logs the parent directory's changes. */
int treelog_fsync_init_parent(tl_fsync *f, struct btrfs_root *root,
			      struct inode *inode, uint32_t new_extents,
			      struct inode *parent)
{
	if (!f || !root || !inode || parent == inode)
		return LAB_EINVAL;
	if (parent && (parent->mode & S_IFMT_) != S_IFDIR_)
		return LAB_EINVAL;
	memset(f, 0, sizeof(*f));
	f->root = root;
	f->inode = inode;
	f->new_extents = new_extents;
	f->state = TLS_START;
	f->parent = parent;
	f->rec.ino = inode->ino;
	return 0;
}

/* Finish the record of an fsync and file it. */
static void tl_record(treelog *tl, task *t, tl_fsync *f)
{
	f->rec.end = t->clock;
	f->rec.phase = (uint8_t)tl->phase;
	uint64_t lat = f->rec.end - f->rec.start;
	lhist_add(&tl->phase_lat[tl->phase], lat);
	tl->recs[tl->nrecs % tl->cfg.max_records] = f->rec;
	tl->nrecs++;
	sim_series_add(tl->sim, tl->s_fsync_ms, f->rec.end, (double)lat / 1e6);
	if (tl->phase_series[tl->phase] >= 0)
		sim_series_add(tl->sim, tl->phase_series[tl->phase], f->rec.end, (double)lat / 1e6);
	sim_trace(tl->sim, tl->k_fsync, t->id, (int64_t)f->rec.ino, (int64_t)lat, f->rec.full);
	sim_count(tl->sim, tl->c_fsync, 1);
}

/* The directory of ino's first name (its first INODE_REF), 0 if none: a
 * lookup the kernel does not pay (the dentry's parent is in memory). */
static uint64_t tl_ref_parent(fs_info *fs, struct btrfs_root *root, uint64_t ino)
{
	bt_tree *tr = &root->tree;
	bt_key k = bt_mkkey(ino, BTRFS_INODE_REF_KEY, 0);
	bt_path p;
	uint64_t par = 0;
	fs->accounting_off++;
	bt_path_init(&p, tr, NULL);
	int r = bt_search(tr, &p, &k, 0, 0);
	if (r >= 0) {
		const bt_item *x = bt_path_item(&p);
		if (!x && bt_next_leaf(tr, &p) == 0)
			x = bt_path_item(&p);
		if (x && x->key.objectid == ino && x->key.type == BTRFS_INODE_REF_KEY)
			par = x->key.offset;
	}
	bt_path_release(&p);
	fs->accounting_off--;
	return par;
}

/* btrfs_log_inode_parent's look at the ancestors: a rename the log could
 * not record above the inode forces a commit; directories made in this
 * transaction get logged with their names (log_all_new_ancestors). */
static void tl_ancestors(tl_fsync *f, fs_info *fs)
{
	struct inode *in = f->inode;
	if (inode_log_get(in).last_unlink_trans == fs->transid ||
	    (f->parent && inode_log_get(f->parent).last_unlink_trans == fs->transid)) {
		f->need_commit = 1;
		return;
	}
	uint64_t p = f->isdir ? in->parent : tl_ref_parent(fs, f->root, in->ino);
	for (int depth = 0; p && p != BTRFS_FIRST_FREE_OBJECTID && depth < 64; depth++) {
		struct inode *d = fs_inode_get(f->root, p);
		if (!d || d == in)
			break;
		if (inode_log_get(d).last_unlink_trans == fs->transid) {
			f->need_commit = 1;
			return;
		}
		if (d->generation == fs->transid && inode_log_get(d).logged_trans != fs->transid &&
		    d != f->parent) {
			if (f->nanc == (int)(sizeof f->anc / sizeof f->anc[0])) {
				f->need_commit = 1; /* deeper than we log: commit */
				return;
			}
			f->anc[f->nanc++] = d->ino;
		}
		p = d->parent;
	}
}

/* A step failed: the fsync leaves the log transaction with the error
 * (TLS_END), which its caller gets once the sync is done. */
static int tl_fail(tl_fsync *f, int r)
{
	f->error = r;
	f->state = TLS_END;
	return TASK_RUN;
}

/* After the inode items: a directory's new entries, then the parent
 * directory's (inode item from memory, changed entries), the new
 * ancestors, else the end. */
static void tl_next_pass(treelog *tl, task *t, tl_fsync *f)
{
	fs_info *fs = f->root->fs;
	int r;
	if (f->state == TLS_DIRS) {
		r = tl_range_flush(tl, t, f);
		if (!r && f->ndl_del)
			r = tl_dir_delayed_end(tl, t, f);
		if (r) {
			tl_fail(f, r);
			return;
		}
		struct inode *d = fs ? fs_inode_get(f->root, f->dir_ino) : NULL;
		inode_log *l = d ? fs_inode_log(fs, d) : NULL;
		if (l) {
			/* the directory's index items up to here are in the
			 * log (inode->last_dir_index_offset) */
			if (l->logged_trans != fs->transid)
				l->last_dir_index_offset = 0;
			if (f->dir_logged_max > l->last_dir_index_offset)
				l->last_dir_index_offset = f->dir_logged_max;
			l->logged_trans = fs->transid;
		}
	}
	if (f->state == TLS_COPY && !f->isdir &&
	    (f->inode->mode & S_IFMT_) == S_IFREG_) {
		/* the hole from the last extent to EOF */
		uint64_t eof = (f->inode->size + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
		r = tl_log_hole(tl, t, f, f->fe_end, eof);
		if (r) {
			tl_fail(f, r);
			return;
		}
		f->fe_end = eof;
	}
	if (f->isdir && f->dir_ino == 0) {
		f->dir_ino = f->inode->ino;
	} else if (f->parent && !f->parent_done) {
		f->parent_done = 1;
		f->dir_ino = f->parent->ino;
		/* its inode items, its name with them (copy_inode_items_to_log
		 * copies the INODE_REF too): a directory made in this
		 * transaction has no other */
		bt_item ii = tl_inode_item(f->parent);
		r = tl_log_put(tl, t, f->lr, &ii, 1);
		if (!r)
			r = tl_log_ref(tl, t, f->lr, f->root, f->parent, f->parent->parent);
		if (r) {
			tl_fail(f, r);
			return;
		}
	} else if (f->anc_next < f->nanc) {
		f->state = TLS_ANC;
		return;
	} else {
		f->state = TLS_END;
		return;
	}
	f->next_key = bt_mkkey(f->dir_ino, BTRFS_DIR_INDEX_KEY, 0);
	f->range_start = 0;
	f->range_open = 0;
	f->dir_logged_max = 0;
	f->state = TLS_DIRS;
	r = tl_dir_delayed_start(tl, t, f);
	if (r)
		tl_fail(f, r);
}

/*
 * The states. Each function is one step: it returns TASK_RUN (step again),
 * TASK_BLOCKED (parked: step again when woken), TASK_DONE or a negative
 * LAB_E*, and sets f->state for the next step.
 */

/* btrfs_sync_file's decision: nothing to log (skip_inode_logging), a log
 * that cannot hold this fsync (a commit instead), else a full or fast
 * log; patch 001 preallocates its scratch eb here, outside every lock. */
static int tls_start(treelog *tl, task *t, tl_fsync *f)
{
	f->rec.start = t->clock;
	tl->fsyncs++;
	fs_info *fs = f->root->fs;
	struct inode *in = f->inode;
	int full = (in->flags & (INODE_NEEDS_FULL_SYNC | INODE_COPY_EVERYTHING)) != 0;
	f->lr = treelog_root(tl, f->root->id);
	if (!f->lr)
		return LAB_ENOMEM;
	/* nothing changed since the last commit: the data is durable
	 * with that commit (skip_inode_logging) */
	if (fs && in->transid <= fs->generation && !full) {
		f->rec.skipped = 1;
		tl->skipped++;
		tl_record(tl, t, f);
		f->state = TLS_DONE;
		return TASK_DONE;
	}
	f->isdir = (in->mode & S_IFMT_) == S_IFDIR_;
	f->rec.full = (uint8_t)full;
	if (fs)
		tl_ancestors(f, fs);
	if (f->need_commit) {
		/* BTRFS_LOG_FORCE_COMMIT: btrfs_sync_file commits */
		f->rec.force_commit = 1;
		tl_record(tl, t, f);
		f->state = TLS_DONE;
		return TASK_DONE;
	}
	if (full && fs && fs_patch_on(fs, P_001_PREALLOC_SCRATCH_EB)) {
		/* patch 001: before any lock and before the log
		 * transaction; a failure only means cloning later */
		ebmem_eb *eb = NULL;
		simtime_t a0 = t->clock;
		int arc = ebmem_alloc(tl->mem, t, &eb, NULL);
		if (tl->on_scratch)
			tl->on_scratch(tl->obs_ctx, t->id, a0, t->clock);
		if (arc == 0) {
			f->scratch = eb;
			f->rec.scratch = 1;
		} else {
			tl->scratch_fallbacks++;
		}
	}
	f->state = TLS_JOIN;
	return TASK_RUN;
}

/* btrfs_start_transaction (a commit in progress parks us), then
 * start_log_trans; what the log holds of the inode goes first. */
static int tls_join(treelog *tl, task *t, tl_fsync *f)
{
	if (tl->tm && !f->has_th) {
		int r = trans_start(tl->tm, t, &f->th);
		if (r == TRANS_WAIT)
			return TASK_BLOCKED;
		if (r < 0)
			return r;
		f->has_th = 1;
	}
	task_cpu(tl->sim, t, TL_NS_LOG_TRANS);
	f->lr->log_writers++;
	f->lr->log_batch++;
	f->log_transid = f->lr->log_transid;
	sim_series_add(tl->sim, tl->s_writers, t->clock, f->lr->log_writers);
	if (tl->on_log_trans)
		tl->on_log_trans(tl->obs_ctx, t->id, 1, t->clock, f->lr->log_writers);
	f->fe_end = 0;
	int r = tl_log_tree(tl, t, f->lr, f->root->fs);
	/* a full sync copies all of the inode again (a directory its inode
	 * items, its entries by range), a fast one its changed extents */
	if (!r)
		r = f->rec.full ? tl_log_drop_inode(tl, t, f->lr, f->inode->ino, 0,
						    f->isdir ? BTRFS_XATTR_ITEM_KEY : 255)
				: tl_log_drop_inode(tl, t, f->lr, f->inode->ino,
						    BTRFS_EXTENT_DATA_KEY, BTRFS_EXTENT_DATA_KEY);
	if (r)
		return tl_fail(f, r);
	if (f->rec.full) {
		f->next_key = bt_mkkey(f->inode->ino, 0, 0);
		f->state = TLS_COPY;
		tl->full++;
	} else {
		f->state = TLS_FAST;
		tl->fast++;
	}
	return TASK_RUN;
}

/* Full sync: one leaf of the inode's items copied, or the copy of the
 * step before put into the log. A directory's inode items stop at its
 * xattrs: its entries are logged by the dir pass. */
static int tls_copy(treelog *tl, task *t, tl_fsync *f)
{
	int r = f->pend ? tl_put_pending(tl, t, f)
			: tl_copy_leaf(tl, t, f, f->inode->ino,
				       f->isdir ? BTRFS_XATTR_ITEM_KEY : 255, 0);
	if (r < 0)
		return tl_fail(f, r);
	if (r == 1)
		tl_next_pass(tl, t, f);
	return TASK_RUN;
}

/* Fast fsync: the inode item and the changed extents, in one step. */
static int tls_fast(treelog *tl, task *t, tl_fsync *f)
{
	int r = tl_log_fast(tl, t, f);
	if (r < 0)
		return tl_fail(f, r);
	tl_next_pass(tl, t, f);
	return TASK_RUN;
}

/* A dir pass: one leaf of the directory's index items changed in this
 * transaction copied, or put into the log. */
static int tls_dirs(treelog *tl, task *t, tl_fsync *f)
{
	fs_info *fs = f->root->fs;
	int r = f->pend ? tl_put_pending(tl, t, f)
			: tl_copy_leaf(tl, t, f, f->dir_ino, BTRFS_DIR_INDEX_KEY,
				       fs ? fs->transid : 0);
	if (r < 0)
		return tl_fail(f, r);
	if (r == 1)
		tl_next_pass(tl, t, f);
	return TASK_RUN;
}

/* A new ancestor (log_all_new_ancestors): its inode item and its name. */
static int tls_anc(treelog *tl, task *t, tl_fsync *f)
{
	struct inode *d = fs_inode_get(f->root, f->anc[f->anc_next++]);
	int r = d ? tl_log_new_dir(tl, t, f->lr, f->root, d) : 0;
	if (r)
		return tl_fail(f, r);
	tl_next_pass(tl, t, f);
	return TASK_RUN;
}

/* Once btrfs_sync_log is done: btrfs_end_transaction, the record filed. */
static int tl_synced(treelog *tl, task *t, tl_fsync *f, int r)
{
	if (r != TASK_DONE)
		return r;
	if (f->has_th) {
		int e = trans_end(&f->th, 0);
		f->has_th = 0;
		if (e < 0 && !f->error)
			f->error = e;
	}
	tl_record(tl, t, f);
	f->state = TLS_DONE;
	return f->error ? f->error : r;
}

/* btrfs_sync_log (treelog_sync.c). */
static int tls_sync(treelog *tl, task *t, tl_fsync *f)
{
	return tl_synced(tl, t, f, tl_sync(tl, t, f));
}

/* end_log_trans, the inode marked logged, the scratch eb freed before
 * the sync; then the sync in the same step. */
static int tls_end(treelog *tl, task *t, tl_fsync *f)
{
	tl_dl_del_put(tl, f);
	task_cpu(tl->sim, t, TL_NS_LOG_TRANS);
	assert(f->lr->log_writers > 0);
	f->lr->log_writers--;
	f->lr->dirty_inodes++;
	sim_series_add(tl->sim, tl->s_writers, t->clock, f->lr->log_writers);
	if (tl->on_log_trans)
		tl->on_log_trans(tl->obs_ctx, t->id, 0, t->clock, f->lr->log_writers);
	if (f->lr->log_writers == 0)
		waitq_wake_all(tl->sim, &f->lr->writer_wait, t->clock);
	/* a directory keeps NEEDS_FULL_SYNC (btrfs_log_inode clears it for
	 * regular files only): each of its fsyncs copies */
	if (f->rec.full && !f->error && !f->isdir)
		f->inode->flags &= ~(uint32_t)(INODE_NEEDS_FULL_SYNC | INODE_COPY_EVERYTHING);
	if (f->root->fs) {
		inode_log *l = fs_inode_log(f->root->fs, f->inode);
		if (l) {
			l->last_log_commit = f->log_transid;
			l->logged_trans = f->root->fs->transid;
		}
		inode_log *lp = f->parent_done ? fs_inode_log(f->root->fs, f->parent) : NULL;
		if (lp)
			lp->logged_trans = f->root->fs->transid;
	}
	if (f->scratch) {
		ebmem_free(tl->mem, f->scratch);
		task_cpu(tl->sim, t, EBMEM_NS_FREE);
		f->scratch = NULL;
	}
	f->state = TLS_SYNC;
	return tls_sync(tl, t, f);
}

/* Woken in btrfs_sync_log as the committer: park again while writers
 * remain, else take the commit over again. */
static int tls_wait_writers(treelog *tl, task *t, tl_fsync *f)
{
	uint64_t w = t->clock - f->parked_at;
	f->rec.writer_wait_ns += w;
	if (w)
		lhist_add(&tl->writer_wait, w);
	tl_root *lr = f->lr;
	if (lr->log_writers > 0) {
		f->parked_at = t->clock;
		task_park(t, &lr->writer_wait);
		return TASK_BLOCKED;
	}
	lr->committing = 0;
	f->state = TLS_SYNC;
	return tls_sync(tl, t, f);
}

/* Woken from another task's log commit: sync again (ours may be done). */
static int tls_wait_commit(treelog *tl, task *t, tl_fsync *f)
{
	uint64_t w = t->clock - f->parked_at;
	f->rec.commit_wait_ns += w;
	if (w)
		lhist_add(&tl->commit_wait, w);
	f->state = TLS_SYNC;
	return tls_sync(tl, t, f);
}

static int tls_done(treelog *tl, task *t, tl_fsync *f)
{
	(void)tl;
	(void)t;
	(void)f;
	return TASK_DONE;
}

static int (*const tl_states[])(treelog *tl, task *t, tl_fsync *f) = {
	[TLS_START] = tls_start,
	[TLS_JOIN] = tls_join,
	[TLS_COPY] = tls_copy,
	[TLS_FAST] = tls_fast,
	[TLS_DIRS] = tls_dirs,
	[TLS_ANC] = tls_anc,
	[TLS_END] = tls_end,
	[TLS_SYNC] = tls_sync,
	[TLS_WAIT_WRITERS] = tls_wait_writers,
	[TLS_WAIT_COMMIT] = tls_wait_commit,
	[TLS_DONE] = tls_done,
};

/* One step of an fsync's log part; see treelog.h. */
int treelog_fsync_step(treelog *tl, task *t, tl_fsync *f)
{
	if (!tl || !t || !f || !f->inode || !f->root)
		return LAB_EINVAL;
	if (f->state < 0 || f->state >= (int)(sizeof tl_states / sizeof tl_states[0]))
		return LAB_EENGINE;
	return tl_states[f->state](tl, t, f);
}
