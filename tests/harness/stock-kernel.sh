#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Unpack one of Debian's stock kernels into the cache, without installing
# it, and build the tiny initramfs that loads its 9p modules and switches
# to the host's root over 9p.
#
#   stock-kernel.sh [META]
#
# META is the headers meta-package that names the kernel:
# linux-headers-amd64 (6.1, the default) or linux-headers-6.12-amd64.
#
# Prints "<version> <cache dir>"; the dir holds root/ (the unpacked package,
# with modules.dep), initrd.img and the headers path in KDIR.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

RECIPE=1

meta=${1:-linux-headers-amd64}
ver=$(rtrs_stock_release "$meta")
[ -n "$ver" ] || rtrs_die "$meta is not installed"
kdir=/usr/src/linux-headers-$ver
[ -d "$kdir" ] || rtrs_die "no headers in $kdir"
out=$RTRS_CACHE/stock/$ver
key="recipe=$RECIPE ver=$ver"

if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$key" ]; then
	echo "$ver $out"
	exit 0
fi

rtrs_log "unpacking stock kernel $ver into $out"
rm -rf "$out"
mkdir -p "$out/dl"
(cd "$out/dl" && apt-get -o APT::Sandbox::User=root download \
	"linux-image-$ver" >&2)
dpkg-deb -x "$out"/dl/linux-image-"$ver"_*.deb "$out/root"
rm -rf "$out/dl"
depmod -b "$out/root" "$ver"

# Initramfs: busybox, the modules 9p needs in load order, and /init.
ird=$out/initramfs
mkdir -p "$ird"/{bin,dev,proc,sys,newroot,modules}
cp /bin/busybox "$ird/bin/busybox"
for t in sh mount umount insmod switch_root mkdir cat echo sleep; do
	ln -s busybox "$ird/bin/$t"
done
modprobe -D -d "$out/root" -S "$ver" -a virtio_pci 9pnet_virtio 9p |
	awk '$1 == "insmod" && !seen[$2]++ { print $2 }' >"$out/load-order"
# 6.12's modules are xz-compressed: busybox's insmod gets them plain.
while read -r ko; do
	m=$(basename "$ko" .xz)
	case "$ko" in
	*.xz) xz -dc "$ko" >"$ird/modules/$m" ;;
	*) cp "$ko" "$ird/modules/$m" ;;
	esac
	echo "insmod /modules/$m"
done <"$out/load-order" >"$ird/load-modules"
cp "$RTRS_TOP/tests/harness/stock-initramfs-init" "$ird/init"
chmod +x "$ird/init"
(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initrd.img"
echo "$kdir" >"$out/KDIR"
echo "$key" >"$out/stamp"
echo "$ver $out"
