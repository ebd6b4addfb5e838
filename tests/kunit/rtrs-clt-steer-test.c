// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: which IO connection a client request goes on.
 *
 * IO connection n + 1 serves CPU n; a request whose own connection's
 * responses are taken on another CPU goes on a connection whose responses
 * are taken on its CPU, when there is one (rtrs_clt_steer_note(),
 * rtrs_clt_steer_con() in rtrs-clt.h).  This suite builds a path of two
 * CPUs, an admin connection and a poll connection, lets responses be
 * taken on chosen CPUs and checks the connection each CPU's request gets.
 */
#include <kunit/test.h>

#include "rtrs-clt.h"

#define ST_CPUS		2
/* Admin, one IO connection per CPU, one poll connection. */
#define ST_CONS		(1 + ST_CPUS + 1)

struct steer_test {
	struct rtrs_clt_path	path;
	struct rtrs_clt_con	cons[ST_CONS];
	struct rtrs_con		*con_ptrs[ST_CONS];
	u16			steer[ST_CPUS];
};

static int steer_test_init(struct kunit *test)
{
	struct steer_test *st;
	int i;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	st->path.s.irq_con_num = 1 + ST_CPUS;
	st->path.s.con_num = ST_CONS;
	st->path.s.con = st->con_ptrs;
	st->path.steer = st->steer;
	for (i = 0; i < ST_CONS; i++) {
		st->cons[i].c.cid = i;
		st->cons[i].c.path = &st->path.s;
		st->cons[i].cpu = i ? (i - 1) % ST_CPUS : 0;
		st->cons[i].rsp_cpu = -1;
		st->con_ptrs[i] = &st->cons[i].c;
	}
	test->priv = st;
	return 0;
}

/* A request of @cpu goes on connection @cid, steered or not. */
static void expect_pick(struct kunit *test, unsigned int cpu, int cid,
			bool steered)
{
	struct steer_test *st = test->priv;
	bool was = !steered;

	KUNIT_EXPECT_EQ(test, rtrs_clt_steer_con(&st->path, cpu, &was)->c.cid,
			cid);
	KUNIT_EXPECT_EQ(test, was, steered);
}

static void took(struct kunit *test, int cid, unsigned int cpu)
{
	struct steer_test *st = test->priv;

	rtrs_clt_steer_note(&st->path, &st->cons[cid], cpu);
}

/* Each connection's responses taken on the other CPU. */
static void crossed(struct kunit *test)
{
	took(test, 1, 1);
	took(test, 2, 0);
}

/* Before any response, each CPU has its own connection. */
static void own_before_responses(struct kunit *test)
{
	expect_pick(test, 0, 1, false);
	expect_pick(test, 1, 2, false);
}

/* Crossed flows: the CPUs swap connections. */
static void crossed_flows_swap(struct kunit *test)
{
	crossed(test);
	expect_pick(test, 0, 2, true);
	expect_pick(test, 1, 1, true);
}

/* Both connections answered on CPU 1: CPU 0 has none better than its own. */
static void no_better_connection(struct kunit *test)
{
	took(test, 1, 1);
	took(test, 2, 1);
	expect_pick(test, 0, 1, false);
	expect_pick(test, 1, 2, false);
}

/* A CPU whose own connection answers on it keeps it, whatever the hint. */
static void own_connection_first(struct kunit *test)
{
	struct steer_test *st = test->priv;

	took(test, 2, 0);
	took(test, 1, 0);
	KUNIT_EXPECT_EQ(test, st->steer[0], 2);
	expect_pick(test, 0, 1, false);
}

/* The hint is not followed once its connection answers elsewhere. */
static void stale_hint_ignored(struct kunit *test)
{
	crossed(test);
	expect_pick(test, 0, 2, true);
	took(test, 2, 1);
	expect_pick(test, 0, 1, false);
}

/* A hinted connection torn down (its slot empty) is not used. */
static void gone_connection_ignored(struct kunit *test)
{
	struct steer_test *st = test->priv;

	crossed(test);
	st->con_ptrs[2] = NULL;
	expect_pick(test, 0, 1, false);
}

/* Responses of the admin and poll connections leave the hints alone. */
static void admin_and_poll_not_hinted(struct kunit *test)
{
	struct steer_test *st = test->priv;

	took(test, 1, 1);
	took(test, 0, 0);
	took(test, ST_CONS - 1, 0);
	KUNIT_EXPECT_EQ(test, st->steer[0], 0);
	KUNIT_EXPECT_EQ(test, st->cons[0].rsp_cpu, 0);
	expect_pick(test, 0, 1, false);
}

/* A CPU beyond the path's IO connections is neither hinted nor steered. */
static void cpu_out_of_range(struct kunit *test)
{
	struct steer_test *st = test->priv;

	took(test, 1, ST_CPUS);
	KUNIT_EXPECT_EQ(test, st->cons[1].rsp_cpu, ST_CPUS);
	KUNIT_EXPECT_EQ(test, st->steer[0] + st->steer[1], 0);
	expect_pick(test, ST_CPUS, 1, false);
}

static struct kunit_case rtrs_clt_steer_cases[] = {
	KUNIT_CASE(own_before_responses),
	KUNIT_CASE(crossed_flows_swap),
	KUNIT_CASE(no_better_connection),
	KUNIT_CASE(own_connection_first),
	KUNIT_CASE(stale_hint_ignored),
	KUNIT_CASE(gone_connection_ignored),
	KUNIT_CASE(admin_and_poll_not_hinted),
	KUNIT_CASE(cpu_out_of_range),
	{}
};

static struct kunit_suite rtrs_clt_steer_suite = {
	.name = "rtrs-clt-steer",
	.init = steer_test_init,
	.test_cases = rtrs_clt_steer_cases,
};

kunit_test_suite(rtrs_clt_steer_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs client's connection steering");
MODULE_LICENSE("GPL");
