/* test_fs.c - metadata VFS operations and their items, subvolumes, the
 * inode table, commit bookkeeping, lock waits with tasks, and the torture
 * experiment over several seeds (check_failures must be 0). */
#include <stdlib.h>

#include "t.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"

static int count_cb(void *ctx, uint64_t child, uint64_t index)
{
	(void)child;
	(void)index;
	(*(int *)ctx)++;
	return 0;
}

static void test_vfs_ops(void)
{
	sim *s = sim_create(3, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	uint64_t items0;
	bt_count_blocks(&root->tree, NULL, NULL, &items0);
	struct inode *d, *f;
	CHECK_EQ(vfs_mkdir(fs, NULL, root, 256, "dir", &d), 0);
	CHECK_EQ(vfs_create(fs, NULL, root, d->ino, "file", 0644, &f), 0);
	CHECK(f->flags & INODE_NEEDS_FULL_SYNC);
	/* each create adds inode item, inode ref, dir item, dir index */
	uint64_t items;
	bt_count_blocks(&root->tree, NULL, NULL, &items);
	CHECK_EQ(items - items0, 8);
	CHECK_EQ(d->size, 2 * 4);
	CHECK_EQ(vfs_create(fs, NULL, root, d->ino, "file", 0644, NULL), LAB_EINVAL);
	CHECK_EQ(vfs_create(fs, NULL, root, 999, "x", 0644, NULL), LAB_ENOENT);
	CHECK_EQ(vfs_create(fs, NULL, root, f->ino, "x", 0644, NULL), LAB_EINVAL);
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "a/b", 0644, NULL), LAB_EINVAL);
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "", 0644, NULL), LAB_EINVAL);
	uint64_t ino;
	CHECK_EQ(vfs_lookup(fs, NULL, root, d->ino, "file", &ino), 0);
	CHECK_EQ(ino, f->ino);
	CHECK_EQ(vfs_lookup(fs, NULL, root, d->ino, "nope", &ino), LAB_ENOENT);
	vfs_stat_info st;
	CHECK_EQ(vfs_stat(fs, NULL, root, f->ino, &st), 0);
	CHECK_EQ(st.mode, S_IFREG_ | 0644);
	CHECK_EQ(vfs_rename(fs, NULL, root, d->ino, "file", 256, "moved"), 0);
	CHECK_EQ(vfs_lookup(fs, NULL, root, 256, "moved", &ino), 0);
	CHECK_EQ(vfs_lookup(fs, NULL, root, d->ino, "file", &ino), LAB_ENOENT);
	CHECK_EQ(vfs_rename(fs, NULL, root, 256, "dir", d->ino, "loop"), LAB_EINVAL);
	int n = 0;
	CHECK_EQ(vfs_readdir(fs, NULL, root, 256, count_cb, &n), 2);
	CHECK_EQ(n, 2);
	CHECK_EQ(vfs_rmdir(fs, NULL, root, 256, "dir"), 0);
	CHECK_EQ(vfs_unlink(fs, NULL, root, 256, "moved"), 0);
	CHECK_EQ(vfs_unlink(fs, NULL, root, 256, "moved"), LAB_ENOENT);
	bt_count_blocks(&root->tree, NULL, NULL, &items);
	CHECK_EQ(items, items0); /* orphan items came and went too */
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(fs_inode_get(root, 256)->size, 0);
	/* many names in one directory, including crc32c collisions if any */
	char name[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof name, "file-%d", i);
		CHECK_EQ(vfs_create(fs, NULL, root, 256, name, 0644, NULL), 0);
	}
	for (int i = 0; i < 5000; i += 2) {
		snprintf(name, sizeof name, "file-%d", i);
		CHECK_EQ(vfs_unlink(fs, NULL, root, 256, name), 0);
	}
	int miss = 0;
	for (int i = 1; i < 5000; i += 2) {
		snprintf(name, sizeof name, "file-%d", i);
		miss += vfs_lookup(fs, NULL, root, 256, name, &ino) != 0;
	}
	CHECK_EQ(miss, 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	/* subvolumes */
	struct btrfs_root *sv;
	CHECK_EQ(fs_create_subvol(fs, NULL, root, 256, "sub", &sv), 0);
	CHECK_EQ(fs_create_subvol(fs, NULL, root, 256, "sub", NULL), LAB_EINVAL);
	CHECK_EQ(vfs_create(fs, NULL, sv, 256, "inner", 0644, NULL), 0);
	CHECK_EQ(vfs_unlink(fs, NULL, root, 256, "sub"), LAB_EINVAL);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK(fs->commits >= 4);
	fs_unmount(fs);
	sim_destroy(s);
}

/* Two tasks creating in the same directory wait for each other's leaf
 * and directory locks: simulated time accounts for it. */
typedef struct tctx {
	fs_info *fs;
	int n, i, id;
} tctx;

static int creator(sim *s, task *t)
{
	(void)s;
	tctx *c = t->ctx;
	if (c->i == c->n)
		return TASK_DONE;
	char name[32];
	snprintf(name, sizeof name, "t%d-%d", c->id, c->i++);
	vfs_create(c->fs, t, fs_root_lookup(c->fs, 5), 256, name, 0644, NULL);
	return TASK_RUN;
}

static void test_tasks_and_locks(void)
{
	sim *s = sim_create(5, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	tctx a = { fs, 300, 0, 1 }, b = { fs, 300, 0, 2 };
	task *ta = task_spawn(s, "a", creator, &a, 0);
	task *tb = task_spawn(s, "b", creator, &b, 0);
	sim_run(s, UINT64_MAX, SIMTIME_MAX);
	CHECK(ta->cpu_ns > 300 * 1000);
	CHECK(ta->wait_ns + tb->wait_ns > 0); /* they contend on the dir lock */
	CHECK(fs->cpu_untasked_ns < ta->cpu_ns);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	fs_unmount(fs);
	sim_destroy(s);
}

static void run_torture(const char *params, uint64_t seed, double *failures, double *height)
{
	lab_run *r;
	char *err = NULL;
	int rc = lab_open("torture", "base", params, (uint32_t)seed, (uint32_t)(seed >> 32), &r, &err);
	CHECK_EQ(rc, 0);
	if (rc) {
		fprintf(stderr, "%s\n", err ? err : "");
		lab_free(err);
		return;
	}
	int done = 0;
	while (!done && lab_step(r, 100000, &done) == 0)
		;
	CHECK(done);
	char *json = NULL;
	CHECK_EQ(lab_result_json(r, &json), 0);
	const char *p = json ? strstr(json, "\"check_failures\":") : NULL;
	CHECK(p != NULL);
	*failures = p ? atof(p + strlen("\"check_failures\":")) : -1;
	p = json ? strstr(json, "\"max_tree_height\":") : NULL;
	*height = p ? atof(p + strlen("\"max_tree_height\":")) : -1;
	CHECK_EQ(lab_check(r), 0);
	lab_free(json);
	lab_close(r);
}

static void test_torture_seeds(void)
{
	for (uint64_t seed = 1; seed <= 6; seed++) {
		double f, h;
		run_torture(seed & 1 ? "ops=2000\nmix=all" : "ops=2000\nsubvols=2", seed, &f, &h);
		CHECK_EQ(f, 0);
		CHECK(h >= 1);
	}
	/* one bigger run: a single subvolume grows a taller tree */
	double f, h;
	run_torture("ops=8000\nsubvols=1\nmix=all", 99, &f, &h);
	CHECK_EQ(f, 0);
	printf("torture 8000 ops: height %.0f\n", h);
	/* bad parameters are refused */
	lab_run *r;
	char *err = NULL;
	CHECK(lab_open("torture", "base", "ops=0", 1, 0, &r, &err) < 0);
	lab_free(err);
	err = NULL;
	CHECK(lab_open("torture", "base", "mix=some", 1, 0, &r, &err) < 0);
	lab_free(err);
}

int main(void)
{
	test_vfs_ops();
	test_tasks_and_locks();
	test_torture_seeds();
	T_DONE();
}
