#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo, as run inside the test VM by scripts/demo.sh: load the modules,
# apply a declarative file that creates a simulated H200 and slices it into
# three H200-35C vGPUs, run work on all three at once through VFIO, compare
# two scheduling policies on the same load, and show the state with
# gpuvirtctl, sysfs and debugfs. Then a second H200 goes into MIG mode,
# is cut into the balanced layout by the planner, and a MIG-backed vGPU
# runs work on its own GPU instance.
set -euo pipefail

KO=${GPUVIRT_KO_DIR:-build/$(uname -r)}
BIN=${GPUVIRT_BIN:-build/user}
CTL=$BIN/gpuvirtctl
TYPES=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types
T=$TYPES/gpuvirt_sim-H200-35C
UUIDS="5a3c0001-0000-4000-8000-000000000001 5a3c0001-0000-4000-8000-000000000002 5a3c0001-0000-4000-8000-000000000003"

run() {
	echo "\$ $*"
	"$@"
	echo
}

KNOBS=/sys/bus/gpuvirt_sim/devices/sim0/gpu/gpuvirt
DBG=/sys/kernel/debug/gpuvirt/gpus/sim0
LOAD=$BIN/selftests/vm/vgpu_load
read -r U1 U2 U3 <<<"$UUIDS"

# The scheduler's counters, all read by one grep so that they are read
# within a moment of each other: "<file>:<key>: <value>" lines.
counters() {
	grep -H -E '^(busy_ns|idle_ns|run_ns):' "$DBG/sched" "$DBG"/vgpus/*/sched
}

# val COUNTERS FILE KEY: KEY's value in FILE, from a counters() output
val() {
	sed -n "s|^$2:$3: *||p" <<<"$1"
}

pct() {
	awk -v a="$1" -v t="$2" 'BEGIN { printf "%5.1f", t ? 100 * a / t : 0 }'
}

# One policy for SECS seconds of the running load, and what each vGPU got:
# its run time over the GPU's busy + idle time, from the core's debugfs.
policy_window() {
	local policy=$1 secs=$2 u i c0 c1 busy idle run
	local -a what=("busy" "busy" "open, idle")

	echo "\$ echo $policy > $KNOBS/sched_policy; sleep $secs"
	echo "$policy" >"$KNOBS/sched_policy"
	sleep 0.3	# applies at the next decision; let the shares settle
	c0=$(counters)
	sleep "$secs"
	c1=$(counters)
	busy=$(($(val "$c1" "$DBG/sched" busy_ns) - $(val "$c0" "$DBG/sched" busy_ns)))
	idle=$(($(val "$c1" "$DBG/sched" idle_ns) - $(val "$c0" "$DBG/sched" idle_ns)))
	printf '  %-38s %-11s %s\n' "vGPU ($policy)" "load" "share of the engine"
	i=0
	for u in $UUIDS; do
		run=$(($(val "$c1" "$DBG/vgpus/$u/sched" run_ns) -
		       $(val "$c0" "$DBG/vgpus/$u/sched" run_ns)))
		printf '  %-38s %-11s %s %%\n' "$u" "${what[i]}" "$(pct $run $((busy + idle)))"
		i=$((i + 1))
	done
	printf '  %-38s %-11s %s %%  (idle %s %%)\n' "GPU sim0" "" \
		"$(pct $busy $((busy + idle)))" "$(pct $idle $((busy + idle)))"
	echo
}

# Two policies side by side on the same load: two vGPUs busy with COMPUTE
# packets (vgpu_load), the third opened by a client that submits nothing.
policies_side_by_side() {
	local loads=() u n

	if [ ! -e "$KNOBS/sched_policy" ] || [ ! -x "$LOAD" ]; then
		echo "(no scheduler in this build, or no vgpu_load: no policy comparison)"
		echo
		return 0
	fi
	echo "== scheduling policies: the same load under equal-share, then best-effort =="
	echo "\$ vgpu_load $U1 &  vgpu_load $U2 &  vgpu_load --idle $U3 &"
	"$LOAD" "$U1" --seconds 60 --compute-us 2000 --ready /tmp/demo-ready.1 &
	loads+=($!)
	"$LOAD" "$U2" --seconds 60 --compute-us 2000 --ready /tmp/demo-ready.2 &
	loads+=($!)
	"$LOAD" "$U3" --seconds 60 --idle --ready /tmp/demo-ready.3 &
	loads+=($!)
	for n in 1 2 3; do
		for _ in $(seq 100); do
			[ -e /tmp/demo-ready.$n ] && break
			sleep 0.1
		done
	done
	echo
	echo "equal-share: each open vGPU gets at most 1/3; the idle one's third stays idle"
	policy_window equal-share 3
	echo "best-effort: work-conserving round robin over the vGPUs that have work"
	policy_window best-effort 3
	run cat "$DBG/sched"
	run cat "$DBG/vgpus/$U1/sched"
	echo "\$ kill -TERM <the vgpu_load clients>  # each drains, checks every result, reports"
	for u in "${loads[@]}"; do
		kill -TERM "$u"
	done
	for u in "${loads[@]}"; do
		wait "$u"
	done
	rm -f /tmp/demo-ready.*
	echo
}


# MIG: a second H200, cut into GPU instances; a MIG-backed vGPU runs work
# on its GI, and only that GI's engines and VRAM range are touched.
mig_demo() {
	local mu=5a3c0001-0000-4000-8000-0000000000c1 gi dir
	local eng=/sys/kernel/debug/gpuvirt_sim/sim1/engine

	echo "== MIG: a second H200 in MIG mode, in the balanced layout =="
	run sh -c 'echo "1 h200-141gb" > /sys/bus/gpuvirt_sim/new_device'
	run "$CTL" mig profiles gpu 1
	run "$CTL" mig plan gpu 1 3g.71gb 2g.35gb 1g.18gbx2
	run "$CTL" mig apply gpu 1 3g.71gb 2g.35gb 1g.18gbx2
	run "$CTL" mig show gpu 1
	run ls /sys/class/mdev_bus/
	# the GI of the 3g profile, wherever the planner put it
	for dir in /sys/class/mdev_bus/sim1-gi*; do
		[ "$(cat "$dir/profile")" = 3g.71gb ] && gi=${dir##*-gi}
	done
	run "$CTL" vgpu add gpu 1 type H200-3-71C gi "$gi" uuid "$mu"
	run cat "/sys/kernel/debug/gpuvirt/gpus/sim1/gis/$gi/info"
	echo "\$ vgpu_load $mu --seconds 2    # COMPUTE work on the GI, every result checked"
	"$LOAD" "$mu" --seconds 2 --compute-us 2000
	echo
	echo "# the simulated GPU's engines: only the GI's ($(cat /sys/class/mdev_bus/sim1-gi$gi/engines)) ran"
	run grep '^engine' "$eng"
	run cat "/sys/kernel/debug/gpuvirt/gpus/sim1/gis/$gi/sched"
	echo "# the backed VRAM lies in the GI's range ($(cat /sys/class/mdev_bus/sim1-gi$gi/vram_offset) + $(cat /sys/class/mdev_bus/sim1-gi$gi/vram_size))"
	run grep backed /sys/kernel/debug/gpuvirt_sim/sim1/vram
	echo "# a GI with a vGPU cannot go, nor can MIG mode:"
	run "$CTL" mig destroy gpu 1 gi "$gi" || true
	run "$CTL" mig mode gpu 1 off || true
	run "$CTL" vgpu del uuid "$mu"
	run sh -c 'echo 1 > /sys/bus/gpuvirt_sim/del_device'
}

echo "== gpuvirt demo on $(uname -r) =="
run modprobe -a mdev vfio_iommu_type1 vfio_pci_core
run insmod "$KO/kernel/core/gpuvirt.ko"
run insmod "$KO/kernel/sim/gpuvirt_sim.ko"
run insmod "$KO/kernel/vfio_pci/gpuvirt_vfio_pci.ko"
# The set-up is one declarative file, applied by gpuvirtctl.
CONF=$(mktemp /tmp/gpuvirt-demo.XXXXXX.yaml)
cat >"$CONF" <<CONFIG
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    sched:
      policy: best-effort
    vgpus:
      - uuid: $U1
        type: H200-35C
      - uuid: $U2
        type: H200-35C
        weight: 200
      - uuid: $U3
        type: H200-35C
        max-pct: 50
CONFIG
run cat "$CONF"
run "$CTL" apply -f "$CONF" --dry-run
run "$CTL" apply -f "$CONF"
echo "# applying the same file again changes nothing:"
run "$CTL" apply -f "$CONF"
run "$CTL" assert -f "$CONF"
run "$CTL" gpu show
run "$CTL" type show gpu 0 name H200-35C
echo "\$ for t in $TYPES/*-H200-*C; do ...; done    # the C-series vGPU types, in sysfs"
for t in "$TYPES"/*-H200-*C; do
	printf '%-12s available %-3s %s\n' "$(cat "$t/name")" \
		"$(cat "$t/available_instances")" "$(cat "$t/description")"
done
echo
run "$CTL" vgpu show gpu 0
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
policies_side_by_side
echo "\$ $CTL stats --prometheus | grep -E '^gpuvirt_(vgpu_run|sched_busy)'"
"$CTL" stats --prometheus | grep -E '^gpuvirt_(vgpu_run|sched_busy)'
echo
rm -f "$CONF"
for u in $UUIDS; do
	run sh -c "echo 1 > /sys/bus/mdev/devices/$u/remove"
done
run cat "$T/available_instances"
run cat /sys/kernel/debug/gpuvirt_sim/sim0/vram
run sh -c 'echo 0 > /sys/bus/gpuvirt_sim/del_device'
mig_demo
run rmmod gpuvirt_vfio_pci gpuvirt_sim gpuvirt
echo "== demo done =="
