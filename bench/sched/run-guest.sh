#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of the scheduler benchmark: runs inside the test VM
# (bench/sched/run.sh boots it through selftests/vm-run.sh --cmd), cwd = the
# repo, which is read-only here; scratch files go to /tmp.
#
# Loads the modules, creates a simulated H200 with eight H200-17C vGPUs
# (max_instances 8) and measures the scheduler with real VFIO clients
# (build/user/selftests/vm/vgpu_load, one process per vGPU); then puts the
# GPU in MIG mode (build/user/gpuvirtctl) and measures what GPU instances
# deliver per wall second. Prints one
# line per measure, "row<TAB>measure<TAB>run in<TAB>value<TAB>goal<TAB>met",
# the format of bench/sched/policy_sim, and "note: ..." lines. Every value is
# a ratio; see bench/sched/README.md for the definitions.
#
# Usage: bench/sched/run-guest.sh [WINDOW_S]   (default 10)
set -euo pipefail

cd "${GPUVIRT_SRC:-.}"
KVER=${KVER:-$(uname -r)}
KO=${GPUVIRT_KO_DIR:-build/$KVER}
LOAD=build/user/selftests/vm/vgpu_load
CTL=build/user/gpuvirtctl
WIN=${1:-10}
GPU=sim0
N=8
TYPE=/sys/bus/gpuvirt_sim/devices/$GPU/gpu/mdev_supported_types/gpuvirt_sim-H200-17C
KNOBS=/sys/bus/gpuvirt_sim/devices/$GPU/gpu/gpuvirt
DBG=/sys/kernel/debug/gpuvirt/gpus/$GPU
RUN_IN="VM ${KVER%%-*}"
TMP=$(mktemp -d /tmp/bench-sched.XXXXXX)
UUIDS=()
for i in $(seq 1 $N); do
	UUIDS+=("$(printf 'b5c4ed00-0000-4000-8000-%012x' "$i")")
done
PIDS=()
M_SHARE="share error, equal-share, 8 busy (largest deviation from 1/8)"
M_WC="work conservation, best-effort, 8 bursty (busy / some vGPU has work)"
M_ISO="isolation, fixed-share (victim work with 7 noisy / alone)"
M_ISO_T="isolation, fixed-share (victim engine time with 7 noisy / alone)"
M_SW="switch overhead, best-effort, 1 ms slices, 8 busy (idle / engine time)"
M_CPU="scheduler CPU, 1 ms slices, 8 busy (deciding and accounting, % of a core)"
M_ENG="engine thread CPU, 1 ms slices, 8 busy (scheduler + simulated execution, % of a core)"
M_EQBE="equal-share / best-effort, 8 busy, work per wall second"
M_MIG_CAP="MIG, seven busy 1g GIs / one 7g GI, work per wall second"
M_MIG_ISO="MIG isolation, victim 1g GI with 3 busy neighbours / alone, work per wall second"

note() { echo "note: $*"; }

# row MEASURE VALUE GOAL MET; a measure during which a client failed (a
# wrong result, a lost packet) has not met its goal, whatever its value
CLIENT_FAILED=0
row() {
	local m=$4
	[ $CLIENT_FAILED -eq 0 ] || m="no (a client failed)"
	printf 'row\t%s\t%s\t%s\t%s\t%s\n' "$1" "$RUN_IN" "$2" "$3" "$m"
	CLIENT_FAILED=0
}

stop_loads() {
	local p rc=0
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		wait "$p" || rc=1
	done
	PIDS=()
	return $rc
}

cleanup() {
	local u
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		kill -KILL "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	for u in "${UUIDS[@]}"; do
		[ -e "/sys/bus/mdev/devices/$u/remove" ] && echo 1 >"/sys/bus/mdev/devices/$u/remove"
	done
	[ -e /sys/bus/gpuvirt_sim/devices/$GPU ] && echo 0 >/sys/bus/gpuvirt_sim/del_device
	rmmod gpuvirt_sim gpuvirt 2>/dev/null || true
	rm -rf "$TMP"
}
trap cleanup EXIT

# NOW = CLOCK_REALTIME in ns, the clock of vgpu_load's traces, read without
# a fork (a fork costs ms under TCG, which would blur the window's ends).
stamp() {
	local t=${EPOCHREALTIME/,/.}
	NOW=$((${t%.*} * 1000000000 + 10#${t#*.} * 1000))
}

# Snapshot of the GPU and its vGPUs into $TMP/snap.NAME, "key value" lines,
# the vGPUs' keys as run_ns:UUID. All counters are read by one grep, so
# that they are read within a moment of each other.
snap() {
	local t0
	stamp
	t0=$NOW
	{
		grep -H -E '^(busy_ns|idle_ns|lag_ns|switches|switch_ns|decide_ns|run_ns|work_ns):' \
			${GSCHED[@]+"${GSCHED[@]}"} "${VSCHED[@]}" |
			sed -E 's|^.*/vgpus/([^/]*)/sched:([a-z_]*): *|\2:\1 |; s|^.*/sched:([a-z_]*): *|\1 |'
		stamp
		# the time of the counters: between the reads before and after
		echo "t $(((t0 + NOW) / 2))"
		echo "cpu $(kthread_ticks)"
	} >"$TMP/snap.$1"
}

# delta A B KEY: B's value minus A's
delta() {
	awk -v k="$3" '$1 == k { v[FILENAME] = $2 }
		END { printf "%.0f\n", v[ARGV[2]] - v[ARGV[1]] }' "$TMP/snap.$1" "$TMP/snap.$2"
}

# The pids of the GPU's engine thread(s), "gpuvirt/8000:00:00.0": the
# thread is named after the mdev parent, the GPU's PCI function ($GPU/gpu),
# not the sim device; a kernel that shows only TASK_COMM_LEN of it has
# "gpuvirt/8000:00", which still names one sim id. No forks.
engine_pids() {
	local p c n=gpuvirt/$DEVNAME
	for p in /proc/[0-9]*; do
		{ read -r c <"$p/comm"; } 2>/dev/null || continue
		case $c in
		"$n"|"$n/"*|"${n:0:15}") echo "${p#/proc/}" ;;
		esac
	done
}

# CPU ticks (utime + stime) of the engine thread(s); no forks.
kthread_ticks() {
	local p stat sum=0 f
	for p in ${EPIDS[@]+"${EPIDS[@]}"}; do
		{ read -r stat <"/proc/$p/stat"; } 2>/dev/null || continue
		# after "(comm) ": state is f[0], utime f[11], stime f[12]
		read -r -a f <<<"${stat##*) }"
		sum=$((sum + f[11] + f[12]))
	done
	echo $sum
}

# start_load I ARGS...: vgpu_load on vGPU I in the background
start_load() {
	local i=$1
	shift
	rm -f "$TMP/ready.$i"
	"$LOAD" "${UUIDS[i]}" --quiet --ready "$TMP/ready.$i" "$@" &
	PIDS+=($!)
}

# Wait until every load rang its first doorbell, then 300 ms of warm-up.
wait_ready() {
	local i
	for i in "$@"; do
		for _ in $(seq 300); do
			[ -e "$TMP/ready.$i" ] && break
			sleep 0.1
		done
		[ -e "$TMP/ready.$i" ] || { note "vgpu_load $i never started"; return 1; }
	done
	sleep 0.3
}

# met VALUE OP GOAL -> yes/no
met() {
	awk -v v="$1" -v g="$3" -v op="$2" 'BEGIN {
		ok = (op == "<=") ? (v <= g) : (v >= g); print ok ? "yes" : "no" }'
}

# ---- set-up ----
note "kernel $KVER, $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
[ -x "$LOAD" ] || { note "missing $LOAD: run bench/sched/run.sh on the host"; exit 1; }
modprobe -a vfio mdev vfio_iommu_type1
insmod "$KO/kernel/core/gpuvirt.ko"
insmod "$KO/kernel/sim/gpuvirt_sim.ko"
echo "0 h200-141gb" >/sys/bus/gpuvirt_sim/new_device
for u in "${UUIDS[@]}"; do
	echo "$u" >"$TYPE/create"
done
if [ ! -e "$KNOBS/sched_policy" ] || [ ! -e "$DBG/sched" ]; then
	note "no scheduler in this build ($KNOBS/sched_policy or $DBG/sched missing)"
	for m in "$M_SHARE" "$M_WC" "$M_ISO" "$M_ISO_T" "$M_SW" "$M_CPU"; do
		row "$m" "n/a" "-" "no"
	done
	exit 1
fi
note "simulated H200 $GPU, $N x H200-17C, window $WIN s"
GSCHED=("$DBG/sched")
VSCHED=()
for u in "${UUIDS[@]}"; do
	VSCHED+=("$DBG/vgpus/$u/sched")
done
DEVNAME=$(readlink /sys/bus/gpuvirt_sim/devices/$GPU/gpu)
DEVNAME=${DEVNAME##*/}
mapfile -t EPIDS < <(engine_pids)
[ ${#EPIDS[@]} -gt 0 ] || note "no engine thread gpuvirt/$DEVNAME found: the CPU row is 0"
mapfile -t ALL < <(seq 0 $((N - 1)))
NEIGHBOURS=("${ALL[@]:1}")

# ---- 1. share error: equal-share, all eight busy ----
echo equal-share >"$KNOBS/sched_policy"
echo 0 >"$KNOBS/sched_slice_us"
for i in "${ALL[@]}"; do
	start_load "$i" --seconds 300 --compute-us 2000
done
wait_ready "${ALL[@]}"
snap a
sleep "$WIN"
snap b
# the same loads under best-effort, switched in live, for the next row
echo best-effort >"$KNOBS/sched_policy"
sleep 0.3
snap c
sleep "$WIN"
snap d
stop_loads || { note "share error: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
failed=$CLIENT_FAILED
total=$(( $(delta a b busy_ns) + $(delta a b idle_ns) ))
err=0
for i in "${ALL[@]}"; do
	err=$(awk -v r="$(delta a b "run_ns:${UUIDS[i]}")" -v t="$total" -v e="$err" -v n=$N 'BEGIN {
		d = 100 * r / t - 100 / n; if (d < 0) d = -d; printf "%.2f", (d > e) ? d : e }')
done
busy=$(awk -v b="$(delta a b busy_ns)" -v t="$total" 'BEGIN { printf "%.1f", 100 * b / t }')
note "equal-share, 8 busy: GPU busy $busy %"
row "$M_SHARE" "$err pp" "report" "info"

# ---- 1b. equal-share against best-effort, per wall second ----
# The modelled work all eight completed per second of wall time, in the
# equal-share window over the best-effort one that followed it with the
# same loads. The VM test gpuvirt_sched judges the same two policies in
# modelled time, where both give the whole GPU; per wall second, each
# window is also scaled by the engine's lag in it (the host's CPU), which
# this row shows beside it.
# work_rate A B: the eight vGPUs' work_ns per wall ns between A and B
work_rate() {
	local i sum=0
	for i in "${ALL[@]}"; do
		sum=$((sum + $(delta "$1" "$2" "work_ns:${UUIDS[i]}")))
	done
	awk -v w="$sum" -v t="$(delta "$1" "$2" t)" 'BEGIN { printf "%.6f", t ? w / t : 0 }'
}
eq=$(work_rate a b)
be=$(work_rate c d)
note "equal-share / best-effort, 8 busy: work per wall second $eq and $be;" \
	"lag $(awk -v l="$(delta a b lag_ns)" -v t="$(delta a b t)" 'BEGIN { printf "%.3f", t ? l / t : 0 }')" \
	"and $(awk -v l="$(delta c d lag_ns)" -v t="$(delta c d t)" 'BEGIN { printf "%.3f", t ? l / t : 0 }') of the wall time"
CLIENT_FAILED=$failed
row "$M_EQBE" "$(awk -v e="$eq" -v b="$be" 'BEGIN { printf "%.3f", b ? e / b : 0 }')" "report" "info"

# ---- 2. work conservation: best-effort, bursty loads ----
echo best-effort >"$KNOBS/sched_policy"
for i in "${ALL[@]}"; do
	start_load "$i" --seconds 300 --compute-us 1000 --depth-us 10000 \
		--burst-ms 100:700 --trace "$TMP/trace.$i"
done
wait_ready "${ALL[@]}"
snap a
grep -h '^wait_hist_us:' "${VSCHED[@]}" >"$TMP/waits.a"
sleep "$WIN"
snap b
grep -h '^wait_hist_us:' "${VSCHED[@]}" >"$TMP/waits.b"
stop_loads || { note "work conservation: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
t0=$(awk '$1 == "t" { print $2 }' "$TMP/snap.a")
t1=$(awk '$1 == "t" { print $2 }' "$TMP/snap.b")
# the union of the intervals in which some vGPU had work, inside [t0, t1]
union=$(cat "$TMP"/trace.* | awk -v t0="$t0" -v t1="$t1" '{
		s = $1; e = $2; if (s < t0) s = t0; if (e > t1) e = t1
		if (e > s) printf "%.0f %.0f\n", s, e }' | sort -n -k1,1 |
	awk 'NR == 1 { s = $1; e = $2; next }
		{ if ($1 <= e) { if ($2 > e) e = $2 } else { tot += e - s; s = $1; e = $2 } }
		END { if (NR) tot += e - s; printf "%.0f\n", tot }')
wc=$(awk -v b="$(delta a b busy_ns)" -v u="$union" 'BEGIN { printf "%.1f", u ? 100 * b / u : 0 }')
note "bursty: some vGPU had work $(awk -v u="$union" -v w="$((t1 - t0))" 'BEGIN { printf "%.1f", 100 * u / w }') % of the window"
# doorbell-to-first-run waits in the window, all vGPUs: "<=B us: N" per bucket
note "bursty: waits $(awk '{ for (i = 2; i <= NF; i++) { split($i, kv, ":")
		if (FILENAME == ARGV[1]) n[kv[1]] -= kv[2]; else n[kv[1]] += kv[2]
		if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++k] = kv[1] } } }
	END { for (i = 1; i <= k; i++) printf "%s%s:%d", (i > 1 ? " " : ""), order[i], n[order[i]] }' \
	"$TMP/waits.a" "$TMP/waits.b") (bucket B counts waits <= B us)"
row "$M_WC" "$wc %" ">= 99 %" "$(met "$wc" ">=" 99)"

# ---- 3. isolation: fixed-share, victim alone vs with 7 noisy neighbours ----
# The victim's modelled work completed per unit of engine (wall) time, over
# a window alone and a window of the same length with its neighbours busy,
# both in steady state: the clients' start-up and drain stay outside.
echo fixed-share >"$KNOBS/sched_policy"
v=${UUIDS[0]}
start_load 0 --seconds 300 --compute-us 2000
wait_ready 0
snap ia
sleep "$WIN"
snap ib
for i in "${NEIGHBOURS[@]}"; do
	start_load "$i" --seconds 300 --compute-us 2000
done
wait_ready "${NEIGHBOURS[@]}"
snap na
sleep "$WIN"
snap nb
stop_loads || { note "isolation: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
# rate PHASE KEY: KEY's delta for the victim over the phase's engine time
rate() {
	awk -v x="$(delta "${1}a" "${1}b" "$2:$v")" \
		-v t="$(($(delta "${1}a" "${1}b" busy_ns) + $(delta "${1}a" "${1}b" idle_ns)))" \
		'BEGIN { printf "%.6f", t ? x / t : 0 }'
}
iso=$(awk -v a="$(rate i work_ns)" -v b="$(rate n work_ns)" 'BEGIN { printf "%.3f", a ? b / a : 0 }')
for ph in i n; do
	note "isolation, victim $([ $ph = i ] && echo alone || echo "with neighbours"):" \
		"$(awk -v r="$(rate $ph run_ns)" -v w="$(rate $ph work_ns)" 'BEGIN {
			printf "%.1f %% of engine time, modelled work / run time %.2f",
			       100 * r, r ? w / r : 0 }')"
done
failed=$CLIENT_FAILED
row "$M_ISO" "$iso" ">= 0.99" "$(met "$iso" ">=" 0.99)"
iso=$(awk -v a="$(rate i run_ns)" -v b="$(rate n run_ns)" 'BEGIN { printf "%.3f", a ? b / a : 0 }')
CLIENT_FAILED=$failed
row "$M_ISO_T" "$iso" ">= 0.99" "$(met "$iso" ">=" 0.99)"

# ---- 4. switch overhead and 5. scheduler CPU: best-effort, 1 ms slices ----
echo best-effort >"$KNOBS/sched_policy"
echo 1000 >"$KNOBS/sched_slice_us"
for i in "${ALL[@]}"; do
	start_load "$i" --seconds 300 --compute-us 5000
done
wait_ready "${ALL[@]}"
snap a
sleep "$WIN"
snap b
stop_loads || { note "switch overhead: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
echo 0 >"$KNOBS/sched_slice_us"
idle=$(delta a b idle_ns)
total=$(( $(delta a b busy_ns) + idle ))
sw=$(delta a b switches)
ovh=$(awk -v i="$idle" -v t="$total" 'BEGIN { printf "%.2f", 100 * i / t }')
note "1 ms slices, 8 busy: $sw switches in the window; the core's own switch_ns says $(awk \
	-v s="$(delta a b switch_ns)" -v t="$total" 'BEGIN { printf "%.2f", 100 * s / t }') % of engine time"
row "$M_SW" "$ovh %" "<= 1 %" "$(met "$ovh" "<=" 1)"
hz=$(getconf CLK_TCK)
cpu=$(awk -v c="$(delta a b cpu)" -v hz="$hz" -v w="$(delta a b t)" 'BEGIN {
	printf "%.2f", 100 * (c / hz) / (w / 1e9) }')
dec=$(awk -v d="$(delta a b decide_ns)" -v w="$(delta a b t)" 'BEGIN {
	printf "%.3f", 100 * d / w }')
row "$M_CPU" "$dec %" "<= 0.5 %" "$(met "$dec" "<=" 0.5)"
row "$M_ENG" "$cpu %" "report" "info"

# ---- 6. MIG: what GPU instances deliver per wall second ----
# Each GPU instance has an engine thread of its own, and in the model
# nothing passes between them: the VM test gpuvirt_mig judges capacity and
# isolation in modelled time. Per wall second the GIs' engine threads also
# share the guest's CPUs, which these rows show: the modelled work a GI's
# vGPU completed per wall second, as ratios within the run. work_ns is
# engine time on the GI's own engines; times the GI's compute slices over
# 7 it is the part of the whole GPU's work (backend.rst, "Capacity model").
for u in "${UUIDS[@]}"; do
	echo 1 >"/sys/bus/mdev/devices/$u/remove"
done
UUIDS=()
GIS=()
SLICES=()
# gi_up PROFILE [START]: a GI with one vGPU; appends the vGPU's UUID to UUIDS
# and its sched file to VSCHED, the GI's id to GIS and its compute slices to
# SLICES
gi_up() {
	local before id t u
	before=$(ls "$DBG/gis")
	"$CTL" mig create gpu 0 profile "$1" ${2:+start "$2"} >/dev/null || return 1
	for id in $(ls "$DBG/gis"); do
		grep -qx "$id" <<<"$before" || break
	done
	t=$(sed -n 's/^vgpu_type: *//p' "$DBG/gis/$id/info")
	u=$(printf 'b5c4ed00-0000-4000-8000-%012x' $((100 + ${#UUIDS[@]})))
	echo "$u" >"/sys/class/mdev_bus/$GPU-gi$id/mdev_supported_types/gpuvirt_gi-$t/create" || return 1
	UUIDS+=("$u")
	VSCHED+=("$DBG/gis/$id/vgpus/$u/sched")
	GIS+=("$id")
	SLICES+=("$(sed -n 's/^slices: *//p' "$DBG/gis/$id/info")")
}
gis_down() {
	local u id
	for u in "${UUIDS[@]}"; do
		echo 1 >"/sys/bus/mdev/devices/$u/remove"
	done
	for id in "${GIS[@]}"; do
		"$CTL" mig destroy gpu 0 gi "$id" >/dev/null
	done
	UUIDS=()
	VSCHED=()
	GIS=()
	SLICES=()
}
# gi_rate A B I: vGPU I's work per wall ns between snapshots A and B, in
# engine time of the whole GPU (1: all of the GPU's compute all the time)
gi_rate() {
	awk -v w="$(delta "$1" "$2" "work_ns:${UUIDS[$3]}")" -v t="$(delta "$1" "$2" t)" \
		-v s="${SLICES[$3]}" 'BEGIN { printf "%.6f", t ? w * s / 7 / t : 0 }'
}
# mig_window NAME I...: once loads I... run, snapshots NAME.a and NAME.b
mig_window() {
	local name=$1
	shift
	wait_ready "$@"
	snap "$name.a"
	sleep "$WIN"
	snap "$name.b"
}
if [ ! -x "$CTL" ] || ! "$CTL" mig mode gpu 0 on >/dev/null; then
	note "MIG: no $CTL, or the GPU refused MIG mode"
	row "$M_MIG_CAP" "n/a" "report" "info"
	row "$M_MIG_ISO" "n/a" ">= 0.99" "no"
	exit 0
fi
# the GIs' own sched files are not read: the rows use their vGPUs' only
GSCHED=()
VSCHED=()
EPIDS=()
# one 7g GI, then seven 1g GIs, each vGPU kept busy
if gi_up 7g.141gb; then
	start_load 0 --seconds 300 --compute-us 2000 --depth-us 150000
	mig_window 7g 0
	stop_loads || { note "MIG capacity: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
	r7=$(gi_rate 7g.a 7g.b 0)
fi
failed=$CLIENT_FAILED
gis_down
for i in $(seq 0 6); do
	gi_up 1g.18gb || break
	start_load "$i" --seconds 300 --compute-us 2000 --depth-us 150000
done
if [ ${#GIS[@]} -eq 7 ] && [ -n "${r7:-}" ]; then
	mig_window 1g 0 1 2 3 4 5 6
	stop_loads || { note "MIG capacity: a vgpu_load reported a failure"; failed=1; }
	sum=0
	for i in $(seq 0 6); do
		sum=$(awk -v s="$sum" -v r="$(gi_rate 1g.a 1g.b "$i")" 'BEGIN { printf "%.6f", s + r }')
	done
	note "MIG: 7g GI $r7, seven 1g GIs together $sum of the GPU's modelled work per wall second"
	CLIENT_FAILED=$failed
	row "$M_MIG_CAP" "$(awk -v s="$sum" -v r="$r7" 'BEGIN { printf "%.3f", r ? s / r : 0 }')" "report" "info"
else
	stop_loads || true
	note "MIG capacity: could not make the GIs"
	row "$M_MIG_CAP" "n/a" "report" "info"
fi
gis_down

# isolation: the balanced layout 3g + 2g + 1g + 1g, the last 1g the victim;
# its work per wall second alone, then with the three others busy
for pl in 3g.71gb:4 2g.35gb:0 1g.18gb:2 1g.18gb:3; do
	gi_up "${pl%%:*}" "${pl##*:}" || break
done
if [ ${#GIS[@]} -eq 4 ]; then
	start_load 3 --seconds 300 --compute-us 2000 --depth-us 150000
	mig_window i 3
	for i in 0 1 2; do
		start_load "$i" --seconds 300 --compute-us 2000 --depth-us 150000
	done
	mig_window n 0 1 2
	stop_loads || { note "MIG isolation: a vgpu_load reported a failure"; CLIENT_FAILED=1; }
	a=$(gi_rate i.a i.b 3)
	b=$(gi_rate n.a n.b 3)
	note "MIG isolation: the victim's work per wall second $a alone, $b with 3 busy neighbours"
	iso=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a ? b / a : 0 }')
	row "$M_MIG_ISO" "$iso" ">= 0.99" "$(met "$iso" ">=" 0.99)"
else
	note "MIG isolation: could not make the layout"
	row "$M_MIG_ISO" "n/a" ">= 0.99" "no"
fi
gis_down
"$CTL" mig mode gpu 0 off >/dev/null || true
