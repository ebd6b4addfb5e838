# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (test kernel, one guest): rnbd from Linux 6.1, unmodified, on
# our rtrs modules over two rxe devices on a veth pair.  Maps a remote
# null_blk and a brd device over one path and over two, checks the data
# with fio, passes discard and flush through, maps and unmaps in a row,
# and drives a server of queue depth 16 with more requests than it has
# chunks.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"

PATH1=ip:$PAIR_A@ip:$PAIR_B
PATH2=ip:$PAIR_B@ip:$PAIR_A
# Map/unmap cycles in a row, each a whole session open and close: about
# 3 s a cycle in a TCG guest with the debug kernel (RNBD_CYCLES=N make
# check for another count).
CYCLES=${RNBD_CYCLES:-100}

b=$(rtrs_build_dir)
F=$RESULTS/fio
mkdir -p "$F"

# verify_write, verify_read NAME DEV BS SIZE: random writes with crc32c;
# then random reads of the same blocks that check them.
verify_write() {
	fio_run "$1-write" --filename="/dev/$2" --rw=randwrite --bs="$3" \
		--size="$4" --iodepth=16 --verify=crc32c --do_verify=0
}

verify_read() {
	fio_run "$1-read" --filename="/dev/$2" --rw=randwrite --bs="$3" \
		--size="$4" --iodepth=16 --verify=crc32c --verify_only=1
}

# mixed NAME DEV: four jobs of random reads and writes of 4 to 128 KiB,
# each on its own 2 MiB with crc32c.
mixed() {
	fio_run "$1-mixed" --filename="/dev/$2" --rw=randrw --bsrange=4k-128k \
		--size=2m --offset_increment=2m --numjobs=4 --iodepth=8 \
		--verify=crc32c --group_reporting
}

# stat_field DEV N: field N of /sys/block/DEV/stat (12 discard IOs,
# 16 flush IOs).
stat_field() {
	awk -v n="$2" '{ print $n }' "/sys/block/$1/stat"
}

# discard_through RDEV SDEV: a discard on the rnbd device RDEV reaches the
# server's SDEV, and the range reads back as zeros.
discard_through() {
	local before after
	dd if=/dev/urandom of="/dev/$1" bs=1M count=1 oflag=direct status=none || return 1
	cmp -s -n 1048576 "/dev/$1" /dev/zero && { echo "pattern reads as zeros"; return 1; }
	before=$(stat_field "$2" 12)
	blkdiscard -o 0 -l 1048576 "/dev/$1" || return 1
	after=$(stat_field "$2" 12)
	echo "$2 discard IOs $before -> $after"
	[ "$after" -gt "$before" ] || return 1
	dd if="/dev/$1" bs=1M count=1 iflag=direct status=none | cmp -n 1048576 - /dev/zero
}

# flush_through RDEV SDEV: an fsync on RDEV flushes SDEV's write cache.
flush_through() {
	local before after
	grep -q 'write back' "/sys/block/$1/queue/write_cache" ||
		{ echo "$1: write cache $(cat "/sys/block/$1/queue/write_cache")"; return 1; }
	before=$(stat_field "$2" 16)
	dd if=/dev/urandom of="/dev/$1" bs=4k count=1 oflag=direct conv=fsync status=none ||
		return 1
	after=$(stat_field "$2" 16)
	echo "$2 flush IOs $before -> $after"
	[ "$after" -gt "$before" ]
}

# paths_connected N: the client has connections on N paths: RDMA CM ids
# of rtrs_client from the first address, and from the second when N is 2.
paths_connected() {
	local ids
	ids=$(rdma res show cm_id | grep 'rtrs_client' | grep 'state CONNECT')
	echo "$ids" | grep -q "src-addr $PAIR_A:[0-9]* dst-addr $PAIR_B:" || return 1
	if [ "$1" -eq 2 ]; then
		echo "$ids" | grep -q "src-addr $PAIR_B:[0-9]* dst-addr $PAIR_A:"
	else
		not grep -q "src-addr $PAIR_B:" <<<"$ids"
	fi
}

# session_open RDEV SESS: the client device belongs to SESS, and the
# server has the session.
session_open() {
	grep -qx "$2" "/sys/block/$1/rnbd/session" &&
		grep -qx open "/sys/block/$1/rnbd/state" &&
		ls /sys/class/rnbd-server/ctl/devices/*/sessions/"$2" >/dev/null
}

# cycles N DEVICE_PATH: map, read, unmap, N times in a row; stops at the
# first failure.
cycles() {
	local i dev t0
	t0=$(date +%s)
	for i in $(seq "$1"); do
		dev=$(rnbd_map cyc "$2" "$PATH1") || { echo "cycle $i: map failed"; return 1; }
		dd if="/dev/$dev" of=/dev/null bs=4k count=1 iflag=direct status=none ||
			{ echo "cycle $i: read failed"; return 1; }
		rnbd_unmap "$dev" || { echo "cycle $i: unmap failed"; return 1; }
	done
	echo "$1 map/unmap cycles in $(( $(date +%s) - t0 )) s" | tee "$RESULTS/cycles"
}

# stat_at_least TAG STAT N: the paths of session TAG counted N or more in
# stats/STAT: read_bufs, READs sent as READ_BUF (2.1: data of up to 4 KiB
# written by the server with its response, no memory registration per
# READ); unsig_sends, requests whose SEND went unsignaled.
stat_at_least() {
	local f n=0

	for f in /sys/class/rtrs-client/"$1"/paths/*/stats/"$2"; do
		n=$((n + $(cat "$f")))
	done
	[ "$n" -ge "$3" ] || { echo "$2: $n, fewer than $3"; return 1; }
}

# small_io TAG DEV SDEV: fio verify at 4 KiB; discard and flush when the
# server's device SDEV has them.  The verify reads 512 blocks of 4 KiB,
# each a READ_BUF unless the block layer merged it with a neighbour:
# at least half of them must be.
small_io() {
	check "$1: fio 4k random write" verify_write "$1-4k" "$2" 4k 2m
	check "$1: fio 4k random read, crc32c verify" verify_read "$1-4k" "$2" 4k 2m
	check "$1: the 4 KiB READs came as READ_BUF" stat_at_least "$1" read_bufs 256
	check "$1: most READs went unsignaled" stat_at_least "$1" unsig_sends 256
	if [ "$3" = nullb0 ]; then
		check "$1: discard passes through" discard_through "$2" "$3"
		check "$1: flush passes through" flush_through "$2" "$3"
	fi
}

# mib_io TAG DEV SDEV: a 2.1 session carries 1 MiB in one request, and
# rnbd's device takes it whole: sequential 1 MiB writes, then reads with
# crc32c.
mib_io() {
	check "$1: rnbd takes 1 MiB requests" \
		test "$(cat "/sys/block/$2/queue/max_hw_sectors_kb")" -ge 1024
	check "$1: fio 1m sequential write" fio_run "$1-1m-write" \
		--filename="/dev/$2" --rw=write --bs=1m --size=16m --iodepth=4 \
		--verify=crc32c --do_verify=0
	check "$1: fio 1m sequential read, crc32c verify" fio_run "$1-1m-read" \
		--filename="/dev/$2" --rw=write --bs=1m --size=16m --iodepth=4 \
		--verify=crc32c --verify_only=1
}

# mib_offset_io TAG DEV SDEV: mib_io with every buffer 512 bytes into its
# page (fio's iomem_align): 1 MiB there spans 257 pages, one more than a
# slot's MR maps, so each request borrows a large MR of its path.  The
# session runs with one large MR a path (LARGE_MRS): requests that find it
# in use wait for it, and go out as it comes back.
mib_offset_io() {
	check "$1: fio 1m sequential write, buffers 512 bytes into a page" \
		fio_run "$1-1m-off-write" --filename="/dev/$2" --rw=write \
		--bs=1m --size=16m --iodepth=4 --iomem_align=512 \
		--verify=crc32c --do_verify=0
	check "$1: fio 1m sequential read, buffers 512 bytes into a page, crc32c verify" \
		fio_run "$1-1m-off-read" --filename="/dev/$2" --rw=write \
		--bs=1m --size=16m --iodepth=4 --iomem_align=512 \
		--verify=crc32c --verify_only=1
	check "$1: each 1 MiB request took a large MR" stat_at_least "$1" large_mrs 32
	check "$1: requests that found it in use waited for it" \
		stat_at_least "$1" large_waits 1
}

# large_mrs N: the large MRs of each 2.1 path that connects from now on.
LARGE_MRS=/sys/module/rtrs_client/parameters/large_mrs
large_mrs() {
	echo "$1" >"$LARGE_MRS"
}

# large_io TAG DEV SDEV: fio verify at 128 KiB.
large_io() {
	check "$1: fio 128k random write" verify_write "$1-128k" "$2" 128k 4m
	check "$1: fio 128k random read, crc32c verify" verify_read "$1-128k" "$2" 128k 4m
}

# deep_io TAG DEV SDEV: four jobs at iodepth 32 of 4 KiB random reads and
# writes, each on its own 1 MiB with crc32c, against a session of queue
# depth 16: every chunk stays busy, requests wait for permits on the
# client, and the server signals one response in four.  A batch that did
# not fit the send queue (made 32 on purpose once) stalls this job until
# fio's timeout; at the default depth nothing else notices it.  Responses
# rarely wait for send queue room even here: waiting_io makes them.
deep_io() {
	check "$1: fio 4k randrw, 4 jobs at iodepth 32, crc32c verify" \
		fio_run "$1-deep" --filename="/dev/$2" --rw=randrw --bs=4k \
		--size=1m --offset_increment=1m --numjobs=4 --iodepth=32 \
		--verify=crc32c --group_reporting
}

# The server's fault point fail_rtrs_srv_room (debugfs): with it armed,
# every response that finds a signaled response in flight acts as if the
# send queue had no room, and waits for that completion to post it.  (A
# response that comes once none is in flight posts those waiting too, but
# with all chunks busy few come: a server that did not post them on
# completion stalled this job until the guest's timeout.)  room_arm arms
# it for up to ROOM_TIMES tries; room_waited disarms it and says how many
# times it fired (a response can meet it more than once), not none.
ROOM=/sys/kernel/debug/fail_rtrs_srv_room
ROOM_TIMES=1000000
room_arm() {
	echo 0 >"$ROOM/probability" && echo 0 >"$ROOM/verbose" &&
		echo 1 >"$ROOM/interval" && echo "$ROOM_TIMES" >"$ROOM/times" &&
		echo 100 >"$ROOM/probability"
}
room_waited() {
	local left
	left=$(<"$ROOM/times")
	echo 0 >"$ROOM/probability"
	figure "rnbd: fail_rtrs_srv_room made responses wait $((ROOM_TIMES - left)) times"
	[ "$left" -lt "$ROOM_TIMES" ]
}

# waiting_io TAG DEV SDEV: deep_io while responses wait for send queue
# room on purpose (room_arm): each must go out once a completion gives
# room back, behind those that waited before it.  A response left waiting
# stalls fio until its timeout.
waiting_io() {
	check "$1: answers made to wait for room (fail_rtrs_srv_room)" room_arm
	deep_io "$@"
	check "$1: answers did wait for room" room_waited
}

# large_mixed_io TAG DEV SDEV: large_io, and the mixed job.
large_mixed_io() {
	large_io "$@"
	check "$1: fio mixed, 4 jobs, crc32c verify" mixed "$1" "$2"
}

# readd_io TAG DEV SDEV: both paths go down, path 1 is removed and added
# again.  The add brings the session back: rnbd hears "reconnected" and
# remaps its device at once, sending without waiting for a permit, so the
# new path must carry messages by then; otherwise the device stays closed
# for good.  Needs a session of PATH1 and PATH2.
readd_io() {
	local cs=/sys/class/rtrs-client/$1
	check "$1: disconnect both paths" sh -c "echo 1 > '$cs/paths/$PATH1/disconnect' && echo 1 > '$cs/paths/$PATH2/disconnect'"
	check "$1: device closed with no path up" wait_for 10 grep -qx closed "/sys/block/$2/rnbd/state"
	check "$1: remove path 1 while no path is up" sh -c "echo 1 > '$cs/paths/$PATH1/remove_path'"
	check "$1: add path 1 again" sh -c "echo '$PATH1' > '$cs/add_path'"
	check "$1: device open again" wait_for 20 grep -qx open "/sys/block/$2/rnbd/state"
	check "$1: read after the add" dd if="/dev/$2" of=/dev/null bs=64k count=16 iflag=direct
	check "$1: reconnect path 2" sh -c "echo 1 > '$cs/paths/$PATH2/reconnect'"
	check "$1: 2 paths connected again" paths_connected 2
}

# A null_blk whose every IO completes 50 ms late: a slow disk, on which
# every request is still being served when its path fails.  Made through
# configfs, it is named after its directory there.
SLOW=/sys/kernel/config/nullb/nullb_slow
slow_dev() {
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$SLOW" && echo 64 >"$SLOW/size" && echo 1 >"$SLOW/memory_backed" &&
		echo 2 >"$SLOW/irqmode" && echo 50000000 >"$SLOW/completion_nsec" &&
		echo 1 >"$SLOW/power" || return 1
	test -b /dev/nullb_slow || { echo "no /dev/nullb_slow:" /dev/nullb*; return 1; }
}

# slow_failover_io TAG DEV SDEV: fio jobs of 4 KiB random writes at
# iodepth 16 on the slow disk, one after another, while the server drops
# path 1, two to eight times; the requests it had in flight are sent again
# over path 2, and their chunks quarantined until path 1 is back
# (Documentation/rtrs.rst, "Failover and chunks").  Each job reads back
# and checks (crc32c) every block it wrote once its writes are done, so
# the checks follow the drops closely and no job outlives them by much.
# Beside them run 1 MiB jobs whose requests wait for a large MR
# (slow_mib_jobs).  Needs a session of PATH1 and PATH2.
#
# The server disconnects its connections one by one, and the client's
# teardown starts with the first: responses still arriving on the others
# may complete every request path 1 had in flight.  Under TCG that
# happens to most drops (runs of 2026-12-06 and 07 needed 4 drops three
# times, and once 5 were not enough), so the drops go on until one of
# them left requests to fail over, eight at most.
path_up() { grep -qx connected "$1/paths/$PATH1/state"; }
failed_over() {
	local n
	n=$(cat "$1/paths/$PATH1/stats/failovers") || return 1
	echo "failovers $n"
	[ "$n" -gt 0 ]
}
path_drops() {
	local ss=/sys/class/rtrs-server/$1 cs=/sys/class/rtrs-client/$1 i
	for i in 1 2 3 4 5 6 7 8; do
		# Two seconds of IO over both paths before each drop.
		nap 2
		echo 1 >"$ss/paths/$PATH1/disconnect" || return 1
		wait_for 30 not path_up "$cs" || return 1
		# rnbd reconnects after 30 s: sooner through sysfs.
		echo 1 >"$cs/paths/$PATH1/reconnect" || return 1
		path_up "$cs" || return 1
		[ "$i" -ge 2 ] && failed_over "$cs" >/dev/null && break
	done
	figure "rnbd: path 1 dropped $i times under fio writes, $(failed_over "$cs")"
}
quarantine_done() {
	local cs=/sys/class/rtrs-client/$1
	[ "$(cat "$cs/paths/$PATH1/stats/quarantined")" -eq 0 ] &&
		grep -qx connected "$cs/paths/$PATH1/state"
}
# slow_jobs TAG DEV: fio jobs of 2 MiB, each on its own 2 MiB of the
# disk's first 32, until $SLOW_STOP exists; a failed job's first
# complaint goes to $SLOW_FAILED, its output to a file of its own.
SLOW_STOP=$RTRS_TMP/slow-stop
SLOW_FAILED=$RTRS_TMP/slow-failed
slow_jobs() {
	local i=0
	while [ ! -e "$SLOW_STOP" ]; do
		i=$((i + 1))
		fio_run "$1-slow" --filename="/dev/$2" --rw=randwrite --bs=4k \
			--size=2m --offset=$((i % 16 * 2))m --iodepth=16 \
			--verify=crc32c >>"$SLOW_FAILED" ||
			cp "$F/$1-slow.out" "$F/$1-slow-$i.out"
	done
	echo "$i" >"$RTRS_TMP/slow-jobs"
	figure "rnbd: slow disk: $i fio jobs of 2 MiB, $(wc -l <"$SLOW_FAILED") failed"
}
# slow_mib_jobs TAG DEV: beside slow_jobs, fio jobs of 1 MiB writes from
# buffers 512 bytes into a page, read back with crc32c, on the disk's
# next 8 MiB: with one large MR a path (the session is mapped with
# large_mrs 1), most of them wait for it, parked, when path 1 drops, and
# go to path 2 as requests never posted.
slow_mib_jobs() {
	local i=0
	while [ ! -e "$SLOW_STOP" ]; do
		i=$((i + 1))
		fio_run "$1-slow-mib" --filename="/dev/$2" --rw=write --bs=1m \
			--size=8m --offset=32m --iodepth=4 --iomem_align=512 \
			--verify=crc32c >>"$SLOW_FAILED" ||
			cp "$F/$1-slow-mib.out" "$F/$1-slow-mib-$i.out"
	done
	figure "rnbd: slow disk: $i fio jobs of 8 MiB in 1 MiB requests that need a large MR"
}
# packed_rsps TAG: responses the paths of session TAG had come packed with
# others into one SEND (2.1, client's packed_rsps), for the figures.  The
# server packs only responses that are ready while a pack it sent is in
# flight: few are, under TCG, where the slow disk's timers and null_blk's
# completions come one by one (6 of some 2000 on 2026-12-05).
packed_rsps() {
	local f n=0

	for f in /sys/class/rtrs-client/"$1"/paths/*/stats/packed_rsps; do
		n=$((n + $(cat "$f")))
	done
	echo "$n"
}
no_slow_failure() {
	[ ! -s "$SLOW_FAILED" ] || { head -n 1 "$SLOW_FAILED"; return 1; }
	[ "$(cat "$RTRS_TMP/slow-jobs")" -ge 1 ] || { echo "no fio job ran"; return 1; }
}
slow_failover_io() {
	local cs=/sys/class/rtrs-client/$1 pid mpid
	rm -f "$SLOW_STOP"
	: >"$SLOW_FAILED"
	slow_jobs "$1" "$2" &
	pid=$!
	slow_mib_jobs "$1" "$2" &
	mpid=$!
	check "$1: server drops path 1 under fio writes" path_drops "$1"
	touch "$SLOW_STOP"
	wait "$pid" "$mpid"
	check "$1: fio on the slow disk survives the failovers, every block read back as written" \
		no_slow_failure
	check "$1: requests in flight failed over" failed_over "$cs"
	check "$1: 1 MiB requests waited for a large MR" \
		stat_at_least "$1" large_waits 1
	figure "rnbd: $1: $(packed_rsps "$1") responses came packed"
	check "$1: quarantine over once path 1 is back" wait_for 30 quarantine_done "$1"
}

# with_device TAG SDEV IO PATH...: map SDEV over the paths as session TAG,
# run IO (small_io or large_io) on it, unmap.
with_device() {
	local tag=$1 sdev=$2 io=$3 dev
	shift 3
	if ! dev=$(rnbd_map "$tag" "/dev/$sdev" "$@"); then
		fail "$tag: map /dev/$sdev for $io" "map_device failed"
		return
	fi
	pass "$tag: map /dev/$sdev for $io"
	check "$tag: session open on both sides for $io" session_open "$dev" "$tag"
	check "$tag: $# path(s) connected for $io" paths_connected $#
	"$io" "$tag" "$dev" "$sdev"
	check "$tag: unmap after $io" rnbd_unmap "$dev"
}

check "veth pair with rxe on both ends" topology_pair
on_new_pair 1 "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
# A memory-backed null_blk with a volatile write cache (so flushes reach
# it) and discard; a 64 MiB brd.
check "null_blk" modprobe null_blk nr_devices=1 gb=1 memory_backed=1 \
	discard=1 cache_size=16
check "brd" modprobe brd rd_nr=1 rd_size=65536
check "load rtrs and rnbd" rnbd_load "$b"

# Small IO and the cycles first, large IO last: a transport that hangs a
# request leaves the guest stuck, and the checks before it still count.
# The null_blk over one path and over two, brd over two: the transport
# sees no difference between the devices.
with_device null1 nullb0 small_io "$PATH1"
with_device null2 nullb0 small_io "$PATH1" "$PATH2"
with_device brd2 ram0 small_io "$PATH1" "$PATH2"

check "rnbd: $CYCLES map/unmap cycles" cycles "$CYCLES" /dev/nullb0
cat "$RESULTS/cycles" 2>/dev/null

# Large IO over one path and over two.  A single path has nowhere to
# send its requests should it fail: this relies on memory registrations
# that survive rxe's replays (rtrs_replays_local_ops()).  As for the
# small IO, one device over each number of paths.
with_device null1 nullb0 large_mixed_io "$PATH1"
with_device brd2 ram0 large_mixed_io "$PATH1" "$PATH2"
with_device mib2 nullb0 mib_io "$PATH1" "$PATH2"
large0=$(cat "$LARGE_MRS")
check "one large MR a path" large_mrs 1
with_device mibo1 nullb0 mib_offset_io "$PATH1"
check "large MRs a path back to $large0" large_mrs "$large0"

check "nothing left mapped" not ls /sys/block/rnbd0
check "unload rnbd and rtrs" rnbd_unload

# A shallow server: more requests than chunks wait for permits on the
# client, and the server's response batch is at its smallest (see deep_io).
check "load rtrs and rnbd, server queue depth 16" \
	rnbd_load "$b" sess_queue_depth=16
# Two paths, then one path with responses made to wait for room.
with_device deep2 nullb0 deep_io "$PATH1" "$PATH2"
with_device deep3 nullb0 waiting_io "$PATH1"
check "no error from rtrs or rnbd in the kernel log" \
	not eval "dmesg -l err,crit,alert,emerg | grep -i -E 'rtrs|rnbd'"
# Paths dropped under IO log errors: after the check above.
check "a slow null_blk, 50 ms a request" slow_dev
check "one large MR a path, for the slow disk" large_mrs 1
with_device slow2 nullb_slow slow_failover_io "$PATH1" "$PATH2"
check "large MRs a path back to $large0, after the slow disk" large_mrs "$large0"
# Last, as rnbd logs its device's disconnection as an error.
with_device readd nullb0 readd_io "$PATH1" "$PATH2"
check "unload rnbd and rtrs, shallow server" rnbd_unload
