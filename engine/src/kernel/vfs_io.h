/*
 * vfs_io.h - the data path on the shared substrate: write, read, fsync,
 * truncate, lseek, sync and remount of the struct inodes that vfs.h
 * creates, with the real fs tree as the truth for file extent items.
 *
 * vio_attach() puts a data path (struct dfs, vfs_data.h) in
 * fs->slot[FS_SLOT_DATA]. Each struct inode the data path touches gets a
 * struct dinode (io_tree, extent maps, ordered extents, page cache) in
 * inode->io, created on first use. Ordered-extent completion inserts the
 * file extent item, the data ref (extent item + backref at the next run
 * of the delayed refs) and the checksums into the real trees
 * (fs_file_extent_insert), inside a handle joined on tm when a
 * transaction manager is attached; reads map pages through the fs tree
 * (fe_iter), lseek walks the fs tree's EXTENT_DATA items, truncate drops
 * them (fs_drop_extents). After vio_remount every tree block written
 * before the remount is cold: the first search that visits it reads it
 * from the device (metadata_reads).
 *
 * Two ways to drive it:
 *  - synchronous (the functions below, for workloads that do one
 *    operation per step, like torture): vio_fsync and vio_sync write back
 *    on the calling task, wait for the bios and complete the ordered
 *    extents before returning; vio_read waits for its reads.
 *  - asynchronous (sparse-cp style): clear vio_dfs(fs)->sync_io after
 *    vio_attach and drive the vd_* calls of vfs_data.h from tasks (the
 *    flusher, vd_writeback_start, vd_read_page, vd_lseek); completion runs
 *    at bio end_io (no task: CPU counted in dfs.cpu_endio_ns and
 *    fs->cpu_untasked_ns) and joins the running transaction there.
 * The two must not overlap on one inode: vio_fsync returns 1 (parked on
 * the inode's writeback waitq) when an asynchronous writeback is active.
 *
 * Lifetime: a dinode lives until its inode's on_inode_evict hook (vfs
 * unlink) or vio_detach. fs_root_forget frees a root's inodes without
 * that hook, so whoever drops a root runs the hooks on its cached inodes
 * first (fs_root_prune_inodes, as torture's subvolume delete does), and
 * vio_detach comes before fs_unmount.
 *
 * Transactions: the caller owns its handles. vio_* never commits; a sync
 * as the kernel does it is vio_sync() then a commit (trans_commit /
 * fs_commit), and a remount is vio_sync, a commit, then vio_remount.
 *
 * Errors: 0 or a negative LAB_E* (LAB_EINVAL: not a regular file or bad
 * whence; LAB_ERANGE: past VIO_MAX_FILE_BYTES; LAB_ESTATE: not attached;
 * LAB_ENOMEM; LAB_ENOSPC from the allocator). Positive returns
 * are documented per function.
 */
#ifndef VFS_IO_H
#define VFS_IO_H

#include <stdint.h>

#include "fs.h"
#include "lseek.h"
#include "vfs_data.h"

struct trans_mgr;

/* Largest file size the data path accepts (LAB_ERANGE past it): the
 * page cache keeps a flag byte per page up to the highest page used. */
#define VIO_MAX_FILE_BYTES (16ull << 30)

/* Defaults: 30 s dirty expiry, 5 s writeback interval, a 16 GiB memory limit for
 * the page cache with 10% of it the background threshold and 20%
 * (dirty_ratio) the throttling one. */
void vio_opts_default(data_opts *o);
/* The memory side of o for a machine with `ram` bytes of RAM, as
 * mm/page-writeback.c computes it: dirty_background_ratio 10% and
 * dirty_ratio 20% of the dirtyable memory (global_dirtyable_memory: free
 * plus file pages, VIO_DIRTYABLE of RAM on an idle box), the page cache
 * limited to the RAM. */
#define VIO_DIRTYABLE 0.95 /* [estimate: the kernel, its slabs and the
			    * watermark reserves take a few % of an idle
			    * machine's RAM] */
void vio_opts_ram(data_opts *o, uint64_t ram);

/* Attach a data path to fs, running fs's patches (o may be NULL for
 * defaults; tm may be NULL:
 * completions then insert into the running transaction directly).
 * Registers the data path's check (check_register) and an eviction hook.
 * 0, LAB_ENOMEM, LAB_ESTATE (already attached). */
int vio_attach(fs_info *fs, const data_opts *o, struct trans_mgr *tm);
/* Free the data path (before fs_unmount). */
void vio_detach(fs_info *fs);
/* The attached data path, or NULL. */
dfs *vio_dfs(fs_info *fs);
/* The data state of a regular file, created on first use (NULL if not a
 * regular file or out of memory). */
dinode *vio_dinode(fs_info *fs, struct inode *inode);

/* Buffered write of [off, off + len) (any alignment; pages are dirtied
 * whole): models btrfs_buffered_write. It first reserves the data bytes of
 * the pages and their delalloc metadata (space_fs.h); if that does not
 * fit, t parks on a ticket and FS_SPACE_WAIT (2) is returned: nothing was
 * written, call again when woken (LAB_ENOSPC once reclaim gives up).
 * i_size moves to off + len. Past
 * dirty_ratio the writer is throttled (vd_write): with sync_io it writes
 * back the oldest dirty inodes itself; an asynchronous driver gets 1
 * (the write is done and t is parked until writeback catches up). */
int vio_write(fs_info *fs, task *t, struct inode *inode, uint64_t off, uint64_t len);
/* Buffered read of [off, off + len), clipped to i_size, waiting on t for
 * the reads it starts (readahead included). *got (may be NULL) receives
 * the bytes read. Models filemap_read -> btrfs_readahead. */
int vio_read(fs_info *fs, task *t, struct inode *inode, uint64_t off, uint64_t len,
	     uint64_t *got);
/* An open file: its readahead state (struct file's f_ra), which carries
 * from one read() to the next. vio_read has none (each call starts a
 * fresh one and reads page by page: what torture and receive use). */
typedef struct vio_file {
	file_ra ra;
} vio_file;
void vio_file_open(vio_file *f);
/* One read() of [off, off + len) on f (clipped to i_size): 0, 1 (t parked
 * behind a page in flight: call again when woken) or negative. Misses and
 * markers ask readahead for the pages left in the call, as filemap_read
 * does, so the first window is sized by the request and later ones grow
 * from f's state. */
int vio_read_file(fs_info *fs, task *t, struct inode *inode, vio_file *f, uint64_t off,
		  uint64_t len, uint64_t *got);
/* The read() calls of `call` bytes (> 0) each on f from *off up to end, as
 * that many vio_read_file calls in a row (bonnie's 47 of a file): *off
 * moves past each call done. 0 when all are done, 1 (t parked behind a
 * page in flight: call again when woken, from *off) or negative. */
int vio_read_calls(fs_info *fs, task *t, struct inode *inode, vio_file *f, uint64_t *off,
		   uint64_t end, uint64_t call);
/* fsync, data part: write back the inode's dirty pages on t, wait for the
 * bios, complete the ordered extents (the file extent items go in the
 * tree). Returns 0, or 1 when t was parked behind an asynchronous
 * writeback of the inode (call again when woken). */
int vio_fsync(fs_info *fs, task *t, struct inode *inode);
/*
 * truncate(2), models btrfs_setattr -> btrfs_setsize. Growing moves i_size
 * (btrfs_cont_expand: a partial old last page is rewritten zeroed). For
 * new_size <= i_size: an orphan item guards the truncation; the pages,
 * delalloc and extent maps past the new end go (truncate_setsize); then
 * btrfs_truncate waits for ordered range [round_down(new_size), EOF):
 * the dirty tail page is written back as its own extent, on t, and its
 * ordered extent completed; the file extent items past the new end are
 * dropped (the crossing one trimmed), the inode updated, the orphan item
 * deleted. A 4 KiB-aligned new size has an empty wait range. With
 * P_003_TRUNC_SKIP_SAME_SIZE_WB applied (fs_patch_on; 4.17 on) a truncate
 * to the same size skips the wait.
 * Returns 0, or 1 when t was parked because an asynchronous writeback of
 * the inode is in flight (nothing was done: call again when woken).
 */
int vio_truncate(fs_info *fs, task *t, struct inode *inode, uint64_t new_size);

/* What one truncate did, for its callers' statistics (receive). */
typedef struct vio_trunc_info {
	int shrink;            /* new_size <= i_size: the truncate branch */
	int same_size;         /* new_size == i_size */
	int skipped;           /* same size, patch 003: no ordered-range wait */
	uint64_t sync_extents; /* extents the wait wrote back */
	uint64_t sync_bios;    /* their bios (an inline extent has none) */
	uint64_t sync_bytes;   /* bytes those bios wrote */
	uint64_t sync_inline;  /* extents the wait made inline */
	simtime_t sync_ns;     /* time the wait took when it wrote something */
	simtime_t sync_start;  /* when that wait began */
} vio_trunc_info;

/* vio_truncate reporting what it did in *info (may be NULL; zeroed
 * first). Same returns. */
int vio_setsize(fs_info *fs, task *t, struct inode *inode, uint64_t new_size,
		vio_trunc_info *info);
/* lseek: LSEEK_SET (returns off), LSEEK_DATA, LSEEK_HOLE (lseek.h).
 * Returns 0 with *result, LSEEK_ENXIO, 1 when parked (reads in flight in
 * the range: call again when woken), or negative. */
int vio_lseek(fs_info *fs, task *t, struct inode *inode, uint64_t off, int whence,
	      uint64_t *result);
/* sync, data part: fsync every inode that is not clean, in the order the
 * data path first met them. Returns 0, or 1 if parked (see vio_fsync). */
int vio_sync(fs_info *fs, task *t);
/* Remount (after vio_sync and a commit): drop every inode's page cache,
 * extent maps and io_tree, make the tree blocks cold, and read the
 * inodes back without their log state (fs_inodes_reread). LAB_ESTATE if
 * some inode is not clean. */
int vio_remount(fs_info *fs, task *t);

#endif /* VFS_IO_H */
