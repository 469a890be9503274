/*
 * vfs_data_read.c - the data path's reads: read(2) of a page through the
 * page cache, readahead windows (ondemand_readahead) and their bios, the
 * checksum lookup of what they read, and the EXTENT_UPTODATE records that
 * reading holes leaves before patch 1/9 of seed 004 (see vfs_data.h).
 */
#include "vfs_data.h"
#include "vfs_data_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"

/* A read bio is done: its pages are UPTODATE and their io_tree range is
 * unlocked (end_bio_extent_readpage); readers parked on pages wake. */
static void rbio_complete(dinode *d, dbio *db, simtime_t now)
{
	dfs *fs = d->fs;
	eio_call c = {0};
	/* the kernel unlocks page by page; pc_set_range and eio_clear_run
	 * do the page flags and the io_tree calls of a run of consecutive
	 * pages at once */
	for (uint32_t i = 0, k; i < db->n; i += k) {
		uint64_t off = db->offs[i];
		for (k = 1; i + k < db->n && db->offs[i + k] == off + k * PG; k++)
			;
		pc_set_range(&d->pc, off / PG, k, PG_UPTODATE, PG_LOCKED);
		eio_clear_run(&d->io, off, PG, k, EXTENT_LOCKED, &c, fs->s, now);
	}
	fs->cpu_endio_ns += eio_call_ns(&c) + db->n * C_CSUM_VERIFY_NS;
	/* unlink from the in-flight list */
	for (dbio **pp = &d->reads; *pp; pp = &(*pp)->next)
		if (*pp == db) {
			*pp = db->next;
			break;
		}
	vd_dbio_free(db);
	waitq_wake_all(fs->s, &d->pc.page_waiters, now);
	vd_sample(d);
}

static void rbio_end(sim *s, bio *b)
{
	dbio *db = b->priv;
	rbio_complete(db->d, db, sim_now(s));
}

/* btrfs_lookup_bio_sums: a search of the csum tree for the leaf holding
 * the bio's first sector (its blocks read if cold). Charges t. */
static void csum_lookup(dinode *d, task *t, const dbio *db)
{
	dfs *fs = d->fs;
	bt_path p;
	bt_path_init(&p, &fs->fsi->csum_tree, t);
	bt_key k = bt_mkkey(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, db->b.offset);
	int rc = bt_search(&fs->fsi->csum_tree, &p, &k, 0, 0);
	if (rc >= 0)
		vd_tree_touch(fs, t, &p);
	bt_path_release(&p);
	task_cpu(fs->s, t, C_CSUM_LOOKUP_NS);
}

/* Submit a read bio. With sync_io it has no end_io: vd_reads_wait
 * completes it on the reader's task. */
static void rbio_submit(dinode *d, task *t, dbio *db)
{
	dfs *fs = d->fs;
	csum_lookup(d, t, db);
	db->b.end_io = fs->sync_io ? NULL : rbio_end;
	db->next = d->reads;
	d->reads = db;
	fs->data_reads++;
	fs->data_read_bytes += db->b.bytes;
	bdev_submit(fs->dev, &db->b, t->clock);
}

/* sync_io: wait on t for every read bio of d in flight, oldest first,
 * and complete it. */
static void reads_wait(dinode *d, task *t)
{
	while (d->reads) {
		dbio *db = d->reads;
		while (db->next)
			db = db->next;
		task_wait_until(t, db->b.complete);
		rbio_complete(d, db, t->clock);
	}
}

/*
 * Read the pages of a readahead window that are not cached (models
 * page_cache_ra_unbounded -> btrfs_readahead -> extent_readahead ->
 * btrfs_do_readpage): the batch is locked in the io_tree, each page maps
 * through btrfs_get_extent (an extent map, or an fs tree search that
 * creates one); hole pages are zeroed, marked UPTODATE in the io_tree
 * unless patch 1/9 is in (the leftover the patch removes) and unlocked;
 * inline data is copied from the leaf; data pages go into disk-contiguous
 * bios and stay locked until the read completes.
 */
static void ra_read_window(dfile *f, task *t, ra_window w)
{
	dinode *d = f->d;
	dfs *fs = d->fs;
	uint64_t last = d->i_size ? (d->i_size - 1) / PG : 0;
	if (!d->i_size || w.start > last)
		return;
	uint64_t end = w.start + w.nr - 1 < last ? w.start + w.nr - 1 : last;
	/* the window's pages get flags: room for them (the caller reserved
	 * only the page it reads) */
	if (pc_reserve(&d->pc, end + 1))
		return;
	fs->ra_windows++;
	dbio *db = NULL;
	/* the map the last lookup found: emap_lookup of a page inside it
	 * finds it again while the tree is unchanged (no fs tree lookup,
	 * hence no insert, since) */
	extent_map last_em = {0, 0, EM_HOLE};
	uint64_t last_em_nodes = 0; /* what a lookup in the tree charges */
	uint64_t p = w.start;
	while (p <= end) {
		if (pc_flags(&d->pc, p) & PG_PRESENT) {
			p++;
			continue;
		}
		/* a batch of absent pages */
		uint64_t q = p;
		while (q + 1 <= end && !(pc_flags(&d->pc, q + 1) & PG_PRESENT))
			q++;
		eio_call c = {0};
		uint64_t ns = 0;
		eio_set_bits(&d->io, p * PG, (q + 1) * PG - 1, EXTENT_LOCKED, 0, NULL, NULL, &c);
		for (uint64_t i = p; i <= q; i++) {
			uint64_t off = i * PG;
			/* pages that go on the bio being built, inside the map
			 * the last lookup found, are done k at a time: each
			 * would find the map again, charge the same, and join
			 * the bio until it is full */
			if (db && off - last_em.start < last_em.len &&
			    last_em.block_start != EM_HOLE &&
			    db->b.offset + db->b.bytes ==
				    last_em.block_start + (off - last_em.start)) {
				uint64_t k = q - i + 1;
				uint64_t in_em = (last_em.len - (off - last_em.start) + PG - 1) / PG;
				uint64_t in_bio = (DATA_MAX_BIO - db->b.bytes) / PG;
				if (k > in_em)
					k = in_em;
				if (k > in_bio)
					k = in_bio;
				if (k) {
					pc_set_range(&d->pc, i, k, PG_PRESENT | PG_LOCKED, 0);
					if (w.mark >= i && w.mark - i < k)
						pc_set(&d->pc, w.mark, PG_READAHEAD, 0);
					fs->ra_pages += k;
					ns += k * (C_READPAGE_NS + C_MAP_LOOKUP_NS +
						   last_em_nodes * C_EIO_NODE_NS);
					vd_dbio_add_pages(db, off, k);
					i += k - 1;
					continue;
				}
			}
			pc_set(&d->pc, i, PG_PRESENT | PG_LOCKED, 0);
			if (i == w.mark)
				pc_set(&d->pc, i, PG_READAHEAD, 0);
			fs->ra_pages++;
			ns += C_READPAGE_NS;
			/* btrfs_get_extent: the extent map, or the fs tree */
			uint64_t nodes = 0;
			const extent_map *em;
			if (off - last_em.start < last_em.len) {
				em = &last_em;
				nodes = last_em_nodes;
			} else {
				emap_tree *emt = vd_em_r(d);
				em = emap_get(emt, emap_lookup(emt, off, PG, &nodes));
				if (em) {
					last_em = *em;
					last_em_nodes = nodes;
				}
			}
			ns += C_MAP_LOOKUP_NS + nodes * C_EIO_NODE_NS;
			uint64_t disk = EM_HOLE;
			if (em) {
				if (em->block_start != EM_HOLE)
					disk = em->block_start + (off - em->start);
			} else {
				last_em.len = 0;
				fext x;
				int data = vd_fe_map(d, t, off, &x);
				if (data > 0 && x.disk == FEXT_INLINE) {
					disk = FEXT_INLINE; /* not cached as a map */
				} else if (data > 0) {
					if (vd_xw(d))
						emap_insert(&d->x->em, x.off, x.len, x.disk);
					disk = x.disk + (off - x.off);
				} else if (vd_xw(d)) {
					emap_insert(&d->x->em, x.off, x.len, EM_HOLE);
				}
				ns += C_GET_EXTENT_NS;
			}
			if (disk != EM_HOLE && disk != FEXT_INLINE) {
				if (db && (db->b.offset + db->b.bytes != disk ||
					   db->b.bytes + PG > DATA_MAX_BIO)) {
					task_cpu(fs->s, t, ns + eio_call_ns(&c));
					ns = 0;
					c = (eio_call){0};
					rbio_submit(d, t, db);
					db = NULL;
				}
				if (!db)
					db = vd_dbio_new(d, 1, disk);
				vd_dbio_add(db, off, PG);
			} else {
				/* a hole is zeroed; inline data is copied from the leaf */
				ns += C_HOLE_ZERO_NS;
				pc_set(&d->pc, i, PG_UPTODATE, PG_LOCKED);
				if (!fs_patch_on(fs->fsi, P_004_NO_HOLE_UPTODATE) || disk == FEXT_INLINE)
					eio_set_bits(&d->io, off, off + PG - 1, EXTENT_UPTODATE, 0, NULL, NULL, &c);
				eio_clear_bits(&d->io, off, off + PG - 1, EXTENT_LOCKED, NULL, &c, fs->s, t->clock);
			}
		}
		task_cpu(fs->s, t, ns + eio_call_ns(&c));
		p = q + 1;
	}
	if (db)
		rbio_submit(d, t, db);
	if (fs->sync_io)
		reads_wait(d, t);
	vd_sample(d);
}

/* One page of a read() whose request ends `req` pages on from this one
 * (filemap_get_pages passes last_index - index to page_cache_sync_ra and
 * page_cache_async_ra: the request size shapes the first window). */
static int read_page(dfile *f, task *t, uint64_t off, uint64_t req)
{
	dinode *d = f->d;
	dfs *fs = d->fs;
	uint64_t idx = off / PG;
	int rc = pc_reserve(&d->pc, idx + 1);
	if (rc)
		return rc;
	uint8_t fl = pc_flags(&d->pc, idx);
	if (!(fl & PG_PRESENT)) {
		fs->cache_misses++;
		ra_window w = ra_ondemand(&f->ra, &d->pc, idx, req, 0);
		if (w.nr == 0)
			w = (ra_window){idx, 1, UINT64_MAX};
		ra_read_window(f, t, w);
		fl = pc_flags(&d->pc, idx);
	} else if (fl & PG_READAHEAD) {
		fs->cache_hits++;
		pc_set(&d->pc, idx, 0, PG_READAHEAD);
		ra_window w = ra_ondemand(&f->ra, &d->pc, idx, req, 1);
		if (w.nr)
			ra_read_window(f, t, w);
		fl = pc_flags(&d->pc, idx);
	} else if (fl & PG_UPTODATE) {
		fs->cache_hits++;
	}
	if (!(fl & PG_UPTODATE)) {
		task_park(t, &d->pc.page_waiters);
		return 1;
	}
	f->ra.prev_index = idx;
	task_cpu(fs->s, t, C_READ_COPY_NS);
	vd_touch(d);
	dfs_shrink(fs);
	return 0;
}

int vd_read_page(dfile *f, task *t, uint64_t off)
{
	return read_page(f, t, off, 1);
}

/* The pages of [off, end) in order; with `call`, as one read() call (each
 * miss or marker passes the pages left in the call as the request), else
 * as single-page reads. */
static int read_pages(dfile *f, task *t, uint64_t off, uint64_t end, int call)
{
	dinode *d = f->d;
	dfs *fs = d->fs;
	const uint8_t want = PG_PRESENT | PG_UPTODATE;
	const uint8_t mask = want | PG_READAHEAD | PG_LOCKED;
	for (uint64_t p = off & ~(PG - 1); p < end;) {
		uint64_t idx = p / PG, last = (end - 1) / PG, n = 0;
		/* a run of cached, up-to-date pages with no readahead marker:
		 * vd_read_page of each would count a hit, copy the page and
		 * touch the inode, and only the first touch and shrink can
		 * change anything; one CPU charge of the run is the same time
		 * as one per page (task_cpu adds up) */
		uint64_t lim = last + 1 < d->pc.npages_cap ? last + 1 : d->pc.npages_cap;
		/* eight flag bytes at a time (a read parked on a page in
		 * flight starts again from its first page) */
		const uint64_t m8 = mask * 0x0101010101010101ull, w8 = want * 0x0101010101010101ull;
		int found_end = 0;
		while (idx + n + 8 <= lim) {
			uint64_t w;
			memcpy(&w, d->pc.pg + idx + n, sizeof w);
			uint64_t x = (w & m8) ^ w8;
			if (x) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
				/* the first page that differs: the lowest byte set */
				n += (uint64_t)__builtin_ctzll(x) >> 3;
				found_end = 1;
#endif
				break;
			}
			n += 8;
		}
		while (!found_end && idx + n < lim && (d->pc.pg[idx + n] & mask) == want)
			n++;
		if (n) {
			fs->cache_hits += n;
			f->ra.prev_index = idx + n - 1;
			task_cpu(fs->s, t, C_READ_COPY_NS * n);
			vd_touch(d);
			dfs_shrink(fs);
			p += n * PG;
			continue;
		}
		int rc = read_page(f, t, p, call ? last - idx + 1 : 1);
		if (rc)
			return rc;
		p += PG;
	}
	return 0;
}

/* see vfs_data.h */
int vd_read_pages(dfile *f, task *t, uint64_t off, uint64_t end)
{
	return read_pages(f, t, off, end, 0);
}

/* see vfs_data.h */
int vd_read_call(dfile *f, task *t, uint64_t off, uint64_t end)
{
	return read_pages(f, t, off, end, 1);
}
