/*
 * vfs_data.c - buffered write, read with readahead, writeback and
 * ordered-extent completion, remount (see vfs_data.h).
 */
#include "vfs_data.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "costs.h"
#include "items.h"
#include "lab.h"

#define PG PC_PAGE

static uint64_t round_up_pg(uint64_t x) { return (x + PG - 1) & ~(PG - 1); }

/* ------------------------------------------------------------------ */
/* the fs tree's file extent items and the csum tree, as blocks        */

uint64_t vd_fe_first_after(const dinode *d, uint64_t off)
{
	uint64_t lo = 0, hi = d->nfe;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (d->fe[mid].off + d->fe[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Insert a file extent item (finish_ordered_io); items arrive nearly in
 * file order, so this is an append almost always. */
static int fe_insert(dinode *d, uint64_t off, uint64_t len, uint64_t disk)
{
	if (d->nfe == d->fecap) {
		uint64_t nc = d->fecap ? d->fecap * 2 : 256;
		fext *n = realloc(d->fe, nc * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		d->fe = n;
		d->fecap = nc;
	}
	uint64_t i = vd_fe_first_after(d, off);
	memmove(d->fe + i + 1, d->fe + i, (d->nfe - i) * sizeof(*d->fe));
	d->fe[i] = (fext){off, len, disk};
	d->nfe++;
	return 0;
}

/* Mark a block of level `lv`, index `idx` cached; returns 1 if it was
 * cold (so the caller reads it). */
static int meta_touch(uint8_t **map, uint64_t *cap, uint64_t idx)
{
	if (idx >= *cap) {
		uint64_t nc = *cap ? *cap : 64;
		while (nc <= idx)
			nc *= 2;
		uint8_t *n = realloc(*map, nc);
		assert(n);
		memset(n + *cap, 0, nc - *cap);
		*map = n;
		*cap = nc;
	}
	if ((*map)[idx])
		return 0;
	(*map)[idx] = 1;
	return 1;
}

/* Read one 16 KiB tree block at `addr` synchronously on t. */
static void meta_read(dfs *fs, task *t, uint64_t addr)
{
	simtime_t done = bdev_io(fs->dev, BIO_READ, addr, BT_NODESIZE, t->clock);
	task_wait_until(t, done);
	fs->metadata_reads++;
}

static uint32_t log2_ceil(uint64_t n)
{
	uint32_t d = 0;
	while ((1ull << d) < n)
		d++;
	return d;
}

uint64_t vd_fst_search(dinode *d, task *t, uint64_t idx, uint64_t *nodes)
{
	dfs *fs = d->fs;
	uint64_t nleaves = d->nfe ? (d->nfe + FE_PER_LEAF - 1) / FE_PER_LEAF : 1;
	uint64_t leaf = idx < d->nfe ? idx / FE_PER_LEAF : nleaves - 1;
	/* levels: the leaves and the nodes above them */
	int h = 1;
	for (uint64_t w = nleaves; w > 1 && h < FST_MAX_LEVEL; h++)
		w = (w + FST_NODE_PTRS - 1) / FST_NODE_PTRS;
	static const uint64_t step_ns = BT_NS_NODE_VISIT; /* + binary search below */
	uint64_t ns = (uint64_t)h * step_ns +
		      (log2_ceil(FE_PER_LEAF) + (uint64_t)(h - 1) * log2_ceil(FST_NODE_PTRS)) *
			      BT_NS_BSEARCH_STEP;
	if (fs->meta_cold) {
		uint64_t per = 1;
		for (int lv = 0; lv < h; lv++) {
			uint64_t at = leaf / per;
			if (meta_touch(&fs->fst_cached[lv], &fs->fst_cap[lv], at))
				meta_read(fs, t, fs->meta_base + ((uint64_t)lv << 32) + at * BT_NODESIZE);
			per *= FST_NODE_PTRS;
		}
	}
	if (nodes)
		*nodes += (uint64_t)h;
	fs->fst_nodes_visited += (uint64_t)h;
	task_cpu(fs->s, t, ns);
	return ns;
}

/* ------------------------------------------------------------------ */

int dfs_init(dfs *fs, sim *s, bdev *dev, const data_opts *o)
{
	memset(fs, 0, sizeof(*fs));
	fs->s = s;
	fs->dev = dev;
	fs->o = *o;
	fs->data_alloc = 1ull << 30;   /* the first data block group */
	fs->meta_base = 256ull << 20;  /* metadata block group */
	fs->csum_base = 512ull << 20;
	fs->series_iotree = sim_series_id(s, "iotree_records");
	fs->series_delalloc = sim_series_id(s, "delalloc_extents");
	return 0;
}

static void dbio_free(dbio *b)
{
	free(b->offs);
	free(b);
}

void dfs_destroy(dfs *fs)
{
	for (int i = 0; i < fs->ninodes; i++) {
		dinode *d = fs->inodes[i];
		eio_destroy(&d->io);
		emap_destroy(&d->em);
		ordered_destroy(&d->oe);
		pc_destroy(&d->pc);
		free(d->fe);
		if (d->wb_bio)
			dbio_free(d->wb_bio);
		/* bios still in flight when a run ends */
		for (dbio *b = d->reads, *nx; b; b = nx) {
			nx = b->next;
			dbio_free(b);
		}
		for (dbio *b = d->writes, *nx; b; b = nx) {
			nx = b->next;
			dbio_free(b);
		}
		free(d);
	}
	for (int l = 0; l < FST_MAX_LEVEL; l++)
		free(fs->fst_cached[l]);
	free(fs->csum_cached);
	/* in-flight bios still own memory through their end_io events; the
	 * simulator is freed with them pending only if a run is cut short */
}

int dfs_inode_new(dfs *fs, dinode **out)
{
	if (fs->ninodes >= (int)(sizeof(fs->inodes) / sizeof(fs->inodes[0])))
		return LAB_ENOMEM;
	dinode *d = calloc(1, sizeof(*d));
	if (!d)
		return LAB_ENOMEM;
	d->fs = fs;
	d->ino = 257 + (uint64_t)fs->ninodes;
	eio_init(&d->io);
	emap_init(&d->em);
	ordered_init(&d->oe);
	pc_init(&d->pc);
	fs->inodes[fs->ninodes++] = d;
	*out = d;
	return 0;
}

void dfile_open(dfile *f, dinode *d, int seq)
{
	memset(f, 0, sizeof(*f));
	f->d = d;
	ra_init(&f->ra, BDI_RA_PAGES, seq);
}

void dfile_close(dfile *f)
{
	if (f->llseek_cached)
		eio_state_put(&f->d->io, f->llseek_cached);
	f->llseek_cached = NULL;
}

static void sample(dinode *d)
{
	dfs *fs = d->fs;
	simtime_t now = sim_now(fs->s);
	sim_series_add(fs->s, fs->series_iotree, now, (double)d->io.nrecords);
	sim_series_add(fs->s, fs->series_delalloc, now,
		       (double)(d->delalloc_bytes / PG));
}

/* ------------------------------------------------------------------ */
/* buffered write                                                      */

int vd_write(dinode *d, task *t, uint64_t off, uint64_t len)
{
	dfs *fs = d->fs;
	assert(len > 0 && off % PG == 0 && len % PG == 0);
	uint64_t first = off / PG, n = len / PG;
	int rc = pc_reserve(&d->pc, first + n);
	if (rc)
		return rc;
	eio_call c = {0};
	uint32_t bits = EXTENT_DELALLOC;
	if (off >= d->i_size)
		bits |= EXTENT_DELALLOC_NEW;
	/* pages already dirty carry DELALLOC already */
	uint64_t newly = 0;
	for (uint64_t i = first; i < first + n; i++) {
		if (!(d->pc.pg[i] & PG_DIRTY))
			newly++;
		pc_set(&d->pc, i, PG_PRESENT | PG_UPTODATE | PG_DIRTY, 0);
	}
	/* writing past EOF with a gap: btrfs_cont_expand maps the gap as a
	 * hole (an extent map; no item with NO_HOLES) */
	uint64_t eof = (d->i_size + PG - 1) & ~(PG - 1);
	uint64_t extra_ns = 0;
	if (off > eof) {
		emap_insert(&d->em, eof, off - eof, EM_HOLE);
		extra_ns += C_GET_EXTENT_NS;
	}
	uint64_t before = d->io.bytes_with[1];
	eio_set_bits(&d->io, off, off + len - 1, bits, 0, NULL, NULL, &c);
	d->delalloc_bytes += d->io.bytes_with[1] - before;
	if (off + len > d->i_size)
		d->i_size = off + len;
	if (!d->pc.is_dirty) {
		d->pc.is_dirty = 1;
		d->pc.dirtied_when = t->clock;
	}
	task_cpu(fs->s, t, n * C_WRITE_PAGE_NS + extra_ns + eio_call_ns(&c));
	(void)newly;
	sample(d);
	return 0;
}

/* ------------------------------------------------------------------ */
/* writeback                                                           */

static void wbio_end(sim *s, bio *b);

static dbio *dbio_new(dinode *d, int read, uint64_t disk)
{
	dbio *db = calloc(1, sizeof(*db));
	assert(db);
	db->d = d;
	db->read = read;
	db->b.op = read ? BIO_READ : BIO_WRITE;
	db->b.offset = disk;
	db->b.sequential = 1;
	db->b.priv = db;
	return db;
}

static void dbio_add(dbio *db, uint64_t off, uint64_t bytes)
{
	if (db->n == db->cap) {
		db->cap = db->cap ? db->cap * 2 : 64;
		db->offs = realloc(db->offs, db->cap * sizeof(*db->offs));
		assert(db->offs);
	}
	db->offs[db->n++] = off;
	db->b.bytes += bytes;
}

static void wb_submit(dinode *d, simtime_t at)
{
	dbio *db = d->wb_bio;
	if (!db)
		return;
	d->wb_bio = NULL;
	db->b.end_io = wbio_end;
	d->wb_inflight++;
	db->next = d->writes;
	d->writes = db;
	d->fs->data_writes++;
	d->fs->data_write_bytes += db->b.bytes;
	bdev_submit(d->fs->dev, &db->b, at);
}

/* Bio completion: finish_ordered_io for each extent in it (the endio
 * workers' CPU is counted, not put on any task's timeline). */
static void wbio_end(sim *s, bio *b)
{
	dbio *db = b->priv;
	dinode *d = db->d;
	dfs *fs = d->fs;
	eio_call c = {0};
	for (uint32_t i = 0; i < db->n; i++) {
		uint64_t off = db->offs[i];
		uint64_t oi = vd_fe_first_after(d, off);
		(void)oi;
		int64_t k = ordered_lookup_range(&d->oe, off, 1, NULL);
		assert(k >= 0);
		ordered_extent oe = d->oe.v[k];
		int rc = fe_insert(d, oe.file_off, oe.len, oe.disk_bytenr);
		assert(rc == 0);
		(void)rc;
		d->nbytes += oe.len;
		eio_clear_bits(&d->io, oe.file_off, oe.file_off + oe.len - 1,
			       EXTENT_DELALLOC_NEW, NULL, &c, NULL, 0);
		ordered_remove(&d->oe, oe.file_off);
		for (uint64_t p = oe.file_off / PG; p < (oe.file_off + oe.len) / PG; p++)
			pc_set(&d->pc, p, 0, PG_WRITEBACK);
		fs->ordered_done++;
		fs->cpu_endio_ns += C_FINISH_ORDERED_NS;
	}
	fs->cpu_endio_ns += eio_call_ns(&c);
	d->wb_inflight--;
	for (dbio **pp = &d->writes; *pp; pp = &(*pp)->next)
		if (*pp == db) {
			*pp = db->next;
			break;
		}
	dbio_free(db);
	sample(d);
	if (vd_clean(d) || !d->wb_active)
		waitq_wake_all(s, &d->wb_waiters, sim_now(s));
}

int vd_clean(const dinode *d)
{
	return d->pc.dirty == 0 && d->oe.n == 0 && d->wb_inflight == 0 && !d->wb_active;
}

/*
 * One step of writepages: flush the next delalloc range at or after
 * wb_index (models extent_write_cache_pages -> writepage_delalloc ->
 * find_lock_delalloc_range + cow_file_range, then bio submission).
 */
static int wb_one(sim *s, task *t);

/* Writeback runs extent by extent; while no lseek holds a range lock
 * nothing can interleave with it, so several extents go in one step. */
static int wb_step(sim *s, task *t)
{
	dinode *d = t->ctx;
	for (int i = 0; i < 64; i++) {
		int r = wb_one(s, t);
		if (r != TASK_RUN || d->lseek_lock_until > t->clock ||
		    sim_now(s) + NS_PER_MS < t->clock)
			return r;
	}
	return TASK_RUN;
}

static int wb_one(sim *s, task *t)
{
	dinode *d = t->ctx;
	dfs *fs = d->fs;
	eio_call c = {0};
	uint64_t ds, de;
	if (eio_find_first_bit(&d->io, d->wb_index, EXTENT_DELALLOC, &ds, &de, &c)) {
		task_cpu(s, t, eio_call_ns(&c));
		fs->cpu_wb_ns += eio_call_ns(&c);
		wb_submit(d, t->clock);
		d->wb_active = 0;
		d->wb_task = NULL;
		if (d->pc.dirty == 0) {
			d->pc.is_dirty = 0;
		} else {
			/* redirty_tail: pages dirtied during the pass */
			d->pc.dirtied_when = t->clock;
		}
		if (vd_clean(d))
			waitq_wake_all(s, &d->wb_waiters, t->clock);
		return TASK_DONE;
	}
	/*
	 * An lseek holds [start, EOF] over this range. If its lock sweep has
	 * not reached this extent yet, writeback locks it first and the sweep
	 * will wait for it (the lseek ends later); else wait for the unlock.
	 */
	int ahead_of_sweep = 0;
	if (d->lseek_lock_until > t->clock && d->lseek_lock_start <= de) {
		uint64_t before = 0, adj;
		if (ds > d->lseek_lock_start)
			eio_range_counts(&d->io, d->lseek_lock_start, ds - 1, &before, &adj);
		simtime_t reach = d->lock_t0 + d->lock_delay;
		if (d->lock_recs)
			reach += (simtime_t)((double)(d->lock_t1 - d->lock_t0) *
					     (double)before / (double)d->lock_recs);
		if (t->clock >= reach) {
			task_wait_until(t, d->lseek_lock_until + vd_wakeup_ns(fs));
			return TASK_RUN;
		}
		ahead_of_sweep = 1;
	}
	/* the range lock, cow_file_range, and the unlock clearing DELALLOC */
	uint64_t fail;
	int busy = eio_set_bits(&d->io, ds, de, EXTENT_LOCKED, EXTENT_LOCKED, &fail, NULL, &c);
	assert(!busy);
	(void)busy;
	uint64_t len = de - ds + 1;
	uint64_t disk = fs->data_alloc;
	fs->data_alloc += len;
	emap_insert(&d->em, ds, len, disk);
	ordered_add(&d->oe, ds, len, disk);
	eio_clear_bits(&d->io, ds, de, EXTENT_DELALLOC | EXTENT_LOCKED, NULL, &c, s, t->clock);
	assert(d->delalloc_bytes >= len);
	d->delalloc_bytes -= len;
	for (uint64_t p = ds / PG; p <= de / PG; p++)
		pc_set(&d->pc, p, PG_WRITEBACK, PG_DIRTY);
	if (d->wb_bio && (d->wb_bio->b.offset + d->wb_bio->b.bytes != disk ||
			  d->wb_bio->b.bytes + len > DATA_MAX_BIO))
		wb_submit(d, t->clock);
	if (!d->wb_bio)
		d->wb_bio = dbio_new(d, 0, disk);
	dbio_add(d->wb_bio, ds, len);
	uint64_t ns = C_COW_EXTENT_NS + eio_call_ns(&c);
	d->wb_lock_off = ds;
	d->wb_lock_until = t->clock + ns;
	if (ahead_of_sweep) {
		/* the sweep sleeps on this extent until writeback unlocks it */
		simtime_t hold = ns + vd_wakeup_ns(fs);
		d->lock_delay += hold;
		d->lseek_lock_until += hold;
	}
	task_cpu(s, t, ns);
	fs->cpu_wb_ns += ns;
	fs->wb_extents++;
	d->wb_index = de + 1;
	return TASK_RUN;
}

void vd_writeback_start(dinode *d, int sync)
{
	if (sync)
		d->wb_sync = 1;
	if (d->wb_active)
		return;
	d->wb_active = 1;
	d->wb_index = 0;
	d->fs->flushes++;
	d->wb_task = task_spawn(d->fs->s, "writeback", wb_step, d, sim_now(d->fs->s));
	assert(d->wb_task);
}

/* The flusher thread's periodic wakeup (wb_workfn, kupdate style): write
 * back inodes dirty for longer than the expiry, or everything dirty when
 * over the background threshold. */
static void flusher_tick(sim *s, void *arg)
{
	dfs *fs = arg;
	uint64_t dirty = 0;
	for (int i = 0; i < fs->ninodes; i++)
		dirty += fs->inodes[i]->pc.dirty * PG;
	for (int i = 0; i < fs->ninodes; i++) {
		dinode *d = fs->inodes[i];
		if (!d->pc.is_dirty || d->pc.dirty == 0)
			continue;
		if (sim_now(s) - d->pc.dirtied_when >= fs->o.dirty_expire ||
		    dirty > fs->o.dirty_bg_bytes)
			vd_writeback_start(d, 0);
	}
	if (fs->flusher_armed)
		sim_after(s, fs->o.wb_interval, flusher_tick, fs);
}

void dfs_start_flusher(dfs *fs)
{
	if (fs->flusher_armed)
		return;
	fs->flusher_armed = 1;
	sim_after(fs->s, fs->o.wb_interval, flusher_tick, fs);
}

/* ------------------------------------------------------------------ */
/* reads and readahead                                                 */

static void rbio_end(sim *s, bio *b)
{
	dbio *db = b->priv;
	dinode *d = db->d;
	dfs *fs = d->fs;
	eio_call c = {0};
	for (uint32_t i = 0; i < db->n; i++) {
		uint64_t off = db->offs[i];
		pc_set(&d->pc, off / PG, PG_UPTODATE, PG_LOCKED);
		/* end_bio_extent_readpage: unlock the page's range */
		eio_clear_bits(&d->io, off, off + PG - 1, EXTENT_LOCKED, NULL, &c, s, sim_now(s));
	}
	fs->cpu_endio_ns += eio_call_ns(&c) + db->n * C_CSUM_VERIFY_NS;
	/* unlink from the in-flight list */
	for (dbio **pp = &d->reads; *pp; pp = &(*pp)->next)
		if (*pp == db) {
			*pp = db->next;
			break;
		}
	dbio_free(db);
	waitq_wake_all(s, &d->pc.page_waiters, sim_now(s));
	sample(d);
}

static void rbio_submit(dinode *d, task *t, dbio *db)
{
	dfs *fs = d->fs;
	/* btrfs_lookup_bio_sums: the csum tree leaf for the range */
	uint64_t per_leaf = CSUM_MAX_BYTES / SZ_CSUM_PER_SECTOR;
	uint64_t s0 = db->b.offset / PG / per_leaf;
	uint64_t s1 = (db->b.offset + db->b.bytes - 1) / PG / per_leaf;
	for (uint64_t l = s0; l <= s1; l++)
		if (fs->meta_cold && meta_touch(&fs->csum_cached, &fs->csum_cap, l))
			meta_read(fs, t, fs->csum_base + l * BT_NODESIZE);
	task_cpu(fs->s, t, C_CSUM_LOOKUP_NS);
	db->b.end_io = rbio_end;
	db->next = d->reads;
	d->reads = db;
	fs->data_reads++;
	fs->data_read_bytes += db->b.bytes;
	bdev_submit(fs->dev, &db->b, t->clock);
}

/*
 * Read the pages of a readahead window that are not cached (models
 * page_cache_ra_unbounded -> btrfs_readahead -> extent_readahead ->
 * btrfs_do_readpage): the batch is locked in the io_tree, each page maps
 * through btrfs_get_extent (an extent map, or an fs tree search that
 * creates one); hole pages are zeroed, marked UPTODATE in the io_tree
 * unless patch 1/9 is in (the leftover the patch removes) and unlocked;
 * data pages go into disk-contiguous bios and stay locked until the read
 * completes.
 */
static void ra_read_window(dfile *f, task *t, ra_window w)
{
	dinode *d = f->d;
	dfs *fs = d->fs;
	uint64_t last = d->i_size ? (d->i_size - 1) / PG : 0;
	if (!d->i_size || w.start > last)
		return;
	uint64_t end = w.start + w.nr - 1 < last ? w.start + w.nr - 1 : last;
	fs->ra_windows++;
	dbio *db = NULL;
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
			pc_set(&d->pc, i, PG_PRESENT | PG_LOCKED, 0);
			if (i == w.mark)
				pc_set(&d->pc, i, PG_READAHEAD, 0);
			fs->ra_pages++;
			ns += C_READPAGE_NS;
			/* btrfs_get_extent: the extent map, or the fs tree */
			uint64_t nodes = 0;
			const extent_map *em = emap_get(&d->em, emap_lookup(&d->em, off, PG, &nodes));
			ns += C_MAP_LOOKUP_NS + nodes * C_EIO_NODE_NS;
			uint64_t fi = vd_fe_first_after(d, off);
			int data = fi < d->nfe && d->fe[fi].off <= off;
			if (!em) {
				vd_fst_search(d, t, fi, NULL);
				if (data)
					emap_insert(&d->em, d->fe[fi].off, d->fe[fi].len, d->fe[fi].disk);
				else
					emap_insert(&d->em, off,
						    (fi < d->nfe ? d->fe[fi].off : round_up_pg(d->i_size)) - off,
						    EM_HOLE);
				ns += C_GET_EXTENT_NS;
			}
			if (data) {
				uint64_t disk = d->fe[fi].disk + (off - d->fe[fi].off);
				if (db && (db->b.offset + db->b.bytes != disk ||
					   db->b.bytes + PG > DATA_MAX_BIO)) {
					task_cpu(fs->s, t, ns + eio_call_ns(&c));
					ns = 0;
					c = (eio_call){0};
					rbio_submit(d, t, db);
					db = NULL;
				}
				if (!db)
					db = dbio_new(d, 1, disk);
				dbio_add(db, off, PG);
			} else {
				ns += C_HOLE_ZERO_NS;
				pc_set(&d->pc, i, PG_UPTODATE, PG_LOCKED);
				if (!fs->o.p1_no_hole_uptodate)
					eio_set_bits(&d->io, off, off + PG - 1, EXTENT_UPTODATE, 0, NULL, NULL, &c);
				eio_clear_bits(&d->io, off, off + PG - 1, EXTENT_LOCKED, NULL, &c, fs->s, t->clock);
			}
		}
		task_cpu(fs->s, t, ns + eio_call_ns(&c));
		p = q + 1;
	}
	if (db)
		rbio_submit(d, t, db);
	sample(d);
}

int vd_read_page(dfile *f, task *t, uint64_t off)
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
		ra_window w = ra_ondemand(&f->ra, &d->pc, idx, 1, 0);
		if (w.nr == 0)
			w = (ra_window){idx, 1, UINT64_MAX};
		ra_read_window(f, t, w);
		fl = pc_flags(&d->pc, idx);
	} else if (fl & PG_READAHEAD) {
		fs->cache_hits++;
		pc_set(&d->pc, idx, 0, PG_READAHEAD);
		ra_window w = ra_ondemand(&f->ra, &d->pc, idx, 1, 1);
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
	return 0;
}

/* ------------------------------------------------------------------ */
/* fsync and truncate                                                  */

int vd_fsync(dinode *d, task *t)
{
	if (vd_clean(d))
		return 0;
	if (d->pc.dirty && !d->wb_active)
		vd_writeback_start(d, 1);
	task_park(t, &d->wb_waiters);
	return 1;
}

int vd_truncate(dinode *d, task *t, uint64_t new_size)
{
	dfs *fs = d->fs;
	if (new_size >= d->i_size) {
		d->i_size = new_size;
		return 0;
	}
	uint64_t from = (new_size + PG - 1) & ~(PG - 1);
	/* pages of the range under writeback: wait for their IO (as
	 * truncate_inode_pages waits on writeback) */
	for (uint64_t p = from / PG; p < d->pc.npages_cap; p++) {
		if (d->pc.pg[p] & PG_WRITEBACK) {
			task_park(t, &d->wb_waiters);
			return 1;
		}
	}
	eio_call c = {0};
	for (uint64_t p = from / PG; p < d->pc.npages_cap; p++)
		if (d->pc.pg[p] & PG_PRESENT)
			pc_set(&d->pc, p, 0, 0xff);
	if (d->i_size > from) {
		uint64_t before = d->io.bytes_with[1];
		eio_clear_bits(&d->io, from, EIO_OFF_MAX - 1,
			       EXTENT_DELALLOC | EXTENT_DELALLOC_NEW | EXTENT_UPTODATE,
			       NULL, &c, fs->s, t->clock);
		d->delalloc_bytes -= before - d->io.bytes_with[1];
	}
	emap_drop_from(&d->em, from);
	/* the file extent items past the end go, one crossing it is trimmed */
	uint64_t i = vd_fe_first_after(d, from);
	if (i < d->nfe && d->fe[i].off < from) {
		d->nbytes -= d->fe[i].off + d->fe[i].len - from;
		d->fe[i].len = from - d->fe[i].off;
		i++;
	}
	for (uint64_t k = i; k < d->nfe; k++)
		d->nbytes -= d->fe[k].len;
	uint64_t dropped = d->nfe - i;
	d->nfe = i;
	d->i_size = new_size;
	if (d->wb_index > from)
		d->wb_index = from;
	task_cpu(fs->s, t, eio_call_ns(&c) + dropped * C_FINISH_ORDERED_NS / 4);
	sample(d);
	return 0;
}

/* ------------------------------------------------------------------ */

void dfs_remount(dfs *fs)
{
	for (int i = 0; i < fs->ninodes; i++) {
		dinode *d = fs->inodes[i];
		assert(vd_clean(d));
		eio_destroy(&d->io);
		eio_init(&d->io);
		emap_clear(&d->em);
		pc_drop_clean(&d->pc);
		d->pc.is_dirty = 0;
	}
	for (int l = 0; l < FST_MAX_LEVEL; l++)
		if (fs->fst_cached[l])
			memset(fs->fst_cached[l], 0, fs->fst_cap[l]);
	if (fs->csum_cached)
		memset(fs->csum_cached, 0, fs->csum_cap);
	fs->meta_cold = 1;
}

simtime_t vd_wakeup_ns(dfs *fs)
{
	return (simtime_t)prng_exponential(sim_prng(fs->s), (double)C_WAKEUP_NS);
}

int vd_check(const dinode *d)
{
	int bad = eio_check(&d->io);
	if (d->delalloc_bytes != d->io.bytes_with[1])
		bad++;
	for (uint64_t i = 1; i < d->nfe; i++)
		if (d->fe[i - 1].off + d->fe[i - 1].len > d->fe[i].off)
			bad++;
	return bad;
}
