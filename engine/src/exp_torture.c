/*
 * exp_torture.c - the `torture` experiment: a seeded random mix of file
 * system operations on the metadata core, with the full invariant checker
 * after every commit (check_failures must stay 0 for any seed).
 *
 * One simulated task performs one operation per step. Data operations act
 * on the trees directly, as ordered-extent completion would: a write
 * allocates a data extent and inserts its file extent item, extent ref and
 * checksums (or an inline extent for a small write at offset 0); truncate
 * drops file extent items; lseek walks them; fsync falls back to a full
 * transaction commit (the log tree is not used here); sync commits.
 * Every operation runs inside a transaction handle (trans.c) and commits
 * go through trans_commit (delayed refs, then the tree commit), so the
 * checker also watches the transaction and delayed-ref code.
 * mix=all adds snapshots (a root copy sharing every block), snapshot
 * deletion (a whole-tree free that stops at shared blocks) and remount
 * (a commit followed by dropping the commit roots' readers: here, a commit).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "trans.h"
#include "vfs.h"

static const char *const mix_values[] = { "files", "all", NULL };

static const param_desc torture_params[] = {
	{ "ops", PT_INT, 20000, 1, 2000000, 0, NULL, "ops", "operations to run" },
	{ "subvols", PT_INT, 4, 1, 64, 0, NULL, "subvolumes",
	  "subvolumes the operations spread over (the top-level one included)" },
	{ "mix", PT_ENUM, 0, 0, 0, 0, mix_values, NULL,
	  "files: create/mkdir/rename/unlink/stat/write/truncate/lseek/fsync/sync; "
	  "all: plus snapshot, snapshot delete and remount (remount = a commit here; "
	  "fsync = a full commit, the log tree is not used)" },
};

static const metric_desc torture_metrics[] = {
	{ "ops", "count", "operations performed" },
	{ "commits", "count", "transaction commits (each followed by the full check)" },
	{ "fsyncs", "count", "fsync calls" },
	{ "check_failures", "count", "invariant violations found (must be 0)" },
	{ "max_tree_height", "levels", "tallest tree seen at any commit" },
};

typedef struct tent {       /* a live name */
	int sv;              /* subvolume index */
	uint64_t dir, ino;
	uint32_t name;       /* name is "n<name>" */
	int is_dir;
} tent;

typedef struct tort {
	fs_info *fs;
	trans_mgr tm;        /* transactions: every op runs inside a handle */
	int tm_ready;
	struct btrfs_root *sv[64];
	int nsv;
	struct btrfs_root *snaps[16];
	int nsnaps;
	tent *ents;
	int nents, cap;
	uint32_t next_name;
	uint64_t ops, target, commits, fsyncs, failures, errors;
	int max_height;
	int mix_all;
	prng rng;
	char first_error[200];
} tort;

static void tname(char *buf, uint32_t n)
{
	snprintf(buf, 16, "n%u", n);
}

static void note_error(tort *c, const char *what, int rc)
{
	c->errors++;
	c->failures++;
	if (!c->first_error[0])
		snprintf(c->first_error, sizeof c->first_error, "%s: %s", what, lab_strerror(rc));
}

/* Commit the running transaction through trans.c (delayed refs, then the
 * tree commit) and run the full checker. */
static void t_commit(tort *c, task *t, trans_handle *h)
{
	int rc = trans_commit(h, TCOMMIT_EXPLICIT);
	if (rc) {
		note_error(c, "commit", rc == TRANS_WAIT ? LAB_ESTATE : rc);
		return;
	}
	c->commits++;
	int height = fs_tree_height_max(c->fs);
	if (height > c->max_height)
		c->max_height = height;
	int f = check_fs(c->fs);
	if (f > 0) {
		c->failures += (uint64_t)f;
		if (!c->first_error[0])
			snprintf(c->first_error, sizeof c->first_error, "check: %s",
				 check_last_error(c->fs));
	}
}

static int ents_add(tort *c, const tent *e)
{
	if (c->nents == c->cap) {
		int cap = c->cap ? c->cap * 2 : 256;
		tent *n = realloc(c->ents, (size_t)cap * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		c->ents = n;
		c->cap = cap;
	}
	c->ents[c->nents++] = *e;
	return 0;
}

static void ents_del(tort *c, int i)
{
	c->ents[i] = c->ents[--c->nents];
}

/* A random entry of the wanted kind (-1: any), or -1. */
static int pick(tort *c, int want_dir)
{
	if (!c->nents)
		return -1;
	for (int tries = 0; tries < 8; tries++) {
		int i = (int)prng_below(&c->rng, (uint64_t)c->nents);
		if (want_dir < 0 || c->ents[i].is_dir == want_dir)
			return i;
	}
	return -1;
}

/* A random directory of subvolume sv (its root dir or a mkdir'ed one). */
static uint64_t pick_dir(tort *c, int sv)
{
	for (int tries = 0; tries < 4; tries++) {
		int i = pick(c, 1);
		if (i >= 0 && c->ents[i].sv == sv)
			return c->ents[i].ino;
	}
	return BTRFS_FIRST_FREE_OBJECTID;
}

static void op_create(tort *c, task *t, int is_dir)
{
	int sv = (int)prng_below(&c->rng, (uint64_t)c->nsv);
	uint64_t dir = pick_dir(c, sv);
	char name[16];
	uint32_t n = c->next_name++;
	tname(name, n);
	struct inode *in;
	int rc = is_dir ? vfs_mkdir(c->fs, t, c->sv[sv], dir, name, &in)
			: vfs_create(c->fs, t, c->sv[sv], dir, name, 0644, &in);
	if (rc) {
		note_error(c, is_dir ? "mkdir" : "create", rc);
		return;
	}
	tent e = { sv, dir, in->ino, n, is_dir };
	if (ents_add(c, &e))
		note_error(c, "ents", LAB_ENOMEM);
}

static void op_write(tort *c, task *t)
{
	int i = pick(c, 0);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	struct inode *in = fs_inode_get(c->sv[e->sv], e->ino);
	if (!in)
		return note_error(c, "write: inode", LAB_EENGINE);
	fs_info *fs = c->fs;
	int rc;
	if (in->size == 0 && prng_below(&c->rng, 3) == 0) {
		/* a small file: stored inline */
		uint64_t len = 1 + prng_below(&c->rng, fs->opts.max_inline);
		rc = fs_file_extent_insert_inline(fs, t, in, len);
		if (!rc) {
			in->size = len;
			rc = fs_inode_update(fs, t, in);
		}
		if (rc)
			note_error(c, "write inline", rc);
		return;
	}
	uint64_t off = prng_below(&c->rng, 256) * SECTORSIZE;
	uint64_t len = (1 + prng_below(&c->rng, 16)) * SECTORSIZE;
	fe_info fe;
	if (fs_file_extent_lookup(fs, t, in, 0, &fe) == 0 && fe.type == FE_INLINE) {
		/* growing past an inline extent turns it into a regular one */
		uint64_t b;
		rc = alloc_extent(&fs->alloc, ALLOC_DATA, SECTORSIZE, &b);
		if (!rc)
			rc = fs_file_extent_insert(fs, t, in, 0, SECTORSIZE, b, SECTORSIZE, FE_REG);
		if (rc)
			return note_error(c, "write uninline", rc);
	}
	uint64_t b;
	rc = alloc_extent(&fs->alloc, ALLOC_DATA, len, &b);
	if (!rc)
		rc = fs_file_extent_insert(fs, t, in, off, len, b, len,
					   prng_below(&c->rng, 10) ? FE_REG : FE_PREALLOC);
	if (!rc) {
		if (off + len > in->size)
			in->size = off + len;
		rc = fs_inode_update(fs, t, in);
	}
	if (rc)
		note_error(c, "write", rc);
}

static void op_truncate(tort *c, task *t)
{
	int i = pick(c, 0);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	struct inode *in = fs_inode_get(c->sv[e->sv], e->ino);
	if (!in)
		return note_error(c, "truncate: inode", LAB_EENGINE);
	uint64_t ns = in->size ? prng_below(&c->rng, in->size + 1) : 0;
	uint64_t from = (ns + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
	int rc = fs_drop_extents(c->fs, t, in, from, UINT64_MAX, NULL);
	fe_info fe;
	if (!rc && ns < SECTORSIZE && fs_file_extent_lookup(c->fs, t, in, 0, &fe) == 0 &&
	    fe.type == FE_INLINE && ns < fe.num_bytes)
		rc = fs_drop_extents(c->fs, t, in, ns, SECTORSIZE, NULL);
	if (!rc) {
		in->size = ns;
		in->flags |= INODE_NEEDS_FULL_SYNC;
		rc = fs_inode_update(c->fs, t, in);
	}
	if (rc)
		note_error(c, "truncate", rc);
}

static void op_lseek(tort *c, task *t)
{
	int i = pick(c, 0);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	struct inode *in = fs_inode_get(c->sv[e->sv], e->ino);
	if (!in)
		return note_error(c, "lseek: inode", LAB_EENGINE);
	fe_iter it;
	fe_info fe;
	uint64_t off = in->size ? prng_below(&c->rng, in->size) : 0, last = 0;
	int rc = fe_iter_first(c->fs, t, in, off, &it, &fe);
	int first = 1;
	while (rc == 0) {
		if (!first && fe.file_off < last)
			note_error(c, "lseek order", LAB_EENGINE);
		first = 0;
		last = fe.file_off + fe.num_bytes;
		if (fe.type == FE_REG)
			break; /* SEEK_DATA found data */
		rc = fe_iter_next(c->fs, &it, &fe);
	}
	fe_iter_end(&it);
	if (rc < 0)
		note_error(c, "lseek", rc);
}

static void op_rename(tort *c, task *t)
{
	int i = pick(c, -1);
	if (i < 0)
		return;
	tent *e = &c->ents[i];
	uint64_t nd = pick_dir(c, e->sv);
	char on[16], nn[16];
	tname(on, e->name);
	uint32_t n = c->next_name++;
	tname(nn, n);
	int rc = vfs_rename(c->fs, t, c->sv[e->sv], e->dir, on, nd, nn);
	if (rc == LAB_EINVAL && e->is_dir)
		return; /* moving a directory below itself: refused, as it should be */
	if (rc)
		return note_error(c, "rename", rc);
	e->dir = nd;
	e->name = n;
}

static void op_unlink(tort *c, task *t)
{
	int i = pick(c, -1);
	if (i < 0)
		return;
	tent e = c->ents[i];
	char name[16];
	tname(name, e.name);
	if (e.is_dir) {
		struct inode *d = fs_inode_get(c->sv[e.sv], e.ino);
		if (!d || d->nentries)
			return; /* only empty directories go */
		int rc = vfs_rmdir(c->fs, t, c->sv[e.sv], e.dir, name);
		if (rc)
			return note_error(c, "rmdir", rc);
	} else {
		int rc = vfs_unlink(c->fs, t, c->sv[e.sv], e.dir, name);
		if (rc)
			return note_error(c, "unlink", rc);
	}
	ents_del(c, i);
}

static void op_stat(tort *c, task *t)
{
	int i = pick(c, -1);
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
		struct inode *in = fs_inode_get(c->sv[e->sv], ino);
		if (!in || st.size != in->size || st.nbytes != in->nbytes)
			rc = LAB_EENGINE;
	}
	if (rc)
		note_error(c, "stat", rc);
}

static void op_snapshot(tort *c, task *t)
{
	if (c->nsnaps == 16)
		return;
	int sv = (int)prng_below(&c->rng, (uint64_t)c->nsv);
	struct btrfs_root *snap;
	int rc = fs_root_create(c->fs, t, fs_root_next_id(c->fs), &snap);
	if (!rc)
		rc = bt_copy_root(&c->sv[sv]->tree, &snap->tree, t);
	if (rc)
		return note_error(c, "snapshot", rc);
	c->sv[sv]->last_snapshot = c->fs->transid;
	c->snaps[c->nsnaps++] = snap;
}

static void op_snap_delete(tort *c, task *t)
{
	if (!c->nsnaps)
		return;
	int i = (int)prng_below(&c->rng, (uint64_t)c->nsnaps);
	struct btrfs_root *snap = c->snaps[i];
	c->snaps[i] = c->snaps[--c->nsnaps];
	bt_free_tree(&snap->tree, t);
	snap->deleted = 1;
	bt_key k = bt_mkkey(snap->id, BTRFS_ROOT_ITEM_KEY, 0);
	int rc = bt_delete(&c->fs->root_tree, t, &k);
	fs_root_forget(c->fs, snap);
	if (rc)
		note_error(c, "snapshot delete", rc < 0 ? rc : LAB_EENGINE);
}

static int torture_step(sim *s, task *t)
{
	tort *c = t->ctx;
	(void)s;
	trans_handle h;
	int rc = trans_start(&c->tm, t, &h);
	if (rc) {
		/* one task: nothing else can hold a commit open */
		note_error(c, "trans_start", rc == TRANS_WAIT ? LAB_ESTATE : rc);
		return TASK_DONE;
	}
	if (c->ops >= c->target) {
		t_commit(c, t, &h);
		return TASK_DONE;
	}
	int committed = 0;
	uint64_t x = prng_below(&c->rng, 1000);
	if (x < 220)
		op_create(c, t, 0);
	else if (x < 270)
		op_create(c, t, 1);
	else if (x < 470)
		op_write(c, t);
	else if (x < 550)
		op_truncate(c, t);
	else if (x < 630)
		op_lseek(c, t);
	else if (x < 710)
		op_rename(c, t);
	else if (x < 820)
		op_unlink(c, t);
	else if (x < 900)
		op_stat(c, t);
	else if (x < 915) {
		c->fsyncs++;
		t_commit(c, t, &h);
		committed = 1;
	} else if (x < 920) {
		t_commit(c, t, &h);
		committed = 1;
	} else if (c->mix_all && x < 930)
		op_snapshot(c, t);
	else if (c->mix_all && x < 938)
		op_snap_delete(c, t);
	else if (c->mix_all && x < 940) {
		t_commit(c, t, &h); /* remount */
		committed = 1;
	} else if (x < 970)
		op_create(c, t, 0);
	else
		op_write(c, t);
	if (!committed) {
		rc = trans_end(&h, 0);
		if (rc)
			note_error(c, "trans_end", rc);
	}
	c->ops++;
	return TASK_RUN;
}

static int torture_setup(struct lab_run *r)
{
	tort *c = calloc(1, sizeof(*c));
	if (!c)
		return LAB_ENOMEM;
	r->ctx = c;
	c->target = (uint64_t)exp_param(r, "ops");
	c->mix_all = exp_param_enum(r, "mix") == 1;
	prng_seed(&c->rng, r->seed ^ 0x746f727475726521ull);
	int rc = fs_mount(r->sim, NULL, NULL, &c->fs);
	if (rc)
		return exp_fail(r, rc, "mount failed");
	int nsv = (int)exp_param(r, "subvols");
	c->sv[0] = fs_root_lookup(c->fs, BTRFS_FS_TREE_OBJECTID);
	c->nsv = 1;
	for (int i = 1; i < nsv; i++) {
		char name[16];
		snprintf(name, sizeof name, "sv%d", i);
		rc = fs_create_subvol(c->fs, NULL, c->sv[0], BTRFS_FIRST_FREE_OBJECTID, name,
				      &c->sv[c->nsv]);
		if (rc)
			return exp_fail(r, rc, "subvolume create failed: %s", lab_strerror(rc));
		c->nsv++;
	}
	rc = trans_init(&c->tm, c->fs);
	if (rc)
		return exp_fail(r, rc, "transaction manager");
	c->tm_ready = 1;
	rc = trans_commit_now(&c->tm, NULL, TCOMMIT_EXPLICIT);
	if (rc)
		return exp_fail(r, rc, "initial commit failed");
	if (!task_spawn(r->sim, "torture", torture_step, c, 0))
		return LAB_ENOMEM;
	return 0;
}

static double torture_progress(struct lab_run *r)
{
	tort *c = r->ctx;
	return c->target ? (double)c->ops / (double)c->target : 1.0;
}

static int torture_collect(struct lab_run *r)
{
	tort *c = r->ctx;
	exp_metric(r, "ops", (double)c->ops);
	exp_metric(r, "commits", (double)c->commits);
	exp_metric(r, "fsyncs", (double)c->fsyncs);
	exp_metric(r, "check_failures", (double)c->failures);
	exp_metric(r, "max_tree_height", (double)c->max_height);
	return 0;
}

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
	js_key(out, "trees");
	js_arr(out);
	for (int i = 0; i < c->nsv; i++) {
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
	fs_info *fs = c->fs;
	const bt_tree *tr = NULL;
	if (!strcmp(what, "tree:fs"))
		tr = &c->sv[0]->tree;
	else if (!strcmp(what, "tree:extent"))
		tr = &fs->extent_tree;
	else if (!strcmp(what, "tree:csum"))
		tr = &fs->csum_tree;
	else if (!strcmp(what, "tree:root"))
		tr = &fs->root_tree;
	else if (!strncmp(what, "tree:", 5)) {
		char *end;
		unsigned long long id = strtoull(what + 5, &end, 10);
		struct btrfs_root *root = *end ? NULL : fs_root_lookup(fs, id);
		if (root && root->tree.root)
			tr = &root->tree;
	}
	if (!tr)
		return LAB_ENOENT;
	bt_snapshot_json(tr, out, 200);
	return 0;
}

static int torture_check(struct lab_run *r)
{
	tort *c = r->ctx;
	if (c->fs->nrefq) {
		/* run the queued refs so the extent tree is comparable */
		int rc = fs_run_refs(c->fs, NULL);
		if (rc)
			return rc;
	}
	return check_fs(c->fs);
}

static void torture_teardown(struct lab_run *r)
{
	tort *c = r->ctx;
	if (!c)
		return;
	if (c->tm_ready)
		trans_destroy(&c->tm);
	fs_unmount(c->fs);
	free(c->ents);
	free(c);
	r->ctx = NULL;
}

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
	.setup = torture_setup,
	.progress = torture_progress,
	.collect = torture_collect,
	.details = torture_details,
	.snapshot = torture_snapshot,
	.check = torture_check,
	.teardown = torture_teardown,
};
