/*
 * vfs_data.c - buffered write, writeback and ordered-extent completion,
 * the flusher, fsync, truncate, remount (see vfs_data.h); reads and
 * readahead are in vfs_data_read.c.
 * Where the file extent items live (the array model or the real fs tree)
 * is vfs_data_items.c's business.
 */
#include "vfs_data.h"
#include "vfs_data_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "backref.h"
#include "btree.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "trans.h"
#include "labmem.h"


/* ------------------------------------------------------------------ */

/* Recording (sim.h): every inode's io_tree as it is. */
static void dfs_rec_dump(sim *s, void *ctx)
{
	dfs *fs = ctx;
	(void)s;
	dfs_inodes_compact(fs);
	for (int i = 0; i < fs->ninodes; i++)
		eio_rec_dump(&fs->inodes[i]->io);
}

int dfs_init(dfs *fs, sim *s, bdev *dev, const data_opts *o, const patchset *patches)
{
	memset(fs, 0, sizeof(*fs));
	if (s) {
		fs->rec_fs = sim_rec_fsno(s);
		if (sim_rec_dumper(s, dfs_rec_dump, fs))
			return LAB_ENOMEM;
	}
	fs->s = s;
	fs->dev = dev;
	fs->o = *o;
	fs->patches = patches;
	lab_pool_init(&fs->dinode_pool, sizeof(dinode), 256);
	lab_pool_init(&fs->x_pool, sizeof(dinode_x), 64);
	lab_pool_init(&fs->eio_pool, sizeof(extent_state), 512);
	lab_pool_init(&fs->emap_pool, EMAP_SMALL_BYTES, 256);
	lab_pool_init(&fs->oe_pool, ORDERED_SMALL * sizeof(ordered_extent), 256);
	pc_pools_init(&fs->pcg);
	fs->data_alloc = 1ull << 30;   /* the first data block group */
	fs->meta_base = 256ull << 20;  /* metadata block group */
	fs->csum_base = 512ull << 20;
	fs->series_iotree = sim_series_id(s, "iotree_records");
	fs->series_delalloc = sim_series_id(s, "delalloc_extents");
	fs->series_ordered = sim_series_id(s, "ordered_extents");
	return 0;
}

dinode_x *vd_xw(dinode *d)
{
	if (!d->x) {
		d->x = lab_pool_zalloc(&d->fs->x_pool);
		if (d->x) {
			emap_set_pool(&d->x->em, &d->fs->emap_pool);
			ordered_set_pool(&d->x->oe, &d->fs->oe_pool);
		}
	}
	return d->x;
}

waitq *vd_wb_waiters(dinode *d)
{
	assert(d->x);
	return &d->x->wb_waiters;
}

/* An empty tree of each kind for lookups in a dinode without its x: a
 * lookup on an empty tree reads nothing and writes nothing. */
static emap_tree no_em;
static ordered_tree no_oe;

emap_tree *vd_em_r(dinode *d)
{
	return d->x ? &d->x->em : &no_em;
}

ordered_tree *vd_oe_r(dinode *d)
{
	return d->x ? &d->x->oe : &no_oe;
}

/* see vfs_data_int.h */
void vd_dbio_free(dbio *b)
{
	dfs *fs = b->d->fs;
	b->next = fs->dbio_free;
	fs->dbio_free = b;
}

static void space_note(dinode *d, simtime_t at, int evict);

/* ---- the b_dirty list and the inode LRU (intrusive, in the inodes) */

static void dirty_del(dinode *d)
{
	dfs *fs = d->fs;
	if (!d->dprev && fs->dirty_head != d)
		return;
	if (d->dprev)
		d->dprev->dnext = d->dnext;
	else
		fs->dirty_head = d->dnext;
	if (d->dnext)
		d->dnext->dprev = d->dprev;
	else
		fs->dirty_tail = d->dprev;
	d->dnext = d->dprev = NULL;
}

/* d (re)joins b_dirty at the tail, dirtied at `when` (__mark_inode_dirty
 * for a clean inode; redirty_tail after a pass that left pages dirty). */
static void dirty_add(dinode *d, simtime_t when)
{
	dfs *fs = d->fs;
	dirty_del(d);
	d->pc.is_dirty = 1;
	d->pc.dirtied_when = when;
	d->dprev = fs->dirty_tail;
	if (fs->dirty_tail)
		fs->dirty_tail->dnext = d;
	else
		fs->dirty_head = d;
	fs->dirty_tail = d;
}

/* No dirty page is left: d leaves b_dirty. */
static void dirty_clear(dinode *d)
{
	d->pc.is_dirty = 0;
	dirty_del(d);
}

static void lru_del(dinode *d)
{
	dfs *fs = d->fs;
	if (!d->lprev && fs->lru_head != d)
		return;
	if (d->lprev)
		d->lprev->lnext = d->lnext;
	else
		fs->lru_head = d->lnext;
	if (d->lnext)
		d->lnext->lprev = d->lprev;
	else
		fs->lru_tail = d->lprev;
	d->lnext = d->lprev = NULL;
}

/* see vfs_data_int.h */
void vd_touch(dinode *d)
{
	dfs *fs = d->fs;
	pc_touch(&d->pc);
	if (fs->lru_tail == d)
		return; /* the most recently used already (read() after read()) */
	lru_del(d);
	d->lprev = fs->lru_tail;
	if (fs->lru_tail)
		fs->lru_tail->lnext = d;
	else
		fs->lru_head = d;
	fs->lru_tail = d;
}

static void dinode_free(dinode *d)
{
	dirty_del(d);
	lru_del(d);
	eio_destroy(&d->io);
	if (d->x) {
		if (d->x->wb_bio)
			vd_dbio_free(d->x->wb_bio);
		/* bios still in flight when a run ends */
		for (dbio *b = d->x->writes, *nx; b; b = nx) {
			nx = b->next;
			vd_dbio_free(b);
		}
		emap_destroy(&d->x->em);
		ordered_destroy(&d->x->oe);
		free(d->x->fe);
		lab_pool_free(&d->fs->x_pool, d->x);
		d->x = NULL;
	}
	pc_destroy(&d->pc);
	for (dbio *b = d->reads, *nx; b; b = nx) {
		nx = b->next;
		vd_dbio_free(b);
	}
	lab_pool_free(&d->fs->dinode_pool, d);
}

void dfs_destroy(dfs *fs)
{
	if (fs->s)
		sim_rec_dumper_remove(fs->s, fs);
	free(fs->chk_list);
	fs->chk_list = NULL;
	fs->chk_n = fs->chk_cap = 0;
	dfs_inodes_compact(fs);
	for (int i = 0; i < fs->ninodes; i++)
		dinode_free(fs->inodes[i]);
	for (dbio *b = fs->dbio_free, *nx; b; b = nx) {
		nx = b->next;
		free(b->offs);
		free(b);
	}
	fs->dbio_free = NULL;
	lab_pool_destroy(&fs->dinode_pool);
	lab_pool_destroy(&fs->x_pool);
	lab_pool_destroy(&fs->eio_pool);
	lab_pool_destroy(&fs->emap_pool);
	lab_pool_destroy(&fs->oe_pool);
	pc_pools_destroy(&fs->pcg);
	free(fs->inodes);
	fs->inodes = NULL;
	fs->ninodes = fs->inodes_len = 0;
	for (int l = 0; l < FST_MAX_LEVEL; l++)
		free(fs->fst_cached[l]);
	free(fs->csum_cached);
	free(fs->warm);
	fs->warm = NULL;
	/* in-flight bios still own memory through their end_io events; the
	 * simulator is freed with them pending only if a run is cut short */
}

void dfs_inodes_compact(dfs *fs)
{
	if (fs->ninodes == fs->inodes_len)
		return;
	int j = 0;
	for (int i = 0; i < fs->inodes_len; i++) {
		dinode *d = fs->inodes[i];
		if (!d)
			continue;
		if (j != i) {
			fs->inodes[j] = d;
			d->slot = (uint32_t)j;
		}
		j++;
	}
	assert(j == fs->ninodes);
	fs->inodes_len = j;
}

/* A new dinode appended to fs->inodes. */
static int dinode_add(dfs *fs, uint64_t ino, dinode **out)
{
	if (fs->inodes_len == fs->inodes_cap && fs->ninodes < fs->inodes_len)
		dfs_inodes_compact(fs);
	if (fs->inodes_len == fs->inodes_cap) {
		int nc = fs->inodes_cap ? fs->inodes_cap * 2 : 8;
		dinode **n = lab_realloc(fs->inodes, (size_t)nc * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		fs->inodes = n;
		fs->inodes_cap = nc;
	}
	dinode *d = lab_pool_zalloc(&fs->dinode_pool);
	if (!d)
		return LAB_ENOMEM;
	d->fs = fs;
	d->ino = ino;
	eio_init(&d->io);
	eio_set_pool(&d->io, &fs->eio_pool);
	eio_rec_attach(&d->io, fs->s, fs->rec_fs, (int64_t)ino);
	pc_init(&d->pc);
	space_inode_rsv_init(&d->sp_rsv);
	d->pc.g = &fs->pcg;
	vd_touch(d);
	d->slot = (uint32_t)fs->inodes_len;
	fs->inodes[fs->inodes_len++] = d;
	fs->ninodes++;
	*out = d;
	return 0;
}

int dfs_inode_new(dfs *fs, dinode **out)
{
	return dinode_add(fs, 257 + (uint64_t)fs->ninodes, out);
}

int dfs_inode_attach(dfs *fs, struct inode *inode, dinode **out)
{
	int rc = dinode_add(fs, inode->ino, out);
	if (rc)
		return rc;
	(*out)->inode = inode;
	(*out)->i_size = inode->size;
	(*out)->nbytes = inode->nbytes;
	vd_chk_touch(*out);
	return 0;
}

void dfs_inode_evict(dfs *fs, dinode *d)
{
	space_note(d, sim_now(fs->s), 1);
	d->sp_gone = 1;
	d->inode = NULL;
	dirty_del(d);
	if (d->reads || d->wb_active || (d->x && (d->x->writes || d->x->wb_bio)))
		return; /* freed by dfs_destroy; its completions skip the trees */
	/* gone for the checker too: what it counted d holding (evicted, it
	 * holds nothing) leaves the sums, d leaves the touched list */
	fs->chk_held[0] -= d->chk_held[0];
	fs->chk_held[1] -= d->chk_held[1];
	fs->chk_listed -= (uint64_t)d->chk_listed;
	uint32_t i = d->chk_slot;
	if (d->chk_touched && i < (uint32_t)fs->chk_n && fs->chk_list[i] == d) {
		fs->chk_list[i] = fs->chk_list[--fs->chk_n];
		fs->chk_list[i]->chk_slot = i;
	}
	uint32_t at = d->slot;
	if (at < (uint32_t)fs->inodes_len && fs->inodes[at] == d) {
		fs->inodes[at] = NULL;
		fs->ninodes--;
		/* holes never outnumber the live inodes: a walk's compaction
		 * stays in proportion to the work it saved */
		if (fs->inodes_len - fs->ninodes > fs->ninodes)
			dfs_inodes_compact(fs);
	}
	fs->delalloc_total -= d->delalloc_bytes;
	dinode_free(d);
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

/* see vfs_data.h (vd_chk_touch) */
void vd_chk_touch_slow(dinode *d)
{
	dfs *fs = d->fs;
	if (d->chk_touched)
		return;
	if (fs->chk_n == fs->chk_cap) {
		int cap = fs->chk_cap ? fs->chk_cap * 2 : 64;
		dinode **n = lab_realloc(fs->chk_list, (size_t)cap * sizeof *n);
		if (!n) {
			fs->chk_lost = 1;
			return;
		}
		fs->chk_list = n;
		fs->chk_cap = cap;
	}
	d->chk_touched = 1;
	d->chk_slot = (uint32_t)fs->chk_n;
	fs->chk_list[fs->chk_n++] = d;
}

void vd_chk_reset(dfs *fs)
{
	for (int i = 0; i < fs->chk_n; i++)
		fs->chk_list[i]->chk_touched = 0;
	fs->chk_n = 0;
	fs->chk_lost = 0;
}

/* see vfs_data_int.h (every change of the io_tree, the pages or the
 * delalloc bytes samples: the checker's touch goes with it) */
void vd_sample(dinode *d)
{
	vd_chk_touch(d);
	dfs *fs = d->fs;
	simtime_t now = sim_now(fs->s);
	sim_series_add(fs->s, fs->series_iotree, now, (double)d->io.nrecords);
	sim_series_add(fs->s, fs->series_delalloc, now,
		       (double)(d->delalloc_bytes / PG));
}

/* ------------------------------------------------------------------ */
/* memory limit and dirty throttling (mm/vmscan.c, mm/page-writeback.c) */

/* Tell the space reservations d's delalloc / ordered state moved. */
static void space_note(dinode *d, simtime_t at, int evict)
{
	dfs *fs = d->fs;
	vd_chk_touch(d);
	if (fs->space_fn && !d->sp_gone)
		fs->space_fn(fs->space_ctx, d, at, evict);
}

uint64_t dfs_dirty_limit(const dfs *fs)
{
	if (fs->o.dirty_bytes)
		return fs->o.dirty_bytes;
	return fs->o.ram_bytes / 5; /* vm.dirty_ratio = 20 */
}

/* see vfs_data.h (dfs_shrink) */
uint64_t dfs_shrink_slow(dfs *fs)
{
	uint64_t limit = fs->o.ram_bytes / PG, total = 0;
	if (!fs->o.ram_bytes)
		return 0;
	while (fs->pcg.cached > limit) {
		/* the least recently used inode with clean pages; ties (never:
		 * use_seq is strictly increasing) would go to creation order */
		dinode *v = fs->lru_head;
		while (v && !v->pc.evictable) {
			dinode *next = v->lnext;
			/* nothing cached: it leaves the LRU until its next use
			 * (vd_touch puts it back), so walks do not grow with
			 * every inode ever evicted */
			if (!v->pc.present)
				lru_del(v);
			v = next;
		}
		if (!v)
			break; /* everything left is dirty, under IO or being read */
		uint64_t first, n = pc_evict_run(&v->pc, fs->pcg.cached - limit, &first);
		assert(n > 0);
		vd_chk_touch(v);
		eio_call c = {0};
		eio_clear_bits(&v->io, first * PG, (first + n) * PG - 1, EXTENT_UPTODATE,
			       NULL, &c, fs->s, sim_now(fs->s));
		fs->cpu_reclaim_ns += eio_call_ns(&c);
		total += n;
	}
	if (total) {
		fs->pages_evicted += total;
		if (!fs->c_evicted1)
			fs->c_evicted1 = sim_counter_id(fs->s, "pages_evicted") + 1;
		sim_count(fs->s, fs->c_evicted1 - 1, (int64_t)total);
	}
	return total;
}

/* Dirty + writeback pages above the dirty_ratio threshold? */
static int over_dirty_limit(const dfs *fs)
{
	uint64_t lim = dfs_dirty_limit(fs);
	return lim && (fs->pcg.dirty + fs->pcg.writeback) * PG > lim;
}

static void flusher_kick(dfs *fs, simtime_t at);

/* wb_start_background_writeback (from balance_dirty_pages): the flusher
 * writes the oldest dirty inodes while dirty pages are over the
 * background threshold (and at least until the throttled writers can
 * go on: a throttle the background threshold does not cover). */
static void kick_writeback(dfs *fs)
{
	fs->wb_throttle = 1;
	flusher_kick(fs, sim_now(fs->s));
}

/* Called as writeback completes: once dirty + writeback is back under the
 * threshold the throttled writers run again (the end of
 * balance_dirty_pages' sleep loop); while it is not, inodes dirtied
 * after the last kick are kicked too (rekick: not after a pass that
 * failed, which would only fail again at the same instant; the writers
 * then stay parked, as they would behind a failing device). */
static void throttle_check(dfs *fs, simtime_t now, int rekick)
{
	if (!fs->dirty_throttle.len)
		return;
	if (over_dirty_limit(fs)) {
		if (rekick)
			kick_writeback(fs);
		return;
	}
	uint64_t ns = (uint64_t)fs->dirty_throttle.len * now - fs->throttle_park_sum;
	fs->throttle_ns += ns;
	fs->throttle_park_sum = 0;
	sim_count(fs->s, sim_counter_id(fs->s, "dirty_throttle_ns"), (int64_t)ns);
	sim_series_add(fs->s, sim_series_id(fs->s, "dirty_throttle_ms"), now,
		       (double)fs->throttle_ns / 1e6);
	waitq_wake_all(fs->s, &fs->dirty_throttle, now);
}

/*
 * balance_dirty_pages, simplified (no pause formula, no per-bdi share):
 * a writer that finds dirty + writeback pages above dirty_ratio kicks
 * writeback and sleeps until completions bring the total under it.
 * Returns 1 when t was parked, else 0 (or LAB_E* from a synchronous
 * writeback).
 */
static int balance_dirty(dinode *d, task *t)
{
	dfs *fs = d->fs;
	if (!over_dirty_limit(fs))
		return 0;
	fs->throttled++;
	sim_count(fs->s, sim_counter_id(fs->s, "dirty_throttled"), 1);
	if (!fs->sync_io) {
		kick_writeback(fs);
		fs->throttle_park_sum += t->clock;
		task_park(t, &fs->dirty_throttle);
		return 1;
	}
	/* synchronous drive: no flusher runs behind the writer, so it writes
	 * back the inodes dirtied longest ago itself */
	simtime_t t0 = t->clock;
	int rc = 0;
	while (!rc && over_dirty_limit(fs)) {
		dinode *v = NULL;
		dfs_inodes_compact(fs);
		for (int i = 0; i < fs->ninodes; i++) {
			dinode *x = fs->inodes[i];
			if (x->pc.dirty && !x->wb_active &&
			    (!v || x->pc.dirtied_when < v->pc.dirtied_when))
				v = x;
		}
		if (!v)
			break;
		rc = vd_writeback_sync(v, t);
	}
	uint64_t ns = t->clock - t0;
	fs->throttle_ns += ns;
	sim_count(fs->s, sim_counter_id(fs->s, "dirty_throttle_ns"), (int64_t)ns);
	sim_series_add(fs->s, sim_series_id(fs->s, "dirty_throttle_ms"), t->clock,
		       (double)fs->throttle_ns / 1e6);
	return rc;
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
	/* a write past EOF leaves a hole: it gets an extent map (below) */
	if (off > ((d->i_size + PG - 1) & ~(PG - 1)) && !vd_xw(d))
		return LAB_ENOMEM;
	eio_call c = {0};
	uint32_t bits = EXTENT_DELALLOC;
	if (off >= d->i_size)
		bits |= EXTENT_DELALLOC_NEW;
	/* pages already dirty carry DELALLOC already */
	uint64_t newly = 0;
	for (uint64_t i = first; i < first + n; i++)
		if (!(d->pc.pg[i] & PG_DIRTY))
			newly++;
	pc_set_range(&d->pc, first, n, PG_PRESENT | PG_UPTODATE | PG_DIRTY, 0);
	/* writing past EOF with a gap: btrfs_cont_expand maps the gap as a
	 * hole (an extent map; no item with NO_HOLES) */
	uint64_t eof = (d->i_size + PG - 1) & ~(PG - 1);
	uint64_t extra_ns = 0;
	if (off > eof) {
		emap_insert(&d->x->em, eof, off - eof, EM_HOLE);
		extra_ns += C_GET_EXTENT_NS;
	}
	uint64_t before = d->io.bytes_with[1];
	eio_set_bits(&d->io, off, off + len - 1, bits, 0, NULL, NULL, &c);
	d->delalloc_bytes += d->io.bytes_with[1] - before;
	fs->delalloc_total += d->io.bytes_with[1] - before;
	if (off + len > d->i_size)
		d->i_size = off + len;
	if (!d->pc.is_dirty)
		dirty_add(d, t->clock);
	task_cpu(fs->s, t, n * C_WRITE_PAGE_NS + extra_ns + eio_call_ns(&c));
	/* balance_dirty_pages_ratelimited: over the background threshold the
	 * flusher is started (wb_start_background_writeback) */
	if (fs->flusher && fs->o.dirty_bg_bytes &&
	    fs->pcg.dirty * PG > fs->o.dirty_bg_bytes)
		flusher_kick(fs, t->clock);
	(void)newly;
	vd_touch(d);
	vd_sample(d);
	space_note(d, t->clock, 0);
	rc = balance_dirty(d, t);
	dfs_shrink(fs);
	return rc;
}

/* ------------------------------------------------------------------ */
/* writeback                                                           */

static void wbio_end(sim *s, bio *b);

/* see vfs_data_int.h */
dbio *vd_dbio_new(dinode *d, int read, uint64_t disk)
{
	dfs *fs = d->fs;
	dbio *db = fs->dbio_free;
	if (db) {
		fs->dbio_free = db->next;
		uint64_t *offs = db->offs;
		uint32_t cap = db->cap;
		memset(db, 0, sizeof(*db));
		db->offs = offs;
		db->cap = cap;
	} else {
		db = lab_calloc(1, sizeof(*db));
		assert(db);
	}
	db->d = d;
	db->read = read;
	db->b.op = read ? BIO_READ : BIO_WRITE;
	db->b.offset = disk;
	db->b.sequential = 1;
	db->b.priv = db;
	return db;
}

/* see vfs_data_int.h */
/* Room in the bio's page list for n more pages (doubling from 64). */
static void dbio_room(dbio *db, uint64_t n)
{
	if (db->n + n <= db->cap)
		return;
	uint32_t cap = db->cap;
	while (db->n + n > cap)
		cap = cap ? cap * 2 : 64;
	db->offs = lab_realloc(db->offs, cap * sizeof(*db->offs));
	assert(db->offs);
	db->cap = cap;
}

void vd_dbio_add(dbio *db, uint64_t off, uint64_t bytes)
{
	dbio_room(db, 1);
	db->offs[db->n++] = off;
	db->b.bytes += bytes;
}

/* see vfs_data_int.h */
void vd_dbio_add_pages(dbio *db, uint64_t off, uint64_t n)
{
	dbio_room(db, n);
	for (uint64_t k = 0; k < n; k++)
		db->offs[db->n++] = off + k * PG;
	db->b.bytes += n * PG;
}

/* Submit the bio being built. With wb_caller_waits the bio has no end_io:
 * vd_writeback_sync waits for it and completes it on its task. */
static void wb_submit(dinode *d, task *t)
{
	dinode_x *x = d->x;
	dbio *db = x ? x->wb_bio : NULL;
	if (!db)
		return;
	x->wb_bio = NULL;
	db->b.end_io = x->wb_caller_waits ? NULL : wbio_end;
	x->wb_inflight++;
	db->next = x->writes;
	x->writes = db;
	d->fs->data_writes++;
	d->fs->data_write_bytes += db->b.bytes;
	bdev_submit(d->fs->dev, &db->b, t->clock);
}

/* finish_ordered_io for the ordered extent starting at off: the item
 * goes in (array or tree), DELALLOC_NEW clears, the pages end writeback.
 * t may be NULL. */
static void finish_ordered(dinode *d, task *t, uint64_t off, eio_call *c)
{
	dfs *fs = d->fs;
	assert(d->x);
	int64_t k = ordered_lookup_range(&d->x->oe, off, 1, NULL);
	assert(k >= 0);
	ordered_extent oe = d->x->oe.v[k];
	if (fs->fsi) {
		int rc = vd_fe_finish_tree(d, t, &oe);
		if (rc)
			fs->wb_errors++;
	} else {
		int rc = vd_fe_insert(d, oe.file_off, oe.len, oe.disk_bytenr);
		assert(rc == 0);
		(void)rc;
		d->nbytes += oe.len;
	}
	eio_clear_bits(&d->io, oe.file_off, oe.file_off + oe.len - 1,
		       EXTENT_DELALLOC_NEW, NULL, c, NULL, 0);
	ordered_remove(&d->x->oe, oe.file_off);
	SIM_REC(fs->s, TK_OE_DONE, t, fs->rec_fs, (int64_t)d->ino, (int64_t)oe.file_off,
		(int64_t)oe.len);
	assert(d->x->ordered_bytes >= oe.len);
	d->x->ordered_bytes -= oe.len;
	fs->ordered_inflight--;
	simtime_t now = t ? t->clock : sim_now(fs->s);
	sim_series_add(fs->s, fs->series_ordered, sim_now(fs->s), (double)fs->ordered_inflight);
	if (fs->ordered_wait.len && fs->ordered_inflight <= fs->ordered_wait_target)
		waitq_wake_all(fs->s, &fs->ordered_wait, now);
	pc_set_range(&d->pc, oe.file_off / PG,
		     (oe.file_off + oe.len + PG - 1) / PG - oe.file_off / PG, 0, PG_WRITEBACK);
	fs->ordered_done++;
	space_note(d, now, 0);
}

/* A write bio is done: finish_ordered_io for each extent in it. Returns
 * the CPU not charged to any timeline yet (the io_tree work and, in the
 * array mode, the modelled item inserts); in tree mode the trees charge
 * their own work to t (or, with t NULL, to fsi->cpu_untasked_ns). All of
 * it is counted in cpu_endio_ns. */
static uint64_t wbio_complete(dinode *d, dbio *db, task *t)
{
	dfs *fs = d->fs;
	fs_info *fsi = fs->fsi;
	uint64_t u0 = fsi ? fsi->cpu_untasked_ns : 0, c0 = t ? t->cpu_ns : 0;
	eio_call c = {0};
	uint64_t ns = 0;
	for (uint32_t i = 0; i < db->n; i++) {
		finish_ordered(d, t, db->offs[i], &c);
		if (!fsi)
			ns += C_FINISH_ORDERED_NS;
	}
	ns += eio_call_ns(&c);
	fs->cpu_endio_ns += ns;
	if (fsi)
		fs->cpu_endio_ns += (fsi->cpu_untasked_ns - u0) + (t ? t->cpu_ns - c0 : 0);
	d->x->wb_inflight--;
	for (dbio **pp = &d->x->writes; *pp; pp = &(*pp)->next)
		if (*pp == db) {
			*pp = db->next;
			break;
		}
	vd_dbio_free(db);
	vd_sample(d);
	return ns;
}

/* Bio completion (the endio workers' CPU is counted, not put on any
 * task's timeline). */
static void wbio_end(sim *s, bio *b)
{
	dbio *db = b->priv;
	dinode *d = db->d;
	wbio_complete(d, db, NULL);
	if (vd_clean(d) || !d->wb_active)
		waitq_wake_all(s, &d->x->wb_waiters, sim_now(s));
	throttle_check(d->fs, sim_now(s), 1);
}

int vd_clean(const dinode *d)
{
	return d->pc.dirty == 0 && vd_oe_n(d) == 0 && vd_wb_inflight(d) == 0 && !d->wb_active;
}

/* What wb_extent did. */
enum { WB_EXTENT = 0, WB_NONE = 1, WB_WAITED = 2 };

/*
 * Flush the next delalloc range at or after wb_index (models
 * extent_write_cache_pages -> writepage_delalloc -> find_lock_delalloc_range
 * + cow_file_range, then bio submission). Returns WB_EXTENT, WB_NONE (no
 * delalloc left; the search was charged), WB_WAITED (t waited for an
 * lseek's range lock, or the range is still under writeback and was
 * skipped: call again), or a negative LAB_E* (allocation).
 */
static int wb_extent(dinode *d, task *t)
{
	dfs *fs = d->fs;
	sim *s = fs->s;
	eio_call c = {0};
	uint64_t ds, de;
	dinode_x *x = d->x; /* a writeback pass has it */
	if (eio_find_first_bit(&d->io, x->wb_index, EXTENT_DELALLOC, &ds, &de, &c)) {
		task_cpu(s, t, eio_call_ns(&c));
		fs->cpu_wb_ns += eio_call_ns(&c);
		return WB_NONE;
	}
	/* find_lock_delalloc_range never starts before the locked page: a
	 * range writeback from inside a delalloc extent leaves its head */
	if (ds < x->wb_index)
		ds = x->wb_index;
	if (de - ds + 1 > DATA_MAX_EXTENT)
		de = ds + DATA_MAX_EXTENT - 1;
	/*
	 * Pages dirtied again while an earlier pass's bio for them is in
	 * flight are not written twice at once: extent_write_cache_pages
	 * skips a page under writeback (WB_SYNC_NONE; WB_SYNC_ALL waits for
	 * it, and an fsync here comes back once the bio completes). The
	 * range stops before such an ordered extent, or moves past it.
	 */
	int64_t busy_k = vd_oe_n(d) ? ordered_first_overlap(&d->x->oe, ds, de - ds + 1) : -1;
	if (busy_k >= 0) {
		const ordered_extent *o = &d->x->oe.v[busy_k];
		x->wb_skipped = 1;
		if (o->file_off <= ds) {
			x->wb_index = o->file_off + o->len;
			task_cpu(s, t, eio_call_ns(&c));
			fs->cpu_wb_ns += eio_call_ns(&c);
			return WB_WAITED;
		}
		de = o->file_off - 1;
	}
	/*
	 * An lseek holds [start, EOF] over this range. If its lock sweep has
	 * not reached this extent yet, writeback locks it first and the sweep
	 * will wait for it (the lseek ends later); else wait for the unlock.
	 */
	int ahead_of_sweep = 0;
	if (vd_lseek_until(d) > t->clock && x->lseek_lock_start <= de) {
		uint64_t before = 0, adj;
		if (ds > x->lseek_lock_start)
			eio_range_counts(&d->io, x->lseek_lock_start, ds - 1, &before, &adj);
		simtime_t reach = x->lock_t0 + x->lock_delay;
		if (x->lock_recs)
			reach += (simtime_t)((double)(x->lock_t1 - x->lock_t0) *
					     (double)before / (double)x->lock_recs);
		if (t->clock >= reach) {
			task_wait_until(t, x->lseek_lock_until + vd_wakeup_ns(fs));
			return WB_WAITED;
		}
		ahead_of_sweep = 1;
	}
	uint64_t len = de - ds + 1;
	/* cow_file_range_inline: a file that fits max_inline, written from 0
	 * to EOF, goes into the leaf with no disk extent and no bio */
	int inline_ext = fs->fsi && ds == 0 && de + 1 >= d->i_size && d->i_size > 0 &&
			 d->i_size <= fs->fsi->opts.max_inline && d->i_size < PG;
	uint64_t disk = FEXT_INLINE;
	if (fs->fsi && !inline_ext) {
		/* btrfs_reserve_extent: when no free run is long enough, ask
		 * for half as much (down to a sector) and cover the rest of
		 * the range with the next extent */
		int rc = alloc_extent(&fs->fsi->alloc, ALLOC_DATA, len, &disk);
		while (rc == LAB_ENOSPC && len > PG) {
			len = len / 2 / PG * PG;
			rc = alloc_extent(&fs->fsi->alloc, ALLOC_DATA, len, &disk);
		}
		if (rc)
			return rc;
		de = ds + len - 1;
	} else if (!fs->fsi) {
		disk = fs->data_alloc;
		fs->data_alloc += len;
	}
	/* the range lock, cow_file_range, and the unlock clearing DELALLOC */
	uint64_t fail;
	int busy = eio_set_bits(&d->io, ds, de, EXTENT_LOCKED, EXTENT_LOCKED, &fail, NULL, &c);
	assert(!busy);
	(void)busy;
	if (inline_ext)
		emap_drop_from(&x->em, 0); /* the file is this one page */
	else
		emap_insert(&x->em, ds, len, disk);
	ordered_add(&x->oe, ds, len, disk);
	SIM_REC(s, TK_OE_ADD, t, fs->rec_fs, (int64_t)d->ino, (int64_t)ds, (int64_t)len);
	x->ordered_bytes += len;
	fs->ordered_inflight++;
	sim_series_add(s, fs->series_ordered, t->clock, (double)fs->ordered_inflight);
	eio_clear_bits(&d->io, ds, de, EXTENT_DELALLOC | EXTENT_LOCKED, NULL, &c, s, t->clock);
	assert(d->delalloc_bytes >= len);
	d->delalloc_bytes -= len;
	fs->delalloc_total -= len;
	pc_set_range(&d->pc, ds / PG, de / PG - ds / PG + 1, PG_WRITEBACK, PG_DIRTY);
	if (!inline_ext)
		x->sp_data_alloc += len;
	space_note(d, t->clock, 0);
	uint64_t ns = C_COW_EXTENT_NS + eio_call_ns(&c);
	if (inline_ext) {
		/* the inline extent is complete at once (no bio) */
		eio_call c2 = {0};
		finish_ordered(d, t, ds, &c2);
		ns += eio_call_ns(&c2);
	} else {
		if (x->wb_bio && (x->wb_bio->b.offset + x->wb_bio->b.bytes != disk ||
				  x->wb_bio->b.bytes + len > DATA_MAX_BIO))
			wb_submit(d, t);
		if (!x->wb_bio)
			x->wb_bio = vd_dbio_new(d, 0, disk);
		vd_dbio_add(x->wb_bio, ds, len);
	}
	x->wb_lock_off = ds;
	x->wb_lock_until = t->clock + ns;
	if (ahead_of_sweep) {
		/* the sweep sleeps on this extent until writeback unlocks it */
		simtime_t hold = ns + vd_wakeup_ns(fs);
		x->lock_delay += hold;
		x->lseek_lock_until += hold;
	}
	task_cpu(s, t, ns);
	fs->cpu_wb_ns += ns;
	fs->wb_extents++;
	x->wb_index = de + 1;
	return WB_EXTENT;
}

/* A pass that skipped pages under writeback ends with nothing in
 * flight: the bio it skipped completed during the pass, so no end_io will
 * wake an fsync waiting for the inode; wake it here to write the rest. */
static int skipped_idle(dinode *d)
{
	int r = d->x->wb_skipped && d->x->wb_inflight == 0;
	d->x->wb_skipped = 0;
	return r;
}

/* A writeback pass over d ends (r: wb_extent's last result): the bio
 * being built goes out, d leaves b_dirty or, with pages dirtied during
 * the pass, goes to its tail (redirty_tail). */
static void wb_pass_end(dinode *d, task *t, int r)
{
	if (r < 0)
		d->fs->wb_errors++;
	wb_submit(d, t);
	d->wb_active = 0;
	d->x->wb_task = NULL;
	if (d->pc.dirty == 0)
		dirty_clear(d);
	else
		dirty_add(d, t->clock);
	if (vd_clean(d) || skipped_idle(d))
		waitq_wake_all(d->fs->s, &d->x->wb_waiters, t->clock);
	throttle_check(d->fs, t->clock, r >= 0);
}

/* The writeback task's step (one extent). */
static int wb_one(sim *s, task *t)
{
	dinode *d = t->ctx;
	(void)s;
	int r = wb_extent(d, t);
	if (r == WB_EXTENT || r == WB_WAITED)
		return TASK_RUN;
	wb_pass_end(d, t, r);
	return TASK_DONE;
}

/* Wait for the inode's write bios in submission order (the list is newest
 * first), completing their ordered extents on t (the caller's own wait in
 * a synchronous writeback). */
static void wait_writes(dinode *d, task *t)
{
	while (d->x->writes) {
		dbio *db = d->x->writes;
		while (db->next)
			db = db->next;
		task_wait_until(t, db->b.complete);
		task_cpu(d->fs->s, t, wbio_complete(d, db, t));
	}
}

/* Writeback runs extent by extent; while no lseek holds a range lock
 * nothing can interleave with it, so several extents go in one step. */
static int wb_step(sim *s, task *t)
{
	dinode *d = t->ctx;
	for (int i = 0; i < 64; i++) {
		int r = wb_one(s, t);
		if (r != TASK_RUN || vd_lseek_until(d) > t->clock ||
		    sim_now(s) + NS_PER_MS < t->clock)
			return r;
	}
	return TASK_RUN;
}

int vd_writeback_sync(dinode *d, task *t)
{
	return vd_writeback_range_sync(d, t, 0);
}

int vd_writeback_range_sync(dinode *d, task *t, uint64_t start)
{
	assert(!d->wb_active);
	dfs *fs = d->fs;
	dinode_x *x = vd_xw(d);
	if (!x)
		return LAB_ENOMEM;
	d->wb_active = 1;
	x->wb_sync = 1;
	x->wb_caller_waits = 1;
	x->wb_index = start;
	fs->flushes++;
	int r;
	do
		r = wb_extent(d, t);
	while (r == WB_EXTENT || r == WB_WAITED);
	wb_submit(d, t);
	wait_writes(d, t);
	x->wb_caller_waits = 0;
	d->wb_active = 0;
	if (d->pc.dirty == 0)
		dirty_clear(d);
	if (vd_clean(d))
		waitq_wake_all(fs->s, &x->wb_waiters, t->clock);
	return r < 0 ? r : 0;
}

int64_t vd_writeback_nr(dinode *d, task *t, int64_t max_pages, int wait)
{
	assert(!d->wb_active);
	dfs *fs = d->fs;
	uint64_t dirty0 = d->pc.dirty;
	dinode_x *x = vd_xw(d);
	if (!x)
		return LAB_ENOMEM;
	d->wb_active = 1;
	x->wb_caller_waits = (uint8_t)(wait != 0);
	x->wb_index = 0;
	fs->flushes++;
	int r;
	do
		r = wb_extent(d, t);
	while ((r == WB_EXTENT || r == WB_WAITED) &&
	       (int64_t)(dirty0 - d->pc.dirty) < max_pages);
	wb_submit(d, t);
	if (wait)
		wait_writes(d, t);
	x->wb_caller_waits = 0;
	d->wb_active = 0;
	if (d->pc.dirty == 0)
		dirty_clear(d);
	if (vd_clean(d) || skipped_idle(d))
		waitq_wake_all(fs->s, &x->wb_waiters, t->clock);
	throttle_check(fs, t->clock, r >= 0);
	if (r < 0)
		return r;
	return (int64_t)(dirty0 - d->pc.dirty);
}

int vd_wait_ordered(dfs *fs, task *t, uint64_t target)
{
	if (fs->ordered_inflight <= target)
		return 0;
	fs->ordered_wait_target = target;
	task_park(t, &fs->ordered_wait);
	return 1;
}

void vd_writeback_start(dinode *d, int sync)
{
	/* writeback's state is in the dinode_x: like the task, it must be had */
	dinode_x *x = vd_xw(d);
	assert(x);
	if (sync)
		x->wb_sync = 1;
	if (d->wb_active)
		return;
	d->wb_active = 1;
	x->wb_index = 0;
	d->fs->flushes++;
	x->wb_task = task_spawn(d->fs->s, "writeback", wb_step, d, sim_now(d->fs->s));
	assert(x->wb_task);
}

/*
 * When the flusher's delayed work, queued now to run `delay` later, fires:
 * the timer wheel (kernel/time/timer.c) keeps a timer `delta` jiffies away
 * in level n, where level n starts at 63 << 3(n-1) jiffies and has a
 * granule of 8^n jiffies, and fires it at the first granule boundary after
 * its expiry (calc_index rounds up). So wakeups drift later than the
 * nominal period by up to a granule each time.
 */
static simtime_t flusher_due(const dfs *fs, simtime_t now, simtime_t delay)
{
	simtime_t j = fs->o.jiffy_ns;
	if (j == 0)
		return now + delay;
	uint64_t delta = (uint64_t)((delay + j - 1) / j);
	uint64_t gran = 1;
	for (uint64_t start = 63; delta >= start && gran < (1u << 24); start <<= 3)
		gran <<= 3;
	uint64_t expires = fs->o.jiffies0 + (uint64_t)(now / j) + delta;
	uint64_t fire = (expires / gran + 1) * gran;
	return (simtime_t)(fire - fs->o.jiffies0) * j;
}

/*
 * The next inode the flusher writes (wb_writeback -> queue_io ->
 * writeback_sb_inodes, oldest dirtied first): over the background
 * threshold (or while writers are throttled) the oldest dirty inode;
 * else, for a periodic (kupdate) wakeup, the oldest one dirtied before
 * now - dirty_expire; else none. Inodes whose dirty pages went (a
 * truncate) leave b_dirty on the way.
 */
static dinode *flusher_pick(dfs *fs, simtime_t now)
{
	int bg = (fs->o.dirty_bg_bytes && fs->pcg.dirty * PG > fs->o.dirty_bg_bytes) ||
		 (fs->wb_throttle && fs->dirty_throttle.len && over_dirty_limit(fs));
	if (!bg)
		fs->wb_throttle = 0;
	dinode *d = fs->dirty_head;
	while (d) {
		dinode *nx = d->dnext;
		if (d->pc.dirty == 0) {
			dirty_clear(d);
		} else if (!d->wb_active) {
			if (bg || (fs->wb_kupdate && now - d->pc.dirtied_when >= fs->o.dirty_expire))
				return d;
			if (!fs->wb_kupdate || now - d->pc.dirtied_when < fs->o.dirty_expire)
				return NULL; /* b_dirty is in dirtied_when order */
		}
		d = nx;
	}
	return NULL;
}

/*
 * The flusher thread (wb_workfn): writes its inodes one after another,
 * extent by extent, as the per-inode writeback task does (several
 * extents per step while nothing can interleave), then parks until the
 * next periodic wakeup or background kick.
 */
static int flusher_step(sim *s, task *t)
{
	dfs *fs = t->ctx;
	for (int i = 0; i < 64; i++) {
		dinode *d = fs->flusher_cur;
		if (!d) {
			d = flusher_pick(fs, t->clock);
			if (!d) {
				fs->wb_kupdate = 0;
				fs->flusher_idle = 1;
				return TASK_BLOCKED;
			}
			dinode_x *x = vd_xw(d);
			assert(x); /* as vd_writeback_start's */
			d->wb_active = 1;
			x->wb_index = 0;
			x->wb_task = t;
			fs->flushes++;
			fs->flusher_cur = d;
		}
		int r = wb_extent(d, t);
		if (r != WB_EXTENT && r != WB_WAITED) {
			fs->flusher_cur = NULL;
			wb_pass_end(d, t, r);
		}
		if (vd_lseek_until(d) > t->clock || sim_now(s) + NS_PER_MS < t->clock)
			return TASK_RUN;
	}
	return TASK_RUN;
}

/* Wake the flusher (spawned on first use). */
static void flusher_kick(dfs *fs, simtime_t at)
{
	if (!fs->flusher) {
		fs->flusher = task_spawn(fs->s, "flush-btrfs", flusher_step, fs, at);
		assert(fs->flusher);
		return;
	}
	if (fs->flusher_idle) {
		fs->flusher_idle = 0;
		task_wake(fs->s, fs->flusher, at);
	}
}

/* The flusher's periodic wakeup (wb_workfn, kupdate style: inodes dirty
 * for longer than the expiry; over the background threshold, the oldest
 * whatever their age). */
static void flusher_tick(sim *s, void *arg)
{
	dfs *fs = arg;
	fs->wb_kupdate = 1;
	/* a wakeup that finds nothing to write goes back to sleep at once */
	if (!fs->flusher || fs->flusher_idle) {
		if (flusher_pick(fs, sim_now(s)))
			flusher_kick(fs, sim_now(s));
		else
			fs->wb_kupdate = 0;
	}
	if (fs->flusher_armed)
		sim_at(s, flusher_due(fs, sim_now(s), fs->o.wb_interval), flusher_tick, fs);
}

void dfs_start_flusher(dfs *fs)
{
	if (fs->flusher_armed)
		return;
	fs->flusher_armed = 1;
	sim_at(fs->s, flusher_due(fs, sim_now(fs->s), fs->o.wb_interval), flusher_tick, fs);
}

/* ------------------------------------------------------------------ */
/* fsync and truncate                                                  */

int vd_fsync(dinode *d, task *t)
{
	if (vd_clean(d))
		return 0;
	if (d->pc.dirty && !d->wb_active)
		vd_writeback_start(d, 1);
	task_park(t, vd_wb_waiters(d));
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
			task_park(t, vd_wb_waiters(d));
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
		fs->delalloc_total -= before - d->io.bytes_with[1];
		space_note(d, t->clock, 0);
	}
	if (d->x)
		emap_drop_from(&d->x->em, from);
	if (fs->fsi) {
		int rc = vd_fe_truncate_tree(d, t, new_size, from);
		d->i_size = new_size;
		if (d->x && d->x->wb_index > from)
			d->x->wb_index = from;
		task_cpu(fs->s, t, eio_call_ns(&c));
		vd_sample(d);
		return rc;
	}
	/* the file extent items past the end go, one crossing it is trimmed */
	uint64_t i = vd_fe_first_after(d, from), dropped = 0;
	if (d->x) {
		dinode_x *x = d->x;
		if (i < x->nfe && x->fe[i].off < from) {
			d->nbytes -= x->fe[i].off + x->fe[i].len - from;
			x->fe[i].len = from - x->fe[i].off;
			i++;
		}
		for (uint64_t k = i; k < x->nfe; k++)
			d->nbytes -= x->fe[k].len;
		dropped = x->nfe - i;
		x->nfe = i;
	}
	d->i_size = new_size;
	if (d->x && d->x->wb_index > from)
		d->x->wb_index = from;
	task_cpu(fs->s, t, eio_call_ns(&c) + dropped * C_FINISH_ORDERED_NS / 4);
	vd_sample(d);
	return 0;
}

/* ------------------------------------------------------------------ */

void dfs_remount(dfs *fs)
{
	dfs_inodes_compact(fs);
	for (int i = 0; i < fs->ninodes; i++) {
		dinode *d = fs->inodes[i];
		assert(vd_clean(d));
		eio_destroy(&d->io);
		eio_init(&d->io);
		eio_set_pool(&d->io, &fs->eio_pool);
		eio_rec_attach(&d->io, fs->s, fs->rec_fs, (int64_t)d->ino);
		if (d->x)
			emap_clear(&d->x->em);
		pc_drop_clean(&d->pc);
		dirty_clear(d);
	}
	for (int l = 0; l < FST_MAX_LEVEL; l++)
		if (fs->fst_cached[l])
			memset(fs->fst_cached[l], 0, fs->fst_cap[l]);
	if (fs->csum_cached)
		memset(fs->csum_cached, 0, fs->csum_cap);
	if (fs->warm)
		memset(fs->warm, 0, fs->warm_cap * sizeof(*fs->warm));
	fs->warm_n = 0;
	memset(fs->warm_last, 0, sizeof(fs->warm_last));
	/* tree mode: everything committed so far is on disk only */
	if (fs->fsi)
		fs->cold_gen = fs->fsi->generation;
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
	for (uint64_t i = 1; i < vd_nfe(d); i++)
		if (d->x->fe[i - 1].off + d->x->fe[i - 1].len > d->x->fe[i].off)
			bad++;
	if (d->fs->fsi && d->inode)
		bad += vd_fe_check_tree(d);
	return bad;
}
