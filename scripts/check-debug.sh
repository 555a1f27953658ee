#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-debug: the VM suite and the fault-injection sweeps on the debug
# kernel (KASAN, lockdep, kmemleak, failslab/fail_page_alloc; see
# selftests/config.debug).
#
#   1. scripts/debug-kernel.sh builds the kernel, or reuses the cached one;
#   2. our modules are built against its tree (make modules KDIR=...), and
#      the test programs (make user vm-tests debug-tests);
#   3. suite: every test of selftests/vm/TESTS in one guest, with
#      selftests/debug/after-test.sh after each (a kmemleak scan that fails on
#      an unreferenced object of our modules, and lockdep still on), then
#      selftests/debug/final-check.sh; the kernel log must stay clean
#      (selftests/lib/logscan: WARNING, BUG, KASAN, UBSAN, lockdep, ...);
#   4. fail-nth: selftests/debug/fail-nth.sh in a second guest;
#   5. races: selftests/debug/gv_races.c (lifetime and concurrency races,
#      bounded in time) in a third guest, then the same leak check.
#
# Usage: scripts/check-debug.sh [suite] [fail-nth] [races]   (default: all)
# Environment:
#   GPUVIRT_DEBUG_TESTS='a b'      run these VM tests instead of selftests/vm/TESTS
#   GPUVIRT_DEBUG_FAILNTH='p q'    sweep only these gv_failnth paths
#   GPUVIRT_DEBUG_TEST_TIMEOUT=S   per-test limit in the guest (default 360)
#   GPUVIRT_DEBUG_RACE_SECONDS=S   time bound of each race (default 20)
#   GPUVIRT_FAILNTH_BUDGET=S       time bound of each fail-nth path (default
#                                  45; a path cut short is reported "partial")
#   GPUVIRT_DEBUG_MEM=SIZE         guest memory (default 3G; KASAN's shadow
#                                  takes an eighth)
# Logs: build/<kver>/vm-debug/ and build/<kver>/vm-debug-failnth/. Prints
# KTAP; exit status 0 only if everything passed.
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$SRC" || exit 1
t0=$(date +%s)

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(suite fail-nth races)
for p in "${parts[@]}"; do
	case $p in
	suite|fail-nth|races) ;;
	*) echo "check-debug: unknown part '$p' (suite fail-nth races)" >&2; exit 2 ;;
	esac
done

s=$(date +%s)
dir=$(scripts/debug-kernel.sh) || { echo "check-debug: no debug kernel" >&2; exit 1; }
kver=$(cat "$dir/kver")
echo "check-debug: kernel $kver from $dir ($(($(date +%s) - s)) s)" >&2

s=$(date +%s)
if ! make -s modules KVER="$kver" KDIR="$dir/linux" >"$SRC/build/.check-debug-make.log" 2>&1 ||
	! make -s user vm-tests debug-tests >>"$SRC/build/.check-debug-make.log" 2>&1; then
	tail -n 30 "$SRC/build/.check-debug-make.log" >&2
	echo "check-debug: the build failed" >&2
	exit 1
fi
echo "check-debug: modules and tests built ($(($(date +%s) - s)) s)" >&2

export GPUVIRT_VM_KERNEL=$dir/bzImage
export GPUVIRT_VM_MODDIR=$dir/root/lib/modules/$kver
# shellcheck disable=SC2016 # expanded by the guest's bash -c
export GPUVIRT_VM_AFTER_TEST='selftests/debug/after-test.sh "$1" "$2"'
timeout_s=${GPUVIRT_DEBUG_TEST_TIMEOUT:-360}
mem=${GPUVIRT_DEBUG_MEM:-3G}

body=$(mktemp)
trap 'rm -f "$body"' EXIT
n=0
failed=0

# run NAME VM-RUN-ARGS...: one vm-run, nested as one KTAP test.
run() {
	local name=$1 out=$SRC/build/$kver/$2 rc s
	shift 2
	n=$((n + 1))
	s=$(date +%s)
	selftests/vm-run.sh -k "$kver" -o "$out" -m "$mem" "$@" >"$out.log" 2>&1
	rc=$?
	if [ -s "$out/ktap.log" ]; then
		sed 's/^/    /' "$out/ktap.log" >>"$body"
	fi
	tail -n 1 "$out.log" | sed 's/^/# /' >>"$body"
	echo "check-debug: $name: $(tail -n 1 "$out.log") ($(($(date +%s) - s)) s)" >&2
	if [ $rc -eq 0 ]; then
		echo "ok $n $name # $(($(date +%s) - s)) s" >>"$body"
	else
		echo "not ok $n $name # exit $rc, see ${out#"$SRC"/}" >>"$body"
		failed=$((failed + 1))
	fi
}

mkdir -p "build/$kver"
for p in "${parts[@]}"; do
	case $p in
	suite)
		if [ -n "${GPUVIRT_DEBUG_TESTS:-}" ]; then
			read -r -a tests <<<"$GPUVIRT_DEBUG_TESTS"
		else
			mapfile -t tests < <(sed -e 's/#.*//' -e 's/^[[:space:]]*//' \
				-e 's/[[:space:]]*$//' -e '/^$/d' selftests/vm/TESTS)
		fi
		run "vm-suite-$kver" vm-debug -t 5400 -T "$timeout_s" \
			--cmd selftests/debug/final-check.sh "${tests[@]}"
		;;
	fail-nth)
		run "fail-nth-$kver" vm-debug-failnth -t 5400 -T 3600 \
			--cmd "GPUVIRT_FAILNTH_BUDGET=${GPUVIRT_FAILNTH_BUDGET:-45} selftests/debug/fail-nth.sh ${GPUVIRT_DEBUG_FAILNTH:-}"
		;;
	races)
		run "races-$kver" vm-debug-races -t 1800 -T 1200 \
			--cmd "build/user/selftests/debug/gv_races -s ${GPUVIRT_DEBUG_RACE_SECONDS:-20} all"
		;;
	esac
done

echo "TAP version 13"
echo "1..$n"
cat "$body"
echo "check-debug: took $(($(date +%s) - t0)) s" >&2
[ $failed -eq 0 ]
