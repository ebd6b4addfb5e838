/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, client: private structures.
 *
 * A session (struct rtrs_clt_sess) reaches one server over one or more
 * paths (struct rtrs_clt_path).  A path has an admin connection (cid 0),
 * one interrupt-driven IO connection per possible CPU and the poll
 * connections the user asked for.  A permit (struct rtrs_permit) stands for
 * one chunk of the server; on each path the request slot of the same index
 * (struct rtrs_clt_io_req) carries the request the permit is used for.
 *
 * Lock order.  A lock may be taken while holding those listed above it,
 * never while holding one listed below it; the indentation shows the
 * nestings the code has:
 *
 *   rtrs_clt_sess.change_mutex	adding, removing, reconnecting paths
 *     rtrs_clt_path.init_mutex	bringing one path up or down
 *       rtrs_clt_con.cm_mutex	one connection's QP against its CM events
 *       rtrs_clt_sess.paths_mutex	the path list and the session's limits
 *       rtrs_clt_sess.link_ev_mutex	counting paths up, link events
 *       rtrs_clt_sess.chunks_lock	(spin, irq) reserve, quarantines, orphans
 *       rtrs_clt_path.state_lock	(spin, irq) the path's state
 *
 * init_mutex comes before paths_mutex although no thread nests them: the
 * CM event handler takes paths_mutex (the limits of a new path), and a
 * thread holding init_mutex waits for that handler.  The handler must
 * therefore never take init_mutex or change_mutex.  poll_lock is only
 * ever tried, alone.  The test kernel runs with lockdep, and a report in
 * any guest fails make check.
 */
#ifndef RTRS_CLT_H
#define RTRS_CLT_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sbitmap.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "rtrs-pri.h"
#include "rtrs.h"

/* How long one connection may take to come up, and the path info response. */
#define RTRS_CLT_CONNECT_TIMEOUT_MS	30000

/*
 * Requests the admin connection's queues hold besides its heartbeats: its
 * information request.  No user request goes on it (see
 * rtrs_clt_permit_con()).
 */
#define RTRS_CLT_ADMIN_DEPTH		1

/*
 * Most scatterlist entries of one request on a 2.0 path, before the
 * device's limits; a 2.1 path's follow from its IO size.
 */
#define RTRS_CLT_MAX_SEGMENTS		128

/* Most SGEs of one RDMA WRITE: data entries and the header buffer. */
#define RTRS_CLT_MAX_SEND_SGE		32

/*
 * SGEs of a 2.1 path's SENDs: the header area and up to two data entries
 * of an inline WRITE (a 4 KiB page crossing one boundary); more go
 * through an MR.  A send queue entry of rxe is 208 bytes and 16 a SGE,
 * rounded up to a power of two: 256 bytes with 3, 1 KiB with 32.
 */
#define RTRS_CLT_MAX_SEND_SGE_2_1	3

/* Largest header room (user message + IO header) the client accepts. */
#define RTRS_CLT_MAX_HDR_SIZE		SZ_64K

/* Smallest max_io_size a 2.1 server may offer: a page of data. */
#define RTRS_CLT_MIN_IO_SIZE_2_1	SZ_4K

/*
 * Largest inline WRITE a 2.1 server may offer: each request's send buffer
 * holds the header area and this much, queue depth times per path.
 */
#define RTRS_CLT_MAX_INLINE_2_1		SZ_64K

/*
 * Largest IO of a 2.1 path: its MRs map this much, whatever more the
 * server offers.  Their page lists take 8 bytes a page, per request slot.
 */
#define RTRS_CLT_MAX_IO_SIZE_2_1	SZ_4M

/*
 * Pages the MR of a request slot maps on a 2.1 path that has large MRs
 * (rtrs_clt_large_mrs): 1 MiB of page-aligned data; a page less on rxe,
 * whose copies read past a page list it fills (rtrs_mr_reads_past_map()).
 * Data that spans more pages (1 MiB at an offset in its first page takes
 * 257) takes one of the path's large MRs instead.  On rxe of 6.1 an MR's
 * page list is a 4 KiB map per 256 pages: 257 would double it for every
 * slot.
 */
#define RTRS_CLT_SLOT_PAGES		256

/* Large MRs of a 2.1 path unless the large_mrs parameter says otherwise. */
#define RTRS_CLT_LARGE_MRS		32

/*
 * A 2.1 path's read buffer of each request slot: a READ of up to this
 * much (and up to the server's max_read_buf) is a READ_BUF, its data
 * written there by the server and copied to the user's pages.
 */
#define RTRS_CLT_READ_BUF		SZ_4K

/*
 * Send queue entries of a 2.1 connection's unsignaled request SENDs that
 * may await a signaled completion at once (rtrs_clt_send_signal()); the
 * send queue has room for them beside every request's own.
 */
#define RTRS_CLT_UNSIG_MAX		16

/*
 * A request in flight this long makes its connection send a probe (a
 * signaled zero-length RDMA WRITE); a probe that has not completed after
 * RTRS_CLT_PROBE_MS means the connection is stuck, and the path fails.
 * A server that is merely slow to respond still acknowledges the probe.
 */
#define RTRS_CLT_STALL_MS		5000
#define RTRS_CLT_PROBE_MS		10000

/*
 * With io_timeout_sec set (sysfs, per session), a request that waits that
 * long for its response fails its path even though its connection moves:
 * the path's teardown sends it again over another connected path; with
 * none, it completes with -ECONNABORTED, as on any path failure.  Off by
 * default: a path whose heartbeats and probes still go through is alive,
 * and a request that takes long waits on the server's storage, which every
 * path of the session shares; failing the path over would turn a slow disk
 * into a path failure, and the request would wait as long on the next path.
 * A dead or wedged connection is caught by the heartbeats and by
 * RTRS_CLT_STALL_MS probes.  See "Failover and chunks" in
 * Documentation/rtrs.rst.
 */
#define RTRS_CLT_IO_TIMEOUT_SEC		0
#define RTRS_CLT_IO_TIMEOUT_MAX_SEC	3600

/* Most permits a session withholds for failovers (rtrs-clt-permit.c). */
#define RTRS_CLT_RESERVE_MAX		32

/*
 * A reconnect the server refused with -EBUSY (the path's earlier
 * incarnation is still going away there) is tried again this soon.
 */
#define RTRS_CLT_BUSY_RETRY_MS		500
#define RTRS_CLT_BUSY_TRIES		20

/* Upper bound of the random delay added to a reconnect, in milliseconds. */
#define RTRS_CLT_RECONNECT_JITTER_MS	1000

/**
 * enum rtrs_clt_state - state of a path
 * @RTRS_CLT_CONNECTING: connections are being established
 * @RTRS_CLT_CONNECTED: all connections are up; requests may be posted
 * @RTRS_CLT_CLOSING: failed; the close work tears the connections down
 * @RTRS_CLT_RECONNECTING: down; the reconnect work is scheduled
 * @RTRS_CLT_CLOSED: down, and no reconnect is scheduled
 * @RTRS_CLT_DEAD: the session is being closed; nothing restarts the path
 */
enum rtrs_clt_state {
	RTRS_CLT_CONNECTING,
	RTRS_CLT_CONNECTED,
	RTRS_CLT_CLOSING,
	RTRS_CLT_RECONNECTING,
	RTRS_CLT_CLOSED,
	RTRS_CLT_DEAD,
};

/**
 * enum rtrs_clt_mp_policy - how a request picks its path
 * @RTRS_CLT_MP_ROUND_ROBIN: the connected paths in turn, per CPU
 * @RTRS_CLT_MP_MIN_INFLIGHT: the path with the fewest requests in flight
 * @RTRS_CLT_MP_MIN_LATENCY: the path whose last heartbeat came back fastest
 *
 * Ties go to the path added first.  When the chosen path cannot post, the
 * other connected paths are tried in the order they were added.
 */
enum rtrs_clt_mp_policy {
	RTRS_CLT_MP_ROUND_ROBIN,
	RTRS_CLT_MP_MIN_INFLIGHT,
	RTRS_CLT_MP_MIN_LATENCY,
};

/**
 * struct rtrs_clt_cpu_stats - per-CPU request counters of a path
 * @cnt: requests posted, by direction (READ, WRITE)
 * @bytes: data bytes of those requests
 * @read_bufs: READ requests of those sent as 2.1 READ_BUF
 * @packed_rsps: responses that came packed with others into one SEND
 * @stale_rsps: 2.1, copies of responses already taken, dropped
 * @unsig_sends: 2.1 requests whose SEND went unsignaled
 * @large_mrs: requests that needed one of the path's large MRs
 * @large_waits: requests of those that waited for one, all in use
 * @steered: requests sent on another IO connection than their CPU's, one
 *	whose responses that CPU takes (rtrs_clt_steer_con())
 */
struct rtrs_clt_cpu_stats {
	u64	cnt[2];
	u64	bytes[2];
	u64	read_bufs;
	u64	packed_rsps;
	u64	stale_rsps;
	u64	unsig_sends;
	u64	large_mrs;
	u64	large_waits;
	u64	steered;
};

/**
 * struct rtrs_clt_stats - counters of a path, shown in sysfs
 * @pcpu: requests posted; updated with this_cpu ops, summed when read
 * @inflight: requests posted and not yet completed or moved away
 * @failovers: requests moved from this path to another when it failed
 * @reconnects: reconnects that succeeded
 * @reconnect_fails: reconnects that failed
 *
 * Writing to reset_all clears all but @inflight, which is a state, not a
 * count.  Readers may see a reset half done; the numbers are statistics.
 */
struct rtrs_clt_stats {
	struct rtrs_clt_cpu_stats __percpu	*pcpu;
	atomic_t				inflight;
	atomic_t				failovers;
	atomic_t				reconnects;
	atomic_t				reconnect_fails;
};

/**
 * struct rtrs_permit - the right to have one request in flight
 * @con_type: admin or IO connection, as asked for
 * @cpu: CPU the permit was taken on; picks the IO connection
 * @mem_id: index of the permit in the session's bitmap
 * @chunk: the server chunk, and request slot, its requests use: @mem_id
 *	until a failover quarantines it (see rtrs_clt_chunk_quarantine())
 * @entry: in the session's reserve or a path's quarantine while the
 *	permit is withheld from the user; under &rtrs_clt_sess.chunks_lock
 * @spare: while a request that failed over is in flight, the permit whose
 *	chunk it takes when it completes (rtrs_clt_chunk_move())
 * @q_path: the failed path whose quarantine the old chunk then joins, or
 *	NULL for the session's orphans; under &rtrs_clt_sess.chunks_lock
 * @q_gen: &rtrs_clt_path.q_gen of @q_path when it failed
 *
 * Followed by the pdu_sz bytes the user asked rtrs_clt_open() for.
 */
struct rtrs_permit {
	enum rtrs_clt_con_type	con_type;
	unsigned int		cpu;
	unsigned int		mem_id;
	unsigned int		chunk;
	struct list_head	entry;
	struct rtrs_permit	*spare;
	struct rtrs_clt_path	*q_path;
	unsigned int		q_gen;
};

/**
 * struct rtrs_rbuf - one chunk of the server
 * @addr: its address on the server
 * @rkey: its rkey; replaced by RTRS_MSG_RKEY_RSP under always-invalidate
 */
struct rtrs_rbuf {
	u64	addr;
	u32	rkey;
};

/**
 * struct rtrs_clt_con - one connection of a client path
 * @c: what the core knows of it; @c.qp->qp_context points to @c
 * @cpu: CPU whose requests use this IO connection, unless steered
 *	(rtrs_clt_steer_con())
 * @rsp_cpu: CPU that took the connection's last response, -1 before the
 *	first; written by its receive completions only
 * @cm_mutex: serialises QP creation in the CM event handler with the
 *	connection's teardown; protects @dead
 * @dead: set by the teardown: the CM handler must not create the QP or
 *	connect any more
 * @cm_err: 0 while connecting, 1 once established, or a negative errno
 * @cm_done: completed when @cm_err leaves 0
 * @recv_cqe: completion entry of the buffer-less receives
 * @rsp_ius: receive buffers, when the server announces new rkeys (2.0) or
 *	on every connection (2.1): each IU is a slot of @rsp_buf
 * @rsp_buf: @recv_num responses of @rsp_size bytes, one per receive,
 *	mapped at once
 * @rsp_dma: DMA address of @rsp_buf
 * @rsp_size: bytes of a slot of @rsp_buf
 * @recv_num: number of receives kept posted
 * @poll_lock: makes concurrent rtrs_clt_rdma_cq_direct() calls on a poll
 *	connection skip, not race, each other
 * @probe_cqe: completion entry of the stall probe
 * @probe_sent: jiffies when the probe in flight left, or 0; set by the
 *	watchdog, cleared by the probe's completion
 * @inv_rkey: rkey the server's last SEND WITH INVALIDATE invalidated
 * @inv_seen: @inv_rkey is set and not yet matched to its response; both are
 *	touched only by this connection's receive completions, one at a time
 * @packed: the connection asked for packed 2.1 responses
 *	(%RTRS_CONN_REQ_PACKED_RSP): its receive buffers hold
 *	%RTRS_IO_RSP_PACK_MAX of them
 * @send_lock: keeps 2.1 request SENDs posted in the order @unsig counts
 *	them
 * @unsig_max: most entries of unsignaled 2.1 requests awaiting a
 *	signaled completion: %RTRS_CLT_UNSIG_MAX, or less when the device
 *	capped the send queue; 0 sends every request signaled
 * @unsig: send queue entries of unsignaled 2.1 requests posted since the
 *	last signaled one
 * @unretired: send queue entries of unsignaled 2.1 requests whose
 *	signaled successor has not completed: @unsig and the entries each
 *	signaled request in flight stands for (&rtrs_clt_io_req.sq_covered)
 */
struct rtrs_clt_con {
	struct rtrs_con		c;
	unsigned int		cpu;
	int			rsp_cpu;
	/* QP creation vs teardown; protects @dead */
	struct mutex		cm_mutex;
	bool			dead;
	int			cm_err;
	struct completion	cm_done;
	struct ib_cqe		recv_cqe;
	struct rtrs_iu		*rsp_ius;
	void			*rsp_buf;
	dma_addr_t		rsp_dma;
	u32			rsp_size;
	u32			recv_num;
	/* serialises polling of a poll connection */
	spinlock_t		poll_lock;
	struct ib_cqe		probe_cqe;
	unsigned long		probe_sent;
	u32			inv_rkey;
	bool			inv_seen;
	bool			packed;
	/* the order of 2.1 request SENDs and @unsig */
	spinlock_t		send_lock;
	u32			unsig_max;
	u32			unsig;
	atomic_t		unretired;
};

/**
 * struct rtrs_clt_io_req - the slot of one request on one path
 * @con: connection the request was posted on
 * @iu: header buffer: user message, then READ or WRITE header (2.0);
 *	request header, then user message (2.1), max_hdr_size bytes
 * @big: 2.1, while the request is in flight: its own buffer for a header
 *	and user message longer than @iu (see rtrs_clt_req_buf()), or NULL
 * @big_dma: DMA address of @big
 * @big_len: bytes of @big
 * @mr: fast-registration MR of the user's scatterlist: @slot_mr, or a
 *	large MR of the path the request borrowed (&rtrs_clt_large)
 * @slot_mr: the slot's own MR
 * @sge: SGEs of the request: its data entries and the header buffer (2.0),
 *	or the header buffer and the data entries of an inline WRITE (2.1)
 * @wrs: RDMA WRITEs of the data entries that do not fit the last WRITE
 * @inv_cqe: completion entry of the LOCAL_INV of @mr
 * @sglist: the user's scatterlist
 * @sg_cnt: entries in @sglist, as given
 * @sg_cnt_mapped: entries mapped for DMA on the device of @con, or 0
 * @dir: DMA direction of @sglist
 * @data_len: bytes of data
 * @usr_len: bytes of user message
 * @usr_off: where the user message starts in @iu: 0 on 2.0, where it
 *	comes before the header; after the header on 2.1
 * @permit: the permit the request was sent with; a failover sends it
 *	again with the same permit and chunk on another path
 * @priv: the user's pointer for @conf
 * @conf: the user's completion callback
 * @sent_at: jiffies when the request was posted
 * @tag: requests the slot has had, this one included (past 2^32, from
 *	2^16 on again); on a 2.1 path with tags their message ids carry it
 *	(rtrs_msg_id()), modulo the tag's width
 * @done_at: jiffies when the slot's last request completed, for the log of
 *	a response that finds no request (rtrs_clt_stray_rsp())
 * @status: result reported to @conf
 * @pending: completions still awaited: the response, the completion of the
 *	request's write or SEND when signaled and, once posted, of the
 *	LOCAL_INV of @mr; the request completes when the last one is in
 * @sq_wrs: entries of @con's send queue the request holds (see
 *	rtrs_clt_req_post()), given back when it leaves the path
 * @sq_covered: entries of unsignaled requests posted before this one's
 *	signaled SEND, given back when that SEND completes
 * @in_use: a request is in flight in this slot
 * @responded: the response arrived; another one is a protocol error
 * @mr_valid: @mr is registered and not yet invalidated
 * @read_buf: a 2.1 READ_BUF: its data comes into the slot's read buffer
 *	(&rtrs_clt_rdbufs), its response with it as an immediate
 * @large_entry: in &rtrs_clt_large.waiters while @parked
 * @count: while @parked, the entries of @sglist mapped for DMA
 * @parked: in flight, but not posted yet: it waits for a large MR
 *	(&rtrs_clt_large); under &rtrs_clt_large.lock
 *
 * A slot is only touched by the submitter until it sets @in_use (with
 * release semantics) right before posting, then by the completion context
 * of @con (serialised by its CQ), and after @con is drained by the path
 * teardown.  A parked request goes on from whoever gives its MR back
 * (rtrs_clt_large_kick()).  The watchdog only reads @in_use, @parked,
 * @con and @sent_at, without a lock.
 */
struct rtrs_clt_io_req {
	struct rtrs_clt_con	*con;
	struct rtrs_iu		*iu;
	void			*big;
	dma_addr_t		big_dma;
	u32			big_len;
	struct ib_mr		*mr;
	struct ib_mr		*slot_mr;
	struct ib_sge		*sge;
	struct ib_rdma_wr	*wrs;
	struct ib_cqe		inv_cqe;
	struct scatterlist	*sglist;
	unsigned int		sg_cnt;
	unsigned int		sg_cnt_mapped;
	enum dma_data_direction	dir;
	u32			data_len;
	u32			usr_len;
	u32			usr_off;
	struct rtrs_permit	*permit;
	void			*priv;
	void			(*conf)(void *priv, int err);
	unsigned long		sent_at;
	unsigned long		done_at;
	u32			tag;
	int			status;
	unsigned int		pending;
	u32			sq_wrs;
	u32			sq_covered;
	bool			in_use;
	bool			responded;
	bool			mr_valid;
	bool			read_buf;
	struct list_head	large_entry;
	int			count;
	bool			parked;
};

/**
 * struct rtrs_clt_rdbufs - the read buffers of a 2.1 path
 * @mr: registers every slot's buffer once, for the server to RDMA-write
 *	into: slot i at @mr->iova + i * %RTRS_CLT_READ_BUF; NULL when the
 *	path has no read buffers
 * @reg: REG_MR of @mr, posted before the INFO_REQ
 * @pages: the page of each slot
 * @dma: DMA address of each page, mapped from the device
 *
 * The server reaches only these buffers, and only while the path's
 * connections are up; what it writes there is READ data it supplies
 * anyway.
 */
struct rtrs_clt_rdbufs {
	struct ib_mr		*mr;
	struct ib_reg_wr	reg;
	struct page		**pages;
	dma_addr_t		*dma;
};

/**
 * struct rtrs_clt_large - the large MRs of a 2.1 path
 * @lock: protects @free, @waiters and @kicking
 * @mrs: the MRs, each mapping &rtrs_clt_path.max_pages_per_mr pages
 * @nr: entries in @mrs; 0 when the slots' MRs map every request
 * @free: the first @free entries of @mrs are not in use
 * @waiters: requests parked until an MR is free, in the order they came
 *	(&rtrs_clt_io_req.large_entry)
 * @kicking: rtrs_clt_large_kick() is handing MRs to @waiters
 *
 * A request whose data spans more pages than its slot's MR maps borrows
 * one for as long as it is on the path, or waits for one.
 */
struct rtrs_clt_large {
	/* protects @free, @waiters, @kicking and the entries below @free */
	spinlock_t		lock;
	struct ib_mr		**mrs;
	u32			nr;
	u32			free;
	struct list_head	waiters;
	bool			kicking;
};

/**
 * struct rtrs_clt_limits - what a connection response tells of a path
 * @queue_depth: number of requests in flight (2.0: of chunks)
 * @max_io_size: largest data length of a request
 * @max_hdr_size: header room of a chunk (2.0), or of a request's SEND up
 *	to the data of an inline WRITE (2.1)
 * @max_inline_size: 2.1, largest data length of an inline WRITE (0: none);
 *	0 for 2.0
 * @max_read_buf: 2.1, largest data length of a READ_BUF, the server's cut
 *	to what the path's read buffers hold (0: none); 0 for 2.0
 * @chunk_size: 2.0, @max_io_size + @max_hdr_size; 0 for 2.1
 * @off_bits: 2.0, rtrs_imm_off_bits() of @queue_depth; 0 for 2.1
 * @flags: 2.0, %RTRS_MSG_NEW_RKEY_F or not; 2.1, %RTRS_CONN_RSP_MSG_TAGS
 *	or not
 * @version: the protocol version the path speaks, as on the wire
 *	(major << 8 | minor); 0 before its first connection response
 */
struct rtrs_clt_limits {
	u16		version;
	u32		queue_depth;
	u32		max_io_size;
	u32		max_hdr_size;
	u32		max_inline_size;
	u32		max_read_buf;
	u32		chunk_size;
	unsigned int	off_bits;
	u32		flags;
};

/* Does a path of limits @lim speak protocol 2.1? */
static inline bool rtrs_clt_lim_2_1(const struct rtrs_clt_limits *lim)
{
	return (lim->version & 0xff) == RTRS_PROTO_MINOR_2_1;
}

/* Does a 2.1 path of limits @lim tag its message ids (rtrs_msg_id())? */
static inline bool rtrs_clt_lim_tags(const struct rtrs_clt_limits *lim)
{
	return rtrs_clt_lim_2_1(lim) && lim->flags & RTRS_CONN_RSP_MSG_TAGS;
}

/**
 * struct rtrs_clt_path - one path of a client session
 * @s: what the core knows of it
 * @dev: its sysfs directory, paths/<src@dst>/ of the session; its
 *	release frees the path
 * @dev_added: @dev is registered
 * @clt: the session
 * @entry: in @clt->paths_list (RCU)
 * @removed: taken off @clt->paths_list by remove_path; protected by
 *	@clt->change_mutex
 * @state_lock: protects @state and the decision to queue @close_work or
 *	@reconnect_dwork
 * @state: &enum rtrs_clt_state; read locklessly with READ_ONCE() on the IO
 *	path, inside an RCU read section that the teardown waits for
 * @init_mutex: serialises establishing and tearing down the connections
 *	and the resources that live with them (@reqs, @rbufs, @s.dev, info IUs)
 * @close_work: tears a failed path down
 * @reconnect_dwork: establishes a path again
 * @wd_dwork: the watchdog: probes connections whose requests are stuck,
 *	fails the path when a request outlives the session's io_timeout_sec
 * @reconnect_attempts: failed reconnects in a row
 * @established: counted in @clt->paths_up; protected by
 *	@clt->link_ev_mutex
 * @listed: on @clt->paths_list, so the user may send on it; a path is
 *	counted as up only while listed.  Protected by @clt->link_ev_mutex
 * @stay_down: disconnected through sysfs: no reconnect is scheduled
 * @connect_failed: an error hit the path while it was connecting; set
 *	under @state_lock, where the move to %RTRS_CLT_CONNECTED reads it
 * @info_done: completed when the path info response arrived or connecting
 *	failed
 * @info_err: result of the path info exchange
 * @info_why: what went wrong with it, for the failed open's line, or NULL
 * @err_logged: an error of this connect attempt logged its reason
 * @max_minor: the protocol minor every connection of this connect attempt
 *	asks for: its session's (&rtrs_clt_sess.max_minor)
 * @info_tx_iu: INFO_REQ buffer, freed after the teardown drained the QP
 * @info_rx_iu: INFO_RSP buffer, idem
 * @hb_cqe: completion entry of heartbeats and their acks
 * @reqs: request slots, one per permit: a 2.0 request takes the slot of
 *	its permit's chunk, a 2.1 request the slot of its permit's mem_id,
 *	which is its message id on the wire
 * @rbufs: the server's chunks; NULL on a 2.1 path, which has none
 * @rd: a 2.1 path's read buffers, one per request slot
 * @lim: what the server offered in its connection response: the path's
 *	queue depth, chunk and IO sizes; the session folds them into its
 *	own (rtrs_clt_sess_set_limits()).  A 2.1 path's IO size is cut to
 *	what its MRs map.
 * @max_pages_per_mr: pages the data of one request may span
 * @slot_pages: pages the MR of a request slot maps: @max_pages_per_mr,
 *	or %RTRS_CLT_SLOT_PAGES where @large takes requests that span more
 * @large: a 2.1 path's large MRs
 * @max_send_sge: SGEs of one RDMA WRITE (2.0) or SEND (2.1) on an IO
 *	connection
 * @max_write_wrs: RDMA WRITEs one WRITE request may take (2.0); 1 for 2.1
 * @quarantine: permits standing for the chunks of requests that were in
 *	flight when the path failed; a server operation of the failed path
 *	may still own them.  Under &rtrs_clt_sess.chunks_lock
 * @quarantined: entries in @quarantine
 * @q_gen: connects of the path since it was created that ended a
 *	quarantine; under &rtrs_clt_sess.chunks_lock
 * @stats: counters shown in sysfs
 * @steer: per CPU, the IO connection (its cid) that last took a response
 *	on that CPU while not the CPU's own, 0 for none; a hint, checked
 *	against the connection's &rtrs_clt_con.rsp_cpu before use
 */
struct rtrs_clt_path {
	struct rtrs_path	s;
	struct device		dev;
	bool			dev_added;
	struct rtrs_clt_sess	*clt;
	struct list_head	entry;
	bool			removed;
	/* protects @state and queueing the close and reconnect works */
	spinlock_t		state_lock;
	enum rtrs_clt_state	state;
	/* connecting and tearing down; what lives with the connections */
	struct mutex		init_mutex;
	struct work_struct	close_work;
	struct delayed_work	reconnect_dwork;
	struct delayed_work	wd_dwork;
	int			reconnect_attempts;
	bool			established;
	bool			listed;
	bool			stay_down;
	bool			connect_failed;
	struct completion	info_done;
	int			info_err;
	const char		*info_why;
	bool			err_logged;
	u8			max_minor;
	struct rtrs_iu		*info_tx_iu;
	struct rtrs_iu		*info_rx_iu;
	struct ib_cqe		hb_cqe;
	struct rtrs_clt_io_req	*reqs;
	struct rtrs_rbuf	*rbufs;
	struct rtrs_clt_rdbufs	rd;
	struct rtrs_clt_limits	lim;
	u32			max_pages_per_mr;
	u32			slot_pages;
	struct rtrs_clt_large	large;
	u32			max_send_sge;
	u32			max_write_wrs;
	struct list_head	quarantine;
	unsigned int		quarantined;
	unsigned int		q_gen;
	struct rtrs_clt_stats	stats;
	u16			*steer;
};

/**
 * struct rtrs_clt_sess - a client session
 * @dev: its sysfs directory, /sys/class/rtrs-client/<session>/; its
 *	release frees the session
 * @paths_dev: the paths/ directory below @dev, parent of the paths' @dev
 * @change_mutex: serialises adding and removing paths with each other
 *	and with rtrs_clt_close(); protects @frozen and @removing
 * @frozen: rtrs_clt_close() has begun: no path is added or removed
 * @removing: remove_path writes under way
 * @removing_done: rtrs_clt_close() waits there for @removing to drop to 0
 * @max_minor: the protocol minor its paths ask for, the client's
 *	max_proto_minor when the session was opened
 * @mp_policy: &enum rtrs_clt_mp_policy; read locklessly per request
 * @rr_seq: per-CPU round-robin position
 * @paths_list: the paths; RCU for readers, @paths_mutex for writers
 * @paths_mutex: protects @paths_list, @paths_num, @queue_depth,
 *	@max_io_size and @max_segments
 * @paths_num: number of paths in @paths_list not being removed
 * @paths_uuid: identifies the session on the wire
 * @sessname: name of the session
 * @port: server port for paths added later
 * @reconnect_delay_sec: delay before a failed path reconnects
 * @max_reconnect_attempts: reconnects of a path before it is given up;
 *	-1 forever, 0 never
 * @io_timeout_sec: a request that waits this long for its response fails
 *	its path; 0 never
 * @nr_poll_queues: poll connections per path
 * @queue_depth: number of permits; the same on every path
 * @max_io_size: smallest max_io_size of the paths
 * @max_segments: smallest segment limit (pages per MR) of the paths
 * @priv: the user's pointer for @link_ev
 * @link_ev: the user's link event callback
 * @link_ev_mutex: serialises link events; protects @paths_up,
 *	@link_ev_on and the paths' @established and @listed
 * @paths_up: paths counted as up (see rtrs_clt_path_up())
 * @link_ev_on: link events are delivered (after open, before close)
 * @permits_map: free and taken permits
 * @permits_wait_index: spreads the sleepers on @permits_map's queues
 * @permits: @queue_depth permits of @permit_size bytes each
 * @permit_size: size of a permit and the user's pdu, aligned
 * @permits_wait: rtrs_clt_close() waits there for the last permit
 * @closing: rtrs_clt_close() has begun
 * @chunks_lock: protects @reserve, @reserve_num, @orphans, the paths'
 *	quarantines and the permits' @q_path; taken with interrupts off
 * @reserve: permits withheld from the user whose chunks are free, for
 *	requests a failover moves (see rtrs_clt_chunk_quarantine())
 * @reserve_num: entries in @reserve
 * @reserve_max: permits withheld for @reserve: the user gets
 *	@queue_depth - @reserve_max
 * @orphans: quarantined permits of paths removed before their
 *	quarantine ended; they come back when the session closes
 */
struct rtrs_clt_sess {
	struct device		dev;
	struct device		paths_dev;
	/* adding and removing paths; protects @frozen and @removing */
	struct mutex		change_mutex;
	bool			frozen;
	unsigned int		removing;
	wait_queue_head_t	removing_done;
	u8			max_minor;
	int			mp_policy;
	unsigned int __percpu	*rr_seq;
	struct list_head	paths_list;
	/* protects @paths_list (writers) and the session limits */
	struct mutex		paths_mutex;
	size_t			paths_num;
	uuid_t			paths_uuid;
	char			sessname[NAME_MAX];
	u16			port;
	u8			reconnect_delay_sec;
	s16			max_reconnect_attempts;
	u32			io_timeout_sec;
	u32			nr_poll_queues;
	u32			queue_depth;
	u32			max_io_size;
	u32			max_segments;
	void			*priv;
	void			(*link_ev)(void *priv,
					   enum rtrs_clt_link_ev ev);
	/* link events; @paths_up, @link_ev_on, paths' @established, @listed */
	struct mutex		link_ev_mutex;
	unsigned int		paths_up;
	bool			link_ev_on;
	struct sbitmap_queue	permits_map;
	atomic_t		permits_wait_index;
	void			*permits;
	size_t			permit_size;
	wait_queue_head_t	permits_wait;
	bool			closing;
	/* @reserve, @orphans and the paths' quarantines */
	spinlock_t		chunks_lock;
	struct list_head	reserve;
	unsigned int		reserve_num;
	unsigned int		reserve_max;
	struct list_head	orphans;
};

static inline struct rtrs_clt_path *to_clt_path(struct rtrs_path *s)
{
	return container_of(s, struct rtrs_clt_path, s);
}

static inline struct rtrs_clt_con *to_clt_con(struct rtrs_con *c)
{
	return container_of(c, struct rtrs_clt_con, c);
}

/* The connection whose QP completed @wc. */
static inline struct rtrs_clt_con *rtrs_clt_wc_con(struct ib_wc *wc)
{
	return to_clt_con(wc->qp->qp_context);
}

static inline struct rtrs_clt_con *rtrs_clt_path_con(struct rtrs_clt_path *p,
						     unsigned int cid)
{
	return to_clt_con(p->s.con[cid]);
}

/*
 * Steering.  IO connection n + 1 serves the requests of CPU n, and its
 * completion vector is that CPU's, so that where a vector interrupts its
 * own CPU a request's response is taken on the CPU that issued it.  Where
 * responses are taken elsewhere (soft-RoCE completes on the CPU that
 * received the packet, the one the network stack hashed the connection's
 * flow to; irqbalance may move a vector's interrupt), every response
 * hands its work to another CPU, and a user that issues its next request
 * from the completion follows it there: at queue depth 1 each IO then
 * crosses between CPUs and wakes a thread on each.  So each response
 * notes the CPU that took it, and a request whose own connection's
 * responses are taken on another CPU goes on a connection whose
 * responses are taken on its CPU, when there is one.  Each IO connection
 * is sized for the whole queue depth, and servers, ours of either
 * version and mainline's, answer on the connection a request came on.
 */

/**
 * rtrs_clt_steer_note() - a response of a connection was taken on a CPU
 * @path: the connection's path, with a @path->steer of one entry per CPU
 *	of its IO connections
 * @con: the connection
 * @cpu: the CPU that took the response
 *
 * Context: the connection's receive completion.
 */
static inline void rtrs_clt_steer_note(struct rtrs_clt_path *path,
				       struct rtrs_clt_con *con,
				       unsigned int cpu)
{
	u16 cid = con->c.cid;

	if (READ_ONCE(con->rsp_cpu) != (int)cpu)
		WRITE_ONCE(con->rsp_cpu, cpu);
	/* Admin and poll connections take no steered requests. */
	if (!cid || cid >= path->s.irq_con_num || con->cpu == cpu ||
	    cpu >= path->s.irq_con_num - 1)
		return;
	if (READ_ONCE(path->steer[cpu]) != cid)
		WRITE_ONCE(path->steer[cpu], cid);
}

/**
 * rtrs_clt_steer_con() - the IO connection for a request of a CPU
 * @path: a connected path
 * @cpu: the CPU the request's permit was taken on
 * @steered: set to whether another connection than @cpu's own was chosen
 *
 * Return: @cpu's own IO connection, unless its last response was taken
 * on another CPU while @path->steer names a connection whose last
 * response was taken on @cpu: then that one.
 */
static inline struct rtrs_clt_con *rtrs_clt_steer_con(struct rtrs_clt_path *path,
						      unsigned int cpu,
						      bool *steered)
{
	unsigned int n = path->s.irq_con_num - 1;
	struct rtrs_clt_con *con = rtrs_clt_path_con(path, cpu % n + 1);
	struct rtrs_con *alt;
	u16 cid;

	*steered = false;
	if (cpu >= n || READ_ONCE(con->rsp_cpu) == (int)cpu)
		return con;
	cid = READ_ONCE(path->steer[cpu]);
	if (!cid || cid > n)
		return con;
	alt = path->s.con[cid];
	if (!alt || READ_ONCE(to_clt_con(alt)->rsp_cpu) != (int)cpu)
		return con;
	*steered = true;
	return to_clt_con(alt);
}

/*
 * The client's files, from the top down; each calls only the ones below
 * it, and a session and its sysfs face call each other.
 */

/* rtrs-clt-sess.c: sessions, the API entry points. */
void rtrs_clt_sess_release(struct rtrs_clt_sess *clt);
int rtrs_clt_add_path(struct rtrs_clt_sess *clt, const struct rtrs_addr *addr);
int rtrs_clt_remove_path(struct rtrs_clt_path *path,
			 struct device_attribute *attr);

/* sysfs/rtrs-clt-sysfs.c: the sysfs directories of sessions and paths. */
int rtrs_clt_sysfs_init(void);
void rtrs_clt_sysfs_exit(void);
void rtrs_clt_sess_dev_init(struct rtrs_clt_sess *clt);
int rtrs_clt_sess_dev_add(struct rtrs_clt_sess *clt);
void rtrs_clt_sess_dev_del(struct rtrs_clt_sess *clt);
int rtrs_clt_path_dev_add(struct rtrs_clt_path *path);
void rtrs_clt_path_dev_del(struct rtrs_clt_path *path);

/* rtrs-clt-path.c: path lifecycle. */
void rtrs_clt_path_disconnect(struct rtrs_clt_path *path);
int rtrs_clt_path_reconnect(struct rtrs_clt_path *path);
struct rtrs_clt_path *rtrs_clt_path_alloc(struct rtrs_clt_sess *clt,
					  const struct rtrs_addr *addr);
void rtrs_clt_path_free(struct rtrs_clt_path *path);
int rtrs_clt_path_open(struct rtrs_clt_path *path);
void rtrs_clt_path_close(struct rtrs_clt_path *path);
void rtrs_clt_path_schedule_reconnect(struct rtrs_clt_path *path,
				      enum rtrs_clt_state from);

/* rtrs-clt-conn.c: one connection and its CM events. */
extern struct rtrs_ib_dev_pool rtrs_clt_dev_pool;
extern unsigned int rtrs_clt_max_minor;
int rtrs_clt_con_connect(struct rtrs_clt_path *path, unsigned int cid);
void rtrs_clt_con_stop(struct rtrs_clt_con *con);
void rtrs_clt_con_free(struct rtrs_clt_path *path, unsigned int cid);
int rtrs_clt_con_post_recvs(struct rtrs_clt_con *con);

/* rtrs-clt-io.c: requests and their completions. */
int rtrs_clt_reqs_alloc(struct rtrs_clt_path *path);
void rtrs_clt_reqs_free(struct rtrs_clt_path *path);
void rtrs_clt_reqs_failover(struct rtrs_clt_path *path);
int rtrs_clt_submit(struct rtrs_clt_sess *clt, struct rtrs_clt_path *skip,
		    int dir, struct rtrs_clt_req_ops *ops,
		    struct rtrs_permit *permit, const struct kvec *vec,
		    size_t nr, size_t len, struct scatterlist *sg,
		    unsigned int sg_cnt);
void rtrs_clt_recv_done(struct ib_cq *cq, struct ib_wc *wc);
void rtrs_clt_recv_iu_done(struct ib_cq *cq, struct ib_wc *wc);
void rtrs_clt_hb_done(struct ib_cq *cq, struct ib_wc *wc);
void rtrs_clt_probe_done(struct ib_cq *cq, struct ib_wc *wc);
void rtrs_clt_wd_work(struct work_struct *work);

/* rtrs-clt-state.c: what happens to a path, and the session's view of it. */
extern struct workqueue_struct *rtrs_clt_wq;
void rtrs_clt_path_set_state(struct rtrs_clt_path *path,
			     enum rtrs_clt_state new);
bool rtrs_clt_path_change_state(struct rtrs_clt_path *path,
				enum rtrs_clt_state old,
				enum rtrs_clt_state new);
void rtrs_clt_path_error(struct rtrs_clt_path *path);
int rtrs_clt_path_set_connected(struct rtrs_clt_path *path);
void rtrs_clt_path_set_dead(struct rtrs_clt_path *path);
void rtrs_clt_path_up(struct rtrs_clt_path *path);
void rtrs_clt_path_down(struct rtrs_clt_path *path);
void rtrs_clt_path_set_listed(struct rtrs_clt_path *path, bool listed);
void rtrs_clt_set_link_ev(struct rtrs_clt_sess *clt, bool on);
int rtrs_clt_sess_set_limits(struct rtrs_clt_path *path);

/* rtrs-clt-permit.c: permits. */
int rtrs_clt_permits_alloc(struct rtrs_clt_sess *clt);
void rtrs_clt_permits_free(struct rtrs_clt_sess *clt);
void rtrs_clt_chunk_quarantine(struct rtrs_clt_path *path,
			       struct rtrs_permit *permit);
void rtrs_clt_chunk_move(struct rtrs_clt_sess *clt,
			 struct rtrs_permit *permit);
void rtrs_clt_chunks_release(struct rtrs_clt_path *path);
void rtrs_clt_chunks_orphan(struct rtrs_clt_path *path);

/* rtrs-clt-mpath.c: path selection. */
struct rtrs_clt_path *rtrs_clt_mp_pick(struct rtrs_clt_sess *clt);
const char *rtrs_clt_mp_name(int policy);
int rtrs_clt_mp_parse(const char *buf);

static inline bool rtrs_clt_path_connected(struct rtrs_clt_path *path)
{
	return READ_ONCE(path->state) == RTRS_CLT_CONNECTED;
}

/* Take @n entries of @con's send queue for a request; false when full. */
static inline bool rtrs_clt_sq_get(struct rtrs_clt_con *con, u32 n)
{
	if (atomic_sub_return(n, &con->c.sq_wr_avail) >= 0)
		return true;
	atomic_add(n, &con->c.sq_wr_avail);
	return false;
}

/*
 * Signal the SEND of @req, which takes @nwr send queue entries, or leave
 * it unsignaled.  A send queue completes in order: the completion of a
 * signaled SEND stands for every work request posted before it, and gives
 * back the entries of the unsignaled requests among them, which no longer
 * wait for a completion of their own.  @con->send_lock, held from here
 * through the post, keeps the SENDs in the order counted here.
 *
 * The SEND goes unsignaled when @may (it reads nothing that is the user's
 * again, or freed, once the request completes: a retransmission after
 * that may read only the slot's header buffer, and the server drops it as
 * a duplicate) and the entries awaiting a signaled completion stay within
 * @con->unsig_max.  The entry of the LOCAL_INV the request may post later,
 * signaled, stays the request's.  KUnit suite rtrs-clt-sq runs these
 * rules against a model of the device's queue.
 *
 * Return: true when the SEND is to be signaled.
 */
static inline bool rtrs_clt_send_signal(struct rtrs_clt_io_req *req,
					u32 nwr, bool may)
{
	struct rtrs_clt_con *con = req->con;
	u32 keep = req->mr_valid ? 1 : 0, n = nwr - keep;

	lockdep_assert_held(&con->send_lock);
	if (may && atomic_read(&con->unretired) + n <= con->unsig_max) {
		atomic_add(n, &con->unretired);
		con->unsig += n;
		req->sq_wrs = keep;
		/* The response completes it, after the LOCAL_INV if any. */
		req->pending--;
		return false;
	}
	req->sq_wrs = nwr;
	req->sq_covered = con->unsig;
	con->unsig = 0;
	return true;
}

/*
 * A signaled SEND of @req completed: the entries of the unsignaled
 * requests before it are free (see rtrs_clt_send_signal()).
 */
static inline void rtrs_clt_send_retire(struct rtrs_clt_con *con,
					struct rtrs_clt_io_req *req)
{
	if (!req->sq_covered)
		return;
	atomic_sub(req->sq_covered, &con->unretired);
	atomic_add(req->sq_covered, &con->c.sq_wr_avail);
	req->sq_covered = 0;
}

/* rtrs-clt-validate.c: checks of what the server sends. */
int rtrs_clt_check_conn_rsp(const void *data, size_t len, u8 max_minor,
			    u32 queue_depth, struct rtrs_clt_limits *lim);
int rtrs_clt_check_info_rsp(const void *buf, size_t len, u32 queue_depth,
			    u32 chunk_size, struct rtrs_rbuf *rbufs);
int rtrs_clt_check_io_rsp(u32 imm, u32 queue_depth, u32 *msg_id, int *errno);
int rtrs_clt_check_rkey_rsp(const void *buf, size_t len, u32 imm,
			    u32 queue_depth, u32 *msg_id, int *errno,
			    u32 *rkey);
int rtrs_clt_check_info_rsp_2_1(const void *buf, size_t len);
int rtrs_clt_check_io_rsps_2_1(const void *buf, size_t len, u32 max,
			       bool inval, u32 queue_depth, bool tags);
int rtrs_clt_check_io_rsp_2_1(const void *buf, size_t len, u32 queue_depth,
			      bool tags, u32 *msg_id, int *errno);

#endif /* RTRS_CLT_H */
