/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small stand-in for tools/testing/selftests/bpf/test_progs.h: the part
 * of its API that our prog_tests/ files use, so that make check can build
 * and run them in the VM without building all of test_progs.  The test
 * files themselves are written for the real test_progs.
 */
#ifndef MINI_TEST_PROGS_H
#define MINI_TEST_PROGS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#ifndef noinline
#define noinline __attribute__((noinline))
#endif

/* test_progs has it through bpf_util.h. */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

enum verbosity { VERBOSE_NONE, VERBOSE_NORMAL, VERBOSE_VERY, VERBOSE_SUPER };

struct test_env {
	enum verbosity verbosity;
};

extern struct test_env env;

bool test__start_subtest(const char *name);
void test__fail(void);
void test__skip(void);

#define CHECK_REPORT(ok, name, fmt, ...) ({					\
	bool ___ok = (ok);							\
	if (!___ok) {								\
		test__fail();							\
		fprintf(stdout, "# %s:%d: FAIL %s: " fmt "\n",			\
			__func__, __LINE__, name, ##__VA_ARGS__);		\
	} else if (env.verbosity > VERBOSE_NONE) {				\
		fprintf(stdout, "# %s:%d: ok %s\n", __func__, __LINE__, name);	\
	}									\
	___ok;									\
})

#define ASSERT_CMP(actual, expected, op, name) ({				\
	long long ___a = (long long)(actual), ___e = (long long)(expected);	\
	CHECK_REPORT(___a op ___e, name,					\
		     "unexpected %s: actual %lld %s expected %lld",		\
		     #actual, ___a, #op, ___e);					\
})

#define ASSERT_EQ(a, e, name)	ASSERT_CMP(a, e, ==, name)
#define ASSERT_NEQ(a, e, name)	ASSERT_CMP(a, e, !=, name)
#define ASSERT_LT(a, e, name)	ASSERT_CMP(a, e, <, name)
#define ASSERT_LE(a, e, name)	ASSERT_CMP(a, e, <=, name)
#define ASSERT_GT(a, e, name)	ASSERT_CMP(a, e, >, name)
#define ASSERT_GE(a, e, name)	ASSERT_CMP(a, e, >=, name)
#define ASSERT_TRUE(a, name)	CHECK_REPORT(!!(a), name, "%s is false", #a)
#define ASSERT_FALSE(a, name)	CHECK_REPORT(!(a), name, "%s is true", #a)

#define ASSERT_OK(res, name) ({							\
	long long ___r = (long long)(res);					\
	CHECK_REPORT(___r == 0, name, "unexpected error: %lld (errno %d)",	\
		     ___r, errno);						\
})

#define ASSERT_ERR(res, name) ({						\
	long long ___r = (long long)(res);					\
	CHECK_REPORT(___r < 0, name, "unexpected success: %lld", ___r);	\
})

#define ASSERT_OK_FD(fd, name) ({						\
	int ___fd = (fd);							\
	CHECK_REPORT(___fd >= 0, name, "not a file descriptor: %d (errno %d)",	\
		     ___fd, errno);						\
})

#define ASSERT_OK_PTR(ptr, name) ({						\
	const void *___p = (ptr);						\
	long ___e = libbpf_get_error(___p);					\
	CHECK_REPORT(___p && !___e, name, "unexpected pointer: %p (error %ld)",	\
		     ___p, ___e);						\
})

#endif /* MINI_TEST_PROGS_H */
