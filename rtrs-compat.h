/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs: RDMA transport, what differs between the kernels it builds on.
 *
 * One source tree builds on Linux 6.1 and 6.12.  Kbuild reads each
 * difference off the headers it builds against and says which side of it
 * they are on with an RTRS_* macro; each is served here, once, by a helper
 * the rest of the code calls.
 */
#ifndef RTRS_COMPAT_H
#define RTRS_COMPAT_H

/*
 * rtrs_assign_str() - copy the string @src into the trace event's field
 * @dst, declared as __string(@dst, @src).  Since 6.10 __assign_str()
 * takes the field alone and copies from what its declaration names.
 */
#ifdef RTRS_ASSIGN_STR_FIELD_ONLY
#define rtrs_assign_str(dst, src)	__assign_str(dst)
#else
#define rtrs_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* RTRS_COMPAT_H */
