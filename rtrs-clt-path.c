// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: life of a path.
 *
 * A path connects its connections one by one, admin connection first,
 * then asks the server for its chunks (INFO_REQ/INFO_RSP on the admin
 * connection) and is up.  An error anywhere (rtrs_clt_path_error() in
 * rtrs-clt-state.c) queues the close work, which tears the connections
 * down, fails the requests in flight over and schedules a reconnect.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "rtrs-clt.h"
#include "trace/clt.h"

static void rtrs_clt_hb_err(struct rtrs_con *con)
{
	rtrs_clt_path_error(to_clt_path(con->path));
}

static void rtrs_clt_info_req_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);

	if (wc->status == IB_WC_SUCCESS)
		return;
	pr_err_ratelimited("%s: sending path info failed: %s\n",
			   con->c.path->sessname, ib_wc_status_msg(wc->status));
	rtrs_clt_path_error(to_clt_path(con->c.path));
}

static void rtrs_clt_info_rsp_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_clt_con *con = rtrs_clt_wc_con(wc);
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct rtrs_iu *iu = container_of(wc->wr_cqe, struct rtrs_iu, cqe);
	int err = -ECONNRESET;

	/* The failed open logs it: one line. */
	if (wc->status != IB_WC_SUCCESS) {
		path->info_why = ib_wc_status_msg(wc->status);
		goto out;
	}
	rtrs_hb_received(&path->s);
	if (wc->opcode != IB_WC_RECV) {
		path->info_why = "not a SEND where the path info was due";
		err = -EPROTO;
		goto out;
	}
	ib_dma_sync_single_for_cpu(path->s.dev->ib_dev, iu->dma_addr,
				   iu->size, DMA_FROM_DEVICE);
	if (rtrs_clt_lim_2_1(&path->lim))
		err = rtrs_clt_check_info_rsp_2_1(iu->buf, wc->byte_len);
	else
		err = rtrs_clt_check_info_rsp(iu->buf, wc->byte_len,
					      path->lim.queue_depth,
					      path->lim.chunk_size, path->rbufs);
	if (err)
		path->info_why = "malformed path info from server";
out:
	path->info_err = err;
	complete(&path->info_done);
}

static int rtrs_clt_info_alloc(struct rtrs_clt_path *path)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	size_t rx_size = sizeof(struct rtrs_msg_info_rsp);

	/* A 2.1 server has no chunks to describe. */
	if (!rtrs_clt_lim_2_1(&path->lim))
		rx_size += path->lim.queue_depth * sizeof(struct rtrs_sg_desc);
	path->info_rx_iu = rtrs_iu_alloc(1, rx_size, GFP_KERNEL, ib_dev,
					 DMA_FROM_DEVICE,
					 rtrs_clt_info_rsp_done);
	path->info_tx_iu = rtrs_iu_alloc(1, sizeof(struct rtrs_msg_info_req),
					 GFP_KERNEL, ib_dev, DMA_TO_DEVICE,
					 rtrs_clt_info_req_done);
	return path->info_rx_iu && path->info_tx_iu ? 0 : -ENOMEM;
}

static void rtrs_clt_info_free(struct rtrs_clt_path *path)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;

	rtrs_iu_free(path->info_tx_iu, ib_dev, 1);
	path->info_tx_iu = NULL;
	rtrs_iu_free(path->info_rx_iu, ib_dev, 1);
	path->info_rx_iu = NULL;
}

static int rtrs_clt_info_send(struct rtrs_clt_path *path)
{
	struct rtrs_con *con = path->s.con[0];
	struct rtrs_iu *tx = path->info_tx_iu;
	struct rtrs_msg_info_req *msg = tx->buf;
	int err;

	err = rtrs_iu_post_recv(con, path->info_rx_iu);
	if (err)
		return err;

	memset(msg, 0, sizeof(*msg));
	msg->type = cpu_to_le16(RTRS_MSG_INFO_REQ);
	strscpy(msg->pathname, path->s.sessname, sizeof(msg->pathname));
	ib_dma_sync_single_for_device(path->s.dev->ib_dev, tx->dma_addr,
				      sizeof(*msg), DMA_TO_DEVICE);
	/* The read buffers are registered before the server hears of us. */
	return rtrs_iu_post_send(con, tx, sizeof(*msg),
				 path->rd.mr ? &path->rd.reg.wr : NULL);
}

/*
 * Learn the server's chunks (a 2.1 server has none, and says so); then
 * the connections can take responses.
 */
static int rtrs_clt_path_info(struct rtrs_clt_path *path)
{
	unsigned long timeout = msecs_to_jiffies(RTRS_CLT_CONNECT_TIMEOUT_MS);
	unsigned long left;
	unsigned int cid;
	int err;

	err = rtrs_clt_info_alloc(path);
	if (err)
		return err;
	err = rtrs_clt_info_send(path);
	if (err)
		return err;

	left = wait_for_completion_timeout(&path->info_done, timeout);
	if (!left)
		return -ETIMEDOUT;
	if (READ_ONCE(path->connect_failed))
		return -ECONNRESET;
	if (path->info_err)
		return path->info_err;

	for (cid = 0; cid < path->s.con_num; cid++) {
		err = rtrs_clt_con_post_recvs(rtrs_clt_path_con(path, cid));
		if (err)
			return err;
	}
	return 0;
}

/*
 * A path given without a source keeps the one its first connection was
 * routed from: it names the path in sysfs, and every later connection and
 * reconnect of the path leaves from there too.  The port stays free.
 */
static void rtrs_clt_path_learn_src(struct rtrs_clt_path *path)
{
	struct sockaddr_storage *src = &path->s.src_addr;

	if (src->ss_family != AF_UNSPEC)
		return;
	*src = path->s.con[0]->cm_id->route.addr.src_addr;
	switch (src->ss_family) {
	case AF_INET:
		((struct sockaddr_in *)src)->sin_port = 0;
		break;
	case AF_INET6:
		((struct sockaddr_in6 *)src)->sin6_port = 0;
		break;
	default:
		/* AF_IB: the service ID is the destination's business. */
		memset(src, 0, sizeof(*src));
		break;
	}
}

static int rtrs_clt_path_connect(struct rtrs_clt_path *path)
{
	unsigned int cid;
	int err;

	lockdep_assert_held(&path->init_mutex);

	/* A close that came first must not be forgotten here. */
	spin_lock_irq(&path->state_lock);
	WRITE_ONCE(path->connect_failed, path->state != RTRS_CLT_CONNECTING);
	spin_unlock_irq(&path->state_lock);
	path->info_err = -ECONNRESET;
	path->info_why = NULL;
	WRITE_ONCE(path->err_logged, false);
	reinit_completion(&path->info_done);

	for (cid = 0; cid < path->s.con_num; cid++) {
		err = rtrs_clt_con_connect(path, cid);
		if (err)
			return err;
		if (cid)
			continue;
		rtrs_clt_path_learn_src(path);
		if (rtrs_clt_lim_2_1(&path->lim))
			continue;
		path->rbufs = rtrs_kcalloc(path->lim.queue_depth,
					   sizeof(*path->rbufs), GFP_KERNEL);
		if (!path->rbufs)
			return -ENOMEM;
	}
	err = rtrs_clt_reqs_alloc(path);
	if (err)
		return err;
	return rtrs_clt_path_info(path);
}

/*
 * Undo rtrs_clt_path_connect(), whatever it got to: stop the heartbeats,
 * let submitters that saw the path connected finish posting, flush every
 * queue, move the requests still in flight to other paths (or fail them)
 * and free it all.
 */
static void rtrs_clt_path_teardown(struct rtrs_clt_path *path)
{
	unsigned int cid;

	lockdep_assert_held(&path->init_mutex);

	cancel_delayed_work_sync(&path->wd_dwork);
	rtrs_stop_hb(&path->s);
	synchronize_rcu();

	for (cid = 0; cid < path->s.con_num; cid++)
		if (path->s.con[cid])
			rtrs_clt_con_stop(rtrs_clt_path_con(path, cid));
	rtrs_clt_reqs_failover(path);

	for (cid = path->s.con_num; cid--; )
		rtrs_clt_con_free(path, cid);
	if (!path->s.dev)
		return;
	rtrs_clt_info_free(path);
	rtrs_clt_reqs_free(path);
	kfree(path->rbufs);
	path->rbufs = NULL;
	rtrs_ib_dev_put(path->s.dev);
	path->s.dev = NULL;
}

static void rtrs_clt_path_log_err(struct rtrs_clt_path *path, int err)
{
	char dst[64];

	/* One line a failure: its reason may be in the log already. */
	if (READ_ONCE(path->err_logged))
		return;
	sockaddr_to_str((struct sockaddr *)&path->s.dst_addr, dst, sizeof(dst));
	pr_err_ratelimited("%s: connecting path to %s failed: %d%s%s%s\n",
			   path->s.sessname, dst, err,
			   path->info_why ? " (" : "",
			   path->info_why ?: "", path->info_why ? ")" : "");
}

/**
 * rtrs_clt_path_open() - establish a path
 * @path: a path in %RTRS_CLT_CONNECTING, its connections down.
 *
 * On success the path is %RTRS_CLT_CONNECTED with heartbeats running and,
 * when listed (see &rtrs_clt_path.listed), counted as up; on failure
 * everything is torn down again and the state is left alone.
 *
 * Context: process context; sleeps.
 * Return: 0, or a negative errno.
 */
int rtrs_clt_path_open(struct rtrs_clt_path *path)
{
	int err;

	mutex_lock(&path->init_mutex);
	err = rtrs_clt_path_connect(path) ?: rtrs_clt_path_set_connected(path);
	if (err) {
		rtrs_clt_path_log_err(path, err);
		rtrs_clt_path_teardown(path);
	} else {
		/* Accepted: the server let the earlier incarnation go. */
		rtrs_clt_chunks_release(path);
		rtrs_start_hb(&path->s);
		queue_delayed_work(rtrs_clt_wq, &path->wd_dwork,
				   msecs_to_jiffies(RTRS_HB_INTERVAL_MS));
		rtrs_clt_path_up(path);
	}
	mutex_unlock(&path->init_mutex);
	return err;
}

static bool rtrs_clt_may_reconnect(struct rtrs_clt_path *path)
{
	s16 max = path->clt->max_reconnect_attempts;

	return max < 0 || path->reconnect_attempts < max;
}

/* Reconnect @path after @delay, if it is still in @from; see below. */
static void rtrs_clt_path_queue_reconnect(struct rtrs_clt_path *path,
					  enum rtrs_clt_state from,
					  unsigned long delay)
{
	spin_lock_irq(&path->state_lock);
	if (path->state == from) {
		if (!path->stay_down && rtrs_clt_may_reconnect(path)) {
			rtrs_clt_path_set_state(path, RTRS_CLT_RECONNECTING);
			queue_delayed_work(rtrs_clt_wq, &path->reconnect_dwork,
					   delay);
		} else {
			rtrs_clt_path_set_state(path, RTRS_CLT_CLOSED);
		}
	}
	spin_unlock_irq(&path->state_lock);
}

/**
 * rtrs_clt_path_schedule_reconnect() - try a path that is down again later
 * @path: a path whose connections are down.
 * @from: the state the caller left @path in: %RTRS_CLT_CONNECTING after a
 *	failed connect, %RTRS_CLT_CLOSING after the close work's teardown.
 *
 * Schedules the reconnect work after the session's reconnect delay, plus
 * up to a second at random so paths do not reconnect in lockstep, or
 * leaves the path %RTRS_CLT_CLOSED when it ran out of attempts.  Does
 * nothing when @path has left @from meanwhile: whoever moved it decides.
 *
 * Context: process context.
 */
void rtrs_clt_path_schedule_reconnect(struct rtrs_clt_path *path,
				      enum rtrs_clt_state from)
{
	unsigned int ms = path->clt->reconnect_delay_sec * 1000U +
			  get_random_u32_below(RTRS_CLT_RECONNECT_JITTER_MS);

	rtrs_clt_path_queue_reconnect(path, from, msecs_to_jiffies(ms));
}

static void rtrs_clt_reconnect_work(struct work_struct *work)
{
	struct rtrs_clt_path *path = container_of(to_delayed_work(work),
						  struct rtrs_clt_path,
						  reconnect_dwork);
	int err;

	if (!rtrs_clt_path_change_state(path, RTRS_CLT_RECONNECTING,
					RTRS_CLT_CONNECTING))
		return;

	path->reconnect_attempts++;
	path->s.recon_cnt++;
	err = rtrs_clt_path_open(path);
	if (!err) {
		path->reconnect_attempts = 0;
		atomic_inc(&path->stats.reconnects);
		return;
	}
	atomic_inc(&path->stats.reconnect_fails);
	if (err != -EBUSY) {
		rtrs_clt_path_schedule_reconnect(path, RTRS_CLT_CONNECTING);
		return;
	}
	/*
	 * The server is there and lets the path's earlier incarnation go
	 * first: soon again, and not an attempt used up.
	 */
	path->reconnect_attempts--;
	rtrs_clt_path_queue_reconnect(path, RTRS_CLT_CONNECTING,
				      msecs_to_jiffies(RTRS_CLT_BUSY_RETRY_MS));
}

static void rtrs_clt_close_work(struct work_struct *work)
{
	struct rtrs_clt_path *path = container_of(work, struct rtrs_clt_path,
						  close_work);

	mutex_lock(&path->init_mutex);
	rtrs_clt_path_teardown(path);
	rtrs_clt_path_down(path);
	mutex_unlock(&path->init_mutex);
	rtrs_clt_path_schedule_reconnect(path, RTRS_CLT_CLOSING);
}

/**
 * rtrs_clt_path_disconnect() - take a path down until told otherwise
 * @path: the path.
 *
 * Requests in flight on it move to other paths.  The path stays
 * %RTRS_CLT_CLOSED until rtrs_clt_path_reconnect().
 *
 * Context: process context, with the session's change_mutex held; sleeps.
 */
void rtrs_clt_path_disconnect(struct rtrs_clt_path *path)
{
	WRITE_ONCE(path->stay_down, true);
	/* A reconnect under way finishes; one waiting never starts. */
	if (cancel_delayed_work_sync(&path->reconnect_dwork))
		rtrs_clt_path_change_state(path, RTRS_CLT_RECONNECTING,
					   RTRS_CLT_CLOSED);
	rtrs_clt_path_error(path);
	flush_work(&path->close_work);
}

/**
 * rtrs_clt_path_reconnect() - connect a path again, now
 * @path: the path.
 *
 * Disconnects it first when it is up, then connects it and waits for the
 * result; a failure leaves it reconnecting in the background as usual.
 * While the server refuses it with -EBUSY, letting the path's earlier
 * incarnation go first, it tries again for up to
 * RTRS_CLT_BUSY_TRIES * RTRS_CLT_BUSY_RETRY_MS.
 *
 * Context: process context, with the session's change_mutex held; sleeps.
 * Return: 0, -ENODEV when the path is being closed, or the connect error.
 */
int rtrs_clt_path_reconnect(struct rtrs_clt_path *path)
{
	unsigned int tries = 0;
	int err;

	rtrs_clt_path_disconnect(path);
	WRITE_ONCE(path->stay_down, false);
	if (!rtrs_clt_path_change_state(path, RTRS_CLT_CLOSED,
					RTRS_CLT_CONNECTING))
		return -ENODEV;

	path->reconnect_attempts = 0;
	path->s.recon_cnt++;
	err = rtrs_clt_path_open(path);
	while (err == -EBUSY && ++tries < RTRS_CLT_BUSY_TRIES) {
		msleep(RTRS_CLT_BUSY_RETRY_MS);
		err = rtrs_clt_path_open(path);
	}
	if (!err) {
		atomic_inc(&path->stats.reconnects);
		return 0;
	}
	atomic_inc(&path->stats.reconnect_fails);
	rtrs_clt_path_schedule_reconnect(path, RTRS_CLT_CONNECTING);
	return err;
}

/**
 * rtrs_clt_path_close() - take a path down for good
 * @path: the path.
 *
 * Nothing restarts the path afterwards; requests in flight on it are
 * completed with -ECONNABORTED.
 *
 * Context: process context; sleeps.
 */
void rtrs_clt_path_close(struct rtrs_clt_path *path)
{
	spin_lock_irq(&path->state_lock);
	rtrs_clt_path_set_state(path, RTRS_CLT_DEAD);
	/* A connect in progress gives up at its next wait. */
	WRITE_ONCE(path->connect_failed, true);
	complete(&path->info_done);
	spin_unlock_irq(&path->state_lock);

	cancel_work_sync(&path->close_work);
	cancel_delayed_work_sync(&path->reconnect_dwork);

	mutex_lock(&path->init_mutex);
	rtrs_clt_path_teardown(path);
	rtrs_clt_path_down(path);
	mutex_unlock(&path->init_mutex);
}

/* The last reference to a path is gone: free it. */
static void rtrs_clt_path_dev_release(struct device *dev)
{
	struct rtrs_clt_path *path = container_of(dev, struct rtrs_clt_path,
						  dev);

	mutex_destroy(&path->init_mutex);
	free_percpu(path->stats.pcpu);
	kfree(path->steer);
	kfree(path->s.con);
	kfree(path);
}

/**
 * rtrs_clt_path_alloc() - allocate a path of a session
 * @clt: the session.
 * @addr: source (may be NULL) and destination of the path; copied.
 *
 * Context: process context; sleeps.
 * Return: the path in %RTRS_CLT_CONNECTING, not connected, or an ERR_PTR().
 */
struct rtrs_clt_path *rtrs_clt_path_alloc(struct rtrs_clt_sess *clt,
					  const struct rtrs_addr *addr)
{
	struct rtrs_clt_path *path;

	path = rtrs_kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	/* From here on the release of @path->dev frees it all. */
	path->clt = clt;
	INIT_LIST_HEAD(&path->quarantine);
	device_initialize(&path->dev);
	path->dev.release = rtrs_clt_path_dev_release;

	path->s.irq_con_num = 1 + nr_cpu_ids;
	path->s.con_num = path->s.irq_con_num + clt->nr_poll_queues;
	path->s.con = rtrs_kcalloc(path->s.con_num, sizeof(*path->s.con),
				   GFP_KERNEL);
	path->steer = rtrs_kcalloc(nr_cpu_ids, sizeof(*path->steer),
				   GFP_KERNEL);
	path->stats.pcpu = rtrs_alloc_percpu(struct rtrs_clt_cpu_stats);
	if (!path->s.con || !path->steer || !path->stats.pcpu) {
		rtrs_clt_path_free(path);
		return ERR_PTR(-ENOMEM);
	}

	if (addr->src)
		memcpy(&path->s.src_addr, addr->src, sizeof(*addr->src));
	memcpy(&path->s.dst_addr, addr->dst, sizeof(*addr->dst));
	strscpy(path->s.sessname, clt->sessname, sizeof(path->s.sessname));
	uuid_gen(&path->s.uuid);

	spin_lock_init(&path->state_lock);
	path->state = RTRS_CLT_CONNECTING;
	mutex_init(&path->init_mutex);
	INIT_WORK(&path->close_work, rtrs_clt_close_work);
	INIT_DELAYED_WORK(&path->reconnect_dwork, rtrs_clt_reconnect_work);
	INIT_DELAYED_WORK(&path->wd_dwork, rtrs_clt_wd_work);
	init_completion(&path->info_done);
	path->hb_cqe.done = rtrs_clt_hb_done;
	rtrs_init_hb(&path->s, &path->hb_cqe, RTRS_HB_INTERVAL_MS,
		     RTRS_HB_MISSED_MAX, rtrs_clt_hb_err, rtrs_clt_wq);
	return path;
}

/**
 * rtrs_clt_path_free() - drop a path
 * @path: a path closed with rtrs_clt_path_close(), or never opened.
 *
 * The caller has removed its sysfs directory, if it had one; the memory
 * goes with the last reference to it.  Chunks it still quarantines stay
 * withheld.
 *
 * Context: process context.
 */
void rtrs_clt_path_free(struct rtrs_clt_path *path)
{
	rtrs_clt_chunks_orphan(path);
	put_device(&path->dev);
}
