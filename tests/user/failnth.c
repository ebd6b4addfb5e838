// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * failnth: perform one operation with the N-th fault point of this thread
 * armed (/proc/thread-self/fail-nth, see the kernel's fault-injection
 * documentation), and say whether a fault was injected within it.
 *
 *   failnth N load MODULE.ko [PARAMS]   finit_module() of MODULE.ko
 *   failnth N write FILE STRING         one write() of STRING to FILE
 *
 * Prints "rc=<errno, 0 on success> injected=<0|1> points=<P>".  fail-nth
 * reads back 0 once the armed point fired; otherwise the operation went
 * through P < N fault points, which a huge N counts.  N = 0 arms nothing (for faults armed some
 * other way).  Exits 0 when the report was printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fail_nth_open(void)
{
	int fd = open("/proc/thread-self/fail-nth", O_RDWR);

	if (fd < 0)
		perror("/proc/thread-self/fail-nth");
	return fd;
}

static int fail_nth_arm(int fd, const char *n)
{
	if (write(fd, n, strlen(n)) != (ssize_t)strlen(n)) {
		perror("arm fail-nth");
		return -1;
	}
	return 0;
}

/* What is left of the N armed: 0 once the point fired; -1 on error. */
static long fail_nth_left(int fd)
{
	char buf[32] = "";
	ssize_t len = pread(fd, buf, sizeof(buf) - 1, 0);

	if (len <= 0) {
		perror("read fail-nth");
		return -1;
	}
	return atol(buf);
}

int main(int argc, char **argv)
{
	int fd, ffd, rc = 0;
	const char *params = "";
	long n, left = 0;

	n = argc > 1 ? atol(argv[1]) : -1;
	if (argc < 4 || n < 0 ||
	    (strcmp(argv[2], "load") && strcmp(argv[2], "write")) ||
	    (!strcmp(argv[2], "write") && argc != 5)) {
		fprintf(stderr, "usage: %s N load MODULE.ko [PARAMS]\n"
				"       %s N write FILE STRING\n",
			argv[0], argv[0]);
		return 2;
	}
	if (!strcmp(argv[2], "load")) {
		fd = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (argc > 4)
			params = argv[4];
	} else {
		fd = open(argv[3], O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	ffd = fail_nth_open();
	if (ffd < 0 || (n && fail_nth_arm(ffd, argv[1])))
		return 1;
	/* The one operation under test; nothing else between arm and read. */
	if (!strcmp(argv[2], "load")) {
		if (syscall(SYS_finit_module, fd, params, 0))
			rc = errno;
	} else {
		if (write(fd, argv[4], strlen(argv[4])) < 0)
			rc = errno;
	}
	if (n) {
		left = fail_nth_left(ffd);
		/* Disarm, so that nothing after the operation can fail. */
		fail_nth_arm(ffd, "0");
	}
	if (left < 0)
		return 1;
	printf("rc=%d injected=%d points=%ld\n", rc, n && !left,
	       n && left ? n - left : 0);
	return 0;
}
