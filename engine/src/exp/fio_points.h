/*
 * fio_points.h - the fio measurements under ../shared/calibration, as the
 * fio experiment and the fitting tools read them (the table itself is
 * generated: bdev_points.c). The kernel's device model never reads them:
 * it only knows its fitted profiles (kernel/bdev_profile.h).
 */
#ifndef FIO_POINTS_H
#define FIO_POINTS_H

#include <stdint.h>

#include "bdev_points.h"
#include "bdev_profile.h"

extern const bdev_point bdev_points[];
extern const int bdev_npoints;

/* 1 if a and b measured the same fio job (profile and shape) in two runs. */
int bdev_point_same_job(const bdev_point *a, const bdev_point *b);

/* Find the first measured point with this shape; NULL if none. */
const bdev_point *bdev_point_find(const char *profile, const char *rw,
				  uint32_t bs, int iodepth, int numjobs);

#endif /* FIO_POINTS_H */
