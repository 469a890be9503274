/*
 * eio.c - the extent_io_tree (see eio.h for the model and its costs).
 *
 * Layout: a treap keyed by record start, with parent links so that a
 * record's neighbours and the augmented counts on its path can be updated
 * in O(log n) after any split, merge, insert or removal.
 */
#include "eio.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "labmem.h"

/* ------------------------------------------------------------------ */
/* recording (sim.h, trace_kinds.def)                                  */

static int rec_on(const eio_tree *t)
{
	return t->rec_sim && sim_recording(t->rec_sim);
}

static void rec_state(eio_tree *t, const extent_state *st, int op)
{
	if (rec_on(t))
		SIM_REC(t->rec_sim, TK_EIO, NULL, t->rec_fs, t->rec_ino, (int64_t)st->start,
			(int64_t)st->end, st->bits, op);
}

enum { REC_INSERT = 0, REC_SPLIT = 1, REC_BITS = 2, REC_MERGE = 3, REC_DUMP = 4 };

/* ------------------------------------------------------------------ */
/* treap plumbing                                                      */

static uint32_t cnt_of(const extent_state *x) { return x ? x->cnt : 0; }
static uint32_t adj_of(const extent_state *x) { return x ? x->adj_cnt : 0; }

/* Recompute x's augmentation from its children. */
static void pull(extent_state *x)
{
	x->cnt = 1 + cnt_of(x->left) + cnt_of(x->right);
	x->adj_cnt = x->adj + adj_of(x->left) + adj_of(x->right);
}

static uint32_t eio_rand(eio_tree *t)
{
	uint32_t x = t->rng;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return x;
}

/* Replace child link `old` of p (or the root) with `nw`. */
static void relink(eio_tree *t, extent_state *p, extent_state *old, extent_state *nw)
{
	if (!p)
		t->root = nw;
	else if (p->left == old)
		p->left = nw;
	else
		p->right = nw;
	if (nw)
		nw->parent = p;
}

/* Rotate x above its parent. */
static void rotate_up(eio_tree *t, extent_state *x)
{
	extent_state *p = x->parent, *g = p->parent;
	if (p->left == x) {
		p->left = x->right;
		if (x->right)
			x->right->parent = p;
		x->right = p;
	} else {
		p->right = x->left;
		if (x->left)
			x->left->parent = p;
		x->left = p;
	}
	p->parent = x;
	relink(t, g, p, x);
	pull(p);
	pull(x);
}

extent_state *eio_next(extent_state *x)
{
	if (!x)
		return NULL;
	if (x->right) {
		x = x->right;
		while (x->left)
			x = x->left;
		return x;
	}
	while (x->parent && x->parent->right == x)
		x = x->parent;
	return x->parent;
}

extent_state *eio_prev(extent_state *x)
{
	if (!x)
		return NULL;
	if (x->left) {
		x = x->left;
		while (x->right)
			x = x->right;
		return x;
	}
	while (x->parent && x->parent->left == x)
		x = x->parent;
	return x->parent;
}

/* Set x->adj to a and move the adjacency counts of x and its ancestors by
 * the difference: they are sums, so only the path needs touching, not the
 * siblings a pull would read. */
static void set_adj(extent_state *x, uint8_t a)
{
	if (a == x->adj)
		return;
	uint32_t d = a ? 1 : (uint32_t)-1;
	x->adj = a;
	for (; x; x = x->parent)
		x->adj_cnt += d;
}

static uint8_t adjacent(const extent_state *pred, const extent_state *x)
{
	return pred && pred->end + 1 == x->start;
}

/* Recompute x->adj from its predecessor and fix the counts above it. */
static void fix_adj(extent_state *x)
{
	if (x)
		set_adj(x, adjacent(eio_prev(x), x));
}

/* Add (sign +1) or remove (-1) a record's bytes from the per-bit totals. */
static void acct(eio_tree *t, const extent_state *st, int sign)
{
	uint64_t len = sign > 0 ? st->end - st->start + 1 : (uint64_t)0 - (st->end - st->start + 1);
	uint32_t one = sign > 0 ? 1u : (uint32_t)0 - 1u;
	for (uint32_t b = st->bits & ((1u << EIO_COUNTED_BITS) - 1); b; b &= b - 1) {
		int i = __builtin_ctz(b);
		t->bytes_with[i] += len;
		t->recs_with[i] += one;
	}
}

static extent_state *state_alloc(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits)
{
	extent_state *st = t->pool ? lab_pool_zalloc(t->pool) : lab_calloc(1, sizeof(*st));
	assert(st);
	st->start = start;
	st->end = end;
	assert(bits <= 0xffffu);
	st->bits = (uint16_t)bits;
	st->refs = 1;
	st->prio = eio_rand(t);
	st->cnt = 1;
	assert(t->live_alloc < UINT32_MAX);
	t->live_alloc++;
	return st;
}

static void state_free(eio_tree *t, extent_state *st)
{
	assert(t->live_alloc > 0);
	t->live_alloc--;
	if (t->pool)
		lab_pool_free(t->pool, st);
	else
		free(st);
}

/*
 * Link a new record into the tree (ranges must not overlap). `next`, if
 * not NULL, is the record that will follow it: the new leaf's place is
 * then found from its two neighbours (of two neighbours in a binary search
 * tree one is the other's descendant, with its link towards the other
 * free) instead of a descent from the root. The place is the same.
 */
static void tree_insert(eio_tree *t, extent_state *st, extent_state *next, eio_call *c)
{
	extent_state *p = NULL, **link = &t->root, *pred = NULL, *succ = NULL;
	if (next) {
		succ = next;
		pred = eio_prev(next);
		assert(st->end < succ->start && (!pred || pred->end < st->start));
		if (pred && !pred->right) {
			p = pred;
			link = &pred->right;
		} else {
			p = succ;
			link = &succ->left;
		}
		assert(!*link);
	}
	/* the descent passes both neighbours: the last node left of the new
	 * leaf is its predecessor, the last node right of it its successor */
	while (*link) {
		p = *link;
		assert(st->end < p->start || st->start > p->end);
		if (st->start < p->start) {
			succ = p;
			link = &p->left;
		} else {
			pred = p;
			link = &p->right;
		}
	}
	*link = st;
	st->parent = p;
	st->in_tree = 1;
	st->adj = adjacent(pred, st);
	st->adj_cnt = st->adj;
	/* counts of the leaf's ancestors (both neighbours are among them),
	 * before the rotations, which keep subtree totals above them */
	for (extent_state *y = p; y; y = y->parent) {
		y->cnt++;
		y->adj_cnt += st->adj;
	}
	if (succ)
		set_adj(succ, adjacent(st, succ));
	while (st->parent && st->parent->prio < st->prio)
		rotate_up(t, st);
	t->nrecords++;
	acct(t, st, +1);
	c->allocs++;
}

/* Unlink a record (its memory lives on while references remain). */
static void tree_erase(eio_tree *t, extent_state *st, eio_call *c)
{
	if (rec_on(t))
		SIM_REC(t->rec_sim, TK_EIO_DEL, NULL, t->rec_fs, t->rec_ino,
			(int64_t)st->start, (int64_t)st->end);
	extent_state *succ = eio_next(st);
	while (st->left || st->right) {
		extent_state *ch;
		if (!st->left)
			ch = st->right;
		else if (!st->right)
			ch = st->left;
		else
			ch = st->left->prio > st->right->prio ? st->left : st->right;
		rotate_up(t, ch);
	}
	/* a leaf now: its ancestors lose exactly its own counts */
	extent_state *p = st->parent;
	relink(t, p, st, NULL);
	for (extent_state *y = p; y; y = y->parent) {
		y->cnt--;
		y->adj_cnt -= st->adj;
	}
	st->parent = NULL;
	st->in_tree = 0;
	if (t->finger == st) /* any record in the tree will do; a near one */
		t->finger = succ ? succ : p;
	t->nrecords--;
	acct(t, st, -1);
	fix_adj(succ);
	c->frees++;
	eio_state_put(t, st);
}

void eio_state_put(eio_tree *t, extent_state *st)
{
	if (!st)
		return;
	assert(st->refs > 0);
	if (--st->refs == 0) {
		assert(!st->in_tree);
		state_free(t, st);
	}
}

void eio_cache_set(eio_tree *t, extent_state **cached, extent_state *st)
{
	if (!cached || *cached == st)
		return;
	if (*cached)
		eio_state_put(t, *cached);
	*cached = st;
	if (st)
		st->refs++;
}

/*
 * The answer of tree_search from the finger (the last record it returned)
 * or its neighbours: 1 and *out, or 0 when it lies further away. Callers
 * walk a file forward, a record or two per call, and the descent from the
 * root takes a cache miss per level on a large tree.
 */
static int finger_search(eio_tree *t, uint64_t off, extent_state **out)
{
	extent_state *f = t->finger;
	if (!f)
		return 0;
	if (f->end >= off) {
		if (f->start <= off) {
			*out = f;
			return 1;
		}
		extent_state *p = eio_prev(f);
		if (!p || p->end < off) {
			*out = f;
			return 1;
		}
		if (p->start <= off) {
			*out = p;
			return 1;
		}
		return 0;
	}
	extent_state *n = eio_next(f);
	if (!n || n->end >= off) {
		*out = n;
		return 1;
	}
	return 0;
}

/* First record with end >= off; one root descent is charged to c (the
 * model's cost, however the record is found). */
static extent_state *tree_search(eio_tree *t, uint64_t off, eio_call *c)
{
	extent_state *x = t->root, *best = NULL;
	if (c) {
		c->descents++;
		c->nodes += eio_depth(t->nrecords);
	}
	if (finger_search(t, off, &best)) {
		if (best)
			t->finger = best;
		return best;
	}
	while (x) {
		if (x->end < off) {
			x = x->right;
		} else {
			best = x;
			if (x->start <= off)
				break;
			x = x->left;
		}
	}
	if (best)
		t->finger = best;
	return best;
}

extent_state *eio_first_from(eio_tree *t, uint64_t off)
{
	return tree_search(t, off, NULL);
}

/* Split st at `at`: a new record [st->start, at-1] takes st's bits and st
 * becomes [at, st->end]. Models split_state. Returns the new record. */
static extent_state *split_state(eio_tree *t, extent_state *st, uint64_t at, eio_call *c)
{
	assert(at > st->start && at <= st->end);
	extent_state *pre = state_alloc(t, st->start, at - 1, st->bits);
	acct(t, st, -1);
	st->start = at;
	acct(t, st, +1);
	tree_insert(t, pre, st, c); /* which makes st adjacent to pre */
	rec_state(t, pre, REC_SPLIT);
	rec_state(t, st, REC_SPLIT);
	return pre;
}

/* Merge st with identical adjacent neighbours; LOCKED records never merge
 * (models merge_state). */
static void merge_state(eio_tree *t, extent_state *st, eio_call *c)
{
	if (st->bits & EXTENT_LOCKED)
		return;
	/* st takes the neighbour's range before the neighbour goes, so that
	 * tree_erase sets the adjacency of the record after the one it
	 * removes (st, or the one past st) from the merged range at once */
	extent_state *o = eio_prev(st);
	if (o && o->end + 1 == st->start && o->bits == st->bits) {
		/* recorded as: st's old range and o removed, the merged one set */
		if (rec_on(t))
			SIM_REC(t->rec_sim, TK_EIO_DEL, NULL, t->rec_fs, t->rec_ino,
				(int64_t)st->start, (int64_t)st->end);
		acct(t, st, -1);
		st->start = o->start;
		acct(t, st, +1);
		tree_erase(t, o, c);
		rec_state(t, st, REC_MERGE);
	}
	o = eio_next(st);
	if (o && o->start == st->end + 1 && o->bits == st->bits) {
		acct(t, st, -1);
		st->end = o->end;
		acct(t, st, +1);
		tree_erase(t, o, c);
		rec_state(t, st, REC_MERGE);
	}
}

static void set_state_bits(eio_tree *t, extent_state *st, uint32_t bits)
{
	acct(t, st, -1);
	assert(bits <= 0xffffu);
	st->bits |= (uint16_t)bits;
	acct(t, st, +1);
	rec_state(t, st, REC_BITS);
}

/* Insert a fresh record for a gap and merge it (models insert_state). */
static extent_state *insert_new(eio_tree *t, uint64_t s, uint64_t e, uint32_t bits,
				extent_state *next, eio_call *c)
{
	extent_state *st = state_alloc(t, s, e, bits);
	tree_insert(t, st, next, c);
	rec_state(t, st, REC_INSERT);
	return st;
}

/* ------------------------------------------------------------------ */

void eio_init(eio_tree *t)
{
	*t = (eio_tree){0};
	t->rng = 0x9e3779b9u;
}

void eio_set_pool(eio_tree *t, struct lab_pool *pool)
{
	assert(!t->root && !t->live_alloc);
	t->pool = pool;
}

static void free_subtree(eio_tree *t, extent_state *x)
{
	while (x) {
		free_subtree(t, x->left);
		extent_state *r = x->right;
		x->in_tree = 0;
		if (--x->refs == 0)
			state_free(t, x);
		else
			x->left = x->right = x->parent = NULL;
		x = r;
	}
}

void eio_rec_attach(eio_tree *t, sim *s, int64_t fs, int64_t ino)
{
	t->rec_sim = s;
	t->rec_fs = fs;
	t->rec_ino = ino;
}

void eio_rec_dump(eio_tree *t)
{
	if (!rec_on(t))
		return;
	SIM_REC(t->rec_sim, TK_EIO_RESET, NULL, t->rec_fs, t->rec_ino);
	extent_state *st = t->root; /* the leftmost, without moving the finger */
	while (st && st->left)
		st = st->left;
	for (; st; st = eio_next(st))
		rec_state(t, st, REC_DUMP);
}

void eio_destroy(eio_tree *t)
{
	if (rec_on(t))
		SIM_REC(t->rec_sim, TK_EIO_RESET, NULL, t->rec_fs, t->rec_ino);
	free_subtree(t, t->root);
	t->root = NULL;
	t->finger = NULL;
	t->nrecords = 0;
	for (int b = 0; b < EIO_COUNTED_BITS; b++)
		t->bytes_with[b] = t->recs_with[b] = 0;
}

uint32_t eio_depth(uint64_t n)
{
	return n ? 64 - (uint32_t)__builtin_clzll(n) : 0; /* bits in n */
}

uint64_t eio_call_ns(const eio_call *c)
{
	return c->nodes * C_EIO_NODE_NS + c->records * C_EIO_STATE_NS +
	       (c->allocs + c->frees) * C_EIO_ALLOC_NS + c->descents * C_EIO_DESCENT_NS;
}

/* ------------------------------------------------------------------ */

int eio_set_bits(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits,
		 uint32_t exclusive, uint64_t *failed_start,
		 extent_state **cached, eio_call *cc)
{
	eio_call local = {0}, *c = &local;
	int ret = 0;
	extent_state *st;
	assert(start <= end);
again:
	if (cached && *cached && (*cached)->in_tree && (*cached)->start <= start &&
	    (*cached)->end > start) {
		st = *cached;
		c->cache_hits++;
		goto hit_next;
	}
	st = tree_search(t, start, c);
	if (!st) {
		st = insert_new(t, start, end, bits, NULL, c);
		if (cached && !*cached)
			eio_cache_set(t, cached, st);
		merge_state(t, st, c);
		goto out;
	}
hit_next:
	c->records++;
	{
		uint64_t last_end = st->end;
		if (st->start == start && st->end <= end) {
			if (st->bits & exclusive) {
				*failed_start = start;
				ret = 1;
				goto out;
			}
			set_state_bits(t, st, bits);
			if (cached && !*cached)
				eio_cache_set(t, cached, st);
			merge_state(t, st, c);
			extent_state *nx = eio_next(st);
			if (last_end == EIO_OFF_MAX)
				goto out;
			start = last_end + 1;
			if (start < end && nx && nx->start == start) {
				st = nx;
				goto hit_next;
			}
			goto search_again;
		}
		if (st->start < start) {
			if (st->bits & exclusive) {
				*failed_start = start;
				ret = 1;
				goto out;
			}
			if ((st->bits & bits) == bits) {
				/* already set: skip it (6.1 does the same) */
				start = last_end + 1;
				if (cached && !*cached)
					eio_cache_set(t, cached, st);
				goto search_again;
			}
			split_state(t, st, start, c);
			if (st->end <= end) {
				set_state_bits(t, st, bits);
				if (cached && !*cached)
					eio_cache_set(t, cached, st);
				merge_state(t, st, c);
				extent_state *nx = eio_next(st);
				if (last_end == EIO_OFF_MAX)
					goto out;
				start = last_end + 1;
				if (start < end && nx && nx->start == start) {
					st = nx;
					goto hit_next;
				}
			}
			goto search_again;
		}
		if (st->start > start) {
			uint64_t this_end = end < st->start - 1 ? end : st->start - 1;
			extent_state *n = insert_new(t, start, this_end, bits, st, c);
			if (cached && !*cached)
				eio_cache_set(t, cached, n);
			merge_state(t, n, c);
			start = this_end + 1;
			goto search_again;
		}
		/* st starts at start and reaches past end: split at end + 1 */
		if (st->bits & exclusive) {
			*failed_start = start;
			ret = 1;
			goto out;
		}
		extent_state *pre = split_state(t, st, end + 1, c);
		set_state_bits(t, pre, bits);
		if (cached && !*cached)
			eio_cache_set(t, cached, pre);
		merge_state(t, pre, c);
		goto out;
	}
search_again:
	if (start > end || start == 0)
		goto out;
	goto again;
out:
	if (cc)
		eio_call_add(cc, c);
	return ret;
}

/* Clear bits on one record; free it when no bit remains, else merge it.
 * Returns the record after it (models clear_state_bit). */
static extent_state *clear_state_bit(eio_tree *t, extent_state *st, uint32_t bits,
				     eio_call *c)
{
	extent_state *nx = eio_next(st);
	acct(t, st, -1);
	st->bits &= ~bits;
	acct(t, st, +1);
	if (st->bits == 0) {
		tree_erase(t, st, c);
	} else {
		rec_state(t, st, REC_BITS);
		merge_state(t, st, c);
		nx = eio_next(st);
	}
	return nx;
}

void eio_clear_bits(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits,
		    extent_state **cached, eio_call *cc, sim *s, simtime_t now)
{
	eio_call local = {0}, *c = &local;
	extent_state *st;
	int cleared_lock = 0;
	assert(start <= end);
again:
	if (cached && *cached) {
		extent_state *cs = *cached;
		*cached = NULL;
		cached = NULL;
		if (cs->in_tree && cs->start <= start && cs->end > start) {
			c->cache_hits++;
			st = cs;
			eio_state_put(t, cs);
			goto hit_next;
		}
		eio_state_put(t, cs);
	}
	st = tree_search(t, start, c);
	if (!st)
		goto out;
hit_next:
	if (st->start > end)
		goto out;
	c->records++;
	{
		uint64_t last_end = st->end;
		if (!(st->bits & bits)) {
			st = eio_next(st);
			goto next;
		}
		if (st->bits & bits & EXTENT_LOCKED)
			cleared_lock = 1;
		if (st->start < start) {
			split_state(t, st, start, c);
			if (last_end <= end) {
				st = clear_state_bit(t, st, bits, c);
				goto next;
			}
			goto search_again;
		}
		if (st->start <= end && st->end > end) {
			extent_state *pre = split_state(t, st, end + 1, c);
			clear_state_bit(t, pre, bits, c);
			goto out;
		}
		st = clear_state_bit(t, st, bits, c);
	next:
		if (last_end == EIO_OFF_MAX)
			goto out;
		start = last_end + 1;
		if (start <= end && st)
			goto hit_next;
	}
search_again:
	if (start > end)
		goto out;
	goto again;
out:
	if (cached && *cached) {
		eio_state_put(t, *cached);
		*cached = NULL;
	}
	if (cleared_lock && s)
		waitq_wake_all(s, &t->lock_waiters, now);
	if (cc)
		eio_call_add(cc, c);
}

void eio_clear_run(eio_tree *t, uint64_t start, uint64_t step, uint64_t n, uint32_t bits,
		   eio_call *cc, sim *s, simtime_t now)
{
	if (!n)
		return;
	extent_state *st = NULL;
	uint64_t last = 0;
	/* (recording lists each split and removal: then make the calls) */
	if (step && (EIO_OFF_MAX - start) / step >= n && !rec_on(t)) {
		last = start + n * step - 1;
		st = tree_search(t, start, NULL);
	}
	if (!st || st->start != start || st->end < last || (st->bits & ~bits)) {
		for (uint64_t i = 0; i < n; i++)
			eio_clear_bits(t, start + i * step, start + (i + 1) * step - 1, bits, NULL,
				       cc, s, now);
		return;
	}
	/*
	 * Each call descends to st (which starts where the call does), visits
	 * it, splits the piece [start, start + step - 1] off (one record
	 * allocated: a treap priority drawn) unless st ends there, and frees
	 * the piece, whose bits all go. The tree holds as many records at
	 * every descent as at the first.
	 */
	eio_call c = {0};
	uint64_t splits = st->end > last ? n : n - 1;
	c.descents = n;
	c.nodes = n * (uint64_t)eio_depth(t->nrecords);
	c.records = n;
	c.allocs = splits;
	c.frees = n;
	for (uint64_t i = 0; i < splits; i++)
		eio_rand(t);
	int cleared_lock = (st->bits & bits & EXTENT_LOCKED) != 0;
	if (st->end > last) {
		acct(t, st, -1);
		st->start = last + 1;
		acct(t, st, +1);
		/* the predecessor ended before `start`: no longer adjacent */
		set_adj(st, 0);
	} else {
		eio_call e = {0};
		tree_erase(t, st, &e); /* its free is counted above */
	}
	if (cleared_lock && s)
		waitq_wake_all(s, &t->lock_waiters, now);
	if (cc)
		eio_call_add(cc, &c);
}

uint64_t eio_count_range_bits(eio_tree *t, uint64_t *start, uint64_t search_end,
			      uint64_t max_bytes, uint32_t bits, int contig,
			      extent_state **cached, eio_call *cc)
{
	eio_call local = {0}, *c = &local;
	uint64_t cur_start = *start, total = 0, last = 0;
	int found = 0;
	extent_state *st = NULL, *last_visited = NULL;

	if (search_end <= cur_start)
		goto out;
	if (cached && *cached && (*cached)->in_tree) {
		extent_state *cs = *cached;
		if (cs->start <= cur_start && cs->end >= cur_start) {
			st = cs;
		} else if (cs->start > cur_start) {
			extent_state *pv = eio_prev(cs);
			if (!pv)
				st = cs;
			else if (pv->start <= cur_start)
				st = pv; /* it or the cached record is the first to
					  * end at or after cur_start */
		}
		if (st)
			c->cache_hits++;
		else
			c->cache_misses++;
	} else if (cached) {
		c->cache_misses++;
	}
	if (!st)
		st = tree_search(t, cur_start, c);
	while (st) {
		c->records++;
		last_visited = st;
		if (st->start > search_end)
			break;
		if (contig && found && st->start > last + 1)
			break;
		if (st->end >= cur_start && (st->bits & bits) == bits) {
			uint64_t s0 = st->start > cur_start ? st->start : cur_start;
			uint64_t e0 = st->end < search_end ? st->end : search_end;
			total += e0 + 1 - s0;
			if (!found) {
				*start = s0;
				found = 1;
			}
			last = st->end;
			if (total >= max_bytes)
				break;
		} else if (contig && found) {
			break;
		}
		st = eio_next(st);
	}
	if (cached && last_visited)
		eio_cache_set(t, cached, last_visited);
out:
	if (cc)
		eio_call_add(cc, c);
	return total;
}

int eio_find_first_bit(eio_tree *t, uint64_t start, uint32_t bits,
		       uint64_t *out_start, uint64_t *out_end, eio_call *cc)
{
	eio_call local = {0}, *c = &local;
	int ret = 1;
	extent_state *st = tree_search(t, start, c);
	for (; st; st = eio_next(st)) {
		c->records++;
		if (st->bits & bits) {
			*out_start = st->start;
			*out_end = st->end;
			ret = 0;
			break;
		}
	}
	if (cc)
		eio_call_add(cc, c);
	return ret;
}

int eio_test_any(eio_tree *t, uint64_t start, uint64_t end, uint32_t bits)
{
	for (extent_state *st = tree_search(t, start, NULL); st && st->start <= end;
	     st = eio_next(st))
		if (st->bits & bits)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* order statistics                                                    */

/*
 * The order statistics of a range [start, end], one descent per end:
 * records with end < start (*n0, their adjacency flags *a0) and the first
 * record after them (*first: the first ending at or after start, or NULL);
 * records with start <= end (*n1, *a1) and the last of them (*last, or
 * NULL). Ranges are disjoint and sorted, so both ends order records alike.
 */
typedef struct range_ranks {
	uint64_t n0, a0, n1, a1;
	extent_state *first, *last;
} range_ranks;

static void rank_range(const eio_tree *t, uint64_t start, uint64_t end, range_ranks *r)
{
	uint64_t k = 0, a = 0;
	extent_state *best = NULL;
	for (extent_state *x = t->root; x;) {
		if (x->end < start) {
			k += cnt_of(x->left) + 1;
			a += adj_of(x->left) + x->adj;
			x = x->right;
		} else {
			best = x;
			x = x->left;
		}
	}
	r->n0 = k;
	r->a0 = a;
	r->first = best;
	k = a = 0;
	best = NULL;
	for (extent_state *x = t->root; x;) {
		if (x->start <= end) {
			k += cnt_of(x->left) + 1;
			a += adj_of(x->left) + x->adj;
			best = x;
			x = x->right;
		} else {
			x = x->left;
		}
	}
	r->n1 = k;
	r->a1 = a;
	r->last = best;
}

/* Records in the range and adjacency flags among them, from its ranks. */
static void counts_of(const range_ranks *r, uint64_t *records, uint64_t *adjacent)
{
	if (r->n1 <= r->n0) {
		*records = 0;
		*adjacent = 0;
		return;
	}
	*records = r->n1 - r->n0;
	/* adjacency flags of records n0+1..n1-1 (the first one's predecessor
	 * lies outside the range) */
	uint64_t adj = r->a1 - r->a0;
	if (r->first && r->first->adj)
		adj--;
	*adjacent = adj;
}

void eio_range_counts(eio_tree *t, uint64_t start, uint64_t end,
		      uint64_t *records, uint64_t *adjacent)
{
	range_ranks r;
	rank_range(t, start, end, &r);
	counts_of(&r, records, adjacent);
}

void eio_lock_pass_cost(eio_tree *t, uint64_t start, uint64_t end,
			eio_call *lock, eio_call *unlock)
{
	uint64_t k, adj;
	range_ranks r;
	rank_range(t, start, end, &r);
	counts_of(&r, &k, &adj);
	uint64_t n = t->nrecords;
	eio_call L = {0}, U = {0};
	extent_state *first = r.first;
	if (k == 0) {
		/* one descent finds nothing in range, one record goes in; the
		 * unlock starts at it (the cached state) and frees it */
		L.descents = 1;
		L.nodes = eio_depth(n);
		L.records = first ? 1 : 0;
		L.allocs = 1;
		U.cache_hits = 1;
		U.records = 1;
		U.frees = 1;
		goto done;
	}
	/* the last record starting at or before `end`, and whether any
	 * record follows it */
	extent_state *lastr = r.last;
	int beyond = r.n1 < n;
	uint64_t hs = first->start < start;      /* head record split */
	uint64_t hg = first->start > start;      /* head gap */
	uint64_t ts = lastr->end > end;          /* tail record split */
	uint64_t tg = lastr->end < end;          /* tail gap */
	uint64_t over = (k == 1 && hs && ts);    /* one record covers it all */
	uint64_t gi = (k - 1) - adj;             /* gaps between records */
	/*
	 * Lock (set_extent_bit): the first descent; per gap between records a
	 * descent that meets the next record and a descent after filling the
	 * gap; a head gap costs one more descent and visit; a tail gap is
	 * found by one descent (visiting the record beyond, if any); adjacent
	 * records are walked in order.
	 */
	L.descents = 1 + 2 * gi + hg + tg + over;
	L.records = k + gi + hg + (tg && beyond ? 1 : 0) + over;
	L.allocs = gi + hg + tg + hs + ts;
	L.nodes = L.descents * (uint64_t)eio_depth(n + L.allocs / 2);
	/*
	 * Unlock (__clear_extent_bit from the cached first record): one walk
	 * over every record now in the range; the gap records lose their only
	 * bit and are freed; the pieces split at the edges merge back.
	 */
	U.cache_hits = 1;
	U.records = k + gi + hg + tg;
	U.frees = gi + hg + tg + hs + ts;
done:
	if (lock)
		eio_call_add(lock, &L);
	if (unlock)
		eio_call_add(unlock, &U);
}

/* ------------------------------------------------------------------ */

static int check_sub(const extent_state *x, const extent_state *parent, int *bad)
{
	if (!x)
		return 0;
	if (x->parent != parent)
		(*bad)++;
	if (parent && x->prio > parent->prio)
		(*bad)++;
	int n = 1 + check_sub(x->left, x, bad) + check_sub(x->right, x, bad);
	uint32_t a = x->adj + adj_of(x->left) + adj_of(x->right);
	if ((uint32_t)n != x->cnt || a != x->adj_cnt)
		(*bad)++;
	return n;
}

int eio_check(const eio_tree *t)
{
	int bad = 0;
	int n = check_sub(t->root, NULL, &bad);
	if ((uint32_t)n != t->nrecords)
		bad++;
	const extent_state *prev = NULL;
	for (extent_state *x = eio_first_from((eio_tree *)t, 0); x; x = eio_next(x)) {
		if (x->end < x->start || x->bits == 0 || !x->in_tree)
			bad++;
		if (prev) {
			if (prev->end >= x->start)
				bad++;
			int a = prev->end + 1 == x->start;
			if (a != x->adj)
				bad++;
			if (a && prev->bits == x->bits && !(x->bits & EXTENT_LOCKED))
				bad++;
		} else if (x->adj) {
			bad++;
		}
		prev = x;
	}
	return bad;
}
