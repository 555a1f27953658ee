#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runner self-test: never finishes. Only run on purpose, with a short vm-run.sh
# -t, to prove the runner kills a hung guest and reports it (see
# selftests/runner-selftest.sh). Not in selftests/vm/TESTS.
echo "runner_hang: sleeping forever"
echo "runner_hang: sleeping forever" > /dev/kmsg
exec sleep infinity
