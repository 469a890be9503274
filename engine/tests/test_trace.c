/*
 * test_trace.c - a recorded run (sim.h "Recording", lab_record):
 *   - complete: replaying the tree events of a run rebuilds every tree of
 *     its file system block for block (level, items, generation, children,
 *     root); every block whose generation changed was COWed or allocated
 *     in the trace, every COW made a block of the running transaction;
 *     every lock taken is released, none twice;
 *   - free: each experiment's result is byte-identical with and without
 *     recording, with a window or the whole run;
 *   - bounded: a window keeps max_events and says what it left out.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "exp.h"
#include "fs.h"
#include "lab.h"
#include "sim.h"
#include "t.h"
#include "t_lab.h"

/* ---- a replay of the tree events (what web/model/replay.ts does) ---- */

typedef struct rblk {
	int64_t fs, bytenr;
	int level, nritems, dead, born;
	int64_t gen;
	int64_t *kids;
	int nkids, capkids;
} rblk;

typedef struct replay {
	rblk *b;
	size_t cap, n;
	int64_t tree_fs[256], tree_id[256], tree_root[256];
	int tree_gone[256];
	/* held locks: (fs, bytenr, task, mode) */
	struct { int64_t fs, bytenr; int task, mode; } held[4096];
	int nheld;
	int bad_unlock, cows, cow_gen_bad, commits;
	int64_t own_cow;
	int64_t transid[16]; /* per fs: the running transaction */
} replay;

static size_t hash(int64_t fs, int64_t b)
{
	uint64_t x = (uint64_t)b * 0x9e3779b97f4a7c15ull ^ (uint64_t)fs;
	return (size_t)(x ^ (x >> 29));
}

static rblk *rfind(replay *r, int64_t fs, int64_t b, int create)
{
	if (create && (r->n + 1) * 2 > r->cap) {
		size_t oc = r->cap;
		rblk *old = r->b;
		r->cap = oc ? oc * 2 : 1024;
		r->b = calloc(r->cap, sizeof *r->b);
		r->n = 0;
		for (size_t i = 0; i < oc; i++)
			if (old[i].bytenr) {
				rblk *d = rfind(r, old[i].fs, old[i].bytenr, 1);
				*d = old[i];
			}
		free(old);
	}
	if (!r->cap)
		return NULL;
	for (size_t i = hash(fs, b) & (r->cap - 1);; i = (i + 1) & (r->cap - 1)) {
		if (r->b[i].bytenr == b && r->b[i].fs == fs)
			return &r->b[i];
		if (!r->b[i].bytenr) {
			if (!create)
				return NULL;
			r->b[i].bytenr = b;
			r->b[i].fs = fs;
			r->n++;
			return &r->b[i];
		}
	}
}

static void kids_insert(rblk *p, int slot, int64_t child)
{
	if (p->nkids == p->capkids) {
		p->capkids = p->capkids ? p->capkids * 2 : 8;
		p->kids = realloc(p->kids, (size_t)p->capkids * sizeof *p->kids);
	}
	if (slot > p->nkids)
		slot = p->nkids;
	memmove(&p->kids[slot + 1], &p->kids[slot], (size_t)(p->nkids - slot) * sizeof *p->kids);
	p->kids[slot] = child;
	p->nkids++;
}

static void kids_remove(rblk *p, int slot)
{
	if (slot >= p->nkids)
		return;
	memmove(&p->kids[slot], &p->kids[slot + 1], (size_t)(p->nkids - slot - 1) * sizeof *p->kids);
	p->nkids--;
}

static void lock_rename(replay *r, int64_t fs, int64_t from, int64_t to)
{
	for (int i = 0; i < r->nheld; i++)
		if (r->held[i].fs == fs && r->held[i].bytenr == from)
			r->held[i].bytenr = to;
}

static void apply(replay *r, const sim_rec_ev *e, int dumping)
{
	const int64_t *a = e->a;
	int64_t fs = e->kind == TK_TREE ? a[1] : (a[0] > 0 && a[0] < 256 ? r->tree_fs[a[0]] : 0);
	switch (e->kind) {
	case TK_TREE:
		r->tree_fs[a[0]] = a[1];
		r->tree_id[a[0]] = a[2];
		r->tree_gone[a[0]] = 0;
		break;
	case TK_ROOT:
		r->tree_root[a[0]] = a[1];
		break;
	case TK_BLK: {
		rblk *b = rfind(r, fs, a[1], 1);
		if (!dumping && (b->dead || b->gen != a[5]))
			b->born = 1;
		b->level = (int)a[2];
		b->nritems = (int)a[3];
		b->gen = a[5];
		b->dead = 0;
		break;
	}
	case TK_LINK:
		kids_insert(rfind(r, fs, a[1], 1), (int)a[2], a[3]);
		break;
	case TK_UNLINK:
		kids_remove(rfind(r, fs, a[1], 1), (int)a[2]);
		break;
	case TK_MOVE: {
		rblk *src = rfind(r, fs, a[1], 1), *dst = rfind(r, fs, a[2], 1);
		int n = (int)a[3];
		if (!src->level || n <= 0)
			break; /* leaves: the blk events that follow carry the counts */
		if (a[4] == 0)
			for (int i = 0; i < n; i++) {
				kids_insert(dst, dst->nkids, src->kids[0]);
				kids_remove(src, 0);
			}
		else
			for (int i = 0; i < n; i++) {
				kids_insert(dst, 0, src->kids[src->nkids - 1]);
				kids_remove(src, src->nkids - 1);
			}
		break;
	}
	case TK_COW: {
		rblk *old = rfind(r, fs, a[1], 1);
		int64_t oldgen = old->gen;
		rblk *nw = rfind(r, fs, a[2], 1);
		old = rfind(r, fs, a[1], 0); /* the table may have grown */
		nw->level = old->level;
		nw->nkids = 0;
		for (int i = 0; i < old->nkids; i++)
			kids_insert(nw, i, old->kids[i]);
		nw->born = 1;
		if (a[3]) {
			rblk *p = rfind(r, fs, a[3], 1);
			for (int i = 0; i < p->nkids; i++)
				if (p->kids[i] == a[1])
					p->kids[i] = a[2];
		} else {
			r->tree_root[a[0]] = a[2];
		}
		lock_rename(r, fs, a[1], a[2]);
		r->cows++;
		/* a block is COWed once per transaction: one of the running
		 * transaction only when shared (a snapshot took it), and then
		 * it is not freed */
		r->own_cow = fs < 16 && r->transid[fs] && oldgen >= r->transid[fs] ? a[1] : 0;
		break;
	}
	case TK_FREE:
		rfind(r, fs, a[1], 1)->dead = 1;
		if (r->own_cow == a[1])
			r->cow_gen_bad++;
		break;
	case TK_TREE_END:
		r->tree_gone[a[0]] = 1;
		break;
	case TK_LOCK:
		if (r->nheld < 4096) {
			r->held[r->nheld].fs = fs;
			r->held[r->nheld].bytenr = a[1];
			r->held[r->nheld].task = e->task;
			r->held[r->nheld].mode = (int)a[2];
			r->nheld++;
		}
		break;
	case TK_UNLOCK: {
		int i;
		for (i = r->nheld - 1; i >= 0; i--)
			if (r->held[i].fs == fs && r->held[i].bytenr == a[1] &&
			    r->held[i].task == e->task && r->held[i].mode == a[2])
				break;
		if (i < 0) {
			r->bad_unlock++;
			break;
		}
		r->held[i] = r->held[--r->nheld];
		break;
	}
	case TK_COMMIT:
		if (a[0] < 16)
			r->transid[a[0]] = a[1] + 1;
		r->commits++;
		break;
	}
}

static void replay_free(replay *r)
{
	for (size_t i = 0; i < r->cap; i++)
		free(r->b[i].kids);
	free(r->b);
}

/* Replay s's recording; dumps are the events before the first op or
 * change made by a task (the dumpers run before any event). */
static void replay_run(replay *r, sim *s, int64_t fs_of_dump_gen, int64_t dump_transid)
{
	memset(r, 0, sizeof *r);
	if (fs_of_dump_gen < 16)
		r->transid[fs_of_dump_gen] = dump_transid;
	sim_rec_it it = {0};
	sim_rec_ev e;
	int dumping = 1;
	while (sim_rec_next(s, &it, &e)) {
		if (e.task >= 0)
			dumping = 0;
		apply(r, &e, dumping);
	}
}

/* The replayed tree under bytenr equals the real one (recursively). */
static int same_tree(replay *r, int64_t fs, const bt_node *n, int64_t dump_gen, int *unexplained)
{
	rblk *b = rfind(r, fs, (int64_t)bt_node_bytenr(n), 0);
	if (!b || b->dead)
		return 0;
	if (b->level != n->level || b->nritems != n->nritems || b->gen != (int64_t)n->generation)
		return 0;
	/* a generation newer than the recording's start: the trace made it */
	if ((int64_t)n->generation > dump_gen && !b->born)
		(*unexplained)++;
	if (!n->level)
		return 1;
	if (b->nkids != n->nritems)
		return 0;
	for (int i = 0; i < n->nritems; i++) {
		if (b->kids[i] != (int64_t)n->ptrs[i].child->bytenr)
			return 0;
		if (!same_tree(r, fs, n->ptrs[i].child, dump_gen, unexplained))
			return 0;
		b = rfind(r, fs, (int64_t)bt_node_bytenr(n), 0);
	}
	return 1;
}

static int64_t handle_of(replay *r, int64_t fs, uint64_t id)
{
	for (int h = 255; h > 0; h--)
		if (r->tree_fs[h] == fs && r->tree_id[h] == (int64_t)id && !r->tree_gone[h])
			return h;
	return 0;
}

/* ---- a workload with locks, splits, merges, COW of shared blocks ---- */

typedef struct wl {
	fs_info *fs;
	struct btrfs_root *snap;
	int ops, id;
	prng rng;
} wl;

static int wl_step(sim *s, task *t)
{
	wl *w = t->ctx;
	fs_info *fs = w->fs;
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (int i = 0; i < 20 && w->ops > 0; i++, w->ops--) {
		uint64_t obj = 1000 + prng_below(&w->rng, 3000);
		bt_key k = bt_mkkey(obj, 1, (uint64_t)w->id);
		if (prng_below(&w->rng, 3) == 0) {
			bt_delete(tr, t, &k);
		} else {
			bt_item it = {0};
			bt_insert(tr, t, &k, 600 + (uint32_t)(obj % 1200), &it, NULL);
		}
		task_cpu(s, t, 2000);
	}
	if (w->ops % 400 == 0 && w->id == 0)
		CHECK_EQ(fs_commit(fs, t), 0);
	if (w->ops == 1000 && w->id == 0 && !w->snap) {
		/* a snapshot of the fs tree: its blocks become shared, and the
		 * writers' next COWs copy them (update_ref_for_cow) */
		CHECK_EQ(fs_root_create(fs, t, 300, &w->snap), 0);
		CHECK_EQ(bt_copy_root(tr, &w->snap->tree, t), 0);
	}
	return w->ops > 0 ? TASK_RUN : TASK_DONE;
}

static void test_complete(void)
{
	sim *s = sim_create(3, 0);
	fs_info *fs = NULL;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	/* a tree of a few hundred leaves before the recording starts, and
	 * that the workload makes three levels high (node splits, a new root) */
	for (uint64_t o = 0; o < 3000; o++) {
		bt_key k = bt_mkkey(1000 + (o * 7919) % 3000, 1, 100 + o / 3000);
		bt_item it = {0};
		bt_insert(tr, NULL, &k, 1500, &it, NULL);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	int64_t dump_gen = (int64_t)fs->generation;
	CHECK_EQ(sim_record_start(s, sim_now(s), 2000000), 0);
	wl w[3];
	for (int i = 0; i < 3; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].fs = fs;
		w[i].ops = 4000;
		w[i].id = i;
		prng_seed(&w[i].rng, 11 + (uint64_t)i);
		task_spawn(s, "writer", wl_step, &w[i], (simtime_t)i * 500);
	}
	sim_run(s, UINT64_MAX, SIMTIME_MAX);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK(sim_rec_kept(s) > 10000);
	CHECK_EQ(sim_rec_unkept(s), 0);

	replay r;
	replay_run(&r, s, fs->rec_fs, dump_gen + 1);
	/* every lock taken was released, and only once */
	CHECK_EQ(r.nheld, 0);
	CHECK_EQ(r.bad_unlock, 0);
	CHECK(r.cows > 100);
	CHECK_EQ(r.cow_gen_bad, 0);
	CHECK(tr->splits > 10);
	CHECK_EQ(bt_tree_height(tr), 3);
	CHECK(tr->merges + tr->pushes > 10);
	/* the replayed trees are the real ones */
	const bt_tree *trees[] = { &fs->root_tree, &fs->extent_tree, &fs->csum_tree, tr,
				   w[0].snap ? &w[0].snap->tree : NULL };
	for (int i = 0; i < 5; i++) {
		if (!trees[i])
			continue;
		int64_t h = handle_of(&r, fs->rec_fs, trees[i]->id);
		CHECK(h > 0);
		CHECK_EQ(r.tree_root[h], trees[i]->root->bytenr);
		int unexplained = 0;
		CHECK(same_tree(&r, fs->rec_fs, trees[i]->root, dump_gen, &unexplained));
		CHECK_EQ(unexplained, 0);
	}
	CHECK(w[0].snap != NULL);
	replay_free(&r);
	fs_unmount(fs);
	sim_destroy(s);
}

/* ---- through the public API: recording is free ---------------------- */

static char *run_json(const char *exp, const char *variant, const char *params,
		      double from_ns, uint32_t max_events, char **trace)
{
	lab_run *r = t_open(exp, variant, params, 5);
	if (max_events)
		CHECK_EQ(lab_record(r, from_ns, max_events), 0);
	int done = 0;
	while (!done)
		if (lab_step(r, 50000, &done))
			break;
	char *out = NULL;
	CHECK_EQ(lab_result_json(r, &out), 0);
	if (trace)
		CHECK_EQ(lab_trace_json(r, 0, trace), 0);
	CHECK_EQ(lab_record(r, 0, 10), LAB_ESTATE);
	lab_close(r);
	return out;
}

static int64_t json_int(const char *s, const char *key)
{
	const char *p = strstr(s, key);
	return p ? atoll(p + strlen(key)) : -1;
}

static void free_case(const char *exp, const char *variant, const char *params)
{
	char *plain = run_json(exp, variant, params, 0, 0, NULL);
	char *tr = NULL, *win = NULL;
	char *rec = run_json(exp, variant, params, 0, LAB_RECORD_MAX, &tr);
	CHECK(plain && rec && strcmp(plain, rec) == 0);
	CHECK(strstr(tr, "\"recording\":true") != NULL);
	int64_t kept = json_int(tr, "\"kept\":");
	CHECK(kept > 100);
	/* a window: from the middle of the run, at most a tenth of it */
	int64_t mid = json_int(tr, "\"last_ns\":") / 2;
	char *part = run_json(exp, variant, params, (double)mid, (uint32_t)(kept / 10), &win);
	CHECK(part && strcmp(plain, part) == 0);
	CHECK(strstr(win, "\"complete\":false") != NULL);
	CHECK_EQ(json_int(win, "\"kept\":"), kept / 10);
	CHECK(json_int(win, "\"unkept\":") > 0);
	CHECK(json_int(win, "\"from_ns\":") == mid);
	char shown[200];
	snprintf(shown, sizeof shown, "%s", params);
	for (char *c = shown; *c; c++)
		if (*c == '\n')
			*c = ' ';
	printf("  %s %s %s: %lld events recorded, results identical\n", exp, variant, shown,
	       (long long)kept);
	lab_free(plain);
	lab_free(rec);
	lab_free(part);
	lab_free(tr);
	lab_free(win);
}

static void test_api_errors(void)
{
	lab_run *r = t_open("torture", "base", "ops=50", 1);
	CHECK_EQ(lab_record(NULL, 0, 10), LAB_EINVAL);
	CHECK_EQ(lab_record(r, -1, 10), LAB_EINVAL);
	CHECK_EQ(lab_record(r, 0, 0), LAB_EINVAL);
	CHECK_EQ(lab_record(r, 0, LAB_RECORD_MAX + 1u), LAB_EINVAL);
	CHECK_EQ(lab_record(r, 0, 1000), 0);
	CHECK_EQ(lab_record(r, 0, 1000), LAB_ESTATE);
	lab_close(r);
}

int main(void)
{
	test_complete();
	test_api_errors();
	/* every small run of every registered experiment (exp.h's small_run) */
	for (int i = 0; i < exp_count(); i++) {
		const lab_exp *e = exp_get(i);
		for (int k = 0; k < e->nsmall; k++)
			free_case(e->name, e->small[k].variant, e->small[k].params);
	}
	T_DONE();
}
