/*
 * delayed_ref.h - the per-transaction delayed ref root: ref heads by
 * bytenr, and the qgroup dirty-extent records (dirty_extent_root) with the
 * RFC's counter nr_dirty_extents.
 *
 * One delayed_ref_root lives in each transaction (models struct
 * btrfs_delayed_ref_root). The extent-tree side of a delayed ref (the
 * queued ref change itself) is fs->refq, applied by fs_run_refs(); here the
 * heads are counted so the transaction code can decide when to run them,
 * as btrfs_should_throttle_delayed_refs does.
 */
#ifndef DELAYED_REF_H
#define DELAYED_REF_H

#include <stdint.h>

#include "backref.h"

/* Where a qgroup record came from (for the lab's breakdown). */
enum {
	QREC_DATA = 0,    /* a regular data extent whose ref was dropped */
	QREC_LEAF = 1,    /* a freed subvolume leaf */
	QREC_NODE = 2,    /* a freed subvolume node (or root) */
	QREC_PARENT = 3,  /* a COW/alloc/free in another fs tree (the parent) */
	QREC_SUBTREE = 4, /* traced by btrfs_qgroup_trace_subtree (shared) */
	QREC_OTHER = 5,   /* anything else (writes during the run) */
	QREC_NSRC = 6,
};

/* A dirty extent (models struct btrfs_qgroup_extent_record). */
typedef struct qg_record {
	uint64_t bytenr, num_bytes;
	rootset old_roots;
	uint8_t src;
} qg_record;

/* A delayed ref head (models struct btrfs_delayed_ref_head, reduced). */
typedef struct dref_head {
	uint64_t bytenr;
	int32_t ref_mod;
	uint8_t is_tree;
} dref_head;

typedef struct delayed_ref_root {
	dref_head *heads;
	uint32_t nheads, heads_cap;
	u64map head_map;
	uint64_t num_entries;     /* ref mods queued in this transaction */
	qg_record *recs;          /* dirty_extent_root, in insertion order */
	uint32_t nrecs, recs_cap;
	u64map rec_map;           /* bytenr -> index in recs */
	int64_t nr_dirty_extents; /* the RFC's atomic64 counter */
	uint64_t qgroup_to_skip;
	uint64_t heads_run;       /* heads run during the transaction */
	uint64_t dup_inserts;     /* duplicate (de-duplicated) trace attempts */
} delayed_ref_root;

/* Set up a fresh root (join_transaction: the counter starts at 0). */
void dref_root_init(delayed_ref_root *d);
/* Tear down (models btrfs_qgroup_destroy_extent_records plus freeing the
 * heads): records left are freed and the counter is reset to 0. */
void dref_root_destroy(delayed_ref_root *d);
/* Add a ref modification for bytenr to its head, creating the head if it
 * is new (models add_delayed_ref_head / insert_delayed_ref). */
int dref_add(delayed_ref_root *d, uint64_t bytenr, int is_tree, int delta);
/* Ref heads not yet run. */
static inline uint32_t dref_heads_pending(const delayed_ref_root *d) { return d->nheads; }
/* The heads were run (by fs_run_refs): forget them. Returns how many. */
uint32_t dref_heads_clear(delayed_ref_root *d);
/*
 * Insert a dirty-extent record (models btrfs_qgroup_trace_extent_nolock):
 * returns 1 if a record for rec->bytenr exists already (nothing changes),
 * 0 if inserted (nr_dirty_extents is incremented), or LAB_ENOMEM.
 */
int dref_trace_extent(delayed_ref_root *d, const qg_record *rec);
int dref_has_record(const delayed_ref_root *d, uint64_t bytenr);
/* Sort the records by bytenr, the order btrfs_qgroup_account_extents
 * visits them in (rb_first of dirty_extent_root). */
void dref_records_sort(delayed_ref_root *d);
/* Remove every record after accounting; the counter must already be 0. */
void dref_records_clear(delayed_ref_root *d);

#endif /* DELAYED_REF_H */
