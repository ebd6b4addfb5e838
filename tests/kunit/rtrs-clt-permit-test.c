// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the client's reserve, quarantine and orphan chunks.
 *
 * A request that failed over completes in another chunk than the one it
 * was first sent in, and that chunk stays out of use until the failed
 * path connects again (rtrs-clt-permit.c).  These cases run a session's
 * permits without a server: they fail a path under chosen requests,
 * complete them, reconnect or remove the path, and check after each step
 * that every chunk belongs to exactly one permit and that no permit the
 * user can take uses a chunk that a stale operation may still own.
 *
 * The module compiles the source in, with its tracepoints and exports
 * turned off, rather than have rtrs-client.ko export these for it.
 */
#define NOTRACE

#include <linux/export.h>

#undef EXPORT_SYMBOL_GPL
#define EXPORT_SYMBOL_GPL(sym)

/* Before other headers: it sets its pr_fmt before any header prints. */
#include "rtrs-clt-permit.c"

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/slab.h>

#define PT_PATHS	2

struct permit_test {
	struct rtrs_clt_sess	*clt;
	struct rtrs_clt_path	*paths[PT_PATHS];
	/* Permits the case took as the user, given back at its exit. */
	struct rtrs_permit	**user;
	u32			nr_user;
};

static int permit_test_init(struct kunit *test)
{
	struct permit_test *pt;
	u32 i;

	pt = kunit_kzalloc(test, sizeof(*pt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt);
	pt->clt = kunit_kzalloc(test, sizeof(*pt->clt), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt->clt);
	INIT_LIST_HEAD(&pt->clt->paths_list);
	init_waitqueue_head(&pt->clt->permits_wait);
	spin_lock_init(&pt->clt->chunks_lock);
	INIT_LIST_HEAD(&pt->clt->reserve);
	INIT_LIST_HEAD(&pt->clt->orphans);
	pt->clt->permit_size = ALIGN(sizeof(struct rtrs_permit),
				     sizeof(long));
	for (i = 0; i < PT_PATHS; i++) {
		pt->paths[i] = kunit_kzalloc(test, sizeof(*pt->paths[i]),
					     GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pt->paths[i]);
		pt->paths[i]->clt = pt->clt;
		INIT_LIST_HEAD(&pt->paths[i]->quarantine);
		list_add_tail(&pt->paths[i]->entry, &pt->clt->paths_list);
	}
	test->priv = pt;
	return 0;
}

/* Permits of @depth chunks, and room to hold all of them as the user. */
static void pt_start(struct kunit *test, u32 depth)
{
	struct permit_test *pt = test->priv;

	pt->clt->queue_depth = depth;
	pt->user = kunit_kcalloc(test, depth, sizeof(*pt->user), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pt->user);
	KUNIT_ASSERT_EQ(test, rtrs_clt_permits_alloc(pt->clt), 0);
}

/* What the user gives back, then what the session withheld, is freed. */
static void permit_test_exit(struct kunit *test)
{
	struct permit_test *pt = test->priv;

	if (!pt->clt->permits)
		return;
	while (pt->nr_user)
		rtrs_clt_put_permit(pt->clt, pt->user[--pt->nr_user]);
	WRITE_ONCE(pt->clt->closing, true);
	rtrs_clt_permits_free(pt->clt);
}

/* Take one permit as the user would; NULL when none is left. */
static struct rtrs_permit *pt_take(struct permit_test *pt)
{
	struct rtrs_permit *permit;

	permit = rtrs_clt_get_permit(pt->clt, RTRS_IO_CON, RTRS_PERMIT_NOWAIT);
	if (permit)
		pt->user[pt->nr_user++] = permit;
	return permit;
}

/* Give back the last permit taken. */
static void pt_put_last(struct permit_test *pt)
{
	rtrs_clt_put_permit(pt->clt, pt->user[--pt->nr_user]);
}

/*
 * Take every permit left to the user, check that none uses @chunk, give
 * them back; return how many there were.
 */
static u32 pt_free_avoid(struct kunit *test, u32 chunk)
{
	struct permit_test *pt = test->priv;
	struct rtrs_permit *permit;
	u32 i, n = 0;

	while ((permit = pt_take(pt))) {
		KUNIT_EXPECT_NE_MSG(test, permit->chunk, chunk,
				    "permit %u uses a quarantined chunk",
				    permit->mem_id);
		n++;
	}
	for (i = 0; i < n; i++)
		pt_put_last(pt);
	return n;
}

/* Every chunk belongs to exactly one permit. */
static void pt_expect_chunks(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_clt_sess *clt = pt->clt;
	unsigned long *seen;
	u32 i, chunk;

	seen = bitmap_zalloc(clt->queue_depth, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (i = 0; i < clt->queue_depth; i++) {
		chunk = rtrs_clt_permit(clt, i)->chunk;
		if (chunk >= clt->queue_depth || test_bit(chunk, seen)) {
			KUNIT_FAIL(test, "permit %u has chunk %u, out of range or twice",
				   i, chunk);
			continue;
		}
		set_bit(chunk, seen);
	}
	bitmap_free(seen);
}

static u32 pt_list_len(struct rtrs_clt_sess *clt, struct list_head *list)
{
	struct rtrs_permit *permit;
	u32 n = 0;

	spin_lock_irq(&clt->chunks_lock);
	list_for_each_entry(permit, list, entry)
		n++;
	spin_unlock_irq(&clt->chunks_lock);
	return n;
}

/* One in sixteen permits is kept for failovers, at least 1, at most 32. */
static void reserve_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(1), 0);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(2), 1);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(31), 1);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(32), 2);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(128), 8);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(512), 32);
	KUNIT_EXPECT_EQ(test, rtrs_clt_reserve_size(4096), 32);
}

/* The user gets queue_depth - reserve permits, none of the reserve's. */
static void reserve_withheld(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_permit *permit;
	u32 n = 0;

	pt_start(test, 64);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 4);
	while ((permit = pt_take(pt))) {
		KUNIT_EXPECT_LT(test, permit->mem_id, 60);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 60);
	KUNIT_EXPECT_EQ(test, pt_list_len(pt->clt, &pt->clt->reserve), 4);
	pt_expect_chunks(test);
}

/*
 * A request in flight on a failed path is sent again in its own chunk;
 * when it completes it moves to the spare's chunk, and its old chunk is
 * out of the user's reach until the path connects again.
 */
static void failover_quarantines(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_clt_path *a = pt->paths[0];
	struct rtrs_permit *permit;
	u32 old;

	pt_start(test, 16);
	permit = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, permit);
	old = permit->chunk;

	rtrs_clt_chunk_quarantine(a, permit);
	KUNIT_ASSERT_NOT_NULL(test, permit->spare);
	KUNIT_EXPECT_EQ(test, permit->chunk, old);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 0);

	rtrs_clt_chunk_move(pt->clt, permit);
	KUNIT_EXPECT_NULL(test, permit->spare);
	KUNIT_EXPECT_NE(test, permit->chunk, old);
	KUNIT_EXPECT_EQ(test, a->quarantined, 1);
	KUNIT_EXPECT_EQ(test, pt_list_len(pt->clt, &a->quarantine), 1);
	pt_expect_chunks(test);

	/* The user, holding its permit, gets the 14 others, none in @old. */
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, old), 14);
	pt_put_last(pt);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, old), 15);

	rtrs_clt_chunks_release(a);
	KUNIT_EXPECT_EQ(test, a->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 1);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, U32_MAX), 15);
	pt_expect_chunks(test);
}

/* A path that connected again before the request completed owns nothing. */
static void reconnected_first(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_clt_path *a = pt->paths[0];
	struct rtrs_permit *permit;

	pt_start(test, 16);
	permit = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, permit);
	rtrs_clt_chunk_quarantine(a, permit);
	rtrs_clt_chunks_release(a);
	rtrs_clt_chunk_move(pt->clt, permit);
	KUNIT_EXPECT_EQ(test, a->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 1);
	KUNIT_EXPECT_TRUE(test, list_empty(&pt->clt->orphans));
	pt_expect_chunks(test);
}

/*
 * A request whose second path fails too may have stale copies on both:
 * its old chunk is kept until the session ends.
 */
static void second_failover_orphans(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_permit *permit;
	u32 old;

	pt_start(test, 16);
	permit = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, permit);
	old = permit->chunk;
	rtrs_clt_chunk_quarantine(pt->paths[0], permit);
	rtrs_clt_chunk_quarantine(pt->paths[1], permit);
	rtrs_clt_chunk_move(pt->clt, permit);
	KUNIT_EXPECT_EQ(test, pt->paths[0]->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt->paths[1]->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt_list_len(pt->clt, &pt->clt->orphans), 1);
	rtrs_clt_chunks_release(pt->paths[0]);
	rtrs_clt_chunks_release(pt->paths[1]);
	pt_put_last(pt);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, old), 15);
	pt_expect_chunks(test);
}

/*
 * A path removed before it connected again leaves its quarantine, and
 * the moves still to come, to the session's orphans.
 */
static void removed_path_orphans(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_clt_path *a = pt->paths[0];
	struct rtrs_permit *p1, *p2;
	u32 old1, old2;

	pt_start(test, 32);
	p1 = pt_take(pt);
	p2 = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, p1);
	KUNIT_ASSERT_NOT_NULL(test, p2);
	old1 = p1->chunk;
	old2 = p2->chunk;
	rtrs_clt_chunk_quarantine(a, p1);
	rtrs_clt_chunk_quarantine(a, p2);
	rtrs_clt_chunk_move(pt->clt, p1);
	KUNIT_EXPECT_EQ(test, a->quarantined, 1);

	rtrs_clt_chunks_orphan(a);
	KUNIT_EXPECT_EQ(test, a->quarantined, 0);
	rtrs_clt_chunk_move(pt->clt, p2);
	KUNIT_EXPECT_EQ(test, a->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt_list_len(pt->clt, &pt->clt->orphans), 2);

	pt_put_last(pt);
	pt_put_last(pt);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, old1), 30);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, old2), 30);
	pt_expect_chunks(test);
}

/*
 * With the reserve used up, a spare is a permit taken from the user's:
 * when the quarantine ends the reserve is refilled first, and the rest
 * goes back to the user.
 */
static void reserve_empty(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_clt_path *a = pt->paths[0];
	struct rtrs_permit *p1, *p2;

	pt_start(test, 16);
	p1 = pt_take(pt);
	p2 = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, p1);
	KUNIT_ASSERT_NOT_NULL(test, p2);
	rtrs_clt_chunk_quarantine(a, p1);
	rtrs_clt_chunk_quarantine(a, p2);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 0);
	/* 15 for the user, 2 in use, 1 a spare. */
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, U32_MAX), 12);
	rtrs_clt_chunk_move(pt->clt, p1);
	rtrs_clt_chunk_move(pt->clt, p2);
	KUNIT_EXPECT_EQ(test, a->quarantined, 2);
	pt_expect_chunks(test);

	rtrs_clt_chunks_release(a);
	KUNIT_EXPECT_EQ(test, a->quarantined, 0);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_num, 1);
	KUNIT_EXPECT_EQ(test, pt_free_avoid(test, U32_MAX), 13);
}

/* A session of one chunk has no reserve: the request stays where it is. */
static void single_chunk(struct kunit *test)
{
	struct permit_test *pt = test->priv;
	struct rtrs_permit *permit;

	pt_start(test, 1);
	KUNIT_EXPECT_EQ(test, pt->clt->reserve_max, 0);
	permit = pt_take(pt);
	KUNIT_ASSERT_NOT_NULL(test, permit);
	rtrs_clt_chunk_quarantine(pt->paths[0], permit);
	KUNIT_EXPECT_NULL(test, permit->spare);
	rtrs_clt_chunk_move(pt->clt, permit);
	KUNIT_EXPECT_EQ(test, permit->chunk, 0);
	KUNIT_EXPECT_EQ(test, pt->paths[0]->quarantined, 0);
}

static struct kunit_case rtrs_clt_permit_cases[] = {
	KUNIT_CASE(reserve_sizes),
	KUNIT_CASE(reserve_withheld),
	KUNIT_CASE(failover_quarantines),
	KUNIT_CASE(reconnected_first),
	KUNIT_CASE(second_failover_orphans),
	KUNIT_CASE(removed_path_orphans),
	KUNIT_CASE(reserve_empty),
	KUNIT_CASE(single_chunk),
	{}
};

static struct kunit_suite rtrs_clt_permit_suite = {
	.name = "rtrs-clt-permit",
	.init = permit_test_init,
	.exit = permit_test_exit,
	.test_cases = rtrs_clt_permit_cases,
};

kunit_test_suite(rtrs_clt_permit_suite);

MODULE_DESCRIPTION("KUnit tests of the rtrs client's failover chunks");
MODULE_LICENSE("GPL");
