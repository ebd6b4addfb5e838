// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: one connection of a path.
 *
 * A connection is established in the RDMA CM's order: resolve the address
 * (then create the CQ and QP on the device it resolved to), resolve the
 * route, connect with struct rtrs_msg_conn_req as private data, and check
 * the server's struct rtrs_msg_conn_rsp when it is established.  The
 * caller waits for that outcome; later CM events fail the path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <net/net_namespace.h>

#include "rtrs-clt.h"

/* Devices and PDs of every client path. */
struct rtrs_ib_dev_pool rtrs_clt_dev_pool;

/*
 * The highest protocol minor a session's paths ask for: 1 for 2.1, 0 to
 * speak 2.0 with every server.  Read when a session is opened, so that
 * every path of it, reconnects included, asks the same: a server session
 * speaks one version.
 */
static int rtrs_clt_set_max_minor(const char *val,
				  const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, RTRS_PROTO_MINOR_MAX);
}

static const struct kernel_param_ops rtrs_clt_max_minor_ops = {
	.set	= rtrs_clt_set_max_minor,
	.get	= param_get_uint,
};

unsigned int rtrs_clt_max_minor = RTRS_PROTO_MINOR_MAX;
module_param_cb(max_proto_minor, &rtrs_clt_max_minor_ops,
		&rtrs_clt_max_minor, 0644);
MODULE_PARM_DESC(max_proto_minor,
		 "Highest protocol minor asked for: 1 for 2.1, 0 for 2.0 only; for sessions opened after a change (default 1)");

/*
 * 2.1: READs of up to RTRS_CLT_READ_BUF bytes go as READ_BUF where the
 * server takes them: no memory registration per IO, the data comes into
 * a buffer of the request's slot registered once for the path, and is
 * copied to the user's pages.  Read when a path connects.
 */
static bool rtrs_clt_read_bufs = true;
module_param_named(read_bufs, rtrs_clt_read_bufs, bool, 0644);
MODULE_PARM_DESC(read_bufs,
		 "2.1: READs of up to 4 KiB come into buffers registered once per path, no registration per IO; for paths that connect after a change (default Y)");

/*
 * 2.1: ask the server to pack responses that are ready together into one
 * SEND (RTRS_CONN_REQ_PACKED_RSP): fewer packets and receive completions
 * per request under load, at no wait (the server never holds a response
 * back for a request still to come).  Each receive buffer of a connection
 * then holds RTRS_IO_RSP_PACK_MAX responses.  Read when a connection
 * connects.
 */
static bool rtrs_clt_packed_rsps = true;
module_param_named(packed_rsps, rtrs_clt_packed_rsps, bool, 0644);
MODULE_PARM_DESC(packed_rsps,
		 "2.1: the server may pack up to 16 responses into one SEND; for paths that connect after a change (default Y)");

/*
 * 2.1: the slots' MRs map 1 MiB of page-aligned data (RTRS_CLT_SLOT_PAGES);
 * a request whose data spans more pages, 1 MiB at an offset in its first
 * page or more than 1 MiB, borrows one of this many large MRs of its path,
 * and waits for one while all are in use.  0 sizes every slot's MR for the
 * largest IO instead: no request ever waits for an MR, at twice the page
 * lists on rxe.  Read when a path connects.
 */
static unsigned int rtrs_clt_large_mrs = RTRS_CLT_LARGE_MRS;
module_param_named(large_mrs, rtrs_clt_large_mrs, uint, 0644);
MODULE_PARM_DESC(large_mrs,
		 "2.1: MRs per path for requests whose data spans more than 256 pages, each slot's MR mapping 256 (255 on rxe); 0 for slot MRs that map every request; for paths that connect after a change (default 32)");

/*
 * Send queue entries a READ takes: REG_MR (after a LOCAL_INV where local
 * operations may run twice), the write, LOCAL_INV.  A WRITE takes up to
 * &rtrs_clt_path.max_write_wrs.
 */
#define RTRS_CLT_WR_PER_READ	4
/*
 * Receives one request may take on 2.0: the server's SEND_WITH_INV, the
 * response.  A 2.1 response is one SEND, which invalidates as well.
 */
#define RTRS_CLT_RECV_PER_IO	2
/*
 * A heartbeat and its ack, the watchdog's probe and the drain WR: the
 * send queue entries outside &rtrs_con.sq_wr_avail, one of each at a time
 * (every one signaled).  The INFO_REQ goes before any of them.
 */
#define RTRS_CLT_WR_EXTRA	4
/*
 * RDMA READs of the server a connection serves at once: protocol 2.1's
 * server pulls a large WRITE's data from the client's memory region.
 */
#define RTRS_CLT_RESPONDER_RESOURCES	16

/* Requests the queues of connection @cid must hold. */
static u32 rtrs_clt_con_depth(struct rtrs_clt_path *path, unsigned int cid)
{
	return cid ? path->lim.queue_depth : RTRS_CLT_ADMIN_DEPTH;
}

/* Receives the requests of @path may take, each. */
static u32 rtrs_clt_recv_per_io(struct rtrs_clt_path *path)
{
	return rtrs_clt_lim_2_1(&path->lim) ? 1 : RTRS_CLT_RECV_PER_IO;
}

static bool rtrs_clt_con_is_poll(struct rtrs_clt_con *con)
{
	return con->c.cid >= con->c.path->irq_con_num;
}

/*
 * Pages one fast registration of the device maps.  Requests map their
 * pages with 4 KiB granularity, the block layer's virtual boundary, or the
 * device's smallest page when that is larger.
 */
static u32 rtrs_clt_dev_fr_pages(const struct ib_device_attr *attrs)
{
	unsigned int shift = max(12, ffs(attrs->page_size_cap) - 1);

	return min_t(u64, attrs->max_mr_size >> shift,
		     attrs->max_fast_reg_page_list_len);
}

/* The fast-registration limits of the device, sized for protocol 2.0. */
static int rtrs_clt_query_fr(struct rtrs_clt_path *path)
{
	const struct ib_device_attr *attrs = &path->s.dev->ib_dev->attrs;

	if (!(attrs->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;

	path->max_pages_per_mr = min_t(u32, RTRS_CLT_MAX_SEGMENTS,
				       rtrs_clt_dev_fr_pages(attrs));
	if (!path->max_pages_per_mr)
		return -EOPNOTSUPP;

	path->max_send_sge = min_t(u32, attrs->max_send_sge,
				   RTRS_CLT_MAX_SEND_SGE);
	if (path->max_send_sge < 2)
		return -EOPNOTSUPP;
	/* Every data entry and the header, max_send_sge to a WRITE. */
	path->max_write_wrs = DIV_ROUND_UP(path->max_pages_per_mr + 1,
					   path->max_send_sge);
	path->slot_pages = path->max_pages_per_mr;
	path->large.nr = 0;
	return 0;
}

/* The admin connection picks the device every connection of the path uses. */
static int rtrs_clt_con_get_dev(struct rtrs_clt_con *con)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct ib_device *ib_dev = con->c.cm_id->device;
	struct rtrs_ib_dev *dev;
	int err;

	if (con->c.cid)
		return path->s.dev && path->s.dev->ib_dev == ib_dev ?
			0 : -EINVAL;
	if (WARN_ON_ONCE(path->s.dev))
		return -EINVAL;

	dev = rtrs_ib_dev_get(&rtrs_clt_dev_pool, ib_dev);
	if (IS_ERR(dev))
		return PTR_ERR(dev);
	path->s.dev = dev;

	err = rtrs_clt_query_fr(path);
	if (err)
		pr_err_ratelimited("%s: device %s cannot register memory fast\n",
				   path->s.sessname, ib_dev->name);
	return err;
}

/*
 * Entries of unsignaled requests a 2.1 IO connection's send queue holds
 * besides the requests' own (rtrs_clt_send_signal()).
 */
static u32 rtrs_clt_con_unsig_max(struct rtrs_clt_path *path, unsigned int cid)
{
	return cid && rtrs_clt_lim_2_1(&path->lim) ? RTRS_CLT_UNSIG_MAX : 0;
}

/*
 * The send queue connection @cid's requests may fill: @depth requests of
 * the most WRs one can take, beside the entries of unsignaled ones and
 * RTRS_CLT_WR_EXTRA; the device may offer less.
 */
static u32 rtrs_clt_con_send_wr(struct rtrs_clt_path *path, unsigned int cid,
				u32 depth)
{
	u32 per_req = max_t(u32, RTRS_CLT_WR_PER_READ, path->max_write_wrs);

	return min_t(u64, (u64)per_req * depth +
		     rtrs_clt_con_unsig_max(path, cid) + RTRS_CLT_WR_EXTRA,
		     path->s.dev->ib_dev->attrs.max_qp_wr);
}

/*
 * A request takes its entries from sq_wr_avail when posted.  A signaled
 * one completes only after its own completions, which free them, and
 * gives them back when it leaves the path; an unsignaled 2.1 request's
 * are given back by the completion of the signaled SEND after it (see
 * rtrs_clt_send_signal()).  So a post never finds the queue full, even
 * where the device capped its size.
 */
static int rtrs_clt_con_init_sq(struct rtrs_clt_con *con)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	u32 per_req = max_t(u32, RTRS_CLT_WR_PER_READ, path->max_write_wrs);
	u64 own = (u64)per_req * rtrs_clt_con_depth(path, con->c.cid);
	u32 room;

	if (con->c.max_send_wr < per_req + RTRS_CLT_WR_EXTRA) {
		pr_err_ratelimited("%s: connection %u: send queue of %u too small\n",
				   path->s.sessname, con->c.cid,
				   con->c.max_send_wr);
		return -EINVAL;
	}
	room = con->c.max_send_wr - RTRS_CLT_WR_EXTRA;
	con->c.signal_interval = 1;
	atomic_set(&con->c.sq_wr_avail, room);
	/* Only what is left beside every request's own: the device may cut. */
	con->unsig_max = own < room ?
		min_t(u64, room - own, rtrs_clt_con_unsig_max(path, con->c.cid)) :
		0;
	con->unsig = 0;
	atomic_set(&con->unretired, 0);
	return 0;
}

/* Create CQ and QP, sized for every WR the connection's requests post. */
static int rtrs_clt_con_create_qp(struct rtrs_clt_con *con)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	u32 depth = rtrs_clt_con_depth(path, con->c.cid);
	const struct ib_device_attr *attrs;
	u32 send_wr, recv_wr, cqe;
	enum ib_poll_context poll;
	int err, vector;

	lockdep_assert_held(&con->cm_mutex);

	err = rtrs_clt_con_get_dev(con);
	if (err)
		return err;

	attrs = &path->s.dev->ib_dev->attrs;
	send_wr = rtrs_clt_con_send_wr(path, con->c.cid, depth);
	recv_wr = min_t(u32, rtrs_clt_recv_per_io(path) * depth +
			RTRS_CLT_WR_EXTRA, attrs->max_qp_wr);
	cqe = min_t(u32, send_wr + recv_wr, attrs->max_cqe);
	poll = rtrs_clt_con_is_poll(con) ? IB_POLL_DIRECT : IB_POLL_SOFTIRQ;
	vector = con->cpu % path->s.dev->ib_dev->num_comp_vectors;

	/* The client sends nothing inline. */
	con->c.max_inline = 0;
	err = rtrs_cq_qp_create(&path->s, &con->c, path->max_send_sge, vector,
				cqe, send_wr, recv_wr, NULL, poll);
	if (err)
		return err;
	err = rtrs_clt_con_init_sq(con);
	if (err) {
		rtrs_cq_qp_destroy(&con->c);
		return err;
	}
	con->recv_num = con->c.max_recv_wr - 1;
	return 0;
}

static int rtrs_clt_con_addr_resolved(struct rtrs_clt_con *con)
{
	int err;

	mutex_lock(&con->cm_mutex);
	err = con->dead ? -ECONNABORTED : rtrs_clt_con_create_qp(con);
	mutex_unlock(&con->cm_mutex);
	if (err)
		return err;

	return rtrs_fail_or(-ENOMEM,
			    rdma_resolve_route(con->c.cm_id,
					       RTRS_CLT_CONNECT_TIMEOUT_MS));
}

static void rtrs_clt_con_fill_req(struct rtrs_clt_con *con,
				  struct rtrs_msg_conn_req *msg)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);

	memset(msg, 0, sizeof(*msg));
	msg->magic = cpu_to_le16(RTRS_MAGIC);
	msg->version = cpu_to_le16(RTRS_PROTO_VER_MAJOR << 8 |
				   path->max_minor);
	msg->cid = cpu_to_le16(con->c.cid);
	msg->cid_num = cpu_to_le16(path->s.con_num);
	msg->recon_cnt = cpu_to_le16(path->s.recon_cnt);
	uuid_copy(&msg->sess_uuid, &path->s.uuid);
	uuid_copy(&msg->paths_uuid, &path->clt->paths_uuid);
	/*
	 * Every path may create the server's session: with the paths
	 * connected one by one, the first to arrive creates it and the
	 * others, finding it by paths_uuid, join it.
	 */
	msg->flags = RTRS_CONN_REQ_FIRST_CONN;
	con->packed = path->max_minor >= RTRS_PROTO_MINOR_2_1 &&
		      READ_ONCE(rtrs_clt_packed_rsps);
	if (con->packed)
		msg->flags |= RTRS_CONN_REQ_PACKED_RSP;
	if (path->max_minor >= RTRS_PROTO_MINOR_2_1)
		msg->flags |= RTRS_CONN_REQ_MSG_TAGS;
}

static int rtrs_clt_con_route_resolved(struct rtrs_clt_con *con)
{
	struct rtrs_msg_conn_req msg;
	struct rdma_conn_param param = {
		.retry_count		= RTRS_RETRY_COUNT,
		.rnr_retry_count	= 7,
		.private_data		= &msg,
		.private_data_len	= sizeof(msg),
	};
	int err;

	rtrs_clt_con_fill_req(con, &msg);
	/* A 2.0 server never reads from the client: no harm done there. */
	param.responder_resources =
		clamp_t(int, con->c.cm_id->device->attrs.max_qp_rd_atom, 0,
			RTRS_CLT_RESPONDER_RESOURCES);

	mutex_lock(&con->cm_mutex);
	if (con->dead || !con->c.qp)
		err = -ECONNABORTED;
	else
		err = rtrs_fail_or(-ENOMEM,
				   rdma_set_ack_timeout(con->c.cm_id,
							RTRS_ACK_TIMEOUT) ?:
				   rdma_connect_locked(con->c.cm_id, &param));
	mutex_unlock(&con->cm_mutex);
	return err;
}

/*
 * A 2.1 path registers the data of every READ and of every WRITE that
 * does not go inline: its MRs map the server's largest IO (up to
 * RTRS_CLT_MAX_IO_SIZE_2_1) at any offset in its first page, and its IO
 * size is what they map.  Each slot's MR maps RTRS_CLT_SLOT_PAGES of
 * those pages where the path has large MRs for the rest
 * (rtrs_clt_large_mrs).  A request is one SEND after at most a REG_MR
 * and the LOCAL_INV before it, and one LOCAL_INV later: as many send queue
 * entries as a 2.0 READ, but of RTRS_CLT_MAX_SEND_SGE_2_1 SGEs each.
 */
static int rtrs_clt_path_size_2_1(struct rtrs_clt_path *path)
{
	const struct ib_device_attr *attrs = &path->s.dev->ib_dev->attrs;
	u32 io = min_t(u32, path->lim.max_io_size, RTRS_CLT_MAX_IO_SIZE_2_1);
	u32 pages = min(rtrs_clt_dev_fr_pages(attrs),
			DIV_ROUND_UP(io, SZ_4K) + 1);
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	u32 slot;

	if (pages < 2) {
		pr_err_ratelimited("%s: device %s cannot register a page at any offset\n",
				   path->s.sessname, path->s.dev->ib_dev->name);
		return -EOPNOTSUPP;
	}
	path->max_pages_per_mr = pages;
	path->slot_pages = pages;
	path->large.nr = 0;
	/* One map of rxe's a slot (see rtrs_mr_reads_past_map()). */
	slot = RTRS_CLT_SLOT_PAGES - rtrs_mr_reads_past_map(ib_dev);
	if (pages > slot && READ_ONCE(rtrs_clt_large_mrs)) {
		path->slot_pages = slot;
		path->large.nr = min(READ_ONCE(rtrs_clt_large_mrs),
				     path->lim.queue_depth);
	}
	path->lim.max_io_size = min(path->lim.max_io_size, (pages - 1) * SZ_4K);
	path->lim.max_inline_size = min(path->lim.max_inline_size,
					path->lim.max_io_size);
	path->max_write_wrs = 1;
	path->max_send_sge = min_t(u32, path->max_send_sge,
				   RTRS_CLT_MAX_SEND_SGE_2_1);
	/* One MR maps the read buffers of every slot, 4 KiB pages each. */
	if (!READ_ONCE(rtrs_clt_read_bufs) ||
	    !(attrs->page_size_cap & RTRS_CLT_READ_BUF) ||
	    rtrs_clt_dev_fr_pages(attrs) < path->lim.queue_depth)
		path->lim.max_read_buf = 0;
	path->lim.max_read_buf = min_t(u32, path->lim.max_read_buf,
				       RTRS_CLT_READ_BUF);
	return 0;
}

/* What the connection response of the admin connection teaches. */
static int rtrs_clt_path_learn(struct rtrs_clt_path *path,
			       const struct rtrs_clt_limits *lim)
{
	int err;

	path->lim = *lim;
	if (rtrs_clt_lim_2_1(lim)) {
		err = rtrs_clt_path_size_2_1(path);
		if (err)
			return err;
	}
	return rtrs_clt_sess_set_limits(path);
}

static int rtrs_clt_con_check_rsp(struct rtrs_clt_con *con,
				  const struct rtrs_msg_conn_rsp *msg,
				  u8 len)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct rtrs_clt_limits lim;
	int err;

	/*
	 * Connections after the first must offer the first one's depth and
	 * speak its version, with its flags.
	 */
	err = rtrs_clt_check_conn_rsp(msg, len, path->max_minor,
				      con->c.cid ? path->lim.queue_depth : 0, &lim);
	if (!err && con->c.cid && (lim.version != path->lim.version ||
				   lim.flags != path->lim.flags))
		err = -EPROTO;
	if (err) {
		pr_err_ratelimited("%s: connection %u: bad connection response: %pe\n",
				   path->s.sessname, con->c.cid, ERR_PTR(err));
		return err;
	}
	return con->c.cid ? 0 : rtrs_clt_path_learn(path, &lim);
}

static int rtrs_clt_con_established(struct rtrs_clt_con *con,
				    struct rdma_cm_event *ev)
{
	int err;

	err = rtrs_clt_con_check_rsp(con, ev->param.conn.private_data,
				     ev->param.conn.private_data_len);
	return err ?: 1;
}

static int rtrs_clt_con_rejected(struct rtrs_clt_con *con,
				 struct rdma_cm_event *ev)
{
	const struct rtrs_msg_conn_rsp *msg;
	const char *path_name = con->c.path->sessname;
	int err = -ECONNRESET;
	u8 len = 0;

	msg = rdma_consumer_reject_data(con->c.cm_id, ev, &len);
	if (msg && len >= sizeof(*msg) &&
	    le16_to_cpu(msg->magic) == RTRS_MAGIC &&
	    (s16)le16_to_cpu(msg->errno) < 0)
		err = (s16)le16_to_cpu(msg->errno);

	if (err == -EBUSY) {
		/* Expected after a failure, and the attempt's only line. */
		pr_info_ratelimited("%s: server still holds the previous session, retry later\n",
				    path_name);
		WRITE_ONCE(to_clt_path(con->c.path)->err_logged, true);
	} else {
		pr_err_ratelimited("%s: connection %u rejected (%s): %d\n",
				   path_name, con->c.cid,
				   rdma_reject_msg(con->c.cm_id, ev->status),
				   err);
	}
	return err;
}

/* Report the outcome of connecting, once, to rtrs_clt_con_connect(). */
static void rtrs_clt_con_set_result(struct rtrs_clt_con *con, int result)
{
	if (READ_ONCE(con->cm_err))
		return;
	WRITE_ONCE(con->cm_err, result);
	complete(&con->cm_done);
}

/* The connection went away: fail it if still connecting, and its path. */
static void rtrs_clt_con_lost(struct rtrs_clt_con *con,
			      struct rdma_cm_event *ev)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);

	/* One line when a connected path fails; not for each connection. */
	if (READ_ONCE(path->state) == RTRS_CLT_CONNECTED)
		pr_info_ratelimited("%s: connection %u: %s\n",
				    con->c.path->sessname, con->c.cid,
				    rdma_event_msg(ev->event));
	rtrs_clt_con_set_result(con, -ECONNRESET);
	rtrs_clt_path_error(path);
}

static int rtrs_clt_cm_handler(struct rdma_cm_id *cm_id,
			       struct rdma_cm_event *ev)
{
	struct rtrs_clt_con *con = cm_id->context;
	int res;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		res = rtrs_clt_con_addr_resolved(con);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		res = rtrs_clt_con_route_resolved(con);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		res = rtrs_clt_con_established(con, ev);
		break;
	case RDMA_CM_EVENT_REJECTED:
		res = rtrs_clt_con_rejected(con, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		pr_err_ratelimited("%s: connection %u: %s (%d)\n",
				   con->c.path->sessname, con->c.cid,
				   rdma_event_msg(ev->event), ev->status);
		res = -ECONNRESET;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rtrs_clt_con_lost(con, ev);
		return 0;
	default:
		pr_info_ratelimited("%s: connection %u: ignoring %s\n",
				    con->c.path->sessname, con->c.cid,
				    rdma_event_msg(ev->event));
		return 0;
	}
	/* The id is destroyed by the teardown, never by returning non-0. */
	if (res)
		rtrs_clt_con_set_result(con, res);
	return 0;
}

static struct rtrs_clt_con *rtrs_clt_con_alloc(struct rtrs_clt_path *path,
					       unsigned int cid)
{
	struct rtrs_clt_con *con;

	con = rtrs_kzalloc(sizeof(*con), GFP_KERNEL);
	if (!con)
		return NULL;

	con->c.path = &path->s;
	con->c.cid = cid;
	/* IO connection n + 1 serves CPU n; poll connections wrap around. */
	con->cpu = cid ? (cid - 1) % nr_cpu_ids : 0;
	con->rsp_cpu = -1;
	mutex_init(&con->cm_mutex);
	init_completion(&con->cm_done);
	spin_lock_init(&con->poll_lock);
	spin_lock_init(&con->send_lock);
	con->recv_cqe.done = rtrs_clt_recv_done;
	con->probe_cqe.done = rtrs_clt_probe_done;
	return con;
}

static int rtrs_clt_con_resolve(struct rtrs_clt_con *con)
{
	struct rtrs_path *s = con->c.path;
	struct sockaddr *src = NULL;

	if (s->src_addr.ss_family != AF_UNSPEC)
		src = (struct sockaddr *)&s->src_addr;
	return rtrs_fail_or(-ENOMEM,
			    rdma_resolve_addr(con->c.cm_id, src,
					      (struct sockaddr *)&s->dst_addr,
					      RTRS_CLT_CONNECT_TIMEOUT_MS));
}

/**
 * rtrs_clt_con_connect() - establish connection @cid of a path
 * @path: the path; connections below @cid are established.
 * @cid: index of the connection.
 *
 * Whatever the outcome, the connection is left in @path->s.con[@cid] for
 * rtrs_clt_con_stop() and rtrs_clt_con_free().
 *
 * Context: process context, with @path->init_mutex held; sleeps.
 * Return: 0 once established, or a negative errno.
 */
int rtrs_clt_con_connect(struct rtrs_clt_path *path, unsigned int cid)
{
	struct rtrs_clt_con *con;
	struct rdma_cm_id *cm_id;
	unsigned long timeout = msecs_to_jiffies(RTRS_CLT_CONNECT_TIMEOUT_MS);
	unsigned long left;
	int err;

	lockdep_assert_held(&path->init_mutex);

	/* Every connection of every path asks for what the session asks. */
	if (!cid)
		path->max_minor = path->clt->max_minor;
	con = rtrs_clt_con_alloc(path, cid);
	if (!con)
		return -ENOMEM;
	path->s.con[cid] = &con->c;

	cm_id = rtrs_fail_or(ERR_PTR(-ENOMEM),
			     rdma_create_id(&init_net, rtrs_clt_cm_handler,
					    con, RDMA_PS_TCP, IB_QPT_RC));
	if (IS_ERR(cm_id))
		return PTR_ERR(cm_id);
	con->c.cm_id = cm_id;

	err = rtrs_clt_con_resolve(con);
	if (err)
		return err;

	left = wait_for_completion_timeout(&con->cm_done, timeout);
	if (!left)
		return -ETIMEDOUT;
	err = READ_ONCE(con->cm_err);
	return err < 0 ? err : 0;
}

/**
 * rtrs_clt_con_stop() - disconnect a connection and flush its queues
 * @con: the connection.
 *
 * After this the CM handler no longer creates a QP or connects, and no
 * completion of the QP is outstanding.
 *
 * Context: process context; sleeps.
 */
void rtrs_clt_con_stop(struct rtrs_clt_con *con)
{
	mutex_lock(&con->cm_mutex);
	WRITE_ONCE(con->dead, true);
	mutex_unlock(&con->cm_mutex);

	if (con->c.cm_id)
		rdma_disconnect(con->c.cm_id);
	/* Nothing is posted before the connection is established. */
	if (con->c.qp && READ_ONCE(con->cm_err) > 0)
		ib_drain_qp(con->c.qp);
}

/**
 * rtrs_clt_con_free() - free connection @cid of a path
 * @path: the path.
 * @cid: index of the connection; may be empty.
 *
 * Context: process context, after rtrs_clt_con_stop(); sleeps.
 */
void rtrs_clt_con_free(struct rtrs_clt_path *path, unsigned int cid)
{
	struct rtrs_clt_con *con;

	if (!path->s.con[cid])
		return;
	con = to_clt_con(path->s.con[cid]);

	mutex_lock(&con->cm_mutex);
	rtrs_cq_qp_destroy(&con->c);
	mutex_unlock(&con->cm_mutex);
	kfree(con->rsp_ius);
	if (con->rsp_buf) {
		ib_dma_unmap_single(path->s.dev->ib_dev, con->rsp_dma,
				    con->recv_num * con->rsp_size,
				    DMA_FROM_DEVICE);
		kfree(con->rsp_buf);
	}
	if (con->c.cm_id)
		rdma_destroy_id(con->c.cm_id);
	mutex_destroy(&con->cm_mutex);
	path->s.con[cid] = NULL;
	kfree(con);
}

/*
 * Receives with buffer: each takes a response of @size bytes into its own
 * slot of one array, mapped once; an IU per slot says where.  A heartbeat
 * takes a receive too and leaves its slot alone.
 */
static int rtrs_clt_con_post_rsp_bufs(struct rtrs_clt_con *con, u32 size)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	struct ib_device *ib_dev = path->s.dev->ib_dev;
	struct rtrs_iu *iu;
	dma_addr_t dma;
	void *buf;
	u32 i;
	int err;

	buf = rtrs_kcalloc(con->recv_num, size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	dma = ib_dma_map_single(ib_dev, buf, con->recv_num * size,
				DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ib_dev, dma)) {
		kfree(buf);
		return -ENOMEM;
	}
	con->rsp_buf = buf;
	con->rsp_dma = dma;
	con->rsp_size = size;

	con->rsp_ius = rtrs_kcalloc(con->recv_num, sizeof(*con->rsp_ius),
				    GFP_KERNEL);
	if (!con->rsp_ius)
		return -ENOMEM;
	for (i = 0; i < con->recv_num; i++) {
		iu = &con->rsp_ius[i];
		iu->cqe.done = rtrs_clt_recv_iu_done;
		iu->dma_addr = dma + i * size;
		iu->buf = buf + i * size;
		iu->size = size;
		iu->direction = DMA_FROM_DEVICE;
		err = rtrs_iu_post_recv(&con->c, iu);
		if (err)
			return err;
	}
	return 0;
}

/**
 * rtrs_clt_con_post_recvs() - fill the receive queue of a connection
 * @con: an established connection.
 *
 * Under always-invalidate (%RTRS_MSG_NEW_RKEY_F) the server responds with
 * a SEND WITH IMMEDIATE carrying struct rtrs_msg_rkey_rsp, so receives
 * need buffers; otherwise a 2.0 server responds with RDMA WRITE WITH
 * IMMEDIATE, which needs none.  A 2.1 server responds with a SEND of
 * struct rtrs_msg_io_rsp, or of up to RTRS_IO_RSP_PACK_MAX of them where
 * the connection asked for that.
 *
 * Context: process context; sleeps.
 * Return: 0, or a negative errno.
 */
int rtrs_clt_con_post_recvs(struct rtrs_clt_con *con)
{
	struct rtrs_clt_path *path = to_clt_path(con->c.path);
	u32 i;
	int err;

	/*
	 * The admin connection's queues were sized before the server told
	 * its queue depth: keep posted only what the session's requests and
	 * heartbeats can consume.
	 */
	con->recv_num = min(con->recv_num, rtrs_clt_recv_per_io(path) *
			    path->lim.queue_depth + RTRS_CLT_WR_EXTRA - 1);

	if (rtrs_clt_lim_2_1(&path->lim))
		return rtrs_clt_con_post_rsp_bufs(con,
						  sizeof(struct rtrs_msg_io_rsp) *
						  (con->packed ?
						   RTRS_IO_RSP_PACK_MAX : 1));
	if (path->lim.flags & RTRS_MSG_NEW_RKEY_F)
		return rtrs_clt_con_post_rsp_bufs(con,
						  sizeof(struct rtrs_msg_rkey_rsp));
	for (i = 0; i < con->recv_num; i++) {
		/* One fault point: the last receive, as a full queue. */
		err = rtrs_fail_last_or(i == con->recv_num - 1, -ENOMEM,
					rtrs_post_recv_empty(&con->c,
							     &con->recv_cqe));
		if (err)
			return err;
	}
	return 0;
}
