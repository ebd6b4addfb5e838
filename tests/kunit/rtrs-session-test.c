// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: real client sessions against the test server.
 *
 * Needs an RDMA device and tests/user/rtrs-test-srv.ko listening at
 * "server" below before it is loaded; the scenario
 * tests/e2e/session.sh sets that up over a pair of rxe devices.  Uses
 * only rtrs.h, so the same module exercises any client that implements
 * the API.  On a kernel without KUnit it builds on kunit-lite.h, which
 * runs it the same way.
 */
#if IS_ENABLED(CONFIG_KUNIT)
#include <kunit/test.h>
#else
#include "kunit-lite.h"
#endif
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/workqueue.h>

#include "rtrs.h"
#include "../user/rtrs-test.h"

/*
 * Where the test server is: across the veth pair of tests/e2e/topology.sh.
 * These are constants, not module parameters, because 6.1 runs a module's
 * suites before it parses the module's parameters.
 */
static const char *server = "ip:192.0.2.1@ip:192.0.2.2";
static u16 port = RTRS_TEST_PORT;

/*
 * Open/close cycles of open_close_cycles, at the server's default queue
 * depth: about 1.4 s each under TCG.  The many cycles run in
 * tests/e2e/session-cycles.sh, against a server of small queue depth.
 */
#define TEST_CYCLES	5

#define TEST_TIMEOUT	(30 * HZ)

struct test_sess {
	struct rtrs_clt_sess *clt;
	struct rtrs_attrs attrs;
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr;
};

static void test_link_ev(void *priv, enum rtrs_clt_link_ev ev)
{
}

static struct rtrs_clt_ops test_clt_ops = {
	.link_ev = test_link_ev,
};

static struct rtrs_clt_sess *test_open(struct kunit *test,
				       struct test_sess *s)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->addr.src = &s->src;
	s->addr.dst = &s->dst;
	err = rtrs_addr_to_sockaddr(server, strlen(server), port, &s->addr);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "bad server address '%s'", server);

	s->clt = rtrs_clt_open(&test_clt_ops, "rtrs-session-test", &s->addr,
			       1, port, 0, 1, 0, 0);
	if (IS_ERR(s->clt))
		return s->clt;
	KUNIT_EXPECT_EQ(test, rtrs_clt_query(s->clt, &s->attrs), 0);
	return s->clt;
}

/* One IO and what came of it. */
struct test_io {
	struct completion done;
	atomic_t calls;
	int err;
	struct rtrs_permit *permit;
	struct rtrs_clt_req_ops ops;
	struct scatterlist sg;
	struct kvec vec;
	u8 *usr;
	/* Set: the completion itself gives the permit back, as rnbd does. */
	struct rtrs_clt_sess *put_on_conf;
};

static void test_conf(void *priv, int err)
{
	struct test_io *io = priv;

	if (io->put_on_conf)
		rtrs_clt_put_permit(io->put_on_conf, io->permit);
	io->err = err;
	atomic_inc(&io->calls);
	complete(&io->done);
}

/* A user message of @usr_len bytes: header, then a checksummed pattern. */
static u8 *test_usr_msg(enum rtrs_test_op op, u64 off, u32 len, u32 err,
			size_t usr_len)
{
	struct rtrs_test_msg *msg;
	u8 *usr;
	size_t i;

	usr = kmalloc(usr_len, GFP_KERNEL);
	if (!usr)
		return NULL;
	for (i = sizeof(*msg); i < usr_len; i++)
		usr[i] = (u8)(i * 7 + op);
	msg = (struct rtrs_test_msg *)usr;
	msg->magic = cpu_to_le32(RTRS_TEST_MAGIC);
	msg->op = cpu_to_le32(op);
	msg->off = cpu_to_le64(off);
	msg->len = cpu_to_le32(len);
	msg->err = cpu_to_le32(err);
	msg->usr_len = cpu_to_le32(usr_len);
	msg->usr_csum = cpu_to_le32(rtrs_test_csum(usr + sizeof(*msg),
						   usr_len - sizeof(*msg)));
	return usr;
}

/* Start one IO; the permit must be held.  Returns rtrs_clt_request()'s. */
static int test_io_start(struct test_sess *s, struct test_io *io, int dir,
			 enum rtrs_test_op op, u64 off, void *buf, size_t len,
			 size_t usr_len, u32 err)
{
	init_completion(&io->done);
	atomic_set(&io->calls, 0);
	io->err = 1;
	io->ops.priv = io;
	io->ops.conf_fn = test_conf;
	io->usr = test_usr_msg(op, off, len, err, usr_len);
	if (!io->usr)
		return -ENOMEM;
	io->vec.iov_base = io->usr;
	io->vec.iov_len = usr_len;
	if (len)
		sg_init_one(&io->sg, buf, len);
	return rtrs_clt_request(dir, &io->ops, s->clt, io->permit, &io->vec, 1,
				len, len ? &io->sg : NULL, len ? 1 : 0);
}

/* Wait for an IO; returns its errno, or -ETIMEDOUT. */
static int test_io_wait(struct test_io *io)
{
	if (!wait_for_completion_timeout(&io->done, TEST_TIMEOUT))
		return -ETIMEDOUT;
	kfree(io->usr);
	io->usr = NULL;
	return io->err;
}

static int test_io_sync(struct test_sess *s, int dir, enum rtrs_test_op op,
			u64 off, void *buf, size_t len, size_t usr_len, u32 err)
{
	struct test_io io = {};
	int ret;

	io.permit = rtrs_clt_get_permit(s->clt, RTRS_IO_CON, RTRS_PERMIT_WAIT);
	if (!io.permit)
		return -EBUSY;
	ret = test_io_start(s, &io, dir, op, off, buf, len, usr_len, err);
	if (!ret) {
		ret = test_io_wait(&io);
		/* A request whose completion never came still owns io. */
		if (ret == -ETIMEDOUT)
			return ret;
	}
	kfree(io.usr);
	rtrs_clt_put_permit(s->clt, io.permit);
	return ret;
}

static void fill_pattern(u8 *buf, size_t len, u32 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = (u8)(seed + i * 13 + (i >> 8));
}

/* ---- cases -------------------------------------------------------------- */

static void session_open_close(struct kunit *test)
{
	struct test_sess s;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	KUNIT_EXPECT_GT(test, s.attrs.queue_depth, 0U);
	KUNIT_EXPECT_GE(test, s.attrs.max_io_size, 4096U);
	KUNIT_EXPECT_GT(test, s.attrs.max_segments, 0U);
	rtrs_clt_close(s.clt);
}

static void session_open_refused(struct kunit *test)
{
	struct test_sess s;
	struct rtrs_clt_sess *clt;
	u16 saved = port;

	/* Nobody listens on the next port: the open fails, cleanly. */
	port = saved + 1;
	clt = test_open(test, &s);
	port = saved;
	KUNIT_EXPECT_TRUE(test, IS_ERR(clt));
	if (!IS_ERR(clt))
		rtrs_clt_close(clt);
}

/* Write a pattern, read it back into a clean buffer, compare. */
static void write_read_one(struct kunit *test, struct test_sess *s,
			   size_t len, u64 off)
{
	u8 *out, *in;
	int err;

	out = kunit_kmalloc(test, len, GFP_KERNEL);
	in = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, in);
	fill_pattern(out, len, (u32)len);

	err = test_io_sync(s, WRITE, RTRS_TEST_OP_STORE, off, out, len,
			   sizeof(struct rtrs_test_msg), 0);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "WRITE of %zu bytes", len);
	err = test_io_sync(s, READ, RTRS_TEST_OP_FETCH, off, in, len,
			   sizeof(struct rtrs_test_msg), 0);
	KUNIT_EXPECT_EQ_MSG(test, err, 0, "READ of %zu bytes", len);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(out, in, len), 0,
			    "data of %zu bytes differs", len);
	kunit_kfree(test, out);
	kunit_kfree(test, in);
}

static void io_every_size_class(struct kunit *test)
{
	static const size_t sizes[] = {
		1, 2, 3, 511, 512, 513, 4095, 4096, 4097, 8192, 12345, 65536,
	};
	struct test_sess s;
	size_t i, max;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	max = min_t(size_t, s.attrs.max_io_size, RTRS_TEST_STORE_SIZE);
	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		if (sizes[i] <= max)
			write_read_one(test, &s, sizes[i], 4096 * i);
	write_read_one(test, &s, max - 1, 1);
	write_read_one(test, &s, max, 0);
	rtrs_clt_close(s.clt);
}

static void io_too_large_refused(struct kunit *test)
{
	struct test_sess s;
	size_t len;
	u8 *buf;
	int err;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	len = s.attrs.max_io_size + 1;
	buf = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	err = test_io_sync(&s, WRITE, RTRS_TEST_OP_STORE, 0, buf, len,
			   sizeof(struct rtrs_test_msg), 0);
	KUNIT_EXPECT_NE(test, err, 0);
	KUNIT_EXPECT_NE(test, err, -ETIMEDOUT);
	rtrs_clt_close(s.clt);
}

/* The same test IO once as WRITE and once as READ; returns both errnos. */
static void test_io_both(struct test_sess *s, enum rtrs_test_op op, void *buf,
			 size_t len, size_t usr_len, u32 err, int *werr,
			 int *rerr)
{
	*werr = test_io_sync(s, WRITE, op, 0, buf, len, usr_len, err);
	*rerr = test_io_sync(s, READ,
			     op == RTRS_TEST_OP_STORE ? RTRS_TEST_OP_FETCH : op,
			     0, buf, len, usr_len, err);
}

static void usr_msg_intact(struct kunit *test)
{
	static const size_t usr_lens[] = {
		sizeof(struct rtrs_test_msg), sizeof(struct rtrs_test_msg) + 1,
		100, 512, 1000, 2048, 3000,
	};
	struct test_sess s;
	u8 buf[64];
	size_t i;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	for (i = 0; i < ARRAY_SIZE(usr_lens); i++) {
		int werr, rerr;

		test_io_both(&s, RTRS_TEST_OP_STORE, buf, sizeof(buf),
			     usr_lens[i], 0, &werr, &rerr);
		KUNIT_EXPECT_EQ_MSG(test, werr, 0, "WRITE, %zu bytes of user message",
				    usr_lens[i]);
		KUNIT_EXPECT_EQ_MSG(test, rerr, 0, "READ, %zu bytes of user message",
				    usr_lens[i]);
	}
	rtrs_clt_close(s.clt);
}

static void server_errno_reaches_conf(struct kunit *test)
{
	static const u32 errs[] = { 1, EIO, ENOSPC, 511 };
	struct test_sess s;
	u8 buf[16];
	size_t i;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	for (i = 0; i < ARRAY_SIZE(errs); i++) {
		int werr, rerr;

		test_io_both(&s, RTRS_TEST_OP_FAIL, buf, sizeof(buf),
			     sizeof(struct rtrs_test_msg), errs[i], &werr,
			     &rerr);
		KUNIT_EXPECT_EQ(test, werr, -(int)errs[i]);
		KUNIT_EXPECT_EQ(test, rerr, -(int)errs[i]);
	}
	rtrs_clt_close(s.clt);
}

/* Take every permit of the session with NOWAIT; each must be granted. */
static struct rtrs_permit **take_all_permits(struct kunit *test,
					     struct test_sess *s)
{
	struct rtrs_permit **permits;
	u32 i;

	permits = kunit_kcalloc(test, s->attrs.queue_depth, sizeof(*permits),
				GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, permits);
	for (i = 0; i < s->attrs.queue_depth; i++) {
		permits[i] = rtrs_clt_get_permit(s->clt, RTRS_IO_CON,
						 RTRS_PERMIT_NOWAIT);
		KUNIT_EXPECT_NOT_NULL(test, permits[i]);
	}
	return permits;
}

static void put_all_permits(struct test_sess *s, struct rtrs_permit **permits)
{
	u32 i;

	for (i = 0; i < s->attrs.queue_depth; i++)
		if (permits[i])
			rtrs_clt_put_permit(s->clt, permits[i]);
}

static void permits_nowait_exhausts(struct kunit *test)
{
	struct rtrs_permit **permits;
	struct test_sess s;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	permits = take_all_permits(test, &s);
	KUNIT_EXPECT_NULL(test, rtrs_clt_get_permit(s.clt, RTRS_IO_CON,
						    RTRS_PERMIT_NOWAIT));
	rtrs_clt_put_permit(s.clt, permits[0]);
	permits[0] = rtrs_clt_get_permit(s.clt, RTRS_IO_CON, RTRS_PERMIT_NOWAIT);
	KUNIT_EXPECT_NOT_NULL(test, permits[0]);
	put_all_permits(&s, permits);
	rtrs_clt_close(s.clt);
}

struct test_waiter {
	struct test_sess *s;
	struct rtrs_permit *permit;
	struct completion got;
};

static int test_waiter_fn(void *arg)
{
	struct test_waiter *w = arg;

	w->permit = rtrs_clt_get_permit(w->s->clt, RTRS_IO_CON,
					RTRS_PERMIT_WAIT);
	complete(&w->got);
	return 0;
}

static void permit_wait_blocks_until_put(struct kunit *test)
{
	struct rtrs_permit **permits;
	struct test_waiter w;
	struct task_struct *t;
	struct test_sess s;
	u32 qd;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	qd = s.attrs.queue_depth;
	permits = take_all_permits(test, &s);

	w.s = &s;
	w.permit = NULL;
	init_completion(&w.got);
	t = kthread_run(test_waiter_fn, &w, "rtrs-test-waiter");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	/* All permits are taken: the waiter must still be waiting. */
	KUNIT_EXPECT_FALSE(test, wait_for_completion_timeout(&w.got, HZ / 2));
	rtrs_clt_put_permit(s.clt, permits[qd - 1]);
	permits[qd - 1] = NULL;
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&w.got, TEST_TIMEOUT));
	KUNIT_EXPECT_NOT_NULL(test, w.permit);
	if (w.permit)
		rtrs_clt_put_permit(s.clt, w.permit);
	put_all_permits(&s, permits);
	rtrs_clt_close(s.clt);
}

/* Every permit in flight at once, submitted from every CPU. */
struct test_cpu_work {
	struct work_struct work;
	struct test_sess *s;
	struct test_io *ios;
	u8 *bufs;
	u32 first, count;
	size_t len;
	atomic_t *started;
};

static void test_cpu_submit(struct work_struct *work)
{
	struct test_cpu_work *cw = container_of(work, struct test_cpu_work, work);
	u32 i;

	for (i = cw->first; i < cw->first + cw->count; i++) {
		struct test_io *io = &cw->ios[i];

		io->permit = rtrs_clt_get_permit(cw->s->clt, RTRS_IO_CON,
						 RTRS_PERMIT_WAIT);
		if (test_io_start(cw->s, io, WRITE, RTRS_TEST_OP_STORE,
				  (u64)i * cw->len, cw->bufs + i * cw->len,
				  cw->len, sizeof(struct rtrs_test_msg), 0))
			test_conf(io, -EIO);
		atomic_inc(cw->started);
	}
}

static void io_from_all_cpus(struct kunit *test)
{
	struct test_cpu_work *works;
	unsigned int cpu, n = 0, ncpu = num_online_cpus();
	atomic_t started = ATOMIC_INIT(0);
	struct test_sess s;
	struct test_io *ios;
	size_t len = 4096;
	u32 i, qd, per;
	u8 *bufs;

	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	qd = min_t(u32, s.attrs.queue_depth, RTRS_TEST_STORE_SIZE / len);
	per = qd / ncpu;
	ios = kunit_kcalloc(test, qd, sizeof(*ios), GFP_KERNEL);
	works = kunit_kcalloc(test, ncpu, sizeof(*works), GFP_KERNEL);
	bufs = kunit_kmalloc_array(test, qd, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ios);
	KUNIT_ASSERT_NOT_NULL(test, works);
	KUNIT_ASSERT_NOT_NULL(test, bufs);
	for (i = 0; i < qd; i++)
		fill_pattern(bufs + i * len, len, i);

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct test_cpu_work *cw = &works[n];

		INIT_WORK(&cw->work, test_cpu_submit);
		cw->s = &s;
		cw->ios = ios;
		cw->bufs = bufs;
		cw->len = len;
		cw->first = n * per;
		cw->count = n == ncpu - 1 ? qd - n * per : per;
		cw->started = &started;
		queue_work_on(cpu, system_unbound_wq, &cw->work);
		n++;
	}
	cpus_read_unlock();
	for (i = 0; i < n; i++)
		flush_work(&works[i].work);

	KUNIT_EXPECT_EQ(test, atomic_read(&started), (int)qd);
	for (i = 0; i < qd; i++) {
		KUNIT_EXPECT_EQ_MSG(test, test_io_wait(&ios[i]), 0, "IO %u", i);
		KUNIT_EXPECT_EQ(test, atomic_read(&ios[i].calls), 1);
		rtrs_clt_put_permit(s.clt, ios[i].permit);
	}
	/* Read everything back and check it landed where it was sent. */
	for (i = 0; i < qd; i += 37) {
		u8 *in = kunit_kzalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, in);
		int err = test_io_sync(&s, READ, RTRS_TEST_OP_FETCH,
				       (u64)i * len, in, len,
				       sizeof(struct rtrs_test_msg), 0);

		KUNIT_EXPECT_EQ(test, err, 0);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(in, bufs + i * len, len), 0,
				    "IO %u", i);
		kunit_kfree(test, in);
	}
	rtrs_clt_close(s.clt);
}

/*
 * Closing with requests in flight completes each exactly once; the
 * completions give the permits back, which close waits for.  The server
 * holds each request RTRS_TEST_HOLD_MS before it responds, so that close
 * finds them in flight: a case in which none was would test nothing.
 */
#define CLOSE_IOS	64

static void close_with_io_in_flight(struct kunit *test)
{
	u32 i, n, started = 0, in_flight = 0;
	struct test_sess s;
	struct test_io *ios;
	u8 *buf;
	int err;

	ios = kunit_kcalloc(test, CLOSE_IOS, sizeof(*ios), GFP_KERNEL);
	buf = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ios);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_FALSE(test, IS_ERR(test_open(test, &s)));
	n = min_t(u32, s.attrs.queue_depth, CLOSE_IOS);
	for (i = 0; i < n; i++) {
		ios[i].permit = rtrs_clt_get_permit(s.clt, RTRS_IO_CON,
						    RTRS_PERMIT_NOWAIT);
		if (!ios[i].permit) {
			KUNIT_FAIL(test, "no permit for IO %u", i);
			break;
		}
		ios[i].put_on_conf = s.clt;
		err = test_io_start(&s, &ios[i], READ, RTRS_TEST_OP_HOLD, 0,
				    buf, 4096, sizeof(struct rtrs_test_msg), 0);
		if (err) {
			/* Not started: no completion comes, none to wait for. */
			KUNIT_FAIL(test, "IO %u not started: %d", i, err);
			kfree(ios[i].usr);
			rtrs_clt_put_permit(s.clt, ios[i].permit);
			break;
		}
		started++;
	}
	/* Started and not completed: what close finds in flight. */
	for (i = 0; i < started; i++)
		if (!atomic_read(&ios[i].calls))
			in_flight++;
	rtrs_clt_close(s.clt);
	for (i = 0; i < started; i++) {
		err = test_io_wait(&ios[i]);
		KUNIT_EXPECT_NE_MSG(test, err, -ETIMEDOUT, "IO %u never completed", i);
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&ios[i].calls), 1, "IO %u", i);
	}
	kunit_info(test, "%u of %u IOs in flight at close", in_flight, started);
	KUNIT_ASSERT_GT_MSG(test, in_flight, 0U, "no IO in flight at close");
}

static void open_close_cycles(struct kunit *test)
{
	struct test_sess s;
	u8 buf[512];
	u32 i;

	for (i = 0; i < TEST_CYCLES; i++) {
		int err;

		KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(test_open(test, &s)),
				       "cycle %u", i);
		err = test_io_sync(&s, WRITE, RTRS_TEST_OP_STORE, 0, buf,
				   sizeof(buf), sizeof(struct rtrs_test_msg), 0);
		KUNIT_ASSERT_EQ_MSG(test, err, 0, "cycle %u", i);
		rtrs_clt_close(s.clt);
	}
}

static struct kunit_case rtrs_session_cases[] = {
	KUNIT_CASE(session_open_close),
	KUNIT_CASE(session_open_refused),
	KUNIT_CASE(io_every_size_class),
	KUNIT_CASE(io_too_large_refused),
	KUNIT_CASE(usr_msg_intact),
	KUNIT_CASE(server_errno_reaches_conf),
	KUNIT_CASE(permits_nowait_exhausts),
	KUNIT_CASE(permit_wait_blocks_until_put),
	KUNIT_CASE(io_from_all_cpus),
	KUNIT_CASE(close_with_io_in_flight),
	KUNIT_CASE(open_close_cycles),
	{}
};

static struct kunit_suite rtrs_session_suite = {
	.name = "rtrs-session",
	.test_cases = rtrs_session_cases,
};

kunit_test_suite(rtrs_session_suite);

MODULE_DESCRIPTION("KUnit tests of rtrs client sessions against the test server");
MODULE_LICENSE("GPL");
