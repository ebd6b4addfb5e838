// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server (passive side).
 *
 * Listens on every RDMA device, accepts sessions, owns the chunk pool and
 * hands each IO to the in-kernel user through struct rtrs_srv_ops.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

static int __init rtrs_server_init(void)
{
	return 0;
}

static void __exit rtrs_server_exit(void)
{
}

module_init(rtrs_server_init);
module_exit(rtrs_server_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): server");
MODULE_LICENSE("GPL");
