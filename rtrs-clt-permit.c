// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: permits.
 *
 * One permit per server chunk, kept in an sbitmap_queue: taking and
 * putting one touches per-CPU allocation hints and one bitmap word, never
 * a lock all CPUs share, and sleepers are spread over its wait queues.
 *
 * A permit's requests use its chunk, on whichever path they go.  When a
 * path fails, a request it had in flight is sent again over another path,
 * but the failed path's server side may still run the first copy (a slow
 * disk holding a bio built on the chunk's pages) after the second one
 * completed and the permit was used again: the old operation would then
 * store or overwrite the new request's data.  So the request, sent again
 * in its own chunk (a server of ours runs the second copy after the
 * first), moves to another chunk when it completes, and its old one stays
 * in the failed path's quarantine, withheld from the user, until that
 * path connects again: a server
 * accepts a path only once the earlier path of the same client address
 * (mainline) or session path (ours) is gone, with all its operations.
 * The chunks to move to come from a reserve of permits never given to
 * the user, refilled from a quarantine as it ends, else from a free
 * permit, taken as the user would.  See "Failover and chunks" in
 * Documentation/rtrs.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/topology.h>

#include "rtrs-clt.h"
#include "trace/clt.h"

static struct rtrs_permit *rtrs_clt_permit(struct rtrs_clt_sess *clt,
					   unsigned int mem_id)
{
	return clt->permits + mem_id * clt->permit_size;
}

/*
 * Permits kept for failovers: one in sixteen, at least one and at most
 * RTRS_CLT_RESERVE_MAX; none for a session of a single chunk, which has
 * nothing to spare.
 */
static u32 rtrs_clt_reserve_size(u32 queue_depth)
{
	if (queue_depth < 2)
		return 0;
	return clamp_t(u32, queue_depth / 16, 1, RTRS_CLT_RESERVE_MAX);
}

/* Withhold the last @clt->reserve_max permits from the user. */
static void rtrs_clt_reserve_init(struct rtrs_clt_sess *clt)
{
	struct rtrs_permit *permit;
	u32 i;

	clt->reserve_max = rtrs_clt_reserve_size(clt->queue_depth);
	for (i = clt->queue_depth - clt->reserve_max; i < clt->queue_depth;
	     i++) {
		permit = rtrs_clt_permit(clt, i);
		sbitmap_set_bit(&clt->permits_map.sb, i);
		list_add_tail(&permit->entry, &clt->reserve);
	}
	clt->reserve_num = clt->reserve_max;
}

/* Give the permits on @list back to the bitmap. */
static void rtrs_clt_permits_return(struct rtrs_clt_sess *clt,
				    struct list_head *list)
{
	struct rtrs_permit *permit, *tmp;

	list_for_each_entry_safe(permit, tmp, list, entry) {
		list_del_init(&permit->entry);
		permit->cpu = raw_smp_processor_id();
		rtrs_clt_put_permit(clt, permit);
	}
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
	struct rtrs_permit *permit;
	u32 i;
	int err;

	clt->permits = rtrs_kcalloc(clt->queue_depth, clt->permit_size,
				    GFP_KERNEL);
	if (!clt->permits)
		return -ENOMEM;
	for (i = 0; i < clt->queue_depth; i++) {
		permit = rtrs_clt_permit(clt, i);
		permit->mem_id = i;
		permit->chunk = i;
		INIT_LIST_HEAD(&permit->entry);
	}

	err = rtrs_fail_or(-ENOMEM,
			   sbitmap_queue_init_node(&clt->permits_map,
						   clt->queue_depth, -1, false,
						   GFP_KERNEL, NUMA_NO_NODE));
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
	rtrs_clt_reserve_init(clt);
	return 0;
}

/**
 * rtrs_clt_permits_free() - wait for every permit and free them
 * @clt: the session, with @clt->closing set and every path closed.
 *
 * The reserve and the quarantines end with the session: nothing sends
 * into its chunks any more.
 *
 * Context: process context; sleeps until the user put every permit.
 */
void rtrs_clt_permits_free(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;
	LIST_HEAD(back);

	if (!clt->permits)
		return;
	spin_lock_irq(&clt->chunks_lock);
	list_splice_init(&clt->reserve, &back);
	list_splice_init(&clt->orphans, &back);
	list_for_each_entry(path, &clt->paths_list, entry) {
		list_splice_init(&path->quarantine, &back);
		WRITE_ONCE(path->quarantined, 0);
	}
	clt->reserve_num = 0;
	spin_unlock_irq(&clt->chunks_lock);
	rtrs_clt_permits_return(clt, &back);

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
 * @con_type: %RTRS_IO_CON or %RTRS_ADMIN_CON; either way the request goes
 *	on the IO connection of the CPU the permit is taken on.
 * @wait: what to do when all permits are taken: %RTRS_PERMIT_WAIT sleeps
 *	until one is put back, %RTRS_PERMIT_NOWAIT returns NULL at once.
 *
 * A permit stands for one server chunk, and every request in flight holds
 * one: a session has &rtrs_attrs.queue_depth of them for its user.
 * Taking it up front is how the user feels back pressure before building
 * a request.
 *
 * Context: any context with %RTRS_PERMIT_NOWAIT; process context, may
 * sleep (uninterruptibly), with %RTRS_PERMIT_WAIT.
 * Return: the permit, or NULL when none is free and @wait is
 * %RTRS_PERMIT_NOWAIT.  Never NULL with %RTRS_PERMIT_WAIT.
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
 * @clt: the session the permit was taken from.
 * @permit: permit from rtrs_clt_get_permit() on @clt.  No request may use
 *	it any more: put it once its &rtrs_clt_req_ops.conf_fn has been
 *	called, or after rtrs_clt_request() failed.  NULL is refused with a
 *	warning.
 *
 * Wakes one sleeper in rtrs_clt_get_permit(), if any, and rtrs_clt_close()
 * when it waits for the permits.
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

/*
 * A permit with a free chunk for a request a failover moves: from the
 * reserve, else a free one, else the first one the user puts.
 */
static struct rtrs_permit *rtrs_clt_spare_get(struct rtrs_clt_sess *clt)
{
	struct rtrs_permit *permit;

	spin_lock_irq(&clt->chunks_lock);
	permit = list_first_entry_or_null(&clt->reserve, struct rtrs_permit,
					  entry);
	if (permit) {
		list_del_init(&permit->entry);
		clt->reserve_num--;
	}
	spin_unlock_irq(&clt->chunks_lock);
	return permit ?: rtrs_clt_get_permit(clt, RTRS_IO_CON,
					     RTRS_PERMIT_WAIT);
}

/**
 * rtrs_clt_chunk_quarantine() - plan to move a failed path's request off
 *	its chunk
 * @path: the failed path; its connections are drained.
 * @permit: the permit of a request that was in flight on @path without
 *	a response: a server operation of @path may still own its chunk.
 *
 * The request is sent again in the same chunk: a server of ours runs it
 * only once the first copy ended, so it completes after it, and a later
 * request to the same place comes after both.  When it completes,
 * rtrs_clt_chunk_move() gives @permit the chunk of a spare taken here,
 * and the spare, standing for the old chunk, waits in @path's quarantine
 * until rtrs_clt_chunks_release(): no other request goes into the chunk
 * while the first copy may still run there (a mainline server runs both
 * copies at once).  A request whose second path fails too leaves its
 * chunk to the session's orphans.  A session without a reserve (a single
 * chunk) cannot move the request and leaves it where it is.
 *
 * Context: process context; may sleep until the user puts a permit, when
 * the reserve is empty and every permit is taken.
 */
void rtrs_clt_chunk_quarantine(struct rtrs_clt_path *path,
			       struct rtrs_permit *permit)
{
	struct rtrs_clt_sess *clt = path->clt;
	struct rtrs_permit *spare = NULL;

	if (!clt->reserve_max)
		return;
	if (!permit->spare)
		spare = rtrs_clt_spare_get(clt);
	spin_lock_irq(&clt->chunks_lock);
	if (spare) {
		permit->spare = spare;
		permit->q_path = path;
		permit->q_gen = path->q_gen;
	} else {
		permit->q_path = NULL;
	}
	spin_unlock_irq(&clt->chunks_lock);
}

/* Quarantine @spare, now standing for a chunk @path may own.  Locked. */
static void rtrs_clt_chunk_hold(struct rtrs_clt_path *path,
				struct rtrs_permit *spare)
{
	list_add_tail(&spare->entry, &path->quarantine);
	WRITE_ONCE(path->quarantined, path->quarantined + 1);
	trace_rtrs_clt_quarantine(path, spare->chunk);
}

/**
 * rtrs_clt_chunk_move() - move a request that failed over to another chunk
 * @clt: the session.
 * @permit: the permit of a request that completes, before its user hears.
 *
 * Does nothing unless rtrs_clt_chunk_quarantine() planned the move.  When
 * the failed path connected again meanwhile, the old chunk is free: the
 * spare goes straight back.
 *
 * Context: any context.
 */
void rtrs_clt_chunk_move(struct rtrs_clt_sess *clt,
			 struct rtrs_permit *permit)
{
	struct rtrs_permit *spare = permit->spare;
	struct rtrs_clt_path *path;
	unsigned long flags;
	bool back = false;

	if (likely(!spare))
		return;
	swap(permit->chunk, spare->chunk);
	spin_lock_irqsave(&clt->chunks_lock, flags);
	path = permit->q_path;
	if (!path) {
		list_add_tail(&spare->entry, &clt->orphans);
	} else if (path->q_gen == permit->q_gen) {
		rtrs_clt_chunk_hold(path, spare);
	} else if (clt->reserve_num < clt->reserve_max) {
		list_add_tail(&spare->entry, &clt->reserve);
		clt->reserve_num++;
	} else {
		back = true;
	}
	permit->spare = NULL;
	permit->q_path = NULL;
	spin_unlock_irqrestore(&clt->chunks_lock, flags);
	if (back)
		rtrs_clt_put_permit(clt, spare);
}

/**
 * rtrs_clt_chunks_release() - end a path's quarantine
 * @path: a path that just connected again.
 *
 * The server accepted @path, so its earlier incarnation there is gone
 * with every operation it ran: the quarantined chunks are free.  They
 * refill the reserve first; the rest go back to the user.  Requests of
 * the earlier incarnation still in flight elsewhere need no quarantine
 * any more either.
 *
 * Context: process context.
 */
void rtrs_clt_chunks_release(struct rtrs_clt_path *path)
{
	struct rtrs_clt_sess *clt = path->clt;
	struct rtrs_permit *permit, *tmp;
	LIST_HEAD(back);

	spin_lock_irq(&clt->chunks_lock);
	path->q_gen++;
	list_for_each_entry_safe(permit, tmp, &path->quarantine, entry) {
		if (clt->reserve_num < clt->reserve_max) {
			list_move_tail(&permit->entry, &clt->reserve);
			clt->reserve_num++;
		} else {
			list_move_tail(&permit->entry, &back);
		}
	}
	if (path->quarantined)
		trace_rtrs_clt_quarantine_end(path, path->quarantined);
	WRITE_ONCE(path->quarantined, 0);
	spin_unlock_irq(&clt->chunks_lock);
	rtrs_clt_permits_return(clt, &back);
}

/**
 * rtrs_clt_chunks_orphan() - keep a removed path's quarantine
 * @path: a path being freed.
 *
 * Nothing will prove its chunks free any more: they stay withheld until
 * the session closes.
 *
 * Context: any context.
 */
void rtrs_clt_chunks_orphan(struct rtrs_clt_path *path)
{
	struct rtrs_clt_sess *clt = path->clt;
	struct rtrs_permit *permit;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&clt->chunks_lock, flags);
	list_splice_tail_init(&path->quarantine, &clt->orphans);
	WRITE_ONCE(path->quarantined, 0);
	/* Moves still to come: their chunks go to the orphans too. */
	for (i = 0; clt->permits && i < clt->queue_depth; i++) {
		permit = rtrs_clt_permit(clt, i);
		if (permit->q_path == path)
			permit->q_path = NULL;
	}
	spin_unlock_irqrestore(&clt->chunks_lock, flags);
}
