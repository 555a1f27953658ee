#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check: every test of the project, in order, on a fresh Debian 12
# machine. Installs what is missing (as root), then runs:
#
#   unit     host-side unit tests of the pure-logic files and of gpuvirtctl
#   style    checkpatch --strict on kernel/, cppcheck on user/, the netlink
#            code generated from the spec is up to date
#   build    modules for each kernel with W=1 and sparse (C=2), no warnings
#   vm       the VM suite on 6.1, then on 6.12 (selftests/vm-run.sh)
#   runner   the VM runner fails when it must (selftests/runner-selftest.sh)
#   dkms     dkms add, build and remove against both kernels' headers
#   package  the Debian packages: build, lintian, install (DKMS builds for
#            both kernels), modprobe and apply in the VM on each, purge
#            (scripts/check-package.sh)
#   debug    the VM suite, the fail-nth sweeps and the races on a KASAN/
#            lockdep/kmemleak kernel built from linux-source-6.12
#            (scripts/check-debug.sh). The first run on a machine builds
#            that kernel: it starts in the background, at the lowest
#            priority, as soon as the dependencies are in, so that it uses
#            the CPU the other steps leave idle (a guest is one TCG thread).
#            GPUVIRT_CHECK_DEBUG=0 skips it (reported as skipped)
#   fuzz     a 10 s libFuzzer smoke run of each harness in fuzz/ (make fuzz)
#
# Each step is one KTAP test; steps that print KTAP nest their results, and
# the leaves are what is counted. Logs go to build/check/. The last line is
# "N passed, N failed, N skipped"; the exit status is 1 if anything failed.
#
# Usage: scripts/check.sh [STEP...]     (default: all steps, in order)
set -uo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd -P)
OUT=$SRC/build/check
KTAP=$OUT/check.ktap
cd "$SRC" || exit 1

if ! "$SRC/scripts/deps.sh"; then
	echo "check: dependencies are missing (see above)" >&2
	exit 1
fi

rm -rf "$OUT"
mkdir -p "$OUT/logs"
: >"$KTAP.body"
n=0
t0=$(date +%s)

# The debug kernel's build, in the background from the start when a debug
# step is to run and the cache does not have it.
debug_on=0
case " ${*:-debug} " in *" debug "*) [ "${GPUVIRT_CHECK_DEBUG:-1}" = 0 ] || debug_on=1 ;; esac
dk_pid=
if [ $debug_on = 1 ] && ! scripts/debug-kernel.sh --status >/dev/null 2>&1; then
	echo "check: building the debug kernel in the background (log: ${OUT#"$SRC"/}/logs/debug-kernel-build.log)"
	nice -n 19 scripts/debug-kernel.sh >"$OUT/logs/debug-kernel-build.log" 2>&1 &
	dk_pid=$!
fi

# The debug lane, once the background build (if any) is done.
debug_lane() {
	if [ -n "$dk_pid" ]; then
		local s=$(date +%s)
		if ! wait "$dk_pid"; then
			echo "check: the debug kernel's build failed:"
			tail -n 30 "$OUT/logs/debug-kernel-build.log"
			return 1
		fi
		echo "check: waited $(($(date +%s) - s)) s for the debug kernel's build"
		cat "$OUT/logs/debug-kernel-build.log"
	fi
	scripts/check-debug.sh
}

# step NAME CMD...: run CMD with its output in logs/NAME.log; nest any KTAP
# it printed, and record one result line for the step itself.
step() {
	local name=$1 log=$OUT/logs/$1.log rc s
	shift
	n=$((n + 1))
	s=$(date +%s)
	printf 'check: %-28s ' "$name"
	"$@" >"$log" 2>&1
	rc=$?
	if grep -qE '^(TAP version|KTAP version|1\.\.[0-9])' "$log"; then
		# keep the KTAP lines of the nested document, as a subtest
		sed -n '/^\(TAP version\|KTAP version\|1\.\.[0-9]\|ok \|not ok \|    \|#\)/p' "$log" |
			sed 's/^/    /' >>"$KTAP.body"
	fi
	if [ $rc -eq 0 ]; then
		echo "ok $n $name" >>"$KTAP.body"
		echo "ok ($(($(date +%s) - s)) s)"
	else
		echo "not ok $n $name # exit $rc, see ${log#"$SRC"/}" >>"$KTAP.body"
		echo "FAILED ($(($(date +%s) - s)) s, exit $rc): see ${log#"$SRC"/}"
		tail -n 15 "$log" | sed 's/^/    | /'
	fi
	return $rc
}

kver61=$("$SRC/scripts/kver.sh" 6.1) || exit 1
kver612=$("$SRC/scripts/kver.sh" 6.12) || exit 1

unit_kernel() {
	make -s unit-kernel >/dev/null || return 1
	local t rc=0
	for t in $(make -s unit-kernel-list); do
		"$t" || rc=1
	done
	return $rc
}

# A kbuild run at W=1 with sparse on every file; any diagnostic fails it.
kbuild_strict() {
	local kver=$1 log
	log=$(mktemp)
	# W=1 only speaks when a file is compiled: start from no objects.
	[ -d "build/$kver" ] && make -s -C "/lib/modules/$kver/build" M="$SRC/build/$kver" clean >/dev/null 2>&1
	make modules KVER="$kver" KARGS="W=1 C=2" >"$log" 2>&1
	local rc=$?
	cat "$log"
	if [ $rc -ne 0 ]; then
		rm -f "$log"
		return 1
	fi
	# sparse and gcc report as FILE:LINE:COL: ...; BTF skipping is not ours.
	if grep -E '(warning|error|note):|: sparse:' "$log" | grep -v 'Skipping BTF'; then
		echo "kbuild: diagnostics above"
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
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

# The whole suite in one guest: about 5 minutes under TCG on 2 cores, so
# the bound on the VM is well above that. Each test gets 300 s, six times
# the longest one's usual time: the debug kernel's build shares the
# machine meanwhile (at the lowest priority), and a test that runs out of
# time is lost whole.
vm_suite() {
	local kver=$1
	make -s modules test-modules KVER="$kver" >/dev/null &&
		make -s mdev-samples KVER="$kver" >/dev/null &&
		make -s user vm-tests >/dev/null &&
		selftests/vm-run.sh -k "$kver" -o "build/$kver/vm-check" -t 1800 -T 300
}

steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(unit style build vm runner dkms package debug fuzz)

for s in "${steps[@]}"; do
	case $s in
	unit)
		step unit-kernel-logic unit_kernel
		step unit-gpuvirtctl make -s user-unit
		step unit-runner-lib selftests/unit/test_runner_lib.sh
		;;
	style)
		step checkpatch-strict checkpatch
		step cppcheck-user make -s user-lint
		step ynl-generated-up-to-date scripts/ynl-gen.sh --check
		;;
	build)
		step "kernel-config-$kver61" kernel_config "$kver61"
		step "kernel-config-$kver612" kernel_config "$kver612"
		step "kbuild-W1-sparse-$kver61" kbuild_strict "$kver61"
		step "kbuild-W1-sparse-$kver612" kbuild_strict "$kver612"
		;;
	vm)
		step "vm-$kver61" vm_suite "$kver61"
		step "vm-$kver612" vm_suite "$kver612"
		;;
	runner)
		step runner-selftest selftests/runner-selftest.sh -k "$kver61"
		;;
	dkms)
		step dkms-add-build-remove scripts/dkms-check.sh "$kver61" "$kver612"
		;;
	package)
		step debian-package-install-use-purge scripts/check-package.sh
		;;
	debug)
		if [ $debug_on = 0 ]; then
			n=$((n + 1))
			echo "ok $n debug-kernel-lane # SKIP GPUVIRT_CHECK_DEBUG=0" >>"$KTAP.body"
			printf 'check: %-28s SKIPPED (GPUVIRT_CHECK_DEBUG=0)\n' debug-kernel-lane
		else
			step debug-kernel-lane debug_lane
		fi
		;;
	fuzz)
		step fuzz-smoke make -s fuzz FUZZ_SECONDS=10
		;;
	*)
		echo "check: unknown step '$s' (unit style build vm runner dkms package debug fuzz)" >&2
		exit 2
		;;
	esac
done

{
	echo "TAP version 13"
	echo "1..$n"
	cat "$KTAP.body"
} >"$KTAP"
rm -f "$KTAP.body"

read -r pass fail skip < <(selftests/lib/ktap-count --list "$KTAP" 2>"$OUT/failures")
if [ -s "$OUT/failures" ]; then
	echo "check: failing tests:"
	sed 's/^/    /' "$OUT/failures"
fi
echo "check: took $(($(date +%s) - t0)) s; results in ${KTAP#"$SRC"/}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
