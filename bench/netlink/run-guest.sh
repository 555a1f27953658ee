#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/netlink/run.sh, run by selftests/vm-run.sh --cmd:
#  1. 32 simulated H200s with 32 H200-4C vGPUs each (1024 vGPUs): the cost
#     of one vgpu-get dump of all of them against one trivial request;
#  2. gpuvirtctl creating and destroying 100 vGPUs, against one trivial
#     request and against 200 gpuvirtctl runs that each make one.
# Prints "bench:" lines; bench/netlink/run.sh turns them into a table.
set -euo pipefail

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
CTL=${GPUVIRT_BIN:-build/user}/gpuvirtctl
NGPU=32
PER=32

ns() { date +%s%N; }

modprobe -qa mdev vfio_iommu_type1
insmod "$KO/kernel/core/gpuvirt.ko"
insmod "$KO/kernel/sim/gpuvirt_sim.ko"
for g in $(seq 0 $((NGPU - 1))); do
	echo "$g h200-141gb" >/sys/bus/gpuvirt_sim/new_device
done
for g in $(seq 0 $((NGPU - 1))); do
	t=/sys/bus/gpuvirt_sim/devices/sim$g/gpu/mdev_supported_types/gpuvirt_sim-H200-4C/create
	for i in $(seq 0 $((PER - 1))); do
		printf 'b0000000-0000-4000-8000-%04x%08x\n' "$g" "$i" >"$t"
	done
done
echo "bench: setup vgpus $(ls /sys/bus/mdev/devices | wc -l)"

build/bench/nl_bench -r 20
rt_us=$(build/bench/nl_bench -r 1 | awk '/nl_roundtrip_us/ { print $3 }')

for g in $(seq 0 $((NGPU - 1))); do
	echo "$g" >/sys/bus/gpuvirt_sim/del_device
done
for g in 0 1 2 3; do
	echo "$g h200-141gb" >/sys/bus/gpuvirt_sim/new_device
done

# 200 gpuvirtctl runs of one trivial request each: process start included
t0=$(ns)
for i in $(seq 1 200); do
	"$CTL" gpu show id 0 >/dev/null
done
per_run=$((($(ns) - t0) / 200))

t0=$(ns)
for i in $(seq 0 99); do
	"$CTL" vgpu add gpu $((i / 25)) type H200-4C \
		uuid "$(printf 'c0000000-0000-4000-8000-%012x' "$i")" >/dev/null
done
for i in $(seq 0 99); do
	"$CTL" vgpu del uuid "$(printf 'c0000000-0000-4000-8000-%012x' "$i")" >/dev/null
done
cycle=$(($(ns) - t0))
left=$(ls /sys/bus/mdev/devices | wc -l)
awk -v c="$cycle" -v rt="$rt_us" -v pr="$per_run" -v left="$left" 'BEGIN {
	printf "bench: ctl_100_create_destroy s %.2f ratio_vs_roundtrip %.0f ratio_vs_ctl_run %.1f left %d\n",
		c / 1e9, c / (rt * 1e3), c / pr, left }'

for g in 0 1 2 3; do
	echo "$g" >/sys/bus/gpuvirt_sim/del_device
done
rmmod gpuvirt_sim gpuvirt
