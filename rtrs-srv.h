/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, server internals that a user may see.
 *
 * Why this file exists: rnbd's server tracepoint (drivers/block/rnbd in
 * Linux) includes mainline's private server header, which has this file's
 * name, and reads id->dir from the struct rtrs_srv_op that the public header
 * keeps opaque.  Completing the struct here lets rnbd build unmodified.  Users other
 * than that tracepoint should treat struct rtrs_srv_op as opaque.
 */
#ifndef RTRS_SRV_H
#define RTRS_SRV_H

/**
 * struct rtrs_srv_op - one client request being served
 * @dir: READ when the client reads from the server (the user fills the
 *	data area), WRITE when the client wrote into it.  Set before
 *	&rtrs_srv_ops.rdma_ev is called; constant until the answer.
 *
 * The handle &rtrs_srv_ops.rdma_ev gives the user and the user gives back
 * to rtrs_srv_resp_rdma().  The server's state of the request joins @dir
 * here as the IO path is written.
 */
struct rtrs_srv_op {
	int	dir;
};

#endif /* RTRS_SRV_H */
