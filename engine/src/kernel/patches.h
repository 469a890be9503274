/*
 * patches.h - the patch bits of a simulated file system, declared once in
 * patches.def (read its top comment first).
 *
 * A patchset is one bit per patch, 1 = applied, the same polarity for
 * every patch. A file system keeps its set in fs->opts.patches (set at
 * mount) and the simulated kernel asks it by id: fs_patch_on(fs, P_...)
 * (fs.h). Code that runs without an fs_info (the delalloc flushing in
 * its unit tests' stand-alone mode) holds a pointer to the set of the
 * file system it serves, and asks patch_on().
 * Kernels (6.1, 6.2, 5.10+fix, ...) are lists of ids: patch_kernel().
 */
#ifndef PATCHES_H
#define PATCHES_H

#include <stdint.h>

typedef enum patch_id {
	P_NONE = 0,
#define PATCH(id, ...) id,
#include "patches.def"
	P_END
} patch_id;

#define P_COUNT ((int)P_END - 1) /* ids are 1..P_COUNT */

_Static_assert(P_END <= 64, "a patchset is one uint64_t: widen it");

/* What toggling a patch does in the model (patches.def). */
enum patch_effect {
	PE_MODEL = 0,   /* the simulated kernel asks for it */
	PE_NONE = 1,    /* changes nothing the model can see */
	PE_NOT_YET = 2, /* changes the kernel; the model runs one side so far */
};

typedef struct patchset {
	uint64_t bits;
} patchset;

typedef struct patch_info {
	patch_id id;
	const char *name;      /* "P_004_NO_HOLE_UPTODATE" */
	const char *seed, *series, *commit, *kernel, *subsystem;
	int effect;            /* enum patch_effect */
	const char *param;     /* switch parameter name, "" = none */
	const char *title, *help;
} patch_info;

static inline int patch_on(const patchset *ps, patch_id id)
{
	return (int)((ps->bits >> (unsigned)id) & 1u);
}

static inline void patch_set(patchset *ps, patch_id id, int on)
{
	uint64_t b = 1ull << (unsigned)id;
	ps->bits = on ? ps->bits | b : ps->bits & ~b;
}

/* The table: ids 1..P_COUNT (NULL outside). */
const patch_info *patch_get(int id);
/* By id name ("P_003_TRUNC_SKIP_SAME_SIZE_WB"); NULL if none. */
const patch_info *patch_find(const char *name);
/* "model", "none", "not yet". */
const char *patch_effect_name(int effect);

/* The kernel every file system runs unless told otherwise. */
#define PATCH_DEFAULT_KERNEL "6.9"

/* Kernels, in patches.def order. */
typedef struct patch_kernel_info {
	const char *name, *base, *help;
	const patch_id *added; /* P_NONE-terminated ids on top of base */
} patch_kernel_info;
int patch_kernel_count(void);
const patch_kernel_info *patch_kernel_get(int i);
/* The patches of kernel `name` (base's plus its own). 0, or LAB_ENOENT
 * (no such kernel; *out is then empty). */
int patch_kernel(const char *name, patchset *out);

#endif /* PATCHES_H */
