#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The live migration benchmark: builds the modules and migration_bench,
# runs bench/migration/run-guest.sh in the test VM (5 GiB of guest memory)
# and prints the "bench:" lines. Every figure is a ratio to something
# measured in the same run (bench/migration/README.md).
#
# Usage: bench/migration/run.sh [-k KVER] [-- MIGRATION_BENCH_ARGS...]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.12)
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"
. bench/lib.sh
if [ "${1:-}" = -k ]; then
	bench_kernel "${2:?-k needs a kernel}"
	shift 2
else
	bench_kernel 6.12
fi
[ "${1:-}" = -- ] && shift
out=build/$kver/bench-migration

bench_kmake -s modules KVER="$kver" >&2
make -s -C bench/migration >&2
set +e
MIGRATION_BENCH_ARGS="$*" selftests/vm-run.sh -k "$kver" -o "$out" -m 5G \
	-t 1800 -T 1500 --cmd "MIGRATION_BENCH_ARGS='$*' bench/migration/run-guest.sh" >/dev/null
rc=$?
set -e
grep -o 'bench: .*' "$out/ktap.log" >"$out/bench.txt" || true
cat "$out/bench.txt"
exit $rc
