// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs benchmark client: opens one session to rtrs-bench-srv when loaded;
 * each write of 1 to "run" measures one point: READs or WRITEs of io_size
 * bytes, queue_depth of them in flight, for runtime_ms milliseconds.  The
 * write returns when the point is measured; "result" then holds one line:
 *
 *   ops=N errors=N elapsed_ns=N iops=N kib_s=N p50_ns=N p99_ns=N
 *
 * Submission is asynchronous: queue_depth IOs are started, and each
 * completion starts the next IO from its own callback, as a block driver
 * does from its completion path, so no thread sleeps on an IO.
 *
 *   insmod rtrs-bench-clt.ko paths=ip:192.0.2.1@ip:192.0.2.2 [port=1236]
 *   echo write > /sys/module/rtrs_bench_clt/parameters/dir
 *   echo 4096 > /sys/module/rtrs_bench_clt/parameters/io_size
 *   echo 32 > /sys/module/rtrs_bench_clt/parameters/queue_depth
 *   echo 1 > /sys/module/rtrs_bench_clt/parameters/run
 *   cat /sys/module/rtrs_bench_clt/parameters/result
 *
 * "max_io_size" says how large an IO the session takes.
 *
 * It uses only rtrs.h: the same source builds against this project's
 * header and mainline's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>

#include "rtrs.h"
#include "rtrs-bench.h"
#include "../rtrs-test-paths.h"

#define BENCH_MAX_PATHS		8
#define BENCH_MAX_QD		512
#define BENCH_MAX_SAMPLES	BIT(21)

static char *paths;
module_param(paths, charp, 0444);
MODULE_PARM_DESC(paths, "comma-separated paths, each [src@]dst");

static char *sessname = "rtrs-bench-clt";
module_param(sessname, charp, 0444);
MODULE_PARM_DESC(sessname, "session name (default: rtrs-bench-clt)");

static ushort port = RTRS_BENCH_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "server port (default: 1236)");

static uint io_size = SZ_4K;
module_param(io_size, uint, 0644);
MODULE_PARM_DESC(io_size, "bytes per IO, up to the session's largest (default: 4096)");

static uint queue_depth = 1;
module_param(queue_depth, uint, 0644);
MODULE_PARM_DESC(queue_depth, "IOs in flight, 1 to 512 (default: 1)");

static uint runtime_ms = 5000;
module_param(runtime_ms, uint, 0644);
MODULE_PARM_DESC(runtime_ms, "how long a point runs, in ms (default: 5000)");

/* READ or WRITE, what the next point issues. */
static int bench_dir = READ;

static int bench_dir_set(const char *val, const struct kernel_param *kp)
{
	if (sysfs_streq(val, "read"))
		bench_dir = READ;
	else if (sysfs_streq(val, "write"))
		bench_dir = WRITE;
	else
		return -EINVAL;
	return 0;
}

static int bench_dir_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", bench_dir == WRITE ? "write" : "read");
}

static const struct kernel_param_ops bench_dir_ops = {
	.set	= bench_dir_set,
	.get	= bench_dir_get,
};
module_param_cb(dir, &bench_dir_ops, NULL, 0644);
MODULE_PARM_DESC(dir, "read or write (default: read)");

static struct rtrs_clt_sess *bench_clt;

/* The result of the last point, one line; empty before the first. */
static char bench_result[160];

/**
 * struct bench_slot - one IO in flight, over and over
 * @run: the point it belongs to
 * @permit: the permit of the IO in flight
 * @ops: completion callback and @priv (the slot)
 * @msg: user message of the IO
 * @vec: @msg as a kvec
 * @sg: @buf as a one-entry scatterlist
 * @buf: data of the IO
 * @start_ns: when the IO in flight was issued
 */
struct bench_slot {
	struct bench_run	*run;
	struct rtrs_permit	*permit;
	struct rtrs_clt_req_ops	ops;
	struct rtrs_bench_msg	msg;
	struct kvec		vec;
	struct scatterlist	sg;
	void			*buf;
	u64			start_ns;
};

/**
 * struct bench_run - one point being measured
 * @dir: READ or WRITE
 * @io_size: bytes per IO
 * @nr_slots: IOs in flight
 * @deadline_ns: no IO is issued from then on
 * @start_ns: when the first IO was issued
 * @end_ns: when the last IO completed
 * @inflight: slots with an IO in flight, plus one while they are started
 * @done: IOs that completed without error
 * @errors: IOs that failed or could not be issued
 * @nr_lat: latencies recorded in @lat (may exceed its size)
 * @lat: latency of each IO in ns, up to %BENCH_MAX_SAMPLES of them
 * @finished: completed when @inflight drops to zero
 * @slots: the IOs
 */
struct bench_run {
	int			dir;
	u32			io_size;
	u32			nr_slots;
	u64			deadline_ns;
	u64			start_ns;
	u64			end_ns;
	atomic_t		inflight;
	atomic64_t		done;
	atomic64_t		errors;
	atomic_t		nr_lat;
	u32			*lat;
	struct completion	finished;
	struct bench_slot	slots[];
};

static void bench_conf(void *priv, int err);

/* A slot is idle: one less in flight; the last one ends the point. */
static void bench_slot_idle(struct bench_run *run)
{
	if (atomic_dec_and_test(&run->inflight)) {
		run->end_ns = ktime_get_ns();
		complete(&run->finished);
	}
}

/*
 * Issue the slot's next IO unless the point is over.  @wait says whether
 * it may sleep for a permit.  Return: true when an IO is in flight.
 */
static bool bench_issue(struct bench_slot *slot, bool wait)
{
	struct bench_run *run = slot->run;
	int err;

	if (ktime_get_ns() >= run->deadline_ns)
		return false;
	slot->permit = rtrs_clt_get_permit(bench_clt, RTRS_IO_CON,
					   wait ? RTRS_PERMIT_WAIT :
						  RTRS_PERMIT_NOWAIT);
	if (!slot->permit) {
		atomic64_inc(&run->errors);
		return false;
	}
	slot->start_ns = ktime_get_ns();
	err = rtrs_clt_request(run->dir, &slot->ops, bench_clt, slot->permit,
			       &slot->vec, 1, run->io_size, &slot->sg, 1);
	if (err) {
		rtrs_clt_put_permit(bench_clt, slot->permit);
		atomic64_inc(&run->errors);
		pr_err_ratelimited("request failed: %d\n", err);
		return false;
	}
	return true;
}

/* An IO completed: count it, and issue the slot's next one. */
static void bench_conf(void *priv, int err)
{
	struct bench_slot *slot = priv;
	struct bench_run *run = slot->run;
	u64 lat = ktime_get_ns() - slot->start_ns;
	int i;

	rtrs_clt_put_permit(bench_clt, slot->permit);
	if (err) {
		atomic64_inc(&run->errors);
		pr_err_ratelimited("IO failed: %d\n", err);
	} else {
		atomic64_inc(&run->done);
		i = atomic_inc_return(&run->nr_lat) - 1;
		if (i < BENCH_MAX_SAMPLES)
			run->lat[i] = min_t(u64, lat, U32_MAX);
	}
	if (!bench_issue(slot, false))
		bench_slot_idle(run);
}

static void bench_run_free(struct bench_run *run)
{
	u32 i;

	for (i = 0; i < run->nr_slots; i++)
		kfree(run->slots[i].buf);
	vfree(run->lat);
	kfree(run);
}

static struct bench_run *bench_run_alloc(int dir, u32 size, u32 qd)
{
	struct bench_run *run;
	struct bench_slot *slot;
	u32 i;

	run = kzalloc(struct_size(run, slots, qd), GFP_KERNEL);
	if (!run)
		return NULL;
	run->dir = dir;
	run->io_size = size;
	run->nr_slots = qd;
	atomic_set(&run->inflight, 1);
	init_completion(&run->finished);
	run->lat = vmalloc(array_size(BENCH_MAX_SAMPLES, sizeof(*run->lat)));
	if (!run->lat)
		goto err;
	for (i = 0; i < qd; i++) {
		slot = &run->slots[i];
		slot->run = run;
		slot->buf = kzalloc(size, GFP_KERNEL);
		if (!slot->buf)
			goto err;
		sg_init_one(&slot->sg, slot->buf, size);
		slot->msg.magic = cpu_to_le32(RTRS_BENCH_MAGIC);
		slot->msg.len = cpu_to_le32(size);
		slot->vec.iov_base = &slot->msg;
		slot->vec.iov_len = sizeof(slot->msg);
		slot->ops.priv = slot;
		slot->ops.conf_fn = bench_conf;
	}
	return run;
err:
	bench_run_free(run);
	return NULL;
}

static int bench_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* The figures of a finished point, into bench_result. */
static void bench_report(struct bench_run *run)
{
	u64 done = atomic64_read(&run->done);
	u64 ns = max_t(u64, run->end_ns - run->start_ns, 1);
	u32 n = min_t(u32, atomic_read(&run->nr_lat), BENCH_MAX_SAMPLES);
	u32 p50 = 0, p99 = 0;

	if (n) {
		sort(run->lat, n, sizeof(*run->lat), bench_cmp_u32, NULL);
		p50 = run->lat[(n - 1) / 2];
		p99 = run->lat[DIV_ROUND_UP(n * 99ULL, 100) - 1];
	}
	scnprintf(bench_result, sizeof(bench_result),
		  "ops=%llu errors=%lld elapsed_ns=%llu iops=%llu kib_s=%llu p50_ns=%u p99_ns=%u",
		  done, atomic64_read(&run->errors), ns,
		  div64_u64(done * NSEC_PER_SEC, ns),
		  div64_u64(done * run->io_size * (NSEC_PER_SEC / SZ_1K), ns),
		  p50, p99);
	pr_info("%s %u B qd %u: %s\n", run->dir == WRITE ? "write" : "read",
		run->io_size, run->nr_slots, bench_result);
}

/* Measure one point with the current parameters. */
static int bench_point(void)
{
	struct rtrs_attrs attr;
	struct bench_run *run;
	u32 i;
	int err;

	err = rtrs_clt_query(bench_clt, &attr);
	if (err)
		return err;
	if (!io_size || io_size > attr.max_io_size) {
		pr_err("io_size %u: the session takes 1 to %u bytes\n",
		       io_size, attr.max_io_size);
		return -EINVAL;
	}
	if (!queue_depth || queue_depth > min_t(u32, attr.queue_depth,
						BENCH_MAX_QD)) {
		pr_err("queue_depth %u: 1 to %u\n", queue_depth,
		       min_t(u32, attr.queue_depth, BENCH_MAX_QD));
		return -EINVAL;
	}
	run = bench_run_alloc(bench_dir, io_size, queue_depth);
	if (!run)
		return -ENOMEM;
	run->start_ns = ktime_get_ns();
	run->deadline_ns = run->start_ns + (u64)runtime_ms * NSEC_PER_MSEC;
	for (i = 0; i < run->nr_slots; i++) {
		atomic_inc(&run->inflight);
		if (!bench_issue(&run->slots[i], true))
			atomic_dec(&run->inflight);
	}
	bench_slot_idle(run);
	wait_for_completion(&run->finished);
	bench_report(run);
	err = atomic64_read(&run->errors) ? -EIO : 0;
	bench_run_free(run);
	return err;
}

/* Points are measured one at a time. */
static DEFINE_MUTEX(bench_mutex);

static int bench_run_set(const char *val, const struct kernel_param *kp)
{
	bool run;
	int err;

	err = kstrtobool(val, &run);
	if (err || !run)
		return err;
	mutex_lock(&bench_mutex);
	err = bench_point();
	mutex_unlock(&bench_mutex);
	return err;
}

static const struct kernel_param_ops bench_run_ops = {
	.set	= bench_run_set,
};
module_param_cb(run, &bench_run_ops, NULL, 0200);
MODULE_PARM_DESC(run, "write 1 to measure a point; returns when it is done");

static int bench_result_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", bench_result);
}

static const struct kernel_param_ops bench_result_ops = {
	.get	= bench_result_get,
};
module_param_cb(result, &bench_result_ops, NULL, 0444);
MODULE_PARM_DESC(result, "figures of the last point, name=value pairs");

static int bench_max_io_size_get(char *buf, const struct kernel_param *kp)
{
	struct rtrs_attrs attr;
	int err;

	if (!bench_clt)
		return -ENODEV;
	err = rtrs_clt_query(bench_clt, &attr);
	if (err)
		return err;
	return sysfs_emit(buf, "%u\n", attr.max_io_size);
}

static const struct kernel_param_ops bench_max_io_size_ops = {
	.get	= bench_max_io_size_get,
};
module_param_cb(max_io_size, &bench_max_io_size_ops, NULL, 0444);
MODULE_PARM_DESC(max_io_size, "the largest IO the session takes, in bytes");

static void bench_link_ev(void *priv, enum rtrs_clt_link_ev ev)
{
	pr_info("%s: link event %s\n", sessname,
		ev == RTRS_CLT_LINK_EV_RECONNECTED ? "reconnected" :
						     "disconnected");
}

static int __init rtrs_bench_clt_init(void)
{
	struct rtrs_clt_ops ops = { .link_ev = bench_link_ev };

	bench_clt = rtrs_test_clt_open(&ops, sessname, paths, port,
				       BENCH_MAX_PATHS, -1);
	return PTR_ERR_OR_ZERO(bench_clt);
}

static void __exit rtrs_bench_clt_exit(void)
{
	rtrs_clt_close(bench_clt);
}

module_init(rtrs_bench_clt_init);
module_exit(rtrs_bench_clt_exit);

MODULE_DESCRIPTION("rtrs benchmark client: IOs per second and latency");
MODULE_LICENSE("GPL");
