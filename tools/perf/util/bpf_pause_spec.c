// SPDX-License-Identifier: GPL-2.0
/*
 * Parse --bpf-pause SPECs and --switch-on/--switch-off EVENTs into typed
 * triggers.  No perf dependencies, so that its test
 * (tests/bpf_pause_spec.c) needs nothing else of perf.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf_pause_spec.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Fields of a spec: TYPE, ACTION and up to three operands; one more is an error. */
#define MAX_OPERANDS	3
#define MAX_FIELDS	(2 + MAX_OPERANDS)

static const struct {
	const char		*name;
	enum bpf_pause_probe	probe;
} probe_names[] = {
	{ "kprobe",	BPF_PAUSE_PROBE__KPROBE },
	{ "kretprobe",	BPF_PAUSE_PROBE__KRETPROBE },
	{ "uprobe",	BPF_PAUSE_PROBE__UPROBE },
	{ "uretprobe",	BPF_PAUSE_PROBE__URETPROBE },
	{ "tp",		BPF_PAUSE_PROBE__TRACEPOINT },
	{ "tracepoint",	BPF_PAUSE_PROBE__TRACEPOINT },
	{ "sdt",	BPF_PAUSE_PROBE__SDT },
	{ "usdt",	BPF_PAUSE_PROBE__SDT },
};

/* What each probe kind takes after the action, for messages and checks. */
static const struct {
	const char	*usage;
	const char	*operand[MAX_OPERANDS];
} probe_operands[BPF_PAUSE_PROBE__MAX] = {
	[BPF_PAUSE_PROBE__KPROBE]	= { "kprobe:{pause|resume}:FUNC[+OFFSET]",
					    { "FUNC" } },
	[BPF_PAUSE_PROBE__KRETPROBE]	= { "kretprobe:{pause|resume}:FUNC", { "FUNC" } },
	[BPF_PAUSE_PROBE__UPROBE]	= { "uprobe:{pause|resume}:EXE:FUNC[+OFFSET]",
					    { "EXE", "FUNC" } },
	[BPF_PAUSE_PROBE__URETPROBE]	= { "uretprobe:{pause|resume}:EXE:FUNC",
					    { "EXE", "FUNC" } },
	[BPF_PAUSE_PROBE__TRACEPOINT]	= { "tp:{pause|resume}:CATEGORY:NAME",
					    { "CATEGORY", "NAME" } },
	[BPF_PAUSE_PROBE__SDT]		= { "sdt:{pause|resume}:EXE:PROVIDER:NAME",
					    { "EXE", "PROVIDER", "NAME" } },
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	/* The spec is echoed: keep the message one printable line. */
	for (; *err; err++) {
		if ((unsigned char)*err < 0x20 || *err == 0x7f)
			*err = '?';
	}
}

static int probe_from_name(const char *name, enum bpf_pause_probe *probe)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(probe_names); i++) {
		if (!strcmp(name, probe_names[i].name)) {
			*probe = probe_names[i].probe;
			return 0;
		}
	}
	return -1;
}

static int nr_operands(enum bpf_pause_probe probe)
{
	int n = 0;

	while (n < MAX_OPERANDS && probe_operands[probe].operand[n])
		n++;
	return n;
}

/* Symbols, tracepoint names and categories; an EXE is any path. */
static const char *bad_char(const char *s, bool is_path)
{
	for (; *s; s++) {
		unsigned char c = *s;

		if (is_path ? (c < 0x20 || c == 0x7f) :
		    !(c == '_' || c == '.' || c == '$' || c == '@' ||
		      (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z')))
			return s;
	}
	return NULL;
}

/*
 * FUNC+OFFSET, as perf probe writes it: cut @s (modified) at the '+' and
 * parse the offset (decimal or 0x hex).
 */
static int split_offset(char *s, unsigned long *offset, const char *text,
			char *err, size_t errlen)
{
	char *plus = strchr(s, '+'), *end;

	*offset = 0;
	if (!plus)
		return 0;
	*plus++ = '\0';
	errno = 0;
	if (*plus >= '0' && *plus <= '9')
		*offset = strtoul(plus, &end, 0);
	if (!(*plus >= '0' && *plus <= '9') || *end || errno) {
		set_err(err, errlen, "'%s': bad offset '%s' in FUNC+OFFSET (a number of bytes: 16 or 0x10)",
			text, plus);
		return -1;
	}
	return 0;
}

/*
 * Split @s (modified) at each ':' into fields: at most MAX_FIELDS, and
 * one more holding the rest if there are more (an error, named by it).
 */
static int split_fields(char *s, char *field[MAX_FIELDS + 1])
{
	int n = 0;

	while (n < MAX_FIELDS) {
		field[n++] = s;
		s = strchr(s, ':');
		if (!s)
			return n;
		*s++ = '\0';
	}
	field[n++] = s;
	return n;
}

static void spec__exit(struct bpf_pause_spec *spec)
{
	free(spec->exe);
	free(spec->func);
	free(spec->category);
	free(spec->name);
	free(spec->pred);
	free(spec->text);
}

/*
 * SPEC{PREDICATE}: cut the predicate off @s (modified) into spec->pred;
 * it is compiled when the trigger's kind and fields are known.
 */
static int split_pred(char *s, struct bpf_pause_spec *spec, const char *text,
		      char *err, size_t errlen)
{
	char *open = strchr(s, '{');
	size_t n;

	if (!open) {
		if (strchr(s, '}')) {
			set_err(err, errlen, "'%s': '}' without '{'", text);
			return -1;
		}
		return 0;
	}
	n = strlen(open);
	if (open[n - 1] != '}') {
		set_err(err, errlen, "'%s': '{' without '}' ending the spec (SPEC{FILTER; every=N; max=N; timeout=T})",
			text);
		return -1;
	}
	open[n - 1] = '\0';
	spec->pred = strdup(open + 1);
	if (!spec->pred) {
		set_err(err, errlen, "'%s': %s", text, strerror(ENOMEM));
		return -1;
	}
	*open = '\0';
	return 0;
}

/* The end of the spec at @s: the next ',' outside a {PREDICATE} and quotes. */
static const char *spec_end(const char *s)
{
	int depth = 0;
	char quote = 0;

	for (; *s; s++) {
		if (quote) {
			if (*s == quote)
				quote = 0;
		} else if (depth && (*s == '"' || *s == '\'')) {
			quote = *s;
		} else if (*s == '{') {
			depth++;
		} else if (*s == '}' && depth) {
			depth--;
		} else if (*s == ',' && !depth) {
			break;
		}
	}
	return s;
}

/*
 * Fill @spec from the operands in @op (those after the action).  @text is
 * the whole spec, for messages.
 */
static int spec__set_operands(struct bpf_pause_spec *spec, const char *text,
			      char **op, int nr, char *err, size_t errlen)
{
	int want = nr_operands(spec->probe);
	const char *usage = probe_operands[spec->probe].usage;
	char *val[MAX_OPERANDS] = { NULL };
	int i;

	if (nr > want) {
		set_err(err, errlen, "'%s': unexpected ':%s' after %s (%s)",
			text, op[want], probe_operands[spec->probe].operand[want - 1], usage);
		return -1;
	}
	if (nr < want) {
		/* "missing FUNC", "missing EXE and FUNC", "missing EXE, PROVIDER and NAME" */
		char missing[64] = "";

		for (i = nr; i < want; i++) {
			strncat(missing, i == nr ? "" : i == want - 1 ? " and " : ", ",
				sizeof(missing) - strlen(missing) - 1);
			strncat(missing, probe_operands[spec->probe].operand[i],
				sizeof(missing) - strlen(missing) - 1);
		}
		set_err(err, errlen, "'%s': missing %s (%s)", text, missing, usage);
		return -1;
	}
	for (i = 0; i < want; i++) {
		const char *what = probe_operands[spec->probe].operand[i];
		bool is_path = !strcmp(what, "EXE");
		const char *bad;

		if (!*op[i]) {
			set_err(err, errlen, "'%s': missing %s (%s)", text, what, usage);
			return -1;
		}
		if (!strcmp(what, "FUNC") && strchr(op[i], '+') &&
		    (spec->probe == BPF_PAUSE_PROBE__KRETPROBE ||
		     spec->probe == BPF_PAUSE_PROBE__URETPROBE)) {
			set_err(err, errlen, "'%s': a return probe takes no +OFFSET (it fires as FUNC returns)",
				text);
			return -1;
		}
		if (!strcmp(what, "FUNC") && split_offset(op[i], &spec->offset, text, err, errlen))
			return -1;
		if (!*op[i]) {
			set_err(err, errlen, "'%s': missing %s (%s)", text, what, usage);
			return -1;
		}
		bad = bad_char(op[i], is_path);
		if (bad) {
			set_err(err, errlen, "'%s': bad character '%c' in %s '%s'",
				text, *bad, what, op[i]);
			return -1;
		}
	}
	for (i = 0; i < want; i++) {
		val[i] = strdup(op[i]);
		if (!val[i])
			goto nomem;
	}
	spec->text = strdup(text);
	if (!spec->text)
		goto nomem;

	switch (spec->probe) {
	case BPF_PAUSE_PROBE__KPROBE:
	case BPF_PAUSE_PROBE__KRETPROBE:
		spec->func = val[0];
		break;
	case BPF_PAUSE_PROBE__UPROBE:
	case BPF_PAUSE_PROBE__URETPROBE:
		spec->exe = val[0];
		spec->func = val[1];
		break;
	case BPF_PAUSE_PROBE__SDT:
		spec->exe = val[0];
		spec->category = val[1];
		spec->name = val[2];
		break;
	case BPF_PAUSE_PROBE__TRACEPOINT:
	case BPF_PAUSE_PROBE__MAX:
	default:
		spec->category = val[0];
		spec->name = val[1];
		break;
	}
	return 0;
nomem:
	for (i = 0; i < MAX_OPERANDS; i++)
		free(val[i]);
	set_err(err, errlen, "'%s': %s", text, strerror(ENOMEM));
	return -1;
}

static int specs__append(struct bpf_pause_specs *specs, struct bpf_pause_spec *spec,
			 char *err, size_t errlen)
{
	struct bpf_pause_spec *n;

	if (specs->nr >= BPF_PAUSE_MAX_SPECS) {
		set_err(err, errlen, "'%s': more than %d triggers", spec->text,
			BPF_PAUSE_MAX_SPECS);
		return -1;
	}
	n = realloc(specs->specs, (specs->nr + 1) * sizeof(*n));
	if (!n) {
		set_err(err, errlen, "'%s': %s", spec->text, strerror(ENOMEM));
		return -1;
	}
	specs->specs = n;
	specs->specs[specs->nr++] = *spec;
	return 0;
}

/* One SPEC: TYPE:ACTION:OPERANDS. */
static int parse_one(struct bpf_pause_spec *spec, const char *text,
		     char *err, size_t errlen)
{
	char *field[MAX_FIELDS + 1];
	char *copy;
	int nr, ret = -1;

	memset(spec, 0, sizeof(*spec));
	copy = strdup(text);
	if (!copy) {
		set_err(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	if (split_pred(copy, spec, text, err, errlen))
		goto out;
	nr = split_fields(copy, field);

	if (probe_from_name(field[0], &spec->probe)) {
		set_err(err, errlen,
			"'%s': unknown trigger type '%s' (expected kprobe, kretprobe, uprobe, uretprobe, tp, tracepoint or sdt)",
			text, field[0]);
		goto out;
	}
	/* p and r, the first spellings, read as ftrace's probe and return probe. */
	if (nr >= 2 && (!strcmp(field[1], "p") || !strcmp(field[1], "r")))
		spec->short_action = true;
	if (nr < 2 || !*field[1] ||
	    (!spec->short_action && strcmp(field[1], "pause") && strcmp(field[1], "resume"))) {
		bool missing = nr < 2 || !*field[1];

		set_err(err, errlen,
			"'%s': %s action%s%s%s (expected pause or resume: %s)",
			text, missing ? "missing" : "bad", missing ? "" : " '",
			missing ? "" : field[1], missing ? "" : "'",
			probe_operands[spec->probe].usage);
		goto out;
	}
	spec->pause = field[1][0] == 'p';
	ret = spec__set_operands(spec, text, field + 2, nr - 2, err, errlen);
out:
	free(copy);
	return ret;
}

int bpf_pause_specs__parse(struct bpf_pause_specs *specs, const char *str,
			   char *err, size_t errlen)
{
	int nr_old = specs->nr;
	const char *s = str;

	if (!str || !*str) {
		set_err(err, errlen, "empty trigger list (expected SPEC[,SPEC...])");
		return -1;
	}
	for (;;) {
		const char *end = spec_end(s);
		struct bpf_pause_spec spec = { .text = NULL };
		char *text = strndup(s, end - s);

		if (!text) {
			set_err(err, errlen, "%s", strerror(ENOMEM));
			goto fail;
		}
		if (!*text) {
			set_err(err, errlen, "'%s': empty SPEC (stray ',')", str);
			free(text);
			goto fail;
		}
		if (parse_one(&spec, text, err, errlen) ||
		    specs__append(specs, &spec, err, errlen)) {
			spec__exit(&spec);
			free(text);
			goto fail;
		}
		free(text);
		if (!*end)
			return 0;
		s = end + 1;
	}
fail:
	while (specs->nr > nr_old)
		spec__exit(&specs->specs[--specs->nr]);
	return -1;
}

int bpf_pause_specs__add_switch(struct bpf_pause_specs *specs, const char *event,
				bool on, char *err, size_t errlen)
{
	enum bpf_pause_probe probe;
	struct bpf_pause_spec spec;
	char *field[MAX_FIELDS + 1];
	char *copy;
	int nr, ret = -1;

	if (!event || !*event) {
		set_err(err, errlen, "missing EVENT");
		return -1;
	}
	copy = strdup(event);
	if (!copy) {
		set_err(err, errlen, "%s", strerror(ENOMEM));
		return -1;
	}
	memset(&spec, 0, sizeof(spec));
	spec.pause = !on;
	if (split_pred(copy, &spec, event, err, errlen)) {
		free(copy);
		return -1;
	}
	nr = split_fields(copy, field);

	if (!probe_from_name(field[0], &probe) && probe != BPF_PAUSE_PROBE__TRACEPOINT) {
		/* kprobe:FUNC, uprobe:EXE:FUNC, ... */
		spec.probe = probe;
		ret = spec__set_operands(&spec, event, field + 1, nr - 1, err, errlen);
	} else if (nr == 2) {
		/* CATEGORY:NAME, probe:NAME included */
		spec.probe = BPF_PAUSE_PROBE__TRACEPOINT;
		ret = spec__set_operands(&spec, event, field, nr, err, errlen);
	} else {
		set_err(err, errlen,
			"'%s': not a tracepoint or probe (expected CATEGORY:NAME, kprobe:FUNC, kretprobe:FUNC, uprobe:EXE:FUNC, uretprobe:EXE:FUNC or sdt:EXE:PROVIDER:NAME)",
			event);
	}
	if (!ret)
		ret = specs__append(specs, &spec, err, errlen);
	if (ret)
		spec__exit(&spec);
	free(copy);
	return ret;
}

void bpf_pause_specs__exit(struct bpf_pause_specs *specs)
{
	int i;

	for (i = 0; i < specs->nr; i++)
		spec__exit(&specs->specs[i]);
	free(specs->specs);
	specs->specs = NULL;
	specs->nr = 0;
}

static int join_path(char *buf, size_t size, const char *dir, size_t dirlen,
		     const char *name)
{
	int n = snprintf(buf, size, "%.*s/%s", (int)dirlen, dir, name);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static bool same_function(const struct bpf_pause_spec *a, const struct bpf_pause_spec *b)
{
	return !strcmp(a->exe, b->exe) && !strcmp(a->func, b->func) && !a->offset && !b->offset;
}

bool bpf_pause_specs__is_frame(const struct bpf_pause_specs *specs, int i)
{
	const struct bpf_pause_spec *s = &specs->specs[i];
	enum bpf_pause_probe other;

	if (s->probe == BPF_PAUSE_PROBE__UPROBE && !s->pause)
		other = BPF_PAUSE_PROBE__URETPROBE;
	else if (s->probe == BPF_PAUSE_PROBE__URETPROBE && s->pause)
		other = BPF_PAUSE_PROBE__UPROBE;
	else
		return false;
	for (int j = 0; j < specs->nr; j++) {
		const struct bpf_pause_spec *o = &specs->specs[j];

		if (o->probe == other && o->pause != s->pause && same_function(s, o))
			return true;
	}
	return false;
}

int bpf_pause_spec__resolve_exe(const char *exe, char *buf, size_t size)
{
	char path[PATH_MAX], resolved[PATH_MAX];
	const char *dirs;

	if (exe[0] == '~' && (exe[1] == '/' || !exe[1])) {
		const char *home = getenv("HOME");

		if (!home || join_path(path, sizeof(path), home, strlen(home), exe + 1))
			return -1;
	} else if (strchr(exe, '/')) {
		if (snprintf(path, sizeof(path), "%s", exe) >= (int)sizeof(path))
			return -1;
	} else {
		/* A bare name, like the workload's argv[0]: search $PATH. */
		dirs = getenv("PATH");
		if (!dirs)
			dirs = "/usr/local/bin:/usr/bin:/bin";
		for (;;) {
			const char *end = strchrnul(dirs, ':');

			if (!join_path(path, sizeof(path), end == dirs ? "." : dirs,
				       end == dirs ? 1 : end - dirs, exe) &&
			    !access(path, X_OK))
				break;
			if (!*end)
				return -1;
			dirs = end + 1;
		}
	}
	if (!realpath(path, resolved) || strlen(resolved) >= size)
		return -1;
	strcpy(buf, resolved);
	return 0;
}
