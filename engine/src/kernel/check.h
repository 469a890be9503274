/*
 * check.h - the invariant checker over the simulated file system.
 *
 * check_fs() walks every tree and the allocator and counts violations:
 *   - keys strictly ordered within each block and across blocks (a child's
 *     keys lie within its parent's key range; the pointer key equals the
 *     child's first key);
 *   - node fill within bounds: no leaf over 16283 bytes, no node over 493
 *     pointers, no empty non-root block, levels consistent;
 *   - child generation <= parent generation, pointer generation == child's;
 *   - every tree block has a METADATA_ITEM whose ref count equals the number
 *     of distinct parents (and roots) that reference it;
 *   - every data extent referenced by file extent items has an EXTENT_ITEM
 *     whose ref count equals the number of references from distinct leaves,
 *     and no extent item lacks its references;
 *   - extent items do not overlap, lie inside one block group of the right
 *     kind, are marked allocated, and each block group's used counter equals
 *     the sum of its extent items;
 *   - checksum items cover exactly the sectors of regular data extents.
 * Only meaningful after fs_run_refs() (the extent tree lags the fs trees by
 * the queued refs), i.e. after a commit.
 *
 * Other subsystems register their own checks (io_tree, page accounting,
 * ordered extents, qgroups) with check_register(); check_fs() runs them too.
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdint.h>

struct fs_info;

/* A registered check returns its number of failures (0 = consistent). It
 * may describe failures with check_report(). */
typedef int (*check_fn)(struct fs_info *fs, void *ctx);

int check_register(struct fs_info *fs, const char *name, check_fn fn, void *ctx);
/* Run all built-in and registered checks; returns total failures. */
int check_fs(struct fs_info *fs);
/* The same between two steps of a run (lab_check), read-only: the
 * extent ref changes still queued count as applied (not run), and what
 * only a commit establishes is not expected (block group items equal to
 * the counters, the log tree idle: fs->check_midrun tells registered
 * checks). */
int check_fs_midrun(struct fs_info *fs);
/* Record a failure message (the last few are kept in fs for the report;
 * printed to stderr when fs->check_verbose). */
void check_report(struct fs_info *fs, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/*
 * The incremental check (check_incr.c): check_incr_enable keeps a record
 * of the trees from each full check at a commit on; check_fs_incr, called
 * right after a commit, checks what changed since the last check against
 * it (the blocks the transaction COWed, the extents whose references
 * moved, the items that came and went, the inodes whose data state
 * changed, the counters) and runs the registered checks with
 * fs->check_incr set. Without a record it runs check_fs. Returns
 * failures. check_incr_stats: incremental checks run, records built.
 */
int check_incr_enable(struct fs_info *fs);
int check_fs_incr(struct fs_info *fs);
void check_incr_stats(const struct fs_info *fs, uint64_t *incr, uint64_t *full);
/* The checking work, in tree blocks: *checked, the changed blocks every
 * incremental check so far has checked (a running total); *walked, the
 * blocks the last full check walked (0 without a record). A caller
 * schedules full checks by them to keep their share of a run bounded. */
void check_incr_work(const struct fs_info *fs, uint64_t *checked, uint64_t *walked);
/* For check.c and fs.c: rebuild the record after a full check at a
 * commit; free it (fs_unmount); tell the hooks a check is done. */
void check_incr_rebuild(struct fs_info *fs);
void check_incr_free(struct fs_info *fs);
void check_done(struct fs_info *fs, int full);

/* A registered check's helper: whether an in-memory inode still has its
 * inode item (a failure reported if not); returns failures (0 or 1). */
struct inode;
int check_inode_item(struct fs_info *fs, struct inode *in);

/* The last failure message, or "" */
const char *check_last_error(const struct fs_info *fs);

#endif /* CHECK_H */
