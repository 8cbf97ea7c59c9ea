# SPDX-License-Identifier: GPL-2.0
#
# Generic perf event pause/resume: build, boot and test loop.
#
#   make run            boot the VM kernel and show perf at work in it
#   make check          host tests, then every test inside both guests
#   make help           every target and variable
#
# ARCH=arm64 (make kernel/perf/selftests/vm/check ARCH=arm64) works on the
# arm64 guest instead of the x86-64 one: QEMU's virt machine, whose PMUv3
# counts cycles and instructions, with an arm64 Debian root in $(CACHE).
#
# The kernel source is Debian's linux-source-7.2 (pinned below), or your
# own tree with KSRC=/path/to/linux.  Everything built goes to build/; the
# downloaded source is cached in $(CACHE).

KVER_PIN	:= 7.2.13
CACHE		?= $(HOME)/.cache/perf-pause
KSRC		?=
# make fuzz-kernel runs on the debug kernel unless DEBUG= says otherwise.
ifneq ($(filter fuzz-kernel,$(MAKECMDGOALS)),)
DEBUG		?= 1
endif
DEBUG		?= 0
CMD		?= uname -a

B		:= $(CURDIR)/build
H		:= $(CURDIR)/harness
TREE		:= $(B)/linux

# The guest's architecture, from the command line only (a kernel
# developer's shell often exports ARCH).  Not passed on: every script
# names its own.
ifeq ($(origin ARCH),command line)
CHECK_ARCH	:= $(ARCH)
else
ARCH		:= x86_64
CHECK_ARCH	:= all
endif
MAKEOVERRIDES	:= $(filter-out ARCH=%,$(MAKEOVERRIDES))
unexport ARCH
ifeq ($(ARCH),arm64)
AB		:= $(B)/arm64
KARCH		:= arm64
SYSROOT		:= $(CACHE)/arm64/root
ARCH_FRAGMENT	:= perf-pause-vm-arm64.config
KIMAGE_PATH	:= arch/arm64/boot/Image
else ifeq ($(ARCH),x86_64)
AB		:= $(B)
KARCH		:= x86_64
SYSROOT		:=
ARCH_FRAGMENT	:=
KIMAGE_PATH	:= arch/x86/boot/bzImage
else
$(error ARCH=$(ARCH): the guests are x86_64 and arm64)
endif
ifeq ($(DEBUG),1)
KOBJ		:= $(AB)/kernel-debug
FRAGMENTS	:= perf-pause-vm.config $(ARCH_FRAGMENT) perf-pause-vm-debug.config \
		   $(ARCH_FRAGMENT:.config=-debug.config)
else
KOBJ		:= $(AB)/kernel
FRAGMENTS	:= perf-pause-vm.config $(ARCH_FRAGMENT)
endif
KIMAGE		:= $(KOBJ)/$(KIMAGE_PATH)
PERFOBJ		:= $(AB)/perf
PERF		:= $(PERFOBJ)/perf
SELFTESTS	:= $(AB)/selftests

# ccache (when installed) keys paths relative to the clone, so that a
# fresh clone elsewhere (CI's) reuses what this one compiled.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

export KVER_PIN CACHE KSRC DEBUG B H TREE KOBJ KIMAGE PERFOBJ PERF SELFTESTS KARCH SYSROOT CHECK_ARCH

.PHONY: all help deps source tree root x86-only export-patches kernel perf perf-noskel selftests vm run check fuzz fuzz-kernel bench series \
	bisect-check clean distclean

all: kernel perf

help:
	@sed -n '/^## /s/^## //p' $(MAKEFILE_LIST)

## deps          install the Debian packages everything needs (root; idempotent)
deps:
	@$(H)/deps.sh

## source        fetch and cache the pinned kernel source (no-op with KSRC=)
source: deps
ifeq ($(KSRC),)
	@mkdir -p $(B)
	@$(H)/fetch-kernel.sh $(CACHE) $(KVER_PIN) >$(B)/source
endif

## tree          build/linux: pristine source + patches/series (git am) + our files
tree: source
ifeq ($(KSRC),)
	@$(H)/make-tree.sh $(TREE) "$$(cat $(B)/source)" $(CURDIR)
else
	@$(H)/make-tree.sh $(TREE) $(KSRC) $(CURDIR)
endif

## root          ARCH=arm64: the arm64 Debian root the guest boots and perf builds against
root: deps
ifeq ($(ARCH),arm64)
	@$(H)/arm64-root.sh $(CACHE) >/dev/null
endif

## export-patches  write build/linux's commits on the base to patches/ (after committing there)
##               FROM=DIR: from a full tree (a clone of build/series-tree) instead
export-patches:
	@$(H)/export-patches.sh

## kernel        the VM kernel (DEBUG=1: lockdep + KASAN flavour)
kernel: tree
	@$(H)/build-kernel.sh $(TREE) $(KOBJ) $(FRAGMENTS)

## perf          tools/perf from the patched tree, with BPF skeletons
perf: tree root
	@$(H)/build-perf.sh $(TREE) $(PERFOBJ)

## perf-noskel   the same perf without BPF skeletons (its error messages are tested)
perf-noskel: tree root
	@NOSKEL=1 $(H)/build-perf.sh $(TREE) $(AB)/perf-noskel

## selftests     the kselftests and BPF selftests the VM runs (patched uapi, kernel BTF)
selftests: kernel root
	@$(H)/build-selftests.sh $(TREE) $(SELFTESTS)
	@$(H)/build-bpf-selftests.sh $(TREE) $(KOBJ) $(SELFTESTS)/bpf
	@$(H)/build-fuzz-kernel.sh $(SELFTESTS)

## vm            boot the kernel and run CMD='...' in the guest
vm: kernel root
	@VM_ARCH=$(KARCH) VM_ROOT=$(SYSROOT) $(H)/vm-run.sh $(KIMAGE) '$(CMD)'

## run           the demo: record a workload with perf in the guest, report it
run: x86-only kernel perf
	@$(H)/demo.sh

# The demo runs in the x86-64 guest only.
x86-only:
ifneq ($(ARCH),x86_64)
	$(error this target runs in the x86-64 guest only (no ARCH=$(ARCH)))
endif

## check         host tests, then the tests in both guests (ARCH=...: one); ends with "N passed, N failed"
check: deps
	@$(H)/check.sh

## bench         benchmarks in the VM: cost per window, data reduction, paused overhead, scaling
##               (ARCH=arm64: windows on cycles and instructions, beside software events)
bench: kernel perf selftests
	@$(H)/build-bench.sh $(SELFTESTS)/bpf $(AB)/bench
	@BENCH_OUT=$(AB)/bench $(H)/bench.sh

## fuzz          fuzz the perf --bpf-pause spec parser for FUZZ_SECONDS (default 600)
fuzz: deps
	@$(H)/tests/host/bpf-pause-spec.sh $(or $(FUZZ_SECONDS),600)

## fuzz-kernel   fuzz pausing in the guest (pfz): DURATION seconds (600) from SEED (the time),
##               on the debug kernel (DEBUG=0: the normal one), ARCH= either guest;
##               REPLAY=FILE runs a replay file pfz wrote (REPEAT times, 10)
fuzz-kernel: kernel root selftests
	@$(H)/fuzz-kernel.sh

## series        git format-patch series + cover letter in build/series, checkpatch --strict
series: tree
	@$(H)/series.sh

## bisect-check  build the kernel at every commit of the series that changes it, perf where touched,
##               the arm64 kernel and KVM where a commit touches them
bisect-check: series
	@$(H)/bisect-check.sh

## clean         remove build outputs (keeps the cached source)
clean:
	rm -rf $(B)

## distclean     also drop the cached source download
distclean: clean
	rm -rf $(CACHE)
