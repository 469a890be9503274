/*
 * space_fs_int.h - what space_fs.c (reservations, holdings) and
 * space_flush.c (the delalloc lists and the reclaim workers' flush
 * operations on the fs) share. Private to the two.
 */
#ifndef SPACE_FS_INT_H
#define SPACE_FS_INT_H

#include <stdint.h>

#include "delalloc.h"
#include "reclaim.h"
#include "space_fs.h"
#include "trans.h"
#include "vfs_data.h"

/* A reservation waiting on a ticket, or granted and kept for a retry. */
typedef struct sfs_wait {
	int task_id;
	int kind;
	int prio;          /* a priority reservation (FLUSH_LIMIT / EVICT):
			    * keyed apart from the normal ones of the task */
	int held;          /* granted bytes kept for the retry (no ticket) */
	int flushing;      /* prio: t runs the priority flush states (p) */
	uint64_t bytes;
	space_ticket tk;
	reclaim_prio p;
} sfs_wait;

/* A commit a task drives from the COMMIT_TRANS state (a reclaim worker
 * or a priority flusher): its handle is kept across TRANS_WAIT, as
 * reclaim.h's RECLAIM_RETRY expects. */
typedef struct sfs_commit {
	int task_id;
	trans_handle h;
	int state;         /* 0 idle, 1 joining, 2 committing */
} sfs_commit;

#define SFS_COMMITTERS 16 /* tasks in the COMMIT_TRANS state at once */

/* A root on fs_info->delalloc_roots: its delalloc_inodes (a FIFO linked
 * through the inodes) and when it (last) joined the list. */
typedef struct sfs_droot {
	uint64_t root, n, seq;
	dinode *head, *tail;
} sfs_droot;

typedef struct sfs {
	fs_info *fs;
	struct trans_mgr *tm;
	dfs *df;
	int ncpus;
	int dc_ready, rc_ready;
	delalloc_ctl dc;
	reclaim_ctl rc;
	sfs_wait **w;      /* pointers: tickets are linked by address */
	int nw, wcap;
	sfs_wait *spare;   /* the next reservation's ticket (space_fs.c) */
	uint64_t handle_held;
	/* the delalloc lists: roots in the order they got delalloc, each
	 * root's inodes in the order they did (list_seq orders both) */
	sfs_droot *droots;
	int ndroots, droots_cap;
	uint64_t list_seq, nr_listed;
	sfs_commit commit[SFS_COMMITTERS];
	/* fs_info->delayed_refs_rsv: 256 KiB per delayed ref head not yet
	 * run (size), filled by start_transaction (reserved); held in
	 * bytes_may_use until the heads run (fs_space_dref_heads) */
	block_rsv drefs;
	uint64_t drefs_heads;
	struct sb_work *sb_works; /* 5.9's works queued to the flusher */
	fs_space_stats st;
	fs_space_observer obs;
} sfs;
/* Hand the observer to the workers (once they exist). */
void sfs_observe_apply(sfs *x);

/* The fs's wiring, or NULL when reservations are off (no sim). */
static inline sfs *get_sfs(fs_info *fs)
{
	return fs->space_on ? fs->space_fs : NULL;
}

/* The delalloc lists (space_flush.c): d on its root's list exactly while
 * it has delalloc (evict: it leaves); the lists in flush order. */
int sfs_on_list(const dinode *d);
void sfs_list_update(sfs *x, dinode *d, int evict);
uint64_t sfs_list(void *ctx, void **out, uint64_t max);
/* btrfs_chunk_alloc of a chunk of kind on t (force: CHUNK_ALLOC_FORCE;
 * else should_alloc_chunk decides); marks the kind full when no chunk
 * fits. 0 or LAB_E*. */
int sfs_alloc_chunk(sfs *x, task *t, int kind, int force);
/* Start the reclaim workers (the first ticket's kick, or a priority
 * ticket); 0 or LAB_E*. */
int sfs_start_workers(fs_info *fs, sfs *x, simtime_t at);
/* space.h's kick before the workers exist. */
void sfs_lazy_kick(void *ctx, space_info *si, simtime_t at);
/* Free the 5.9 works still queued (unmount in mid-run). */
void sfs_sb_works_free(sfs *x);

#endif /* SPACE_FS_INT_H */
