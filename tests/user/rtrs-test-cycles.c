// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs test cycles: opens sessions to the test server (rtrs-test-srv.ko),
 * checks that each carries data both ways, and closes them, while the
 * module loads.  Loading fails when anything went wrong, so a scenario
 * only checks insmod.  It uses only rtrs.h, like the test server.
 *
 *   server=ADDR	where the server is, as rtrs_addr_to_sockaddr() takes it
 *   port=N		its port
 *   cycles=N		open, IO, close this many times
 *   hold=1		then open one more session and keep it until unload
 *
 * What it measured is in /sys/module/rtrs_test_cycles/parameters/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>

#include "rtrs.h"
#include "rtrs-test.h"

/* Bytes each cycle writes and reads back. */
#define TEST_IO_SIZE	4096
#define TEST_TIMEOUT	(30 * HZ)

static char *server = "ip:192.0.2.1@ip:192.0.2.2";
module_param(server, charp, 0444);
MODULE_PARM_DESC(server, "address of the test server (default ip:192.0.2.1@ip:192.0.2.2)");

static ushort port = RTRS_TEST_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "port of the test server (default 1234)");

static uint cycles = 1;
module_param(cycles, uint, 0444);
MODULE_PARM_DESC(cycles, "sessions to open, use and close at load (default 1)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "then keep one session open until unload (default N)");

static ulong open_us;
module_param(open_us, ulong, 0444);
MODULE_PARM_DESC(open_us, "microseconds spent in rtrs_clt_open() over all cycles");

static ulong close_us;
module_param(close_us, ulong, 0444);
MODULE_PARM_DESC(close_us, "microseconds spent in rtrs_clt_close() over all cycles");

static struct rtrs_clt_sess *held;

struct test_io {
	struct completion done;
	int err;
};

static void test_conf(void *priv, int err)
{
	struct test_io *io = priv;

	io->err = err;
	complete(&io->done);
}

static void test_link_ev(void *priv, enum rtrs_clt_link_ev ev)
{
}

static struct rtrs_clt_ops test_clt_ops = {
	.link_ev = test_link_ev,
};

static struct rtrs_clt_sess *test_open(void)
{
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr = { .src = &src, .dst = &dst };
	int err;

	err = rtrs_addr_to_sockaddr(server, strlen(server), port, &addr);
	if (err) {
		pr_err("bad server address '%s': %d\n", server, err);
		return ERR_PTR(err);
	}
	return rtrs_clt_open(&test_clt_ops, "rtrs-test-cycles", &addr, 1, port,
			     0, 1, 0, 0);
}

/* One request of @op on @buf; returns its errno. */
static int test_io(struct rtrs_clt_sess *clt, int dir, enum rtrs_test_op op,
		   u8 *buf)
{
	struct rtrs_test_msg msg;
	struct kvec vec = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct rtrs_clt_req_ops ops = { .conf_fn = test_conf };
	struct rtrs_permit *permit;
	struct scatterlist sg;
	struct test_io *io;
	int err;

	rtrs_test_msg_init(&msg, op, 0, TEST_IO_SIZE);
	io = kzalloc(sizeof(*io), GFP_KERNEL);
	if (!io)
		return -ENOMEM;
	init_completion(&io->done);
	ops.priv = io;
	sg_init_one(&sg, buf, TEST_IO_SIZE);
	permit = rtrs_clt_get_permit(clt, RTRS_IO_CON, RTRS_PERMIT_WAIT);
	if (!permit) {
		kfree(io);
		return -EBUSY;
	}
	err = rtrs_clt_request(dir, &ops, clt, permit, &vec, 1, TEST_IO_SIZE,
			       &sg, 1);
	if (!err)
		err = wait_for_completion_timeout(&io->done, TEST_TIMEOUT) ?
		      io->err : -ETIMEDOUT;
	/*
	 * A request that never completed keeps @io, @buf and the permit:
	 * the caller then leaves the session open, and fails.
	 */
	if (err == -ETIMEDOUT)
		return err;
	rtrs_clt_put_permit(clt, permit);
	kfree(io);
	return err;
}

/* Write a pattern of @seed, read it back into a clean buffer, compare. */
static int test_write_read(struct rtrs_clt_sess *clt, u8 *out, u8 *in,
			   u32 seed)
{
	int err, i;

	for (i = 0; i < TEST_IO_SIZE; i++)
		out[i] = (u8)(seed * 31 + i * 13 + (i >> 8));
	memset(in, 0, TEST_IO_SIZE);
	err = test_io(clt, WRITE, RTRS_TEST_OP_STORE, out);
	if (err)
		return err;
	err = test_io(clt, READ, RTRS_TEST_OP_FETCH, in);
	if (err)
		return err;
	return memcmp(out, in, TEST_IO_SIZE) ? -EILSEQ : 0;
}

/* Open, check data both ways, and (unless held) close: one cycle. */
static int test_cycle(u32 n, u8 *out, u8 *in, bool keep)
{
	struct rtrs_clt_sess *clt;
	ktime_t t0 = ktime_get();
	int err;

	clt = test_open();
	open_us += ktime_us_delta(ktime_get(), t0);
	if (IS_ERR(clt)) {
		pr_err("cycle %u: open failed: %ld\n", n, PTR_ERR(clt));
		return PTR_ERR(clt);
	}
	err = test_write_read(clt, out, in, n);
	if (err)
		pr_err("cycle %u: IO failed: %d\n", n, err);
	if (keep && !err) {
		held = clt;
		return 0;
	}
	if (err == -ETIMEDOUT)
		return err;
	t0 = ktime_get();
	rtrs_clt_close(clt);
	close_us += ktime_us_delta(ktime_get(), t0);
	return err;
}

static int __init rtrs_test_cycles_init(void)
{
	ktime_t t0 = ktime_get();
	u8 *out, *in;
	int err = 0;
	u32 n;

	out = kmalloc(TEST_IO_SIZE, GFP_KERNEL);
	in = kmalloc(TEST_IO_SIZE, GFP_KERNEL);
	if (!out || !in) {
		err = -ENOMEM;
		goto free;
	}
	for (n = 0; n < cycles && !err; n++)
		err = test_cycle(n, out, in, false);
	/* A request still out owns the buffers: leave them. */
	if (err == -ETIMEDOUT)
		return err;
	if (!err)
		pr_info("%u cycles in %lld ms: open %lu us, close %lu us on average\n",
			cycles, ktime_ms_delta(ktime_get(), t0),
			cycles ? open_us / cycles : 0,
			cycles ? close_us / cycles : 0);
	if (!err && hold)
		err = test_cycle(n, out, in, true);
	if (err == -ETIMEDOUT)
		return err;
free:
	kfree(in);
	kfree(out);
	return err;
}

static void __exit rtrs_test_cycles_exit(void)
{
	if (held)
		rtrs_clt_close(held);
}

module_init(rtrs_test_cycles_init);
module_exit(rtrs_test_cycles_exit);

MODULE_DESCRIPTION("rtrs test client: sessions to the test server, data checked");
MODULE_LICENSE("GPL");
