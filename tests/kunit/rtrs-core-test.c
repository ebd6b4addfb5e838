// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the rtrs core on a real RDMA device.
 *
 * The scenario puts a soft-RoCE device on a netdev that owns 192.0.2.1
 * before it loads this suite.  Each case binds an rdma_cm_id to that
 * address, which gives it the device, and the exit hook tears down whatever
 * the case made, so a failed assertion leaks nothing: kmemleak and KASAN in
 * the guest watch the device pool, the IUs and the CQ/QP paths.
 *
 * A QP made by rdma_create_qp() on a bound, unconnected id sits in INIT:
 * it takes receives (flushed when it is moved to ERR) but refuses sends,
 * which is how the heartbeat cases reach the send-failure path without a
 * peer.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rtrs-pri.h"

/* The address of the RDMA device the scenario sets up: 192.0.2.1. */
#define TEST_ADDR	0xc0000201

struct loopback;
static void lb_teardown(struct loopback *lb);

struct core_test {
	struct rdma_cm_id	*cm_id;
	struct ib_device	*ib_dev;
	struct rtrs_ib_dev_pool	pool;
	struct rtrs_ib_dev	*dev;
	struct rtrs_path	path;
	struct rtrs_con		con;
	struct rtrs_con		*cons[1];
	struct rtrs_iu		*ius;
	u32			iu_cnt;
	bool			hb_inited;
	struct completion	hb_failed;
	struct rtrs_con		*hb_failed_con;
	struct ib_cqe		hb_cqe;
	struct loopback		*lb;
};

static int core_test_cm_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *ev)
{
	return 0;
}

static struct rdma_cm_id *core_test_bind(struct kunit *test)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(TEST_ADDR),
	};
	struct rdma_cm_id *id;
	int err;

	id = rdma_create_id(&init_net, core_test_cm_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id)) {
		KUNIT_FAIL(test, "rdma_create_id: %ld", PTR_ERR(id));
		return NULL;
	}
	err = rdma_bind_addr(id, (struct sockaddr *)&sin);
	if (err || !id->device) {
		KUNIT_FAIL(test, "binding to 192.0.2.1: %d (is rxe set up?)",
			   err);
		rdma_destroy_id(id);
		return NULL;
	}
	return id;
}

static int core_test_init(struct kunit *test)
{
	struct core_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	rtrs_ib_dev_pool_init(&t->pool, 0);
	init_completion(&t->hb_failed);
	test->priv = t;

	t->cm_id = core_test_bind(test);
	if (!t->cm_id)
		return -ENODEV;
	t->ib_dev = t->cm_id->device;

	t->cons[0] = &t->con;
	t->path.con = t->cons;
	t->path.con_num = 1;
	t->path.irq_con_num = 1;
	t->con.path = &t->path;
	t->con.cm_id = t->cm_id;
	return 0;
}

static void core_test_exit(struct kunit *test)
{
	struct core_test *t = test->priv;

	if (!t)
		return;
	if (t->lb)
		lb_teardown(t->lb);
	if (t->hb_inited)
		rtrs_stop_hb(&t->path);
	rtrs_cq_qp_destroy(&t->con);
	rtrs_iu_free(t->ius, t->ib_dev, t->iu_cnt);
	if (t->dev)
		rtrs_ib_dev_put(t->dev);
	rtrs_ib_dev_pool_destroy(&t->pool);
	if (t->cm_id)
		rdma_destroy_id(t->cm_id);
}

/* Take the device of the bound id from the case's pool, into the path. */
static void core_test_get_dev(struct kunit *test)
{
	struct core_test *t = test->priv;
	struct rtrs_ib_dev *dev;

	dev = rtrs_ib_dev_get(&t->pool, t->ib_dev);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(dev), "rtrs_ib_dev_get: %ld",
			       PTR_ERR(dev));
	t->dev = dev;
	t->path.dev = dev;
}

static void core_test_create(struct kunit *test, enum ib_poll_context ctx)
{
	struct core_test *t = test->priv;
	int err;

	core_test_get_dev(test);
	t->con.signal_interval = 4;
	err = rtrs_cq_qp_create(&t->path, &t->con, 1, -1, 64, 16, 16, NULL, ctx);
	KUNIT_ASSERT_EQ(test, err, 0);
}

/*
 * Device pool.
 */

static void dev_get_twice_shares_one_entry(struct kunit *test)
{
	struct core_test *t = test->priv;
	struct rtrs_ib_dev *again;

	core_test_get_dev(test);
	KUNIT_EXPECT_PTR_EQ(test, t->dev->ib_dev, t->ib_dev);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t->dev->ib_pd);
	KUNIT_EXPECT_PTR_EQ(test, t->dev->ib_pd->device, t->ib_dev);
	KUNIT_EXPECT_PTR_EQ(test, t->dev->pool, &t->pool);
	KUNIT_EXPECT_EQ(test, kref_read(&t->dev->ref), 1);

	again = rtrs_ib_dev_get(&t->pool, t->ib_dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(again));
	KUNIT_EXPECT_PTR_EQ(test, again, t->dev);
	KUNIT_EXPECT_EQ(test, kref_read(&t->dev->ref), 2);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&t->pool.devs));

	rtrs_ib_dev_put(again);
	KUNIT_EXPECT_EQ(test, kref_read(&t->dev->ref), 1);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&t->pool.devs));
}

static void dev_put_last_leaves_pool_empty(struct kunit *test)
{
	struct core_test *t = test->priv;

	core_test_get_dev(test);
	rtrs_ib_dev_put(t->dev);
	t->dev = NULL;
	KUNIT_EXPECT_TRUE(test, list_empty(&t->pool.devs));

	/* A get after the last put starts a new entry with a new PD. */
	core_test_get_dev(test);
	KUNIT_EXPECT_EQ(test, kref_read(&t->dev->ref), 1);
	KUNIT_EXPECT_TRUE(test, list_is_singular(&t->pool.devs));
}

static void dev_pools_are_distinct(struct kunit *test)
{
	struct core_test *t = test->priv;
	struct rtrs_ib_dev_pool other;
	struct rtrs_ib_dev *dev;

	core_test_get_dev(test);
	rtrs_ib_dev_pool_init(&other, IB_PD_UNSAFE_GLOBAL_RKEY);
	dev = rtrs_ib_dev_get(&other, t->ib_dev);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dev));

	KUNIT_EXPECT_PTR_NE(test, dev, t->dev);
	KUNIT_EXPECT_PTR_NE(test, dev->ib_pd, t->dev->ib_pd);
	KUNIT_EXPECT_PTR_EQ(test, dev->pool, &other);
	KUNIT_EXPECT_EQ(test, kref_read(&t->dev->ref), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&dev->ref), 1);
	/* Each pool's PD is made with that pool's flags. */
	KUNIT_EXPECT_EQ(test, t->dev->ib_pd->flags, 0);
	KUNIT_EXPECT_EQ(test, dev->ib_pd->flags, IB_PD_UNSAFE_GLOBAL_RKEY);

	rtrs_ib_dev_put(dev);
	KUNIT_EXPECT_TRUE(test, list_empty(&other.devs));
	KUNIT_EXPECT_TRUE(test, list_is_singular(&t->pool.devs));
	rtrs_ib_dev_pool_destroy(&other);
}

/*
 * Information units.
 */

static void core_test_done(struct ib_cq *cq, struct ib_wc *wc)
{
}

static const size_t iu_sizes[] = { 1, 64, 4096, 4097, 65536 };

static void iu_alloc_maps_every_buffer(struct kunit *test)
{
	static const enum dma_data_direction dirs[] = {
		DMA_TO_DEVICE, DMA_FROM_DEVICE, DMA_BIDIRECTIONAL,
	};
	struct core_test *t = test->priv;
	unsigned int s, i;
	struct rtrs_iu *iu;

	for (s = 0; s < ARRAY_SIZE(iu_sizes); s++) {
		t->iu_cnt = 5;
		t->ius = rtrs_iu_alloc(t->iu_cnt, iu_sizes[s], GFP_KERNEL,
				       t->ib_dev, dirs[s % ARRAY_SIZE(dirs)],
				       core_test_done);
		KUNIT_ASSERT_NOT_NULL_MSG(test, t->ius, "size %zu",
					  iu_sizes[s]);
		for (i = 0; i < t->iu_cnt; i++) {
			iu = &t->ius[i];
			KUNIT_EXPECT_NOT_NULL(test, iu->buf);
			KUNIT_EXPECT_FALSE(test,
					   ib_dma_mapping_error(t->ib_dev,
								iu->dma_addr));
			KUNIT_EXPECT_EQ(test, iu->size, iu_sizes[s]);
			KUNIT_EXPECT_EQ(test, iu->direction,
					dirs[s % ARRAY_SIZE(dirs)]);
			KUNIT_EXPECT_TRUE(test, iu->cqe.done == core_test_done);
			KUNIT_EXPECT_NULL(test,
					  memchr_inv(iu->buf, 0, iu->size));
			if (i)
				KUNIT_EXPECT_PTR_NE(test, iu->buf,
						    t->ius[i - 1].buf);
			/* KASAN checks the whole buffer is ours. */
			memset(iu->buf, 0xa5, iu->size);
		}
		rtrs_iu_free(t->ius, t->ib_dev, t->iu_cnt);
		t->ius = NULL;
	}
}

static void iu_alloc_refuses_and_unwinds(struct kunit *test)
{
	struct core_test *t = test->priv;

	KUNIT_EXPECT_NULL(test, rtrs_iu_alloc(0, 64, GFP_KERNEL, t->ib_dev,
					      DMA_TO_DEVICE, core_test_done));
	KUNIT_EXPECT_NULL(test, rtrs_iu_alloc(4, 0, GFP_KERNEL, t->ib_dev,
					      DMA_TO_DEVICE, core_test_done));
	/* The array fits, no buffer does: all of it is unwound. */
	KUNIT_EXPECT_NULL(test, rtrs_iu_alloc(4, KMALLOC_MAX_SIZE + 1,
					      GFP_KERNEL | __GFP_NOWARN,
					      t->ib_dev, DMA_TO_DEVICE,
					      core_test_done));
	rtrs_iu_free(NULL, t->ib_dev, 4);
}

/*
 * CQ and QP.
 */

static const enum ib_poll_context poll_ctxs[] = {
	IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE,
	IB_POLL_DIRECT,
};

static void poll_ctx_desc(const enum ib_poll_context *ctx, char *desc)
{
	static const char * const names[] = {
		[IB_POLL_SOFTIRQ] = "softirq",
		[IB_POLL_WORKQUEUE] = "workqueue",
		[IB_POLL_UNBOUND_WORKQUEUE] = "unbound workqueue",
		[IB_POLL_DIRECT] = "direct",
	};

	strscpy(desc, names[*ctx], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(poll_ctx, poll_ctxs, poll_ctx_desc);

static void cq_qp_create_destroy(struct kunit *test)
{
	const enum ib_poll_context *ctx = test->param_value;
	struct core_test *t = test->priv;

	core_test_create(test, *ctx);

	KUNIT_ASSERT_NOT_NULL(test, t->con.qp);
	KUNIT_ASSERT_NOT_NULL(test, t->con.cq);
	KUNIT_EXPECT_PTR_EQ(test, t->con.qp, t->cm_id->qp);
	KUNIT_EXPECT_PTR_EQ(test, t->con.path, &t->path);
	KUNIT_EXPECT_EQ(test, t->con.qp->qp_type, IB_QPT_RC);
	KUNIT_EXPECT_PTR_EQ(test, t->con.qp->pd, t->dev->ib_pd);
	KUNIT_EXPECT_PTR_EQ(test, t->con.qp->send_cq, t->con.cq);
	KUNIT_EXPECT_PTR_EQ(test, t->con.qp->recv_cq, t->con.cq);
	KUNIT_EXPECT_EQ(test, t->con.cq->poll_ctx, *ctx);
	KUNIT_EXPECT_EQ(test, t->con.poll_ctx, *ctx);
	KUNIT_EXPECT_EQ(test, t->con.nr_cqe, 64);
	KUNIT_EXPECT_GE(test, t->con.max_send_wr, 16);
	KUNIT_EXPECT_GE(test, t->con.max_recv_wr, 16);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->con.sq_wr_avail),
			t->con.max_send_wr);
	/* Only a poll queue's CQ is private to the connection. */
	KUNIT_EXPECT_EQ(test, !!t->con.cq->shared, *ctx != IB_POLL_DIRECT);
	if (*ctx == IB_POLL_DIRECT)
		KUNIT_EXPECT_EQ(test, ib_process_cq_direct(t->con.cq, 8), 0);

	rtrs_cq_qp_destroy(&t->con);
	KUNIT_EXPECT_NULL(test, t->con.qp);
	KUNIT_EXPECT_NULL(test, t->con.cq);
	KUNIT_EXPECT_NULL(test, t->cm_id->qp);
	/* A second destroy finds nothing to do. */
	rtrs_cq_qp_destroy(&t->con);
}

/*
 * Only the SGE count is clamped here: a queue of the device's max_qp_wr
 * entries is gigabytes on rxe.
 */
static void cq_qp_clamps_send_sge_to_device(struct kunit *test)
{
	struct core_test *t = test->priv;
	struct ib_qp_init_attr init_attr;
	struct ib_qp_attr attr;
	int err;

	core_test_get_dev(test);
	err = rtrs_cq_qp_create(&t->path, &t->con, U32_MAX, 0, 64, 16, 16,
				NULL, IB_POLL_SOFTIRQ);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = ib_query_qp(t->con.qp, &attr, 0, &init_attr);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_GE(test, init_attr.cap.max_send_sge, 1);
	KUNIT_EXPECT_LE(test, init_attr.cap.max_send_sge,
			t->ib_dev->attrs.max_send_sge);
	KUNIT_EXPECT_EQ(test, init_attr.cap.max_recv_sge, 1);
}

static void cq_qp_refuses_bad_cq_size(struct kunit *test)
{
	struct core_test *t = test->priv;
	int max_cqe = t->ib_dev->attrs.max_cqe;
	int err;

	core_test_get_dev(test);
	err = rtrs_cq_qp_create(&t->path, &t->con, 1, 0, 0, 16, 16,
				NULL, IB_POLL_SOFTIRQ);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	err = rtrs_cq_qp_create(&t->path, &t->con, 1, 0, max_cqe + 1, 16, 16,
				NULL, IB_POLL_DIRECT);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, t->con.cq);
	KUNIT_EXPECT_NULL(test, t->con.qp);
	rtrs_cq_qp_destroy(&t->con);
}

/*
 * Posting.
 */

#define RECV_IUS	6
#define RECV_EMPTY	3

static DECLARE_BITMAP(recv_seen, RECV_IUS);
static atomic_t recv_flushed, recv_empty_flushed, recv_bad;
static struct rtrs_iu *recv_ius;

static void recv_iu_done(struct ib_cq *cq, struct ib_wc *wc)
{
	long i = container_of(wc->wr_cqe, struct rtrs_iu, cqe) - recv_ius;

	if (wc->status != IB_WC_WR_FLUSH_ERR || i < 0 || i >= RECV_IUS ||
	    test_and_set_bit(i, recv_seen))
		atomic_inc(&recv_bad);
	else
		atomic_inc(&recv_flushed);
}

static void recv_empty_done(struct ib_cq *cq, struct ib_wc *wc)
{
	if (wc->status == IB_WC_WR_FLUSH_ERR)
		atomic_inc(&recv_empty_flushed);
	else
		atomic_inc(&recv_bad);
}

static void post_recv_completes_each_cqe(struct kunit *test)
{
	struct ib_cqe empty_cqe = { .done = recv_empty_done };
	struct core_test *t = test->priv;
	int i;

	bitmap_zero(recv_seen, RECV_IUS);
	atomic_set(&recv_flushed, 0);
	atomic_set(&recv_empty_flushed, 0);
	atomic_set(&recv_bad, 0);

	core_test_create(test, IB_POLL_SOFTIRQ);
	t->iu_cnt = RECV_IUS;
	t->ius = rtrs_iu_alloc(t->iu_cnt, 128, GFP_KERNEL, t->ib_dev,
			       DMA_FROM_DEVICE, recv_iu_done);
	KUNIT_ASSERT_NOT_NULL(test, t->ius);
	recv_ius = t->ius;

	for (i = 0; i < RECV_IUS; i++)
		KUNIT_ASSERT_EQ(test, rtrs_iu_post_recv(&t->con, &t->ius[i]),
				0);
	for (i = 0; i < RECV_EMPTY; i++)
		KUNIT_ASSERT_EQ(test, rtrs_post_recv_empty(&t->con,
							   &empty_cqe), 0);

	/* ERR flushes every posted receive to its own cqe, then drains. */
	ib_drain_rq(t->con.qp);
	KUNIT_EXPECT_EQ(test, atomic_read(&recv_flushed), RECV_IUS);
	KUNIT_EXPECT_EQ(test, atomic_read(&recv_empty_flushed), RECV_EMPTY);
	KUNIT_EXPECT_EQ(test, atomic_read(&recv_bad), 0);
	KUNIT_EXPECT_TRUE(test, bitmap_full(recv_seen, RECV_IUS));
	recv_ius = NULL;
}

/* A chain of @n send WRs in @wrs, the last one's next left NULL. */
static void build_chain(struct ib_send_wr *wrs, unsigned int n)
{
	unsigned int i;

	memset(wrs, 0, n * sizeof(*wrs));
	for (i = 0; i + 1 < n; i++)
		wrs[i].next = &wrs[i + 1];
}

static void post_send_refuses_bad_requests(struct kunit *test)
{
	struct core_test *t = test->priv;
	struct ib_sge sge[2] = {};
	struct ib_send_wr *wrs;
	u32 n;
	int err;

	core_test_create(test, IB_POLL_SOFTIRQ);
	t->iu_cnt = 1;
	t->ius = rtrs_iu_alloc(1, 64, GFP_KERNEL, t->ib_dev, DMA_TO_DEVICE,
			       core_test_done);
	KUNIT_ASSERT_NOT_NULL(test, t->ius);

	n = t->con.max_send_wr;
	wrs = kunit_kcalloc(test, n, sizeof(*wrs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wrs);

	/* With the send itself, a full queue's worth of head is too long. */
	build_chain(wrs, n);
	err = rtrs_post_rdma_write_imm_empty(&t->con, &t->hb_cqe, 0, wrs);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, wrs[n - 1].next);
	KUNIT_EXPECT_EQ(test, rtrs_iu_post_send(&t->con, t->ius, 8, wrs),
			-EINVAL);
	KUNIT_EXPECT_NULL(test, wrs[n - 1].next);

	/* Head and tail count together. */
	build_chain(wrs, n);
	wrs[n / 2 - 1].next = NULL;
	sge[0].length = 8;
	err = rtrs_iu_post_rdma_write_imm(&t->con, t->ius, sge, 1, 0, 0, 0, 0,
					  wrs, &wrs[n / 2]);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);
	KUNIT_EXPECT_NULL(test, wrs[n / 2 - 1].next);

	/* A cyclic chain is refused, not walked forever. */
	build_chain(wrs, 3);
	wrs[2].next = &wrs[0];
	err = rtrs_post_rdma_write_imm_empty(&t->con, &t->hb_cqe, 0, wrs);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);

	/* A zero-length SGE would fail the WR with a length error. */
	sge[1].length = 0;
	err = rtrs_iu_post_rdma_write_imm(&t->con, t->ius, sge, 2, 0, 0, 0, 0,
					  NULL, NULL);
	KUNIT_EXPECT_EQ(test, err, -EINVAL);

	KUNIT_EXPECT_EQ(test, rtrs_iu_post_send(&t->con, t->ius, 0, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, rtrs_iu_post_send(&t->con, t->ius, 65, NULL),
			-EINVAL);
}

/*
 * Heartbeats.
 */

/* The missed count, as a reader outside the core sees it. */
static unsigned int hb_missed(struct rtrs_path *path)
{
	return READ_ONCE(path->hb_missed_cnt);
}

static void hb_err_handler(struct rtrs_con *con)
{
	struct core_test *t = container_of(con, struct core_test, con);

	t->hb_failed_con = con;
	complete(&t->hb_failed);
}

static void core_test_init_hb(struct kunit *test, unsigned int interval_ms,
			      unsigned int missed_max)
{
	struct core_test *t = test->priv;

	rtrs_init_hb(&t->path, &t->hb_cqe, interval_ms, missed_max,
		     hb_err_handler, system_wq);
	t->hb_inited = true;
}

static void hb_missed_max_fails_the_path(struct kunit *test)
{
	struct core_test *t = test->priv;

	core_test_init_hb(test, 1, 3);
	WRITE_ONCE(t->path.hb_missed_cnt, 3);
	rtrs_start_hb(&t->path);

	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&t->hb_failed,
							    10 * HZ));
	KUNIT_EXPECT_PTR_EQ(test, t->hb_failed_con, &t->con);
	/* Nothing was sent, and the work did not come back. */
	KUNIT_EXPECT_EQ(test, hb_missed(&t->path), 3);
	KUNIT_EXPECT_EQ(test, t->path.hb_last_sent, 0);
	flush_delayed_work(&t->path.hb_dwork);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&t->path.hb_dwork));

	rtrs_stop_hb(&t->path);
	KUNIT_EXPECT_EQ(test, t->path.hb_missed_cnt, 0);
}

static void hb_below_max_sends_a_beat(struct kunit *test)
{
	struct core_test *t = test->priv;
	ktime_t before = ktime_get();
	int avail;

	/* A QP in INIT refuses the beat: that too fails the path. */
	core_test_create(test, IB_POLL_SOFTIRQ);
	avail = atomic_read(&t->con.sq_wr_avail);
	core_test_init_hb(test, 1, 3);
	WRITE_ONCE(t->path.hb_missed_cnt, 2);
	rtrs_start_hb(&t->path);

	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&t->hb_failed,
							    10 * HZ));
	KUNIT_EXPECT_PTR_EQ(test, t->hb_failed_con, &t->con);
	KUNIT_EXPECT_EQ(test, hb_missed(&t->path), 3);
	KUNIT_EXPECT_GE(test, ktime_compare(t->path.hb_last_sent, before), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->con.wr_cnt), 1);
	/* The owner of the send queue counts its slots; a beat takes none. */
	KUNIT_EXPECT_EQ(test, atomic_read(&t->con.sq_wr_avail), avail);
}

static void hb_received_resets_and_measures(struct kunit *test)
{
	struct core_test *t = test->priv;
	ktime_t latency;

	core_test_init_hb(test, 1000, 3);
	t->path.hb_last_sent = ktime_sub_ms(ktime_get(), 20);
	WRITE_ONCE(t->path.hb_missed_cnt, 2);

	/* Any traffic resets the count, but only the ack measures. */
	rtrs_hb_received(&t->path);
	KUNIT_EXPECT_EQ(test, hb_missed(&t->path), 0);
	KUNIT_EXPECT_EQ(test, ktime_to_ns(t->path.hb_cur_latency), 0);

	WRITE_ONCE(t->path.hb_missed_cnt, 1);
	rtrs_hb_ack_received(&t->path);
	KUNIT_EXPECT_EQ(test, hb_missed(&t->path), 0);
	latency = t->path.hb_cur_latency;
	KUNIT_EXPECT_GE(test, ktime_to_ms(latency), 20);
	KUNIT_EXPECT_LT(test, ktime_to_ms(latency), 20 * MSEC_PER_SEC);
}

static void hb_start_and_stop(struct kunit *test)
{
	struct core_test *t = test->priv;

	/* An interval of 0 disables heartbeats. */
	core_test_init_hb(test, 0, 3);
	rtrs_start_hb(&t->path);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&t->path.hb_dwork));

	core_test_init_hb(test, 60 * MSEC_PER_SEC, 3);
	rtrs_start_hb(&t->path);
	KUNIT_EXPECT_TRUE(test, delayed_work_pending(&t->path.hb_dwork));
	WRITE_ONCE(t->path.hb_missed_cnt, 2);
	rtrs_stop_hb(&t->path);
	KUNIT_EXPECT_FALSE(test, delayed_work_pending(&t->path.hb_dwork));
	KUNIT_EXPECT_EQ(test, t->path.hb_missed_cnt, 0);
	KUNIT_EXPECT_FALSE(test, completion_done(&t->hb_failed));
}

/*
 * Loopback: a client and a server connection on the same device, joined
 * through the RDMA CM, so that work requests really travel.  Each side
 * posts only one kind of receive at a time (a SEND needs a buffer, a WRITE
 * WITH IMMEDIATE takes any receive), in the order the peer consumes them.
 */

#define LB_IUS		16
#define LB_IU_SIZE	256
#define LB_TIMEOUT	(20 * HZ)
#define LB_CM_MS	5000

struct lb_side {
	struct rdma_cm_id	*id;
	struct rtrs_path	path;
	struct rtrs_con		con;
	struct rtrs_con		*cons[1];
	struct rtrs_ib_dev	*dev;
	struct rtrs_iu		*ius;		/* server: receive, client: send */
	struct ib_cqe		empty_cqe;	/* receives without a buffer */
	struct ib_cqe		send_cqe;	/* counted empty writes */
	struct ib_cqe		hb_cqe;		/* heartbeats and acks */
	atomic_t		sends;		/* send_cqe completions */
	atomic_t		recvs;		/* data and empty receives */
	atomic_t		hb_msgs;
	atomic_t		hb_acks;
	atomic_t		bad;		/* failed or unexpected */
	struct ib_wc		wc;		/* of the last receive */
	struct completion	recv_done;
	struct completion	send_done;	/* IU sends */
};

struct loopback {
	struct ib_device	*ib_dev;
	struct rtrs_ib_dev_pool	pool;
	struct rdma_cm_id	*listen;
	struct lb_side		srv;
	struct lb_side		clt;
	struct rtrs_iu		*target;	/* RDMA WRITE target, server */
	struct completion	up;		/* both ends established, or err */
	atomic_t		established;
	int			err;
	bool			hb_on;
	struct completion	hb_failed;
};

static struct lb_side *lb_side_of(struct ib_wc *wc)
{
	return container_of((struct rtrs_con *)wc->qp->qp_context,
			    struct lb_side, con);
}

/* Flushes of the teardown are expected; anything else failed is not. */
static bool lb_wc_ok(struct lb_side *side, struct ib_wc *wc)
{
	if (wc->status == IB_WC_SUCCESS)
		return true;
	if (wc->status != IB_WC_WR_FLUSH_ERR)
		atomic_inc(&side->bad);
	return false;
}

static void lb_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lb_side *side = lb_side_of(wc);

	if (!lb_wc_ok(side, wc))
		return;
	side->wc = *wc;
	atomic_inc(&side->recvs);
	complete(&side->recv_done);
}

static void lb_empty_recv_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lb_side *side = lb_side_of(wc);
	u32 imm;

	if (!lb_wc_ok(side, wc))
		return;
	if (!(wc->wc_flags & IB_WC_WITH_IMM)) {
		atomic_inc(&side->bad);
		return;
	}
	imm = be32_to_cpu(wc->ex.imm_data);
	if (rtrs_imm_type(imm) == RTRS_HB_MSG_IMM) {
		atomic_inc(&side->hb_msgs);
		rtrs_send_hb_ack(&side->path);
	} else if (rtrs_imm_type(imm) == RTRS_HB_ACK_IMM) {
		atomic_inc(&side->hb_acks);
		rtrs_hb_ack_received(&side->path);
	} else {
		side->wc = *wc;
		atomic_inc(&side->recvs);
		complete(&side->recv_done);
	}
	if (rtrs_post_recv_empty(&side->con, &side->empty_cqe))
		atomic_inc(&side->bad);
}

static void lb_iu_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lb_side *side = lb_side_of(wc);

	if (lb_wc_ok(side, wc))
		complete(&side->send_done);
}

static void lb_counted_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct lb_side *side = lb_side_of(wc);

	if (lb_wc_ok(side, wc))
		atomic_inc(&side->sends);
}

static void lb_hb_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	lb_wc_ok(lb_side_of(wc), wc);
}

static void lb_fail(struct loopback *lb, int err)
{
	WRITE_ONCE(lb->err, err);
	complete(&lb->up);
}

static void lb_side_init(struct lb_side *side)
{
	side->cons[0] = &side->con;
	side->path.con = side->cons;
	side->path.con_num = 1;
	side->path.irq_con_num = 1;
	side->con.path = &side->path;
	side->empty_cqe.done = lb_empty_recv_done;
	side->send_cqe.done = lb_counted_send_done;
	side->hb_cqe.done = lb_hb_send_done;
	init_completion(&side->recv_done);
	init_completion(&side->send_done);
}

/* The connection of one side, from its CM handler. */
static int lb_side_up(struct loopback *lb, struct lb_side *side,
		      struct rdma_cm_id *id, bool srv)
{
	side->id = id;
	side->con.cm_id = id;
	side->dev = rtrs_ib_dev_get(&lb->pool, id->device);
	if (IS_ERR(side->dev)) {
		int err = PTR_ERR(side->dev);

		side->dev = NULL;
		return err;
	}
	side->path.dev = side->dev;
	side->ius = rtrs_iu_alloc(LB_IUS, LB_IU_SIZE, GFP_KERNEL, id->device,
				  srv ? DMA_FROM_DEVICE : DMA_TO_DEVICE,
				  srv ? lb_recv_done : lb_iu_send_done);
	if (!side->ius)
		return -ENOMEM;
	return rtrs_cq_qp_create(&side->path, &side->con, 2, -1, 4 * LB_IUS,
				 2 * LB_IUS, 2 * LB_IUS, NULL, IB_POLL_SOFTIRQ);
}

static int lb_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	struct loopback *lb = id->context;
	int err = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		err = rdma_resolve_route(id, LB_CM_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		err = lb_side_up(lb, &lb->clt, id, false);
		if (!err)
			err = rdma_connect_locked(id, &param);
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		err = lb_side_up(lb, &lb->srv, id, true);
		if (!err)
			err = rdma_accept(id, &param);
		if (err) {
			/* A non-zero return makes the CM destroy @id. */
			rtrs_cq_qp_destroy(&lb->srv.con);
			lb->srv.id = NULL;
			lb_fail(lb, err);
			return err;
		}
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (atomic_inc_return(&lb->established) == 2)
			complete(&lb->up);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		err = -ECONNREFUSED;
		break;
	default:
		break;
	}
	if (err)
		lb_fail(lb, err);
	return 0;
}

static void lb_side_down(struct loopback *lb, struct lb_side *side)
{
	if (side->con.qp)
		ib_drain_qp(side->con.qp);
	rtrs_cq_qp_destroy(&side->con);
	if (side->id)
		rdma_destroy_id(side->id);
	rtrs_iu_free(side->ius, lb->ib_dev, LB_IUS);
	if (side->dev)
		rtrs_ib_dev_put(side->dev);
}

static void lb_teardown(struct loopback *lb)
{
	if (lb->hb_on)
		rtrs_stop_hb(&lb->clt.path);
	if (lb->clt.id && lb->clt.con.qp)
		rdma_disconnect(lb->clt.id);
	lb_side_down(lb, &lb->clt);
	lb_side_down(lb, &lb->srv);
	if (lb->listen)
		rdma_destroy_id(lb->listen);
	rtrs_iu_free(lb->target, lb->ib_dev, 1);
	rtrs_ib_dev_pool_destroy(&lb->pool);
}

/* Connect a client to a server on 192.0.2.1, port chosen by the CM. */
static struct loopback *lb_setup(struct kunit *test)
{
	struct sockaddr_in src = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(TEST_ADDR),
	};
	struct core_test *t = test->priv;
	struct loopback *lb;
	int err;

	lb = kunit_kzalloc(test, sizeof(*lb), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, lb);
	lb->ib_dev = t->ib_dev;
	rtrs_ib_dev_pool_init(&lb->pool, IB_PD_UNSAFE_GLOBAL_RKEY);
	init_completion(&lb->up);
	init_completion(&lb->hb_failed);
	lb_side_init(&lb->srv);
	lb_side_init(&lb->clt);
	t->lb = lb;

	lb->listen = rdma_create_id(&init_net, lb_cm_handler, lb, RDMA_PS_TCP,
				    IB_QPT_RC);
	if (IS_ERR(lb->listen)) {
		err = PTR_ERR(lb->listen);
		lb->listen = NULL;
		KUNIT_ASSERT_FAILURE(test, "rdma_create_id: %d", err);
	}
	KUNIT_ASSERT_EQ(test, rdma_bind_addr(lb->listen,
					     (struct sockaddr *)&src), 0);
	KUNIT_ASSERT_EQ(test, rdma_listen(lb->listen, 4), 0);

	lb->clt.id = rdma_create_id(&init_net, lb_cm_handler, lb, RDMA_PS_TCP,
				    IB_QPT_RC);
	if (IS_ERR(lb->clt.id)) {
		err = PTR_ERR(lb->clt.id);
		lb->clt.id = NULL;
		KUNIT_ASSERT_FAILURE(test, "rdma_create_id: %d", err);
	}
	err = rdma_resolve_addr(lb->clt.id, (struct sockaddr *)&src,
				(struct sockaddr *)&lb->listen->route.addr.src_addr,
				LB_CM_MS);
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_ASSERT_TRUE_MSG(test, wait_for_completion_timeout(&lb->up,
								LB_TIMEOUT),
			      "no connection after %d s", LB_TIMEOUT / HZ);
	KUNIT_ASSERT_EQ(test, READ_ONCE(lb->err), 0);
	/* Both ends share the device's one PD. */
	KUNIT_EXPECT_PTR_EQ(test, lb->srv.dev, lb->clt.dev);
	KUNIT_EXPECT_EQ(test, kref_read(&lb->srv.dev->ref), 2);
	return lb;
}

static void lb_post_recvs(struct kunit *test, struct lb_side *side,
			  unsigned int iu_recvs, unsigned int empty_recvs)
{
	unsigned int i;

	for (i = 0; i < iu_recvs; i++)
		KUNIT_ASSERT_EQ(test,
				rtrs_iu_post_recv(&side->con, &side->ius[i]),
				0);
	for (i = 0; i < empty_recvs; i++)
		KUNIT_ASSERT_EQ(test,
				rtrs_post_recv_empty(&side->con,
						     &side->empty_cqe), 0);
}

static void lb_wait(struct kunit *test, struct completion *done)
{
	KUNIT_ASSERT_TRUE_MSG(test,
			      wait_for_completion_timeout(done, LB_TIMEOUT),
			      "no completion after %d s", LB_TIMEOUT / HZ);
}

static void lb_send_reaches_peer_buffer(struct kunit *test)
{
	struct loopback *lb = lb_setup(test);
	struct rtrs_iu *tx = &lb->clt.ius[0], *rx = &lb->srv.ius[0];

	lb_post_recvs(test, &lb->srv, 1, 0);
	memset(tx->buf, 0x5a, LB_IU_SIZE);
	ib_dma_sync_single_for_device(lb->ib_dev, tx->dma_addr, tx->size,
				      DMA_TO_DEVICE);
	KUNIT_ASSERT_EQ(test, rtrs_iu_post_send(&lb->clt.con, tx, 100, NULL),
			0);

	lb_wait(test, &lb->clt.send_done);
	lb_wait(test, &lb->srv.recv_done);
	KUNIT_EXPECT_PTR_EQ(test, lb->srv.wc.wr_cqe, &rx->cqe);
	KUNIT_EXPECT_EQ(test, lb->srv.wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, lb->srv.wc.byte_len, 100);
	ib_dma_sync_single_for_cpu(lb->ib_dev, rx->dma_addr, rx->size,
				   DMA_FROM_DEVICE);
	KUNIT_EXPECT_NULL(test, memchr_inv(rx->buf, 0x5a, 100));
	KUNIT_EXPECT_NULL(test, memchr_inv(rx->buf + 100, 0, LB_IU_SIZE - 100));
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->srv.bad), 0);
}

static void lb_write_imm_lands_with_its_imm(struct kunit *test)
{
	struct loopback *lb = lb_setup(test);
	struct rtrs_iu *tx = &lb->clt.ius[0];
	const u32 imm = rtrs_io_req_imm(3, 0x1234, rtrs_imm_off_bits(16));
	struct ib_sge sge[2];
	int err;

	lb->target = rtrs_iu_alloc(1, LB_IU_SIZE, GFP_KERNEL, lb->ib_dev,
				   DMA_FROM_DEVICE, lb_recv_done);
	KUNIT_ASSERT_NOT_NULL(test, lb->target);
	lb_post_recvs(test, &lb->srv, 0, 1);

	memset(tx->buf, 0xc3, 32);
	memset(tx->buf + 64, 0x3c, 16);
	ib_dma_sync_single_for_device(lb->ib_dev, tx->dma_addr, tx->size,
				      DMA_TO_DEVICE);
	sge[0] = (struct ib_sge){ tx->dma_addr, 32,
				  lb->clt.dev->ib_pd->local_dma_lkey };
	sge[1] = (struct ib_sge){ tx->dma_addr + 64, 16,
				  lb->clt.dev->ib_pd->local_dma_lkey };
	err = rtrs_iu_post_rdma_write_imm(&lb->clt.con, tx, sge, 2,
					  lb->srv.dev->ib_pd->unsafe_global_rkey,
					  lb->target->dma_addr + 8, imm,
					  IB_SEND_SIGNALED, NULL, NULL);
	KUNIT_ASSERT_EQ(test, err, 0);

	lb_wait(test, &lb->clt.send_done);
	lb_wait(test, &lb->srv.recv_done);
	KUNIT_EXPECT_EQ(test, lb->srv.wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(lb->srv.wc.ex.imm_data), imm);
	KUNIT_EXPECT_EQ(test, lb->srv.wc.byte_len, 48);
	ib_dma_sync_single_for_cpu(lb->ib_dev, lb->target->dma_addr,
				   LB_IU_SIZE, DMA_FROM_DEVICE);
	KUNIT_EXPECT_NULL(test, memchr_inv(lb->target->buf, 0, 8));
	KUNIT_EXPECT_NULL(test, memchr_inv(lb->target->buf + 8, 0xc3, 32));
	KUNIT_EXPECT_NULL(test, memchr_inv(lb->target->buf + 40, 0x3c, 16));
	KUNIT_EXPECT_NULL(test, memchr_inv(lb->target->buf + 56, 0,
					   LB_IU_SIZE - 56));
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->srv.bad), 0);
}

/*
 * Unsignaled empty writes are signaled every signal_interval; a signaled
 * write after them completes only after their completions (a send queue
 * completes in order), so it is the fence to count them at.
 */
static void lb_signals_every_interval(struct kunit *test)
{
	struct loopback *lb = lb_setup(test);
	unsigned int i;
	int err;

	lb->clt.con.signal_interval = 4;
	lb_post_recvs(test, &lb->srv, 0, 11);
	for (i = 0; i < 10; i++) {
		err = rtrs_post_rdma_write_imm_empty(&lb->clt.con,
						     &lb->clt.send_cqe,
						     rtrs_io_rsp_imm(i, 0, false),
						     NULL);
		KUNIT_ASSERT_EQ(test, err, 0);
	}
	err = rtrs_iu_post_rdma_write_imm(&lb->clt.con, &lb->clt.ius[0], NULL,
					  0, 0, 0, rtrs_io_rsp_imm(10, 0, false),
					  IB_SEND_SIGNALED, NULL, NULL);
	KUNIT_ASSERT_EQ(test, err, 0);

	lb_wait(test, &lb->clt.send_done);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.sends), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.con.wr_cnt), 11);
	for (i = 0; i < 100 && atomic_read(&lb->srv.recvs) < 11; i++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->srv.recvs), 11);
	KUNIT_EXPECT_EQ(test, rtrs_imm_type(be32_to_cpu(lb->srv.wc.ex.imm_data)),
			RTRS_IO_RSP_IMM);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->srv.bad), 0);
}

static void lb_hb_err_handler(struct rtrs_con *con)
{
	struct lb_side *side = container_of(con, struct lb_side, con);
	struct loopback *lb = container_of(side, struct loopback, clt);

	complete(&lb->hb_failed);
}

static void lb_heartbeats_are_acked(struct kunit *test)
{
	struct loopback *lb = lb_setup(test);
	ktime_t latency;
	unsigned int i;

	lb_post_recvs(test, &lb->srv, 0, LB_IUS);
	lb_post_recvs(test, &lb->clt, 0, LB_IUS);
	rtrs_init_hb(&lb->srv.path, &lb->srv.hb_cqe, 0, 0, lb_hb_err_handler,
		     system_wq);
	rtrs_init_hb(&lb->clt.path, &lb->clt.hb_cqe, 20, 50,
		     lb_hb_err_handler, system_wq);
	lb->hb_on = true;
	rtrs_start_hb(&lb->clt.path);

	for (i = 0; i < 500 && atomic_read(&lb->clt.hb_acks) < 3; i++)
		msleep(20);
	rtrs_stop_hb(&lb->clt.path);

	KUNIT_EXPECT_GE(test, atomic_read(&lb->clt.hb_acks), 3);
	KUNIT_EXPECT_GE(test, atomic_read(&lb->srv.hb_msgs),
			atomic_read(&lb->clt.hb_acks));
	latency = READ_ONCE(lb->clt.path.hb_cur_latency);
	KUNIT_EXPECT_GT(test, ktime_to_ns(latency), 0);
	KUNIT_EXPECT_LT(test, ktime_to_ms(latency), 10 * MSEC_PER_SEC);
	KUNIT_EXPECT_FALSE(test, completion_done(&lb->hb_failed));
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->clt.bad), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&lb->srv.bad), 0);
}

static struct kunit_case rtrs_core_cases[] = {
	KUNIT_CASE(dev_get_twice_shares_one_entry),
	KUNIT_CASE(dev_put_last_leaves_pool_empty),
	KUNIT_CASE(dev_pools_are_distinct),
	KUNIT_CASE(iu_alloc_maps_every_buffer),
	KUNIT_CASE(iu_alloc_refuses_and_unwinds),
	KUNIT_CASE_PARAM(cq_qp_create_destroy, poll_ctx_gen_params),
	KUNIT_CASE(cq_qp_clamps_send_sge_to_device),
	KUNIT_CASE(cq_qp_refuses_bad_cq_size),
	KUNIT_CASE(post_recv_completes_each_cqe),
	KUNIT_CASE(post_send_refuses_bad_requests),
	KUNIT_CASE(hb_missed_max_fails_the_path),
	KUNIT_CASE(hb_below_max_sends_a_beat),
	KUNIT_CASE(hb_received_resets_and_measures),
	KUNIT_CASE(hb_start_and_stop),
	KUNIT_CASE(lb_send_reaches_peer_buffer),
	KUNIT_CASE(lb_write_imm_lands_with_its_imm),
	KUNIT_CASE(lb_signals_every_interval),
	KUNIT_CASE(lb_heartbeats_are_acked),
	{}
};

static struct kunit_suite rtrs_core_suite = {
	.name = "rtrs-core",
	.init = core_test_init,
	.exit = core_test_exit,
	.test_cases = rtrs_core_cases,
};

kunit_test_suite(rtrs_core_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs core on an RDMA device");
MODULE_LICENSE("GPL");
