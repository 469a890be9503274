/*
 * exp_torture_int.h - the torture experiment's state and helpers, shared
 * by exp_torture.c (the op mix, commits and checks) and exp_torture_all.c
 * (mix=all's fsync storms, subvolumes, snapshots and send/receive).
 */
#ifndef EXP_TORTURE_INT_H
#define EXP_TORTURE_INT_H
#include <stdint.h>

#include "backref.h"
#include "bdev.h"
#include "ebmem.h"
#include "fs.h"
#include "qgroup.h"
#include "sim.h"
#include "subvol.h"
#include "trans.h"
#include "treelog.h"

#define TS_MAX_SV 64
#define TS_MAX_SNAPS 6 /* plus its source: within the index's RS_MAX roots per extent */
#define TS_MAX_FSYNC 6
#define TS_RECENT 32
/* The whole check waits for the incremental checks to have checked this
 * many times the tree blocks and inodes it checked the last time
 * (check_commit): its share of the checking then stays under
 * 1 / (1 + TS_FULL_SPACING), whatever the file system's size. */
#define TS_FULL_SPACING 4
/* How often a task waiting for the cleaner or for fsyncs looks again:
 * [estimate: a scheduling quantum; it only sets how long the main task
 * idles, never what is checked] */
#define TS_POLL_NS (100 * NS_PER_US)

typedef struct tent {       /* a live name */
	int sv;              /* subvolume slot */
	uint64_t dir, ino;
	uint32_t name;       /* name is "n<name>" */
	int is_dir;
	uint32_t new_ext;    /* extents written since its last fsync */
	/* the power-cut check (mix=all): the transaction it was last
	 * logged in (log_trans: fsynced, or logged by another inode's fsync
	 * as its parent or a new ancestor) and, unless renamed since, the
	 * size and extents its last fsync made durable (dur_trans) */
	uint64_t log_trans, dur_trans, dur_size, dur_hash;
} tent;

typedef struct tname_ent {  /* a name as a snapshot saw it */
	uint64_t ino, dir;
	uint32_t name;
} tname_ent;

typedef struct tsnap {
	struct btrfs_root *root;
	tname_ent *names;    /* sorted by ino */
	int nnames;
} tsnap;

struct tort;

typedef struct tfsync {     /* one fsync task */
	struct tort *c;
	int busy;
	int data_done;       /* the data part (vio_fsync) is done */
	int sv;
	uint64_t ino, pino;  /* pinned inodes (pino: the logged parent, or 0) */
	uint64_t start_trans; /* the transaction it started in */
	tl_fsync f;
} tfsync;

enum { ST_START = 0, ST_QUIET, ST_COMMIT };
enum { CW_NONE = 0, CW_SYNC, CW_FSYNC, CW_REMOUNT, CW_FINAL };

typedef struct tort {
	fs_info *fs;         /* first: tests reach the fs through the run context */
	bdev *dev;           /* the data path needs a device: "ideal" */
	int vio_ready;
	trans_mgr tm;        /* transactions: every op runs inside a handle */
	int tm_ready;
	struct btrfs_root *sv[TS_MAX_SV];
	uint32_t svname[TS_MAX_SV]; /* "s<n>" in the top directory (0: none) */
	int nsv;             /* slots used (some may be dead: sv[i] == NULL) */
	tent *ents;
	int nents, cap;
	u64map ent_idx;      /* (slot, ino) -> index in ents + 1 (tort_find) */
	uint32_t next_name;
	uint64_t ops, target, commits, fsyncs, failures, errors;
	uint64_t full_every, full_checks; /* the check cadence (check_commit) */
	uint64_t full_at, full_checked;   /* the last full check: its commit, and
					   * the incremental blocks checked then */
	uint64_t full_walked;             /* blocks the full checks walked */
	/* the inodes' part of the checking: the data state of every inode
	 * the last full check looked at, and of the touched ones the
	 * incremental checks looked at (in all, and when the last full check
	 * ran) */
	uint64_t full_inodes, incr_inodes, incr_inodes_at;
	uint64_t full_inodes_sum;         /* inodes the full checks looked at */
	uint64_t full_prev;               /* blocks and inodes of the full check
					   * before the last one */
	int max_height;
	int mix_all;
	prng rng;
	char first_error[200];
	/* the main task's state */
	int state, want;
	trans_handle h;
	/* mix=all */
	qgroup_ctx q;
	subvol_ctx sc;
	int q_ready, sc_ready;
	ebmem *mem;
	treelog *tl;
	tsnap snaps[TS_MAX_SNAPS];
	int nsnaps;
	tfsync fsw[TS_MAX_FSYNC];
	uint64_t recent[TS_RECENT][2]; /* (root id, ino) of recent writes */
	int nrecent;
	uint64_t storms, sends, sent_inodes, snapshots, snap_deletes;
	uint64_t subvol_creates, subvol_deletes, remounts, log_fallbacks;
	uint64_t reads, read_bytes, lseeks;
	/* power cuts: how many, fsyncs done, and inodes logged then unlinked
	 * in the running transaction (a replay may bring them back) */
	uint64_t cuts, cuts_replayed, fsyncs_done;
	int fsync_commit;    /* an fsync task needs a commit (BTRFS_LOG_FORCE_COMMIT) */
	uint64_t (*gone)[2];  /* (sv, ino) of this transaction */
	int ngone, gone_cap;
	uint64_t gone_trans;
	/* the files fsynced in this transaction, (sv, ino): what a power
	 * cut must find whole (with tent.dur_trans, unless renamed since) */
	uint64_t (*durs)[2];
	int ndurs, durs_cap;
	uint64_t durs_trans;
	uint64_t cut_full;   /* full_checks at the last whole replay */
	int fsync_sv;        /* mix=files: the file fsync flushes before its commit */
	uint64_t fsync_ino;
	/* the fuzzer's script (tort_below), set after lab_open; NULL: the PRNG */
	const uint8_t *script;
	size_t script_len, script_at;
} tort;

/* ---- helpers of exp_torture.c */
uint64_t tort_below(tort *c, uint64_t n);
void tort_ents_del(tort *c, int i);
/* The index of the live name of inode ino of subvolume slot sv, or -1. */
int tort_find(const tort *c, int sv, uint64_t ino);
int tort_fsyncs_busy(const tort *c);
void tort_note_check(tort *c, fs_info *fs, int f);
void tort_note_error(tort *c, const char *what, int rc);
int tort_pick(tort *c, int want_dir);
int tort_pick_sv(tort *c);
int tort_pinned(const tort *c, int sv, uint64_t ino);
void tort_want_commit(tort *c, int why);

/* ---- mix=all operations (exp_torture_all.c) */
void tort_op_fsync_storm(tort *c, task *t);
void tort_op_send(tort *c, task *t);
void tort_op_snap_delete(tort *c, task *t);
void tort_op_snapshot(tort *c, task *t);
void tort_op_subvol_create(tort *c, task *t);
void tort_op_subvol_delete(tort *c, task *t);
/* an entry about to be unlinked: remember it if it was logged in the
 * running transaction */
void tort_note_unlink(tort *c, const tent *e);
/* A rename of e done: the new directories above it its new name logs. */
void tort_note_rename(tort *c, tent *e, uint64_t old_dir);
/* A power cut now (every fifth finished fsync does one): each subvolume
 * replayed from its last commit and synced log (treelog_replay) against
 * what the fsyncs made durable; failures count as check failures. */
void tort_power_cut_check(tort *c);

#endif
