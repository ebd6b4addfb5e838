/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, server internals.
 *
 * Why this file has its name: rnbd's server tracepoint (drivers/block/rnbd
 * in Linux) includes mainline's private server header, which has this
 * file's name, and reads id->dir from the struct rtrs_srv_op that the
 * public header keeps opaque.  Completing the struct here lets rnbd build
 * unmodified.  Users other than that tracepoint should treat struct
 * rtrs_srv_op as opaque.  Everything else here is private to the
 * server's rtrs-srv*.c files.
 *
 * Lock order.  A lock may be taken while holding those listed above it,
 * never while holding one listed below it; the indentation shows the
 * nestings the code has:
 *
 *   rtrs_srv_dev_mutex		contexts, devices, listeners
 *     rtrs_srv_ctx.mutex		a context's sessions
 *       rtrs_srv_sess.paths_mutex	a session's paths and their connections
 *   rtrs_srv_sess.sysfs_mutex	sysfs directories of a session's paths
 *   rtrs_srv_sess.ev_mutex		counting paths up, link events
 *   rtrs_srv_con.rsp_wait_lock	(spin, irq) responses waiting for room
 *   rtrs_srv_con.rsp_post_lock	(spin, irq) posting responses and
 *				releasing their requests, the drain
 *     rtrs_srv_chunk_owner.lock	(spin, irq) who owns a chunk
 *   rtrs_srv_path.state_lock	(spin, irq) the path's state; taken under
 *				paths_mutex when a context closes its paths
 *   rtrs_srv_op.lock		(spin, irq) a 2.1 request handle retiring
 *   rtrs_srv_pool.lock		(spin, irq) the data buffer pool; a leaf
 *
 * A response that waited for room leaves rsp_wait_lock before it is
 * posted.  Nothing is taken under the pool's lock, and the callbacks of
 * the requests it grants run after it is dropped.  The test kernel runs
 * with lockdep, and a report in any guest fails make check.
 */
#ifndef RTRS_SRV_H
#define RTRS_SRV_H

#include <linux/completion.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu-refcount.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "rtrs-pri.h"
#include "rtrs.h"

struct rtrs_srv_con;
struct rtrs_srv_pool_block;
struct rtrs_srv_sess_dev;
struct rtrs_srv_srq;

/*
 * Protocol 2.1: the header area of a receive buffer (request header and
 * user message; inline WRITE data follows in a page of its own), and the
 * largest IO.
 */
#define RTRS_SRV_HDR_SIZE_2_1	512
#define RTRS_SRV_MAX_IO_2_1	SZ_1M
/* Largest READ_BUF a 2.1 session takes, when it takes them at all. */
#define RTRS_SRV_READ_BUF_2_1	SZ_4K

/**
 * struct rtrs_srv_rbuf - a receive buffer of a 2.1 shared receive queue
 * @cqe: completion of the receive
 * @srq: the queue it belongs to
 * @hdr: %RTRS_SRV_HDR_SIZE_2_1 bytes: request header and user message,
 *	right before @page in memory
 * @hdr_dma: DMA address of @hdr
 * @page: the data of an inline WRITE
 * @page_dma: DMA address of @page
 */
struct rtrs_srv_rbuf {
	struct ib_cqe		cqe;
	struct rtrs_srv_srq	*srq;
	void			*hdr;
	dma_addr_t		hdr_dma;
	struct page		*page;
	dma_addr_t		page_dma;
};

/**
 * struct rtrs_srv_srq - the shared receive queue of one device (2.1)
 * @entry: in the module's list of queues
 * @dev: the device and PD; the queue holds a reference
 * @srq: the queue
 * @users: paths using it; under the module's queue mutex
 * @nr: its buffers
 * @bufs: @nr buffers
 */
struct rtrs_srv_srq {
	struct list_head	entry;
	struct rtrs_ib_dev	*dev;
	struct ib_srq		*srq;
	unsigned int		users;
	u32			nr;
	struct rtrs_srv_rbuf	*bufs;
};

/**
 * struct rtrs_srv_cpu_stats - per-CPU request counters of a server path
 * @cnt: requests received, by direction (READ, WRITE)
 * @bytes: data bytes of those requests
 */
struct rtrs_srv_cpu_stats {
	u64	cnt[2];
	u64	bytes[2];
};

/*
 * Data buffers of the pool (rtrs-srv-pool.c): a power-of-two number of
 * pages, from one page to RTRS_SRV_POOL_MAX_BUF bytes, carved out of
 * physically contiguous blocks of RTRS_SRV_POOL_BLOCK bytes.
 */
#define RTRS_SRV_POOL_BLOCK		SZ_1M
#define RTRS_SRV_POOL_BLOCK_PAGES	(RTRS_SRV_POOL_BLOCK / PAGE_SIZE)
#define RTRS_SRV_POOL_MAX_BUF		RTRS_SRV_POOL_BLOCK

/**
 * struct rtrs_srv_pool - the server's data buffers, shared by all sessions
 * @lock: protects @allocated, @held, @nr_users, @nr_waiters, @blocks,
 *	@rr, and the users' and requests' fields so marked; taken with
 *	bottom halves off
 * @limit: most bytes of blocks the pool may allocate, set at its init
 * @allocated: bytes of the blocks allocated so far; they are kept until
 *	the pool is destroyed
 * @held: bytes of the buffers granted and not yet put
 * @nr_users: users that hold a buffer or have a request waiting; the
 *	share of each is @limit divided by them
 * @nr_waiters: requests waiting
 * @blocks: the blocks; those in use first, those unused last
 * @rr: users with requests waiting, by &rtrs_srv_pool_user.rr_entry,
 *	the next one to serve first
 * @wq: runs @grow_dwork; WQ_MEM_RECLAIM, so that the work runs when
 *	memory is short
 * @grow_dwork: allocates a block when a waiter needs one and the pool may
 *	grow; when that fails, it tries again later
 */
struct rtrs_srv_pool {
	spinlock_t		lock;		/* see above */
	size_t			limit;
	size_t			allocated;
	size_t			held;
	unsigned int		nr_users;
	unsigned int		nr_waiters;
	struct list_head	blocks;
	struct list_head	rr;
	struct workqueue_struct	*wq;
	struct delayed_work	grow_dwork;
};

/**
 * struct rtrs_srv_pool_user - one of those the pool is shared among
 * @pool: the pool
 * @waiting: its requests waiting, by &rtrs_srv_pool_req.entry, in the
 *	order they came
 * @rr_entry: in &rtrs_srv_pool.rr while @waiting is not empty
 * @held: bytes of the buffers it holds
 *
 * Embedded in what is to get a fair share of the pool.  All but @pool
 * are under the pool's lock.  A user counts among those the pool is
 * shared by while it holds a buffer or has a request waiting.
 */
struct rtrs_srv_pool_user {
	struct rtrs_srv_pool	*pool;
	struct list_head	waiting;
	struct list_head	rr_entry;
	size_t			held;
};

/**
 * struct rtrs_srv_pool_req - a request for a buffer of the pool
 * @size: bytes wanted, 1 to %RTRS_SRV_POOL_MAX_BUF; set by the caller
 * @user: on whose account; set by the caller
 * @granted: called when a request that had to wait is granted (see
 *	rtrs_srv_pool_get()); set by the caller
 * @entry: in &rtrs_srv_pool_user.waiting while the request waits
 * @waiting: the request waits; under the pool's lock
 * @buf: once granted, the buffer: PAGE_SIZE << @order bytes, physically
 *	contiguous and naturally aligned
 * @page: once granted, the first page of @buf
 * @order: log2 of the pages of @buf, set from @size by
 *	rtrs_srv_pool_get()
 * @block: once granted, the block @buf is in
 */
struct rtrs_srv_pool_req {
	size_t			size;
	struct rtrs_srv_pool_user *user;
	void			(*granted)(struct rtrs_srv_pool_req *req);
	struct list_head	entry;
	bool			waiting;
	void			*buf;
	struct page		*page;
	unsigned int		order;
	struct rtrs_srv_pool_block *block;
};

/**
 * struct rtrs_srv_pool_stats - what a pool holds, at one moment
 * @limit: &rtrs_srv_pool.limit
 * @allocated: bytes of the blocks allocated
 * @held: bytes of the buffers granted and not yet put
 * @users: users that hold a buffer or have a request waiting
 * @waiters: requests waiting
 */
struct rtrs_srv_pool_stats {
	size_t			limit;
	size_t			allocated;
	size_t			held;
	unsigned int		users;
	unsigned int		waiters;
};

/**
 * struct rtrs_srv_op - one client request being served
 * @dir: READ when the client reads from the server (the user fills the
 *	data area), WRITE when the client wrote into it.  Set before
 *	&rtrs_srv_ops.rdma_ev is called; constant until the response.
 * @con: connection the request came in on, and the response goes out on
 * @msg_id: chunk of the request (2.1: its slot); the response carries it
 *	back
 * @tag: (2.1) the tag of the request's message id, which the response
 *	carries back with @msg_id (rtrs_msg_id()); 0 where not tagged
 * @off: offset of the request's header in the chunk; in 2.1, the length
 *	of the user message that follows the header
 * @status: the user's status, kept while the response waits for send
 *	queue room
 * @busy: bit 0 is set from the arrival of the request until it ends: its
 *	response posted (cleared after the post, see rtrs_srv_post_rsp_wrs();
 *	before it for a packed response, see rtrs_srv_pack_rsp()) or the
 *	request dropped; a second request for the chunk on the same
 *	path meanwhile is a protocol violation, one that comes between the
 *	post and the release is not (rtrs_srv_op_take()).  See
 *	rtrs_srv_op_end().
 * @need_inval: the client asked for SEND WITH INVALIDATE of @desc.key
 * @sg_cnt: descriptors of a READ, 0 or 1
 * @desc: copy of the READ descriptor, validated
 * @wait_entry: in &rtrs_srv_con.rsp_wait_list while the response waits
 * @chunk_entry: in &rtrs_srv_chunk_owner.waiting while the request waits
 *	for a request of another path to give up the chunk
 * @run_work: runs the request once it has been handed the chunk; in
 *	2.1, once it has been granted its data buffer
 * @type: (2.1) the request's message type, 0 for a 2.0 request
 * @data_len: (2.1) length of the request's data
 * @rbuf: (2.1) the receive buffer the request came in, held until its
 *	response is posted
 * @pool_req: (2.1) the data buffer of a READ or of a pulled WRITE, from
 *	the server's pool: waited for, then held
 * @data_dma: (2.1) DMA address of that buffer on the path's device
 * @data_cqe: (2.1) completion of the RDMA READ of a WRITE's data, and of
 *	the RDMA WRITE of a READ's data
 * @lock: (2.1) protects @retiring and the @parked request
 * @retiring: (2.1) the response of a READ is posted and its data still
 *	goes out of the buffer: the handle is not free yet
 * @parked: (2.1) receive buffer of a request for this id that came while
 *	the handle was retiring; it runs when the data has gone
 * @parked_con: (2.1) connection of @parked
 * @parked_len: (2.1) bytes received in @parked
 *
 * The handle &rtrs_srv_ops.rdma_ev gives the user and the user gives back
 * to rtrs_srv_resp_rdma().  One per chunk and path; in 2.1, one per
 * message id and path.
 */
struct rtrs_srv_op {
	int			dir;
	struct rtrs_srv_con	*con;
	u32			msg_id;
	u32			tag;
	u32			off;
	int			status;
	unsigned long		busy;
	bool			need_inval;
	u16			sg_cnt;
	struct rtrs_sg_desc	desc;
	struct list_head	wait_entry;
	struct list_head	chunk_entry;
	struct work_struct	run_work;
	u16			type;
	u32			data_len;
	struct rtrs_srv_rbuf	*rbuf;
	struct rtrs_srv_pool_req pool_req;
	dma_addr_t		data_dma;
	struct ib_cqe		data_cqe;
	spinlock_t		lock;		/* retiring, parked */
	bool			retiring;
	struct rtrs_srv_rbuf	*parked;
	struct rtrs_srv_con	*parked_con;
	u32			parked_len;
};

/**
 * struct rtrs_srv_chunk_owner - which request works on a session chunk
 * @lock: protects @owner and @waiting; taken with interrupts off, since
 *	requests end in any context
 * @owner: the request, of any path, that owns the chunk from its arrival
 *	until it ends; NULL while the chunk is free
 * @waiting: requests of other paths for the chunk, by
 *	&rtrs_srv_op.chunk_entry, in the order they came; the first is
 *	handed the chunk when @owner ends
 *
 * A session's chunks are shared by all its paths: this keeps a request
 * that a client sent again on another path from running on a chunk while
 * the first one still works on it (rtrs-srv-chunk.c).
 */
struct rtrs_srv_chunk_owner {
	spinlock_t		lock;		/* owner, waiting */
	struct rtrs_srv_op	*owner;
	struct list_head	waiting;
};

/**
 * enum rtrs_srv_state - life of a server path
 * @RTRS_SRV_CONNECTING: connections are being accepted; INFO_REQ not yet
 * @RTRS_SRV_CONNECTED: INFO_RSP sent, IO flows
 * @RTRS_SRV_CLOSING: close work queued or running
 * @RTRS_SRV_CLOSED: torn down, about to be freed
 */
enum rtrs_srv_state {
	RTRS_SRV_CONNECTING,
	RTRS_SRV_CONNECTED,
	RTRS_SRV_CLOSING,
	RTRS_SRV_CLOSED,
};

/**
 * enum rtrs_srv_msg - what a client can send, by kind
 * @RTRS_SRV_MSG_INFO_REQ: a SEND in connection 0's first receive
 * @RTRS_SRV_MSG_IO_REQ: immediate %RTRS_IO_REQ_IMM
 * @RTRS_SRV_MSG_HB: immediate %RTRS_HB_MSG_IMM
 * @RTRS_SRV_MSG_HB_ACK: immediate %RTRS_HB_ACK_IMM
 * @RTRS_SRV_MSG_OTHER: an immediate of another type, or a SEND after the
 *	INFO_REQ: nothing a client sends
 * @RTRS_SRV_MSG_KINDS: how many kinds there are
 */
enum rtrs_srv_msg {
	RTRS_SRV_MSG_INFO_REQ,
	RTRS_SRV_MSG_IO_REQ,
	RTRS_SRV_MSG_HB,
	RTRS_SRV_MSG_HB_ACK,
	RTRS_SRV_MSG_OTHER,
	RTRS_SRV_MSG_KINDS,
};

/**
 * enum rtrs_srv_verdict - what a message does in the state of its path
 * @RTRS_SRV_TAKE: handle it
 * @RTRS_SRV_DROP: ignore it without a word: the path is going anyway
 * @RTRS_SRV_REFUSE: a violation: log it and close the path
 */
enum rtrs_srv_verdict {
	RTRS_SRV_TAKE,
	RTRS_SRV_DROP,
	RTRS_SRV_REFUSE,
};

/**
 * struct rtrs_srv_ctx - what rtrs_srv_open() returns
 * @ops: the user's callbacks
 * @port: port (and IB service ID) listened on
 * @cm_id_ip: IPv6-any (dual-stack) listener, NULL while no device exists
 * @cm_id_ib: AF_IB listener, NULL while no device exists
 * @entry: in the module's list of contexts (rtrs_srv_ctx_list)
 * @mutex: protects @sess_list; taken before &rtrs_srv_sess.paths_mutex
 * @sess_list: &struct rtrs_srv_sess of this context
 *
 * @cm_id_ip, @cm_id_ib and @entry are protected by the module's device
 * mutex (rtrs_srv_dev_mutex).
 */
struct rtrs_srv_ctx {
	struct rtrs_srv_ops	ops;
	u16			port;
	struct rdma_cm_id	*cm_id_ip;
	struct rdma_cm_id	*cm_id_ib;
	struct list_head	entry;
	struct mutex		mutex;		/* sess_list */
	struct list_head	sess_list;
};

/**
 * struct rtrs_srv_sess - a client session: all paths of one paths_uuid
 * @ctx: context the session belongs to
 * @entry: in @ctx->sess_list, under @ctx->mutex
 * @paths_uuid: identifies the session on the wire
 * @refcount: one per path; dropped to zero under @ctx->mutex
 * @paths_mutex: protects @paths_list, @paths_num and the creation of
 *	connections of every path (&rtrs_path.con)
 * @paths_list: &struct rtrs_srv_path of the session
 * @paths_num: entries in @paths_list
 * @ev_mutex: serialises &rtrs_srv_ops.link_ev of the session; protects
 *	@paths_up
 * @paths_up: paths that told the user they are up
 * @priv: the user's pointer (rtrs_srv_set_sess_priv())
 * @version: the protocol version every path of the session speaks, as on
 *	the wire (major << 8 | minor): the one agreed with its first path
 * @queue_depth: number of chunks
 * @chunk_size: bytes per chunk, a power of two
 * @max_io_size: largest data length of a request: @chunk_size less the
 *	header room
 * @max_read_buf: (2.1) largest data length of a READ_BUF, 0 for none: what
 *	the connection responses of the session announce
 * @msg_tags: (2.1) the session's message ids are tagged: its first
 *	connection asked (%RTRS_CONN_REQ_MSG_TAGS), and the connection
 *	responses say so (%RTRS_CONN_RSP_MSG_TAGS)
 * @chunks: the chunks, allocated once for the session's lifetime
 * @owners: for each chunk, the request that owns it and those that wait
 *	for it; allocated with @chunks
 * @pool_user: (2.1) the session's share of the server's data buffers
 * @sysfs_mutex: serialises adding and removing the sysfs directories of
 *	the session and its paths; protects @sysfs
 * @sysfs: the session's sysfs directory, from its first path up
 */
struct rtrs_srv_sess {
	struct rtrs_srv_ctx	*ctx;
	struct list_head	entry;
	uuid_t			paths_uuid;
	refcount_t		refcount;
	struct mutex		paths_mutex;	/* paths, their con[] */
	struct list_head	paths_list;
	unsigned int		paths_num;
	struct mutex		ev_mutex;	/* link_ev, paths_up */
	unsigned int		paths_up;
	void			*priv;
	u16			version;
	u32			queue_depth;
	u32			chunk_size;
	u32			max_io_size;
	u32			max_read_buf;
	bool			msg_tags;
	struct page		**chunks;
	struct rtrs_srv_chunk_owner *owners;
	struct rtrs_srv_pool_user pool_user;
	/* adding and removing sysfs directories; protects @sysfs */
	struct mutex		sysfs_mutex;
	struct rtrs_srv_sess_dev *sysfs;
};

/* Does the session speak protocol 2.1 (or a later minor)? */
static inline bool rtrs_srv_sess_2_1(const struct rtrs_srv_sess *sess)
{
	return (sess->version & 0xff) >= RTRS_PROTO_MINOR_2_1;
}

/*
 * Buffers of packed responses per connection: one filling while the others
 * are posted.  A response that finds them all taken goes out alone.
 */
#define RTRS_SRV_PACKS	4

/**
 * struct rtrs_srv_pack - responses that leave in one SEND
 * @rsp: the responses, the first ones filled
 */
struct rtrs_srv_pack {
	struct rtrs_msg_io_rsp	rsp[RTRS_IO_RSP_PACK_MAX];
};

/**
 * struct rtrs_srv_con - one connection of a server path
 * @c: what the core knows of the connection
 * @recv_cqe: completion of the empty receives that IO requests and
 *	heartbeats consume
 * @rsp_cqe: completion of the last work request of a response, signaled
 *	for one response in @rsp_batch
 * @flush_cqe: completion of the zero-length RDMA WRITE that stands for
 *	the unsignaled responses of a connection gone quiet
 * @write_cqe: completion of the RDMA WRITE of READ data (unsignaled)
 * @reg_cqe: completion of a REG_MR (unsignaled)
 * @inval_cqe: completion of a SEND WITH INVALIDATE (unsignaled)
 * @rsp_wait_lock: protects @rsp_wait_list; taken with interrupts off
 *	since responses may come from any context
 * @rsp_wait_list: &struct rtrs_srv_op whose responses wait for send queue
 *	room (&rtrs_con.sq_wr_avail)
 * @rsp_post_lock: keeps responses posted in the order @rsp_unsig counts
 *	them, and held until a posted response's request is released (see
 *	rtrs_srv_op_take()); taken with interrupts off
 * @rsp_stopped: the path is closing: no response, flush, chunk LOCAL_INV
 *	or (on connection 0) heartbeat ack is posted any more, so none can
 *	follow the drain; under @rsp_post_lock
 * @rsp_unsig: responses posted since the last signaled one or flush
 * @rsp_batch: responses per signaled response; its completion gives back
 *	the send queue room of all of them
 * @rsp_posts: responses posted, counted under @rsp_post_lock
 * @wd_posts: @rsp_posts when the watchdog last looked
 * @flush_n: the responses the flush in flight stands for, 0 when none is
 * @rsp_inflight: signaled responses posted and not completed
 * @rsp_stamp: jiffies of the last response completed, or of the post that
 *	made @rsp_inflight leave 0; for the path's watchdog
 * @pack_cqe: (2.1) completion of a SEND of packed responses, each
 *	signaled
 * @packs: (2.1) %RTRS_SRV_PACKS buffers of packed responses, mapped as
 *	one; NULL when the client did not ask for packed responses
 *	(%RTRS_CONN_REQ_PACKED_RSP)
 * @packs_dma: DMA address of @packs
 * @pack_fill: the buffer being filled; under @rsp_post_lock, as the rest
 * @pack_n: responses in it
 * @pack_sent: buffers posted and not completed, the ones before
 *	@pack_fill
 * @pack_len: responses of each buffer posted
 */
struct rtrs_srv_con {
	struct rtrs_con		c;
	struct ib_cqe		recv_cqe;
	struct ib_cqe		rsp_cqe;
	struct ib_cqe		flush_cqe;
	struct ib_cqe		write_cqe;
	struct ib_cqe		reg_cqe;
	struct ib_cqe		inval_cqe;
	spinlock_t		rsp_wait_lock;	/* rsp_wait_list */
	struct list_head	rsp_wait_list;
	spinlock_t		rsp_post_lock;	/* rsp_unsig, response posts */
	bool			rsp_stopped;
	u32			rsp_unsig;
	u32			rsp_batch;
	u32			rsp_posts;
	u32			wd_posts;
	u32			flush_n;
	atomic_t		rsp_inflight;
	unsigned long		rsp_stamp;
	struct ib_cqe		pack_cqe;
	struct rtrs_srv_pack	*packs;
	dma_addr_t		packs_dma;
	u8			pack_fill;
	u8			pack_n;
	u8			pack_sent;
	u8			pack_len[RTRS_SRV_PACKS];
};

/**
 * struct rtrs_srv_buf - a small message buffer, DMA-mapped
 * @buf: the message
 * @dma: its DMA address on the path's device
 * @size: its length
 * @dir: direction of the mapping
 * @cqe: completion of the one work request that uses it at a time
 */
struct rtrs_srv_buf {
	void			*buf;
	dma_addr_t		dma;
	size_t			size;
	enum dma_data_direction	dir;
	struct ib_cqe		cqe;
};

/**
 * struct rtrs_srv_chunk - a session chunk as one path's device sees it
 * @sg: the chunk, DMA-mapped for the path's device
 * @mr: memory region the client writes the chunk through
 * @inv_cqe: completion of the LOCAL_INV of @mr when a request arrives
 * @inv_con: connection the request came in on, set before the LOCAL_INV
 * @inv_off: header offset of that request
 */
struct rtrs_srv_chunk {
	struct scatterlist	sg;
	struct ib_mr		*mr;
	struct ib_cqe		inv_cqe;
	struct rtrs_srv_con	*inv_con;
	u32			inv_off;
};

/**
 * struct rtrs_srv_path - one path of a client session
 * @s: what the core knows of the path
 * @sess: the session
 * @entry: in @sess->paths_list, under @sess->paths_mutex
 * @state_lock: protects @state; taken with interrupts off
 * @state: &enum rtrs_srv_state
 * @established: the path told the user it is up; under @sess->ev_mutex
 * @named: its INFO_REQ named it; the user may ask its name from then on
 * @always_invalidate: chunks are re-keyed per IO
 * @off_bits: rtrs_imm_off_bits() of the session's queue depth
 * @chunks: @sess->queue_depth entries, mapped for @s.dev
 * @ops: @sess->queue_depth request handles
 * @rkey_msgs: @sess->queue_depth RKEY_RSP messages, one per chunk, sent
 *	with the responses when chunks are re-keyed (always-invalidate only)
 * @rkey_dma: DMA address of @rkey_msgs
 * @srq: the shared receive queue of the path's IO connections (2.1 only)
 * @rsp_msgs: @sess->queue_depth response messages, one per request handle
 *	(2.1 only)
 * @rsp_dma: DMA address of @rsp_msgs
 * @info_req: receive buffer of the INFO_REQ, posted on connection 0
 * @info_rsp: the INFO_RSP
 * @ops_ref: one reference per request handed to the user
 * @ops_done: completed when @ops_ref drops to zero after its kill
 * @hb_cqe: completion of heartbeat writes
 * @close_work: tears the path down
 * @sysfs_work: shows the path in sysfs once it is up
 * @sysfs_tries: attempts of @sysfs_work so far
 * @wd_dwork: the watchdog: closes the path when it is not connected in
 *	time, or when responses stop completing
 * @connect_timeout: seconds the path had to connect, 0 for no limit
 * @sysfs: the path's sysfs directory; under @sess->sysfs_mutex
 * @hca_port: port of @s.dev the path's connections use
 * @stats: requests received, counted per CPU
 */
struct rtrs_srv_path {
	struct rtrs_path	s;
	struct rtrs_srv_sess	*sess;
	struct list_head	entry;
	spinlock_t		state_lock;	/* state */
	enum rtrs_srv_state	state;
	bool			established;
	bool			named;
	bool			always_invalidate;
	unsigned int		off_bits;
	struct rtrs_srv_chunk	*chunks;
	struct rtrs_srv_op	*ops;
	struct rtrs_msg_rkey_rsp *rkey_msgs;
	dma_addr_t		rkey_dma;
	struct rtrs_srv_srq	*srq;
	struct rtrs_msg_io_rsp	*rsp_msgs;
	dma_addr_t		rsp_dma;
	struct rtrs_srv_buf	info_req;
	struct rtrs_srv_buf	info_rsp;
	struct percpu_ref	ops_ref;
	struct completion	ops_done;
	struct ib_cqe		hb_cqe;
	struct work_struct	close_work;
	struct delayed_work	sysfs_work;
	unsigned int		sysfs_tries;
	struct delayed_work	wd_dwork;
	unsigned int		connect_timeout;
	struct device		*sysfs;
	u32			hca_port;
	struct rtrs_srv_cpu_stats __percpu *stats;
};

static inline struct rtrs_srv_con *to_srv_con(struct rtrs_con *c)
{
	return container_of(c, struct rtrs_srv_con, c);
}

static inline struct rtrs_srv_path *to_srv_path(struct rtrs_path *s)
{
	return container_of(s, struct rtrs_srv_path, s);
}

static inline struct rtrs_srv_path *con_to_path(struct rtrs_srv_con *con)
{
	return to_srv_path(con->c.path);
}

/*
 * Connection @cid of a 2.1 path: connection 0 carries the path's own
 * messages only (INFO, heartbeats) and takes no requests; the others
 * receive from the device's shared queue, @path->srq, which only a 2.1
 * path holds.  A 2.0 path has no shared queue: every one of its
 * connections takes requests, into receives of its own.
 */
static inline bool rtrs_srv_con_admin_2_1(const struct rtrs_srv_path *path,
					  unsigned int cid)
{
	return path->srq && !cid;
}

static inline bool rtrs_srv_con_on_srq(const struct rtrs_srv_path *path,
				       unsigned int cid)
{
	return path->srq && cid;
}

/**
 * rtrs_srv_op_take() - take the handle of a request that has just come
 * @op: handle of the request's id (2.1) or chunk (2.0) on its path
 *
 * The request before on the same id releases the handle right after its
 * response is posted, with its connection's @rsp_post_lock still held
 * (rtrs_srv_post_rsp_wrs()).  The client may have that response, and
 * this request may be here, before the release: the device can send the
 * response from another CPU at once, and a virtual CPU can stop between
 * the post and the release for as long as its host likes.  So a handle
 * found busy is tried again once that lock has been taken and dropped:
 * by then a posted response has released it.
 *
 * Context: any context; not under a connection's @rsp_post_lock.
 * Return: true when the handle is the request's; false when another
 * request still holds it, one whose response is not posted.
 */
static inline bool rtrs_srv_op_take(struct rtrs_srv_op *op)
{
	struct rtrs_srv_con *con;
	unsigned long flags;

	if (!test_and_set_bit(0, &op->busy))
		return true;
	con = READ_ONCE(op->con);
	if (!con)
		return false;
	spin_lock_irqsave(&con->rsp_post_lock, flags);
	spin_unlock_irqrestore(&con->rsp_post_lock, flags);
	return !test_and_set_bit(0, &op->busy);
}

/* Connections a path may have, as mainline bounds them. */
#define RTRS_SRV_MAX_CONS	4096

/*
 * Responses in flight on a connection that has completed none for this
 * long mean a stuck QP (see rtrs_srv_wd_work()).
 */
#define RTRS_SRV_STALL_MS	15000

/* Upper bound of connect_timeout_sec, a day. */
#define RTRS_SRV_CONNECT_TIMEOUT_MAX	86400U

/*
 * A session's sysfs directory may still be there when the client, having
 * closed the session, opens one of the same name: its last path is being
 * torn down.  Showing the new one is tried again this often, this long.
 */
#define RTRS_SRV_SYSFS_RETRY_MS	100
#define RTRS_SRV_SYSFS_TRIES	100

/*
 * Work requests one response may take: data, REG_MR (after a LOCAL_INV
 * where local operations may run twice), invalidate, and the status
 * itself.
 */
#define RTRS_SRV_RSP_WRS	5
/*
 * Work requests one response of a 2.1 IO connection posts: the READ
 * data's RDMA WRITE and the SEND (WITH INVALIDATE), or a READ_BUF's one
 * RDMA WRITE WITH IMMEDIATE; a pack is one SEND for responses that each
 * count as one.
 */
#define RTRS_SRV_RSP_WRS_2_1	2
/*
 * Connection 0 of a 2.1 session carries the path's own messages only,
 * whatever the queue depth: a 2.1 client sends its requests on the IO
 * connections.  Receives for the client's heartbeats and acks, which come
 * one per heartbeat interval; sends for the INFO_RSP, our heartbeat, an
 * ack for each of those receives, and room to spare.
 */
#define RTRS_SRV_CON0_RECVS_2_1	8
#define RTRS_SRV_CON0_SENDS_2_1	16
/* Most responses one signaled response stands for. */
#define RTRS_SRV_RSP_BATCH	16

/**
 * struct rtrs_srv_io_hdr - the header of an IO request, checked
 * @dir: READ or WRITE
 * @usr_len: length of the user message before the header
 * @data_len: length of the data before the user message
 * @need_inval: a READ whose client asked for SEND WITH INVALIDATE
 * @sg_cnt: descriptors of a READ, 0 or 1; 0 for a WRITE
 * @desc: the descriptor of a READ when @sg_cnt is 1
 */
struct rtrs_srv_io_hdr {
	int			dir;
	u32			usr_len;
	u32			data_len;
	bool			need_inval;
	u16			sg_cnt;
	struct rtrs_sg_desc	desc;
};

/**
 * struct rtrs_srv_limits_2_1 - what a 2.1 path allows a request
 * @queue_depth: requests in flight, and so message ids, of the path
 * @max_io_size: largest data length of a READ_REQ or WRITE_REQ
 * @max_hdr_size: room for a request's header and user message; an inline
 *	WRITE's data starts at this offset of the SEND
 * @max_inline_size: largest data length of a WRITE_INLINE
 * @max_read_buf: largest data length of a READ_BUF; 0: none is taken
 * @tags: message ids are tagged (%RTRS_CONN_RSP_MSG_TAGS)
 *
 * The values the server announced in struct rtrs_msg_conn_rsp_2_1.
 */
struct rtrs_srv_limits_2_1 {
	u32			queue_depth;
	u32			max_io_size;
	u32			max_hdr_size;
	u32			max_inline_size;
	u32			max_read_buf;
	bool			tags;
};

/**
 * struct rtrs_srv_io_2_1 - a 2.1 request, checked
 * @type: %RTRS_MSG_READ_REQ, %RTRS_MSG_WRITE_REQ, %RTRS_MSG_READ_BUF or
 *	%RTRS_MSG_WRITE_INLINE
 * @msg_id: the client's id of the request, below the queue depth; its
 *	slot where tagged
 * @tag: the tag of a tagged message id, else 0
 * @usr_len: length of the user message right after the header
 * @data_len: length of the data: the memory region's for a READ_REQ,
 *	WRITE_REQ or READ_BUF, the inline data's for a WRITE_INLINE
 * @addr: address of the client's memory region; 0 for a WRITE_INLINE
 * @rkey: rkey of the client's memory region; 0 for a WRITE_INLINE
 */
struct rtrs_srv_io_2_1 {
	u16			type;
	u32			msg_id;
	u32			tag;
	u32			usr_len;
	u32			data_len;
	u64			addr;
	u32			rkey;
};

/*
 * The server's files, from the top down; each calls only the ones below
 * it.
 */

/* rtrs-srv-path.c: sessions, paths, connections and their CM events. */
extern struct rtrs_ib_dev_pool rtrs_srv_dev_pool;
int rtrs_srv_check_params(void);
int rtrs_srv_cm_handler(struct rdma_cm_id *cm_id, struct rdma_cm_event *ev);
void rtrs_srv_close_sessions(struct rtrs_srv_ctx *ctx,
			     struct ib_device *ib_dev);

/* sysfs/rtrs-srv-sysfs.c: the sysfs directories of sessions and paths. */
int rtrs_srv_sysfs_init(void);
void rtrs_srv_sysfs_exit(void);
int rtrs_srv_sysfs_path_add(struct rtrs_srv_path *path);
void rtrs_srv_sysfs_path_del(struct rtrs_srv_path *path);
void rtrs_srv_sysfs_sess_del(struct rtrs_srv_sess *sess);

/* rtrs-srv-info.c: the INFO exchange that brings a path up. */
int rtrs_srv_alloc_info_bufs(struct rtrs_srv_path *path);
void rtrs_srv_free_info_bufs(struct rtrs_srv_path *path);
int rtrs_srv_post_info_recv(struct rtrs_srv_path *path,
			    struct rtrs_srv_con *con);
void rtrs_srv_path_down(struct rtrs_srv_path *path);

/* rtrs-srv-recv.c: requests of protocol 2.1, from receive to the user. */
void rtrs_srv_rbuf_done(struct ib_cq *cq, struct ib_wc *wc);
void rtrs_srv_init_ops_2_1(struct rtrs_srv_path *path);
void rtrs_srv_end_waiting_2_1(struct rtrs_srv_path *path);

/* rtrs-srv-io.c: requests and their responses. */
int rtrs_srv_alloc_ops(struct rtrs_srv_path *path);
void rtrs_srv_free_ops(struct rtrs_srv_path *path);
void rtrs_srv_init_con_cqes(struct rtrs_srv_con *con);
int rtrs_srv_alloc_packs(struct rtrs_srv_con *con);
void rtrs_srv_free_packs(struct rtrs_srv_con *con);
int rtrs_srv_post_recvs(struct rtrs_srv_con *con, unsigned int n);
void rtrs_srv_drop_waiting(struct rtrs_srv_con *con);
void rtrs_srv_end_handed(struct rtrs_srv_path *path);
void rtrs_srv_end_orphans(struct rtrs_srv_path *path);
void rtrs_srv_stop_responses(struct rtrs_srv_con *con);
void rtrs_srv_op_end(struct rtrs_srv_path *path, struct rtrs_srv_op *op);
void rtrs_srv_op_release_2_1(struct rtrs_srv_path *path,
			     struct rtrs_srv_op *op);
void rtrs_srv_op_end_2_1(struct rtrs_srv_path *path, struct rtrs_srv_op *op);
void rtrs_srv_read_buf_sent(struct rtrs_srv_con *con);
void rtrs_srv_send_hb_ack(struct rtrs_srv_path *path);
bool rtrs_srv_wc_ok(struct rtrs_srv_path *path, struct ib_wc *wc,
		    const char *what);
void rtrs_srv_wd_work(struct work_struct *work);
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
void rtrs_srv_io_fault_init(void);
void rtrs_srv_io_fault_exit(void);
#else
static inline void rtrs_srv_io_fault_init(void) {}
static inline void rtrs_srv_io_fault_exit(void) {}
#endif

/* rtrs-srv-chunk.c: who owns each chunk. */
void rtrs_srv_free_chunks(struct rtrs_srv_sess *sess);
int rtrs_srv_path_chunks(struct rtrs_srv_path *path);
void rtrs_srv_unmap_chunks(struct rtrs_srv_path *path);
struct ib_reg_wr *rtrs_srv_reg_chunks_wrs(struct rtrs_srv_path *path,
					  struct ib_cqe *cqe);
void rtrs_srv_fill_chunk_descs(struct rtrs_srv_path *path,
			       struct rtrs_sg_desc *desc);
bool rtrs_srv_chunk_take(struct rtrs_srv_sess *sess, struct rtrs_srv_op *op);
void rtrs_srv_chunk_give_up(struct rtrs_srv_sess *sess,
			    struct rtrs_srv_op *op);
bool rtrs_srv_chunk_unwait(struct rtrs_srv_sess *sess, struct rtrs_srv_op *op);

/* rtrs-srv-state.c: what happens to a path. */
extern struct workqueue_struct *rtrs_srv_wq;
enum rtrs_srv_state rtrs_srv_path_state(struct rtrs_srv_path *path);
bool rtrs_srv_change_state(struct rtrs_srv_path *path,
			   enum rtrs_srv_state old, enum rtrs_srv_state new);
void rtrs_srv_close_path(struct rtrs_srv_path *path);
__printf(2, 3)
void rtrs_srv_violation(struct rtrs_srv_path *path, const char *fmt, ...);
void rtrs_srv_post_failed(struct rtrs_srv_path *path, const char *what,
			  int err);
bool rtrs_srv_admit(struct rtrs_srv_path *path, enum rtrs_srv_msg msg,
		    u32 imm, unsigned int cid);

/* rtrs-srv-validate.c: checks of what the client sends. */
int rtrs_srv_check_conn_req(const void *data, size_t len);
int rtrs_srv_check_info_req(const void *buf, size_t len, char *name,
			    size_t size);
enum rtrs_srv_msg rtrs_srv_msg_of_imm(u32 imm, bool sess_2_1);
enum rtrs_srv_verdict rtrs_srv_msg_verdict(enum rtrs_srv_msg msg,
					   enum rtrs_srv_state state);
const char *rtrs_srv_msg_name(enum rtrs_srv_msg msg);
int rtrs_srv_check_io_req(u32 payload, unsigned int off_bits, u32 queue_depth,
			  u32 chunk_size, u32 *id, u32 *off);
int rtrs_srv_check_io_hdr(const void *chunk, u32 chunk_size, u32 off,
			  u32 max_io, struct rtrs_srv_io_hdr *io);
int rtrs_srv_check_io_req_2_1(const void *buf, size_t len,
			      const struct rtrs_srv_limits_2_1 *lim,
			      struct rtrs_srv_io_2_1 *io);

/* rtrs-srv-srq.c: the shared receive queues of 2.1, one per device. */
int rtrs_srv_srq_post(struct rtrs_srv_rbuf *rb);
struct rtrs_srv_srq *
rtrs_srv_srq_get(struct rtrs_ib_dev *dev,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc));
void rtrs_srv_srq_put(struct rtrs_srv_srq *srq);

/* rtrs-srv-pool.c: the data buffers, shared fairly by the sessions. */
extern struct rtrs_srv_pool rtrs_srv_buf_pool;
int rtrs_srv_buf_pool_init(void);
void rtrs_srv_buf_pool_exit(void);
int rtrs_srv_pool_init(struct rtrs_srv_pool *pool, size_t limit);
void rtrs_srv_pool_destroy(struct rtrs_srv_pool *pool);
void rtrs_srv_pool_user_init(struct rtrs_srv_pool *pool,
			     struct rtrs_srv_pool_user *user);
void rtrs_srv_pool_user_exit(struct rtrs_srv_pool_user *user);
bool __must_check rtrs_srv_pool_get(struct rtrs_srv_pool_req *req);
void rtrs_srv_pool_put(struct rtrs_srv_pool_req *req);
bool rtrs_srv_pool_cancel(struct rtrs_srv_pool_req *req);
void rtrs_srv_pool_usage(struct rtrs_srv_pool *pool,
			 struct rtrs_srv_pool_stats *st);

#endif /* RTRS_SRV_H */
