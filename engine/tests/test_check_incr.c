/*
 * test_check_incr.c - the incremental check (check.h) earns its place:
 * each of a list of deliberate corruptions, made in what a transaction
 * changes (as a bug in the transaction's last step would make it: at the
 * start of its commit, fs_hooks.on_commit_start), is caught by the
 * incremental check right after that commit, with the full check not due:
 *   - a misordered key in a leaf the transaction COWed;
 *   - a leaked extent: an extent item whose reference nothing holds;
 *   - a stale backref: a file extent item gone, its extent's count kept;
 *   - an overlapping io_tree record of an inode the transaction wrote;
 *   - a wrong bytes_may_use.
 * And the control: the same runs without a corruption find nothing, in
 * incremental checks only; the record follows a long mixed run (snapshot
 * drops, sends, remounts) with no false report; and the full check every
 * N commits finds what the incremental one cannot see (damage to a block
 * no transaction COWed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check.h"
#include "eio.h"
#include "exp.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "space.h"
#include "vfs_data.h"
#include "vfs_io.h"
#include "t.h"

#include "exp_torture_int.h"

enum { C_NONE, C_MISORDER, C_LEAK, C_STALE, C_IOTREE, C_MAYUSE, C_OLDLEAF };

typedef struct inj {
	tort *c;
	int what;
	uint64_t at_commit; /* inject at the commit after this many */
	int done;
	uint64_t fails_before, incr_before, full_before;
} inj;

/* The first slot i >= 1 of leaf l whose item and the next are not file
 * extent items (swapping their keys leaves the data path's check quiet),
 * or -1. */
static int swap_slot(const bt_node *l)
{
	for (int i = 1; i + 1 < l->nritems; i++)
		if (l->items[i].key.type != BTRFS_EXTENT_DATA_KEY &&
		    l->items[i + 1].key.type != BTRFS_EXTENT_DATA_KEY)
			return i;
	return -1;
}

/* A leaf under n COWed by the running transaction with at least n items
 * and a slot to swap, or (old) one no transaction since the record
 * changed. */
static bt_node *find_leaf(bt_node *n, uint64_t transid, int min_items, int old)
{
	if (!n)
		return NULL;
	if (n->level == 0)
		return (old ? n->generation < transid : n->generation == transid) &&
		       n->nritems >= min_items && swap_slot(n) >= 0 ? n : NULL;
	for (int i = n->nritems - 1; i >= 0; i--) {
		bt_node *l = find_leaf(n->ptrs[i].child, transid, min_items, old);
		if (l)
			return l;
	}
	return NULL;
}

static bt_node *new_fs_leaf(tort *c, int min_items, int old)
{
	for (int i = 0; i < c->nsv; i++) {
		if (!c->sv[i])
			continue;
		bt_node *l = find_leaf(c->sv[i]->tree.root, c->fs->transid, min_items, old);
		if (l)
			return l;
	}
	return NULL;
}

/* Swap two neighbouring keys of leaf l past its first (not file extent
 * items: the data path's check would speak first). */
static void misorder(bt_node *l)
{
	CHECK(l != NULL);
	if (!l)
		return;
	int i = swap_slot(l);
	bt_key k = l->items[i].key;
	l->items[i].key = l->items[i + 1].key;
	l->items[i + 1].key = k;
}

/* fs_hooks.on_commit_start: make the corruption once. */
static void corrupt(void *ctx, uint64_t transid)
{
	inj *in = ctx;
	tort *c = in->c;
	fs_info *fs = c->fs;
	(void)transid;
	if (in->done || c->commits < in->at_commit)
		return;
	in->done = 1;
	in->fails_before = c->failures;
	check_incr_stats(fs, &in->incr_before, &in->full_before);
	switch (in->what) {
	case C_MISORDER:
		misorder(new_fs_leaf(c, 3, 0));
		break;
	case C_LEAK: {
		/* an extent allocated and its reference run, but held by no
		 * file extent item */
		uint64_t b;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 4096, &b), 0);
		fs_ref_op op = { b, 4096, BTRFS_FS_TREE_OBJECTID, 1000000, 0, +1, 0 };
		CHECK_EQ(fs_ref_queue(fs, &op), 0);
		break;
	}
	case C_STALE: {
		/* a file extent item leaves a COWed leaf; its extent's
		 * reference is not dropped */
		bt_node *hit = NULL;
		int slot = -1;
		for (int s = 0; s < c->nsv && !hit; s++) {
			bt_node *stack[64];
			int sp = 0;
			if (c->sv[s] && c->sv[s]->tree.root)
				stack[sp++] = c->sv[s]->tree.root;
			while (sp && !hit) {
				bt_node *n = stack[--sp];
				if (n->generation != fs->transid)
					continue;
				if (n->level) {
					for (int i = 0; i < n->nritems && sp < 64; i++)
						stack[sp++] = n->ptrs[i].child;
					continue;
				}
				for (int i = 1; i < n->nritems; i++)
					if (n->items[i].key.type == BTRFS_EXTENT_DATA_KEY &&
					    n->items[i].aux == FE_REG && n->items[i].v[0]) {
						hit = n;
						slot = i;
						break;
					}
			}
		}
		CHECK(hit != NULL);
		if (hit) {
			hit->used -= BT_ITEM_HEADER + hit->items[slot].size;
			memmove(&hit->items[slot], &hit->items[slot + 1],
				(size_t)(hit->nritems - slot - 1) * sizeof hit->items[0]);
			hit->nritems--;
		}
		break;
	}
	case C_IOTREE: {
		/* a record of an inode the transaction touched is stretched
		 * over its successor */
		dfs *df = vio_dfs(fs);
		extent_state *x = NULL;
		for (int i = 0; df && i < df->chk_n && !x; i++) {
			extent_state *a = eio_first_from(&df->chk_list[i]->io, 0);
			extent_state *b = a ? eio_next(a) : NULL;
			if (b)
				x = a;
		}
		CHECK(x != NULL);
		if (x)
			x->end = eio_next(x)->start;
		break;
	}
	case C_MAYUSE:
		fs->space.info[SPACE_DATA].bytes_may_use += 4096;
		break;
	case C_OLDLEAF: {
		/* damage to a leaf no transaction since the record COWed */
		bt_node *l = new_fs_leaf(c, 3, 1);
		if (!l)
			l = find_leaf(fs->extent_tree.root, fs->transid, 3, 1);
		misorder(l);
		break;
	}
	}
}

/* Whether one of the checker's last messages contains s. */
static int reported(fs_info *fs, const char *s)
{
	for (int i = 0; i < 4; i++)
		if (strstr(fs->check_msg[i], s))
			return 1;
	return 0;
}

/*
 * A torture run (full checks every `every` commits) with corruption
 * `what` made at the start of commit number `at`; stepped until the
 * check after that commit has run. Returns the failures that check
 * found; *incr: whether it was an incremental one.
 */
static uint64_t run_one(const char *mix, int what, uint64_t at, uint64_t every, const char *expect,
			int *incr)
{
	char params[128];
	snprintf(params, sizeof params, "ops=1000000\nsubvols=3\nmix=%s\nfull_check_every=%llu", mix,
		 (unsigned long long)every);
	lab_run *r = NULL;
	char *msg = NULL;
	CHECK_EQ(lab_open("torture", "base", params, 7, 0, &r, &msg), 0);
	lab_free(msg);
	if (!r)
		return 0;
	tort *c = r->ctx;
	inj in = { c, what, at, 0, 0, 0, 0 };
	fs_hooks h;
	memset(&h, 0, sizeof h);
	h.ctx = &in;
	h.on_commit_start = corrupt;
	CHECK_EQ(fs_hooks_register(c->fs, &h), 0);
	int done = 0;
	/* to the check after the corrupted commit */
	while (!done && c->commits <= at && lab_step(r, 1, &done) == 0)
		;
	CHECK(in.done);
	uint64_t found = c->failures - in.fails_before, ic, fc;
	check_incr_stats(c->fs, &ic, &fc);
	*incr = ic == in.incr_before + 1 && fc == in.full_before;
	if (expect && !reported(c->fs, expect)) {
		fprintf(stderr, "expected '%s'; the checker said: %s | %s | %s | %s\n", expect,
			c->fs->check_msg[0], c->fs->check_msg[1], c->fs->check_msg[2],
			c->fs->check_msg[3]);
		CHECK(0);
	}
	lab_close(r);
	return found;
}

/* As run_one, stepped on to the first whole check after commit `at`;
 * returns the failures found by then. */
static uint64_t run_full(const char *mix, int what, uint64_t at, uint64_t every, const char *expect)
{
	char params[128];
	snprintf(params, sizeof params, "ops=1000000\nsubvols=3\nmix=%s\nfull_check_every=%llu", mix,
		 (unsigned long long)every);
	lab_run *r = NULL;
	char *msg = NULL;
	CHECK_EQ(lab_open("torture", "base", params, 7, 0, &r, &msg), 0);
	lab_free(msg);
	if (!r)
		return 0;
	tort *c = r->ctx;
	inj in = { c, what, at, 0, 0, 0, 0 };
	fs_hooks h;
	memset(&h, 0, sizeof h);
	h.ctx = &in;
	h.on_commit_start = corrupt;
	CHECK_EQ(fs_hooks_register(c->fs, &h), 0);
	int done = 0;
	uint64_t full = 0;
	while (!done && (c->commits <= at || c->full_checks == full) && lab_step(r, 1, &done) == 0)
		if (c->commits <= at)
			full = c->full_checks;
	CHECK(in.done);
	CHECK(c->full_checks > full);
	uint64_t found = c->failures - in.fails_before;
	if (expect && !reported(c->fs, expect)) {
		fprintf(stderr, "expected '%s'; the checker said: %s\n", expect, c->fs->check_msg[0]);
		CHECK(0);
	}
	lab_close(r);
	return found;
}

int main(void)
{
	static const struct {
		int what;
		const char *name, *mix, *expect;
	} cases[] = {
		{ C_MISORDER, "a misordered key", "files", "keys out of order" },
		{ C_LEAK, "a leaked extent", "files", "has 1 refs, 0 references found" },
		{ C_STALE, "a stale backref", "files", "references found" },
		{ C_IOTREE, "an overlapping io_tree record", "files", "io_tree broken" },
		{ C_MAYUSE, "a wrong bytes_may_use", "files", "bytes_may_use" },
		{ C_MISORDER, "a misordered key (mix=all)", "all", "keys out of order" },
		{ C_LEAK, "a leaked extent (mix=all)", "all", "has 1 refs, 0 references found" },
		{ C_STALE, "a stale backref (mix=all)", "all", "references found" },
		{ C_MAYUSE, "a wrong bytes_may_use (mix=all)", "all", "bytes_may_use" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		int incr = 0;
		/* commit 12: the record is there, the files have data */
		uint64_t f = run_one(cases[i].mix, cases[i].what, 12, 1000000, cases[i].expect, &incr);
		printf("%-40s caught by the next incremental check: %llu failure(s)%s\n",
		       cases[i].name, (unsigned long long)f, incr ? "" : " (NOT incremental)");
		CHECK(f > 0);
		CHECK(incr);
	}
	/* the controls: nothing made, nothing found */
	for (int m = 0; m < 2; m++) {
		int incr = 0;
		CHECK_EQ(run_one(m ? "all" : "files", C_NONE, 12, 1000000, NULL, &incr), 0);
		CHECK(incr);
	}
	/* damage where no transaction looked: not the incremental check's to
	 * see; the next full one finds it */
	int incr = 0;
	uint64_t f = run_one("files", C_OLDLEAF, 121, 1000000, NULL, &incr);
	CHECK_EQ(f, 0);
	CHECK(incr);
	f = run_full("files", C_OLDLEAF, 123, 4, "keys out of order");
	CHECK(f > 0);

	/* a long mixed run, incremental checks only between full ones: the
	 * record follows snapshots, their drops, sends, remounts, subvolume
	 * deletes without a false report; both cadences agree */
	uint64_t fulls[2] = { 0, 0 };
	for (int every = 1; every <= 1000; every *= 1000) {
		char params[96];
		snprintf(params, sizeof params, "ops=30000\nsubvols=4\nmix=all\nfull_check_every=%d", every);
		lab_run *r = NULL;
		CHECK_EQ(lab_open("torture", "base", params, 3, 0, &r, NULL), 0);
		int done = 0;
		while (r && !done && lab_step(r, 1u << 20, &done) == 0)
			;
		tort *c = r ? r->ctx : NULL;
		uint64_t ic = 0, fc = 0;
		if (c)
			check_incr_stats(c->fs, &ic, &fc);
		printf("mix=all 30000 ops, full check every %d: %llu commits, %llu incremental, "
		       "%llu full checks, %llu failures%s%s\n", every,
		       (unsigned long long)(c ? c->commits : 0), (unsigned long long)ic,
		       (unsigned long long)(c ? c->full_checks : 0),
		       (unsigned long long)(c ? c->failures : 0), c && c->failures ? ": " : "",
		       c && c->failures ? c->first_error : "");
		CHECK(c && c->failures == 0);
		CHECK(c && ic > c->full_checks);
		/* the whole checks' blocks and inodes stay a bounded share of
		 * the checking: each waits for TS_FULL_SPACING times its
		 * predecessor's of incremental checking; the last one is
		 * forced, so it and its predecessor are over the bound */
		uint64_t checked = 0, walked = 0;
		if (c)
			check_incr_work(c->fs, &checked, &walked);
		CHECK(c && c->full_walked + c->full_inodes_sum <=
				   (checked + c->incr_inodes) / TS_FULL_SPACING + c->full_prev + walked +
					   c->full_inodes);
		fulls[every > 1] = c ? c->full_checks : 0;
		lab_close(r);
	}
	/* a shorter cadence asks for more of them */
	CHECK(fulls[0] > fulls[1]);
	CHECK(fulls[1] >= 1);
	T_DONE();
}
