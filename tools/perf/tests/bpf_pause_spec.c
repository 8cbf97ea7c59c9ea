// SPDX-License-Identifier: GPL-2.0
/*
 * The --bpf-pause/--switch-on spec parser (util/bpf_pause_spec.c): a
 * table of good specs with what they must parse to, and bad ones with the
 * words their one-line error must contain.  The parser needs no kernel
 * support, so this runs anywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/kernel.h>

#include "bpf_pause_pred.h"
#include "bpf_pause_spec.h"
#include "debug.h"
#include "tests.h"

struct good {
	const char *str;
	int nr;
	/* first spec only */
	enum bpf_pause_probe probe;
	bool pause;
	const char *a, *b;	/* exe/func, func, or category/name */
};

static const struct good good[] = {
	{ "kprobe:pause:do_sys_openat2", 1, BPF_PAUSE_PROBE__KPROBE, true, "do_sys_openat2", NULL },
	{ "kretprobe:resume:vfs_read", 1, BPF_PAUSE_PROBE__KRETPROBE, false, "vfs_read", NULL },
	{ "kprobe:pause:foo.isra.0", 1, BPF_PAUSE_PROBE__KPROBE, true, "foo.isra.0", NULL },
	{ "uprobe:resume:/bin/true:main", 1, BPF_PAUSE_PROBE__UPROBE, false, "/bin/true", "main" },
	{ "uretprobe:pause:~/bin/a.out:work",
	  1, BPF_PAUSE_PROBE__URETPROBE, true, "~/bin/a.out", "work" },
	{ "uprobe:resume:./a b:_Z3fooi", 1, BPF_PAUSE_PROBE__UPROBE, false, "./a b", "_Z3fooi" },
	{ "tp:resume:syscalls:sys_enter_getppid",
	  1, BPF_PAUSE_PROBE__TRACEPOINT, false, "syscalls", "sys_enter_getppid" },
	{ "tracepoint:pause:sched:sched_switch",
	  1, BPF_PAUSE_PROBE__TRACEPOINT, true, "sched", "sched_switch" },
	{ "uprobe:resume:perf:f,uretprobe:pause:perf:f",
	  2, BPF_PAUSE_PROBE__UPROBE, false, "perf", "f" },
	{ "tp:resume:a:b,tp:pause:a:c,kprobe:pause:x",
	  3, BPF_PAUSE_PROBE__TRACEPOINT, false, "a", "b" },
	{ "kprobe:pause:vfs_read+0x10", 1, BPF_PAUSE_PROBE__KPROBE, true, "vfs_read", NULL },
	{ "uprobe:resume:/bin/x:main+4", 1, BPF_PAUSE_PROBE__UPROBE, false, "/bin/x", "main" },
	{ "sdt:resume:python3:python:gc__start",
	  1, BPF_PAUSE_PROBE__SDT, false, "python3", "python" },
	{ "usdt:pause:libstdc++.so.6:libstdcxx:throw",
	  1, BPF_PAUSE_PROBE__SDT, true, "libstdc++.so.6", "libstdcxx" },
	{ "kprobe:resume:vfs_read{arg3 > 1048576},kretprobe:pause:vfs_read",
	  2, BPF_PAUSE_PROBE__KPROBE, false, "vfs_read", NULL },
	{ "tp:resume:a:b,tp:pause:a:c{comm == \"x,y\" || comm == z}",
	  2, BPF_PAUSE_PROBE__TRACEPOINT, false, "a", "b" },
};

/* FUNC+OFFSET: the offset, apart from the symbol (the good[] checks). */
static const struct {
	const char *str;
	unsigned long offset;
} offsets[] = {
	{ "kprobe:pause:vfs_read", 0 },
	{ "kprobe:pause:vfs_read+0x10", 16 },
	{ "uprobe:resume:/bin/x:main+4", 4 },
	{ "uprobe:resume:/bin/x:main+0", 0 },
	{ "uprobe:resume:/bin/x:main+010", 8 },
};

struct bad {
	const char *str;
	const char *words[3];	/* each must be in the message */
};

static const struct bad bad[] = {
	{ "", { "empty" } },
	{ "kprob:p:f", { "'kprob:p:f'", "unknown trigger type 'kprob'", "kprobe, kretprobe" } },
	{ "foo", { "unknown trigger type 'foo'" } },
	{ "kprobe:x:f", { "bad action 'x'", "expected pause or resume" } },
	{ "kprobe:Pause:f", { "bad action 'Pause'" } },
	{ "kprobe:pa:f", { "bad action 'pa'" } },
	{ "kprobe", { "missing action" } },
	{ "kprobe::f", { "missing action" } },
	{ "kprobe:p", { "missing FUNC", "kprobe:{pause|resume}:FUNC" } },
	{ "kprobe:pause:", { "missing FUNC" } },
	{ "kprobe:pause:a:b", { "unexpected ':b' after FUNC" } },
	{ "kprobe:pause:a-b", { "bad character '-' in FUNC 'a-b'" } },
	{ "uprobe:pause:main", { "missing FUNC", "EXE:FUNC" } },
	{ "uprobe:p", { "missing EXE and FUNC" } },
	{ "uprobe:pause::main", { "missing EXE" } },
	{ "uretprobe:resume:/bin/x:", { "missing FUNC" } },
	{ "uprobe:resume:/bin/x:f:g", { "unexpected ':g' after FUNC" } },
	{ "tp:resume:syscalls", { "missing NAME", "CATEGORY:NAME" } },
	{ "tp:resume::x", { "missing CATEGORY" } },
	{ "sdt:r", { "missing EXE, PROVIDER and NAME", "sdt:{pause|resume}:EXE:PROVIDER:NAME" } },
	{ "sdt:resume:python3", { "missing PROVIDER and NAME" } },
	{ "usdt:pause:python3:python", { "missing NAME" } },
	{ "sdt:pause:python3:py-thon:x", { "bad character '-' in PROVIDER" } },
	{ "sdt:pause:python3:python:gc__start:x", { "unexpected ':x' after NAME" } },
	{ "tp:resume:a:b:c:d:e:f", { "unexpected ':c'" } },
	{ "tp:resume:a:b,", { "empty SPEC" } },
	{ ",tp:resume:a:b", { "empty SPEC" } },
	{ "tp:resume:a:b,,kprobe:pause:f", { "empty SPEC" } },
	{ "tp:resume:a:b,kprobe:q:f", { "'kprobe:q:f'", "bad action 'q'" } },
	{ "kprobe:pause:f+zz", { "bad offset 'zz' in FUNC+OFFSET" } },
	{ "kprobe:pause:f+", { "bad offset ''" } },
	{ "kprobe:pause:f+-4", { "bad offset '-4'" } },
	{ "kprobe:pause:f+0x10x", { "bad offset '0x10x'" } },
	{ "kprobe:pause:+16", { "missing FUNC" } },
	{ "kretprobe:pause:f+4", { "a return probe takes no +OFFSET" } },
	{ "kretprobe:pause:f+0", { "a return probe takes no +OFFSET" } },
	{ "uretprobe:pause:/bin/x:f+0x4", { "a return probe takes no +OFFSET" } },
	{ "uprobe:pause:/bin/x:f+1+2", { "bad offset '1+2'" } },
	{ "tp:resume:a:b{ret == 1", { "'{' without '}'" } },
	{ "tp:resume:a:b}", { "'}' without '{'" } },
	{ "tp:resume:a:b{ret == 1}x", { "'{' without '}' ending the spec" } },
};

struct sw {
	const char *event;
	bool ok;
	enum bpf_pause_probe probe;
	const char *a, *b;
	const char *word;	/* in the message when !ok */
};

static const struct sw switches[] = {
	{ "syscalls:sys_enter_getppid",
	  true, BPF_PAUSE_PROBE__TRACEPOINT, "syscalls", "sys_enter_getppid", NULL },
	{ "probe:vfs_read", true, BPF_PAUSE_PROBE__TRACEPOINT, "probe", "vfs_read", NULL },
	{ "kprobe:vfs_read", true, BPF_PAUSE_PROBE__KPROBE, "vfs_read", NULL, NULL },
	{ "kretprobe:vfs_read", true, BPF_PAUSE_PROBE__KRETPROBE, "vfs_read", NULL, NULL },
	{ "uprobe:/bin/x:main", true, BPF_PAUSE_PROBE__UPROBE, "/bin/x", "main", NULL },
	{ "uretprobe:/bin/x:main", true, BPF_PAUSE_PROBE__URETPROBE, "/bin/x", "main", NULL },
	{ "sdt:python3:python:gc__start", true, BPF_PAUSE_PROBE__SDT, "python3", "python", NULL },
	{ "cycles", false, 0, NULL, NULL, "not a tracepoint or probe" },
	{ "a:b:c", false, 0, NULL, NULL, "not a tracepoint or probe" },
	{ "uprobe:main", false, 0, NULL, NULL, "missing FUNC" },
	{ "kprobe:", false, 0, NULL, NULL, "missing FUNC" },
	{ "", false, 0, NULL, NULL, "missing EVENT" },
};

static int failures;

#define CHECK(cond, fmt, ...) do {					\
	if (!(cond)) {							\
		pr_err("FAIL %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__); \
		failures++;						\
	}								\
} while (0)

static bool streq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static void check_operands(const char *what, const struct bpf_pause_spec *s,
			   enum bpf_pause_probe probe, const char *a, const char *b)
{
	CHECK(s->probe == probe, "%s: probe %d, want %d", what, s->probe, probe);
	switch (probe) {
	case BPF_PAUSE_PROBE__KPROBE:
	case BPF_PAUSE_PROBE__KRETPROBE:
		CHECK(streq(s->func, a) && !s->exe && !s->category, "%s: func '%s'", what, s->func);
		break;
	case BPF_PAUSE_PROBE__UPROBE:
	case BPF_PAUSE_PROBE__URETPROBE:
		CHECK(streq(s->exe, a) && streq(s->func, b), "%s: exe '%s' func '%s'",
		      what, s->exe, s->func);
		break;
	case BPF_PAUSE_PROBE__SDT:
		/* good[] and switches[] name the marker gc__start or throw. */
		CHECK(streq(s->exe, a) && streq(s->category, b) && !s->func &&
		      (streq(s->name, "gc__start") || streq(s->name, "throw")),
		      "%s: exe '%s' provider '%s' name '%s'", what, s->exe, s->category, s->name);
		break;
	case BPF_PAUSE_PROBE__TRACEPOINT:
	case BPF_PAUSE_PROBE__MAX:
	default:
		CHECK(streq(s->category, a) && streq(s->name, b) && !s->func,
		      "%s: tp '%s:%s'", what, s->category, s->name);
	}
}

/* Parse @str, which must be accepted. */
static bool parse_good(const char *str, struct bpf_pause_specs *specs)
{
	char err[256] = "";
	int ret = bpf_pause_specs__parse(specs, str, err, sizeof(err));

	CHECK(!ret, "'%s' refused: %s", str, err);
	return !ret;
}

static void test_offsets(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(offsets); i++) {
		struct bpf_pause_specs specs = { 0 };

		if (!parse_good(offsets[i].str, &specs))
			continue;
		CHECK(specs.specs[0].offset == offsets[i].offset, "'%s': offset %lu, want %lu",
		      offsets[i].str, specs.specs[0].offset, offsets[i].offset);
		bpf_pause_specs__exit(&specs);
	}
}

static void test_good(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct bpf_pause_specs specs = { 0 };

		if (!parse_good(good[i].str, &specs))
			continue;
		CHECK(specs.nr == good[i].nr, "'%s': %d specs, want %d", good[i].str,
		      specs.nr, good[i].nr);
		CHECK(specs.specs[0].pause == good[i].pause, "'%s': pause", good[i].str);
		CHECK(!specs.specs[0].short_action, "'%s': short action", good[i].str);
		check_operands(good[i].str, &specs.specs[0], good[i].probe, good[i].a, good[i].b);
		CHECK(!strchr(specs.specs[0].text, ','), "'%s': text '%s'", good[i].str,
		      specs.specs[0].text);
		bpf_pause_specs__exit(&specs);
	}
}

/* p and r, deprecated, still parse, marked for the option's warning. */
static void test_short_actions(void)
{
	struct bpf_pause_specs specs = { 0 };

	if (!parse_good("kprobe:r:f,uretprobe:p:/bin/x:f,tp:pause:a:b", &specs))
		return;
	CHECK(specs.nr == 3 && !specs.specs[0].pause && specs.specs[0].short_action &&
	      specs.specs[1].pause && specs.specs[1].short_action &&
	      specs.specs[2].pause && !specs.specs[2].short_action, "p and r");
	bpf_pause_specs__exit(&specs);
}

static void test_bad(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct bpf_pause_specs specs = { 0 };
		char err[256] = "";

		/* A good spec first: a failing list must leave it alone. */
		CHECK(!bpf_pause_specs__parse(&specs, "kprobe:pause:f", err, sizeof(err)), "setup");
		CHECK(bpf_pause_specs__parse(&specs, bad[i].str, err, sizeof(err)) == -1,
		      "'%s' accepted", bad[i].str);
		CHECK(specs.nr == 1, "'%s': %d specs left, want 1", bad[i].str, specs.nr);
		CHECK(!strchr(err, '\n'), "'%s': message not one line", bad[i].str);
		for (int w = 0; w < 3 && bad[i].words[w]; w++)
			CHECK(strstr(err, bad[i].words[w]), "'%s': message '%s' lacks '%s'",
			      bad[i].str, err, bad[i].words[w]);
		bpf_pause_specs__exit(&specs);
	}
}

static void test_switch(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(switches); i++) {
		const struct sw *t = &switches[i];
		struct bpf_pause_specs specs = { 0 };
		char err[256] = "";
		int ret;

		ret = bpf_pause_specs__add_switch(&specs, t->event, true, err, sizeof(err));
		CHECK((ret == 0) == t->ok, "switch '%s': ret %d (%s)", t->event, ret, err);
		if (!ret) {
			CHECK(specs.nr == 1 && !specs.specs[0].pause, "switch-on '%s'", t->event);
			check_operands(t->event, &specs.specs[0], t->probe, t->a, t->b);
			ret = bpf_pause_specs__add_switch(&specs, t->event, false,
							  err, sizeof(err));
			CHECK(!ret && specs.nr == 2 && specs.specs[1].pause,
			      "switch-off '%s'", t->event);
		} else {
			CHECK(strstr(err, t->word), "switch '%s': message '%s' lacks '%s'",
			      t->event, err, t->word);
			CHECK(specs.nr == 0, "switch '%s': spec left behind", t->event);
		}
		bpf_pause_specs__exit(&specs);
	}
}

static void test_limit(void)
{
	struct bpf_pause_specs specs = { 0 };
	char err[256] = "";
	int i, ret = 0;

	for (i = 0; i < BPF_PAUSE_MAX_SPECS && !ret; i++)
		ret = bpf_pause_specs__parse(&specs, "tp:pause:a:b", err, sizeof(err));
	CHECK(!ret && specs.nr == BPF_PAUSE_MAX_SPECS, "limit: %d specs", specs.nr);
	CHECK(bpf_pause_specs__parse(&specs, "tp:pause:a:b", err, sizeof(err)) == -1 &&
	      strstr(err, "more than"), "limit not enforced: %s", err);
	bpf_pause_specs__exit(&specs);
}

static void test_resolve_exe(void)
{
	char buf[4096] = "", cwd[4096] = "";
	char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;

	CHECK(!bpf_pause_spec__resolve_exe("sh", buf, sizeof(buf)) && buf[0] == '/',
	      "sh through $PATH: '%s'", buf);
	setenv("HOME", "/", 1);
	CHECK(!bpf_pause_spec__resolve_exe("~/bin", buf, sizeof(buf)) && buf[0] == '/',
	      "~/bin: '%s'", buf);
	if (home)
		setenv("HOME", home, 1);
	else
		unsetenv("HOME");
	free(home);
	CHECK(getcwd(cwd, sizeof(cwd)), "getcwd");
	CHECK(!bpf_pause_spec__resolve_exe("./", buf, sizeof(buf)) && !strcmp(buf, cwd),
	      "./ -> '%s', want '%s'", buf, cwd);
	CHECK(bpf_pause_spec__resolve_exe("no-such-command-xyz", buf, sizeof(buf)) == -1,
	      "missing command resolved");
	CHECK(bpf_pause_spec__resolve_exe("./no/such/file", buf, sizeof(buf)) == -1,
	      "missing path resolved");
	CHECK(bpf_pause_spec__resolve_exe("sh", buf, 4) == -1, "short buffer accepted");
}

/* Frame windows: a uprobe opening and a uretprobe closing on one function. */
static void test_frame(void)
{
	static const struct {
		const char *str;
		bool frame[2];
	} frames[] = {
		{ "uprobe:resume:x:f,uretprobe:pause:x:f", { true, true } },
		{ "uretprobe:pause:x:f,uprobe:resume:x:f", { true, true } },
		{ "uprobe:resume:x:f,uretprobe:pause:x:g", { false, false } },
		{ "uprobe:resume:x:f,uretprobe:pause:y:f", { false, false } },
		{ "uprobe:pause:x:f,uretprobe:resume:x:f", { false, false } },
		{ "uprobe:resume:x:f+4,uretprobe:pause:x:f", { false, false } },
		{ "uprobe:resume:x:f,tp:pause:a:b", { false, false } },
	};

	for (size_t i = 0; i < ARRAY_SIZE(frames); i++) {
		struct bpf_pause_specs specs = { 0 };

		if (!parse_good(frames[i].str, &specs))
			continue;
		for (int j = 0; j < 2; j++)
			CHECK(bpf_pause_specs__is_frame(&specs, j) == frames[i].frame[j],
			      "'%s': spec %d frame %d, want %d", frames[i].str, j,
			      bpf_pause_specs__is_frame(&specs, j), frames[i].frame[j]);
		bpf_pause_specs__exit(&specs);
	}
}

/* SPEC{...}: a tracepoint with fields ret (s64 at 16) and flags (u32 at 24). */
static int fake_field(void *arg __maybe_unused, const char *name, unsigned int *offset,
		      unsigned int *size, bool *is_signed)
{
	if (!strcmp(name, "ret") || !strcmp(name, "pid")) {
		*offset = 16;
		*size = 8;
		*is_signed = true;
		return 0;
	}
	if (!strcmp(name, "flags")) {
		*offset = 24;
		*size = 4;
		*is_signed = false;
		return 0;
	}
	if (!strncmp(name, "common_", 7))
		return -3;
	if (!strcmp(name, "filename")) {
		*offset = 32;
		*size = 0;	/* a string: not comparable */
		*is_signed = false;
		return 0;
	}
	return -1;
}

static int fake_cgroup_id(void *arg __maybe_unused, const char *path, __u64 *id)
{
	if (strcmp(path, "/") && strcmp(path, "/system.slice"))
		return -1;
	*id = path[1] ? 42 : 1;
	return 0;
}

static const struct bpf_pause_pred_env fake_env = {
	.field = fake_field, .regs = true, .cgroup_id = fake_cgroup_id,
};

/* Compile the one spec of @str: 0, or -1 with @err. */
static int compile(const char *str, struct pause_pred *pred, char *err, size_t errlen)
{
	struct bpf_pause_specs specs = { 0 };
	int ret;

	if (bpf_pause_specs__parse(&specs, str, err, errlen))
		return -1;
	ret = specs.nr == 1 ? bpf_pause_pred__compile(pred, &specs.specs[0], &fake_env,
						       err, errlen) : -1;
	bpf_pause_specs__exit(&specs);
	return ret;
}

static void test_preds(void)
{
	static const struct {
		const char *str;
		int nr, every;
		unsigned long long max, timeout;
		const char *kinds;	/* C(mp) A(nd) O(r) N(ot), in order */
	} good_preds[] = {
		{ "kprobe:resume:vfs_read{arg3 > 1048576}", 1, 0, 0, 0, "C" },
		{ "kretprobe:resume:vfs_read{retval < 0 || retval >= 0x100000}",
		  3, 0, 0, 0, "CCO" },
		{ "tp:resume:a:b{ret == -1 && flags & 0x800}", 3, 0, 0, 0, "CCA" },
		{ "tp:resume:a:b{!(ret == 1) && (comm == \"dd\" || comm != 'a,b')}", 6, 0, 0, 0,
		  "CNCCOA" },
		{ "uprobe:resume:/bin/x:f{arg1 == 2; every=3; max=5; timeout=2ms}",
		  1, 3, 5, 2000000,
		  "C" },
		{ "tp:resume:a:b{every=100}", 0, 100, 0, 0, "" },
		{ "tp:resume:a:b{hit > 100 && hit <= 200}", 3, 0, 0, 0, "CCA" },
		{ "tp:resume:a:b{pid == 0}", 1, 0, 0, 0, "C" },	/* the field, not the pid */
		{ "tp:resume:a:b{tid != 1 && cgroup == /system.slice}", 3, 0, 0, 0, "CCA" },
		{ "tp:resume:a:b{timeout=10}", 0, 0, 0, 10, "" },
		{ "tp:resume:a:b{max=1;}", 0, 0, 1, 0, "" },
		{ "tp:resume:a:b{ every = 2 ;max=0x10}", 0, 2, 16, 0, "" },
		{ "tp:resume:a:b{timeout=3s}", 0, 0, 0, 3000000000ULL, "" },
	};
	static const struct {
		const char *str;
		const char *words[2];
	} bad_preds[] = {
		{ "kprobe:resume:f{retval > 0}", { "'retval' is for kretprobe and uretprobe" } },
		{ "kretprobe:resume:f{arg1 > 0}", { "'arg1' is for kprobe and uprobe" } },
		{ "kprobe:resume:f{arg7 > 0}", { "unknown term 'arg7'", "arg1..arg6" } },
		{ "tp:resume:a:b{size > 0}", { "unknown term 'size'", "a:b has no such field" } },
		{ "tp:resume:a:b{filename == 1}", { "field 'filename' is not an integer" } },
		{ "tp:resume:a:b{ret = 1}", { "unknown setting 'ret'", "a comparison takes ==" } },
		{ "tp:resume:a:b{ret => 1}", { "expected ==, !=" } },
		{ "tp:resume:a:b{ret == }", { "expected a value after 'ret'" } },
		{ "tp:resume:a:b{ret == x1}", { "bad value 'x1'" } },
		{ "tp:resume:a:b{ret == \"x\"}", { "compares numbers, not the string" } },
		{ "tp:resume:a:b{comm > \"dd\"}", { "comm takes == or !=" } },
		{ "tp:resume:a:b{comm == \"0123456789abcdef\"}", { "longer than a thread name" } },
		{ "tp:resume:a:b{cgroup == /nope}", { "cgroup '/nope' not found" } },
		{ "tp:resume:a:b{cgroup < /}", { "cgroup takes == or !=" } },
		{ "tp:resume:a:b{(ret == 1}", { "expected ')'" } },
		{ "tp:resume:a:b{ret == 1 ret == 2}", { "unexpected 'ret == 2'", "&& or ||" } },
		{ "tp:resume:a:b{ret == 1; ret == 2}", { "a second filter" } },
		{ "tp:resume:a:b{every=0}", { "bad every '0'" } },
		{ "tp:resume:a:b{max=-1}", { "bad max '-1'" } },
		{ "tp:resume:a:b{every=x1}", { "bad every 'x1'" } },
		{ "tp:resume:a:b{every=\"2\"}", { "not a string" } },
		{ "tp:resume:a:b{max=1 2}", { "bad max '1 2'" } },
		{ "tp:resume:a:b{timeout=5m}", { "bad timeout '5m'" } },
		{ "tp:resume:a:b{timeout=0}", { "bad timeout '0'" } },
		{ "tp:resume:a:b{often=2}", { "unknown setting 'often'" } },
		{ "tp:resume:a:b{}", { "empty" } },
		{ "tp:resume:a:b{;max=2}", { "empty" } },
		{ "tp:resume:a:b{comm == \"dd}", { "unterminated string" } },
		{ "tp:resume:a:b{&& ret == 1}", { "expected a term" } },
		{ "tp:resume:a:b{'ret' == 1}", { "expected a term at ''ret' == 1'" } },
		{ "tp:resume:a:b{flags == -1}", { "'flags' is unsigned: -1 is never it" } },
		{ "tp:resume:a:b{hit > -1}", { "'hit' is unsigned" } },
		{ "tp:resume:a:b{common_pid == 1}", { "common fields are not readable from BPF" } },
		{ "kprobe:resume:f{arg1:i32 > 0}", { "unknown type 'i32'" } },
		{ "kretprobe:resume:f{retval:s32: < 0}", { "unknown type 's32:'" } },
	};
	struct pause_pred pred;
	char err[512];

	for (size_t i = 0; i < ARRAY_SIZE(good_preds); i++) {
		const char *k = good_preds[i].kinds;

		err[0] = '\0';
		if (compile(good_preds[i].str, &pred, err, sizeof(err))) {
			CHECK(0, "'%s' refused: %s", good_preds[i].str, err);
			continue;
		}
		CHECK((int)pred.nr == good_preds[i].nr &&
		      pred.every == (unsigned int)good_preds[i].every &&
		      pred.max == good_preds[i].max && pred.timeout_ns == good_preds[i].timeout,
		      "'%s': nr %u every %u max %llu timeout %llu", good_preds[i].str, pred.nr,
		      pred.every, (unsigned long long)pred.max,
		      (unsigned long long)pred.timeout_ns);
		for (unsigned int j = 0; j < pred.nr && k[j]; j++)
			CHECK("CAON"[pred.insn[j].kind] == k[j], "'%s': insn %u is %c, want %c",
			      good_preds[i].str, j, "CAON"[pred.insn[j].kind], k[j]);
	}
	/* What the comparisons hold. */
	CHECK(!compile("tp:resume:a:b{ret == -1 && flags & 0x800}", &pred, err, sizeof(err)) &&
	      pred.insn[0].term == PAUSE_TERM_FIELD && pred.insn[0].index == 16 &&
	      pred.insn[0].size == 8 && pred.insn[0].is_signed &&
	      pred.insn[0].value == (__u64)-1 && pred.insn[1].op == PAUSE_OP_AND &&
	      pred.insn[1].index == 24 && pred.insn[1].size == 4 && !pred.insn[1].is_signed,
	      "fields: %s", err);
	CHECK(!compile("kprobe:resume:f{arg3 >= 7}", &pred, err, sizeof(err)) &&
	      pred.insn[0].term == PAUSE_TERM_ARG && pred.insn[0].index == 2 &&
	      pred.insn[0].size == 8 && pred.insn[0].is_signed &&
	      pred.insn[0].op == PAUSE_OP_GE && pred.insn[0].value == 7, "arg3: %s", err);
	CHECK(!compile("tp:resume:a:b{comm == \"kworker/0:1H-k\"}", &pred, err, sizeof(err)) &&
	      !memcmp(&pred.insn[0].value, "kworker/", 8) &&
	      !memcmp(&pred.insn[0].value2, "0:1H-k\0\0", 8), "comm: %s", err);
	CHECK(!compile("kretprobe:resume:f{retval < 0}", &pred, err, sizeof(err)) &&
	      pred.insn[0].term == PAUSE_TERM_RETVAL && pred.insn[0].index == 0 &&
	      pred.insn[0].value == (__u64)0 && pred.insn[0].op == PAUSE_OP_LT, "retval: %s", err);
	CHECK(!compile("kretprobe:resume:f{retval:s32 < 0 && retval:u8 == 254}", &pred, err,
		       sizeof(err)) &&
	      pred.insn[0].term == PAUSE_TERM_RETVAL && pred.insn[0].size == 4 &&
	      pred.insn[0].is_signed &&
	      pred.insn[1].size == 1 && !pred.insn[1].is_signed, "retval:s32: %s", err);
	CHECK(!compile("tp:resume:a:b{cgroup != /system.slice}", &pred, err, sizeof(err)) &&
	      pred.insn[0].value == 42 && pred.insn[0].op == PAUSE_OP_NE, "cgroup: %s", err);
	CHECK(!compile("tp:resume:a:b", &pred, err, sizeof(err)) && !pred.nr && !pred.every,
	      "no predicate: %s", err);

	for (size_t i = 0; i < ARRAY_SIZE(bad_preds); i++) {
		err[0] = '\0';
		CHECK(compile(bad_preds[i].str, &pred, err, sizeof(err)) == -1,
		      "'%s' accepted", bad_preds[i].str);
		CHECK(!strchr(err, '\n'), "'%s': message not one line", bad_preds[i].str);
		for (int w = 0; w < 2 && bad_preds[i].words[w]; w++)
			CHECK(strstr(err, bad_preds[i].words[w]), "'%s': message '%s' lacks '%s'",
			      bad_preds[i].str, err, bad_preds[i].words[w]);
	}
}

static int test__bpf_pause_spec(struct test_suite *test __maybe_unused,
				int subtest __maybe_unused)
{
	failures = 0;
	test_good();
	test_short_actions();
	test_offsets();
	test_bad();
	test_switch();
	test_limit();
	test_resolve_exe();
	test_frame();
	test_preds();
	return failures ? TEST_FAIL : TEST_OK;
}

DEFINE_SUITE("BPF trigger spec parser (--bpf-pause, --switch-on)", bpf_pause_spec);
