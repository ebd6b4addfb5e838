// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: sysfs.
 *
 * /sys/class/rtrs-client/<session>/          add_path, mpath_policy,
 *                                            max_reconnect_attempts
 * /sys/class/rtrs-client/<session>/paths/<src@dst>/
 *                                            state, hca_name, hca_port,
 *                                            src_addr, dst_addr,
 *                                            cur_latency, reconnect,
 *                                            disconnect, remove_path
 * /sys/class/rtrs-client/<session>/paths/<src@dst>/stats/
 *                                            reads, read_bytes,
 *                                            read_bufs, writes,
 *                                            write_bytes, packed_rsps,
 *                                            stale_rsps, unsig_sends,
 *                                            large_mrs, large_waits,
 *                                            steered, inflight,
 *                                            failovers, quarantined,
 *                                            reconnects, reconnect_fails,
 *                                            reset_all
 *
 * Each directory is a struct device whose attribute groups exist before
 * its uevent.  The session and each path are freed by their device's
 * release.  Documentation/ABI/testing/sysfs-class-rtrs-client describes
 * every file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kstrtox.h>
#include <linux/slab.h>

#include "../rtrs-clt.h"

/* Longest "[src@]dst" add_path takes: two GIDs or scoped IPv6 addresses. */
#define RTRS_CLT_SYSFS_PATH_MAX	160

static struct class rtrs_clt_class = {
	.name	= "rtrs-client",
};

static struct rtrs_clt_sess *to_clt_sess(struct device *dev)
{
	return container_of(dev, struct rtrs_clt_sess, dev);
}

static struct rtrs_clt_path *to_clt_path_dev(struct device *dev)
{
	return container_of(dev, struct rtrs_clt_path, dev);
}

/* Action files take "1" and nothing else. */
static int rtrs_clt_sysfs_action(const char *buf)
{
	return sysfs_streq(buf, "1") ? 0 : -EINVAL;
}

/* ---- session ----------------------------------------------------- */

static ssize_t add_path_store(struct device *dev,
			      struct device_attribute *attr,
			      const char *buf, size_t count)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);
	struct sockaddr_storage src, dst;
	struct rtrs_addr addr = {
		.src	= &src,
		.dst	= &dst,
	};
	size_t len = count;
	int err;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len > RTRS_CLT_SYSFS_PATH_MAX)
		return -E2BIG;
	err = rtrs_addr_to_sockaddr(buf, len, clt->port, &addr);
	if (err)
		return -EINVAL;
	err = rtrs_clt_add_path(clt, &addr);
	return err ?: count;
}
static DEVICE_ATTR_WO(add_path);

static ssize_t mpath_policy_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);

	return sysfs_emit(buf, "%s\n",
			  rtrs_clt_mp_name(READ_ONCE(clt->mp_policy)));
}

static ssize_t mpath_policy_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);
	int policy = rtrs_clt_mp_parse(buf);

	if (policy < 0)
		return policy;
	WRITE_ONCE(clt->mp_policy, policy);
	return count;
}
static DEVICE_ATTR_RW(mpath_policy);

static ssize_t max_reconnect_attempts_show(struct device *dev,
					   struct device_attribute *attr,
					   char *buf)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(clt->max_reconnect_attempts));
}

static ssize_t max_reconnect_attempts_store(struct device *dev,
					    struct device_attribute *attr,
					    const char *buf, size_t count)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);
	s16 val;
	int err;

	err = kstrtos16(buf, 0, &val);
	if (err)
		return err;
	if (val < -1)
		return -ERANGE;
	WRITE_ONCE(clt->max_reconnect_attempts, val);
	return count;
}
static DEVICE_ATTR_RW(max_reconnect_attempts);

static ssize_t io_timeout_sec_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(clt->io_timeout_sec));
}

static ssize_t io_timeout_sec_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct rtrs_clt_sess *clt = to_clt_sess(dev);
	u32 val;
	int err;

	err = kstrtou32(buf, 0, &val);
	if (err)
		return err;
	if (val > RTRS_CLT_IO_TIMEOUT_MAX_SEC)
		return -ERANGE;
	WRITE_ONCE(clt->io_timeout_sec, val);
	return count;
}
static DEVICE_ATTR_RW(io_timeout_sec);

static struct attribute *rtrs_clt_sess_attrs[] = {
	&dev_attr_add_path.attr,
	&dev_attr_mpath_policy.attr,
	&dev_attr_max_reconnect_attempts.attr,
	&dev_attr_io_timeout_sec.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rtrs_clt_sess);

static void rtrs_clt_sess_dev_release(struct device *dev)
{
	rtrs_clt_sess_release(to_clt_sess(dev));
}

/* Embedded in the session, which its reference to the session outlives. */
static void rtrs_clt_paths_dev_release(struct device *dev)
{
}

/**
 * rtrs_clt_sess_dev_init() - prepare the sysfs devices of a session
 * @clt: the session, just allocated.
 *
 * From here on the session is freed by put_device(&@clt->dev).
 *
 * Context: process context.
 */
void rtrs_clt_sess_dev_init(struct rtrs_clt_sess *clt)
{
	device_initialize(&clt->dev);
	clt->dev.class = &rtrs_clt_class;
	clt->dev.groups = rtrs_clt_sess_groups;
	clt->dev.release = rtrs_clt_sess_dev_release;

	device_initialize(&clt->paths_dev);
	clt->paths_dev.parent = &clt->dev;
	clt->paths_dev.release = rtrs_clt_paths_dev_release;
}

/**
 * rtrs_clt_sess_dev_add() - show a session and its paths in sysfs
 * @clt: the session, its paths allocated.
 *
 * Context: process context; sleeps.
 * Return: 0, -EEXIST when a session of that name is shown already, or
 * another negative errno; on failure nothing is left in sysfs.
 */
int rtrs_clt_sess_dev_add(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;
	int err;

	err = dev_set_name(&clt->dev, "%s", clt->sessname);
	if (err)
		return err;
	err = rtrs_fail_or(-ENOMEM, device_add(&clt->dev));
	if (err)
		return err;
	err = dev_set_name(&clt->paths_dev, "paths");
	if (!err)
		err = rtrs_fail_or(-ENOMEM, device_add(&clt->paths_dev));
	if (err)
		goto del_sess;

	list_for_each_entry(path, &clt->paths_list, entry) {
		err = rtrs_clt_path_dev_add(path);
		if (err)
			goto del_paths;
	}
	return 0;

del_paths:
	list_for_each_entry(path, &clt->paths_list, entry)
		rtrs_clt_path_dev_del(path);
	device_del(&clt->paths_dev);
del_sess:
	device_del(&clt->dev);
	/* device_del() leaves the name; a later put frees it. */
	return err;
}

/**
 * rtrs_clt_sess_dev_del() - remove a session and its paths from sysfs
 * @clt: the session; no path is being added or removed.
 *
 * Waits for reads and writes of its files under way to finish.
 *
 * Context: process context; sleeps.
 */
void rtrs_clt_sess_dev_del(struct rtrs_clt_sess *clt)
{
	struct rtrs_clt_path *path;

	if (!device_is_registered(&clt->dev))
		return;
	list_for_each_entry(path, &clt->paths_list, entry)
		rtrs_clt_path_dev_del(path);
	if (device_is_registered(&clt->paths_dev))
		device_del(&clt->paths_dev);
	device_del(&clt->dev);
}

/* ---- path ---------------------------------------------------------- */

static const char * const rtrs_clt_state_names[] = {
	[RTRS_CLT_CONNECTING]	= "connecting",
	[RTRS_CLT_CONNECTED]	= "connected",
	[RTRS_CLT_CLOSING]	= "closing",
	[RTRS_CLT_RECONNECTING]	= "reconnecting",
	[RTRS_CLT_CLOSED]	= "closed",
	[RTRS_CLT_DEAD]		= "dead",
};

static ssize_t state_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%s\n",
			  rtrs_clt_state_names[READ_ONCE(path->state)]);
}
static DEVICE_ATTR_RO(state);

static ssize_t hca_name_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);
	ssize_t ret;

	mutex_lock(&path->init_mutex);
	ret = sysfs_emit(buf, "%s\n",
			 path->s.dev ? dev_name(&path->s.dev->ib_dev->dev) : "");
	mutex_unlock(&path->init_mutex);
	return ret;
}
static DEVICE_ATTR_RO(hca_name);

static ssize_t hca_port_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);
	struct rtrs_con *con;
	u32 port = 0;

	mutex_lock(&path->init_mutex);
	con = path->s.dev ? path->s.con[0] : NULL;
	if (con && con->cm_id)
		port = con->cm_id->port_num;
	mutex_unlock(&path->init_mutex);
	return sysfs_emit(buf, "%u\n", port);
}
static DEVICE_ATTR_RO(hca_port);

static ssize_t rtrs_clt_show_addr(const struct sockaddr_storage *addr,
				  char *buf)
{
	int cnt = 0;

	if (addr->ss_family != AF_UNSPEC)
		cnt = sockaddr_to_str((const struct sockaddr *)addr, buf,
				      PAGE_SIZE - 1);
	return cnt + sysfs_emit_at(buf, cnt, "\n");
}

static ssize_t src_addr_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return rtrs_clt_show_addr(&to_clt_path_dev(dev)->s.src_addr, buf);
}
static DEVICE_ATTR_RO(src_addr);

static ssize_t dst_addr_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return rtrs_clt_show_addr(&to_clt_path_dev(dev)->s.dst_addr, buf);
}
static DEVICE_ATTR_RO(dst_addr);

static ssize_t cur_latency_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%lld\n",
			  ktime_to_ns(READ_ONCE(path->s.hb_cur_latency)));
}
static DEVICE_ATTR_RO(cur_latency);

static ssize_t proto_version_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	u16 version = READ_ONCE(to_clt_path_dev(dev)->lim.version);

	if (!version)
		return sysfs_emit(buf, "\n");
	return sysfs_emit(buf, "%u.%u\n", version >> 8, version & 0xff);
}
static DEVICE_ATTR_RO(proto_version);

/* Path changes wait for each other and never outlive the session. */
static int rtrs_clt_path_change(struct rtrs_clt_path *path,
				int (*change)(struct rtrs_clt_path *path))
{
	struct rtrs_clt_sess *clt = path->clt;
	int err;

	mutex_lock(&clt->change_mutex);
	err = clt->frozen || path->removed ? -ENODEV : change(path);
	mutex_unlock(&clt->change_mutex);
	return err;
}

static int rtrs_clt_path_do_disconnect(struct rtrs_clt_path *path)
{
	rtrs_clt_path_disconnect(path);
	return 0;
}

static ssize_t disconnect_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	int err = rtrs_clt_sysfs_action(buf);

	if (!err)
		err = rtrs_clt_path_change(to_clt_path_dev(dev),
					   rtrs_clt_path_do_disconnect);
	return err ?: count;
}
static DEVICE_ATTR_WO(disconnect);

static ssize_t reconnect_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	int err = rtrs_clt_sysfs_action(buf);

	if (!err)
		err = rtrs_clt_path_change(to_clt_path_dev(dev),
					   rtrs_clt_path_reconnect);
	return err ?: count;
}
static DEVICE_ATTR_WO(reconnect);

static ssize_t remove_path_store(struct device *dev,
				 struct device_attribute *attr,
				 const char *buf, size_t count)
{
	int err = rtrs_clt_sysfs_action(buf);

	if (!err)
		err = rtrs_clt_remove_path(to_clt_path_dev(dev), attr);
	return err ?: count;
}
static DEVICE_ATTR_WO(remove_path);

static struct attribute *rtrs_clt_path_attrs[] = {
	&dev_attr_state.attr,
	&dev_attr_hca_name.attr,
	&dev_attr_hca_port.attr,
	&dev_attr_src_addr.attr,
	&dev_attr_dst_addr.attr,
	&dev_attr_cur_latency.attr,
	&dev_attr_proto_version.attr,
	&dev_attr_reconnect.attr,
	&dev_attr_disconnect.attr,
	&dev_attr_remove_path.attr,
	NULL,
};

static const struct attribute_group rtrs_clt_path_group = {
	.attrs	= rtrs_clt_path_attrs,
};

/* ---- path statistics ------------------------------------------------ */

/* Sum over the CPUs of the counter at @off of struct rtrs_clt_cpu_stats. */
static u64 rtrs_clt_stats_sum(struct rtrs_clt_path *path, size_t off)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(*(u64 *)((void *)per_cpu_ptr(path->stats.pcpu,
							      cpu) + off));
	return sum;
}

#define RTRS_CLT_STAT_SHOW(name, field)					\
static ssize_t name##_show(struct device *dev,				\
			   struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%llu\n",				\
			  rtrs_clt_stats_sum(to_clt_path_dev(dev),	\
				offsetof(struct rtrs_clt_cpu_stats, field))); \
}									\
static DEVICE_ATTR_RO(name)

RTRS_CLT_STAT_SHOW(reads, cnt[READ]);
RTRS_CLT_STAT_SHOW(read_bytes, bytes[READ]);
RTRS_CLT_STAT_SHOW(read_bufs, read_bufs);
RTRS_CLT_STAT_SHOW(writes, cnt[WRITE]);
RTRS_CLT_STAT_SHOW(write_bytes, bytes[WRITE]);
RTRS_CLT_STAT_SHOW(packed_rsps, packed_rsps);
RTRS_CLT_STAT_SHOW(stale_rsps, stale_rsps);
RTRS_CLT_STAT_SHOW(unsig_sends, unsig_sends);
RTRS_CLT_STAT_SHOW(large_mrs, large_mrs);
RTRS_CLT_STAT_SHOW(large_waits, large_waits);
RTRS_CLT_STAT_SHOW(steered, steered);

static ssize_t inflight_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&path->stats.inflight));
}
static DEVICE_ATTR_RO(inflight);

static ssize_t failovers_show(struct device *dev,
			      struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&path->stats.failovers));
}
static DEVICE_ATTR_RO(failovers);

static ssize_t quarantined_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%u\n", READ_ONCE(path->quarantined));
}
static DEVICE_ATTR_RO(quarantined);

static ssize_t reconnects_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%d\n", atomic_read(&path->stats.reconnects));
}
static DEVICE_ATTR_RO(reconnects);

static ssize_t reconnect_fails_show(struct device *dev,
				    struct device_attribute *attr, char *buf)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);

	return sysfs_emit(buf, "%d\n",
			  atomic_read(&path->stats.reconnect_fails));
}
static DEVICE_ATTR_RO(reconnect_fails);

static ssize_t reset_all_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct rtrs_clt_path *path = to_clt_path_dev(dev);
	int err = rtrs_clt_sysfs_action(buf);
	int cpu;

	if (err)
		return err;
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(path->stats.pcpu, cpu), 0,
		       sizeof(struct rtrs_clt_cpu_stats));
	atomic_set(&path->stats.failovers, 0);
	atomic_set(&path->stats.reconnects, 0);
	atomic_set(&path->stats.reconnect_fails, 0);
	return count;
}
static DEVICE_ATTR_WO(reset_all);

static struct attribute *rtrs_clt_stats_attrs[] = {
	&dev_attr_reads.attr,
	&dev_attr_read_bytes.attr,
	&dev_attr_read_bufs.attr,
	&dev_attr_packed_rsps.attr,
	&dev_attr_stale_rsps.attr,
	&dev_attr_unsig_sends.attr,
	&dev_attr_large_mrs.attr,
	&dev_attr_large_waits.attr,
	&dev_attr_steered.attr,
	&dev_attr_writes.attr,
	&dev_attr_write_bytes.attr,
	&dev_attr_inflight.attr,
	&dev_attr_failovers.attr,
	&dev_attr_quarantined.attr,
	&dev_attr_reconnects.attr,
	&dev_attr_reconnect_fails.attr,
	&dev_attr_reset_all.attr,
	NULL,
};

static const struct attribute_group rtrs_clt_stats_group = {
	.name	= "stats",
	.attrs	= rtrs_clt_stats_attrs,
};

static const struct attribute_group *rtrs_clt_path_groups[] = {
	&rtrs_clt_path_group,
	&rtrs_clt_stats_group,
	NULL,
};

/**
 * rtrs_clt_path_dev_add() - show a path in sysfs
 * @path: the path; its session is shown.
 *
 * The directory is named "src@dst" after the path's addresses; a path
 * that never connected and was given no source is named after its
 * destination alone.
 *
 * Context: process context; sleeps.
 * Return: 0, or a negative errno (-EEXIST for a duplicate name).
 */
int rtrs_clt_path_dev_add(struct rtrs_clt_path *path)
{
	struct rtrs_addr addr = {
		.dst	= &path->s.dst_addr,
	};
	char name[2 * RTRS_CLT_SYSFS_PATH_MAX];
	int err;

	if (path->s.src_addr.ss_family != AF_UNSPEC)
		addr.src = &path->s.src_addr;
	rtrs_addr_to_str(&addr, name, sizeof(name));
	path->dev.parent = &path->clt->paths_dev;
	path->dev.groups = rtrs_clt_path_groups;
	err = dev_set_name(&path->dev, "%s", name);
	if (err)
		return err;
	err = rtrs_fail_or(-ENOMEM, device_add(&path->dev));
	if (err)
		return err;
	path->dev_added = true;
	return 0;
}

/**
 * rtrs_clt_path_dev_del() - remove a path from sysfs
 * @path: the path.
 *
 * Waits for reads and writes of its files under way, but the one that
 * removed itself with device_remove_file_self().
 *
 * Context: process context; sleeps.
 */
void rtrs_clt_path_dev_del(struct rtrs_clt_path *path)
{
	if (!path->dev_added)
		return;
	path->dev_added = false;
	device_del(&path->dev);
}

/**
 * rtrs_clt_sysfs_init() - register the rtrs-client class
 *
 * Context: module init.
 * Return: 0, or a negative errno.
 */
int rtrs_clt_sysfs_init(void)
{
	return class_register(&rtrs_clt_class);
}

/**
 * rtrs_clt_sysfs_exit() - unregister the rtrs-client class
 *
 * Context: module exit; every session is closed.
 */
void rtrs_clt_sysfs_exit(void)
{
	class_unregister(&rtrs_clt_class);
}
