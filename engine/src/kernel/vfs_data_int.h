/*
 * vfs_data_int.h - what the data path's files (vfs_data.c: write,
 * writeback, truncate; vfs_data_read.c: reads and readahead) share and
 * nothing else may use.
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

#endif
