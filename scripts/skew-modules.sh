#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the gpuvirt modules of an older commit for kernel KVER: the tree
# just before vgpu-get's omit attribute (the parent of OMIT_COMMIT below),
# taken from this clone's history with git archive and built by that
# tree's own "make modules" against KDIR. The VM test
# selftests/vm/gpuvirtctl_skew.sh loads them and runs today's gpuvirtctl
# against them: a host whose package was upgraded (DKMS built the new
# modules) still runs the old module until it reboots or reloads it.
#
# The commit must be in the clone's history (CI clones it whole): a
# shallow clone fetches the rest from its origin first, and where that
# cannot be done this fails, naming the commit. The result is kept until the commit or the
# kernel's headers change, in OUTDIR and, where it may write there, in
# ${GPUVIRT_SKEW_CACHE:-/var/cache/gpuvirt/skew}/<commit>-<kver>-<headers>/
# for the next clone (make check runs in a fresh one): a module build
# saved on every run but the first. OUTDIR is outside build/KVER/, which
# the build steps clean.
#
# Usage: scripts/skew-modules.sh --tree OUTDIR
#          only take the old tree out of the history, into OUTDIR/src
#        scripts/skew-modules.sh KVER KDIR OUTDIR [PROBED]
#          the tree (as --tree), then its modules for KVER
#   PROBED       where this tree's build for KVER keeps its compat probe
#                results (build/KVER/kernel): the old tree's "make
#                modules" takes them when its probes and their key are the
#                same (it checks the key itself), which saves it a third of
#                its time; else it runs its own
#   OUTDIR/src   the old tree, OUTDIR/src/.rev the commit it is
#   OUTDIR/ko    its module tree, laid out as build/KVER/ is
#                (kernel/core/gpuvirt.ko, kernel/sim/gpuvirt_sim.ko, ...)
#   OUTDIR/rev   the commit of the modules
# Where git is missing (in the Debian 13 root of scripts/trixie-root.sh),
# the modules are built from the tree that --tree took out before, on the
# host; without one it fails.
set -euo pipefail

# "netlink: vgpu-get omit, for a reader that needs no counters"
OMIT_COMMIT=ad51e453175e79bf736134a37345dd5d7cc12bdb
CACHE=${GPUVIRT_SKEW_CACHE:-/var/cache/gpuvirt/skew}
USAGE="usage: skew-modules.sh --tree OUTDIR | KVER KDIR OUTDIR [PROBED]"

SRC=$(cd "$(dirname "$0")/.." && pwd -P)

die() {
	echo "skew-modules: $*" >&2
	exit 1
}

# tree OUTDIR: OUTDIR/src is the tree before omit; its commit in $rev
tree() {
	local out=$1

	if ! command -v git >/dev/null; then
		read -r rev 2>/dev/null <"$out/src/.rev" ||
			die "no git here to take the tree before omit out of the history, and no $out/src from skew-modules.sh --tree"
		return 0
	fi
	# a shallow clone gets the history from its origin, where it can
	if [ "$(git -C "$SRC" rev-parse --is-shallow-repository 2>/dev/null)" = true ] &&
		! git -C "$SRC" rev-parse -q --verify "$OMIT_COMMIT^{commit}^" >/dev/null 2>&1; then
		git -C "$SRC" fetch -q --unshallow 2>/dev/null || true
	fi
	# without the commit, nothing of an earlier build is left to be taken
	# for this one
	rev=$(git -C "$SRC" rev-parse -q --verify "$OMIT_COMMIT^{commit}^" 2>/dev/null) || {
		rm -rf "$out"
		die "commit $OMIT_COMMIT (vgpu-get omit) or its parent is not in the history of $SRC; the VM test of gpuvirtctl against a module older than omit needs it (a shallow clone whose origin could not give the rest)"
	}
	[ "$(cat "$out/src/.rev" 2>/dev/null)" = "$rev" ] && return 0
	rm -rf "$out"
	mkdir -p "$out/src"
	git -C "$SRC" archive "$rev" | tar -x -C "$out/src"
	# The old tree must not know omit, or the test would prove nothing.
	! grep -q GPUVIRT_A_VGPU_OMIT "$out/src/include/uapi/linux/gpuvirt.h" ||
		die "$rev already has GPUVIRT_A_VGPU_OMIT"
	echo "$rev" >"$out/src/.rev"
}

if [ "${1:-}" = --tree ]; then
	[ $# = 2 ] || die "$USAGE"
	tree "$2"
	exit 0
fi
[ $# = 3 ] || [ $# = 4 ] || die "$USAGE"
kver=$1 kdir=$2 out=$3 probed=${4:-}

tree "$out"
[ -e "$kdir/Makefile" ] || die "no kernel headers at $kdir"
hdrs=$(stat -L -c '%n %s %Y' "$kdir/Makefile" "$kdir/include/generated/autoconf.h" \
	"$kdir/Module.symvers" 2>/dev/null | sha256sum | cut -c1-16)
want="$rev $kver $hdrs"
built() {
	[ -e "$1/kernel/core/gpuvirt.ko" ] && [ -e "$1/kernel/sim/gpuvirt_sim.ko" ]
}
if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$want" ] && built "$out/ko"; then
	exit 0
fi

rm -rf "$out/ko" "$out/rev" "$out/.stamp"
cdir=$CACHE/${rev:0:12}-$kver-$hdrs
if [ -e "$cdir/done" ] && built "$cdir"; then
	mkdir -p "$out/ko"
	cp -a "$cdir/kernel" "$out/ko/"
	echo "$rev" >"$out/rev"
	echo "$want" >"$out/.stamp"
	exit 0
fi
if [ -n "$probed" ] && [ -e "$probed/compat-probed.h" ] && [ -e "$probed/compat-probed.key" ]; then
	mkdir -p "$out/ko/kernel"
	cp "$probed/compat-probed.h" "$probed/compat-probed.key" "$out/ko/kernel/"
fi
# Its own Makefile and compat probes; SRC is its tree, not this one.
if ! env -u SRC make -s -j"$(nproc)" -C "$out/src" modules KVER="$kver" KDIR="$kdir" \
	KBUILD="$out/ko" >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	die "the modules of $rev do not build for $kver (log: $out/build.log)"
fi
echo "$rev" >"$out/rev"
echo "$want" >"$out/.stamp"

# Into the cache, whole or not at all (a concurrent run may win).
if mkdir -p "$CACHE" 2>/dev/null && tmp=$(mktemp -d "$CACHE/.new-XXXXXX" 2>/dev/null); then
	if (cd "$out/ko" && find kernel -name '*.ko' -exec cp --parents {} "$tmp/" \;) &&
		echo "$want" >"$tmp/done" && chmod 755 "$tmp" && mv -T "$tmp" "$cdir" 2>/dev/null; then
		:
	else
		rm -rf "$tmp"
	fi
fi
exit 0
