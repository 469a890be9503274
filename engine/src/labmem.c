#include <stdlib.h>
#include <string.h>

#include "labmem.h"

uint64_t lab_oom_events;

void *lab_malloc(size_t n)
{
	void *p = malloc(n);
	if (!p && n)
		lab_oom_events++;
	return p;
}

void *lab_calloc(size_t n, size_t size)
{
	void *p = calloc(n, size);
	if (!p && n && size)
		lab_oom_events++;
	return p;
}

void *lab_realloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q && n)
		lab_oom_events++;
	return q;
}

char *lab_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = lab_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}
