#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Print the release of the newest installed kernel of a supported line, one
# that has both an image in /boot and headers in /lib/modules/<rel>/build.
#
# Usage: scripts/kver.sh LINE     LINE is 6.1 or 6.12
#        scripts/kver.sh all      every supported line, one release a line
set -euo pipefail

newest() {
	local line=$1 pat rel best=""
	case $line in
	6.1)  pat='6.1.0-*-amd64' ;;
	6.12) pat='6.12.*+deb12-amd64' ;;
	*) echo "kver: unsupported kernel line '$line' (want 6.1 or 6.12)" >&2; return 2 ;;
	esac
	for d in /lib/modules/$pat; do
		rel=${d##*/}
		[ -e "/boot/vmlinuz-$rel" ] && [ -e "$d/build/Makefile" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n1)
	done
	if [ -z "$best" ]; then
		echo "kver: no $line kernel with headers installed; run scripts/deps.sh as root" >&2
		return 1
	fi
	echo "$best"
}

case ${1:-} in
all) newest 6.1; newest 6.12 ;;
6.1|6.12) newest "$1" ;;
*) echo "usage: $0 {6.1|6.12|all}" >&2; exit 2 ;;
esac
