#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a simulated GPU costs now that it is a PCI function in a PCI domain
# of its own (Documentation/backend.rst): boots the test VM and runs
# bench/sim_create/run-guest.sh there, which creates and deletes GPUs in
# rounds and reports, side by side in one run, the time per GPU against the
# time per vGPU created on it, and the kernel memory per GPU.
#
# Usage: bench/sim_create/run.sh [-k KVER] [-o OUTDIR]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.1)
#   -o OUTDIR  vm-run's output directory (default: build/KVER/bench-sim-create);
#              the bench lines alone are in OUTDIR/bench.txt
#
# Environment: SIM_GPUS (50) and SIM_ROUNDS (3) go to the guest.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"

kver=6.1
outdir=""
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-h | --help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: bench/sim_create/run.sh [-k KVER] [-o OUTDIR]" >&2; exit 2 ;;
	esac
done
. bench/lib.sh
bench_kernel "$kver"
outdir=${outdir:-build/$kver/bench-sim-create}

bench_kmake -s modules KVER="$kver" >&2
set +e
selftests/vm-run.sh -k "$kver" -o "$outdir" -t 600 -T 500 \
	--cmd "SIM_GPUS=${SIM_GPUS:-50} SIM_ROUNDS=${SIM_ROUNDS:-3} bench/sim_create/run-guest.sh" >/dev/null
rc=$?
set -e
grep -o 'bench: .*' "$outdir/ktap.log" | tee "$outdir/bench.txt"
exit $rc
