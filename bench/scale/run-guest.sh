#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/scale/run.sh, run by selftests/vm-run.sh --cmd. A host
# with many GPUs and thousands of vGPUs (see bench/scale/README.md):
#
#  1. per-vGPU create and remove time with 8 vGPUs against 2,048, as rounds
#     of 8 creates then 8 removes on one GPU, the rest of the host empty
#     ("low", before and after) or full ("high");
#  2. create+open+close+remove against the kernel's mtty sample
#     (vgpu_bench --only lifecycle) with 1 vGPU and with 2,049;
#  3. a vgpu-get dump of 2,048 vGPUs against one trivial request (nl_bench),
#     and the same dump leaving out the counters nests (nl_bench -O 3);
#  4. gpuvirtctl monitor through the whole build-up and tear-down: every
#     event counted, any overrun it reports counted;
#  5. kernel memory per vGPU: /proc/meminfo before, at 2,048, and after;
#  6. gpuvirtctl -batch creating and destroying 100 vGPUs against the same
#     200 sysfs writes from one shell;
#  7. with SCALE_PERF=1, at 2,049 vGPUs: cpu-clock profiles of the whole
#     guest (perf record -a -g) while gpuvirt's create+open+close+remove
#     cycles run alone, while mtty's do, and while vGPUs are dumped;
#     reported here by symbol, callees included ("profile NAME:" lines).
#
# Timing uses bash's $EPOCHREALTIME and builtins only (no fork in a timed
# loop). Prints "bench:" lines and "raw:" lines.
set -u

cd "${GPUVIRT_SRC:-.}" || exit 1
KVER=${KVER:-$(uname -r)}
KO=${GPUVIRT_KO_DIR:-build/$KVER}
CTL=${GPUVIRT_BIN:-build/user}/gpuvirtctl
VB=build/bench/vgpu_bench
NLB=build/bench/nl_bench
MTTY_KO=build/$KVER/bench/mtty/mtty.ko
NGPU=${SCALE_GPUS:-64}		# GPUs holding the vGPUs, sim1..simNGPU
PER=32				# H200-4C vGPUs per H200
ROUNDS=${SCALE_ROUNDS:-5}
CR_ROUNDS=${SCALE_CR_ROUNDS:-25}	# rounds of 8 creates and 8 removes
T=$(mktemp -d)
MON_PID=
LC_UUID=b3e5c0de-0000-4000-8000-0000000000a1
PERF=${SCALE_PERF:-0}

say() { echo "run-guest: $*"; }

cleanup() {
	local d
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null
	for d in /sys/bus/mdev/devices/*; do
		[ -e "$d/remove" ] && echo 1 >"$d/remove"
	done
	rmmod mtty gpuvirt_sim gpuvirt 2>/dev/null
	rm -rf "$T"
	return 0
}
trap cleanup EXIT

# uuid G I: the UUID of vGPU I of GPU G, into $u
uuid() { printf -v u 'a0000000-0000-4000-8000-%04x%08x' "$1" "$2"; }

modprobe -a vfio mdev vfio_iommu_type1 &&
	insmod "$KO/kernel/core/gpuvirt.ko" && insmod "$KO/kernel/sim/gpuvirt_sim.ko" || {
	say "could not load the modules"
	exit 1
}
# sim0 holds the lifecycle benchmark's H200-35C vGPUs; sim1..simNGPU the rest
for ((g = 0; g <= NGPU; g++)); do
	echo "$g h200-141gb" >/sys/bus/gpuvirt_sim/new_device || exit 1
done
echo "$LC_UUID" >/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C/create || exit 1
if [ -e "$MTTY_KO" ] && insmod "$MTTY_KO"; then
	export BENCH_MTTY_WHY=""
else
	export BENCH_MTTY_WHY="no $MTTY_KO"
fi
say "kernel $KVER, $(nproc) CPUs, $((NGPU + 1)) simulated H200s, $(awk '/MemTotal/ { print $2 }' /proc/meminfo) kB"

# create G I / remove G I: one sysfs write, the time it took added to $dt (us)
create() {
	local t0=${EPOCHREALTIME/./}
	uuid "$1" "$2"
	echo "$u" >"/sys/bus/gpuvirt_sim/devices/sim$1/gpu/mdev_supported_types/gpuvirt_sim-H200-4C/create" ||
		{ say "create $u failed"; exit 1; }
	dt=$((dt + ${EPOCHREALTIME/./} - t0))
}
remove() {
	local t0=${EPOCHREALTIME/./}
	uuid "$1" "$2"
	echo 1 >"/sys/bus/mdev/devices/$u/remove" || { say "remove $u failed"; exit 1; }
	dt=$((dt + ${EPOCHREALTIME/./} - t0))
}

# mtty_create I / mtty_remove I: the same on the mtty sample's mtty-2 type
MT=/sys/class/mdev_bus/mtty/mdev_supported_types/mtty-2/create
mtty_create() {
	local t0=${EPOCHREALTIME/./}
	printf -v u 'a1000000-0000-4000-8000-%012x' "$1"
	echo "$u" >"$MT" || { say "mtty create $u failed"; exit 1; }
	dt=$((dt + ${EPOCHREALTIME/./} - t0))
}
mtty_remove() {
	local t0=${EPOCHREALTIME/./}
	printf -v u 'a1000000-0000-4000-8000-%012x' "$1"
	echo 1 >"/sys/bus/mdev/devices/$u/remove" || { say "mtty remove $u failed"; exit 1; }
	dt=$((dt + ${EPOCHREALTIME/./} - t0))
}

# rounds NAME FIRST: CR_ROUNDS rounds of 8 creates (vGPUs FIRST..FIRST+7 of
# sim1) then their 8 removes, each round next to the same on mtty (8 of its
# mtty-2 devices; the order alternates); the fastest round's per-device
# times go into ${NAME}_c, ${NAME}_r, ${NAME}_mc and ${NAME}_mr (us)
rounds() {
	local r i side c rm_ mc= mr= best_c= best_r= best_mc= best_mr=
	for ((r = 0; r < CR_ROUNDS; r++)); do
		for side in $((r % 2)) $(((r + 1) % 2)); do
			if [ "$side" -eq 0 ]; then
				dt=0
				for ((i = $2; i < $2 + 8; i++)); do create 1 "$i"; done
				c=$((dt / 8))
				dt=0
				for ((i = $2; i < $2 + 8; i++)); do remove 1 "$i"; done
				rm_=$((dt / 8))
			elif [ -z "$BENCH_MTTY_WHY" ]; then
				dt=0
				for ((i = 0; i < 8; i++)); do mtty_create "$i"; done
				mc=$((dt / 8))
				dt=0
				for ((i = 0; i < 8; i++)); do mtty_remove "$i"; done
				mr=$((dt / 8))
			fi
		done
		echo "raw: $1 round=$r create_us=$c remove_us=$rm_ mtty_create_us=${mc:-n/a} mtty_remove_us=${mr:-n/a}"
		{ [ -z "$best_c" ] || [ "$c" -lt "$best_c" ]; } && best_c=$c
		{ [ -z "$best_r" ] || [ "$rm_" -lt "$best_r" ]; } && best_r=$rm_
		[ -n "$mc" ] && { [ -z "$best_mc" ] || [ "$mc" -lt "$best_mc" ]; } && best_mc=$mc
		[ -n "$mr" ] && { [ -z "$best_mr" ] || [ "$mr" -lt "$best_mr" ]; } && best_mr=$mr
	done
	printf -v "$1_c" %s "$best_c"
	printf -v "$1_r" %s "$best_r"
	printf -v "$1_mc" %s "${best_mc:-0}"
	printf -v "$1_mr" %s "${best_mr:-0}"
}

vgpus() {
	local d n=0
	for d in /sys/bus/mdev/devices/*; do [ -e "$d" ] && n=$((n + 1)); done
	echo $n
}

# mem NAME: /proc/meminfo's kernel-side fields (kB), caches dropped first
mem() {
	local k v _
	sync
	echo 3 >/proc/sys/vm/drop_caches
	while read -r k v _; do
		case $k in
		MemFree: | Slab: | SUnreclaim: | Percpu: | VmallocUsed: | KernelStack: | PageTables:)
			printf -v "$1_${k%:}" %s "$v" ;;
		esac
	done </proc/meminfo
	eval "echo \"raw: mem $1 MemFree=\$$1_MemFree Slab=\$$1_Slab SUnreclaim=\$$1_SUnreclaim Percpu=\$$1_Percpu VmallocUsed=\$$1_VmallocUsed KernelStack=\$$1_KernelStack PageTables=\$$1_PageTables\""
}

# profile NAME CMD...: with SCALE_PERF=1, a profile of the guest while CMD
# runs, read in the guest (its own kallsyms): the share of samples under
# each function, callees included, down to 1 %
profile() {
	local name=$1
	shift
	[ "$PERF" = 1 ] || return 0
	if ! command -v perf >/dev/null; then
		say "no perf in the guest (linux-perf): no profile $name"
		return 0
	fi
	perf record -q -a -g -e cpu-clock -F 1000 -o "$T/$name.data" -- "$@" \
		>"$T/$name.out" 2>&1 || say "profile $name: the command failed"
	grep '^raw: ' "$T/$name.out"
	perf report -i "$T/$name.data" --stdio --children --sort sym -g none \
		--percent-limit 1 2>/dev/null | grep -v '^#' | grep -v '^$' |
		sed "s/^/profile $name: /"
	# and each function's own share, by binary (kernel, module, program)
	perf report -i "$T/$name.data" --stdio --no-children --sort dso,sym \
		-g none --percent-limit 0.5 2>/dev/null | grep -v '^#' |
		grep -v '^$' | sed "s/^/profile $name self: /"
}

# lifecycle NAME: vgpu_bench's create+open+close+remove against mtty
lifecycle() {
	local out
	out=$("$VB" --uuid "$LC_UUID" --only lifecycle -r "$((ROUNDS * 2 + 1))" -n 20 2>&1)
	echo "$out" | sed -n "s/^raw: lifecycle /raw: lifecycle $1 /p"
	echo "$out" | sed -n "s/^bench: vgpu_lifecycle /bench: lifecycle_$1 /p"
	# the fastest round of each side
	echo "$out" | awk -v n="$1" '/^raw: lifecycle/ {
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^gpuvirt=/) { split($(i + 1), a, "[(]"); g = a[2] + 0; if (!gb || g < gb) gb = g }
			if ($i ~ /^mtty=/) { split($(i + 1), a, "[(]"); m = a[2] + 0; if (!mb || m < mb) mb = m }
		}
	} END { if (gb && mb) printf "bench: lifecycle_fastest_%s ratio=%.2f [fastest gpuvirt cycle %.2f ms / fastest mtty cycle %.2f ms]\n", n, gb / mb, gb, mb }'
}

# --- 1. low: the host empty but for sim0's one vGPU --------------------------
rounds low1 0
lifecycle low
mem base

# monitor_start FILE / monitor_stop: gpuvirtctl -j monitor into FILE, during
# the build-up and the tear-down only: the timed rounds run without it, as
# the empty host's did
monitor_start() {
	"$CTL" -j monitor >"$T/$1" 2>>"$T/mon.err" &
	MON_PID=$!
	sleep 1
}
monitor_stop() {
	sleep 2
	kill "$MON_PID"
	wait "$MON_PID" 2>/dev/null
	MON_PID=
}

# --- build-up to 2,040, watched by the monitor ---------------------------------
monitor_start mon_add
t0=${EPOCHREALTIME/./}
n=0
for ((g = NGPU; g >= 1; g--)); do
	dt=0
	top=$PER
	[ "$g" -eq 1 ] && top=$((PER - 8))
	for ((i = 0; i < top; i++)); do create "$g" "$i"; done
	n=$((n + top))
	[ $((n % 256)) -eq 0 ] || [ "$g" -eq 1 ] && echo "raw: buildup vgpus=$n last_gpu_create_us=$((dt / top))"
done
buildup_s=$(((${EPOCHREALTIME/./} - t0) / 1000))
say "built up $(vgpus) vGPUs (sim0's one included) in $buildup_s ms"
monitor_stop

# --- 2. high: 2,040 vGPUs, 8 more created and removed on sim1 -----------------
rounds high 24
for ((i = 24; i < 32; i++)); do create 1 "$i"; done
mem full
echo "raw: vgpus at full: $(vgpus)"
lifecycle high
profile create_gpuvirt "$VB" --cycles gpuvirt -r 3 -n 20
[ -e /sys/class/mdev_bus/mtty ] && profile create_mtty "$VB" --cycles mtty -r 3 -n 20
# --- 3. the dump -------------------------------------------------------------------
"$NLB" -r 20 | tee "$T/nl"
# the same without the counters nests (omit stats|migration), as
# "gpuvirtctl apply" asks for them
"$NLB" -r 20 -O 3 | tee "$T/nl_omit"
profile dump "$NLB" -r 20
profile dump_omit "$NLB" -r 20 -O 3
# --- tear-down --------------------------------------------------------------------
monitor_start mon_del
t0=${EPOCHREALTIME/./}
for ((g = 1; g <= NGPU; g++)); do
	for ((i = 0; i < PER; i++)); do remove "$g" "$i"; done
done
teardown_ms=$(((${EPOCHREALTIME/./} - t0) / 1000))
say "tore down to $(vgpus) vGPU(s) in $teardown_ms ms"
monitor_stop
mem after
rounds low2 0

# --- 4. monitor -------------------------------------------------------------------
# only this script's vGPUs: vgpu_bench's lifecycle makes some of its own
adds=$(grep '^{"event":"add","vgpu":' "$T/mon_add" | grep -c '"uuid":"a0000000-')
dels=$(grep '^{"event":"del","vgpu":' "$T/mon_del" | grep -c '"uuid":"a0000000-')
lost=$(grep -c 'events were lost' "$T/mon.err")
echo "bench: monitor vgpu_add=$adds of $((NGPU * PER - 8)) vgpu_del=$dels of $((NGPU * PER)) overruns=$lost [events seen during the build-up and the tear-down]"

# --- 5. memory ------------------------------------------------------------------------
nv=$((NGPU * PER))
awk -v n="$nv" -v bs="$base_Slab" -v fs="$full_Slab" -v as="$after_Slab" \
	-v bu="$base_SUnreclaim" -v fu="$full_SUnreclaim" \
	-v bo="$(( base_Percpu + base_VmallocUsed + base_KernelStack + base_PageTables ))" \
	-v fo="$(( full_Percpu + full_VmallocUsed + full_KernelStack + full_PageTables ))" \
	-v bf="$base_MemFree" -v ff="$full_MemFree" -v af="$after_MemFree" 'BEGIN {
	printf "bench: kmem_per_vgpu_kib slab=%.1f sunreclaim=%.1f percpu_vmalloc_stack_pt=%.1f memfree=%.1f [meminfo deltas over %d vGPUs, caches dropped; goal <= 32]\n",
		(fs - bs) / n, (fu - bu) / n, (fo - bo) / n, (bf - ff) / n, n
	printf "bench: kmem_after_teardown_kib slab=%+d memfree=%+d [after - before; 0 is all returned]\n",
		as - bs, bf - af
}'

# --- 1 again: the ratios ------------------------------------------------------------
best() { [ "$1" -lt "$2" ] && echo "$1" || echo "$2"; }
lc=$(best "$low1_c" "$low2_c")
lr=$(best "$low1_r" "$low2_r")
lmc=$(best "$low1_mc" "$low2_mc")
lmr=$(best "$low1_mr" "$low2_mr")
awk -v hc="$high_c" -v hr="$high_r" -v lc="$lc" -v lr="$lr" \
	-v hmc="$high_mc" -v hmr="$high_mr" -v lmc="$lmc" -v lmr="$lmr" 'BEGIN {
	printf "bench: create_per_vgpu ratio=%.2f [fastest round at 2040+8 vGPUs %d us / at 1+8 %d us; goal <= 1.2]\n", hc / lc, hc, lc
	printf "bench: remove_per_vgpu ratio=%.2f [fastest round at 2040+8 vGPUs %d us / at 1+8 %d us; goal <= 1.2]\n", hr / lr, hr, lr
	if (lmc && lmr) {
		printf "bench: mtty_create_per_device ratio=%.2f [the same rounds on mtty-2, next to them: %d us / %d us]\n", hmc / lmc, hmc, lmc
		printf "bench: mtty_remove_per_device ratio=%.2f [%d us / %d us]\n", hmr / lmr, hmr, lmr
		printf "bench: create_growth_vs_mtty ratio=%.2f [gpuvirt create ratio / mtty create ratio: the growth that is gpuvirt'"'"'s own]\n", (hc / lc) / (hmc / lmc)
	}
}'
awk '/nl_roundtrip_us/ { rt = $3 } /nl_vgpu_dump/ { print "bench: dump_vs_roundtrip ratio=" $8 " (per-round median " $10 ", " $12 ") [vgpu-get dump of " $4 " vGPUs " $6 " ms / one gpu-get, 20 interleaved rounds, means; " $14 " reads of " $16 " bytes a dump; goal <= 300]" }' "$T/nl"
awk '/nl_vgpu_dump omit/ { print "bench: dump_nocounters_vs_roundtrip ratio=" $10 " (per-round median " $12 ", " $14 ") [vgpu-get dump of " $6 " vGPUs without stats and migration (omit " $4 ") " $8 " ms / one gpu-get, 20 interleaved rounds, means; " $16 " reads of " $18 " bytes a dump]" }' "$T/nl_omit"

# --- 6. batch against bare sysfs writes ------------------------------------------
# 100 vGPUs on sim1..sim4, 25 each; the batch file adds then deletes them
for ((i = 0; i < 100; i++)); do
	uuid $((1 + i / 25)) $((i % 25))
	echo "vgpu add gpu $((1 + i / 25)) type H200-4C uuid $u"
done >"$T/add.batch"
for ((i = 0; i < 100; i++)); do
	uuid $((1 + i / 25)) $((i % 25))
	echo "vgpu del uuid $u"
done >>"$T/add.batch"
bare() {
	local i
	for ((i = 0; i < 100; i++)); do
		uuid $((1 + i / 25)) $((i % 25))
		echo "$u" >"/sys/bus/gpuvirt_sim/devices/sim$((1 + i / 25))/gpu/mdev_supported_types/gpuvirt_sim-H200-4C/create"
	done
	for ((i = 0; i < 100; i++)); do
		uuid $((1 + i / 25)) $((i % 25))
		echo 1 >"/sys/bus/mdev/devices/$u/remove"
	done
}
bb= bs=
for ((r = 0; r < ROUNDS; r++)); do
	for side in $((r % 2)) $(((r + 1) % 2)); do
		t0=${EPOCHREALTIME/./}
		if [ "$side" -eq 0 ]; then
			"$CTL" -batch "$T/add.batch" >/dev/null || say "batch failed"
			d=$((${EPOCHREALTIME/./} - t0))
			{ [ -z "$bb" ] || [ "$d" -lt "$bb" ]; } && bb=$d
			echo "raw: batch round=$r gpuvirtctl_batch_ms=$((d / 1000)) left=$(vgpus)"
		else
			bare
			d=$((${EPOCHREALTIME/./} - t0))
			{ [ -z "$bs" ] || [ "$d" -lt "$bs" ]; } && bs=$d
			echo "raw: batch round=$r bare_sysfs_ms=$((d / 1000)) left=$(vgpus)"
		fi
	done
done
awk -v b="$bb" -v s="$bs" 'BEGIN {
	printf "bench: batch_100_vs_sysfs ratio=%.2f [fastest gpuvirtctl -batch of 100 add + 100 del %.0f ms / fastest 200 bare sysfs writes %.0f ms; goal <= 1.5]\n", b / s, b / 1000, s / 1000
}'
exit 0
