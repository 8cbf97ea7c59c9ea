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
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "bpf_pause_obj.h"
#include "bpf_skel/pause_window.h"
#include "cap.h"
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
static bool btf_int(const struct btf *btf, __u32 type, __u32 size, bool *is_signed,
		    bool *is_bool)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, type));

	*is_bool = false;
	if (!t)
		return false;
	if (btf_is_enum(t) || btf_is_enum64(t)) {
		*is_signed = btf_kflag(t);
		return t->size == size;
	}
	if (!btf_is_int(t) || btf_int_offset(t) || btf_int_bits(t) != size * 8)
		return false;
	*is_signed = btf_int_encoding(t) & BTF_INT_SIGNED;
	*is_bool = btf_int_encoding(t) & BTF_INT_BOOL;
	return true;
}

/*
 * A const that is not volatile too is folded into the code by the
 * compiler: setting it in .rodata would change nothing.
 */
static bool btf_volatile(const struct btf *btf, __u32 type)
{
	const struct btf_type *t = btf__type_by_id(btf, type);

	while (t && (btf_is_mod(t) || btf_is_typedef(t))) {
		if (btf_is_volatile(t))
			return true;
		t = btf__type_by_id(btf, t->type);
	}
	return false;
}

/*
 * @value as an integer of @size bytes, decimal or 0x hexadecimal (a bool:
 * 0, 1, true or false): false if it is not one, or does not fit.
 */
static bool parse_value(const char *value, __u32 size, bool is_signed, bool is_bool, __u64 *v)
{
	const char *digits = value + (*value == '-');
	int base = !strncmp(digits, "0x", 2) || !strncmp(digits, "0X", 2) ? 16 : 10;
	unsigned int bits = size * 8;
	char *end;

	if (is_bool && (!strcmp(value, "true") || !strcmp(value, "false"))) {
		*v = !strcmp(value, "true");
		return true;
	}
	/* strto*() would skip spaces, and read "-1" as an unsigned 2^64 - 1. */
	if (!isdigit((unsigned char)*digits))
		return false;
	errno = 0;
	if (is_signed) {
		long long s = strtoll(value, &end, base);

		if (bits < 64 && (s < -(1LL << (bits - 1)) || s >= (1LL << (bits - 1))))
			return false;
		*v = s;
	} else {
		if (*value == '-')
			return false;
		*v = strtoull(value, &end, base);
		if ((bits < 64 && *v >> bits) || (is_bool && *v > 1))
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

/* A global variable: the section it is in (a map of that name), its BTF. */
struct obj_var {
	const char			*sec;
	const struct btf_var_secinfo	*vi;
	const struct btf_type		*var;
	const char			*name;
};

/* Global variables live in .rodata*, .data* and .bss*, not in .maps. */
static bool is_data_sec(const char *name)
{
	return !strncmp(name, ".rodata", 7) || !strncmp(name, ".data", 5) ||
	       !strncmp(name, ".bss", 4);
}

/* Call @fn on each global (not static) variable of @btf until it returns true. */
static bool walk_variables(const struct btf *btf, bool (*fn)(struct obj_var *v, void *arg),
			   void *arg)
{
	for (__u32 id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *sec = btf__type_by_id(btf, id);
		struct obj_var v;

		if (!btf_is_datasec(sec) || !is_data_sec(btf__name_by_offset(btf, sec->name_off)))
			continue;
		v.sec = btf__name_by_offset(btf, sec->name_off);
		v.vi = btf_var_secinfos(sec);
		for (__u32 j = 0; j < btf_vlen(sec); j++, v.vi++) {
			v.var = btf__type_by_id(btf, v.vi->type);
			if (!btf_is_var(v.var) || btf_var(v.var)->linkage == BTF_VAR_STATIC)
				continue;
			v.name = btf__name_by_offset(btf, v.var->name_off);
			if (fn(&v, arg))
				return true;
		}
	}
	return false;
}

struct names {
	char	*buf;
	size_t	size, len;
};

static bool add_name(struct obj_var *v, void *arg)
{
	struct names *n = arg;

	if (n->len < n->size)
		n->len += snprintf(n->buf + n->len, n->size - n->len, "%s%s", n->len ? ", " : "",
				   v->name);
	return false;
}

/* @arg: an obj_var whose name is set; the rest is filled in if found. */
static bool find_named(struct obj_var *v, void *arg)
{
	struct obj_var *want = arg;

	if (strcmp(v->name, want->name))
		return false;
	*want = *v;
	return true;
}

/* Set the global variable @name of @o to @value (a const one must be volatile). */
static int set_variable(struct bpf_pause_obj *o, const char *name, const char *value)
{
	const struct btf *btf = bpf_object__btf(o->obj);
	struct obj_var v = { .name = name };
	char names[256] = "";
	struct names n = { .buf = names, .size = sizeof(names) };
	bool is_signed, is_bool;
	size_t map_size = 0;
	struct bpf_map *map;
	__u32 size;
	void *data;
	__u64 val;

	if (!btf) {
		pr_err("%s: %s: '%s=%s': it has no BTF to find %s in: build it with clang -g\n",
		       OPT, o->file, name, value, name);
		return -1;
	}
	if (!walk_variables(btf, find_named, &v)) {
		walk_variables(btf, add_name, &n);
		pr_err("%s: %s: '%s=%s': it has no global variable %s (it has: %s)\n", OPT,
		       o->file, name, value, name, names[0] ? names : "none");
		return -1;
	}
	size = v.vi->size;
	if (!btf_int(btf, v.var->type, size, &is_signed, &is_bool) ||
	    (size != 1 && size != 2 && size != 4 && size != 8)) {
		pr_err("%s: %s: '%s=%s': %s is not an integer: only integers and bools can be set\n",
		       OPT, o->file, name, value, name);
		return -1;
	}
	if (!strncmp(v.sec, ".rodata", 7) && !btf_volatile(btf, v.var->type)) {
		pr_err("%s: %s: '%s=%s': %s is const, not const volatile: the compiler used its value already\n",
		       OPT, o->file, name, value, name);
		return -1;
	}
	if (!parse_value(value, size, is_signed, is_bool, &val)) {
		pr_err("%s: %s: '%s=%s': not %s that fits in %s's %u bytes\n", OPT, o->file, name,
		       value, is_bool ? "0, 1, true or false" :
		       is_signed ? "an integer" : "a non-negative integer", name, size);
		return -1;
	}
	map = bpf_object__find_map_by_name(o->obj, v.sec);
	data = map ? bpf_map__initial_value(map, &map_size) : NULL;
	if (!data || v.vi->offset + size > map_size) {
		pr_err("%s: %s: '%s=%s': cannot set it: libbpf has no map for %s\n", OPT, o->file,
		       name, value, v.sec);
		return -1;
	}
	store(data + v.vi->offset, val, size);
	return 0;
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

/* The program arrays are perf_pause.h's, to be replaced by perf's. */
static int check_ops_maps(struct bpf_pause_obj *o)
{
	int found = 0;

	for (size_t i = 0; i < ARRAY_SIZE(ops_maps); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(o->obj, ops_maps[i]);

		if (!map)
			continue;
		found++;
		if (bpf_map__type(map) != BPF_MAP_TYPE_PROG_ARRAY ||
		    bpf_map__key_size(map) != sizeof(__u32) ||
		    bpf_map__value_size(map) != sizeof(__u32) ||
		    bpf_map__max_entries(map) != PAUSE_OBJ_NR_OPS) {
			pr_err("%s: %s: its map %s is not the one <bpf/perf_pause.h> declares (a program array of %d): declare it only by including that header\n",
			       OPT, o->file, ops_maps[i], PAUSE_OBJ_NR_OPS);
			return -1;
		}
	}
	if (!found) {
		pr_err("%s: %s: opens no window: include <bpf/perf_pause.h> and call perf_pause_open()/_close() (probes) or perf_pause_tp_open()/_close() (tracepoints)\n",
		       OPT, o->file);
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
	if (check_ops_maps(o))
		goto err;
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

/* Hits the kernel did not run its programs for: another BPF program ran. */
__u64 bpf_pause_obj__misses(const struct bpf_pause_obj *obj)
{
	struct bpf_program *prog;
	__u64 misses = 0;

	bpf_object__for_each_program(prog, obj->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (bpf_program__fd(prog) >= 0 &&
		    !bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			misses += info.recursion_misses;
	}
	return misses;
}

static int attach_program(struct bpf_pause_obj *o, struct bpf_program *prog)
{
	struct bpf_link **links, *link;

	link = bpf_program__attach(prog);
	if (!link && errno == EOPNOTSUPP) {
		/* A bare SEC("kprobe"), SEC("tp"): libbpf's skeletons skip it too. */
		pr_warning("%s: %s: program %s: SEC(\"%s\") names no probe: not attached\n",
			   OPT, o->file, bpf_program__name(prog), bpf_program__section_name(prog));
		return 0;
	}
	if (!link) {
		pr_err("%s: %s: cannot attach program %s (SEC(\"%s\")): %s\n", OPT, o->file,
		       bpf_program__name(prog), bpf_program__section_name(prog), strerror(errno));
		return -1;
	}
	links = realloc(o->links, (o->nr_links + 1) * sizeof(*links));
	if (!links) {
		pr_err("%s: %s: out of memory\n", OPT, o->file);
		bpf_link__destroy(link);
		return -1;
	}
	o->links = links;
	o->links[o->nr_links++] = link;
	return 0;
}

/*
 * Programs that cannot tail-call perf's: the kernel lets a program
 * tail-call only programs of its own type, attach type and sleepability.
 */
static void report_load_error(struct bpf_pause_obj *o, int err)
{
	struct bpf_program *prog;

	if (err == EPERM ||
	    (err == EACCES && !perf_cap__capable(CAP_SYS_ADMIN) &&
	     (!perf_cap__capable(CAP_BPF) || !perf_cap__capable(CAP_PERFMON)))) {
		pr_err("%s: %s: loading it needs CAP_BPF and CAP_PERFMON, or root: %s\n",
		       OPT, o->file, strerror(err));
		return;
	}
	pr_err("%s: %s: cannot load it: %s (run with -v for the verifier log)\n",
	       OPT, o->file, strerror(err));
	bpf_object__for_each_program(prog, o->obj) {
		enum bpf_prog_type type = bpf_program__type(prog);

		if (!bpf_program__autoload(prog) ||
		    (type != BPF_PROG_TYPE_KPROBE && type != BPF_PROG_TYPE_TRACEPOINT) ||
		    (!bpf_program__expected_attach_type(prog) &&
		     !(bpf_program__flags(prog) & BPF_F_SLEEPABLE)))
			continue;
		pr_err("%s: %s: program %s (SEC(\"%s\")) cannot call perf_pause_*(): multi, session and sleepable programs cannot tail-call perf's\n",
		       OPT, o->file, bpf_program__name(prog), bpf_program__section_name(prog));
	}
	pr_err("%s: perf_pause_open()/_close() work in kprobe, kretprobe, uprobe, uretprobe and ksyscall programs, perf_pause_tp_open()/_close() in tp/tracepoint ones\n",
	       OPT);
}

int bpf_pause_obj__attach(struct bpf_pause_obj *o, int ops_fd, int tp_ops_fd)
{
	const int fds[] = { ops_fd, tp_ops_fd };
	struct bpf_program *prog;

	for (size_t i = 0; i < ARRAY_SIZE(ops_maps); i++) {
		struct bpf_map *map = bpf_object__find_map_by_name(o->obj, ops_maps[i]);
		int err;

		if (!map)
			continue;
		/*
		 * An array perf did not fill is not created: a program that
		 * calls the helpers of the other kind fails to load, instead
		 * of opening nothing.
		 */
		err = fds[i] >= 0 ? bpf_map__reuse_fd(map, fds[i]) :
				    bpf_map__set_autocreate(map, false);
		if (err) {
			pr_err("%s: %s: cannot give it perf's %s: %s\n", OPT, o->file, ops_maps[i],
			       strerror(-err));
			return -1;
		}
	}
	if (bpf_object__load(o->obj)) {
		report_load_error(o, errno);
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
