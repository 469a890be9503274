/* test_btree.c - the COW B-tree: search/insert/delete, leaf fill from
 * splits and pushes, COW once per transaction, snapshots sharing blocks,
 * iteration, item resize, and the checker catching a corrupted tree. */
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "btree.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "strbuf.h"

static fs_info *mkfs(sim **sp)
{
	*sp = sim_create(1, 0);
	fs_info *fs = NULL;
	int r = fs_mount(*sp, NULL, NULL, &fs);
	CHECK_EQ(r, 0);
	return fs;
}

static void done(sim *s, fs_info *fs)
{
	fs_unmount(fs);
	sim_destroy(s);
}

/* Insert items of `size` bytes with keys (obj, 1, 0) for obj in order. */
static int ins(bt_tree *tr, uint64_t obj, uint32_t size)
{
	bt_key k = bt_mkkey(obj, 1, 0);
	bt_item it = {0};
	it.v[0] = obj * 7;
	return bt_insert(tr, NULL, &k, size, &it, NULL);
}

static double avg_leaf_fill(bt_tree *tr)
{
	uint64_t leaves, nodes, items;
	bt_count_blocks(tr, &leaves, &nodes, &items);
	/* sum used over leaves via a walk of the first..last leaf */
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(0, 0, 0);
	bt_search(tr, &p, &k, 0, 0);
	double used = 0;
	uint64_t n = 0;
	do {
		used += p.nodes[0]->used;
		n++;
	} while (bt_next_leaf(tr, &p) == 0);
	bt_path_release(&p);
	CHECK_EQ(n, leaves);
	return used / (double)n / BT_LEAF_DATA_SIZE;
}

static void test_insert_search_iterate(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	struct btrfs_root *r5 = fs_root_lookup(fs, 5);
	bt_tree *tr = &r5->tree;
	prng rng;
	prng_seed(&rng, 42);
	enum { N = 20000 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	for (int i = 0; i < N; i++) {
		keys[i] = 1000 + prng_below(&rng, 1u << 30);
		int r = ins(tr, keys[i], 40 + (uint32_t)(keys[i] % 100));
		CHECK(r == 0 || r == 1);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	/* every key is found with its payload */
	int found = 0;
	for (int i = 0; i < N; i++) {
		bt_path p;
		bt_path_init(&p, tr, NULL);
		bt_key k = bt_mkkey(keys[i], 1, 0);
		if (bt_search(tr, &p, &k, 0, 0) == 0 && bt_path_item(&p)->v[0] == keys[i] * 7)
			found++;
		bt_path_release(&p);
	}
	CHECK_EQ(found, N);
	/* in-order iteration sees strictly increasing keys */
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k0 = bt_mkkey(1000, 0, 0);
	bt_search(tr, &p, &k0, 0, 0);
	uint64_t last = 0, n = 0;
	int ordered = 1;
	for (;;) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		if (it->key.objectid >= 1000) {
			if (it->key.objectid <= last)
				ordered = 0;
			last = it->key.objectid;
			n++;
		}
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
	CHECK(ordered);
	uint64_t leaves, nodes, items;
	bt_count_blocks(tr, &leaves, &nodes, &items);
	CHECK_EQ(n, items - 2); /* minus the root dir's inode item and ref */
	CHECK(bt_tree_height(tr) >= 2);
	/* random inserts leave leaves between half and fully used */
	double f = avg_leaf_fill(tr);
	CHECK(f > 0.5 && f < 0.95);
	printf("random inserts: %llu leaves, %llu nodes, height %d, fill %.2f\n",
	       (unsigned long long)leaves, (unsigned long long)nodes, bt_tree_height(tr), f);
	/* delete everything again: the tree shrinks back, the checker agrees */
	for (int i = 0; i < N; i++) {
		bt_key k = bt_mkkey(keys[i], 1, 0);
		bt_delete(tr, NULL, &k);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	bt_count_blocks(tr, &leaves, &nodes, &items);
	CHECK_EQ(items, 2);
	CHECK_EQ(leaves, 1);
	CHECK_EQ(bt_tree_height(tr), 1);
	free(keys);
	done(s, fs);
}

static void test_sequential_fill(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 30000; i++)
		CHECK_EQ(ins(tr, 1000 + i, 60), 0);
	double f = avg_leaf_fill(tr);
	printf("sequential appends: fill %.3f\n", f);
	CHECK(f > 0.95);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	done(s, fs);
}

static void test_cow_once_per_transaction(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 5000; i++)
		ins(tr, 1000 + i, 100);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	int h = bt_tree_height(tr);
	uint64_t c0 = tr->cows;
	uint64_t old_root = tr->root->bytenr;
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(2500, 1, 0);
	CHECK_EQ(bt_search(tr, &p, &k, 0, 1), 0);
	bt_path_item(&p)->v[1] = 99;
	bt_path_release(&p);
	CHECK_EQ(tr->cows - c0, (uint64_t)h);        /* the whole path, once */
	CHECK(tr->root->bytenr != old_root);
	bt_path_init(&p, tr, NULL);
	CHECK_EQ(bt_search(tr, &p, &k, 0, 1), 0);
	bt_path_release(&p);
	CHECK_EQ(tr->cows - c0, (uint64_t)h);        /* same transaction: no new COW */
	/* the commit root still shows the old block */
	CHECK_EQ(tr->commit_root->bytenr, old_root);
	CHECK(tr->commit_root->dead);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(tr->commit_root, tr->root);
	done(s, fs);
}

static void test_extend_truncate(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 400; i++)
		ins(tr, 1000 + i, 100);
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(1200, 1, 0);
	CHECK_EQ(bt_search(tr, &p, &k, 3000, 1), 0);
	CHECK_EQ(bt_extend_item(tr, &p, 3000), 0);
	CHECK_EQ(bt_path_item(&p)->size, 3000);
	bt_truncate_item(tr, &p, 10);
	CHECK_EQ(bt_path_item(&p)->size, 10);
	bt_path_release(&p);
	CHECK_EQ(bt_insert(tr, NULL, &k, 10, NULL, NULL), 1); /* exists */
	CHECK(bt_insert(tr, NULL, &k, BT_MAX_ITEM_SIZE + 1, NULL, NULL) < 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	done(s, fs);
}

static void test_snapshot_share(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 3000; i++)
		ins(tr, 1000 + i, 150);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	struct btrfs_root *snap;
	CHECK_EQ(fs_root_create(fs, NULL, 300, &snap), 0);
	CHECK_EQ(bt_copy_root(tr, &snap->tree, NULL), 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	/* change the source: the snapshot keeps the old value */
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(1500, 1, 0);
	CHECK_EQ(bt_search(tr, &p, &k, 0, 1), 0);
	bt_path_item(&p)->v[0] = 1;
	bt_path_release(&p);
	bt_delete(tr, NULL, &(bt_key){ 1501, 0, 1 });
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	bt_path_init(&p, &snap->tree, NULL);
	CHECK_EQ(bt_search(&snap->tree, &p, &k, 0, 0), 0);
	CHECK_EQ(bt_path_item(&p)->v[0], 1500 * 7);
	bt_path_release(&p);
	bt_path_init(&p, &snap->tree, NULL);
	CHECK_EQ(bt_search(&snap->tree, &p, &(bt_key){ 1501, 0, 1 }, 0, 0), 0);
	bt_path_release(&p);
	/* drop the snapshot: shared blocks survive, its own blocks go */
	uint64_t used0 = fs->alloc.used[ALLOC_METADATA];
	bt_free_tree(&snap->tree, NULL);
	snap->deleted = 1;
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK(fs->alloc.used[ALLOC_METADATA] < used0);
	CHECK_EQ(check_fs(fs), 0);
	done(s, fs);
}

static void test_checker_catches_corruption(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 3000; i++)
		ins(tr, 1000 + i, 150);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	/* swap two keys in a leaf */
	bt_node *leaf = tr->root;
	while (leaf->level)
		leaf = leaf->ptrs[1].child;
	bt_key tmp = leaf->items[3].key;
	leaf->items[3].key = leaf->items[4].key;
	leaf->items[4].key = tmp;
	CHECK(check_fs(fs) > 0);
	leaf->items[4].key = leaf->items[3].key;
	leaf->items[3].key = tmp;
	CHECK_EQ(check_fs(fs), 0);
	/* a leaf's used counter lies */
	leaf->used += 25;
	CHECK(check_fs(fs) > 0);
	leaf->used -= 25;
	/* an extent item's ref count is wrong */
	bt_path p;
	bt_path_init(&p, &fs->extent_tree, NULL);
	bt_key k = bt_mkkey(leaf->bytenr, BTRFS_METADATA_ITEM_KEY, 0);
	CHECK_EQ(bt_search(&fs->extent_tree, &p, &k, 0, 0), 0);
	bt_path_item(&p)->v[0] = 2;
	CHECK(check_fs(fs) > 0);
	bt_path_item(&p)->v[0] = 1;
	bt_path_release(&p);
	/* a block group counter drifts */
	fs->alloc.bgs[0].used += 4096;
	CHECK(check_fs(fs) > 0);
	fs->alloc.bgs[0].used -= 4096;
	CHECK_EQ(check_fs(fs), 0);
	done(s, fs);
}

/* Enough items for three levels: node splits on the way in, node
 * merges and root shrinking on the way out, the checker after each phase. */
static void test_three_levels(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	prng rng;
	prng_seed(&rng, 9);
	enum { N = 120000 };
	uint64_t *keys = malloc(N * sizeof(*keys));
	for (int i = 0; i < N; i++) {
		keys[i] = 1000 + prng_below(&rng, 1ull << 40);
		ins(tr, keys[i], 120);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(bt_tree_height(tr), 3);
	/* the front end's snapshot: bounded node list, complete level summary */
	strbuf sb;
	sb_init(&sb);
	bt_snapshot_json(tr, &sb, 10);
	char *js = sb_take(&sb);
	int shown = 0;
	for (const char *q = js; (q = strstr(q, "\"bytenr\"")); q++)
		shown++;
	CHECK_EQ(shown, 10);
	CHECK(strstr(js, "\"levels\":[{\"level\":2,\"count\":1") != NULL);
	CHECK(strstr(js, "\"height\":3") != NULL);
	free(js);
	uint64_t leaves, nodes, items;
	bt_count_blocks(tr, &leaves, &nodes, &items);
	printf("120k random items: %llu leaves, %llu nodes, splits %llu, pushes %llu\n",
	       (unsigned long long)leaves, (unsigned long long)nodes,
	       (unsigned long long)tr->splits, (unsigned long long)tr->pushes);
	for (int i = 0; i < N; i++) {
		bt_key k = bt_mkkey(keys[i], 1, 0);
		bt_delete(tr, NULL, &k);
		if (i == N / 2) {
			CHECK_EQ(fs_commit(fs, NULL), 0);
			CHECK_EQ(check_fs(fs), 0);
		}
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(bt_tree_height(tr), 1);
	CHECK(tr->merges > 0);
	free(keys);
	done(s, fs);
}

/* Items (obj, 2, 0) for obj in [from, to), all of `size` bytes. */
static int mkbatch(bt_item *b, uint64_t from, uint64_t to, uint16_t size)
{
	int n = 0;
	for (uint64_t o = from; o < to; o++, n++) {
		memset(&b[n], 0, sizeof(b[n]));
		b[n].key = bt_mkkey(o, 2, 0);
		b[n].size = size;
		b[n].v[0] = o * 3;
	}
	return n;
}

static int found_v(bt_tree *tr, uint64_t obj, uint8_t type, uint64_t v)
{
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(obj, type, 0);
	int ok = bt_search(tr, &p, &k, 0, 0) == 0 && bt_path_item(&p)->v[0] == v;
	bt_path_release(&p);
	return ok;
}

/* copy_items' batch insert: one search places a run of items; a run stops
 * before a key already in the tree, in the leaf or in the next one; a
 * leaf's worth lands in the middle of a full leaf (a double split). */
static void test_insert_batch(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	for (uint64_t i = 0; i < 3000; i++)
		CHECK_EQ(ins(tr, 1000 + 100 * i, 100), 0);
	CHECK(bt_tree_height(tr) >= 2);
	bt_item *b = calloc(400, sizeof(*b));
	CHECK_EQ(bt_insert_items(tr, NULL, b, 0), LAB_EINVAL);

	/* between two items of one leaf: the whole run, one descent */
	uint64_t v0 = tr->nodes_visited;
	int n = mkbatch(b, 1000 + 100 * 40 + 1, 1000 + 100 * 40 + 30, 60);
	CHECK_EQ(bt_insert_items(tr, NULL, b, n), n);
	CHECK_EQ(tr->nodes_visited - v0, (uint64_t)bt_tree_height(tr));
	for (int i = 0; i < n; i++)
		CHECK(found_v(tr, b[i].key.objectid, 2, b[i].key.objectid * 3));

	/* a run across an existing key (1000 + 100*51, type 1 < type 2 of
	 * the same objectid, so (5100, 2) sorts after it: use type 0 keys) */
	n = 0;
	for (uint64_t o = 1000 + 100 * 50 + 90; o < 1000 + 100 * 51 + 10; o++, n++) {
		memset(&b[n], 0, sizeof(b[n]));
		b[n].key = bt_mkkey(o, 1, 0);
		b[n].size = 40;
		b[n].v[0] = o * 5;
	}
	/* o = 6100 exists: 10 go in, then the existing one stops the next */
	CHECK_EQ(bt_insert_items(tr, NULL, b, n), 10);
	CHECK_EQ(bt_insert_items(tr, NULL, b + 10, n - 10), 0);
	CHECK(found_v(tr, 1000 + 100 * 51, 1, (1000 + 100 * 51) * 7));
	CHECK_EQ(bt_insert_items(tr, NULL, b + 11, n - 11), n - 11);

	/* past a leaf's last item: the next leaf's first key bounds the run */
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(1000 + 100 * 1500, 1, 0);
	CHECK_EQ(bt_search(tr, &p, &k, 0, 0), 0);
	uint64_t last = p.nodes[0]->items[p.nodes[0]->nritems - 1].key.objectid;
	CHECK_EQ(bt_next_leaf(tr, &p), 0);
	uint64_t next = p.nodes[0]->items[0].key.objectid;
	bt_path_release(&p);
	CHECK_EQ(next, last + 100);
	n = mkbatch(b, last + 50, next + 20, 30); /* (next, 2) sorts after (next, 1) */
	int got = bt_insert_items(tr, NULL, b, n);
	CHECK_EQ(got, 50);
	CHECK_EQ(bt_insert_items(tr, NULL, b + got, n - got), n - got);

	/* a run of 99 (up to the next existing key) in the middle of a
	 * full leaf: the leaf splits around the insert position */
	uint64_t sp0 = tr->splits;
	n = mkbatch(b, 1000 + 100 * 2000 + 1, 1000 + 100 * 2000 + 1 + 150, 80);
	CHECK_EQ(bt_insert_items(tr, NULL, b, n), 99);
	CHECK(tr->splits > sp0);
	CHECK_EQ(bt_insert_items(tr, NULL, b + 99, n - 99), n - 99);
	for (int i = 0; i < n; i++)
		CHECK(found_v(tr, b[i].key.objectid, 2, b[i].key.objectid * 3));
	/* more than a leaf holds: what fits one leaf goes in (16283 / 225) */
	for (int i = 0; i < 200; i++) {
		memset(&b[i], 0, sizeof(b[i]));
		b[i].key = bt_mkkey(1000 + 100 * 2500 + 1, 2, (uint64_t)i);
		b[i].size = 200;
	}
	CHECK_EQ(bt_insert_items(tr, NULL, b, 200), 72);
	CHECK_EQ(bt_insert_items(tr, NULL, b + 72, 128), 72);
	CHECK_EQ(bt_insert_items(tr, NULL, b + 144, 56), 56);
	/* out of order: only the sorted prefix */
	b[0].key = bt_mkkey(1000 + 100 * 2600 + 5, 2, 0);
	b[1].key = bt_mkkey(1000 + 100 * 2600 + 3, 2, 0);
	CHECK_EQ(bt_insert_items(tr, NULL, b, 2), 1);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	free(b);
	done(s, fs);
}

int main(void)
{
	test_insert_batch();
	test_three_levels();
	test_insert_search_iterate();
	test_sequential_fill();
	test_cow_once_per_transaction();
	test_extend_truncate();
	test_snapshot_share();
	test_checker_catches_corruption();
	T_DONE();
}
