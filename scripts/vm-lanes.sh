#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Which VM tests run where: selftests/vm/TESTS lists them, in the order a
# guest runs them; selftests/vm/LANES says on which kernels each runs in
# `make check` (a test it does not list runs on the default lane alone).
# scripts/check.sh and scripts/check-debug.sh ask here.
#
# Usage: scripts/vm-lanes.sh [--full] LANE    the tests of LANE, one a line,
#                                             in the order of TESTS
#        scripts/vm-lanes.sh --table          every test with its lanes
#        scripts/vm-lanes.sh --check          LANES names only tests of
#                                             TESTS, each with known lanes
# LANE is 6.1, 6.12, 7 (the newest 7.x, booted with the trixie root) or
# debug. --full: every test, whatever LANES says
# (make check-full).
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
TESTS=$SRC/selftests/vm/TESTS
LANES=$SRC/selftests/vm/LANES
KNOWN="6.1 6.12 7 debug full"
DEFAULT=6.12

die() {
	echo "vm-lanes: $*" >&2
	exit 2
}

# The lines of a list file without comments and blank lines.
entries() {
	sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$1"
}

full=0
[ "${1:-}" = --full ] && { full=1; shift; }
mode=${1:-}
[ -n "$mode" ] || die "usage: $0 [--full] LANE | --table | --check"

mapfile -t tests < <(entries "$TESTS")
declare -A lanes=()
if [ -r "$LANES" ]; then
	while read -r name rest; do
		lanes[$name]=$rest
	done < <(entries "$LANES")
fi

case $mode in
--check)
	bad=0
	declare -A listed=()
	for t in "${tests[@]}"; do listed[$t]=1; done
	for t in "${!lanes[@]}"; do
		if [ -z "${listed[$t]:-}" ]; then
			echo "vm-lanes: LANES names '$t', which selftests/vm/TESTS does not list" >&2
			bad=1
		fi
		[ -n "${lanes[$t]}" ] || { echo "vm-lanes: LANES gives '$t' no lane" >&2; bad=1; }
		for l in ${lanes[$t]}; do
			case " $KNOWN " in
			*" $l "*) ;;
			*) echo "vm-lanes: unknown lane '$l' for '$t' (known: $KNOWN)" >&2; bad=1 ;;
			esac
		done
	done
	exit $bad
	;;
--table)
	for t in "${tests[@]}"; do
		printf '%-28s %s\n' "$t" "${lanes[$t]:-$DEFAULT}"
	done
	;;
6.1|6.12|7|debug)
	for t in "${tests[@]}"; do
		if [ $full = 1 ]; then
			echo "$t"
			continue
		fi
		case " ${lanes[$t]:-$DEFAULT} " in
		*" $mode "*) echo "$t" ;;
		esac
	done
	;;
*) die "unknown lane '$mode' (known: $KNOWN)" ;;
esac
