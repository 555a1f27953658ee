#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check-debug: the lifetime, locking and fault tests on the debug kernel
# (KASAN, lockdep, kmemleak, failslab/fail_page_alloc; see
# selftests/config.debug). `make check` runs it as its debug steps; with
# --full (make check-full) it runs everything there is on that kernel.
#
#   1. scripts/debug-kernel.sh builds the kernel, or reuses the cached one;
#   2. our modules are built against its tree (make modules KDIR=...), and
#      the test programs (make user vm-tests debug-tests); with --full also
#      the modules before vgpu-get's omit (make skew-modules), which
#      gpuvirtctl_skew.sh loads;
#   3. suite: the VM tests of the debug lane (scripts/vm-lanes.sh debug:
#      those that selftests/vm/LANES puts there, the tests of lifetimes,
#      teardown, concurrency and hostile input; --full: every test of
#      selftests/vm/TESTS), dealt to GPUVIRT_DEBUG_SHARDS guests, with
#      selftests/debug/after-test.sh after each test (lockdep still on;
#      with --full also a kmemleak scan that fails on an unreferenced
#      object of our modules), then selftests/debug/final-check.sh and that
#      scan; the kernel log must stay clean (selftests/lib/logscan: WARNING,
#      BUG, KASAN, UBSAN, lockdep...);
#   4. fail-nth: selftests/debug/fail-nth.sh over gv_failnth's paths, dealt
#      to as many guests. Without --full, a sample: the points n with
#      n % K == SEED % K of every path (K = GPUVIRT_FAILNTH_K, default 12),
#      where SEED comes from the commit, so that K consecutive commits
#      sweep every point; FAILNTH_SEED=N replays a run. --full sweeps every
#      point, in runs cut in order (a leak check after each group of paths);
#   5. commands: selftests/debug/COMMANDS (the lifetime races of
#      selftests/debug/gv_races.c, fuzzers...), the "check" line of each,
#      or with --full the "full" one, in one more guest, each followed by
#      the leak check.
# Each guest is single-threaded TCG, so up to GPUVIRT_DEBUG_JOBS guests (the
# number of CPUs) run at once; every guest has the whole test topology.
#
# Usage: scripts/check-debug.sh [--full] [--no-build] [PART[:I/N]...]
#        scripts/check-debug.sh [--full] --build-only
#        scripts/check-debug.sh --seed
#   PART       suite, fail-nth or commands (races: the races command
#              alone); default: all three. PART:I/N runs the I-th of N
#              shards of PART only (scripts/check.sh gives each its slot).
#   --no-build the kernel must be cached and our modules and programs built
#              (--build-only did it)
#   --seed     print the fail-nth seed and where it comes from, and exit
# Environment:
#   FAILNTH_SEED=N                 seed of the fail-nth sample (default: the
#                                  number of commits up to HEAD; outside a
#                                  git tree, the number of days since 1970)
#   GPUVIRT_FAILNTH_K=K            sample 1 point in K (default 12; 1 sweeps
#                                  them all, as --full does)
#   GPUVIRT_DEBUG_TESTS='a b'      run these VM tests instead of the lane's
#   GPUVIRT_DEBUG_FAILNTH='p q'    sweep only these gv_failnth paths
#   GPUVIRT_DEBUG_COMMANDS='a b'   run only these commands of COMMANDS
#   GPUVIRT_DEBUG_JOBS=N           guests at once (default: nproc)
#   GPUVIRT_DEBUG_SHARDS=N         guests the suite and the sweeps are dealt
#                                  to (default: GPUVIRT_DEBUG_JOBS)
#   GPUVIRT_DEBUG_TEST_TIMEOUT=S   per-test limit in the guest (default 900:
#                                  pt.sh takes about 400 s on this kernel)
#   GPUVIRT_DEBUG_RACE_SECONDS=S   time bound of each race (default 10;
#                                  --full: 60)
#   GPUVIRT_FAILNTH_BUDGET=S       time bound of each fail-nth path (default
#                                  300; --full: 1800; a path cut short is a
#                                  failure)
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

die() {
	echo "check-debug: $*" >&2
	exit 1
}

full=0
build=1
build_only=0
parts=()
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1 ;;
	--no-build) build=0 ;;
	--build-only) build_only=1 ;;
	--seed) parts=(--seed) ; break ;;
	-h|--help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "check-debug: unknown option '$1'" >&2; exit 2 ;;
	*) parts+=("$1") ;;
	esac
	shift
done

# The seed of the fail-nth sample, and where it came from: FAILNTH_SEED,
# else the number of commits up to HEAD (consecutive commits, consecutive
# seeds: K of them cover every point), else the day.
seed_of_run() {
	local n c
	if [ -n "${FAILNTH_SEED:-}" ]; then
		[[ $FAILNTH_SEED =~ ^[0-9]+$ ]] || die "FAILNTH_SEED wants a number, not '$FAILNTH_SEED'"
		echo "$((10#$FAILNTH_SEED)) given"
	elif n=$(git -C "$SRC" rev-list --count HEAD 2>/dev/null) &&
		c=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null); then
		echo "$n commit $c, the $n-th"
	else
		echo "$(($(date +%s) / 86400)) not a git tree: the day"
	fi
}
read -r seed seed_why < <(seed_of_run)
if [ "${parts[0]:-}" = --seed ]; then
	echo "$seed $seed_why"
	exit 0
fi
fk=${GPUVIRT_FAILNTH_K:-12}
[ $full = 1 ] && fk=1
[[ $fk =~ ^[1-9][0-9]*$ ]] || die "GPUVIRT_FAILNTH_K wants a number >= 1, not '$fk'"

[ ${#parts[@]} -gt 0 ] || parts=(suite fail-nth commands)
for p in "${parts[@]}"; do
	case ${p%%:*} in
	suite|fail-nth|commands|races) ;;
	*) echo "check-debug: unknown part '$p' (suite fail-nth commands races)" >&2; exit 2 ;;
	esac
	case $p in
	*:*)
		sh=${p#*:}
		[[ $sh =~ ^[1-9][0-9]*/[1-9][0-9]*$ ]] && [ "${sh%/*}" -le "${sh#*/}" ] ||
			die "bad shard in '$p' (want PART:I/N, 1 <= I <= N)"
		;;
	esac
done

s=$(date +%s)
if [ $build = 1 ]; then
	dir=$(scripts/debug-kernel.sh) || die "no debug kernel"
else
	read -r state dir < <(scripts/debug-kernel.sh --status) || true
	[ "${state:-}" = cached ] || die "the debug kernel is not built (scripts/debug-kernel.sh)"
fi
kver=$(cat "$dir/kver")
echo "check-debug: kernel $kver from $dir ($(($(date +%s) - s)) s)" >&2

if [ $build = 1 ]; then
	s=$(date +%s)
	log=$SRC/build/.check-debug-make.log
	mkdir -p "$SRC/build"
	if ! make -s modules test-modules KVER="$kver" KDIR="$dir/linux" >"$log" 2>&1 ||
		! make -s user vm-tests debug-tests >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "the build failed"
	fi
	# without them (a clone without the commit) the rest runs, and
	# gpuvirtctl_skew.sh fails saying why
	if [ $full = 1 ] && ! make -s skew-modules KVER="$kver" KDIR="$dir/linux" >>"$log" 2>&1; then
		tail -n 5 "$log" >&2
		echo "check-debug: the modules before omit did not build: gpuvirtctl_skew.sh will fail" >&2
	fi
	echo "check-debug: modules and tests built ($(($(date +%s) - s)) s)" >&2
fi
[ $build_only = 1 ] && exit 0

export GPUVIRT_VM_KERNEL=$dir/bzImage
export GPUVIRT_VM_MODDIR=$dir/root/lib/modules/$kver
# After each test: lockdep still on, and two kmemleak scans (15 to 35 s
# under TCG). make check scans once per guest instead, after its last test
# (final-check.sh in the suite; the sweeps and the commands check for
# leaks themselves), and check-full after every test, so that a leak is
# blamed on the test that made it.
# shellcheck disable=SC2016 # expanded by the guest's bash -c
after_each='selftests/debug/after-test.sh "$1" "$2"'
# shellcheck disable=SC2016
after_lockdep='selftests/debug/after-test.sh --lockdep-only "$1" "$2"'
# shellcheck disable=SC2016
after_last='if [ "$2" = cmd ]; then selftests/debug/after-test.sh "$1" "$2"; else selftests/debug/after-test.sh --lockdep-only "$1" "$2"; fi'
timeout_s=${GPUVIRT_DEBUG_TEST_TIMEOUT:-900}
mem=${GPUVIRT_DEBUG_MEM:-1536M}

jobs_max=${GPUVIRT_DEBUG_JOBS:-$(nproc)}
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
shards=${GPUVIRT_DEBUG_SHARDS:-$jobs_max}
[ "$shards" -ge 1 ] 2>/dev/null || shards=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
names=()
outs=()

# launch NAME OUTDIR AFTER VM-RUN-ARGS...: one guest in the background, at
# most $jobs_max at a time, running AFTER after each test; its result is
# collected after the last, in launch order.
launch() {
	local name=$1 out=$SRC/build/$kver/$2 after=$3
	shift 3
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	names+=("$name")
	outs+=("$out")
	echo "check-debug: $name: started" >&2
	(
		s=$(date +%s)
		GPUVIRT_VM_AFTER_TEST=$after \
			selftests/vm-run.sh -k "$kver" -o "$out" -m "$mem" "$@" >"$out.log" 2>&1
		rc=$?
		echo "$rc $(($(date +%s) - s))" >"$out.rc"
		echo "check-debug: $name: $(tail -n 1 "$out.log") ($(($(date +%s) - s)) s)" >&2
	) &
}

# deal N ITEM...: the items round-robin into N lists, printed one per line
# (the items of each list keep their order)
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
		echo "${lists[j]% }"
	done
}

# chunk N ITEM...: the items in N runs of about equal length, in order,
# one per line (a full sweep checks for leaks once per group of paths)
chunk() {
	local n=$1 i=0 j len
	shift
	len=$((($# + n - 1) / n))
	for j in "$@"; do
		printf '%s' "$j"
		i=$((i + 1))
		if [ $((i % len)) -eq 0 ] || [ $i -eq $# ]; then echo; else printf ' '; fi
	done
	for ((j = (($# + len - 1) / len); j < n; j++)); do echo; done
}

# shards_of PART: "K N" (all N shards, K = 0) or "I N" (shard I of N only)
shards_of() {
	case $1 in
	*:*) local s=${1#*:}; echo "${s%/*} ${s#*/}" ;;
	*) echo "0 $shards" ;;
	esac
}

mkdir -p "build/$kver"
tier=check
[ $full = 1 ] && tier=full
for p in "${parts[@]}"; do
	read -r only nsh < <(shards_of "$p")
	case ${p%%:*} in
	suite)
		if [ -n "${GPUVIRT_DEBUG_TESTS:-}" ]; then
			read -r -a tests <<<"$GPUVIRT_DEBUG_TESTS"
		elif [ $full = 1 ]; then
			mapfile -t tests < <(scripts/vm-lanes.sh --full debug)
		else
			mapfile -t tests < <(scripts/vm-lanes.sh debug)
		fi
		k=0
		while read -r -a shard; do
			k=$((k + 1))
			[ "$only" = 0 ] || [ "$only" = $k ] || continue
			[ ${#shard[@]} -gt 0 ] || continue
			after=$after_last
			[ $full = 1 ] && after=$after_each
			launch "vm-suite-$kver-$k" "vm-debug-$k" "$after" -t 5400 -T "$timeout_s" \
				--cmd selftests/debug/final-check.sh "${shard[@]}"
		done < <(deal "$nsh" "${tests[@]}")
		;;
	fail-nth)
		if [ -n "${GPUVIRT_DEBUG_FAILNTH:-}" ]; then
			read -r -a fpaths <<<"$GPUVIRT_DEBUG_FAILNTH"
		else
			mapfile -t fpaths < <(build/user/selftests/debug/gv_failnth list | awk '{ print $1 }')
		fi
		# A path's whole sweep (--full) has up to 8 times the points of
		# a sample: its bound, a hang detector, grows with it.
		fb=300
		[ $full = 1 ] && fb=1800
		env=(GPUVIRT_FAILNTH_BUDGET="${GPUVIRT_FAILNTH_BUDGET:-$fb}")
		if [ "$fk" -gt 1 ]; then
			env+=(GPUVIRT_FAILNTH_SAMPLE="$fk:$((seed % fk))" GPUVIRT_FAILNTH_SEED="$seed")
			echo "check-debug: fail-nth seed $seed ($seed_why): the points n with n % $fk == $((seed % fk)); replay: make check-debug FAILNTH_SEED=$seed" >&2
			cut=deal
		else
			cut=chunk
		fi
		k=0
		while read -r -a shard; do
			k=$((k + 1))
			[ "$only" = 0 ] || [ "$only" = $k ] || continue
			[ ${#shard[@]} -gt 0 ] || continue
			launch "fail-nth-$kver-$k" "vm-debug-failnth-$k" "$after_lockdep" -t 5400 -T 3600 \
				--cmd "${env[*]} selftests/debug/fail-nth.sh ${shard[*]}"
		done < <($cut "$nsh" "${fpaths[@]}")
		;;
	commands|races)
		if [ "${p%%:*}" = races ]; then
			cmds=(races)
		elif [ -n "${GPUVIRT_DEBUG_COMMANDS:-}" ]; then
			read -r -a cmds <<<"$GPUVIRT_DEBUG_COMMANDS"
		else
			# the names with a line of this tier (check-full: any line)
			mapfile -t cmds < <(sed -e 's/^[[:space:]]*#.*//' selftests/debug/COMMANDS |
				awk -v full=$full 'NF >= 3 && (full || $1 == "check") && !seen[$2]++ { print $2 }')
		fi
		# the commands are one guest unless a shard is asked for
		[ "$only" = 0 ] && nsh=1
		env=(GPUVIRT_SEED="$seed")
		[ -z "${GPUVIRT_DEBUG_RACE_SECONDS:-}" ] ||
			env+=(GPUVIRT_DEBUG_RACE_SECONDS="$GPUVIRT_DEBUG_RACE_SECONDS")
		flag=
		[ $full = 1 ] && flag=--full
		k=0
		while read -r -a shard; do
			k=$((k + 1))
			[ "$only" = 0 ] || [ "$only" = $k ] || continue
			[ ${#shard[@]} -gt 0 ] || continue
			launch "commands-$kver-$k" "vm-debug-commands-$k" "$after_lockdep" -t 5400 -T 3600 \
				--cmd "${env[*]} selftests/debug/commands.sh $flag ${shard[*]}"
		done < <(deal "$nsh" "${cmds[@]}")
		;;
	esac
done
wait

n=0
failed=0
body=$work/body
: >"$body"
if [ "$fk" -gt 1 ]; then
	echo "# fail-nth seed $seed ($seed_why): sample 1 point in $fk; replay: make check-debug FAILNTH_SEED=$seed" >>"$body"
fi
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
echo "check-debug: took $(($(date +%s) - t0)) s ($tier)" >&2
[ $failed -eq 0 ]
