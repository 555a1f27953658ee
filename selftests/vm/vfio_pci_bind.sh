#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# VM test for gpuvirt_vfio_pci: the module binds nothing by itself, binds a
# display device through driver_override, hands it to a real VFIO user (a
# paused QEMU with -device vfio-pci), counts that open in debugfs, and leaves
# nothing behind after unbind and rmmod. Prints KTAP.
#
# Runs as root inside the gpuvirt test guest (selftests/vm-run.sh), which has
# an IOMMU and a bochs-display alone behind a PCIe root port on bus 01.
#
# Exit: 0 all ok, 1 any failure, 4 skipped (a prerequisite is missing).

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init

DRV=gpuvirt_vfio_pci
vmt_ko KOFILE $DRV
PCI=/sys/bus/pci
DRVDIR=$PCI/drivers/$DRV
DBG=/sys/kernel/debug/$DRV
PLAN=18

vmt_need_root
vmt_need_modules $DRV
vmt_need_iommu
vmt_need_debugfs
vmt_need_unloaded $DRV

# The lone display device: class 0x03xxxx on bus 01.
BDF=
for d in "$PCI"/devices/0000:01:*; do
	[ -e "$d/class" ] || continue
	case $(cat "$d/class") in
	0x03*) BDF=${d##*/}; break ;;
	esac
done
[ -n "$BDF" ] || vmt_skip "no display device on bus 01"
DEV=$PCI/devices/$BDF
[ -e "$DEV/driver" ] && vmt_skip "$BDF already has driver $(basename "$(readlink "$DEV/driver")")"
GROUP=$(basename "$(readlink "$DEV/iommu_group")")
[ -n "$GROUP" ] || vmt_skip "$BDF has no IOMMU group"

ktap_plan $PLAN
echo "# device $BDF, IOMMU group $GROUP, module $KOFILE"

# diag WHAT: stdin as KTAP diagnostic lines.
diag() {
	local line

	while IFS= read -r line; do
		echo "# $1: $line"
	done
}

bound_to_us() {
	[ "$(drv_of "$1")" = "$DRV" ]
}
none_bound() {
	local l

	for l in "$DRVDIR"/[0-9a-f][0-9a-f][0-9a-f][0-9a-f]:*; do
		[ -e "$l" ] && return 1
	done
	return 0
}
sysfs_write() {
	# A failed write is reported by the shell; keep it off the TAP stream.
	echo "$2" 2>/dev/null >"$1"
}

# gpuvirt is unloaded too when the test has removed $DRV itself
cleanup() {
	local d
	if [ -d "$DRVDIR" ]; then
		for d in "$PCI"/devices/*; do
			bound_to_us "${d##*/}" && sysfs_write "$DRVDIR/unbind" "${d##*/}"
			[ "$(cat "$d/driver_override" 2>/dev/null)" = "$DRV" ] &&
				sysfs_write "$d/driver_override" ""
		done
	fi
	vmt_unload "$DRV" gpuvirt
}
vmt_on_exit cleanup

vmt_kmsg_mark

# 1-2: load.
ktap_check "modprobe vfio_pci_core and vfio_iommu_type1" \
	modprobe -a vfio_pci_core vfio_iommu_type1 vfio mdev
# the driver reports to the core's netlink family, so the core comes first
ktap_check "insmod gpuvirt and $DRV" vmt_load -k gpuvirt $DRV

# 3-5: loading binds nothing, and bind without driver_override is refused.
ktap_check "no device is bound after insmod" none_bound
ktap_check "debugfs root $DBG exists" test -d "$DBG"
if ! sysfs_write "$DRVDIR/bind" "$BDF" && ! bound_to_us "$BDF"; then
	ktap_result 0 "bind $BDF without driver_override is refused"
else
	ktap_result 1 "bind $BDF without driver_override is refused"
	sysfs_write "$DRVDIR/unbind" "$BDF"
fi

# 6: the boot VGA device is refused (only when the guest has one free).
VGA=
for d in "$PCI"/devices/*; do
	[ "$(cat "$d/boot_vga" 2>/dev/null)" = 1 ] && [ ! -e "$d/driver" ] &&
		VGA=${d##*/}
done
if [ -n "$VGA" ]; then
	sysfs_write "$PCI/devices/$VGA/driver_override" "$DRV"
	sysfs_write "$PCI/drivers_probe" "$VGA"
	if ! bound_to_us "$VGA" &&
	   vmt_kmsg | grep -q "$VGA.*refusing the boot VGA"; then
		ktap_result 0 "boot VGA device $VGA is refused without allow_boot_vga"
	else
		ktap_result 1 "boot VGA device $VGA is refused without allow_boot_vga"
		sysfs_write "$DRVDIR/unbind" "$VGA"
	fi
	sysfs_write "$PCI/devices/$VGA/driver_override" ""
else
	ktap_skip "boot VGA device is refused without allow_boot_vga" \
		"no unbound boot VGA device in this guest"
fi

# 7-10: bind through driver_override.
sysfs_write "$DEV/driver_override" "$DRV"
sysfs_write "$PCI/drivers_probe" "$BDF"
ktap_check "$BDF binds through driver_override" bound_to_us "$BDF"
ktap_check "/dev/vfio/$GROUP exists" test -c "/dev/vfio/$GROUP"
ktap_check "debugfs iommu_group is $GROUP" \
	test "$(cat "$DBG/$BDF/iommu_group" 2>/dev/null)" = "$GROUP"
ktap_check "debugfs open_count is 0 before any open" \
	test "$(cat "$DBG/$BDF/open_count" 2>/dev/null)" = 0

# 11-13: a real VFIO user: QEMU opens the device, lists it, and quits.
QEMU=$(command -v qemu-system-x86_64)
if [ -n "$QEMU" ]; then
	vd=$(sed 's/^0x//' "$DEV/vendor"):$(sed 's/^0x//' "$DEV/device")
	out=$(printf 'info pci\nquit\n' |
	      timeout 60 "$QEMU" -accel tcg -machine q35 -m 64 -nodefaults \
		-display none -S -monitor stdio \
		-device "vfio-pci,host=$BDF,id=gvtest" 2>&1)
	rc=$?
	if [ $rc = 0 ] && echo "$out" | grep -q "PCI device $vd" &&
	   echo "$out" | grep -q 'id "gvtest"'; then
		ktap_result 0 "QEMU opens $BDF through VFIO and lists it ($vd)"
	else
		diag qemu <<<"$out"
		ktap_result 1 "QEMU opens $BDF through VFIO and lists it (rc $rc)"
	fi
	ktap_check "debugfs open_count is 1 after QEMU" \
		test "$(cat "$DBG/$BDF/open_count" 2>/dev/null)" = 1
	ktap_check "debugfs close_count is 1 after QEMU" \
		test "$(cat "$DBG/$BDF/close_count" 2>/dev/null)" = 1
else
	ktap_skip "QEMU opens $BDF through VFIO" "no qemu-system-x86_64"
	ktap_skip "debugfs open_count is 1 after QEMU" "no qemu-system-x86_64"
	ktap_skip "debugfs close_count is 1 after QEMU" "no qemu-system-x86_64"
fi

# 14-17: unbind and unload leave nothing behind.
sysfs_write "$DRVDIR/unbind" "$BDF"
if ! bound_to_us "$BDF" && [ ! -e "$DBG/$BDF" ]; then
	ktap_result 0 "unbind $BDF removes its debugfs directory"
else
	ktap_result 1 "unbind $BDF removes its debugfs directory"
fi
sysfs_write "$DEV/driver_override" ""
ktap_check "driver_override of $BDF is cleared" \
	test "$(cat "$DEV/driver_override")" = "(null)"
ktap_check "rmmod $DRV" rmmod "$DRV"
if [ ! -d "$DRVDIR" ] && [ ! -e "$DBG" ] &&
   ! grep -q "^$DRV " /proc/modules; then
	ktap_result 0 "module, driver and debugfs root are gone"
else
	ktap_result 1 "module, driver and debugfs root are gone"
fi

# 18: the kernel stayed quiet.
bad=$(vmt_kernel_reports)
if [ -z "$bad" ]; then
	ktap_result 0 "no kernel warning, BUG or Oops during the test"
else
	diag dmesg <<<"$bad"
	ktap_result 1 "no kernel warning, BUG or Oops during the test"
fi

[ "$KTAP_N" = "$PLAN" ] || { echo "# ran $KTAP_N tests, planned $PLAN"; KTAP_FAIL=$((KTAP_FAIL + 1)); }
echo "# $((KTAP_N - KTAP_FAIL - KTAP_SKIP)) passed, $KTAP_FAIL failed, $KTAP_SKIP skipped"
ktap_finish
