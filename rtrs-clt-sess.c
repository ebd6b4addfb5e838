// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client (active side): sessions.
 *
 * A session opens its paths, adds and removes them, hands each request to
 * the paths and closes it all down.  The client's files call downward
 * only: this one and its sysfs face (sysfs/rtrs-clt-sysfs.c) use a path's
 * life (rtrs-clt-path.c), which uses its connections (rtrs-clt-conn.c),
 * whose completions go to the requests (rtrs-clt-io.c); all of them report
 * what happens to a path to rtrs-clt-state.c, and requests take their
 * chunks from rtrs-clt-permit.c and their path from rtrs-clt-mpath.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/rculist.h>
#include <net/ipv6.h>
#include <rdma/ib.h>
#include <linux/slab.h>

#include "rtrs-clt.h"

static struct rtrs_clt_sess *rtrs_clt_sess_alloc(struct rtrs_clt_ops *ops,
						 const char *sessname,
						 u16 port, size_t pdu_sz,
						 u8 reconnect_delay_sec,
						 s16 max_reconnect_attempts,
						 u32 nr_poll_queues)
{
	struct rtrs_clt_sess *clt;

	clt = rtrs_kzalloc(sizeof(*clt), GFP_KERNEL);
	if (!clt)
		return NULL;
	INIT_LIST_HEAD(&clt->paths_list);
	mutex_init(&clt->change_mutex);
	init_waitqueue_head(&clt->removing_done);
	mutex_init(&clt->paths_mutex);
	mutex_init(&clt->link_ev_mutex);
	init_waitqueue_head(&clt->permits_wait);
	spin_lock_init(&clt->chunks_lock);
	INIT_LIST_HEAD(&clt->reserve);
	INIT_LIST_HEAD(&clt->orphans);
	/* From here on the release of @clt->dev frees it. */
	rtrs_clt_sess_dev_init(clt);
	clt->rr_seq = rtrs_alloc_percpu(unsigned int);
	if (!clt->rr_seq) {
		put_device(&clt->dev);
		return NULL;
	}
	uuid_gen(&clt->paths_uuid);
	clt->max_minor = READ_ONCE(rtrs_clt_max_minor);
	strscpy(clt->sessname, sessname, sizeof(clt->sessname));
	clt->mp_policy = RTRS_CLT_MP_MIN_INFLIGHT;
	clt->port = port;
	clt->reconnect_delay_sec = reconnect_delay_sec;
	clt->max_reconnect_attempts = max(max_reconnect_attempts, (s16)-1);
	clt->io_timeout_sec = RTRS_CLT_IO_TIMEOUT_SEC;
	clt->nr_poll_queues = nr_poll_queues;
	clt->priv = ops->priv;
	clt->link_ev = ops->link_ev;
	clt->permit_size = ALIGN(sizeof(struct rtrs_permit) + pdu_sz,
				 sizeof(long));
	return clt;
}

/**
 * rtrs_clt_sess_release() - free a session once its device is released
 * @clt: the session; its paths are gone.
 *
 * Context: process context.
 */
void rtrs_clt_sess_release(struct rtrs_clt_sess *clt)
{
	mutex_destroy(&clt->link_ev_mutex);
	mutex_destroy(&clt->paths_mutex);
	mutex_destroy(&clt->change_mutex);
	free_percpu(clt->rr_seq);
	kfree(clt);
}

/* Take @path out of sysfs, if it is there, and drop it. */
static void rtrs_clt_sess_drop_path(struct rtrs_clt_path *path)
{
	rtrs_clt_path_dev_del(path);
	rtrs_clt_path_free(path);
}

static void rtrs_clt_sess_free(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path, *tmp;

	list_for_each_entry_safe(path, tmp, &clt->paths_list, entry) {
		list_del(&path->entry);
		rtrs_clt_sess_drop_path(path);
	}
	put_device(&clt->paths_dev);
	put_device(&clt->dev);
}

static int rtrs_clt_add_paths(struct rtrs_clt_sess *clt,
			      const struct rtrs_addr *paths, size_t path_cnt)
{
	struct rtrs_clt_path *path;
	size_t i;

	for (i = 0; i < path_cnt; i++) {
		path = rtrs_clt_path_alloc(clt, &paths[i]);
		if (IS_ERR(path))
			return PTR_ERR(path);
		mutex_lock(&clt->paths_mutex);
		list_add_tail_rcu(&path->entry, &clt->paths_list);
		clt->paths_num++;
		mutex_unlock(&clt->paths_mutex);
		rtrs_clt_path_set_listed(path, true);
	}
	return 0;
}

/*
 * Connect every path; paths that fail try again later.  Any path will do,
 * unlike mainline, which fails the open when one path fails.
 */
static int rtrs_clt_connect_paths(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;
	int err = -ECONNABORTED;
	size_t up = 0;

	list_for_each_entry(path, &clt->paths_list, entry) {
		err = rtrs_clt_path_open(path);
		if (!err)
			up++;
	}
	return up ? 0 : err;
}

static void rtrs_clt_close_paths(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;

	list_for_each_entry(path, &clt->paths_list, entry)
		rtrs_clt_path_close(path);
}

static bool rtrs_clt_bad_name(const char *pathname)
{
	size_t len = strnlen(pathname, NAME_MAX);

	return !len || len >= NAME_MAX || strpbrk(pathname, "/.");
}

/**
 * rtrs_clt_open() - open a client session to an RTRS server
 * @ops: the user's link event callback and private pointer; copied, so
 *	the struct need not outlive the call.  Neither @ops nor its link_ev
 *	may be NULL.
 * @pathname: NUL-terminated session name of 1 to NAME_MAX - 1 characters,
 *	neither '/' nor '.' among them: it names the session's directory in
 *	sysfs.  The server user reads it with rtrs_srv_get_path_name(); a
 *	server refuses it while another of its sessions has it.
 * @paths: @path_cnt source/destination pairs, one per path (see struct
 *	rtrs_addr); copied.  Each destination already carries the server
 *	port (or IB service ID), as rtrs_addr_to_sockaddr() puts it there.
 * @path_cnt: number of entries in @paths, 1 to %RTRS_MAX_PATHS (128).
 * @port: the server port (or IB service ID) of paths added later through
 *	sysfs.
 * @pdu_sz: bytes of user data to allocate with every permit.  This API
 *	offers no accessor for that area; users pass 0.
 * @reconnect_delay_sec: seconds to wait before reconnecting a path that
 *	failed; up to a second more, at random, keeps paths from reconnecting
 *	in lockstep.
 * @max_reconnect_attempts: reconnect attempts per path before the path is
 *	given up and closed; 0 never reconnects, -1 (or any negative value)
 *	retries forever.
 * @nr_poll_queues: number of polled connections per path, on top of the
 *	admin connection and one interrupt-driven IO connection per possible
 *	CPU; the user polls them with rtrs_clt_rdma_cq_direct().
 *
 * Connects the paths one by one and succeeds when at least one of them is
 * established; the others keep reconnecting in the background as
 * @reconnect_delay_sec and @max_reconnect_attempts say, like paths that
 * failed later.  Mainline RTRS fails the open, and closes every path,
 * when any one path fails; a multipath session that starts degraded is
 * what a user of several paths wants, and one whose lost path comes back
 * later gets the same service.  After a successful return,
 * rtrs_clt_query() tells the session's limits and permits can be taken.
 * Link events are delivered from then on, none for the paths this call
 * connected.
 *
 * Context: process context; sleeps, for seconds when a peer is slow.
 * Return: the session, or an ERR_PTR(): -EINVAL for a NULL @ops, link_ev
 * or @paths, a bad @pathname or @path_cnt; -ENOMEM; -EEXIST when this
 * host has a session of that name already (found once the paths are up,
 * which are then closed again); or, when no path could be established,
 * the error of the last one tried.
 */
struct rtrs_clt_sess *rtrs_clt_open(struct rtrs_clt_ops *ops,
				    const char *pathname,
				    const struct rtrs_addr *paths,
				    size_t path_cnt, u16 port,
				    size_t pdu_sz, u8 reconnect_delay_sec,
				    s16 max_reconnect_attempts,
				    u32 nr_poll_queues)
{
	struct rtrs_clt_path *path;
	struct rtrs_clt_sess *clt;
	int err;

	if (!ops || !ops->link_ev || !paths || !path_cnt ||
	    path_cnt > RTRS_MAX_PATHS || rtrs_clt_bad_name(pathname))
		return ERR_PTR(-EINVAL);

	clt = rtrs_clt_sess_alloc(ops, pathname, port, pdu_sz,
				  reconnect_delay_sec, max_reconnect_attempts,
				  nr_poll_queues);
	if (!clt)
		return ERR_PTR(-ENOMEM);
	err = rtrs_clt_add_paths(clt, paths, path_cnt);
	if (err)
		goto free_sess;
	err = rtrs_clt_connect_paths(clt);
	if (err)
		goto close_paths;
	err = rtrs_clt_permits_alloc(clt);
	if (err)
		goto close_paths;
	err = rtrs_clt_sess_dev_add(clt);
	if (err)
		goto free_permits;

	rtrs_clt_set_link_ev(clt, true);
	/* Paths that failed to connect; the others are up or closing. */
	list_for_each_entry(path, &clt->paths_list, entry)
		rtrs_clt_path_schedule_reconnect(path, RTRS_CLT_CONNECTING);
	return clt;

free_permits:
	rtrs_clt_permits_free(clt);
close_paths:
	rtrs_clt_close_paths(clt);
free_sess:
	rtrs_clt_sess_free(clt);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_GPL(rtrs_clt_open);

/**
 * rtrs_clt_close() - close a client session and free it
 * @clt: session returned by rtrs_clt_open().
 *
 * Waits for the path changes made through sysfs that are under way and
 * removes the session from sysfs, then stops the link events: one under
 * way finishes first, none comes after.  Takes every path down, which
 * completes each request still in flight through its
 * &rtrs_clt_req_ops.conf_fn, with the server's response when it came and
 * -ECONNABORTED otherwise.  Then waits until every permit has been put
 * back and frees the session.  The user must therefore put all its
 * permits, without waiting for this call to return.  No callback of the
 * session runs after this returns.
 *
 * Context: process context, not &rtrs_clt_ops.link_ev; sleeps.
 */
void rtrs_clt_close(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;

	mutex_lock(&clt->change_mutex);
	clt->frozen = true;
	mutex_unlock(&clt->change_mutex);
	wait_event(clt->removing_done, !READ_ONCE(clt->removing));
	rtrs_clt_sess_dev_del(clt);

	rtrs_clt_set_link_ev(clt, false);
	list_for_each_entry(path, &clt->paths_list, entry)
		rtrs_clt_path_set_dead(path);
	rtrs_clt_close_paths(clt);
	WRITE_ONCE(clt->closing, true);
	rtrs_clt_permits_free(clt);
	rtrs_clt_sess_free(clt);
}
EXPORT_SYMBOL_GPL(rtrs_clt_close);

/**
 * rtrs_clt_request() - send a READ or WRITE request to the server
 * @dir: READ: the server sends data into @sg; WRITE: the data in @sg goes
 *	to the server.
 * @ops: completion callback and its private pointer; copied.
 * @clt: the session.
 * @permit: a permit of @clt that no other request uses.
 * @vec: user message, delivered to the server user as &rtrs_srv_ops.rdma_ev
 *	@usr; copied, so it may live on the stack.
 * @nr: number of entries in @vec.
 * @len: bytes of data to transfer, at most &rtrs_attrs.max_io_size; 0 for
 *	a request without data.
 * @sg: the data buffer, DMA-mappable; for a READ it receives the data.
 * @sg_cnt: number of entries in @sg, at most &rtrs_attrs.max_segments; 0
 *	when @len is 0.
 *
 * Posts the request on the connected path the session's multipath policy
 * picks; when that path cannot post it, tries the other connected paths
 * in turn.  Should the path fail before the response, the request is sent
 * again over another path, and @ops->conf_fn is still called once, with
 * the final result.
 *
 * Context: any context; does not sleep.
 * Return: 0 when the request is on its way and @ops->conf_fn will be
 * called; otherwise a negative errno and @ops->conf_fn will not be called:
 * -EMSGSIZE when the user message and the request header do not fit in the
 * server's header room, or @len is more than the path takes; -EINVAL for a
 * @dir other than READ or WRITE, more segments than the path takes, or
 * @sg, @sg_cnt and @len that do not agree; -ECONNABORTED when no path is
 * connected; or the error of the last path that failed to post it (-EAGAIN
 * when its send queue was full, which happens only where the device capped
 * its size).
 */
int rtrs_clt_request(int dir, struct rtrs_clt_req_ops *ops,
		     struct rtrs_clt_sess *clt, struct rtrs_permit *permit,
		     const struct kvec *vec, size_t nr, size_t len,
		     struct scatterlist *sg, unsigned int sg_cnt)
{
	if (dir != READ && dir != WRITE)
		return -EINVAL;
	return rtrs_clt_submit(clt, NULL, dir, ops, permit, vec, nr, len, sg,
			       sg_cnt);
}
EXPORT_SYMBOL_GPL(rtrs_clt_request);

/* Same address, as far as telling paths apart goes; ports are the session's. */
static bool rtrs_clt_same_addr(const struct sockaddr_storage *a,
			       const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	switch (a->ss_family) {
	case AF_INET:
		return ((struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((struct sockaddr_in *)b)->sin_addr.s_addr;
	case AF_INET6:
		return ipv6_addr_equal(&((struct sockaddr_in6 *)a)->sin6_addr,
				       &((struct sockaddr_in6 *)b)->sin6_addr);
	case AF_IB:
		return !memcmp(&((struct sockaddr_ib *)a)->sib_addr,
			       &((struct sockaddr_ib *)b)->sib_addr,
			       sizeof(struct ib_addr));
	}
	return false;
}

/*
 * A path is a duplicate when it goes to the same destination from the
 * same source; one without a source duplicates any to its destination.
 */
static bool rtrs_clt_path_exists(struct rtrs_clt_sess *clt,
				 const struct rtrs_addr *addr)
{
	struct rtrs_clt_path *path;

	lockdep_assert_held(&clt->change_mutex);

	list_for_each_entry(path, &clt->paths_list, entry) {
		if (!rtrs_clt_same_addr(&path->s.dst_addr, addr->dst))
			continue;
		if (!addr->src || path->s.src_addr.ss_family == AF_UNSPEC ||
		    rtrs_clt_same_addr(&path->s.src_addr, addr->src))
			return true;
	}
	return false;
}

/**
 * rtrs_clt_add_path() - add a path to an open session and connect it
 * @clt: the session.
 * @addr: source (may be NULL) and destination; copied.
 *
 * Unlike the paths of rtrs_clt_open(), a path added later must connect
 * now: on failure nothing of it remains.
 *
 * Context: process context; sleeps.
 * Return: 0; -ENODEV when the session is closing, -ENOSPC when it has
 * %RTRS_MAX_PATHS paths, -EEXIST for a duplicate, -EPROTO when the server
 * offers another queue depth, or the error connecting.
 */
int rtrs_clt_add_path(struct rtrs_clt_sess *clt, const struct rtrs_addr *addr)
{
	struct rtrs_clt_path *path;
	int err;

	mutex_lock(&clt->change_mutex);
	if (clt->frozen)
		err = -ENODEV;
	else if (clt->paths_num + clt->removing >= RTRS_MAX_PATHS)
		err = -ENOSPC;
	else if (rtrs_clt_path_exists(clt, addr))
		err = -EEXIST;
	else
		err = 0;
	if (err)
		goto unlock;

	path = rtrs_clt_path_alloc(clt, addr);
	if (IS_ERR(path)) {
		err = PTR_ERR(path);
		goto unlock;
	}
	err = rtrs_clt_path_open(path);
	if (!err)
		err = rtrs_clt_path_dev_add(path);
	if (err) {
		rtrs_clt_path_close(path);
		rtrs_clt_sess_drop_path(path);
		goto unlock;
	}
	mutex_lock(&clt->paths_mutex);
	list_add_tail_rcu(&path->entry, &clt->paths_list);
	clt->paths_num++;
	mutex_unlock(&clt->paths_mutex);
	/*
	 * Announce the path only now: a user told of it before it was listed
	 * would find no path to send on.  It may have failed meanwhile; its
	 * reconnect then counts it.
	 */
	mutex_lock(&path->init_mutex);
	rtrs_clt_path_set_listed(path, true);
	if (rtrs_clt_path_connected(path))
		rtrs_clt_path_up(path);
	mutex_unlock(&path->init_mutex);
unlock:
	mutex_unlock(&clt->change_mutex);
	return err;
}

/**
 * rtrs_clt_remove_path() - take a path out of its session and free it
 * @path: the path.
 * @attr: the sysfs file being written, removed first so that removing
 *	the path's directory does not wait for this very write.
 *
 * Requests in flight on the path move to the other paths.
 *
 * Context: process context, from the path's remove_path file; sleeps.
 * Return: 0; -EBUSY for the last path of the session, -ENODEV when the
 * path or the session is already going away.
 */
int rtrs_clt_remove_path(struct rtrs_clt_path *path,
			 struct device_attribute *attr)
{
	struct rtrs_clt_sess *clt = path->clt;
	int err = 0;

	mutex_lock(&clt->change_mutex);
	if (clt->frozen || path->removed)
		err = -ENODEV;
	else if (clt->paths_num == 1)
		err = -EBUSY;
	if (!err) {
		path->removed = true;
		clt->removing++;
		/* A reconnect finishing from now on must not announce it. */
		rtrs_clt_path_set_listed(path, false);
		mutex_lock(&clt->paths_mutex);
		list_del_rcu(&path->entry);
		clt->paths_num--;
		mutex_unlock(&clt->paths_mutex);
	}
	mutex_unlock(&clt->change_mutex);
	if (err)
		return err;

	device_remove_file_self(&path->dev, attr);
	rtrs_clt_path_close(path);
	rtrs_clt_sess_drop_path(path);

	mutex_lock(&clt->change_mutex);
	if (!--clt->removing)
		wake_up(&clt->removing_done);
	mutex_unlock(&clt->change_mutex);
	return 0;
}

/* Poll connection @cid of @path, unless someone else is polling it. */
static int rtrs_clt_poll_con(struct rtrs_clt_path *path, unsigned int cid)
{
	struct rtrs_clt_con *con;
	int cnt;

	if (cid < path->s.irq_con_num || cid >= path->s.con_num)
		return 0;
	con = rtrs_clt_path_con(path, cid);
	if (!spin_trylock(&con->poll_lock))
		return 0;
	cnt = ib_process_cq_direct(con->c.cq, -1);
	spin_unlock(&con->poll_lock);
	return cnt;
}

/**
 * rtrs_clt_rdma_cq_direct() - poll the completions of one polled connection
 * @clt: the session.
 * @index: zero-based IO connection index, as blk-mq numbers its hardware
 *	queues: connection @index + 1 of a path, connection 0 being the admin
 *	one.  The polled connections asked for with @nr_poll_queues of
 *	rtrs_clt_open() come after the interrupt-driven ones, one per possible
 *	CPU, so the first of them has @index nr_cpu_ids.
 *
 * Processes the completions of that connection on the first connected
 * path that has any.  An @index of an interrupt-driven connection, or of
 * none, finds nothing, and so does a connection another caller is polling
 * at the moment.  rtrs_clt_request() puts requests on the interrupt-driven
 * connections only (see rtrs_clt_get_permit()), as mainline RTRS does:
 * the polled connections carry none of them.
 *
 * Context: process context; does not sleep.
 * Return: the number of completions processed (0 for none), or
 * -ECONNABORTED when no path is connected.
 */
int rtrs_clt_rdma_cq_direct(struct rtrs_clt_sess *clt, unsigned int index)
{
	struct rtrs_clt_path *path;
	int cnt = -ECONNABORTED;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (!rtrs_clt_path_connected(path))
			continue;
		cnt = rtrs_clt_poll_con(path, index + 1);
		if (cnt > 0)
			break;
	}
	rcu_read_unlock();
	return cnt;
}
EXPORT_SYMBOL_GPL(rtrs_clt_rdma_cq_direct);

static bool rtrs_clt_is_connected(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;
	bool connected = false;

	rcu_read_lock();
	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (rtrs_clt_path_connected(path)) {
			connected = true;
			break;
		}
	}
	rcu_read_unlock();
	return connected;
}

/**
 * rtrs_clt_query() - read the limits of a session
 * @clt: the session.
 * @attr: filled in on success, untouched otherwise.
 *
 * @attr->queue_depth is the number of permits the user may take: the
 * server's queue depth less the few permits (none when that depth is 1)
 * the session keeps for moving failed-over requests to other chunks (see
 * "Failover and chunks" in Documentation/rtrs.rst).  The largest IO is
 * the smallest of the paths that connected so far, whichever protocol
 * version each speaks: a 2.0 path carries a server chunk less its header
 * room (124 KiB at our server's defaults), a 2.1 path the server's
 * max_io_size (1 MiB from ours), up to 4 MiB.  It is also bounded by what
 * one memory registration maps: @attr->max_segments pages of 4 KiB.
 *
 * Context: any context; does not sleep.
 * Return: 0, or -ECOMM when no path of the session is connected.
 */
int rtrs_clt_query(struct rtrs_clt_sess *clt, struct rtrs_attrs *attr)
{
	if (!rtrs_clt_is_connected(clt))
		return -ECOMM;

	/* The reserve is never the user's (see rtrs-clt-permit.c). */
	attr->queue_depth = clt->queue_depth - clt->reserve_max;
	attr->max_segments = clt->max_segments;
	attr->max_io_size = min_t(u32, clt->max_io_size,
				  clt->max_segments * SZ_4K);
	return 0;
}
EXPORT_SYMBOL_GPL(rtrs_clt_query);

static int __init rtrs_client_init(void)
{
	int err;

	rtrs_clt_wq = alloc_workqueue("rtrs_client_wq", 0, 0);
	if (!rtrs_clt_wq)
		return -ENOMEM;
	err = rtrs_clt_sysfs_init();
	if (err) {
		destroy_workqueue(rtrs_clt_wq);
		return err;
	}
	rtrs_ib_dev_pool_init(&rtrs_clt_dev_pool, 0);
	return 0;
}

static void __exit rtrs_client_exit(void)
{
	rtrs_ib_dev_pool_destroy(&rtrs_clt_dev_pool);
	rtrs_clt_sysfs_exit();
	destroy_workqueue(rtrs_clt_wq);
}

module_init(rtrs_client_init);
module_exit(rtrs_client_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0 and 2.1): client");
MODULE_LICENSE("GPL");
