/*
 * treelog.c - the log's state and its trees' blocks: the per-root log
 * state, the log trees' private block allocator, phases and records, the
 * fs hooks (an unlink leaves the log, a commit frees it: btrfs_free_log)
 * and the details. An fsync's log part is treelog_fsync.c, the copying of
 * items treelog_copy.c, btrfs_sync_log treelog_sync.c and the replay after
 * a power cut treelog_replay.c. See treelog.h.
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

/* Defaults: a 256 MiB log area at 1 GiB. */
void treelog_cfg_default(treelog_cfg *c)
{
	c->log_area_offset = 1ull << 30;
	c->log_area_bytes = 256ull << 20;
	c->max_records = 4096;
	c->keep_synced = 0;
}

/* ------------------------------------------------ the log trees' blocks */

static tl_root *tl_root_of(bt_tree *tr)
{
	return (tl_root *)(void *)((char *)tr - offsetof(tl_root, log));
}

/* A new log block (btrfs_alloc_tree_block for a log root: from the log's
 * own space here; its address is its identity, the IO wraps in the log
 * area). It is dirty until the next log commit writes it. */
static int tl_blk_alloc(void *ctx, bt_tree *tr, int level, uint64_t *bytenr)
{
	treelog *tl = ctx;
	tl_root *lr = tl_root_of(tr);
	(void)level;
	*bytenr = tl->cfg.log_area_offset + tl->blk_seq++ * BT_NODESIZE;
	lr->log_blocks++;
	lr->dirty_blocks++;
	return 0;
}

/* A log block left its tree: COWed after a log commit wrote it, merged, or
 * freed with the log. A written one stays readable while it may be part
 * of the synced log (keep_synced). */
static void tl_blk_free(void *ctx, bt_tree *tr, bt_node *n)
{
	treelog *tl = ctx;
	tl_root *lr = tl_root_of(tr);
	assert(lr->log_blocks > 0);
	lr->log_blocks--;
	if (n->generation == tr->priv_gen) {
		assert(lr->dirty_blocks > 0);
		lr->dirty_blocks--;
	}
	if (tl->cfg.keep_synced)
		n->keep_mem = 1;
}

/* Recording (sim.h): the log trees as they are, when a recording starts
 * while a log is open (its blocks would otherwise be known only once
 * changed). A log tree shares no block: each gets an epoch of its own. */
static void tl_rec_dump(sim *s, void *ctx)
{
	treelog *tl = ctx;
	(void)s;
	for (int i = 0; i < tl->nroots; i++) {
		bt_tree *lt = &tl->roots[i].log;
		if (lt->root && lt->fs)
			bt_rec_dump(lt, ++lt->fs->check_epoch);
	}
}

/* Create the log state; validates the configuration. */
int treelog_create(sim *s, bdev *dev, ebmem *mem, const treelog_cfg *cfg,
		   treelog **out)
{
	treelog_cfg def;
	if (!out)
		return LAB_EINVAL;
	*out = NULL;
	if (!s || !mem)
		return LAB_EINVAL;
	if (!cfg) {
		treelog_cfg_default(&def);
		cfg = &def;
	}
	if (cfg->max_records == 0 || cfg->max_records > (1u << 22) ||
	    cfg->log_area_bytes < 16 * BT_NODESIZE ||
	    cfg->log_area_bytes % BT_NODESIZE || cfg->log_area_offset % 4096)
		return LAB_ERANGE;
	treelog *tl = lab_calloc(1, sizeof(*tl));
	if (!tl)
		return LAB_ENOMEM;
	tl->recs = lab_calloc(cfg->max_records, sizeof(tl_rec));
	if (!tl->recs) {
		free(tl);
		return LAB_ENOMEM;
	}
	tl->sim = s;
	tl->dev = dev;
	tl->mem = mem;
	tl->cfg = *cfg;
	tl->ops.ctx = tl;
	tl->ops.alloc = tl_blk_alloc;
	tl->ops.free = tl_blk_free;
	lhist_init(&tl->leaf_hold);
	lhist_init(&tl->leaf_wait);
	lhist_init(&tl->victim_wait);
	lhist_init(&tl->alloc_locked);
	lhist_init(&tl->writer_wait);
	lhist_init(&tl->commit_wait);
	treelog_set_phase(tl, "default");
	/* trace: fsync (ino, latency ns, full), log_commit (log transid,
	 * blocks, fsyncs in it), leaf_copy (leaf bytenr, hold ns, alloc ns) */
	tl->k_fsync = sim_trace_kind(s, "fsync");
	tl->k_log_commit = sim_trace_kind(s, "log_commit");
	tl->k_leaf = sim_trace_kind(s, "leaf_copy");
	tl->s_writers = sim_series_id(s, "log_writers");
	tl->s_sync_waiters = sim_series_id(s, "log_sync_waiters");
	tl->s_fsync_ms = sim_series_id(s, "fsync_ms");
	tl->c_fsync = sim_counter_id(s, "fsyncs");
	tl->c_log_commit = sim_counter_id(s, "log_commits");
	if (sim_rec_dumper(s, tl_rec_dump, tl)) {
		free(tl->recs);
		free(tl);
		return LAB_ENOMEM;
	}
	*out = tl;
	return 0;
}

/* Free the log state (fsyncs in flight must have finished). */
void treelog_destroy(treelog *tl)
{
	if (!tl)
		return;
	sim_rec_dumper_remove(tl->sim, tl);
	for (int i = 0; i < tl->nroots; i++) {
		/* memory only: the file system may be gone already */
		tl->roots[i].log.rec_h = 0;
		bt_tree_destroy(&tl->roots[i].log);
	}
	free(tl->dl_spare);
	free(tl->batch);
	free(tl->recs);
	free(tl);
}

/* The log state of a root: a linear table (few roots are ever logged). */
tl_root *treelog_root(treelog *tl, uint64_t root_id)
{
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == root_id)
			return &tl->roots[i];
	if (tl->nroots >= TL_MAX_ROOTS)
		return NULL;
	tl_root *lr = &tl->roots[tl->nroots++];
	memset(lr, 0, sizeof(*lr));
	lr->root_id = root_id;
	lr->log_transid = 1;
	lr->log_gen = 1;
	return lr;
}

/* Select (creating if new) the phase fsync latencies are recorded in. */
int treelog_set_phase(treelog *tl, const char *name)
{
	for (int i = 0; i < tl->nphases; i++)
		if (strcmp(tl->phase_names[i], name) == 0)
			return tl->phase = i;
	if (tl->nphases >= TL_MAX_PHASES)
		return LAB_ENOMEM;
	int i = tl->nphases++;
	snprintf(tl->phase_names[i], sizeof(tl->phase_names[i]), "%s", name);
	lhist_init(&tl->phase_lat[i]);
	char sname[40];
	snprintf(sname, sizeof(sname), "fsync_ms_%s", tl->phase_names[i]);
	tl->phase_series[i] = sim_series_id(tl->sim, sname);
	return tl->phase = i;
}

/* The q-quantile of a phase's fsync latencies (1.0: the maximum). */
uint64_t treelog_phase_quantile(const treelog *tl, const char *phase, double q)
{
	for (int i = 0; i < tl->nphases; i++)
		if (strcmp(tl->phase_names[i], phase) == 0)
			return lhist_quantile(&tl->phase_lat[i], q);
	return 0;
}

/* Attach (or detach with NULL) a transaction manager. */
void treelog_set_trans(treelog *tl, trans_mgr *tm)
{
	tl->tm = tm;
}

/* Record another operation's wait for a subvolume leaf lock. */
void treelog_note_leaf_wait(treelog *tl, uint64_t wait_ns)
{
	lhist_add(&tl->victim_wait, wait_ns);
}

int treelog_leaf_held(const treelog *tl, uint64_t bytenr, simtime_t at, uint64_t *ino)
{
	uint32_t n = tl->nholds < TL_HOLD_RING ? tl->nholds : TL_HOLD_RING;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = (tl->nholds - 1 - i) % TL_HOLD_RING;
		if (tl->holds[j].bytenr == bytenr && tl->holds[j].from < at && at <= tl->holds[j].to) {
			if (ino)
				*ino = tl->holds[j].ino;
			return 1;
		}
	}
	return 0;
}

/* Models btrfs_free_log at transaction commit: the log trees go away, and
 * an inode changed before this commit no longer needs logging. */
void treelog_on_commit(treelog *tl, uint64_t transid)
{
	(void)transid;
	for (int i = 0; i < tl->nroots; i++) {
		tl_root *lr = &tl->roots[i];
		if (lr->log.root)
			bt_free_tree(&lr->log, NULL);
		lr->log_items = 0;
		lr->dirty_blocks = 0;
		lr->dirty_inodes = 0;
		lr->synced_root = NULL;
		lr->synced_transid = 0;
	}
}

/* fs_hooks.on_unlink: a name removed from a directory logged in this
 * transaction leaves the log too (btrfs_del_dir_entries_in_log,
 * btrfs_del_inode_ref_in_log), so a replay does not bring it back. */
static void tl_hook_unlink(void *ctx, task *t, struct inode *dir, struct inode *in,
			   uint64_t index, int for_rename)
{
	treelog *tl = ctx;
	fs_info *fs = dir->root->fs;
	/* btrfs_record_unlink_dir: a rename neither side of which is in the
	 * log cannot be found by a later fsync; those fsyncs commit */
	if (for_rename && fs && inode_log_get(dir).logged_trans != fs->transid &&
	    inode_log_get(in).logged_trans != fs->transid) {
		inode_log *li = fs_inode_log(fs, in), *ld = fs_inode_log(fs, dir);
		if (li)
			li->last_unlink_trans = fs->transid;
		if (ld)
			ld->last_unlink_trans = fs->transid;
	}
	tl_root *lr = NULL;
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == dir->root->id)
			lr = &tl->roots[i];
	if (!lr || !lr->log.root || !fs)
		return;
	if (inode_log_get(dir).logged_trans == fs->transid && index != UINT64_MAX) {
		bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, index);
		if (bt_delete(&lr->log, t, &k) == 0)
			lr->log_items--;
	}
	if (inode_log_get(in).logged_trans == fs->transid) {
		bt_key k = bt_mkkey(in->ino, BTRFS_INODE_REF_KEY, dir->ino);
		if (bt_delete(&lr->log, t, &k) == 0)
			lr->log_items--;
		/* its names changed since it was logged: its next fsync copies
		 * its items again, the refs with them (a rename's new name
		 * goes into the log at once: tl_hook_new_name) */
		in->flags |= INODE_COPY_EVERYTHING;
	}
}

/*
 * fs_hooks.on_new_name: btrfs_log_new_name at the end of a rename. An
 * inode logged in this transaction has just lost its logged name
 * (tl_hook_unlink); its new one goes into the log now (LOG_INODE_EXISTS:
 * the ref, its logged inode item kept), with the directories made in this
 * transaction above it that the log lacks or must log again
 * (log_all_new_ancestors, need_log_inode), so the next log sync, by any
 * fsync of the root, keeps it and what lies below it named. A rename
 * whose inode the log does not hold is left to tl_hook_unlink's rules.
 */
static void tl_hook_new_name(void *ctx, task *t, struct inode *in, struct inode *dir)
{
	treelog *tl = ctx;
	fs_info *fs = in->root->fs;
	if (!fs || inode_log_get(in).logged_trans != fs->transid)
		return;
	tl_root *lr = NULL;
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == in->root->id)
			lr = &tl->roots[i];
	if (!lr || !lr->log.root)
		return;
	int r = tl_log_ref(tl, t, lr, in->root, in, dir->ino);
	for (struct inode *d = dir; !r && d && d->ino != BTRFS_FIRST_FREE_OBJECTID && d != in;
	     d = fs_inode_get(in->root, d->parent)) {
		if (d->generation == fs->transid &&
		    (inode_log_get(d).logged_trans != fs->transid || (d->flags & INODE_COPY_EVERYTHING)))
			r = tl_log_new_dir(tl, t, lr, in->root, d);
		if (d->parent == d->ino)
			break;
	}
}

/* fs_hooks.on_commit_done: the log trees go with the commit. */
static void tl_hook_commit_done(void *ctx, uint64_t transid)
{
	treelog_on_commit(ctx, transid);
}

/* Hook the log to an fs: fs->slot[FS_SLOT_LOG] and the commit hook. */
int treelog_attach(treelog *tl, fs_info *fs)
{
	fs_hooks h;
	memset(&h, 0, sizeof(h));
	h.ctx = tl;
	h.on_commit_done = tl_hook_commit_done;
	h.on_unlink = tl_hook_unlink;
	h.on_new_name = tl_hook_new_name;
	fs->slot[FS_SLOT_LOG] = tl;
	tl->fs = fs;
	return fs_hooks_register(fs, &h);
}

/* ------------------------------------------------------- observability */

void treelog_details_json(const treelog *tl, strbuf *out, int max_records)
{
	js_obj(out);
	js_kbool(out, "prealloc_scratch",
		 tl->fs && fs_patch_on(tl->fs, P_001_PREALLOC_SCRATCH_EB));
	js_kint(out, "fsyncs", (int64_t)tl->fsyncs);
	js_kint(out, "full", (int64_t)tl->full);
	js_kint(out, "fast", (int64_t)tl->fast);
	js_kint(out, "skipped", (int64_t)tl->skipped);
	js_kint(out, "leaves_copied", (int64_t)tl->leaves_copied);
	js_kint(out, "items_logged", (int64_t)tl->items_logged);
	js_kint(out, "clones", (int64_t)tl->clones);
	js_kint(out, "scratch_used", (int64_t)tl->scratch_used);
	js_kint(out, "scratch_fallbacks", (int64_t)tl->scratch_fallbacks);
	js_kint(out, "log_commits", (int64_t)tl->log_commits);
	js_kint(out, "blocks_written", (int64_t)tl->blocks_written);
	js_key(out, "phases");
	js_obj(out);
	for (int i = 0; i < tl->nphases; i++) {
		js_key(out, tl->phase_names[i]);
		lhist_json(&tl->phase_lat[i], out);
	}
	js_obj_end(out);
	js_key(out, "leaf_hold");
	lhist_json(&tl->leaf_hold, out);
	js_key(out, "leaf_wait");
	lhist_json(&tl->leaf_wait, out);
	js_key(out, "victim_wait");
	lhist_json(&tl->victim_wait, out);
	js_key(out, "alloc_locked");
	lhist_json(&tl->alloc_locked, out);
	js_key(out, "writer_wait");
	lhist_json(&tl->writer_wait, out);
	js_key(out, "commit_wait");
	lhist_json(&tl->commit_wait, out);
	js_key(out, "roots");
	js_arr(out);
	for (int i = 0; i < tl->nroots; i++) {
		const tl_root *lr = &tl->roots[i];
		js_obj(out);
		js_kint(out, "root", (int64_t)lr->root_id);
		js_kint(out, "log_transid", (int64_t)lr->log_transid);
		js_kint(out, "log_writers", lr->log_writers);
		js_kint(out, "log_commits", (int64_t)lr->log_commits);
		js_kint(out, "log_items", (int64_t)lr->log_items);
		js_kint(out, "blocks_written", (int64_t)lr->blocks_written);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_key(out, "records");
	js_arr(out);
	uint64_t have = tl->nrecs < tl->cfg.max_records ? tl->nrecs : tl->cfg.max_records;
	uint64_t n = max_records < 0 ? 0 : (uint64_t)max_records;
	if (n > have)
		n = have;
	for (uint64_t k = tl->nrecs - n; k < tl->nrecs; k++) {
		const tl_rec *r = &tl->recs[k % tl->cfg.max_records];
		js_obj(out);
		js_kint(out, "ino", (int64_t)r->ino);
		js_kstr(out, "phase", tl->phase_names[r->phase]);
		js_kint(out, "start_ns", (int64_t)r->start);
		js_kint(out, "lat_ns", (int64_t)(r->end - r->start));
		js_kbool(out, "full", r->full);
		js_kbool(out, "committed", r->committed);
		js_kbool(out, "skipped", r->skipped);
		js_kbool(out, "scratch", r->scratch);
		js_kint(out, "leaves", r->leaves);
		js_kint(out, "hold_max_ns", (int64_t)r->hold_max_ns);
		js_kint(out, "alloc_locked_ns", (int64_t)r->alloc_locked_ns);
		js_kint(out, "lock_wait_ns", (int64_t)r->lock_wait_ns);
		js_kint(out, "writer_wait_ns", (int64_t)r->writer_wait_ns);
		js_kint(out, "commit_wait_ns", (int64_t)r->commit_wait_ns);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}
