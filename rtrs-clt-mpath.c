// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: which path a request takes.
 *
 * Each policy looks only at connected paths, reads per-path numbers
 * without a lock and takes no lock itself: the path list is walked under
 * the RCU read lock the caller holds.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/string.h>

#include "rtrs-clt.h"

static const char * const rtrs_clt_mp_names[] = {
	[RTRS_CLT_MP_ROUND_ROBIN]	= "round-robin",
	[RTRS_CLT_MP_MIN_INFLIGHT]	= "min-inflight",
	[RTRS_CLT_MP_MIN_LATENCY]	= "min-latency",
};

/**
 * rtrs_clt_mp_name() - the sysfs name of a policy
 * @policy: &enum rtrs_clt_mp_policy.
 *
 * Return: its name.
 */
const char *rtrs_clt_mp_name(int policy)
{
	return rtrs_clt_mp_names[policy];
}

/**
 * rtrs_clt_mp_parse() - the policy a sysfs write names
 * @buf: the name, or its number in &enum rtrs_clt_mp_policy as mainline
 *	RTRS accepts; one trailing newline is allowed.
 *
 * Return: the policy, or -EINVAL.
 */
int rtrs_clt_mp_parse(const char *buf)
{
	int policy;

	policy = sysfs_match_string(rtrs_clt_mp_names, buf);
	if (policy >= 0)
		return policy;
	if (!kstrtoint(buf, 10, &policy) && policy >= 0 &&
	    policy < ARRAY_SIZE(rtrs_clt_mp_names))
		return policy;
	return -EINVAL;
}

/*
 * The first connected path at or after position seq % paths_num in the
 * list, else the first connected one: each CPU walks the paths in turn.
 */
static struct rtrs_clt_path *rtrs_clt_mp_round_robin(struct rtrs_clt_sess *clt)
{
	unsigned int num = max_t(unsigned int, READ_ONCE(clt->paths_num), 1);
	unsigned int skip = this_cpu_inc_return(*clt->rr_seq) % num;
	struct rtrs_clt_path *path, *first = NULL;
	unsigned int pos = 0;

	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (!rtrs_clt_path_connected(path)) {
			pos++;
			continue;
		}
		if (pos++ >= skip)
			return path;
		if (!first)
			first = path;
	}
	return first;
}

static struct rtrs_clt_path *rtrs_clt_mp_min_inflight(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path, *best = NULL;
	int min = INT_MAX, cur;

	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (!rtrs_clt_path_connected(path))
			continue;
		cur = atomic_read(&path->stats.inflight);
		if (cur < min) {
			min = cur;
			best = path;
		}
	}
	return best;
}

static struct rtrs_clt_path *rtrs_clt_mp_min_latency(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path, *best = NULL;
	ktime_t min = KTIME_MAX, cur;

	list_for_each_entry_rcu(path, &clt->paths_list, entry) {
		if (!rtrs_clt_path_connected(path))
			continue;
		/* Not measured yet: behind every path that was. */
		cur = READ_ONCE(path->s.hb_cur_latency) ?: KTIME_MAX - 1;
		if (cur < min) {
			min = cur;
			best = path;
		}
	}
	return best;
}

/**
 * rtrs_clt_mp_pick() - the path the session's policy chooses
 * @clt: the session.
 *
 * Context: inside an RCU read section; any context.
 * Return: a connected path, or NULL when none is.
 */
struct rtrs_clt_path *rtrs_clt_mp_pick(struct rtrs_clt_sess *clt)
{
	switch (READ_ONCE(clt->mp_policy)) {
	case RTRS_CLT_MP_ROUND_ROBIN:
		return rtrs_clt_mp_round_robin(clt);
	case RTRS_CLT_MP_MIN_LATENCY:
		return rtrs_clt_mp_min_latency(clt);
	default:
		return rtrs_clt_mp_min_inflight(clt);
	}
}
