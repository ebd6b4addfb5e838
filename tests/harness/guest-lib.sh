# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Helpers for scenario scripts that run inside a test guest.  Sourced by
# guest-init.sh before each scenario.  Each check appends one line to
# $RESULTS/checks: "PASS <scenario>/<check>" or
# "FAIL <scenario>/<check>: <why>".  RESULTS is /run/results in a guest
# of one scenario, /run/results/<scenario> in a guest of several.

RESULTS=${RESULTS:-/run/results}

# nap SECONDS: sleep in the shell itself.  Starting a sleep process costs
# a TCG guest about 0.2 s, as much as a poll of wait_for waits: a read
# from a pipe that nobody writes to times out instead.  The pipe is this
# shell's own, opened once (subshells share it).
[ -n "${NAP_FD:-}" ] || exec {NAP_FD}<> <(:)
nap() {
	read -r -t "$1" -u "$NAP_FD" _ || true
}

pass() {
	echo "PASS $RTRS_NAME/$1" >>"$RESULTS/checks"
	echo "ok: $1"
}

fail() {
	echo "FAIL $RTRS_NAME/$1: $2" >>"$RESULTS/checks"
	echo "not ok: $1: $2"
}

# uptime_ds VAR: set VAR to the time since boot in tenths of a second,
# from /proc/uptime (builtins only).
uptime_ds() {
	local up
	read -r up _ </proc/uptime
	up=${up%?}
	printf -v "$1" %d $((10#${up/./}))
}

# check NAME CMD...: pass when CMD succeeds; else fail with its last line.
# Each check's time goes to $RESULTS/steps ("seconds name", to a tenth),
# so that where a scenario's time goes is known; one of 10 s or more also
# says so in the script's log.  The console says which check starts, so
# that a guest that runs out of time names the step it was in (guest.sh).
check() {
	local name=$1 out t0 t1 ds
	shift
	uptime_ds t0
	echo "rtrs-step: $RTRS_NAME/$name" >/dev/console
	echo "$t0 $name" >"$RTRS_TMP/step"
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(tail -n 1 <<<"$out")"
	fi
	uptime_ds t1
	ds=$((t1 - t0))
	printf '%d.%d %s\n' $((ds / 10)) $((ds % 10)) "$name" >>"$RESULTS/steps"
	[ "$ds" -lt 100 ] || echo "  took $((ds / 10)) s"
}

# not CMD...: succeed when CMD fails.
not() {
	! "$@"
}

# The directory the modules under test were built in, for this kernel.
rtrs_build_dir() {
	echo "$RTRS_TOP/build/$RTRS_KERNEL"
}

# load_unload_rtrs: our modules load, then unload, one check each.
load_unload_rtrs() {
	local b m
	b=$(rtrs_build_dir)
	for m in rtrs-core rtrs-server rtrs-client; do
		check "load $m" insmod "$b/$m.ko"
	done
	for m in rtrs-client rtrs-server rtrs-core; do
		check "unload $m" rmmod "$m"
	done
}

# kunit_suites SOURCE.c...: the KUnit suites the sources define, one a
# line: the .name of each struct kunit_suite.  Taken from the sources,
# not from what ran, so that a suite that never registers shows as missing.
kunit_suites() {
	sed -n -s '/struct kunit_suite [^;(]*= *{/,/^};/ s/^[[:space:]]*\.name[[:space:]]*=[[:space:]]*"\([^"]*\)".*/\1/p' "$@"
}

# kunit_ran SUITE: SUITE has run: debugfs holds its KTAP.  (A debugfs
# file shows a size of 0: read it.)
kunit_ran() {
	grep -q . "/sys/kernel/debug/kunit/$1/results" 2>/dev/null ||
		{ echo "no KTAP in /sys/kernel/debug/kunit/$1: the suite did not run"; return 1; }
}

# kunit_collect SUITE...: keep the KTAP of every suite that has run; each
# SUITE that has not run is a failed check that names it.
kunit_collect() {
	local suite
	for suite in /sys/kernel/debug/kunit/*/; do
		[ -d "$suite" ] || continue
		suite=$(basename "$suite")
		cp "/sys/kernel/debug/kunit/$suite/results" "$RESULTS/kunit/$suite.ktap"
	done
	for suite in "$@"; do
		check "KUnit suite $suite ran" kunit_ran "$suite"
	done
}

# kunit_run SOURCE.c...: load the KUnit test module built from each
# SOURCE (its suites run at load), keep each suite's KTAP, check that
# every suite the SOURCEs define has run, unload the modules.
kunit_run() {
	local src ko found kos=() suites=()
	for src in "$@"; do
		ko=$(rtrs_build_dir)/${src#"$RTRS_TOP"/}
		kos+=("${ko%.c}.ko")
		# Not mapfile < <(...): a guest has no /dev/fd.
		found=$(kunit_suites "$src")
		if [ -z "$found" ]; then
			fail "KUnit suites of $(basename "$src")" \
				"no struct kunit_suite with a .name in $src"
			continue
		fi
		mapfile -t -O ${#suites[@]} suites <<<"$found"
	done
	for ko in "${kos[@]}"; do
		insmod "$ko" || fail "load $(basename "$ko")" "insmod failed"
	done
	kunit_collect "${suites[@]}"
	for ko in "${kos[@]}"; do
		[ -d "/sys/module/$(basename "$ko" .ko | tr - _)" ] || continue
		rmmod "$(basename "$ko" .ko)" ||
			fail "unload $(basename "$ko")" "rmmod failed"
	done
}

# rxe_add RXE NETDEV: put a soft-RoCE device on NETDEV and wait until its
# port is ACTIVE.
rxe_add() {
	modprobe rdma_rxe || return 1
	rdma link add "$1" type rxe netdev "$2" || return 1
	for _ in $(seq 50); do
		rdma link show "$1/1" 2>/dev/null | grep -q 'state ACTIVE' && return 0
		nap 0.2
	done
	echo "rxe_add: $1 on $2 never became ACTIVE" >&2
	return 1
}

# no_server_session: rtrs-server shows no session, and no shared receive
# queue is left.  A session leaves sysfs with its last path's files, as
# that path's close begins; the path drops its device's receive queue at
# the end of that close.  A memory reading taken in between counts the
# old queue, which a new session then makes anew.
no_server_session() {
	[ -z "$(ls /sys/class/rtrs-server 2>/dev/null)" ] &&
		[ -z "$(rdma res show srq)" ]
}

# figure TEXT...: a measured figure, kept in the results and shown.
figure() {
	echo "$*" >>"$RESULTS/figures"
	echo "$*"
}

# meminfo FIELD: a /proc/meminfo value in KiB.
meminfo() {
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# pcp_free_kib: KiB of free pages on the CPUs' page lists.  A freed page
# goes to its CPU's list first and reaches the free areas only when the
# list passes its high mark (megabytes on a guest of one vCPU); until
# then MemFree does not count it, and /proc/zoneinfo does ("count:" of
# each CPU's pageset, in pages).
pcp_free_kib() {
	awk -v kib=$(($(getconf PAGESIZE) / 1024)) \
		'$1 == "count:" { n += $2 } END { print n * kib }' /proc/zoneinfo
}

# mem_snapshot FREE SLAB VMALLOC: set the named variables to the free
# memory (MemFree and the CPUs' free page lists), Slab and VmallocUsed in
# KiB, caches dropped first.
mem_snapshot() {
	local shrink

	sync
	echo 3 >/proc/sys/vm/drop_caches
	# Shrinking a slab cache empties KASAN's quarantine of its freed
	# objects and frees its empty slabs: what was freed before the
	# reading does not count, however late the quarantine would let go.
	for shrink in /sys/kernel/slab/*/shrink; do
		echo 1 >"$shrink"
	done 2>/dev/null
	nap 1
	printf -v "$1" %s "$(($(meminfo MemFree) + $(pcp_free_kib)))"
	printf -v "$2" %s "$(meminfo Slab)"
	printf -v "$3" %s "$(meminfo VmallocUsed)"
	[ "${!1:-0}" -gt 0 ] && [ "${!2:-0}" -gt 0 ] && [ "${!3:-0}" -gt 0 ]
}

# wait_for SECONDS CMD...: poll CMD, quietly, until it succeeds, for
# SECONDS at most (every WAIT_POLL seconds, 0.5 unless set).
wait_for() {
	local secs=$1 deadline=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $deadline ] || { echo "timed out after ${secs}s: $*"; return 1; }
		nap "${WAIT_POLL:-0.5}"
	done
}

# Guests of a pair (a QEMU socket netdev on eth0) tell each other where
# they are on the wire alone: a guest takes up an address, the other
# waits for it to answer ARP.
#
# announce ADDR: take up ADDR, a message to the peer.
announce() {
	ip addr add "$1/24" dev eth0
}

# answers ADDR: the peer has taken up ADDR: it answers ARP for it.  A
# datagram to ADDR (bash's /dev/udp; there is no ping in the guest) makes
# the kernel ask.
answers() {
	echo >"/dev/udp/$1/9" || return 1
	nap 1
	ip neigh show "$1" dev eth0 | grep -q lladdr
}

# retry_until SECONDS CMD...: run CMD until it succeeds, for SECONDS at
# most; on failure, print the end of its last output.  Guests of a pair
# may start in either order, so their side of a meeting retries.
retry_until() {
	local deadline=$((SECONDS + $1)) log=$RTRS_TMP/retry.log
	shift
	while [ $SECONDS -lt $deadline ]; do
		"$@" >"$log" 2>&1 && return 0
		nap 2
	done
	tail -n 3 "$log"
	return 1
}
