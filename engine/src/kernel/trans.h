/*
 * trans.h - transactions: handles that join the running transaction, the
 * should-end / throttle checks, the commit with its phases timed, and the
 * transaction kthread that commits every commit_interval.
 *
 * The running transaction's id is fs->transid (the metadata core COWs a
 * block once per transid); a commit here runs the delayed refs, the qgroup
 * accounting, then fs_commit() (root items, dirty blocks, superblock,
 * flush), which advances fs->transid. Each commit is recorded with the
 * duration of each phase for the front end.
 *
 * Tasks: trans_start / trans_commit may have to wait for another task
 * (a commit in progress, writers still inside the transaction). They then
 * park the task and return TRANS_WAIT; the caller's step returns
 * TASK_BLOCKED and calls again when woken.
 */
#ifndef TRANS_H
#define TRANS_H

#include <stdint.h>

#include "costs.h"
#include "delayed_ref.h"
#include "fs.h"
#include "sim.h"

#define TRANS_WAIT 1 /* positive return: parked, retry when woken */

enum trans_state {
	TRANS_RUNNING = 0,
	TRANS_COMMIT_START = 1, /* a committer waits for writers to leave */
	TRANS_COMMIT_DOING = 2,
};

/* Commit phases, in order. */
enum {
	TPH_WAIT = 0,   /* wait for writers to end their handles */
	TPH_DREFS = 1,  /* btrfs_run_delayed_refs */
	TPH_QGROUP = 2, /* btrfs_qgroup_account_extents */
	TPH_WRITE = 3,  /* root items, dirty tree blocks, superblock + flush */
	TPH_MAX = 4,
};
extern const char *const trans_phase_names[TPH_MAX];

/* Why a commit happened. */
enum {
	TCOMMIT_KTHREAD = 0,   /* the periodic commit (commit_interval) */
	TCOMMIT_THRESHOLD = 1, /* the RFC: nr_dirty_extents >= threshold */
	TCOMMIT_EXPLICIT = 2,  /* sync, quota enable, setup */
	TCOMMIT_SPACE = 3,     /* space reclaim's COMMIT_TRANS state */
};
extern const char *const trans_reason_names[4];

typedef struct commit_rec {
	uint64_t transid;
	int reason;
	simtime_t start, end;
	uint64_t ph_ns[TPH_MAX];
	uint64_t records;     /* dirty extents accounted */
	uint64_t heads;       /* delayed ref heads run in the commit */
	uint64_t blocks;      /* tree blocks written */
} commit_rec;

struct trans_mgr;

typedef struct transaction {
	uint64_t transid;
	simtime_t start_time;
	int state;            /* enum trans_state */
	int num_writers;
	delayed_ref_root delayed_refs;
	task *committer;      /* blocked waiting for writers */
	simtime_t commit_req; /* when the commit was asked for */
	int commit_reason;
} transaction;

typedef struct trans_handle {
	transaction *trans;
	struct trans_mgr *tm;
	task *t;
	/* trans_start_items: the handle's block reserve (trans->block_rsv)
	 * and where its reservation stands (0 none, 1 waiting on a ticket or
	 * a commit, 2 held) */
	block_rsv rsv;
	int rsv_state;
} trans_handle;

/* The qgroup accounting step of a commit, provided by qgroup.c. Returns
 * the records accounted or a negative error; charges CPU to t. */
typedef int (*trans_account_fn)(void *ctx, transaction *trans, task *t);

typedef struct trans_mgr {
	fs_info *fs;
	sim *sim;
	transaction *running;
	simtime_t commit_interval;   /* kthread period (ns), 30 s */
	uint64_t dirty_threshold;    /* the RFC's threshold (with fs's
				      * P_002_QGROUP_DIRTY_THRESHOLD);
				      * UINT64_MAX = none */
	uint32_t dref_throttle_heads;/* should_end once this many heads wait */
	trans_account_fn account;
	void *account_ctx;
	waitq commit_wait;           /* tasks waiting for a commit to finish */
	commit_rec *commits;
	int ncommits, commits_cap;
	task *kthread;
	int kthread_stop;
	void (*wake_cleaner)(void *ctx, simtime_t at); /* kthread's wake_up_process(cleaner) */
	/* btrfs_run_delayed_items in the committing task, before it waits
	 * for the writers and again once they left (delayed_inode.h); NULL:
	 * no delayed items */
	int (*run_delayed_items)(void *ctx, task *t);
	void *delayed_ctx;
	void *cleaner_ctx;
	uint64_t handles_started, handles_ended, throttle_runs;
	uint64_t transactions;
	int s_dirty;                 /* series id: dirty extents */
} trans_mgr;

/* Set up the manager over fs (registers the delayed-ref hooks). */
int trans_init(trans_mgr *tm, fs_info *fs);
/* Free the manager; before sim_destroy (a kthread still running is freed
 * through its task). */
void trans_destroy(trans_mgr *tm);

/* The running transaction, created if none (models join_transaction
 * without a handle: used by hooks that fire outside a handle). NULL only
 * on allocation failure. */
transaction *trans_current(trans_mgr *tm);

/* Start / join a handle (models btrfs_start_transaction / _join).
 * Returns 0, TRANS_WAIT (parked on commit_wait: a commit is running), or
 * a negative LAB_E*. With t == NULL nothing can wait (setup code). */
int trans_start(trans_mgr *tm, task *t, trans_handle *h);
/*
 * Start a handle that reserves metadata for `items` items first (models
 * btrfs_start_transaction(root, num_items): start_transaction reserves
 * insert_metadata_size(items) into the handle's block_rsv with
 * BTRFS_RESERVE_FLUSH_ALL, before joining, so that a task parked on a
 * ticket holds no transaction open). h must be zeroed before the first
 * call. Returns 0, TRANS_WAIT (parked on a ticket or behind a commit:
 * call again with the same h when woken), LAB_ENOSPC, or negative.
 * trans_end / trans_commit give back the reservation.
 */
int trans_start_items(trans_mgr *tm, task *t, uint64_t items, trans_handle *h);
/* Run the delayed refs queued so far in the running transaction (models
 * btrfs_run_delayed_refs(trans, 0) from a joined handle; space reclaim's
 * FLUSH_DELAYED_REFS). 0 or negative. */
int trans_run_delayed_refs(trans_mgr *tm, task *t);
/* End a handle (models __btrfs_end_transaction). throttle: run the delayed
 * refs now if they piled up (btrfs_end_transaction_throttle). */
int trans_end(trans_handle *h, int throttle);
/* Models btrfs_should_end_transaction, with the RFC's check first when the
 * fs has the RFC and a threshold is set. */
int trans_should_end(const trans_handle *h);
/* Models the RFC's btrfs_should_commit_trans(). */
int trans_should_commit(const trans_handle *h);
/*
 * Commit the handle's transaction (models btrfs_commit_transaction): the
 * handle is consumed. Returns 0, TRANS_WAIT (parked until the other
 * writers leave: call again with the same handle when woken), or negative.
 */
int trans_commit(trans_handle *h, int reason);
/* Commit whatever is running, from setup code (no task, no waiting). */
int trans_commit_now(trans_mgr *tm, task *t, int reason);

/* Spawn the transaction kthread (models transaction_kthread): it commits
 * the running transaction once it is commit_interval old (checking every
 * 5 s while one runs) and calls tm->wake_cleaner on every round, as the
 * kernel wakes the cleaner kthread. It exits once tm->kthread_stop is set. */
int trans_kthread_start(trans_mgr *tm, simtime_t at);

struct strbuf;
/* The commits from index `first` on, as a JSON array (at most the last
 * `max` of them, so a long run's details stay bounded): transid, reason,
 * start_s, end_s, records, heads, blocks and phases_ms by phase name. */
void trans_commits_json(const trans_mgr *tm, int first, int max, struct strbuf *sb);

#endif /* TRANS_H */
