/* test_items.c - file extent items (insert, overwrite splitting an extent,
 * truncate, lookup, iteration, inline), checksum runs merging and their
 * deletion when the last reference to a data extent goes, inode items. */
#include "t.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"

static fs_info *mkfs(sim **sp)
{
	*sp = sim_create(7, 0);
	fs_info *fs = NULL;
	CHECK_EQ(fs_mount(*sp, NULL, NULL, &fs), 0);
	return fs;
}

static uint64_t data_alloc(fs_info *fs, uint64_t len)
{
	uint64_t b = 0;
	CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, len, &b), 0);
	return b;
}

/* Number of file extent items of the inode, and their total bytes. */
static int fe_count(fs_info *fs, struct inode *in, uint64_t *bytes)
{
	fe_iter it;
	fe_info fe;
	int n = 0;
	*bytes = 0;
	for (int r = fe_iter_first(fs, NULL, in, 0, &it, &fe); r == 0; r = fe_iter_next(fs, &it, &fe)) {
		n++;
		*bytes += fe.num_bytes;
	}
	fe_iter_end(&it);
	return n;
}

static uint64_t extent_refs(fs_info *fs, uint64_t bytenr, uint64_t len)
{
	bt_path p;
	bt_path_init(&p, &fs->extent_tree, NULL);
	bt_key k = bt_mkkey(bytenr, BTRFS_EXTENT_ITEM_KEY, len);
	uint64_t refs = 0;
	if (bt_search(&fs->extent_tree, &p, &k, 0, 0) == 0)
		refs = bt_path_item(&p)->v[0];
	bt_path_release(&p);
	return refs;
}

static void test_file_extents(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "f", 0644, &in), 0);
	/* 64 KiB extent at 0 */
	uint64_t b = data_alloc(fs, 65536);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, 65536, b, 65536, FE_REG), 0);
	in->size = 65536;
	CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(extent_refs(fs, b, 65536), 1);
	CHECK_EQ(fs_csum_count(fs, b, 65536), 16);
	/* overwrite the middle: the old extent is split into two references */
	uint64_t b2 = data_alloc(fs, 8192);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 16384, 8192, b2, 8192, FE_REG), 0);
	uint64_t bytes;
	CHECK_EQ(fe_count(fs, in, &bytes), 3);
	CHECK_EQ(bytes, 65536);
	CHECK_EQ(in->nbytes, 65536);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(extent_refs(fs, b, 65536), 2);
	fe_info fe;
	CHECK_EQ(fs_file_extent_lookup(fs, NULL, in, 30000, &fe), 0);
	CHECK_EQ(fe.file_off, 24576);
	CHECK_EQ(fe.disk_bytenr, b);
	CHECK_EQ(fe.extent_offset, 24576);
	CHECK_EQ(fe.num_bytes, 65536 - 24576);
	/* a hole (NO_HOLES: no item) and lookup of the next extent after it */
	uint64_t b3 = data_alloc(fs, 4096);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 1 << 20, 4096, b3, 4096, FE_REG), 0);
	CHECK_EQ(fs_file_extent_lookup(fs, NULL, in, 70000, &fe), 0);
	CHECK_EQ(fe.file_off, 1 << 20);
	CHECK_EQ(fs_file_extent_lookup(fs, NULL, in, (1 << 20) + 4096, &fe), 1);
	/* truncate to 10000: the 64 KiB extent's first piece is trimmed,
	 * everything after goes; extents without references are freed with
	 * their checksums */
	uint64_t dropped;
	CHECK_EQ(fs_drop_extents(fs, NULL, in, 12288, UINT64_MAX, &dropped), 0);
	CHECK_EQ(dropped, 65536 - 12288 + 4096);
	CHECK_EQ(fe_count(fs, in, &bytes), 1);
	CHECK_EQ(bytes, 12288);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(extent_refs(fs, b, 65536), 1);
	CHECK_EQ(extent_refs(fs, b2, 8192), 0);
	CHECK_EQ(fs_csum_count(fs, b2, 8192), 0);
	CHECK_EQ(fs_csum_count(fs, b, 65536), 16); /* still referenced: csums stay */
	/* unlink: everything goes */
	uint64_t used0 = fs->alloc.used[ALLOC_DATA];
	CHECK(used0 > 0);
	CHECK_EQ(vfs_unlink(fs, NULL, root, 256, "f"), 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	CHECK_EQ(fs->alloc.used[ALLOC_DATA], 0);
	CHECK_EQ(fs_csum_count(fs, b, 65536), 0);
	fs_unmount(fs);
	sim_destroy(s);
}

static void test_inline_and_csum_runs(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "small", 0644, &in), 0);
	CHECK_EQ(fs_file_extent_insert_inline(fs, NULL, in, 2048), 0);
	fe_info fe;
	CHECK_EQ(fs_file_extent_lookup(fs, NULL, in, 0, &fe), 0);
	CHECK_EQ(fe.type, FE_INLINE);
	CHECK_EQ(fe.num_bytes, 2048);
	CHECK(fs_file_extent_insert_inline(fs, NULL, in, 4096) < 0);
	/* shrink the inline extent */
	CHECK_EQ(fs_drop_extents(fs, NULL, in, 100, 4096, NULL), 0);
	CHECK_EQ(fs_file_extent_lookup(fs, NULL, in, 0, &fe), 0);
	CHECK_EQ(fe.num_bytes, 100);
	/* 200 files written back in disk order: their csums merge into runs */
	for (int i = 0; i < 200; i++) {
		char name[16];
		snprintf(name, sizeof name, "g%d", i);
		struct inode *g;
		CHECK_EQ(vfs_create(fs, NULL, root, 256, name, 0644, &g), 0);
		uint64_t b = data_alloc(fs, 4096);
		CHECK_EQ(fs_file_extent_insert(fs, NULL, g, 0, 4096, b, 4096, FE_REG), 0);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	uint64_t leaves, nodes, items;
	bt_count_blocks(&fs->csum_tree, &leaves, &nodes, &items);
	CHECK_EQ(items, 1); /* one run of 200 sectors: 800 bytes */
	CHECK(fs_file_extent_insert(fs, NULL, in, 1, 4096, 4096, 4096, FE_REG) < 0);
	fs_unmount(fs);
	sim_destroy(s);
}

static void test_prealloc_no_csum(void)
{
	sim *s;
	fs_info *fs = mkfs(&s);
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	struct inode *in;
	CHECK_EQ(vfs_create(fs, NULL, root, 256, "p", 0644, &in), 0);
	uint64_t b = data_alloc(fs, 1 << 20);
	CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, 1 << 20, b, 1 << 20, FE_PREALLOC), 0);
	CHECK_EQ(fs_csum_count(fs, b, 1 << 20), 0);
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
	fs_unmount(fs);
	sim_destroy(s);
}

int main(void)
{
	test_file_extents();
	test_inline_and_csum_runs();
	test_prealloc_no_csum();
	T_DONE();
}
