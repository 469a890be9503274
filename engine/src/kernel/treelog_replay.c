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

#include "backref.h"
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
	free(im->scope);
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

/* The synced log a power cut now would find for root (NULL: none of the
 * running transaction); LAB_ESTATE in *rc when it was not kept. */
static const bt_node *synced_log(const treelog *tl, const struct btrfs_root *root, int *rc)
{
	*rc = 0;
	for (int i = 0; i < tl->nroots; i++) {
		const tl_root *lr = &tl->roots[i];
		if (lr->root_id != root->id || !lr->synced_root ||
		    lr->synced_transid != root->fs->transid)
			continue;
		if (!tl->cfg.keep_synced)
			*rc = LAB_ESTATE;
		return lr->synced_root;
	}
	return NULL;
}

/* The log replayed over the image loaded so far, then the link counts. */
static int replay_log(tl_image *out, const bt_node *log)
{
	int r = 0;
	if (log) {
		replay_ctx rc;
		memset(&rc, 0, sizeof(rc));
		rc.im = out;
		r = replay_walk(&rc, log);
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

int treelog_replay(treelog *tl, struct btrfs_root *root, tl_image *out)
{
	if (!tl || !root || !out || !root->fs)
		return LAB_EINVAL;
	memset(out, 0, sizeof(*out));
	fs_info *fs = root->fs;
	if (!fs->opts.keep_commit_roots)
		return LAB_ESTATE;
	out->root_id = root->id;
	int r;
	const bt_node *log = synced_log(tl, root, &r);
	/* a subvolume no commit has written yet is not on disk at all */
	if (!r)
		r = img_load(out, root->tree.commit_root);
	if (r) {
		tl_image_free(out);
		return r;
	}
	return replay_log(out, log);
}

/* ------------------------------------------- the replay of a few inodes */

/* The scope of a partial image: inode numbers, in the order found, with
 * a map for membership. */
typedef struct scope {
	uint64_t *v;
	int n, cap;
	u64map in;
} scope;

static int scope_add(scope *sc, uint64_t ino)
{
	if (!ino || u64map_get(&sc->in, ino, NULL))
		return 0;
	if (sc->n == sc->cap) {
		int cap = sc->cap ? sc->cap * 2 : 32;
		uint64_t *v = lab_realloc(sc->v, (size_t)cap * sizeof(*v));
		if (!v)
			return LAB_ENOMEM;
		sc->v = v;
		sc->cap = cap;
	}
	if (u64map_put(&sc->in, ino, 1))
		return LAB_ENOMEM;
	sc->v[sc->n++] = ino;
	return 0;
}

/* Call fn on each item under n whose key lies in [lo, hi], in key order
 * (a read of the committed blocks as they are: only the children whose
 * key range meets [lo, hi] are entered). Stops at fn's first non-zero. */
static int tree_range(const bt_node *n, const bt_key *lo, const bt_key *hi,
		      int (*fn)(void *ctx, const bt_item *it), void *ctx)
{
	if (!n)
		return 0;
	if (n->level == 0) {
		int a = 0, b = n->nritems;
		while (a < b) { /* the first item >= lo */
			int mid = a + (b - a) / 2;
			if (bt_key_cmp(&n->items[mid].key, lo) < 0)
				a = mid + 1;
			else
				b = mid;
		}
		for (; a < n->nritems && bt_key_cmp(&n->items[a].key, hi) <= 0; a++) {
			int r = fn(ctx, &n->items[a]);
			if (r)
				return r;
		}
		return 0;
	}
	int a = 1, b = n->nritems;
	while (a < b) { /* one past the last pointer whose key is <= lo */
		int mid = a + (b - a) / 2;
		if (bt_key_cmp(&n->ptrs[mid].key, lo) <= 0)
			a = mid + 1;
		else
			b = mid;
	}
	for (int i = a - 1; i < n->nritems && (i == a - 1 || bt_key_cmp(&n->ptrs[i].key, hi) <= 0);
	     i++) {
		int r = tree_range(n->ptrs[i].child, lo, hi, fn, ctx);
		if (r)
			return r;
	}
	return 0;
}

static int take_item(void *ctx, const bt_item *it)
{
	*(const bt_item **)ctx = it;
	return 1;
}

typedef struct load_ctx {
	tl_image *im;
	scope *sc;
	const bt_node *root;
	uint64_t ino;
} load_ctx;

/* One committed item of the inode being loaded (img_load_inode). */
static int load_item(void *ctx, const bt_item *it)
{
	load_ctx *lc = ctx;
	tl_img_inode *in;
	switch (it->key.type) {
	case BTRFS_INODE_ITEM_KEY:
		if (!(in = img_inode_get(lc->im, lc->ino)))
			return LAB_ENOMEM;
		in->size = it->v[0];
		in->nbytes = it->v[1];
		in->generation = it->v[2];
		in->mode = it->aux;
		return 0;
	case BTRFS_EXTENT_DATA_KEY: {
		if (!(in = img_inode_get(lc->im, lc->ino)))
			return LAB_ENOMEM;
		tl_img_ext x = ext_of(it);
		return img_ext_put(in, &x) ? LAB_ENOMEM : 0;
	}
	case BTRFS_INODE_REF_KEY: {
		/* the directory's entry of this name, as img_load_leaf would
		 * take it from the directory's items */
		uint64_t dir = it->key.offset;
		bt_key dk = bt_mkkey(dir, BTRFS_DIR_INDEX_KEY, it->v[0]);
		const bt_item *de = NULL;
		tree_range(lc->root, &dk, &dk, take_item, &de);
		if (de) {
			tl_img_dent d = { dir, de->key.offset, de->v[0], de->v[1], de->aux };
			if (img_dent_put(lc->im, &d))
				return LAB_ENOMEM;
		}
		return scope_add(lc->sc, dir);
	}
	default:
		return 0;
	}
}

/* The committed items of inode ino: its inode item and file extents,
 * and for each of its names the directory's DIR_INDEX item (the entry
 * the whole load would have from the directory's items); the directory
 * joins the scope. Its own entries (a directory's) are not loaded. */
static int img_load_inode(tl_image *im, scope *sc, const bt_node *root, uint64_t ino)
{
	load_ctx lc = { im, sc, root, ino };
	bt_key lo = bt_mkkey(ino, 0, 0), hi = bt_mkkey(ino, BTRFS_XATTR_ITEM_KEY, 0);
	int r = tree_range(root, &lo, &hi, load_item, &lc);
	if (r)
		return r;
	lo = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, 0);
	hi = bt_mkkey(ino, BTRFS_EXTENT_DATA_KEY, UINT64_MAX);
	return tree_range(root, &lo, &hi, load_item, &lc);
}

/* A (directory, child) pair the log names: its inode refs and dir index
 * items. */
typedef struct lpair {
	uint64_t dir, child;
} lpair;

typedef struct log_scope_ctx {
	scope *sc;
	lpair *p;
	int np, cap;
} log_scope_ctx;

static int log_scope_walk(log_scope_ctx *ls, const bt_node *n)
{
	if (n->level) {
		for (int i = 0; i < n->nritems; i++) {
			int r = log_scope_walk(ls, n->ptrs[i].child);
			if (r)
				return r;
		}
		return 0;
	}
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		lpair pr = { 0, 0 };
		switch (it->key.type) {
		case BTRFS_INODE_REF_KEY:
			pr = (lpair){ it->key.offset, it->key.objectid };
			/* fall through */
		case BTRFS_INODE_ITEM_KEY:
		case BTRFS_EXTENT_DATA_KEY:
			if (scope_add(ls->sc, it->key.objectid))
				return LAB_ENOMEM;
			break;
		case BTRFS_DIR_INDEX_KEY:
			if (!(it->aux & FS_DIRENT_SUBVOL))
				pr = (lpair){ it->key.objectid, it->v[0] };
			break;
		default:
			break;
		}
		if (!pr.dir)
			continue;
		if (ls->np == ls->cap) {
			int cap = ls->cap ? ls->cap * 2 : 32;
			lpair *v = lab_realloc(ls->p, (size_t)cap * sizeof(*v));
			if (!v)
				return LAB_ENOMEM;
			ls->p = v;
			ls->cap = cap;
		}
		ls->p[ls->np++] = pr;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int treelog_replay_some(treelog *tl, struct btrfs_root *root, const uint64_t *want, int nwant,
			tl_image *out)
{
	if (!tl || !root || !out || !root->fs || nwant < 0 || (nwant && !want))
		return LAB_EINVAL;
	memset(out, 0, sizeof(*out));
	fs_info *fs = root->fs;
	if (!fs->opts.keep_commit_roots)
		return LAB_ESTATE;
	out->root_id = root->id;
	int r;
	const bt_node *log = synced_log(tl, root, &r);
	scope sc;
	memset(&sc, 0, sizeof(sc));
	log_scope_ctx ls = { &sc, NULL, 0, 0 };
	if (!r && log)
		r = log_scope_walk(&ls, log);
	for (int i = 0; i < nwant && !r; i++)
		r = scope_add(&sc, want[i]);
	/* each inode of the scope, and the directories naming it (in the
	 * committed tree or in the log) until the top: the closure a link
	 * count depends on */
	for (int i = 0; i < sc.n && !r; i++) {
		uint64_t x = sc.v[i];
		r = img_load_inode(out, &sc, root->tree.commit_root, x);
		for (int k = 0; k < ls.np && !r; k++)
			if (ls.p[k].child == x)
				r = scope_add(&sc, ls.p[k].dir);
	}
	free(ls.p);
	u64map_free(&sc.in);
	if (!r && sc.n)
		qsort(sc.v, (size_t)sc.n, sizeof(*sc.v), cmp_u64);
	out->partial = 1;
	out->scope = sc.v;
	out->nscope = sc.n;
	if (r) {
		tl_image_free(out);
		return r;
	}
	return replay_log(out, log);
}

/* Whether ino is in the image's scope (a whole image's scope is all). */
static int in_scope(const tl_image *im, uint64_t ino)
{
	if (!im->partial)
		return 1;
	int lo = 0, hi = im->nscope;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		if (im->scope[mid] < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < im->nscope && im->scope[lo] == ino;
}

static int same_inode(const tl_img_inode *a, const tl_img_inode *b)
{
	if (a->size != b->size || a->nbytes != b->nbytes || a->generation != b->generation ||
	    a->mode != b->mode || a->nlink != b->nlink || a->logged != b->logged || a->next != b->next)
		return 0;
	for (int i = 0; i < a->next; i++) {
		const tl_img_ext *x = &a->ext[i], *y = &b->ext[i];
		if (x->off != y->off || x->len != y->len || x->disk != y->disk ||
		    x->disk_len != y->disk_len || x->ext_off != y->ext_off || x->type != y->type)
			return 0;
	}
	return 1;
}

static int same_dent(const tl_img_dent *a, const tl_img_dent *b)
{
	return a->dir == b->dir && a->index == b->index && a->child == b->child &&
	       a->namehash == b->namehash && a->type == b->type;
}

int tl_image_agree(const tl_image *whole, const tl_image *part, uint64_t *where)
{
	*where = 0;
	/* the inodes of the scope: in both or in neither, alike */
	for (int i = 0; i < part->nscope; i++) {
		uint64_t ino = part->scope[i];
		const tl_img_inode *a = tl_image_inode(whole, ino), *b = tl_image_inode(part, ino);
		if (!a != !b || (a && !same_inode(a, b))) {
			*where = ino;
			return 0;
		}
	}
	/* the entries naming them, in order */
	int j = 0;
	for (int i = 0; i < whole->ndents; i++) {
		const tl_img_dent *d = &whole->dents[i];
		if ((d->type & FS_DIRENT_SUBVOL) || !in_scope(part, d->child))
			continue;
		while (j < part->ndents && !in_scope(part, part->dents[j].child))
			j++;
		if (j >= part->ndents || !same_dent(d, &part->dents[j])) {
			*where = d->child;
			return 0;
		}
		j++;
	}
	for (; j < part->ndents; j++)
		if (in_scope(part, part->dents[j].child)) {
			*where = part->dents[j].child;
			return 0;
		}
	return 1;
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
