#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# make faults: the allocation-failure scenario (tests/e2e/faults.sh)
# alone, with every fault point tried unless told otherwise, after the
# set-up make check does for it: packages, the test kernel and our
# modules built against it.  Prints the points of each path and the
# checks.
#
#   make faults [FAULTS_ONLY="clt_open add_path"] [FAULTS_BUDGET=K]
#               [FAULTS_RTRS_BUDGET=K] [FAULTS_OFFSET=N] [FAULTS_QD=D]
#               [FAULTS_HOURS=H]
#
# FAULTS_ONLY names the paths to sweep (core client server srv_open
# clt_open add_path; all by default).  FAULTS_BUDGET and
# FAULTS_RTRS_BUDGET (default 0: every point) try about K points of each
# path, evenly spread; FAULTS_OFFSET shifts where the spread starts, so
# that runs with offsets 0 .. stride-1 cover every point between them.
# FAULTS_QD (default 128, as in make check) is the sessions' queue depth:
# the points of a path grow with it, since a session allocates per
# request and per receive buffer.
# Under TCG a point takes 1.4 to 4 s: every point of every path is about
# 10 hours at depth 128, clt_open alone about 7 (2 at depth 16).
# FAULTS_HOURS (default 12) bounds the guest.  Logs go to results/faults/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
H=$RTRS_TOP/tests/harness
JOB=faults
LOGS=$RTRS_RESULTS/faults-job
PATHS="core client server srv_open clt_open add_path"
ONLY=${FAULTS_ONLY:-}
BUDGET=${FAULTS_BUDGET:-0}
RTRS_BUDGET=${FAULTS_RTRS_BUDGET:-0}
OFFSET=${FAULTS_OFFSET:-0}
QD=${FAULTS_QD:-128}
HOURS=${FAULTS_HOURS:-12}

number() {
	[[ "$2" =~ ^[0-9]+$ ]] || { echo "make faults: $1 must be a number" >&2; exit 2; }
}
number FAULTS_BUDGET "$BUDGET"
number FAULTS_RTRS_BUDGET "$RTRS_BUDGET"
number FAULTS_OFFSET "$OFFSET"
number FAULTS_QD "$QD"
number FAULTS_HOURS "$HOURS"
[ "$HOURS" -gt 0 ] || { echo "make faults: FAULTS_HOURS must be above 0" >&2; exit 2; }
[ "$QD" -ge 1 ] && [ "$QD" -le 65535 ] ||
	{ echo "make faults: FAULTS_QD must be within 1-65535" >&2; exit 2; }
ONLY=${ONLY//,/ }
for p in $ONLY; do
	grep -qw -- "$p" <<<"$PATHS" ||
		{ echo "make faults: FAULTS_ONLY: paths are $PATHS" >&2; exit 2; }
done

job_test_kernel

rtrs_log "guest: fault injection (${ONLY:-every path}, budgets" \
	"$BUDGET/$RTRS_BUDGET, offset $OFFSET, queue depth $QD)"
envs=(--env "FAULTS_BUDGET=$BUDGET" --env "FAULTS_RTRS_BUDGET=$RTRS_BUDGET"
      --env "FAULTS_OFFSET=$OFFSET" --env "FAULTS_QD=$QD")
[ -z "$ONLY" ] || envs+=(--env "FAULTS_ONLY=${ONLY// /,}")
"$H/guest.sh" --name faults --kernel test --script "$RTRS_TOP/tests/e2e/faults.sh" \
	--timeout $(( HOURS * 3600 )) "${envs[@]}" >"$LOGS/guest.log" 2>&1
job_guest_report "$RTRS_RESULTS/faults" "console.log, script.log, faults-*.dmesg" "$t0"
