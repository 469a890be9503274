/* test_treelog_replay.c - the log tree after a power cut: a small fsync
 * sequence on a real file system (creates, writes, fsyncs of files and
 * directories, unlinks, a truncate, a commit, fsyncs below directories
 * made in the same transaction), the power cut at every
 * step, the log replayed over the committed tree (treelog_replay), and
 * the mounted result compared with what the sequence made durable: every
 * fsynced file whole, nothing that was neither fsynced nor committed. */
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "ebmem.h"
#include "items.h"
#include "lab.h"
#include "t.h"
#include "trans.h"
#include "treelog.h"
#include "vfs.h"
#include "vfs_io.h"

#define NF 28

/* What the sequence made durable for one name: present or not, and the
 * file's size and extents as the last fsync or commit saw them. */
typedef struct durable {
	const char *name;
	uint64_t dir;          /* the directory's ino */
	struct inode *in;      /* live inode (NULL: unlinked) */
	uint64_t ino;          /* its inode number */
	int present;           /* durable: the name exists */
	uint64_t size, hash;   /* durable: its size and extents */
	int isdir;
} durable;

typedef struct world {
	sim *s;
	bdev *dev;
	fs_info *fs;
	struct btrfs_root *root;
	ebmem *mem;
	treelog *tl;
	durable f[NF];
	int nf;
	int step, cuts, replayed_cuts;
	int prealloc;
	int err;
} world;

static durable *find(world *w, const char *name)
{
	for (int i = 0; i < w->nf; i++)
		if (!strcmp(w->f[i].name, name))
			return &w->f[i];
	return NULL;
}

/* The durable state of d becomes what it is now (its fsync or a commit). */
static void make_durable(world *w, durable *d)
{
	d->present = d->in != NULL;
	if (d->in && !d->isdir) {
		d->size = d->in->size;
		d->hash = tl_tree_extents_hash(w->fs, d->in);
	}
}

/* Cut the power now: replay and compare with the durable names. */
static void cut(world *w)
{
	tl_image im;
	CHECK_EQ(treelog_replay(w->tl, w->root, &im), 0);
	w->cuts++;
	w->replayed_cuts += im.replayed;
	for (int i = 0; i < w->nf; i++) {
		durable *d = &w->f[i];
		/* the name: an entry in its directory pointing at its ino */
		int found = 0;
		uint64_t ino = 0;
		for (int k = 0; k < im.ndents; k++) {
			if (im.dents[k].dir != d->dir)
				continue;
			if (im.dents[k].namehash == items_name_hash(d->name, (uint32_t)strlen(d->name))) {
				found = 1;
				ino = im.dents[k].child;
			}
		}
		if (found != d->present)
			fprintf(stderr, "step %d: %s %s after the replay\n", w->step, d->name,
				found ? "present" : "missing");
		CHECK_EQ(found, d->present);
		if (!found || d->isdir)
			continue;
		const tl_img_inode *in = tl_image_inode(&im, ino);
		CHECK(in != NULL);
		if (!in)
			continue;
		if (in->size != d->size || tl_image_extents_hash(in) != d->hash)
			fprintf(stderr, "step %d: %s size %llu (durable %llu), %d extents\n", w->step,
				d->name, (unsigned long long)in->size, (unsigned long long)d->size, in->next);
		CHECK_EQ(in->size, d->size);
		CHECK_EQ(tl_image_extents_hash(in), d->hash);
	}
	/* every inode the mount finds has a name or is the top directory */
	for (int i = 0; i < im.ninodes; i++)
		CHECK(im.inodes[i].nlink > 0 || im.inodes[i].ino == BTRFS_FIRST_FREE_OBJECTID);
	/* the partial replay agrees with it on its scope: for the log's
	 * inodes alone, with the files of the sequence asked for (the
	 * directories above them come in as the names lead there), and with
	 * every name of the sequence */
	uint64_t want[NF];
	int nwant = 0, nfiles = 0;
	for (int i = 0; i < w->nf; i++)
		if (w->f[i].ino && !w->f[i].isdir)
			want[nwant++] = w->f[i].ino;
	nfiles = nwant;
	for (int i = 0; i < w->nf; i++)
		if (w->f[i].ino && w->f[i].isdir)
			want[nwant++] = w->f[i].ino;
	for (int pass = 0; pass < 3; pass++) {
		tl_image part;
		uint64_t where = 0;
		int n = pass == 0 ? 0 : pass == 1 ? nfiles : nwant;
		CHECK_EQ(treelog_replay_some(w->tl, w->root, want, n, &part), 0);
		int agree = tl_image_agree(&im, &part, &where);
		if (!agree)
			fprintf(stderr, "step %d: partial replay differs at inode %llu\n", w->step,
				(unsigned long long)where);
		CHECK(agree);
		CHECK_EQ(part.replayed, im.replayed);
		/* what was asked for is in its scope, and so are the
		 * directories above (here: the top one, once anything is) */
		for (int i = 0; i < n; i++) {
			int in = 0;
			for (int k = 0; k < part.nscope; k++)
				in |= part.scope[k] == want[i];
			CHECK(in);
		}
		tl_image_free(&part);
	}
	tl_image_free(&im);
}

/* fsync(2) on t, to the end: the data, then the log (with parent: the
 * parent directory logged too). */
static int do_fsync_parent(world *w, task *t, struct inode *in, struct inode *parent, tl_fsync *f)
{
	if ((in->mode & S_IFMT_) == S_IFREG_) {
		int r = vio_fsync(w->fs, t, in);
		if (r)
			return r < 0 ? r : LAB_ESTATE;
	}
	CHECK_EQ(treelog_fsync_init_parent(f, w->root, in, 0, parent), 0);
	int r;
	do
		r = treelog_fsync_step(w->tl, t, f);
	while (r == TASK_RUN);
	if (r == TASK_BLOCKED)
		return LAB_ESTATE; /* one task: nothing to wait for */
	return r < 0 ? r : f->error;
}

static int do_fsync(world *w, task *t, struct inode *in, tl_fsync *f)
{
	return do_fsync_parent(w, t, in, NULL, f);
}

static durable *add(world *w, const char *name, uint64_t dir, struct inode *in, int isdir)
{
	durable *d = &w->f[w->nf++];
	memset(d, 0, sizeof(*d));
	d->name = name;
	d->dir = dir;
	d->in = in;
	d->ino = in ? in->ino : 0;
	d->isdir = isdir;
	return d;
}

/* The sequence, one step per call (the power is cut after each). */
static int script_step(sim *s, task *t)
{
	world *w = t->ctx;
	const uint64_t top = BTRFS_FIRST_FREE_OBJECTID;
	struct inode *in = NULL;
	tl_fsync f;
	int r = 0;
	(void)s;
	durable *d;
	switch (w->step) {
	case 0: /* create a, 10 KiB, fsync(a): a is whole after a cut */
		r = vfs_create(w->fs, t, w->root, top, "a", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 10000);
		add(w, "a", top, in, 0);
		break;
	case 1:
		r = do_fsync(w, t, find(w, "a")->in, &f);
		make_durable(w, find(w, "a"));
		break;
	case 2: /* b written, never fsynced: gone after a cut */
		r = vfs_create(w->fs, t, w->root, top, "b", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 50000);
		add(w, "b", top, in, 0);
		break;
	case 3: /* a new directory, fsynced, and a file in it */
		r = vfs_mkdir(w->fs, t, w->root, top, "d", &in);
		d = add(w, "d", top, in, 1);
		if (!r)
			r = do_fsync(w, t, in, &f);
		make_durable(w, d);
		break;
	case 4:
		r = vfs_create(w->fs, t, w->root, find(w, "d")->in->ino, "c", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 300000);
		add(w, "c", find(w, "d")->in->ino, in, 0);
		break;
	case 5:
		r = do_fsync(w, t, find(w, "c")->in, &f);
		make_durable(w, find(w, "c"));
		break;
	case 6: /* more data in c, not fsynced: c stays as fsynced */
		r = vio_write(w->fs, t, find(w, "c")->in, 300000, 100000);
		if (!r)
			r = vio_fsync(w->fs, t, find(w, "c")->in); /* on disk, not logged */
		break;
	case 7: /* ... now fsynced (the fast path) */
		r = do_fsync(w, t, find(w, "c")->in, &f);
		make_durable(w, find(w, "c"));
		break;
	case 8: /* unlink a: it stays until the directory is fsynced */
		r = vfs_unlink(w->fs, t, w->root, top, "a");
		find(w, "a")->in = NULL;
		break;
	case 9:
		r = do_fsync(w, t, fs_inode_get(w->root, top), &f);
		/* the directory's log drops a; b, never logged, stays out */
		make_durable(w, find(w, "a"));
		break;
	case 10: /* truncate c and fsync it: the log holds the short file */
		r = vio_truncate(w->fs, t, find(w, "c")->in, 5000);
		if (!r)
			r = do_fsync(w, t, find(w, "c")->in, &f);
		make_durable(w, find(w, "c"));
		break;
	case 11: /* a commit: everything as it is now, the log freed */
		r = vio_sync(w->fs, t);
		if (!r)
			r = fs_commit(w->fs, t);
		for (int i = 0; i < w->nf; i++)
			make_durable(w, &w->f[i]);
		CHECK(treelog_root(w->tl, 5)->log.root == NULL);
		break;
	case 12: /* after the commit: e fsynced, b unlinked without fsync */
		r = vfs_create(w->fs, t, w->root, top, "e", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 20000);
		d = add(w, "e", top, in, 0);
		if (!r)
			r = do_fsync(w, t, in, &f);
		make_durable(w, d);
		if (!r)
			r = vfs_unlink(w->fs, t, w->root, top, "b");
		find(w, "b")->in = NULL;
		break;
	case 13: /* c written again and fsynced after the commit */
		r = vio_write(w->fs, t, find(w, "c")->in, 0, 70000);
		if (!r)
			r = do_fsync(w, t, find(w, "c")->in, &f);
		make_durable(w, find(w, "c"));
		break;
	case 14: /* the directory fsynced: b's committed name goes at replay
		  * (replay_dir_deletes over the logged range) */
		r = do_fsync(w, t, fs_inode_get(w->root, top), &f);
		make_durable(w, find(w, "b"));
		break;
	case 15: /* new directories p/q, p/r and s, a file s/h: none logged */
		r = vfs_mkdir(w->fs, t, w->root, top, "p", &in);
		add(w, "p", top, in, 1);
		if (!r)
			r = vfs_mkdir(w->fs, t, w->root, find(w, "p")->in->ino, "q", &in);
		if (!r)
			add(w, "q", find(w, "p")->in->ino, in, 1);
		if (!r)
			r = vfs_mkdir(w->fs, t, w->root, find(w, "p")->in->ino, "r", &in);
		if (!r)
			add(w, "r", find(w, "p")->in->ino, in, 1);
		if (!r)
			r = vfs_mkdir(w->fs, t, w->root, top, "s", &in);
		if (!r)
			add(w, "s", top, in, 1);
		if (!r)
			r = vfs_create(w->fs, t, w->root, find(w, "s")->in->ino, "h", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 8000);
		if (!r)
			add(w, "h", find(w, "s")->in->ino, in, 0);
		break;
	case 16: /* fsync(q): p, made in this transaction above it, is logged
		  * with its name (log_all_new_ancestors) and comes back with
		  * q; r and s, logged by nobody, do not */
		r = do_fsync(w, t, find(w, "q")->in, &f);
		make_durable(w, find(w, "q"));
		make_durable(w, find(w, "p"));
		break;
	case 17: /* fsync(h): its new directory s comes back with it */
		r = do_fsync(w, t, find(w, "h")->in, &f);
		make_durable(w, find(w, "h"));
		make_durable(w, find(w, "s"));
		break;
	case 18: /* x/y made and committed */
		r = vfs_mkdir(w->fs, t, w->root, top, "x", &in);
		add(w, "x", top, in, 1);
		if (!r)
			r = vfs_create(w->fs, t, w->root, find(w, "x")->in->ino, "y", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 6000);
		if (!r)
			add(w, "y", find(w, "x")->in->ino, in, 0);
		if (!r)
			r = vio_sync(w->fs, t);
		if (!r)
			r = fs_commit(w->fs, t);
		for (int i = 0; i < w->nf; i++)
			make_durable(w, &w->f[i]);
		break;
	case 19: /* y unlinked, x removed, the top directory fsynced: its
		  * logged range drops x, and y's committed name goes with x
		  * (the link counts' cascade) */
		r = vfs_unlink(w->fs, t, w->root, find(w, "x")->in->ino, "y");
		find(w, "y")->in = NULL;
		if (!r)
			r = vfs_rmdir(w->fs, t, w->root, top, "x");
		find(w, "x")->in = NULL;
		if (!r)
			r = do_fsync(w, t, fs_inode_get(w->root, top), &f);
		make_durable(w, find(w, "x"));
		make_durable(w, find(w, "y"));
		break;
	case 20: /* a new directory u, a file v in it, fsync(v) logging u as
		  * its parent: u is logged with its name (the parent pass
		  * copies its ref), so v has a path after a cut */
		r = vfs_mkdir(w->fs, t, w->root, top, "u", &in);
		add(w, "u", top, in, 1);
		if (!r)
			r = vfs_create(w->fs, t, w->root, find(w, "u")->in->ino, "v", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 9000);
		if (!r)
			add(w, "v", find(w, "u")->in->ino, in, 0);
		if (!r)
			r = do_fsync_parent(w, t, in, find(w, "u")->in, &f);
		make_durable(w, find(w, "u"));
		make_durable(w, find(w, "v"));
		break;
	case 21: /* u renamed into a new directory wd as u2: until the log is
		  * synced again a cut finds the old name */
		r = vfs_mkdir(w->fs, t, w->root, top, "wd", &in);
		add(w, "wd", top, in, 1);
		if (!r)
			r = vfs_rename(w->fs, t, w->root, top, "u", find(w, "wd")->in->ino, "u2");
		if (!r)
			add(w, "u2", find(w, "wd")->in->ino, find(w, "u")->in, 1);
		find(w, "u")->in = NULL;
		break;
	case 22: /* another file's fsync syncs the log: u's new name went
		  * into it at the rename (btrfs_log_new_name) with wd, made
		  * in this transaction above it; v keeps its path */
		r = vfs_create(w->fs, t, w->root, top, "z", 0644, &in);
		d = add(w, "z", top, in, 0);
		if (!r)
			r = do_fsync(w, t, in, &f);
		make_durable(w, d);
		make_durable(w, find(w, "u"));
		make_durable(w, find(w, "u2"));
		make_durable(w, find(w, "wd"));
		break;
	case 23: /* m/n made and committed */
		r = vfs_mkdir(w->fs, t, w->root, top, "m", &in);
		add(w, "m", top, in, 1);
		if (!r)
			r = vfs_create(w->fs, t, w->root, find(w, "m")->in->ino, "n", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 7000);
		if (!r)
			add(w, "n", find(w, "m")->in->ino, in, 0);
		if (!r)
			r = vio_sync(w->fs, t);
		if (!r)
			r = fs_commit(w->fs, t);
		for (int i = 0; i < w->nf; i++)
			make_durable(w, &w->f[i]);
		break;
	case 24: /* k made in the top directory and fsynced with it as its
		  * parent: the top directory is logged in this transaction */
		r = vfs_create(w->fs, t, w->root, top, "k", 0644, &in);
		d = add(w, "k", top, in, 0);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 3000);
		if (!r)
			r = do_fsync_parent(w, t, in, fs_inode_get(w->root, top), &f);
		make_durable(w, d);
		break;
	case 25: /* m, not logged, renamed out of the logged top directory
		  * into wd as m2: its name leaves the top directory's log, and
		  * its new one goes in at the rename (btrfs_log_new_name logs
		  * an inode whose old directory was logged) */
		r = vfs_rename(w->fs, t, w->root, top, "m", find(w, "wd")->in->ino, "m2");
		if (!r)
			add(w, "m2", find(w, "wd")->in->ino, find(w, "m")->in, 1);
		find(w, "m")->in = NULL;
		break;
	case 26: /* another file's fsync syncs the log: m2 and the committed
		  * file n below it are there after a cut (fuzz finding
		  * torture-rename-ancestor-1: the replay removed m from the
		  * top directory, n with it) */
		r = vfs_create(w->fs, t, w->root, top, "z2", 0644, &in);
		d = add(w, "z2", top, in, 0);
		if (!r)
			r = do_fsync(w, t, in, &f);
		make_durable(w, d);
		make_durable(w, find(w, "m"));
		make_durable(w, find(w, "m2"));
		break;
	case 27: /* g, two extents with a gap, committed */
		r = vfs_create(w->fs, t, w->root, top, "g", 0644, &in);
		if (!r)
			r = vio_write(w->fs, t, in, 0, 8192);
		if (!r)
			r = vio_write(w->fs, t, in, 16384, 8192);
		if (!r)
			add(w, "g", top, in, 0);
		if (!r)
			r = vio_sync(w->fs, t);
		if (!r)
			r = fs_commit(w->fs, t);
		for (int i = 0; i < w->nf; i++)
			make_durable(w, &w->f[i]);
		break;
	case 28: /* g truncated into its first extent (btrfs_setsize: the
		  * next fsync is a full one) and fsynced: its committed
		  * second extent is past the logged size */
		in = find(w, "g")->in;
		r = vio_truncate(w->fs, t, in, 4000);
		if (!r) {
			in->flags |= INODE_NEEDS_FULL_SYNC;
			r = fs_inode_update(w->fs, t, in);
		}
		if (!r)
			r = do_fsync(w, t, in, &f);
		CHECK(f.rec.full);
		make_durable(w, find(w, "g"));
		break;
	case 29: /* g grown by a write past the old second extent, fsynced
		  * (the fast path): the gap from the old EOF is a hole in
		  * the log (btrfs_cont_expand's hole map, logged by
		  * log_one_extent), so the replay does not bring the
		  * truncated extent back into it (fuzz finding
		  * torture-fast-fsync-hole-1: it did) */
		in = find(w, "g")->in;
		r = vio_write(w->fs, t, in, 28672, 5000);
		if (!r)
			r = do_fsync(w, t, in, &f);
		CHECK(!f.rec.full && !f.rec.skipped);
		make_durable(w, find(w, "g"));
		break;
	case 30: /* g truncated down again and up past the old second
		  * extent, fsynced (full: the hole to EOF logged) */
		in = find(w, "g")->in;
		r = vio_truncate(w->fs, t, in, 4000);
		if (!r)
			r = vio_truncate(w->fs, t, in, 40000);
		if (!r) {
			in->flags |= INODE_NEEDS_FULL_SYNC;
			r = fs_inode_update(w->fs, t, in);
		}
		if (!r)
			r = do_fsync(w, t, in, &f);
		CHECK(f.rec.full);
		make_durable(w, find(w, "g"));
		break;
	case 31: /* g's first block rewritten, fsynced (fast): the hole to
		  * EOF stays in the log (the kernel keeps the extents logged
		  * before; this fast path drops them and logs the hole
		  * again), so the committed second extent stays out */
		in = find(w, "g")->in;
		r = vio_write(w->fs, t, in, 0, 100);
		if (!r)
			r = do_fsync(w, t, in, &f);
		CHECK(!f.rec.full && !f.rec.skipped);
		CHECK_EQ(in->size, 40000);
		make_durable(w, find(w, "g"));
		break;
	default:
		return TASK_DONE;
	}
	if (r) {
		fprintf(stderr, "step %d failed: %d\n", w->step, r);
		w->err = r;
		return TASK_DONE;
	}
	cut(w);
	w->step++;
	return TASK_RUN;
}

static void run_sequence(int prealloc)
{
	world w;
	memset(&w, 0, sizeof(w));
	w.prealloc = prealloc;
	w.s = sim_create(7, 0);
	CHECK_EQ(bdev_create(w.s, "ideal", &w.dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.keep_commit_roots = 1;
	patch_set(&o.patches, P_001_PREALLOC_SCRATCH_EB, prealloc);
	CHECK_EQ(fs_mount(w.s, w.dev, &o, &w.fs), 0);
	w.root = fs_root_lookup(w.fs, BTRFS_FS_TREE_OBJECTID);
	CHECK_EQ(vio_attach(w.fs, NULL, NULL), 0);
	CHECK_EQ(ebmem_create(w.s, NULL, &w.mem), 0);
	treelog_cfg tc;
	treelog_cfg_default(&tc);
	tc.keep_synced = 1;
	CHECK_EQ(treelog_create(w.s, w.dev, w.mem, &tc, &w.tl), 0);
	CHECK_EQ(treelog_attach(w.tl, w.fs), 0);
	/* a cut before anything: the empty file system */
	cut(&w);
	task_spawn(w.s, "script", script_step, &w, 0);
	CHECK(sim_run(w.s, 10000000, SIMTIME_MAX));
	CHECK_EQ(w.err, 0);
	CHECK_EQ(w.step, 32);
	CHECK_EQ(w.cuts, 33);
	/* most cuts found a synced log to replay */
	CHECK(w.replayed_cuts >= 9);
	treelog_destroy(w.tl);
	ebmem_destroy(w.mem);
	vio_detach(w.fs);
	fs_unmount(w.fs);
	bdev_destroy(w.dev);
	sim_destroy(w.s);
}

/* The replay needs what a power cut leaves: refused without it. */
static void test_needs_state(void)
{
	sim *s = sim_create(1, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	ebmem *mem;
	CHECK_EQ(ebmem_create(s, NULL, &mem), 0);
	treelog *tl;
	CHECK_EQ(treelog_create(s, NULL, mem, NULL, &tl), 0);
	tl_image im;
	CHECK_EQ(treelog_replay(tl, fs_root_lookup(fs, 5), &im), LAB_ESTATE);
	CHECK_EQ(treelog_replay(NULL, fs_root_lookup(fs, 5), &im), LAB_EINVAL);
	treelog_destroy(tl);
	ebmem_destroy(mem);
	fs_unmount(fs);
	sim_destroy(s);
}

int main(void)
{
	test_needs_state();
	run_sequence(0);
	run_sequence(1);
	T_DONE();
}
