#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo: install what is missing, build, boot a VM (Debian's 6.1 kernel
# by default; KVER=... picks another), and run scripts/demo-guest.sh in it.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$SRC"
scripts/deps.sh
kver=${KVER:-$(scripts/kver.sh 6.1)}

echo "demo: building for $kver"
make -s modules KVER="$kver" >/dev/null
make -s user vm-tests >/dev/null
out=build/$kver/demo
selftests/vm-run.sh -k "$kver" -o "$out" --cmd scripts/demo-guest.sh >/dev/null || {
	echo "demo: the VM run failed; logs in $out" >&2
	sed -n 's/^    # \{0,1\}//p' "$out/ktap.log" >&2 || true
	exit 1
}
# The guest's transcript travels back as KTAP diagnostics.
sed -n 's/^    # \{0,1\}//p' "$out/ktap.log" | sed '/^gvsuite:/d'
echo "demo: kernel log of the run in $out/guest/dmesg"
