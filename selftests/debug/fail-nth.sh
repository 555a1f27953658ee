#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fault-injection sweeps of the debug-kernel lane, run in the guest by
# scripts/check-debug.sh (vm-run.sh --cmd). For each path of gv_failnth
# (selftests/debug/gv_failnth.c): the sweep, then a wait of 6 s (kmemleak's
# minimum object age) and selftests/debug/after-test.sh, so that a leak or
# a lockdep shutdown is blamed on the path that caused it.
#
# Usage: selftests/debug/fail-nth.sh [PATH...]   (default: every path)
# GPUVIRT_FAILNTH_BUDGET=S bounds each path's sweep to S seconds (default
# 300); a sweep cut short says "partial" and how far it got.
# Prints KTAP: one test per path, "# N points" in its description.
set -uo pipefail

bin=${GPUVIRT_BIN:-build/user}/selftests/debug/gv_failnth
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP $bin not built (make debug-tests)"
	exit 4
fi
if [ ! -e /proc/self/fail-nth ]; then
	echo "1..0 # SKIP no /proc/self/fail-nth (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit 4
fi
if [ $# -gt 0 ]; then
	paths=("$@")
else
	mapfile -t paths < <("$bin" list | awk '{ print $1 }')
fi

echo "TAP version 13"
echo "1..${#paths[@]}"
n=0
failed=0
total=0
t0=$(date +%s)
for p in "${paths[@]}"; do
	n=$((n + 1))
	s=$(date +%s)
	out=$("$bin" -t "${GPUVIRT_FAILNTH_BUDGET:-300}" "$p" 2>&1)
	src=$?
	grep '^#' <<<"$out"
	pts=$(sed -n 's/^\(not \)\{0,1\}ok 1 .* # \([0-9]*\) points.*$/\2/p' <<<"$out")
	part=$(grep -q '^ok 1 .* points (partial)' <<<"$out" && echo ", partial" || true)
	total=$((total + ${pts:-0}))
	sleep 6
	aout=$(selftests/debug/after-test.sh "$n" "fail-nth $p" 2>&1)
	arc=$?
	sed 's/^/# after: /' <<<"$aout"
	if [ $src -eq 0 ] && [ $arc -eq 0 ]; then
		echo "ok $n $p # ${pts:-?} points${part}, $(($(date +%s) - s)) s"
	else
		echo "not ok $n $p # ${pts:-?} points, sweep exit $src, leak/lockdep check exit $arc"
		failed=$((failed + 1))
	fi
done
echo "# fail-nth: ${total} injection points over ${#paths[@]} paths in $(($(date +%s) - t0)) s"
[ $failed -eq 0 ]
