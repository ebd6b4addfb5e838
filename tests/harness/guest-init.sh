#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
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
for d in /tmp /var/tmp; do
	case "$RTRS_TOP/ $RTRS_SCRIPT $RTRS_MODDIR/" in
	"$d"/*|*" $d"/*) ;;
	*) mount -t tmpfs tmpfs $d ;;
	esac
done
# Scratch space of the scenarios, always writable.
export RTRS_TMP=/run/tmp
mkdir -p $RTRS_TMP
mount -t debugfs debugfs /sys/kernel/debug
mount -t configfs configfs /sys/kernel/config 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount --bind "$RTRS_MODDIR" /lib/modules
mkdir -p /run/results
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /run/results
hostname "rtrs-$RTRS_NAME"
ip link set lo up

echo "rtrs-guest: $RTRS_NAME on $(uname -r), running $RTRS_SCRIPT at $(cut -d" " -f1 /proc/uptime)"

bash -c '. "$RTRS_TOP/tests/harness/guest-lib.sh" && . "$RTRS_SCRIPT"' \
	2>&1 | tee /run/results/script.log
status=${PIPESTATUS[0]}
echo "$status" >/run/results/status
[ "$status" -eq 0 ] || echo "FAIL $RTRS_NAME/script: exited with $status" >>/run/results/checks

if [ -w /sys/kernel/debug/kmemleak ]; then
	# Objects younger than 5 s are never reported; let them age first.
	sleep 6
	echo "rtrs-guest: kmemleak scan at $(cut -d" " -f1 /proc/uptime)"
	echo scan >/sys/kernel/debug/kmemleak
	echo "rtrs-guest: kmemleak scan at $(cut -d" " -f1 /proc/uptime)"
	echo scan >/sys/kernel/debug/kmemleak
	echo "rtrs-guest: kmemleak scan done at $(cut -d" " -f1 /proc/uptime)"
	cat /sys/kernel/debug/kmemleak >/run/results/kmemleak
	[ -s /run/results/kmemleak ] &&
		{ echo "rtrs-guest: kmemleak report:"; cat /run/results/kmemleak; }
fi

sync
umount /run/results
# Wait for the power-off with a shell builtin: once it starts, the 9p root
# goes away and no program can be run any more.
mkfifo /run/halt
echo "rtrs-guest: done status=$status"
echo o >/proc/sysrq-trigger
read -r -t 120 _ <>/run/halt
