/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs test users: the user message the test client sends with every IO
 * and the test server checks before it serves it.
 *
 * The test server keeps one store of RTRS_TEST_STORE_SIZE bytes.  A WRITE
 * with RTRS_TEST_OP_STORE copies its data to the store at @off; a READ with
 * RTRS_TEST_OP_FETCH returns the store's bytes at @off; RTRS_TEST_OP_FAIL
 * responds with -@err and touches nothing; RTRS_TEST_OP_HOLD does the same,
 * but only RTRS_TEST_HOLD_MS after the request came, so that requests stay
 * in flight for a known time.  RTRS_TEST_OP_LATE is a WRITE that is held
 * the same way, late_ms (a module parameter of the server), and copies its
 * data from the chunk to the store only when it gets its response, as a
 * block device reads a bio's pages when it gets to them; a LATE request
 * with the offset and data of one held before is served at once, as a
 * STORE: it is that one sent again over another path.  Every user message
 * carries a pattern after this header whose checksum the server verifies,
 * so a damaged user message gets the response -EBADMSG.
 */
#ifndef RTRS_TEST_H
#define RTRS_TEST_H

#include <linux/types.h>
#include <asm/byteorder.h>

#define RTRS_TEST_MAGIC		0x52545354	/* "RTST" */
#define RTRS_TEST_STORE_SIZE	(4 << 20)
#define RTRS_TEST_PORT		1234
#define RTRS_TEST_HOLD_MS	1000

enum rtrs_test_op {
	RTRS_TEST_OP_STORE	= 1,
	RTRS_TEST_OP_FETCH	= 2,
	RTRS_TEST_OP_FAIL	= 3,
	RTRS_TEST_OP_HOLD	= 4,
	RTRS_TEST_OP_LATE	= 5,
};

/**
 * struct rtrs_test_msg - user message of a test IO
 * @magic: %RTRS_TEST_MAGIC
 * @op: &enum rtrs_test_op
 * @off: offset in the server's store
 * @len: data length of the IO
 * @err: for %RTRS_TEST_OP_FAIL and %RTRS_TEST_OP_HOLD, the errno magnitude
 *	to respond with
 * @usr_len: length of the whole user message, this header included
 * @usr_csum: checksum (rtrs_test_csum()) of the bytes after this header
 */
struct rtrs_test_msg {
	__le32	magic;
	__le32	op;
	__le64	off;
	__le32	len;
	__le32	err;
	__le32	usr_len;
	__le32	usr_csum;
};

/* A checksum that any corruption of a byte or of its position changes. */
static inline u32 rtrs_test_csum(const u8 *p, size_t len)
{
	u32 sum = 0x12345678;
	size_t i;

	for (i = 0; i < len; i++)
		sum = (sum << 5 | sum >> 27) ^ (p[i] + (u32)i);
	return sum;
}

/* The user message of an IO of @op, @len bytes at @off, with no pattern. */
static inline void rtrs_test_msg_init(struct rtrs_test_msg *msg,
				      enum rtrs_test_op op, u64 off, u32 len)
{
	*msg = (struct rtrs_test_msg) {
		.magic		= cpu_to_le32(RTRS_TEST_MAGIC),
		.op		= cpu_to_le32(op),
		.off		= cpu_to_le64(off),
		.len		= cpu_to_le32(len),
		.usr_len	= cpu_to_le32(sizeof(*msg)),
		.usr_csum	= cpu_to_le32(rtrs_test_csum(NULL, 0)),
	};
}

#endif /* RTRS_TEST_H */
