/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: the "paths" module parameter of the test and benchmark clients,
 * shared by both.  Uses only rtrs.h, which the includer brings.
 */
#ifndef RTRS_TEST_PATHS_H
#define RTRS_TEST_PATHS_H

#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/string.h>

/**
 * rtrs_test_parse_paths() - addresses of a comma-separated path list
 * @paths: "[src@]dst" entries separated by commas.
 * @port: port of every destination.
 * @addrs: @max entries to fill.
 * @ss: @max pairs of storage for the source and destination of each.
 * @max: room in @addrs and @ss.
 *
 * Return: the number of paths, or a negative errno.
 */
static inline int rtrs_test_parse_paths(const char *paths, u16 port,
					struct rtrs_addr *addrs,
					struct sockaddr_storage (*ss)[2],
					int max)
{
	char *list, *cur, *tok;
	int n = 0, err = 0;

	if (!paths)
		return -EINVAL;
	list = kstrdup(paths, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	cur = list;
	while ((tok = strsep(&cur, ",")) && !err) {
		if (!*tok)
			continue;
		if (n == max) {
			err = -E2BIG;
			break;
		}
		addrs[n].src = &ss[n][0];
		addrs[n].dst = &ss[n][1];
		err = rtrs_addr_to_sockaddr(tok, strlen(tok), port, &addrs[n]);
		n++;
	}
	kfree(list);
	return err ?: (n ?: -EINVAL);
}

#endif /* RTRS_TEST_PATHS_H */
