/* test_space_fs.c - space reservation in a real file system (space_fs.h):
 * writers on a small device create files and write them through
 * vio_write; the delalloc metadata they reserve outgrows the metadata
 * space, their tasks park on tickets, the async reclaim worker flushes
 * the real delalloc and the tickets are granted; the data worker forces
 * data chunks. On a device too small for the workload every writer ends
 * with a clean LAB_ENOSPC. After a sync and a commit bytes_may_use is
 * back to 0 and the whole checker (with the space checks) finds nothing. */
#include <stdlib.h>

#include "t.h"
#include "bdev.h"
#include "check.h"
#include "check_more.h"
#include "fs.h"
#include "lab.h"
#include "reclaim.h"
#include "sim.h"
#include "space_fs.h"
#include "space_fs_int.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_io.h"

#define MiB (1ull << 20)
#define NW 8

struct env;

typedef struct writer {
	struct env *e;
	int id;
	int nfile;
	struct inode *in;
	int waits, enospc;
	int fsyncing;          /* the file is written; its fsync is pending */
	int unlinking;         /* an unlink of an older file is pending */
	int unlinked;
	uint64_t written;
} writer;

typedef struct env {
	sim *s;
	bdev *dev;
	fs_info *fs;
	trans_mgr tm;
	struct btrfs_root *root;
	writer w[NW];
	int max_files;
	uint64_t file_bytes;
	int fsync_every;       /* 0: never; n: fsync every n-th file */
	int unlink_lag;        /* 0: never; n: unlink the file n files back */
	int running;
	int synced;
	simtime_t end;
} env;

static void env_open_dev(env *e, uint64_t dev_bytes, int variant, const char *device)
{
	memset(e, 0, sizeof(*e));
	e->s = sim_create(7, 0);
	CHECK_EQ(bdev_create(e->s, device, &e->dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.dev_bytes = dev_bytes;
	CHECK_EQ(fs_mount(e->s, e->dev, &o, &e->fs), 0);
	CHECK_EQ(trans_init(&e->tm, e->fs), 0);
	CHECK_EQ(vio_attach(e->fs, NULL, &e->tm), 0);
	CHECK_EQ(check_more_space(e->fs), 0);
	delalloc_flush_patches(variant, &e->fs->opts.patches);
	CHECK_EQ(fs_space_config(e->fs, 4), 0);
	CHECK_EQ(fs_space_config(e->fs, 0), LAB_EINVAL);
	e->root = fs_root_lookup(e->fs, 5);
}

static void env_open(env *e, uint64_t dev_bytes, int variant)
{
	env_open_dev(e, dev_bytes, variant, "nvme-dc");
}

static void env_close(env *e)
{
	vio_detach(e->fs);
	trans_destroy(&e->tm);
	fs_unmount(e->fs);
	bdev_destroy(e->dev);
	sim_destroy(e->s);
}

/* A writer: create a file, write it whole, next file; a reservation that
 * parks returns TASK_BLOCKED and the same call is made again when woken. */
static int writer_step(sim *s, task *t)
{
	writer *w = t->ctx;
	env *e = w->e;
	(void)s;
	int rc;
	if (w->unlinking) {
		char name[32];
		snprintf(name, sizeof name, "w%d-%d", w->id, w->nfile - 1 - e->unlink_lag);
		rc = vfs_unlink(e->fs, t, e->root, 256, name);
		if (rc == FS_SPACE_WAIT) {
			w->waits++;
			return TASK_BLOCKED;
		}
		CHECK_EQ(rc, 0);
		w->unlinking = 0;
		w->unlinked++;
		return TASK_RUN;
	}
	if (w->fsyncing) {
		/* asynchronous data path: the fsync parks behind writeback */
		rc = vio_fsync(e->fs, t, w->in);
		if (rc == 1)
			return TASK_BLOCKED;
		CHECK_EQ(rc, 0);
		w->fsyncing = 0;
		w->in = NULL;
		w->nfile++;
		return TASK_RUN;
	}
	if (w->nfile >= e->max_files) {
		e->running--;
		return TASK_DONE;
	}
	if (!w->in) {
		char name[32];
		snprintf(name, sizeof name, "w%d-%d", w->id, w->nfile);
		rc = vfs_create(e->fs, t, e->root, 256, name, 0644, &w->in);
		if (rc == FS_SPACE_WAIT) {
			w->waits++;
			return TASK_BLOCKED;
		}
		if (rc) {
			CHECK_EQ(rc, LAB_ENOSPC);
			w->enospc++;
			e->running--;
			return TASK_DONE;
		}
	}
	rc = vio_write(e->fs, t, w->in, 0, e->file_bytes);
	if (rc == FS_SPACE_WAIT) {
		w->waits++;
		return TASK_BLOCKED;
	}
	if (rc) {
		CHECK_EQ(rc, LAB_ENOSPC);
		w->enospc++;
		e->running--;
		return TASK_DONE;
	}
	w->written += e->file_bytes;
	if (e->fsync_every && w->nfile % e->fsync_every == 0) {
		w->fsyncing = 1;
		return TASK_RUN;
	}
	w->in = NULL;
	w->nfile++;
	w->unlinking = e->unlink_lag && w->nfile > e->unlink_lag;
	return TASK_RUN;
}

/* Once the writers are done: sync the data, then commit (a sync(2)). */
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
	e->end = t->clock;
	return TASK_DONE;
}

static void run(env *e, int max_files, uint64_t file_bytes)
{
	e->max_files = max_files;
	e->file_bytes = file_bytes;
	for (int i = 0; i < NW; i++) {
		e->w[i].e = e;
		e->w[i].id = i;
		CHECK(task_spawn(e->s, "writer", writer_step, &e->w[i], 0) != NULL);
		e->running++;
	}
	CHECK(task_spawn(e->s, "sync", sync_step, e, 0) != NULL);
	sim_run(e->s, 50000000, SIMTIME_MAX);
	CHECK(e->synced);
}

/* The largest value of series `name` in the sim's series JSON, -1 if the
 * series has no point. */
static double series_max(sim *s, const char *name, double *last)
{
	strbuf sb;
	sb_init(&sb);
	sim_series_json(s, &sb);
	char key[64];
	snprintf(key, sizeof key, "\"%s\":{\"t\":[", name);
	const char *p = strstr(sb.buf, key);
	double max = -1;
	*last = -1;
	if (p && (p = strstr(p, "\"v\":[")) != NULL) {
		p += 5;
		while (*p && *p != ']') {
			char *end;
			double v = strtod(p, &end);
			if (end == p)
				break;
			if (v > max)
				max = v;
			*last = v;
			p = *end == ',' ? end + 1 : end;
		}
	}
	sb_free(&sb);
	return max;
}

/* After the sync and commit: nothing reserved, counters consistent. */
static void check_quiet(env *e)
{
	const space_ctl *sc = &e->fs->space;
	CHECK_EQ(sc->info[SPACE_DATA].bytes_may_use, 0);
	CHECK_EQ(sc->info[SPACE_META].bytes_may_use, 0);
	CHECK_EQ(space_tickets_waiting(&sc->info[SPACE_DATA]), 0);
	CHECK_EQ(space_tickets_waiting(&sc->info[SPACE_META]), 0);
	CHECK_EQ(check_space_counters(e->fs, NULL), 0);
	CHECK_EQ(check_fs(e->fs), 0);
}

/* Enough room for the data, not for every dirty file's delalloc
 * metadata at once: tickets, reclaim flushing delalloc, every ticket
 * granted, no ENOSPC. */
static void test_tickets_granted(int variant)
{
	env e;
	env_open(&e, 256 * MiB, variant);
	run(&e, 12, MiB);
	const space_info *m = &e.fs->space.info[SPACE_META];
	const space_info *d = &e.fs->space.info[SPACE_DATA];
	uint64_t written = 0;
	int waits = 0, enospc = 0;
	for (int i = 0; i < NW; i++) {
		written += e.w[i].written;
		waits += e.w[i].waits;
		enospc += e.w[i].enospc;
	}
	CHECK_EQ(written, (uint64_t)NW * 12 * MiB);
	CHECK_EQ(enospc, 0);
	CHECK(m->tickets_queued > 0);
	CHECK_EQ(m->tickets_granted, m->tickets_queued);
	CHECK_EQ(m->tickets_failed, 0);
	CHECK(d->tickets_queued > 0);            /* the mkfs data chunk filled */
	CHECK_EQ(d->tickets_granted, d->tickets_queued);
	CHECK(waits >= (int)(m->tickets_queued + d->tickets_queued) / 2);
	CHECK(d->total_bytes > e.fs->alloc.chunk_bytes[ALLOC_DATA]); /* forced chunks */
	const reclaim_ctl *rc = fs_space_reclaim(e.fs);
	CHECK(rc != NULL);
	uint64_t flushed = rc ? rc->per_state[FLUSH_DELALLOC].pages_flushed +
				rc->per_state[FLUSH_DELALLOC_WAIT].pages_flushed : 0;
	CHECK(flushed > 0);                      /* reclaim wrote real delalloc */
	CHECK(rc && rc->meta.passes > 0 && rc->nrec > 0);
	double last, max = series_max(e.s, "space_tickets", &last);
	CHECK(max >= 1);                         /* the series moved */
	CHECK_EQ(last, 0);                       /* and every ticket went */
	printf("variant %s: meta tickets %llu granted %llu (peak %llu, waited %.3f ms), "
	       "data tickets %llu, reclaim passes %llu, records %llu, pages flushed %llu, "
	       "data chunks %llu MiB, elapsed %.3f ms\n",
	       delalloc_flush_name(variant), (unsigned long long)m->tickets_queued,
	       (unsigned long long)m->tickets_granted, (unsigned long long)m->peak_tickets,
	       (double)m->ticket_wait_ns / 1e6, (unsigned long long)d->tickets_queued,
	       rc ? (unsigned long long)rc->meta.passes : 0ull,
	       rc ? (unsigned long long)rc->nrec : 0ull, (unsigned long long)flushed,
	       (unsigned long long)(d->total_bytes / MiB), (double)e.end / 1e6);
	sfs *x = e.fs->space_fs;
	CHECK(x->dc_ready && x->dc.flushes > 0);
	if (variant == DELALLOC_FLUSHER) {
		/* writeback_inodes_sb_nr: every work went to the data path's
		 * own flusher thread (the one kupdate runs on), which ran it to
		 * its end; delalloc's stand-in workqueue never ran */
		const dfs *df = vio_dfs(e.fs);
		CHECK(x->dc.sb_works > 0);
		CHECK_EQ(x->dc.flusher.jobs_run, x->dc.sb_works);
		CHECK(df->flusher != NULL && df->flusher->cpu_ns > 0);
		CHECK(df->work_head == NULL && df->work_cur == NULL);
		CHECK_EQ(x->dc.flusher.threads[0]->cpu_ns, 0);
		CHECK(x->sb_works == NULL); /* each one handed back */
	}
	check_quiet(&e);
	env_close(&e);
}

/* The asynchronous data path (bios complete at end_io, fsync parks
 * behind writeback): some fsyncs put ordered extents in flight, which
 * FLUSH_DELALLOC_WAIT waits for; tickets are still all granted. */
static void test_tickets_async(void)
{
	env e;
	env_open(&e, 256 * MiB, DELALLOC_PAGES);
	vio_dfs(e.fs)->sync_io = 0;
	e.fsync_every = 4;
	run(&e, 16, MiB);
	const space_info *m = &e.fs->space.info[SPACE_META];
	uint64_t written = 0;
	for (int i = 0; i < NW; i++)
		written += e.w[i].written;
	CHECK_EQ(written, (uint64_t)NW * 16 * MiB);
	CHECK(m->tickets_queued > 0);
	CHECK_EQ(m->tickets_granted, m->tickets_queued);
	CHECK(vio_dfs(e.fs)->ordered_done > 0);
	const reclaim_ctl *rc = fs_space_reclaim(e.fs);
	CHECK(rc && rc->per_state[FLUSH_DELALLOC].calls + rc->per_state[FLUSH_DELALLOC_WAIT].calls > 0);
	printf("async: meta tickets %llu granted %llu, delalloc flushes %llu + wait %llu, "
	       "elapsed %.3f ms\n",
	       (unsigned long long)m->tickets_queued, (unsigned long long)m->tickets_granted,
	       rc ? (unsigned long long)rc->per_state[FLUSH_DELALLOC].calls : 0ull,
	       rc ? (unsigned long long)rc->per_state[FLUSH_DELALLOC_WAIT].calls : 0ull,
	       (double)e.end / 1e6);
	check_quiet(&e);
	env_close(&e);
}

/* The device in the reclaim cycle: files too big to be inline give their
 * delalloc metadata back only when their ordered extent completes, so
 * once the writers run short of metadata every ticket waits for the
 * device (bios that wait for a request of the disk's short queue, their
 * service, then btrfs_wait_ordered_roots at FLUSH_DELALLOC_WAIT). The
 * same writers on a disk wait far longer than on the NVMe drive, on
 * either kernel. */
static void test_device_in_cycle(void)
{
	double wait[2][2];
	for (int v = 0; v < 2; v++) {
		for (int dv = 0; dv < 2; dv++) {
			env e;
			env_open_dev(&e, 256 * MiB, v ? DELALLOC_PAGES : DELALLOC_INODES,
				     dv ? "hdd" : "nvme-dc");
			vio_dfs(e.fs)->sync_io = 0;
			run(&e, 24, 256 * 1024);
			const space_info *m = &e.fs->space.info[SPACE_META];
			CHECK(m->tickets_queued > 0);
			CHECK_EQ(m->tickets_granted, m->tickets_queued);
			wait[v][dv] = (double)m->ticket_wait_ns / 1e6;
			check_quiet(&e);
			env_close(&e);
		}
	}
	printf("device in the cycle: tickets waited 5.10 %.1f ms (NVMe) / %.1f ms (disk), fix %.1f / "
	       "%.1f ms\n", wait[0][0], wait[0][1], wait[1][0], wait[1][1]);
	CHECK(wait[0][1] > 3 * wait[0][0]);
	CHECK(wait[1][1] > 3 * wait[1][0]);
}

/* Writers that unlink what they wrote a few files ago: an unlink that
 * drops the last link reserves the eviction's metadata with
 * FLUSH_EVICT, a priority ticket its task flushes for itself, ahead of
 * the queued normal tickets. */
static void test_priority_evict(void)
{
	env e;
	env_open(&e, 256 * MiB, DELALLOC_PAGES);
	e.unlink_lag = 8;
	run(&e, 40, MiB);
	const space_info *m = &e.fs->space.info[SPACE_META];
	fs_space_stats st;
	fs_space_get_stats(e.fs, &st);
	int unlinked = 0;
	uint64_t written = 0;
	for (int i = 0; i < NW; i++) {
		unlinked += e.w[i].unlinked;
		written += e.w[i].written;
		CHECK_EQ(e.w[i].enospc, 0);
	}
	CHECK_EQ(unlinked, NW * (40 - 8));
	CHECK_EQ(written, (uint64_t)NW * 40 * MiB); /* more than the device: unlinks free it */
	CHECK(st.prio_tickets > 0);
	CHECK(m->tickets_queued > st.prio_tickets);
	CHECK_EQ(m->tickets_failed, 0);
	printf("unlinks: meta tickets %llu (priority %llu), data tickets %llu, commits %llu, "
	       "elapsed %.3f ms\n",
	       (unsigned long long)m->tickets_queued, (unsigned long long)st.prio_tickets,
	       (unsigned long long)e.fs->space.info[SPACE_DATA].tickets_queued,
	       (unsigned long long)st.commits, (double)e.end / 1e6);
	check_quiet(&e);
	env_close(&e);
}

/* More data than the device holds: writers get LAB_ENOSPC, cleanly. */
static void test_enospc(void)
{
	env e;
	env_open(&e, 128 * MiB, DELALLOC_PAGES);
	run(&e, 1000, MiB);
	uint64_t written = 0;
	int enospc = 0;
	for (int i = 0; i < NW; i++) {
		written += e.w[i].written;
		enospc += e.w[i].enospc;
	}
	const space_info *d = &e.fs->space.info[SPACE_DATA];
	const space_info *m = &e.fs->space.info[SPACE_META];
	CHECK_EQ(enospc, NW);                     /* every writer stopped on it */
	CHECK(d->tickets_failed + m->tickets_failed > 0 ||
	      d->reserves_enospc + m->reserves_enospc > 0);
	CHECK(d->full);                           /* no room for another chunk */
	CHECK(written <= d->total_bytes);
	/* the data written fills the data chunks up to what the last
	 * writers' 1 MiB could not use, and the chunks fill the device */
	CHECK(written + NW * MiB >= d->total_bytes);
	CHECK(!alloc_chunk_fits(&e.fs->alloc, ALLOC_DATA));
	CHECK_EQ(d->bytes_used, written);
	printf("full device: %llu MiB written in %llu MiB of data chunks, data tickets %llu "
	       "failed %llu, meta tickets %llu failed %llu\n",
	       (unsigned long long)(written / MiB), (unsigned long long)(d->total_bytes / MiB),
	       (unsigned long long)d->tickets_queued, (unsigned long long)d->tickets_failed,
	       (unsigned long long)m->tickets_queued, (unsigned long long)m->tickets_failed);
	check_quiet(&e);
	env_close(&e);
}

/* trans_start_items holds insert_metadata_size(items) until trans_end;
 * the checker sees it as held; a corrupted may_use is reported. */
static void test_handle_and_check(void)
{
	env e;
	env_open(&e, 256 * MiB, DELALLOC_PAGES);
	space_info *m = &e.fs->space.info[SPACE_META];
	trans_handle h;
	memset(&h, 0, sizeof h);
	CHECK_EQ(trans_start_items(&e.tm, NULL, 5, &h), 0);
	CHECK_EQ(m->bytes_may_use, space_insert_metadata_size(&e.fs->space, 5));
	CHECK_EQ(m->bytes_may_use, 5 * 16384 * 8 * 2);
	CHECK_EQ(check_space_counters(e.fs, NULL), 0);
	CHECK_EQ(trans_end(&h, 0), 0);
	CHECK_EQ(m->bytes_may_use, 0);
	/* a create's reservation is gone once it returns; its tree blocks
	 * were taken from it, not from nothing */
	struct inode *in;
	uint64_t reserved0 = m->bytes_reserved + m->bytes_used;
	CHECK_EQ(vfs_create(e.fs, NULL, e.root, 256, "a", 0644, &in), 0);
	CHECK_EQ(m->bytes_may_use, 0);
	CHECK(m->bytes_reserved + m->bytes_used > reserved0);
	m->bytes_may_use += 4096;
	CHECK(check_space_counters(e.fs, NULL) > 0);
	m->bytes_may_use -= 4096;
	CHECK_EQ(check_space_counters(e.fs, NULL), 0);
	/* without overcommit a reservation fits only in the allocated
	 * chunks; with it, in a share of the unallocated space too */
	uint64_t room = m->total_bytes - space_used(m, 1);
	CHECK_EQ(fs_space_overcommit(e.fs, 0), 0);
	CHECK_EQ(fs_space_reserve(e.fs, NULL, SPACE_META, room + 16384), LAB_ENOSPC);
	CHECK_EQ(fs_space_overcommit(e.fs, 1), 0);
	CHECK_EQ(fs_space_reserve(e.fs, NULL, SPACE_META, room + 16384), 0);
	space_release(&e.fs->space, SPACE_META, room + 16384, 0);
	CHECK_EQ(m->bytes_may_use, 0);
	/* a setup-time reservation that cannot fit fails, nothing parks */
	CHECK_EQ(fs_space_reserve(e.fs, NULL, SPACE_DATA, 1ull << 40), LAB_ENOSPC);
	CHECK_EQ(fs_space_reserve(e.fs, NULL, 7, 4096), LAB_EINVAL);
	env_close(&e);
}

/* The delalloc lists: an inode joins its root's list at its first
 * delalloc, leaves once written back and joins the tail when dirtied
 * again; a root joins delalloc_roots with its first delalloc inode. */
static void test_delalloc_lists(void)
{
	env e;
	env_open(&e, 256 * MiB, DELALLOC_PAGES);
	struct inode *a, *b, *c, *x;
	struct btrfs_root *sv;
	CHECK_EQ(vfs_create(e.fs, NULL, e.root, 256, "a", 0644, &a), 0);
	CHECK_EQ(vfs_create(e.fs, NULL, e.root, 256, "b", 0644, &b), 0);
	CHECK_EQ(vfs_create(e.fs, NULL, e.root, 256, "c", 0644, &c), 0);
	CHECK_EQ(fs_create_subvol(e.fs, NULL, e.root, 256, "sv", &sv), 0);
	CHECK_EQ(vfs_create(e.fs, NULL, sv, 256, "x", 0644, &x), 0);
	task *t = task_spawn(e.s, "t", writer_step, NULL, 0); /* a clock only */
	CHECK_EQ(vio_write(e.fs, t, a, 0, 8192), 0);
	CHECK_EQ(vio_write(e.fs, t, x, 0, 8192), 0); /* root sv joins second */
	CHECK_EQ(vio_write(e.fs, t, b, 0, 8192), 0);
	CHECK_EQ(vio_write(e.fs, t, c, 0, 8192), 0);
	CHECK_EQ(fs_space_listed(e.fs), 4);
	CHECK_EQ(vio_fsync(e.fs, t, a), 0);          /* a leaves */
	CHECK_EQ(fs_space_listed(e.fs), 3);
	CHECK_EQ(vio_write(e.fs, t, a, 8192, 4096), 0); /* and rejoins at the tail */
	dinode *o[8];
	CHECK_EQ(fs_space_delalloc_order(e.fs, o, 8), 4);
	CHECK(o[0] == vio_dinode(e.fs, b));
	CHECK(o[1] == vio_dinode(e.fs, c));
	CHECK(o[2] == vio_dinode(e.fs, a));
	CHECK(o[3] == vio_dinode(e.fs, x));
	CHECK_EQ(fs_space_delalloc_order(e.fs, o, 2), 2);
	CHECK_EQ(vio_sync(e.fs, t), 0);
	CHECK_EQ(fs_space_listed(e.fs), 0);
	CHECK_EQ(check_space_counters(e.fs, NULL), 0);
	t->done = 1;
	env_close(&e);
}

/*
 * P_000_DATA_TICKETS: 5.10 queues a data reservation that does not fit as
 * a ticket for the async data worker, which forces a chunk; 5.9 (off)
 * lets the writer allocate the chunk itself (btrfs_alloc_data_chunk_
 * ondemand): no data ticket, and no wait for a worker. The same data
 * goes in either way, and a full device still ends in a clean ENOSPC.
 */
static void test_data_tickets(void)
{
	uint64_t chunks[2] = {0}, tickets[2] = {0}, ondemand[2] = {0};
	for (int on = 0; on < 2; on++) {
		env e;
		env_open(&e, 256 * MiB, DELALLOC_PAGES);
		patch_set(&e.fs->opts.patches, P_000_DATA_TICKETS, on);
		run(&e, 12, MiB);
		const space_info *d = &e.fs->space.info[SPACE_DATA];
		fs_space_stats st;
		fs_space_get_stats(e.fs, &st);
		uint64_t written = 0;
		for (int i = 0; i < NW; i++) {
			written += e.w[i].written;
			CHECK_EQ(e.w[i].enospc, 0);
		}
		CHECK_EQ(written, (uint64_t)NW * 12 * MiB);
		tickets[on] = d->tickets_queued;
		ondemand[on] = st.ondemand_chunks;
		chunks[on] = d->total_bytes;
		check_quiet(&e);
		env_close(&e);
	}
	printf("data tickets off: %llu tickets, %llu chunks by the writers; on: %llu tickets, "
	       "%llu by them\n", (unsigned long long)tickets[0], (unsigned long long)ondemand[0],
	       (unsigned long long)tickets[1], (unsigned long long)ondemand[1]);
	CHECK_EQ(tickets[0], 0);
	CHECK(ondemand[0] > 0);
	CHECK(tickets[1] > 0);
	CHECK_EQ(ondemand[1], 0);
	CHECK_EQ(chunks[0], chunks[1]); /* the same chunks, allocated by someone else */

	/* a device too small: without data tickets the writers still stop
	 * on ENOSPC once no chunk fits (the ticket the model falls back on) */
	env e;
	env_open(&e, 128 * MiB, DELALLOC_PAGES);
	patch_set(&e.fs->opts.patches, P_000_DATA_TICKETS, 0);
	run(&e, 1000, MiB);
	int enospc = 0;
	for (int i = 0; i < NW; i++)
		enospc += e.w[i].enospc;
	CHECK_EQ(enospc, NW);
	CHECK(e.fs->space.info[SPACE_DATA].full);
	check_quiet(&e);
	env_close(&e);
}

int main(void)
{
	test_delalloc_lists();
	test_handle_and_check();
	test_tickets_granted(DELALLOC_PAGES);
	test_tickets_granted(DELALLOC_INODES);
	test_tickets_granted(DELALLOC_FLUSHER);
	test_tickets_async();
	test_device_in_cycle();
	test_priority_evict();
	test_enospc();
	test_data_tickets();
	T_DONE();
}
