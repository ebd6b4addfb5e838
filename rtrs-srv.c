// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server (passive side).
 *
 * This file holds the module, the server contexts and their listeners.
 * A context listens (IPv6-any dual-stack and AF_IB, on its port) while at
 * least one RDMA device exists; an ib_client tells us when devices come
 * and go.  Sessions and paths live in rtrs-srv-path.c, the chunk pool in
 * rtrs-srv-chunk.c, the IO path in rtrs-srv-io.c.
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

bool rtrs_srv_always_invalidate = true;
module_param_named(always_invalidate, rtrs_srv_always_invalidate, bool,
		   0444);
MODULE_PARM_DESC(always_invalidate,
		 "Invalidate and re-key each chunk for every IO (default Y)");

/*
 * A path holds its queue pairs from its first connection on; one whose
 * client never completes it (the other connections or the INFO_REQ never
 * come) must not hold them forever.
 */
unsigned int rtrs_srv_connect_timeout_sec = 60;
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
unsigned int rtrs_srv_setup_cons_max = 1024;
module_param_named(setup_cons_max, rtrs_srv_setup_cons_max, uint, 0644);
MODULE_PARM_DESC(setup_cons_max,
		 "Connections of paths being set up, on one port, beyond which connect requests are refused (default 1024)");

unsigned int rtrs_srv_setup_cons_per_client = 256;
module_param_named(setup_cons_per_client, rtrs_srv_setup_cons_per_client,
		   uint, 0644);
MODULE_PARM_DESC(setup_cons_per_client,
		 "The same, from one client address (default 256)");

struct workqueue_struct *rtrs_srv_wq;
struct rtrs_ib_dev_pool rtrs_srv_dev_pool;

/*
 * Contexts and devices.  rtrs_srv_dev_mutex protects rtrs_srv_ctx_list,
 * rtrs_srv_dev_count and the listeners of every context.
 */
static DEFINE_MUTEX(rtrs_srv_dev_mutex);
static LIST_HEAD(rtrs_srv_ctx_list);
static unsigned int rtrs_srv_dev_count;

u32 rtrs_srv_queue_depth(void)
{
	return sess_queue_depth;
}

u32 rtrs_srv_chunk_size(void)
{
	return max_chunk_size;
}

u32 rtrs_srv_max_io_size(u32 chunk_size)
{
	return chunk_size - RTRS_SRV_MAX_HDR_SIZE;
}

static struct rdma_cm_id *rtrs_srv_listen(struct rtrs_srv_ctx *ctx,
					  struct sockaddr *addr,
					  enum rdma_ucm_port_space ps)
{
	struct rdma_cm_id *cm_id;
	int err;

	cm_id = rtrs_fault_inject() ? ERR_PTR(-ENOMEM) :
		rdma_create_id(&init_net, rtrs_srv_cm_handler, ctx, ps,
			       IB_QPT_RC);
	if (IS_ERR(cm_id))
		return cm_id;

	err = rdma_bind_addr(cm_id, addr);
	if (err)
		goto destroy;
	err = rtrs_fault_inject() ? -ENOMEM : rdma_listen(cm_id, 64);
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
 * @ops: the user's callbacks; copied.
 * @port: port to listen on, for IP and, as IB service ID, for AF_IB.
 *
 * Listens on IPv6-any (dual-stack, so IPv4 clients connect too) and on
 * AF_IB while at least one RDMA device exists, and accepts client
 * sessions from then on.
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

	ctx = rtrs_fault_inject() ? NULL : kzalloc(sizeof(*ctx), GFP_KERNEL);
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
 * every path of every session and waits until each one is torn down; each
 * session that was up gets %RTRS_SRV_LINK_EV_DISCONNECTED from that.  No
 * callback runs after this returns.
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
 * Takes the name from the first connected path of @srv, or from the path
 * whose INFO_REQ named it (the one a CONNECTED event is about).
 *
 * Context: process context; may sleep.
 * Return: 0, or -ENOTCONN (@pathname untouched) when no path of @srv is
 * connected.
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
 * its client may have in flight (&rtrs_attrs.queue_depth on the client).
 */
int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *srv)
{
	return srv->queue_depth;
}
EXPORT_SYMBOL_GPL(rtrs_srv_get_queue_depth);

static int rtrs_srv_check_params(void)
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

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * A send queue that runs out of room for answers is rare: its size fits
 * the session's queue depth.  The fault attribute fail_rtrs_srv_room
 * (debugfs) makes it happen on purpose, so that the answers waiting for
 * room, and their posting when room comes back, can be tested.
 */
static DECLARE_FAULT_ATTR(rtrs_srv_room_attr);
static struct dentry *rtrs_srv_room_dir;

/**
 * rtrs_srv_room_fault() - should the send queue look full to an answer?
 *
 * Context: any context.
 * Return: true when the answer must behave as if it found no room.
 */
bool rtrs_srv_room_fault(void)
{
	return should_fail(&rtrs_srv_room_attr, 1);
}

static void rtrs_srv_fault_init(void)
{
	rtrs_srv_room_dir = fault_create_debugfs_attr("fail_rtrs_srv_room",
						      NULL,
						      &rtrs_srv_room_attr);
}

static void rtrs_srv_fault_exit(void)
{
	debugfs_remove_recursive(rtrs_srv_room_dir);
}
#else
static void rtrs_srv_fault_init(void) {}
static void rtrs_srv_fault_exit(void) {}
#endif

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
	err = rtrs_srv_sysfs_init();
	if (err)
		goto destroy_wq;
	err = ib_register_client(&rtrs_srv_ib_client);
	if (err)
		goto sysfs_exit;
	rtrs_srv_fault_init();
	return 0;

sysfs_exit:
	rtrs_srv_sysfs_exit();
destroy_wq:
	destroy_workqueue(rtrs_srv_wq);
destroy_pool:
	rtrs_ib_dev_pool_destroy(&rtrs_srv_dev_pool);
	return err;
}

static void __exit rtrs_server_exit(void)
{
	rtrs_srv_fault_exit();
	ib_unregister_client(&rtrs_srv_ib_client);
	rtrs_srv_sysfs_exit();
	destroy_workqueue(rtrs_srv_wq);
	rtrs_ib_dev_pool_destroy(&rtrs_srv_dev_pool);
}

module_init(rtrs_server_init);
module_exit(rtrs_server_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): server");
MODULE_LICENSE("GPL");
