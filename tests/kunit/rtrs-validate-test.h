/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: what the KUnit suites of the client's and the server's checks of
 * wire messages share: a valid message is broken one field at a time.
 */
#ifndef RTRS_VALIDATE_TEST_H
#define RTRS_VALIDATE_TEST_H

#include <linux/stddef.h>
#include <linux/types.h>
#include <asm/unaligned.h>

/* A field of a message to overwrite, little-endian; width 0: none. */
struct patch {
	u16 off;
	u8 width;
	u64 val;
};

static inline void apply(void *msg, const struct patch *p)
{
	switch (p->width) {
	case 1:
		*(u8 *)(msg + p->off) = p->val;
		break;
	case 2:
		put_unaligned_le16(p->val, msg + p->off);
		break;
	case 4:
		put_unaligned_le32(p->val, msg + p->off);
		break;
	case 8:
		put_unaligned_le64(p->val, msg + p->off);
		break;
	}
}

#define P8(type, field, v)  { offsetof(type, field), 1, (v) }
#define P16(type, field, v) { offsetof(type, field), 2, (v) }
#define P32(type, field, v) { offsetof(type, field), 4, (v) }
#define P64(type, field, v) { offsetof(type, field), 8, (v) }

#endif /* RTRS_VALIDATE_TEST_H */
