// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server requests of protocol 2.1.
 *
 * A 2.1 request is a SEND into a receive buffer of the device's shared
 * receive queue (rtrs-srv-srq.c).  It is checked, takes the handle of its
 * message id on its path, and goes to the user:
 *
 *  - an inline WRITE at once, with its data where it landed, in the
 *    buffer's page;
 *  - a READ (READ_REQ or READ_BUF) once it has a data buffer from the
 *    server's pool, for the user to fill;
 *  - a WRITE of more data once it has a data buffer and the data has come
 *    into it by RDMA READ from the client's memory region.
 *
 * A request waits for its data buffer when the pool has no room, and is
 * never failed for it.  The response (rtrs-srv-io.c) gives the receive
 * buffer back to the queue; a READ's data buffer goes back once its data
 * has gone out.  Until then the handle is retiring, and a request for the
 * same id, which the client may send as soon as it has the response,
 * waits parked on it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/workqueue.h>

#include "rtrs-srv.h"
#include "trace/srv.h"

/* A receive buffer no request holds goes back to the shared queue. */
static void rtrs_srv_repost(struct rtrs_srv_path *path,
			    struct rtrs_srv_rbuf *rb)
{
	int err = rtrs_srv_srq_post(rb);

	/* The queue is one buffer short from now on. */
	if (err)
		pr_err_ratelimited("%s: posting a shared receive failed: %d\n",
				   path->s.sessname, err);
}

static void rtrs_srv_req(struct rtrs_srv_con *con, struct rtrs_srv_rbuf *rb,
			 u32 len, struct rtrs_srv_op *op);

/*
 * A request that has not reached the user is dropped: it gives back what
 * it holds and the reference on the path's requests it took on arrival.
 */
static void rtrs_srv_op_abort(struct rtrs_srv_path *path,
			      struct rtrs_srv_op *op)
{
	rtrs_srv_op_end(path, op);
	percpu_ref_put(&path->ops_ref);
}

/* Hand the request to the user; a request it refuses is responded to. */
static void rtrs_srv_to_user(struct rtrs_srv_path *path,
			     struct rtrs_srv_op *op, void *data, u32 data_len)
{
	struct rtrs_srv_sess *sess = path->sess;
	size_t hlen = op->type == RTRS_MSG_WRITE_INLINE ?
		      sizeof(struct rtrs_msg_write_inline) :
		      sizeof(struct rtrs_msg_io_req);
	u32 usr_len = op->off;
	int err;

	trace_rtrs_srv_request(path, op->msg_id, op->dir, op->data_len,
			       usr_len);
	this_cpu_inc(path->stats->cnt[op->dir]);
	this_cpu_add(path->stats->bytes[op->dir], op->data_len);
	err = sess->ctx->ops.rdma_ev(READ_ONCE(sess->priv), op, data,
				     data_len, op->rbuf->hdr + hlen, usr_len);
	if (err)
		rtrs_srv_resp_rdma(op, err);
}

/* The WRITE data is in: to the user. */
static void rtrs_srv_read_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_op *op = container_of(wc->wr_cqe, struct rtrs_srv_op,
					      data_cqe);
	struct rtrs_srv_path *path = con_to_path(op->con);

	ib_dma_unmap_single(path->s.dev->ib_dev, op->data_dma, op->data_len,
			    DMA_FROM_DEVICE);
	if (!rtrs_srv_wc_ok(path, wc, "RDMA READ of WRITE data")) {
		rtrs_srv_op_abort(path, op);
		return;
	}
	rtrs_srv_to_user(path, op, op->pool_req.buf, op->data_len);
}

/* Pull the WRITE data from the client's memory region into the buffer. */
static int rtrs_srv_pull(struct rtrs_srv_path *path, struct rtrs_srv_op *op)
{
	struct rtrs_srv_con *con = op->con;
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	struct ib_sge sge = {
		.length	= op->data_len,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode		= IB_WR_RDMA_READ,
			.wr_cqe		= &op->data_cqe,
			.sg_list	= &sge,
			.num_sge	= 1,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.remote_addr	= le64_to_cpu(op->desc.addr),
		.rkey		= le32_to_cpu(op->desc.key),
	};
	unsigned long flags;
	int err;

	op->data_dma = ib_dma_map_single(ib_dev, op->pool_req.buf,
					 op->data_len, DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ib_dev, op->data_dma))
		return -ENOMEM;
	sge.addr = op->data_dma;
	op->data_cqe.done = rtrs_srv_read_done;

	/* Not after the drain: see rtrs_srv_stop_responses(). */
	spin_lock_irqsave(&con->rsp_post_lock, flags);
	err = con->rsp_stopped ? -ESHUTDOWN :
	      ib_post_send(con->c.qp, &wr.wr, NULL);
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	if (err)
		ib_dma_unmap_single(ib_dev, op->data_dma, op->data_len,
				    DMA_FROM_DEVICE);
	return err;
}

/* The request has its data buffer: go on with it. */
static void rtrs_srv_run_buffered(struct rtrs_srv_path *path,
				  struct rtrs_srv_op *op)
{
	int err;

	/* A READ's user fills the buffer: it hears its length. */
	if (op->dir == READ) {
		rtrs_srv_to_user(path, op, op->pool_req.buf, op->data_len);
		return;
	}
	err = rtrs_srv_pull(path, op);
	if (!err)
		return;
	rtrs_srv_op_abort(path, op);
	rtrs_srv_post_failed(path, "an RDMA READ", err);
}

/* Called by the pool, with no lock of it held: only queue the work. */
static void rtrs_srv_granted(struct rtrs_srv_pool_req *req)
{
	struct rtrs_srv_op *op = container_of(req, struct rtrs_srv_op,
					      pool_req);

	queue_work(rtrs_srv_wq, &op->run_work);
}

/**
 * rtrs_srv_run_granted() - go on with a request granted its data buffer
 * @work: &rtrs_srv_op.run_work of a 2.1 request that waited for the pool
 *
 * On a path no longer connected the request is dropped instead, unseen by
 * the user.
 *
 * Context: process context, on rtrs_srv_wq.
 */
static void rtrs_srv_run_granted(struct work_struct *work)
{
	struct rtrs_srv_op *op = container_of(work, struct rtrs_srv_op,
					      run_work);
	struct rtrs_srv_path *path = con_to_path(op->con);

	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED) {
		rtrs_srv_op_abort(path, op);
		return;
	}
	rtrs_srv_run_buffered(path, op);
}

/*
 * The READ data of a retiring handle has gone out: give the data buffer
 * back, then free the handle, or run the request parked on it meanwhile.
 */
static void rtrs_srv_retired(struct rtrs_srv_path *path, struct rtrs_srv_op *op)
{
	struct rtrs_srv_rbuf *rb;
	struct rtrs_srv_con *con;
	unsigned long flags;
	u32 len;

	rtrs_srv_pool_put(&op->pool_req);
	spin_lock_irqsave(&op->lock, flags);
	op->retiring = false;
	rb = op->parked;
	con = op->parked_con;
	len = op->parked_len;
	op->parked = NULL;
	if (!rb)
		clear_bit_unlock(0, &op->busy);
	spin_unlock_irqrestore(&op->lock, flags);
	if (!rb)
		return;
	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED) {
		rtrs_srv_repost(path, rb);
		clear_bit_unlock(0, &op->busy);
		return;
	}
	rtrs_srv_req(con, rb, len, op);
}

static void rtrs_srv_data_sent(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_op *op = container_of(wc->wr_cqe, struct rtrs_srv_op,
					      data_cqe);
	struct rtrs_srv_path *path = con_to_path(op->con);

	ib_dma_unmap_single(path->s.dev->ib_dev, op->data_dma,
			    le32_to_cpu(op->desc.len), DMA_TO_DEVICE);
	/* A failure fails the path; the handle retires all the same. */
	if (rtrs_srv_wc_ok(path, wc, "RDMA WRITE of READ data") &&
	    op->type == RTRS_MSG_READ_BUF)
		rtrs_srv_read_buf_sent(op->con);
	rtrs_srv_retired(path, op);
}

/* Start a request that owns its handle. */
static void rtrs_srv_start(struct rtrs_srv_path *path, struct rtrs_srv_op *op)
{
	if (op->type == RTRS_MSG_WRITE_INLINE) {
		ib_dma_sync_single_for_cpu(path->s.dev->ib_dev,
					   op->rbuf->page_dma, op->data_len,
					   DMA_FROM_DEVICE);
		rtrs_srv_to_user(path, op, page_address(op->rbuf->page),
				 op->data_len);
		return;
	}
	/* No data, no region: a page of no use to the user stands for it. */
	if (!op->data_len) {
		rtrs_srv_to_user(path, op, page_address(op->rbuf->page), 0);
		return;
	}
	if (op->dir == READ)
		op->data_cqe.done = rtrs_srv_data_sent;
	op->pool_req.size = op->data_len;
	op->pool_req.user = &path->sess->pool_user;
	op->pool_req.granted = rtrs_srv_granted;
	if (rtrs_srv_pool_get(&op->pool_req))
		rtrs_srv_run_buffered(path, op);
}

/*
 * Take the handle @op of the id of the request in @rb: false when it is
 * taken, by a request in flight (a protocol violation, logged) or by one
 * whose READ data still goes out (the request then waits parked on it).
 * The handle is tried under @op->lock again after rtrs_srv_op_take():
 * the data may have gone out meanwhile.
 */
static bool rtrs_srv_take_op(struct rtrs_srv_con *con,
			     struct rtrs_srv_rbuf *rb, u32 len,
			     struct rtrs_srv_op *op)
{
	struct rtrs_srv_path *path = con_to_path(con);
	unsigned long flags;
	bool parked = false;

	if (rtrs_srv_op_take(op))
		return true;
	spin_lock_irqsave(&op->lock, flags);
	if (!test_and_set_bit(0, &op->busy)) {
		spin_unlock_irqrestore(&op->lock, flags);
		return true;
	}
	if (op->retiring && !op->parked) {
		op->parked = rb;
		op->parked_con = con;
		op->parked_len = len;
		parked = true;
	}
	spin_unlock_irqrestore(&op->lock, flags);
	if (!parked) {
		rtrs_srv_repost(path, rb);
		rtrs_srv_violation(path, "request for busy message id %u",
				   op->msg_id);
	}
	return false;
}

/*
 * Check the request in @rb and start it, or give @rb back.  The handle
 * is already @op's when @op is given (a parked request); else the
 * request takes the one of its id.
 */
static void rtrs_srv_req(struct rtrs_srv_con *con, struct rtrs_srv_rbuf *rb,
			 u32 len, struct rtrs_srv_op *op)
{
	struct rtrs_srv_path *path = con_to_path(con);
	struct rtrs_srv_sess *sess = path->sess;
	const struct rtrs_srv_limits_2_1 lim = {
		.queue_depth	 = sess->queue_depth,
		.max_io_size	 = sess->max_io_size,
		.max_hdr_size	 = RTRS_SRV_HDR_SIZE_2_1,
		.max_inline_size = PAGE_SIZE,
		.max_read_buf	 = sess->max_read_buf,
		.tags		 = sess->msg_tags,
	};
	struct rtrs_srv_io_2_1 io;
	int err;

	/* The user message may go on into the page. */
	ib_dma_sync_single_for_cpu(path->s.dev->ib_dev, rb->hdr_dma,
				   min_t(u32, len, RTRS_SRV_HDR_SIZE_2_1 +
					 PAGE_SIZE), DMA_FROM_DEVICE);
	err = rtrs_srv_check_io_req_2_1(rb->hdr, len, &lim, &io);
	if (err) {
		if (op)
			rtrs_srv_op_end(path, op);
		rtrs_srv_repost(path, rb);
		rtrs_srv_violation(path, "malformed request, %u bytes: %pe",
				   len, ERR_PTR(err));
		return;
	}
	if (op && op->msg_id != io.msg_id) {
		/* Cannot be: it was parked on its own id. */
		rtrs_srv_op_end(path, op);
		op = NULL;
	}
	if (!op) {
		op = &path->ops[io.msg_id];
		if (!rtrs_srv_take_op(con, rb, len, op))
			return;
	}
	op->con = con;
	op->rbuf = rb;
	op->tag = io.tag;
	op->type = io.type;
	op->off = io.usr_len;
	op->data_len = io.data_len;
	op->dir = io.type == RTRS_MSG_READ_REQ ||
		  io.type == RTRS_MSG_READ_BUF ? READ : WRITE;
	op->sg_cnt = io.type != RTRS_MSG_WRITE_INLINE && io.data_len;
	/* A read buffer stays registered: nothing to invalidate. */
	op->need_inval = op->sg_cnt && io.type != RTRS_MSG_READ_BUF;
	op->desc.addr = cpu_to_le64(io.addr);
	op->desc.key = cpu_to_le32(io.rkey);
	op->desc.len = cpu_to_le32(io.data_len);
	/*
	 * Held until the request ends, waits included: closing the path
	 * waits for it after ending the requests that wait for the pool.
	 */
	if (!percpu_ref_tryget_live(&path->ops_ref)) {
		rtrs_srv_op_end(path, op);
		return;
	}
	rtrs_srv_start(path, op);
}

/**
 * rtrs_srv_rbuf_done() - a receive of a 2.1 IO connection completed
 * @cq: its completion queue
 * @wc: the completion; @wc->qp tells the connection
 *
 * A SEND is a request; an immediate may be a heartbeat or its ack, and
 * anything else is a message no client sends.  The buffer goes back to
 * the queue, unless a request holds it.
 */
void rtrs_srv_rbuf_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_rbuf *rb = container_of(wc->wr_cqe,
						struct rtrs_srv_rbuf, cqe);
	struct rtrs_srv_con *con = to_srv_con(wc->qp->qp_context);
	struct rtrs_srv_path *path = con_to_path(con);
	enum rtrs_srv_msg msg = RTRS_SRV_MSG_IO_REQ;
	u32 imm = 0;

	if (!rtrs_srv_wc_ok(path, wc, "receive")) {
		rtrs_srv_repost(path, rb);
		return;
	}
	if (wc->opcode != IB_WC_RECV || wc->wc_flags & IB_WC_WITH_IMM) {
		imm = wc->wc_flags & IB_WC_WITH_IMM ?
		      be32_to_cpu(wc->ex.imm_data) : 0;
		msg = rtrs_srv_msg_of_imm(imm, rtrs_srv_sess_2_1(path->sess));
	}
	if (!rtrs_srv_admit(path, msg, imm, con->c.cid)) {
		rtrs_srv_repost(path, rb);
		return;
	}
	rtrs_hb_received(&path->s);

	switch (msg) {
	case RTRS_SRV_MSG_IO_REQ:
		rtrs_srv_req(con, rb, wc->byte_len, NULL);
		return;
	case RTRS_SRV_MSG_HB:
		rtrs_srv_send_hb_ack(path);
		break;
	case RTRS_SRV_MSG_HB_ACK:
		rtrs_hb_ack_received(&path->s);
		break;
	default:
		break;
	}
	rtrs_srv_repost(path, rb);
}

/**
 * rtrs_srv_init_ops_2_1() - make the request handles of a path 2.1's
 * @path: path of a 2.1 session, with its handles allocated
 */
void rtrs_srv_init_ops_2_1(struct rtrs_srv_path *path)
{
	u32 i;

	for (i = 0; i < path->sess->queue_depth; i++) {
		struct rtrs_srv_op *op = &path->ops[i];

		spin_lock_init(&op->lock);
		INIT_WORK(&op->run_work, rtrs_srv_run_granted);
	}
}

/**
 * rtrs_srv_end_waiting_2_1() - end the requests of a closing path that wait
 * @path: 2.1 path whose connections are drained
 *
 * A request waiting for a data buffer is dropped, unseen by the user; one
 * granted whose work has not run yet is ended here, giving its buffer
 * back; a work running is waited for.  One granted whose work is not yet
 * queued runs it later and drops itself there; the reference it holds on
 * the path's requests keeps the close waiting for that.
 *
 * Context: process context.
 */
void rtrs_srv_end_waiting_2_1(struct rtrs_srv_path *path)
{
	u32 i;

	for (i = 0; i < path->sess->queue_depth; i++) {
		struct rtrs_srv_op *op = &path->ops[i];

		if (!test_bit(0, &op->busy) || !op->pool_req.user ||
		    op->type == RTRS_MSG_WRITE_INLINE || !op->data_len)
			continue;
		if (rtrs_srv_pool_cancel(&op->pool_req) ||
		    cancel_work_sync(&op->run_work))
			rtrs_srv_op_abort(path, op);
	}
}
