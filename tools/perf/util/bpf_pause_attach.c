// SPDX-License-Identifier: GPL-2.0
/*
 * --bpf-pause: attach each trigger's program to its probe (kprobe,
 * kretprobe, uprobe, uretprobe, tracepoint, SDT marker, or a perf probe
 * trace event), saying which spec and what to do when it cannot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include <bpf/libbpf.h>
#include <api/fs/tracing_path.h>
#include <perf/cpumap.h>
#include <symbol/kallsyms.h>

#include "../perf-sys.h"
#include "bpf_pause.h"
#include "bpf_pause_internal.h"
#include "bpf_pause_uprobe.h"
#include "bpf_skel/pause_window.h"
#include "bpf_skel/pause_window.skel.h"
#include "debug.h"
#include "dso.h"
#include "map.h"
#include "probe-file.h"
#include "strfilter.h"
#include "strlist.h"
#include "symbol.h"
#include "tp_pmu.h"

/* A module's symbols read "name\t[module]". */
static int kallsyms_is(void *arg, const char *name, char type __maybe_unused,
		       u64 start __maybe_unused)
{
	size_t len = strlen(arg);

	return !strncmp(name, arg, len) && (!name[len] || name[len] == '\t');
}

/* kallsyms has @func: tells "not found" from "found but not probeable". */
static bool kallsyms_has(const char *func)
{
	/* 1 if found, 0 if not; -1, unreadable, says nothing about it. */
	return kallsyms__parse("/proc/kallsyms", (void *)func, kallsyms_is) != 0;
}

static struct bpf_link *attach_kprobe(struct bpf_pause_session *s,
				      const struct bpf_pause_spec *spec, u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_kprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie,
		    .offset = spec->offset);
	struct bpf_link *link;
	int err;

	link = bpf_program__attach_kprobe_opts(s->skel->progs.pause_probe, spec->func, &opts);
	err = errno;
	if (!link && !kallsyms_has(spec->func))
		pr_err("--%s: '%s': kernel function '%s' not found\n",
		       spec->option, spec->text, spec->func);
	else if (!link)
		pr_err("--%s: '%s': cannot probe kernel function '%s': %s\n",
		       spec->option, spec->text, spec->func, strerror(err));
	return link;
}

/* A bare library name ("libc.so.6"), which ld.so would search. */
static bool is_bare_library(const char *exe)
{
	return !strchr(exe, '/') && strstr(exe, ".so.");
}

/* Where ld.so would find bare library @name ("libstdc++.so.6"). */
static int find_library(const char *name, char *buf, size_t size)
{
	static const char * const dirs[] = {
		"/lib64", "/usr/lib64", "/lib", "/usr/lib",
#ifdef __x86_64__
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
#elif defined(__aarch64__)
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
#endif
	};
	const char *env = getenv("LD_LIBRARY_PATH");
	char *copy = env ? strdup(env) : NULL, *dir, *save = NULL;
	char path[PATH_MAX];
	int found = -1;

	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && found;
	     dir = strtok_r(NULL, ":", &save))
		found = snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
			access(path, R_OK) ? -1 : 0;
	free(copy);
	for (size_t i = 0; found && i < ARRAY_SIZE(dirs); i++)
		found = snprintf(path, sizeof(path), "%s/%s", dirs[i], name) >= (int)sizeof(path) ||
			access(path, R_OK) ? -1 : 0;
	if (found || !realpath(path, buf) || strlen(buf) >= size)
		return -1;
	return 0;
}

/* EXE of @spec as a real path: a path, ~/path, a command, or libNAME.so.N. */
static int uprobe_exe(const struct bpf_pause_spec *spec, char *path, size_t size)
{
	if (!bpf_pause_spec__resolve_exe(spec->exe, path, size))
		return 0;
	if (!is_bare_library(spec->exe))
		pr_err("--%s: '%s': EXE '%s' not found (give a path, ~/path, a command in $PATH, or a library as libNAME.so.N)\n",
		       spec->option, spec->text, spec->exe);
	else if (find_library(spec->exe, path, size))
		pr_err("--%s: '%s': no library '%s' in LD_LIBRARY_PATH or the usual library directories\n",
		       spec->option, spec->text, spec->exe);
	else
		return 0;
	return -1;
}

/* @sym is named FUNC (its first @len characters), with any @VERSION cut. */
static bool uprobe_sym_is(const struct symbol *sym, const char *func, size_t len)
{
	const char *at;

	if (strncmp(sym->name, func, len) || (sym->name[len] && sym->name[len] != '@'))
		return false;
	/* perf's own "NAME@plt" for the PLT entries that call NAME */
	at = strrchr(sym->name, '@');
	return !at || strcmp(at, "@plt");
}

/* A FUNC that is a number: a file offset, 0x hex or decimal, in @path. */
static int uprobe_file_offset(const struct bpf_pause_spec *spec, const char *path,
			      unsigned long *off)
{
	bool hex = spec->func[0] == '0' && (spec->func[1] == 'x' || spec->func[1] == 'X');
	struct stat st;
	char *end;

	errno = 0;
	*off = strtoul(spec->func, &end, hex ? 16 : 10);
	if (*end || errno || (!hex && spec->func[0] == '0' && spec->func[1])) {
		pr_err("--%s: '%s': FUNC '%s' is neither a symbol nor a file offset (0x1c40, or decimal)\n",
		       spec->option, spec->text, spec->func);
		return -1;
	}
	*off += spec->offset;
	if (!stat(path, &st) && *off >= (unsigned long)st.st_size) {
		pr_err("--%s: '%s': file offset %#lx is past the end of %s (%lld bytes)\n",
		       spec->option, spec->text, *off, path, (long long)st.st_size);
		return -1;
	}
	return 0;
}

/*
 * The file offset of FUNC+OFFSET in @path, the uprobe's place, from perf's
 * symbol tables, computed as perf probe -x does (symbol versions are not
 * in them: a name given as FUNC@VERSION is matched by FUNC alone).  A
 * FUNC that is a number is the file offset itself, as uprobe_events
 * shows it.
 */
static int uprobe_offset(const struct bpf_pause_spec *spec, const char *path,
			 unsigned long *off)
{
	bool aliases = symbol_conf.allow_aliases, demangle = symbol_conf.demangle;
	size_t len = strcspn(spec->func, "@");
	struct symbol *sym, *found = NULL, *last = NULL;
	int nr = 0, nr_ifunc = 0;
	char where[256] = "";
	struct rb_node *nd;
	struct map *map;

	if (isdigit((unsigned char)spec->func[0]))
		return uprobe_file_offset(spec, path, off);
	if (!strcmp(spec->func + len, "@plt")) {
		pr_err("--%s: '%s': a PLT entry is not a function: name the function it calls\n",
		       spec->option, spec->text);
		return -1;
	}
	if (spec->func[len])
		pr_warning("--%s: '%s': perf's symbol tables hold no symbol versions: '%.*s' of any version\n",
			   spec->option, spec->text, (int)len, spec->func);
	symbol__elf_init();
	map = dso__new_map(path);
	if (!map) {
		pr_err("--%s: '%s': %s\n", spec->option, spec->text, strerror(ENOMEM));
		return -1;
	}
	/* Every name of an address (malloc and __libc_malloc), as written. */
	symbol_conf.allow_aliases = true;
	symbol_conf.demangle = false;
	if (map__load(map) < 0) {
		pr_err("--%s: '%s': cannot read the symbols of %s\n", spec->option, spec->text,
		       path);
		goto out;
	}
	/* In address order: the names of one address are neighbours. */
	map__for_each_symbol(map, sym, nd) {
		if (!uprobe_sym_is(sym, spec->func, len))
			continue;
		/* An IFUNC's address is its resolver's, run once at load. */
		if (symbol__type(sym) != STT_FUNC) {
			nr_ifunc += symbol__type(sym) == STT_GNU_IFUNC;
			continue;
		}
		if (last && last->start == sym->start)
			continue;
		if (nr++ < 4) {
			size_t used = strlen(where);

			scnprintf(where + used, sizeof(where) - used, "%s%#llx", last ? ", " : "",
				  (unsigned long long)map__unmap_ip(map, sym->start));
		}
		last = sym;
		if (!found)
			found = sym;
	}
	if (!found && nr_ifunc) {
		pr_err("--%s: '%s': '%s' in %s is an IFUNC, whose resolver runs once at load: probe the implementation it picks ('perf probe -F -x %s' lists the functions)\n",
		       spec->option, spec->text, spec->func, path, path);
	} else if (!found) {
		pr_err("--%s: '%s': symbol '%s' not found in %s ('perf probe -F -x %s' lists the functions)\n",
		       spec->option, spec->text, spec->func, path, path);
	} else if (nr > 1) {
		pr_err("--%s: '%s': symbol '%s' is ambiguous in %s: %d functions have that name, at file offsets %s%s (name one by its offset: EXE:0x...)\n",
		       spec->option, spec->text, spec->func, path, nr, where,
		       nr > 4 ? ", ..." : "");
		found = NULL;
	} else if (spec->offset && found->end > found->start &&
		   spec->offset >= found->end - found->start) {
		pr_err("--%s: '%s': offset %#lx is past the end of '%s' (%llu bytes)\n",
		       spec->option, spec->text, spec->offset, spec->func,
		       (unsigned long long)(found->end - found->start));
		found = NULL;
	} else {
		if (nr_ifunc)
			pr_warning("--%s: '%s': '%s' in %s is an IFUNC too, the version programs link against: this probes the other one\n",
				   spec->option, spec->text, spec->func, path);
		*off = map__unmap_ip(map, found->start) + spec->offset;
	}
out:
	symbol_conf.allow_aliases = aliases;
	symbol_conf.demangle = demangle;
	map__put(map);
	return found ? 0 : -1;
}

/*
 * At file offset @offset of @path, in the session's processes only if it
 * knows them (s->uprobes) and tracefs lets perf add trace events; for
 * every process otherwise.
 */
static struct bpf_link *attach_uprobe_where(struct bpf_pause_session *s,
					    const struct bpf_pause_spec *spec, const char *path,
					    unsigned long offset, unsigned long ref_ctr,
					    u64 cookie, bool retprobe)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = retprobe, .bpf_cookie = cookie,
		    .ref_ctr_offset = ref_ctr);
	struct bpf_link *link = NULL;

	if (s->uprobes) {
		int ret = bpf_pause_uprobes__attach(s->uprobes, s->skel->progs.pause_probe, path,
						    offset, ref_ctr, retprobe, spec->pause,
						    cookie, s->carrier, &link);

		if (ret != -2)
			return link;
		if (!s->scoped_warned)
			pr_warning("--%s: cannot add uprobe trace events in %s: uprobes trap every process running their binary (only the session's open windows)\n",
				   spec->option, tracing_path_mount());
		s->scoped_warned = true;
	}
	return bpf_program__attach_uprobe_opts(s->skel->progs.pause_probe, -1, path, offset,
					       &opts);
}

static struct bpf_link *attach_uprobe(struct bpf_pause_session *s,
				      const struct bpf_pause_spec *spec, u64 cookie, bool retprobe)
{
	char path[PATH_MAX];
	struct bpf_link *link;
	unsigned long off;

	if (uprobe_exe(spec, path, sizeof(path)) || uprobe_offset(spec, path, &off))
		return NULL;
	link = attach_uprobe_where(s, spec, path, off, 0, cookie, retprobe);
	if (!link)
		pr_err("--%s: '%s': cannot probe '%s' at file offset %#lx of %s: %s\n",
		       spec->option, spec->text, spec->func, off, path, strerror(errno));
	return link;
}

int bpf_pause_session__add_link(struct bpf_pause_session *s, struct bpf_link *link)
{
	struct bpf_link **links = realloc(s->links, (s->nr_links + 1) * sizeof(*links));

	if (!links) {
		bpf_link__destroy(link);
		return -1;
	}
	s->links = links;
	s->links[s->nr_links++] = link;
	return 0;
}

/*
 * An SDT (USDT) marker: a uprobe on each site of PROVIDER:NAME in EXE,
 * with its semaphore (reference counter) counted up while attached, as
 * perf probe does for sdt_ events.  The sites but the last are added to
 * the session here.
 */
static struct bpf_link *attach_sdt(struct bpf_pause_session *s __maybe_unused,
				   const struct bpf_pause_spec *spec, u64 cookie __maybe_unused,
				   bool retprobe __maybe_unused)
{
#ifdef HAVE_GELF_GETNOTE_SUPPORT
	struct bpf_link *link = NULL;
	struct sdt_note *note;
	char path[PATH_MAX];
	LIST_HEAD(notes);
	bool found = false;
	int err;

	if (uprobe_exe(spec, path, sizeof(path)))
		return NULL;
	symbol__elf_init();
	err = get_sdt_note_list(&notes, path);
	if (err < 0) {
		if (err == -ENOENT)
			pr_err("--%s: '%s': %s has no SDT markers (they may be in a library it uses: name that library as EXE)\n",
			       spec->option, spec->text, path);
		else
			pr_err("--%s: '%s': cannot read the SDT markers of %s\n", spec->option,
			       spec->text, path);
		cleanup_sdt_note_list(&notes);
		return NULL;
	}
	list_for_each_entry(note, &notes, note_list) {
		unsigned long loc, ref_ctr;

		if (strcmp(note->provider, spec->category) || strcmp(note->name, spec->name))
			continue;
		if (link && bpf_pause_session__add_link(s, link)) {
			pr_err("--%s: '%s': %s\n", spec->option, spec->text, strerror(ENOMEM));
			link = NULL;
			break;
		}
		found = true;
		loc = note->bit32 ? note->addr.a32[SDT_NOTE_IDX_LOC] :
				    note->addr.a64[SDT_NOTE_IDX_LOC];
		ref_ctr = note->bit32 ? note->addr.a32[SDT_NOTE_IDX_REFCTR] :
					note->addr.a64[SDT_NOTE_IDX_REFCTR];
		link = attach_uprobe_where(s, spec, path, loc, ref_ctr, cookie, false);
		if (!link) {
			pr_err("--%s: '%s': cannot probe SDT marker %s:%s at 0x%lx in %s: %s\n",
			       spec->option, spec->text, spec->category, spec->name, loc, path,
			       strerror(errno));
			break;
		}
	}
	if (!found)
		pr_err("--%s: '%s': no SDT marker %s:%s in %s ('readelf -n %s' lists its markers)\n",
		       spec->option, spec->text, spec->category, spec->name, path, path);
	cleanup_sdt_note_list(&notes);
	return link;
#else
	pr_err("--%s: '%s': this perf was built with a libelf that cannot read SDT notes\n",
	       spec->option, spec->text);
	return NULL;
#endif
}

/* @event (GROUP:NAME) is one of the probe events listed in tracefs file @file. */
static bool probe_file_has(const char *file, struct strfilter *filter, const char *event)
{
	struct strlist *found = strlist__new(NULL, NULL);
	int fd = open_trace_file(file, false);
	bool ret;

	ret = found && fd >= 0 && !probe_file__get_events(fd, filter, found) &&
	      strlist__has_entry(found, event);
	if (fd >= 0)
		close(fd);
	strlist__delete(found);
	return ret;
}

/*
 * perf probe and SDT events (probe:NAME, probe_EXE:NAME, sdt_LIB:NAME) are
 * kprobe and uprobe trace events, as perf probe lists them: they take a
 * kprobe program, not a tracepoint one.  Quiet: a kernel without tracefs,
 * kprobe or uprobe events has no such event.
 */
bool bpf_pause__trace_event_is_probe(const char *category, const char *name)
{
	struct strfilter *filter;
	char event[512];
	bool found;

	if (!tracing_path_mount())
		return false;
	snprintf(event, sizeof(event), "%s:%s", category, name);
	filter = strfilter__new(event, NULL);
	if (!filter)
		return false;
	found = probe_file_has("kprobe_events", filter, event) ||
		probe_file_has("uprobe_events", filter, event);
	strfilter__delete(filter);
	return found;
}

/*
 * Through a perf event of the trace event on one online CPU: the programs
 * of a kprobe or uprobe trace event run for every hit, on any CPU and task
 * (the perf event only carries them).  The link closes the perf event.
 */
static struct bpf_link *attach_probe_event(struct bpf_pause_session *s,
					   const struct bpf_pause_spec *spec, u64 cookie)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	/* Counting: it only carries the program, and samples nothing. */
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
	};
	struct perf_cpu_map *online = perf_cpu_map__new_online_cpus();
	int cpu = online ? perf_cpu_map__cpu(online, 0).cpu : 0;
	struct bpf_link *link;
	int id, fd;

	perf_cpu_map__put(online);

	id = tp_pmu__id(spec->category, spec->name);
	if (id < 0) {
		pr_err("--%s: '%s': cannot read the id of probe event '%s:%s'\n",
		       spec->option, spec->text, spec->category, spec->name);
		return NULL;
	}
	attr.config = id;
	fd = sys_perf_event_open(&attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		pr_err("--%s: '%s': cannot open probe event '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
		return NULL;
	}
	link = bpf_program__attach_perf_event_opts(s->skel->progs.pause_probe_event, fd, &opts);
	if (!link) {
		pr_err("--%s: '%s': cannot attach to probe event '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
		close(fd);
	}
	return link;
}

static struct bpf_link *attach_tracepoint(struct bpf_pause_session *s,
					  const struct bpf_pause_spec *spec, u64 cookie,
					  bool retprobe __maybe_unused)
{
	LIBBPF_OPTS(bpf_tracepoint_opts, opts, .bpf_cookie = cookie);
	struct bpf_link *link;

	if (spec->probe_event)
		return attach_probe_event(s, spec, cookie);
	link = bpf_program__attach_tracepoint_opts(s->skel->progs.pause_tracepoint,
						   spec->category, spec->name, &opts);
	if (!link && errno == ENOENT)
		pr_err("--%s: '%s': tracepoint '%s:%s' not found ('perf list tracepoint' lists them)\n",
		       spec->option, spec->text, spec->category, spec->name);
	else if (!link)
		pr_err("--%s: '%s': cannot attach to tracepoint '%s:%s': %s\n",
		       spec->option, spec->text, spec->category, spec->name, strerror(errno));
	return link;
}

static const struct {
	struct bpf_link *(*attach)(struct bpf_pause_session *s,
				   const struct bpf_pause_spec *spec, u64 cookie, bool retprobe);
	bool retprobe;
} probe_attach[BPF_PAUSE_PROBE__MAX] = {
	[BPF_PAUSE_PROBE__KPROBE]	= { attach_kprobe, false },
	[BPF_PAUSE_PROBE__KRETPROBE]	= { attach_kprobe, true },
	[BPF_PAUSE_PROBE__UPROBE]	= { attach_uprobe, false },
	[BPF_PAUSE_PROBE__URETPROBE]	= { attach_uprobe, true },
	[BPF_PAUSE_PROBE__TRACEPOINT]	= { attach_tracepoint, false },
	[BPF_PAUSE_PROBE__SDT]		= { attach_sdt, false },
};

/* Attach @spec's program to its probe, with @cookie for the program. */
struct bpf_link *bpf_pause__attach_spec(struct bpf_pause_session *s,
					const struct bpf_pause_spec *spec, u64 cookie)
{
	return probe_attach[spec->probe].attach(s, spec, cookie,
						 probe_attach[spec->probe].retprobe);
}
