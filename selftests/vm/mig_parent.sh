#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# MIG-backed vGPU types on the GPU's own mdev parent, its PCI function
# (kernel/core/mdev.c), where libvirt and OpenStack Nova look for them:
# listed in both modes, available only in MIG mode and then per GI with
# room, and a vGPU made there lands on the lowest such GI, as the core's
# debugfs and gpuvirtctl show. Runs in the test VM; KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

P=/sys/bus/pci/devices/8000:00:00.0/mdev_supported_types
U1=0d7e2c11-9a40-4b6e-8c2f-00000000d101
U2=0d7e2c11-9a40-4b6e-8c2f-00000000d102
U3=0d7e2c11-9a40-4b6e-8c2f-00000000d103
U4=0d7e2c11-9a40-4b6e-8c2f-00000000d104

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$U1" "$U2" "$U3" "$U4"
vmt_need_modules gpuvirt

avail() {
	cat "$P/gpuvirt_sim-$1/available_instances"
}
# "NAME=N ..." of every type of the PCI parent, sorted
avail_all() {
	local d

	for d in "$P"/*; do
		echo "${d##*/gpuvirt_sim-}=$(cat "$d/available_instances")"
	done | sort | tr '\n' ' '
}
# MIG-backed type names have a dash, a digit and a dash: H200-1-18C
mig_types() {
	ls "$P" | sed -n 's/^gpuvirt_sim-//p' | grep -E -- '-[0-9]-' | sort | tr '\n' ' '
}

ktap_plan 11

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device && echo "1 custom 16G 2" >$BUS/new_device
ktap_result $? "modules loaded, an H200 and a custom GPU without MIG"

# 2: the H200 lists its 23 time-sliced and 7 MIG-backed types
ktap_diag "$(mig_types)"
[ "$(ls "$P" | wc -l)" = 30 ] &&
	[ "$(mig_types)" = "H200-1-18C H200-1-18CME H200-1-35C H200-2-35C H200-3-71C H200-4-71C H200-7-141C " ] &&
	grep -q "framebuffer=18048M" "$P/gpuvirt_sim-H200-1-18C/description" &&
	[ "$(cat "$P/gpuvirt_sim-H200-1-18C/device_api")" = vfio-pci ] &&
	[ "$(ls /sys/bus/pci/devices/8001:00:00.0/mdev_supported_types | grep -cE -- '-[0-9]-')" = 0 ]
ktap_result $? "the PCI parent lists 7 MIG-backed types after the time-sliced ones; a GPU without MIG has none"

# 3: time-sliced mode: the MIG-backed types offer nothing
ok=0
for t in $(mig_types); do
	[ "$(avail "$t")" = 0 ] || ok=1
done
[ $ok -eq 0 ] && [ "$(avail H200-35C)" = 4 ] &&
	! echo $U1 >"$P/gpuvirt_sim-H200-1-18C/create" 2>/dev/null && [ ! -e /sys/bus/mdev/devices/$U1 ]
ktap_result $? "time-sliced mode: MIG-backed types have 0 instances and refuse create"

# 4: MIG mode: the parent stays, its time-sliced types offer nothing
"$CTL" mig mode gpu 0 on >/dev/null &&
	"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
	"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
	"$CTL" mig create gpu 0 profile 3g.71gb >/dev/null
ok=$?
ktap_diag "$(avail_all)"
[ $ok -eq 0 ] && [ "$(ls "$P" | wc -l)" = 30 ] && [ "$(avail H200-35C)" = 0 ] &&
	[ "$(avail H200-1B)" = 0 ] && [ "$(avail H200-1-18C)" = 2 ] &&
	[ "$(avail H200-3-71C)" = 1 ] && [ "$(avail H200-2-35C)" = 0 ] &&
	[ "$(cat /sys/class/mdev_bus/sim0-gi0/mdev_supported_types/gpuvirt_gi-H200-1-18C/available_instances)" = 1 ]
ktap_result $? "MIG mode with GIs 1g,1g,3g: H200-1-18C has 2, H200-3-71C 1, time-sliced 0, on the same parent"

# 5: time-sliced create in MIG mode is refused with EBUSY
echo $U4 >"$P/gpuvirt_sim-H200-35C/create" 2>"$T/err"
[ $? -ne 0 ] && grep -q "busy" "$T/err" && [ ! -e /sys/bus/mdev/devices/$U4 ]
ktap_result $? "a time-sliced vGPU in MIG mode: EBUSY"

# 6: a vGPU made on the PCI parent lands on the lowest GI of its profile
echo $U1 >"$P/gpuvirt_sim-H200-1-18C/create" && "$CTL" -j vgpu show uuid $U1 >"$T/v1"
ok=$?
ktap_diag "$(cat "$T/v1")"
[ $ok -eq 0 ] && python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["vgpu"][0]
assert v["gi"] == 0 and v["type"] == "H200-1-18C" and v["vram-offset"] == 0, v' "$T/v1" &&
	grep -qx "vgpus: 1" $CORE/sim0/gis/0/info && grep -qx "vgpus: 0" $CORE/sim0/gis/1/info &&
	[ "$(readlink -f /sys/bus/mdev/devices/$U1/..)" = "$(readlink -f /sys/bus/pci/devices/8000:00:00.0)" ] &&
	[ "$(avail H200-1-18C)" = 1 ]
ktap_result $? "create on the PCI parent: the vGPU is on GI 0 (netlink, debugfs), its parent is the function"

# 7: the next goes to GI 1, whose VRAM range it gets; then none is left
echo $U2 >"$P/gpuvirt_sim-H200-1-18C/create" && "$CTL" -j vgpu show uuid $U2 >"$T/v2" &&
	"$CTL" -j mig show gpu 0 >"$T/mig"
ok=$?
echo $U3 >"$P/gpuvirt_sim-H200-1-18C/create" 2>"$T/err"
rc=$?
ktap_diag "$(cat "$T/err")"
[ $ok -eq 0 ] && [ $rc -ne 0 ] && grep -q "No space left" "$T/err" && python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["vgpu"][0]
gi = {g["id"]: g for g in json.load(open(sys.argv[2]))["mig"][0]["gi"]}
assert v["gi"] == 1 and v["vram-offset"] == gi[1]["vram-offset"], (v, gi[1])
assert gi[0]["vgpus"] == 1 and gi[1]["vgpus"] == 1 and gi[2]["vgpus"] == 0, gi' "$T/v2" "$T/mig" &&
	[ "$(avail H200-1-18C)" = 0 ] && [ ! -e /sys/bus/mdev/devices/$U3 ]
ktap_result $? "the second lands on GI 1 in its VRAM range; a third gets ENOSPC"

# 8: the GI parent and the PCI parent count the same vGPUs
[ "$(cat /sys/class/mdev_bus/sim0-gi1/mdev_supported_types/gpuvirt_gi-H200-1-18C/available_instances)" = 0 ] &&
	! echo $U3 >/sys/class/mdev_bus/sim0-gi1/mdev_supported_types/gpuvirt_gi-H200-1-18C/create 2>/dev/null &&
	echo $U3 >"$P/gpuvirt_sim-H200-3-71C/create" &&
	[ "$(cat /sys/class/mdev_bus/sim0-gi2/mdev_supported_types/gpuvirt_gi-H200-3-71C/available_instances)" = 0 ] &&
	grep -qx "vgpus: 1" $CORE/sim0/gis/2/info
ktap_result $? "a GI filled through the PCI parent is full through its own parent too"

# 9: a GI holding such a vGPU cannot be destroyed; MIG cannot be left
"$CTL" mig destroy gpu 0 gi 0 >/dev/null 2>"$T/err"
rc=$?
"$CTL" mig mode gpu 0 off >/dev/null 2>>"$T/err"
rc2=$?
ktap_diag "$(cat "$T/err")"
[ $rc -ne 0 ] && [ $rc2 -ne 0 ] && grep -q "has a vGPU" "$T/err" && [ -e /sys/class/mdev_bus/sim0-gi0 ]
ktap_result $? "GI destroy and MIG off are refused while a vGPU made on the PCI parent lives on the GI"

# 10: removing them frees the GIs; back in time-sliced mode the types return
for u in $U1 $U2 $U3; do echo 1 >/sys/bus/mdev/devices/$u/remove; done
"$CTL" mig destroy gpu 0 gi 0 >/dev/null && "$CTL" mig destroy gpu 0 gi 1 >/dev/null &&
	"$CTL" mig destroy gpu 0 gi 2 >/dev/null && "$CTL" mig mode gpu 0 off >/dev/null &&
	[ "$(avail H200-35C)" = 4 ] && [ "$(avail H200-1-18C)" = 0 ] &&
	echo $U4 >"$P/gpuvirt_sim-H200-35C/create" && echo 1 >/sys/bus/mdev/devices/$U4/remove
ktap_result $? "vGPUs removed, GIs destroyed, MIG off: time-sliced types available again"

# 11: a GPU deleted with MIG-backed vGPUs made on its PCI parent
"$CTL" mig mode gpu 0 on >/dev/null && "$CTL" mig create gpu 0 profile 7g.141gb >/dev/null &&
	echo $U1 >"$P/gpuvirt_sim-H200-7-141C/create" && grep -qx "vgpus: 1" $CORE/sim0/gis/0/info &&
	echo 0 >$BUS/del_device && [ ! -e /sys/bus/mdev/devices/$U1 ] && [ ! -e $CORE/sim0 ] &&
	rmmod gpuvirt_sim && rmmod gpuvirt
ktap_result $? "del_device with such a vGPU: vGPU, GI and GPU go; modules unload"

ktap_finish
