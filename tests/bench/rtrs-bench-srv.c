// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs benchmark server: responds to every IO of rtrs-bench-clt at once,
 * with no copy and no check beyond the user message's magic and length, so
 * the benchmark measures the transport and nothing else.  It uses only
 * rtrs.h: the same source builds against this project's header and
 * mainline's.
 *
 *   insmod rtrs-bench-srv.ko [port=1236]
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

#include "rtrs.h"
#include "rtrs-bench.h"

static ushort port = RTRS_BENCH_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "port to listen on (default: 1236)");

static atomic64_t ios_served;

static int bench_counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(kp->arg));
}

static const struct kernel_param_ops bench_counter_ops = {
	.get	= bench_counter_get,
};

module_param_cb(ios_served, &bench_counter_ops, &ios_served, 0444);
MODULE_PARM_DESC(ios_served, "IOs responded to so far");

static struct rtrs_srv_ctx *bench_ctx;

static int bench_rdma_ev(void *priv, struct rtrs_srv_op *id, void *data,
			 size_t datalen, const void *usr, size_t usrlen)
{
	const struct rtrs_bench_msg *msg = usr;
	int err = 0;

	if (usrlen < sizeof(*msg) ||
	    le32_to_cpu(msg->magic) != RTRS_BENCH_MAGIC ||
	    le32_to_cpu(msg->len) != datalen)
		err = -EPROTO;
	atomic64_inc(&ios_served);
	rtrs_srv_resp_rdma(id, err);
	return 0;
}

static int bench_link_ev(struct rtrs_srv_sess *sess, enum rtrs_srv_link_ev ev,
			 void *priv)
{
	if (ev == RTRS_SRV_LINK_EV_CONNECTED)
		pr_info("session connected, queue depth %d\n",
			rtrs_srv_get_queue_depth(sess));
	return 0;
}

static struct rtrs_srv_ops bench_ops = {
	.rdma_ev	= bench_rdma_ev,
	.link_ev	= bench_link_ev,
};

static int __init rtrs_bench_srv_init(void)
{
	bench_ctx = rtrs_srv_open(&bench_ops, port);
	return PTR_ERR_OR_ZERO(bench_ctx);
}

static void __exit rtrs_bench_srv_exit(void)
{
	rtrs_srv_close(bench_ctx);
}

module_init(rtrs_bench_srv_init);
module_exit(rtrs_bench_srv_exit);

MODULE_DESCRIPTION("rtrs benchmark server: responds to every IO at once");
MODULE_LICENSE("GPL");
