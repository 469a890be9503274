/*
 * test_sandbox_oracle.c - a sandbox script's fs tree against the real one:
 * after a script without power cuts (and a final sync), the engine's fs
 * tree holds the same items, type by type, as mkfs.btrfs --rootdir makes
 * for the same files, read back with `btrfs inspect-internal dump-tree
 * -t 5` (as test_oracle.c does for its fixed file sets). The files are
 * written to the host from the engine's own namespace (the sandbox's
 * model: paths, kinds) and its inodes (sizes). Exact: INODE_ITEM,
 * INODE_REF, DIR_ITEM, DIR_INDEX, EXTENT_DATA, and inline / regular
 * extents. Leaves are not compared (mkfs's insert order differs; see
 * test_oracle.c). Without mkfs.btrfs / btrfs it prints "skipped".
 */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exp_sandbox.h"
#include "fs.h"
#include "items.h"
#include "t.h"
#include "t_lab.h"
#include "vfs.h"

#define NTYPES 256

typedef struct counts {
	uint64_t by_type[NTYPES];
	uint64_t inl, reg;
} counts;

static int type_of(const char *s)
{
	static const struct { const char *n; int t; } map[] = {
		{ "INODE_ITEM", BTRFS_INODE_ITEM_KEY }, { "INODE_REF", BTRFS_INODE_REF_KEY },
		{ "DIR_ITEM", BTRFS_DIR_ITEM_KEY }, { "DIR_INDEX", BTRFS_DIR_INDEX_KEY },
		{ "EXTENT_DATA", BTRFS_EXTENT_DATA_KEY },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(s, map[i].n))
			return map[i].t;
	return 255;
}

static void parse_dump(FILE *f, counts *c)
{
	memset(c, 0, sizeof *c);
	char line[512], kind[32];
	unsigned long long a, b, k;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "\titem %llu key (%llu %31s %llu)", &a, &b, kind, &k) == 4)
			c->by_type[type_of(kind)]++;
		if (strstr(line, "type 0 (inline)"))
			c->inl++;
		if (strstr(line, "type 1 (regular)"))
			c->reg++;
	}
}

static void engine_counts(fs_info *fs, counts *c)
{
	memset(c, 0, sizeof *c);
	bt_tree *tr = &fs_root_lookup(fs, 5)->tree;
	bt_path p;
	bt_path_init(&p, tr, NULL);
	bt_key key = bt_mkkey(0, 0, 0);
	bt_search(tr, &p, &key, 0, 0);
	for (;;) {
		bt_item *it = bt_path_item(&p);
		if (!it) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		c->by_type[it->key.type]++;
		if (it->key.type == BTRFS_EXTENT_DATA_KEY) {
			if (it->aux == FE_INLINE)
				c->inl++;
			else
				c->reg++;
		}
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
}

/* The run's context starts with its fs and the script (exp_sandbox.c). */
typedef struct sbx_head {
	fs_info *fs;
} sbx_head;

static void one_script(const char *label, const char *script)
{
	char params[4096];
	snprintf(params, sizeof params, "script=%s", script);
	lab_run *r = t_open("sandbox", "after", params, 1);
	if (!r)
		return;
	int done = 0, rc = 0;
	while (!done && rc == 0)
		rc = lab_step(r, 100000, &done);
	CHECK_EQ(rc, 0);
	fs_info *fs = ((sbx_head *)r->ctx)->fs;
	/* the namespace the script left, from the engine's parse of it */
	sb_script s;
	char err[200];
	CHECK_EQ(sbs_parse(r->script, &s, err, sizeof err), 0);

	char dir[] = "/tmp/lab-sb-oracle-XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0);
		return;
	}
	char path[512], cmd[1024];
	static char buf[1 << 20];
	memset(buf, 'x', sizeof buf);
	snprintf(path, sizeof path, "%s/root", dir);
	CHECK_EQ(mkdir(path, 0755), 0);
	/* the directories first, parents before children (a renamed entry
	 * can name a directory made after it) */
	for (size_t depth = 1; depth < SB_MAX_PATH; depth++)
		for (int i = 1; i < s.nents; i++) {
			const sb_ent *e = &s.ents[i];
			size_t slashes = 0;
			for (const char *c = e->path; *c; c++)
				slashes += *c == '/';
			if (!e->live || e->kind != SB_DIR || slashes != depth)
				continue;
			snprintf(path, sizeof path, "%s/root%s", dir, e->path);
			CHECK_EQ(mkdir(path, 0755), 0);
		}
	for (int i = 1; i < s.nents; i++) {
		const sb_ent *e = &s.ents[i];
		if (!e->live || e->kind == SB_DIR)
			continue;
		snprintf(path, sizeof path, "%s/root%s", dir, e->path);
		/* its size from the engine: look the name up the way a path walk does */
		uint64_t size = 0;
		struct btrfs_root *root = fs_root_lookup(fs, 5);
		uint64_t d = BTRFS_FIRST_FREE_OBJECTID, x = 0;
		char p2[SB_MAX_PATH];
		snprintf(p2, sizeof p2, "%s", e->path);
		for (char *tok = strtok(p2, "/"); tok; tok = strtok(NULL, "/")) {
			CHECK_EQ(vfs_lookup(fs, NULL, root, d, tok, &x), 0);
			d = x;
		}
		struct inode *in = fs_inode_get(root, x);
		CHECK(in != NULL);
		if (in)
			size = in->size;
		FILE *f = fopen(path, "w");
		CHECK(f != NULL);
		for (uint64_t left = size; f && left;) {
			size_t n = left < sizeof buf ? (size_t)left : sizeof buf;
			fwrite(buf, 1, n, f);
			left -= n;
		}
		if (f)
			fclose(f);
	}
	snprintf(cmd, sizeof cmd,
		 "cd %s && truncate -s 256M img && mkfs.btrfs -q -f -n 16384 --rootdir root img >/dev/null 2>&1 && "
		 "btrfs inspect-internal dump-tree -t 5 img > dump.txt 2>/dev/null", dir);
	CHECK_EQ(system(cmd), 0);
	snprintf(path, sizeof path, "%s/dump.txt", dir);
	FILE *f = fopen(path, "r");
	counts real, eng;
	memset(&real, 0, sizeof real);
	if (f) {
		parse_dump(f, &real);
		fclose(f);
	}
	engine_counts(fs, &eng);
	static const int types[] = { BTRFS_INODE_ITEM_KEY, BTRFS_INODE_REF_KEY, BTRFS_DIR_ITEM_KEY,
				     BTRFS_DIR_INDEX_KEY, BTRFS_EXTENT_DATA_KEY };
	static const char *const names[] = { "INODE_ITEM", "INODE_REF", "DIR_ITEM", "DIR_INDEX", "EXTENT_DATA" };
	printf("oracle %s:", label);
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		CHECK_EQ(eng.by_type[types[i]], real.by_type[types[i]]);
		printf(" %s %llu/%llu", names[i], (unsigned long long)eng.by_type[types[i]],
		       (unsigned long long)real.by_type[types[i]]);
	}
	CHECK_EQ(eng.inl, real.inl);
	CHECK_EQ(eng.reg, real.reg);
	printf(" inline %llu/%llu regular %llu/%llu (engine/mkfs)\n", (unsigned long long)eng.inl,
	       (unsigned long long)real.inl, (unsigned long long)eng.reg, (unsigned long long)real.reg);
	sbs_free(&s);
	lab_close(r);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	if (system("command -v mkfs.btrfs >/dev/null 2>&1 && command -v btrfs >/dev/null 2>&1") != 0) {
		printf("tests/test_sandbox_oracle.c: skipped (mkfs.btrfs / btrfs not installed)\n");
		T_DONE();
	}
	one_script("namespace + data",
		   "mkdir /a; mkdir /a/b; touch -n 30 /a/f; pwrite /a/f0 0 1000; pwrite /a/f1 0 64k; "
		   "pwrite /a/f2 0 4k; pwrite /a/f3 0 300k; mv /a/f2 /a/b/g; rm /a/f4; rm /a/f5; "
		   "touch /a/b/h; pwrite 0 2000; mkdir /c; mv /a/f6 /c/x; sync");
	one_script("fsync then sync", "touch /f; pwrite /f 0 8k; fsync; touch /g; pwrite /g 0 100; fsync; "
				      "mkdir /d; touch -n 200 /d/n; sync");
	T_DONE();
}
