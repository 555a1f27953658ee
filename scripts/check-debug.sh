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
#   3. suite: every test of selftests/vm/TESTS, dealt round-robin to
#      GPUVIRT_DEBUG_SHARDS guests, with selftests/debug/after-test.sh after
#      each test (a kmemleak scan that fails on an unreferenced object of our
#      modules, and lockdep still on), then selftests/debug/final-check.sh;
#      the kernel log must stay clean (selftests/lib/logscan: WARNING, BUG,
#      KASAN, UBSAN, lockdep, ...);
#   4. fail-nth: selftests/debug/fail-nth.sh, its paths cut in as many
#      runs, in order;
#   5. races: selftests/debug/gv_races.c (lifetime and concurrency races,
#      bounded in time) in one more guest, then the same leak check.
# Each guest is single-threaded TCG, so up to GPUVIRT_DEBUG_JOBS guests (the
# number of CPUs) run at once; every guest has the whole test topology.
#
# Usage: scripts/check-debug.sh [suite] [fail-nth] [races]   (default: all)
# Environment:
#   GPUVIRT_DEBUG_TESTS='a b'      run these VM tests instead of selftests/vm/TESTS
#   GPUVIRT_DEBUG_FAILNTH='p q'    sweep only these gv_failnth paths
#   GPUVIRT_DEBUG_JOBS=N           guests at once (default: nproc)
#   GPUVIRT_DEBUG_SHARDS=N         guests the suite and the sweeps are split
#                                  over (default: GPUVIRT_DEBUG_JOBS)
#   GPUVIRT_DEBUG_TEST_TIMEOUT=S   per-test limit in the guest (default 900:
#                                  pt.sh takes about 400 s on this kernel)
#   GPUVIRT_DEBUG_RACE_SECONDS=S   time bound of each race (default 20)
#   GPUVIRT_FAILNTH_BUDGET=S       time bound of each fail-nth path (default
#                                  300; a path cut short is a failure)
#   GPUVIRT_DEBUG_MEM=SIZE         guest memory (default 1536M: enough with
#                                  KASAN's shadow, and kmemleak scans all of
#                                  it after every test, 2.4 times faster
#                                  than with 3G)
# Logs: build/<kver>/vm-debug-*/ and build/<kver>/vm-debug-*.log. Prints
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
if ! make -s modules test-modules KVER="$kver" KDIR="$dir/linux" >"$SRC/build/.check-debug-make.log" 2>&1 ||
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
timeout_s=${GPUVIRT_DEBUG_TEST_TIMEOUT:-900}
mem=${GPUVIRT_DEBUG_MEM:-1536M}

jobs_max=${GPUVIRT_DEBUG_JOBS:-$(nproc)}
shards=${GPUVIRT_DEBUG_SHARDS:-$jobs_max}
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
[ "$shards" -ge 1 ] 2>/dev/null || shards=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=()
outs=()

# launch NAME OUTDIR VM-RUN-ARGS...: one guest in the background, at most
# $jobs_max at a time; its result is collected after the last, in launch order.
launch() {
	local name=$1 out=$SRC/build/$kver/$2
	shift 2
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	names+=("$name")
	outs+=("$out")
	echo "check-debug: $name: started" >&2
	(
		s=$(date +%s)
		selftests/vm-run.sh -k "$kver" -o "$out" -m "$mem" "$@" >"$out.log" 2>&1
		rc=$?
		echo "$rc $(($(date +%s) - s))" >"$out.rc"
		echo "check-debug: $name: $(tail -n 1 "$out.log") ($(($(date +%s) - s)) s)" >&2
	) &
}

# deal N ITEM...: the items round-robin into N lists, printed one per line
deal() {
	local n=$1 i=0 j
	shift
	local lists=()
	for j in $(seq 0 $((n - 1))); do lists[j]=""; done
	for j in "$@"; do
		lists[i % n]+="$j "
		i=$((i + 1))
	done
	for j in $(seq 0 $((n - 1))); do
		[ -n "${lists[j]}" ] && echo "${lists[j]% }"
	done
}

# chunk N ITEM...: the items in N runs of about equal length, in order,
# one per line (fail-nth.sh scans for leaks once per run of a group)
chunk() {
	local n=$1 i=0 j len
	shift
	len=$((($# + n - 1) / n))
	for j in "$@"; do
		printf '%s' "$j"
		i=$((i + 1))
		if [ $((i % len)) -eq 0 ] || [ $i -eq $# ]; then echo; else printf ' '; fi
	done
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
		k=0
		while read -r -a shard; do
			k=$((k + 1))
			launch "vm-suite-$kver-$k" "vm-debug-$k" -t 5400 -T "$timeout_s" \
				--cmd selftests/debug/final-check.sh "${shard[@]}"
		done < <(deal "$shards" "${tests[@]}")
		;;
	fail-nth)
		if [ -n "${GPUVIRT_DEBUG_FAILNTH:-}" ]; then
			read -r -a fpaths <<<"$GPUVIRT_DEBUG_FAILNTH"
		else
			mapfile -t fpaths < <(build/user/selftests/debug/gv_failnth list | awk '{ print $1 }')
		fi
		k=0
		while read -r -a shard; do
			k=$((k + 1))
			launch "fail-nth-$kver-$k" "vm-debug-failnth-$k" -t 5400 -T 3600 \
				--cmd "GPUVIRT_FAILNTH_BUDGET=${GPUVIRT_FAILNTH_BUDGET:-300} selftests/debug/fail-nth.sh ${shard[*]}"
		done < <(chunk "$shards" "${fpaths[@]}")
		;;
	races)
		launch "races-$kver" vm-debug-races -t 1800 -T 1200 \
			--cmd "build/user/selftests/debug/gv_races -s ${GPUVIRT_DEBUG_RACE_SECONDS:-20} all"
		;;
	esac
done
wait

n=0
failed=0
body=$work/body
: >"$body"
for i in "${!names[@]}"; do
	n=$((n + 1))
	out=${outs[$i]}
	read -r rc secs <"$out.rc" 2>/dev/null || { rc=1; secs=?; }
	if [ -s "$out/ktap.log" ]; then
		sed 's/^/    /' "$out/ktap.log" >>"$body"
	fi
	tail -n 1 "$out.log" | sed 's/^/# /' >>"$body"
	if [ "$rc" = 0 ]; then
		echo "ok $n ${names[$i]} # $secs s" >>"$body"
	else
		echo "not ok $n ${names[$i]} # exit $rc, see ${out#"$SRC"/}" >>"$body"
		failed=$((failed + 1))
	fi
done

echo "TAP version 13"
echo "1..$n"
cat "$body"
echo "check-debug: took $(($(date +%s) - t0)) s" >&2
[ $failed -eq 0 ]
