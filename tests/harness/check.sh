#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# make check: install what is missing, build the test kernel if the cache
# lacks it, build the modules against the test kernel and against Debian's
# stock headers, boot the test guests, and count every result.  The last
# line is "N passed, N failed"; the exit status is non-zero on any failure
# or when nothing ran.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

t0=$(date +%s)
H=$RTRS_TOP/tests/harness
E=$RTRS_TOP/tests/e2e
ALL=$RTRS_RESULTS/checks

rm -rf "$RTRS_RESULTS"
mkdir -p "$RTRS_RESULTS"
: >"$ALL"

record() {
	local verdict=$1 name=$2 why=${3:-}
	echo "$verdict $name${why:+: $why}" >>"$ALL"
	[ "$verdict" = PASS ] || rtrs_log "FAIL $name${why:+: $why}"
}

# A step that cannot fail partway: setup.  Its failure ends the run.
setup() {
	local what=$1
	shift
	if ! "$@" >"$RTRS_RESULTS/setup-$what.out" 2>"$RTRS_RESULTS/setup-$what.log"; then
		record FAIL "setup/$what" "see $RTRS_RESULTS/setup-$what.log"
		finish
	fi
}

# phase NAME: what runs from here to the next phase, or to the end, is
# NAME in the table of times.
PHASES=$RTRS_RESULTS/phases
phase_name=
phase_t0=$t0
phase() {
	local now
	now=$(date +%s)
	[ -z "$phase_name" ] || echo "$phase_name $((now - phase_t0))" >>"$PHASES"
	phase_name=$1
	phase_t0=$now
}

# times_table: where the time went, per phase and per guest, the guests
# split into their boot, scenarios and kmemleak scan (each guest's times
# file, see guest.sh).
times_table() {
	local dir
	echo "where the time went (s):"
	[ -f "$PHASES" ] && awk '{ printf "  %-28s %5d\n", $1, $2 }' "$PHASES"
	for dir in "$RTRS_RESULTS"/*/; do
		[ -f "$dir/times" ] || continue
		awk -v g="$(basename "$dir")" '
			$1 == "total" { total = $2; next }
			{ parts = parts sep $1 " " $2; sep = ", " }
			END { printf "  guest %-22s %5d  (%s)\n", g, total, parts }' "$dir/times"
	done
	echo "  total                        $(( $(date +%s) - t0 ))"
	slowest_checks
}

# slowest_checks: the ten checks of the guests that took longest, from
# each scenario's steps file (guest-lib.sh's check).
slowest_checks() {
	local f
	for f in "$RTRS_RESULTS"/*/steps "$RTRS_RESULTS"/*/*/steps; do
		[ -f "$f" ] || continue
		f=${f#"$RTRS_RESULTS"/}
		awk -v where="${f%/steps}" '{ t = $1; sub(/^[^ ]+ /, ""); print t, where ": " $0 }' \
			"$RTRS_RESULTS/$f"
	done | sort -rn | head -n 10 | awk 'NR == 1 { print "slowest checks (s):" }
		{ printf "  %6s  %s\n", $1, substr($0, length($1) + 2) }'
}

finish() {
	local pass fail
	phase end
	pass=$(grep -c '^PASS' "$ALL")
	fail=$(grep -c '^FAIL' "$ALL")
	echo
	times_table
	echo
	grep '^FAIL' "$ALL"
	echo "results: $RTRS_RESULTS (checks, phases, per-guest console logs and times)"
	echo "took $(( $(date +%s) - t0 )) s"
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
	exit
}

# ---- set-up ----------------------------------------------------------

phase set-up
rtrs_log "installing what is missing"
setup deps "$H/deps.sh"
rtrs_log "test kernel (cached after the first build; the first build takes about 15 minutes)"
setup test-kernel "$H/test-kernel.sh"
KDIR_TEST=$(cat "$RTRS_RESULTS/setup-test-kernel.out")
rtrs_log "stock kernel"
setup stock-kernel "$H/stock-kernel.sh"
read -r STOCK_VER STOCK_DIR <"$RTRS_RESULTS/setup-stock-kernel.out"
KDIR_STOCK=$(cat "$STOCK_DIR/KDIR")
# Debian's stock 6.12 headers (deps.sh installs them): the modules, DKMS
# and rnbd of 6.12 build there too.
STOCK612_VER=$(rtrs_stock_release "$(rtrs_stock_meta stock-6.12)")
KDIR_STOCK612=/usr/src/linux-headers-$STOCK612_VER

# ---- build -------------------------------------------------------------

# The sources, as a list of files: git's when this is a checkout.
source_files() {
	if git -C "$RTRS_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$RTRS_TOP" ls-files --cached --others --exclude-standard
	else
		(cd "$RTRS_TOP" && find . -path ./build -prune -o -path ./results -prune \
			-o -type f -print)
	fi
}

copy_sources() {
	rm -rf "$1"
	mkdir -p "$1"
	source_files | (cd "$RTRS_TOP" && rsync -a --files-from=- . "$1")
}

# build NAME KDIR [MAKEVAR...]: W=1 build in build/NAME; any compiler or
# sparse warning fails it.
build() {
	local name=$1 kdir=$2 dir=$RTRS_TOP/build/$1 log=$RTRS_RESULTS/build-$1.log
	local ko missing=

	shift 2
	copy_sources "$dir"
	if ! make -C "$dir" KDIR="$kdir" W=1 "$@" -j"$RTRS_JOBS" >"$log" 2>&1; then
		record FAIL "build/$name" "make failed, see $log"
		return
	fi
	if grep -q -i -E 'warning:|error:' "$log"; then
		record FAIL "build/$name" "$(grep -i -m1 -E 'warning:|error:' "$log")"
		return
	fi
	for ko in rtrs-core rtrs-client rtrs-server; do
		[ -f "$dir/$ko.ko" ] || missing+=" $ko.ko"
	done
	if [ -n "$missing" ]; then
		record FAIL "build/$name" "not built:$missing"
	else
		record PASS "build/$name"
	fi
}

# make clean must leave a tree exactly as it was before the build.
clean_tree() {
	local dir=$RTRS_TOP/build/clean before after

	copy_sources "$dir"
	before=$(cd "$dir" && find . | sort)
	make -C "$dir" KDIR="$KDIR_TEST" >/dev/null 2>&1 &&
		make -C "$dir" KDIR="$KDIR_TEST" clean >/dev/null 2>&1
	after=$(cd "$dir" && find . | sort)
	if [ "$before" = "$after" ]; then
		record PASS "build/make clean restores the tree"
	else
		record FAIL "build/make clean restores the tree" \
			"left: $(comm -13 <(echo "$before") <(echo "$after") | head -3 | xargs)"
	fi
	rm -rf "$dir"
}

# tool NAME LOG CMD...: run a build tool, its log in LOG; PASS or FAIL as
# it exits, the log's first error (else its last line) the reason.
tool() {
	local name=$1 log=$2 why
	shift 2
	if "$@" >"$log" 2>&1; then
		record PASS "$name"
		return
	fi
	why=$(grep -m1 -i -E 'error[:!]' "$log" || tail -n 1 "$log")
	record FAIL "$name" "$why (see $log)"
}

# dkms_build NAME KVER KDIR: dkms.conf adds, builds and installs the
# modules for the stock kernel KVER, in a DKMS tree of its own under
# build/NAME.
dkms_build() {
	copy_sources "$RTRS_TOP/build/$1-src"
	tool "build/$1" "$RTRS_RESULTS/build-$1.log" "$H/dkms.sh" "$2" "$3" \
		"$RTRS_TOP/build/$1-src" "$RTRS_TOP/build/$1"
	rm -rf "$RTRS_TOP/build/$1-src"
}

# In tree: this directory as drivers/infiniband/ulp/rtrs-ng/ of a copy of
# the 6.1 tree, configured by its Kconfig, built alone (20 to 30 s on an
# idle machine, the tree and its prepared output cached in
# RTRS_CACHE/intree).
intree_build() {
	copy_sources "$RTRS_TOP/build/intree-src"
	tool build/in-tree "$RTRS_RESULTS/build-intree.log" "$H/intree.sh" \
		"$KDIR_TEST" "$RTRS_TOP/build/intree-src"
	rm -rf "$RTRS_TOP/build/intree-src"
}

# record_quiet NAME OUT: PASS when a checker said nothing (OUT is what it
# said), else FAIL with its first line.
record_quiet() {
	if [ -z "$2" ]; then
		record PASS "$1"
	else
		record FAIL "$1" "$(head -1 <<<"$2")"
	fi
}

# Style and documentation: checkpatch --strict and kernel-doc, per file;
# the reStructuredText documents must parse without a docutils warning
# (see rst-check.py for the kernel-doc directive).
hygiene() {
	local src f out
	src=$(rtrs_src_tree)
	for f in $(source_files | grep -E '(^|/)Documentation/.*\.rst$'); do
		out=$(python3 "$H/rst-check.py" "$src/scripts/kernel-doc" "$RTRS_TOP" \
			"$RTRS_TOP/$f" 2>&1)
		record_quiet "rst/$f" "$out"
	done
	for f in $(source_files | grep -E '(\.[ch]|(^|/)Kconfig)$'); do
		out=$(perl "$src/scripts/checkpatch.pl" --strict --no-tree --terse \
			--show-types -f "$RTRS_TOP/$f" 2>&1 | grep -E ': (ERROR|WARNING|CHECK):')
		record_quiet "checkpatch/$f" "$out"
		[[ "$f" == *Kconfig ]] && continue
		out=$(perl "$src/scripts/kernel-doc" -none "$RTRS_TOP/$f" 2>&1)
		record_quiet "kernel-doc/$f" "$out"
	done
	# Each side's files call downward only, in the order of its header.
	for f in rtrs-clt.h rtrs-srv.h; do
		out=$(python3 "$H/layers.py" "$RTRS_TOP" "$f" 2>&1)
		record_quiet "layers/$f" "$out"
	done
}

# The shell scripts: every *.sh and every file that starts with a #! to a
# shell, through shellcheck, which follows what each sources.  Its
# warnings and errors fail the one result (its notes are advice); the
# first is the reason.
shell_scripts() {
	local f
	source_files | while read -r f; do
		[ -f "$RTRS_TOP/$f" ] || continue
		if [[ "$f" == *.sh ]] ||
			head -n 1 "$RTRS_TOP/$f" | grep -q -E '^#!.*/(env )?(ba|da|k)?sh( |$)'; then
			echo "$f"
		fi
	done
}

shell_check() {
	local log=$RTRS_RESULTS/shellcheck.log scripts=()
	mapfile -t scripts < <(shell_scripts)
	if [ ${#scripts[@]} -eq 0 ]; then
		record FAIL "shellcheck/scripts" "no shell script found"
	elif (cd "$RTRS_TOP" && shellcheck -S warning -x -f gcc "${scripts[@]}") \
		>"$log" 2>&1; then
		record PASS "shellcheck/scripts"
	else
		record FAIL "shellcheck/scripts" "$(head -n 1 "$log") (see $log)"
	fi
}

# rnbd_build NAME SERIES KDIR: rnbd of SERIES, unmodified, built on our
# modules of build/NAME.
rnbd_build() {
	if "$H/rnbd.sh" "$3" "$RTRS_TOP/build/$1" "$2" \
		</dev/null >"$RTRS_RESULTS/build-rnbd-$1.log" 2>&1; then
		record PASS "build/rnbd-$1"
	else
		record FAIL "build/rnbd-$1" "$(tail -n 1 "$RTRS_RESULTS/build-rnbd-$1.log")"
	fi
}

# mainline_test_srv NAME KDIR SERIES [SYMVERS]: the test server on the
# rtrs.h of mainline SERIES, in build/NAME/mainline-users, for the interop
# scenario's held write against mainline's rtrs-server: on the test
# kernel's own symbols, or on those of a mainline rtrs built out of tree
# (SYMVERS, its Module.symvers).
# shellcheck disable=SC2317 # run by tool, below
mainline_test_srv() {
	local out=$RTRS_TOP/build/$1/mainline-users src extra=()
	src=$(rtrs_src_tree "$3") || return 1
	[ -z "${4:-}" ] || extra=(KBUILD_EXTRA_SYMBOLS="$4")
	rm -rf "$out" && mkdir -p "$out" &&
		cp "$RTRS_TOP"/tests/user/rtrs-test-srv.c \
			"$RTRS_TOP"/tests/user/rtrs-test.h "$out/" &&
		echo 'obj-m += rtrs-test-srv.o' >"$out/Kbuild" &&
		make -C "$2" M="$out" W=1 KCFLAGS=-Werror \
			ccflags-y="-I$src/drivers/infiniband/ulp/rtrs" \
			"${extra[@]}" -j"$RTRS_JOBS" modules
}

# mainline_stack NAME KDIR SERIES: mainline's rtrs of SERIES from its
# source package (rtrs_mainline_build), rnbd on it, and the test server on
# it, in build/NAME/mainline: for interop on a stock kernel, which has
# none of them.
# shellcheck disable=SC2317 # run by tool, below
mainline_stack() {
	local out=$RTRS_TOP/build/$1/mainline
	rtrs_mainline_build "$2" "$3" "$out" &&
		"$H/rnbd.sh" "$2" "$out" "$3" </dev/null &&
		mainline_test_srv "$1" "$2" "$3" "$out/Module.symvers"
}
# What the guests of the test kernel need is built first: the modules,
# the peer, the helpers and rnbd of 6.1 on them.
phase builds
rtrs_log "building against the test kernel (W=1 C=1), the peer and rnbd of 6.1"
build test "$KDIR_TEST" C=1
# The userspace peer of the hostile scenario, beside the test modules.
tool build/peer "$RTRS_RESULTS/build-peer.log" make -C "$RTRS_TOP/build/test/tests/peer"
# faults' helper, which the guest would take 15 s to build.
tool build/failnth "$RTRS_RESULTS/build-failnth.log" gcc -O2 -Wall -Werror \
	-o "$RTRS_TOP/build/test/tests/user/failnth" "$RTRS_TOP/tests/user/failnth.c"
tool build/test-srv-on-mainline "$RTRS_RESULTS/build-mainline-users.log" \
	mainline_test_srv test "$KDIR_TEST" 6.1
rnbd_build test 6.1 "$KDIR_TEST"

# The rest runs beside guest 1 (below), at the idle scheduling class: the
# stock builds, DKMS, the in-tree build, rnbd of the stock kernels, and
# the style and documentation checks.  They take some 200 s of one core,
# mostly one process at a time, and guest 1 leaves a third of the host
# idle; at SCHED_IDLE they take only what the guest leaves.  The guests
# that need them (stock, the 6.12 pair) come after guest 1, and the run
# waits for them there.
beside_guest_1() {
	local t=$SECONDS
	chrt -i -p 0 "$BASHPID" >/dev/null ||
		rtrs_log "chrt: the builds beside guest 1 keep their class"
	rtrs_log "beside guest 1: building against the stock headers (6.1 W=1, 6.12 W=1 C=1)"
	build stock "$KDIR_STOCK"
	build stock-6.12 "$KDIR_STOCK612" C=1
	tool build/mainline-6.12 "$RTRS_RESULTS/build-mainline-6.12.log" \
		mainline_stack stock-6.12 "$KDIR_STOCK612" 6.12
	clean_tree
	rtrs_log "beside guest 1: DKMS (stock 6.1 and 6.12 headers), a copy of the 6.1 tree, rnbd"
	dkms_build dkms "$STOCK_VER" "$KDIR_STOCK"
	dkms_build dkms-6.12 "$STOCK612_VER" "$KDIR_STOCK612"
	intree_build
	rnbd_build stock 6.1 "$KDIR_STOCK"
	rnbd_build stock-6.12 6.12 "$KDIR_STOCK612"
	rtrs_log "beside guest 1: checkpatch --strict, kernel-doc, the rst documents and shellcheck"
	hygiene
	shell_check
	echo "builds-and-style-beside-guest-1 $((SECONDS - t))" >>"$PHASES"
	rtrs_log "beside guest 1: builds and style checks done in $((SECONDS - t)) s"
}
beside_guest_1 &
beside=$!

# ---- guests ------------------------------------------------------------

# CHECK_ONLY="NAME..." boots only the guests of those scenarios (the
# files under tests/e2e, without .sh) or of those guests (for a pair, its
# name without -server or -client), each with only the scenarios named;
# the builds and style checks run as always.  Unset: every scenario.
wanted() {
	[ -z "${CHECK_ONLY:-}" ] || [[ " ${CHECK_ONLY//,/ } " == *" $1 "* ]]
}

# scripts GUEST SCENARIO...: the --script arguments of the SCENARIOs of
# GUEST that CHECK_ONLY leaves in.
scripts() {
	local g=$1 sc
	shift
	for sc in "$@"; do
		if wanted "$g" || wanted "$sc"; then
			echo "--script"
			echo "$E/$sc.sh"
		fi
	done
}

# A check still running after STEP_DUMP s gets its guest's backtraces on
# the console (see step_watch in guest-init.sh).
STEP_DUMP=600

# guest NAME SCENARIO... -- ARGS...: boot one guest (see guest.sh) that runs
# the SCENARIOs in turn, unless CHECK_ONLY leaves them all out.
guest() {
	local name=$1 sc=() s
	shift
	while [ "$1" != -- ]; do
		sc+=("$1")
		shift
	done
	shift
	mapfile -t s < <(scripts "$name" "${sc[@]}")
	[ ${#s[@]} -gt 0 ] || return 0
	"$H/guest.sh" --name "$name" "${s[@]}" "$@" --env "STEP_DUMP=$STEP_DUMP" || true
}

free_port() {
	local p
	for p in $(shuf -i 20000-29999 -n 50); do
		ss -Htln "sport = :$p" | grep -q . || { echo "$p"; return; }
	done
	echo 23456
}

# guest_pair NAME KERNEL TIMEOUT SCENARIO...: a server and a client guest
# of KERNEL (see guest.sh), joined
# by a socket netdev on 127.0.0.1, each running the SCENARIOs in turn; a
# scenario sees RTRS_ROLE=server or client.  Each guest has TIMEOUT
# seconds and one vCPU: two guests of two vCPUs are four TCG threads on
# a 2-core host, where a vCPU preempted with a lock held leaves its
# sibling spinning (see "The scenarios share guest boots" below).  IO
# completing on another CPU than it was sent from is the single guests'
# to test (the rtrs-session suite, multipath, rnbd).  When either kernel
# failed before init (see guest.sh), both are stopped at once and the
# pair boots again.  PAIR_ENV=K=V, when set, goes to both guests' scripts.
guest_pair() {
	local name=$1 kernel=$2 timeout=$3 port spid try s
	local env=(--env "STEP_DUMP=$STEP_DUMP")
	shift 3
	[ -z "${PAIR_ENV:-}" ] || env+=(--env "$PAIR_ENV")
	mapfile -t s < <(scripts "$name" "$@")
	[ ${#s[@]} -gt 0 ] || return 0
	for try in 1 2; do
		rm -f "$RTRS_RESULTS/$name-server/boot-flake" \
			"$RTRS_RESULTS/$name-client/boot-flake"
		port=$(free_port)
		"$H/guest.sh" --name "$name-server" --kernel "$kernel" "${s[@]}" \
			--smp 1 --net "listen:$port" --mac 1 --env RTRS_ROLE=server \
			--peer "$name-client" --timeout "$timeout" "${env[@]}" &
		spid=$!
		sleep 2
		"$H/guest.sh" --name "$name-client" --kernel "$kernel" "${s[@]}" \
			--smp 1 --net "connect:$port" --mac 2 --env RTRS_ROLE=client \
			--peer "$name-server" --timeout "$timeout" "${env[@]}"
		wait "$spid"
		[ -f "$RTRS_RESULTS/$name-server/boot-flake" ] ||
			[ -f "$RTRS_RESULTS/$name-client/boot-flake" ] || return 0
		[ "$try" -eq 2 ] || rtrs_log "guest pair $name: booting both again"
	done
	rtrs_log "guest pair $name: lost its boot twice, giving up"
}

# The scenarios share guest boots: boot, module loads and the rxe pairs
# are paid once a guest (guest-init.sh resets the guest between two
# scenarios and keeps a pair still as it was made).  A host has two
# cores: two guests of two vCPUs side by side took three to four times
# as long each (guest 1: 3218 s beside guest 2, 986 s alone, 2026-12-03),
# since TCG vCPUs preempted while their guest holds a lock leave the
# other vCPU spinning, and four of them share the cores.  So guest 1
# runs alone with two vCPUs; then guests 2 and 3 run side by side with
# one vCPU each, one core each; then the pair, one vCPU each.  Four
# guests of one vCPU side by side (guests 2 and 3 with the pair,
# 2026-12-08) were no better: each step took 3 to 7 times as long as
# alone (kunit 579 s, two-guests 980 s, 32 sessions 398 s against 55 on
# a quicker host alone), and two of the four boots hung in the kernel's
# RCU-tasks self test and had to boot again.  make
# check is to keep within 45 minutes on a quiet host (README.md has the
# times of the last runs).  Each guest's time limit is about twice what
# it took on the slowest host measured.
#
# Guest 1 (two vCPUs):
#  - session: the rtrs-session suite against the test server, IO from
#    every CPU among its cases; before it, the rtrs-srv-op-take suite,
#    whose main case needs a CPU for each of its two sides;
#  - hostile: a userspace peer that breaks the protocol in each way
#    rtrs.rst lists under "Hostile peers", and walks both sides' tables of
#    messages and path states; every lie must be refused and leave the
#    other side serving others.  Its table's state "info" (a path that
#    has had its INFO_REQ and whose user still takes the CONNECTED
#    event) needs a second CPU: with one, rxe has one completion vector,
#    both connections share the CQ pool's one CQ of it, and connection
#    1's message waits behind the event (seen on 2026-12-04);
#  - lossy: verified IO over one path while 2 % of the packets are lost,
#    with the client's trace events on (783 s on one vCPU on the slow
#    host of 2026-12-04; 138 s on two on the quicker one).
# Guest 2 (one vCPU):
#  - kunit: the modules load and unload, the KUnit suites but rtrs-session
#    and rtrs-srv-op-take (which run in guest 1, with its two CPUs);
#  - faults: allocation failures; each set-up path fails at its fault
#    points in turn and must leave nothing behind.  Every point of every
#    path would take hours (fail-nth alone counts some 11,000): by default
#    about 2 fail-nth and 6 fail_rtrs points of each path, evenly
#    spread; make faults tries them all;
#  - multipath: two paths under verified IO, MPATH_CYCLES remove/add
#    cycles of a path (about 3 s a cycle).
# Guest 3 (one vCPU):
#  - session-cycles: memory per session and RTRS_CYCLES open/close cycles
#    (about 0.4 s a cycle);
#  - rnbd: rnbd from Linux 6.1 on our modules, RNBD_CYCLES map/unmap
#    cycles;
#  - soak, only when SOAK_SECONDS=N is given: verified rnbd IO over two
#    paths for N s while links flap, rxe devices, paths and the server
#    modules go and come back, from a new seed each run (in its
#    script.log; SOAK_SEED=N repeats it); make soak is the long form.
phase guests
rtrs_log "guests"
rnbd_built=
[ ! -f "$RTRS_TOP/build/test/rnbd/rnbd-client.ko" ] || rnbd_built=1
SOAK_SECONDS=${SOAK_SECONDS:-0}
soak=
[ "$SOAK_SECONDS" = 0 ] || [ -z "$rnbd_built" ] || soak=soak
soak_env=(--env "SOAK_SECONDS=$SOAK_SECONDS")
[ -z "${SOAK_SEED:-}" ] || soak_env+=(--env "SOAK_SEED=$SOAK_SEED")
rnbd=
[ -z "$rnbd_built" ] || rnbd=rnbd
guest guest-1 session hostile lossy -- --kernel test --timeout 3400
wait "$beside"
guest guest-2 kunit faults multipath -- \
	--kernel test --smp 1 --timeout 3600 \
	--env FAULTS_BUDGET="${FAULTS_BUDGET:-2}" \
	--env FAULTS_RTRS_BUDGET="${FAULTS_RTRS_BUDGET:-6}" \
	--env MPATH_CYCLES="${MPATH_CYCLES:-5}" &
guest2=$!
# shellcheck disable=SC2086 # rnbd, soak: a scenario, or none
guest guest-3 session-cycles $rnbd $soak -- \
	--kernel test --smp 1 --timeout 3600 \
	--env "RTRS_CYCLES=${RTRS_CYCLES:-50}" \
	--env "RNBD_CYCLES=${RNBD_CYCLES:-5}" "${soak_env[@]}"
wait "$guest2"
# Our modules on Debian's stock 6.1, and on its stock 6.12 with rnbd of
# 6.12: side by side, one vCPU each, as guests 2 and 3.
guest stock stock -- --kernel stock --mem 1024 --smp 1 --timeout 300 &
stock=$!
guest stock-6.12 stock -- --kernel stock-6.12 --mem 1024 --smp 1 --timeout 300
wait "$stock"
# A pair of guests: IPv6 sessions and what one costs each side
# (two-guests); interop with the mainline RTRS and rnbd of the test
# kernel, both ways: our client and rnbd-client against mainline's
# server, then mainline's client against ours, over two paths with one
# of them failing; between the two, our client against mainline's
# server holding a write across a failover.  Each limit is about twice
# the guest's time on the slowest host measured (README).
interop=
[ -z "$rnbd_built" ] || interop=interop
# shellcheck disable=SC2086 # interop: a scenario, or none
guest_pair pair test 2400 two-guests $interop
# Interop with mainline RTRS and rnbd of 6.12, built from linux-source-6.12
# (Debian's stock 6.12 has none), on a pair of stock 6.12 guests: both
# directions (phases A and B); the held write (phase C) tests our
# client's quarantine, which the pair above has shown against mainline.
[ ! -f "$RTRS_TOP/build/stock-6.12/mainline/rnbd/rnbd-client.ko" ] ||
	PAIR_ENV=INTEROP_PHASES=AB guest_pair pair-6.12 stock-6.12 600 interop

# ---- results -----------------------------------------------------------

# One result per KUnit case: the indented "ok"/"not ok" lines of a suite.
# The kernel keeps a case's log in a small buffer, and a case that logs
# much can push its own result line out of the file: the suite's plan
# ("1..N") and its own verdict catch the cases lost that way.
ktap_cases() {
	local suite=$1 file=$2
	awk -v suite="$suite" '
		/^    1\.\.[0-9]+$/ && !plan { plan = substr($0, 8) + 0 }
		/^not ok [0-9]+ / { failed = 1 }
		/^    (not )?ok [0-9]+ / {
			line = $0
			sub(/^    /, "", line)
			verdict = (line ~ /^not ok/) ? "FAIL" : "PASS"
			nfail += verdict == "FAIL"
			sub(/^(not )?ok [0-9]+ (- )?/, "", line)
			n++
			if (line ~ /# SKIP/)
				next
			print verdict " kunit/" suite "/" line
		}
		END {
			if (!n)
				print "FAIL kunit/" suite ": no test case ran"
			else if (plan > n)
				print "FAIL kunit/" suite ": " plan - n " of " \
				      plan " case results lost from the log"
			else if (failed && !nfail)
				print "FAIL kunit/" suite ": failed, no case says why"
		}
	' "$file"
}

# A guest's results, and those of each scenario of a guest of several.
for dir in "$RTRS_RESULTS"/*/; do
	[ -f "$dir/host-checks" ] || continue
	cat "$dir/host-checks" >>"$ALL"
	for d in "$dir" "$dir"/*/; do
		[ -f "$d/checks" ] && cat "$d/checks" >>"$ALL"
		for k in "$d"/kunit/*.ktap; do
			[ -f "$k" ] && ktap_cases "$(basename "$k" .ktap)" "$k" >>"$ALL"
		done
	done
done

finish
