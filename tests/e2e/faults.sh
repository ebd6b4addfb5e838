# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): allocation-failure injection.  Every
# setup path fails at its N-th fault point, N = 1, 2, ... until it
# succeeds untouched: module load of rtrs-core, rtrs-client and
# rtrs-server, rtrs_srv_open(), rtrs_clt_open() over two paths and
# add_path.  In task context the N-th point is armed with the opener's
# /proc/thread-self/fail-nth (failslab, fail_page_alloc and rtrs-core's
# own points, see tests/user/failnth.c); the steps that run in RDMA CM
# and work queue contexts (the client's connection set-up, the server
# accepting a session and its connections, the INFO exchange on both
# sides) are reached through rtrs-core's fault attribute fail_rtrs.
#
# After each failure: the error went to the caller, no directory of a
# half-built session or path is left in sysfs on either side, the RDMA
# resources (rdma res: pd, cq, qp, cm_id, mr) and the module reference
# counts are back to what they were, and the kernel log holds no report.
# The last N succeeds untouched: its session carries verified IO and
# closes.  At the end kmemleak finds nothing.
#
# FAULTS_ONLY="name,..." runs only the named paths (core client server
# srv_open clt_open add_path).  FAULTS_BUDGET=K tries about K of the
# fail-nth points of each path, FAULTS_RTRS_BUDGET=K about K of its
# fail_rtrs points: evenly spread, the first and the last included,
# starting at point 1 + FAULTS_OFFSET modulo the step.  0, the default,
# tries every point.  fail-nth counts thousands of points in a path (the
# module loader's, rxe's, kmemleak's own), a few seconds each under TCG,
# so make check sets both budgets (see tests/harness/check.sh).
# FAULTS_QD (default 128) is the server's sess_queue_depth: a session
# allocates per request and per receive buffer, so a smaller depth gives
# fewer points, each turn of those loops being the same code.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

# The fault loops wait often and briefly.
# shellcheck disable=SC2034 # read by wait_for (guest-lib.sh)
WAIT_POLL=0.2

# Progress goes to the scenario's log even from inside a check.
exec 3>&1
b=$(rtrs_build_dir)
NTH_BUDGET=${FAULTS_BUDGET:-0}
RTRS_BUDGET=${FAULTS_RTRS_BUDGET:-0}
OFFSET=${FAULTS_OFFSET:-0}
# Built on the host beside the peer (check.sh); in the guest, under TCG,
# if not.
FAILNTH=$b/tests/user/failnth
SESS=rtrs-test-clt
P1="ip:$PAIR_A@ip:$PAIR_B"
P2="ip:198.51.100.1@ip:198.51.100.2"
CS=/sys/class/rtrs-client/$SESS
SS=/sys/class/rtrs-server/$SESS
FI=/sys/kernel/debug
QD=${FAULTS_QD:-128}


# ---- what "nothing left behind" means ------------------------------------

# state: RDMA resources per device, rtrs modules with their reference
# counts, and the rtrs directories in sysfs: sessions and their paths.
# Shell builtins but for rdma: it runs a few thousand times.
state() {
	local m f
	rdma res show
	for m in rtrs_core rtrs_client rtrs_server rtrs_test_srv rtrs_test_clt; do
		f=/sys/module/$m/refcnt
		[ -e "$f" ] && echo "$m $(<"$f")"
	done
	for f in /sys/class/rtrs-client/* /sys/class/rtrs-client/*/paths/* \
		 /sys/class/rtrs-server/* /sys/class/rtrs-server/*/paths/*; do
		[ -e "$f" ] && echo "$f"
	done
}

BASE=
# settled: the state stays the same for a second.
settled() {
	local a
	a=$(state)
	nap 1
	[ "$(state)" = "$a" ]
}
baseline() { BASE=$(state); }
is_baseline() { [ "$(state)" = "$BASE" ]; }
# back_to_baseline: wait for the server side's asynchronous teardown.
back_to_baseline() {
	wait_for 30 is_baseline && return 0
	diff <(echo "$BASE") <(state) | grep '^[<>]' | tr '\n' ' '
	echo
	return 1
}

# ---- the kernel log ------------------------------------------------------

# without_trace_field_warning LOG: LOG without the one report the kernel
# itself makes of an injected failure in a module's load: the trace event
# code gives each field of a module's trace events an allocation and
# WARNs once (WARN_ON_ONCE in event_define_fields(), trace_events.c) when
# one fails, then logs "error code is -12"; the module loads without that
# event.  Any module with trace events does it (mainline rtrs, nvme, ...).
# The report is dropped only when it is that one, for -ENOMEM; the count
# of those dropped goes to $RTRS_TMP/trace-field-warnings.
without_trace_field_warning() {
	awk -v out="$RTRS_TMP/trace-field-warnings" '
		/-+\[ cut here \]-+/ { held = $0; next }
		held != "" {
			if ($0 ~ /WARNING: .* at kernel\/trace\/trace_events\.c:[0-9]+ event_define_fields/)
				skip = 1
			else
				print held
			held = ""
		}
		skip && /---\[ end trace [0-9a-f]+ \]---/ { skip = 0; ended = 1; next }
		skip { next }
		ended { ended = 0; if ($0 ~ /error code is -12$/) { n++; next } else bad = 1 }
		{ print }
		END {
			if (held != "") print held
			if (skip) print "a trace event field warning without its end"
			if (bad) print "a trace event field warning without -ENOMEM"
			if (n) print n >>out
		}' "$1"
}

# An injected failure of vmalloc() reports itself (warn_alloc: a header,
# then a stack dump); the trace event code's warning above is the
# kernel's; anything else that shows a stack, and every other report
# log-problems.sh knows, is a problem.  The console stays quiet during the
# loops (hundreds of failures); the log of each path is checked here and
# kept in the results.
log_clean() {
	local log=$RESULTS/faults-$1.dmesg problems traces allocs
	dmesg -c >"$log"
	without_trace_field_warning "$log" >"$RTRS_TMP/dmesg"
	# kmemleak_clean's scan of the kernel's own leaks.
	[ ! -s "$RTRS_TMP/kernel-leaks" ] ||
		sed -i "/kmemleak: $(<"$RTRS_TMP/kernel-leaks") new suspected memory leaks /d" \
			"$RTRS_TMP/dmesg"
	problems=$("$RTRS_TOP/tests/harness/log-problems.sh" "$RTRS_TMP/dmesg" |
		grep -v 'Call Trace:')
	problems+=$(grep 'trace event field warning without' "$RTRS_TMP/dmesg")
	traces=$(grep -c 'Call Trace:' "$RTRS_TMP/dmesg")
	allocs=$(grep -c -E 'page allocation failure|vmalloc error' "$RTRS_TMP/dmesg")
	[ -z "$problems" ] && [ "$traces" -le "$allocs" ] && return 0
	echo "$problems (stacks $traces, allocation failure reports $allocs)" |
		tr '\n' ' '
	echo
	return 1
}

# ---- arming a fault ----------------------------------------------------

fault_setup() {
	local f
	for f in failslab fail_page_alloc; do
		echo N >"$FI/$f/ignore-gfp-wait" && echo 0 >"$FI/$f/probability" &&
			echo 0 >"$FI/$f/verbose" || return 1
	done
	echo N >"$FI/fail_page_alloc/ignore-gfp-highmem" &&
		echo 0 >"$FI/fail_page_alloc/min-order" || return 1
	# A kernel that scans for leaks on its own would log them in the
	# middle of a path's log; the scans here are kmemleak_clean's.
	echo scan=off >"$FI/kmemleak"
}

# rtrs_arm N: the N-th call of rtrs-core's fault points fails, once.
rtrs_arm() {
	echo 0 >"$FI/fail_rtrs/times" && echo 1 >"$FI/fail_rtrs/interval" &&
		echo 1 >"$FI/fail_rtrs/verbose" &&
		echo 100 >"$FI/fail_rtrs/probability" &&
		echo "$1" >"$FI/fail_rtrs/space" && echo 1 >"$FI/fail_rtrs/times"
}

# rtrs_fired: the armed point was reached; disarms.
rtrs_fired() {
	local t
	t=$(<"$FI/fail_rtrs/times")
	echo 0 >"$FI/fail_rtrs/probability"
	[ "$t" -eq 0 ]
}

# ---- one operation, N = 1, 2, ... ----------------------------------------

# try_op MODE N OP...: OP with the N-th point armed (N = 1000000 counts);
# sets rc, fired (1 when the armed point was reached) and passed (points
# passed, when not).
try_op() {
	local mode=$1 n=$2 out left
	shift 2
	if [ "$mode" = nth ]; then
		out=$("$FAILNTH" "$n" "$@") || { echo "failnth: $out"; return 1; }
	else
		rtrs_arm "$n" || return 1
		out=$("$FAILNTH" 0 "$@") || { echo "failnth: $out"; return 1; }
	fi
	OUT=$out
	rc=${out#rc=}
	rc=${rc%% *}
	fired=${out#*injected=}
	fired=${fired%% *}
	passed=${out##*points=}
	if [ "$rc" -eq 0 ]; then
		"settle_$NAME" || { echo "N=$n: $out, did not settle"; return 1; }
	fi
	[ "$mode" = nth ] && return 0
	left=$(<"$FI/fail_rtrs/space")
	rtrs_fired && fired=1 || fired=0
	passed=$((n - left))
}

# inject MODE PATH OP...: run OP (arguments of failnth) with its N-th
# fault point failing, for every N.  MODE nth arms fail-nth of the opener
# (failslab, fail_page_alloc and rtrs's points in task context), MODE rtrs
# arms fail_rtrs (rtrs's points in any context).  An untouched run first
# counts the points.  After each try, settle_PATH waits for an operation
# that succeeded to be complete and undo_PATH takes it back; then nothing
# may be left.  Last, N past the count: OP succeeds untouched.
#
inject() {
	local mode=$1 n stride tries=0 total budget=$NTH_BUDGET t0
	t0=$(date +%s)
	NAME=$2
	shift 2
	try_op "$mode" 1000000 "$@" || return 1
	[ "$rc" -eq 0 ] && [ "$fired" -eq 0 ] || { echo "fails untouched: $OUT"; return 1; }
	total=$passed
	"undo_$NAME" || return 1
	# The CQ pool of a device keeps the CQs a first session made: what
	# nothing may be left over is measured once this run is gone.
	wait_for 30 settled || return 1
	baseline
	stride=1
	[ "$mode" = nth ] || budget=$RTRS_BUDGET
	[ "$budget" -gt 0 ] && stride=$(( (total + budget - 1) / budget ))
	[ "$stride" -ge 1 ] || stride=1
	n=$(( 1 + (OFFSET % stride) ))
	echo "$mode $NAME: $total points, every $stride from $n" >&3
	while :; do
		try_op "$mode" "$n" "$@" || return 1
		if [ "$fired" -eq 0 ] && [ "$n" -gt "$total" ]; then
			[ "$rc" -eq 0 ] || { echo "N=$n: failed untouched: $OUT"; return 1; }
			"undo_$NAME" && back_to_baseline || return 1
			break
		fi
		[ "$fired" -eq 0 ] && [ "$rc" -ne 0 ] &&
			{ echo "N=$n: failed untouched: $OUT"; return 1; }
		[ "$fired" -eq 1 ] && tries=$((tries + 1))
		if [ "$rc" -eq 0 ]; then
			"undo_$NAME" || { echo "N=$n: undo failed"; return 1; }
		fi
		back_to_baseline || { echo "N=$n ($OUT): left behind"; return 1; }
		[ $((tries % 20)) -ne 0 ] ||
			echo "$mode $NAME: N=$n/$total at $(( $(date +%s) - t0 )) s" >&3
		if [ "$n" -gt "$total" ]; then
			n=$((n + 1))	# more points than counted: go on one by one
		elif [ $((n + stride)) -gt "$total" ] && [ "$n" -lt "$total" ]; then
			n=$total	# the last point always
		else
			n=$((n + stride))
		fi
	done
	figure "faults: $mode $NAME: $total points, $tries failed (every $stride), each cleanly, in $(( $(date +%s) - t0 )) s"
	echo "$mode $NAME $total $tries" >>"$RTRS_TMP/points"
}

# ---- the paths ---------------------------------------------------------

settle_core() { :; }
undo_core() { rmmod rtrs-core; }
settle_client() { :; }
undo_client() { rmmod rtrs-client; }
settle_server() { :; }
undo_server() { rmmod rtrs-server; }
settle_srv_open() { :; }
undo_srv_open() { rmmod rtrs-test-srv; }

# A path is up once the client says so: that took the server's accept
# and INFO_RSP.  (A server path that could not make its sysfs directory
# works without one.)
connected() {
	[ -e "$CS/paths/$1/state" ] && [ "$(<"$CS/paths/$1/state")" = connected ]
}
settle_clt_open() { wait_for 60 connected "$P1" && wait_for 60 connected "$P2"; }
undo_clt_open() { rmmod rtrs-test-clt; }
settle_add_path() { wait_for 60 connected "$P2"; }
undo_add_path() { echo 1 >"$CS/paths/$P2/remove_path"; }

# verified_io: the session carries verified IO, then stops.
verified_io() {
	echo 1 >"$PARAMS/run" && ios_grow 2 && echo 0 >"$PARAMS/run" &&
		[ "$(counter io_errors)" -eq 0 ] &&
		[ "$(counter verify_errors)" -eq 0 ]
}

wanted() { [ -z "$FAULTS_ONLY" ] || grep -qw -- "$1" <<<"$FAULTS_ONLY"; }

# ---- set-up -------------------------------------------------------------

if [ ! -x "$FAILNTH" ]; then
	FAILNTH=$RTRS_TMP/failnth
	check "build failnth" gcc -O2 -Wall -o "$FAILNTH" "$RTRS_TOP/tests/user/failnth.c"
fi
check "veth pair with rxe on both ends" topology_pair
check "second veth pair with rxe on both ends" topology_second_pair
on_new_pair 1 "rping across pair 1" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
on_new_pair 2 "rping across pair 2" rping_pair 198.51.100.2 198.51.100.1 rxe3 rxe2
modprobe -a ib_core rdma_cm
check "fault injection set up" fault_setup
: >"$RTRS_TMP/points"
dmesg -c >/dev/null
dmesg -n 1

# ---- module load --------------------------------------------------------

wanted core && check "nth: load rtrs-core" inject nth core load "$b/rtrs-core.ko"
check "load rtrs-core" insmod "$b/rtrs-core.ko"
# A failure it forces logs one line (verbose 2 would add a stack dump).
check "fail_rtrs in debugfs" sh -c "echo 1 >'$FI/fail_rtrs/verbose'"
wanted client && check "nth: load rtrs-client" inject nth client load "$b/rtrs-client.ko"
wanted server && check "nth: load rtrs-server" inject nth server load \
	"$b/rtrs-server.ko" "sess_queue_depth=$QD"
check "kernel log clean: module load" log_clean load
check "load rtrs-client" insmod "$b/rtrs-client.ko"
check "load rtrs-server" insmod "$b/rtrs-server.ko" "sess_queue_depth=$QD"

# ---- rtrs_srv_open() ------------------------------------------------------

wanted srv_open && check "nth: rtrs_srv_open()" inject nth srv_open load \
	"$b/tests/user/rtrs-test-srv.ko"
check "kernel log clean: rtrs_srv_open()" log_clean srv-open
check "load rtrs-test-srv" insmod "$b/tests/user/rtrs-test-srv.ko"

# ---- rtrs_clt_open() over two paths ---------------------------------------

CLT_KO=$b/tests/user/rtrs-test-clt.ko
wanted clt_open && check "nth: rtrs_clt_open()" inject nth clt_open load \
	"$CLT_KO" "paths=$P1,$P2 threads=2"
wanted clt_open && check "rtrs: rtrs_clt_open() and the server's accept" \
	inject rtrs clt_open load "$CLT_KO" "paths=$P1,$P2 threads=2"
check "kernel log clean: rtrs_clt_open()" log_clean clt-open
check "open the session untouched" insmod "$CLT_KO" paths="$P1,$P2" threads=2
check "both paths connected" settle_clt_open
check "verified IO after the injections" verified_io
check "close the session" rmmod rtrs-test-clt

# ---- add_path -------------------------------------------------------------

check "open a session over path 1" insmod "$CLT_KO" paths="$P1" threads=2
check "path 1 connected" wait_for 60 connected "$P1"
wanted add_path && check "nth: add_path" inject nth add_path write \
	"$CS/add_path" "$P2"
wanted add_path && check "rtrs: add_path and the server's accept" \
	inject rtrs add_path write "$CS/add_path" "$P2"
check "kernel log clean: add_path" log_clean add-path
check "add path 2 untouched" sh -c "echo '$P2' >'$CS/add_path'"
check "path 2 connected" settle_add_path
check "verified IO over both paths" verified_io

# ---- the end ------------------------------------------------------------

dmesg -n 7
for m in rtrs-test-clt rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
check "no session left in sysfs" not test -e "$CS" -o -e "$SS"

# kernel_leaks REPORT: how many of kmemleak's records are the kernel's
# own leak under injection, and how many others: "KNOWN OTHER".  Linux
# 6.1's __class_register() frees its private part when kset_register()
# fails but not the name kobject_set_name() gave it: a failed class
# registration in a module's init (the sysfs class rtrs-client or
# rtrs-server, mainline's too) leaks those bytes.
kernel_leaks() {
	awk '
		function done() {
			if (!rec) return
			if (setname && classreg) known++; else other++
		}
		/^unreferenced object/ { done(); rec = 1; setname = classreg = 0 }
		/ kobject_set_name\+/ { setname = 1 }
		/ __class_register\+/ { classreg = 1 }
		END { done(); print known + 0, other + 0 }' "$1"
}

# kmemleak_clean: kmemleak finds nothing but the kernel's leak above;
# those are counted, then cleared (so that the guest's own check at its
# end does not report them again).  The scan logs how many it found: the
# console is kept quiet, and log_clean knows the count.
kmemleak_clean() {
	local r=$RESULTS/faults-kmemleak known other
	sleep 6
	dmesg -n 1
	# A second scan only when the first found something: see guest-init.sh.
	echo scan >"$FI/kmemleak" && cat "$FI/kmemleak" >"$r" || return 1
	[ -s "$r" ] || return 0
	echo scan >"$FI/kmemleak" && cat "$FI/kmemleak" >"$r" || return 1
	[ -s "$r" ] || return 0
	read -r known other < <(kernel_leaks "$r")
	[ "$other" -eq 0 ] || { echo "$other leak(s), $known of the kernel's"; return 1; }
	echo clear >"$FI/kmemleak" || return 1
	echo "$known" >"$RTRS_TMP/kernel-leaks"
	figure "faults: the kernel's leak of a failed class registration (__class_register, not ours): $known"
}
check "kmemleak finds nothing" kmemleak_clean
check "kernel log clean: the end" log_clean end
dmesg -n 7
while read -r mode name points tries; do
	figure "faults: injection points: $mode $name $points (tried $tries)"
done <"$RTRS_TMP/points"
[ ! -s "$RTRS_TMP/trace-field-warnings" ] ||
	figure "faults: the kernel's warning of a failed trace event field (trace_events.c, not ours): $(awk '{ n += $1 } END { print n }' "$RTRS_TMP/trace-field-warnings")"
