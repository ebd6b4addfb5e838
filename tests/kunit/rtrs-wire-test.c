// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: the RTRS protocol 2.0 and 2.1 wire formats.
 *
 * The expected sizes and offsets below are the protocol's, written out as
 * numbers on purpose: they must not follow the header if the header drifts.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/stddef.h>

#include "rtrs-pri.h"

struct wire_field {
	const char *name;
	size_t off;
	size_t want;
};

#define FIELD(type, member, at) { #type "." #member, offsetof(type, member), at }

static void check_fields(struct kunit *test, const struct wire_field *f,
			 size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ_MSG(test, f[i].off, f[i].want, "%s", f[i].name);
}

static void wire_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_sg_desc), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_conn_req), 56);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_conn_rsp), 56);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_info_req), 272);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_info_rsp), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_rkey_rsp), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_rdma_read), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_rdma_write), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_rdma_hdr), 2);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_conn_rsp_2_1), 28);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_io_req), 24);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_write_inline), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct rtrs_msg_io_rsp), 8);
}

static void wire_conn_req_layout(struct kunit *test)
{
	static const struct wire_field f[] = {
		FIELD(struct rtrs_msg_conn_req, __cma_version, 0),
		FIELD(struct rtrs_msg_conn_req, __ip_version, 1),
		FIELD(struct rtrs_msg_conn_req, magic, 2),
		FIELD(struct rtrs_msg_conn_req, version, 4),
		FIELD(struct rtrs_msg_conn_req, cid, 6),
		FIELD(struct rtrs_msg_conn_req, cid_num, 8),
		FIELD(struct rtrs_msg_conn_req, recon_cnt, 10),
		FIELD(struct rtrs_msg_conn_req, sess_uuid, 12),
		FIELD(struct rtrs_msg_conn_req, paths_uuid, 28),
		FIELD(struct rtrs_msg_conn_req, flags, 44),
		FIELD(struct rtrs_msg_conn_req, reserved, 45),
	};

	check_fields(test, f, ARRAY_SIZE(f));
	KUNIT_EXPECT_EQ(test, RTRS_CONN_REQ_FIRST_CONN, 1);
}

static void wire_conn_rsp_layout(struct kunit *test)
{
	static const struct wire_field f[] = {
		FIELD(struct rtrs_msg_conn_rsp, magic, 0),
		FIELD(struct rtrs_msg_conn_rsp, version, 2),
		FIELD(struct rtrs_msg_conn_rsp, errno, 4),
		FIELD(struct rtrs_msg_conn_rsp, queue_depth, 6),
		FIELD(struct rtrs_msg_conn_rsp, max_io_size, 8),
		FIELD(struct rtrs_msg_conn_rsp, max_hdr_size, 12),
		FIELD(struct rtrs_msg_conn_rsp, flags, 16),
		FIELD(struct rtrs_msg_conn_rsp, reserved, 20),
	};

	check_fields(test, f, ARRAY_SIZE(f));
}

static void wire_conn_rsp_2_1_layout(struct kunit *test)
{
	static const struct wire_field f[] = {
		FIELD(struct rtrs_msg_conn_rsp_2_1, magic, 0),
		FIELD(struct rtrs_msg_conn_rsp_2_1, version, 2),
		FIELD(struct rtrs_msg_conn_rsp_2_1, errno, 4),
		FIELD(struct rtrs_msg_conn_rsp_2_1, queue_depth, 6),
		FIELD(struct rtrs_msg_conn_rsp_2_1, max_io_size, 8),
		FIELD(struct rtrs_msg_conn_rsp_2_1, max_hdr_size, 12),
		FIELD(struct rtrs_msg_conn_rsp_2_1, max_inline_size, 16),
		FIELD(struct rtrs_msg_conn_rsp_2_1, max_read_buf, 20),
		FIELD(struct rtrs_msg_conn_rsp_2_1, flags, 24),
	};

	check_fields(test, f, ARRAY_SIZE(f));
}

static void wire_msg_layouts(struct kunit *test)
{
	static const struct wire_field f[] = {
		FIELD(struct rtrs_sg_desc, addr, 0),
		FIELD(struct rtrs_sg_desc, key, 8),
		FIELD(struct rtrs_sg_desc, len, 12),
		FIELD(struct rtrs_msg_info_req, type, 0),
		FIELD(struct rtrs_msg_info_req, pathname, 2),
		FIELD(struct rtrs_msg_info_req, reserved, 257),
		FIELD(struct rtrs_msg_info_rsp, type, 0),
		FIELD(struct rtrs_msg_info_rsp, sg_cnt, 2),
		FIELD(struct rtrs_msg_info_rsp, reserved, 4),
		FIELD(struct rtrs_msg_info_rsp, desc, 8),
		FIELD(struct rtrs_msg_rkey_rsp, type, 0),
		FIELD(struct rtrs_msg_rkey_rsp, buf_id, 2),
		FIELD(struct rtrs_msg_rkey_rsp, rkey, 4),
		FIELD(struct rtrs_msg_rdma_read, type, 0),
		FIELD(struct rtrs_msg_rdma_read, usr_len, 2),
		FIELD(struct rtrs_msg_rdma_read, flags, 4),
		FIELD(struct rtrs_msg_rdma_read, sg_cnt, 6),
		FIELD(struct rtrs_msg_rdma_read, desc, 8),
		FIELD(struct rtrs_msg_rdma_write, type, 0),
		FIELD(struct rtrs_msg_rdma_write, usr_len, 2),
		FIELD(struct rtrs_msg_rdma_hdr, type, 0),
	};

	check_fields(test, f, ARRAY_SIZE(f));
}

static void wire_msg_2_1_layouts(struct kunit *test)
{
	static const struct wire_field f[] = {
		FIELD(struct rtrs_msg_io_req, type, 0),
		FIELD(struct rtrs_msg_io_req, usr_len, 2),
		FIELD(struct rtrs_msg_io_req, msg_id, 4),
		FIELD(struct rtrs_msg_io_req, desc, 8),
		FIELD(struct rtrs_msg_io_req, desc.addr, 8),
		FIELD(struct rtrs_msg_io_req, desc.key, 16),
		FIELD(struct rtrs_msg_io_req, desc.len, 20),
		FIELD(struct rtrs_msg_write_inline, type, 0),
		FIELD(struct rtrs_msg_write_inline, usr_len, 2),
		FIELD(struct rtrs_msg_write_inline, msg_id, 4),
		FIELD(struct rtrs_msg_write_inline, data_len, 8),
		FIELD(struct rtrs_msg_io_rsp, type, 0),
		FIELD(struct rtrs_msg_io_rsp, errno, 2),
		FIELD(struct rtrs_msg_io_rsp, msg_id, 4),
	};

	check_fields(test, f, ARRAY_SIZE(f));
}

static void wire_constants(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, RTRS_MAGIC, 0x1BBD);
	KUNIT_EXPECT_EQ(test, RTRS_PROTO_VER, 0x0200);
	KUNIT_EXPECT_EQ(test, RTRS_PROTO_MINOR_2_1, 1);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_INFO_REQ, 0);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_INFO_RSP, 1);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_WRITE, 2);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_READ, 3);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_RKEY_RSP, 4);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_READ_REQ, 5);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_WRITE_REQ, 6);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_WRITE_INLINE, 7);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_IO_RSP, 8);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_READ_BUF, 9);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_NEED_INVAL_F, 1);
	KUNIT_EXPECT_EQ(test, RTRS_MSG_NEW_RKEY_F, 2);
	KUNIT_EXPECT_EQ(test, RTRS_IO_REQ_IMM, 0);
	KUNIT_EXPECT_EQ(test, RTRS_IO_RSP_IMM, 1);
	KUNIT_EXPECT_EQ(test, RTRS_IO_RSP_W_INV_IMM, 2);
	KUNIT_EXPECT_EQ(test, RTRS_HB_MSG_IMM, 8);
	KUNIT_EXPECT_EQ(test, RTRS_HB_ACK_IMM, 9);
	KUNIT_EXPECT_EQ(test, RTRS_CONN_REQ_FIRST_CONN, 1);
	KUNIT_EXPECT_EQ(test, RTRS_CONN_REQ_PACKED_RSP, 2);
	KUNIT_EXPECT_EQ(test, RTRS_CONN_REQ_MSG_TAGS, 4);
	KUNIT_EXPECT_EQ(test, RTRS_CONN_RSP_MSG_TAGS, 1);
}

/* A tagged message id: slot in the low 16 bits, tag in the high 16. */
static void msg_id_tagged(struct kunit *test)
{
	u32 id = rtrs_msg_id(0x1234, 0xabcd), imm_id;
	int err;

	KUNIT_EXPECT_EQ(test, id, 0xabcd1234U);
	KUNIT_EXPECT_EQ(test, rtrs_msg_slot(id), 0x1234U);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag(id), 0xabcdU);
	KUNIT_EXPECT_EQ(test, rtrs_msg_id(0xffff, 0xffff), U32_MAX);
	/* A tag wider than 16 bits keeps its low 16; a slot its low 16. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_id(0x12345, 0x1abcd), 0xabcd2345U);
	/* In an immediate, the tag's low 3 bits follow the slot. */
	rtrs_io_rsp_decode(rtrs_imm_payload(rtrs_io_rsp_imm(id, -5, false)),
			   &imm_id, &err);
	KUNIT_EXPECT_EQ(test, rtrs_msg_slot(imm_id), 0x1234U);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag(imm_id), 0xabcdU & 7);
	KUNIT_EXPECT_EQ(test, err, -5);
}

/* Which request of a slot a response's tag names. */
static void msg_tag_age(struct kunit *test)
{
	/* A slot that sent nothing has no request to name. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0, 0, 16), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0, 0xffff, 16), -1);
	/* Its first request: tag 1; tag 0 and tags ahead name none. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(1, 1, 16), 0);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(1, 0, 16), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(1, 2, 16), -1);
	/* Later: the last, the ones before it, none ahead. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(10, 10, 16), 0);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(10, 9, 16), 1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(10, 1, 16), 9);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(10, 0, 16), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(10, 11, 16), -1);
	/* Across the wrap of 16 bits, back to half the range. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10002, 2, 16), 0);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10002, 0xffff, 16), 3);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10002, 0x8003, 16), 0x7fff);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10002, 0x8002, 16), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10002, 3, 16), -1);
	/* Once the count wrapped at 2^32 it goes on from 2^16. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10000, 0, 16), 0);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10000, 0xffff, 16), 1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(0x10000, 1, 16), -1);
	/* 3 bits of an immediate: the last and the 3 before it. */
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(13, 13 & 7, 3), 0);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(13, 10 & 7, 3), 3);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(13, 9 & 7, 3), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(13, 14 & 7, 3), -1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(2, 1, 3), 1);
	KUNIT_EXPECT_EQ(test, rtrs_msg_tag_age(2, 0, 3), -1);
}

static void imm_type_and_payload(struct kunit *test)
{
	static const u32 types[] = {
		RTRS_IO_REQ_IMM, RTRS_IO_RSP_IMM, RTRS_IO_RSP_W_INV_IMM,
		RTRS_HB_MSG_IMM, RTRS_HB_ACK_IMM, 15,
	};
	static const u32 payloads[] = { 0, 1, 0x0abcdef, 0xfffffff };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(types); i++) {
		for (j = 0; j < ARRAY_SIZE(payloads); j++) {
			u32 imm = rtrs_imm(types[i], payloads[j]);

			KUNIT_EXPECT_EQ(test, rtrs_imm_type(imm), types[i]);
			KUNIT_EXPECT_EQ(test, rtrs_imm_payload(imm), payloads[j]);
		}
	}
	/* The type is the top nibble, as a peer sees it. */
	KUNIT_EXPECT_EQ(test, rtrs_imm(RTRS_HB_ACK_IMM, 0), 0x90000000U);
	KUNIT_EXPECT_EQ(test, rtrs_imm(RTRS_IO_RSP_IMM, 5), 0x10000005U);
}

static void imm_off_bits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(1), 28U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(2), 27U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(3), 26U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(128), 21U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(129), 20U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(512), 19U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_off_bits(65535), 12U);
}

static void io_req_round_trip_one(struct kunit *test, u32 qd, u32 chunk,
				  u32 off)
{
	unsigned int bits = rtrs_imm_off_bits(qd);
	u32 imm = rtrs_io_req_imm(chunk, off, bits);
	u32 got_chunk, got_off;

	KUNIT_EXPECT_EQ(test, rtrs_imm_type(imm), (u32)RTRS_IO_REQ_IMM);
	rtrs_io_req_decode(rtrs_imm_payload(imm), bits, &got_chunk, &got_off);
	KUNIT_EXPECT_EQ_MSG(test, got_chunk, chunk, "qd %u off %u", qd, off);
	KUNIT_EXPECT_EQ_MSG(test, got_off, off, "qd %u chunk %u", qd, chunk);
}

static void imm_io_req_round_trip(struct kunit *test)
{
	static const u32 depths[] = { 1, 2, 64, 128, 512, 1000, 65535 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(depths); i++) {
		u32 qd = depths[i];
		u32 max_off = BIT(rtrs_imm_off_bits(qd)) - 1;

		io_req_round_trip_one(test, qd, 0, 0);
		io_req_round_trip_one(test, qd, qd - 1, 0);
		io_req_round_trip_one(test, qd, 0, max_off);
		io_req_round_trip_one(test, qd, qd - 1, max_off);
		io_req_round_trip_one(test, qd, qd / 2, max_off / 3);
	}
}

/* The layout a mainline peer computes for queue depth 512, by hand. */
static void imm_io_req_known_value(struct kunit *test)
{
	u32 imm = rtrs_io_req_imm(3, 0x1234, rtrs_imm_off_bits(512));

	KUNIT_EXPECT_EQ(test, imm, (3U << 19) | 0x1234);
}

static void io_rsp_round_trip_one(struct kunit *test, u32 id, int err,
				  bool w_inv)
{
	u32 imm = rtrs_io_rsp_imm(id, err, w_inv);
	u32 got_id;
	int got_err;

	KUNIT_EXPECT_EQ(test, rtrs_imm_type(imm),
			(u32)(w_inv ? RTRS_IO_RSP_W_INV_IMM : RTRS_IO_RSP_IMM));
	rtrs_io_rsp_decode(rtrs_imm_payload(imm), &got_id, &got_err);
	KUNIT_EXPECT_EQ_MSG(test, got_id, id, "errno %d", err);
	KUNIT_EXPECT_EQ_MSG(test, got_err, err, "id %u", id);
}

static void imm_io_rsp_round_trip(struct kunit *test)
{
	static const u32 ids[] = { 0, 1, 4095, BIT(19) - 1 };
	static const int errs[] = { 0, -1, -EIO, -ENOSPC, -511 };
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		for (j = 0; j < ARRAY_SIZE(errs); j++) {
			io_rsp_round_trip_one(test, ids[i], errs[j], false);
			io_rsp_round_trip_one(test, ids[i], errs[j], true);
		}
	}
}

static void imm_io_rsp_edges(struct kunit *test)
{
	u32 id;
	int err;

	/* errno 511 and message id 2^19 - 1 fill the payload exactly. */
	KUNIT_EXPECT_EQ(test, rtrs_io_rsp_imm(BIT(19) - 1, -511, false),
			0x1fffffffU);
	KUNIT_EXPECT_EQ(test, rtrs_io_rsp_imm(0, 0, true), 0x20000000U);
	/* A positive errno is sent by magnitude, like a negative one. */
	rtrs_io_rsp_decode(rtrs_imm_payload(rtrs_io_rsp_imm(7, 1, false)),
			   &id, &err);
	KUNIT_EXPECT_EQ(test, err, -1);
	KUNIT_EXPECT_EQ(test, id, 7U);
	/* An errno too wide for 9 bits must not spill into the type. */
	rtrs_io_rsp_decode(rtrs_imm_payload(rtrs_io_rsp_imm(7, -512, false)),
			   &id, &err);
	KUNIT_EXPECT_EQ(test, err, -EIO);
	KUNIT_EXPECT_EQ(test, id, 7U);
	KUNIT_EXPECT_EQ(test, rtrs_imm_type(rtrs_io_rsp_imm(7, -4095, false)),
			(u32)RTRS_IO_RSP_IMM);
}

static struct kunit_case rtrs_wire_cases[] = {
	KUNIT_CASE(wire_sizes),
	KUNIT_CASE(wire_conn_req_layout),
	KUNIT_CASE(wire_conn_rsp_layout),
	KUNIT_CASE(wire_conn_rsp_2_1_layout),
	KUNIT_CASE(wire_msg_layouts),
	KUNIT_CASE(wire_msg_2_1_layouts),
	KUNIT_CASE(wire_constants),
	KUNIT_CASE(imm_type_and_payload),
	KUNIT_CASE(imm_off_bits),
	KUNIT_CASE(imm_io_req_round_trip),
	KUNIT_CASE(imm_io_req_known_value),
	KUNIT_CASE(imm_io_rsp_round_trip),
	KUNIT_CASE(imm_io_rsp_edges),
	KUNIT_CASE(msg_id_tagged),
	KUNIT_CASE(msg_tag_age),
	{}
};

static struct kunit_suite rtrs_wire_suite = {
	.name = "rtrs-wire",
	.test_cases = rtrs_wire_cases,
};

kunit_test_suite(rtrs_wire_suite);

MODULE_DESCRIPTION("KUnit tests of the RTRS 2.0 and 2.1 wire formats");
MODULE_LICENSE("GPL");
