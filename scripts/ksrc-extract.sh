#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Extract from Debian's linux-source-6.12 tarball the few files the build
# uses, into build/ksrc/: the YNL generator and its schemas, checkpatch and
# its data files, and the kselftest harness headers. Nothing of these is ever
# copied into the source tree. Prints the extracted tree's path.
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
dst=$src/build/ksrc
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)
if [ -z "$tarball" ]; then
	echo "ksrc-extract: /usr/src/linux-source-6.12.tar.* not found; run 'make deps' as root" >&2
	exit 1
fi

stamp=$dst/.stamp
if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$tarball $(stat -c %Y "$tarball")" ]; then
	echo "$dst"
	exit 0
fi

rm -rf "$dst"
mkdir -p "$dst"
top=$(basename "$tarball" | sed 's/\.tar\..*//')
tar -xf "$tarball" -C "$dst" --strip-components=1 --wildcards \
	"$top/tools/net/ynl/*" \
	"$top/Documentation/netlink/genetlink*.yaml" \
	"$top/scripts/checkpatch.pl" \
	"$top/scripts/spelling.txt" \
	"$top/scripts/const_structs.checkpatch" \
	"$top/tools/testing/selftests/kselftest.h" \
	"$top/tools/testing/selftests/kselftest_harness.h"
echo "$tarball $(stat -c %Y "$tarball")" >"$stamp"
echo "$dst"
