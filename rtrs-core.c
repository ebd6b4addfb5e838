// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, shared core.
 *
 * Holds what client and server share: RDMA CM setup, the ib device and PD
 * pool, information units, CQ and QP setup, heartbeats and address helpers.
 * The core never calls up into the client or the server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "rtrs-pri.h"

static int __init rtrs_core_init(void)
{
	return 0;
}

static void __exit rtrs_core_exit(void)
{
}

module_init(rtrs_core_init);
module_exit(rtrs_core_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): shared core");
MODULE_LICENSE("GPL");
