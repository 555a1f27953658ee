#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the kernel's own mdev sample drivers (samples/vfio-mdev/: mtty,
# mdpy, mbochs) out of tree for kernel KVER, from the Debian linux-source
# package of that kernel's series (linux-source-6.1 for 6.1.x,
# linux-source-6.12 for 6.12.x: the samples follow the VFIO API of their
# kernel, so 6.12's do not build against 6.1). They stand in, in the VM
# tests, for another vendor's mdev driver next to gpuvirt's GPUs
# (selftests/vm/stacks_mdev.sh). A sample that does not build is left out
# and named on stderr; mtty must build.
#
# Usage: scripts/mdev-samples.sh KVER OUTDIR   (OUTDIR gets the .ko files)
set -euo pipefail

kver=${1:?usage: mdev-samples.sh KVER OUTDIR}
out=${2:?usage: mdev-samples.sh KVER OUTDIR}
series=$(echo "$kver" | sed -E 's/^([0-9]+\.[0-9]+).*/\1/')
tarball=$(ls /usr/src/linux-source-"$series".tar.* 2>/dev/null | head -n1 || true)
if [ -z "$tarball" ]; then
	echo "mdev-samples: /usr/src/linux-source-$series.tar.* not found; run 'make deps' as root" >&2
	exit 1
fi
kdir=/lib/modules/$kver/build
[ -e "$kdir/Makefile" ] || { echo "mdev-samples: no kernel headers at $kdir" >&2; exit 1; }

stamp=$out/.stamp
want="$tarball $(stat -c %Y "$tarball") $kver"
if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -e "$out/mtty.ko" ]; then
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/src"
top=$(basename "$tarball" | sed 's/\.tar\..*//')
tar -xf "$tarball" -C "$out/src" --strip-components=3 --wildcards \
	"$top/samples/vfio-mdev/*"
for m in mtty mdpy mbochs; do
	rm -rf "$out/build-$m"
	mkdir -p "$out/build-$m"
	cp "$out/src/"*.h "$out/build-$m/" 2>/dev/null || true
	cp "$out/src/$m.c" "$out/build-$m/"
	echo "obj-m := $m.o" >"$out/build-$m/Kbuild"
	if make -s -C "$kdir" M="$out/build-$m" modules >"$out/build-$m.log" 2>&1; then
		cp "$out/build-$m/$m.ko" "$out/"
	else
		echo "mdev-samples: $m does not build for $kver (see $out/build-$m.log)" >&2
	fi
done
[ -e "$out/mtty.ko" ] || { echo "mdev-samples: mtty did not build for $kver" >&2; exit 1; }
echo "$want" >"$stamp"
