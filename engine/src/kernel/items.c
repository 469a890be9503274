/*
 * items.c - item-level operations: inode items, orphan items, file extent
 * items (insert, drop, lookup, iterate) and checksum items (items.h).
 *
 * Ranged items (file extents, checksums) are found with a read-only walk
 * first (which may step back one leaf to find an item that starts before
 * the range) and then modified through an exact-key COW search, one item
 * at a time. The kernel does the same work with fewer searches; the node
 * visits this costs are counted like any others.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "delayed_inode.h"
#include "fs.h"
#include "items.h"
#include "lab.h"

/* ---------------------------------------------------------------- hashes */

static uint32_t crc_table[256];
static int crc_ready;

uint32_t items_crc32c(uint32_t crc, const void *data, uint32_t len)
{
	if (!crc_ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			crc_table[i] = c;
		}
		crc_ready = 1;
	}
	const unsigned char *p = data;
	for (uint32_t i = 0; i < len; i++)
		crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

uint64_t items_name_hash(const char *name, uint32_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < len; i++) {
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

uint32_t items_extent_item_size(int is_tree, uint32_t records)
{
	return SZ_EXTENT_ITEM + records * (is_tree ? SZ_INLINE_TREE_REF : SZ_INLINE_DATA_REF);
}

/* ----------------------------------------------------------- inode items */

static void inode_to_item(const struct inode *in, bt_item *it)
{
	memset(it, 0, sizeof(*it));
	it->v[0] = in->size;
	it->v[1] = in->nbytes;
	it->v[2] = in->generation;
	it->aux = in->mode;
}

int fs_inode_item_insert(fs_info *fs, task *t, struct inode *inode)
{
	bt_item it;
	inode_to_item(inode, &it);
	bt_key k = bt_mkkey(inode->ino, BTRFS_INODE_ITEM_KEY, 0);
	int r = bt_insert(&inode->root->tree, t, &k, SZ_INODE_ITEM, &it, NULL);
	inode->transid = fs->transid;
	return r < 0 ? r : (r ? LAB_EINVAL : 0);
}

int fs_inode_update(fs_info *fs, task *t, struct inode *inode)
{
	/* btrfs_update_inode of a subvolume inode is a delayed item when
	 * the fs has them (btrfs_delayed_update_inode) */
	delayed_root *dr = dl_of(fs);
	if (dr && (inode->root->id == BTRFS_FS_TREE_OBJECTID ||
		   inode->root->id >= BTRFS_FIRST_FREE_OBJECTID)) {
		inode->transid = fs->transid;
		return dl_update_inode(dr, t, inode);
	}
	bt_tree *tr = &inode->root->tree;
	bt_key k = bt_mkkey(inode->ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, &k, 0, 1);
	if (ret) {
		bt_path_release(&p);
		return ret < 0 ? ret : LAB_ENOENT;
	}
	bt_item *it = bt_path_item(&p);
	bt_item fresh;
	inode_to_item(inode, &fresh);
	it->v[0] = fresh.v[0];
	it->v[1] = fresh.v[1];
	it->v[2] = fresh.v[2];
	it->aux = fresh.aux;
	bt_mark_dirty(tr, &p);
	bt_path_release(&p);
	inode->transid = fs->transid;
	return 0;
}

int fs_inode_item_delete(fs_info *fs, task *t, struct inode *inode)
{
	bt_key k = bt_mkkey(inode->ino, BTRFS_INODE_ITEM_KEY, 0);
	int r = bt_delete(&inode->root->tree, t, &k);
	(void)fs;
	return r < 0 ? r : (r ? LAB_ENOENT : 0);
}

int fs_orphan_add(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino)
{
	bt_key k = bt_mkkey(BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino);
	int r = bt_insert(&root->tree, t, &k, 0, NULL, NULL);
	(void)fs;
	return r < 0 ? r : 0; /* already there is fine */
}

int fs_orphan_del(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino)
{
	bt_key k = bt_mkkey(BTRFS_ORPHAN_OBJECTID, BTRFS_ORPHAN_ITEM_KEY, ino);
	int r = bt_delete(&root->tree, t, &k);
	(void)fs;
	return r < 0 ? r : (r ? LAB_ENOENT : 0);
}

/* ----------------------------------------------------- ranged-item search */

/* End (exclusive) of the range an item covers: file bytes for a file
 * extent item, disk bytes for a checksum item. */
static uint64_t range_end(const bt_item *it)
{
	if (it->key.type == BTRFS_EXTENT_DATA_KEY)
		return it->key.offset + it->v[1];
	return it->key.offset + (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE;
}

static int same_kind(const bt_item *it, uint64_t obj, uint8_t type)
{
	return it->key.objectid == obj && it->key.type == type;
}

/*
 * Position a read path at the first (obj, type) item whose range ends after
 * `start` (it may begin before start). Returns 0 (p at it), 1 (none; p
 * released), or negative.
 */
static int range_position(bt_tree *tr, bt_path *p, uint64_t obj, uint8_t type,
			  uint64_t start)
{
	bt_key key = bt_mkkey(obj, type, start);
	int ret = bt_search(tr, p, &key, 0, 0);
	if (ret <= 0)
		return ret;
	bt_node *l = p->nodes[0];
	if (p->slots[0] > 0) {
		bt_item *prev = &l->items[p->slots[0] - 1];
		if (same_kind(prev, obj, type) && range_end(prev) > start) {
			p->slots[0]--;
			return 0;
		}
	} else if (bt_prev_leaf(tr, p) == 0) {
		bt_item *prev = bt_path_item(p);
		if (prev && same_kind(prev, obj, type) && range_end(prev) > start)
			return 0;
		if (bt_next_leaf(tr, p)) {
			bt_path_release(p);
			return 1;
		}
		p->slots[0] = 0;
	}
	/* (no previous leaf: bt_prev_leaf left the path where it was) */
	if (p->slots[0] >= p->nodes[0]->nritems && bt_next_leaf(tr, p)) {
		bt_path_release(p);
		return 1;
	}
	bt_item *it = bt_path_item(p);
	if (!it || !same_kind(it, obj, type)) {
		bt_path_release(p);
		return 1;
	}
	return 0;
}

/* Find the first (obj, type) item overlapping [start, end); copy it. */
static int range_find(bt_tree *tr, task *t, uint64_t obj, uint8_t type, uint64_t start,
		      uint64_t end, bt_item *out)
{
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = range_position(tr, &p, obj, type, start);
	if (ret) {
		bt_path_release(&p);
		return ret;
	}
	bt_item *it = bt_path_item(&p);
	if (it->key.offset >= end) {
		bt_path_release(&p);
		return 1;
	}
	*out = *it;
	bt_path_release(&p);
	return 0;
}

/* COW-search an exact key; 0 with p at the item, or an error. */
static int exact_cow(bt_tree *tr, bt_path *p, const bt_key *key, int ins_len)
{
	int ret = bt_search(tr, p, key, ins_len, 1);
	if (ret) {
		bt_path_release(p);
		return ret < 0 ? ret : LAB_EENGINE;
	}
	return 0;
}

/* ------------------------------------------------------------ checksums */

static bt_tree *csum_tree(fs_info *fs) { return &fs->csum_tree; }

int fs_csum_insert(fs_info *fs, task *t, uint64_t bytenr, uint64_t len)
{
	if (len % SECTORSIZE || bytenr % SECTORSIZE)
		return LAB_EINVAL;
	bt_tree *tr = csum_tree(fs);
	uint64_t pos = bytenr, end = bytenr + len;
	while (pos < end) {
		uint64_t need = (end - pos) / SECTORSIZE * SZ_CSUM_PER_SECTOR;
		/* try to grow an item that ends exactly at pos */
		bt_path p;
		bt_path_init(&p, tr, t);
		bt_key key = bt_mkkey(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, pos);
		int ret = bt_search(tr, &p, &key, (int)SZ_CSUM_PER_SECTOR, 1);
		if (ret < 0) {
			bt_path_release(&p);
			return ret;
		}
		if (ret == 0) {
			bt_path_release(&p);
			return LAB_EENGINE; /* checksums for these sectors exist already */
		}
		bt_node *l = p.nodes[0];
		int slot = p.slots[0];
		if (slot > 0) {
			bt_item *prev = &l->items[slot - 1];
			uint32_t room = BT_LEAF_DATA_SIZE - l->used;
			if (same_kind(prev, BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY) &&
			    range_end(prev) == pos && prev->size < CSUM_MAX_BYTES && room >= SZ_CSUM_PER_SECTOR) {
				uint64_t grow = need;
				if (grow > room / SZ_CSUM_PER_SECTOR * SZ_CSUM_PER_SECTOR)
					grow = room / SZ_CSUM_PER_SECTOR * SZ_CSUM_PER_SECTOR;
				if (grow > CSUM_MAX_BYTES - prev->size)
					grow = CSUM_MAX_BYTES - prev->size;
				p.slots[0] = slot - 1;
				int r = bt_extend_item(tr, &p, prev->size + (uint32_t)grow);
				bt_path_release(&p);
				if (r)
					return r;
				pos += grow / SZ_CSUM_PER_SECTOR * SECTORSIZE;
				continue;
			}
		}
		/* the next item must not overlap the new one */
		uint64_t limit = end;
		if (slot < l->nritems) {
			bt_item *next = &l->items[slot];
			if (same_kind(next, BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY) &&
			    next->key.offset < limit)
				limit = next->key.offset;
		}
		bt_path_release(&p);
		uint64_t bytes = (limit - pos) / SECTORSIZE * SZ_CSUM_PER_SECTOR;
		if (bytes == 0)
			return LAB_EENGINE;
		if (bytes > CSUM_MAX_BYTES)
			bytes = CSUM_MAX_BYTES;
		int r = bt_insert(tr, t, &key, (uint32_t)bytes, NULL, NULL);
		if (r)
			return r < 0 ? r : LAB_EENGINE;
		pos += bytes / SZ_CSUM_PER_SECTOR * SECTORSIZE;
	}
	return 0;
}

int fs_csum_delete(fs_info *fs, task *t, uint64_t s, uint64_t len)
{
	bt_tree *tr = csum_tree(fs);
	uint64_t e = s + len;
	for (;;) {
		bt_item it;
		int ret = range_find(tr, t, BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, s, e, &it);
		if (ret < 0)
			return ret;
		if (ret)
			return 0;
		uint64_t a = it.key.offset, b = range_end(&it);
		bt_path p;
		bt_path_init(&p, tr, t);
		if (a >= s && b <= e) {
			int r = exact_cow(tr, &p, &it.key, -1);
			if (r)
				return r;
			r = bt_del_items(tr, &p, 1);
			if (r)
				return r;
		} else if (a < s) {
			int r = exact_cow(tr, &p, &it.key, 0);
			if (r)
				return r;
			bt_truncate_item(tr, &p, (uint32_t)((s - a) / SECTORSIZE * SZ_CSUM_PER_SECTOR));
			bt_path_release(&p);
			if (b > e) {
				bt_key k = bt_mkkey(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, e);
				r = bt_insert(tr, t, &k, (uint32_t)((b - e) / SECTORSIZE * SZ_CSUM_PER_SECTOR),
					      NULL, NULL);
				if (r)
					return r < 0 ? r : LAB_EENGINE;
			}
		} else {
			/* starts inside, ends after: cut the front */
			int r = exact_cow(tr, &p, &it.key, 0);
			if (r)
				return r;
			bt_key k = bt_mkkey(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, e);
			bt_set_item_key(tr, &p, &k);
			bt_truncate_item(tr, &p, (uint32_t)((b - e) / SECTORSIZE * SZ_CSUM_PER_SECTOR));
			bt_path_release(&p);
		}
	}
}

uint64_t fs_csum_count(fs_info *fs, uint64_t s, uint64_t len)
{
	bt_tree *tr = csum_tree(fs);
	uint64_t e = s + len, n = 0;
	bt_path p;
	bt_path_init(&p, tr, NULL);
	if (range_position(tr, &p, BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, s)) {
		bt_path_release(&p);
		return 0;
	}
	for (;;) {
		bt_item *it = bt_path_item(&p);
		if (!it || !same_kind(it, BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY) ||
		    it->key.offset >= e)
			break;
		uint64_t a = it->key.offset > s ? it->key.offset : s;
		uint64_t b = range_end(it) < e ? range_end(it) : e;
		if (b > a)
			n += (b - a) / SECTORSIZE;
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
	return n;
}

/* -------------------------------------------------------- file extents */

static void fe_fill(const bt_item *it, fe_info *out)
{
	out->file_off = it->key.offset;
	out->type = (int)it->aux;
	out->num_bytes = it->v[1];
	if (it->aux == FE_INLINE) {
		out->disk_bytenr = 0;
		out->disk_num_bytes = 0;
		out->extent_offset = 0;
	} else {
		out->disk_bytenr = it->v[0];
		out->disk_num_bytes = fe_disk_len(it);
		out->extent_offset = fe_ext_off(it);
	}
}

/* Queue a data ref change for a file extent item of inode `ino`. */
static void fe_ref(fs_info *fs, uint64_t root, uint64_t ino, const bt_item *it, int delta)
{
	if (it->aux == FE_INLINE || it->v[0] == 0)
		return;
	fs_ref_op op = {
		.bytenr = it->v[0], .num_bytes = fe_disk_len(it), .root = root,
		.owner = ino, .offset = it->key.offset - fe_ext_off(it),
		.delta = (int8_t)delta, .is_tree = 0,
	};
	fs_ref_queue(fs, &op);
}

int fs_drop_extents(fs_info *fs, task *t, struct inode *inode, uint64_t start, uint64_t end,
		    uint64_t *dropped)
{
	bt_tree *tr = &inode->root->tree;
	uint64_t ino = inode->ino, root = inode->root->id, gone = 0;
	if (end <= start) {
		if (dropped)
			*dropped = 0;
		return 0;
	}
	for (;;) {
		bt_item it;
		int ret = range_find(tr, t, ino, BTRFS_EXTENT_DATA_KEY, start, end, &it);
		if (ret < 0)
			return ret;
		if (ret)
			break;
		uint64_t a = it.key.offset, b = range_end(&it);
		bt_path p;
		bt_path_init(&p, tr, t);
		int r;
		if ((a >= start && b <= end) || (it.aux == FE_INLINE && a >= start)) {
			/* wholly inside (an inline extent cannot lose its front) */
			r = exact_cow(tr, &p, &it.key, -1);
			if (r)
				return r;
			r = bt_del_items(tr, &p, 1);
			if (r)
				return r;
			fe_ref(fs, root, ino, &it, -1);
			gone += b - a;
		} else if (a < start) {
			/* keep the front; a part after `end` becomes its own item */
			r = exact_cow(tr, &p, &it.key, 0);
			if (r)
				return r;
			bt_item *x = bt_path_item(&p);
			x->v[1] = start - a;
			if (x->aux == FE_INLINE)
				bt_truncate_item(tr, &p, SZ_FE_INLINE_BASE + (uint32_t)(start - a));
			bt_mark_dirty(tr, &p);
			bt_path_release(&p);
			if (b > end) {
				if (it.aux == FE_INLINE) {
					gone += end - start;
				} else {
					bt_item tail = it;
					tail.v[1] = b - end;
					tail.v[2] = fe_pack(fe_disk_len(&it), fe_ext_off(&it) + (end - a));
					bt_key k = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, end);
					r = bt_insert(tr, t, &k, it.size, &tail, NULL);
					if (r)
						return r < 0 ? r : LAB_EENGINE;
					fe_ref(fs, root, ino, &tail, +1);
					gone += end - start;
				}
			} else {
				gone += b - start;
			}
		} else {
			/* starts inside, ends after: keep the tail */
			r = exact_cow(tr, &p, &it.key, 0);
			if (r)
				return r;
			bt_item *x = bt_path_item(&p);
			x->v[1] = b - end;
			x->v[2] = fe_pack(fe_disk_len(&it), fe_ext_off(&it) + (end - a));
			bt_key k = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, end);
			bt_set_item_key(tr, &p, &k);
			bt_path_release(&p);
			gone += end - a;
		}
	}
	if (gone > inode->nbytes)
		gone = inode->nbytes;
	inode->nbytes -= gone;
	if (dropped)
		*dropped = gone;
	return 0;
}

int fs_file_extent_insert(fs_info *fs, task *t, struct inode *inode, uint64_t file_off,
			  uint64_t num_bytes, uint64_t disk_bytenr, uint64_t disk_num_bytes,
			  int type)
{
	if (!inode || (type != FE_REG && type != FE_PREALLOC) || num_bytes == 0 ||
	    file_off % SECTORSIZE || num_bytes % SECTORSIZE || disk_bytenr % SECTORSIZE ||
	    disk_num_bytes % SECTORSIZE || num_bytes > disk_num_bytes || disk_bytenr == 0 ||
	    disk_num_bytes >= (1ull << 40))
		return LAB_EINVAL;
	int r = fs_drop_extents(fs, t, inode, file_off, file_off + num_bytes, NULL);
	if (r)
		return r;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.aux = (uint32_t)type;
	it.v[0] = disk_bytenr;
	it.v[1] = num_bytes;
	it.v[2] = fe_pack(disk_num_bytes, 0);
	bt_key k = bt_mkkey(inode->ino, BTRFS_EXTENT_DATA_KEY, file_off);
	r = bt_insert(&inode->root->tree, t, &k, SZ_FE_REG, &it, NULL);
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	it.key = k;
	fe_ref(fs, inode->root->id, inode->ino, &it, +1);
	if (type == FE_REG) {
		r = fs_csum_insert(fs, t, disk_bytenr, disk_num_bytes);
		if (r)
			return r;
	}
	inode->nbytes += num_bytes;
	return 0;
}

int fs_file_extent_insert_inline(fs_info *fs, task *t, struct inode *inode, uint64_t len)
{
	if (!inode || len == 0 || len >= SECTORSIZE || len + SZ_FE_INLINE_BASE > BT_MAX_ITEM_SIZE)
		return LAB_EINVAL;
	int r = fs_drop_extents(fs, t, inode, 0, SECTORSIZE, NULL);
	if (r)
		return r;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.aux = FE_INLINE;
	it.v[1] = len;
	bt_key k = bt_mkkey(inode->ino, BTRFS_EXTENT_DATA_KEY, 0);
	r = bt_insert(&inode->root->tree, t, &k, SZ_FE_INLINE_BASE + (uint32_t)len, &it, NULL);
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	inode->nbytes += len;
	return 0;
}

int fs_file_extent_lookup(fs_info *fs, task *t, struct inode *inode, uint64_t off, fe_info *out)
{
	bt_item it;
	int ret = range_find(&inode->root->tree, t, inode->ino, BTRFS_EXTENT_DATA_KEY, off,
			     UINT64_MAX, &it);
	(void)fs;
	if (ret)
		return ret;
	fe_fill(&it, out);
	return 0;
}

int fe_iter_first(fs_info *fs, task *t, struct inode *inode, uint64_t off, fe_iter *it,
		  fe_info *out)
{
	(void)fs;
	memset(it, 0, sizeof(*it));
	it->inode = inode;
	bt_path_init(&it->path, &inode->root->tree, t);
	int ret = range_position(&inode->root->tree, &it->path, inode->ino, BTRFS_EXTENT_DATA_KEY, off);
	if (ret)
		return ret;
	it->started = 1;
	fe_fill(bt_path_item(&it->path), out);
	return 0;
}

int fe_iter_next(fs_info *fs, fe_iter *it, fe_info *out)
{
	(void)fs;
	if (!it->started)
		return 1;
	bt_tree *tr = &it->inode->root->tree;
	int ret = bt_next_item(tr, &it->path);
	if (ret)
		return ret;
	bt_item *x = bt_path_item(&it->path);
	if (!x || !same_kind(x, it->inode->ino, BTRFS_EXTENT_DATA_KEY))
		return 1;
	fe_fill(x, out);
	return 0;
}

void fe_iter_end(fe_iter *it)
{
	bt_path_release(&it->path);
	it->started = 0;
}
