#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The backend contract is checked whole: a backend that registers a GPU
# without one of the ops of struct gpuvirt_backend_ops, or on a device that
# does not carry the core's sysfs groups, is refused with -EINVAL and a
# message naming what is missing; the same GPU complete registers. The
# test-only backend selftests/modules/backend (make test-modules) makes
# every such GPU at load, and loads only if each came out as it must.
#
# Runs as root in the test VM (selftests/vm-run.sh). Prints KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

OPS="name vram_page vram_zero vram_discard vram_next exec engine_reset reset"
LOG=$T/log
vmt_ko MOD gpuvirt_selftest_backend

vmt_need_modules gpuvirt_selftest_backend
vmt_on_exit vmt_unload gpuvirt_selftest_backend gpuvirt

vmt_load gpuvirt || exit 1

ktap_plan $(($(echo $OPS | wc -w) + 4))

before=$(dmesg | wc -l)
insmod "$MOD"
rc=$?
dmesg | tail -n +$((before + 1)) >"$LOG"
ktap_check "the test backend loads: every case came out as it must" \
	test $rc -eq 0
for op in $OPS; do
	ktap_check "a GPU without '$op' is refused with -EINVAL, naming the op" \
		sh -c "grep -q 'gpuvirt_selftest_backend: without $op: -22' '$LOG' &&
		       grep -q \"the backend has no '$op' op\" '$LOG'"
done
ktap_check "a GPU whose device lacks the core's groups is refused" \
	sh -c "grep -q 'without gpuvirt_gpu_groups: -22' '$LOG' &&
	       grep -q 'does not carry gpuvirt_gpu_groups' '$LOG'"
ktap_check "the complete GPU registers" \
	grep -q 'gpuvirt_selftest_backend: complete: 0' "$LOG"
ktap_check "no refused GPU was left registered (none in debugfs)" \
	sh -c "! ls /sys/kernel/debug/gpuvirt/gpus/ 2>/dev/null | grep -q ."
ktap_finish
