// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * rtrs: RDMA transport, server: the tracepoints' definitions.
 */
#define CREATE_TRACE_POINTS
#include "trace/srv.h"
