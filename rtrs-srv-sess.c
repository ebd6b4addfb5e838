// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server (passive side).
 *
 * This file holds the module, the server contexts and their listeners.
 * A context listens (IPv6-any dual-stack and AF_IB, on its port) while at
 * least one RDMA device exists; an ib_client tells us when devices come
 * and go.  The server's files call downward only: this one uses the
 * sessions, paths and connections of rtrs-srv-path.c, which bring a path
 * up through its INFO exchange (rtrs-srv-info.c) and show it in sysfs
 * (sysfs/rtrs-srv-sysfs.c); requests are served in rtrs-srv-io.c, which
 * takes chunks from rtrs-srv-chunk.c; all of them report what happens to
 * a path to rtrs-srv-state.c.  Module parameters live where they are
 * read, in rtrs-srv-path.c, but for the size of the data buffer pool of
 * rtrs-srv-pool.c, which lives as long as the module.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib.h>

#include "rtrs-srv.h"

/*
 * Contexts and devices.  rtrs_srv_dev_mutex protects rtrs_srv_ctx_list,
 * rtrs_srv_dev_count and the listeners of every context.
 */
static DEFINE_MUTEX(rtrs_srv_dev_mutex);
static LIST_HEAD(rtrs_srv_ctx_list);
static unsigned int rtrs_srv_dev_count;

static struct rdma_cm_id *rtrs_srv_listen(struct rtrs_srv_ctx *ctx,
					  struct sockaddr *addr,
					  enum rdma_ucm_port_space ps)
{
	struct rdma_cm_id *cm_id;
	int err;

	cm_id = rtrs_fail_or(ERR_PTR(-ENOMEM),
			     rdma_create_id(&init_net, rtrs_srv_cm_handler, ctx,
					    ps, IB_QPT_RC));
	if (IS_ERR(cm_id))
		return cm_id;

	err = rdma_bind_addr(cm_id, addr);
	if (err)
		goto destroy;
	err = rtrs_fail_or(-ENOMEM, rdma_listen(cm_id, 64));
	if (err)
		goto destroy;
	return cm_id;

destroy:
	rdma_destroy_id(cm_id);
	return ERR_PTR(err);
}

/* Listen on IPv6-any, which takes IPv4 too, and on AF_IB. */
static int rtrs_srv_start_listen(struct rtrs_srv_ctx *ctx)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family	= AF_INET6,
		.sin6_addr	= IN6ADDR_ANY_INIT,
		.sin6_port	= htons(ctx->port),
	};
	struct sockaddr_ib sib = {
		.sib_family	= AF_IB,
		.sib_sid	= cpu_to_be64(RDMA_IB_IP_PS_IB | ctx->port),
		.sib_sid_mask	= cpu_to_be64(U64_MAX),
		.sib_pkey	= cpu_to_be16(0xffff),
	};
	struct rdma_cm_id *ip, *ib;

	lockdep_assert_held(&rtrs_srv_dev_mutex);

	ip = rtrs_srv_listen(ctx, (struct sockaddr *)&sin6, RDMA_PS_TCP);
	if (IS_ERR(ip))
		return PTR_ERR(ip);
	ib = rtrs_srv_listen(ctx, (struct sockaddr *)&sib, RDMA_PS_IB);
	if (IS_ERR(ib)) {
		rdma_destroy_id(ip);
		return PTR_ERR(ib);
	}
	ctx->cm_id_ip = ip;
	ctx->cm_id_ib = ib;
	return 0;
}

static void rtrs_srv_stop_listen(struct rtrs_srv_ctx *ctx)
{
	lockdep_assert_held(&rtrs_srv_dev_mutex);

	if (!ctx->cm_id_ip)
		return;
	rdma_destroy_id(ctx->cm_id_ib);
	rdma_destroy_id(ctx->cm_id_ip);
	ctx->cm_id_ib = NULL;
	ctx->cm_id_ip = NULL;
}

static int rtrs_srv_add_one(struct ib_device *ib_dev)
{
	struct rtrs_srv_ctx *ctx;
	int err;

	mutex_lock(&rtrs_srv_dev_mutex);
	if (!rtrs_srv_dev_count++) {
		list_for_each_entry(ctx, &rtrs_srv_ctx_list, entry) {
			err = rtrs_srv_start_listen(ctx);
			if (err)
				pr_err("cannot listen on port %u: %d\n",
				       ctx->port, err);
		}
	}
	mutex_unlock(&rtrs_srv_dev_mutex);
	return 0;
}

/*
 * A device goes away: close the paths on it and wait for them before the
 * RDMA CM (registered before us, so removed after us) tears down its ids,
 * so every QP, MR and PD of the device is gone when we return.
 */
static void rtrs_srv_remove_one(struct ib_device *ib_dev, void *client_data)
{
	struct rtrs_srv_ctx *ctx;

	mutex_lock(&rtrs_srv_dev_mutex);
	list_for_each_entry(ctx, &rtrs_srv_ctx_list, entry)
		rtrs_srv_close_sessions(ctx, ib_dev);
	if (!--rtrs_srv_dev_count) {
		list_for_each_entry(ctx, &rtrs_srv_ctx_list, entry)
			rtrs_srv_stop_listen(ctx);
	}
	mutex_unlock(&rtrs_srv_dev_mutex);
	flush_workqueue(rtrs_srv_wq);
}

static struct ib_client rtrs_srv_ib_client = {
	.name	= "rtrs_server",
	.add	= rtrs_srv_add_one,
	.remove	= rtrs_srv_remove_one,
};

/**
 * rtrs_srv_open() - start serving RTRS clients
 * @ops: the user's callbacks, both required; copied.
 * @port: port to listen on, for IP and, as IB service ID, for AF_IB.
 *
 * Listens on IPv6-any (dual-stack, so IPv4 clients connect too) and on
 * AF_IB, over every RDMA device, present and future, and accepts client
 * sessions from then on.  While no RDMA device exists nothing listens:
 * the first device to appear starts the listeners, and a failure then is
 * only logged.
 *
 * Context: process context; sleeps.
 * Return: the server context, or an ERR_PTR(): -EINVAL when @ops lacks a
 * callback, -ENOMEM, or the error of the listen (-EADDRINUSE when another
 * context or user has @port).
 */
struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port)
{
	struct rtrs_srv_ctx *ctx;
	int err = 0;

	if (!ops || !ops->rdma_ev || !ops->link_ev)
		return ERR_PTR(-EINVAL);

	ctx = rtrs_kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->ops = *ops;
	ctx->port = port;
	mutex_init(&ctx->mutex);
	INIT_LIST_HEAD(&ctx->sess_list);

	mutex_lock(&rtrs_srv_dev_mutex);
	if (rtrs_srv_dev_count)
		err = rtrs_srv_start_listen(ctx);
	if (!err)
		list_add_tail(&ctx->entry, &rtrs_srv_ctx_list);
	mutex_unlock(&rtrs_srv_dev_mutex);

	if (err) {
		mutex_destroy(&ctx->mutex);
		kfree(ctx);
		return ERR_PTR(err);
	}
	return ctx;
}
EXPORT_SYMBOL_GPL(rtrs_srv_open);

/**
 * rtrs_srv_close() - stop serving and close every session
 * @ctx: context returned by rtrs_srv_open().
 *
 * Stops listening first, so no session can start meanwhile, then closes
 * every path of every session and waits until each one is torn down.
 * Closing a path waits until the user has responded to every request it
 * took, with rtrs_srv_resp_rdma(); each session that was up then gets
 * %RTRS_SRV_LINK_EV_DISCONNECTED.  Frees @ctx.  No callback runs after
 * this returns.
 *
 * Context: process context; sleeps.
 */
void rtrs_srv_close(struct rtrs_srv_ctx *ctx)
{
	mutex_lock(&rtrs_srv_dev_mutex);
	list_del(&ctx->entry);
	rtrs_srv_stop_listen(ctx);
	mutex_unlock(&rtrs_srv_dev_mutex);

	rtrs_srv_close_sessions(ctx, NULL);
	flush_workqueue(rtrs_srv_wq);

	WARN_ON(!list_empty(&ctx->sess_list));
	mutex_destroy(&ctx->mutex);
	kfree(ctx);
}
EXPORT_SYMBOL_GPL(rtrs_srv_close);

/**
 * rtrs_srv_set_sess_priv() - attach the user's pointer to a session
 * @srv: the session.
 * @priv: passed to &rtrs_srv_ops.rdma_ev and to the
 *	%RTRS_SRV_LINK_EV_DISCONNECTED event of @srv from then on.
 *
 * Context: any context; normally the %RTRS_SRV_LINK_EV_CONNECTED event.
 */
void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *srv, void *priv)
{
	WRITE_ONCE(srv->priv, priv);
}
EXPORT_SYMBOL_GPL(rtrs_srv_set_sess_priv);

/**
 * rtrs_srv_get_path_name() - name of a server session
 * @srv: the session.
 * @pathname: buffer for the name the client gave rtrs_clt_open().
 * @len: size of @pathname; a longer name is truncated, and the result is
 *	always NUL-terminated when @len is not 0.
 *
 * Takes the name from the first path of @srv that is connected or whose
 * INFO_REQ has named it, so that it works from the
 * %RTRS_SRV_LINK_EV_CONNECTED event already, whose path is not connected
 * yet.
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENOTCONN (@pathname untouched) when no path of @srv is
 * connected or named.
 */
int rtrs_srv_get_path_name(struct rtrs_srv_sess *srv, char *pathname,
			   size_t len)
{
	struct rtrs_srv_path *path;
	int err = -ENOTCONN;

	mutex_lock(&srv->paths_mutex);
	list_for_each_entry(path, &srv->paths_list, entry) {
		/* Pairs with the release in rtrs_srv_take_name(). */
		bool named = smp_load_acquire(&path->named);

		/* A path whose CONNECTED event runs is not connected yet. */
		if (rtrs_srv_path_state(path) != RTRS_SRV_CONNECTED && !named)
			continue;
		if (len)
			strscpy(pathname, path->s.sessname, len);
		err = 0;
		break;
	}
	mutex_unlock(&srv->paths_mutex);
	return err;
}
EXPORT_SYMBOL_GPL(rtrs_srv_get_path_name);

/**
 * rtrs_srv_get_queue_depth() - queue depth of a server session
 * @srv: the session.
 *
 * Context: any context.
 * Return: the number of chunks of @srv, which is the number of requests
 * its client may have in flight.  A client of this implementation keeps
 * a few of them for failovers and offers its user the rest as
 * &rtrs_attrs.queue_depth; mainline's client offers them all.
 */
int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *srv)
{
	return srv->queue_depth;
}
EXPORT_SYMBOL_GPL(rtrs_srv_get_queue_depth);

static int __init rtrs_server_init(void)
{
	int err;

	err = rtrs_srv_check_params();
	if (err)
		return err;

	rtrs_ib_dev_pool_init(&rtrs_srv_dev_pool, 0);
	rtrs_srv_wq = alloc_workqueue("rtrs_server_wq", 0, 0);
	if (!rtrs_srv_wq) {
		err = -ENOMEM;
		goto destroy_pool;
	}
	err = rtrs_srv_buf_pool_init();
	if (err)
		goto destroy_wq;
	err = rtrs_srv_sysfs_init();
	if (err)
		goto buf_pool_exit;
	err = ib_register_client(&rtrs_srv_ib_client);
	if (err)
		goto sysfs_exit;
	rtrs_srv_io_fault_init();
	return 0;

sysfs_exit:
	rtrs_srv_sysfs_exit();
buf_pool_exit:
	rtrs_srv_buf_pool_exit();
destroy_wq:
	destroy_workqueue(rtrs_srv_wq);
destroy_pool:
	rtrs_ib_dev_pool_destroy(&rtrs_srv_dev_pool);
	return err;
}

static void __exit rtrs_server_exit(void)
{
	rtrs_srv_io_fault_exit();
	ib_unregister_client(&rtrs_srv_ib_client);
	rtrs_srv_sysfs_exit();
	rtrs_srv_buf_pool_exit();
	destroy_workqueue(rtrs_srv_wq);
	rtrs_ib_dev_pool_destroy(&rtrs_srv_dev_pool);
}

module_init(rtrs_server_init);
module_exit(rtrs_server_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): server");
MODULE_LICENSE("GPL");
