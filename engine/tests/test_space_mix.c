/* test_space_mix.c - space reservation under a random mix on a small
 * file system: several tasks create, write (4 KiB .. 4 MiB), overwrite,
 * rename over, unlink, fsync and commit through handles that reserve
 * items (trans_start_items) while space runs out and comes back. Every
 * task must finish (a reservation never leaves a task parked for good),
 * every error must be LAB_ENOSPC, and after a sync and a commit nothing is
 * reserved and the whole checker finds nothing. Several seeds. */
#include <stdlib.h>

#include "t.h"
#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "fs.h"
#include "lab.h"
#include "sim.h"
#include "space_fs.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_io.h"

#define MiB (1ull << 20)
#define NT 6
#define NAMES 24 /* names per task: f0 .. f23 */

struct env;

typedef struct mtask {
	struct env *e;
	int id, ops, op;       /* op: the operation in progress (-1: none) */
	int a, b;              /* its name arguments */
	uint64_t len;
	trans_handle h;
	int h_state;           /* commit: 0 start, 1 committing */
	int enospc, waits;
} mtask;

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	struct btrfs_root *root;
	prng rng;
	mtask m[NT];
	int running, synced, nops;
} env;

enum { OP_CREATE, OP_WRITE, OP_UNLINK, OP_RENAME, OP_FSYNC, OP_COMMIT, OP_N };

static struct inode *lookup(env *e, mtask *m, int n)
{
	char name[32];
	uint64_t ino;
	snprintf(name, sizeof name, "t%d-f%d", m->id, n);
	if (vfs_lookup(e->fs, NULL, e->root, 256, name, &ino))
		return NULL;
	return fs_inode_get(e->root, ino);
}

/* Count an operation's result: FS_SPACE_WAIT parks (1), LAB_ENOSPC is
 * fine, a missing name or an existing one is the mix's own doing. */
static int result(mtask *m, int rc)
{
	if (rc == FS_SPACE_WAIT || rc == TRANS_WAIT) {
		m->waits++;
		return 1;
	}
	if (rc == LAB_ENOSPC)
		m->enospc++;
	else if (rc != LAB_ENOENT && rc != LAB_EINVAL)
		CHECK_EQ(rc, 0);
	m->op = -1;
	m->ops++;
	return 0;
}

/* Every page the mix dirties went through vio_write, which reserves it:
 * each inode holds exactly its delalloc bytes of data between operations
 * (no write's reservation given back before its pages were dirtied). */
static void check_holdings(env *e)
{
	dfs *df = vio_dfs(e->fs);
	int bad = 0;
	dinode *const *in = dfs_inodes(df);
	for (int i = 0; i < df->ninodes; i++) {
		const dinode *d = in[i];
		if (!d->sp_gone && (d->sp_data_held != d->delalloc_bytes || d->sp_pending))
			bad++;
	}
	CHECK_EQ(bad, 0);
}

/* One operation (or the retry of the parked one). */
static int mix_step(sim *s, task *t)
{
	mtask *m = t->ctx;
	env *e = m->e;
	(void)s;
	if (m->op < 0) {
		if (m->ops >= e->nops) {
			e->running--;
			return TASK_DONE;
		}
		/* writes dominate, so the device fills up between unlinks */
		static const int table[] = {OP_CREATE, OP_CREATE, OP_WRITE, OP_WRITE, OP_WRITE,
					    OP_WRITE, OP_UNLINK, OP_RENAME, OP_FSYNC, OP_COMMIT};
		m->op = table[prng_below(&e->rng, sizeof table / sizeof table[0])];
		m->a = (int)prng_below(&e->rng, NAMES);
		m->b = (int)prng_below(&e->rng, NAMES);
		m->len = (1 + prng_below(&e->rng, 1024)) * 4096;
		m->h_state = 0;
	}
	char na[32], nb[32];
	snprintf(na, sizeof na, "t%d-f%d", m->id, m->a);
	snprintf(nb, sizeof nb, "t%d-f%d", m->id, m->b);
	int rc = 0;
	struct inode *in;
	switch (m->op) {
	case OP_CREATE:
		rc = vfs_create(e->fs, t, e->root, 256, na, 0644, NULL);
		break;
	case OP_WRITE:
		in = lookup(e, m, m->a);
		rc = in ? vio_write(e->fs, t, in, prng_below(&e->rng, 2) ? 0 : m->len / 2, m->len)
			: LAB_ENOENT;
		break;
	case OP_UNLINK:
		rc = vfs_unlink(e->fs, t, e->root, 256, na);
		break;
	case OP_RENAME:
		rc = vfs_rename(e->fs, t, e->root, 256, na, 256, nb);
		break;
	case OP_FSYNC:
		in = lookup(e, m, m->a);
		rc = in ? vio_fsync(e->fs, t, in) : LAB_ENOENT;
		if (rc == 1)
			return TASK_BLOCKED;
		break;
	case OP_COMMIT:
		/* a handle that reserves 2 items, then a commit */
		if (m->h_state == 0) {
			rc = trans_start_items(&e->tm, t, 2, &m->h);
			if (rc == TRANS_WAIT) {
				m->waits++;
				return TASK_BLOCKED;
			}
			if (rc)
				break;
			m->h_state = 1;
		}
		rc = trans_commit(&m->h, TCOMMIT_EXPLICIT);
		break;
	}
	check_holdings(e);
	return result(m, rc) ? TASK_BLOCKED : TASK_RUN;
}

/* After the tasks: sync the data and commit. */
static int sync_step(sim *s, task *t)
{
	env *e = t->ctx;
	(void)s;
	if (e->running) {
		task_wait_until(t, t->clock + NS_PER_MS);
		return TASK_RUN;
	}
	int rc = vio_sync(e->fs, t);
	if (rc == 1)
		return TASK_BLOCKED;
	CHECK_EQ(rc, 0);
	CHECK_EQ(trans_commit_now(&e->tm, t, TCOMMIT_EXPLICIT), 0);
	e->synced = 1;
	return TASK_DONE;
}

static void run_seed(uint64_t seed, uint64_t dev_bytes, int nops, int async, int *enospc_total,
		     uint64_t *tickets_total)
{
	env e;
	memset(&e, 0, sizeof e);
	e.s = sim_create(seed, 0);
	prng_seed(&e.rng, seed * 7919 + 1);
	CHECK_EQ(bdev_create(e.s, "nvme-dc", &e.dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.dev_bytes = dev_bytes;
	CHECK_EQ(fs_mount(e.s, e.dev, &o, &e.fs), 0);
	CHECK_EQ(trans_init(&e.tm, e.fs), 0);
	CHECK_EQ(vio_attach(e.fs, NULL, &e.tm), 0);
	CHECK_EQ(check_more_space(e.fs), 0);
	CHECK_EQ(check_more_handles(e.fs, &e.tm), 0);
	if (async)
		vio_dfs(e.fs)->sync_io = 0; /* bios complete at end_io */
	e.root = fs_root_lookup(e.fs, 5);
	e.nops = nops;
	for (int i = 0; i < NT; i++) {
		e.m[i].e = &e;
		e.m[i].id = i;
		e.m[i].op = -1;
		CHECK(task_spawn(e.s, "mix", mix_step, &e.m[i], 0) != NULL);
		e.running++;
	}
	CHECK(task_spawn(e.s, "sync", sync_step, &e, 0) != NULL);
	sim_run(e.s, 100000000, SIMTIME_MAX);
	CHECK_EQ(e.running, 0); /* nobody left parked */
	CHECK(e.synced);
	const space_ctl *sc = &e.fs->space;
	CHECK_EQ(sc->info[SPACE_DATA].bytes_may_use, 0);
	CHECK_EQ(sc->info[SPACE_META].bytes_may_use, 0);
	CHECK_EQ(check_fs(e.fs), 0);
	for (int i = 0; i < NT; i++)
		*enospc_total += e.m[i].enospc;
	*tickets_total += sc->info[SPACE_DATA].tickets_queued + sc->info[SPACE_META].tickets_queued;
	vio_detach(e.fs);
	trans_destroy(&e.tm);
	fs_unmount(e.fs);
	bdev_destroy(e.dev);
	sim_destroy(e.s);
}

int main(void)
{
	int enospc = 0;
	uint64_t tickets = 0;
	for (uint64_t seed = 1; seed <= 12; seed++)
		run_seed(seed, 64 * MiB, 150, 0, &enospc, &tickets);
	printf("mix on 64 MiB: 12 seeds x %d tasks x 150 ops: %llu tickets, %d ENOSPC\n", NT,
	       (unsigned long long)tickets, enospc);
	CHECK(tickets > 0);
	CHECK(enospc > 0);
	enospc = 0;
	tickets = 0;
	for (uint64_t seed = 1; seed <= 8; seed++)
		run_seed(seed, 64 * MiB, 150, 1, &enospc, &tickets);
	printf("mix on 64 MiB, asynchronous data path: 8 seeds: %llu tickets, %d ENOSPC\n",
	       (unsigned long long)tickets, enospc);
	CHECK(tickets > 0);
	T_DONE();
}
