/*
 * trans.c - transactions, handles, the commit and the transaction kthread
 * (see trans.h).
 */
#include "trans.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "space_fs.h"
#include "strbuf.h"
#include "labmem.h"

const char *const trans_phase_names[TPH_MAX] = {
	"wait_writers", "delayed_refs", "qgroup_account", "write_blocks",
};
const char *const trans_reason_names[4] = { "kthread", "threshold", "explicit",
					     "space" };

#define KTHREAD_RECHECK_NS (5ull * NS_PER_S) /* the kthread's 5 s re-check */

/* ---- delayed ref heads from the fs hooks ----------------------------- */

/* A ref change on the running transaction's head for bytenr; a new head
 * grows the delayed refs reserve (add_delayed_ref_head's
 * delayed_ref_updates, btrfs_update_delayed_refs_rsv). */
static void head_add(trans_mgr *tm, uint64_t bytenr, int is_tree, int delta)
{
	transaction *tr = trans_current(tm);
	if (!tr)
		return;
	uint32_t n0 = tr->delayed_refs.nheads;
	dref_add(&tr->delayed_refs, bytenr, is_tree, delta);
	if (tr->delayed_refs.nheads > n0)
		fs_space_dref_heads(tm->fs, tr->delayed_refs.nheads - n0, sim_now(tm->sim));
}

/* A new tree block: a +1 ref head (btrfs_alloc_tree_block). */
static void hk_alloc(void *ctx, bt_tree *tree, uint64_t bytenr, int level, uint64_t owner)
{
	head_add(ctx, bytenr, 1, +1);
}

/* A freed tree block: a -1 ref head (btrfs_free_tree_block). */
static void hk_free(void *ctx, bt_tree *tree, uint64_t bytenr, int level, uint64_t owner)
{
	head_add(ctx, bytenr, 1, -1);
}

/* A COW: the old block loses its ref (the new one was an allocation). */
static void hk_cow(void *ctx, bt_tree *tree, uint64_t old_b, uint64_t new_b, int level)
{
	(void)new_b; /* its +1 head comes from the allocation (hk_alloc) */
	head_add(ctx, old_b, 1, -1);
}

/* A data ref change: a head for the data extent (btrfs_add_delayed_data_ref). */
static void hk_data(void *ctx, uint64_t root, uint64_t bytenr, uint64_t num_bytes,
		    uint64_t ino, uint64_t offset, int delta)
{
	head_add(ctx, bytenr, 0, delta);
}

/*
 * Set up the transaction manager over fs: default 30 s commit interval, no
 * dirty-extent threshold (the RFC's value; the RFC itself is fs's patch
 * P_002_QGROUP_DIRTY_THRESHOLD), and hooks that count
 * delayed ref heads. Returns 0 or a negative LAB_E*.
 */
int trans_init(trans_mgr *tm, fs_info *fs)
{
	memset(tm, 0, sizeof *tm);
	tm->fs = fs;
	tm->sim = fs->sim;
	tm->commit_interval = 30ull * NS_PER_S;
	tm->dirty_threshold = UINT64_MAX;
	tm->dref_throttle_heads = TRANS_DREF_THROTTLE_HEADS;
	fs_hooks h;
	memset(&h, 0, sizeof h);
	h.ctx = tm;
	h.on_alloc = hk_alloc;
	h.on_free = hk_free;
	h.on_cow = hk_cow;
	h.on_data_ref = hk_data;
	return fs_hooks_register(fs, &h);
}

/* Free the running transaction (if any) and the commit log. */
void trans_destroy(trans_mgr *tm)
{
	if (tm->running) {
		dref_root_destroy(&tm->running->delayed_refs);
		free(tm->running);
		tm->running = NULL;
	}
	free(tm->commits);
	tm->commits = NULL;
	/* a run closed before the kthread exited (cancelled, or failed): its
	 * task is still in the sim, which the caller destroys after this */
	if (tm->kthread) {
		free(tm->kthread->ctx);
		tm->kthread = NULL;
	}
}

/*
 * The running transaction, created on first use. Models join_transaction:
 * a new transaction gets the fs's running transid, its start time, and a
 * fresh delayed ref root whose nr_dirty_extents starts at 0.
 */
transaction *trans_current(trans_mgr *tm)
{
	if (tm->running)
		return tm->running;
	transaction *tr = lab_calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	tr->transid = tm->fs->transid;
	tr->start_time = sim_now(tm->sim);
	tr->state = TRANS_RUNNING;
	dref_root_init(&tr->delayed_refs);
	tm->running = tr;
	tm->transactions++;
	return tr;
}

/*
 * Start a handle. Models start_transaction: a task that finds a commit in
 * progress waits for it (wait_current_trans) before joining the next one.
 */
int trans_start(trans_mgr *tm, task *t, trans_handle *h)
{
	memset(h, 0, sizeof *h);
	if (t && tm->running && tm->running->state >= TRANS_COMMIT_START) {
		task_park(t, &tm->commit_wait);
		return TRANS_WAIT;
	}
	transaction *tr = trans_current(tm);
	if (!tr)
		return LAB_ENOMEM;
	tr->num_writers++;
	h->trans = tr;
	h->tm = tm;
	h->t = t;
	tm->handles_started++;
	return 0;
}

/* Give back what a handle's reservation still holds (the part of
 * __btrfs_end_transaction that releases trans->block_rsv). */
static void handle_rsv_release(trans_handle *h)
{
	if (h->rsv_state != 2)
		return;
	fs_info *fs = h->tm->fs;
	fs_space_handle_held(fs, -(int64_t)h->rsv.reserved);
	space_rsv_release(&fs->space, &h->rsv, UINT64_MAX,
			  h->t ? h->t->clock : sim_now(h->tm->sim));
	h->rsv_state = 0;
}

int trans_start_items(trans_mgr *tm, task *t, uint64_t items, trans_handle *h)
{
	fs_info *fs = tm->fs;
	if (h->rsv_state != 1) {
		memset(h, 0, sizeof *h);
		space_rsv_init(&h->rsv, SPACE_META);
	}
	h->tm = tm;
	h->t = t;
	if (h->rsv_state != 2 && items && fs->space_on) {
		uint64_t bytes = space_insert_metadata_size(&fs->space, items);
		int r = fs_space_reserve(fs, t, SPACE_META, bytes);
		if (r == FS_SPACE_WAIT) {
			h->rsv_state = 1;
			return TRANS_WAIT;
		}
		if (r) {
			h->rsv_state = 0;
			return r;
		}
		space_rsv_add(&h->rsv, bytes, 1);
		fs_space_handle_held(fs, (int64_t)bytes);
		h->rsv_state = 2;
	}
	if (t && tm->running && tm->running->state >= TRANS_COMMIT_START) {
		/* keep the reservation across the wait for the commit */
		if (h->rsv_state != 2)
			h->rsv_state = 1;
		task_park(t, &tm->commit_wait);
		return TRANS_WAIT;
	}
	transaction *tr = trans_current(tm);
	if (!tr) {
		handle_rsv_release(h);
		return LAB_ENOMEM;
	}
	tr->num_writers++;
	h->trans = tr;
	tm->handles_started++;
	return 0;
}

/* Run the delayed refs queued so far (models btrfs_run_delayed_refs):
 * fs_run_refs applies them to the extent tree and charges their CPU. */
static int run_delayed_refs(trans_mgr *tm, transaction *tr, task *t, uint64_t *heads)
{
	fs_info *fs = tm->fs;
	/* the extent tree's COWs come out of the delayed refs reserve */
	block_rsv *prev = fs->cur_rsv, *drefs = fs_space_drefs_rsv(fs);
	if (drefs)
		fs->cur_rsv = drefs;
	int rc = fs_run_refs(fs, t);
	fs->cur_rsv = prev;
	uint32_t n = dref_heads_clear(&tr->delayed_refs);
	fs_space_dref_heads(fs, -(int64_t)n, t ? t->clock : sim_now(tm->sim));
	if (heads)
		*heads += n;
	return rc;
}

int trans_run_delayed_refs(trans_mgr *tm, task *t)
{
	transaction *tr = trans_current(tm);
	if (!tr)
		return LAB_ENOMEM;
	return run_delayed_refs(tm, tr, t, NULL);
}

/*
 * End a handle. Models __btrfs_end_transaction: the writer leaves; a
 * committer waiting for the writers is woken when it is the last one left;
 * with throttle, delayed refs that piled up are run by the caller.
 */
int trans_end(trans_handle *h, int throttle)
{
	trans_mgr *tm = h->tm;
	transaction *tr = h->trans;
	if (!tr)
		return LAB_EINVAL;
	int rc = 0;
	if (throttle && tr->state == TRANS_RUNNING &&
	    dref_heads_pending(&tr->delayed_refs) >= tm->dref_throttle_heads) {
		rc = run_delayed_refs(tm, tr, h->t, NULL);
		tm->throttle_runs++;
	}
	assert(tr->num_writers > 0);
	handle_rsv_release(h);
	tr->num_writers--;
	tm->handles_ended++;
	if (tr->committer && tr->num_writers == 1) {
		simtime_t at = h->t ? h->t->clock : sim_now(tm->sim);
		task_wake(tm->sim, tr->committer, at);
		tr->committer = NULL;
	}
	h->trans = NULL;
	return rc;
}

/* Models the RFC's btrfs_should_commit_trans(): only a kernel with the
 * RFC (P_002_QGROUP_DIRTY_THRESHOLD) has it. */
int trans_should_commit(const trans_handle *h)
{
	const trans_mgr *tm = h->tm;
	if (!fs_patch_on(tm->fs, P_002_QGROUP_DIRTY_THRESHOLD) ||
	    tm->dirty_threshold == UINT64_MAX)
		return 0;
	return (uint64_t)h->trans->delayed_refs.nr_dirty_extents >= tm->dirty_threshold;
}

/*
 * Models btrfs_should_end_transaction: (RFC) at the dirty-extent
 * threshold; a commit is waiting; or the delayed refs outgrew their
 * reservation (btrfs_check_space_for_delayed_refs, modelled as a number of
 * pending heads).
 */
int trans_should_end(const trans_handle *h)
{
	if (trans_should_commit(h))
		return 1;
	const transaction *tr = h->trans;
	if (tr->state >= TRANS_COMMIT_START)
		return 1;
	return dref_heads_pending(&tr->delayed_refs) >= h->tm->dref_throttle_heads;
}

/* Append a commit record; returns its index or -1. */
static int commit_log_add(trans_mgr *tm, const commit_rec *c)
{
	if (tm->ncommits == tm->commits_cap) {
		int nc = tm->commits_cap ? tm->commits_cap * 2 : 16;
		commit_rec *n = lab_realloc(tm->commits, (size_t)nc * sizeof *n);
		if (!n)
			return -1;
		tm->commits = n;
		tm->commits_cap = nc;
	}
	tm->commits[tm->ncommits] = *c;
	return tm->ncommits++;
}

/*
 * The commit proper, once only the committer is inside. Models the body
 * of btrfs_commit_transaction: run every delayed ref, account the qgroup
 * dirty extents (btrfs_qgroup_account_extents), then the tree commit
 * (commit_fs_roots/commit_cowonly_roots, write_all_supers with a flush),
 * unpin, and tear the transaction down
 * (btrfs_qgroup_destroy_extent_records resets the counter).
 */
static int commit_body(trans_mgr *tm, transaction *tr, task *t, simtime_t requested)
{
	commit_rec c;
	memset(&c, 0, sizeof c);
	c.transid = tr->transid;
	c.reason = tr->commit_reason;
	simtime_t now = t ? t->clock : sim_now(tm->sim);
	c.start = requested;
	c.ph_ns[TPH_WAIT] = now - requested;
	tr->state = TRANS_COMMIT_DOING;
	int rc = 0;

	int64_t fsno = tm->fs->rec_fs;
	if (sim_recording(tm->sim)) {
		const int64_t a[] = { fsno, (int64_t)c.transid, TPH_WAIT, c.reason };
		sim_rec_at(tm->sim, TK_COMMIT_PHASE, t ? t->id : -1, requested, 4, a);
	}
	SIM_REC(tm->sim, TK_COMMIT_PHASE, t, fsno, (int64_t)c.transid, TPH_DREFS, c.reason);
	simtime_t p0 = t ? t->clock : 0;
	/* the delayed items the writers queued while the commit waited
	 * (counted with the delayed refs their inserts make) */
	if (tm->run_delayed_items)
		rc = tm->run_delayed_items(tm->delayed_ctx, t);
	if (!rc)
		rc = run_delayed_refs(tm, tr, t, &c.heads);
	simtime_t p1 = t ? t->clock : 0;
	c.ph_ns[TPH_DREFS] = p1 - p0;

	SIM_REC(tm->sim, TK_COMMIT_PHASE, t, fsno, (int64_t)c.transid, TPH_QGROUP, c.reason);
	if (!rc && tm->account) {
		int n = tm->account(tm->account_ctx, tr, t);
		if (n < 0)
			rc = n;
		else
			c.records = (uint64_t)n;
	}
	simtime_t p2 = t ? t->clock : 0;
	c.ph_ns[TPH_QGROUP] = p2 - p1;

	SIM_REC(tm->sim, TK_COMMIT_PHASE, t, fsno, (int64_t)c.transid, TPH_WRITE, c.reason);
	uint64_t blocks0 = tm->fs->dirty_blocks;
	uint64_t written0 = (uint64_t)sim_counter(tm->sim, "blocks_written");
	if (!rc)
		rc = fs_commit(tm->fs, t);
	simtime_t p3 = t ? t->clock : 0;
	c.ph_ns[TPH_WRITE] = p3 - p2;
	uint64_t written1 = (uint64_t)sim_counter(tm->sim, "blocks_written");
	c.blocks = written1 > written0 ? written1 - written0 : blocks0;
	c.end = t ? t->clock : sim_now(tm->sim);

	commit_log_add(tm, &c);
	/* the heads the commit's own ref runs queued ran with them */
	fs_space_dref_heads(tm->fs, -(int64_t)dref_heads_clear(&tr->delayed_refs), c.end);
	dref_root_destroy(&tr->delayed_refs);
	if (tm->running == tr)
		tm->running = NULL;
	free(tr);
	waitq_wake_all(tm->sim, &tm->commit_wait, c.end);
	return rc;
}

/*
 * Commit the handle's transaction. If other writers are still inside,
 * mark the transaction COMMIT_START (so their should_end checks say yes),
 * park, and return TRANS_WAIT; call again with the same handle when woken.
 * The handle is consumed when this returns anything else.
 */
int trans_commit(trans_handle *h, int reason)
{
	trans_mgr *tm = h->tm;
	transaction *tr = h->trans;
	if (!tr)
		return LAB_EINVAL;
	task *t = h->t;
	if (tr->state == TRANS_RUNNING) {
		tr->state = TRANS_COMMIT_START;
		tr->commit_reason = reason;
		tr->commit_req = t ? t->clock : sim_now(tm->sim);
		/* btrfs_commit_transaction runs the delayed items before it
		 * waits for the other writers */
		if (tm->run_delayed_items) {
			int rc = tm->run_delayed_items(tm->delayed_ctx, t);
			if (rc < 0)
				return rc;
		}
	}
	if (tr->num_writers > 1) {
		if (!t)
			return LAB_ESTATE; /* setup code cannot wait */
		tr->committer = t; /* trans_end wakes it (task_wake) */
		return TRANS_WAIT;
	}
	handle_rsv_release(h);
	tr->num_writers--;
	h->trans = NULL;
	tm->handles_ended++;
	return commit_body(tm, tr, t, tr->commit_req);
}

/* Commit from setup code: join, commit, no waiting. */
int trans_commit_now(trans_mgr *tm, task *t, int reason)
{
	trans_handle h;
	int rc = trans_start(tm, NULL, &h);
	if (rc)
		return rc;
	h.t = t;
	return trans_commit(&h, reason);
}

/* ---- the transaction kthread ----------------------------------------- */

typedef struct kthread_ctx {
	trans_mgr *tm;
	trans_handle h;
	int committing;
} kthread_ctx;

/*
 * One round of transaction_kthread: commit the running transaction if it
 * is commit_interval old (re-checking every 5 s while it is younger),
 * otherwise sleep commit_interval; wake the cleaner either way.
 */
static int kthread_step(sim *s, task *t)
{
	kthread_ctx *k = t->ctx;
	trans_mgr *tm = k->tm;
	if (k->committing) {
		int rc = trans_commit(&k->h, TCOMMIT_KTHREAD);
		if (rc == TRANS_WAIT)
			return TASK_BLOCKED;
		k->committing = 0;
		if (rc < 0)
			return TASK_DONE;
	}
	if (tm->kthread_stop) {
		free(k);
		tm->kthread = NULL;
		return TASK_DONE;
	}
	simtime_t delay = tm->commit_interval;
	transaction *cur = tm->running;
	if (cur && cur->state == TRANS_RUNNING) {
		if (t->clock - cur->start_time < tm->commit_interval) {
			delay = KTHREAD_RECHECK_NS;
		} else {
			int rc = trans_start(tm, t, &k->h);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			if (rc == 0) {
				rc = trans_commit(&k->h, TCOMMIT_KTHREAD);
				if (rc == TRANS_WAIT) {
					k->committing = 1;
					return TASK_BLOCKED;
				}
			}
		}
	} else if (cur) {
		delay = KTHREAD_RECHECK_NS; /* someone else is committing */
	}
	if (tm->wake_cleaner)
		tm->wake_cleaner(tm->cleaner_ctx, t->clock);
	if (tm->kthread_stop) {
		free(k);
		tm->kthread = NULL;
		return TASK_DONE;
	}
	task_wait_until(t, t->clock + delay);
	return TASK_RUN;
}

/* Spawn the transaction kthread at `at` (see trans.h). Returns 0 or
 * LAB_ENOMEM. */
int trans_kthread_start(trans_mgr *tm, simtime_t at)
{
	kthread_ctx *k = lab_calloc(1, sizeof *k);
	if (!k)
		return LAB_ENOMEM;
	k->tm = tm;
	tm->kthread = task_spawn(tm->sim, "btrfs-transaction", kthread_step, k, at);
	if (!tm->kthread) {
		free(k);
		return LAB_ENOMEM;
	}
	return 0;
}

void trans_commits_json(const trans_mgr *tm, int first, int max, strbuf *sb)
{
	if (first < 0)
		first = 0;
	if (max >= 0 && tm->ncommits - first > max)
		first = tm->ncommits - max;
	js_arr(sb);
	for (int i = first; i < tm->ncommits; i++) {
		const commit_rec *m = &tm->commits[i];
		js_obj(sb);
		js_knum(sb, "transid", (double)m->transid);
		js_kstr(sb, "reason", trans_reason_names[m->reason]);
		js_knum(sb, "start_s", (double)m->start / 1e9);
		js_knum(sb, "end_s", (double)m->end / 1e9);
		js_knum(sb, "records", (double)m->records);
		js_knum(sb, "heads", (double)m->heads);
		js_knum(sb, "blocks", (double)m->blocks);
		js_key(sb, "phases_ms");
		js_obj(sb);
		for (int p = 0; p < TPH_MAX; p++)
			js_knum(sb, trans_phase_names[p], (double)m->ph_ns[p] / 1e6);
		js_obj_end(sb);
		js_obj_end(sb);
	}
	js_arr_end(sb);
}
