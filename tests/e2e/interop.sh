# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, two guests joined by a QEMU socket netdev): wire
# interop of our modules with the mainline RTRS of Linux 6.1, both ways,
# with rnbd on top.  One rxe on each side's eth0 carries two paths, one per
# address pair.
#
#   phase A: our rtrs-client and rnbd-client -> mainline rtrs-server and
#            rnbd-server (modprobe'd from the test kernel's modules)
#   phase C: our rtrs-client and rtrs-test-clt -> mainline rtrs-server
#            and rtrs-test-srv built on mainline's rtrs.h: a held write
#            fails its path over (see held_serve)
#   phase B: mainline rtrs-client and rnbd-client -> our rtrs-server and
#            rnbd-server; beside mainline's 2.0 session, one of our client
#            at 2.1 to the same rtrs-server, from the server's own guest
#            (see beside_21)
#
# INTEROP_PHASES (both guests the same) names the phases to run, in the
# order above: ACB when unset.  Phase C tests our client's quarantine,
# which the mainline server of another series only repeats: make check
# runs it against 6.1's and runs AB against 6.12's.
#
# In each phase the client maps the server's null_blk over both paths,
# checks fio 4 KiB random writes with crc32c, then fails the second path
# under verified IO (the client sends that path's packets astray, see
# cut_path), waits for the path to go down and to reconnect once they go
# the right way again, and checks that no IO failed.  RTRS_ROLE says which
# side this is.  The guests meet only on the wire: the client retries its
# map until the server serves, and each side says where it is by taking up
# an address the other one waits to answer ARP (see answers in guest-lib.sh).

SERVER=203.0.113.1
CLIENT=203.0.113.2
SERVER2=198.51.100.1
CLIENT2=198.51.100.2
# Messages on the wire, each an address its sender takes up: the client
# is done with phase A, with phase B; the server has switched to ours.
DONE_A=192.0.2.2
DONE_B=192.0.2.3
SWITCHED=192.0.2.1
SERVER3=192.0.2.5
CLIENT3=192.0.2.4
# Phase C: the server's test server is up; the client is done with it.
HELD_UP=192.0.2.6
DONE_C=192.0.2.7
# The server has heard that the client is done with phase B: the client
# waits for it before its guest ends (and stops answering ARP).  The
# client has heard that in turn: the server waits for it, or for the
# client's guest to be gone, before its own guest ends.
HEARD_B=192.0.2.8
BYE=192.0.2.9
PATH1=ip:$CLIENT@ip:$SERVER
PATH2=ip:$CLIENT2@ip:$SERVER2
# Phase B's 2.1 session: from the server's address to itself, to the test
# server on a port of its own (rnbd-server has rtrs's default one).
OWN_PATH=ip:$SERVER@ip:$SERVER
OWN_PORT=1235
NULLB=/dev/nullb0
PHASES=${INTEROP_PHASES:-ACB}
# The matrix: who is on which side in each phase.
A="ours client -> mainline server"
B="mainline client -> ours server"
C="ours client -> mainline server, a held write"

. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"
. "$RTRS_TOP/tests/e2e/test-clt-lib.sh"

b=$(rtrs_build_dir)
F=$RESULTS/fio
mkdir -p "$F"

case "$RTRS_ROLE" in
server) addrs="$SERVER $SERVER2 $SERVER3" ;;
client) addrs="$CLIENT $CLIENT2 $CLIENT3" ;;
*) fail "role" "RTRS_ROLE is '$RTRS_ROLE'"; exit 1 ;;
esac

# virtio_net is built into the test kernel, a module of the stock one.
modprobe virtio_net
wait_for 10 test -d /sys/class/net/eth0
for a in $addrs; do
	ip addr add "$a/24" dev eth0
done
ip link set eth0 up
check "rxe on eth0" rxe_add rxe0 eth0


# ours MODULE, mainline MODULE: the loaded MODULE (rtrs_core,
# rtrs_client, rtrs_server) is ours, or mainline's.  Mainline's is the
# test kernel's own or, on a stock kernel, which has no RTRS, built out of
# tree as ours is, so the taint does not tell them apart: ours has what
# mainline's lacks, max_proto_minor for the client and the server, an
# exported rtrs_hb_received for the core.
ours() {
	case "$1" in
	rtrs_core)
		awk '$3 == "rtrs_hb_received" && $4 == "[rtrs_core]" { f = 1 }
			END { exit !f }' /proc/kallsyms ;;
	*) [ -e "/sys/module/$1/parameters/max_proto_minor" ] ;;
	esac
}

mainline() {
	[ -d "/sys/module/$1" ] && not ours "$1"
}

# load_mainline MODULE: mainline's MODULE (rtrs_server, rnbd_server,
# rnbd_client) and the rtrs modules under it: the test kernel's own, or
# on a stock kernel those built from its series' source package in
# $ML (see mainline_stack in check.sh).
ML=$b/mainline
load_mainline() {
	local mods m
	[ -d "$ML" ] || { modprobe "$1"; return; }
	modprobe -a ib_core rdma_cm || return 1
	case "$1" in
	rtrs_server|rnbd_server) mods="rtrs-core rtrs-server" ;;
	*) mods="rtrs-core rtrs-client" ;;
	esac
	[[ "$1" != rnbd_* ]] || mods+=" rnbd/${1//_/-}"
	for m in $mods; do
		insmod "$ML/$m.ko" || { echo "insmod $ML/$m.ko failed"; return 1; }
	done
}

# load_rtrs_ours SIDE: our rtrs-core and rtrs-SIDE, by path: the mainline
# modules of the same names must not load.
load_rtrs_ours() {
	local m
	modprobe -a ib_core rdma_cm || return 1
	for m in rtrs-core "rtrs-$1"; do
		insmod "$b/$m.ko" || { echo "insmod $m.ko failed"; return 1; }
	done
}

# load_ours SIDE: load_rtrs_ours, and the rnbd-SIDE built on them.
load_ours() {
	load_rtrs_ours "$1" && insmod "$b/rnbd/rnbd-$1.ko"
}

# unload_rtrs SIDE: rtrs-SIDE and rtrs-core, ours or mainline.
unload_rtrs() {
	local m
	for m in "rtrs_$1" rtrs_core; do
		rmmod "$m" || { echo "rmmod $m failed"; return 1; }
	done
}

# unload SIDE: rnbd-SIDE, then unload_rtrs.
unload() {
	rmmod "rnbd_$1" || { echo "rmmod rnbd_$1 failed"; return 1; }
	unload_rtrs "$1"
}

# ---- server ------------------------------------------------------------

# no_session: the server holds neither an rnbd nor an rtrs session.
no_session() {
	[ -z "$(ls /sys/class/rnbd-server/ctl/devices/ 2>/dev/null)" ] &&
		[ -z "$(ls /sys/class/rtrs-server/ 2>/dev/null)" ]
}

# has_session SESS: the server exports the null_blk to session SESS.
has_session() {
	[ -d "/sys/class/rnbd-server/ctl/devices/nullb0/sessions/$1" ]
}

# log_count SINCE REGEX: kernel log lines since uptime SINCE that match.
log_count() {
	dmesg | awk -F '[][]' -v t="$1" '$2 + 0 >= t' | grep -c -E "$2"
}

# speaks VER DIR: every path of the session whose sysfs directory is DIR
# says it speaks VER, and there is at least one.  Mainline's side has no
# such file: with one of its peers every path speaks 2.0.
speaks() {
	local f n=0
	for f in "$2"/paths/*/proto_version; do
		[ -e "$f" ] || continue
		[ "$(cat "$f")" = "$1" ] || { echo "$f: '$(cat "$f")'"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || { echo "no path in $2"; return 1; }
}

# serve TAG SESS DONE [BESIDE]: wait for the client's session SESS to come,
# run BESIDE TAG SESS if given, wait for the client to say it is done with
# it, and for the session to go.  A session goes away for a while when all
# its paths fail, so its absence alone does not end a phase.  Counts the
# stalls of rxe under IO (see rnbd.sh) that closed a path meanwhile.
serve() {
	local since
	since=$(cut -d ' ' -f 1 /proc/uptime)
	check "$1: session $2 opened on nullb0" wait_for 420 has_session "$2"
	if ours rtrs_server; then
		check "$1: our server speaks 2.0 with mainline's client" \
			speaks 2.0 "/sys/class/rtrs-server/$2"
	fi
	[ -z "${4:-}" ] || "$4" "$1" "$2"
	check "$1: client done" wait_for 600 answers "$3"
	check "$1: session $2 closed, nothing left" wait_for 60 no_session
	figure "$1: server: rxe registered a valid MR again" \
		"$(log_count "$since" 'rxe_reg_fast_mr: .* not free') times;" \
		"$(log_count "$since" 'stopped moving, closing the path') paths" \
		"closed as stalled"
}

# Phase C.  rtrs-test-srv holds a LATE write 14 s and then stores it from
# its chunk, as a disk stores a bio's pages when it gets to them.  Our
# client, with io_timeout_sec at 8 s, fails that write's path over and
# sends the write again over the other path, in the same chunk.
# Mainline's server does not order requests for one chunk across paths:
# it runs the second copy at once (the test server serves a LATE write it
# has seen before at once), and the request completes while the first
# copy is still held.  The client then moves the request to a spare chunk
# and keeps the old one from every later request until the failed path
# connects again, which mainline's server allows only once the old path,
# held write included, is gone.  Without that quarantine the chunk is
# used again within the 14 s, and the held write stores another
# request's data: the server counts that in ios_clobbered.
# (Documentation/rtrs.rst, "Failover and chunks".)
held_serve() {
	check "$C: load mainline rtrs_server" load_mainline rtrs_server
	check "$C: rtrs_server and rtrs_core are mainline" \
		eval "mainline rtrs_server && mainline rtrs_core"
	check "$C: load rtrs-test-srv built on mainline's rtrs.h, holding LATE writes 14 s" \
		insmod "$b/mainline-users/rtrs-test-srv.ko" late_ms=14000
	check "$C: announce the test server on the wire" announce "$HELD_UP"
	check "$C: client done" wait_for 300 answers "$DONE_C"
	check "$C: the server answered every held write" wait_for 30 held_none
	figure "$C: server: $(cat "$TSP/ios_late") writes stored late," \
		"$(cat "$TSP/ios_clobbered") chunks changed under a held write"
	check "$C: the held write was stored late" \
		test "$(cat "$TSP/ios_late")" -ge 1
	check "$C: no held write's chunk changed under it" \
		test "$(cat "$TSP/ios_clobbered")" -eq 0
	check "$C: unload rtrs-test-srv" rmmod rtrs-test-srv
	check "$C: unload mainline rtrs_server" \
		eval "rmmod rtrs_server && rmmod rtrs_core"
}

# Phase B, beside mainline's client: while its 2.0 session to our
# rtrs-server does verified IO, a session of our client at 2.1 does
# verified IO to the same rtrs-server, and the server holds both at once,
# each path at its own version: 2.0 with its chunks, 2.1 with the shared
# receive queue and data pool, on one rxe device.  Our client cannot load
# in the client guest, where mainline's modules of the same names are
# loaded, so it runs here and connects to this guest's own address: rxe
# hands a packet for its own MAC address straight to its receive side
# (rxe_loopback() in drivers/infiniband/sw/rxe/rxe_net.c), and the RDMA
# CM resolves a local address to the netdev that owns it, as in the
# loopback cases of the rtrs-core KUnit suite.  The guests need no new
# meeting: all of it runs while the server holds mainline's session.

# srv_ios SESS: for each path of the server's session SESS, its name and
# the reads and writes it has served.  A path may go while it is read:
# awk sums what could be read.
srv_ios() {
	local p
	for p in /sys/class/rtrs-server/"$1"/paths/*/stats; do
		[ -d "$p" ] || continue
		echo "$(basename "$(dirname "$p")")" "$(cat "$p/reads" "$p/writes" \
			2>/dev/null | awk '{ n += $1 } END { print n + 0 }')"
	done
}

# srv_ios_moved SESS BEFORE: a path of SESS has served more than the file
# BEFORE (srv_ios's output) says.  A path that failed and came back counts
# from zero again: then the other one, or the new one, shows the IO.
srv_ios_moved() {
	srv_ios "$1" | awk 'FILENAME != "-" { n[$1] = $2; next }
		$2 > n[$1] + 0 { m = 1 } END { exit !m }' "$2" -
}

# two_versions SESS: the server holds two sessions: SESS at 2.0, and the
# test client's at 2.1.
two_versions() {
	local n
	n=$(find /sys/class/rtrs-server/ -mindepth 1 -maxdepth 1 | wc -l)
	[ "$n" -eq 2 ] ||
		{ echo "$n sessions:" /sys/class/rtrs-server/*; return 1; }
	speaks 2.0 "/sys/class/rtrs-server/$1" &&
		speaks 2.1 /sys/class/rtrs-server/rtrs-test-clt
}

# beside_21 TAG SESS: a 2.1 session with verified IO, while mainline's
# client does verified IO over SESS.  The 2.1 IO runs from before the
# server's counters of SESS are read until after they have moved: the
# two overlap.  The versions are read while both run.
beside_21() {
	local tag=$1 sess=$2 before=$RTRS_TMP/ios-2.0
	check "$tag: load our rtrs-client beside the server" \
		insmod "$b/rtrs-client.ko"
	check "$tag: load rtrs-test-srv on port $OWN_PORT" \
		insmod "$b/tests/user/rtrs-test-srv.ko" port="$OWN_PORT"
	check "$tag: our client opens a session to this guest's own address" \
		insmod "$b/tests/user/rtrs-test-clt.ko" paths="$OWN_PATH" \
		port="$OWN_PORT" threads=2 nice=19
	check "$tag: its path connected" wait_for 60 tpaths_up "$OWN_PATH"
	check "$tag: our client speaks 2.1 with our server" speaks 2.1 "$TCS"
	check "$tag: start 2.1 verified IO" sh -c "echo 1 > '$PARAMS/run'"
	check "$tag: 2.1 IO flows" ios_grow 2
	srv_ios "$sess" >"$before"
	check "$tag: mainline's session served IO meanwhile" \
		wait_for 60 srv_ios_moved "$sess" "$before"
	check "$tag: the server holds $sess at 2.0 and the test client at 2.1" \
		two_versions "$sess"
	check "$tag: 2.1 IO still flows" ios_grow 2
	check "$tag: stop 2.1 IO" sh -c "echo 0 > '$PARAMS/run'"
	check "$tag: 2.1: read back every block written" \
		sh -c "echo 1 > '$PARAMS/check'"
	figure "$tag: beside it, our client at 2.1: $(counter ios) write-read" \
		"pairs, $(counter io_errors) failed, $(counter verify_errors)" \
		"read back different; $(counter checked) blocks checked at the" \
		"end, $(counter check_errors) different"
	check "$tag: 2.1: no IO error" test "$(counter io_errors)" -eq 0
	check "$tag: 2.1: every read came back as written" \
		test "$(counter verify_errors)" -eq 0
	check "$tag: 2.1: every block read back at the end as written" \
		test "$(counter check_errors)" -eq 0
	check "$tag: 2.1: blocks were read back" test "$(counter checked)" -gt 0
	check "$tag: unload rtrs-test-clt" rmmod rtrs-test-clt
	check "$tag: unload rtrs-test-srv" rmmod rtrs-test-srv
	check "$tag: unload our rtrs-client" rmmod rtrs_client
}

# server_side: phase A with the mainline modules, phase B with ours.
server_side() {
	# Memory backed, so that what was written reads back.
	check "null_blk" modprobe null_blk nr_devices=1 gb=1 memory_backed=1
	check "$A: load mainline rnbd_server" load_mainline rnbd_server
	check "$A: rtrs_server and rtrs_core are mainline" \
		eval "mainline rtrs_server && mainline rtrs_core"
	serve "$A" interop-a "$DONE_A"
	check "$A: unload mainline rnbd_server" unload server
	[[ $PHASES != *C* ]] || held_serve

	check "$B: load our rtrs-server and rnbd-server" load_ours server
	check "$B: rtrs_server and rtrs_core are ours" \
		eval "ours rtrs_server && ours rtrs_core"
	check "$B: announce the switch on the wire" announce "$SWITCHED"
	serve "$B" interop-b "$DONE_B" beside_21
	check "$B: say the client's end was heard" announce "$HEARD_B"
	check "$B: the client heard it, or its guest is gone" \
		wait_for 120 client_left
	check "$B: unload our rnbd-server" unload server
	check "no error from rnbd-server in the kernel log" \
		not eval "dmesg -l err,crit,alert,emerg | grep -i rnbd"
}

# client_left: the client says it heard HEARD_B; or its guest has ended
# before this guest saw that, and no longer answers DONE_B (its ARP entry
# failed 30 s after, seen on stock 6.12).
client_left() {
	answers "$BYE" || ! answers "$DONE_B"
}

# ---- client ------------------------------------------------------------

# verify_write, verify_read NAME DEV: 1 MiB of 4 KiB random writes with
# crc32c; then reads of the same blocks that check them.  About 5 s
# each under TCG.
verify_write() {
	fio_run "$1-write" --filename="/dev/$2" --rw=randwrite --bs=4k \
		--size=1m --iodepth=16 --verify=crc32c --do_verify=0
}

verify_read() {
	fio_run "$1-read" --filename="/dev/$2" --rw=randwrite --bs=4k \
		--size=1m --iodepth=16 --verify=crc32c --verify_only=1
}

# fio_iops NAME: the IOPS fio reported for job NAME.
fio_iops() {
	grep -o -m 1 'IOPS=[^,]*' "$F/$1.out" | cut -d= -f2
}

# map_to FILE SESS: map the null_blk over both paths as session SESS; the
# block device's name goes to FILE.
map_to() {
	local dev
	dev=$(rnbd_map "$2" "$NULLB" "$PATH1" "$PATH2") || return 1
	echo "$dev" >"$1"
}

# path_state SESS DST: the client's state of the path of SESS to DST.
path_state() {
	cat /sys/class/rtrs-client/"$1"/paths/*@ip:"$2"/state 2>/dev/null
}

path_up() {
	local state
	state=$(path_state "$@")
	[ "$state" = connected ] || { echo "path to $2: '$state'"; return 1; }
}

path_down() {
	not path_up "$@"
}

both_up() {
	path_up "$1" "$SERVER" && path_up "$1" "$SERVER2"
}

# io_loop TAG DEV: 256 KiB fio jobs of random writes, each checked by
# its reads (crc32c), one after another until $STOP exists: small ones,
# so that the checks that wait for jobs to end do not wait long.  Each
# job that ends adds a line to $RUNS; each failed one also to $FAILED.
STOP=$RTRS_TMP/stop
RUNS=$RTRS_TMP/runs
FAILED=$RTRS_TMP/failed
io_loop() {
	local i=0 why
	while [ ! -e "$STOP" ]; do
		i=$((i + 1))
		if ! why=$(fio_run "$1-loop" --filename="/dev/$2" --rw=randwrite \
			--bs=4k --size=256k --iodepth=16 --verify=crc32c); then
			echo "job $i: $why" >>"$FAILED"
			cp "$F/$1-loop.out" "$F/$1-loop-$i.out"
		fi
		echo "$i" >>"$RUNS"
	done
}

runs() {
	wc -l <"$RUNS"
}

# more_runs_than N: more than N loop jobs have ended.
more_runs_than() {
	[ "$(runs)" -gt "$1" ]
}

no_failed_job() {
	[ -s "$FAILED" ] && { head -n 1 "$FAILED"; return 1; }
	return 0
}

# no_io_error DEV SINCE: the kernel logged no IO error of block device
# DEV since uptime SINCE.
no_io_error() {
	dmesg | awk -F '[][]' -v t="$2" '$2 + 0 >= t' |
		grep -E "error, dev $1," && return 1
	return 0
}

# cut_path, mend_path: the client's packets to the server's second address
# go to a MAC address nobody has, and the server's NIC drops them; the
# server's packets still arrive, but what the client sends back is lost.  A
# blackhole route would not do: rxe looks its routes up with eth0 as the
# output device, and such a lookup takes a blackhole or unreachable route
# for an on-link destination.  mend_path lets ARP find the server again.
cut_path() {
	ip neigh replace "$SERVER2" lladdr 02:00:00:00:00:00 dev eth0 nud permanent
}

mend_path() {
	ip neigh del "$SERVER2" dev eth0
}

# path_failure TAG SESS DEV: the second path fails and comes back under
# verified IO.
path_failure() {
	local tag=$1 sess=$2 dev=$3 loop t0 down up since
	since=$(cut -d ' ' -f 1 /proc/uptime)
	rm -f "$STOP" "$RUNS" "$FAILED"
	: >"$RUNS"
	: >"$FAILED"
	io_loop "$tag" "$dev" &
	loop=$!
	check "$tag: verified IO runs" wait_for 120 more_runs_than 0
	# A path that rxe stalled under the IO (see rnbd.sh) is closed and
	# reconnects: the cut is for a session with both paths up.
	check "$tag: both paths up before the cut" wait_for 120 both_up "$sess"
	t0=$SECONDS
	check "$tag: cut the second path" cut_path
	check "$tag: second path goes down" wait_for 180 path_down "$sess" "$SERVER2"
	down=$(runs)
	figure "$tag: second path down after $((SECONDS - t0)) s" \
		"(state '$(path_state "$sess" "$SERVER2")'," \
		"first path '$(path_state "$sess" "$SERVER")')"
	check "$tag: first path stays up" path_up "$sess" "$SERVER"
	check "$tag: verified IO goes on over the first path" \
		wait_for 120 more_runs_than "$((down + 1))"
	check "$tag: mend the second path" mend_path
	t0=$SECONDS
	check "$tag: second path reconnects" wait_for 180 path_up "$sess" "$SERVER2"
	up=$(runs)
	figure "$tag: second path reconnected $((SECONDS - t0)) s after it" \
		"was mended; $((up - down)) fio jobs ended while it was down"
	check "$tag: verified IO goes on over both paths" \
		wait_for 120 more_runs_than "$up"
	touch "$STOP"
	wait "$loop"
	figure "$tag: path failure: $(runs) fio jobs of 256 KiB," \
		"$(wc -l <"$FAILED") failed"
	check "$tag: path failure, no fio job failed" no_failed_job
	check "$tag: path failure, no IO error in the kernel log" no_io_error "$dev" "$since"
}

# phase TAG SESS: map, verified IO, path failure, unmap.
phase() {
	local tag=$1 sess=$2 dev
	check "$tag: watch rnbd-client's close work" rnbd_close_watch
	check "$tag: map over two paths" retry_until 300 map_to "$RTRS_TMP/dev" "$sess"
	dev=$(cat "$RTRS_TMP/dev" 2>/dev/null)
	[ -n "$dev" ] || return
	check "$tag: both paths connected" wait_for 60 both_up "$sess"
	if ours rtrs_client; then
		check "$tag: our client speaks 2.0 with mainline's server" \
			speaks 2.0 "/sys/class/rtrs-client/$sess"
	fi
	check "$tag: fio 4k random write" verify_write "$tag" "$dev"
	check "$tag: fio 4k random read, crc32c verify" verify_read "$tag" "$dev"
	figure "$tag: fio 4k iodepth 16 over two paths:" \
		"write $(fio_iops "$tag-write") IOPS, read $(fio_iops "$tag-read") IOPS"
	path_failure "$tag" "$sess" "$dev"
	check "$tag: unmap" rnbd_unmap "$dev"
	rm -f "$RTRS_TMP/dev"
	# The unmap can return before the session is freed: the work that
	# took the response to the close message may hold the last reference,
	# and close the transport session after.  Mainline rnbd-client's
	# exit does not wait for that work (it skips a session whose count
	# is zero, warns that one is left and unloads under it), so unload
	# only once the transport session is gone and that work has ended:
	# it still frees rnbd's own session after the transport's.
	check "$tag: session closed after the unmap" wait_for 60 sess_gone "$sess"
	check "$tag: rnbd-client's close work ended" rnbd_close_work_wait 60
	rnbd_close_unwatch
}

# Phase C, the client's side: see held_serve.
#
# held_write: one LATE write, its failover and its quarantine.
held_write() {
	local f0
	check "$C: io_timeout_sec 8" sh -c "echo 8 > '$TCS/io_timeout_sec'"
	f0=$(tstat failovers)
	check "$C: hold the next write" sh -c "echo 1 > '$PARAMS/late_writes'"
	check "$C: the held write fails its path over" \
		wait_for 40 tstat_above failovers "$f0"
	check "$C: a chunk is quarantined" wait_for 10 tstat_above quarantined 0
	check "$C: the quarantine ends with the failed path back" \
		wait_for 90 quarantine_over "$PATH1" "$PATH2"
	check "$C: io_timeout_sec off again" sh -c "echo 0 > '$TCS/io_timeout_sec'"
}

held_client() {
	check "$C: test server up" wait_for 300 answers "$HELD_UP"
	check "$C: load our rtrs-client" load_rtrs_ours client
	check "$C: open a session over two paths" retry_until 60 \
		insmod "$b/tests/user/rtrs-test-clt.ko" paths="$PATH1,$PATH2" \
		threads=4 nice=19
	check "$C: both paths connected" wait_for 60 tpaths_up "$PATH1" "$PATH2"
	check "$C: our client speaks 2.0 with mainline's server" speaks 2.0 "$TCS"
	check "$C: start verified IO" sh -c "echo 1 > '$PARAMS/run'"
	check "$C: IO flows" ios_grow 3
	held_write
	check "$C: IO goes on over both paths" ios_grow 3
	check "$C: stop IO" sh -c "echo 0 > '$PARAMS/run'"
	check "$C: read back every block written" sh -c "echo 1 > '$PARAMS/check'"
	figure "$C: client: $(counter ios) write-read pairs," \
		"$(counter io_errors) failed, $(counter verify_errors) read back" \
		"different; $(counter checked) blocks checked at the end," \
		"$(counter check_errors) different"
	check "$C: no IO error" test "$(counter io_errors)" -eq 0
	check "$C: blocks were read back" test "$(counter checked)" -gt 0
	# The first copy lands when mainline's server runs it, after the
	# second: its own block may hold its older data until written again.
	# Only the server can order that (rtrs.rst); nothing else may differ.
	check "$C: no block differs but the held write's own" \
		test "$(( $(counter verify_errors) + $(counter check_errors) ))" -le 1
	check "$C: unload rtrs-test-clt" rmmod rtrs-test-clt
	check "$C: unload our rtrs-client" unload_rtrs client
	check "$C: announce the end on the wire" announce "$DONE_C"
}

# client_side: phase A with our modules, phase B with the mainline ones.
client_side() {
	check "$A: load our rtrs-client and rnbd-client" load_ours client
	check "$A: rtrs_client and rtrs_core are ours" \
		eval "ours rtrs_client && ours rtrs_core"
	phase "$A" interop-a
	check "$A: unload our rnbd-client" unload client
	check "$A: announce the end on the wire" announce "$DONE_A"
	[[ $PHASES != *C* ]] || held_client

	check "$B: server switched to ours" wait_for 300 answers "$SWITCHED"
	check "$B: load mainline rnbd_client" load_mainline rnbd_client
	check "$B: rtrs_client and rtrs_core are mainline" \
		eval "mainline rtrs_client && mainline rtrs_core"
	phase "$B" interop-b
	check "$B: unload mainline rnbd_client" unload client
	check "$B: announce the end on the wire" announce "$DONE_B"
	check "$B: the server heard it" wait_for 300 answers "$HEARD_B"
	check "$B: say it was heard" announce "$BYE"
	# Stay on the wire until the server has asked for BYE: a stock
	# guest ends at once (no kmemleak scan), and a server that missed
	# BYE waits some 40 s for the ARP entry of DONE_B to fail.
	nap 5
}

"${RTRS_ROLE}_side"
if [ -f "$RESULTS/figures" ]; then
	cat "$RESULTS/figures"
fi
