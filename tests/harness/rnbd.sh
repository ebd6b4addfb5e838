#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Build rnbd from a Linux source package, unmodified, out of tree against
# our rtrs.h and our modules' Module.symvers.
#
#   rnbd.sh KDIR RTRS_DIR [SERIES]
#
# SERIES is the source package's (6.1 unless told; 6.12 for rnbd of 6.12,
# built against that series' headers).
# KDIR is the kernel build tree, RTRS_DIR a tree where our modules were
# built against that KDIR (it holds rtrs.h, rtrs-srv.h and Module.symvers).
# rnbd's sources are copied into RTRS_DIR/rnbd at each call and built there;
# the result is RTRS_DIR/rnbd/rnbd-client.ko and rnbd-server.ko.  The build
# log goes to stdout; any compiler or modpost warning fails the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || [ $# -eq 3 ] || rtrs_die "usage: rnbd.sh KDIR RTRS_DIR [SERIES]"
kdir=$1
rtrs=$(realpath "$2")
series=${3:-6.1}
out=$rtrs/rnbd
for f in "$kdir/Makefile" "$rtrs/rtrs.h" "$rtrs/rtrs-srv.h" "$rtrs/Module.symvers"; do
	[ -f "$f" ] || rtrs_die "rnbd: missing $f"
done

src=$(rtrs_src_tree "$series")/drivers/block/rnbd
rm -rf "$out"
mkdir -p "$out"
cp "$src"/Makefile "$src"/*.[ch] "$out/"

# rnbd's own Makefile, as it is.  On the command line we only say which
# modules to build (the CONFIG_ symbols are not set in a kernel without
# rnbd) and where rtrs.h is: ours, not the mainline one next to the source
# tree.  rnbd-srv-trace.c includes mainline's private "rtrs-srv.h" for
# struct rtrs_srv_op; ours of that name has the member it reads.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
make -C "$kdir" M="$out" -j"$RTRS_JOBS" \
	CONFIG_BLK_DEV_RNBD_CLIENT=m CONFIG_BLK_DEV_RNBD_SERVER=m \
	ccflags-y="-I$rtrs" KBUILD_EXTRA_SYMBOLS="$rtrs/Module.symvers" \
	modules >"$log" 2>&1 || rc=$?
cat "$log"
if [ "$rc" -ne 0 ] || grep -q -i -E 'warning:|error:' "$log"; then
	rtrs_die "rnbd: $(grep -i -m1 -E 'warning:|error:' "$log" || echo "make failed")"
fi
for ko in rnbd-client rnbd-server; do
	[ -f "$out/$ko.ko" ] || rtrs_die "rnbd: $ko.ko not built"
done
