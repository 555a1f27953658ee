#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The netlink benchmark: builds the modules, gpuvirtctl and nl_bench, runs
# bench/netlink/run-guest.sh in the test VM, and prints a table. Every
# figure that judges is a ratio to a trivial netlink request timed in the
# same run; absolute times are printed for reference only.
#
# Usage: bench/netlink/run.sh [-k KVER]
#
#   -k KVER    kernel release, or a line of scripts/kver.sh: 6.1, 6.12, or
#              13-6.12 and 7, which build and boot with the trixie root
#              (default: 6.1)
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
cd "$SRC"
[ "${1:-}" = -k ] || [ $# -eq 0 ] || { echo "usage: bench/netlink/run.sh [-k KVER]" >&2; exit 2; }
. bench/lib.sh
bench_kernel "${2:-6.1}"
out=build/bench-netlink

bench_kmake -s modules KVER="$kver" >&2
make -s user >&2
make -s -C bench/netlink >&2
set +e
selftests/vm-run.sh -k "$kver" -o "$out" -t 1800 -T 1500 \
	--cmd bench/netlink/run-guest.sh >/dev/null
rc=$?
set -e
grep -o 'bench: .*' "$out/ktap.log" >"$out/bench.txt" || true
cat "$out/bench.txt"
awk '
/nl_roundtrip_us/ { rt = $3 }
/nl_vgpu_dump/ { n = $4; ms = $6; r = $8 }
/ctl_100_create_destroy/ { s = $4; rr = $6; rc = $8; left = $10 }
END {
	print "| measure | value | ratio | goal |"
	print "|---|---|---|---|"
	printf "| trivial netlink round trip (gpu-get) | %s us | 1 | |\n", rt
	printf "| vgpu-get dump of %s vGPUs | %s ms | %s x round trip | <= 20 ms |\n", n, ms, r
	printf "| gpuvirtctl: 100 vGPUs created and destroyed | %s s | %s x round trip, %s x one gpuvirtctl run | <= 1 s (%s left) |\n", s, rr, rc, left
}' "$out/bench.txt"
exit $rc
