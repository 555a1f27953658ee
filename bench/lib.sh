# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the benchmarks' run.sh scripts, from the top of the repo.
#
# bench_kernel KVER   KVER is a release or a line of scripts/kver.sh (6.1,
#                     6.12, 13-6.12, 7). Sets kver to the release. For a
#                     kernel of the trixie root (the Debian 13 lanes) it
#                     exports GPUVIRT_VM_ROOT, so that selftests/vm-run.sh
#                     boots it with that root, and bench_kmake then builds
#                     in the root, against the root's headers and sources.
# bench_kmake ARGS    make ARGS, for what builds against the kernel
#                     (modules, test modules, the mtty baseline). User-space
#                     programs build on the host, as for the VM tests.

bench_kernel() {
	local root

	case $1 in
	*.*.*) kver=$1 ;;
	*) kver=$(scripts/kver.sh "$1") || exit 2 ;;
	esac
	bench_in_root=0
	[ -e "/boot/vmlinuz-$kver" ] && return 0
	root=$(scripts/trixie-root.sh --print 2>/dev/null) || root=""
	if [ -z "$root" ] || [ ! -e "$root/boot/vmlinuz-$kver" ]; then
		echo "${0}: no kernel $kver, neither in /boot nor in the trixie root" \
		     "(scripts/trixie-root.sh)" >&2
		exit 2
	fi
	export GPUVIRT_VM_ROOT=$root
	bench_in_root=1
}

bench_kmake() {
	if [ "$bench_in_root" = 1 ]; then
		scripts/trixie-root.sh --run make "$@"
	else
		make "$@"
	fi
}
