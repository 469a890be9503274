/*
 * space_fs.h - space reservation wired into the file system: the fs's
 * space_ctl (fs->space) fed by the allocator, the reservations the
 * operations make, the tickets their tasks park on, and the async
 * reclaim workers running their flush states against the real data path,
 * delayed refs and commits.
 *
 * Counters. fs_mount sets up fs->space and hooks alloc.h's on_change: every
 * allocation, free, unpin and new chunk is mirrored into the data and
 * metadata space_infos (total_bytes, bytes_used, bytes_reserved,
 * bytes_pinned; space_sync_alloc). bytes_may_use is what the operations
 * reserve below.
 *
 * Reservations (what btrfs 5.10 reserves, and where):
 *   metadata operations (vfs.c): fs_space_meta_begin(items) reserves
 *     insert_metadata_size(items) into a block reserve, as
 *     btrfs_start_transaction(root, items) does; tree blocks the operation
 *     allocates are taken from it (fs->cur_rsv, btrfs_use_block_rsv);
 *     fs_space_meta_end gives the rest back (btrfs_end_transaction).
 *   unlink / rmdir / rename over a file, when the last link goes: the
 *     eviction's block rsv (metadata_size(1) + insert_metadata_size(1),
 *     evict_refill_and_join) with RESERVE_FLUSH_EVICT, a priority ticket
 *     (below), joined to the operation's reserve.
 *   transaction handles (trans.h): trans_start_items does the same for a
 *     handle and trans_end releases it (tree blocks are not taken from a
 *     handle's rsv: a handle spans steps, and other tasks' steps run in
 *     between; they come from the operation's rsv or none).
 *   buffered writes (vio_write): the data bytes
 *     (btrfs_check_data_free_space: through a data ticket and the async
 *     data worker with P_000_DATA_TICKETS, 5.10; before it the writer
 *     allocates a data chunk itself, btrfs_alloc_data_chunk_ondemand)
 *     and the delalloc metadata
 *     (btrfs_delalloc_reserve_metadata) go to the inode: sp_data_held and
 *     the inode's inode_rsv. From then on the inode's holdings follow its
 *     data path state (fs_space_inode_update, called by the data path after
 *     every change): the data part shrinks to the delalloc bytes left
 *     (writeback allocates them: cow_file_range; truncate drops them), the
 *     metadata part to the size btrfs computes from outstanding extents
 *     (delalloc ranges + ordered extents) and csum bytes (delalloc +
 *     ordered bytes not yet finished): btrfs_delalloc_release_extents,
 *     btrfs_mod_outstanding_extents, btrfs_remove_ordered_extent's
 *     btrfs_delalloc_release_metadata. Holdings only shrink there: an
 *     inode dirtied below vio_write (an experiment driving vd_write) holds
 *     nothing, as if it had reserved nothing.
 *
 * Tickets. A reservation that does not fit queues a ticket (space.h) and
 * parks the task: the operation returns FS_SPACE_WAIT and the caller's
 * step returns TASK_BLOCKED, then calls the same operation again once
 * woken; the retry finds the ticket's outcome (granted bytes, or
 * LAB_ENOSPC) by task id. A reservation granted while a second one parks
 * (vio_write's data, then its metadata) is kept for the retry the same way
 * (fs_space_hold). A task without a timeline (t == NULL, setup code) never
 * waits: what does not fit (or overcommit) fails with LAB_ENOSPC. A
 * priority reservation (FLUSH_LIMIT, FLUSH_EVICT) queues ahead of the
 * normal tickets and its task runs the short priority list of flush
 * states itself (reclaim_priority_*), one state per call, also behind
 * FS_SPACE_WAIT. A caller given FS_SPACE_WAIT must call again: what its
 * ticket was granted is kept for that retry.
 * Caveat, as in the kernel: reserve before joining a transaction. A task
 * parked on a ticket inside an open handle would keep the reclaim
 * worker's commit waiting for it.
 *
 * Reclaim. The first ticket starts the two async reclaim workers
 * (reclaim.h) with flush operations on this fs: FLUSH_DELALLOC* run
 * shrink_delalloc (delalloc.h) over the data path's dirty inodes (each
 * writepages writes on the worker's task and waits for the bios);
 * FLUSH_DELAYED_REFS runs the delayed refs; ALLOC_CHUNK asks the
 * allocator for a chunk (should_alloc_chunk: not before 80% used unless
 * forced); COMMIT_TRANS commits the running transaction (the unpin then
 * grants). Delayed items and delayed iputs do not exist in the model.
 *
 * Errors: 0, FS_SPACE_WAIT, or a negative LAB_E*.
 */
#ifndef SPACE_FS_H
#define SPACE_FS_H

#include <stdint.h>

#include "fs.h"
#include "space.h"

#define FS_SPACE_WAIT 2 /* positive: t parked on a ticket; retry when woken */

struct trans_mgr;
struct dfs;
struct dinode;

/* What the wiring did (counters for tests and the front end). */
typedef struct fs_space_stats {
	uint64_t chunk_allocs;  /* chunks ALLOC_CHUNK* added */
	uint64_t commits;       /* COMMIT_TRANS commits */
	uint64_t ref_runs;      /* FLUSH_DELAYED_REFS runs */
	uint64_t enospc;        /* reservations whose ticket failed */
	uint64_t prio_tickets;  /* priority tickets (the task flushed) */
	uint64_t ondemand_chunks; /* data chunks a writer allocated itself
				   * (5.9: no data tickets) */
	uint64_t drefs_peak;    /* the delayed refs reserve's largest
				 * reserved bytes */
	uint64_t drefs_heads_peak; /* its most heads waiting to run */
} fs_space_stats;

/* A metadata operation's reservation (the handle's block_rsv). */
typedef struct fs_space_op {
	block_rsv rsv;
	block_rsv *prev;  /* the fs->cur_rsv it replaced */
	int active;
} fs_space_op;

/* Set up fs->space over fs->alloc (fs_mount). No-op without a sim. */
void fs_space_init(fs_info *fs);
/* Free the reclaim workers' state and the waiter table (fs_unmount). */
void fs_space_destroy(fs_info *fs);
/* Mirror the allocator into the space_infos and grant what now fits at
 * `at` (after a commit's unpin, a chunk allocation). */
void fs_space_sync(fs_info *fs, simtime_t at);
/* Give the reclaim workers the data path and the transaction manager
 * (vio_attach). Either may be NULL. The workers themselves start at the
 * first ticket. */
void fs_space_attach(fs_info *fs, struct trans_mgr *tm, struct dfs *df);
/* How many CPUs size the reclaim workers (default 4; which
 * shrink_delalloc they run is the fs's patches, delalloc.h). Call before
 * the first ticket. LAB_EINVAL / LAB_ESTATE (workers running already). */
int fs_space_config(fs_info *fs, int ncpus);

/* Overcommit against unallocated device space on (default, as btrfs) or
 * off (a lesson's "metadata budget, no overcommit": reservations then fit
 * only in the allocated chunks). LAB_EINVAL when reservations are off. */
int fs_space_overcommit(fs_info *fs, int on);

/*
 * Reserve `bytes` of kind into bytes_may_use for task t; the caller owns
 * them when 0 is returned. Flushing: RESERVE_FLUSH_DATA for data,
 * RESERVE_FLUSH_ALL for metadata; NO_FLUSH when t is NULL. Returns 0,
 * FS_SPACE_WAIT (t parked on a ticket: call again with the same request
 * when woken) or LAB_ENOSPC.
 */
int fs_space_reserve(fs_info *fs, task *t, int kind, uint64_t bytes);
/* fs_space_reserve with an explicit flush mode (enum space_flush). The
 * priority modes (RESERVE_FLUSH_LIMIT, RESERVE_FLUSH_EVICT) queue on
 * priority_tickets and t runs the priority flush states itself
 * (reclaim_priority_*, priority_reclaim_metadata_space): while it does,
 * FS_SPACE_WAIT is returned with t parked on a flush operation or
 * rescheduled at once for the next state; the caller returns
 * TASK_BLOCKED and calls again, as for a normal ticket. */
int fs_space_reserve_flush(fs_info *fs, task *t, int kind, uint64_t bytes, int flush);
/* Keep bytes t was granted for its retry (a later reservation of the same
 * request parked); the next fs_space_reserve of kind by t takes them. */
void fs_space_hold(fs_info *fs, task *t, int kind, uint64_t bytes);

/* btrfs_start_transaction(root, items)'s reservation for a metadata
 * operation on t: 0 (op's rsv holds it and is fs->cur_rsv), FS_SPACE_WAIT
 * or LAB_ENOSPC. */
int fs_space_meta_begin(fs_info *fs, task *t, uint64_t items, fs_space_op *op);
/* The operation is over: give back what its tree blocks did not use. */
void fs_space_meta_end(fs_info *fs, task *t, fs_space_op *op);
/* Add `bytes` reserved with `flush` to a running operation's rsv (the
 * eviction's refill inside an unlink). 0, FS_SPACE_WAIT or LAB_ENOSPC. */
int fs_space_meta_add(fs_info *fs, task *t, uint64_t bytes, int flush, fs_space_op *op);
/* The operation stops with FS_SPACE_WAIT before changing anything: what
 * op holds is kept for t's retry (its fs_space_meta_begin takes it). */
void fs_space_meta_park(fs_info *fs, task *t, fs_space_op *op);
/*
 * The delayed refs reserve (fs_info->delayed_refs_rsv, 5.0 and later):
 * every new delayed ref head adds insert_metadata_size(1) to its size
 * (btrfs_update_delayed_refs_rsv), heads that ran take it off and give
 * the reserved excess back (btrfs_delayed_refs_rsv_release; the global
 * reserve, assumed full, takes none of it). Its reserved bytes come
 * from start_transaction: a FLUSH_ALL start while the reserve is not
 * full reserves twice its items and migrates one half into it
 * (btrfs_migrate_to_delayed_refs_rsv, what does not fit goes back).
 * Tree blocks allocated while the refs run (the extent tree's COWs) are
 * taken from it (fs_space_drefs_rsv: the extent root's block_rsv).
 * delta: heads added (> 0) or run (< 0).
 */
void fs_space_dref_heads(fs_info *fs, int64_t delta, simtime_t at);
/* The reserve, for the ref runner to allocate from; NULL when
 * reservations are off. */
block_rsv *fs_space_drefs_rsv(fs_info *fs);

/* A tree block was allocated: take it from fs->cur_rsv if that holds it
 * (btrfs_use_block_rsv); else it comes from the reserves the model does
 * not keep (the global and delayed-refs reserves). */
void fs_space_tree_block(fs_info *fs);

/* A buffered write of `data` bytes (page aligned) on d was granted data
 * and delalloc metadata: the inode holds them now, and until
 * fs_space_inode_done they count as delalloc to come (the kernel counts
 * the write's extents and csum bytes at reserve time), so that updates
 * made while the write dirties its pages do not give them back. */
void fs_space_inode_add(fs_info *fs, struct dinode *d, uint64_t data,
			uint64_t meta);
/* The write has dirtied its pages (or failed): what it reserved beyond
 * the delalloc it made goes back (btrfs_delalloc_release_extents). */
void fs_space_inode_done(fs_info *fs, struct dinode *d, simtime_t at);
/* The data path changed d (see the header comment); evict: d is going,
 * give back everything it holds. The dfs hook (ctx is the fs_info). */
void fs_space_inode_update(void *fs_info, struct dinode *d, simtime_t at,
			   int evict);

/* Bytes held in bytes_may_use by kind, summed over every holder: inodes,
 * open handles, granted or kept tickets. The checker compares it with the
 * space_info. */
uint64_t fs_space_held(fs_info *fs, int kind);
/* The same but for the inodes' holdings: waiting and granted tickets, open
 * handles (the incremental check sums the inodes itself). */
uint64_t fs_space_held_others(fs_info *fs, int kind);
/* Metadata bytes held by open trans_start_items handles (trans.c keeps
 * this count). */
void fs_space_handle_held(fs_info *fs, int64_t delta);

/* Up to max delalloc inodes in the order reclaim flushes them (roots in
 * delalloc_roots order, each root's delalloc_inodes from the head).
 * Returns the count. */
uint64_t fs_space_delalloc_order(fs_info *fs, struct dinode **out, uint64_t max);
/* Inodes on the delalloc lists (fs_info's delalloc inodes count). */
uint64_t fs_space_listed(fs_info *fs);
void fs_space_get_stats(fs_info *fs, fs_space_stats *st);
/* Watching reclaim (an experiment's picture): each inode a delalloc
 * flush wrote for reclaim (its dinode, pages written, when), and each
 * flush_space call as it ends. Either callback may be NULL. */
struct reclaim_record;
typedef struct fs_space_observer {
	void *ctx;
	void (*flushed)(void *ctx, struct dinode *d, uint64_t pages, simtime_t at);
	void (*record)(void *ctx, const struct reclaim_record *r);
} fs_space_observer;
/* Set (o copied) or clear (NULL) the observer. */
void fs_space_observe(fs_info *fs, const fs_space_observer *o);
/* The most bytes_may_use of kind can reach now: total_bytes plus what
 * may be promised of the unallocated space to a FLUSH_ALL reservation
 * (btrfs_can_overcommit: an eighth of it, over the metadata profile's
 * copies; data: nothing), less what the chunks hold already (used,
 * reserved, pinned, readonly). */
uint64_t fs_space_limit(fs_info *fs, int kind);
/* The reclaim records kept so far (0 before the workers started). */
struct reclaim_ctl *fs_space_reclaim(fs_info *fs);

#endif /* SPACE_FS_H */
