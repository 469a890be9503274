/*
 * check_more.c - checks over qgroups, the log tree, transaction handles
 * and send/receive (check_more.h). Host-side walks of the bt_node
 * structures: no simulated time is charged and no node visit counted.
 */
#include <stdlib.h>
#include <string.h>

#include "check_more.h"
#include "items.h"
#include "lab.h"
#include "space_fs.h"
#include "vfs.h"
#include "vfs_data.h"
#include "vfs_io.h"
#include "labmem.h"

/* ---- qgroups: a recount from the trees --------------------------------- */

typedef struct qref {
	uint64_t bytenr, num_bytes, root;
} qref;

typedef struct qrefs {
	qref *v;
	size_t n, cap;
	int oom;
} qrefs;

/* Append one (extent, root) reference; sets oom on failure. */
static void qrefs_push(qrefs *a, uint64_t bytenr, uint64_t num_bytes, uint64_t root)
{
	if (a->oom)
		return;
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 1024;
		qref *nv = lab_realloc(a->v, cap * sizeof(*nv));
		if (!nv) {
			a->oom = 1;
			return;
		}
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = (qref){ bytenr, num_bytes, root };
}

/* Every block under (and including) n and every data extent its leaves
 * point at, as references from root. */
static void qrefs_tree(qrefs *a, const bt_node *n, uint64_t root)
{
	qrefs_push(a, n->bytenr, BT_NODESIZE, root);
	if (n->level) {
		/* a deleted subvolume's pointers that the drop has been through
		 * are gone (check_fs judges where one may be missing) */
		for (int i = 0; i < n->nritems; i++)
			if (n->ptrs[i].child)
				qrefs_tree(a, n->ptrs[i].child, root);
		return;
	}
	for (int i = 0; i < n->nritems; i++) {
		const bt_item *it = &n->items[i];
		if (it->key.type != BTRFS_EXTENT_DATA_KEY || it->aux == FE_INLINE || !it->v[0])
			continue;
		qrefs_push(a, it->v[0], fe_disk_len(it), root);
	}
}

/* Order references by extent, then root. */
static int qref_cmp(const void *x, const void *y)
{
	const qref *a = x, *b = y;
	if (a->bytenr != b->bytenr)
		return a->bytenr < b->bytenr ? -1 : 1;
	if (a->root != b->root)
		return a->root < b->root ? -1 : 1;
	return 0;
}

typedef struct qsum {
	uint64_t root;
	int64_t rfer, excl;
} qsum;

/* The sums of root, appended when new (s has room for every root). */
static qsum *qsum_get(qsum *s, int *n, uint64_t root)
{
	for (int i = 0; i < *n; i++)
		if (s[i].root == root)
			return &s[i];
	s[*n] = (qsum){ root, 0, 0 };
	return &s[(*n)++];
}

/*
 * Recount rfer/excl of every level-0 qgroup from the live subvolume trees
 * and compare (models what `btrfs check --qgroup-report` does). Skipped
 * while records wait for the next commit's accounting. Returns failures.
 */
int check_qgroup_recount(fs_info *fs, void *ctx)
{
	qgroup_ctx *q = ctx;
	if (!q->enabled || fs->check_incr)
		return 0; /* a recount walks every tree: the full checks' (check.h) */
	if (q->tm->running && q->tm->running->delayed_refs.nrecs)
		return 0;
	qrefs a;
	memset(&a, 0, sizeof a);
	int nfs = 0;
	for (int i = 0; i < fs->nroots; i++) {
		const struct btrfs_root *r = fs->roots[i];
		if (!qgroup_is_fstree(r->id) || r->deleted || !r->tree.root)
			continue;
		nfs++;
		qrefs_tree(&a, r->tree.root, r->id);
	}
	if (a.oom) {
		free(a.v);
		check_report(fs, "qgroup recount: out of memory");
		return 1;
	}
	qsort(a.v, a.n, sizeof *a.v, qref_cmp);
	qsum *sums = lab_calloc((size_t)nfs + 1, sizeof *sums);
	if (!sums) {
		free(a.v);
		check_report(fs, "qgroup recount: out of memory");
		return 1;
	}
	int nsums = 0, fails = 0;
	for (size_t i = 0; i < a.n;) {
		size_t j = i, nroots = 0;
		/* the roots reaching this extent, each once */
		while (j < a.n && a.v[j].bytenr == a.v[i].bytenr) {
			if (j == i || a.v[j].root != a.v[j - 1].root)
				nroots++;
			if (a.v[j].num_bytes != a.v[i].num_bytes && fails++ < 4)
				check_report(fs, "qgroup recount: extent %llu has lengths %llu and %llu",
					     (unsigned long long)a.v[i].bytenr,
					     (unsigned long long)a.v[i].num_bytes,
					     (unsigned long long)a.v[j].num_bytes);
			j++;
		}
		for (size_t k = i; k < j; k++) {
			if (k > i && a.v[k].root == a.v[k - 1].root)
				continue;
			qsum *s = qsum_get(sums, &nsums, a.v[k].root);
			s->rfer += (int64_t)a.v[i].num_bytes;
			if (nroots == 1)
				s->excl += (int64_t)a.v[i].num_bytes;
		}
		i = j;
	}
	for (int g = 0; g < q->nqgs; g++) {
		const qgroup *qg = &q->qgs[g];
		if (qg->id >> 48)
			continue;
		int64_t rfer = 0, excl = 0;
		for (int s = 0; s < nsums; s++)
			if (sums[s].root == qg->id) {
				rfer = sums[s].rfer;
				excl = sums[s].excl;
			}
		if (rfer != qg->rfer || excl != qg->excl) {
			check_report(fs, "qgroup 0/%llu: rfer %lld excl %lld, a recount of the trees says %lld %lld",
				     (unsigned long long)qg->id, (long long)qg->rfer,
				     (long long)qg->excl, (long long)rfer, (long long)excl);
			fails++;
		}
	}
	/* every subvolume tree has its qgroup */
	for (int s = 0; s < nsums; s++)
		if (!qgroup_find(q, qgroup_mkid(0, sums[s].root))) {
			check_report(fs, "subvolume %llu has no qgroup", (unsigned long long)sums[s].root);
			fails++;
		}
	free(sums);
	free(a.v);
	return fails;
}

/* Register check_qgroup_recount on fs. */
int check_more_qgroups(fs_info *fs, qgroup_ctx *q)
{
	if (!fs || !q)
		return LAB_EINVAL;
	return check_register(fs, "qgroup-recount", check_qgroup_recount, q);
}

/* ---- space counters -------------------------------------------------------- */

/* Set bits of a block group's bitmap (allocated or pinned sectors). */
static uint64_t bg_bits(const block_group *bg)
{
	uint64_t n = 0, words = (bg->length / ALLOC_SECTOR + 63) / 64;
	for (uint64_t w = 0; w < words; w++)
		n += (uint64_t)__builtin_popcountll(bg->bitmap[w]);
	return n;
}

/*
 * The reservation side of the space_infos (space_fs.h): each space_info
 * mirrors the allocator (total, used, reserved, pinned); bytes_may_use is
 * exactly what the holders hold (inodes, open handles, granted tickets);
 * no inode holds more than its data path state needs (data: its delalloc
 * bytes; metadata: the rsv size of its outstanding extents and csum
 * bytes), so once everything is written back and no one waits may_use is
 * 0; and the ticket queues are well formed (space_check). Returns
 * failures.
 */
/* What d holds in bytes_may_use of kind. */
static uint64_t inode_holds(const dinode *d, int kind)
{
	return kind == SPACE_DATA ? d->sp_data_held : d->sp_rsv.rsv.reserved;
}

/*
 * The checker's sums of what the inodes hold (dfs chk_held, chk_listed):
 * a full check counts every inode; an incremental one (check.h) moves the
 * sums by what each inode touched since the last check now holds more or
 * less than it was counted holding (an evicted inode left them as it
 * went: dfs_inode_evict). Returns 1 when incremental.
 */
static int count_holders(fs_info *fs, dfs *df)
{
	int incr = fs->check_incr && df->chk_counted && !df->chk_lost;
	if (!incr)
		df->chk_held[0] = df->chk_held[1] = df->chk_listed = 0;
	dinode *const *all = incr ? NULL : dfs_inodes(df);
	int n = incr ? df->chk_n : df->ninodes;
	for (int i = 0; i < n; i++) {
		dinode *d = incr ? df->chk_list[i] : all[i];
		for (int k = 0; k < SPACE_KINDS; k++) {
			df->chk_held[k] += inode_holds(d, k) - (incr ? d->chk_held[k] : 0);
			d->chk_held[k] = inode_holds(d, k);
		}
		df->chk_listed += (uint64_t)d->sp_on_list - (incr ? (uint64_t)d->chk_listed : 0);
		d->chk_listed = d->sp_on_list;
	}
	df->chk_counted = 1;
	return incr;
}

static int check_space_reservations(fs_info *fs)
{
	static const int akind[SPACE_KINDS] = {ALLOC_DATA, ALLOC_METADATA};
	static const char *const kname[SPACE_KINDS] = {"data", "metadata"};
	const alloc_ctl *a = &fs->alloc;
	space_ctl *sc = &fs->space;
	int fails = 0;
	dfs *df = vio_dfs(fs);
	int incr = df ? count_holders(fs, df) : 0;
	for (int k = 0; k < SPACE_KINDS; k++) {
		const space_info *si = &sc->info[k];
		int ak = akind[k];
		if (si->total_bytes != a->total[ak] || si->bytes_used != a->used[ak] ||
		    si->bytes_reserved != a->reserved[ak] || si->bytes_pinned != a->pinned_bytes[ak]) {
			check_report(fs, "space_info %s: total %llu used %llu reserved %llu pinned %llu, allocator %llu %llu %llu %llu",
				     kname[k], (unsigned long long)si->total_bytes,
				     (unsigned long long)si->bytes_used,
				     (unsigned long long)si->bytes_reserved,
				     (unsigned long long)si->bytes_pinned,
				     (unsigned long long)a->total[ak], (unsigned long long)a->used[ak],
				     (unsigned long long)a->reserved[ak],
				     (unsigned long long)a->pinned_bytes[ak]);
			fails++;
		}
		uint64_t held = df ? df->chk_held[k] + fs_space_held_others(fs, k)
				   : fs_space_held(fs, k);
		if (si->bytes_may_use != held) {
			check_report(fs, "space_info %s: bytes_may_use %llu, holders hold %llu",
				     kname[k], (unsigned long long)si->bytes_may_use,
				     (unsigned long long)held);
			fails++;
		}
	}
	dinode *const *all = df && !incr ? dfs_inodes(df) : NULL;
	int n = !df ? 0 : incr ? df->chk_n : df->ninodes;
	for (int i = 0; i < n; i++) {
		const dinode *d = incr ? df->chk_list[i] : all[i];
		/* on the delalloc lists exactly while it has delalloc */
		if (d->sp_on_list != (d->delalloc_bytes > 0 && !d->sp_gone)) {
			if (fails++ < 8)
				check_report(fs, "inode %llu: on the delalloc list %d with %llu delalloc bytes",
					     (unsigned long long)d->ino, d->sp_on_list,
					     (unsigned long long)d->delalloc_bytes);
		}
		inode_rsv need = d->sp_rsv;
		uint64_t ordered = 0;
		for (uint64_t j = 0; j < vd_oe_n(d); j++)
			ordered += d->x->oe.v[j].len;
		need.outstanding_extents = (uint32_t)vd_outstanding(d);
		need.csum_bytes = d->delalloc_bytes + ordered;
		uint64_t size = space_inode_rsv_size(sc, &need);
		if (d->sp_data_held > d->delalloc_bytes || d->sp_rsv.rsv.reserved > size ||
		    ordered != vd_ordered_bytes(d) ||
		    (d->sp_gone && (d->sp_data_held || d->sp_rsv.rsv.reserved))) {
			if (fails++ < 8)
				check_report(fs, "inode %llu: holds data %llu meta %llu for delalloc %llu, rsv size %llu, ordered %llu (counted %llu)",
					     (unsigned long long)d->ino,
					     (unsigned long long)d->sp_data_held,
					     (unsigned long long)d->sp_rsv.rsv.reserved,
					     (unsigned long long)d->delalloc_bytes,
					     (unsigned long long)size, (unsigned long long)ordered,
					     (unsigned long long)vd_ordered_bytes(d));
		}
	}
	if (df && df->chk_listed != fs_space_listed(fs)) {
		check_report(fs, "delalloc lists: %llu inodes counted, %llu listed",
			     (unsigned long long)fs_space_listed(fs),
			     (unsigned long long)df->chk_listed);
		fails++;
	}
	fails += space_check(fs, sc);
	return fails;
}

/*
 * The space counters (what btrfs keeps per space_info: total, used,
 * reserved, pinned) equal the sums over the block groups of each kind;
 * in each block group used + reserved + pinned fits its length and equals
 * the sectors its bitmap marks. Returns failures.
 */
int check_space_counters(fs_info *fs, void *ctx)
{
	(void)ctx;
	const alloc_ctl *a = &fs->alloc;
	uint64_t total[ALLOC_KINDS] = { 0 }, used[ALLOC_KINDS] = { 0 };
	uint64_t rsv[ALLOC_KINDS] = { 0 }, pinned[ALLOC_KINDS] = { 0 };
	int fails = 0;
	for (int i = 0; i < a->nbgs; i++) {
		const block_group *bg = &a->bgs[i];
		total[bg->kind] += bg->length;
		used[bg->kind] += bg->used;
		rsv[bg->kind] += bg->reserved;
		pinned[bg->kind] += bg->pinned;
		uint64_t busy = bg->used + bg->reserved + bg->pinned;
		if (busy > bg->length || busy != bg_bits(bg) * ALLOC_SECTOR) {
			if (fails++ < 4)
				check_report(fs, "block group %llu: used %llu reserved %llu pinned %llu, bitmap %llu of %llu",
					     (unsigned long long)bg->start, (unsigned long long)bg->used,
					     (unsigned long long)bg->reserved, (unsigned long long)bg->pinned,
					     (unsigned long long)(bg_bits(bg) * ALLOC_SECTOR),
					     (unsigned long long)bg->length);
		}
	}
	for (int k = 0; k < ALLOC_KINDS; k++) {
		if (total[k] != a->total[k] || used[k] != a->used[k] || rsv[k] != a->reserved[k] ||
		    pinned[k] != a->pinned_bytes[k]) {
			check_report(fs, "space %s: total %llu used %llu reserved %llu pinned %llu, block groups say %llu %llu %llu %llu",
				     k == ALLOC_DATA ? "data" : "metadata",
				     (unsigned long long)a->total[k], (unsigned long long)a->used[k],
				     (unsigned long long)a->reserved[k], (unsigned long long)a->pinned_bytes[k],
				     (unsigned long long)total[k], (unsigned long long)used[k],
				     (unsigned long long)rsv[k], (unsigned long long)pinned[k]);
			fails++;
		}
	}
	/* the space_infos mirror the allocator: compared only once the
	 * allocator agrees with its block groups (one fault, one report) */
	if (!fails && fs->space_on)
		fails += check_space_reservations(fs);
	else if (fs->space_on && vio_dfs(fs))
		vio_dfs(fs)->chk_counted = 0; /* not counted: recount next time */
	return fails;
}

/* Register check_space_counters on fs. */
int check_more_space(fs_info *fs)
{
	if (!fs)
		return LAB_EINVAL;
	return check_register(fs, "space-counters", check_space_counters, NULL);
}

/* ---- the log tree ------------------------------------------------------- */

/* No fsync inside a log transaction, no log commit in progress (the state
 * every commit should find once its writers have left). */
int check_treelog_idle(fs_info *fs, void *ctx)
{
	treelog *tl = ctx;
	int fails = 0;
	if (fs->check_midrun)
		return 0; /* fsyncs may be inside a log transaction between steps */
	for (int i = 0; i < tl->nroots; i++) {
		const tl_root *lr = &tl->roots[i];
		if (lr->log_writers || lr->committing) {
			check_report(fs, "log of root %llu: %d writers, committing %d",
				     (unsigned long long)lr->root_id, lr->log_writers, lr->committing);
			fails++;
		}
	}
	return fails;
}

/* Register check_treelog_idle on fs. */
int check_more_treelog(fs_info *fs, treelog *tl)
{
	if (!fs || !tl)
		return LAB_EINVAL;
	return check_register(fs, "treelog", check_treelog_idle, tl);
}

/* ---- transaction handles ------------------------------------------------ */

/* Handles started minus ended = writers of the running transaction. */
int check_trans_handles(fs_info *fs, void *ctx)
{
	trans_mgr *tm = ctx;
	uint64_t open = tm->handles_started - tm->handles_ended;
	uint64_t writers = tm->running ? (uint64_t)tm->running->num_writers : 0;
	if (tm->handles_ended > tm->handles_started || open != writers) {
		check_report(fs, "transaction handles: %llu started, %llu ended, %llu writers",
			     (unsigned long long)tm->handles_started,
			     (unsigned long long)tm->handles_ended, (unsigned long long)writers);
		return 1;
	}
	return 0;
}

/* Register check_trans_handles on fs. */
int check_more_handles(fs_info *fs, trans_mgr *tm)
{
	if (!fs || !tm)
		return LAB_EINVAL;
	return check_register(fs, "trans-handles", check_trans_handles, tm);
}

/* ---- send / receive ------------------------------------------------------ */

/* What a tree says about one inode. */
typedef struct sino {
	uint64_t ino, size, parent;
	uint32_t mode;
	uint64_t (*ext)[2]; /* [file offset, bytes] */
	uint32_t next, ecap;
} sino;

typedef struct sset {
	sino *v;
	size_t n, cap;
	int oom;
} sset;

/* Free the collected inodes. */
static void sset_free(sset *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].ext);
	free(s->v);
}

/* Collect the inodes of a subtree in key order (so v is sorted by ino). */
static void sset_walk(sset *s, const bt_node *n)
{
	if (n->level) {
		for (int i = 0; i < n->nritems; i++)
			sset_walk(s, n->ptrs[i].child);
		return;
	}
	for (int i = 0; i < n->nritems && !s->oom; i++) {
		const bt_item *it = &n->items[i];
		uint64_t oid = it->key.objectid;
		if (oid < BTRFS_FIRST_FREE_OBJECTID || oid > BTRFS_LAST_FREE_OBJECTID)
			continue;
		if (it->key.type == BTRFS_INODE_ITEM_KEY) {
			if (s->n == s->cap) {
				size_t cap = s->cap ? s->cap * 2 : 64;
				sino *nv = lab_realloc(s->v, cap * sizeof(*nv));
				if (!nv) {
					s->oom = 1;
					return;
				}
				s->v = nv;
				s->cap = cap;
			}
			sino *si = &s->v[s->n++];
			memset(si, 0, sizeof *si);
			si->ino = oid;
			si->size = it->v[0];
			si->mode = it->aux;
			continue;
		}
		sino *cur = s->n ? &s->v[s->n - 1] : NULL;
		if (!cur || cur->ino != oid)
			continue;
		if (it->key.type == BTRFS_INODE_REF_KEY && !cur->parent) {
			cur->parent = it->key.offset;
		} else if (it->key.type == BTRFS_EXTENT_DATA_KEY) {
			if (cur->next == cur->ecap) {
				uint32_t cap = cur->ecap ? cur->ecap * 2 : 4;
				uint64_t (*e)[2] = lab_realloc(cur->ext, cap * sizeof(*e));
				if (!e) {
					s->oom = 1;
					return;
				}
				cur->ext = e;
				cur->ecap = cap;
			}
			cur->ext[cur->next][0] = it->key.offset;
			cur->ext[cur->next][1] = it->v[1];
			cur->next++;
		}
	}
}

static const sino *sset_find(const sset *s, uint64_t ino)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->n && s->v[lo].ino == ino ? &s->v[lo] : NULL;
}

/* Order [lo, hi) pairs by lo. */
static int u64pair_cmp(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The 4 KiB pages of [0, size) an inode's extents cover, as merged
 * [lo, hi) page ranges written to out (sorted); returns the count or -1. */
static int page_ranges(const sino *si, uint64_t (*out)[2])
{
	int n = 0;
	for (uint32_t e = 0; e < si->next; e++) {
		uint64_t lo = si->ext[e][0], hi = lo + si->ext[e][1];
		if (hi > si->size)
			hi = si->size;
		if (lo >= hi)
			continue;
		out[n][0] = lo / SECTORSIZE;
		out[n][1] = (hi + SECTORSIZE - 1) / SECTORSIZE;
		n++;
	}
	if (n > 1)
		qsort(out, (size_t)n, sizeof *out, u64pair_cmp);
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m && out[i][0] <= out[m - 1][1]) {
			if (out[i][1] > out[m - 1][1])
				out[m - 1][1] = out[i][1];
		} else {
			out[m][0] = out[i][0];
			out[m][1] = out[i][1];
			m++;
		}
	}
	return m;
}

/* Compare the received subvolume with the snapshot; see check_more.h. */
int check_send_received(fs_info *src, struct btrfs_root *snap, recv_ctx *r,
			send_name_fn name_of, void *name_ctx)
{
	sset a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (snap->tree.root)
		sset_walk(&a, snap->tree.root);
	if (r->root->tree.root)
		sset_walk(&b, r->root->tree.root);
	int fails = 0;
	uint64_t (*pa)[2] = NULL, (*pb)[2] = NULL;
	if (a.oom || b.oom) {
		check_report(src, "send compare: out of memory");
		fails++;
		goto out;
	}
	if (a.n != b.n) {
		check_report(src, "send: %zu inodes in the snapshot, %zu received", a.n, b.n);
		fails++;
	}
	r->fs->accounting_off++;
	for (size_t i = 0; i < a.n && fails < 8; i++) {
		const sino *s = &a.v[i];
		if (s->ino == BTRFS_FIRST_FREE_OBJECTID)
			continue;
		rcv_ino *ri = recv_lookup(r, s->ino);
		rcv_ino *rp = recv_lookup(r, s->parent);
		const sino *d = ri ? sset_find(&b, ri->dst) : NULL;
		if (!d || !rp) {
			check_report(src, "send: inode %llu not received", (unsigned long long)s->ino);
			fails++;
			continue;
		}
		char name[VFS_NAME_MAX + 1];
		uint64_t found = 0;
		int rc = name_of(name_ctx, s->ino, s->parent, name, sizeof name);
		if (!rc)
			rc = vfs_lookup(r->fs, NULL, r->root, rp->dst, name, &found);
		if (rc || found != d->ino || d->parent != rp->dst) {
			check_report(src, "send: inode %llu (%s) not at its name on the receiver",
				     (unsigned long long)s->ino, rc ? lab_strerror(rc) : name);
			fails++;
			continue;
		}
		if ((s->mode & S_IFMT_) != (d->mode & S_IFMT_) || s->size != d->size) {
			check_report(src, "send: inode %llu mode %o size %llu, received %o %llu",
				     (unsigned long long)s->ino, s->mode, (unsigned long long)s->size,
				     d->mode, (unsigned long long)d->size);
			fails++;
			continue;
		}
		if ((s->mode & S_IFMT_) == S_IFDIR_)
			continue;
		/* the trees compared below are the whole truth only once the
		 * received data went through writeback */
		const dinode *io = ri->inode ? ri->inode->io : NULL;
		if (io && !vd_clean(io)) {
			check_report(src, "send: inode %llu received but not written back "
				     "(%llu dirty pages, %llu ordered extents)",
				     (unsigned long long)s->ino, (unsigned long long)io->pc.dirty,
				     (unsigned long long)vd_oe_n(io));
			fails++;
		}
		free(pa);
		free(pb);
		pa = lab_malloc(((size_t)s->next + 1) * sizeof *pa);
		pb = lab_malloc(((size_t)d->next + 1) * sizeof *pb);
		if (!pa || !pb) {
			check_report(src, "send compare: out of memory");
			fails++;
			break;
		}
		int na = page_ranges(s, pa), nb = page_ranges(d, pb);
		int same = na == nb;
		for (int k = 0; same && k < na; k++)
			same = pa[k][0] == pb[k][0] && pa[k][1] == pb[k][1];
		if (!same) {
			check_report(src, "send: inode %llu data covers %d page ranges, received %d (or differently)",
				     (unsigned long long)s->ino, na, nb);
			fails++;
		}
	}
	r->fs->accounting_off--;
out:
	free(pa);
	free(pb);
	sset_free(&a);
	sset_free(&b);
	return fails;
}
