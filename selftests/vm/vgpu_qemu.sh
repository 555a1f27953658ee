#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# QEMU as a real consumer of a vGPU: it starts with
# -device vfio-pci,sysfsdev=/sys/bus/mdev/devices/<uuid>, and its monitor's
# "info pci" shows our device with its BARs. Runs in the test VM; KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

UUID=2f0c6a9e-7d41-4c5e-9b0a-0000000000a1
TYPE=/sys/bus/gpuvirt_sim/devices/sim0/gpu/mdev_supported_types/gpuvirt_sim-H200-35C

vmt_on_exit vmt_unload gpuvirt_sim gpuvirt
vmt_on_exit vmt_remove_mdevs "$UUID"
vmt_need_cmds qemu-system-x86_64
vmt_need_modules gpuvirt

ktap_plan 5
vmt_load gpuvirt gpuvirt_sim &&
	echo "0 h200-141gb" >/sys/bus/gpuvirt_sim/new_device
ktap_result $? "modules loaded, simulated H200 created"

echo $UUID >$TYPE/create
ktap_result $? "vGPU H200-35C created"

# -S: the guest never runs; the monitor answers info pci, then quit.
{ echo "info pci"; sleep 5; echo quit; } |
	timeout 90 qemu-system-x86_64 -accel tcg -machine q35 -nodefaults \
		-display none -S -monitor stdio -m 256 \
		-device vfio-pci,sysfsdev=/sys/bus/mdev/devices/$UUID >"$T/out" 2>"$T/err"
rc=$?
ktap_diag "$(tr -d '\r' <"$T/out" | grep -v '^\s*$' | grep -A8 '1234:6776')" "$(cat "$T/err")"
[ $rc -eq 0 ]
ktap_result $? "QEMU started with the vGPU and quit cleanly"

tr -d '\r' <"$T/out" >"$T/pci"
grep -q "PCI device 1234:6776" "$T/pci" && grep -q "3D controller\|Class 0302" "$T/pci"
ktap_result $? "info pci shows a 3D controller 1234:6776"

grep -A8 "1234:6776" "$T/pci" | grep -q "BAR0: 32 bit memory" &&
	grep -A8 "1234:6776" "$T/pci" | grep -q "BAR2: 64 bit prefetchable memory"
ktap_result $? "info pci shows BAR0 and the 64-bit prefetchable BAR2"

ktap_finish
