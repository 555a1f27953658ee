#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The scale benchmark (bench/scale/README.md): builds the modules,
# gpuvirtctl, vgpu_bench, nl_bench and the kernel's mtty sample for KVER,
# boots the test VM with 4 GiB and runs bench/scale/run-guest.sh there.
#
# Usage: bench/scale/run.sh [-k KVER] [-o OUTDIR]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.1)
#   -o OUTDIR  vm-run's output directory (default: build/KVER/bench-scale);
#              the guest output is in OUTDIR/ktap.log, the bench lines
#              alone in OUTDIR/bench.txt
#
# Environment: SCALE_GPUS (64) and SCALE_ROUNDS (5) go to the guest;
# SCALE_PERF=1 adds cpu-clock profiles of the create path (gpuvirt's and
# mtty's, each alone) and of the dump at 2,049 vGPUs, with the guest's perf
# (linux-perf), into OUTDIR/profile.txt. They perturb nothing timed: they
# run after the timed rounds of their phase.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"

kver=6.1
outdir=""
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-h | --help) sed -n '3,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: bench/scale/run.sh [-k KVER] [-o OUTDIR]" >&2; exit 2 ;;
	esac
done
. bench/lib.sh
bench_kernel "$kver"
outdir=${outdir:-build/$kver/bench-scale}

bench_kmake -s modules KVER="$kver" >&2
make -s user >&2
make -s -C bench >&2
make -s -C bench/netlink >&2
mtty_log=build/$kver/bench/mtty-build.log
mkdir -p "${mtty_log%/*}"
if ! bench_kmake -C bench mtty KVER="$kver" >"$mtty_log" 2>&1; then
	echo "bench/scale/run.sh: mtty did not build for $kver (see $mtty_log); no lifecycle baseline" >&2
	rm -f "build/$kver/bench/mtty/mtty.ko"
fi

set +e
selftests/vm-run.sh -k "$kver" -o "$outdir" -m 4G -t 1800 -T 1700 \
	--cmd "SCALE_GPUS=${SCALE_GPUS:-64} SCALE_ROUNDS=${SCALE_ROUNDS:-5} SCALE_PERF=${SCALE_PERF:-0} bench/scale/run-guest.sh" >/dev/null
rc=$?
set -e
sed -n 's/^    # \(bench: .*\)$/\1/p' "$outdir/ktap.log" >"$outdir/bench.txt" || true
sed -n 's/^    # \(profile .*\)$/\1/p' "$outdir/ktap.log" >"$outdir/profile.txt" || true
echo "== $kver, $(date -u +%Y-%m-%dT%H:%MZ) (guest output: $outdir/ktap.log)"
sed -n 's/^    # \(run-guest: .*\)$/\1/p' "$outdir/ktap.log"
cat "$outdir/bench.txt"
[ -s "$outdir/profile.txt" ] && echo "profiles: $outdir/profile.txt"
grep -E '^(not ok|vm-run:)' "$outdir/ktap.log" || true
exit $rc
