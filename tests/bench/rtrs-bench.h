/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rtrs benchmark users: the user message the benchmark client sends with
 * every IO.  The benchmark server responds to each IO at once, without
 * touching its data, so what is measured is the transport.
 */
#ifndef RTRS_BENCH_H
#define RTRS_BENCH_H

#include <linux/types.h>

#define RTRS_BENCH_MAGIC	0x52544248	/* "RTBH" */
#define RTRS_BENCH_PORT		1236

/**
 * struct rtrs_bench_msg - user message of a benchmark IO
 * @magic: %RTRS_BENCH_MAGIC
 * @len: data length of the IO
 */
struct rtrs_bench_msg {
	__le32	magic;
	__le32	len;
};

#endif /* RTRS_BENCH_H */
