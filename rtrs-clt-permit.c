// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: permits.
 *
 * One permit per server chunk, kept in an sbitmap_queue: taking and
 * putting one touches per-CPU allocation hints and one bitmap word, never
 * a lock all CPUs share, and sleepers are spread over its wait queues.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "rtrs-clt.h"

static struct rtrs_permit *rtrs_clt_permit(struct rtrs_clt_sess *clt,
					   unsigned int mem_id)
{
	return clt->permits + mem_id * clt->permit_size;
}

/**
 * rtrs_clt_permits_alloc() - allocate the permits of a session
 * @clt: the session; its queue depth is known.
 *
 * Context: process context; sleeps.
 * Return: 0, or -ENOMEM.
 */
int rtrs_clt_permits_alloc(struct rtrs_clt_sess *clt)
{
	u32 i;
	int err;

	clt->permits = rtrs_fault_inject() ? NULL :
		       kcalloc(clt->queue_depth, clt->permit_size, GFP_KERNEL);
	if (!clt->permits)
		return -ENOMEM;
	for (i = 0; i < clt->queue_depth; i++)
		rtrs_clt_permit(clt, i)->mem_id = i;

	err = rtrs_fault_inject() ? -ENOMEM :
	      sbitmap_queue_init_node(&clt->permits_map, clt->queue_depth, -1,
				      false, GFP_KERNEL, NUMA_NO_NODE);
	if (err) {
		kfree(clt->permits);
		clt->permits = NULL;
		return err;
	}
	/*
	 * Wake a sleeper for every permit put, not for every batch of them:
	 * a user may hold the other permits for as long as it likes, and a
	 * waiter must not sleep until seven more come back.
	 */
	sbitmap_queue_recalculate_wake_batch(&clt->permits_map,
					     clt->queue_depth);
	return 0;
}

/**
 * rtrs_clt_permits_free() - wait for every permit and free them
 * @clt: the session, with @clt->closing set.
 *
 * Context: process context; sleeps until the user put every permit.
 */
void rtrs_clt_permits_free(struct rtrs_clt_sess *clt)
{
	if (!clt->permits)
		return;
	/* Pairs with the barrier in rtrs_clt_put_permit(). */
	smp_mb();
	wait_event(clt->permits_wait,
		   !sbitmap_any_bit_set(&clt->permits_map.sb));
	sbitmap_queue_free(&clt->permits_map);
	kfree(clt->permits);
	clt->permits = NULL;
}

static struct rtrs_permit *rtrs_clt_try_get_permit(struct rtrs_clt_sess *clt,
						   enum rtrs_clt_con_type type)
{
	struct rtrs_permit *permit;
	int bit;

	bit = __sbitmap_queue_get(&clt->permits_map);
	if (bit < 0)
		return NULL;

	permit = rtrs_clt_permit(clt, bit);
	permit->con_type = type;
	permit->cpu = raw_smp_processor_id();
	return permit;
}

static struct rtrs_permit *rtrs_clt_wait_permit(struct rtrs_clt_sess *clt,
						enum rtrs_clt_con_type type)
{
	struct rtrs_permit *permit;
	struct sbq_wait_state *ws;
	DEFINE_SBQ_WAIT(wait);

	do {
		ws = sbq_wait_ptr(&clt->permits_map, &clt->permits_wait_index);
		sbitmap_prepare_to_wait(&clt->permits_map, ws, &wait,
					TASK_UNINTERRUPTIBLE);
		permit = rtrs_clt_try_get_permit(clt, type);
		if (!permit)
			io_schedule();
		sbitmap_finish_wait(&clt->permits_map, ws, &wait);
	} while (!permit);

	return permit;
}

/**
 * rtrs_clt_get_permit() - take a permit for one request
 * @clt: the session.
 * @con_type: %RTRS_IO_CON for the IO connection of the current CPU,
 *	%RTRS_ADMIN_CON for the admin connection.
 * @wait: %RTRS_PERMIT_WAIT sleeps until a permit is free;
 *	%RTRS_PERMIT_NOWAIT returns NULL at once.
 *
 * Context: any context with %RTRS_PERMIT_NOWAIT; process context with
 * %RTRS_PERMIT_WAIT.
 * Return: the permit, or NULL when none is free and @wait is
 * %RTRS_PERMIT_NOWAIT.
 */
struct rtrs_permit *rtrs_clt_get_permit(struct rtrs_clt_sess *clt,
					enum rtrs_clt_con_type con_type,
					enum wait_type wait)
{
	struct rtrs_permit *permit;

	permit = rtrs_clt_try_get_permit(clt, con_type);
	if (permit || wait == RTRS_PERMIT_NOWAIT)
		return permit;
	return rtrs_clt_wait_permit(clt, con_type);
}
EXPORT_SYMBOL_GPL(rtrs_clt_get_permit);

/**
 * rtrs_clt_put_permit() - give a permit back
 * @clt: the session the permit came from.
 * @permit: the permit; no request may use it any more.
 *
 * Context: any context.
 */
void rtrs_clt_put_permit(struct rtrs_clt_sess *clt,
			 struct rtrs_permit *permit)
{
	if (WARN_ON_ONCE(!permit))
		return;

	sbitmap_queue_clear(&clt->permits_map, permit->mem_id, permit->cpu);
	/* The cleared bit is visible before @clt->closing is read. */
	smp_mb__after_atomic();
	if (READ_ONCE(clt->closing))
		wake_up(&clt->permits_wait);
}
EXPORT_SYMBOL_GPL(rtrs_clt_put_permit);
