// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the server rejects every malformed field a client sends.
 *
 * For each message the server receives (connect request, INFO_REQ,
 * immediate data, READ and WRITE headers) a valid instance passes, and
 * each case breaks one field, or sets one edge value, and expects the
 * precise errno of rtrs-srv-validate.c's rules.
 *
 * The checks are pure functions.  Rather than export them from
 * rtrs-server.ko for this module alone, the module compiles their source
 * in: it tests the very code the server runs, and needs no server loaded.
 */
#include <kunit/test.h>
#include <linux/errno.h>
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
	u32 type;
	size_t i;

	for (type = 0; type < BIT(RTRS_IMM_TYPE_BITS); type++) {
		enum rtrs_srv_msg want = RTRS_SRV_MSG_OTHER;

		if (type == RTRS_IO_REQ_IMM)
			want = RTRS_SRV_MSG_IO_REQ;
		else if (type == RTRS_HB_MSG_IMM)
			want = RTRS_SRV_MSG_HB;
		else if (type == RTRS_HB_ACK_IMM)
			want = RTRS_SRV_MSG_HB_ACK;
		for (i = 0; i < ARRAY_SIZE(payloads); i++)
			KUNIT_EXPECT_EQ_MSG(test,
					    rtrs_srv_msg_of_imm(rtrs_imm(type, payloads[i])),
					    want, "type %u payload %#x", type,
					    payloads[i]);
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

static struct kunit_case rtrs_srv_validate_cases[] = {
	KUNIT_CASE_PARAM(conn_req, conn_gen_params),
	KUNIT_CASE(conn_req_empty),
	KUNIT_CASE_PARAM(info_req, info_gen_params),
	KUNIT_CASE(info_req_longest_name),
	KUNIT_CASE(imm_types),
	KUNIT_CASE(msg_verdicts),
	KUNIT_CASE_PARAM(io_req, io_req_gen_params),
	KUNIT_CASE_PARAM(io_hdr, io_hdr_gen_params),
	{}
};

static struct kunit_suite rtrs_srv_validate_suite = {
	.name = "rtrs-srv-validate",
	.test_cases = rtrs_srv_validate_cases,
};

kunit_test_suite(rtrs_srv_validate_suite);

MODULE_DESCRIPTION("KUnit tests of the RTRS server's checks of wire messages");
MODULE_LICENSE("GPL");
