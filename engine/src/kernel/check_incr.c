/*
 * check_incr.c - the incremental check (check.h): after a commit, what
 * the transaction changed, against a record the checker keeps of the
 * trees as the last check left them.
 *
 * The record. For every live tree block (reachable from a root check_fs
 * walks): its generation and the references it makes (a node: its
 * children; a leaf: the data extents of its file extent items, its inode
 * items, in the extent tree its extent items with their lengths, in the
 * csum tree its checksum ranges); for every extent, how many references
 * the live blocks and the roots make to it; per block group, the bytes
 * its extent items cover. check_fs builds it from scratch at a commit
 * (check_incr_rebuild).
 *
 * The change. Copy-on-write gives a block changed since the last check a
 * newer generation, and every block on its path to the root too (the
 * pointer to it changed), so a walk from the roots that stops at every
 * block the record holds at its generation finds exactly the changed
 * blocks (btrfs_search_forward with min_trans does the same). Each is
 * checked whole, as check_fs checks a block (keys in order and within
 * the parent's range, fill, level, generations, file extents not
 * overlapping, also with their neighbours across the leaf's edges); an
 * unchanged child a changed node points at is checked where the pointer
 * meets it (level, generation, first key, last key below the next
 * pointer's). The changed blocks' references are counted in; then the
 * references of blocks the roots no longer reach go out, a cascade (the
 * old copies of a COWed path, a dropped tree). Every extent whose count
 * moved, every extent item of a changed extent-tree leaf and every item
 * of a dead one is then compared with the extent tree: an item exists
 * exactly while something references the extent, with that many
 * references, in an allocated range of a block group of its kind, not
 * overlapping its neighbours; each block group's used bytes equal its
 * items' sum; checksum items of changed leaves lie on data extents and
 * none is left on a freed one; an in-memory inode whose inode item left
 * a leaf still has one. Registered checks then run with fs->check_incr
 * set (vfs_io.c: the inodes whose data state changed; check_more.c: the
 * space counters).
 *
 * Not seen until the next full check: damage to a block the transaction
 * did not COW, to an inode it did not touch, and the qgroups' recount
 * (which needs every tree). The caller runs check_fs every so often.
 */
#include <stdlib.h>
#include <string.h>

#include "backref.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

/* What a recorded reference is (the top bits of ref_out.b). */
enum { R_CHILD = 0, R_DATA = 1, R_EXT_DATA = 2, R_EXT_TREE = 3, R_INODE = 4, R_CSUM = 5 };
#define R_SHIFT 60
#define R_KIND(b) ((int)((b) >> R_SHIFT))
#define R_VAL(b) ((b) & ((1ull << R_SHIFT) - 1))
#define R_MK(kind, v) (((uint64_t)(kind) << R_SHIFT) | (v))

typedef struct ref_out {
	uint64_t a; /* child or extent bytenr, inode number, csum start */
	uint64_t b; /* kind and a length */
} ref_out;

/* A live tree block as the last check saw it. */
typedef struct sblk {
	uint64_t bytenr, gen, tree;
	ref_out *out;
	uint32_t nout;
	int level;
} sblk;

typedef struct tree_root {
	uint64_t id, root;
} tree_root;

typedef struct shadow {
	int valid;           /* built at a commit and kept up to date since */
	uint64_t gen;        /* the generation it describes */
	sblk *blk;           /* slots; bytenr 0: free */
	size_t nblk, cap;
	uint32_t *freel;
	size_t nfree, fcap;
	u64map bmap;         /* bytenr -> slot + 1 */
	u64map refs;         /* extent bytenr -> references to it */
	tree_root *trees;
	size_t ntrees, tcap;
	uint64_t *bg_sum;    /* per block group (alloc order): extent item bytes */
	int nbg;
	/* one pass's scratch, kept between passes */
	u64map seen;         /* changed blocks visited */
	u64map delta;        /* bytenr -> 2^31 + net change of its count */
	u64map extseen;      /* extents whose item a changed leaf holds */
	u64map inoseen;      /* inode items changed leaves hold: ino_key() */
	uint64_t incr_checks, full_builds;
	uint64_t incr_blocks;   /* changed blocks the incremental checks checked */
	uint64_t full_blocks;   /* blocks the last full build recorded */
} shadow;

typedef struct pass {
	fs_info *fs;
	shadow *sh;
	int fails, oom, track;   /* track: note count changes in sh->delta */
	uint64_t *decs;          /* references to drop once every new one is in */
	size_t ndecs, dcap;
	ref_out *gone;           /* extent, inode and csum records of dead blocks */
	size_t ngone, gcap;
	const bt_node **leaves;  /* changed extent-tree and csum-tree leaves */
	uint64_t *leaf_tree;
	size_t nleaves, lcap, ltcap;
} pass;

#define ULL(x) ((unsigned long long)(x))
#define MAX_TREES 1024

/* A failure: counted in the pass, its message kept (check_report). */
#define fail(p, ...) ((p)->fails++, check_report((p)->fs, __VA_ARGS__))

/* Make room for one more element of v (n used of *cap); 0 or -1. */
static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *nv = lab_realloc(*v, c * elem);
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

/* ---- the record ------------------------------------------------------ */

static uint32_t refs_of(const shadow *sh, uint64_t x)
{
	uint32_t v = 0;
	return u64map_get(&sh->refs, x, &v) ? v : 0;
}

/* One reference to x more (d = 1) or less (d = -1). */
static void refs_add(pass *p, uint64_t x, int d)
{
	shadow *sh = p->sh;
	uint32_t v = refs_of(sh, x);
	if (d < 0 && v == 0) {
		fail(p, "checker record: extent %llu loses a reference it does not have", ULL(x));
		return;
	}
	v = d > 0 ? v + 1 : v - 1;
	if (v == 0)
		u64map_del(&sh->refs, x);
	else if (u64map_put(&sh->refs, x, v))
		p->oom = 1;
	if (p->track) {
		uint32_t dv = 1u << 31;
		u64map_get(&sh->delta, x, &dv);
		if (u64map_put(&sh->delta, x, d > 0 ? dv + 1 : dv - 1))
			p->oom = 1;
	}
}

static sblk *blk_get(const shadow *sh, uint64_t bytenr)
{
	uint32_t v;
	return u64map_get(&sh->bmap, bytenr, &v) ? &sh->blk[v - 1] : NULL;
}

static sblk *blk_new(shadow *sh, uint64_t bytenr)
{
	uint32_t slot;
	if (sh->nfree) {
		slot = sh->freel[--sh->nfree];
	} else {
		if (grow((void **)&sh->blk, &sh->cap, sh->nblk, sizeof *sh->blk))
			return NULL;
		slot = (uint32_t)sh->nblk++;
	}
	memset(&sh->blk[slot], 0, sizeof sh->blk[slot]);
	if (u64map_put(&sh->bmap, bytenr, slot + 1)) {
		if (!grow((void **)&sh->freel, &sh->fcap, sh->nfree, sizeof *sh->freel))
			sh->freel[sh->nfree++] = slot;
		return NULL;
	}
	sh->blk[slot].bytenr = bytenr;
	return &sh->blk[slot];
}

static void blk_del(shadow *sh, sblk *b)
{
	uint32_t slot = (uint32_t)(b - sh->blk);
	u64map_del(&sh->bmap, b->bytenr);
	free(b->out);
	memset(b, 0, sizeof *b);
	if (!grow((void **)&sh->freel, &sh->fcap, sh->nfree, sizeof *sh->freel))
		sh->freel[sh->nfree++] = slot;
}

static void shadow_clear(shadow *sh)
{
	for (size_t i = 0; i < sh->nblk; i++)
		free(sh->blk[i].out);
	free(sh->blk);
	free(sh->freel);
	u64map_free(&sh->bmap);
	u64map_free(&sh->refs);
	u64map_free(&sh->seen);
	u64map_free(&sh->delta);
	u64map_free(&sh->extseen);
	u64map_free(&sh->inoseen);
	free(sh->trees);
	free(sh->bg_sum);
	uint64_t ic = sh->incr_checks, fb = sh->full_builds, ib = sh->incr_blocks;
	memset(sh, 0, sizeof *sh);
	sh->incr_checks = ic;
	sh->full_builds = fb;
	sh->incr_blocks = ib;
}

void check_incr_free(fs_info *fs)
{
	shadow *sh = fs->check_shadow;
	if (!sh)
		return;
	shadow_clear(sh);
	free(sh);
	fs->check_shadow = NULL;
}

int check_incr_enable(fs_info *fs)
{
	if (!fs)
		return LAB_EINVAL;
	if (!fs->check_shadow)
		fs->check_shadow = lab_calloc(1, sizeof(shadow));
	return fs->check_shadow ? 0 : LAB_ENOMEM;
}

/* The trees check_fs walks. */
static int live_trees(fs_info *fs, const bt_tree **out, int max)
{
	int n = 0;
	out[n++] = &fs->root_tree;
	out[n++] = &fs->extent_tree;
	out[n++] = &fs->csum_tree;
	for (int i = 0; i < fs->nroots && n < max; i++)
		if (!fs->roots[i]->deleted && fs->roots[i]->tree.root)
			out[n++] = &fs->roots[i]->tree;
	return n;
}

/* The index of bytenr's block group, or -1. */
static int bg_index(fs_info *fs, uint64_t bytenr)
{
	block_group *bg = alloc_find_bg(&fs->alloc, bytenr);
	return bg ? (int)(bg - fs->alloc.bgs) : -1;
}

/* The per-block-group sums follow the allocator's groups (appended only). */
static int bg_fit(shadow *sh, int nbgs)
{
	if (sh->nbg >= nbgs)
		return 0;
	uint64_t *n = lab_realloc(sh->bg_sum, (size_t)nbgs * sizeof *n);
	if (!n)
		return -1;
	memset(n + sh->nbg, 0, (size_t)(nbgs - sh->nbg) * sizeof *n);
	sh->bg_sum = n;
	sh->nbg = nbgs;
	return 0;
}

/* The references block n of tree tr makes, as the record keeps them. */
static int refs_made(const fs_info *fs, const bt_tree *tr, const bt_node *n, ref_out **out,
		     uint32_t *nout)
{
	size_t cap = 0, k = 0;
	ref_out *v = NULL;
	*out = NULL;
	*nout = 0;
	for (int i = 0; i < n->nritems; i++) {
		ref_out r;
		if (n->level) {
			if (!n->ptrs[i].child)
				continue;
			r = (ref_out){ n->ptrs[i].child->bytenr, R_MK(R_CHILD, 0) };
		} else {
			const bt_item *it = &n->items[i];
			if (it->key.type == BTRFS_EXTENT_DATA_KEY) {
				if (it->aux == FE_INLINE || !it->v[0])
					continue;
				r = (ref_out){ it->v[0], R_MK(R_DATA, fe_disk_len(it)) };
			} else if (tr == &fs->extent_tree && it->key.type == BTRFS_EXTENT_ITEM_KEY) {
				r = (ref_out){ it->key.objectid, R_MK(R_EXT_DATA, it->key.offset) };
			} else if (tr == &fs->extent_tree && it->key.type == BTRFS_METADATA_ITEM_KEY) {
				r = (ref_out){ it->key.objectid, R_MK(R_EXT_TREE, BT_NODESIZE) };
			} else if (tr == &fs->csum_tree && it->key.type == BTRFS_EXTENT_CSUM_KEY) {
				uint64_t len = (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE;
				r = (ref_out){ it->key.offset, R_MK(R_CSUM, len) };
			} else if (it->key.type == BTRFS_INODE_ITEM_KEY) {
				r = (ref_out){ it->key.objectid, R_MK(R_INODE, 0) };
			} else {
				continue;
			}
		}
		if (grow((void **)&v, &cap, k, sizeof *v)) {
			free(v);
			return -1;
		}
		v[k++] = r;
	}
	*out = v;
	*nout = (uint32_t)k;
	return 0;
}

/* An extent-tree leaf's items in (d > 0) or out of the block group sums. */
static void bg_count(fs_info *fs, shadow *sh, const sblk *b, int d)
{
	for (uint32_t i = 0; i < b->nout; i++) {
		int k = R_KIND(b->out[i].b);
		if (k != R_EXT_DATA && k != R_EXT_TREE)
			continue;
		int g = bg_index(fs, b->out[i].a);
		if (g >= 0 && g < sh->nbg)
			sh->bg_sum[g] = d > 0 ? sh->bg_sum[g] + R_VAL(b->out[i].b)
					     : sh->bg_sum[g] - R_VAL(b->out[i].b);
	}
}

/* Record block n of tree tr and count the references it makes. */
static sblk *record(pass *p, const bt_tree *tr, const bt_node *n)
{
	sblk *b = blk_new(p->sh, n->bytenr);
	if (!b)
		goto oom;
	if (refs_made(p->fs, tr, n, &b->out, &b->nout)) {
		blk_del(p->sh, b);
		goto oom;
	}
	b->gen = n->generation;
	b->tree = tr->id;
	b->level = n->level;
	for (uint32_t i = 0; i < b->nout; i++) {
		int k = R_KIND(b->out[i].b);
		if (k == R_CHILD || k == R_DATA)
			refs_add(p, b->out[i].a, 1);
	}
	if (n->level == 0 && tr == &p->fs->extent_tree)
		bg_count(p->fs, p->sh, b, +1);
	return b;
oom:
	p->oom = 1;
	return NULL;
}

static int set_root(shadow *sh, uint64_t id, uint64_t root)
{
	for (size_t i = 0; i < sh->ntrees; i++)
		if (sh->trees[i].id == id) {
			sh->trees[i].root = root;
			return 0;
		}
	if (grow((void **)&sh->trees, &sh->tcap, sh->ntrees, sizeof *sh->trees))
		return -1;
	sh->trees[sh->ntrees++] = (tree_root){ id, root };
	return 0;
}

/* ---- the full build (check_fs at a commit) --------------------------- */

static void build_walk(pass *p, const bt_tree *tr, const bt_node *n)
{
	if (p->oom || blk_get(p->sh, n->bytenr))
		return; /* shared: recorded once */
	if (!record(p, tr, n))
		return;
	for (int i = 0; n->level && i < n->nritems; i++)
		if (n->ptrs[i].child)
			build_walk(p, tr, n->ptrs[i].child);
}

void check_incr_rebuild(fs_info *fs)
{
	shadow *sh = fs->check_shadow;
	/* only at a commit: the running transaction changes its own blocks
	 * in place, with no new generation */
	if (!sh || fs->check_midrun)
		return;
	shadow_clear(sh);
	pass p;
	memset(&p, 0, sizeof p);
	p.fs = fs;
	p.sh = sh;
	if (bg_fit(sh, fs->alloc.nbgs))
		p.oom = 1;
	const bt_tree *trees[MAX_TREES];
	int nt = live_trees(fs, trees, MAX_TREES);
	for (int i = 0; i < nt && !p.oom; i++) {
		if (set_root(sh, trees[i]->id, trees[i]->root->bytenr))
			p.oom = 1;
		refs_add(&p, trees[i]->root->bytenr, 1);
		build_walk(&p, trees[i], trees[i]->root);
	}
	if (p.oom || p.fails) {
		shadow_clear(sh);
		return; /* the next check is a full one again */
	}
	sh->valid = 1;
	sh->gen = fs->generation;
	sh->full_builds++;
	sh->full_blocks = sh->nblk - sh->nfree;
}

/* ---- in-memory lookups (bt_search_read without a task: no cost, no
 * locks) -------------------------------------------------------------- */

/* The extent item of bytenr in the extent tree, or NULL. */
static const bt_item *ext_item(fs_info *fs, uint64_t bytenr)
{
	if (!fs->extent_tree.root)
		return NULL;
	bt_rpath p;
	bt_key k = bt_mkkey(bytenr, 0, 0);
	bt_search_read(NULL, fs->extent_tree.root, NULL, &k, NULL, &p);
	for (const bt_item *it = bt_rpath_item(&p); it && it->key.objectid == bytenr;
	     it = bt_rpath_item(&p)) {
		if (it->key.type == BTRFS_EXTENT_ITEM_KEY || it->key.type == BTRFS_METADATA_ITEM_KEY)
			return it;
		p.slots[0]++;
	}
	return NULL;
}

/* The end of the data extent item covering pos, or 0. */
static uint64_t data_extent_end(fs_info *fs, uint64_t pos)
{
	if (!fs->extent_tree.root)
		return 0;
	bt_rpath p;
	bt_key k = bt_mkkey(pos, 255, ~0ull);
	bt_search_read(NULL, fs->extent_tree.root, NULL, &k, NULL, &p);
	for (const bt_item *it = bt_rpath_prev(&p); it; it = bt_rpath_prev(&p)) {
		if (it->key.type == BTRFS_EXTENT_ITEM_KEY)
			return it->key.objectid + it->key.offset > pos ? it->key.objectid + it->key.offset
								       : 0;
		if (it->key.type == BTRFS_METADATA_ITEM_KEY)
			return 0;
	}
	return 0;
}

/* Whether a checksum item of the csum tree overlaps [a, b). */
static int csum_overlaps(fs_info *fs, uint64_t a, uint64_t b)
{
	if (!fs->csum_tree.root)
		return 0;
	bt_rpath p;
	bt_key k = bt_mkkey(BTRFS_EXTENT_CSUM_OBJECTID, BTRFS_EXTENT_CSUM_KEY, a);
	bt_search_read(NULL, fs->csum_tree.root, NULL, &k, NULL, &p);
	bt_rpath q = p;
	const bt_item *it = bt_rpath_prev(&q);
	if (it && it->key.type == BTRFS_EXTENT_CSUM_KEY &&
	    it->key.offset + (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE > a)
		return 1;
	it = bt_rpath_item(&p);
	return it && it->key.type == BTRFS_EXTENT_CSUM_KEY && it->key.offset < b;
}

/* The rightmost key under n. */
static const bt_key *last_key(const bt_node *n)
{
	while (n->level && n->nritems)
		n = n->ptrs[n->nritems - 1].child;
	return n->nritems ? &n->items[n->nritems - 1].key : NULL;
}

/* ---- the incremental pass --------------------------------------------- */

static void note_leaf(pass *p, const bt_tree *tr, const bt_node *n)
{
	if (grow((void **)&p->leaves, &p->lcap, p->nleaves, sizeof *p->leaves) ||
	    grow((void **)&p->leaf_tree, &p->ltcap, p->nleaves, sizeof *p->leaf_tree)) {
		p->oom = 1;
		return;
	}
	p->leaf_tree[p->nleaves] = tr->id;
	p->leaves[p->nleaves++] = n;
}

/* A block the record holds at another generation is gone (its bytenr was
 * freed and allocated again): its references go. */
static void drop_stale(pass *p, sblk *b)
{
	for (uint32_t i = 0; i < b->nout; i++) {
		int k = R_KIND(b->out[i].b);
		if (k == R_CHILD || k == R_DATA) {
			if (grow((void **)&p->decs, &p->dcap, p->ndecs, sizeof *p->decs)) {
				p->oom = 1;
				return;
			}
			p->decs[p->ndecs++] = b->out[i].a;
		} else if (grow((void **)&p->gone, &p->gcap, p->ngone, sizeof *p->gone)) {
			p->oom = 1;
			return;
		} else if (k == R_INODE) {
			/* with the tree it was seen in */
			p->gone[p->ngone++] = (ref_out){ b->out[i].a, R_MK(R_INODE, b->tree) };
		} else {
			p->gone[p->ngone++] = b->out[i];
		}
	}
	if (b->level == 0 && b->tree == BTRFS_EXTENT_TREE_OBJECTID)
		bg_count(p->fs, p->sh, b, -1);
	blk_del(p->sh, b);
}

/* The scratch key of inode ino of tree id (0: not representable). */
static uint64_t ino_key(uint64_t tree, uint64_t ino)
{
	return tree < (1ull << 23) && ino < (1ull << 40) ? (tree + 1) << 40 | ino : 0;
}

/* File extents of one inode must not overlap: the pair (a, b) of
 * consecutive items. */
static void fe_pair(pass *p, const bt_tree *tr, const bt_item *a, const bt_item *b)
{
	if (a && b && a->key.type == BTRFS_EXTENT_DATA_KEY && b->key.type == BTRFS_EXTENT_DATA_KEY &&
	    a->key.objectid == b->key.objectid && b->key.offset < a->key.offset + a->v[1])
		fail(p, "tree %llu: inode %llu file extents overlap at %llu", ULL(tr->id),
		     ULL(b->key.objectid), ULL(b->key.offset));
}

/* tr is a deleted subvolume's tree, which btrfs_drop_snapshot may be part
 * way through (check.c: check_tree). */
static int tree_dropping(fs_info *fs, const bt_tree *tr)
{
	struct btrfs_root *r = fs_root_lookup(fs, tr->id);
	return r && &r->tree == tr && r->dead;
}

/* Check changed block n of tree tr as check_fs checks a block, and walk
 * on into its changed children. */
static void visit(pass *p, const bt_tree *tr, const bt_node *n, const bt_key *lo,
		  const bt_key *hi, uint64_t ptr_gen, int is_root)
{
	shadow *sh = p->sh;
	if (p->oom)
		return;
	sblk *old = blk_get(sh, n->bytenr);
	if (old && old->gen == n->generation && n->generation <= sh->gen)
		return; /* unchanged since the last check */
	uint32_t one;
	if (u64map_get(&sh->seen, n->bytenr, &one))
		return; /* changed, and checked from another parent already */
	if (u64map_put(&sh->seen, n->bytenr, 1)) {
		p->oom = 1;
		return;
	}
	sh->incr_blocks++;
	if (old)
		drop_stale(p, old);
	if (n->dead)
		fail(p, "tree %llu: block %llu is dead but linked", ULL(tr->id), ULL(n->bytenr));
	if (!is_root && n->generation != ptr_gen)
		fail(p, "tree %llu: block %llu gen %llu, parent pointer says %llu", ULL(tr->id),
		     ULL(n->bytenr), ULL(n->generation), ULL(ptr_gen));
	if (n->generation > p->fs->transid)
		fail(p, "tree %llu: block %llu from the future", ULL(tr->id), ULL(n->bytenr));
	if (n->nritems == 0 && !is_root)
		fail(p, "tree %llu: empty non-root block %llu", ULL(tr->id), ULL(n->bytenr));
	/* keys in order with the first and the last in range are all in
	 * range: only a block that fails that gets the key-by-key report */
	int keys_ok = !n->nritems ||
		      ((!lo || bt_key_cmp(bt_node_key(n, 0), lo) >= 0) &&
		       (!hi || bt_key_cmp(bt_node_key(n, n->nritems - 1), hi) < 0));
	for (int i = 1; i < n->nritems && keys_ok; i++)
		keys_ok = bt_key_cmp(bt_node_key(n, i - 1), bt_node_key(n, i)) < 0;
	for (int i = 0; i < n->nritems && !keys_ok; i++) {
		const bt_key *k = bt_node_key(n, i);
		if (i > 0 && bt_key_cmp(bt_node_key(n, i - 1), k) >= 0)
			fail(p, "tree %llu: block %llu keys out of order at %d", ULL(tr->id),
			     ULL(n->bytenr), i);
		if ((lo && bt_key_cmp(k, lo) < 0) || (hi && bt_key_cmp(k, hi) >= 0))
			fail(p, "tree %llu: block %llu key outside its parent's range", ULL(tr->id),
			     ULL(n->bytenr));
	}
	if (lo && !is_root && n->nritems && bt_key_cmp(bt_node_key(n, 0), lo) != 0)
		fail(p, "tree %llu: block %llu first key differs from its pointer key", ULL(tr->id),
		     ULL(n->bytenr));
	if (!record(p, tr, n))
		return;
	if (n->level == 0) {
		uint32_t used = 0;
		for (int i = 0; i < n->nritems; i++) {
			const bt_item *it = &n->items[i];
			used += BT_ITEM_HEADER + it->size;
			if (i > 0)
				fe_pair(p, tr, &n->items[i - 1], it);
			uint64_t ik = it->key.type == BTRFS_INODE_ITEM_KEY
					      ? ino_key(tr->id, it->key.objectid) : 0;
			if (ik && u64map_put(&p->sh->inoseen, ik, 1))
				p->oom = 1;
			if (it->key.type == BTRFS_EXTENT_DATA_KEY && it->aux == FE_INLINE &&
			    it->size != SZ_FE_INLINE_BASE + it->v[1])
				fail(p, "inline extent of inode %llu has size %u for %llu bytes",
				     ULL(it->key.objectid), it->size, ULL(it->v[1]));
		}
		if (used != n->used)
			fail(p, "tree %llu: leaf %llu used %u, items say %u", ULL(tr->id),
			     ULL(n->bytenr), n->used, used);
		if (used > BT_LEAF_DATA_SIZE)
			fail(p, "tree %llu: leaf %llu overfull (%u bytes)", ULL(tr->id),
			     ULL(n->bytenr), used);
		/* the pairs across its edges, with the unchanged neighbours */
		if (n->nritems && tr->root) {
			bt_rpath m;
			bt_search_read(NULL, tr->root, NULL, &n->items[0].key, NULL, &m);
			const bt_item *prev = m.nodes[0] == n ? bt_rpath_prev(&m) : NULL;
			if (prev)
				fe_pair(p, tr, prev, &n->items[0]);
			bt_search_read(NULL, tr->root, NULL, &n->items[n->nritems - 1].key, NULL,
				       &m);
			if (m.nodes[0] == n) {
				m.slots[0]++;
				fe_pair(p, tr, &n->items[n->nritems - 1], bt_rpath_item(&m));
			}
		}
		if (tr == &p->fs->extent_tree || tr == &p->fs->csum_tree)
			note_leaf(p, tr, n);
		return;
	}
	if (n->nritems > (int)BT_NODE_PTRS)
		fail(p, "tree %llu: node %llu has %d pointers", ULL(tr->id), ULL(n->bytenr),
		     n->nritems);
	for (int i = 0, kept = 0; i < n->nritems; i++) {
		const bt_node *c = n->ptrs[i].child;
		if (!c) {
			/* as check_fs: only a prefix dropped by the cleaner's walk */
			if (kept || !tree_dropping(p->fs, tr))
				fail(p, "tree %llu: node %llu null child", ULL(tr->id), ULL(n->bytenr));
			continue;
		}
		kept = 1;
		if (c->level != n->level - 1)
			fail(p, "tree %llu: node %llu level %d has a child of level %d", ULL(tr->id),
			     ULL(n->bytenr), n->level, c->level);
		if (c->generation > n->generation)
			fail(p, "tree %llu: child %llu newer than parent %llu", ULL(tr->id),
			     ULL(c->bytenr), ULL(n->bytenr));
		const bt_key *chi = i + 1 < n->nritems ? &n->ptrs[i + 1].key : hi;
		sblk *cb = blk_get(sh, c->bytenr);
		if (cb && cb->gen == c->generation && c->generation <= sh->gen) {
			/* unchanged: where the new pointer meets it */
			if (c->dead)
				fail(p, "tree %llu: block %llu is dead but linked", ULL(tr->id),
				     ULL(c->bytenr));
			if (n->ptrs[i].gen != c->generation)
				fail(p, "tree %llu: block %llu gen %llu, parent pointer says %llu",
				     ULL(tr->id), ULL(c->bytenr), ULL(c->generation),
				     ULL(n->ptrs[i].gen));
			if (c->nritems && bt_key_cmp(bt_node_key(c, 0), &n->ptrs[i].key) != 0)
				fail(p, "tree %llu: block %llu first key differs from its pointer key",
				     ULL(tr->id), ULL(c->bytenr));
			const bt_key *lk = last_key(c);
			if (lk && chi && bt_key_cmp(lk, chi) >= 0)
				fail(p, "tree %llu: block %llu key outside its parent's range",
				     ULL(tr->id), ULL(c->bytenr));
			continue;
		}
		visit(p, tr, c, &n->ptrs[i].key, chi, n->ptrs[i].gen, 0);
	}
}

/* The references of dead blocks go, and of theirs (the cascade). */
static void run_decs(pass *p)
{
	shadow *sh = p->sh;
	while (p->ndecs && !p->oom) {
		uint64_t x = p->decs[--p->ndecs];
		refs_add(p, x, -1);
		if (refs_of(sh, x))
			continue;
		sblk *b = blk_get(sh, x);
		if (b)
			drop_stale(p, b); /* dead: its references go too */
	}
}

/* An extent item (in hand) against the count. */
static void check_item(pass *p, const bt_item *it)
{
	fs_info *fs = p->fs;
	int tree = it->key.type == BTRFS_METADATA_ITEM_KEY;
	uint64_t x = it->key.objectid, len = tree ? BT_NODESIZE : it->key.offset;
	uint32_t want = refs_of(p->sh, x);
	if (it->v[0] != want)
		fail(p, "%s extent %llu has %llu refs, %llu references found", tree ? "tree" : "data",
		     ULL(x), ULL(it->v[0]), ULL(want));
	if (it->size != items_extent_item_size(tree, it->aux))
		fail(p, "extent %llu: item size %u for %u inline refs", ULL(x), it->size, it->aux);
	block_group *bg = alloc_find_bg(&fs->alloc, x);
	if (!bg || x + len > bg->start + bg->length)
		fail(p, "extent %llu outside any block group", ULL(x));
	else if (bg->kind != (tree ? ALLOC_METADATA : ALLOC_DATA))
		fail(p, "extent %llu in a block group of the wrong kind", ULL(x));
	else if (!alloc_is_allocated(&fs->alloc, x, len))
		fail(p, "extent %llu not marked allocated", ULL(x));
}

/* A changed extent-tree leaf: its items against the counts, without
 * overlap (also across its left edge), block group items current. */
static void check_ext_leaf(pass *p, const bt_node *n)
{
	fs_info *fs = p->fs;
	uint64_t prev_end = 0;
	int have_prev = 0;
	if (n->nritems) {
		bt_rpath m;
		bt_search_read(NULL, fs->extent_tree.root, NULL, &n->items[0].key, NULL, &m);
		for (const bt_item *it = m.nodes[0] == n ? bt_rpath_prev(&m) : NULL; it;
		     it = bt_rpath_prev(&m)) {
			if (it->key.type == BTRFS_EXTENT_ITEM_KEY ||
			    it->key.type == BTRFS_METADATA_ITEM_KEY) {
				prev_end = it->key.objectid + (it->key.type == BTRFS_METADATA_ITEM_KEY
							       ? BT_NODESIZE : it->key.offset);
				have_prev = 1;
				break;
			}
			if (it->key.type != BTRFS_BLOCK_GROUP_ITEM_KEY)
				break;
		}
	}
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type == BTRFS_BLOCK_GROUP_ITEM_KEY) {
			block_group *bg = alloc_find_bg(&fs->alloc, it->key.objectid);
			if (!bg || bg->start != it->key.objectid || bg->length != it->key.offset)
				fail(p, "block group item %llu matches no block group",
				     ULL(it->key.objectid));
			else if (it->v[0] != bg->used)
				fail(p, "block group %llu item used %llu, counter %llu", ULL(bg->start),
				     ULL(it->v[0]), ULL(bg->used));
			continue;
		}
		if (it->key.type != BTRFS_EXTENT_ITEM_KEY && it->key.type != BTRFS_METADATA_ITEM_KEY)
			continue;
		uint64_t x = it->key.objectid;
		if (have_prev && x < prev_end)
			fail(p, "extent %llu overlaps the previous one", ULL(x));
		prev_end = x + (it->key.type == BTRFS_METADATA_ITEM_KEY ? BT_NODESIZE : it->key.offset);
		have_prev = 1;
		if (u64map_put(&p->sh->extseen, x, 1))
			p->oom = 1;
		check_item(p, it);
	}
	/* and the first extent item after it */
	if (n->nritems && have_prev) {
		bt_rpath m;
		bt_search_read(NULL, fs->extent_tree.root, NULL, &n->items[n->nritems - 1].key, NULL,
			       &m);
		if (m.nodes[0] == n) {
			m.slots[0]++;
			for (const bt_item *it = bt_rpath_item(&m); it; m.slots[0]++, it = bt_rpath_item(&m)) {
				if (it->key.type == BTRFS_EXTENT_ITEM_KEY ||
				    it->key.type == BTRFS_METADATA_ITEM_KEY) {
					if (it->key.objectid < prev_end)
						fail(p, "extent %llu overlaps the previous one",
						     ULL(it->key.objectid));
					break;
				}
				if (it->key.type != BTRFS_BLOCK_GROUP_ITEM_KEY)
					break;
			}
		}
	}
}

/* A changed csum-tree leaf: items well formed, not overlapping, on data
 * extents. */
static void check_csum_leaf(pass *p, const bt_node *n)
{
	fs_info *fs = p->fs;
	uint64_t cend = 0;
	if (n->nritems) {
		bt_rpath m;
		bt_search_read(NULL, fs->csum_tree.root, NULL, &n->items[0].key, NULL, &m);
		const bt_item *it = m.nodes[0] == n ? bt_rpath_prev(&m) : NULL;
		if (it && it->key.type == BTRFS_EXTENT_CSUM_KEY)
			cend = it->key.offset + (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE;
	}
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type != BTRFS_EXTENT_CSUM_KEY)
			continue;
		uint64_t a = it->key.offset;
		uint64_t b = a + (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE;
		if (a < cend)
			fail(p, "csum item %llu overlaps the previous one", ULL(a));
		cend = b;
		if (it->size == 0 || it->size % SZ_CSUM_PER_SECTOR)
			fail(p, "csum item %llu has size %u", ULL(a), it->size);
		uint64_t pos = a;
		while (pos < b) {
			uint64_t e = data_extent_end(fs, pos);
			if (!e)
				break;
			pos = e;
		}
		if (pos < b)
			fail(p, "csum item [%llu,%llu) covers sectors of no data extent", ULL(a), ULL(b));
	}
	/* and the first checksum item after it */
	if (n->nritems) {
		bt_rpath m;
		bt_search_read(NULL, fs->csum_tree.root, NULL, &n->items[n->nritems - 1].key, NULL,
			       &m);
		if (m.nodes[0] == n) {
			m.slots[0]++;
			const bt_item *it = bt_rpath_item(&m);
			if (it && it->key.type == BTRFS_EXTENT_CSUM_KEY && it->key.offset < cend)
				fail(p, "csum item %llu overlaps the previous one", ULL(it->key.offset));
		}
	}
}

/* Whether an in-memory inode ino of tree id still has its inode item. */
static void check_inode_gone(pass *p, uint64_t tree, uint64_t ino)
{
	struct btrfs_root *root = fs_root_lookup(p->fs, tree);
	if (!root || root->deleted || !root->tree.root || !fs_inode_get(root, ino))
		return;
	bt_rpath m;
	bt_key k = bt_mkkey(ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_search_read(NULL, root->tree.root, NULL, &k, NULL, &m);
	const bt_item *it = bt_rpath_item(&m);
	if (!it || it->key.objectid != ino || it->key.type != BTRFS_INODE_ITEM_KEY)
		fail(p, "inode %llu of root %llu has no inode item", ULL(ino), ULL(tree));
}

/* Release the scratch maps, or clear them when small. */
static void scratch_reset(u64map *m)
{
	if (m->cap > 65536)
		u64map_free(m);
	else
		u64map_clear(m);
}

int check_fs_incr(fs_info *fs)
{
	shadow *sh = fs->check_shadow;
	if (!sh || !sh->valid || fs->nrefq || fs->check_midrun)
		return check_fs(fs); /* no record yet, or not at a commit */
	pass p;
	memset(&p, 0, sizeof p);
	p.fs = fs;
	p.sh = sh;
	p.track = 1;
	fs->accounting_off++;
	if (bg_fit(sh, fs->alloc.nbgs))
		p.oom = 1;
	/* the roots: new ones counted in, replaced and gone ones out (after
	 * every new reference is in, so a shared block never looks dead) */
	const bt_tree *trees[MAX_TREES];
	int nt = live_trees(fs, trees, MAX_TREES);
	for (size_t i = 0; i < sh->ntrees; i++) {
		int still = 0;
		for (int j = 0; j < nt; j++)
			still |= trees[j]->id == sh->trees[i].id &&
				 trees[j]->root->bytenr == sh->trees[i].root;
		if (!still) {
			if (grow((void **)&p.decs, &p.dcap, p.ndecs, sizeof *p.decs))
				p.oom = 1;
			else
				p.decs[p.ndecs++] = sh->trees[i].root;
		}
	}
	for (int j = 0; j < nt && !p.oom; j++) {
		int known = 0;
		for (size_t i = 0; i < sh->ntrees; i++)
			known |= trees[j]->id == sh->trees[i].id &&
				 trees[j]->root->bytenr == sh->trees[i].root;
		if (!known)
			refs_add(&p, trees[j]->root->bytenr, 1);
		visit(&p, trees[j], trees[j]->root, NULL, NULL, trees[j]->root->generation, 1);
	}
	sh->ntrees = 0;
	for (int j = 0; j < nt && !p.oom; j++)
		if (set_root(sh, trees[j]->id, trees[j]->root->bytenr))
			p.oom = 1;
	run_decs(&p);

	/* the extent tree against the counts */
	for (size_t i = 0; i < p.nleaves && !p.oom; i++)
		if (p.leaf_tree[i] == BTRFS_EXTENT_TREE_OBJECTID)
			check_ext_leaf(&p, p.leaves[i]);
	for (size_t i = 0; i < p.nleaves && !p.oom; i++)
		if (p.leaf_tree[i] == BTRFS_CSUM_TREE_OBJECTID)
			check_csum_leaf(&p, p.leaves[i]);
	for (uint32_t s = 0; s < sh->delta.cap && !p.oom; s++) {
		uint64_t x = sh->delta.keys[s];
		if (!x || sh->delta.vals[s] == 1u << 31 || u64map_get(&sh->extseen, x, NULL))
			continue;
		/* the count moved but no changed leaf holds the item */
		const bt_item *it = ext_item(fs, x);
		uint32_t want = refs_of(sh, x);
		if (it)
			check_item(&p, it);
		else if (want)
			fail(&p, "extent %llu has %llu references and no extent item", ULL(x), ULL(want));
	}
	for (size_t i = 0; i < p.ngone && !p.oom; i++) {
		const ref_out *g = &p.gone[i];
		int k = R_KIND(g->b);
		if ((k == R_EXT_DATA || k == R_EXT_TREE) && !u64map_get(&sh->extseen, g->a, NULL)) {
			/* an item left a leaf: gone exactly when unreferenced */
			const bt_item *it = ext_item(fs, g->a);
			if (it && !u64map_get(&sh->delta, g->a, NULL))
				check_item(&p, it);
			else if (!it && refs_of(sh, g->a))
				fail(&p, "extent %llu has %llu references and no extent item",
				     ULL(g->a), ULL(refs_of(sh, g->a)));
			if (!it && k == R_EXT_DATA && csum_overlaps(fs, g->a, g->a + R_VAL(g->b)))
				fail(&p, "freed data extent %llu still has checksums", ULL(g->a));
		}
	}
	/* inode items that left a leaf and are in no changed one: their
	 * in-memory inodes */
	for (size_t i = 0; i < p.ngone && !p.oom; i++) {
		const ref_out *g = &p.gone[i];
		uint64_t ik = R_KIND(g->b) == R_INODE ? ino_key(R_VAL(g->b), g->a) : 0;
		if (R_KIND(g->b) == R_INODE && !(ik && u64map_get(&sh->inoseen, ik, NULL)))
			check_inode_gone(&p, R_VAL(g->b), g->a);
	}
	for (int g = 0; g < fs->alloc.nbgs && g < sh->nbg && !p.oom; g++)
		if (sh->bg_sum[g] != fs->alloc.bgs[g].used)
			fail(&p, "block group %llu used %llu, extent items sum %llu",
			     ULL(fs->alloc.bgs[g].start), ULL(fs->alloc.bgs[g].used), ULL(sh->bg_sum[g]));

	int total = p.fails;
	free(p.decs);
	free(p.gone);
	free(p.leaves);
	free(p.leaf_tree);
	scratch_reset(&sh->seen);
	scratch_reset(&sh->delta);
	scratch_reset(&sh->extseen);
	scratch_reset(&sh->inoseen);
	if (p.oom) {
		/* the record cannot follow: check everything, rebuild it */
		sh->valid = 0;
		fs->accounting_off--;
		return total + check_fs(fs);
	}
	sh->gen = fs->generation;
	sh->incr_checks++;
	fs->check_incr = 1;
	for (int i = 0; i < fs->nchecks; i++) {
		int f = fs->checks[i].fn(fs, fs->checks[i].ctx);
		if (f > 0)
			total += f;
	}
	fs->check_incr = 0;
	check_done(fs, 0);
	fs->accounting_off--;
	fs->check_failures_total += (uint64_t)total;
	if (total)
		sh->valid = 0; /* after a failure, rebuild from the next full check */
	return total;
}

void check_incr_stats(const fs_info *fs, uint64_t *incr, uint64_t *full)
{
	const shadow *sh = fs->check_shadow;
	*incr = sh ? sh->incr_checks : 0;
	*full = sh ? sh->full_builds : 0;
}

void check_incr_work(const fs_info *fs, uint64_t *checked, uint64_t *walked)
{
	const shadow *sh = fs->check_shadow;
	*checked = sh ? sh->incr_blocks : 0;
	*walked = sh && sh->valid ? sh->full_blocks : 0;
}
