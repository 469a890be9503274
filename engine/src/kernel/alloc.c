/*
 * alloc.c - block groups and a next-fit extent allocator (see alloc.h).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "lab.h"
#include "labmem.h"

#define RESERVED_HEAD (1ull << 20) /* superblock area at the device start */

static void changed(alloc_ctl *a);

int alloc_init(alloc_ctl *a, uint64_t dev_bytes)
{
	memset(a, 0, sizeof(*a));
	if (dev_bytes < ALLOC_MIN_DEV)
		return LAB_EINVAL;
	a->dev_bytes = dev_bytes;
	a->dev_alloc = RESERVED_HEAD;
	a->meta_factor = 1;
	/* init_alloc_chunk_ctl_policy_regular: metadata stripes of 1 GiB
	 * above 50 GiB of writable space, else 256 MiB; no chunk over 10%
	 * of it */
	uint64_t cap = dev_bytes / 10 / (1ull << 20) * (1ull << 20);
	uint64_t meta = dev_bytes > ALLOC_META_LARGE_FS ? ALLOC_META_CHUNK_LARGE : ALLOC_META_CHUNK;
	a->chunk_bytes[ALLOC_DATA] = cap < ALLOC_DATA_CHUNK ? cap : ALLOC_DATA_CHUNK;
	a->chunk_bytes[ALLOC_METADATA] = cap < meta ? cap : meta;
	return 0;
}

void alloc_set_meta_dup(alloc_ctl *a, int dup)
{
	a->meta_factor = dup ? 2 : 1;
}

int alloc_prefill(alloc_ctl *a, uint64_t bytes, uint64_t meta_bytes)
{
	if (meta_bytes > bytes || bytes > a->dev_bytes - a->dev_alloc)
		return LAB_EINVAL;
	uint64_t data = bytes - meta_bytes, meta = meta_bytes / (uint64_t)a->meta_factor;
	a->dev_alloc += bytes;
	a->prefill[ALLOC_DATA] += data;
	a->prefill[ALLOC_METADATA] += meta;
	a->total[ALLOC_DATA] += data;
	a->used[ALLOC_DATA] += data;
	a->total[ALLOC_METADATA] += meta;
	a->used[ALLOC_METADATA] += meta;
	changed(a);
	return 0;
}

/* Tell the fs the counters moved. */
static void changed(alloc_ctl *a)
{
	if (a->on_change)
		a->on_change(a->on_change_ctx);
}

void alloc_destroy(alloc_ctl *a)
{
	for (int i = 0; i < a->nbgs; i++)
		free(a->bgs[i].bitmap);
	free(a->bgs);
	free(a->pinned);
	memset(a, 0, sizeof(*a));
}

static int bit_get(const uint64_t *bm, uint64_t i)
{
	return (int)((bm[i >> 6] >> (i & 63)) & 1u);
}

/* Set or clear bits [start, start + n), a word at a time (a 128 MiB
 * extent is 32768 bits). */
static void bits_set(uint64_t *bm, uint64_t start, uint64_t n, int on)
{
	uint64_t i = start, end = start + n;
	while (i < end) {
		uint64_t lo = i & 63, len = 64 - lo < end - i ? 64 - lo : end - i;
		uint64_t mask = (len == 64 ? ~0ull : ((1ull << len) - 1)) << lo;
		if (on)
			bm[i >> 6] |= mask;
		else
			bm[i >> 6] &= ~mask;
		i += len;
	}
}

/* Device stripes a chunk of kind takes (DUP metadata: 2). */
static uint64_t chunk_factor(const alloc_ctl *a, int kind)
{
	return kind == ALLOC_METADATA ? (uint64_t)a->meta_factor : 1;
}

/* The length of the next chunk of kind: the policy's size, or what is
 * left of the device (over its stripes); 0 if too little is left. */
static uint64_t chunk_len(const alloc_ctl *a, int kind)
{
	uint64_t len = a->chunk_bytes[kind], f = chunk_factor(a, kind);
	if (a->dev_alloc + len * f > a->dev_bytes) {
		/* a smaller final chunk, as btrfs does when the device is nearly full */
		len = (a->dev_bytes - a->dev_alloc) / f / ALLOC_SECTOR * ALLOC_SECTOR;
		if (len < (kind == ALLOC_DATA ? (1ull << 20) : (4ull << 20)))
			return 0;
	}
	return len;
}

/* Carve a new chunk of the given kind from unallocated device space
 * (models btrfs_alloc_chunk: single, or DUP's two stripes back to back
 * for metadata). */
static int chunk_alloc(alloc_ctl *a, int kind, block_group **out)
{
	uint64_t len = chunk_len(a, kind);
	if (!len)
		return LAB_ENOSPC;
	if (a->nbgs == a->cap) {
		int cap = a->cap ? a->cap * 2 : 8;
		block_group *nb = lab_realloc(a->bgs, (size_t)cap * sizeof(*nb));
		if (!nb)
			return LAB_ENOMEM;
		a->bgs = nb;
		a->cap = cap;
	}
	block_group *bg = &a->bgs[a->nbgs];
	memset(bg, 0, sizeof(*bg));
	uint64_t sectors = len / ALLOC_SECTOR;
	bg->bitmap = lab_calloc((size_t)((sectors + 63) / 64), sizeof(uint64_t));
	if (!bg->bitmap)
		return LAB_ENOMEM;
	bg->start = a->dev_alloc;
	bg->length = len;
	bg->kind = kind;
	a->dev_alloc += len * chunk_factor(a, kind);
	a->total[kind] += len;
	a->nbgs++;
	a->chunk_allocs++;
	*out = bg;
	changed(a);
	return 0;
}

int alloc_chunk_new(alloc_ctl *a, int kind)
{
	if (kind < 0 || kind >= ALLOC_KINDS)
		return LAB_EINVAL;
	block_group *bg;
	return chunk_alloc(a, kind, &bg);
}

int alloc_chunk_fits(const alloc_ctl *a, int kind)
{
	return kind >= 0 && kind < ALLOC_KINDS && chunk_len(a, kind) > 0;
}

/* The first clear bit of bm in [i, end), or end. */
static uint64_t next_clear(const uint64_t *bm, uint64_t i, uint64_t end)
{
	if (i >= end)
		return end;
	uint64_t w = i >> 6, x = ~bm[w] & (~0ull << (i & 63));
	while (!x) {
		if (++w << 6 >= end)
			return end;
		x = ~bm[w];
	}
	uint64_t r = (w << 6) + (uint64_t)__builtin_ctzll(x);
	return r < end ? r : end;
}

/* The first set bit of bm in [i, end), or end. */
static uint64_t next_set(const uint64_t *bm, uint64_t i, uint64_t end)
{
	if (i >= end)
		return end;
	uint64_t w = i >> 6, x = bm[w] & (~0ull << (i & 63));
	while (!x) {
		if (++w << 6 >= end)
			return end;
		x = bm[w];
	}
	uint64_t r = (w << 6) + (uint64_t)__builtin_ctzll(x);
	return r < end ? r : end;
}

/* The lowest s >= start with sectors [s, s + n) all free and s + n <= end:
 * 0 and *sector, or 1. Free runs are found a word at a time (a data
 * block group is 262144 sectors, and one left fragmented by frees was
 * scanned bit by bit for every allocation that did not fit its holes). */
static int first_run(const uint64_t *bm, uint64_t start, uint64_t end, uint64_t n,
		     uint64_t *sector)
{
	uint64_t i = start;
	while (i + n <= end) {
		i = next_clear(bm, i, end);
		if (i + n > end)
			return 1;
		uint64_t j = next_set(bm, i, i + n);
		if (j == i + n) {
			*sector = i;
			return 0;
		}
		i = j + 1;
	}
	return 1;
}

/* Next-fit search for n free sectors in bg: the first free run at or
 * after the cursor, else the first one from the start. Returns 0 and
 * *sector, or 1. A search that fails finds no run of n anywhere in bg,
 * which stays so until sectors are freed (bg->no_run). */
static int bg_find(block_group *bg, uint64_t n, uint64_t *sector)
{
	uint64_t sectors = bg->length / ALLOC_SECTOR;
	if (bg->length - bg->used - bg->pinned - bg->reserved < n * ALLOC_SECTOR)
		return 1;
	if (bg->no_run && n >= bg->no_run)
		return 1;
	uint64_t wrap = bg->cursor + n < sectors ? bg->cursor + n : sectors;
	if (!first_run(bg->bitmap, bg->cursor, sectors, n, sector) ||
	    !first_run(bg->bitmap, 0, wrap, n, sector))
		return 0;
	bg->no_run = n;
	return 1;
}

int alloc_extent(alloc_ctl *a, int kind, uint64_t bytes, uint64_t *bytenr)
{
	if (kind < 0 || kind >= ALLOC_KINDS || bytes == 0 || bytes % ALLOC_SECTOR)
		return LAB_EINVAL;
	uint64_t n = bytes / ALLOC_SECTOR;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < a->nbgs; i++) {
			block_group *bg = &a->bgs[i];
			uint64_t s;
			if (bg->kind != kind || bg_find(bg, n, &s))
				continue;
			bits_set(bg->bitmap, s, n, 1);
			bg->cursor = s + n;
			bg->reserved += bytes;
			a->reserved[kind] += bytes;
			a->allocs++;
			*bytenr = bg->start + s * ALLOC_SECTOR;
			changed(a);
			return 0;
		}
		if (pass == 0) {
			block_group *bg;
			int r = chunk_alloc(a, kind, &bg);
			if (r)
				return r;
			if (bytes > bg->length)
				return LAB_ENOSPC;
		}
	}
	return LAB_ENOSPC;
}

block_group *alloc_find_bg(alloc_ctl *a, uint64_t bytenr)
{
	int lo = 0, hi = a->nbgs - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		block_group *bg = &a->bgs[mid];
		if (bytenr < bg->start)
			hi = mid - 1;
		else if (bytenr >= bg->start + bg->length)
			lo = mid + 1;
		else
			return bg;
	}
	return NULL;
}

int alloc_is_allocated(const alloc_ctl *a, uint64_t bytenr, uint64_t bytes)
{
	block_group *bg = alloc_find_bg((alloc_ctl *)a, bytenr);
	if (!bg || bytenr + bytes > bg->start + bg->length)
		return 0;
	uint64_t s = (bytenr - bg->start) / ALLOC_SECTOR;
	for (uint64_t i = 0; i < bytes / ALLOC_SECTOR; i++)
		if (!bit_get(bg->bitmap, s + i))
			return 0;
	return 1;
}

int alloc_free(alloc_ctl *a, uint64_t bytenr, uint64_t bytes)
{
	block_group *bg = alloc_find_bg(a, bytenr);
	if (!bg || bytenr + bytes > bg->start + bg->length || bytes % ALLOC_SECTOR ||
	    bg->used < bytes)
		return LAB_EINVAL;
	if (a->npinned == a->pcap) {
		int cap = a->pcap ? a->pcap * 2 : 64;
		pinned_ext *np = lab_realloc(a->pinned, (size_t)cap * sizeof(*np));
		if (!np)
			return LAB_ENOMEM;
		a->pinned = np;
		a->pcap = cap;
	}
	a->pinned[a->npinned].bytenr = bytenr;
	a->pinned[a->npinned].bytes = bytes;
	a->npinned++;
	bg->used -= bytes;
	bg->pinned += bytes;
	a->used[bg->kind] -= bytes;
	a->pinned_bytes[bg->kind] += bytes;
	a->frees++;
	changed(a);
	return 0;
}

int alloc_mark_used(alloc_ctl *a, uint64_t bytenr, uint64_t bytes)
{
	block_group *bg = alloc_find_bg(a, bytenr);
	if (!bg || bytenr + bytes > bg->start + bg->length || bg->reserved < bytes)
		return LAB_EINVAL;
	bg->reserved -= bytes;
	bg->used += bytes;
	a->reserved[bg->kind] -= bytes;
	a->used[bg->kind] += bytes;
	changed(a);
	return 0;
}

int alloc_free_now(alloc_ctl *a, uint64_t bytenr, uint64_t bytes)
{
	block_group *bg = alloc_find_bg(a, bytenr);
	if (!bg || bytenr + bytes > bg->start + bg->length || bytes % ALLOC_SECTOR ||
	    bg->reserved < bytes)
		return LAB_EINVAL;
	bits_set(bg->bitmap, (bytenr - bg->start) / ALLOC_SECTOR, bytes / ALLOC_SECTOR, 0);
	bg->no_run = 0;
	bg->reserved -= bytes;
	a->reserved[bg->kind] -= bytes;
	a->frees++;
	changed(a);
	return 0;
}

uint64_t alloc_room(const alloc_ctl *a, int kind)
{
	uint64_t room = (a->dev_bytes - a->dev_alloc) / ALLOC_SECTOR * ALLOC_SECTOR;
	if (kind == ALLOC_METADATA)
		room /= chunk_factor(a, kind);
	for (int i = 0; i < a->nbgs; i++) {
		const block_group *bg = &a->bgs[i];
		if (kind == ALLOC_KINDS || bg->kind == kind)
			room += bg->length - bg->used - bg->reserved - bg->pinned;
	}
	return room;
}

void alloc_unpin_all(alloc_ctl *a)
{
	for (int i = 0; i < a->npinned; i++) {
		pinned_ext *p = &a->pinned[i];
		block_group *bg = alloc_find_bg(a, p->bytenr);
		assert(bg);
		bits_set(bg->bitmap, (p->bytenr - bg->start) / ALLOC_SECTOR,
			 p->bytes / ALLOC_SECTOR, 0);
		bg->no_run = 0;
		bg->pinned -= p->bytes;
		a->pinned_bytes[bg->kind] -= p->bytes;
	}
	a->npinned = 0;
	changed(a);
}
