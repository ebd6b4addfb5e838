// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the server rejects every malformed field a client sends.
 *
 * For each message the server receives (connect request, INFO_REQ,
 * immediate data, READ and WRITE headers, the requests of a 2.1 path) a
 * valid instance passes, and each case breaks one field, or sets one edge
 * value, and expects the precise errno of rtrs-srv-validate.c's rules.
 *
 * The checks are pure functions.  Rather than export them from
 * rtrs-server.ko for this module alone, the module compiles their source
 * in: it tests the very code the server runs, and needs no server loaded.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "rtrs-srv-validate.c"
#include "rtrs-validate-test.h"

/* Connect request. */

struct conn_case {
	const char *name;
	size_t len;
	struct patch p[2];
	int want;
};

#define REQ struct rtrs_msg_conn_req
#define REQ_LEN sizeof(REQ)

static const struct conn_case conn_cases[] = {
	{ "valid", REQ_LEN, {}, 0 },
	{ "longer private data", REQ_LEN + 8, {}, 0 },
	{ "one byte short", REQ_LEN - 1, {}, -EINVAL },
	{ "only the CM header", 2, {}, -EINVAL },
	{ "magic off by one", REQ_LEN, { P16(REQ, magic, RTRS_MAGIC + 1) },
	  -EINVAL },
	{ "magic byte-swapped", REQ_LEN, { P16(REQ, magic, 0xBD1B) }, -EINVAL },
	{ "magic 0", REQ_LEN, { P16(REQ, magic, 0) }, -EINVAL },
	{ "version 1.0", REQ_LEN, { P16(REQ, version, 0x0100) },
	  -EPROTONOSUPPORT },
	{ "version 3.0", REQ_LEN, { P16(REQ, version, 0x0300) },
	  -EPROTONOSUPPORT },
	{ "version 0.2", REQ_LEN, { P16(REQ, version, 0x0002) },
	  -EPROTONOSUPPORT },
	{ "version 255.255", REQ_LEN, { P16(REQ, version, 0xffff) },
	  -EPROTONOSUPPORT },
	{ "version 2.1 (any minor)", REQ_LEN, { P16(REQ, version, 0x0201) }, 0 },
	{ "cid == cid_num", REQ_LEN, { P16(REQ, cid, 3) }, -EINVAL },
	{ "cid == cid_num - 1", REQ_LEN, { P16(REQ, cid, 2) }, 0 },
	{ "cid 0xffff", REQ_LEN, { P16(REQ, cid, 0xffff) }, -EINVAL },
	{ "cid_num 0, cid 0", REQ_LEN,
	  { P16(REQ, cid, 0), P16(REQ, cid_num, 0) }, -EINVAL },
	{ "cid_num 1, cid 0", REQ_LEN,
	  { P16(REQ, cid, 0), P16(REQ, cid_num, 1) }, 0 },
	{ "cid_num at the limit", REQ_LEN,
	  { P16(REQ, cid, RTRS_SRV_MAX_CONS - 1),
	    P16(REQ, cid_num, RTRS_SRV_MAX_CONS) }, 0 },
	{ "cid_num beyond the limit", REQ_LEN,
	  { P16(REQ, cid, 0), P16(REQ, cid_num, RTRS_SRV_MAX_CONS + 1) },
	  -EINVAL },
	{ "cid_num 0xffff", REQ_LEN,
	  { P16(REQ, cid, 0), P16(REQ, cid_num, 0xffff) }, -EINVAL },
	{ "unknown flags are ignored", REQ_LEN, { P8(REQ, flags, 0xfe) }, 0 },
	{ "reserved bytes are ignored", REQ_LEN,
	  { P8(REQ, reserved[0], 0xff), P8(REQ, reserved[10], 0xff) }, 0 },
	{ "CM header bytes are ignored", REQ_LEN,
	  { P8(REQ, __cma_version, 0xff), P8(REQ, __ip_version, 0xff) }, 0 },
};

static void conn_case_desc(const struct conn_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(conn, conn_cases, conn_case_desc);

static void conn_req(struct kunit *test)
{
	const struct conn_case *c = test->param_value;
	union {
		struct rtrs_msg_conn_req req;
		u8 bytes[REQ_LEN + 8];
	} m = {};
	size_t i;

	m.req.magic = cpu_to_le16(RTRS_MAGIC);
	m.req.version = cpu_to_le16(RTRS_PROTO_VER);
	m.req.cid = cpu_to_le16(1);
	m.req.cid_num = cpu_to_le16(3);
	m.req.recon_cnt = cpu_to_le16(7);
	m.req.flags = RTRS_CONN_REQ_FIRST_CONN;
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(&m, &c->p[i]);

	KUNIT_EXPECT_EQ(test, rtrs_srv_check_conn_req(&m, c->len), c->want);
}

static void conn_req_empty(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rtrs_srv_check_conn_req(NULL, 0), -EINVAL);
}

/* INFO_REQ. */

struct info_case {
	const char *name;
	size_t len;
	u16 type;
	const char *path;	/* NULL: NAME_MAX 'a's, no terminator */
	size_t size;		/* of the name buffer; 0: NAME_MAX */
	int want;
};

#define INFO_LEN sizeof(struct rtrs_msg_info_req)

static const struct info_case info_cases[] = {
	{ "valid", INFO_LEN, RTRS_MSG_INFO_REQ, "clt0", 0, 0 },
	{ "longer receive", INFO_LEN + 16, RTRS_MSG_INFO_REQ, "clt0", 0, 0 },
	{ "one byte short", INFO_LEN - 1, RTRS_MSG_INFO_REQ, "clt0", 0,
	  -EMSGSIZE },
	{ "empty", 0, RTRS_MSG_INFO_REQ, "clt0", 0, -EMSGSIZE },
	{ "type only", 2, RTRS_MSG_INFO_REQ, "clt0", 0, -EMSGSIZE },
	{ "type INFO_RSP", INFO_LEN, RTRS_MSG_INFO_RSP, "clt0", 0, -EPROTO },
	{ "type WRITE", INFO_LEN, RTRS_MSG_WRITE, "clt0", 0, -EPROTO },
	{ "type READ", INFO_LEN, RTRS_MSG_READ, "clt0", 0, -EPROTO },
	{ "type RKEY_RSP", INFO_LEN, RTRS_MSG_RKEY_RSP, "clt0", 0, -EPROTO },
	{ "type 0xffff", INFO_LEN, 0xffff, "clt0", 0, -EPROTO },
	{ "255 bytes unterminated", INFO_LEN, RTRS_MSG_INFO_REQ, NULL, 0,
	  -ENAMETOOLONG },
	{ "name too long for the caller", INFO_LEN, RTRS_MSG_INFO_REQ,
	  "clt0-12345", 8, -ENAMETOOLONG },
	{ "name filling the caller's buffer", INFO_LEN, RTRS_MSG_INFO_REQ,
	  "clt0-12", 8, 0 },
	{ "empty name", INFO_LEN, RTRS_MSG_INFO_REQ, "", 0, -EINVAL },
	{ "name with /", INFO_LEN, RTRS_MSG_INFO_REQ, "a/b", 0, -EINVAL },
	{ "name /", INFO_LEN, RTRS_MSG_INFO_REQ, "/", 0, -EINVAL },
	{ "name .", INFO_LEN, RTRS_MSG_INFO_REQ, ".", 0, -EINVAL },
	{ "name ..", INFO_LEN, RTRS_MSG_INFO_REQ, "..", 0, -EINVAL },
	{ "name with .", INFO_LEN, RTRS_MSG_INFO_REQ, "a.b", 0, -EINVAL },
};

static void info_case_desc(const struct info_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(info, info_cases, info_case_desc);

static void info_req(struct kunit *test)
{
	const struct info_case *c = test->param_value;
	union {
		struct rtrs_msg_info_req req;
		u8 bytes[INFO_LEN + 16];
	} m;
	char name[NAME_MAX];
	size_t size = c->size ?: sizeof(name);

	/* Reserved bytes set: they must neither matter nor terminate. */
	memset(&m, 0xff, sizeof(m));
	m.req.type = cpu_to_le16(c->type);
	if (c->path)
		strscpy(m.req.pathname, c->path, sizeof(m.req.pathname));
	else
		memset(m.req.pathname, 'a', sizeof(m.req.pathname));

	KUNIT_EXPECT_EQ(test, rtrs_srv_check_info_req(&m, c->len, name, size),
			c->want);
	if (!c->want)
		KUNIT_EXPECT_STREQ(test, name, c->path);
}

static void info_req_longest_name(struct kunit *test)
{
	struct rtrs_msg_info_req req = {};
	char name[NAME_MAX];

	memset(req.pathname, 'a', sizeof(req.pathname) - 1);
	KUNIT_ASSERT_EQ(test, rtrs_srv_check_info_req(&req, sizeof(req), name,
						      sizeof(name)), 0);
	KUNIT_EXPECT_EQ(test, strlen(name), NAME_MAX - 1);
}

/* Immediate data. */

static void imm_types(struct kunit *test)
{
	static const u32 payloads[] = { 0, 1, RTRS_IMM_PAYLOAD_MASK };
	unsigned int v21;
	u32 type;
	size_t i;

	for (v21 = 0; v21 < 2; v21++) {
		for (type = 0; type < BIT(RTRS_IMM_TYPE_BITS); type++) {
			enum rtrs_srv_msg want = RTRS_SRV_MSG_OTHER;

			/* A 2.1 session has no chunk to take it into. */
			if (type == RTRS_IO_REQ_IMM && !v21)
				want = RTRS_SRV_MSG_IO_REQ;
			else if (type == RTRS_HB_MSG_IMM)
				want = RTRS_SRV_MSG_HB;
			else if (type == RTRS_HB_ACK_IMM)
				want = RTRS_SRV_MSG_HB_ACK;
			for (i = 0; i < ARRAY_SIZE(payloads); i++) {
				u32 imm = rtrs_imm(type, payloads[i]);

				KUNIT_EXPECT_EQ_MSG(test,
						    rtrs_srv_msg_of_imm(imm, v21),
						    want, "2.%u type %u payload %#x",
						    v21, type, payloads[i]);
			}
		}
	}
}

/*
 * Messages and path states, cell by cell as Documentation/rtrs.rst
 * states them: written out here again, not derived from the table.
 */
static void msg_verdicts(struct kunit *test)
{
	enum rtrs_srv_state st;
	enum rtrs_srv_msg msg;

	for (msg = 0; msg < RTRS_SRV_MSG_KINDS; msg++) {
		for (st = RTRS_SRV_CONNECTING; st <= RTRS_SRV_CLOSED; st++) {
			enum rtrs_srv_verdict want = RTRS_SRV_REFUSE;

			if (st >= RTRS_SRV_CLOSING)
				want = RTRS_SRV_DROP;
			else if (st == RTRS_SRV_CONNECTING)
				want = msg == RTRS_SRV_MSG_INFO_REQ ?
				       RTRS_SRV_TAKE : RTRS_SRV_REFUSE;
			else if (msg != RTRS_SRV_MSG_INFO_REQ &&
				 msg != RTRS_SRV_MSG_OTHER)
				want = RTRS_SRV_TAKE;
			KUNIT_EXPECT_EQ_MSG(test, rtrs_srv_msg_verdict(msg, st),
					    want, "%s in state %d",
					    rtrs_srv_msg_name(msg), st);
		}
	}
	KUNIT_EXPECT_EQ(test, rtrs_srv_msg_verdict(RTRS_SRV_MSG_KINDS,
						   RTRS_SRV_CONNECTED),
			RTRS_SRV_REFUSE);
	KUNIT_EXPECT_EQ(test, rtrs_srv_msg_verdict(RTRS_SRV_MSG_HB,
						   RTRS_SRV_CLOSED + 1),
			RTRS_SRV_REFUSE);
}

/* Payload of an IO request. */

struct io_req_case {
	const char *name;
	u32 queue_depth;
	u32 chunk_size;
	u32 id;
	u32 off;
	int want;
};

#define K128 (128u << 10)

static const struct io_req_case io_req_cases[] = {
	{ "first chunk, offset 0", 512, K128, 0, 0, 0 },
	{ "last chunk, last byte", 512, K128, 511, K128 - 1, 0 },
	{ "depth 500, chunk 499", 500, K128, 499, 0, 0 },
	{ "depth 500, chunk 500", 500, K128, 500, 0, -ERANGE },
	{ "depth 500, chunk 511", 500, K128, 511, 0, -ERANGE },
	{ "depth 3, chunk 3", 3, K128, 3, 0, -ERANGE },
	{ "depth 1, chunk 0", 1, K128, 0, 0, 0 },
	{ "depth 65535, chunk 65534", 65535, 4096, 65534, 4095, 0 },
	{ "depth 65535, chunk 65535", 65535, 4096, 65535, 0, -ERANGE },
	{ "offset at the chunk end", 500, K128, 1, K128, -ERANGE },
	{ "offset at the chunk end - 1", 500, K128, 1, K128 - 1, 0 },
	{ "largest offset", 500, K128, 1, BIT(19) - 1, -ERANGE },
	{ "depth 1, largest offset", 1, K128, 0, RTRS_IMM_PAYLOAD_MASK,
	  -ERANGE },
};

static void io_req_case_desc(const struct io_req_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_req, io_req_cases, io_req_case_desc);

static void io_req(struct kunit *test)
{
	const struct io_req_case *c = test->param_value;
	unsigned int off_bits = rtrs_imm_off_bits(c->queue_depth);
	u32 payload = rtrs_imm_payload(rtrs_io_req_imm(c->id, c->off,
							off_bits));
	u32 id = ~0, off = ~0;

	KUNIT_EXPECT_EQ(test, rtrs_srv_check_io_req(payload, off_bits,
						    c->queue_depth,
						    c->chunk_size, &id, &off),
			c->want);
	/* Decoded either way, for the log line. */
	KUNIT_EXPECT_EQ(test, id, c->id);
	KUNIT_EXPECT_EQ(test, off, c->off);
}

/* READ and WRITE headers in a chunk. */

#define CHUNK	8192u
#define MAX_IO	4096u	/* what the server offers for 8 KiB chunks */
#define NO_INV	0
#define INV	RTRS_MSG_NEED_INVAL_F

struct io_hdr_case {
	const char *name;
	u16 type;
	u32 off;
	u16 usr_len;
	u16 flags;	/* READ only */
	u16 sg_cnt;	/* READ only */
	u32 desc_len;	/* READ with sg_cnt 1 only */
	u32 max_io;	/* 0: MAX_IO */
	int want;
};

#define W(n, off, usr, want) \
	{ n, RTRS_MSG_WRITE, off, usr, 0, 0, 0, 0, want }
#define R0(n, off, usr, flags, want) \
	{ n, RTRS_MSG_READ, off, usr, flags, 0, 0, 0, want }
#define R1(n, off, usr, flags, len, want) \
	{ n, RTRS_MSG_READ, off, usr, flags, 1, len, 0, want }

static const struct io_hdr_case io_hdr_cases[] = {
	W("WRITE, largest data", MAX_IO + 100, 100, 0),
	W("WRITE, no data, no message", 0, 0, 0),
	W("WRITE, usr_len == offset", 100, 100, 0),
	W("WRITE, usr_len == offset + 1", 100, 101, -ERANGE),
	W("WRITE, data one beyond max IO", MAX_IO + 11, 10, -ERANGE),
	W("WRITE, header ends at the chunk end", CHUNK - 4, CHUNK - 4 - MAX_IO,
	  0),
	W("WRITE, header straddles the chunk end", CHUNK - 3,
	  CHUNK - 3 - MAX_IO, -EMSGSIZE),
	W("WRITE, type straddles the chunk end", CHUNK - 1, 0, -EMSGSIZE),
	W("WRITE, offset at the chunk end", CHUNK, 0, -ERANGE),
	{ "type INFO_REQ", RTRS_MSG_INFO_REQ, 100, 0, 0, 0, 0, 0, -EPROTO },
	{ "type INFO_RSP", RTRS_MSG_INFO_RSP, 100, 0, 0, 0, 0, 0, -EPROTO },
	{ "type RKEY_RSP", RTRS_MSG_RKEY_RSP, 100, 0, 0, 0, 0, 0, -EPROTO },
	{ "type 5", 5, 100, 0, 0, 0, 0, 0, -EPROTO },
	{ "type 0xffff", 0xffff, 100, 0, 0, 0, 0, 0, -EPROTO },
	R0("READ, no descriptor", 100, 100, NO_INV, 0),
	R0("READ, no descriptor, invalidate", 100, 100, INV, -EPROTO),
	R0("READ, header ends at the chunk end", CHUNK - 8,
	   CHUNK - 8 - MAX_IO, NO_INV, 0),
	R0("READ, header straddles the chunk end", CHUNK - 7,
	   CHUNK - 7 - MAX_IO, NO_INV, -EMSGSIZE),
	R0("READ, usr_len == offset + 1", 100, 101, NO_INV, -ERANGE),
	R1("READ, descriptor", 100, 100, INV, MAX_IO, 0),
	R1("READ, descriptor, no invalidate", 100, 100, NO_INV, 512, 0),
	R1("READ, descriptor length 0", 100, 100, INV, 0, -ERANGE),
	R1("READ, descriptor length max IO + 1", 100, 100, INV, MAX_IO + 1,
	   -ERANGE),
	R1("READ, descriptor length 0xffffffff", 100, 100, INV, U32_MAX,
	   -ERANGE),
	R1("READ, descriptor ends at the chunk end", CHUNK - 24,
	   CHUNK - 24 - MAX_IO, INV, 1, 0),
	R1("READ, descriptor straddles the chunk end", CHUNK - 23,
	   CHUNK - 23 - MAX_IO, INV, 1, -EMSGSIZE),
	R1("READ, unknown flag", 100, 100, INV | BIT(1), 1, -EPROTO),
	R1("READ, flag 0x8000", 100, 100, 0x8000, 1, -EPROTO),
	{ "READ, 2 descriptors", RTRS_MSG_READ, 100, 100, INV, 2, 1, 0,
	  -EPROTO },
	{ "READ, 0xffff descriptors", RTRS_MSG_READ, 100, 100, INV, 0xffff, 1,
	  0, -EPROTO },
	/* A max IO above the chunk size must not let a READ leave it. */
	{ "READ, descriptor as long as the chunk", RTRS_MSG_READ, 100, 100,
	  INV, 1, CHUNK, 2 * CHUNK, 0 },
	{ "READ, descriptor beyond the chunk", RTRS_MSG_READ, 100, 100,
	  INV, 1, CHUNK + 1, 2 * CHUNK, -ERANGE },
};

static void io_hdr_case_desc(const struct io_hdr_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_hdr, io_hdr_cases, io_hdr_case_desc);

/* Write the header of @c into @chunk, cut at the chunk's end. */
static void put_hdr(u8 *chunk, const struct io_hdr_case *c)
{
	u8 hdr[sizeof(struct rtrs_msg_rdma_read) + sizeof(struct rtrs_sg_desc)];
	struct rtrs_msg_rdma_read rd = {
		.type = cpu_to_le16(c->type),
		.usr_len = cpu_to_le16(c->usr_len),
		.flags = cpu_to_le16(c->flags),
		.sg_cnt = cpu_to_le16(c->sg_cnt),
	};
	struct rtrs_sg_desc desc = {
		.addr = cpu_to_le64(0x1122334455667788ull),
		.key = cpu_to_le32(0xabcd),
		.len = cpu_to_le32(c->desc_len),
	};
	size_t len = sizeof(hdr);

	memcpy(hdr, &rd, sizeof(rd));
	memcpy(hdr + sizeof(rd), &desc, sizeof(desc));
	if (c->type == RTRS_MSG_WRITE)
		len = sizeof(struct rtrs_msg_rdma_write);
	if (c->off >= CHUNK)
		return;
	memcpy(chunk + c->off, hdr, min_t(size_t, len, CHUNK - c->off));
}

static void io_hdr(struct kunit *test)
{
	const struct io_hdr_case *c = test->param_value;
	u32 max_io = c->max_io ?: MAX_IO;
	struct rtrs_srv_io_hdr io;
	u8 *chunk;

	/* Exactly one chunk: KASAN sees any read beyond it. */
	chunk = kunit_kmalloc(test, CHUNK, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, chunk);
	memset(chunk, 0x5a, CHUNK);
	put_hdr(chunk, c);

	KUNIT_ASSERT_EQ(test, rtrs_srv_check_io_hdr(chunk, CHUNK, c->off,
						    max_io, &io), c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, io.dir, c->type == RTRS_MSG_READ ? READ : WRITE);
	KUNIT_EXPECT_EQ(test, io.usr_len, c->usr_len);
	KUNIT_EXPECT_EQ(test, io.data_len, c->off - c->usr_len);
	KUNIT_EXPECT_EQ(test, io.sg_cnt, c->sg_cnt);
	KUNIT_EXPECT_EQ(test, io.need_inval, c->sg_cnt && (c->flags & INV));
	if (c->sg_cnt) {
		KUNIT_EXPECT_EQ(test, le64_to_cpu(io.desc.addr),
				0x1122334455667788ull);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(io.desc.key), 0xabcd);
		KUNIT_EXPECT_EQ(test, le32_to_cpu(io.desc.len), c->desc_len);
	}
}

/* Requests of a 2.1 path: one SEND each, header at its start. */

#define QD21		128u
#define MAX_IO21	SZ_1M
#define HDR21		256u	/* header room: inline data starts here */
#define INLINE21	4096u
#define USR21		32u	/* user message of the valid requests */
#define DATA21		512u	/* data of the valid WRITE_INLINE */
#define DESC_LEN21	(64u << 10)
#define ADDR21		0x1122334455660000ull
#define RKEY21		0xabcd1234u
#define RDBUF21		4096u	/* largest READ_BUF, and the valid one's */
#define NO_RDBUF	U32_MAX	/* a path that takes no READ_BUF */

#define IOREQ		struct rtrs_msg_io_req
#define INL		struct rtrs_msg_write_inline
#define IOREQ_LEN	((long)sizeof(IOREQ) + USR21)
#define INL_LEN		((long)HDR21 + DATA21)
#define RDQ		RTRS_MSG_READ_REQ
#define WRQ		RTRS_MSG_WRITE_REQ
#define WIN		RTRS_MSG_WRITE_INLINE
#define RDB		RTRS_MSG_READ_BUF
/* Large enough for a request with a user message of 0xffff bytes. */
#define BUF21		(sizeof(IOREQ) + 0xffff + HDR21 + INLINE21)

struct io21_case {
	const char *name;
	u16 type;		/* of the valid request the case starts from */
	long len_delta;		/* bytes received beyond the valid request */
	struct patch p[3];
	u32 max_hdr;		/* 0: HDR21 */
	u32 max_inline;		/* 0: INLINE21 */
	int want;
	u32 max_rdbuf;		/* 0: RDBUF21; NO_RDBUF: 0 */
};

static const struct io21_case io21_cases[] = {
	{ "READ_REQ, valid", RDQ, 0, {}, 0, 0, 0 },
	{ "WRITE_REQ, valid", WRQ, 0, {}, 0, 0, 0 },
	{ "WRITE_INLINE, valid", WIN, 0, {}, 0, 0, 0 },

	/* Length of the SEND and type. */
	{ "empty", RDQ, -IOREQ_LEN, {}, 0, 0, -EMSGSIZE },
	{ "one byte", RDQ, 1 - IOREQ_LEN, {}, 0, 0, -EMSGSIZE },
	{ "unknown type, type only", RDQ, 2 - IOREQ_LEN,
	  { P16(IOREQ, type, 0x1234) }, 0, 0, -EPROTO },
	{ "READ_REQ, type only", RDQ, 2 - IOREQ_LEN, {}, 0, 0, -EMSGSIZE },
	{ "READ_REQ, one byte short of the header", RDQ,
	  (long)sizeof(IOREQ) - 1 - IOREQ_LEN, { P16(IOREQ, usr_len, 0) }, 0,
	  0, -EMSGSIZE },
	{ "WRITE_REQ, one byte short of the header", WRQ,
	  (long)sizeof(IOREQ) - 1 - IOREQ_LEN, { P16(IOREQ, usr_len, 0) }, 0,
	  0, -EMSGSIZE },
	{ "WRITE_INLINE, one byte short of the header", WIN,
	  (long)sizeof(INL) - 1 - INL_LEN, { P16(INL, usr_len, 0) }, 0, 0,
	  -EMSGSIZE },
	{ "type INFO_REQ", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_INFO_REQ) }, 0,
	  0, -EPROTO },
	{ "type INFO_RSP", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_INFO_RSP) }, 0,
	  0, -EPROTO },
	{ "type WRITE (2.0)", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_WRITE) }, 0,
	  0, -EPROTO },
	{ "type READ (2.0)", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_READ) }, 0, 0,
	  -EPROTO },
	{ "type RKEY_RSP", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_RKEY_RSP) }, 0,
	  0, -EPROTO },
	{ "type IO_RSP", RDQ, 0, { P16(IOREQ, type, RTRS_MSG_IO_RSP) }, 0, 0,
	  -EPROTO },
	{ "type 10", RDQ, 0, { P16(IOREQ, type, 10) }, 0, 0, -EPROTO },
	{ "type 0xffff", RDQ, 0, { P16(IOREQ, type, 0xffff) }, 0, 0, -EPROTO },

	/*
	 * Header and user message: within the room and the SEND.  A request
	 * without inline data has the whole receive buffer, header room and
	 * inline room.
	 */
	{ "READ_REQ, header and message fill the room", RDQ, 0, {},
	  IOREQ_LEN - 16, 16, 0 },
	{ "READ_REQ, header and message one beyond the room", RDQ, 0, {},
	  IOREQ_LEN - 16, 15, -ERANGE },
	{ "READ_REQ, no user message", RDQ, -(long)USR21,
	  { P16(IOREQ, usr_len, 0) }, 0, 0, 0 },
	{ "READ_REQ, user message beyond the header room", RDQ,
	  (long)HDR21 + 1 - IOREQ_LEN,
	  { P16(IOREQ, usr_len, HDR21 + 1 - sizeof(IOREQ)) }, 0, 0, 0 },
	{ "READ_REQ, user message fills the room", RDQ,
	  (long)HDR21 + INLINE21 - IOREQ_LEN,
	  { P16(IOREQ, usr_len, HDR21 + INLINE21 - sizeof(IOREQ)) }, 0, 0, 0 },
	{ "READ_REQ, user message one beyond the room", RDQ,
	  (long)HDR21 + INLINE21 + 1 - IOREQ_LEN,
	  { P16(IOREQ, usr_len, HDR21 + INLINE21 + 1 - sizeof(IOREQ)) }, 0, 0,
	  -ERANGE },
	{ "READ_REQ, usr_len 0xffff", RDQ, 0, { P16(IOREQ, usr_len, 0xffff) },
	  0, 0, -ERANGE },
	{ "READ_REQ, usr_len 0xffff, room 0xffffffff", RDQ, 0,
	  { P16(IOREQ, usr_len, 0xffff) }, U32_MAX, 0, -EMSGSIZE },
	{ "READ_REQ, usr_len 0xffff received, room 0xffffffff", RDQ,
	  0xffff - (long)USR21, { P16(IOREQ, usr_len, 0xffff) }, U32_MAX, 0,
	  0 },
	{ "READ_REQ, user message one beyond the SEND", RDQ, 0,
	  { P16(IOREQ, usr_len, USR21 + 1) }, 0, 0, -EMSGSIZE },
	{ "READ_REQ, header only", RDQ, -(long)USR21, {}, 0, 0, -EMSGSIZE },
	{ "WRITE_REQ, user message one beyond the room", WRQ,
	  (long)HDR21 + INLINE21 + 1 - IOREQ_LEN,
	  { P16(IOREQ, usr_len, HDR21 + INLINE21 + 1 - sizeof(IOREQ)) }, 0, 0,
	  -ERANGE },
	{ "WRITE_REQ, user message one beyond the SEND", WRQ, 0,
	  { P16(IOREQ, usr_len, USR21 + 1) }, 0, 0, -EMSGSIZE },

	/* Message id. */
	{ "READ_REQ, message id 0", RDQ, 0, { P32(IOREQ, msg_id, 0) }, 0, 0,
	  0 },
	{ "READ_REQ, last message id", RDQ, 0, { P32(IOREQ, msg_id, QD21 - 1) },
	  0, 0, 0 },
	{ "READ_REQ, message id at the queue depth", RDQ, 0,
	  { P32(IOREQ, msg_id, QD21) }, 0, 0, -ERANGE },
	{ "READ_REQ, message id 0x10000", RDQ, 0,
	  { P32(IOREQ, msg_id, 0x10000) }, 0, 0, -ERANGE },
	{ "READ_REQ, message id 0xffffffff", RDQ, 0,
	  { P32(IOREQ, msg_id, U32_MAX) }, 0, 0, -ERANGE },
	{ "WRITE_REQ, message id at the queue depth", WRQ, 0,
	  { P32(IOREQ, msg_id, QD21) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, last message id", WIN, 0,
	  { P32(INL, msg_id, QD21 - 1) }, 0, 0, 0 },
	{ "WRITE_INLINE, message id at the queue depth", WIN, 0,
	  { P32(INL, msg_id, QD21) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, message id 0x10000", WIN, 0,
	  { P32(INL, msg_id, 0x10000) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, message id 0xffffffff", WIN, 0,
	  { P32(INL, msg_id, U32_MAX) }, 0, 0, -ERANGE },

	/* Data length of a READ_REQ or WRITE_REQ. */
	{ "READ_REQ, data length 0", RDQ, 0, { P32(IOREQ, desc.len, 0) }, 0, 0,
	  -ERANGE },
	/* No data, as rnbd's close and flush: no region, all of it 0. */
	{ "READ_REQ, no data and no region", RDQ, 0,
	  { P32(IOREQ, desc.len, 0), P64(IOREQ, desc.addr, 0),
	    P32(IOREQ, desc.key, 0) }, 0, 0, 0 },
	{ "WRITE_REQ, no data and no region", WRQ, 0,
	  { P32(IOREQ, desc.len, 0), P64(IOREQ, desc.addr, 0),
	    P32(IOREQ, desc.key, 0) }, 0, 0, 0 },
	{ "READ_REQ, no data but a key", RDQ, 0,
	  { P32(IOREQ, desc.len, 0), P64(IOREQ, desc.addr, 0) }, 0, 0,
	  -ERANGE },
	{ "WRITE_REQ, no data but an address", WRQ, 0,
	  { P32(IOREQ, desc.len, 0), P32(IOREQ, desc.key, 0) }, 0, 0,
	  -ERANGE },
	{ "READ_REQ, data length 1", RDQ, 0, { P32(IOREQ, desc.len, 1) }, 0, 0,
	  0 },
	{ "READ_REQ, data length max IO", RDQ, 0,
	  { P32(IOREQ, desc.len, MAX_IO21) }, 0, 0, 0 },
	{ "READ_REQ, data length max IO + 1", RDQ, 0,
	  { P32(IOREQ, desc.len, MAX_IO21 + 1) }, 0, 0, -ERANGE },
	{ "READ_REQ, data length 0xffffffff", RDQ, 0,
	  { P32(IOREQ, desc.len, U32_MAX) }, 0, 0, -ERANGE },
	{ "WRITE_REQ, data length 0", WRQ, 0, { P32(IOREQ, desc.len, 0) }, 0,
	  0, -ERANGE },
	{ "WRITE_REQ, data length max IO", WRQ, 0,
	  { P32(IOREQ, desc.len, MAX_IO21) }, 0, 0, 0 },
	{ "WRITE_REQ, data length max IO + 1", WRQ, 0,
	  { P32(IOREQ, desc.len, MAX_IO21 + 1) }, 0, 0, -ERANGE },

	/* Nothing after the user message of a READ_REQ or WRITE_REQ. */
	{ "READ_REQ, one byte after the user message", RDQ, 1, {}, 0, 0,
	  -EPROTO },
	{ "READ_REQ, user message one short of the SEND", RDQ, 0,
	  { P16(IOREQ, usr_len, USR21 - 1) }, 0, 0, -EPROTO },
	{ "READ_REQ, padded to the header room", RDQ, (long)HDR21 - IOREQ_LEN,
	  {}, 0, 0, -EPROTO },
	{ "WRITE_REQ, data after the user message", WRQ, DESC_LEN21, {}, 0, 0,
	  -EPROTO },

	/* The client's memory region must not wrap. */
	{ "READ_REQ, region at address 0", RDQ, 0,
	  { P64(IOREQ, desc.addr, 0) }, 0, 0, 0 },
	{ "READ_REQ, region ends at address U64_MAX", RDQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - DESC_LEN21) }, 0, 0, 0 },
	{ "READ_REQ, region ends at 2^64", RDQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - DESC_LEN21 + 1) }, 0, 0, -ERANGE },
	{ "READ_REQ, region at U64_MAX", RDQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX) }, 0, 0, -ERANGE },
	{ "READ_REQ, max IO ending at address U64_MAX", RDQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - MAX_IO21),
	    P32(IOREQ, desc.len, MAX_IO21) }, 0, 0, 0 },
	{ "READ_REQ, max IO wrapping by one byte", RDQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - MAX_IO21 + 2),
	    P32(IOREQ, desc.len, MAX_IO21) }, 0, 0, -ERANGE },
	{ "WRITE_REQ, region at U64_MAX - 1", WRQ, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - 1) }, 0, 0, -ERANGE },

	/* WRITE_INLINE: header room, then exactly data_len bytes. */
	{ "WRITE_INLINE, no user message", WIN, 0, { P16(INL, usr_len, 0) },
	  0, 0, 0 },
	{ "WRITE_INLINE, user message fills the room", WIN, 0,
	  { P16(INL, usr_len, HDR21 - sizeof(INL)) }, 0, 0, 0 },
	{ "WRITE_INLINE, user message one beyond the room", WIN, 0,
	  { P16(INL, usr_len, HDR21 + 1 - sizeof(INL)) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, usr_len 0xffff", WIN, 0, { P16(INL, usr_len, 0xffff) },
	  0, 0, -ERANGE },
	{ "WRITE_INLINE, data length 1", WIN, 1 - (long)DATA21,
	  { P32(INL, data_len, 1) }, 0, 0, 0 },
	{ "WRITE_INLINE, data length max inline", WIN,
	  (long)INLINE21 - DATA21, { P32(INL, data_len, INLINE21) }, 0, 0, 0 },
	{ "WRITE_INLINE, data length max inline + 1", WIN,
	  (long)INLINE21 + 1 - DATA21, { P32(INL, data_len, INLINE21 + 1) }, 0,
	  0, -ERANGE },
	{ "WRITE_INLINE, data length 0", WIN, -(long)DATA21,
	  { P32(INL, data_len, 0) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, data length 0xffffffff", WIN, 0,
	  { P32(INL, data_len, U32_MAX) }, 0, 0, -ERANGE },
	{ "WRITE_INLINE, one byte short", WIN, -1, {}, 0, 0, -EMSGSIZE },
	{ "WRITE_INLINE, one byte long", WIN, 1, {}, 0, 0, -EPROTO },
	{ "WRITE_INLINE, no data", WIN, -(long)DATA21, {}, 0, 0, -EMSGSIZE },
	{ "WRITE_INLINE, data right after the user message", WIN,
	  (long)sizeof(INL) + USR21 - HDR21, {}, 0, 0, -EMSGSIZE },
	{ "WRITE_INLINE, header room one beyond the SEND's", WIN, 0, {},
	  HDR21 + 1, 0, -EMSGSIZE },
	{ "WRITE_INLINE, header room one short of the SEND's", WIN, 0, {},
	  HDR21 - 1, 0, -EPROTO },
	{ "WRITE_INLINE, header room 0xffffffff", WIN, 0, {}, U32_MAX, 0,
	  -EMSGSIZE },
	{ "WRITE_INLINE, data length 0xffffffff, inline limit 0xffffffff", WIN,
	  0, { P32(INL, data_len, U32_MAX) }, 0, U32_MAX, -EMSGSIZE },

	/* READ_BUF: a READ_REQ of 1 to max_read_buf bytes, if announced. */
	{ "READ_BUF, valid", RDB, 0, {}, 0, 0, 0 },
	{ "READ_BUF, on a path that takes none", RDB, 0, {}, 0, 0, -EPROTO,
	  NO_RDBUF },
	{ "READ_BUF, data length 1", RDB, 0, { P32(IOREQ, desc.len, 1) }, 0, 0,
	  0 },
	{ "READ_BUF, data length max read buffer + 1", RDB, 0,
	  { P32(IOREQ, desc.len, RDBUF21 + 1) }, 0, 0, -ERANGE },
	{ "READ_BUF, data length max IO", RDB, 0,
	  { P32(IOREQ, desc.len, MAX_IO21) }, 0, 0, -ERANGE },
	{ "READ_BUF, data length 0xffffffff", RDB, 0,
	  { P32(IOREQ, desc.len, U32_MAX) }, 0, 0, -ERANGE },
	{ "READ_BUF, no data and no region", RDB, 0,
	  { P32(IOREQ, desc.len, 0), P64(IOREQ, desc.addr, 0),
	    P32(IOREQ, desc.key, 0) }, 0, 0, -ERANGE },
	{ "READ_BUF, a larger read buffer limit", RDB, 0,
	  { P32(IOREQ, desc.len, RDBUF21 + 1) }, 0, 0, 0, 2 * RDBUF21 },
	{ "READ_BUF, message id at the queue depth", RDB, 0,
	  { P32(IOREQ, msg_id, QD21) }, 0, 0, -ERANGE },
	{ "READ_BUF, one byte after the user message", RDB, 1, {}, 0, 0,
	  -EPROTO },
	{ "READ_BUF, header only", RDB, -(long)USR21, {}, 0, 0, -EMSGSIZE },
	{ "READ_BUF, region ends at 2^64", RDB, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - RDBUF21 + 1) }, 0, 0, -ERANGE },
	{ "READ_BUF, region ends at address U64_MAX", RDB, 0,
	  { P64(IOREQ, desc.addr, U64_MAX - RDBUF21) }, 0, 0, 0 },
};

static void io21_case_desc(const struct io21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io21, io21_cases, io21_case_desc);

/* Write the valid request of @type into @buf; return its length. */
static long put_req_2_1(u8 *buf, u16 type)
{
	union {
		struct rtrs_msg_io_req req;
		struct rtrs_msg_write_inline inl;
	} h = {};

	if (type == RTRS_MSG_WRITE_INLINE) {
		h.inl.type = cpu_to_le16(type);
		h.inl.usr_len = cpu_to_le16(USR21);
		h.inl.msg_id = cpu_to_le32(9);
		h.inl.data_len = cpu_to_le32(DATA21);
		memcpy(buf, &h.inl, sizeof(h.inl));
		memset(buf + sizeof(h.inl), 0x5a, USR21);
		/* Padding stays 0; the data fills the rest of @buf. */
		return INL_LEN;
	}
	h.req.type = cpu_to_le16(type);
	h.req.usr_len = cpu_to_le16(USR21);
	h.req.msg_id = cpu_to_le32(7);
	h.req.desc.addr = cpu_to_le64(ADDR21);
	h.req.desc.key = cpu_to_le32(RKEY21);
	h.req.desc.len = cpu_to_le32(type == RTRS_MSG_READ_BUF ? RDBUF21 :
				     DESC_LEN21);
	memcpy(buf, &h.req, sizeof(h.req));
	memset(buf + sizeof(h.req), 0x5a, USR21);
	return IOREQ_LEN;
}

static void io_req_2_1(struct kunit *test)
{
	const struct io21_case *c = test->param_value;
	struct rtrs_srv_limits_2_1 lim = {
		.queue_depth = QD21,
		.max_io_size = MAX_IO21,
		.max_hdr_size = c->max_hdr ?: HDR21,
		.max_inline_size = c->max_inline ?: INLINE21,
		.max_read_buf = c->max_rdbuf == NO_RDBUF ? 0 :
				c->max_rdbuf ?: RDBUF21,
	};
	struct rtrs_srv_io_2_1 io;
	u8 *msg, *rcvd;
	size_t i, len;

	msg = kunit_kzalloc(test, BUF21, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	memset(msg + HDR21, 0xa5, BUF21 - HDR21);
	len = put_req_2_1(msg, c->type) + c->len_delta;
	KUNIT_ASSERT_LE(test, len, BUF21);
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(msg, &c->p[i]);

	/* Exactly what was received: KASAN sees any read beyond it. */
	rcvd = kunit_kmalloc(test, len ?: 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rcvd);
	memcpy(rcvd, msg, len);

	KUNIT_ASSERT_EQ(test, rtrs_srv_check_io_req_2_1(rcvd, len, &lim, &io),
			c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, io.type, c->type);
	if (c->type == RTRS_MSG_WRITE_INLINE) {
		KUNIT_EXPECT_EQ(test, io.usr_len,
				get_unaligned_le16(msg + offsetof(INL, usr_len)));
		KUNIT_EXPECT_EQ(test, io.msg_id,
				get_unaligned_le32(msg + offsetof(INL, msg_id)));
		KUNIT_EXPECT_EQ(test, io.data_len,
				get_unaligned_le32(msg + offsetof(INL, data_len)));
		KUNIT_EXPECT_EQ(test, io.addr, 0);
		KUNIT_EXPECT_EQ(test, io.rkey, 0);
		return;
	}
	KUNIT_EXPECT_EQ(test, io.usr_len,
			get_unaligned_le16(msg + offsetof(IOREQ, usr_len)));
	KUNIT_EXPECT_EQ(test, io.msg_id,
			get_unaligned_le32(msg + offsetof(IOREQ, msg_id)));
	KUNIT_EXPECT_EQ(test, io.data_len,
			get_unaligned_le32(msg + offsetof(IOREQ, desc.len)));
	KUNIT_EXPECT_EQ(test, io.addr,
			get_unaligned_le64(msg + offsetof(IOREQ, desc.addr)));
	KUNIT_EXPECT_EQ(test, io.rkey,
			get_unaligned_le32(msg + offsetof(IOREQ, desc.key)));
}

/* Tagged message ids: the slot below the queue depth, any tag. */
struct tag21_case {
	const char *name;
	u16 type;
	u32 msg_id;
	bool tags;		/* the session tags its message ids */
	int want;
	u32 slot;		/* decoded, when @want is 0 */
	u32 tag;
};

static const struct tag21_case tag21_cases[] = {
	{ "READ_REQ, tagged", RTRS_MSG_READ_REQ, 0xabcd0007, true, 0, 7,
	  0xabcd },
	{ "WRITE_REQ, tag 0", RTRS_MSG_WRITE_REQ, 7, true, 0, 7, 0 },
	{ "WRITE_INLINE, last slot, tag 0xffff", RTRS_MSG_WRITE_INLINE,
	  0xffff0000 | (QD21 - 1), true, 0, QD21 - 1, 0xffff },
	{ "READ_BUF, tagged", RTRS_MSG_READ_BUF, 0x50003, true, 0, 3, 5 },
	{ "READ_REQ, tagged, slot at the queue depth", RTRS_MSG_READ_REQ,
	  0x10000 | QD21, true, -ERANGE },
	{ "WRITE_INLINE, tagged, slot 0xffff", RTRS_MSG_WRITE_INLINE,
	  U32_MAX, true, -ERANGE },
	{ "READ_REQ, a tag where none is agreed", RTRS_MSG_READ_REQ,
	  0xabcd0007, false, -ERANGE },
	{ "READ_REQ, untagged", RTRS_MSG_READ_REQ, 7, false, 0, 7, 0 },
};

static void tag21_case_desc(const struct tag21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(tag21, tag21_cases, tag21_case_desc);

static void io_req_2_1_tagged(struct kunit *test)
{
	const struct tag21_case *c = test->param_value;
	struct rtrs_srv_limits_2_1 lim = {
		.queue_depth = QD21,
		.max_io_size = MAX_IO21,
		.max_hdr_size = HDR21,
		.max_inline_size = INLINE21,
		.max_read_buf = RDBUF21,
		.tags = c->tags,
	};
	struct rtrs_srv_io_2_1 io;
	__le32 id = cpu_to_le32(c->msg_id);
	u8 *msg;
	long len;

	msg = kunit_kzalloc(test, BUF21, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	len = put_req_2_1(msg, c->type);
	/* The message id is at the same offset in both headers. */
	BUILD_BUG_ON(offsetof(IOREQ, msg_id) != offsetof(INL, msg_id));
	memcpy(msg + offsetof(IOREQ, msg_id), &id, sizeof(id));

	KUNIT_ASSERT_EQ(test, rtrs_srv_check_io_req_2_1(msg, len, &lim, &io),
			c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, io.type, c->type);
	KUNIT_EXPECT_EQ(test, io.msg_id, c->slot);
	KUNIT_EXPECT_EQ(test, io.tag, c->tag);
}

static struct kunit_case rtrs_srv_validate_cases[] = {
	KUNIT_CASE_PARAM(conn_req, conn_gen_params),
	KUNIT_CASE(conn_req_empty),
	KUNIT_CASE_PARAM(info_req, info_gen_params),
	KUNIT_CASE(info_req_longest_name),
	KUNIT_CASE(imm_types),
	KUNIT_CASE(msg_verdicts),
	KUNIT_CASE_PARAM(io_req, io_req_gen_params),
	KUNIT_CASE_PARAM(io_hdr, io_hdr_gen_params),
	KUNIT_CASE_PARAM(io_req_2_1, io21_gen_params),
	KUNIT_CASE_PARAM(io_req_2_1_tagged, tag21_gen_params),
	{}
};

static struct kunit_suite rtrs_srv_validate_suite = {
	.name = "rtrs-srv-validate",
	.test_cases = rtrs_srv_validate_cases,
};

kunit_test_suite(rtrs_srv_validate_suite);

MODULE_DESCRIPTION("KUnit tests of the RTRS server's checks of wire messages");
MODULE_LICENSE("GPL");
