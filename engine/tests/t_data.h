/*
 * t_data.h - a data path on a mounted file system, for the tests that
 * drive the data path's calls (vd_write, vd_read_page, vd_lseek...)
 * directly: set up the way exp_sparse_cp.c sets up its run (mkfs + mount
 * on a device profile running a kernel, a transaction manager, the data
 * path attached with the test's tunables, bios completing at their
 * end_io), with regular files created in the top directory.
 */
#ifndef T_DATA_H
#define T_DATA_H
#include <stdio.h>
#include <string.h>

#include "bdev.h"
#include "fs.h"
#include "items.h"
#include "lab.h"
#include "t.h"
#include "trans.h"
#include "vfs.h"
#include "vfs_data.h"
#include "vfs_io.h"

typedef struct t_data {
	sim *s;
	bdev *dev;
	fs_info *fsi;
	trans_mgr tm;
	dfs *fs;
	int nfiles;
} t_data;

/* Mount a fresh file system on `device` running `kernel`, with the data
 * path's tunables o. */
static inline void t_data_mount(t_data *m, uint64_t seed, const char *device,
				const patchset *kernel, const data_opts *o)
{
	memset(m, 0, sizeof(*m));
	m->s = sim_create(seed, 0);
	CHECK_EQ(bdev_create(m->s, device, &m->dev), 0);
	fs_opts fo;
	fs_opts_default(&fo);
	fo.patches = *kernel;
	CHECK_EQ(fs_mount(m->s, m->dev, &fo, &m->fsi), 0);
	CHECK_EQ(trans_init(&m->tm, m->fsi), 0);
	CHECK_EQ(vio_attach(m->fsi, o, &m->tm), 0);
	m->fs = vio_dfs(m->fsi);
	m->fs->sync_io = 0;
}

/* A new empty regular file's data state. */
static inline dinode *t_data_file(t_data *m)
{
	char name[16];
	snprintf(name, sizeof name, "f%d", m->nfiles++);
	struct inode *in = NULL;
	CHECK_EQ(vfs_create(m->fsi, NULL, fs_root_lookup(m->fsi, BTRFS_FS_TREE_OBJECTID),
			    BTRFS_FIRST_FREE_OBJECTID, name, 0644, &in),
		 0);
	dinode *d = in ? vio_dinode(m->fsi, in) : NULL;
	CHECK(d != NULL);
	return d;
}

/* sync's transaction commit then a remount (exp_sparse_cp.c's cold
 * state): the data must be written back; every tree block committed is
 * cold until read. */
static inline void t_data_remount(t_data *m, task *t)
{
	CHECK_EQ(trans_commit_now(&m->tm, t, TCOMMIT_EXPLICIT), 0);
	dfs_remount(m->fs);
}

static inline void t_data_unmount(t_data *m)
{
	vio_detach(m->fsi);
	trans_destroy(&m->tm);
	fs_unmount(m->fsi);
	bdev_destroy(m->dev);
	sim_destroy(m->s);
}

/* The file extent items of d in the fs tree (read without a charge). */
static inline uint64_t t_data_items(const dinode *d)
{
	if (!d->inode)
		return 0;
	fs_info *fsi = d->fs->fsi;
	int saved = fsi->accounting_off;
	fsi->accounting_off = 1;
	fe_iter it;
	fe_info fe;
	uint64_t n = 0;
	for (int r = fe_iter_first(fsi, NULL, d->inode, 0, &it, &fe); r == 0;
	     r = fe_iter_next(fsi, &it, &fe))
		n++;
	fe_iter_end(&it);
	fsi->accounting_off = saved;
	return n;
}

/* Whether the fs tree maps file offset off to data (an item covering it). */
static inline int t_data_mapped(const dinode *d, uint64_t off)
{
	if (!d->inode)
		return 0;
	fs_info *fsi = d->fs->fsi;
	int saved = fsi->accounting_off, found = 0;
	fsi->accounting_off = 1;
	fe_iter it;
	fe_info fe;
	for (int r = fe_iter_first(fsi, NULL, d->inode, off, &it, &fe); r == 0 && !found;
	     r = fe_iter_next(fsi, &it, &fe)) {
		if (fe.file_off > off)
			break;
		found = off < fe.file_off + fe.num_bytes;
	}
	fe_iter_end(&it);
	fsi->accounting_off = saved;
	return found;
}
#endif
