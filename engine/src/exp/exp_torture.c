/*
 * exp_torture.c - the `torture` experiment: a seeded random mix of file
 * system operations, with the invariant checker after every commit
 * (check_failures must stay 0 for any seed).
 *
 * One simulated task performs one operation per step, each inside a
 * transaction handle (trans.c); commits go through trans_commit (delayed
 * refs, qgroup accounting, the tree commit), so the checker also watches
 * the transaction and delayed-ref code. File data goes through the data
 * path on struct inode (vfs_io.h, on an "ideal" device): buffered writes
 * at any offset and length (a small first write may become inline at
 * writeback), reads, truncate up and down, lseek SEEK_DATA/SEEK_HOLE;
 * writeback and ordered-extent completion insert the file extent items.
 *
 * mix=files: create/mkdir/rename/unlink/stat/write/read/truncate/lseek,
 * fsync as a flush of the file and a commit, sync (flush all, commit).
 *
 * mix=all, on top of that:
 *   - quota is enabled at mount (qgroup.h) and accounted at every commit;
 *   - fsync storms: one to four fsync tasks start at once on recently
 *     written files (and directories); each writes its file back
 *     (vio_fsync) and then goes through the log tree (treelog.h): full
 *     syncs for new or truncated inodes, fast ones otherwise, sometimes
 *     logging the parent directory too, each ending in a log sync; the
 *     main task keeps working meanwhile. An inode being fsynced is not
 *     written, truncated, renamed or unlinked (btrfs_sync_file holds its
 *     i_rwsem). When the log keeps no more per-root state, the fsync falls
 *     back to a commit, as btrfs_sync_file does when logging fails;
 *   - subvolume create and delete (its cached inodes evicted first),
 *     snapshots of the subvolumes and their deletion: deleted trees are
 *     dropped by the cleaner kthread (subvol.h) while quota is on;
 *   - send/receive: a snapshot is sent (send.h) and received into a fresh
 *     second file system on its own device, its data written through that
 *     fs's data path (the truncates with or without patch 003, at random),
 *     which is then checked and compared with the snapshot (names, sizes,
 *     data ranges, everything written back);
 *   - remount: wait for every fsync, flush, commit, vio_remount (cold
 *     caches); the inodes come back without logged state (the next fsync
 *     of each is a full one).
 * A commit first waits for the cleaner to finish the roots queued so far
 * (as `btrfs subvolume sync` would): the checker walks whole trees and a
 * half-dropped one has freed blocks still linked.
 *
 * After every commit, at most every full_check_every commits and after
 * the last: check_fs (trees, extents, block groups, checksums, inodes)
 * with the registered checks: the data path's (vfs_io.c), qgroups against
 * the reachability index (qgroup.c) and against a recount from the trees,
 * the log idle, transaction handles balanced, space counters equal to
 * their block groups' (check_more.c). After every other commit:
 * check_fs_incr, the same invariants over what the commit's transaction
 * changed (the blocks it COWed, the extents whose references moved, the
 * inodes it touched, the counters; check_incr.c). The whole check waits
 * until the incremental ones since the last have checked TS_FULL_SPACING
 * times the blocks and inodes it checked (check_commit): its cost per
 * operation stays bounded as the file system grows, and a run linear in
 * its operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backref.h"
#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "ebmem.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "qgroup.h"
#include "send.h"
#include "subvol.h"
#include "trans.h"
#include "treelog.h"
#include "vfs.h"
#include "vfs_io.h"

#include "exp_torture_int.h"
#include "labmem.h"

static const char *const mix_values[] = { "files", "all", NULL };

static const param_desc torture_params[] = {
	/* the whole invariant check at a fixed cadence made a run's time grow
	 * as ops^2 (the fs grows, and so do the commits); with the
	 * incremental check in between and the whole one spaced by the
	 * checking done (check_commit), time grows linearly (npm run bench) */
	{ "ops", PT_INT, 20000, 1, 1000000, 0, NULL, "ops", "operations to run" },
	{ "subvols", PT_INT, 4, 1, 64, 0, NULL, "subvolumes",
	  "subvolumes the operations spread over at the start (the top-level one included)" },
	{ "mix", PT_ENUM, 0, 0, 0, 0, mix_values, NULL,
	  "files: create/mkdir/rename/unlink/stat/write/read/truncate/lseek/fsync/sync "
	  "(fsync = flush the file and commit); all: plus quota on, fsync storms through the log "
	  "tree, subvolume create/delete and snapshots dropped by the cleaner, "
	  "send/receive compared with the snapshot, remount" },
	{ "full_check_every", PT_INT, 100, 1, 1000000, 0, NULL, "commits",
	  "the whole-file-system check runs at most every this many commits, once the incremental "
	  "checks since the last one have checked 4 times the tree blocks and inodes it checked (so "
	  "its share of the run stays bounded as the file system grows), and after the last commit; "
	  "every other commit gets the incremental check of what it changed" },
};

static const metric_desc torture_metrics[] = {
	{ "ops", "count", "operations performed" },
	{ "commits", "count", "transaction commits (each followed by a check: incremental, or the whole one at most every full_check_every)" },
	{ "fsyncs", "count", "fsync calls" },
	{ "check_failures", "count", "invariant violations found (must be 0)" },
	{ "max_tree_height", "levels", "tallest tree seen at any commit" },
	{ "full_checks", "count", "commits followed by the whole-file-system check (the others by the incremental one)" },
};



/* A draw in [0, n) for the op mix: from the run's PRNG, or from a script
 * of bytes when one is set (engine/fuzz/fuzz_torture.c decodes the
 * fuzzer's input into operations this way: one or two bytes choose an
 * operation, more bytes its arguments). A spent script ends the run after
 * the current operation (the final commit and check follow). */
uint64_t tort_below(tort *c, uint64_t n)
{
	if (!c->script)
		return prng_below(&c->rng, n);
	uint64_t v = 0;
	int bytes = n <= 256 ? 1 : n <= 65536 ? 2 : 4;
	for (int i = 0; i < bytes; i++) {
		if (c->script_at >= c->script_len) {
			c->target = c->ops;
			break;
		}
		v = v << 8 | c->script[c->script_at++];
	}
	return n ? v % n : 0;
}

/* The name of entry number n ("n<n>"; buf holds 16 bytes). */
static void tname(char *buf, uint32_t n)
{
	snprintf(buf, 16, "n%u", n);
}

/* An operation failed where it should not: a failure, the first one kept. */
void tort_note_error(tort *c, const char *what, int rc)
{
	c->errors++;
	c->failures++;
	if (!c->first_error[0])
		snprintf(c->first_error, sizeof c->first_error, "%s: %s", what, lab_strerror(rc));
}

/* Count f checker failures of fs, keeping the first message. */
void tort_note_check(tort *c, fs_info *fs, int f)
{
	if (f <= 0)
		return;
	c->failures += (uint64_t)f;
	if (!c->first_error[0])
		snprintf(c->first_error, sizeof c->first_error, "check: %s", check_last_error(fs));
}

/* The key of inode ino of subvolume slot sv in the entry index. */
static uint64_t ent_key(int sv, uint64_t ino)
{
	return (uint64_t)(sv + 1) << 48 | ino;
}

/* Remember a live name; 0 or LAB_ENOMEM. */
static int ents_add(tort *c, const tent *e)
{
	if (c->nents == c->cap) {
		int cap = c->cap ? c->cap * 2 : 256;
		tent *n = lab_realloc(c->ents, (size_t)cap * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		c->ents = n;
		c->cap = cap;
	}
	if (u64map_put(&c->ent_idx, ent_key(e->sv, e->ino), (uint32_t)c->nents + 1))
		return LAB_ENOMEM;
	c->ents[c->nents++] = *e;
	return 0;
}

/* Forget live name i (the last one takes its place). */
void tort_ents_del(tort *c, int i)
{
	u64map_del(&c->ent_idx, ent_key(c->ents[i].sv, c->ents[i].ino));
	c->ents[i] = c->ents[--c->nents];
	if (i < c->nents && u64map_put(&c->ent_idx, ent_key(c->ents[i].sv, c->ents[i].ino),
				       (uint32_t)i + 1))
		tort_note_error(c, "entry index", LAB_ENOMEM);
}

int tort_find(const tort *c, int sv, uint64_t ino)
{
	uint32_t v;
	return u64map_get(&c->ent_idx, ent_key(sv, ino), &v) ? (int)v - 1 : -1;
}

/* Whether an fsync task holds inode ino of subvolume slot sv. */
int tort_pinned(const tort *c, int sv, uint64_t ino)
{
	for (int i = 0; i < TS_MAX_FSYNC; i++) {
		const tfsync *w = &c->fsw[i];
		if (w->busy && w->sv == sv && (w->ino == ino || w->pino == ino))
			return 1;
	}
	return 0;
}

/* fsync tasks in flight. */
int tort_fsyncs_busy(const tort *c)
{
	int n = 0;
	for (int i = 0; i < TS_MAX_FSYNC; i++)
		n += c->fsw[i].busy;
	return n;
}

/* A random live subvolume slot. */
int tort_pick_sv(tort *c)
{
	int i = (int)tort_below(c, (uint64_t)c->nsv);
	while (!c->sv[i])
		i = (i + 1) % c->nsv;
	return i;
}

/* A random entry of the wanted kind (-1: any), or -1. */
int tort_pick(tort *c, int want_dir)
{
	if (!c->nents)
		return -1;
	for (int tries = 0; tries < 8; tries++) {
		int i = (int)tort_below(c, (uint64_t)c->nents);
		if (want_dir < 0 || c->ents[i].is_dir == want_dir)
			return i;
	}
	return -1;
}

/* A random directory of subvolume sv (its root dir or a mkdir'ed one). */
static uint64_t pick_dir(tort *c, int sv)
{
	for (int tries = 0; tries < 4; tries++) {
		int i = tort_pick(c, 1);
		if (i >= 0 && c->ents[i].sv == sv)
			return c->ents[i].ino;
	}
	return BTRFS_FIRST_FREE_OBJECTID;
}

/* create(2) or mkdir(2) of a new name in a random directory (vfs.h). */
static void op_create(tort *c, task *t, int is_dir)
{
	int sv = tort_pick_sv(c);
	uint64_t dir = pick_dir(c, sv);
	char name[16];
	uint32_t n = c->next_name++;
	tname(name, n);
	struct inode *in;
	int rc = is_dir ? vfs_mkdir(c->fs, t, c->sv[sv], dir, name, &in)
			: vfs_create(c->fs, t, c->sv[sv], dir, name, 0644, &in);
	if (rc) {
		tort_note_error(c, is_dir ? "mkdir" : "create", rc);
		return;
	}
	tent e = { sv, dir, in->ino, n, is_dir, 0 };
	if (ents_add(c, &e))
		tort_note_error(c, "ents", LAB_ENOMEM);
}

/* Remember a written inode for the next fsync storm (a ring). */
static void recent_add(tort *c, const tent *e)
{
	c->recent[c->nrecent % TS_RECENT][0] = c->sv[e->sv]->id;
	c->recent[c->nrecent % TS_RECENT][1] = e->ino;
	c->nrecent++;
}

/* A length or offset: whole 4 KiB blocks mostly, any byte sometimes. */
static uint64_t rnd_bytes(tort *c, uint64_t blocks)
{
	uint64_t v = tort_below(c, blocks) * SECTORSIZE;
	if (tort_below(c, 4) == 0)
		v += tort_below(c, SECTORSIZE);
	return v;
}

/* Pick a live file for an op and look up its inode: NULL when there is
 * none, when an fsync pins it (with skip_pinned), or when the lookup fails
 * (noted as `what`). */
static struct inode *pick_file(tort *c, int skip_pinned, const char *what, tent **ep)
{
	int i = tort_pick(c, 0);
	if (i < 0)
		return NULL;
	tent *e = &c->ents[i];
	if (skip_pinned && tort_pinned(c, e->sv, e->ino))
		return NULL;
	struct inode *in = fs_inode_get(c->sv[e->sv], e->ino);
	if (!in) {
		tort_note_error(c, what, LAB_EENGINE);
		return NULL;
	}
	*ep = e;
	return in;
}

/* A buffered write through the data path (vfs_io.h); a small write at
 * offset 0 of an empty file may end up inline at writeback. */
static void op_write(tort *c, task *t)
{
	tent *e;
	struct inode *in = pick_file(c, 1, "write: inode", &e);
	if (!in)
		return;
	uint64_t off, len;
	if (in->size == 0 && tort_below(c, 3) == 0) {
		off = 0;
		len = 1 + tort_below(c, c->fs->opts.max_inline);
	} else {
		off = rnd_bytes(c, 256);
		len = 1 + rnd_bytes(c, 16);
	}
	recent_add(c, e);
	e->new_ext++;
	int rc = vio_write(c->fs, t, in, off, len);
	if (rc == 0 && in->size < off + len)
		rc = LAB_EENGINE;
	if (rc)
		tort_note_error(c, "write", rc);
}

/* truncate(2) to a smaller or larger size (models btrfs_setsize: the
 * next fsync of the inode is a full one). */
static void op_truncate(tort *c, task *t)
{
	tent *e;
	struct inode *in = pick_file(c, 1, "truncate: inode", &e);
	if (!in)
		return;
	uint64_t ns = tort_below(c, 4) == 0 ? in->size + rnd_bytes(c, 16)
						 : tort_below(c, in->size + 1);
	int rc = vio_truncate(c->fs, t, in, ns);
	if (rc == 1)
		rc = LAB_ESTATE; /* parked on writeback: there is none here */
	if (!rc && in->size != ns)
		rc = LAB_EENGINE;
	if (!rc) {
		in->flags |= INODE_NEEDS_FULL_SYNC;
		rc = fs_inode_update(c->fs, t, in);
	}
	if (rc)
		tort_note_error(c, "truncate", rc);
}

/* A buffered read of part of a file: it returns what i_size allows. */
static void op_read(tort *c, task *t)
{
	tent *e;
	struct inode *in = pick_file(c, 0, "read: inode", &e);
	if (!in)
		return;
	uint64_t off = in->size ? tort_below(c, in->size + SECTORSIZE) : 0;
	uint64_t len = 1 + rnd_bytes(c, 32), got = 0;
	uint64_t want = off >= in->size ? 0 : in->size - off < len ? in->size - off : len;
	int rc = vio_read(c->fs, t, in, off, len, &got);
	if (rc == 1)
		rc = LAB_ESTATE; /* parked behind a read: none runs here */
	if (!rc && got != want)
		rc = LAB_EENGINE;
	if (rc)
		return tort_note_error(c, "read", rc);
	c->reads++;
	c->read_bytes += got;
}

/* lseek SEEK_DATA / SEEK_HOLE: the answer lies in [off, i_size]. */
static void op_lseek(tort *c, task *t)
{
	tent *e;
	struct inode *in = pick_file(c, 0, "lseek: inode", &e);
	if (!in)
		return;
	uint64_t off = in->size ? tort_below(c, in->size) : 0, res = 0;
	int whence = tort_below(c, 2) ? LSEEK_DATA : LSEEK_HOLE;
	int rc = vio_lseek(c->fs, t, in, off, whence, &res);
	if (rc == LSEEK_ENXIO) {
		/* no data at or after off (SEEK_DATA), or off at/after EOF */
		if (whence == LSEEK_HOLE && off < in->size)
			tort_note_error(c, "lseek hole", LAB_EENGINE);
		c->lseeks++;
		return;
	}
	if (rc == 1)
		rc = LAB_ESTATE;
	if (!rc && (res < off || res > in->size || (whence == LSEEK_DATA && res == in->size)))
		rc = LAB_EENGINE;
	if (rc)
		return tort_note_error(c, "lseek", rc);
	c->lseeks++;
}

/* rename(2) of a name into a random directory of its subvolume. */
static void op_rename(tort *c, task *t)
{
	int i = tort_pick(c, -1);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	if (tort_pinned(c, e->sv, e->ino))
		return;
	uint64_t nd = pick_dir(c, e->sv);
	char on[16], nn[16];
	tname(on, e->name);
	uint32_t n = c->next_name++;
	tname(nn, n);
	int rc = vfs_rename(c->fs, t, c->sv[e->sv], e->dir, on, nd, nn);
	if (rc == LAB_EINVAL && e->is_dir)
		return; /* moving a directory below itself: refused, as it should be */
	if (rc)
		return tort_note_error(c, "rename", rc);
	uint64_t od = e->dir;
	e->dir = nd;
	e->name = n;
	e->dur_trans = 0; /* its fsynced name is the old one */
	tort_note_rename(c, e, od);
}

/* unlink(2) of a file, rmdir(2) of an empty directory. */
static void op_unlink(tort *c, task *t)
{
	int i = tort_pick(c, -1);
	if (i < 0)
		return;
	tent e = c->ents[i];
	if (tort_pinned(c, e.sv, e.ino))
		return;
	char name[16];
	tname(name, e.name);
	if (e.is_dir) {
		struct inode *d = fs_inode_get(c->sv[e.sv], e.ino);
		if (!d || d->nentries)
			return; /* only empty directories go */
		int rc = vfs_rmdir(c->fs, t, c->sv[e.sv], e.dir, name);
		if (rc)
			return tort_note_error(c, "rmdir", rc);
	} else {
		int rc = vfs_unlink(c->fs, t, c->sv[e.sv], e.dir, name);
		if (rc)
			return tort_note_error(c, "unlink", rc);
	}
	if (c->mix_all)
		tort_note_unlink(c, &e);
	tort_ents_del(c, i);
}

/* lookup + stat(2): the name leads to the inode, whose item agrees. */
static void op_stat(tort *c, task *t)
{
	int i = tort_pick(c, -1);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	char name[16];
	tname(name, e->name);
	uint64_t ino;
	int rc = vfs_lookup(c->fs, t, c->sv[e->sv], e->dir, name, &ino);
	if (!rc && ino != e->ino)
		rc = LAB_EENGINE;
	vfs_stat_info st;
	if (!rc)
		rc = vfs_stat(c->fs, t, c->sv[e->sv], ino, &st);
	if (!rc) {
		/* the inode item is the in-memory inode as of its last update:
		 * equal once no dirty page or ordered extent is left */
		struct inode *in = fs_inode_get(c->sv[e->sv], ino);
		if (!in)
			rc = LAB_EENGINE;
		else if ((!in->io || vd_clean(in->io)) &&
			 (st.size != in->size || st.nbytes != in->nbytes))
			rc = LAB_EENGINE;
	}
	if (rc)
		tort_note_error(c, "stat", rc);
}

/* ---- commits --------------------------------------------------------------- */

/* Whether the commit wanted may start: the cleaner has dropped every
 * queued root, and for a remount or the end no fsync is in flight. */
static int quiet(tort *c)
{
	if (c->sc_ready && !c->sc.failed && (c->sc.cur || c->sc.next < c->sc.ndead))
		return 0;
	if ((c->want == CW_REMOUNT || c->want == CW_FINAL) && tort_fsyncs_busy(c))
		return 0;
	return 1;
}

/* The data part before a commit: an fsync's file, or every dirty file
 * for sync, remount and the end (models sync_filesystem's writeback). */
static void flush_data(tort *c, task *t)
{
	int rc = 0;
	if (c->want == CW_FSYNC) {
		struct inode *in = c->fsync_sv >= 0 && c->sv[c->fsync_sv]
			? fs_inode_get(c->sv[c->fsync_sv], c->fsync_ino) : NULL;
		if (in && (in->mode & S_IFMT_) == S_IFREG_)
			rc = vio_fsync(c->fs, t, in);
	} else if (c->want != CW_NONE) {
		rc = vio_sync(c->fs, t);
	}
	if (rc == 1)
		rc = LAB_ESTATE; /* parked behind an asynchronous writeback: none here */
	if (rc)
		tort_note_error(c, "flush", rc);
}

/* Every commit is counted, with the tallest tree it left. */
static void count_commit(tort *c)
{
	c->commits++;
	int height = fs_tree_height_max(c->fs);
	if (height > c->max_height)
		c->max_height = height;
}

/* The check after a commit: the whole one after the last and at most
 * every full_every commits, else the incremental one (check.h: what the
 * commit's transaction changed, against the record of the last check).
 * The whole check walks every tree block and every inode's data state,
 * so at a fixed cadence its cost per operation would grow with the file
 * system; it waits until the incremental checks since the last one have
 * checked TS_FULL_SPACING times the blocks and inodes that one checked
 * (the incremental check: the changed blocks, the touched inodes), which
 * bounds its share of the checking at any size. Inodes count as well as
 * blocks: a file system of small files has several times more inodes than
 * tree blocks, and each is a search of its file extent items.
 * Nothing goes unchecked for the spacing: every block, extent and inode a
 * transaction changes is checked at its own commit by the incremental
 * check, which checks them as the whole check does. What only the whole
 * check sees (damage to a block or an inode no transaction touched, the
 * qgroups' recount from every tree) stays in the file system until the
 * next whole check, which comes at the latest after the last commit: a
 * longer spacing makes such a finding later, never lost (test_check_incr:
 * damage to a block no transaction COWed, found by the next whole
 * check). */
static void check_commit(tort *c, int last)
{
	uint64_t checked, walked;
	check_incr_work(c->fs, &checked, &walked);
	dfs *df = vio_dfs(c->fs);
	if (last || (c->commits - c->full_at >= c->full_every &&
		     checked - c->full_checked + c->incr_inodes - c->incr_inodes_at >=
			     TS_FULL_SPACING * (walked + c->full_inodes))) {
		c->full_checks++;
		c->full_prev = walked + c->full_inodes;
		c->full_inodes = df ? (uint64_t)df->ninodes : 0;
		tort_note_check(c, c->fs, check_fs(c->fs));
		c->full_at = c->commits;
		c->incr_inodes_at = c->incr_inodes;
		check_incr_work(c->fs, &c->full_checked, &walked);
		c->full_walked += walked;
		c->full_inodes_sum += c->full_inodes;
	} else {
		c->incr_inodes += df && !df->chk_lost ? (uint64_t)df->chk_n : 0;
		tort_note_check(c, c->fs, check_fs_incr(c->fs));
	}
}

/* After a commit: the tallest tree, then the checker. */
static void after_commit(tort *c, task *t)
{
	count_commit(c);
	if (c->sc_ready && c->sc.failed && !c->errors)
		tort_note_error(c, "cleaner", c->sc.failed);
	check_commit(c, c->want == CW_FINAL);
	if (c->want == CW_REMOUNT) {
		int rc = vio_remount(c->fs, t);
		if (rc)
			tort_note_error(c, "remount", rc);
		c->remounts++;
	}
}

/* Ask for a commit: the handle of this step is ended; the commit runs in
 * a handle of its own once quiet() allows. */
void tort_want_commit(tort *c, int why)
{
	c->want = why;
	c->state = ST_QUIET;
}

/* Recording: operation `name` starts (kind "op:NAME", sim.h). */
static void rec_op(tort *c, task *t, const char *name)
{
	sim *s = c->fs->sim;
	if (!sim_recording_ops(s))
		return;
	char kind[32];
	snprintf(kind, sizeof kind, "op:%s", name);
	const int64_t a[] = { (int64_t)c->ops };
	sim_rec(s, sim_trace_kind_args(s, kind, "n"), t, 1, a);
}

/* One operation inside the handle c->h. */
static void run_op(tort *c, task *t)
{
	uint64_t x = tort_below(c, 1000);
	if (x < 220)
		rec_op(c, t, "create"), op_create(c, t, 0);
	else if (x < 270)
		rec_op(c, t, "mkdir"), op_create(c, t, 1);
	else if (x < 470)
		rec_op(c, t, "write"), op_write(c, t);
	else if (x < 550)
		rec_op(c, t, "truncate"), op_truncate(c, t);
	else if (x < 590)
		rec_op(c, t, "lseek"), op_lseek(c, t);
	else if (x < 630)
		rec_op(c, t, "read"), op_read(c, t);
	else if (x < 710)
		rec_op(c, t, "rename"), op_rename(c, t);
	else if (x < 820)
		rec_op(c, t, "unlink"), op_unlink(c, t);
	else if (x < 900)
		rec_op(c, t, "stat"), op_stat(c, t);
	else if (x < 915) {
		rec_op(c, t, "fsync");
		if (c->mix_all) {
			tort_op_fsync_storm(c, t);
		} else {
			/* fsync without the log: flush the file, then commit */
			int i = tort_pick(c, 0);
			c->fsyncs++;
			c->fsync_sv = i >= 0 ? c->ents[i].sv : -1;
			c->fsync_ino = i >= 0 ? c->ents[i].ino : 0;
			tort_want_commit(c, CW_FSYNC);
		}
	} else if (x < 920)
		rec_op(c, t, "sync"), tort_want_commit(c, CW_SYNC);
	else if (c->mix_all && x < 926)
		rec_op(c, t, "snapshot"), tort_op_snapshot(c, t);
	else if (c->mix_all && x < 929)
		rec_op(c, t, "snapshot_delete"), tort_op_snap_delete(c, t);
	else if (c->mix_all && x < 932)
		rec_op(c, t, "subvol_create"), tort_op_subvol_create(c, t);
	else if (c->mix_all && x < 934)
		rec_op(c, t, "subvol_delete"), tort_op_subvol_delete(c, t);
	else if (c->mix_all && x < 936)
		rec_op(c, t, "remount"), tort_want_commit(c, CW_REMOUNT);
	else if (c->mix_all && x < 938)
		rec_op(c, t, "send"), tort_op_send(c, t);
	else if (x < 970)
		rec_op(c, t, "create"), op_create(c, t, 0);
	else
		rec_op(c, t, "write"), op_write(c, t);
}

/* The main task: start a handle, run one op (or commit), end it. */
static int torture_step(sim *s, task *t)
{
	tort *c = t->ctx;
	(void)s;
	int rc;
	for (;;) {
		switch (c->state) {
		case ST_QUIET:
			if (!quiet(c)) {
				task_wait_until(t, t->clock + TS_POLL_NS);
				return TASK_RUN;
			}
			flush_data(c, t);
			c->state = ST_START;
			break;
		case ST_START:
			if (c->fsync_commit && !c->want) {
				/* an fsync the log could not hold asked for it */
				c->fsync_commit = 0;
				tort_want_commit(c, CW_FSYNC);
				break;
			}
			rc = trans_start(&c->tm, t, &c->h);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			if (rc) {
				tort_note_error(c, "trans_start", rc);
				return TASK_DONE;
			}
			if (c->want) {
				c->state = ST_COMMIT;
				break;
			}
			if (c->ops >= c->target) {
				rc = trans_end(&c->h, 0);
				if (rc)
					tort_note_error(c, "trans_end", rc);
				tort_want_commit(c, CW_FINAL);
				return TASK_RUN;
			}
			run_op(c, t);
			c->ops++;
			rc = trans_end(&c->h, 0);
			if (rc)
				tort_note_error(c, "trans_end", rc);
			if (c->sc_ready)
				subvol_wake_cleaner(&c->sc, t->clock);
			return TASK_RUN;
		case ST_COMMIT:
			rc = trans_commit(&c->h, TCOMMIT_EXPLICIT);
			if (rc == TRANS_WAIT)
				return TASK_BLOCKED;
			if (rc) {
				tort_note_error(c, "commit", rc);
				return TASK_DONE;
			}
			after_commit(c, t);
			c->state = ST_START;
			if (c->want == CW_FINAL) {
				c->want = CW_NONE;
				return TASK_DONE;
			}
			c->want = CW_NONE;
			return TASK_RUN;
		default:
			tort_note_error(c, "state", LAB_EENGINE);
			return TASK_DONE;
		}
	}
}

/* mix=all: quota, the cleaner, the log tree (before any subvolume is
 * made, so the reachability index sees every tree from the start). */
static int setup_all(struct lab_run *r, tort *c)
{
	int rc = qgroup_init(&c->q, c->fs, &c->tm);
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
	tc.keep_synced = 1; /* the power-cut check replays it */
	/* patch 001 either way: both paths of the log must stay consistent */
	patch_set(&c->fs->opts.patches, P_001_PREALLOC_SCRATCH_EB, (int)prng_below(&c->rng, 2));
	rc = treelog_create(r->sim, NULL, c->mem, &tc, &c->tl);
	if (!rc)
		rc = treelog_attach(c->tl, c->fs);
	if (rc)
		return exp_fail(r, rc, "log tree");
	treelog_set_trans(c->tl, &c->tm);
	rc = check_more_qgroups(c->fs, &c->q);
	if (!rc)
		rc = check_more_treelog(c->fs, c->tl);
	if (rc)
		return exp_fail(r, rc, "check registration");
	return 0;
}

/* A commit of the setup (mkfs's subvolumes, quota enable) is checked and
 * counted like the operations' ones: "after every commit" means every one
 * the commit chart shows. */
static int setup_commit(tort *c)
{
	int rc = trans_commit_now(&c->tm, NULL, TCOMMIT_EXPLICIT);
	if (rc)
		return rc;
	count_commit(c);
	check_commit(c, 0);
	return 0;
}

/* Mount on an "ideal" device, attach transactions and the data path (and
 * for mix=all quota, the cleaner, the log), make the subvolumes, commit,
 * spawn the main task. */
static int torture_setup(struct lab_run *r)
{
	tort *c = lab_calloc(1, sizeof(*c));
	if (!c)
		return LAB_ENOMEM;
	r->ctx = c;
	c->target = (uint64_t)exp_param(r, "ops");
	c->full_every = (uint64_t)exp_param(r, "full_check_every");
	c->mix_all = exp_param_enum(r, "mix") == 1;
	prng_seed(&c->rng, r->seed ^ 0x746f727475726521ull);
	int rc = bdev_create(r->sim, "ideal", &c->dev);
	if (rc)
		return exp_fail(r, rc, "device");
	fs_opts o;
	fs_opts_default(&o);
	o.patches = r->patches;
	/* the power-cut check reads what the last commit wrote */
	o.keep_commit_roots = c->mix_all;
	rc = fs_mount(r->sim, c->dev, &o, &c->fs);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	rc = trans_init(&c->tm, c->fs);
	if (rc)
		return exp_fail(r, rc, "transaction manager");
	c->tm_ready = 1;
	rc = vio_attach(c->fs, NULL, &c->tm);
	if (rc)
		return exp_fail(r, rc, "data path");
	c->vio_ready = 1;
	rc = check_incr_enable(c->fs);
	if (!rc)
		rc = check_more_handles(c->fs, &c->tm);
	if (!rc)
		rc = check_more_space(c->fs);
	if (rc)
		return exp_fail(r, rc, "check registration");
	if (c->mix_all && (rc = setup_all(r, c)))
		return rc;
	int nsv = (int)exp_param(r, "subvols");
	c->sv[0] = fs_root_lookup(c->fs, BTRFS_FS_TREE_OBJECTID);
	c->nsv = 1;
	for (int i = 1; i < nsv; i++) {
		char name[16];
		uint32_t n = c->next_name++;
		snprintf(name, sizeof name, "s%u", n);
		rc = c->mix_all ? subvol_create(&c->sc, NULL, c->sv[0], BTRFS_FIRST_FREE_OBJECTID,
						name, &c->sv[c->nsv])
				: fs_create_subvol(c->fs, NULL, c->sv[0], BTRFS_FIRST_FREE_OBJECTID,
						   name, &c->sv[c->nsv]);
		if (rc)
			return exp_fail(r, rc, "subvolume create failed: %s", lab_strerror(rc));
		c->svname[c->nsv] = n;
		c->nsv++;
	}
	rc = setup_commit(c);
	if (rc)
		return exp_fail(r, rc, "initial commit failed");
	if (c->mix_all) {
		/* btrfs quota enable: the qgroups, a rescan, a commit */
		rc = qgroup_enable(&c->q, NULL);
		if (!rc)
			rc = qgroup_rescan(&c->q, NULL);
		if (!rc)
			rc = setup_commit(c);
		if (!rc)
			rc = subvol_cleaner_start(&c->sc, 0);
		if (rc)
			return exp_fail(r, rc, "quota enable failed: %s", lab_strerror(rc));
	}
	if (!task_spawn(r->sim, "torture", torture_step, c, 0))
		return LAB_ENOMEM;
	return 0;
}

/* Operations done over operations asked for. */
static double torture_progress(struct lab_run *r)
{
	tort *c = r->ctx;
	return c->target ? (double)c->ops / (double)c->target : 1.0;
}

/* The metrics of lab-cli.md. */
static int torture_collect(struct lab_run *r)
{
	tort *c = r->ctx;
	exp_metric(r, "ops", (double)c->ops);
	exp_metric(r, "commits", (double)c->commits);
	exp_metric(r, "fsyncs", (double)c->fsyncs);
	exp_metric(r, "check_failures", (double)c->failures);
	exp_metric(r, "max_tree_height", (double)c->max_height);
	exp_metric(r, "full_checks", (double)c->full_checks);
	return 0;
}

/* What ran and what it left: counters per part of the mix, the trees. */
static void torture_details(struct lab_run *r, strbuf *out)
{
	tort *c = r->ctx;
	fs_info *fs = c->fs;
	js_obj(out);
	js_kint(out, "live_names", c->nents);
	js_kint(out, "snapshots", c->nsnaps);
	js_knum(out, "op_errors", (double)c->errors);
	js_kstr(out, "first_error", c->first_error);
	js_knum(out, "meta_used", (double)fs->alloc.used[ALLOC_METADATA]);
	js_knum(out, "data_used", (double)fs->alloc.used[ALLOC_DATA]);
	js_knum(out, "block_groups", fs->alloc.nbgs);
	js_knum(out, "refs_run", (double)fs->refs_run);
	js_knum(out, "reads", (double)c->reads);
	js_knum(out, "read_bytes", (double)c->read_bytes);
	js_knum(out, "lseeks", (double)c->lseeks);
	if (c->mix_all) {
		js_key(out, "all");
		js_obj(out);
		js_knum(out, "fsync_storms", (double)c->storms);
		js_knum(out, "fsync_full", (double)c->tl->full);
		js_knum(out, "fsync_fast", (double)c->tl->fast);
		js_knum(out, "fsync_skipped", (double)c->tl->skipped);
		js_knum(out, "log_commits", (double)c->tl->log_commits);
		js_knum(out, "leaves_logged", (double)c->tl->leaves_copied);
		js_kint(out, "prealloc_scratch", fs_patch_on(c->fs, P_001_PREALLOC_SCRATCH_EB));
		js_knum(out, "snapshots_taken", (double)c->snapshots);
		js_knum(out, "snapshots_deleted", (double)c->snap_deletes);
		js_knum(out, "subvols_created", (double)c->subvol_creates);
		js_knum(out, "subvols_deleted", (double)c->subvol_deletes);
		js_knum(out, "roots_dropped", (double)c->sc.roots_dropped);
		js_knum(out, "leaves_dropped", (double)c->sc.leaves_dropped);
		js_knum(out, "shared_skipped", (double)c->sc.shared_skipped);
		js_kint(out, "qgroups", c->q.nqgs);
		js_kint(out, "qgroup_calls", c->q.ncalls);
		js_knum(out, "sends", (double)c->sends);
		js_knum(out, "sent_inodes", (double)c->sent_inodes);
		js_knum(out, "remounts", (double)c->remounts);
		js_knum(out, "fsync_commit_fallbacks", (double)c->log_fallbacks);
		js_knum(out, "power_cuts", (double)c->cuts);
		js_knum(out, "power_cuts_replayed", (double)c->cuts_replayed);
		js_obj_end(out);
	}
	/* the last 400 commits with their phases, for the view's timeline */
	js_key(out, "commits");
	trans_commits_json(&c->tm, 0, 400, out);
	js_key(out, "trees");
	js_arr(out);
	for (int i = 0; i < c->nsv; i++) {
		if (!c->sv[i])
			continue;
		uint64_t l, n, it;
		bt_count_blocks(&c->sv[i]->tree, &l, &n, &it);
		js_obj(out);
		js_knum(out, "root", (double)c->sv[i]->id);
		js_kint(out, "height", bt_tree_height(&c->sv[i]->tree));
		js_knum(out, "leaves", (double)l);
		js_knum(out, "nodes", (double)n);
		js_knum(out, "items", (double)it);
		js_knum(out, "nodes_visited", (double)c->sv[i]->tree.nodes_visited);
		js_knum(out, "cows", (double)c->sv[i]->tree.cows);
		js_obj_end(out);
	}
	js_arr_end(out);
	js_obj_end(out);
}

/* "tree:fs" (top-level subvolume), "tree:<root id>", "tree:extent",
 * "tree:csum", "tree:root". */
static int torture_snapshot(struct lab_run *r, const char *what, strbuf *out)
{
	tort *c = r->ctx;
	return fs_tree_snapshot(c->fs, &c->sv[0]->tree, what, out);
}

/* lab_check: the full checker now, between two steps (read-only: the
 * queued refs count as run, check.h). */
static int torture_check(struct lab_run *r)
{
	tort *c = r->ctx;
	return check_fs_midrun(c->fs);
}

/* Free everything, subsystems before the fs, the device last. */
static void torture_teardown(struct lab_run *r)
{
	tort *c = r->ctx;
	if (!c)
		return;
	for (int i = 0; i < c->nsnaps; i++)
		free(c->snaps[i].names);
	if (c->sc_ready)
		subvol_destroy(&c->sc);
	if (c->q_ready)
		qgroup_destroy(&c->q);
	if (c->tl) {
		for (int i = 0; i < TS_MAX_FSYNC; i++)   /* cut short by the run's end */
			if (c->fsw[i].busy)
				treelog_fsync_abandon(c->tl, &c->fsw[i].f);
		treelog_destroy(c->tl);
	}
	if (c->mem)
		ebmem_destroy(c->mem);
	if (c->vio_ready)
		vio_detach(c->fs);
	if (c->tm_ready)
		trans_destroy(&c->tm);
	fs_unmount(c->fs);
	if (c->dev)
		bdev_destroy(c->dev);
	free(c->ents);
	u64map_free(&c->ent_idx);
	free(c->gone);
	free(c->durs);
	free(c);
	r->ctx = NULL;
}

/* lab_estimate, in events (the unit of every experiment's estimate: the
 * events a run takes, what lab_step slices): about one per operation (its
 * task step), a fifth more with mix=all (the log tree's fsyncs, the
 * cleaner, send/receive). The subvolumes made at the start and the
 * checks (full_check_every) run inside other events: they add none, and
 * the incremental checks bound the full checks' share of the run
 * (measured, native: 20,000 ops take 177 ms with full_check_every 1 and
 * with 100, 144 ms with 64 subvolumes). Coefficients: events per unit of native runs (test_estimate keeps
 * them within a factor of 3 over random settings). */
static double torture_estimate(const struct lab_run *r)
{
	double per_op = exp_param_enum(r, "mix") ? 1.2 : 1.02;
	return per_op * exp_param(r, "ops") + 4;
}

static const small_run torture_small[] = {
	{ "base", "ops=60\nmix=all" },
	{ "base", "ops=60\nmix=files" },
};

const lab_exp exp_torture = {
	.name = "torture",
	.seed = "-",
	.title = "random file-system operations with the invariant checker after every commit",
	.has_variants = 0,
	.params = torture_params,
	.nparams = (int)(sizeof torture_params / sizeof torture_params[0]),
	.metrics = torture_metrics,
	.nmetrics = (int)(sizeof torture_metrics / sizeof torture_metrics[0]),
	.published = NULL,
	.npublished = 0,
	.small = torture_small,
	.nsmall = (int)(sizeof torture_small / sizeof torture_small[0]),
	.setup = torture_setup,
	.progress = torture_progress,
	.collect = torture_collect,
	.details = torture_details,
	.snapshot = torture_snapshot,
	.check = torture_check,
	.teardown = torture_teardown,
	.estimate = torture_estimate,
	.work_unit = "simulated events",
};
