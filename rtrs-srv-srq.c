// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server receive buffers of protocol 2.1.
 *
 * Every 2.1 IO connection on an RDMA device receives its requests from
 * one shared receive queue of that device, filled with a fixed number of
 * buffers (srq_size): the server's receive memory does not grow with its
 * sessions or their queue depth.  A buffer is two pieces, a header area of
 * RTRS_SRV_HDR_SIZE_2_1 bytes for the request header and user message, and
 * one page, where an inline WRITE's data lands, contiguous with it.  A request holds its
 * buffer until its response is posted; then the buffer goes back on the
 * queue.  With every buffer held, a client's SEND meets receiver-not-ready
 * and its hardware retries it: requests beyond the queue wait on the wire.
 *
 * The queue of a device is made by the first 2.1 path on it and destroyed
 * with the last; all of them hold it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

#include "rtrs-srv.h"

static unsigned int srq_size = 512;
module_param(srq_size, uint, 0644);
MODULE_PARM_DESC(srq_size,
		 "Receive buffers of protocol 2.1 requests per RDMA device, two pages each (default: 512); read when a device's first 2.1 path comes");

static DEFINE_MUTEX(rtrs_srv_srq_mutex);	/* rtrs_srv_srqs */
static LIST_HEAD(rtrs_srv_srqs);

/**
 * rtrs_srv_srq_post() - put a receive buffer (back) on its queue
 * @rb: the buffer, held by nobody
 *
 * Context: any context.
 * Return: 0 or the error of ib_post_srq_recv().
 */
int rtrs_srv_srq_post(struct rtrs_srv_rbuf *rb)
{
	struct rtrs_srv_srq *srq = rb->srq;
	struct ib_sge sge[2] = {
		{
			.addr	= rb->hdr_dma,
			.length	= RTRS_SRV_HDR_SIZE_2_1,
			.lkey	= srq->dev->ib_pd->local_dma_lkey,
		}, {
			.addr	= rb->page_dma,
			.length	= PAGE_SIZE,
			.lkey	= srq->dev->ib_pd->local_dma_lkey,
		},
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &rb->cqe,
		.sg_list	= sge,
		.num_sge	= ARRAY_SIZE(sge),
	};

	return ib_post_srq_recv(srq->srq, &wr, NULL);
}

/* Two pages per buffer: the header area ends the first, the data page. */
#define RTRS_SRV_RBUF_ORDER	1

static void rtrs_srv_rbuf_free(struct rtrs_srv_srq *srq,
			       struct rtrs_srv_rbuf *rb)
{
	ib_dma_unmap_page(srq->dev->ib_dev, rb->page_dma - PAGE_SIZE,
			  PAGE_SIZE << RTRS_SRV_RBUF_ORDER, DMA_FROM_DEVICE);
	__free_pages(rb->page - 1, RTRS_SRV_RBUF_ORDER);
}

static void rtrs_srv_srq_free_bufs(struct rtrs_srv_srq *srq, u32 n)
{
	while (n--)
		rtrs_srv_rbuf_free(srq, &srq->bufs[n]);
	kfree(srq->bufs);
}

/*
 * A receive buffer is the end of one page, RTRS_SRV_HDR_SIZE_2_1 bytes
 * for the request header and user message, followed by the data page of
 * an inline WRITE: inline data lands at the start of a page, and a
 * request without inline data may carry a user message of up to both,
 * contiguous for the user.
 */
static int rtrs_srv_rbuf_alloc(struct rtrs_srv_srq *srq,
			       struct rtrs_srv_rbuf *rb, bool last,
			       void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct ib_device *ib_dev = srq->dev->ib_dev;
	struct page *pages;
	dma_addr_t dma;

	/* One fault point for the buffers: the last. */
	pages = rtrs_fail_last_or(last, NULL,
				  alloc_pages(GFP_KERNEL, RTRS_SRV_RBUF_ORDER));
	if (!pages)
		return -ENOMEM;
	dma = ib_dma_map_page(ib_dev, pages, 0, PAGE_SIZE << RTRS_SRV_RBUF_ORDER,
			      DMA_FROM_DEVICE);
	if (ib_dma_mapping_error(ib_dev, dma)) {
		__free_pages(pages, RTRS_SRV_RBUF_ORDER);
		return -ENOMEM;
	}
	rb->srq = srq;
	rb->cqe.done = done;
	rb->page = pages + 1;
	rb->page_dma = dma + PAGE_SIZE;
	rb->hdr = page_address(rb->page) - RTRS_SRV_HDR_SIZE_2_1;
	rb->hdr_dma = rb->page_dma - RTRS_SRV_HDR_SIZE_2_1;
	return 0;
}

static int rtrs_srv_srq_alloc_bufs(struct rtrs_srv_srq *srq,
				   void (*done)(struct ib_cq *cq,
						struct ib_wc *wc))
{
	u32 i;

	srq->bufs = rtrs_kcalloc(srq->nr, sizeof(*srq->bufs), GFP_KERNEL);
	if (!srq->bufs)
		return -ENOMEM;
	for (i = 0; i < srq->nr; i++) {
		if (rtrs_srv_rbuf_alloc(srq, &srq->bufs[i], i == srq->nr - 1,
					done)) {
			rtrs_srv_srq_free_bufs(srq, i);
			return -ENOMEM;
		}
	}
	return 0;
}

static struct rtrs_srv_srq *
rtrs_srv_srq_create(struct rtrs_ib_dev *dev,
		    void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	const struct ib_device_attr *attrs = &dev->ib_dev->attrs;
	struct ib_srq_init_attr init_attr = {
		.srq_type = IB_SRQT_BASIC,
		.attr = {
			.max_sge = 2,
		},
	};
	struct rtrs_srv_srq *srq;
	u32 i;
	int err;

	srq = rtrs_kzalloc(sizeof(*srq), GFP_KERNEL);
	if (!srq)
		return ERR_PTR(-ENOMEM);
	kref_get(&dev->ref);
	srq->dev = dev;
	srq->users = 1;
	srq->nr = clamp_t(u32, READ_ONCE(srq_size), 1, attrs->max_srq_wr);
	init_attr.attr.max_wr = srq->nr;

	err = rtrs_srv_srq_alloc_bufs(srq, done);
	if (err)
		goto put_dev;
	srq->srq = rtrs_fail_or(ERR_PTR(-ENOMEM),
				ib_create_srq(dev->ib_pd, &init_attr));
	if (IS_ERR(srq->srq)) {
		err = PTR_ERR(srq->srq);
		pr_err_ratelimited("%s: creating a shared receive queue of %u failed: %d\n",
				   dev_name(&dev->ib_dev->dev), srq->nr, err);
		goto free_bufs;
	}
	for (i = 0; i < srq->nr; i++) {
		err = rtrs_srv_srq_post(&srq->bufs[i]);
		if (err)
			goto destroy;
	}
	return srq;

destroy:
	ib_destroy_srq(srq->srq);
free_bufs:
	rtrs_srv_srq_free_bufs(srq, srq->nr);
put_dev:
	rtrs_ib_dev_put(dev);
	kfree(srq);
	return ERR_PTR(err);
}

/**
 * rtrs_srv_srq_get() - the shared receive queue of a device, made on first use
 * @dev: the device and PD of a 2.1 path
 * @done: completion handler of every receive buffer of the queue; used
 *	only when the queue is made here
 *
 * Context: process context.
 * Return: the queue, with a reference for the caller, or an ERR_PTR().
 */
struct rtrs_srv_srq *
rtrs_srv_srq_get(struct rtrs_ib_dev *dev,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct rtrs_srv_srq *srq;

	mutex_lock(&rtrs_srv_srq_mutex);
	list_for_each_entry(srq, &rtrs_srv_srqs, entry) {
		if (srq->dev == dev) {
			srq->users++;
			goto unlock;
		}
	}
	srq = rtrs_srv_srq_create(dev, done);
	if (!IS_ERR(srq))
		list_add(&srq->entry, &rtrs_srv_srqs);
unlock:
	mutex_unlock(&rtrs_srv_srq_mutex);
	return srq;
}

/**
 * rtrs_srv_srq_put() - drop a reference to a shared receive queue
 * @srq: the queue; the last reference destroys it with its buffers
 *
 * The last reference must come after every QP on the queue is destroyed
 * and every buffer a request held has been posted again.
 *
 * Context: process context.
 */
void rtrs_srv_srq_put(struct rtrs_srv_srq *srq)
{
	mutex_lock(&rtrs_srv_srq_mutex);
	if (--srq->users) {
		mutex_unlock(&rtrs_srv_srq_mutex);
		return;
	}
	list_del(&srq->entry);
	mutex_unlock(&rtrs_srv_srq_mutex);

	ib_destroy_srq(srq->srq);
	rtrs_srv_srq_free_bufs(srq, srq->nr);
	rtrs_ib_dev_put(srq->dev);
	kfree(srq);
}
