/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, private header.
 *
 * The RTRS protocol 2.0 wire format: connection private data, control
 * messages, IO message headers and the 32-bit immediate data.  Every
 * multi-byte field is little-endian on the wire; every struct has its size
 * and field offsets pinned by static_assert, so a layout change is a build
 * error, not an interop bug.
 */
#ifndef RTRS_PRI_H
#define RTRS_PRI_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/types.h>
#include <linux/uuid.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rtrs-compat.h"

#define RTRS_PROTO_VER_MAJOR	2
#define RTRS_PROTO_VER_MINOR	0
#define RTRS_PROTO_VER		((RTRS_PROTO_VER_MAJOR << 8) | RTRS_PROTO_VER_MINOR)
/* The minor of protocol 2.1, our own (Documentation/rtrs.rst). */
#define RTRS_PROTO_MINOR_2_1	1
/*
 * The highest minor this build speaks, and so asks for and agrees to by
 * default: 2.1.  A module parameter of each side (max_proto_minor) may
 * keep it to 2.0.
 */
#define RTRS_PROTO_MINOR_MAX	RTRS_PROTO_MINOR_2_1
#define RTRS_MAGIC		0x1BBD

/* Protocol limits. */
#define RTRS_MAX_PATHS		128	/* paths in one session */
#define RTRS_MAX_QUEUE_DEPTH	65535	/* queue_depth is an __le16 */
#define RTRS_MIN_CHUNK_SIZE	8192
#define RTRS_HB_INTERVAL_MS	5000
#define RTRS_HB_MISSED_MAX	5

/*
 * Transport retries of an RC connection's work requests.  rxe reads 7
 * like the RNR retry count, as "retry forever", and a connection whose
 * peer stopped responding, or whose QP rxe wedged, would then hang its
 * requests without an error; 6 turns that into a failed path.
 */
#define RTRS_RETRY_COUNT	6
/*
 * Local ACK timeout of RC QPs, 4.096 us << 18: about a second.  Both
 * sides set it, so a slow host (or an emulated one) does not retransmit
 * in the tens of milliseconds RoCE's default packet lifetime allows.
 */
#define RTRS_ACK_TIMEOUT	18

/* Offset of a message's field, for the layout assertions. */
#define RTRS_WIRE_AT(type, field, off) \
	static_assert(offsetof(type, field) == (off), #type "." #field)
#define RTRS_WIRE_SIZE(type, size) \
	static_assert(sizeof(type) == (size), "sizeof(" #type ")")

/**
 * enum rtrs_msg_types - type of a control message or IO header
 * @RTRS_MSG_INFO_REQ: client asks for the server's chunk descriptors
 * @RTRS_MSG_INFO_RSP: server responds with its chunk descriptors
 * @RTRS_MSG_WRITE: header of a WRITE request, at the tail of the chunk
 * @RTRS_MSG_READ: header of a READ request, at the tail of the chunk
 * @RTRS_MSG_RKEY_RSP: server announces the new rkey of a re-keyed chunk
 * @RTRS_MSG_READ_REQ: 2.1, a READ request; the server writes the data into
 *	the client's memory region
 * @RTRS_MSG_WRITE_REQ: 2.1, a WRITE request whose data the server reads
 *	from the client's memory region
 * @RTRS_MSG_WRITE_INLINE: 2.1, a WRITE request that carries its data
 * @RTRS_MSG_IO_RSP: 2.1, the server's response to a request
 * @RTRS_MSG_READ_BUF: 2.1, a small READ request; the server writes the
 *	data, and the response as the immediate, into the client's read
 *	buffer with one RDMA WRITE WITH IMMEDIATE
 *
 * Carried in the first __le16 of every message.  Types 0 to 4 are
 * protocol 2.0's; 5 to 9 exist only on a path that agreed on 2.1.
 */
enum rtrs_msg_types {
	RTRS_MSG_INFO_REQ	= 0,
	RTRS_MSG_INFO_RSP	= 1,
	RTRS_MSG_WRITE		= 2,
	RTRS_MSG_READ		= 3,
	RTRS_MSG_RKEY_RSP	= 4,
	RTRS_MSG_READ_REQ	= 5,
	RTRS_MSG_WRITE_REQ	= 6,
	RTRS_MSG_WRITE_INLINE	= 7,
	RTRS_MSG_IO_RSP		= 8,
	RTRS_MSG_READ_BUF	= 9,
};

/**
 * enum rtrs_msg_flags - flags of a READ header and of the connection response
 * @RTRS_MSG_NEED_INVAL_F: in a READ header, the client wants its MR
 *	invalidated by the response (SEND WITH INVALIDATE).
 * @RTRS_MSG_NEW_RKEY_F: in the connection response, the server re-keys each
 *	chunk per IO and announces the new rkey with RTRS_MSG_RKEY_RSP
 *	(always-invalidate).
 */
enum rtrs_msg_flags {
	RTRS_MSG_NEED_INVAL_F	= BIT(0),
	RTRS_MSG_NEW_RKEY_F	= BIT(1),
};

/*
 * Bits of rtrs_msg_conn_req.flags.  RTRS_CONN_REQ_PACKED_RSP, in a request
 * for 2.1: the receive buffers of this connection hold
 * RTRS_IO_RSP_PACK_MAX responses, and the server may pack up to that many
 * struct rtrs_msg_io_rsp into one SEND (see there).  RTRS_CONN_REQ_MSG_TAGS,
 * in a request for 2.1: the client would tag its message ids (see
 * rtrs_msg_id()); it does so once the server says it echoes them
 * (RTRS_CONN_RSP_MSG_TAGS).  A 2.0 server, and a server that answers 2.0,
 * ignores both.
 */
#define RTRS_CONN_REQ_FIRST_CONN	BIT(0)
#define RTRS_CONN_REQ_PACKED_RSP	BIT(1)
#define RTRS_CONN_REQ_MSG_TAGS		BIT(2)
#define RTRS_IO_RSP_PACK_MAX		16

/**
 * struct rtrs_sg_desc - a remote buffer
 * @addr: address the peer may RDMA-write to or read from
 * @key: rkey of the buffer
 * @len: length of the buffer in bytes
 */
struct rtrs_sg_desc {
	__le64	addr;
	__le32	key;
	__le32	len;
};

RTRS_WIRE_SIZE(struct rtrs_sg_desc, 16);
RTRS_WIRE_AT(struct rtrs_sg_desc, addr, 0);
RTRS_WIRE_AT(struct rtrs_sg_desc, key, 8);
RTRS_WIRE_AT(struct rtrs_sg_desc, len, 12);

/**
 * struct rtrs_msg_conn_req - connection request, client to server
 * @__cma_version: owned by the RDMA CM (zeroed for AF_IB); send 0
 * @__ip_version: owned by the RDMA CM; must be 0 on the sender
 * @magic: %RTRS_MAGIC
 * @version: %RTRS_PROTO_VER
 * @cid: index of this connection within its path, below @cid_num
 * @cid_num: number of connections of the path
 * @recon_cnt: how often the client has reconnected this path
 * @sess_uuid: identifies the path
 * @paths_uuid: identifies the session (all paths of one client session)
 * @flags: %RTRS_CONN_REQ_FIRST_CONN on the first connection of a new
 *	session; %RTRS_CONN_REQ_PACKED_RSP when the connection takes packed
 *	2.1 responses; the other bits are sent as 0 and ignored
 * @reserved: sent as 0, ignored
 *
 * Travels in the private data of the RDMA CM connect request, which carries
 * at most 56 bytes over RoCE/IB.
 */
struct rtrs_msg_conn_req {
	u8	__cma_version;
	u8	__ip_version;
	__le16	magic;
	__le16	version;
	__le16	cid;
	__le16	cid_num;
	__le16	recon_cnt;
	uuid_t	sess_uuid;
	uuid_t	paths_uuid;
	u8	flags;
	u8	reserved[11];
};

RTRS_WIRE_SIZE(struct rtrs_msg_conn_req, 56);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, magic, 2);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, version, 4);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, cid, 6);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, cid_num, 8);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, recon_cnt, 10);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, sess_uuid, 12);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, paths_uuid, 28);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, flags, 44);
RTRS_WIRE_AT(struct rtrs_msg_conn_req, reserved, 45);

/**
 * struct rtrs_msg_conn_rsp - connection response, server to client
 * @magic: %RTRS_MAGIC
 * @version: %RTRS_PROTO_VER
 * @errno: 0 on accept; on reject a negative errno, two's complement
 * @queue_depth: number of chunks, and so of IOs in flight, of the session
 * @max_io_size: largest data length of one IO
 * @max_hdr_size: largest user message plus IO header of one IO
 * @flags: &enum rtrs_msg_flags (%RTRS_MSG_NEW_RKEY_F)
 * @reserved: sent as 0, ignored
 *
 * Travels in the private data of the RDMA CM accept or reject.
 */
struct rtrs_msg_conn_rsp {
	__le16	magic;
	__le16	version;
	__le16	errno;
	__le16	queue_depth;
	__le32	max_io_size;
	__le32	max_hdr_size;
	__le32	flags;
	u8	reserved[36];
};

RTRS_WIRE_SIZE(struct rtrs_msg_conn_rsp, 56);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, version, 2);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, errno, 4);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, queue_depth, 6);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, max_io_size, 8);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, max_hdr_size, 12);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, flags, 16);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp, reserved, 20);

/**
 * struct rtrs_msg_info_req - path information, client to server
 * @type: %RTRS_MSG_INFO_REQ
 * @pathname: the client's name for this path; NUL-terminated within the array
 * @reserved: sent as 0, ignored
 *
 * Sent once on the admin connection (cid 0) after every connection of the
 * path is established.
 */
struct rtrs_msg_info_req {
	__le16	type;
	u8	pathname[NAME_MAX];
	u8	reserved[15];
};

RTRS_WIRE_SIZE(struct rtrs_msg_info_req, 272);
RTRS_WIRE_AT(struct rtrs_msg_info_req, pathname, 2);
RTRS_WIRE_AT(struct rtrs_msg_info_req, reserved, 257);

/**
 * struct rtrs_msg_info_rsp - the server's chunks, server to client
 * @type: %RTRS_MSG_INFO_RSP
 * @sg_cnt: number of entries in @desc
 * @reserved: sent as 0, ignored
 * @desc: memory regions holding the chunks, in chunk order; each is a
 *	whole multiple of the chunk size
 */
struct rtrs_msg_info_rsp {
	__le16	type;
	__le16	sg_cnt;
	u8	reserved[4];
	struct rtrs_sg_desc desc[];
};

RTRS_WIRE_SIZE(struct rtrs_msg_info_rsp, 8);
RTRS_WIRE_AT(struct rtrs_msg_info_rsp, sg_cnt, 2);
RTRS_WIRE_AT(struct rtrs_msg_info_rsp, desc, 8);

/**
 * struct rtrs_msg_rkey_rsp - new rkey of a chunk, server to client
 * @type: %RTRS_MSG_RKEY_RSP
 * @buf_id: chunk (message) id
 * @rkey: rkey the client must use for that chunk from now on
 */
struct rtrs_msg_rkey_rsp {
	__le16	type;
	__le16	buf_id;
	__le32	rkey;
};

RTRS_WIRE_SIZE(struct rtrs_msg_rkey_rsp, 8);
RTRS_WIRE_AT(struct rtrs_msg_rkey_rsp, buf_id, 2);
RTRS_WIRE_AT(struct rtrs_msg_rkey_rsp, rkey, 4);

/**
 * struct rtrs_msg_rdma_read - header of a READ request
 * @type: %RTRS_MSG_READ
 * @usr_len: length of the user message that precedes this header
 * @flags: &enum rtrs_msg_flags (%RTRS_MSG_NEED_INVAL_F)
 * @sg_cnt: number of entries in @desc (0 or 1 in protocol 2.0)
 * @desc: where the server writes the data
 *
 * Written by the client at offset @usr_len of its chunk, right after the
 * user message; so it need not be naturally aligned.
 */
struct rtrs_msg_rdma_read {
	__le16	type;
	__le16	usr_len;
	__le16	flags;
	__le16	sg_cnt;
	struct rtrs_sg_desc desc[];
};

RTRS_WIRE_SIZE(struct rtrs_msg_rdma_read, 8);
RTRS_WIRE_AT(struct rtrs_msg_rdma_read, usr_len, 2);
RTRS_WIRE_AT(struct rtrs_msg_rdma_read, flags, 4);
RTRS_WIRE_AT(struct rtrs_msg_rdma_read, sg_cnt, 6);
RTRS_WIRE_AT(struct rtrs_msg_rdma_read, desc, 8);

/**
 * struct rtrs_msg_rdma_write - header of a WRITE request
 * @type: %RTRS_MSG_WRITE
 * @usr_len: length of the user message that precedes this header
 *
 * The chunk holds data, then user message, then this header.
 */
struct rtrs_msg_rdma_write {
	__le16	type;
	__le16	usr_len;
};

RTRS_WIRE_SIZE(struct rtrs_msg_rdma_write, 4);
RTRS_WIRE_AT(struct rtrs_msg_rdma_write, usr_len, 2);

/**
 * struct rtrs_msg_rdma_hdr - what READ and WRITE headers have in common
 * @type: %RTRS_MSG_WRITE or %RTRS_MSG_READ
 */
struct rtrs_msg_rdma_hdr {
	__le16	type;
};

RTRS_WIRE_SIZE(struct rtrs_msg_rdma_hdr, 2);

/*
 * Protocol 2.1 (Documentation/rtrs.rst, "Protocol 2.1").  A request is
 * one SEND into a receive buffer the server posted: a header of its own
 * type, the user message right after it, and for an inline WRITE the
 * data, which starts at the connection response's max_hdr_size so that
 * it lands at the start of the receive buffer's data page.  A response is
 * one SEND of struct rtrs_msg_io_rsp, with invalidation of the client's
 * memory region when the request named one, or packed with others into
 * one SEND where the client asked for that; the response to a READ_BUF is
 * instead the immediate (%RTRS_IO_RSP_IMM) of the RDMA WRITE WITH
 * IMMEDIATE that brings its data.
 */

/**
 * struct rtrs_msg_conn_rsp_2_1 - connection response of a 2.1 path
 * @magic: %RTRS_MAGIC
 * @version: 2.1, (%RTRS_PROTO_VER_MAJOR << 8) | %RTRS_PROTO_MINOR_2_1
 * @errno: 0; a reject is a struct rtrs_msg_conn_rsp in every version
 * @queue_depth: requests the client may have in flight on the path
 * @max_io_size: largest data length of one request
 * @max_hdr_size: largest header plus user message of an inline WRITE,
 *	whose data starts at this offset of the SEND
 * @max_inline_size: largest data length of an inline WRITE; a request
 *	without inline data may fill both, @max_hdr_size plus this, with its
 *	header and user message
 * @max_read_buf: largest data length of a READ_BUF; 0 when the server
 *	takes none.  A client that reads a response shorter than this field
 *	(a server of an earlier 2.1 build sent 20 bytes) takes it as 0
 * @flags: %RTRS_CONN_RSP_MSG_TAGS or 0; the other bits are sent as 0 and
 *	ignored.  A client that reads a response shorter than this field
 *	(24 bytes from an earlier 2.1 build) takes it as 0
 *
 * Sent instead of struct rtrs_msg_conn_rsp when the server agrees to 2.1;
 * the two share @magic, @version and @errno, which the client reads first.
 */
struct rtrs_msg_conn_rsp_2_1 {
	__le16	magic;
	__le16	version;
	__le16	errno;
	__le16	queue_depth;
	__le32	max_io_size;
	__le32	max_hdr_size;
	__le32	max_inline_size;
	__le32	max_read_buf;
	__le32	flags;
};

RTRS_WIRE_SIZE(struct rtrs_msg_conn_rsp_2_1, 28);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, version, 2);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, errno, 4);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, queue_depth, 6);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, max_io_size, 8);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, max_hdr_size, 12);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, max_inline_size, 16);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, max_read_buf, 20);
RTRS_WIRE_AT(struct rtrs_msg_conn_rsp_2_1, flags, 24);

/*
 * Bit of rtrs_msg_conn_rsp_2_1.flags: the server echoes the tags of the
 * path's message ids, which the client asked for with
 * RTRS_CONN_REQ_MSG_TAGS; every connection of a path says the same.
 */
#define RTRS_CONN_RSP_MSG_TAGS		BIT(0)

/*
 * Tagged message ids (2.1, where both sides agreed to them).  The low 16
 * bits of a message id are the request's slot, below the queue depth (at
 * most 65535); the high 16 bits a tag, the number of requests the client
 * has sent from that slot, modulo 2^16.  The server echoes the whole id
 * in struct rtrs_msg_io_rsp, and the tag's low 3 bits, right above the
 * slot, in the immediate that answers a READ_BUF.  A response whose tag is
 * not the slot's last request's is a copy of an earlier response: the
 * client drops it instead of taking it for the answer to the slot's
 * current request.  Without tags, a message id is the slot alone.
 */
#define RTRS_MSG_SLOT_BITS		16
#define RTRS_MSG_SLOT_MASK		GENMASK(RTRS_MSG_SLOT_BITS - 1, 0)
#define RTRS_MSG_TAG_BITS		16
#define RTRS_IMM_TAG_BITS		3

/* The message id of slot @slot, tagged @tag. */
static inline u32 rtrs_msg_id(u32 slot, u32 tag)
{
	return tag << RTRS_MSG_SLOT_BITS | (slot & RTRS_MSG_SLOT_MASK);
}

static inline u32 rtrs_msg_slot(u32 msg_id)
{
	return msg_id & RTRS_MSG_SLOT_MASK;
}

static inline u32 rtrs_msg_tag(u32 msg_id)
{
	return msg_id >> RTRS_MSG_SLOT_BITS;
}

/**
 * rtrs_msg_tag_age() - which of a slot's requests a tag names
 * @sent: requests the slot has sent so far, the last one's tag in full
 * @tag: a response's tag, @bits wide
 * @bits: the width of @tag: %RTRS_MSG_TAG_BITS, or %RTRS_IMM_TAG_BITS in
 *	an immediate
 *
 * A tag names the slot's last request, or one of those before it back to
 * half the tag's range (2^15 requests, or 4 in an immediate).
 *
 * Return: 0 for the last request, n for the n-th before it; -1 for a tag
 * that names no request the slot sent.
 */
static inline int rtrs_msg_tag_age(u32 sent, u32 tag, unsigned int bits)
{
	u32 age = (sent - tag) & (BIT(bits) - 1);

	if (age >= min_t(u32, sent, BIT(bits - 1)))
		return -1;
	return age;
}

/**
 * struct rtrs_msg_io_req - header of a 2.1 READ or WRITE request
 * @type: %RTRS_MSG_READ_REQ, %RTRS_MSG_WRITE_REQ or %RTRS_MSG_READ_BUF
 * @usr_len: length of the user message that follows this header
 * @msg_id: the client's id of the request: below the queue depth, or
 *	where the path agreed on tags, tagged (rtrs_msg_id()); the response
 *	carries it back
 * @desc: the client's memory region: the server RDMA-writes a READ's data
 *	into it, RDMA-reads a WRITE's data from it; @desc.len is the data
 *	length, up to max_io_size.  A request with no data (a flush, a
 *	close) names no region: length, address and key are all 0.  A
 *	READ_BUF names the place of its message id in the client's read
 *	buffers, registered once for the path: 1 to max_read_buf bytes
 */
struct rtrs_msg_io_req {
	__le16	type;
	__le16	usr_len;
	__le32	msg_id;
	struct rtrs_sg_desc desc;
};

RTRS_WIRE_SIZE(struct rtrs_msg_io_req, 24);
RTRS_WIRE_AT(struct rtrs_msg_io_req, usr_len, 2);
RTRS_WIRE_AT(struct rtrs_msg_io_req, msg_id, 4);
RTRS_WIRE_AT(struct rtrs_msg_io_req, desc, 8);

/**
 * struct rtrs_msg_write_inline - header of a 2.1 WRITE that carries its data
 * @type: %RTRS_MSG_WRITE_INLINE
 * @usr_len: length of the user message that follows this header
 * @msg_id: the client's id of the request, as in struct rtrs_msg_io_req
 * @data_len: bytes of data, 1 to max_inline_size; they start at offset
 *	max_hdr_size of the SEND and end where it ends
 */
struct rtrs_msg_write_inline {
	__le16	type;
	__le16	usr_len;
	__le32	msg_id;
	__le32	data_len;
};

RTRS_WIRE_SIZE(struct rtrs_msg_write_inline, 12);
RTRS_WIRE_AT(struct rtrs_msg_write_inline, usr_len, 2);
RTRS_WIRE_AT(struct rtrs_msg_write_inline, msg_id, 4);
RTRS_WIRE_AT(struct rtrs_msg_write_inline, data_len, 8);

/**
 * struct rtrs_msg_io_rsp - the server's response to a 2.1 request
 * @type: %RTRS_MSG_IO_RSP
 * @errno: 0 or a negative errno of the user's, two's complement
 * @msg_id: @msg_id of the request, its tag included
 *
 * A SEND WITH INVALIDATE of the request's memory region when it named
 * one, else a SEND.  On a connection whose request carried
 * %RTRS_CONN_REQ_PACKED_RSP, a SEND that invalidates nothing may pack 1
 * to %RTRS_IO_RSP_PACK_MAX of these, back to back, for as many requests:
 * its length says how many.
 */
struct rtrs_msg_io_rsp {
	__le16	type;
	__le16	errno;
	__le32	msg_id;
};

RTRS_WIRE_SIZE(struct rtrs_msg_io_rsp, 8);
RTRS_WIRE_AT(struct rtrs_msg_io_rsp, errno, 2);
RTRS_WIRE_AT(struct rtrs_msg_io_rsp, msg_id, 4);

/**
 * rtrs_proto_agree() - the version two peers speak
 * @peer: the version the peer asked for, as on the wire
 * @max_minor: the highest minor this side speaks
 *
 * Both sides speak the peer's major (the caller has checked it is ours)
 * and the lower of the two minors.
 *
 * Return: the version, in the wire's form (major << 8 | minor).
 */
static inline u16 rtrs_proto_agree(u16 peer, u8 max_minor)
{
	return RTRS_PROTO_VER_MAJOR << 8 | min_t(u8, peer & 0xff, max_minor);
}

/*
 * Immediate data: the top 4 bits are the type, the low 28 the payload.
 *
 * RTRS_IO_REQ_IMM (client to server): the payload is the offset of the IO
 * header in the server's chunk area: chunk id in the high bits, offset
 * within the chunk in the low rtrs_imm_off_bits(queue_depth) bits.
 *
 * RTRS_IO_RSP_IMM, RTRS_IO_RSP_W_INV_IMM (server to client): errno
 * magnitude in bits 27..19, message (chunk) id in bits 18..0.  The W_INV form
 * says the response is a SEND WITH INVALIDATE of the client's MR.  On a
 * 2.1 path only the response to a READ_BUF is an immediate, RTRS_IO_RSP_IMM
 * with the request's message id (where tagged, its slot and the low
 * RTRS_IMM_TAG_BITS of its tag, see rtrs_msg_id()).
 *
 * RTRS_HB_MSG_IMM, RTRS_HB_ACK_IMM: heartbeat and its ack, no payload.
 */
enum rtrs_imm_type {
	RTRS_IO_REQ_IMM		= 0,
	RTRS_IO_RSP_IMM		= 1,
	RTRS_IO_RSP_W_INV_IMM	= 2,
	RTRS_HB_MSG_IMM		= 8,
	RTRS_HB_ACK_IMM		= 9,
};

#define RTRS_IMM_TYPE_BITS	4
#define RTRS_IMM_PAYLOAD_BITS	28
#define RTRS_IMM_PAYLOAD_MASK	GENMASK(RTRS_IMM_PAYLOAD_BITS - 1, 0)
#define RTRS_IMM_MSG_ID_BITS	19
#define RTRS_IMM_MSG_ID_MASK	GENMASK(RTRS_IMM_MSG_ID_BITS - 1, 0)
#define RTRS_IMM_ERRNO_BITS	9
#define RTRS_IMM_ERRNO_MAX	((1 << RTRS_IMM_ERRNO_BITS) - 1)
static_assert(RTRS_IMM_TYPE_BITS + RTRS_IMM_PAYLOAD_BITS == 32);
static_assert(RTRS_IMM_MSG_ID_BITS + RTRS_IMM_ERRNO_BITS ==
	      RTRS_IMM_PAYLOAD_BITS);
static_assert(RTRS_MSG_SLOT_BITS + RTRS_IMM_TAG_BITS == RTRS_IMM_MSG_ID_BITS);
static_assert(RTRS_MSG_SLOT_BITS + RTRS_MSG_TAG_BITS == 32);

static inline u32 rtrs_imm(u32 type, u32 payload)
{
	return type << RTRS_IMM_PAYLOAD_BITS | (payload & RTRS_IMM_PAYLOAD_MASK);
}

static inline u32 rtrs_imm_type(u32 imm)
{
	return imm >> RTRS_IMM_PAYLOAD_BITS;
}

static inline u32 rtrs_imm_payload(u32 imm)
{
	return imm & RTRS_IMM_PAYLOAD_MASK;
}

/**
 * rtrs_imm_off_bits() - payload bits that address a byte within a chunk
 * @queue_depth: number of chunks of the session, at least 1
 *
 * The chunk id takes the bits needed to number @queue_depth chunks; the
 * rest of the 28-bit payload is the offset within the chunk.
 *
 * Return: number of offset bits.
 */
static inline unsigned int rtrs_imm_off_bits(u32 queue_depth)
{
	return RTRS_IMM_PAYLOAD_BITS - order_base_2(queue_depth);
}

/**
 * rtrs_io_req_imm() - immediate data of an IO request
 * @chunk_id: chunk the request was written to
 * @off: offset of the IO header within that chunk
 * @off_bits: rtrs_imm_off_bits() of the session
 *
 * Return: the immediate data, in CPU order.
 */
static inline u32 rtrs_io_req_imm(u32 chunk_id, u32 off, unsigned int off_bits)
{
	return rtrs_imm(RTRS_IO_REQ_IMM, chunk_id << off_bits | off);
}

/**
 * rtrs_io_req_decode() - split the payload of an IO request
 * @payload: rtrs_imm_payload() of the immediate
 * @off_bits: rtrs_imm_off_bits() of the session
 * @chunk_id: chunk id, not yet checked against the queue depth
 * @off: header offset, not yet checked against the chunk size
 */
static inline void rtrs_io_req_decode(u32 payload, unsigned int off_bits,
				      u32 *chunk_id, u32 *off)
{
	*chunk_id = payload >> off_bits;
	*off = payload & (BIT(off_bits) - 1);
}

/**
 * rtrs_io_rsp_imm() - immediate data of an IO response
 * @msg_id: id of the request responded to (its chunk id)
 * @errno: 0 or a negative errno; magnitudes above 511 are sent as -EIO
 * @w_inv: the response also invalidates the client's MR
 *
 * Return: the immediate data, in CPU order.
 */
static inline u32 rtrs_io_rsp_imm(u32 msg_id, int errno, bool w_inv)
{
	u32 err = errno < 0 ? -errno : errno;

	if (err > RTRS_IMM_ERRNO_MAX)
		err = EIO;
	return rtrs_imm(w_inv ? RTRS_IO_RSP_W_INV_IMM : RTRS_IO_RSP_IMM,
			err << RTRS_IMM_MSG_ID_BITS |
			(msg_id & RTRS_IMM_MSG_ID_MASK));
}

/**
 * rtrs_io_rsp_decode() - split the payload of an IO response
 * @payload: rtrs_imm_payload() of the immediate
 * @msg_id: id of the request responded to, not yet checked
 * @errno: 0 or a negative errno
 */
static inline void rtrs_io_rsp_decode(u32 payload, u32 *msg_id, int *errno)
{
	*msg_id = payload & RTRS_IMM_MSG_ID_MASK;
	*errno = -(int)(payload >> RTRS_IMM_MSG_ID_BITS);
}

/*
 * The core's internal interface: what rtrs-core.ko offers rtrs-client.ko
 * and rtrs-server.ko.  Nothing here is part of the public API.
 */

/**
 * struct rtrs_ib_dev - an RDMA device and the PD every path on it shares
 * @ib_dev: the device
 * @ib_pd: protection domain of all connections on @ib_dev
 * @ref: one reference per user (path); the last put frees the PD
 * @entry: in @pool->devs
 * @pool: pool this device belongs to
 */
struct rtrs_ib_dev {
	struct ib_device	*ib_dev;
	struct ib_pd		*ib_pd;
	struct kref		ref;
	struct list_head	entry;
	struct rtrs_ib_dev_pool	*pool;
};

/**
 * rtrs_replays_local_ops() - may the device run a local operation twice?
 * @ib_dev: the device.
 *
 * rxe (as in 6.1) executes the LOCAL_INV and REG_MR work requests of a
 * send queue again when it retransmits a request posted before them; a
 * REG_MR of an MR that is already valid, or a LOCAL_INV with a key the MR
 * no longer has, then fails and the QP stops moving.  On such a device a
 * memory registration keeps the MR's key and is preceded by a LOCAL_INV
 * of that key, so that running the pair again leaves the MR as it was.
 * The key then no longer changes from one IO to the next.
 *
 * Return: true for a device that needs it.
 */
static inline bool rtrs_replays_local_ops(const struct ib_device *ib_dev)
{
	return ib_dev->ops.driver_id == RDMA_DRIVER_RXE;
}

/* Pages of one map of an MR's page list on rxe of 6.1 (4 KiB a map). */
#define RTRS_RXE_MAP_PAGES	256

/**
 * rtrs_mr_reads_past_map() - does the device read past an MR's page list?
 * @ib_dev: the device.
 *
 * rxe (as in 6.1) keeps an MR's page list in maps of %RTRS_RXE_MAP_PAGES
 * pages, and a copy into or out of the MR that uses the last page of a
 * map then reads the pointer to the next map: past the end of the list
 * when that map was the last (KASAN reports it).  On such a device an MR
 * is never allocated a whole number of maps (rtrs_mr_pages()).
 *
 * Return: true for a device that needs it.
 */
static inline bool rtrs_mr_reads_past_map(const struct ib_device *ib_dev)
{
	return ib_dev->ops.driver_id == RDMA_DRIVER_RXE;
}

/**
 * rtrs_mr_pages() - pages to allocate an MR for, to map @pages of them
 * @ib_dev: the device.
 * @pages: pages the MR maps at most.
 *
 * Return: @pages, or one more where rtrs_mr_reads_past_map() and @pages
 * would fill its last map.
 */
static inline u32 rtrs_mr_pages(const struct ib_device *ib_dev, u32 pages)
{
	return pages + (rtrs_mr_reads_past_map(ib_dev) &&
			!(pages % RTRS_RXE_MAP_PAGES));
}

/**
 * struct rtrs_ib_dev_pool - the devices in use by one module
 * @mutex: protects @devs and the reference counts' drop to zero
 * @devs: &struct rtrs_ib_dev entries, one per ib_device
 * @pd_flags: flags for ib_alloc_pd() (the server wants an unsafe global
 *	rkey for nothing, so normally 0)
 */
struct rtrs_ib_dev_pool {
	struct mutex		mutex;	/* protects devs */
	struct list_head	devs;
	enum ib_pd_flags	pd_flags;
};

void rtrs_ib_dev_pool_init(struct rtrs_ib_dev_pool *pool,
			   enum ib_pd_flags pd_flags);
void rtrs_ib_dev_pool_destroy(struct rtrs_ib_dev_pool *pool);
struct rtrs_ib_dev *rtrs_ib_dev_get(struct rtrs_ib_dev_pool *pool,
				    struct ib_device *ib_dev);
void rtrs_ib_dev_put(struct rtrs_ib_dev *dev);

/**
 * struct rtrs_iu - information unit: a DMA-mapped message buffer
 * @cqe: completion entry; @cqe.done runs when a work request posted with
 *	this IU completes
 * @dma_addr: DMA address of @buf on the device it was mapped for
 * @buf: the buffer
 * @size: length of @buf
 * @direction: DMA direction of the mapping
 */
struct rtrs_iu {
	struct ib_cqe		cqe;
	dma_addr_t		dma_addr;
	void			*buf;
	size_t			size;
	enum dma_data_direction	direction;
};

struct rtrs_iu *rtrs_iu_alloc(u32 count, size_t size, gfp_t gfp,
			      struct ib_device *dev,
			      enum dma_data_direction dir,
			      void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void rtrs_iu_free(struct rtrs_iu *iu, struct ib_device *dev, u32 count);

struct rtrs_path;

/**
 * struct rtrs_con - one RDMA connection of a path
 * @path: the path this connection belongs to
 * @cm_id: RDMA CM id of the connection
 * @qp: its queue pair, NULL until rtrs_cq_qp_create()
 * @cq: completion queue of @qp (send and receive)
 * @cid: index within the path; 0 is the admin connection
 * @nr_cqe: size of @cq
 * @poll_ctx: how @cq is polled (%IB_POLL_DIRECT for poll queues)
 * @sq_wr_avail: free slots of the send queue
 * @wr_cnt: sends posted, to signal one in every @signal_interval
 * @signal_interval: an unsignaled send is signaled every this many; 0
 *	counts as 1 (every send signaled)
 * @max_send_wr: send queue size as created, after clamping to the device
 *	(set by rtrs_cq_qp_create()); no chain longer than this is posted
 * @max_recv_wr: receive queue size as created, after clamping to the device
 *	(set by rtrs_cq_qp_create())
 * @max_inline: bytes a send WR may carry inline (%IB_SEND_INLINE, from a
 *	kernel virtual address): what the caller of rtrs_cq_qp_create() asks
 *	for, then what the QP takes; 0 when the device took no QP with it
 *
 * Signaling: rtrs_iu_post_rdma_write_imm() and
 * rtrs_post_rdma_write_imm_empty() count every call in @wr_cnt and signal
 * the call whose count is a multiple of @signal_interval, or any call whose
 * caller asks for %IB_SEND_SIGNALED.  rtrs_iu_post_send() is always
 * signaled and not counted.  So a caller that takes one @sq_wr_avail slot
 * per counted call may give back @signal_interval slots per signaled
 * completion of those calls.  No core function touches @sq_wr_avail; a
 * send queue must have room for the core's own posts (a heartbeat and an
 * ack at a time) outside the slots it counts there.
 */
struct rtrs_con {
	struct rtrs_path	*path;
	struct rdma_cm_id	*cm_id;
	struct ib_qp		*qp;
	struct ib_cq		*cq;
	unsigned int		cid;
	int			nr_cqe;
	enum ib_poll_context	poll_ctx;
	atomic_t		sq_wr_avail;
	atomic_t		wr_cnt;
	unsigned int		signal_interval;
	u32			max_send_wr;
	u32			max_recv_wr;
	u32			max_inline;
};

int rtrs_cq_qp_create(struct rtrs_path *path, struct rtrs_con *con,
		      u32 max_send_sge, int cq_vector, int nr_cqe,
		      u32 max_send_wr, u32 max_recv_wr, struct ib_srq *srq,
		      enum ib_poll_context poll_ctx);
void rtrs_cq_qp_destroy(struct rtrs_con *con);

int rtrs_iu_post_recv(struct rtrs_con *con, struct rtrs_iu *iu);
int rtrs_iu_post_send(struct rtrs_con *con, struct rtrs_iu *iu, size_t size,
		      struct ib_send_wr *head);
int rtrs_iu_post_rdma_write_imm(struct rtrs_con *con, struct rtrs_iu *iu,
				struct ib_sge *sge, unsigned int num_sge,
				u32 rkey, u64 rdma_addr, u32 imm_data,
				enum ib_send_flags flags,
				struct ib_send_wr *head,
				struct ib_send_wr *tail);
int rtrs_post_recv_empty(struct rtrs_con *con, struct ib_cqe *cqe);
int rtrs_post_probe_write(struct rtrs_con *con, struct ib_cqe *cqe);
int rtrs_post_rdma_write_imm_empty(struct rtrs_con *con, struct ib_cqe *cqe,
				   u32 imm_data, struct ib_send_wr *head);

/**
 * struct rtrs_path - what a client path and a server path have in common
 * @src_addr: local address
 * @dst_addr: peer address
 * @sessname: name of the session the path belongs to
 * @uuid: identifies the path on the wire (sess_uuid)
 * @con: the connections, @con_num of them
 * @con_num: number of connections: admin + IO (+ poll on the client)
 * @irq_con_num: connections with interrupt-driven CQs
 * @recon_cnt: reconnections of this path so far
 * @dev: device and PD the path's connections use
 * @dev_ref: connections holding @dev
 * @hb_cqe: completion entry of heartbeat writes
 * @hb_err_handler: called (from @hb_wq) when @hb_missed_max beats in a row
 *	were missed
 * @hb_wq: workqueue running @hb_dwork
 * @hb_dwork: sends the next heartbeat
 * @hb_interval_ms: time between heartbeats
 * @hb_missed_cnt: heartbeats sent since traffic was last received
 * @hb_missed_max: missed heartbeats in a row that make the path fail
 * @hb_last_sent: when the last heartbeat left
 * @hb_cur_latency: time from the last heartbeat sent to its ack
 *
 * Heartbeats: the work (on @hb_wq) and rtrs_hb_received() and
 * rtrs_hb_ack_received() (in completion context, on any CPU) share
 * @hb_missed_cnt, @hb_last_sent and @hb_cur_latency without a lock: the
 * work raises the count with cmpxchg(), rtrs_hb_received() clears it with
 * xchg(), and the timestamps are read and written with
 * READ_ONCE()/WRITE_ONCE().  Callers outside the core only
 * read them, with READ_ONCE().
 */
struct rtrs_path {
	struct sockaddr_storage	src_addr;
	struct sockaddr_storage	dst_addr;
	char			sessname[NAME_MAX];
	uuid_t			uuid;
	struct rtrs_con		**con;
	unsigned int		con_num;
	unsigned int		irq_con_num;
	unsigned int		recon_cnt;
	struct rtrs_ib_dev	*dev;
	int			dev_ref;
	struct ib_cqe		*hb_cqe;
	void			(*hb_err_handler)(struct rtrs_con *con);
	struct workqueue_struct	*hb_wq;
	struct delayed_work	hb_dwork;
	unsigned int		hb_interval_ms;
	unsigned int		hb_missed_cnt;
	unsigned int		hb_missed_max;
	ktime_t			hb_last_sent;
	ktime_t			hb_cur_latency;
};

void rtrs_init_hb(struct rtrs_path *path, struct ib_cqe *cqe,
		  unsigned int interval_ms, unsigned int missed_max,
		  void (*err_handler)(struct rtrs_con *con),
		  struct workqueue_struct *wq);
void rtrs_start_hb(struct rtrs_path *path);
void rtrs_stop_hb(struct rtrs_path *path);
void rtrs_send_hb_ack(struct rtrs_path *path);
void rtrs_hb_received(struct rtrs_path *path);
void rtrs_hb_ack_received(struct rtrs_path *path);

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool rtrs_fault_inject(void);
#else
static inline bool rtrs_fault_inject(void)
{
	return false;
}
#endif

/*
 * Each set-up step that fail_rtrs can fail is written with one of the
 * wrappers below, so that it reads as the plain call it guards.  Each use
 * is one fault point: it asks rtrs_fault_inject() once, right before the
 * step, and the step does not run when that says to fail.  The
 * allocation wrappers are always inlined, so that kmemleak and slab
 * debugging still see the caller as the allocation's origin.
 */

/**
 * rtrs_fail_or() - a set-up step that fail_rtrs can fail
 * @err: what the step returns when it fails
 * @step: the step, evaluated only when fail_rtrs lets it run
 *
 * Return: @err when fail_rtrs fails the step, else the value of @step.
 */
#define rtrs_fail_or(err, step)	(rtrs_fault_inject() ? (err) : (step))

/**
 * rtrs_fail_last_or() - a loop's step that fail_rtrs can fail on the last run
 * @last: whether this is the loop's last run, the only one that asks
 * @err: what the step returns when it fails
 * @step: the step, evaluated only when fail_rtrs lets it run
 *
 * A loop has a single fault point, on its last element, so that a failure
 * unwinds all that the loop built before it.
 *
 * Return: @err when @last and fail_rtrs fails the step, else the value of
 * @step.
 */
#define rtrs_fail_last_or(last, err, step) \
	((last) && rtrs_fault_inject() ? (err) : (step))

/**
 * rtrs_kzalloc() - kzalloc() that fail_rtrs can fail
 * @size: how many bytes
 * @gfp: the allocation's flags
 *
 * A macro, so that the allocation is the caller's wherever the kernel
 * records call sites (kzalloc() is itself a macro for that from 6.10).
 *
 * Return: the zeroed memory, or NULL when fail_rtrs or kzalloc() fails.
 */
#define rtrs_kzalloc(size, gfp) \
	(rtrs_fault_inject() ? NULL : kzalloc(size, gfp))

/**
 * rtrs_kcalloc() - kcalloc() that fail_rtrs can fail
 * @n: how many elements
 * @size: the size of one element
 * @gfp: the allocation's flags
 *
 * A macro, as rtrs_kzalloc() is.
 *
 * Return: the zeroed array, or NULL when fail_rtrs or kcalloc() fails.
 */
#define rtrs_kcalloc(n, size, gfp) \
	(rtrs_fault_inject() ? NULL : kcalloc(n, size, gfp))

/**
 * rtrs_alloc_percpu() - alloc_percpu() that fail_rtrs can fail
 * @type: the type of each CPU's object
 *
 * A macro, as alloc_percpu() is.
 *
 * Return: the per-CPU pointer, or NULL when fail_rtrs or alloc_percpu()
 * fails.
 */
#define rtrs_alloc_percpu(type) \
	(rtrs_fault_inject() ? NULL : alloc_percpu(type))

#endif /* RTRS_PRI_H */
