// SPDX-License-Identifier: GPL-2.0
/*
 * main() for one prog_tests/ test built against test_progs.h from this
 * directory.  Build with -DTEST=name: runs test_name() and prints one TAP
 * line per subtest ("ok N name/subtest", "not ok", "# SKIP"), which the
 * harness turns into one result each.  -v prints every passing check;
 * -t GLOB runs only the subtests that match, -x GLOB all but those (make
 * check runs the ones that could hang the guest in a guest of their own).
 */
#include <fnmatch.h>
#include <stdarg.h>
#include "test_progs.h"

#define STR(x)	#x
#define XSTR(x)	STR(x)
#define FN(t)	test_ ## t
#define XFN(t)	FN(t)
#define SFN(t)	serial_test_ ## t
#define XSFN(t)	SFN(t)

/* test_progs runs serial_test_NAME() alone, test_NAME() beside others. */
void XFN(TEST)(void) __attribute__((weak));
void XSFN(TEST)(void) __attribute__((weak));

struct test_env env;

static const char *cur;		/* current subtest, or NULL */
static const char *only, *except;	/* -t, -x */
static bool has_subtests;
static int nr, failed, skipped, any_failed;

static void end_subtest(void)
{
	if (!cur)
		return;
	nr++;
	if (failed)
		printf("not ok %d %s/%s\n", nr, XSTR(TEST), cur);
	else if (skipped)
		printf("ok %d %s/%s # SKIP\n", nr, XSTR(TEST), cur);
	else
		printf("ok %d %s/%s\n", nr, XSTR(TEST), cur);
	any_failed |= failed;
	fflush(stdout);
	free((void *)cur);
	cur = NULL;
}

bool test__start_subtest(const char *name)
{
	end_subtest();
	has_subtests = true;
	if ((only && fnmatch(only, name, 0)) ||
	    (except && !fnmatch(except, name, 0)))
		return false;
	cur = strdup(name);
	failed = skipped = 0;
	return true;
}

void test__fail(void)
{
	failed = 1;
	any_failed = 1;
}

void test__skip(void)
{
	skipped = 1;
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && env.verbosity < VERBOSE_VERY)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-v"))
			env.verbosity = VERBOSE_NORMAL;
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			only = argv[++i];
		else if (!strcmp(argv[i], "-x") && i + 1 < argc)
			except = argv[++i];
	}
	libbpf_set_print(print_libbpf);
	printf("TAP version 13\n");
	if (XFN(TEST))
		XFN(TEST)();
	else
		XSFN(TEST)();
	if (has_subtests) {
		end_subtest();
	} else {
		/* No subtests: the test is one case. */
		nr++;
		printf("%sok %d %s\n", any_failed ? "not " : "", nr, XSTR(TEST));
	}
	printf("1..%d\n", nr);
	return any_failed ? 1 : 0;
}
