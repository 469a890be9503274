/*
 * vfs_data_items.c - the data path's file extent items, in the fs tree:
 * the cursor lseek and reads walk, cold tree blocks after a remount, the
 * item part of ordered-extent completion and truncate, and the check of
 * the derived state against the tree (see vfs_data.h).
 */
#include "vfs_data.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "check.h"
#include "costs.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "trans.h"
#include "labmem.h"

#define PG PC_PAGE

static uint64_t round_up_pg(uint64_t x) { return (x + PG - 1) & ~(PG - 1); }

/* ------------------------------------------------------------------ */
/* the fs tree's blocks, cold after a remount                          */

/* Whether bytenr was read since the remount; marks it read. An open
 * addressing set keyed by bytenr (no iteration, so no order issue). */
static int warm_test_set(dfs *fs, uint64_t bytenr)
{
	if (fs->warm_n * 2 >= fs->warm_cap) {
		uint64_t nc = fs->warm_cap ? fs->warm_cap * 2 : 1024;
		uint64_t *n = lab_calloc(nc, sizeof(*n));
		assert(n);
		for (uint64_t i = 0; i < fs->warm_cap; i++) {
			uint64_t b = fs->warm[i];
			if (!b)
				continue;
			uint64_t h = (b / BT_NODESIZE * 0x9E3779B97F4A7C15ull) & (nc - 1);
			while (n[h])
				h = (h + 1) & (nc - 1);
			n[h] = b;
		}
		free(fs->warm);
		fs->warm = n;
		fs->warm_cap = nc;
	}
	uint64_t h = (bytenr / BT_NODESIZE * 0x9E3779B97F4A7C15ull) & (fs->warm_cap - 1);
	while (fs->warm[h]) {
		if (fs->warm[h] == bytenr)
			return 1;
		h = (h + 1) & (fs->warm_cap - 1);
	}
	fs->warm[h] = bytenr;
	fs->warm_n++;
	return 0;
}

uint64_t vd_tree_touch(dfs *fs, task *t, const bt_path *p)
{
	uint64_t reads = 0;
	if (!fs->meta_cold)
		return 0;
	for (int l = BT_MAX_LEVEL - 1; l >= 0; l--) {
		const bt_node *n = p->nodes[l];
		/* blocks written since the remount are in memory */
		if (!n || bt_node_gen(n) > fs->cold_gen)
			continue;
		uint64_t b = bt_node_bytenr(n);
		if (fs->warm_last[l] == b)
			continue;
		int warm = warm_test_set(fs, b);
		fs->warm_last[l] = b;
		if (warm)
			continue;
		if (t) {
			simtime_t done = bdev_io(fs->dev, BIO_READ, bt_node_bytenr(n),
						 BT_NODESIZE, t->clock);
			task_wait_until(t, done);
		}
		fs->metadata_reads++;
		reads++;
	}
	return reads;
}

static void fext_from(fext *x, int *type, const fe_info *fe)
{
	x->off = fe->file_off;
	x->len = fe->num_bytes;
	x->disk = fe->type == FE_INLINE ? FEXT_INLINE : fe->disk_bytenr + fe->extent_offset;
	*type = fe->type;
}

/* Account the path after a search or a leaf crossing. */
static void fecur_charge(vd_fecur *c, uint64_t visited_before)
{
	dfs *fs = c->d->fs;
	bt_tree *tr = c->it.path.tree;
	uint64_t v = tr->nodes_visited - visited_before;
	if (c->nodes)
		*c->nodes += v;
	fs->fst_nodes_visited += v;
	if (c->it.path.nodes[0] != c->leaf) {
		c->leaf = c->it.path.nodes[0];
		vd_tree_touch(fs, c->t, &c->it.path);
	}
}

int vd_fecur_first(vd_fecur *c, dinode *d, task *t, uint64_t off, uint64_t *nodes)
{
	memset(c, 0, sizeof(*c));
	c->d = d;
	c->t = t;
	c->nodes = nodes;
	dfs *fs = d->fs;
	if (!d->inode)
		return 1;
	c->open = 1;
	bt_tree *tr = &d->inode->root->tree;
	uint64_t v0 = tr->nodes_visited;
	fe_info fe;
	int rc = fe_iter_first(fs->fsi, t, d->inode, off, &c->it, &fe);
	c->it.path.tree = tr;
	fecur_charge(c, v0);
	if (rc)
		return rc;
	fext_from(&c->cur, &c->type, &fe);
	return 0;
}

int vd_fecur_next(vd_fecur *c)
{
	dinode *d = c->d;
	if (!c->open)
		return 1;
	bt_tree *tr = c->it.path.tree;
	uint64_t v0 = tr->nodes_visited;
	fe_info fe;
	int rc = fe_iter_next(d->fs->fsi, &c->it, &fe);
	fecur_charge(c, v0);
	if (rc)
		return rc;
	fext_from(&c->cur, &c->type, &fe);
	return 0;
}

void vd_fecur_end(vd_fecur *c)
{
	if (c->open)
		fe_iter_end(&c->it);
	c->open = 0;
}

/*
 * Map the page at off (btrfs_get_extent's search): 1 when an item with
 * data covers it (*x filled; an inline item has disk FEXT_INLINE), 0 for
 * a hole (*x = the hole up to the next item or EOF, disk EM_HOLE), or
 * negative. Prealloc extents read as holes.
 */
int vd_fe_map(dinode *d, task *t, uint64_t off, fext *x)
{
	vd_fecur c;
	x->off = off;
	x->len = PG;
	x->disk = EM_HOLE;
	int rc = vd_fecur_first(&c, d, t, off, NULL);
	while (rc == 0 && c.type == FE_PREALLOC && c.cur.off <= off)
		rc = vd_fecur_next(&c);
	vd_fecur_end(&c);
	if (rc < 0)
		return rc;
	if (rc == 0 && c.cur.off <= off && off < c.cur.off + c.cur.len) {
		*x = c.cur;
		return 1;
	}
	x->off = off;
	uint64_t end = rc == 0 ? c.cur.off : round_up_pg(d->i_size);
	x->len = end > off ? end - off : PG;
	x->disk = EM_HOLE;
	return 0;
}

/*
 * The tree part of finish_ordered_io for one ordered extent,
 * inside a handle joined on the transaction manager when there is one:
 * insert the file extent item (dropping what it replaces), its data ref
 * and its checksums, then write the inode item back (models
 * btrfs_finish_ordered_io -> insert_reserved_file_extent +
 * btrfs_update_inode). t may be NULL (end_io context). An evicted inode's
 * extent is given back to the allocator.
 */
int vd_fe_finish_tree(dinode *d, task *t, const ordered_extent *oe)
{
	dfs *fs = d->fs;
	fs_info *fsi = fs->fsi;
	if (!d->inode) {
		if (oe->disk_bytenr != FEXT_INLINE)
			return alloc_free_now(&fsi->alloc, oe->disk_bytenr, oe->len);
		return 0;
	}
	trans_handle h;
	int joined = 0;
	if (fs->tm) {
		int rc = trans_start(fs->tm, NULL, &h);
		if (rc < 0)
			return rc;
		joined = 1;
	}
	/* the tree blocks COWed here come out of the inode's delalloc
	 * reserve (finish_ordered_io sets trans->block_rsv to it) */
	block_rsv *prev_rsv = fsi->cur_rsv;
	if (!d->sp_gone)
		fsi->cur_rsv = &d->sp_rsv.rsv;
	int rc;
	if (oe->disk_bytenr == FEXT_INLINE)
		rc = fs_file_extent_insert_inline(fsi, t, d->inode, d->i_size);
	else
		rc = fs_file_extent_insert(fsi, t, d->inode, oe->file_off, oe->len,
					   oe->disk_bytenr, oe->len, FE_REG);
	if (!rc) {
		d->inode->size = d->i_size;
		rc = fs_inode_update(fsi, t, d->inode);
	}
	d->nbytes = d->inode->nbytes;
	fsi->cur_rsv = prev_rsv;
	if (joined) {
		int r2 = trans_end(&h, 0);
		if (!rc)
			rc = r2;
	}
	return rc;
}

/*
 * Drop the file extent items past the new end, trimming the
 * one crossing it, and an inline extent's bytes past it; write the inode
 * item back (models btrfs_truncate_inode_items + btrfs_update_inode).
 */
int vd_fe_truncate_tree(dinode *d, task *t, uint64_t new_size, uint64_t from)
{
	fs_info *fsi = d->fs->fsi;
	struct inode *in = d->inode;
	if (!in)
		return 0;
	int rc = fs_drop_extents(fsi, t, in, from, UINT64_MAX, NULL);
	fe_info fe;
	if (!rc && new_size < SECTORSIZE && fs_file_extent_lookup(fsi, t, in, 0, &fe) == 0 &&
	    fe.type == FE_INLINE && new_size < fe.num_bytes)
		rc = fs_drop_extents(fsi, t, in, new_size, SECTORSIZE, NULL);
	in->size = new_size;
	if (!rc)
		rc = fs_inode_update(fsi, t, in);
	d->nbytes = in->nbytes;
	return rc;
}

/*
 * The inode's EXTENT_DATA items against the data path's state
 * (the tree is the truth; the extent maps and nbytes are derived from
 * it): items in order without overlap, none starting at or past i_size,
 * an inline item only at offset 0 and covering the file (unless page 0
 * is waiting for writeback), nbytes equal to what the items
 * map, and every cached data map equal to the item covering it once no
 * ordered extent is pending (a map made by writeback precedes its item).
 * Walks the tree with accounting off (no visits, no CPU).
 */
int vd_fe_check_tree(const dinode *d)
{
	fs_info *fsi = d->fs->fsi;
	struct inode *in = d->inode;
	int bad = 0, saved = fsi->accounting_off;
	fsi->accounting_off = 1;
	fe_iter it;
	fe_info fe;
	uint64_t last_end = 0, mapped = 0, n = 0;
	int rc = fe_iter_first(fsi, NULL, in, 0, &it, &fe);
	while (rc == 0) {
		if (n && fe.file_off < last_end) {
			check_report(fsi, "data: ino %llu item at %llu overlaps",
				     (unsigned long long)in->ino, (unsigned long long)fe.file_off);
			bad++;
		}
		if (fe.file_off >= in->size && fe.file_off > 0) {
			check_report(fsi, "data: ino %llu item at %llu past i_size %llu",
				     (unsigned long long)in->ino, (unsigned long long)fe.file_off,
				     (unsigned long long)in->size);
			bad++;
		}
		/* an inline extent shorter than the file is only legal while
		 * page 0 waits for writeback (the expand dirtied it) */
		int pg0_pending = (pc_flags(&d->pc, 0) & (PG_DIRTY | PG_WRITEBACK)) != 0;
		if (fe.type == FE_INLINE &&
		    (fe.file_off != 0 || (in->size > fe.num_bytes && !pg0_pending))) {
			check_report(fsi, "data: ino %llu inline extent in a %llu byte file",
				     (unsigned long long)in->ino, (unsigned long long)in->size);
			bad++;
		}
		if (vd_oe_n(d) == 0 && fe.type == FE_REG) {
			uint64_t nodes = 0;
			emap_tree *em = vd_em_r((dinode *)d);
			const extent_map *m = emap_get(em, emap_lookup(em, fe.file_off, 1, &nodes));
			if (m && m->block_start != EM_HOLE &&
			    m->block_start + (fe.file_off - m->start) !=
				    fe.disk_bytenr + fe.extent_offset) {
				check_report(fsi, "data: ino %llu extent map at %llu disagrees with the tree",
					     (unsigned long long)in->ino, (unsigned long long)fe.file_off);
				bad++;
			}
		}
		mapped += fe.num_bytes;
		last_end = fe.file_off + fe.num_bytes;
		n++;
		rc = fe_iter_next(fsi, &it, &fe);
	}
	fe_iter_end(&it);
	if (rc < 0)
		bad++;
	if (mapped != in->nbytes) {
		check_report(fsi, "data: ino %llu items map %llu bytes, nbytes %llu",
			     (unsigned long long)in->ino, (unsigned long long)mapped,
			     (unsigned long long)in->nbytes);
		bad++;
	}
	fsi->accounting_off = saved;
	return bad;
}
