#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prove dkms.conf: dkms add, build against each given kernel's headers, and
# remove, under a throw-away version so that an installed gpuvirt is never
# touched. Prints KTAP. Needs root (dkms writes /usr/src and /var/lib/dkms).
#
# Usage: scripts/dkms-check.sh KVER...
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
. "$SRC/selftests/lib/ktap.sh"

[ $# -gt 0 ] || { echo "usage: $0 KVER..." >&2; exit 2; }
if [ "$(id -u)" -ne 0 ] || ! command -v dkms >/dev/null; then
	echo "TAP version 13"
	echo "1..0 # SKIP needs root and dkms"
	exit 4
fi

ver=0.0.0~check
srcdir=/usr/src/gpuvirt-$ver
tree=/var/lib/dkms/gpuvirt/$ver

cleanup() {
	dkms remove -m gpuvirt -v "$ver" --all >/dev/null 2>&1
	rm -rf "$srcdir"
}
cleanup
trap cleanup EXIT

ktap_plan $((3 + 2 * $#))

# The source as a package would ship it: the tree without build outputs.
mkdir -p "$srcdir"
tar -C "$SRC" --exclude=./build --exclude=./.git -cf - . | tar -C "$srcdir" -xf -
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$ver\"/" "$srcdir/dkms.conf"

dkms add -m gpuvirt -v "$ver"
ktap_result $? "dkms add"

for k in "$@"; do
	dkms build -m gpuvirt -v "$ver" -k "$k"
	rc=$?
	[ $rc -ne 0 ] && [ -e "$tree/build/make.log" ] && tail -n 30 "$tree/build/make.log" | sed 's/^/# /'
	ktap_result $rc "dkms build for $k"

	ok=0
	for m in gpuvirt gpuvirt_sim gpuvirt_vfio_pci; do
		f=$(ls "$tree/$k/x86_64/module/$m.ko"* 2>/dev/null | head -n1)
		if [ -z "$f" ]; then
			ktap_diag "$m: not built"
			ok=1
			continue
		fi
		vm=$(modinfo -F vermagic "$f" | cut -d' ' -f1)
		if [ "$vm" != "$k" ]; then
			ktap_diag "$m: vermagic $vm, want $k"
			ok=1
		fi
	done
	ktap_result $ok "$k: the three modules are built for it"
done

dkms status -m gpuvirt -v "$ver" | sed 's/^/# /'
dkms remove -m gpuvirt -v "$ver" --all
ktap_result $? "dkms remove --all"
[ ! -e "$tree" ]
ktap_result $? "nothing left in /var/lib/dkms"

ktap_finish
