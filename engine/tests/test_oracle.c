/*
 * test_oracle.c - the engine's fs tree against a real one built by
 * mkfs.btrfs --rootdir (btrfs-progs), read back with
 * `btrfs inspect-internal dump-tree -t 5`.
 *
 * For each file set (seed 002's 512 x 2 KiB + 512 x 4 KiB, and the same
 * with 4 KiB in place of 2 KiB):
 *   1. write the files to a temporary directory, build a 256 MiB sparse
 *      image, dump its fs tree and parse it: items by type, inline and
 *      regular file extents, leaves, nodes, and each directory entry
 *      (index, inode number, name) and each DIR_ITEM key;
 *   2. "replay": insert the same items, with the same inode numbers
 *      (mkfs uses the host's st_ino as objectids), in mkfs's order (its
 *      DIR_INDEX order) into an engine fs tree, and compare item counts
 *      (exact), name hashes (exact), leaves (within 10%) and nodes (exact);
 *   3. "kernel": create + write each file through the engine's VFS, as the
 *      kernel's create-then-writeback path does (sequential inode numbers,
 *      appends at the end of the tree): item counts match exactly, leaves
 *      are fewer, because appends fill leaves (push_leaf_left) where mkfs's
 *      scattered inode numbers split leaves in the middle.
 * The replay splits leaves as btrfs-progs' (older) copy of ctree.c does:
 * no pushes into neighbour leaves before splitting for a DIR_ITEM insert
 * (bt_tree.progs_split). With the kernel 5.x rule instead, the 1024x4K set
 * came out 32 leaves against mkfs's 38 on the same runs; with progs' rule
 * 33-35 against 33-39.
 * Tolerance: 10% on leaves. mkfs's own count moves from run to run
 * because the host's inode numbers (hence the insert positions) do:
 * measured 108-112 leaves for 512x2K+512x4K and 33-39 for 1024x4K (the
 * issue quotes 109 and 37); the remaining difference is mkfs's
 * interleaved inode updates and its per-file insert order.
 * Without mkfs.btrfs / btrfs the test prints "skipped" and passes.
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"

#define NTYPES 256

typedef struct dent {
	uint64_t index, ino, size;
	char name[64];
	int inline_fe;
} dent;

typedef struct dumpinfo {
	uint64_t by_type[NTYPES];
	uint64_t leaves, nodes, inl, reg;
	dent *d;
	int nd;
	uint64_t *dir_item_keys;
	char (*dir_item_names)[64];
	int ndi;
} dumpinfo;

static int type_of(const char *s)
{
	static const struct { const char *n; int t; } map[] = {
		{ "INODE_ITEM", BTRFS_INODE_ITEM_KEY }, { "INODE_REF", BTRFS_INODE_REF_KEY },
		{ "XATTR_ITEM", BTRFS_XATTR_ITEM_KEY }, { "DIR_ITEM", BTRFS_DIR_ITEM_KEY },
		{ "DIR_INDEX", BTRFS_DIR_INDEX_KEY }, { "EXTENT_DATA", BTRFS_EXTENT_DATA_KEY },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(s, map[i].n))
			return map[i].t;
	return 255;
}

static int have_tools(void)
{
	return system("command -v mkfs.btrfs >/dev/null 2>&1 && command -v btrfs >/dev/null 2>&1") == 0;
}

/* Parse `dump-tree -t 5` output. */
static int parse_dump(FILE *f, dumpinfo *di)
{
	memset(di, 0, sizeof(*di));
	di->d = calloc(4096, sizeof(dent));
	di->dir_item_keys = calloc(4096, sizeof(uint64_t));
	di->dir_item_names = calloc(4096, 64);
	char line[512], kind[32];
	unsigned long long a, b, c;
	int last_type = -1, in_dir_index = 0, in_dir_item = 0;
	uint64_t last_obj = 0, last_off = 0;
	uint64_t sizes_ino[4096];
	uint64_t sizes[4096];
	int nsz = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "leaf %llu items %llu", &a, &b) == 2) {
			di->leaves++;
			continue;
		}
		if (sscanf(line, "node %llu level %llu items %llu", &a, &b, &c) == 3) {
			di->nodes++;
			continue;
		}
		if (sscanf(line, "\titem %llu key (%llu %31s %llu)", &a, &b, kind, &c) == 4) {
			int t = type_of(kind);
			di->by_type[t]++;
			last_type = t;
			last_obj = b;
			last_off = c;
			in_dir_index = t == BTRFS_DIR_INDEX_KEY;
			in_dir_item = t == BTRFS_DIR_ITEM_KEY;
			continue;
		}
		if (strstr(line, "type 0 (inline)"))
			di->inl++;
		if (strstr(line, "type 1 (regular)"))
			di->reg++;
		if (last_type == BTRFS_INODE_ITEM_KEY &&
		    sscanf(line, " generation %llu transid %llu size %llu", &a, &b, &c) == 3 && nsz < 4096) {
			sizes_ino[nsz] = last_obj;
			sizes[nsz++] = c;
		}
		if (in_dir_index && sscanf(line, " location key (%llu", &a) == 1 && di->nd < 4096) {
			di->d[di->nd].index = last_off;
			di->d[di->nd].ino = a;
		}
		char nm[64];
		if (sscanf(line, " name: %63s", nm) == 1) {
			if (in_dir_index && di->nd < 4096) {
				snprintf(di->d[di->nd].name, sizeof di->d[0].name, "%s", nm);
				di->nd++;
			} else if (in_dir_item && di->ndi < 4096) {
				di->dir_item_keys[di->ndi] = last_off;
				snprintf(di->dir_item_names[di->ndi], 64, "%s", nm);
				di->ndi++;
			}
			in_dir_index = in_dir_item = 0;
		}
	}
	for (int i = 0; i < di->nd; i++)
		for (int j = 0; j < nsz; j++)
			if (sizes_ino[j] == di->d[i].ino)
				di->d[i].size = sizes[j];
	return 0;
}

static void dump_free(dumpinfo *di)
{
	free(di->d);
	free(di->dir_item_keys);
	free(di->dir_item_names);
}

static int cmp_index(const void *x, const void *y)
{
	const dent *a = x, *b = y;
	return a->index < b->index ? -1 : a->index > b->index;
}

/* Counts of the engine's fs tree 5. */
static void engine_counts(fs_info *fs, dumpinfo *e)
{
	memset(e, 0, sizeof(*e));
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	bt_count_blocks(tr, &e->leaves, &e->nodes, NULL);
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key k = bt_mkkey(0, 0, 0);
	bt_search(tr, &p, &k, 0, 0);
	for (;;) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		e->by_type[it->key.type]++;
		if (it->key.type == BTRFS_EXTENT_DATA_KEY)
		{
			if (it->aux == FE_INLINE)
				e->inl++;
			else
				e->reg++;
		}
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
}

/* Replay mkfs's insertions with its inode numbers, in its order. */
static void replay(fs_info *fs, dent *d, int n, uint32_t max_inline)
{
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	tr->progs_split = 1;
	for (int i = 0; i < n; i++) {
		uint32_t len = (uint32_t)strlen(d[i].name);
		bt_item it;
		memset(&it, 0, sizeof(it));
		it.v[0] = d[i].size;
		/* mkfs's order per file: add_directory_items (dir item, dir
		 * index, inode ref), add_inode_items, add_file_items */
		bt_key k = bt_mkkey(256, BTRFS_DIR_ITEM_KEY, items_dir_key_hash(d[i].name, len));
		CHECK_EQ(bt_insert(tr, NULL, &k, SZ_DIR_ITEM_BASE + len, &it, NULL), 0);
		k = bt_mkkey(256, BTRFS_DIR_INDEX_KEY, d[i].index);
		CHECK_EQ(bt_insert(tr, NULL, &k, SZ_DIR_ITEM_BASE + len, &it, NULL), 0);
		k = bt_mkkey(d[i].ino, BTRFS_INODE_REF_KEY, 256);
		CHECK_EQ(bt_insert(tr, NULL, &k, SZ_INODE_REF_BASE + len, &it, NULL), 0);
		k = bt_mkkey(d[i].ino, BTRFS_INODE_ITEM_KEY, 0);
		CHECK_EQ(bt_insert(tr, NULL, &k, SZ_INODE_ITEM, &it, NULL), 0);
		k = bt_mkkey(d[i].ino, BTRFS_EXTENT_DATA_KEY, 0);
		if (d[i].size <= max_inline && d[i].size < SECTORSIZE) {
			it.aux = FE_INLINE;
			it.v[1] = d[i].size;
			CHECK_EQ(bt_insert(tr, NULL, &k, SZ_FE_INLINE_BASE + (uint32_t)d[i].size, &it, NULL), 0);
		} else {
			it.aux = FE_REG;
			it.v[0] = 0; /* no data extent behind it: counting only */
			it.v[1] = d[i].size;
			CHECK_EQ(bt_insert(tr, NULL, &k, SZ_FE_REG, &it, NULL), 0);
		}
	}
}

/* The kernel's path: create, write, writeback at ordered completion. */
static void kernel_path(fs_info *fs, dent *d, int n)
{
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	for (int i = 0; i < n; i++) {
		struct inode *in;
		CHECK_EQ(vfs_create(fs, NULL, root, 256, d[i].name, 0644, &in), 0);
		if (d[i].size <= fs->opts.max_inline && d[i].size < SECTORSIZE) {
			CHECK_EQ(fs_file_extent_insert_inline(fs, NULL, in, d[i].size), 0);
		} else {
			uint64_t len = (d[i].size + SECTORSIZE - 1) / SECTORSIZE * SECTORSIZE, b;
			CHECK_EQ(alloc_extent(&fs->alloc, ALLOC_DATA, len, &b), 0);
			CHECK_EQ(fs_file_extent_insert(fs, NULL, in, 0, len, b, len, FE_REG), 0);
		}
		in->size = d[i].size;
		CHECK_EQ(fs_inode_update(fs, NULL, in), 0);
	}
	CHECK_EQ(fs_commit(fs, NULL), 0);
	CHECK_EQ(check_fs(fs), 0);
}

static void one_set(const char *label, int small_bytes)
{
	char dir[] = "/tmp/lab-oracle-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	char path[512], cmd[1024];
	snprintf(path, sizeof path, "%s/root", dir);
	CHECK_EQ(mkdir(path, 0755), 0);
	static char buf[4096];
	memset(buf, 'x', sizeof buf);
	for (int i = 1; i <= 512; i++) {
		snprintf(path, sizeof path, "%s/root/file_inline_%d", dir, i);
		FILE *f = fopen(path, "w");
		fwrite(buf, 1, (size_t)small_bytes, f);
		fclose(f);
		snprintf(path, sizeof path, "%s/root/file_reg_%d", dir, i);
		f = fopen(path, "w");
		fwrite(buf, 1, 4096, f);
		fclose(f);
	}
	snprintf(cmd, sizeof cmd,
		 "cd %s && truncate -s 256M img && mkfs.btrfs -q -f -n 16384 --rootdir root img >/dev/null 2>&1 && "
		 "btrfs inspect-internal dump-tree -t 5 img > dump.txt 2>/dev/null", dir);
	int rc = system(cmd);
	CHECK_EQ(rc, 0);
	snprintf(path, sizeof path, "%s/dump.txt", dir);
	FILE *f = fopen(path, "r");
	dumpinfo real;
	memset(&real, 0, sizeof(real));
	if (f) {
		parse_dump(f, &real);
		fclose(f);
	}
	CHECK_EQ(real.nd, 1024);
	qsort(real.d, (size_t)real.nd, sizeof(dent), cmp_index);

	/* name hashes: every DIR_ITEM key equals the engine's crc32c */
	int hash_ok = 0;
	for (int i = 0; i < real.ndi; i++) {
		const char *nm = real.dir_item_names[i];
		hash_ok += items_dir_key_hash(nm, (uint32_t)strlen(nm)) == real.dir_item_keys[i];
	}
	CHECK_EQ(hash_ok, real.ndi);
	CHECK_EQ(real.ndi, 1024);

	sim *s = sim_create(1, 0);
	fs_info *fs;
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	replay(fs, real.d, real.nd, fs->opts.max_inline);
	dumpinfo rep;
	engine_counts(fs, &rep);
	fs_unmount(fs);
	CHECK_EQ(fs_mount(s, NULL, NULL, &fs), 0);
	kernel_path(fs, real.d, real.nd);
	dumpinfo ker;
	engine_counts(fs, &ker);
	fs_unmount(fs);
	sim_destroy(s);

	static const int types[] = { BTRFS_INODE_ITEM_KEY, BTRFS_INODE_REF_KEY, BTRFS_DIR_ITEM_KEY,
				     BTRFS_DIR_INDEX_KEY, BTRFS_EXTENT_DATA_KEY };
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		CHECK_EQ(rep.by_type[types[i]], real.by_type[types[i]]);
		CHECK_EQ(ker.by_type[types[i]], real.by_type[types[i]]);
	}
	CHECK_EQ(rep.inl, real.inl);
	CHECK_EQ(rep.reg, real.reg);
	CHECK_EQ(ker.inl, real.inl);
	CHECK_EQ(ker.reg, real.reg);
	CHECK_NEAR((double)rep.leaves, (double)real.leaves, 0.10);
	CHECK_EQ(rep.nodes, real.nodes);
	CHECK(ker.leaves <= rep.leaves);
	printf("oracle %-22s mkfs.btrfs: %3llu leaves %llu node(s), %llu file extents (%llu inline)\n"
	       "       %-22s engine replay (mkfs order): %3llu leaves %llu node(s)\n"
	       "       %-22s engine kernel path (create+write): %3llu leaves %llu node(s)\n",
	       label, (unsigned long long)real.leaves, (unsigned long long)real.nodes,
	       (unsigned long long)(real.inl + real.reg), (unsigned long long)real.inl, "",
	       (unsigned long long)rep.leaves, (unsigned long long)rep.nodes, "",
	       (unsigned long long)ker.leaves, (unsigned long long)ker.nodes);
	dump_free(&real);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	if (!have_tools()) {
		printf("tests/test_oracle.c: skipped (mkfs.btrfs / btrfs not installed)\n");
		T_DONE();
	}
	FILE *v = popen("mkfs.btrfs --version 2>&1", "r");
	char ver[128] = "";
	if (v) {
		if (!fgets(ver, sizeof ver, v))
			ver[0] = 0;
		pclose(v);
	}
	printf("oracle: %s", ver);
	one_set("512x2K + 512x4K", 2048);
	one_set("1024x4K", 4096);
	T_DONE();
}
