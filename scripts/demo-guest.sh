#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo, as run inside the test VM by scripts/demo.sh: load the modules,
# create simulated GPUs, and show them with gpuvirtctl and in debugfs.
set -euo pipefail

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
CTL=${GPUVIRT_BIN:-build/user}/gpuvirtctl

run() {
	echo "\$ $*"
	"$@"
	echo
}

echo "== gpuvirt demo on $(uname -r) =="
run modprobe mdev
run insmod "$KO/kernel/core/gpuvirt.ko"
run insmod "$KO/kernel/sim/gpuvirt_sim.ko"
run modprobe vfio_pci_core
run insmod "$KO/kernel/vfio_pci/gpuvirt_vfio_pci.ko"
run sh -c 'echo "0 h200-141gb" > /sys/bus/gpuvirt_sim/new_device'
run sh -c 'echo "1 a100-40gb" > /sys/bus/gpuvirt_sim/new_device'
run sh -c 'echo "2 custom 24G 4" > /sys/bus/gpuvirt_sim/new_device'
run ls /sys/bus/gpuvirt_sim/devices/
run "$CTL" gpu show
run "$CTL" -j -p gpu show id 0
run cat /sys/kernel/debug/gpuvirt_sim/sim0/hw
echo "\$ gpuvirtctl gpu show id 7    # a GPU that does not exist"
"$CTL" gpu show id 7 || echo "(exit status $?)"
echo
run sh -c 'echo 1 > /sys/bus/gpuvirt_sim/del_device'
run "$CTL" gpu show
run rmmod gpuvirt_vfio_pci gpuvirt_sim gpuvirt
echo "== demo done =="
