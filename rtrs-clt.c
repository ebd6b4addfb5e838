// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client (active side).
 *
 * Sessions over one or more paths, permits, READ and WRITE requests,
 * multipath policies, reconnect and failover.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

static int __init rtrs_client_init(void)
{
	return 0;
}

static void __exit rtrs_client_exit(void)
{
}

module_init(rtrs_client_init);
module_exit(rtrs_client_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): client");
MODULE_LICENSE("GPL");
