/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, public API.
 *
 * What in-kernel users (rnbd first) build against.  Source-compatible with
 * the public RTRS header of Linux 6.1: same names, argument types, enums
 * and struct members, so a user written for mainline RTRS builds
 * unmodified.
 *
 * The client side (rtrs-client.ko) opens a session to a server over one or
 * more paths and sends READ and WRITE requests, each carrying a small user
 * message; the server side (rtrs-server.ko) hands every request to its user
 * through struct rtrs_srv_ops and sends back the user's response.
 * rtrs-core.ko holds the address helpers that both sides and their users
 * share.
 *
 * The session, permit, server context and server operation types are opaque
 * to users: they only ever hold pointers to them.
 *
 * The types defined here are documented here; each function is documented
 * once, at its definition in rtrs-clt*.c, rtrs-srv*.c or rtrs-core.c.
 * Documentation/rtrs-api.rst gathers both.
 */
#ifndef RTRS_H
#define RTRS_H

#include <linux/scatterlist.h>
#include <linux/socket.h>
#include <linux/types.h>
#include <linux/uio.h>

struct rtrs_permit;
struct rtrs_clt_sess;
struct rtrs_srv_ctx;
struct rtrs_srv_sess;
struct rtrs_srv_op;

/* Client side. */

/**
 * enum rtrs_clt_link_ev - connectivity change of a client session
 * @RTRS_CLT_LINK_EV_RECONNECTED: a path came up while no other path of the
 *	session was up, so the session can carry requests again, already
 *	from within the callback (rnbd sends from there without waiting for
 *	a permit).  Not sent for the connections rtrs_clt_open() establishes.
 * @RTRS_CLT_LINK_EV_DISCONNECTED: the last connected path of the session
 *	went down; until a reconnect succeeds, rtrs_clt_request() fails with
 *	-ECONNABORTED.
 *
 * Delivered through &rtrs_clt_ops.link_ev.
 */
enum rtrs_clt_link_ev {
	RTRS_CLT_LINK_EV_RECONNECTED,
	RTRS_CLT_LINK_EV_DISCONNECTED,
};

/**
 * struct rtrs_addr - the two ends of one path
 * @src: local address to bind to, or NULL to let the RDMA CM pick one by
 *	routing.  rtrs_addr_to_sockaddr() sets it to NULL when its string
 *	names no source.
 * @dst: address of the server; never NULL.
 *
 * Both point to storage owned by the caller.  The address family (AF_INET,
 * AF_INET6 or AF_IB) of @src, when given, should match that of @dst.
 */
struct rtrs_addr {
	struct sockaddr_storage *src;
	struct sockaddr_storage *dst;
};

/**
 * struct rtrs_clt_ops - callbacks of a client session's user
 * @priv: opaque pointer of the user, passed back to @link_ev.
 * @link_ev: called with @priv and the event when the session loses its last
 *	connected path or regains a first one (see enum rtrs_clt_link_ev).
 *	Called from process context (a workqueue, or the sysfs write that
 *	changed a path) with a per-session mutex held that serialises the
 *	events; it may sleep but must not call rtrs_clt_close() on this
 *	session.
 *
 * rtrs_clt_open() copies both members; the struct itself need not outlive
 * that call.
 */
struct rtrs_clt_ops {
	void	*priv;
	void	(*link_ev)(void *priv, enum rtrs_clt_link_ev ev);
};

struct rtrs_clt_sess *rtrs_clt_open(struct rtrs_clt_ops *ops,
				    const char *pathname,
				    const struct rtrs_addr *paths,
				    size_t path_cnt, u16 port,
				    size_t pdu_sz, u8 reconnect_delay_sec,
				    s16 max_reconnect_attempts,
				    u32 nr_poll_queues);

void rtrs_clt_close(struct rtrs_clt_sess *clt);

/**
 * enum wait_type - whether rtrs_clt_get_permit() may sleep
 * @RTRS_PERMIT_NOWAIT: return NULL at once when no permit is free.
 * @RTRS_PERMIT_WAIT: sleep (uninterruptibly) until a permit is put back.
 */
enum wait_type {
	RTRS_PERMIT_NOWAIT = 0,
	RTRS_PERMIT_WAIT   = 1
};

/**
 * enum rtrs_clt_con_type - which connection of a path a permit's request
 *	takes
 * @RTRS_ADMIN_CON: the user's control messages; kept for source
 *	compatibility, they go on the IO connection of the CPU the permit was
 *	taken on, as %RTRS_IO_CON does: the path's first connection carries
 *	its own set-up and heartbeats only.
 * @RTRS_IO_CON: an IO connection, chosen by the CPU the permit was taken on.
 */
enum rtrs_clt_con_type {
	RTRS_ADMIN_CON,
	RTRS_IO_CON
};

struct rtrs_permit *rtrs_clt_get_permit(struct rtrs_clt_sess *clt,
					enum rtrs_clt_con_type con_type,
					enum wait_type wait);

void rtrs_clt_put_permit(struct rtrs_clt_sess *clt,
			 struct rtrs_permit *permit);

/**
 * struct rtrs_clt_req_ops - completion callback of one request
 * @priv: opaque pointer of the user, passed back to @conf_fn.
 * @conf_fn: called exactly once for every rtrs_clt_request() that returned
 *	0, with @priv and the result: 0, or a negative errno (the one the
 *	server user gave rtrs_srv_resp_rdma(), or a transport error when the
 *	path failed).  For a READ, the data is in the scatterlist when it
 *	reports 0.  It may run before rtrs_clt_request() returns, in softirq
 *	context (completion of an interrupt-driven connection) or in process
 *	context (rtrs_clt_rdma_cq_direct(), or a path failing its requests);
 *	it must not sleep.
 *
 * rtrs_clt_request() copies both members.
 */
struct rtrs_clt_req_ops {
	void	*priv;
	void	(*conf_fn)(void *priv, int err);
};

int rtrs_clt_request(int dir, struct rtrs_clt_req_ops *ops,
		     struct rtrs_clt_sess *clt, struct rtrs_permit *permit,
		     const struct kvec *vec, size_t nr, size_t len,
		     struct scatterlist *sg, unsigned int sg_cnt);

int rtrs_clt_rdma_cq_direct(struct rtrs_clt_sess *clt, unsigned int index);

/**
 * struct rtrs_attrs - limits of a connected client session
 * @queue_depth: number of permits, so the most requests in flight at once.
 * @max_io_size: the most data bytes (@len of rtrs_clt_request()) one
 *	request may carry.
 * @max_segments: the most scatterlist entries (@sg_cnt of
 *	rtrs_clt_request()) one request may carry.
 */
struct rtrs_attrs {
	u32		queue_depth;
	u32		max_io_size;
	u32		max_segments;
};

int rtrs_clt_query(struct rtrs_clt_sess *clt, struct rtrs_attrs *attr);

/* Server side. */

/**
 * enum rtrs_srv_link_ev - connectivity change of a server session
 * @RTRS_SRV_LINK_EV_CONNECTED: the first path of a client session is up.
 *	The user usually calls rtrs_srv_set_sess_priv() from this event.
 * @RTRS_SRV_LINK_EV_DISCONNECTED: the last path of the session is closed.
 *	Every operation &rtrs_srv_ops.rdma_ev received on the session has been
 *	responded to with rtrs_srv_resp_rdma() and no further one will come;
 *	the user must not use the session after the callback returns.
 *
 * Delivered through &rtrs_srv_ops.link_ev.
 */
enum rtrs_srv_link_ev {
	RTRS_SRV_LINK_EV_CONNECTED,
	RTRS_SRV_LINK_EV_DISCONNECTED,
};

/**
 * struct rtrs_srv_ops - callbacks of the server's user
 * @rdma_ev: called once for every READ or WRITE request a client sends,
 *	with the session's private pointer (see rtrs_srv_set_sess_priv(); NULL
 *	if never set), the operation @id, the data area and the client's user
 *	message (@usr, @usrlen bytes; only valid during the call).  For a
 *	client WRITE, @data holds the @datalen bytes the client wrote; for a
 *	client READ, the user fills @data with the @datalen bytes to send
 *	back.  @data stays valid until the response.  Returning 0 hands @id to
 *	the user, who must respond to it exactly once with
 *	rtrs_srv_resp_rdma(), from any context, possibly before returning.
 *	Returning a negative errno makes rtrs respond to the client with it;
 *	the user must then not touch @id again.  Called from process context
 *	(completion work); it may sleep, which stalls further requests of that
 *	connection.
 * @link_ev: called with the session, the event and the private pointer
 *	(NULL for %RTRS_SRV_LINK_EV_CONNECTED).  For
 *	%RTRS_SRV_LINK_EV_CONNECTED, a non-zero return refuses the session:
 *	rtrs closes the path that brought it up.  The return value of
 *	%RTRS_SRV_LINK_EV_DISCONNECTED is ignored.  Called from process context
 *	with a per-session mutex held that serialises the events; it may
 *	sleep.
 *
 * rtrs_srv_open() copies the struct.
 */
struct rtrs_srv_ops {
	int (*rdma_ev)(void *priv, struct rtrs_srv_op *id, void *data,
		       size_t datalen, const void *usr, size_t usrlen);
	int (*link_ev)(struct rtrs_srv_sess *srv, enum rtrs_srv_link_ev ev,
		       void *priv);
};

struct rtrs_srv_ctx *rtrs_srv_open(struct rtrs_srv_ops *ops, u16 port);

void rtrs_srv_close(struct rtrs_srv_ctx *ctx);

bool rtrs_srv_resp_rdma(struct rtrs_srv_op *id, int status);

void rtrs_srv_set_sess_priv(struct rtrs_srv_sess *srv, void *priv);

int rtrs_srv_get_path_name(struct rtrs_srv_sess *srv, char *pathname,
			   size_t len);

int rtrs_srv_get_queue_depth(struct rtrs_srv_sess *srv);

/* Address helpers, in rtrs-core.ko. */

int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
			  struct rtrs_addr *addr);

int sockaddr_to_str(const struct sockaddr *addr, char *buf, size_t len);

int rtrs_addr_to_str(const struct rtrs_addr *addr, char *buf, size_t len);

#endif /* RTRS_H */
