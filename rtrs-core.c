// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, shared core.
 *
 * Holds what client and server share: RDMA CM setup, the ib device and PD
 * pool, information units, CQ and QP setup, heartbeats and address helpers.
 * The core never calls up into the client or the server.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/if.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inet.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib.h>
#include <rdma/rdma_cm.h>

#include "rtrs-pri.h"
#include "rtrs.h"

/*
 * Address strings.
 *
 * A path is "[src@]dst"; each address is "ip:" with an IPv4 or IPv6
 * literal, the latter optionally followed by "%" and a zone (interface name
 * or decimal index), or "gid:" with an InfiniBand GID written as an IPv6
 * literal.  No address we accept is longer than a prefix, the longest IPv6
 * literal (an IPv4 tail included), "%" and an interface name.
 */
#define RTRS_ADDR_STR_MAX \
	(sizeof("gid:") - 1 + INET6_ADDRSTRLEN + 1 + IFNAMSIZ - 1)

static_assert(sizeof(struct sockaddr_ib) <= sizeof(struct sockaddr_storage));

/* Strip @prefix from the front of the @len bytes at @s, if it is there. */
static bool rtrs_skip_prefix(const char **s, size_t *len, const char *prefix)
{
	size_t n = strlen(prefix);

	if (*len < n || memcmp(*s, prefix, n))
		return false;
	*s += n;
	*len -= n;
	return true;
}

static int rtrs_parse_ipv4(const char *s, size_t len, u16 port,
			   struct sockaddr_in *sin)
{
	const char *end;

	if (!in4_pton(s, len, (u8 *)&sin->sin_addr.s_addr, '\0', &end) ||
	    end != s + len)
		return -EINVAL;

	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return 0;
}

/*
 * A zone names the link a link-local address lives on: an interface name,
 * looked up in init_net where RTRS makes its connections, else a decimal
 * interface index.
 */
static int rtrs_parse_ipv6_zone(const char *s, size_t len,
				struct sockaddr_in6 *sin6)
{
	char zone[IFNAMSIZ];
	struct net_device *ndev;
	int ifindex = 0;

	if (!len || len >= sizeof(zone))
		return -EINVAL;
	if (!(ipv6_addr_type(&sin6->sin6_addr) & IPV6_ADDR_LINKLOCAL))
		return -EINVAL;

	memcpy(zone, s, len);
	zone[len] = '\0';

	rcu_read_lock();
	ndev = dev_get_by_name_rcu(&init_net, zone);
	if (ndev)
		ifindex = ndev->ifindex;
	rcu_read_unlock();

	if (ifindex) {
		sin6->sin6_scope_id = ifindex;
		return 0;
	}
	return kstrtou32(zone, 10, &sin6->sin6_scope_id) ? -EINVAL : 0;
}

static int rtrs_parse_ipv6(const char *s, size_t len, u16 port,
			   struct sockaddr_in6 *sin6)
{
	const char *end;
	int err;

	if (!in6_pton(s, len, sin6->sin6_addr.s6_addr, '%', &end))
		return -EINVAL;
	/*
	 * in6_pton() also stops, successfully, at a ':' that follows an
	 * embedded IPv4 address, so check what it stopped at.
	 */
	if (end != s + len) {
		if (*end != '%')
			return -EINVAL;
		end++;
		err = rtrs_parse_ipv6_zone(end, s + len - end, sin6);
		if (err)
			return err;
	}

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	return 0;
}

/* Only an IPv6 literal has a ':'; an IPv4 literal never does. */
static int rtrs_parse_ip(const char *s, size_t len, u16 port,
			 struct sockaddr_storage *ss)
{
	if (memchr(s, ':', len))
		return rtrs_parse_ipv6(s, len, port, (struct sockaddr_in6 *)ss);
	return rtrs_parse_ipv4(s, len, port, (struct sockaddr_in *)ss);
}

/*
 * An AF_IB address carries the port as IB service ID in the RDMA CM's IB
 * port space, as mainline RTRS does, so an IP listener on that port and an
 * AF_IB one use the same number.  The P_Key is the default full-membership
 * one.
 */
static int rtrs_parse_gid(const char *s, size_t len, u16 port,
			  struct sockaddr_ib *sib)
{
	const char *end;

	if (!in6_pton(s, len, sib->sib_addr.sib_raw, '\0', &end) ||
	    end != s + len)
		return -EINVAL;

	sib->sib_family = AF_IB;
	sib->sib_pkey = cpu_to_be16(0xffff);
	sib->sib_sid = cpu_to_be64(RDMA_IB_IP_PS_IB | port);
	sib->sib_sid_mask = cpu_to_be64(U64_MAX);
	return 0;
}

/* Parse one address: exactly the @len bytes at @s, NUL-free. */
static int rtrs_parse_addr(const char *s, size_t len, u16 port,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));

	if (!len || len > RTRS_ADDR_STR_MAX)
		return -EINVAL;
	if (rtrs_skip_prefix(&s, &len, "ip:"))
		return rtrs_parse_ip(s, len, port, ss);
	if (rtrs_skip_prefix(&s, &len, "gid:"))
		return rtrs_parse_gid(s, len, port, (struct sockaddr_ib *)ss);
	return -EPROTONOSUPPORT;
}

/*
 * Find the one separator of a path string, '@' or mainline's older ','.
 * Sets *@sep to its index, or to @len when there is none.
 */
static int rtrs_find_separator(const char *s, size_t len, size_t *sep)
{
	size_t i;

	*sep = len;
	for (i = 0; i < len; i++) {
		if (s[i] != '@' && s[i] != ',')
			continue;
		if (*sep != len)
			return -EINVAL;
		*sep = i;
	}
	return 0;
}

/**
 * rtrs_addr_to_sockaddr() - parse the text form of a path
 * @str: "[src@]dst"; mainline's older "src,dst" is accepted too.  Each
 *	address is "ip:" followed by an IPv4 or IPv6 literal, the latter
 *	optionally followed by "%" and a zone (only for a link-local
 *	address: an interface name in init_net, else a decimal interface
 *	index), or "gid:" followed by a GID written as an IPv6 literal.
 *	Prefixes are lower case.  Nothing may follow an address: no space,
 *	no newline, no port.
 * @len: length of @str.  @str need not be NUL-terminated; nothing at or
 *	past @str[@len] is read, and a NUL before that ends the string.
 * @port: port for the destination.  An IP destination gets it in
 *	sin_port/sin6_port; a GID destination gets it as IB service ID
 *	(RDMA_IB_IP_PS_IB | @port, all-ones mask) with P_Key 0xffff.  The
 *	source always gets port 0.
 * @addr: @addr->dst, and @addr->src when @str names a source, point to the
 *	storage to fill in.  Each filled sockaddr is zeroed first.
 *
 * Context: any context.
 * Return: 0 on success; @addr->src is then set to NULL when @str names no
 * source.  -EPROTONOSUPPORT when an address has no "ip:" or "gid:" prefix;
 * -EINVAL for an empty string or address, more than one separator, a bad
 * literal, a zone that is unknown, too long or on a non-link-local
 * address, or trailing characters.  On error the storage may be clobbered,
 * but @addr->src and @addr->dst themselves are left alone.
 */
int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
			  struct rtrs_addr *addr)
{
	size_t sep;
	int err;

	len = strnlen(str, len);
	if (!len)
		return -EINVAL;

	err = rtrs_find_separator(str, len, &sep);
	if (err)
		return err;

	if (sep == len) {
		err = rtrs_parse_addr(str, len, port, addr->dst);
		if (!err)
			addr->src = NULL;
		return err;
	}

	err = rtrs_parse_addr(str, sep, 0, addr->src);
	if (err)
		return err;
	return rtrs_parse_addr(str + sep + 1, len - sep - 1, port, addr->dst);
}
EXPORT_SYMBOL_GPL(rtrs_addr_to_sockaddr);

static int rtrs_ipv6_to_str(const struct sockaddr_in6 *sin6, char *buf,
			    size_t len)
{
	if (sin6->sin6_scope_id)
		return scnprintf(buf, len, "ip:%pI6c%%%u", &sin6->sin6_addr,
				 sin6->sin6_scope_id);
	return scnprintf(buf, len, "ip:%pI6c", &sin6->sin6_addr);
}

/**
 * sockaddr_to_str() - print an address in the form rtrs_addr_to_sockaddr()
 *	parses
 * @addr: the address.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * AF_INET prints as "ip:" and dotted quad, AF_INET6 as "ip:" and the
 * compressed IPv6 form with "%" and the decimal zone index appended when
 * the scope ID is not 0, AF_IB as "gid:" and the full IPv6 form of the GID.
 * Ports are not printed.  Any other family prints as
 * "<invalid address family>".
 *
 * Context: any context.
 * Return: the number of characters written to @buf, not counting the
 * terminating NUL; 0 when @len is 0.  The output is truncated to fit.
 */
int sockaddr_to_str(const struct sockaddr *addr, char *buf, size_t len)
{
	const struct sockaddr_ib *sib;
	const struct sockaddr_in *sin;

	switch (addr->sa_family) {
	case AF_IB:
		sib = (const struct sockaddr_ib *)addr;
		return scnprintf(buf, len, "gid:%pI6", sib->sib_addr.sib_raw);
	case AF_INET:
		sin = (const struct sockaddr_in *)addr;
		return scnprintf(buf, len, "ip:%pI4", &sin->sin_addr);
	case AF_INET6:
		return rtrs_ipv6_to_str((const struct sockaddr_in6 *)addr,
					buf, len);
	}
	return scnprintf(buf, len, "<invalid address family>");
}
EXPORT_SYMBOL_GPL(sockaddr_to_str);

/**
 * rtrs_addr_to_str() - print a path in the form rtrs_addr_to_sockaddr()
 *	parses
 * @addr: the path; @addr->src may be NULL.
 * @buf: output buffer.
 * @len: size of @buf.
 *
 * Prints "src@dst", or "dst" alone when @addr->src is NULL, each address as
 * sockaddr_to_str() prints it.
 *
 * Context: any context.
 * Return: the number of characters written to @buf, not counting the
 * terminating NUL; 0 when @len is 0.  The output is truncated to fit.
 */
int rtrs_addr_to_str(const struct rtrs_addr *addr, char *buf, size_t len)
{
	int cnt = 0;

	if (addr->src) {
		cnt = sockaddr_to_str((struct sockaddr *)addr->src, buf, len);
		cnt += scnprintf(buf + cnt, len - cnt, "@");
	}
	cnt += sockaddr_to_str((struct sockaddr *)addr->dst, buf + cnt,
			       len - cnt);
	return cnt;
}
EXPORT_SYMBOL_GPL(rtrs_addr_to_str);

static int __init rtrs_core_init(void)
{
	return 0;
}

static void __exit rtrs_core_exit(void)
{
}

module_init(rtrs_core_init);
module_exit(rtrs_core_exit);

MODULE_DESCRIPTION("RDMA transport (RTRS protocol 2.0): shared core");
MODULE_LICENSE("GPL");
