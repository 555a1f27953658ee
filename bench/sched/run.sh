#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The scheduler benchmark: the policy alone on the host, in virtual time
# (bench/sched/policy_sim), then the real scheduler in the test VM with
# real VFIO clients (bench/sched/run-guest.sh), printed as one table:
#
#   | measure | run in | value | goal | met |
#
# Usage: bash bench/sched/run.sh [-k KVER] [-o OUTDIR] [-w WINDOW_S]
#                                [-a 'KERNEL ARGS'] [--host-only | --vm-only]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.1)
#   -o OUTDIR  vm-run's output directory (default: build/bench-sched); the
#              guest's whole output is in OUTDIR/ktap.log, the table in
#              OUTDIR/table.md, and beside it OUTDIR/shares.svg, each
#              vGPU's share over time under every policy with a noisy
#              neighbour coming and going (policy_sim -g)
#   -w SECONDS measuring window of each VM measure (default 10)
#   -a ARGS    extra guest kernel command line, e.g. 'clocksource=tsc
#              tsc=reliable' (the 6.1 guest picks hpet by itself, and
#              every clock read is then an emulated HPET access)
#
# Every value is a ratio measured within one run (see bench/sched/README.md);
# nothing here is an absolute timing. Exit status: 0 when everything ran,
# whether or not each goal was met; 1 when a part failed to run.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"

kver=6.1
outdir=build/bench-sched
append=""
window=10
host=1
vm=1
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-a) append=${2?-a needs kernel arguments}; shift 2 ;;
	-w) window=${2:?-w needs seconds}; shift 2 ;;
	--host-only) vm=0; shift ;;
	--vm-only) host=0; shift ;;
	-h|--help) sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "usage: bench/sched/run.sh [-k KVER] [-o OUTDIR] [-w WINDOW_S] [--host-only | --vm-only]" >&2
	   exit 2 ;;
	esac
done
case $window in
''|*[!0-9]*|0) echo "bench/sched/run.sh: -w wants a positive number of seconds" >&2; exit 2 ;;
esac
. bench/lib.sh
bench_kernel "$kver"
mkdir -p "$outdir"
rows=$outdir/rows.tsv
: >"$rows"
rc=0

# ---- host: the policy in virtual time ----
if [ $host -eq 1 ]; then
	echo "bench/sched: building and running policy_sim" >&2
	if [ ! -e bench/sched/Makefile ]; then
		echo "bench/sched: no bench/sched/Makefile: no policy_sim rows" >&2
		rc=1
	elif ! make -s -C bench/sched >&2; then
		echo "bench/sched: policy_sim did not build" >&2
		rc=1
	else
		sim=""
		for f in build/bench/sched/policy_sim bench/sched/policy_sim; do
			[ -x "$f" ] && { sim=$f; break; }
		done
		if [ -z "$sim" ]; then
			echo "bench/sched: policy_sim built, but where to?" >&2
			rc=1
		elif ! "$sim" -g "$outdir/shares.svg" >"$outdir/policy_sim.out"; then
			echo "bench/sched: $sim failed; its output is in $outdir/policy_sim.out" >&2
			rc=1
		fi
		grep -P '^row\t' "$outdir/policy_sim.out" >>"$rows" || true
	fi
fi

# ---- VM: the real scheduler with real clients ----
if [ $vm -eq 1 ]; then
	echo "bench/sched: building for $kver" >&2
	bench_kmake -s modules KVER="$kver" >&2
	make -s user vm-tests KVER="$kver" >&2
	set +e
	selftests/vm-run.sh -k "$kver" -o "$outdir" -a "$append" -t 900 -T 800 \
		--cmd "bench/sched/run-guest.sh $window" >/dev/null
	vrc=$?
	set -e
	# The command's output comes back as "    # " diagnostics.
	sed -n 's/^    # \(note: .*\)$/\1/p' "$outdir/ktap.log" >&2 || true
	grep -P '^    # row\t' "$outdir/ktap.log" | sed 's/^    # //' >>"$rows" || true
	if [ $vrc -ne 0 ]; then
		echo "bench/sched: the VM part failed (vm-run exit $vrc); see $outdir/ktap.log" >&2
		grep -E '^(not ok|vm-run:)' "$outdir/ktap.log" >&2 || true
		rc=1
	fi
fi

# ---- the table ----
{
	echo "| measure | run in | value | goal | met |"
	echo "|---|---|---|---|---|"
	awk -F'\t' '{ for (i = 2; i <= 6; i++) gsub(/\|/, "\\|", $i)
		printf "| %s | %s | %s | %s | %s |\n", $2, $3, $4, $5, $6 }' "$rows"
} >"$outdir/table.md"
echo "== scheduler benchmark, $kver, $(date -u +%Y-%m-%dT%H:%MZ)"
cat "$outdir/table.md"
# rows whose goal is "info" only inform
n=$(awk -F'\t' '$6 != "info"' "$rows" | wc -l)
met=$(awk -F'\t' '$6 == "yes"' "$rows" | wc -l)
echo "$met of $n goals met"
[ ! -s "$outdir/shares.svg" ] || {
	grep '^note: timeline' "$outdir/policy_sim.out" || true
	echo "shares over time: $outdir/shares.svg"
}
exit $rc
