# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): what a session costs and that it all
# comes back.  Our client against our server over two rxe devices on a
# veth pair, driven by tests/user/rtrs-test-cycles.ko, which checks data both
# ways in every session it opens:
#
#  - memory per session at the server's default queue depth: the figures,
#    the server's chunks within queue depth x chunk size, and what stays
#    behind after the close;
#  - $MANY sessions of protocol 2.1 open at once, against a server loaded
#    with a small queue depth and chunk, each writing and reading back its
#    own data at the same time as the others: the server's data memory
#    stays within its buffer pool and its one shared receive queue, what
#    each added session costs, and that closing them gives it back;
#  - a request the test client gives up on: the session closes with it;
#  - $RTRS_CYCLES open/IO/close cycles (default 1000) against the same
#    server, so that a cycle costs the connections and not 64 MiB of
#    chunks; no memory may stay behind, and guest-init.sh's kmemleak scan
#    runs after them.

. "$RTRS_TOP/tests/e2e/topology.sh"

b=$(rtrs_build_dir)
cycles=${RTRS_CYCLES:-1000}
MIB=1024

# The server of the cycles: chunks of 8 KiB (4 KiB of data), 16 of them,
# and a buffer pool of 1 MiB, half what the IO of many_open asks for
# at once.
CYCLE_SRV_ARGS=(sess_queue_depth=16 max_chunk_size=8192 pool_size_mb=1)

# The MANY sessions of many_open, each writing and reading back MANY_IO
# bytes of its own at once: 32 x 64 KiB, twice the pool.  A 2.1 WRITE of
# up to 4 KiB comes inline and a READ of 4 KiB takes one page of the
# pool: IO of that size would never fill it.  (32 x 128 KiB against a
# pool of 2 MiB, on a busy host, had rxe give up retransmitting and the
# server's watchdog close paths.)
MANY=32
MANY_IO=$((64 * 1024))

# Bounds, in KiB.  Right after a close, the KASAN shadow of freed vmalloc
# areas is given back lazily, KASAN's quarantine holds freed objects, and
# allocator caches keep some pages: a session may leave up to 8 MiB of
# the ~100 MiB it took until later (measured: 0.5 to 2.5 MiB).  Over the
# second half of the cycles no more than 4 MiB may stay: at make check's
# 200 cycles a leak of 41 KiB a cycle shows (at 1000, 8 KiB), and
# kmemleak sees smaller ones.  The first half fills the caches: 4.3 MiB
# over the first 500 of 1000 cycles, 0.15 MiB given back over the next.
ONE_CLOSE_SLACK=$((8 * MIB))
CYCLES_SLACK=$((4 * MIB))

# What each of MANY sessions beyond the first may take, client and server
# together, at queue depth 16.  Measured: 5.6 MiB, 1.0 of slab and 4.5 of
# vmalloc (the rxe queues of both ends' QPs and CQs, which grow with the
# queue depth), and no pages besides the pool's blocks and the test's
# buffers (-82 KiB, noise).  Pages are where the server's data memory
# lives: a shared receive queue of its own for each session would add
# srq_size x 8 KiB, 4 MiB at the default 512, and one for each
# connection twice that; buffers of its own for each session's requests,
# as 2.0's chunks, 16 x 1 MiB for 2.1's largest IO (64 MiB at 2.0's
# default depth and chunk).  1 MiB of pages a session is far below all
# of those; 12 MiB in all leaves the measured figure room on a busy host.
MANY_PAGES_MAX=$((1 * MIB))
MANY_USED_MAX=$((12 * MIB))

# load_server ARGS...: (re)load rtrs-server with ARGS and the test server.
load_server() {
	insmod "$b/rtrs-server.ko" "$@" && insmod "$b/tests/user/rtrs-test-srv.ko"
}

unload_server() {
	rmmod rtrs-test-srv && rmmod rtrs-server
}

# session_memory MINOR: open one session of protocol 2.MINOR, held by
# rtrs-test-cycles, at the server's
# default queue depth; print what it took and what its close left.
session_memory() {
	local free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2
	local qd chunk used pages chunks what p=/sys/module/rtrs_server/parameters

	echo "$1" >"$p/max_proto_minor" || return 1
	qd=$(cat "$p/sess_queue_depth")
	chunk=$(( $(cat "$p/max_chunk_size") / 1024 ))
	# A first session creates what outlives it: the server's CQ pool on
	# the device (4 MiB of rxe queues), allocator caches.
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=1 && rmmod rtrs-test-cycles ||
		return 1
	wait_for 30 no_server_session || return 1
	mem_snapshot free0 slab0 vm0 || return 1
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=0 hold=1 || return 1
	mem_snapshot free1 slab1 vm1 || return 1
	rmmod rtrs-test-cycles || return 1
	wait_for 30 no_server_session || return 1
	mem_snapshot free2 slab2 vm2 || return 1

	echo 1 >"$p/max_proto_minor" || return 1
	used=$((free0 - free1))
	# Memory that is neither slab nor vmalloc: the server's chunks (2.0)
	# or its device's shared receive buffers of two pages each (2.1, made
	# anew, as the first session's went with its last path), and the
	# KASAN shadow and page tables of the vmalloc areas (an eighth).
	pages=$((used - (slab1 - slab0) - (vm1 - vm0)))
	if [ "$1" = 0 ]; then
		chunks=$((qd * chunk))
		what="server chunks"
	else
		chunks=$(( $(cat "$p/srq_size") * 8 ))
		what="server receive buffers"
	fi
	figure "one 2.$1 session, queue depth $qd, client and server:" \
		"$((used / MIB)) MiB ($used KiB): slab $(((slab1 - slab0) / MIB)) MiB," \
		"vmalloc $(((vm1 - vm0) / MIB)) MiB, pages $((pages / MIB)) MiB;" \
		"$what $((chunks / MIB)) MiB"
	figure "after close: $(((free0 - free2) / MIB)) MiB ($((free0 - free2)) KiB) not" \
		"yet back: slab $((slab2 - slab0)) KiB, vmalloc $((vm2 - vm0)) KiB"
	# A reading that missed the session would pass what follows.
	[ "$used" -ge "$chunks" ] ||
		{ echo "the session took $used KiB, less than its $what"; return 1; }
	[ "$pages" -le $((chunks + (vm1 - vm0) / 8 + 4 * MIB)) ] ||
		{ echo "pages $pages KiB > $what $chunks KiB + shadow + 4 MiB"; return 1; }
	[ $((free0 - free2)) -le "$ONE_CLOSE_SLACK" ] ||
		{ echo "close left $((free0 - free2)) KiB > $ONE_CLOSE_SLACK KiB"; return 1; }
}

# cycles N: N cycles of rtrs-test-cycles; print their times.
cycles() {
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles="$1" || return 1
	figure "$1 cycles: $(($(cat /sys/module/rtrs_test_cycles/parameters/open_us) / $1)) us" \
		"open, $(($(cat /sys/module/rtrs_test_cycles/parameters/close_us) / $1)) us close" \
		"on average"
	rmmod rtrs-test-cycles
}

# open_close_cycles N: N cycles in two halves; fail when the second half
# left memory behind.  The first half fills what a cycle's frees feed and
# that is bounded, above all KASAN's quarantine of freed objects (up to a
# 32nd of memory); a leak keeps growing through the second half.
open_close_cycles() {
	local half=$(($1 / 2)) free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2

	mem_snapshot free0 slab0 vm0 || return 1
	cycles "$half" || return 1
	mem_snapshot free1 slab1 vm1 || return 1
	cycles $(($1 - half)) || return 1
	mem_snapshot free2 slab2 vm2 || return 1
	figure "first $half cycles: MemFree $((free1 - free0)) KiB, slab" \
		"$((slab1 - slab0)) KiB, vmalloc $((vm1 - vm0)) KiB"
	figure "next $(($1 - half)) cycles: MemFree $((free2 - free1)) KiB, slab" \
		"$((slab2 - slab1)) KiB, vmalloc $((vm2 - vm1)) KiB"
	[ $((free1 - free2)) -le "$CYCLES_SLACK" ] ||
		{ echo "the second half left $((free1 - free2)) KiB > $CYCLES_SLACK KiB"; return 1; }
}

# What many_open measured, for the checks after it: NAME=VALUE lines.
MANY_STATE=$RTRS_TMP/many-sessions

# many_keep NAME...: keep the values of the named variables.
many_keep() {
	local v
	for v in "$@"; do
		echo "$v=${!v}"
	done >>"$MANY_STATE"
}

# many_load: the values many_open kept, into the caller's variables.
many_load() {
	# shellcheck source=/dev/null
	. "$MANY_STATE" || return 1
	if [ -z "$free0" ] || [ -z "$free2" ] || [ -z "$pool2" ]; then
		echo "no reading of the $MANY sessions"
		return 1
	fi
}

# pool_usage FIELD: a field of the server's pool_usage ("allocated",
# "held": bytes; "users", "waiters").
pool_usage() {
	awk -v f="$1" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' \
		/sys/module/rtrs_server/parameters/pool_usage
}

# srv_paths FILE: FILE of every path of the server, a line each.
srv_paths() {
	cat /sys/class/rtrs-server/*/paths/*/"$1"
}

# srv_sessions N: the test server holds N sessions.
srv_sessions() {
	[ "$(cat /sys/module/rtrs_test_srv/parameters/sessions_connected)" -eq "$1" ]
}

# hold_sessions N: rtrs-test-cycles holds N sessions, open at once, each
# of which got back the MANY_IO bytes it wrote.
hold_sessions() {
	local ok

	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=0 hold=1 \
		sessions="$1" io_size=$MANY_IO || return 1
	ok=$(cat /sys/module/rtrs_test_cycles/parameters/verified)
	[ "$ok" -eq "$1" ] ||
		{ echo "$ok of $1 sessions got their data back"; return 1; }
}

# rxe_retries: the retransmissions of the pair's two ends (rxe0 the
# client's, rxe1 the server's) and the duplicate packets each dropped.
rxe_retries() {
	echo "$(rxe_counter rxe0 completer_retry_err)" \
		"$(rxe_counter rxe1 completer_retry_err)" \
		"$(rxe_counter rxe0 duplicate_request)" \
		"$(rxe_counter rxe1 duplicate_request)"
}

# stale_rsps: copies of responses the test client's sessions dropped
# (Documentation/rtrs.rst, "Tagged message ids"), all paths together.
stale_rsps() {
	local f n=0

	for f in /sys/class/rtrs-client/rtrs-test-cycles-*/paths/*/stats/stale_rsps; do
		[ -e "$f" ] && n=$((n + $(cat "$f")))
	done
	echo "$n"
}

# many_open: memory with no session (free0...), with one held (free1...)
# and with MANY held (free2...), kept in MANY_STATE with the pool's
# blocks before (pool0) and with the MANY (pool2).  The MANY stay open.
many_open() {
	local free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2 pool0 pool2 open_ms
	local r0 r1

	: >"$MANY_STATE"
	# A first round of MANY makes what outlives it: the CQs of the
	# devices' CQ pools, which grow with the connections they serve and
	# are kept until the device goes (32 MiB of rxe queues for 32
	# sessions, still there 90 s after their close), allocator caches,
	# the pool's first blocks.
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=1 sessions="$MANY" \
		io_size=$MANY_IO &&
		rmmod rtrs-test-cycles && wait_for 30 no_server_session || return 1
	pool0=$(pool_usage allocated)
	mem_snapshot free0 slab0 vm0 || return 1
	hold_sessions 1 || return 1
	mem_snapshot free1 slab1 vm1 || return 1
	rmmod rtrs-test-cycles && wait_for 30 no_server_session || return 1
	read -ra r0 < <(rxe_retries)
	hold_sessions "$MANY" || return 1
	read -ra r1 < <(rxe_retries)
	# Retransmissions are normal on a busy host; the figure tells what
	# the IO of the MANY met, for a run whose checks below fail.
	figure "rxe during the $MANY's IO: retransmissions client" \
		"$((r1[0] - r0[0])), server $((r1[1] - r0[1])); duplicate packets" \
		"dropped by the client $((r1[2] - r0[2])), by the server $((r1[3] - r0[3]));" \
		"copies of responses the client dropped: $(stale_rsps)"
	open_ms=$(($(cat /sys/module/rtrs_test_cycles/parameters/open_us) / 1000))
	pool2=$(pool_usage allocated)
	mem_snapshot free2 slab2 vm2 || return 1
	many_keep free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2 pool0 pool2
	figure "$MANY 2.1 sessions opened in $open_ms ms, each wrote and read" \
		"back $((MANY_IO / 1024)) KiB, all at once"
}

# many_server: the server shows the MANY sessions, each with one path of
# protocol 2.1 that served a WRITE and a READ.
many_server() {
	local n p

	n=$(cat /sys/module/rtrs_test_srv/parameters/sessions_connected)
	[ "$n" -eq "$MANY" ] || { echo "the test server has $n sessions"; return 1; }
	n=$(find /sys/class/rtrs-server/ -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" -eq "$MANY" ] || { echo "/sys/class/rtrs-server shows $n sessions"; return 1; }
	n=$(srv_paths proto_version | grep -cx '2\.1')
	[ "$n" -eq "$MANY" ] || { echo "$n paths of 2.1, not $MANY"; return 1; }
	for p in writes reads; do
		n=$(srv_paths "stats/$p" | grep -cvx 0)
		[ "$n" -eq "$MANY" ] ||
			{ echo "$n paths served $p, not $MANY"; return 1; }
	done
}

# many_pool: the blocks of the server's pool, which it keeps until
# unload, while the MANY did their IO, twice the pool's size at once: a
# figure, not a bound.  The MANY's requests did not overlap enough to ask
# for more than the pool's first block even with its limit taken out, so
# no reading here can show the limit broken; the KUnit suite rtrs-srv-pool
# holds it (sizes, shares, waiting).
many_pool() {
	local limit pool0 pool2

	many_load || return 1
	limit=$(($(cat /sys/module/rtrs_server/parameters/pool_size_mb) * 1024 * 1024))
	figure "pool of $((limit / 1024)) KiB: $((pool0 / 1024)) KiB allocated" \
		"with no session, $((pool2 / 1024)) KiB with $MANY, IO of" \
		"$((MANY * MANY_IO / 1024)) KiB at once"
}

# many_srq: the server's device has one shared receive queue, and the
# connections of every session receive from it.
many_srq() {
	local hca srqs nr r qps=0

	hca=$(srv_paths hca_name | sort -u)
	[ "$(wc -l <<<"$hca")" -eq 1 ] || { echo "paths on devices $(tr '\n' ' ' <<<"$hca")"; return 1; }
	srqs=$(rdma resource show srq dev "$hca") || return 1
	nr=$(grep -c srqn <<<"$srqs")
	[ "$nr" -eq 1 ] || { echo "$hca has $nr shared receive queues"; return 1; }
	# Its QPs: "lqpn 17-20,23" and the like.
	for r in $(awk '{ for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }' \
		<<<"$srqs" | tr , ' '); do
		qps=$((qps + ${r#*-} - ${r%-*} + 1))
	done
	figure "$hca: one shared receive queue, of" \
		"$(cat /sys/module/rtrs_server/parameters/srq_size) buffers," \
		"for the $qps QPs of $MANY sessions"
	[ "$qps" -ge "$MANY" ] ||
		{ echo "$qps QPs on the shared receive queue: $srqs"; return 1; }
}

# many_memory: what each session beyond the first took.
many_memory() {
	local free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2 pool0 pool2
	local n=$((MANY - 1)) used slab vm pool bufs pages

	many_load || return 1
	used=$((free1 - free2))
	slab=$((slab2 - slab1))
	vm=$((vm2 - vm1))
	# The blocks the pool took meanwhile, and rtrs-test-cycles' buffers
	# (kmalloc of more than two pages comes from the page allocator).
	pool=$(((pool2 - pool0) / 1024))
	bufs=$((n * 2 * MANY_IO / 1024))
	pages=$((used - slab - vm - pool - bufs))
	figure "2.1 sessions of queue depth 16, client and server: one" \
		"$(((free0 - free1) / MIB)) MiB, $MANY $(((free0 - free2) / MIB)) MiB;" \
		"each added $((used / n)) KiB: slab $((slab / n)) KiB, vmalloc" \
		"$((vm / n)) KiB, pages $((pages / n)) KiB (besides the pool's" \
		"$pool KiB and the test's $((bufs / n)) KiB)"
	[ $((pages / n)) -le "$MANY_PAGES_MAX" ] ||
		{ echo "each added session took $((pages / n)) KiB of pages > $MANY_PAGES_MAX KiB"; return 1; }
	[ $((used / n)) -le "$MANY_USED_MAX" ] ||
		{ echo "each added session took $((used / n)) KiB > $MANY_USED_MAX KiB"; return 1; }
}

# many_back: MemFree (free3...) is back within ONE_CLOSE_SLACK, and the
# pool's blocks, of free0.  Uses many_close's variables.
many_back() {
	mem_snapshot free3 slab3 vm3 &&
		[ $((free0 - free3)) -le $((ONE_CLOSE_SLACK + kept)) ]
}

# many_close: closing the MANY gives their memory back, but for what
# comes back later (ONE_CLOSE_SLACK) and the blocks the pool keeps until
# unload.  The server frees a session after its user heard it went.
many_close() {
	local free0 slab0 vm0 free1 slab1 vm1 free2 slab2 vm2 pool0 pool2
	local free3 slab3 vm3 kept back=0

	many_load || return 1
	rmmod rtrs-test-cycles && wait_for 60 srv_sessions 0 || return 1
	kept=$((($(pool_usage allocated) - pool0) / 1024))
	wait_for 90 many_back >/dev/null || back=1
	figure "after closing the $MANY: $((free0 - free3)) KiB not yet back:" \
		"slab $((slab3 - slab0)) KiB, vmalloc $((vm3 - vm0)) KiB," \
		"pool $kept KiB"
	[ "$back" -eq 0 ] ||
		{ echo "closing left $((free0 - free3)) KiB > $ONE_CLOSE_SLACK KiB + pool $kept KiB"; return 1; }
}

# abandoned: the test client gives up on a request the test server holds
# (gather holds it up to 1 s, the client waits 200 ms): its load fails
# with -ETIMEDOUT and it closes the session before it goes, so that the
# request's late completion does not call into a module that is gone.
abandoned() {
	local p=/sys/module/rtrs_test_srv/parameters out err=0

	echo 2 >"$p/gather" || return 1
	out=$(insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=1 timeout_ms=200 2>&1) &&
		{ rmmod rtrs-test-cycles; err=1; }
	echo 0 >"$p/gather" || return 1
	[ "$err" -eq 0 ] || { echo "the load did not fail"; return 1; }
	case $out in
	*"timed out"*) ;;
	*) echo "the load failed otherwise: $out"; return 1 ;;
	esac
	wait_for 30 no_server_session || return 1
	# Past the server's hold: a completion into the module would oops now.
	sleep 2
	[ "$(cat "$p/held_now")" -eq 0 ] ||
		{ echo "the server still holds $(cat "$p/held_now") requests"; return 1; }
}

check "veth pair with rxe on both ends" topology_pair
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
modprobe -a ib_core rdma_cm
check "load rtrs-core" insmod "$b/rtrs-core.ko"
check "load rtrs-client" insmod "$b/rtrs-client.ko"

check "load the servers, default queue depth" load_server
check "memory of one 2.1 session" session_memory 1
check "memory of one 2.0 session" session_memory 0
check "unload the servers" unload_server

check "load the servers, ${CYCLE_SRV_ARGS[*]}" load_server "${CYCLE_SRV_ARGS[@]}"
check "$MANY 2.1 sessions open at once, each with its data back" many_open
check "the server shows $MANY sessions of 2.1, each served IO" many_server
check "the pool under the $MANY, read" many_pool
check "one shared receive queue for the $MANY" many_srq
check "memory of each session beyond the first" many_memory
check "closing the $MANY gives their memory back" many_close
check "a request the test client gave up on ends with its session" abandoned
check "$cycles open/IO/close cycles leave no memory behind" \
	open_close_cycles "$cycles"
check "unload the servers" unload_server

cat "$RESULTS/figures"
for m in rtrs-client rtrs-core; do
	check "unload $m" rmmod "$m"
done
