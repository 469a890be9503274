/*
 * check.c - the invariant checker (check.h). A host-side walk: it charges
 * no simulated time and counts no node visits, so checking never changes
 * an experiment's metrics.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

void check_report(fs_info *fs, const char *fmt, ...)
{
	memmove(fs->check_msg[1], fs->check_msg[0], sizeof(fs->check_msg[0]) * 3);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(fs->check_msg[0], sizeof(fs->check_msg[0]), fmt, ap);
	va_end(ap);
	if (fs->check_verbose)
		fprintf(stderr, "check: %s\n", fs->check_msg[0]);
}

const char *check_last_error(const fs_info *fs)
{
	return fs->check_msg[0];
}

int check_register(fs_info *fs, const char *name, check_fn fn, void *ctx)
{
	if (!fs || !fn)
		return LAB_EINVAL;
	if (fs->nchecks >= (int)(sizeof(fs->checks) / sizeof(fs->checks[0])))
		return LAB_ENOMEM;
	fs->checks[fs->nchecks].name = name;
	fs->checks[fs->nchecks].fn = fn;
	fs->checks[fs->nchecks].ctx = ctx;
	fs->nchecks++;
	return 0;
}

/* A growable array of u64. */
typedef struct u64v {
	uint64_t *v;
	size_t n, cap;
	int oom;
} u64v;

static void u64v_push(u64v *a, uint64_t x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		uint64_t *nv = lab_realloc(a->v, cap * sizeof(*nv));
		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Occurrences of x in sorted array a (binary search). */
static uint64_t count_of(const u64v *a, uint64_t x)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t c = 0;
	while (lo < a->n && a->v[lo] == x) {
		c++;
		lo++;
	}
	return c;
}

typedef struct walk {
	fs_info *fs;
	uint32_t epoch;
	u64v tree_refs;  /* one entry per reference to a tree block */
	u64v data_refs;  /* one entry per file extent item (distinct leaves) */
	u64v blocks;     /* distinct tree blocks: bytenr */
	int fails;
	/* the tree of a deleted subvolume, which btrfs_drop_snapshot may be
	 * part way through (check_tree) */
	int dropping;
	/* in-order state for file extent overlap within one tree */
	uint64_t last_ino, last_end;
} walk;

static void fail(walk *w, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
static void fail(walk *w, const char *fmt, ...)
{
	char buf[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	w->fails++;
	check_report(w->fs, "%s", buf);
}

/* Check block n reached from a parent pointer with key range [lo, hi)
 * (hi NULL: unbounded); ptr_key/ptr_gen: what the parent recorded. */
static void check_node(walk *w, const bt_tree *tr, const bt_node *n, const bt_key *lo,
		       const bt_key *hi, uint64_t ptr_gen, int is_root)
{
	u64v_push(&w->tree_refs, n->bytenr);
	if (n->mark == w->epoch)
		return; /* shared block, already checked */
	((bt_node *)n)->mark = w->epoch;
	u64v_push(&w->blocks, n->bytenr);
	if (n->dead)
		fail(w, "tree %llu: block %llu is dead but linked", (unsigned long long)tr->id,
		     (unsigned long long)n->bytenr);
	if (!is_root && n->generation != ptr_gen)
		fail(w, "tree %llu: block %llu gen %llu, parent pointer says %llu",
		     (unsigned long long)tr->id, (unsigned long long)n->bytenr,
		     (unsigned long long)n->generation, (unsigned long long)ptr_gen);
	if (n->generation > w->fs->transid)
		fail(w, "tree %llu: block %llu from the future", (unsigned long long)tr->id,
		     (unsigned long long)n->bytenr);
	if (n->nritems == 0 && !is_root)
		fail(w, "tree %llu: empty non-root block %llu", (unsigned long long)tr->id,
		     (unsigned long long)n->bytenr);
	for (int i = 0; i < n->nritems; i++) {
		const bt_key *k = bt_node_key(n, i);
		if (i > 0 && bt_key_cmp(bt_node_key(n, i - 1), k) >= 0)
			fail(w, "tree %llu: block %llu keys out of order at %d",
			     (unsigned long long)tr->id, (unsigned long long)n->bytenr, i);
		if (lo && bt_key_cmp(k, lo) < 0)
			fail(w, "tree %llu: block %llu key below its parent's range",
			     (unsigned long long)tr->id, (unsigned long long)n->bytenr);
		if (hi && bt_key_cmp(k, hi) >= 0)
			fail(w, "tree %llu: block %llu key above its parent's range",
			     (unsigned long long)tr->id, (unsigned long long)n->bytenr);
	}
	if (lo && !is_root && n->nritems && bt_key_cmp(bt_node_key(n, 0), lo) != 0)
		fail(w, "tree %llu: block %llu first key differs from its pointer key",
		     (unsigned long long)tr->id, (unsigned long long)n->bytenr);
	if (n->level == 0) {
		uint32_t used = 0;
		for (int i = 0; i < n->nritems; i++) {
			const bt_item *it = &n->items[i];
			used += BT_ITEM_HEADER + it->size;
			if (it->key.type == BTRFS_EXTENT_DATA_KEY) {
				uint64_t ino = it->key.objectid;
				if (ino == w->last_ino && it->key.offset < w->last_end)
					fail(w, "tree %llu: inode %llu file extents overlap at %llu",
					     (unsigned long long)tr->id, (unsigned long long)ino,
					     (unsigned long long)it->key.offset);
				w->last_ino = ino;
				w->last_end = it->key.offset + it->v[1];
				if (it->aux != FE_INLINE && it->v[0])
					u64v_push(&w->data_refs, it->v[0]);
				if (it->aux == FE_INLINE && it->size != SZ_FE_INLINE_BASE + it->v[1])
					fail(w, "inline extent of inode %llu has size %u for %llu bytes",
					     (unsigned long long)ino, it->size, (unsigned long long)it->v[1]);
			}
		}
		if (used != n->used)
			fail(w, "tree %llu: leaf %llu used %u, items say %u", (unsigned long long)tr->id,
			     (unsigned long long)n->bytenr, n->used, used);
		if (used > BT_LEAF_DATA_SIZE)
			fail(w, "tree %llu: leaf %llu overfull (%u bytes)", (unsigned long long)tr->id,
			     (unsigned long long)n->bytenr, used);
		return;
	}
	if (n->nritems > (int)BT_NODE_PTRS)
		fail(w, "tree %llu: node %llu has %d pointers", (unsigned long long)tr->id,
		     (unsigned long long)n->bytenr, n->nritems);
	for (int i = 0, kept = 0; i < n->nritems; i++) {
		const bt_node *c = n->ptrs[i].child;
		if (!c) {
			/* the drop's walk has been through this slot */
			if (!w->dropping || kept)
				fail(w, "tree %llu: node %llu null child", (unsigned long long)tr->id,
				     (unsigned long long)n->bytenr);
			continue;
		}
		kept = 1;
		if (c->level != n->level - 1)
			fail(w, "tree %llu: node %llu level %d has a child of level %d",
			     (unsigned long long)tr->id, (unsigned long long)n->bytenr, n->level, c->level);
		if (c->generation > n->generation)
			fail(w, "tree %llu: child %llu newer than parent %llu",
			     (unsigned long long)tr->id, (unsigned long long)c->bytenr,
			     (unsigned long long)n->bytenr);
		const bt_key *chi = i + 1 < n->nritems ? &n->ptrs[i + 1].key : hi;
		check_node(w, tr, c, &n->ptrs[i].key, chi, n->ptrs[i].gen, 0);
	}
}

/* Walk tree tr. dropping: tr is a deleted subvolume's, which the cleaner
 * may be part way through (btrfs_drop_snapshot): the pointers its walk has
 * dropped, a prefix of each node on its path, are gone and what is left is
 * walked, as btrfs check starts a dead root's walk at its drop_progress;
 * anywhere else a missing child is damage. */
static void check_tree(walk *w, const bt_tree *tr, int dropping)
{
	if (!tr->root)
		return;
	w->dropping = dropping;
	w->last_ino = UINT64_MAX;
	w->last_end = 0;
	check_node(w, tr, tr->root, NULL, NULL, tr->root->generation, 1);
}

typedef struct ext_rec {
	uint64_t bytenr, len, refs;
	int is_tree;
} ext_rec;

/* The queued ref changes (fs->refq) summed per extent, sorted by bytenr:
 * between two steps the extent tree lags the trees by exactly these. */
typedef struct pend {
	uint64_t bytenr, len;
	int64_t delta;
	int is_tree, adds; /* adds: +1 changes among them (an extent written
			    * and dropped again has a net 0 but its csums
			    * until the changes run) */
} pend;

static int pend_cmp(const void *a, const void *b)
{
	const pend *x = a, *y = b;
	return x->bytenr < y->bytenr ? -1 : x->bytenr > y->bytenr;
}

/* fs->refq summed per extent (*n entries; NULL with *n = 0 if none). */
static pend *pending_refs(const fs_info *fs, size_t *n)
{
	*n = 0;
	if (!fs->nrefq)
		return NULL;
	pend *v = lab_malloc((size_t)fs->nrefq * sizeof *v);
	if (!v)
		return NULL;
	for (uint64_t i = 0; i < fs->nrefq; i++) {
		const fs_ref_op *op = &fs->refq[i];
		v[i] = (pend){ op->bytenr, op->is_tree ? BT_NODESIZE : op->num_bytes, op->delta,
			       op->is_tree, op->delta > 0 };
	}
	qsort(v, (size_t)fs->nrefq, sizeof *v, pend_cmp);
	size_t m = 0;
	for (size_t i = 0; i < fs->nrefq; i++) {
		if (m && v[m - 1].bytenr == v[i].bytenr) {
			v[m - 1].delta += v[i].delta;
			v[m - 1].adds += v[i].adds;
		} else
			v[m++] = v[i];
	}
	*n = m;
	return v;
}

/* The pending delta of bytenr (0 if none). */
static const pend *pending_of(const pend *v, size_t n, uint64_t bytenr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].bytenr < bytenr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].bytenr == bytenr ? &v[lo] : NULL;
}

/* The extent tree against the references found and the block groups. */
static void check_extents(walk *w)
{
	fs_info *fs = w->fs;
	size_t n = 0, cap = 1024;
	ext_rec *ex = lab_malloc(cap * sizeof(*ex));
	uint64_t *bg_sum = lab_calloc((size_t)fs->alloc.nbgs + 1, sizeof(uint64_t));
	if (!ex || !bg_sum) {
		free(ex);
		free(bg_sum);
		fail(w, "checker out of memory");
		return;
	}
	bt_tree *et = &fs->extent_tree;
	/* block group items are rewritten at commit (block_group_items,
	 * btrfs_write_dirty_block_groups): they equal the counters unless the
	 * running transaction has changed the extent tree since (lab_check
	 * between two steps) */
	int items_current = et->root && et->root->generation < fs->transid;
	bt_path p;
	bt_path_init(&p, et, NULL);
	bt_key k0 = bt_mkkey(0, 0, 0);
	/* a read walk without cost accounting: restore counters afterwards */
	uint64_t nv = et->nodes_visited, bs = et->bsearch_steps, cpu = fs->cpu_untasked_ns;
	int ret = bt_search(et, &p, &k0, 0, 0);
	while (ret >= 0) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(et, &p))
				break;
			continue;
		}
		if (it->key.type == BTRFS_EXTENT_ITEM_KEY || it->key.type == BTRFS_METADATA_ITEM_KEY) {
			if (n == cap) {
				cap *= 2;
				ext_rec *nx = lab_realloc(ex, cap * sizeof(*ex));
				if (!nx)
					break;
				ex = nx;
			}
			int tree = it->key.type == BTRFS_METADATA_ITEM_KEY;
			ex[n].bytenr = it->key.objectid;
			ex[n].len = tree ? BT_NODESIZE : it->key.offset;
			ex[n].refs = it->v[0];
			ex[n].is_tree = tree;
			n++;
			if (it->size != items_extent_item_size(tree, it->aux))
				fail(w, "extent %llu: item size %u for %u inline refs",
				     (unsigned long long)it->key.objectid, it->size, it->aux);
		} else if (it->key.type == BTRFS_BLOCK_GROUP_ITEM_KEY) {
			block_group *bg = alloc_find_bg(&fs->alloc, it->key.objectid);
			if (!bg || bg->start != it->key.objectid || bg->length != it->key.offset)
				fail(w, "block group item %llu matches no block group",
				     (unsigned long long)it->key.objectid);
			else if (items_current && it->v[0] != bg->used)
				fail(w, "block group %llu item used %llu, counter %llu",
				     (unsigned long long)bg->start, (unsigned long long)it->v[0],
				     (unsigned long long)bg->used);
		}
		if (bt_next_item(et, &p))
			break;
	}
	bt_path_release(&p);
	et->nodes_visited = nv;
	et->bsearch_steps = bs;
	fs->cpu_untasked_ns = cpu;

	/* between two steps (check_fs_midrun): the queued changes as if run;
	 * an extent they insert has no item yet but counts for coverage */
	size_t npend = 0;
	pend *pd = fs->check_midrun ? pending_refs(fs, &npend) : NULL;
	uint64_t prev_end = 0;
	for (size_t i = 0; i < n; i++) {
		ext_rec *e = &ex[i];
		if (e->bytenr < prev_end)
			fail(w, "extent %llu overlaps the previous one", (unsigned long long)e->bytenr);
		prev_end = e->bytenr + e->len;
		block_group *bg = alloc_find_bg(&fs->alloc, e->bytenr);
		if (!bg || e->bytenr + e->len > bg->start + bg->length) {
			fail(w, "extent %llu outside any block group", (unsigned long long)e->bytenr);
		} else {
			if (bg->kind != (e->is_tree ? ALLOC_METADATA : ALLOC_DATA))
				fail(w, "extent %llu in a block group of the wrong kind",
				     (unsigned long long)e->bytenr);
			bg_sum[bg - fs->alloc.bgs] += e->len;
			if (!alloc_is_allocated(&fs->alloc, e->bytenr, e->len))
				fail(w, "extent %llu not marked allocated", (unsigned long long)e->bytenr);
		}
		uint64_t want = e->is_tree ? count_of(&w->tree_refs, e->bytenr)
					   : count_of(&w->data_refs, e->bytenr);
		const pend *pe = pending_of(pd, npend, e->bytenr);
		if (pe)
			e->refs = (uint64_t)((int64_t)e->refs + pe->delta);
		if (want != e->refs)
			fail(w, "%s extent %llu has %llu refs, %llu references found",
			     e->is_tree ? "tree" : "data", (unsigned long long)e->bytenr,
			     (unsigned long long)e->refs, (unsigned long long)want);
	}
	for (int i = 0; i < fs->alloc.nbgs; i++)
		if (bg_sum[i] != fs->alloc.bgs[i].used)
			fail(w, "block group %llu used %llu, extent items sum %llu",
			     (unsigned long long)fs->alloc.bgs[i].start,
			     (unsigned long long)fs->alloc.bgs[i].used, (unsigned long long)bg_sum[i]);
	/* every referenced block / extent has an item */
	for (size_t i = 0; i < w->blocks.n; i++) {
		uint64_t b = w->blocks.v[i];
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (ex[mid].bytenr < b)
				lo = mid + 1;
			else
				hi = mid;
		}
		const pend *pe = pending_of(pd, npend, b);
		if ((lo >= n || ex[lo].bytenr != b || !ex[lo].is_tree) &&
		    !(pe && pe->is_tree && pe->delta == (int64_t)count_of(&w->tree_refs, b)))
			fail(w, "tree block %llu has no extent item", (unsigned long long)b);
	}
	for (size_t i = 0; i < w->data_refs.n; i++) {
		uint64_t b = w->data_refs.v[i];
		if (i > 0 && w->data_refs.v[i - 1] == b)
			continue;
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (ex[mid].bytenr < b)
				lo = mid + 1;
			else
				hi = mid;
		}
		const pend *pe = pending_of(pd, npend, b);
		if ((lo >= n || ex[lo].bytenr != b || ex[lo].is_tree) &&
		    !(pe && !pe->is_tree && pe->delta == (int64_t)count_of(&w->data_refs, b)))
			fail(w, "data extent %llu has no extent item", (unsigned long long)b);
	}
	/* checksum items lie inside data extents and do not overlap */
	bt_tree *ct = &fs->csum_tree;
	nv = ct->nodes_visited;
	bs = ct->bsearch_steps;
	cpu = fs->cpu_untasked_ns;
	bt_path_init(&p, ct, NULL);
	ret = bt_search(ct, &p, &k0, 0, 0);
	uint64_t cend = 0;
	while (ret >= 0) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(ct, &p))
				break;
			continue;
		}
		if (it->key.type == BTRFS_EXTENT_CSUM_KEY) {
			uint64_t a = it->key.offset;
			uint64_t b = a + (uint64_t)(it->size / SZ_CSUM_PER_SECTOR) * SECTORSIZE;
			if (a < cend)
				fail(w, "csum item %llu overlaps the previous one", (unsigned long long)a);
			cend = b;
			if (it->size == 0 || it->size % SZ_CSUM_PER_SECTOR)
				fail(w, "csum item %llu has size %u", (unsigned long long)a, it->size);
			/* [a, b) must be covered by data extents */
			size_t lo = 0, hi = n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (ex[mid].bytenr + ex[mid].len <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			/* by data extent items, or (between two steps) by data
			 * extents whose items the queued refs insert */
			uint64_t pos = a;
			size_t k = 0;
			for (int moved = 1; pos < b && moved;) {
				moved = 0;
				while (lo < n && ex[lo].bytenr <= pos) {
					if (!ex[lo].is_tree && ex[lo].bytenr + ex[lo].len > pos) {
						pos = ex[lo].bytenr + ex[lo].len;
						moved = 1;
					}
					lo++;
				}
				while (k < npend && pd[k].bytenr <= pos) {
					if (!pd[k].is_tree && pd[k].adds &&
					    pd[k].bytenr + pd[k].len > pos) {
						pos = pd[k].bytenr + pd[k].len;
						moved = 1;
					}
					k++;
				}
			}
			if (pos < b)
				fail(w, "csum item [%llu,%llu) covers sectors of no data extent",
				     (unsigned long long)a, (unsigned long long)b);
		}
		if (bt_next_item(ct, &p))
			break;
	}
	bt_path_release(&p);
	ct->nodes_visited = nv;
	ct->bsearch_steps = bs;
	fs->cpu_untasked_ns = cpu;
	free(pd);
	free(ex);
	free(bg_sum);
}

int check_inode_item(fs_info *fs, struct inode *in)
{
	bt_tree *tr = &in->root->tree;
	uint64_t nv = tr->nodes_visited, bs = tr->bsearch_steps, cpu = fs->cpu_untasked_ns;
	bt_key k = bt_mkkey(in->ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_path p;
	bt_path_init(&p, tr, NULL);
	int ret = bt_search(tr, &p, &k, 0, 0);
	bt_path_release(&p);
	tr->nodes_visited = nv;
	tr->bsearch_steps = bs;
	fs->cpu_untasked_ns = cpu;
	if (ret == 0)
		return 0;
	check_report(fs, "inode %llu of root %llu has no inode item", (unsigned long long)in->ino,
		     (unsigned long long)in->root->id);
	return 1;
}

/* In-memory inodes have their inode items. */
static void check_inode_cb(struct inode *in, void *ctx)
{
	walk *w = ctx;
	w->fails += check_inode_item(w->fs, in);
}

/* A deleted subvolume keeps no inode in memory (btrfs_delete_subvolume
 * evicts them: btrfs_prune_dentries); its tree is the cleaner's and is
 * not searched. */
static void check_dead_inode_cb(struct inode *in, void *ctx)
{
	walk *w = ctx;
	fail(w, "inode %llu of deleted root %llu still in memory", (unsigned long long)in->ino,
	     (unsigned long long)in->root->id);
}

int check_fs(fs_info *fs)
{
	walk w;
	memset(&w, 0, sizeof(w));
	w.fs = fs;
	w.epoch = ++fs->check_epoch;
	fs->accounting_off++;
	check_tree(&w, &fs->root_tree, 0);
	check_tree(&w, &fs->extent_tree, 0);
	check_tree(&w, &fs->csum_tree, 0);
	for (int i = 0; i < fs->nroots; i++)
		if (!fs->roots[i]->deleted && fs->roots[i]->tree.root)
			check_tree(&w, &fs->roots[i]->tree, fs->roots[i]->dead);
	if (w.tree_refs.oom || w.data_refs.oom || w.blocks.oom) {
		fail(&w, "checker out of memory");
	} else {
		if (w.tree_refs.n)
			qsort(w.tree_refs.v, w.tree_refs.n, sizeof(uint64_t), cmp_u64);
		if (w.data_refs.n)
			qsort(w.data_refs.v, w.data_refs.n, sizeof(uint64_t), cmp_u64);
		if (w.blocks.n)
			qsort(w.blocks.v, w.blocks.n, sizeof(uint64_t), cmp_u64);
		if (fs->nrefq && !fs->check_midrun)
			fail(&w, "%llu extent ref changes not yet run", (unsigned long long)fs->nrefq);
		else
			check_extents(&w);
	}
	for (int i = 0; i < fs->nroots; i++)
		if (!fs->roots[i]->deleted)
			fs_inode_foreach(fs->roots[i],
					 fs->roots[i]->dead ? check_dead_inode_cb : check_inode_cb, &w);
	free(w.tree_refs.v);
	free(w.data_refs.v);
	free(w.blocks.v);
	int total = w.fails;
	for (int i = 0; i < fs->nchecks; i++) {
		int f = fs->checks[i].fn(fs, fs->checks[i].ctx);
		if (f > 0)
			total += f;
	}
	check_incr_rebuild(fs);
	check_done(fs, 1);
	fs->accounting_off--;
	fs->check_failures_total += (uint64_t)total;
	return total;
}

void check_done(fs_info *fs, int full)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_check_done)
			fs->hooks[i].on_check_done(fs->hooks[i].ctx, full);
}

int check_fs_midrun(fs_info *fs)
{
	int saved = fs->check_midrun;
	fs->check_midrun = 1;
	int f = check_fs(fs);
	fs->check_midrun = saved;
	return f;
}
