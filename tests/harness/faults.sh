#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
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
HOURS=${FAULTS_HOURS:-12}

number() {
	[[ "$2" =~ ^[0-9]+$ ]] || { echo "make faults: $1 must be a number" >&2; exit 2; }
}
number FAULTS_BUDGET "${FAULTS_BUDGET:-0}"
number FAULTS_RTRS_BUDGET "${FAULTS_RTRS_BUDGET:-0}"
number FAULTS_OFFSET "${FAULTS_OFFSET:-0}"
number FAULTS_QD "${FAULTS_QD:-128}"
number FAULTS_HOURS "$HOURS"
[ "$HOURS" -gt 0 ] || { echo "make faults: FAULTS_HOURS must be above 0" >&2; exit 2; }
[ "${FAULTS_QD:-128}" -ge 1 ] && [ "${FAULTS_QD:-128}" -le 65535 ] ||
	{ echo "make faults: FAULTS_QD must be within 1-65535" >&2; exit 2; }
ONLY=${ONLY//,/ }
for p in $ONLY; do
	grep -qw -- "$p" <<<"$PATHS" ||
		{ echo "make faults: FAULTS_ONLY: paths are $PATHS" >&2; exit 2; }
done

rm -rf "$LOGS" && mkdir -p "$LOGS" || failed "cannot make $LOGS"
step "installing what is missing" "$LOGS/deps.log" "$H/deps.sh"
step "test kernel (cached after the first build)" "$LOGS/test-kernel.log" \
	"$H/test-kernel.sh"
KDIR=$(tail -n 1 "$LOGS/test-kernel.log")
B=$RTRS_TOP/build/test
step "building rtrs against the test kernel" "$LOGS/build.log" \
	eval 'copy_tree "$B" && make -C "$B" KDIR="$KDIR" W=1 -j"$RTRS_JOBS"'

rtrs_log "guest: fault injection (${ONLY:-every path}, budgets" \
	"${FAULTS_BUDGET:-0}/${FAULTS_RTRS_BUDGET:-0}, offset ${FAULTS_OFFSET:-0}," \
	"queue depth ${FAULTS_QD:-128})"
envs=(--env "FAULTS_BUDGET=${FAULTS_BUDGET:-0}"
      --env "FAULTS_RTRS_BUDGET=${FAULTS_RTRS_BUDGET:-0}"
      --env "FAULTS_OFFSET=${FAULTS_OFFSET:-0}"
      --env "FAULTS_QD=${FAULTS_QD:-128}")
[ -z "$ONLY" ] || envs+=(--env "FAULTS_ONLY=${ONLY// /,}")
"$H/guest.sh" --name faults --kernel test --script "$RTRS_TOP/tests/e2e/faults.sh" \
	--timeout $(( HOURS * 3600 )) "${envs[@]}" >"$LOGS/guest.log" 2>&1
G=$RTRS_RESULTS/faults

echo
sed 's/^/  /' "$G/figures" 2>/dev/null
echo
cat "$G/host-checks" "$G/checks" 2>/dev/null
echo
echo "logs: $G (console.log, script.log, faults-*.dmesg)"
echo "took $(( $(date +%s) - t0 )) s"
problems=$(grep -h '^FAIL' "$G/host-checks" "$G/checks" 2>/dev/null)
[ -z "$problems" ] || failed "$(sed 's/^FAIL faults\///' <<<"$problems")"
[ -s "$G/checks" ] || failed "the guest left no checks (see $LOGS/guest.log)"
echo "make faults: OK"
