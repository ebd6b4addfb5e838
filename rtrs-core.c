// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, shared core.
 *
 * Holds what client and server share: RDMA CM setup, the ib device and PD
 * pool, information units, CQ and QP setup, heartbeats and address helpers.
 * The core never calls up into the client or the server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/if.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/kref.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib.h>
#include <rdma/rdma_cm.h>

#include "rtrs-pri.h"
#include "rtrs.h"

/*
 * Address strings.
 *
 * A path is "[src@]dst"; each address is "ip:" with an IPv4 or IPv6
 * literal, the latter optionally followed by "%" and a zone (interface name
 * or decimal index), or "gid:" with an InfiniBand GID written as an IPv6
 * literal.  No address we accept is longer than a prefix, the longest IPv6
 * literal (an IPv4 tail included), "%" and an interface name.
 */
#define RTRS_ADDR_STR_MAX \
	(sizeof("gid:") - 1 + INET6_ADDRSTRLEN + 1 + IFNAMSIZ - 1)

static_assert(sizeof(struct sockaddr_ib) <= sizeof(struct sockaddr_storage));

/* Strip @prefix from the front of the @len bytes at @s, if it is there. */
static bool rtrs_skip_prefix(const char **s, size_t *len, const char *prefix)
{
	size_t n = strlen(prefix);

	if (*len < n || memcmp(*s, prefix, n))
		return false;
	*s += n;
	*len -= n;
	return true;
}

static int rtrs_parse_ipv4(const char *s, size_t len, u16 port,
			   struct sockaddr_in *sin)
{
	const char *end;

	if (!in4_pton(s, len, (u8 *)&sin->sin_addr.s_addr, '\0', &end) ||
	    end != s + len)
		return -EINVAL;

	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return 0;
}

/*
 * A zone names the link a link-local address lives on: an interface name,
 * looked up in init_net where RTRS makes its connections, else a decimal
 * interface index.
 */
static int rtrs_parse_ipv6_zone(const char *s, size_t len,
				struct sockaddr_in6 *sin6)
{
	char zone[IFNAMSIZ];
	struct net_device *ndev;
	int ifindex = 0;

	if (!len || len >= sizeof(zone))
		return -EINVAL;
	if (!(ipv6_addr_type(&sin6->sin6_addr) & IPV6_ADDR_LINKLOCAL))
		return -EINVAL;

	memcpy(zone, s, len);
	zone[len] = '\0';

	rcu_read_lock();
	ndev = dev_get_by_name_rcu(&init_net, zone);
	if (ndev)
		ifindex = ndev->ifindex;
	rcu_read_unlock();

	if (ifindex) {
		sin6->sin6_scope_id = ifindex;
		return 0;
	}
	return kstrtou32(zone, 10, &sin6->sin6_scope_id) ? -EINVAL : 0;
}

static int rtrs_parse_ipv6(const char *s, size_t len, u16 port,
			   struct sockaddr_in6 *sin6)
{
	const char *end;
	int err;

	if (!in6_pton(s, len, sin6->sin6_addr.s6_addr, '%', &end))
		return -EINVAL;
	/*
	 * in6_pton() also stops, successfully, at a ':' that follows an
	 * embedded IPv4 address, so check what it stopped at.
	 */
	if (end != s + len) {
		if (*end != '%')
			return -EINVAL;
		end++;
		err = rtrs_parse_ipv6_zone(end, s + len - end, sin6);
		if (err)
			return err;
	}

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	return 0;
}

/* Only an IPv6 literal has a ':'; an IPv4 literal never does. */
static int rtrs_parse_ip(const char *s, size_t len, u16 port,
			 struct sockaddr_storage *ss)
{
	if (memchr(s, ':', len))
		return rtrs_parse_ipv6(s, len, port, (struct sockaddr_in6 *)ss);
	return rtrs_parse_ipv4(s, len, port, (struct sockaddr_in *)ss);
}

/*
 * An AF_IB address carries the port as IB service ID in the RDMA CM's IB
 * port space, as mainline RTRS does, so an IP listener on that port and an
 * AF_IB one use the same number.  The P_Key is the default full-membership
 * one.
 */
static int rtrs_parse_gid(const char *s, size_t len, u16 port,
			  struct sockaddr_ib *sib)
{
	const char *end;

	if (!in6_pton(s, len, sib->sib_addr.sib_raw, '\0', &end) ||
	    end != s + len)
		return -EINVAL;

	sib->sib_family = AF_IB;
	sib->sib_pkey = cpu_to_be16(0xffff);
	sib->sib_sid = cpu_to_be64(RDMA_IB_IP_PS_IB | port);
	sib->sib_sid_mask = cpu_to_be64(U64_MAX);
	return 0;
}

/* Parse one address: exactly the @len bytes at @s, NUL-free. */
static int rtrs_parse_addr(const char *s, size_t len, u16 port,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));

	if (!len || len > RTRS_ADDR_STR_MAX)
		return -EINVAL;
	if (rtrs_skip_prefix(&s, &len, "ip:"))
		return rtrs_parse_ip(s, len, port, ss);
	if (rtrs_skip_prefix(&s, &len, "gid:"))
		return rtrs_parse_gid(s, len, port, (struct sockaddr_ib *)ss);
	return -EPROTONOSUPPORT;
}

/*
 * Find the one separator of a path string, '@' or mainline's older ','.
 * Sets *@sep to its index, or to @len when there is none.
 */
static int rtrs_find_separator(const char *s, size_t len, size_t *sep)
{
	size_t i;

	*sep = len;
	for (i = 0; i < len; i++) {
		if (s[i] != '@' && s[i] != ',')
			continue;
		if (*sep != len)
			return -EINVAL;
		*sep = i;
	}
	return 0;
}

/**
 * rtrs_addr_to_sockaddr() - parse the text form of a path
 * @str: "[src@]dst"; mainline's older "src,dst" is accepted too.  Each
 *	address is "ip:" followed by an IPv4 or IPv6 literal, the latter
 *	optionally followed by "%" and a zone (only for a link-local
 *	address: an interface name in init_net, else a decimal interface
 *	index), or "gid:" followed by a GID written as an IPv6 literal.
 *	Prefixes are lower case.  Nothing may follow an address: no space,
 *	no newline, no port.
 * @len: length of @str.  @str need not be NUL-terminated; nothing at or
 *	past @str[@len] is read, and a NUL before that ends the string.
 * @port: port of the destination.  An IP destination gets it in
 *	sin_port/sin6_port; a GID destination gets it as IB service ID
 *	(RDMA_IB_IP_PS_IB | @port, all-ones mask) with P_Key 0xffff.  The
 *	source always gets port 0.
 * @addr: @addr->dst, and @addr->src when @str names a source, point to the
 *	caller's storage to fill in.  Each filled sockaddr is zeroed first.
 *
 * Context: any context.
 * Return: 0 on success; @addr->src is then set to NULL when @str names no
 * source.  -EPROTONOSUPPORT when an address has no "ip:" or "gid:" prefix;
 * -EINVAL for an empty string or address, more than one separator, an
 * address longer than any valid one, a bad literal, a zone that is
 * neither an interface name nor a decimal number, too long or on a
 * non-link-local address, or trailing characters.  On error the storage
 * may be clobbered, but @addr->src and @addr->dst themselves are left
 * alone.
 */
int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
			  struct rtrs_addr *addr)
{
	size_t sep;
	int err;

	len = strnlen(str, len);
	if (!len)
		return -EINVAL;

	err = rtrs_find_separator(str, len, &sep);
	if (err)
		return err;

	if (sep == len) {
		err = rtrs_parse_addr(str, len, port, addr->dst);
		if (!err)
			addr->src = NULL;
		return err;
	}

	err = rtrs_parse_addr(str, sep, 0, addr->src);
	if (err)
		return err;
	return rtrs_parse_addr(str + sep + 1, len - sep - 1, port, addr->dst);
}
EXPORT_SYMBOL_GPL(rtrs_addr_to_sockaddr);

static int rtrs_ipv6_to_str(const struct sockaddr_in6 *sin6, char *buf,
			    size_t len)
{
	if (sin6->sin6_scope_id)
		return scnprintf(buf, len, "ip:%pI6c%%%u", &sin6->sin6_addr,
				 sin6->sin6_scope_id);
	return scnprintf(buf, len, "ip:%pI6c", &sin6->sin6_addr);
}

/**
 * sockaddr_to_str() - print an address in the form rtrs_addr_to_sockaddr()
 *	parses
 * @addr: AF_INET, AF_INET6 or AF_IB address.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * AF_INET prints as "ip:" and dotted quad, AF_INET6 as "ip:" and the
 * compressed IPv6 form with "%" and the decimal zone index appended when
 * the scope ID is not 0, AF_IB as "gid:" and the full IPv6 form of the GID.
 * Ports are not printed.  Any other family prints as
 * "<invalid address family>".
 *
 * Context: any context.
 * Return: the number of characters written to @buf, not counting the
 * terminating NUL; 0 when @len is 0.  The output is truncated to fit.
 */
int sockaddr_to_str(const struct sockaddr *addr, char *buf, size_t len)
{
	const struct sockaddr_ib *sib;
	const struct sockaddr_in *sin;

	switch (addr->sa_family) {
	case AF_IB:
		sib = (const struct sockaddr_ib *)addr;
		return scnprintf(buf, len, "gid:%pI6", sib->sib_addr.sib_raw);
	case AF_INET:
		sin = (const struct sockaddr_in *)addr;
		return scnprintf(buf, len, "ip:%pI4", &sin->sin_addr);
	case AF_INET6:
		return rtrs_ipv6_to_str((const struct sockaddr_in6 *)addr,
					buf, len);
	}
	return scnprintf(buf, len, "<invalid address family>");
}
EXPORT_SYMBOL_GPL(sockaddr_to_str);

/**
 * rtrs_addr_to_str() - print a path in the form rtrs_addr_to_sockaddr()
 *	parses
 * @addr: the path; @addr->src may be NULL.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * Prints "src@dst", or "dst" alone when @addr->src is NULL, each address as
 * sockaddr_to_str() prints it.
 *
 * Context: any context.
 * Return: the number of characters written to @buf, not counting the
 * terminating NUL; 0 when @len is 0.  The output is truncated to fit.
 */
int rtrs_addr_to_str(const struct rtrs_addr *addr, char *buf, size_t len)
{
	int cnt = 0;

	if (addr->src) {
		cnt = sockaddr_to_str((struct sockaddr *)addr->src, buf, len);
		cnt += scnprintf(buf + cnt, len - cnt, "@");
	}
	cnt += sockaddr_to_str((struct sockaddr *)addr->dst, buf + cnt,
			       len - cnt);
	return cnt;
}
EXPORT_SYMBOL_GPL(rtrs_addr_to_str);

/*
 * Device pool.
 *
 * Every path on an ib_device shares one PD.  The pool finds a device's
 * entry under @pool->mutex; the last rtrs_ib_dev_put() takes the mutex
 * before the count drops to zero (kref_put_mutex()), so a get never sees an
 * entry that is being freed.
 */

/**
 * rtrs_ib_dev_pool_init() - prepare an empty device pool
 * @pool: the pool, owned by the caller (one per module).
 * @pd_flags: flags every PD of this pool is allocated with.
 *
 * Context: process context.
 */
void rtrs_ib_dev_pool_init(struct rtrs_ib_dev_pool *pool,
			   enum ib_pd_flags pd_flags)
{
	mutex_init(&pool->mutex);
	INIT_LIST_HEAD(&pool->devs);
	pool->pd_flags = pd_flags;
}
EXPORT_SYMBOL_GPL(rtrs_ib_dev_pool_init);

/**
 * rtrs_ib_dev_pool_destroy() - tear down a device pool
 * @pool: the pool; every rtrs_ib_dev_get() must have been put by now.
 *
 * Context: process context.
 */
void rtrs_ib_dev_pool_destroy(struct rtrs_ib_dev_pool *pool)
{
	WARN_ON(!list_empty(&pool->devs));
	mutex_destroy(&pool->mutex);
}
EXPORT_SYMBOL_GPL(rtrs_ib_dev_pool_destroy);

static struct rtrs_ib_dev *rtrs_ib_dev_find(struct rtrs_ib_dev_pool *pool,
					    struct ib_device *ib_dev)
{
	struct rtrs_ib_dev *dev;

	lockdep_assert_held(&pool->mutex);

	list_for_each_entry(dev, &pool->devs, entry)
		if (dev->ib_dev == ib_dev)
			return dev;
	return NULL;
}

static struct rtrs_ib_dev *rtrs_ib_dev_create(struct rtrs_ib_dev_pool *pool,
					      struct ib_device *ib_dev)
{
	struct rtrs_ib_dev *dev;
	struct ib_pd *pd;

	lockdep_assert_held(&pool->mutex);

	dev = rtrs_kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		return ERR_PTR(-ENOMEM);

	pd = rtrs_fail_or(ERR_PTR(-ENOMEM),
			  ib_alloc_pd(ib_dev, pool->pd_flags));
	if (IS_ERR(pd)) {
		kfree(dev);
		return ERR_CAST(pd);
	}

	dev->ib_dev = ib_dev;
	dev->ib_pd = pd;
	dev->pool = pool;
	kref_init(&dev->ref);
	list_add(&dev->entry, &pool->devs);
	return dev;
}

/**
 * rtrs_ib_dev_get() - take a reference on the pool's entry for a device
 * @pool: the pool.
 * @ib_dev: the RDMA device, typically cm_id->device of a connection.
 *
 * Returns the entry of @ib_dev with one more reference, creating it (and
 * allocating its PD with the pool's flags) on the first call for that
 * device.  The entry does not pin @ib_dev: the caller keeps the device
 * alive, normally through the rdma_cm_id it came from.
 *
 * Context: process context; takes @pool->mutex.
 * Return: the entry, or an ERR_PTR() when it could not be allocated.
 */
struct rtrs_ib_dev *rtrs_ib_dev_get(struct rtrs_ib_dev_pool *pool,
				    struct ib_device *ib_dev)
{
	struct rtrs_ib_dev *dev;

	mutex_lock(&pool->mutex);
	dev = rtrs_ib_dev_find(pool, ib_dev);
	if (dev)
		kref_get(&dev->ref);
	else
		dev = rtrs_ib_dev_create(pool, ib_dev);
	mutex_unlock(&pool->mutex);
	return dev;
}
EXPORT_SYMBOL_GPL(rtrs_ib_dev_get);

/* Called with the pool's mutex held, by kref_put_mutex(); drops it. */
static void rtrs_ib_dev_release(struct kref *ref)
{
	struct rtrs_ib_dev *dev = container_of(ref, struct rtrs_ib_dev, ref);

	list_del(&dev->entry);
	mutex_unlock(&dev->pool->mutex);

	ib_dealloc_pd(dev->ib_pd);
	kfree(dev);
}

/**
 * rtrs_ib_dev_put() - drop a reference taken by rtrs_ib_dev_get()
 * @dev: the entry.
 *
 * The last put removes the entry from its pool, deallocates the PD and
 * frees the entry; every object made on the PD must be gone by then.
 *
 * Context: process context; takes the pool's mutex on the last put.
 */
void rtrs_ib_dev_put(struct rtrs_ib_dev *dev)
{
	kref_put_mutex(&dev->ref, rtrs_ib_dev_release, &dev->pool->mutex);
}
EXPORT_SYMBOL_GPL(rtrs_ib_dev_put);

/*
 * Information units.
 */

static void rtrs_iu_unmap_free(struct rtrs_iu *iu, struct ib_device *dev)
{
	ib_dma_unmap_single(dev, iu->dma_addr, iu->size, iu->direction);
	kfree(iu->buf);
}

static int rtrs_iu_map(struct rtrs_iu *iu, size_t size, gfp_t gfp,
		       struct ib_device *dev, enum dma_data_direction dir)
{
	iu->buf = kzalloc(size, gfp);
	if (!iu->buf)
		return -ENOMEM;

	iu->dma_addr = ib_dma_map_single(dev, iu->buf, size, dir);
	if (ib_dma_mapping_error(dev, iu->dma_addr)) {
		kfree(iu->buf);
		return -ENOMEM;
	}
	iu->size = size;
	iu->direction = dir;
	return 0;
}

/**
 * rtrs_iu_alloc() - allocate an array of DMA-mapped message buffers
 * @count: number of IUs, at least 1.
 * @size: length of each buffer, at least 1.
 * @gfp: allocation flags, for the array and for each buffer.
 * @dev: device the buffers are mapped for.
 * @dir: DMA direction of the mappings (%DMA_TO_DEVICE for sends,
 *	%DMA_FROM_DEVICE for receives).
 * @done: completion handler stored in each IU's cqe.
 *
 * Each buffer is zeroed, kmalloc'd and mapped with ib_dma_map_single().
 * The caller syncs the mappings around each use.
 *
 * Context: may sleep unless @gfp says otherwise.
 * Return: the array, to be freed with rtrs_iu_free() and the same @count;
 * NULL when @count or @size is 0 or on allocation or mapping failure, with
 * nothing left allocated or mapped.
 */
struct rtrs_iu *rtrs_iu_alloc(u32 count, size_t size, gfp_t gfp,
			      struct ib_device *dev,
			      enum dma_data_direction dir,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc))
{
	struct rtrs_iu *ius;
	u32 i;

	if (!count || !size)
		return NULL;

	ius = rtrs_kcalloc(count, sizeof(*ius), gfp);
	if (!ius)
		return NULL;

	for (i = 0; i < count; i++) {
		/* One fault point for the buffers: the last, after the others. */
		if (rtrs_fail_last_or(i == count - 1, -ENOMEM,
				      rtrs_iu_map(&ius[i], size, gfp, dev, dir)))
			goto unwind;
		ius[i].cqe.done = done;
	}
	return ius;

unwind:
	while (i--)
		rtrs_iu_unmap_free(&ius[i], dev);
	kfree(ius);
	return NULL;
}
EXPORT_SYMBOL_GPL(rtrs_iu_alloc);

/**
 * rtrs_iu_free() - unmap and free what rtrs_iu_alloc() returned
 * @iu: the array, or NULL (nothing is done).
 * @dev: device the buffers were mapped for.
 * @count: number of IUs, as given to rtrs_iu_alloc().
 *
 * No work request may still refer to any of the IUs.
 *
 * Context: any context that may call kfree().
 */
void rtrs_iu_free(struct rtrs_iu *iu, struct ib_device *dev, u32 count)
{
	u32 i;

	if (!iu)
		return;

	for (i = 0; i < count; i++)
		rtrs_iu_unmap_free(&iu[i], dev);
	kfree(iu);
}
EXPORT_SYMBOL_GPL(rtrs_iu_free);

/*
 * Posting work requests.
 */

/* Number of WRs in the chain at @wr, stopping to count past @limit. */
static u32 rtrs_wr_chain_len(const struct ib_send_wr *wr, u32 limit)
{
	u32 n = 0;

	for (; wr && n <= limit; wr = wr->next)
		n++;
	return n;
}

/* Last WR of the non-empty chain at @wr. */
static struct ib_send_wr *rtrs_wr_chain_last(struct ib_send_wr *wr)
{
	while (wr->next)
		wr = wr->next;
	return wr;
}

/*
 * Post @head (may be NULL), then @wr, then @tail (may be NULL) as one list.
 * A chain longer than the send queue can never be posted whole, and a
 * cyclic one would make the walk below endless: reject both before
 * linking anything.
 */
static int rtrs_post_send_chain(struct rtrs_con *con, struct ib_send_wr *head,
				struct ib_send_wr *wr, struct ib_send_wr *tail)
{
	u32 limit = con->max_send_wr;
	u32 n;

	n = rtrs_wr_chain_len(head, limit) + 1;
	if (n <= limit)
		n += rtrs_wr_chain_len(tail, limit - n);
	if (n > limit) {
		pr_err_ratelimited("%s: chain of more than %u work requests\n",
				   __func__, limit);
		return -EINVAL;
	}

	wr->next = tail;
	if (head)
		rtrs_wr_chain_last(head)->next = wr;
	else
		head = wr;

	return ib_post_send(con->qp, head, NULL);
}

/*
 * Add the signal the caller asked for, or the one due every
 * con->signal_interval counted posts.
 */
static enum ib_send_flags rtrs_signal_flags(struct rtrs_con *con,
					    enum ib_send_flags flags)
{
	u32 interval = max(con->signal_interval, 1U);
	u32 cnt = atomic_inc_return(&con->wr_cnt);

	if (cnt % interval == 0)
		flags |= IB_SEND_SIGNALED;
	return flags;
}

/**
 * rtrs_iu_post_recv() - post a receive into an IU's buffer
 * @con: connection whose QP receives.
 * @iu: the IU; its whole buffer is the one SGE, and @iu->cqe completes.
 *
 * Context: any context.
 * Return: 0, or the error of ib_post_recv().
 */
int rtrs_iu_post_recv(struct rtrs_con *con, struct rtrs_iu *iu)
{
	struct ib_sge sge = {
		.addr	= iu->dma_addr,
		.length	= iu->size,
		.lkey	= con->path->dev->ib_pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_cqe		= &iu->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
	};

	return ib_post_recv(con->qp, &wr, NULL);
}
EXPORT_SYMBOL_GPL(rtrs_iu_post_recv);

/**
 * rtrs_post_recv_empty() - post a receive without a buffer
 * @con: connection whose QP receives.
 * @cqe: completion entry of the receive.
 *
 * An RDMA WRITE WITH IMMEDIATE consumes a receive but places no data in
 * it: this is the receive it takes.
 *
 * Context: any context.
 * Return: 0, or the error of ib_post_recv().
 */
int rtrs_post_recv_empty(struct rtrs_con *con, struct ib_cqe *cqe)
{
	struct ib_recv_wr wr = {
		.wr_cqe	= cqe,
	};

	return ib_post_recv(con->qp, &wr, NULL);
}
EXPORT_SYMBOL_GPL(rtrs_post_recv_empty);

/**
 * rtrs_post_probe_write() - signaled RDMA WRITE of no data
 * @con: connection to write on.
 * @cqe: completion entry of the write.
 *
 * A write of zero bytes needs no remote address or key, and the peer's
 * user never sees it; its completion says that the send queue moved past
 * everything posted before it.  The client probes a connection whose
 * requests wait too long with it, the server asks it for the completion
 * of responses it posted unsignaled.  Not counted in @con->wr_cnt.
 *
 * Context: any context.
 * Return: 0, or the error of ib_post_send().
 */
int rtrs_post_probe_write(struct rtrs_con *con, struct ib_cqe *cqe)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= cqe,
			.opcode		= IB_WR_RDMA_WRITE,
			.send_flags	= IB_SEND_SIGNALED,
		},
	};

	return ib_post_send(con->qp, &wr.wr, NULL);
}
EXPORT_SYMBOL_GPL(rtrs_post_probe_write);

/**
 * rtrs_iu_post_send() - send the start of an IU's buffer
 * @con: connection to send on.
 * @iu: the IU; @iu->cqe completes.
 * @size: bytes to send from the start of the buffer, 1 to @iu->size.
 * @head: work requests to post before the send, or NULL.  Its last WR is
 *	linked to the send.
 *
 * The send is always signaled and not counted in @con->wr_cnt.
 *
 * Context: any context.
 * Return: 0; -EINVAL for a bad @size or a chain longer than the send
 * queue; else the error of ib_post_send().
 */
int rtrs_iu_post_send(struct rtrs_con *con, struct rtrs_iu *iu, size_t size,
		      struct ib_send_wr *head)
{
	struct ib_sge sge = {
		.addr	= iu->dma_addr,
		.length	= size,
		.lkey	= con->path->dev->ib_pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe		= &iu->cqe,
		.sg_list	= &sge,
		.num_sge	= 1,
		.opcode		= IB_WR_SEND,
		.send_flags	= IB_SEND_SIGNALED,
	};

	if (!size || size > iu->size)
		return -EINVAL;

	return rtrs_post_send_chain(con, head, &wr, NULL);
}
EXPORT_SYMBOL_GPL(rtrs_iu_post_send);

/**
 * rtrs_iu_post_rdma_write_imm() - RDMA WRITE WITH IMMEDIATE from SGEs
 * @con: connection to write on.
 * @iu: IU whose cqe completes the write (its buffer is not sent unless an
 *	SGE points into it).
 * @sge: the data, @num_sge entries, each at least one byte long.
 * @num_sge: number of entries in @sge, at most the QP's max_send_sge; 0
 *	writes no data.
 * @rkey: remote key of the target.
 * @rdma_addr: remote address of the target.
 * @imm_data: immediate data, in CPU order; sent big-endian.
 * @flags: send flags; %IB_SEND_SIGNALED forces a completion.
 * @head: work requests to post before the write, or NULL.
 * @tail: work requests to post after the write, or NULL.
 *
 * The write is counted in @con->wr_cnt and signaled every
 * @con->signal_interval counted posts even without %IB_SEND_SIGNALED.
 *
 * Context: any context.
 * Return: 0; -EINVAL for an empty SGE or a chain longer than the send
 * queue; else the error of ib_post_send().
 */
int rtrs_iu_post_rdma_write_imm(struct rtrs_con *con, struct rtrs_iu *iu,
				struct ib_sge *sge, unsigned int num_sge,
				u32 rkey, u64 rdma_addr, u32 imm_data,
				enum ib_send_flags flags,
				struct ib_send_wr *head,
				struct ib_send_wr *tail)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= &iu->cqe,
			.sg_list	= sge,
			.num_sge	= num_sge,
			.opcode		= IB_WR_RDMA_WRITE_WITH_IMM,
			.ex.imm_data	= cpu_to_be32(imm_data),
		},
		.remote_addr	= rdma_addr,
		.rkey		= rkey,
	};
	unsigned int i;

	/* A zero-length SGE fails the whole WR with a length error. */
	for (i = 0; i < num_sge; i++)
		if (!sge[i].length)
			return -EINVAL;

	wr.wr.send_flags = rtrs_signal_flags(con, flags);
	return rtrs_post_send_chain(con, head, &wr.wr, tail);
}
EXPORT_SYMBOL_GPL(rtrs_iu_post_rdma_write_imm);

/**
 * rtrs_post_rdma_write_imm_empty() - RDMA WRITE WITH IMMEDIATE of no data
 * @con: connection to write on.
 * @cqe: completion entry of the write.
 * @imm_data: immediate data, in CPU order; sent big-endian.
 * @head: work requests to post before the write, or NULL.
 *
 * Carries IO responses, heartbeats and their acks.  Counted in
 * @con->wr_cnt and signaled every @con->signal_interval counted posts.
 *
 * Context: any context.
 * Return: 0; -EINVAL for a chain longer than the send queue; else the
 * error of ib_post_send().
 */
int rtrs_post_rdma_write_imm_empty(struct rtrs_con *con, struct ib_cqe *cqe,
				   u32 imm_data, struct ib_send_wr *head)
{
	struct ib_rdma_wr wr = {
		.wr = {
			.wr_cqe		= cqe,
			.opcode		= IB_WR_RDMA_WRITE_WITH_IMM,
			.ex.imm_data	= cpu_to_be32(imm_data),
		},
	};

	wr.wr.send_flags = rtrs_signal_flags(con, 0);
	return rtrs_post_send_chain(con, head, &wr.wr, NULL);
}
EXPORT_SYMBOL_GPL(rtrs_post_rdma_write_imm_empty);

/*
 * Completion queues and queue pairs.
 */

/*
 * The first packet of an RC connection may reach the passive side before
 * the CM's RTU; the QP then reports communication established, and the CM
 * must hear of it to complete the connection (IBTA 1.4, 12.9.8.2).
 */
static void rtrs_qp_event(struct ib_event *ev, void *ctx)
{
	struct rtrs_con *con = ctx;

	if (ev->event == IB_EVENT_COMM_EST) {
		rdma_notify(con->cm_id, IB_EVENT_COMM_EST);
		return;
	}
	pr_info_ratelimited("connection %u: QP event %s (%d)\n", con->cid,
			    ib_event_msg(ev->event), ev->event);
}

/* A CQ of its own when polled directly, else one shared from the pool. */
static struct ib_cq *rtrs_cq_get(struct rtrs_con *con, int cq_vector,
				 int nr_cqe, enum ib_poll_context poll_ctx)
{
	struct ib_device *ib_dev = con->cm_id->device;

	if (poll_ctx == IB_POLL_DIRECT)
		return ib_alloc_cq(ib_dev, con, nr_cqe,
				   cq_vector < 0 ? 0 :
				   cq_vector % ib_dev->num_comp_vectors,
				   poll_ctx);
	return ib_cq_pool_get(ib_dev, nr_cqe, cq_vector, poll_ctx);
}

static int rtrs_cq_create(struct rtrs_con *con, int cq_vector, int nr_cqe,
			  enum ib_poll_context poll_ctx)
{
	struct ib_device *ib_dev = con->cm_id->device;
	struct ib_cq *cq;

	if (nr_cqe <= 0 || nr_cqe > ib_dev->attrs.max_cqe)
		return -EINVAL;

	cq = rtrs_fail_or(ERR_PTR(-ENOMEM),
			  rtrs_cq_get(con, cq_vector, nr_cqe, poll_ctx));
	if (IS_ERR(cq))
		return PTR_ERR(cq);

	con->cq = cq;
	con->nr_cqe = nr_cqe;
	con->poll_ctx = poll_ctx;
	return 0;
}

static void rtrs_cq_destroy(struct rtrs_con *con)
{
	if (!con->cq)
		return;
	if (con->poll_ctx == IB_POLL_DIRECT)
		ib_free_cq(con->cq);
	else
		ib_cq_pool_put(con->cq, con->nr_cqe);
	con->cq = NULL;
}

/*
 * Create the QP of @init_attr with the inline data @con->max_inline asks
 * for; a device that takes no QP with that much gets one without.
 */
static int rtrs_qp_create_inline(struct rtrs_con *con, struct ib_pd *pd,
				 struct ib_qp_init_attr *init_attr)
{
	int err;

	init_attr->cap.max_inline_data = con->max_inline;
	err = rdma_create_qp(con->cm_id, pd, init_attr);
	if (!err || !con->max_inline)
		return err;
	pr_debug("connection %u: no QP with %u bytes inline: %d\n", con->cid,
		 con->max_inline, err);
	init_attr->cap.max_inline_data = 0;
	return rdma_create_qp(con->cm_id, pd, init_attr);
}

static int rtrs_qp_create(struct rtrs_con *con, struct ib_pd *pd,
			  u32 max_send_sge, u32 max_send_wr, u32 max_recv_wr,
			  struct ib_srq *srq)
{
	const struct ib_device_attr *attrs = &con->cm_id->device->attrs;
	struct ib_qp_init_attr init_attr = {
		.event_handler	= rtrs_qp_event,
		.qp_context	= con,
		.send_cq	= con->cq,
		.recv_cq	= con->cq,
		.cap = {
			.max_send_wr	= min_t(u32, max_send_wr,
						attrs->max_qp_wr),
			.max_recv_wr	= min_t(u32, max_recv_wr,
						attrs->max_qp_wr),
			.max_send_sge	= min_t(u32, max_send_sge,
						attrs->max_send_sge),
			.max_recv_sge	= 1,
		},
		.srq		= srq,
		.sq_sig_type	= IB_SIGNAL_REQ_WR,
		.qp_type	= IB_QPT_RC,
	};
	int err;

	/* A QP on a shared receive queue has no receive queue of its own. */
	if (srq)
		init_attr.cap.max_recv_wr = 0;

	err = rtrs_fail_or(-ENOMEM, rtrs_qp_create_inline(con, pd, &init_attr));
	if (err)
		return err;

	con->qp = con->cm_id->qp;
	con->max_send_wr = init_attr.cap.max_send_wr;
	con->max_recv_wr = init_attr.cap.max_recv_wr;
	con->max_inline = init_attr.cap.max_inline_data;
	atomic_set(&con->sq_wr_avail, con->max_send_wr);
	return 0;
}

/**
 * rtrs_cq_qp_create() - create the CQ and the RC QP of a connection
 * @path: path of the connection; its @dev gives the PD.
 * @con: the connection; @con->cm_id must be bound to a device already.
 * @max_send_sge: SGEs per send WR; clamped to the device's max_send_sge.
 * @cq_vector: completion vector, taken modulo the device's; negative lets
 *	the CQ pool choose (vector 0 for %IB_POLL_DIRECT).
 * @nr_cqe: CQ entries, at least the send and receive WRs together; must
 *	not exceed the device's max_cqe.
 * @max_send_wr: send queue size; clamped to the device's max_qp_wr.
 * @max_recv_wr: receive queue size; clamped to the device's max_qp_wr.
 *	Receive WRs carry one SGE.  Ignored with @srq.
 * @srq: shared receive queue the QP receives from, or NULL for a receive
 *	queue of its own
 * @poll_ctx: %IB_POLL_DIRECT makes a private CQ for a poll queue, which
 *	the user polls with ib_process_cq_direct(); any other context takes
 *	a shared CQ from the device's CQ pool.
 *
 * Sets @con->path, @con->cq, @con->nr_cqe, @con->poll_ctx, @con->qp, the
 * queue sizes actually created in @con->max_send_wr and
 * @con->max_recv_wr, and @con->sq_wr_avail to @con->max_send_wr.  The QP
 * signals only WRs that ask for it.  It takes the inline data the caller
 * asked for in @con->max_inline, or none where the device refuses that:
 * @con->max_inline is left as the QP took it.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a bad @nr_cqe; else the error of the CQ or QP
 * creation, with nothing left created.
 */
int rtrs_cq_qp_create(struct rtrs_path *path, struct rtrs_con *con,
		      u32 max_send_sge, int cq_vector, int nr_cqe,
		      u32 max_send_wr, u32 max_recv_wr, struct ib_srq *srq,
		      enum ib_poll_context poll_ctx)
{
	int err;

	con->path = path;
	err = rtrs_cq_create(con, cq_vector, nr_cqe, poll_ctx);
	if (err) {
		pr_err_ratelimited("connection %u: creating CQ failed: %d\n",
				   con->cid, err);
		return err;
	}

	err = rtrs_qp_create(con, path->dev->ib_pd, max_send_sge, max_send_wr,
			     max_recv_wr, srq);
	if (err) {
		pr_err_ratelimited("connection %u: creating QP failed: %d\n",
				   con->cid, err);
		rtrs_cq_destroy(con);
		return err;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(rtrs_cq_qp_create);

/**
 * rtrs_cq_qp_destroy() - destroy what rtrs_cq_qp_create() made
 * @con: the connection.
 *
 * Destroys the QP, then releases the CQ the way it was obtained.  Safe on
 * a connection whose creation failed or never happened (@con->qp and
 * @con->cq NULL), and when called twice.  The QP should be drained first.
 *
 * Context: process context.
 */
void rtrs_cq_qp_destroy(struct rtrs_con *con)
{
	if (con->qp) {
		rdma_destroy_qp(con->cm_id);
		con->qp = NULL;
	}
	rtrs_cq_destroy(con);
}
EXPORT_SYMBOL_GPL(rtrs_cq_qp_destroy);

/*
 * Heartbeats.
 *
 * Every hb_interval_ms the work sends a heartbeat on the admin connection
 * and counts it as missed until rtrs_hb_received() hears of any traffic
 * from the peer.  When hb_missed_max beats in a row have been missed the
 * path has failed.  See struct rtrs_path for the concurrency rules.
 */

static void rtrs_hb_schedule(struct rtrs_path *path)
{
	queue_delayed_work(path->hb_wq, &path->hb_dwork,
			   msecs_to_jiffies(path->hb_interval_ms));
}

/*
 * Post a heartbeat or ack on the admin connection.  It takes no
 * @sq_wr_avail slot: whoever sizes the send queue reserves room for it.
 */
static int rtrs_hb_post(struct rtrs_path *path, u32 type)
{
	struct rtrs_con *con = path->con[0];

	return rtrs_post_rdma_write_imm_empty(con, path->hb_cqe,
					      rtrs_imm(type, 0), NULL);
}

static void rtrs_hb_fail(struct rtrs_path *path)
{
	path->hb_err_handler(path->con[0]);
}

static void rtrs_hb_work(struct work_struct *work)
{
	struct rtrs_path *path = container_of(to_delayed_work(work),
					      struct rtrs_path, hb_dwork);
	unsigned int missed = READ_ONCE(path->hb_missed_cnt);
	int err;

	if (missed >= path->hb_missed_max) {
		pr_err_ratelimited("%s: %u heartbeats missed\n",
				   path->sessname, missed);
		rtrs_hb_fail(path);
		return;
	}

	WRITE_ONCE(path->hb_last_sent, ktime_get());
	/*
	 * Traffic that cleared the count since it was read wins: the count
	 * stays 0 and this beat is not counted against the peer.
	 */
	cmpxchg(&path->hb_missed_cnt, missed, missed + 1);

	err = rtrs_hb_post(path, RTRS_HB_MSG_IMM);
	if (err) {
		pr_err_ratelimited("%s: sending heartbeat failed: %d\n",
				   path->sessname, err);
		rtrs_hb_fail(path);
		return;
	}
	rtrs_hb_schedule(path);
}

/**
 * rtrs_init_hb() - set up the heartbeats of a path
 * @path: the path; @path->con[0] is the connection they go over.
 * @cqe: completion entry of heartbeat and ack writes.
 * @interval_ms: time between heartbeats; 0 disables them.
 * @missed_max: missed heartbeats in a row after which the path fails.
 * @err_handler: called with @path->con[0] from the heartbeat work when the
 *	path has failed (too many beats missed, or a beat could not be
 *	posted).  It runs in the work rtrs_stop_hb() waits for, so it must
 *	not call rtrs_stop_hb() itself: it should queue the path's close.
 * @wq: workqueue to run the heartbeat work on.
 *
 * Does not start anything; see rtrs_start_hb().
 *
 * Context: process context, with the heartbeats stopped.
 */
void rtrs_init_hb(struct rtrs_path *path, struct ib_cqe *cqe,
		  unsigned int interval_ms, unsigned int missed_max,
		  void (*err_handler)(struct rtrs_con *con),
		  struct workqueue_struct *wq)
{
	path->hb_cqe = cqe;
	path->hb_interval_ms = interval_ms;
	path->hb_missed_max = missed_max;
	path->hb_err_handler = err_handler;
	path->hb_wq = wq;
	path->hb_missed_cnt = 0;
	path->hb_last_sent = 0;
	path->hb_cur_latency = 0;
	INIT_DELAYED_WORK(&path->hb_dwork, rtrs_hb_work);
}
EXPORT_SYMBOL_GPL(rtrs_init_hb);

/**
 * rtrs_start_hb() - start sending heartbeats
 * @path: the path, set up with rtrs_init_hb().
 *
 * Call only once every connection of the path is up: the first heartbeat
 * leaves one interval later.
 *
 * Context: any context.
 */
void rtrs_start_hb(struct rtrs_path *path)
{
	if (path->hb_interval_ms)
		rtrs_hb_schedule(path);
}
EXPORT_SYMBOL_GPL(rtrs_start_hb);

/**
 * rtrs_stop_hb() - stop sending heartbeats
 * @path: the path.
 *
 * Waits for a running heartbeat work to finish, then resets the missed
 * count, so that a restarted path starts afresh.
 *
 * Context: process context; not from the path's err_handler.
 */
void rtrs_stop_hb(struct rtrs_path *path)
{
	cancel_delayed_work_sync(&path->hb_dwork);
	WRITE_ONCE(path->hb_missed_cnt, 0);
}
EXPORT_SYMBOL_GPL(rtrs_stop_hb);

/**
 * rtrs_send_hb_ack() - acknowledge a heartbeat
 * @path: the path the heartbeat came in on.
 *
 * Posts %RTRS_HB_ACK_IMM on @path->con[0].  A post fails only on a QP in
 * error, whose connection is failing anyway; the failure is logged, not
 * reported.
 *
 * Context: any context, typically the receive completion.
 */
void rtrs_send_hb_ack(struct rtrs_path *path)
{
	int err;

	err = rtrs_hb_post(path, RTRS_HB_ACK_IMM);
	if (err)
		pr_err_ratelimited("%s: sending heartbeat ack failed: %d\n",
				   path->sessname, err);
}
EXPORT_SYMBOL_GPL(rtrs_send_hb_ack);

/**
 * rtrs_hb_received() - note that the peer is alive
 * @path: the path traffic came in on.
 *
 * Call on every completion of a receive from the peer: any traffic clears
 * the missed count.  Cheap when no heartbeat is outstanding: one read.
 *
 * Context: any context.
 */
void rtrs_hb_received(struct rtrs_path *path)
{
	if (READ_ONCE(path->hb_missed_cnt))
		xchg(&path->hb_missed_cnt, 0);
}
EXPORT_SYMBOL_GPL(rtrs_hb_received);

/**
 * rtrs_hb_ack_received() - a heartbeat ack came in
 * @path: the path it came in on.
 *
 * Stores the time since the last heartbeat left in @path->hb_cur_latency,
 * the round trip the min-latency policy compares, and clears the missed
 * count like rtrs_hb_received().  Only the ack measures: other traffic
 * may arrive at any moment after a beat left.
 *
 * Context: any context.
 */
void rtrs_hb_ack_received(struct rtrs_path *path)
{
	WRITE_ONCE(path->hb_cur_latency,
		   ktime_sub(ktime_get(), READ_ONCE(path->hb_last_sent)));
	rtrs_hb_received(path);
}
EXPORT_SYMBOL_GPL(rtrs_hb_ack_received);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * Fault injection: the setup steps of client and server ask
 * rtrs_fault_inject() before each thing that can fail, and fail as that
 * thing would when it says so.  They ask through the wrappers next to its
 * declaration in rtrs-pri.h, each use one fault point: rtrs_kzalloc(),
 * rtrs_kcalloc() and rtrs_alloc_percpu() for allocations, rtrs_fail_or()
 * for any other step, given the error the step returns when it fails, and
 * rtrs_fail_last_or() for a loop's step, a point on the last run only.
 * Driven through debugfs, fail_rtrs/ (see Documentation/fault-injection/),
 * and by fail-nth in task context.
 */
static DECLARE_FAULT_ATTR(rtrs_fail_attr);
static struct dentry *rtrs_fail_dir;

/**
 * rtrs_fault_inject() - should the setup step about to run fail?
 *
 * Context: any context.
 * Return: true when the step must fail as it would for lack of memory.
 */
bool rtrs_fault_inject(void)
{
	return should_fail(&rtrs_fail_attr, 1);
}
EXPORT_SYMBOL_GPL(rtrs_fault_inject);

static void rtrs_fault_init(void)
{
	/* Without its debugfs files the attribute is never armed. */
	rtrs_fail_dir = fault_create_debugfs_attr("fail_rtrs", NULL,
						  &rtrs_fail_attr);
}

static void rtrs_fault_exit(void)
{
	debugfs_remove_recursive(rtrs_fail_dir);
}
#else
static void rtrs_fault_init(void) {}
static void rtrs_fault_exit(void) {}
#endif

static int __init rtrs_core_init(void)
{
	rtrs_fault_init();
	return 0;
}

static void __exit rtrs_core_exit(void)
{
	rtrs_fault_exit();
}

module_init(rtrs_core_init);
module_exit(rtrs_core_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): shared core");
MODULE_LICENSE("GPL");
