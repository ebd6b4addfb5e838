#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR/../..
#
# PID 1 of a test guest.  Mounts what a test needs on top of the read-only
# 9p root, runs $RTRS_SCRIPT with guest-lib.sh loaded, reports kmemleak, and
# powers off.  The console line "rtrs-guest: done" tells the host the script
# ran to its end.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp LANG=C

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# A private /tmp, unless the tree under test lives there (a clone in /tmp).
# shellcheck disable=SC2153 # RTRS_TOP comes from the kernel command line
for d in /tmp /var/tmp; do
	case "$RTRS_TOP/ $RTRS_SCRIPT $RTRS_MODDIR/" in
	"$d"/*|*" $d"/*) ;;
	*) mount -t tmpfs tmpfs $d ;;
	esac
done
# Scratch space of the scenarios, always writable.
export RTRS_TMP=/run/tmp
mkdir -p $RTRS_TMP
# bash's process substitution reads /dev/fd, which devtmpfs lacks.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount --bind "$RTRS_MODDIR" /lib/modules
mkdir -p /run/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /run/results
hostname "rtrs-$RTRS_NAME"
ip link set lo up

# uptime: seconds since the kernel started, whole.
uptime() { cut -d. -f1 /proc/uptime; }

# The time each part of the boot took, for the host's table: "boot",
# each scenario, "kmemleak"; one "PART SECONDS" line each.
echo "boot $(uptime)" >/run/results/times

# pair_intact and TOPO, for guest_reset.
. "$RTRS_TOP/tests/e2e/topology.sh"

# guest_reset SCENARIO: between two scenarios of one boot, take away what
# a scenario builds and would build again: our modules and rnbd's, the
# block devices, addresses on eth0, the kernel log, and the rxe devices,
# veth pairs and routing rules of tests/e2e/topology.sh but for a pair
# still as it was made (pair_intact), which the next scenario keeps.  A
# scenario unloads its modules itself: one that left any fails here.
guest_reset() {
	local left m keep=
	left=$(awk '$1 ~ /^(rtrs|rnbd)_/ { print $1 }' /proc/modules | xargs)
	for _ in 1 2 3 4; do
		for m in $(awk '$1 ~ /^(rtrs|rnbd)_|^(null_blk|brd)$/ && $3 == 0 { print $1 }' \
				/proc/modules); do
			rmmod "$m" 2>/dev/null
		done
	done
	# In the reverse order of topology.sh: rxe devices, routing rules,
	# links; the local table's rule goes back once no pair is left.
	pair_intact 1 && keep+=" 1"
	pair_intact 2 && keep+=" 2"
	rm -f "$TOPO"/pair*.kept
	for m in $(rdma link show 2>/dev/null | awk '{ sub("/.*", "", $2); print $2 }'); do
		[[ "$keep" == *" $(( ${m#rxe} / 2 + 1 ))"* ]] || rdma link delete "$m"
	done
	for m in 1 2; do
		[[ "$keep" == *" $m"* ]] && continue
		ip rule del pref $((98 + 2 * m)) 2>/dev/null
		ip rule del pref $((99 + 2 * m)) 2>/dev/null
		ip link del "veth$((2 * m - 2))" 2>/dev/null
	done
	if [ -z "$keep" ]; then
		ip rule show pref 0 | grep -q . || ip rule add pref 0 lookup local
		ip rule del pref 1000 2>/dev/null
	fi
	ip addr flush dev eth0 2>/dev/null
	dmesg -C
	if [ -n "$left" ]; then
		echo "FAIL $1/left nothing loaded: $left" >>"$RESULTS/checks"
	else
		echo "PASS $1/left nothing loaded" >>"$RESULTS/checks"
	fi
}

# step_watch: with STEP_DUMP=N (make check gives 600; the slowest of its
# checks take some 130 s), a check that has run N seconds (its start is
# in RTRS_TMP/step, see check in guest-lib.sh) is taken as stuck.  The
# console gets, once a check, the backtraces of every CPU and the blocked
# tasks, and the processes, so that a hang the host kills at the guest's
# limit says where it was.  The backtraces fail the kernel log's check.
# The long forms (make faults, make soak) run checks for hours: no watch.
step_watch() {
	local t0 name up dumped=
	while sleep 30; do
		read -r t0 name <"$RTRS_TMP/step" 2>/dev/null || continue
		[ "$t0" != "$dumped" ] || continue
		read -r up _ </proc/uptime
		up=${up%.*}
		[ $((up - t0 / 10)) -ge "$STEP_DUMP" ] || continue
		dumped=$t0
		echo "rtrs-guest: '$name' has run $((up - t0 / 10)) s: CPUs, blocked tasks, processes" >/dev/console
		echo l >/proc/sysrq-trigger
		echo w >/proc/sysrq-trigger
		ps -eo pid,stat,wchan:32,etimes,args >/dev/console 2>&1
	done
}
[ -z "${STEP_DUMP:-}" ] || step_watch &

# RTRS_SCRIPT is a comma-separated list of scenarios, run in turn, each
# named after its file.  A guest of one scenario keeps its results in
# /run/results and is named RTRS_NAME; a guest of several gives each its
# own folder there.
IFS=, read -r -a scripts <<<"$RTRS_SCRIPT"
status=0
for script in "${scripts[@]}"; do
	if [ ${#scripts[@]} -gt 1 ]; then
		name=$(basename "$script" .sh)
		RESULTS=/run/results/$name
	else
		name=$RTRS_NAME
		RESULTS=/run/results
	fi
	mkdir -p "$RESULTS/kunit"
	t0=$(uptime)
	echo "rtrs-guest: $name on $(uname -r), running $script at $(cut -d" " -f1 /proc/uptime)"
	RTRS_NAME=$name RESULTS=$RESULTS RTRS_SCRIPT=$script \
		bash -c '. "$RTRS_TOP/tests/harness/guest-lib.sh" && . "$RTRS_SCRIPT"' \
		2>&1 | tee "$RESULTS/script.log"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq 0 ] || { echo "FAIL $name/script: exited with $rc" >>"$RESULTS/checks"; status=$rc; }
	[ ${#scripts[@]} -eq 1 ] || guest_reset "$name"
	echo "$name $(( $(uptime) - t0 ))" >>/run/results/times
	echo "rtrs-guest: $name took $(( $(uptime) - t0 )) s"
done
echo "$status" >/run/results/status

t0=$(uptime)
if [ -w /sys/kernel/debug/kmemleak ]; then
	# Objects younger than 5 s are never reported; let them age first.
	# A scan takes some 20 s under TCG.  The report lists what the last
	# scan still found unreferenced: a second scan is to drop an object
	# caught in passing, and runs only when the first found any.
	sleep 6
	echo "rtrs-guest: kmemleak scan at $(cut -d" " -f1 /proc/uptime)"
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >/run/results/kmemleak
	if [ -s /run/results/kmemleak ]; then
		echo "rtrs-guest: kmemleak scan again at $(cut -d" " -f1 /proc/uptime)"
		echo scan >/sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak >/run/results/kmemleak
	fi
	echo "rtrs-guest: kmemleak scan done at $(cut -d" " -f1 /proc/uptime)"
	[ -s /run/results/kmemleak ] &&
		{ echo "rtrs-guest: kmemleak report:"; cat /run/results/kmemleak; }
	echo "kmemleak $(( $(uptime) - t0 ))" >>/run/results/times
fi

sync
umount /run/results
# Wait for the power-off with a shell builtin: once it starts, the 9p root
# goes away and no program can be run any more.
mkfifo /run/halt
echo "rtrs-guest: done status=$status"
echo o >/proc/sysrq-trigger
read -r -t 120 _ <>/run/halt
