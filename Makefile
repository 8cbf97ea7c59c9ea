# SPDX-License-Identifier: GPL-2.0
#
# Generic perf event pause/resume: build, boot and test loop.
#
#   make run            boot the VM kernel and show perf at work in it
#   make check          host tests, then every test inside the VM
#   make help           every target and variable
#
# The kernel source is Debian's linux-source-7.2 (pinned below), or your
# own tree with KSRC=/path/to/linux.  Everything built goes to build/; the
# downloaded source is cached in $(CACHE).

KVER_PIN	:= 7.2.13
CACHE		?= $(HOME)/.cache/perf-pause
KSRC		?=
DEBUG		?= 0
CMD		?= uname -a

B		:= $(CURDIR)/build
H		:= $(CURDIR)/harness
TREE		:= $(B)/linux
ifeq ($(DEBUG),1)
KOBJ		:= $(B)/kernel-debug
FRAGMENTS	:= perf-pause-vm.config perf-pause-vm-debug.config
else
KOBJ		:= $(B)/kernel
FRAGMENTS	:= perf-pause-vm.config
endif
BZIMAGE		:= $(KOBJ)/arch/x86/boot/bzImage
PERFOBJ		:= $(B)/perf
PERF		:= $(PERFOBJ)/perf

export KVER_PIN CACHE KSRC DEBUG B H TREE KOBJ BZIMAGE PERFOBJ PERF

.PHONY: all help deps source tree export-patches kernel perf perf-noskel selftests vm run check fuzz bench series \
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

## export-patches  write build/linux's commits on the base to patches/ (after committing there)
export-patches:
	@$(H)/export-patches.sh

## kernel        the VM kernel (DEBUG=1: lockdep + KASAN flavour)
kernel: tree
	@$(H)/build-kernel.sh $(TREE) $(KOBJ) $(FRAGMENTS)

## perf          tools/perf from the patched tree, with BPF skeletons
perf: tree
	@$(H)/build-perf.sh $(TREE) $(PERFOBJ)

## perf-noskel   the same perf without BPF skeletons (its error messages are tested)
perf-noskel: tree
	@NOSKEL=1 $(H)/build-perf.sh $(TREE) $(B)/perf-noskel

## selftests     the kselftests and BPF selftests the VM runs (patched uapi, kernel BTF)
selftests: kernel
	@$(H)/build-selftests.sh $(TREE) $(B)/selftests
	@$(H)/build-bpf-selftests.sh $(TREE) $(KOBJ) $(B)/selftests/bpf

## vm            boot the kernel and run CMD='...' in the guest
vm: kernel
	@$(H)/vm-run.sh $(BZIMAGE) '$(CMD)'

## run           the demo: record a workload with perf in the guest, report it
run: kernel perf
	@$(H)/demo.sh

## check         host tests, then the in-VM tests; ends with "N passed, N failed"
check: deps
	@$(H)/check.sh

## bench         benchmarks in the VM: cost per window, data reduction, paused overhead, scaling
bench: kernel perf selftests
	@$(H)/build-bench.sh $(B)/selftests/bpf $(B)/bench
	@$(H)/bench.sh

## fuzz          fuzz the perf --bpf-pause spec parser for FUZZ_SECONDS (default 600)
fuzz: deps
	@$(H)/tests/host/bpf-pause-spec.sh $(or $(FUZZ_SECONDS),600)

## series        git format-patch series + cover letter in build/series, checkpatch --strict
series: tree
	@$(H)/series.sh

## bisect-check  build the kernel (and perf where touched) at every commit of the series
bisect-check: series
	@$(H)/bisect-check.sh

## clean         remove build outputs (keeps the cached source)
clean:
	rm -rf $(B)

## distclean     also drop the cached source download
distclean: clean
	rm -rf $(CACHE)
