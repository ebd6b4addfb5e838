#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# make soak: the soak scenario (tests/e2e/soak.sh) alone, after the set-up
# make check does for it: packages, the test kernel, our modules built
# against it and rnbd on them.  Prints the scenario's figures and checks.
#
#   make soak [SOAK_MINUTES=N] [SOAK_SEED=N] [SOAK_EVENTS="path rxe ..."]
#
# SOAK_MINUTES (default 20) is the time the driver spends failing things;
# the guest needs about 5 minutes more for boot, set-up and the end.
# SOAK_SEED repeats the random choices of an earlier run (it prints its
# seed).  SOAK_EVENTS narrows the kinds of event (flap rxe path srvdisc
# reload).  Logs go to results/soak/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
H=$RTRS_TOP/tests/harness
JOB=soak
LOGS=$RTRS_RESULTS/soak-job
MIN=${SOAK_MINUTES:-20}
[[ "$MIN" =~ ^[1-9][0-9]*$ ]] || { echo "make soak: SOAK_MINUTES must be a number" >&2; exit 2; }
[ -z "${SOAK_SEED:-}" ] || [[ "$SOAK_SEED" =~ ^[0-9]+$ ]] ||
	{ echo "make soak: SOAK_SEED must be a number" >&2; exit 2; }

job_test_kernel
step "building rnbd (Linux 6.1, unmodified) on it" "$LOGS/build-rnbd.log" \
	"$H/rnbd.sh" "$KDIR" "$B"

rtrs_log "guest: soak of $MIN minutes"
envs=(--env "SOAK_SECONDS=$(( MIN * 60 ))")
[ -z "${SOAK_SEED:-}" ] || envs+=(--env "SOAK_SEED=$SOAK_SEED")
if [ -n "${SOAK_EVENTS:-}" ]; then
	[[ "$SOAK_EVENTS" =~ ^(flap|rxe|path|srvdisc|reload)(\ (flap|rxe|path|srvdisc|reload))*$ ]] ||
		{ echo "make soak: SOAK_EVENTS: kinds are flap rxe path srvdisc reload" >&2; exit 2; }
	envs+=(--env "SOAK_EVENTS=${SOAK_EVENTS// /,}")
fi
"$H/guest.sh" --name soak --kernel test --script "$RTRS_TOP/tests/e2e/soak.sh" \
	--timeout $(( MIN * 60 + 1200 )) "${envs[@]}" >"$LOGS/guest.log" 2>&1
job_guest_report "$RTRS_RESULTS/soak" \
	"console.log, script.log, soak/events, soak/states, soak/io" "$t0"
