/* test_send.c - the send stream of a small snapshot, receive on a second
 * file system, and patch 003's same-size truncate switch. */
#include <stdlib.h>

#include "check.h"
#include "check_more.h"
#include "items.h"
#include "lab.h"
#include "send.h"
#include "t.h"
#include "vfs.h"
#include "vfs_io.h"

typedef struct names {
	uint64_t ino[64];
	char name[64][32];
	int n;
} names;

static int name_of(void *ctx, uint64_t ino, uint64_t parent, char *buf, size_t len)
{
	names *nm = ctx;
	for (int i = 0; i < nm->n; i++)
		if (nm->ino[i] == ino) {
			snprintf(buf, len, "%s", nm->name[i]);
			return 0;
		}
	return LAB_ENOENT;
}

/* A source file of `size` bytes written back as one extent (or inline). */
static struct inode *src_file(fs_info *fs, struct btrfs_root *root, uint64_t dir,
			      const char *name, uint64_t size, names *nm)
{
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, root, dir, name, 0640, &in), 0);
	if (size && size < 4096 && size <= fs->opts.max_inline) {
		CHECK_EQ(fs_file_extent_insert_inline(fs, NULL, in, size), 0);
	} else if (size) {
		uint64_t len = (size + 4095) & ~4095ull, disk;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, len, &disk), 0);
		CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, len, disk, len, FE_REG), 0);
	}
	in->size = size;
	CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	nm->ino[nm->n] = in->ino;
	snprintf(nm->name[nm->n], 32, "%s", name);
	nm->n++;
	return in;
}

/* File extents of inode as [off, len] pairs; returns the count. */
static int file_extents(fs_info *fs, struct inode *in, uint64_t (*out)[2], int max)
{
	fe_iter it;
	fe_info fe;
	int n = 0;
	int r = fe_iter_first(fs, NULL, in, 0, &it, &fe);
	while (r == 0) {
		if (n < max) {
			out[n][0] = fe.file_off;
			out[n][1] = fe.num_bytes;
		}
		n++;
		r = fe_iter_next(fs, &it, &fe);
	}
	fe_iter_end(&it);
	return n;
}

typedef struct rx {
	recv_ctx *r;
	int recv_done, flushed, err;
	simtime_t recv_end;
} rx;

static int rx_step(sim *s, task *t)
{
	rx *x = t->ctx;
	if (!x->recv_done) {
		int rc = recv_step(x->r, t);
		if (rc < 0) {
			x->err = rc;
			return TASK_DONE;
		}
		if (rc == TASK_DONE) {
			x->recv_done = 1;
			x->recv_end = t->clock;
		}
		return TASK_RUN;
	}
	x->err = recv_flush(x->r, t);
	x->flushed = 1;
	return TASK_DONE;
}

typedef struct world {
	sim *s;
	bdev *sdev, *ddev;
	fs_info *src, *dst;
	struct btrfs_root *sroot, *droot, *snap;
	names nm;
	send_stream st;
	recv_ctx r;
	rx x;
	uint64_t dev_writes_recv;  /* device writes during the receive */
} world;

/* Source files with the given sizes in the top dir, plus dir "d" holding
 * one 100-byte file; send; receive with the 003 switch; flush. */
static void world_run(world *w, uint64_t seed, const uint64_t *sizes, int n,
		      int always_truncate, int skip, int with_c)
{
	memset(w, 0, sizeof(*w));
	w->s = sim_create(seed, 0);
	CHECK_EQ(bdev_create(w->s, "ideal", &w->sdev), 0);
	CHECK_EQ(bdev_create(w->s, "consumer-ssd", &w->ddev), 0);
	CHECK_EQ(fs_mount(w->s, w->sdev, NULL, &w->src), 0);
	CHECK_EQ(fs_mount(w->s, w->ddev, NULL, &w->dst), 0);
	w->sroot = fs_root_lookup(w->src, 5);
	w->droot = fs_root_lookup(w->dst, 5);
	struct inode *d;
	CHECK_EQ(vfs_mkdir(w->src, NULL, w->sroot, 256, "d", &d), 0);
	w->nm.ino[w->nm.n] = d->ino;
	snprintf(w->nm.name[w->nm.n++], 32, "d");
	for (int i = 0; i < n; i++) {
		char nbuf[32];
		snprintf(nbuf, sizeof(nbuf), "file_%d", i + 1);
		src_file(w->src, w->sroot, 256, nbuf, sizes[i], &w->nm);
	}
	if (with_c)
		src_file(w->src, w->sroot, d->ino, "c", 100, &w->nm);
	send_cfg sc;
	send_cfg_default(&sc);
	sc.always_truncate = always_truncate;
	/* a read-only snapshot (btrfs_copy_root), committed, is what is sent */
	struct btrfs_root *snap;
	CHECK_EQ(fs_root_create(w->src, NULL, fs_root_next_id(w->src), &snap), 0);
	CHECK_EQ(bt_copy_root(&w->sroot->tree, &snap->tree, NULL), 0);
	CHECK_EQ(fs_commit(w->src, NULL), 0);
	CHECK_EQ(send_build(w->src, NULL, snap, &sc, name_of, &w->nm, &w->st), 0);
	patch_set(&w->dst->opts.patches, P_003_TRUNC_SKIP_SAME_SIZE_WB, skip);
	CHECK_EQ(recv_init(&w->r, w->dst, w->droot, &w->st), 0);
	w->x.r = &w->r;
	uint64_t writes0 = bdev_get_stats(w->ddev)->writes;
	task_spawn(w->s, "receive", rx_step, &w->x, 0);
	/* run until the receive is done, count its writes, then the flush */
	while (!w->x.recv_done && !w->x.err)
		sim_run(w->s, 1, SIMTIME_MAX);
	w->dev_writes_recv = bdev_get_stats(w->ddev)->writes - writes0;
	sim_run(w->s, 100000000, SIMTIME_MAX);
	CHECK_EQ(w->x.err, 0);
	CHECK_EQ(w->x.flushed, 1);
	/* the received file system is consistent: extent refs, checksums,
	 * block groups (check.h) */
	CHECK_EQ(fs_commit(w->dst, NULL), 0);
	w->dst->check_verbose = 1;
	CHECK_EQ(check_fs(w->dst), 0);
	/* and it holds what the snapshot holds: names, sizes, data ranges */
	CHECK_EQ(check_send_received(w->src, snap, &w->r, name_of, &w->nm), 0);
	w->snap = snap;
}

static void world_free(world *w)
{
	recv_destroy(&w->r);
	send_stream_free(&w->st);
	fs_unmount(w->src);
	fs_unmount(w->dst);
	bdev_destroy(w->sdev);
	bdev_destroy(w->ddev);
	sim_destroy(w->s);
}

/* A received file rewritten in place (same size) and not yet written
 * back no longer counts as received; its fsync makes it so again. */
typedef struct redirty {
	world *w;
	struct inode *in;
	int fails_dirty, fails_clean;
} redirty;

static int redirty_step(sim *s, task *t)
{
	redirty *x = t->ctx;
	world *w = x->w;
	(void)s;
	CHECK_EQ(vio_write(w->dst, t, x->in, 0, 100), 0);
	x->fails_dirty = check_send_received(w->src, w->snap, &w->r, name_of, &w->nm);
	CHECK_EQ(vio_fsync(w->dst, t, x->in), 0);
	x->fails_clean = check_send_received(w->src, w->snap, &w->r, name_of, &w->nm);
	return TASK_DONE;
}

static void test_check_dirty(void)
{
	world w;
	uint64_t sizes[1] = {5000};
	world_run(&w, 5, sizes, 1, 1, 1, 0);
	uint64_t ino;
	CHECK_EQ(vfs_lookup(w.dst, NULL, w.droot, 256, "file_1", &ino), 0);
	redirty x = {.w = &w, .in = fs_inode_get(w.droot, ino)};
	task_spawn(w.s, "redirty", redirty_step, &x, SIMTIME_MAX / 2);
	sim_run(w.s, 1000000, SIMTIME_MAX);
	CHECK_EQ(x.fails_dirty, 1);
	CHECK_EQ(x.fails_clean, 0);
	world_free(&w);
}

static void test_stream_order(void)
{
	world w;
	uint64_t sizes[2] = {5000, 100 * 1024};
	world_run(&w, 1, sizes, 2, 1, 0, 1);
	const send_stream *st = &w.st;
	static const int want[] = {
		/* d */
		SEND_MKDIR, SEND_RENAME, SEND_UTIMES, SEND_CHOWN, SEND_CHMOD, SEND_UTIMES,
		/* file_1: 5000 bytes; the TRUNCATE right after the last WRITE
		 * (finish_inode_if_needed), then the setattrs */
		SEND_MKFILE, SEND_RENAME, SEND_UTIMES, SEND_WRITE, SEND_TRUNCATE, SEND_CHOWN,
		SEND_CHMOD, SEND_UTIMES,
		/* file_2: 100 KiB in 48 KiB writes */
		SEND_MKFILE, SEND_RENAME, SEND_UTIMES, SEND_WRITE, SEND_WRITE, SEND_WRITE,
		SEND_TRUNCATE, SEND_CHOWN, SEND_CHMOD, SEND_UTIMES,
		/* d/c: 100 bytes (inline) */
		SEND_MKFILE, SEND_RENAME, SEND_UTIMES, SEND_WRITE, SEND_TRUNCATE, SEND_CHOWN,
		SEND_CHMOD, SEND_UTIMES,
	};
	int nw = (int)(sizeof(want) / sizeof(want[0]));
	CHECK_EQ(st->n, nw);
	for (int i = 0; i < nw && i < (int)st->n; i++)
		if (st->cmds[i].op != want[i]) {
			fprintf(stderr, "cmd %d: %s, want %s\n", i, send_op_names[st->cmds[i].op],
				send_op_names[want[i]]);
			CHECK(0);
		}
	CHECK_EQ(st->files, 3);
	CHECK_EQ(st->dirs, 1);
	CHECK_EQ(st->data_bytes, 5000 + 100 * 1024 + 100);
	/* file_1: orphan name, rename into the top dir, write and truncate */
	const send_cmd *mk = &st->cmds[6];
	CHECK(strncmp(send_name(st, mk->name), "o", 1) == 0);
	CHECK_EQ(mk->dir, 256);
	CHECK_EQ(strcmp(send_name(st, st->cmds[7].name2), "file_1"), 0);
	CHECK_EQ(st->cmds[7].dir, 256);
	CHECK_EQ(st->cmds[8].ino, 256); /* parent's utimes */
	CHECK_EQ(st->cmds[9].off, 0);
	CHECK_EQ(st->cmds[9].len, 5000);
	CHECK_EQ(st->cmds[10].len, 5000);
	CHECK_EQ(st->cmds[22].off, 0640); /* file_2's CHMOD: its mode */
	CHECK_EQ(st->cmds[17].len, 48 * 1024);
	CHECK_EQ(st->cmds[19].off, 96 * 1024);
	CHECK_EQ(st->cmds[19].len, 4 * 1024);
	/* d/c is renamed into d */
	CHECK_EQ(strcmp(send_name(st, st->cmds[25].name2), "c"), 0);
	CHECK_EQ(st->cmds[25].dir, w.nm.ino[0]);
	CHECK_EQ(st->cmds[26].ino, w.nm.ino[0]);
	CHECK(st->bytes > st->data_bytes);

	/* receive reproduced the file set */
	uint64_t ino;
	vfs_stat_info si;
	CHECK_EQ(vfs_lookup(w.dst, NULL, w.droot, 256, "file_1", &ino), 0);
	CHECK_EQ(vfs_stat(w.dst, NULL, w.droot, ino, &si), 0);
	CHECK_EQ(si.size, 5000);
	CHECK_EQ(si.mode & 07777, 0640);
	CHECK_EQ(vfs_lookup(w.dst, NULL, w.droot, 256, "file_2", &ino), 0);
	CHECK_EQ(vfs_stat(w.dst, NULL, w.droot, ino, &si), 0);
	CHECK_EQ(si.size, 100 * 1024);
	uint64_t e[8][2];
	struct inode *f2 = fs_inode_get(w.droot, ino);
	/* 100 KiB aligned: written back as one extent */
	CHECK_EQ(file_extents(w.dst, f2, e, 8), 1);
	CHECK_EQ(e[0][1], 100 * 1024);
	uint64_t dino, cino;
	CHECK_EQ(vfs_lookup(w.dst, NULL, w.droot, 256, "d", &dino), 0);
	CHECK_EQ(vfs_lookup(w.dst, NULL, w.droot, dino, "c", &cino), 0);
	CHECK_EQ(vfs_stat(w.dst, NULL, w.droot, cino, &si), 0);
	CHECK_EQ(si.size, 100);
	CHECK_EQ(w.r.inline_extents, 1);
	/* before the patch, its same-size truncate made it inline: no IO */
	CHECK_EQ(w.r.sync_inline, 1);
	CHECK_EQ(w.r.sync_writes, 1); /* file_1's tail */
	/* no orphan names left behind */
	CHECK(vfs_lookup(w.dst, NULL, w.droot, 256, send_name(st, mk->name), &ino) == LAB_ENOENT);
	CHECK_EQ(w.r.dirty_pages, 0);
	strbuf sb;
	sb_init(&sb);
	send_details_json(&w.st, &w.r, &sb);
	CHECK(strstr(sb.buf, "\"truncate\"") != NULL);
	sb_free(&sb);
	world_free(&w);

	/* the post-2018 send drops the TRUNCATEs */
	world_run(&w, 1, sizes, 2, 0, 0, 1);
	CHECK_EQ(w.st.per_op[SEND_TRUNCATE], 0);
	CHECK_EQ(w.st.n, (uint64_t)nw - 3);
	CHECK_EQ(w.r.sync_writes, 0);
	world_free(&w);
}

/* Patch 003: unaligned dirty file truncated to its own size. */
static void test_patch003(void)
{
	world b, a;
	uint64_t sizes[1] = {5000};
	world_run(&b, 2, sizes, 1, 1, 0, 0);
	world_run(&a, 2, sizes, 1, 1, 1, 0);
	uint64_t ino;
	uint64_t e[8][2];
	/* before: one synchronous 4 KiB write, the file in 2 extents */
	CHECK_EQ(b.r.sync_writes, 1);
	CHECK_EQ(b.r.sync_bytes, 4096);
	CHECK_EQ(b.dev_writes_recv, 1);
	CHECK_EQ(vfs_lookup(b.dst, NULL, b.droot, 256, "file_1", &ino), 0);
	CHECK_EQ(file_extents(b.dst, fs_inode_get(b.droot, ino), e, 8), 2);
	CHECK_EQ(e[0][0], 0);
	CHECK_EQ(e[0][1], 4096);
	CHECK_EQ(e[1][0], 4096);
	CHECK_EQ(e[1][1], 4096);
	/* after: none, one extent */
	CHECK_EQ(a.r.sync_writes, 0);
	CHECK_EQ(a.dev_writes_recv, 0);
	CHECK_EQ(a.r.truncates_skipped, 1);
	CHECK_EQ(vfs_lookup(a.dst, NULL, a.droot, 256, "file_1", &ino), 0);
	CHECK_EQ(file_extents(a.dst, fs_inode_get(a.droot, ino), e, 8), 1);
	CHECK_EQ(e[0][1], 8192);
	/* the receive took longer by the synchronous write */
	CHECK(b.x.recv_end > a.x.recv_end);
	CHECK(b.r.sync_lat.n == 1 && b.r.sync_lat.max_ns > 0);
	world_free(&b);
	world_free(&a);

	/* aligned sizes and tiny (inline) files: identical either way */
	uint64_t al[3] = {8192, 4096, 64 * 1024};
	world_run(&b, 3, al, 3, 1, 0, 0);
	world_run(&a, 3, al, 3, 1, 1, 0);
	CHECK_EQ(b.r.sync_writes, 0);
	CHECK_EQ(a.r.sync_writes, 0);
	CHECK_EQ(b.x.recv_end, a.x.recv_end);
	CHECK_EQ(b.r.data_extents, a.r.data_extents);
	CHECK_EQ(b.r.data_extents, 3);
	CHECK_EQ(b.dev_writes_recv, 0);
	world_free(&b);
	world_free(&a);

	/* many unaligned files: one sync write each, linear in N */
	uint64_t many[40];
	for (int i = 0; i < 40; i++)
		many[i] = i % 2 ? 4097 : 5000;
	world_run(&b, 4, many, 40, 1, 0, 0);
	world_run(&a, 4, many, 40, 1, 1, 0);
	CHECK_EQ(b.r.sync_writes, 40);
	CHECK_EQ(a.r.sync_writes, 0);
	CHECK_EQ(b.r.data_extents, 80);
	CHECK_EQ(a.r.data_extents, 40);
	double per_file = (double)(b.x.recv_end - a.x.recv_end) / 40.0;
	fprintf(stderr, "patch003: receive of 41 files before %.3f ms, after %.3f ms, "
		"+%.1f us per unaligned file\n", b.x.recv_end / 1e6, a.x.recv_end / 1e6,
		per_file / 1e3);
	CHECK(per_file > 10000.0); /* at least a device write per file */
	strbuf sb;
	sb_init(&sb);
	send_details_json(&b.st, &b.r, &sb);
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < sb.len; i++)
		h = (h ^ (unsigned char)sb.buf[i]) * 1099511628211ull;
	fprintf(stderr, "patch003: details digest %016llx (%zu bytes)\n", (unsigned long long)h, sb.len);
	sb_free(&sb);
	/* determinism */
	world w2;
	world_run(&w2, 4, many, 40, 1, 0, 0);
	CHECK_EQ(w2.x.recv_end, b.x.recv_end);
	world_free(&w2);
	world_free(&b);
	world_free(&a);
}

static void test_errors(void)
{
	send_stream st;
	CHECK_EQ(send_build(NULL, NULL, NULL, NULL, name_of, NULL, &st), LAB_EINVAL);
	CHECK_EQ(send_build(NULL, NULL, NULL, NULL, NULL, NULL, NULL), LAB_EINVAL);
	recv_ctx r;
	CHECK_EQ(recv_init(&r, NULL, NULL, NULL), LAB_EINVAL);
	CHECK_EQ(recv_step(NULL, NULL), LAB_EINVAL);
	/* a name the resolver does not know fails the send cleanly */
	sim *s = sim_create(1, 0);
	bdev *dev;
	CHECK_EQ(bdev_create(s, "ideal", &dev), 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, dev, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "x", 0644, &in), 0);
	names nm = {.n = 0};
	CHECK_EQ(send_build(fs, NULL, root, NULL, name_of, &nm, &st), LAB_ENOENT);
	CHECK(st.cmds == NULL);
	send_cfg sc;
	send_cfg_default(&sc);
	sc.max_write = 10;
	CHECK_EQ(send_build(fs, NULL, root, &sc, name_of, &nm, &st), LAB_ERANGE);
	/* a receive whose orphan name exists fails with an error, no crash */
	nm.ino[0] = in->ino;
	snprintf(nm.name[0], 32, "x");
	nm.n = 1;
	CHECK_EQ(send_build(fs, NULL, root, NULL, name_of, &nm, &st), 0);
	CHECK_EQ(vfs_create(fs, NULL, root, 256, send_name(&st, st.cmds[0].name), 0644, NULL), 0);
	/* a receiver without a device has no data path to write with */
	fs_info *nodev;
	CHECK_EQ(fs_mount(s, NULL, NULL, &nodev), 0);
	CHECK_EQ(recv_init(&r, nodev, fs_root_lookup(nodev, 5), &st), LAB_EINVAL);
	fs_unmount(nodev);
	CHECK_EQ(recv_init(&r, fs, root, &st), 0);
	CHECK(vio_dfs(fs) != NULL);
	CHECK_EQ(recv_step(&r, NULL), LAB_EINVAL); /* the syscalls need a task */
	rx x = {.r = &r};
	task_spawn(s, "receive", rx_step, &x, 0);
	sim_run(s, 1000000, SIMTIME_MAX);
	CHECK(x.err < 0);
	CHECK_EQ(r.error, x.err);
	CHECK_EQ(x.recv_done, 0);
	recv_destroy(&r);
	CHECK(vio_dfs(fs) == NULL); /* the receive's own data path went */
	send_stream_free(&st);
	fs_unmount(fs);
	bdev_destroy(dev);
	sim_destroy(s);
}

/* A hand-made stream of one file "big" (ino 300): created, renamed into
 * place, written [0, write_len), then truncated to 10000 bytes. The
 * commands live in the caller's cmds[4]; the name pool is allocated. */
static void big_file_stream(send_stream *st, send_cmd cmds[4], uint32_t write_len)
{
	memset(st, 0, sizeof(*st));
	st->pool = calloc(1, 64);
	st->pool_cap = 64;
	memcpy(st->pool, "o300-1-0\0big\0", 13);
	st->pool_len = 13;
	memset(cmds, 0, 4 * sizeof(*cmds));
	cmds[0] = (send_cmd){.op = SEND_MKFILE, .ino = 300, .dir = 256, .name = 0};
	cmds[1] = (send_cmd){.op = SEND_RENAME, .ino = 300, .dir = 256, .name = 0, .name2 = 9};
	cmds[2] = (send_cmd){.op = SEND_WRITE, .ino = 300, .off = 0, .len = write_len};
	cmds[3] = (send_cmd){.op = SEND_TRUNCATE, .ino = 300, .len = 10000};
	st->cmds = cmds;
	st->n = 4;
}

/* A hand-made stream: a 100 KiB file truncated to 10000 bytes while its
 * pages are dirty. Shrinking writes the new tail page synchronously in
 * both variants (the patch only skips a same-size truncate) and drops
 * the pages past the new EOF. */
static void test_shrink(int skip)
{
	sim *s = sim_create(6, 0);
	bdev *dev;
	CHECK_EQ(bdev_create(s, "consumer-ssd", &dev), 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, dev, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	send_stream st;
	send_cmd cmds[4];
	big_file_stream(&st, cmds, 100 * 1024);
	recv_ctx r;
	patch_set(&fs->opts.patches, P_003_TRUNC_SKIP_SAME_SIZE_WB, skip);
	CHECK_EQ(recv_init(&r, fs, root, &st), 0);
	rx x = {.r = &r};
	task_spawn(s, "receive", rx_step, &x, 0);
	sim_run(s, 1000000, SIMTIME_MAX);
	CHECK_EQ(x.err, 0);
	CHECK_EQ(r.truncates, 1);
	CHECK_EQ(r.truncates_same_size, 0);
	CHECK_EQ(r.truncates_skipped, 0);
	CHECK_EQ(r.sync_writes, 1);
	CHECK_EQ(r.sync_bytes, 4096);
	CHECK_EQ(r.dirty_pages, 0);
	uint64_t ino;
	vfs_stat_info si;
	CHECK_EQ(vfs_lookup(fs, NULL, root, 256, "big", &ino), 0);
	CHECK_EQ(vfs_stat(fs, NULL, root, ino, &si), 0);
	CHECK_EQ(si.size, 10000);
	uint64_t e[4][2];
	CHECK_EQ(file_extents(fs, fs_inode_get(root, ino), e, 4), 2);
	CHECK_EQ(e[0][0], 0);
	CHECK_EQ(e[0][1], 8192);
	CHECK_EQ(e[1][0], 8192);
	CHECK_EQ(e[1][1], 4096);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	recv_destroy(&r);
	free(st.pool);
	fs_unmount(fs);
	bdev_destroy(dev);
	sim_destroy(s);
}

/* A receive on a data path driven asynchronously: parked commands and
 * a parked sync are resumed when woken. */
typedef struct arx {
	recv_ctx *r;
	int phase, blocked, err;
	int retried;   /* parks inside a command not done yet (replayed) */
	int kick_at;   /* > 0: start writeback of the file before command
			* kick_at (as the flusher could) */
} arx;

static int arx_step(sim *s, task *t)
{
	arx *x = t->ctx;
	(void)s;
	if (x->kick_at && x->r->next == (uint64_t)x->kick_at && !x->r->retry) {
		vd_writeback_start(recv_lookup(x->r, x->r->st->cmds[x->kick_at].ino)->inode->io, 0);
		x->kick_at = 0;
	}
	int rc = x->phase == 0 ? recv_step(x->r, t) : recv_flush(x->r, t);
	if (rc < 0) {
		x->err = rc;
		return TASK_DONE;
	}
	if (x->phase == 0) {
		if (rc == TASK_BLOCKED) {
			x->blocked++;
			if (x->r->retry) {
				CHECK_EQ(x->r->st->cmds[x->r->next].op, SEND_TRUNCATE);
				x->retried++;
			}
			return TASK_BLOCKED;
		}
		if (rc == TASK_DONE)
			x->phase = 1;
		return TASK_RUN;
	}
	if (rc == 1) {
		x->blocked++;
		return TASK_BLOCKED;
	}
	x->phase = 2;
	return TASK_DONE;
}

/* Receive st into droot of dst on an asynchronous data path: the flusher
 * runs every millisecond and writes back anything older, and a 512 KiB
 * page cache throttles the writer. Runs to the end of the sync, then
 * stops the flusher and lets the IO in flight finish. */
static dfs *async_receive(sim *s, fs_info *dst, struct btrfs_root *droot,
			  const send_stream *st, recv_ctx *r, arx *x, int kick_at)
{
	data_opts o;
	vio_opts_default(&o);
	o.ram_bytes = 512 * 1024;
	o.dirty_bg_bytes = 64 * 1024;
	o.dirty_expire = NS_PER_MS;
	o.wb_interval = NS_PER_MS;
	CHECK_EQ(vio_attach(dst, &o, NULL), 0);
	dfs *df = vio_dfs(dst);
	df->sync_io = 0;
	dfs_start_flusher(df);
	patch_set(&dst->opts.patches, P_003_TRUNC_SKIP_SAME_SIZE_WB, 0);
	CHECK_EQ(recv_init(r, dst, droot, st), 0);
	CHECK_EQ(r->own_data, 0);
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->kick_at = kick_at;
	task_spawn(s, "receive", arx_step, x, 0);
	for (int i = 0; i < 100000 && x->phase < 2 && !x->err; i++)
		sim_run(s, 1000, SIMTIME_MAX);
	CHECK_EQ(x->err, 0);
	CHECK_EQ(x->phase, 2);
	df->flusher_armed = 0;
	sim_run(s, 1000000, SIMTIME_MAX);
	return df;
}

/* WRITEs park after writing, the sync parks behind the flusher's
 * writeback; the received copy is the snapshot's all the same. */
static void test_async_receive(void)
{
	sim *s = sim_create(8, 0);
	bdev *sdev, *ddev;
	CHECK_EQ(bdev_create(s, "ideal", &sdev), 0);
	CHECK_EQ(bdev_create(s, "consumer-ssd", &ddev), 0);
	fs_info *src, *dst;
	CHECK_EQ(fs_mount(s, sdev, NULL, &src), 0);
	CHECK_EQ(fs_mount(s, ddev, NULL, &dst), 0);
	struct btrfs_root *sroot = fs_root_lookup(src, 5), *droot = fs_root_lookup(dst, 5);
	names nm = {.n = 0};
	for (int i = 0; i < 60; i++) {
		char nbuf[32];
		snprintf(nbuf, sizeof(nbuf), "f%d", i);
		src_file(src, sroot, 256, nbuf, i % 3 == 0 ? 5000 : i % 3 == 1 ? 20000 : 300 * 1024 + 5000, &nm);
	}
	struct btrfs_root *snap;
	CHECK_EQ(fs_root_create(src, NULL, fs_root_next_id(src), &snap), 0);
	CHECK_EQ(bt_copy_root(&sroot->tree, &snap->tree, NULL), 0);
	CHECK_EQ(fs_commit(src, NULL), 0);
	send_stream st;
	CHECK_EQ(send_build(src, NULL, snap, NULL, name_of, &nm, &st), 0);
	recv_ctx r;
	arx x;
	dfs *df = async_receive(s, dst, droot, &st, &r, &x, 0);
	CHECK(x.blocked > 0);
	CHECK(df->throttled > 0);
	CHECK_EQ(r.truncates, 60);
	fprintf(stderr, "async receive: %d parks (%d truncates replayed), %llu throttled "
		"writes, %llu tail writes\n", x.blocked, x.retried,
		(unsigned long long)df->throttled, (unsigned long long)r.sync_writes);
	CHECK_EQ(fs_commit(dst, NULL), 0);
	dst->check_verbose = 1;
	CHECK_EQ(check_fs(dst), 0);
	CHECK_EQ(check_send_received(src, snap, &r, name_of, &nm), 0);
	recv_destroy(&r);
	CHECK(vio_dfs(dst) == df); /* not the receive's to detach */
	vio_detach(dst);
	send_stream_free(&st);
	fs_unmount(src);
	fs_unmount(dst);
	bdev_destroy(sdev);
	bdev_destroy(ddev);
	sim_destroy(s);
}

/* A shrinking TRUNCATE while an asynchronous writeback of the file is in
 * flight: it parks before doing anything and is replayed once woken. */
static void test_async_truncate(void)
{
	sim *s = sim_create(9, 0);
	bdev *dev;
	CHECK_EQ(bdev_create(s, "consumer-ssd", &dev), 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, dev, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	send_stream st;
	send_cmd cmds[4];
	big_file_stream(&st, cmds, 64 * 1024);
	recv_ctx r;
	arx x;
	async_receive(s, fs, root, &st, &r, &x, 3);
	CHECK_EQ(x.retried, 1);
	CHECK_EQ(r.truncates, 1);
	struct inode *in = recv_lookup(&r, 300)->inode;
	CHECK_EQ(in->size, 10000);
	CHECK(vd_clean(in->io));
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	recv_destroy(&r);
	vio_detach(fs);
	free(st.pool);
	fs_unmount(fs);
	bdev_destroy(dev);
	sim_destroy(s);
}

int main(void)
{
	test_stream_order();
	test_patch003();
	test_shrink(0);
	test_shrink(1);
	test_errors();
	test_check_dirty();
	test_async_receive();
	test_async_truncate();
	T_DONE();
}
