/*
 * exp_torture_all.c - the operations torture adds with mix=all (see
 * exp_torture.c's header): fsync storms through the log tree, subvolume
 * create and delete, snapshots and their deletion, and send/receive of a
 * snapshot onto a second file system, compared with it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "exp.h"
#include "items.h"
#include "lab.h"
#include "send.h"
#include "vfs.h"
#include "vfs_io.h"

#include "exp_torture_int.h"
#include "labmem.h"

/* ---- fsync storms (mix=all) --------------------------------------------- */

static int fsync_busy_on(const tort *c, int sv, uint64_t ino);

static tent *find_ent(tort *c, int sv, uint64_t ino)
{
	int i = tort_find(c, sv, ino);
	return i < 0 ? NULL : &c->ents[i];
}

/* Append (a, b) to a list of pairs of the running transaction (kept in
 * *trans: a list of an older one starts over). */
static void pairs_add(tort *c, uint64_t (**v)[2], int *n, int *cap, uint64_t *trans,
		      uint64_t a, uint64_t b)
{
	if (*trans != c->fs->transid) {
		*trans = c->fs->transid;
		*n = 0;
	}
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		uint64_t (*g)[2] = lab_realloc(*v, (size_t)nc * sizeof(**v));
		if (!g)
			return tort_note_error(c, "power cut: list", LAB_ENOMEM);
		*v = g;
		*cap = nc;
	}
	(*v)[*n][0] = a;
	(*v)[*n][1] = b;
	(*n)++;
}

void tort_note_unlink(tort *c, const tent *e)
{
	if (e->log_trans != c->fs->transid && !fsync_busy_on(c, e->sv, e->ino))
		return;
	pairs_add(c, &c->gone, &c->ngone, &c->gone_cap, &c->gone_trans, (uint64_t)e->sv, e->ino);
}

/* Whether fsync w logged (or is logging) ino: the inode, its parent, or a
 * directory made in this transaction above it that log_all_new_ancestors
 * has put into the log so far. */
static int fsync_logs(const tfsync *w, int sv, uint64_t ino)
{
	if (w->sv != sv)
		return 0;
	if (w->ino == ino || w->pino == ino)
		return 1;
	for (int k = 0; k < w->f.anc_next && k < w->f.nanc; k++)
		if (w->f.anc[k] == ino)
			return 1;
	return 0;
}

/* An fsync that logs ino is in flight: its log may be on disk already,
 * with another fsync's log commit. */
static int fsync_busy_on(const tort *c, int sv, uint64_t ino)
{
	for (int i = 0; i < TS_MAX_FSYNC; i++)
		if (c->fsw[i].busy && fsync_logs(&c->fsw[i], sv, ino))
			return 1;
	return 0;
}

/* A power cut found fsynced inode ino of slot sv as `im` shows it, not as
 * its last finished fsync saw it: that is allowed when an fsync of it in
 * flight has started copying it into the log (btrfs_log_inode) and `im`
 * is the inode as it is now (a file an fsync pins is not written:
 * pick_file skips it): another fsync's log sync writes the whole
 * log tree, this copy with it (it waits for the copy to end:
 * log_writers), so the newer state is as durable as the older. */
static int newer_logged(tort *c, int sv, uint64_t ino, const tl_img_inode *im)
{
	for (int i = 0; i < TS_MAX_FSYNC; i++) {
		const tfsync *w = &c->fsw[i];
		if (!w->busy || w->sv != sv || w->ino != ino || w->f.state < TLS_COPY)
			continue;
		struct inode *in = fs_inode_get(c->sv[sv], ino);
		return in && im->size == in->size &&
		       tl_image_extents_hash(im) == tl_tree_extents_hash(c->fs, in);
	}
	return 0;
}

static int gone_logged(const tort *c, int sv, uint64_t ino)
{
	if (c->gone_trans != c->fs->transid)
		return 0;
	for (int i = 0; i < c->ngone; i++)
		if (c->gone[i][0] == (uint64_t)sv && c->gone[i][1] == ino)
			return 1;
	return 0;
}

/* Whether an fsync of this transaction logged inode ino of slot sv (the
 * checker's record): fsynced, logged with another's fsync, unlinked
 * since, or held by an fsync in flight. */
static int logged_now(const tort *c, int sv, uint64_t ino)
{
	int i = tort_find(c, sv, ino);
	return (i >= 0 && c->ents[i].log_trans == c->fs->transid) || gone_logged(c, sv, ino) ||
	       fsync_busy_on(c, sv, ino);
}

/*
 * What a replay may bring back of this transaction, in *out (ino -> 1):
 * the inodes an fsync logged (logged_now), and every directory above one
 * of them in the replayed image: btrfs_log_inode_parent and
 * btrfs_log_new_name log the directories made in this transaction above
 * a logged inode, with their names (log_all_new_ancestors), so that it
 * has a path after a replay. 0 or LAB_ENOMEM.
 */
static int above_logged(const tort *c, int sv, const tl_image *im, u64map *out)
{
	u64map parent;
	memset(&parent, 0, sizeof(parent));
	u64map_clear(out);
	int rc = 0;
	/* the image's names, child -> directory (one name each here) */
	for (int i = 0; i < im->ndents && !rc; i++)
		if (!(im->dents[i].type & FS_DIRENT_SUBVOL) && im->dents[i].dir <= UINT32_MAX)
			rc = u64map_put(&parent, im->dents[i].child, (uint32_t)im->dents[i].dir);
	for (int k = 0; k < im->ninodes && !rc; k++) {
		uint64_t x = im->inodes[k].ino;
		if (!logged_now(c, sv, x))
			continue;
		for (int depth = 0; x && depth < 4096 && !rc; depth++) {
			if (u64map_get(out, x, NULL))
				break; /* and everything above: marked already */
			rc = u64map_put(out, x, 1);
			uint32_t d;
			x = u64map_get(&parent, x, &d) ? d : 0;
		}
	}
	u64map_free(&parent);
	return rc ? LAB_ENOMEM : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * A power cut now: each subvolume as a mount would find it (its last
 * commit and its last synced log replayed: treelog_replay) against what
 * the fsyncs made durable. Every file fsynced in the running transaction
 * (and not renamed since) is there whole: the size and extents its fsync
 * saw (or, with an fsync of it in flight, as it is now: newer_logged);
 * every inode created in this transaction that the mount finds was
 * logged by an fsync of this transaction (tent.log_trans: the inode
 * fsynced, the parent logged with it, or one of those of an fsync in
 * flight) or is a directory above such an inode in the replayed image
 * (above_logged: log_all_new_ancestors, at an fsync or at a rename).
 * Only those inodes are looked at, so the mount is read as far as they
 * need (treelog_replay_some: the log, those inodes and the directories
 * naming them), not whole: a cut costs what the transaction logged, not
 * what the file system holds. The first cut after each whole check
 * (check_commit spaces those) replays the whole subvolumes as well and
 * finds the partial replay equal on its scope. Failures count as check
 * failures.
 */
void tort_power_cut_check(tort *c)
{
	fs_info *fs = c->fs;
	int fails = 0;
	c->cuts++;
	/* the files fsynced in this transaction, not renamed since */
	int nwant = 0;
	uint64_t *want = NULL;
	if (c->durs_trans == fs->transid && c->ndurs) {
		want = lab_malloc((size_t)c->ndurs * sizeof(*want));
		if (!want)
			return tort_note_error(c, "power cut: list", LAB_ENOMEM);
	}
	/* the first cut after each whole check replays the whole subvolumes
	 * too and compares (so the partial replay's share stays bounded as
	 * the whole check's does) */
	int whole = c->full_checks != c->cut_full;
	c->cut_full = c->full_checks;
	u64map above;
	memset(&above, 0, sizeof(above));
	for (int sv = 0; sv < c->nsv; sv++) {
		struct btrfs_root *root = c->sv[sv];
		if (!root || root->dead || !root->tree.commit_root)
			continue;
		nwant = 0;
		for (int i = 0; want && i < c->ndurs; i++) {
			const tent *e = c->durs[i][0] == (uint64_t)sv ? find_ent(c, sv, c->durs[i][1]) : NULL;
			if (e && !e->is_dir && e->dur_trans == fs->transid)
				want[nwant++] = e->ino;
		}
		if (nwant > 1) { /* a file fsynced twice is listed twice */
			qsort(want, (size_t)nwant, sizeof(*want), cmp_u64);
			int u = 1;
			for (int i = 1; i < nwant; i++)
				if (want[i] != want[u - 1])
					want[u++] = want[i];
			nwant = u;
		}
		tl_image im;
		int rc = treelog_replay_some(c->tl, root, want, nwant, &im);
		if (!rc && whole) {
			tl_image all;
			uint64_t where;
			rc = treelog_replay(c->tl, root, &all);
			if (!rc && !tl_image_agree(&all, &im, &where)) {
				check_report(fs, "power cut: the replay of root %llu read in part differs "
					     "from the whole one at inode %llu",
					     (unsigned long long)root->id, (unsigned long long)where);
				fails++;
			}
			tl_image_free(&all);
		}
		if (rc) {
			tl_image_free(&im);
			free(want);
			tort_note_error(c, "power cut: replay", rc);
			return;
		}
		c->cuts_replayed += (uint64_t)im.replayed;
		for (int i = 0; i < nwant; i++) {
			const tent *e = find_ent(c, sv, want[i]);
			const tl_img_inode *in = tl_image_inode(&im, e->ino);
			if (!in || in->nlink == 0) {
				check_report(fs, "power cut: fsynced inode %llu of root %llu missing after replay",
					     (unsigned long long)e->ino, (unsigned long long)root->id);
				fails++;
			} else if ((in->size != e->dur_size || tl_image_extents_hash(in) != e->dur_hash) &&
				   !newer_logged(c, sv, e->ino, in)) {
				check_report(fs, "power cut: fsynced inode %llu of root %llu replayed with "
					     "size %llu (fsynced %llu) or other extents",
					     (unsigned long long)e->ino, (unsigned long long)root->id,
					     (unsigned long long)in->size, (unsigned long long)e->dur_size);
				fails++;
			}
		}
		int rc2 = above_logged(c, sv, &im, &above);
		if (rc2) {
			tl_image_free(&im);
			free(want);
			u64map_free(&above);
			return tort_note_error(c, "power cut: paths", rc2);
		}
		for (int k = 0; k < im.ninodes; k++) {
			const tl_img_inode *in = &im.inodes[k];
			if (in->generation != fs->transid || u64map_get(&above, in->ino, NULL))
				continue;
			check_report(fs, "power cut: inode %llu of root %llu, never fsynced, found after replay",
				     (unsigned long long)in->ino, (unsigned long long)root->id);
			fails++;
		}
		tl_image_free(&im);
	}
	free(want);
	u64map_free(&above);
	tort_note_check(c, fs, fails);
}

/* Entry e was renamed out of old_dir (e->dir is its new directory).
 * btrfs_log_new_name logs the new name of an inode logged in this
 * transaction, or that left a directory logged in it, at once, with
 * the directories made in this transaction on its new path up to the top
 * (log_all_new_ancestors walks the live names, whatever the log holds of
 * the directories between): a power cut may find those, and their names,
 * although no fsync logged them and the replayed image does not place
 * them above the inode (an older directory between keeps its committed
 * name there: fuzz finding torture-rename-ancestor-1). */
void tort_note_rename(tort *c, tent *e, uint64_t old_dir)
{
	fs_info *fs = c->fs;
	/* the inode logged, or the directory it left (which lost its name
	 * in the log): the top directory has no entry here, so a rename out
	 * of it counts as logged. So does a directory an fsync in flight
	 * logs (as the inode, its parent, or a new ancestor logged so far:
	 * fsync_logs): once btrfs_log_inode has logged it (logged_trans) the
	 * rename may run while that fsync is still syncing the log, and
	 * btrfs_log_new_name logs the renamed inode, which that log sync
	 * or any later one writes (fuzz finding torture-rename-fsyncing-dir-1);
	 * a directory fsynced with LOG_INODE_ALL before the rename would
	 * log it too (log_new_dir_dentries: a new dentry's inode). */
	const tent *od = old_dir != BTRFS_FIRST_FREE_OBJECTID ? find_ent(c, e->sv, old_dir) : NULL;
	int od_logged = old_dir == BTRFS_FIRST_FREE_OBJECTID || (od && od->log_trans == fs->transid) ||
			fsync_busy_on(c, e->sv, old_dir);
	if (e->log_trans != fs->transid && !fsync_busy_on(c, e->sv, e->ino) && !od_logged)
		return;
	e->log_trans = fs->transid;
	uint64_t d = e->dir;
	for (int depth = 0; d != BTRFS_FIRST_FREE_OBJECTID && depth < 4096; depth++) {
		tent *a = find_ent(c, e->sv, d);
		struct inode *ai = a ? fs_inode_get(c->sv[e->sv], d) : NULL;
		if (!ai)
			break;
		if (ai->generation == fs->transid)
			a->log_trans = fs->transid;
		d = a->dir;
	}
}

/* An fsync finished: what it made durable, and every fifth a power cut. */
static void fsync_done(tort *c, tfsync *w)
{
	fs_info *fs = c->fs;
	if (!w->f.rec.skipped) {
		tent *e = find_ent(c, w->sv, w->ino);
		struct inode *in = fs_inode_get(c->sv[w->sv], w->ino);
		if (e && in) {
			e->log_trans = e->dur_trans = fs->transid;
			if (!e->is_dir) {
				e->dur_size = in->size;
				e->dur_hash = tl_tree_extents_hash(fs, in);
				pairs_add(c, &c->durs, &c->ndurs, &c->durs_cap, &c->durs_trans,
					  (uint64_t)w->sv, w->ino);
			}
		}
		tent *p = w->pino ? find_ent(c, w->sv, w->pino) : NULL;
		if (p)
			p->log_trans = fs->transid;
		/* btrfs_log_inode_parent -> log_all_new_ancestors: each
		 * directory made in this transaction on the way up to the
		 * subvolume's top, not logged yet, went into the log with
		 * its name (LOG_INODE_EXISTS), so the fsynced inode has a
		 * path after a replay. log_new_ancestors logs only inodes
		 * whose generation is this transaction's (here: the one the
		 * fsync started in; a commit may have come since). */
		for (int k = 0; k < w->f.anc_next && k < w->f.nanc; k++) {
			tent *a = find_ent(c, w->sv, w->f.anc[k]);
			struct inode *ai = a ? fs_inode_get(c->sv[w->sv], a->ino) : NULL;
			if (a && a->is_dir && ai && ai->generation >= w->start_trans) {
				a->log_trans = fs->transid;
				continue;
			}
			if (!a && gone_logged(c, w->sv, w->f.anc[k]))
				continue; /* removed since (tort_note_unlink kept it) */
			check_report(fs, "fsync of inode %llu of root %llu logged inode %llu as a "
				     "new ancestor: not a directory made since its fsync began",
				     (unsigned long long)w->ino, (unsigned long long)c->sv[w->sv]->id,
				     (unsigned long long)w->f.anc[k]);
			tort_note_check(c, fs, 1);
		}
	}
	if (++c->fsyncs_done % 5 == 0)
		tort_power_cut_check(c);
}

/* The step of one fsync task: the log part of btrfs_sync_file (the data
 * is in the trees already: ordered extents completed when written). */
static int fsync_step(sim *s, task *t)
{
	tfsync *w = t->ctx;
	tort *c = w->c;
	(void)s;
	int rc;
	if (!w->data_done) {
		/* btrfs_sync_file: write back and wait for the ordered extents */
		rc = (w->f.inode->mode & S_IFMT_) == S_IFREG_ ? vio_fsync(c->fs, t, w->f.inode) : 0;
		if (rc == 1)
			return TASK_BLOCKED;
		w->data_done = 1;
		if (rc < 0) {
			tort_note_error(c, "fsync data", rc);
			w->busy = 0;
			return TASK_DONE;
		}
		return TASK_RUN;
	}
	rc = treelog_fsync_step(c->tl, t, &w->f);
	if (rc == TASK_RUN || rc == TASK_BLOCKED)
		return rc;
	if (rc < 0)
		tort_note_error(c, "fsync", rc);
	else if (w->f.error)
		tort_note_error(c, "fsync log", w->f.error);
	else if (w->f.need_commit) {
		/* the log could not hold it: btrfs_sync_file commits */
		c->log_fallbacks++;
		c->fsync_commit = 1; /* the main task commits at its next op */
	} else
		fsync_done(c, w);
	w->busy = 0;
	return TASK_DONE;
}

/* Whether the log has (or can make) the per-root state of root id: it
 * keeps TL_MAX_ROOTS of them for its lifetime; fsyncs started but not yet
 * run may each still make one. */
static int log_has_room(const tort *c, uint64_t id)
{
	const treelog *tl = c->tl;
	if (tl->nroots + tort_fsyncs_busy(c) < TL_MAX_ROOTS)
		return 1;
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == id)
			return 1;
	return 0;
}

/* Start one fsync of entry i in a free slot; 0 if none was started. */
static int fsync_start(tort *c, task *t, int i)
{
	tent *e = &c->ents[i];
	if (tort_pinned(c, e->sv, e->ino))
		return 0;
	int slot = -1;
	for (int k = 0; k < TS_MAX_FSYNC && slot < 0; k++)
		if (!c->fsw[k].busy)
			slot = k;
	if (slot < 0)
		return 0;
	struct btrfs_root *root = c->sv[e->sv];
	struct inode *in = fs_inode_get(root, e->ino);
	if (!in) {
		tort_note_error(c, "fsync: inode", LAB_EENGINE);
		return 0;
	}
	if (!log_has_room(c, root->id)) {
		/* the log cannot take this root: btrfs_sync_file falls back to
		 * a transaction commit */
		c->fsyncs++;
		c->log_fallbacks++;
		c->fsync_sv = e->sv;
		c->fsync_ino = e->ino;
		tort_want_commit(c, CW_FSYNC);
		return 0;
	}
	tfsync *w = &c->fsw[slot];
	struct inode *parent = NULL;
	/* a new name in this transaction, sometimes: log the parent too */
	if (!e->is_dir && tort_below(c, 4) == 0)
		parent = fs_inode_get(root, e->dir);
	int rc = treelog_fsync_init_parent(&w->f, root, in, e->new_ext, parent);
	if (rc) {
		tort_note_error(c, "fsync init", rc);
		return 0;
	}
	w->c = c;
	w->data_done = 0;
	w->sv = e->sv;
	w->ino = e->ino;
	w->pino = parent ? parent->ino : 0;
	w->start_trans = c->fs->transid;
	if (!task_spawn(c->fs->sim, "fsync", fsync_step, w, t->clock)) {
		tort_note_error(c, "fsync task", LAB_ENOMEM);
		return 0;
	}
	w->busy = 1;
	e->new_ext = 0;
	c->fsyncs++;
	return 1;
}

/* The entry of a recently written inode, or a random one. */
static int pick_recent(tort *c)
{
	if (c->nrecent && tort_below(c, 4)) {
		int n = c->nrecent < TS_RECENT ? c->nrecent : TS_RECENT;
		const uint64_t *r = c->recent[tort_below(c, (uint64_t)n)];
		for (int sv = 0; sv < c->nsv; sv++) {
			if (!c->sv[sv] || c->sv[sv]->id != r[0])
				continue;
			int i = tort_find(c, sv, r[1]);
			if (i >= 0)
				return i;
		}
	}
	return tort_pick(c, -1);
}

/* Several tasks fsync at once (one to four). */
void tort_op_fsync_storm(tort *c, task *t)
{
	int n = 1 + (int)tort_below(c, 4);
	c->storms++;
	for (int k = 0; k < n; k++) {
		int i = pick_recent(c);
		if (i >= 0)
			fsync_start(c, t, i);
	}
}

/* ---- subvolumes and snapshots (mix=all) --------------------------------- */

void tort_op_subvol_create(tort *c, task *t)
{
	int slot = -1;
	for (int i = 1; i < c->nsv && slot < 0; i++)
		if (!c->sv[i])
			slot = i;
	if (slot < 0) {
		if (c->nsv == TS_MAX_SV)
			return;
		slot = c->nsv;
	}
	char name[16];
	uint32_t n = c->next_name++;
	snprintf(name, sizeof name, "s%u", n);
	struct btrfs_root *root;
	int rc = subvol_create(&c->sc, t, c->sv[0], BTRFS_FIRST_FREE_OBJECTID, name, &root);
	if (rc)
		return tort_note_error(c, "subvolume create", rc);
	c->sv[slot] = root;
	c->svname[slot] = n;
	if (slot == c->nsv)
		c->nsv++;
	c->subvol_creates++;
}

/* btrfs subvolume delete of a subvolume made here (the top one stays):
 * queued for the cleaner, its names forgotten. */
void tort_op_subvol_delete(tort *c, task *t)
{
	int live = 0;
	for (int i = 1; i < c->nsv; i++)
		live += c->sv[i] != NULL;
	if (live < 2)
		return; /* keep a few */
	int slot = tort_pick_sv(c);
	if (slot == 0)
		return;
	for (int i = 0; i < TS_MAX_FSYNC; i++)
		if (c->fsw[i].busy && c->fsw[i].sv == slot)
			return; /* an fsync holds one of its inodes */
	char name[16];
	snprintf(name, sizeof name, "s%u", c->svname[slot]);
	(void)t;
	/* subvol_delete evicts its cached inodes (their pages and data state
	 * with them) */
	int rc = subvol_delete(&c->sc, &c->h, c->sv[slot], name);
	if (rc)
		return tort_note_error(c, "subvolume delete", rc);
	for (int i = 0; i < c->nents;) {
		if (c->ents[i].sv == slot)
			tort_ents_del(c, i);
		else
			i++;
	}
	c->sv[slot] = NULL;
	c->subvol_deletes++;
}

/* qsort order of a snapshot's names: by inode number. */
static int tname_cmp(const void *a, const void *b)
{
	const tname_ent *x = a, *y = b;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* The snapshot's name of ino (send_name_fn). */
static int snap_name_of(void *ctx, uint64_t ino, uint64_t parent, char *buf, size_t len)
{
	const tsnap *sn = ctx;
	int lo = 0, hi = sn->nnames;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (sn->names[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= sn->nnames || sn->names[lo].ino != ino || sn->names[lo].dir != parent)
		return LAB_ENOENT;
	snprintf(buf, len, "n%u", sn->names[lo].name);
	return 0;
}

/* A read-only snapshot of a subvolume, with the names it holds (send
 * needs them: the trees keep only their hashes). */
void tort_op_snapshot(tort *c, task *t)
{
	if (c->nsnaps == TS_MAX_SNAPS)
		return;
	int sv = tort_pick_sv(c);
	tsnap *sn = &c->snaps[c->nsnaps];
	memset(sn, 0, sizeof *sn);
	int n = 0;
	for (int i = 0; i < c->nents; i++)
		n += c->ents[i].sv == sv;
	sn->names = lab_malloc(((size_t)n + 1) * sizeof *sn->names);
	if (!sn->names)
		return tort_note_error(c, "snapshot names", LAB_ENOMEM);
	for (int i = 0; i < c->nents; i++)
		if (c->ents[i].sv == sv)
			sn->names[sn->nnames++] =
				(tname_ent){ c->ents[i].ino, c->ents[i].dir, c->ents[i].name };
	qsort(sn->names, (size_t)sn->nnames, sizeof *sn->names, tname_cmp);
	int rc = subvol_snapshot(&c->sc, t, c->sv[sv], &sn->root);
	if (rc) {
		free(sn->names);
		return tort_note_error(c, "snapshot", rc);
	}
	c->nsnaps++;
	c->snapshots++;
}

/* Delete a snapshot: the cleaner drops its tree. */
void tort_op_snap_delete(tort *c, task *t)
{
	(void)t;
	if (!c->nsnaps)
		return;
	int i = (int)tort_below(c, (uint64_t)c->nsnaps);
	tsnap sn = c->snaps[i];
	c->snaps[i] = c->snaps[--c->nsnaps];
	free(sn.names);
	int rc = subvol_delete(&c->sc, &c->h, sn.root, NULL);
	if (rc)
		return tort_note_error(c, "snapshot delete", rc);
	c->snap_deletes++;
}

/*
 * Send a snapshot and receive it into a fresh file system on its own
 * device (models `btrfs send snap | btrfs receive` onto another disk),
 * the kernel before or after patch 003 at random; check the receiver and
 * compare it with the snapshot.
 */
void tort_op_send(tort *c, task *t)
{
	if (!c->nsnaps)
		return;
	tsnap *sn = &c->snaps[tort_below(c, (uint64_t)c->nsnaps)];
	/* the receiver runs this kernel, with or without patch 003 */
	fs_opts o;
	fs_opts_default(&o);
	o.patches = c->fs->opts.patches;
	patch_set(&o.patches, P_003_TRUNC_SKIP_SAME_SIZE_WB, (int)tort_below(c, 2));
	send_stream st;
	int rc = send_build(c->fs, t, sn->root, NULL, snap_name_of, sn, &st);
	if (rc)
		return tort_note_error(c, "send", rc);
	bdev *dev = NULL;
	fs_info *dst = NULL;
	rc = bdev_create(c->fs->sim, "ideal", &dev);
	if (!rc)
		rc = fs_mount(c->fs->sim, dev, &o, &dst);
	if (rc) {
		send_stream_free(&st);
		if (dev)
			bdev_destroy(dev);
		return tort_note_error(c, "receive mount", rc);
	}
	recv_ctx r;
	rc = recv_init(&r, dst, fs_root_lookup(dst, BTRFS_FS_TREE_OBJECTID), &st);
	if (!rc) {
		/* each command is its own syscall; only this task uses dst,
		 * whose data path completes its IO on the task: nothing parks */
		do
			rc = recv_step(&r, t);
		while (rc == TASK_RUN);
		if (rc == TASK_BLOCKED)
			rc = LAB_ESTATE;
		rc = rc < 0 ? rc : recv_flush(&r, t);
		if (rc > 0)
			rc = LAB_ESTATE;
		if (!rc)
			rc = fs_commit(dst, t);
		if (!rc) {
			tort_note_check(c, dst, check_fs(dst));
			int f = check_send_received(c->fs, sn->root, &r, snap_name_of, sn);
			tort_note_check(c, c->fs, f);
		}
		c->sent_inodes += r.nino;
		recv_destroy(&r);
	}
	if (rc)
		tort_note_error(c, "receive", rc);
	fs_unmount(dst);
	bdev_destroy(dev);
	send_stream_free(&st);
	c->sends++;
}
