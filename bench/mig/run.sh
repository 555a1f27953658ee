#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The MIG planner benchmark, on the host: gpuvirt_mig_plan() over every
# wanted multiset of every MIG-capable model (and one custom GPU), from an
# empty GPU and from full layouts with every subset of their GIs busy,
# timed side by side with one gpuvirt_mig_gi_check() (see
# bench/mig/README.md).
#
# Usage: bash bench/mig/run.sh [-r ROUNDS] [-o OUTDIR]
#
#   -r ROUNDS  rounds (default 15)
#   -o OUTDIR  where the output goes (default build/bench-mig): the whole
#              output in OUTDIR/plan_bench.out, the "bench:" lines in
#              OUTDIR/bench.txt
#
# Exit status: 0 when it ran, 1 when it did not build or run.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"

rounds=15
outdir=build/bench-mig
while [ $# -gt 0 ]; do
	case $1 in
	-r) rounds=${2:?-r needs a number}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: bench/mig/run.sh [-r ROUNDS] [-o OUTDIR]" >&2; exit 2 ;;
	esac
done
case $rounds in
''|*[!0-9]*|0) echo "bench/mig/run.sh: -r wants a positive number" >&2; exit 2 ;;
esac
mkdir -p "$outdir"

if ! make -s -C bench/mig >&2; then
	echo "bench/mig: plan_bench did not build" >&2
	exit 1
fi
if ! build/bench/mig/plan_bench -r "$rounds" >"$outdir/plan_bench.out"; then
	echo "bench/mig: plan_bench failed; its output is in $outdir/plan_bench.out" >&2
	exit 1
fi
grep '^bench:' "$outdir/plan_bench.out" >"$outdir/bench.txt" || true
echo "== MIG planner benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $rounds rounds"
cat "$outdir/plan_bench.out"
