// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server data buffer pool.
 *
 * Protocol 2.1 registers no server memory for the client: the data of a
 * READ, and the data of a large WRITE that the server pulls, go through
 * buffers of one pool that all sessions share.  The pool has a size limit
 * (the module parameter pool_size_mb) and takes its memory lazily, one
 * physically contiguous block of RTRS_SRV_POOL_BLOCK bytes at a time,
 * when a request needs room and the blocks are below the limit.  Blocks
 * are kept until the pool is destroyed: the pool grows to what the load
 * needs and no further, an IO never waits for the page allocator once it
 * has, and memory handed back and asked for again would only fragment.
 *
 * A buffer is a power-of-two number of pages, from one page to a whole
 * block, naturally aligned within its block: the fewest pages that hold
 * the request, found with a bitmap of the block's pages.  Blocks in use
 * are tried before unused ones, so that small buffers crowd together and
 * whole blocks stay free for whole-block buffers.
 *
 * A request never fails for lack of memory: one that does not fit waits,
 * and is granted when buffers are put back or a new block comes.  Waiting
 * requests are served in the order they came within each user, and
 * round robin over the users that wait.  While another user waits, a
 * user is not granted a buffer that takes it above its share: the limit
 * divided by the users that hold or wait, rounded down to whole blocks
 * but at least one block, so that every user can always get a buffer of
 * the largest size.  Such a user is passed over, keeping its place.
 *
 * When the next waiter in the round robin is within its share but does
 * not fit, nothing more is granted until it does: letting smaller
 * requests, of its user or another, take the room that frees up could
 * keep a large buffer from ever finding a free stretch of its size.  As
 * every buffer is put back in the end, the room it waits for comes: no
 * waiter starves.
 *
 * Blocks are allocated by the pool's work, in process context, so that
 * rtrs_srv_pool_get() and rtrs_srv_pool_put() can be called from
 * completion handlers.  A block that cannot be allocated (the page
 * allocator or fail_rtrs says no) leaves its waiter waiting, for buffers
 * put back or for the work's next try.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "rtrs-srv.h"

static unsigned int pool_size_mb = 64;
module_param(pool_size_mb, uint, 0444);
MODULE_PARM_DESC(pool_size_mb,
		 "Most memory, in MiB, of the data buffers of 2.1 paths; taken in 1 MiB blocks as needed and kept until unload (at least 1; default 64)");

/* The pool of the module. */
struct rtrs_srv_pool rtrs_srv_buf_pool;

/*
 * What the pool holds, read-only next to pool_size_mb in
 * /sys/module/rtrs_server/parameters/: "pool_usage" shows the bytes of the
 * blocks taken, the bytes in buffers, the sessions that hold or wait for
 * a buffer and the requests waiting, in one line, read at one moment.
 */
static int rtrs_srv_pool_usage_get(char *buf, const struct kernel_param *kp)
{
	struct rtrs_srv_pool_stats st;

	rtrs_srv_pool_usage(&rtrs_srv_buf_pool, &st);
	return sysfs_emit(buf, "allocated %zu held %zu users %u waiters %u\n",
			  st.allocated, st.held, st.users, st.waiters);
}

static const struct kernel_param_ops rtrs_srv_pool_usage_ops = {
	.get	= rtrs_srv_pool_usage_get,
};

module_param_cb(pool_usage, &rtrs_srv_pool_usage_ops, NULL, 0444);
MODULE_PARM_DESC(pool_usage,
		 "Read-only: bytes of the data buffer pool allocated and held, sessions using it, requests waiting");

/* The work tries to allocate a block again this long after a failure. */
#define RTRS_SRV_POOL_RETRY_MS	100

#define RTRS_SRV_POOL_BLOCK_ORDER	get_order(RTRS_SRV_POOL_BLOCK)

/**
 * struct rtrs_srv_pool_block - a physically contiguous block of the pool
 * @entry: in &rtrs_srv_pool.blocks
 * @pages: the block, RTRS_SRV_POOL_BLOCK bytes, naturally aligned
 * @addr: its kernel address
 * @used: pages of the block in buffers
 * @map: which pages are in buffers
 */
struct rtrs_srv_pool_block {
	struct list_head	entry;
	struct page		*pages;
	void			*addr;
	unsigned int		used;
	DECLARE_BITMAP(map, RTRS_SRV_POOL_BLOCK_PAGES);
};

static struct rtrs_srv_pool_block *rtrs_srv_pool_alloc_block(void)
{
	struct rtrs_srv_pool_block *block;

	block = rtrs_kzalloc(sizeof(*block), GFP_NOIO);
	if (!block)
		return NULL;
	/*
	 * Compound, so that whoever takes a reference to a page of a buffer
	 * (a bio, the network stack) takes it on the block; zeroed, so that
	 * no buffer shows a client what the pages held before.
	 */
	block->pages = rtrs_fail_or(NULL,
				    alloc_pages(GFP_NOIO | __GFP_NOWARN |
						__GFP_COMP | __GFP_ZERO,
						RTRS_SRV_POOL_BLOCK_ORDER));
	if (!block->pages) {
		kfree(block);
		return NULL;
	}
	block->addr = page_address(block->pages);
	return block;
}

static void rtrs_srv_pool_free_block(struct rtrs_srv_pool_block *block)
{
	__free_pages(block->pages, RTRS_SRV_POOL_BLOCK_ORDER);
	kfree(block);
}

static bool rtrs_srv_pool_user_active(struct rtrs_srv_pool_user *user)
{
	return user->held || !list_empty(&user->waiting);
}

/*
 * Would a buffer of @size bytes take @user, which waits, above its
 * share?  Only while another user waits too.
 */
static bool rtrs_srv_pool_over_share(struct rtrs_srv_pool *pool,
				     struct rtrs_srv_pool_user *user,
				     size_t size)
{
	size_t share;

	if (list_is_singular(&pool->rr))
		return false;
	share = ALIGN_DOWN(pool->limit / pool->nr_users, RTRS_SRV_POOL_BLOCK);
	share = max_t(size_t, share, RTRS_SRV_POOL_BLOCK);
	return user->held + size > share;
}

/* Give @req a buffer out of a block, if one has room for it. */
static bool rtrs_srv_pool_carve(struct rtrs_srv_pool *pool,
				struct rtrs_srv_pool_req *req)
{
	unsigned int nr = 1U << req->order;
	struct rtrs_srv_pool_block *block;
	unsigned long idx;

	list_for_each_entry(block, &pool->blocks, entry) {
		if (RTRS_SRV_POOL_BLOCK_PAGES - block->used < nr)
			continue;
		idx = bitmap_find_next_zero_area(block->map,
						 RTRS_SRV_POOL_BLOCK_PAGES,
						 0, nr, nr - 1);
		if (idx + nr > RTRS_SRV_POOL_BLOCK_PAGES)
			continue;
		bitmap_set(block->map, idx, nr);
		/* A block that comes into use goes to the front. */
		if (!block->used)
			list_move(&block->entry, &pool->blocks);
		block->used += nr;
		req->block = block;
		req->page = block->pages + idx;
		req->buf = block->addr + idx * PAGE_SIZE;
		req->user->held += PAGE_SIZE << req->order;
		pool->held += PAGE_SIZE << req->order;
		return true;
	}
	return false;
}

/* Take @req, which waits, off its user's queue. */
static void rtrs_srv_pool_unqueue(struct rtrs_srv_pool *pool,
				  struct rtrs_srv_pool_req *req)
{
	struct rtrs_srv_pool_user *user = req->user;

	req->waiting = false;
	pool->nr_waiters--;
	list_del_init(&req->entry);
	if (list_empty(&user->waiting)) {
		list_del_init(&user->rr_entry);
		if (!user->held)
			pool->nr_users--;
	}
}

/*
 * Grant what can be granted, in order, moving the requests granted to
 * @granted.  Returns true when it stopped at a waiter that does not fit
 * and the pool may grow: a new block is what it waits for.
 */
static bool rtrs_srv_pool_grant(struct rtrs_srv_pool *pool,
				struct list_head *granted)
{
	struct rtrs_srv_pool_user *user;
	struct rtrs_srv_pool_req *req;

again:
	list_for_each_entry(user, &pool->rr, rr_entry) {
		req = list_first_entry(&user->waiting, struct rtrs_srv_pool_req,
				       entry);
		if (rtrs_srv_pool_over_share(pool, user,
					     PAGE_SIZE << req->order))
			continue;
		if (!rtrs_srv_pool_carve(pool, req))
			return pool->allocated + RTRS_SRV_POOL_BLOCK <=
			       pool->limit;
		rtrs_srv_pool_unqueue(pool, req);
		list_add_tail(&req->entry, granted);
		/* The user's next request, if any, waits for the others. */
		if (!list_empty(&user->waiting))
			list_move_tail(&user->rr_entry, &pool->rr);
		goto again;
	}
	return false;
}

/* rtrs_srv_pool_grant(), and the work when a block is wanted. */
static void rtrs_srv_pool_serve(struct rtrs_srv_pool *pool,
				struct list_head *granted)
{
	if (rtrs_srv_pool_grant(pool, granted))
		queue_delayed_work(pool->wq, &pool->grow_dwork, 0);
}

/* Tell the requests on @granted, with the pool's lock dropped. */
static void rtrs_srv_pool_call(struct list_head *granted)
{
	struct rtrs_srv_pool_req *req, *tmp;

	list_for_each_entry_safe(req, tmp, granted, entry) {
		list_del_init(&req->entry);
		req->granted(req);
	}
}

static void rtrs_srv_pool_grow_work(struct work_struct *work)
{
	struct rtrs_srv_pool *pool = container_of(to_delayed_work(work),
						  struct rtrs_srv_pool,
						  grow_dwork);
	struct rtrs_srv_pool_block *block;
	LIST_HEAD(granted);
	bool grow;
	unsigned long flags;

	/* Buffers put back since the work was queued may do. */
	spin_lock_irqsave(&pool->lock, flags);
	grow = rtrs_srv_pool_grant(pool, &granted);
	spin_unlock_irqrestore(&pool->lock, flags);
	rtrs_srv_pool_call(&granted);

	/* Only this work adds blocks: the limit holds without a lock. */
	while (grow) {
		block = rtrs_srv_pool_alloc_block();
		if (!block) {
			queue_delayed_work(pool->wq, &pool->grow_dwork,
					   msecs_to_jiffies(RTRS_SRV_POOL_RETRY_MS));
			return;
		}
		spin_lock_irqsave(&pool->lock, flags);
		list_add_tail(&block->entry, &pool->blocks);
		pool->allocated += RTRS_SRV_POOL_BLOCK;
		grow = rtrs_srv_pool_grant(pool, &granted);
		spin_unlock_irqrestore(&pool->lock, flags);
		rtrs_srv_pool_call(&granted);
	}
}

/**
 * rtrs_srv_pool_init() - set up an empty pool
 * @pool: the pool
 * @limit: most bytes the pool may take, at least %RTRS_SRV_POOL_BLOCK;
 *	the blocks are as many whole ones as fit in it
 *
 * Context: process context.
 * Return: 0, -EINVAL for a limit below one block, or -ENOMEM.
 */
int rtrs_srv_pool_init(struct rtrs_srv_pool *pool, size_t limit)
{
	if (limit < RTRS_SRV_POOL_BLOCK)
		return -EINVAL;
	memset(pool, 0, sizeof(*pool));
	/* It allocates memory for IO: it must run when memory is short. */
	pool->wq = rtrs_fail_or(NULL, alloc_workqueue("rtrs_srv_pool",
						      WQ_MEM_RECLAIM, 0));
	if (!pool->wq)
		return -ENOMEM;
	spin_lock_init(&pool->lock);
	pool->limit = limit;
	INIT_LIST_HEAD(&pool->blocks);
	INIT_LIST_HEAD(&pool->rr);
	INIT_DELAYED_WORK(&pool->grow_dwork, rtrs_srv_pool_grow_work);
	return 0;
}

/**
 * rtrs_srv_pool_destroy() - free a pool's blocks
 * @pool: a pool whose buffers are all put back and whose users are gone
 *
 * Warns when a buffer is still held or a request waits; the blocks in
 * use are then left allocated rather than freed under their holders.
 *
 * Context: process context; may sleep.
 */
void rtrs_srv_pool_destroy(struct rtrs_srv_pool *pool)
{
	struct rtrs_srv_pool_block *block, *tmp;

	cancel_delayed_work_sync(&pool->grow_dwork);
	destroy_workqueue(pool->wq);
	WARN_ON(pool->held || pool->nr_waiters || pool->nr_users);
	list_for_each_entry_safe(block, tmp, &pool->blocks, entry) {
		if (block->used)
			continue;
		list_del(&block->entry);
		pool->allocated -= RTRS_SRV_POOL_BLOCK;
		rtrs_srv_pool_free_block(block);
	}
}

/**
 * rtrs_srv_pool_user_init() - make a user of a pool
 * @pool: the pool
 * @user: the user, embedded in what gets a share of @pool
 *
 * A user counts among those the pool is shared by only while it holds a
 * buffer or has a request waiting.
 *
 * Context: any context.
 */
void rtrs_srv_pool_user_init(struct rtrs_srv_pool *pool,
			     struct rtrs_srv_pool_user *user)
{
	user->pool = pool;
	INIT_LIST_HEAD(&user->waiting);
	INIT_LIST_HEAD(&user->rr_entry);
	user->held = 0;
}

/**
 * rtrs_srv_pool_user_exit() - a user is done with its pool
 * @user: the user
 *
 * The user must hold no buffer and have no request waiting: its owner
 * cancels its waiting requests and puts its buffers first, since only it
 * knows what they belong to.  Warns otherwise; requests still waiting are
 * then taken off the pool's queues and never granted, so that the pool
 * does not touch them again, but buffers still held keep @user in use
 * until they are put.
 *
 * Context: any context.
 */
void rtrs_srv_pool_user_exit(struct rtrs_srv_pool_user *user)
{
	struct rtrs_srv_pool *pool = user->pool;
	struct rtrs_srv_pool_req *req, *tmp;
	LIST_HEAD(granted);
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	WARN_ON_ONCE(user->held);
	if (WARN_ON_ONCE(!list_empty(&user->waiting))) {
		list_for_each_entry_safe(req, tmp, &user->waiting, entry)
			rtrs_srv_pool_unqueue(pool, req);
		rtrs_srv_pool_serve(pool, &granted);
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	rtrs_srv_pool_call(&granted);
}

/**
 * rtrs_srv_pool_get() - ask for a buffer
 * @req: the request, with &rtrs_srv_pool_req.size,
 *	&rtrs_srv_pool_req.user and &rtrs_srv_pool_req.granted set
 *
 * The buffer is the fewest pages, a power of two of them, that hold
 * &rtrs_srv_pool_req.size bytes (a size out of range is a bug: it warns,
 * and is clamped).  @req is granted at once when no request is to be
 * served before it and a block has room; otherwise it waits, and is
 * granted in its turn: the pool never fails it.
 *
 * &rtrs_srv_pool_req.granted of a request that waited is called once,
 * when it is granted: from a later call of any function of this pool
 * (for any user) or from the pool's work, in softirq or process context,
 * with no lock of the pool held.  It must do no more than queue work that
 * goes on with the request, and must not call into the pool.  Until it
 * is called, the request may be cancelled (rtrs_srv_pool_cancel()).
 *
 * Context: any context.  It may call
 * the callbacks of other requests granted meanwhile.
 * Return: true when @req is granted at once (its callback is not
 * called); false when it waits.
 */
bool rtrs_srv_pool_get(struct rtrs_srv_pool_req *req)
{
	struct rtrs_srv_pool_user *user = req->user;
	struct rtrs_srv_pool *pool = user->pool;
	LIST_HEAD(granted);
	bool now;
	unsigned long flags;

	if (WARN_ON_ONCE(!req->size || req->size > RTRS_SRV_POOL_MAX_BUF))
		req->size = clamp_t(size_t, req->size, 1,
				    RTRS_SRV_POOL_MAX_BUF);
	req->order = get_order(req->size);
	req->buf = NULL;
	req->page = NULL;
	req->block = NULL;

	spin_lock_irqsave(&pool->lock, flags);
	if (!rtrs_srv_pool_user_active(user))
		pool->nr_users++;
	if (list_empty(&user->waiting))
		list_add_tail(&user->rr_entry, &pool->rr);
	list_add_tail(&req->entry, &user->waiting);
	req->waiting = true;
	pool->nr_waiters++;
	rtrs_srv_pool_serve(pool, &granted);
	now = !req->waiting;
	if (now)
		list_del_init(&req->entry);
	spin_unlock_irqrestore(&pool->lock, flags);

	rtrs_srv_pool_call(&granted);
	return now;
}

/**
 * rtrs_srv_pool_put() - give a buffer back
 * @req: a request granted, whose buffer is no longer used
 *
 * Grants the requests that wait for the room, as far as their order and
 * the shares allow, and calls their callbacks.
 *
 * Context: any context.
 */
void rtrs_srv_pool_put(struct rtrs_srv_pool_req *req)
{
	struct rtrs_srv_pool_block *block = req->block;
	struct rtrs_srv_pool_user *user = req->user;
	struct rtrs_srv_pool *pool = user->pool;
	unsigned int nr = 1U << req->order;
	size_t size = PAGE_SIZE << req->order;
	LIST_HEAD(granted);
	unsigned long flags;

	if (WARN_ON_ONCE(!block))
		return;
	req->block = NULL;
	req->buf = NULL;

	spin_lock_irqsave(&pool->lock, flags);
	bitmap_clear(block->map, req->page - block->pages, nr);
	block->used -= nr;
	/* An unused block goes to the back. */
	if (!block->used)
		list_move_tail(&block->entry, &pool->blocks);
	user->held -= size;
	pool->held -= size;
	if (!rtrs_srv_pool_user_active(user))
		pool->nr_users--;
	rtrs_srv_pool_serve(pool, &granted);
	spin_unlock_irqrestore(&pool->lock, flags);

	req->page = NULL;
	rtrs_srv_pool_call(&granted);
}

/**
 * rtrs_srv_pool_cancel() - stop a request waiting
 * @req: a request given to rtrs_srv_pool_get()
 *
 * Context: any context.  It may call
 * the callbacks of other requests that the room it leaves lets through.
 * Return: true when @req was waiting: it never gets a buffer, and its
 * callback is never called.  False when it was not: a request already
 * granted has been given, or is about to be given, its callback (unless
 * rtrs_srv_pool_get() returned true), and its buffer is the caller's to
 * put once that callback's work is done with it.
 */
bool rtrs_srv_pool_cancel(struct rtrs_srv_pool_req *req)
{
	struct rtrs_srv_pool *pool = req->user->pool;
	LIST_HEAD(granted);
	bool waited;
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	waited = req->waiting;
	if (waited) {
		rtrs_srv_pool_unqueue(pool, req);
		/* It may have kept smaller requests from the room there is. */
		rtrs_srv_pool_serve(pool, &granted);
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	rtrs_srv_pool_call(&granted);
	return waited;
}

/**
 * rtrs_srv_pool_usage() - what a pool holds
 * @pool: the pool
 * @st: filled with its limit, its blocks, its buffers, its users and its
 *	waiters, at one moment
 *
 * Context: any context.
 */
void rtrs_srv_pool_usage(struct rtrs_srv_pool *pool,
			 struct rtrs_srv_pool_stats *st)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	st->limit = pool->limit;
	st->allocated = pool->allocated;
	st->held = pool->held;
	st->users = pool->nr_users;
	st->waiters = pool->nr_waiters;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/**
 * rtrs_srv_buf_pool_init() - set up the module's pool
 *
 * Its limit is the module parameter pool_size_mb.
 *
 * Context: module init.
 * Return: 0, -EINVAL (with a line saying why) or -ENOMEM.
 */
int rtrs_srv_buf_pool_init(void)
{
	if (!pool_size_mb || pool_size_mb > SIZE_MAX / SZ_1M) {
		pr_err("pool_size_mb %u is not within 1-%zu\n", pool_size_mb,
		       SIZE_MAX / SZ_1M);
		return -EINVAL;
	}
	return rtrs_srv_pool_init(&rtrs_srv_buf_pool,
				  (size_t)pool_size_mb * SZ_1M);
}

/**
 * rtrs_srv_buf_pool_exit() - free the module's pool
 *
 * Context: module exit, every path gone.
 */
void rtrs_srv_buf_pool_exit(void)
{
	rtrs_srv_pool_destroy(&rtrs_srv_buf_pool);
}
