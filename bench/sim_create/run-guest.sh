#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest side of bench/sim_create/run.sh: SIM_GPUS simulated GPUs made
# and deleted SIM_ROUNDS times, each round also making one vGPU on each.
# Prints "bench:" lines: ms per GPU create and delete, ms per vGPU create,
# their ratio, and the kernel memory (Slab + page tables + vmalloc'd
# per-cpu areas, from /proc/meminfo) per GPU while they exist.
set -eu

cd "${GPUVIRT_SRC:-.}"
KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
N=${SIM_GPUS:-50}
R=${SIM_ROUNDS:-3}
BUS=/sys/bus/gpuvirt_sim

modprobe mdev
modprobe vfio_iommu_type1
insmod "$KO/kernel/core/gpuvirt.ko"
insmod "$KO/kernel/sim/gpuvirt_sim.ko"

now_ns() { date +%s%N; }
kmem_kb() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	awk '/^(Slab|PageTables|Percpu):/ { s += $2 } END { print s }' /proc/meminfo
}

for r in $(seq 1 "$R"); do
	m0=$(kmem_kb)
	t0=$(now_ns)
	for i in $(seq 0 $((N - 1))); do
		echo "$i custom 2G 1" >$BUS/new_device
	done
	t1=$(now_ns)
	m1=$(kmem_kb)
	for i in $(seq 0 $((N - 1))); do
		printf '00000000-0000-4000-8000-%012x\n' "$i" \
			>$BUS/devices/sim$i/gpu/mdev_supported_types/gpuvirt_sim-CUSTOM-1C/create
	done
	t2=$(now_ns)
	for i in $(seq 0 $((N - 1))); do
		echo 1 >/sys/bus/mdev/devices/"$(printf '00000000-0000-4000-8000-%012x' "$i")"/remove
	done
	t3=$(now_ns)
	for i in $(seq 0 $((N - 1))); do
		echo "$i" >$BUS/del_device
	done
	t4=$(now_ns)
	lspci -D 2>/dev/null | grep -q '^80' && { echo "bench: GPUs left after round $r"; exit 1; }
	awk -v n="$N" -v r="$r" -v c=$((t1 - t0)) -v v=$((t2 - t1)) -v d=$((t4 - t3)) \
		-v m=$((m1 - m0)) 'BEGIN {
		printf "bench: round %d: %d GPUs: create %.2f ms/GPU, delete %.2f ms/GPU, vGPU create %.2f ms/vGPU, GPU/vGPU create ratio %.2f, kernel memory %.0f kB/GPU\n",
			r, n, c / n / 1e6, d / n / 1e6, v / n / 1e6, c / v, m / n }'
done
rmmod gpuvirt_sim gpuvirt
