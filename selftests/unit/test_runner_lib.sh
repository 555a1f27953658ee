#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Host-side unit test of the VM runner's helpers: selftests/lib/logscan (the
# kernel log / taint check) and selftests/lib/ktap-count (the leaf counter),
# on canned logs and KTAP. Prints KTAP; exits 1 if any case failed.
#
# Usage: selftests/unit/test_runner_lib.sh
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
LOGSCAN=$SRC/selftests/lib/logscan
COUNT=$SRC/selftests/lib/ktap-count
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

n=0
failed=0
plan=23
echo "TAP version 13"
echo "1..$plan"

result() {	# result NAME OK(0/1) [diagnostic...]
	local name=$1 ok=$2
	shift 2
	n=$((n + 1))
	if [ "$ok" -eq 0 ]; then
		echo "ok $n $name"
	else
		local l
		for l in "$@"; do
			printf '%s\n' "$l" | sed 's/^/# /'
		done
		echo "not ok $n $name"
		failed=$((failed + 1))
	fi
}

# expect_scan NAME WANT_RC GREP_FOR_IN_OUTPUT LOGSCAN_ARGS...
expect_scan() {
	local name=$1 want=$2 pat=$3 rc=0 out
	shift 3
	out=$("$LOGSCAN" "$@" 2>&1) || rc=$?
	if [ $rc -ne "$want" ]; then
		result "$name" 1 "logscan $* exited $rc, want $want" "$out"
	elif [ -n "$pat" ] && ! grep -qE -- "$pat" <<<"$out"; then
		result "$name" 1 "logscan output lacks /$pat/" "$out"
	else
		result "$name" 0
	fi
}

# expect_count NAME "P F S" FILE
expect_count() {
	local name=$1 want=$2 file=$3 got
	got=$("$COUNT" "$file" 2>&1) || true
	if [ "$got" = "$want" ]; then
		result "$name" 0
	else
		result "$name" 1 "ktap-count $file: got '$got', want '$want'" "$(cat "$file")"
	fi
}

# ---- logscan ----------------------------------------------------------------

cat > "$tmp/clean.log" <<'EOF'
[    0.000000] Linux version 6.1.0-57-amd64 (debian-kernel@lists.debian.org)
[    1.163409] ACPI: PM: (supports S0 S3 S4 S5)
[    2.507625] Run /init as init process
[    4.000001] gpuvirt: loading out-of-tree module taints kernel.
[    4.000002] gpuvirt: module verification failed: signature and/or required key missing - tainting kernel
EOF
cat > "$tmp/warn.log" <<'EOF'
[    4.644771] gpuvirt_selftest_warn: deliberate warning for the runner self-test
[    4.644772] WARNING: CPU: 0 PID: 133 at gpuvirt_selftest_warn.c:14 gpuvirt_selftest_warn_init+0x11/0x1000 [gpuvirt_selftest_warn]
[    4.644800] Call Trace:
EOF
# a console log: user space printing "WARNING:" must not count, a kernel line must
cat > "$tmp/console.log" <<'EOF'
gvinit: running the suite
gvsuite: test says WARNING: this is only user space text
[    5.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000
[    5.000001] Oops: 0000 [#1] PREEMPT SMP NOPTI
EOF
printf '<4>[   12.000000] ======================================================\n<4>[   12.000001] WARNING: possible circular locking dependency detected\n' > "$tmp/lockdep.log"
printf '[  130.000000] INFO: task modprobe:123 blocked for more than 120 seconds.\n' > "$tmp/hung.log"
printf '[    7.1] general protection fault, probably for non-canonical address 0xdead: 0000 [#1]\r\n' > "$tmp/gpf.log"

expect_scan "logscan: clean log passes" 0 '' "$tmp/clean.log"
expect_scan "logscan: WARNING fails and is quoted" 1 'WARNING at .*gpuvirt_selftest_warn_init' "$tmp/warn.log"
expect_scan "logscan: user-space text on the console is ignored" 0 '' --max 5 <(sed -n 1,2p "$tmp/console.log")
expect_scan "logscan: BUG and Oops on the console fail" 1 'BUG at .*NULL pointer' "$tmp/console.log"
expect_scan "logscan: lockdep report with <level> prefix fails" 1 'circular locking' "$tmp/lockdep.log"
expect_scan "logscan: hung task fails" 1 'hung task' "$tmp/hung.log"
expect_scan "logscan: general protection fault (CRLF) fails" 1 'GPF' "$tmp/gpf.log"
expect_scan "logscan: taint 0x1000 (O) is allowed" 0 '' --taint 0x1000 "$tmp/clean.log"
expect_scan "logscan: taint 12288 (O+E, decimal) is allowed" 0 '' --taint 12288 "$tmp/clean.log"
expect_scan "logscan: taint 0x200 (W) fails and is decoded" 1 'not allowed: W \(bit 9' --taint 0x200 "$tmp/clean.log"
expect_scan "logscan: taint 0x3280 names D and W" 1 'not allowed: D .*W ' --taint 0x3280 "$tmp/clean.log"
expect_scan "logscan: --allow-taint widens the mask" 0 '' --taint 0x200 --allow-taint 0x3200 "$tmp/clean.log"
out=$("$LOGSCAN" "$tmp/warn.log" "$tmp/warn.log" 2>&1 || true)
result "logscan: the same line in dmesg and console is reported once" \
	"$([ "$(grep -c 'WARNING at' <<<"$out")" -eq 1 ] && echo 0 || echo 1)" "$out"
expect_scan "logscan: missing file is a usage error" 2 'cannot read' "$tmp/nonexistent"

# ---- ktap-count -------------------------------------------------------------

cat > "$tmp/flat.ktap" <<'EOF'
TAP version 13
1..3
ok 1 a
not ok 2 b
ok 3 c # SKIP no hardware
EOF
expect_count "ktap-count: flat results" "1 1 1" "$tmp/flat.ktap"

# kselftest harness output nested under the runner's parent lines
cat > "$tmp/nested.ktap" <<'EOF'
TAP version 13
1..2
    TAP version 13
    1..3
    # Starting 3 tests from 1 test cases.
    ok 1 gpu.create
    ok 2 gpu.destroy # SKIP needs vfio
    ok 3 gpu.query
ok 1 gpuvirt_sim
    # plain output of a shell test
ok 2 plain.sh
EOF
expect_count "ktap-count: nested leaves are counted, not parents" "3 0 1" "$tmp/nested.ktap"

cat > "$tmp/hidden.ktap" <<'EOF'
TAP version 13
1..1
    1..2
    ok 1 x.a
    not ok 2 x.b
ok 1 x
EOF
expect_count "ktap-count: nested failure under an ok parent counts" "1 1 0" "$tmp/hidden.ktap"

cat > "$tmp/crashed.ktap" <<'EOF'
TAP version 13
1..1
    1..5
    ok 1 y.a
    ok 2 y.b
    ok 3 y.c
    # gvsuite: killed by signal 11 after 1 s
not ok 1 y
EOF
expect_count "ktap-count: 3 oks then a crash is a failure" "3 1 0" "$tmp/crashed.ktap"

cat > "$tmp/short.ktap" <<'EOF'
TAP version 13
1..1
    1..4
    ok 1 z.a
    ok 2 z.b
ok 1 z
EOF
expect_count "ktap-count: fewer nested results than planned fails" "2 1 0" "$tmp/short.ktap"

cat > "$tmp/unfinished.ktap" <<'EOF'
TAP version 13
1..3
ok 1 a
    ok 1 b.a
    ok 2 b.b
EOF
expect_count "ktap-count: unfinished test and missing results fail" "3 2 0" "$tmp/unfinished.ktap"

cat > "$tmp/parentskip.ktap" <<'EOF'
TAP version 13
1..2
    # SKIP vfio-pci not available
ok 1 t # SKIP vfio-pci not available
    not ok 1 u.a # SKIP no iommu
    not ok 2 u.b # TODO later
ok 2 u
EOF
expect_count "ktap-count: SKIP/TODO directives count as skipped" "0 0 3" "$tmp/parentskip.ktap"

got=$("$COUNT" "$tmp/flat.ktap" "$tmp/nested.ktap")
result "ktap-count: FILE... sums the files" "$([ "$got" = "4 1 2" ] && echo 0 || echo 1)" "got '$got', want '4 1 2'"

rc=0
"$COUNT" --check "$tmp/flat.ktap" > /dev/null || rc=$?
result "ktap-count: --check exits 1 on a failure" "$([ $rc -eq 1 ] && echo 0 || echo 1)" "exit $rc"

[ $n -eq $plan ] || { echo "# plan says $plan, ran $n"; exit 1; }
[ $failed -eq 0 ]
