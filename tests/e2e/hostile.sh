# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): peers that lie.  tests/peer/rtrs-peer
# is a userspace RTRS 2.0 client and server on rxe1, and a 2.1 client; our
# modules are on rxe0.  Part A: the peer as a client sends each protocol
# violation that Documentation/rtrs.rst lists under "Hostile peers" to
# rtrs-server (with tests/user/rtrs-test-srv), in 2.0 and in 2.1, while a
# well-behaved rtrs-test-clt session runs verified IO.  Part B: the peer
# as a server responds to rtrs-test-clt's opens and IO with lies.  For
# every case: the peer sees the response the protocol requires (reject,
# close, or service for the legal oddities); the side under test is left
# with no session and no queue pair of it; the transport logged at least
# one (for a lie) and at most a few lines; and a well-behaved session
# still gets verified IO right after.  The debug kernel's reports fail
# the run, and kmemleak must find nothing (guest-init.sh's scan after the
# script).

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

b=$(rtrs_build_dir)
PEER=$b/tests/peer/rtrs-peer
SRV=/sys/class/rtrs-server
CLT=/sys/class/rtrs-client/rtrs-test-clt
GOOD="ip:$PAIR_A@ip:$PAIR_B"
# Lines of the kernel log a single violation may cost, rate limit and all.
MAX_LINES=${HOSTILE_MAX_LINES:-6}


# qps_into VAR: set VAR to the number of queue pairs rdma lists (the
# lines of its output), with no process but rdma's: server_idle runs
# often, and every process counts under TCG.
qps_into() {
	local out nl
	out=$(rdma res show qp)
	nl=${out//[!$'\n']/}
	printf -v "$1" %d $(( ${#out} ? ${#nl} + 1 : 0 ))
}
qps() { local n; qps_into n; echo "$n"; }
qps_above() { [ "$(qps)" -gt "$1" ]; }

# peer ARGS...: run the peer, its output appended to peer.log in the
# results; on failure its last lines go to the check's output.
peer() {
	echo "== rtrs-peer $*" >>"$RESULTS/peer.log"
	timeout "${PEER_TIMEOUT:-90}" "$PEER" "$@" >>"$RESULTS/peer.log" 2>&1 &&
		return
	tail -n 4 "$RESULTS/peer.log"
	return 1
}
# Lines of the transport modules; the test users log every failed IO.
rtrs_lines() { dmesg | grep -cE '(rtrs_core|rtrs_client|rtrs_server): '; }

# Part A runs with a good session open: IDLE_SESS is the server's
# sessions then ("" or rtrs-test-clt), IDLE_QPS the queue pairs.
IDLE_SESS=
IDLE_QPS=

# server_idle: the server has no session, queue pair or test server
# session beyond the good client's.  Builtins but for rdma: it is polled.
server_idle() {
	local s sessions=() idle n
	for s in "$SRV"/*; do
		[ -e "$s" ] && sessions+=("${s##*/}")
	done
	[ "${sessions[*]}" = "$IDLE_SESS" ] || return 1
	qps_into n
	[ "$n" -eq "$IDLE_QPS" ] || return 1
	read -r n </sys/module/rtrs_test_srv/parameters/sessions_connected &&
		read -ra idle <<<"$IDLE_SESS" && [ "$n" -eq "${#idle[@]}" ]
}

# path_connected: a path of the test client is connected (builtins
# only: it is polled).
path_connected() {
	local f st
	for f in "$CLT"/paths/*/state; do
		read -r st 2>/dev/null <"$f" && [ "$st" = connected ] && return 0
	done
	return 1
}

# no_io_errors: the good client's IO all verified.
no_io_errors() {
	[ "$(counter io_errors)" -eq 0 ] && [ "$(counter verify_errors)" -eq 0 ] ||
		{ echo "io_errors $(counter io_errors) verify_errors $(counter verify_errors)"; return 1; }
}

# uptime_cs VAR: set VAR to the seconds since boot, in hundredths.
uptime_cs() {
	local up
	read -r up _ </proc/uptime
	printf -v "$1" %d $((10#${up/./}))
}

# ios_move: verified write-read pairs complete within a second, as
# ios_grow 1 has them, but this returns as soon as one has: the window is
# a second at most, the last read at least a second after the first.  It
# is taken after every case; it reads the counter with read, every 0.2 s.
ios_move() {
	local a b t0 t
	read -r a <"$PARAMS/ios" || return 1
	uptime_cs t0
	while :; do
		uptime_cs t
		read -r b <"$PARAMS/ios" || return 1
		[ "$b" -gt "$a" ] && { echo "ios $a -> $b"; return 0; }
		[ $((t - t0)) -lt 100 ] || break
		nap 0.2
	done
	echo "ios $a -> $b"
	return 1
}

# good_start: rtrs-test-clt opens a session and runs verified IO, paced
# (a pair every 20 ms at most): flat out, it kept a vCPU of the guest busy
# and every case's peer and shell waited for the other one.  Its IO keeps
# to the test server's first MiB: the peer's cases store at 1 MiB and
# 1.5 MiB (SC_X, V21_OFF in rtrs-peer.c), and with the whole store the
# good client's pattern once overwrote v21-good's between its WRITE and
# its READ.
good_start() {
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$GOOD" threads=1 \
		pause_ms=20 store_kb=1024 &&
		wait_for 30 path_connected && echo 1 >"$PARAMS/run" &&
		ios_move && no_io_errors
}

# served: the good client's verified IO goes on.
served() {
	ios_move && no_io_errors
}

good_stop() {
	echo 0 >"$PARAMS/run" && no_io_errors && rmmod rtrs-test-clt
}

# good_client: a session opened anew gets verified IO, and closes.
good_client() {
	local rc=0
	good_start || rc=1
	good_stop || rc=1
	wait_for 20 server_idle || rc=1
	return $rc
}

# Part A's cases go to one peer (rtrs-peer client-loop) a line at a
# time, on fd 7, its verdicts coming back on fd 8: one process start for
# them all, and the checks of each case still between two cases.  Not
# in a check: the peer and its fds must outlive a check's subshell.
loop_start() {
	mkfifo "$RTRS_TMP/peer.in" "$RTRS_TMP/peer.out" || return 1
	echo "== rtrs-peer client-loop" >>"$RESULTS/peer.log"
	timeout 1800 "$PEER" client-loop "$PAIR_B" "$PAIR_A" 1234 \
		<"$RTRS_TMP/peer.in" >"$RTRS_TMP/peer.out" 2>>"$RESULTS/peer.log" &
	LOOP_PID=$!
	exec 7>"$RTRS_TMP/peer.in" 8<"$RTRS_TMP/peer.out"
}

# loop_end: end of the cases; LOOP_RC is the peer's exit status (0: every
# case passed).  Not in a check: a check's subshell cannot wait for it.
loop_end() {
	exec 7>&- 8<&-
	LOOP_RC=0
	wait "$LOOP_PID" || LOOP_RC=$?
	rm -f "$RTRS_TMP/peer.in" "$RTRS_TMP/peer.out"
}

# loop_case CASE [HOLD]: the looping peer plays CASE (given HOLD
# seconds): its verdict is a pass.
loop_case() {
	local name r
	echo "$1 ${2:-10}" >&7 || { echo "the peer is gone"; return 1; }
	if ! read -r -t "${PEER_TIMEOUT:-90}" name r <&8; then
		echo "no verdict from the peer on $1"
		return 1
	fi
	[ "$name" = "$1" ] && [ "$r" = 0 ] && return
	tail -n 4 "$RESULTS/peer.log"
	echo "the peer's verdict on $1: $name $r"
	return 1
}

# peer_case CASE MIN [HOLD]: the peer's case (given HOLD seconds) passes,
# the server is back to the good session alone, the log grew by MIN to
# MAX_LINES lines, and the good client is still served.
peer_case() {
	local before after
	before=$(rtrs_lines)
	loop_case "$1" ${3:+"$3"} || return 1
	wait_for 30 server_idle || { ls "$SRV"; qps; return 1; }
	after=$(rtrs_lines)
	echo "rtrs log lines: $((after - before))"
	[ $((after - before)) -ge "$2" ] && [ $((after - before)) -le "$MAX_LINES" ] ||
		{ dmesg | tail -n $((after - before)); return 1; }
	served
}

# shared_chunk: one session of two paths sends one write into one chunk
# on both at once, as a client that failed it over does (see
# "shared-chunk" in rtrs-peer.c), with the test server holding the
# first 2 s: the second copy runs only once the first has ended, the
# write stores what its client wrote, nothing is logged, and the good
# client is served.
LATE_MS=/sys/module/rtrs_test_srv/parameters/late_ms
shared_chunk() {
	local old rc=0
	old=$(cat "$LATE_MS")
	echo 2000 >"$LATE_MS"
	peer_case shared-chunk 0 2 || rc=1
	echo "$old" >"$LATE_MS"
	return $rc
}

# release START: end the hold of the peer started when peer.log had START
# lines, with SIGUSR1 to the pid its "holding" line gives (none of an
# earlier peer's lines).  Without it the hold lasts the time it was
# given, its upper bound.
release() {
	local pid
	pid=$(tail -n +$(($1 + 1)) "$RESULTS/peer.log" |
		sed -n 's/^rtrs-peer: .*holding .*, pid \([0-9][0-9]*\)$/\1/p')
	pid=${pid##*$'\n'}
	if [ -z "$pid" ] || ! kill -USR1 "$pid" 2>/dev/null; then
		echo "no peer to release"
	fi
}

# partial_held: while connection 1 of 2 is held open, a new session
# opens and gets verified IO; the half path goes when the peer drops it,
# released once the good client has stopped (40 s at most).
partial_held() {
	local pid rc=0 t0 start
	start=$(wc -l <"$RESULTS/peer.log")
	peer client "$PAIR_B" "$PAIR_A" 1234 partial 40 &
	pid=$!
	wait_for 20 qps_above "$IDLE_QPS" || rc=1
	t0=$(date +%s)
	good_start || rc=1
	echo "session opened in $(( $(date +%s) - t0 )) s"
	kill -0 "$pid" || { echo "the peer had let go before"; rc=1; }
	good_stop || rc=1
	release "$start"
	wait "$pid" || rc=1
	wait_for 30 server_idle || rc=1
	return $rc
}

# half_flood N BUDGET: with the server's budget of connections of paths
# being set up at BUDGET for each client, the peer starts N sessions of
# one connection of two each and holds them: the server takes no more
# than BUDGET, its memory grows by less than five sessions' chunks would
# take (no chunk before an INFO_REQ), and a new session from another
# address opens and gets verified IO meanwhile.  The peer holds them
# until that session has stopped (30 s at most).
PER_CLIENT=/sys/module/rtrs_server/parameters/setup_cons_per_client
mem_avail_kb() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
half_held() { tail -n +"$1" "$RESULTS/peer.log" | grep -q "^rtrs-peer: half sessions: "; }
half_flood() {
	local old pid start before during taken rc=0
	old=$(cat "$PER_CLIENT")
	echo "$2" >"$PER_CLIENT"
	start=$(wc -l <"$RESULTS/peer.log")
	before=$(mem_avail_kb)
	PEER_TIMEOUT=300 peer client "$PAIR_B" "$PAIR_A" 1234 "half-$1" 30 &
	pid=$!
	wait_for 240 half_held "$start" || rc=1
	during=$(mem_avail_kb)
	taken=$(tail -n +"$start" "$RESULTS/peer.log" |
		sed -n 's/^rtrs-peer: half sessions: \([0-9]*\) taken.*/\1/p')
	echo "half sessions taken: ${taken:-?} of $1; MemAvailable $before -> $during kB"
	[ "${taken:-99999}" -le "$2" ] || rc=1
	# Queue pairs on both sides, a few hundred KiB each, take some;
	# chunks would take 12.5 MiB a session (100 x 128 KiB), 400 MiB for
	# the 32 the budget lets in.
	[ $((before - during)) -lt $((64 * 1024)) ] || rc=1
	good_start || rc=1
	good_stop || rc=1
	release "$start"
	wait "$pid" || rc=1
	echo "$old" >"$PER_CLIENT"
	wait_for 60 server_idle || rc=1
	return $rc
}

# v21_rq: the peer's 2.1 session sends four times srq_size requests at
# once, each of which the test server holds a second: those beyond the
# shared receive queue wait on receiver-not-ready, and every one is
# served, not before three seconds (see "v21-rq" in rtrs-peer.c).  The
# queue of a device is made, with srq_size buffers, by the first 2.1 path
# on it and goes with the last: the peer's paths are the only ones on the
# server's rxe0 (the good client's reach it on rxe1), and none is left
# from the cases before (server_idle), so this one's queue has 16.
SRQ_SIZE=/sys/module/rtrs_server/parameters/srq_size
v21_rq() {
	local old rc=0
	old=$(cat "$SRQ_SIZE")
	echo 16 >"$SRQ_SIZE"
	peer_case v21-rq 0 16 || rc=1
	echo "$old" >"$SRQ_SIZE"
	return $rc
}

# stalled_case CASE: with connect_timeout_sec at 5, the server closes a
# path that CASE never completes, not before the 5 s and not long after,
# says why, and is idle after.
CONNECT_TIMEOUT=/sys/module/rtrs_server/parameters/connect_timeout_sec
stalled_case() {
	local old rc=0 start t0 took
	old=$(cat "$CONNECT_TIMEOUT")
	echo 5 >"$CONNECT_TIMEOUT"
	start=$(dmesg | wc -l)
	t0=$(date +%s)
	peer client "$PAIR_B" "$PAIR_A" 1234 "$1" 30 || rc=1
	took=$(( $(date +%s) - t0 ))
	echo "$old" >"$CONNECT_TIMEOUT"
	[ "$took" -ge 4 ] && [ "$took" -le 20 ] ||
		{ echo "closed after $took s"; rc=1; }
	wait_for 30 server_idle || rc=1
	dmesg | tail -n +$((start + 1)) |
		grep -q 'not connected after 5 s, closing the path' ||
		{ echo "no reason in the log"; rc=1; }
	return $rc
}

# ---- the table of messages and path states --------------------------------
#
# Documentation/rtrs.rst, "Messages and path states": every message a peer
# can send, on connection 0 and on connection 1, in each state of a path's
# set-up, against our server and against our client.  A cell is "keep" (the
# path stays, a heartbeat is acknowledged, an IO gets its response, nothing
# logged) or "close" (the path goes, with one line in the log:
# CELL_MAX_LINES).
MSGS="hb hb-ack io-req io-rsp info-req info-rsp rkey-rsp"
CELL_MAX_LINES=${HOSTILE_CELL_MAX_LINES:-1}
DELAY=/sys/module/rtrs_test_srv/parameters/connect_delay_ms

# srv_want STATE MSG CON: the server's verdict, keep or close.  Before the
# INFO_REQ a client sends nothing but it; once connected, heartbeats,
# their acks and IO requests are taken on any connection; a closing path
# takes nothing.  Connection 0 is handled in order: what follows the
# INFO_REQ there is handled once the path is connected (the peer's IO
# request then, with no chunk known to it, is malformed).
srv_want() {
	case $1:$2:$3 in
	open:info-req:0) echo keep ;;
	info:hb:0 | info:hb-ack:0) echo keep ;;
	conn:hb:* | conn:hb-ack:* | conn:io-req:*) echo keep ;;
	*) echo close ;;
	esac
}

# srv_cell_list: every cell of the server's table, one a line.
srv_cell_list() {
	local st msg con
	for st in ${HOSTILE_SRV_STATES:-later open info conn closing}; do
		for msg in $MSGS; do
			for con in 0 1; do
				[ "$st:$con" = later:0 ] && continue
				[ "$st:$con" = closing:0 ] && continue
				echo "m:$st:$msg:$con:$(srv_want "$st" "$msg" "$con")"
			done
		done
	done
}

# srv_cells CELL...: the peer as a client plays the cells, each on a
# session of its own; the server is then back to the good session alone.
# The cells of state "info" run last, with the test server's CONNECTED
# event held 2 s so that "info" is a state the peer can reach; the others
# do not wait for it (a path of state "open" or "later" has had no
# INFO_REQ, one of "conn" or "closing" is past it either way).  The
# kernel log goes to cells.log.
srv_cells() {
	local c rc=0 info=() rest=()
	for c; do
		case $c in
		m:info:*) info+=("$c") ;;
		*) rest+=("$c") ;;
		esac
	done
	echo 0 >"$DELAY"
	[ ${#rest[@]} -eq 0 ] ||
		PEER_TIMEOUT=$((30 * ${#rest[@]})) peer cells "$PAIR_B" "$PAIR_A" 1234 \
			"${rest[@]}" || rc=1
	echo 2000 >"$DELAY"
	[ ${#info[@]} -eq 0 ] ||
		PEER_TIMEOUT=$((30 * ${#info[@]})) peer cells "$PAIR_B" "$PAIR_A" 1234 \
			"${info[@]}" || rc=1
	echo 0 >"$DELAY"
	wait_for 30 server_idle || { ls "$SRV"; qps; rc=1; }
	dmesg >"$RESULTS/cells.log"
	return $rc
}

# cells_tally LOG: for each cell the peer played against the server,
# whether it said ok (CELL_OK), and for each cell marked in the kernel
# log LOG, how many transport lines it has from the cell's mark to the
# next mark (CELL_LINES): read once, for all the checks of cell_result
# and cell_lines.  The peer marks the server's cells ("rtrs-peer: cell"),
# the script the client's ("hostile: cell"), "cells done" after the last.
declare -A CELL_OK CELL_LINES
cells_tally() {
	local cell n
	CELL_OK=()
	CELL_LINES=()
	while read -r cell; do
		[ -n "$cell" ] && CELL_OK[$cell]=1
	done <<<"$(sed -n 's/^rtrs-peer: cell \(m:.*\): ok$/\1/p' "$RESULTS/peer.log")"
	while read -r cell n; do
		[ -n "$cell" ] && CELL_LINES[$cell]=$n
	done <<<"$(awk '
		/(rtrs-peer|hostile): cell m:/ {
			if (on) print cell, n + 0
			cell = substr($0, index($0, ": cell m:") + 7)
			if (cell in seen) { on = 0; next }
			seen[cell] = on = 1; n = 0; next
		}
		on && /(rtrs-peer|hostile): cell/ { print cell, n + 0; on = 0; next }
		on && /(rtrs_core|rtrs_client|rtrs_server): / { n++ }
		END { if (on) print cell, n + 0 }' "$1" 2>/dev/null)"
}

# cell_lines CELL: the kernel log grew by what the cell may cost: at most
# CELL_MAX_LINES lines and at least one for a cell that closes, none for
# one that keeps (cells_tally has read the log).
cell_lines() {
	local n min=1 max=$CELL_MAX_LINES
	case $1 in *:keep) min=0 max=0 ;; esac
	n=${CELL_LINES[$1]:-0}
	echo "rtrs log lines: $n"
	[ "$n" -ge $min ] && [ "$n" -le "$max" ]
}

# cell_result CELL: the peer saw what the server's table says, and the
# kernel log grew by what the cell may cost.
cell_result() {
	[ -n "${CELL_OK[$1]:-}" ] ||
		{ grep -F "cell $1" "$RESULTS/peer.log"; return 1; }
	cell_lines "$1"
}

# clt_want STATE MSG CON: the client's verdict.  Before the INFO_RSP
# connection 0's one receive is the INFO_RSP's, and no later connection has
# a receive: a message there waits in the server's send queue until the
# INFO_RSP came, and is then taken as by a connected path.  A client takes
# heartbeats and their acks, and no response while it has no request.
clt_want() {
	case $1:$2:$3 in
	info:hb:1 | info:hb-ack:1 | conn:hb:* | conn:hb-ack:*) echo keep ;;
	*) echo close ;;
	esac
}

# clt_cell_list: every cell of the client's table, one a line.
clt_cell_list() {
	local st msg con
	for st in ${HOSTILE_CLT_STATES:-early info conn closing}; do
		for msg in $MSGS; do
			for con in 0 1; do
				[ "$st:$con" = early:1 ] && continue
				[ "$st:$con" = closing:0 ] && continue
				# Connection 0's own INFO_RSP is the set-up.
				[ "$st:$msg:$con" = early:info-rsp:0 ] && continue
				[ "$st:$msg:$con" = info:info-rsp:0 ] && continue
				echo "m:$st:$msg:$con:$(clt_want "$st" "$msg" "$con")"
			done
		done
	done
}

# clt_cell CELL: the peer (serving one session a cell, in turn) plays
# CELL against a new rtrs-test-clt: keep, the path connects and stays 2 s
# past the message; close, the open fails or the path goes.  The peer
# says the cell went as the table says, and the client left no queue
# pair.  The cell's mark in the kernel log is for cell_lines, after the
# table: the log is read once for all the cells.
clt_cell() {
	local want=${1##*:} start rc=0
	echo "hostile: cell $1" >/dev/kmsg
	start=$(wc -l <"$RESULTS/peer.log")
	if [ "$want" = keep ]; then
		# Staying up is what is tested: a fixed wait past the message.
		liar_client && wait_for 30 path_connected &&
			wait_for 15 cell_sent "$start" && nap 2 &&
			path_connected || rc=1
	elif liar_client; then
		wait_for 30 path_not_connected || rc=1
	fi
	rmmod rtrs-test-clt 2>/dev/null
	cell_passed "$start" "$1" || rc=1
	wait_for 30 server_idle || { qps; rc=1; }
	return $rc
}

# peer_said START TEXT: the line of peer.log after line START that holds
# TEXT, if any (one process: it is polled).
peer_said() {
	awk -v s="$1" -v t="$2" 'NR > s && index($0, t) { print; exit }' \
		"$RESULTS/peer.log"
}

# cell_passed START CELL: the peer's verdict on CELL, after line START of
# its log, comes within 30 s and is ok.
cell_passed() {
	local v deadline=$((SECONDS + 30))
	until v=$(peer_said "$1" "cell $2: ") && [ -n "$v" ]; do
		[ $SECONDS -lt $deadline ] || { echo "no verdict on $2"; return 1; }
		nap 0.5
	done
	[ "$v" = "rtrs-peer: cell $2: ok" ] || { echo "$v"; return 1; }
}
cell_sent() { [ -n "$(peer_said "$1" " sent on connection")" ]; }

# ---- a server that lies to our client ------------------------------------

LIAR_PORT=1235
LIAR="ip:$PAIR_A@ip:$PAIR_B"

liar_listening() {
	rdma res show cm_id | grep -q "LISTEN.*:$LIAR_PORT\b"
}

liar_client() {
	insmod "$b/tests/user/rtrs-test-clt.ko" paths="$LIAR" port=$LIAR_PORT \
		threads=1 io_size=4096 max_reconnect_attempts=0
}

path_not_connected() { ! path_connected; }

# liars CASE...: one peer, in the background, serves sessions on
# LIAR_PORT in turn, each with the next lie or cell CASE; liar_case or
# clt_cell plays the client's side of each.  One peer for all saves a
# process start and a listener a case.
liars() {
	echo "== rtrs-peer server-cells $*" >>"$RESULTS/peer.log"
	timeout $((60 * $#)) "$PEER" server-cells "$PAIR_B" $LIAR_PORT "$@" \
		>>"$RESULTS/peer.log" 2>&1 &
	PEER_PID=$!
}

# liar_case CASE open|io [REASON [STALE]]: the client's side of the
# session the peer (liars) serves with the lie CASE.  open: opening the
# session fails.  io: the session opens, and the lying response (or,
# with the session's io_timeout_sec at 2 s, the lack of one) takes the
# path down, with REASON in the client's log (the peer acknowledges no
# heartbeat: without it, missed heartbeats would take the path down too,
# for no merit of the checks).  The peer says the session went as the
# lie wants, the client logs a few lines (at least one) and leaves no
# queue pair behind.  STALE: the client dropped exactly that many copies
# of responses it had taken (stale_rsps) before it went down.
liar_case() {
	local before after rc=0 start plog stale
	start=$(dmesg | wc -l)
	before=$(rtrs_lines)
	plog=$(wc -l <"$RESULTS/peer.log")
	if [ "$2" = open ]; then
		liar_client && { echo "open succeeded"; rmmod rtrs-test-clt; rc=1; }
	elif liar_client; then
		wait_for 30 path_connected &&
			echo 2 >"$CLT/io_timeout_sec" &&
			echo 1 >"$PARAMS/run" &&
			wait_for 30 path_not_connected || rc=1
		if [ -n "${4:-}" ]; then
			stale=$(cat "$CLT"/paths/*/stats/stale_rsps)
			echo "stale responses dropped: $stale"
			[ "$stale" -eq "$4" ] || rc=1
		fi
		echo 0 >"$PARAMS/run"
		rmmod rtrs-test-clt || rc=1
	else
		echo "open failed"
		rc=1
	fi
	cell_passed "$plog" "$1" ||
		{ tail -n +"$plog" "$RESULTS/peer.log" | tail -n 4; rc=1; }
	if [ -n "${3:-}" ] && ! dmesg | tail -n +$((start + 1)) | grep -q "$3"; then
		echo "no '$3' in the log"
		rc=1
	fi
	wait_for 30 server_idle || { qps; rc=1; }
	after=$(rtrs_lines)
	echo "rtrs log lines: $((after - before))"
	[ $((after - before)) -ge 1 ] && [ $((after - before)) -le "$MAX_LINES" ] ||
		{ dmesg | tail -n $((after - before)); rc=1; }
	return $rc
}

# liars_end: wait for the peer of liars to end; PEER_RC is its exit
# status, 0 once it has served every session as its lie wants.  Not in
# a check: a check's subshell cannot wait for it.
liars_end() {
	PEER_RC=0
	wait "$PEER_PID" || PEER_RC=$?
}

check "veth pair with rxe on both ends" topology_pair
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm ib_uverbs rdma_ucm
check "load rtrs-core" insmod "$b/rtrs-core.ko"
# A queue depth that is no power of two leaves room in the immediate for
# a chunk id past the pool.
check "load rtrs-server" insmod "$b/rtrs-server.ko" sess_queue_depth=100
for m in rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done
BASE_QPS=$(qps)
IDLE_QPS=$BASE_QPS
check "a good client is served" good_client
check "a good client opens a session for part A" good_start
LOOP_RC=0
loop_start || LOOP_RC=$?
check "the peer waits for part A's cases" test "$LOOP_RC" -eq 0
IDLE_SESS=rtrs-test-clt
IDLE_QPS=$(qps)
check "the peer's well-formed WRITE is answered" peer_case good-io 0
check "paths of a session run one request a chunk at a time" shared_chunk

# Connect requests the server must reject.
for c in ${HOSTILE_REQ_CASES:-bad-magic bad-version cid-ge-num cid-num-0 \
		cid-num-huge no-req}; do
	check "connect request $c rejected" peer_case "$c" 1
done
# The RDMA CM pads private data to 56 bytes: a short request arrives
# with zero uuids and no first-conn flag, a join of no known session,
# which is refused without a word.
check "connect request short-req rejected" peer_case short-req 0

# Connections of a session out of order or duplicated.
check "connections in reverse order make a session" peer_case ooo 0
check "a second connection 0 is rejected" peer_case dup-cid 1

# INFO_REQ lies: each closes the path.
for c in ${HOSTILE_INFO_CASES:-info-early info-noterm info-short \
		info-slash info-type}; do
	check "INFO_REQ $c closes the path" peer_case "$c" 1
done

# Lies in a live session: each closes the path.
for c in ${HOSTILE_IO_CASES:-imm-type chunk-id chunk-off usr-len \
		hdr-at-end hdr-type read-sg-cnt read-len flood}; do
	check "IO $c closes the path" peer_case "$c" 1
done
# Protocol 2.1 (Documentation/rtrs.rst, "2.1 on the wire"): a session of
# the peer's that asks for 2.1 has its inline WRITE, WRITE_REQ,
# READ_REQ and READ_BUF served; each lie closes the path (see "protocol 2.1" in
# rtrs-peer.c), among them regions the server's RDMA READ or WRITE cannot
# reach and a connection that takes no more responses; requests beyond
# the shared receive queue are served.  With tagged message ids (the
# peer asks for them), the server carries each tag back; a tag where none
# was agreed, or a tagged id of a slot beyond the queue depth, closes.
check "the peer's 2.1 IO is served" peer_case v21-good 0
check "the peer's 2.1 IO with tagged ids is served" peer_case v21-tag-good 0
for c in ${HOSTILE_V21_CASES:-v21-type v21-usr-len v21-msg-id v21-tag-unasked \
		v21-tag-slot v21-dup-id \
		v21-len v21-inline-short v21-inline-long v21-inline-big \
		v21-zero-key v21-con0 v21-imm v21-imm-con0 v21-bad-rkey v21-rdbuf-len \
		v21-rdbuf-zero v21-dereg v21-norepost}; do
	check "2.1 $c closes the path" peer_case "$c" 1
done
check "2.1 requests beyond the receive queue are all served" v21_rq
mapfile -t CELLS <<<"$(srv_cell_list)"
check "the peer plays the server's table" srv_cells "${CELLS[@]}"
loop_end
check "the peer played part A's cases" test "$LOOP_RC" -eq 0
check "no request reached the user outside its session" \
	test "$(cat /sys/module/rtrs_test_srv/parameters/ios_outside_session)" -eq 0
check "the good client of part A closes" good_stop
IDLE_SESS=
IDLE_QPS=$BASE_QPS
check "server idle after part A" wait_for 20 server_idle
# The cells' results are in the logs: read them with part A's IO stopped.
cells_tally "$RESULTS/cells.log"
for c in "${CELLS[@]}"; do
	IFS=: read -r _ st msg con want <<<"$c"
	check "server: $msg on connection $con, path $st: $want" cell_result "$c"
done

# A path whose connections never all come.
check "a half-built path does not block others" partial_held
check "100 half sessions hold no chunk, and others are served" half_flood 100 32
check "a path missing a connection is closed in time" stalled_case stalled
check "a path without INFO_REQ is closed in time" stalled_case no-info

# Connection responses and INFO_RSPs the client must refuse at open,
# then responses to IO that no request asked for, each with the reason
# the client must give: "answer to no request" unless listed here.  The
# v21-tag- lies first answer a request twice, a copy the client must drop
# (counted in stale_rsps, STALE) and go on, then answer one with a
# tag it never sent.
# io-silent sends no response: the session's io_timeout_sec (set to 2 s
# by liar_case, before the 25 s of missed heartbeats) takes the path
# down.  One peer serves them all in turn; a good client opens a session
# and gets verified IO after each of the two kinds (the next lie's open
# is one more each time).
RSP_CASES=${HOSTILE_RSP_CASES:-rsp-magic rsp-errno rsp-qd-0 rsp-qd-vary \
	rsp-io-huge rsp-hdr-small info-few info-many info-short info-type \
	info-len-0 info-len-odd}
# The v21-rsp- lies come from a server that speaks 2.1 (rtrs-peer.c,
# srv_req21()): an immediate answer to an inline WRITE, a READ_BUF's data
# a byte short, a SEND answer to a READ_BUF, a READ_BUF's data written
# with a key the client did not give (its QP fails with no completion to
# say why); packed responses (the client asks for them by default)
# answering a WRITE twice, a response and a half, 17 responses where the
# receive buffer holds 16.
ANS_CASES=${HOSTILE_ANS_CASES:-io-bad-id io-not-sent io-dup io-type io-silent \
	v21-rsp-imm-write v21-rsp-rdbuf-len v21-rsp-rdbuf-send v21-rsp-rdbuf-key \
	v21-rsp-pack-dup v21-rsp-pack-odd v21-rsp-pack-over v21-tag-dup \
	v21-tag-rdbuf-dup}
declare -A STALE=([v21-tag-dup]=1 [v21-tag-rdbuf-dup]=1)
declare -A ANS_REASON=([io-type]="unknown immediate"
	[io-silent]="waited 2 s for its answer"
	[v21-rsp-rdbuf-len]="READ_BUF answer of a wrong length"
	[v21-rsp-rdbuf-send]="SEND answer to a READ_BUF"
	[v21-rsp-rdbuf-key]="flushed while connected"
	[v21-rsp-pack-odd]="malformed response"
	[v21-rsp-pack-over]="receive failed")
# shellcheck disable=SC2086 # lists of cases
liars $RSP_CASES $ANS_CASES
check "the peer listens for the client's lies" wait_for 10 liar_listening
for c in $RSP_CASES; do
	check "server lie $c fails the open" liar_case "$c" open
done
check "a good client is served after the lies at open" good_client
for c in $ANS_CASES; do
	check "server lie $c closes the path" liar_case "$c" io \
		"${ANS_REASON[$c]:-answer to no request}" "${STALE[$c]:-}"
done
liars_end
check "the peer served every lie" test "$PEER_RC" -eq 0
check "a good client is served after the lies to IO" good_client
mapfile -t CELLS <<<"$(clt_cell_list)"
liars "${CELLS[@]}"
check "the peer listens for the client's table" wait_for 10 liar_listening
for c in "${CELLS[@]}"; do
	IFS=: read -r _ st msg con want <<<"$c"
	check "client: $msg on connection $con, path $st: $want" clt_cell "$c"
done
echo "hostile: cells done" >/dev/kmsg
dmesg >"$RESULTS/clt-cells.log"
cells_tally "$RESULTS/clt-cells.log"
for c in "${CELLS[@]}"; do
	IFS=: read -r _ st msg con want <<<"$c"
	check "client: $msg on connection $con, path $st: log lines" cell_lines "$c"
done
liars_end
check "the peer played the client's table" test "$PEER_RC" -eq 0
check "a good client is served after all" good_client

for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done
