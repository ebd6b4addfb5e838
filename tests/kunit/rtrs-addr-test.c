// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit suite: rtrs path address strings.
 *
 * rtrs_addr_to_sockaddr() is held against sockaddrs the test builds from
 * numbers written out below, the printers against the exact text they must
 * produce, and a table of malformed strings against the errno each must
 * get.  Every string reaches the parser in a heap buffer of exactly its
 * length with no NUL after it, so KASAN reports a parser that reads past
 * the length it was given.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <linux/string.h>
#include <net/flow.h>
#include <rdma/ib.h>

#include "rtrs.h"

/* rdma_cm's IB port space: AF_IB service ID = this | port. */
#define IB_PS_IB	0x00000000013f0000ULL
#define PORT		1234

/* An address as the test expects it, written out as numbers. */
struct want_addr {
	sa_family_t family;	/* AF_UNSPEC: no address at all */
	u8 v4[4];
	u16 v6[8];		/* IPv6 address or GID, as eight groups */
	u32 scope;
};

#define V4(a, b, c, d)		{ .family = AF_INET, .v4 = { a, b, c, d } }
#define V6(...)			{ .family = AF_INET6, .v6 = { __VA_ARGS__ } }
#define V6Z(zone, ...) \
	{ .family = AF_INET6, .v6 = { __VA_ARGS__ }, .scope = zone }
#define GID(...)		{ .family = AF_IB, .v6 = { __VA_ARGS__ } }
#define NONE			{ .family = AF_UNSPEC }

/* A string literal and its length, embedded NULs included. */
#define STR(s)			.str = (s), .len = sizeof(s) - 1

struct good_case {
	const char *desc;
	const char *str;
	size_t len;
	u16 port;
	struct want_addr src;
	struct want_addr dst;
	const char *printed;	/* rtrs_addr_to_str() of the result */
};

static const char gid_pair_printed[] =
	"gid:fe80:0000:0000:0000:0000:0000:0000:0001@gid:fe80:0000:0000:0000:0000:0000:0000:0002";

static const struct good_case good_cases[] = {
	{ "ipv4", STR("ip:192.0.2.1"), PORT, NONE, V4(192, 0, 2, 1),
	  "ip:192.0.2.1" },
	{ "ipv4 leading zeros", STR("ip:192.000.002.010"), PORT, NONE,
	  V4(192, 0, 2, 10), "ip:192.0.2.10" },
	{ "ipv6", STR("ip:2001:db8::1"), PORT, NONE,
	  V6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1), "ip:2001:db8::1" },
	{ "ipv6 full form", STR("ip:2001:0db8:0000:0000:0000:0000:0000:00ff"),
	  PORT, NONE, V6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0xff),
	  "ip:2001:db8::ff" },
	{ "ipv6 upper case", STR("ip:2001:DB8::A:B"), PORT, NONE,
	  V6(0x2001, 0xdb8, 0, 0, 0, 0, 0xa, 0xb), "ip:2001:db8::a:b" },
	{ "ipv6 with ipv4 tail", STR("ip:::ffff:192.0.2.7"), PORT, NONE,
	  V6(0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0207), "ip:::ffff:192.0.2.7" },
	{ "ipv6 zone by name", STR("ip:fe80::1%lo"), PORT, NONE,
	  V6Z(LOOPBACK_IFINDEX, 0xfe80, 0, 0, 0, 0, 0, 0, 1),
	  "ip:fe80::1%1" },
	{ "ipv6 zone by index", STR("ip:fe80::a:b%7"), PORT, NONE,
	  V6Z(7, 0xfe80, 0, 0, 0, 0, 0, 0xa, 0xb), "ip:fe80::a:b%7" },
	{ "longest numeric zone",
	  STR("ip:fe80:ffff:ffff:ffff:ffff:ffff:255.255.255.255%4294967295"),
	  PORT, NONE,
	  V6Z(4294967295U, 0xfe80, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff,
	      0xffff, 0xffff),
	  "ip:fe80:ffff:ffff:ffff:ffff:ffff:ffff:ffff%4294967295" },
	{ "gid", STR("gid:fe80::2:c903:f:a1b2"), PORT, NONE,
	  GID(0xfe80, 0, 0, 0, 2, 0xc903, 0xf, 0xa1b2),
	  "gid:fe80:0000:0000:0000:0002:c903:000f:a1b2" },
	{ "gid full form", STR("gid:fe80:0000:0000:0000:0002:c903:000f:a1b2"),
	  PORT, NONE, GID(0xfe80, 0, 0, 0, 2, 0xc903, 0xf, 0xa1b2),
	  "gid:fe80:0000:0000:0000:0002:c903:000f:a1b2" },
	{ "ipv4 src and dst", STR("ip:192.0.2.1@ip:198.51.100.2"), PORT,
	  V4(192, 0, 2, 1), V4(198, 51, 100, 2),
	  "ip:192.0.2.1@ip:198.51.100.2" },
	{ "ipv6 src and dst", STR("ip:2001:db8::1@ip:2001:db8::2"), PORT,
	  V6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1),
	  V6(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2),
	  "ip:2001:db8::1@ip:2001:db8::2" },
	{ "zoned src and dst", STR("ip:fe80::1%lo@ip:fe80::2%3"), PORT,
	  V6Z(LOOPBACK_IFINDEX, 0xfe80, 0, 0, 0, 0, 0, 0, 1),
	  V6Z(3, 0xfe80, 0, 0, 0, 0, 0, 0, 2),
	  "ip:fe80::1%1@ip:fe80::2%3" },
	{ "gid src and dst", STR("gid:fe80::1@gid:fe80::2"), PORT,
	  GID(0xfe80, 0, 0, 0, 0, 0, 0, 1), GID(0xfe80, 0, 0, 0, 0, 0, 0, 2),
	  gid_pair_printed },
	{ "comma separator", STR("ip:192.0.2.1,ip:198.51.100.2"), PORT,
	  V4(192, 0, 2, 1), V4(198, 51, 100, 2),
	  "ip:192.0.2.1@ip:198.51.100.2" },
	{ "port 0", STR("ip:192.0.2.1"), 0, NONE, V4(192, 0, 2, 1),
	  "ip:192.0.2.1" },
	{ "port 65535", STR("ip:192.0.2.1@ip:192.0.2.2"), 65535,
	  V4(192, 0, 2, 1), V4(192, 0, 2, 2), "ip:192.0.2.1@ip:192.0.2.2" },
	{ "gid port 65535", STR("gid:fe80::1"), 65535, NONE,
	  GID(0xfe80, 0, 0, 0, 0, 0, 0, 1),
	  "gid:fe80:0000:0000:0000:0000:0000:0000:0001" },
	{ "len ends before separator",
	  .str = "ip:192.0.2.1@ip:198.51.100.2", .len = 12, .port = PORT,
	  .src = NONE, .dst = V4(192, 0, 2, 1), .printed = "ip:192.0.2.1" },
	{ "len ends inside dst",
	  .str = "ip:192.0.2.1@ip:198.51.100.25", .len = 28, .port = PORT,
	  .src = V4(192, 0, 2, 1), .dst = V4(198, 51, 100, 2),
	  .printed = "ip:192.0.2.1@ip:198.51.100.2" },
	{ "nul ends string", STR("ip:192.0.2.1\0@ip:junk"), PORT, NONE,
	  V4(192, 0, 2, 1), "ip:192.0.2.1" },
};

struct bad_case {
	const char *desc;
	const char *str;
	size_t len;
	int err;
};

static const struct bad_case bad_cases[] = {
	{ "empty", STR(""), -EINVAL },
	{ "len 0", .str = "ip:192.0.2.1", .len = 0, .err = -EINVAL },
	{ "nul first", STR("\0ip:192.0.2.1"), -EINVAL },
	{ "no prefix", STR("192.0.2.1"), -EPROTONOSUPPORT },
	{ "unknown prefix", STR("ipv4:192.0.2.1"), -EPROTONOSUPPORT },
	{ "upper case prefix", STR("IP:192.0.2.1"), -EPROTONOSUPPORT },
	{ "leading space", STR(" ip:192.0.2.1"), -EPROTONOSUPPORT },
	{ "len cuts prefix", .str = "gid:fe80::1", .len = 3,
	  .err = -EPROTONOSUPPORT },
	{ "prefix only ip", STR("ip:"), -EINVAL },
	{ "prefix only gid", STR("gid:"), -EINVAL },
	{ "ipv4 three parts", STR("ip:192.0.2"), -EINVAL },
	{ "ipv4 five parts", STR("ip:192.0.2.1.5"), -EINVAL },
	{ "ipv4 octet 256", STR("ip:192.0.2.256"), -EINVAL },
	{ "ipv4 empty octet", STR("ip:192..2.1"), -EINVAL },
	{ "ipv4 hex digit", STR("ip:192.0.2.a"), -EINVAL },
	{ "ipv4 with port", STR("ip:192.0.2.1:1234"), -EINVAL },
	{ "ipv4 with zone", STR("ip:192.0.2.1%lo"), -EINVAL },
	{ "trailing space", STR("ip:192.0.2.1 "), -EINVAL },
	{ "trailing newline", STR("ip:192.0.2.1\n"), -EINVAL },
	{ "len cuts ipv4", .str = "ip:192.0.2.1", .len = 8, .err = -EINVAL },
	{ "ipv6 two double colons", STR("ip:2001:db8::1::2"), -EINVAL },
	{ "ipv6 triple colon", STR("ip:2001:db8:::1"), -EINVAL },
	{ "ipv6 long group", STR("ip:12345::1"), -EINVAL },
	{ "ipv6 bad digit", STR("ip:2001:db8::g"), -EINVAL },
	{ "ipv6 nine groups", STR("ip:1:2:3:4:5:6:7:8:9"), -EINVAL },
	{ "ipv6 trailing colon", STR("ip:2001:db8::1:"), -EINVAL },
	{ "ipv6 ipv4 tail then port", STR("ip:::ffff:192.0.2.1:80"), -EINVAL },
	{ "link-local ipv4 tail then colon", STR("ip:fe80::192.0.2.1:7"),
	  -EINVAL },
	{ "ipv6 zone on global", STR("ip:2001:db8::1%lo"), -EINVAL },
	{ "ipv6 empty zone", STR("ip:fe80::1%"), -EINVAL },
	{ "ipv6 unknown zone", STR("ip:fe80::1%nosuchdev0"), -EINVAL },
	{ "ipv6 zone too long", STR("ip:fe80::1%0123456789abcdef"), -EINVAL },
	{ "ipv6 zone overflows", STR("ip:fe80::1%4294967296"), -EINVAL },
	{ "ipv6 negative zone", STR("ip:fe80::1%-1"), -EINVAL },
	{ "ipv6 two zones", STR("ip:fe80::1%lo%lo"), -EINVAL },
	{ "gid with zone", STR("gid:fe80::1%lo"), -EINVAL },
	{ "gid dotted quad", STR("gid:192.0.2.1"), -EINVAL },
	{ "gid trailing colon", STR("gid:fe80::1:"), -EINVAL },
	{ "gid short", STR("gid:fe80:1"), -EINVAL },
	{ "empty src", STR("@ip:192.0.2.1"), -EINVAL },
	{ "empty dst", STR("ip:192.0.2.1@"), -EINVAL },
	{ "len cuts dst", .str = "ip:192.0.2.1@ip:192.0.2.2", .len = 13,
	  .err = -EINVAL },
	{ "two at signs", STR("ip:192.0.2.1@ip:192.0.2.2@ip:192.0.2.3"),
	  -EINVAL },
	{ "comma and at", STR("ip:192.0.2.1,ip:192.0.2.2@ip:192.0.2.3"),
	  -EINVAL },
	{ "src without prefix", STR("192.0.2.1@ip:192.0.2.2"),
	  -EPROTONOSUPPORT },
	{ "dst without prefix", STR("ip:192.0.2.1@192.0.2.2"),
	  -EPROTONOSUPPORT },
	{ "bad src", STR("ip:192.0.2.300@ip:192.0.2.2"), -EINVAL },
	{ "bad dst", STR("ip:192.0.2.1@ip:192.0.2.300"), -EINVAL },
	{ "overlong",
	  STR("ip:000000000000000000000000000000000000000000000000000000000000192.0.2.1"),
	  -EINVAL },
};

/* The sockaddr @w stands for, with @port, built by hand. */
static void want_to_sockaddr(const struct want_addr *w, u16 port,
			     struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_ib *sib = (struct sockaddr_ib *)ss;
	int i;

	memset(ss, 0, sizeof(*ss));
	switch (w->family) {
	case AF_INET:
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, w->v4, sizeof(w->v4));
		break;
	case AF_INET6:
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		for (i = 0; i < 8; i++)
			sin6->sin6_addr.s6_addr16[i] = htons(w->v6[i]);
		sin6->sin6_scope_id = w->scope;
		break;
	case AF_IB:
		sib->sib_family = AF_IB;
		sib->sib_pkey = htons(0xffff);
		for (i = 0; i < 8; i++)
			sib->sib_addr.sib_addr16[i] = htons(w->v6[i]);
		sib->sib_sid = cpu_to_be64(IB_PS_IB | port);
		sib->sib_sid_mask = cpu_to_be64(~0ULL);
		break;
	}
}

static void expect_sockaddr(struct kunit *test, const char *what,
			    const struct want_addr *w, u16 port,
			    const struct sockaddr_storage *got)
{
	struct sockaddr_storage want;

	want_to_sockaddr(w, port, &want);
	KUNIT_EXPECT_EQ_MSG(test, got->ss_family, want.ss_family, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(got, &want, sizeof(want)), 0,
			    "%s:\n got %*ph\nwant %*ph", what,
			    (int)sizeof(struct sockaddr_ib), got,
			    (int)sizeof(struct sockaddr_ib), &want);
}

/* @len bytes of @s in a buffer of exactly that size: no NUL after them. */
static const char *exact_copy(struct kunit *test, const char *s, size_t len)
{
	char *p = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, p);
	memcpy(p, s, len);
	return p;
}

static int parse(struct kunit *test, const char *s, size_t len, u16 port,
		 struct rtrs_addr *addr)
{
	return rtrs_addr_to_sockaddr(exact_copy(test, s, len), len, port, addr);
}

static void good_desc(const struct good_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

static void bad_desc(const struct bad_case *c, char *desc)
{
	strscpy(desc, c->desc, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(good, good_cases, good_desc);
KUNIT_ARRAY_PARAM(bad, bad_cases, bad_desc);

/* Parse a good case and check both ends against the table. */
static void parse_good_case(struct kunit *test, const struct good_case *c,
			    struct sockaddr_storage *src,
			    struct sockaddr_storage *dst,
			    struct rtrs_addr *addr)
{
	addr->src = src;
	addr->dst = dst;
	KUNIT_ASSERT_EQ(test, parse(test, c->str, c->len, c->port, addr), 0);

	if (c->src.family == AF_UNSPEC) {
		KUNIT_EXPECT_NULL(test, addr->src);
	} else {
		KUNIT_EXPECT_PTR_EQ(test, addr->src, src);
		expect_sockaddr(test, "src", &c->src, 0, src);
	}
	KUNIT_EXPECT_PTR_EQ(test, addr->dst, dst);
	expect_sockaddr(test, "dst", &c->dst, c->port, dst);
}

static void addr_parse_good(struct kunit *test)
{
	const struct good_case *c = test->param_value;
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr;

	/* Garbage in the storage must not survive the parse. */
	memset(&src, 0xa5, sizeof(src));
	memset(&dst, 0xa5, sizeof(dst));
	parse_good_case(test, c, &src, &dst, &addr);
}

static void addr_parse_bad(struct kunit *test)
{
	const struct bad_case *c = test->param_value;
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr = { .src = &src, .dst = &dst };

	KUNIT_EXPECT_EQ(test, parse(test, c->str, c->len, PORT, &addr), c->err);
	KUNIT_EXPECT_PTR_EQ(test, addr.src, &src);
	KUNIT_EXPECT_PTR_EQ(test, addr.dst, &dst);
}

/* Parse, print, parse what was printed: the same addresses come back. */
static void addr_round_trip(struct kunit *test)
{
	const struct good_case *c = test->param_value;
	struct sockaddr_storage src, dst, src2, dst2;
	struct rtrs_addr addr, addr2 = { .src = &src2, .dst = &dst2 };
	char buf[160];
	int n;

	parse_good_case(test, c, &src, &dst, &addr);

	n = rtrs_addr_to_str(&addr, buf, sizeof(buf));
	KUNIT_EXPECT_STREQ(test, buf, c->printed);
	KUNIT_EXPECT_EQ(test, (size_t)n, strlen(c->printed));

	KUNIT_ASSERT_EQ(test, parse(test, buf, n, c->port, &addr2), 0);
	if (addr.src) {
		KUNIT_ASSERT_PTR_EQ(test, addr2.src, &src2);
		KUNIT_EXPECT_EQ(test, memcmp(&src, &src2, sizeof(src)), 0);
	} else {
		KUNIT_EXPECT_NULL(test, addr2.src);
	}
	KUNIT_EXPECT_EQ(test, memcmp(&dst, &dst2, sizeof(dst)), 0);
}

static void expect_bytes(struct kunit *test, const char *what,
			 const void *got, const void *want, size_t n)
{
	KUNIT_EXPECT_EQ_MSG(test, memcmp(got, want, n), 0,
			    "%s: got %*ph, want %*ph", what, (int)n, got,
			    (int)n, want);
}

/* Parse a good string into @src and @dst. */
static void parse_ok(struct kunit *test, const char *s, u16 port,
		     struct sockaddr_storage *src,
		     struct sockaddr_storage *dst)
{
	struct rtrs_addr addr = { .src = src, .dst = dst };

	KUNIT_ASSERT_EQ_MSG(test, parse(test, s, strlen(s), port, &addr), 0,
			    "%s", s);
}

/*
 * The port lands in network byte order, for IP in sin_port and sin6_port,
 * for AF_IB in the low 16 bits of the big-endian service ID; a source
 * address always gets port 0.  Checked byte by byte, not with htons().
 */
static void addr_port_network_order(struct kunit *test)
{
	static const u8 port_be[] = { 0x12, 0x34 };
	static const u8 zero[] = { 0, 0 };
	static const u8 sid_1234[] = { 0, 0, 0, 0, 0x01, 0x3f, 0x12, 0x34 };
	static const u8 sid_ffff[] = { 0, 0, 0, 0, 0x01, 0x3f, 0xff, 0xff };
	static const u8 sid_src[] = { 0, 0, 0, 0, 0x01, 0x3f, 0, 0 };
	static const u8 ones[] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };
	struct sockaddr_storage src, dst;
	struct sockaddr_in6 *dst6 = (struct sockaddr_in6 *)&dst;
	struct sockaddr_in *src4 = (struct sockaddr_in *)&src;
	struct sockaddr_in *dst4 = (struct sockaddr_in *)&dst;
	struct sockaddr_ib *srcib = (struct sockaddr_ib *)&src;
	struct sockaddr_ib *dstib = (struct sockaddr_ib *)&dst;

	parse_ok(test, "ip:192.0.2.1@ip:192.0.2.2", 0x1234, &src, &dst);
	expect_bytes(test, "ipv4 dst port", &dst4->sin_port, port_be, 2);
	expect_bytes(test, "ipv4 src port", &src4->sin_port, zero, 2);

	parse_ok(test, "ip:2001:db8::2", 0x1234, &src, &dst);
	expect_bytes(test, "ipv6 dst port", &dst6->sin6_port, port_be, 2);

	parse_ok(test, "gid:fe80::1@gid:fe80::2", 0x1234, &src, &dst);
	expect_bytes(test, "gid dst sid", &dstib->sib_sid, sid_1234, 8);
	expect_bytes(test, "gid dst sid mask", &dstib->sib_sid_mask, ones, 8);
	expect_bytes(test, "gid dst pkey", &dstib->sib_pkey, ones, 2);
	expect_bytes(test, "gid src sid", &srcib->sib_sid, sid_src, 8);

	/* A port with the top bit set must not spill into the port space. */
	parse_ok(test, "gid:fe80::2", 0xffff, &src, &dst);
	expect_bytes(test, "gid dst sid", &dstib->sib_sid, sid_ffff, 8);
}

static void addr_print_families(struct kunit *test)
{
	struct sockaddr_storage ss = { .ss_family = AF_UNIX };
	char buf[64];

	KUNIT_EXPECT_EQ(test, sockaddr_to_str((struct sockaddr *)&ss, buf,
					      sizeof(buf)), 24);
	KUNIT_EXPECT_STREQ(test, buf, "<invalid address family>");
}

/* Printing into a short buffer truncates and counts what it wrote. */
static void addr_print_truncates(struct kunit *test)
{
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr = { .src = &src, .dst = &dst };
	char buf[32];

	parse_ok(test, "ip:192.0.2.1@ip:192.0.2.2", PORT, &src, &dst);

	memset(buf, 'x', sizeof(buf));
	KUNIT_EXPECT_EQ(test, sockaddr_to_str((struct sockaddr *)&dst, buf, 0),
			0);
	KUNIT_EXPECT_EQ(test, buf[0], 'x');
	KUNIT_EXPECT_EQ(test, rtrs_addr_to_str(&addr, buf, 0), 0);
	KUNIT_EXPECT_EQ(test, buf[0], 'x');

	KUNIT_EXPECT_EQ(test, sockaddr_to_str((struct sockaddr *)&dst, buf, 6),
			5);
	KUNIT_EXPECT_STREQ(test, buf, "ip:19");

	/* Cut inside the source, right after '@', inside the destination. */
	KUNIT_EXPECT_EQ(test, rtrs_addr_to_str(&addr, buf, 8), 7);
	KUNIT_EXPECT_STREQ(test, buf, "ip:192.");
	KUNIT_EXPECT_EQ(test, rtrs_addr_to_str(&addr, buf, 14), 13);
	KUNIT_EXPECT_STREQ(test, buf, "ip:192.0.2.1@");
	KUNIT_EXPECT_EQ(test, rtrs_addr_to_str(&addr, buf, 20), 19);
	KUNIT_EXPECT_STREQ(test, buf, "ip:192.0.2.1@ip:192");
}

static struct kunit_case rtrs_addr_cases[] = {
	KUNIT_CASE_PARAM(addr_parse_good, good_gen_params),
	KUNIT_CASE_PARAM(addr_parse_bad, bad_gen_params),
	KUNIT_CASE_PARAM(addr_round_trip, good_gen_params),
	KUNIT_CASE(addr_port_network_order),
	KUNIT_CASE(addr_print_families),
	KUNIT_CASE(addr_print_truncates),
	{}
};

static struct kunit_suite rtrs_addr_suite = {
	.name = "rtrs-addr",
	.test_cases = rtrs_addr_cases,
};

kunit_test_suite(rtrs_addr_suite);

MODULE_DESCRIPTION("KUnit tests of rtrs address parsing and printing");
MODULE_LICENSE("GPL");
