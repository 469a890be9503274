/*
 * vfs.c - metadata VFS operations (vfs.h) and subvolume creation.
 *
 * A directory entry is three items, as in btrfs: DIR_ITEM keyed by the
 * crc32c of the name (for lookup), DIR_INDEX keyed by a per-directory
 * sequence number (for readdir), and the child's INODE_REF keyed by the
 * parent directory. A directory's i_size is twice the sum of its names'
 * lengths, as btrfs keeps it.
 */
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "delayed_inode.h"
#include "items.h"
#include "lab.h"
#include "space_fs.h"
#include "vfs.h"
#include "labmem.h"
#include "variation.h"

static int name_ok(const char *name, uint32_t *len)
{
	if (!name)
		return 0;
	size_t n = strlen(name);
	if (n == 0 || n > VFS_NAME_MAX || strchr(name, '/') ||
	    (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	*len = (uint32_t)n;
	return 1;
}

static int is_dir(const struct inode *in)
{
	return (in->mode & S_IFMT_) == S_IFDIR_;
}

/* Lock / unlock a directory's i_rwsem around an operation (timeline). */
static void dir_lock(task *t, struct inode *dir)
{
	if (t)
		simlock_write(&dir->i_rwsem, t);
}

static void dir_unlock(task *t, struct inode *dir)
{
	if (t)
		simlock_write_release(&dir->i_rwsem, t->clock);
}

/* ------------------------------------------------------ dir entries */

static int collision_add(fs_info *fs, const dir_collision *c)
{
	if (fs->ncollisions == fs->collisions_cap) {
		int cap = fs->collisions_cap ? fs->collisions_cap * 2 : 8;
		dir_collision *n = lab_realloc(fs->collisions, (size_t)cap * sizeof(*n));
		if (!n)
			return LAB_ENOMEM;
		fs->collisions = n;
		fs->collisions_cap = cap;
	}
	fs->collisions[fs->ncollisions++] = *c;
	return 0;
}

static int collision_find(fs_info *fs, uint64_t root, uint64_t dir, uint64_t crc, uint64_t nh)
{
	for (int i = 0; i < fs->ncollisions; i++) {
		dir_collision *c = &fs->collisions[i];
		if (c->root == root && c->dir == dir && c->crc == crc && c->namehash == nh)
			return i;
	}
	return -1;
}

static void collision_del(fs_info *fs, int i)
{
	memmove(&fs->collisions[i], &fs->collisions[i + 1],
		(size_t)(fs->ncollisions - i - 1) * sizeof(*fs->collisions));
	fs->ncollisions--;
}

/* Add the DIR_ITEM and DIR_INDEX for `name` -> child in dir and grow the
 * directory (models btrfs_add_link / btrfs_insert_dir_item). *index gets
 * the DIR_INDEX offset used. */
static int dirent_add(fs_info *fs, task *t, struct inode *dir, const char *name, uint32_t len,
		      uint64_t child, uint32_t type, uint64_t *index)
{
	bt_tree *tr = &dir->root->tree;
	uint64_t crc = items_dir_key_hash(name, len);
	uint64_t nh = items_name_hash(name, len);
	uint64_t idx = dir->dir_index++;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.v[0] = child;
	it.v[1] = nh;
	it.v[2] = idx;
	it.aux = type;
	uint32_t sz = SZ_DIR_ITEM_BASE + len;
	bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_ITEM_KEY, crc);
	bt_path p;
	int r = bt_insert(tr, t, &k, sz, &it, &p);
	if (r < 0) {
		bt_path_release(&p);
		return r;
	}
	if (r == 1) {
		/* crc32c collision: the name joins the existing item */
		bt_path_release(&p);
		bt_path_init(&p, tr, t);
		int ret = bt_search(tr, &p, &k, (int)sz, 1);
		if (ret) {
			bt_path_release(&p);
			return ret < 0 ? ret : LAB_EENGINE;
		}
		r = bt_extend_item(tr, &p, bt_path_item(&p)->size + sz);
		bt_path_release(&p);
		if (r)
			return r;
		dir_collision c = { dir->root->id, dir->ino, crc, nh, child, type };
		r = collision_add(fs, &c);
		if (r)
			return r;
	} else {
		bt_path_release(&p);
	}
	/* the DIR_INDEX item is a delayed item when the fs has them
	 * (btrfs_insert_delayed_dir_index) */
	delayed_root *dr = dl_of(fs);
	if (dr) {
		r = dl_insert_dir_index(dr, t, dir, idx, sz, &it);
	} else {
		bt_key ki = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, idx);
		r = bt_insert(tr, t, &ki, sz, &it, NULL);
	}
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	dir->size += 2ull * len;
	dir->nentries++;
	if (index)
		*index = idx;
	return fs_inode_update(fs, t, dir);
}

/* Find name in dir: child, type and dir index. Returns 0, LAB_ENOENT or
 * an error (models btrfs_lookup_dir_item). */
static int dirent_find(fs_info *fs, task *t, struct inode *dir, const char *name, uint32_t len,
		       uint64_t *child, uint32_t *type, uint64_t *index)
{
	bt_tree *tr = &dir->root->tree;
	uint64_t crc = items_dir_key_hash(name, len);
	uint64_t nh = items_name_hash(name, len);
	bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_ITEM_KEY, crc);
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, &k, 0, 0);
	if (ret) {
		bt_path_release(&p);
		return ret < 0 ? ret : LAB_ENOENT;
	}
	bt_item *it = bt_path_item(&p);
	if (it->v[1] == nh) {
		*child = it->v[0];
		*type = it->aux;
		*index = it->v[2];
		bt_path_release(&p);
		return 0;
	}
	bt_path_release(&p);
	int i = collision_find(fs, dir->root->id, dir->ino, crc, nh);
	if (i < 0)
		return LAB_ENOENT;
	*child = fs->collisions[i].child;
	*type = fs->collisions[i].type;
	/* the index of a collided name is kept in its DIR_INDEX only */
	*index = UINT64_MAX;
	return 0;
}

/* Remove name's DIR_ITEM (or its share of one) and DIR_INDEX from dir
 * (models btrfs_delete_one_dir_name + the dir index deletion). */
static int dirent_del(fs_info *fs, task *t, struct inode *dir, const char *name, uint32_t len,
		      uint64_t child, uint64_t index)
{
	bt_tree *tr = &dir->root->tree;
	uint64_t crc = items_dir_key_hash(name, len);
	uint64_t nh = items_name_hash(name, len);
	uint32_t sz = SZ_DIR_ITEM_BASE + len;
	bt_key k = bt_mkkey(dir->ino, BTRFS_DIR_ITEM_KEY, crc);
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, &k, -1, 1);
	if (ret) {
		bt_path_release(&p);
		return ret < 0 ? ret : LAB_ENOENT;
	}
	bt_item *it = bt_path_item(&p);
	int ci = collision_find(fs, dir->root->id, dir->ino, crc, nh);
	if (it->size == sz && ci < 0) {
		int r = bt_del_items(tr, &p, 1);
		if (r)
			return r;
	} else {
		if (it->v[1] == nh) {
			/* promote a collided name into the item's primary slot */
			int j;
			for (j = 0; j < fs->ncollisions; j++) {
				dir_collision *c = &fs->collisions[j];
				if (c->root == dir->root->id && c->dir == dir->ino && c->crc == crc)
					break;
			}
			if (j == fs->ncollisions) {
				bt_path_release(&p);
				return LAB_EENGINE;
			}
			it->v[0] = fs->collisions[j].child;
			it->v[1] = fs->collisions[j].namehash;
			it->aux = fs->collisions[j].type;
			it->v[2] = UINT64_MAX;
			collision_del(fs, j);
		} else if (ci >= 0) {
			collision_del(fs, ci);
		}
		bt_truncate_item(tr, &p, it->size - sz);
		bt_path_release(&p);
	}
	if (index == UINT64_MAX) {
		/* find the DIR_INDEX by walking the directory's index items,
		 * all of them in the tree first (a rare path: a collided name) */
		if (dl_of(fs)) {
			int rc = dl_commit_inode(dl_of(fs), t, dir);
			if (rc)
				return rc;
		}
		bt_key ks = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, 0);
		bt_path_init(&p, tr, t);
		ret = bt_search(tr, &p, &ks, 0, 0);
		if (ret < 0) {
			bt_path_release(&p);
			return ret;
		}
		for (;;) {
			bt_item *x = bt_path_item(&p);
			if (!x) {
				if (bt_next_leaf(tr, &p))
					break;
				continue;
			}
			if (x->key.objectid != dir->ino || x->key.type != BTRFS_DIR_INDEX_KEY)
				break;
			if (x->v[1] == nh && x->v[0] == child) {
				index = x->key.offset;
				break;
			}
			if (bt_next_item(tr, &p))
				break;
		}
		bt_path_release(&p);
		if (index == UINT64_MAX)
			return LAB_EENGINE;
	}
	if (dl_of(fs)) {
		ret = dl_delete_dir_index(dl_of(fs), t, dir, index);
	} else {
		bt_key ki = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, index);
		ret = bt_delete(tr, t, &ki);
	}
	if (ret)
		return ret < 0 ? ret : LAB_EENGINE;
	dir->size -= 2ull * len;
	dir->nentries--;
	return fs_inode_update(fs, t, dir);
}

static int inode_ref_add(task *t, struct inode *in, uint64_t dir, uint32_t len, uint64_t index,
			 uint64_t nh)
{
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.v[0] = index;
	it.v[1] = nh;
	bt_key k = bt_mkkey(in->ino, BTRFS_INODE_REF_KEY, dir);
	int r = bt_insert(&in->root->tree, t, &k, SZ_INODE_REF_BASE + len, &it, NULL);
	return r < 0 ? r : (r ? LAB_EINVAL : 0);
}

static int inode_ref_del(task *t, struct inode *in, uint64_t dir)
{
	bt_key k = bt_mkkey(in->ino, BTRFS_INODE_REF_KEY, dir);
	int r = bt_delete(&in->root->tree, t, &k);
	return r < 0 ? r : (r ? LAB_EENGINE : 0);
}

/* A name of in in dir is gone: the log forgets it if it holds it
 * (btrfs_unlink_inode -> btrfs_del_inode_ref_in_log,
 * btrfs_del_dir_entries_in_log). */
static void unlink_hooks(fs_info *fs, task *t, struct inode *dir, struct inode *in,
			 uint64_t index, int for_rename)
{
	for (int i = 0; i < fs->nhooks; i++)
		if (fs->hooks[i].on_unlink)
			fs->hooks[i].on_unlink(fs->hooks[i].ctx, t, dir, in, index, for_rename);
}

/* ------------------------------------------------------------ operations */

static int get_dir(struct btrfs_root *root, uint64_t dir, struct inode **out)
{
	if (!root || root->dead)
		return LAB_ENOENT;
	struct inode *d = fs_inode_get(root, dir);
	if (!d)
		return LAB_ENOENT;
	if (!is_dir(d))
		return LAB_EINVAL;
	*out = d;
	return 0;
}

/* The common start of a name operation in a directory: the name must be
 * valid, the syscall is charged, and dirino must be a directory of root.
 * Returns 0 with *len and *dir set, or a negative LAB_E*. */
static int dir_enter(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dirino,
		     const char *name, uint32_t *len, struct inode **dir)
{
	if (!fs || !name_ok(name, len))
		return LAB_EINVAL;
	fs_charge(fs, t, var_ns(fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	return get_dir(root, dirino, dir);
}

/* Shared body of create and mkdir (models btrfs_create_new_inode +
 * btrfs_add_link). */
static int make_node(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dirino,
		     const char *name, uint32_t mode, struct inode **out)
{
	uint32_t len;
	struct inode *dir;
	int r = dir_enter(fs, t, root, dirino, name, &len, &dir);
	if (r)
		return r;
	dir_lock(t, dir);
	uint64_t c, idx;
	uint32_t ty;
	r = dirent_find(fs, t, dir, name, len, &c, &ty, &idx);
	if (r != LAB_ENOENT) {
		dir_unlock(t, dir);
		return r ? r : LAB_EINVAL;
	}
	struct inode *in;
	r = fs_inode_new(root, mode, &in);
	if (r) {
		dir_unlock(t, dir);
		return r;
	}
	fs_charge(fs, t, VFS_NS_INODE_ALLOC);
	in->flags |= INODE_NEEDS_FULL_SYNC;
	if (is_dir(in))
		in->parent = dir->ino;
	r = fs_inode_item_insert(fs, t, in);
	uint64_t index = dir->dir_index;
	if (!r)
		r = inode_ref_add(t, in, dir->ino, len, index, items_name_hash(name, len));
	if (!r)
		r = dirent_add(fs, t, dir, name, len, in->ino, is_dir(in) ? FT_DIR : FT_REG, &index);
	dir_unlock(t, dir);
	if (r)
		return r;
	if (out)
		*out = in;
	return 0;
}

/*
 * Metadata reserved per operation, in items, as fs/btrfs (5.10) passes
 * them to btrfs_start_transaction:
 *   create, mknod, mkdir  5  (btrfs_create / btrfs_mkdir: inode item,
 *                            inode ref, dir item, dir index, xattr)
 *   unlink, rmdir         5  (__unlink_start_trans: orphan item, dir
 *                            item, dir index, inode ref, inode), plus
 *                            the eviction's 384 KiB (remove_name)
 *   rename               11  (btrfs_rename: 5 per unlinked name, twice,
 *                            plus the new link)
 *   subvolume create      8  (create_subvol via
 *                            btrfs_subvolume_reserve_metadata: inode
 *                            item, 2 refs, root item, 2 dir items, ...)
 *   setattr               1  (btrfs_dirty_inode's fallback
 *                            transaction: see vfs_setattr)
 * Lookups, stat and readdir reserve nothing.
 */
enum {
	ITEMS_CREATE = 5,
	ITEMS_UNLINK = 5,
	ITEMS_RENAME = 11,
	ITEMS_SUBVOL = 8,
	ITEMS_SETATTR = 1,
};

/* create(2) and mkdir(2): reserve the transaction's 5 items, make the
 * node with `mode`, give back what the reservation did not use. */
static int create_reserved(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
			   const char *name, uint32_t mode, struct inode **out)
{
	if (!fs)
		return LAB_EINVAL;
	fs_space_op op;
	int r = fs_space_meta_begin(fs, t, ITEMS_CREATE, &op);
	if (r)
		return r;
	r = make_node(fs, t, root, dir, name, mode, out);
	fs_space_meta_end(fs, t, &op);
	return r;
}

int vfs_create(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir, const char *name,
	       uint32_t mode, struct inode **out)
{
	return create_reserved(fs, t, root, dir, name, S_IFREG_ | (mode & 07777), out);
}

int vfs_mkdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir, const char *name,
	      struct inode **out)
{
	return create_reserved(fs, t, root, dir, name, S_IFDIR_ | 0755, out);
}

int vfs_lookup(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dirino, const char *name,
	       uint64_t *ino)
{
	uint32_t len;
	struct inode *dir;
	if (!ino)
		return LAB_EINVAL;
	int r = dir_enter(fs, t, root, dirino, name, &len, &dir);
	if (r)
		return r;
	uint64_t idx;
	uint32_t ty;
	return dirent_find(fs, t, dir, name, len, ino, &ty, &idx);
}

/* The last link of `in` is gone: truncate its extents and remove its
 * items under an orphan item (models btrfs_orphan_add + btrfs_evict_inode). */
static int evict(fs_info *fs, task *t, struct inode *in)
{
	struct btrfs_root *root = in->root;
	fs_inode_evict_hooks(fs, in);
	int r = fs_orphan_add(fs, t, root, in->ino);
	if (!r)
		r = fs_drop_extents(fs, t, in, 0, UINT64_MAX, NULL);
	if (!r)
		r = fs_inode_item_delete(fs, t, in);
	if (!r)
		r = fs_orphan_del(fs, t, root, in->ino);
	if (r)
		return r;
	in->flags |= INODE_DELETED;
	fs_inode_forget(root, in);
	return 0;
}

/* Remove name from dir; `want_dir` selects unlink (0) or rmdir (1). The
 * eviction's reservation joins op's (see below). */
static int remove_name(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dirino,
		       const char *name, int want_dir, fs_space_op *op)
{
	uint32_t len;
	struct inode *dir;
	int r = dir_enter(fs, t, root, dirino, name, &len, &dir);
	if (r)
		return r;
	dir_lock(t, dir);
	uint64_t child, idx;
	uint32_t ty;
	r = dirent_find(fs, t, dir, name, len, &child, &ty, &idx);
	struct inode *in = r ? NULL : fs_inode_get(root, child);
	if (!r && ((ty & FS_DIRENT_SUBVOL) || !in))
		r = LAB_EINVAL; /* subvolume entries go through subvolume delete */
	if (!r && is_dir(in) != want_dir)
		r = LAB_EINVAL;
	if (!r && want_dir && in->nentries)
		r = LAB_EINVAL;
	/*
	 * The last link goes: btrfs_evict_inode refills a block rsv of
	 * metadata_size(1) plus insert_metadata_size(1) for the delayed refs
	 * with BTRFS_RESERVE_FLUSH_EVICT (evict_refill_and_join), a priority
	 * ticket the task flushes for itself. It is reserved here, before
	 * the name goes, so that a wait leaves nothing half done.
	 */
	if (!r && in->nlink == 1)
		r = fs_space_meta_add(fs, t, space_metadata_size(&fs->space, 1) +
					     space_insert_metadata_size(&fs->space, 1),
				      RESERVE_FLUSH_EVICT, op);
	if (!r)
		r = dirent_del(fs, t, dir, name, len, child, idx);
	if (!r)
		r = inode_ref_del(t, in, dir->ino);
	if (!r)
		unlink_hooks(fs, t, dir, in, idx, 0);
	if (!r) {
		in->nlink--;
		r = in->nlink ? fs_inode_update(fs, t, in) : evict(fs, t, in);
	}
	dir_unlock(t, dir);
	return r;
}

/* unlink / rmdir inside their reservation (__unlink_start_trans). */
static int remove_reserved(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir,
			   const char *name, int want_dir)
{
	if (!fs)
		return LAB_EINVAL;
	fs_space_op op;
	int r = fs_space_meta_begin(fs, t, ITEMS_UNLINK, &op);
	if (r)
		return r;
	r = remove_name(fs, t, root, dir, name, want_dir, &op);
	if (r == FS_SPACE_WAIT) {
		fs_space_meta_park(fs, t, &op); /* the retry takes it back */
		return r;
	}
	fs_space_meta_end(fs, t, &op);
	return r;
}

int vfs_unlink(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir, const char *name)
{
	return remove_reserved(fs, t, root, dir, name, 0);
}

int vfs_rmdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dir, const char *name)
{
	return remove_reserved(fs, t, root, dir, name, 1);
}

static int rename_names(fs_info *fs, task *t, struct btrfs_root *root, uint64_t old_dir,
			const char *old_name, uint64_t new_dir, const char *new_name,
			fs_space_op *op);

int vfs_rename(fs_info *fs, task *t, struct btrfs_root *root, uint64_t old_dir,
	       const char *old_name, uint64_t new_dir, const char *new_name)
{
	if (!fs)
		return LAB_EINVAL;
	fs_space_op op;
	int r = fs_space_meta_begin(fs, t, ITEMS_RENAME, &op);
	if (r)
		return r;
	r = rename_names(fs, t, root, old_dir, old_name, new_dir, new_name, &op);
	if (r == FS_SPACE_WAIT) {
		fs_space_meta_park(fs, t, &op); /* the retry takes it back */
		return r;
	}
	fs_space_meta_end(fs, t, &op);
	return r;
}

/* The body of btrfs_rename once its items are reserved; a replaced
 * target's eviction reserves into op (remove_name). */
static int rename_names(fs_info *fs, task *t, struct btrfs_root *root, uint64_t old_dir,
			const char *old_name, uint64_t new_dir, const char *new_name,
			fs_space_op *op)
{
	uint32_t olen, nlen;
	if (!fs || !name_ok(old_name, &olen) || !name_ok(new_name, &nlen))
		return LAB_EINVAL;
	fs_charge(fs, t, var_ns(fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	struct inode *od, *nd;
	int r = get_dir(root, old_dir, &od);
	if (!r)
		r = get_dir(root, new_dir, &nd);
	if (r)
		return r;
	uint64_t child, idx, tchild, tidx;
	uint32_t ty, tty;
	r = dirent_find(fs, t, od, old_name, olen, &child, &ty, &idx);
	if (r)
		return r;
	struct inode *in = fs_inode_get(root, child);
	if ((ty & FS_DIRENT_SUBVOL) || !in)
		return LAB_EINVAL;
	if (old_dir == new_dir && olen == nlen && !memcmp(old_name, new_name, olen))
		return 0;
	if (is_dir(in)) {
		/* no moving a directory below itself */
		for (struct inode *x = nd;;) {
			if (x == in)
				return LAB_EINVAL;
			if (x->parent == x->ino || !x->parent)
				break;
			x = fs_inode_get(root, x->parent);
			if (!x)
				break;
		}
	}
	r = dirent_find(fs, t, nd, new_name, nlen, &tchild, &tty, &tidx);
	if (r && r != LAB_ENOENT)
		return r;
	if (!r) {
		struct inode *tin = fs_inode_get(root, tchild);
		if ((tty & FS_DIRENT_SUBVOL) || !tin || is_dir(tin) || is_dir(in))
			return LAB_EINVAL;
		r = remove_name(fs, t, root, new_dir, new_name, 0, op);
		if (r)
			return r;
	}
	dir_lock(t, od);
	if (nd != od)
		dir_lock(t, nd);
	r = dirent_del(fs, t, od, old_name, olen, child, idx);
	if (!r)
		r = inode_ref_del(t, in, od->ino);
	if (!r)
		unlink_hooks(fs, t, od, in, idx, 1);
	uint64_t index = nd->dir_index;
	if (!r)
		r = inode_ref_add(t, in, nd->ino, nlen, index, items_name_hash(new_name, nlen));
	if (!r)
		r = dirent_add(fs, t, nd, new_name, nlen, in->ino, ty, &index);
	if (!r) {
		if (is_dir(in))
			in->parent = nd->ino;
		r = fs_inode_update(fs, t, in);
	}
	for (int i = 0; !r && i < fs->nhooks; i++)
		if (fs->hooks[i].on_new_name)
			fs->hooks[i].on_new_name(fs->hooks[i].ctx, t, in, nd);
	if (nd != od)
		dir_unlock(t, nd);
	dir_unlock(t, od);
	return r;
}

/*
 * utimensat / fchmod / fchown: models btrfs_setattr -> btrfs_dirty_inode.
 * The kernel joins the transaction and reserves the delayed inode's
 * update NO_FLUSH; that fails when tickets are queued (a NO_FLUSH
 * reservation does not jump them) or nothing fits, and btrfs_dirty_inode
 * then starts a 1-item transaction (FLUSH_ALL), which waits behind the
 * tickets. The model reserves the 1-item transaction directly: the same
 * waits, and the same transient hold give or take the 128 KiB of the
 * NO_FLUSH attempt (which is given back with the update).
 */
int vfs_setattr(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino)
{
	if (!fs || !root || root->dead)
		return LAB_EINVAL;
	struct inode *in = fs_inode_get(root, ino);
	if (!in)
		return LAB_ENOENT;
	fs_space_op op;
	int r = fs_space_meta_begin(fs, t, ITEMS_SETATTR, &op);
	if (r)
		return r;
	fs_charge(fs, t, var_ns(fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	r = fs_inode_update(fs, t, in);
	fs_space_meta_end(fs, t, &op);
	return r;
}

int vfs_stat(fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino, vfs_stat_info *st)
{
	if (!fs || !root || !st)
		return LAB_EINVAL;
	fs_charge(fs, t, var_ns(fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	bt_key k = bt_mkkey(ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_path p;
	bt_path_init(&p, &root->tree, t);
	int ret = bt_search(&root->tree, &p, &k, 0, 0);
	if (ret) {
		bt_path_release(&p);
		return ret < 0 ? ret : LAB_ENOENT;
	}
	bt_item it = *bt_path_item(&p);
	bt_path_release(&p);
	struct inode *in = fs_inode_get(root, ino);
	/* an update still queued as a delayed item is what stat sees (the
	 * kernel reads the inode in memory) */
	dl_pending_inode_item(dl_of(fs), in, &it);
	memset(st, 0, sizeof(*st));
	st->ino = ino;
	st->size = it.v[0];
	st->nbytes = it.v[1];
	st->generation = it.v[2];
	st->mode = it.aux;
	st->nlink = in ? in->nlink : 1;
	return 0;
}

int vfs_readdir(fs_info *fs, task *t, struct btrfs_root *root, uint64_t dirino,
		int (*fn)(void *ctx, uint64_t child, uint64_t index), void *ctx)
{
	if (!fs || !fn)
		return LAB_EINVAL;
	fs_charge(fs, t, var_ns(fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	struct inode *dir;
	int r = get_dir(root, dirino, &dir);
	if (r)
		return r;
	/* the kernel merges the queued dir index items into the listing
	 * (btrfs_readdir_get_delayed_items); inserting them first lists the
	 * same entries */
	if (dl_of(fs)) {
		r = dl_commit_inode(dl_of(fs), t, dir);
		if (r)
			return r;
	}
	bt_tree *tr = &root->tree;
	bt_key k = bt_mkkey(dirino, BTRFS_DIR_INDEX_KEY, 0);
	bt_path p;
	bt_path_init(&p, tr, t);
	int ret = bt_search(tr, &p, &k, 0, 0);
	if (ret < 0) {
		bt_path_release(&p);
		return ret;
	}
	int n = 0;
	for (;;) {
		bt_item *x = bt_path_item(&p);
		if (!x) {
			if (bt_next_leaf(tr, &p))
				break;
			continue;
		}
		if (x->key.objectid != dirino || x->key.type != BTRFS_DIR_INDEX_KEY)
			break;
		n++;
		if (fn(ctx, x->v[0], x->key.offset))
			break;
		if (bt_next_item(tr, &p))
			break;
	}
	bt_path_release(&p);
	return n;
}

/* -------------------------------------------------------- subvolumes */

int fs_make_root_dir(fs_info *fs, task *t, struct btrfs_root *root);

static int create_subvol(fs_info *fs, task *t, struct btrfs_root *parent, uint64_t parent_dir,
			 const char *name, struct btrfs_root **out);

int fs_create_subvol(fs_info *fs, task *t, struct btrfs_root *parent, uint64_t parent_dir,
		     const char *name, struct btrfs_root **out)
{
	if (!fs)
		return LAB_EINVAL;
	fs_space_op op;
	int r = fs_space_meta_begin(fs, t, ITEMS_SUBVOL, &op);
	if (r)
		return r;
	r = create_subvol(fs, t, parent, parent_dir, name, out);
	fs_space_meta_end(fs, t, &op);
	return r;
}

/* The body of create_subvol once its items are reserved. */
static int create_subvol(fs_info *fs, task *t, struct btrfs_root *parent, uint64_t parent_dir,
			 const char *name, struct btrfs_root **out)
{
	uint32_t len;
	if (!name_ok(name, &len))
		return LAB_EINVAL;
	struct inode *dir;
	int r = get_dir(parent, parent_dir, &dir);
	if (r)
		return r;
	uint64_t c, idx;
	uint32_t ty;
	r = dirent_find(fs, t, dir, name, len, &c, &ty, &idx);
	if (r != LAB_ENOENT)
		return r ? r : LAB_EINVAL;
	uint64_t id = fs_root_next_id(fs);
	struct btrfs_root *root;
	r = fs_root_create(fs, t, id, &root);
	if (r)
		return r;
	r = fs_make_root_dir(fs, t, root);
	if (r)
		return r;
	root->parent_root = parent->id;
	root->parent_dir = parent_dir;
	uint64_t index = 0;
	r = dirent_add(fs, t, dir, name, len, id, FT_DIR | FS_DIRENT_SUBVOL, &index);
	if (r)
		return r;
	bt_item it;
	memset(&it, 0, sizeof(it));
	it.v[0] = parent_dir;
	it.v[1] = index;
	bt_key k = bt_mkkey(parent->id, BTRFS_ROOT_REF_KEY, id);
	r = bt_insert(&fs->root_tree, t, &k, SZ_ROOT_REF_BASE + len, &it, NULL);
	if (!r) {
		k = bt_mkkey(id, BTRFS_ROOT_BACKREF_KEY, parent->id);
		r = bt_insert(&fs->root_tree, t, &k, SZ_ROOT_REF_BASE + len, &it, NULL);
	}
	if (r)
		return r < 0 ? r : LAB_EENGINE;
	if (out)
		*out = root;
	return 0;
}
