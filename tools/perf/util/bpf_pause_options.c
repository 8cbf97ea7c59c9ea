// SPDX-License-Identifier: GPL-2.0
/* Option callbacks of --bpf-pause, --switch-on and --switch-off. */
#include <linux/kernel.h>
#include <subcmd/parse-options.h>

#include "bpf_pause.h"
#include "debug.h"

/* Messages about a spec name the option it came from, as typed. */
static void set_option(struct bpf_pause *bp, const struct option *opt, int first)
{
	for (int i = first; i < bp->specs.nr; i++)
		bp->specs.specs[i].option = opt->long_name;
	if (!bp->option)
		bp->option = opt->long_name;
}

static int add_switch(const struct option *opt, const char *str, bool on)
{
	struct bpf_pause *bp = opt->value;
	int first = bp->specs.nr;
	char err[256];

	if (bpf_pause_specs__add_switch(&bp->specs, str, on, err, sizeof(err))) {
		pr_err("--%s: %s\n", opt->long_name, err);
		return -1;
	}
	set_option(bp, opt, first);
	if (on)
		bp->switch_on = true;
	return 0;
}

int bpf_pause__parse_spec(const struct option *opt, const char *str, int unset)
{
	struct bpf_pause *bp = opt->value;
	int first = bp->specs.nr;
	char err[256];

	if (unset) {
		bpf_pause_specs__exit(&bp->specs);
		return 0;
	}
	if (bpf_pause_specs__parse(&bp->specs, str, err, sizeof(err))) {
		pr_err("--%s: %s\n", opt->long_name, err);
		return -1;
	}
	set_option(bp, opt, first);
	for (int i = first; i < bp->specs.nr; i++) {
		const struct bpf_pause_spec *spec = &bp->specs.specs[i];

		if (spec->short_action)
			pr_warning("--%s: '%s': write '%s' for '%c' (p and r, which read as ftrace's probe and return probe, are deprecated)\n",
				   opt->long_name, spec->text, spec->pause ? "pause" : "resume",
				   spec->pause ? 'p' : 'r');
	}
	return 0;
}

int bpf_pause__parse_switch_on(const struct option *opt, const char *str,
			       int unset __maybe_unused)
{
	return add_switch(opt, str, true);
}

int bpf_pause__parse_switch_off(const struct option *opt, const char *str,
				int unset __maybe_unused)
{
	return add_switch(opt, str, false);
}

int bpf_pause__parse_obj(const struct option *opt, const char *str, int unset)
{
	struct bpf_pause *bp = opt->value;

	if (unset) {
		bp->obj_arg = NULL;
		return 0;
	}
	if (bp->obj_arg) {
		pr_err("--%s: one object only (it has %s already): let it attach all its programs\n",
		       opt->long_name, bp->obj_arg);
		return -1;
	}
	bp->obj_arg = str;
	if (!bp->option)
		bp->option = opt->long_name;
	return 0;
}

void bpf_pause__set_nobuild(struct option *options __maybe_unused)
{
#ifndef HAVE_BPF_PAUSE
	static const char * const names[] = {
		"bpf-pause", "bpf-aux-pause", "switch-on", "switch-off", "bpf-pause-workload",
		"bpf-pause-obj",
	};

	/* Not ignored, as --off-cpu is: everything would be counted. */
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		set_option_nobuild(options, '\0', names[i],
				   "perf was built without bpf_pause (needs BUILD_BPF_SKEL=1 and clang 14 or later)",
				   false);
#endif
}
