#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Last test of the VM suite on the debug kernel (scripts/check-debug.sh):
# waits out kmemleak's minimum object age (5 s) so that the after-test check
# that follows it (selftests/debug/after-test.sh) sees a leak of the very
# last test too, and reports the state of the detectors.
set -uo pipefail

sleep 6
rc=0
echo "# taint: $(cat /proc/sys/kernel/tainted)"
if [ -r /proc/lockdep_stats ]; then
	echo "# lockdep: $(awk '$1 == "debug_locks:" { print "debug_locks " $2 }' /proc/lockdep_stats)"
else
	echo "# lockdep: not in this kernel"
	rc=1
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	echo "# kmemleak: on"
else
	echo "# kmemleak: not in this kernel"
	rc=1
fi
for a in failslab fail_page_alloc fail_function; do
	[ -d /sys/kernel/debug/$a ] || { echo "# fault injection: no $a"; rc=1; }
done
exit $rc
