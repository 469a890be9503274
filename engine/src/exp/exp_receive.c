/*
 * exp_receive.c - seed 003: btrfs send / receive of 20,000 small files, as
 * the commit message's test_send.sh does it:
 *
 *   1. mkfs + mount a source and a destination file system, each on its
 *      own disk (`device`);
 *   2. `writers` concurrent shell loops, each running one xfs_io process
 *      per name for file_1 ... file_N (N = files_per_writer x scale):
 *      open(O_CREAT) + pwrite(0, file_bytes). The loops share the names,
 *      so the result is N files, each written up to `writers` times;
 *   3. a read-only snapshot (its delalloc flushed first, as
 *      create_snapshot does, then a commit);
 *   4. `btrfs send -f send_file snap1`: the stream of a full send (send.h)
 *      written to a file on the source file system; timed (send_s);
 *   5. `btrfs receive -f send_file DST`: a new subvolume (committed), the
 *      stream read back from send_file command by command and each
 *      command replayed as its syscall on the destination (recv_step),
 *      then BTRFS_IOC_SET_RECEIVED_SUBVOL's commit; timed (receive_s).
 * Untimed, for the picture and the counts: the sync of umount (every
 * received file written back), after which each file's extents are
 * counted.
 *
 * The stream is the 2018 one: an unconditional TRUNCATE(size) right after
 * each file's last WRITE. `before` is 4.16, the kernel without patch 003
 * (213e8c5520ed, patches.def), on both machines: the truncate to the same, unaligned size writes the
 * dirty tail page back as its own extent and waits for it; `after` skips
 * that wait (4.17). Both flushers (30 s expiry) and transaction kthreads (30 s)
 * run throughout, as on the seed's machine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "costs.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "send.h"
#include "space_fs.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_io.h"

static const param_desc rc_params[] = {
	{ "writers", PT_INT, 10, 1, 64, 0, NULL, "loops",
	  "concurrent shell loops writing the same names (the seed: 10)" },
	{ "files_per_writer", PT_INT, 20000, 1, 200000, 0, NULL, "files",
	  "names each loop writes, file_1 ... file_N: the files sent (the seed: 20,000)" },
	{ "file_bytes", PT_INT, 5000, 1, 1 << 20, 0, NULL, "bytes",
	  "bytes each pwrite writes at offset 0: the size of every file (the seed: 5000)" },
	{ "device", PT_ENUM, BDEV_PROFILE_VM_SSD, 0, 0, 0, bdev_profile_names, NULL,
	  "device profile of both disks (default: the seed's VM disk, vm-ssd)" },
	{ "scale", PT_FLOAT, 1, 0, 1, 1, NULL, NULL,
	  "share of the names (0 < scale <= 1; 1 is the published size)" },
};

static const metric_desc rc_metrics[] = {
	{ "receive_s", "s", "time btrfs receive took: subvolume create to its last commit" },
	{ "send_s", "s", "time btrfs send took, writing the stream to a file" },
	{ "truncates", "count", "TRUNCATE commands the receive replayed" },
	{ "writeback_waits", "count",
	  "synchronous tail-page writes the receive's truncates waited for" },
	{ "extents_per_file", "count", "data extents per received file, once written back" },
	{ "sync_wait_avg_ms", "ms", "mean time a truncate waited for its tail page" },
	{ "sync_wait_s", "s", "time the receive spent waiting for tail pages" },
	{ "recv_mkfile_s", "s", "receive time in MKFILE commands (creat + close)" },
	{ "recv_rename_s", "s", "receive time in RENAME commands" },
	{ "recv_write_s", "s", "receive time in WRITE commands (pwrite)" },
	{ "recv_truncate_s", "s", "receive time in TRUNCATE commands (truncate)" },
	{ "recv_chown_s", "s", "receive time in CHOWN commands (lchown)" },
	{ "recv_chmod_s", "s", "receive time in CHMOD commands (chmod)" },
	{ "recv_utimes_s", "s", "receive time in UTIMES commands (utimensat)" },
	{ "recv_commit_s", "s", "receive time in its commits (subvolume create, SET_RECEIVED_SUBVOL)" },
	{ "files", "count", "files received" },
	{ "data_extents", "count", "data extents of the received files" },
	{ "recv_device_writes", "count", "writes the destination disk served during the receive" },
	{ "stream_mib", "MiB", "size of the send stream" },
	{ "create_s", "s", "time the writer loops took (not timed by the seed)" },
};

/*
 * Seed 003's commit message: "average receive time" over 5 runs, with the
 * device the published times imply (mechanisms.md section 4: a VM's disk).
 * One constant is fitted on this seed, on the after row: RCV_NS_CMD (the
 * receive's own work per command, costs.h). The before row is predicted:
 * its extra time is the VM disk's synchronous path (vm-ssd in bdev.c),
 * whose parts are each measured or estimated, none fitted here.
 */
static const published_row rc_published[] = {
	{ "before", "", "receive_s", 26.49,
	  "seed 003, average receive time over 5 runs, without the change (predicted: "
	  "the after row's fit plus vm-ssd's synchronous tail writes)", 0.25, 0, 0, 2.53, 5 },
	{ "after", "", "receive_s", 12.51,
	  "seed 003, average receive time over 5 runs, with the change (RCV_NS_CMD fitted "
	  "on it)", 0.25, 0, 1, 0.32, 5 },
};

enum {
	PH_CREATE, PH_SNAP_FLUSH, PH_SNAP_WAIT, PH_SNAPSHOT, PH_SEND, PH_SEND_WRITE,
	PH_RECV_SUBVOL, PH_RECV_INIT, PH_RECV, PH_RECV_DONE, PH_SYNC, PH_DONE,
	PH_COMMIT, /* a commit on commit_tm, then phase after_commit */
};

/* The zoomed timeline: the commands of RC_ZOOM_FILES files from the middle
 * of the stream, each with its start and end, and the truncates' waits. */
#define RC_ZOOM_FILES 12
#define RC_ZOOM_CMDS (RC_ZOOM_FILES * 16)
#define RC_PROGRESS 256
#define RC_LAYOUT_FILES 6
#define RC_ZOOM_IOS 256
#define RC_BUCKETS 512

typedef struct rc_cmd {
	uint8_t op;
	uint32_t file;             /* index of the file (file_<file+1>) */
	simtime_t t0, t1;
	simtime_t w0, w1;          /* TRUNCATE: its tail wait (w1 == w0: none) */
} rc_cmd;

/* A request the destination disk served during the zoom window. */
typedef struct rc_io {
	uint8_t op;
	uint64_t off, bytes;
	simtime_t t0, t1;
} rc_io;

struct rc_ctx;

typedef struct rc_writer {
	struct rc_ctx *c;
	uint64_t i;                /* next name */
	int st;                    /* 0: spawn, 1: open, 2: pwrite */
	struct inode *in;
} rc_writer;

typedef struct rc_ctx {
	bdev *sdev, *ddev;
	fs_info *src, *dst;
	trans_mgr stm, dtm;
	int stm_ready, dtm_ready;
	struct btrfs_root *sroot, *snap, *rroot;
	uint64_t files, bytes;
	int nwriters, writers_left;
	rc_writer *w;
	uint64_t *ino_of;          /* file index -> source ino (0: not yet) */
	uint32_t *idx_of;          /* source ino - RC_INO0 -> file index + 1 */
	uint64_t ino_cap;
	send_stream st;
	recv_ctx r;
	int r_ready;
	struct inode *sendf;
	uint64_t wr_off;           /* send_file: bytes written */
	uint64_t rd_next, rd_off;  /* next command to read from it, at */
	task *shell;
	waitq shell_wait;
	int phase, err;
	uint64_t scan;             /* PH_SNAP_WAIT: next inode to look at */
	trans_handle h;
	int h_started;             /* 1: h holds a handle being committed */
	trans_mgr *commit_tm;      /* PH_COMMIT: whose transaction */
	int after_commit;          /* PH_COMMIT: the phase that follows */
	simtime_t t_create0, t_create1, t_send0, t_send1, t_recv0, t_recv1;
	simtime_t commit_ns, c0;
	uint64_t dwrites0, dwrites1;
	/* statistics */
	uint64_t op_ns[SEND_NOPS];
	rc_cmd zoom[RC_ZOOM_CMDS];
	int nzoom;
	uint64_t zoom_first;       /* first file of the zoom window */
	uint64_t zcmd0, zcmd1;     /* its commands: [zcmd0, zcmd1) */
	int zoom_on;               /* the receive is inside it */
	rc_io zio[RC_ZOOM_IOS];    /* the destination disk's requests in it */
	int nzio;
	/* the destination disk's requests over the whole receive, per
	 * bucket of bucket_ns (doubled when the run outgrows them) */
	uint32_t bucket[RC_BUCKETS];
	simtime_t bucket_ns;
	int recording;
	double prog_t[RC_PROGRESS], prog_v[RC_PROGRESS];
	int nprog;
	uint64_t prog_stride, prog_seen, files_done;
} rc_ctx;

/* The first inode number a subvolume hands out (its top dir is 256). */
#define RC_INO0 (BTRFS_FIRST_FREE_OBJECTID + 1)

static void rc_fail(rc_ctx *c, sim *s, int rc)
{
	if (!c->err)
		c->err = rc;
	sim_stop(s);
}

/* The source name of ino (send_name_fn): file_<index+1>. */
static int rc_name_of(void *ctx, uint64_t ino, uint64_t parent, char *buf, size_t len)
{
	rc_ctx *c = ctx;
	(void)parent;
	if (ino < RC_INO0 || ino - RC_INO0 >= c->ino_cap || !c->idx_of[ino - RC_INO0])
		return LAB_ENOENT;
	snprintf(buf, len, "file_%u", c->idx_of[ino - RC_INO0]);
	return 0;
}

/* ------------------------------------------------------------ the writers */

/*
 * One step of a shell loop: a new xfs_io process (fork, exec, exit), its
 * open(O_CREAT) of file_<i+1> (the first loop to get there creates it,
 * the others find it), its pwrite of file_bytes at 0, close.
 */
static int rc_writer_step(sim *s, task *t)
{
	rc_writer *w = t->ctx;
	rc_ctx *c = w->c;
	if (c->err)
		return TASK_DONE;
	if (w->i >= c->files) {
		if (--c->writers_left == 0)
			waitq_wake_all(s, &c->shell_wait, t->clock);
		return TASK_DONE;
	}
	int rc;
	char name[32];
	switch (w->st) {
	case 0:
		task_cpu(s, t, C_PROC_NS);
		w->st = 1;
		/* fall through */
	case 1:
		if (c->ino_of[w->i]) {
			/* open(2) of an existing name: a dcache hit */
			fs_charge(c->src, t, VFS_NS_SYSCALL);
			w->in = fs_inode_get(c->sroot, c->ino_of[w->i]);
		} else {
			snprintf(name, sizeof name, "file_%llu", (unsigned long long)w->i + 1);
			rc = vfs_create(c->src, t, c->sroot, BTRFS_FIRST_FREE_OBJECTID, name, 0644,
					&w->in);
			if (rc == FS_SPACE_WAIT)
				return TASK_BLOCKED;
			if (rc < 0 || w->in->ino < RC_INO0 || w->in->ino - RC_INO0 >= c->ino_cap) {
				rc_fail(c, s, rc < 0 ? rc : LAB_EENGINE);
				return TASK_DONE;
			}
			c->ino_of[w->i] = w->in->ino;
			c->idx_of[w->in->ino - RC_INO0] = (uint32_t)w->i + 1;
		}
		if (!w->in) {
			rc_fail(c, s, LAB_EENGINE);
			return TASK_DONE;
		}
		w->st = 2;
		/* fall through */
	default:
		rc = vio_write(c->src, t, w->in, 0, c->bytes);
		if (rc == FS_SPACE_WAIT)
			return TASK_BLOCKED; /* nothing written: again when woken */
		if (rc < 0) {
			rc_fail(c, s, rc);
			return TASK_DONE;
		}
		fs_charge(c->src, t, VFS_NS_SYSCALL); /* close */
		w->st = 0;
		w->i++;
		return rc == 1 ? TASK_BLOCKED : TASK_RUN; /* 1: throttled */
	}
}

/* ------------------------------------------------------------ the shell */

/* Commit on t through a handle (models btrfs_commit_transaction from an
 * ioctl). Returns 0 when done, 1 when t was parked (call again), < 0. */
static int rc_commit(rc_ctx *c, trans_mgr *tm, task *t, int reason)
{
	int rc;
	if (!c->h_started) {
		rc = trans_start(tm, t, &c->h);
		if (rc == TRANS_WAIT)
			return 1;
		if (rc)
			return rc;
		c->h_started = 1;
	}
	rc = trans_commit(&c->h, reason);
	if (rc == TRANS_WAIT)
		return 1;
	c->h_started = 0;
	return rc;
}

/* Go to PH_COMMIT: a commit of tm's transaction, then phase `next`. */
static int rc_then_commit(rc_ctx *c, trans_mgr *tm, int next)
{
	c->commit_tm = tm;
	c->after_commit = next;
	c->phase = PH_COMMIT;
	return TASK_RUN;
}

/* Record the progress of the receive (files done against time),
 * decimated to RC_PROGRESS points. */
static void rc_progress_add(rc_ctx *c, simtime_t now)
{
	if (c->prog_seen++ % c->prog_stride)
		return;
	if (c->nprog == RC_PROGRESS) {
		for (int i = 0; i < RC_PROGRESS / 2; i++) {
			c->prog_t[i] = c->prog_t[2 * i];
			c->prog_v[i] = c->prog_v[2 * i];
		}
		c->nprog = RC_PROGRESS / 2;
		c->prog_stride *= 2;
	}
	c->prog_t[c->nprog] = (double)(now - c->t_recv0) / 1e9;
	c->prog_v[c->nprog++] = (double)c->files_done;
}

/* Every request of the destination disk (bdev observer): counted per
 * time bucket while the receive runs, kept whole inside the zoom window. */
static void rc_dev_observe(void *ctx, const bio *b)
{
	rc_ctx *c = ctx;
	if (!c->recording || b->submit < c->t_recv0)
		return;
	uint64_t k = (b->submit - c->t_recv0) / c->bucket_ns;
	while (k >= RC_BUCKETS) {
		for (int i = 0; i < RC_BUCKETS / 2; i++)
			c->bucket[i] = c->bucket[2 * i] + c->bucket[2 * i + 1];
		memset(c->bucket + RC_BUCKETS / 2, 0, sizeof(c->bucket) / 2);
		c->bucket_ns *= 2;
		k = (b->submit - c->t_recv0) / c->bucket_ns;
	}
	c->bucket[k]++;
	if (c->zoom_on && c->nzio < RC_ZOOM_IOS) {
		rc_io *z = &c->zio[c->nzio++];
		z->op = (uint8_t)b->op;
		z->off = b->offset;
		z->bytes = b->bytes;
		z->t0 = b->submit;
		z->t1 = b->complete;
	}
}

/* The commands of the zoom window's files: [zcmd0, zcmd1) of the stream. */
static void rc_zoom_range(rc_ctx *c)
{
	c->zcmd0 = c->zcmd1 = 0;
	for (uint64_t k = 0; k < c->st.n; k++) {
		uint64_t ino = c->st.cmds[k].ino;
		if (ino < RC_INO0 || ino - RC_INO0 >= c->ino_cap || !c->idx_of[ino - RC_INO0])
			continue;
		uint64_t f = c->idx_of[ino - RC_INO0] - 1;
		if (f < c->zoom_first || f >= c->zoom_first + RC_ZOOM_FILES)
			continue;
		if (!c->zcmd1)
			c->zcmd0 = k;
		c->zcmd1 = k + 1;
	}
}

/* Recording (sim.h): operation `name` starts, kind "op:NAME", with its
 * number (the command's index in the stream, or 0 for a phase), so a
 * replay steps the receive command by command and aligns the kernels on
 * the n-th one. */
static void rc_rec_op(sim *s, task *t, const char *name, uint64_t n)
{
	if (!sim_recording_ops(s))
		return;
	char kind[32];
	snprintf(kind, sizeof kind, "op:%s", name);
	const int64_t a[] = { (int64_t)n };
	sim_rec(s, sim_trace_kind_args(s, kind, "n"), t, 1, a);
}

/* Zoom window bookkeeping for the command just replayed. */
static void rc_zoom_add(rc_ctx *c, const send_cmd *cmd, simtime_t t0, simtime_t t1)
{
	const recv_ctx *r = &c->r;
	if (!c->zoom_on || c->nzoom == RC_ZOOM_CMDS)
		return;
	uint64_t file;
	if (cmd->ino >= RC_INO0 && cmd->ino - RC_INO0 < c->ino_cap && c->idx_of[cmd->ino - RC_INO0])
		file = c->idx_of[cmd->ino - RC_INO0] - 1;
	else if (c->nzoom)
		file = c->zoom[c->nzoom - 1].file; /* the parent's UTIMES: its file's */
	else
		return;
	rc_cmd *z = &c->zoom[c->nzoom++];
	z->op = cmd->op;
	z->file = (uint32_t)file;
	z->t0 = t0;
	z->t1 = t1;
	z->w0 = z->w1 = t0;
	if (cmd->op == SEND_TRUNCATE && r->last_sync_ns) {
		z->w0 = r->last_sync_t0;
		z->w1 = r->last_sync_t0 + r->last_sync_ns;
	}
}

/*
 * One command of the receive: read it from send_file (btrfs-progs reads
 * each command's header and body with read(2): page cache hits, the file
 * was just written), then replay it (recv_step). Returns recv_step's
 * TASK_* or a negative LAB_E*.
 */
static int rc_recv_cmd(rc_ctx *c, task *t)
{
	recv_ctx *r = &c->r;
	uint64_t k = r->next;
	if (k >= c->st.n)
		return recv_step(r, t);
	const send_cmd *cmd = &c->st.cmds[k];
	if (c->rd_next == k) {
		uint64_t got = 0;
		fs_charge(c->src, t, VFS_NS_SYSCALL); /* the second read(2) */
		int rc = vio_read(c->src, t, c->sendf, c->rd_off, cmd->size, &got);
		if (rc == 1)
			return TASK_BLOCKED; /* a read in flight: again when woken */
		if (rc < 0)
			return rc;
		if (got != cmd->size)
			return LAB_EENGINE;
		c->rd_off += cmd->size;
		c->rd_next = k + 1;
	}
	simtime_t t0 = r->retry ? r->retry_t0 : t->clock;
	if (!r->retry)
		rc_rec_op(c->src->sim, t, send_op_names[cmd->op], k);
	c->zoom_on = k >= c->zcmd0 && k < c->zcmd1;
	int rc = recv_step(r, t);
	if (rc < 0 || r->next == k)
		return rc; /* failed, or parked inside the command */
	c->op_ns[cmd->op] += t->clock - t0;
	rc_zoom_add(c, cmd, t0, t->clock);
	/* a file is received with its last command (not the parent's UTIMES
	 * that follows its RENAME) */
	int last = r->next >= c->st.n || c->st.cmds[r->next].ino != cmd->ino;
	int file = cmd->ino >= RC_INO0 && cmd->ino - RC_INO0 < c->ino_cap && c->idx_of[cmd->ino - RC_INO0];
	if (last && file && cmd->op != SEND_RENAME && cmd->op != SEND_MKFILE) {
		c->files_done++;
		rc_progress_add(c, t->clock);
	}
	return rc;
}

/* The shell running test_send.sh, one phase after another. */
static int rc_shell_step(sim *s, task *t)
{
	rc_ctx *c = t->ctx;
	dfs *sdf = vio_dfs(c->src);
	int rc;
	if (c->err)
		return TASK_DONE;
	switch (c->phase) {
	case PH_CREATE:
		if (c->writers_left) {
			task_park(t, &c->shell_wait);
			return TASK_BLOCKED;
		}
		c->t_create1 = t->clock;
		rc_rec_op(s, t, "snapshot", 0);
		c->phase = PH_SNAP_FLUSH;
		/* fall through */
	case PH_SNAP_FLUSH: {
		/* create_snapshot: btrfs_start_delalloc_inodes(root) ... */
		dinode *const *in = dfs_inodes(sdf);
		for (int i = 0; i < sdf->ninodes; i++)
			if (in[i]->pc.dirty)
				vd_writeback_start(in[i], 1);
		c->scan = 0;
		c->phase = PH_SNAP_WAIT;
	}
		/* fall through */
	case PH_SNAP_WAIT:
		/* ... and btrfs_wait_ordered_extents */
		while (c->scan < (uint64_t)sdf->ninodes) {
			dinode *d = dfs_inodes(sdf)[c->scan];
			if (!vd_clean(d)) {
				if (!d->wb_active && d->pc.dirty)
					vd_writeback_start(d, 1);
				task_park(t, vd_wb_waiters(d));
				return TASK_BLOCKED;
			}
			c->scan++;
		}
		/* the commit of the flushed data (btrfs_commit_transaction at
		 * the start of create_snapshot's wait) */
		return rc_then_commit(c, &c->stm, PH_SNAPSHOT);
	case PH_SNAPSHOT:
		/* create_pending_snapshot: a new root sharing every block of
		 * the source's (btrfs_copy_root), in the commit that follows */
		rc = fs_root_create(c->src, t, fs_root_next_id(c->src), &c->snap);
		if (!rc)
			rc = bt_copy_root(&c->sroot->tree, &c->snap->tree, t);
		if (rc)
			break;
		c->sroot->last_snapshot = c->src->transid;
		return rc_then_commit(c, &c->stm, PH_SEND);
	case PH_SEND:
		/* btrfs send: the stream (the ioctl's tree walk and commands) */
		if (!c->st.cmds) {
			c->t_send0 = t->clock;
			rc_rec_op(s, t, "send", 0);
			send_cfg cfg;
			send_cfg_default(&cfg); /* the 2018 send: every file truncated */
			rc = send_build(c->src, t, c->snap, &cfg, rc_name_of, c, &c->st);
			if (rc)
				break;
		}
		rc = vfs_create(c->src, t, c->sroot, BTRFS_FIRST_FREE_OBJECTID, "send_file", 0600,
				&c->sendf);
		if (rc == FS_SPACE_WAIT)
			return TASK_BLOCKED;
		if (rc)
			break;
		c->phase = PH_SEND_WRITE;
		return TASK_RUN;
	case PH_SEND_WRITE:
		/* ... written to send_file as the send buffer fills
		 * (SEND_BUF_SIZE, 64 KiB, per kernel_write) */
		if (c->wr_off < c->st.bytes) {
			uint64_t n = c->st.bytes - c->wr_off;
			if (n > 64 * 1024)
				n = 64 * 1024;
			rc = vio_write(c->src, t, c->sendf, c->wr_off, n);
			if (rc == FS_SPACE_WAIT)
				return TASK_BLOCKED;
			if (rc < 0)
				break;
			c->wr_off += n;
			return rc == 1 ? TASK_BLOCKED : TASK_RUN;
		}
		c->t_send1 = t->clock;
		c->phase = PH_RECV_SUBVOL;
		/* fall through */
	case PH_RECV_SUBVOL:
		/* btrfs receive: BTRFS_IOC_SUBVOL_CREATE "snap1" (committed) */
		if (!c->recording) {
			rc_rec_op(s, t, "subvol_create", 0);
			c->t_recv0 = t->clock;
			c->dwrites0 = bdev_get_stats(c->ddev)->writes;
			c->recording = 1;
		}
		rc = fs_create_subvol(c->dst, t, fs_root_lookup(c->dst, BTRFS_FS_TREE_OBJECTID),
				      BTRFS_FIRST_FREE_OBJECTID, "snap1", &c->rroot);
		if (rc == FS_SPACE_WAIT)
			return TASK_BLOCKED;
		if (rc)
			break;
		c->c0 = t->clock;
		return rc_then_commit(c, &c->dtm, PH_RECV_INIT);
	case PH_RECV_INIT:
		c->commit_ns += t->clock - c->c0;
		{
			rc = recv_init(&c->r, c->dst, c->rroot, &c->st);
		}
		if (rc)
			break;
		c->r_ready = 1;
		rc_zoom_range(c);
		c->phase = PH_RECV;
		return TASK_RUN;
	case PH_RECV:
		rc = rc_recv_cmd(c, t);
		if (rc == TASK_RUN || rc == TASK_BLOCKED)
			return rc;
		if (rc < 0)
			break;
		/* BTRFS_IOC_SET_RECEIVED_SUBVOL: the root item, then a commit */
		c->c0 = t->clock;
		rc_rec_op(s, t, "set_received_subvol", 0);
		return rc_then_commit(c, &c->dtm, PH_RECV_DONE);
	case PH_RECV_DONE:
		c->commit_ns += t->clock - c->c0;
		c->t_recv1 = t->clock;
		c->dwrites1 = bdev_get_stats(c->ddev)->writes;
		c->recording = 0;
		c->zoom_on = 0;
		rc_rec_op(s, t, "sync", 0);
		c->phase = PH_SYNC;
		/* fall through */
	case PH_SYNC:
		/* umount's sync (not timed): every received file written back,
		 * then its extents counted */
		rc = recv_flush(&c->r, t);
		if (rc == 1)
			return TASK_BLOCKED;
		if (rc)
			break;
		return rc_then_commit(c, &c->dtm, PH_DONE);
	case PH_COMMIT:
		rc = rc_commit(c, c->commit_tm, t, TCOMMIT_EXPLICIT);
		if (rc == 1)
			return TASK_BLOCKED;
		if (rc)
			break;
		c->phase = c->after_commit;
		return TASK_RUN;
	case PH_DONE:
	default:
		/* the flushers and kthreads would tick forever */
		sdf->flusher_armed = 0;
		vio_dfs(c->dst)->flusher_armed = 0;
		c->stm.kthread_stop = 1;
		c->dtm.kthread_stop = 1;
		sim_stop(s);
		return TASK_DONE;
	}
	rc_fail(c, s, rc ? rc : LAB_EENGINE);
	return TASK_DONE;
}

/* ------------------------------------------------------------- the run */

/* The test VM's memory [estimate: 8 GiB] (rc_mount). */
#define RC_RAM_BYTES (8ull << 30)

/* One file system on its own disk, with transactions (and their kthread)
 * and the data path (flusher) attached. */
static int rc_mount(struct lab_run *r, rc_ctx *c, bdev **dev, fs_info **fs, trans_mgr *tm,
		    int *tm_ready)
{
	const char *prof = exp_param_enum_name(r, "device");
	int rc = bdev_create(r->sim, prof, dev);
	if (rc)
		return exp_fail(r, rc, "no device profile '%s'", prof);
	fs_opts fo;
	fs_opts_default(&fo);
	fo.patches = r->patches; /* one kernel on the seed's machine */
	rc = fs_mount(r->sim, *dev, &fo, fs);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	rc = trans_init(tm, *fs);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	*tm_ready = 1;
	data_opts o;
	vio_opts_default(&o);
	/* a test VM's memory [estimate: 8 GiB]: dirty_background_ratio 10%,
	 * dirty_ratio 20%; the seed's 160 MB of received data stay under
	 * both, as the receive's pages did on the seed's machine */
	o.ram_bytes = RC_RAM_BYTES;
	o.dirty_bg_bytes = o.ram_bytes / 10;
	rc = vio_attach(*fs, &o, tm);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	vio_dfs(*fs)->sync_io = 0;
	dfs_start_flusher(vio_dfs(*fs));
	rc = trans_kthread_start(tm, 0);
	if (rc)
		return exp_fail(r, rc, "out of memory");
	(void)c;
	return 0;
}

/* Limits between parameters (lab_exp.validate): the send stream of every
 * name (its data and ~1 KiB of commands each; a sector each as the bound)
 * is written to one send file (the VFS holds up to VIO_MAX_FILE_BYTES)
 * and read back by receive, which the simulated page cache does only for
 * a file that fits in it: a bigger one thrashes (its
 * readahead pages are evicted before receive reads them, measured: a
 * 9.8 GiB stream made 131 million events in a minute without receiving
 * a file), so it is refused rather than run. */
static int rc_validate(struct lab_run *r)
{
	double n = exp_param(r, "files_per_writer") * exp_param(r, "scale");
	double files = n < 1 ? 1 : floor(n + 0.5);
	double bytes = exp_param(r, "file_bytes");
	double stream = files * (bytes + 4096);
	if (stream > (double)RC_RAM_BYTES)
		return exp_fail(r, LAB_ERANGE,
				"file_bytes (%.0f) x %.0f names (files_per_writer x scale) make a send stream "
				"of %.1f GiB: the model reads back only a stream that fits the VM's %.0f GiB page cache",
				bytes, files, stream / (1ull << 30), (double)RC_RAM_BYTES / (1ull << 30));
	return 0;
}

static int rc_setup(struct lab_run *r)
{
	rc_ctx *c = lab_calloc(1, sizeof(*c));
	if (!c)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	r->ctx = c;
	double n = exp_param(r, "files_per_writer") * exp_param(r, "scale");
	c->files = n < 1 ? 1 : (uint64_t)(n + 0.5);
	c->bytes = (uint64_t)exp_param(r, "file_bytes");
	c->nwriters = (int)exp_param(r, "writers");
	c->prog_stride = 1;
	c->zoom_first = c->files / 2;
	c->ino_cap = c->files + 64;
	c->ino_of = lab_calloc(c->files, sizeof(*c->ino_of));
	c->idx_of = lab_calloc(c->ino_cap, sizeof(*c->idx_of));
	c->w = lab_calloc((size_t)c->nwriters, sizeof(*c->w));
	if (!c->ino_of || !c->idx_of || !c->w)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	int rc = rc_mount(r, c, &c->sdev, &c->src, &c->stm, &c->stm_ready);
	if (!rc)
		rc = rc_mount(r, c, &c->ddev, &c->dst, &c->dtm, &c->dtm_ready);
	if (rc)
		return rc;
	c->sroot = fs_root_lookup(c->src, BTRFS_FS_TREE_OBJECTID);
	c->bucket_ns = 50 * NS_PER_MS;
	bdev_set_observer(c->ddev, rc_dev_observe, c);
	c->shell = task_spawn(r->sim, "shell", rc_shell_step, c, 0);
	if (!c->shell)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	c->writers_left = c->nwriters;
	for (int i = 0; i < c->nwriters; i++) {
		c->w[i].c = c;
		if (!task_spawn(r->sim, "xfs_io loop", rc_writer_step, &c->w[i], 0))
			return exp_fail(r, LAB_ENOMEM, "out of memory");
	}
	return 0;
}

static double rc_progress(struct lab_run *r)
{
	rc_ctx *c = r->ctx;
	if (!c || !c->files)
		return 0;
	if (c->phase == PH_CREATE) {
		uint64_t done = 0;
		for (int i = 0; i < c->nwriters; i++)
			done += c->w[i].i;
		return 0.4 * (double)done / (double)(c->files * (uint64_t)c->nwriters);
	}
	int ph = c->phase == PH_COMMIT ? c->after_commit : c->phase;
	if (ph < PH_RECV)
		return 0.45;
	if (ph == PH_RECV && c->st.n)
		return 0.45 + 0.5 * (double)c->r.next / (double)c->st.n;
	return 0.95;
}

static int rc_collect(struct lab_run *r)
{
	rc_ctx *c = r->ctx;
	if (c->err)
		return exp_fail(r, c->err, "the run failed: %s", lab_strerror(c->err));
	if (c->phase != PH_DONE)
		return exp_fail(r, LAB_EENGINE, "the receive did not finish");
	const recv_ctx *rv = &c->r;
	double files = (double)c->st.files;
	exp_metric(r, "receive_s", (double)(c->t_recv1 - c->t_recv0) / 1e9);
	exp_metric(r, "send_s", (double)(c->t_send1 - c->t_send0) / 1e9);
	exp_metric(r, "truncates", (double)rv->truncates);
	exp_metric(r, "writeback_waits", (double)rv->sync_writes);
	exp_metric(r, "extents_per_file", files ? (double)rv->data_extents / files : 0);
	exp_metric(r, "sync_wait_avg_ms", lhist_mean(&rv->sync_lat) / 1e6);
	exp_metric(r, "sync_wait_s", (double)rv->sync_lat.sum_ns / 1e9);
	static const char *const opm[SEND_NOPS] = {
		[SEND_MKFILE] = "recv_mkfile_s", [SEND_RENAME] = "recv_rename_s",
		[SEND_WRITE] = "recv_write_s", [SEND_TRUNCATE] = "recv_truncate_s",
		[SEND_CHOWN] = "recv_chown_s", [SEND_CHMOD] = "recv_chmod_s",
		[SEND_UTIMES] = "recv_utimes_s",
	};
	for (int i = 0; i < SEND_NOPS; i++)
		if (opm[i])
			exp_metric(r, opm[i], (double)c->op_ns[i] / 1e9);
	exp_metric(r, "recv_commit_s", (double)c->commit_ns / 1e9);
	exp_metric(r, "files", files);
	exp_metric(r, "data_extents", (double)rv->data_extents);
	exp_metric(r, "recv_device_writes", (double)(c->dwrites1 - c->dwrites0));
	exp_metric(r, "stream_mib", (double)c->st.bytes / (1024.0 * 1024.0));
	exp_metric(r, "create_s", (double)(c->t_create1 - c->t_create0) / 1e9);
	return 0;
}

/* The file extent items of a received file, as the tree holds them. */
static void rc_layout_json(rc_ctx *c, uint64_t idx, strbuf *sb)
{
	uint64_t sino = c->ino_of[idx];
	rcv_ino *ri = recv_lookup(&c->r, sino);
	js_obj(sb);
	char name[32];
	snprintf(name, sizeof name, "file_%llu", (unsigned long long)idx + 1);
	js_kstr(sb, "name", name);
	js_kint(sb, "size", (int64_t)c->bytes);
	js_kint(sb, "sync_writes", ri ? (int64_t)ri->sync_writes : 0);
	js_key(sb, "extents");
	js_arr(sb);
	if (ri && ri->inode) {
		fe_iter it;
		fe_info fe;
		c->dst->accounting_off++;
		int k = fe_iter_first(c->dst, NULL, ri->inode, 0, &it, &fe);
		while (k == 0) {
			js_obj(sb);
			js_kint(sb, "off", (int64_t)fe.file_off);
			js_kint(sb, "len", (int64_t)fe.num_bytes);
			js_kint(sb, "disk", (int64_t)fe.disk_bytenr);
			js_kint(sb, "disk_len", (int64_t)fe.disk_num_bytes);
			js_kstr(sb, "type", fe.type == FE_INLINE ? "inline" : "regular");
			js_obj_end(sb);
			k = fe_iter_next(c->dst, &it, &fe);
		}
		fe_iter_end(&it);
		c->dst->accounting_off--;
	}
	js_arr_end(sb);
	js_obj_end(sb);
}

static void rc_details(struct lab_run *r, strbuf *sb)
{
	rc_ctx *c = r->ctx;
	const recv_ctx *rv = &c->r;
	js_obj(sb);
	js_kint(sb, "files", (int64_t)c->files);
	js_kint(sb, "file_bytes", (int64_t)c->bytes);
	js_kbool(sb, "skip_same_size_writeback", fs_patch_on(c->dst, P_003_TRUNC_SKIP_SAME_SIZE_WB));
	js_knum(sb, "receive_s", (double)(c->t_recv1 - c->t_recv0) / 1e9);
	/* the zoomed timeline, times in ms from its first command */
	js_key(sb, "zoom");
	js_obj(sb);
	simtime_t z0 = c->nzoom ? c->zoom[0].t0 : 0;
	js_kint(sb, "first_file", (int64_t)c->zoom_first + 1);
	js_knum(sb, "at_s", (double)(z0 - c->t_recv0) / 1e9);
	js_key(sb, "cmds");
	js_arr(sb);
	for (int i = 0; i < c->nzoom; i++) {
		const rc_cmd *z = &c->zoom[i];
		js_obj(sb);
		js_kstr(sb, "op", send_op_names[z->op]);
		js_kint(sb, "file", (int64_t)z->file + 1);
		js_knum(sb, "t0_ms", (double)(z->t0 - z0) / 1e6);
		js_knum(sb, "t1_ms", (double)(z->t1 - z0) / 1e6);
		if (z->w1 > z->w0) {
			js_knum(sb, "wait0_ms", (double)(z->w0 - z0) / 1e6);
			js_knum(sb, "wait1_ms", (double)(z->w1 - z0) / 1e6);
		}
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_obj_end(sb);
	/* files received against time */
	js_key(sb, "progress");
	js_arr(sb);
	for (int i = 0; i < c->nprog; i++) {
		js_arr(sb);
		js_num(sb, c->prog_t[i]);
		js_num(sb, c->prog_v[i]);
		js_arr_end(sb);
	}
	js_arr_end(sb);
	/* time per command type */
	js_key(sb, "ops");
	js_obj(sb);
	for (int i = 0; i < SEND_NOPS; i++) {
		if (!c->st.per_op[i])
			continue;
		js_key(sb, send_op_names[i]);
		js_obj(sb);
		js_kint(sb, "count", (int64_t)c->st.per_op[i]);
		js_knum(sb, "s", (double)c->op_ns[i] / 1e9);
		js_obj_end(sb);
	}
	js_obj_end(sb);
	js_key(sb, "sync");
	lhist_json(&rv->sync_lat, sb);
	/* the on-disk layout of a few received files of the zoom window */
	js_key(sb, "layout");
	js_arr(sb);
	for (uint64_t i = 0; i < RC_LAYOUT_FILES && c->zoom_first + i < c->files; i++)
		rc_layout_json(c, c->zoom_first + i, sb);
	js_arr_end(sb);
	/* the destination disk: its requests in the zoom window (ms from
	 * the window's first command) and per bucket over the receive */
	js_key(sb, "device");
	js_obj(sb);
	js_key(sb, "zoom_ios");
	js_arr(sb);
	for (int i = 0; i < c->nzio; i++) {
		const rc_io *z = &c->zio[i];
		js_obj(sb);
		js_kstr(sb, "op", z->op == BIO_WRITE ? "write" : z->op == BIO_READ ? "read" : "flush");
		js_kint(sb, "off", (int64_t)z->off);
		js_kint(sb, "bytes", (int64_t)z->bytes);
		js_knum(sb, "t0_ms", ((double)z->t0 - (double)z0) / 1e6);
		js_knum(sb, "t1_ms", ((double)z->t1 - (double)z0) / 1e6);
		js_obj_end(sb);
	}
	js_arr_end(sb);
	js_knum(sb, "bucket_s", (double)c->bucket_ns / 1e9);
	uint64_t nb = c->t_recv1 > c->t_recv0 ? (c->t_recv1 - c->t_recv0) / c->bucket_ns + 1 : 0;
	js_key(sb, "requests");
	js_arr(sb);
	for (uint64_t i = 0; i < nb && i < RC_BUCKETS; i++)
		js_int(sb, c->bucket[i]);
	js_arr_end(sb);
	js_obj_end(sb);
	js_key(sb, "commits");
	trans_commits_json(&c->dtm, 0, 16, sb);
	js_obj_end(sb);
}

/* The received copy against the snapshot, and both file systems'
 * invariants once their extent trees have caught up. */
static int rc_check(struct lab_run *r)
{
	rc_ctx *c = r->ctx;
	if (!c || c->phase != PH_DONE)
		return 0;
	int bad = check_send_received(c->src, c->snap, &c->r, rc_name_of, c);
	if (c->dst->nrefq == 0)
		bad += check_fs(c->dst);
	if (c->src->nrefq == 0)
		bad += check_fs(c->src);
	return bad;
}

static void rc_teardown(struct lab_run *r)
{
	rc_ctx *c = r->ctx;
	if (!c)
		return;
	if (c->r_ready)
		recv_destroy(&c->r);
	send_stream_free(&c->st);
	fs_info *fss[2] = { c->src, c->dst };
	trans_mgr *tms[2] = { &c->stm, &c->dtm };
	int ready[2] = { c->stm_ready, c->dtm_ready };
	for (int i = 0; i < 2; i++) {
		if (!fss[i])
			continue;
		vio_detach(fss[i]);
		if (ready[i])
			trans_destroy(tms[i]);
		fs_unmount(fss[i]);
	}
	bdev_destroy(c->sdev);
	bdev_destroy(c->ddev);
	free(c->ino_of);
	free(c->idx_of);
	free(c->w);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events: per name (files_per_writer x scale, as rc_setup
 * rounds it) one pwrite per loop, ~11 for its send, receive and commit
 * share, and its data's writeback, ~1 event per 5 pages. Coefficients:
 * events of native runs (test_estimate keeps them within a factor of 3
 * over random settings). */
static double rc_estimate(const struct lab_run *r)
{
	double n = exp_param(r, "files_per_writer") * exp_param(r, "scale");
	double files = n < 1 ? 1 : floor(n + 0.5);
	double pages = ceil(exp_param(r, "file_bytes") / 4096);
	return 40 + files * (11 + exp_param(r, "writers") + pages / 5);
}

/* The patch: what 4.17 adds to 4.16 (the variant is its switch) */
static const patch_id rc_patches[] = { P_003_TRUNC_SKIP_SAME_SIZE_WB };

/* both kernels, and an unaligned size that is not the seed's */
static const small_run rc_small[] = {
	{ "before", "files_per_writer=6\nwriters=2" },
	{ "after", "files_per_writer=20\nwriters=3" },
	{ "after", "files_per_writer=4\nwriters=3\nfile_bytes=9000" },
};

const lab_exp exp_receive = {
	.name = "receive",
	.seed = "003",
	.title = "btrfs receive of 20,000 small files: a truncate to the same size that waits for its tail page",
	.has_variants = 1,
	.kernel = { [VAR_BEFORE] = "4.16", [VAR_AFTER] = "4.17" },
	.patches = rc_patches,
	.npatches = (int)(sizeof rc_patches / sizeof rc_patches[0]),
	.params = rc_params,
	.nparams = (int)(sizeof(rc_params) / sizeof(rc_params[0])),
	.metrics = rc_metrics,
	.nmetrics = (int)(sizeof(rc_metrics) / sizeof(rc_metrics[0])),
	.published = rc_published,
	.npublished = (int)(sizeof(rc_published) / sizeof(rc_published[0])),
	.small = rc_small,
	.nsmall = (int)(sizeof rc_small / sizeof rc_small[0]),
	.setup = rc_setup,
	.progress = rc_progress,
	.collect = rc_collect,
	.details = rc_details,
	.check = rc_check,
	.teardown = rc_teardown,
	.estimate = rc_estimate,
	.validate = rc_validate,
	.work_unit = "simulated events",
};
