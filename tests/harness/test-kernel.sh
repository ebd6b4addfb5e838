#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck source-path=SCRIPTDIR
#
# Build the debug test kernel (Linux 6.1 from Debian's linux-source-6.1,
# x86_64_defconfig plus tests/config/test-kernel.config) into the cache.
# Does nothing when the cached build matches the fragment and the package
# version.  Prints the build directory (usable as KDIR) on stdout.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Bump when the recipe below changes in a way that needs a rebuild.
RECIPE=1

frag=$RTRS_TOP/tests/config/test-kernel.config
# Fixes of the kernel's own bugs that the tests run into, each saying why
# in its header; applied to the unpacked source before the build.
patches=("$RTRS_TOP"/tests/config/patches/*.patch)
out=$RTRS_CACHE/test-kernel
build=$out/build
key="recipe=$RECIPE src=$(rtrs_src_version) frag=$(sha256sum <"$frag" | cut -c1-16)"
key+=" patches=$(cat "${patches[@]}" | sha256sum | cut -c1-16)"

if [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$key" ]; then
	echo "$build"
	exit 0
fi

src=$(rtrs_src_tree)
rm -f "$out/stamp"
mkdir -p "$build"
rtrs_log "building test kernel ($key) in $build"

# Check that every line of the fragment survived olddefconfig.
check_fragment() {
	local bad=0 line sym val
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$build/.config" ||
				{ echo "fragment: '$line' not in .config" >&2; bad=1; }
			;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			val=$(grep -E "^$sym=" "$build/.config" || true)
			[ -z "$val" ] ||
				{ echo "fragment: '$line' but .config has '$val'" >&2; bad=1; }
			;;
		esac
	done <"$frag"
	return $bad
}

# apply_patches: each patch once (one already in the tree is left be).
apply_patches() {
	local p
	for p in "${patches[@]}"; do
		patch -p1 -R -s -f --dry-run -d "$src" <"$p" >/dev/null 2>&1 && continue
		patch -p1 -N -s -f -d "$src" <"$p" >&2 ||
			rtrs_die "patch $(basename "$p") does not apply"
	done
}
apply_patches

make -s -C "$src" O="$build" x86_64_defconfig >&2
"$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag" >/dev/null
make -s -C "$src" O="$build" olddefconfig >&2
check_fragment || rtrs_die "config fragment did not apply"

start=$(date +%s)
make -s -C "$src" O="$build" -j"$RTRS_JOBS" bzImage modules >&2
rm -rf "$out/mods"
make -s -C "$src" O="$build" INSTALL_MOD_PATH="$out/mods" INSTALL_MOD_STRIP=1 \
	modules_install >&2
rtrs_log "test kernel built in $(( $(date +%s) - start )) s"
echo "$key" >"$out/stamp"
echo "$build"
