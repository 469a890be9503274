/*
 * bench_meta.c - host time and memory of the metadata core at scale:
 * N files (default 300,000) created in one fs tree (in 300 directories),
 * each with a 4 KiB regular extent, committing every 20,000 files (so
 * 20,000 dirty extents per transaction), then the full checker once.
 * Prints host ns per create, peak RSS, and the tree's shape.
 *
 *   make -C engine bench-meta   builds build/native/bench_meta and
 *                               build/wasm-bench/bench_meta.cjs (node)
 *   npm run bench               runs both with N = 300,000
 *
 * Not a unit test (its name does not start with test_): it takes seconds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "sim.h"
#include "vfs.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Peak memory in KiB: the process's peak RSS natively; under WASM the
 * linear memory size, which only grows, so it is the peak heap. */
static long peak_rss_kib(void)
{
#ifdef __EMSCRIPTEN__
	return (long)(__builtin_wasm_memory_size(0) * 64);
#else
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
#endif
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 300000;
	if (n < 1)
		n = 1;
	long rss0 = peak_rss_kib();
	sim *s = sim_create(1, 0);
	fs_info *fs;
	if (fs_mount(s, NULL, NULL, &fs))
		return 1;
	struct btrfs_root *root = fs_root_lookup(fs, 5);
	uint64_t dirs[300];
	for (int d = 0; d < 300; d++) {
		char name[16];
		struct inode *in;
		snprintf(name, sizeof name, "d%d", d);
		if (vfs_mkdir(fs, NULL, root, 256, name, &in))
			return 1;
		dirs[d] = in->ino;
	}
	double t0 = now_s(), tcommit = 0;
	for (long i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof name, "file-%ld", i);
		struct inode *in;
		if (vfs_create(fs, NULL, root, dirs[i % 300], name, 0644, &in))
			return 2;
		uint64_t b;
		if (alloc_extent(&fs->alloc, ALLOC_DATA, 4096, &b) ||
		    fs_file_extent_insert(fs, NULL, in, 0, 4096, b, 4096, FE_REG))
			return 3;
		in->size = 4096;
		if (fs_inode_update(fs, NULL, in))
			return 4;
		if ((i + 1) % 20000 == 0) {
			double c0 = now_s();
			if (fs_commit(fs, NULL))
				return 5;
			tcommit += now_s() - c0;
		}
	}
	double c0 = now_s();
	fs_commit(fs, NULL);
	tcommit += now_s() - c0;
	double t1 = now_s();
	int fails = check_fs(fs);
	double t2 = now_s();
	uint64_t leaves, nodes, items;
	bt_count_blocks(&root->tree, &leaves, &nodes, &items);
	uint64_t el, en, ei;
	bt_count_blocks(&fs->extent_tree, &el, &en, &ei);
	printf("files %ld: %.0f ns host per create+write+update (commits %.2f s of it), "
	       "check %.2f s, failures %d\n",
	       n, (t1 - t0) * 1e9 / (double)n, tcommit, t2 - t1, fails);
	printf("fs tree: height %d, %llu leaves, %llu nodes, %llu items; extent tree: height %d, "
	       "%llu leaves; %llu node visits\n",
	       bt_tree_height(&root->tree), (unsigned long long)leaves, (unsigned long long)nodes,
	       (unsigned long long)items, bt_tree_height(&fs->extent_tree),
	       (unsigned long long)el, (unsigned long long)root->tree.nodes_visited);
	printf("simulated CPU charged %.3f s; peak RSS %ld MiB (%ld MiB before mount)\n",
	       (double)fs->cpu_untasked_ns * 1e-9, peak_rss_kib() / 1024, rss0 / 1024);
	fs_unmount(fs);
	sim_destroy(s);
	return fails ? 6 : 0;
}
