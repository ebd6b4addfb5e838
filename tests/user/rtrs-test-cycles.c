// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs test cycles: opens sessions to the test server (rtrs-test-srv.ko),
 * checks that each carries data both ways, and closes them, while the
 * module loads.  Loading fails when anything went wrong, so a scenario
 * only checks insmod.  It uses only rtrs.h, like the test server.
 *
 *   server=ADDR	where the server is, as rtrs_addr_to_sockaddr() takes it
 *   port=N		its port
 *   sessions=N		sessions a cycle opens at once (each session i
 *			writes and reads bytes [i * io_size, (i + 1) * io_size)
 *			of the server's store, all sessions at the same time)
 *   io_size=N		bytes of each IO
 *   cycles=N		open, IO, close that many sessions this many times
 *   hold=1		then open that many more and keep them until unload
 *   timeout_ms=N	how long the requests of one round may take
 *
 * What it measured is in /sys/module/rtrs_test_cycles/parameters/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uio.h>

#include "rtrs.h"
#include "rtrs-test.h"

static char *server = "ip:192.0.2.1@ip:192.0.2.2";
module_param(server, charp, 0444);
MODULE_PARM_DESC(server, "address of the test server (default ip:192.0.2.1@ip:192.0.2.2)");

static ushort port = RTRS_TEST_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "port of the test server (default 1234)");

static uint cycles = 1;
module_param(cycles, uint, 0444);
MODULE_PARM_DESC(cycles, "times to open, use and close the sessions at load (default 1)");

static bool hold;
module_param(hold, bool, 0444);
MODULE_PARM_DESC(hold, "then keep the sessions of one more round open until unload (default N)");

static uint sessions = 1;
module_param(sessions, uint, 0444);
MODULE_PARM_DESC(sessions, "sessions open at once, each with its own data (default 1)");

static uint io_size = 4096;
module_param(io_size, uint, 0444);
MODULE_PARM_DESC(io_size, "bytes each session writes and reads back in a cycle (default 4096)");

static uint timeout_ms = 30000;
module_param(timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "how long the requests of a round, all sessions together, may take (default 30000)");

static ulong open_us;
module_param(open_us, ulong, 0444);
MODULE_PARM_DESC(open_us, "microseconds spent in rtrs_clt_open() over all cycles");

static ulong close_us;
module_param(close_us, ulong, 0444);
MODULE_PARM_DESC(close_us, "microseconds spent in rtrs_clt_close() over all cycles");

static uint verified;
module_param(verified, uint, 0444);
MODULE_PARM_DESC(verified, "sessions of the last round (the held one with hold=1) whose data came back as written");

/* What became of a request: whoever moves it from TEST_REQ_OUT owns it. */
enum {
	TEST_REQ_OUT,		/* in flight, its waiter waits */
	TEST_REQ_DONE,		/* completed; its waiter frees it */
	TEST_REQ_ABANDONED,	/* its waiter gave up; test_conf() frees it */
};

/**
 * struct test_req - a request in flight
 * @done: completed by test_conf()
 * @state: TEST_REQ_OUT, _DONE or _ABANDONED
 * @err: the request's errno, set by test_conf()
 * @clt: its session
 * @permit: the permit it holds
 * @sg: its data, which the client maps until the request completes
 */
struct test_req {
	struct completion	done;
	atomic_t		state;
	int			err;
	struct rtrs_clt_sess	*clt;
	struct rtrs_permit	*permit;
	struct scatterlist	sg;
};

/**
 * struct test_sess - a session of a round and its data
 * @clt: the session; NULL when not open
 * @req: its request in flight; NULL when none
 * @out: the data it writes
 * @in: the data it reads back
 * @off: where in the server's store its data goes
 *
 * A request that does not complete in time is abandoned to test_conf(),
 * but the client may still use @out or @in until it calls test_conf():
 * they are freed only after the session is closed, and rtrs_clt_close()
 * returns only once every request has completed and put its permit.
 */
struct test_sess {
	struct rtrs_clt_sess	*clt;
	struct test_req		*req;
	u8			*out;
	u8			*in;
	u64			off;
};

/**
 * struct test_set - the sessions of a round, open at the same time
 * @cycle: the number of the round, for messages
 * @nr: entries in @sess
 * @sess: the sessions
 */
struct test_set {
	u32			cycle;
	u32			nr;
	struct test_sess	sess[];
};

/* The round kept open by hold=1. */
static struct test_set *held;

/*
 * The request completed.  If its waiter gave up on it, nobody else will
 * free it: put its permit last, as rtrs_clt_close() of its session waits
 * for that, and the module may go right after.
 */
static void test_conf(void *priv, int err)
{
	struct test_req *req = priv;
	struct rtrs_clt_sess *clt = req->clt;
	struct rtrs_permit *permit = req->permit;

	req->err = err;
	if (atomic_xchg(&req->state, TEST_REQ_DONE) == TEST_REQ_OUT) {
		complete(&req->done);
		return;
	}
	kfree(req);
	rtrs_clt_put_permit(clt, permit);
}

static void test_link_ev(void *priv, enum rtrs_clt_link_ev ev)
{
}

static struct rtrs_clt_ops test_clt_ops = {
	.link_ev = test_link_ev,
};

/* Open session @i of a round: its name must differ from the others'. */
static struct rtrs_clt_sess *test_open(u32 i)
{
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr = { .src = &src, .dst = &dst };
	char name[32];
	int err;

	err = rtrs_addr_to_sockaddr(server, strlen(server), port, &addr);
	if (err) {
		pr_err("bad server address '%s': %d\n", server, err);
		return ERR_PTR(err);
	}
	snprintf(name, sizeof(name), "rtrs-test-cycles-%u", i);
	return rtrs_clt_open(&test_clt_ops, name, &addr, 1, port, 0, 1, 0, 0);
}

/* Send a request of @op on @buf over @s; on success it is @s->req. */
static int test_req_start(struct test_sess *s, int dir, enum rtrs_test_op op,
			  u8 *buf)
{
	struct rtrs_test_msg msg;
	struct kvec vec = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct rtrs_clt_req_ops ops = { .conf_fn = test_conf };
	struct test_req *req;
	int err;

	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	init_completion(&req->done);
	atomic_set(&req->state, TEST_REQ_OUT);
	req->clt = s->clt;
	sg_init_one(&req->sg, buf, io_size);
	req->permit = rtrs_clt_get_permit(s->clt, RTRS_IO_CON, RTRS_PERMIT_WAIT);
	if (!req->permit) {
		kfree(req);
		return -EBUSY;
	}
	/* The client copies the user message before it returns. */
	rtrs_test_msg_init(&msg, op, s->off, io_size);
	ops.priv = req;
	err = rtrs_clt_request(dir, &ops, s->clt, req->permit, &vec, 1,
			       io_size, &req->sg, 1);
	if (err) {
		rtrs_clt_put_permit(s->clt, req->permit);
		kfree(req);
		return err;
	}
	s->req = req;
	return 0;
}

/*
 * Wait until @deadline for the request of @s; return its errno.  One
 * that has not completed by then is abandoned to test_conf()
 * (-ETIMEDOUT).
 */
static int test_req_wait(struct test_sess *s, unsigned long deadline)
{
	struct test_req *req = s->req;
	long left = max_t(long, (long)(deadline - jiffies), 1);
	int err;

	if (!wait_for_completion_timeout(&req->done, left)) {
		if (atomic_xchg(&req->state, TEST_REQ_ABANDONED) ==
		    TEST_REQ_OUT) {
			s->req = NULL;
			return -ETIMEDOUT;
		}
		/* It completed just now: wait until test_conf() is done. */
		wait_for_completion(&req->done);
	}
	err = req->err;
	rtrs_clt_put_permit(s->clt, req->permit);
	kfree(req);
	s->req = NULL;
	return err;
}

/*
 * One request of @op on every session of @set at the same time: send
 * them all, then wait for each.  Return the first errno.
 */
static int test_set_io(struct test_set *set, int dir, enum rtrs_test_op op)
{
	unsigned long deadline;
	struct test_sess *s;
	u32 sent, i;
	int err = 0, ret;

	for (sent = 0; sent < set->nr; sent++) {
		s = &set->sess[sent];
		err = test_req_start(s, dir, op, dir == WRITE ? s->out : s->in);
		if (err) {
			pr_err("cycle %u: session %u: IO failed: %d\n",
			       set->cycle, sent, err);
			break;
		}
	}
	deadline = jiffies + msecs_to_jiffies(timeout_ms);
	for (i = 0; i < sent; i++) {
		ret = test_req_wait(&set->sess[i], deadline);
		if (ret)
			pr_err("cycle %u: session %u: IO failed: %d\n",
			       set->cycle, i, ret);
		err = err ?: ret;
	}
	return err;
}

/* A pattern of @seed in @s->out, a clean @s->in. */
static void test_sess_fill(struct test_sess *s, u32 seed)
{
	u32 i;

	for (i = 0; i < io_size; i++)
		s->out[i] = (u8)(seed * 31 + i * 13 + (i >> 8));
	memset(s->in, 0, io_size);
}

/*
 * Every session of @set writes a pattern of its own, then reads it back;
 * compare.  Sets verified to the sessions whose data came back.
 */
static int test_set_write_read(struct test_set *set, u32 seed)
{
	int err;
	u32 i;

	verified = 0;
	for (i = 0; i < set->nr; i++)
		test_sess_fill(&set->sess[i], seed + i);
	err = test_set_io(set, WRITE, RTRS_TEST_OP_STORE);
	if (err)
		return err;
	err = test_set_io(set, READ, RTRS_TEST_OP_FETCH);
	if (err)
		return err;
	for (i = 0; i < set->nr; i++) {
		if (memcmp(set->sess[i].out, set->sess[i].in, io_size)) {
			pr_err("cycle %u: session %u: IO failed: read back other data\n",
			       set->cycle, i);
			err = -EILSEQ;
			continue;
		}
		verified++;
	}
	return err;
}

/* Open every session of @set; stop at the first that fails. */
static int test_set_open(struct test_set *set)
{
	struct rtrs_clt_sess *clt;
	ktime_t t0;
	u32 i;

	for (i = 0; i < set->nr; i++) {
		t0 = ktime_get();
		clt = test_open(i);
		open_us += ktime_us_delta(ktime_get(), t0);
		if (IS_ERR(clt)) {
			pr_err("cycle %u: session %u: open failed: %ld\n",
			       set->cycle, i, PTR_ERR(clt));
			return PTR_ERR(clt);
		}
		set->sess[i].clt = clt;
	}
	return 0;
}

/*
 * Close the open sessions of @set.  This waits for the requests its waiters
 * abandoned: rtrs_clt_close() completes them (-ECONNABORTED if still out).
 */
static void test_set_close(struct test_set *set)
{
	struct test_sess *s;
	ktime_t t0;
	u32 i;

	for (i = 0; i < set->nr; i++) {
		s = &set->sess[i];
		if (!s->clt)
			continue;
		t0 = ktime_get();
		rtrs_clt_close(s->clt);
		close_us += ktime_us_delta(ktime_get(), t0);
		s->clt = NULL;
	}
}

/* Free @set and the buffers of its sessions, closed before. */
static void test_set_free(struct test_set *set)
{
	struct test_sess *s;
	u32 i;

	for (i = 0; i < set->nr; i++) {
		s = &set->sess[i];
		kfree(s->in);
		kfree(s->out);
	}
	kfree(set);
}

/* Round @n of @nr sessions, not yet open, each with its part of the store. */
static struct test_set *test_set_alloc(u32 n, u32 nr)
{
	struct test_set *set;
	struct test_sess *s;
	u32 i;

	set = kzalloc(struct_size(set, sess, nr), GFP_KERNEL);
	if (!set)
		return NULL;
	set->cycle = n;
	set->nr = nr;
	for (i = 0; i < nr; i++) {
		s = &set->sess[i];
		s->off = (u64)i * io_size;
		s->out = kmalloc(io_size, GFP_KERNEL);
		s->in = kmalloc(io_size, GFP_KERNEL);
		if (!s->out || !s->in) {
			test_set_free(set);
			return NULL;
		}
	}
	return set;
}

/* Open a round, check data both ways, and (unless kept) close it. */
static int test_cycle(u32 n, bool keep)
{
	struct test_set *set;
	int err;

	set = test_set_alloc(n, sessions);
	if (!set)
		return -ENOMEM;
	err = test_set_open(set);
	if (!err)
		err = test_set_write_read(set, n * sessions);
	if (keep && !err) {
		held = set;
		return 0;
	}
	test_set_close(set);
	test_set_free(set);
	return err;
}

/* Does every session's part fit the server's store? */
static int test_params_check(void)
{
	if (!sessions || !io_size ||
	    (u64)sessions * io_size > RTRS_TEST_STORE_SIZE) {
		pr_err("sessions=%u of io_size=%u do not fit a store of %u bytes\n",
		       sessions, io_size, RTRS_TEST_STORE_SIZE);
		return -EINVAL;
	}
	return 0;
}

static int __init rtrs_test_cycles_init(void)
{
	ktime_t t0 = ktime_get();
	int err;
	u32 n;

	err = test_params_check();
	for (n = 0; n < cycles && !err; n++)
		err = test_cycle(n, false);
	if (err)
		return err;
	pr_info("%u cycles of %u sessions in %lld ms: open %lu us, close %lu us on average\n",
		cycles, sessions, ktime_ms_delta(ktime_get(), t0),
		cycles ? open_us / cycles : 0, cycles ? close_us / cycles : 0);
	return hold ? test_cycle(n, true) : 0;
}

static void __exit rtrs_test_cycles_exit(void)
{
	if (!held)
		return;
	test_set_close(held);
	test_set_free(held);
}

module_init(rtrs_test_cycles_init);
module_exit(rtrs_test_cycles_exit);

MODULE_DESCRIPTION("rtrs test client: sessions to the test server, data checked");
MODULE_LICENSE("GPL");
