/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pause_window.bpf.c's frame windows: the stack of frames a thread's frame
 * probes opened windows in, and the windows closed when their frames are
 * found gone (longjmp(), exceptions).  Included once, after the windows'
 * bookkeeping it uses.
 *
 * A frame window ends with its function's frame: a function left by
 * longjmp() or an exception never fires its uretprobe (the uretprobe
 * machinery drops such returns when it next finds their stack gone, and
 * tells no one), so the thread's next entry into or return from a frame
 * probe's function closes the windows whose frames it finds gone, as the
 * uretprobe machinery finds them: what the thread did in between is
 * counted, and the boundary is marked PAUSE_BOUNDARY_UNWOUND.  The
 * attach cookie says which probes are frame probes (PAUSE_COOKIE_FRAME).
 */

/* The user stack pointer at a uprobe (x86 and arm64 both call it sp). */
struct pt_regs___pw {
	unsigned long sp;
} __attribute__((preserve_access_index));

/* arm64's general registers, x30 the link register. */
struct pt_regs___pwlr {
	unsigned long regs[31];
} __attribute__((preserve_access_index));

/* Where the uretprobe machinery points hijacked returns (kernel/events/uprobes.c). */
struct xol_area___pw {
	unsigned long vaddr;
} __attribute__((preserve_access_index));

struct uprobes_state___pw {
	struct xol_area___pw *xol_area;
} __attribute__((preserve_access_index));

struct mm_struct___pw {
	struct uprobes_state___pw uprobes_state;
} __attribute__((preserve_access_index));

/*
 * The link register at a uprobe's hit, 0 where the return address is
 * elsewhere: at a function's entry, arm64 has it in x30.
 */
static __u64 link_register(struct pt_regs *ctx)
{
	if (ret_addr_at != PAUSE_RET_LR ||
	    !bpf_core_field_exists(((struct pt_regs___pwlr *)0)->regs))
		return 0;
	return ((struct pt_regs___pwlr *)ctx)->regs[30];
}

/*
 * A frame probe's entry at the stack pointer of the innermost frame is a
 * call chained to it (FUNC tail-calling FUNC, or a loop branching back to
 * FUNC's first instruction: the return address, on the stack on x86 and
 * in the link register @lr on arm64, is already the uretprobe
 * trampoline, and both returns will fire there), not a new call after
 * that frame was left.
 */
static bool chained_call(struct task_struct *task, __u64 sp, __u64 lr)
{
	struct mm_struct___pw *mm = (void *)task->mm;
	__u64 ret = 0, trampoline;

	if (!bpf_core_field_exists(mm->uprobes_state) ||
	    !bpf_core_field_exists(((struct uprobes_state___pw *)0)->xol_area) ||
	    !bpf_core_field_exists(((struct xol_area___pw *)0)->vaddr))
		return false;
	trampoline = BPF_CORE_READ(mm, uprobes_state.xol_area, vaddr);
	if (!trampoline)
		return false;
	switch (ret_addr_at) {
	case PAUSE_RET_STACK:
		return !bpf_probe_read_user(&ret, sizeof(ret), (void *)sp) &&
		       ret == trampoline;
	case PAUSE_RET_LR:
		return lr == trampoline;
	default:
		return false;
	}
}

/* A frame whose close closes nothing: its open was turned away, or it expired. */
static bool frame_skipped(struct pause_thread *pt, struct pause_frame *f)
{
	return f->skipped || f->expiry != READ_ONCE(pt->expiries);
}

static struct pause_frame *top_frame(struct pause_thread *pt)
{
	__u32 n = pt->nr_frames;

	if (!n || n > PAUSE_MAX_FRAMES)
		return NULL;
	return &pt->frames[(n - 1) & (PAUSE_MAX_FRAMES - 1)];
}

/*
 * Close @pt's windows down to @depth, all those a frame's function opened
 * (and the deeper ones, whose frames were not tracked): false if there
 * were none.  Windows it inherited are the outer ones.  *@last: none is
 * left open; *@own, with *@last: the outermost was @pt's own, so it was
 * marked open in this thread (a forked child returning through its
 * parent's frame closes the parent's window, and its own inside it).
 */
__noinline bool close_to(struct pause_thread *pt __arg_nonnull, __u32 depth,
			 bool *last __arg_nonnull, bool *own __arg_nonnull)
{
	for (int i = 0; i < 8; i++) {
		__u64 old = READ_ONCE(pt->depths), new;
		__u32 inherited = inherited_of(old);

		if (depth_of(old) <= depth)
			return false;
		*own = !inherited;
		if (inherited > depth)
			inherited = depth;
		new = ((__u64)inherited << 32) | depth;
		if (__sync_val_compare_and_swap(&pt->depths, old, new) == old) {
			*last = !depth;
			return true;
		}
	}
	return false;
}

/*
 * Close the windows of @pt's frames that are gone at a frame probe's hit
 * with user stack pointer @sp and link register @lr (see chained_call()):
 * at an entry (@close false) those opened at
 * or below @sp (the same call site again, or an outer one) unless the
 * call is chained to the innermost, at a return those more than the
 * popped return address below it.
 */
static __always_inline void close_unwound(void *ctx, struct task_struct *task,
					  struct pause_thread *pt, struct pause_stats *st,
					  __u64 sp, __u64 lr, bool close)
{
	bool chained = !close && top_frame(pt) && top_frame(pt)->sp == sp &&
		       chained_call(task, sp, lr);
	struct pause_frame *f;
	bool last = false, own = false;

	for (int i = 0; i < PAUSE_MAX_FRAMES; i++) {
		f = top_frame(pt);
		if (!f || (close ? sp <= f->sp + sizeof(long) : sp < f->sp || chained))
			break;
		__u32 was = depth_of(READ_ONCE(pt->depths));

		pt->nr_frames--;
		/* A frame whose open was turned away, or expired: its close will not come. */
		if (frame_skipped(pt, f)) {
			skip_update(pt, false, false, 1, false);
			continue;
		}
		if (!close_to(pt, f->depth, &last, &own))
			continue;
		/* The closes of the windows unwound will not come. */
		if (tracks_skips() && was > f->depth)
			skip_update(pt, false, false, was - f->depth, false);
		if (!last)
			continue;
		follow(task, pt);
		if (own) {
			__sync_fetch_and_add(&st->unwound, 1);
			mark_boundary(ctx, true, PAUSE_BOUNDARY_UNWOUND);
			window_end(pt);
		}
	}
}

/*
 * A frame window opens at @sp: the outermost PAUSE_MAX_FRAMES are tracked,
 * and closing one (by its return, or once it is gone) closes the deeper
 * ones too.
 */
static void push_frame(struct pause_thread *pt, __u64 sp, bool skipped)
{
	__u32 n = pt->nr_frames;

	if (n < PAUSE_MAX_FRAMES) {
		/* Before the depth: an expiry in between leaves it expired. */
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].expiry = READ_ONCE(pt->expiries);
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].sp = sp;
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].depth = depth_of(READ_ONCE(pt->depths));
		pt->frames[n & (PAUSE_MAX_FRAMES - 1)].skipped = skipped;
		pt->nr_frames = n + 1;
	}
}

/*
 * The return at @sp of the innermost tracked frame (not of a deeper,
 * untracked one): pop it, and *@depth is the depth to close down to.
 */
static bool pop_frame(struct pause_thread *pt, __u64 sp, __u32 *depth)
{
	struct pause_frame *f = top_frame(pt);

	if (!f || sp < f->sp)
		return false;
	/* Expired: the windows opened inside it since, all of them. */
	*depth = f->expiry != READ_ONCE(pt->expiries) ? 0 : f->depth;
	pt->nr_frames--;
	return true;
}
