/*
 * vfs.h - metadata VFS operations on the simulated btrfs: mkdir, create,
 * unlink, rmdir, rename, lookup, stat, readdir.
 *
 * Each operation touches the trees as btrfs does (create: inode item,
 * inode ref, dir item and dir index in the parent, parent inode update;
 * unlink the reverse, with an orphan item while the last link goes away)
 * and charges CPU through the constants in costs.h. The data path
 * (write/read/fsync/truncate/lseek/sync/remount) lives in vfs_data.h.
 *
 * Space: create, mkdir, unlink, rmdir, rename and subvolume create first
 * reserve metadata for the items btrfs_start_transaction is given (see
 * vfs.c and space_fs.h). When it does not fit, t is parked on a ticket
 * and FS_SPACE_WAIT (2) is returned: nothing was done; the caller's step
 * returns TASK_BLOCKED and calls the same operation again when woken (it
 * then gets the ticket's outcome, LAB_ENOSPC if reclaim could not free
 * enough). Reserve before joining a transaction (space_fs.h).
 *
 * Errors: 0, FS_SPACE_WAIT, or a negative LAB_E*: LAB_ENOENT (no such
 * name / inode), LAB_EINVAL (exists already, wrong type, bad name),
 * LAB_ENOSPC.
 */
#ifndef VFS_H
#define VFS_H

#include <stdint.h>

#include "fs.h"

#define VFS_NAME_MAX 255

typedef struct vfs_stat_info {
	uint64_t ino, size, nbytes, generation;
	uint32_t mode, nlink;
} vfs_stat_info;

/* Create a regular file / directory `name` in dir (models btrfs_create /
 * btrfs_mkdir). New files get INODE_NEEDS_FULL_SYNC. *out may be NULL. */
int vfs_create(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
	       const char *name, uint32_t mode, struct inode **out);
int vfs_mkdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
	      const char *name, struct inode **out);
/* Look a name up through its DIR_ITEM (models btrfs_lookup_dentry). */
int vfs_lookup(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
	       const char *name, uint64_t *ino);
/* Remove a name; when the last link goes the inode is evicted: an orphan
 * item guards the truncation of its extents and the removal of its inode
 * item (models btrfs_unlink + btrfs_evict_inode). */
int vfs_unlink(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
	       const char *name);
/* Remove an empty directory (models btrfs_rmdir). */
int vfs_rmdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
	      const char *name);
/* Rename within a root; an existing regular-file target is replaced
 * (models btrfs_rename). */
int vfs_rename(fs_info *fs, task *t, struct btrfs_root *root,
	       uint64_t old_dir, const char *old_name,
	       uint64_t new_dir, const char *new_name);
/* utimensat / chmod / chown of inode ino: the inode item updated under
 * a 1-item reservation (models btrfs_setattr -> btrfs_dirty_inode; see
 * vfs.c). 0, FS_SPACE_WAIT, LAB_ENOENT, LAB_ENOSPC. */
int vfs_setattr(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino);
/* Stat through the inode item (models btrfs_getattr after iget). */
int vfs_stat(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino,
	     vfs_stat_info *st);
/* Walk DIR_INDEX items in index order; fn returns non-zero to stop.
 * Returns the number of entries visited or a negative error. */
int vfs_readdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
		int (*fn)(void *ctx, uint64_t child, uint64_t index), void *ctx);

#endif /* VFS_H */
