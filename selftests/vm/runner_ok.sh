#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runner self-test: always passes, after checking the environment contract
# of selftests/lib/guest-suite.sh, and that selftests/lib/vmtest.sh, which
# the other shell tests start with, finds the same paths. Proves that a
# clean VM run is reported as clean (see selftests/runner-selftest.sh).
set -euo pipefail

fail() {
	echo "runner_ok: $*" >&2
	exit 1
}

for v in GPUVIRT_SRC KVER GPUVIRT_KO_DIR GPUVIRT_BIN; do
	[ -n "${!v:-}" ] || fail "\$$v is not set"
	echo "$v=${!v}"
done
[ "$KVER" = "$(uname -r)" ] || fail "KVER=$KVER but the kernel is $(uname -r)"
[ "$(pwd -P)" = "$GPUVIRT_SRC" ] || fail "cwd $(pwd -P) is not \$GPUVIRT_SRC"
[ "$GPUVIRT_KO_DIR" = "$GPUVIRT_SRC/build/$KVER" ] || fail "unexpected GPUVIRT_KO_DIR"
[ "$GPUVIRT_BIN" = "$GPUVIRT_SRC/build/user" ] || fail "unexpected GPUVIRT_BIN"
# shellcheck source=selftests/lib/vmtest.sh
. "$GPUVIRT_SRC/selftests/lib/vmtest.sh"
vmt_init
[ "$(pwd -P)" = "$GPUVIRT_SRC" ] || fail "vmt_init left the cwd at $(pwd -P)"
[ "$KO" = "$GPUVIRT_KO_DIR" ] || fail "vmt_init's KO is $KO"
[ "$CTL" = "$GPUVIRT_BIN/gpuvirtctl" ] || fail "vmt_init's CTL is $CTL"
[ -d /sys/kernel/debug/ ] || fail "no debugfs"
touch "${TMPDIR:-/tmp}/runner_ok.$$" || fail "TMPDIR is not writable"
rm -f "${TMPDIR:-/tmp}/runner_ok.$$"
echo "IOMMU groups: $(ls /sys/kernel/iommu_groups 2>/dev/null | wc -l)"
exit 0
