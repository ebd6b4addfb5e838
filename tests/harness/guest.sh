#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Boot one test guest under QEMU (TCG), run a scenario script in it, and
# judge the run.
#
#   guest.sh --name NAME --kernel test|stock|stock-6.12 --script FILE [--script FILE]...
#            [--timeout SEC] [--mem MB] [--smp N]
#            [--net none|listen:PORT|connect:PORT] [--mac N] [--env K=V]...
#            [--peer NAME]
#
# The guest's root is this machine's / read-only over 9p; it writes only to
# tmpfs and to $RTRS_RESULTS/NAME, which it sees as /run/results.  No
# network reaches the host: either no NIC at all, or a QEMU socket netdev on
# 127.0.0.1 that joins exactly two guests.  --peer names the other guest
# of such a pair: when that one's kernel fails before init (it leaves
# boot-flake), this one is stopped too, since the pair boots again anyway.
#
# Several --script run in turn in one boot (see guest-init.sh): boot, module
# loads and rxe set-up are paid once.  Each is a scenario named after its
# file.
#
# Leaves in $RTRS_RESULTS/NAME: console.log, checks (PASS/FAIL lines of the
# scenario), kunit/*.ktap, times (seconds per part of the boot: "boot",
# each scenario, "kmemleak", and this script's "total"), and host-checks
# (this script's verdict on the boot and on the kernel log).  With several
# scenarios, each keeps its checks, kunit/ and logs in a folder of its name
# below.  Exits non-zero when any of them failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

name='' kernel=test scripts='' timeout=900 mem=2048 smp=2 net=none mac=1 peer=''
envs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--name) name=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--script) scripts+=${scripts:+,}$(realpath "$2"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--net) net=$2; shift 2 ;;
	--mac) mac=$2; shift 2 ;;
	--env)
		# Each goes on the kernel command line, which splits at spaces.
		[[ "$2" =~ ^[A-Za-z_][A-Za-z0-9_]*=[^[:space:]]*$ ]] ||
			rtrs_die "guest.sh: --env '$2': NAME=VALUE without spaces (lists take commas)"
		envs+=("$2"); shift 2 ;;
	--peer) peer=$2; shift 2 ;;
	*) rtrs_die "guest.sh: unknown argument '$1'" ;;
	esac
done
[ -n "$name" ] && [ -n "$scripts" ] || rtrs_die "guest.sh: --name and --script are required"

out=$RTRS_RESULTS/$name
rm -rf "$out"
mkdir -p "$out"

append="console=ttyS0,115200 root=root rootfstype=9p ro"
append+=" rootflags=trans=virtio,version=9p2000.L,msize=262144,cache=loose"
append+=" panic=-1 oops=panic mitigations=off net.ifnames=0"
# ACPI's _PRT method runs into the AML loop timeout (30 s a device) under
# TCG with KASAN; the PIRQ table routes PCI interrupts just as well.
append+=" acpi=noirq"
# On a busy host, TCG can miss the timer ticks the IO-APIC check waits for
# at boot and the kernel panics; the check proves nothing about our code.
append+=" no_timer_check"
# 4-level paging, even on a CPU model with LA57.  With 5-level paging,
# KASAN's idea of where the kernel's memory starts depends on the LA57 bit
# of the boot CPU's feature words, and identify_boot_cpu() clears those
# words for a moment with interrupts on: an interrupt taken then makes
# KASAN report a "wild-memory-access" in handle_edge_irq() before init,
# about one boot in ten under TCG.
append+=" no5lvl"
append+=" rcupdate.rcu_cpu_stall_timeout=60 no_hash_pointers ${RTRS_APPEND:-}"
guest_init=$RTRS_TOP/tests/harness/guest-init.sh
case "$kernel" in
test)
	kbuild=$RTRS_CACHE/test-kernel/build
	[ -f "$RTRS_CACHE/test-kernel/stamp" ] || rtrs_die "no test kernel; run tests/harness/test-kernel.sh"
	kimage=$kbuild/arch/x86/boot/bzImage
	moddir=$RTRS_CACHE/test-kernel/mods/lib/modules
	initrd=()
	append+=" init=$guest_init"
	;;
stock|stock-6.12)
	read -r sver sdir < <("$RTRS_TOP/tests/harness/stock-kernel.sh" \
		"$(rtrs_stock_meta "$kernel")")
	kimage=$sdir/root/boot/vmlinuz-$sver
	moddir=$sdir/root/lib/modules
	initrd=(-initrd "$sdir/initrd.img")
	append+=" RTRS_INIT=$guest_init"
	;;
*) rtrs_die "guest.sh: unknown kernel '$kernel'" ;;
esac
append+=" RTRS_TOP=$RTRS_TOP RTRS_NAME=$name RTRS_SCRIPT=$scripts"
append+=" RTRS_MODDIR=$moddir RTRS_KERNEL=$kernel"
for e in "${envs[@]}"; do
	append+=" $e"
done

case "$net" in
none) netargs=(-nic none) ;;
listen:*|connect:*)
	netargs=(-netdev "socket,id=n0,${net%%:*}=127.0.0.1:${net#*:}"
		 -device "virtio-net-pci,netdev=n0,mac=52:54:00:00:00:0$mac")
	;;
*) rtrs_die "guest.sh: bad --net '$net'" ;;
esac

# Did the kernel report a problem before it ran the first user program?
# Nothing of ours has run by then (the one such report seen so far, an
# interrupt during identify_boot_cpu() under 5-level paging, is what
# no5lvl above avoids).  Such a boot is retried once, and the retry is
# logged.
boot_phase_problem() {
	local first init
	first=$("$RTRS_TOP/tests/harness/log-problems.sh" "$out/console.log" |
		head -1)
	[ -n "$first" ] || return 1
	first=$(grep -a -n -F -m1 -- "$first" "$out/console.log" | cut -d: -f1)
	init=$(grep -a -n -m1 'as init process' "$out/console.log" | cut -d: -f1)
	[ -z "$init" ] || [ "$first" -lt "$init" ]
}

# A kernel that has not started init after this many seconds hung in
# early boot: seen under TCG on a loaded host, the console stopping in the
# kernel's own self tests.  A healthy boot reaches init in well under a
# minute (18 s alone, 30 to 36 s beside another guest, on 2026-12-02).
# Such a boot is lost like one with a kernel problem before init.
BOOT_DEADLINE=${RTRS_BOOT_DEADLINE:-120}

# watch_boot PID: while QEMU runs, stop it as soon as the boot is known
# to be lost - its own kernel failed or hung before init, or the peer's
# boot was lost - instead of letting the scenario run to its end for
# nothing.
watch_boot() {
	local pid=$1 booted='' deadline=$((SECONDS + BOOT_DEADLINE))
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [ -z "$booted" ] && [ -f "$out/console.log" ]; then
			if boot_phase_problem; then
				rtrs_log "guest $name: kernel problem before init, stopping it"
				kill "$pid" 2>/dev/null
				return
			fi
			grep -a -q 'as init process' "$out/console.log" && booted=1
		fi
		if [ -z "$booted" ] && [ $SECONDS -ge $deadline ]; then
			rtrs_log "guest $name: no init after ${BOOT_DEADLINE}s, stopping it"
			touch "$out/boot-hung"
			kill "$pid" 2>/dev/null
			return
		fi
		if [ -n "$peer" ] && [ -f "$RTRS_RESULTS/$peer/boot-flake" ]; then
			rtrs_log "guest $name: peer $peer lost its boot, stopping too"
			touch "$out/peer-flake"
			kill "$pid" 2>/dev/null
			return
		fi
	done
}

boot() {
	local pid
	rc=0
	timeout -k 10 "$timeout" qemu-system-x86_64 \
		-accel tcg,thread=multi -cpu max -m "$mem" -smp "$smp" \
		-nodefaults -no-user-config -display none -no-reboot \
		-serial "file:$out/console.log" -monitor none \
		-kernel "$kimage" "${initrd[@]}" -append "$append" \
		-virtfs "local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$out,mount_tag=results,security_model=none" \
		"${netargs[@]}" </dev/null >"$out/qemu.log" 2>&1 &
	pid=$!
	watch_boot "$pid" &
	wait "$pid" || rc=$?
	wait
}

# boot_lost: the kernel failed or hung before init; says which, once.
boot_lost() {
	if [ -f "$out/boot-hung" ]; then
		rtrs_log "guest $name: kernel hung before init, not ours: console stops at: $(grep -a . "$out/console.log" | tail -1)"
	elif boot_phase_problem; then
		rtrs_log "guest $name: kernel problem before init, not ours: $("$RTRS_TOP/tests/harness/log-problems.sh" "$out/console.log" | head -1)"
	else
		return 1
	fi
}

rtrs_log "guest $name: booting $kernel kernel (timeout ${timeout}s)"
start=$(date +%s)
boot
if boot_lost; then
	mv "$out/console.log" "$out/console.boot-failure.log"
	if [ "$net" = none ]; then
		rtrs_log "guest $name: booting again"
		find "$out" -mindepth 1 -maxdepth 1 ! -name console.boot-failure.log \
			! -name qemu.log -exec rm -rf {} +
		boot
	else
		# A guest of a pair cannot boot alone: the caller reruns both.
		cp "$out/console.boot-failure.log" "$out/console.log"
		touch "$out/boot-flake"
	fi
fi
secs=$(( $(date +%s) - start ))

verdict() {
	echo "$1 $name/$2" >>"$out/host-checks"
}

# The check a guest was in when it ran out of time or died (guest-lib.sh's
# check() announces each).
last_step() {
	grep -a '^rtrs-step: ' "$out/console.log" 2>/dev/null | tail -n 1 |
		sed 's/^rtrs-step: //'
}

echo "total $secs" >>"$out/times"
# The boot: did the guest run its scripts and power off by itself?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	verdict FAIL "guest completed: hung, killed after ${timeout}s in step '$(last_step)' (see $out/console.log)"
elif ! grep -q '^rtrs-guest: done' "$out/console.log" 2>/dev/null; then
	verdict FAIL "guest completed: died before the end in step '$(last_step)' (qemu rc $rc; see $out/console.log)"
else
	verdict PASS "guest completed"
fi

# The kernel log: any report of a kernel bug fails the run.
problems=$("$RTRS_TOP/tests/harness/log-problems.sh" "$out/console.log" || true)
if [ -n "$problems" ]; then
	verdict FAIL "kernel log clean: $(head -1 <<<"$problems")"
else
	verdict PASS "kernel log clean"
fi

rtrs_log "guest $name: finished in ${secs}s"
! grep -q '^FAIL' "$out/host-checks" "$out/checks" 2>/dev/null
