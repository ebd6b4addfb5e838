// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the client rejects every malformed field a server sends.
 *
 * For each message the client receives (connection response, INFO_RSP,
 * the immediate of an IO response, RKEY_RSP, and on a 2.1 path the
 * INFO_RSP and the IO response) a valid instance passes, and each case
 * breaks one field, or sets one edge value, and expects the precise errno
 * of rtrs-clt-validate.c's rules.
 *
 * Like the server's suite, the module compiles the checks' source in: it
 * tests the very code the client runs, and needs no client loaded.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "rtrs-clt-validate.c"
#include "rtrs-validate-test.h"

/* Connection response. */

#define RSP struct rtrs_msg_conn_rsp
#define RSP_LEN sizeof(RSP)
#define QD 128
#define MAX_IO (124 << 10)
#define HDR 4096
/* Smallest header room: a READ header with one descriptor. */
#define MIN_HDR (sizeof(struct rtrs_msg_rdma_read) + sizeof(struct rtrs_sg_desc))

struct rsp_case {
	const char *name;
	size_t len;
	u32 queue_depth;	/* of the first connection; 0: this is it */
	struct patch p[2];
	int want;
};

static const struct rsp_case rsp_cases[] = {
	{ "valid", RSP_LEN, 0, {}, 0 },
	{ "valid, later connection", RSP_LEN, QD, {}, 0 },
	{ "longer private data", RSP_LEN + 8, 0, {}, 0 },
	{ "one byte short", RSP_LEN - 1, 0, {}, -EMSGSIZE },
	{ "empty", 0, 0, {}, -EMSGSIZE },
	{ "magic off by one", RSP_LEN, 0, { P16(RSP, magic, RTRS_MAGIC + 1) },
	  -EPROTO },
	{ "magic byte-swapped", RSP_LEN, 0, { P16(RSP, magic, 0xBD1B) },
	  -EPROTO },
	{ "version 1.0", RSP_LEN, 0, { P16(RSP, version, 0x0100) },
	  -EPROTONOSUPPORT },
	{ "version 3.0", RSP_LEN, 0, { P16(RSP, version, 0x0300) },
	  -EPROTONOSUPPORT },
	/* A server answers at most the minor the client asked for. */
	{ "version 2.7, above the minor asked for", RSP_LEN, 0,
	  { P16(RSP, version, 0x0207) }, -EPROTO },
	{ "version 2.(asked + 1)", RSP_LEN, 0,
	  { P16(RSP, version, RTRS_PROTO_VER_MAJOR << 8 |
			      (RTRS_PROTO_MINOR_MAX + 1)) }, -EPROTO },
	{ "version 2.0 (what mainline answers)", RSP_LEN, 0,
	  { P16(RSP, version, 0x0200) }, 0 },
	{ "errno -ENOMEM", RSP_LEN, 0, { P16(RSP, errno, (u16)-ENOMEM) },
	  -EREMOTEIO },
	{ "errno 1", RSP_LEN, 0, { P16(RSP, errno, 1) }, -EREMOTEIO },
	{ "queue depth 0", RSP_LEN, 0, { P16(RSP, queue_depth, 0) }, -ERANGE },
	{ "queue depth 1", RSP_LEN, 0, { P16(RSP, queue_depth, 1) }, 0 },
	/* 0xffff chunks leave 12 bits of offset: chunks of 4 KiB at most. */
	{ "queue depth 0xffff, chunks of 128 KiB", RSP_LEN, 0,
	  { P16(RSP, queue_depth, 0xffff) }, -ERANGE },
	{ "queue depth other than the first connection's", RSP_LEN, QD - 1,
	  {}, -ERANGE },
	{ "max IO size 0", RSP_LEN, 0, { P32(RSP, max_io_size, 0) }, -ERANGE },
	{ "header room 0", RSP_LEN, 0, { P32(RSP, max_hdr_size, 0) },
	  -ERANGE },
	{ "header room one short of a READ header", RSP_LEN, 0,
	  { P32(RSP, max_hdr_size, MIN_HDR - 1) }, -ERANGE },
	{ "header room of a READ header", RSP_LEN, 0,
	  { P32(RSP, max_hdr_size, MIN_HDR) }, 0 },
	{ "header room at the limit", RSP_LEN, 0,
	  { P32(RSP, max_hdr_size, RTRS_CLT_MAX_HDR_SIZE),
	    P32(RSP, max_io_size, 4096) }, 0 },
	{ "header room beyond the limit", RSP_LEN, 0,
	  { P32(RSP, max_hdr_size, RTRS_CLT_MAX_HDR_SIZE + 1),
	    P32(RSP, max_io_size, 4096) }, -ERANGE },
	/* Queue depth 128 leaves 21 bits of offset: chunks of 2 MiB. */
	{ "chunk as large as the offset bits allow", RSP_LEN, 0,
	  { P32(RSP, max_io_size, (2 << 20) - HDR) }, 0 },
	{ "chunk one byte larger", RSP_LEN, 0,
	  { P32(RSP, max_io_size, (2 << 20) - HDR + 1) }, -ERANGE },
	{ "max IO size 0xffffffff", RSP_LEN, 0,
	  { P32(RSP, max_io_size, 0xffffffff) }, -ERANGE },
	{ "unknown flags are ignored", RSP_LEN, 0,
	  { P32(RSP, flags, 0xfffffffe) }, 0 },
	{ "reserved bytes are ignored", RSP_LEN, 0,
	  { P8(RSP, reserved[0], 0xff), P8(RSP, reserved[35], 0xff) }, 0 },
};

static void rsp_case_desc(const struct rsp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rsp, rsp_cases, rsp_case_desc);

static void conn_rsp(struct kunit *test)
{
	const struct rsp_case *c = test->param_value;
	union {
		struct rtrs_msg_conn_rsp rsp;
		u8 bytes[RSP_LEN + 8];
	} m = {};
	struct rtrs_clt_limits lim;
	size_t i;

	m.rsp.magic = cpu_to_le16(RTRS_MAGIC);
	m.rsp.version = cpu_to_le16(RTRS_PROTO_VER);
	m.rsp.queue_depth = cpu_to_le16(QD);
	m.rsp.max_io_size = cpu_to_le32(MAX_IO);
	m.rsp.max_hdr_size = cpu_to_le32(HDR);
	m.rsp.flags = cpu_to_le32(RTRS_MSG_NEW_RKEY_F);
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(&m, &c->p[i]);

	KUNIT_ASSERT_EQ(test, rtrs_clt_check_conn_rsp(&m, c->len,
						      RTRS_PROTO_MINOR_MAX,
						      c->queue_depth, &lim),
			c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, lim.version, le16_to_cpu(m.rsp.version));
	KUNIT_EXPECT_EQ(test, lim.queue_depth, le16_to_cpu(m.rsp.queue_depth));
	KUNIT_EXPECT_EQ(test, lim.max_io_size, le32_to_cpu(m.rsp.max_io_size));
	KUNIT_EXPECT_EQ(test, lim.max_hdr_size, le32_to_cpu(m.rsp.max_hdr_size));
	KUNIT_EXPECT_EQ(test, lim.chunk_size,
			lim.max_io_size + lim.max_hdr_size);
	KUNIT_EXPECT_EQ(test, lim.off_bits, rtrs_imm_off_bits(lim.queue_depth));
	KUNIT_EXPECT_EQ(test, lim.flags, le32_to_cpu(m.rsp.flags));
	KUNIT_EXPECT_EQ(test, lim.max_inline_size, 0);
}

/* Connection response of a 2.1 path, to a client that asked for 2.1. */

#define RSP21 struct rtrs_msg_conn_rsp_2_1
#define RSP21_LEN sizeof(RSP21)
#define MAX_IO21 SZ_1M
#define HDR21 512
#define INLINE21 4096
#define RDBUF21 4096
/* Responses of earlier 2.1 servers: no flags, or no max_read_buf either. */
#define RSP21_NOFLAGS_LEN offsetofend(RSP21, max_read_buf)
#define RSP21_OLD_LEN offsetofend(RSP21, max_inline_size)
#define VER21 (RTRS_PROTO_VER_MAJOR << 8 | RTRS_PROTO_MINOR_2_1)
/* Smallest header room: a READ or WRITE request header. */
#define MIN_HDR21 sizeof(struct rtrs_msg_io_req)

struct rsp21_case {
	const char *name;
	size_t len;
	u32 queue_depth;	/* of the first connection; 0: this is it */
	struct patch p[2];
	int want;
	bool asked_2_0;		/* the client asked for 2.0, not 2.1 */
};

static const struct rsp21_case rsp21_cases[] = {
	{ "valid", RSP21_LEN, 0, {}, 0 },
	{ "valid, later connection", RSP21_LEN, QD, {}, 0 },
	/* IB's CM pads private data with zeros to its full size. */
	{ "longer private data", RSP_LEN, 0, {}, 0 },
	{ "one byte short of flags: none", RSP21_LEN - 1, 0, {}, 0 },
	{ "without flags: none", RSP21_NOFLAGS_LEN, 0, {}, 0 },
	{ "one byte short of max_read_buf: none", RSP21_NOFLAGS_LEN - 1, 0, {},
	  0 },
	{ "without max_read_buf: none", RSP21_OLD_LEN, 0, {}, 0 },
	{ "no flags", RSP21_LEN, 0, { P32(RSP21, flags, 0) }, 0 },
	{ "unknown flags are ignored", RSP21_LEN, 0,
	  { P32(RSP21, flags, ~RTRS_CONN_RSP_MSG_TAGS) }, 0 },
	{ "all flags", RSP21_LEN, 0, { P32(RSP21, flags, U32_MAX) }, 0 },
	{ "one byte short of max_inline_size", RSP21_OLD_LEN - 1, 0, {},
	  -EMSGSIZE },
	{ "no READ_BUF", RSP21_LEN, 0, { P32(RSP21, max_read_buf, 0) }, 0 },
	{ "READ_BUF of one byte", RSP21_LEN, 0,
	  { P32(RSP21, max_read_buf, 1) }, 0 },
	/* Cut to the IO size, for the client to take what it can hold. */
	{ "READ_BUF of the max IO size", RSP21_LEN, 0,
	  { P32(RSP21, max_read_buf, MAX_IO21) }, 0 },
	{ "READ_BUF of 0xffffffff", RSP21_LEN, 0,
	  { P32(RSP21, max_read_buf, 0xffffffff) }, 0 },
	{ "magic, version and errno only", 6, 0, {}, -EMSGSIZE },
	{ "one byte short of the errno", 5, 0, {}, -EMSGSIZE },
	{ "magic off by one", RSP21_LEN, 0,
	  { P16(RSP21, magic, RTRS_MAGIC + 1) }, -EPROTO },
	{ "version 3.1", RSP21_LEN, 0, { P16(RSP21, version, 0x0301) },
	  -EPROTONOSUPPORT },
	{ "version 2.2, above the minor asked for", RSP21_LEN, 0,
	  { P16(RSP21, version, 0x0202) }, -EPROTO },
	{ "version 2.1 to a client that asked for 2.0", RSP21_LEN, 0, {},
	  -EPROTO, true },
	{ "errno -ENOMEM", RSP21_LEN, 0, { P16(RSP21, errno, (u16)-ENOMEM) },
	  -EREMOTEIO },
	{ "queue depth 0", RSP21_LEN, 0, { P16(RSP21, queue_depth, 0) },
	  -ERANGE },
	{ "queue depth 1", RSP21_LEN, 0, { P16(RSP21, queue_depth, 1) }, 0 },
	/* No immediate to share bits with: any depth will do. */
	{ "queue depth 0xffff", RSP21_LEN, 0,
	  { P16(RSP21, queue_depth, 0xffff) }, 0 },
	{ "queue depth other than the first connection's", RSP21_LEN,
	  QD - 1, {}, -ERANGE },
	{ "max IO size one byte short of a page", RSP21_LEN, 0,
	  { P32(RSP21, max_io_size, 4095), P32(RSP21, max_inline_size, 0) },
	  -ERANGE },
	{ "max IO size of a page", RSP21_LEN, 0,
	  { P32(RSP21, max_io_size, 4096) }, 0 },
	{ "max IO size 0xffffffff", RSP21_LEN, 0,
	  { P32(RSP21, max_io_size, 0xffffffff) }, 0 },
	{ "header room 0", RSP21_LEN, 0, { P32(RSP21, max_hdr_size, 0) },
	  -ERANGE },
	{ "header room one short of a request header", RSP21_LEN, 0,
	  { P32(RSP21, max_hdr_size, MIN_HDR21 - 1) }, -ERANGE },
	{ "header room of a request header", RSP21_LEN, 0,
	  { P32(RSP21, max_hdr_size, MIN_HDR21) }, 0 },
	{ "header room at the limit", RSP21_LEN, 0,
	  { P32(RSP21, max_hdr_size, RTRS_CLT_MAX_HDR_SIZE) }, 0 },
	{ "header room beyond the limit", RSP21_LEN, 0,
	  { P32(RSP21, max_hdr_size, RTRS_CLT_MAX_HDR_SIZE + 1) }, -ERANGE },
	{ "no inline WRITE", RSP21_LEN, 0,
	  { P32(RSP21, max_inline_size, 0) }, 0 },
	{ "inline size of the max IO size, 1 MiB", RSP21_LEN, 0,
	  { P32(RSP21, max_inline_size, MAX_IO21) }, -ERANGE },
	{ "inline size the client's most", RSP21_LEN, 0,
	  { P32(RSP21, max_inline_size, RTRS_CLT_MAX_INLINE_2_1) }, 0 },
	{ "inline size one byte above the client's most", RSP21_LEN, 0,
	  { P32(RSP21, max_inline_size, RTRS_CLT_MAX_INLINE_2_1 + 1) },
	  -ERANGE },
	{ "inline size of the max IO size, 8 KiB", RSP21_LEN, 0,
	  { P32(RSP21, max_io_size, SZ_8K), P32(RSP21, max_inline_size, SZ_8K) },
	  0 },
	{ "inline size one byte above the max IO size", RSP21_LEN, 0,
	  { P32(RSP21, max_io_size, SZ_8K),
	    P32(RSP21, max_inline_size, SZ_8K + 1) }, -ERANGE },
	{ "inline size 0xffffffff", RSP21_LEN, 0,
	  { P32(RSP21, max_inline_size, 0xffffffff) }, -ERANGE },
};

static void rsp21_case_desc(const struct rsp21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rsp21, rsp21_cases, rsp21_case_desc);

static void conn_rsp_2_1(struct kunit *test)
{
	const struct rsp21_case *c = test->param_value;
	union {
		struct rtrs_msg_conn_rsp_2_1 rsp;
		u8 bytes[RSP_LEN];
	} m = {};
	struct rtrs_clt_limits lim;
	u8 asked = c->asked_2_0 ? 0 : RTRS_PROTO_MINOR_2_1;
	size_t i;

	m.rsp.magic = cpu_to_le16(RTRS_MAGIC);
	m.rsp.version = cpu_to_le16(VER21);
	m.rsp.queue_depth = cpu_to_le16(QD);
	m.rsp.max_io_size = cpu_to_le32(MAX_IO21);
	m.rsp.max_hdr_size = cpu_to_le32(HDR21);
	m.rsp.max_inline_size = cpu_to_le32(INLINE21);
	m.rsp.max_read_buf = cpu_to_le32(RDBUF21);
	m.rsp.flags = cpu_to_le32(RTRS_CONN_RSP_MSG_TAGS);
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(&m, &c->p[i]);

	KUNIT_ASSERT_EQ(test, rtrs_clt_check_conn_rsp(&m, c->len, asked,
						      c->queue_depth, &lim),
			c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, lim.version, VER21);
	KUNIT_EXPECT_TRUE(test, rtrs_clt_lim_2_1(&lim));
	KUNIT_EXPECT_EQ(test, lim.queue_depth, le16_to_cpu(m.rsp.queue_depth));
	KUNIT_EXPECT_EQ(test, lim.max_io_size, le32_to_cpu(m.rsp.max_io_size));
	KUNIT_EXPECT_EQ(test, lim.max_hdr_size, le32_to_cpu(m.rsp.max_hdr_size));
	KUNIT_EXPECT_EQ(test, lim.max_inline_size,
			le32_to_cpu(m.rsp.max_inline_size));
	/* A response too short for max_read_buf takes no READ_BUF. */
	KUNIT_EXPECT_EQ(test, lim.max_read_buf, c->len < RSP21_NOFLAGS_LEN ? 0 :
			min(le32_to_cpu(m.rsp.max_read_buf),
			    le32_to_cpu(m.rsp.max_io_size)));
	KUNIT_EXPECT_EQ(test, lim.chunk_size, 0);
	KUNIT_EXPECT_EQ(test, lim.off_bits, 0);
	/* One too short for flags has none; unknown ones are dropped. */
	KUNIT_EXPECT_EQ(test, lim.flags, c->len < RSP21_LEN ? 0 :
			le32_to_cpu(m.rsp.flags) & RTRS_CONN_RSP_MSG_TAGS);
	KUNIT_EXPECT_EQ(test, rtrs_clt_lim_tags(&lim), lim.flags != 0);
}

/* A 2.0 response to a client that asked for 2.1 is what mainline sends. */
static void conn_rsp_2_0_to_2_1(struct kunit *test)
{
	struct rtrs_msg_conn_rsp rsp = {
		.magic		= cpu_to_le16(RTRS_MAGIC),
		.version	= cpu_to_le16(RTRS_PROTO_VER),
		.queue_depth	= cpu_to_le16(QD),
		.max_io_size	= cpu_to_le32(MAX_IO),
		.max_hdr_size	= cpu_to_le32(HDR),
		.flags		= cpu_to_le32(RTRS_MSG_NEW_RKEY_F),
	};
	struct rtrs_clt_limits lim;

	KUNIT_ASSERT_EQ(test, rtrs_clt_check_conn_rsp(&rsp, sizeof(rsp),
						      RTRS_PROTO_MINOR_2_1, 0,
						      &lim), 0);
	KUNIT_EXPECT_EQ(test, lim.version, RTRS_PROTO_VER);
	KUNIT_EXPECT_FALSE(test, rtrs_clt_lim_2_1(&lim));
	KUNIT_EXPECT_EQ(test, lim.chunk_size, MAX_IO + HDR);
	KUNIT_EXPECT_EQ(test, lim.max_inline_size, 0);
	KUNIT_EXPECT_EQ(test, lim.flags, RTRS_MSG_NEW_RKEY_F);
	/* Short of the 2.0 layout, though long enough for 2.1's. */
	KUNIT_EXPECT_EQ(test, rtrs_clt_check_conn_rsp(&rsp, RSP21_LEN,
						      RTRS_PROTO_MINOR_2_1, 0,
						      &lim), -EMSGSIZE);
}

static void conn_rsp_null(struct kunit *test)
{
	struct rtrs_clt_limits lim;

	KUNIT_EXPECT_EQ(test, rtrs_clt_check_conn_rsp(NULL, 0,
						      RTRS_PROTO_MINOR_MAX, 0,
						      &lim),
			-EMSGSIZE);
}

/* INFO_RSP: QD chunks of CHUNK bytes, in as many descriptors as given. */

#define CHUNK (128 << 10)
#define BASE 0x100000000ull

struct info_case {
	const char *name;
	u16 type;
	u16 sg_cnt;		/* descriptors in the message */
	u16 sg_cnt_field;	/* what sg_cnt says; 0: sg_cnt */
	int len_delta;		/* bytes received beyond the descriptors */
	u16 bad_desc;		/* index of a descriptor to change ... */
	u32 bad_len;		/* ... to this length; 0: none */
	int want;
};

static const struct info_case info_cases[] = {
	{ "valid, a descriptor per chunk", RTRS_MSG_INFO_RSP, QD, 0, 0, 0, 0, 0 },
	{ "valid, one descriptor", RTRS_MSG_INFO_RSP, 1, 0, 0, 0, 0, 0 },
	{ "valid, 4 descriptors", RTRS_MSG_INFO_RSP, 4, 0, 0, 0, 0, 0 },
	{ "longer receive", RTRS_MSG_INFO_RSP, QD, 0, 16, 0, 0, 0 },
	{ "header only", RTRS_MSG_INFO_RSP, QD, 0,
	  -(int)(QD * sizeof(struct rtrs_sg_desc)), 0, 0, -EMSGSIZE },
	{ "one byte short of the header", RTRS_MSG_INFO_RSP, QD, 0,
	  -(int)(QD * sizeof(struct rtrs_sg_desc) + 1), 0, 0, -EMSGSIZE },
	{ "one byte short of the descriptors", RTRS_MSG_INFO_RSP, QD, 0, -1, 0,
	  0, -EMSGSIZE },
	{ "type INFO_REQ", RTRS_MSG_INFO_REQ, QD, 0, 0, 0, 0, -EPROTO },
	{ "type RKEY_RSP", RTRS_MSG_RKEY_RSP, QD, 0, 0, 0, 0, -EPROTO },
	{ "type 0xffff", 0xffff, QD, 0, 0, 0, 0, -EPROTO },
	{ "no descriptor", RTRS_MSG_INFO_RSP, QD, 0xffff, 0, 0, 0, -EPROTO },
	{ "descriptor count not dividing the queue depth", RTRS_MSG_INFO_RSP,
	  3, 0, 0, 0, 0, -EPROTO },
	{ "more descriptors than chunks", RTRS_MSG_INFO_RSP, QD, 2 * QD, 0, 0,
	  0, -EPROTO },
	{ "descriptor count beyond the message", RTRS_MSG_INFO_RSP, 4, QD, 0,
	  0, 0, -EMSGSIZE },
	{ "descriptor length 0", RTRS_MSG_INFO_RSP, QD, 0, 0, 5, 0xffffffff,
	  -ERANGE },
	{ "descriptor one byte short of a chunk", RTRS_MSG_INFO_RSP, QD, 0, 0,
	  7, CHUNK - 1, -ERANGE },
	{ "descriptor one byte over a chunk", RTRS_MSG_INFO_RSP, QD, 0, 0, 7,
	  CHUNK + 1, -ERANGE },
	{ "descriptor of two chunks", RTRS_MSG_INFO_RSP, QD, 0, 0, 0,
	  2 * CHUNK, -ERANGE },
	{ "descriptor of two chunks, last", RTRS_MSG_INFO_RSP, 4, 0, 0, 3,
	  (QD / 4 + 1) * CHUNK, -ERANGE },
	{ "descriptors short of the queue depth", RTRS_MSG_INFO_RSP, 4, 0, 0, 3,
	  (QD / 4 - 1) * CHUNK, -ERANGE },
};

static void info_case_desc(const struct info_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(info, info_cases, info_case_desc);

static void info_rsp(struct kunit *test)
{
	const struct info_case *c = test->param_value;
	u32 per = QD / c->sg_cnt, i, n = 0;
	struct rtrs_msg_info_rsp *msg;
	struct rtrs_rbuf *rbufs;
	size_t size, len;

	/* Room for what is received only: KASAN sees any read beyond. */
	size = struct_size(msg, desc, c->sg_cnt) + 16;
	msg = kunit_kzalloc(test, size, GFP_KERNEL);
	rbufs = kunit_kcalloc(test, QD, sizeof(*rbufs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	KUNIT_ASSERT_NOT_NULL(test, rbufs);

	msg->type = cpu_to_le16(c->type);
	msg->sg_cnt = cpu_to_le16(c->sg_cnt_field == 0xffff ? 0 :
				  c->sg_cnt_field ?: c->sg_cnt);
	for (i = 0; i < c->sg_cnt; i++) {
		u32 dlen = per * CHUNK;

		if (c->bad_len && i == c->bad_desc)
			dlen = c->bad_len == 0xffffffff ? 0 : c->bad_len;
		msg->desc[i].addr = cpu_to_le64(BASE + (u64)i * per * CHUNK);
		msg->desc[i].key = cpu_to_le32(0x1000 + i);
		msg->desc[i].len = cpu_to_le32(dlen);
	}
	len = struct_size(msg, desc, c->sg_cnt) + c->len_delta;

	KUNIT_ASSERT_EQ(test, rtrs_clt_check_info_rsp(msg, len, QD, CHUNK,
						      rbufs), c->want);
	if (c->want)
		return;
	for (i = 0; i < c->sg_cnt; i++) {
		u32 j;

		for (j = 0; j < per; j++, n++) {
			KUNIT_EXPECT_EQ(test, rbufs[n].addr,
					BASE + (u64)n * CHUNK);
			KUNIT_EXPECT_EQ(test, rbufs[n].rkey, 0x1000 + i);
		}
	}
	KUNIT_EXPECT_EQ(test, n, QD);
}

/* Immediate of an IO response. */

static void io_rsp_types(struct kunit *test)
{
	u32 type, msg_id;
	int errno;

	for (type = 0; type < BIT(RTRS_IMM_TYPE_BITS); type++) {
		int want = type == RTRS_IO_RSP_IMM ||
			   type == RTRS_IO_RSP_W_INV_IMM ? 0 : -EPROTO;

		KUNIT_EXPECT_EQ_MSG(test,
				    rtrs_clt_check_io_rsp(rtrs_imm(type, 5), QD,
							  &msg_id, &errno),
				    want, "type %u", type);
	}
}

struct io_rsp_case {
	const char *name;
	u32 msg_id;
	u32 err;	/* magnitude of the errno the server responds with */
	int want;
};

static const struct io_rsp_case io_rsp_cases[] = {
	{ "first request", 0, 0, 0 },
	{ "last request", QD - 1, 0, 0 },
	{ "request beyond the queue depth", QD, 0, -ERANGE },
	{ "largest message id", RTRS_IMM_MSG_ID_MASK, 0, -ERANGE },
	{ "errno EIO", 3, EIO, 0 },
	{ "largest errno", 3, 511, 0 },
	{ "errno with a bad message id", QD + 1, EIO, -ERANGE },
};

static void io_rsp_case_desc(const struct io_rsp_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_rsp, io_rsp_cases, io_rsp_case_desc);

static u32 io_rsp_imm(u32 type, u32 msg_id, u32 err)
{
	return rtrs_imm(type, err << RTRS_IMM_MSG_ID_BITS | msg_id);
}

static void io_rsp(struct kunit *test)
{
	const struct io_rsp_case *c = test->param_value;
	u32 type, msg_id;
	int errno;

	for (type = RTRS_IO_RSP_IMM; type <= RTRS_IO_RSP_W_INV_IMM; type++) {
		KUNIT_ASSERT_EQ(test,
				rtrs_clt_check_io_rsp(io_rsp_imm(type, c->msg_id,
								 c->err),
						      QD, &msg_id, &errno),
				c->want);
		if (c->want)
			continue;
		KUNIT_EXPECT_EQ(test, msg_id, c->msg_id);
		KUNIT_EXPECT_EQ(test, errno, -(int)c->err);
	}
}

/* RKEY_RSP. */

#define RKEY struct rtrs_msg_rkey_rsp
#define RKEY_LEN sizeof(RKEY)

struct rkey_case {
	const char *name;
	size_t len;
	u32 imm_type;
	u32 msg_id;
	struct patch p;
	int want;
};

static const struct rkey_case rkey_cases[] = {
	{ "valid", RKEY_LEN, RTRS_IO_RSP_IMM, 9, {}, 0 },
	{ "valid, with invalidate", RKEY_LEN, RTRS_IO_RSP_W_INV_IMM, 9, {}, 0 },
	{ "last request", RKEY_LEN, RTRS_IO_RSP_IMM, QD - 1, {}, 0 },
	{ "longer receive", RKEY_LEN + 4, RTRS_IO_RSP_IMM, 9, {}, 0 },
	{ "one byte short", RKEY_LEN - 1, RTRS_IO_RSP_IMM, 9, {}, -EMSGSIZE },
	{ "empty", 0, RTRS_IO_RSP_IMM, 9, {}, -EMSGSIZE },
	{ "type INFO_RSP", RKEY_LEN, RTRS_IO_RSP_IMM, 9,
	  P16(RKEY, type, RTRS_MSG_INFO_RSP), -EPROTO },
	{ "type 0", RKEY_LEN, RTRS_IO_RSP_IMM, 9, P16(RKEY, type, 0), -EPROTO },
	{ "immediate of a heartbeat", RKEY_LEN, RTRS_HB_MSG_IMM, 9, {},
	  -EPROTO },
	{ "immediate of a request", RKEY_LEN, RTRS_IO_REQ_IMM, 9, {}, -EPROTO },
	{ "request beyond the queue depth", RKEY_LEN, RTRS_IO_RSP_IMM, QD,
	  P16(RKEY, buf_id, QD), -ERANGE },
	{ "buffer id of another request", RKEY_LEN, RTRS_IO_RSP_IMM, 9,
	  P16(RKEY, buf_id, 10), -EPROTO },
	{ "buffer id 0xffff", RKEY_LEN, RTRS_IO_RSP_IMM, 9,
	  P16(RKEY, buf_id, 0xffff), -EPROTO },
};

static void rkey_case_desc(const struct rkey_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(rkey, rkey_cases, rkey_case_desc);

static void rkey_rsp(struct kunit *test)
{
	const struct rkey_case *c = test->param_value;
	union {
		struct rtrs_msg_rkey_rsp rsp;
		u8 bytes[RKEY_LEN + 4];
	} m = {};
	u32 msg_id, rkey;
	int errno;

	m.rsp.type = cpu_to_le16(RTRS_MSG_RKEY_RSP);
	m.rsp.buf_id = cpu_to_le16(c->msg_id);
	m.rsp.rkey = cpu_to_le32(0xdeadbe01);
	apply(&m, &c->p);

	KUNIT_ASSERT_EQ(test,
			rtrs_clt_check_rkey_rsp(&m, c->len,
						io_rsp_imm(c->imm_type,
							   c->msg_id, ENOSPC),
						QD, &msg_id, &errno, &rkey),
			c->want);
	if (c->want)
		return;
	KUNIT_EXPECT_EQ(test, msg_id, c->msg_id);
	KUNIT_EXPECT_EQ(test, errno, -ENOSPC);
	KUNIT_EXPECT_EQ(test, rkey, 0xdeadbe01);
}

/* INFO_RSP of a 2.1 path: no descriptor. */

#define INFO21 struct rtrs_msg_info_rsp
#define INFO21_LEN sizeof(INFO21)

struct info21_case {
	const char *name;
	size_t len;
	struct patch p[2];
	int want;
};

static const struct info21_case info21_cases[] = {
	{ "valid", INFO21_LEN, {}, 0 },
	{ "longer receive", INFO21_LEN + 16, {}, 0 },
	{ "one byte short", INFO21_LEN - 1, {}, -EMSGSIZE },
	{ "empty", 0, {}, -EMSGSIZE },
	{ "type INFO_REQ", INFO21_LEN, { P16(INFO21, type, RTRS_MSG_INFO_REQ) },
	  -EPROTO },
	{ "type IO_RSP", INFO21_LEN, { P16(INFO21, type, RTRS_MSG_IO_RSP) },
	  -EPROTO },
	{ "type 0xffff", INFO21_LEN, { P16(INFO21, type, 0xffff) }, -EPROTO },
	{ "one descriptor", INFO21_LEN, { P16(INFO21, sg_cnt, 1) }, -EPROTO },
	{ "descriptor count 0x100", INFO21_LEN, { P16(INFO21, sg_cnt, 0x100) },
	  -EPROTO },
	{ "descriptor count 0xffff", INFO21_LEN,
	  { P16(INFO21, sg_cnt, 0xffff) }, -EPROTO },
	{ "reserved bytes are ignored", INFO21_LEN,
	  { P8(INFO21, reserved[0], 0xff), P8(INFO21, reserved[3], 0xff) }, 0 },
};

static void info21_case_desc(const struct info21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(info21, info21_cases, info21_case_desc);

static void info_rsp_2_1(struct kunit *test)
{
	const struct info21_case *c = test->param_value;
	union {
		struct rtrs_msg_info_rsp rsp;
		u8 bytes[INFO21_LEN + 16];
	} m = {};
	size_t i;

	m.rsp.type = cpu_to_le16(RTRS_MSG_INFO_RSP);
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(&m, &c->p[i]);

	KUNIT_EXPECT_EQ(test, rtrs_clt_check_info_rsp_2_1(&m, c->len), c->want);
}

/* IO response of a 2.1 path. */

#define IORSP struct rtrs_msg_io_rsp
#define IORSP_LEN sizeof(IORSP)

struct io_rsp21_case {
	const char *name;
	size_t len;
	struct patch p[2];
	int want;
	u32 msg_id;	/* decoded, when @want is 0 or -ERANGE */
	int errno;	/* decoded, when @want is 0 or -ERANGE */
	bool tags;	/* the path tags its message ids */
};

static const struct io_rsp21_case io_rsp21_cases[] = {
	{ "valid", IORSP_LEN, {}, 0, 5, 0 },
	{ "longer receive", IORSP_LEN + 8, {}, 0, 5, 0 },
	{ "one byte short", IORSP_LEN - 1, {}, -EMSGSIZE },
	{ "empty", 0, {}, -EMSGSIZE },
	{ "type INFO_RSP", IORSP_LEN, { P16(IORSP, type, RTRS_MSG_INFO_RSP) },
	  -EPROTO },
	{ "type RKEY_RSP", IORSP_LEN, { P16(IORSP, type, RTRS_MSG_RKEY_RSP) },
	  -EPROTO },
	{ "type READ_REQ", IORSP_LEN, { P16(IORSP, type, RTRS_MSG_READ_REQ) },
	  -EPROTO },
	{ "type WRITE_INLINE", IORSP_LEN,
	  { P16(IORSP, type, RTRS_MSG_WRITE_INLINE) }, -EPROTO },
	{ "type 9", IORSP_LEN, { P16(IORSP, type, 9) }, -EPROTO },
	{ "type 0xffff", IORSP_LEN, { P16(IORSP, type, 0xffff) }, -EPROTO },
	{ "first request", IORSP_LEN, { P32(IORSP, msg_id, 0) }, 0, 0, 0 },
	{ "last request", IORSP_LEN, { P32(IORSP, msg_id, QD - 1) }, 0, QD - 1,
	  0 },
	{ "request at the queue depth", IORSP_LEN, { P32(IORSP, msg_id, QD) },
	  -ERANGE, QD, 0 },
	{ "message id 0x10000", IORSP_LEN, { P32(IORSP, msg_id, 0x10000) },
	  -ERANGE, 0x10000, 0 },
	{ "message id 0xffffffff", IORSP_LEN,
	  { P32(IORSP, msg_id, U32_MAX) }, -ERANGE, U32_MAX, 0 },
	{ "errno -EIO", IORSP_LEN, { P16(IORSP, errno, (u16)-EIO) }, 0, 5,
	  -EIO },
	{ "errno -1", IORSP_LEN, { P16(IORSP, errno, 0xffff) }, 0, 5, -1 },
	{ "errno -MAX_ERRNO", IORSP_LEN,
	  { P16(IORSP, errno, (u16)-MAX_ERRNO) }, 0, 5, -MAX_ERRNO },
	{ "errno -MAX_ERRNO - 1", IORSP_LEN,
	  { P16(IORSP, errno, (u16)(-MAX_ERRNO - 1)) }, -ERANGE, 5,
	  -MAX_ERRNO - 1 },
	{ "errno -32768", IORSP_LEN, { P16(IORSP, errno, 0x8000) }, -ERANGE, 5,
	  -32768 },
	{ "errno 1", IORSP_LEN, { P16(IORSP, errno, 1) }, -ERANGE, 5, 1 },
	{ "errno EIO, positive", IORSP_LEN, { P16(IORSP, errno, EIO) },
	  -ERANGE, 5, EIO },
	{ "errno 32767", IORSP_LEN, { P16(IORSP, errno, 0x7fff) }, -ERANGE, 5,
	  32767 },
	{ "errno -EIO, request at the queue depth", IORSP_LEN,
	  { P16(IORSP, errno, (u16)-EIO), P32(IORSP, msg_id, QD) }, -ERANGE,
	  QD, -EIO },
	{ "tagged: first request, tag 0", IORSP_LEN,
	  { P32(IORSP, msg_id, 0) }, 0, 0, 0, true },
	{ "tagged: last request, tag 0xffff", IORSP_LEN,
	  { P32(IORSP, msg_id, 0xffff0000 | (QD - 1)) }, 0,
	  0xffff0000 | (QD - 1), 0, true },
	{ "tagged: message id 0x10000 is slot 0", IORSP_LEN,
	  { P32(IORSP, msg_id, 0x10000) }, 0, 0x10000, 0, true },
	{ "tagged: slot at the queue depth", IORSP_LEN,
	  { P32(IORSP, msg_id, 0x70000 | QD) }, -ERANGE, 0x70000 | QD, 0,
	  true },
	{ "tagged: slot 0xffff", IORSP_LEN, { P32(IORSP, msg_id, U32_MAX) },
	  -ERANGE, U32_MAX, 0, true },
	{ "tagged: errno 1", IORSP_LEN,
	  { P16(IORSP, errno, 1), P32(IORSP, msg_id, 0x20005) }, -ERANGE,
	  0x20005, 1, true },
};

static void io_rsp21_case_desc(const struct io_rsp21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_rsp21, io_rsp21_cases, io_rsp21_case_desc);

static void io_rsp_2_1(struct kunit *test)
{
	const struct io_rsp21_case *c = test->param_value;
	union {
		struct rtrs_msg_io_rsp rsp;
		u8 bytes[IORSP_LEN + 8];
	} m = {};
	u32 msg_id = 0xdead;
	int errno = 0xdead;
	size_t i;

	m.rsp.type = cpu_to_le16(RTRS_MSG_IO_RSP);
	m.rsp.msg_id = cpu_to_le32(5);
	for (i = 0; i < ARRAY_SIZE(c->p); i++)
		apply(&m, &c->p[i]);

	KUNIT_ASSERT_EQ(test, rtrs_clt_check_io_rsp_2_1(&m, c->len, QD, c->tags,
							&msg_id, &errno),
			c->want);
	if (c->want && c->want != -ERANGE)
		return;
	KUNIT_EXPECT_EQ(test, msg_id, c->msg_id);
	KUNIT_EXPECT_EQ(test, errno, c->errno);
}

/* The responses of one SEND of a 2.1 path, packed or not. */

struct io_rsps21_case {
	const char *name;
	size_t len;		/* bytes received */
	u32 max;		/* responses the buffer holds */
	bool inval;		/* the SEND invalidated */
	int bad;		/* response spoiled (type), -1 none */
	int want;		/* count, or the error */
	u32 tag;		/* on every message id */
	bool tags;		/* the path tags its message ids */
};

static const struct io_rsps21_case io_rsps21_cases[] = {
	{ "one", IORSP_LEN, 1, false, -1, 1 },
	{ "one, invalidating", IORSP_LEN, 1, true, -1, 1 },
	{ "one where 16 fit", IORSP_LEN, RTRS_IO_RSP_PACK_MAX, false, -1, 1 },
	{ "three packed", 3 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX, false, -1, 3 },
	{ "sixteen packed", 16 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX, false, -1,
	  16 },
	{ "two where one fits", 2 * IORSP_LEN, 1, false, -1, -EMSGSIZE },
	{ "seventeen where 16 fit", 17 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX,
	  false, -1, -EMSGSIZE },
	{ "a response and a half", IORSP_LEN + 4, RTRS_IO_RSP_PACK_MAX, false,
	  -1, -EMSGSIZE },
	{ "one byte short of two", 2 * IORSP_LEN - 1, RTRS_IO_RSP_PACK_MAX,
	  false, -1, -EMSGSIZE },
	{ "empty", 0, RTRS_IO_RSP_PACK_MAX, false, -1, -EMSGSIZE },
	{ "two, invalidating", 2 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX, true, -1,
	  -EPROTO },
	{ "first of three spoiled", 3 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX, false,
	  0, -EPROTO },
	{ "last of sixteen spoiled", 16 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX,
	  false, 15, -EPROTO },
	{ "spoiled one past the length", 2 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX,
	  false, 2, 2 },
	{ "sixteen tagged", 16 * IORSP_LEN, RTRS_IO_RSP_PACK_MAX, false, -1,
	  16, 0xbeef, true },
	{ "sixteen tagged, to a path without tags", 16 * IORSP_LEN,
	  RTRS_IO_RSP_PACK_MAX, false, -1, -ERANGE, 0xbeef, false },
	{ "last of sixteen tagged spoiled", 16 * IORSP_LEN,
	  RTRS_IO_RSP_PACK_MAX, false, 15, -EPROTO, 0xbeef, true },
};

static void io_rsps21_case_desc(const struct io_rsps21_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(io_rsps21, io_rsps21_cases, io_rsps21_case_desc);

static void io_rsps_2_1(struct kunit *test)
{
	const struct io_rsps21_case *c = test->param_value;
	struct rtrs_msg_io_rsp m[RTRS_IO_RSP_PACK_MAX + 1] = {};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(m); i++) {
		m[i].type = cpu_to_le16(RTRS_MSG_IO_RSP);
		m[i].msg_id = cpu_to_le32(rtrs_msg_id(i, c->tag));
	}
	if (c->bad >= 0)
		m[c->bad].type = cpu_to_le16(RTRS_MSG_INFO_RSP);

	KUNIT_EXPECT_EQ(test, rtrs_clt_check_io_rsps_2_1(m, c->len, c->max,
							 c->inval, QD, c->tags),
			c->want);
}

static struct kunit_case rtrs_clt_validate_cases[] = {
	KUNIT_CASE_PARAM(conn_rsp, rsp_gen_params),
	KUNIT_CASE_PARAM(conn_rsp_2_1, rsp21_gen_params),
	KUNIT_CASE(conn_rsp_2_0_to_2_1),
	KUNIT_CASE(conn_rsp_null),
	KUNIT_CASE_PARAM(info_rsp, info_gen_params),
	KUNIT_CASE(io_rsp_types),
	KUNIT_CASE_PARAM(io_rsp, io_rsp_gen_params),
	KUNIT_CASE_PARAM(rkey_rsp, rkey_gen_params),
	KUNIT_CASE_PARAM(info_rsp_2_1, info21_gen_params),
	KUNIT_CASE_PARAM(io_rsp_2_1, io_rsp21_gen_params),
	KUNIT_CASE_PARAM(io_rsps_2_1, io_rsps21_gen_params),
	{}
};

static struct kunit_suite rtrs_clt_validate_suite = {
	.name = "rtrs-clt-validate",
	.test_cases = rtrs_clt_validate_cases,
};

kunit_test_suite(rtrs_clt_validate_suite);

MODULE_DESCRIPTION("KUnit tests of the RTRS client's checks of wire messages");
MODULE_LICENSE("GPL");
