#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run in the debug-kernel guest after every VM test (GPUVIRT_VM_AFTER_TEST of
# selftests/vm-run.sh, DIR/after-test of selftests/lib/guest-suite.sh).
#
# Usage: selftests/debug/after-test.sh [--ktap] [--lockdep-only] N NAME
#
# --ktap is for a KTAP producer that counts this check as its test N
# (selftests/debug/commands.sh, fail-nth.sh): it waits 6 s first, kmemleak's
# minimum object age, prints what it found as "# after: " lines, then
# "ok N leaks after NAME" or "not ok N ...".
#
# --lockdep-only checks lockdep alone: two kmemleak scans cost 15 to 35 s
# under TCG, and make check's debug lane scans once, after its last test
# (scripts/check-debug.sh); a leak is then reported there, with the stack
# that allocated it.
#
# Fails (exit 1) when
#  - kmemleak reports an unreferenced object that our modules allocated: its
#    backtrace names a gpuvirt symbol, or holds a bare module-space address
#    (an unloaded module's code: our tests unload gpuvirt, so its leaks
#    usually look like that);
#  - lockdep switched itself off (debug_locks: 0 in /proc/lockdep_stats),
#    which it does after its first report or any KASAN report; reported once.
# Other kmemleak objects (the kernel's own) are listed but do not fail.
# Every reported object is then cleared, so that the next test starts clean.
#
# kmemleak reports an object only after two scans and only once it is 5 s
# old, so a leak at the very end of a test may be blamed on the next one;
# selftests/debug/final-check.sh, run last, waits and scans once more.
set -uo pipefail

scan=1
ktap=0
while :; do
	case ${1:-} in
	--lockdep-only) scan=0 ;;
	--ktap) ktap=1 ;;
	*) break ;;
	esac
	shift
done
n=${1:-?}
name=${2:-?}
kl=/sys/kernel/debug/kmemleak

if [ $ktap = 1 ]; then
	sleep 6
	opts=()
	[ $scan = 1 ] || opts+=(--lockdep-only)
	out=$("$0" ${opts[@]+"${opts[@]}"} "$n" "$name" 2>&1)
	rc=$?
	[ -z "$out" ] || sed 's/^/# after: /' <<<"$out"
	if [ $rc -eq 0 ]; then
		echo "ok $n leaks after $name"
	else
		echo "not ok $n leaks after $name # leak/lockdep check exit $rc"
	fi
	exit $rc
fi

rc=0

if [ -r /proc/lockdep_stats ]; then
	dl=$(awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats)
	if [ "$dl" = 0 ] && [ ! -e /run/gvdebug.locks-off ]; then
		: > /run/gvdebug.locks-off
		echo "lockdep is off (debug_locks: 0): a lockdep or KASAN report during test $n $name switched it off"
		rc=1
	fi
fi

[ $scan = 1 ] || exit $rc
if [ ! -e $kl ]; then
	echo "no $kl: kmemleak is not enabled in this kernel"
	exit $rc
fi

s0=$(date +%s%N)
if ! { echo scan > $kl && echo scan > $kl; }; then
	echo "kmemleak scan failed (disabled after an error?)"
	exit 1
fi
rep=$(mktemp)
cat $kl > "$rep"
echo clear > $kl
ms=$((($(date +%s%N) - s0) / 1000000))

# One record: "unreferenced object 0x... (size N):" and indented lines.
awk -v ms="$ms" '
function flush() {
	if (rec == "")
		return
	if (bt ~ /gpuvirt/ || bt ~ /\] 0xffffffff(a|b|c|d|e|f)[0-9a-f]+/) {
		ours++
		printf "%s", rec
	} else {
		other++
		if (other <= 3)
			printf "(not ours) %s", head
	}
	rec = ""
	bt = ""
}
/^unreferenced object/ { flush(); head = $0 "\n" }
/^ +\[</ { bt = bt $0 "\n" }
{ if ($0 != "") rec = rec $0 "\n" }
END {
	flush()
	printf "kmemleak: %d leak(s) of ours, %d other object(s), 2 scans in %d ms\n", ours, other, ms
	exit ours > 0
}' "$rep" || rc=1
rm -f "$rep"
exit $rc
