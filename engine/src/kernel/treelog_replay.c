/*
 * treelog_replay.c - what a mount finds after a power cut: the committed
 * subvolume tree with the last synced log tree replayed over it (models
 * btrfs_recover_log_trees and its walk stages: inode items and refs,
 * file extents, dir index items, then replay_dir_deletes and the link
 * count fixups). It reads the structures and changes nothing. See
 * treelog.h.
 */
#include <stdlib.h>
#include <string.h>

#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "treelog.h"

/* ------------------------------------------------------------ the image */

void tl_image_free(tl_image *im)
{
	if (!im)
		return;
	for (int i = 0; i < im->ninodes; i++)
		free(im->inodes[i].ext);
	free(im->inodes);
	free(im->dents);
	memset(im, 0, sizeof(*im));
}

/* The slot of ino in the sorted inode array (or where it would go). */
static int img_inode_slot(const tl_image *im, uint64_t ino)
{
	int lo = 0, hi = im->ninodes;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (im->inodes[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

tl_img_inode *tl_image_inode(const tl_image *im, uint64_t ino)
{
	int i = img_inode_slot(im, ino);
	return i < im->ninodes && im->inodes[i].ino == ino ? &im->inodes[i] : NULL;
}

/* ino's inode, made empty if it is not there. NULL: out of memory. */
static tl_img_inode *img_inode_get(tl_image *im, uint64_t ino)
{
	int i = img_inode_slot(im, ino);
	if (i < im->ninodes && im->inodes[i].ino == ino)
		return &im->inodes[i];
	if (im->ninodes == im->icap) {
		int cap = im->icap ? im->icap * 2 : 64;
		tl_img_inode *n = lab_realloc(im->inodes, (size_t)cap * sizeof(*n));
		if (!n)
			return NULL;
		im->inodes = n;
		im->icap = cap;
	}
	memmove(&im->inodes[i + 1], &im->inodes[i], (size_t)(im->ninodes - i) * sizeof(*im->inodes));
	im->ninodes++;
	memset(&im->inodes[i], 0, sizeof(im->inodes[i]));
	im->inodes[i].ino = ino;
	return &im->inodes[i];
}

static void img_inode_del(tl_image *im, int i)
{
	free(im->inodes[i].ext);
	memmove(&im->inodes[i], &im->inodes[i + 1], (size_t)(im->ninodes - i - 1) * sizeof(*im->inodes));
	im->ninodes--;
}

static int dent_cmp(uint64_t d1, uint64_t i1, uint64_t d2, uint64_t i2)
{
	if (d1 != d2)
		return d1 < d2 ? -1 : 1;
	return i1 < i2 ? -1 : i1 > i2;
}

static int img_dent_slot(const tl_image *im, uint64_t dir, uint64_t index)
{
	int lo = 0, hi = im->ndents;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (dent_cmp(im->dents[mid].dir, im->dents[mid].index, dir, index) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const tl_img_dent *tl_image_dent(const tl_image *im, uint64_t dir, uint64_t index)
{
	int i = img_dent_slot(im, dir, index);
	return i < im->ndents && im->dents[i].dir == dir && im->dents[i].index == index
		? &im->dents[i] : NULL;
}

/* Add (or overwrite) an entry. 0 or LAB_ENOMEM. */
static int img_dent_put(tl_image *im, const tl_img_dent *d)
{
	int i = img_dent_slot(im, d->dir, d->index);
	if (i < im->ndents && im->dents[i].dir == d->dir && im->dents[i].index == d->index) {
		im->dents[i] = *d;
		return 0;
	}
	if (im->ndents == im->dcap) {
		int cap = im->dcap ? im->dcap * 2 : 64;
		tl_img_dent *n = lab_realloc(im->dents, (size_t)cap * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		im->dents = n;
		im->dcap = cap;
	}
	memmove(&im->dents[i + 1], &im->dents[i], (size_t)(im->ndents - i) * sizeof(*im->dents));
	im->ndents++;
	im->dents[i] = *d;
	return 0;
}

/* Put extent x into the inode's extents, replacing what it overlaps
 * (replay_one_extent: btrfs_drop_extents on the range, then insert). */
static int img_ext_put(tl_img_inode *in, const tl_img_ext *x)
{
	uint64_t s = x->off, e = x->off + x->len;
	/* at most one more piece (an extent split around x) plus x */
	if (in->next + 2 > in->extcap) {
		int cap = in->extcap ? in->extcap * 2 : 8;
		while (cap < in->next + 2)
			cap *= 2;
		tl_img_ext *n = lab_realloc(in->ext, (size_t)cap * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		in->ext = n;
		in->extcap = cap;
	}
	int w = 0;
	tl_img_ext tail;
	int has_tail = 0;
	for (int i = 0; i < in->next; i++) {
		tl_img_ext a = in->ext[i];
		uint64_t as = a.off, ae = a.off + a.len;
		if (ae <= s || as >= e) {
			in->ext[w++] = a;
			continue;
		}
		if (a.type == FE_INLINE)
			continue; /* an inline extent goes whole */
		if (as < s) { /* its head stays */
			tl_img_ext h = a;
			h.len = s - as;
			in->ext[w++] = h;
		}
		if (ae > e) { /* its tail stays */
			tail = a;
			tail.off = e;
			tail.len = ae - e;
			if (a.type != FE_INLINE)
				tail.ext_off = a.ext_off + (e - as);
			has_tail = 1;
		}
	}
	in->next = w;
	/* insert x, then the tail, keeping the order */
	int pos = 0;
	while (pos < in->next && in->ext[pos].off < s)
		pos++;
	int add = 1 + has_tail;
	memmove(&in->ext[pos + add], &in->ext[pos], (size_t)(in->next - pos) * sizeof(*in->ext));
	in->ext[pos] = *x;
	if (has_tail)
		in->ext[pos + 1] = tail;
	in->next += add;
	return 0;
}

/* Drop what lies past size (the truncation of a replayed regular file). */
static void img_ext_truncate(tl_img_inode *in, uint64_t size)
{
	int w = 0;
	for (int i = 0; i < in->next; i++) {
		tl_img_ext a = in->ext[i];
		if (a.off >= size)
			continue;
		if (a.off + a.len > size)
			a.len = a.type == FE_INLINE ? size - a.off
				: ((size - a.off) + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE;
		in->ext[w++] = a;
	}
	in->next = w;
}

static tl_img_ext ext_of(const bt_item *it)
{
	tl_img_ext x;
	memset(&x, 0, sizeof(x));
	x.off = it->key.offset;
	x.type = it->aux;
	x.disk = it->v[0];
	x.len = it->v[1];
	if (it->aux != FE_INLINE) {
		x.disk_len = fe_disk_len(it);
		x.ext_off = fe_ext_off(it);
	}
	return x;
}

/* ---------------------------------------------------- the committed tree */

static int img_load_leaf(tl_image *im, const bt_node *n)
{
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		tl_img_inode *in;
		switch (it->key.type) {
		case BTRFS_INODE_ITEM_KEY:
			if (!(in = img_inode_get(im, it->key.objectid)))
				return LAB_ENOMEM;
			in->size = it->v[0];
			in->nbytes = it->v[1];
			in->generation = it->v[2];
			in->mode = it->aux;
			break;
		case BTRFS_EXTENT_DATA_KEY: {
			if (!(in = img_inode_get(im, it->key.objectid)))
				return LAB_ENOMEM;
			tl_img_ext x = ext_of(it);
			if (img_ext_put(in, &x))
				return LAB_ENOMEM;
			break;
		}
		case BTRFS_DIR_INDEX_KEY: {
			tl_img_dent d = { it->key.objectid, it->key.offset, it->v[0], it->v[1], it->aux };
			if (img_dent_put(im, &d))
				return LAB_ENOMEM;
			break;
		}
		default:
			break;
		}
	}
	return 0;
}

static int img_load(tl_image *im, const bt_node *n)
{
	if (!n)
		return 0;
	if (n->level == 0)
		return img_load_leaf(im, n);
	for (int i = 0; i < n->nritems; i++) {
		int r = img_load(im, n->ptrs[i].child);
		if (r)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------ the replay */

typedef struct replay_ctx {
	tl_image *im;
	/* the log's dir index items and ranges, and its inode refs, for the
	 * later stages */
	bt_item *dix;
	int ndix, cdix;
	bt_item *ranges;
	int nranges, cranges;
	bt_item *refs;
	int nrefs, crefs;
} replay_ctx;

static int push_item(bt_item **a, int *n, int *cap, const bt_item *it)
{
	if (*n == *cap) {
		int c = *cap ? *cap * 2 : 32;
		bt_item *x = lab_realloc(*a, (size_t)c * sizeof(*x));
		if (!x)
			return LAB_ENOMEM;
		*a = x;
		*cap = c;
	}
	(*a)[(*n)++] = *it;
	return 0;
}

/* The first pass over a log leaf: inode items and extents; dir index
 * items, logged ranges and inode refs are kept for the later stages. */
static int replay_leaf(replay_ctx *rc, const bt_node *n)
{
	tl_image *im = rc->im;
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		tl_img_inode *in;
		im->log_items++;
		switch (it->key.type) {
		case BTRFS_INODE_ITEM_KEY:
			if (!(in = img_inode_get(im, it->key.objectid)))
				return LAB_ENOMEM;
			in->size = it->v[0];
			in->nbytes = it->v[1];
			in->generation = it->v[2];
			in->mode = it->aux;
			in->logged = 1;
			if ((in->mode & S_IFMT_) == S_IFREG_)
				img_ext_truncate(in, in->size);
			break;
		case BTRFS_INODE_REF_KEY:
			if (push_item(&rc->refs, &rc->nrefs, &rc->crefs, it))
				return LAB_ENOMEM;
			break;
		case BTRFS_EXTENT_DATA_KEY: {
			if (!(in = img_inode_get(im, it->key.objectid)))
				return LAB_ENOMEM;
			tl_img_ext x = ext_of(it);
			if (img_ext_put(in, &x))
				return LAB_ENOMEM;
			if (x.type != FE_INLINE && x.disk == 0) {
				/* a logged hole: it punched the range, and with
				 * NO_HOLES nothing stays there */
				for (int k = 0; k < in->next; k++)
					if (in->ext[k].off == x.off && in->ext[k].disk == 0 &&
					    in->ext[k].type != FE_INLINE) {
						memmove(&in->ext[k], &in->ext[k + 1],
							(size_t)(in->next - k - 1) * sizeof(*in->ext));
						in->next--;
						break;
					}
			}
			break;
		}
		case BTRFS_DIR_INDEX_KEY:
			if (push_item(&rc->dix, &rc->ndix, &rc->cdix, it))
				return LAB_ENOMEM;
			break;
		case BTRFS_DIR_LOG_INDEX_KEY:
			if (push_item(&rc->ranges, &rc->nranges, &rc->cranges, it))
				return LAB_ENOMEM;
			break;
		default:
			break;
		}
	}
	return 0;
}

static int replay_walk(replay_ctx *rc, const bt_node *n)
{
	if (n->level == 0)
		return replay_leaf(rc, n);
	for (int i = 0; i < n->nritems; i++) {
		int r = replay_walk(rc, n->ptrs[i].child);
		if (r)
			return r;
	}
	return 0;
}

/* Is (dir, index) among the log's dir index items (sorted by key)? */
static int log_has_dent(const replay_ctx *rc, uint64_t dir, uint64_t index)
{
	int lo = 0, hi = rc->ndix;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const bt_key *k = &rc->dix[mid].key;
		if (dent_cmp(k->objectid, k->offset, dir, index) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rc->ndix && rc->dix[lo].key.objectid == dir && rc->dix[lo].key.offset == index;
}

/*
 * The later stages, in btrfs_recover_log_trees' order: replay_dir_deletes
 * over each logged range (LOG_WALK_REPLAY_INODES, when the directory's
 * inode item is replayed: only committed entries are there to drop), then
 * the log's entries whose inode exists (LOG_WALK_REPLAY_DIR_INDEX: a name
 * for an inode nobody logged or committed is skipped, as replay_one_name
 * does), then the inode refs (LOG_WALK_REPLAY_ALL, add_inode_ref): a name
 * a ref brings back stays even inside a range its directory logged
 * earlier in the transaction without it (a directory made after that
 * fsync and logged as a new ancestor of a later one).
 */
static int replay_dirs(replay_ctx *rc)
{
	tl_image *im = rc->im;
	for (int r = 0; r < rc->nranges; r++) {
		uint64_t dir = rc->ranges[r].key.objectid;
		uint64_t start = rc->ranges[r].key.offset, end = rc->ranges[r].v[0];
		int i = img_dent_slot(im, dir, start);
		while (i < im->ndents && im->dents[i].dir == dir && im->dents[i].index <= end) {
			if (log_has_dent(rc, dir, im->dents[i].index)) {
				i++;
				continue;
			}
			memmove(&im->dents[i], &im->dents[i + 1],
				(size_t)(im->ndents - i - 1) * sizeof(*im->dents));
			im->ndents--;
		}
	}
	for (int k = 0; k < rc->ndix; k++) {
		const bt_item *it = &rc->dix[k];
		if (it->aux & FS_DIRENT_SUBVOL)
			continue;
		if (!tl_image_inode(im, it->v[0]))
			continue;
		tl_img_dent d = { it->key.objectid, it->key.offset, it->v[0], it->v[1], it->aux };
		if (img_dent_put(im, &d))
			return LAB_ENOMEM;
	}
	for (int k = 0; k < rc->nrefs; k++) {
		/* add_inode_ref: the name comes back in its directory */
		const bt_item *it = &rc->refs[k];
		tl_img_dent d = { it->key.offset, it->v[0], it->key.objectid, it->v[1], FT_REG };
		const tl_img_inode *in = tl_image_inode(im, it->key.objectid);
		if (in && (in->mode & S_IFMT_) == S_IFDIR_)
			d.type = FT_DIR;
		if (img_dent_put(im, &d))
			return LAB_ENOMEM;
	}
	return 0;
}

/* The link counts (fixup_inode_link_counts): an inode left without a name
 * is gone, and so are the names pointing at an inode that is not there;
 * the subvolume's top directory has no name in its own tree. */
static void replay_links(tl_image *im)
{
	for (int i = 0; i < im->ninodes; i++)
		im->inodes[i].nlink = 0;
	int w = 0;
	for (int i = 0; i < im->ndents; i++) {
		tl_img_dent d = im->dents[i];
		tl_img_inode *in = (d.type & FS_DIRENT_SUBVOL) ? NULL : tl_image_inode(im, d.child);
		if (in)
			in->nlink++;
		if (in || (d.type & FS_DIRENT_SUBVOL))
			im->dents[w++] = d;
	}
	im->ndents = w;
	for (int i = 0; i < im->ninodes;) {
		if (im->inodes[i].nlink == 0 && im->inodes[i].ino != BTRFS_FIRST_FREE_OBJECTID) {
			uint64_t gone = im->inodes[i].ino;
			img_inode_del(im, i);
			/* its own entries (a directory's) go with it */
			int k = img_dent_slot(im, gone, 0), e = k;
			while (e < im->ndents && im->dents[e].dir == gone)
				e++;
			if (e > k) {
				memmove(&im->dents[k], &im->dents[e],
					(size_t)(im->ndents - e) * sizeof(*im->dents));
				im->ndents -= e - k;
				i = 0; /* counts changed: look again from the start */
				for (int j = 0; j < im->ninodes; j++)
					im->inodes[j].nlink = 0;
				for (int j = 0; j < im->ndents; j++) {
					tl_img_inode *c = tl_image_inode(im, im->dents[j].child);
					if (c && !(im->dents[j].type & FS_DIRENT_SUBVOL))
						c->nlink++;
				}
			}
			continue;
		}
		i++;
	}
}

int treelog_replay(treelog *tl, struct btrfs_root *root, tl_image *out)
{
	if (!tl || !root || !out || !root->fs)
		return LAB_EINVAL;
	memset(out, 0, sizeof(*out));
	fs_info *fs = root->fs;
	if (!fs->opts.keep_commit_roots)
		return LAB_ESTATE;
	out->root_id = root->id;
	/* a subvolume no commit has written yet is not on disk at all */
	int r = img_load(out, root->tree.commit_root);
	const tl_root *lr = NULL;
	for (int i = 0; i < tl->nroots; i++)
		if (tl->roots[i].root_id == root->id)
			lr = &tl->roots[i];
	if (!r && lr && lr->synced_root && lr->synced_transid == fs->transid) {
		if (!tl->cfg.keep_synced) {
			tl_image_free(out);
			return LAB_ESTATE;
		}
		replay_ctx rc;
		memset(&rc, 0, sizeof(rc));
		rc.im = out;
		r = replay_walk(&rc, lr->synced_root);
		if (!r)
			r = replay_dirs(&rc);
		free(rc.dix);
		free(rc.ranges);
		free(rc.refs);
		out->replayed = 1;
	}
	if (r) {
		tl_image_free(out);
		return r;
	}
	replay_links(out);
	return 0;
}

static uint64_t tl_fnv4(uint64_t h, const uint64_t v[4])
{
	for (int i = 0; i < 4; i++)
		h = (h ^ v[i]) * 1099511628211ull;
	return h;
}

uint64_t tl_tree_extents_hash(fs_info *fs, struct inode *in)
{
	uint64_t h = 1469598103934665603ull;
	fe_iter it;
	fe_info fe;
	fs->accounting_off++;
	int k = fe_iter_first(fs, NULL, in, 0, &it, &fe);
	while (k == 0) {
		h = tl_fnv4(h, (const uint64_t[4]){ fe.file_off, fe.num_bytes, fe.disk_bytenr, fe.extent_offset });
		k = fe_iter_next(fs, &it, &fe);
	}
	fe_iter_end(&it);
	fs->accounting_off--;
	return h;
}

uint64_t tl_image_extents_hash(const tl_img_inode *in)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < in->next; i++)
		h = tl_fnv4(h, (const uint64_t[4]){ in->ext[i].off, in->ext[i].len, in->ext[i].disk, in->ext[i].ext_off });
	return h;
}
