/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: the "paths" module parameter of the test and benchmark clients,
 * and the session each opens over those paths, shared by both.  Uses only
 * rtrs.h, which the includer brings.
 */
#ifndef RTRS_TEST_PATHS_H
#define RTRS_TEST_PATHS_H

#include <linux/err.h>
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

/**
 * rtrs_test_clt_open() - open a client session over a path list
 * @ops: the link event callback and its private pointer.
 * @sessname: name of the session.
 * @paths: "[src@]dst" entries separated by commas.
 * @port: port of every destination.
 * @max: most paths @paths may list.
 * @max_reconnect_attempts: reconnects of a path before it gives up, -1
 *	forever.
 *
 * Reconnects wait 1 s; no poll queue.
 *
 * Return: the session, or an ERR_PTR() on a bad path list or a failed
 * open.
 */
static inline struct rtrs_clt_sess *
rtrs_test_clt_open(struct rtrs_clt_ops *ops, const char *sessname,
		   const char *paths, u16 port, int max,
		   s16 max_reconnect_attempts)
{
	struct rtrs_clt_sess *clt = NULL;
	struct sockaddr_storage (*ss)[2];
	struct rtrs_addr *addrs;
	int n;

	addrs = kcalloc(max, sizeof(*addrs), GFP_KERNEL);
	ss = kcalloc(max, sizeof(*ss), GFP_KERNEL);
	n = addrs && ss ? rtrs_test_parse_paths(paths, port, addrs, ss, max) :
			  -ENOMEM;
	if (n > 0)
		clt = rtrs_clt_open(ops, sessname, addrs, n, port, 0, 1,
				    max_reconnect_attempts, 0);
	kfree(ss);
	kfree(addrs);
	return n < 0 ? ERR_PTR(n) : clt;
}

#endif /* RTRS_TEST_PATHS_H */
