/*
 * vfs_data_int.h - what the data path's files (vfs_data.c: inodes, fsync,
 * truncate, remount; vfs_data_write.c: buffered write; vfs_data_writeback.c:
 * writeback and the flusher; vfs_data_read.c: reads and readahead) share
 * and nothing else may use.
 */
#ifndef VFS_DATA_INT_H
#define VFS_DATA_INT_H
#include "vfs_data.h"

#define PG PC_PAGE

/* A new bio for d at disk offset `disk`, reading or writing; pages are
 * added with vd_dbio_add. Never NULL (asserts on out of memory). */
dbio *vd_dbio_new(dinode *d, int read, uint64_t disk);
/* Add the page at file offset `off` (`bytes` of it) to the bio. */
void vd_dbio_add(dbio *db, uint64_t off, uint64_t bytes);
/* vd_dbio_add of the n whole pages from file offset `off` on. */
void vd_dbio_add_pages(dbio *db, uint64_t off, uint64_t n);
void vd_dbio_free(dbio *b);
/* Sample d's io_tree records and delalloc pages into the fs's series. */
void vd_sample(dinode *d);
/* An access to d's pages: its place in the inode LRU (pc_touch). */
void vd_touch(dinode *d);
/* Tell the space reservations d's delalloc / ordered state moved. */
void vd_space_note(dinode *d, simtime_t at, int evict);
/* d (re)joins b_dirty at the tail, dirtied at `when`; or leaves it (no
 * dirty page left). */
void vd_dirty_add(dinode *d, simtime_t when);
void vd_dirty_clear(dinode *d);
/* Dirty + writeback pages above the dirty_ratio threshold? */
int vd_over_dirty_limit(const dfs *fs);
/* Writeback completed: wake the throttled writers once under the
 * threshold (vfs_data_write.c). */
void vd_throttle_check(dfs *fs, simtime_t now, int rekick);
/* Wake the flusher (spawned on first use; vfs_data_writeback.c). */
void vd_flusher_kick(dfs *fs, simtime_t at);

#endif
