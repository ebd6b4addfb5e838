/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, client: tracepoints.
 *
 * Path state changes, connection errors, and each request's submission
 * and completion; all off until enabled in tracefs (events/rtrs_clt/).
 *
 * The trace is read later, when what a pointer of the event pointed to
 * may be gone: an event prints only what it holds (a string copied in by
 * __string(), an address in an array) or what is made from that as the
 * trace is read (__print_symbolic()); trace_check_vprintf() warns about
 * a string printed from anywhere else.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rtrs_clt

#if !defined(_RTRS_CLT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RTRS_CLT_TRACE_H

#include <linux/socket.h>
#include <linux/tracepoint.h>

#include "../rtrs-clt.h"

TRACE_DEFINE_ENUM(RTRS_CLT_CONNECTING);
TRACE_DEFINE_ENUM(RTRS_CLT_CONNECTED);
TRACE_DEFINE_ENUM(RTRS_CLT_CLOSING);
TRACE_DEFINE_ENUM(RTRS_CLT_RECONNECTING);
TRACE_DEFINE_ENUM(RTRS_CLT_CLOSED);
TRACE_DEFINE_ENUM(RTRS_CLT_DEAD);

#define rtrs_clt_show_state(x)						\
	__print_symbolic(x,						\
			 { RTRS_CLT_CONNECTING,	"connecting" },		\
			 { RTRS_CLT_CONNECTED,	"connected" },		\
			 { RTRS_CLT_CLOSING,	"closing" },		\
			 { RTRS_CLT_RECONNECTING, "reconnecting" },	\
			 { RTRS_CLT_CLOSED,	"closed" },		\
			 { RTRS_CLT_DEAD,	"dead" })

#define rtrs_clt_show_dir(read)						\
	__print_symbolic(read, { 1, "READ" }, { 0, "WRITE" })

TRACE_EVENT(rtrs_clt_path_state,
	    TP_PROTO(const struct rtrs_clt_path *path, enum rtrs_clt_state new),
	    TP_ARGS(path, new),
	    TP_STRUCT__entry(__string(sess, path->s.sessname)
			     __array(u8, dst, sizeof(struct sockaddr_storage))
			     __field(int, old)
			     __field(int, new)),
	    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
			   memcpy(__entry->dst, &path->s.dst_addr, sizeof(__entry->dst));
			   __entry->old = path->state;
			   __entry->new = new;),
	    TP_printk("%s: path to %pISp: %s -> %s", __get_str(sess), __entry->dst,
		      rtrs_clt_show_state(__entry->old),
		      rtrs_clt_show_state(__entry->new))
);

TRACE_EVENT(rtrs_clt_con_error,
	    TP_PROTO(const struct rtrs_clt_con *con, const char *what, int status),
	    TP_ARGS(con, what, status),
	    TP_STRUCT__entry(__string(sess, con->c.path->sessname)
			     __string(what, what)
			     __string(status_msg, ib_wc_status_msg(status))
			     __field(unsigned int, cid)
			     __field(int, status)),
	    TP_fast_assign(rtrs_assign_str(sess, con->c.path->sessname);
			   rtrs_assign_str(what, what);
			   rtrs_assign_str(status_msg, ib_wc_status_msg(status));
			   __entry->cid = con->c.cid;
			   __entry->status = status;),
	    TP_printk("%s: connection %u: %s failed: %s", __get_str(sess),
		      __entry->cid, __get_str(what), __get_str(status_msg))
);

TRACE_EVENT(rtrs_clt_submit,
	    TP_PROTO(const struct rtrs_clt_io_req *req, u32 msg_id),
	    TP_ARGS(req, msg_id),
	    TP_STRUCT__entry(__string(sess, req->con->c.path->sessname)
			     __field(u32, msg_id)
			     __field(unsigned int, cid)
			     __field(bool, read)
			     __field(u32, data_len)
			     __field(u32, usr_len)),
	    TP_fast_assign(rtrs_assign_str(sess, req->con->c.path->sessname);
			   __entry->msg_id = msg_id;
			   __entry->cid = req->con->c.cid;
			   __entry->read = req->dir == DMA_FROM_DEVICE;
			   __entry->data_len = req->data_len;
			   __entry->usr_len = req->usr_len;),
	    TP_printk("%s: %s id %u on connection %u, %u bytes of data, %u of message",
		      __get_str(sess), rtrs_clt_show_dir(__entry->read),
		      __entry->msg_id, __entry->cid, __entry->data_len,
		      __entry->usr_len)
);

/* A path's quarantine: one id that joins it, or how many leave at its end. */
DECLARE_EVENT_CLASS(rtrs_clt_quarantine_class,
		    TP_PROTO(const struct rtrs_clt_path *path, u32 val),
		    TP_ARGS(path, val),
		    TP_STRUCT__entry(__string(sess, path->s.sessname)
				     __field(u32, val)),
		    TP_fast_assign(rtrs_assign_str(sess, path->s.sessname);
				   __entry->val = val;),
		    TP_printk("%s: id %u quarantined", __get_str(sess),
			      __entry->val)
);

DEFINE_EVENT(rtrs_clt_quarantine_class, rtrs_clt_quarantine,
	     TP_PROTO(const struct rtrs_clt_path *path, u32 val),
	     TP_ARGS(path, val)
);

DEFINE_EVENT_PRINT(rtrs_clt_quarantine_class, rtrs_clt_quarantine_end,
		   TP_PROTO(const struct rtrs_clt_path *path, u32 val),
		   TP_ARGS(path, val),
		   TP_printk("%s: quarantine of %u ids over", __get_str(sess),
			     __entry->val)
);

TRACE_EVENT(rtrs_clt_complete,
	    TP_PROTO(const struct rtrs_clt_io_req *req, u32 msg_id),
	    TP_ARGS(req, msg_id),
	    TP_STRUCT__entry(__string(sess, req->con->c.path->sessname)
			     __field(u32, msg_id)
			     __field(int, status)),
	    TP_fast_assign(rtrs_assign_str(sess, req->con->c.path->sessname);
			   __entry->msg_id = msg_id;
			   __entry->status = req->status;),
	    TP_printk("%s: id %u done: %d", __get_str(sess), __entry->msg_id,
		      __entry->status)
);

#endif /* _RTRS_CLT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH trace
#define TRACE_INCLUDE_FILE clt
#include <trace/define_trace.h>
