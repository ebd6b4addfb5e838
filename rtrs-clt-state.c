// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, client: the state of paths and sessions.
 *
 * What the rest of the client changes when something happens to a path:
 * the path's state and its errors, whether the session counts it as up
 * (and so tells the user of a session that lost or regained its last
 * path) and the limits the path's server offered.  The files that act on
 * a path (its lifecycle, connections and requests) call in here; nothing
 * in here calls them back.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "rtrs-clt.h"
#include "trace/clt.h"

/* Runs close, reconnect and heartbeat works of every path. */
struct workqueue_struct *rtrs_clt_wq;

/* Move @path to @new; the caller holds @path->state_lock. */
void rtrs_clt_path_set_state(struct rtrs_clt_path *path,
			     enum rtrs_clt_state new)
{
	lockdep_assert_held(&path->state_lock);
	trace_rtrs_clt_path_state(path, new);
	WRITE_ONCE(path->state, new);
}

/* Move @path from @old to @new; false if it was not in @old. */
bool rtrs_clt_path_change_state(struct rtrs_clt_path *path,
				enum rtrs_clt_state old,
				enum rtrs_clt_state new)
{
	bool changed = false;

	spin_lock_irq(&path->state_lock);
	if (path->state == old) {
		rtrs_clt_path_set_state(path, new);
		changed = true;
	}
	spin_unlock_irq(&path->state_lock);
	return changed;
}

/**
 * rtrs_clt_path_error() - a path failed
 * @path: the path.
 *
 * A connected path is closed by its close work; a connecting one fails
 * its connect.  Anything else is already going down.
 *
 * Context: any context.
 */
void rtrs_clt_path_error(struct rtrs_clt_path *path)
{
	unsigned long flags;

	spin_lock_irqsave(&path->state_lock, flags);
	switch (path->state) {
	case RTRS_CLT_CONNECTED:
		rtrs_clt_path_set_state(path, RTRS_CLT_CLOSING);
		queue_work(rtrs_clt_wq, &path->close_work);
		break;
	case RTRS_CLT_CONNECTING:
		WRITE_ONCE(path->connect_failed, true);
		complete(&path->info_done);
		break;
	default:
		break;
	}
	spin_unlock_irqrestore(&path->state_lock, flags);
}

/*
 * The connections are up and the server's chunks known: the path is
 * connected, unless an error hit it since.  rtrs_clt_path_error() marks a
 * connecting path under the same lock, so an error either comes first and
 * fails the open, or finds the path connected and closes it as usual.
 */
int rtrs_clt_path_set_connected(struct rtrs_clt_path *path)
{
	int err = 0;

	spin_lock_irq(&path->state_lock);
	if (path->state != RTRS_CLT_CONNECTING)
		err = -ECONNABORTED;
	else if (path->connect_failed)
		err = -ECONNRESET;
	else
		rtrs_clt_path_set_state(path, RTRS_CLT_CONNECTED);
	spin_unlock_irq(&path->state_lock);
	return err;
}

/**
 * rtrs_clt_path_set_dead() - forbid a path to come up or take requests
 * @path: the path.
 *
 * rtrs_clt_close() marks every path so before closing any, so that no
 * request fails over to a path about to close.
 *
 * Context: process context.
 */
void rtrs_clt_path_set_dead(struct rtrs_clt_path *path)
{
	spin_lock_irq(&path->state_lock);
	rtrs_clt_path_set_state(path, RTRS_CLT_DEAD);
	spin_unlock_irq(&path->state_lock);
}

/**
 * rtrs_clt_path_up() - count a path that came up
 * @path: a connected path.
 *
 * Tells the user %RTRS_CLT_LINK_EV_RECONNECTED when no other path was up.
 * A path not listed (see &rtrs_clt_path.listed) is not counted: the user
 * reacts to the event by sending, and only listed paths carry messages.
 * rtrs_clt_add_path() counts a new path once it is listed.
 *
 * Context: process context, with @path->init_mutex held; sleeps.
 */
void rtrs_clt_path_up(struct rtrs_clt_path *path)
{
	struct rtrs_clt_sess *clt = path->clt;

	lockdep_assert_held(&path->init_mutex);
	mutex_lock(&clt->link_ev_mutex);
	if (path->listed && !path->established) {
		path->established = true;
		if (!clt->paths_up++ && clt->link_ev_on)
			clt->link_ev(clt->priv, RTRS_CLT_LINK_EV_RECONNECTED);
	}
	mutex_unlock(&clt->link_ev_mutex);
}

/**
 * rtrs_clt_path_down() - count a path that went down
 * @path: the path, torn down.
 *
 * Tells the user %RTRS_CLT_LINK_EV_DISCONNECTED when it was the last one.
 *
 * Context: process context; sleeps.
 */
void rtrs_clt_path_down(struct rtrs_clt_path *path)
{
	struct rtrs_clt_sess *clt = path->clt;

	mutex_lock(&clt->link_ev_mutex);
	if (path->established) {
		path->established = false;
		if (!--clt->paths_up && clt->link_ev_on)
			clt->link_ev(clt->priv, RTRS_CLT_LINK_EV_DISCONNECTED);
	}
	mutex_unlock(&clt->link_ev_mutex);
}

/* Whether @path may be counted as up: it is on the session's list. */
void rtrs_clt_path_set_listed(struct rtrs_clt_path *path, bool listed)
{
	mutex_lock(&path->clt->link_ev_mutex);
	path->listed = listed;
	mutex_unlock(&path->clt->link_ev_mutex);
}

/* Whether the user hears of paths going and coming. */
void rtrs_clt_set_link_ev(struct rtrs_clt_sess *clt, bool on)
{
	mutex_lock(&clt->link_ev_mutex);
	clt->link_ev_on = on;
	mutex_unlock(&clt->link_ev_mutex);
}

/**
 * rtrs_clt_sess_set_limits() - fold a path's limits into its session's
 * @path: a path whose admin connection was just accepted.
 *
 * Every path must offer the same queue depth: it is the number of
 * permits.  The session takes the smallest IO size and segment count,
 * whichever protocol version each path speaks.
 *
 * Context: process context (CM event handler); sleeps.
 * Return: 0, or -EPROTO when the queue depth differs.
 */
int rtrs_clt_sess_set_limits(struct rtrs_clt_path *path)
{
	struct rtrs_clt_sess *clt = path->clt;
	int err = 0;

	mutex_lock(&clt->paths_mutex);
	if (clt->queue_depth && clt->queue_depth != path->lim.queue_depth) {
		pr_err_ratelimited("%s: server offers queue depth %u, the session has %u\n",
				   clt->sessname, path->lim.queue_depth,
				   clt->queue_depth);
		err = -EPROTO;
	} else {
		clt->queue_depth = path->lim.queue_depth;
		clt->max_io_size = min_not_zero(clt->max_io_size,
						path->lim.max_io_size);
		clt->max_segments = min_not_zero(clt->max_segments,
						 path->max_pages_per_mr);
	}
	mutex_unlock(&clt->paths_mutex);
	return err;
}
