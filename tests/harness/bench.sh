#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# make bench: how this project's rtrs, speaking protocol 2.1 (its
# default) and held to 2.0, compares with mainline's, with nvme-rdma and
# with raw rxe, on Debian's stock 6.1 kernel, in one guest boot
# (tests/e2e/bench.sh is the guest side).
#
# Builds, against the stock headers: our modules and rnbd on them;
# mainline's rtrs from the source package (drivers/infiniband/ulp/rtrs,
# with its own Makefile) and rnbd on it; the benchmark users in
# tests/bench/ twice, once against each rtrs.h.  Then boots the stock
# kernel once and measures every stack in turn, and writes:
#
#   results/bench/report.txt   the table: each stack's medians and ratios
#   results/bench/bench.json   the same, and every run's figures
#
#   make bench [BENCH_QUICK=1] [BENCH_REPS=N] [BENCH_PROFILE=1|"point ..."]
#              [BENCH_ONLY="point ..."] [BENCH_STACKS="stack ..."]
#              [BENCH_LINK=ordered|unordered|onecpu]
#
# BENCH_QUICK=1 runs each point for 2-3 s and once, to try the machinery;
# its figures are no benchmark.  BENCH_PROFILE adds a pass that runs the
# named points (1: the 4 KiB points at queue depth 1 and 32) of each stack
# under perf; the report then says where the CPU went (the busiest
# symbols: results/bench/profile.txt) and what each IO cost in CQ polls,
# completions, work items, context switches, wakeups and softirqs.
# BENCH_ONLY and BENCH_STACKS narrow a run to the named points (the raw
# rxe points run only without BENCH_ONLY) and stacks (raw, ours-2.1,
# ours-2.0, mainline, nvme), to look at one figure more closely.  Logs
# go to results/bench/.  BENCH_LINK=unordered lets the veth deliver a
# flow's packets out of order, as the runs before 2026-12-07 measured;
# the default, ordered, keeps each flow on one CPU as a NIC would;
# onecpu receives every flow on CPU 0, so that the CPUs a session's
# flows land on do not depend on the hash of its QP numbers.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
H=$RTRS_TOP/tests/harness
JOB=bench
LOGS=$RTRS_RESULTS/bench
B=$RTRS_TOP/build/bench

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	reps=${BENCH_REPS:-1} fio_s=3 rtrs_s=2 raw_s=2 lat_iters=2000
else
	reps=${BENCH_REPS:-3} fio_s=10 rtrs_s=5 raw_s=5 lat_iters=20000
fi
[[ "$reps" =~ ^[1-9][0-9]*$ ]] || { echo "make bench: BENCH_REPS must be a number" >&2; exit 2; }
# A point's name, as the report gives it.
point_re='(rand)?(read|write)-(4k|124k|128k|1m)-qd[0-9]+'
BENCH_PROFILE=${BENCH_PROFILE:-}
for p in ${BENCH_PROFILE//,/ }; do
	[[ "$p" =~ ^(1|$point_re)$ ]] ||
		{ echo "make bench: BENCH_PROFILE: '$p' is not 1 or a point's name" >&2; exit 2; }
done
BENCH_ONLY=${BENCH_ONLY:-}
for p in ${BENCH_ONLY//,/ }; do
	[[ "$p" =~ ^$point_re$ ]] ||
		{ echo "make bench: BENCH_ONLY: '$p' is not a point's name" >&2; exit 2; }
done
BENCH_LINK=${BENCH_LINK:-ordered}
[[ "$BENCH_LINK" =~ ^(ordered|unordered|onecpu)$ ]] ||
	{ echo "make bench: BENCH_LINK must be ordered, unordered or onecpu" >&2; exit 2; }
BENCH_STACKS=${BENCH_STACKS:-}
for s in ${BENCH_STACKS//,/ }; do
	[[ "$s" =~ ^(raw|ours-2\.1|ours-2\.0|mainline|nvme)$ ]] ||
		{ echo "make bench: BENCH_STACKS: '$s' is not a stack" >&2; exit 2; }
done

job_stock_kernel

# Ours, in a copy of the tree.
build_ours() {
	copy_tree "$B/ours" && make -C "$B/ours" KDIR="$KDIR" -j"$RTRS_JOBS"
}

# Mainline's, from the source package.
build_mainline() {
	rtrs_mainline_build "$KDIR" 6.1 "$B/mainline"
}

# build_bench STACK: the benchmark users against STACK's rtrs.h and
# Module.symvers, in $B/STACK-bench; the header the client shares with
# the test client goes one level up, where its include looks.
build_bench() {
	local rtrs=$B/$1 out=$B/$1-bench
	rm -rf "$out" && mkdir -p "$out" &&
		cp "$RTRS_TOP"/tests/rtrs-test-paths.h "$B/" &&
		cp "$RTRS_TOP"/tests/bench/Kbuild "$RTRS_TOP"/tests/bench/*.[ch] "$out/" &&
		make -C "$KDIR" M="$out" -j"$RTRS_JOBS" ccflags-y="-I$rtrs" \
			KBUILD_EXTRA_SYMBOLS="$rtrs/Module.symvers" modules
}

tb=$(date +%s)
step "building our rtrs against $KDIR" "$LOGS/build-ours.log" build_ours
step "building rnbd on our rtrs" "$LOGS/build-rnbd-ours.log" "$H/rnbd.sh" "$KDIR" "$B/ours"
step "building mainline rtrs (Linux $sver source package)" "$LOGS/build-mainline.log" build_mainline
step "building rnbd on mainline rtrs" "$LOGS/build-rnbd-mainline.log" "$H/rnbd.sh" "$KDIR" "$B/mainline"
step "building the benchmark users against our rtrs.h" "$LOGS/build-bench-ours.log" build_bench ours
step "building the benchmark users against mainline's rtrs.h" "$LOGS/build-bench-mainline.log" build_bench mainline
build_s=$(( $(date +%s) - tb ))

# Points per repetition, for the guest's timeout: 5 raw; 8 rtrs and 6 fio
# for each of the three rtrs stacks (ours-2.1, ours-2.0, mainline), and 2
# fio at 1 MiB (about fio_s each) where the session takes them; 6 fio for
# nvme; and a minute of set-up per stack.
per_rep=$(( 5 * (raw_s + 30) + 3 * 8 * (rtrs_s + 5) + 3 * 6 * (fio_s + 10) +
	2 * (2 * fio_s + 20) + 6 * (fio_s + 10) + 5 * 60 ))
timeout=$(( 300 + reps * per_rep * 2 ))
# The profile pass: at most a repetition, and perf's reports.
[ -z "$BENCH_PROFILE" ] || timeout=$(( timeout + per_rep * 2 + 1800 ))
rtrs_log "guest: stock kernel $sver, $reps repetition(s) of raw, ours-2.1, ours-2.0, mainline and nvme" \
	"(fio ${fio_s} s, rtrs ${rtrs_s} s a point; timeout ${timeout} s)"
tg=$(date +%s)
RTRS_RESULTS=$LOGS "$H/guest.sh" --name guest --kernel stock \
	--script "$RTRS_TOP/tests/e2e/bench.sh" --mem 2048 --timeout "$timeout" \
	--env "BENCH_REPS=$reps" --env "BENCH_FIO_S=$fio_s" \
	--env "BENCH_RTRS_S=$rtrs_s" --env "BENCH_RAW_S=$raw_s" \
	--env "BENCH_LAT_ITERS=$lat_iters" --env "BENCH_DIR=$B" \
	--env "BENCH_PROFILE=${BENCH_PROFILE// /,}" \
	--env "BENCH_ONLY=${BENCH_ONLY// /,}" --env "BENCH_STACKS=${BENCH_STACKS// /,}" \
	--env "BENCH_LINK=$BENCH_LINK" \
	>"$LOGS/guest.log" 2>&1
guest_s=$(( $(date +%s) - tg ))
G=$LOGS/guest

[ -s "$G/points" ] || failed "the guest measured nothing (see $G/script.log)"
python3 "$H/bench-report.py" --points "$G/points" --setup "$G/setup" \
	--json "$LOGS/bench.json" --kernel "$sver" --quick "${BENCH_QUICK:-0}" \
	--profile "$G/profile" --profile-detail "$LOGS/profile.txt" \
	--profile-points "$G/points-profiled" \
	--modules "ours=$B/ours" --modules "ours=$B/ours-bench" \
	--modules "mainline=$B/mainline" --modules "mainline=$B/mainline-bench" \
	--modules "any=$sdir/root/lib/modules/$sver/kernel/drivers/infiniband" \
	--modules "any=$sdir/root/lib/modules/$sver/kernel/drivers/nvme" \
	--modules "any=$sdir/root/lib/modules/$sver/kernel/drivers/block" \
	>"$LOGS/report.txt" || failed "the report (see $LOGS)"
cat "$LOGS/report.txt"
echo
echo "report: $LOGS/report.txt, $LOGS/bench.json; guest log: $G/script.log"
echo "took $(( $(date +%s) - t0 )) s (builds ${build_s} s, guest ${guest_s} s)"

[ -z "$BENCH_PROFILE" ] || ls "$G"/profile/*.txt >/dev/null 2>&1 ||
	failed "BENCH_PROFILE: no point was profiled (see $G/script.log)"

problems=$(grep -h '^FAIL' "$G/host-checks" "$G/checks" 2>/dev/null)
[ -z "$problems" ] || failed "$(sed 's/^FAIL guest\///' <<<"$problems")"
echo "make bench: OK"
