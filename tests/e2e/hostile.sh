# SPDX-License-Identifier: GPL-2.0-or-later
#
# Scenario (test kernel, one guest): a client that lies to our server.
# tests/peer/rtrs-peer, a userspace RTRS 2.0 client on rxe1, sends each
# of the protocol violations Documentation/rtrs.rst lists under "Hostile
# peers" to rtrs-server (with tests/user/rtrs-test-srv) on rxe0.  For
# every case: the peer sees the answer the protocol requires (reject,
# close, or service for the legal oddities), the server is left with no
# session and no queue pair of it, its log holds at least one and at most
# a few rtrs lines, and a well-behaved rtrs-test-clt session right after
# still gets verified IO.  The debug kernel's reports fail the run, and
# kmemleak must find nothing at the end.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

b=$(rtrs_build_dir)
PEER=$b/tests/peer/rtrs-peer
SRV=/sys/class/rtrs-server
CLT=/sys/class/rtrs-client/rtrs-test-clt
GOOD="ip:$PAIR_A@ip:$PAIR_B"
# Lines of the kernel log a single violation may cost, rate limit and all.
MAX_LINES=${HOSTILE_MAX_LINES:-6}

# wait_for SECONDS CMD...: until CMD succeeds.
wait_for() {
	local end=$(( $(date +%s) + $1 ))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$end" ] || { echo "timed out: $*"; return 1; }
		sleep 0.5
	done
}

qps() { rdma res show qp | wc -l; }
rtrs_lines() { dmesg | grep -ci rtrs; }

# server_idle: no session in the server's sysfs, no queue pair beyond the
# baseline, no session with the test server.
server_idle() {
	[ -z "$(ls "$SRV")" ] && [ "$(qps)" -eq "$QP0" ] &&
		[ "$(cat /sys/module/rtrs_test_srv/parameters/sessions_connected)" -eq 0 ]
}

path_connected() {
	grep -qx connected "$CLT"/paths/*/state 2>/dev/null
}

# good_client: rtrs-test-clt opens a session and gets verified IO.
good_client() {
	local rc=0
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$GOOD" threads=1 ||
		return 1
	wait_for 30 path_connected &&
		echo 1 >"$PARAMS/run" && ios_grow 2 || rc=1
	echo 0 >"$PARAMS/run"
	[ "$(counter io_errors)" -eq 0 ] && [ "$(counter verify_errors)" -eq 0 ] ||
		{ echo "io_errors $(counter io_errors) verify_errors $(counter verify_errors)"; rc=1; }
	rmmod rtrs-test-clt || rc=1
	wait_for 20 server_idle || rc=1
	return $rc
}

# peer_case CASE MIN: the peer's case passes, the server is idle again,
# the log grew by MIN to MAX_LINES rtrs lines, and a good client is served.
peer_case() {
	local before after
	before=$(rtrs_lines)
	timeout 90 "$PEER" client "$PAIR_B" "$PAIR_A" 1234 "$1" || return 1
	wait_for 30 server_idle || { ls "$SRV"; qps; return 1; }
	after=$(rtrs_lines)
	echo "rtrs log lines: $((after - before))"
	[ $((after - before)) -ge "$2" ] && [ $((after - before)) -le "$MAX_LINES" ] ||
		{ dmesg | tail -n $((after - before)); return 1; }
	good_client
}

# partial_held: connection 1 of 2 held open does not stop service to
# others, and its queue pair goes when the peer drops it.
partial_held() {
	local pid rc=0
	"$PEER" client "$PAIR_B" "$PAIR_A" 1234 partial 20 &
	pid=$!
	wait_for 20 test "$(qps)" -gt "$QP0" || rc=1
	good_client_busy || rc=1
	wait "$pid" || rc=1
	wait_for 30 server_idle || rc=1
	return $rc
}

# good_client_busy: like good_client, with another path half set up.
good_client_busy() {
	local rc=0
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$GOOD" threads=1 ||
		return 1
	wait_for 30 path_connected &&
		echo 1 >"$PARAMS/run" && ios_grow 2 || rc=1
	echo 0 >"$PARAMS/run"
	rmmod rtrs-test-clt || rc=1
	return $rc
}

# ---- a server that lies to our client ------------------------------------

LIAR_PORT=1235
LIAR="ip:$PAIR_A@ip:$PAIR_B"

liar_listening() {
	rdma res show cm_id | grep -q "LISTEN.*:$LIAR_PORT\b"
}

liar_client() {
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$LIAR" port=$LIAR_PORT \
		threads=1 max_reconnect_attempts=0
}

path_not_connected() { ! path_connected; }

# liar_case CASE open|io: the peer serves one session on LIAR_PORT with
# the lie CASE.  open: opening the session fails.  io: the session opens,
# and the first IO's lying answer takes the path down.  Either way the
# client logs a few lines and leaves no queue pair behind.
liar_case() {
	local pid before after rc=0
	before=$(rtrs_lines)
	timeout 90 "$PEER" server "$PAIR_B" $LIAR_PORT "$1" &
	pid=$!
	wait_for 10 liar_listening || rc=1
	if [ "$2" = open ]; then
		liar_client && { echo "open succeeded"; rmmod rtrs-test-clt; rc=1; }
	else
		if liar_client; then
			wait_for 30 path_connected && echo 1 >"$PARAMS/run" &&
				wait_for 30 path_not_connected || rc=1
			echo 0 >"$PARAMS/run"
			rmmod rtrs-test-clt || rc=1
		else
			echo "open failed"
			rc=1
		fi
	fi
	wait "$pid" || rc=1
	wait_for 30 server_idle || { qps; rc=1; }
	after=$(rtrs_lines)
	echo "rtrs log lines: $((after - before))"
	[ $((after - before)) -ge 1 ] && [ $((after - before)) -le "$MAX_LINES" ] ||
		{ dmesg | tail -n $((after - before)); rc=1; }
	return $rc
}

kmemleak_clean() {
	[ -w /sys/kernel/debug/kmemleak ] || mount -t debugfs none /sys/kernel/debug
	echo scan >/sys/kernel/debug/kmemleak &&
		echo scan >/sys/kernel/debug/kmemleak || return 1
	! grep . /sys/kernel/debug/kmemleak
}

check "veth pair with rxe on both ends" topology_pair
check "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm ib_uverbs rdma_ucm
check "load rtrs-core" insmod "$b/rtrs-core.ko"
# A queue depth that is no power of two leaves room in the immediate for
# a chunk id past the pool.
check "load rtrs-server" insmod "$b/rtrs-server.ko" sess_queue_depth=100
for m in rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done
QP0=$(qps)
check "a good client is served" good_client
check "the peer's well-formed WRITE is answered" peer_case good-io 0

# Connect requests the server must reject.
for c in ${HOSTILE_REQ_CASES:-bad-magic bad-version cid-ge-num cid-num-0 \
		cid-num-huge short-req no-req}; do
	check "connect request $c rejected" peer_case "$c" 1
done

# Connections of a session out of order, duplicated, or never completed.
check "connections in reverse order make a session" peer_case ooo 0
check "a second connection 0 is rejected" peer_case dup-cid 1
check "a half-built path does not block others" partial_held

# INFO_REQ lies: each closes the path.
for c in ${HOSTILE_INFO_CASES:-info-early info-twice info-noterm info-short \
		info-slash info-type}; do
	check "INFO_REQ $c closes the path" peer_case "$c" 1
done

# Lies in a live session: each closes the path.
for c in ${HOSTILE_IO_CASES:-imm-type imm-rsp chunk-id chunk-off usr-len \
		hdr-at-end hdr-type read-sg-cnt read-len flood}; do
	check "IO $c closes the path" peer_case "$c" 1
done
check "a heartbeat on connection 1 is answered" peer_case hb-con 0

# Connection responses and INFO_RSPs the client must refuse at open.
for c in ${HOSTILE_RSP_CASES:-rsp-magic rsp-errno rsp-qd-0 rsp-qd-vary \
		rsp-io-huge rsp-hdr-small info-few info-many info-short \
		info-type}; do
	check "server lie $c fails the open" liar_case "$c" open
done
# Answers to IO that no request asked for.
for c in ${HOSTILE_ANS_CASES:-io-bad-id io-not-sent io-type}; do
	check "server lie $c closes the path" liar_case "$c" io
done
check "a good client is served after all" good_client

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
check "kmemleak finds nothing" kmemleak_clean
