/*
 * vfs_data.c - the data path of one file system: its inodes (the dinode
 * table, the b_dirty list, the inode LRU and the memory shrinker), open
 * files, fsync's data part, truncate and remount (see vfs_data.h).
 * Buffered write and dirty throttling are in vfs_data_write.c, writeback
 * and the flusher in vfs_data_writeback.c, reads and readahead in
 * vfs_data_read.c; the file extent items in the fs tree are
 * vfs_data_items.c's business.
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
	dinode *const *in = dfs_inodes(fs);
	for (int i = 0; i < fs->ninodes; i++)
		eio_rec_dump(&in[i]->io);
}

int dfs_init(dfs *fs, fs_info *fsi, const data_opts *o)
{
	memset(fs, 0, sizeof(*fs));
	sim *s = fsi->sim;
	fs->rec_fs = sim_rec_fsno(s);
	if (sim_rec_dumper(s, dfs_rec_dump, fs))
		return LAB_ENOMEM;
	fs->s = s;
	fs->dev = fsi->dev;
	fs->fsi = fsi;
	fs->o = *o;
	lab_pool_init(&fs->dinode_pool, sizeof(dinode), 256);
	lab_pool_init(&fs->x_pool, sizeof(dinode_x), 64);
	lab_pool_init(&fs->eio_pool, sizeof(extent_state), 512);
	lab_pool_init(&fs->emap_pool, EMAP_SMALL_BYTES, 256);
	lab_pool_init(&fs->oe_pool, ORDERED_SMALL * sizeof(ordered_extent), 256);
	pc_pools_init(&fs->pcg);
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
void vd_dirty_add(dinode *d, simtime_t when)
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
void vd_dirty_clear(dinode *d)
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
	free(fs->unclean);
	fs->unclean = NULL;
	fs->unclean_n = fs->unclean_cap = 0;
	dinode *const *in = dfs_inodes(fs);
	for (int i = 0; i < fs->ninodes; i++)
		dinode_free(in[i]);
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
	free(fs->inode_arr);
	fs->inode_arr = NULL;
	fs->ninodes = fs->inodes_len = 0;
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
		dinode *d = fs->inode_arr[i];
		if (!d)
			continue;
		if (j != i) {
			fs->inode_arr[j] = d;
			d->slot = (uint32_t)j;
		}
		j++;
	}
	assert(j == fs->ninodes);
	fs->inodes_len = j;
}

/* A new dinode appended to the inode array. */
static int dinode_add(dfs *fs, uint64_t ino, dinode **out)
{
	if (fs->inodes_len == fs->inodes_cap && fs->ninodes < fs->inodes_len)
		dfs_inodes_compact(fs);
	if (fs->inodes_len == fs->inodes_cap) {
		int nc = fs->inodes_cap ? fs->inodes_cap * 2 : 8;
		dinode **n = lab_realloc(fs->inode_arr, (size_t)nc * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		fs->inode_arr = n;
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
	fs->inode_arr[fs->inodes_len++] = d;
	fs->ninodes++;
	*out = d;
	return 0;
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
	vd_space_note(d, sim_now(fs->s), 1);
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
	if (d->on_unclean) {
		/* a search: the list holds what was dirty at the last check */
		for (int k = 0; k < fs->unclean_n; k++)
			if (fs->unclean[k] == d) {
				fs->unclean[k] = fs->unclean[--fs->unclean_n];
				break;
			}
	}
	uint32_t at = d->slot;
	if (at < (uint32_t)fs->inodes_len && fs->inode_arr[at] == d) {
		fs->inode_arr[at] = NULL;
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
	if (fs->chk_lost)
		fs->unclean_lost = 1; /* changes went unrecorded */
	int k = 0;
	for (int i = 0; i < fs->unclean_n; i++) {
		dinode *d = fs->unclean[i];
		if (vd_clean(d))
			d->on_unclean = 0;
		else
			fs->unclean[k++] = d;
	}
	fs->unclean_n = k;
	for (int i = 0; i < fs->chk_n; i++) {
		dinode *d = fs->chk_list[i];
		d->chk_touched = 0;
		if (d->on_unclean || vd_clean(d) || fs->unclean_lost)
			continue;
		if (fs->unclean_n == fs->unclean_cap) {
			int cap = fs->unclean_cap ? fs->unclean_cap * 2 : 64;
			dinode **n = lab_realloc(fs->unclean, (size_t)cap * sizeof *n);
			if (!n) {
				fs->unclean_lost = 1;
				continue;
			}
			fs->unclean = n;
			fs->unclean_cap = cap;
		}
		d->on_unclean = 1;
		fs->unclean[fs->unclean_n++] = d;
	}
	fs->chk_n = 0;
	fs->chk_lost = 0;
}

static int cmp_slot(const void *a, const void *b)
{
	uint32_t x = (*(dinode *const *)a)->slot, y = (*(dinode *const *)b)->slot;
	return x < y ? -1 : x > y;
}

int vd_maybe_unclean(dfs *fs, dinode ***out, int *n)
{
	*out = NULL;
	*n = 0;
	if (fs->chk_lost || fs->unclean_lost)
		return -1;
	size_t cap = (size_t)fs->chk_n + (size_t)fs->unclean_n;
	dinode **v = lab_malloc((cap ? cap : 1) * sizeof *v);
	if (!v)
		return -1;
	int k = 0;
	for (int i = 0; i < fs->chk_n; i++)
		v[k++] = fs->chk_list[i];
	for (int i = 0; i < fs->unclean_n; i++)
		if (!fs->unclean[i]->chk_touched)
			v[k++] = fs->unclean[i];
	/* slots keep dfs_inodes' order, holes or not (a compaction moves
	 * them all down in order) */
	qsort(v, (size_t)k, sizeof *v, cmp_slot);
	*out = v;
	*n = k;
	return 0;
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
/* memory limit (mm/vmscan.c)                                         */

/* Tell the space reservations d's delalloc / ordered state moved. */
void vd_space_note(dinode *d, simtime_t at, int evict)
{
	dfs *fs = d->fs;
	vd_chk_touch(d);
	if (fs->space_fn && !d->sp_gone)
		fs->space_fn(fs->space_ctx, d, at, evict);
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
		vd_space_note(d, t->clock, 0);
	}
	if (d->x)
		emap_drop_from(&d->x->em, from);
	int rc = vd_fe_truncate_tree(d, t, new_size, from);
	d->i_size = new_size;
	if (d->x && d->x->wb_index > from)
		d->x->wb_index = from;
	task_cpu(fs->s, t, eio_call_ns(&c));
	vd_sample(d);
	return rc;
}

/* ------------------------------------------------------------------ */

void dfs_remount(dfs *fs)
{
	dinode *const *in = dfs_inodes(fs);
	for (int i = 0; i < fs->ninodes; i++) {
		dinode *d = in[i];
		assert(vd_clean(d));
		eio_destroy(&d->io);
		eio_init(&d->io);
		eio_set_pool(&d->io, &fs->eio_pool);
		eio_rec_attach(&d->io, fs->s, fs->rec_fs, (int64_t)d->ino);
		if (d->x)
			emap_clear(&d->x->em);
		pc_drop_clean(&d->pc);
		vd_dirty_clear(d);
	}
	if (fs->warm)
		memset(fs->warm, 0, fs->warm_cap * sizeof(*fs->warm));
	fs->warm_n = 0;
	memset(fs->warm_last, 0, sizeof(fs->warm_last));
	/* everything committed so far is on disk only */
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
	if (d->inode)
		bad += vd_fe_check_tree(d);
	return bad;
}
