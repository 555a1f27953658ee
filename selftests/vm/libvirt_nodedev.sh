#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# libvirt's node devices on gpuvirt's GPUs, as OpenStack Nova uses them,
# with Debian's libvirt, mdevctl and udev in the test VM: the GPU's PCI
# function listed with its mdev types and their counts (MIG-backed ones
# too), nodedev-define/start/destroy/undefine of a vGPU with gpuvirt
# attributes that the scheduler then shows, vGPUs made elsewhere shown under
# the GPU, and domains that take a vGPU (mdev) and a VF vGPU (PCI, managed
# no) and give it back. KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
# shellcheck source=selftests/lib/libvirt.sh
. selftests/lib/libvirt.sh

PF=/sys/bus/pci/devices/8000:00:00.0
TYPES=$PF/mdev_supported_types
NODE=pci_8000_00_00_0
UD=6d0c1f2a-3b4c-4d5e-8f60-0000000001d1	# libvirt-defined
US=6d0c1f2a-3b4c-4d5e-8f60-0000000001d2	# made through sysfs

if missing=$(libvirt_missing); then
	vmt_skip "$missing is not installed (scripts/deps.sh installs libvirt, mdevctl, udev)"
fi
vmt_need_modules gpuvirt
vmt_need_ctl
libvirt_enter "$@"
vmt_tmpdir

# Whatever a failed check left: domains, node devices, vGPUs, typed VFs,
# GIs, the daemons, the GPU and the modules.
cleanup() {
	local u vf

	[ "$KTAP_FAIL" -ne 0 ] && ktap_diag "libvirtd's log:" "$(tail -n 20 "$LIBVIRT_LOG" 2>/dev/null)"
	$VIRSH destroy gv-mdev >/dev/null 2>&1
	$VIRSH destroy gv-vf >/dev/null 2>&1
	$VIRSH nodedev-destroy "mdev_${UD//-/_}_8000_00_00_0" >/dev/null 2>&1
	$VIRSH nodedev-undefine "mdev_${UD//-/_}_8000_00_00_0" >/dev/null 2>&1
	libvirt_stop
	vmt_remove_mdevs
	for vf in $PF/virtfn*/gpuvirt/current_vgpu_type; do
		[ -e "$vf" ] && echo 0 >"$vf"
	done
	[ -e $PF/sriov_numvfs ] && echo 0 >$PF/sriov_numvfs 2>/dev/null
	[ -e $PF/gpuvirt/mig_mode ] && [ "$(cat $PF/gpuvirt/mig_mode)" != 0 ] &&
		for u in 0 1 2 3 4 5 6; do "$CTL" mig destroy gpu 0 gi $u >/dev/null 2>&1; done
	[ -e $BUS/del_device ] && echo 0 >$BUS/del_device 2>/dev/null
	vmt_unload gpuvirt_sim gpuvirt
}
vmt_on_exit cleanup

# The sysfs counts and libvirt's of every type listed under the GPU.
counts_match() {
	$VIRSH nodedev-dumpxml $NODE >"$T/node.xml" || return 1
	python3 - "$T/node.xml" "$TYPES" "$@" <<'EOF'
import os, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
caps = [c for c in root.iter("capability") if c.get("type") == "mdev_types"]
assert caps, "no mdev_types capability"
lv = {t.get("id"): t for t in caps[0].findall("type")}
fs = sorted(os.listdir(sys.argv[2]))
assert sorted(lv) == fs, (sorted(lv), fs)
for tid in fs:
    want = int(open(f"{sys.argv[2]}/{tid}/available_instances").read())
    name = open(f"{sys.argv[2]}/{tid}/name").read().strip()
    got = int(lv[tid].findtext("availableInstances"))
    assert got == want, (tid, got, want)
    assert lv[tid].findtext("name") == name, (tid, lv[tid].findtext("name"), name)
for tid, n in zip(sys.argv[3::2], sys.argv[4::2]):
    assert int(lv[tid].findtext("availableInstances")) == int(n), (tid, n)
print(f"{len(fs)} types, counts equal")
EOF
}

# The node device name of an mdev, and its parent in libvirt.
mdev_parent() {
	local n

	n=$($VIRSH nodedev-list --cap mdev | grep "${1//-/_}") || return 1
	$VIRSH nodedev-dumpxml "$n" | sed -n 's|.*<parent>\(.*\)</parent>.*|\1|p'
}

# A minimal TCG domain named $1 whose one device is the hostdev XML $2.
domain_xml() {
	cat <<EOF
<domain type='qemu'>
  <name>$1</name>
  <memory unit='MiB'>128</memory>
  <os><type arch='x86_64' machine='q35'>hvm</type></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    $2
  </devices>
</domain>
EOF
}

wait_for() {	# wait_for CMD...: up to 20 s
	local i

	for i in $(seq 40); do
		"$@" && return 0
		sleep 0.5
	done
	return 1
}

ktap_plan 13

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device && libvirt_start
rc=$?
ktap_diag "$(tail -n 5 "$LIBVIRT_LOG" 2>/dev/null)"
[ $rc -eq 0 ]
ktap_result $? "gpuvirt and a simulated H200 loaded; udevd and libvirtd running"

# 2: the GPU is a node device with mdev types
$VIRSH nodedev-list --cap mdev_types >"$T/list"
ktap_diag "$(cat "$T/list")"
grep -qx "$NODE" "$T/list" && $VIRSH nodedev-dumpxml $NODE >"$T/node.xml" &&
	grep -q "<driver>" "$T/node.xml" && grep -q "<name>gpuvirt_sim</name>" "$T/node.xml" &&
	grep -q "<capability type='pci'>" "$T/node.xml" &&
	grep -q "<domain>32768</domain>" "$T/node.xml"
ktap_result $? "nodedev-list --cap mdev_types lists $NODE, a PCI device bound to gpuvirt_sim"

# 3: every type, with sysfs's counts
counts_match gpuvirt_sim-H200-35C 4 >"$T/out" 2>&1
rc=$?
ktap_diag "$(cat "$T/out")"
[ $rc -eq 0 ]
ktap_result $? "every type's availableInstances and name equal sysfs ($(ls $TYPES | wc -l) types)"

# 4: nodedev-define + nodedev-start with gpuvirt attributes
cat >"$T/mdev.xml" <<EOF
<device>
  <parent>$NODE</parent>
  <capability type='mdev'>
    <type id='gpuvirt_sim-H200-35C'/>
    <uuid>$UD</uuid>
    <attr name='gpuvirt/weight' value='300'/>
    <attr name='gpuvirt/min_pct' value='20'/>
    <attr name='gpuvirt/max_pct' value='60'/>
  </capability>
</device>
EOF
$VIRSH nodedev-define "$T/mdev.xml" >"$T/out" 2>&1
ok=$?
DEV=$($VIRSH nodedev-list --all --cap mdev | grep "${UD//-/_}")
$VIRSH nodedev-start "$DEV" >>"$T/out" 2>&1
ok2=$?
ktap_diag "$(cat "$T/out")" "node device: $DEV"
[ $ok -eq 0 ] && [ $ok2 -eq 0 ] && [ -e /sys/bus/mdev/devices/$UD ] &&
	[ "$(cat /sys/bus/mdev/devices/$UD/gpuvirt/weight)" = 300 ] &&
	[ "$(cat /sys/bus/mdev/devices/$UD/gpuvirt/min_pct)" = 20 ] &&
	[ "$(cat /sys/bus/mdev/devices/$UD/gpuvirt/max_pct)" = 60 ] &&
	mdevctl list --defined --dumpjson -u $UD >"$T/mdevctl.json" &&
	python3 -c '
import json, sys
def walk(o):	# mdevctl nests devices under parents: find the ones with a type
    if isinstance(o, dict):
        if "mdev_type" in o:
            yield o
        for x in o.values():
            yield from walk(x)
    elif isinstance(o, list):
        for x in o:
            yield from walk(x)
devs = list(walk(json.load(open(sys.argv[1]))))
assert len(devs) == 1, devs
v = devs[0]
attrs = {k: w for a in v["attrs"] for k, w in a.items()}
assert v["mdev_type"] == "gpuvirt_sim-H200-35C", v
assert attrs == {"gpuvirt/weight": "300", "gpuvirt/min_pct": "20", "gpuvirt/max_pct": "60"}, attrs' "$T/mdevctl.json"
rc=$?
[ $rc -eq 0 ] || ktap_diag "$(cat "$T/mdevctl.json")"
[ $rc -eq 0 ]
ktap_result $? "nodedev-define + nodedev-start: the vGPU exists with weight 300, min 20, max 60 (mdevctl defined it with those attrs)"

# 5: the scheduler shows them, under the policy that uses weights
S=/sys/kernel/debug/gpuvirt/gpus/sim0/vgpus/$UD/sched
echo weighted >$PF/gpuvirt/sched_policy
"$CTL" -j vgpu show uuid $UD >"$T/v" 2>&1
"$CTL" -j sched show gpu 0 >"$T/s" 2>&1
ktap_diag "$(cat "$T/v")" "$(cat "$T/s")"
python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["vgpu"][0]
assert v["type"] == "H200-35C" and v["weight"] == 300 and v["min"] == 20 and v["max"] == 60, v
s = json.load(open(sys.argv[2]))["sched"][0]
assert s["policy"] == "weighted" and s["vgpus"] == 1, s' "$T/v" "$T/s" &&
	grep -qx "policy: weighted" /sys/kernel/debug/gpuvirt/gpus/sim0/sched &&
	grep -qx "weight: 300" $S && grep -qx "min_ppm: 200000" $S && grep -qx "max_ppm: 600000" $S
ktap_result $? "under the weighted policy, gpuvirtctl (netlink) and the core's debugfs show the vGPU with those settings"

# 6: libvirt shows it under the GPU, and the counts follow
[ "$(mdev_parent $UD)" = $NODE ] && wait_for counts_match gpuvirt_sim-H200-35C 3 >/dev/null 2>&1
ktap_result $? "the vGPU's node device has parent $NODE; H200-35C now has 3 in libvirt and sysfs"

# 7: vGPUs made through sysfs and gpuvirtctl are the GPU's children too
echo $US >$TYPES/gpuvirt_sim-H200-35C/create &&
	UC=$("$CTL" -j vgpu add gpu 0 type H200-35C | python3 -c 'import json, sys; print(json.load(sys.stdin)["vgpu"][0]["uuid"])')
ok=$?
wait_for mdev_parent $US >/dev/null
p1=$(mdev_parent $US)
wait_for mdev_parent "$UC" >/dev/null
p2=$(mdev_parent "$UC")
ktap_diag "parents: $p1 $p2"
[ $ok -eq 0 ] && [ "$p1" = $NODE ] && [ "$p2" = $NODE ]
ktap_result $? "vGPUs made through sysfs and gpuvirtctl have parent $NODE, not computer"
echo 1 >/sys/bus/mdev/devices/$US/remove
"$CTL" vgpu del uuid "$UC"

# 8: a domain with the vGPU starts and stops; the vGPU is open meanwhile
domain_xml gv-mdev "<hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='$UD'/></source>
    </hostdev>" >"$T/dom.xml"
is_open() {
	"$CTL" -j vgpu show uuid "$1" | python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["vgpu"][0]["open"] is not True)'
}
# QEMU closes the device as it exits, a moment after virsh destroy returns
closed_soon() {
	local i

	for i in $(seq 40); do
		is_open "$1" || return 0
		sleep 0.5
	done
	return 1
}
$VIRSH create "$T/dom.xml" --paused >"$T/out" 2>&1
ok=$?
st=$($VIRSH domstate gv-mdev 2>&1)
is_open $UD
op=$?
$VIRSH destroy gv-mdev >>"$T/out" 2>&1
ok2=$?
ktap_diag "$(cat "$T/out")" "state: $st"
[ $ok -eq 0 ] && [ "$st" = paused ] && [ $op -eq 0 ] && [ $ok2 -eq 0 ] && closed_soon $UD &&
	! $VIRSH domstate gv-mdev >/dev/null 2>&1
ktap_result $? "a domain with the vGPU as an mdev hostdev starts (vGPU open) and stops (closed)"

# 9: nodedev-destroy and nodedev-undefine
$VIRSH nodedev-destroy "$DEV" >/dev/null 2>&1 && [ ! -e /sys/bus/mdev/devices/$UD ] &&
	! "$CTL" vgpu show uuid $UD >/dev/null 2>&1 &&
	$VIRSH nodedev-undefine "$DEV" >/dev/null 2>&1 && ! mdevctl list --defined | grep -q "$UD" &&
	wait_for counts_match gpuvirt_sim-H200-35C 4 >/dev/null 2>&1
ktap_result $? "nodedev-destroy removes the vGPU (sysfs, netlink), nodedev-undefine its definition; counts back to 4"

# 10, 11: MIG-backed types (a dash-digit-dash name: H200-1-18C), where
# libvirt sees them; the GPU's PCI function offers them in MIG mode
MIGT=$(ls $TYPES | grep -E -- '-[0-9]+-[0-9]')
if [ -z "$MIGT" ]; then
	ktap_skip "MIG-backed types in libvirt" "$NODE offers no MIG-backed type"
	ktap_skip "nodedev-create of a MIG-backed vGPU" "$NODE offers no MIG-backed type"
else
	echo 1 >$PF/gpuvirt/mig_mode && "$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
		"$CTL" mig create gpu 0 profile 1g.18gb >/dev/null &&
		"$CTL" mig create gpu 0 profile 3g.71gb >/dev/null
	ok=$?
	wait_for counts_match gpuvirt_sim-H200-1-18C 2 gpuvirt_sim-H200-3-71C 1 gpuvirt_sim-H200-35C 0 >"$T/out" 2>&1
	rc=$?
	ktap_diag "MIG-backed types: $(echo $MIGT)" "$(cat "$T/out")"
	[ $ok -eq 0 ] && [ $rc -eq 0 ]
	ktap_result $? "mig_mode 1 with GIs 1g,1g,3g: libvirt lists every MIG-backed type at sysfs's count (H200-1-18C 2, H200-3-71C 1, time-sliced 0)"

	sed -e "s/gpuvirt_sim-H200-35C/gpuvirt_sim-H200-1-18C/" -e "/<attr/d" "$T/mdev.xml" >"$T/mig.xml"
	$VIRSH nodedev-create "$T/mig.xml" >"$T/out" 2>&1
	ok=$?
	ktap_diag "$(cat "$T/out")"
	[ $ok -eq 0 ] && "$CTL" -j vgpu show uuid $UD >"$T/v" && python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["vgpu"][0]
assert v["gi"] == 0 and v["type"] == "H200-1-18C", v' "$T/v" &&
		wait_for counts_match gpuvirt_sim-H200-1-18C 1 >/dev/null 2>&1 &&
		$VIRSH nodedev-destroy "$DEV" >/dev/null 2>&1 && [ ! -e /sys/bus/mdev/devices/$UD ]
	ktap_result $? "nodedev-create of H200-1-18C on $NODE: the vGPU is on GI 0; destroyed again"
	for g in 0 1 2; do "$CTL" mig destroy gpu 0 gi $g >/dev/null; done
	echo 0 >$PF/gpuvirt/mig_mode
fi

# 12: SR-IOV: the VFs are node devices, children of the PF
echo sriov >$PF/gpuvirt/vgpu_model && echo 2 >$PF/sriov_numvfs &&
	echo 3 >/sys/bus/pci/devices/8000:00:00.1/gpuvirt/current_vgpu_type
ok=$?
wait_for bash -c "$VIRSH nodedev-list --cap pci | grep -qx pci_8000_00_00_1"
$VIRSH nodedev-dumpxml pci_8000_00_00_1 >"$T/vf.xml" 2>&1
$VIRSH nodedev-dumpxml $NODE >"$T/pf.xml" 2>&1
ktap_diag "$(grep -A3 "phys_function\|virt_functions" "$T/vf.xml" "$T/pf.xml" | head -12)"
[ $ok -eq 0 ] && grep -q "<capability type='phys_function'>" "$T/vf.xml" &&
	grep -q "<capability type='virt_functions' maxCount='16'>" "$T/pf.xml" &&
	grep -q "<function>1</function>" "$T/vf.xml" &&
	grep -q "<name>gpuvirt_sim_vf</name>" "$T/vf.xml" && grep -q "<iommuGroup " "$T/vf.xml"
ktap_result $? "sriov model: libvirt lists VF 8000:00:00.1 (phys_function, IOMMU group), the PF with virt_functions (16)"

# 13: a domain with the VF vGPU as a PCI hostdev, managed='no'. libvirt
# before 10.0 takes an unmanaged PCI device only bound to vfio-pci (or
# pci-stub, xen-pciback), not to a vendor's VFIO driver as a VF vGPU is:
# it refuses, and QEMU by address is the way (sriov.sh). Later versions
# also take VFIO variant drivers; there the domain must start.
domain_xml gv-vf "<hostdev mode='subsystem' type='pci' managed='no'>
      <source><address domain='0x8000' bus='0x00' slot='0x00' function='0x1'/></source>
    </hostdev>" >"$T/domvf.xml"
UV=$(cat /sys/bus/pci/devices/8000:00:00.1/gpuvirt/vgpu_uuid)
lv=$($VIRSH version | sed -n 's/^Using library: libvirt \([0-9]*\)\..*/\1/p')
$VIRSH create "$T/domvf.xml" --paused >"$T/out" 2>&1
ok=$?
if [ "${lv:-0}" -lt 10 ]; then
	ktap_diag "libvirt $lv: $(cat "$T/out")"
	[ $ok -ne 0 ] && grep -q "Unmanaged PCI device 8000:00:00.1 must be manually detached" "$T/out" &&
		! is_open "$UV" && [ "$(cat /sys/bus/pci/devices/8000:00:00.1/gpuvirt/current_vgpu_type)" = 3 ]
	ktap_result $? "libvirt $lv refuses the VF vGPU as <hostdev type='pci' managed='no'> (not vfio-pci); the VF is untouched"
else
	is_open "$UV"
	op=$?
	$VIRSH destroy gv-vf >>"$T/out" 2>&1
	ok2=$?
	ktap_diag "$(cat "$T/out")"
	[ $ok -eq 0 ] && [ $op -eq 0 ] && [ $ok2 -eq 0 ] && closed_soon "$UV"
	ktap_result $? "a domain with the VF vGPU as <hostdev type='pci' managed='no'> starts (open) and stops"
fi

ktap_finish
