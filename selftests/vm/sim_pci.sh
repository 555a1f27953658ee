#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The simulated GPU as a PCI function (kernel/sim/pci.c): what the PCI core,
# lspci and sysfs see of it, checked against the config space the sim
# emulates (debugfs gpuvirt_sim/simN/config), its BAR window, the mdev
# parent on it, and its life through PCI remove/rescan, del_device and
# rmmod. Runs in the test VM; KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

F0=8000:00:00.0
U=6c1a3e0f-5b2d-4e8a-9f70-00000000c0a1

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$U"
vmt_need_cmds lspci setpci
vmt_need_modules gpuvirt

# The bytes of a config space dump "OFF: b0 b1 ..." (debugfs) at OFF.
dbg_bytes() {
	sed -n "s/^$2: //p" "$HW/$1/config"
}
# The same 16 bytes read through the PCI core (sysfs config file).
sys_bytes() {
	od -An -tx1 -v -j $((16#$2)) -N16 "/sys/bus/pci/devices/$1/config" |
		sed 's/^ //'
}

ktap_plan 20

vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >$BUS/new_device
ktap_result $? "modules loaded, simulated H200 created"

# 2: lspci, by number and by name
lspci -D -n -s $F0 >"$T/n" && lspci -D -s $F0 >"$T/name"
ktap_diag "$(cat "$T/n" "$T/name")"
[ "$(cat "$T/n")" = "$F0 0302: fffc:0001 (rev 01)" ] && grep -q "^$F0 3D controller" "$T/name"
ktap_result $? "lspci lists $F0 as a 3D controller fffc:0001 rev 01"

# 3: the function is bound to gpuvirt_sim, and sim0 links to it
[ "$(basename "$(readlink /sys/bus/pci/devices/$F0/driver)")" = gpuvirt_sim ] &&
	[ "$(readlink -f $BUS/devices/sim0/gpu)" = "$(readlink -f /sys/bus/pci/devices/$F0)" ] &&
	[ "$(readlink -f /sys/bus/pci/devices/$F0)" = "$(readlink -f $BUS/devices/sim0)/pci8000:00/$F0" ] &&
	grep -qx "pci: $F0" "$HW/sim0/hw"
ktap_result $? "bound to gpuvirt_sim, below sim0's own domain, sim0/gpu and the sim's hw file agree"

# 4: lspci -vv reads the BARs and capabilities
lspci -vv -s $F0 >"$T/vv"
ktap_diag "$(cat "$T/vv")"
grep -Eq "Region 0: Memory at [0-9a-f]+ \(64-bit, non-prefetchable\) \[size=16M\]" "$T/vv" &&
	grep -Eq "Region 2: Memory at [0-9a-f]+ \(64-bit, prefetchable\) \[size=256M\]" "$T/vv" &&
	grep -q "Express (v2) Root Complex Integrated Endpoint" "$T/vv" &&
	grep -q "Device Serial Number ff-fc-00-01-00-00-00-00" "$T/vv" &&
	grep -q "Kernel driver in use: gpuvirt_sim" "$T/vv" &&
	grep -q "Control: I/O- Mem+ BusMaster-" "$T/vv"
ktap_result $? "lspci -vv: 64-bit BAR0 16M, 64-bit prefetchable BAR2 256M, PCIe RCiEP, DSN, memory decode on"

# 5: what the PCI core reads is what the sim emulates
ok=0
for off in 000 010 020 030 040 100; do
	a=$(dbg_bytes sim0 $off) b=$(sys_bytes $F0 $off)
	[ "$a" = "$b" ] || { ok=1; ktap_diag "$off: debugfs '$a' sysfs '$b'"; }
done
[ $ok -eq 0 ]
ktap_result $? "config space through the PCI core equals the sim's (header, PCIe cap, DSN)"

# 6: writes: command bits stick, read-only fields do not change
setpci -s $F0 COMMAND=0x0006 && setpci -s $F0 VENDOR_ID=0x1234 &&
	setpci -s $F0 CLASS_DEVICE=0x0300 && setpci -s $F0 CAP_EXP+8.w=0x2030
ktap_diag "$(dbg_bytes sim0 000) / $(dbg_bytes sim0 040)"
[ "$(setpci -s $F0 COMMAND)" = 0006 ] &&
	[ "$(dbg_bytes sim0 000 | cut -d' ' -f1-6)" = "fc ff 01 00 06 00" ] &&
	[ "$(setpci -s $F0 CLASS_DEVICE)" = 0302 ] &&
	[ "$(setpci -s $F0 CAP_EXP+8.w)" = 2030 ]
ktap_result $? "config writes: COMMAND and PCIe device control stick in the sim, vendor and class are read-only"

# 7: the BARs lie in the sim's window, busy and exclusive
python3 - "$F0" >"$T/iomem" 2>&1 <<'EOF'
import sys
f0 = sys.argv[1]
win, bars = None, []
for line in open("/proc/iomem"):
    rng, name = line.split(" : ", 1)
    s, e = (int(x, 16) for x in rng.strip().split("-"))
    if name.strip() == "sim0":
        win = (s, e)
    elif name.strip() == f0:
        bars.append((s, e))
res = [l.split() for l in open(f"/sys/bus/pci/devices/{f0}/resource")]
r0 = [int(x, 16) for x in res[0][:2]]
r2 = [int(x, 16) for x in res[2][:2]]
assert win and win[1] - win[0] + 1 == 512 << 20 and win[0] >= 64 << 30, win
assert sorted(bars) == sorted([tuple(r0), tuple(r2)]), (bars, r0, r2)
assert r0[1] - r0[0] + 1 == 16 << 20 and r2[1] - r2[0] + 1 == 256 << 20
assert all(win[0] <= s and e <= win[1] for s, e in bars)
print("window %#x-%#x BAR0 %#x BAR2 %#x" % (win[0], win[1], r0[0], r2[0]))
EOF
rc=$?
ktap_diag "$(cat "$T/iomem")"
[ $rc -eq 0 ]
ktap_result $? "/proc/iomem: a 512M window named sim0 above 64G holds exactly BAR0 and BAR2"

python3 - "$F0" >"$T/mmap" 2>&1 <<'EOF'
import errno, mmap, os, sys
fd = os.open(f"/sys/bus/pci/devices/{sys.argv[1]}/resource0", os.O_RDWR)
try:
    mmap.mmap(fd, 4096)
except OSError as e:
    assert e.errno == errno.EINVAL, e
    print("refused:", e)
else:
    raise SystemExit("mmap of resource0 succeeded")
EOF
rc=$?
ktap_diag "$(cat "$T/mmap")"
[ $rc -eq 0 ]
ktap_result $? "mmap of a BAR through sysfs is refused (EINVAL): nothing decodes there"

# 9: the mdev parent is the PCI function
[ "$(readlink -f /sys/class/mdev_bus/$F0)" = "$(readlink -f /sys/bus/pci/devices/$F0)" ] &&
	[ -d /sys/bus/pci/devices/$F0/mdev_supported_types/gpuvirt_sim-H200-35C ] &&
	[ -d /sys/bus/pci/devices/$F0/gpuvirt ] && [ ! -e /sys/class/mdev_bus/sim0 ]
ktap_result $? "/sys/class/mdev_bus/$F0 is the function, with the types and the gpuvirt/ files"

# 10: netlink and gpuvirtctl name the device
"$CTL" -j gpu show id 0 >"$T/gpu" && python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["gpu"][0]
assert g["name"] == "sim0" and g["dev"] == sys.argv[2], g' "$T/gpu" $F0 &&
	"$CTL" gpu show id 0 | grep -q "name sim0 dev $F0 model"
ktap_result $? "gpu show: dev $F0 (netlink dev-name), name sim0"

# 11: gpuvirtctl makes a vGPU on it
"$CTL" vgpu add gpu 0 type H200-35C uuid $U >"$T/out" 2>&1
rc=$?
ktap_diag "$(cat "$T/out")"
[ $rc -eq 0 ] &&
	[ "$(readlink -f /sys/bus/mdev/devices/$U/..)" = "$(readlink -f /sys/bus/pci/devices/$F0)" ] &&
	[ "$(cat /sys/bus/pci/devices/$F0/mdev_supported_types/gpuvirt_sim-H200-35C/available_instances)" = 3 ] &&
	[ -d /sys/kernel/debug/gpuvirt/gpus/sim0/vgpus/$U ]
ktap_result $? "vgpu add: the vGPU's parent is $F0, the type has 3 left, the core's debugfs has it"

# 12: a second GPU, a second domain
echo "1 a100-40gb" >$BUS/new_device && lspci -D -n -s 8001:00:00.0 | grep -q "0302: fffc:0001" &&
	grep -qx "pci: 8001:00:00.0" "$HW/sim1/hw" &&
	lspci -vv -s 8001:00:00.0 | grep -q "Device Serial Number ff-fc-00-01-00-00-00-01"
ktap_result $? "GPU 1 is 8001:00:00.0, its serial number carries its id"

# 13: ids: the highest domain, and one past it
echo "32766 custom 2G 1" >$BUS/new_device && [ -e /sys/bus/pci/devices/fffe:00:00.0/gpuvirt ]
ok=$?
dmesg -c >/dev/null
echo "32767 custom 2G 1" >$BUS/new_device 2>"$T/err"
rc=$?
[ $ok -eq 0 ] && [ $rc -ne 0 ] && grep -q "Invalid argument" "$T/err" &&
	dmesg | grep -q "id 32767 is too large" && [ ! -e $BUS/devices/sim32767 ] &&
	echo 32766 >$BUS/del_device
ktap_result $? "id 32766 is domain fffe; 32767 is refused with EINVAL and a message"

# 14: PCI remove of the function with a vGPU: the GPU leaves, sim0 stays
echo 1 >/sys/bus/pci/devices/$F0/remove
[ ! -e /sys/bus/mdev/devices/$U ] && [ ! -e /sys/bus/pci/devices/$F0 ] &&
	[ -d $BUS/devices/sim0 ] && [ ! -e $BUS/devices/sim0/gpu ] &&
	! "$CTL" gpu show id 0 >/dev/null 2>&1 && [ ! -e /sys/kernel/debug/gpuvirt/gpus/sim0 ]
ktap_result $? "PCI remove: vGPU and GPU gone (netlink, debugfs), the sim device stays"

# 15: rescan brings it back, registered again, with a fresh config space
echo 1 >/sys/bus/pci/rescan
[ -e /sys/bus/pci/devices/$F0/gpuvirt ] && "$CTL" gpu show id 0 | grep -q "dev $F0" &&
	grep -qx "registered: 1" "$HW/sim0/hw" &&
	[ "$(cat /sys/bus/pci/devices/$F0/mdev_supported_types/gpuvirt_sim-H200-35C/available_instances)" = 4 ] &&
	"$CTL" vgpu add gpu 0 type H200-35C uuid $U >/dev/null
ktap_result $? "PCI rescan: the function is back and bound, GPU 0 registered, a vGPU can be made"

# 16: del_device removes the domain, the window and the parent
echo 1 >/sys/bus/mdev/devices/$U/remove && echo 0 >$BUS/del_device
[ -z "$(lspci -D -s 8000:00:00.0)" ] && ! grep -q " : sim0$" /proc/iomem &&
	[ ! -e /sys/class/mdev_bus/$F0 ] && [ ! -e $BUS/devices/sim0 ] &&
	[ ! -d /sys/class/pci_bus/8000:00 ]
ktap_result $? "del_device: no function, no bus, no window, no mdev parent"

# 17: the same id again gets the same domain and window size
echo "0 h100-80gb" >$BUS/new_device && lspci -D -n -s $F0 | grep -q fffc:0001 &&
	grep -c " : sim0$" /proc/iomem | grep -qx 1
ktap_result $? "a new GPU 0 gets $F0 again"

# 18: a function that does not exist reads as absent
[ "$(setpci -s 8000:00:01.0 VENDOR_ID 2>/dev/null)" = "" ] && [ -z "$(lspci -s 8000:00:01.0)" ] &&
	[ "$(ls /sys/class/pci_bus/8000:00/device/ | grep -c '^8000:')" = 1 ]
ktap_result $? "the domain has one function, 00:00.0"

# 19: the udev rule matches the bind of the function
grep -q 'ACTION=="bind", SUBSYSTEM=="pci", DRIVER=="gpuvirt_sim"' user/60-gpuvirt.rules &&
	grep -q "^DRIVER=gpuvirt_sim$" /sys/bus/pci/devices/$F0/uevent &&
	grep -q "^PCI_ID=FFFC:0001$" /sys/bus/pci/devices/$F0/uevent
ktap_result $? "udev: the function's uevent carries DRIVER=gpuvirt_sim, which the rule matches on bind"

# 20: rmmod with GPUs present removes every domain
rmmod gpuvirt_sim && [ -z "$(lspci -D | grep -E '^(8000|8001):')" ] &&
	! grep -qE " : sim[0-9]+$" /proc/iomem && rmmod gpuvirt
ktap_result $? "rmmod with GPUs present: domains and windows gone"

ktap_finish
