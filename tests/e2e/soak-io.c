// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * soak-io: verified IO on a block device for the soak scenario.
 *
 *   soak-io DEVICE THREADS SLOTS STOPFILE
 *
 * Each thread owns SLOTS slots of 64 KiB, its own part of DEVICE, and
 * until STOPFILE exists writes a random slot with O_DIRECT, 4 to 64 KiB
 * from its start, each 512-byte sector filled from (slot, generation,
 * sector); half of the writes are read back at once and compared.  A
 * write counts as acknowledged only when pwrite() returned its whole
 * length; the slot then expects that generation.  A failed write leaves
 * the slot unknown (the device may hold old, new or torn data) until a
 * later write of it is acknowledged.  After STOPFILE, every slot with an
 * acknowledged write is read back and compared: each acknowledged write
 * that was not overwritten by a later acknowledged one is checked.
 *
 * Every IO error goes to stdout as "E <boot time> <op> <slot> <errno>",
 * every mismatch as "V <boot time> <op> <slot> <sector>"; the last line
 * is the summary ("summary key value ..."), all in bytes and counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOT_SZ		(64 * 1024)
#define SECT		512

struct slot {
	unsigned int gen;	/* generation of the last acknowledged write */
	unsigned int len;	/* its length; 0: nothing known */
};

struct counts {
	unsigned long long w_sub, w_sub_b, w_ack, w_ack_b;
	unsigned long long r_sub, r_sub_b, r_ok, r_ok_b;
	unsigned long long io_err, verify_err, final_slots, final_b;
};

struct worker {
	pthread_t tid;
	int idx;
	struct slot *slots;
	struct counts c;
	unsigned long long rnd;
	unsigned char *wbuf, *rbuf, *ebuf;
};

static int fd;
static int nslots;
static const char *stopfile;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned long long xorshift(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* The content of slot @slot at generation @gen, @len bytes. */
static void fill(unsigned char *buf, unsigned int slot, unsigned int gen, unsigned int len)
{
	unsigned int s, i;
	unsigned long long r, *p;

	for (s = 0; s < len / SECT; s++) {
		r = ((unsigned long long)slot << 40) ^ ((unsigned long long)gen << 12) ^ s ^
		    0x9e3779b97f4a7c15ull;
		p = (unsigned long long *)(buf + s * SECT);
		p[0] = slot;
		p[1] = gen;
		p[2] = s;
		for (i = 3; i < SECT / 8; i++)
			p[i] = xorshift(&r);
	}
}

static void report(char kind, const char *op, int slot, long val)
{
	pthread_mutex_lock(&out_lock);
	printf("%c %.3f %s %d %ld\n", kind, now(), op, slot, val);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static off_t slot_off(struct worker *w, int i)
{
	return ((off_t)w->idx * nslots + i) * SLOT_SZ;
}

/* Read back @len bytes of slot @i and compare with generation @gen. */
static void read_check(struct worker *w, int i, unsigned int gen, unsigned int len,
		       const char *op)
{
	ssize_t n;
	unsigned int s;

	w->c.r_sub++;
	w->c.r_sub_b += len;
	n = pread(fd, w->rbuf, len, slot_off(w, i));
	if (n != (ssize_t)len) {
		w->c.io_err++;
		report('E', op, i, n < 0 ? errno : 0);
		return;
	}
	w->c.r_ok++;
	w->c.r_ok_b += len;
	fill(w->ebuf, w->idx * nslots + i, gen, len);
	for (s = 0; s < len / SECT; s++) {
		if (memcmp(w->rbuf + s * SECT, w->ebuf + s * SECT, SECT)) {
			w->c.verify_err++;
			report('V', op, i, s);
			return;
		}
	}
}

static void one_write(struct worker *w)
{
	int i = xorshift(&w->rnd) % nslots;
	unsigned int len = (xorshift(&w->rnd) % (SLOT_SZ / 4096) + 1) * 4096;
	unsigned int gen = w->slots[i].gen + 1;
	ssize_t n;

	fill(w->wbuf, w->idx * nslots + i, gen, len);
	w->c.w_sub++;
	w->c.w_sub_b += len;
	n = pwrite(fd, w->wbuf, len, slot_off(w, i));
	if (n != (ssize_t)len) {
		w->c.io_err++;
		w->slots[i].gen = gen;
		w->slots[i].len = 0;
		report('E', "write", i, n < 0 ? errno : 0);
		return;
	}
	w->c.w_ack++;
	w->c.w_ack_b += len;
	w->slots[i].gen = gen;
	w->slots[i].len = len;
	if (xorshift(&w->rnd) & 1)
		read_check(w, i, gen, len, "read");
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	unsigned int k = 0;
	int i;

	while (++k % 16 || access(stopfile, F_OK))
		one_write(w);
	for (i = 0; i < nslots; i++) {
		if (!w->slots[i].len)
			continue;
		w->c.final_slots++;
		w->c.final_b += w->slots[i].len;
		read_check(w, i, w->slots[i].gen, w->slots[i].len, "final");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct counts t = { 0 };
	struct worker *ws;
	int nthreads, i;

	if (argc != 5) {
		fprintf(stderr, "usage: soak-io DEVICE THREADS SLOTS STOPFILE\n");
		return 2;
	}
	nthreads = atoi(argv[2]);
	nslots = atoi(argv[3]);
	stopfile = argv[4];
	fd = open(argv[1], O_RDWR | O_DIRECT);
	if (fd < 0 || nthreads < 1 || nslots < 1) {
		perror(argv[1]);
		return 2;
	}
	ws = calloc(nthreads, sizeof(*ws));
	for (i = 0; i < nthreads; i++) {
		ws[i].idx = i;
		ws[i].rnd = 0x2545f4914f6cdd1dull * (i + 1);
		ws[i].slots = calloc(nslots, sizeof(struct slot));
		if (posix_memalign((void **)&ws[i].wbuf, 4096, SLOT_SZ) ||
		    posix_memalign((void **)&ws[i].rbuf, 4096, SLOT_SZ) ||
		    posix_memalign((void **)&ws[i].ebuf, 4096, SLOT_SZ) ||
		    !ws[i].slots)
			return 2;
		pthread_create(&ws[i].tid, NULL, worker_fn, &ws[i]);
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(ws[i].tid, NULL);
		t.w_sub += ws[i].c.w_sub;
		t.w_sub_b += ws[i].c.w_sub_b;
		t.w_ack += ws[i].c.w_ack;
		t.w_ack_b += ws[i].c.w_ack_b;
		t.r_sub += ws[i].c.r_sub;
		t.r_sub_b += ws[i].c.r_sub_b;
		t.r_ok += ws[i].c.r_ok;
		t.r_ok_b += ws[i].c.r_ok_b;
		t.io_err += ws[i].c.io_err;
		t.verify_err += ws[i].c.verify_err;
		t.final_slots += ws[i].c.final_slots;
		t.final_b += ws[i].c.final_b;
	}
	printf("summary w_sub %llu w_sub_b %llu w_ack %llu w_ack_b %llu",
	       t.w_sub, t.w_sub_b, t.w_ack, t.w_ack_b);
	printf(" r_sub %llu r_sub_b %llu r_ok %llu r_ok_b %llu",
	       t.r_sub, t.r_sub_b, t.r_ok, t.r_ok_b);
	printf(" io_err %llu verify_err %llu final_slots %llu final_b %llu\n",
	       t.io_err, t.verify_err, t.final_slots, t.final_b);
	return 0;
}
