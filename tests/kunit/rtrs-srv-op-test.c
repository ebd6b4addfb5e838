// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: taking the handle of a request that has just come, while
 * the response of the request before on its id is being posted on
 * another CPU (rtrs_srv_op_take()).
 *
 * The case that matters needs two CPUs, one for each side: the suite runs
 * in the guest of tests/e2e/session.sh, which has two, not in that of
 * tests/e2e/kunit.sh.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>

#include "rtrs-srv.h"

/*
 * A handle whose request's response is being posted: the poster holds its
 * connection's rsp_post_lock from the post until it has released the
 * handle, for TAKE_WINDOW_MS here, as long as a virtual CPU may stop
 * there.  The client can have the response, and its next request for the
 * id be here, meanwhile.
 */
#define TAKE_WINDOW_MS	50
#define TAKE_TRIES	5

struct take_test {
	struct rtrs_srv_con	con;
	struct rtrs_srv_op	op;
	atomic_t		posting;
	bool			released;
	struct completion	done;
};

static int take_poster(void *arg)
{
	struct take_test *tt = arg;
	unsigned long flags;

	spin_lock_irqsave(&tt->con.rsp_post_lock, flags);
	atomic_set(&tt->posting, 1);
	mdelay(TAKE_WINDOW_MS);
	WRITE_ONCE(tt->released, true);
	clear_bit_unlock(0, &tt->op.busy);
	spin_unlock_irqrestore(&tt->con.rsp_post_lock, flags);
	complete(&tt->done);
	return 0;
}

static struct take_test *take_test_new(struct kunit *test)
{
	struct take_test *tt = kunit_kzalloc(test, sizeof(*tt), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tt);
	spin_lock_init(&tt->con.rsp_post_lock);
	init_completion(&tt->done);
	set_bit(0, &tt->op.busy);
	return tt;
}

/*
 * One try of take_after_release(): the poster on another CPU than this
 * thread's, which stays where it is meanwhile.  False when this thread
 * came too late, after the release, and so tested nothing.
 */
static bool take_try(struct kunit *test)
{
	struct take_test *tt = take_test_new(test);
	struct task_struct *t;
	bool late, taken, released;
	int cpu;

	tt->op.con = &tt->con;
	migrate_disable();
	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	t = kthread_create(take_poster, tt, "rtrs-take-test");
	if (IS_ERR(t)) {
		migrate_enable();
		KUNIT_FAIL(test, "no poster thread: %ld", PTR_ERR(t));
		return true;
	}
	kthread_bind(t, cpu);
	wake_up_process(t);
	/* From here the poster holds its CPU, with interrupts off. */
	while (!atomic_read(&tt->posting))
		usleep_range(100, 200);
	late = READ_ONCE(tt->released);
	taken = rtrs_srv_op_take(&tt->op);
	released = READ_ONCE(tt->released);
	migrate_enable();
	wait_for_completion(&tt->done);
	if (late)
		return false;
	KUNIT_EXPECT_TRUE(test, taken);
	KUNIT_EXPECT_TRUE(test, released);
	KUNIT_EXPECT_TRUE(test, test_bit(0, &tt->op.busy));
	return true;
}

/*
 * The request that comes between the post and the release gets the
 * handle once it is released: not before, and not never (the protocol
 * violation a plain test of the busy bit would call it).  A try this
 * thread reached only after the release is done again, a few times.
 */
static void take_after_release(struct kunit *test)
{
	int i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "the poster needs a CPU of its own");
	for (i = 0; i < TAKE_TRIES; i++)
		if (take_try(test))
			return;
	KUNIT_FAIL(test, "%d tries all came after the release", TAKE_TRIES);
}

/* A handle held by a request with no response being posted stays held. */
static void take_refused_while_held(struct kunit *test)
{
	struct take_test *tt = take_test_new(test);

	/* Never used before: no connection to wait on. */
	KUNIT_EXPECT_FALSE(test, rtrs_srv_op_take(&tt->op));
	tt->op.con = &tt->con;
	KUNIT_EXPECT_FALSE(test, rtrs_srv_op_take(&tt->op));
	KUNIT_EXPECT_TRUE(test, test_bit(0, &tt->op.busy));
	clear_bit_unlock(0, &tt->op.busy);
	KUNIT_EXPECT_TRUE(test, rtrs_srv_op_take(&tt->op));
	KUNIT_EXPECT_FALSE(test, rtrs_srv_op_take(&tt->op));
}

static struct kunit_case rtrs_srv_op_take_cases[] = {
	KUNIT_CASE(take_after_release),
	KUNIT_CASE(take_refused_while_held),
	{}
};

static struct kunit_suite rtrs_srv_op_take_suite = {
	.name = "rtrs-srv-op-take",
	.test_cases = rtrs_srv_op_take_cases,
};

kunit_test_suite(rtrs_srv_op_take_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs server's request handles");
MODULE_LICENSE("GPL");
