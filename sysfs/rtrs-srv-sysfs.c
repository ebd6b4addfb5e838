// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server: sysfs.
 *
 * /sys/class/rtrs-server/<session>/paths/<client@server>/
 *                                  disconnect, hca_name, hca_port,
 *                                  src_addr (the client), dst_addr (ours)
 * /sys/class/rtrs-server/<session>/paths/<client@server>/stats/
 *                                  reads, read_bytes, writes, write_bytes,
 *                                  reset_all
 *
 * A session's directory appears with its first path up, named after the
 * client's session name from INFO_REQ, and goes with the session.  The
 * directories are struct devices of their own, freed by their release;
 * a path's device points to the path, and the path's teardown removes
 * the device, which waits for the file operations under way, before it
 * frees the path.  Documentation/ABI/testing/sysfs-class-rtrs-server
 * describes every file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>

#include "../rtrs-srv.h"

static struct class rtrs_srv_class = {
	.name	= "rtrs-server",
};

/**
 * struct rtrs_srv_sess_dev - sysfs directories of a server session
 * @dev: <session>/
 * @paths_dev: <session>/paths/
 * @npaths: path directories below @paths_dev; the last one removed takes
 *	the session's directory with it
 */
struct rtrs_srv_sess_dev {
	struct device	dev;
	struct device	paths_dev;
	unsigned int	npaths;
};

/**
 * struct rtrs_srv_path_dev - sysfs directory of a server path
 * @dev: paths/<client@server>/
 * @path: the path; valid while @dev is registered
 */
struct rtrs_srv_path_dev {
	struct device		dev;
	struct rtrs_srv_path	*path;
};

static struct rtrs_srv_path *to_srv_path_dev(struct device *dev)
{
	return container_of(dev, struct rtrs_srv_path_dev, dev)->path;
}

static void rtrs_srv_sess_dev_release(struct device *dev)
{
	kfree(container_of(dev, struct rtrs_srv_sess_dev, dev));
}

/* Embedded; the reference it holds on its parent keeps it alive. */
static void rtrs_srv_paths_dev_release(struct device *dev)
{
}

static void rtrs_srv_path_dev_release(struct device *dev)
{
	kfree(container_of(dev, struct rtrs_srv_path_dev, dev));
}

/* ---- path files ------------------------------------------------------ */

static ssize_t disconnect_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	rtrs_srv_close_path(to_srv_path_dev(dev));
	return count;
}
static DEVICE_ATTR_WO(disconnect);

static ssize_t hca_name_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct rtrs_srv_path *path = to_srv_path_dev(dev);

	return sysfs_emit(buf, "%s\n", dev_name(&path->s.dev->ib_dev->dev));
}
static DEVICE_ATTR_RO(hca_name);

static ssize_t hca_port_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct rtrs_srv_path *path = to_srv_path_dev(dev);

	return sysfs_emit(buf, "%u\n", path->hca_port);
}
static DEVICE_ATTR_RO(hca_port);

static ssize_t rtrs_srv_show_addr(const struct sockaddr_storage *addr,
				  char *buf)
{
	int cnt;

	cnt = sockaddr_to_str((const struct sockaddr *)addr, buf,
			      PAGE_SIZE - 1);
	return cnt + sysfs_emit_at(buf, cnt, "\n");
}

static ssize_t src_addr_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return rtrs_srv_show_addr(&to_srv_path_dev(dev)->s.dst_addr, buf);
}
static DEVICE_ATTR_RO(src_addr);

static ssize_t dst_addr_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return rtrs_srv_show_addr(&to_srv_path_dev(dev)->s.src_addr, buf);
}
static DEVICE_ATTR_RO(dst_addr);

static ssize_t proto_version_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	u16 version = to_srv_path_dev(dev)->sess->version;

	return sysfs_emit(buf, "%u.%u\n", version >> 8, version & 0xff);
}
static DEVICE_ATTR_RO(proto_version);

static struct attribute *rtrs_srv_path_attrs[] = {
	&dev_attr_disconnect.attr,
	&dev_attr_hca_name.attr,
	&dev_attr_hca_port.attr,
	&dev_attr_src_addr.attr,
	&dev_attr_dst_addr.attr,
	&dev_attr_proto_version.attr,
	NULL,
};

static const struct attribute_group rtrs_srv_path_group = {
	.attrs	= rtrs_srv_path_attrs,
};

/* ---- path statistics ------------------------------------------------ */

static u64 rtrs_srv_stats_sum(struct rtrs_srv_path *path, bool bytes, int dir)
{
	struct rtrs_srv_cpu_stats *s;
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		s = per_cpu_ptr(path->stats, cpu);
		sum += bytes ? READ_ONCE(s->bytes[dir]) : READ_ONCE(s->cnt[dir]);
	}
	return sum;
}

static ssize_t reads_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  rtrs_srv_stats_sum(to_srv_path_dev(dev), false, READ));
}
static DEVICE_ATTR_RO(reads);

static ssize_t read_bytes_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  rtrs_srv_stats_sum(to_srv_path_dev(dev), true, READ));
}
static DEVICE_ATTR_RO(read_bytes);

static ssize_t writes_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  rtrs_srv_stats_sum(to_srv_path_dev(dev), false,
					     WRITE));
}
static DEVICE_ATTR_RO(writes);

static ssize_t write_bytes_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  rtrs_srv_stats_sum(to_srv_path_dev(dev), true, WRITE));
}
static DEVICE_ATTR_RO(write_bytes);

static ssize_t reset_all_store(struct device *dev,
			       struct device_attribute *attr,
			       const char *buf, size_t count)
{
	struct rtrs_srv_path *path = to_srv_path_dev(dev);
	int cpu;

	if (!sysfs_streq(buf, "1"))
		return -EINVAL;
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(path->stats, cpu), 0,
		       sizeof(struct rtrs_srv_cpu_stats));
	return count;
}
static DEVICE_ATTR_WO(reset_all);

static struct attribute *rtrs_srv_stats_attrs[] = {
	&dev_attr_reads.attr,
	&dev_attr_read_bytes.attr,
	&dev_attr_writes.attr,
	&dev_attr_write_bytes.attr,
	&dev_attr_reset_all.attr,
	NULL,
};

static const struct attribute_group rtrs_srv_stats_group = {
	.name	= "stats",
	.attrs	= rtrs_srv_stats_attrs,
};

static const struct attribute_group *rtrs_srv_path_groups[] = {
	&rtrs_srv_path_group,
	&rtrs_srv_stats_group,
	NULL,
};

/* ---- creation and removal --------------------------------------------- */

/*
 * Is @dev taken, as a session of the class when @parent is NULL, else as
 * a path below @parent?  device_add() of a name taken would fail with
 * -EEXIST as well, but with a stack dump in the log, which a client can
 * cause: a session of the name of one still closing, or two paths of one
 * session between the same addresses.
 */
static bool rtrs_srv_name_taken(struct device *parent, struct device *dev)
{
	struct device *found;

	found = parent ? device_find_child_by_name(parent, dev_name(dev)) :
		class_find_device_by_name(&rtrs_srv_class, dev_name(dev));
	put_device(found);
	return found;
}

static int rtrs_srv_sess_dev_add(struct rtrs_srv_sess *sess, const char *name)
{
	struct rtrs_srv_sess_dev *sd;
	int err;

	sd = rtrs_kzalloc(sizeof(*sd), GFP_KERNEL);
	if (!sd)
		return -ENOMEM;
	device_initialize(&sd->dev);
	sd->dev.class = &rtrs_srv_class;
	sd->dev.release = rtrs_srv_sess_dev_release;
	device_initialize(&sd->paths_dev);
	sd->paths_dev.parent = &sd->dev;
	sd->paths_dev.release = rtrs_srv_paths_dev_release;

	err = dev_set_name(&sd->dev, "%s", name);
	if (!err && rtrs_srv_name_taken(NULL, &sd->dev))
		err = -EEXIST;
	if (!err)
		err = rtrs_fail_or(-ENOMEM, device_add(&sd->dev));
	if (err)
		goto put;
	err = dev_set_name(&sd->paths_dev, "paths");
	if (!err)
		err = rtrs_fail_or(-ENOMEM, device_add(&sd->paths_dev));
	if (err)
		goto del;
	sess->sysfs = sd;
	return 0;

del:
	device_del(&sd->dev);
put:
	put_device(&sd->paths_dev);
	put_device(&sd->dev);
	return err;
}

/**
 * rtrs_srv_sysfs_sess_del() - remove a session's directory
 * @sess: the session, its last path gone.
 *
 * Context: process context; sleeps.
 */
void rtrs_srv_sysfs_sess_del(struct rtrs_srv_sess *sess)
{
	struct rtrs_srv_sess_dev *sd = sess->sysfs;

	if (!sd)
		return;
	sess->sysfs = NULL;
	device_del(&sd->paths_dev);
	put_device(&sd->paths_dev);
	device_unregister(&sd->dev);
}

/* "client@server", as the client names the same path. */
static int rtrs_srv_path_dev_name(struct rtrs_srv_path *path,
				  struct device *dev)
{
	struct rtrs_addr addr = {
		.src	= &path->s.dst_addr,
		.dst	= &path->s.src_addr,
	};
	char name[256];

	rtrs_addr_to_str(&addr, name, sizeof(name));
	return dev_set_name(dev, "%s", name);
}

/**
 * rtrs_srv_sysfs_path_add() - show a path, and its session if need be
 * @path: a path that is up, named by its INFO_REQ.
 *
 * Context: process context, with the session's sysfs_mutex held; sleeps.
 * Return: 0, or a negative errno; on failure the path has no directory.
 */
int rtrs_srv_sysfs_path_add(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;
	struct rtrs_srv_path_dev *pd;
	int err;

	lockdep_assert_held(&sess->sysfs_mutex);

	if (!sess->sysfs) {
		err = rtrs_srv_sess_dev_add(sess, path->s.sessname);
		if (err)
			return err;
	}
	pd = rtrs_kzalloc(sizeof(*pd), GFP_KERNEL);
	if (!pd)
		return -ENOMEM;
	pd->path = path;
	device_initialize(&pd->dev);
	pd->dev.parent = &sess->sysfs->paths_dev;
	pd->dev.groups = rtrs_srv_path_groups;
	pd->dev.release = rtrs_srv_path_dev_release;
	err = rtrs_srv_path_dev_name(path, &pd->dev);
	if (!err && rtrs_srv_name_taken(pd->dev.parent, &pd->dev))
		err = -EEXIST;
	if (!err)
		err = rtrs_fail_or(-ENOMEM, device_add(&pd->dev));
	if (err) {
		put_device(&pd->dev);
		if (!sess->sysfs->npaths)
			rtrs_srv_sysfs_sess_del(sess);
		return err;
	}
	sess->sysfs->npaths++;
	path->sysfs = &pd->dev;
	return 0;
}

/**
 * rtrs_srv_sysfs_path_del() - remove a path's directory
 * @path: the path, being torn down.
 *
 * Waits for the file operations under way; afterwards none can reach
 * @path.  The session's last path directory takes the session's with it,
 * so that a new session of the same name can show itself while this one
 * finishes closing.
 *
 * Context: process context, with the session's sysfs_mutex held; sleeps.
 */
void rtrs_srv_sysfs_path_del(struct rtrs_srv_path *path)
{
	struct rtrs_srv_sess *sess = path->sess;

	lockdep_assert_held(&sess->sysfs_mutex);

	if (!path->sysfs)
		return;
	device_unregister(path->sysfs);
	path->sysfs = NULL;
	if (!--sess->sysfs->npaths)
		rtrs_srv_sysfs_sess_del(sess);
}

/**
 * rtrs_srv_sysfs_init() - register the rtrs-server class
 *
 * Context: module init.
 * Return: 0, or a negative errno.
 */
int rtrs_srv_sysfs_init(void)
{
	return class_register(&rtrs_srv_class);
}

/**
 * rtrs_srv_sysfs_exit() - unregister the rtrs-server class
 *
 * Context: module exit; every session is gone.
 */
void rtrs_srv_sysfs_exit(void)
{
	class_unregister(&rtrs_srv_class);
}
