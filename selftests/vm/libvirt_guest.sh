#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# libvirt runs a working guest on gpuvirt's vGPUs, with Debian 13's libvirt
# 11 and QEMU 10 in the test VM (lane 7), through its own domain XML and
# nothing else of ours:
#
#  1. a domain with an mdev vGPU (<hostdev type='mdev' model='vfio-pci'>)
#     runs the bare-metal guest in its live mode; "virsh save" stops it into
#     a file (its downtime limit raised first, as the admin guide says: QEMU
#     10.0 may never end the save of a paused domain otherwise) and "virsh
#     restore" brings it back on the same vGPU, where it
#     goes on: every round once and in order, its work checked; debugfs
#     shows one save and one resume. QEMU 10 migrates a VFIO device only if
#     the device or the IOMMU tracks its DMA, or if told enable-migration=on.
#     Where the kernel's VFIO core can report a DMA log, the vGPU offers one
#     (always clean) and the domain asks for nothing: debugfs shows the log
#     started and reported. Debian's kernels from 6.10 cannot (no
#     CONFIG_IOMMUFD_DRIVER), and there the domain sets the option on the
#     hostdev with libvirt's <qemu:override>, as the admin guide says.
#  2. a domain with a VF vGPU as <hostdev type='pci' managed='no'> runs the
#     same guest, whose work the VF's engine context runs, and stops.
#
# The guest (selftests/vm/guest/, -append mode=live) prints its rounds on
# the debug console, which the domain routes to a file with QEMU's own
# arguments (<qemu:commandline>): libvirt models no isa-debugcon.
# selftests/lib/guest_console.py judges the rounds. KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
# shellcheck source=selftests/lib/libvirt.sh
. selftests/lib/libvirt.sh
# shellcheck source=selftests/lib/hangwatch.sh
. selftests/lib/hangwatch.sh

PF=/sys/bus/pci/devices/8000:00:00.0
VF=/sys/bus/pci/devices/8000:00:00.1
TYPES=$PF/mdev_supported_types
UM=5b1e7c3d-2a4f-4e6b-9c8d-0000000031e1
ELF=$VMBIN/vgpu_guest.elf
[[ $ELF = /* ]] || ELF=$PWD/$ELF	# QEMU runs elsewhere
JUDGE="python3 $PWD/selftests/lib/guest_console.py"

if missing=$(libvirt_missing); then
	vmt_skip "$missing is not installed (scripts/deps.sh installs libvirt, mdevctl, udev)"
fi
vmt_need_modules gpuvirt gpuvirt_sim
vmt_need_cmds python3
[ -e "$ELF" ] || vmt_skip "no $ELF (make vm-tests)"
lv=$(virsh -v 2>/dev/null | cut -d. -f1)
# libvirt 9.0 takes no VF vGPU as an unmanaged PCI hostdev, and QEMU 7.2
# has no VFIO migration v2 (libvirt_nodedev.sh checks that refusal)
[ "${lv:-0}" -ge 10 ] || vmt_skip "libvirt ${lv:-?}: this test wants libvirt 10 or later"
qemu-system-x86_64 -device vfio-pci,help 2>/dev/null | grep -Eq '^ *enable-migration=' ||
	vmt_skip "this QEMU has no VFIO migration v2"
libvirt_enter "$@"
vmt_tmpdir

cleanup() {
	local d p

	[ "$KTAP_FAIL" -ne 0 ] && ktap_diag "libvirtd's log:" "$(tail -n 20 "$LIBVIRT_LOG" 2>/dev/null)"
	for d in gv-save gv-vf; do
		timeout 60 $VIRSH destroy $d >/dev/null 2>&1
		# a libvirtd that does not answer leaves its QEMU, which holds
		# the vGPU: the tests after this one want it let go
		p=$(cat /run/libvirt/qemu/$d.pid 2>/dev/null)
		if [ -n "$p" ] && [ "$(cat /proc/"$p"/comm 2>/dev/null)" = qemu-system-x86 ]; then
			ktap_diag "QEMU of $d (pid $p) outlived virsh destroy: SIGKILL"
			kill -KILL "$p"
		fi
	done
	libvirt_stop
	vmt_remove_mdevs
	[ -e $VF/gpuvirt/current_vgpu_type ] && echo 0 >$VF/gpuvirt/current_vgpu_type
	[ -e $PF/sriov_numvfs ] && echo 0 >$PF/sriov_numvfs 2>/dev/null
	[ -e $BUS/del_device ] && echo 0 >$BUS/del_device 2>/dev/null
	vmt_unload gpuvirt_sim gpuvirt
}
vmt_on_exit cleanup

# The guest looks for its vGPU on bus 0, where libvirt puts a PCIe device
# only when told to (it is then an integrated endpoint of the root complex)
ON_BUS0="<address type='pci' domain='0x0000' bus='0x00' slot='0x05' function='0x0'/>"

# guest_xml NAME CONSOLE HOSTDEV [OVERRIDE]: a TCG domain running the live
# guest with the one device HOSTDEV; its debug console appends to CONSOLE,
# and it has a QMP socket of its own, $T/NAME.qmp, beside libvirt's (for
# the diagnostics of a hang); OVERRIDE: a <qemu:override> element
guest_xml() {
	cat <<EOF
<domain type='qemu' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>$1</name>
  <memory unit='MiB'>64</memory>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>$ELF</kernel>
    <cmdline>mode=live</cmdline>
  </os>
  <on_reboot>destroy</on_reboot>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <controller type='usb' model='none'/>
    <memballoon model='none'/>
    $3
  </devices>
  <qemu:commandline>
    <qemu:arg value='-chardev'/>
    <qemu:arg value='file,id=gvcon,path=$2,append=on'/>
    <qemu:arg value='-device'/>
    <qemu:arg value='isa-debugcon,iobase=0xe9,chardev=gvcon'/>
    <qemu:arg value='-qmp'/>
    <qemu:arg value='unix:$T/$1.qmp,server=on,wait=off'/>
  </qemu:commandline>
  ${4:-}
</domain>
EOF
}

# last_round CONSOLE: the last round the console reports, or 0
last_round() {
	local l

	l=$(grep -o '^live: seq=[0-9]*' "$1" 2>/dev/null | tail -n1)
	echo "${l#live: seq=}" | grep -x '[0-9][0-9]*' || echo 0
}

# wait_round DOMAIN CONSOLE N: the guest reported round N, up to 300 s;
# fails early when it reports a wrong result or the domain is gone, and
# then shows the end of the console and of QEMU's log
wait_round() {
	local end=$((SECONDS + 300))

	while [ $SECONDS -lt $end ]; do
		[ "$(last_round "$2")" -ge "$3" ] && return 0
		grep -q 'mismatch' "$2" 2>/dev/null && break
		[ "$($VIRSH domstate "$1" 2>/dev/null)" = running ] || break
		sleep 0.5
	done
	ktap_diag "no round $3 of $1 (state: $($VIRSH domstate "$1" 2>&1))" \
		"console: $(tail -c 300 "$2" 2>/dev/null)" \
		"QEMU: $(tail -n 5 "/var/log/libvirt/qemu/$1.log" 2>/dev/null)"
	return 1
}

# mig UUID KEY: a value of the vGPU's migration file in debugfs
mig() {
	sed -n "s/^$2: //p" "$CORE/sim0/vgpus/$1/migration" 2>/dev/null
}

# is_open UUID: QEMU holds the vGPU open (gpuvirtctl, from netlink)
is_open() {
	"$CTL" -j vgpu show uuid "$1" 2>/dev/null |
		python3 -c 'import json, sys; sys.exit(json.load(sys.stdin)["vgpu"][0]["open"] is not True)'
}

# closed_soon UUID: QEMU let go of it, up to 20 s after virsh returned
closed_soon() {
	local i

	for ((i = 0; i < 40; i++)); do
		is_open "$1" || return 0
		sleep 0.5
	done
	return 1
}

ktap_plan 6

# 1
vmt_load gpuvirt gpuvirt_sim && echo "0 a100-40gb" >$BUS/new_device &&
	echo "$UM" >$TYPES/gpuvirt_sim-A100-1B/create && libvirt_start
rc=$?
ktap_diag "libvirt $(virsh -v), $(qemu-system-x86_64 --version | head -n1)"
[ $rc -eq 0 ]
ktap_result $? "gpuvirt, a simulated A100 with an A100-1B vGPU, udevd and libvirtd up"

# 2: the guest works on the mdev vGPU
CON=$T/save.con
OVERRIDE=
LOGGED=$(mig $UM dma_log_offered)
[ "$LOGGED" = 1 ] || OVERRIDE="<qemu:override>
    <qemu:device alias='ua-vgpu'>
      <qemu:frontend>
        <qemu:property name='enable-migration' type='string' value='on'/>
      </qemu:frontend>
    </qemu:device>
  </qemu:override>"
guest_xml gv-save "$CON" "<hostdev mode='subsystem' type='mdev' model='vfio-pci'>
      <source><address uuid='$UM'/></source>
      <alias name='ua-vgpu'/>
      $ON_BUS0
    </hostdev>" "$OVERRIDE" >"$T/save.xml"
ktap_diag "the vGPU offers a DMA log: ${LOGGED:-?}${OVERRIDE:+ (no: the domain sets enable-migration=on)}"
t0=$SECONDS
$VIRSH create "$T/save.xml" >"$T/out" 2>&1 && ktap_diag "created in $((SECONDS - t0)) s" &&
	wait_round gv-save "$CON" 3 && is_open $UM
rc=$?
ktap_diag "$(cat "$T/out")" "$($JUDGE "$CON")" "3 rounds in $((SECONDS - t0)) s"
[ $rc -eq 0 ] && $JUDGE "$CON" --min 3 >/dev/null
ktap_result $? "a domain with the vGPU as an mdev hostdev runs the guest: 3 rounds, every result right"

# save_stuck WHEN: where a virsh save that has not ended waits (hw_watch):
# QEMU, virsh and libvirtd thread by thread, QEMU's migration through its
# own QMP socket and its trace events, the vGPU in debugfs, and a verdict
# line when it is QEMU's stall of a paused domain's migration (below). The
# busy loops of the save stop first: the dump's python starts faster.
save_stuck() {
	busy_stop
	{
		echo "virsh save is still $1; the save file: $(stat -c %s "$T/gv-save.img") bytes"
		echo "the vGPU: $(tr '\n' ' ' <"$CORE/sim0/vgpus/$UM/migration")"
		hw_dump --procs '^(qemu-system-x86|virsh|libvirtd|virtlogd|libvirt_iohelp.*)$' \
			--qmp "$T/gv-save.qmp" --trace 2 --log /var/log/libvirt/qemu/gv-save.log --busy 8
		echo "libvirt's job: $(timeout 10 $VIRSH domjobinfo gv-save 2>&1 | paste -sd' ')"
		echo "the vGPU: $(tr '\n' ' ' <"$CORE/sim0/vgpus/$UM/migration")"
	} >"$T/stuck" 2>&1
	hw_diag <"$T/stuck"
	grep '^verdict: ' "$T/stuck" >>"$T/verdict"
}

# busy_start N: N shell loops keep the test VM's CPUs busy (pids in BUSY)
busy_start() {
	local i

	for ((i = 0; i < $1; i++)); do
		(while :; do :; done) &
		BUSY+=($!)
	done
}

busy_stop() {
	[ ${#BUSY[@]} -gt 0 ] || return 0
	kill "${BUSY[@]}" 2>/dev/null
	wait "${BUSY[@]}" 2>/dev/null
	BUSY=()
}
BUSY=()
vmt_on_exit busy_stop

# 3: virsh save; the domain is gone, the vGPU closed, running again.
# libvirt pauses the domain, then has QEMU migrate it to the file. QEMU
# 10.0 switches over only once what is left fits its downtime limit at the
# throughput it measured over the last 100 ms; a stopped VFIO device's
# state (the vGPU's, 0.7 MB here) goes only at the switchover, so when the
# RAM outlasts QEMU's first measure and its last 100 ms carried too little,
# the throughput QEMU measures next is that of its idle loop (a few
# hundred bytes in 100 ms), nothing fits, and it iterates without end
# (admin-guide.rst, "Live migration, save and restore"). The guest is paused already, so any downtime will
# do: the limit is raised to QEMU's largest (2000 s), as the admin guide
# says, with libvirt's migrate-setmaxdowntime. The save runs while the
# test VM's CPUs are busy, as on a loaded host: then the RAM outlasts that
# first measure every time (the stall came in each of 2 such saves without
# the raised limit). A save that has not ended after 60 s (it takes
# seconds) says where it waits, and one that has not after 180 s is given
# up and aborted; neither judges how long it took.
s0=$(mig $UM saves) l0=$(mig $UM dma_log_starts)
t0=$SECONDS
: >"$T/verdict"
busy_start 3
$VIRSH migrate-setmaxdowntime gv-save 2000000 >"$T/out" 2>&1 &&
	hw_watch 60 180 save_stuck "$T/out" $VIRSH save gv-save "$T/gv-save.img"
rc=$?
busy_stop
if [ $rc = 124 ]; then
	ktap_diag "virsh domjobabort: $(timeout 30 $VIRSH domjobabort gv-save 2>&1)"
	[ -s "$T/verdict" ] && ktap_diag "QEMU's stall of a paused domain's migration, although its downtime limit was raised (see the verdict above)"
fi
at=$(last_round "$CON")
ktap_diag "$(cat "$T/out")" "saved at round $at in $((SECONDS - t0)) s" \
	"$(tr '\n' ' ' <"$CORE/sim0/vgpus/$UM/migration")"
# with a DMA log, QEMU started it and read it; without, none was started
if [ "$LOGGED" = 1 ]; then
	how="QEMU's default: the DMA log started and reported clean"
	logged() { [ "$(mig $UM dma_log_starts)" -gt "$l0" ] && [ "$(mig $UM dma_log_reports)" -gt 0 ]; }
else
	how="enable-migration=on through <qemu:override>; no DMA log"
	logged() { [ "$(mig $UM dma_log_starts)" = 0 ]; }
fi
[ $rc -eq 0 ] && [ -s "$T/gv-save.img" ] && ! $VIRSH domstate gv-save >/dev/null 2>&1 &&
	closed_soon $UM && [ "$(mig $UM saves)" = $((s0 + 1)) ] && logged &&
	[ "$(mig $UM dma_logging)" = 0 ] && [ "$(mig $UM state)" = running ]
ktap_result $? "virsh save: the vGPU's state saved once ($how); the vGPU let go"

# 4: virsh restore on the same vGPU; the guest goes on
r0=$(mig $UM resumes)
$VIRSH restore "$T/gv-save.img" >"$T/out" 2>&1 && wait_round gv-save "$CON" $((at + 3))
rc=$?
ktap_diag "$(cat "$T/out")" "$($JUDGE "$CON" --after "$at")"
[ $rc -eq 0 ] && $JUDGE "$CON" --after "$at" >/dev/null &&
	[ "$(mig $UM resumes)" = $((r0 + 1)) ] && [ "$(mig $UM refused)" = 0 ] &&
	[ "$(mig $UM state)" = running ] && is_open $UM
ktap_result $? "virsh restore: the guest goes on from round $at on the same vGPU, every round once and in order, every result right"
$VIRSH destroy gv-save >/dev/null 2>&1
closed_soon $UM
echo 1 >$MDEV/$UM/remove

# 5: the VF vGPU as an unmanaged PCI hostdev runs the guest
# the guest maps all of BAR2: a small type, as in vgpu_migrate_qemu.sh
echo sriov >$PF/gpuvirt/vgpu_model && echo 1 >$PF/sriov_numvfs &&
	id=$(awk '$1 ~ /^[0-9]+$/ && $3 == "A100-1B" { print $1 }' $VF/gpuvirt/creatable_vgpu_types) &&
	[ -n "$id" ] && echo "$id" >$VF/gpuvirt/current_vgpu_type
rc=$?
UV=$(cat $VF/gpuvirt/vgpu_uuid 2>/dev/null)
CON=$T/vf.con
guest_xml gv-vf "$CON" "<hostdev mode='subsystem' type='pci' managed='no'>
      <source><address domain='0x8000' bus='0x00' slot='0x00' function='0x1'/></source>
      $ON_BUS0
    </hostdev>" >"$T/vf.xml"
[ $rc -eq 0 ] && $VIRSH create "$T/vf.xml" >"$T/out" 2>&1 && wait_round gv-vf "$CON" 3 &&
	is_open "$UV"
rc=$?
ktap_diag "VF vGPU $UV ($(cat $VF/gpuvirt/current_vgpu_type 2>/dev/null))" "$(cat "$T/out")" \
	"$($JUDGE "$CON")" "$(grep '^ctx' "$HW/sim0/engine")"
[ $rc -eq 0 ] && $JUDGE "$CON" --min 3 >/dev/null && grep -Eq '^ctx [0-9]+: cmds [1-9]' "$HW/sim0/engine"
ktap_result $? "a domain with the VF vGPU as <hostdev type='pci' managed='no'> runs the guest: 3 rounds, every result right, on sim0's engine"

# 6: it stops; the VF keeps its type and driver
$VIRSH destroy gv-vf >"$T/out" 2>&1 && closed_soon "$UV" &&
	[ "$(cat $VF/gpuvirt/current_vgpu_type)" = "$id" ] && [ -e $VF/driver ]
ktap_result $? "the VF domain stops: the vGPU let go, the VF keeps its type"

ktap_finish
