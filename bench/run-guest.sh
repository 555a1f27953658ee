#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of the benchmarks: runs inside the test VM (bench/run.sh boots
# it through selftests/vm-run.sh --cmd), cwd = the repo. Loads the modules,
# creates a simulated H200 and one H200-35C vGPU, loads the kernel's mtty
# sample (the vgpu_lifecycle baseline) when it was built, runs
# build/bench/vgpu_bench, then removes everything it created.
#
# When vgpu_lifecycle_sriov is among those run (--only sriov, or all), it
# first creates two more simulated H200s, sim1 in the mdev model and sim2 in
# the sriov model with one VF enabled, and hands them to vgpu_bench
# (BENCH_SRIOV_MDEV_GPU, BENCH_SRIOV_VF; BENCH_SRIOV_WHY when that failed).
#
# When the doorbell benchmark is among those run, it then runs again with
# busy neighbours: NEIGHBOURS more H200-35C vGPUs, each kept busy by
# build/user/selftests/vm/vgpu_load (2 ms COMPUTE packets), once under each
# scheduling policy (doorbell_latency_busyN_POLICY).
#
# Usage: bench/run-guest.sh [--neighbours N] [vgpu_bench options]
#        (see bench/vgpu_bench.c; --neighbours 0 skips the busy runs;
#        default 3, as many as an H200 has left beside the benchmark's vGPU)
set -u

NEIGHBOURS=3
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--neighbours) NEIGHBOURS=${2:?--neighbours needs a number}; shift 2 ;;
	*) args+=("$1"); shift ;;
	esac
done
set -- ${args[@]+"${args[@]}"}

cd "${GPUVIRT_SRC:-.}" || exit 1
KVER=${KVER:-$(uname -r)}
KO=${GPUVIRT_KO_DIR:-build/$KVER}
BIN=build/bench/vgpu_bench
LOAD=build/user/selftests/vm/vgpu_load
KNOBS=/sys/bus/gpuvirt_sim/devices/sim0/gpu/gpuvirt
LOAD_PIDS=()
MTTY_KO=build/$KVER/bench/mtty/mtty.ko
UUID=b3e5c0de-0000-4000-8000-0000000000a1
TYPE=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C

say() { echo "run-guest: $*"; }

cleanup() {
	local d
	[ ${#LOAD_PIDS[@]} -eq 0 ] || kill "${LOAD_PIDS[@]}" 2>/dev/null
	wait
	for d in /sys/bus/mdev/devices/b3e5c0de-*; do
		[ -e "$d/remove" ] && echo 1 >"$d/remove"
	done
	for d in 2 1; do	# the vgpu_lifecycle_sriov GPUs; VFs go with sim2
		[ -e "/sys/bus/gpuvirt_sim/devices/sim$d" ] &&
			echo "$d" >/sys/bus/gpuvirt_sim/del_device
	done
	[ -e /sys/bus/gpuvirt_sim/del_device ] && [ -e /sys/bus/gpuvirt_sim/devices/sim0/gpu ] &&
		echo 0 >/sys/bus/gpuvirt_sim/del_device
	rmmod mtty gpuvirt_sim gpuvirt 2>/dev/null
	return 0
}
trap cleanup EXIT

if [ ! -x "$BIN" ] || [ ! -e "$KO/kernel/core/gpuvirt.ko" ]; then
	say "missing $BIN or $KO/kernel/core/gpuvirt.ko: run bench/run.sh on the host"
	exit 1
fi

say "kernel $KVER, $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)," \
	"THP $(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"

modprobe vfio && modprobe mdev && modprobe vfio_iommu_type1 &&
	insmod "$KO/kernel/core/gpuvirt.ko" && insmod "$KO/kernel/sim/gpuvirt_sim.ko" &&
	echo "0 h200-141gb" >/sys/bus/gpuvirt_sim/new_device &&
	echo "$UUID" >"$TYPE/create" || {
	say "could not load the modules or create the vGPU"
	exit 1
}
say "simulated H200 sim0, vGPU H200-35C $UUID;" \
	"host_mem_cap_mb=$(cat /sys/module/gpuvirt_sim/parameters/host_mem_cap_mb)"

# The baseline of vgpu_lifecycle. A missing one is reported, never faked.
export BENCH_MTTY_WHY=""
if [ ! -e "$MTTY_KO" ]; then
	BENCH_MTTY_WHY="$MTTY_KO was not built (bench/run.sh builds it)"
elif ! out=$(insmod "$MTTY_KO" 2>&1); then
	BENCH_MTTY_WHY="insmod $MTTY_KO failed: $out"
elif [ ! -e /sys/class/mdev_bus/mtty/mdev_supported_types/mtty-2/create ]; then
	BENCH_MTTY_WHY="mtty loaded but has no mdev type mtty-2"
else
	say "mtty sample loaded from $(cat "${MTTY_KO%/*}/source" 2>/dev/null || echo "$MTTY_KO")"
fi
[ -z "$BENCH_MTTY_WHY" ] || say "no mtty baseline: $BENCH_MTTY_WHY"

only=all
for ((i = 1; i <= $#; i++)); do
	[ "${!i}" = --only ] && { j=$((i + 1)); only=${!j:-}; }
done

# ---- vgpu_lifecycle_sriov: one GPU per vGPU model, both H200s ----
# A GPU is in one vGPU model at a time: the mdev side gets sim1, the
# SR-IOV side sim2 (PCI 8002:00:00.0) with one VF. Neither has anything
# else on it. A failure is reported by vgpu_bench as n/a with the reason.
sriov_setup() {
	local bus=/sys/bus/gpuvirt_sim pf vf drv
	echo "1 h200-141gb" >$bus/new_device && echo "2 h200-141gb" >$bus/new_device ||
		{ BENCH_SRIOV_WHY="cannot create simulated H200s sim1 and sim2"; return 1; }
	BENCH_SRIOV_MDEV_GPU=$(basename "$(readlink -f $bus/devices/sim1/gpu)")
	pf=/sys/bus/pci/devices/$(basename "$(readlink -f $bus/devices/sim2/gpu)")
	[ -e "$pf/gpuvirt/vgpu_model" ] && [ -e "$pf/sriov_numvfs" ] ||
		{ BENCH_SRIOV_WHY="sim2 ($pf) has no gpuvirt/vgpu_model or sriov_numvfs"; return 1; }
	echo sriov >"$pf/gpuvirt/vgpu_model" ||
		{ BENCH_SRIOV_WHY="cannot switch sim2 to the sriov vGPU model"; return 1; }
	echo 1 >"$pf/sriov_numvfs" && [ -e "$pf/virtfn0" ] ||
		{ BENCH_SRIOV_WHY="cannot enable a VF on sim2"; return 1; }
	vf=$(basename "$(readlink -f "$pf/virtfn0")")
	drv=$(basename "$(readlink "/sys/bus/pci/devices/$vf/driver" 2>/dev/null)")
	[ -e "/sys/bus/pci/devices/$vf/gpuvirt/current_vgpu_type" ] ||
		{ BENCH_SRIOV_WHY="VF $vf (driver '$drv') has no gpuvirt/current_vgpu_type"; return 1; }
	BENCH_SRIOV_VF=$vf
	say "vgpu_lifecycle_sriov: mdev side sim1 $BENCH_SRIOV_MDEV_GPU," \
		"SR-IOV side sim2 ${pf##*/} VF $vf (driver $drv)"
}
export BENCH_SRIOV_WHY="" BENCH_SRIOV_VF="" BENCH_SRIOV_MDEV_GPU=""
case $only in
all|*sriov*)
	sriov_setup || say "vgpu_lifecycle_sriov: $BENCH_SRIOV_WHY" ;;
esac

"$BIN" --uuid "$UUID" "$@"
rc=$?

# ---- the doorbell again, with busy neighbours, under each policy ----
busy_neighbours() {
	local i u p ready
	[ -x "$LOAD" ] || { say "no $LOAD (make vm-tests): no busy-neighbour runs"; return 1; }
	for i in $(seq 1 "$NEIGHBOURS"); do
		u=$(printf 'b3e5c0de-0000-4000-8000-0000000001%02x' "$i")
		echo "$u" >"$TYPE/create" || { say "cannot create neighbour $i"; return 1; }
		rm -f "/tmp/bench-load.$i"
		"$LOAD" "$u" --seconds 0 --compute-us 2000 --quiet \
			--ready "/tmp/bench-load.$i" &
		LOAD_PIDS+=($!)
	done
	for i in $(seq 1 "$NEIGHBOURS"); do
		for _ in $(seq 300); do
			[ -e "/tmp/bench-load.$i" ] && break
			sleep 0.1
		done
		[ -e "/tmp/bench-load.$i" ] || { say "neighbour $i never started"; return 1; }
	done
	say "$NEIGHBOURS busy neighbours (vgpu_load, 2 ms COMPUTE packets)," \
		"slice $(cat "$KNOBS/sched_slice_us") us"
	for p in best-effort equal-share fixed-share; do
		echo "$p" >"$KNOBS/sched_policy" || { say "cannot set policy $p"; return 1; }
		# each op waits for the neighbours' turns: fewer ops and rounds
		"$BIN" --uuid "$UUID" --only doorbell -r 7 -d 20 \
			--label "busy${NEIGHBOURS}_${p//-/_}" || return 1
	done
	echo best-effort >"$KNOBS/sched_policy"
	kill -TERM "${LOAD_PIDS[@]}"
	ready=0
	for p in "${LOAD_PIDS[@]}"; do
		wait "$p" || ready=1
	done
	LOAD_PIDS=()
	[ $ready -eq 0 ] || { say "a vgpu_load reported a failure"; return 1; }
}
case $only in
all|*doorbell*)
	if [ "$NEIGHBOURS" -gt 0 ]; then
		say "default policy $(cat "$KNOBS/sched_policy" 2>/dev/null)"
		busy_neighbours || rc=1
	fi
	;;
esac
say "backed VRAM after the run: $(grep backed_pages /sys/kernel/debug/gpuvirt_sim/sim0/vram 2>/dev/null)"
exit $rc
