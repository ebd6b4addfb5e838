// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the send queue accounting of a 2.1 client connection.
 *
 * 2.1 requests whose SEND carries their header alone go unsignaled, and
 * the entries they took are given back by the completion of a later
 * signaled SEND (rtrs_clt_send_signal(), rtrs_clt_send_retire() in
 * rtrs-clt.h).  This suite drives those rules, and rtrs_clt_sq_get(),
 * through long random runs of posts, responses, LOCAL_INVs and send
 * completions against a model of the device's queue, which frees its
 * entries only when a signaled work request completes, in order.  After
 * every step it checks that the client never counts as free an entry the
 * device still holds, that the unsignaled entries awaiting a completion
 * stay within the connection's bound, and that a request always finds
 * room while fewer than the queue depth are in flight; once quiet, that
 * the client counts taken only the unsignaled entries no signaled SEND
 * has stood for yet, and that one signaled request gives them all back.
 */
#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "rtrs-clt.h"

#define SQ_DEPTH	8
/* Most entries of one request: REG_MR, LOCAL_INV, SEND, later LOCAL_INV. */
#define SQ_PER_REQ	4
#define SQ_ROOM		(SQ_DEPTH * SQ_PER_REQ + RTRS_CLT_UNSIG_MAX)
#define SQ_STEPS	20000

/* Work requests posted together: a request's chain, or a LOCAL_INV. */
struct sq_group {
	u32	slot;
	u32	n;
	bool	signaled;
	bool	inv;
};

struct sq_model {
	struct kunit		*test;
	struct rnd_state	rnd;
	struct rtrs_clt_con	*con;
	struct rtrs_clt_io_req	reqs[SQ_DEPTH];
	bool			in_flight[SQ_DEPTH];
	bool			responded[SQ_DEPTH];
	u32			inflight;
	/* The device's send queue: groups not yet freed, oldest first. */
	struct sq_group		hw[SQ_ROOM];
	u32			hw_first;
	u32			hw_len;
	u32			hw_used;
	u32			unsig;
	u32			signaled;
};

static u32 sq_rand(struct sq_model *m, u32 n)
{
	return prandom_u32_state(&m->rnd) % n;
}

static void sq_push(struct sq_model *m, u32 slot, u32 n, bool signaled,
		    bool inv)
{
	KUNIT_ASSERT_LT(m->test, m->hw_len, (u32)SQ_ROOM);
	m->hw[(m->hw_first + m->hw_len++) % SQ_ROOM] = (struct sq_group) {
		.slot = slot, .n = n, .signaled = signaled, .inv = inv,
	};
	m->hw_used += n;
}

/* The request leaves: what rtrs_clt_req_release() gives back. */
static void sq_put(struct sq_model *m, u32 slot)
{
	struct rtrs_clt_io_req *req = &m->reqs[slot];

	if (--req->pending)
		return;
	atomic_add(req->sq_wrs, &m->con->c.sq_wr_avail);
	req->sq_wrs = 0;
	m->in_flight[slot] = false;
	m->inflight--;
}

/* Post a request in @slot; its SEND may go unsignaled when @may. */
static void sq_post(struct sq_model *m, u32 slot, bool may)
{
	struct rtrs_clt_io_req *req = &m->reqs[slot];
	u32 nwr = 1 + sq_rand(m, SQ_PER_REQ);
	bool mr = nwr > 1, signaled;

	*req = (struct rtrs_clt_io_req) {
		.con = m->con, .pending = 2, .mr_valid = mr,
	};
	/* Fewer than the depth in flight: there must be room. */
	KUNIT_ASSERT_TRUE(m->test, rtrs_clt_sq_get(m->con, nwr));
	spin_lock_irq(&m->con->send_lock);
	signaled = rtrs_clt_send_signal(req, nwr, may);
	spin_unlock_irq(&m->con->send_lock);
	KUNIT_EXPECT_TRUE(m->test, may || signaled);
	if (signaled)
		m->signaled++;
	else
		m->unsig++;
	m->in_flight[slot] = true;
	m->responded[slot] = false;
	m->inflight++;
	/* The chain; the LOCAL_INV entry stays reserved until posted. */
	sq_push(m, slot, nwr - mr, signaled, false);
}

/* The response; the client invalidates the MR unless the server did. */
static void sq_respond(struct sq_model *m, u32 slot)
{
	struct rtrs_clt_io_req *req = &m->reqs[slot];

	m->responded[slot] = true;
	if (req->mr_valid && sq_rand(m, 2)) {
		req->pending++;
		sq_push(m, slot, 1, true, true);
	}
	sq_put(m, slot);
}

/*
 * The oldest signaled work request completes, freeing all before it; the
 * unsignaled ones after the last signaled one stay.
 */
static void sq_complete(struct sq_model *m)
{
	struct sq_group g;
	u32 i;

	for (i = 0; i < m->hw_len; i++)
		if (m->hw[(m->hw_first + i) % SQ_ROOM].signaled)
			break;
	if (i == m->hw_len)
		return;
	while (m->hw_len) {
		g = m->hw[m->hw_first];
		m->hw_first = (m->hw_first + 1) % SQ_ROOM;
		m->hw_len--;
		m->hw_used -= g.n;
		if (!g.signaled)
			continue;
		if (!g.inv)
			rtrs_clt_send_retire(m->con, &m->reqs[g.slot]);
		sq_put(m, g.slot);
		return;
	}
}

/* Entries the client counts taken; below 0 if it gave back too many. */
static int sq_taken(struct sq_model *m)
{
	return SQ_ROOM - atomic_read(&m->con->c.sq_wr_avail);
}

static void sq_check(struct sq_model *m)
{
	KUNIT_ASSERT_GE(m->test, sq_taken(m), (int)m->hw_used);
	KUNIT_ASSERT_LE(m->test, (u32)atomic_read(&m->con->unretired),
			m->con->unsig_max);
	KUNIT_ASSERT_LE(m->test, m->hw_used, (u32)SQ_ROOM);
}

/* A request in flight still waiting for its response, or SQ_DEPTH. */
static u32 sq_unanswered(struct sq_model *m)
{
	u32 i, start = sq_rand(m, SQ_DEPTH), slot;

	for (i = 0; i < SQ_DEPTH; i++) {
		slot = (start + i) % SQ_DEPTH;
		if (m->in_flight[slot] && !m->responded[slot])
			return slot;
	}
	return SQ_DEPTH;
}

static u32 sq_free_slot(struct sq_model *m)
{
	u32 i, start = sq_rand(m, SQ_DEPTH);

	for (i = 0; i < SQ_DEPTH; i++)
		if (!m->in_flight[(start + i) % SQ_DEPTH])
			return (start + i) % SQ_DEPTH;
	return SQ_DEPTH;
}

static void sq_step(struct sq_model *m)
{
	u32 slot;

	switch (sq_rand(m, 3)) {
	case 0:
		slot = sq_free_slot(m);
		if (slot < SQ_DEPTH)
			sq_post(m, slot, sq_rand(m, 4));
		break;
	case 1:
		slot = sq_unanswered(m);
		if (slot < SQ_DEPTH)
			sq_respond(m, slot);
		break;
	default:
		sq_complete(m);
	}
	sq_check(m);
}

static void sq_run(struct kunit *test, u32 seed)
{
	struct sq_model *m;
	u32 i, slot;

	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	m->con = kunit_kzalloc(test, sizeof(*m->con), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m->con);
	m->test = test;
	prandom_seed_state(&m->rnd, seed);
	spin_lock_init(&m->con->send_lock);
	atomic_set(&m->con->c.sq_wr_avail, SQ_ROOM);
	m->con->unsig_max = RTRS_CLT_UNSIG_MAX;

	for (i = 0; i < SQ_STEPS; i++)
		sq_step(m);
	/* Quiet: every response in, every completion the device will give. */
	while ((slot = sq_unanswered(m)) < SQ_DEPTH) {
		sq_respond(m, slot);
		sq_check(m);
	}
	for (i = 0; i < SQ_ROOM && m->inflight; i++) {
		sq_complete(m);
		sq_check(m);
	}
	KUNIT_EXPECT_EQ(test, m->inflight, 0U);
	/*
	 * Taken now: the unsignaled entries no signaled SEND has stood for
	 * yet (a LOCAL_INV's completion frees them in the device, but does
	 * not give them back), within the bound.  A signaled request gives
	 * back every one.
	 */
	KUNIT_EXPECT_EQ(test, sq_taken(m), atomic_read(&m->con->unretired));
	sq_post(m, 0, false);
	sq_respond(m, 0);
	for (i = 0; i < SQ_ROOM && m->inflight; i++) {
		sq_complete(m);
		sq_check(m);
	}
	KUNIT_EXPECT_EQ(test, m->inflight, 0U);
	KUNIT_EXPECT_EQ(test, m->hw_used, 0U);
	KUNIT_EXPECT_EQ(test, sq_taken(m), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&m->con->unretired), 0);
	KUNIT_EXPECT_GT(test, m->unsig, SQ_STEPS / 10);
	KUNIT_EXPECT_GT(test, m->signaled, SQ_STEPS / 20);
}

static void rtrs_clt_sq_random(struct kunit *test)
{
	u32 seed;

	for (seed = 1; seed <= 8; seed++)
		sq_run(test, seed);
}

/* A connection whose device left no room for unsignaled entries. */
static void rtrs_clt_sq_no_room(struct kunit *test)
{
	struct rtrs_clt_con *con;
	struct rtrs_clt_io_req req = { .pending = 2 };
	bool signaled;

	con = kunit_kzalloc(test, sizeof(*con), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, con);
	spin_lock_init(&con->send_lock);
	req.con = con;
	spin_lock_irq(&con->send_lock);
	signaled = rtrs_clt_send_signal(&req, 1, true);
	spin_unlock_irq(&con->send_lock);
	KUNIT_EXPECT_TRUE(test, signaled);
	KUNIT_EXPECT_EQ(test, req.pending, 2U);
	KUNIT_EXPECT_EQ(test, req.sq_wrs, 1U);
}

static struct kunit_case rtrs_clt_sq_cases[] = {
	KUNIT_CASE(rtrs_clt_sq_random),
	KUNIT_CASE(rtrs_clt_sq_no_room),
	{}
};

static struct kunit_suite rtrs_clt_sq_suite = {
	.name = "rtrs-clt-sq",
	.test_cases = rtrs_clt_sq_cases,
};

kunit_test_suite(rtrs_clt_sq_suite);

MODULE_DESCRIPTION("KUnit suite: rtrs client send queue accounting");
MODULE_LICENSE("GPL");
