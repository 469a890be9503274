/*
 * lseek.c - SEEK_DATA / SEEK_HOLE (see lseek.h).
 *
 * The path (6.1 and 6.2 alike): lock the io_tree range from the offset to
 * EOF, walk the inode's file extent items in the fs tree from the offset,
 * and for every hole met (implicit with NO_HOLES, or the tail up to
 * i_size) look for delalloc in it; unlock. The series changes only the
 * delalloc search (find_delalloc_subrange) and, through 1/9, what the
 * io_tree holds after reads.
 *
 * The range lock is charged with eio_lock_pass_cost, which counts exactly
 * what set_extent_bit(LOCKED) and its clear would do on the current tree,
 * in O(log n); the records it would add are not materialised (they are
 * freed by the unlock within the same call). The delalloc searches run on
 * the real tree.
 */
#include "lseek.h"

#include <assert.h>

#include "costs.h"
#include "fs.h"
#include "lab.h"
#include "variation.h"

#define PG PC_PAGE

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Charge an io_tree call to the lseek. */
static void take(lseek_info *li, uint64_t *ns, const eio_call *c)
{
	li->search_records += c->records;
	li->search_nodes += c->nodes;
	li->cache_hits += c->cache_hits;
	li->cache_misses += c->cache_misses;
	*ns += eio_call_ns(c);
}

/* Recording: a count_range_bits call of the delalloc search, and where
 * the cached state points after it. */
static void rec_count(dinode *d, uint64_t start, uint64_t end, extent_state **cached,
		      const eio_call *c)
{
	sim *s = d->fs->s;
	if (!sim_recording(s))
		return;
	const extent_state *cs = cached ? *cached : NULL;
	int how = !cached ? 0 : c->cache_hits ? 1 : 2;
	SIM_REC(s, TK_EIO_COUNT, NULL, d->fs->rec_fs, (int64_t)d->ino, (int64_t)start,
		(int64_t)end, how, (int64_t)c->records, cs ? (int64_t)cs->start : -1,
		cs ? (int64_t)cs->end : -1);
}

/*
 * One delalloc subrange at or after start in [start, end]. Models
 * find_delalloc_subrange: 6.1 (plus the October 2022 patches that skip a
 * search when delalloc_bytes or outstanding_extents is 0) when the series'
 * switches are off, 6.2 when they are on.
 */
static int find_subrange(dinode *d, uint64_t start, uint64_t end,
			 extent_state **cached, int *search_io_tree,
			 uint64_t *ds, uint64_t *de, lseek_info *li, uint64_t *ns)
{
	const fs_info *fsi = d->fs->fsi;
	uint64_t len = end + 1 - start;
	uint64_t dlen = 0;
	li->subranges++;
	if (!fs_patch_on(fsi, P_004_SKIP_DELALLOC_SEARCHES) || *search_io_tree) {
		if (d->delalloc_bytes > 0) {
			eio_call c = {0};
			*ds = start;
			dlen = eio_count_range_bits(&d->io, ds, end, len, EXTENT_DELALLOC,
						    1, cached, &c);
			take(li, ns, &c);
			rec_count(d, start, end, cached, &c);
		}
	}
	if (dlen > 0) {
		*de = *ds + dlen - 1;
		if (fs_patch_on(fsi, P_004_DELALLOC_EARLY_EXIT) && *ds == start) {
			/* 2/9: delalloc covers the start; if it covers the whole
			 * range we are done, else only the rest needs looking at */
			if (*de == end)
				return 1;
			start = *de + 1;
			len = end + 1 - start;
		}
	} else if (fs_patch_on(fsi, P_004_SKIP_DELALLOC_SEARCHES)) {
		/* 3/9: nothing in the io_tree now, nothing on later rounds */
		*search_io_tree = 0;
	}

	uint64_t ms, me; /* the flushing range found, inclusive */
	if (fs_patch_on(fsi, P_004_ORDERED_SEARCH)) {
		/* 4/9: the ordered extents (in flight) instead of extent maps */
		uint64_t nodes = 0;
		const ordered_tree *oe = vd_oe_r(d);
		int64_t k = ordered_lookup_range((ordered_tree *)oe, start, len, &nodes);
		li->search_nodes += nodes;
		*ns += C_MAP_LOOKUP_NS + nodes * C_EIO_NODE_NS;
		if (k < 0)
			return dlen > 0;
		ms = max64(oe->v[k].file_off, start);
		me = min64(oe->v[k].file_off + oe->v[k].len - 1, end);
	} else {
		if (vd_outstanding(d) == 0)
			return dlen > 0;
		uint64_t nodes = 0;
		emap_tree *emt = vd_em_r(d);
		emap_pos k = emap_lookup(emt, start, len, &nodes);
		const extent_map *em = emap_get(emt, k);
		*ns += C_MAP_LOOKUP_NS + nodes * C_EIO_NODE_NS;
		if (em && em->block_start == EM_HOLE && em->start + em->len - 1 < end) {
			/* btrfs_next_extent_map */
			em = emap_get(emt, emap_next(emt, k));
			*ns += C_MAP_LOOKUP_NS;
			nodes++;
			if (em && em->start > end)
				em = NULL;
		}
		li->search_nodes += nodes;
		if (!em || em->block_start == EM_HOLE)
			return dlen > 0;
		ms = max64(em->start, start);
		me = min64(em->start + em->len - 1, end);
	}
	if (dlen == 0) {
		*ds = ms;
		*de = me;
		return 1;
	}
	/* both: the earlier one, merged with the other when adjacent */
	if (ms < *ds) {
		uint64_t old = *ds;
		*ds = ms;
		*de = me + 1 >= old ? max64(*de, me) : me;
		return 1;
	}
	if (ms <= *de + 1)
		*de = max64(*de, me);
	return 1;
}

int vd_find_delalloc_in_range(dinode *d, uint64_t start, uint64_t end,
			      extent_state **cached, uint64_t *ds_ret, uint64_t *de_ret,
			      lseek_info *li, uint64_t *ns)
{
	uint64_t cur = start & ~(PG - 1);
	uint64_t prev_end = 0;
	int ret = 0, search_io_tree = 1;
	while (cur <= end) {
		uint64_t ds = 0, de = 0;
		if (!find_subrange(d, cur, end, cached, &search_io_tree, &ds, &de, li, ns))
			break;
		if (!ret) {
			*ds_ret = max64(ds, start);
			*de_ret = de;
			ret = 1;
		} else if (ds == prev_end + 1) {
			*de_ret = de;
		} else {
			break;
		}
		prev_end = de;
		cur = de + 1;
	}
	return ret;
}

/* find_desired_extent_in_hole: returns 1 with *found when the hole range
 * [start, end] answers the call. */
static int in_hole(dfile *f, int whence, uint64_t start, uint64_t end,
		   uint64_t *found, lseek_info *li, uint64_t *ns)
{
	dinode *d = f->d;
	const fs_info *fsi = d->fs->fsi;
	extent_state **cached = fs_patch_on(fsi, P_004_COUNT_RANGE_BITS_CACHED) &&
					fs_patch_on(fsi, P_004_LSEEK_CACHED_STATE)
				? &f->llseek_cached : NULL;
	uint64_t ds = 0, de = 0;
	int delalloc = vd_find_delalloc_in_range(d, start, end, cached, &ds, &de, li, ns);
	if (delalloc && whence == LSEEK_DATA) {
		*found = ds;
		return 1;
	}
	if (delalloc && whence == LSEEK_HOLE) {
		if (start < ds) {
			*found = start;
			return 1;
		}
		if (de < end) {
			*found = de + 1;
			return 1;
		}
		return 0;
	}
	if (whence == LSEEK_HOLE) {
		*found = start;
		return 1;
	}
	return 0;
}

/* Recording: the call's result and what it walked (lseek_ret). */
static void rec_ret(dinode *d, task *t, int whence, int64_t result, const lseek_info *li)
{
	SIM_REC(d->fs->s, TK_LSEEK_RET, t, d->fs->rec_fs, (int64_t)d->ino, whence, result,
		(int64_t)li->lock_records, (int64_t)li->search_records,
		(int64_t)li->cache_hits, (int64_t)li->cache_misses);
}

int vd_lseek(dfile *f, task *t, uint64_t offset, int whence, lseek_info *li)
{
	dinode *d = f->d;
	dfs *fs = d->fs;
	uint64_t ns = var_ns(fs->s, V_SYSCALL, C_LSEEK_NS);
	li->offset = offset;
	li->whence = whence;
	uint64_t i_size = d->i_size;
	if (!li->parked)
		SIM_REC_OP(fs->s, TK_OP_LSEEK, t, fs->rec_fs, (int64_t)d->ino, whence,
			(int64_t)offset, (int64_t)i_size);
	li->parked = 0;
	if (offset >= i_size) {
		task_cpu(fs->s, t, ns);
		li->cpu_ns += ns;
		rec_ret(d, t, whence, -1, li);
		return LSEEK_ENXIO;
	}
	if (whence == LSEEK_HOLE && d->nbytes == i_size && d->delalloc_bytes == 0) {
		li->result = i_size;
		task_cpu(fs->s, t, ns);
		li->cpu_ns += ns;
		rec_ret(d, t, whence, (int64_t)i_size, li);
		return 0;
	}
	uint64_t lockstart = offset & ~(PG - 1);
	uint64_t lockend = ((i_size + PG - 1) & ~(PG - 1)) - 1;
	/* a read in flight holds LOCKED pages in the range: sleep on it */
	for (dbio *r = d->reads; r; r = r->next) {
		if (r->n && r->offs[r->n - 1] + PG - 1 >= lockstart) {
			simtime_t t0 = t->clock;
			task_park(t, &d->io.lock_waiters);
			(void)t0;
			li->parked = 1; /* the call is retried: the same operation */
			return 1;
		}
	}
	/* writeback is flushing an extent inside the range: wait for it */
	if (d->x && d->x->wb_lock_until > t->clock && d->x->wb_lock_off >= lockstart) {
		simtime_t until = d->x->wb_lock_until + vd_wakeup_ns(fs);
		simtime_t w = until - t->clock;
		task_wait_until(t, until);
		li->waited_ns += w;
	}
	simtime_t t_start = t->clock;
	/* lock_extent_bits(lockstart, lockend) and, later, its unlock */
	eio_call L = {0}, U = {0};
	eio_lock_pass_cost(&d->io, lockstart, lockend, &L, &U);
	SIM_REC(fs->s, TK_EIO_LOCK_PASS, t, fs->rec_fs, (int64_t)d->ino, (int64_t)lockstart,
		(int64_t)lockend, (int64_t)L.records);
	li->lock_records += L.records + U.records;
	li->lock_nodes += L.nodes + U.nodes;
	ns += eio_call_ns(&L) + eio_call_ns(&U);
	/* the range stays locked until this call ends: publish it now so
	 * writeback steps later in time see it (the sweep's timing is set
	 * below, once the search's cost is known) */
	dinode_x *x = vd_xw(d);
	if (!x)
		return LAB_ENOMEM;
	x->lseek_lock_start = lockstart;
	x->lseek_lock_until = SIMTIME_MAX;
	x->lock_t0 = t->clock;
	x->lock_t1 = t->clock + eio_call_ns(&L);
	x->lock_delay = 0;
	x->lock_recs = L.records ? L.records : 1;
	/* walk the file extent items from the offset (prealloc extents are
	 * holes to SEEK_DATA/SEEK_HOLE: their delalloc is looked for) */
	vd_fecur cur;
	int wr = vd_fecur_first(&cur, d, t, offset, &li->fst_nodes);
	uint64_t start = offset, last_end = lockstart, res = 0;
	int found = 0, advance = 0;
	while (start < i_size) {
		/* step to the next item only while the walk goes on (a leaf
		 * crossing is a search: btrfs_next_leaf) */
		if (advance)
			wr = vd_fecur_next(&cur);
		advance = 1;
		if (wr)
			break;
		const fext *fe = &cur.cur;
		uint64_t fe_end = fe->off + fe->len;
		if (fe_end <= start || cur.type == FE_PREALLOC)
			continue;
		if (last_end < fe->off) {
			/* an implicit hole before this item */
			uint64_t s0 = max64(last_end, offset);
			if (s0 < fe->off && in_hole(f, whence, s0, fe->off - 1, &res, li, &ns)) {
				start = res;
				found = 1;
				break;
			}
		}
		if (whence == LSEEK_DATA) {
			start = max64(offset, fe->off);
			found = 1;
			break;
		}
		start = fe_end;
		last_end = fe_end;
	}
	vd_fecur_end(&cur);
	if (!found && start < i_size) {
		if (in_hole(f, whence, max64(start, offset), i_size - 1, &res, li, &ns))
			start = res;
		else
			start = i_size;
	}
	task_cpu(fs->s, t, ns);
	li->cpu_ns += ns;
	x->lock_t1 = t_start + eio_call_ns(&L);
	x->lseek_lock_until = t->clock;
	(void)t_start;
	if (whence == LSEEK_DATA && start >= i_size) {
		rec_ret(d, t, whence, -1, li);
		return LSEEK_ENXIO;
	}
	li->result = min64(start, i_size);
	rec_ret(d, t, whence, (int64_t)li->result, li);
	return 0;
}

int vd_lseek_settle(dinode *d, task *t, lseek_info *li)
{
	simtime_t until = vd_lseek_until(d);
	if (until > t->clock && until != SIMTIME_MAX) {
		li->waited_ns += until - t->clock;
		task_wait_until(t, until);
		return 1;
	}
	return 0;
}
