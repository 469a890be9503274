/*
 * treelog_sync.c - btrfs_sync_log: wait for the log writers, write the
 * log blocks and the super block, or wait for another task's log commit.
 * See treelog.h.
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

#define SUPER_OFFSET 65536ull
#define SUPER_BYTES 4096ull

/*
 * Write what this log transaction dirtied and the super block (the IO
 * part of btrfs_sync_log): the log leaves and the path above them, the
 * log root tree block, wait for all; then a flush, the super block and a
 * FUA flush. Advances t's clock to the completion.
 */
static void tl_write_log(treelog *tl, task *t, tl_root *lr)
{
	/* the log blocks made since the last log commit (COWed, split, new)
	 * and the log root tree's block */
	uint64_t blocks = lr->dirty_blocks + 1;
	fs_info *fs = lr->log.fs;
	lr->synced_root = lr->log.root;
	lr->synced_transid = fs ? fs->transid : 0;
	/* written: the next change COWs them (BTRFS_HEADER_FLAG_WRITTEN) */
	lr->log_gen++;
	lr->log.priv_gen = lr->log_gen;
	lr->dirty_blocks = 0;
	task_cpu(tl->sim, t, TL_NS_SYNC_CPU);
	lr->blocks_written += blocks;
	tl->blocks_written += blocks;
	tl->supers_written++;
	if (!tl->dev)
		return;
	simtime_t at = t->clock, done = at;
	for (uint64_t i = 0; i < blocks; i++) {
		uint64_t off = tl->cfg.log_area_offset + tl->log_pos;
		tl->log_pos = (tl->log_pos + BT_NODESIZE) % tl->cfg.log_area_bytes;
		simtime_t c = bdev_io(tl->dev, BIO_WRITE, off, BT_NODESIZE, at);
		if (c > done)
			done = c;
	}
	done = bdev_flush(tl->dev, done);
	done = bdev_io(tl->dev, BIO_WRITE, SUPER_OFFSET, SUPER_BYTES, done);
	done = bdev_flush(tl->dev, done);
	task_wait_until(t, done);
}

/* Sample the tasks parked in btrfs_sync_log: the committer waiting for
 * the writers plus those waiting for its commit. */
static void tl_sample_waiters(treelog *tl, const tl_root *lr, simtime_t at)
{
	sim_series_add(tl->sim, tl->s_sync_waiters, at,
		       lr->writer_wait.len + lr->commit_wait.len);
}

/* Wait (a known end time) for the IO of the last log commit. */
static void tl_wait_commit_io(treelog *tl, task *t, tl_fsync *f)
{
	simtime_t end = f->lr->last_commit_end;
	if (end > t->clock) {
		uint64_t w = end - t->clock;
		f->rec.commit_wait_ns += w;
		lhist_add(&tl->commit_wait, w);
		task_wait_until(t, end);
	}
}

/*
 * The sync part, for a task that left the log transaction (models
 * btrfs_sync_log). Another task's commit of our log transaction is
 * waited for; a commit of the previous one too. Otherwise this task
 * commits: waits for log_writers == 0, then writes. Returns a TASK_*.
 */
int tl_sync(treelog *tl, task *t, tl_fsync *f)
{
	tl_root *lr = f->lr;
	if (lr->log_transid_committed >= f->log_transid) {
		/* committed in a step that ran ahead: its IO ends later */
		tl_wait_commit_io(tl, t, f);
		return TASK_DONE;
	}
	if (lr->committing) {
		/* someone syncs our transid or the one before it */
		f->state = TLS_WAIT_COMMIT;
		f->parked_at = t->clock;
		task_park(t, &lr->commit_wait);
		tl_sample_waiters(tl, lr, t->clock);
		return TASK_BLOCKED;
	}
	assert(f->log_transid == lr->log_transid);
	lr->committing = 1;
	lr->committing_transid = f->log_transid;
	f->rec.committed = 1;
	if (lr->log_writers > 0) {
		f->state = TLS_WAIT_WRITERS;
		f->parked_at = t->clock;
		task_park(t, &lr->writer_wait);
		tl_sample_waiters(tl, lr, t->clock);
		return TASK_BLOCKED;
	}
	/* no writer left: close this log transaction, later joiners start
	 * the next one; the previous log commit's IO must be over before
	 * ours starts (wait_log_commit of the other index) */
	tl_wait_commit_io(tl, t, f);
	lr->log_transid++;
	uint64_t blocks_before = lr->blocks_written;
	simtime_t wstart = t->clock;
	uint64_t inodes = lr->dirty_inodes;
	tl_write_log(tl, t, lr);
	if (tl->on_log_commit)
		tl->on_log_commit(tl->obs_ctx, lr->root_id, wstart, t->clock,
				  lr->blocks_written - blocks_before, inodes);
	lr->log_transid_committed = f->log_transid;
	lr->last_commit_end = t->clock;
	lr->committing = 0;
	sim_trace(tl->sim, tl->k_log_commit, t->id, (int64_t)f->log_transid,
		  (int64_t)(lr->blocks_written - blocks_before), (int64_t)lr->dirty_inodes);
	lr->dirty_inodes = 0;
	lr->log_commits++;
	tl->log_commits++;
	sim_count(tl->sim, tl->c_log_commit, 1);
	waitq_wake_all(tl->sim, &lr->commit_wait, t->clock);
	tl_sample_waiters(tl, lr, t->clock);
	return TASK_DONE;
}
