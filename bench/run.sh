#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host side of the benchmarks: builds the modules, the benchmark binary and
# the kernel's mtty sample for KVER, boots the test VM (selftests/vm-run.sh)
# with bench/run-guest.sh as its command, and prints the "bench:" lines.
#
# Usage: bench/run.sh [-k KVER] [-o OUTDIR] [-a 'KERNEL ARGS'] [-- vgpu_bench options]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.1)
#   -o OUTDIR  vm-run's output directory (default: build/KVER/bench-vm);
#              the whole guest output is in OUTDIR/ktap.log, the bench
#              lines alone in OUTDIR/bench.txt
#   -a ARGS    extra guest kernel command line, e.g. 'clocksource=tsc
#              tsc=reliable' (the 6.1 guest picks hpet by itself)
#
# Every result is a ratio measured side by side in the one run; see
# bench/README.md for how to read them. Exit status: vm-run's.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$SRC"

kver=6.1
outdir=""
append=""
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-a) append=${2?-a needs kernel arguments}; shift 2 ;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	*) echo "usage: bench/run.sh [-k KVER] [-o OUTDIR] [-- vgpu_bench options]" >&2; exit 2 ;;
	esac
done
. bench/lib.sh
bench_kernel "$kver"
outdir=${outdir:-build/$kver/bench-vm}

echo "bench/run.sh: building for $kver" >&2
bench_kmake -s modules KVER="$kver" >&2
make -s -C bench >&2
make -s vm-tests KVER="$kver" >&2	# vgpu_load, the busy neighbours
mtty_log=build/$kver/bench/mtty-build.log
mkdir -p "${mtty_log%/*}"
if ! bench_kmake -C bench mtty KVER="$kver" >"$mtty_log" 2>&1; then
	# run-guest.sh then reports the baseline as missing, with the reason
	echo "bench/run.sh: mtty did not build for $kver (see $mtty_log); no lifecycle baseline" >&2
	rm -f "build/$kver/bench/mtty/mtty.ko"
fi

args=""
for a in "$@"; do
	args+=" $(printf '%q' "$a")"
done
set +e
selftests/vm-run.sh -k "$kver" -o "$outdir" -a "$append" -t 1200 -T 1000 \
	--cmd "bench/run-guest.sh$args" >/dev/null
rc=$?
set -e

# The command's output comes back as "    # " diagnostics.
sed -n 's/^    # \(bench: .*\)$/\1/p' "$outdir/ktap.log" > "$outdir/bench.txt" || true
echo "== $kver, $(date -u +%Y-%m-%dT%H:%MZ) (guest output: $outdir/ktap.log)"
sed -n 's/^    # \(\(run-guest\|info\|note\): .*\)$/\1/p' "$outdir/ktap.log"
cat "$outdir/bench.txt"
grep -E '^(not ok|vm-run:)' "$outdir/ktap.log" || true
[ -s "$outdir/bench.txt" ] || echo "bench/run.sh: no bench lines; see $outdir/ktap.log" >&2
exit $rc
