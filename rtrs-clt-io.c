// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: READ and WRITE requests.
 *
 * A request is one RDMA WRITE WITH IMMEDIATE into the server chunk of its
 * permit: for a WRITE the data, the user message and struct
 * rtrs_msg_rdma_write; for a READ the user message and struct
 * rtrs_msg_rdma_read describing a fast-registered MR the server writes the
 * data into.  The immediate says where the header is.  The server responds
 * with an immediate carrying the chunk id and an errno.
 *
 * All completions of a request arrive on the CQ of its connection, so the
 * request slot needs no lock: the submitter fills it before posting, the
 * connection's completion context owns it while in flight, and the path
 * teardown owns it once the QP is drained.  A request completes when its
 * response and the completions of its own work requests (its signaled write,
 * the LOCAL_INV of its MR) are all in: never before its post went out,
 * whatever a server sends, and never with its send queue entries in use.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "rtrs-clt.h"
#include "trace/clt.h"

static void rtrs_clt_write_done(struct ib_cq *cq, struct ib_wc *wc);
static void rtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc);
static void rtrs_clt_reg_done(struct ib_cq *cq, struct ib_wc *wc);
static void rtrs_clt_req_start(struct rtrs_clt_io_req *req);
static void rtrs_clt_large_kick(struct rtrs_clt_path *path);

static struct ib_cqe rtrs_clt_reg_cqe = {
	.done = rtrs_clt_reg_done,
};

/*
 * Send a request on the IO connection whose responses its CPU takes when
 * its own connection's are taken on another CPU (rtrs_clt_steer_con()).
 * Read for each request.
 */
static bool rtrs_clt_steer = true;
module_param_named(steer_requests, rtrs_clt_steer, bool, 0644);
MODULE_PARM_DESC(steer_requests,
		 "Send a request on the IO connection whose responses its CPU takes, when its own connection's are taken on another CPU (default Y)");

/*
 * Is @con's path going down already?  Then what its other connections
 * still bring needs no line of its own: the first failure gave the reason.
 */
static bool rtrs_clt_con_failing(struct rtrs_clt_con *con)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	enum rtrs_clt_state state = READ_ONCE(path->state);

	return READ_ONCE(path->connect_failed) ||
	       (state != RTRS_CLT_CONNECTING && state != RTRS_CLT_CONNECTED);
}

/*
 * The QP of @con went to the error state while its path was connected,
 * and the flush of one of its work requests is the first sign: the device
 * did it on its own, with no completion to say why (rxe does so for an
 * error of its responder on the server's RDMA READ or WRITE, such as an
 * MR already invalidated, or for a full completion queue).  Before the
 * path is connected, a flush only follows a failure the connect attempt
 * reports itself.
 */
static bool rtrs_clt_con_flushed_unasked(struct rtrs_clt_con *con,
					 struct ib_wc *wc)
{
	return wc->status == IB_WC_WR_FLUSH_ERR &&
	       READ_ONCE(to_clt_path(con->c.path)->state) == RTRS_CLT_CONNECTED;
}

/*
 * A work request of @con failed: the path goes down.  The first failure
 * of a path is logged; flushes that follow it, or that follow a close we
 * started, are quiet.
 */
static void rtrs_clt_wc_failed(struct rtrs_clt_con *con, struct ib_wc *wc,
			       const char *what)
{
	trace_rtrs_clt_con_error(con, what, wc->status);
	if (rtrs_clt_con_flushed_unasked(con, wc)) {
		pr_err_ratelimited("%s: connection %u: %s flushed while connected: its QP failed with no completion saying why\n",
				   con->c.path->sessname, con->c.cid, what);
		WRITE_ONCE(to_clt_path(con->c.path)->err_logged, true);
	} else if (wc->status != IB_WC_WR_FLUSH_ERR &&
		   !rtrs_clt_con_failing(con)) {
		pr_err_ratelimited("%s: connection %u: %s failed: %s\n",
				   con->c.path->sessname, con->c.cid, what,
				   ib_wc_status_msg(wc->status));
		WRITE_ONCE(to_clt_path(con->c.path)->err_logged, true);
	}
	rtrs_clt_path_error(to_clt_path(con->c.path));
}

/* The peer broke the protocol on @con: one line, and the path goes down. */
static void rtrs_clt_proto_error(struct rtrs_clt_con *con, const char *what,
				 u32 val)
{
	if (!rtrs_clt_con_failing(con)) {
		pr_err_ratelimited("%s: connection %u: %s (%#x) from server, closing\n",
				   con->c.path->sessname, con->c.cid, what,
				   val);
		WRITE_ONCE(to_clt_path(con->c.path)->err_logged, true);
	}
	rtrs_clt_path_error(to_clt_path(con->c.path));
}

/* Undo rtrs_clt_rdbufs_alloc(), whatever it got to. */
static void rtrs_clt_rdbufs_free(struct rtrs_clt_path *path)
{
	struct rtrs_clt_rdbufs *rd = &path->rd;
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 i;

	if (rd->mr)
		ib_dereg_mr(rd->mr);
	rd->mr = NULL;
	for (i = 0; rd->pages && i < path->lim.queue_depth; i++) {
		if (!rd->pages[i])
			break;
		if (rd->dma[i])
			ib_dma_unmap_page(ib_dev, rd->dma[i], RTRS_CLT_READ_BUF,
					  DMA_FROM_DEVICE);
		__free_page(rd->pages[i]);
	}
	kfree(rd->dma);
	rd->dma = NULL;
	kfree(rd->pages);
	rd->pages = NULL;
}

/* Map @rd's pages one after the other into its MR and build its REG_MR. */
static int rtrs_clt_rdbufs_reg(struct rtrs_clt_rdbufs *rd, u32 n)
{
	struct scatterlist *sgl, *sg;
	int nr;
	u32 i;

	sgl = rtrs_kcalloc(n, sizeof(*sgl), GFP_KERNEL);
	if (!sgl)
		return -ENOMEM;
	sg_init_table(sgl, n);
	for_each_sg(sgl, sg, n, i) {
		sg_set_page(sg, rd->pages[i], RTRS_CLT_READ_BUF, 0);
		sg_dma_address(sg) = rd->dma[i];
		sg_dma_len(sg) = RTRS_CLT_READ_BUF;
	}
	nr = ib_map_mr_sg(rd->mr, sgl, n, NULL, RTRS_CLT_READ_BUF);
	kfree(sgl);
	if (nr != n)
		return nr < 0 ? nr : -EINVAL;

	rd->reg = (struct ib_reg_wr) {
		.wr.opcode	= IB_WR_REG_MR,
		.wr.wr_cqe	= &rtrs_clt_reg_cqe,
		.mr		= rd->mr,
		.key		= rd->mr->rkey,
		.access		= IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE,
	};
	return 0;
}

/*
 * The read buffers of a 2.1 path whose server takes READ_BUF: a page per
 * request slot, each mapped for the device on its own (the page a
 * response lands in is synced alone), all in one MR.
 */
static int rtrs_clt_rdbufs_alloc(struct rtrs_clt_path *path)
{
	struct rtrs_clt_rdbufs *rd = &path->rd;
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 n = path->lim.queue_depth, i;
	struct ib_mr *mr;

	rd->pages = rtrs_kcalloc(n, sizeof(*rd->pages), GFP_KERNEL);
	rd->dma = rtrs_kcalloc(n, sizeof(*rd->dma), GFP_KERNEL);
	if (!rd->pages || !rd->dma)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		rd->pages[i] = rtrs_fail_last_or(i == n - 1, NULL,
						 alloc_page(GFP_KERNEL));
		if (!rd->pages[i])
			return -ENOMEM;
		rd->dma[i] = ib_dma_map_page(ib_dev, rd->pages[i], 0,
					     RTRS_CLT_READ_BUF,
					     DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(ib_dev, rd->dma[i])) {
			rd->dma[i] = 0;
			return -ENOMEM;
		}
	}
	mr = rtrs_fail_or(ERR_PTR(-ENOMEM),
			  ib_alloc_mr(path->s.dev->ib_pd, IB_MR_TYPE_MEM_REG,
				      rtrs_mr_pages(ib_dev, n)));
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	rd->mr = mr;
	return rtrs_clt_rdbufs_reg(rd, n);
}

/* Free the large MRs; every request is off the path, each MR back. */
static void rtrs_clt_large_free(struct rtrs_clt_path *path)
{
	struct rtrs_clt_large *large = &path->large;

	if (!large->mrs)
		return;
	WARN_ON_ONCE(large->free != large->nr || !list_empty(&large->waiters));
	while (large->free)
		ib_dereg_mr(large->mrs[--large->free]);
	kfree(large->mrs);
	large->mrs = NULL;
}

/*
 * The large MRs of a 2.1 path (see rtrs_clt_large_mrs), all free.  None
 * where the slots' MRs map every request.
 */
static int rtrs_clt_large_alloc(struct rtrs_clt_path *path)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	struct rtrs_clt_large *large = &path->large;
	struct ib_mr *mr;
	u32 pages;

	spin_lock_init(&large->lock);
	INIT_LIST_HEAD(&large->waiters);
	large->kicking = false;
	large->free = 0;
	if (!large->nr)
		return 0;
	large->mrs = rtrs_kcalloc(large->nr, sizeof(*large->mrs), GFP_KERNEL);
	if (!large->mrs)
		return -ENOMEM;
	pages = rtrs_mr_pages(ib_dev, path->max_pages_per_mr);
	while (large->free < large->nr) {
		/* A fault point of its own: the last one, after the others. */
		mr = rtrs_fail_last_or(large->free == large->nr - 1,
				       ERR_PTR(-ENOMEM),
				       ib_alloc_mr(path->s.dev->ib_pd,
						   IB_MR_TYPE_MEM_REG, pages));
		if (IS_ERR(mr)) {
			large->nr = large->free;
			rtrs_clt_large_free(path);
			return PTR_ERR(mr);
		}
		large->mrs[large->free++] = mr;
	}
	return 0;
}

/*
 * A large MR for @req, whose @count mapped entries its slot's MR cannot
 * map: true when @req->mr is one.  While all are in use @req parks
 * instead, in flight from here on, and goes on once one is free
 * (rtrs_clt_large_kick()); false.
 */
static bool rtrs_clt_large_take(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_clt_large *large = &path->large;
	unsigned long flags;
	bool took = false;

	spin_lock_irqsave(&large->lock, flags);
	/* Not ahead of those parked: a kicker hands them the free ones. */
	if (large->free && list_empty(&large->waiters)) {
		req->mr = large->mrs[--large->free];
		took = true;
	} else {
		req->count = count;
		WRITE_ONCE(req->parked, true);
		/* Before a kicker may find it. */
		rtrs_clt_req_start(req);
		list_add_tail(&req->large_entry, &large->waiters);
	}
	spin_unlock_irqrestore(&large->lock, flags);
	return took;
}

/*
 * @req leaves its path or never went out: a large MR it borrowed goes
 * back, to a parked request if one waits, and the slot's own MR is the
 * request's again.  The MR is out of the server's reach by then:
 * invalidated, never registered, or behind a connection in error that the
 * teardown drained.
 */
static void rtrs_clt_large_put(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_clt_large *large = &path->large;
	unsigned long flags;
	bool waiters;

	if (req->mr == req->slot_mr)
		return;
	spin_lock_irqsave(&large->lock, flags);
	if (!WARN_ON_ONCE(large->free >= large->nr))
		large->mrs[large->free++] = req->mr;
	waiters = !list_empty(&large->waiters);
	spin_unlock_irqrestore(&large->lock, flags);
	req->mr = req->slot_mr;
	if (waiters)
		rtrs_clt_large_kick(path);
}

/*
 * Take @req off the waiters if it is parked: the teardown of its path
 * sends it again on another one, or fails it, as one never posted.
 */
static void rtrs_clt_large_unpark(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_large *large =
		&to_clt_path(req->con->c.path)->large;
	unsigned long flags;

	spin_lock_irqsave(&large->lock, flags);
	if (req->parked) {
		list_del_init(&req->large_entry);
		WRITE_ONCE(req->parked, false);
	}
	spin_unlock_irqrestore(&large->lock, flags);
}

/**
 * rtrs_clt_reqs_alloc() - allocate the request slots of a path
 * @path: a path whose admin connection is established.
 *
 * Context: process context, with @path->init_mutex held; sleeps.
 * Return: 0, or -ENOMEM with what was allocated left for
 * rtrs_clt_reqs_free().
 */
int rtrs_clt_reqs_alloc(struct rtrs_clt_path *path)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 qd = path->lim.queue_depth, i, pages;
	u32 nsge = path->max_pages_per_mr + 1, nwr = path->max_write_wrs - 1;
	struct rtrs_clt_io_req *req;
	struct ib_rdma_wr *wrs;
	struct rtrs_iu *ius;
	struct ib_sge *sges;
	struct ib_mr *mr;
	int err;

	lockdep_assert_held(&path->init_mutex);

	/*
	 * 2.0 sends every data entry and the header by RDMA WRITE; 2.1 sends
	 * an inline WRITE's header area and data entries in one SEND.
	 */
	if (rtrs_clt_lim_2_1(&path->lim))
		nsge = path->max_send_sge;

	path->reqs = rtrs_kcalloc(qd, sizeof(*path->reqs), GFP_KERNEL);
	if (!path->reqs)
		return -ENOMEM;
	sges = rtrs_kcalloc(qd, nsge * sizeof(*sges), GFP_KERNEL);
	if (!sges)
		return -ENOMEM;
	path->reqs[0].sge = sges;
	wrs = rtrs_kcalloc(qd, max(nwr, 1U) * sizeof(*wrs), GFP_KERNEL);
	if (!wrs)
		return -ENOMEM;
	path->reqs[0].wrs = wrs;
	/*
	 * The header area every request fills; the rare longer user message
	 * of a 2.1 request without inline data takes a buffer of its own.
	 */
	ius = rtrs_iu_alloc(qd, path->lim.max_hdr_size, GFP_KERNEL, ib_dev,
			    DMA_TO_DEVICE, rtrs_clt_write_done);
	if (!ius)
		return -ENOMEM;

	pages = rtrs_mr_pages(ib_dev, path->slot_pages);
	for (i = 0; i < qd; i++) {
		req = &path->reqs[i];
		req->iu = &ius[i];
		req->sge = &sges[i * nsge];
		req->wrs = &wrs[i * max(nwr, 1U)];
		req->inv_cqe.done = rtrs_clt_inv_done;
		/* One fault point for the MRs: the last, after the others. */
		mr = rtrs_fail_last_or(i == qd - 1, ERR_PTR(-ENOMEM),
				       ib_alloc_mr(path->s.dev->ib_pd,
						   IB_MR_TYPE_MEM_REG, pages));
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		req->mr = mr;
		req->slot_mr = mr;
	}
	err = rtrs_clt_large_alloc(path);
	if (err)
		return err;
	if (path->lim.max_read_buf)
		return rtrs_clt_rdbufs_alloc(path);
	return 0;
}

/**
 * rtrs_clt_reqs_free() - free the request slots of a path
 * @path: the path; its QPs are destroyed.
 *
 * Context: process context, with @path->init_mutex held.
 */
void rtrs_clt_reqs_free(struct rtrs_clt_path *path)
{
	u32 i;

	lockdep_assert_held(&path->init_mutex);

	if (!path->reqs)
		return;
	rtrs_clt_rdbufs_free(path);
	rtrs_clt_large_free(path);
	for (i = 0; i < path->lim.queue_depth; i++)
		if (path->reqs[i].slot_mr)
			ib_dereg_mr(path->reqs[i].slot_mr);
	rtrs_iu_free(path->reqs[0].iu, path->s.dev->ib_dev, path->lim.queue_depth);
	kfree(path->reqs[0].wrs);
	kfree(path->reqs[0].sge);
	kfree(path->reqs);
	path->reqs = NULL;
}

/* Undo rtrs_clt_req_map(), once. */
static void rtrs_clt_req_unmap(struct rtrs_clt_io_req *req)
{
	struct ib_device *ib_dev = req->con->c.path->dev->ib_dev;

	if (req->sg_cnt_mapped)
		ib_dma_unmap_sg(ib_dev, req->sglist, req->sg_cnt_mapped,
				req->dir);
	req->sg_cnt_mapped = 0;
}

/* The buffer of @req's header and user message, and its DMA address. */
static void *rtrs_clt_req_hdr(struct rtrs_clt_io_req *req)
{
	return req->big ?: req->iu->buf;
}

static u64 rtrs_clt_req_hdr_dma(struct rtrs_clt_io_req *req)
{
	return req->big ? req->big_dma : req->iu->dma_addr;
}

/* Free the buffer of rtrs_clt_req_buf(), if it took one. */
static void rtrs_clt_req_buf_put(struct rtrs_clt_io_req *req)
{
	if (!req->big)
		return;
	ib_dma_unmap_single(req->con->c.path->dev->ib_dev, req->big_dma,
			    req->big_len, DMA_TO_DEVICE);
	kfree(req->big);
	req->big = NULL;
}

/* The request leaves its path: no longer in flight there. */
static void rtrs_clt_req_release(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);

	atomic_add(req->sq_wrs, &req->con->c.sq_wr_avail);
	req->sq_wrs = 0;
	rtrs_clt_req_buf_put(req);
	rtrs_clt_large_put(req);
	atomic_dec(&path->stats.inflight);
	WRITE_ONCE(req->in_use, false);
}

/* The request is over: give the user its result, exactly once. */
static void rtrs_clt_req_complete(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);

	trace_rtrs_clt_complete(req, req - path->reqs);
	req->done_at = jiffies;
	rtrs_clt_req_unmap(req);
	rtrs_clt_req_release(req);
	/* Before the user may send with the permit again. */
	rtrs_clt_chunk_move(path->clt, req->permit);
	req->conf(req->priv, req->status);
}

static void rtrs_clt_req_put(struct rtrs_clt_io_req *req)
{
	if (--req->pending)
		return;
	rtrs_clt_req_complete(req);
}

/* The request whose header buffer is @iu. */
static struct rtrs_clt_io_req *rtrs_clt_iu_req(struct rtrs_clt_con *con,
					       struct rtrs_iu *iu)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);

	return &path->reqs[iu - path->reqs[0].iu];
}

/*
 * The request's WRITE WITH IMMEDIATE (2.0) or SEND (2.1), signaled, or one
 * of the RDMA WRITEs before it or an unsignaled SEND (only when they
 * fail): on success the send queue is past everything posted before it,
 * the unsignaled requests it stands for included.  A failure leaves the
 * request to the path's teardown.
 */
static void rtrs_clt_write_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);
	struct rtrs_iu *iu = container_of(wc->wr_cqe, struct rtrs_iu, cqe);
	struct rtrs_clt_io_req *req;

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_clt_wc_failed(con, wc, "request");
		return;
	}
	req = rtrs_clt_iu_req(con, iu);
	rtrs_clt_send_retire(con, req);
	rtrs_clt_req_put(req);
}

static void rtrs_clt_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS)
		rtrs_clt_wc_failed(rtrs_clt_wc_con(wc), wc, "memory registration");
}

static void rtrs_clt_inv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_io_req *req = container_of(wc->wr_cqe,
						   struct rtrs_clt_io_req,
						   inv_cqe);

	/*
	 * The path goes down and its teardown fails the request over; the
	 * server cannot reach the MR through a QP in error.
	 */
	if (wc->status != IB_WC_SUCCESS) {
		rtrs_clt_wc_failed(rtrs_clt_wc_con(wc), wc, "invalidation");
		return;
	}
	req->mr_valid = false;
	rtrs_clt_req_put(req);
}

/**
 * rtrs_clt_hb_done() - completion of a heartbeat or heartbeat ack write
 * @cq: the CQ.
 * @wc: the work completion.
 *
 * Context: softirq, or the drain.
 */
void rtrs_clt_hb_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status != IB_WC_SUCCESS)
		rtrs_clt_wc_failed(rtrs_clt_wc_con(wc), wc, "heartbeat");
}

/**
 * rtrs_clt_probe_done() - completion of a connection's stall probe
 * @cq: the CQ.
 * @wc: the work completion.
 *
 * Every work request posted before the probe has been acknowledged: the
 * connection moves.
 *
 * Context: softirq, or the drain.
 */
void rtrs_clt_probe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_clt_wc_failed(con, wc, "stall probe");
		return;
	}
	WRITE_ONCE(con->probe_sent, 0);
}

/* Ask for a completion behind everything @con posted so far. */
static void rtrs_clt_con_probe(struct rtrs_clt_con *con)
{
	WRITE_ONCE(con->probe_sent, jiffies ?: 1);
	if (rtrs_post_probe_write(&con->c, &con->probe_cqe))
		rtrs_clt_path_error(to_clt_path(con->c.path));
}

/*
 * Is @con stuck?  Probe it when @req has waited too long and no probe is
 * out; stuck when the probe out has waited too long itself.
 */
static bool rtrs_clt_con_stuck(struct rtrs_clt_con *con,
			       struct rtrs_clt_io_req *req)
{
	unsigned long probe = READ_ONCE(con->probe_sent);

	if (probe)
		return time_after(jiffies, probe +
				  msecs_to_jiffies(RTRS_CLT_PROBE_MS));
	if (time_after(jiffies, READ_ONCE(req->sent_at) +
		       msecs_to_jiffies(RTRS_CLT_STALL_MS)))
		rtrs_clt_con_probe(con);
	return false;
}

/*
 * Has @req gone without a response for @timeout seconds (0: never)?  Its
 * connection may still move (probes complete) while the server never
 * responds to it.
 */
static bool rtrs_clt_req_expired(struct rtrs_clt_io_req *req, u32 timeout)
{
	return timeout && time_after(jiffies, READ_ONCE(req->sent_at) +
				     (unsigned long)timeout * HZ);
}

/**
 * rtrs_clt_wd_work() - the watchdog of a connected path
 * @work: &rtrs_clt_path.wd_dwork.
 *
 * A connection can stop moving without reporting an error (rxe, for one,
 * can wedge a QP whose retransmission meets a fast registration it
 * already executed); its requests would wait forever while heartbeats on
 * the admin connection keep the path up.  Every heartbeat interval the
 * watchdog looks at the requests in flight and probes the connections of
 * old ones; a probe that does not complete fails the path, whose teardown
 * moves the requests to other paths.  So does a request that waited the
 * session's io_timeout_sec for its response on a connection that moves.
 *
 * Context: process context, on rtrs_clt_wq.
 */
void rtrs_clt_wd_work(struct work_struct *work)
{
	struct rtrs_clt_path *path = container_of(to_delayed_work(work),
						  struct rtrs_clt_path,
						  wd_dwork);
	u32 timeout = READ_ONCE(path->clt->io_timeout_sec);
	struct rtrs_clt_io_req *req;
	u32 i;

	if (!rtrs_clt_path_connected(path))
		return;
	for (i = 0; i < path->lim.queue_depth; i++) {
		req = &path->reqs[i];
		/* Pairs with the release in rtrs_clt_req_start(). */
		if (!smp_load_acquire(&req->in_use))
			continue;
		/* A parked request waits for those that hold large MRs. */
		if (READ_ONCE(req->parked))
			continue;
		if (rtrs_clt_req_expired(req, timeout)) {
			/* tests/e2e/hostile.sh matches this line: keep it. */
			pr_warn_ratelimited("%s: connection %u: a request waited %u s for its answer, closing the path\n",
					    path->s.sessname, req->con->c.cid,
					    timeout);
			rtrs_clt_path_error(path);
			return;
		}
		if (!rtrs_clt_con_stuck(req->con, req))
			continue;
		pr_warn_ratelimited("%s: connection %u stopped moving, closing the path\n",
				    path->s.sessname, req->con->c.cid);
		rtrs_clt_path_error(path);
		return;
	}
	queue_delayed_work(rtrs_clt_wq, &path->wd_dwork,
			   msecs_to_jiffies(RTRS_HB_INTERVAL_MS));
}

/*
 * The send of @req's LOCAL_INV: the server did not invalidate @req->mr.
 * Its send queue entry was taken with the request's.
 */
static int rtrs_clt_post_inv(struct rtrs_clt_io_req *req)
{
	struct ib_send_wr wr = {
		.opcode			= IB_WR_LOCAL_INV,
		.wr_cqe			= &req->inv_cqe,
		.send_flags		= IB_SEND_SIGNALED,
		.ex.invalidate_rkey	= req->mr->rkey,
	};

	return ib_post_send(req->con->c.qp, &wr, NULL);
}

/*
 * Does @req, @in_use as read with acquire, await its response on @con?
 * Not when answered, nor when parked: it has not been posted yet.
 */
static bool rtrs_clt_req_awaits(struct rtrs_clt_io_req *req,
				struct rtrs_clt_con *con, bool in_use)
{
	return in_use && req->con == con && !req->responded &&
	       !READ_ONCE(req->parked);
}

/*
 * The slot of request @msg_id, if one in flight on @con awaits its
 * response.
 */
static struct rtrs_clt_io_req *rtrs_clt_rsp_req(struct rtrs_clt_con *con,
						u32 msg_id)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct rtrs_clt_io_req *req;

	if (msg_id >= path->lim.queue_depth)
		return NULL;
	req = &path->reqs[msg_id];
	/* Pairs with the release in rtrs_clt_req_start(). */
	return rtrs_clt_req_awaits(req, con, smp_load_acquire(&req->in_use)) ?
	       req : NULL;
}

/*
 * 2.1: the request that the response of @msg_id answers, on a path that
 * may tag message ids; its tag is @tag_bits wide (%RTRS_MSG_TAG_BITS in a
 * SEND, %RTRS_IMM_TAG_BITS in an immediate).  NULL when none waits for
 * it; then *@stale says whether it is a copy of a response already taken
 * (one of the slot's earlier requests' within half the tag's range, or
 * one more of its last request's, which is done or answered): such a
 * copy is dropped, anything else is a lie that closes the path.
 */
static struct rtrs_clt_io_req *rtrs_clt_rsp_req_2_1(struct rtrs_clt_con *con,
						    u32 msg_id,
						    unsigned int tag_bits,
						    bool *stale)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	u32 slot = rtrs_msg_slot(msg_id);
	struct rtrs_clt_io_req *req;
	bool in_use;
	int age;

	*stale = false;
	if (!rtrs_clt_lim_tags(&path->lim))
		return rtrs_clt_rsp_req(con, msg_id);
	if (slot >= path->lim.queue_depth)
		return NULL;
	req = &path->reqs[slot];
	/*
	 * One read of in_use decides: pairs with the release in
	 * rtrs_clt_req_start(), after which the tag of a new request of the
	 * slot, set before it (rtrs_clt_req_init()), is seen.
	 */
	in_use = smp_load_acquire(&req->in_use);
	age = rtrs_msg_tag_age(READ_ONCE(req->tag), rtrs_msg_tag(msg_id),
			       tag_bits);
	if (!age && rtrs_clt_req_awaits(req, con, in_use))
		return req;
	*stale = age > 0 || (!age && (!in_use || req->responded));
	return NULL;
}

/* 2.1: drop @msg_id's response, a copy of one already taken. */
static void rtrs_clt_stale_rsp(struct rtrs_clt_con *con, u32 msg_id)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);

	this_cpu_inc(path->stats.pcpu->stale_rsps);
	pr_debug("%s: connection %u: dropped a copy of the response of 0x%x\n",
		 path->s.sessname, con->c.cid, msg_id);
}

/* Milliseconds since @t, in jiffies, or 0 for never. */
static unsigned int rtrs_clt_ms_since(unsigned long t)
{
	return t ? jiffies_to_msecs(jiffies - t) : 0;
}

/*
 * A response for @msg_id (tagged or not, as the path agreed) found no
 * request waiting for it: a protocol error that closes the path.  What
 * the slot holds goes to the log with it, to tell a late or repeated
 * response (the slot's request done, or answered) from one that names an
 * id never sent.
 */
static void rtrs_clt_stray_rsp(struct rtrs_clt_con *con, u32 val, u32 msg_id)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct rtrs_clt_io_req *req;

	if (rtrs_clt_lim_tags(&path->lim))
		msg_id = rtrs_msg_slot(msg_id);
	if (msg_id < path->lim.queue_depth && !rtrs_clt_con_failing(con)) {
		req = &path->reqs[msg_id];
		pr_err_ratelimited("%s: connection %u: id %u: in flight %d on connection %d, answered %d, parked %d, tag %u; sent %u ms ago, done %u ms ago\n",
				   path->s.sessname, con->c.cid, msg_id,
				   READ_ONCE(req->in_use),
				   req->con ? (int)req->con->c.cid : -1,
				   req->responded, READ_ONCE(req->parked),
				   READ_ONCE(req->tag),
				   rtrs_clt_ms_since(READ_ONCE(req->sent_at)),
				   rtrs_clt_ms_since(req->done_at));
	}
	/* tests/e2e/hostile.sh matches this reason: keep it. */
	rtrs_clt_proto_error(con, "answer to no request", val);
}

/*
 * The server responded to @req; its MR (a READ's, or a 2.1 WRITE's that
 * did not go inline) is invalidated before completing, unless the server
 * did that (@w_inv).  When that cannot be posted the MR stays open to the
 * server: the request is left to the path's teardown, which completes it,
 * or sends it again, only once the connection is drained and the MR out
 * of reach.
 */
static void rtrs_clt_req_responded(struct rtrs_clt_io_req *req, int errno,
				   bool w_inv)
{
	int err;

	req->responded = true;
	req->status = errno;
	if (w_inv)
		req->mr_valid = false;
	if (req->mr_valid) {
		err = rtrs_clt_post_inv(req);
		if (err) {
			pr_err_ratelimited("%s: invalidating MR failed: %d\n",
					   req->con->c.path->sessname, err);
			rtrs_clt_path_error(to_clt_path(req->con->c.path));
			return;
		}
		req->pending++;
	}
	rtrs_clt_req_put(req);
}

/*
 * Did the server invalidate @req's MR?  Believe a response that says so
 * only for the rkey a SEND WITH INVALIDATE really invalidated just before
 * it on this connection; else the MR would stay open to the server.
 */
static bool rtrs_clt_rsp_invalidated(struct rtrs_clt_con *con,
				     struct rtrs_clt_io_req *req, u32 imm)
{
	bool inv = rtrs_imm_type(imm) == RTRS_IO_RSP_W_INV_IMM &&
		   con->inv_seen && req->mr && con->inv_rkey == req->mr->rkey;

	con->inv_seen = false;
	return inv;
}

static int rtrs_clt_io_rsp(struct rtrs_clt_con *con, u32 imm)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct rtrs_clt_io_req *req = NULL;
	u32 msg_id = U32_MAX;
	int errno;

	if (!rtrs_clt_check_io_rsp(imm, path->lim.queue_depth, &msg_id, &errno))
		req = rtrs_clt_rsp_req(con, msg_id);
	if (!req) {
		rtrs_clt_stray_rsp(con, imm, msg_id);
		return -EPROTO;
	}
	rtrs_clt_req_responded(req, errno,
			       rtrs_clt_rsp_invalidated(con, req, imm));
	return 0;
}

/*
 * 2.1: copy a READ_BUF's data from the read buffer of its slot to the
 * user's pages; false when they hold less.
 */
static bool rtrs_clt_read_buf_copy(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 slot = req - path->reqs;
	size_t n;

	ib_dma_sync_single_for_cpu(ib_dev, path->rd.dma[slot], req->data_len,
				   DMA_FROM_DEVICE);
	n = sg_copy_from_buffer(req->sglist, req->sg_cnt,
				page_address(path->rd.pages[slot]),
				req->data_len);
	ib_dma_sync_single_for_device(ib_dev, path->rd.dma[slot],
				      req->data_len, DMA_FROM_DEVICE);
	return n == req->data_len;
}

/*
 * 2.1: the RDMA WRITE WITH IMMEDIATE that responds to a READ_BUF, of
 * @len bytes: the data in the request's read buffer, all of it, or none
 * with an error.  Nothing to invalidate: the buffer stays registered.
 */
static int rtrs_clt_read_buf_rsp(struct rtrs_clt_con *con, u32 imm, u32 len)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	/* Tagged: the slot and the tag decide (rtrs_clt_rsp_req_2_1()). */
	u32 ids = rtrs_clt_lim_tags(&path->lim) ? RTRS_IMM_MSG_ID_MASK + 1 :
		  path->lim.queue_depth;
	struct rtrs_clt_io_req *req = NULL;
	u32 msg_id = U32_MAX;
	bool stale = false;
	int errno = 0;

	if (rtrs_imm_type(imm) == RTRS_IO_RSP_IMM &&
	    !rtrs_clt_check_io_rsp(imm, ids, &msg_id, &errno))
		req = rtrs_clt_rsp_req_2_1(con, msg_id, RTRS_IMM_TAG_BITS,
					   &stale);
	if (stale) {
		rtrs_clt_stale_rsp(con, imm);
		return 0;
	}
	if (!req || !req->read_buf) {
		rtrs_clt_stray_rsp(con, imm, msg_id);
		return -EPROTO;
	}
	if (len != (errno ? 0 : req->data_len)) {
		rtrs_clt_proto_error(con, "READ_BUF answer of a wrong length",
				     len);
		return -EPROTO;
	}
	if (!errno && !rtrs_clt_read_buf_copy(req))
		errno = -EIO;
	rtrs_clt_req_responded(req, errno, false);
	return 0;
}

/*
 * An RDMA WRITE WITH IMMEDIATE of the server: response (2.0, or a 2.1
 * READ_BUF's) or heartbeat.
 */
static int rtrs_clt_process_imm(struct rtrs_clt_con *con, struct ib_wc *wc)
{
	u32 imm = be32_to_cpu(wc->ex.imm_data);

	switch (rtrs_imm_type(imm)) {
	case RTRS_IO_RSP_IMM:
	case RTRS_IO_RSP_W_INV_IMM:
		if (rtrs_clt_lim_2_1(&to_clt_path(con->c.path)->lim))
			return rtrs_clt_read_buf_rsp(con, imm, wc->byte_len);
		return rtrs_clt_io_rsp(con, imm);
	case RTRS_HB_MSG_IMM:
		rtrs_send_hb_ack(con->c.path);
		return 0;
	case RTRS_HB_ACK_IMM:
		rtrs_hb_ack_received(con->c.path);
		return 0;
	}
	rtrs_clt_proto_error(con, "unknown immediate", imm);
	return -EPROTO;
}

/*
 * A SEND without immediate is the server's SEND WITH INVALIDATE of a
 * READ's MR; its response follows as an immediate.
 */
static int rtrs_clt_process_send(struct rtrs_clt_con *con, struct ib_wc *wc)
{
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		con->inv_rkey = wc->ex.invalidate_rkey;
		con->inv_seen = true;
		return 0;
	}
	rtrs_clt_proto_error(con, "unexpected send", wc->byte_len);
	return -EPROTO;
}

/**
 * rtrs_clt_recv_done() - completion of a receive without buffer
 * @cq: the CQ.
 * @wc: the work completion.
 *
 * Takes responses and heartbeats (RDMA WRITE WITH IMMEDIATE) and the
 * server's invalidations, then posts the receive again.
 *
 * Context: softirq, rtrs_clt_rdma_cq_direct(), or the drain.
 */
void rtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);
	int err;

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_clt_wc_failed(con, wc, "receive");
		return;
	}
	rtrs_hb_received(con->c.path);
	rtrs_clt_steer_note(to_clt_path(con->c.path), con,
			    raw_smp_processor_id());

	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		err = rtrs_clt_process_imm(con, wc);
	else
		err = rtrs_clt_process_send(con, wc);
	if (err)
		return;

	err = rtrs_post_recv_empty(&con->c, &con->recv_cqe);
	if (err)
		rtrs_clt_proto_error(con, "posting receive failed", err);
}

/* Under always-invalidate the response brings the chunk's next rkey. */
static int rtrs_clt_process_rkey_rsp(struct rtrs_clt_con *con,
				     struct rtrs_iu *iu, struct ib_wc *wc)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	u32 imm = be32_to_cpu(wc->ex.imm_data);
	struct rtrs_clt_io_req *req;
	u32 msg_id, rkey;
	int errno;

	if (rtrs_clt_check_rkey_rsp(iu->buf, wc->byte_len, imm,
				    path->lim.queue_depth, &msg_id, &errno, &rkey)) {
		rtrs_clt_proto_error(con, "malformed rkey response", imm);
		return -EPROTO;
	}
	req = rtrs_clt_rsp_req(con, msg_id);
	if (!req) {
		rtrs_clt_proto_error(con, "rkey response to no request", imm);
		return -EPROTO;
	}
	path->rbufs[msg_id].rkey = rkey;
	rtrs_clt_req_responded(req, errno,
			       rtrs_clt_rsp_invalidated(con, req, imm));
	return 0;
}

/*
 * 2.1: did the response, a SEND WITH INVALIDATE, invalidate @req's MR?
 * Only the rkey the completion names counts.
 */
static bool rtrs_clt_rsp_invalidated_2_1(struct rtrs_clt_io_req *req,
					 struct ib_wc *wc)
{
	return wc->wc_flags & IB_WC_WITH_INVALIDATE && req->mr_valid &&
	       wc->ex.invalidate_rkey == req->mr->rkey;
}

/* 2.1: one response of a SEND, checked, for a request of @con. */
static int rtrs_clt_one_rsp_2_1(struct rtrs_clt_con *con,
				const struct rtrs_msg_io_rsp *msg,
				struct ib_wc *wc)
{
	u32 msg_id = le32_to_cpu(msg->msg_id);
	struct rtrs_clt_io_req *req;
	bool stale;

	req = rtrs_clt_rsp_req_2_1(con, msg_id, RTRS_MSG_TAG_BITS, &stale);
	if (stale) {
		rtrs_clt_stale_rsp(con, msg_id);
		return 0;
	}
	if (!req) {
		rtrs_clt_stray_rsp(con, msg_id, msg_id);
		return -EPROTO;
	}
	/* A READ_BUF's response comes with its data, as an immediate. */
	if (req->read_buf) {
		rtrs_clt_proto_error(con, "SEND answer to a READ_BUF", msg_id);
		return -EPROTO;
	}
	rtrs_clt_req_responded(req, (s16)le16_to_cpu(msg->errno),
			       rtrs_clt_rsp_invalidated_2_1(req, wc));
	return 0;
}

/*
 * 2.1: a SEND of the server in @iu: a struct rtrs_msg_io_rsp, or several
 * packed where @con asked for that.  All are checked before any request
 * completes; a request answered twice in one pack finds itself answered.
 */
static int rtrs_clt_io_rsp_2_1(struct rtrs_clt_con *con, struct rtrs_iu *iu,
			       struct ib_wc *wc)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	const struct rtrs_msg_io_rsp *msg = iu->buf;
	int i, n, err;

	n = rtrs_clt_check_io_rsps_2_1(iu->buf, wc->byte_len,
				       con->packed ? RTRS_IO_RSP_PACK_MAX : 1,
				       wc->wc_flags & IB_WC_WITH_INVALIDATE,
				       path->lim.queue_depth,
				       rtrs_clt_lim_tags(&path->lim));
	if (n < 0) {
		rtrs_clt_proto_error(con, "malformed response",
				     le32_to_cpup(iu->buf));
		return -EPROTO;
	}
	for (i = 0; i < n; i++) {
		err = rtrs_clt_one_rsp_2_1(con, &msg[i], wc);
		if (err)
			return err;
	}
	if (n > 1)
		this_cpu_add(path->stats.pcpu->packed_rsps, n);
	return 0;
}

/*
 * What a receive with buffer brought: the immediate of an RDMA WRITE
 * WITH IMMEDIATE (a heartbeat, or a 2.0 response), a 2.1 response, an
 * always-invalidate rkey response, or a 2.0 SEND WITH INVALIDATE.
 */
static int rtrs_clt_recv_iu(struct rtrs_clt_con *con, struct rtrs_iu *iu,
			    struct ib_wc *wc)
{
	if (wc->opcode == IB_WC_RECV_RDMA_WITH_IMM)
		return rtrs_clt_process_imm(con, wc);
	if (rtrs_clt_lim_2_1(&to_clt_path(con->c.path)->lim))
		return rtrs_clt_io_rsp_2_1(con, iu, wc);
	if (wc->wc_flags & IB_WC_WITH_IMM)
		return rtrs_clt_process_rkey_rsp(con, iu, wc);
	return rtrs_clt_process_send(con, wc);
}

/**
 * rtrs_clt_recv_iu_done() - completion of a receive with buffer
 * @cq: the CQ.
 * @wc: the work completion.
 *
 * Used by a 2.1 path, whose server responds with a SEND, and by a 2.0
 * path whose server announces new rkeys: takes what rtrs_clt_recv_done()
 * takes and those responses (see rtrs_clt_recv_iu()), then posts the
 * buffer again.  A heartbeat leaves the buffer alone.
 *
 * Context: softirq, rtrs_clt_rdma_cq_direct(), or the drain.
 */
void rtrs_clt_recv_iu_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);
	struct rtrs_iu *iu = container_of(wc->wr_cqe, struct rtrs_iu, cqe);
	struct ib_device *ib_dev = con->c.path->dev->ib_dev;
	int err;

	if (wc->status != IB_WC_SUCCESS) {
		rtrs_clt_wc_failed(con, wc, "receive");
		return;
	}
	rtrs_hb_received(con->c.path);
	rtrs_clt_steer_note(to_clt_path(con->c.path), con,
			    raw_smp_processor_id());

	ib_dma_sync_single_for_cpu(ib_dev, iu->dma_addr, iu->size,
				   DMA_FROM_DEVICE);
	err = rtrs_clt_recv_iu(con, iu, wc);
	if (err)
		return;

	ib_dma_sync_single_for_device(ib_dev, iu->dma_addr, iu->size,
				      DMA_FROM_DEVICE);
	err = rtrs_iu_post_recv(&con->c, iu);
	if (err)
		rtrs_clt_proto_error(con, "posting receive failed", err);
}

/*
 * The IO connection of the permit's CPU, whatever its connection type, or
 * the one steered to (rtrs_clt_steer_con()): the admin connection carries
 * the path's own messages only (its information exchange and heartbeats),
 * so its queues are sized for those and cost a few KiB instead of a queue
 * depth of requests.  A 2.1 server takes requests on its IO connections
 * only; a 2.0 server, ours or mainline's, serves a request on whichever
 * connection it came, and responds there.
 */
static struct rtrs_clt_con *rtrs_clt_permit_con(struct rtrs_clt_path *path,
						struct rtrs_permit *permit)
{
	struct rtrs_clt_con *con;
	bool steered;

	if (!READ_ONCE(rtrs_clt_steer))
		return rtrs_clt_path_con(path, permit->cpu %
					 (path->s.irq_con_num - 1) + 1);
	con = rtrs_clt_steer_con(path, permit->cpu, &steered);
	if (steered)
		this_cpu_inc(path->stats.pcpu->steered);
	return con;
}

/* Map the user's data; 0 entries for a request without data. */
static int rtrs_clt_req_map(struct rtrs_clt_io_req *req)
{
	struct ib_device *ib_dev = req->con->c.path->dev->ib_dev;
	int count;

	if (!req->sg_cnt)
		return 0;
	count = ib_dma_map_sg(ib_dev, req->sglist, req->sg_cnt, req->dir);
	if (!count)
		return -EIO;
	req->sg_cnt_mapped = req->sg_cnt;
	return count;
}

/*
 * Pages of 4 KiB the request's data spans in an MR: from the page of its
 * first byte to that of its last, the entries between them mapping
 * whole pages (any other list fails to map).
 */
static u32 rtrs_clt_req_pages(struct rtrs_clt_io_req *req)
{
	u64 first = sg_dma_address(req->sglist) & (SZ_4K - 1);

	return DIV_ROUND_UP(first + req->data_len, SZ_4K);
}

/*
 * Map the @count mapped entries on the request's MR: its slot's, or,
 * when they span more pages than that one maps, a large MR of the path
 * (one a parked request was handed already, or one taken now):
 * -EINPROGRESS when the request parked to wait for one, in flight.
 */
static int rtrs_clt_req_map_mr(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	int nr;

	if (path->large.nr && req->mr == req->slot_mr &&
	    rtrs_clt_req_pages(req) > path->slot_pages) {
		this_cpu_inc(path->stats.pcpu->large_mrs);
		if (!rtrs_clt_large_take(req, count)) {
			this_cpu_inc(path->stats.pcpu->large_waits);
			return -EINPROGRESS;
		}
	}
	nr = ib_map_mr_sg(req->mr, req->sglist, count, NULL, SZ_4K);
	if (nr == count)
		return 0;
	return nr < 0 ? nr : -EINVAL;
}

/*
 * Register the @count mapped entries (ib_dma_map_sg() may have merged
 * some) with the request's MR, under a fresh rkey, and build its REG_MR
 * in @rwr; *@head is the first work request to post.  Where local
 * operations may run twice, the key stays and a LOCAL_INV in @inv goes
 * first (see rtrs_replays_local_ops()).
 */
static int rtrs_clt_req_reg(struct rtrs_clt_io_req *req, int count,
			    int access, struct ib_reg_wr *rwr,
			    struct ib_send_wr *inv, struct ib_send_wr **head)
{
	struct ib_device *ib_dev = req->con->c.path->dev->ib_dev;
	int err;

	err = rtrs_clt_req_map_mr(req, count);
	if (err)
		return err;
	if (req->mr->length != req->data_len)
		return -EINVAL;

	*rwr = (struct ib_reg_wr) {
		.wr.opcode	= IB_WR_REG_MR,
		.wr.wr_cqe	= &rtrs_clt_reg_cqe,
		.mr		= req->mr,
		.access		= access,
	};
	*head = &rwr->wr;
	if (rtrs_replays_local_ops(ib_dev)) {
		*inv = (struct ib_send_wr) {
			.opcode			= IB_WR_LOCAL_INV,
			.wr_cqe			= &rtrs_clt_reg_cqe,
			.ex.invalidate_rkey	= req->mr->rkey,
			.next			= &rwr->wr,
		};
		*head = inv;
	} else {
		ib_update_fast_reg_key(req->mr, ib_inc_rkey(req->mr->rkey));
	}
	rwr->key = req->mr->rkey;
	return 0;
}

/*
 * SGEs in @sge of the mapped data entries themselves; their total must be
 * @len.  An empty one would fail the post (see
 * rtrs_iu_post_rdma_write_imm()), and the path with it: refuse it here.
 */
static int rtrs_clt_req_direct_sges(struct rtrs_clt_io_req *req,
				    struct ib_sge *sge, int count)
{
	u32 lkey = req->con->c.path->dev->ib_pd->local_dma_lkey;
	struct scatterlist *sg;
	u64 total = 0;
	int i;

	for_each_sg(req->sglist, sg, count, i) {
		if (!sg_dma_len(sg))
			return -EINVAL;
		sge[i].addr = sg_dma_address(sg);
		sge[i].length = sg_dma_len(sg);
		sge[i].lkey = lkey;
		total += sg_dma_len(sg);
	}
	return total == req->data_len ? 0 : -EINVAL;
}

/*
 * 2.1: the message id of @req: its slot, and on a path that tags message
 * ids, the slot's count of requests (rtrs_msg_id()).
 */
static __le32 rtrs_clt_msg_id(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	u32 slot = req - path->reqs;

	if (!rtrs_clt_lim_tags(&path->lim))
		return cpu_to_le32(slot);
	return cpu_to_le32(rtrs_msg_id(slot, req->tag));
}

/*
 * The request is about to go out: from here on it is in flight, and an
 * response may find it.  Everything a response or the watchdog reads is
 * set.
 */
static void rtrs_clt_req_start(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);

	atomic_inc(&path->stats.inflight);
	WRITE_ONCE(req->sent_at, jiffies);
	/* The watchdog and the responses read the slot of a request in use. */
	smp_store_release(&req->in_use, true);
	trace_rtrs_clt_submit(req, req - path->reqs);
}

/*
 * Posting failed with the request in flight: a server may have responded
 * to it, part of it may have gone out (a REG_MR, say).  The path goes down;
 * its teardown, after draining the connection, sends the request again
 * or completes it, once.
 */
static void rtrs_clt_req_lost(struct rtrs_clt_io_req *req, int err)
{
	pr_err_ratelimited("%s: connection %u: posting a request failed: %d\n",
			   req->con->c.path->sessname, req->con->c.cid, err);
	rtrs_clt_path_error(to_clt_path(req->con->c.path));
}

/*
 * Post the WRITE WITH IMMEDIATE of @nsge data SGEs from @first on, then
 * the header buffer, to @remote_off in the request's chunk, after @head.
 * The request takes @nwr send queue entries: @head's, the write's and a
 * LOCAL_INV's it may post later.
 *
 * Return: 0 when the request is in flight, posted or left to the path's
 * teardown; -EAGAIN, with nothing posted, when the send queue is full.
 */
static int rtrs_clt_req_post(struct rtrs_clt_io_req *req, unsigned int first,
			     unsigned int nsge, u32 hdr_len, u64 remote_off,
			     struct ib_send_wr *head, u32 nwr)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_rbuf *rbuf = &path->rbufs[req - path->reqs];
	struct ib_sge *sge = &req->sge[first];
	u32 imm;
	int err;

	if (!rtrs_clt_sq_get(req->con, nwr))
		return -EAGAIN;
	req->sq_wrs = nwr;

	sge[nsge] = (struct ib_sge) {
		.addr	= req->iu->dma_addr,
		.length	= hdr_len,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, req->iu->dma_addr,
				      hdr_len, DMA_TO_DEVICE);

	imm = rtrs_io_req_imm(req - path->reqs, req->data_len + req->usr_len,
			      path->lim.off_bits);
	rtrs_clt_req_start(req);
	err = rtrs_iu_post_rdma_write_imm(&req->con->c, req->iu, sge,
					  nsge + 1, rbuf->rkey,
					  rbuf->addr + remote_off, imm, 0,
					  head, NULL);
	if (err)
		rtrs_clt_req_lost(req, err);
	return 0;
}

/*
 * Chain plain RDMA WRITEs of the data entries that do not fit the WRITE
 * WITH IMMEDIATE, max_send_sge entries each, each to its place in the
 * chunk; return the number of entries they carry, and in *@off the bytes.
 */
static unsigned int rtrs_clt_write_head(struct rtrs_clt_io_req *req,
					int count, struct ib_send_wr **head,
					u64 *off)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_rbuf *rbuf = &path->rbufs[req - path->reqs];
	unsigned int per_wr = path->max_send_sge, done = 0, n = 0, j;

	*head = NULL;
	*off = 0;
	while (count - done + 1 > per_wr) {
		struct ib_rdma_wr *wr = &req->wrs[n];

		*wr = (struct ib_rdma_wr) {
			.wr.opcode	= IB_WR_RDMA_WRITE,
			.wr.wr_cqe	= &req->iu->cqe,
			.wr.sg_list	= &req->sge[done],
			.wr.num_sge	= per_wr,
			.remote_addr	= rbuf->addr + *off,
			.rkey		= rbuf->rkey,
		};
		for (j = 0; j < per_wr; j++)
			*off += req->sge[done + j].length;
		if (n)
			req->wrs[n - 1].wr.next = &wr->wr;
		else
			*head = &wr->wr;
		done += per_wr;
		n++;
	}
	return done;
}

/*
 * WRITE: data, user message and header in one RDMA WRITE WITH IMMEDIATE;
 * data entries beyond what one WRITE takes go first in plain RDMA WRITEs
 * on the same connection, which the QP delivers before the immediate.
 * No memory registration: the data is sent from its DMA addresses.
 */
static int rtrs_clt_write_req(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_msg_rdma_write *msg = req->iu->buf + req->usr_len;
	u32 hdr_len = req->usr_len + sizeof(*msg);
	struct ib_send_wr *head;
	unsigned int done;
	u64 off;
	int err;

	msg->type = cpu_to_le16(RTRS_MSG_WRITE);
	msg->usr_len = cpu_to_le16(req->usr_len);

	err = rtrs_clt_req_direct_sges(req, req->sge, count);
	if (err)
		return err;
	done = rtrs_clt_write_head(req, count, &head, &off);
	/* The RDMA WRITEs of @head, max_send_sge entries each, and the last. */
	return rtrs_clt_req_post(req, done, count - done, hdr_len, off, head,
				 done / path->max_send_sge + 1);
}

/*
 * READ: user message and header, whose one descriptor is the MR the
 * server writes into and then invalidates.
 */
static int rtrs_clt_read_req(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_msg_rdma_read *msg = req->iu->buf + req->usr_len;
	u32 hdr_len = req->usr_len + sizeof(*msg);
	struct ib_send_wr *head = NULL, inv;
	struct ib_reg_wr rwr;
	u32 nwr = 1;
	int err;

	msg->type = cpu_to_le16(RTRS_MSG_READ);
	msg->usr_len = cpu_to_le16(req->usr_len);
	msg->flags = 0;
	msg->sg_cnt = 0;
	if (count) {
		err = rtrs_clt_req_reg(req, count, IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE, &rwr, &inv, &head);
		if (err)
			return err;
		msg->flags = cpu_to_le16(RTRS_MSG_NEED_INVAL_F);
		msg->sg_cnt = cpu_to_le16(1);
		msg->desc[0].addr = cpu_to_le64(req->mr->iova);
		msg->desc[0].key = cpu_to_le32(req->mr->rkey);
		msg->desc[0].len = cpu_to_le32(req->mr->length);
		hdr_len += sizeof(msg->desc[0]);
		req->mr_valid = true;
		/* REG_MR, the LOCAL_INV before it, the LOCAL_INV after. */
		nwr += (head == &inv ? 2 : 1) + 1;
	}
	return rtrs_clt_req_post(req, 0, 0, hdr_len, req->data_len, head, nwr);
}

/*
 * 2.1: post the SEND of @nsge SGEs from @sge, whose first is the request's
 * header buffer (@hdr_len bytes of it), after @head.  The request takes
 * @nwr send queue entries: @head's, the SEND's and a LOCAL_INV's it may
 * post later.  A SEND of the slot's header buffer alone may go unsignaled
 * (rtrs_clt_send_signal()); one with data entries, or with a header
 * buffer of the request's own, is signaled, and the request waits for its
 * completion.
 *
 * Return: as rtrs_clt_req_post().
 */
static int rtrs_clt_send_post(struct rtrs_clt_io_req *req, struct ib_sge *sge,
			      unsigned int nsge, u32 hdr_len,
			      struct ib_send_wr *head, u32 nwr)
{
	struct rtrs_clt_con *con = req->con;
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct ib_send_wr wr = {
		.wr_cqe		= &req->iu->cqe,
		.sg_list	= sge,
		.num_sge	= nsge,
		.opcode		= IB_WR_SEND,
	};
	struct ib_send_wr *last;
	unsigned long flags;
	int err;

	if (!rtrs_clt_sq_get(con, nwr))
		return -EAGAIN;

	ib_dma_sync_single_for_device(path->s.dev->ib_dev, sge[0].addr,
				      hdr_len, DMA_TO_DEVICE);
	if (head) {
		for (last = head; last->next; last = last->next)
			;
		last->next = &wr;
	} else {
		head = &wr;
	}
	spin_lock_irqsave(&con->send_lock, flags);
	if (rtrs_clt_send_signal(req, nwr, nsge == 1 && !req->big))
		wr.send_flags = IB_SEND_SIGNALED;
	else
		this_cpu_inc(path->stats.pcpu->unsig_sends);
	rtrs_clt_req_start(req);
	err = ib_post_send(con->c.qp, head, NULL);
	spin_unlock_irqrestore(&con->send_lock, flags);
	if (err)
		rtrs_clt_req_lost(req, err);
	return 0;
}

/*
 * 2.1 READ_REQ or WRITE_REQ: header and user message in one SEND, after
 * the REG_MR of the MR the server RDMA-writes a READ's data into, or
 * RDMA-reads a WRITE's data from, and invalidates with its response.  A
 * request without data names no MR: its descriptor is all zeros.
 */
static int rtrs_clt_io_req(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_msg_io_req *msg = rtrs_clt_req_hdr(req);
	bool read = req->dir == DMA_FROM_DEVICE;
	u32 hdr_len = sizeof(*msg) + req->usr_len;
	struct ib_send_wr *head = NULL, inv;
	struct ib_reg_wr rwr;
	struct ib_sge sge;
	u32 nwr = 1;
	int err;

	msg->type = cpu_to_le16(read ? RTRS_MSG_READ_REQ : RTRS_MSG_WRITE_REQ);
	msg->usr_len = cpu_to_le16(req->usr_len);
	msg->msg_id = rtrs_clt_msg_id(req);
	memset(&msg->desc, 0, sizeof(msg->desc));
	if (count) {
		err = rtrs_clt_req_reg(req, count, read ?
				       IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_REMOTE_WRITE :
				       IB_ACCESS_REMOTE_READ,
				       &rwr, &inv, &head);
		/* Parked: whoever gives a large MR back posts it. */
		if (err == -EINPROGRESS)
			return 0;
		if (err)
			return err;
		msg->desc.addr = cpu_to_le64(req->mr->iova);
		msg->desc.key = cpu_to_le32(req->mr->rkey);
		msg->desc.len = cpu_to_le32(req->mr->length);
		req->mr_valid = true;
		/* REG_MR, the LOCAL_INV before it, the LOCAL_INV after. */
		nwr += (head == &inv ? 2 : 1) + 1;
	}
	sge = (struct ib_sge) {
		.addr	= rtrs_clt_req_hdr_dma(req),
		.length	= hdr_len,
		.lkey	= req->con->c.path->dev->ib_pd->local_dma_lkey,
	};
	return rtrs_clt_send_post(req, &sge, 1, hdr_len, head, nwr);
}

/*
 * 2.1 READ_BUF: header and user message in one SEND, naming the read
 * buffer of the request's slot, which the server RDMA-writes the data and
 * the response into.  No registration, no data mapped: the data is copied
 * to the user's pages when it comes.
 */
static int rtrs_clt_read_buf_req(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_msg_io_req *msg = rtrs_clt_req_hdr(req);
	u32 hdr_len = sizeof(*msg) + req->usr_len;
	u64 slot = req - path->reqs;
	struct ib_sge sge = {
		.addr	= rtrs_clt_req_hdr_dma(req),
		.length	= hdr_len,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};

	msg->type = cpu_to_le16(RTRS_MSG_READ_BUF);
	msg->usr_len = cpu_to_le16(req->usr_len);
	msg->msg_id = rtrs_clt_msg_id(req);
	msg->desc.addr = cpu_to_le64(path->rd.mr->iova +
				     slot * RTRS_CLT_READ_BUF);
	msg->desc.key = cpu_to_le32(path->rd.mr->rkey);
	msg->desc.len = cpu_to_le32(req->data_len);
	return rtrs_clt_send_post(req, &sge, 1, hdr_len, NULL, 1);
}

/*
 * 2.1 WRITE_INLINE: one SEND of the header area, exactly max_hdr_size
 * bytes (header, user message, zeros), then the user's data entries as
 * mapped, no copy: the data lands at the start of the page of the
 * server's receive buffer.  No MR.
 */
static int rtrs_clt_write_inline(struct rtrs_clt_io_req *req, int count)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	struct rtrs_msg_write_inline *msg = req->iu->buf;
	u32 hdr_len = path->lim.max_hdr_size;
	u32 used = sizeof(*msg) + req->usr_len;
	int err;

	msg->type = cpu_to_le16(RTRS_MSG_WRITE_INLINE);
	msg->usr_len = cpu_to_le16(req->usr_len);
	msg->msg_id = rtrs_clt_msg_id(req);
	msg->data_len = cpu_to_le32(req->data_len);
	memset(req->iu->buf + used, 0, hdr_len - used);

	req->sge[0] = (struct ib_sge) {
		.addr	= req->iu->dma_addr,
		.length	= hdr_len,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	err = rtrs_clt_req_direct_sges(req, &req->sge[1], count);
	if (err)
		return err;
	return rtrs_clt_send_post(req, req->sge, count + 1, hdr_len, NULL, 1);
}

/*
 * Does a 2.1 WRITE carry its data in the SEND?  Up to the server's inline
 * size, when the header area and every data entry fit the SGEs of a SEND.
 */
static bool rtrs_clt_req_inline(struct rtrs_clt_path *path, int dir,
				size_t usr_len, size_t len,
				unsigned int sg_cnt)
{
	return dir == WRITE && len && len <= path->lim.max_inline_size &&
	       sizeof(struct rtrs_msg_write_inline) + usr_len <=
	       path->lim.max_hdr_size && sg_cnt < path->max_send_sge;
}

/* Can the request go out at all?  Header room, data size and segments. */
static int rtrs_clt_req_check(struct rtrs_clt_path *path, int dir,
			      size_t usr_len, size_t len, unsigned int sg_cnt)
{
	size_t hdr_len = dir == READ ?
		sizeof(struct rtrs_msg_rdma_read) + sizeof(struct rtrs_sg_desc) :
		sizeof(struct rtrs_msg_rdma_write);

	size_t room = path->lim.max_hdr_size;

	/*
	 * 2.1: the SEND of a request that carries no data may fill the
	 * server's whole receive buffer, header area and data page.
	 */
	if (rtrs_clt_lim_2_1(&path->lim)) {
		hdr_len = sizeof(struct rtrs_msg_io_req);
		room += path->lim.max_inline_size;
	}

	if (usr_len > U16_MAX || usr_len + hdr_len > room ||
	    len > path->lim.max_io_size)
		return -EMSGSIZE;
	if (sg_cnt > path->max_pages_per_mr || (len && !sg_cnt) ||
	    (dir == READ && !len && sg_cnt))
		return -EINVAL;
	return 0;
}

static void rtrs_clt_req_init(struct rtrs_clt_io_req *req,
			      struct rtrs_clt_con *con, int dir,
			      struct rtrs_clt_req_ops *ops,
			      struct rtrs_permit *permit,
			      size_t usr_len, size_t len,
			      struct scatterlist *sg, unsigned int sg_cnt,
			      u32 usr_off)
{
	req->con = con;
	req->dir = dir == READ ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
	req->sglist = sg;
	req->sg_cnt = sg_cnt;
	req->sg_cnt_mapped = 0;
	req->permit = permit;
	req->data_len = len;
	req->usr_len = usr_len;
	req->usr_off = usr_off;
	req->priv = ops->priv;
	req->conf = ops->conf_fn;
	req->status = 0;
	/*
	 * The response and the completion of the request's write, unless
	 * its SEND goes unsignaled (rtrs_clt_send_signal()).
	 */
	req->pending = 2;
	req->responded = false;
	/*
	 * The slot's count of requests, which tags the message id on a 2.1
	 * path that agreed on tags.  Read by responses to its earlier
	 * requests (rtrs_clt_rsp_req_2_1()).  Once it has wrapped, it
	 * stays above 2^16, where the tag's whole window counts.
	 */
	WRITE_ONCE(req->tag, req->tag + 1 ?: BIT(RTRS_MSG_TAG_BITS));
	req->mr_valid = false;
	req->read_buf = false;
	req->sq_wrs = 0;
	req->sq_covered = 0;
}

/*
 * Copy the user message of @vec into @req's header buffer, at usr_off.  A
 * 2.1 request without inline data may carry header and user message up
 * to the server's whole receive buffer, more than the header area its IU
 * holds: then it takes a buffer of its own until it leaves the path.  No
 * user of ours sends such messages on the IO path (rnbd's fit the header
 * area), so the buffer is allocated when needed instead of kept for every
 * request.
 */
static int rtrs_clt_req_buf(struct rtrs_clt_io_req *req,
			    const struct kvec *vec, size_t nr)
{
	struct ib_device *ib_dev = req->con->c.path->dev->ib_dev;
	u32 len = req->usr_off + req->usr_len;
	void *buf;
	size_t i;

	if (len > req->iu->size) {
		buf = kmalloc(len, GFP_ATOMIC);
		if (!buf)
			return -ENOMEM;
		req->big_dma = ib_dma_map_single(ib_dev, buf, len,
						 DMA_TO_DEVICE);
		if (ib_dma_mapping_error(ib_dev, req->big_dma)) {
			kfree(buf);
			return -ENOMEM;
		}
		req->big = buf;
		req->big_len = len;
	}
	buf = rtrs_clt_req_hdr(req) + req->usr_off;
	for (i = 0; i < nr; buf += vec[i].iov_len, i++)
		memcpy(buf, vec[i].iov_base, vec[i].iov_len);
	return 0;
}

/*
 * The request could not be posted and never left: nothing of it reached
 * the send queue, and no response can find it.
 */
static void rtrs_clt_req_abort(struct rtrs_clt_io_req *req, int err)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);

	if (err != -EAGAIN)
		pr_err_ratelimited("%s: preparing a request failed: %d\n",
				   path->s.sessname, err);
	req->mr_valid = false;
	rtrs_clt_req_unmap(req);
	rtrs_clt_req_buf_put(req);
	rtrs_clt_large_put(req);
}

/*
 * Post @req, parked until now, with the large MR it was just handed.  It
 * counted as in flight from when it parked; posting counts it again.
 * Should posting fail, nothing of it left: it completes with the error.
 */
static void rtrs_clt_large_resume(struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_path *path = to_clt_path(req->con->c.path);
	int err;

	atomic_dec(&path->stats.inflight);
	err = rtrs_clt_io_req(req, req->count);
	if (!err)
		return;
	atomic_inc(&path->stats.inflight);
	rtrs_clt_req_abort(req, err);
	req->status = err;
	rtrs_clt_req_complete(req);
}

/*
 * Hand the free large MRs of @path to its parked requests, first come
 * first served, while it is connected; a path that is not leaves them to
 * its teardown.  One caller at a time hands them out: another that gives
 * an MR back meanwhile leaves it to that one, so that a request that
 * fails here, and gives its MR back, does not recurse.
 */
static void rtrs_clt_large_kick(struct rtrs_clt_path *path)
{
	struct rtrs_clt_large *large = &path->large;
	struct rtrs_clt_io_req *req;
	unsigned long flags;

	spin_lock_irqsave(&large->lock, flags);
	if (large->kicking) {
		spin_unlock_irqrestore(&large->lock, flags);
		return;
	}
	large->kicking = true;
	while (large->free && !list_empty(&large->waiters) &&
	       rtrs_clt_path_connected(path)) {
		req = list_first_entry(&large->waiters, struct rtrs_clt_io_req,
				       large_entry);
		list_del_init(&req->large_entry);
		/* The watchdog sees it again, as a request posted now. */
		WRITE_ONCE(req->sent_at, jiffies);
		WRITE_ONCE(req->parked, false);
		req->mr = large->mrs[--large->free];
		spin_unlock_irqrestore(&large->lock, flags);
		rtrs_clt_large_resume(req);
		spin_lock_irqsave(&large->lock, flags);
	}
	large->kicking = false;
	spin_unlock_irqrestore(&large->lock, flags);
}

/**
 * rtrs_clt_path_request() - send a request over one path
 * @path: a connected path; called inside an RCU read section that the
 *	path's teardown waits for.
 * @dir: READ or WRITE.
 * @ops: the user's completion callback.
 * @permit: the request's permit.
 * @vec: user message.
 * @nr: entries in @vec.
 * @usr_len: total length of @vec.
 * @len: data length.
 * @sg: data.
 * @sg_cnt: entries in @sg.
 *
 * Context: any context; does not sleep.
 * Return: 0 when the request is in flight: posted, or left to the path's
 * teardown when posting failed (see rtrs_clt_req_lost()); -EMSGSIZE or
 * -EINVAL when it can never be posted, on any path; -EAGAIN when the
 * connection's send queue is full; another negative errno when preparing
 * it failed.  Unless 0, nothing of the request was posted.
 */
static int rtrs_clt_path_request(struct rtrs_clt_path *path, int dir,
				 struct rtrs_clt_req_ops *ops,
				 struct rtrs_permit *permit,
				 const struct kvec *vec, size_t nr,
				 size_t usr_len, size_t len,
				 struct scatterlist *sg, unsigned int sg_cnt)
{
	bool v2_1 = rtrs_clt_lim_2_1(&path->lim);
	bool inl = v2_1 && rtrs_clt_req_inline(path, dir, usr_len, len, sg_cnt);
	bool rdb = v2_1 && dir == READ && len && len <= path->lim.max_read_buf;
	struct rtrs_clt_io_req *req;
	unsigned int slot;
	u32 usr_off = 0;
	int count = 0, err;

	err = rtrs_clt_req_check(path, dir, usr_len, len, sg_cnt);
	if (err)
		return err;
	/* 2.1 has no chunks: the message id is the permit's own. */
	slot = v2_1 ? permit->mem_id : permit->chunk;
	if (WARN_ON_ONCE(slot >= path->lim.queue_depth))
		return -EINVAL;
	req = &path->reqs[slot];
	if (WARN_ON_ONCE(READ_ONCE(req->in_use)))
		return -EBUSY;

	/* 2.1 puts the user message after the header. */
	if (inl)
		usr_off = sizeof(struct rtrs_msg_write_inline);
	else if (v2_1)
		usr_off = sizeof(struct rtrs_msg_io_req);
	rtrs_clt_req_init(req, rtrs_clt_permit_con(path, permit), dir, ops,
			  permit, usr_len, len, sg, sg_cnt, usr_off);
	req->read_buf = rdb;
	err = rtrs_clt_req_buf(req, vec, nr);
	if (err)
		return err;
	/* A READ_BUF's data is copied, not mapped. */
	if (!rdb)
		count = rtrs_clt_req_map(req);
	if (count < 0) {
		rtrs_clt_req_buf_put(req);
		return count;
	}

	if (rdb)
		err = rtrs_clt_read_buf_req(req);
	else if (inl)
		err = rtrs_clt_write_inline(req, count);
	else if (v2_1)
		err = rtrs_clt_io_req(req, count);
	else if (dir == READ)
		err = rtrs_clt_read_req(req, count);
	else
		err = rtrs_clt_write_req(req, count);
	if (err) {
		rtrs_clt_req_abort(req, err);
		return err;
	}
	this_cpu_inc(path->stats.pcpu->cnt[dir]);
	this_cpu_add(path->stats.pcpu->bytes[dir], len);
	if (rdb)
		this_cpu_inc(path->stats.pcpu->read_bufs);
	return 0;
}

/* Post on the connected paths other than @first and @skip, in order. */
static int rtrs_clt_request_others(struct rtrs_clt_sess *clt,
				   struct rtrs_clt_path *first,
				   struct rtrs_clt_path *skip, int dir,
				   struct rtrs_clt_req_ops *ops,
				   struct rtrs_permit *permit,
				   const struct kvec *vec, size_t nr,
				   size_t usr_len, size_t len,
				   struct scatterlist *sg, unsigned int sg_cnt,
				   int err)
{
	struct rtrs_clt_path *path;

	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (path == first || path == skip ||
		    !rtrs_clt_path_connected(path))
			continue;
		err = rtrs_clt_path_request(path, dir, ops, permit, vec, nr,
					    usr_len, len, sg, sg_cnt);
		if (!err || err == -EMSGSIZE || err == -EINVAL)
			break;
	}
	return err;
}

/**
 * rtrs_clt_submit() - post a request on a path of its session
 * @clt: the session.
 * @skip: a path not to use (the one a request fails over from), or NULL.
 * @dir: READ or WRITE.
 * @ops: completion callback and its pointer; copied.
 * @permit: the request's permit.
 * @vec: user message; copied.
 * @nr: entries in @vec.
 * @len: bytes of data.
 * @sg: data buffer.
 * @sg_cnt: entries in @sg.
 *
 * Tries the path the multipath policy picks first, then the other
 * connected paths in list order, never @skip.
 *
 * Context: any context; does not sleep.
 * Return: 0 when a path took the request, else the error of the last
 * path tried (-ECONNABORTED when none is connected).
 */
int rtrs_clt_submit(struct rtrs_clt_sess *clt, struct rtrs_clt_path *skip,
		    int dir, struct rtrs_clt_req_ops *ops,
		    struct rtrs_permit *permit, const struct kvec *vec,
		    size_t nr, size_t len, struct scatterlist *sg,
		    unsigned int sg_cnt)
{
	struct rtrs_clt_path *first;
	int err = -ECONNABORTED;
	size_t usr_len = 0, i;

	for (i = 0; i < nr; i++)
		usr_len += vec[i].iov_len;

	rcu_read_lock();
	first = rtrs_clt_mp_pick(clt);
	if (first == skip)
		first = NULL;
	if (first) {
		err = rtrs_clt_path_request(first, dir, ops, permit, vec, nr,
					    usr_len, len, sg, sg_cnt);
		if (!err || err == -EMSGSIZE || err == -EINVAL)
			goto unlock;
	}
	err = rtrs_clt_request_others(clt, first, skip, dir, ops, permit,
				      vec, nr, usr_len, len, sg, sg_cnt, err);
unlock:
	rcu_read_unlock();
	return err;
}

/**
 * rtrs_clt_resend() - send a request of a failed path over another one
 * @from: the failed path, drained.
 * @req: the request's slot on @from; its header buffer still holds the
 *	user message, at @req->usr_off.
 *
 * Context: process context, with @from->init_mutex held.
 * Return: 0 when another path took the request, else a negative errno.
 */
static int rtrs_clt_resend(struct rtrs_clt_path *from,
			   struct rtrs_clt_io_req *req)
{
	struct rtrs_clt_req_ops ops = {
		.priv		= req->priv,
		.conf_fn	= req->conf,
	};
	struct kvec vec = {
		.iov_base	= rtrs_clt_req_hdr(req) + req->usr_off,
		.iov_len	= req->usr_len,
	};
	int dir = req->dir == DMA_FROM_DEVICE ? READ : WRITE;

	return rtrs_clt_submit(from->clt, from, dir, &ops, req->permit, &vec,
			       1, req->data_len, req->sglist, req->sg_cnt);
}

/**
 * rtrs_clt_reqs_failover() - move the requests in flight off a failed path
 * @path: the path; all its QPs are drained.
 *
 * Sends each request again, with its permit, user message and data, over
 * another connected path; the user sees nothing of it.  A request that no
 * other path takes completes with -ECONNABORTED; one the server responded
 * to completes with its response.  A request the server may already have
 * carried out is carried out again: READ and WRITE of the same data to the
 * same place are idempotent, as block IO is.  Every request of a 2.0 path
 * without a response leaves its chunk, which the server may still be
 * working in, for another one once it completes
 * (rtrs_clt_chunk_quarantine()); on another path a request of a 2.1 path
 * is a new request with the same message id.
 *
 * Context: process context, with @path->init_mutex held; may sleep
 * until the user puts a permit (see rtrs_clt_chunk_quarantine()).
 */
void rtrs_clt_reqs_failover(struct rtrs_clt_path *path)
{
	struct rtrs_clt_io_req *req;
	u32 i;

	lockdep_assert_held(&path->init_mutex);

	if (!path->reqs)
		return;
	for (i = 0; i < path->lim.queue_depth; i++) {
		req = &path->reqs[i];
		if (!req->in_use)
			continue;
		/* Never posted: it goes out on another path as it is. */
		rtrs_clt_large_unpark(req);
		/* Responded to: only its own completions went missing. */
		if (req->responded) {
			rtrs_clt_req_complete(req);
			continue;
		}
		/* The scatterlist holds one mapping at a time. */
		rtrs_clt_req_unmap(req);
		/*
		 * A 2.1 server's stale operation owns a buffer of its own, no
		 * chunk of the session: nothing to keep away from.
		 */
		if (!rtrs_clt_lim_2_1(&path->lim))
			rtrs_clt_chunk_quarantine(path, req->permit);
		if (!rtrs_clt_resend(path, req)) {
			atomic_inc(&path->stats.failovers);
			rtrs_clt_req_release(req);
			continue;
		}
		req->status = -ECONNABORTED;
		rtrs_clt_req_complete(req);
	}
}
