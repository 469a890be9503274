/*
 * qgroup.c - quota groups, dirty-extent tracing and accounting (see
 * qgroup.h).
 */
#include "qgroup.h"

#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"

/* Charge CPU to the task doing the tree change (or the fs's untasked). */
static void qg_charge(qgroup_ctx *q, task *t, uint64_t ns)
{
	fs_charge(q->fs, t, ns);
}

/* ---- qgroups --------------------------------------------------------- */

qgroup *qgroup_find(qgroup_ctx *q, uint64_t id)
{
	int lo = 0, hi = q->nqgs - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (q->qgs[mid].id == id)
			return &q->qgs[mid];
		if (q->qgs[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return NULL;
}

/*
 * Create qgroup id (models btrfs_create_qgroup). Returns 0, LAB_EINVAL if
 * it exists, or LAB_ENOMEM.
 */
int qgroup_create(qgroup_ctx *q, uint64_t id)
{
	if (qgroup_find(q, id))
		return LAB_EINVAL;
	if (q->nqgs == q->qcap) {
		int nc = q->qcap ? q->qcap * 2 : 32;
		qgroup *n = lab_realloc(q->qgs, (size_t)nc * sizeof *n);
		if (!n)
			return LAB_ENOMEM;
		q->qgs = n;
		q->qcap = nc;
	}
	int i = q->nqgs;
	while (i > 0 && q->qgs[i - 1].id > id) {
		q->qgs[i] = q->qgs[i - 1];
		i--;
	}
	memset(&q->qgs[i], 0, sizeof q->qgs[i]);
	q->qgs[i].id = id;
	q->nqgs++;
	return 0;
}

/* Make parent a parent of child (models btrfs_add_qgroup_relation, without
 * the counter propagation: callers relate before accounting/rescan). */
int qgroup_add_relation(qgroup_ctx *q, uint64_t child, uint64_t parent)
{
	qgroup *c = qgroup_find(q, child), *p = qgroup_find(q, parent);
	if (!c || !p || (parent >> 48) <= (child >> 48))
		return LAB_EINVAL;
	if (c->nparents == QG_MAX_PARENTS)
		return LAB_ERANGE;
	c->parents[c->nparents++] = parent;
	return 0;
}

/* ---- accounting of one extent ---------------------------------------- */

/* A seq-relative refcount: values below seq are stale, i.e. 0
 * (btrfs_qgroup_get_old/new_refcnt). */
static uint64_t get_refcnt(uint64_t v, uint64_t seq) { return v < seq ? 0 : v - seq; }
/* Bump a seq-relative refcount (btrfs_qgroup_update_old/new_refcnt). */
static void mod_refcnt(uint64_t *v, uint64_t seq, uint64_t mod)
{
	if (*v < seq)
		*v = seq;
	*v += mod;
}

/* A small list of qgroup pointers (the ulist "qgroups"). */
typedef struct qlist {
	qgroup *q[64];
	int n;
} qlist;

/* ulist_add: 1 if added, 0 if present, LAB_ERANGE if full. */
static int qlist_add(qlist *l, qgroup *g)
{
	for (int i = 0; i < l->n; i++)
		if (l->q[i] == g)
			return 0;
	if (l->n == 64)
		return LAB_ERANGE;
	l->q[l->n++] = g;
	return 1;
}

/*
 * Models qgroup_update_refcnt: for each root, bump the (old or new)
 * refcount of its qgroup and of every ancestor once; collect them all.
 * Returns the qgroups visited.
 */
static int update_refcnt(qgroup_ctx *q, const rootset *roots, qlist *all,
			 uint64_t seq, int new_side)
{
	int visited = 0;
	for (int i = 0; i < roots->n; i++) {
		qgroup *g = qgroup_find(q, qgroup_mkid(0, roots->id[i]));
		if (!g)
			continue;
		qlist tmp = { .n = 0 };
		qlist_add(&tmp, g);
		for (int k = 0; k < tmp.n; k++) {
			qgroup *cur = tmp.q[k];
			mod_refcnt(new_side ? &cur->new_refcnt : &cur->old_refcnt, seq, 1);
			qlist_add(all, cur);
			visited++;
			for (int p = 0; p < cur->nparents; p++) {
				qgroup *pg = qgroup_find(q, cur->parents[p]);
				if (pg)
					qlist_add(&tmp, pg);
			}
		}
	}
	return visited;
}

/*
 * Models btrfs_qgroup_account_extent + qgroup_update_counters: compare
 * how many of each qgroup's member roots referenced the extent before and
 * after, and move num_bytes in or out of rfer (referenced at all) and
 * excl (referenced by this qgroup's roots only). Returns the number of
 * qgroup visits (for the cost).
 */
int qgroup_account_extent(qgroup_ctx *q, uint64_t num_bytes,
			  const rootset *old_roots, const rootset *new_roots)
{
	int nr_old = old_roots->n, nr_new = new_roots->n;
	if (!nr_old && !nr_new)
		return 0;
	uint64_t seq = q->seq;
	qlist all = { .n = 0 };
	int visits = update_refcnt(q, old_roots, &all, seq, 0);
	visits += update_refcnt(q, new_roots, &all, seq, 1);
	int64_t nb = (int64_t)num_bytes;
	for (int i = 0; i < all.n; i++) {
		qgroup *g = all.q[i];
		uint64_t cur_old = get_refcnt(g->old_refcnt, seq);
		uint64_t cur_new = get_refcnt(g->new_refcnt, seq);
		if (cur_old == 0 && cur_new > 0)
			g->rfer += nb;
		if (cur_old > 0 && cur_new == 0)
			g->rfer -= nb;
		/* exclusive/none -> shared */
		if (cur_old == (uint64_t)nr_old && cur_new < (uint64_t)nr_new && cur_old)
			g->excl -= nb;
		/* shared -> exclusive/none */
		if (cur_old < (uint64_t)nr_old && cur_new == (uint64_t)nr_new && cur_new)
			g->excl += nb;
		/* exclusive/none -> exclusive/none */
		if (cur_old == (uint64_t)nr_old && cur_new == (uint64_t)nr_new) {
			if (cur_old == 0) {
				if (cur_new)
					g->excl += nb;
			} else if (cur_new == 0) {
				g->excl -= nb;
			}
		}
	}
	q->seq += (uint64_t)(nr_old > nr_new ? nr_old : nr_new) + 1;
	return visits;
}

/* ---- tracing --------------------------------------------------------- */

/*
 * Models btrfs_qgroup_trace_extent: insert a record for bytenr into the
 * running transaction unless one is there; a new record gets old_roots
 * from a backref walk (btrfs_qgroup_trace_extent_post). Charges the task
 * doing the change. Returns 0 inserted, 1 duplicate or not traced, <0.
 */
int qgroup_trace_extent(qgroup_ctx *q, uint64_t bytenr, uint64_t num_bytes, int src)
{
	if (!q->enabled)
		return 1;
	transaction *tr = trans_current(q->tm);
	if (!tr)
		return LAB_ENOMEM;
	if (dref_has_record(&tr->delayed_refs, bytenr)) {
		tr->delayed_refs.dup_inserts++;
		qg_charge(q, q->cur, QG_NS_TRACE_INSERT);
		q->last_insert_ns = QG_NS_TRACE_INSERT;
		return 1;
	}
	qg_record r;
	memset(&r, 0, sizeof r);
	r.bytenr = bytenr;
	r.num_bytes = num_bytes;
	r.src = (uint8_t)src;
	br_walk w;
	br_find_all_roots(&q->br, q->fs, bytenr, &r.old_roots, &w);
	int rc = dref_trace_extent(&tr->delayed_refs, &r);
	if (rc < 0)
		return rc;
	uint64_t ns = QG_NS_TRACE_INSERT + (uint64_t)w.nodes * QG_NS_BACKREF_NODE;
	qg_charge(q, q->cur, ns);
	q->last_insert_ns = ns;
	q->old_walk_nodes += w.nodes;
	q->old_walks++;
	q->rec_by_src[src < QREC_NSRC ? src : QREC_OTHER]++;
	SIM_REC(q->fs->sim, TK_QG_RECORD, q->cur, q->fs->rec_fs, (int64_t)bytenr,
		(int64_t)num_bytes, (int64_t)tr->delayed_refs.nr_dirty_extents);
	qgroup_sample(q, q->cur ? q->cur->clock : sim_now(q->fs->sim), 0);
	return rc;
}

/*
 * Sample the running transaction's nr_dirty_extents at `at` into the
 * bounded point list (and the sim series every 64th sample). force: keep
 * this point regardless of the stride (commit edges).
 */
void qgroup_sample(qgroup_ctx *q, simtime_t at, int force)
{
	if (!q->enabled)
		return;
	double v = q->tm->running ? (double)q->tm->running->delayed_refs.nr_dirty_extents : 0;
	if (!q->pstride)
		q->pstride = 1;
	if (!force && ++q->pskip < q->pstride)
		return;
	q->pskip = 0;
	if (q->npts == QG_MAX_POINTS) {
		for (int i = 0; i < QG_MAX_POINTS / 2; i++) {
			q->pt_t[i] = q->pt_t[2 * i];
			q->pt_v[i] = q->pt_v[2 * i];
		}
		q->npts = QG_MAX_POINTS / 2;
		q->pstride *= 2;
	}
	q->pt_t[q->npts] = (double)at / 1e9;
	q->pt_v[q->npts] = v;
	q->npts++;
	if (q->s_dirty >= 0 && (force || (q->npts & 63) == 0))
		sim_series_add(q->fs->sim, q->s_dirty, at, v);
}

/* Models btrfs_qgroup_trace_leaf_items (see qgroup.h). */
int qgroup_trace_leaf_items(qgroup_ctx *q, const bt_node *leaf)
{
	int src = q->in_subtree ? QREC_SUBTREE : QREC_DATA;
	for (int i = 0; i < leaf->nritems; i++) {
		const bt_item *it = &leaf->items[i];
		if (it->key.type != BTRFS_EXTENT_DATA_KEY || it->aux == FE_INLINE)
			continue;
		if (!it->v[0])
			continue; /* a hole */
		int rc = qgroup_trace_extent(q, it->v[0], fe_disk_len(it), src);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Recursive part of qgroup_trace_subtree. */
static int trace_subtree_rec(qgroup_ctx *q, const bt_node *blk)
{
	if (blk->level == 0)
		return qgroup_trace_leaf_items(q, blk);
	for (int i = 0; i < blk->nritems; i++) {
		const bt_node *c = blk->ptrs[i].child;
		int rc = qgroup_trace_extent(q, c->bytenr, BT_NODESIZE, QREC_SUBTREE);
		if (rc < 0)
			return rc;
		rc = trace_subtree_rec(q, c);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Models btrfs_qgroup_trace_subtree: the block itself is traced by the
 * caller's free of it; below it every block and every data extent is
 * traced, each with its own old_roots walk (the RFC's "hidden pitfall").
 */
int qgroup_trace_subtree(qgroup_ctx *q, const bt_node *blk)
{
	int was = q->in_subtree;
	q->in_subtree = 1;
	int rc = trace_subtree_rec(q, blk);
	q->in_subtree = was;
	return rc;
}

/* ---- hooks: the index always, records with quota on ------------------ */

/* Classify a tree-block record by where it happens. */
static int block_src(qgroup_ctx *q, bt_tree *tree, int level)
{
	if (q->in_subtree)
		return QREC_SUBTREE;
	if (q->dropping && tree->id == q->dropping)
		return level == 0 ? QREC_LEAF : QREC_NODE;
	return QREC_PARENT;
}

/* A new fs-tree block: traced (old_roots empty), then reachable from
 * its tree (btrfs_alloc_tree_block -> btrfs_add_delayed_tree_ref). */
static void hk_alloc(void *ctx, bt_tree *tree, uint64_t bytenr, int level, uint64_t owner)
{
	qgroup_ctx *q = ctx;
	if (!qgroup_is_fstree(tree->id))
		return;
	qgroup_trace_extent(q, bytenr, BT_NODESIZE, block_src(q, tree, level));
	br_ref(&q->br, bytenr, BT_NODESIZE, 1, level, tree->id, +1);
	br_set_height(&q->br, tree->id, bt_tree_height(tree));
}

/* A freed fs-tree block: traced with its roots, then unreachable from
 * its tree (btrfs_free_tree_block). */
static void hk_free(void *ctx, bt_tree *tree, uint64_t bytenr, int level, uint64_t owner)
{
	qgroup_ctx *q = ctx;
	if (!qgroup_is_fstree(tree->id))
		return;
	qgroup_trace_extent(q, bytenr, BT_NODESIZE, block_src(q, tree, level));
	br_ref(&q->br, bytenr, BT_NODESIZE, 1, level, tree->id, -1);
}

/* A COW frees the old block (btrfs_free_tree_block in __btrfs_cow_block,
 * also when the block stays shared); the new one came through hk_alloc. */
static void hk_cow(void *ctx, bt_tree *tree, uint64_t old_b, uint64_t new_b, int level)
{
	qgroup_ctx *q = ctx;
	if (!qgroup_is_fstree(tree->id))
		return;
	qgroup_trace_extent(q, old_b, BT_NODESIZE, block_src(q, tree, level));
	br_ref(&q->br, old_b, BT_NODESIZE, 1, level, tree->id, -1);
	br_set_height(&q->br, tree->id, bt_tree_height(tree));
	(void)new_b;
}

/* Whether inode ino of a live root still has a file extent item on
 * bytenr after one was dropped: the other half of a split extent keeps the
 * root reaching it (the index is a set per extent; the kernel's backref
 * walk would find that item). A host-side walk: nothing is charged. */
static int root_keeps_extent(qgroup_ctx *q, uint64_t root, uint64_t ino, uint64_t bytenr)
{
	if (root == q->dropping)
		return 0;
	struct btrfs_root *r = fs_root_lookup(q->fs, root);
	struct inode *in = r && !r->dead && r->tree.root ? fs_inode_get(r, ino) : NULL;
	if (!in)
		return 0;
	fs_info *fs = q->fs;
	fs->accounting_off++;
	fe_iter it;
	fe_info fe;
	int found = 0;
	int rc = fe_iter_first(fs, NULL, in, 0, &it, &fe);
	while (rc == 0 && !found) {
		found = fe.disk_bytenr == bytenr;
		rc = fe_iter_next(fs, &it, &fe);
	}
	fe_iter_end(&it);
	fs->accounting_off--;
	return found;
}

/* A data ref of an fs tree added or dropped: traced before the index
 * changes, so old_roots is the set before (btrfs_add_delayed_data_ref). */
static void hk_data(void *ctx, uint64_t root, uint64_t bytenr, uint64_t num_bytes,
		    uint64_t ino, uint64_t offset, int delta)
{
	qgroup_ctx *q = ctx;
	if (!qgroup_is_fstree(root))
		return;
	qgroup_trace_extent(q, bytenr, num_bytes, q->in_subtree ? QREC_SUBTREE : QREC_DATA);
	if (delta < 0 && root_keeps_extent(q, root, ino, bytenr))
		return;
	br_ref(&q->br, bytenr, num_bytes, 0, 0, root, delta);
}

/* Index what tree n (of root id) reaches: its blocks and the regular
 * data extents of its leaves. */
static void index_tree(qgroup_ctx *q, const bt_node *n, uint64_t root)
{
	br_ref(&q->br, n->bytenr, BT_NODESIZE, 1, n->level, root, +1);
	if (n->level) {
		for (int i = 0; i < n->nritems; i++)
			index_tree(q, n->ptrs[i].child, root);
		return;
	}
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type == BTRFS_EXTENT_DATA_KEY && it->aux != FE_INLINE && it->v[0])
			br_ref(&q->br, it->v[0], fe_disk_len(it), 0, 0, root, +1);
	}
}

/*
 * Set up qgroups over fs (quota off until qgroup_enable), register the
 * hooks, the accounting step of the commit and the invariant check;
 * index the trees that exist already.
 */
int qgroup_init(qgroup_ctx *q, fs_info *fs, trans_mgr *tm)
{
	memset(q, 0, sizeof *q);
	q->fs = fs;
	q->tm = tm;
	q->seq = 1;
	br_init(&q->br);
	q->s_dirty = sim_series_id(fs->sim, "dirty_extents");
	tm->account = qgroup_account_extents;
	tm->account_ctx = q;
	fs_hooks h;
	memset(&h, 0, sizeof h);
	h.ctx = q;
	h.on_alloc = hk_alloc;
	h.on_free = hk_free;
	h.on_cow = hk_cow;
	h.on_data_ref = hk_data;
	int rc = fs_hooks_register(fs, &h);
	if (rc)
		return rc;
	/* the trees made before the hooks (mkfs: the top subvolume's root
	 * leaf): the kernel's rescan finds them in the extent tree */
	for (int i = 0; i < fs->nroots; i++) {
		const struct btrfs_root *r = fs->roots[i];
		if (qgroup_is_fstree(r->id) && r->tree.root && !r->deleted) {
			index_tree(q, r->tree.root, r->id);
			br_set_height(&q->br, r->id, bt_tree_height(&r->tree));
		}
	}
	return check_register(fs, "qgroups", qgroup_check, q);
}

/* Free the qgroups, the index and the call log. */
void qgroup_destroy(qgroup_ctx *q)
{
	br_destroy(&q->br);
	free(q->qgs);
	free(q->calls);
	memset(q, 0, sizeof *q);
}

/* Models btrfs_quota_enable (see qgroup.h). */
int qgroup_enable(qgroup_ctx *q, task *t)
{
	for (int i = 0; i < q->fs->nroots; i++) {
		struct btrfs_root *r = q->fs->roots[i];
		if (!qgroup_is_fstree(r->id) || qgroup_find(q, qgroup_mkid(0, r->id)))
			continue;
		int rc = qgroup_create(q, qgroup_mkid(0, r->id));
		if (rc)
			return rc;
		br_set_height(&q->br, r->id, bt_tree_height(&r->tree));
	}
	q->enabled = 1;
	return 0;
}

/*
 * Models the rescan worker (qgroup_rescan_leaf over the extent tree): every
 * counter restarts at zero and each extent is accounted as if newly
 * referenced by the roots its backref walk finds. Charges t.
 */
int qgroup_rescan(qgroup_ctx *q, task *t)
{
	for (int i = 0; i < q->nqgs; i++) {
		q->qgs[i].rfer = q->qgs[i].excl = 0;
	}
	rootset none;
	memset(&none, 0, sizeof none);
	for (uint32_t i = 0; i < q->br.n; i++) {
		const br_ent *e = &q->br.ents[i];
		if (!e->roots.n)
			continue;
		rootset roots;
		br_walk w;
		br_find_all_roots(&q->br, q->fs, e->bytenr, &roots, &w);
		int v = qgroup_account_extent(q, e->num_bytes, &none, &roots);
		qg_charge(q, t, (uint64_t)w.nodes * QG_NS_BACKREF_NODE +
				(uint64_t)v * QG_NS_QGROUP_UPDATE);
	}
	return 0;
}

/*
 * Models btrfs_qgroup_account_extents (as the RFC leaves it): read the
 * counter, then for each record in bytenr order find new_roots, account
 * the extent, free the record and decrement nr_dirty_extents; the counter
 * ends at 0. Logs the call (records, duration). Returns records or <0.
 */
int qgroup_account_extents(void *ctx, transaction *trans, task *t)
{
	qgroup_ctx *q = ctx;
	delayed_ref_root *d = &trans->delayed_refs;
	if (!q->enabled && !d->nrecs)
		return 0;
	simtime_t start = t ? t->clock : sim_now(q->fs->sim);
	uint64_t cpu0 = q->fs->cpu_untasked_ns;
	int64_t num_dirty_extents = d->nr_dirty_extents;
	uint64_t walk_nodes = 0;
	qgroup_sample(q, start, 1);
	dref_records_sort(d);
	for (uint32_t i = 0; i < d->nrecs; i++) {
		const qg_record *r = &d->recs[i];
		rootset new_roots;
		br_walk w;
		br_find_all_roots(&q->br, q->fs, r->bytenr, &new_roots, &w);
		walk_nodes += w.nodes;
		int v = qgroup_account_extent(q, r->num_bytes, &r->old_roots, &new_roots);
		qg_charge(q, t, QG_NS_RECORD_FIXED + (uint64_t)w.nodes * QG_NS_BACKREF_NODE +
				(uint64_t)v * QG_NS_QGROUP_UPDATE);
		d->nr_dirty_extents--; /* atomic64_dec(&delayed_refs->nr_dirty_extents) */
	}
	uint32_t n = d->nrecs;
	dref_records_clear(d); /* asserts the counter is back to 0 */
	qgroup_sample(q, t ? t->clock : start, 1);
	if (q->ncalls == q->ccap) {
		int nc = q->ccap ? q->ccap * 2 : 16;
		qg_call *nn = lab_realloc(q->calls, (size_t)nc * sizeof *nn);
		if (!nn)
			return LAB_ENOMEM;
		q->calls = nn;
		q->ccap = nc;
	}
	qg_call *c = &q->calls[q->ncalls++];
	c->transid = trans->transid;
	c->records = (uint64_t)num_dirty_extents;
	c->start = start;
	c->ns = t ? t->clock - start : q->fs->cpu_untasked_ns - cpu0;
	c->walk_nodes = walk_nodes;
	return (int)n;
}

/*
 * Invariant: with no records pending, each level-0 qgroup's rfer is the
 * bytes of extents its root reaches and excl the bytes only it reaches,
 * as the index says. Returns the failures found.
 */
int qgroup_check(fs_info *fs, void *ctx)
{
	if (fs->check_incr)
		return 0; /* sums over every extent: the full checks' (check.h) */
	qgroup_ctx *q = ctx;
	if (!q->enabled)
		return 0;
	if (q->tm->running && q->tm->running->delayed_refs.nrecs)
		return 0; /* accounting is due at the next commit */
	/* one pass over the index, summing into each root's qgroup */
	int64_t (*sum)[2] = lab_calloc((size_t)q->nqgs + 1, sizeof *sum);
	if (!sum) {
		check_report(fs, "qgroup check: out of memory");
		return 1;
	}
	for (uint32_t i = 0; i < q->br.n; i++) {
		const br_ent *e = &q->br.ents[i];
		for (int k = 0; k < e->roots.n; k++) {
			const qgroup *qg = qgroup_find(q, e->roots.id[k]);
			if (!qg)
				continue;
			sum[qg - q->qgs][0] += (int64_t)e->num_bytes;
			if (e->roots.n == 1)
				sum[qg - q->qgs][1] += (int64_t)e->num_bytes;
		}
	}
	int fails = 0;
	for (int g = 0; g < q->nqgs; g++) {
		qgroup *qg = &q->qgs[g];
		if (qg->id >> 48)
			continue;
		int64_t rfer = sum[g][0], excl = sum[g][1];
		if (rfer != qg->rfer || excl != qg->excl) {
			check_report(fs, "qgroup 0/%llu: rfer %lld excl %lld, extents say %lld %lld",
				     (unsigned long long)qg->id, (long long)qg->rfer,
				     (long long)qg->excl, (long long)rfer, (long long)excl);
			fails++;
		}
	}
	free(sum);
	return fails;
}
