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
#  - $RTRS_CYCLES open/IO/close cycles (default 1000) against a server
#    loaded with a small queue depth and chunk, so that a cycle costs the
#    connections and not 64 MiB of chunks; no memory may stay behind, and
#    guest-init.sh's kmemleak scan runs after them.

. "$RTRS_TOP/tests/e2e/topology.sh"

b=$(rtrs_build_dir)
cycles=${RTRS_CYCLES:-1000}
MIB=1024

# The server of the cycles: chunks of 8 KiB (4 KiB of data), 16 of them.
CYCLE_SRV_ARGS=(sess_queue_depth=16 max_chunk_size=8192)

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
	mem_snapshot free0 slab0 vm0 || return 1
	insmod "$b/tests/user/rtrs-test-cycles.ko" cycles=0 hold=1 || return 1
	mem_snapshot free1 slab1 vm1 || return 1
	rmmod rtrs-test-cycles || return 1
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
check "$cycles open/IO/close cycles leave no memory behind" \
	open_close_cycles "$cycles"
check "unload the servers" unload_server

cat "$RESULTS/figures"
for m in rtrs-client rtrs-core; do
	check "unload $m" rmmod "$m"
done
