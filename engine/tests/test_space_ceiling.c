/*
 * test_space_ceiling.c - where metadata reservations stop fitting: the
 * overcommit ceiling of btrfs_can_overcommit computed chunk by chunk
 * (fs_space_limit), on a fresh file system and on one whose device is
 * mostly in chunks already (fs_opts.used_bytes), single and DUP metadata;
 * the chunk sizes of 5.10 (1 GiB metadata chunks above 50 GiB, 10% cap);
 * and the delayed refs reserve (start_transaction's doubling into it,
 * given back when the heads run).
 */
#include <stdlib.h>

#include "t.h"
#include "alloc.h"
#include "bdev.h"
#include "fs.h"
#include "lab.h"
#include "sim.h"
#include "space_fs.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

typedef struct mnt {
	sim *s;
	bdev *dev;
	fs_info *fs;
} mnt;

static int mount(mnt *m, uint64_t dev_gib, int dup, uint64_t used_gib, uint64_t used_meta)
{
	memset(m, 0, sizeof *m);
	m->s = sim_create(1, 0);
	CHECK_EQ(bdev_create(m->s, "ideal", &m->dev), 0);
	fs_opts o;
	fs_opts_default(&o);
	o.dev_bytes = dev_gib * GiB;
	o.meta_dup = dup;
	o.used_bytes = used_gib * GiB;
	o.used_meta_bytes = used_meta;
	return fs_mount(m->s, m->dev, &o, &m->fs);
}

static void umount(mnt *m)
{
	fs_unmount(m->fs);
	bdev_destroy(m->dev);
	sim_destroy(m->s);
}

/* What the metadata chunks hold (used + reserved + pinned). */
static uint64_t meta_held(const fs_info *fs)
{
	return space_used(&fs->space.info[SPACE_META], 0);
}

/* A fresh 2 TiB file system: mkfs's data chunk (1 GiB) and the first
 * metadata chunk (1 GiB above 50 GiB), the rest unallocated; an eighth of
 * it may be promised (FLUSH_ALL), half that with DUP, whose chunk also
 * takes twice its size of the device. */
static void test_fresh(void)
{
	mnt m;
	CHECK_EQ(mount(&m, 2048, 0, 0, 0), 0);
	uint64_t unalloc = 2048 * GiB - MiB - GiB - GiB;
	CHECK_EQ(m.fs->alloc.dev_bytes - m.fs->alloc.dev_alloc, unalloc);
	CHECK_EQ(fs_space_limit(m.fs, SPACE_META), GiB - meta_held(m.fs) + unalloc / 8);
	CHECK(fs_space_limit(m.fs, SPACE_META) > 256 * GiB);
	umount(&m);

	CHECK_EQ(mount(&m, 2048, 1, 0, 0), 0);
	unalloc = 2048 * GiB - MiB - GiB - 2 * GiB;
	CHECK_EQ(m.fs->alloc.dev_bytes - m.fs->alloc.dev_alloc, unalloc);
	CHECK_EQ(fs_space_limit(m.fs, SPACE_META), GiB - meta_held(m.fs) + unalloc / 2 / 8);
	CHECK(fs_space_limit(m.fs, SPACE_META) < 129 * GiB);
	CHECK_EQ(m.fs->space.meta_factor, 2);
	umount(&m);
}

/* 1792 GiB of the 2 TiB already in chunks, all full: only the rest backs
 * reservations, and how much of the old space was metadata does not
 * matter (full chunks hold as much as they add). */
static void test_used(void)
{
	mnt a, b;
	CHECK_EQ(mount(&a, 2048, 0, 1792, 0), 0);
	CHECK_EQ(mount(&b, 2048, 0, 1792, 18 * GiB), 0);
	uint64_t unalloc = 256 * GiB - MiB - 2 * GiB;
	uint64_t want = GiB - (meta_held(a.fs) - 0) + unalloc / 8;
	CHECK_EQ(fs_space_limit(a.fs, SPACE_META), want);
	CHECK_EQ(fs_space_limit(b.fs, SPACE_META), fs_space_limit(a.fs, SPACE_META));
	CHECK_EQ(b.fs->space.info[SPACE_META].total_bytes, 19 * GiB);
	CHECK_EQ(b.fs->space.info[SPACE_DATA].total_bytes, (1792 - 18 + 1) * GiB);
	CHECK_EQ(b.fs->space.info[SPACE_DATA].bytes_used, (1792 - 18) * GiB);
	/* about 32.7 GiB: what the seed's untar must reach */
	CHECK(fs_space_limit(a.fs, SPACE_META) > 32 * GiB &&
	      fs_space_limit(a.fs, SPACE_META) < 33 * GiB);
	umount(&a);
	umount(&b);

	/* DUP: the old metadata counted over its two stripes */
	CHECK_EQ(mount(&a, 2048, 1, 1792, 36 * GiB), 0);
	CHECK_EQ(a.fs->space.info[SPACE_META].total_bytes, 18 * GiB + GiB);
	unalloc = 256 * GiB - MiB - GiB - 2 * GiB;
	CHECK_EQ(fs_space_limit(a.fs, SPACE_META), GiB - (meta_held(a.fs) - 18 * GiB) + unalloc / 16);
	umount(&a);

	/* more than the device holds: refused */
	CHECK_EQ(mount(&a, 64, 0, 65, 0), LAB_EINVAL);
	bdev_destroy(a.dev);
	sim_destroy(a.s);
	CHECK_EQ(mount(&a, 64, 0, 10, 11 * GiB), LAB_EINVAL);
	bdev_destroy(a.dev);
	sim_destroy(a.s);
}

/* Each new metadata chunk raises the ceiling by seven eighths of its
 * size, single or DUP (it adds its size to total_bytes and takes its
 * stripes off the unallocated space, which counts over the stripes). */
static void test_chunk_by_chunk(void)
{
	for (int dup = 0; dup <= 1; dup++) {
		mnt m;
		CHECK_EQ(mount(&m, 2048, dup, 1024, 0), 0);
		uint64_t before = fs_space_limit(m.fs, SPACE_META);
		CHECK_EQ(alloc_chunk_new(&m.fs->alloc, ALLOC_METADATA), 0);
		uint64_t after = fs_space_limit(m.fs, SPACE_META);
		CHECK_NEAR((double)(after - before), 7.0 / 8 * GiB, 1e-6);
		/* a data chunk only takes an eighth (a sixteenth) of its size */
		CHECK_EQ(alloc_chunk_new(&m.fs->alloc, ALLOC_DATA), 0);
		CHECK_NEAR((double)(after - fs_space_limit(m.fs, SPACE_META)),
			   (double)GiB / 8 / (dup ? 2 : 1), 1e-6);
		umount(&m);
	}
}

/* 5.10's chunk sizes: metadata 256 MiB up to 50 GiB, 1 GiB above; no
 * chunk over a tenth of the device. */
static void test_chunk_sizes(void)
{
	alloc_ctl a;
	CHECK_EQ(alloc_init(&a, 50 * GiB), 0);
	CHECK_EQ(a.chunk_bytes[ALLOC_METADATA], 256 * MiB);
	CHECK_EQ(a.chunk_bytes[ALLOC_DATA], GiB);
	alloc_destroy(&a);
	CHECK_EQ(alloc_init(&a, 51 * GiB), 0);
	CHECK_EQ(a.chunk_bytes[ALLOC_METADATA], GiB);
	alloc_destroy(&a);
	CHECK_EQ(alloc_init(&a, 2 * GiB), 0);
	CHECK_EQ(a.chunk_bytes[ALLOC_METADATA], 204 * MiB);
	CHECK_EQ(a.chunk_bytes[ALLOC_DATA], 204 * MiB);
	/* DUP: a chunk takes two stripes of the device */
	alloc_set_meta_dup(&a, 1);
	uint64_t d0 = a.dev_alloc;
	CHECK_EQ(alloc_chunk_new(&a, ALLOC_METADATA), 0);
	CHECK_EQ(a.dev_alloc - d0, 2 * 204 * MiB);
	CHECK_EQ(a.total[ALLOC_METADATA], 204 * MiB);
	CHECK_EQ(alloc_room(&a, ALLOC_METADATA) % (4096), 0);
	alloc_destroy(&a);
}

/* The delayed refs reserve: 256 KiB per head not yet run. A
 * start_transaction while it is not full reserves twice its items and
 * moves one half into it, up to its size; once full, only the items. The
 * heads running give it back. bytes_may_use always equals what the
 * holders hold. */
static void test_delayed_refs_rsv(void)
{
	mnt m;
	CHECK_EQ(mount(&m, 64, 0, 0, 0), 0);
	fs_info *fs = m.fs;
	const space_info *si = &fs->space.info[SPACE_META];
	const block_rsv *d = fs_space_drefs_rsv(fs);
	CHECK(d != NULL);
	uint64_t base = si->bytes_may_use;
	fs_space_dref_heads(fs, 10, 0); /* 2.5 MiB wanted */
	CHECK_EQ(d->size, 10 * 256 * 1024);
	CHECK_EQ(d->reserved, 0);
	fs_space_op op;
	CHECK_EQ(fs_space_meta_begin(fs, NULL, 5, &op), 0);
	CHECK_EQ(si->bytes_may_use - base, 2 * 5 * 256 * 1024);
	CHECK_EQ(op.rsv.reserved, 5 * 256 * 1024);
	CHECK_EQ(d->reserved, 5 * 256 * 1024);
	fs_space_meta_end(fs, NULL, &op);
	CHECK_EQ(si->bytes_may_use - base, 5 * 256 * 1024);
	CHECK_EQ(fs_space_held(fs, SPACE_META), si->bytes_may_use);
	/* the second fills it; what does not fit goes back at once */
	fs_space_dref_heads(fs, 1, 0); /* 2.75 MiB wanted, 1.25 held */
	CHECK_EQ(fs_space_meta_begin(fs, NULL, 5, &op), 0);
	CHECK_EQ(d->reserved, 10 * 256 * 1024);
	CHECK(!d->full);
	CHECK_EQ(si->bytes_may_use - base, (10 + 5) * 256 * 1024);
	fs_space_meta_end(fs, NULL, &op);
	CHECK_EQ(fs_space_meta_begin(fs, NULL, 5, &op), 0);
	CHECK_EQ(d->reserved, 11 * 256 * 1024);
	CHECK(d->full);
	CHECK_EQ(si->bytes_may_use - base, (11 + 5) * 256 * 1024);
	fs_space_meta_end(fs, NULL, &op);
	CHECK_EQ(fs_space_held(fs, SPACE_META), si->bytes_may_use);
	/* full: a start reserves its items only */
	uint64_t mu = si->bytes_may_use;
	CHECK_EQ(fs_space_meta_begin(fs, NULL, 5, &op), 0);
	CHECK_EQ(si->bytes_may_use - mu, 5 * 256 * 1024);
	fs_space_meta_end(fs, NULL, &op);
	/* the heads run: all of it comes back */
	fs_space_dref_heads(fs, -11, 0);
	CHECK_EQ(d->size, 0);
	CHECK_EQ(d->reserved, 0);
	CHECK_EQ(si->bytes_may_use, base);
	CHECK_EQ(fs_space_held(fs, SPACE_META), si->bytes_may_use);
	umount(&m);
}

int main(void)
{
	test_fresh();
	test_used();
	test_chunk_by_chunk();
	test_chunk_sizes();
	test_delayed_refs_rsv();
	T_DONE();
}
