/*
 * exp_sandbox.h - the sandbox's command language (exp_sandbox_parse.c) and
 * its namespace model, shared with the experiment (exp_sandbox.c).
 *
 * A script is commands separated by ';' or newlines (a `script=` setting
 * of lab_open carries it on one line, so ';' there). The language is
 * xfs_io's data commands and a shell's namespace commands:
 *
 *   pwrite [PATH] OFF LEN    pread [PATH] OFF LEN     truncate [PATH] SIZE
 *   fsync [PATH]             fdatasync [PATH]         seek [PATH] -d|-h OFF
 *   mkdir PATH  touch PATH  rm PATH  mv SRC DST  sync
 *   btrfs subvolume create PATH | snapshot SRC DST | delete PATH
 *   btrfs quota enable       powercut
 *
 * PATH is absolute; an xfs_io command without one acts on the file the
 * last command named (xfs_io's open file). Numbers take xfs_io's k/m/g
 * suffixes (binary). falloc [PATH] OFF LEN preallocates (prealloc
 * extents over the range's holes, the size grown to OFF + LEN). reflink and ln are recognised and
 * refused: the engine has no clone or link operation yet.
 *
 * The whole script is checked before anything runs (sbs_parse): syntax,
 * bounds, and every path against a model of the namespace the script
 * builds (a file exists, a directory is empty, a rename stays within its
 * subvolume...). A bad line is refused with one line naming it and the
 * run never starts, so a page keeps the script it had.
 */
#ifndef EXP_SANDBOX_H
#define EXP_SANDBOX_H

#include <stdint.h>

/* Bounds that keep every script quick (classroom scale). */
#define SB_MAX_CMDS 256
#define SB_MAX_SCRIPT 16384
#define SB_MAX_PATH 128
#define SB_MAX_NAME 48
#define SB_MAX_ENTS 10240      /* names in the namespace: 10,000 files and their directories */
#define SB_MAX_FILE (64ull << 20)  /* a file's size */
#define SB_MAX_IO (16ull << 20)    /* one pwrite / pread */
#define SB_MAX_SV 16           /* subvolumes and snapshots, the top one included */
#define SB_MAX_FILL 2000       /* files one `touch -n N` makes */

typedef enum sb_op {
	SB_PWRITE, SB_PREAD, SB_TRUNCATE, SB_FSYNC, SB_FDATASYNC, SB_SEEK,
	SB_MKDIR, SB_TOUCH, SB_RM, SB_MV, SB_SYNC,
	SB_SUBVOL_CREATE, SB_SNAPSHOT, SB_SUBVOL_DELETE, SB_QUOTA_ENABLE, SB_POWERCUT,
	SB_FALLOC,
	SB_NOPS
} sb_op;

extern const char *const sb_op_names[SB_NOPS];

typedef struct sb_cmd {
	sb_op op;
	int line;                   /* 1-based, in the script */
	char text[160];             /* the command as typed (trimmed, clipped) */
	char path[SB_MAX_PATH];     /* the file or source */
	char path2[SB_MAX_PATH];    /* mv / snapshot destination */
	uint64_t a, b;              /* OFF LEN, SIZE, OFF (seek), N (touch -n) */
	int first_new, nnew;        /* entries this command adds (touch -n:
				     * nnew files; snapshot: the copies) */
	int hole;                   /* seek -h */
	int ent, ent2;              /* namespace model indexes (sb_script.ents) */
	int dir, dir2;              /* the directory entries holding path / path2
				     * when the command runs */
	char name[SB_MAX_NAME + 8]; /* path's last name (touch -n: the prefix) */
	char name2[SB_MAX_NAME + 8];
} sb_cmd;

/* A name in the namespace model. */
enum { SB_FILE = 1, SB_DIR = 2, SB_SUBVOL = 3 };
typedef struct sb_ent {
	char path[SB_MAX_PATH];
	int kind;
	int sv;                     /* the subvolume slot the name lives in (a
				     * SUBVOL: the slot it is the top of) */
	int parent_sv;              /* SUBVOL: the slot its name lives in */
	int snapshot;               /* in a snapshot: read-only */
	int src;                    /* a snapshot's copy: the entry it copies
				     * (the same inode number); else -1 */
	int live;
} sb_ent;

typedef struct sb_script {
	sb_cmd *cmds;
	int ncmds;
	/* the namespace as the whole script leaves it (entries never move:
	 * a removed one is not live, a renamed one keeps its index) */
	sb_ent *ents;
	int nents, cap;
	int nsv;
	int nfiles;                 /* live files and directories at the end */
	int max_live;               /* the most at any point */
	/* entries by path (open addressing, ent index + 1; a renamed entry is
	 * added again under its new path, so a lookup checks the path): the
	 * check of 10,000 names stays linear */
	int *hash;
	int hcap, hn;
} sb_script;

/* Parse and check a script. 0, or a LAB_E* code with a one-line message
 * ("line 3: rm /a: directory not empty") in err: LAB_EINVAL (syntax, a
 * bad path), LAB_ERANGE (a bound), LAB_ENOENT (no such file), LAB_ENOTSUP
 * (a command the engine does not model). sbs_free in every case. */
int sbs_parse(const char *text, sb_script *out, char *err, size_t errlen);
void sbs_free(sb_script *s);

/* Count the commands of a script without checking it (lab_estimate). */
int sbs_count(const char *text);

#endif
