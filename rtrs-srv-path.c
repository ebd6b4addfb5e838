// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server sessions, paths and connections.
 *
 * A client session (paths_uuid) has one or more paths (sess_uuid), each
 * of cid_num connections, which arrive one RDMA CM connect request at a
 * time.  The first connection of a new session carries the first-conn
 * flag and creates the session; the first connection of a path creates
 * the path.  Chunks come only with a path's INFO_REQ, once every
 * connection is up, and connections of paths not yet connected are held
 * to a budget (rtrs_srv_setup_budget()): a client that proves nothing
 * holds little.  A path is
 * torn down by its close work only, whatever made it fail: a CM event, a
 * failed work request, a protocol violation, missed heartbeats, the
 * device going away or rtrs_srv_close().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib.h>
#include <rdma/ib_cm.h>

#include "rtrs-srv.h"
#include "trace/srv.h"

/* Largest IO header plus user message, as mainline reserves it. */
#define RTRS_SRV_MAX_HDR_SIZE	4096

static unsigned int sess_queue_depth = 512;
module_param(sess_queue_depth, uint, 0444);
MODULE_PARM_DESC(sess_queue_depth,
		 "Chunks, and so IOs in flight, per session (1-65535; default 512)");

static unsigned int max_chunk_size = 128 << 10;
module_param(max_chunk_size, uint, 0444);
MODULE_PARM_DESC(max_chunk_size,
		 "Bytes per chunk, a power of two of at least 8192; the largest IO is 4096 less (default 131072)");

static bool rtrs_srv_always_invalidate = true;
module_param_named(always_invalidate, rtrs_srv_always_invalidate, bool,
		   0444);
MODULE_PARM_DESC(always_invalidate,
		 "Invalidate and re-key each chunk for every IO (default Y)");

/*
 * 2.1: READs of up to RTRS_SRV_READ_BUF_2_1 bytes may come as READ_BUF,
 * answered by one RDMA WRITE WITH IMMEDIATE into the client's read buffer
 * instead of an RDMA WRITE and a SEND WITH INVALIDATE.  Off, the
 * connection response says so and such clients register every READ.
 */
static bool rtrs_srv_read_bufs = true;
module_param_named(read_bufs, rtrs_srv_read_bufs, bool, 0444);
MODULE_PARM_DESC(read_bufs,
		 "2.1: answer READs of up to 4 KiB into the client's read buffers, data and response in one RDMA WRITE WITH IMMEDIATE (default Y)");

/*
 * Where the completion work of a connection runs.  On the bound
 * workqueue it runs on the CPU that took the completion, which spreads
 * it where the device has a completion vector per CPU.  A device with
 * one vector (rxe and siw, which complete on the CPU that processed the
 * packet) would keep every connection's work on that CPU while the
 * others idle: there the unbound workqueue lets an idle CPU take it, at
 * the price of a wakeup of that CPU when the queue is nearly idle.
 */
static int rtrs_srv_cq_unbound = -1;
module_param_named(cq_unbound, rtrs_srv_cq_unbound, int, 0644);
MODULE_PARM_DESC(cq_unbound,
		 "Run completion work on the unbound workqueue: 1 always, 0 never, -1 where the device has one completion vector (default -1)");

/*
 * A path holds its queue pairs from its first connection on; one whose
 * client never completes it (the other connections or the INFO_REQ never
 * come) must not hold them forever.
 */
static unsigned int rtrs_srv_connect_timeout_sec = 60;
module_param_named(connect_timeout_sec, rtrs_srv_connect_timeout_sec, uint,
		   0644);
MODULE_PARM_DESC(connect_timeout_sec,
		 "Seconds a new path may take from its first connection to its INFO_REQ before it is closed; 0: no limit, above 86400: 86400 (default 60)");

/*
 * Connections of paths not yet connected hold queue pairs for clients
 * that have proven nothing yet: a budget for all of them on a listening
 * port, and a smaller one for each client address, so that one client
 * cannot take the whole of it.  A client refused for the budget sees
 * -EBUSY and tries again later, as for any busy path.
 */
static unsigned int rtrs_srv_setup_cons_max = 1024;
module_param_named(setup_cons_max, rtrs_srv_setup_cons_max, uint, 0644);
MODULE_PARM_DESC(setup_cons_max,
		 "Connections of paths being set up, on one port, beyond which connect requests are refused (default 1024)");

static unsigned int rtrs_srv_setup_cons_per_client = 256;
module_param_named(setup_cons_per_client, rtrs_srv_setup_cons_per_client,
		   uint, 0644);
MODULE_PARM_DESC(setup_cons_per_client,
		 "The same, from one client address (default 256)");

/*
 * The highest protocol minor the server agrees to: 1 for 2.1, 0 to speak
 * 2.0 with every client.  Read when a session's first connection comes.
 */
static int rtrs_srv_set_max_minor(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, RTRS_PROTO_MINOR_MAX);
}

static const struct kernel_param_ops rtrs_srv_max_minor_ops = {
	.set	= rtrs_srv_set_max_minor,
	.get	= param_get_uint,
};

static unsigned int rtrs_srv_max_minor = RTRS_PROTO_MINOR_MAX;
module_param_cb(max_proto_minor, &rtrs_srv_max_minor_ops,
		&rtrs_srv_max_minor, 0644);
MODULE_PARM_DESC(max_proto_minor,
		 "Highest protocol minor agreed to: 1 for 2.1, 0 for 2.0 only; for sessions that come after a change (default 1)");

/* Devices and PDs of every server path. */
struct rtrs_ib_dev_pool rtrs_srv_dev_pool;

/**
 * rtrs_srv_check_params() - check the module parameters read at load
 *
 * Context: module init.
 * Return: 0, or -EINVAL with a line saying which parameter is wrong.
 */
int rtrs_srv_check_params(void)
{
	if (!sess_queue_depth || sess_queue_depth > RTRS_MAX_QUEUE_DEPTH) {
		pr_err("sess_queue_depth %u is not within 1-%u\n",
		       sess_queue_depth, RTRS_MAX_QUEUE_DEPTH);
		return -EINVAL;
	}
	if (max_chunk_size < RTRS_MIN_CHUNK_SIZE ||
	    !is_power_of_2(max_chunk_size)) {
		pr_err("max_chunk_size %u is not a power of two of at least %u\n",
		       max_chunk_size, RTRS_MIN_CHUNK_SIZE);
		return -EINVAL;
	}
	/* Every offset within a chunk must fit in the immediate's offset. */
	if (ilog2(max_chunk_size) > rtrs_imm_off_bits(sess_queue_depth)) {
		pr_err("%u chunks of %u bytes do not fit in the immediate data\n",
		       sess_queue_depth, max_chunk_size);
		return -EINVAL;
	}
	return 0;
}

/**
 * rtrs_srv_close_sessions() - close the paths of a context
 * @ctx: the context
 * @ib_dev: close only the paths on this device; NULL for all
 *
 * Does not wait: flush rtrs_srv_wq for that.
 */
void rtrs_srv_close_sessions(struct rtrs_srv_ctx *ctx,
			     struct ib_device *ib_dev)
{
	struct rtrs_srv_path *path;
	struct rtrs_srv_sess *sess;

	mutex_lock(&ctx->mutex);
	list_for_each_entry(sess, &ctx->sess_list, entry) {
		mutex_lock(&sess->paths_mutex);
		list_for_each_entry(path, &sess->paths_list, entry)
			if (!ib_dev || path->s.dev->ib_dev == ib_dev)
				rtrs_srv_close_path(path);
		mutex_unlock(&sess->paths_mutex);
	}
	mutex_unlock(&ctx->mutex);
}

/* Sessions. */

static void rtrs_srv_free_sess(struct rtrs_srv_sess *sess)
{
	rtrs_srv_sysfs_sess_del(sess);
	mutex_destroy(&sess->sysfs_mutex);
	rtrs_srv_free_chunks(sess);
	if (rtrs_srv_sess_2_1(sess))
		rtrs_srv_pool_user_exit(&sess->pool_user);
	mutex_destroy(&sess->ev_mutex);
	mutex_destroy(&sess->paths_mutex);
	kfree(sess);
}

static struct rtrs_srv_sess *rtrs_srv_alloc_sess(struct rtrs_srv_ctx *ctx,
						 const uuid_t *paths_uuid,
						 u16 version, bool msg_tags)
{
	struct rtrs_srv_sess *sess;

	sess = rtrs_kzalloc(sizeof(*sess), GFP_KERNEL);
	if (!sess)
		return ERR_PTR(-ENOMEM);

	sess->ctx = ctx;
	uuid_copy(&sess->paths_uuid, paths_uuid);
	sess->version = version;
	refcount_set(&sess->refcount, 1);
	mutex_init(&sess->paths_mutex);
	INIT_LIST_HEAD(&sess->paths_list);
	mutex_init(&sess->ev_mutex);
	mutex_init(&sess->sysfs_mutex);
	sess->queue_depth = sess_queue_depth;
	if (rtrs_srv_sess_2_1(sess)) {
		/*
		 * No chunks: requests come in shared receive buffers, their
		 * data goes through buffers of the server's pool.
		 */
		sess->max_io_size = RTRS_SRV_MAX_IO_2_1;
		sess->max_read_buf = rtrs_srv_read_bufs ?
				     RTRS_SRV_READ_BUF_2_1 : 0;
		sess->msg_tags = msg_tags;
		rtrs_srv_pool_user_init(&rtrs_srv_buf_pool, &sess->pool_user);
		return sess;
	}
	sess->chunk_size = max_chunk_size;
	sess->max_io_size = max_chunk_size - RTRS_SRV_MAX_HDR_SIZE;
	/* Its chunks come with its first INFO_REQ: rtrs_srv_path_chunks(). */
	return sess;
}

/*
 * Find the session of @paths_uuid and take a reference, or create it when
 * this is the first connection of a new session.  Every path of a session
 * speaks the version its first path agreed on: a connection that asks for
 * another (which no client of one version sends) gets -EPROTO.  A 2.1
 * session tags its message ids when its first connection asked
 * (@msg_tags); every connection response says what the session does.
 */
static struct rtrs_srv_sess *rtrs_srv_get_sess(struct rtrs_srv_ctx *ctx,
					       const uuid_t *paths_uuid,
					       bool first_conn, u16 version,
					       bool msg_tags)
{
	struct rtrs_srv_sess *sess;

	mutex_lock(&ctx->mutex);
	list_for_each_entry(sess, &ctx->sess_list, entry) {
		if (!uuid_equal(&sess->paths_uuid, paths_uuid))
			continue;
		if (sess->version != version) {
			pr_err_ratelimited("session %pUb speaks %u.%u, a connection asked for %u.%u\n",
					   paths_uuid, sess->version >> 8,
					   sess->version & 0xff, version >> 8,
					   version & 0xff);
			sess = ERR_PTR(-EPROTO);
			goto unlock;
		}
		refcount_inc(&sess->refcount);
		goto unlock;
	}
	sess = first_conn ? rtrs_srv_alloc_sess(ctx, paths_uuid, version,
						msg_tags) :
			    ERR_PTR(-ENXIO);
	if (!IS_ERR(sess))
		list_add_tail(&sess->entry, &ctx->sess_list);
unlock:
	mutex_unlock(&ctx->mutex);
	return sess;
}

static void rtrs_srv_put_sess(struct rtrs_srv_sess *sess)
{
	struct rtrs_srv_ctx *ctx = sess->ctx;

	if (!refcount_dec_and_mutex_lock(&sess->refcount, &ctx->mutex))
		return;
	list_del(&sess->entry);
	mutex_unlock(&ctx->mutex);
	rtrs_srv_free_sess(sess);
}

/* Connections. */

/*
 * The CM id goes between the QP and the connection: until
 * rdma_destroy_id() returns, an event of the id may still run
 * rtrs_srv_cm_handler(), which finds the connection through the id.
 */
static void rtrs_srv_free_con(struct rtrs_srv_con *con)
{
	rtrs_cq_qp_destroy(&con->c);
	rtrs_srv_free_packs(con);
	rdma_destroy_id(con->c.cm_id);
	kfree(con);
}

static enum ib_poll_context rtrs_srv_poll_ctx(struct ib_device *ib_dev)
{
	int unbound = READ_ONCE(rtrs_srv_cq_unbound);

	if (unbound < 0)
		unbound = ib_dev->num_comp_vectors < 2;
	return unbound ? IB_POLL_UNBOUND_WORKQUEUE : IB_POLL_WORKQUEUE;
}

/*
 * Size the queues for the worst case: every chunk's request on this
 * connection, each with its LOCAL_INV and a response of up to
 * RTRS_SRV_RSP_WRS work requests; heartbeat message and ack; and the
 * drain.  Connection 0 also carries the INFO_RSP with a REG_MR per chunk.
 *
 * An IO connection of a 2.1 session posts less: a request's RDMA READ of
 * WRITE data, and a response of RTRS_SRV_RSP_WRS_2_1 work requests at
 * most.  Its room is still counted in units of RTRS_SRV_RSP_WRS per
 * response (sq_wr_avail), which lets no more responses into the queue
 * than requests; the queue needs only the work requests they post.
 * Connection 0 of a 2.1 session takes no requests: its queues do not
 * grow with the queue depth (RTRS_SRV_CON0_SENDS_2_1), and it has no
 * room for responses.
 */
static int rtrs_srv_create_qp(struct rtrs_srv_path *path,
			      struct rtrs_srv_con *con)
{
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 depth = path->sess->queue_depth;
	u32 rsp_wrs = RTRS_SRV_RSP_WRS;
	struct ib_srq *srq = NULL;
	u32 max_send_wr, max_recv_wr;
	bool admin_2_1 = rtrs_srv_con_admin_2_1(path, con->c.cid);
	int err;

	if (rtrs_srv_con_on_srq(path, con->c.cid)) {
		srq = path->srq->srq;
		rsp_wrs = RTRS_SRV_RSP_WRS_2_1;
	}

	/*
	 * + 4: a heartbeat, its ack, the watchdog's flush of the responses and
	 * the drain, outside sq_wr_avail.
	 */
	max_send_wr = depth * (1 + rsp_wrs) + 4;
	max_recv_wr = depth + 2 + 1;
	if (admin_2_1) {
		/* + 1: the drain; + 1: the INFO_REQ. */
		max_send_wr = RTRS_SRV_CON0_SENDS_2_1 + 1;
		max_recv_wr = RTRS_SRV_CON0_RECVS_2_1 + 1 + 1;
	} else if (!con->c.cid) {
		max_send_wr += depth + 1;
		max_recv_wr += 1;
	}
	if (max_send_wr > ib_dev->attrs.max_qp_wr ||
	    max_recv_wr > ib_dev->attrs.max_qp_wr) {
		pr_err_ratelimited("%s: queue depth %u too deep for %s\n",
				   path->s.sessname, depth,
				   dev_name(&ib_dev->dev));
		return -EINVAL;
	}

	/*
	 * A 2.1 response of its own goes inline: copied into the work
	 * request when posted, so that a retransmission sends what was
	 * posted, whatever the slot's next response writes to its buffer.
	 */
	con->c.max_inline = srq ? sizeof(struct rtrs_msg_io_rsp) : 0;
	err = rtrs_cq_qp_create(&path->s, &con->c, 1,
				con->c.cid % ib_dev->num_comp_vectors,
				max_send_wr + max_recv_wr, max_send_wr,
				max_recv_wr, srq, rtrs_srv_poll_ctx(ib_dev));
	if (err)
		return err;
	atomic_set(&con->c.sq_wr_avail,
		   admin_2_1 ? 0 : depth * RTRS_SRV_RSP_WRS);
	/*
	 * Unsignaled responses keep their room until a signaled one completes;
	 * with no more than depth / 4 of them between two signaled ones, a
	 * full send queue always holds a signaled response, and at most a
	 * quarter of the room waits for one.
	 */
	con->rsp_batch = clamp_t(u32, depth / 4, 1, RTRS_SRV_RSP_BATCH);
	atomic_set(&con->c.wr_cnt, 0);
	con->c.signal_interval = 1;
	return 0;
}

/*
 * @packed: the client asked for packed responses on this connection; an
 * IO connection of a 2.1 path sends them (connection 0 sends none).
 */
static int rtrs_srv_create_con(struct rtrs_srv_path *path,
			       struct rdma_cm_id *cm_id, unsigned int cid,
			       bool packed)
{
	struct rtrs_srv_con *con;
	int err;

	lockdep_assert_held(&path->sess->paths_mutex);

	con = rtrs_kzalloc(sizeof(*con), GFP_KERNEL);
	if (!con)
		return -ENOMEM;
	con->c.path = &path->s;
	con->c.cm_id = cm_id;
	con->c.cid = cid;
	rtrs_srv_init_con_cqes(con);

	if (packed && rtrs_srv_con_on_srq(path, cid)) {
		err = rtrs_srv_alloc_packs(con);
		if (err)
			goto free_con;
	}
	err = rtrs_srv_create_qp(path, con);
	if (err)
		goto free_packs;
	if (!cid) {
		err = rtrs_srv_post_info_recv(path, con);
		if (err)
			goto destroy_qp;
	}
	/* A connection on the shared queue has no receives of its own. */
	if (!rtrs_srv_con_on_srq(path, cid)) {
		err = rtrs_srv_post_recvs(con,
					  rtrs_srv_con_admin_2_1(path, cid) ?
					  RTRS_SRV_CON0_RECVS_2_1 :
					  path->sess->queue_depth + 2);
		if (err)
			goto destroy_qp;
	}

	path->s.con[cid] = &con->c;
	cm_id->context = &con->c;
	return 0;

destroy_qp:
	rtrs_cq_qp_destroy(&con->c);
free_packs:
	rtrs_srv_free_packs(con);
free_con:
	kfree(con);
	return err;
}

/* Paths. */

static void rtrs_srv_close_work(struct work_struct *work);

static void rtrs_srv_hb_err(struct rtrs_con *c)
{
	struct rtrs_srv_path *path = to_srv_path(c->path);

	pr_err_ratelimited("%s: heartbeats not acknowledged\n",
			   path->s.sessname);
	rtrs_srv_close_path(path);
}

static void rtrs_srv_hb_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rtrs_srv_path *path = container_of(wc->wr_cqe,
						  struct rtrs_srv_path, hb_cqe);

	rtrs_srv_wc_ok(path, wc, "heartbeat");
}

static void rtrs_srv_init_path(struct rtrs_srv_path *path,
			       struct rtrs_srv_sess *sess,
			       struct rdma_cm_id *cm_id,
			       const struct rtrs_msg_conn_req *req)
{
	struct rtrs_addr addr = {
		.src = &path->s.src_addr,
		.dst = &path->s.dst_addr,
	};

	path->sess = sess;
	path->state = RTRS_SRV_CONNECTING;
	spin_lock_init(&path->state_lock);
	INIT_WORK(&path->close_work, rtrs_srv_close_work);
	INIT_DELAYED_WORK(&path->wd_dwork, rtrs_srv_wd_work);
	/* A 2.1 path registers no server memory for the client: no keys. */
	path->always_invalidate = rtrs_srv_always_invalidate &&
				  !rtrs_srv_sess_2_1(sess);
	path->s.src_addr = cm_id->route.addr.src_addr;
	path->s.dst_addr = cm_id->route.addr.dst_addr;
	/* Named by its addresses until the INFO_REQ names it. */
	rtrs_addr_to_str(&addr, path->s.sessname, sizeof(path->s.sessname));
	path->s.con_num = le16_to_cpu(req->cid_num);
	path->s.irq_con_num = path->s.con_num;
	path->s.recon_cnt = le16_to_cpu(req->recon_cnt);
	uuid_copy(&path->s.uuid, &req->sess_uuid);
	path->hb_cqe.done = rtrs_srv_hb_done;
	rtrs_init_hb(&path->s, &path->hb_cqe, RTRS_HB_INTERVAL_MS,
		     RTRS_HB_MISSED_MAX, rtrs_srv_hb_err, rtrs_srv_wq);
}

static void rtrs_srv_free_path(struct rtrs_srv_path *path)
{
	rtrs_srv_free_info_bufs(path);
	rtrs_srv_free_ops(path);
	rtrs_srv_unmap_chunks(path);
	if (path->srq)
		rtrs_srv_srq_put(path->srq);
	rtrs_ib_dev_put(path->s.dev);
	free_percpu(path->stats);
	kfree(path->s.con);
	kfree(path);
}

/* Show a path that came up in sysfs; a path without its files still works. */
static void rtrs_srv_sysfs_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(to_delayed_work(work),
						  struct rtrs_srv_path,
						  sysfs_work);
	struct rtrs_srv_sess *sess = path->sess;
	int err;

	mutex_lock(&sess->sysfs_mutex);
	err = rtrs_srv_sysfs_path_add(path);
	mutex_unlock(&sess->sysfs_mutex);
	if (err == -EEXIST && ++path->sysfs_tries < RTRS_SRV_SYSFS_TRIES) {
		queue_delayed_work(rtrs_srv_wq, &path->sysfs_work,
				   msecs_to_jiffies(RTRS_SRV_SYSFS_RETRY_MS));
		return;
	}
	if (err)
		pr_warn_ratelimited("%s: no sysfs directory for a path: %d\n",
				    path->s.sessname, err);
}

/*
 * The watchdog's first run ends a path still connecting; the INFO_REQ
 * moves it to its heartbeat rhythm (rtrs_srv_process_info_req()).
 */
static void rtrs_srv_arm_connect_timeout(struct rtrs_srv_path *path)
{
	path->connect_timeout = min(READ_ONCE(rtrs_srv_connect_timeout_sec),
				    RTRS_SRV_CONNECT_TIMEOUT_MAX);
	if (path->connect_timeout)
		queue_delayed_work(rtrs_srv_wq, &path->wd_dwork,
				   path->connect_timeout * HZ);
}

static struct rtrs_srv_path *
rtrs_srv_alloc_path(struct rtrs_srv_sess *sess, struct rdma_cm_id *cm_id,
		    const struct rtrs_msg_conn_req *req)
{
	struct rtrs_srv_path *path;
	int err = -ENOMEM;

	lockdep_assert_held(&sess->paths_mutex);

	if (sess->paths_num >= RTRS_MAX_PATHS)
		return ERR_PTR(-EMLINK);

	path = rtrs_kzalloc(sizeof(*path), GFP_KERNEL);
	if (!path)
		return ERR_PTR(-ENOMEM);
	rtrs_srv_init_path(path, sess, cm_id, req);
	INIT_DELAYED_WORK(&path->sysfs_work, rtrs_srv_sysfs_work);
	path->hca_port = cm_id->port_num;
	path->stats = rtrs_alloc_percpu(struct rtrs_srv_cpu_stats);
	if (!path->stats)
		goto free_path;
	path->s.con = rtrs_kcalloc(path->s.con_num, sizeof(*path->s.con),
				   GFP_KERNEL);
	if (!path->s.con)
		goto free_path;

	path->s.dev = rtrs_ib_dev_get(&rtrs_srv_dev_pool, cm_id->device);
	if (IS_ERR(path->s.dev)) {
		err = PTR_ERR(path->s.dev);
		goto free_cons;
	}
	if (rtrs_srv_sess_2_1(sess)) {
		path->srq = rtrs_srv_srq_get(path->s.dev, rtrs_srv_rbuf_done);
		if (IS_ERR(path->srq)) {
			err = PTR_ERR(path->srq);
			path->srq = NULL;
			goto put_dev;
		}
	}
	err = rtrs_srv_alloc_ops(path);
	if (err)
		goto put_srq;
	if (path->srq)
		rtrs_srv_init_ops_2_1(path);
	err = rtrs_srv_alloc_info_bufs(path);
	if (err)
		goto free_ops;

	list_add_tail(&path->entry, &sess->paths_list);
	sess->paths_num++;
	rtrs_srv_arm_connect_timeout(path);
	return path;

free_ops:
	rtrs_srv_free_ops(path);
put_srq:
	if (path->srq)
		rtrs_srv_srq_put(path->srq);
put_dev:
	rtrs_ib_dev_put(path->s.dev);
free_cons:
	kfree(path->s.con);
free_path:
	free_percpu(path->stats);
	kfree(path);
	return ERR_PTR(err);
}

static struct rtrs_srv_path *rtrs_srv_find_path(struct rtrs_srv_sess *sess,
						const uuid_t *sess_uuid)
{
	struct rtrs_srv_path *path;

	lockdep_assert_held(&sess->paths_mutex);

	list_for_each_entry(path, &sess->paths_list, entry)
		if (uuid_equal(&path->s.uuid, sess_uuid))
			return path;
	return NULL;
}

static void rtrs_srv_disconnect_cons(struct rtrs_srv_path *path)
{
	unsigned int cid;

	for (cid = 0; cid < path->s.con_num; cid++) {
		struct rtrs_con *c = path->s.con[cid];

		if (!c)
			continue;
		rtrs_srv_stop_responses(to_srv_con(c));
		rdma_disconnect(c->cm_id);
		ib_drain_qp(c->qp);
	}
}

static void rtrs_srv_drop_all_waiting(struct rtrs_srv_path *path)
{
	unsigned int cid;

	for (cid = 0; cid < path->s.con_num; cid++)
		if (path->s.con[cid])
			rtrs_srv_drop_waiting(to_srv_con(path->s.con[cid]));
}

static void rtrs_srv_destroy_cons(struct rtrs_srv_path *path)
{
	unsigned int cid;

	for (cid = 0; cid < path->s.con_num; cid++) {
		struct rtrs_con *c = path->s.con[cid];

		if (!c)
			continue;
		rtrs_srv_free_con(to_srv_con(c));
		path->s.con[cid] = NULL;
	}
}

static void rtrs_srv_stop_works(struct rtrs_srv_path *path)
{
	cancel_delayed_work_sync(&path->sysfs_work);
	cancel_delayed_work_sync(&path->wd_dwork);
	rtrs_stop_hb(&path->s);
}

/*
 * The one teardown of a path: stop the heartbeats, disconnect and drain
 * every connection, drop its requests that wait for a chunk, wait until
 * the user responded to every request it took, tell the user when this was
 * the session's last path up, pass on any chunk it still owns, and free.
 */
static void rtrs_srv_close_work(struct work_struct *work)
{
	struct rtrs_srv_path *path = container_of(work, struct rtrs_srv_path,
						  close_work);
	struct rtrs_srv_sess *sess = path->sess;

	rtrs_srv_stop_works(path);

	/* Wait out a connect request that is adding a connection. */
	mutex_lock(&sess->paths_mutex);
	mutex_unlock(&sess->paths_mutex);

	rtrs_srv_disconnect_cons(path);
	/*
	 * An INFO_REQ that moved the path to connected just before the
	 * close may have started the works again; after the drain no
	 * completion handler runs to do so.
	 */
	rtrs_srv_stop_works(path);
	mutex_lock(&sess->sysfs_mutex);
	rtrs_srv_sysfs_path_del(path);
	mutex_unlock(&sess->sysfs_mutex);
	percpu_ref_kill(&path->ops_ref);
	rtrs_srv_drop_all_waiting(path);
	if (path->srq)
		rtrs_srv_end_waiting_2_1(path);
	else
		rtrs_srv_end_handed(path);
	wait_for_completion(&path->ops_done);
	rtrs_srv_path_down(path);
	rtrs_srv_destroy_cons(path);
	rtrs_srv_end_orphans(path);

	mutex_lock(&sess->paths_mutex);
	list_del(&path->entry);
	sess->paths_num--;
	mutex_unlock(&sess->paths_mutex);

	rtrs_srv_change_state(path, RTRS_SRV_CLOSING, RTRS_SRV_CLOSED);
	rtrs_srv_free_path(path);
	rtrs_srv_put_sess(sess);
}

/* Connection requests. */

/* The same client: the same address, whatever the port. */
static bool rtrs_srv_same_client(const struct sockaddr_storage *a,
				 const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	switch (b->sa_family) {
	case AF_INET:
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	case AF_INET6:
		return ipv6_addr_equal(&((const struct sockaddr_in6 *)a)->sin6_addr,
				       &((const struct sockaddr_in6 *)b)->sin6_addr);
	case AF_IB:
		return !memcmp(&((const struct sockaddr_ib *)a)->sib_addr,
			       &((const struct sockaddr_ib *)b)->sib_addr,
			       sizeof(struct ib_addr));
	}
	return false;
}

static unsigned int rtrs_srv_cons_up(struct rtrs_srv_path *path)
{
	unsigned int cid, n = 0;

	for (cid = 0; cid < path->s.con_num; cid++)
		n += !!path->s.con[cid];
	return n;
}

/*
 * May @client add one more connection to a path being set up?  Every
 * connection the server accepts is one of a path not yet connected, and
 * holds a queue pair until the path's INFO_REQ or its connect timeout:
 * count those of @ctx, of all clients and of @client.
 */
static int rtrs_srv_setup_budget(struct rtrs_srv_ctx *ctx,
				 const struct sockaddr *client)
{
	unsigned int all = 0, mine = 0, n;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;

	mutex_lock(&ctx->mutex);
	list_for_each_entry(sess, &ctx->sess_list, entry) {
		mutex_lock(&sess->paths_mutex);
		list_for_each_entry(path, &sess->paths_list, entry) {
			if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTING)
				continue;
			n = rtrs_srv_cons_up(path);
			all += n;
			if (rtrs_srv_same_client(&path->s.dst_addr, client))
				mine += n;
		}
		mutex_unlock(&sess->paths_mutex);
	}
	mutex_unlock(&ctx->mutex);

	if (all < READ_ONCE(rtrs_srv_setup_cons_max) &&
	    mine < READ_ONCE(rtrs_srv_setup_cons_per_client))
		return 0;
	pr_err_ratelimited("connect request from %pISc refused: %u connections of paths being set up, %u of them from there\n",
			   client, all, mine);
	return -EBUSY;
}

/* A reject is a 2.0 response in every version: the client reads its errno. */
static int rtrs_srv_reject(struct rdma_cm_id *cm_id, int errno)
{
	struct rtrs_msg_conn_rsp rsp = {
		.magic = cpu_to_le16(RTRS_MAGIC),
		.version = cpu_to_le16(RTRS_PROTO_VER),
		.errno = cpu_to_le16((u16)errno),
	};

	rdma_reject(cm_id, &rsp, sizeof(rsp), IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: the RDMA CM destroys @cm_id. */
	return errno;
}

/*
 * Accept a connection of a 2.1 path: the 2.1 response, and as many RDMA
 * READs in flight (of WRITE data from the client's memory) as the client
 * and the device allow.
 */
static int rtrs_srv_accept_2_1(struct rtrs_srv_path *path,
			       struct rdma_cm_id *cm_id,
			       const struct rdma_conn_param *req)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_msg_conn_rsp_2_1 rsp = {
		.magic = cpu_to_le16(RTRS_MAGIC),
		.version = cpu_to_le16(sess->version),
		.queue_depth = cpu_to_le16(sess->queue_depth),
		.max_io_size = cpu_to_le32(sess->max_io_size),
		.max_hdr_size = cpu_to_le32(RTRS_SRV_HDR_SIZE_2_1),
		.max_inline_size = cpu_to_le32(PAGE_SIZE),
		.max_read_buf = cpu_to_le32(sess->max_read_buf),
		.flags = cpu_to_le32(sess->msg_tags ? RTRS_CONN_RSP_MSG_TAGS : 0),
	};
	struct rdma_conn_param param = {
		.rnr_retry_count = 7,
		/*
		 * The connect request's initiator_depth is what the client
		 * offers to respond to (the CM swaps the two for the
		 * passive side).
		 */
		.initiator_depth = min_t(u32, req->initiator_depth,
					 cm_id->device->attrs.max_qp_init_rd_atom),
		.private_data = &rsp,
		.private_data_len = sizeof(rsp),
	};

	return rtrs_fail_or(-ENOMEM,
			    rdma_set_ack_timeout(cm_id, RTRS_ACK_TIMEOUT) ?:
			    rdma_accept(cm_id, &param));
}

static int rtrs_srv_accept(struct rtrs_srv_path *path,
			   struct rdma_cm_id *cm_id,
			   const struct rdma_conn_param *req)
{
	struct rtrs_srv_sess *sess = path->sess;
	u32 max_io = sess->max_io_size;
	struct rtrs_msg_conn_rsp rsp = {
		.magic = cpu_to_le16(RTRS_MAGIC),
		.version = cpu_to_le16(sess->version),
		.queue_depth = cpu_to_le16(sess->queue_depth),
		.max_io_size = cpu_to_le32(max_io),
		.max_hdr_size = cpu_to_le32(sess->chunk_size - max_io),
	};
	struct rdma_conn_param param = {
		.rnr_retry_count = 7,
		.private_data = &rsp,
		.private_data_len = sizeof(rsp),
	};

	if (rtrs_srv_sess_2_1(sess))
		return rtrs_srv_accept_2_1(path, cm_id, req);
	if (path->always_invalidate)
		rsp.flags = cpu_to_le32(RTRS_MSG_NEW_RKEY_F);
	return rtrs_fail_or(-ENOMEM,
			    rdma_set_ack_timeout(cm_id, RTRS_ACK_TIMEOUT) ?:
			    rdma_accept(cm_id, &param));
}

/*
 * The path a connection joins.  A path of that sess_uuid whose reconnect
 * count differs is left over from an earlier attempt of the client, which
 * gave up on it: close it, and refuse the new attempt with -EBUSY until it
 * is gone, as for any connection to a path of that sess_uuid that is
 * closing.  Until then requests it handed to the user may still own
 * chunks of the session; the client takes an accepted reconnect as the
 * proof that they ended (see "Failover and chunks" in rtrs.rst), as a
 * mainline server, which refuses a second path of the same addresses,
 * lets it.
 */
static struct rtrs_srv_path *
rtrs_srv_path_for_con(struct rtrs_srv_sess *sess, struct rdma_cm_id *cm_id,
		      const struct rtrs_msg_conn_req *req, bool *joined)
{
	u16 cid = le16_to_cpu(req->cid);
	struct rtrs_srv_path *path;

	lockdep_assert_held(&sess->paths_mutex);

	path = rtrs_srv_find_path(sess, &req->sess_uuid);
	if (path && rtrs_srv_path_state(path) > RTRS_SRV_CONNECTED)
		return ERR_PTR(-EBUSY);
	if (path && path->s.recon_cnt != le16_to_cpu(req->recon_cnt)) {
		pr_info_ratelimited("%s: client reconnected, closing the old path\n",
				    path->s.sessname);
		rtrs_srv_close_path(path);
		return ERR_PTR(-EBUSY);
	}
	*joined = path;
	if (!path)
		return rtrs_srv_alloc_path(sess, cm_id, req);

	if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTING)
		return ERR_PTR(-EBUSY);
	if (path->s.con_num != le16_to_cpu(req->cid_num) ||
	    path->s.con[cid]) {
		pr_err_ratelimited("%s: bad or duplicate connection %u of %u\n",
				   path->s.sessname, cid,
				   le16_to_cpu(req->cid_num));
		return ERR_PTR(-EINVAL);
	}
	return path;
}

static int rtrs_srv_connect(struct rdma_cm_id *cm_id,
			    const struct rdma_conn_param *cp)
{
	const struct rtrs_msg_conn_req *req = cp->private_data;
	u8 len = cp->private_data_len;
	struct rtrs_srv_ctx *ctx = cm_id->context;
	struct rtrs_srv_sess *sess;
	struct rtrs_srv_path *path;
	bool joined;
	int err;

	err = rtrs_srv_check_conn_req(req, len);
	if (err) {
		pr_err_ratelimited("connect request rejected, %u bytes: %pe\n",
				   len, ERR_PTR(err));
		return rtrs_srv_reject(cm_id, err);
	}
	err = rtrs_srv_setup_budget(ctx,
				    (struct sockaddr *)&cm_id->route.addr.dst_addr);
	if (err)
		return rtrs_srv_reject(cm_id, err);

	/* The lower of the two minors: a mainline client asks for 2.0. */
	sess = rtrs_srv_get_sess(ctx, &req->paths_uuid,
				 req->flags & RTRS_CONN_REQ_FIRST_CONN,
				 rtrs_proto_agree(le16_to_cpu(req->version),
						  READ_ONCE(rtrs_srv_max_minor)),
				 req->flags & RTRS_CONN_REQ_MSG_TAGS);
	if (IS_ERR(sess))
		return rtrs_srv_reject(cm_id, PTR_ERR(sess));

	mutex_lock(&sess->paths_mutex);
	path = rtrs_srv_path_for_con(sess, cm_id, req, &joined);
	if (IS_ERR(path)) {
		mutex_unlock(&sess->paths_mutex);
		rtrs_srv_put_sess(sess);
		return rtrs_srv_reject(cm_id, PTR_ERR(path));
	}

	err = rtrs_srv_create_con(path, cm_id, le16_to_cpu(req->cid),
				  req->flags & RTRS_CONN_REQ_PACKED_RSP);
	if (err) {
		mutex_unlock(&sess->paths_mutex);
		rtrs_srv_close_path(path);
		if (joined)
			rtrs_srv_put_sess(sess);
		return rtrs_srv_reject(cm_id, err);
	}
	err = rtrs_srv_accept(path, cm_id, cp);
	mutex_unlock(&sess->paths_mutex);
	if (err) {
		/* The connection is the path's now: its close destroys it. */
		pr_err_ratelimited("%s: accept failed: %d\n",
				   path->s.sessname, err);
		rtrs_srv_close_path(path);
	}
	/* A path holds the session; a joining connection needs no more. */
	if (joined)
		rtrs_srv_put_sess(sess);
	return 0;
}

/**
 * rtrs_srv_cm_handler() - RDMA CM events of listeners and connections
 * @cm_id: the listener (context: the server context) for a connect
 *	request; the connection (context: its &struct rtrs_con) otherwise
 * @ev: the event
 *
 * Return: non-zero only for a rejected connect request, to have the RDMA
 * CM destroy its new id.
 */
int rtrs_srv_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev)
{
	struct rtrs_srv_path *path;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return rtrs_srv_connect(cm_id, &ev->param.conn);

	path = to_srv_path(((struct rtrs_con *)cm_id->context)->path);
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		break;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		pr_err_ratelimited("%s: %s, status %d\n", path->s.sessname,
				   rdma_event_msg(ev->event), ev->status);
		fallthrough;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rtrs_srv_close_path(path);
		break;
	default:
		pr_debug("%s: ignoring %s\n", path->s.sessname,
			 rdma_event_msg(ev->event));
		break;
	}
	return 0;
}
