// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs-peer: a userspace RTRS 2.0 (and 2.1) client that lies to a server.
 *
 *   rtrs-peer client SRC DST PORT CASE [HOLD_SECONDS]
 *   rtrs-peer server ADDR PORT CASE
 *
 * As a client, each CASE is one protocol violation (or, for "good-io",
 * "ooo" and "hb-con", a legal oddity that must be served; "shared-chunk"
 * opens a session of two paths and checks that the server runs no two
 * requests on one chunk at once, HOLD_SECONDS being the test server's
 * late_ms in seconds).  The cases named "v21-..." speak protocol 2.1
 * instead: "v21-good", "v21-tag-good" (the same with tagged message ids)
 * and "v21-rq" must be served (for "v21-rq" the
 * number in place of HOLD_SECONDS is the server's srq_size), the others
 * are violations (see "protocol 2.1" below).  The exit
 * status says whether the server reacted as the protocol requires: 0 when
 * it did (rejected the connect request, closed the connection, or served
 * a legal request), 1 when it did not, 2 when the peer itself failed.
 *
 *   rtrs-peer cells SRC DST PORT CELL...
 *
 * A CELL "m:STATE:MSG:CON:keep|close" is one cell of the table of
 * messages and path states (Documentation/rtrs.rst): bring the path to
 * STATE, send MSG on connection CON, and expect the path kept or closed.
 * "cells" plays each on a session of its own, one after the other, and
 * marks the start of each in the kernel log ("rtrs-peer: cell CELL") so
 * that the scenario can count what each cost there; the exit status is
 * 0 when every cell went as expected.  As a server, "server-cells"
 * serves one client session per CELL, in turn, and says how each went.
 *
 * As a server, the peer responds to one client session with the lie CASE
 * names and exits 0 once the client has dropped every connection (the
 * scenario then checks what the client made of it), 1 when the client
 * kept the connections, 2 on its own failure.  The lies named "v21-..."
 * are told by a server that speaks 2.1 (srv_req21()).  The wire layout is
 * written out here from the protocol, independently of the kernel
 * headers, so that a change of the module's layout shows as a failure.
 */
#include <arpa/inet.h>
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define RTRS_MAGIC		0x1BBD
#define RTRS_VERSION		0x0200
#define RTRS_VERSION_2_1	0x0201
#define CONN_REQ_FIRST_CONN	0x01
/* 2.1: the client would tag its message ids; the server echoes tags. */
#define CONN_REQ_MSG_TAGS	0x04
#define CONN_RSP_MSG_TAGS	0x01

#define MSG_INFO_REQ		0
#define MSG_INFO_RSP		1
#define MSG_WRITE		2
#define MSG_READ		3
#define MSG_RKEY_RSP		4
/* Protocol 2.1's: requests in a SEND, and the server's response. */
#define MSG_READ_REQ		5
#define MSG_WRITE_REQ		6
#define MSG_WRITE_INLINE	7
#define MSG_IO_RSP		8
/* A READ of up to max_read_buf: data and response in one WRITE WITH IMM. */
#define MSG_READ_BUF		9

#define IMM_IO_REQ		0
#define IMM_IO_RSP		1
#define IMM_IO_RSP_W_INV	2
#define IMM_HB_MSG		8
#define IMM_HB_ACK		9
/* A type of immediate no RTRS peer sends. */
#define IMM_NO_TYPE		5
#define IMM_PAYLOAD_BITS	28

#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

#define MAX_CONS		8
#define RECV_DEPTH		256
#define SEND_DEPTH		128
#define BUF_SIZE		(1024 * 1024)
#define WAIT_MS			20000
#define HOLD_STEP_MS		100

/* Connect request private data: 56 bytes, little-endian. */
struct conn_req {
	__u8		cma_version;
	__u8		ip_version;
	__u16	magic;
	__u16	version;
	__u16	cid;
	__u16	cid_num;
	__u16	recon_cnt;
	__u8		sess_uuid[16];
	__u8		paths_uuid[16];
	__u8		flags;
	__u8		reserved[11];
};

struct conn_rsp {
	__u16	magic;
	__u16	version;
	__u16	errno_;
	__u16	queue_depth;
	__u32	max_io_size;
	__u32	max_hdr_size;
	__u32	flags;
	__u8		reserved[36];
};

struct info_req {
	__u16	type;
	__u8		pathname[255];
	__u8		reserved[15];
};

struct sg_desc {
	__u64	addr;
	__u32	key;
	__u32	len;
};

struct info_rsp {
	__u16	type;
	__u16	sg_cnt;
	__u8		reserved[4];
	struct sg_desc	desc[];
};

struct rdma_read_hdr {
	__u16	type;
	__u16	usr_len;
	__u16	flags;
	__u16	sg_cnt;
	struct sg_desc	desc[2];
};

/*
 * Protocol 2.1.  The connection response of a path that agreed on 2.1:
 * the first 28 bytes of the private data.  Where both sides agreed on
 * tags (flags), a message id is a slot in its low 16 bits and a tag in
 * its high 16 bits; an immediate answer carries the tag's low 3 bits.
 */
struct conn_rsp_2_1 {
	__u16	magic;
	__u16	version;
	__u16	errno_;
	__u16	queue_depth;
	__u32	max_io_size;
	__u32	max_hdr_size;
	__u32	max_inline_size;
	__u32	max_read_buf;
	__u32	flags;
};

/* READ_REQ, WRITE_REQ: the user message follows; desc is the client's. */
struct io_req {
	__u16	type;
	__u16	usr_len;
	__u32	msg_id;
	struct sg_desc	desc;
};

/* WRITE_INLINE: the user message follows, the data at max_hdr_size. */
struct write_inline {
	__u16	type;
	__u16	usr_len;
	__u32	msg_id;
	__u32	data_len;
};

struct io_rsp {
	__u16	type;
	__u16	errno_;
	__u32	msg_id;
};

static_assert(sizeof(struct conn_rsp_2_1) == 28, "2.1 connection response");

#define MSG_ID(slot, tag)	((__u32)(tag) << 16 | ((slot) & 0xffff))
#define IMM_MSG_ID(id)		((id) & 0x7ffff)
static_assert(sizeof(struct io_req) == 24, "READ_REQ and WRITE_REQ header");
static_assert(sizeof(struct write_inline) == 12, "WRITE_INLINE header");
static_assert(sizeof(struct io_rsp) == 8, "IO_RSP");

/*
 * A connection.  One of a 2.1 path's IO connections (@io21) takes the
 * server's responses in slots of its own (post_rsp_recv()); @nr_recv,
 * when not 0, is how many receives it posts at set-up in place of
 * RECV_DEPTH, and @sent counts the completions of its sends that
 * take_wc21() took.  @stashed counts the requests a server's send_wait()
 * took on it, for srv_io21() to serve (P.keep_recvs).
 */
struct con {
	struct rdma_cm_id	*id;
	struct ibv_cq		*cq;
	int			established;
	int			rejected;
	int			disconnected;
	int			rej_status;
	struct conn_rsp		rsp;
	int			io21;
	unsigned int		nr_recv;
	unsigned int		sent;
	unsigned int		stashed;
};

static struct peer {
	struct rdma_event_channel *ch;
	struct ibv_pd		*pd;
	struct ibv_mr		*mr;
	char			*buf;	/* [0, 64K): receives; then send data */
	struct sockaddr_in	src, dst;
	struct con		con[MAX_CONS];
	unsigned int		cid_num;
	__u8			sess_uuid[16], paths_uuid[16];
	/* From the server. */
	unsigned int		queue_depth, chunk_size, chunks;
	struct sg_desc		desc[65536];
	/* A second path's, in slots 2 and 3 ("shared-chunk"). */
	struct sg_desc		desc2[65536];
	unsigned int		hold;
	/* Server side: the listener and the last connect request. */
	struct con		lcon;
	struct conn_req		req;
	size_t			req_len;
	/* The version the connect requests ask for. */
	unsigned int		version;
	/* 2.1: the path's limits, and where its data and regions are. */
	unsigned int		max_io21, max_hdr21, max_inline21, max_rdbuf21;
	char			*dbuf;
	struct ibv_mr		*dmr;
	struct ibv_mw		*mw[2];
	/* 2.1: the response slots are not posted again once used. */
	int			no_repost;
	/* 2.1: ask for tagged message ids. */
	int			tags;
	/* A 2.1 server: send_wait() keeps the requests it takes. */
	int			keep_recvs;
} P;

#define SEND_OFF	(64 << 10)

/*
 * 2.1 (see "protocol 2.1" below): the responses of an IO connection land
 * in slots of RSP_SLOT bytes from RSP_OFF, one a receive; each request
 * goes out of a send slot of REQ_SLOT bytes of the send area; the data
 * (inline WRITEs', and the regions the server reads and writes) lives in
 * P.dbuf, DATA21_SIZE bytes.
 */
#define RSP_OFF		(32 << 10)
#define RSP_SLOT	64
#define REQ_SLOT	1024
#define REQ_SLOTS	SEND_DEPTH
#define DATA21_SIZE	(256 << 10)

static_assert(RSP_OFF + RECV_DEPTH * RSP_SLOT <= SEND_OFF, "response slots");
static_assert(SEND_OFF + REQ_SLOTS * REQ_SLOT <= BUF_SIZE, "send slots");

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "rtrs-peer: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void die(const char *what)
{
	say("%s: %s", what, strerror(errno));
	exit(2);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct con *con_of(struct rdma_cm_id *id)
{
	return id->context;
}

/* Disconnect @c and free its QP, CQ and CM id; @c->id must be set. */
static void con_destroy(struct con *c)
{
	rdma_disconnect(c->id);
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	rdma_destroy_id(c->id);
}

/* Take one CM event within @ms and note what it says about its id. */
static int next_event(int ms, struct rdma_cm_id **idp,
		      enum rdma_cm_event_type *type)
{
	struct pollfd pfd = { .fd = P.ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;
	struct con *c;

	if (poll(&pfd, 1, ms) <= 0)
		return -1;
	if (rdma_get_cm_event(P.ch, &ev))
		die("rdma_get_cm_event");
	*idp = ev->id;
	*type = ev->event;
	c = con_of(ev->id);
	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		memset(&P.req, 0, sizeof(P.req));
		P.req_len = ev->param.conn.private_data_len;
		memcpy(&P.req, ev->param.conn.private_data,
		       P.req_len < sizeof(P.req) ? P.req_len : sizeof(P.req));
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		c->established = 1;
		if (ev->param.conn.private_data_len >= sizeof(c->rsp))
			memcpy(&c->rsp, ev->param.conn.private_data,
			       sizeof(c->rsp));
		break;
	case RDMA_CM_EVENT_REJECTED:
		c->rejected = 1;
		c->rej_status = ev->status;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		c->disconnected = 1;
		break;
	default:
		break;
	}
	rdma_ack_cm_event(ev);
	return 0;
}

/* Wait for @want on @c's id; other ids' events are recorded on the way. */
static int wait_event(struct con *c, enum rdma_cm_event_type want, int ms)
{
	long end = now_ms() + ms;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	while (now_ms() < end) {
		if (next_event(end - now_ms(), &id, &type))
			break;
		if (id != c->id)
			continue;
		if (type == want)
			return 0;
		say("cid %ld: %s while waiting for %s (status %d)",
		    (long)(c - P.con), rdma_event_str(type),
		    rdma_event_str(want), c->rej_status);
		return -1;
	}
	return -1;
}

/*
 * Every receive has room: the INFO_RSP, and with always-invalidate the
 * RKEY_RSP SENDs, land in the start of the buffer.
 */
static void post_recv(struct con *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)P.buf,
		.length = SEND_OFF,
		.lkey = P.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

static char *rsp_slot(unsigned int slot)
{
	return P.buf + RSP_OFF + slot * RSP_SLOT;
}

/* Post response slot @slot as a receive of @c, a 2.1 IO connection. */
static void post_rsp_recv(struct con *c, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)rsp_slot(slot),
		.length = RSP_SLOT,
		.lkey = P.mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
	}, *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		die("ibv_post_recv");
}

/*
 * The queue pair of @c, and its receives.  Two pieces a send at most: a
 * 2.1 inline WRITE sends its header area and its data.
 */
static void setup_qp(struct con *c)
{
	struct ibv_qp_init_attr attr = {
		.cap = {
			.max_send_wr = SEND_DEPTH,
			.max_recv_wr = RECV_DEPTH,
			.max_send_sge = 2,
			.max_recv_sge = 1,
		},
		.qp_type = IBV_QPT_RC,
	};
	unsigned int i, nr = c->nr_recv ? c->nr_recv : RECV_DEPTH;

	if (!P.pd) {
		P.pd = ibv_alloc_pd(c->id->verbs);
		if (!P.pd)
			die("ibv_alloc_pd");
		P.buf = aligned_alloc(4096, BUF_SIZE);
		if (!P.buf)
			die("aligned_alloc");
		memset(P.buf, 0, BUF_SIZE);
		P.mr = ibv_reg_mr(P.pd, P.buf, BUF_SIZE,
				  IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ);
		if (!P.mr)
			die("ibv_reg_mr");
	}
	c->cq = ibv_create_cq(c->id->verbs, SEND_DEPTH + RECV_DEPTH, NULL,
			      NULL, 0);
	if (!c->cq)
		die("ibv_create_cq");
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	if (rdma_create_qp(c->id, P.pd, &attr))
		die("rdma_create_qp");
	for (i = 0; i < nr; i++) {
		if (c->io21)
			post_rsp_recv(c, i);
		else
			post_recv(c);
	}
}

static void fill_req(struct conn_req *req, unsigned int cid,
		     unsigned int cid_num)
{
	memset(req, 0, sizeof(*req));
	req->magic = htole16(RTRS_MAGIC);
	req->version = htole16(P.version);
	req->cid = htole16(cid);
	req->cid_num = htole16(cid_num);
	memcpy(req->sess_uuid, P.sess_uuid, 16);
	memcpy(req->paths_uuid, P.paths_uuid, 16);
	req->flags = CONN_REQ_FIRST_CONN;
	if (P.tags)
		req->flags |= CONN_REQ_MSG_TAGS;
}

/*
 * Connect slot @slot with private data @req of @len bytes.  Return 0 when
 * established, 1 when rejected, -1 otherwise.
 */
static int connect_at(struct con *c, const void *req, size_t len)
{
	struct rdma_conn_param param = {
		.private_data = req,
		.private_data_len = len,
		.responder_resources = 1,
		.initiator_depth = 1,
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	if (rdma_create_id(P.ch, &c->id, c, RDMA_PS_TCP))
		die("rdma_create_id");
	if (rdma_resolve_addr(c->id, (struct sockaddr *)&P.src,
			      (struct sockaddr *)&P.dst, 5000) ||
	    wait_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, WAIT_MS))
		die("resolving the address");
	if (rdma_resolve_route(c->id, 5000) ||
	    wait_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, WAIT_MS))
		die("resolving the route");
	setup_qp(c);
	if (rdma_connect(c->id, &param))
		die("rdma_connect");
	if (!wait_event(c, RDMA_CM_EVENT_ESTABLISHED, WAIT_MS))
		return 0;
	return c->rejected ? 1 : -1;
}

static int connect_raw(unsigned int slot, const void *req, size_t len)
{
	return connect_at(&P.con[slot], req, len);
}

static int connect_con(unsigned int cid, unsigned int cid_num)
{
	struct conn_req req;

	fill_req(&req, cid, cid_num);
	return connect_raw(cid, &req, sizeof(req));
}

/* Wait for one completion on @c; return its status, or -1 on timeout. */
static int poll_one(struct con *c, struct ibv_wc *wc, int ms)
{
	long end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n)
			return wc->status;
		usleep(1000);
	} while (now_ms() < end);
	return -1;
}

static int post_send(struct con *c, enum ibv_wr_opcode op, __u32 imm,
		     size_t off, size_t len, __u64 raddr, __u32 rkey,
		     int signaled)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)P.buf + SEND_OFF + off,
		.length = len,
		.lkey = P.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.opcode = op,
		.sg_list = len ? &sge : NULL,
		.num_sge = len ? 1 : 0,
		.send_flags = signaled ? IBV_SEND_SIGNALED : 0,
		.imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(c->id->qp, &wr, &bad);
}

static void srv_accept(struct rdma_cm_id *id);

/*
 * Take one CM event within @ms, as next_event() does; as a server, accept
 * a connect request at once (the listener's are ours to answer).
 */
static void take_event(int ms)
{
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	if (!next_event(ms, &id, &type) &&
	    type == RDMA_CM_EVENT_CONNECT_REQUEST)
		srv_accept(id);
}

/*
 * The completion of the signaled send just posted on @c (receives that
 * complete meanwhile are passed by): its status, or -1 when none came
 * within WAIT_MS or @c was disconnected first.  A peer that closed the
 * connection may have destroyed its QP before acknowledging the send,
 * which rxe then retries as long as the retry count lets it, for ever with
 * the 7 of our connect requests: the disconnect tells that no completion
 * is coming.  CM events are taken meanwhile (take_event()).
 */
static int send_wait(struct con *c)
{
	long end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int n;

	while (now_ms() < end) {
		n = ibv_poll_cq(c->cq, 1, &wc);
		if (n < 0)
			die("ibv_poll_cq");
		if (n) {
			if (wc.opcode != IBV_WC_RECV &&
			    wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM)
				return wc.status;
			if (P.keep_recvs && wc.opcode == IBV_WC_RECV &&
			    wc.status == IBV_WC_SUCCESS)
				c->stashed++;
			continue;
		}
		/* The CQ has been polled since the disconnect was taken. */
		if (c->disconnected)
			break;
		take_event(1);
	}
	return -1;
}

/* Post a signaled send and wait for its completion (see send_wait()). */
static int send_sync(struct con *c, enum ibv_wr_opcode op, __u32 imm,
		     size_t off, size_t len, __u64 raddr, __u32 rkey)
{
	if (post_send(c, op, imm, off, len, raddr, rkey, 1))
		return -1;
	return send_wait(c);
}

static void send_info_req(struct con *c, const void *msg, size_t len)
{
	memcpy(P.buf + SEND_OFF, msg, len);
	if (send_sync(c, IBV_WR_SEND, 0, 0, len, 0, 0))
		say("INFO_REQ send did not complete");
}

static void name_req(struct info_req *req, const char *name)
{
	memset(req, 0, sizeof(*req));
	req->type = htole16(MSG_INFO_REQ);
	snprintf((char *)req->pathname, sizeof(req->pathname), "%s", name);
}

/* Receive the INFO_RSP on @c, a connection 0, into @desc. */
static int recv_info_rsp_on(struct con *c, struct sg_desc *desc)
{
	const struct info_rsp *rsp = (const void *)P.buf;
	struct ibv_wc wc;
	unsigned int i;

	while (poll_one(c, &wc, WAIT_MS) == IBV_WC_SUCCESS) {
		if (wc.opcode != IBV_WC_RECV)
			continue;
		if (le16toh(rsp->type) != MSG_INFO_RSP ||
		    wc.byte_len < sizeof(*rsp)) {
			say("not an INFO_RSP: %u bytes", wc.byte_len);
			return -1;
		}
		P.chunks = le16toh(rsp->sg_cnt);
		for (i = 0; i < P.chunks; i++) {
			desc[i].addr = le64toh(rsp->desc[i].addr);
			desc[i].key = le32toh(rsp->desc[i].key);
			desc[i].len = le32toh(rsp->desc[i].len);
		}
		P.chunk_size = P.chunks ? desc[0].len : 0;
		P.queue_depth = le16toh(c->rsp.queue_depth);
		say("session up: %u chunks of %u bytes, queue depth %u",
		    P.chunks, P.chunk_size, P.queue_depth);
		return 0;
	}
	say("no INFO_RSP");
	return -1;
}

/* Receive the INFO_RSP on connection 0 and keep its descriptors. */
static int recv_info_rsp(void)
{
	return recv_info_rsp_on(&P.con[0], P.desc);
}

/* A whole session: all connections, INFO_REQ, INFO_RSP. */
static int session_up(unsigned int cid_num)
{
	struct info_req req;
	unsigned int cid;

	P.cid_num = cid_num;
	for (cid = 0; cid < cid_num; cid++)
		if (connect_con(cid, cid_num))
			return -1;
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	return recv_info_rsp();
}

static int any_disconnected(void)
{
	unsigned int i;

	for (i = 0; i < MAX_CONS; i++)
		if (P.con[i].disconnected)
			return 1;
	return 0;
}

/* Take CM events for up to @ms; stop early when a connection closes. */
static int closed_within(int ms)
{
	long end = now_ms() + ms;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	while (!any_disconnected() && now_ms() < end)
		next_event(end - now_ms(), &id, &type);
	if (any_disconnected()) {
		say("the server closed the connection");
		return 1;
	}
	return 0;
}

/* Exit 0 when the server closes one of our connections within @ms. */
static int expect_closed(int ms)
{
	if (closed_within(ms))
		return 0;
	say("the server kept the connection");
	return 1;
}

/* Exit 0 when all our connections stay open for @ms. */
static int expect_open(int ms)
{
	if (closed_within(ms))
		return 1;
	say("the connection stays");
	return 0;
}

/*
 * SIGUSR1: the scenario is done with what needed a hold.  A lock-free
 * atomic, as a signal handler may set.
 */
static atomic_int released;

static void on_release(int sig)
{
	(void)sig;
	released = 1;
}

/*
 * Hold for up to @ms, taking CM events, until SIGUSR1 comes or, with
 * @until_closed, a connection closes.  No wait is longer than
 * HOLD_STEP_MS, so that a signal which comes between the test of the flag
 * and poll() is seen at the next step.
 */
static void hold(long ms, int until_closed)
{
	long start = now_ms(), left;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id;

	while (!released && !(until_closed && any_disconnected()) &&
	       (left = start + ms - now_ms()) > 0)
		next_event(left < HOLD_STEP_MS ? left : HOLD_STEP_MS, &id,
			   &type);
	if (released)
		say("released after %ld ms", now_ms() - start);
}

static __u32 imm(__u32 type, __u32 payload)
{
	return type << IMM_PAYLOAD_BITS | (payload & ((1u << 28) - 1));
}

static unsigned int off_bits(void)
{
	unsigned int order = 0;

	while ((1u << order) < P.queue_depth)
		order++;
	return IMM_PAYLOAD_BITS - order;
}

static __u32 io_imm(__u32 id, __u32 off)
{
	return imm(IMM_IO_REQ, id << off_bits() | off);
}

/*
 * Write @len bytes of the send area to chunk @id from its start, with
 * the IO request immediate for a header at @off.
 */
static int write_chunk(struct con *c, __u32 id, size_t len, __u32 off)
{
	return send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM, io_imm(id, off), 0, len,
			 P.desc[id].addr, P.desc[id].key);
}

/* Lay a WRITE header with @usr_len at @off of the send area. */
static void write_hdr(__u32 off, __u16 usr_len)
{
	__u16 hdr[2] = { htole16(MSG_WRITE), htole16(usr_len) };

	memcpy(P.buf + SEND_OFF + off, hdr, sizeof(hdr));
}

static void read_hdr(__u32 off, __u16 sg_cnt, __u32 len)
{
	struct rdma_read_hdr h = {
		.type = htole16(MSG_READ),
		.sg_cnt = htole16(sg_cnt),
	};

	h.desc[0].addr = htole64((uintptr_t)P.buf);
	h.desc[0].key = htole32(P.mr->rkey);
	h.desc[0].len = htole32(len);
	h.desc[1] = h.desc[0];
	memcpy(P.buf + SEND_OFF + off, &h, sizeof(h));
}

/* ---- the cases ------------------------------------------------------ */

static int rejected(int r)
{
	if (r == 1) {
		say("rejected");
		return 0;
	}
	say(r ? "no response" : "accepted");
	return 1;
}

static void random_uuid(__u8 *u);

static int case_req_field(const char *name)
{
	struct conn_req req;
	size_t len = sizeof(req);

	fill_req(&req, 0, 2);
	if (!strcmp(name, "bad-magic"))
		req.magic = htole16(0x1BBE);
	else if (!strcmp(name, "bad-version"))
		req.version = htole16(0x0300);
	else if (!strcmp(name, "cid-ge-num"))
		req.cid = htole16(2);
	else if (!strcmp(name, "cid-num-0"))
		req.cid_num = 0;
	else if (!strcmp(name, "cid-num-huge"))
		req.cid_num = htole16(0xffff), req.cid = htole16(0xfffe);
	else if (!strcmp(name, "short-req"))
		len = 12;
	else if (!strcmp(name, "no-req"))
		len = 0;
	else
		return -1;
	return rejected(connect_raw(0, &req, len));
}

/*
 * "half-N": connection 1 of 2 of N sessions, each new, held open for
 * P.hold seconds, or until SIGUSR1.  The server may refuse some (its
 * budget of connections of paths being set up); those it takes must stay
 * open meanwhile.  Says how many it took, and "holding" with the pid to
 * signal once all were tried.
 */
static int case_half(unsigned int n)
{
	struct con *cs = calloc(n, sizeof(*cs));
	unsigned int i, taken = 0, refused = 0, closed = 0;
	struct conn_req req;
	int r;

	if (!cs)
		die("calloc");
	for (i = 0; i < n; i++) {
		random_uuid(P.sess_uuid);
		random_uuid(P.paths_uuid);
		fill_req(&req, 1, 2);
		r = connect_at(&cs[i], &req, sizeof(req));
		taken += r == 0;
		refused += r == 1;
	}
	say("half sessions: %u taken, %u refused, %u failed; holding %u s, pid %d",
	    taken, refused, n - taken - refused, P.hold, (int)getpid());
	hold(P.hold * 1000L, 0);
	for (i = 0; i < n; i++) {
		closed += cs[i].established && cs[i].disconnected;
		if (cs[i].id)
			con_destroy(&cs[i]);
	}
	free(cs);
	say("%u of the half sessions closed while held", closed);
	return taken + refused == n && !closed ? 0 : 1;
}

/*
 * Connection 1 of 2 only, held open for P.hold seconds or until SIGUSR1,
 * then dropped.
 */
static int case_partial(void)
{
	if (connect_con(1, 2))
		return 1;
	say("holding connection 1 of 2 for %u s, pid %d", P.hold,
	    (int)getpid());
	hold(P.hold * 1000L, 1);
	if (expect_open(0))
		return 1;
	rdma_disconnect(P.con[1].id);
	return 0;
}

/*
 * A path the client never completes: connection 1 of 2 only ("stalled"),
 * or both and no INFO_REQ ("no-info").  The server must close it within
 * P.hold seconds (its connect_timeout_sec set below that).
 */
static int case_stalled(int all_cons)
{
	if (connect_con(1, 2) || (all_cons && connect_con(0, 2)))
		return 1;
	say("waiting up to %u s for the server to give up", P.hold);
	return expect_closed(P.hold * 1000);
}

/* Connections in reverse order still make a session. */
static int case_ooo(void)
{
	struct info_req req;

	P.cid_num = 2;
	if (connect_con(1, 2) || connect_con(0, 2))
		return 1;
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	return recv_info_rsp() ? 1 : 0;
}

static int case_dup_cid(void)
{
	struct conn_req req;

	if (connect_con(0, 2))
		return 1;
	/* Slot 1 carries a second connection 0. */
	fill_req(&req, 0, 2);
	return rejected(connect_raw(1, &req, sizeof(req)));
}

static int case_info_early(void)
{
	struct info_req req;

	if (connect_con(0, 2))
		return 1;
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	return expect_closed(WAIT_MS);
}

/* All connections up, then a bad INFO_REQ as named. */
static int case_info(const char *name)
{
	struct info_req req;
	size_t len = sizeof(req);

	if (connect_con(0, 2) || connect_con(1, 2))
		return 2;
	name_req(&req, "peer");
	if (!strcmp(name, "info-noterm"))
		memset(req.pathname, 'a', sizeof(req.pathname));
	else if (!strcmp(name, "info-short"))
		len = 10;
	else if (!strcmp(name, "info-slash"))
		name_req(&req, "../x");
	else if (!strcmp(name, "info-type"))
		req.type = htole16(MSG_INFO_RSP);
	else
		return -1;
	send_info_req(&P.con[0], &req, len);
	return expect_closed(WAIT_MS);
}

/* An IO request on a path that has not had its INFO_REQ. */
static int case_io_early(void)
{
	if (connect_con(0, 2) || connect_con(1, 2))
		return 2;
	if (send_sync(&P.con[1], IBV_WR_RDMA_WRITE_WITH_IMM,
		      imm(IMM_IO_REQ, 0), 0, 0, 0, 0))
		say("immediate not acknowledged");
	return expect_closed(WAIT_MS);
}

static int case_info_twice(void)
{
	struct info_req req;

	if (session_up(2))
		return 2;
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	return expect_closed(WAIT_MS);
}

/* Wait for the IO response to chunk @id on @c. */
static int io_responded(struct con *c, __u32 id)
{
	struct ibv_wc wc;
	__u32 v;

	while (poll_one(c, &wc, WAIT_MS) == IBV_WC_SUCCESS) {
		if (!(wc.opcode & IBV_WC_RECV) ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM))
			continue;
		v = be32toh(wc.imm_data);
		if (v >> IMM_PAYLOAD_BITS != IMM_IO_RSP &&
		    v >> IMM_PAYLOAD_BITS != IMM_IO_RSP_W_INV)
			continue;
		if ((v & ((1u << 19) - 1)) == id) {
			say("response for chunk %u, errno %u", id,
			    (v >> 19) & 511);
			return 0;
		}
	}
	say("no response for chunk %u", id);
	return 1;
}

/* A well-formed WRITE must get its response: proves our encoding. */
static int case_good_io(void)
{
	__u32 off = 512;

	if (session_up(2))
		return 2;
	memset(P.buf + SEND_OFF, 0x5a, off);
	write_hdr(off, 0);
	if (write_chunk(&P.con[1], 3, off + 4, off))
		return 2;
	return io_responded(&P.con[1], 3) || expect_open(1000);
}

static int case_io(const char *name)
{
	struct con *c = &P.con[1];
	__u32 off = 512, v = 0;
	size_t len = off + 4;

	if (session_up(2))
		return 2;
	if (!strcmp(name, "imm-type")) {
		v = imm(IMM_NO_TYPE, 0);
	} else if (!strcmp(name, "imm-rsp")) {
		v = imm(IMM_IO_RSP, 0);
	} else if (!strcmp(name, "chunk-id")) {
		if (P.queue_depth == 1u << (IMM_PAYLOAD_BITS - off_bits())) {
			say("queue depth %u is a power of two: no id past it",
			    P.queue_depth);
			return 2;
		}
		v = io_imm(P.queue_depth, 0);
	} else if (!strcmp(name, "chunk-off")) {
		v = io_imm(0, P.chunk_size);
	} else if (!strcmp(name, "usr-len")) {
		write_hdr(off, off + 1);
		return write_chunk(c, 0, len, off) ? 2 : expect_closed(WAIT_MS);
	} else if (!strcmp(name, "hdr-at-end")) {
		off = P.chunk_size - 1;
		write_hdr(0, 0);
		return send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM, io_imm(0, off),
				 0, 1, P.desc[0].addr + off, P.desc[0].key) ?
			2 : expect_closed(WAIT_MS);
	} else if (!strcmp(name, "hdr-type")) {
		write_hdr(off, 0);
		P.buf[SEND_OFF + off] = 7;
		return write_chunk(c, 0, len, off) ? 2 : expect_closed(WAIT_MS);
	} else if (!strcmp(name, "read-sg-cnt")) {
		read_hdr(off, 2, 4096);
		return write_chunk(c, 0, off + sizeof(struct rdma_read_hdr),
				   off) ? 2 : expect_closed(WAIT_MS);
	} else if (!strcmp(name, "read-len")) {
		read_hdr(off, 1, P.chunk_size + 1);
		return write_chunk(c, 0, off + sizeof(struct rdma_read_hdr),
				   off) ? 2 : expect_closed(WAIT_MS);
	} else {
		return -1;
	}
	if (send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM, v, 0, 0, 0, 0))
		say("immediate not acknowledged");
	return expect_closed(WAIT_MS);
}

/* ---- two paths, one chunk ------------------------------------------- */

/*
 * The test server's user message (tests/user/rtrs-test.h): 32 bytes,
 * little-endian, no pattern after it, so its checksum is that of nothing.
 */
#define TEST_MAGIC		0x52545354
#define TEST_OP_STORE		1
#define TEST_OP_FETCH		2
#define TEST_OP_HOLD		4
#define TEST_OP_LATE		5
#define TEST_CSUM_NONE		0x12345678

struct test_msg {
	__u32	magic;
	__u32	op;
	__u64	off;
	__u32	len;
	__u32	err;
	__u32	usr_len;
	__u32	usr_csum;
};

#define SC_CHUNK	5		/* the chunk both paths ask for */
#define SC_LEN		4096		/* data of each IO */
#define SC_X		(1024 << 10)	/* store offset both paths write */
#define SC_READ_TO	(768 << 10)	/* where READ data lands in P.buf */

static unsigned char pattern(unsigned char seed, size_t i)
{
	return seed + i * 13;
}

static int pattern_ok(const void *p, unsigned char seed, size_t len)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != pattern(seed, i))
			return 0;
	return 1;
}

static int holds_pattern(const unsigned char *p, unsigned char seed)
{
	return pattern_ok(p, seed, SC_LEN);
}

/*
 * Post an IO of the test server on @c into chunk @id of @desc: built at
 * @at in the send area as the chunk will hold it (data, user message,
 * header), it goes out whole for a WRITE of @seed's pattern; for a READ
 * only from the user message on, the data area being the server's to
 * fill, with P.buf + SC_READ_TO as the READ's destination.
 */
static int post_test_io(struct con *c, const struct sg_desc *desc, __u32 id,
			__u32 op, __u64 off, size_t at, unsigned char seed)
{
	char *img = P.buf + SEND_OFF + at;
	struct test_msg msg = {
		.magic = htole32(TEST_MAGIC),
		.op = htole32(op),
		.off = htole64(off),
		.len = htole32(SC_LEN),
		.usr_len = htole32(sizeof(msg)),
		.usr_csum = htole32(TEST_CSUM_NONE),
	};
	__u32 hdr_off = SC_LEN + sizeof(msg);
	size_t i, start = 0, end;

	memcpy(img + SC_LEN, &msg, sizeof(msg));
	if (op == TEST_OP_FETCH) {
		struct rdma_read_hdr h = {
			.type = htole16(MSG_READ),
			.usr_len = htole16(sizeof(msg)),
			.sg_cnt = htole16(1),
		};

		h.desc[0].addr = htole64((uintptr_t)P.buf + SC_READ_TO);
		h.desc[0].key = htole32(P.mr->rkey);
		h.desc[0].len = htole32(SC_LEN);
		memcpy(img + hdr_off, &h, sizeof(h));
		memset(P.buf + SC_READ_TO, 0, SC_LEN);
		start = SC_LEN;
		end = hdr_off + offsetof(struct rdma_read_hdr, desc[1]);
	} else {
		for (i = 0; i < SC_LEN; i++)
			img[i] = pattern(seed, i);
		write_hdr(at + hdr_off, sizeof(msg));
		end = hdr_off + 4;
	}
	return post_send(c, IBV_WR_RDMA_WRITE_WITH_IMM, io_imm(id, hdr_off),
			 at + start, end - start, desc[id].addr + start,
			 desc[id].key, 1);
}

/*
 * Take the completions of @c: 1 once the response for chunk @id came (with
 * errno 0 in @err), 0 while not, -1 on a failed completion.
 */
static int test_io_responded(struct con *c, __u32 id, unsigned int *err)
{
	struct ibv_wc wc;
	__u32 v;

	while (ibv_poll_cq(c->cq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS) {
			say("completion failed: %s",
			    ibv_wc_status_str(wc.status));
			return -1;
		}
		if (!(wc.opcode & IBV_WC_RECV) ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM))
			continue;
		v = be32toh(wc.imm_data);
		if ((v >> IMM_PAYLOAD_BITS == IMM_IO_RSP ||
		     v >> IMM_PAYLOAD_BITS == IMM_IO_RSP_W_INV) &&
		    (v & ((1u << 19) - 1)) == id) {
			*err = (v >> 19) & 511;
			return 1;
		}
	}
	return 0;
}

/* One IO of the test server, with a response of errno 0 within WAIT_MS. */
static int test_io(struct con *c, const struct sg_desc *desc, __u32 id,
		   __u32 op, __u64 off, unsigned char seed)
{
	long end = now_ms() + WAIT_MS;
	unsigned int err;
	int r;

	if (post_test_io(c, desc, id, op, off, 0, seed))
		return -1;
	while ((r = test_io_responded(c, id, &err)) == 0 && now_ms() < end)
		usleep(1000);
	if (r == 1 && !err)
		return 0;
	say(r == 1 ? "response for chunk %u, errno %u" :
	    "no response for chunk %u", id, err);
	return -1;
}

/*
 * A second path of the session, in slots 2 and 3: a sess_uuid of its own,
 * the same session name.
 */
static int second_path_up(void)
{
	struct info_req req;
	struct conn_req cr;
	unsigned int cid;

	random_uuid(P.sess_uuid);
	for (cid = 0; cid < 2; cid++) {
		fill_req(&cr, cid, 2);
		if (connect_raw(2 + cid, &cr, sizeof(cr)))
			return -1;
	}
	name_req(&req, "peer");
	send_info_req(&P.con[2], &req, sizeof(req));
	return recv_info_rsp_on(&P.con[2], P.desc2);
}

/*
 * Wait for the responses of the held write (path 1, connection 1) and of
 * its copy (path 2, connection 1, slot 3), noting when each came.
 */
static int shared_responses(long *t1, long *t2)
{
	long end = now_ms() + WAIT_MS;
	unsigned int e1 = 0, e2 = 0;
	int r;

	*t1 = *t2 = 0;
	while ((!*t1 || !*t2) && now_ms() < end) {
		r = *t1 ? 0 : test_io_responded(&P.con[1], SC_CHUNK, &e1);
		if (r < 0)
			return -1;
		if (r)
			*t1 = now_ms();
		r = *t2 ? 0 : test_io_responded(&P.con[3], SC_CHUNK, &e2);
		if (r < 0)
			return -1;
		if (r)
			*t2 = now_ms();
		usleep(1000);
	}
	if (!*t1 || !*t2 || e1 || e2) {
		say("responses: path 1 %s (errno %u), path 2 %s (errno %u)",
		    *t1 ? "came" : "missing", e1, *t2 ? "came" : "missing", e2);
		return -1;
	}
	return 0;
}

/*
 * "shared-chunk": one session, two paths.  Path 1 writes pattern A for
 * store offset X into chunk N as a LATE write, which the test server holds
 * late_ms (P.hold seconds) and stores from the chunk only when it responds
 * to it; at once path 2 sends the same write again through the same chunk
 * N, as a client does that failed a request over (both copies put the same
 * bytes in the chunk, so which lands first does not matter).  The server
 * must run path 2's copy only once path 1's has ended: its response comes
 * with or after path 1's, most of late_ms after both were sent.  A server
 * that runs both at once
 * hands the second copy to the test server while the first is held, and the
 * test server serves a LATE write it holds already at once: path 2's
 * response then comes first, most of late_ms before path 1's.  A server
 * that runs the copy right after path 1's response has left also gets it
 * served at once, and the two responses, on two queue pairs, may then be
 * seen here in either order, a few milliseconds apart (12 ms seen in a
 * make check run): only a lead of SC_SKEW_MS or more counts.  X reads
 * back A.
 */
#define SC_SKEW_MS	250

static int case_shared_chunk(void)
{
	long t0, t1, t2, late_ms = P.hold * 1000L;
	int bad = 0;

	if (session_up(2) || second_path_up())
		return 2;
	say("two paths up");

	t0 = now_ms();
	if (post_test_io(&P.con[1], P.desc, SC_CHUNK, TEST_OP_LATE, SC_X, 0,
			 0xa0) ||
	    post_test_io(&P.con[3], P.desc2, SC_CHUNK, TEST_OP_LATE, SC_X,
			 64 << 10, 0xa0))
		return 2;
	if (shared_responses(&t1, &t2))
		return 1;
	say("chunk %u: path 1's response after %ld ms, path 2's after %ld ms",
	    SC_CHUNK, t1 - t0, t2 - t0);
	if (t2 + SC_SKEW_MS < t1 || t2 - t0 < late_ms * 3 / 4) {
		say("path 2's copy ran while path 1's held the chunk");
		bad = 1;
	}

	if (test_io(&P.con[1], P.desc, SC_CHUNK + 2, TEST_OP_FETCH, SC_X, 0))
		return 2;
	if (!holds_pattern((unsigned char *)P.buf + SC_READ_TO, 0xa0)) {
		say("X does not hold what was written there");
		bad = 1;
	}
	if (!bad)
		say("X holds A");
	return bad;
}

/* A heartbeat on a connection other than 0 is legal and acknowledged. */
static int case_hb_con(void)
{
	if (session_up(2))
		return 2;
	if (send_sync(&P.con[1], IBV_WR_RDMA_WRITE_WITH_IMM,
		      imm(IMM_HB_MSG, 0), 0, 0, 0, 0))
		return 1;
	return expect_open(2000);
}

/*
 * 10000 immediates of an unknown type, as fast as the queue takes them,
 * until the server drops the connection: what is still out then never
 * completes (see send_sync()).
 */
static int case_flood(void)
{
	struct con *c = &P.con[1];
	long end = now_ms() + WAIT_MS;
	unsigned int sent = 0, out = 0;
	struct ibv_wc wc[16];
	int n, i;

	if (session_up(2))
		return 2;
	while (sent < 10000 && now_ms() < end) {
		if (out < SEND_DEPTH / 2 &&
		    !post_send(c, IBV_WR_RDMA_WRITE_WITH_IMM, imm(6, sent),
			       0, 0, 0, 0, 1)) {
			sent++;
			out++;
			continue;
		}
		n = ibv_poll_cq(c->cq, 16, wc);
		for (i = 0; i < n; i++) {
			/* The opcode of a failed completion means nothing. */
			if (wc[i].status != IBV_WC_SUCCESS)
				goto done;
			if (!(wc[i].opcode & IBV_WC_RECV))
				out--;
		}
		if (n)
			continue;
		if (c->disconnected)
			break;
		take_event(0);
		usleep(100);
	}
done:
	say("%u immediates posted", sent);
	return expect_closed(WAIT_MS);
}

/* ---- protocol 2.1 ---------------------------------------------------- */

/*
 * A path of protocol 2.1 (Documentation/rtrs.rst, "2.1 on the wire"): the
 * peer asks for 2.1 in its connect requests, checks the 2.1 connection
 * responses and an INFO_RSP of no descriptor, and sends each request as a
 * SEND on connection 1, out of a send slot of its own, with the test
 * server's user message right after the header.  The responses land in
 * response slots, which go back to the receive queue unless P.no_repost.
 * A request's region (where the server writes a READ_REQ's data, whence
 * it reads a WRITE_REQ's) is a type 2 memory window over P.dbuf, bound on
 * connection 1, so that the server's SEND WITH INVALIDATE can invalidate
 * it: rxe refuses to invalidate a memory region of ibv_reg_mr(), which
 * would fail the server's response.
 *
 * The violations, each on a session of its own, on connection 1 unless
 * said; the server must close the path:
 *  v21-type		a SEND of a type no protocol has (9)
 *  v21-usr-len		a user message that ends past max_hdr_size
 *  v21-msg-id		a message id of the queue depth
 *  v21-tag-unasked	a tagged message id (slot 0, tag 1) on a session
 *			that did not ask for tags
 *  v21-tag-slot	a tagged message id whose slot is the queue depth,
 *			on a session that asked for tags
 *  v21-dup-id		a message id in flight already: the first request
 *			is one the test server holds a second (OP_HOLD)
 *  v21-len		a READ_REQ of max_io_size + 1 bytes
 *  v21-inline-short	an inline WRITE whose SEND ends before its data
 *  v21-inline-long	one whose SEND goes on past its data
 *  v21-inline-big	one of 8 KiB, a SEND longer than the server's
 *			receive buffer (max_hdr_size and a page)
 *  v21-zero-key	a WRITE_REQ of no data that names a key
 *  v21-con0		a request on connection 0, after the INFO exchange
 *  v21-imm		2.0's IO request, an RDMA WRITE with immediate
 *  v21-imm-con0	the same on connection 0, which has receives of
 *			its own (a 2.1 session has no chunk to take it)
 *  v21-bad-rkey	a WRITE_REQ whose key no region has: the server's
 *			RDMA READ of the data fails
 *  v21-rdbuf-len	a READ_BUF of one byte more than max_read_buf
 *  v21-rdbuf-zero	a READ_BUF of no data, naming no region
 *  v21-dereg		a READ_REQ whose region goes before the server's
 *			RDMA WRITE of the data (case_v21_dereg())
 *  v21-norepost	a connection that posts its receives no more, with
 *			responses waiting on it (case_v21_norepost())
 */
#define MSG_NONE		10		/* a type of no protocol */
/* Store offset of the IO: past hostile.sh's good client (store_kb). */
#define V21_OFF			(1536 << 10)
#define V21_SRC			(64 << 10)	/* in P.dbuf: WRITE_REQ data */
#define V21_DST			(128 << 10)	/* READ_REQ data */
#define V21_DEREG		(192 << 10)	/* v21-dereg's region */
#define V21_RDBUF		(200 << 10)	/* v21-good's READ_BUF data */
#define V21_NOREPOST		2		/* v21-norepost's receives */

static_assert(V21_DEREG + 4096 <= V21_RDBUF, "2.1 data");
static_assert(V21_RDBUF + 4096 <= DATA21_SIZE, "2.1 data");

/* A response, as it came. */
struct rsp21 {
	unsigned int	type;
	int		err;
	__u32		msg_id;
	__u32		len;
	int		inv;
	__u32		inv_rkey;
};

static char *req_slot(unsigned int slot)
{
	return P.buf + SEND_OFF + (slot % REQ_SLOTS) * REQ_SLOT;
}

static void fill_pattern(char *p, unsigned char seed, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

/* Check the 2.1 connection response of @c, and take the path's limits. */
static int check_rsp_2_1(struct con *c)
{
	struct conn_rsp_2_1 r;
	unsigned int qd, io, hdr, inl, rdb, tags;

	memcpy(&r, &c->rsp, sizeof(r));
	tags = !!(le32toh(r.flags) & CONN_RSP_MSG_TAGS);
	qd = le16toh(r.queue_depth);
	io = le32toh(r.max_io_size);
	hdr = le32toh(r.max_hdr_size);
	inl = le32toh(r.max_inline_size);
	rdb = le32toh(r.max_read_buf);
	say("connection %ld: version %#x, errno %u, queue depth %u",
	    (long)(c - P.con), le16toh(r.version), le16toh(r.errno_), qd);
	say("max_io_size %u, max_hdr_size %u, max_inline_size %u, max_read_buf %u, tags %u",
	    io, hdr, inl, rdb, tags);
	if (tags != !!P.tags) {
		say(P.tags ? "no tags where the peer asked for them" :
			     "tags the peer did not ask for");
		return -1;
	}
	if (le16toh(r.magic) != RTRS_MAGIC ||
	    le16toh(r.version) != RTRS_VERSION_2_1 || r.errno_ || !qd) {
		say("not the connection response of a 2.1 path");
		return -1;
	}
	/* The header area must hold our requests, and fit a send slot. */
	if (io < (1 << 20) || inl < 4096 || inl > DATA21_SIZE ||
	    hdr < sizeof(struct io_req) + sizeof(struct test_msg) ||
	    hdr > REQ_SLOT) {
		say("limits beyond the protocol's or the peer's");
		return -1;
	}
	if (P.max_hdr21 && (qd != P.queue_depth || io != P.max_io21 ||
			    hdr != P.max_hdr21 || inl != P.max_inline21 ||
			    rdb != P.max_rdbuf21)) {
		say("limits that differ from connection 0's");
		return -1;
	}
	P.queue_depth = qd;
	P.max_io21 = io;
	P.max_hdr21 = hdr;
	P.max_inline21 = inl;
	P.max_rdbuf21 = rdb;
	return 0;
}

/*
 * A 2.1 session of one path: connection 0, connection 1 with @nr_recv
 * response slots (0: RECV_DEPTH), the INFO exchange; then P.dbuf, which
 * only the windows over it open to the server.
 */
static int session_up_2_1(unsigned int nr_recv)
{
	struct info_req req;
	unsigned int cid;

	P.version = RTRS_VERSION_2_1;
	P.cid_num = 2;
	P.con[1].io21 = 1;
	P.con[1].nr_recv = nr_recv;
	for (cid = 0; cid < 2; cid++)
		if (connect_con(cid, 2) || check_rsp_2_1(&P.con[cid]))
			return -1;
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	if (recv_info_rsp())
		return -1;
	if (P.chunks) {
		say("an INFO_RSP of %u descriptors on a 2.1 path", P.chunks);
		return -1;
	}
	P.dbuf = aligned_alloc(4096, DATA21_SIZE);
	if (!P.dbuf)
		die("aligned_alloc");
	memset(P.dbuf, 0, DATA21_SIZE);
	P.dmr = ibv_reg_mr(P.pd, P.dbuf, DATA21_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!P.dmr)
		die("ibv_reg_mr");
	return 0;
}

/*
 * Bind window @i on @c over @len bytes of P.dbuf from @off, open to the
 * server's RDMA of @access, under a new key: its rkey in @rkey.
 */
static int bind_window(struct con *c, unsigned int i, size_t off, size_t len,
		       unsigned int access, __u32 *rkey)
{
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_mw *mw = P.mw[i];

	if (!mw) {
		mw = ibv_alloc_mw(P.pd, IBV_MW_TYPE_2);
		if (!mw)
			die("ibv_alloc_mw");
		P.mw[i] = mw;
	}
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = P.dmr;
	wr.bind_mw.bind_info.addr = (uintptr_t)P.dbuf + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (ibv_post_send(c->id->qp, &wr, &bad) || send_wait(c)) {
		say("binding a memory window failed");
		return -1;
	}
	/* The next bind names the window by the key it has now. */
	mw->rkey = wr.bind_mw.rkey;
	*rkey = mw->rkey;
	return 0;
}

/* The test server's user message of @op, @len bytes at @off, at @p. */
static void test_msg_at(char *p, __u32 op, __u64 off, __u32 len)
{
	struct test_msg msg = {
		.magic = htole32(TEST_MAGIC),
		.op = htole32(op),
		.off = htole64(off),
		.len = htole32(len),
		.usr_len = htole32(sizeof(msg)),
		.usr_csum = htole32(TEST_CSUM_NONE),
	};

	memcpy(p, &msg, sizeof(msg));
}

/*
 * Lay a READ_REQ or WRITE_REQ (@type) of @msg_id in send slot @slot: the
 * test server's @op of @len bytes at store offset @off, the region at
 * @addr with @key.  Return the length of the SEND.
 */
static size_t lay_io_req(unsigned int slot, __u16 type, __u32 msg_id,
			 __u32 op, __u64 off, __u64 addr, __u32 key, __u32 len)
{
	struct io_req h = {
		.type = htole16(type),
		.usr_len = htole16(sizeof(struct test_msg)),
		.msg_id = htole32(msg_id),
		.desc = {
			.addr = htole64(addr),
			.key = htole32(key),
			.len = htole32(len),
		},
	};

	memcpy(req_slot(slot), &h, sizeof(h));
	test_msg_at(req_slot(slot) + sizeof(h), op, off, len);
	return sizeof(h) + sizeof(struct test_msg);
}

/*
 * Lay the header area of a WRITE_INLINE of @len bytes in send slot @slot:
 * the header, the test server's message, zeros up to max_hdr_size.
 * Return its length; the data follows it in the SEND.
 */
static size_t lay_inline(unsigned int slot, __u32 msg_id, __u32 op,
			 __u64 off, __u32 len)
{
	struct write_inline h = {
		.type = htole16(MSG_WRITE_INLINE),
		.usr_len = htole16(sizeof(struct test_msg)),
		.msg_id = htole32(msg_id),
		.data_len = htole32(len),
	};

	memset(req_slot(slot), 0, P.max_hdr21);
	memcpy(req_slot(slot), &h, sizeof(h));
	test_msg_at(req_slot(slot) + sizeof(h), op, off, len);
	return P.max_hdr21;
}

/* Lay a request of a type of no protocol in send slot @slot. */
static size_t lay_no_type(unsigned int slot, __u32 msg_id)
{
	size_t len = lay_io_req(slot, MSG_WRITE_REQ, msg_id, TEST_OP_STORE, 0,
				0, 0, 0);
	__u16 type = htole16(MSG_NONE);

	memcpy(req_slot(slot), &type, sizeof(type));
	return len;
}

/*
 * Post the SEND of send slot @slot, @len bytes, then @data_len bytes of
 * P.dbuf from @data_off: an inline WRITE's data, as a second piece.
 */
static int post_req(struct con *c, unsigned int slot, size_t len,
		    size_t data_off, size_t data_len)
{
	struct ibv_sge sge[2] = {
		{
			.addr = (uintptr_t)req_slot(slot),
			.length = len,
			.lkey = P.mr->lkey,
		}, {
			.addr = (uintptr_t)P.dbuf + data_off,
			.length = data_len,
			.lkey = P.dmr->lkey,
		},
	};
	struct ibv_send_wr wr = {
		.wr_id = slot,
		.sg_list = sge,
		.num_sge = data_len ? 2 : 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (!ibv_post_send(c->id->qp, &wr, &bad))
		return 0;
	say("posting a request of %zu bytes failed", len + data_len);
	return -1;
}

/*
 * Take one completion of @c, a 2.1 IO connection: 1 for a response, in
 * @r (a READ_BUF's, an RDMA WRITE WITH IMMEDIATE, as type MSG_READ_BUF);
 * 2 for a send of ours; 0 for none, or for the receive of another
 * immediate (a heartbeat); -1 for a failed one.
 */
static int take_wc21(struct con *c, struct rsp21 *r)
{
	struct ibv_wc wc;
	struct io_rsp m;
	int n;

	n = ibv_poll_cq(c->cq, 1, &wc);
	if (n < 0)
		die("ibv_poll_cq");
	if (!n)
		return 0;
	if (wc.status != IBV_WC_SUCCESS) {
		say("completion failed: %s", ibv_wc_status_str(wc.status));
		return -1;
	}
	if (!(wc.opcode & IBV_WC_RECV)) {
		c->sent++;
		return 2;
	}
	memcpy(&m, rsp_slot(wc.wr_id), sizeof(m));
	if (!P.no_repost)
		post_rsp_recv(c, wc.wr_id);
	if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	    be32toh(wc.imm_data) >> IMM_PAYLOAD_BITS == IMM_IO_RSP) {
		/* errno magnitude in bits 27..19, message id in 18..0 */
		r->type = MSG_READ_BUF;
		r->err = -(int)((be32toh(wc.imm_data) >> 19) & 0x1ff);
		r->msg_id = be32toh(wc.imm_data) & 0x7ffff;
		r->len = wc.byte_len;
		r->inv = 0;
		r->inv_rkey = 0;
		return 1;
	}
	if (wc.wc_flags & IBV_WC_WITH_IMM)
		return 0;
	r->type = le16toh(m.type);
	r->err = (__s16)le16toh(m.errno_);
	r->msg_id = le32toh(m.msg_id);
	r->len = wc.byte_len;
	/*
	 * rxe (6.1) reports an invalidation to a user QP with the kernel's
	 * flag, bit 2, which is IBV_WC_IP_CSUM_OK here; it sets no checksum
	 * flag on an RC receive, so either bit means invalidated.
	 */
	r->inv = !!(wc.wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK));
	r->inv_rkey = r->inv ? wc.invalidated_rkey : 0;
	return 1;
}

/*
 * Take the completions of @c for up to @ms until one of kind @want of
 * take_wc21() comes (a response is left in @r): 1 when it did, 0 when
 * not, -1 on a failed completion.
 */
static int wait21(struct con *c, int want, struct rsp21 *r, int ms)
{
	long end = now_ms() + ms;
	int k;

	do {
		k = take_wc21(c, r);
		if (k < 0)
			return -1;
		if (k == want)
			return 1;
		if (!k)
			usleep(1000);
	} while (now_ms() < end);
	return 0;
}

/*
 * The next response on @c must be the IO_RSP of @msg_id with errno 0: a
 * SEND WITH INVALIDATE of @rkey when the request named a region (@rkey
 * not 0), else a plain SEND.
 */
static int rsp_ok(struct con *c, __u32 msg_id, __u32 rkey)
{
	struct rsp21 r;

	if (wait21(c, 1, &r, WAIT_MS) != 1) {
		say("no response to request %u", msg_id);
		return -1;
	}
	say("response: type %u, errno %d, id %u, %u bytes, invalidating %#x",
	    r.type, r.err, r.msg_id, r.len, r.inv_rkey);
	if (r.type != MSG_IO_RSP || r.len != sizeof(struct io_rsp) ||
	    r.msg_id != msg_id || r.err) {
		say("not the response to request %u", msg_id);
		return -1;
	}
	if (r.inv != !!rkey || r.inv_rkey != rkey) {
		say("the request named the region %#x", rkey);
		return -1;
	}
	return 0;
}

/*
 * Send the request laid in send slot @slot (@len bytes, then @data_len
 * bytes of P.dbuf from its start), check its response (rsp_ok()) and
 * take its send's completion, so that the next wait for a send of @c
 * (bind_window()) is not answered by this one's: 0, 1 for a wrong or
 * missing response, 2 when the peer could not send.
 */
static int served21(struct con *c, unsigned int slot, size_t len,
		    size_t data_len, __u32 msg_id, __u32 rkey)
{
	unsigned int sent = c->sent + 1;
	struct rsp21 r;

	if (post_req(c, slot, len, 0, data_len))
		return 2;
	if (rsp_ok(c, msg_id, rkey))
		return 1;
	while (c->sent < sent)
		if (wait21(c, 2, &r, WAIT_MS) != 1)
			return 1;
	return 0;
}

/*
 * Send the READ_BUF laid in send slot @slot (@len bytes): its response
 * must be the RDMA WRITE WITH IMMEDIATE of @data_len bytes with the
 * IO_RSP immediate of @msg_id, errno 0.  0, 1 for a wrong or missing
 * response, 2 when the peer could not send.
 */
static int served_rdbuf(struct con *c, unsigned int slot, size_t len,
			__u32 msg_id, __u32 data_len)
{
	unsigned int sent = c->sent + 1;
	struct rsp21 r;

	if (post_req(c, slot, len, 0, 0))
		return 2;
	if (wait21(c, 1, &r, WAIT_MS) != 1) {
		say("no response to READ_BUF %u", msg_id);
		return 1;
	}
	say("response: type %u, errno %d, id %u, %u bytes", r.type, r.err,
	    r.msg_id, r.len);
	if (r.type != MSG_READ_BUF || r.msg_id != IMM_MSG_ID(msg_id) || r.err ||
	    r.len != data_len) {
		say("not the READ_BUF response to request %u", msg_id);
		return 1;
	}
	while (c->sent < sent)
		if (wait21(c, 2, &r, WAIT_MS) != 1)
			return 1;
	return 0;
}

/*
 * "v21-good": a 2.1 session whose IO is served.  An inline WRITE of 4 KiB
 * (pattern A) at V21_OFF; a WRITE_REQ of 8 KiB (pattern B) right after
 * it, which the server reads from a window; a READ_REQ of the 12 KiB into
 * another window.  Each response is its request's IO_RSP with errno 0,
 * invalidating the window the request named, and the READ brings back A
 * then B.  Then, where the server takes READ_BUF, one of the first 4 KiB
 * into a third window, which must bring back A with its response.
 * "v21-tag-good" does the same with message ids tagged @tag, which every
 * response must carry back (an immediate, its low 3 bits).
 */
static int case_v21_good(unsigned int tag)
{
	struct con *c = &P.con[1];
	__u32 wkey, rkey;
	int r;

	if (session_up_2_1(0))
		return 2;
	fill_pattern(P.dbuf, 0xa1, 4096);
	r = served21(c, 0, lay_inline(0, MSG_ID(0, tag), TEST_OP_STORE,
				      V21_OFF, 4096),
		     4096, MSG_ID(0, tag), 0);
	if (r)
		return r;
	say("inline WRITE served");

	fill_pattern(P.dbuf + V21_SRC, 0xb2, 8192);
	if (bind_window(c, 0, V21_SRC, 8192, IBV_ACCESS_REMOTE_READ, &wkey))
		return 2;
	r = served21(c, 1, lay_io_req(1, MSG_WRITE_REQ, MSG_ID(1, tag),
				      TEST_OP_STORE, V21_OFF + 4096,
				      (uintptr_t)P.dbuf + V21_SRC, wkey, 8192),
		     0, MSG_ID(1, tag), wkey);
	if (r)
		return r;
	say("WRITE_REQ served");

	if (bind_window(c, 1, V21_DST, 12288, IBV_ACCESS_REMOTE_WRITE, &rkey))
		return 2;
	r = served21(c, 2, lay_io_req(2, MSG_READ_REQ, MSG_ID(2, tag),
				      TEST_OP_FETCH, V21_OFF,
				      (uintptr_t)P.dbuf + V21_DST, rkey, 12288),
		     0, MSG_ID(2, tag), rkey);
	if (r)
		return r;
	if (!pattern_ok(P.dbuf + V21_DST, 0xa1, 4096) ||
	    !pattern_ok(P.dbuf + V21_DST + 4096, 0xb2, 8192)) {
		say("the READ_REQ does not bring back what was written");
		return 1;
	}
	say("READ_REQ served with the data written");

	if (P.max_rdbuf21 < 4096) {
		say("the server takes no READ_BUF of 4 KiB");
		return 1;
	}
	memset(P.dbuf + V21_RDBUF, 0, 4096);
	if (bind_window(c, 0, V21_RDBUF, 4096, IBV_ACCESS_REMOTE_WRITE, &rkey))
		return 2;
	r = served_rdbuf(c, 3, lay_io_req(3, MSG_READ_BUF, MSG_ID(3, tag),
					  TEST_OP_FETCH, V21_OFF,
					  (uintptr_t)P.dbuf + V21_RDBUF, rkey,
					  4096), MSG_ID(3, tag), 4096);
	if (r)
		return r;
	if (!pattern_ok(P.dbuf + V21_RDBUF, 0xa1, 4096)) {
		say("the READ_BUF does not bring back what was written");
		return 1;
	}
	say("READ_BUF served with the data written");
	return expect_open(1000);
}

/* A violation of those listed above but v21-dereg and v21-norepost. */
static int case_v21(const char *name)
{
	struct con *c = &P.con[1];
	size_t len, data = 0;
	__u16 v;

	if (session_up_2_1(0))
		return 2;
	if (!strcmp(name, "v21-type")) {
		len = lay_no_type(0, 0);
	} else if (!strcmp(name, "v21-usr-len")) {
		len = lay_io_req(0, MSG_READ_REQ, 0, TEST_OP_FETCH, 0, 0, 0, 0);
		v = htole16(P.max_hdr21 - sizeof(struct io_req) + 1);
		memcpy(req_slot(0) + offsetof(struct io_req, usr_len), &v,
		       sizeof(v));
	} else if (!strcmp(name, "v21-msg-id")) {
		len = lay_io_req(0, MSG_WRITE_REQ, P.queue_depth, TEST_OP_STORE,
				 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-tag-unasked")) {
		len = lay_io_req(0, MSG_WRITE_REQ, MSG_ID(0, 1), TEST_OP_STORE,
				 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-tag-slot")) {
		len = lay_io_req(0, MSG_WRITE_REQ, MSG_ID(P.queue_depth, 1),
				 TEST_OP_STORE, 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-dup-id")) {
		if (post_req(c, 1, lay_io_req(1, MSG_WRITE_REQ, 0, TEST_OP_HOLD,
					      0, 0, 0, 0), 0, 0))
			return 2;
		len = lay_io_req(0, MSG_WRITE_REQ, 0, TEST_OP_STORE, 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-len")) {
		len = lay_io_req(0, MSG_READ_REQ, 0, TEST_OP_FETCH, 0,
				 (uintptr_t)P.buf, P.mr->rkey, P.max_io21 + 1);
	} else if (!strcmp(name, "v21-inline-short")) {
		len = lay_inline(0, 0, TEST_OP_STORE, V21_OFF, 4096);
		data = 2048;
	} else if (!strcmp(name, "v21-inline-long")) {
		len = lay_inline(0, 0, TEST_OP_STORE, V21_OFF, 2048);
		data = 4096;
	} else if (!strcmp(name, "v21-inline-big")) {
		len = lay_inline(0, 0, TEST_OP_STORE, V21_OFF, 8192);
		data = 8192;
	} else if (!strcmp(name, "v21-zero-key")) {
		len = lay_io_req(0, MSG_WRITE_REQ, 0, TEST_OP_STORE, 0, 0,
				 P.mr->rkey, 0);
	} else if (!strcmp(name, "v21-con0")) {
		c = &P.con[0];
		len = lay_io_req(0, MSG_WRITE_REQ, 0, TEST_OP_STORE, 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-imm") ||
		   !strcmp(name, "v21-imm-con0")) {
		if (!strcmp(name, "v21-imm-con0"))
			c = &P.con[0];
		if (post_send(c, IBV_WR_RDMA_WRITE_WITH_IMM, imm(IMM_IO_REQ, 0),
			      0, 0, 0, 0, 1))
			return 2;
		return expect_closed(WAIT_MS);
	} else if (!strcmp(name, "v21-rdbuf-len")) {
		len = lay_io_req(0, MSG_READ_BUF, 0, TEST_OP_FETCH, 0,
				 (uintptr_t)P.buf, P.mr->rkey,
				 P.max_rdbuf21 + 1);
	} else if (!strcmp(name, "v21-rdbuf-zero")) {
		len = lay_io_req(0, MSG_READ_BUF, 0, TEST_OP_FETCH, 0, 0, 0, 0);
	} else if (!strcmp(name, "v21-bad-rkey")) {
		/* Our memory region's index with another key: nobody's. */
		fill_pattern(P.dbuf + V21_SRC, 0xc3, 4096);
		len = lay_io_req(0, MSG_WRITE_REQ, 0, TEST_OP_STORE, V21_OFF,
				 (uintptr_t)P.dbuf + V21_SRC,
				 P.mr->rkey ^ 0xff, 4096);
	} else {
		return -1;
	}
	if (post_req(c, 0, len, 0, data))
		return 2;
	return expect_closed(WAIT_MS);
}

/*
 * "v21-dereg": a READ_REQ into a region that the peer deregisters once the
 * server has the request, before the server writes the data: the test
 * server holds the request a second (OP_HOLD, errno 0), then the server's
 * RDMA WRITE finds no region, and the server must close the path.  The
 * region is a memory region of its own: rxe deregisters none that has a
 * window bound.
 */
static int case_v21_dereg(void)
{
	struct con *c = &P.con[1];
	struct ibv_mr *mr;
	struct rsp21 r;

	if (session_up_2_1(0))
		return 2;
	mr = ibv_reg_mr(P.pd, P.dbuf + V21_DEREG, 4096,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		die("ibv_reg_mr");
	if (post_req(c, 0, lay_io_req(0, MSG_READ_REQ, 0, TEST_OP_HOLD, 0,
				      (uintptr_t)P.dbuf + V21_DEREG,
				      mr->rkey, 4096), 0, 0) ||
	    wait21(c, 2, &r, WAIT_MS) != 1) {
		say("the request was not acknowledged");
		ibv_dereg_mr(mr);
		return 2;
	}
	if (ibv_dereg_mr(mr))
		die("ibv_dereg_mr");
	say("region deregistered; the server writes to it in a second");
	return expect_closed(WAIT_MS);
}

/*
 * "v21-rq": four times the server's shared receive queue (@srq, its
 * srq_size) of requests at once, each of which the test server holds a
 * second (OP_HOLD, no data): those beyond the queue meet
 * receiver-not-ready, and rxe sends them again until a buffer is free.
 * Every one must get its response, once, with errno 0.  A buffer holds
 * one request a second, so the last response comes three seconds or more
 * after the first request went out: sooner, the queue was longer than
 * srq_size, and nothing went beyond it.
 */
static int case_v21_rq(unsigned int srq)
{
	unsigned int n = 4 * srq, i, got = 0, bad = 0;
	unsigned char seen[REQ_SLOTS] = { 0 };
	struct con *c = &P.con[1];
	struct rsp21 r;
	long t0, took;

	if (session_up_2_1(0))
		return 2;
	if (!n || n > P.queue_depth || n > REQ_SLOTS) {
		say("%u requests do not fit a queue depth of %u", n,
		    P.queue_depth);
		return 2;
	}
	t0 = now_ms();
	for (i = 0; i < n; i++)
		if (post_req(c, i, lay_io_req(i, MSG_WRITE_REQ, i, TEST_OP_HOLD,
					      0, 0, 0, 0), 0, 0))
			return 2;
	say("%u requests out, for a receive queue of %u", n, srq);
	while (got < n && wait21(c, 1, &r, WAIT_MS) == 1) {
		got++;
		if (r.type == MSG_IO_RSP && r.len == sizeof(struct io_rsp) &&
		    r.msg_id < n && !r.err && !r.inv && !seen[r.msg_id]++)
			continue;
		say("response %u: type %u, errno %d, id %u, %u bytes", got,
		    r.type, r.err, r.msg_id, r.len);
		bad++;
	}
	took = now_ms() - t0;
	say("%u responses, %u of them wrong, in %ld ms", got, bad, took);
	if (got < n || bad)
		return 1;
	if (took < 3000) {
		say("too soon for a receive queue of %u", srq);
		return 1;
	}
	return expect_open(1000);
}

/*
 * "v21-norepost": connection 1 has V21_NOREPOST receives, which the peer
 * never posts again.  Of six requests (STOREs of no data), that many
 * responses land; the others meet receiver-not-ready on the server's
 * side, which rxe retries for ever (rnr_retry 7).  Two seconds into that
 * the peer sends a request of a type of no protocol: the server must
 * close the path, its responses stuck, and not hang in the close.
 */
static int case_v21_norepost(void)
{
	struct con *c = &P.con[1];
	unsigned int i, got = 0;
	struct rsp21 r;
	int k;

	P.no_repost = 1;
	if (session_up_2_1(V21_NOREPOST))
		return 2;
	for (i = 0; i < 6; i++)
		if (post_req(c, i, lay_io_req(i, MSG_WRITE_REQ, i,
					      TEST_OP_STORE, 0, 0, 0, 0), 0, 0))
			return 2;
	while (got < V21_NOREPOST && wait21(c, 1, &r, WAIT_MS) == 1)
		got++;
	if (got < V21_NOREPOST) {
		say("%u responses of %u", got, V21_NOREPOST);
		return 1;
	}
	k = wait21(c, 1, &r, 2000);
	if (k) {
		say(k > 0 ? "a response with no receive posted" :
		    "the connection failed");
		return k > 0 ? 2 : 1;
	}
	say("%u responses in, the others wait for a receive", got);
	if (post_req(c, 6, lay_no_type(6, 6), 0, 0))
		return 2;
	return expect_closed(WAIT_MS);
}

static int run_v21(const char *name)
{
	static const char * const lies[] = {
		"v21-type", "v21-usr-len", "v21-msg-id", "v21-dup-id",
		"v21-len", "v21-inline-short", "v21-inline-long",
		"v21-inline-big", "v21-zero-key", "v21-con0", "v21-imm",
		"v21-imm-con0", "v21-bad-rkey", "v21-rdbuf-len", "v21-rdbuf-zero",
		"v21-tag-unasked", "v21-tag-slot",
	};
	unsigned int i;

	/* The session asks for tags: "v21-tag-..." but "v21-tag-unasked". */
	P.tags = !strncmp(name, "v21-tag-", 8) &&
		 strcmp(name, "v21-tag-unasked");
	if (!strcmp(name, "v21-good"))
		return case_v21_good(0);
	if (!strcmp(name, "v21-tag-good"))
		return case_v21_good(0xfffe);
	if (!strcmp(name, "v21-rq"))
		return case_v21_rq(P.hold);
	if (!strcmp(name, "v21-dereg"))
		return case_v21_dereg();
	if (!strcmp(name, "v21-norepost"))
		return case_v21_norepost();
	for (i = 0; i < ARRAY_SIZE(lies); i++)
		if (!strcmp(name, lies[i]))
			return case_v21(name);
	say("unknown case %s", name);
	return 2;
}

/* ---- the table of messages and path states -------------------------- */

/* A matrix cell: "m:STATE:MSG:CON:keep|close". */
struct cell {
	char	state[16];
	char	msg[16];
	unsigned int con;
	int	keep;
};

static int parse_cell(const char *name, struct cell *m)
{
	char keep[8];

	if (sscanf(name, "m:%15[^:]:%15[^:]:%u:%7s", m->state, m->msg,
		   &m->con, keep) != 4 || m->con > 1)
		return -1;
	m->keep = !strcmp(keep, "keep");
	return m->keep || !strcmp(keep, "close") ? 0 : -1;
}

/*
 * Put message @msg on @c: as a client when @client, else as a server.
 * With @wait, wait for the send's completion (whatever its status); else
 * post it and go on (the peer may take its time to post a receive).
 * Return -1 for an unknown message.
 */
static int send_msg(struct con *c, const char *msg, int client, int wait)
{
	enum ibv_wr_opcode op = IBV_WR_RDMA_WRITE_WITH_IMM;
	__u32 v = 0, off = 512;
	__u16 hdr[4] = { 0 };
	size_t len = 0;

	if (!strcmp(msg, "hb")) {
		v = imm(IMM_HB_MSG, 0);
	} else if (!strcmp(msg, "hb-ack")) {
		v = imm(IMM_HB_ACK, 0);
	} else if (!strcmp(msg, "io-rsp")) {
		v = imm(IMM_IO_RSP, 0);
	} else if (!strcmp(msg, "io-req") && client && P.chunks) {
		/* A well-formed WRITE of 512 bytes to chunk 3. */
		memset(P.buf + SEND_OFF, 0x5a, off);
		write_hdr(off, 0);
		write_chunk(c, 3, off + 4, off);
		return 0;
	} else if (!strcmp(msg, "io-req")) {
		v = imm(IMM_IO_REQ, 0);
	} else if (!strcmp(msg, "info-req")) {
		struct info_req req;

		name_req(&req, "peer");
		memcpy(P.buf + SEND_OFF, &req, sizeof(req));
		op = IBV_WR_SEND;
		len = sizeof(req);
	} else if (!strcmp(msg, "info-rsp") || !strcmp(msg, "rkey-rsp")) {
		/* An INFO_RSP of no chunk; an RKEY_RSP for chunk 0. */
		hdr[0] = htole16(msg[0] == 'i' ? MSG_INFO_RSP : MSG_RKEY_RSP);
		memcpy(P.buf + SEND_OFF, hdr, sizeof(hdr));
		op = msg[0] == 'i' ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
		v = imm(IMM_IO_RSP, 0);
		len = sizeof(hdr);
	} else {
		return -1;
	}
	if (wait)
		send_sync(c, op, v, 0, len, 0, 0);
	else if (post_send(c, op, v, 0, len, 0, 0, 0))
		say("posting %s failed", msg);
	return 0;
}

/* Did the server acknowledge a heartbeat (on connection 0)? */
static int hb_acked_within(int ms)
{
	struct ibv_wc wc;

	while (poll_one(&P.con[0], &wc, ms) == IBV_WC_SUCCESS)
		if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
		    be32toh(wc.imm_data) >> IMM_PAYLOAD_BITS == IMM_HB_ACK)
			return 1;
	return 0;
}

/*
 * Have the other side close the path: an immediate of no type, on @c.
 * A cell in the state "closing" sends it on the connection its message
 * then follows on: completions of one queue pair are handled in order,
 * those of two are not, and the message is to find the path closing.
 */
static void close_path_on(struct con *c)
{
	send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM, imm(IMM_NO_TYPE, 0), 0, 0, 0,
		  0);
}

/*
 * Bring a path of two connections to @state, as a client; for "closing",
 * see close_path_on() (@con is the cell's connection).
 */
static int cell_state(const char *state, unsigned int con)
{
	struct info_req req;

	P.cid_num = 2;
	if (!strcmp(state, "later"))
		return connect_con(1, 2);
	if (!strcmp(state, "conn") || !strcmp(state, "closing")) {
		if (session_up(2))
			return -1;
		if (!strcmp(state, "closing"))
			close_path_on(&P.con[con]);
		return 0;
	}
	if (connect_con(0, 2) || connect_con(1, 2))
		return -1;
	if (!strcmp(state, "open"))
		return 0;
	if (strcmp(state, "info"))
		return -1;
	/* The server's user takes its time over the CONNECTED event. */
	name_req(&req, "peer");
	send_info_req(&P.con[0], &req, sizeof(req));
	return 0;
}

static int case_cell(const char *name)
{
	struct cell m;
	int r;

	if (parse_cell(name, &m))
		return -1;
	if (cell_state(m.state, m.con))
		return 2;
	if (!P.con[m.con].id) {
		say("connection %u is not open in state %s", m.con, m.state);
		return 2;
	}
	if (send_msg(&P.con[m.con], m.msg, 1, 1))
		return -1;
	say("%s sent on connection %u, path %s", m.msg, m.con, m.state);
	if (!m.keep)
		return expect_closed(WAIT_MS);
	r = 0;
	if (!strcmp(m.msg, "hb") && !hb_acked_within(5000)) {
		say("heartbeat not acknowledged");
		r = 1;
	}
	if (!strcmp(m.msg, "io-req") && P.chunks)
		r |= io_responded(&P.con[m.con], 3);
	return r | expect_open(1500);
}

/* ---- the lying server ----------------------------------------------- */

#define SRV_QD		16
#define SRV_CHUNK	16384
#define SRV_HDR		512
#define CHUNK_OFF	(256 * 1024)

static const char *srv_case;

static int is(const char *name)
{
	return !strcmp(srv_case, name);
}

/*
 * The lies "v21-rsp-..." are told by a server that speaks 2.1: its
 * connection response is 2.1's, its INFO_RSP has no descriptors, and it
 * takes the client's requests as SENDs.
 */
static int srv_v21(void)
{
	return !strncmp(srv_case, "v21-", 4);
}

static void srv_conn_rsp_2_1(struct conn_rsp_2_1 *rsp)
{
	memset(rsp, 0, sizeof(*rsp));
	rsp->magic = htole16(RTRS_MAGIC);
	rsp->version = htole16(RTRS_VERSION_2_1);
	rsp->queue_depth = htole16(SRV_QD);
	rsp->max_io_size = htole32(1 << 20);
	rsp->max_hdr_size = htole32(SRV_HDR);
	rsp->max_inline_size = htole32(4096);
	rsp->max_read_buf = htole32(4096);
	if (!strncmp(srv_case, "v21-tag-", 8))
		rsp->flags = htole32(CONN_RSP_MSG_TAGS);
}

static void srv_conn_rsp(struct conn_rsp *rsp, unsigned int cid)
{
	memset(rsp, 0, sizeof(*rsp));
	rsp->magic = htole16(RTRS_MAGIC);
	rsp->version = htole16(RTRS_VERSION);
	rsp->queue_depth = htole16(SRV_QD);
	rsp->max_io_size = htole32(SRV_CHUNK - SRV_HDR);
	rsp->max_hdr_size = htole32(SRV_HDR);
	if (is("rsp-magic"))
		rsp->magic = htole16(0x1BBE);
	else if (is("rsp-errno"))
		rsp->errno_ = htole16(EBUSY);
	else if (is("rsp-qd-0"))
		rsp->queue_depth = 0;
	else if (is("rsp-qd-vary") && cid)
		rsp->queue_depth = htole16(SRV_QD / 2);
	else if (is("rsp-io-huge"))
		rsp->max_io_size = htole32(0x7fffffff);
	else if (is("rsp-hdr-small"))
		rsp->max_hdr_size = htole32(4);
}

/* Accept the connection @id asked for in P.req, with the case's lie. */
static void srv_accept(struct rdma_cm_id *id)
{
	unsigned int cid = le16toh(P.req.cid);
	union {
		struct conn_rsp v20;
		struct conn_rsp_2_1 v21;
	} rsp;
	struct rdma_conn_param param = {
		.private_data = &rsp,
		.private_data_len = sizeof(rsp.v20),
		.responder_resources = 1,
		.initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct con *c;

	if (P.req_len < sizeof(P.req) || cid >= MAX_CONS || P.con[cid].id) {
		say("refusing connection %u", cid);
		rdma_reject(id, NULL, 0);
		return;
	}
	c = &P.con[cid];
	c->id = id;
	id->context = c;
	setup_qp(c);
	if (srv_v21() && le16toh(P.req.version) == RTRS_VERSION_2_1) {
		srv_conn_rsp_2_1(&rsp.v21);
		param.private_data_len = sizeof(rsp.v21);
	} else {
		srv_conn_rsp(&rsp.v20, cid);
	}
	if (rdma_accept(id, &param))
		die("rdma_accept");
}

static void srv_info_rsp(void)
{
	struct info_rsp *rsp = (void *)(P.buf + SEND_OFF);
	unsigned int i, n = SRV_QD;
	size_t len;

	if (is("info-few"))
		n = SRV_QD / 2;		/* divides the depth, covers half */
	else if (is("info-many"))
		n = SRV_QD + 1;
	else if (srv_v21())
		n = 0;			/* 2.1 has no chunks */
	memset(rsp, 0, sizeof(*rsp));
	rsp->type = htole16(is("info-type") ? MSG_INFO_REQ : MSG_INFO_RSP);
	rsp->sg_cnt = htole16(n);
	for (i = 0; i < n; i++) {
		rsp->desc[i].addr = htole64((uintptr_t)P.buf + CHUNK_OFF +
					    (i % SRV_QD) * SRV_CHUNK);
		rsp->desc[i].key = htole32(P.mr->rkey);
		rsp->desc[i].len = htole32(SRV_CHUNK);
	}
	if (is("info-len-0"))
		rsp->desc[n - 1].len = 0;
	else if (is("info-len-odd"))	/* not a whole number of chunks */
		rsp->desc[0].len = htole32(SRV_CHUNK + 1);
	len = sizeof(*rsp) + n * sizeof(rsp->desc[0]);
	if (is("info-short"))
		len -= sizeof(rsp->desc[0]);
	/*
	 * Connect requests are taken meanwhile; a client that a cell's
	 * message made drop the path before the INFO_RSP came leaves it to
	 * rxe's retries, and the wait to the disconnect.
	 */
	if (send_sync(&P.con[0], IBV_WR_SEND, 0, 0, len, 0, 0))
		say("INFO_RSP send did not complete");
}

/* A receive completed on @c: its opcode, or -1 when none. */
static int srv_recv(struct con *c, __u32 *imm_data)
{
	struct ibv_wc wc;

	while (c->cq && ibv_poll_cq(c->cq, 1, &wc) == 1) {
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (!(wc.opcode & IBV_WC_RECV))
			continue;
		*imm_data = be32toh(wc.imm_data);
		return wc.opcode;
	}
	return -1;
}

/* 2.1: respond to request @msg_id on @c with a SEND of IO_RSP, errno 0. */
static void srv_rsp21(struct con *c, __u32 msg_id)
{
	struct io_rsp m = {
		.type = htole16(MSG_IO_RSP),
		.msg_id = htole32(msg_id),
	};

	memcpy(P.buf + SEND_OFF, &m, sizeof(m));
	if (send_sync(c, IBV_WR_SEND, 0, 0, sizeof(m), 0, 0))
		say("response to request %u did not complete", msg_id);
}

/*
 * 2.1: answer request @msg_id on @c with @n copies of its response packed
 * into one SEND of @len bytes, as a client that asked for packed
 * responses may get them, but lying.
 */
static void srv_pack21(struct con *c, __u32 msg_id, unsigned int n,
		       size_t len)
{
	struct io_rsp m = {
		.type = htole16(MSG_IO_RSP),
		.msg_id = htole32(msg_id),
	};
	unsigned int i;

	for (i = 0; i < n; i++)
		memcpy(P.buf + SEND_OFF + i * sizeof(m), &m, sizeof(m));
	say("inline WRITE %u, answered %u times in %zu bytes", msg_id, n, len);
	if (send_sync(c, IBV_WR_SEND, 0, 0, len, 0, 0))
		say("packed answer to request %u did not complete", msg_id);
}

/* Answers the "v21-tag-..." lies gave to requests of their kind. */
static unsigned int srv_tag_answers;

/* 2.1: answer a READ_BUF of @len bytes, @msg_id, with its data. */
static void srv_rdbuf21(struct con *c, const struct io_req *h, __u32 msg_id,
			__u32 len)
{
	send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM,
		  imm(IMM_IO_RSP, IMM_MSG_ID(msg_id)), 4096, len,
		  le64toh(h->desc.addr), le32toh(h->desc.key));
}

/*
 * The "v21-tag-..." lies, told to a client that tags its message ids:
 * the first answer to a request of the case's kind (an inline WRITE for
 * "v21-tag-dup", a READ_BUF for "v21-tag-rdbuf-dup") goes twice, a copy
 * the client must drop and go on; the answer to the fourth names the
 * next tag of the request's slot, which the client has not sent: that
 * one closes the path.  Requests of the other kind are answered.  1 once
 * the last lie is told.
 */
static int srv_tag21(struct con *c, const struct io_req *h, __u32 msg_id)
{
	int rdbuf = le16toh(h->type) == MSG_READ_BUF;
	__u32 id = msg_id, len = le32toh(h->desc.len);
	unsigned int n = 0;

	if (rdbuf == is("v21-tag-rdbuf-dup"))
		n = ++srv_tag_answers;
	if (n == 4) {
		id = MSG_ID(msg_id, (msg_id >> 16) + 1);
		say("request 0x%x, answered as 0x%x, a tag not sent", msg_id,
		    id);
	}
	if (rdbuf)
		srv_rdbuf21(c, h, id, len);
	else
		srv_rsp21(c, id);
	if (n == 1) {
		say("request 0x%x, answered twice", msg_id);
		if (rdbuf)
			srv_rdbuf21(c, h, id, len);
		else
			srv_rsp21(c, id);
	}
	return n == 4;
}

/*
 * 2.1: the request that came in the receive buffer of @c.  An inline
 * WRITE is answered, and a READ_BUF's data written with its immediate
 * response, but where the case lies: "v21-rsp-imm-write" answers the
 * WRITE with an immediate, as if it were a READ_BUF; "v21-rsp-rdbuf-len"
 * writes a byte less than the READ_BUF asked for; "v21-rsp-rdbuf-send"
 * answers it with a SEND; "v21-rsp-rdbuf-key" writes its data with a key
 * the client did not give, and no immediate: the client's QP fails with
 * no completion of its own to say so (a device may raise an affiliated
 * event; rxe does not), and the flush that follows must tell.  The
 * client asks for packed responses: the "v21-rsp-pack-..." lies answer
 * the WRITE twice in one pack ("dup"), in a pack of a response and a half
 * ("odd"), or in a pack of 17, one more than its receive buffer holds
 * ("over").  The data of the last inline WRITE is what a READ_BUF reads
 * back.  1 once the lie is told.
 */
static int srv_req21(struct con *c)
{
	struct io_req h;
	__u32 msg_id, len;

	memcpy(&h, P.buf, sizeof(h));
	msg_id = le32toh(h.msg_id);
	len = le32toh(h.desc.len);
	if (le16toh(h.type) == MSG_WRITE_INLINE)
		memcpy(P.buf + SEND_OFF + 4096, P.buf + SRV_HDR, 4096);
	if (!strncmp(srv_case, "v21-tag-", 8) &&
	    (le16toh(h.type) == MSG_WRITE_INLINE ||
	     le16toh(h.type) == MSG_READ_BUF))
		return srv_tag21(c, &h, msg_id);
	switch (le16toh(h.type)) {
	case MSG_WRITE_INLINE:
		if (is("v21-rsp-pack-dup")) {
			srv_pack21(c, msg_id, 2, 2 * sizeof(struct io_rsp));
			return 1;
		}
		if (is("v21-rsp-pack-odd")) {
			srv_pack21(c, msg_id, 2, sizeof(struct io_rsp) * 3 / 2);
			return 1;
		}
		if (is("v21-rsp-pack-over")) {
			srv_pack21(c, msg_id, 17, 17 * sizeof(struct io_rsp));
			return 1;
		}
		if (!is("v21-rsp-imm-write")) {
			srv_rsp21(c, msg_id);
			return 0;
		}
		say("inline WRITE %u, answered by an immediate", msg_id);
		send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM,
			  imm(IMM_IO_RSP, msg_id), 0, 0, 0, 0);
		return 1;
	case MSG_READ_BUF:
		if (is("v21-rsp-rdbuf-send")) {
			say("READ_BUF %u of %u bytes, answered by a SEND",
			    msg_id, len);
			srv_rsp21(c, msg_id);
			return 1;
		}
		if (is("v21-rsp-rdbuf-key")) {
			say("READ_BUF %u, written with a key it did not give",
			    msg_id);
			send_sync(c, IBV_WR_RDMA_WRITE, 0, 4096, len,
				  le64toh(h.desc.addr),
				  le32toh(h.desc.key) ^ 0xff);
			return 1;
		}
		if (is("v21-rsp-rdbuf-len") && len)
			len--;
		say("READ_BUF %u, answered with %u bytes", msg_id, len);
		send_sync(c, IBV_WR_RDMA_WRITE_WITH_IMM,
			  imm(IMM_IO_RSP, msg_id), 4096, len,
			  le64toh(h.desc.addr), le32toh(h.desc.key));
		return is("v21-rsp-rdbuf-len");
	}
	say("request of type %u, not answered", le16toh(h.type));
	return 0;
}

/* 2.1: serve the IO connections' requests until the lie is told. */
static int srv_io21(void)
{
	struct ibv_wc wc;
	unsigned int i;

	for (i = 1; i < MAX_CONS; i++) {
		if (!P.con[i].cq)
			continue;
		/* Requests that came while a send was waited for. */
		while (P.con[i].stashed) {
			P.con[i].stashed--;
			if (srv_req21(&P.con[i]))
				return 1;
		}
		while (ibv_poll_cq(P.con[i].cq, 1, &wc) == 1) {
			if (wc.status != IBV_WC_SUCCESS ||
			    wc.opcode != IBV_WC_RECV)
				continue;
			if (srv_req21(&P.con[i]))
				return 1;
		}
	}
	return 0;
}

/*
 * Respond to the first IO request with the case's lie ("io-silent": none at
 * all, while the connection keeps acknowledging); 1 once done.
 */
static int srv_io(void)
{
	unsigned int i, id;
	__u32 v, rsp;

	if (srv_v21())
		return srv_io21();

	for (i = 0; i < MAX_CONS; i++) {
		if (srv_recv(&P.con[i], &v) != IBV_WC_RECV_RDMA_WITH_IMM ||
		    v >> IMM_PAYLOAD_BITS != IMM_IO_REQ)
			continue;
		id = (v & 0x0fffffff) >> 24;	/* 28 - log2(SRV_QD) */
		if (is("io-silent")) {
			say("request for chunk %u, never responding", id);
			return 1;
		}
		if (is("io-bad-id"))
			rsp = imm(IMM_IO_RSP, SRV_QD + 3);
		else if (is("io-not-sent"))
			rsp = imm(IMM_IO_RSP, (id + 1) % SRV_QD);
		else if (is("io-type"))
			rsp = imm(IMM_IO_REQ, id);
		else
			rsp = imm(IMM_IO_RSP, id);
		say("request for chunk %u, responding 0x%08x", id, rsp);
		/* Twice, back to back: the second responds to no request. */
		if (is("io-dup"))
			post_send(&P.con[i], IBV_WR_RDMA_WRITE_WITH_IMM, rsp,
				  0, 0, 0, 0, 0);
		send_sync(&P.con[i], IBV_WR_RDMA_WRITE_WITH_IMM, rsp, 0, 0,
			  0, 0);
		return 1;
	}
	return 0;
}

/*
 * "hb-con": a second after the INFO_RSP, a heartbeat on connection 1 (a
 * server sends them on connection 0); the client must acknowledge it.
 * 1 once the acknowledgment came.
 */
static int srv_hb_con(long info_ms, int *sent)
{
	unsigned int i;
	__u32 v;

	if (!*sent && P.con[1].id && now_ms() >= info_ms + 1000) {
		if (send_sync(&P.con[1], IBV_WR_RDMA_WRITE_WITH_IMM,
			      imm(IMM_HB_MSG, 0), 0, 0, 0, 0))
			return 0;
		say("heartbeat sent on connection 1");
		*sent = 1;
	}
	for (i = 0; *sent && i < MAX_CONS; i++)
		if (srv_recv(&P.con[i], &v) == IBV_WC_RECV_RDMA_WITH_IMM &&
		    v >> IMM_PAYLOAD_BITS == IMM_HB_ACK) {
			say("heartbeat on connection 1 acknowledged");
			return 1;
		}
	return 0;
}

static int srv_all_gone(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAX_CONS; i++) {
		if (!P.con[i].id)
			continue;
		if (!P.con[i].disconnected && !P.con[i].rejected)
			return 0;
		n++;
	}
	return n > 0;
}

/*
 * A cell of the table against a client: @at is when its state is
 * reached ("early": connection 0 accepted; "info": the INFO_REQ came;
 * "conn" and "closing": a second after the INFO_RSP).  Send the cell's
 * message once; for a heartbeat to be kept, 1 once it was acknowledged.
 */
static struct cell srv_cell;
static int srv_cell_sent, srv_cell_acked;

static void srv_cell_send(const char *at)
{
	struct con *c = &P.con[srv_cell.con];

	if (srv_cell_sent || strcmp(at, srv_cell.state) || !c->id)
		return;
	if (!strcmp(at, "closing"))
		close_path_on(c);
	/* Before the INFO_RSP the client may not have posted a receive. */
	send_msg(c, srv_cell.msg, 0, !strcmp(at, "conn"));
	say("%s sent on connection %u, path %s", srv_cell.msg,
	    srv_cell.con, at);
	srv_cell_sent = 1;
}

static void srv_cell_poll(void)
{
	unsigned int i;
	__u32 v;

	for (i = 0; srv_cell_sent && !srv_cell_acked && i < MAX_CONS; i++)
		if (srv_recv(&P.con[i], &v) == IBV_WC_RECV_RDMA_WITH_IMM &&
		    v >> IMM_PAYLOAD_BITS == IMM_HB_ACK) {
			say("heartbeat acknowledged");
			srv_cell_acked = 1;
		}
}

static int srv_cell_result(void)
{
	if (!srv_cell_sent) {
		say("the cell's state never came");
		return 1;
	}
	return srv_cell.keep && !strcmp(srv_cell.msg, "hb") &&
	       !srv_cell_acked;
}

static void srv_listen(void)
{
	if (rdma_create_id(P.ch, &P.lcon.id, &P.lcon, RDMA_PS_TCP) ||
	    rdma_bind_addr(P.lcon.id, (struct sockaddr *)&P.dst) ||
	    rdma_listen(P.lcon.id, 16))
		die("listening");
}

/* Serve one client session with the lie or cell @name, until it goes. */
static int serve_session(const char *name)
{
	long end = now_ms() + 3 * WAIT_MS;
	int info_done = 0, io_done = 0, hb_sent = 0, hb_acked = 0;
	int cell = !strncmp(name, "m:", 2);
	long info_ms = 0;
	__u32 v;

	srv_case = name;
	srv_tag_answers = 0;
	P.keep_recvs = srv_v21();
	srv_cell_sent = 0;
	srv_cell_acked = 0;
	if (cell && parse_cell(name, &srv_cell)) {
		say("bad cell %s", name);
		return 2;
	}
	while (now_ms() < end) {
		take_event(10);
		if (cell && P.con[0].id && !info_done)
			srv_cell_send("early");
		if (!info_done && P.con[0].id &&
		    srv_recv(&P.con[0], &v) == IBV_WC_RECV) {
			say("INFO_REQ received");
			if (cell)
				srv_cell_send("info");
			srv_info_rsp();
			info_done = 1;
			info_ms = now_ms();
		} else if (cell && info_done) {
			if (now_ms() >= info_ms + 1000) {
				srv_cell_send("conn");
				srv_cell_send("closing");
			}
			srv_cell_poll();
		} else if (info_done && is("hb-con")) {
			hb_acked = hb_acked || srv_hb_con(info_ms, &hb_sent);
		} else if (info_done && !io_done) {
			io_done = srv_io();
		}
		if (srv_all_gone()) {
			say("the client dropped every connection");
			if (cell)
				return srv_cell_result();
			return is("hb-con") && !hb_acked;
		}
	}
	say("the client kept its connections");
	return 1;
}

static int run_server(const char *name)
{
	srv_listen();
	say("listening, case %s", name);
	return serve_session(name);
}

static int run_case(const char *name)
{
	int r = case_req_field(name);

	if (r >= 0)
		return r;
	if (!strncmp(name, "m:", 2)) {
		r = case_cell(name);
		if (r < 0)
			say("bad cell %s", name);
		return r < 0 ? 2 : r;
	}
	if (!strcmp(name, "partial"))
		return case_partial();
	if (!strncmp(name, "half-", 5))
		return case_half(atoi(name + 5));
	if (!strcmp(name, "stalled"))
		return case_stalled(0);
	if (!strcmp(name, "no-info"))
		return case_stalled(1);
	if (!strcmp(name, "ooo"))
		return case_ooo();
	if (!strcmp(name, "dup-cid"))
		return case_dup_cid();
	if (!strcmp(name, "info-early"))
		return case_info_early();
	if (!strcmp(name, "io-early"))
		return case_io_early();
	if (!strcmp(name, "info-twice"))
		return case_info_twice();
	if (!strncmp(name, "info-", 5))
		return case_info(name);
	if (!strcmp(name, "good-io"))
		return case_good_io();
	if (!strcmp(name, "hb-con"))
		return case_hb_con();
	if (!strcmp(name, "flood"))
		return case_flood();
	if (!strcmp(name, "shared-chunk"))
		return case_shared_chunk();
	if (!strncmp(name, "v21-", 4))
		return run_v21(name);
	r = case_io(name);
	if (r < 0) {
		say("unknown case %s", name);
		return 2;
	}
	return r;
}

/* Drop every connection: the next cell starts from nothing. */
/* The memory windows of the case, if any. */
static void mws_free(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(P.mw); i++) {
		if (P.mw[i])
			ibv_dealloc_mw(P.mw[i]);
		P.mw[i] = NULL;
	}
}

static void cells_reset(void)
{
	unsigned int i;

	for (i = 0; i < MAX_CONS; i++) {
		struct con *c = &P.con[i];

		if (c->id)
			con_destroy(c);
		memset(c, 0, sizeof(*c));
	}
	P.chunks = 0;
	P.chunk_size = 0;
	P.queue_depth = 0;
	random_uuid(P.sess_uuid);
	random_uuid(P.paths_uuid);
}

/*
 * Everything a case may leave behind but the device's PD and buffer:
 * windows first (a bound window holds its queue pair), connections, the
 * 2.1 data region, and what the case set up for itself.
 */
static void case_reset(void)
{
	mws_free();
	cells_reset();
	if (P.dmr)
		ibv_dereg_mr(P.dmr);
	P.dmr = NULL;
	free(P.dbuf);
	P.dbuf = NULL;
	P.version = RTRS_VERSION;
	P.cid_num = 0;
	P.max_io21 = 0;
	P.max_hdr21 = 0;
	P.max_inline21 = 0;
	P.max_rdbuf21 = 0;
	P.no_repost = 0;
	released = 0;
}

/*
 * "client-loop": the cases of "client", one a line of stdin ("CASE
 * [HOLD]"), each on sessions of its own, with what the case left torn
 * down before the next.  After each, its verdict goes to stdout as one
 * line ("CASE 0": passed, 1: failed, 2: peer error), so that the caller
 * can check the other side between two cases; one process for many
 * cases saves its start and set-up a case.  Ends at the end of stdin.
 */
static int run_client_loop(void)
{
	char line[128], name[64];
	unsigned int hold;
	int r, failed = 0;

	while (fgets(line, sizeof(line), stdin)) {
		hold = 10;
		if (sscanf(line, "%63s %u", name, &hold) < 1)
			continue;
		P.hold = hold;
		say("== case %s", name);
		r = run_case(name);
		case_reset();
		say("case %s: %s", name, r == 0 ? "ok" : r == 1 ? "FAILED" :
		    "peer error");
		printf("%s %d\n", name, r);
		fflush(stdout);
		failed += r != 0;
	}
	return failed ? 1 : 0;
}

/* One line in the kernel log: one write(), as /dev/kmsg wants it. */
static void log_mark(const char *fmt, const char *arg)
{
	int fd = open("/dev/kmsg", O_WRONLY);
	char line[256];
	int n;

	if (fd < 0)
		die("opening the kernel log");
	n = snprintf(line, sizeof(line), fmt, arg);
	if (n <= 0 || (size_t)n >= sizeof(line) || write(fd, line, n) != n)
		die("writing the kernel log");
	close(fd);
}

/*
 * Play @n cells in turn.  The server closes a path in its own time: wait
 * a little after each, so that what it logs lands before the next mark,
 * and so that no rate limit of its log sees the cells as a burst: a cell
 * then takes about a second, and logs a line or none, where
 * pr_err_ratelimited() lets 10 lines by in 5 s.
 */
static int run_cells(char **cells, int n)
{
	int i, r, failed = 0;

	for (i = 0; i < n; i++) {
		log_mark("rtrs-peer: cell %s\n", cells[i]);
		r = case_cell(cells[i]);
		cells_reset();
		usleep(300 * 1000);
		say("cell %s: %s", cells[i], r ? "FAILED" : "ok");
		failed += r != 0;
	}
	log_mark("rtrs-peer: cells done%s\n", "");
	return failed ? 1 : 0;
}

/* Serve @n sessions in turn, each with the next of @cells. */
static int run_server_cells(char **cells, int n)
{
	int i, r, failed = 0;

	srv_listen();
	say("listening, %d cells", n);
	for (i = 0; i < n; i++) {
		r = serve_session(cells[i]);
		cells_reset();
		say("cell %s: %s", cells[i], r ? "FAILED" : "ok");
		failed += r != 0;
	}
	return failed ? 1 : 0;
}

static void addr(struct sockaddr_in *sin, const char *ip, int port)
{
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, ip, &sin->sin_addr) != 1) {
		say("bad address %s", ip);
		exit(2);
	}
}

static void random_uuid(__u8 *u)
{
	int fd = open("/dev/urandom", O_RDONLY);

	if (fd < 0 || read(fd, u, 16) != 16)
		die("/dev/urandom");
	close(fd);
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
}

static void teardown(void)
{
	unsigned int i;

	/* A window holds the queue pair it is bound on: first. */
	mws_free();
	for (i = 0; i < MAX_CONS; i++) {
		if (P.con[i].id)
			con_destroy(&P.con[i]);
	}
	if (P.lcon.id)
		rdma_destroy_id(P.lcon.id);
	if (P.dmr)
		ibv_dereg_mr(P.dmr);
	if (P.mr)
		ibv_dereg_mr(P.mr);
	if (P.pd)
		ibv_dealloc_pd(P.pd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = {
		.sa_handler = on_release,
		.sa_flags = SA_RESTART,
	};
	int r;

	const char *name;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		die("sigaction");
	P.version = RTRS_VERSION;
	P.ch = rdma_create_event_channel();
	if (!P.ch)
		die("rdma_create_event_channel");
	if (argc >= 5 && !strcmp(argv[1], "server-cells")) {
		addr(&P.dst, argv[2], atoi(argv[3]));
		name = "server-cells";
		r = run_server_cells(argv + 4, argc - 4);
	} else if (argc == 5 && !strcmp(argv[1], "server")) {
		addr(&P.dst, argv[2], atoi(argv[3]));
		name = argv[4];
		r = run_server(name);
	} else if (argc >= 6 && !strcmp(argv[1], "cells")) {
		addr(&P.src, argv[2], 0);
		addr(&P.dst, argv[3], atoi(argv[4]));
		random_uuid(P.sess_uuid);
		random_uuid(P.paths_uuid);
		name = "cells";
		r = run_cells(argv + 5, argc - 5);
	} else if (argc == 5 && !strcmp(argv[1], "client-loop")) {
		addr(&P.src, argv[2], 0);
		addr(&P.dst, argv[3], atoi(argv[4]));
		random_uuid(P.sess_uuid);
		random_uuid(P.paths_uuid);
		name = "client-loop";
		r = run_client_loop();
	} else if (argc >= 6 && !strcmp(argv[1], "client")) {
		addr(&P.src, argv[2], 0);
		addr(&P.dst, argv[3], atoi(argv[4]));
		P.hold = argc > 6 ? atoi(argv[6]) : 10;
		random_uuid(P.sess_uuid);
		random_uuid(P.paths_uuid);
		name = argv[5];
		r = run_case(name);
	} else {
		fprintf(stderr,
			"usage: rtrs-peer client SRC DST PORT CASE [HOLD]\n"
			"       rtrs-peer client-loop SRC DST PORT < CASES\n"
			"       rtrs-peer cells SRC DST PORT CELL...\n"
			"       rtrs-peer server ADDR PORT CASE\n"
			"       rtrs-peer server-cells ADDR PORT CELL...\n");
		return 2;
	}
	say("case %s: %s", name, r == 0 ? "ok" : r == 1 ? "FAILED" :
	    "peer error");
	teardown();
	return r;
}
