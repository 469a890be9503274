/*
 * delayed_ref.c - delayed ref heads and the qgroup dirty-extent records of
 * one transaction, with the RFC's nr_dirty_extents counter.
 */
#include "delayed_ref.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "lab.h"
#include "labmem.h"

/*
 * Initialise a transaction's delayed ref root. Models the part of
 * join_transaction that sets up cur_trans->delayed_refs, including the
 * RFC's atomic64_set(&nr_dirty_extents, 0).
 */
void dref_root_init(delayed_ref_root *d)
{
	memset(d, 0, sizeof *d);
	d->nr_dirty_extents = 0;
}

/*
 * Free the heads and every record left over. Models
 * btrfs_qgroup_destroy_extent_records() (which the RFC makes reset the
 * counter) plus the release of the heads at transaction teardown.
 */
void dref_root_destroy(delayed_ref_root *d)
{
	free(d->heads);
	free(d->recs);
	u64map_free(&d->head_map);
	u64map_free(&d->rec_map);
	d->heads = NULL;
	d->recs = NULL;
	d->nheads = d->heads_cap = d->nrecs = d->recs_cap = 0;
	d->nr_dirty_extents = 0;
}

/*
 * Add one ref modification (+1/-1) to the head for bytenr, creating the
 * head on first use (models add_delayed_ref_head: one head per bytenr per
 * transaction; further refs merge into it). Returns 0 or LAB_ENOMEM.
 */
int dref_add(delayed_ref_root *d, uint64_t bytenr, int is_tree, int delta)
{
	uint32_t i;
	d->num_entries++;
	if (u64map_get(&d->head_map, bytenr, &i)) {
		d->heads[i].ref_mod += delta;
		return 0;
	}
	if (d->nheads == d->heads_cap) {
		uint32_t nc = d->heads_cap ? d->heads_cap * 2 : 256;
		dref_head *nh = lab_realloc(d->heads, nc * sizeof *nh);
		if (!nh)
			return LAB_ENOMEM;
		d->heads = nh;
		d->heads_cap = nc;
	}
	i = d->nheads++;
	d->heads[i].bytenr = bytenr;
	d->heads[i].ref_mod = delta;
	d->heads[i].is_tree = (uint8_t)is_tree;
	return u64map_put(&d->head_map, bytenr, i);
}

/* The heads were run by fs_run_refs(): forget them (models the heads
 * leaving href_root as __btrfs_run_delayed_refs processes them). */
uint32_t dref_heads_clear(delayed_ref_root *d)
{
	uint32_t n = d->nheads;
	d->nheads = 0;
	u64map_clear(&d->head_map);
	d->heads_run += n;
	return n;
}

/*
 * Insert a dirty-extent record unless one exists for its bytenr. Models
 * btrfs_qgroup_trace_extent_nolock() with the RFC's change: only a
 * successful insert increments nr_dirty_extents. Returns 1 (duplicate),
 * 0 (inserted) or LAB_ENOMEM.
 */
int dref_trace_extent(delayed_ref_root *d, const qg_record *rec)
{
	if (u64map_get(&d->rec_map, rec->bytenr, NULL)) {
		d->dup_inserts++;
		return 1;
	}
	if (d->nrecs == d->recs_cap) {
		uint32_t nc = d->recs_cap ? d->recs_cap * 2 : 1024;
		qg_record *nr = lab_realloc(d->recs, nc * sizeof *nr);
		if (!nr)
			return LAB_ENOMEM;
		d->recs = nr;
		d->recs_cap = nc;
	}
	uint32_t i = d->nrecs++;
	d->recs[i] = *rec;
	int rc = u64map_put(&d->rec_map, rec->bytenr, i);
	if (rc) {
		d->nrecs--;
		return rc;
	}
	d->nr_dirty_extents++; /* atomic64_inc(&delayed_refs->nr_dirty_extents) */
	return 0;
}

/* Whether a record for bytenr is queued (the duplicate test of
 * btrfs_qgroup_trace_extent_nolock). */
int dref_has_record(const delayed_ref_root *d, uint64_t bytenr)
{
	return u64map_get(&d->rec_map, bytenr, NULL);
}

/* Order records by bytenr (unique keys: the sort is deterministic). */
static int rec_cmp(const void *a, const void *b)
{
	uint64_t x = ((const qg_record *)a)->bytenr, y = ((const qg_record *)b)->bytenr;
	return x < y ? -1 : x > y;
}

/* Put the records in bytenr order, the order rb_first() pops them in
 * btrfs_qgroup_account_extents, and rebuild the bytenr index. */
void dref_records_sort(delayed_ref_root *d)
{
	if (d->nrecs > 1)
		qsort(d->recs, d->nrecs, sizeof d->recs[0], rec_cmp);
	u64map_clear(&d->rec_map);
	for (uint32_t i = 0; i < d->nrecs; i++)
		u64map_put(&d->rec_map, d->recs[i].bytenr, i);
}

/*
 * Drop all records once they are accounted. btrfs_qgroup_account_extents
 * decrements the counter per record; the RFC asserts it is 0 here.
 */
void dref_records_clear(delayed_ref_root *d)
{
	assert(d->nr_dirty_extents == 0);
	d->nrecs = 0;
	u64map_clear(&d->rec_map);
}
