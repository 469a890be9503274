/*
 * send.h - btrfs send (a command stream from a read-only snapshot) and
 * btrfs receive (replaying each command as a syscall on a second file
 * system, whose truncate is where patch 003 acts).
 *
 * Send walks the snapshot's tree in key order (a full send: every item is
 * "new") and emits per new inode, as the 2018 send did: MKFILE/MKDIR under
 * an orphan name (o<ino>-<gen>-0 in the subvolume's top directory),
 * RENAME to its path, UTIMES of the parent directory, WRITE commands of at
 * most max_write bytes over its data then, in finish_inode_if_needed's
 * order, TRUNCATE(size) (before commit ffa7c4296e93 "send, do not issue
 * unnecessary truncate operations", for every regular file), CHOWN,
 * CHMOD and UTIMES.
 * Directories are sent before files (the real send reaches the same end
 * through orphan renames). Names are not stored in the lab's trees (only
 * their hashes), so the caller provides them (send_name_fn).
 *
 * Receive runs in a task, one command per step, on the destination
 * fs_info through the VFS: vfs.h for MKFILE, MKDIR and RENAME, the data
 * path (vfs_io.h) for WRITE (vio_write: page cache, delalloc, i_size)
 * and TRUNCATE (vio_setsize: btrfs_setsize, with the orphan item and the
 * ordered-range wait that writes the dirty tail page back synchronously,
 * skipped for a same-size truncate when the receiving fs's kernel has
 * patch 003, P_003_TRUNC_SKIP_SAME_SIZE_WB), the
 * item layer for the setattrs (inode updates). The data lands in the
 * receiver's page cache, io_tree and ordered extents as any write does;
 * the sync after the receive (recv_flush) writes it back into the trees.
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
	uint32_t size;        /* bytes on the stream: header, TLVs, data */
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
/* Receive-side state of one inode (source ino -> destination inode). */
typedef struct rcv_ino {
	uint64_t src, dst;
	struct inode *inode;
	uint32_t sync_writes;         /* tail writes its truncate waited for */
	simtime_t started;            /* first command's time */
} rcv_ino;

typedef struct recv_ctx {
	fs_info *fs;
	struct btrfs_root *root;
	const send_stream *st;
	rcv_ino *ino;                 /* sorted by src */
	uint64_t nino;
	uint64_t next;                /* next command */
	int error;
	int own_data;                 /* recv_init attached fs's data path */
	int retry;                    /* t parked inside command `next` */
	simtime_t retry_t0;
	simtime_t start, end;
	/* statistics, from the data path's reports and counters */
	lhist op_lat[SEND_NOPS];      /* per command type */
	lhist file_lat;               /* MKFILE .. TRUNCATE of one file */
	lhist sync_lat;               /* truncate's synchronous tail writeback */
	uint64_t sync_writes, sync_bytes; /* its bios and bytes */
	simtime_t last_sync_t0, last_sync_ns; /* the last TRUNCATE's wait for
				       * its tail (0 ns: it waited for none) */
	uint64_t sync_inline;         /* tails it made inline extents */
	uint64_t data_extents, inline_extents; /* received files' items
				       * (counted by recv_flush) */
	uint64_t flush_ios;           /* data bios of the receive and flush */
	uint64_t bios0;
	uint64_t truncates, truncates_same_size, truncates_skipped;
	int s_dirty_pages;            /* series id */
	uint64_t dirty_pages;         /* the receiving fs's, last sampled */
} recv_ctx;

/* Prepare a receive of st into root of fs (its top directory is the
 * subvolume's). The stream must outlive the receive. If fs has no data
 * path one is attached (vio_attach; fs needs a device: LAB_EINVAL
 * otherwise) and recv_destroy detaches it, so recv_destroy comes before
 * fs_unmount. Patch 003 is the receiving fs's (fs_patch_on). Returns 0
 * or a negative LAB_E*. */
int recv_init(recv_ctx *r, fs_info *fs, struct btrfs_root *root,
	      const send_stream *st);
/* Replay one command (its syscall) on t (not NULL); returns TASK_RUN,
 * TASK_DONE after the last, TASK_BLOCKED when t was parked by the data
 * path (dirty throttling, a space ticket, writeback in flight: call
 * again when woken), or a negative LAB_E* (the receive stops, r->error
 * is set). */
int recv_step(recv_ctx *r, task *t);
/* The sync after the receive: write back everything dirty (vio_sync),
 * then count the received files' extents. Returns 0, 1 when t was parked
 * behind an asynchronous writeback (call again when woken), or a
 * negative LAB_E*. */
int recv_flush(recv_ctx *r, task *t);
void recv_destroy(recv_ctx *r);
/* The receive-side state of a source inode, or NULL. */
rcv_ino *recv_lookup(recv_ctx *r, uint64_t src_ino);

/* {"stream":{"commands","bytes","files","dirs","per_op":{...}},
 *  "receive":{"ns","skip_same_size_writeback","sync_writes","sync_bytes",
 *  "data_extents","inline_extents","truncates",...,"ops":{op:lhist},
 *  "file":lhist,"sync":lhist}} (either part may be NULL) */
void send_details_json(const send_stream *st, const recv_ctx *r, strbuf *out);

#endif /* SEND_H */
