#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The live migration benchmark: builds the modules and migration_bench,
# runs bench/migration/run-guest.sh in the test VM (5 GiB of guest memory)
# and prints the "bench:" lines. Every figure is a ratio to something
# measured in the same run (bench/migration/README.md).
#
# Usage: bench/migration/run.sh [-k KVER] [-- MIGRATION_BENCH_ARGS...]
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"
kver=$(scripts/kver.sh 6.12)
if [ "${1:-}" = -k ]; then
	kver=$(scripts/kver.sh "$2")
	shift 2
fi
[ "${1:-}" = -- ] && shift
out=build/$kver/bench-migration

make -s modules KVER="$kver" >&2
make -s -C bench/migration >&2
set +e
MIGRATION_BENCH_ARGS="$*" selftests/vm-run.sh -k "$kver" -o "$out" -m 5G \
	-t 1800 -T 1500 --cmd "MIGRATION_BENCH_ARGS='$*' bench/migration/run-guest.sh" >/dev/null
rc=$?
set -e
grep -o 'bench: .*' "$out/ktap.log" >"$out/bench.txt" || true
cat "$out/bench.txt"
exit $rc
