/*
 * fio_points.c - looking up the measured fio points (fio_points.h).
 */
#include <string.h>

#include "fio_points.h"

int bdev_point_same_job(const bdev_point *a, const bdev_point *b)
{
	return a->bs == b->bs && a->iodepth == b->iodepth && a->numjobs == b->numjobs &&
	       strcmp(a->profile, b->profile) == 0 && strcmp(a->rw, b->rw) == 0;
}

/*
 * bdev_point_find - the measured fio point of this shape, or NULL. A drive
 * measured in two runs (the 980 PRO) can have two points of one shape:
 * the one the profile was fitted on comes first, then the first listed.
 */
const bdev_point *bdev_point_find(const char *profile, const char *rw,
				  uint32_t bs, int iodepth, int numjobs)
{
	const bdev_point *first = NULL;
	for (int i = 0; i < bdev_npoints; i++) {
		const bdev_point *p = &bdev_points[i];
		if (p->bs == bs && p->iodepth == iodepth &&
		    p->numjobs == numjobs && strcmp(p->profile, profile) == 0 &&
		    strcmp(p->rw, rw) == 0) {
			if (p->fit)
				return p;
			if (!first)
				first = p;
		}
	}
	return first;
}
