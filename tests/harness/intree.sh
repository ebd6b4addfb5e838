#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Build this directory the way it builds when dropped into a kernel tree:
# as drivers/infiniband/ulp/rtrs-ng/ of Linux 6.1, next to mainline's
# rtrs/, sourced from drivers/infiniband/Kconfig and listed in
# drivers/infiniband/ulp/Makefile, with its modules chosen by Kconfig.
#
#   intree.sh KDIR SRCDIR
#
# KDIR is the test kernel's build tree; only its .config is read.  SRCDIR
# holds this project's sources (a clean copy).  Neither the test kernel
# nor the unpacked source tree is changed: the kernel tree is a hard-link
# copy of it in the cache, where only new files are written and changed
# files are replaced (never written through a link), and the build goes
# to an output directory of its own there.  The first run makes the copy
# and prepares that output directory (about 10 s on 2 cores); later runs
# build only our directory.
# The log goes to stdout; any compiler warning fails the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Bump when the recipe below changes in a way that needs a fresh cache.
RECIPE=1
DIR=drivers/infiniband/ulp/rtrs-ng

[ $# -eq 2 ] || rtrs_die "usage: intree.sh KDIR SRCDIR"
kdir=$1
ours=$(realpath "$2")
[ -f "$kdir/.config" ] || rtrs_die "intree: no $kdir/.config"

src=$(rtrs_src_tree)
base=$RTRS_CACHE/intree
tree=$base/linux
out=$base/build
key="recipe=$RECIPE src=$(rtrs_src_version) config=$(sha256sum <"$kdir/.config" | cut -c1-16)"

if [ ! -f "$base/stamp" ] || [ "$(cat "$base/stamp")" != "$key" ]; then
	echo "intree: new cache ($key)"
	rm -rf "$base"
	mkdir -p "$base"
	cp -al "$src" "$tree"
	mkdir -p "$out"
	echo "$key" >"$base/stamp"
fi

# replace FILE: write stdin to a new FILE, so the source tree's file that
# FILE may be a hard link to stays as it was.
replace() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX")
	cat >"$tmp"
	mv -f "$tmp" "$1"
}

# Our directory, and the two lines that hook it in, as a patch would add
# them next to mainline's rtrs.
rm -rf "${tree:?}/$DIR"
mkdir -p "$tree/$DIR"
cp -a "$ours/." "$tree/$DIR/"
sed '/ulp\/rtrs\/Kconfig"/a source "'"$DIR"'/Kconfig"' \
	"$src/drivers/infiniband/Kconfig" | replace "$tree/drivers/infiniband/Kconfig"
{
	cat "$src/drivers/infiniband/ulp/Makefile"
	printf 'obj-$(CONFIG_RTRS_CORE)\t\t+= %s/\n' "${DIR##*/}"
} | replace "$tree/drivers/infiniband/ulp/Makefile"
grep -q "$DIR/Kconfig" "$tree/drivers/infiniband/Kconfig" ||
	rtrs_die "intree: could not hook $DIR/Kconfig in"

# The test kernel's configuration, with ours instead of mainline's RTRS
# (the two cannot be built together) and rnbd, which selects mainline's.
cp "$kdir/.config" "$out/.config"
"$tree/scripts/config" --file "$out/.config" \
	--disable BLK_DEV_RNBD_CLIENT --disable BLK_DEV_RNBD_SERVER \
	--disable INFINIBAND_RTRS_CLIENT --disable INFINIBAND_RTRS_SERVER \
	--module RTRS_CLIENT --module RTRS_SERVER \
	--module RTRS_TEST_USERS --module RTRS_KUNIT_TEST
make -s -C "$tree" O="$out" olddefconfig
for sym in RTRS_CORE RTRS_CLIENT RTRS_SERVER RTRS_TEST_USERS RTRS_KUNIT_TEST; do
	grep -qx "CONFIG_$sym=m" "$out/.config" ||
		rtrs_die "intree: Kconfig did not give CONFIG_$sym=m"
done
! grep -q '^CONFIG_INFINIBAND_RTRS=' "$out/.config" ||
	rtrs_die "intree: mainline RTRS is still enabled"

# Only our directory: its objects, and its modules through modpost.
kos=()
for m in rtrs-core rtrs-client rtrs-server \
	tests/user/rtrs-test-srv tests/user/rtrs-test-clt \
	tests/user/rtrs-test-cycles tests/kunit/rtrs-wire-test \
	tests/kunit/rtrs-addr-test tests/kunit/rtrs-core-test \
	tests/kunit/rtrs-srv-validate-test tests/kunit/rtrs-clt-validate-test \
	tests/kunit/rtrs-srv-chunk-test tests/kunit/rtrs-clt-permit-test \
	tests/kunit/rtrs-session-test tests/kunit/rtrs-srv-pool-test \
	tests/kunit/rtrs-srv-op-test tests/kunit/rtrs-clt-sq-test; do
	kos+=("$DIR/$m.ko")
done
# Our objects are built afresh each time: copies keep their sources'
# times, which need not be newer than objects of an earlier run.
rm -rf "${out:?}/$DIR"
start=$(date +%s)
# What Kconfig chose, as "make <dir>/" builds it, then the modules.  With
# no vmlinux.o modpost cannot resolve the kernel's symbols and says so in
# capitals; the compiler's warnings are the ones that count.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
make -C "$tree" O="$out" -j"$RTRS_JOBS" W=1 "$DIR/" 2>&1 | tee "$log"
for ko in "${kos[@]}"; do
	[ -f "$out/${ko%.ko}.o" ] || rtrs_die "intree: ${ko%.ko}.o was not built"
done
make -C "$tree" O="$out" -j"$RTRS_JOBS" W=1 "${kos[@]}" 2>&1 | tee -a "$log"
for ko in "${kos[@]}"; do
	[ -f "$out/$ko" ] || rtrs_die "intree: $ko was not built"
done
! grep -E 'warning:|error:' "$log" || rtrs_die "intree: the build warned"
echo "intree: built in $(( $(date +%s) - start )) s"
