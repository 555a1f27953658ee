#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest-side suite driver: runs the VM tests inside the test VM (started by
# selftests/lib/guest-init, chrooted into the host's read-only root, cwd =
# the repo). Not meant to run on a host: tests load kernel modules.
#
# Usage: selftests/lib/guest-suite.sh [--out DIR] [--tests-file FILE]
#                                     [--cmd-file FILE] [-T SECONDS] [TEST...]
#
# Tests: the TEST arguments, else the names in --tests-file (one a line),
# else every entry of selftests/vm/TESTS ('#' comments and blank lines
# ignored). --cmd-file names a file holding a shell command, run last as the
# test "cmd" (bash -c). DIR/tests, DIR/cmd and DIR/test-timeout are used
# when present and nothing else was given: that is how vm-run.sh passes its
# selection.
#
#   foo.sh -> selftests/vm/foo.sh            (run directly, or with bash)
#   foo    -> build/user/selftests/vm/foo    (a binary, e.g. kselftest harness)
#
# Each test gets, in its environment:
#   GPUVIRT_SRC     absolute path of the repo (also the cwd)
#   KVER            running kernel release (uname -r)
#   GPUVIRT_KO_DIR  $GPUVIRT_SRC/build/$KVER, the module build tree
#                   (e.g. $GPUVIRT_KO_DIR/kernel/core/gpuvirt.ko)
#   GPUVIRT_BIN     $GPUVIRT_SRC/build/user (gpuvirtctl, test binaries)
#   GPUVIRT_TEST_TIMEOUT  its time limit in seconds
#   GPUVIRT_IN_VM=1, TMPDIR=/tmp (tmpfs; the repo is read-only in the guest)
# stdin is /dev/null, stdout and stderr are captured together.
#
# Exit code 0 = pass, 4 = skip (kselftest), anything else = fail; so is a
# missing test, a timeout (-T, default 120 s, or $GPUVIRT_TEST_TIMEOUT), a
# nested "not ok" in the test's own TAP output, and a new kernel report
# (WARNING, BUG, Oops, lockdep, ... see selftests/lib/kernel-reports) in dmesg
# while the test ran: that test gets the blame.
#
# Output, KTAP-style, is appended to DIR/guest.ktap as it happens (so a hang
# keeps it): the test's output indented by four spaces (TAP lines as they
# are, other lines as "# " diagnostics) followed by its result line. Also:
# DIR/started (the selected tests), DIR/current ("N NAME" while a test runs),
# DIR/suite.done (exit code) at the end. Progress goes to stdout.
#
# DIR/after-test, when present, holds a shell command run (bash -c, in the
# repo, bounded by the test's time limit) after each test with the test's
# number and name as $1 and $2, e.g. a kmemleak scan on the debug kernel
# (selftests/debug/after-test.sh). Its output becomes diagnostics of the
# test, and a non-zero exit fails the test.
set -euo pipefail

die() {
	echo "guest-suite: $*" >&2
	exit 2
}

out=""
tests_file=""
cmd_file=""
timeout_s=${GPUVIRT_TEST_TIMEOUT:-120}
timeout_given=0
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?--out needs a directory}; shift 2 ;;
	--tests-file) tests_file=${2:?--tests-file needs a file}; shift 2 ;;
	--cmd-file) cmd_file=${2:?--cmd-file needs a file}; shift 2 ;;
	-T) timeout_s=${2:?-T needs seconds}; timeout_given=1; shift 2 ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; args+=("$@"); break ;;
	-*) die "unknown option $1" ;;
	*) args+=("$1"); shift ;;
	esac
done

src=$(pwd -P)
[ -f "$src/selftests/lib/guest-suite.sh" ] || die "run me from the repo root (cwd is $src)"
[ -n "$out" ] || out=$(mktemp -d /tmp/guest-suite.XXXXXX)
[ -d "$out" ] || die "output directory $out does not exist"
if [ ${#args[@]} -eq 0 ] && [ -z "$tests_file" ] && [ -z "$cmd_file" ]; then
	[ -e "$out/tests" ] && tests_file=$out/tests
	[ -e "$out/cmd" ] && cmd_file=$out/cmd
fi
if [ $timeout_given -eq 0 ] && [ -s "$out/test-timeout" ]; then
	read -r timeout_s < "$out/test-timeout"
fi
case $timeout_s in
''|*[!0-9]*) die "test timeout '$timeout_s' is not a number of seconds" ;;
esac

read_list() {
	sed -e 's/#.*//' -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$1"
}

tests=()
if [ ${#args[@]} -gt 0 ]; then
	tests=("${args[@]}")
elif [ -n "$tests_file" ]; then
	mapfile -t tests < <(read_list "$tests_file")
elif [ -z "$cmd_file" ]; then
	[ -r selftests/vm/TESTS ] || die "no tests given and no selftests/vm/TESTS"
	mapfile -t tests < <(read_list selftests/vm/TESTS)
fi
[ -z "$cmd_file" ] || tests+=("cmd")
[ ${#tests[@]} -gt 0 ] || die "no tests selected"

KVER=$(uname -r)
export GPUVIRT_SRC=$src KVER
export GPUVIRT_KO_DIR=$src/build/$KVER
export GPUVIRT_BIN=$src/build/user
export GPUVIRT_TEST_TIMEOUT=$timeout_s
export GPUVIRT_IN_VM=1
export TMPDIR=/tmp
# Kernel reports, the same list selftests/lib/logscan uses on the host;
# plain grep here, Python starts slowly over 9p under TCG.
kline='^(<[0-9]+>)?\[ *[0-9]+\.[0-9]+\]'
reports=$(sed -e '/^#/d' -e '/^$/d' -e 's/^[^	]*	//' selftests/lib/kernel-reports | paste -sd'|')
[ -n "$reports" ] || die "no patterns in selftests/lib/kernel-reports"
ktap=$out/guest.ktap
work=$(mktemp -d /tmp/guest-suite.work.XXXXXX)

printf '%s\n' "${tests[@]}" > "$out/started"
: > "$ktap"

# Indent a test's output into its KTAP block: TAP lines stay TAP (nested),
# everything else becomes a "# " diagnostic. GNU sed -u passes every line on
# at once, so that a hang keeps the output.
indent() {
	sed -u -E -e 's/\r$//' \
		-e '/^[[:space:]]*((not )?ok [0-9]+|1\.\.[0-9]+|K?TAP version|#|Bail out!)/{s/^/    /;b}' \
		-e '/^$/{s/^/    #/;b}' \
		-e 's/^/    # /'
}

diag() {
	printf '    # gvsuite: %s\n' "$*" >> "$ktap"
}

kmsg() {
	echo "$*" > /dev/kmsg 2>/dev/null || true
}

total=${#tests[@]}
failed=0
n=0
for name in "${tests[@]}"; do
	n=$((n + 1))
	echo "$n $name" > "$out/current"
	echo "gvsuite: [$n/$total] $name"
	runner=()
	problem=""
	case $name in
	cmd)
		runner=(bash -c "$(cat "$cmd_file")")
		;;
	*/*|.*)
		problem="bad test name '$name' (want foo.sh or foo, no paths)"
		;;
	*.sh)
		path=selftests/vm/$name
		if [ ! -f "$path" ]; then
			problem="missing test script $path"
		elif [ -x "$path" ]; then
			runner=("./$path")
		else
			runner=(bash "$path")
		fi
		;;
	*)
		path=build/user/selftests/vm/$name
		if [ ! -e "$path" ]; then
			problem="missing test binary $path (not built? run 'make user')"
		elif [ ! -x "$path" ]; then
			problem="test binary $path is not executable"
		else
			runner=("./$path")
		fi
		;;
	esac

	block=$work/$n.out
	: > "$block"
	rc=0
	mark="gvsuite: begin test $n $name"
	if [ -n "$problem" ]; then
		rc=1
		diag "$problem"
	else
		kmsg "$mark"
		start=$(date +%s)
		set +e
		off=$(stat -c %s "$ktap")
		timeout -k 10 "$timeout_s" "${runner[@]}" < /dev/null 2>&1 | indent >> "$ktap"
		rc=${PIPESTATUS[0]}
		tail -c +$((off + 1)) "$ktap" > "$block"
		set -e
		kmsg "gvsuite: end test $n $name (exit $rc)"
		elapsed=$(($(date +%s) - start))
		case $rc in
		0|4) diag "took ${elapsed} s" ;;
		124) diag "timed out after ${timeout_s} s" ;;
		137) diag "killed (SIGKILL) after ${elapsed} s" ;;
		*) if [ "$rc" -gt 128 ]; then
			diag "killed by signal $((rc - 128)) after ${elapsed} s"
		   else
			diag "exit code $rc after ${elapsed} s"
		   fi ;;
		esac

		# The test's own TAP must agree with its exit code.
		nf=$(grep -E '^ +not ok [0-9]+' "$block" |
			grep -cviE '#[[:space:]]*(SKIP|TODO)' || true)
		if [ "$nf" -gt 0 ] && { [ $rc -eq 0 ] || [ $rc -eq 4 ]; }; then
			diag "$nf nested failure(s) although it exited $rc"
			rc=1
		fi

		# New kernel reports while it ran are its fault.
		dmesg > "$work/dmesg" 2>/dev/null || true
		awk -v m="$mark" 'index($0, m) { n = NR } { l[NR] = $0 }
			END { for (i = n + 1; i <= NR; i++) print l[i] }' \
			"$work/dmesg" > "$work/dmesg.test"
		grep -E "$kline" "$work/dmesg.test" | grep -E "$reports" > "$work/scan" || true
		if [ -s "$work/scan" ]; then
			head -n 20 "$work/scan" | while IFS= read -r l; do
				diag "kernel: $l"
			done
			diag "the kernel log got a report while this test ran"
			rc=1
		fi

		if [ -s "$out/after-test" ]; then
			set +e
			timeout -k 10 "$timeout_s" bash -c "$(cat "$out/after-test")" \
				after-test "$n" "$name" < /dev/null > "$work/after" 2>&1
			arc=$?
			set -e
			while IFS= read -r l; do
				diag "after-test: $l"
			done < "$work/after"
			if [ $arc -ne 0 ]; then
				diag "the after-test check failed (exit $arc)"
				rc=1
			fi
		fi
	fi

	if [ $rc -eq 0 ]; then
		echo "ok $n $name" >> "$ktap"
		res=ok
	elif [ $rc -eq 4 ]; then
		reason=$(grep -v '# gvsuite:' "$block" | grep -i -o 'SKIP.*' | tail -n1 |
			sed 's/^SKIP[:[:space:]]*//I' || true)
		echo "ok $n $name # SKIP ${reason:-exit code 4}" >> "$ktap"
		res=skip
	else
		echo "not ok $n $name" >> "$ktap"
		res="NOT OK"
		failed=$((failed + 1))
	fi
	rm -f "$out/current"
	echo "gvsuite: [$n/$total] $name: $res"
done

rm -rf "$work"
rc=0
[ $failed -eq 0 ] || rc=1
echo "$rc" > "$out/suite.done"
exit $rc
