// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server side of a path coming up.
 *
 * Once the client has every connection of a path established, it sends
 * INFO_REQ with the path's name on connection 0.  We respond with INFO_RSP,
 * the descriptors of the chunks, after the REG_MRs that make them
 * writable; the path is then connected, its heartbeats start, and the
 * user hears of the session when it is the session's first path up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rtrs-srv.h"

static int rtrs_srv_buf_alloc(struct rtrs_srv_path *path,
			      struct rtrs_srv_buf *b, size_t size,
			      enum dma_data_direction dir,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;

	b->buf = rtrs_kzalloc(size, GFP_KERNEL);
	if (!b->buf)
		return -ENOMEM;
	b->dma = ib_dma_map_single(ib_dev, b->buf, size, dir);
	if (ib_dma_mapping_error(ib_dev, b->dma)) {
		kfree(b->buf);
		b->buf = NULL;
		return -ENOMEM;
	}
	b->size = size;
	b->dir = dir;
	b->cqe.done = done;
	return 0;
}

static void rtrs_srv_buf_free(struct rtrs_srv_path *path,
			      struct rtrs_srv_buf *b)
{
	ib_dma_unmap_single(path->s.dev->ib_dev, b->dma, b->size, b->dir);
	kfree(b->buf);
}

static int rtrs_srv_path_up(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	int err = 0;

	mutex_lock(&sess->ev_mutex);
	if (!sess->paths_up)
		err = sess->ctx->ops.link_ev(sess, RTRS_SRV_LINK_EV_CONNECTED,
					     NULL);
	if (!err) {
		sess->paths_up++;
		path->established = true;
	}
	mutex_unlock(&sess->ev_mutex);
	return err;
}

/**
 * rtrs_srv_path_down() - tell the user when the session's last path goes
 * @path: closing path whose requests all have their response
 */
void rtrs_srv_path_down(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;

	mutex_lock(&sess->ev_mutex);
	if (path->established) {
		path->established = false;
		if (!--sess->paths_up) {
			sess->ctx->ops.link_ev(sess,
					       RTRS_SRV_LINK_EV_DISCONNECTED,
					       READ_ONCE(sess->priv));
			/* The user's pointer ends with its session. */
			WRITE_ONCE(sess->priv, NULL);
		}
	}
	mutex_unlock(&sess->ev_mutex);
}

/*
 * Is @name the name of a live path of another session?  A path being
 * closed no longer counts: a client that closes a session and opens it
 * again at once must not find its name held by the old session, whose
 * teardown the server runs on its own time.
 */
static bool rtrs_srv_name_taken(struct rtrs_srv_path *path, const char *name)
{
	struct rtrs_srv_ctx *ctx = path->sess->ctx;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *p;
	bool taken = false;

	mutex_lock(&ctx->mutex);
	list_for_each_entry(sess, &ctx->sess_list, entry) {
		if (sess == path->sess)
			continue;
		mutex_lock(&sess->paths_mutex);
		list_for_each_entry(p, &sess->paths_list, entry) {
			enum rtrs_srv_state state = rtrs_srv_path_state(p);

			if (state != RTRS_SRV_CONNECTING &&
			    state != RTRS_SRV_CONNECTED)
				continue;
			taken |= !strcmp(p->s.sessname, name);
		}
		mutex_unlock(&sess->paths_mutex);
		if (taken)
			break;
	}
	mutex_unlock(&ctx->mutex);
	return taken;
}

static bool rtrs_srv_all_cons_up(struct rtrs_srv_path *path)
{
	unsigned int cid;
	bool up = true;

	mutex_lock(&path->sess->paths_mutex);
	for (cid = 0; cid < path->s.con_num; cid++)
		up &= !!path->s.con[cid];
	mutex_unlock(&path->sess->paths_mutex);
	return up;
}

/* Name the path as the INFO_REQ says, unless another session has it. */
static int rtrs_srv_take_name(struct rtrs_srv_path *path, const char *name)
{
	if (rtrs_srv_name_taken(path, name)) {
		pr_err_ratelimited("%s: path name %s belongs to another session\n",
				   path->s.sessname, name);
		return -EPERM;
	}
	strscpy(path->s.sessname, name, sizeof(path->s.sessname));
	/* After the name: rtrs_srv_get_path_name() reads it once it sees this. */
	smp_store_release(&path->named, true);
	return 0;
}

/*
 * Register every chunk, then send the INFO_RSP describing them; without
 * @reg_wrs (2.1), an INFO_RSP of no chunks.
 */
static int rtrs_srv_send_info_rsp(struct rtrs_srv_path *path,
				  struct rtrs_srv_con *con,
				  struct ib_reg_wr *reg_wrs)
{
	struct rtrs_msg_info_rsp *rsp = path->info_rsp.buf;
	u32 depth = path->sess->queue_depth;
	struct ib_sge sge = {
		.addr	= path->info_rsp.dma,
		.length	= path->info_rsp.size,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &path->info_rsp.cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	rsp->type = cpu_to_le16(RTRS_MSG_INFO_RSP);
	if (!reg_wrs) {
		/* 2.1: no chunks, nothing to describe. */
		rsp->sg_cnt = 0;
		sge.length = sizeof(*rsp);
		ib_dma_sync_single_for_device(path->s.dev->ib_dev, sge.addr,
					      sge.length, DMA_TO_DEVICE);
		return ib_post_send(con->c.qp, &wr, NULL);
	}
	rsp->sg_cnt = cpu_to_le16(depth);
	rtrs_srv_fill_chunk_descs(path, rsp->desc);
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, sge.addr,
				      sge.length, DMA_TO_DEVICE);
	reg_wrs[depth - 1].wr.next = &wr;
	return ib_post_send(con->c.qp, &reg_wrs[0].wr, NULL);
}

static int rtrs_srv_process_info_req(struct rtrs_srv_path *path,
				     struct rtrs_srv_con *con, const char *name)
{
	struct ib_reg_wr *reg_wrs = NULL;
	int err;

	if (!rtrs_srv_all_cons_up(path)) {
		rtrs_srv_violation(path, "INFO_REQ before all connections");
		return -EPROTO;
	}
	err = rtrs_srv_take_name(path, name);
	if (err)
		return err;
	/* A 2.1 path has no chunks to allocate, map and register. */
	if (!rtrs_srv_sess_2_1(path->sess)) {
		err = rtrs_srv_path_chunks(path);
		if (err)
			return err;
		reg_wrs = rtrs_srv_reg_chunks_wrs(path, &con->reg_cqe);
		if (!reg_wrs)
			return -ENOMEM;
	}

	/*
	 * The user hears of the session before the path is connected: until
	 * then every message but this INFO_REQ is refused, so no request can
	 * reach the user before its CONNECTED event has returned.  A path
	 * closed meanwhile tells the user of the end in its close work.
	 */
	err = rtrs_srv_path_up(path);
	if (err) {
		pr_info_ratelimited("%s: the user refused the session: %d\n",
				    path->s.sessname, err);
		goto free;
	}
	err = -ECONNRESET;
	if (!rtrs_srv_change_state(path, RTRS_SRV_CONNECTING,
				   RTRS_SRV_CONNECTED))
		goto free;
	rtrs_start_hb(&path->s);
	/* Pending as the connect timeout: now the watchdog proper. */
	mod_delayed_work(rtrs_srv_wq, &path->wd_dwork,
			 msecs_to_jiffies(RTRS_HB_INTERVAL_MS));
	err = rtrs_srv_send_info_rsp(path, con, reg_wrs);
	if (!err)
		queue_delayed_work(rtrs_srv_wq, &path->sysfs_work, 0);
free:
	kfree(reg_wrs);
	return err;
}

static void rtrs_srv_info_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_path *path = container_of(wc->wr_cqe,
						  struct rtrs_srv_path,
						  info_req.cqe);
	struct rtrs_srv_con *con = to_srv_con(path->s.con[0]);
	char name[sizeof(path->s.sessname)];
	enum rtrs_srv_msg msg = RTRS_SRV_MSG_INFO_REQ;
	u32 imm = 0;
	int err;

	if (!rtrs_srv_wc_ok(path, wc, "INFO_REQ receive"))
		return;
	if (wc->opcode != IB_WC_RECV) {
		imm = wc->wc_flags & IB_WC_WITH_IMM ?
		      be32_to_cpu(wc->ex.imm_data) : 0;
		msg = rtrs_srv_msg_of_imm(imm,
					  rtrs_srv_sess_2_1(path->sess));
	}
	/* This receive completes before the path can be connected. */
	if (!rtrs_srv_admit(path, msg, imm, 0))
		return;
	if (msg != RTRS_SRV_MSG_INFO_REQ) {
		rtrs_srv_violation(path, "%s in place of the INFO_REQ",
				   rtrs_srv_msg_name(msg));
		return;
	}
	rtrs_hb_received(&path->s);
	ib_dma_sync_single_for_cpu(path->s.dev->ib_dev, path->info_req.dma,
				   path->info_req.size, DMA_FROM_DEVICE);
	err = rtrs_srv_check_info_req(path->info_req.buf, wc->byte_len, name,
				      sizeof(name));
	if (err) {
		rtrs_srv_violation(path, "INFO_REQ malformed, %u bytes: %pe",
				   wc->byte_len, ERR_PTR(err));
		return;
	}
	if (rtrs_srv_process_info_req(path, con, name))
		rtrs_srv_close_path(path);
}

static void rtrs_srv_info_rsp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_path *path = container_of(wc->wr_cqe,
						  struct rtrs_srv_path,
						  info_rsp.cqe);

	rtrs_srv_wc_ok(path, wc, "INFO_RSP send");
}

/**
 * rtrs_srv_alloc_info_bufs() - INFO_REQ and INFO_RSP buffers of a path
 * @path: path with &rtrs_path.dev set
 *
 * Return: 0 or -ENOMEM; on error nothing stays allocated.
 */
int rtrs_srv_alloc_info_bufs(struct rtrs_srv_path *path)
{
	size_t rsp_size = struct_size((struct rtrs_msg_info_rsp *)NULL, desc,
				      path->sess->queue_depth);
	int err;

	err = rtrs_srv_buf_alloc(path, &path->info_req,
				 sizeof(struct rtrs_msg_info_req),
				 DMA_FROM_DEVICE, rtrs_srv_info_req_done);
	if (err)
		return err;
	err = rtrs_srv_buf_alloc(path, &path->info_rsp, rsp_size,
				 DMA_TO_DEVICE, rtrs_srv_info_rsp_done);
	if (err)
		rtrs_srv_buf_free(path, &path->info_req);
	return err;
}

/**
 * rtrs_srv_free_info_bufs() - undo rtrs_srv_alloc_info_bufs()
 * @path: path whose queue pairs are destroyed
 */
void rtrs_srv_free_info_bufs(struct rtrs_srv_path *path)
{
	rtrs_srv_buf_free(path, &path->info_rsp);
	rtrs_srv_buf_free(path, &path->info_req);
}

/**
 * rtrs_srv_post_info_recv() - post the receive of the INFO_REQ
 * @path: the path
 * @con: its connection 0, before any other receive is posted on it
 *
 * Return: 0 or the error of the post.
 */
int rtrs_srv_post_info_recv(struct rtrs_srv_path *path,
			    struct rtrs_srv_con *con)
{
	struct ib_sge sge = {
		.addr	= path->info_req.dma,
		.length	= path->info_req.size,
		.lkey	= path->s.dev->ib_pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &path->info_req.cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return rtrs_fail_or(-ENOMEM, ib_post_recv(con->c.qp, &wr, NULL));
}
