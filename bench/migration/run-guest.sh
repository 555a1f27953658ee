#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/migration/run.sh, run by selftests/vm-run.sh --cmd:
# a simulated H200 with two H200-4C vGPUs, the simulated GPU allowed to back
# 2.5 GiB (a source and a destination with 1 GiB touched each), then
# migration_bench between them. Prints "bench:" and "raw:" lines.
set -euo pipefail

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
T=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-4C/create
A=d0000000-0000-4000-8000-00000000000a
B=d0000000-0000-4000-8000-00000000000b

modprobe -qa vfio mdev vfio_iommu_type1
insmod "$KO/kernel/core/gpuvirt.ko"
insmod "$KO/kernel/sim/gpuvirt_sim.ko" host_mem_cap_mb=2560
echo "0 h200-141gb" >/sys/bus/gpuvirt_sim/new_device
echo "$A" >"$T"
echo "$B" >"$T"
rc=0
build/bench/migration_bench "$A" "$B" ${MIGRATION_BENCH_ARGS:-} || rc=$?
echo 1 >/sys/bus/mdev/devices/$A/remove
echo 1 >/sys/bus/mdev/devices/$B/remove
echo 0 >/sys/bus/gpuvirt_sim/del_device
rmmod gpuvirt_sim gpuvirt
exit $rc
