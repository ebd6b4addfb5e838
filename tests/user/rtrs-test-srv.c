// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs test server: a user of the server API that serves the test client's
 * IOs against an in-memory store (see rtrs-test.h).  It uses only rtrs.h,
 * so it runs on top of this project's rtrs-server.ko and, built the same
 * way, on top of mainline's.
 *
 * Load with "port=N" to listen elsewhere than RTRS_TEST_PORT.  Counters of
 * what it served are in /sys/module/rtrs_test_srv/parameters/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "rtrs.h"
#include "rtrs-test.h"

static ushort port = RTRS_TEST_PORT;
module_param(port, ushort, 0444);
MODULE_PARM_DESC(port, "port to listen on (default 1234)");

static atomic_t ios_served = ATOMIC_INIT(0);
static atomic_t sessions_connected = ATOMIC_INIT(0);

static int test_counter_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(kp->arg));
}

static const struct kernel_param_ops test_counter_ops = {
	.get = test_counter_get,
};

module_param_cb(ios_served, &test_counter_ops, &ios_served, 0444);
MODULE_PARM_DESC(ios_served, "IOs responded to so far");
module_param_cb(sessions_connected, &test_counter_ops, &sessions_connected,
		0444);
MODULE_PARM_DESC(sessions_connected, "sessions connected now");

static atomic_t ios_outside = ATOMIC_INIT(0);
module_param_cb(ios_outside_session, &test_counter_ops, &ios_outside, 0444);
MODULE_PARM_DESC(ios_outside_session,
		 "requests that came without the session's private pointer");

static uint connect_delay_ms;
module_param(connect_delay_ms, uint, 0644);
MODULE_PARM_DESC(connect_delay_ms,
		 "time the CONNECTED event takes, to hold a path in set-up");

static uint late_ms = 5000;
module_param(late_ms, uint, 0644);
MODULE_PARM_DESC(late_ms,
		 "how long a LATE write is held before its data is stored");

static uint gather;
module_param(gather, uint, 0644);
MODULE_PARM_DESC(gather,
		 "hold every request until this many are held, then respond to all in one go, as a disk completing a batch (at most 1 s late); 0: respond at once (default)");

static atomic_t ios_late = ATOMIC_INIT(0);
module_param_cb(ios_late, &test_counter_ops, &ios_late, 0444);
MODULE_PARM_DESC(ios_late, "LATE writes held, then stored from their chunk");

static atomic_t ios_clobbered = ATOMIC_INIT(0);
module_param_cb(ios_clobbered, &test_counter_ops, &ios_clobbered, 0444);
MODULE_PARM_DESC(ios_clobbered,
		 "LATE writes whose chunk changed while they were held");

static atomic_t held_now = ATOMIC_INIT(0);
module_param_cb(held_now, &test_counter_ops, &held_now, 0444);
MODULE_PARM_DESC(held_now, "requests held now");

static struct rtrs_srv_ctx *test_ctx;
static u8 *test_store;

/* Check the user message; return its op, or a negative errno. */
static int test_msg_check(const void *usr, size_t usrlen)
{
	const struct rtrs_test_msg *msg = usr;

	if (usrlen < sizeof(*msg) || le32_to_cpu(msg->magic) != RTRS_TEST_MAGIC)
		return -EPROTO;
	if (le32_to_cpu(msg->usr_len) != usrlen)
		return -EBADMSG;
	if (rtrs_test_csum((const u8 *)usr + sizeof(*msg), usrlen - sizeof(*msg)) !=
	    le32_to_cpu(msg->usr_csum))
		return -EBADMSG;
	return le32_to_cpu(msg->op);
}

/* Is [off, off + len) inside the store, and is len what the IO carries? */
static bool test_range_ok(const struct rtrs_test_msg *msg, size_t datalen)
{
	u64 off = le64_to_cpu(msg->off);
	u32 len = le32_to_cpu(msg->len);

	return len == datalen && off <= RTRS_TEST_STORE_SIZE &&
	       len <= RTRS_TEST_STORE_SIZE - off;
}

static int test_serve(const struct rtrs_test_msg *msg, int op, void *data,
		      size_t datalen)
{
	switch (op) {
	case RTRS_TEST_OP_STORE:
		if (!test_range_ok(msg, datalen))
			return -ERANGE;
		memcpy(test_store + le64_to_cpu(msg->off), data, datalen);
		return 0;
	case RTRS_TEST_OP_FETCH:
		if (!test_range_ok(msg, datalen))
			return -ERANGE;
		memcpy(data, test_store + le64_to_cpu(msg->off), datalen);
		return 0;
	case RTRS_TEST_OP_LATE:
		/* Held: test_late() stores it when it responds. */
		return test_range_ok(msg, datalen) ? 0 : -ERANGE;
	case RTRS_TEST_OP_FAIL:
	case RTRS_TEST_OP_HOLD:
		return -(int)le32_to_cpu(msg->err);
	default:
		return -EOPNOTSUPP;
	}
}

/*
 * Requests of RTRS_TEST_OP_HOLD and RTRS_TEST_OP_LATE wait on a list
 * until one work item responds to them when they are due; a LATE one is
 * stored from its chunk first.  Closing a path waits for the responses to
 * its requests, so the work goes on until rtrs_srv_close() has returned.
 */
struct test_held {
	struct list_head	entry;
	struct rtrs_srv_op	*id;
	int			err;
	unsigned long		due;
	const void		*data;
	void			*copy;
	u64			off;
	u32			len;
};

static LIST_HEAD(test_held_list);
static DEFINE_SPINLOCK(test_held_lock);

static void test_held_respond(struct work_struct *work);
static DECLARE_DELAYED_WORK(test_held_work, test_held_respond);

/* As many requests are held as gather asks: respond to all of them. */
static bool test_gathered(void)
{
	uint n = READ_ONCE(gather);

	return n && atomic_read(&held_now) >= n;
}

/*
 * Run the work when the first held request is due, or at once when the
 * requests gathered.  Under the lock.
 */
static void test_held_rearm(void)
{
	unsigned long next = 0;
	struct test_held *h;
	bool any = false;

	if (test_gathered()) {
		mod_delayed_work(system_wq, &test_held_work, 0);
		return;
	}

	list_for_each_entry(h, &test_held_list, entry) {
		if (!any || time_before(h->due, next))
			next = h->due;
		any = true;
	}
	if (any)
		mod_delayed_work(system_wq, &test_held_work,
				 time_before(jiffies, next) ? next - jiffies : 0);
}

static void test_held_respond(struct work_struct *work)
{
	struct test_held *h, *tmp;
	LIST_HEAD(due);

	spin_lock_irq(&test_held_lock);
	if (test_gathered())
		list_splice_tail_init(&test_held_list, &due);
	list_for_each_entry_safe(h, tmp, &test_held_list, entry)
		if (!time_before(jiffies, h->due))
			list_move_tail(&h->entry, &due);
	spin_unlock_irq(&test_held_lock);

	list_for_each_entry_safe(h, tmp, &due, entry) {
		/* The chunk holds whatever the client put there by now. */
		if (h->data) {
			if (memcmp(h->copy, h->data, h->len)) {
				atomic_inc(&ios_clobbered);
				pr_err("LATE write at %llu: its chunk changed while it was held\n",
				       h->off);
			}
			memcpy(test_store + h->off, h->data, h->len);
			atomic_inc(&ios_late);
		}
		atomic_inc(&ios_served);
		atomic_dec(&held_now);
		rtrs_srv_resp_rdma(h->id, h->err);
		kfree(h->copy);
		kfree(h);
	}
	spin_lock_irq(&test_held_lock);
	test_held_rearm();
	spin_unlock_irq(&test_held_lock);
}

/*
 * The last LATE writes held, by offset and checksum of their data: one
 * that comes again is the same write sent over another path.  Under
 * test_held_lock.
 */
#define TEST_LATE_SEEN	64
static struct {
	u64	off;
	u32	csum;
	bool	used;
} test_late_seen[TEST_LATE_SEEN];
static unsigned int test_late_next;

/* Was this LATE write held before?  If not, remember it. */
static bool test_late_again(u64 off, const void *data, u32 len)
{
	u32 csum = rtrs_test_csum(data, len);
	unsigned int i;

	for (i = 0; i < TEST_LATE_SEEN; i++)
		if (test_late_seen[i].used && test_late_seen[i].off == off &&
		    test_late_seen[i].csum == csum)
			return true;
	test_late_seen[test_late_next].off = off;
	test_late_seen[test_late_next].csum = csum;
	test_late_seen[test_late_next].used = true;
	test_late_next = (test_late_next + 1) % TEST_LATE_SEEN;
	return false;
}

/*
 * Respond to @id with @err @hold_ms from now, storing @len bytes of @data
 * at @off first when @data is set; false: respond to it now.
 */
static bool test_hold(struct rtrs_srv_op *id, int err, unsigned int hold_ms,
		      const void *data, u64 off, u32 len)
{
	unsigned long hold = msecs_to_jiffies(hold_ms), flags;
	struct test_held *h;

	h = kmalloc(sizeof(*h), GFP_ATOMIC);
	if (!h)
		return false;
	*h = (struct test_held) {
		.id = id, .err = err, .data = data, .off = off, .len = len,
	};
	/* What the chunk holds now, to tell whether it changes meanwhile. */
	if (data) {
		h->copy = kmemdup(data, len, GFP_ATOMIC);
		if (!h->copy) {
			kfree(h);
			return false;
		}
	}
	spin_lock_irqsave(&test_held_lock, flags);
	if (data && test_late_again(off, data, len)) {
		spin_unlock_irqrestore(&test_held_lock, flags);
		kfree(h->copy);
		kfree(h);
		return false;
	}
	h->due = jiffies + hold;
	atomic_inc(&held_now);
	list_add_tail(&h->entry, &test_held_list);
	test_held_rearm();
	spin_unlock_irqrestore(&test_held_lock, flags);
	return true;
}

static int test_rdma_ev(void *priv, struct rtrs_srv_op *id, void *data,
			size_t datalen, const void *usr, size_t usrlen)
{
	const struct rtrs_test_msg *msg = usr;
	int op = test_msg_check(usr, usrlen);
	int err = op < 0 ? op : test_serve(usr, op, data, datalen);

	/* Set at CONNECTED: a request without it came outside the session. */
	if (priv != test_store)
		atomic_inc(&ios_outside);
	if (!err && op == RTRS_TEST_OP_LATE) {
		if (test_hold(id, 0, READ_ONCE(late_ms), data,
			      le64_to_cpu(msg->off), datalen))
			return 0;
		/* Sent again: the first copy was held. */
		memcpy(test_store + le64_to_cpu(msg->off), data, datalen);
	}
	if ((op == RTRS_TEST_OP_HOLD || READ_ONCE(gather)) &&
	    test_hold(id, err, RTRS_TEST_HOLD_MS, NULL, 0, 0))
		return 0;
	atomic_inc(&ios_served);
	rtrs_srv_resp_rdma(id, err);
	return 0;
}

static int test_link_ev(struct rtrs_srv_sess *sess, enum rtrs_srv_link_ev ev,
			void *priv)
{
	char name[NAME_MAX];

	switch (ev) {
	case RTRS_SRV_LINK_EV_CONNECTED:
		msleep(READ_ONCE(connect_delay_ms));
		if (rtrs_srv_get_path_name(sess, name, sizeof(name)))
			strscpy(name, "?", sizeof(name));
		pr_info("session %s connected, queue depth %d\n", name,
			rtrs_srv_get_queue_depth(sess));
		rtrs_srv_set_sess_priv(sess, test_store);
		atomic_inc(&sessions_connected);
		break;
	case RTRS_SRV_LINK_EV_DISCONNECTED:
		atomic_dec(&sessions_connected);
		break;
	}
	return 0;
}

static struct rtrs_srv_ops test_ops = {
	.rdma_ev = test_rdma_ev,
	.link_ev = test_link_ev,
};

static int __init rtrs_test_srv_init(void)
{
	test_store = vzalloc(RTRS_TEST_STORE_SIZE);
	if (!test_store)
		return -ENOMEM;

	test_ctx = rtrs_srv_open(&test_ops, port);
	if (IS_ERR(test_ctx)) {
		vfree(test_store);
		return PTR_ERR(test_ctx);
	}
	pr_info("listening on port %u\n", port);
	return 0;
}

static void __exit rtrs_test_srv_exit(void)
{
	/* Responds to every held request: its close waits for them. */
	rtrs_srv_close(test_ctx);
	cancel_delayed_work_sync(&test_held_work);
	vfree(test_store);
}

module_init(rtrs_test_srv_init);
module_exit(rtrs_test_srv_exit);

MODULE_DESCRIPTION("rtrs test server: serves the test client's IOs");
MODULE_LICENSE("GPL");
