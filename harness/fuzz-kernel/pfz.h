/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pfz: a randomized fuzzer of perf event pausing, with a model of the
 * windows it opens.  A program is a list of operations generated from a
 * seed (gen.c), run by a runner process (exec.c) that a supervisor
 * watches (main.c): a hang, a kernel splat, or a count the model did not
 * predict fails the program, which is then minimized and written out as
 * a replay file.
 */
#ifndef PFZ_H
#define PFZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/perf_event.h>
#include <linux/types.h>

#include "pfz_bpf.h"

#define PFZ_SLOTS	24	/* open events a program juggles */
#define PFZ_MODELS	3	/* modelled groups: exact page-fault counts */
#define PFZ_MAX_OPS	512
#define PFZ_MAP_SLOTS	PFZ_BPF_MAP_SLOTS
#define PFZ_NR_PROGS	PFZ_BPF_PROGS


enum pfz_kind {
	OP_OPEN,	/* a0 slot, a1 event, a2 flags, a3 period, a4 formats, a5 placement */
	OP_CLOSE,	/* a0 slot */
	OP_IOCTL,	/* a0 slot, a1 request, a2 argument (a slot for SET_OUTPUT, SHARE_PAUSE) */
	OP_MMAP,	/* a0 slot, a1 data pages (log2), a2 aux pages (log2, 0: none) */
	OP_READ,	/* a0 slot */
	OP_FAULTS,	/* a0 pages: exactly that many page faults */
	OP_WINDOW,	/* a0 1: open (getppid), 0: close (getpgid) */
	OP_SWITCH,	/* a0 rounds of a forced context switch */
	OP_SLEEP,	/* a0 microseconds */
	OP_SPIN,	/* a0 microseconds */
	OP_MIGRATE,	/* a0 CPU */
	OP_FORK,	/* a0 what the child does, see run_child() */
	OP_THREAD,	/* a0 what the thread does */
	OP_PMU_REG,	/* a0 1: register the test PMUs, 0: unregister (revoke) */
	OP_MAP_SET,	/* a0 map index, a1 slot: put its event in the BPF map */
	OP_MAP_DEL,	/* a0 map index */
	OP_BPF_CTL,	/* a0 program, a1 on, a2 map index | flags, a3 pattern */
	OP_MODEL_OPEN,	/* a0 model group, a1 start paused, a2 inherit */
	OP_MODEL_CLOSE,	/* a0 model group */
	OP_MODEL_IOCTL,	/* a0 model group, a1 0 disable, 1 enable, 2 reset */
	OP_MODEL_CHECK,	/* every open model group's count against the model */
	OP_NR,
};

struct pfz_op {
	uint8_t		kind;
	uint64_t	a[6];
};

struct pfz_prog {
	uint64_t	seed;
	int		nr;
	struct pfz_op	ops[PFZ_MAX_OPS];
};

/* The events a program may open: filled once from the running kernel. */
struct pfz_event {
	const char	*name;
	int		type;		/* -1: not in this kernel */
	uint64_t	config, config1, config2;
	bool		sampling_only;	/* a trigger candidate (tracepoint, probe) */
	bool		hw;		/* a CPU PMU's: pauses only where the PMU can */
	bool		aux;
};

extern struct pfz_event pfz_events[];
extern int pfz_nr_events;
extern int pfz_nr_cpus;
extern char pfz_exe_path[];
extern volatile long pfz_watched;

/* gen.c */
uint64_t pfz_rand(uint64_t *state);
static inline uint64_t pfz_below(uint64_t *s, uint64_t n) { return n ? pfz_rand(s) % n : 0; }
static inline bool pfz_chance(uint64_t *s, int percent) { return (int)pfz_below(s, 100) < percent; }

void pfz_events_init(void);
void pfz_generate(struct pfz_prog *p, uint64_t seed, int nr_ops, bool smp);
const char *pfz_kind_name(int kind);
int pfz_kind_parse(const char *name);
void pfz_write(FILE *f, const struct pfz_prog *p, const char *why);
int pfz_read(FILE *f, struct pfz_prog *p);

/* What running a program found (exec.c). */
struct pfz_result {
	int	failed_op;		/* -1: none */
	char	why[512];		/* a model mismatch, an invariant broken */
	uint64_t ops_run, opens_ok, opens_refused, pmu_reg_refused;
};

/* bpf.c: the kfunc programs, loaded once by the supervisor */
int pfz_bpf_init(char *why, size_t len);	/* 0, or -1 and why */
void pfz_bpf_reset(void);
uint64_t pfz_bpf_calls(void);
void pfz_bpf_print_results(FILE *f);
int pfz_bpf_map_set(int index, int fd);
int pfz_bpf_map_del(int index);
int pfz_bpf_ctl(int prog, bool on, uint32_t slot, uint32_t pattern, int pid);
int pfz_bpf_overflow_fd(void);		/* for PERF_EVENT_IOC_SET_BPF */

void pfz_run(const struct pfz_prog *p, struct pfz_result *r, volatile uint64_t *progress);
extern bool pfz_trace;		/* --trace: each op named before it runs */
void pfz_uprobe_target(int n);

#endif
