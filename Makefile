# SPDX-License-Identifier: GPL-2.0-or-later
#
# rtrs: RDMA transport, out-of-tree build.
#
#   make [KDIR=<kernel build dir>] [W=1]   build the modules
#   make check [RTRS_CYCLES=N] [MPATH_CYCLES=N] [RNBD_CYCLES=N] [CHECK_ONLY="NAME..."]
#                                          build everything, run all tests
#                                          (session open/close cycles, default
#                                          50; remove/add path cycles and
#                                          rnbd map/unmap cycles, default 5)
#   make run [KERNEL=6.1|6.12]             the main job (see README.md), on
#                                          Debian's stock kernel of that
#                                          series (default 6.1)
#   make bench [BENCH_QUICK=1] [BENCH_REPS=N] [BENCH_PROFILE=1]
#              [BENCH_ONLY="point..."] [BENCH_STACKS="stack..."]
#                                          ours against mainline rtrs,
#                                          nvme-rdma and raw rxe (and
#                                          where the CPU goes)
#   make soak [SOAK_MINUTES=N] [SOAK_SEED=N] [SOAK_EVENTS="path rxe"]
#                                          verified rnbd IO over two paths
#                                          while links, devices, paths and
#                                          the server fail (default 20 min)
#   make clean                             remove what the above made
#
# KDIR defaults to the running kernel's build tree when it exists, else to
# the test kernel in the cache (tests/harness/test-kernel.sh builds it).

RTRS_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rtrs
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(RTRS_CACHE)/test-kernel/build)

.PHONY: all modules clean check run bench soak faults kernel

all: modules

modules:
	@test -f $(KDIR)/Makefile || { echo "no kernel build tree in $(KDIR):" \
		"set KDIR, or build the test kernel with 'make kernel'" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

kernel:
	tests/harness/deps.sh
	tests/harness/test-kernel.sh >/dev/null

check:
	tests/harness/check.sh

run:
	KERNEL=$(KERNEL) tests/harness/run.sh

bench:
	BENCH_QUICK=$(BENCH_QUICK) BENCH_REPS=$(BENCH_REPS) BENCH_PROFILE="$(BENCH_PROFILE)" \
		BENCH_ONLY="$(BENCH_ONLY)" BENCH_STACKS="$(BENCH_STACKS)" BENCH_LINK=$(BENCH_LINK) \
		tests/harness/bench.sh

soak:
	SOAK_MINUTES=$(SOAK_MINUTES) SOAK_SEED=$(SOAK_SEED) SOAK_EVENTS="$(SOAK_EVENTS)" tests/harness/soak.sh

faults:
	FAULTS_ONLY="$(FAULTS_ONLY)" FAULTS_BUDGET=$(FAULTS_BUDGET) \
		FAULTS_RTRS_BUDGET=$(FAULTS_RTRS_BUDGET) FAULTS_OFFSET=$(FAULTS_OFFSET) \
		FAULTS_QD=$(FAULTS_QD) FAULTS_HOURS=$(FAULTS_HOURS) tests/harness/faults.sh

clean:
	@if [ -f $(KDIR)/Makefile ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	rm -rf build results
