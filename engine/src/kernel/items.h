/*
 * items.h - btrfs item types, their on-disk sizes, the meaning of each
 * item's compact payload (bt_item.aux / v[]), and the item-level
 * operations the data path, the VFS and the transaction code use: file
 * extent items (insert, drop, lookup, iterate), extent items with inline
 * backrefs, checksum items, inode items and orphan items.
 *
 * Payload conventions (everything else in an item is only its size):
 *   INODE_ITEM      v0 size, v1 nbytes, v2 generation; aux mode
 *   INODE_REF       key (ino, 12, parent dir); v0 dir index, v1 name hash
 *   DIR_ITEM        key (dir, 84, crc32c(name)); v0 child ino (or root id),
 *                   v1 name hash (fnv64), v2 dir index,
 *                   aux file type | FS_DIRENT_SUBVOL
 *                   (several names with one crc32c share the item: its size
 *                   grows, extra entries go to fs->dir_collisions)
 *   DIR_INDEX       key (dir, 96, index); v0 child, v1 name hash, aux type
 *   EXTENT_DATA     key (ino, 108, file offset); aux FE_INLINE/REG/PREALLOC;
 *                   v0 disk bytenr (0 for inline), v1 num_bytes (file bytes
 *                   covered; inline: ram bytes), v2 disk_num_bytes |
 *                   extent offset << 40 (see fe_*)
 *   EXTENT_ITEM     key (bytenr, 168, num_bytes) data extents;
 *   METADATA_ITEM   key (bytenr, 169, level) tree blocks (skinny);
 *                   v0 refs, v1 first ref root, v2 first ref owner (ino or
 *                   level), aux inline ref records
 *   EXTENT_CSUM     key (EXTENT_CSUM_OBJECTID, 128, disk bytenr); 4 bytes
 *                   per 4 KiB sector, adjacent runs merged
 *   ROOT_ITEM       key (root id, 132, 0); v0 root bytenr, v1 generation,
 *                   v2 refs; aux level
 *   ROOT_REF/BACKREF key (parent, 156, child) / (child, 144, parent);
 *                   v0 dirid, v1 dir index
 *   BLOCK_GROUP_ITEM key (start, 192, length) in the extent tree; v0 used,
 *                   aux flags
 *   ORPHAN_ITEM     key (ORPHAN_OBJECTID, 48, ino), no data
 */
#ifndef ITEMS_H
#define ITEMS_H

#include <stdint.h>

#include "btree.h"

/* Key types (btrfs_tree.h values). */
enum {
	BTRFS_INODE_ITEM_KEY = 1,
	BTRFS_INODE_REF_KEY = 12,
	BTRFS_XATTR_ITEM_KEY = 24,
	BTRFS_ORPHAN_ITEM_KEY = 48,
	BTRFS_DIR_LOG_INDEX_KEY = 72, /* log trees only: a logged dir index range */
	BTRFS_DIR_ITEM_KEY = 84,
	BTRFS_DIR_INDEX_KEY = 96,
	BTRFS_EXTENT_DATA_KEY = 108,
	BTRFS_EXTENT_CSUM_KEY = 128,
	BTRFS_ROOT_ITEM_KEY = 132,
	BTRFS_ROOT_BACKREF_KEY = 144,
	BTRFS_ROOT_REF_KEY = 156,
	BTRFS_EXTENT_ITEM_KEY = 168,
	BTRFS_METADATA_ITEM_KEY = 169,
	BTRFS_TREE_BLOCK_REF_KEY = 176,
	BTRFS_EXTENT_DATA_REF_KEY = 178,
	BTRFS_SHARED_BLOCK_REF_KEY = 182,
	BTRFS_SHARED_DATA_REF_KEY = 184,
	BTRFS_BLOCK_GROUP_ITEM_KEY = 192,
};

/* Object ids. */
#define BTRFS_ROOT_TREE_OBJECTID 1ull
#define BTRFS_EXTENT_TREE_OBJECTID 2ull
#define BTRFS_FS_TREE_OBJECTID 5ull
#define BTRFS_ROOT_TREE_DIR_OBJECTID 6ull
#define BTRFS_CSUM_TREE_OBJECTID 7ull
#define BTRFS_FIRST_FREE_OBJECTID 256ull
#define BTRFS_LAST_FREE_OBJECTID ((uint64_t)-256)
#define BTRFS_ORPHAN_OBJECTID ((uint64_t)-5)
#define BTRFS_TREE_LOG_OBJECTID ((uint64_t)-6)
#define BTRFS_EXTENT_CSUM_OBJECTID ((uint64_t)-10)

/* Item data sizes (bytes), as the on-disk structs. */
#define SZ_INODE_ITEM 160u
#define SZ_DIR_LOG_ITEM 8u           /* btrfs_dir_log_item: the range's end */
#define SZ_INODE_REF_BASE 10u        /* + name */
#define SZ_DIR_ITEM_BASE 30u         /* + name (+ xattr data) */
#define SZ_FE_INLINE_BASE 21u        /* + inline data bytes */
#define SZ_FE_REG 53u
#define SZ_ROOT_ITEM 439u
#define SZ_ROOT_REF_BASE 18u         /* + name */
#define SZ_EXTENT_ITEM 24u           /* btrfs_extent_item */
#define SZ_INLINE_TREE_REF 9u        /* type + root */
#define SZ_INLINE_SHARED_BLOCK_REF 9u
#define SZ_INLINE_DATA_REF 29u       /* type + extent_data_ref (28) */
#define SZ_INLINE_SHARED_DATA_REF 13u
#define SZ_BLOCK_GROUP_ITEM 24u
#define SZ_CSUM_PER_SECTOR 4u        /* crc32c */
#define SECTORSIZE 4096u
/* largest csum item: what fits a leaf beside one more item (MAX_CSUM_ITEMS) */
#define CSUM_MAX_BYTES ((BT_LEAF_DATA_SIZE - 2u * BT_ITEM_HEADER) / SZ_CSUM_PER_SECTOR * SZ_CSUM_PER_SECTOR - SZ_CSUM_PER_SECTOR)

/* File extent types */
enum { FE_INLINE = 0, FE_REG = 1, FE_PREALLOC = 2 };
/* Directory entry file types (aux low byte) */
enum { FT_REG = 1, FT_DIR = 2 };
#define FS_DIRENT_SUBVOL 0x100u

static inline uint64_t fe_disk_len(const bt_item *it) { return it->v[2] & ((1ull << 40) - 1); }
static inline uint64_t fe_ext_off(const bt_item *it) { return (it->v[2] >> 40) * SECTORSIZE; }
static inline uint64_t fe_pack(uint64_t disk_len, uint64_t ext_off)
{
	return (disk_len & ((1ull << 40) - 1)) | ((ext_off / SECTORSIZE) << 40);
}

/* Name hashes: crc32c seeded with ~1 as btrfs_name_hash (dir item keys;
 * tests/test_oracle.c checks them against mkfs.btrfs), and a 64-bit FNV-1a
 * kept in payloads to tell names apart. */
uint32_t items_crc32c(uint32_t crc, const void *data, uint32_t len);
uint64_t items_name_hash(const char *name, uint32_t len);
static inline uint64_t items_dir_key_hash(const char *name, uint32_t len)
{
	return items_crc32c(~1u, name, len);
}

struct fs_info;
struct inode;
struct btrfs_root;

/* A file extent item as seen by callers. */
typedef struct fe_info {
	uint64_t file_off;       /* key offset */
	uint64_t num_bytes;      /* file bytes covered (inline: data length) */
	uint64_t disk_bytenr;    /* 0 for inline (and for a hole) */
	uint64_t disk_num_bytes;
	uint64_t extent_offset;  /* offset of file_off inside the disk extent */
	int type;                /* FE_* */
} fe_info;

/*
 * Insert a regular or prealloc file extent item for [file_off, file_off +
 * num_bytes) pointing at disk extent [disk_bytenr, +disk_num_bytes), after
 * dropping whatever items covered that range; queue the data ref (+1) for
 * the extent tree and insert the range's checksums (not for prealloc).
 * Updates inode->nbytes in memory; the caller updates the inode item
 * (fs_inode_update) as finish_ordered_io does. Models
 * insert_reserved_file_extent + btrfs_csum_file_blocks.
 * The disk extent must have been allocated with alloc_extent(ALLOC_DATA).
 */
int fs_file_extent_insert(struct fs_info *fs, task *t, struct inode *inode,
			  uint64_t file_off, uint64_t num_bytes,
			  uint64_t disk_bytenr, uint64_t disk_num_bytes, int type);
/* Insert an inline extent holding `len` bytes at file offset 0 (callers
 * check len <= fs->opts.max_inline and the file is a single small extent;
 * models insert_inline_extent / cow_file_range_inline). */
int fs_file_extent_insert_inline(struct fs_info *fs, task *t,
				 struct inode *inode, uint64_t len);
/*
 * Drop the file extent items covering [start, end): items wholly inside
 * are deleted (their data refs dropped), items crossing an edge are
 * trimmed, an item spanning the whole range is split in two (the disk
 * extent gains a ref). Models btrfs_drop_extents with NO_HOLES. *dropped
 * (may be NULL) receives the file bytes unmapped.
 */
int fs_drop_extents(struct fs_info *fs, task *t, struct inode *inode,
		    uint64_t start, uint64_t end, uint64_t *dropped);
/* The file extent item covering `off`, else the first one after it.
 * Returns 0 (filled), 1 if there is none at or after off, or negative. */
int fs_file_extent_lookup(struct fs_info *fs, task *t, struct inode *inode,
			  uint64_t off, fe_info *out);

/* In-order iteration over an inode's file extent items (lseek walks them).
 * first: positions at the item covering `off` or the next one. Each call
 * returns 0 with *out filled, 1 at the end, or negative. Release with
 * fe_iter_end (the leaf's read lock is held in between). */
typedef struct fe_iter {
	bt_path path;
	struct inode *inode;
	int started;
} fe_iter;
int fe_iter_first(struct fs_info *fs, task *t, struct inode *inode,
		  uint64_t off, fe_iter *it, fe_info *out);
int fe_iter_next(struct fs_info *fs, fe_iter *it, fe_info *out);
void fe_iter_end(fe_iter *it);

/* Checksums for data at [disk_bytenr, +len) (multiples of 4 KiB): insert
 * merging with an adjacent item when it can grow, delete (splitting items
 * as needed), count covered sectors. Models btrfs_csum_file_blocks /
 * btrfs_del_csums. */
int fs_csum_insert(struct fs_info *fs, task *t, uint64_t disk_bytenr, uint64_t len);
int fs_csum_delete(struct fs_info *fs, task *t, uint64_t disk_bytenr, uint64_t len);
uint64_t fs_csum_count(struct fs_info *fs, uint64_t disk_bytenr, uint64_t len);

/* Inode items: insert a new one, write the in-memory inode back (models
 * btrfs_update_inode: search with COW, copy fields, mark dirty), delete. */
int fs_inode_item_insert(struct fs_info *fs, task *t, struct inode *inode);
int fs_inode_update(struct fs_info *fs, task *t, struct inode *inode);
int fs_inode_item_delete(struct fs_info *fs, task *t, struct inode *inode);

/* Orphan items (models btrfs_orphan_add / btrfs_del_orphan_item). */
int fs_orphan_add(struct fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino);
int fs_orphan_del(struct fs_info *fs, task *t, struct btrfs_root *root, uint64_t ino);

/* Size of an extent item with `records` inline refs of the given kind. */
uint32_t items_extent_item_size(int is_tree, uint32_t records);

#endif /* ITEMS_H */
