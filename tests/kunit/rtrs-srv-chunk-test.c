// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the server's per-session chunk owners.
 *
 * Every path of a session uses the same chunks, so a request owns its
 * chunk for the whole session from its arrival until it ends, and a
 * request for the chunk on another path meanwhile (a client's failover)
 * waits and is handed the chunk, in arrival order, when the owner ends
 * (rtrs-srv-chunk.c).  These cases drive rtrs_srv_chunk_take(),
 * rtrs_srv_chunk_give_up() and rtrs_srv_chunk_unwait() on a session of
 * their own and watch which request's work runs.
 *
 * Like the validate suites, the module compiles the source in rather than
 * have rtrs-server.ko export these for it; it brings the workqueue the
 * server would queue the handed requests on.
 */
/* First: it sets its pr_fmt before any header prints. */
#include "rtrs-srv-chunk.c"

#include <kunit/test.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

struct workqueue_struct *rtrs_srv_wq;

#define CT_DEPTH	4
#define CT_OPS		4

/*
 * A session of CT_DEPTH chunks and, for each of CT_OPS paths, the
 * request for every chunk.  @ran records the requests whose work ran,
 * in order.
 */
struct chunk_test {
	struct rtrs_srv_sess	sess;
	struct rtrs_srv_op	ops[CT_OPS][CT_DEPTH];
	spinlock_t		lock;	/* ran, nr_ran */
	struct rtrs_srv_op	*ran[CT_OPS * CT_DEPTH];
	unsigned int		nr_ran;
};

static struct chunk_test *ct_of_work;

static void ct_run(struct work_struct *work)
{
	struct rtrs_srv_op *op = container_of(work, struct rtrs_srv_op,
					      run_work);
	struct chunk_test *ct = ct_of_work;

	spin_lock(&ct->lock);
	if (ct->nr_ran < ARRAY_SIZE(ct->ran))
		ct->ran[ct->nr_ran++] = op;
	spin_unlock(&ct->lock);
}

static int chunk_test_init(struct kunit *test)
{
	struct chunk_test *ct;
	u32 p, i;

	ct = kunit_kzalloc(test, sizeof(*ct), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ct);
	spin_lock_init(&ct->lock);
	ct->sess.queue_depth = CT_DEPTH;
	KUNIT_ASSERT_EQ(test, rtrs_srv_alloc_owners(&ct->sess), 0);
	for (p = 0; p < CT_OPS; p++) {
		for (i = 0; i < CT_DEPTH; i++) {
			struct rtrs_srv_op *op = &ct->ops[p][i];

			op->msg_id = i;
			INIT_LIST_HEAD(&op->chunk_entry);
			INIT_WORK(&op->run_work, ct_run);
		}
	}
	rtrs_srv_wq = alloc_workqueue("rtrs_srv_chunk_test", 0, 0);
	if (!rtrs_srv_wq) {
		kfree(ct->sess.owners);
		KUNIT_ASSERT_NOT_NULL(test, rtrs_srv_wq);
	}
	ct_of_work = ct;
	test->priv = ct;
	return 0;
}

static void chunk_test_exit(struct kunit *test)
{
	struct chunk_test *ct = test->priv;

	destroy_workqueue(rtrs_srv_wq);
	rtrs_srv_wq = NULL;
	kfree(ct->sess.owners);
	ct_of_work = NULL;
}

/* Run what was handed and return how many requests ran in all. */
static unsigned int ct_flush(struct chunk_test *ct)
{
	flush_workqueue(rtrs_srv_wq);
	return ct->nr_ran;
}

static struct rtrs_srv_op *ct_owner(struct chunk_test *ct, u32 id)
{
	return ct->sess.owners[id].owner;
}

/* A free chunk is taken at once; chunks are owned apart. */
static void take_free(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	u32 i;

	for (i = 0; i < CT_DEPTH; i++) {
		KUNIT_EXPECT_TRUE(test, rtrs_srv_chunk_take(&ct->sess,
							    &ct->ops[i][i]));
		KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, i), &ct->ops[i][i]);
	}
	for (i = 0; i < CT_DEPTH; i++) {
		rtrs_srv_chunk_give_up(&ct->sess, &ct->ops[i][i]);
		KUNIT_EXPECT_NULL(test, ct_owner(ct, i));
	}
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 0);
}

/*
 * A request for a chunk another path's request owns does not run; it is
 * handed the chunk, and run from its work, only when the owner ends.
 */
static void wait_then_handed(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	struct rtrs_srv_op *first = &ct->ops[0][2], *again = &ct->ops[1][2];

	KUNIT_ASSERT_TRUE(test, rtrs_srv_chunk_take(&ct->sess, first));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess, again));
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 2), first);
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 0);

	rtrs_srv_chunk_give_up(&ct->sess, first);
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 2), again);
	KUNIT_ASSERT_EQ(test, ct_flush(ct), 1);
	KUNIT_EXPECT_PTR_EQ(test, ct->ran[0], again);

	rtrs_srv_chunk_give_up(&ct->sess, again);
	KUNIT_EXPECT_NULL(test, ct_owner(ct, 2));
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 1);
}

/* Waiters are handed the chunk one at a time, in the order they came. */
static void handed_in_order(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	u32 p;

	KUNIT_ASSERT_TRUE(test, rtrs_srv_chunk_take(&ct->sess, &ct->ops[2][1]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess, &ct->ops[0][1]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess, &ct->ops[3][1]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess, &ct->ops[1][1]));

	rtrs_srv_chunk_give_up(&ct->sess, &ct->ops[2][1]);
	KUNIT_ASSERT_EQ(test, ct_flush(ct), 1);
	KUNIT_EXPECT_PTR_EQ(test, ct->ran[0], &ct->ops[0][1]);
	/* The next waiter waits for the one handed the chunk, not less. */
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 1), &ct->ops[0][1]);

	for (p = 0; p < CT_OPS - 1; p++)
		rtrs_srv_chunk_give_up(&ct->sess, ct_owner(ct, 1));
	KUNIT_ASSERT_EQ(test, ct_flush(ct), 3);
	KUNIT_EXPECT_PTR_EQ(test, ct->ran[1], &ct->ops[3][1]);
	KUNIT_EXPECT_PTR_EQ(test, ct->ran[2], &ct->ops[1][1]);
	KUNIT_EXPECT_NULL(test, ct_owner(ct, 1));
}

/*
 * A request that does not own its chunk gives nothing up: ending a
 * waiter, or a request twice, leaves the owner where it is.
 */
static void give_up_not_owner(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	struct rtrs_srv_op *owner = &ct->ops[0][3], *waiter = &ct->ops[1][3];

	KUNIT_ASSERT_TRUE(test, rtrs_srv_chunk_take(&ct->sess, owner));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess, waiter));
	rtrs_srv_chunk_give_up(&ct->sess, waiter);
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 3), owner);
	rtrs_srv_chunk_give_up(&ct->sess, &ct->ops[2][3]);
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 3), owner);
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 0);

	rtrs_srv_chunk_give_up(&ct->sess, owner);
	rtrs_srv_chunk_give_up(&ct->sess, owner);
	KUNIT_EXPECT_PTR_EQ(test, ct_owner(ct, 3), waiter);
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 1);
	rtrs_srv_chunk_give_up(&ct->sess, waiter);
	KUNIT_EXPECT_NULL(test, ct_owner(ct, 3));
}

/*
 * A waiter of a closing path stops waiting and is never handed the
 * chunk; one that is not waiting (owner, handed, or never came) is not
 * reported as waiting.
 */
static void unwait(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	struct rtrs_srv_op *owner = &ct->ops[0][0];

	KUNIT_ASSERT_TRUE(test, rtrs_srv_chunk_take(&ct->sess, owner));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess,
						     &ct->ops[1][0]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess,
						     &ct->ops[2][0]));

	KUNIT_EXPECT_TRUE(test, rtrs_srv_chunk_unwait(&ct->sess,
						      &ct->ops[1][0]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_unwait(&ct->sess,
						       &ct->ops[1][0]));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_unwait(&ct->sess, owner));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_unwait(&ct->sess,
						       &ct->ops[3][0]));

	rtrs_srv_chunk_give_up(&ct->sess, owner);
	KUNIT_ASSERT_EQ(test, ct_flush(ct), 1);
	KUNIT_EXPECT_PTR_EQ(test, ct->ran[0], &ct->ops[2][0]);
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_unwait(&ct->sess,
						       &ct->ops[2][0]));

	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_take(&ct->sess,
						     &ct->ops[3][0]));
	KUNIT_EXPECT_TRUE(test, rtrs_srv_chunk_unwait(&ct->sess,
						      &ct->ops[3][0]));
	rtrs_srv_chunk_give_up(&ct->sess, &ct->ops[2][0]);
	KUNIT_EXPECT_NULL(test, ct_owner(ct, 0));
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 1);
}

/* A session whose chunks were never allocated has nothing to give up. */
static void no_owners(struct kunit *test)
{
	struct chunk_test *ct = test->priv;
	struct rtrs_srv_sess bare = { .queue_depth = CT_DEPTH };

	rtrs_srv_chunk_give_up(&bare, &ct->ops[0][0]);
	KUNIT_EXPECT_FALSE(test, rtrs_srv_chunk_unwait(&bare, &ct->ops[0][0]));
	KUNIT_EXPECT_EQ(test, ct_flush(ct), 0);
}

static struct kunit_case rtrs_srv_chunk_cases[] = {
	KUNIT_CASE(take_free),
	KUNIT_CASE(wait_then_handed),
	KUNIT_CASE(handed_in_order),
	KUNIT_CASE(give_up_not_owner),
	KUNIT_CASE(unwait),
	KUNIT_CASE(no_owners),
	{}
};

static struct kunit_suite rtrs_srv_chunk_suite = {
	.name = "rtrs-srv-chunk",
	.init = chunk_test_init,
	.exit = chunk_test_exit,
	.test_cases = rtrs_srv_chunk_cases,
};

kunit_test_suite(rtrs_srv_chunk_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs server's chunk owners");
MODULE_LICENSE("GPL");
