#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo, as run inside the test VM by scripts/demo.sh: load the modules,
# create a simulated H200, slice it into three H200-35C vGPUs, run work on
# all three at once through VFIO, and show the state with gpuvirtctl, sysfs
# and debugfs.
set -euo pipefail

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
BIN=${GPUVIRT_BIN:-build/user}
CTL=$BIN/gpuvirtctl
TYPES=/sys/class/mdev_bus/sim0/mdev_supported_types
T=$TYPES/gpuvirt_sim-H200-35C
UUIDS="5a3c0001-0000-4000-8000-000000000001 5a3c0001-0000-4000-8000-000000000002 5a3c0001-0000-4000-8000-000000000003"

run() {
	echo "\$ $*"
	"$@"
	echo
}

echo "== gpuvirt demo on $(uname -r) =="
run modprobe -a mdev vfio_iommu_type1 vfio_pci_core
run insmod "$KO/kernel/core/gpuvirt.ko"
run insmod "$KO/kernel/sim/gpuvirt_sim.ko"
run insmod "$KO/kernel/vfio_pci/gpuvirt_vfio_pci.ko"
run sh -c 'echo "0 h200-141gb" > /sys/bus/gpuvirt_sim/new_device'
run "$CTL" gpu show
echo "\$ for t in $TYPES/*-H200-*C; do ...; done    # the C-series vGPU types"
for t in "$TYPES"/*-H200-*C; do
	printf '%-12s available %-3s %s\n' "$(cat "$t/name")" \
		"$(cat "$t/available_instances")" "$(cat "$t/description")"
done
echo
for u in $UUIDS; do
	run sh -c "echo $u > $T/create"
done
run cat "$T/available_instances"
run cat "$TYPES/gpuvirt_sim-H200-70C/available_instances"
run ls /sys/bus/mdev/devices/
echo "\$ vgpu_work UUID &  (x3: three vGPUs share the engine)"
pids=""
for u in $UUIDS; do
	"$BIN/selftests/vm/vgpu_work" "$u" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
done
echo
run cat /sys/kernel/debug/gpuvirt_sim/sim0/vram
for u in $UUIDS; do
	run sh -c "echo 1 > /sys/bus/mdev/devices/$u/remove"
done
run cat "$T/available_instances"
run cat /sys/kernel/debug/gpuvirt_sim/sim0/vram
run sh -c 'echo 0 > /sys/bus/gpuvirt_sim/del_device'
run rmmod gpuvirt_vfio_pci gpuvirt_sim gpuvirt
echo "== demo done =="
