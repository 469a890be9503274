/*
 * vfs_io.c - the data path on struct inode and the real trees (see
 * vfs_io.h). A thin adapter: the mechanisms are vfs_data*.c's and
 * lseek.c's; this file validates arguments, keeps the
 * substrate inode and the data path's view of it in step, and adds the
 * VFS-level steps around them (the partial pages a write or a truncate
 * must read or dirty).
 */
#include "vfs_io.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "costs.h"
#include "items.h"
#include "lab.h"
#include "space_fs.h"
#include "trans.h"
#include "labmem.h"

#define PG PC_PAGE

static int is_reg(const struct inode *inode)
{
	return inode && (inode->mode & S_IFMT_) == S_IFREG_;
}

void vio_opts_default(data_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->dirty_expire = 30 * NS_PER_S;
	o->wb_interval = 5 * NS_PER_S;
	o->dirty_bg_bytes = (16ull << 30) / 10;
	o->ram_bytes = 16ull << 30;    /* dirty_bytes 0: dirty_ratio 20% */
}

void vio_opts_ram(data_opts *o, uint64_t ram)
{
	uint64_t dirtyable = (uint64_t)((double)ram * VIO_DIRTYABLE);
	o->ram_bytes = ram;
	o->dirty_bg_bytes = dirtyable / 10;
	o->dirty_bytes = dirtyable / 5;
}

dfs *vio_dfs(fs_info *fs)
{
	return fs ? fs->slot[FS_SLOT_DATA] : NULL;
}

/* on_inode_evict: the inode's pages, delalloc and maps go with it (models
 * btrfs_evict_inode -> truncate_inode_pages_final). */
static void vio_on_evict(void *ctx, struct inode *inode)
{
	fs_info *fs = ctx;
	dfs *df = vio_dfs(fs);
	if (!df || !inode->io)
		return;
	dfs_inode_evict(df, inode->io);
	inode->io = NULL;
}

/* The data path's registered check: io_tree and delalloc accounting of
 * every inode, and its file extent items against the tree (vd_check);
 * in an incremental check (check.h) of the inodes whose data state
 * changed since the last check (vd_chk_touch), each also still having
 * its inode item. */
static int vio_check(fs_info *fs, void *ctx)
{
	(void)ctx;
	dfs *df = vio_dfs(fs);
	if (!df)
		return 0;
	int bad = 0, incr = fs->check_incr && !df->chk_lost;
	dinode *const *all = incr ? NULL : dfs_inodes(df);
	int n = incr ? df->chk_n : df->ninodes;
	for (int i = 0; i < n; i++) {
		dinode *d = incr ? df->chk_list[i] : all[i];
		if (!d->inode)
			continue;
		if (incr)
			bad += check_inode_item(fs, d->inode);
		if (d->inode->io != d) {
			check_report(fs, "data: ino %llu lost its data state",
				     (unsigned long long)d->ino);
			bad++;
			continue;
		}
		int io = eio_check(&d->io);
		if (io)
			check_report(fs, "data: ino %llu: io_tree broken (%d)",
				     (unsigned long long)d->ino, io);
		if (d->delalloc_bytes != d->io.bytes_with[1])
			check_report(fs, "data: ino %llu: delalloc_bytes %llu, io_tree %llu",
				     (unsigned long long)d->ino, (unsigned long long)d->delalloc_bytes,
				     (unsigned long long)d->io.bytes_with[1]);
		int b = vd_check(d);
		if (b && !io && d->delalloc_bytes == d->io.bytes_with[1])
			check_report(fs, "data: ino %llu: %d data path invariants broken",
				     (unsigned long long)d->ino, b);
		bad += b;
	}
	return bad;
}

/* on_check_done: what the touched inodes changed has been checked. */
static void vio_check_done(void *ctx, int full)
{
	(void)full;
	dfs *df = vio_dfs(ctx);
	if (!df)
		return;
	vd_chk_reset(df);
}

int vio_attach(fs_info *fs, const data_opts *o, struct trans_mgr *tm)
{
	if (!fs || !fs->dev)
		return LAB_EINVAL;
	if (vio_dfs(fs))
		return LAB_ESTATE;
	data_opts def;
	if (!o) {
		vio_opts_default(&def);
		o = &def;
	}
	dfs *df = lab_calloc(1, sizeof(*df));
	if (!df)
		return LAB_ENOMEM;
	int rc = dfs_init(df, fs, o);
	if (rc) {
		free(df);
		return rc;
	}
	df->tm = tm;
	df->sync_io = 1;
	fs_hooks h;
	memset(&h, 0, sizeof(h));
	h.ctx = fs;
	h.on_inode_evict = vio_on_evict;
	h.on_check_done = vio_check_done;
	rc = fs_hooks_register(fs, &h);
	if (!rc)
		rc = check_register(fs, "data path", vio_check, NULL);
	if (rc) {
		dfs_destroy(df);
		free(df);
		return rc;
	}
	fs->slot[FS_SLOT_DATA] = df;
	/* the reservations follow the data path; reclaim flushes it */
	df->space_fn = fs_space_inode_update;
	df->space_ctx = fs;
	fs_space_attach(fs, tm, df);
	return 0;
}

void vio_detach(fs_info *fs)
{
	dfs *df = vio_dfs(fs);
	if (!df)
		return;
	dinode *const *in = dfs_inodes(df);
	for (int i = 0; i < df->ninodes; i++) {
		if (!in[i]->sp_gone)
			fs_space_inode_update(fs, in[i], sim_now(fs->sim), 1);
		if (in[i]->inode)
			in[i]->inode->io = NULL;
	}
	fs_space_attach(fs, df->tm, NULL);
	dfs_destroy(df);
	free(df);
	fs->slot[FS_SLOT_DATA] = NULL;
}

dinode *vio_dinode(fs_info *fs, struct inode *inode)
{
	dfs *df = vio_dfs(fs);
	if (!df || !is_reg(inode))
		return NULL;
	if (inode->io)
		return inode->io;
	dinode *d;
	if (dfs_inode_attach(df, inode, &d))
		return NULL;
	inode->io = d;
	return d;
}

/* The data state of inode, in step with the substrate inode (another
 * path may have changed its size or extents: torture mixes both). */
static int get(fs_info *fs, struct inode *inode, dinode **out)
{
	if (!vio_dfs(fs))
		return LAB_ESTATE;
	if (!is_reg(inode))
		return LAB_EINVAL;
	dinode *d = vio_dinode(fs, inode);
	if (!d)
		return LAB_ENOMEM;
	vd_chk_touch(d);
	d->i_size = inode->size;
	d->nbytes = inode->nbytes;
	*out = d;
	return 0;
}

/* Make the page at index pg uptodate before a partial write of it
 * (models prepare_uptodate_page -> btrfs_read_folio). */
static int page_uptodate(dinode *d, task *t, uint64_t pg)
{
	if (pg * PG >= d->i_size)
		return 0;
	int rc = pc_reserve(&d->pc, pg + 1);
	if (rc)
		return rc;
	if (pc_flags(&d->pc, pg) & PG_UPTODATE)
		return 0;
	dfile f;
	dfile_open(&f, d, 0);
	f.ra.ra_pages = 1;
	rc = vd_read_page(&f, t, pg * PG);
	dfile_close(&f);
	return rc;
}

/* Dirty the page holding byte `at`, keeping i_size (models
 * btrfs_truncate_block: the partial block at the old or new EOF is read,
 * zeroed past EOF and written again). */
static int dirty_partial(dinode *d, task *t, uint64_t at)
{
	if (at % PG == 0)
		return 0;
	uint64_t pg = at / PG, size = d->i_size;
	int rc = page_uptodate(d, t, pg);
	if (rc)
		return rc < 0 ? rc : LAB_EENGINE;
	rc = vd_write(d, t, pg * PG, PG);
	d->i_size = size;
	return rc;
}

/*
 * The reservations of a buffered write of `bytes` (the page-aligned
 * range): the data (btrfs_check_data_free_space) then the delalloc
 * metadata for it (btrfs_delalloc_reserve_metadata: the extents and csum
 * leaves of `bytes` plus the inode update), both handed to the inode.
 * cont: the write first rewrites the old partial last page
 * (btrfs_cont_expand -> btrfs_truncate_block, which reserves a page of
 * data and its delalloc metadata the same way); it is reserved with it.
 * Returns 0, FS_SPACE_WAIT (t parked; the data part, if granted, is kept
 * for the retry) or LAB_ENOSPC (nothing held).
 */
static int write_reserve(fs_info *fs, task *t, dinode *d, uint64_t bytes, int cont)
{
	if (!fs->space_on)
		return 0;
	uint64_t meta = space_delalloc_calc(&fs->space, bytes);
	if (cont) {
		bytes += PG;
		meta += space_delalloc_calc(&fs->space, PG);
	}
	int rc = fs_space_reserve(fs, t, SPACE_DATA, bytes);
	if (rc)
		return rc;
	rc = fs_space_reserve(fs, t, SPACE_META, meta);
	if (rc == FS_SPACE_WAIT) {
		fs_space_hold(fs, t, SPACE_DATA, bytes);
		return rc;
	}
	if (rc) {
		space_release(&fs->space, SPACE_DATA, bytes, t ? t->clock : sim_now(fs->sim));
		return rc;
	}
	fs_space_inode_add(fs, d, bytes, meta);
	return 0;
}

/* The copy part of a buffered write, once reserved: the old partial last
 * page when growing past it (cont), the partial first / last pages read,
 * then the pages dirtied (vd_write's result). */
static int write_pages(dinode *d, task *t, uint64_t off, uint64_t len, uint64_t old, int cont)
{
	int rc = 0;
	if (cont) {
		rc = dirty_partial(d, t, old);
		if (rc)
			return rc;
	}
	uint64_t a = off & ~(PG - 1), e = (off + len + PG - 1) & ~(PG - 1);
	/* partial first / last pages inside the file are read first */
	if (off % PG)
		rc = page_uptodate(d, t, a / PG);
	if (!rc && (off + len) % PG && (e - PG != a || off % PG == 0))
		rc = page_uptodate(d, t, e / PG - 1);
	if (rc)
		return rc < 0 ? rc : LAB_EENGINE;
	return vd_write(d, t, a, e - a);
}

int vio_write(fs_info *fs, task *t, struct inode *inode, uint64_t off, uint64_t len)
{
	dinode *d;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	if (len == 0)
		return 0;
	if (off >= VIO_MAX_FILE_BYTES || len > VIO_MAX_FILE_BYTES - off)
		return LAB_ERANGE;
	uint64_t old = d->i_size;
	/* growing past a partial last page: that page is rewritten zeroed
	 * past the old EOF (btrfs_cont_expand -> btrfs_truncate_block) */
	int cont = off > old && old % PG && off / PG != old / PG;
	rc = write_reserve(fs, t, d, ((off + len + PG - 1) & ~(PG - 1)) - (off & ~(PG - 1)), cont);
	if (rc)
		return rc;
	if (fs->page_alloc && t) {
		/* the pages this write adds to the cache (prepare_pages) */
		uint64_t fresh = 0;
		for (uint64_t i = off / PG; i < (off + len + PG - 1) / PG; i++)
			fresh += !(pc_flags(&d->pc, i) & PG_PRESENT);
		if (fresh)
			fs->page_alloc(fs->page_alloc_ctx, t, fresh);
	}
	rc = write_pages(d, t, off, len, old, cont);
	fs_space_inode_done(fs, d, t ? t->clock : sim_now(fs->sim));
	if (rc < 0)
		return rc;
	d->i_size = old > off + len ? old : off + len;
	inode->size = d->i_size;
	return rc; /* 1: written, then parked by dirty throttling */
}

/* A dfile over d for reads of an open file whose readahead state is ra:
 * a dfile_open's state would be overwritten at once, and only lseek
 * caches a state for dfile_close to put (reads cache none). */
static void dfile_of_file(dfile *f, dinode *d, const file_ra *ra)
{
	f->d = d;
	f->ra = *ra;
	f->llseek_cached = NULL;
}

/* ra: the open file's readahead state, or NULL for a fresh one that
 * every page asks for alone (vio_read) */
static int read_file(fs_info *fs, task *t, struct inode *inode, file_ra *ra, uint64_t off,
		     uint64_t len, uint64_t *got)
{
	dinode *d;
	if (got)
		*got = 0;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	if (off >= d->i_size || len == 0)
		return 0;
	if (len > d->i_size - off)
		len = d->i_size - off;
	dfile f;
	uint64_t end = off + len;
	if (ra) {
		dfile_of_file(&f, d, ra);
		rc = vd_read_call(&f, t, off, end);
		*ra = f.ra;
	} else {
		dfile_open(&f, d, 1);
		rc = vd_read_pages(&f, t, off, end);
		dfile_close(&f);
	}
	if (rc)
		return rc; /* 1: parked behind a read in flight; negative */
	if (got)
		*got = len;
	return 0;
}

int vio_read(fs_info *fs, task *t, struct inode *inode, uint64_t off, uint64_t len,
	     uint64_t *got)
{
	return read_file(fs, t, inode, NULL, off, len, got);
}

void vio_file_open(vio_file *f)
{
	ra_init(&f->ra, BDI_RA_PAGES, 0); /* a plain open(2): no fadvise */
}

int vio_read_file(fs_info *fs, task *t, struct inode *inode, vio_file *f, uint64_t off,
		  uint64_t len, uint64_t *got)
{
	return read_file(fs, t, inode, &f->ra, off, len, got);
}

/* see vfs_io.h. Each call is read_file's with ra: nothing runs between
 * the calls of one step, so the inode is looked up (and its size and
 * check state refreshed) once, and the readahead state stays in the dfile
 * until the calls stop. */
int vio_read_calls(fs_info *fs, task *t, struct inode *inode, vio_file *vf, uint64_t *off,
		   uint64_t end, uint64_t call)
{
	if (*off >= end)
		return 0;
	dinode *d;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	dfile f;
	dfile_of_file(&f, d, &vf->ra);
	while (*off < end) {
		uint64_t o = *off, len = end - o < call ? end - o : call;
		if (o < d->i_size) {
			uint64_t n = len > d->i_size - o ? d->i_size - o : len;
			rc = vd_read_call(&f, t, o, o + n);
			if (rc)
				break; /* 1: parked behind a read in flight; negative */
		}
		*off = o + len;
	}
	vf->ra = f.ra;
	return rc;
}

int vio_fsync(fs_info *fs, task *t, struct inode *inode)
{
	dinode *d;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	if (d->wb_active || vd_wb_inflight(d)) {
		/* an asynchronous writeback owns the inode: wait for it */
		task_park(t, vd_wb_waiters(d));
		return 1;
	}
	if (d->pc.dirty == 0 && vd_oe_n(d) == 0)
		return 0;
	return vd_writeback_sync(d, t);
}

int vio_truncate(fs_info *fs, task *t, struct inode *inode, uint64_t new_size)
{
	return vio_setsize(fs, t, inode, new_size, NULL);
}

/*
 * btrfs_truncate's btrfs_wait_ordered_range(round_down(i_size), EOF):
 * write back the dirty pages from the last partial page on, wait for the
 * bios and complete their ordered extents, on t. The pages before it
 * cannot join (writeback starts at the page it is asked for), so the
 * tail becomes an extent of its own. Fills the sync_* fields of info.
 */
static int setsize_wait_tail(dinode *d, task *t, uint64_t new_size, vio_trunc_info *info)
{
	uint64_t start = new_size & ~(PG - 1);
	if (start >= new_size)
		return 0; /* aligned: the range starts at EOF */
	dfs *df = d->fs;
	uint64_t ext0 = df->wb_extents, bios0 = df->data_writes, bytes0 = df->data_write_bytes;
	simtime_t t0 = t->clock;
	int rc = vd_writeback_range_sync(d, t, start);
	info->sync_extents = df->wb_extents - ext0;
	info->sync_bios = df->data_writes - bios0;
	info->sync_bytes = df->data_write_bytes - bytes0;
	/* an extent with no bio went into the leaf (cow_file_range_inline) */
	if (info->sync_extents && !info->sync_bios)
		info->sync_inline = info->sync_extents;
	if (info->sync_extents) {
		info->sync_ns = t->clock - t0;
		info->sync_start = t0;
	}
	return rc;
}

/* truncate(2) reporting what it did (models btrfs_setsize and, for a
 * shrink or a same-size truncate, btrfs_truncate); see vfs_io.h. */
int vio_setsize(fs_info *fs, task *t, struct inode *inode, uint64_t new_size,
		vio_trunc_info *info)
{
	vio_trunc_info scratch;
	if (!info)
		info = &scratch;
	memset(info, 0, sizeof(*info));
	dinode *d;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	if (new_size > VIO_MAX_FILE_BYTES)
		return LAB_ERANGE;
	uint64_t old = d->i_size;
	if (new_size > old) {
		if (old % PG) {
			rc = dirty_partial(d, t, old);
			if (rc)
				return rc;
		}
		rc = vd_truncate(d, t, new_size);
		if (rc)
			return rc;
		inode->size = new_size;
		return fs_inode_update(fs, t, inode);
	}
	/* pages under writeback would make truncate_setsize wait, and the
	 * ordered wait needs the inode's writeback to itself: wait first,
	 * before anything is changed */
	if (d->wb_active || vd_wb_inflight(d)) {
		task_park(t, vd_wb_waiters(d));
		return 1;
	}
	info->shrink = 1;
	info->same_size = new_size == old;
	/* btrfs_truncate: the next fsync logs every extent of the file, not
	 * only the changed ones (the dropped ones must go from the log too) */
	inode->flags |= INODE_NEEDS_FULL_SYNC;
	fs_charge(fs, t, C_SETSIZE_NS);
	/* the orphan item, in its own transaction: should the truncate not
	 * finish, the next mount's orphan cleanup completes it */
	rc = fs_orphan_add(fs, t, inode->root, inode->ino);
	if (rc)
		return rc;
	/* truncate_setsize (pages, delalloc and maps past the new end), and
	 * here already btrfs_truncate_inode_items (items past the first page
	 * boundary at or after new_size): the ordered wait below only
	 * touches the page before that boundary, whose item both keep, so
	 * doing the items first ends in the same trees */
	rc = vd_truncate(d, t, new_size);
	if (rc)
		return rc < 0 ? rc : LAB_EENGINE; /* no writeback to wait for */
	inode->size = new_size;
	/* btrfs_truncate(inode, skip_writeback = newsize == oldsize) */
	if (info->same_size && fs_patch_on(fs, P_003_TRUNC_SKIP_SAME_SIZE_WB))
		info->skipped = 1;
	else
		rc = setsize_wait_tail(d, t, new_size, info);
	if (rc)
		return rc;
	rc = fs_inode_update(fs, t, inode);
	if (rc)
		return rc;
	rc = fs_orphan_del(fs, t, inode->root, inode->ino);
	return rc == LAB_ENOENT ? 0 : rc;
}

int vio_lseek(fs_info *fs, task *t, struct inode *inode, uint64_t off, int whence,
	      uint64_t *result)
{
	dinode *d;
	int rc = get(fs, inode, &d);
	if (rc)
		return rc;
	if (whence == LSEEK_SET) {
		*result = off;
		return 0;
	}
	if (whence != LSEEK_DATA && whence != LSEEK_HOLE)
		return LAB_EINVAL;
	dfile f;
	dfile_open(&f, d, 0);
	lseek_info li;
	memset(&li, 0, sizeof(li));
	rc = vd_lseek(&f, t, off, whence, &li);
	if (rc == 0 || rc == LSEEK_ENXIO)
		while (vd_lseek_settle(d, t, &li))
			;
	dfile_close(&f);
	if (rc == 0)
		*result = li.result;
	return rc;
}

int vio_sync(fs_info *fs, task *t)
{
	dfs *df = vio_dfs(fs);
	if (!df)
		return LAB_ESTATE;
	/* the inodes that may be dirty, in dfs_inodes order, as the whole
	 * walk would meet them (a walk of every inode per sync made a long
	 * run's time grow with the square of its files) */
	dinode **maybe;
	int n;
	if (vd_maybe_unclean(df, &maybe, &n) == 0) {
		int rc = 0;
		for (int i = 0; i < n && !rc; i++) {
			dinode *d = maybe[i];
			if (d->inode && !vd_clean(d))
				rc = vio_fsync(fs, t, d->inode);
		}
		free(maybe);
		return rc;
	}
	dinode *const *in = dfs_inodes(df);
	for (int i = 0; i < df->ninodes; i++) {
		dinode *d = in[i];
		if (!d->inode || vd_clean(d))
			continue;
		int rc = vio_fsync(fs, t, d->inode);
		if (rc)
			return rc;
	}
	return 0;
}

int vio_remount(fs_info *fs, task *t)
{
	(void)t;
	dfs *df = vio_dfs(fs);
	if (!df)
		return LAB_ESTATE;
	dinode *const *in = dfs_inodes(df);
	for (int i = 0; i < df->ninodes; i++)
		if (!vd_clean(in[i]))
			return LAB_ESTATE;
	dfs_remount(df);
	fs_inodes_reread(fs);
	return 0;
}
