// SPDX-License-Identifier: GPL-2.0
/*
 * --bpf-pause-obj=FILE[,NAME=VALUE...]: load a user's BPF object whose
 * programs decide when the current thread's window opens and closes, and
 * attach them by their SEC() names.  They open and close windows by
 * tail-calling perf's own programs through the program arrays of
 * tools/perf/include/bpf/perf_pause.h, which this hands them before the
 * load: the windows then nest, follow threads and are counted exactly as
 * a --bpf-pause trigger's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "bpf_pause_obj.h"
#include "debug.h"

#define OPT	"--bpf-pause-obj"

struct bpf_pause_obj {
	char			*file;
	struct bpf_object	*obj;
	struct bpf_link		**links;
	int			nr_links;
};

/* The names in perf_pause.h: perf's own program arrays. */
static const char * const ops_maps[] = { "perf_pause_ops", "perf_pause_tp_ops" };

/* @type, through typedefs and qualifiers: an integer (or enum) of @size bytes? */
static bool btf_int(const struct btf *btf, __u32 type, __u32 size, bool *is_signed)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, type));

	if (!t)
		return false;
	if (btf_is_enum(t) || btf_is_enum64(t)) {
		*is_signed = btf_kflag(t);
		return t->size == size;
	}
	if (!btf_is_int(t) || btf_int_offset(t) || btf_int_bits(t) != size * 8)
		return false;
	*is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
	return true;
}

/* @value as an integer of @size bytes: false if it is not one, or does not fit. */
static bool parse_value(const char *value, __u32 size, bool is_signed, __u64 *v)
{
	unsigned int bits = size * 8;
	char *end;

	errno = 0;
	if (is_signed) {
		long long s = strtoll(value, &end, 0);

		if (bits < 64 && (s < -(1LL << (bits - 1)) || s >= (1LL << (bits - 1))))
			return false;
		*v = s;
	} else {
		if (*value == '-')
			return false;
		*v = strtoull(value, &end, 0);
		if (bits < 64 && *v >> bits)
			return false;
	}
	return !errno && end != value && !*end;
}

/* Store @v, of @size bytes, in host order. */
static void store(void *p, __u64 v, __u32 size)
{
	__u8 v8 = v;
	__u16 v16 = v;
	__u32 v32 = v;

	switch (size) {
	case 1:
		memcpy(p, &v8, 1);
		break;
	case 2:
		memcpy(p, &v16, 2);
		break;
	case 4:
		memcpy(p, &v32, 4);
		break;
	default:
		memcpy(p, &v, 8);
		break;
	}
}

/* Where the global variables are, in their BTF and in maps of these names. */
static const char * const data_secs[] = { ".rodata", ".data", ".bss" };

/* The global variables it has, for an error about one it has not. */
static void list_variables(struct bpf_pause_obj *o, char *buf, size_t size)
{
	const struct btf *btf = bpf_object__btf(o->obj);
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; btf && i < ARRAY_SIZE(data_secs); i++) {
		int id = btf__find_by_name_kind(btf, data_secs[i], BTF_KIND_DATASEC);
		const struct btf_var_secinfo *vi;
		const struct btf_type *sec;

		if (id < 0)
			continue;
		sec = btf__type_by_id(btf, id);
		vi = btf_var_secinfos(sec);
		for (__u32 j = 0; j < btf_vlen(sec); j++, vi++) {
			const struct btf_type *var = btf__type_by_id(btf, vi->type);

			if (btf_is_var(var) && btf_var(var)->linkage != BTF_VAR_STATIC &&
			    len < size)
				len += snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						btf__name_by_offset(btf, var->name_off));
		}
	}
}

/* Set the global variable @name of @o (const volatile or not) to @value. */
static int set_variable(struct bpf_pause_obj *o, const char *name, const char *value)
{
	const struct btf *btf = bpf_object__btf(o->obj);
	char names[256];

	for (size_t i = 0; btf && i < ARRAY_SIZE(data_secs); i++) {
		int id = btf__find_by_name_kind(btf, data_secs[i], BTF_KIND_DATASEC);
		struct bpf_map *map = bpf_object__find_map_by_name(o->obj, data_secs[i]);
		const struct btf_var_secinfo *vi;
		const struct btf_type *sec;
		size_t map_size = 0;
		bool is_signed;
		void *data;
		__u64 v;

		if (id < 0 || !map)
			continue;
		sec = btf__type_by_id(btf, id);
		vi = btf_var_secinfos(sec);
		for (__u32 j = 0; j < btf_vlen(sec); j++, vi++) {
			const struct btf_type *var = btf__type_by_id(btf, vi->type);

			if (!btf_is_var(var) ||
			    strcmp(btf__name_by_offset(btf, var->name_off), name))
				continue;
			if (!btf_int(btf, var->type, vi->size, &is_signed) ||
			    (vi->size != 1 && vi->size != 2 && vi->size != 4 && vi->size != 8)) {
				pr_err("%s: %s: '%s=%s': %s is not an integer: only integers and bools can be set\n",
				       OPT, o->file, name, value, name);
				return -1;
			}
			if (!parse_value(value, vi->size, is_signed, &v)) {
				pr_err("%s: %s: '%s=%s': not a%s integer that fits in %s's %u bytes\n",
				       OPT, o->file, name, value, is_signed ? "n" : " non-negative",
				       name, vi->size);
				return -1;
			}
			data = bpf_map__initial_value(map, &map_size);
			if (!data || vi->offset + vi->size > map_size) {
				pr_err("%s: %s: '%s': cannot set it\n", OPT, o->file, name);
				return -1;
			}
			store(data + vi->offset, v, vi->size);
			return 0;
		}
	}
	list_variables(o, names, sizeof(names));
	pr_err("%s: %s: '%s=%s': it has no global variable %s (it has: %s)\n", OPT, o->file,
	       name, value, name, names[0] ? names : "none");
	return -1;
}

/* FILE[,NAME=VALUE...]: the settings, once the file is open. */
static int set_variables(struct bpf_pause_obj *o, char *settings)
{
	char *tok, *saveptr = NULL;

	for (tok = strtok_r(settings, ",", &saveptr); tok; tok = strtok_r(NULL, ",", &saveptr)) {
		char *eq = strchr(tok, '=');

		if (!eq || eq == tok || !eq[1]) {
			pr_err("%s: %s: '%s': not NAME=VALUE (a global variable of the object and its value)\n",
			       OPT, o->file, tok);
			return -1;
		}
		*eq = '\0';
		if (set_variable(o, tok, eq + 1))
			return -1;
	}
	return 0;
}

struct bpf_pause_obj *bpf_pause_obj__open(const char *arg)
{
	struct bpf_pause_obj *o = zalloc(sizeof(*o));
	char *settings;
	int err;

	if (!o)
		return NULL;
	o->file = strdup(arg);
	if (!o->file)
		goto err;
	settings = strchr(o->file, ',');
	if (settings)
		*settings++ = '\0';
	if (!o->file[0]) {
		pr_err("%s: '%s': no FILE: give the BPF object first, FILE[,NAME=VALUE...]\n",
		       OPT, arg);
		goto err;
	}
	o->obj = bpf_object__open_file(o->file, NULL);
	err = libbpf_get_error(o->obj);
	if (err) {
		char msg[128];

		o->obj = NULL;
		libbpf_strerror(err, msg, sizeof(msg));
		pr_err("%s: %s: cannot open it as a BPF object (clang --target=bpf -c ...): %s\n",
		       OPT, o->file, msg);
		goto err;
	}
	for (size_t i = 0; i < ARRAY_SIZE(ops_maps); i++) {
		if (bpf_object__find_map_by_name(o->obj, ops_maps[i]))
			break;
		if (i + 1 == ARRAY_SIZE(ops_maps)) {
			pr_err("%s: %s: opens no window: include <bpf/perf_pause.h> and call perf_pause_open()/_close() (probes) or perf_pause_tp_open()/_close() (tracepoints)\n",
			       OPT, o->file);
			goto err;
		}
	}
	if (settings && set_variables(o, settings))
		goto err;
	return o;
err:
	bpf_pause_obj__close(o);
	return NULL;
}

static bool uses(const struct bpf_pause_obj *obj, const char *map, enum bpf_prog_type type)
{
	struct bpf_program *prog;

	if (!bpf_object__find_map_by_name(obj->obj, map))
		return false;
	bpf_object__for_each_program(prog, obj->obj) {
		if (bpf_program__autoload(prog) && bpf_program__type(prog) == type)
			return true;
	}
	return false;
}

bool bpf_pause_obj__uses_probes(const struct bpf_pause_obj *obj)
{
	return uses(obj, ops_maps[0], BPF_PROG_TYPE_KPROBE);
}

bool bpf_pause_obj__uses_tracepoints(const struct bpf_pause_obj *obj)
{
	return uses(obj, ops_maps[1], BPF_PROG_TYPE_TRACEPOINT);
}

static int attach_program(struct bpf_pause_obj *o, struct bpf_program *prog)
{
	struct bpf_link **links, *link;

	link = bpf_program__attach(prog);
	if (!link) {
		int err = errno;

		if (err == EOPNOTSUPP || err == ESRCH || err == ENOENT)
			pr_err("%s: %s: program %s: SEC(\"%s\") names nothing to attach to here (%s): write the probe in it, e.g. SEC(\"kprobe/FUNC\"), SEC(\"uprobe//PATH:FUNC\"), SEC(\"tp/CATEGORY/NAME\")\n",
			       OPT, o->file, bpf_program__name(prog),
			       bpf_program__section_name(prog), strerror(err));
		else
			pr_err("%s: %s: cannot attach program %s (SEC(\"%s\")): %s\n", OPT, o->file,
			       bpf_program__name(prog), bpf_program__section_name(prog),
			       strerror(err));
		return -1;
	}
	links = realloc(o->links, (o->nr_links + 1) * sizeof(*links));
	if (!links) {
		bpf_link__destroy(link);
		return -1;
	}
	o->links = links;
	o->links[o->nr_links++] = link;
	return 0;
}

int bpf_pause_obj__attach(struct bpf_pause_obj *o, int ops_fd, int tp_ops_fd)
{
	const int fds[] = { ops_fd, tp_ops_fd };
	struct bpf_program *prog;

	for (size_t i = 0; i < ARRAY_SIZE(ops_maps); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(o->obj, ops_maps[i]);

		if (map && fds[i] >= 0 && bpf_map__reuse_fd(map, fds[i])) {
			pr_err("%s: %s: its map %s is not the one <bpf/perf_pause.h> declares: %s\n",
			       OPT, o->file, ops_maps[i], strerror(errno));
			return -1;
		}
	}
	if (bpf_object__load(o->obj)) {
		int err = errno;

		/* EACCES from root: the verifier's, not a capability's. */
		if (err == EPERM || (err == EACCES && geteuid()))
			pr_err("%s: %s: loading it needs CAP_BPF and CAP_PERFMON, or root: %s\n",
			       OPT, o->file, strerror(err));
		else
			pr_err("%s: %s: cannot load it: %s (run with -v for the verifier log; perf_pause_open()/_close() work in kprobe and uprobe programs, perf_pause_tp_open()/_close() in tracepoint programs, none sleepable)\n",
			       OPT, o->file, strerror(err));
		return -1;
	}
	bpf_object__for_each_program(prog, o->obj) {
		if (!bpf_program__autoload(prog) || !bpf_program__autoattach(prog))
			continue;
		if (attach_program(o, prog))
			return -1;
	}
	if (!o->nr_links) {
		pr_err("%s: %s: has no program to attach\n", OPT, o->file);
		return -1;
	}
	return 0;
}

void bpf_pause_obj__close(struct bpf_pause_obj *o)
{
	if (!o)
		return;
	while (o->nr_links > 0)
		bpf_link__destroy(o->links[--o->nr_links]);
	free(o->links);
	bpf_object__close(o->obj);
	free(o->file);
	free(o);
}
