// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server checks of what the client sends.
 *
 * Everything a client puts on the wire passes one of these functions
 * before the server uses it: the connect request's private data, the
 * INFO_REQ, the immediate data of a request and the READ or WRITE header
 * in the chunk, and on a 2.1 path the SEND of a request.  They are pure:
 * they read the bytes and the limits they are given, write only their
 * output arguments, take no lock and log nothing.  The caller logs one
 * rate-limited line and rejects the connection or closes the path.
 *
 * Errors, so that a test can tell which rule a message broke:
 *  -EMSGSIZE	a message, or a header in the room left for it, is shorter
 *		than its layout, or than the lengths its header gives
 *  -EPROTO	a type, flag or count the protocol does not allow here, or
 *		bytes after the end of a message that the protocol does not
 *		define
 *  -ERANGE	an index, offset or length outside the negotiated limits, or
 *		a client memory region whose end, address plus length, does
 *		not fit in 64 bits
 *  -ENAMETOOLONG, -EINVAL	an INFO_REQ path name that is not
 *		terminated, or that is empty or holds '/' or '.'
 * The connect request is the exception: its error goes back to the client
 * in the reject, so it keeps the values the server always sent there,
 * -EINVAL and -EPROTONOSUPPORT.
 *
 * The KUnit suite tests/kunit/rtrs-srv-validate-test.c includes this file,
 * so none of it is exported.
 */
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/string.h>

#include "rtrs-srv.h"

/**
 * rtrs_srv_check_conn_req() - check the private data of a connect request
 * @data: the private data; may be NULL when @len is 0
 * @len: its length
 *
 * The magic and the protocol's major version must be ours (any minor is
 * accepted); the connection id must be below the connection count, which
 * is 1 to %RTRS_SRV_MAX_CONS.  The flags other than
 * %RTRS_CONN_REQ_FIRST_CONN, %RTRS_CONN_REQ_PACKED_RSP and
 * %RTRS_CONN_REQ_MSG_TAGS, and the reserved bytes, are ignored, as the
 * protocol says.
 *
 * Return: 0; -EINVAL for a short request, a wrong magic or a bad
 * connection id or count; -EPROTONOSUPPORT for another major version.
 */
int rtrs_srv_check_conn_req(const void *data, size_t len)
{
	const struct rtrs_msg_conn_req *req = data;
	u16 cid, cid_num;

	if (len < sizeof(*req) || le16_to_cpu(req->magic) != RTRS_MAGIC)
		return -EINVAL;
	if (le16_to_cpu(req->version) >> 8 != RTRS_PROTO_VER_MAJOR)
		return -EPROTONOSUPPORT;
	cid = le16_to_cpu(req->cid);
	cid_num = le16_to_cpu(req->cid_num);
	if (!cid_num || cid_num > RTRS_SRV_MAX_CONS || cid >= cid_num)
		return -EINVAL;
	return 0;
}

/**
 * rtrs_srv_check_info_req() - check an INFO_REQ and take the path name
 * @buf: the received message
 * @len: bytes received
 * @name: where the path name goes
 * @size: size of @name
 *
 * The path name names a sysfs directory: it must be NUL-terminated within
 * its array, not empty, and hold neither '/' nor '.'.
 *
 * Return: 0 with the name in @name; -EMSGSIZE for a short message,
 * -EPROTO for another type, -ENAMETOOLONG for a name that is not
 * terminated or does not fit @size, -EINVAL for an invalid name.
 */
int rtrs_srv_check_info_req(const void *buf, size_t len, char *name,
			    size_t size)
{
	const struct rtrs_msg_info_req *req = buf;

	if (len < sizeof(*req))
		return -EMSGSIZE;
	if (le16_to_cpu(req->type) != RTRS_MSG_INFO_REQ)
		return -EPROTO;
	if (!memchr(req->pathname, '\0', sizeof(req->pathname)))
		return -ENAMETOOLONG;
	if (strscpy(name, req->pathname, size) < 0)
		return -ENAMETOOLONG;
	if (!name[0] || strpbrk(name, "/."))
		return -EINVAL;
	return 0;
}

/**
 * rtrs_srv_msg_of_imm() - the kind of message an immediate is
 * @imm: the immediate data, in CPU order
 * @sess_2_1: the session speaks protocol 2.1
 *
 * A client sends heartbeats and heartbeat acks, and a 2.0 client its IO
 * requests; any other type, the server's own IO responses included, is
 * %RTRS_SRV_MSG_OTHER.  A 2.1 client sends its requests as SENDs, and
 * its session has no chunk for 2.0's request by immediate: on any of
 * its connections, that immediate is %RTRS_SRV_MSG_OTHER too.
 *
 * Return: the kind.
 */
enum rtrs_srv_msg rtrs_srv_msg_of_imm(u32 imm, bool sess_2_1)
{
	switch (rtrs_imm_type(imm)) {
	case RTRS_IO_REQ_IMM:
		return sess_2_1 ? RTRS_SRV_MSG_OTHER : RTRS_SRV_MSG_IO_REQ;
	case RTRS_HB_MSG_IMM:
		return RTRS_SRV_MSG_HB;
	case RTRS_HB_ACK_IMM:
		return RTRS_SRV_MSG_HB_ACK;
	}
	return RTRS_SRV_MSG_OTHER;
}

/*
 * What each message does in each state of its path, on any connection:
 * Documentation/rtrs.rst, "Messages and path states", is this table.
 * Before the INFO_REQ a client sends nothing else: heartbeats start, on
 * both sides, only once the path is connected, and IO only after the
 * INFO_RSP.  Only the INFO_REQ comes before connection 0 exists in every
 * case; it lands in connection 0's first receive, so a later connection
 * cannot carry one.  Once the path is closing nothing is taken and
 * nothing logged: the close is under way, for a reason already given.
 */
#define T RTRS_SRV_TAKE
#define D RTRS_SRV_DROP
#define R RTRS_SRV_REFUSE
static const u8 rtrs_srv_verdicts[RTRS_SRV_MSG_KINDS][RTRS_SRV_CLOSED + 1] = {
	/*			  CONNECTING CONNECTED CLOSING CLOSED */
	[RTRS_SRV_MSG_INFO_REQ]	= { T,	     R,	       D,      D },
	[RTRS_SRV_MSG_IO_REQ]	= { R,	     T,	       D,      D },
	[RTRS_SRV_MSG_HB]	= { R,	     T,	       D,      D },
	[RTRS_SRV_MSG_HB_ACK]	= { R,	     T,	       D,      D },
	[RTRS_SRV_MSG_OTHER]	= { R,	     R,	       D,      D },
};

#undef T
#undef D
#undef R

/**
 * rtrs_srv_msg_verdict() - what a message does in the state of its path
 * @msg: the kind of message
 * @state: the state of the path it came in on
 *
 * Return: the verdict of the table above; %RTRS_SRV_REFUSE for a kind or
 * state out of range.
 */
enum rtrs_srv_verdict rtrs_srv_msg_verdict(enum rtrs_srv_msg msg,
					   enum rtrs_srv_state state)
{
	if (msg >= RTRS_SRV_MSG_KINDS || state > RTRS_SRV_CLOSED)
		return RTRS_SRV_REFUSE;
	return rtrs_srv_verdicts[msg][state];
}

/**
 * rtrs_srv_msg_name() - a message kind, for the log
 * @msg: the kind
 *
 * Return: a constant string.
 */
const char *rtrs_srv_msg_name(enum rtrs_srv_msg msg)
{
	static const char * const names[] = {
		[RTRS_SRV_MSG_INFO_REQ]	= "INFO_REQ",
		[RTRS_SRV_MSG_IO_REQ]	= "IO request",
		[RTRS_SRV_MSG_HB]	= "heartbeat",
		[RTRS_SRV_MSG_HB_ACK]	= "heartbeat ack",
		[RTRS_SRV_MSG_OTHER]	= "message of no client",
	};

	return msg < ARRAY_SIZE(names) ? names[msg] : "?";
}

/**
 * rtrs_srv_check_io_req() - decode and check the payload of an IO request
 * @payload: rtrs_imm_payload() of the immediate
 * @off_bits: rtrs_imm_off_bits() of @queue_depth
 * @queue_depth: chunks of the session
 * @chunk_size: bytes per chunk
 * @id: the chunk id, set even when it is out of range
 * @off: the header offset, set even when it is out of range
 *
 * Return: 0, or -ERANGE when @id is not below @queue_depth or @off is not
 * within the chunk.
 */
int rtrs_srv_check_io_req(u32 payload, unsigned int off_bits, u32 queue_depth,
			  u32 chunk_size, u32 *id, u32 *off)
{
	rtrs_io_req_decode(payload, off_bits, id, off);
	if (*id >= queue_depth || *off >= chunk_size)
		return -ERANGE;
	return 0;
}

static int rtrs_srv_check_write(const void *hdr, size_t room,
				struct rtrs_srv_io_hdr *io)
{
	struct rtrs_msg_rdma_write wr;

	if (room < sizeof(wr))
		return -EMSGSIZE;
	memcpy(&wr, hdr, sizeof(wr));
	io->dir = WRITE;
	io->usr_len = le16_to_cpu(wr.usr_len);
	return 0;
}

static int rtrs_srv_check_read_desc(const struct rtrs_sg_desc *desc,
				    u32 chunk_size, u32 max_io)
{
	u32 len = le32_to_cpu(desc->len);

	/* The data goes out of the chunk, from its start. */
	if (!len || len > max_io || len > chunk_size)
		return -ERANGE;
	return 0;
}

static int rtrs_srv_check_read(const void *hdr, size_t room, u32 chunk_size,
			       u32 max_io, struct rtrs_srv_io_hdr *io)
{
	struct rtrs_msg_rdma_read rd;
	u16 flags;

	if (room < sizeof(rd))
		return -EMSGSIZE;
	memcpy(&rd, hdr, sizeof(rd));
	io->dir = READ;
	io->usr_len = le16_to_cpu(rd.usr_len);
	io->sg_cnt = le16_to_cpu(rd.sg_cnt);
	flags = le16_to_cpu(rd.flags);
	if (io->sg_cnt > 1 || flags & ~RTRS_MSG_NEED_INVAL_F)
		return -EPROTO;
	if (!io->sg_cnt)
		/* Nothing to invalidate without a descriptor. */
		return flags ? -EPROTO : 0;

	if (room < sizeof(rd) + sizeof(io->desc))
		return -EMSGSIZE;
	memcpy(&io->desc, hdr + sizeof(rd), sizeof(io->desc));
	io->need_inval = flags & RTRS_MSG_NEED_INVAL_F;
	return rtrs_srv_check_read_desc(&io->desc, chunk_size, max_io);
}

/**
 * rtrs_srv_check_io_hdr() - copy and check the header of an IO request
 * @chunk: the chunk the request was written to
 * @chunk_size: its size
 * @off: offset of the header in the chunk, from the immediate
 * @max_io: largest data length of one IO
 * @io: the checked header
 *
 * The chunk holds the data, then the user message, then the header at
 * @off; the header and a READ's descriptor must fit before the chunk's
 * end.  Each byte of the chunk is read once, into @io, so a client that
 * keeps writing to the chunk cannot change what was checked.
 *
 * Return: 0 or the error of the first rule broken: -ERANGE for an offset
 * outside the chunk, a user message longer than @off, data longer than
 * @max_io, or a READ descriptor of length 0 or beyond @max_io or the
 * chunk; -EMSGSIZE for a header that does not fit; -EPROTO for an unknown
 * type, a READ with more than one descriptor, with unknown flags, or
 * asking to invalidate without a descriptor.
 */
int rtrs_srv_check_io_hdr(const void *chunk, u32 chunk_size, u32 off,
			  u32 max_io, struct rtrs_srv_io_hdr *io)
{
	const void *hdr = chunk + off;
	struct rtrs_msg_rdma_hdr h;
	size_t room;
	int err;

	memset(io, 0, sizeof(*io));
	if (off >= chunk_size)
		return -ERANGE;
	room = chunk_size - off;
	if (room < sizeof(h))
		return -EMSGSIZE;
	memcpy(&h, hdr, sizeof(h));
	switch (le16_to_cpu(h.type)) {
	case RTRS_MSG_WRITE:
		err = rtrs_srv_check_write(hdr, room, io);
		break;
	case RTRS_MSG_READ:
		err = rtrs_srv_check_read(hdr, room, chunk_size, max_io, io);
		break;
	default:
		err = -EPROTO;
		break;
	}
	if (err)
		return err;
	if (io->usr_len > off || off - io->usr_len > max_io)
		return -ERANGE;
	io->data_len = off - io->usr_len;
	return 0;
}

/*
 * Protocol 2.1: a request is one SEND into a receive buffer of the
 * server, its header at the start.
 */

/*
 * Rules of every 2.1 request, once its header is in @io: header and user
 * message within @room and the SEND, a message id of a slot below the
 * queue depth.  A tagged message id leaves its tag in @io->tag.
 */
static int rtrs_srv_check_usr_2_1(size_t hdr_size, size_t len, u64 room,
				  const struct rtrs_srv_limits_2_1 *lim,
				  struct rtrs_srv_io_2_1 *io)
{
	u64 usr_end = (u64)hdr_size + io->usr_len;

	if (usr_end > room)
		return -ERANGE;
	if (usr_end > len)
		return -EMSGSIZE;
	if (lim->tags) {
		io->tag = rtrs_msg_tag(io->msg_id);
		io->msg_id = rtrs_msg_slot(io->msg_id);
	}
	if (io->msg_id >= lim->queue_depth)
		return -ERANGE;
	return 0;
}

/* A READ_REQ or WRITE_REQ: the data stays in the client's memory region. */
static int rtrs_srv_check_mr_req_2_1(const void *buf, size_t len,
				     const struct rtrs_srv_limits_2_1 *lim,
				     struct rtrs_srv_io_2_1 *io)
{
	struct rtrs_msg_io_req req;
	u64 end;
	int err;

	if (len < sizeof(req))
		return -EMSGSIZE;
	memcpy(&req, buf, sizeof(req));
	io->usr_len = le16_to_cpu(req.usr_len);
	io->msg_id = le32_to_cpu(req.msg_id);
	io->data_len = le32_to_cpu(req.desc.len);
	io->addr = le64_to_cpu(req.desc.addr);
	io->rkey = le32_to_cpu(req.desc.key);
	/* No inline data: the whole receive buffer is the request's. */
	err = rtrs_srv_check_usr_2_1(sizeof(req), len,
				     (u64)lim->max_hdr_size +
				     lim->max_inline_size, lim, io);
	if (err)
		return err;
	/* A request with no data names no region: length, address, key 0. */
	if (!io->data_len && (io->addr || io->rkey))
		return -ERANGE;
	if (io->data_len > lim->max_io_size)
		return -ERANGE;
	/* Nothing the protocol defines follows the user message. */
	if (len != sizeof(req) + io->usr_len)
		return -EPROTO;
	if (check_add_overflow(io->addr, (u64)io->data_len, &end))
		return -ERANGE;
	return 0;
}

/*
 * A READ_BUF: a READ_REQ of 1 to max_read_buf bytes, on a path whose
 * connection response announced it takes them.
 */
static int rtrs_srv_check_read_buf_2_1(const void *buf, size_t len,
				       const struct rtrs_srv_limits_2_1 *lim,
				       struct rtrs_srv_io_2_1 *io)
{
	int err;

	if (!lim->max_read_buf)
		return -EPROTO;
	err = rtrs_srv_check_mr_req_2_1(buf, len, lim, io);
	if (err)
		return err;
	if (!io->data_len || io->data_len > lim->max_read_buf)
		return -ERANGE;
	return 0;
}

/* A WRITE_INLINE: the data fills the SEND from max_hdr_size to its end. */
static int rtrs_srv_check_inline_2_1(const void *buf, size_t len,
				     const struct rtrs_srv_limits_2_1 *lim,
				     struct rtrs_srv_io_2_1 *io)
{
	struct rtrs_msg_write_inline inl;
	u64 end;
	int err;

	if (len < sizeof(inl))
		return -EMSGSIZE;
	memcpy(&inl, buf, sizeof(inl));
	io->usr_len = le16_to_cpu(inl.usr_len);
	io->msg_id = le32_to_cpu(inl.msg_id);
	io->data_len = le32_to_cpu(inl.data_len);
	err = rtrs_srv_check_usr_2_1(sizeof(inl), len, lim->max_hdr_size, lim,
				     io);
	if (err)
		return err;
	if (!io->data_len || io->data_len > lim->max_inline_size)
		return -ERANGE;
	end = (u64)lim->max_hdr_size + io->data_len;
	if (len < end)
		return -EMSGSIZE;
	if (len > end)
		return -EPROTO;
	return 0;
}

/**
 * rtrs_srv_check_io_req_2_1() - copy and check a request of a 2.1 path
 * @buf: the received SEND
 * @len: bytes received
 * @lim: the limits of the path
 * @io: the checked request
 *
 * Every request is its header, then the user message; the two fit in
 * @lim->max_hdr_size for an inline WRITE, in @lim->max_hdr_size plus
 * @lim->max_inline_size (the whole receive buffer) for the others, and
 * the message id is below @lim->queue_depth; where @lim->tags, its slot
 * is (rtrs_msg_slot()), and @io->msg_id gets the slot, @io->tag the tag.
 *
 * A READ_REQ or WRITE_REQ ends right after the user message: its data,
 * up to @lim->max_io_size bytes, is in the client's memory region, whose
 * end, address plus length, must fit in 64 bits.  One with no data (rnbd's
 * flushes and closes) names no region: address and key are 0 as well.
 * A READ_BUF follows the same rules, with 1 to @lim->max_read_buf bytes
 * of data, and only when that is not 0.
 *
 * A WRITE_INLINE's data, 1 to @lim->max_inline_size bytes, starts at
 * offset @lim->max_hdr_size and ends where the SEND ends.
 *
 * The header is copied out of @buf once, before it is checked.
 *
 * Return: 0 with @io filled, or the error of the first rule broken:
 * -EMSGSIZE for a SEND shorter than its header, its user message or its
 * inline data; -EPROTO for a type other than %RTRS_MSG_READ_REQ,
 * %RTRS_MSG_WRITE_REQ, %RTRS_MSG_WRITE_INLINE and %RTRS_MSG_READ_BUF (that
 * one only when @lim->max_read_buf is not 0), or a SEND longer than its
 * request; -ERANGE for a header and user message beyond
 * @lim->max_hdr_size, a message id not below @lim->queue_depth, a data
 * length beyond its limit (or of 0 for an inline WRITE or a READ_BUF, or
 * of 0 with a region named), or a memory region whose end does not fit
 * in 64 bits.  On
 * error @io holds what was read so far.
 */
int rtrs_srv_check_io_req_2_1(const void *buf, size_t len,
			      const struct rtrs_srv_limits_2_1 *lim,
			      struct rtrs_srv_io_2_1 *io)
{
	struct rtrs_msg_rdma_hdr h;

	memset(io, 0, sizeof(*io));
	if (len < sizeof(h))
		return -EMSGSIZE;
	memcpy(&h, buf, sizeof(h));
	io->type = le16_to_cpu(h.type);
	switch (io->type) {
	case RTRS_MSG_READ_REQ:
	case RTRS_MSG_WRITE_REQ:
		return rtrs_srv_check_mr_req_2_1(buf, len, lim, io);
	case RTRS_MSG_WRITE_INLINE:
		return rtrs_srv_check_inline_2_1(buf, len, lim, io);
	case RTRS_MSG_READ_BUF:
		return rtrs_srv_check_read_buf_2_1(buf, len, lim, io);
	}
	return -EPROTO;
}
