/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, server: tracepoints.
 *
 * Path state changes, connection errors, and each request's arrival and
 * response; all off until enabled in tracefs (events/rtrs_srv/).
 *
 * The trace is read later, when what a pointer of the event pointed to
 * may be gone: an event prints only what it holds (a string copied in by
 * __string(), an address in an array) or what is made from that as the
 * trace is read (__print_symbolic()); trace_check_vprintf() warns about
 * a string printed from anywhere else.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtrs_srv

#if !defined(_RTRS_SRV_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RTRS_SRV_TRACE_H

#include <linux/socket.h>
#include <linux/tracepoint.h>

#include "../rtrs-srv.h"

TRACE_DEFINE_ENUM(RTRS_SRV_CONNECTING);
TRACE_DEFINE_ENUM(RTRS_SRV_CONNECTED);
TRACE_DEFINE_ENUM(RTRS_SRV_CLOSING);
TRACE_DEFINE_ENUM(RTRS_SRV_CLOSED);

#define rtrs_srv_show_state(x)						\
	__print_symbolic(x,						\
			 { RTRS_SRV_CONNECTING,	"connecting" },		\
			 { RTRS_SRV_CONNECTED,	"connected" },		\
			 { RTRS_SRV_CLOSING,	"closing" },		\
			 { RTRS_SRV_CLOSED,	"closed" })

#define rtrs_srv_show_dir(read)						\
	__print_symbolic(read, { 1, "READ" }, { 0, "WRITE" })

TRACE_EVENT(rtrs_srv_path_state,
	    TP_PROTO(const struct rtrs_srv_path *path, enum rtrs_srv_state new),
	    TP_ARGS(path, new),
	    TP_STRUCT__entry(__string(sess, path->s.sessname)
			     __array(u8, peer, sizeof(struct sockaddr_storage))
			     __field(int, old)
			     __field(int, new)),
	    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
			   memcpy(__entry->peer, &path->s.dst_addr, sizeof(__entry->peer));
			   __entry->old = path->state;
			   __entry->new = new;),
	    TP_printk("%s: path from %pISp: %s -> %s", __get_str(sess),
		      __entry->peer, rtrs_srv_show_state(__entry->old),
		      rtrs_srv_show_state(__entry->new))
);

TRACE_EVENT(rtrs_srv_con_error,
	    TP_PROTO(const struct rtrs_srv_path *path, const char *what, int status),
	    TP_ARGS(path, what, status),
	    TP_STRUCT__entry(__string(sess, path->s.sessname)
			     __string(what, what)
			     __string(status_msg, ib_wc_status_msg(status))
			     __field(int, status)),
	    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
			   rtrs_assign_str(what, what);
			   rtrs_assign_str(status_msg, ib_wc_status_msg(status));
			   __entry->status = status;),
	    TP_printk("%s: %s failed: %s", __get_str(sess), __get_str(what),
		      __get_str(status_msg))
);

TRACE_EVENT(rtrs_srv_request,
	    TP_PROTO(const struct rtrs_srv_path *path, u32 msg_id, int dir,
		     u32 data_len, u32 usr_len),
	    TP_ARGS(path, msg_id, dir, data_len, usr_len),
	    TP_STRUCT__entry(__string(sess, path->s.sessname)
			     __field(u32, msg_id)
			     __field(bool, read)
			     __field(u32, data_len)
			     __field(u32, usr_len)),
	    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
			   __entry->msg_id = msg_id;
			   __entry->read = dir == READ;
			   __entry->data_len = data_len;
			   __entry->usr_len = usr_len;),
	    TP_printk("%s: %s id %u, %u bytes of data, %u of message",
		      __get_str(sess), rtrs_srv_show_dir(__entry->read),
		      __entry->msg_id, __entry->data_len, __entry->usr_len)
);

/*
 * The response to a request.  The event's name and output are seen by
 * users, and tests/e2e/lossy.sh enables it by name: they stay as they are.
 */
TRACE_EVENT(rtrs_srv_answer,
	    TP_PROTO(const struct rtrs_srv_path *path, u32 msg_id, int status),
	    TP_ARGS(path, msg_id, status),
	    TP_STRUCT__entry(__string(sess, path->s.sessname)
			     __field(u32, msg_id)
			     __field(int, status)),
	    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
			   __entry->msg_id = msg_id;
			   __entry->status = status;),
	    TP_printk("%s: id %u answered: %d", __get_str(sess), __entry->msg_id,
		      __entry->status)
);

#endif /* _RTRS_SRV_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH trace
#define TRACE_INCLUDE_FILE srv
#include <trace/define_trace.h>
