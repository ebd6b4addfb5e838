// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server: the state of paths.
 *
 * A path's state decides which messages it takes (rtrs_srv_admit()), and
 * every failure, whoever finds it, ends in rtrs_srv_close_path(), which
 * queues the path's close work once.  The files that act on a path (its
 * connections, its INFO exchange, its requests and sysfs) call in here;
 * nothing in here calls them back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "rtrs-srv.h"
#include "trace/srv.h"

/* Runs the close, heartbeat, sysfs and chunk works of every path. */
struct workqueue_struct *rtrs_srv_wq;

/**
 * rtrs_srv_path_state() - state of a path, read without a lock
 * @path: the path
 *
 * Return: the state at the time of the read.
 */
enum rtrs_srv_state rtrs_srv_path_state(struct rtrs_srv_path *path)
{
	return READ_ONCE(path->state);
}

/**
 * rtrs_srv_change_state() - move a path from one state to another
 * @path: the path
 * @old: state it must be in
 * @new: state to move to
 *
 * Return: true when @path was in @old and is now in @new.
 */
bool rtrs_srv_change_state(struct rtrs_srv_path *path,
			   enum rtrs_srv_state old, enum rtrs_srv_state new)
{
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&path->state_lock, flags);
	changed = path->state == old;
	if (changed) {
		trace_rtrs_srv_path_state(path, new);
		WRITE_ONCE(path->state, new);
	}
	spin_unlock_irqrestore(&path->state_lock, flags);
	return changed;
}

/**
 * rtrs_srv_close_path() - start tearing a path down
 * @path: the path
 *
 * Queues the close work the first time it is called for @path; later
 * calls do nothing.
 *
 * Context: any context.
 */
void rtrs_srv_close_path(struct rtrs_srv_path *path)
{
	unsigned long flags;
	bool close;

	spin_lock_irqsave(&path->state_lock, flags);
	close = path->state == RTRS_SRV_CONNECTING ||
		path->state == RTRS_SRV_CONNECTED;
	if (close) {
		trace_rtrs_srv_path_state(path, RTRS_SRV_CLOSING);
		WRITE_ONCE(path->state, RTRS_SRV_CLOSING);
	}
	spin_unlock_irqrestore(&path->state_lock, flags);

	if (close)
		queue_work(rtrs_srv_wq, &path->close_work);
}

/**
 * rtrs_srv_violation() - a peer broke the protocol: log it, close the path
 * @path: the path
 * @fmt: what the peer did, printf-style, without newline
 *
 * One rate-limited line, then the path goes; nothing when it is already
 * going, as for each message the peer had in flight behind the first bad
 * one.
 *
 * Context: any context.
 */
void rtrs_srv_violation(struct rtrs_srv_path *path, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	/* What was in flight when the path broke needs no line of its own. */
	if (rtrs_srv_path_state(path) >= RTRS_SRV_CLOSING)
		return;
	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err_ratelimited("%s: %pV\n", path->s.sessname, &vaf);
	va_end(args);
	rtrs_srv_close_path(path);
}

/**
 * rtrs_srv_post_failed() - posting on a connection of a path failed
 * @path: the path
 * @what: what was to be posted, for the log
 * @err: the error of the post
 *
 * A post that found its connection being drained (-ESHUTDOWN) is no
 * failure: the path is going already.  Any other error logs one
 * rate-limited line and closes the path.
 *
 * Context: any context.
 */
void rtrs_srv_post_failed(struct rtrs_srv_path *path, const char *what,
			  int err)
{
	if (err == -ESHUTDOWN)
		return;
	pr_err_ratelimited("%s: posting %s failed: %d\n", path->s.sessname,
			   what, err);
	rtrs_srv_close_path(path);
}

static const char *rtrs_srv_state_name(enum rtrs_srv_state state)
{
	switch (state) {
	case RTRS_SRV_CONNECTING:
		return "connecting";
	case RTRS_SRV_CONNECTED:
		return "connected";
	case RTRS_SRV_CLOSING:
		return "closing";
	case RTRS_SRV_CLOSED:
		return "closed";
	}
	return "?";
}

/**
 * rtrs_srv_admit() - may a message that came in be handled now?
 * @path: the path it came in on
 * @msg: its kind
 * @imm: its immediate data (0 for a SEND), for the log
 * @cid: the connection it came in on, for the log
 *
 * Every message passes here first, and the table of
 * rtrs_srv_msg_verdict() decides by the path's state.  A message the
 * table refuses is a violation: one line, and the path closes.
 *
 * Context: any context.
 * Return: true when the caller is to handle @msg.
 */
bool rtrs_srv_admit(struct rtrs_srv_path *path, enum rtrs_srv_msg msg,
		    u32 imm, unsigned int cid)
{
	enum rtrs_srv_state state = rtrs_srv_path_state(path);

	switch (rtrs_srv_msg_verdict(msg, state)) {
	case RTRS_SRV_TAKE:
		return true;
	case RTRS_SRV_REFUSE:
		rtrs_srv_violation(path, "%s (immediate %#x) on connection %u of a %s path",
				   rtrs_srv_msg_name(msg), imm, cid,
				   rtrs_srv_state_name(state));
		return false;
	case RTRS_SRV_DROP:
		break;
	}
	return false;
}
