/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pause_window.bpf.c's trigger predicates: the instructions perf compiled
 * a spec's predicate into, run over the probe's arguments or the
 * tracepoint's fields, the results kept on a bit stack.  Included once,
 * after the maps that hold them.
 */

struct pred_loop {
	void			*ctx;
	struct pause_pred	*pred;
	__u64			hit;
	__u64			stack;	/* results, the top in bit 0 */
};

/*
 * A k/uprobe's argument or return value, as the C type perf was told
 * (the register's low @size bytes, sign-extended if signed).
 */
static __u64 pred_reg(struct pt_regs *regs, struct pause_pred_insn *in)
{
	__u64 v;

	if (!reads_regs)
		return 0;
	/* perf's vmlinux.h has the registers of these (perf refuses others). */
#if defined(__TARGET_ARCH_x86) || defined(__TARGET_ARCH_arm64)
	if (in->term == PAUSE_TERM_RETVAL) {
		v = PT_REGS_RC_CORE(regs);
	} else {
		switch (in->index) {
		case 0:
			v = PT_REGS_PARM1_CORE(regs);
			break;
		case 1:
			v = PT_REGS_PARM2_CORE(regs);
			break;
		case 2:
			v = PT_REGS_PARM3_CORE(regs);
			break;
		case 3:
			v = PT_REGS_PARM4_CORE(regs);
			break;
		case 4:
			v = PT_REGS_PARM5_CORE(regs);
			break;
		default:
			v = PT_REGS_PARM6_CORE(regs);
			break;
		}
	}
#else
	v = 0;
#endif
	switch (in->size) {
	case 1:
		return in->is_signed ? (__u64)(__s8)v : (__u8)v;
	case 2:
		return in->is_signed ? (__u64)(__s16)v : (__u16)v;
	case 4:
		return in->is_signed ? (__u64)(__s32)v : (__u32)v;
	default:
		return v;
	}
}

/* @size bytes at @index of a tracepoint's record: a field. */
static __u64 pred_read(void *ctx, struct pause_pred_insn *in)
{
	void *p = ctx + in->index;
	__u64 v = 0;
	__u32 v32 = 0;
	__u16 v16 = 0;
	__u8 v8 = 0;

	switch (in->size) {
	case 1:
		bpf_probe_read_kernel(&v8, 1, p);
		return in->is_signed ? (__u64)(__s8)v8 : v8;
	case 2:
		bpf_probe_read_kernel(&v16, 2, p);
		return in->is_signed ? (__u64)(__s16)v16 : v16;
	case 4:
		bpf_probe_read_kernel(&v32, 4, p);
		return in->is_signed ? (__u64)(__s32)v32 : v32;
	default:
		bpf_probe_read_kernel(&v, 8, p);
		return v;
	}
}

/* The value of an insn's term now; @v2: a comm's second word. */
static __u64 pred_term(struct pred_loop *l, struct pause_pred_insn *in, __u64 *v2)
{
	struct bpf_pidns_info ns = {};
	char comm[16] = {};
	__u64 v;

	switch (in->term) {
	case PAUSE_TERM_HIT:
		return l->hit;
	case PAUSE_TERM_COMM:
		bpf_get_current_comm(comm, sizeof(comm));
		__builtin_memcpy(v2, comm + 8, 8);
		__builtin_memcpy(&v, comm, 8);
		return v;
	case PAUSE_TERM_CGROUP:
		return bpf_get_current_cgroup_id();
	case PAUSE_TERM_PID:
	case PAUSE_TERM_TID:
		if (perf_init_ns) {
			v = bpf_get_current_pid_tgid();
		} else {
			if (bpf_get_ns_current_pid_tgid(perf_ns_dev, perf_ns_ino, &ns, sizeof(ns)))
				return 0;
			v = (__u64)ns.tgid << 32 | ns.pid;
		}
		return in->term == PAUSE_TERM_PID ? v >> 32 : (__u32)v;
	case PAUSE_TERM_ARG:
	case PAUSE_TERM_RETVAL:
		return pred_reg(l->ctx, in);
	default:
		return pred_read(l->ctx, in);
	}
}

static bool pred_cmp(struct pause_pred_insn *in, __u64 v, __u64 v2)
{
	__u64 w = in->value, flip = in->is_signed ? 1ULL << 63 : 0;
	__u8 op = in->op;

	if (op == PAUSE_OP_AND)
		return v & w;
	/* v2 and value2: a comm's second half, 0 for everything else. */
	if (op == PAUSE_OP_EQ)
		return v == w && v2 == in->value2;
	if (op == PAUSE_OP_NE)
		return v != w || v2 != in->value2;
	/* Signed order is unsigned order with the sign bit flipped. */
	v ^= flip;
	w ^= flip;
	if (op == PAUSE_OP_LT)
		return v < w;
	if (op == PAUSE_OP_LE)
		return v <= w;
	if (op == PAUSE_OP_GT)
		return v > w;
	return v >= w;
}

/* One insn of the postfix filter, in a bpf_loop() callback. */
static long pred_step(__u64 i, void *data)
{
	struct pred_loop *l = data;
	struct pause_pred_insn *in;
	__u64 v, v2 = 0, a, b;

	if (i >= PAUSE_PRED_MAX_INSNS)
		return 1;
	in = &l->pred->insn[i];
	switch (in->kind) {
	case PAUSE_PRED_CMP:
		v = pred_term(l, in, &v2);
		l->stack = (l->stack << 1) | pred_cmp(in, v, v2);
		break;
	case PAUSE_PRED_NOT:
		l->stack ^= 1;
		break;
	default:
		a = l->stack & 1;
		b = (l->stack >> 1) & 1;
		l->stack = (l->stack >> 2) << 1;
		l->stack |= in->kind == PAUSE_PRED_AND ? a & b : a | b;
		break;
	}
	return 0;
}

/*
 * A trigger's predicate and limits (SPEC{...}): whether it acts on this
 * hit of a session thread.  @ctx: a tracepoint's record, or a k/uprobe's
 * registers.
 */
static bool pred_passes(void *ctx, __u32 spec, struct pause_stats *st)
{
	struct pred_loop l = { .ctx = ctx };
	struct pause_pred_count *c;
	__u64 passed;

	if (!has_preds)
		return true;
	l.pred = bpf_map_lookup_elem(&preds, &spec);
	c = bpf_map_lookup_elem(&pred_counts, &spec);
	if (!l.pred || !c)
		return true;
	if (!l.pred->nr && !l.pred->every && !l.pred->max)
		return true;
	l.hit = __sync_add_and_fetch(&c->hits, 1);
	if (l.pred->nr) {
		__u64 result = 0;

		bpf_loop(l.pred->nr, pred_step, &l, 0);
		/*
		 * Through a helper, so that the verifier need not tell each
		 * combination of results apart: it would walk the loop for
		 * every one of them instead of once.
		 */
		bpf_probe_read_kernel(&result, sizeof(result), &l.stack);
		if (!(result & 1))
			goto filtered;
	}
	passed = __sync_add_and_fetch(&c->passed, 1);
	if (l.pred->every > 1 && passed % l.pred->every)
		goto filtered;
	if (l.pred->max && __sync_add_and_fetch(&c->acted, 1) > l.pred->max)
		goto filtered;
	return true;
filtered:
	__sync_fetch_and_add(&st->filtered, 1);
	return false;
}

/*
 * Predicates and timeouts: which of a thread's closes to come must close
 * nothing, their opens having been turned away or timed out.
 */
#define SKIP_MASK	((1ULL << PAUSE_SKIP_COUNT_SHIFT) - 1)

/*
 * pt->skip, changed atomically (a kprobe program may interrupt the
 * thread's own): @push an entry (@skip: its close closes nothing), pop
 * @pop entries, or mark all entries @all skipped.  Returns the innermost
 * entry before the change.
 */
__noinline bool skip_update(struct pause_thread *pt __arg_nonnull, bool push, bool skip,
			    __u32 pop, bool all)
{
	for (int i = 0; i < 4; i++) {
		__u64 old = READ_ONCE(pt->skip), stack = old & SKIP_MASK, new;
		__u64 n = old >> PAUSE_SKIP_COUNT_SHIFT;

		if (push) {
			stack = ((stack << 1) | skip) & SKIP_MASK;
			n = n < PAUSE_SKIP_COUNT_SHIFT ? n + 1 : n;
		} else if (all) {
			stack = n ? SKIP_MASK >> (PAUSE_SKIP_COUNT_SHIFT - n) : 0;
		} else {
			if (pop > n)
				pop = n;
			stack = pop < 64 ? stack >> pop : 0;
			n -= pop;
		}
		new = stack | (n << PAUSE_SKIP_COUNT_SHIFT);
		if (__sync_val_compare_and_swap(&pt->skip, old, new) == old)
			return (old >> PAUSE_SKIP_COUNT_SHIFT) && (old & 1);
	}
	return false;
}

static bool tracks_skips(void)
{
	return has_preds || has_timeouts;
}
