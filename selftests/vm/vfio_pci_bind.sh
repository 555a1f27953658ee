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
# Environment: GPUVIRT_SRC (repo root, the working directory), KVER,
# GPUVIRT_KO_DIR (default build/$KVER).
#
# Exit: 0 all ok, 1 any failure, 4 skipped (a prerequisite is missing).

set -u

DRV=gpuvirt_vfio_pci
KVER=${KVER:-$(uname -r)}
GPUVIRT_SRC=${GPUVIRT_SRC:-$PWD}
GPUVIRT_KO_DIR=${GPUVIRT_KO_DIR:-build/$KVER}
case $GPUVIRT_KO_DIR in
/*) KO=$GPUVIRT_KO_DIR/kernel/vfio_pci/$DRV.ko ;;
*) KO=$GPUVIRT_SRC/$GPUVIRT_KO_DIR/kernel/vfio_pci/$DRV.ko ;;
esac
PCI=/sys/bus/pci
DRVDIR=$PCI/drivers/$DRV
DBG=/sys/kernel/debug/$DRV
MARK="gpuvirt vfio_pci_bind.sh: start $$"
PLAN=18

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit 4
}

[ "$(id -u)" = 0 ] || skip_all "needs root"
[ -e "$KO" ] || skip_all "no module at $KO (run make modules KVER=$KVER)"
[ -n "$(ls /sys/kernel/iommu_groups 2>/dev/null)" ] ||
	skip_all "no IOMMU groups (boot the guest with an IOMMU)"
[ -d /sys/kernel/debug ] && mountpoint -q /sys/kernel/debug ||
	mount -t debugfs none /sys/kernel/debug 2>/dev/null ||
	skip_all "debugfs not available"
[ -d "$DRVDIR" ] && skip_all "$DRV is already loaded"

# The lone display device: class 0x03xxxx on bus 01.
BDF=
for d in "$PCI"/devices/0000:01:*; do
	[ -e "$d/class" ] || continue
	case $(cat "$d/class") in
	0x03*) BDF=${d##*/}; break ;;
	esac
done
[ -n "$BDF" ] || skip_all "no display device on bus 01"
DEV=$PCI/devices/$BDF
[ -e "$DEV/driver" ] && skip_all "$BDF already has driver $(basename "$(readlink "$DEV/driver")")"
GROUP=$(basename "$(readlink "$DEV/iommu_group")")
[ -n "$GROUP" ] || skip_all "$BDF has no IOMMU group"

echo "TAP version 13"
echo "1..$PLAN"
echo "# device $BDF, IOMMU group $GROUP, module $KO"

n=0
fails=0
skips=0
ok() {
	n=$((n + 1))
	echo "ok $n $*"
}
not_ok() {
	n=$((n + 1))
	fails=$((fails + 1))
	echo "not ok $n $*"
}
# check DESC CMD...: one test point from a command's exit status.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
skip() {
	n=$((n + 1))
	skips=$((skips + 1))
	echo "ok $n $1 # SKIP $2"
}

# diag WHAT: stdin as KTAP diagnostic lines.
diag() {
	local line

	while IFS= read -r line; do
		echo "# $1: $line"
	done
}

driver_of() {
	[ -e "$PCI/devices/$1/driver" ] || return 0
	basename "$(readlink "$PCI/devices/$1/driver")"
}
bound_to_us() {
	[ "$(driver_of "$1")" = "$DRV" ]
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

cleanup() {
	local d
	[ -d "$DRVDIR" ] || return 0
	for d in "$PCI"/devices/*; do
		bound_to_us "${d##*/}" && sysfs_write "$DRVDIR/unbind" "${d##*/}"
		[ "$(cat "$d/driver_override" 2>/dev/null)" = "$DRV" ] &&
			sysfs_write "$d/driver_override" ""
	done
	rmmod "$DRV" 2>/dev/null
	rmmod gpuvirt 2>/dev/null
}
trap cleanup EXIT

echo "$MARK" >/dev/kmsg

# 1-2: load.
check "modprobe vfio_pci_core and vfio_iommu_type1" \
	modprobe -a vfio_pci_core vfio_iommu_type1 vfio mdev
# the driver reports to the core's netlink family, so the core comes first
check "insmod gpuvirt and $DRV" \
	sh -c 'grep -q "^gpuvirt " /proc/modules || insmod "$1"; insmod "$2"' \
	sh "${KO%/vfio_pci/*}/core/gpuvirt.ko" "$KO"

# 3-5: loading binds nothing, and bind without driver_override is refused.
check "no device is bound after insmod" none_bound
check "debugfs root $DBG exists" test -d "$DBG"
if ! sysfs_write "$DRVDIR/bind" "$BDF" && ! bound_to_us "$BDF"; then
	ok "bind $BDF without driver_override is refused"
else
	not_ok "bind $BDF without driver_override is refused"
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
	   dmesg | sed -n "/$MARK/,\$p" | grep -q "$VGA.*refusing the boot VGA"; then
		ok "boot VGA device $VGA is refused without allow_boot_vga"
	else
		not_ok "boot VGA device $VGA is refused without allow_boot_vga"
		sysfs_write "$DRVDIR/unbind" "$VGA"
	fi
	sysfs_write "$PCI/devices/$VGA/driver_override" ""
else
	skip "boot VGA device is refused without allow_boot_vga" \
		"no unbound boot VGA device in this guest"
fi

# 7-10: bind through driver_override.
sysfs_write "$DEV/driver_override" "$DRV"
sysfs_write "$PCI/drivers_probe" "$BDF"
check "$BDF binds through driver_override" bound_to_us "$BDF"
check "/dev/vfio/$GROUP exists" test -c "/dev/vfio/$GROUP"
check "debugfs iommu_group is $GROUP" \
	test "$(cat "$DBG/$BDF/iommu_group" 2>/dev/null)" = "$GROUP"
check "debugfs open_count is 0 before any open" \
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
		ok "QEMU opens $BDF through VFIO and lists it ($vd)"
	else
		diag qemu <<<"$out"
		not_ok "QEMU opens $BDF through VFIO and lists it (rc $rc)"
	fi
	check "debugfs open_count is 1 after QEMU" \
		test "$(cat "$DBG/$BDF/open_count" 2>/dev/null)" = 1
	check "debugfs close_count is 1 after QEMU" \
		test "$(cat "$DBG/$BDF/close_count" 2>/dev/null)" = 1
else
	skip "QEMU opens $BDF through VFIO" "no qemu-system-x86_64"
	skip "debugfs open_count is 1 after QEMU" "no qemu-system-x86_64"
	skip "debugfs close_count is 1 after QEMU" "no qemu-system-x86_64"
fi

# 14-17: unbind and unload leave nothing behind.
sysfs_write "$DRVDIR/unbind" "$BDF"
if ! bound_to_us "$BDF" && [ ! -e "$DBG/$BDF" ]; then
	ok "unbind $BDF removes its debugfs directory"
else
	not_ok "unbind $BDF removes its debugfs directory"
fi
sysfs_write "$DEV/driver_override" ""
check "driver_override of $BDF is cleared" \
	test "$(cat "$DEV/driver_override")" = "(null)"
check "rmmod $DRV" rmmod "$DRV"
if [ ! -d "$DRVDIR" ] && [ ! -e "$DBG" ] &&
   ! grep -q "^$DRV " /proc/modules; then
	ok "module, driver and debugfs root are gone"
else
	not_ok "module, driver and debugfs root are gone"
fi

# 18: the kernel stayed quiet.
bad=$(dmesg | sed -n "/$MARK/,\$p" |
      grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection')
if [ -z "$bad" ]; then
	ok "no kernel warning, BUG or Oops during the test"
else
	diag dmesg <<<"$bad"
	not_ok "no kernel warning, BUG or Oops during the test"
fi

[ "$n" = "$PLAN" ] || { echo "# ran $n tests, planned $PLAN"; fails=$((fails + 1)); }
echo "# $((n - fails - skips)) passed, $fails failed, $skips skipped"
[ "$fails" = 0 ]
