# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest, no network): the modules load and
# unload cleanly, and every KUnit suite under tests/kunit passes.

b=$(rtrs_build_dir)
modprobe -a ib_core rdma_cm
load_unload_rtrs

# The suites may call into rtrs-core: load it under them.
insmod "$b/rtrs-core.ko"
# The rtrs-core suite needs an RDMA device owning 192.0.2.1: rxe0 on veth0.
. "$RTRS_TOP/tests/e2e/topology.sh"
check "veth pair with rxe on both ends" topology_pair
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
# Every suite under tests/kunit, from its source: one whose module was
# not built or does not run its suites fails.  rtrs-session needs a
# server, and rtrs-srv-op-take two CPUs: tests/e2e/session.sh runs them.
srcs=()
for src in "$RTRS_TOP"/tests/kunit/*.c; do
	case $(basename "$src") in
	rtrs-session-test.c | rtrs-srv-op-test.c) ;;
	*) srcs+=("$src") ;;
	esac
done
kunit_run "${srcs[@]}"
check "unload rtrs-core after the suites" rmmod rtrs-core
