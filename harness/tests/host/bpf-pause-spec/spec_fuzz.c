// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for tools/perf/util/bpf_pause_spec.c: any byte string
 * as a --bpf-pause list and as a --switch-on EVENT.  Whatever the input,
 * the parser must return 0 with well-formed specs or -1 with a one-line
 * message, and free everything (ASan/LSan catch the rest).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_pause_pred.h"
#include "bpf_pause_spec.h"

/* Tracepoints have one field, 'f'; no cgroup exists. */
static int fuzz_field(void *arg, const char *name, unsigned int *offset, unsigned int *size,
		      bool *is_signed)
{
	(void)arg;
	*offset = 8;
	*size = 4;
	*is_signed = true;
	return strcmp(name, "f") ? -1 : 0;
}

static const struct bpf_pause_pred_env fuzz_env = { .field = fuzz_field };

/* Each spec's predicate compiles, or fails with a one-line message. */
static void check_preds(const struct bpf_pause_specs *specs)
{
	for (int i = 0; i < specs->nr; i++) {
		struct pause_pred pred;
		char err[256] = "";

		if (bpf_pause_pred__compile(&pred, &specs->specs[i], &fuzz_env, err, sizeof(err))) {
			if (!err[0] || strchr(err, '\n'))
				abort();
		} else if (pred.nr > PAUSE_PRED_MAX_INSNS) {
			abort();
		}
	}
}

static void check(const struct bpf_pause_specs *specs, int ret, const char *err)
{
	if (ret && (!err[0] || strchr(err, '\n')))
		abort();
	for (int i = 0; i < specs->nr; i++) {
		const struct bpf_pause_spec *s = &specs->specs[i];

		if (s->probe >= BPF_PAUSE_PROBE__MAX || !s->text)
			abort();
		bool named = s->probe == BPF_PAUSE_PROBE__TRACEPOINT ||
			     s->probe == BPF_PAUSE_PROBE__SDT;

		/* CATEGORY (or PROVIDER) and NAME, or FUNC: never both. */
		if ((s->category == NULL) == named || (s->name == NULL) == named)
			abort();
		if ((s->func == NULL) != named)
			abort();
		if ((s->exe == NULL) == (s->probe == BPF_PAUSE_PROBE__UPROBE ||
					 s->probe == BPF_PAUSE_PROBE__URETPROBE ||
					 s->probe == BPF_PAUSE_PROBE__SDT))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bpf_pause_specs specs = { 0 };
	char err[256] = "";
	char *str = malloc(size + 1);
	int ret;

	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';

	ret = bpf_pause_specs__parse(&specs, str, err, sizeof(err));
	check(&specs, ret, err);
	check_preds(&specs);
	err[0] = '\0';
	ret = bpf_pause_specs__add_switch(&specs, str, size & 1, err, sizeof(err));
	check(&specs, ret, err);

	bpf_pause_specs__exit(&specs);
	free(str);
	return 0;
}
