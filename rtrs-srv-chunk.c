// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server chunk pool.
 *
 * A session owns queue_depth chunks, allocated once when the session is
 * created and freed with it.  Each path maps them for its device and gives
 * every chunk a memory region of its own, so that with always-invalidate a
 * chunk can be invalidated when a request arrives and re-keyed with its
 * response, shutting the client out while the server works on it.
 *
 * Since every path of a session uses the same chunks, a request owns its
 * chunk for the whole session from its arrival until it ends.  A request
 * for the chunk on another path meanwhile, which a client that failed the
 * first over sends, waits until the chunk is handed to it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/slab.h>

#include "rtrs-srv.h"

static unsigned int rtrs_srv_chunk_order(struct rtrs_srv_sess *sess)
{
	return get_order(sess->chunk_size);
}

static int rtrs_srv_alloc_owners(struct rtrs_srv_sess *sess)
{
	u32 i;

	sess->owners = rtrs_kcalloc(sess->queue_depth, sizeof(*sess->owners),
				    GFP_KERNEL);
	if (!sess->owners)
		return -ENOMEM;
	for (i = 0; i < sess->queue_depth; i++) {
		spin_lock_init(&sess->owners[i].lock);
		INIT_LIST_HEAD(&sess->owners[i].waiting);
	}
	return 0;
}

/**
 * rtrs_srv_alloc_chunks() - allocate the chunks of a session
 * @sess: session with @queue_depth and @chunk_size set
 *
 * Chunks come from the page allocator as one naturally aligned block
 * each, so that one memory region page of @chunk_size covers a chunk.
 * Their owners come with them.
 *
 * Return: 0 or -ENOMEM.
 */
static int rtrs_srv_alloc_chunks(struct rtrs_srv_sess *sess)
{
	u32 i;

	if (rtrs_srv_alloc_owners(sess))
		return -ENOMEM;
	sess->chunks = rtrs_kcalloc(sess->queue_depth, sizeof(*sess->chunks),
				    GFP_KERNEL);
	if (!sess->chunks)
		goto free_owners;

	for (i = 0; i < sess->queue_depth; i++) {
		/* One fault point for the chunks: the last, after the others. */
		sess->chunks[i] =
			rtrs_fail_last_or(i == sess->queue_depth - 1, NULL,
					  alloc_pages(GFP_KERNEL | __GFP_ZERO,
						      rtrs_srv_chunk_order(sess)));
		if (!sess->chunks[i])
			goto free;
	}
	return 0;

free:
	while (i--)
		__free_pages(sess->chunks[i], rtrs_srv_chunk_order(sess));
	kfree(sess->chunks);
	sess->chunks = NULL;
free_owners:
	kfree(sess->owners);
	sess->owners = NULL;
	return -ENOMEM;
}

/**
 * rtrs_srv_free_chunks() - free the chunks of a session
 * @sess: session whose paths are all gone; it may have no chunks
 */
void rtrs_srv_free_chunks(struct rtrs_srv_sess *sess)
{
	u32 i;

	if (!sess->chunks)
		return;
	for (i = 0; i < sess->queue_depth; i++)
		__free_pages(sess->chunks[i], rtrs_srv_chunk_order(sess));
	kfree(sess->chunks);
	kfree(sess->owners);
}

static void rtrs_srv_unmap_chunk(struct rtrs_srv_path *path,
				 struct rtrs_srv_chunk *chunk)
{
	ib_dereg_mr(chunk->mr);
	ib_dma_unmap_sg(path->s.dev->ib_dev, &chunk->sg, 1,
			DMA_BIDIRECTIONAL);
}

static int rtrs_srv_map_chunk(struct rtrs_srv_path *path, u32 id)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_chunk *chunk = &path->chunks[id];
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	int err, nr;

	sg_init_table(&chunk->sg, 1);
	sg_set_page(&chunk->sg, sess->chunks[id], sess->chunk_size, 0);
	if (ib_dma_map_sg(ib_dev, &chunk->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -ENOMEM;

	chunk->mr = ib_alloc_mr(path->s.dev->ib_pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(chunk->mr)) {
		err = PTR_ERR(chunk->mr);
		goto unmap;
	}
	nr = ib_map_mr_sg(chunk->mr, &chunk->sg, 1, NULL, sess->chunk_size);
	if (nr != 1) {
		err = nr < 0 ? nr : -EINVAL;
		goto dereg;
	}
	/* The key the INFO_RSP announces and its REG_MR registers. */
	ib_update_fast_reg_key(chunk->mr, ib_inc_rkey(chunk->mr->rkey));
	return 0;

dereg:
	ib_dereg_mr(chunk->mr);
unmap:
	ib_dma_unmap_sg(ib_dev, &chunk->sg, 1, DMA_BIDIRECTIONAL);
	return err;
}

/**
 * rtrs_srv_map_chunks() - map the session's chunks for a path's device
 * @path: path with &rtrs_path.dev set
 *
 * Return: 0 or a negative errno; on error nothing stays mapped.
 */
static int rtrs_srv_map_chunks(struct rtrs_srv_path *path)
{
	u32 depth = path->sess->queue_depth;
	u32 i;
	int err;

	path->chunks = rtrs_kcalloc(depth, sizeof(*path->chunks), GFP_KERNEL);
	if (!path->chunks)
		return -ENOMEM;

	for (i = 0; i < depth; i++) {
		/* One fault point for the mappings: the last, after the others. */
		err = rtrs_fail_last_or(i == depth - 1, -ENOMEM,
					rtrs_srv_map_chunk(path, i));
		if (err)
			goto unmap;
	}
	path->off_bits = rtrs_imm_off_bits(depth);
	return 0;

unmap:
	while (i--)
		rtrs_srv_unmap_chunk(path, &path->chunks[i]);
	kfree(path->chunks);
	path->chunks = NULL;
	return err;
}

/**
 * rtrs_srv_path_chunks() - the chunks of a path, on its INFO_REQ
 * @path: path whose client sent a valid INFO_REQ with every connection up
 *
 * The first INFO_REQ of a session allocates its chunks, and each path's
 * own maps them for its device: a client that never completes a path
 * costs the server no chunk memory, however many it starts.
 *
 * Return: 0 or a negative errno.
 */
int rtrs_srv_path_chunks(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	int err = 0;

	mutex_lock(&sess->paths_mutex);
	if (!sess->chunks)
		err = rtrs_srv_alloc_chunks(sess);
	mutex_unlock(&sess->paths_mutex);
	return err ?: rtrs_srv_map_chunks(path);
}

/**
 * rtrs_srv_unmap_chunks() - undo rtrs_srv_map_chunks()
 * @path: path whose queue pairs are destroyed; its chunks may be unmapped
 */
void rtrs_srv_unmap_chunks(struct rtrs_srv_path *path)
{
	u32 i;

	if (!path->chunks)
		return;
	for (i = 0; i < path->sess->queue_depth; i++)
		rtrs_srv_unmap_chunk(path, &path->chunks[i]);
	kfree(path->chunks);
	path->chunks = NULL;
}

/**
 * rtrs_srv_reg_chunks_wrs() - REG_MR work requests of every chunk
 * @path: mapped path
 * @cqe: completion entry of the (unsignaled) work requests
 *
 * Chained in chunk order, the last one's next left NULL for the caller.
 *
 * Return: the array (kfree() it after posting), or NULL.
 */
struct ib_reg_wr *rtrs_srv_reg_chunks_wrs(struct rtrs_srv_path *path,
					  struct ib_cqe *cqe)
{
	u32 depth = path->sess->queue_depth;
	struct ib_reg_wr *wrs;
	u32 i;

	wrs = rtrs_kcalloc(depth, sizeof(*wrs), GFP_KERNEL);
	if (!wrs)
		return NULL;

	for (i = 0; i < depth; i++) {
		struct ib_mr *mr = path->chunks[i].mr;

		wrs[i].wr.next = i + 1 < depth ? &wrs[i + 1].wr : NULL;
		wrs[i].wr.opcode = IB_WR_REG_MR;
		wrs[i].wr.wr_cqe = cqe;
		wrs[i].mr = mr;
		wrs[i].key = mr->rkey;
		wrs[i].access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	}
	return wrs;
}

/**
 * rtrs_srv_fill_chunk_descs() - the INFO_RSP descriptors of a path
 * @path: mapped path
 * @desc: queue_depth entries to fill, one memory region per chunk
 */
void rtrs_srv_fill_chunk_descs(struct rtrs_srv_path *path,
			       struct rtrs_sg_desc *desc)
{
	u32 i;

	for (i = 0; i < path->sess->queue_depth; i++) {
		struct ib_mr *mr = path->chunks[i].mr;

		desc[i].addr = cpu_to_le64(mr->iova);
		desc[i].key = cpu_to_le32(mr->rkey);
		desc[i].len = cpu_to_le32(mr->length);
	}
}

/**
 * rtrs_srv_chunk_take() - a request arrived: take its chunk, or wait
 * @sess: the session
 * @op: the request, with &rtrs_srv_op.busy set by its path
 *
 * A chunk no request owns becomes @op's.  One that a request of another
 * path owns is not touched: @op waits for it, and is handed the chunk
 * when that request ends (rtrs_srv_chunk_give_up() queues
 * &rtrs_srv_op.run_work then).
 *
 * Context: any context.
 * Return: true when @op owns the chunk and may run now; false when it
 * waits.
 */
bool rtrs_srv_chunk_take(struct rtrs_srv_sess *sess, struct rtrs_srv_op *op)
{
	struct rtrs_srv_chunk_owner *co = &sess->owners[op->msg_id];
	unsigned long flags;
	bool taken;

	spin_lock_irqsave(&co->lock, flags);
	taken = !co->owner;
	if (taken)
		co->owner = op;
	else
		list_add_tail(&op->chunk_entry, &co->waiting);
	spin_unlock_irqrestore(&co->lock, flags);
	return taken;
}

/**
 * rtrs_srv_chunk_give_up() - a request ended: pass its chunk on
 * @sess: the session
 * @op: the request
 *
 * When @op owns its chunk, the chunk goes to the first request waiting
 * for it, whose &rtrs_srv_op.run_work is queued to run it, or becomes
 * free.  A request that does not own its chunk gives up nothing.  The
 * work is queued under the chunk's lock, so that rtrs_srv_chunk_unwait()
 * followed by cancel_work_sync() finds a request either waiting or
 * queued.
 *
 * Context: any context.
 */
void rtrs_srv_chunk_give_up(struct rtrs_srv_sess *sess,
			    struct rtrs_srv_op *op)
{
	struct rtrs_srv_chunk_owner *co;
	struct rtrs_srv_op *next;
	unsigned long flags;

	if (!sess->owners)
		return;
	co = &sess->owners[op->msg_id];
	spin_lock_irqsave(&co->lock, flags);
	if (co->owner == op) {
		next = list_first_entry_or_null(&co->waiting,
						struct rtrs_srv_op,
						chunk_entry);
		if (next) {
			list_del_init(&next->chunk_entry);
			queue_work(rtrs_srv_wq, &next->run_work);
		}
		co->owner = next;
	}
	spin_unlock_irqrestore(&co->lock, flags);
}

/**
 * rtrs_srv_chunk_unwait() - stop a request waiting for its chunk
 * @sess: the session
 * @op: a request of a closing path
 *
 * Context: any context.
 * Return: true when @op was waiting; it owns nothing then, and never
 * will.
 */
bool rtrs_srv_chunk_unwait(struct rtrs_srv_sess *sess, struct rtrs_srv_op *op)
{
	struct rtrs_srv_chunk_owner *co;
	unsigned long flags;
	bool waited;

	if (!sess->owners)
		return false;
	co = &sess->owners[op->msg_id];
	spin_lock_irqsave(&co->lock, flags);
	waited = !list_empty(&op->chunk_entry);
	if (waited)
		list_del_init(&op->chunk_entry);
	spin_unlock_irqrestore(&co->lock, flags);
	return waited;
}
