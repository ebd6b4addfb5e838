# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): a session of tests/user/rtrs-test-clt
# over two paths, each on its own veth pair with rxe on both ends, to
# tests/user/rtrs-test-srv.  Verified IO runs while paths fail, come back,
# are removed and added, and while sysfs gets bad writes.  The sysfs files
# a live session shows must be those Documentation/ABI/testing describes.
#
# MPATH_CYCLES sets the number of remove_path/add_path cycles.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

CYCLES=${MPATH_CYCLES:-100}
# Figures go to the scenario's log even from inside a check.
exec 3>&1
figure() { echo "figure: $*" >&3; }
SESS=rtrs-test-clt
P1="ip:$PAIR_A@ip:$PAIR_B"
P2="ip:198.51.100.1@ip:198.51.100.2"
CS=/sys/class/rtrs-client/$SESS
SS=/sys/class/rtrs-server/$SESS
ABI=$RTRS_TOP/Documentation/ABI/testing

pstat() { cat "$CS/paths/$1/stats/$2"; }
pstate() { cat "$CS/paths/$1/state" 2>/dev/null; }


state_is() { [ "$(pstate "$1")" = "$2" ]; }
# pstat_gt PATH STAT VALUE and counter_gt NAME VALUE, read when called.
pstat_gt() { [ "$(pstat "$1" "$2")" -gt "$3" ]; }
counter_gt() { [ "$(counter "$1")" -gt "$2" ]; }
state_is_not() { [ "$(pstate "$1")" != "$2" ]; }

# no_io_errors: nothing failed or differed since the last reset point;
# on failure, the last failed IO the test client logged says how.
IOERR0=0
no_io_errors() {
	local e v
	e=$(counter io_errors)
	v=$(counter verify_errors)
	[ "$e" -eq "$IOERR0" ] && [ "$v" -eq 0 ] && return
	echo "io_errors $e (from $IOERR0), verify_errors $v;" \
		"last: $(dmesg | grep 'rtrs_test_clt: IO at' | tail -n 1)"
	return 1
}

# io_clean WHAT: check no_io_errors, then count IO errors from here: a
# failure fails the check of its own phase only.
io_clean() {
	check "$1" no_io_errors
	IOERR0=$(counter io_errors)
}

# write_errno FILE VALUE EXPECTED: the write fails with strerror EXPECTED.
write_errno() {
	local out
	out=$( (printf '%s' "$2" >"$1") 2>&1 )
	if [ -z "$out" ]; then
		echo "write of '${2:0:40}' to $1 succeeded"
		return 1
	fi
	grep -q "$3" <<<"$out" || { echo "$out"; return 1; }
}

same_content() { [ "$(cat "$1")" = "$2" ]; }

# abi_match DOC SESSION_DIR PLACEHOLDER: the files DOC describes and the
# files the session shows are the same, both as paths below the session
# directory with every path directory called P.  The driver core's own
# files (uevent, power/) are left out.
abi_documented() {
	sed -n 's/^What:[[:space:]]*//p' "$1" |
		sed -e "s|^/sys/class/[^/]*/<session>/\?||" -e "s|$2|P|" |
		grep -v '/$' | grep -v '^$' | sort
}
abi_live() {
	(cd "$1" && find . -type f | sed -e 's|^\./||' |
		grep -v -e '^uevent$' -e '/uevent$' -e '^power/' -e '/power/' |
		sed -e "s|^paths/[^/]*/|paths/P/|" | sort -u)
}
abi_match() {
	local doc=$RTRS_TMP/abi-documented live=$RTRS_TMP/abi-shown
	abi_documented "$1" "$3" >"$doc"
	abi_live "$2" >"$live"
	[ -s "$live" ] || { echo "no files under $2"; return 1; }
	diff "$doc" "$live" >/dev/null && return 0
	echo "documented (<) and shown (>) differ:" \
		"$(diff "$doc" "$live" | grep '^[<>]' | paste -s -d ' ' -)"
	return 1
}

# ios_of: requests per path, "path1 path2".
ios_of() {
	echo "$(( $(pstat "$P1" writes) + $(pstat "$P1" reads) ))" \
		"$(( $(pstat "$P2" writes) + $(pstat "$P2" reads) ))"
}

reset_stats() {
	echo 1 >"$CS/paths/$P1/stats/reset_all" &&
	echo 1 >"$CS/paths/$P2/stats/reset_all"
}

# io_window SECONDS: counters cleared with IO stopped, then IO for a
# while, stopped again before the counters are read.  The sleep is the
# window the policies are measured over, not a wait for anything.
io_window() {
	echo 0 >"$PARAMS/run" && reset_stats && echo 1 >"$PARAMS/run" &&
		sleep "$1" && echo 0 >"$PARAMS/run"
}

# policy_round_robin: both paths carry about half of the requests (per
# CPU they alternate, so a thread's writes and reads may well not).
policy_round_robin() {
	local a b
	echo round-robin >"$CS/mpath_policy" && io_window 4 || return 1
	read -r a b <<<"$(ios_of)"
	figure "round-robin requests: $a / $b"
	[ "$a" -gt 20 ] && [ "$b" -gt 20 ] &&
		[ $(( (a - b) * (a - b) * 100 )) -le $(( (a + b) * (a + b) )) ]
}

# policy_min_inflight: both paths carry requests, as 4 threads overlap.
policy_min_inflight() {
	local a b
	echo min-inflight >"$CS/mpath_policy" && io_window 4 || return 1
	read -r a b <<<"$(ios_of)"
	figure "min-inflight requests: $a / $b"
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ]
}

# latency_above PATH NS: the last heartbeat round trip of PATH took more
# than NS nanoseconds.
latency_above() { [ "$(cat "$CS/paths/$1/cur_latency")" -gt "$2" ]; }

# policy_min_latency: with 100 ms of delay on path 2, its heartbeat round
# trip grows and path 1 takes (nearly) all requests.  A heartbeat goes
# every 5 s (RTRS_HB_INTERVAL_MS): wait until one has seen the delay.
policy_min_latency() {
	local a b l1 l2
	echo min-latency >"$CS/mpath_policy" || return 1
	tc qdisc add dev veth2 root netem delay 100ms || return 1
	if ! wait_for 30 latency_above "$P2" 100000000; then
		tc qdisc del dev veth2 root
		return 1
	fi
	l1=$(cat "$CS/paths/$P1/cur_latency")
	l2=$(cat "$CS/paths/$P2/cur_latency")
	io_window 4 || return 1
	read -r a b <<<"$(ios_of)"
	tc qdisc del dev veth2 root
	figure "min-latency: latency $l1 / $l2 ns, requests $a / $b"
	[ "$l2" -gt 100000000 ] && [ "$l2" -gt "$l1" ] && [ "$a" -gt 20 ] &&
		[ $(( b * 20 )) -le "$a" ]
}

# ---- set-up -------------------------------------------------------------

b=$(rtrs_build_dir)
check "veth pair with rxe on both ends" topology_pair
check "second veth pair with rxe on both ends" topology_second_pair
on_new_pair 1 "rping across pair 1" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
on_new_pair 2 "rping across pair 2" rping_pair 198.51.100.2 198.51.100.1 rxe3 rxe2
modprobe -a ib_core rdma_cm sch_netem
# 128 chunks a session instead of 512: path set-up, which the cycles
# below repeat, registers one MR per chunk on each side.
check "load rtrs-core" insmod "$b/rtrs-core.ko"
check "load rtrs-server" insmod "$b/rtrs-server.ko" sess_queue_depth="${MPATH_QD:-128}"
for m in rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done
# The IO threads at nice 19: under TCG four of them at nice 0 and rxe's
# packet work fill both vCPUs, and a remove_path/add_path cycle, whose
# work items and CM handlers then wait for the CPU, took 6 s instead of
# 1.5.  Idle, they still run as fast; the cycles still run under IO.
check "open a session over two paths" \
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$P1,$P2" threads=4 nice=19
check "client path 1 connected" wait_for 30 state_is "$P1" connected
check "client path 2 connected" wait_for 30 state_is "$P2" connected
check "server shows both paths" \
	wait_for 10 test -d "$SS/paths/$P1" -a -d "$SS/paths/$P2"

# ---- sysfs matches its documentation ------------------------------------

check "client sysfs is what sysfs-class-rtrs-client says" \
	abi_match "$ABI/sysfs-class-rtrs-client" "$CS" "<src@dst>"
check "server sysfs is what sysfs-class-rtrs-server says" \
	abi_match "$ABI/sysfs-class-rtrs-server" "$SS" "<client@server>"
check "path shows its device" same_content "$CS/paths/$P1/hca_name" rxe0
# Both sides agree on the lower of their highest minors: between two
# peers of this build with their defaults, 2.1.
check "client path speaks 2.1" same_content "$CS/paths/$P1/proto_version" 2.1
check "server path speaks 2.1" same_content "$SS/paths/$P1/proto_version" 2.1
check "path shows its addresses" same_content "$CS/paths/$P2/dst_addr" \
	ip:198.51.100.2
check "server path shows the client" same_content "$SS/paths/$P2/src_addr" \
	ip:198.51.100.1
check "default policy is min-inflight" same_content "$CS/mpath_policy" \
	min-inflight

# ---- IO under the policies ----------------------------------------------

check "start verified IO" sh -c "echo 1 > $PARAMS/run"
check "IO flows" ios_grow 3
check "round-robin shares requests evenly" policy_round_robin
check "min-inflight uses both paths" policy_min_inflight
check "min-latency avoids the slow path" policy_min_latency
check "restart verified IO" sh -c "echo 1 > $PARAMS/run"
check "server counts the writes it got" test "$(cat "$SS/paths/$P1/stats/writes")" -gt 0
io_clean "no IO error so far"

# ---- failover: link down, device deleted, and back ------------------------

echo round-robin >"$CS/mpath_policy"
check "IO on path 2 before the failure" wait_for 10 pstat_gt "$P2" writes 0
t0=$(date +%s)
ip link set veth2 down
check "path 2 fails after its link went down" wait_for 60 state_is_not "$P2" connected
figure "path 2 left connected $(( $(date +%s) - t0 )) s after its link went down"
check "IO goes on over path 1" ios_grow 3
check "requests in flight failed over" pstat_gt "$P2" failovers 0
check "rdma link delete rxe2 returns" timeout 60 rdma link delete rxe2
check "IO goes on without rxe2" ios_grow 3
check "failed reconnects are counted" wait_for 30 pstat_gt "$P2" reconnect_fails 0
io_clean "no IO error while path 1 lived"
check "link of path 2 up again" link_up veth2
check "rxe2 added back" rxe_add rxe2 veth2
t0=$(date +%s)
check "path 2 reconnects" wait_for 60 state_is "$P2" connected
figure "path 2 reconnected $(( $(date +%s) - t0 )) s after rxe2 came back"
check "reconnects are counted" pstat_gt "$P2" reconnects 0
reset_stats
check "path 2 carries IO again" wait_for 10 pstat_gt "$P2" writes 0

# ---- server-side disconnect and device removal under IO -----------------

t0=$(date +%s)
r0=$(pstat "$P1" reconnects)
check "server disconnects path 1" sh -c "echo 1 > '$SS/paths/$P1/disconnect'"
check "path 1 reconnects" wait_for 60 pstat_gt "$P1" reconnects "$r0"
check "path 1 comes back" wait_for 60 state_is "$P1" connected
figure "path 1 back $(( $(date +%s) - t0 )) s after the server disconnected it"
check "server side rdma link delete rxe3 returns" timeout 60 rdma link delete rxe3
check "path 2 fails when the server loses rxe3" wait_for 60 state_is_not "$P2" connected
check "rxe3 added back" rxe_add rxe3 veth3
check "path 2 reconnects to the server" wait_for 60 state_is "$P2" connected
check "IO goes on" ios_grow 3
io_clean "no IO error after server-side closes"

# ---- client-side actions ------------------------------------------------

check "disconnect path 2" sh -c "echo 1 > '$CS/paths/$P2/disconnect'"
# The sleeps of the "stays closed" checks are what they check: that
# nothing happens for a while.
check "disconnected path 2 stays closed" sh -c "sleep 3; [ \"\$(cat '$CS/paths/$P2/state')\" = closed ]"
check "reconnect path 2" sh -c "echo 1 > '$CS/paths/$P2/reconnect'"
check "path 2 connected after reconnect" state_is "$P2" connected
io_clean "no IO error after disconnect and reconnect"

# ---- the reconnect budget ------------------------------------------------

# With two reconnects allowed, a path whose link stays down gives up and
# stays closed even once the link is back, until told to reconnect.
check "allow 2 reconnects" sh -c "echo 2 > '$CS/max_reconnect_attempts'"
ip link set veth2 down
check "path 2 gives up after its reconnects" wait_for 90 state_is "$P2" closed
check "reconnects that gave up are counted" pstat_gt "$P2" reconnect_fails 1
check "link of path 2 back" link_up veth2
check "rxe2 created anew" recreate_rxe rxe2 veth2
# Another "stays closed": the sleep is the check.
check "path 2 stays closed" sh -c "sleep 4; [ \"\$(cat '$CS/paths/$P2/state')\" = closed ]"
check "reconnect brings it back" sh -c "echo 1 > '$CS/paths/$P2/reconnect'"
check "path 2 connected again" state_is "$P2" connected
check "reconnect forever again" sh -c "echo -1 > '$CS/max_reconnect_attempts'"
io_clean "no IO error while path 2 gave up"

# ---- failover into a shared chunk ---------------------------------------
# The server holds a LATE write 14 s and stores it from its chunk only
# then, as a disk stores a bio's pages when it gets to them.  With the
# session's io_timeout_sec at 8 s, such a write fails its path (at the
# watchdog's next look, 8 to 13 s after it was sent) and is sent again
# over the other path in the same chunk; our server runs it once the
# first copy ended, at most 6 s later, and the test server then serves
# it at once.  When it completes, its chunk is quarantined until the
# failed path is back, unless that path is back already
# (Documentation/rtrs.rst, "Failover and chunks").  Checked: in the
# client's trace no request went into a quarantined chunk before the end
# of its quarantine; the server saw no held write's chunk change under it
# (ios_clobbered); every block read back at the end holds the last
# pattern written there (the copy sent again completed only after the
# first one was stored).  One round, one LATE write; interop runs the
# same against mainline's server.
TRACING=/sys/kernel/tracing
QEVENTS="rtrs_clt_submit rtrs_clt_quarantine rtrs_clt_quarantine_end"
late_round() {
	local f0
	f0=$(tstat failovers)
	echo 1 >"$PARAMS/late_writes" || return 1
	wait_for 40 tstat_above failovers "$f0" || return 1
	wait_for 60 quarantine_over "$P1" "$P2" || return 1
	echo "failovers $f0 -> $(tstat failovers)"
}
qtrace_on() {
	local e
	[ -d "$TRACING/events" ] || mount -t tracefs nodev "$TRACING" || return 1
	echo 16384 >"$TRACING/buffer_size_kb" && echo >"$TRACING/trace" || return 1
	for e in $QEVENTS; do
		echo 1 >"$TRACING/events/rtrs_clt/$e/enable" || return 1
	done
}
# qtrace_off: events off, the trace to RTRS_TMP/qtrace; none may be lost.
qtrace_off() {
	local e lost
	for e in $QEVENTS; do
		echo 0 >"$TRACING/events/rtrs_clt/$e/enable" || return 1
	done
	cat "$TRACING/trace" >"$RTRS_TMP/qtrace" || return 1
	lost=$(cat "$TRACING"/per_cpu/cpu*/stats | awk '/^overrun:/ { n += $2 } END { print n + 0 }')
	echo >"$TRACING/trace" && echo 1408 >"$TRACING/buffer_size_kb"
	echo "$(wc -l <"$RTRS_TMP/qtrace") lines, $lost overrun"
	[ "$lost" -eq 0 ]
}
# quarantine_kept: no request went into an id between its quarantine and
# the end of that quarantine (one path fails at a time here, so an end is
# that of every id quarantined before).  How many were quarantined is
# told, not checked: a path back before its request's second copy
# completed needs none.
quarantine_kept() {
	awk '
	/ rtrs_clt_quarantine_end: / { delete q; next }
	/ rtrs_clt_quarantine: / {
		for (i = 1; i < NF; i++) if ($i == "id") q[$(i + 1)] = 1
		n++
		next
	}
	/ rtrs_clt_submit: / {
		for (i = 1; i < NF; i++)
			if ($i == "id" && ($(i + 1) in q)) {
				bad++
				print "request into quarantined id " $(i + 1)
			}
	}
	END {
		print n + 0 " ids quarantined, " bad + 0 " requests into them"
		exit bad > 0
	}' "$RTRS_TMP/qtrace"
}
check "io_timeout_sec is off by default" same_content "$CS/io_timeout_sec" 0
check "server holds LATE writes 14 s" sh -c "echo 14000 > $TSP/late_ms"
check "io_timeout_sec 8" sh -c "echo 8 > '$CS/io_timeout_sec'"
check "client's submit and quarantine events on" qtrace_on
check "a held write fails its path over; its chunk is quarantined until the path is back" late_round
check "io_timeout_sec off again" sh -c "echo 0 > '$CS/io_timeout_sec'"
check "client's events off, none lost" qtrace_off
check "no request went into a quarantined chunk" quarantine_kept
check "stop IO to read everything back" sh -c "echo 0 > $PARAMS/run"
check "the server answered every held write" wait_for 30 held_none
check "the held write was stored late" test "$(cat "$TSP/ios_late")" -ge 1
check "no held write's chunk changed under it" test "$(cat "$TSP/ios_clobbered")" -eq 0
check "read back every block written" sh -c "echo 1 > $PARAMS/check"
check "blocks were read back" counter_gt checked 0
check "every block holds its last write" test "$(counter check_errors)" -eq 0
io_clean "no IO error with held writes"
check "restart verified IO after the read-back" sh -c "echo 1 > $PARAMS/run"

# ---- bad writes ---------------------------------------------------------

check "add_path garbage: EINVAL" write_errno "$CS/add_path" "ip:not-an-address" "Invalid argument"
check "add_path overlong: E2BIG" write_errno "$CS/add_path" "ip:$(printf '1%.0s' $(seq 300))" "Argument list too long"
check "add_path duplicate: EEXIST" write_errno "$CS/add_path" "$P1" "File exists"
# An address of the second pair's subnet that nobody answers: the write
# fails only once the RDMA CM gives up resolving it, after the client's
# 30 s connect timeout.  The bad writes below run meanwhile, none of
# them waits for a path change; the script waits for the add after them,
# outside a check, whose subshell could not wait for the script's job.
UNREACH=$RTRS_TMP/unreachable
write_errno "$CS/add_path" "ip:$PAIR_A@ip:203.0.113.9" "error" >"$UNREACH" 2>&1 &
unreach=$!
check "mpath_policy unknown: EINVAL" write_errno "$CS/mpath_policy" "fastest" "Invalid argument"
check "mpath_policy unchanged" same_content "$CS/mpath_policy" round-robin
check "max_reconnect_attempts garbage: EINVAL" write_errno "$CS/max_reconnect_attempts" "many" "Invalid argument"
check "max_reconnect_attempts -2: ERANGE" write_errno "$CS/max_reconnect_attempts" "-2" "out of range"
check "max_reconnect_attempts 40000: ERANGE" write_errno "$CS/max_reconnect_attempts" "40000" "out of range"
check "max_reconnect_attempts unchanged" same_content "$CS/max_reconnect_attempts" -1
check "io_timeout_sec garbage: EINVAL" write_errno "$CS/io_timeout_sec" "soon" "Invalid argument"
check "io_timeout_sec -1: EINVAL" write_errno "$CS/io_timeout_sec" "-1" "Invalid argument"
check "io_timeout_sec 3601: ERANGE" write_errno "$CS/io_timeout_sec" "3601" "out of range"
check "io_timeout_sec unchanged" same_content "$CS/io_timeout_sec" 0
check "disconnect 2: EINVAL" write_errno "$CS/paths/$P1/disconnect" "2" "Invalid argument"
check "reset_all 0: EINVAL" write_errno "$CS/paths/$P1/stats/reset_all" "0" "Invalid argument"
check "server disconnect garbage: EINVAL" write_errno "$SS/paths/$P1/disconnect" "yes please" "Invalid argument"
unreach_rc=0
wait "$unreach" || unreach_rc=$?
unreachable_failed() { [ "$unreach_rc" -eq 0 ] || { cat "$UNREACH"; return 1; }; }
check "add_path unreachable fails" unreachable_failed
check "add_path failure leaves no path" test "$(ls -d "$CS"/paths/*@* | wc -l)" -eq 2
check "both paths still connected" sh -c "[ \"\$(cat '$CS/paths/$P1/state')\" = connected ] && [ \"\$(cat '$CS/paths/$P2/state')\" = connected ]"
io_clean "no IO error from bad writes"

# ---- remove_path / add_path cycles under IO ----------------------------

cycle_paths() {
	local i t0
	t0=$(date +%s)
	for i in $(seq "$CYCLES"); do
		echo 1 >"$CS/paths/$P2/remove_path" || { echo "cycle $i: remove failed"; return 1; }
		[ ! -e "$CS/paths/$P2" ] || { echo "cycle $i: directory stayed"; return 1; }
		echo "$P2" >"$CS/add_path" || { echo "cycle $i: add failed"; return 1; }
		state_is "$P2" connected || { echo "cycle $i: not connected"; return 1; }
	done
	figure "$CYCLES remove_path/add_path cycles in $(( $(date +%s) - t0 )) s"
}
check "remove_path/add_path cycles under IO" cycle_paths
check "remove path 2" sh -c "echo 1 > '$CS/paths/$P2/remove_path'"
check "removing the last path: EBUSY" write_errno "$CS/paths/$P1/remove_path" 1 "busy"
check "last path remains" state_is "$P1" connected
check "IO goes on over one path" ios_grow 3
io_clean "no IO error in path cycles"
echo "$P2" >"$CS/add_path"

# ---- both paths down: errors, no hang, recovery --------------------------

IOERR0=$(counter io_errors)
ip link set veth0 down
ip link set veth2 down
check "both paths fail" wait_for 90 sh -c "[ \"\$(cat '$CS/paths/$P1/state')\" != connected ] && [ \"\$(cat '$CS/paths/$P2/state')\" != connected ]"
check "IO fails with an error instead of hanging" wait_for 30 counter_gt io_errors "$IOERR0"
check "links up again" link_up veth0 veth2
check "rxe0 created anew" recreate_rxe rxe0 veth0
check "rxe2 created anew after both went down" recreate_rxe rxe2 veth2
check "a path comes back" wait_for 90 sh -c "[ \"\$(cat '$CS/paths/$P1/state')\" = connected ] || [ \"\$(cat '$CS/paths/$P2/state')\" = connected ]"
IOERR0=$(counter io_errors)
check "IO recovers" ios_grow 3

check "stop IO" sh -c "echo 0 > $PARAMS/run"

# ---- a path added while no path is up -----------------------------------
# add_path brings the session back, so the user hears "reconnected" and,
# like rnbd with its session info, sends at once without waiting for a
# permit.  The test client's link probe does that: the new path must
# already carry it.  Were the event told before the path is listed, the
# probe would find no path and rnbd would never map its devices again.

# probes PATTERN: link probe log lines of this session matching PATTERN.
probes() { dmesg | grep -c "$SESS: link probe $1"; }
probes_above() { [ "$(probes "$1")" -gt "$2" ]; }
both_state() { state_is "$P1" "$1" && state_is "$P2" "$1"; }
check "both paths connected" wait_for 90 both_state connected
check "disconnect both paths" sh -c "echo 1 > '$CS/paths/$P1/disconnect' && echo 1 > '$CS/paths/$P2/disconnect'"
check "both paths closed" both_state closed
check "remove path 1 while no path is up" sh -c "echo 1 > '$CS/paths/$P1/remove_path'"
PROBES0=$(probes "answered: 0")
UNSENT0=$(probes "not sent")
check "add path 1 again" sh -c "echo '$P1' > '$CS/add_path'"
check "the reconnected event's probe is answered" wait_for 10 probes_above "answered: 0" "$PROBES0"
check "no probe failed to go out" test "$(probes "not sent")" -eq "$UNSENT0"
check "reconnect path 2" sh -c "echo 1 > '$CS/paths/$P2/reconnect'"
check "both paths connected after the add" both_state connected
check "no read ever differed from its write" test "$(counter verify_errors)" -eq 0
figure "final: ios $(counter ios) io_errors $(counter io_errors) verify_errors $(counter verify_errors)"

for m in rtrs-test-clt rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
check "no session left in sysfs" not test -e "$CS"
