#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Print the release of the newest installed kernel of a supported line, one
# that has both an image in /boot and headers in /lib/modules/<rel>/build.
#
# Usage: scripts/kver.sh LINE     LINE is 6.1, 6.12, 13-6.12 or 7
#        scripts/kver.sh all      every Debian 12 line (6.1, 6.12), one release a line
#
#   6.1      Debian 12's 6.1, installed on the host
#   6.12     Debian 12's 6.12 (bookworm-security), installed on the host
#   13-6.12  Debian 13's 6.12, in the trixie root of scripts/trixie-root.sh
#   7        the newest 7.x of trixie-backports, in the same root
# The last two are looked up in ROOT/boot and ROOT/lib/modules, ROOT being
# `scripts/trixie-root.sh --print`; they boot with GPUVIRT_VM_ROOT=ROOT
# (selftests/vm-run.sh) and build in the root (scripts/trixie-root.sh --run).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)

newest() {
	local line=$1 root="" pat re='' rel best="" b
	# re, when set, keeps the flavours (-rt-amd64, -cloud-amd64) out.
	case $line in
	6.1)  pat='6.1.0-*-amd64' ;;
	6.12) pat='6.12.*+deb12-amd64' ;;
	13-6.12) pat='6.12.*+deb13-amd64'; re='^6\.12\.[0-9]+\+deb13-amd64$' ;;
	7) pat='7.*-amd64'; re='^7\.[0-9]+\.[0-9]+\+[a-z0-9]+-amd64$' ;;
	*) echo "kver: unsupported kernel line '$line' (want 6.1, 6.12, 13-6.12 or 7)" >&2; return 2 ;;
	esac
	case $line in
	13-6.12|7) root=$("$SRC/scripts/trixie-root.sh" --print) || return 1 ;;
	esac
	for d in "$root"/lib/modules/$pat; do
		rel=${d##*/}
		[ -z "$re" ] || [[ $rel =~ $re ]] || continue
		[ -e "$root/boot/vmlinuz-$rel" ] || continue
		# build/ may be a link that is absolute inside the root.
		b=$d/build
		if [ -n "$root" ] && [ -L "$b" ]; then
			b=$(readlink "$b")
			case $b in /*) b=$root$b ;; *) b=$d/$b ;; esac
		fi
		[ -e "$b/Makefile" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n1)
	done
	if [ -z "$best" ]; then
		if [ -n "$root" ]; then
			echo "kver: no $line kernel with headers in $root; run scripts/trixie-root.sh as root" >&2
		else
			echo "kver: no $line kernel with headers installed; run scripts/deps.sh as root" >&2
		fi
		return 1
	fi
	echo "$best"
}

case ${1:-} in
all) newest 6.1; newest 6.12 ;;
6.1|6.12|13-6.12|7) newest "$1" ;;
*) echo "usage: $0 {6.1|6.12|13-6.12|7|all}" >&2; exit 2 ;;
esac
