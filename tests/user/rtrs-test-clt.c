// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs test client: opens one session to rtrs-test-srv when loaded and,
 * while "run" is 1, keeps verified IO going from a few threads: each
 * thread writes a pattern to its own part of the server's store, reads
 * it back and compares.  The counters say how many write-read pairs
 * passed, how many IOs failed and how many reads came back different.
 *
 *   insmod rtrs-test-clt.ko paths=ip:192.0.2.1@ip:192.0.2.2,ip:... \
 *	    [sessname=...] [threads=4] [io_size=16384] [pause_ms=0] \
 *	    [store_kb=4096]
 *   echo 1 > /sys/module/rtrs_test_clt/parameters/run
 *   cat /sys/module/rtrs_test_clt/parameters/{ios,io_errors,verify_errors}
 *   echo 0 > /sys/module/rtrs_test_clt/parameters/run
 *
 * Writing N to late_writes makes the next N writes LATE ones: the server
 * holds them and stores them from their chunk only later
 * (RTRS_TEST_OP_LATE).  Writing
 * 1 to "check" once IO stopped reads every block the threads wrote back
 * and compares it with the last pattern written there; check_errors
 * counts the blocks that differ.
 *
 * It uses only rtrs.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "rtrs.h"
#include "rtrs-test.h"
#include "../rtrs-test-paths.h"

#define TEST_MAX_PATHS	8
#define TEST_MAX_THREADS	16

static char *paths;
module_param(paths, charp, 0444);
MODULE_PARM_DESC(paths, "comma-separated paths, each [src@]dst");

static char *sessname = "rtrs-test-clt";
module_param(sessname, charp, 0444);
MODULE_PARM_DESC(sessname, "session name (default: rtrs-test-clt)");

static ushort port = RTRS_TEST_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "server port (default: 1234)");

static uint threads = 4;
module_param(threads, uint, 0444);
MODULE_PARM_DESC(threads, "IO threads, 1 to 16 (default: 4)");

static uint io_size = SZ_16K;
module_param(io_size, uint, 0444);
MODULE_PARM_DESC(io_size, "bytes per IO, 1 to 128 KiB (default: 16384)");

/*
 * The part of the test server's store the IO threads share, from its
 * start: a scenario whose other users of the same test server (a peer
 * of its own) write there too keeps them apart with it.
 */
static uint store_kb = RTRS_TEST_STORE_SIZE / SZ_1K;
module_param(store_kb, uint, 0444);
MODULE_PARM_DESC(store_kb, "KiB of the test server's store, from its start, the IO threads use (default and at most: 4096)");

static int nice;
module_param(nice, int, 0444);
MODULE_PARM_DESC(nice, "nice value of the IO threads, -20 to 19 (default: 0)");

/*
 * A pause after each write-read pair leaves the guest's CPUs to what a
 * scenario runs beside the IO (a userspace peer, its shell), where the IO
 * only has to go on and verify, not to load the path.
 */
static uint pause_ms;
module_param(pause_ms, uint, 0644);
MODULE_PARM_DESC(pause_ms, "milliseconds each IO thread sleeps after a write-read pair, up to 1000 (default: 0)");

static int max_reconnect_attempts = -1;
module_param(max_reconnect_attempts, int, 0444);
MODULE_PARM_DESC(max_reconnect_attempts,
		 "reconnects of a path before giving up, -1 forever (default: -1)");

static atomic_t late_writes = ATOMIC_INIT(0);

static int test_late_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int err = kstrtouint(val, 0, &n);

	if (!err)
		atomic_set(&late_writes, min_t(unsigned int, n, INT_MAX));
	return err;
}

static int test_late_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&late_writes));
}

static const struct kernel_param_ops test_late_ops = {
	.set	= test_late_set,
	.get	= test_late_get,
};
module_param_cb(late_writes, &test_late_ops, NULL, 0644);
MODULE_PARM_DESC(late_writes, "the next N writes are LATE ones the server holds");

static atomic64_t ios, io_errors, verify_errors, checked, check_errors;

static int test_counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lld\n", atomic64_read(kp->arg));
}

static const struct kernel_param_ops test_counter_ops = {
	.get	= test_counter_get,
};

module_param_cb(ios, &test_counter_ops, &ios, 0444);
MODULE_PARM_DESC(ios, "write-read pairs that passed");
module_param_cb(io_errors, &test_counter_ops, &io_errors, 0444);
MODULE_PARM_DESC(io_errors, "IOs that failed");
module_param_cb(verify_errors, &test_counter_ops, &verify_errors, 0444);
MODULE_PARM_DESC(verify_errors, "reads that differed from the write");
module_param_cb(checked, &test_counter_ops, &checked, 0444);
MODULE_PARM_DESC(checked, "blocks the last check read back");
module_param_cb(check_errors, &test_counter_ops, &check_errors, 0444);
MODULE_PARM_DESC(check_errors, "blocks the last check found different");

static struct rtrs_clt_sess *test_clt;
static struct task_struct *test_tasks[TEST_MAX_THREADS];

/*
 * Where each thread got to: blocks below @next hold pattern @gen, the
 * others @gen - 1 (none while @gen is 0).
 */
static struct test_progress {
	u64	next;
	u32	gen;
} test_progress[TEST_MAX_THREADS];
/* Starting and stopping the threads. */
static DEFINE_MUTEX(test_run_mutex);
static bool test_running;

struct test_io {
	struct completion	done;
	int			err;
};

static void test_conf(void *priv, int err)
{
	struct test_io *io = priv;

	io->err = err;
	complete(&io->done);
}

/* One IO of @op, waited for; 0 or a negative errno. */
static int test_do_io(int dir, enum rtrs_test_op op, u64 off, void *buf)
{
	struct rtrs_test_msg msg;
	struct kvec vec = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct test_io io = { .err = 0 };
	struct rtrs_clt_req_ops ops = { .priv = &io, .conf_fn = test_conf };
	struct rtrs_permit *permit;
	struct scatterlist sg;
	int err;

	rtrs_test_msg_init(&msg, op, off, io_size);
	init_completion(&io.done);
	sg_init_one(&sg, buf, io_size);
	permit = rtrs_clt_get_permit(test_clt, RTRS_IO_CON, RTRS_PERMIT_WAIT);
	if (!permit)
		return -EBUSY;
	err = rtrs_clt_request(dir, &ops, test_clt, permit, &vec, 1, io_size,
			       &sg, 1);
	if (!err) {
		wait_for_completion(&io.done);
		err = io.err;
	}
	rtrs_clt_put_permit(test_clt, permit);
	return err;
}

static void test_fill(u8 *buf, u64 off, u32 gen)
{
	u32 i;

	for (i = 0; i < io_size; i++)
		buf[i] = (u8)(off + i) ^ (u8)(gen * 131 + (i >> 8));
}

/* Write (@op), read back, compare; 0 when the pair passed. */
static int test_pair(u8 *wbuf, u8 *rbuf, u64 off, u32 gen,
		     enum rtrs_test_op op)
{
	int err;

	test_fill(wbuf, off, gen);
	err = test_do_io(WRITE, op, off, wbuf);
	if (!err)
		err = test_do_io(READ, RTRS_TEST_OP_FETCH, off, rbuf);
	if (err) {
		atomic64_inc(&io_errors);
		pr_info_ratelimited("IO at %llu failed: %d\n", off, err);
		return err;
	}
	if (memcmp(wbuf, rbuf, io_size)) {
		atomic64_inc(&verify_errors);
		pr_err_ratelimited("read at %llu differs from the write\n",
				   off);
		return -EIO;
	}
	atomic64_inc(&ios);
	return 0;
}

/* The bytes of the store each IO thread writes and checks. */
static u64 test_region(void)
{
	return (u64)store_kb * SZ_1K / threads;
}

static int test_thread(void *arg)
{
	unsigned long idx = (unsigned long)arg;
	struct test_progress *p = &test_progress[idx];
	u64 region = test_region();
	u64 blocks = max_t(u64, region / io_size, 1);
	enum rtrs_test_op op;
	u8 *wbuf, *rbuf;

	set_user_nice(current, clamp(nice, MIN_NICE, MAX_NICE));
	wbuf = kmalloc(io_size, GFP_KERNEL);
	rbuf = kmalloc(io_size, GFP_KERNEL);
	while (!kthread_should_stop()) {
		op = atomic_dec_if_positive(&late_writes) >= 0 ?
		     RTRS_TEST_OP_LATE : RTRS_TEST_OP_STORE;
		if (!wbuf || !rbuf ||
		    test_pair(wbuf, rbuf, idx * region + p->next * io_size,
			      p->gen, op))
			msleep(100);
		else if (READ_ONCE(pause_ms))
			msleep(min(READ_ONCE(pause_ms), 1000U));
		if (++p->next == blocks) {
			p->next = 0;
			p->gen++;
		}
		cond_resched();
	}
	kfree(rbuf);
	kfree(wbuf);
	return 0;
}

static void test_stop(void)
{
	unsigned int i;

	for (i = 0; i < threads; i++) {
		if (test_tasks[i])
			kthread_stop(test_tasks[i]);
		test_tasks[i] = NULL;
	}
	test_running = false;
}

/* Read every block the threads wrote; count those that differ. */
static int test_check(void)
{
	u64 region = test_region();
	u64 blocks = max_t(u64, region / io_size, 1), b;
	u8 *want, *got;
	unsigned int t;
	u32 gen;
	int err = 0;

	want = kmalloc(io_size, GFP_KERNEL);
	got = kmalloc(io_size, GFP_KERNEL);
	if (!want || !got) {
		err = -ENOMEM;
		goto out;
	}
	atomic64_set(&checked, 0);
	atomic64_set(&check_errors, 0);
	for (t = 0; t < threads && !err; t++) {
		for (b = 0; b < blocks; b++) {
			gen = test_progress[t].gen - (b >= test_progress[t].next);
			if (b >= test_progress[t].next && !test_progress[t].gen)
				break;
			test_fill(want, t * region + b * io_size, gen);
			err = test_do_io(READ, RTRS_TEST_OP_FETCH,
					 t * region + b * io_size, got);
			if (err)
				break;
			atomic64_inc(&checked);
			if (memcmp(want, got, io_size)) {
				atomic64_inc(&check_errors);
				pr_err_ratelimited("check: block at %llu is not what was written last\n",
						   t * region + b * io_size);
			}
		}
	}
out:
	kfree(got);
	kfree(want);
	return err;
}

static int test_check_set(const char *val, const struct kernel_param *kp)
{
	int err;

	mutex_lock(&test_run_mutex);
	err = test_running ? -EBUSY : test_check();
	mutex_unlock(&test_run_mutex);
	return err;
}

static const struct kernel_param_ops test_check_ops = {
	.set	= test_check_set,
};
module_param_cb(check, &test_check_ops, NULL, 0200);
MODULE_PARM_DESC(check, "write 1: read back every block written, once IO stopped");

static int test_start(void)
{
	unsigned long i;

	for (i = 0; i < threads; i++) {
		test_tasks[i] = kthread_run(test_thread, (void *)i,
					    "rtrs-test-io/%lu", i);
		if (IS_ERR(test_tasks[i])) {
			test_tasks[i] = NULL;
			test_stop();
			return -ENOMEM;
		}
	}
	test_running = true;
	return 0;
}

static int test_run_set(const char *val, const struct kernel_param *kp)
{
	bool run;
	int err;

	err = kstrtobool(val, &run);
	if (err)
		return err;
	mutex_lock(&test_run_mutex);
	if (run && !test_running)
		err = test_start();
	else if (!run && test_running)
		test_stop();
	mutex_unlock(&test_run_mutex);
	return err;
}

static int test_run_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(test_running));
}

static const struct kernel_param_ops test_run_ops = {
	.set	= test_run_set,
	.get	= test_run_get,
};
module_param_cb(run, &test_run_ops, NULL, 0644);
MODULE_PARM_DESC(run, "1 keeps verified IO going, 0 stops it");

/*
 * The link probe: like rnbd, which reacts to a reconnected event by
 * sending its session info at once without waiting for a permit, the
 * client sends one READ from the event and logs whether it could be sent
 * and what its response was.  One probe at a time; the response is
 * handled in a work, as a permit must not be put from inside its own
 * conf_fn.
 */
static struct {
	struct work_struct	work;
	atomic_t		busy;
	struct rtrs_permit	*permit;
	void			*buf;
	int			err;
} test_probe;

static void test_probe_done(struct rtrs_permit *permit, void *buf)
{
	rtrs_clt_put_permit(test_clt, permit);
	kfree(buf);
	atomic_set(&test_probe.busy, 0);
}

static void test_probe_work(struct work_struct *work)
{
	/* tests/e2e/multipath.sh matches this line: keep it. */
	pr_info("%s: link probe answered: %d\n", sessname, test_probe.err);
	test_probe_done(test_probe.permit, test_probe.buf);
}

static void test_probe_conf(void *priv, int err)
{
	test_probe.err = err;
	schedule_work(&test_probe.work);
}

static void test_probe_send(void)
{
	struct rtrs_test_msg msg;
	struct kvec vec = { .iov_base = &msg, .iov_len = sizeof(msg) };
	struct rtrs_clt_req_ops ops = { .conf_fn = test_probe_conf };
	struct scatterlist sg;
	int err;

	if (atomic_xchg(&test_probe.busy, 1))
		return;
	test_probe.buf = kmalloc(io_size, GFP_KERNEL);
	test_probe.permit = rtrs_clt_get_permit(test_clt, RTRS_IO_CON,
						RTRS_PERMIT_NOWAIT);
	if (!test_probe.buf || !test_probe.permit) {
		pr_info("%s: link probe not sent: no buffer or permit\n",
			sessname);
		if (test_probe.permit)
			rtrs_clt_put_permit(test_clt, test_probe.permit);
		kfree(test_probe.buf);
		atomic_set(&test_probe.busy, 0);
		return;
	}
	rtrs_test_msg_init(&msg, RTRS_TEST_OP_FETCH, 0, io_size);
	sg_init_one(&sg, test_probe.buf, io_size);
	err = rtrs_clt_request(READ, &ops, test_clt, test_probe.permit, &vec,
			       1, io_size, &sg, 1);
	if (err) {
		pr_info("%s: link probe not sent: %d\n", sessname, err);
		test_probe_done(test_probe.permit, test_probe.buf);
	}
}

static void test_link_ev(void *priv, enum rtrs_clt_link_ev ev)
{
	pr_info("%s: link event %s\n", sessname,
		ev == RTRS_CLT_LINK_EV_RECONNECTED ? "reconnected" :
						     "disconnected");
	if (ev == RTRS_CLT_LINK_EV_RECONNECTED)
		test_probe_send();
}

static int __init rtrs_test_clt_init(void)
{
	struct rtrs_clt_ops ops = { .link_ev = test_link_ev };

	if (!threads || threads > TEST_MAX_THREADS || !io_size ||
	    io_size > SZ_128K || !store_kb ||
	    store_kb > RTRS_TEST_STORE_SIZE / SZ_1K)
		return -EINVAL;
	INIT_WORK(&test_probe.work, test_probe_work);
	test_clt = rtrs_test_clt_open(&ops, sessname, paths, port,
				      TEST_MAX_PATHS, max_reconnect_attempts);
	return PTR_ERR_OR_ZERO(test_clt);
}

static void __exit rtrs_test_clt_exit(void)
{
	mutex_lock(&test_run_mutex);
	test_stop();
	mutex_unlock(&test_run_mutex);
	rtrs_clt_close(test_clt);
	/* Every conf_fn ran by now; its work may still be pending. */
	flush_work(&test_probe.work);
}

module_init(rtrs_test_clt_init);
module_exit(rtrs_test_clt_exit);

MODULE_DESCRIPTION("rtrs test client: verified IO over a session");
MODULE_LICENSE("GPL");
