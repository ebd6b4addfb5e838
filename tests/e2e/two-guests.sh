# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Scenario (test kernel, or a stock one; two guests joined by a QEMU
# socket netdev): rxe on each side's NIC, and RDMA traffic between the
# guests: rping over RDMA CM, a perftest RDMA WRITE bandwidth run, and
# sessions of our client to our server over IPv6 with their data checked.
# RTRS_ROLE says which side this is.

SERVER=203.0.113.1
CLIENT=203.0.113.2
SERVER6=2001:db8:1::1
CLIENT6=2001:db8:1::2

case "$RTRS_ROLE" in
server) me=$SERVER ;;
client) me=$CLIENT ;;
*) fail "role" "RTRS_ROLE is '$RTRS_ROLE'"; exit 1 ;;
esac

# virtio_net is built into the test kernel, a module of the stock ones:
# the scenario runs on either.
modprobe virtio_net
wait_for 10 test -d /sys/class/net/eth0
ip addr add "$me/24" dev eth0
case "$RTRS_ROLE" in
server) ip addr add "$SERVER6/64" dev eth0 nodad ;;
client) ip addr add "$CLIENT6/64" dev eth0 nodad ;;
esac
ip link set eth0 up
check "rxe on eth0" rxe_add rxe0 eth0

# The server's ib_write_bw takes up BW_LISTENS once its RDMA CM id
# listens (on perftest's port, 18515); the client connects only then.
BW_LISTENS=203.0.113.12

bw_listens() {
	rdma res show cm_id | grep -q "LISTEN.*:18515\b"
}

# bw_server: one ib_write_bw server, announced on the wire once it
# listens (by an earlier run of it, when this one is a retry).
bw_server() {
	local pid rc=0
	timeout 60 ib_write_bw -R -d rxe0 -s 65536 -n 200 &
	pid=$!
	if wait_for 30 bw_listens; then
		answers_here "$BW_LISTENS" || announce "$BW_LISTENS" || rc=1
	else
		rc=1
	fi
	wait "$pid" || rc=1
	return $rc
}

# answers_here ADDR: this guest has taken up ADDR already.
answers_here() {
	ip addr show dev eth0 | grep -q "inet $1/"
}

if [ "$RTRS_ROLE" = server ]; then
	check "rping server" retry_until 240 timeout 60 rping -s -a "$SERVER" -C 10
	check "ib_write_bw server" retry_until 240 bw_server
else
	check "rping client" retry_until 180 timeout 20 \
		rping -c -a "$SERVER" -C 10 -v
	check "ib_write_bw server listens" wait_for 240 answers "$BW_LISTENS"
	check "ib_write_bw client" retry_until 180 timeout 40 \
		ib_write_bw -R -d rxe0 -s 65536 -n 200 "$SERVER"
fi

# Our modules over IPv6: the client opens, checks data both ways and
# closes two sessions (tests/user/rtrs-test-cycles.ko); the server serves
# until it has seen that many IOs and no session is left.
b=$(rtrs_build_dir)
modprobe -a ib_core rdma_cm
check "load rtrs-core" insmod "$b/rtrs-core.ko"

# served N: the test server responded to N IOs and holds no session.
served() {
	local p=/sys/module/rtrs_test_srv/parameters
	[ "$(cat $p/ios_served)" -ge "$1" ] && [ "$(cat $p/sessions_connected)" -eq 0 ]
}

io_failed() {
	dmesg | grep -q "rtrs_test_cycles: cycle .*IO failed"
}

# What a close may leave behind for a while, in KiB: the KASAN shadow of
# freed vmalloc areas, which the kernel gives back lazily, KASAN's
# quarantine of freed objects, and allocator caches.  Measured: 0.2 MiB
# on the client, none on the server (each side alone, 2026-12-02), and
# 0.5 to 2.5 MiB for both sides together in one guest (session-cycles.sh,
# which allows 8).  4 MiB is above all of those, and a sixth of what a
# session takes on the client (23 MiB: 12 of slab, 12 of vmalloc), a
# twentieth on the server (74 MiB, 64 of them chunks): a close that kept
# any of those parts, or a good share of them, fails.
CLOSE_SLACK=$((4 * 1024))

# pool_kib VAR: sets VAR to the KiB of the server's data buffer pool
# blocks (0 on the client).  The pool takes 1 MiB blocks as IO needs them
# and keeps them until unload, by design: blocks a held session's IO took
# are the pool's, bounded by pool_size_mb, not the session's, and they
# are not back after its close.  The readings take them off and print them.
pool_kib() {
	local f=/sys/module/rtrs_server/parameters/pool_usage a

	printf -v "$1" %s 0
	[ -r "$f" ] || return 0
	a=$(awk '{ print $2 }' "$f") || return 1
	printf -v "$1" %s $((a / 1024))
}

# slab_kib FILE: each slab cache's KiB (its objects times their size)
# from /proc/slabinfo, one "name KiB" line each, into FILE.
slab_kib() {
	awk 'NR > 2 { print $1, int($3 * $4 / 1024) }' /proc/slabinfo >"$1"
}

# slab_grown BEFORE AFTER: the eight caches that grew most between two
# slab_kib files, largest first, on one line: where a session's slab went.
slab_grown() {
	awk 'NR == FNR { b[$1] = $2; next }
	     $2 - b[$1] > 0 { print $2 - b[$1], $1 }' "$1" "$2" |
		sort -rn | head -8 |
		awk '{ printf "%s%s +%d KiB", s, $2, $1; s = ", " } END { print "" }'
}

# mem_back FREE0 POOL0: MemFree is back within CLOSE_SLACK of FREE0 KiB,
# besides what the pool grew by since it read POOL0 KiB.  Sets free2,
# slab2, vm2 and pool2 (memory_of_session's) to the reading.
mem_back() {
	mem_snapshot free2 slab2 vm2 && pool_kib pool2 &&
		[ $(($1 - free2 - pool2 + $2)) -le "$CLOSE_SLACK" ]
}

# A reading that missed the session would pass the bounds: it must
# show at least SESSION_FLOOR KiB taken.  Not more: in guests of one vCPU
# (make check's pair) MemFree moves by megabytes between two readings
# with nothing of ours running, from frees the kernel does lazily (on
# 2026-12-04 the server's session read 2160 KiB, less than its receive
# queue's 4 MiB, with "other" 0 and 2280 KiB more free after the close
# than before; the client's other -4 MiB).  The bounds above are what
# these readings are for; 1 MiB is far above a missed reading's zero.
SESSION_FLOOR=1024

# The sessions the client holds open at once while both sides read what
# they cost.  MemFree moves by megabytes between two readings of a guest
# of one vCPU (below); over HELD sessions that noise is a quarter of
# itself per session, and the readings of one session (2026-12-04/05:
# 2.2 and 9.1 MiB for the same server) settle.
HELD=4

# What each of HELD sessions at the server's default queue depth costs
# this side, and that their close gives it back: memory_of_session
# WHEN_UP WHEN_DOWN BOUND SHARED, each WHEN a command that returns once
# the sessions are up, or gone, BOUND what a session may take at most and
# SHARED what this side makes once for all its sessions, both in KiB.
# The server frees a session's memory after it has told its user that the
# session went (what WHEN_DOWN waits for there), so the last reading is
# taken again until it is back, for 60 s at most.
memory_of_session() {
	local free0 slab0 vm0 pool0 free1 slab1 vm1 pool1 free2 slab2 vm2 pool2
	local back=0 MIB=1024 took left each

	mem_snapshot free0 slab0 vm0 && pool_kib pool0 &&
		slab_kib "$RTRS_TMP/slab0" || return 1
	"$1" || return 1
	mem_snapshot free1 slab1 vm1 && pool_kib pool1 &&
		slab_kib "$RTRS_TMP/slab1" || return 1
	"$2" || return 1
	wait_for 60 mem_back "$free0" "$pool0" >/dev/null || back=1
	took=$((free0 - free1 - pool1 + pool0))
	left=$((free0 - free2 - pool2 + pool0))
	each=$(((took - $4) / HELD))
	figure "$RTRS_ROLE: $HELD sessions: $((took / MIB)) MiB" \
		"($took KiB): slab $(((slab1 - slab0) / MIB)) MiB," \
		"vmalloc $(((vm1 - vm0) / MIB)) MiB, other $(((took -
		slab1 + slab0 - vm1 + vm0) / MIB)) MiB, and" \
		"$((pool1 - pool0)) KiB of new pool blocks; each session" \
		"$each KiB besides the $4 KiB made once: slab" \
		"$(((slab1 - slab0) / HELD)) KiB, vmalloc $(((vm1 - vm0) / HELD)) KiB"
	figure "$RTRS_ROLE: slab caches grown most with the sessions:" \
		"$(slab_grown "$RTRS_TMP/slab0" "$RTRS_TMP/slab1")"
	figure "$RTRS_ROLE: after close: $left KiB not yet back:" \
		"slab $((slab2 - slab0)) KiB, vmalloc $((vm2 - vm0)) KiB," \
		"besides $((pool2 - pool0)) KiB of new pool blocks"
	# A reading that missed the sessions would pass the bound below.
	[ "$took" -gt "$SESSION_FLOOR" ] ||
		{ echo "the sessions took $took KiB, no more than $SESSION_FLOOR KiB"; return 1; }
	[ "$back" -eq 0 ] ||
		{ echo "close left $left KiB > $CLOSE_SLACK KiB"; return 1; }
	[ "$each" -le "$3" ] ||
		{ echo "each session took $each KiB > $3 KiB"; return 1; }
}

# What a 2.1 session of queue depth 512 may take, in KiB, on this test
# kernel (KASAN's redzones and shadow included): the protocol's aims, 4
# MiB on the server and 12 on the client.  The server's device makes its
# shared receive queue of srq_size buffers of two pages for its first
# session and keeps it while any session uses it, whatever their count:
# its pages are taken off the server's reading before it is shared out.
# Measured (2026-12-07, 4 sessions, guests of one vCPU, so a connection 0
# and one IO connection a path): client 7.8 to 9.4 MiB a session in two
# runs (5.9 of slab, 4.5 of it rxe's page maps: one 4 KiB map for each
# of the 512 slots' MRs, two for each of the path's 32 large ones, 8 KiB
# each with KASAN's redzones; 1.4 of vmalloc, rxe's queues; the read
# buffers' 2 MiB of pages); server 0.8 MiB (0.8 of vmalloc, rxe's
# queues).  On Debian's stock 6.1 (one run): client 6.6 MiB, server 1.1
# MiB.  The
# bounds fail on the client of before (13 MiB with slot MRs of 257
# pages, two maps each; 30 MiB with queues of 32 SGEs and 8 KiB send
# buffers), on a receive queue or chunks of the server's per session,
# and on 2.0 (64 MiB of chunks).
MEM_2_1=$((4 * 1024))
[ "$RTRS_ROLE" = client ] && MEM_2_1=$((12 * 1024))

# The server says where its reading is by taking up an address (announce)
# that the client waits for (answers): READ_IDLE once it has read its
# memory without a session, READ_HELD once it has read it with the
# session held.
READ_IDLE=203.0.113.10
READ_HELD=203.0.113.11

held_up() {
	announce "$READ_IDLE" && retry_until 120 served_held "$HELD"
}

held_gone() {
	announce "$READ_HELD" && retry_until 120 served_held 0
}

# served_held N: the test server holds N sessions.
served_held() {
	[ "$(cat /sys/module/rtrs_test_srv/parameters/sessions_connected)" -eq "$1" ]
}

hold_open() {
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=0 hold=1 \
		sessions="$HELD" server="ip:$CLIENT6@ip:$SERVER6" &&
		speaks_2_1
}

# Each held session has one path, which speaks 2.1, the version the
# bounds of MEM_2_1 are for.
speaks_2_1() {
	local f=(/sys/class/rtrs-client/*/paths/*/proto_version) p

	[ "${#f[@]}" -eq "$HELD" ] ||
		{ echo "held sessions' paths: ${f[*]}"; return 1; }
	for p in "${f[@]}"; do
		[ "$(cat "$p")" = 2.1 ] || { echo "$p: $(cat "$p")"; return 1; }
	done
}

# The client holds the session until the server has taken its reading.
hold_close() {
	wait_for 120 answers "$READ_HELD" && rmmod rtrs-test-cycles
}

if [ "$RTRS_ROLE" = server ]; then
	check "load rtrs-server" insmod "$b/rtrs-server.ko"
	check "load rtrs-test-srv" insmod "$b/tests/user/rtrs-test-srv.ko"
	check "IPv6 sessions served" retry_until 240 served 4
	# The held session makes the receive queue anew.
	check "the served sessions are gone" wait_for 60 no_server_session
	srq=$(( $(cat /sys/module/rtrs_server/parameters/srq_size) * 8 ))
	check "memory of each of $HELD 2.1 sessions, server side, within $((MEM_2_1 / 1024)) MiB besides the receive queue" \
		memory_of_session held_up held_gone "$MEM_2_1" "$srq"
	check "unload rtrs-test-srv" rmmod rtrs-test-srv
	check "unload rtrs-server" rmmod rtrs-server
else
	check "load rtrs-client" insmod "$b/rtrs-client.ko"
	check "IPv6 sessions with data checked" retry_until 180 \
		insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=2 \
		server="ip:$CLIENT6@ip:$SERVER6"
	# Retries are for a server not yet up; an IO may not have failed.
	check "no IPv6 IO failed, even in a retry" not io_failed
	check "unload rtrs-test-cycles" rmmod rtrs-test-cycles
	check "the server read its memory without a session" \
		wait_for 120 answers "$READ_IDLE"
	check "memory of each of $HELD 2.1 sessions, client side, within $((MEM_2_1 / 1024)) MiB" \
		memory_of_session hold_open hold_close "$MEM_2_1" 0
	check "unload rtrs-client" rmmod rtrs-client
fi
[ -f "$RESULTS/figures" ] && cat "$RESULTS/figures"
check "unload rtrs-core" rmmod rtrs-core
