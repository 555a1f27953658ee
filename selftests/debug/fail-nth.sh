#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The fault-injection sweeps of the debug-kernel lane, run in the guest by
# scripts/check-debug.sh (vm-run.sh --cmd). Each path of gv_failnth
# (selftests/debug/gv_failnth.c) is swept to the end, consecutive paths
# with the same stack filter (below) in one gv_failnth run; after the last
# path of a group (the paths that share the name's first word: modload-*,
# vfio-*, nl-*, ...), a wait of 6 s (kmemleak's minimum object age) and
# selftests/debug/after-test.sh, so that a leak or a lockdep shutdown is
# blamed on the group that caused it. kmemleak's report names the
# allocation's stack, which tells the path; a scan after every path would
# cost about 18 s each under TCG.
#
# Usage: selftests/debug/fail-nth.sh [PATH...]   (default: every path)
# GPUVIRT_FAILNTH_BUDGET=S bounds each path's sweep to S seconds (default
# 300). A sweep cut short by it fails: every point must be swept.
# GPUVIRT_FAILNTH_SAMPLE=K:R sweeps a sample, the points n with n % K == R
# of each path (gv_failnth -K), as `make check` does: K runs with R = 0 ..
# K-1 cover every point (scripts/check-debug.sh takes R from the commit;
# GPUVIRT_FAILNTH_SEED, when set, is printed with it). A sample is checked
# for leaks once, at its end, rather than after each group: that check
# costs about 18 s, more than a group's sample.
# Prints KTAP: one test per path, "# N points" in its description, and one
# "leaks after GROUP" test per group (a sample: one "leaks after the
# sample").
set -uo pipefail

bin=${GPUVIRT_BIN:-build/user}/selftests/debug/gv_failnth
if [ ! -x "$bin" ]; then
	echo "1..0 # SKIP $bin not built (make debug-tests)"
	exit 4
fi
if [ ! -e /proc/self/fail-nth ]; then
	echo "1..0 # SKIP no /proc/self/fail-nth (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	exit 4
fi
if [ $# -gt 0 ]; then
	paths=("$@")
else
	mapfile -t paths < <("$bin" list | awk '{ print $1 }')
fi

# Two kernel functions that our paths call have bugs in their own error
# paths (6.12), which a failed allocation inside them turns into a WARNING
# that is not ours and that nothing of ours can avoid:
#  - bus_register() (drivers/base/bus.c): a failure after kset_register()
#    unwinds through bus_release(), which unregisters a lockdep key that
#    was never registered (lockdep_unregister_key); insmod gpuvirt_sim;
#  - vfio_create_group() (drivers/vfio/group.c): a failure of
#    dev_set_name() or cdev_device_add() puts the group while it still
#    holds its iommu_group (WARN_ON in vfio_group_release); every VFIO
#    device registration: an mdev create, a bind to gpuvirt_vfio_pci;
#  - the PCI core's probe.c, adding the simulated GPU's PCI function
#    (sim-add) and its VFs (sriov-enable): pci_setup_device() ignores a
#    failed dev_set_name(), and pci_device_add() WARNs when device_add()
#    then fails; pci_create_root_bus() puts the host bridge twice when
#    registering it fails (a use-after-free). sriov-enable rejects the
#    span of probe.c from the first to the last of those functions; the
#    VF driver's probe (ours) runs outside it, from pci_bus_add_device();
#  - the PCI core's bus.c, adding the PF (sim-add): pci_bus_add_device()
#    frees the resource files' attributes when one fails and leaves the
#    pointers, which pci_stop_bus_device() then frees again. sim-add
#    rejects the span from bus.c's pci_bus_add_device() to the end of
#    probe.c, which also holds the PF driver's probe, so GPU registration
#    is not swept there (vf-type and the mdev paths sweep the rest).

# The stack filters of failslab and fail_page_alloc
# (CONFIG_FAULT_INJECTION_STACKTRACE_FILTER) take one range each, so each
# path rejects the one of the two it reaches: fail-nth neither fails nor
# counts an allocation inside it.

# The range [start, end) of a function, as two hex numbers without 0x:
# from nm of the running kernel's vmlinux (its build tree) corrected by the
# KASLR offset of _text, or of a module's .ko plus the base of its .text in
# /sys/module. /proc/kallsyms is not read whole: that takes minutes on a
# KASAN kernel under TCG. nm of the 50 MB vmlinux takes about 10 s there,
# so its output is read once.
nm_cache=$(mktemp -d)
trap 'rm -rf "$nm_cache"' EXIT
nm_of() {
	local key=${1//\//_}
	[ -s "$nm_cache/$key" ] || nm -S "$1" >"$nm_cache/$key" || return 1
	cat "$nm_cache/$key"
}
fn_range() {
	local fn=$1 mod=${2:-} file base line addr size
	if [ -z "$mod" ]; then
		file=/lib/modules/$(uname -r)/build/vmlinux
		# _text comes after the per-CPU symbols, near the start
		line=$(grep -m 1 ' _text$' /proc/kallsyms) || return 1
		base=$((0x${line%% *} - 0x$(nm_of "$file" | awk '$NF == "_text" { print $1; exit }')))
	else
		file=$(modinfo -n "$mod") || return 1
		base=$(cat "/sys/module/$mod/sections/.text") || return 1
		base=$((base))
	fi
	read -r addr size < <(nm_of "$file" | awk -v fn="$fn" '$4 == fn { print $1, $2; exit }')
	[ -n "$size" ] || { echo "# no $fn in $file" >&2; return 1; }
	printf '%x %x\n' $((base + 0x$addr)) $((base + 0x$addr + 0x$size))
}

# Keep fail-nth out of [start, end) (fn_range's output).
reject() {
	local f
	for f in failslab fail_page_alloc; do
		echo "0x$1" > /sys/kernel/debug/$f/reject-start &&
			echo "0x$2" > /sys/kernel/debug/$f/reject-end || return 1
	done
}

# vfio_create_group() is in the vfio module: load it before looking it up
modprobe -q vfio || { echo "1..0 # SKIP cannot load vfio"; exit 4; }
# The span of several functions of one object file: lowest start, highest end.
fn_span() {
	local fn lo='' hi='' a b

	for fn in "$@"; do
		read -r a b < <(fn_range "$fn") || return 1
		[ -z "$lo" ] || [ $((0x$a)) -lt $((0x$lo)) ] && lo=$a
		[ -z "$hi" ] || [ $((0x$b)) -gt $((0x$hi)) ] && hi=$b
	done
	echo "$lo $hi"
}

r_bus=$(fn_range bus_register) && r_vfio=$(fn_range vfio_create_group vfio) &&
	r_pci=$(fn_span pci_setup_device pci_device_add pci_create_root_bus) &&
	r_pf=$(fn_span pci_bus_add_device pci_setup_device pci_device_add pci_create_root_bus) || {
	echo "1..0 # SKIP cannot locate bus_register(), vfio_create_group() and the PCI core's probe functions"
	exit 4
}

sample=()
sampled=0
if [ -n "${GPUVIRT_FAILNTH_SAMPLE:-}" ]; then
	if ! [[ $GPUVIRT_FAILNTH_SAMPLE =~ ^[0-9]+:[0-9]+$ ]]; then
		echo "1..0 # SKIP bad GPUVIRT_FAILNTH_SAMPLE '$GPUVIRT_FAILNTH_SAMPLE' (want K:R)"
		exit 4
	fi
	[ "${GPUVIRT_FAILNTH_SAMPLE%%:*}" -gt 1 ] && sampled=1
	sample=(-K "$GPUVIRT_FAILNTH_SAMPLE")
fi

if [ $sampled = 1 ]; then
	groups=1
else
	groups=$(printf '%s\n' "${paths[@]}" | sed 's/-.*//' | uniq | wc -l)
fi
echo "TAP version 13"
echo "1..$((${#paths[@]} + groups))"
if [ $sampled = 1 ]; then
	echo "# sample: the points n with n % ${GPUVIRT_FAILNTH_SAMPLE%%:*} == ${GPUVIRT_FAILNTH_SAMPLE#*:} of each path${GPUVIRT_FAILNTH_SEED:+ (seed $GPUVIRT_FAILNTH_SEED)}"
fi
echo "# not injected inside bus_register() ($r_bus) for modload-sim, the PCI core's probe.c ($r_pci) for sriov-enable, its bus.c and probe.c ($r_pf) for sim-add, vfio_create_group() ($r_vfio) for the other paths: their error paths WARN (see fail-nth.sh)"
# The stack filter a path needs, "START END" in $range, and in $fn what it
# keeps out.
filter_of() {
	case $1 in
	modload-sim) range=$r_bus fn="bus_register()" ;;
	sriov-enable) range=$r_pci fn="the PCI core's probe.c" ;;
	sim-add) range=$r_pf fn="the PCI core's bus.c and probe.c" ;;
	*) range=$r_vfio fn="vfio_create_group()" ;;
	esac
}

# The leak check after a group of paths (a sample: after the last path).
leak_check() {
	n=$((n + 1))
	selftests/debug/after-test.sh --ktap "$n" "fail-nth $1" || failed=$((failed + 1))
}

# Consecutive paths with the same stack filter (and, in a full sweep, of
# the same group) are swept by one gv_failnth run: the simulated GPU, the
# vGPU and its VFIO fds carry over from one path to the next, rather than
# being torn down and set up again for each (several seconds a path on
# this kernel).
n=0
failed=0
total=0
t0=$(date +%s)
i=0
while [ $i -lt ${#paths[@]} ]; do
	p=${paths[$i]}
	filter_of "$p"
	first=$range
	run=("$p")
	j=$((i + 1))
	while [ $j -lt ${#paths[@]} ]; do
		q=${paths[$j]}
		filter_of "$q"
		[ "$range" = "$first" ] || break
		[ $sampled = 1 ] || [ "${q%%-*}" = "${p%%-*}" ] || break
		run+=("$q")
		j=$((j + 1))
	done
	filter_of "$p"
	s=$(date +%s)
	# shellcheck disable=SC2086 # two words
	if ! reject $range; then
		for q in "${run[@]}"; do
			n=$((n + 1))
			echo "not ok $n $q # cannot keep injection out of $fn"
			failed=$((failed + 1))
		done
	else
		out=$("$bin" -t "${GPUVIRT_FAILNTH_BUDGET:-300}" ${sample[@]+"${sample[@]}"} "${run[@]}" 2>&1)
		src=$?
		grep '^#' <<<"$out"
		k=0
		for q in "${run[@]}"; do
			k=$((k + 1))
			n=$((n + 1))
			line=$(grep -E "^(not )?ok $k $q( |\$)" <<<"$out")
			pts=$(sed -n 's/^\(not \)\{0,1\}ok [0-9]* .* # \([0-9]*\) points.*$/\2/p' <<<"$line")
			secs=$(sed -n "s/^# $q (.*, \([0-9]*\) s\$/\1/p" <<<"$out" | tail -n 1)
			total=$((total + ${pts:-0}))
			if [ -z "$line" ]; then
				echo "not ok $n $q # no result: the sweep run exited $src"
				failed=$((failed + 1))
			elif [[ $line == "ok "*" points (partial)"* ]]; then
				echo "not ok $n $q # ${pts:-?} points, cut short by the ${GPUVIRT_FAILNTH_BUDGET:-300} s bound"
				failed=$((failed + 1))
			elif [[ $line == "ok "* ]]; then
				echo "ok $n $q # ${pts:-?} points, ${secs:-?} s"
			else
				echo "not ok $n $q # ${pts:-?} points, sweep exit $src"
				failed=$((failed + 1))
			fi
		done
		echo "# run of ${#run[@]} path(s): $(($(date +%s) - s)) s, exit $src"
	fi

	i=$j
	next=${paths[$i]:-}
	if [ $sampled = 1 ]; then
		[ -n "$next" ] || leak_check sample
	elif [ -z "$next" ] || [ "${next%%-*}" != "${p%%-*}" ]; then
		leak_check "${p%%-*}-*"
	fi
done
echo "# fail-nth: ${total} injection points over ${#paths[@]} paths in $(($(date +%s) - t0)) s"
[ $failed -eq 0 ]
