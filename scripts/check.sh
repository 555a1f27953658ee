#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every test of the project, on a fresh Debian 12 machine, in
# about 30 minutes on 2 cores once the debug kernel and the trixie root are
# cached (a fresh machine builds both first: Documentation/testing.rst,
# "Tiers, lanes and the budget"). Installs what is missing (as root), then
# runs these groups of steps (Documentation/testing.rst, "Tiers"):
#
#   unit     host-side unit tests of the pure-logic files and of gpuvirtctl
#   style    checkpatch --strict on kernel/, cppcheck on user/, the netlink
#            code generated from the spec is up to date
#   build    modules for each kernel with W=1 and sparse (C=2), no warnings
#   vm       the VM suite on Debian's 6.1 and 6.12: each test on the kernels
#            selftests/vm/LANES gives it (scripts/vm-lanes.sh), one guest
#            per kernel
#   runner   the VM runner fails when it must (selftests/runner-selftest.sh)
#   dkms     dkms add, build and remove against both kernels' headers
#            (check-full, or by name: in make check, the package step
#            has DKMS build, install and remove the modules for both)
#   package  the Debian packages: build, lintian, install (DKMS builds for
#            both kernels), modprobe and apply in the VM on each, purge
#            (scripts/check-package.sh)
#   debug    the debug lane on a KASAN/lockdep/kmemleak kernel built from
#            linux-source-6.12 (scripts/check-debug.sh): the VM tests of
#            lifetimes, teardown, concurrency and hostile input, a sample of
#            the fail-nth sweeps (seeded by the commit; FAILNTH_SEED=N
#            replays one) and the commands of selftests/debug/COMMANDS (the
#            races). The first run on a machine builds that kernel: at the
#            lowest priority, in the background from the start, so that it
#            takes the CPU the other steps leave idle. GPUVIRT_CHECK_DEBUG=0
#            skips the lane (reported as skipped)
#   fuzz     a 10 s libFuzzer smoke run of each harness in fuzz/ (make fuzz)
#   trixie   Debian 13: in its root (scripts/trixie-root.sh, cached; the
#            first run builds it in the background, like the debug
#            kernel), the modules for trixie's 6.12 and the newest 7.x with
#            gcc-14, W=1 and sparse; and the VM tests that LANES puts on
#            lane 7, on the newest 7.x booted with that root (its QEMU,
#            libvirt and udev in the guest); and the Debian packages
#            built, linted, installed (DKMS for both kernels), booted on 7.x
#            and purged there (scripts/check-package.sh --trixie)
#
# With --full (make check-full), every VM test runs on every kernel (6.1,
# 6.12, 7.x and the debug kernel), the fail-nth sweeps sweep every point, and
# the races and fuzzers run their full length.
#
# The steps run on GPUVIRT_CHECK_JOBS slots (default: the number of CPUs; a
# guest is one TCG thread, so one slot each), critical path first: a step's
# weight is its budget plus that of the longest chain of steps waiting for
# it. A step waits for the steps it needs (and fails, not run, when one of
# them failed); steps that share a build directory or DKMS take turns.
#
# Each step is one KTAP test; steps that print KTAP nest their results, and
# the leaves are what is counted. Each step has a budget in seconds, given
# beside it below (the basis of each is in testing.rst, "Budget"); a step
# that takes longer is named in a warning, which does not fail the run. At
# the end, a table of the steps (step, budget, seconds, passed, failed,
# skipped) is printed and written to build/check-times.txt
# (build/check-full-times.txt with --full). Logs go to build/check/ (or
# build/check-full/). The last line is "N passed, N failed, N skipped"; the
# exit status is 1 if anything failed.
#
# Usage: scripts/check.sh [--full] [STEP...]
#   STEP is a group above or the name of a step (vm-6.1, debug-failnth-2,
#   ...; the steps it needs come along); default: every group.
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$SRC" || exit 1

full=0
if [ "${1:-}" = --full ]; then
	full=1
	shift
fi
if [ $full = 1 ]; then
	OUT=$SRC/build/check-full
	TIMES=$SRC/build/check-full-times.txt
else
	OUT=$SRC/build/check
	TIMES=$SRC/build/check-times.txt
fi
KTAP=$OUT/check.ktap
GROUPS_ALL=(unit style build vm runner dkms package debug fuzz trixie)
# make check leaves dkms to the package step, which makes DKMS build,
# install and remove the modules for both kernels too
GROUPS_CHECK=(unit style build vm runner package debug fuzz trixie)

t0=$(date +%s)
rm -rf "$OUT"
mkdir -p "$OUT/logs" "$OUT/state" "$OUT/ktap"

# The debug kernel (step debug-kernel), when a debug step is to run and the
# cache does not have it: built in the background from the start, at the
# lowest priority, taking no slot. On a fresh machine its own few packages
# go in first, so that it compiles while apt fetches and unpacks the rest.
debug_wanted=0
if [ "${GPUVIRT_CHECK_DEBUG:-1}" != 0 ]; then
	for s in "${@:-debug}"; do
		case $s in debug|debug-*) debug_wanted=1 ;; esac
	done
fi
# bg_start NAME CMD...: the step NAME, run now in the background at the
# lowest priority and taking no slot; it leaves "RC SECONDS" in state/NAME.
declare -A bg_pid=()
bg_start() {
	local name=$1
	shift
	(
		s=$(date +%s)
		nice -n 19 "$@" >"$OUT/logs/$name.log" 2>&1
		r=$?
		echo "$r $(($(date +%s) - s))" >"$OUT/state/$name"
	) &
	bg_pid[$name]=$!
}
dk_pkgs=(build-essential bc flex bison libelf-dev libssl-dev xz-utils linux-source-6.12)
if [ $debug_wanted = 1 ] && ! scripts/debug-kernel.sh --status >/dev/null 2>&1; then
	if [ "$(id -u)" -eq 0 ] && ! dpkg-query -W -f='${Status}\n' "${dk_pkgs[@]}" 2>/dev/null |
		grep -c 'install ok installed' | grep -qx "${#dk_pkgs[@]}"; then
		echo "check: installing the debug kernel's build dependencies first"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || true
		apt-get install -y -qq --no-install-recommends "${dk_pkgs[@]}" >"$OUT/logs/debug-kernel-deps.log" 2>&1 ||
			tail -n 20 "$OUT/logs/debug-kernel-deps.log"
	fi
	echo "check: building the debug kernel in the background (log: ${OUT#"$SRC"/}/logs/debug-kernel.log)"
	bg_start debug-kernel scripts/debug-kernel.sh
fi

# The trixie root (step trixie-root), the same way: mostly downloads and
# unpacking, so it overlaps the rest well.
trixie_wanted=0
for s in "${@:-trixie}"; do
	case $s in trixie|trixie-*|kbuild-W1-sparse-13-*|kbuild-W1-sparse-7|vm-7|debian-package-trixie) trixie_wanted=1 ;; esac
done
if [ $trixie_wanted = 1 ] && ! scripts/trixie-root.sh --status >/dev/null 2>&1; then
	# gpg reads the keyring: a fresh machine may have gpgv alone
	if [ "$(id -u)" -eq 0 ] && ! { command -v debootstrap && command -v gpg; } >/dev/null; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq || true
		apt-get install -y -qq --no-install-recommends debootstrap debian-archive-keyring gpg \
			>"$OUT/logs/trixie-root-deps.log" 2>&1 || tail -n 20 "$OUT/logs/trixie-root-deps.log"
	fi
	echo "check: building the trixie root in the background (log: ${OUT#"$SRC"/}/logs/trixie-root.log)"
	bg_start trixie-root scripts/trixie-root.sh
fi

if ! "$SRC/scripts/deps.sh"; then
	echo "check: dependencies are missing (see above)" >&2
	exit 1
fi

kver61=$("$SRC/scripts/kver.sh" 6.1) || exit 1
kver612=$("$SRC/scripts/kver.sh" 6.12) || exit 1

# ---- what the steps run ----

unit_kernel() {
	make -s unit-kernel >/dev/null || return 1
	local t rc=0
	for t in $(make -s unit-kernel-list); do
		"$t" || rc=1
	done
	return $rc
}

# A kbuild run at W=1 with sparse on every file; any diagnostic fails it,
# and so does a file that was compiled but not checked (kbuild turns C=2
# off, with a warning, when the kernel's probe rejects the sparse given).
# KBUILD_CHECK names another sparse than the one on PATH.
kbuild_strict() {
	local kver=$1 log ncc nchk
	shift
	log=$(mktemp)
	# W=1 only speaks when a file is compiled: start from no objects.
	[ -d "build/$kver" ] && "$@" make -s -C "/lib/modules/$kver/build" M="$SRC/build/$kver" clean >/dev/null 2>&1
	"$@" make modules KVER="$kver" KARGS="W=1 C=2${KBUILD_CHECK:+ CHECK=$KBUILD_CHECK}" >"$log" 2>&1
	local rc=$?
	cat "$log"
	ncc=$(grep -E '^ +CC \[M\] ' "$log" | grep -cvE '\.mod\.o$|\.module-common\.o$')
	nchk=$(grep -cE '^ +CHECK ' "$log")
	if [ $rc -ne 0 ]; then
		rm -f "$log"
		return 1
	fi
	# sparse and gcc report as FILE:LINE:COL: ...; BTF skipping is not ours.
	if grep -E '(warning|error|note):|: sparse:|C=[0-9] specified' "$log" | grep -v 'Skipping BTF'; then
		echo "kbuild: diagnostics above"
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
	if [ "$ncc" -eq 0 ] || [ "$nchk" -ne "$ncc" ]; then
		echo "kbuild: $ncc files compiled, $nchk checked by sparse: a build from clean compiles and checks each file once (was sparse turned off, or did another build share build/$kver?)"
		return 1
	fi
	echo "kbuild: $ncc files compiled with W=1, $nchk checked by sparse${KBUILD_CHECK:+ ($KBUILD_CHECK)}"
}

# The kernel has every option selftests/config asks for.
kernel_config() {
	local kver=$1 opt rc=0
	while IFS= read -r opt; do
		case $opt in '#'*|'') continue ;; esac
		if ! grep -qE "^${opt%%=*}=[ym]" "/boot/config-$kver"; then
			echo "$kver: ${opt%%=*} is not set"
			rc=1
		fi
	done <selftests/config
	return $rc
}

checkpatch() {
	local ksrc files
	ksrc=$("$SRC/scripts/ksrc-extract.sh") || return 1
	# The generated netlink files are the generator's style, not ours.
	files=$(find kernel -name '*.[ch]' ! -name 'netlink-gen*' ! -name compat.h | sort)
	# shellcheck disable=SC2086
	perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types -f $files || return 1
	# compat.h names the writable struct types that 6.1 still requires.
	perl "$ksrc/scripts/checkpatch.pl" --strict --no-tree --terse \
		--show-types --ignore CONST_STRUCT -f kernel/compat.h
}

# Everything the VM steps run, for both kernels. KARGS=W=1 is what the
# build steps compiled with, so their objects are reused, not rebuilt.
# The modules of the commit before vgpu-get's omit (make skew-modules) are
# for gpuvirtctl_skew.sh, which LANES puts on 6.12; check-full runs it
# everywhere. When they cannot be built (a clone without that commit) the
# other VM tests still run, and that test fails, saying why.
vm_build() {
	local k
	scripts/vm-lanes.sh --check || return 1
	for k in "$kver61" "$kver612"; do
		make -s modules test-modules KVER="$k" KARGS=W=1 >/dev/null &&
			make -s mdev-samples KVER="$k" >/dev/null || return 1
		if [ "$k" = "$kver612" ] || [ $full = 1 ]; then
			skew_modules make -s skew-modules KVER="$k"
		fi
	done
	make -s user vm-tests >/dev/null
}

# skew_modules CMD...: build the modules before omit with CMD; a failure
# is told, and left to gpuvirtctl_skew.sh to fail on
skew_modules() {
	"$@" >/dev/null ||
		echo "check: the modules before omit did not build (above): gpuvirtctl_skew.sh will fail"
	return 0
}

# One guest runs the tests of a lane in the order of selftests/vm/TESTS.
# Each test gets 600 s, several times the longest one's usual time: the
# host may be busy (the debug kernel's build, the other slot), and a test
# that runs out of time is lost whole.
vm_lane() {
	local kver=$1 lane=$2 tests
	mapfile -t tests < <(scripts/vm-lanes.sh ${full_flag} "$lane")
	if [ ${#tests[@]} -eq 0 ]; then
		echo "1..0 # SKIP no test runs on $lane"
		return 0
	fi
	echo "# vm: ${#tests[@]} test(s) on $kver: ${tests[*]}"
	selftests/vm-run.sh -k "$kver" -o "build/$kver/vm-check" -t 3600 -T 600 "${tests[@]}"
}

# The modules for a kernel of the trixie root (LINE: 13-6.12 or 7), built
# there with its gcc-14, W=1 and the sparse the root names for that kernel
# (trixie's, or sid's for headers that need a newer one: trixie-root.sh).
trixie_kbuild() {
	local line=$1 kver log rc check
	kver=$(scripts/kver.sh "$line") || return 1
	echo "TAP version 13"
	echo "1..1"
	check=$(awk -v k="$kver" '$1 == k { print $2 }' \
		"$(dirname "$(scripts/trixie-root.sh --print)")/sparse" 2>/dev/null)
	[ -n "$check" ] || check=sparse
	log=$(mktemp)
	KBUILD_CHECK=$check kbuild_strict "$kver" scripts/trixie-root.sh --run >"$log" 2>&1
	rc=$?
	sed 's/^/# /' "$log"
	rm -f "$log"
	if [ $rc = 0 ]; then
		echo "ok 1 $kver: W=1 with gcc-14 and sparse ($check), no diagnostics"
	else
		echo "not ok 1 $kver: W=1 with gcc-14 and sparse ($check)"
	fi
	return $rc
}

# The VM tests of lane 7 on the newest 7.x, booted with the trixie root.
# check-full runs gpuvirtctl_skew.sh there too: the root has no git, so
# the old tree is taken out of the history here first.
trixie_vm_lane() {
	local kver root
	kver=$(scripts/kver.sh 7) || return 1
	root=$(scripts/trixie-root.sh --print) || return 1
	scripts/trixie-root.sh --run bash -c "make -s modules test-modules KVER=$kver KARGS=W=1 >/dev/null &&
		make -s mdev-samples KVER=$kver >/dev/null" || return 1
	if [ $full = 1 ] && skew_modules scripts/skew-modules.sh --tree "build/skew/$kver" &&
		[ -e "build/skew/$kver/src/.rev" ]; then
		skew_modules scripts/trixie-root.sh --run make -s skew-modules KVER="$kver"
	fi
	GPUVIRT_VM_ROOT=$root vm_lane "$kver" 7
}

# ---- the steps ----
#
# step NAME BUDGET GROUP [needs=A,B] [after=A,B] [lock=L] -- COMMAND...
#   BUDGET   seconds it should take on the 2-core CI machine (warm cache);
#            --full budgets are given as CHECK/FULL
#   needs=   steps that must pass first (else this one is not run, failed)
#   after=   steps that must be over first (pass or fail): they change
#            files this one uses
#   lock=    steps with the same lock never run at the same time
S_NAME=() S_BUDGET=() S_GROUP=() S_NEEDS=() S_AFTER=() S_LOCK=() S_CMD=()
step() {
	local name=$1 budget=$2 group=$3 needs="" after="" lock=""
	shift 3
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		case $1 in
		needs=*) needs=${1#needs=} ;;
		after=*) after=${1#after=} ;;
		lock=*) lock=${1#lock=} ;;
		*) echo "check: bad step option '$1' for $name" >&2; exit 2 ;;
		esac
		shift
	done
	shift
	case $budget in */*) [ $full = 1 ] && budget=${budget#*/} || budget=${budget%/*} ;; esac
	S_NAME+=("$name")
	S_BUDGET+=("$budget")
	S_GROUP+=("$group")
	S_NEEDS+=("${needs//,/ }")
	S_AFTER+=("${after//,/ }")
	S_LOCK+=("$lock")
	S_CMD+=("$(printf '%q ' "$@")")
}

full_flag=
[ $full = 1 ] && full_flag=--full
k61=kbuild-W1-sparse-$kver61
k612=kbuild-W1-sparse-$kver612

# The steps that boot a guest wait for the trixie root (after=, so they
# still run when it fails): its QEMU runs guests about a quarter faster
# than the host's (selftests/vm-run.sh, GPUVIRT_VM_QEMU). On a fresh
# machine the debug kernel's build takes the CPU meanwhile.
# Budgets: the basis of each is in Documentation/testing.rst, "Budget".
#    name                         budget  group
step unit-kernel-logic            60      unit  -- unit_kernel
step unit-gpuvirtctl              60      unit  lock=make-user -- make -s user-unit
step unit-runner-lib              30      unit  -- selftests/unit/test_runner_lib.sh
step checkpatch-strict            150     style -- checkpatch
step cppcheck-user                120     style -- make -s user-lint
step ynl-generated-up-to-date     30      style -- scripts/ynl-gen.sh --check
step "kernel-config-$kver61"      10      build -- kernel_config "$kver61"
step "kernel-config-$kver612"     10      build -- kernel_config "$kver612"
step "$k61"                       240     build -- kbuild_strict "$kver61"
step "$k612"                      240     build -- kbuild_strict "$kver612"
step vm-build                     150     vm    after=$k61,$k612 lock=make-user -- vm_build
step vm-6.1                       450/600 vm    needs=vm-build after=trixie-root -- vm_lane "$kver61" 6.1
step vm-6.12                      450/600 vm    needs=vm-build after=trixie-root -- vm_lane "$kver612" 6.12
step runner-selftest              100     runner after=$k61,trixie-root -- selftests/runner-selftest.sh -k "$kver61"
step dkms-add-build-remove        150     dkms  lock=dkms -- scripts/dkms-check.sh "$kver61" "$kver612"
# make check boots Debian 12's packages on 6.1 alone: DKMS builds them
# for 6.12 too and the host's kmod resolves them there; check-full boots
# both kernels.
if [ $full = 1 ]; then pkg_vm_lines="6.1 6.12"; else pkg_vm_lines=6.1; fi
step debian-package-install-use-purge 300 package lock=dkms after=trixie-root -- \
	env GPUVIRT_PACKAGE_VM_LINES="$pkg_vm_lines" scripts/check-package.sh
step debug-kernel                 1500    debug -- scripts/debug-kernel.sh
step trixie-root                  1200    trixie -- scripts/trixie-root.sh
step kbuild-W1-sparse-13-6.12     150     trixie needs=trixie-root -- trixie_kbuild 13-6.12
step kbuild-W1-sparse-7           150     trixie needs=trixie-root -- trixie_kbuild 7
step vm-7                         800/1500 trixie needs=trixie-root,vm-build after=kbuild-W1-sparse-7 -- trixie_vm_lane
step debian-package-trixie        330     trixie needs=trixie-root -- scripts/check-package.sh --trixie
step debug-build                  120     debug needs=debug-kernel after=trixie-root lock=make-user -- \
	scripts/check-debug.sh ${full_flag} --build-only
if [ $full = 0 ]; then
	step debug-suite-1            420     debug needs=debug-build -- \
		scripts/check-debug.sh --no-build suite:1/1
	step debug-failnth-1          260     debug needs=debug-build -- \
		scripts/check-debug.sh --no-build fail-nth:1/2
	step debug-failnth-2          260     debug needs=debug-build -- \
		scripts/check-debug.sh --no-build fail-nth:2/2
	step debug-commands           300     debug needs=debug-build -- \
		scripts/check-debug.sh --no-build commands:1/1
	step fuzz-smoke               90      fuzz  -- make -s fuzz FUZZ_SECONDS=10
else
	for i in 1 2 3 4; do
		step "debug-suite-$i"     900     debug needs=debug-build -- \
			scripts/check-debug.sh --full --no-build "suite:$i/4"
	done
	for i in 1 2 3; do
		step "debug-failnth-$i"   700     debug needs=debug-build -- \
			scripts/check-debug.sh --full --no-build "fail-nth:$i/3"
	done
	step debug-commands           900     debug needs=debug-build -- \
		scripts/check-debug.sh --full --no-build commands:1/1
	step fuzz                     450     fuzz  -- make -s fuzz FUZZ_SECONDS=120
fi
nsteps=${#S_NAME[@]}

# ---- selection ----

sel=("$@")
if [ ${#sel[@]} -eq 0 ]; then
	if [ $full = 1 ]; then sel=("${GROUPS_ALL[@]}"); else sel=("${GROUPS_CHECK[@]}"); fi
fi
declare -A on=() idx=()
for i in "${!S_NAME[@]}"; do idx[${S_NAME[$i]}]=$i; done
for s in "${sel[@]}"; do
	hit=0
	for i in "${!S_NAME[@]}"; do
		if [ "${S_GROUP[$i]}" = "$s" ] || [ "${S_NAME[$i]}" = "$s" ]; then
			on[$i]=1
			hit=1
		fi
	done
	if [ $hit = 0 ]; then
		echo "check: unknown step '$s' (groups: ${GROUPS_ALL[*]}; or a step's name)" >&2
		exit 2
	fi
done
# what a selected step needs comes along
changed=1
while [ $changed = 1 ]; do
	changed=0
	for i in "${!on[@]}"; do
		for d in ${S_NEEDS[$i]}; do
			j=${idx[$d]}
			[ -n "${on[$j]:-}" ] || { on[$j]=1; changed=1; }
		done
	done
done

debug_on=0
for i in "${!on[@]}"; do
	[ "${S_GROUP[$i]}" = debug ] && debug_on=1
done
debug_skip=0
if [ $debug_on = 1 ] && [ "${GPUVIRT_CHECK_DEBUG:-1}" = 0 ]; then
	debug_skip=1
	for i in "${!on[@]}"; do
		[ "${S_GROUP[$i]}" = debug ] && unset "on[$i]"
	done
	debug_on=0
fi

# ---- before the steps ----

# The extracted kernel-source files several steps read: once, up front.
"$SRC/scripts/ksrc-extract.sh" >/dev/null || exit 1

# The debug kernel's and the trixie root's steps are their background
# builds when there are (each leaves its result in state/NAME); when cached,
# the step finds it at once.
declare -A bg_step=()
for name in "${!bg_pid[@]}"; do bg_step[${idx[$name]}]=$name; done

# The fail-nth seed, printed once (the debug steps derive the same).
if [ $debug_on = 1 ] && [ $full = 0 ]; then
	read -r seed seed_why < <(scripts/check-debug.sh --seed)
	echo "check: fail-nth seed $seed ($seed_why); replay: make check-debug FAILNTH_SEED=$seed"
	export FAILNTH_SEED=$seed
fi

# ---- the scheduler ----

slots=${GPUVIRT_CHECK_JOBS:-$(nproc)}
[ "$slots" -ge 1 ] 2>/dev/null || slots=1
export GPUVIRT_DEBUG_JOBS=1

# Weight: the budget plus the heaviest chain of selected steps that wait
# for this one (needs or after), so that what gates most starts first.
declare -A weight=()
weight_of() {
	local i=$1 j w max=0
	if [ -n "${weight[$i]:-}" ]; then
		echo "${weight[$i]}"
		return
	fi
	for j in "${!on[@]}"; do
		case " ${S_NEEDS[$j]} ${S_AFTER[$j]} " in
		*" ${S_NAME[$i]} "*)
			w=$(weight_of "$j")
			[ "$w" -gt $max ] && max=$w ;;
		esac
	done
	echo $((S_BUDGET[i] + max))
}
for i in "${!on[@]}"; do weight[$i]=$(weight_of "$i"); done
mapfile -t order < <(for i in "${!on[@]}"; do echo "${weight[$i]} $i"; done |
	sort -k1,1nr -k2,2n | awk '{ print $2 }')

declare -A state=() rc=() secs=()
for i in "${!on[@]}"; do state[$i]=pending; done
for i in "${!bg_step[@]}"; do
	[ -n "${on[$i]:-}" ] && state[$i]=running
done

# Run step i in the background; it leaves "RC SECONDS" in state/NAME.
start_step() {
	local i=$1
	state[$i]=running
	echo "check: ${S_NAME[$i]}: started"
	(
		s=$(date +%s)
		eval "${S_CMD[$i]}" >"$OUT/logs/${S_NAME[$i]}.log" 2>&1 </dev/null
		r=$?
		echo "$r $(($(date +%s) - s))" >"$OUT/state/${S_NAME[$i]}"
	) &
}

# A step that was not run, because a step it needs failed.
not_run() {
	local i=$1 why=$2
	state[$i]=done
	rc[$i]=99
	secs[$i]=0
	echo "check: ${S_NAME[$i]}: not run: $why" | tee "$OUT/logs/${S_NAME[$i]}.log"
}

finish_step() {
	local i=$1 r s log=$OUT/logs/${S_NAME[$1]}.log
	read -r r s <"$OUT/state/${S_NAME[$i]}"
	state[$i]=done
	rc[$i]=$r
	secs[$i]=$s
	if [ "$r" -eq 0 ]; then
		printf 'check: %s: ok (%s s)\n' "${S_NAME[$i]}" "$s"
	else
		printf 'check: %s: FAILED (%s s, exit %s): see %s\n' "${S_NAME[$i]}" "$s" "$r" "${log#"$SRC"/}"
		tail -n 15 "$log" | sed 's/^/    | /'
	fi
	if [ "$s" -gt "${S_BUDGET[$i]}" ]; then
		echo "check: WARNING: ${S_NAME[$i]} took $s s, over its budget of ${S_BUDGET[$i]} s"
	fi
}

# ready i: 0 = may start, 1 = must wait, 2 = a step it needs failed
ready() {
	local i=$1 d j
	for d in ${S_NEEDS[$i]}; do
		j=${idx[$d]}
		[ -n "${on[$j]:-}" ] || continue
		[ "${state[$j]}" = done ] || return 1
		[ "${rc[$j]}" = 0 ] || { why="$d failed"; return 2; }
	done
	for d in ${S_AFTER[$i]}; do
		j=${idx[$d]}
		[ -n "${on[$j]:-}" ] || continue
		[ "${state[$j]}" = done ] || return 1
	done
	if [ -n "${S_LOCK[$i]}" ]; then
		for j in "${!on[@]}"; do
			[ "${state[$j]}" = running ] && [ "${S_LOCK[$j]}" = "${S_LOCK[$i]}" ] && return 1
		done
	fi
	return 0
}

while :; do
	running=0
	pending=0
	for i in "${!on[@]}"; do
		if [ "${state[$i]}" = running ]; then
			if [ -e "$OUT/state/${S_NAME[$i]}" ]; then
				finish_step "$i"
			elif [ -n "${bg_step[$i]:-}" ]; then
				pending=$((pending + 1))	# a background build: no slot
			else
				running=$((running + 1))
			fi
		fi
	done
	for i in "${order[@]}"; do
		[ "${state[$i]}" = pending ] || continue
		why=
		ready "$i"
		case $? in
		0)
			if [ $running -lt "$slots" ]; then
				start_step "$i"
				running=$((running + 1))
			else
				pending=$((pending + 1))
			fi
			;;
		1) pending=$((pending + 1)) ;;
		2) not_run "$i" "$why" ;;
		esac
	done
	[ $running -eq 0 ] && [ $pending -eq 0 ] && break
	sleep 2
done
for name in "${!bg_pid[@]}"; do wait "${bg_pid[$name]}"; done

# ---- the report ----

# The KTAP of a step: what its log holds of a nested document, then its line.
step_ktap() {
	local i=$1 n=$2 log=$OUT/logs/${S_NAME[$1]}.log
	if grep -qE '^(TAP version|KTAP version|1\.\.[0-9])' "$log"; then
		sed -n '/^\(TAP version\|KTAP version\|1\.\.[0-9]\|ok \|not ok \|    \|#\)/p' "$log" |
			sed 's/^/    /'
	fi
	if [ "${rc[$i]}" -eq 0 ]; then
		echo "ok $n ${S_NAME[$i]} # ${secs[$i]} s"
	elif [ "${rc[$i]}" -eq 99 ]; then
		echo "not ok $n ${S_NAME[$i]} # not run: $(tail -n 1 "$log" | sed 's/.*not run: //')"
	else
		echo "not ok $n ${S_NAME[$i]} # exit ${rc[$i]}, see ${log#"$SRC"/}"
	fi
}

: >"$KTAP.body"
n=0
rows=()
for i in $(seq 0 $((nsteps - 1))); do
	if [ $debug_skip = 1 ] && [ "${S_NAME[$i]}" = debug-kernel ]; then
		n=$((n + 1))
		echo "ok $n debug-kernel-lane # SKIP GPUVIRT_CHECK_DEBUG=0" >>"$KTAP.body"
		rows+=("debug-kernel-lane - 0 0 0 1")
		continue
	fi
	[ -n "${on[$i]:-}" ] || continue
	n=$((n + 1))
	step_ktap "$i" 1 >"$OUT/ktap/${S_NAME[$i]}"
	read -r p f k < <(selftests/lib/ktap-count <(printf 'TAP version 13\n1..1\n'; cat "$OUT/ktap/${S_NAME[$i]}"))
	rows+=("${S_NAME[$i]} ${S_BUDGET[$i]} ${secs[$i]} $p $f $k")
	step_ktap "$i" "$n" >>"$KTAP.body"
done
{
	echo "TAP version 13"
	echo "1..$n"
	cat "$KTAP.body"
} >"$KTAP"
rm -f "$KTAP.body"

wall=$(($(date +%s) - t0))
read -r pass fail skip < <(selftests/lib/ktap-count --list "$KTAP" 2>"$OUT/failures")
{
	printf '%-36s %7s %8s %7s %7s %8s\n' step budget seconds passed failed skipped
	for r in "${rows[@]}"; do
		read -r name b s p f k <<<"$r"
		mark=
		[ "$b" != - ] && [ "$s" -gt "$b" ] && mark="  over budget"
		printf '%-36s %7s %8s %7s %7s %8s%s\n' "$name" "$b" "$s" "$p" "$f" "$k" "$mark"
	done
	printf '%-36s %7s %8s %7s %7s %8s\n' "total (wall clock)" - "$wall" "$pass" "$fail" "$skip"
} >"$TIMES"
echo "check: steps (${TIMES#"$SRC"/}):"
sed 's/^/    /' "$TIMES"
for r in "${rows[@]}"; do
	read -r name b s _ <<<"$r"
	if [ "$b" != - ] && [ "$s" -gt "$b" ]; then
		echo "check: WARNING: $name took $s s, over its budget of $b s"
	fi
done
if [ -s "$OUT/failures" ]; then
	echo "check: failing tests:"
	sed 's/^/    /' "$OUT/failures"
fi
echo "check: took $wall s; results in ${KTAP#"$SRC"/}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
