/*
 * send.h - btrfs send (a command stream from a read-only snapshot) and
 * btrfs receive (replaying each command as a syscall on a second file
 * system), with the receiving side's truncate path: btrfs_setsize and
 * btrfs_truncate, where patch 003 acts.
 *
 * Send walks the snapshot's tree in key order (a full send: every item is
 * "new") and emits per new inode, as the 2018 send did: MKFILE/MKDIR under
 * an orphan name (o<ino>-<gen>-0 in the subvolume's top directory),
 * RENAME to its path, UTIMES of the parent directory, WRITE commands of at
 * most max_write bytes over its data, CHOWN, CHMOD, UTIMES and, before
 * commit ffa7c4296e93 ("send, do not issue unnecessary truncate
 * operations"), an unconditional TRUNCATE(size) as its last command.
 * Directories are sent before files (the real send reaches the same end
 * through orphan renames). Names are not stored in the lab's trees (only
 * their hashes), so the caller provides them (send_name_fn).
 *
 * Receive runs in a task, one command per step, on the destination
 * fs_info through the metadata VFS (vfs.h: create, mkdir, rename) and the
 * item layer (items.h: inode updates, orphan items, file extent items).
 * The data side of receive is a small buffered-write model kept here:
 * WRITE dirties page ranges (delalloc); writeback turns a contiguous
 * dirty range into one extent, starting at the page it is asked to write
 * (find_lock_delalloc_range never starts before the locked page);
 * finish_ordered_io inserts the file extent item and checksums.
 *
 * TRUNCATE -> btrfs_setsize(newsize): for newsize <= i_size an orphan item
 * guards the truncation (added and deleted in their own transactions);
 * btrfs_truncate first waits for ordered range [round_down(i_size, 4K),
 * EOF): writeback of the dirty tail page as its own 4 KiB extent, the
 * write, finish_ordered_io; unless the patch-003 switch is on and newsize
 * == oldsize (skip_writeback). A 4 KiB-aligned size has an empty range:
 * no IO either way.
 */
#ifndef SEND_H
#define SEND_H

#include <stdint.h>

#include "ebmem.h"
#include "fs.h"
#include "sim.h"
#include "strbuf.h"

enum send_op {
	SEND_MKFILE = 0,
	SEND_MKDIR,
	SEND_RENAME,
	SEND_WRITE,
	SEND_CHOWN,
	SEND_CHMOD,
	SEND_UTIMES,
	SEND_TRUNCATE,
	SEND_NOPS,
};
extern const char *const send_op_names[SEND_NOPS];

/* One command. Inode numbers are the source's. */
typedef struct send_cmd {
	uint8_t op;
	uint64_t ino;         /* the inode the command is about */
	uint64_t dir;         /* MKFILE/MKDIR: dir of the orphan name;
			       * RENAME: destination dir */
	uint64_t off, len;    /* WRITE range; TRUNCATE: len = size;
			       * CHMOD: off = mode */
	uint32_t name;        /* MKFILE/MKDIR: orphan name; RENAME: from */
	uint32_t name2;       /* RENAME: to (offsets into the name pool) */
} send_cmd;

typedef struct send_cfg {
	int always_truncate;  /* 1: pre-2018 send, TRUNCATE for every file */
	uint32_t max_write;   /* bytes per WRITE (BTRFS_SEND_READ_SIZE) */
} send_cfg;

void send_cfg_default(send_cfg *c);

typedef struct send_stream {
	send_cmd *cmds;
	uint64_t n, cap;
	char *pool;           /* NUL-terminated names */
	uint64_t pool_len, pool_cap;
	uint64_t bytes;       /* stream size: headers, TLVs, data */
	uint64_t files, dirs, data_bytes, items_visited;
	uint64_t per_op[SEND_NOPS];
	uint64_t send_ns;     /* time the send took (task clock) */
} send_stream;

/* The name of ino in directory parent, written to buf; returns 0 or a
 * negative LAB_E*. */
typedef int (*send_name_fn)(void *ctx, uint64_t ino, uint64_t parent,
			    char *buf, size_t len);

/*
 * Build the stream of a full send of root `snap` (models btrfs_send with
 * no parent: full_send_tree + changed_inode / process_recorded_refs /
 * send_write / finish_inode_if_needed). CPU and source data reads are
 * charged to t (may be NULL). out is initialised here; free it with
 * send_stream_free. Returns 0 or a negative LAB_E*.
 */
int send_build(fs_info *fs, task *t, struct btrfs_root *snap,
	       const send_cfg *cfg, send_name_fn name_of, void *name_ctx,
	       send_stream *out);
void send_stream_free(send_stream *st);
static inline const char *send_name(const send_stream *st, uint32_t off)
{
	return st->pool + off;
}

/* ---- receive */
typedef struct recv_cfg {
	int skip_same_size_writeback; /* patch 003: 0 before, 1 after */
} recv_cfg;

/* Receive-side state of one inode (source ino -> destination inode). */
typedef struct rcv_ino {
	uint64_t src, dst;
	struct inode *inode;
	uint64_t (*dirty)[2];         /* dirty page ranges [lo, hi), sorted */
	uint32_t ndirty, dcap;
	uint32_t sync_writes;         /* tail pages written by setsize */
	uint32_t extents;             /* data extents created */
	simtime_t started;            /* first command's time */
} rcv_ino;

typedef struct recv_ctx {
	fs_info *fs;
	struct btrfs_root *root;
	const send_stream *st;
	recv_cfg cfg;
	rcv_ino *ino;                 /* sorted by src */
	uint64_t nino;
	uint64_t next;                /* next command */
	int error;
	simtime_t start, end;
	/* statistics */
	lhist op_lat[SEND_NOPS];      /* per command type */
	lhist file_lat;               /* MKFILE .. TRUNCATE of one file */
	lhist sync_lat;               /* setsize's synchronous tail writeback */
	uint64_t sync_writes, sync_bytes;
	uint64_t sync_inline;         /* tails made inline extents by setsize */
	uint64_t data_extents, inline_extents, flush_ios;
	uint64_t truncates, truncates_same_size, truncates_skipped;
	int s_dirty_pages;            /* series id */
	uint64_t dirty_pages;
} recv_ctx;

/* Prepare a receive of st into root of fs (its top directory is the
 * subvolume's). The stream must outlive the receive. */
int recv_init(recv_ctx *r, fs_info *fs, struct btrfs_root *root,
	      const send_stream *st, const recv_cfg *cfg);
/* Replay one command (its syscall); returns TASK_RUN, TASK_DONE after
 * the last, or a negative LAB_E* (the receive stops, r->error is set). */
int recv_step(recv_ctx *r, task *t);
/* Write back every dirty range (sync after the receive: background
 * writeback's work). Returns 0 or a negative LAB_E*. */
int recv_flush(recv_ctx *r, task *t);
void recv_destroy(recv_ctx *r);
/* The receive-side state of a source inode, or NULL. */
rcv_ino *recv_lookup(recv_ctx *r, uint64_t src_ino);

/*
 * btrfs_setsize for newsize <= i_size on a received inode (the TRUNCATE
 * command's syscall after the VFS). skip_writeback_same_size is patch
 * 003's switch. Returns 0 or a negative LAB_E*.
 */
int recv_setsize(recv_ctx *r, task *t, rcv_ino *ri, uint64_t newsize);

/* {"stream":{"commands","bytes","files","dirs","per_op":{...}},
 *  "receive":{"ns","skip_same_size_writeback","sync_writes","sync_bytes",
 *  "data_extents","inline_extents","truncates",...,"ops":{op:lhist},
 *  "file":lhist,"sync":lhist}} (either part may be NULL) */
void send_details_json(const send_stream *st, const recv_ctx *r, strbuf *out);

#endif /* SEND_H */
