// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server IO path.
 *
 * A client request is an RDMA WRITE WITH IMMEDIATE into a chunk: data,
 * user message and READ or WRITE header, the immediate saying which chunk
 * and where in it the header sits.  With always-invalidate the chunk's
 * memory region is invalidated first, so the client cannot touch the chunk
 * while we work on it.  We copy and check the header, hand the request to
 * the user, and respond to it when the user calls rtrs_srv_resp_rdma(): for
 * a READ the data goes to the client's buffer by RDMA WRITE first; the
 * response itself is an immediate (message id and errno), carried by a SEND
 * with the chunk's new rkey when chunks are re-keyed.
 *
 * A session's paths share its chunks: a request owns its chunk for the
 * whole session until it ends, and one for the chunk on another path
 * meanwhile waits to be handed it (rtrs-srv-chunk.c), then runs from a
 * work item.
 *
 * Nothing here takes a lock that all CPUs share: requests are counted with
 * a per-CPU reference, chunks have a lock each, responses waiting for send
 * queue room queue on their connection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/fault-inject.h>
#include <linux/kernel.h>
#include <linux/slab.h>

#include "rtrs-srv.h"
#include "trace/srv.h"

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * A send queue that runs out of room for responses is rare: its size fits
 * the session's queue depth.  The fault attribute fail_rtrs_srv_room
 * (debugfs) makes it happen on purpose, so that the responses waiting for
 * room, and their posting when room comes back, can be tested.
 */
static DECLARE_FAULT_ATTR(rtrs_srv_room_attr);
static struct dentry *rtrs_srv_room_dir;

/* Should the send queue look full to a response? */
static bool rtrs_srv_room_fault(void)
{
	return should_fail(&rtrs_srv_room_attr, 1);
}

/**
 * rtrs_srv_io_fault_init() - create the debugfs fault attribute of
 *	responses
 *
 * Context: module init.
 */
void rtrs_srv_io_fault_init(void)
{
	rtrs_srv_room_dir = fault_create_debugfs_attr("fail_rtrs_srv_room",
						      NULL,
						      &rtrs_srv_room_attr);
}

/**
 * rtrs_srv_io_fault_exit() - remove it
 *
 * Context: module exit.
 */
void rtrs_srv_io_fault_exit(void)
{
	debugfs_remove_recursive(rtrs_srv_room_dir);
}
#else
static bool rtrs_srv_room_fault(void)
{
	return false;
}
#endif

/* The work requests of one response, built on the stack. */
struct rtrs_srv_rsp_wrs {
	struct ib_rdma_wr	data;
	struct ib_send_wr	reg_inv;
	struct ib_reg_wr	reg;
	struct ib_send_wr	inval;
	struct ib_rdma_wr	rsp;
	struct ib_sge		data_sge;
	struct ib_sge		rkey_sge;
};

static void rtrs_srv_run_handed(struct work_struct *work);

static void rtrs_srv_ops_release(struct percpu_ref *ref)
{
	struct rtrs_srv_path *path = container_of(ref, struct rtrs_srv_path,
						  ops_ref);

	complete(&path->ops_done);
}

static int rtrs_srv_alloc_rkey_msgs(struct rtrs_srv_path *path)
{
	size_t size = path->sess->queue_depth * sizeof(*path->rkey_msgs);
	struct ib_device *ib_dev = path->s.dev->ib_dev;

	path->rkey_msgs = rtrs_kzalloc(size, GFP_KERNEL);
	if (!path->rkey_msgs)
		return -ENOMEM;
	path->rkey_dma = ib_dma_map_single(ib_dev, path->rkey_msgs, size,
					   DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, path->rkey_dma)) {
		kfree(path->rkey_msgs);
		path->rkey_msgs = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* 2.1: one response message per request handle, sent by SEND. */
static int rtrs_srv_alloc_rsp_msgs(struct rtrs_srv_path *path)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	size_t size = path->sess->queue_depth * sizeof(*path->rsp_msgs);

	path->rsp_msgs = rtrs_kzalloc(size, GFP_KERNEL);
	if (!path->rsp_msgs)
		return -ENOMEM;
	path->rsp_dma = ib_dma_map_single(ib_dev, path->rsp_msgs, size,
					  DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, path->rsp_dma)) {
		kfree(path->rsp_msgs);
		path->rsp_msgs = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void rtrs_srv_free_rsp_msgs(struct rtrs_srv_path *path)
{
	size_t size = path->sess->queue_depth * sizeof(*path->rsp_msgs);

	if (!path->rsp_msgs)
		return;
	ib_dma_unmap_single(path->s.dev->ib_dev, path->rsp_dma, size,
			    DMA_TO_DEVICE);
	kfree(path->rsp_msgs);
}

static void rtrs_srv_free_rkey_msgs(struct rtrs_srv_path *path)
{
	size_t size = path->sess->queue_depth * sizeof(*path->rkey_msgs);

	if (!path->rkey_msgs)
		return;
	ib_dma_unmap_single(path->s.dev->ib_dev, path->rkey_dma, size,
			    DMA_TO_DEVICE);
	kfree(path->rkey_msgs);
}

/**
 * rtrs_srv_alloc_ops() - request handles and response buffers of a path
 * @path: path with its chunks mapped
 *
 * Return: 0 or a negative errno; on error nothing stays allocated.
 */
int rtrs_srv_alloc_ops(struct rtrs_srv_path *path)
{
	u32 i, depth = path->sess->queue_depth;
	int err = -ENOMEM;

	path->ops = rtrs_kcalloc(depth, sizeof(*path->ops), GFP_KERNEL);
	if (!path->ops)
		return -ENOMEM;
	for (i = 0; i < depth; i++) {
		path->ops[i].msg_id = i;
		INIT_LIST_HEAD(&path->ops[i].wait_entry);
		INIT_LIST_HEAD(&path->ops[i].chunk_entry);
		INIT_WORK(&path->ops[i].run_work, rtrs_srv_run_handed);
	}

	if (path->always_invalidate) {
		err = rtrs_srv_alloc_rkey_msgs(path);
		if (err)
			goto free_ops;
	}
	if (rtrs_srv_sess_2_1(path->sess)) {
		err = rtrs_srv_alloc_rsp_msgs(path);
		if (err)
			goto free_rkey_msgs;
	}

	init_completion(&path->ops_done);
	err = rtrs_fail_or(-ENOMEM,
			   percpu_ref_init(&path->ops_ref, rtrs_srv_ops_release,
					   0, GFP_KERNEL));
	if (err)
		goto free_rkey_msgs;
	return 0;

free_rkey_msgs:
	rtrs_srv_free_rsp_msgs(path);
	rtrs_srv_free_rkey_msgs(path);
free_ops:
	kfree(path->ops);
	path->ops = NULL;
	return err;
}

/**
 * rtrs_srv_free_ops() - undo rtrs_srv_alloc_ops()
 * @path: path whose requests all have their response or are dropped
 */
void rtrs_srv_free_ops(struct rtrs_srv_path *path)
{
	percpu_ref_exit(&path->ops_ref);
	rtrs_srv_free_rsp_msgs(path);
	rtrs_srv_free_rkey_msgs(path);
	kfree(path->ops);
	path->ops = NULL;
}

/**
 * rtrs_srv_wc_ok() - check a completion's status
 * @path: path of the connection the work request was on
 * @wc: the completion
 * @what: what failed, for the log
 *
 * A failed work request fails the path.  Any failure on a path already
 * closing is quiet: the close has given its reason.  So are flushes, but
 * for one on a connected path: nothing of ours moved its QP to the error
 * state, the device did, with no completion to say why, and the flush is
 * the only sign of it.
 *
 * Return: true when @wc succeeded.
 */
bool rtrs_srv_wc_ok(struct rtrs_srv_path *path, struct ib_wc *wc,
		    const char *what)
{
	enum rtrs_srv_state state;

	if (likely(wc->status == IB_WC_SUCCESS))
		return true;
	trace_rtrs_srv_con_error(path, what, wc->status);
	state = rtrs_srv_path_state(path);
	if (wc->status == IB_WC_WR_FLUSH_ERR && state == RTRS_SRV_CONNECTED)
		pr_err_ratelimited("%s: %s flushed while connected: its QP failed with no completion saying why\n",
				   path->s.sessname, what);
	else if (wc->status != IB_WC_WR_FLUSH_ERR && state < RTRS_SRV_CLOSING)
		pr_err_ratelimited("%s: %s failed: %s\n", path->s.sessname,
				   what, ib_wc_status_msg(wc->status));
	rtrs_srv_close_path(path);
	return false;
}

static void rtrs_srv_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con,
						write_cqe);

	rtrs_srv_wc_ok(con_to_path(con), wc, "RDMA WRITE of READ data");
}

static void rtrs_srv_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con, reg_cqe);

	rtrs_srv_wc_ok(con_to_path(con), wc, "REG_MR of a chunk");
}

static void rtrs_srv_inval_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con,
						inval_cqe);

	rtrs_srv_wc_ok(con_to_path(con), wc, "SEND WITH INVALIDATE");
}

/*
 * Room for one response in the send queue.  The fault point says "no room"
 * only while a signaled response or flush is in flight, whose completion
 * gives room back and posts the responses that wait, as when the queue is
 * full for real.
 */
static bool rtrs_srv_sq_get(struct rtrs_srv_con *con)
{
	if (IS_ENABLED(CONFIG_FAULT_INJECTION_DEBUG_FS) &&
	    atomic_read(&con->rsp_inflight) && rtrs_srv_room_fault())
		return false;
	if (atomic_sub_return(RTRS_SRV_RSP_WRS, &con->c.sq_wr_avail) >= 0)
		return true;
	atomic_add(RTRS_SRV_RSP_WRS, &con->c.sq_wr_avail);
	return false;
}

static void rtrs_srv_sq_put(struct rtrs_srv_con *con)
{
	atomic_add(RTRS_SRV_RSP_WRS, &con->c.sq_wr_avail);
}

/**
 * rtrs_srv_op_end() - a request is over, 2.0 or 2.1
 * @path: its path
 * @op: the request: responded to, or dropped without a response
 *
 * Its chunk goes on to a request of another path that waits for it, and
 * @op is free for the next request of its own path.  In that order: the
 * next request on @path, which may follow as soon as @op's response is
 * posted, must not find the chunk still taken by @op.
 *
 * Context: any context.
 */
void rtrs_srv_op_end(struct rtrs_srv_path *path, struct rtrs_srv_op *op)
{
	if (op->type) {
		rtrs_srv_op_end_2_1(path, op);
		return;
	}
	rtrs_srv_chunk_give_up(path->sess, op);
	clear_bit_unlock(0, &op->busy);
}

/* 2.1: the request's receive buffer goes back to the shared queue. */
static void rtrs_srv_give_rbuf(struct rtrs_srv_path *path,
			       struct rtrs_srv_op *op)
{
	int err;

	if (!op->rbuf)
		return;
	err = rtrs_srv_srq_post(op->rbuf);
	/* The queue is one buffer short from now on. */
	if (err)
		pr_err_ratelimited("%s: posting a shared receive failed: %d\n",
				   path->s.sessname, err);
	op->rbuf = NULL;
}

/**
 * rtrs_srv_op_release_2_1() - give back what a 2.1 request holds
 * @path: its path
 * @op: the request; its user is done with its user message and data
 *
 * Its receive buffer goes back to the shared queue, and its data buffer,
 * if it has one, to the pool.
 *
 * Context: any context.
 */
void rtrs_srv_op_release_2_1(struct rtrs_srv_path *path,
			     struct rtrs_srv_op *op)
{
	rtrs_srv_give_rbuf(path, op);
	if (op->pool_req.block)
		rtrs_srv_pool_put(&op->pool_req);
}

/**
 * rtrs_srv_op_end_2_1() - a 2.1 request is over
 * @path: its path
 * @op: the request, not retiring: responded to, or dropped
 *
 * Context: any context.
 */
void rtrs_srv_op_end_2_1(struct rtrs_srv_path *path, struct rtrs_srv_op *op)
{
	rtrs_srv_op_release_2_1(path, op);
	clear_bit_unlock(0, &op->busy);
}

/* The request is finished without a response (path down). */
static void rtrs_srv_op_drop(struct rtrs_srv_path *path,
			     struct rtrs_srv_op *op)
{
	rtrs_srv_op_end(path, op);
	percpu_ref_put(&path->ops_ref);
}

static void rtrs_srv_chain(struct ib_send_wr ***tail, struct ib_send_wr *wr)
{
	**tail = wr;
	*tail = &wr->next;
}

static void rtrs_srv_add_data_wr(struct rtrs_srv_con *con,
				 struct rtrs_srv_op *op,
				 struct rtrs_srv_rsp_wrs *w,
				 struct ib_send_wr ***tail)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_chunk *chunk = &path->chunks[op->msg_id];

	w->data_sge.addr = sg_dma_address(&chunk->sg);
	w->data_sge.length = le32_to_cpu(op->desc.len);
	w->data_sge.lkey = path->s.dev->ib_pd->local_dma_lkey;
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, w->data_sge.addr,
				      w->data_sge.length, DMA_BIDIRECTIONAL);

	w->data.wr.opcode = IB_WR_RDMA_WRITE;
	w->data.wr.wr_cqe = &con->write_cqe;
	w->data.wr.sg_list = &w->data_sge;
	w->data.wr.num_sge = 1;
	w->data.remote_addr = le64_to_cpu(op->desc.addr);
	w->data.rkey = le32_to_cpu(op->desc.key);
	rtrs_srv_chain(tail, &w->data.wr);
}

/*
 * Re-key the chunk and tell the client the new key with the response.
 * Where local operations may run twice, the key stays and a LOCAL_INV of
 * it goes first (see rtrs_replays_local_ops()).
 */
static void rtrs_srv_add_reg_wr(struct rtrs_srv_con *con,
				struct rtrs_srv_op *op,
				struct rtrs_srv_rsp_wrs *w,
				struct ib_send_wr ***tail)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct ib_mr *mr = path->chunks[op->msg_id].mr;
	struct rtrs_msg_rkey_rsp *msg = &path->rkey_msgs[op->msg_id];
	dma_addr_t dma = path->rkey_dma + op->msg_id * sizeof(*msg);

	if (rtrs_replays_local_ops(path->s.dev->ib_dev)) {
		w->reg_inv.opcode = IB_WR_LOCAL_INV;
		w->reg_inv.wr_cqe = &con->reg_cqe;
		w->reg_inv.ex.invalidate_rkey = mr->rkey;
		rtrs_srv_chain(tail, &w->reg_inv);
	} else {
		ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	}
	w->reg.wr.opcode = IB_WR_REG_MR;
	w->reg.wr.wr_cqe = &con->reg_cqe;
	w->reg.mr = mr;
	w->reg.key = mr->rkey;
	w->reg.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	rtrs_srv_chain(tail, &w->reg.wr);

	msg->type = cpu_to_le16(RTRS_MSG_RKEY_RSP);
	msg->buf_id = cpu_to_le16(op->msg_id);
	msg->rkey = cpu_to_le32(mr->rkey);
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, dma, sizeof(*msg),
				      DMA_TO_DEVICE);
	w->rkey_sge.addr = dma;
	w->rkey_sge.length = sizeof(*msg);
	w->rkey_sge.lkey = path->s.dev->ib_pd->local_dma_lkey;
}

static void rtrs_srv_add_inval_wr(struct rtrs_srv_con *con,
				  struct rtrs_srv_op *op,
				  struct rtrs_srv_rsp_wrs *w,
				  struct ib_send_wr ***tail)
{
	w->inval.opcode = IB_WR_SEND_WITH_INV;
	w->inval.wr_cqe = &con->inval_cqe;
	w->inval.ex.invalidate_rkey = le32_to_cpu(op->desc.key);
	rtrs_srv_chain(tail, &w->inval);
}

static void rtrs_srv_add_rsp_wr(struct rtrs_srv_con *con,
				struct rtrs_srv_op *op, int status,
				struct rtrs_srv_rsp_wrs *w,
				struct ib_send_wr ***tail)
{
	struct rtrs_srv_path *path = con_to_path(con);
	u32 imm = rtrs_io_rsp_imm(op->msg_id, status, op->need_inval);

	w->rsp.wr.wr_cqe = &con->rsp_cqe;
	w->rsp.wr.ex.imm_data = cpu_to_be32(imm);
	if (path->always_invalidate) {
		w->rsp.wr.opcode = IB_WR_SEND_WITH_IMM;
		w->rsp.wr.sg_list = &w->rkey_sge;
		w->rsp.wr.num_sge = 1;
	} else {
		w->rsp.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	}
	rtrs_srv_chain(tail, &w->rsp.wr);
}

/**
 * rtrs_srv_stop_responses() - post no more responses on a connection
 * @con: connection of a closing path, about to be drained
 *
 * A response that saw its path connected is either posted before this
 * returns, and so before the drain, or not at all: the check and the post
 * are made under @con->rsp_post_lock, and a post after the drain would
 * complete after it, into a connection being freed.
 *
 * Context: process context.
 */
void rtrs_srv_stop_responses(struct rtrs_srv_con *con)
{
	spin_lock_irq(&con->rsp_post_lock);
	con->rsp_stopped = true;
	spin_unlock_irq(&con->rsp_post_lock);
}

/*
 * Post @first, the work requests of the response of @op ending in @rsp,
 * signaling one response in @con->rsp_batch.  An RC send queue completes
 * in order and the lock keeps the posts in the order they are counted, so
 * the signaled response's completion stands for the rsp_batch responses up
 * to it.
 *
 * The chunk is the client's again once its response is posted, and its
 * next request may follow at once: @op is released right after the post,
 * not before, so that request cannot race the response for the chunk.
 * It can reach us before the release all the same (the device may send
 * from another CPU), and then waits for the lock held here until the
 * release is done (rtrs_srv_op_take()).
 *
 * A retiring 2.1 request (@end false) is left alone once posted: the
 * completion of its data ends it, and may already have.  A response that
 * comes signaled (a READ_BUF's RDMA WRITE WITH IMMEDIATE of data) is not
 * in the batch: its own completion counts it done.
 *
 * Return: 0, -ESHUTDOWN when the connection no longer takes responses, or
 * the error of the post; @op is not released then.
 */
static int rtrs_srv_post_rsp_wrs(struct rtrs_srv_con *con,
				 struct rtrs_srv_op *op,
				 struct ib_send_wr *first,
				 struct ib_send_wr *rsp, bool end)
{
	bool own = rsp->send_flags & IB_SEND_SIGNALED, signal = false;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&con->rsp_post_lock, flags);
	if (con->rsp_stopped) {
		spin_unlock_irqrestore(&con->rsp_post_lock, flags);
		return -ESHUTDOWN;
	}
	if (!own) {
		signal = ++con->rsp_unsig == con->rsp_batch;
		if (signal) {
			rsp->send_flags |= IB_SEND_SIGNALED;
			con->rsp_unsig = 0;
		}
	}
	if ((own || signal) && atomic_inc_return(&con->rsp_inflight) == 1)
		WRITE_ONCE(con->rsp_stamp, jiffies);
	err = ib_post_send(con->c.qp, first, NULL);
	if (!err) {
		con->rsp_posts++;
		if (end)
			rtrs_srv_op_end(con_to_path(con), op);
	} else if (own) {
		atomic_dec(&con->rsp_inflight);
	} else if (signal) {
		atomic_dec(&con->rsp_inflight);
		con->rsp_unsig = con->rsp_batch - 1;
	} else {
		con->rsp_unsig--;
	}
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	return err;
}

/*
 * 2.1: map a READ's data buffer for the work request that sends it, whose
 * completion (&rtrs_srv_op.data_cqe) unmaps it.
 */
static int rtrs_srv_map_data_2_1(struct rtrs_srv_con *con,
				 struct rtrs_srv_op *op, struct ib_sge *sge)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 len = le32_to_cpu(op->desc.len);

	op->data_dma = ib_dma_map_single(ib_dev, op->pool_req.buf, len,
					 DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, op->data_dma))
		return -ENOMEM;
	sge->addr = op->data_dma;
	sge->length = len;
	sge->lkey = path->s.dev->ib_pd->local_dma_lkey;
	return 0;
}

/* 2.1: a READ_REQ's data, mapped, by RDMA WRITE into the client's MR. */
static void rtrs_srv_add_data_wr_2_1(struct rtrs_srv_op *op,
				     struct rtrs_srv_rsp_wrs *w,
				     struct ib_send_wr ***tail)
{
	w->data.wr.opcode = IB_WR_RDMA_WRITE;
	w->data.wr.wr_cqe = &op->data_cqe;
	w->data.wr.send_flags = IB_SEND_SIGNALED;
	w->data.wr.sg_list = &w->data_sge;
	w->data.wr.num_sge = 1;
	w->data.remote_addr = le64_to_cpu(op->desc.addr);
	w->data.rkey = le32_to_cpu(op->desc.key);
	rtrs_srv_chain(tail, &w->data.wr);
}

/*
 * 2.1: the response to a READ_BUF, one RDMA WRITE WITH IMMEDIATE into the
 * client's read buffer: of the data (@data, mapped), or of nothing, and
 * the response as the immediate.  With data it is signaled on
 * &rtrs_srv_op.data_cqe, whose completion gives the data buffer back and
 * counts the response done (rtrs_srv_read_buf_sent()); without, it goes
 * in the batch of responses like a SEND.
 */
static void rtrs_srv_add_read_buf_wr(struct rtrs_srv_con *con,
				     struct rtrs_srv_op *op, int status,
				     bool data, struct rtrs_srv_rsp_wrs *w,
				     struct ib_send_wr ***tail)
{
	w->rsp.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	/* A tag's low bits go with the slot, as many as fit (rtrs_msg_id()). */
	w->rsp.wr.ex.imm_data =
		cpu_to_be32(rtrs_io_rsp_imm(rtrs_msg_id(op->msg_id, op->tag),
					    status, false));
	w->rsp.remote_addr = le64_to_cpu(op->desc.addr);
	w->rsp.rkey = le32_to_cpu(op->desc.key);
	if (data) {
		w->rsp.wr.wr_cqe = &op->data_cqe;
		w->rsp.wr.send_flags = IB_SEND_SIGNALED;
		w->rsp.wr.sg_list = &w->data_sge;
		w->rsp.wr.num_sge = 1;
	} else {
		w->rsp.wr.wr_cqe = &con->rsp_cqe;
	}
	rtrs_srv_chain(tail, &w->rsp.wr);
}

/*
 * 2.1: the response message, sent as a SEND, WITH INVALIDATE of the
 * client's memory region when the request named one.
 */
static void rtrs_srv_add_rsp_wr_2_1(struct rtrs_srv_con *con,
				    struct rtrs_srv_op *op, int status,
				    struct rtrs_srv_rsp_wrs *w,
				    struct ib_send_wr ***tail)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_msg_io_rsp *msg = &path->rsp_msgs[op->msg_id];
	dma_addr_t dma = path->rsp_dma + op->msg_id * sizeof(*msg);

	msg->type = cpu_to_le16(RTRS_MSG_IO_RSP);
	msg->errno = cpu_to_le16((u16)status);
	msg->msg_id = cpu_to_le32(rtrs_msg_id(op->msg_id, op->tag));
	w->rkey_sge.length = sizeof(*msg);
	if (con->c.max_inline >= sizeof(*msg)) {
		/* Copied at the post: the slot's next response may reuse @msg. */
		w->rkey_sge.addr = (uintptr_t)msg;
		w->rsp.wr.send_flags = IB_SEND_INLINE;
	} else {
		ib_dma_sync_single_for_device(path->s.dev->ib_dev, dma,
					      sizeof(*msg), DMA_TO_DEVICE);
		w->rkey_sge.addr = dma;
		w->rkey_sge.lkey = path->s.dev->ib_pd->local_dma_lkey;
	}
	w->rsp.wr.wr_cqe = &con->rsp_cqe;
	w->rsp.wr.sg_list = &w->rkey_sge;
	w->rsp.wr.num_sge = 1;
	if (op->need_inval) {
		w->rsp.wr.opcode = IB_WR_SEND_WITH_INV;
		w->rsp.wr.ex.invalidate_rkey = le32_to_cpu(op->desc.key);
	} else {
		w->rsp.wr.opcode = IB_WR_SEND;
	}
	rtrs_srv_chain(tail, &w->rsp.wr);
}

/*
 * 2.1: post the buffer of packed responses being filled, unless every
 * other buffer is posted: the next completion posts it then.  Signaled:
 * its completion gives its responses' send queue room back and posts what
 * was packed meanwhile.  Under @con->rsp_post_lock, with responses in the
 * buffer.
 */
static int rtrs_srv_post_pack(struct rtrs_srv_con *con)
{
	struct rtrs_srv_path *path = con_to_path(con);
	u32 slot = con->pack_fill;
	struct ib_sge sge = {
		.addr	= con->packs_dma + slot * sizeof(*con->packs),
		.length	= con->pack_n * sizeof(struct rtrs_msg_io_rsp),
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &con->pack_cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};
	int err;

	if (con->pack_sent == RTRS_SRV_PACKS - 1)
		return 0;
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, sge.addr,
				      sge.length, DMA_TO_DEVICE);
	if (atomic_inc_return(&con->rsp_inflight) == 1)
		WRITE_ONCE(con->rsp_stamp, jiffies);
	err = ib_post_send(con->c.qp, &wr, NULL);
	if (err) {
		atomic_dec(&con->rsp_inflight);
		return err;
	}
	con->pack_len[slot] = con->pack_n;
	con->pack_sent++;
	con->pack_fill = (slot + 1) % RTRS_SRV_PACKS;
	con->pack_n = 0;
	return 0;
}

/*
 * 2.1: pack the response of @op, which has released what it held, with
 * others into one SEND, and end @op.  The pack leaves at once when no
 * other is in flight, or when it is full; else it leaves when the pack
 * in flight completes (rtrs_srv_pack_done()).  So a response waits to be
 * packed only for the completion of a pack already sent, never for a
 * request to come, and at queue depth 1 every response leaves at once,
 * a pack of one.
 *
 * Whether other requests are on their way is not what decides: a user
 * that responds from its request's own completion, as a fast disk does,
 * answers each request before the next one of the same poll of the
 * completion queue is even seen, and would never pack at any depth.
 *
 * Return: 0 when packed (and @op ended); -ENOSPC to send it alone, every
 * buffer being taken; -ESHUTDOWN when the connection takes no more
 * responses; or the error of the post, @op ended.
 */
static int rtrs_srv_pack_rsp(struct rtrs_srv_con *con, struct rtrs_srv_op *op,
			     int status)
{
	struct rtrs_msg_io_rsp *msg;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&con->rsp_post_lock, flags);
	if (con->rsp_stopped || con->pack_n == RTRS_IO_RSP_PACK_MAX) {
		err = con->rsp_stopped ? -ESHUTDOWN : -ENOSPC;
		spin_unlock_irqrestore(&con->rsp_post_lock, flags);
		return err;
	}
	msg = &con->packs[con->pack_fill].rsp[con->pack_n++];
	msg->type = cpu_to_le16(RTRS_MSG_IO_RSP);
	msg->errno = cpu_to_le16((u16)status);
	msg->msg_id = cpu_to_le32(rtrs_msg_id(op->msg_id, op->tag));
	/* Its response cannot reach the client before the post. */
	rtrs_srv_op_end(con_to_path(con), op);
	if (!con->pack_sent || con->pack_n == RTRS_IO_RSP_PACK_MAX)
		err = rtrs_srv_post_pack(con);
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	return err;
}

/*
 * 2.1: can the response of @op be packed with others?  Where the client
 * takes packs, a SEND that invalidates nothing: no data goes before it,
 * no memory region is invalidated by it, and it is not a READ_BUF's.
 */
static bool rtrs_srv_packable(struct rtrs_srv_con *con,
			      struct rtrs_srv_op *op, bool data)
{
	return con->packs && !data && !op->need_inval &&
	       op->type != RTRS_MSG_READ_BUF;
}

/*
 * 2.1: the response of @op, for which the caller took send queue room.
 * Its receive buffer goes back first, and its data buffer unless a READ's
 * data goes out of it: the request then retires (see rtrs-srv-recv.c)
 * until that data's completion, which may come before the post returns.
 */
static void rtrs_srv_post_rsp_2_1(struct rtrs_srv_con *con,
				  struct rtrs_srv_op *op, int status)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_rsp_wrs w = {};
	struct ib_send_wr *first = NULL, **tail = &first;
	bool data = op->dir == READ && !status && op->data_len;
	unsigned long flags;
	int err;

	trace_rtrs_srv_answer(path, op->msg_id, status);
	if (data && rtrs_srv_map_data_2_1(con, op, &w.data_sge)) {
		status = -EIO;
		data = false;
	}
	if (data)
		rtrs_srv_give_rbuf(path, op);
	else
		rtrs_srv_op_release_2_1(path, op);
	if (rtrs_srv_packable(con, op, data)) {
		err = rtrs_srv_pack_rsp(con, op, status);
		if (err != -ENOSPC) {
			if (err == -ESHUTDOWN) {
				rtrs_srv_sq_put(con);
				rtrs_srv_op_end(path, op);
			} else if (err) {
				rtrs_srv_post_failed(path, "packed responses",
						     err);
			}
			percpu_ref_put(&path->ops_ref);
			return;
		}
	}
	if (op->type == RTRS_MSG_READ_BUF) {
		rtrs_srv_add_read_buf_wr(con, op, status, data, &w, &tail);
	} else {
		if (data)
			rtrs_srv_add_data_wr_2_1(op, &w, &tail);
		rtrs_srv_add_rsp_wr_2_1(con, op, status, &w, &tail);
	}
	if (data) {
		spin_lock_irqsave(&op->lock, flags);
		op->retiring = true;
		spin_unlock_irqrestore(&op->lock, flags);
	}

	err = rtrs_srv_post_rsp_wrs(con, op, first, &w.rsp.wr, !data);
	if (err) {
		rtrs_srv_sq_put(con);
		if (data) {
			/* Not posted: no completion comes to end it. */
			ib_dma_unmap_single(path->s.dev->ib_dev, op->data_dma,
					    le32_to_cpu(op->desc.len),
					    DMA_TO_DEVICE);
			op->retiring = false;
		}
		rtrs_srv_op_end(path, op);
	}
	if (err)
		rtrs_srv_post_failed(path, "a response", err);
	percpu_ref_put(&path->ops_ref);
}

/*
 * Post the response of @op, for which the caller took send queue room; drop
 * it when its connection is being drained.
 */
static void rtrs_srv_post_rsp(struct rtrs_srv_con *con,
			      struct rtrs_srv_op *op, int status)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_rsp_wrs w = {};
	struct ib_send_wr *first = NULL, **tail = &first;
	int err;

	/* Responded to twice, or after the path dropped it. */
	WARN_ON_ONCE(!test_bit(0, &op->busy));
	if (op->type) {
		rtrs_srv_post_rsp_2_1(con, op, status);
		return;
	}

	trace_rtrs_srv_answer(path, op->msg_id, status);
	/*
	 * The chunk is re-keyed before the READ data goes out, which reads
	 * it through the local DMA key, not the MR: where the re-keying
	 * starts with a LOCAL_INV (rxe), the device holds that LOCAL_INV
	 * until everything before it on the send queue has completed, and
	 * behind the data it would wait for the peer's ACK of this very
	 * response's data.  The peer sees the same messages in the same order.
	 */
	if (path->always_invalidate)
		rtrs_srv_add_reg_wr(con, op, &w, &tail);
	if (op->dir == READ && !status && op->sg_cnt)
		rtrs_srv_add_data_wr(con, op, &w, &tail);
	if (op->need_inval)
		rtrs_srv_add_inval_wr(con, op, &w, &tail);
	rtrs_srv_add_rsp_wr(con, op, status, &w, &tail);

	err = rtrs_srv_post_rsp_wrs(con, op, first, &w.rsp.wr, true);
	if (err) {
		rtrs_srv_sq_put(con);
		rtrs_srv_op_end(path, op);
	}
	if (err)
		rtrs_srv_post_failed(path, "a response", err);
	percpu_ref_put(&path->ops_ref);
}

/* Post the responses that wait for send queue room, while there is room. */
static void rtrs_srv_kick_waiting(struct rtrs_srv_con *con)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_op *op;
	unsigned long flags;

	for (;;) {
		spin_lock_irqsave(&con->rsp_wait_lock, flags);
		op = list_first_entry_or_null(&con->rsp_wait_list,
					      struct rtrs_srv_op, wait_entry);
		if (op && !rtrs_srv_sq_get(con))
			op = NULL;
		if (op)
			list_del_init(&op->wait_entry);
		spin_unlock_irqrestore(&con->rsp_wait_lock, flags);
		if (!op)
			return;

		if (rtrs_srv_path_state(path) == RTRS_SRV_CONNECTED) {
			rtrs_srv_post_rsp(con, op, op->status);
		} else {
			rtrs_srv_sq_put(con);
			rtrs_srv_op_drop(path, op);
		}
	}
}

/**
 * rtrs_srv_drop_waiting() - finish the responses still waiting for room
 * @con: connection of a closing path: drained, or not yet when a response
 *	queued after the close has to go
 */
void rtrs_srv_drop_waiting(struct rtrs_srv_con *con)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_op *op, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&con->rsp_wait_lock, flags);
	list_splice_init(&con->rsp_wait_list, &list);
	spin_unlock_irqrestore(&con->rsp_wait_lock, flags);

	list_for_each_entry_safe(op, tmp, &list, wait_entry) {
		list_del_init(&op->wait_entry);
		rtrs_srv_op_drop(path, op);
	}
}

/*
 * A signaled response or a flush completed, and with it the @n responses
 * it stands for: their send queue room is free for the responses waiting.
 */
static void rtrs_srv_responses_done(struct rtrs_srv_con *con, u32 n)
{
	WRITE_ONCE(con->rsp_stamp, jiffies);
	atomic_dec(&con->rsp_inflight);
	atomic_add(n * RTRS_SRV_RSP_WRS, &con->c.sq_wr_avail);
	rtrs_srv_kick_waiting(con);
}

/**
 * rtrs_srv_read_buf_sent() - a READ_BUF's response with data completed
 * @con: the connection it went out on
 *
 * That response is signaled on its own, outside the batch of the
 * others (rtrs_srv_post_rsp_wrs()): its send queue room is free.
 *
 * Context: softirq, or the drain.
 */
void rtrs_srv_read_buf_sent(struct rtrs_srv_con *con)
{
	rtrs_srv_responses_done(con, 1);
}

/*
 * 2.1: a pack completed: its responses' room is free, and the responses
 * packed meanwhile go.
 */
static void rtrs_srv_pack_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con, pack_cqe);
	struct rtrs_srv_path *path = con_to_path(con);
	unsigned long flags;
	int err = 0;
	u32 n;

	if (!rtrs_srv_wc_ok(path, wc, "packed responses"))
		return;
	rtrs_hb_received(&path->s);
	spin_lock_irqsave(&con->rsp_post_lock, flags);
	n = con->pack_len[(con->pack_fill + RTRS_SRV_PACKS - con->pack_sent) %
			  RTRS_SRV_PACKS];
	con->pack_sent--;
	if (con->pack_n && !con->rsp_stopped)
		err = rtrs_srv_post_pack(con);
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	if (err)
		rtrs_srv_post_failed(path, "packed responses", err);
	rtrs_srv_responses_done(con, n);
}

static void rtrs_srv_rsp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con, rsp_cqe);
	struct rtrs_srv_path *path = con_to_path(con);

	/*
	 * A failed or flushed response completes signaled or not: the path is
	 * going, and its closing drops the responses still waiting for room.
	 */
	if (!rtrs_srv_wc_ok(path, wc, "response"))
		return;
	rtrs_hb_received(&path->s);
	rtrs_srv_responses_done(con, con->rsp_batch);
}

static void rtrs_srv_flush_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con, flush_cqe);
	struct rtrs_srv_path *path = con_to_path(con);
	unsigned long flags;
	u32 n;

	if (!rtrs_srv_wc_ok(path, wc, "flush of the responses"))
		return;
	spin_lock_irqsave(&con->rsp_post_lock, flags);
	n = con->flush_n;
	con->flush_n = 0;
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	rtrs_srv_responses_done(con, n);
}

/*
 * @con posted unsignaled responses and none since the watchdog last
 * looked: ask for their completion with a probe write
 * (rtrs_post_probe_write()).  It gives their send queue room back, and the
 * watchdog watches it like a signaled response: a queue pair that stopped
 * moving on an unsignaled response, the client waiting for it, is found
 * too.
 *
 * Return: false when the flush could not be posted and the path closes.
 */
static bool rtrs_srv_flush_responses(struct rtrs_srv_con *con)
{
	struct rtrs_srv_path *path = con_to_path(con);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&con->rsp_post_lock, flags);
	if (con->rsp_unsig && !con->flush_n && !con->rsp_stopped &&
	    con->rsp_posts == con->wd_posts) {
		con->flush_n = con->rsp_unsig;
		con->rsp_unsig = 0;
		if (atomic_inc_return(&con->rsp_inflight) == 1)
			WRITE_ONCE(con->rsp_stamp, jiffies);
		err = rtrs_post_probe_write(&con->c, &con->flush_cqe);
		if (err) {
			atomic_dec(&con->rsp_inflight);
			con->rsp_unsig = con->flush_n;
			con->flush_n = 0;
		}
	}
	con->wd_posts = con->rsp_posts;
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	if (err) {
		pr_err_ratelimited("%s: posting a flush of the responses failed: %d\n",
				   path->s.sessname, err);
		rtrs_srv_close_path(path);
	}
	return !err;
}

/* Responses wait on @con, and none has completed for too long. */
static bool rtrs_srv_con_stuck(struct rtrs_srv_con *con)
{
	return atomic_read(&con->rsp_inflight) > 0 &&
	       time_after(jiffies, READ_ONCE(con->rsp_stamp) +
			  msecs_to_jiffies(RTRS_SRV_STALL_MS));
}

/**
 * rtrs_srv_wd_work() - the watchdog of a path
 * @work: &rtrs_srv_path.wd_dwork.
 *
 * A QP can stop moving without reporting an error (rxe can wedge one
 * whose retransmission meets a fast registration it already executed): the
 * responses on it never complete and the client waits forever.  Every
 * heartbeat interval the watchdog asks for the completion of the unsignaled
 * responses of each connection gone quiet, checks that each connection with
 * a signaled response (or such a flush) in flight completed one lately, and
 * closes the path when not; the client then sends its requests again over
 * another path.  A path still connecting when the watchdog first runs
 * (connect_timeout_sec after its first connection) is closed as well.
 *
 * Context: process context, on rtrs_srv_wq.
 */
void rtrs_srv_wd_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(to_delayed_work(work),
						  struct rtrs_srv_path,
						  wd_dwork);
	enum rtrs_srv_state state = rtrs_srv_path_state(path);
	unsigned int cid;

	if (state == RTRS_SRV_CONNECTING) {
		/* Not when the INFO_REQ has just moved it on. */
		if (!rtrs_srv_change_state(path, RTRS_SRV_CONNECTING,
					   RTRS_SRV_CLOSING))
			return;
		pr_err_ratelimited("%s: not connected after %u s, closing the path\n",
				   path->s.sessname, path->connect_timeout);
		queue_work(rtrs_srv_wq, &path->close_work);
		return;
	}
	if (state != RTRS_SRV_CONNECTED)
		return;
	for (cid = 0; cid < path->s.con_num; cid++) {
		struct rtrs_srv_con *con = to_srv_con(path->s.con[cid]);

		if (!rtrs_srv_flush_responses(con))
			return;
		if (!rtrs_srv_con_stuck(con))
			continue;
		pr_warn_ratelimited("%s: connection %u stopped moving, closing the path\n",
				    path->s.sessname, cid);
		rtrs_srv_close_path(path);
		return;
	}
	queue_delayed_work(rtrs_srv_wq, &path->wd_dwork,
			   msecs_to_jiffies(RTRS_HB_INTERVAL_MS));
}

/**
 * rtrs_srv_resp_rdma() - respond to one request
 * @id: operation handed to the user by &rtrs_srv_ops.rdma_ev.
 * @status: 0, or the negative errno the client's
 *	&rtrs_clt_req_ops.conf_fn will see.  The protocol carries 9 bits of
 *	it: magnitudes above 511 reach the client as -EIO.
 *
 * With always-invalidate, the chunk is first re-keyed, and the new key
 * travels with the status.  For a successful READ with data, the data
 * area is then RDMA-written to the client's buffer; when the client asked
 * for it, its buffer is invalidated by a SEND WITH INVALIDATE; last comes
 * the status.  Must be called for every operation the user took, even
 * when its path has gone down meanwhile: closing a path waits for all of
 * them.  After the call @id belongs to rtrs again.
 *
 * Context: any context, including hard interrupt.
 * Return: true when the response was posted, or dropped because the path is
 * no longer connected; false when the send queue was full and the response
 * was queued, to be posted when room frees up.  Either way the user is done
 * with @id.
 */
bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int status)
{
	struct rtrs_srv_con *con = id->con;
	struct rtrs_srv_path *path = con_to_path(con);
	unsigned long flags;

	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED) {
		rtrs_srv_op_drop(path, id);
		return true;
	}
	if (list_empty_careful(&con->rsp_wait_list) && rtrs_srv_sq_get(con)) {
		rtrs_srv_post_rsp(con, id, status);
		return true;
	}

	/*
	 * Once queued, @id may be responded to or dropped by others at once and
	 * its reference with it: keep the path (and @con) for the rest.
	 */
	percpu_ref_get(&path->ops_ref);
	id->status = status;
	spin_lock_irqsave(&con->rsp_wait_lock, flags);
	list_add_tail(&id->wait_entry, &con->rsp_wait_list);
	spin_unlock_irqrestore(&con->rsp_wait_lock, flags);
	/* Room may have come back before we queued: look again. */
	rtrs_srv_kick_waiting(con);
	/*
	 * A path that closed meanwhile may have dropped its waiting responses
	 * before this one came, and gives no room back any more.
	 */
	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED)
		rtrs_srv_drop_waiting(con);
	percpu_ref_put(&path->ops_ref);
	return false;
}
EXPORT_SYMBOL_GPL(rtrs_srv_resp_rdma);

/* The chunk is ours: check the request and give it to the user. */
static void rtrs_srv_process_io(struct rtrs_srv_con *con, u32 id, u32 off)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_op *op = &path->ops[id];
	void *data = page_address(sess->chunks[id]);
	struct rtrs_srv_io_hdr io;
	int err;

	ib_dma_sync_single_for_cpu(path->s.dev->ib_dev,
				   sg_dma_address(&path->chunks[id].sg),
				   sess->chunk_size, DMA_BIDIRECTIONAL);
	err = rtrs_srv_check_io_hdr(data, sess->chunk_size, off,
				    sess->max_io_size, &io);
	if (err) {
		rtrs_srv_op_end(path, op);
		rtrs_srv_violation(path, "malformed IO header in chunk %u at %u: %pe",
				   id, off, ERR_PTR(err));
		return;
	}
	if (!percpu_ref_tryget_live(&path->ops_ref)) {
		rtrs_srv_op_end(path, op);
		return;
	}

	op->dir = io.dir;
	op->sg_cnt = io.sg_cnt;
	op->desc = io.desc;
	op->need_inval = io.need_inval;
	trace_rtrs_srv_request(path, id, io.dir, io.data_len, io.usr_len);
	this_cpu_inc(path->stats->cnt[io.dir]);
	this_cpu_add(path->stats->bytes[io.dir], io.dir == READ ?
		     le32_to_cpu(io.desc.len) : io.data_len);
	err = sess->ctx->ops.rdma_ev(READ_ONCE(sess->priv), op, data,
				     io.data_len, data + io.data_len,
				     io.usr_len);
	if (err)
		rtrs_srv_resp_rdma(op, err);
}

static void rtrs_srv_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_chunk *chunk = container_of(wc->wr_cqe,
						    struct rtrs_srv_chunk,
						    inv_cqe);
	struct rtrs_srv_con *con = chunk->inv_con;
	struct rtrs_srv_path *path = con_to_path(con);
	u32 id = chunk - path->chunks;

	if (!rtrs_srv_wc_ok(path, wc, "LOCAL_INV of a chunk")) {
		rtrs_srv_op_end(path, &path->ops[id]);
		return;
	}
	rtrs_srv_process_io(con, id, chunk->inv_off);
}

/* Shut the client out of the chunk before looking at it. */
static int rtrs_srv_inv_chunk(struct rtrs_srv_con *con, u32 id, u32 off)
{
	struct rtrs_srv_chunk *chunk = &con_to_path(con)->chunks[id];
	struct ib_send_wr wr = {
		.opcode		    = IB_WR_LOCAL_INV,
		.wr_cqe		    = &chunk->inv_cqe,
		.send_flags	    = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = chunk->mr->rkey,
	};

	chunk->inv_cqe.done = rtrs_srv_inv_done;
	chunk->inv_con = con;
	chunk->inv_off = off;
	return ib_post_send(con->c.qp, &wr, NULL);
}

/**
 * rtrs_srv_send_hb_ack() - acknowledge a heartbeat
 * @path: path, connected (so connection 0, where the ack goes, exists),
 *	on any connection of which the heartbeat came in
 *
 * Like a
 * response, the ack is posted under connection 0's @rsp_post_lock and not
 * at all once that connection is stopped: the close drains connection 0
 * before the others, and an ack posted after that drain would complete into
 * a freed connection.
 */
void rtrs_srv_send_hb_ack(struct rtrs_srv_path *path)
{
	struct rtrs_srv_con *con0 = to_srv_con(path->s.con[0]);
	unsigned long flags;

	spin_lock_irqsave(&con0->rsp_post_lock, flags);
	if (!con0->rsp_stopped)
		rtrs_send_hb_ack(&path->s);
	spin_unlock_irqrestore(&con0->rsp_post_lock, flags);
}

/*
 * Post the LOCAL_INV of @op's chunk, unless the connection is being
 * drained: a post after the drain would complete into a connection being
 * freed, with the chunk still owned.  A request that waited for its chunk
 * runs from a work item, not from its connection's completions, so the
 * drain does not wait for it; one that did not is checked the same way.
 */
static int rtrs_srv_inv_op(struct rtrs_srv_op *op)
{
	struct rtrs_srv_con *con = op->con;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&con->rsp_post_lock, flags);
	err = con->rsp_stopped ? -ESHUTDOWN :
	      rtrs_srv_inv_chunk(con, op->msg_id, op->off);
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	return err;
}

/*
 * Run @op, which owns its chunk: straight to the checks and the user, or
 * with always-invalidate after the LOCAL_INV of the chunk, whose
 * completion goes on (rtrs_srv_inv_done()).  A LOCAL_INV not posted ends
 * @op, and fails the path unless its connection is being drained.
 */
static void rtrs_srv_run_io(struct rtrs_srv_op *op)
{
	struct rtrs_srv_con *con = op->con;
	struct rtrs_srv_path *path = con_to_path(con);
	int err;

	if (!path->always_invalidate) {
		rtrs_srv_process_io(con, op->msg_id, op->off);
		return;
	}
	err = rtrs_srv_inv_op(op);
	if (!err)
		return;
	rtrs_srv_op_end(path, op);
	rtrs_srv_post_failed(path, "LOCAL_INV", err);
}

/**
 * rtrs_srv_run_handed() - run a request that waited for its chunk
 * @work: &rtrs_srv_op.run_work of a request that has just been handed
 *	its chunk (rtrs_srv_chunk_give_up())
 *
 * The request is handled as if it had just come: checked and given to
 * the user, after its LOCAL_INV with always-invalidate.  On a path no
 * longer connected it is dropped instead, unseen by the user.
 *
 * Context: process context, on rtrs_srv_wq.
 */
static void rtrs_srv_run_handed(struct work_struct *work)
{
	struct rtrs_srv_op *op = container_of(work, struct rtrs_srv_op,
					      run_work);
	struct rtrs_srv_path *path = con_to_path(op->con);

	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED) {
		rtrs_srv_op_end(path, op);
		return;
	}
	rtrs_srv_run_io(op);
}

/**
 * rtrs_srv_end_handed() - end the requests of a closing path that wait
 * @path: path whose connections are drained, so that no request of it
 *	comes any more
 *
 * A request waiting for a chunk that a request of another path owns is
 * dropped: it never reaches the user, and gives up nothing, since it owns
 * nothing.  One handed its chunk whose work has not run yet is ended
 * here, passing the chunk on; a work running is waited for.  Afterwards
 * no work of @path is queued or running, and none can be queued again.
 *
 * Context: process context.
 */
void rtrs_srv_end_handed(struct rtrs_srv_path *path)
{
	u32 i;

	for (i = 0; i < path->sess->queue_depth; i++) {
		struct rtrs_srv_op *op = &path->ops[i];

		if (rtrs_srv_chunk_unwait(path->sess, op) ||
		    cancel_work_sync(&op->run_work))
			rtrs_srv_op_end(path, op);
	}
}

/**
 * rtrs_srv_end_orphans() - end the requests a closed path still holds
 * @path: path whose connections are destroyed, whose user responded to
 *	all it took, and that has no request waiting (rtrs_srv_end_handed())
 *
 * What is left is a request whose LOCAL_INV was posted as the
 * connection was being drained, and whose completion was lost with the
 * connection: its chunk is passed on all the same.
 *
 * Context: process context.
 */
void rtrs_srv_end_orphans(struct rtrs_srv_path *path)
{
	u32 i;

	for (i = 0; i < path->sess->queue_depth; i++)
		if (test_bit(0, &path->ops[i].busy))
			rtrs_srv_op_end(path, &path->ops[i]);
}

/* An IO request rtrs_srv_admit() let through. */
static void rtrs_srv_io_req(struct rtrs_srv_con *con, u32 payload)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_op *op;
	u32 id, off;

	if (rtrs_srv_check_io_req(payload, path->off_bits,
				  path->sess->queue_depth,
				  path->sess->chunk_size, &id, &off)) {
		rtrs_srv_violation(path, "IO request for chunk %u offset %u",
				   id, off);
		return;
	}
	op = &path->ops[id];
	if (!rtrs_srv_op_take(op)) {
		rtrs_srv_violation(path, "IO request for busy chunk %u", id);
		return;
	}
	op->con = con;
	op->off = off;
	/* Owned by a request of another path: run when handed the chunk. */
	if (!rtrs_srv_chunk_take(path->sess, op))
		return;
	rtrs_srv_run_io(op);
}

static void rtrs_srv_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_con *con = container_of(wc->wr_cqe,
						struct rtrs_srv_con, recv_cqe);
	struct rtrs_srv_path *path = con_to_path(con);
	enum rtrs_srv_msg msg = RTRS_SRV_MSG_OTHER;
	u32 imm = 0;
	int err;

	if (!rtrs_srv_wc_ok(path, wc, "receive"))
		return;
	/* After connection 0's first, every receive is of an immediate. */
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM &&
	    wc->wc_flags & IB_WC_WITH_IMM) {
		imm = be32_to_cpu(wc->ex.imm_data);
		msg = rtrs_srv_msg_of_imm(imm, rtrs_srv_sess_2_1(path->sess));
	}
	if (!rtrs_srv_admit(path, msg, imm, con->c.cid))
		return;
	rtrs_hb_received(&path->s);

	err = rtrs_post_recv_empty(&con->c, &con->recv_cqe);
	if (err) {
		pr_err_ratelimited("%s: posting a receive failed: %d\n",
				   path->s.sessname, err);
		rtrs_srv_close_path(path);
		return;
	}

	switch (msg) {
	case RTRS_SRV_MSG_IO_REQ:
		rtrs_srv_io_req(con, rtrs_imm_payload(imm));
		break;
	case RTRS_SRV_MSG_HB:
		rtrs_srv_send_hb_ack(path);
		break;
	case RTRS_SRV_MSG_HB_ACK:
		rtrs_hb_ack_received(&path->s);
		break;
	default:
		break;
	}
}

/**
 * rtrs_srv_init_con_cqes() - set the completion handlers of a connection
 * @con: new connection
 */
void rtrs_srv_init_con_cqes(struct rtrs_srv_con *con)
{
	con->recv_cqe.done = rtrs_srv_recv_done;
	con->rsp_cqe.done = rtrs_srv_rsp_done;
	con->flush_cqe.done = rtrs_srv_flush_done;
	con->write_cqe.done = rtrs_srv_write_done;
	con->reg_cqe.done = rtrs_srv_reg_done;
	con->inval_cqe.done = rtrs_srv_inval_done;
	con->pack_cqe.done = rtrs_srv_pack_done;
	spin_lock_init(&con->rsp_wait_lock);
	INIT_LIST_HEAD(&con->rsp_wait_list);
	spin_lock_init(&con->rsp_post_lock);
}

/**
 * rtrs_srv_alloc_packs() - buffers of packed responses of a connection
 * @con: connection of a 2.1 path whose client asked for packed responses
 *
 * Return: 0 or -ENOMEM.
 */
int rtrs_srv_alloc_packs(struct rtrs_srv_con *con)
{
	struct ib_device *ib_dev = con_to_path(con)->s.dev->ib_dev;
	size_t size = RTRS_SRV_PACKS * sizeof(*con->packs);
	struct rtrs_srv_pack *packs;

	packs = rtrs_kzalloc(size, GFP_KERNEL);
	if (!packs)
		return -ENOMEM;
	con->packs_dma = ib_dma_map_single(ib_dev, packs, size, DMA_TO_DEVICE);
	if (ib_dma_mapping_error(ib_dev, con->packs_dma)) {
		kfree(packs);
		return -ENOMEM;
	}
	con->packs = packs;
	return 0;
}

/**
 * rtrs_srv_free_packs() - undo rtrs_srv_alloc_packs()
 * @con: connection whose queue pair is gone, or never posted
 */
void rtrs_srv_free_packs(struct rtrs_srv_con *con)
{
	if (!con->packs)
		return;
	ib_dma_unmap_single(con_to_path(con)->s.dev->ib_dev, con->packs_dma,
			    RTRS_SRV_PACKS * sizeof(*con->packs),
			    DMA_TO_DEVICE);
	kfree(con->packs);
	con->packs = NULL;
}

/**
 * rtrs_srv_post_recvs() - post the receives IO requests consume
 * @con: connection with its queue pair
 * @n: how many
 *
 * Return: 0 or the error of the first post that failed.
 */
int rtrs_srv_post_recvs(struct rtrs_srv_con *con, unsigned int n)
{
	int err;

	while (n--) {
		/* One fault point: the last receive, as a full queue. */
		err = rtrs_fail_last_or(!n, -ENOMEM,
					rtrs_post_recv_empty(&con->c,
							     &con->recv_cqe));
		if (err)
			return err;
	}
	return 0;
}
