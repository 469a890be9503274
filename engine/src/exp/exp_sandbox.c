/*
 * exp_sandbox.c - the `sandbox` experiment: a student's own script
 * (exp_sandbox.h: xfs_io's data commands, a shell's namespace commands,
 * btrfs subvolume / quota, powercut) run on a fresh file system, and per
 * command what it changed.
 *
 * The file system is torture's with everything on (quota context, the
 * cleaner, the log tree with its synced copy kept for a power cut, commit
 * roots kept), on the chosen device and RAM. One task runs the commands in
 * order, each inside a transaction handle as a syscall would be, except
 * fsync (btrfs_sync_file: the data written back and waited for, then the
 * inode logged and the log synced: treelog_fsync_step; a log that cannot
 * hold it commits) and sync (every dirty file written back, then a commit:
 * sync_filesystem). The data path runs synchronously on that task (bios
 * complete on it, no flusher, no transaction kthread): between two
 * commands nothing happens in the background, so each command's changes
 * are its own. After every commit the whole-file-system checker runs
 * (check_fs); its failures are a metric.
 *
 * Per command it keeps: the simulated time it took, the transaction it ran
 * in, commits, tree blocks COWed per tree, the net change in items per
 * tree, dirty pages after it, data pages written, log items and log
 * commits, the metadata bytes reserved after it. `powercut` (the last
 * command) replays each subvolume as a mount would (treelog_replay) and
 * compares every file with what its last fsync made durable.
 *
 * before / after: the same script on 6.1 and on 6.2 with the switches of
 * the lseek series between them (seed 004); a page compares them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "delalloc.h"
#include "ebmem.h"
#include "exp.h"
#include "exp_sandbox.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "qgroup.h"
#include "space_fs.h"
#include "subvol.h"
#include "trans.h"
#include "treelog.h"
#include "vfs.h"
#include "vfs_io.h"

/* the trees a command's record counts: every subvolume's together */
enum { TR_FS = 0, TR_EXTENT, TR_CSUM, TR_ROOT, TR_LOG, TR_N };
static const char *const tr_names[TR_N] = { "fs", "extent", "csum", "root", "log" };

/* How often the task looks again while the cleaner drops a deleted
 * subvolume before a commit [estimate: a scheduling quantum; it sets only
 * how long the script idles]. */
#define SB_POLL_NS (100 * NS_PER_US)

typedef struct sb_res {
	simtime_t t0, t1;
	uint64_t transid, commits;
	uint64_t cows[TR_N];
	int64_t items[TR_N];         /* net change */
	int64_t blocks[TR_N];        /* net change in tree blocks (leaves + nodes) */
	uint64_t dirty_pages;        /* after */
	uint64_t pages_written;      /* data pages written by the command */
	uint64_t log_items;          /* after */
	uint64_t log_commits;
	uint64_t meta_reserved;      /* after, bytes (bytes_may_use held) */
	int64_t result;              /* pread: bytes; seek: offset or -1 (ENXIO) */
	int rc;                      /* an engine error (the run stops) */
	int done;
} sb_res;

typedef struct sb_counts {
	uint64_t cows[TR_N], items[TR_N], blocks[TR_N], commits, written, log_commits;
} sb_counts;

enum { S_NEXT = 0, S_START, S_FSYNC_DATA, S_FSYNC_LOG, S_SYNC_DATA, S_QUIET, S_COMMIT, S_DONE,
       S_FALLOC_DATA };

typedef struct sbx {
	fs_info *fs;         /* first: tests reach the fs through the run context */
	bdev *dev;
	trans_mgr tm;
	int tm_ready, vio_ready;
	qgroup_ctx q;
	subvol_ctx sc;
	int q_ready, sc_ready, quota_on;
	ebmem *mem;
	treelog *tl;
	sb_script s;
	struct btrfs_root *sv[SB_MAX_SV];
	uint64_t *ino;       /* per entry: its inode number */
	uint32_t *new_ext;   /* per entry: writes since its last fsync */
	uint64_t *dur_size, *dur_trans; /* per entry: its last fsync */
	sb_res *res;
	int at, state, after_commit;
	trans_handle h;
	tl_fsync f;
	int f_busy;
	sb_counts c0;
	uint64_t check_failures;
	int check;
	simtime_t end_ns;    /* when the last command finished */
	int op_kind[SB_NOPS];
	/* the power cut */
	int cut;
	uint64_t cut_kept, cut_lost, cut_gone, cut_files;
	strbuf cutjs;
	char error[200];
} sbx;

/* Every kernel of patches.def, oldest first: the after run's `kernel`. */
static const char *const sb_kernels[] = {
#define KERNEL(name, base, help, ...) name,
#include "patches.def"
	NULL
};
#define SB_KERNEL_DEFAULT 7 /* "6.2": the after run as before the parameter (test_sandbox checks) */
static const char *const sb_bit[] = { "kernel", "0", "1", NULL };
static const char *const sb_flush[] = { "kernel", "flusher", "inodes", "pages", NULL };

/* The switches of every patch that has one (patches.def's param), as the
 * sandbox's own parameters: "kernel" follows the `kernel` preset, else
 * the switch wins. The lseek series' six keep sparse-cp's names (and 0 / 1
 * as values); seed 000's three keep untar's. */
static const struct {
	const char *param;
	patch_id id;
} sb_bits[] = {
	{ "p1_no_hole_uptodate", P_004_NO_HOLE_UPTODATE },
	{ "p2_early_exit", P_004_DELALLOC_EARLY_EXIT },
	{ "p3_skip_searches", P_004_SKIP_DELALLOC_SEARCHES },
	{ "p4_ordered_search", P_004_ORDERED_SEARCH },
	{ "p6_cached_state", P_004_COUNT_RANGE_BITS_CACHED },
	{ "p9_file_cache", P_004_LSEEK_CACHED_STATE },
	{ "data_tickets", P_000_DATA_TICKETS },
};

static const param_desc sb_params[] = {
	{ "device", PT_ENUM, 0, 0, 0, 0, bdev_profile_names, NULL,
	  "the simulated disk (service times fitted to calibration/ for the SSDs)" },
	{ "ram_gib", PT_FLOAT, 8, 0.25, 64, 0, NULL, "GiB",
	  "memory: the page cache limit and the dirty thresholds (dirty_ratio 20%, background 10%)" },
	{ "fs_gib", PT_INT, 1024, 1, 65536, 0, NULL, "GiB",
	  "size of the device the file system is made on (its unallocated space sets the "
	  "metadata overcommit limit)" },
	{ "check", PT_BOOL, 1, 0, 1, 0, NULL, NULL,
	  "run the whole-file-system checker after every commit (check_failures must stay 0)" },
	{ "kernel", PT_ENUM, SB_KERNEL_DEFAULT, 0, 0, 0, sb_kernels, NULL,
	  "after: the kernel (patches.def); the switches below change it one patch at a time. "
	  "before always runs 6.1; a page compares two kernels by running after twice" },
	{ "p1_no_hole_uptodate", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL,
	  "after: lseek 1/9 (6.2), kernel = as the kernel has it" },
	{ "p2_early_exit", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL, "after: lseek 2/9 (6.2)" },
	{ "p3_skip_searches", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL, "after: lseek 3/9 (6.2)" },
	{ "p4_ordered_search", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL, "after: lseek 4/9 (6.2)" },
	{ "p6_cached_state", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL, "after: lseek 6/9 (6.2)" },
	{ "p9_file_cache", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL, "after: lseek 9/9 (6.2)" },
	{ "flush", PT_ENUM, 0, 0, 0, 0, sb_flush, NULL,
	  "after: shrink_delalloc's flush under metadata pressure (seed 000): flusher (5.9), "
	  "inodes (5.10), pages (the fix, 5.10+fix)" },
	{ "data_tickets", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL,
	  "after: data reservations through tickets (1, 5.10) or the writer allocating (0, 5.9)" },
	{ "check_tickets_first", PT_ENUM, 0, 0, 0, 0, sb_bit, NULL,
	  "after: shrink_delalloc checks tickets right after the flush (1, 5.9) or after the wait (0, 5.10)" },
};

/* lab_exp.switches: the kernel, then each switch not left at "kernel". */
static void sb_switches(const lab_exp *e, const double *p, patchset *ps)
{
	patch_kernel(sb_kernels[(int)p[exp_param_index(e, "kernel")]], ps);
	for (size_t i = 0; i < sizeof sb_bits / sizeof sb_bits[0]; i++) {
		int v = (int)p[exp_param_index(e, sb_bits[i].param)];
		if (v > 0)
			patch_set(ps, sb_bits[i].id, v == 2);
	}
	int f = (int)p[exp_param_index(e, "flush")];
	if (f > 0)
		delalloc_flush_patches(f - 1, ps); /* flusher, inodes, pages */
	int ct = (int)p[exp_param_index(e, "check_tickets_first")];
	if (ct > 0)
		patch_set(ps, P_000_TICKET_CHECK_AFTER_WAIT, ct == 1); /* 1: the 5.9 order, the patch off */
}

static const metric_desc sb_metrics[] = {
	{ "commands", "count", "commands run" },
	{ "sim_ms", "ms", "simulated time of the whole script" },
	{ "commits", "count", "transaction commits" },
	{ "cows", "count", "tree blocks COWed (copied from an older transaction), all trees but the log" },
	{ "pages_written", "count", "data pages written to the device" },
	{ "log_commits", "count", "log tree commits (fsyncs that reached the device through the log)" },
	{ "check_failures", "count", "invariant violations the checker found after the commits (must be 0)" },
	{ "powercut_kept", "count", "at the powercut: files found as their last fsync left them" },
	{ "powercut_lost", "count", "at the powercut: files fsynced in the running transaction found otherwise (a bug)" },
};

/* ---- counting ------------------------------------------------------------ */

static void tree_counts(const bt_tree *tr, sb_counts *k, int which)
{
	uint64_t l, n, it;
	if (!tr->root)
		return;
	bt_count_blocks(tr, &l, &n, &it);
	k->cows[which] += tr->cows;
	k->items[which] += it;
	k->blocks[which] += l + n;
}

static void counts(sbx *c, sb_counts *k)
{
	memset(k, 0, sizeof *k);
	fs_info *fs = c->fs;
	for (int i = 0; i < c->s.nsv; i++)
		if (c->sv[i] && !c->sv[i]->dead)
			tree_counts(&c->sv[i]->tree, k, TR_FS);
	tree_counts(&fs->extent_tree, k, TR_EXTENT);
	tree_counts(&fs->csum_tree, k, TR_CSUM);
	tree_counts(&fs->root_tree, k, TR_ROOT);
	/* the log: its items and blocks now, and the blocks its commits
	 * wrote (a log block is COWed once written) */
	for (int i = 0; i < c->tl->nroots; i++) {
		k->items[TR_LOG] += c->tl->roots[i].log_items;
		k->blocks[TR_LOG] += c->tl->roots[i].log_blocks;
		k->cows[TR_LOG] += c->tl->roots[i].blocks_written;
	}
	k->commits = fs->commits;
	k->written = vio_dfs(fs)->data_write_bytes / SECTORSIZE;
	k->log_commits = c->tl->log_commits;
}

/* ---- the commands -------------------------------------------------------- */

static int rec_op_kind(sbx *c, sb_op op)
{
	sim *s = c->fs->sim;
	if (!c->op_kind[op]) {
		char kind[40];
		snprintf(kind, sizeof kind, "op:%s", sb_op_names[op]);
		for (char *p = kind; *p; p++)
			if (*p == ' ')
				*p = '_';
		c->op_kind[op] = sim_trace_kind_args(s, kind, "n");
	}
	return c->op_kind[op];
}

static struct btrfs_root *ent_root(sbx *c, int e)
{
	return c->sv[c->s.ents[e].sv];
}

/* A directory entry as (root, directory inode). */
static void dir_of(sbx *c, int d, struct btrfs_root **root, uint64_t *ino)
{
	*root = ent_root(c, d);
	*ino = c->ino[d];
}

static struct inode *ent_inode(sbx *c, int e)
{
	struct btrfs_root *root = ent_root(c, e);
	return root ? fs_inode_get(root, c->ino[e]) : NULL;
}

static int do_create(sbx *c, task *t, const sb_cmd *cmd, int e, const char *name, int dir)
{
	struct btrfs_root *root;
	uint64_t d;
	dir_of(c, cmd->dir, &root, &d);
	struct inode *in;
	int rc = dir ? vfs_mkdir(c->fs, t, root, d, name, &in)
		     : vfs_create(c->fs, t, root, d, name, 0644, &in);
	if (!rc)
		c->ino[e] = in->ino;
	return rc;
}

/* falloc: btrfs_fallocate's mode 0 over [a, a + b) rounded to sectors:
 * each hole gets a prealloc extent (btrfs_prealloc_file_range:
 * btrfs_reserve_extent, insert_reserved_file_extent of type PREALLOC, its
 * data ref; no checksums), what has an extent already is left alone; then
 * the size (mode 0). A later write into a prealloc range is COWed here
 * (the kernel writes it in place and splits the item: btrfs_mark_extent_
 * written); a read or SEEK_DATA sees a hole, as the kernel's. */
static int do_falloc(sbx *c, task *t, struct inode *in, const sb_cmd *cmd)
{
	fs_info *fs = c->fs;
	uint64_t cur = cmd->a / SECTORSIZE * SECTORSIZE;
	uint64_t end = (cmd->a + cmd->b + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
	while (cur < end) {
		fe_info fe;
		int r = fs_file_extent_lookup(fs, t, in, cur, &fe);
		if (r < 0)
			return r;
		if (r == 0 && fe.type == FE_INLINE)
			return LAB_ENOTSUP; /* an inline extent is a file's only one */
		uint64_t next = end;
		if (r == 0 && fe.file_off <= cur) {
			uint64_t e = fe.file_off + fe.num_bytes;
			cur = e < end ? e : end;
			continue;
		}
		if (r == 0 && fe.file_off < end)
			next = fe.file_off;
		uint64_t len = next - cur, disk = 0;
		r = alloc_extent(&fs->alloc, ALLOC_DATA, len, &disk);
		while (r == LAB_ENOSPC && len > SECTORSIZE) {
			len = len / 2 / SECTORSIZE * SECTORSIZE;
			r = alloc_extent(&fs->alloc, ALLOC_DATA, len, &disk);
		}
		if (r)
			return r;
		r = fs_file_extent_insert(fs, t, in, cur, len, disk, len, FE_PREALLOC);
		if (r)
			return r;
		cur += len;
	}
	if (cmd->a + cmd->b > in->size) {
		int r = vio_truncate(fs, t, in, cmd->a + cmd->b);
		if (r)
			return r > 0 ? LAB_ESTATE : r;
	}
	return fs_inode_update(fs, t, in);
}

/* One command inside the handle c->h (not fsync / sync / powercut). */
static int run_in_handle(sbx *c, task *t, const sb_cmd *cmd, sb_res *res)
{
	fs_info *fs = c->fs;
	struct inode *in;
	int rc = 0;
	switch (cmd->op) {
	case SB_MKDIR:
		return do_create(c, t, cmd, cmd->ent, cmd->name, 1);
	case SB_TOUCH:
		if (cmd->nnew == 0) { /* an existing file: utimensat */
			struct btrfs_root *root = ent_root(c, cmd->ent);
			return vfs_setattr(fs, t, root, c->ino[cmd->ent]);
		}
		for (int k = 0; k < cmd->nnew && !rc; k++) {
			char name[SB_MAX_NAME + 24];
			if (cmd->nnew == 1 && cmd->b == 0)
				snprintf(name, sizeof name, "%s", cmd->name);
			else
				snprintf(name, sizeof name, "%s%d", cmd->name, k);
			rc = do_create(c, t, cmd, cmd->first_new + k, name, 0);
		}
		return rc;
	case SB_RM: {
		struct btrfs_root *root;
		uint64_t d;
		dir_of(c, cmd->dir, &root, &d);
		return c->s.ents[cmd->ent].kind == SB_DIR ? vfs_rmdir(fs, t, root, d, cmd->name)
							   : vfs_unlink(fs, t, root, d, cmd->name);
	}
	case SB_MV: {
		struct btrfs_root *root, *root2;
		uint64_t d, d2;
		dir_of(c, cmd->dir, &root, &d);
		dir_of(c, cmd->dir2, &root2, &d2);
		return vfs_rename(fs, t, root, d, cmd->name, d2, cmd->name2);
	}
	case SB_PWRITE:
		if (!(in = ent_inode(c, cmd->ent)))
			return LAB_EENGINE;
		rc = vio_write(fs, t, in, cmd->a, cmd->b);
		if (rc == 0)
			c->new_ext[cmd->ent]++;
		return rc > 0 ? LAB_ENOSPC : rc; /* parked on space: not at sandbox sizes */
	case SB_PREAD: {
		uint64_t got = 0;
		if (!(in = ent_inode(c, cmd->ent)))
			return LAB_EENGINE;
		rc = vio_read(fs, t, in, cmd->a, cmd->b, &got);
		res->result = (int64_t)got;
		return rc > 0 ? LAB_ESTATE : rc;
	}
	case SB_TRUNCATE:
		if (!(in = ent_inode(c, cmd->ent)))
			return LAB_EENGINE;
		rc = vio_truncate(fs, t, in, cmd->a);
		if (rc > 0)
			return LAB_ESTATE; /* parked on writeback: none runs here */
		if (!rc) {
			in->flags |= INODE_NEEDS_FULL_SYNC; /* btrfs_setsize */
			rc = fs_inode_update(fs, t, in);
			c->new_ext[cmd->ent]++;
		}
		return rc;
	case SB_FALLOC:
		if (!(in = ent_inode(c, cmd->ent)))
			return LAB_EENGINE;
		rc = do_falloc(c, t, in, cmd);
		if (!rc)
			c->new_ext[cmd->ent]++;
		return rc;
	case SB_SEEK: {
		uint64_t off = 0;
		if (!(in = ent_inode(c, cmd->ent)))
			return LAB_EENGINE;
		rc = vio_lseek(fs, t, in, cmd->a, cmd->hole ? LSEEK_HOLE : LSEEK_DATA, &off);
		if (rc == LSEEK_ENXIO) {
			res->result = -1;
			return 0;
		}
		res->result = (int64_t)off;
		return rc > 0 ? LAB_ESTATE : rc;
	}
	case SB_SUBVOL_CREATE: {
		struct btrfs_root *root, *nr;
		uint64_t d;
		dir_of(c, cmd->dir, &root, &d);
		rc = subvol_create(&c->sc, t, root, d, cmd->name, &nr);
		if (!rc) {
			c->sv[c->s.ents[cmd->ent].sv] = nr;
			c->ino[cmd->ent] = BTRFS_FIRST_FREE_OBJECTID;
		}
		return rc;
	}
	case SB_SNAPSHOT: {
		struct btrfs_root *nr;
		rc = subvol_snapshot(&c->sc, t, ent_root(c, cmd->ent), &nr);
		if (!rc) {
			c->sv[c->s.ents[cmd->first_new].sv] = nr;
			for (int k = 0; k < cmd->nnew; k++) {
				int e = cmd->first_new + k;
				c->ino[e] = c->ino[c->s.ents[e].src];
			}
		}
		return rc;
	}
	case SB_SUBVOL_DELETE: {
		const sb_ent *e = &c->s.ents[cmd->ent];
		struct btrfs_root *root = c->sv[e->sv];
		/* its cached inodes go first, their pages with them */
		fs_root_prune_inodes(fs, root);
		rc = subvol_delete(&c->sc, &c->h, root, e->snapshot ? NULL : cmd->name);
		if (!rc)
			c->sv[e->sv] = NULL;
		return rc;
	}
	case SB_QUOTA_ENABLE:
		if (c->quota_on)
			return 0;
		rc = qgroup_enable(&c->q, t);
		if (!rc)
			rc = qgroup_rescan(&c->q, t);
		c->quota_on = !rc;
		return rc;
	default:
		return LAB_EENGINE;
	}
}

/* The record of command i, now that it has finished. */
static void finish_cmd(sbx *c, task *t)
{
	sb_res *res = &c->res[c->at];
	sb_counts k;
	counts(c, &k);
	res->t1 = t->clock;
	for (int i = 0; i < TR_N; i++) {
		res->cows[i] = k.cows[i] - c->c0.cows[i];
		res->items[i] = (int64_t)k.items[i] - (int64_t)c->c0.items[i];
		res->blocks[i] = (int64_t)k.blocks[i] - (int64_t)c->c0.blocks[i];
	}
	res->commits = k.commits - c->c0.commits;
	res->pages_written = k.written - c->c0.written;
	res->log_commits = k.log_commits - c->c0.log_commits;
	res->dirty_pages = vio_dfs(c->fs)->pcg.dirty;
	res->log_items = k.items[TR_LOG];
	res->meta_reserved = fs_space_held(c->fs, SPACE_META);
	res->done = 1;
	c->at++;
	c->state = S_NEXT;
	c->end_ns = t->clock;
	/* the script's end: the simulation stops here, the task's next step
	 * still queued, so that lab_append's commands run on as if they had
	 * been in the script (nothing else runs in between) */
	if (c->at >= c->s.ncmds)
		sim_stop(c->fs->sim);
}

static void note_error(sbx *c, const char *what, int rc)
{
	if (!c->error[0])
		snprintf(c->error, sizeof c->error, "line %d: %s: %s", c->s.cmds[c->at].line, what,
			 lab_strerror(rc));
	c->res[c->at].rc = rc;
}

/* The fsync finished: what it made durable. */
static void fsync_durable(sbx *c, int e)
{
	struct inode *in = ent_inode(c, e);
	c->dur_trans[e] = c->fs->transid;
	c->dur_size[e] = in ? in->size : 0;
	c->new_ext[e] = 0;
}

/* A power cut now: each live subvolume as a mount finds it (its last
 * commit, its last synced log replayed: treelog_replay), every file of the
 * script against its last fsync. */
static void power_cut(sbx *c)
{
	fs_info *fs = c->fs;
	strbuf *o = &c->cutjs;
	c->cut = 1;
	js_obj(o);
	js_knum(o, "transid", (double)fs->transid);
	js_key(o, "files");
	js_arr(o);
	for (int sv = 0; sv < c->s.nsv; sv++) {
		struct btrfs_root *root = c->sv[sv];
		if (!root || root->dead)
			continue;
		tl_image im;
		int rc = treelog_replay(c->tl, root, &im);
		if (rc) {
			note_error(c, "powercut: replay", rc);
			break;
		}
		for (int e = 0; e < c->s.nents; e++) {
			const sb_ent *en = &c->s.ents[e];
			if (!en->live || en->sv != sv || en->kind != SB_FILE || en->snapshot)
				continue;
			struct inode *in = ent_inode(c, e);
			const tl_img_inode *ii = tl_image_inode(&im, c->ino[e]);
			int found = ii && ii->nlink > 0;
			int fsynced = c->dur_trans[e] == fs->transid;
			const char *verdict;
			if (fsynced) {
				int same = found && ii->size == c->dur_size[e];
				verdict = same ? "as fsynced" : "LOST (fsynced, not found so)";
				if (same)
					c->cut_kept++;
				else
					c->cut_lost++;
			} else if (!found) {
				verdict = "gone (not fsynced since the last commit)";
				c->cut_gone++;
			} else {
				verdict = ii->logged ? "from the log" : "as of the last commit";
			}
			c->cut_files++;
			js_obj(o);
			js_kstr(o, "path", en->path);
			js_knum(o, "ino", (double)c->ino[e]);
			js_knum(o, "size_now", in ? (double)in->size : 0);
			js_kint(o, "fsynced", fsynced);
			if (fsynced)
				js_knum(o, "fsync_size", (double)c->dur_size[e]);
			js_kint(o, "found", found);
			if (found)
				js_knum(o, "found_size", (double)ii->size);
			js_kstr(o, "verdict", verdict);
			js_obj_end(o);
		}
		tl_image_free(&im);
	}
	js_arr_end(o);
	js_obj_end(o);
}

/* Whether a commit may start: the cleaner has dropped every queued root
 * (the checker walks whole trees; a half-dropped one has freed blocks
 * still linked), as `btrfs subvolume sync` would wait. */
static int quiet(const sbx *c)
{
	return !(c->sc.cur || c->sc.next < c->sc.ndead);
}

static int sb_step(sim *s, task *t)
{
	sbx *c = t->ctx;
	int rc;
	for (;;) {
		if (c->at >= c->s.ncmds) {
			/* an empty script: wait for lab_append (this look at the
			 * script is one event more than a run given the commands
			 * at once would count) */
			sim_stop(s);
			return TASK_RUN;
		}
		if (c->res[c->at].rc)
			return TASK_DONE;
		const sb_cmd *cmd = &c->s.cmds[c->at];
		sb_res *res = &c->res[c->at];
		switch (c->state) {
		case S_NEXT: {
			counts(c, &c->c0);
			res->t0 = t->clock;
			res->transid = c->fs->transid;
			if (sim_recording_ops(s)) {
				const int64_t a[] = { c->at };
				sim_rec(s, rec_op_kind(c, cmd->op), t, 1, a);
			}
			switch (cmd->op) {
			case SB_FSYNC:
			case SB_FDATASYNC: {
				struct inode *in = ent_inode(c, cmd->ent);
				if (!in) {
					note_error(c, "fsync", LAB_EENGINE);
					return TASK_DONE;
				}
				rc = treelog_fsync_init_parent(&c->f, ent_root(c, cmd->ent), in,
							       c->new_ext[cmd->ent], NULL);
				if (rc) {
					note_error(c, "fsync", rc);
					return TASK_DONE;
				}
				c->f_busy = 1;
				c->state = S_FSYNC_DATA;
				break;
			}
			case SB_SYNC:
				c->state = S_SYNC_DATA;
				break;
			case SB_FALLOC:
				c->state = S_FALLOC_DATA;
				break;
			case SB_POWERCUT:
				power_cut(c);
				finish_cmd(c, t);
				return TASK_RUN;
			default:
				c->state = S_START;
			}
			break;
		}
		case S_START:
			rc = trans_start(&c->tm, t, &c->h);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			if (rc) {
				note_error(c, "transaction", rc);
				return TASK_DONE;
			}
			if (c->after_commit) {
				c->state = S_COMMIT;
				break;
			}
			rc = run_in_handle(c, t, cmd, res);
			{
				int rc2 = trans_end(&c->h, 0);
				if (!rc)
					rc = rc2;
			}
			if (rc) {
				note_error(c, sb_op_names[cmd->op], rc);
				return TASK_DONE;
			}
			subvol_wake_cleaner(&c->sc, t->clock);
			/* quota enable commits, as btrfs_quota_enable does */
			if (cmd->op == SB_QUOTA_ENABLE) {
				c->state = S_QUIET;
				break;
			}
			finish_cmd(c, t);
			return TASK_RUN;
		case S_FSYNC_DATA: {
			struct inode *in = c->f.inode;
			rc = (in->mode & S_IFMT_) == S_IFREG_ ? vio_fsync(c->fs, t, in) : 0;
			if (rc == 1)
				return TASK_BLOCKED;
			if (rc) {
				note_error(c, "fsync data", rc);
				return TASK_DONE;
			}
			c->state = S_FSYNC_LOG;
			return TASK_RUN;
		}
		case S_FSYNC_LOG:
			rc = treelog_fsync_step(c->tl, t, &c->f);
			if (rc == TASK_RUN || rc == TASK_BLOCKED)
				return rc;
			c->f_busy = 0;
			if (rc < 0 || c->f.error) {
				note_error(c, "fsync log", rc < 0 ? rc : c->f.error);
				return TASK_DONE;
			}
			if (c->f.need_commit) {
				/* the log could not hold it: btrfs_sync_file commits */
				c->state = S_QUIET;
				break;
			}
			fsync_durable(c, cmd->ent);
			finish_cmd(c, t);
			return TASK_RUN;
		case S_FALLOC_DATA: {
			/* btrfs_fallocate waits for the range's ordered extents
			 * (btrfs_wait_ordered_range): here the whole file is
			 * written back and waited for, the engine's one wait */
			struct inode *in = ent_inode(c, cmd->ent);
			rc = in ? vio_fsync(c->fs, t, in) : LAB_EENGINE;
			if (rc == 1)
				return TASK_BLOCKED;
			if (rc) {
				note_error(c, "falloc data", rc);
				return TASK_DONE;
			}
			c->state = S_START;
			break;
		}
		case S_SYNC_DATA:
			rc = vio_sync(c->fs, t);
			if (rc == 1)
				return TASK_BLOCKED;
			if (rc) {
				note_error(c, "sync", rc);
				return TASK_DONE;
			}
			c->state = S_QUIET;
			break;
		case S_QUIET:
			if (!quiet(c)) {
				task_wait_until(t, t->clock + SB_POLL_NS);
				return TASK_RUN;
			}
			c->after_commit = 1;
			c->state = S_START;
			break;
		case S_COMMIT:
			rc = trans_commit(&c->h, TCOMMIT_EXPLICIT);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			c->after_commit = 0;
			if (rc) {
				note_error(c, "commit", rc);
				return TASK_DONE;
			}
			if (c->s.cmds[c->at].op == SB_FSYNC || c->s.cmds[c->at].op == SB_FDATASYNC)
				fsync_durable(c, cmd->ent);
			if (c->check)
				c->check_failures += (uint64_t)check_fs(c->fs);
			finish_cmd(c, t);
			return TASK_RUN;
		default:
			note_error(c, "state", LAB_EENGINE);
			return TASK_DONE;
		}
	}
}

/* ---- the experiment -------------------------------------------------------- */

/* Mount, transactions, the data path, quota context, the cleaner and the
 * log, as torture's mix=all sets them up (quota is enabled by the script). */
static int sb_setup(struct lab_run *r)
{
	sbx *c = lab_calloc(1, sizeof(*c));
	if (!c)
		return LAB_ENOMEM;
	r->ctx = c;
	sb_init(&c->cutjs);
	char err[200];
	int rc = sbs_parse(r->script ? r->script : "", &c->s, err, sizeof err);
	if (rc)
		return exp_fail(r, rc, "%s", err);
	int n = c->s.nents ? c->s.nents : 1;
	c->ino = lab_calloc((size_t)n, sizeof *c->ino);
	c->new_ext = lab_calloc((size_t)n, sizeof *c->new_ext);
	c->dur_size = lab_calloc((size_t)n, sizeof *c->dur_size);
	c->dur_trans = lab_calloc((size_t)n, sizeof *c->dur_trans);
	c->res = lab_calloc((size_t)(c->s.ncmds ? c->s.ncmds : 1), sizeof *c->res);
	if (!c->ino || !c->new_ext || !c->dur_size || !c->dur_trans || !c->res)
		return exp_fail(r, LAB_ENOMEM, "out of memory");
	c->ino[0] = BTRFS_FIRST_FREE_OBJECTID;
	c->check = exp_param(r, "check") != 0;
	const char *prof = exp_param_enum_name(r, "device");
	rc = bdev_create(r->sim, prof, &c->dev);
	if (rc)
		return exp_fail(r, rc, "no device profile '%s'", prof);
	fs_opts o;
	fs_opts_default(&o);
	o.patches = r->patches;
	o.dev_bytes = (uint64_t)exp_param(r, "fs_gib") << 30;
	o.keep_commit_roots = 1; /* the power cut reads what the last commit wrote */
	rc = fs_mount(r->sim, c->dev, &o, &c->fs);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	rc = trans_init(&c->tm, c->fs);
	if (rc)
		return exp_fail(r, rc, "transaction manager");
	c->tm_ready = 1;
	data_opts d;
	vio_opts_default(&d);
	vio_opts_ram(&d, (uint64_t)(exp_param(r, "ram_gib") * (double)(1ull << 30)));
	rc = vio_attach(c->fs, &d, &c->tm);
	if (rc)
		return exp_fail(r, rc, "data path");
	c->vio_ready = 1;
	rc = qgroup_init(&c->q, c->fs, &c->tm);
	if (rc)
		return exp_fail(r, rc, "qgroup init");
	c->q_ready = 1;
	rc = subvol_init(&c->sc, c->fs, &c->tm, &c->q);
	if (rc)
		return exp_fail(r, rc, "subvol init");
	c->sc_ready = 1;
	rc = ebmem_create(r->sim, NULL, &c->mem);
	if (rc)
		return exp_fail(r, rc, "eb allocator");
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	tc.max_records = 64;
	tc.keep_synced = 1; /* the power cut replays it */
	rc = treelog_create(r->sim, c->dev, c->mem, &tc, &c->tl);
	if (!rc)
		rc = treelog_attach(c->tl, c->fs);
	if (rc)
		return exp_fail(r, rc, "log tree");
	treelog_set_trans(c->tl, &c->tm);
	if (c->check) {
		rc = check_more_handles(c->fs, &c->tm);
		if (!rc)
			rc = check_more_space(c->fs);
		if (!rc)
			rc = check_more_qgroups(c->fs, &c->q);
		if (!rc)
			rc = check_more_treelog(c->fs, c->tl);
		if (rc)
			return exp_fail(r, rc, "check registration");
	}
	c->sv[0] = fs_root_lookup(c->fs, BTRFS_FS_TREE_OBJECTID);
	/* mkfs: the empty file system committed once */
	rc = trans_commit_now(&c->tm, NULL, TCOMMIT_EXPLICIT);
	if (!rc)
		rc = subvol_cleaner_start(&c->sc, 0);
	if (rc)
		return exp_fail(r, rc, "mkfs commit");
	if (!task_spawn(r->sim, "sandbox", sb_step, c, 0))
		return LAB_ENOMEM;
	return 0;
}

/* lab_append: `text` is the whole script, the one run so far and the new
 * commands. It is checked as a whole (the namespace model of the new
 * commands starts where the old ones left it); then the per-entry and
 * per-command arrays grow, and the task, stopped after the last command,
 * runs on into the new ones. Refused: nothing changes. */
static int sb_append(struct lab_run *r, const char *text, char *err, size_t errlen)
{
	sbx *c = r->ctx;
	if (c->error[0] || c->at < c->s.ncmds)
		return snprintf(err, errlen, "the run did not finish its script"), LAB_ESTATE;
	sb_script ns;
	int rc = sbs_parse(text, &ns, err, errlen);
	if (rc) {
		sbs_free(&ns);
		return rc;
	}
	if (ns.ncmds <= c->s.ncmds || ns.nents < c->s.nents) {
		sbs_free(&ns);
		return snprintf(err, errlen, "no command to add"), LAB_EINVAL;
	}
	size_t n = (size_t)ns.nents, o = (size_t)c->s.nents;
	uint64_t *ino = lab_calloc(n, sizeof *ino);
	uint32_t *new_ext = lab_calloc(n, sizeof *new_ext);
	uint64_t *dur_size = lab_calloc(n, sizeof *dur_size);
	uint64_t *dur_trans = lab_calloc(n, sizeof *dur_trans);
	sb_res *res = lab_calloc((size_t)ns.ncmds, sizeof *res);
	if (!ino || !new_ext || !dur_size || !dur_trans || !res) {
		free(ino), free(new_ext), free(dur_size), free(dur_trans), free(res);
		sbs_free(&ns);
		return snprintf(err, errlen, "out of memory"), LAB_ENOMEM;
	}
	memcpy(ino, c->ino, o * sizeof *ino);
	memcpy(new_ext, c->new_ext, o * sizeof *new_ext);
	memcpy(dur_size, c->dur_size, o * sizeof *dur_size);
	memcpy(dur_trans, c->dur_trans, o * sizeof *dur_trans);
	memcpy(res, c->res, (size_t)c->s.ncmds * sizeof *res);
	free(c->ino), free(c->new_ext), free(c->dur_size), free(c->dur_trans), free(c->res);
	c->ino = ino, c->new_ext = new_ext, c->dur_size = dur_size, c->dur_trans = dur_trans;
	c->res = res;
	sbs_free(&c->s);
	c->s = ns;
	return 0;
}

static double sb_progress(struct lab_run *r)
{
	sbx *c = r->ctx;
	return c->s.ncmds ? (double)c->at / c->s.ncmds : 1.0;
}

static int sb_collect(struct lab_run *r)
{
	sbx *c = r->ctx;
	if (c->error[0])
		return exp_fail(r, c->res[c->at < c->s.ncmds ? c->at : 0].rc ? c->res[c->at].rc
									      : LAB_EENGINE, "%s", c->error);
	uint64_t cows = 0, written = 0, commits = 0, logc = 0;
	for (int i = 0; i < c->at; i++) {
		for (int k = 0; k < TR_N; k++)
			if (k != TR_LOG)
				cows += c->res[i].cows[k];
		written += c->res[i].pages_written;
		commits += c->res[i].commits;
		logc += c->res[i].log_commits;
	}
	exp_metric(r, "commands", c->at);
	exp_metric(r, "sim_ms", (double)c->end_ns / 1e6);
	exp_metric(r, "commits", (double)commits);
	exp_metric(r, "cows", (double)cows);
	exp_metric(r, "pages_written", (double)written);
	exp_metric(r, "log_commits", (double)logc);
	exp_metric(r, "check_failures", (double)c->check_failures);
	exp_metric(r, "powercut_kept", (double)c->cut_kept);
	exp_metric(r, "powercut_lost", (double)c->cut_lost);
	return 0;
}

/* Per command what it changed; the power cut's files; the trees now. */
static void sb_details(struct lab_run *r, strbuf *out)
{
	sbx *c = r->ctx;
	js_obj(out);
	js_key(out, "commands");
	js_arr(out);
	for (int i = 0; i < c->s.ncmds; i++) {
		const sb_cmd *cmd = &c->s.cmds[i];
		const sb_res *res = &c->res[i];
		js_obj(out);
		js_kint(out, "line", cmd->line);
		js_kstr(out, "text", cmd->text);
		js_kstr(out, "op", sb_op_names[cmd->op]);
		js_kint(out, "ran", res->done);
		if (res->done) {
			js_knum(out, "t_ns", (double)res->t0);
			js_knum(out, "ns", (double)(res->t1 - res->t0));
			js_knum(out, "transid", (double)res->transid);
			js_knum(out, "commits", (double)res->commits);
			js_key(out, "cows");
			js_obj(out);
			for (int k = 0; k < TR_N; k++)
				js_knum(out, tr_names[k], (double)res->cows[k]);
			js_obj_end(out);
			js_key(out, "items");
			js_obj(out);
			for (int k = 0; k < TR_N; k++)
				js_knum(out, tr_names[k], (double)res->items[k]);
			js_obj_end(out);
			js_key(out, "blocks");
			js_obj(out);
			for (int k = 0; k < TR_N; k++)
				js_knum(out, tr_names[k], (double)res->blocks[k]);
			js_obj_end(out);
			js_knum(out, "dirty_pages", (double)res->dirty_pages);
			js_knum(out, "pages_written", (double)res->pages_written);
			js_knum(out, "log_items", (double)res->log_items);
			js_knum(out, "log_commits", (double)res->log_commits);
			js_knum(out, "meta_reserved", (double)res->meta_reserved);
			if (cmd->op == SB_PREAD || cmd->op == SB_SEEK)
				js_knum(out, "result", (double)res->result);
		}
		js_obj_end(out);
	}
	js_arr_end(out);
	if (c->cut) {
		js_key(out, "powercut");
		js_raw(out, c->cutjs.buf ? c->cutjs.buf : "null");
	}
	js_key(out, "subvolumes");
	js_arr(out);
	for (int e = 0; e < c->s.nents; e++) {
		const sb_ent *en = &c->s.ents[e];
		if (en->kind != SB_SUBVOL || !en->live || !c->sv[en->sv])
			continue;
		js_obj(out);
		js_kstr(out, "path", en->path);
		js_knum(out, "root", (double)c->sv[en->sv]->id);
		js_kint(out, "snapshot", en->snapshot);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_kint(out, "names", c->s.nfiles);
	js_kint(out, "quota", c->quota_on);
	js_obj_end(out);
}

/* "tree:fs", "tree:<root id>", "tree:extent", "tree:csum", "tree:root". */
static int sb_snapshot(struct lab_run *r, const char *what, strbuf *out)
{
	sbx *c = r->ctx;
	return fs_tree_snapshot(c->fs, &c->sv[0]->tree, what, out);
}

static int sb_check(struct lab_run *r)
{
	sbx *c = r->ctx;
	return check_fs_midrun(c->fs);
}

static void sb_teardown(struct lab_run *r)
{
	sbx *c = r->ctx;
	if (!c)
		return;
	if (c->sc_ready)
		subvol_destroy(&c->sc);
	if (c->q_ready)
		qgroup_destroy(&c->q);
	if (c->tl) {
		if (c->f_busy)
			treelog_fsync_abandon(c->tl, &c->f);
		treelog_destroy(c->tl);
	}
	if (c->mem)
		ebmem_destroy(c->mem);
	if (c->vio_ready)
		vio_detach(c->fs);
	if (c->tm_ready)
		trans_destroy(&c->tm);
	if (c->fs)
		fs_unmount(c->fs);
	if (c->dev)
		bdev_destroy(c->dev);
	sbs_free(&c->s);
	sb_free(&c->cutjs);
	free(c->ino);
	free(c->new_ext);
	free(c->dur_size);
	free(c->dur_trans);
	free(c->res);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events: the mkfs and each command (each
 * classroom-sized by the bounds), ~2 events each (its task step and its
 * IO or commit). */
static double sb_estimate(const struct lab_run *r)
{
	return 2 + 2 * (r->script ? sbs_count(r->script) : 0);
}

/* The after run seeks and reads around holes, dirty ranges and extents so
 * that each lseek patch that changes the model changes it (test_patches);
 * the before run covers subvolumes, snapshots, quota and many files. */
static const small_run sb_small[] = {
	{ "after", "script=touch /f; pwrite /f 0 4k; pwrite 64k 4k; pwrite 1m 64k; fsync; pwrite 4k 60k; "
		   "pwrite 2m 4k; pwrite 512k 8k; seek -d 4k; seek -h 0; seek -d 70k; seek -h 64k; "
		   "seek -d 200k; seek -d 1100k; seek -h 520k; pread 0 256k; pread 1m 128k; seek -d 600k; "
		   "mkdir /d; mv /f /d/g; truncate 8k; touch /x; rm /x; sync; powercut" },
	{ "before", "script=btrfs quota enable; btrfs subvolume create /sv; touch /sv/a; pwrite /sv/a 0 16k; "
		    "btrfs subvolume snapshot /sv /snap; sync; btrfs subvolume delete /snap; sync; "
		    "touch -n 40 /f; fsync /; fdatasync /f3; powercut" },
};

/* the patches the two kernels differ by (6.1 -> 6.2: the lseek series,
 * seed 004), as switches of the after run; the older ones (000, 003) are
 * in both, 001 (6.9) in neither */
static const patch_id sb_patches[] = {
	P_004_NO_HOLE_UPTODATE, P_004_DELALLOC_EARLY_EXIT, P_004_SKIP_DELALLOC_SEARCHES,
	P_004_ORDERED_SEARCH, P_004_RM_NEXT_EXTENT_MAP, P_004_COUNT_RANGE_BITS_CACHED,
	P_004_COUNT_RANGE_BITS_COMMENT, P_004_FIEMAP_CACHED_STATE, P_004_LSEEK_CACHED_STATE,
};

const lab_exp exp_sandbox = {
	.name = "sandbox",
	.seed = "-",
	.title = "your own commands on a fresh file system: what each one changes, on two kernels",
	.has_variants = 1,
	.kernel = { NULL, "6.1", "6.2" },
	.patches = sb_patches,
	.npatches = (int)(sizeof sb_patches / sizeof sb_patches[0]),
	.switches = sb_switches,
	.takes_script = 1,
	.append = sb_append,
	.params = sb_params,
	.nparams = (int)(sizeof sb_params / sizeof sb_params[0]),
	.metrics = sb_metrics,
	.nmetrics = (int)(sizeof sb_metrics / sizeof sb_metrics[0]),
	.small = sb_small,
	.nsmall = (int)(sizeof sb_small / sizeof sb_small[0]),
	.setup = sb_setup,
	.progress = sb_progress,
	.collect = sb_collect,
	.details = sb_details,
	.snapshot = sb_snapshot,
	.check = sb_check,
	.teardown = sb_teardown,
	.estimate = sb_estimate,
	.work_unit = "simulated events",
};
