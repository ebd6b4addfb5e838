# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash source-path=SCRIPTDIR/../..
#
# Scenario (one of Debian's stock kernels, one guest): the modules built
# against that kernel's stock headers load and unload on the kernel users
# run, next to rxe; the rtrs-session suite runs against the test server,
# at 2.1 and at 2.0, as in the test kernel's guest (on
# tests/kunit/kunit-lite.h: the stock kernels have no KUnit); then rnbd of
# the kernel's own series (6.1 or 6.12, its source unmodified, built
# against our rtrs.h) maps a null_blk over one path of ours, and fio
# writes 4 MiB of 4 KiB blocks with crc32c and reads them back checked.

. "$RTRS_TOP/tests/e2e/topology.sh"
. "$RTRS_TOP/tests/e2e/rnbd-lib.sh"

F=$RESULTS/fio
mkdir -p "$F"
b=$(rtrs_build_dir)

map_nullb() {
	rnbd_map stock /dev/nullb0 "ip:$PAIR_A@ip:$PAIR_B" >"$RTRS_TMP/dev"
}

check "runs the stock kernel" grep -q -- "-amd64$" /proc/sys/kernel/osrelease
check "modprobe rdma_cm" modprobe -a ib_core rdma_cm
check "veth pair with rxe on both ends" topology_pair
# First contact over a fresh rxe pair (neighbours, GIDs) can outlast the
# client's connect timeout under TCG; rping makes it before the map.
check "rping across the pair" rping_pair "$PAIR_B" "$PAIR_A" rxe1 rxe0
load_unload_rtrs

# The suite's results are kept as rtrs-session-SERIES-VERSION: apart from
# the test kernel's.
series=$(uname -r | cut -d. -f1,2)
session_suite() {
	kunit_run "$RTRS_TOP/tests/kunit/rtrs-session-test.c"
	mv "$RESULTS/kunit/rtrs-session.ktap" \
		"$RESULTS/kunit/rtrs-session-$series-$1.ktap"
}
for m in rtrs-core rtrs-server rtrs-client tests/user/rtrs-test-srv; do
	check "load $(basename $m)" insmod "$b/$m.ko"
done
session_suite 2.1
check "server agrees to 2.0 only" \
	sh -c "echo 0 > /sys/module/rtrs_server/parameters/max_proto_minor"
session_suite 2.0
for m in rtrs-test-srv rtrs-client rtrs-server rtrs-core; do
	check "unload $m" rmmod "$m"
done

check "rnbd of this kernel was built on our modules" \
	test -f "$b/rnbd/rnbd-client.ko" -a -f "$b/rnbd/rnbd-server.ko"
check "null_blk" modprobe null_blk nr_devices=1 gb=1 memory_backed=1
check "load rtrs and rnbd" rnbd_load "$b"
check "map /dev/nullb0 over one path" map_nullb
dev=$(cat "$RTRS_TMP/dev" 2>/dev/null)
check "fio 4k random write, crc32c" fio_run write --filename="/dev/$dev" \
	--rw=randwrite --bs=4k --size=4m --iodepth=16 --verify=crc32c --do_verify=0
check "fio 4k random read, crc32c verify" fio_run read --filename="/dev/$dev" \
	--rw=randwrite --bs=4k --size=4m --iodepth=16 --verify=crc32c --verify_only=1
check "unmap" rnbd_unmap "$dev"
check "unload rnbd and rtrs" rnbd_unload
check "unload null_blk" rmmod null_blk
