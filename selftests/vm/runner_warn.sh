#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runner self-test: loads gpuvirt_selftest_warn.ko, whose init does a WARN(),
# to prove that the runner fails a run whose kernel log holds a WARNING (see
# selftests/runner-selftest.sh, which builds the module). Not in
# selftests/vm/TESTS. Exits 0 itself: the failure must come from the runner.
set -euo pipefail

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh"
vmt_init
vmt_ko ko gpuvirt_selftest_warn
# a failure, not a skip: without the module the run proves nothing
if [ ! -e "$ko" ]; then
	echo "runner_warn: $ko is not built; selftests/runner-selftest.sh builds it" >&2
	exit 1
fi
insmod "$ko"
rmmod gpuvirt_selftest_warn
echo "runner_warn: module loaded and unloaded"
