/*
 * exp_untar_archive.h - the untar experiment's archive: a Firefox-like
 * source tree, the same in every run (exp_untar_archive.c), and the tar
 * format sizes tar reads it in.
 */
#ifndef EXP_UNTAR_ARCHIVE_H
#define EXP_UNTAR_ARCHIVE_H

#include <stdint.h>

#define UT_FILES 226000u         /* at scale 1 */
#define UT_DIRS 22600u           /* one per 10 files [inferred] */
#define UT_BLOCK 512u
#define UT_RECORD 10240u         /* tar's default blocking factor 20 */

typedef struct ut_entry {
	uint32_t size;   /* file bytes (0 for a directory) */
	uint32_t parent; /* index of its directory in dirs order */
	uint32_t dir;    /* a directory: its index + 1; a file: 0 */
} ut_entry;

/* The archive of a run at `scale`: its entries in archive order (each
 * directory, then its files: tar's preorder) and its shape. */
typedef struct ut_archive {
	ut_entry *e;             /* lab_malloc'ed; the caller frees it */
	uint64_t ne, nfiles, ndirs;
	uint64_t bytes;          /* the .tar's size: a header per entry, the
				  * data in whole blocks, two zero blocks,
				  * padded to a whole record */
	uint64_t data_bytes, file_pages, small_files, max_file;
} ut_archive;

/* Build the tree of UT_FILES x scale files and UT_DIRS x scale
 * directories (at least one of each). stack: room for ndirs + 1
 * directory indices, used while building (tar's directory stack later).
 * 0 or LAB_ENOMEM. */
int ut_archive_make(ut_archive *a, double scale, uint32_t *stack);
/* The directories of the archive at `scale` (what stack must hold, less one). */
uint64_t ut_archive_dirs(double scale);

#endif
