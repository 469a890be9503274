/*
 * alloc.h - block groups and the extent allocator.
 *
 * The device's space is carved into chunks on demand, as 5.10's
 * init_alloc_chunk_ctl_policy_regular sizes them: data block groups of
 * 1 GiB; metadata block groups of 1 GiB on a file system larger than
 * 50 GiB ("for larger filesystems, use larger metadata chunks"), else
 * 256 MiB; at most 10% of the device each. Data is single profile;
 * metadata single or DUP (alloc_set_meta_dup: each metadata chunk takes
 * two stripes of its size on the device, the second right after the
 * first). Logical == physical (for DUP: the first stripe).
 * Each block group tracks its space in 4 KiB sectors with a bitmap; an
 * allocation is a next-fit search for a free run (a much simplified
 * find_free_extent). Freed extents are pinned until the transaction
 * commits (btrfs_pin_extent / unpin_extent_range), so a committed tree is
 * never overwritten before the new one is on disk.
 *
 * Counters follow btrfs's space_info: total (chunks), used (extents
 * allocated), pinned. Errors: 0 or a negative LAB_E* (LAB_ENOSPC).
 */
#ifndef ALLOC_H
#define ALLOC_H

#include <stdint.h>

enum { ALLOC_DATA = 0, ALLOC_METADATA = 1, ALLOC_KINDS = 2 };

#define ALLOC_DATA_CHUNK (1024ull << 20)
#define ALLOC_META_CHUNK (256ull << 20)       /* file systems up to 50 GiB */
#define ALLOC_META_CHUNK_LARGE (1024ull << 20) /* larger ones */
#define ALLOC_META_LARGE_FS (50ull << 30)
#define ALLOC_SECTOR 4096ull
/* Smallest device: room for one chunk of each kind at the 10% cap */
#define ALLOC_MIN_DEV (64ull << 20)

typedef struct block_group {
	uint64_t start, length;
	int kind;             /* ALLOC_DATA / ALLOC_METADATA */
	uint64_t used;        /* bytes in extents with an extent item */
	uint64_t reserved;    /* allocated, extent item not yet inserted */
	uint64_t pinned;      /* bytes freed this transaction */
	uint64_t *bitmap;     /* 1 bit per sector: allocated or pinned */
	uint64_t cursor;      /* next-fit position, in sectors */
	uint64_t no_run;      /* no free run of this many sectors or more (a
			       * search failed since the last free; 0: unknown) */
} block_group;

typedef struct pinned_ext {
	uint64_t bytenr, bytes;
} pinned_ext;

typedef struct alloc_ctl {
	block_group *bgs;     /* sorted by start */
	int nbgs, cap;
	uint64_t dev_bytes;   /* device size */
	uint64_t dev_alloc;   /* bytes carved into chunks (device extents:
			       * a DUP chunk counts twice) */
	int meta_factor;      /* device stripes per metadata chunk: 1 single,
			       * 2 DUP */
	/* Chunks already full when the file system was mounted
	 * (alloc_prefill): counted in total/used and dev_alloc, with no
	 * block group of their own (nothing is ever allocated or freed in
	 * them). */
	uint64_t prefill[ALLOC_KINDS];
	pinned_ext *pinned;   /* freed this transaction */
	int npinned, pcap;
	uint64_t total[ALLOC_KINDS], used[ALLOC_KINDS], pinned_bytes[ALLOC_KINDS];
	uint64_t reserved[ALLOC_KINDS];
	uint64_t allocs, frees, chunk_allocs;
	/* Chunk sizes for this device: the defaults above, capped at 10% of
	 * the device as btrfs caps them (init_alloc_chunk_ctl_policy_regular:
	 * "we don't want a chunk larger than 10% of writable space"). */
	uint64_t chunk_bytes[ALLOC_KINDS];
	/* Called after every change of the counters (an allocation, a free,
	 * an unpin, a new chunk): the fs mirrors them into its space_infos
	 * (space_sync_alloc). May be NULL. */
	void (*on_change)(void *ctx);
	void *on_change_ctx;
} alloc_ctl;

/* dev_bytes: device size (>= ALLOC_MIN_DEV). The first 1 MiB is reserved
 * (the superblock area), as btrfs does. */
int alloc_init(alloc_ctl *a, uint64_t dev_bytes);
void alloc_destroy(alloc_ctl *a);
/* Metadata chunks from now on: DUP (two device stripes each) or single.
 * Call before the first metadata chunk. */
void alloc_set_meta_dup(alloc_ctl *a, int dup);
/* A file system that was in use before this mount: `bytes` of the device
 * already in chunks, every one of them full, of which meta_bytes are
 * metadata chunks' device extents (a DUP chunk's two stripes both
 * count). The chunks' logical sizes join total[] and used[] (data:
 * bytes - meta_bytes; metadata: meta_bytes / meta_factor); no block
 * group is made for them. 0, LAB_EINVAL (more than the device holds, or
 * meta_bytes > bytes). Call right after alloc_init. */
int alloc_prefill(alloc_ctl *a, uint64_t bytes, uint64_t meta_bytes);
/* Allocate `bytes` (multiple of 4 KiB) of the given kind. Allocates a new
 * chunk when the existing ones have no free run. The extent counts as
 * reserved until alloc_mark_used (its extent item is inserted). */
int alloc_extent(alloc_ctl *a, int kind, uint64_t bytes, uint64_t *bytenr);
/* Reserved -> used: the extent's first reference reached the extent tree
 * (models alloc_reserved_file_extent / alloc_reserved_tree_block). */
int alloc_mark_used(alloc_ctl *a, uint64_t bytenr, uint64_t bytes);
/* Free a used extent: it is pinned (unusable) until alloc_unpin_all(). */
int alloc_free(alloc_ctl *a, uint64_t bytenr, uint64_t bytes);
/* Return a reserved extent that was never referenced (an aborted
 * reservation) to the free space at once. */
int alloc_free_now(alloc_ctl *a, uint64_t bytenr, uint64_t bytes);
/* Carve a new chunk of kind now (models btrfs_chunk_alloc with
 * CHUNK_ALLOC_FORCE, single profile). 0, LAB_ENOSPC (the device has no
 * room for one), LAB_EINVAL or LAB_ENOMEM. */
int alloc_chunk_new(alloc_ctl *a, int kind);
/* Whether a new chunk of kind would still fit on the device. */
int alloc_chunk_fits(const alloc_ctl *a, int kind);
/* Bytes the allocator could still hand out for `kind` (ALLOC_KINDS: for
 * either): free space in the block groups of that kind plus the device
 * not yet carved into chunks. An upper bound (a free run may be split, a
 * last chunk too small), so a workload needing more cannot fit: what an
 * experiment checks up front. */
uint64_t alloc_room(const alloc_ctl *a, int kind);
/* Commit: pinned extents become free. */
void alloc_unpin_all(alloc_ctl *a);
/* The block group containing bytenr, or NULL. */
block_group *alloc_find_bg(alloc_ctl *a, uint64_t bytenr);
/* Whether every sector of [bytenr, +bytes) is allocated (or pinned). */
int alloc_is_allocated(const alloc_ctl *a, uint64_t bytenr, uint64_t bytes);

#endif /* ALLOC_H */
