/*
 * vfs_data_write.c - buffered write and dirty throttling (btrfs_buffered_write,
 * balance_dirty_pages). See vfs_data.h.
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
/* dirty throttling (mm/page-writeback.c)                             */

uint64_t dfs_dirty_limit(const dfs *fs)
{
	if (fs->o.dirty_bytes)
		return fs->o.dirty_bytes;
	return fs->o.ram_bytes / 5; /* vm.dirty_ratio = 20 */
}

/* Dirty + writeback pages above the dirty_ratio threshold? */
int vd_over_dirty_limit(const dfs *fs)
{
	uint64_t lim = dfs_dirty_limit(fs);
	return lim && (fs->pcg.dirty + fs->pcg.writeback) * PG > lim;
}

/* wb_start_background_writeback (from balance_dirty_pages): the flusher
 * writes the oldest dirty inodes while dirty pages are over the
 * background threshold (and at least until the throttled writers can
 * go on: a throttle the background threshold does not cover). */
static void kick_writeback(dfs *fs)
{
	fs->wb_throttle = 1;
	vd_flusher_kick(fs, sim_now(fs->s));
}

/* Called as writeback completes: once dirty + writeback is back under the
 * threshold the throttled writers run again (the end of
 * balance_dirty_pages' sleep loop); while it is not, inodes dirtied
 * after the last kick are kicked too (rekick: not after a pass that
 * failed, which would only fail again at the same instant; the writers
 * then stay parked, as they would behind a failing device). */
void vd_throttle_check(dfs *fs, simtime_t now, int rekick)
{
	if (!fs->dirty_throttle.len)
		return;
	if (vd_over_dirty_limit(fs)) {
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
	if (!vd_over_dirty_limit(fs))
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
	while (!rc && vd_over_dirty_limit(fs)) {
		dinode *v = NULL;
		dinode *const *in = dfs_inodes(fs);
		for (int i = 0; i < fs->ninodes; i++) {
			dinode *x = in[i];
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
		vd_dirty_add(d, t->clock);
	task_cpu(fs->s, t, n * C_WRITE_PAGE_NS + extra_ns + eio_call_ns(&c));
	/* balance_dirty_pages_ratelimited: over the background threshold the
	 * flusher is started (wb_start_background_writeback) */
	if (fs->flusher && fs->o.dirty_bg_bytes &&
	    fs->pcg.dirty * PG > fs->o.dirty_bg_bytes)
		vd_flusher_kick(fs, t->clock);
	(void)newly;
	vd_touch(d);
	vd_sample(d);
	vd_space_note(d, t->clock, 0);
	rc = balance_dirty(d, t);
	dfs_shrink(fs);
	return rc;
}
