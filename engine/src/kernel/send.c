/*
 * send.c - the send stream of a snapshot, its receive on a second file
 * system, and the receive side's setsize/truncate path with patch 003's
 * switch. See send.h.
 */
#include "send.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "costs.h"
#include "items.h"
#include "lab.h"
#include "vfs.h"
#include "vfs_io.h"
#include "labmem.h"
#include "variation.h"

const char *const send_op_names[SEND_NOPS] = {
	"mkfile", "mkdir", "rename", "write", "chown", "chmod", "utimes", "truncate",
};

/* btrfs_cmd_header (len, cmd, crc) and a TLV header (type, len) */
#define CMD_HDR 10u
#define TLV_HDR 4u

/* Defaults: the 2018 send (unconditional TRUNCATE), 48 KiB writes. */
void send_cfg_default(send_cfg *c)
{
	c->always_truncate = 1;
	c->max_write = 48u * 1024u;
}

/* ------------------------------------------------------------ the stream */

static int st_name(send_stream *st, const char *s, uint32_t *off)
{
	size_t n = strlen(s) + 1;
	if (st->pool_len + n > st->pool_cap) {
		uint64_t cap = st->pool_cap ? st->pool_cap * 2 : 4096;
		while (cap < st->pool_len + n)
			cap *= 2;
		if (cap > UINT32_MAX)
			return LAB_ENOMEM;
		char *p = lab_realloc(st->pool, cap);
		if (!p)
			return LAB_ENOMEM;
		st->pool = p;
		st->pool_cap = cap;
	}
	memcpy(st->pool + st->pool_len, s, n);
	*off = (uint32_t)st->pool_len;
	st->pool_len += n;
	return 0;
}

/* Append a command; `tlv` is its attributes' size besides the headers. */
static int st_emit(send_stream *st, task *t, sim *s, const send_cmd *c,
		   uint64_t tlv, int ntlv)
{
	if (st->n == st->cap) {
		uint64_t cap = st->cap ? st->cap * 2 : 256;
		send_cmd *v = lab_realloc(st->cmds, cap * sizeof(*v));
		if (!v)
			return LAB_ENOMEM;
		st->cmds = v;
		st->cap = cap;
	}
	uint64_t size = CMD_HDR + tlv + (uint64_t)ntlv * TLV_HDR;
	st->cmds[st->n] = *c;
	st->cmds[st->n++].size = (uint32_t)size;
	st->per_op[c->op]++;
	st->bytes += size;
	if (t)
		task_cpu(s, t, SEND_NS_CMD);
	return 0;
}

/* Free a stream and zero it. */
void send_stream_free(send_stream *st)
{
	if (!st)
		return;
	free(st->cmds);
	free(st->pool);
	memset(st, 0, sizeof(*st));
}

/* What send learns about one inode from the snapshot's items. */
typedef struct snd_ino {
	uint64_t ino, size, gen, parent;
	uint32_t mode;
	uint64_t (*ext)[2];  /* [file offset, bytes] of each file extent */
	uint32_t next, ecap;
	int sent;            /* directories: created on the stream already */
} snd_ino;

typedef struct snd_set {
	snd_ino *v;
	uint64_t n, cap;
} snd_set;

/* Free the collected inodes. */
static void snd_set_free(snd_set *ss)
{
	for (uint64_t i = 0; i < ss->n; i++)
		free(ss->v[i].ext);
	free(ss->v);
}

/* Append an inode record (NULL when out of memory). */
static snd_ino *snd_new(snd_set *ss, uint64_t ino)
{
	if (ss->n == ss->cap) {
		uint64_t cap = ss->cap ? ss->cap * 2 : 64;
		snd_ino *v = lab_realloc(ss->v, cap * sizeof(*v));
		if (!v)
			return NULL;
		ss->v = v;
		ss->cap = cap;
	}
	snd_ino *si = &ss->v[ss->n++];
	memset(si, 0, sizeof(*si));
	si->ino = ino;
	return si;
}

/* The collected inode ino (ss->v is in inode order: key order), or NULL. */
static const snd_ino *snd_find(const snd_set *ss, uint64_t ino)
{
	uint64_t lo = 0, hi = ss->n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (ss->v[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ss->n && ss->v[lo].ino == ino ? &ss->v[lo] : NULL;
}

/* Record one file extent item of the inode. */
static int snd_add_ext(snd_ino *si, uint64_t off, uint64_t len)
{
	if (si->next == si->ecap) {
		uint32_t cap = si->ecap ? si->ecap * 2 : 4;
		uint64_t (*e)[2] = lab_realloc(si->ext, cap * sizeof(*e));
		if (!e)
			return LAB_ENOMEM;
		si->ext = e;
		si->ecap = cap;
	}
	si->ext[si->next][0] = off;
	si->ext[si->next][1] = len;
	si->next++;
	return 0;
}

/* Walk the snapshot in key order collecting inodes (models the full-send
 * iteration of send_subvol -> full_send_tree, one item at a time). */
static int snd_collect(fs_info *fs, task *t, struct btrfs_root *snap,
		       snd_set *ss, send_stream *st)
{
	bt_tree *tr = &snap->tree;
	bt_path p;
	bt_path_init(&p, tr, t);
	bt_key k = bt_mkkey(BTRFS_FIRST_FREE_OBJECTID - 1, 0, 0);
	int r = bt_search(tr, &p, &k, 0, 0);
	if (r < 0) {
		bt_path_release(&p);
		return r;
	}
	r = 0;
	if (!bt_path_item(&p))
		r = bt_next_leaf(tr, &p);
	snd_ino *cur = NULL;
	while (r == 0) {
		bt_item *it = bt_path_item(&p);
		if (!it)
			break;
		st->items_visited++;
		if (t)
			task_cpu(fs->sim, t, SEND_NS_ITEM);
		uint64_t oid = it->key.objectid;
		if (oid > BTRFS_LAST_FREE_OBJECTID)
			break;
		if (it->key.type == BTRFS_INODE_ITEM_KEY) {
			cur = snd_new(ss, oid);
			if (!cur) {
				r = LAB_ENOMEM;
				break;
			}
			cur->size = it->v[0];
			cur->gen = it->v[2];
			cur->mode = it->aux;
		} else if (cur && cur->ino == oid) {
			if (it->key.type == BTRFS_INODE_REF_KEY && !cur->parent) {
				cur->parent = it->key.offset;
			} else if (it->key.type == BTRFS_EXTENT_DATA_KEY) {
				uint64_t len = it->v[1];
				r = snd_add_ext(cur, it->key.offset, len);
				if (r)
					break;
			}
		}
		r = bt_next_item(tr, &p);
	}
	bt_path_release(&p);
	return r < 0 ? r : 0;
}

/* Emit the commands that create one inode (process_recorded_refs for a
 * new inode, send_write per extent, finish_inode_if_needed). */
static int snd_inode(fs_info *fs, task *t, const snd_ino *si, const send_cfg *cfg,
		     send_name_fn name_of, void *name_ctx, send_stream *st)
{
	char orphan[64], name[VFS_NAME_MAX + 1];
	int isdir = (si->mode & S_IFMT_) == S_IFDIR_;
	snprintf(orphan, sizeof(orphan), "o%llu-%llu-0", (unsigned long long)si->ino,
		 (unsigned long long)si->gen);
	int r = name_of(name_ctx, si->ino, si->parent, name, sizeof(name));
	if (r)
		return r;
	uint32_t o_off, n_off;
	if ((r = st_name(st, orphan, &o_off)) || (r = st_name(st, name, &n_off)))
		return r;
	uint64_t olen = strlen(orphan), nlen = strlen(name);
	send_cmd c;
	memset(&c, 0, sizeof(c));
	c.ino = si->ino;
	/* create under the orphan name in the top directory */
	c.op = isdir ? SEND_MKDIR : SEND_MKFILE;
	c.dir = BTRFS_FIRST_FREE_OBJECTID;
	c.name = o_off;
	if ((r = st_emit(st, t, fs->sim, &c, olen + 8, 2)))
		return r;
	/* and move it to its path */
	c.op = SEND_RENAME;
	c.dir = si->parent;
	c.name = o_off;
	c.name2 = n_off;
	if ((r = st_emit(st, t, fs->sim, &c, olen + nlen, 2)))
		return r;
	send_cmd u;
	memset(&u, 0, sizeof(u));
	u.op = SEND_UTIMES;
	u.ino = si->parent;
	if ((r = st_emit(st, t, fs->sim, &u, 8 + 3 * 12, 4)))
		return r;
	uint64_t sent_to = 0;
	if (!isdir) {
		for (uint32_t e = 0; e < si->next; e++) {
			uint64_t off = si->ext[e][0];
			uint64_t end = off + si->ext[e][1];
			if (end > si->size)
				end = si->size;
			while (off < end) {
				uint64_t len = end - off;
				if (len > cfg->max_write)
					len = cfg->max_write;
				c.op = SEND_WRITE;
				c.dir = 0;
				c.off = off;
				c.len = len;
				if ((r = st_emit(st, t, fs->sim, &c, nlen + 8 + len, 3)))
					return r;
				if (t)
					task_cpu(fs->sim, t, (len + 1023) / 1024 * SEND_NS_PER_KIB);
				st->data_bytes += len;
				off += len;
			}
			if (end > sent_to)
				sent_to = end;
		}
	}
	memset(&c, 0, sizeof(c));
	c.ino = si->ino;
	/* finish_inode_if_needed: the TRUNCATE comes first, right after the
	 * last WRITE (so the file's pages are still dirty when receive
	 * replays it), then CHOWN, CHMOD, UTIMES. Before ffa7c4296e93 every
	 * regular file got one; after it, only one whose size its writes do
	 * not reach (a trailing hole) */
	if (!isdir && (cfg->always_truncate || sent_to < si->size)) {
		c.op = SEND_TRUNCATE;
		c.len = si->size;
		if ((r = st_emit(st, t, fs->sim, &c, nlen + 8, 2)))
			return r;
		c.len = 0;
	}
	c.op = SEND_CHOWN;
	if ((r = st_emit(st, t, fs->sim, &c, nlen + 16, 3)))
		return r;
	c.op = SEND_CHMOD;
	c.off = si->mode & 07777;
	if ((r = st_emit(st, t, fs->sim, &c, nlen + 8, 2)))
		return r;
	c.op = SEND_UTIMES;
	c.off = 0;
	if ((r = st_emit(st, t, fs->sim, &c, nlen + 3 * 12, 4)))
		return r;
	if (isdir)
		st->dirs++;
	else
		st->files++;
	return 0;
}

/* Build a full send stream of snap; see send.h. */
int send_build(fs_info *fs, task *t, struct btrfs_root *snap,
	       const send_cfg *cfg, send_name_fn name_of, void *name_ctx,
	       send_stream *out)
{
	send_cfg def;
	if (!out)
		return LAB_EINVAL;
	memset(out, 0, sizeof(*out));
	if (!fs || !snap || !name_of)
		return LAB_EINVAL;
	if (!cfg) {
		send_cfg_default(&def);
		cfg = &def;
	}
	if (cfg->max_write < SECTORSIZE || cfg->max_write > (1u << 20))
		return LAB_ERANGE;
	simtime_t t0 = t ? t->clock : 0;
	snd_set ss;
	memset(&ss, 0, sizeof(ss));
	int r = snd_collect(fs, t, snap, &ss, out);
	/* directories first (the top directory exists on the receiver), a
	 * directory only once its parent was sent (a directory renamed under
	 * a younger one comes after it: the real send parks it under its
	 * orphan name until then), then the rest, each in inode order */
	int progress = 1;
	while (progress && r == 0) {
		progress = 0;
		for (uint64_t i = 0; i < ss.n && r == 0; i++) {
			snd_ino *si = &ss.v[i];
			if (si->sent || (si->mode & S_IFMT_) != S_IFDIR_)
				continue;
			if (si->ino == BTRFS_FIRST_FREE_OBJECTID) {
				si->sent = 1;
				progress = 1;
				continue;
			}
			if (!si->parent) {
				r = LAB_EINVAL; /* an inode without a name */
				break;
			}
			const snd_ino *p = snd_find(&ss, si->parent);
			if (si->parent != BTRFS_FIRST_FREE_OBJECTID && (!p || !p->sent))
				continue;
			r = snd_inode(fs, t, si, cfg, name_of, name_ctx, out);
			si->sent = 1;
			progress = 1;
		}
	}
	for (uint64_t i = 0; i < ss.n && r == 0; i++) {
		const snd_ino *si = &ss.v[i];
		if ((si->mode & S_IFMT_) == S_IFDIR_) {
			if (!si->sent)
				r = LAB_EINVAL; /* a directory cycle or an unnamed parent */
			continue;
		}
		if (!si->parent) {
			r = LAB_EINVAL;
			break;
		}
		r = snd_inode(fs, t, si, cfg, name_of, name_ctx, out);
	}
	snd_set_free(&ss);
	if (r) {
		send_stream_free(out);
		return r;
	}
	out->send_ns = t ? t->clock - t0 : 0;
	return 0;
}

/* --------------------------------------------------------------- receive */

static int rcv_cmp(const void *a, const void *b)
{
	const rcv_ino *x = a, *y = b;
	return x->src < y->src ? -1 : x->src > y->src;
}

/* Binary search of the receive inodes by source inode number. */
rcv_ino *recv_lookup(recv_ctx *r, uint64_t src)
{
	uint64_t lo = 0, hi = r->nino;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (r->ino[mid].src < src)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nino && r->ino[lo].src == src ? &r->ino[lo] : NULL;
}

/* Set up a receive: one receive inode per MKFILE/MKDIR of the stream
 * plus the top directory (source 256 -> destination 256); a data path on
 * fs if it has none (the receive's own, detached by recv_destroy). */
int recv_init(recv_ctx *r, fs_info *fs, struct btrfs_root *root,
	      const send_stream *st)
{
	if (!r)
		return LAB_EINVAL;
	memset(r, 0, sizeof(*r));
	if (!fs || !root || !st || (st->n && !st->cmds))
		return LAB_EINVAL;
	r->fs = fs;
	r->root = root;
	r->st = st;
	uint64_t n = 1;
	for (uint64_t i = 0; i < st->n; i++)
		n += st->cmds[i].op == SEND_MKFILE || st->cmds[i].op == SEND_MKDIR;
	r->ino = lab_calloc(n, sizeof(rcv_ino));
	if (!r->ino)
		return LAB_ENOMEM;
	r->ino[0].src = BTRFS_FIRST_FREE_OBJECTID;
	r->ino[0].dst = BTRFS_FIRST_FREE_OBJECTID;
	r->ino[0].inode = fs_inode_get(root, BTRFS_FIRST_FREE_OBJECTID);
	r->nino = 1;
	for (uint64_t i = 0; i < st->n; i++)
		if (st->cmds[i].op == SEND_MKFILE || st->cmds[i].op == SEND_MKDIR)
			r->ino[r->nino++].src = st->cmds[i].ino;
	qsort(r->ino, r->nino, sizeof(rcv_ino), rcv_cmp);
	for (uint64_t i = 1; i < r->nino; i++)
		if (r->ino[i].src == r->ino[i - 1].src) {
			recv_destroy(r);
			return LAB_EINVAL; /* an inode created twice */
		}
	if (!vio_dfs(fs)) {
		int rc = vio_attach(fs, NULL, NULL);
		if (rc) {
			recv_destroy(r);
			return rc;
		}
		r->own_data = 1;
	}
	dfs *df = vio_dfs(fs);
	r->bios0 = df->data_writes;
	for (int i = 0; i < SEND_NOPS; i++)
		lhist_init(&r->op_lat[i]);
	lhist_init(&r->file_lat);
	lhist_init(&r->sync_lat);
	r->s_dirty_pages = fs->sim ? sim_series_id(fs->sim, "recv_dirty_pages") : -1;
	return 0;
}

/* Free the receive state (the stream is the caller's); a data path
 * recv_init attached goes (the fs must still be mounted). */
void recv_destroy(recv_ctx *r)
{
	if (!r)
		return;
	if (r->own_data && r->fs)
		vio_detach(r->fs);
	r->own_data = 0;
	free(r->ino);
	r->ino = NULL;
	r->nino = 0;
}

/* Take the receiving fs's dirty page count and sample it. */
static void rcv_dirty_series(recv_ctx *r, task *t)
{
	dfs *df = vio_dfs(r->fs);
	if (!df)
		return;
	r->dirty_pages = df->pcg.dirty;
	if (r->s_dirty_pages >= 0 && t)
		sim_series_add(r->fs->sim, r->s_dirty_pages, t->clock, (double)r->dirty_pages);
}

/* The WRITE command: pwrite(2) of its data through the data path (page
 * cache, delalloc, i_size), then file_update_time's inode update.
 * Returns 0, 1 (written, t parked by dirty throttling), a larger positive
 * value (t parked before writing: the command is retried) or negative. */
static int rcv_write(recv_ctx *r, task *t, rcv_ino *ri, uint64_t off, uint64_t len)
{
	struct inode *in = ri->inode;
	if (!in || (in->mode & S_IFMT_) != S_IFREG_ || len == 0)
		return LAB_EINVAL;
	fs_charge(r->fs, t, var_ns(r->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	int rc = vio_write(r->fs, t, in, off, len);
	if (rc < 0 || rc > 1)
		return rc;
	int upd = fs_inode_update(r->fs, t, in);
	rcv_dirty_series(r, t);
	return upd ? upd : rc;
}

/* The TRUNCATE command: truncate(2) through the data path, where patch
 * 003's switch acts (vio_setsize); its report feeds the statistics.
 * Returns 0, 1 (t parked first: the command is retried) or negative. */
static int rcv_truncate(recv_ctx *r, task *t, rcv_ino *ri, uint64_t size)
{
	struct inode *in = ri->inode;
	if (!in || (in->mode & S_IFMT_) != S_IFREG_)
		return LAB_EINVAL;
	fs_charge(r->fs, t, var_ns(r->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	vio_trunc_info ti;
	int rc = vio_setsize(r->fs, t, in, size, &ti);
	if (rc)
		return rc;
	r->truncates++;
	r->truncates_same_size += (uint64_t)ti.same_size;
	r->truncates_skipped += (uint64_t)ti.skipped;
	r->sync_writes += ti.sync_bios;
	r->sync_bytes += ti.sync_bytes;
	r->sync_inline += ti.sync_inline;
	ri->sync_writes += (uint32_t)ti.sync_bios;
	r->last_sync_t0 = ti.sync_start;
	r->last_sync_ns = ti.sync_bios ? ti.sync_ns : 0;
	if (ti.sync_bios)
		lhist_add(&r->sync_lat, ti.sync_ns);
	rcv_dirty_series(r, t);
	return 0;
}

/* A setattr (chown, chmod, utimes): the inode item is updated in place. */
static int rcv_setattr(recv_ctx *r, task *t, rcv_ino *ri)
{
	if (!ri->inode)
		return LAB_ENOENT;
	fs_charge(r->fs, t, var_ns(r->fs->sim, V_SYSCALL, VFS_NS_SYSCALL));
	return fs_inode_update(r->fs, t, ri->inode);
}

/* Replay one command; see send.h. */
int recv_step(recv_ctx *r, task *t)
{
	if (!r || !r->st || !t)
		return LAB_EINVAL;
	if (r->error)
		return r->error;
	if (r->next >= r->st->n) {
		r->end = t->clock;
		return TASK_DONE;
	}
	const send_cmd *c = &r->st->cmds[r->next];
	if (r->next == 0 && !r->retry)
		r->start = t->clock;
	simtime_t t0 = r->retry ? r->retry_t0 : t->clock;
	if (!r->retry)
		fs_charge(r->fs, t, RCV_NS_CMD);
	r->retry = 0;
	rcv_ino *ri = recv_lookup(r, c->ino);
	rcv_ino *dir;
	int rc = 0;
	struct inode *in = NULL;
	if (!ri) {
		rc = LAB_ENOENT;
		goto out;
	}
	switch (c->op) {
	case SEND_MKFILE:
	case SEND_MKDIR:
		dir = recv_lookup(r, c->dir);
		if (!dir || !dir->dst || ri->dst) {
			rc = LAB_EINVAL;
			break;
		}
		ri->started = t0;
		if (c->op == SEND_MKFILE)
			rc = vfs_create(r->fs, t, r->root, dir->dst, send_name(r->st, c->name),
					0644, &in);
		else
			rc = vfs_mkdir(r->fs, t, r->root, dir->dst, send_name(r->st, c->name), &in);
		if (!rc) {
			ri->inode = in;
			ri->dst = in->ino;
		}
		break;
	case SEND_RENAME:
		dir = recv_lookup(r, c->dir);
		if (!dir || !dir->dst) {
			rc = LAB_ENOENT;
			break;
		}
		rc = vfs_rename(r->fs, t, r->root, BTRFS_FIRST_FREE_OBJECTID,
				send_name(r->st, c->name), dir->dst, send_name(r->st, c->name2));
		break;
	case SEND_WRITE:
		rc = rcv_write(r, t, ri, c->off, c->len);
		break;
	case SEND_CHMOD:
		if (ri->inode)
			ri->inode->mode = (ri->inode->mode & S_IFMT_) | (uint32_t)(c->off & 07777);
		rc = rcv_setattr(r, t, ri);
		break;
	case SEND_CHOWN:
	case SEND_UTIMES:
		rc = rcv_setattr(r, t, ri);
		break;
	case SEND_TRUNCATE:
		rc = ri->inode ? rcv_truncate(r, t, ri, c->len) : LAB_ENOENT;
		if (rc == 1)
			rc = 2; /* parked before the truncate: retry it */
		break;
	default:
		rc = LAB_EINVAL;
	}
out:
	if (rc > 1) {
		/* t is parked and the command not done: run it again */
		r->retry = 1;
		r->retry_t0 = t0;
		return TASK_BLOCKED;
	}
	if (rc < 0) {
		r->error = rc;
		return rc;
	}
	r->next++;
	lhist_add(&r->op_lat[c->op], t->clock - t0);
	/* a file is done with its last command: the next command is about
	 * another inode (or the stream ends) */
	int last = r->next >= r->st->n || r->st->cmds[r->next].ino != c->ino;
	int isfile = ri->inode && (ri->inode->mode & S_IFMT_) == S_IFREG_;
	if (last && isfile && c->op != SEND_MKFILE && c->op != SEND_RENAME)
		lhist_add(&r->file_lat, t->clock - ri->started);
	if (r->next >= r->st->n)
		r->end = t->clock;
	if (rc == 1)
		return TASK_BLOCKED; /* done, then parked by dirty throttling */
	return r->next >= r->st->n ? TASK_DONE : TASK_RUN;
}

/* Count the file extent items of the received files by kind (a walk
 * with accounting off: statistics, not work). */
static int rcv_count_extents(recv_ctx *r)
{
	fs_info *fs = r->fs;
	r->data_extents = 0;
	r->inline_extents = 0;
	int rc = 0;
	fs->accounting_off++;
	for (uint64_t i = 0; i < r->nino && rc == 0; i++) {
		struct inode *in = r->ino[i].inode;
		if (!in || (in->mode & S_IFMT_) != S_IFREG_)
			continue;
		fe_iter it;
		fe_info fe;
		int k = fe_iter_first(fs, NULL, in, 0, &it, &fe);
		while (k == 0) {
			if (fe.type == FE_INLINE)
				r->inline_extents++;
			else if (fe.disk_bytenr)
				r->data_extents++;
			k = fe_iter_next(fs, &it, &fe);
		}
		fe_iter_end(&it);
		if (k < 0)
			rc = k;
	}
	fs->accounting_off--;
	return rc;
}

/* Write back everything the receive left dirty (the sync after it):
 * vio_sync; see send.h. */
int recv_flush(recv_ctx *r, task *t)
{
	if (!r || !t || !r->fs)
		return LAB_EINVAL;
	int rc = vio_sync(r->fs, t);
	if (rc)
		return rc; /* 1: parked behind an asynchronous writeback */
	r->flush_ios = vio_dfs(r->fs)->data_writes - r->bios0;
	rcv_dirty_series(r, t);
	return rcv_count_extents(r);
}

/* ------------------------------------------------------- observability */

void send_details_json(const send_stream *st, const recv_ctx *r, strbuf *out)
{
	js_obj(out);
	if (st) {
		js_key(out, "stream");
		js_obj(out);
		js_kint(out, "commands", (int64_t)st->n);
		js_kint(out, "bytes", (int64_t)st->bytes);
		js_kint(out, "files", (int64_t)st->files);
		js_kint(out, "dirs", (int64_t)st->dirs);
		js_kint(out, "data_bytes", (int64_t)st->data_bytes);
		js_kint(out, "items_visited", (int64_t)st->items_visited);
		js_kint(out, "send_ns", (int64_t)st->send_ns);
		js_key(out, "per_op");
		js_obj(out);
		for (int i = 0; i < SEND_NOPS; i++)
			js_kint(out, send_op_names[i], (int64_t)st->per_op[i]);
		js_obj_end(out);
		js_obj_end(out);
	}
	if (r) {
		js_key(out, "receive");
		js_obj(out);
		js_kint(out, "ns", (int64_t)(r->end - r->start));
		js_kbool(out, "skip_same_size_writeback",
			 fs_patch_on(r->fs, P_003_TRUNC_SKIP_SAME_SIZE_WB));
		js_kint(out, "commands_done", (int64_t)r->next);
		js_kint(out, "sync_writes", (int64_t)r->sync_writes);
		js_kint(out, "sync_bytes", (int64_t)r->sync_bytes);
		js_kint(out, "sync_inline", (int64_t)r->sync_inline);
		js_kint(out, "data_extents", (int64_t)r->data_extents);
		js_kint(out, "inline_extents", (int64_t)r->inline_extents);
		js_kint(out, "truncates", (int64_t)r->truncates);
		js_kint(out, "truncates_same_size", (int64_t)r->truncates_same_size);
		js_kint(out, "truncates_skipped", (int64_t)r->truncates_skipped);
		js_kint(out, "dirty_pages", (int64_t)r->dirty_pages);
		js_key(out, "ops");
		js_obj(out);
		for (int i = 0; i < SEND_NOPS; i++) {
			if (!r->op_lat[i].n)
				continue;
			js_key(out, send_op_names[i]);
			lhist_json(&r->op_lat[i], out);
		}
		js_obj_end(out);
		js_key(out, "file");
		lhist_json(&r->file_lat, out);
		js_key(out, "sync");
		lhist_json(&r->sync_lat, out);
		js_obj_end(out);
	}
	js_obj_end(out);
}
