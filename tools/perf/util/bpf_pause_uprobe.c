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
 * perf_pause_PID_TAG/sN in tracefs, with:
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
 * The caller resolves the place, a file and an offset in it, once for
 * both ways.  (The uprobe PMU would give events that die with their file,
 * but an inherited copy of one reads its path again from the forking
 * process's memory and gets a probe of its own, without the program.)
 *
 * Nothing may stay in tracefs after the session, however perf ends:
 *
 *  - a janitor, cloned before the first trace event is added, removes
 *    the session's group once perf is gone (it waits for the end of a pipe
 *    only perf holds), so a SIGKILL, a crash or perf stat's unhandled
 *    SIGTERM leave nothing.  It runs in a session of its own and ignores
 *    the terminal's signals.  (A perf that is its pid namespace's init
 *    takes it along: the next session removes what is left, as below.)
 *
 *  - every session holds a shared flock() on uprobe_events (one inode for
 *    every mount and pid namespace), as does its janitor, which shares the
 *    open file, until it is done.  A session that gets the lock exclusive
 *    knows no other is alive, so the perf_pause_ groups it finds are stale
 *    (perf and janitor both killed) and it removes them; it never judges by
 *    pid, which another namespace or a recycled pid makes wrong.
 *
 * A group goes with one "-:GROUP/" (Linux 6.0 and later, as the kfunc
 * needs anyway), which stops at the first event still in use.
 *
 * The group name holds perf's pid and a random tag, as two perfs in
 * different pid namespaces may have the same pid, and tracefs would add a
 * probe to an existing event of the same name instead of refusing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include <bpf/libbpf.h>
#include <api/fs/tracing_path.h>

#include "bpf_pause_spec.h"
#include "bpf_pause_uprobe.h"
#include "../perf-sys.h"
#include "debug.h"
#include "probe-event.h"
#include "probe-file.h"
#include "strlist.h"
#include "tp_pmu.h"

#define GROUP_PREFIX	"perf_pause_"
#define JANITOR_COMM	"perf-pause-gc"

struct scoped_uprobe {
	char	name[64];	/* GROUP/EVENT in tracefs */
	long	id;
	bool	pause;		/* closes windows: scoped first */
	int	*fds;		/* this run's scopes */
	int	nr_fds;
};

struct bpf_pause_uprobes {
	int			nr;
	bool			inherit;	/* scopes follow fork (the events do) */
	int			fd;		/* uprobe_events, flock()ed shared */
	char			group[48];	/* GROUP_PREFIX PID_TAG */
	char			remove_cmd[64];	/* "-:GROUP/": every event of the group */
	int			janitor_pipe;	/* closed, the janitor cleans up */
	pid_t			janitor;
	struct scoped_uprobe	*probes;	/* one a uprobe trigger or SDT marker site */
};

/*
 * Remove every perf_pause_ group: the caller holds uprobe_events' lock
 * exclusive, so no session that could own one is alive.
 */
static void remove_stale(int fd)
{
	struct strlist *lines = probe_file__get_rawlist(fd);
	struct strlist *groups = strlist__new(NULL, NULL);
	struct str_node *ent;
	char cmd[128];

	if (!lines || !groups)
		goto out;
	/* "p:GROUP/EVENT PATH:0xOFFSET" */
	strlist__for_each_entry(ent, lines) {
		const char *group = strchr(ent->s, ':');
		size_t len;

		if (!group || !strstarts(++group, GROUP_PREFIX))
			continue;
		len = strcspn(group, "/ ");
		if (group[len] == '/' && len < sizeof(cmd) - 4) {
			scnprintf(cmd, sizeof(cmd), "-:%.*s/", (int)len, group);
			strlist__add(groups, cmd);
		}
	}
	strlist__for_each_entry(ent, groups) {
		pr_debug("bpf-pause: removing %s (its perf is gone)\n", ent->s + 2);
		if (write(fd, ent->s, strlen(ent->s)) < 0)
			pr_debug("bpf-pause: cannot remove %s: %s\n", ent->s + 2, strerror(errno));
	}
out:
	strlist__delete(lines);
	strlist__delete(groups);
}

/* Wait this long for a lock another session holds (removing stale groups). */
#define LOCK_TRIES	500	/* of 10 ms */

static int lock_shared(int fd)
{
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };

	for (int i = 0; i < LOCK_TRIES; i++) {
		if (!flock(fd, LOCK_SH | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK && errno != EINTR)
			break;
		nanosleep(&tick, NULL);
	}
	return -1;
}

struct bpf_pause_uprobes *bpf_pause_uprobes__new(bool inherit)
{
	struct bpf_pause_uprobes *up = zalloc(sizeof(*up));
	struct timespec ts;

	if (!up)
		return NULL;
	up->janitor_pipe = -1;
	up->janitor = -1;
	up->inherit = inherit;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(up->group, sizeof(up->group), GROUP_PREFIX "%d_%08x", (int)getpid(),
		 (unsigned int)(ts.tv_nsec ^ (ts.tv_sec << 20) ^ getpid()));
	snprintf(up->remove_cmd, sizeof(up->remove_cmd), "-:%s/", up->group);
	/* Without it, attach() answers -2 and the caller traps every process. */
	up->fd = open_trace_file("uprobe_events", true);
	if (up->fd < 0)
		return up;
	/* perf has no other thread yet to fork meanwhile. */
	fcntl(up->fd, F_SETFD, FD_CLOEXEC);
	if (!flock(up->fd, LOCK_EX | LOCK_NB))
		remove_stale(up->fd);
	/* Without the lock, a session that starts may take our groups for stale. */
	if (lock_shared(up->fd)) {
		pr_debug("bpf-pause: cannot lock uprobe_events: %s\n", strerror(errno));
		close(up->fd);
		up->fd = -1;
	}
	return up;
}

/* @fd, or a copy of it above 4 if it is one of 0-4. */
static int above_4(int fd)
{
	return fd < 5 ? fcntl(fd, F_DUPFD, 5) : fd;
}

/*
 * Keep only *@a and *@b, as 3 and 4; 0, 1 and 2 go to /dev/null, or are
 * closed without it.  Either may be 0-4 (perf run with 0, 1 or 2 closed):
 * copied above 4 first.
 */
static void janitor_close_others(int *a, int *b)
{
	int fa = above_4(*a), fb = above_4(*b);
	int null = open("/dev/null", O_RDWR);

	for (int fd = 0; fd < 3; fd++) {
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	*a = fa < 0 ? -1 : dup2(fa, 3);
	*b = fb < 0 ? -1 : dup2(fb, 4);
#ifdef __GLIBC__
#if __GLIBC_PREREQ(2, 34)
	if (!close_range(5, ~0U, 0))
		return;
#endif
#endif
	for (long fd = 5, max = sysconf(_SC_OPEN_MAX); fd < max && fd < (1 << 20); fd++)
		close(fd);
}

/*
 * The janitor: once perf has closed the pipe (at exit, however it died,
 * or in bpf_pause_uprobes__delete()), remove the session's group.  Only
 * system calls here, as after a fork.
 */
static void __noreturn janitor(int fd, int rd, const char *cmd)
{
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN,
				       SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2, SIGALRM };
	struct timespec tick = { .tv_nsec = 10 * 1000 * 1000 };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	size_t len = strlen(cmd);
	sigset_t none;
	char c;

	/* Cloned with every signal blocked: perf's handlers never run here. */
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		sigaction(ignored[i], &ign, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	setsid();
	prctl(PR_SET_NAME, JANITOR_COMM, 0, 0, 0);
	janitor_close_others(&fd, &rd);
	for (;;) {
		ssize_t n = read(rd, &c, 1);

		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	/* perf's events may still be closing, and keep the group busy: 10 s. */
	for (int i = 0; i < 1000; i++) {
		if (write(fd, cmd, len) == (ssize_t)len || errno != EBUSY)
			break;
		nanosleep(&tick, NULL);
	}
	_exit(0);
}

static int janitor_main(void *arg)
{
	struct bpf_pause_uprobes *up = arg;

	janitor(up->fd, up->janitor_pipe, up->remove_cmd);
}

static int spawn_janitor(struct bpf_pause_uprobes *up)
{
	/* The clone's copy of it: perf's own is never used. */
	static char stack[64 * 1024] __aligned(16);
	sigset_t all, old;
	int pipefd[2], err;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	/*
	 * A fork (a copy of perf, its files too until it closes them) whose
	 * exit sends no SIGCHLD, which perf stat would take for its
	 * workload's.  It shares the open uprobe_events, so the lock.
	 */
	up->janitor_pipe = pipefd[0];
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(janitor_main, stack + sizeof(stack), 0, up);
	err = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(pipefd[0]);
	if (pid < 0) {
		close(pipefd[1]);
		up->janitor_pipe = -1;
		errno = err;
		return -1;
	}
	up->janitor_pipe = pipefd[1];
	up->janitor = pid;
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

	return sys_perf_event_open(&attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static bool trace_event_exists(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/events/%s", tracing_path_mount(), name);
	return access(path, F_OK) == 0;
}

int bpf_pause_uprobes__attach(struct bpf_pause_uprobes *up, struct bpf_program *prog,
			      const char *path, unsigned long offset, unsigned long ref_ctr,
			      bool retprobe, bool pause, u64 cookie, pid_t carrier,
			      struct bpf_link **link)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cookie);
	char event[16], cmd[128];
	struct probe_trace_event tev = {
		.group		= up->group,
		.event		= event,
		.uprobes	= true,
		.point		= {
			.module		= (char *)path,
			.retprobe	= retprobe,
			.ref_ctr_offset	= ref_ctr,	/* an SDT marker's semaphore */
		},
	};
	struct scoped_uprobe *p;
	int fd;

	if (up->fd < 0)
		return -2;
	p = realloc(up->probes, (up->nr + 1) * sizeof(*p));
	if (!p)
		return -1;
	up->probes = p;
	p = &up->probes[up->nr];
	memset(p, 0, sizeof(*p));
	/* tracefs splits its commands at blanks. */
	if (strpbrk(path, " \t\n"))
		return -2;
	snprintf(event, sizeof(event), "s%d", up->nr);
	snprintf(p->name, sizeof(p->name), "%s/%s", up->group, event);
	if (trace_event_exists(p->name))
		return -2;
	if (up->janitor < 0 && spawn_janitor(up))
		pr_debug("bpf-pause: no janitor (%s): a killed perf leaves %s in uprobe_events\n",
			 strerror(errno), up->group);
	tev.point.address = offset;
	if (probe_file__add_event(up->fd, &tev))
		return -2;
	p->id = tp_pmu__id(up->group, event);
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
	if (write(up->fd, cmd, strlen(cmd)) < 0)
		pr_debug("bpf-pause: cannot remove trace event %s: %s\n", p->name, strerror(errno));
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
	bool removed = true;

	if (!up)
		return;
	for (int i = 0; i < up->nr; i++)
		unscope(&up->probes[i]);
	if (up->nr && write(up->fd, up->remove_cmd, strlen(up->remove_cmd)) < 0) {
		pr_debug("bpf-pause: cannot remove the trace events of %s: %s\n", up->group,
			 strerror(errno));
		removed = false;
	}
	if (up->janitor > 0) {
		close(up->janitor_pipe);
		/* It finds nothing to remove: reap it.  Else init will. */
		if (removed)
			waitpid(up->janitor, NULL, __WCLONE);
	}
	if (up->fd >= 0)
		close(up->fd);
	free(up->probes);
	free(up);
}
