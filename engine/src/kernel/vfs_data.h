/*
 * vfs_data.h - the data path of one mounted file system: buffered write,
 * read with readahead, background writeback (flusher + writepages +
 * ordered-extent completion), sync, remount (drop caches) and lseek
 * SEEK_DATA/SEEK_HOLE (lseek.c).
 *
 * Per inode (struct dinode): the io_tree (eio.h), the extent maps
 * (emap.h), the ordered extents (ordered.h), the page cache
 * (pagecache.h) and the counters delalloc_bytes / outstanding_extents.
 *
 * The data path belongs to a mounted file system (vio_attach, vfs_io.h)
 * whose fs tree holds the file extent items: ordered-extent completion
 * inserts them with fs_file_extent_insert (extent ref + csums), reads and
 * lseek walk the tree (vd_fecur), truncate uses fs_drop_extents, and
 * after a remount the tree blocks are cold until read.
 *
 * Concurrency. Tasks (sim.h) drive the operations; each charges its CPU
 * and waits to its task. The lseek range lock and writeback's per-extent
 * lock are timeline reservations on the inode (see lseek.c and the
 * writeback step): a writer of an extent inside a range an lseek holds
 * waits for the unlock, and an lseek waits for an extent being flushed.
 * In-flight reads keep their pages LOCKED in the io_tree until the bio
 * completes; an lseek whose range meets one parks on the io_tree.
 */
#ifndef VFS_DATA_H
#define VFS_DATA_H

#include <stdint.h>

#include "bdev.h"
#include "btree.h"
#include "eio.h"
#include "emap.h"
#include "items.h"
#include "labmem.h"
#include "ordered.h"
#include "pagecache.h"
#include "patches.h"
#include "sim.h"
#include "space.h"

#define DATA_MAX_BIO (1024u * 1024u) /* block layer bio size cap */
#define BDI_RA_PAGES 1024u           /* btrfs raises the bdi to >= 4 MiB */
#define DATA_MAX_EXTENT (128ull << 20) /* BTRFS_MAX_EXTENT_SIZE */
/* fext.disk of an inline extent (its data sits in the leaf; no disk
 * extent can start at 0: the first MiB of the device is reserved) */
#define FEXT_INLINE 0ull

typedef struct fext {
	uint64_t off, len, disk;
} fext;

struct dinode;
struct dfs;
struct fs_info;
struct inode;
struct trans_mgr;
struct u64map;

/* A bio of the data path: disk-contiguous pages of one inode. */
typedef struct dbio {
	bio b;
	struct dinode *d;
	uint64_t *offs;     /* file offsets of its pages / extents */
	uint32_t n, cap;
	int read;
	struct dbio *next;  /* in-flight list */
} dbio;

/* The data path's tunables (the kernel's patches are the file system's:
 * fs_patch_on(dfs.fsi, ...)). */
typedef struct data_opts {
	simtime_t dirty_expire;   /* dirty_expire_centisecs */
	simtime_t wb_interval;    /* dirty_writeback_centisecs */
	/* The flusher's wakeup is delayed work on the kernel's timer wheel,
	 * which rounds a timer up to its level's granule (at HZ=250 a 5 s
	 * delay lands on a 256 ms boundary). jiffy_ns 0: exact wakeups.
	 * jiffies0: the jiffies count at simulated time 0 (where the
	 * boundaries fall; a run's boot phase). */
	simtime_t jiffy_ns;
	uint64_t jiffies0;
	uint64_t dirty_bg_bytes;  /* dirty_background threshold */
	/* Memory the page cache may use (0: no limit). Past it clean pages
	 * are evicted, least recently used inode first. */
	uint64_t ram_bytes;
	/* dirty_ratio as bytes: a writer that finds dirty + writeback above
	 * it is throttled (0: 20% of ram_bytes; no throttling without a
	 * memory limit) */
	uint64_t dirty_bytes;
	/* Tree mode, for a workload that never reads or writes a file again
	 * once written back (untar's archive): an inode's writeback state
	 * (dinode_x, its extent maps and ordered tree) is freed as soon as
	 * the inode is clean and idle, instead of being kept with it. The
	 * extent maps are a cache of the fs tree (btrfs_get_extent rebuilds
	 * them), so nothing the run does changes; the simulator just holds
	 * 200-odd bytes less per file. */
	int release_idle_x;
} data_opts;

/*
 * The parts of a dinode a file needs only once it is written back, read
 * or lseek'd: extent maps, ordered extents, an lseek's range lock,
 * writeback's state and extent lock. A file tar has written and not yet
 * flushed has none of them: they are allocated at first use (vd_xw; a
 * writeback pass allocates them when it starts) and go with the dinode.
 * Reads of a dinode without them see them empty (vd_oe_n...).
 */
typedef struct dinode_x {
	emap_tree em;
	ordered_tree oe;
	/* writeback (the pass of d->wb_active) */
	task *wb_task;
	dbio *wb_bio;                  /* being built */
	dbio *writes;                  /* write bios in flight */
	waitq wb_waiters;              /* sync waits here */
	uint64_t wb_index;             /* next file offset to look at */
	uint64_t wb_inflight;          /* write bios in flight */
	uint64_t ordered_bytes;        /* bytes of d's ordered extents */
	uint64_t sp_data_alloc;        /* delalloc bytes writeback allocated
					* since the last space update
					* (consumed, not released) */
	uint8_t wb_sync;
	uint8_t wb_caller_waits;       /* vd_writeback_sync: bios wait on t */
	uint8_t wb_skipped;            /* the pass skipped pages under writeback */
	/* the range lock held by an lseek: [start, EOF] until `until`. Its
	 * lock pass sweeps from start (at lock_t0) to EOF (at lock_t1) over
	 * lock_recs records; a writer of an extent the sweep has not reached
	 * yet gets it first and the sweep waits (lock_delay). */
	uint64_t lseek_lock_start;
	simtime_t lseek_lock_until;
	simtime_t lock_t0, lock_t1, lock_delay;
	uint64_t lock_recs;
	/* the extent writeback has locked */
	uint64_t wb_lock_off;
	simtime_t wb_lock_until;
} dinode_x;

/*
 * One per file the data path has seen, so every byte counts (untar holds
 * 226,000 at once): pointers first, then the 64-bit fields, the embedded
 * structs and the flags last, with no padding in between (wasm32 and
 * LP64); flags are bytes.
 */
typedef struct dinode {
	struct dfs *fs;
	struct inode *inode;           /* the file system's inode; NULL once
					* evicted */
	dinode_x *x;                   /* NULL until needed (above) */
	/* in-flight reads (their pages are LOCKED in io) */
	dbio *reads;
	/* the bdi's b_dirty list (while pc.is_dirty, oldest dirtied first)
	 * and the inode LRU the memory shrinker walks (least recently used
	 * first) */
	struct dinode *dnext, *dprev, *lnext, *lprev;
	/* on its root's delalloc_inodes list (space_fs.c keeps the lists) */
	struct dinode *sp_lnext, *sp_lprev;
	uint64_t ino;
	uint64_t i_size;
	uint64_t nbytes;               /* inode_get_bytes */
	uint64_t delalloc_bytes;
	/* space reservation (space_fs.h): data bytes reserved and not yet
	 * allocated, and the delalloc metadata reserve (btrfs_inode's
	 * block_rsv, outstanding_extents, csum_bytes) */
	uint64_t sp_data_held;
	uint64_t sp_pending;           /* a buffered write reserved for and
					* not copied yet (counted as delalloc
					* to come, as the kernel counts its
					* extents and csum bytes at reserve) */
	uint64_t sp_root_id;
	/* the incremental check (check.h): what the checker last counted
	 * it holding */
	uint64_t chk_held[2];
	eio_tree io;
	pc_inode pc;
	inode_rsv sp_rsv;
	/* its index in fs->inodes, and in fs->chk_list while chk_touched
	 * (an eviction finds its slots without a search or a map) */
	uint32_t slot, chk_slot;
	/* flags (0 or 1) */
	uint8_t wb_active;             /* a writeback pass runs (x is there) */
	uint8_t sp_gone;               /* evicted: holds nothing any more */
	uint8_t sp_on_list;            /* on the delalloc_inodes list */
	/* the incremental check: touched since the last check (on
	 * fs->chk_list), and whether the checker last counted it listed */
	uint8_t chk_touched;
	uint8_t chk_listed;
	uint8_t on_unclean;            /* on fs->unclean */
} dinode;

/* An open file (struct file + btrfs_file_private). */
typedef struct dfile {
	dinode *d;
	file_ra ra;
	extent_state *llseek_cached; /* 9/9: the cached state across lseeks */
} dfile;

typedef struct dfs {
	sim *s;
	int64_t rec_fs;                /* this instance's number in a recording */
	bdev *dev;
	data_opts o;
	/* the file system whose trees hold the file extent items (and whose
	 * kernel's patches apply: fs_patch_on) */
	struct fs_info *fsi;
	/* in creation order: ninodes live ones in the first inodes_len
	 * slots, with NULL holes evictions left (an eviction from the middle
	 * was a search and a memmove of the array per unlink); read it
	 * through dfs_inodes(), which closes them */
	dinode **inode_arr;
	int ninodes, inodes_cap, inodes_len;
	struct trans_mgr *tm;          /* completions join its transaction */
	int sync_io;                   /* bios complete on the submitting task */
	uint64_t cold_gen;             /* blocks of generation <= this are
					* cold until read (after a remount) */
	uint64_t *warm;                /* tree blocks read since (bytenrs) */
	uint64_t warm_cap, warm_n;
	uint64_t warm_last[BT_MAX_LEVEL]; /* per level, the last block found
					* or put in warm (0: none): searches
					* mostly pass the same blocks */
	uint64_t wb_errors;            /* writeback allocation failures */
	int meta_cold;                 /* remounted: tree blocks not cached */
	/* statistics */
	uint64_t metadata_reads;
	uint64_t data_reads, data_read_bytes, data_writes, data_write_bytes;
	uint64_t flushes, wb_extents, ordered_done;
	uint64_t cpu_wb_ns, cpu_endio_ns;
	uint64_t cache_hits, cache_misses; /* page cache, for cp's reads */
	uint64_t ra_windows, ra_pages;
	uint64_t fst_nodes_visited;    /* fs tree blocks the cursor visited */
	/* memory limit and dirty throttling */
	pc_global pcg;                 /* cached / dirty / writeback pages */
	waitq dirty_throttle;          /* writers parked in balance_dirty */
	uint64_t pages_evicted;
	int c_evicted1;                /* the "pages_evicted" counter's id + 1, 0
					* until the first eviction names it (ids
					* go by first use: the counters' order) */
	uint64_t cpu_reclaim_ns;       /* io_tree work of evictions (kswapd) */
	uint64_t throttled;            /* writes that were throttled */
	uint64_t throttle_ns;          /* time writers spent throttled */
	simtime_t throttle_park_sum;   /* sum of the parked writers' park times */
	int series_iotree;             /* sim series: io_tree records */
	int series_delalloc;           /* sim series: delalloc extents */
	int series_ordered;            /* sim series: ordered extents in flight */
	uint64_t ordered_inflight;     /* ordered extents not yet finished */
	uint64_t delalloc_total;       /* the inodes' delalloc_bytes, summed
					* (fs_info->delalloc_bytes) */
	int flusher_armed;
	/* the flusher thread (wb_workfn of the bdi): one task writing the
	 * inodes of b_dirty oldest first, for kupdate (dirtied_when expired)
	 * and background (dirty pages over dirty_bg_bytes) writeback */
	task *flusher;
	dinode *flusher_cur;           /* the inode it is writing */
	int flusher_idle;              /* parked, waiting for work */
	int wb_kupdate;                /* a periodic wakeup asked for kupdate */
	int wb_throttle;               /* writers are throttled: write on */
	dinode *dirty_head, *dirty_tail;
	dinode *lru_head, *lru_tail;
	/* tasks waiting until ordered_done reaches ordered_wait_done (the
	 * lowest target of those waiting: btrfs_wait_ordered_roots from
	 * space reclaim) */
	waitq ordered_wait;
	uint64_t ordered_wait_done;
	/* work items for the flusher (wb->work_list: writeback_inodes_sb_nr),
	 * run before its kupdate and background writeback; the one running
	 * and the pages its inode in progress started with */
	struct dfs_work *work_head, *work_tail, *work_cur;
	uint64_t work_dirty0;
	/* Called after every change of an inode's delalloc or ordered state
	 * (write, writeback, ordered completion, truncate, eviction) so the
	 * space reservations follow it (space_fs.h). May be NULL. */
	void (*space_fn)(void *ctx, dinode *d, simtime_t at, int evict);
	void *space_ctx;
	/* the incremental check (check.h): the inodes whose data state
	 * changed since the last check (vd_chk_touch), and the sums of
	 * every dinode's chk_held / chk_listed (valid once chk_counted: a
	 * full check counted them). chk_lost: a touch could not be kept
	 * (no memory): the next check must be a full one. */
	dinode **chk_list;
	int chk_n, chk_cap, chk_lost, chk_counted;
	uint64_t chk_held[2], chk_listed;
	/* the inodes not clean (vd_clean) at the last vd_chk_reset: with
	 * chk_list, every inode that may not be clean now (one turns dirty
	 * only through a change that touches it), which is all vio_sync
	 * needs to look at. unclean_lost: a touch or an entry could not be
	 * kept (no memory): vio_sync walks every inode. */
	dinode **unclean;
	int unclean_n, unclean_cap, unclean_lost;
	dbio *dbio_free;               /* finished bios kept for reuse (a
					* read of a file is a dozen windows:
					* malloc was a tenth of a run) */
	lab_pool dinode_pool;          /* the dinodes (labmem.h) */
	lab_pool x_pool;               /* their dinode_x parts */
	lab_pool eio_pool;             /* their io_trees' records */
	lab_pool emap_pool;            /* their extent maps' small chunks */
	lab_pool oe_pool;              /* their ordered extents' small arrays */
} dfs;

/* Set up the data path of file system fsi (its sim, device and kernel);
 * vio_attach (vfs_io.h) does, and hooks it to fsi. 0 or LAB_ENOMEM. */
int dfs_init(dfs *fs, struct fs_info *fsi, const data_opts *o);
void dfs_destroy(dfs *fs);
/* The data state of an existing inode of the file system: i_size and
 * nbytes from the inode. 0 or LAB_ENOMEM. */
int dfs_inode_attach(dfs *fs, struct inode *inode, dinode **out);
/* Forget d (its inode is evicted): pages, delalloc and the io_tree go;
 * bios still in flight complete without touching the trees. */
void dfs_inode_evict(dfs *fs, dinode *d);
/* Close the holes evictions left in the inode array (order kept). */
void dfs_inodes_compact(dfs *fs);
/* The live dinodes in creation order, [0, fs->ninodes), the holes
 * evictions left closed first: how every walk reads them. A walk that
 * evicts or creates an inode asks again after it. */
static inline dinode *const *dfs_inodes(dfs *fs)
{
	if (fs->ninodes != fs->inodes_len)
		dfs_inodes_compact(fs);
	return fs->inode_arr;
}
void dfile_open(dfile *f, dinode *d, int fadvise_sequential);
/* Close: drop the cached state (models btrfs_release_file). */
void dfile_close(dfile *f);

/* d's data state changed: the next incremental check looks at it.
 * (Inline: every read() asks, and d is mostly on the list already.) */
void vd_chk_touch_slow(dinode *d);
static inline void vd_chk_touch(dinode *d)
{
	if (!d->chk_touched)
		vd_chk_touch_slow(d);
}
/* The check is done: the touched list starts empty; those of its inodes
 * not clean join fs->unclean, those there now clean leave it. */
void vd_chk_reset(dfs *fs);
/* The inodes that may not be clean (chk_list and fs->unclean), each
 * once, in dfs_inodes order: *out (the caller frees it), *n. 0, or -1
 * when the lists are incomplete or out of memory (walk dfs_inodes). */
int vd_maybe_unclean(dfs *fs, dinode ***out, int *n);

/* The dirty_ratio threshold in bytes (0: none). */
uint64_t dfs_dirty_limit(const dfs *fs);
/*
 * Evict clean pages while the cache holds more than o.ram_bytes: the
 * least recently used inode's clean pages go first, lowest index first
 * (models kswapd's shrink_inactive_list on clean file pages, simplified
 * to an LRU of inodes). Evicting a range also drops its io_tree state
 * (btrfs_release_folio -> try_release_extent_state); that work is counted
 * in cpu_reclaim_ns, not charged to any task. Returns pages evicted.
 * (Inline: every read() asks, and the cache is mostly within its limit.)
 */
uint64_t dfs_shrink_slow(dfs *fs);
static inline uint64_t dfs_shrink(dfs *fs)
{
	if (!fs->o.ram_bytes || fs->pcg.cached <= fs->o.ram_bytes / PC_PAGE)
		return 0;
	return dfs_shrink_slow(fs);
}

/* Start the flusher's periodic wakeups (every o.wb_interval). */
void dfs_start_flusher(dfs *fs);

/*
 * A work item for the flusher thread (struct wb_writeback_work as
 * writeback_inodes_sb_nr queues it: WB_SYNC_NONE, tagged, a page count):
 * the flusher runs it before its own kupdate / background writeback (which
 * yields between inodes when work is queued). It writes the inodes of
 * b_dirty dirtied before it started, oldest first (queue_io), each up to
 * a chunk of round_down(min(nr_pages, 12800) + 1024, 1024) pages
 * (writeback_chunk_size: MIN_WRITEBACK_PAGES, and half a second of the
 * initial 100 MB/s write bandwidth estimate), until nr_pages are written
 * or no such inode is left. inode_done (optional) is called for each inode
 * written, done when the work is over; both on the flusher's task, at
 * `at`. The caller owns w (it must outlive done).
 */
typedef struct dfs_work {
	int64_t nr_pages;
	void (*inode_done)(void *ctx, dinode *d, uint64_t pages, simtime_t at);
	void (*done)(void *ctx, struct dfs_work *w, simtime_t at);
	void *ctx;
	simtime_t started;     /* set when the flusher takes it */
	uint64_t pages, inodes; /* written so far */
	struct dfs_work *next;
} dfs_work;
/* Queue w at `at` (wb_queue_work: the flusher is woken at `at`). */
void dfs_queue_work(dfs *fs, dfs_work *w, simtime_t at);

/*
 * Buffered write of [off, off + len) (page aligned): dirties pages, sets
 * DELALLOC (| DELALLOC_NEW beyond i_size) on the io_tree range, bumps
 * delalloc_bytes and outstanding_extents, moves i_size, marks the inode
 * dirty. Models btrfs_buffered_write -> btrfs_dirty_pages. CPU to t.
 * Then balance_dirty_pages: if dirty + writeback pages exceed
 * dfs_dirty_limit, writeback of every dirty inode is kicked and t parks
 * until completions bring the total back under it: returns 1 (the write
 * is done; the step returns TASK_BLOCKED). With sync_io the writer
 * instead writes back the oldest dirty inodes itself (vd_writeback_sync)
 * and 0 is returned. The throttled time goes in throttle_ns, the sim
 * counter "dirty_throttle_ns" and the series "dirty_throttle_ms". Last,
 * the cache is shrunk to the memory limit (dfs_shrink). 0, 1 or LAB_E*.
 */
int vd_write(dinode *d, task *t, uint64_t off, uint64_t len);

/*
 * Read one page at off (cp's 4 KiB read). Returns 0 when the page was
 * copied, 1 when t was parked waiting for it (call again when woken).
 * Misses and readahead markers start readahead (models filemap_read ->
 * page_cache_sync_ra / page_cache_async_ra -> btrfs_readahead).
 */
int vd_read_page(dfile *f, task *t, uint64_t off);
/* vd_read_page of every page of [off, end) in order, the same result
 * with runs of cached pages taken at once. 0, 1 (parked: call again) or
 * negative. */
int vd_read_pages(dfile *f, task *t, uint64_t off, uint64_t end);
/* One read() of [off, end) on an open file: as vd_read_pages, but a miss
 * or a readahead marker asks for the pages left in the call, as
 * filemap_read does (page_cache_sync_ra / page_cache_async_ra with
 * last_index - index), so the first window is sized by the request. */
int vd_read_call(dfile *f, task *t, uint64_t off, uint64_t end);

/*
 * Write back d's delalloc from offset 0 on t until about max_pages pages
 * were written (a delalloc range is finished once started): space
 * reclaim's writepages (sync_inode with a writeback_control). wait = 0
 * (WB_SYNC_NONE): the bios are submitted and complete at their end_io,
 * as any writeback's; wait = 1 (the synchronous drive, sync_io): t waits
 * for them and completes their ordered extents itself. d must not be
 * under writeback. Returns pages written or a negative LAB_E*.
 */
int64_t vd_writeback_nr(dinode *d, task *t, int64_t max_pages, int wait);
/* btrfs_wait_ordered_roots(nr): wait for the oldest nr ordered extents
 * in flight (all of them if fewer) to complete. 0 if none is in flight,
 * else t parks until as many have completed (returns 1): completions go
 * in submission order on the modelled devices, so those are the oldest. */
int vd_wait_ordered(dfs *fs, task *t, uint64_t nr);

/* Kick writeback of d now (sync = 1: WB_SYNC_ALL, every dirty page). */
void vd_writeback_start(dinode *d, int sync);
/* Write back every dirty page of d on t and wait for the bios and the
 * ordered extents (with sync_io: the fsync of vfs_io.h). 0 or
 * negative (LAB_ENOSPC from the allocator). */
int vd_writeback_sync(dinode *d, task *t);
/* The same from file offset start to EOF: filemap_fdatawrite_range(start,
 * -1) and the waits of btrfs_wait_ordered_range. Delalloc before start
 * stays dirty (find_lock_delalloc_range never starts before the locked
 * page), so a start inside a delalloc range splits it: the part from
 * start on becomes its own extent. */
int vd_writeback_range_sync(dinode *d, task *t, uint64_t start);
/* Whether d is fully written back: no dirty pages, no ordered extents. */
int vd_clean(const dinode *d);

/*
 * fsync, the data part (models the start of btrfs_sync_file: write back
 * every dirty page of the inode, then wait for its ordered extents).
 * Returns 0 when the inode is clean, 1 when t was parked until writeback
 * progresses (call again when woken). The log tree part is not here.
 */
int vd_fsync(dinode *d, task *t);

/*
 * truncate(2) to new_size (models btrfs_setattr -> btrfs_truncate for the
 * data side): growing only moves i_size (a hole); shrinking drops the pages
 * past the new end, their DELALLOC / UPTODATE records, extent maps and the
 * file extent items (the one crossing the new end is trimmed). Returns 0,
 * or 1 when t was parked because writeback of the range is in flight.
 */
int vd_truncate(dinode *d, task *t, uint64_t new_size);

/* Remount: drop the page cache, extent maps and io_tree of every inode
 * and make the tree blocks cold. The data must be clean (sync first). */
void dfs_remount(dfs *fs);

/*
 * A cursor over d's file extent items in file order, in the fs tree
 * (fe_iter; the tree charges its node visits, cold blocks are read).
 * first: the item covering off or the next one; 0 with *cur filled, 1 at
 * the end, negative on error. nodes (may be NULL) accumulates the tree
 * blocks visited. Release with vd_fecur_end.
 */
typedef struct vd_fecur {
	dinode *d;
	task *t;
	uint64_t *nodes;
	fe_iter it;
	const bt_node *leaf;   /* the leaf last charged */
	int open;
	fext cur;
	int type;              /* FE_* of cur */
} vd_fecur;
int vd_fecur_first(vd_fecur *c, dinode *d, task *t, uint64_t off, uint64_t *nodes);
int vd_fecur_next(vd_fecur *c);
void vd_fecur_end(vd_fecur *c);
/* Charge a cold read of every block on path p not read since the
 * remount. Returns the blocks read. */
uint64_t vd_tree_touch(dfs *fs, task *t, const bt_path *p);

/* ---- vfs_data_items.c internals shared with vfs_data*.c ---- */
/* btrfs_get_extent's search for the page at off: 1 with *x the item with
 * data covering it (disk FEXT_INLINE for inline), 0 with *x the hole up to
 * the next item or EOF (disk EM_HOLE), or negative. */
int vd_fe_map(dinode *d, task *t, uint64_t off, fext *x);
/* The item part of finish_ordered_io for oe (t may be NULL). */
int vd_fe_finish_tree(dinode *d, task *t, const ordered_extent *oe);
/* The item part of a truncate to new_size (from: the first page boundary
 * at or after it). */
int vd_fe_truncate_tree(dinode *d, task *t, uint64_t new_size, uint64_t from);
/* d's items against its derived state; returns failures. */
int vd_fe_check_tree(const dinode *d);

/* d's dinode_x, allocated on first use; NULL when out of memory. */
dinode_x *vd_xw(dinode *d);
/* What a dinode without its dinode_x reads: ordered extents, items in
 * flight, lseek's lock. */
static inline uint64_t vd_oe_n(const dinode *d)
{
	return d->x ? d->x->oe.n : 0;
}
static inline simtime_t vd_lseek_until(const dinode *d)
{
	return d->x ? d->x->lseek_lock_until : 0;
}
/* writeback's numbers, 0 without a dinode_x */
static inline uint64_t vd_wb_inflight(const dinode *d)
{
	return d->x ? d->x->wb_inflight : 0;
}
static inline uint64_t vd_ordered_bytes(const dinode *d)
{
	return d->x ? d->x->ordered_bytes : 0;
}
/* Where an fsync, truncate or sync waits for d's writeback: d is under
 * writeback or has ordered extents or bios in flight, so it has its
 * dinode_x. */
waitq *vd_wb_waiters(dinode *d);
/* An empty extent-map tree / ordered tree to look things up in when d has
 * no dinode_x (a lookup on an empty tree writes nothing). */
emap_tree *vd_em_r(dinode *d);
ordered_tree *vd_oe_r(dinode *d);

/* outstanding_extents: one per delalloc extent (record) plus one per
 * ordered extent, as btrfs_set/clear_delalloc_extent and the ordered
 * extent code keep it. */
static inline uint64_t vd_outstanding(const dinode *d)
{
	return d->io.recs_with[1] + vd_oe_n(d);
}

/* The time a task sleeping on a range lock takes to run again once the
 * lock is released: scheduling latency, exponential with mean
 * C_WAKEUP_NS (drawn from the simulator's PRNG). */
simtime_t vd_wakeup_ns(dfs *fs);

/* Invariants of the data path; returns failures. */
int vd_check(const dinode *d);

#endif /* VFS_DATA_H */
