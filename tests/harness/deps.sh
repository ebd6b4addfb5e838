#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install the Debian packages the build and the tests need.  Idempotent:
# runs apt-get only for what is missing.
set -euo pipefail

PKGS=(
	build-essential bc bison flex libssl-dev libelf-dev dwarves kmod cpio
	xz-utils rsync python3 sparse git
	linux-source-6.1 linux-headers-amd64
	linux-source-6.12 linux-headers-6.12-amd64
	qemu-system-x86 busybox-static
	rdma-core ibverbs-utils rdmacm-utils perftest fio iproute2 jq nvme-cli
	linux-perf
	libibverbs-dev librdmacm-dev
	dkms python3-docutils
	shellcheck
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}" >&2
	if [ "$(id -u)" -ne 0 ]; then
		echo "deps: need root to install packages" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The guest binds the modules of the kernel it runs over /lib/modules of the
# read-only root it shares with this machine; the mount point must exist.
[ -d /lib/modules ] || mkdir -p /lib/modules
