#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prove that selftests/vm-run.sh fails when it should, and only then: three
# VM runs, each checked from the outside.
#
#   clean  runner_ok.sh                 -> exit 0, "2 passed, 0 failed"
#   warn   runner_warn.sh (loads a test module whose init WARNs)
#                                       -> exit non-zero, the WARNING and the
#                                          W taint are named, the test that
#                                          caused it is "not ok"
#   hang   runner_hang.sh with -t HANG  -> exit non-zero within the bound,
#                                          "guest hung", console log kept
#   rootrepo  the repo bound under /root, booted with the trixie root
#             (lane 7's), which has /root too -> exit 0, the repo and the
#             root's /root both seen (skipped without that root)
#
# Usage: selftests/runner-selftest.sh [-k KVER] [-o OUTDIR] [-t HANG_TIMEOUT_S]
#
#   -k KVER   kernel release (default: scripts/kver.sh 6.1)
#   -o OUTDIR where the three runs keep their logs (default:
#             build/KVER/runner-selftest); one subdirectory per run
#   -t SECS   bound for the hung run (default 40)
#
# Builds selftests/modules/warn in build/KVER/selftests/modules/warn/ first.
# Prints KTAP, one line per assertion; exits 1 if any failed.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
VMRUN=$SRC/selftests/vm-run.sh

die() {
	echo "runner-selftest: $*" >&2
	exit 2
}

kver=""
outdir=""
hang_t=40
while [ $# -gt 0 ]; do
	case $1 in
	-k) kver=${2:?-k needs a kernel release}; shift 2 ;;
	-o) outdir=${2:?-o needs a directory}; shift 2 ;;
	-t) hang_t=${2:?-t needs seconds}; shift 2 ;;
	-h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument $1 (see -h)" ;;
	esac
done
if [ -z "$kver" ]; then
	kver=$("$SRC/scripts/kver.sh" 6.1) || die "no 6.1 kernel found"
fi
outdir=${outdir:-$SRC/build/$kver/runner-selftest}
mkdir -p "$outdir"

plan=14
n=0
failed=0
echo "TAP version 13"
echo "1..$plan"

check() {	# check NAME CONDITION-RC [diagnostic file or text]
	local name=$1 rc=$2 diag=${3:-}
	n=$((n + 1))
	if [ "$rc" -eq 0 ]; then
		echo "ok $n $name"
		return
	fi
	if [ -n "$diag" ]; then
		if [ -f "$diag" ]; then
			tail -n 25 "$diag" | sed 's/^/# /'
		else
			printf '%s\n' "$diag" | sed 's/^/# /'
		fi
	fi
	echo "not ok $n $name"
	failed=$((failed + 1))
}

has() {		# has FILE ERE -> 0 if found
	grep -qE -- "$2" "$1"
}

# $kver as an ERE ("6.12.118+deb12-amd64" has metacharacters)
kre=$(printf '%s' "$kver" | sed 's/[]+.*?^$(){}|\\[]/\\&/g')

run_vm() {	# run_vm NAME VM-RUN-ARGS... ; sets vm_rc and vm_secs
	local name=$1 t0
	shift
	mkdir -p "$outdir/$name"
	t0=$(date +%s)
	vm_rc=0
	"$VMRUN" -k "$kver" -o "$outdir/$name" "$@" > "$outdir/$name.out" 2>&1 || vm_rc=$?
	vm_secs=$(($(date +%s) - t0))
	echo "# runner-selftest: $name run: exit $vm_rc in ${vm_secs} s"
}

# --- clean run ---------------------------------------------------------------
run_vm clean runner_ok.sh
o=$outdir/clean.out
check "clean run exits 0" "$([ $vm_rc -eq 0 ] && echo 0 || echo 1)" "$o"
check "clean run counts 2 passed, 0 failed, 0 skipped" \
	"$(grep -qxF "vm-run: $kver: 2 passed, 0 failed, 0 skipped" "$o" &&
	   [ "$(cat "$outdir/clean/counts")" = "2 0 0" ] && echo 0 || echo 1)" "$o"
check "clean run reports runner_ok.sh and kernel-log-clean ok" \
	"$(has "$outdir/clean/ktap.log" '^ok 1 runner_ok.sh$' &&
	   has "$outdir/clean/ktap.log" '^ok 2 kernel-log-clean$' && echo 0 || echo 1)" "$o"

# --- a WARNING in the guest ----------------------------------------------------
kdir=/lib/modules/$kver/build
mdir=$SRC/build/$kver/selftests/modules/warn
mkdir -p "$mdir"
ln -sf "$SRC/selftests/modules/warn/Kbuild" "$SRC/selftests/modules/warn/gpuvirt_selftest_warn.c" "$mdir/"
build_rc=0
make -C "$kdir" M="$mdir" modules > "$outdir/warn-build.log" 2>&1 || build_rc=$?
check "warn test module builds for $kver" \
	"$([ $build_rc -eq 0 ] && [ -e "$mdir/gpuvirt_selftest_warn.ko" ] && echo 0 || echo 1)" \
	"$outdir/warn-build.log"

run_vm warn runner_warn.sh
o=$outdir/warn.out
check "warn run exits non-zero" "$([ $vm_rc -ne 0 ] && echo 0 || echo 1)" "$o"
check "warn run quotes the WARNING" \
	"$(has "$o" 'WARNING: .*gpuvirt_selftest_warn' && echo 0 || echo 1)" "$o"
check "warn run blames runner_warn.sh" \
	"$(has "$o" '^not ok 1 runner_warn.sh$' && echo 0 || echo 1)" "$o"
check "warn run fails kernel-log-clean and decodes taint W" \
	"$(has "$o" '^not ok [0-9]+ kernel-log-clean$' &&
	   has "$o" 'not allowed: W \(bit 9' && echo 0 || echo 1)" "$o"
check "warn run counts failures" \
	"$(has "$o" "^vm-run: $kre: [0-9]+ passed, [1-9][0-9]* failed" && echo 0 || echo 1)" "$o"

# --- a hung guest --------------------------------------------------------------
run_vm hang -t "$hang_t" runner_hang.sh
o=$outdir/hang.out
check "hang run exits non-zero" "$([ $vm_rc -ne 0 ] && echo 0 || echo 1)" "$o"
check "hang run says the guest hung, as a counted failure" \
	"$(has "$o" 'guest hung' && has "$o" '^not ok [0-9]+ guest-hung$' &&
	   has "$o" '^not ok 1 runner_hang.sh$' && echo 0 || echo 1)" "$o"
check "hang run kept the console log and the test's output" \
	"$(has "$outdir/hang/console.log" 'Run /init as init process' &&
	   has "$outdir/hang/console.log" 'gvsuite: begin test 1 runner_hang.sh' &&
	   has "$outdir/hang/ktap.log" 'runner_hang: sleeping forever' && echo 0 || echo 1)" "$o"
check "hang run ended within its bound (${vm_secs} s for -t $hang_t)" \
	"$([ "$vm_secs" -le $((hang_t + 20)) ] && echo 0 || echo 1)" "$o"

# --- a repo under /root, booted with another root that has /root too -------
# The trixie root (lane 7) has a /root of its own: the guest covers it and
# shows the root's entries again (selftests/lib/guest-init). The repo is
# bound at a new directory under /root in a mount namespace of this run.
troot=""
if st=$("$SRC/scripts/trixie-root.sh" --status 2>/dev/null); then
	troot=${st#cached }
fi
k7=$("$SRC/scripts/kver.sh" 7 2>/dev/null || true)
if [ -z "$troot" ] || [ -z "$k7" ] || [ "$(id -u)" -ne 0 ]; then
	n=$((n + 1))
	echo "ok $n a repo under /root runs with the trixie root # SKIP needs root and the trixie root (scripts/trixie-root.sh)"
else
	mkdir -p "$outdir/rootrepo"
	at=$(mktemp -d /root/.gv-runner-selftest.XXXXXX)
	rrc=0
	# shellcheck disable=SC2016 # expanded by the namespace's bash
	unshare -m bash -c 'mount --bind "$1" "$2" && cd "$2" &&
		GPUVIRT_VM_ROOT="$3" selftests/vm-run.sh -k "$4" -o "$5" -t 300 \
			--cmd "test \"\$(pwd -P)\" = $2 && test -r /root/.bashrc && echo rootrepo-ok"' \
		runner-selftest "$SRC" "$at" "$troot" "$k7" "$outdir/rootrepo" \
		>"$outdir/rootrepo.out" 2>&1 || rrc=$?
	rmdir "$at"
	check "a repo under /root runs with the trixie root, whose /root stays visible" \
		"$([ $rrc -eq 0 ] && has "$outdir/rootrepo/ktap.log" 'rootrepo-ok' && echo 0 || echo 1)" \
		"$outdir/rootrepo.out"
fi

[ $n -eq $plan ] || { echo "# runner-selftest: plan says $plan, ran $n"; exit 1; }
[ $failed -eq 0 ]
