# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Shared settings of the rtrs test harness.  Sourced, not run.

RTRS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RTRS_CACHE=${RTRS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rtrs}
RTRS_RESULTS=${RTRS_RESULTS:-$RTRS_TOP/results}
RTRS_JOBS=${RTRS_JOBS:-$(nproc)}

# rtrs_src_version [SERIES]: the version of the Linux source package of
# SERIES (6.1, which everything is built from, unless told).
rtrs_src_version() {
	dpkg-query -W -f='${Version}' "linux-source-${1:-6.1}" 2>/dev/null
}

# rtrs_src_tree [SERIES]: the unpacked source tree of linux-source-SERIES
# (6.1 unless told), extracted once into the cache.
rtrs_src_tree() {
	local series=${1:-6.1} ver dir
	ver=$(rtrs_src_version "$series")
	[ -n "$ver" ] || { echo "linux-source-$series is not installed" >&2; return 1; }
	dir=$RTRS_CACHE/src/linux-source-$series-$ver
	if [ ! -f "$dir/.rtrs-extracted" ]; then
		rm -rf "$dir" "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -C "$dir.tmp" -xf "/usr/src/linux-source-$series.tar.xz" >&2
		mv "$dir.tmp/linux-source-$series" "$dir"
		rmdir "$dir.tmp"
		touch "$dir/.rtrs-extracted"
	fi
	echo "$dir"
}

# rtrs_stock_release META: the kernel release whose headers Debian's
# meta-package META (linux-headers-amd64 for 6.1, linux-headers-6.12-amd64
# for 6.12) depends on; nothing when it is not installed.
rtrs_stock_release() {
	dpkg-query -W -f='${Depends}' "$1" 2>/dev/null |
		sed -n 's/.*linux-headers-\([^ ,]*\).*/\1/p'
}

# rtrs_stock_meta KERNEL: the headers meta-package naming the stock kernel
# a guest runs as KERNEL (stock: 6.1, stock-6.12).
rtrs_stock_meta() {
	case "$1" in
	stock) echo linux-headers-amd64 ;;
	stock-6.12) echo linux-headers-6.12-amd64 ;;
	*) return 1 ;;
	esac
}

# rtrs_mainline_build KDIR SERIES OUT: mainline's rtrs of SERIES from its
# source package into OUT, built there against KDIR with its own Makefile
# (the CONFIG_ symbols it reads are not set in a kernel without RTRS).
rtrs_mainline_build() {
	local src
	src=$(rtrs_src_tree "$2") || return 1
	rm -rf "$3" && mkdir -p "$3" &&
		cp "$src"/drivers/infiniband/ulp/rtrs/* "$3/" &&
		make -C "$1" M="$3" -j"$RTRS_JOBS" \
			CONFIG_INFINIBAND_RTRS=m CONFIG_INFINIBAND_RTRS_CLIENT=m \
			CONFIG_INFINIBAND_RTRS_SERVER=m modules
}

rtrs_log() {
	printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2
}

rtrs_die() {
	rtrs_log "error: $*"
	exit 1
}

# copy_tree DIR: this source tree, without its build, results and git
# folders, as DIR (emptied first), to build in.
copy_tree() {
	rm -rf "$1" && mkdir -p "$1" &&
		rsync -a --exclude=/build --exclude=/results --exclude=/.git \
			"$RTRS_TOP/" "$1/"
}

# The jobs a user runs (make run, make bench) say which one failed and
# where its logs are: JOB names it ("run"), LOGS is its log directory.
failed() {
	echo
	echo "make $JOB FAILED: $*"
	echo "logs: $LOGS"
	exit 1
}

# step WHAT LOG CMD...: a set-up step of a job; its output goes to LOG.
step() {
	local what=$1 log=$2
	shift 2
	rtrs_log "$what"
	"$@" >"$log" 2>&1 || failed "$what (see $log)"
}

# job_stock_kernel [META]: a job's first steps: a fresh LOGS, the packages
# it needs, and the Debian stock kernel META names (see stock-kernel.sh;
# 6.1 unless told); sets sver, sdir and KDIR.
# shellcheck disable=SC2034 # sver and KDIR are for the job that calls it
job_stock_kernel() {
	local h=$RTRS_TOP/tests/harness

	rm -rf "$LOGS" && mkdir -p "$LOGS" || failed "cannot make $LOGS"
	step "installing what is missing" "$LOGS/deps.log" "$h/deps.sh"
	rtrs_log "stock kernel"
	read -r sver sdir < <("$h/stock-kernel.sh" "$@" 2>"$LOGS/stock-kernel.log") ||
		failed "unpacking the stock kernel (see $LOGS/stock-kernel.log)"
	KDIR=$(cat "$sdir/KDIR")
}

# job_test_kernel: a job's first steps for a test-kernel guest: a fresh
# LOGS, the packages, the test kernel and our modules built against it
# in B; sets KDIR and B.
# shellcheck disable=SC2034 # KDIR and B are for the job (and the eval below)
job_test_kernel() {
	local h=$RTRS_TOP/tests/harness

	rm -rf "$LOGS" && mkdir -p "$LOGS" || failed "cannot make $LOGS"
	step "installing what is missing" "$LOGS/deps.log" "$h/deps.sh"
	step "test kernel (cached after the first build)" "$LOGS/test-kernel.log" \
		"$h/test-kernel.sh"
	KDIR=$(tail -n 1 "$LOGS/test-kernel.log")
	B=$RTRS_TOP/build/test
	step "building rtrs against the test kernel" "$LOGS/build.log" \
		eval 'copy_tree "$B" && make -C "$B" KDIR="$KDIR" W=1 -j"$RTRS_JOBS"'
}

# job_guest_report G WHAT T0: print the figures and checks the guest left
# in G (WHAT: its logs worth naming) and the time since T0; fail the job
# on a failed check or when the guest left none.
job_guest_report() {
	local g=$1 problems

	echo
	# Figures go to the figures file (guest-lib.sh) or, from the soak,
	# to script.log as "figure: " lines.
	{ cat "$g/figures"; sed -n 's/^figure: //p' "$g/script.log"; } 2>/dev/null |
		sed 's/^/  /'
	echo
	cat "$g/host-checks" "$g/checks" 2>/dev/null
	echo
	echo "logs: $g ($2)"
	echo "took $(( $(date +%s) - $3 )) s"
	problems=$(grep -h '^FAIL' "$g/host-checks" "$g/checks" 2>/dev/null)
	[ -z "$problems" ] || failed "$(sed "s/^FAIL $JOB\///" <<<"$problems")"
	[ -s "$g/checks" ] || failed "the guest left no checks (see $LOGS/guest.log)"
	echo "make $JOB: OK"
}
