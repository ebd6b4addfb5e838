/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A stand-in for the part of KUnit that the rtrs-session suite uses, for
 * kernels built without KUnit, as Debian's stock kernels are: there the
 * same suite builds as a plain module and runs when loaded.  As under
 * KUnit, each case runs in a kthread of its own, a failed assertion ends
 * that thread (kthread_complete_and_exit(), as KUnit's try-catch does),
 * what a case allocated with kunit_kzalloc() and the like is freed after
 * it, and the suite's KTAP is read from debugfs, kunit/<suite>/results.
 * The values of a failed comparison are shown as integers.
 *
 * Static functions in a header: one test module includes it, once.
 */
#ifndef RTRS_KUNIT_LITE_H
#define RTRS_KUNIT_LITE_H

#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

struct kunit {
	const char *name;
	bool failed;
	struct completion done;
	void (*run)(struct kunit *test);
	spinlock_t lock;		/* the list below */
	struct list_head allocs;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

#define KUNIT_CASE(fn)	{ .run_case = fn, .name = #fn }

struct kunit_suite {
	const char *name;
	struct kunit_case *test_cases;
};

/* The suite's KTAP, as debugfs shows it. */
#define KUNIT_LITE_LOG_SIZE	(64 * 1024)
/* Room kept for the result lines once messages have filled the log. */
#define KUNIT_LITE_LOG_SPARE	(4 * 1024)

static struct {
	char *buf;
	size_t len;
	struct mutex lock;	/* buf, len */
	struct dentry *dir;
} kunit_lite_log;

static __printf(2, 3) void kunit_lite_printf(bool result, const char *fmt,
					     ...)
{
	size_t room;
	va_list args;

	mutex_lock(&kunit_lite_log.lock);
	room = KUNIT_LITE_LOG_SIZE - kunit_lite_log.len;
	if (!result)
		room = room > KUNIT_LITE_LOG_SPARE ?
		       room - KUNIT_LITE_LOG_SPARE : 0;
	if (kunit_lite_log.buf && room) {
		va_start(args, fmt);
		kunit_lite_log.len += vscnprintf(kunit_lite_log.buf +
						 kunit_lite_log.len, room,
						 fmt, args);
		va_end(args);
	}
	mutex_unlock(&kunit_lite_log.lock);
}

static __printf(2, 0) void kunit_lite_say(struct kunit *test, const char *fmt,
			   va_list args)
{
	char msg[160];

	vscnprintf(msg, sizeof(msg), fmt, args);
	if (!msg[0])
		return;
	kunit_lite_printf(false, "        # %s\n", msg);
	pr_info("    # %s: %s\n", test->name, msg);
}

/* A message of a case: in the KTAP and in the kernel log. */
static __printf(2, 3) void kunit_info(struct kunit *test, const char *fmt,
				      ...)
{
	va_list args;

	va_start(args, fmt);
	kunit_lite_say(test, fmt, args);
	va_end(args);
}

static __noreturn void kunit_lite_abort(struct kunit *test)
{
	kthread_complete_and_exit(&test->done, -EFAULT);
}

/* Mark the case failed at @line, saying @what and the user's message. */
static __printf(4, 0) void kunit_lite_failed(struct kunit *test, int line,
					     const char *what, const char *fmt,
					     va_list args)
{
	WRITE_ONCE(test->failed, true);
	kunit_info(test, "line %d: %s", line, what);
	kunit_lite_say(test, fmt, args);
}

/*
 * A check at @line of the case failed unless @ok: the case is marked
 * failed, with @what and the user's message (@fmt, if not empty); an
 * assertion then ends the case.
 */
static __printf(6, 7) void kunit_lite_check(struct kunit *test, bool assert,
					    bool ok, int line,
					    const char *what,
					    const char *fmt, ...)
{
	va_list args;

	if (ok)
		return;
	va_start(args, fmt);
	kunit_lite_failed(test, line, what, fmt, args);
	va_end(args);
	if (assert)
		kunit_lite_abort(test);
}

enum kunit_lite_op { KUNIT_LITE_EQ, KUNIT_LITE_NE, KUNIT_LITE_GT, KUNIT_LITE_GE };

/* A comparison of two integers, both shown when it fails. */
static __printf(9, 10) void kunit_lite_binary(struct kunit *test, bool assert,
					      long long left,
					      enum kunit_lite_op op,
					      long long right, int line,
					      const char *left_text,
					      const char *right_text,
					      const char *fmt, ...)
{
	static const char * const ops[] = { "==", "!=", ">", ">=" };
	char what[160];
	va_list args;
	bool ok;

	switch (op) {
	case KUNIT_LITE_EQ:
		ok = left == right;
		break;
	case KUNIT_LITE_NE:
		ok = left != right;
		break;
	case KUNIT_LITE_GT:
		ok = left > right;
		break;
	default:
		ok = left >= right;
		break;
	}
	if (ok)
		return;
	scnprintf(what, sizeof(what), "expected %s %s %s: %s == %lld, %s == %lld",
		  left_text, ops[op], right_text, left_text, left, right_text,
		  right);
	va_start(args, fmt);
	kunit_lite_failed(test, line, what, fmt, args);
	va_end(args);
	if (assert)
		kunit_lite_abort(test);
}

#define KUNIT_LITE_CHECK_MSG(test, assert, cond, what, fmt, ...)	\
	kunit_lite_check(test, assert, !!(cond), __LINE__, what, fmt,	\
			 ##__VA_ARGS__)
#define KUNIT_LITE_CHECK(test, assert, cond, what)			\
	KUNIT_LITE_CHECK_MSG(test, assert, cond, what, "%s", "")
#define KUNIT_LITE_BINARY_MSG(test, assert, l, op, r, fmt, ...)		\
	kunit_lite_binary(test, assert, (long long)(l), KUNIT_LITE_##op,	\
			  (long long)(r), __LINE__, #l, #r, fmt,		\
			  ##__VA_ARGS__)
#define KUNIT_LITE_BINARY(test, assert, l, op, r)			\
	KUNIT_LITE_BINARY_MSG(test, assert, l, op, r, "%s", "")

#define KUNIT_EXPECT_EQ(t, l, r)	KUNIT_LITE_BINARY(t, false, l, EQ, r)
#define KUNIT_EXPECT_NE(t, l, r)	KUNIT_LITE_BINARY(t, false, l, NE, r)
#define KUNIT_EXPECT_GT(t, l, r)	KUNIT_LITE_BINARY(t, false, l, GT, r)
#define KUNIT_EXPECT_GE(t, l, r)	KUNIT_LITE_BINARY(t, false, l, GE, r)
#define KUNIT_EXPECT_EQ_MSG(t, l, r, fmt, ...)				\
	KUNIT_LITE_BINARY_MSG(t, false, l, EQ, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(t, l, r, fmt, ...)				\
	KUNIT_LITE_BINARY_MSG(t, false, l, NE, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_EQ(t, l, r)	KUNIT_LITE_BINARY(t, true, l, EQ, r)
#define KUNIT_ASSERT_EQ_MSG(t, l, r, fmt, ...)				\
	KUNIT_LITE_BINARY_MSG(t, true, l, EQ, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GT_MSG(t, l, r, fmt, ...)				\
	KUNIT_LITE_BINARY_MSG(t, true, l, GT, r, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_TRUE(t, c)						\
	KUNIT_LITE_CHECK(t, false, c, "expected " #c " to be true")
#define KUNIT_EXPECT_FALSE(t, c)					\
	KUNIT_LITE_CHECK(t, false, !(c), "expected " #c " to be false")
#define KUNIT_ASSERT_FALSE(t, c)					\
	KUNIT_LITE_CHECK(t, true, !(c), "expected " #c " to be false")
#define KUNIT_ASSERT_FALSE_MSG(t, c, fmt, ...)				\
	KUNIT_LITE_CHECK_MSG(t, true, !(c), "expected " #c " to be false", \
			     fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NULL(t, p)						\
	KUNIT_LITE_CHECK(t, false, !(p), "expected " #p " to be NULL")
#define KUNIT_EXPECT_NOT_NULL(t, p)					\
	KUNIT_LITE_CHECK(t, false, (p), "expected " #p " not to be NULL")
#define KUNIT_ASSERT_NOT_NULL(t, p)					\
	KUNIT_LITE_CHECK(t, true, (p), "expected " #p " not to be NULL")
#define KUNIT_FAIL(t, fmt, ...)						\
	KUNIT_LITE_CHECK_MSG(t, false, false, "failed", fmt, ##__VA_ARGS__)

/* Allocations of a case, freed when it ends. */
struct kunit_lite_alloc {
	struct list_head node;
	u8 data[] __aligned(ARCH_KMALLOC_MINALIGN);
};

static void *kunit_kmalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	struct kunit_lite_alloc *a;

	a = kmalloc(struct_size(a, data, size), gfp);
	if (!a)
		return NULL;
	spin_lock(&test->lock);
	list_add(&a->node, &test->allocs);
	spin_unlock(&test->lock);
	return a->data;
}

static void *kunit_kzalloc(struct kunit *test, size_t size, gfp_t gfp)
{
	return kunit_kmalloc(test, size, gfp | __GFP_ZERO);
}

static void *kunit_kmalloc_array(struct kunit *test, size_t n, size_t size,
				 gfp_t gfp)
{
	size_t bytes;

	if (check_mul_overflow(n, size, &bytes))
		return NULL;
	return kunit_kmalloc(test, bytes, gfp);
}

static void *kunit_kcalloc(struct kunit *test, size_t n, size_t size,
			   gfp_t gfp)
{
	return kunit_kmalloc_array(test, n, size, gfp | __GFP_ZERO);
}

static void kunit_kfree(struct kunit *test, const void *ptr)
{
	struct kunit_lite_alloc *a;

	if (!ptr)
		return;
	a = container_of((void *)ptr, struct kunit_lite_alloc, data);
	spin_lock(&test->lock);
	list_del(&a->node);
	spin_unlock(&test->lock);
	kfree(a);
}

static void kunit_lite_free_all(struct kunit *test)
{
	struct kunit_lite_alloc *a, *tmp;

	list_for_each_entry_safe(a, tmp, &test->allocs, node) {
		list_del(&a->node);
		kfree(a);
	}
}

static int kunit_lite_thread(void *data)
{
	struct kunit *test = data;

	test->run(test);
	kthread_complete_and_exit(&test->done, 0);
}

/* As KUnit's default: a case that takes longer has failed. */
#define KUNIT_LITE_TIMEOUT	(300 * HZ)

/* Run one case; its verdict, or -ETIMEDOUT when it did not end. */
static int kunit_lite_case(struct kunit_case *c)
{
	struct task_struct *task;
	struct kunit *test;
	int ret;

	test = kzalloc(sizeof(*test), GFP_KERNEL);
	if (!test)
		return -ENOMEM;
	test->name = c->name;
	test->run = c->run_case;
	init_completion(&test->done);
	spin_lock_init(&test->lock);
	INIT_LIST_HEAD(&test->allocs);
	task = kthread_run(kunit_lite_thread, test, "kunit_try_catch");
	if (IS_ERR(task)) {
		kfree(test);
		return PTR_ERR(task);
	}
	if (!wait_for_completion_timeout(&test->done, KUNIT_LITE_TIMEOUT)) {
		/* The case still runs, on @test: leave it to it. */
		kunit_info(test, "timed out");
		return -ETIMEDOUT;
	}
	ret = test->failed ? -EIO : 0;
	kunit_lite_free_all(test);
	kfree(test);
	return ret;
}

static ssize_t kunit_lite_read(struct file *file, char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&kunit_lite_log.lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, kunit_lite_log.buf,
				      kunit_lite_log.len);
	mutex_unlock(&kunit_lite_log.lock);
	return ret;
}

static const struct file_operations kunit_lite_fops = {
	.owner = THIS_MODULE,
	.read = kunit_lite_read,
	.llseek = default_llseek,
};

/* debugfs kunit/<suite>/results, "kunit" made if KUnit has not. */
static void kunit_lite_debugfs(struct kunit_suite *suite)
{
	struct dentry *top;

	top = debugfs_lookup("kunit", NULL);
	if (!top)
		top = debugfs_create_dir("kunit", NULL);
	else
		dput(top);
	kunit_lite_log.dir = debugfs_create_dir(suite->name, top);
	debugfs_create_file("results", 0444, kunit_lite_log.dir, NULL,
			    &kunit_lite_fops);
}

static int kunit_lite_run(struct kunit_suite *suite)
{
	struct kunit_case *c;
	unsigned int n = 0, i = 0;
	bool failed = false;
	int ret;

	mutex_init(&kunit_lite_log.lock);
	kunit_lite_log.buf = vzalloc(KUNIT_LITE_LOG_SIZE);
	if (!kunit_lite_log.buf)
		return -ENOMEM;
	for (c = suite->test_cases; c->run_case; c++)
		n++;
	kunit_lite_printf(true, "    KTAP version 1\n    # Subtest: %s\n    1..%u\n",
			  suite->name, n);
	pr_info("    # Subtest: %s\n", suite->name);
	for (c = suite->test_cases; c->run_case; c++) {
		ret = kunit_lite_case(c);
		failed |= ret != 0;
		kunit_lite_printf(true, "    %sok %u %s\n", ret ? "not " : "",
				  ++i, c->name);
		pr_info("    %sok %u %s\n", ret ? "not " : "", i, c->name);
	}
	kunit_lite_printf(true, "%sok 1 %s\n", failed ? "not " : "",
			  suite->name);
	pr_info("%sok 1 %s\n", failed ? "not " : "", suite->name);
	kunit_lite_debugfs(suite);
	return 0;
}

static void kunit_lite_remove(void)
{
	debugfs_remove_recursive(kunit_lite_log.dir);
	vfree(kunit_lite_log.buf);
}

/* The suite of the module: kunit_test_suite() names it. */
static struct kunit_suite *kunit_lite_suite;

static int __init kunit_lite_init(void)
{
	return kunit_lite_run(kunit_lite_suite);
}
module_init(kunit_lite_init);

static void __exit kunit_lite_exit(void)
{
	kunit_lite_remove();
}
module_exit(kunit_lite_exit);

#define kunit_test_suite(suite)						\
	static struct kunit_suite *kunit_lite_suite = &(suite)

#endif /* RTRS_KUNIT_LITE_H */
