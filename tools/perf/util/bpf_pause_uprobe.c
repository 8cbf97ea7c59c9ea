// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe triggers of --bpf-pause scoped to the session's processes.
 *
 * libbpf attaches a uprobe either for every process (pid -1: each one
 * that runs the binary takes the trap, and the BPF program then ignores
 * it), or through the uprobe PMU for one process, whose event cannot be
 * inherited: the processes the workload forks and execs (a shell script,
 * make) would not be trapped.  So when a session knows its processes
 * (per-task sessions, and -a/-C with --bpf-pause-workload), each uprobe
 * trigger becomes a uprobe trace event of perf's own,
 * perf_pause_PERFPID/sN in tracefs, with:
 *
 *  - a carrier: a perf event of it bound to the session's first thread,
 *    not inherited, to which the BPF program is attached.  A trace event
 *    runs its programs once per hit its filter lets through, whichever of
 *    its perf events let it; the carrier outlives its thread.
 *
 *  - scopes: one inherited perf event of it per thread perf was given;
 *    the uprobe filter lets through the address spaces of their targets,
 *    so those threads' processes and the ones they create, before and
 *    after exec, and no other.
 *
 * libbpf resolves FUNC (symbol versions, bare library names) as for any
 * other uprobe, by a first attach to perf itself that is read back
 * (bpf_link_get_info_by_fd()) and dropped.  The group name holds perf's
 * pid and a random tag, as two perfs in different pid namespaces may have
 * the same pid, and tracefs would add a probe to an existing event of the
 * same name instead of refusing it.  Trace events left behind by a perf
 * that died are removed by the next one: one still in use is busy, and
 * tracefs refuses to remove it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <api/fs/tracing_path.h>

#include "bpf_pause_spec.h"
#include "bpf_pause_uprobe.h"
#include "debug.h"

#define GROUP_PREFIX	"perf_pause_"

struct scoped_uprobe {
	char	name[64];	/* GROUP/EVENT in tracefs */
	long	id;
	bool	pause;		/* closes windows: scoped first */
	int	*fds;		/* this run's scopes */
	int	nr_fds;
};

struct bpf_pause_uprobes {
	int			nr;
	unsigned int		tag;		/* of the group name, see above */
	bool			inherit;	/* scopes follow fork (the events do) */
	struct scoped_uprobe	*probes;	/* one a uprobe trigger or SDT marker site */
};

static int write_uprobe_events(const char *cmd)
{
	char path[PATH_MAX];
	ssize_t len = strlen(cmd);
	int fd, ret;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracing_path_mount());
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = write(fd, cmd, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

/* Remove the trace events of perfs that are gone ("p:perf_pause_PID/sN ..."). */
static void remove_stale(void)
{
	char path[PATH_MAX], line[PATH_MAX + 128], cmd[128];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracing_path_mount());
	fp = fopen(path, "r");
	if (!fp)
		return;
	while (fgets(line, sizeof(line), fp)) {
		char *group = strstr(line, ":" GROUP_PREFIX), *end;
		long pid;

		if (!group)
			continue;
		group++;
		pid = strtol(group + strlen(GROUP_PREFIX), &end, 10);
		if (*end != '_' || pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		group[strcspn(group, "\n ")] = '\0';
		snprintf(cmd, sizeof(cmd), "-:%s", group);
		write_uprobe_events(cmd);
	}
	fclose(fp);
}

struct bpf_pause_uprobes *bpf_pause_uprobes__new(bool inherit)
{
	struct bpf_pause_uprobes *up = zalloc(sizeof(*up));
	struct timespec ts;

	if (!up)
		return NULL;
	remove_stale();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	up->tag = (unsigned int)(ts.tv_nsec ^ (ts.tv_sec << 20) ^ getpid());
	up->inherit = inherit;
	return up;
}

/* The file and offset libbpf resolves @func+@offset of @path to. */
static int resolve(struct bpf_program *prog, const char *path, const char *func,
		   unsigned long offset, unsigned long ref_ctr, char *file, size_t size,
		   unsigned long *off)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = func, .ref_ctr_offset = ref_ctr);
	struct bpf_link_info info;
	u32 len = sizeof(info);
	struct bpf_link *link;
	int err;

	link = bpf_program__attach_uprobe_opts(prog, getpid(), path, offset, &opts);
	if (!link)
		return -1;
	memset(&info, 0, sizeof(info));
	info.perf_event.uprobe.file_name = (u64)(unsigned long)file;
	info.perf_event.uprobe.name_len = size;
	err = bpf_link_get_info_by_fd(bpf_link__fd(link), &info, &len);
	bpf_link__destroy(link);
	if (err || info.type != BPF_LINK_TYPE_PERF_EVENT ||
	    info.perf_event.type != BPF_PERF_EVENT_UPROBE)
		return -2;
	*off = info.perf_event.uprobe.offset;
	return 0;
}

static int open_trace_event(long id, pid_t pid, bool inherit)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.type		= PERF_TYPE_TRACEPOINT,
		.config		= id,
		.sample_period	= 1,
		.inherit	= inherit,
	};

	return syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static long read_id(const char *name)
{
	char path[PATH_MAX];
	long id = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/events/%s/id", tracing_path_mount(), name);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &id) != 1)
		id = -1;
	fclose(fp);
	return id;
}

static bool trace_event_exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/%s", tracing_path_mount(), name);
	return access(path, F_OK) == 0;
}

int bpf_pause_uprobes__attach(struct bpf_pause_uprobes *up, struct bpf_program *prog,
			      const char *path, const char *func, unsigned long offset,
			      unsigned long ref_ctr, bool retprobe, bool pause, u64 cookie,
			      pid_t carrier, struct bpf_link **link)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	char file[PATH_MAX], cmd[PATH_MAX + 128];
	struct scoped_uprobe *p;
	unsigned long off;
	int ret, fd;

	p = realloc(up->probes, (up->nr + 1) * sizeof(*p));
	if (!p)
		return -1;
	up->probes = p;
	p = &up->probes[up->nr];
	memset(p, 0, sizeof(*p));
	ret = resolve(prog, path, func, offset, ref_ctr, file, sizeof(file), &off);
	if (ret)
		return ret;
	/* tracefs splits its commands at blanks. */
	if (strpbrk(file, " \t\n"))
		return -2;
	snprintf(p->name, sizeof(p->name), GROUP_PREFIX "%d_%08x/s%d", (int)getpid(), up->tag,
		 up->nr);
	if (trace_event_exists(p->name))
		return -2;
	/* An SDT marker's semaphore: "PATH:0xOFFSET(0xREF_CTR)". */
	if (ref_ctr)
		snprintf(cmd, sizeof(cmd), "%c:%s %s:0x%lx(0x%lx)", retprobe ? 'r' : 'p', p->name,
			 file, off, ref_ctr);
	else
		snprintf(cmd, sizeof(cmd), "%c:%s %s:0x%lx", retprobe ? 'r' : 'p', p->name,
			 file, off);
	if (write_uprobe_events(cmd)) {
		pr_debug("bpf-pause: cannot add '%s' to uprobe_events: %s\n", cmd, strerror(errno));
		return -2;
	}
	p->id = read_id(p->name);
	fd = p->id < 0 ? -1 : open_trace_event(p->id, carrier, false);
	if (fd >= 0) {
		*link = bpf_program__attach_perf_event_opts(prog, fd, &opts);
		if (*link) {
			p->pause = pause;
			up->nr++;
			return 0;
		}
		close(fd);
	}
	pr_debug("bpf-pause: cannot attach to trace event %s: %s\n", p->name, strerror(errno));
	snprintf(cmd, sizeof(cmd), "-:%s", p->name);
	write_uprobe_events(cmd);
	return -2;
}

static void unscope(struct scoped_uprobe *p)
{
	while (p->nr_fds > 0)
		close(p->fds[--p->nr_fds]);
	zfree(&p->fds);
}

static int scope_one(struct scoped_uprobe *p, pid_t pid, bool inherit)
{
	int fd, *fds;

	fds = realloc(p->fds, (p->nr_fds + 1) * sizeof(*fds));
	if (!fds)
		return -1;
	p->fds = fds;
	fd = open_trace_event(p->id, pid, inherit);
	/* Gone already: nothing to trap. */
	if (fd < 0)
		return errno == ESRCH ? 0 : -1;
	p->fds[p->nr_fds++] = fd;
	return 0;
}

/* A uretprobe arms at entry: closes first, as the links were attached. */
int bpf_pause_uprobes__scope_add(struct bpf_pause_uprobes *up, const pid_t *pids, int nr)
{
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < up->nr; i++) {
			struct scoped_uprobe *p = &up->probes[i];

			if (p->pause != !pass)
				continue;
			for (int t = 0; t < nr; t++) {
				if (scope_one(p, pids[t], up->inherit))
					return -1;
			}
		}
	}
	return 0;
}

int bpf_pause_uprobes__scope(struct bpf_pause_uprobes *up, const pid_t *pids, int nr)
{
	for (int i = 0; i < up->nr; i++)
		unscope(&up->probes[i]);
	return bpf_pause_uprobes__scope_add(up, pids, nr);
}

void bpf_pause_uprobes__delete(struct bpf_pause_uprobes *up)
{
	char cmd[128];

	if (!up)
		return;
	for (int i = 0; i < up->nr; i++) {
		unscope(&up->probes[i]);
		snprintf(cmd, sizeof(cmd), "-:%s", up->probes[i].name);
		if (write_uprobe_events(cmd))
			pr_debug("bpf-pause: cannot remove trace event %s: %s\n",
				 up->probes[i].name, strerror(errno));
	}
	free(up->probes);
	free(up);
}
