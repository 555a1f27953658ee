#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build, or reuse, the debug kernel of `make check-debug`: Debian's
# linux-source-6.12 configured as `make tinyconfig` plus selftests/config.debug
# (KASAN, lockdep, kmemleak, fault injection; everything the VM suite needs).
#
# Usage: scripts/debug-kernel.sh [--print | --status]
#   (none)    build it unless the cache has it, then print its directory
#   --print   print the directory the current inputs map to, build nothing
#   --status  print "cached DIR" or "missing DIR"; exit 1 when missing
#
# The cache lives outside the clone, in
#   ${GPUVIRT_DEBUG_KERNEL_CACHE:-/var/cache/gpuvirt/debug-kernel}/<source-version>-<hash>/
# where <hash> covers selftests/config.debug and this script's build recipe,
# so a new source package or an edited fragment builds a new kernel and
# anything else reuses the old one. A directory holds:
#   linux/           the built source tree: make -C DIR/linux M=... modules
#   bzImage          the kernel to boot (selftests/vm-run.sh, GPUVIRT_VM_KERNEL)
#   vmlinux          the uncompressed kernel, for symbolising reports
#   root/lib/modules/KVER   modules_install output (GPUVIRT_VM_MODDIR)
#   kver             the kernel release, e.g. 6.12.118-gvdebug
#   config           the final .config
#   build.log        the build's output; build-seconds how long it took
#   done             written last: the directory is complete
#
# The compile runs as `nice -n 10 make -j${GPUVIRT_DEBUG_KERNEL_JOBS:-2}`,
# about 15 minutes on 2 cores. Concurrent callers wait on a lock per key.
# Old keys are left alone; remove them by hand.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
FRAG=$SRC/selftests/config.debug
PKG=linux-source-6.12
ROOT=${GPUVIRT_DEBUG_KERNEL_CACHE:-/var/cache/gpuvirt/debug-kernel}
JOBS=${GPUVIRT_DEBUG_KERNEL_JOBS:-2}
# Bump when the recipe below changes in a way that changes the result.
RECIPE=1

CACHE_WHO=debug-kernel
# shellcheck source=scripts/lib/cache.sh
. "$SRC/scripts/lib/cache.sh"
cache_mode "${1:-}"

[ -r "$FRAG" ] || die "missing $FRAG"
tarball=$(ls /usr/src/$PKG.tar.* 2>/dev/null | head -n1 || true)
[ -n "$tarball" ] || die "/usr/src/$PKG.tar.* not found; install $PKG (scripts/deps.sh)"
srcver=$(dpkg-query -W -f='${Version}' $PKG 2>/dev/null) ||
	die "$PKG is not installed as a package"
hash=$({ echo "recipe $RECIPE"; cat "$FRAG"; } | sha256sum | cut -c1-12)
dir=$ROOT/${srcver//[^A-Za-z0-9.+-]/_}-$hash

cache_answer "$dir" "$dir"

[ -e "$dir/done" ] && { echo "$dir"; exit 0; }

cache_lock "$dir"
[ -e "$dir/done" ] && { echo "$dir"; exit 0; }

t0=$(date +%s)
rm -rf "$dir"
mkdir -p "$dir"
log=$dir/build.log
echo "debug-kernel: building $PKG $srcver with ${FRAG#"$SRC"/} in $dir" \
	"(nice make -j$JOBS, about 15 min; log: $log)" >&2

# Run a build step with its output in the log; on failure show its tail.
run() {
	echo "+ $*" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 30 "$log" | sed 's/^/debug-kernel: | /' >&2
		die "failed: $* (log: $log)"
	fi
}

top=$(basename "$tarball" | sed 's/\.tar\..*//')
run tar -xf "$tarball" -C "$dir"
mv "$dir/$top" "$dir/linux"
K=$dir/linux
kmake() {
	run nice -n 10 make -C "$K" ARCH=x86_64 "$@"
}

kmake tinyconfig
run "$K/scripts/kconfig/merge_config.sh" -m -O "$K" "$K/.config" "$FRAG"
kmake olddefconfig

# Every line of the fragment must have stuck.
bad=()
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF "$line" "$K/.config" || bad+=("$line") ;;
	'# CONFIG_'*' is not set')
		sym=${line#\# }; sym=${sym%% *}
		if grep -q "^$sym=" "$K/.config"; then bad+=("$line"); fi ;;
	esac
done <"$FRAG"
if [ ${#bad[@]} -gt 0 ]; then
	printf 'debug-kernel: not in the final .config: %s\n' "${bad[@]}" >&2
	die "the fragment does not apply cleanly to $PKG $srcver; fix ${FRAG#"$SRC"/}"
fi
cp "$K/.config" "$dir/config"

kmake -j"$JOBS" bzImage modules
kver=$(make -s -C "$K" kernelrelease)
kmake INSTALL_MOD_PATH="$dir/root" modules_install
# modules_install links build/ to the tree already; make sure of it.
ln -sfn "$K" "$dir/root/lib/modules/$kver/build"
cp "$K/arch/x86/boot/bzImage" "$dir/bzImage"
cp "$K/vmlinux" "$dir/vmlinux"
echo "$kver" >"$dir/kver"
echo $(($(date +%s) - t0)) >"$dir/build-seconds"
: >"$dir/done"
echo "debug-kernel: built $kver in $(cat "$dir/build-seconds") s" >&2
echo "$dir"
