// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the server's data buffer pool.
 *
 * All sessions take the buffers of protocol 2.1 from one pool, out of
 * 1 MiB blocks it allocates as requests need room; a request that does
 * not fit waits, and the waiters are served in order within a user,
 * round robin over users, none above its share while another waits, and
 * none overtaken while it waits for room (rtrs-srv-pool.c).  These cases
 * run a pool of a few MiB with a few users, and watch which requests
 * their callbacks say are granted, in which order, and what the pool
 * reports it holds.
 *
 * Like the chunk suite, the module compiles the source in rather than
 * have rtrs-server.ko export these for it.
 */
/* First: it sets its pr_fmt before any header prints. */
#include "rtrs-srv-pool.c"

#include <kunit/test.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>

#define PT_USERS	3
#define PT_REQS		32
/* Tries of the pool's work to settle: a block that fails comes later. */
#define PT_SETTLE_TRIES	20

struct pt_req {
	struct rtrs_srv_pool_req req;
	unsigned int		calls;
};

/*
 * A pool, its users and their requests.  @order records the requests
 * whose callbacks ran, in order.
 */
struct pool_test {
	struct rtrs_srv_pool	pool;
	bool			up;
	struct rtrs_srv_pool_user users[PT_USERS];
	struct pt_req		reqs[PT_REQS];
	spinlock_t		lock;	/* calls, order, nr_order */
	struct rtrs_srv_pool_req *order[PT_REQS];
	unsigned int		nr_order;
};

static struct pool_test *pt_of_cb;

static void pt_granted(struct rtrs_srv_pool_req *req)
{
	struct pool_test *pt = pt_of_cb;

	spin_lock_bh(&pt->lock);
	container_of(req, struct pt_req, req)->calls++;
	if (pt->nr_order < ARRAY_SIZE(pt->order))
		pt->order[pt->nr_order++] = req;
	spin_unlock_bh(&pt->lock);
}

static int pool_test_init(struct kunit *test)
{
	struct pool_test *pt;

	pt = kunit_kzalloc(test, sizeof(*pt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	spin_lock_init(&pt->lock);
	pt_of_cb = pt;
	test->priv = pt;
	return 0;
}

/* Let the pool's work allocate what its waiters wait for. */
static void pt_settle(struct pool_test *pt)
{
	int i;

	for (i = 0; i < PT_SETTLE_TRIES; i++)
		if (!flush_delayed_work(&pt->pool.grow_dwork))
			break;
}

/* What the case left is cancelled or put, then the pool destroyed. */
static void pool_test_exit(struct kunit *test)
{
	struct pool_test *pt = test->priv;
	unsigned int i;

	if (!pt->up)
		goto out;
	for (i = 0; i < PT_REQS; i++)
		if (pt->reqs[i].req.user)
			rtrs_srv_pool_cancel(&pt->reqs[i].req);
	pt_settle(pt);
	for (i = 0; i < PT_REQS; i++)
		if (pt->reqs[i].req.block)
			rtrs_srv_pool_put(&pt->reqs[i].req);
	for (i = 0; i < PT_USERS; i++)
		rtrs_srv_pool_user_exit(&pt->users[i]);
	rtrs_srv_pool_destroy(&pt->pool);
out:
	pt_of_cb = NULL;
}

/* A pool of @mb MiB and its users. */
static void pt_start(struct kunit *test, unsigned int mb)
{
	struct pool_test *pt = test->priv;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, rtrs_srv_pool_init(&pt->pool, mb * SZ_1M), 0);
	for (i = 0; i < PT_USERS; i++)
		rtrs_srv_pool_user_init(&pt->pool, &pt->users[i]);
	pt->up = true;
}

/* Ask, as user @u, for @size bytes with request @i. */
static bool pt_get(struct pool_test *pt, unsigned int i, unsigned int u,
		   size_t size)
{
	struct rtrs_srv_pool_req *req = &pt->reqs[i].req;

	req->size = size;
	req->user = &pt->users[u];
	req->granted = pt_granted;
	return rtrs_srv_pool_get(req);
}

static struct rtrs_srv_pool_req *pt_req(struct pool_test *pt, unsigned int i)
{
	return &pt->reqs[i].req;
}

static unsigned int pt_calls(struct pool_test *pt, unsigned int i)
{
	unsigned int calls;

	spin_lock_bh(&pt->lock);
	calls = pt->reqs[i].calls;
	spin_unlock_bh(&pt->lock);
	return calls;
}

static struct rtrs_srv_pool_stats pt_usage(struct pool_test *pt)
{
	struct rtrs_srv_pool_stats st;

	rtrs_srv_pool_usage(&pt->pool, &st);
	return st;
}

static size_t pt_len(struct pool_test *pt, unsigned int i)
{
	return PAGE_SIZE << pt_req(pt, i)->order;
}

/* Forget the callbacks seen so far. */
static void pt_clear(struct pool_test *pt)
{
	unsigned int i;

	spin_lock_bh(&pt->lock);
	for (i = 0; i < PT_REQS; i++)
		pt->reqs[i].calls = 0;
	pt->nr_order = 0;
	spin_unlock_bh(&pt->lock);
}

/*
 * Grow the pool to its limit, through its work, and give everything
 * back: the blocks are kept, so from then on grants need no work.
 * Uses requests 0 to @mb - 1.
 */
static void pt_fill(struct kunit *test, unsigned int mb)
{
	struct pool_test *pt = test->priv;
	unsigned int i;

	for (i = 0; i < mb; i++)
		KUNIT_ASSERT_FALSE(test, pt_get(pt, i, 0, SZ_1M));
	pt_settle(pt);
	for (i = 0; i < mb; i++)
		KUNIT_ASSERT_EQ(test, pt_calls(pt, i), 1);
	KUNIT_ASSERT_EQ(test, pt_usage(pt).allocated, (size_t)mb * SZ_1M);
	for (i = 0; i < mb; i++)
		rtrs_srv_pool_put(pt_req(pt, i));
	KUNIT_ASSERT_EQ(test, pt_usage(pt).held, 0);
	KUNIT_ASSERT_EQ(test, pt_usage(pt).users, 0);
	pt_clear(pt);
}

/*
 * Blocks come as requests need them, up to the limit and no further; a
 * request for which none can come waits for a buffer put back.
 */
static void grows_to_limit(struct kunit *test)
{
	struct pool_test *pt = test->priv;

	pt_start(test, 2);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, 0);

	/* No block yet: the work brings one, and the callback says so. */
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 0, 0, PAGE_SIZE));
	pt_settle(pt);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 0), 1);
	KUNIT_EXPECT_NOT_NULL(test, pt_req(pt, 0)->buf);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, SZ_1M);

	/* Room in that block: at once, no callback, no new block. */
	KUNIT_EXPECT_TRUE(test, pt_get(pt, 1, 0, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 1), 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, SZ_1M);

	/* A whole block does not fit there: a second one comes. */
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 2, 0, SZ_1M));
	pt_settle(pt);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 2), 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, 2 * SZ_1M);

	/* At the limit nothing more comes: it waits. */
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 3, 0, SZ_1M));
	pt_settle(pt);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 3), 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, 2 * SZ_1M);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 1);

	/* The whole block put back is the one it gets. */
	rtrs_srv_pool_put(pt_req(pt, 2));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 3), 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).held, SZ_1M + 2 * PAGE_SIZE);
}

/*
 * A buffer is the fewest pages, a power of two of them, that hold the
 * request: a one-page request holds one page, and the pool's usage
 * counts exactly what the buffers hold.
 */
static void sizes_round(struct kunit *test)
{
	static const size_t sizes[] = {
		PAGE_SIZE, 1, PAGE_SIZE + 1, 3 * PAGE_SIZE, 4 * PAGE_SIZE,
		SZ_64K + 1, SZ_256K, SZ_256K - 1,
	};
	struct pool_test *pt = test->priv;
	size_t held = 0, want;
	unsigned int i;

	pt_start(test, 1);
	pt_fill(test, 1);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		want = roundup_pow_of_two(DIV_ROUND_UP(sizes[i], PAGE_SIZE)) *
		       PAGE_SIZE;
		KUNIT_ASSERT_TRUE(test, pt_get(pt, i, 0, sizes[i]));
		KUNIT_EXPECT_EQ(test, pt_len(pt, i), want);
		held += want;
		KUNIT_EXPECT_EQ(test, pt_usage(pt).held, held);
	}
	/* The first, of one page, held one page alone. */
	KUNIT_EXPECT_EQ(test, pt_len(pt, 0), PAGE_SIZE);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		rtrs_srv_pool_put(pt_req(pt, i));
		held -= pt_len(pt, i);
		KUNIT_EXPECT_EQ(test, pt_usage(pt).held, held);
	}
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, 0);
}

/*
 * Buffers of mixed sizes are apart, naturally aligned (in physical and
 * kernel addresses) and writable over their whole length.
 */
static void distinct_aligned(struct kunit *test)
{
	/* A whole block, then 1016 KiB of the other. */
	static const size_t sizes[] = {
		SZ_1M, PAGE_SIZE, SZ_512K, 2 * PAGE_SIZE, SZ_256K, PAGE_SIZE,
		SZ_64K, SZ_128K, SZ_16K, SZ_8K, SZ_16K,
	};
	struct pool_test *pt = test->priv;
	unsigned int i, j;

	pt_start(test, 2);
	pt_fill(test, 2);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct rtrs_srv_pool_req *req = pt_req(pt, i);
		phys_addr_t phys;

		KUNIT_ASSERT_TRUE(test, pt_get(pt, i, 0, sizes[i]));
		KUNIT_ASSERT_NOT_NULL(test, req->buf);
		KUNIT_EXPECT_EQ(test, pt_len(pt, i), sizes[i]);
		KUNIT_EXPECT_PTR_EQ(test, req->buf, page_address(req->page));
		phys = page_to_phys(req->page);
		KUNIT_EXPECT_EQ(test, phys & (pt_len(pt, i) - 1), 0);
		KUNIT_EXPECT_EQ(test,
				(unsigned long)req->buf & (pt_len(pt, i) - 1),
				0);
		memset(req->buf, i + 1, pt_len(pt, i));
	}
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		phys_addr_t a = page_to_phys(pt_req(pt, i)->page);

		/* What another buffer's writes would have spoilt. */
		KUNIT_EXPECT_NULL(test, memchr_inv(pt_req(pt, i)->buf, i + 1,
						   pt_len(pt, i)));
		for (j = i + 1; j < ARRAY_SIZE(sizes); j++) {
			phys_addr_t b = page_to_phys(pt_req(pt, j)->page);

			KUNIT_EXPECT_TRUE(test, a + pt_len(pt, i) <= b ||
					  b + pt_len(pt, j) <= a);
		}
	}
	KUNIT_EXPECT_EQ(test, pt_usage(pt).allocated, 2 * SZ_1M);
}

/*
 * With every byte of the pool held, a request waits; a buffer put back
 * grants it, its callback once, with a buffer it can write.
 */
static void limit_waits(struct kunit *test)
{
	struct pool_test *pt = test->priv;
	struct rtrs_srv_pool_req *w = pt_req(pt, 2);

	pt_start(test, 1);
	pt_fill(test, 1);
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 1, 0, SZ_1M));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 2, 1, PAGE_SIZE));
	pt_settle(pt);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 2), 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, 2);

	rtrs_srv_pool_put(pt_req(pt, 1));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 2), 1);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 1), 0);
	KUNIT_ASSERT_NOT_NULL(test, w->buf);
	memset(w->buf, 0x5a, pt_len(pt, 2));
	KUNIT_EXPECT_NULL(test, memchr_inv(w->buf, 0x5a, pt_len(pt, 2)));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).held, PAGE_SIZE);

	rtrs_srv_pool_put(w);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 2), 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).held, 0);
}

/* A user's requests are granted in the order they came. */
static void fifo_in_user(struct kunit *test)
{
	struct pool_test *pt = test->priv;

	pt_start(test, 1);
	pt_fill(test, 1);
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 1, 0, SZ_512K));
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 2, 0, SZ_512K));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 3, 1, SZ_512K));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 4, 1, PAGE_SIZE));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 5, 1, SZ_512K));

	/* Room for the first; the second does not fit beside it. */
	rtrs_srv_pool_put(pt_req(pt, 1));
	KUNIT_ASSERT_EQ(test, pt->nr_order, 1);
	KUNIT_EXPECT_PTR_EQ(test, pt->order[0], pt_req(pt, 3));

	/* The second fits, the third then does not. */
	rtrs_srv_pool_put(pt_req(pt, 2));
	KUNIT_ASSERT_EQ(test, pt->nr_order, 2);
	KUNIT_EXPECT_PTR_EQ(test, pt->order[1], pt_req(pt, 4));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 1);

	rtrs_srv_pool_put(pt_req(pt, 3));
	KUNIT_ASSERT_EQ(test, pt->nr_order, 3);
	KUNIT_EXPECT_PTR_EQ(test, pt->order[2], pt_req(pt, 5));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
}

/* Users that wait are served in turn, one request each. */
static void round_robin(struct kunit *test)
{
	static const unsigned int want[] = { 2, 5, 3, 6, 4, 7 };
	struct pool_test *pt = test->priv;
	unsigned int i;

	pt_start(test, 1);
	pt_fill(test, 1);
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 1, 2, SZ_1M));
	for (i = 2; i < 5; i++)
		KUNIT_EXPECT_FALSE(test, pt_get(pt, i, 0, PAGE_SIZE));
	for (i = 5; i < 8; i++)
		KUNIT_EXPECT_FALSE(test, pt_get(pt, i, 1, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 6);

	rtrs_srv_pool_put(pt_req(pt, 1));
	KUNIT_ASSERT_EQ(test, pt->nr_order, ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++)
		KUNIT_EXPECT_PTR_EQ(test, pt->order[i], pt_req(pt, want[i]));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
}

/*
 * Of two users, one that holds its share (half the pool) is not granted
 * more while the other waits, though it waited first: the other gets the
 * buffer put back.  Once the other no longer waits, it is.
 */
static void share(struct kunit *test)
{
	struct pool_test *pt = test->priv;
	unsigned int i;

	pt_start(test, 2);
	pt_fill(test, 2);
	/* User 0 holds 2 to 5, user 1 holds 6 to 9: 1 MiB each. */
	for (i = 2; i < 10; i++)
		KUNIT_ASSERT_TRUE(test, pt_get(pt, i, i < 6 ? 0 : 1, SZ_256K));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).held, 2 * SZ_1M);
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 10, 0, SZ_256K));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 11, 1, SZ_256K));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, 2);

	/* User 0 would be above 1 MiB; user 1 comes back to it. */
	rtrs_srv_pool_put(pt_req(pt, 6));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 10), 0);
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 11), 1);
	KUNIT_EXPECT_EQ(test, pt->users[0].held, SZ_1M);
	KUNIT_EXPECT_EQ(test, pt->users[1].held, SZ_1M);

	/* Alone waiting, it is not held to a share. */
	rtrs_srv_pool_put(pt_req(pt, 7));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 10), 1);
	KUNIT_EXPECT_EQ(test, pt->users[0].held, SZ_1M + SZ_256K);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
}

/*
 * A whole-block request is not overtaken by smaller ones that came
 * after it, of its user or another, while the room it needs frees up;
 * it gets the block when the block is free, and they come after.
 */
static void big_not_overtaken(struct kunit *test)
{
	struct pool_test *pt = test->priv;

	pt_start(test, 1);
	pt_fill(test, 1);
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 1, 2, SZ_512K));
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 2, 2, SZ_512K));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 3, 0, SZ_1M));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 4, 0, PAGE_SIZE));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 5, 1, PAGE_SIZE));

	/* Half the block is free: the small ones would fit, but wait. */
	rtrs_srv_pool_put(pt_req(pt, 1));
	KUNIT_EXPECT_EQ(test, pt->nr_order, 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 3);

	rtrs_srv_pool_put(pt_req(pt, 2));
	KUNIT_ASSERT_EQ(test, pt->nr_order, 1);
	KUNIT_EXPECT_PTR_EQ(test, pt->order[0], pt_req(pt, 3));
	KUNIT_ASSERT_NOT_NULL(test, pt_req(pt, 3)->buf);
	memset(pt_req(pt, 3)->buf, 0xa5, SZ_1M);
	KUNIT_EXPECT_NULL(test, memchr_inv(pt_req(pt, 3)->buf, 0xa5, SZ_1M));

	/* Then the other user's turn, then its own small one. */
	rtrs_srv_pool_put(pt_req(pt, 3));
	KUNIT_ASSERT_EQ(test, pt->nr_order, 3);
	KUNIT_EXPECT_PTR_EQ(test, pt->order[1], pt_req(pt, 5));
	KUNIT_EXPECT_PTR_EQ(test, pt->order[2], pt_req(pt, 4));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
}

/*
 * A waiter cancelled never gets a buffer, and the room it waited for
 * goes to those behind it at once; a request granted is not cancelled.
 */
static void cancel_waiter(struct kunit *test)
{
	struct pool_test *pt = test->priv;

	pt_start(test, 1);
	pt_fill(test, 1);
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 1, 2, SZ_512K));
	KUNIT_ASSERT_TRUE(test, pt_get(pt, 2, 2, SZ_512K));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 3, 0, SZ_1M));
	KUNIT_EXPECT_FALSE(test, pt_get(pt, 4, 1, PAGE_SIZE));
	rtrs_srv_pool_put(pt_req(pt, 1));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 4), 0);

	KUNIT_EXPECT_TRUE(test, rtrs_srv_pool_cancel(pt_req(pt, 3)));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 4), 1);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).waiters, 0);
	KUNIT_EXPECT_FALSE(test, rtrs_srv_pool_cancel(pt_req(pt, 3)));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_pool_cancel(pt_req(pt, 4)));
	KUNIT_EXPECT_NOT_NULL(test, pt_req(pt, 4)->buf);

	/* Room for a whole block later: nothing for the cancelled one. */
	rtrs_srv_pool_put(pt_req(pt, 2));
	rtrs_srv_pool_put(pt_req(pt, 4));
	KUNIT_EXPECT_EQ(test, pt_calls(pt, 3), 0);
	KUNIT_EXPECT_NULL(test, pt_req(pt, 3)->buf);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).held, 0);
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, 0);
}

/*
 * Everything put back, the pool holds nothing and counts no user; its
 * destruction frees every block.
 */
static void destroy_frees(struct kunit *test)
{
	struct pool_test *pt = test->priv;
	struct rtrs_srv_pool_stats st;
	unsigned int i;

	pt_start(test, 2);
	pt_fill(test, 2);
	for (i = 2; i < 8; i++)
		KUNIT_ASSERT_TRUE(test, pt_get(pt, i, i % PT_USERS, SZ_128K));
	KUNIT_EXPECT_EQ(test, pt_usage(pt).users, PT_USERS);
	for (i = 2; i < 8; i++)
		rtrs_srv_pool_put(pt_req(pt, i));

	st = pt_usage(pt);
	KUNIT_EXPECT_EQ(test, st.held, 0);
	KUNIT_EXPECT_EQ(test, st.users, 0);
	KUNIT_EXPECT_EQ(test, st.waiters, 0);
	KUNIT_EXPECT_EQ(test, st.allocated, 2 * SZ_1M);
	KUNIT_EXPECT_EQ(test, st.limit, 2 * SZ_1M);

	for (i = 0; i < PT_USERS; i++)
		rtrs_srv_pool_user_exit(&pt->users[i]);
	rtrs_srv_pool_destroy(&pt->pool);
	pt->up = false;
	KUNIT_EXPECT_EQ(test, pt->pool.allocated, 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&pt->pool.blocks));
}

static struct kunit_case rtrs_srv_pool_cases[] = {
	KUNIT_CASE(grows_to_limit),
	KUNIT_CASE(sizes_round),
	KUNIT_CASE(distinct_aligned),
	KUNIT_CASE(limit_waits),
	KUNIT_CASE(fifo_in_user),
	KUNIT_CASE(round_robin),
	KUNIT_CASE(share),
	KUNIT_CASE(big_not_overtaken),
	KUNIT_CASE(cancel_waiter),
	KUNIT_CASE(destroy_frees),
	{}
};

static struct kunit_suite rtrs_srv_pool_suite = {
	.name = "rtrs-srv-pool",
	.init = pool_test_init,
	.exit = pool_test_exit,
	.test_cases = rtrs_srv_pool_cases,
};

kunit_test_suite(rtrs_srv_pool_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs server's data buffer pool");
MODULE_LICENSE("GPL");
