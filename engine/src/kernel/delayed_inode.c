/*
 * delayed_inode.c - delayed items: per-inode delayed nodes, the balance
 * check, the async worker and the runs at commit (delayed_inode.h).
 */
#include "delayed_inode.h"

#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "items.h"
#include "lab.h"
#include "labmem.h"
#include "treelog.h"

/* ------------------------------------------------------------ the nodes */

static void dl_prepare(delayed_root *dr, dl_node *n)
{
	if (n->prev || dr->head == n)
		return;
	n->prev = dr->tail;
	n->next = NULL;
	if (dr->tail)
		dr->tail->next = n;
	else
		dr->head = n;
	dr->tail = n;
}

static void dl_unprepare(delayed_root *dr, dl_node *n)
{
	if (!n->prev && dr->head != n)
		return;
	if (n->prev)
		n->prev->next = n->next;
	else
		dr->head = n->next;
	if (n->next)
		n->next->prev = n->prev;
	else
		dr->tail = n->prev;
	n->prev = n->next = NULL;
}

/* The inode's delayed node, made on first use (btrfs_get_or_create_delayed_node). */
static dl_node *dl_get(delayed_root *dr, struct inode *in)
{
	if (in->delayed)
		return in->delayed;
	dl_node *n = lab_pool_zalloc(&dr->node_pool);
	if (!n)
		return NULL;
	n->root = in->root;
	n->inode = in;
	n->ino = in->ino;
	n->all_next = dr->all;
	dr->all = n;
	in->delayed = n;
	return n;
}

static int dl_count(const dl_node *n)
{
	return n->nins + n->ndel + (n->inode_dirty ? 1 : 0);
}

/* An item left the root (inserted, deleted, written or cancelled):
 * finish_one_item wakes the balance waiters every batch, or once the
 * count fell below the background mark. */
static void dl_finish_one(delayed_root *dr, simtime_t at)
{
	if (dr->items)
		dr->items--;
	uint64_t seq = ++dr->items_seq;
	if ((dr->items < BTRFS_DELAYED_BACKGROUND || seq % BTRFS_DELAYED_BATCH == 0) &&
	    dr->bal_wq.len)
		waitq_wake_all(dr->sim, &dr->bal_wq, at);
}

static simtime_t dl_now(const delayed_root *dr, const task *t)
{
	return t ? t->clock : sim_now(dr->sim);
}

/* A node with nothing queued leaves the prepare list. */
static void dl_settle(delayed_root *dr, dl_node *n)
{
	if (dl_count(n) == 0)
		dl_unprepare(dr, n);
	else
		dl_prepare(dr, n);
}

int dl_insert_dir_index(delayed_root *dr, task *t, struct inode *dir, uint64_t index,
			uint32_t size, const bt_item *it)
{
	dl_node *n = dl_get(dr, dir);
	if (!n)
		return LAB_ENOMEM;
	fs_charge(dr->fs, t, DELAYED_NS_ITEM);
	int i = n->nins;
	while (i > 0 && n->ins[i - 1].index > index)
		i--;
	if (i > 0 && n->ins[i - 1].index == index)
		return LAB_EINVAL; /* -EEXIST: a dir index is never reused */
	if (n->nins == n->cins) {
		int cap = n->cins ? n->cins * 2 : 8;
		dl_ins *x = lab_realloc(n->ins, (size_t)cap * sizeof(*x));
		if (!x)
			return LAB_ENOMEM;
		n->ins = x;
		n->cins = cap;
	}
	memmove(&n->ins[i + 1], &n->ins[i], (size_t)(n->nins - i) * sizeof(*n->ins));
	n->ins[i].index = index;
	n->ins[i].size = size;
	n->ins[i].it = *it;
	n->ins[i].it.key = bt_mkkey(dir->ino, BTRFS_DIR_INDEX_KEY, index);
	n->ins[i].it.size = size;
	n->nins++;
	dr->items++;
	dr->queued_ins++;
	dl_prepare(dr, n);
	return 0;
}

int dl_delete_dir_index(delayed_root *dr, task *t, struct inode *dir, uint64_t index)
{
	dl_node *n = dl_get(dr, dir);
	if (!n)
		return LAB_ENOMEM;
	fs_charge(dr->fs, t, DELAYED_NS_ITEM);
	for (int i = 0; i < n->nins; i++) {
		if (n->ins[i].index != index)
			continue;
		/* never inserted: the insertion goes (__btrfs_remove_delayed_item) */
		memmove(&n->ins[i], &n->ins[i + 1], (size_t)(n->nins - i - 1) * sizeof(*n->ins));
		n->nins--;
		dr->cancelled++;
		dl_finish_one(dr, dl_now(dr, t));
		dl_settle(dr, n);
		return 0;
	}
	int i = n->ndel;
	while (i > 0 && n->del[i - 1].index > index)
		i--;
	if (i > 0 && n->del[i - 1].index == index)
		return 0;
	if (n->ndel == n->cdel) {
		int cap = n->cdel ? n->cdel * 2 : 8;
		dl_del *x = lab_realloc(n->del, (size_t)cap * sizeof(*x));
		if (!x)
			return LAB_ENOMEM;
		n->del = x;
		n->cdel = cap;
	}
	memmove(&n->del[i + 1], &n->del[i], (size_t)(n->ndel - i) * sizeof(*n->del));
	n->del[i].index = index;
	n->del[i].logged = 0;
	n->ndel++;
	dr->items++;
	dr->queued_del++;
	dl_prepare(dr, n);
	return 0;
}

int dl_update_inode(delayed_root *dr, task *t, struct inode *in)
{
	dl_node *n = dl_get(dr, in);
	if (!n)
		return LAB_ENOMEM;
	/* fill_stack_inode_item: a copy of the in-memory inode */
	fs_charge(dr->fs, t, DELAYED_NS_ITEM);
	memset(&n->inode_item, 0, sizeof(n->inode_item));
	n->inode_item.key = bt_mkkey(in->ino, BTRFS_INODE_ITEM_KEY, 0);
	n->inode_item.size = SZ_INODE_ITEM;
	n->inode_item.v[0] = in->size;
	n->inode_item.v[1] = in->nbytes;
	n->inode_item.v[2] = in->generation;
	n->inode_item.aux = in->mode;
	dr->inode_updates++;
	if (!n->inode_dirty) {
		n->inode_dirty = 1;
		dr->dirty_nodes++;
		dr->items++;
		dl_prepare(dr, n);
	}
	return 0;
}

int dl_pending_inode_item(const delayed_root *dr, const struct inode *in, bt_item *it)
{
	/* no inode item queued anywhere (e.g. stats after a commit): the
	 * inode's node, cold memory per inode, need not be read */
	if (dr && !dr->dirty_nodes)
		return 0;
	const dl_node *n = in ? in->delayed : NULL;
	if (!n || !n->inode_dirty)
		return 0;
	*it = n->inode_item;
	return 1;
}

void dl_dir_items(const delayed_root *dr, const struct inode *dir, const dl_ins **ins,
		  int *nins, int *ndel)
{
	const dl_node *n = dir ? dir->delayed : NULL;
	(void)dr;
	*ins = n ? n->ins : NULL;
	*nins = n ? n->nins : 0;
	*ndel = n ? n->ndel : 0;
}

int dl_log_take_deletions(delayed_root *dr, struct inode *dir, uint64_t *out)
{
	dl_node *n = dir ? dir->delayed : NULL;
	int k = 0;
	(void)dr;
	for (int i = 0; n && i < n->ndel; i++) {
		if (n->del[i].logged)
			continue;
		n->del[i].logged = 1;
		out[k++] = n->del[i].index;
	}
	return k;
}

/* ------------------------------------------------- inserting the items */

/* bt_tree.on_lock_wait while a node is inserted: who waited on which
 * block, and whether an fsync held it read-locked (the log's record of
 * its leaf holds says so). */
static void dl_on_lock_wait(void *ctx, const task *t, const bt_node *blk, simtime_t from,
			    simtime_t to)
{
	delayed_root *dr = ctx;
	if (t != dr->flush_task || !dr->flush_node)
		return;
	dl_wait_ev ev;
	memset(&ev, 0, sizeof(ev));
	ev.task = t->id;
	ev.who = dr->flush_who;
	ev.ino = dr->flush_node->ino;
	ev.bytenr = blk->bytenr;
	ev.level = blk->level;
	ev.from = from;
	ev.to = to;
	treelog *tl = dr->fs->slot[FS_SLOT_LOG];
	uint64_t w = to - from;
	dr->waits++;
	dr->wait_ns += w;
	if (tl && blk->level == 0 && treelog_leaf_held(tl, blk->bytenr, to, &ev.fsync_ino)) {
		ev.fsync_leaf = 1;
		treelog_note_leaf_wait(tl, w);
		dr->fsync_waits++;
		dr->fsync_wait_ns += w;
		if (w > dr->fsync_wait_max_ns)
			dr->fsync_wait_max_ns = w;
		if (ev.who == DLW_WORKER)
			lhist_add(&dr->worker_wait, w);
	}
	if (dr->on_wait)
		dr->on_wait(dr->obs_ctx, &ev);
}

/* The inode item written from the node's copy (__btrfs_update_delayed_inode:
 * a COW search for it, the fields copied in place). */
static int dl_write_inode(delayed_root *dr, task *t, dl_node *n)
{
	bt_tree *tr = &n->root->tree;
	bt_key k = bt_mkkey(n->ino, BTRFS_INODE_ITEM_KEY, 0);
	bt_path p;
	bt_path_init(&p, tr, t);
	int r = bt_search(tr, &p, &k, 0, 1);
	if (r == 0) {
		bt_item *it = bt_path_item(&p);
		it->v[0] = n->inode_item.v[0];
		it->v[1] = n->inode_item.v[1];
		it->v[2] = n->inode_item.v[2];
		it->aux = n->inode_item.aux;
		bt_mark_dirty(tr, &p);
	}
	bt_path_release(&p);
	/* an item already gone (evicted meanwhile) needs no update */
	return r < 0 ? r : 0;
}

/*
 * Insert one node's queued items into the subvolume tree, in t
 * (__btrfs_commit_inode_delayed_items: the insertions in index order, the
 * deletions, then the inode item). Lock waits on the way are recorded.
 */
static int dl_flush_node(delayed_root *dr, task *t, dl_node *n, int who)
{
	bt_tree *tr = &n->root->tree;
	void (*prev_cb)(void *, const task *, const bt_node *, simtime_t, simtime_t) = tr->on_lock_wait;
	void *prev_ctx = tr->lock_wait_ctx;
	tr->on_lock_wait = dl_on_lock_wait;
	tr->lock_wait_ctx = dr;
	dl_node *prev_node = dr->flush_node;
	task *prev_task = dr->flush_task;
	int prev_who = dr->flush_who;
	dr->flush_node = n;
	dr->flush_task = t;
	dr->flush_who = who;
	n->flushing = 1;
	int r = 0;
	/* insertions: runs of consecutive indexes that fit a leaf, one
	 * btrfs_insert_empty_items each (btrfs_insert_delayed_item's batch,
	 * btrfs_is_continuous_delayed_item) */
	while (n->nins && !r) {
		if (dr->batch_cap < n->nins) {
			bt_item *b = lab_realloc(dr->batch, (size_t)n->nins * sizeof(*b));
			if (!b) {
				r = LAB_ENOMEM;
				break;
			}
			dr->batch = b;
			dr->batch_cap = n->nins;
		}
		bt_item *batch = dr->batch;
		uint32_t bytes = 0;
		int nb = 0;
		while (nb < n->nins &&
		       (nb == 0 || (n->ins[nb].index == n->ins[nb - 1].index + 1 &&
				    bytes + n->ins[nb].size + BT_ITEM_HEADER <= BT_LEAF_DATA_SIZE))) {
			batch[nb] = n->ins[nb].it;
			bytes += n->ins[nb].size + BT_ITEM_HEADER;
			nb++;
		}
		int k = bt_insert_items(tr, t, batch, nb);
		if (k == 0)
			r = LAB_EENGINE; /* a dir index already in the tree */
		if (k <= 0) {
			r = r ? r : k;
			break;
		}
		memmove(&n->ins[0], &n->ins[k], (size_t)(n->nins - k) * sizeof(*n->ins));
		n->nins -= k;
		dr->inserted += (uint64_t)k;
		for (int i = 0; i < k; i++)
			dl_finish_one(dr, dl_now(dr, t));
	}
	/* deletions: a search for the first, then the leaf's following
	 * items deleted with it while they are the next queued ones
	 * (btrfs_batch_delete_items); one not in the tree is dropped */
	while (n->ndel && !r) {
		bt_key k = bt_mkkey(n->ino, BTRFS_DIR_INDEX_KEY, n->del[0].index);
		bt_path p;
		bt_path_init(&p, tr, t);
		r = bt_search(tr, &p, &k, -1, 1);
		int nb = 1;
		if (r == 0) {
			const bt_node *leaf = p.nodes[0];
			int slot = p.slots[0];
			while (slot + nb < leaf->nritems && nb < n->ndel) {
				const bt_key *lk = bt_node_key(leaf, slot + nb);
				if (lk->objectid != n->ino || lk->type != BTRFS_DIR_INDEX_KEY ||
				    lk->offset != n->del[nb].index)
					break;
				nb++;
			}
			r = bt_del_items(tr, &p, nb);
		} else {
			bt_path_release(&p);
			if (r == 1)
				r = 0; /* nothing to delete */
		}
		if (r)
			break;
		memmove(&n->del[0], &n->del[nb], (size_t)(n->ndel - nb) * sizeof(*n->del));
		n->ndel -= nb;
		dr->deleted += (uint64_t)nb;
		for (int i = 0; i < nb; i++)
			dl_finish_one(dr, dl_now(dr, t));
	}
	if (!r && n->inode_dirty) {
		r = dl_write_inode(dr, t, n);
		if (!r) {
			n->inode_dirty = 0;
			dr->dirty_nodes--;
			dr->inodes_written++;
			dl_finish_one(dr, dl_now(dr, t));
		}
	}
	n->flushing = 0;
	dr->flush_node = prev_node;
	dr->flush_task = prev_task;
	dr->flush_who = prev_who;
	tr->on_lock_wait = prev_cb;
	tr->lock_wait_ctx = prev_ctx;
	dl_settle(dr, n);
	return r;
}

int dl_commit_inode(delayed_root *dr, task *t, struct inode *in)
{
	dl_node *n = in ? in->delayed : NULL;
	if (!n || dl_count(n) == 0)
		return 0;
	return dl_flush_node(dr, t, n, DLW_OTHER);
}

int dl_run_all(delayed_root *dr, task *t, int who)
{
	int r = 0;
	dr->commit_runs++;
	for (dl_node *n = dr->head; n && !r; n = dr->head)
		r = dl_flush_node(dr, t, n, who);
	return r;
}

void dl_kill_inode(delayed_root *dr, struct inode *in)
{
	dl_node *n = in ? in->delayed : NULL;
	if (!n)
		return;
	simtime_t at = sim_now(dr->sim);
	int k = dl_count(n);
	for (int i = 0; i < k; i++)
		dl_finish_one(dr, at);
	n->nins = n->ndel = 0;
	if (n->inode_dirty)
		dr->dirty_nodes--;
	n->inode_dirty = 0;
	dl_unprepare(dr, n);
	n->inode = NULL;
	in->delayed = NULL;
}

/* ---------------------------------------------------------- the worker */

/* btrfs_wq_run_delayed_node: queue a work of nr nodes (0: up to
 * BTRFS_DELAYED_WRITEBACK) and wake the worker. */
static void dl_queue_work(delayed_root *dr, task *t, int nr)
{
	if (dr->nworks == DL_MAX_WORKS)
		return;
	dr->works[(dr->work_head + dr->nworks) % DL_MAX_WORKS] = nr;
	dr->nworks++;
	dr->works_queued++;
	if (dr->worker_wq.len)
		waitq_wake_one(dr->sim, &dr->worker_wq, dl_now(dr, t) + C_WAKEUP_NS);
}

/*
 * btrfs_async_run_delayed_root, one node per step: join the transaction,
 * insert the oldest prepared node, end the handle. A work ends after nr
 * nodes (BTRFS_DELAYED_WRITEBACK for nr 0), when fewer than
 * BTRFS_DELAYED_BACKGROUND / 2 items are left, or when no node is.
 */
static int dl_worker_step(sim *s, task *t)
{
	delayed_root *dr = t->ctx;
	(void)s;
	if (dr->stop)
		return TASK_DONE;
	if (!dr->active) {
		if (!dr->nworks) {
			task_park(t, &dr->worker_wq);
			return TASK_BLOCKED;
		}
		dr->cur_nr = dr->works[dr->work_head];
		dr->work_head = (dr->work_head + 1) % DL_MAX_WORKS;
		dr->nworks--;
		dr->cur_done = 0;
		dr->active = 1;
		dr->works_run++;
	}
	if (dr->items < BTRFS_DELAYED_BACKGROUND / 2 || !dr->head) {
		dr->active = 0;
		return TASK_RUN;
	}
	if (dr->tm && !dr->wh_held) {
		int rc = trans_start(dr->tm, t, &dr->wh);
		if (rc == TRANS_WAIT)
			return TASK_BLOCKED;
		if (rc < 0)
			return TASK_DONE;
		dr->wh_held = 1;
	}
	dl_node *n = dr->head;
	int r = n ? dl_flush_node(dr, t, n, DLW_WORKER) : 0;
	if (dr->wh_held) {
		trans_end(&dr->wh, 0);
		dr->wh_held = 0;
	}
	if (r < 0)
		return TASK_DONE;
	dr->nodes_run++;
	dr->cur_done++;
	if (!((dr->cur_nr == 0 && dr->cur_done < BTRFS_DELAYED_WRITEBACK) ||
	      dr->cur_done < dr->cur_nr))
		dr->active = 0;
	return TASK_RUN;
}

/* The worker's step once its root is freed (the run ended with it parked
 * or queued): it exits. */
static int dl_worker_dead(sim *s, task *t)
{
	(void)s, (void)t;
	return TASK_DONE;
}

/* could_end_wait */
static int dl_could_end_wait(const delayed_root *dr, uint64_t seq)
{
	uint64_t val = dr->items_seq;
	return val < seq || val >= seq + BTRFS_DELAYED_BATCH ||
	       dr->items < BTRFS_DELAYED_BACKGROUND;
}

int dl_balance(delayed_root *dr, task *t, int *waiting, uint64_t *seq)
{
	if (!dr)
		return 0;
	if (*waiting) {
		if (dl_could_end_wait(dr, *seq)) {
			*waiting = 0;
			return 0;
		}
		task_park(t, &dr->bal_wq);
		return 1;
	}
	if (dr->items < BTRFS_DELAYED_BACKGROUND)
		return 0;
	if (dr->nworks > DL_WQ_CONGESTED) {
		dr->congested++;
		return 0;
	}
	if (dr->items >= BTRFS_DELAYED_WRITEBACK) {
		*seq = dr->items_seq;
		dl_queue_work(dr, t, 0);
		*waiting = 1;
		dr->balance_waits++;
		task_park(t, &dr->bal_wq);
		return 1;
	}
	dl_queue_work(dr, t, BTRFS_DELAYED_BATCH);
	return 0;
}

/* ------------------------------------------------------- life cycle */

/* trans_mgr.run_delayed_items: the commit runs every node in its task. */
static int dl_commit_run(void *ctx, task *t)
{
	return dl_run_all(ctx, t, DLW_COMMIT);
}

/* fs_hooks.on_inode_evict: btrfs_evict_inode drops the inode's delayed
 * items (btrfs_kill_delayed_inode_items); the truncation that follows
 * removes its items from the tree. A directory's queued dir index
 * changes are inserted first here, since the model's eviction does not
 * truncate a directory's DIR_INDEX items. */
static void dl_hook_evict(void *ctx, struct inode *in)
{
	delayed_root *dr = ctx;
	dl_node *n = in->delayed;
	if (n && (n->nins || n->ndel))
		dl_flush_node(dr, NULL, n, DLW_OTHER);
	dl_kill_inode(dr, in);
}

int dl_create(sim *s, fs_info *fs, trans_mgr *tm, delayed_root **out)
{
	if (!s || !fs || !out)
		return LAB_EINVAL;
	delayed_root *dr = lab_calloc(1, sizeof(*dr));
	if (!dr)
		return LAB_ENOMEM;
	dr->sim = s;
	dr->fs = fs;
	dr->tm = tm;
	lab_pool_init(&dr->node_pool, sizeof(dl_node), 256);
	lhist_init(&dr->worker_wait);
	fs_hooks h;
	memset(&h, 0, sizeof(h));
	h.ctx = dr;
	h.on_inode_evict = dl_hook_evict;
	int r = fs_hooks_register(fs, &h);
	if (r) {
		free(dr);
		return r;
	}
	dr->worker = task_spawn(s, "kworker/delayed-meta", dl_worker_step, dr, sim_now(s));
	if (!dr->worker) {
		free(dr);
		return LAB_ENOMEM;
	}
	if (tm) {
		tm->run_delayed_items = dl_commit_run;
		tm->delayed_ctx = dr;
	}
	fs->slot[FS_SLOT_DELAYED] = dr;
	*out = dr;
	return 0;
}

void dl_destroy(delayed_root *dr)
{
	if (!dr)
		return;
	if (dr->fs && dr->fs->slot[FS_SLOT_DELAYED] == dr)
		dr->fs->slot[FS_SLOT_DELAYED] = NULL;
	for (int i = 0; dr->fs && i < dr->fs->nhooks; i++)
		if (dr->fs->hooks[i].ctx == dr)
			dr->fs->hooks[i].on_inode_evict = NULL;
	if (dr->tm && dr->tm->delayed_ctx == dr) {
		dr->tm->run_delayed_items = NULL;
		dr->tm->delayed_ctx = NULL;
	}
	dl_node *n = dr->all;
	while (n) {
		dl_node *next = n->all_next;
		if (n->inode && n->inode->delayed == n)
			n->inode->delayed = NULL;
		free(n->ins);
		free(n->del);
		n = next;
	}
	lab_pool_destroy(&dr->node_pool);
	free(dr->batch);
	/* the worker task is the simulator's; it must not step again */
	if (dr->worker) {
		dr->worker->ctx = NULL;
		dr->worker->step = dl_worker_dead;
	}
	free(dr);
}

static void dl_json_ms(strbuf *sb, const char *k, uint64_t ns)
{
	js_knum(sb, k, (double)ns / 1e6);
}

void dl_details_json(const delayed_root *dr, strbuf *sb)
{
	js_obj(sb);
	js_kint(sb, "items", (int64_t)dr->items);
	js_kint(sb, "queued_ins", (int64_t)dr->queued_ins);
	js_kint(sb, "queued_del", (int64_t)dr->queued_del);
	js_kint(sb, "cancelled", (int64_t)dr->cancelled);
	js_kint(sb, "inode_updates", (int64_t)dr->inode_updates);
	js_kint(sb, "inserted", (int64_t)dr->inserted);
	js_kint(sb, "deleted", (int64_t)dr->deleted);
	js_kint(sb, "inodes_written", (int64_t)dr->inodes_written);
	js_kint(sb, "works_queued", (int64_t)dr->works_queued);
	js_kint(sb, "works_run", (int64_t)dr->works_run);
	js_kint(sb, "nodes_run", (int64_t)dr->nodes_run);
	js_kint(sb, "commit_runs", (int64_t)dr->commit_runs);
	js_kint(sb, "balance_waits", (int64_t)dr->balance_waits);
	js_kint(sb, "waits", (int64_t)dr->waits);
	js_kint(sb, "fsync_waits", (int64_t)dr->fsync_waits);
	dl_json_ms(sb, "wait_ms", dr->wait_ns);
	dl_json_ms(sb, "fsync_wait_ms", dr->fsync_wait_ns);
	dl_json_ms(sb, "fsync_wait_max_ms", dr->fsync_wait_max_ns);
	js_key(sb, "worker_wait");
	lhist_json(&dr->worker_wait, sb);
	js_obj_end(sb);
}
