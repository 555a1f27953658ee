#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Generate the uapi header and kernel policy/op tables from the netlink spec
# with the kernel's own YNL generator, taken from Debian's linux-source-6.12,
# and gpuvirtctl's libmnl policies and name tables (user/nl-gen.[ch]) with
# scripts/nl-user-gen.py.
#
# Usage: scripts/ynl-gen.sh [--check]
#   --check   regenerate into a scratch tree and fail if the committed files differ
set -euo pipefail

src=$(cd "$(dirname "$0")/.." && pwd)
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1 || true)
ynl=$src/build/ksrc
spec=$src/Documentation/netlink/specs/gpuvirt.yaml

if [ -z "$tarball" ]; then
	echo "ynl-gen: linux-source-6.12 is not installed; run 'make deps' as root" >&2
	exit 1
fi
"$src/scripts/ksrc-extract.sh" >/dev/null

# The generator validates the spec against ../genetlink-legacy.yaml, so lay out
# a scratch tree the way the kernel does.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/Documentation/netlink/specs"
cp "$ynl"/Documentation/netlink/genetlink*.yaml "$work/Documentation/netlink/"
cp "$spec" "$work/Documentation/netlink/specs/gpuvirt.yaml"
# The generator finds the tree's root by walking up to a MAINTAINERS file and
# loops forever when there is none; this is what makes it spin on specs kept
# outside a kernel tree.
: >"$work/MAINTAINERS"

gen() {
	local mode=$1 kind=$2 out=$3
	# The generator is known to spin on some malformed specs; bound it.
	( cd "$work" && timeout 60 python3 "$ynl/tools/net/ynl/ynl-gen-c.py" \
		--mode "$mode" "--$kind" --spec Documentation/netlink/specs/gpuvirt.yaml \
		-o "$out" ) || {
		echo "ynl-gen: generator failed or timed out on $spec ($mode $kind)" >&2
		exit 1
	}
}

outdir=$src
if [ "${1:-}" = "--check" ]; then
	outdir=$work/out
	mkdir -p "$outdir/include/uapi/linux" "$outdir/kernel/core" "$outdir/user"
fi
gen uapi header "$outdir/include/uapi/linux/gpuvirt.h"
gen kernel header "$outdir/kernel/core/netlink-gen.h"
gen kernel source "$outdir/kernel/core/netlink-gen.c"
python3 "$src/scripts/nl-user-gen.py" "$spec" "$outdir/user/nl-gen.h" \
	"$outdir/user/nl-gen.c" "$outdir/kernel/core/netlink-gen-names.h" || {
	echo "ynl-gen: nl-user-gen.py failed on $spec" >&2
	exit 1
}

if [ "${1:-}" = "--check" ]; then
	rc=0
	for f in include/uapi/linux/gpuvirt.h kernel/core/netlink-gen.h \
		 kernel/core/netlink-gen.c kernel/core/netlink-gen-names.h \
		 user/nl-gen.h user/nl-gen.c; do
		if ! diff -u "$src/$f" "$outdir/$f"; then
			echo "ynl-gen: $f is stale; run 'make ynl' and commit the result" >&2
			rc=1
		fi
	done
	exit $rc
fi
