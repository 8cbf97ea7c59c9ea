// SPDX-License-Identifier: GPL-2.0
/*
 * Compile a BPF trigger's predicate, SPEC{FILTER; SETTING; ...}, into the
 * postfix program perf's BPF program runs on each hit (struct pause_pred).
 *
 * FILTER is a tracepoint filter (see --filter and the kernel's
 * Documentation/trace/events.rst): TERM OP VALUE, joined by &&, || and !,
 * grouped with parentheses.  TERMs:
 *
 *   arg1 .. arg6   k/uprobes: the function's arguments (integers)
 *   retval         k/uretprobes: the return value
 *   NAME           tracepoints: a field of the record (as in its format)
 *   comm           the thread's name (== and != only, a string)
 *   pid, tid       process and thread id, as perf sees them
 *   cgroup         the thread's cgroup v2 (== and !=, a path)
 *   hit            the trigger's hits by the session's threads so far,
 *                  this one included: hit > 100 && hit <= 200
 *
 * OPs: == != < <= > >= and & (the bits are not all clear).  Arguments,
 * the return value and signed fields compare as signed numbers.
 *
 * SETTINGs: every=N (act on every Nth hit that passes FILTER), max=N (act
 * at most N times), timeout=DURATION (a window this trigger opens closes
 * that long after, at the thread's next trigger hit or context switch;
 * ns, us, ms or s, ns if none).
 *
 * No perf dependencies, so that its test (tests/bpf_pause_spec.c) needs
 * nothing else of perf.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_pause_pred.h"

#define MAX_TOKEN	256

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct pred_parser {
	const struct bpf_pause_spec	*spec;
	const struct bpf_pause_pred_env	*env;
	struct pause_pred		*pred;
	const char			*pos;
	char				*err;
	size_t				errlen;
	int				depth;	/* of the stack the program needs */
	int				max_depth;
	bool				probe_event;	/* a tracepoint spec on a k/uprobe event */
};

static int pred_err(struct pred_parser *p, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen) {
		snprintf(p->err, p->errlen, "'%s': %s", p->spec->text, what);
		for (char *c = p->err; *c; c++) {
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		}
	}
	return -1;
}

static void skip_space(struct pred_parser *p)
{
	while (isspace((unsigned char)*p->pos))
		p->pos++;
}

static bool take(struct pred_parser *p, const char *tok)
{
	size_t n = strlen(tok);

	skip_space(p);
	if (strncmp(p->pos, tok, n))
		return false;
	p->pos += n;
	return true;
}

/* A word: a term, a bare value (a comm, a cgroup path) or a number. */
static int word(struct pred_parser *p, char *buf, size_t size)
{
	size_t n = 0;

	skip_space(p);
	if (*p->pos == '"' || *p->pos == '\'') {
		char quote = *p->pos++;

		while (*p->pos && *p->pos != quote) {
			if (n + 1 >= size)
				return pred_err(p, "'%.20s...' is too long", p->pos - n);
			buf[n++] = *p->pos++;
		}
		buf[n] = '\0';
		if (*p->pos != quote)
			return pred_err(p, "unterminated string %c%s", quote, buf);
		p->pos++;
		buf[n] = '\0';
		return 1;	/* quoted */
	}
	while (*p->pos && (isalnum((unsigned char)*p->pos) ||
			   strchr("_-./+:[]*?@$", *p->pos))) {
		if (n + 1 >= size)
			return pred_err(p, "'%.20s...' is too long", p->pos - n);
		buf[n++] = *p->pos++;
	}
	buf[n] = '\0';
	return 0;
}

static int emit(struct pred_parser *p, struct pause_pred_insn *insn)
{
	struct pause_pred *pred = p->pred;

	if (pred->nr >= PAUSE_PRED_MAX_INSNS)
		return pred_err(p, "the filter has more than %d comparisons and operators",
				PAUSE_PRED_MAX_INSNS);
	pred->insn[pred->nr++] = *insn;
	if (insn->kind == PAUSE_PRED_CMP) {
		if (++p->depth > p->max_depth)
			p->max_depth = p->depth;
	} else if (insn->kind != PAUSE_PRED_NOT) {
		p->depth--;
	}
	return 0;
}

static bool is_entry_probe(enum bpf_pause_probe probe)
{
	return probe == BPF_PAUSE_PROBE__KPROBE || probe == BPF_PAUSE_PROBE__UPROBE;
}

static bool is_return_probe(enum bpf_pause_probe probe)
{
	return probe == BPF_PAUSE_PROBE__KRETPROBE || probe == BPF_PAUSE_PROBE__URETPROBE;
}

/* A tracepoint's field by name: 0, 1 if it has none, or -1 (said). */
static int set_field(struct pred_parser *p, const char *name, struct pause_pred_insn *insn)
{
	unsigned int offset, size;
	bool is_signed;
	int ret;

	if (!p->env || !p->env->field)
		return 1;
	ret = p->env->field(p->env->arg, name, &offset, &size, &is_signed);
	if (ret == -2) {
		p->probe_event = true;
		return 1;
	}
	if (ret == -4)
		return pred_err(p,
				"'%s': perf was built without libtraceevent, which reads the fields of tracepoints",
				name);
	if (ret == -3)
		return pred_err(p,
				"'%s': the common fields are not readable from BPF (the kernel passes its registers there): use pid, tid or comm",
				name);
	if (ret)
		return 1;
	if ((size != 1 && size != 2 && size != 4 && size != 8) || offset > 0xffff)
		return pred_err(p,
				"field '%s' is not an integer (a string, array or pointer): only integer fields can be compared",
				name);
	insn->term = PAUSE_TERM_FIELD;
	insn->index = offset;
	insn->size = size;
	insn->is_signed = is_signed;
	return 0;
}

/* An argument (@argno 0-5) or the return value (-1): a register, signed. */
static int set_reg(struct pred_parser *p, const char *name, int argno, const char *type,
		   struct pause_pred_insn *insn)
{
	static const struct { const char *name; int size; bool is_signed; } types[] = {
		{ "s64", 8, true }, { "u64", 8, false }, { "s32", 4, true }, { "u32", 4, false },
		{ "s16", 2, true }, { "u16", 2, false }, { "s8", 1, true }, { "u8", 1, false },
	};
	size_t i = 0;

	/* A register's low bytes, as the C type the function has (little-endian). */
	if (type) {
		for (i = 0; i < ARRAY_SIZE(types); i++) {
			if (!strcmp(type, types[i].name))
				break;
		}
		if (i == ARRAY_SIZE(types))
			return pred_err(p,
					"'%s': unknown type '%s' (expected s64, u64, s32, u32, s16, u16, s8 or u8)",
					name, type);
	}
	if (!p->env || !p->env->regs)
		return pred_err(p, "'%s': perf reads registers on x86-64 and arm64 only", name);
	/* The BPF side reads the register with PT_REGS_PARMn or PT_REGS_RC. */
	insn->term = argno < 0 ? PAUSE_TERM_RETVAL : PAUSE_TERM_ARG;
	insn->index = argno < 0 ? 0 : argno;
	insn->size = types[i].size;
	insn->is_signed = types[i].is_signed;
	return 0;
}

static int set_term(struct pred_parser *p, const char *name, struct pause_pred_insn *insn)
{
	enum bpf_pause_probe probe = p->spec->probe;
	int ret;

	/* A field wins over a term of the same name, as in --filter. */
	if (probe == BPF_PAUSE_PROBE__TRACEPOINT) {
		ret = set_field(p, name, insn);
		if (ret <= 0)
			return ret;
	}
	if (!strncmp(name, "arg", 3) && name[3] >= '1' && name[3] <= '6' &&
	    (!name[4] || name[4] == ':')) {
		if (!is_entry_probe(probe))
			return pred_err(p,
					"'%s' is for kprobe and uprobe triggers (their function's arguments)",
					name);
		return set_reg(p, name, name[3] - '1', name[4] ? name + 5 : NULL, insn);
	} else if (!strncmp(name, "retval", 6) && (!name[6] || name[6] == ':')) {
		if (!is_return_probe(probe))
			return pred_err(p, "'retval' is for kretprobe and uretprobe triggers");
		return set_reg(p, name, -1, name[6] ? name + 7 : NULL, insn);
	} else if (!strcmp(name, "comm")) {
		insn->term = PAUSE_TERM_COMM;
	} else if (!strcmp(name, "pid")) {
		insn->term = PAUSE_TERM_PID;
	} else if (!strcmp(name, "tid")) {
		insn->term = PAUSE_TERM_TID;
	} else if (!strcmp(name, "cgroup")) {
		insn->term = PAUSE_TERM_CGROUP;
	} else if (!strcmp(name, "hit")) {
		insn->term = PAUSE_TERM_HIT;
	} else if (probe == BPF_PAUSE_PROBE__TRACEPOINT && p->probe_event) {
		return pred_err(p,
				"unknown term '%s': the fields of %s:%s, a probe event, are not readable from BPF (a kprobe trigger's arg1..arg6 are), and it is not comm, pid, tid, cgroup or hit",
				name, p->spec->category, p->spec->name);
	} else if (probe == BPF_PAUSE_PROBE__TRACEPOINT) {
		return pred_err(p,
				"unknown term '%s': %s:%s has no such field (see its format), and it is not comm, pid, tid, cgroup or hit",
				name, p->spec->category, p->spec->name);
	} else {
		return pred_err(p, "unknown term '%s' (expected %s, comm, pid, tid, cgroup or hit)",
				name, is_entry_probe(probe) ? "arg1..arg6" :
				is_return_probe(probe) ? "retval" : "a field of the tracepoint");
	}
	return 0;
}

static int parse_number(struct pred_parser *p, const char *text, __u64 *val)
{
	char *end;

	errno = 0;
	if (text[0] == '-')
		*val = (__u64)strtoll(text, &end, 0);
	else
		*val = strtoull(text, &end, 0);
	if (!*text || *end || errno ||
	    !(isdigit((unsigned char)text[0]) ||
	      (text[0] == '-' && isdigit((unsigned char)text[1]))))
		return pred_err(p, "bad value '%s' (expected a number: 42, -1 or 0x2a)", text);
	return 0;
}

static int comparison(struct pred_parser *p)
{
	static const struct { const char *tok; enum pause_pred_op op; } ops[] = {
		{ "==", PAUSE_OP_EQ }, { "!=", PAUSE_OP_NE }, { "<=", PAUSE_OP_LE },
		{ ">=", PAUSE_OP_GE }, { "<", PAUSE_OP_LT }, { ">", PAUSE_OP_GT },
	};
	struct pause_pred_insn insn = { .kind = PAUSE_PRED_CMP };
	char name[MAX_TOKEN], value[MAX_TOKEN];
	const char *at;
	size_t i;
	int quoted;

	skip_space(p);
	at = p->pos;
	quoted = word(p, name, sizeof(name));
	if (quoted < 0)
		return -1;
	if (quoted || !*name)
		return pred_err(p, "expected a term at '%s'", *at ? at : "the end");
	if (set_term(p, name, &insn))
		return -1;

	skip_space(p);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (take(p, ops[i].tok))
			break;
	}
	if (i < ARRAY_SIZE(ops)) {
		insn.op = ops[i].op;
	} else if (*p->pos == '&' && p->pos[1] != '&') {
		p->pos++;
		insn.op = PAUSE_OP_AND;
	} else {
		return pred_err(p, "expected ==, !=, <, <=, >, >= or & after '%s', at '%s'",
				name, *p->pos ? p->pos : "the end");
	}

	at = p->pos;
	quoted = word(p, value, sizeof(value));
	if (quoted < 0)
		return -1;
	if (!quoted && !*value)
		return pred_err(p, "expected a value after '%s', at '%s'", name,
				*at ? at : "the end");

	switch (insn.term) {
	case PAUSE_TERM_COMM:
		if (insn.op != PAUSE_OP_EQ && insn.op != PAUSE_OP_NE)
			return pred_err(p, "comm takes == or != and a name, as in comm == \"dd\"");
		if (strlen(value) > 15)
			return pred_err(p, "comm '%s' is longer than a thread name (15 characters)",
					value);
		/* The kernel's comm: NUL-padded to 16 bytes, as two words. */
		{
			char c[16] = { 0 };

			memcpy(c, value, strlen(value));
			memcpy(&insn.value, c, 8);
			memcpy(&insn.value2, c + 8, 8);
		}
		break;
	case PAUSE_TERM_CGROUP:
		if (insn.op != PAUSE_OP_EQ && insn.op != PAUSE_OP_NE)
			return pred_err(p,
					"cgroup takes == or != and a path, as in cgroup == /system.slice");
		if (!p->env || !p->env->cgroup_id ||
		    p->env->cgroup_id(p->env->arg, value, &insn.value))
			return pred_err(p,
					"cgroup '%s' not found (a cgroup v2 path, from its mount point)",
					value);
		break;
	default:
		if (quoted)
			return pred_err(p,
					"'%s' compares numbers, not the string \"%s\"",
					name, value);
		if (parse_number(p, value, &insn.value))
			return -1;
		if (value[0] == '-' && !insn.is_signed)
			return pred_err(p, "'%s' is unsigned: %s is never it", name, value);
		break;
	}
	return emit(p, &insn);
}

static int or_expr(struct pred_parser *p);

static int unary(struct pred_parser *p)
{
	if (take(p, "(")) {
		if (or_expr(p))
			return -1;
		if (!take(p, ")"))
			return pred_err(p, "expected ')' at '%s'", *p->pos ? p->pos : "the end");
		return 0;
	}
	if (*p->pos == '!' && p->pos[1] != '=') {
		struct pause_pred_insn not = { .kind = PAUSE_PRED_NOT };

		p->pos++;
		return unary(p) ?: emit(p, &not);
	}
	return comparison(p);
}

/* OPERAND (TOK OPERAND)*: each operator after its operands (postfix). */
static int binary(struct pred_parser *p, const char *tok, enum pause_pred_kind kind,
		  int (*operand)(struct pred_parser *p))
{
	struct pause_pred_insn op = { .kind = kind };

	if (operand(p))
		return -1;
	while (take(p, tok)) {
		if (operand(p) || emit(p, &op))
			return -1;
	}
	return 0;
}

static int and_expr(struct pred_parser *p)
{
	return binary(p, "&&", PAUSE_PRED_AND, unary);
}

static int or_expr(struct pred_parser *p)
{
	return binary(p, "||", PAUSE_PRED_OR, and_expr);
}

static int parse_filter(struct pred_parser *p, const char *text)
{
	p->pos = text;
	if (or_expr(p))
		return -1;
	skip_space(p);
	if (*p->pos)
		return pred_err(p, "unexpected '%s' in the filter (expected && or ||)", p->pos);
	/* The BPF program's stack of results is one 64-bit word. */
	if (p->max_depth > 64)
		return pred_err(p, "the filter nests too deep");
	return 0;
}

/* timeout=DURATION: ns, us, ms or s. */
static int parse_duration(struct pred_parser *p, const char *text, __u64 *ns)
{
	static const struct { const char *unit; __u64 mult; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 }, { "", 1 },
	};
	char *end;
	__u64 v;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (!isdigit((unsigned char)*text) || errno)
		goto bad;
	for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (!v || v > ~0ULL / units[i].mult)
				goto bad;
			*ns = v * units[i].mult;
			return 0;
		}
	}
bad:
	return pred_err(p, "bad timeout '%s' (a duration above 0: 500us, 10ms, 2s; ns if no unit)",
			text);
}

/* every=N, max=N, timeout=DURATION; 1 if @part is not a setting. */
static int parse_setting(struct pred_parser *p, const char *part)
{
	static const char * const names[] = { "every", "max", "timeout" };
	const char *eq = strchr(part, '=');
	char name[16], value[MAX_TOKEN];
	int quoted;
	size_t n;
	__u64 v;

	if (!eq || eq == part || (eq[1] && strchr("=<>", eq[1])) || strchr("!<>", eq[-1]))
		return 1;
	while (isspace((unsigned char)*part))
		part++;
	n = eq - part;
	while (n && isspace((unsigned char)part[n - 1]))
		n--;
	if (n >= sizeof(name))
		return 1;
	memcpy(name, part, n);
	name[n] = '\0';
	for (n = 0; n < ARRAY_SIZE(names); n++) {
		if (!strcmp(name, names[n]))
			break;
	}
	if (n == ARRAY_SIZE(names))
		return pred_err(p,
				"unknown setting '%s' (expected every=N, max=N or timeout=DURATION; a comparison takes ==)",
				name);
	p->pos = eq + 1;
	quoted = word(p, value, sizeof(value));
	if (quoted < 0)
		return -1;
	if (quoted)
		return pred_err(p, "bad %s \"%s\" (not a string)", name, value);
	skip_space(p);
	if (*p->pos || !*value) {
		const char *typed = eq + 1;

		while (isspace((unsigned char)*typed))
			typed++;
		return pred_err(p, "bad %s '%s'", name, typed);
	}
	if (!strcmp(name, "timeout"))
		return parse_duration(p, value, &p->pred->timeout_ns);
	if (!isdigit((unsigned char)value[0]) || parse_number(p, value, &v) || !v ||
	    (!strcmp(name, "every") && v > 0xffffffffULL))
		return pred_err(p, "bad %s '%s' (a count above 0)", name, value);
	if (!strcmp(name, "every"))
		p->pred->every = v;
	else
		p->pred->max = v;
	return 0;
}

int bpf_pause_pred__compile(struct pause_pred *pred, const struct bpf_pause_spec *spec,
			    const struct bpf_pause_pred_env *env, char *err, size_t errlen)
{
	struct pred_parser p = {
		.spec = spec, .env = env, .pred = pred, .err = err, .errlen = errlen,
	};
	char *copy, *part, *next;
	bool filter = false;
	int ret = 0;

	memset(pred, 0, sizeof(*pred));
	if (!spec->pred)
		return 0;
	copy = strdup(spec->pred);
	if (!copy)
		return pred_err(&p, "%s", strerror(ENOMEM));

	/* ';' separates the filter and the settings (not inside quotes). */
	for (part = copy; part; part = next) {
		char quote = 0, *c;

		for (c = part; *c && (quote || *c != ';'); c++) {
			if (quote && *c == quote)
				quote = 0;
			else if (!quote && (*c == '"' || *c == '\''))
				quote = *c;
		}
		next = *c ? c + 1 : NULL;
		*c = '\0';
		p.pos = part;
		skip_space(&p);
		if (!*p.pos) {
			if (next || part == copy)
				ret = pred_err(&p, "empty part in '{%s}'", spec->pred);
			if (ret)
				break;
			continue;
		}
		ret = parse_setting(&p, part);
		if (ret <= 0) {
			if (ret)
				break;
			continue;
		}
		if (filter) {
			ret = pred_err(&p, "a second filter '%s' (join comparisons with && or ||)",
				       part);
			break;
		}
		filter = true;
		p.depth = 0;
		p.max_depth = 0;
		ret = parse_filter(&p, part);
		if (ret)
			break;
	}
	free(copy);
	if (ret)
		memset(pred, 0, sizeof(*pred));
	return ret;
}
