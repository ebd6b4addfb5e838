// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client checks of what the server sends.
 *
 * Everything a server puts on the wire passes one of these functions
 * before the client uses it: the connection response's private data, the
 * INFO_RSP with the server's chunks, the immediate data of an IO response
 * and the RKEY_RSP of always-invalidate, and on a 2.1 path the INFO_RSP
 * and the IO response.  They are pure: they read the bytes and the limits
 * they are given, write only their output arguments, take no lock and log
 * nothing.  The caller logs one rate-limited line and fails the connection
 * or the path.
 *
 * Errors, so that a test can tell which rule a message broke:
 *  -EMSGSIZE	a message is shorter than its layout
 *  -EPROTO	a magic, type or count the protocol does not allow here, or
 *		two fields that disagree
 *  -EPROTONOSUPPORT	another major protocol version
 *  -EREMOTEIO	a connection accepted with an errno set
 *  -ERANGE	a size, index or length outside the limits, or an errno
 *		outside [-MAX_ERRNO, 0]
 *
 * The KUnit suite tests/kunit/rtrs-clt-validate-test.c includes this file,
 * so none of it is exported.
 */
#include <linux/bits.h>
#include <linux/err.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/overflow.h>
#include <linux/stddef.h>

#include "rtrs-clt.h"

/*
 * The limits of a 2.0 path: every chunk must be addressable by the offset
 * bits of an immediate, all of them within 4 GiB.
 */
static int rtrs_clt_check_conn_rsp_2_0(const struct rtrs_msg_conn_rsp *msg,
				       size_t len, u32 queue_depth,
				       struct rtrs_clt_limits *lim)
{
	u32 qd, io, hdr;
	u64 chunk;

	if (len < sizeof(*msg))
		return -EMSGSIZE;
	if (msg->errno)
		return -EREMOTEIO;

	qd = le16_to_cpu(msg->queue_depth);
	io = le32_to_cpu(msg->max_io_size);
	hdr = le32_to_cpu(msg->max_hdr_size);
	chunk = (u64)io + hdr;
	if (!qd || (queue_depth && qd != queue_depth))
		return -ERANGE;
	if (!io || hdr < sizeof(struct rtrs_msg_rdma_read) +
	    sizeof(struct rtrs_sg_desc) || hdr > RTRS_CLT_MAX_HDR_SIZE ||
	    chunk > BIT_ULL(rtrs_imm_off_bits(qd)) || chunk * qd > U32_MAX)
		return -ERANGE;

	lim->version = le16_to_cpu(msg->version);
	lim->queue_depth = qd;
	lim->max_io_size = io;
	lim->max_hdr_size = hdr;
	lim->max_inline_size = 0;
	lim->max_read_buf = 0;
	lim->chunk_size = chunk;
	lim->off_bits = rtrs_imm_off_bits(qd);
	lim->flags = le32_to_cpu(msg->flags);
	return 0;
}

/* The limits of a 2.1 path, which has no chunks and no immediates. */
static int rtrs_clt_check_conn_rsp_2_1(const struct rtrs_msg_conn_rsp_2_1 *msg,
				       size_t len, u32 queue_depth,
				       struct rtrs_clt_limits *lim)
{
	u32 qd, io, hdr, inl, rdb = 0, flags = 0;

	/* Servers of earlier 2.1 builds send no max_read_buf, or no flags. */
	if (len < offsetofend(typeof(*msg), max_inline_size))
		return -EMSGSIZE;
	if (len >= offsetofend(typeof(*msg), max_read_buf))
		rdb = le32_to_cpu(msg->max_read_buf);
	if (len >= offsetofend(typeof(*msg), flags))
		flags = le32_to_cpu(msg->flags) & RTRS_CONN_RSP_MSG_TAGS;
	if (msg->errno)
		return -EREMOTEIO;

	qd = le16_to_cpu(msg->queue_depth);
	io = le32_to_cpu(msg->max_io_size);
	hdr = le32_to_cpu(msg->max_hdr_size);
	inl = le32_to_cpu(msg->max_inline_size);
	if (!qd || (queue_depth && qd != queue_depth))
		return -ERANGE;
	if (io < RTRS_CLT_MIN_IO_SIZE_2_1 ||
	    hdr < sizeof(struct rtrs_msg_io_req) ||
	    hdr > RTRS_CLT_MAX_HDR_SIZE || inl > io ||
	    inl > RTRS_CLT_MAX_INLINE_2_1)
		return -ERANGE;

	lim->version = le16_to_cpu(msg->version);
	lim->queue_depth = qd;
	lim->max_io_size = io;
	lim->max_hdr_size = hdr;
	lim->max_inline_size = inl;
	lim->max_read_buf = min(rdb, io);
	lim->chunk_size = 0;
	lim->off_bits = 0;
	lim->flags = flags;
	return 0;
}

/**
 * rtrs_clt_check_conn_rsp() - check the private data of a connection
 *	response and take the server's limits
 * @data: the private data; may be NULL when @len is 0
 * @len: its length
 * @max_minor: the protocol minor the connection asked for
 * @queue_depth: the queue depth the path's first connection learned, or 0
 *	for the first connection
 * @lim: where the limits go
 *
 * The magic and the protocol's major version must be ours, the minor at
 * most @max_minor (a mainline server answers 2.0 whatever it is asked);
 * the minor tells the layout of the rest: struct rtrs_msg_conn_rsp for
 * 2.0, struct rtrs_msg_conn_rsp_2_1 for 2.1.  The errno must be 0.  The
 * queue depth must not be 0, and must equal @queue_depth when that is set.
 *
 * 2.0: the header room must hold a READ header with one descriptor and be
 * at most %RTRS_CLT_MAX_HDR_SIZE, the IO size must not be 0, and a chunk
 * (IO size plus header room) must be addressable by the offset bits of an
 * immediate, with all chunks within 4 GiB.  Flags unknown to the client
 * and the reserved bytes are ignored.
 *
 * 2.1: the IO size must be at least %RTRS_CLT_MIN_IO_SIZE_2_1, the header
 * room must hold struct rtrs_msg_io_req and be at most
 * %RTRS_CLT_MAX_HDR_SIZE, and the inline size (0: no inline WRITE) at
 * most the IO size.  A response without max_read_buf (20 bytes) takes no
 * READ_BUF; a max_read_buf beyond the IO size counts as the IO size.  A
 * response without flags (24 bytes) has none; flags unknown to the client
 * are ignored.  @lim gets no chunk size or offset bits.
 *
 * Return: 0 with @lim filled; -EMSGSIZE, -EPROTO, -EPROTONOSUPPORT,
 * -EREMOTEIO or -ERANGE.
 */
int rtrs_clt_check_conn_rsp(const void *data, size_t len, u8 max_minor,
			    u32 queue_depth, struct rtrs_clt_limits *lim)
{
	const struct rtrs_msg_conn_rsp *msg = data;
	u16 version;

	/* Magic, version and errno come first in every version. */
	if (!msg || len < offsetofend(struct rtrs_msg_conn_rsp, errno))
		return -EMSGSIZE;
	if (le16_to_cpu(msg->magic) != RTRS_MAGIC)
		return -EPROTO;
	version = le16_to_cpu(msg->version);
	if (version >> 8 != RTRS_PROTO_VER_MAJOR)
		return -EPROTONOSUPPORT;
	if ((version & 0xff) > max_minor)
		return -EPROTO;

	switch (version & 0xff) {
	case RTRS_PROTO_VER_MINOR:
		return rtrs_clt_check_conn_rsp_2_0(msg, len, queue_depth, lim);
	case RTRS_PROTO_MINOR_2_1:
		return rtrs_clt_check_conn_rsp_2_1(data, len, queue_depth, lim);
	}
	return -EPROTO;
}

/* Check one chunk descriptor and fill the chunks it holds from *@chunk. */
static int rtrs_clt_check_info_desc(const struct rtrs_sg_desc *desc,
				    u32 queue_depth, u32 chunk_size,
				    struct rtrs_rbuf *rbufs, u32 *chunk)
{
	u64 addr = le64_to_cpu(desc->addr);
	u32 len = le32_to_cpu(desc->len);
	u32 rkey = le32_to_cpu(desc->key);
	u32 n = len / chunk_size;

	if (!len || len % chunk_size || n > queue_depth - *chunk)
		return -ERANGE;

	for (; n; n--, (*chunk)++, addr += chunk_size) {
		rbufs[*chunk].addr = addr;
		rbufs[*chunk].rkey = rkey;
	}
	return 0;
}

/**
 * rtrs_clt_check_info_rsp() - check an INFO_RSP and take the chunks
 * @buf: the received message
 * @len: bytes received
 * @queue_depth: chunks of the session
 * @chunk_size: bytes per chunk
 * @rbufs: @queue_depth entries, where address and rkey of each chunk go
 *
 * The descriptors must cover the chunks exactly: each a whole, non-zero
 * multiple of the chunk size, together @queue_depth chunks, as many
 * descriptors as divide @queue_depth.
 *
 * Return: 0 with @rbufs filled; -EMSGSIZE for a short message, -EPROTO for
 * another type or a descriptor count of 0 or not dividing @queue_depth,
 * -ERANGE for descriptors that do not cover the chunks exactly.  On error
 * @rbufs may be partly written.
 */
int rtrs_clt_check_info_rsp(const void *buf, size_t len, u32 queue_depth,
			    u32 chunk_size, struct rtrs_rbuf *rbufs)
{
	const struct rtrs_msg_info_rsp *msg = buf;
	u32 sg_cnt, chunk = 0, i;
	int err;

	if (len < sizeof(*msg))
		return -EMSGSIZE;
	if (le16_to_cpu(msg->type) != RTRS_MSG_INFO_RSP)
		return -EPROTO;
	sg_cnt = le16_to_cpu(msg->sg_cnt);
	if (!sg_cnt || queue_depth % sg_cnt)
		return -EPROTO;
	if (len < struct_size(msg, desc, sg_cnt))
		return -EMSGSIZE;

	for (i = 0; i < sg_cnt; i++) {
		err = rtrs_clt_check_info_desc(&msg->desc[i], queue_depth,
					       chunk_size, rbufs, &chunk);
		if (err)
			return err;
	}
	return chunk == queue_depth ? 0 : -ERANGE;
}

/**
 * rtrs_clt_check_info_rsp_2_1() - check the INFO_RSP of a 2.1 path
 * @buf: the received message
 * @len: bytes received
 *
 * A 2.1 server registers no memory for the client: its INFO_RSP carries
 * no descriptor.
 *
 * Return: 0; -EMSGSIZE for a short message, -EPROTO for another type or a
 * descriptor count other than 0.
 */
int rtrs_clt_check_info_rsp_2_1(const void *buf, size_t len)
{
	const struct rtrs_msg_info_rsp *msg = buf;

	if (len < sizeof(*msg))
		return -EMSGSIZE;
	if (le16_to_cpu(msg->type) != RTRS_MSG_INFO_RSP)
		return -EPROTO;
	if (msg->sg_cnt)
		return -EPROTO;
	return 0;
}

/**
 * rtrs_clt_check_io_rsp() - check and decode the immediate of an IO
 *	response
 * @imm: the immediate data, in host order
 * @queue_depth: requests of the session
 * @msg_id: where the id of the request responded to goes
 * @errno: where the server's response goes: 0 or a negative errno
 *
 * Return: 0; -EPROTO for an immediate of another type than
 * %RTRS_IO_RSP_IMM or %RTRS_IO_RSP_W_INV_IMM, -ERANGE for a message id
 * beyond @queue_depth.
 */
int rtrs_clt_check_io_rsp(u32 imm, u32 queue_depth, u32 *msg_id, int *errno)
{
	if (rtrs_imm_type(imm) != RTRS_IO_RSP_IMM &&
	    rtrs_imm_type(imm) != RTRS_IO_RSP_W_INV_IMM)
		return -EPROTO;
	rtrs_io_rsp_decode(rtrs_imm_payload(imm), msg_id, errno);
	return *msg_id < queue_depth ? 0 : -ERANGE;
}

/**
 * rtrs_clt_check_rkey_rsp() - check an RKEY_RSP and its immediate
 * @buf: the received message
 * @len: bytes received
 * @imm: the immediate data that came with it, in host order
 * @queue_depth: requests of the session
 * @msg_id: where the id of the request responded to goes
 * @errno: where the server's response goes: 0 or a negative errno
 * @rkey: where the chunk's new rkey goes
 *
 * The immediate is checked as by rtrs_clt_check_io_rsp(), and the message's
 * buffer id must be the request it responds to.
 *
 * Return: 0; -EMSGSIZE for a short message, -EPROTO for another type, a
 * wrong immediate or a buffer id that is not the message id, -ERANGE for a
 * message id beyond @queue_depth.
 */
int rtrs_clt_check_rkey_rsp(const void *buf, size_t len, u32 imm,
			    u32 queue_depth, u32 *msg_id, int *errno,
			    u32 *rkey)
{
	const struct rtrs_msg_rkey_rsp *msg = buf;
	int err;

	if (len < sizeof(*msg))
		return -EMSGSIZE;
	if (le16_to_cpu(msg->type) != RTRS_MSG_RKEY_RSP)
		return -EPROTO;
	err = rtrs_clt_check_io_rsp(imm, queue_depth, msg_id, errno);
	if (err)
		return err;
	if (le16_to_cpu(msg->buf_id) != *msg_id)
		return -EPROTO;
	*rkey = le32_to_cpu(msg->rkey);
	return 0;
}

/**
 * rtrs_clt_check_io_rsps_2_1() - check the responses of one SEND, 2.1
 * @buf: the received message
 * @len: bytes received
 * @max: responses the receive buffer holds: %RTRS_IO_RSP_PACK_MAX where
 *	the connection asked for packed responses, else 1
 * @inval: the SEND invalidated a memory region
 * @queue_depth: requests of the path
 * @tags: the path tags its message ids (%RTRS_CONN_RSP_MSG_TAGS)
 *
 * A SEND brings 1 to @max struct rtrs_msg_io_rsp back to back, each
 * checked by rtrs_clt_check_io_rsp_2_1(); one that invalidates brings one.
 *
 * Return: the number of responses; -EMSGSIZE when @len is not a whole
 * number of 1 to @max of them, -EPROTO for an invalidating SEND of more
 * than one, else the first error of a response's check.
 */
int rtrs_clt_check_io_rsps_2_1(const void *buf, size_t len, u32 max,
			       bool inval, u32 queue_depth, bool tags)
{
	const size_t sz = sizeof(struct rtrs_msg_io_rsp);
	u32 i, n = len / sz, msg_id;
	int err, errno;

	if (!n || len % sz || n > max)
		return -EMSGSIZE;
	if (inval && n > 1)
		return -EPROTO;
	for (i = 0; i < n; i++) {
		err = rtrs_clt_check_io_rsp_2_1(buf + i * sz, sz, queue_depth,
						tags, &msg_id, &errno);
		if (err)
			return err;
	}
	return n;
}

/**
 * rtrs_clt_check_io_rsp_2_1() - check and decode the response of a 2.1 path
 * @buf: the received message
 * @len: bytes received
 * @queue_depth: requests of the path
 * @tags: the path tags its message ids (%RTRS_CONN_RSP_MSG_TAGS)
 * @msg_id: where the id of the request responded to goes, its tag included
 * @errno: where the server's response goes: 0 or a negative errno
 *
 * The errno is two's complement in 16 bits, and must be 0 or a negative
 * errno, down to -%MAX_ERRNO.  Once the type is checked, @msg_id and
 * @errno are set even when out of range, for the log line.  With @tags,
 * the slot of the message id (rtrs_msg_slot()) must be below
 * @queue_depth, and any tag goes; without, the message id itself.
 *
 * Return: 0; -EMSGSIZE for a short message, -EPROTO for another type than
 * %RTRS_MSG_IO_RSP, -ERANGE for a message id out of range or an errno
 * above 0 or below -%MAX_ERRNO.
 */
int rtrs_clt_check_io_rsp_2_1(const void *buf, size_t len, u32 queue_depth,
			      bool tags, u32 *msg_id, int *errno)
{
	const struct rtrs_msg_io_rsp *msg = buf;

	if (len < sizeof(*msg))
		return -EMSGSIZE;
	if (le16_to_cpu(msg->type) != RTRS_MSG_IO_RSP)
		return -EPROTO;
	*msg_id = le32_to_cpu(msg->msg_id);
	*errno = (s16)le16_to_cpu(msg->errno);
	if ((tags ? rtrs_msg_slot(*msg_id) : *msg_id) >= queue_depth)
		return -ERANGE;
	if (*errno > 0 || *errno < -MAX_ERRNO)
		return -ERANGE;
	return 0;
}
