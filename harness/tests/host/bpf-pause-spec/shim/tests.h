/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of tools/perf/tests/tests.h for tools/perf/tests/
 * bpf_pause_spec.c to build on the host, alone, under ASan/UBSan: its
 * suite becomes main().
 */
#ifndef SHIM_TESTS_H
#define SHIM_TESTS_H

#define __maybe_unused	__attribute__((unused))
#define TEST_OK		0
#define TEST_FAIL	-1

struct test_suite;

#define DEFINE_SUITE(description, name)					\
int main(void)								\
{									\
	int ret = test__##name(NULL, 0);				\
									\
	printf("%s: %s\n", ret ? "FAIL" : "PASS", description);	\
	return ret ? 1 : 0;						\
}

#endif
