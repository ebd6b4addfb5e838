#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Add, build and install the modules through dkms.conf for a kernel that
# need not be the running one, all in a scratch directory: its own DKMS
# tree, source tree and install tree, and its own module signing key.
# The system's /var/lib/dkms, /usr/src and /lib/modules are not touched.
#
#   dkms.sh KVER KDIR SRCDIR SCRATCH
#
# KVER is the kernel release (6.1.0-57-amd64), KDIR its headers, SRCDIR a
# clean copy of this project's sources.  SCRATCH is emptied first.  The log
# goes to stdout; any compiler warning fails the build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 4 ] || rtrs_die "usage: dkms.sh KVER KDIR SRCDIR SCRATCH"
kver=$1
kdir=$2
src=$(realpath "$3")
t=$4

conf_value() {
	sed -n "s/^$1=\"\(.*\)\"$/\1/p" "$src/dkms.conf"
}
name=$(conf_value PACKAGE_NAME)
ver=$(conf_value PACKAGE_VERSION)
[ -n "$name" ] && [ -n "$ver" ] || rtrs_die "dkms.conf: no PACKAGE_NAME or PACKAGE_VERSION"

rm -rf "$t"
mkdir -p "$t/tree" "$t/src" "$t/lib/$kver" "$t/key"
t=$(realpath "$t")
cp -a "$src" "$t/src/$name-$ver"
opts=(--dkmstree "$t/tree" --sourcetree "$t/src" --installtree "$t/lib")
# DKMS signs modules for a kernel that checks signatures, with a key it
# creates where these say when there is none yet.
export mok_signing_key=$t/key/mok.key mok_certificate=$t/key/mok.pub

dkms add -m "$name" -v "$ver" "${opts[@]}"
dkms build -m "$name" -v "$ver" -k "$kver" --kernelsourcedir "$kdir" "${opts[@]}" ||
	{ cat "$t/tree/$name/$ver/build/make.log" 2>/dev/null; exit 1; }
log=$t/tree/$name/$ver/$kver/$(uname -m)/log/make.log
cat "$log"
if grep -E 'warning:|error:' "$log"; then
	rtrs_die "dkms: the build warned"
fi
dkms install -m "$name" -v "$ver" -k "$kver" --no-depmod "${opts[@]}"
dkms status -m "$name" -v "$ver" -k "$kver" "${opts[@]}" | tee "$t/status"
grep -q ": installed" "$t/status" || rtrs_die "dkms: not installed"

for m in rtrs-core rtrs-client rtrs-server; do
	ko=$(find "$t/lib/$kver" -name "$m.ko*" | head -1)
	[ -n "$ko" ] || rtrs_die "dkms: $m.ko was not installed"
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] ||
		rtrs_die "dkms: $ko is not built for $kver"
	echo "dkms: $ko"
done
