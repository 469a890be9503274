/* test_check.c - the invariant checker finds each kind of damage it claims
 * to find (a checker that cannot fail is a defect), and runs registered
 * checks from other subsystems. */
#include "t.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"

static fs_info *populated(sim **sp)
{
	*sp = sim_create(11, 0);
	fs_info *fs = NULL;
	CHECK_EQ(fs_mount(*sp, NULL, NULL, &fs), 0);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	for (int i = 0; i < 600; i++) {
		char name[16];
		snprintf(name, sizeof name, "f%d", i);
		struct inode *in;
		CHECK_EQ(vfs_create(fs, NULL, root, 256, name, 0644, &in), 0);
		uint64_t b;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 8192, &b), 0);
		CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, 8192, b, 8192, FE_REG), 0);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	return fs;
}

/* First leaf item of the given type in tree tr. */
static bt_item *find_item(bt_tree *tr, uint8_t type, bt_node **leaf)
{
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(0, 0, 0);
	bt_search(tr, &p, &k, 0, 0);
	bt_item *found = NULL;
	for (;;) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		if (it->key.type == type) {
			found = it;
			*leaf = p.nodes[0];
			break;
		}
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
	return found;
}

static int extra_calls;
static int extra_check(fs_info *fs, void *ctx)
{
	(void)fs;
	extra_calls++;
	return *(int *)ctx;
}

/* lab_check between the steps of a subvolume drop (fuzz finding
 * api-crash-fe721006: the in-memory inodes of a root being dropped were
 * looked up in its half-freed tree). The kernel's rules: a deleted
 * subvolume's inodes leave memory (btrfs_prune_dentries), and the checker
 * walks what is left of a tree being dropped (the drop's pointers gone, as
 * btrfs check starts at drop_progress). Both variants, after with a small
 * threshold so that commits (and the qgroup recount) fall mid-drop; one
 * event per step so that checks fall between drop iterations. Without
 * the first rule the check crashes, without the second it reports the
 * dropped pointers as damage. */
static void test_check_during_drop(void)
{
	for (int v = 0; v < 2; v++) {
		lab_run *r = NULL;
		char *msg = NULL;
		CHECK_EQ(lab_open("qgroup-drop", v ? "after" : "before",
				  v ? "subvols=2\nfiles=256\nthreshold=64" : "subvols=2\nfiles=256", 1,
				  0, &r, &msg),
			 0);
		lab_free(msg);
		if (!r)
			continue;
		int done = 0, mid = 0, fails = 0;
		while (!done && lab_step(r, 1, &done) == 0) {
			double p = lab_progress(r);
			mid += p > 0 && p < 0.95; /* a drop part way */
			fails += lab_check(r) != 0;
		}
		CHECK(done);
		CHECK(mid > 5);
		CHECK_EQ(fails, 0);
		lab_close(r);
	}
}

/* A deleted subvolume keeps no inode in memory: one left there is
 * reported (not looked up in the tree the cleaner frees). */
static void test_dead_root_inodes(fs_info *fs)
{
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	root->dead = 1;
	CHECK(check_fs(fs) >= 600);
	root->dead = 0;
	CHECK_EQ(check_fs(fs), 0);
}

int main(void)
{
	test_check_during_drop();
	sim *s;
	fs_info *fs = populated(&s);
	test_dead_root_inodes(fs);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	bt_node *leaf;

	/* a file extent pointing at a disk extent with another ref count */
	bt_item *fe = find_item(tr, BTRFS_EXTENT_DATA_KEY, &leaf);
	CHECK(fe != NULL);
	uint64_t saved = fe->v[0];
	fe->v[0] += 8192; /* now points at the next file's extent */
	CHECK(check_fs(fs) >= 2); /* one extent lost a ref, one gained */
	fe->v[0] = saved;
	CHECK_EQ(check_fs(fs), 0);

	/* overlapping file extents within one inode */
	saved = fe->v[1];
	fe->v[1] = 1 << 20;
	{
		/* a second extent item of the same inode after it */
		struct inode *in = fs_inode_get(fs_root_lookup(fs, 5), fe->key.objectid);
		uint64_t b;
		fe->v[1] = saved;
		CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, 4096, &b), 0);
		CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 65536, 4096, b, 4096, FE_REG), 0);
		CHECK_EQ(fs_commit(fs, NULL), 0);
		CHECK_EQ(check_fs(fs), 0);
		fe = find_item(tr, BTRFS_EXTENT_DATA_KEY, &leaf);
		fe->v[1] = 1 << 20; /* the first now runs over the second */
		CHECK(check_fs(fs) > 0);
		fe->v[1] = saved;
		CHECK_EQ(check_fs(fs), 0);
	}

	/* a checksum item for sectors no data extent owns */
	bt_item *cs = find_item(&fs->csum_tree, BTRFS_EXTENT_CSUM_KEY, &leaf);
	CHECK(cs != NULL);
	uint32_t csz = cs->size;
	cs->size += 4u * 100000u; /* far past the allocated data */
	leaf->used += 4u * 100000u;
	CHECK(check_fs(fs) > 0);
	cs->size = csz;
	leaf->used -= 4u * 100000u;
	CHECK_EQ(check_fs(fs), 0);

	/* a tree block whose extent item disappeared */
	bt_item *mi = find_item(&fs->extent_tree, BTRFS_METADATA_ITEM_KEY, &leaf);
	CHECK(mi != NULL);
	uint8_t ty = mi->key.type;
	mi->key.type = BTRFS_EXTENT_ITEM_KEY; /* now claims to be a data extent */
	CHECK(check_fs(fs) > 0);
	mi->key.type = ty;
	CHECK_EQ(check_fs(fs), 0);

	/* a child generation newer than its parent's pointer */
	bt_node *r = tr->root;
	if (r->level) {
		uint64_t g = r->ptrs[0].gen;
		r->ptrs[0].gen = g + 1;
		CHECK(check_fs(fs) > 0);
		r->ptrs[0].gen = g;
	}
	/* an empty non-root leaf */
	if (r->level) {
		bt_node *c = r->ptrs[0].child;
		int n = c->nritems;
		c->nritems = 0;
		CHECK(check_fs(fs) > 0);
		c->nritems = n;
	}
	CHECK_EQ(check_fs(fs), 0);

	/* an in-memory inode without its inode item */
	struct inode *ghost;
	CHECK_EQ(fs_inode_new(fs_root_lookup(fs, 5), S_IFREG_ | 0644, &ghost), 0);
	CHECK(check_fs(fs) > 0);
	fs_inode_forget(fs_root_lookup(fs, 5), ghost);
	CHECK_EQ(check_fs(fs), 0);

	/* queued refs not yet run are reported, not silently compared */
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, fs_root_lookup(fs, 5), 256, "late", 0644, &in), 0);
	CHECK(check_fs(fs) > 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);

	/* registered checks run and their failures count */
	int verdict = 0;
	CHECK_EQ(check_register(fs, "extra", extra_check, &verdict), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(extra_calls, 1);
	verdict = 3;
	CHECK_EQ(check_fs(fs), 3);
	CHECK(check_last_error(fs)[0] != 0);
	fs_unmount(fs);
	sim_destroy(s);
	T_DONE();
}
