/*
 * patches.c - the patch table and the kernels of patches.def.
 */
#include "patches.h"

#include <string.h>

#include "lab.h"

static const patch_info table[P_END] = {
#define PATCH(id, seed, series, commit, kernel, subsystem, effect, param, title, help) \
	[id] = { id, #id, seed, series, commit, kernel, subsystem, effect, param, title, help },
#include "patches.def"
};

static const patch_kernel_info kernels[] = {
#define KERNEL(name, base, help, ...) { name, base, help, (const patch_id[]){ __VA_ARGS__, P_NONE } },
#include "patches.def"
};

#define NKERNELS ((int)(sizeof kernels / sizeof kernels[0]))

const patch_info *patch_get(int id)
{
	return id > P_NONE && id < P_END ? &table[id] : NULL;
}

const patch_info *patch_find(const char *name)
{
	for (int i = 1; name && i < P_END; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

const char *patch_effect_name(int effect)
{
	switch (effect) {
	case PE_MODEL: return "model";
	case PE_NONE: return "none";
	case PE_NOT_YET: return "not yet";
	}
	return "?";
}

int patch_kernel_count(void)
{
	return NKERNELS;
}

const patch_kernel_info *patch_kernel_get(int i)
{
	return i >= 0 && i < NKERNELS ? &kernels[i] : NULL;
}

/* A kernel's bits: its base's ("" = none), then its own. depth bounds a
 * cycle (a base names a kernel, not itself). */
static int kernel_bits(const char *name, patchset *out, int depth)
{
	if (depth > NKERNELS)
		return LAB_ENOENT;
	for (int i = 0; i < NKERNELS; i++) {
		if (strcmp(kernels[i].name, name))
			continue;
		int rc = *kernels[i].base ? kernel_bits(kernels[i].base, out, depth + 1) : 0;
		for (const patch_id *p = kernels[i].added; !rc && *p != P_NONE; p++)
			patch_set(out, *p, 1);
		return rc;
	}
	return LAB_ENOENT;
}

int patch_kernel(const char *name, patchset *out)
{
	out->bits = 0;
	int rc = name ? kernel_bits(name, out, 0) : LAB_ENOENT;
	if (rc)
		out->bits = 0;
	return rc;
}
