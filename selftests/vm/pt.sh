#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Passthrough end to end in the test VM: "gpuvirtctl pt check" agrees with
# /sys/kernel/iommu_groups; the display + audio pair (00:05.0, 00:05.1)
# moves as one group and a request to split it is refused; the chipset
# group (00:1f.x, host drivers) is refused; a failure injected at every step
# of an assignment leaves every original driver bound; the lone display
# behind a root port (01:00.0) is assigned, opened by a real VFIO user
# (QEMU) through gpuvirt_vfio_pci, whose open and close hooks show in its
# debugfs counters, is quarantined through the fault knob and cleared by the
# admin; release gives every device back; bad input gets clear errors.
#
# Runs as root in the test VM (selftests/vm-run.sh), whose fixed PCI
# topology it relies on (see the header of selftests/vm-run.sh). KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir

DRV=gpuvirt_vfio_pci
PCI=/sys/bus/pci/devices
DBG=/sys/kernel/debug/$DRV
GPU=0000:00:05.0	# bochs-display, with ...
AUD=0000:00:05.1	# ... ich9-intel-hda in the same group
LONE=0000:01:00.0	# bochs-display alone behind root port 00:06.0
LPC=0000:00:1f.0
SATA=0000:00:1f.2
SMB=0000:00:1f.3
export GPUVIRT_PT_STATE_DIR=$T/state GPUVIRT_PT_UDEV_DIR=$T/udev
unset GPUVIRT_PT_FAIL_AT

vmt_need_root
vmt_need_ctl
vmt_need_modules gpuvirt_vfio_pci
vmt_need_iommu
vmt_need_pci $GPU $AUD $LONE $LPC $SATA $SMB
QEMU=$(command -v qemu-system-x86_64) || vmt_skip "no qemu-system-x86_64"
vmt_need_debugfs
vmt_need_unloaded $DRV

# The host drivers; bochs binds both displays and hda the audio. Devices
# that had none before get none back at the end, for the tests after us.
vmt_pt_found $GPU $AUD $LONE
modprobe -a bochs snd-hda-intel ahci lpc_ich i2c-i801 vfio_pci_core \
	vfio_iommu_type1 2>/dev/null
declare -A ORIG
vmt_pt_note ORIG $GPU $AUD $LONE $LPC $SATA $SMB
[ "${ORIG[$GPU]}" = bochs-drm ] && [ "${ORIG[$AUD]}" = snd_hda_intel ] &&
	[ "${ORIG[$LONE]}" = bochs-drm ] && [ "${ORIG[$SATA]}" = ahci ] ||
	vmt_skip "host drivers missing: $GPU ${ORIG[$GPU]}, $AUD ${ORIG[$AUD]}, $LONE ${ORIG[$LONE]}, $SATA ${ORIG[$SATA]}"

cleanup() {
	vmt_pt_give_back $GPU $AUD $LONE
	[ -n "${MON:-}" ] && kill $MON 2>/dev/null
	vmt_unload $DRV vfio-pci gpuvirt
	vmt_pt_as_found
}
vmt_on_exit cleanup

originals() {
	drivers_are $GPU "${ORIG[$GPU]}" $AUD "${ORIG[$AUD]}" \
		$LONE "${ORIG[$LONE]}" $LPC "${ORIG[$LPC]}" \
		$SATA "${ORIG[$SATA]}" $SMB "${ORIG[$SMB]}"
}
no_state() {
	[ -z "$(ls "$GPUVIRT_PT_STATE_DIR" 2>/dev/null)" ] || {
		echo "# state left: $(ls "$GPUVIRT_PT_STATE_DIR")"
		return 1
	}
}
dbg_is() {
	local v
	v=$(cat "$DBG/$LONE/$1" 2>/dev/null)
	[ "$v" = "$2" ] || {
		echo "# debugfs $1 is \"$v\", not \"$2\""
		return 1
	}
}
# qemu_open: a paused QEMU opens $LONE through VFIO, lists it, and quits.
qemu_open() {
	printf 'info pci\nquit\n' |
		timeout 60 "$QEMU" -accel tcg -machine q35 -m 64 -nodefaults \
			-display none -S -monitor stdio \
			-device "vfio-pci,host=$LONE,id=gvpt" >"$T/qemu" 2>&1
	qrc=$?
	tr -d '\r' <"$T/qemu" | grep -q "PCI device 1234:1111" || {
		[ $qrc = 0 ] && qrc=1
	}
}

vmt_kmsg_mark
ktap_plan 43

# --- check -------------------------------------------------------------------

# 1: every PCI device's report agrees with /sys/kernel/iommu_groups.
for d in "$PCI"/*; do
	"$CTL" -j pt check "${d##*/}" >"$T/check-${d##*/}.json" 2>>"$T/err-all"
done
python3 - "$T" <<'PY'
import glob, json, os, sys
t = sys.argv[1]
groups = {}
for g in glob.glob("/sys/kernel/iommu_groups/*"):
    for m in os.listdir(g + "/devices"):
        groups[m] = (int(os.path.basename(g)), sorted(os.listdir(g + "/devices")))
devs = sorted(os.listdir("/sys/bus/pci/devices"))
assert len(devs) >= 10, devs
for d in devs:
    doc = json.load(open(f"{t}/check-{d}.json"))["pt"]
    assert doc["bdf"] == d, doc
    assert doc["iommu"]["enabled"] is True, doc
    want_group, want_members = groups[d]
    assert doc["group"] == want_group, (d, doc["group"], want_group)
    assert [m["bdf"] for m in doc["members"]] == want_members, (d, doc["members"])
    for m in doc["members"]:
        drv = os.path.realpath(f"/sys/bus/pci/devices/{m['bdf']}/driver")
        drv = os.path.basename(drv) if os.path.exists(f"/sys/bus/pci/devices/{m['bdf']}/driver") else "none"
        assert m["driver"] == drv, (m, drv)
        cls = open(f"/sys/bus/pci/devices/{m['bdf']}/class").read().strip()
        assert int(m["class"], 16) == int(cls, 16), (m, cls)
print(f"# {len(devs)} devices agree with /sys/kernel/iommu_groups")
PY
ktap_result $? "pt check -j of every device matches /sys/kernel/iommu_groups"

# 2-3: the text report of the pair, and its verdict.
run pt check $GPU
has "$T/out" "member $GPU class 0x038000 id 1234:1111 driver bochs-drm role target" &&
	has "$T/out" "member $AUD class 0x040300 id 8086:293e driver snd_hda_intel role slot" &&
	has "$T/out" "iommu on units dmar0 interrupt-remapping on" &&
	has "$T/out" "reset-methods none"
ktap_result $? "pt check $GPU lists the group with its audio function"
has "$T/out" "assignable no" &&
	has "$T/out" "force - the host console (fbcon) draws on $GPU through fb0"
ktap_result $? "pt check $GPU: not assignable without force, the console draws on it"

# 4: the lone device: alone in its group, bus reset, ACS read as root.
run -j pt check $LONE
python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["pt"]
assert [m["bdf"] for m in d["members"]] == ["0000:01:00.0"], d
assert d["reset_methods"] == ["bus"], d
assert d["upstream"] == [{"bdf": "0000:00:06.0", "acs": d["upstream"][0]["acs"]}], d
assert d["upstream"][0]["acs"] in ("on", "off", "none"), d
assert d["console"] is False and d["assignable"] is True, d
assert d["iommu"]["interrupt_remapping"] == "on", d
PY
ktap_result $? "pt check $LONE: alone, bus reset, upstream port 00:06.0, assignable"

# --- bad input -------------------------------------------------------------

run pt check sim0
[ $rc = 2 ] && has "$T/err" '"sim0" is not a PCI address'
ktap_result $? "pt check sim0: usage error, not a PCI address"
run pt check 0000:00:20.0
[ $rc = 2 ] && has "$T/err" "the device must be 2 hex digits from 00 to 1f"
ktap_result $? "pt check 0000:00:20.0: usage error naming the device field"
run pt assign 0000:00:05.9
[ $rc = 2 ] && has "$T/err" "the function must be one digit from 0 to 7"
ktap_result $? "pt assign 0000:00:05.9: usage error naming the function field"
run pt check 0000:09:00.0
[ $rc = 1 ] && has "$T/err" "no PCI device 0000:09:00.0"
ktap_result $? "pt check of a nonexistent device: exit 1, no PCI device"
run pt release 0000:09:00.0
[ $rc = 1 ] && has "$T/err" "no PCI device 0000:09:00.0"
ktap_result $? "pt release of a nonexistent device: exit 1, no PCI device"
run pt release 0000:00:07.0
[ $rc = 1 ] && has "$T/err" "0000:00:07.0 was not assigned by gpuvirtctl"
ktap_result $? "pt release of a device never assigned: exit 1, says so"
run pt assign $LONE driver nouveau
[ $rc = 2 ] && has "$T/err" '"driver" expects one of gpuvirt_vfio_pci, vfio-pci, got "nouveau"'
ktap_result $? "pt assign driver nouveau: usage error naming the driver"

# 12: the VFIO driver must be loaded first.
run pt assign $LONE
[ $rc = 1 ] && has "$T/err" "driver $DRV is not loaded" && originals && no_state
ktap_result $? "pt assign without $DRV loaded: refused, nothing changed"

# gpuvirt_vfio_pci reports to the core's netlink family: it needs the core.
vmt_load -k gpuvirt $DRV
ktap_result $? "insmod gpuvirt and $DRV"

# pt show: the kernel's view, over netlink
run -j pt show $GPU
python3 - "$T/out" "$GPU" "$AUD" <<'PY'
import json, os, sys
out, gpu, aud = sys.argv[1:]
d = json.load(open(out))["pt"][0]
group = int(os.path.basename(os.readlink(f"/sys/bus/pci/devices/{gpu}/iommu_group")))
members = {m["bdf"]: m for m in d["members"]}
ok = (d["bdf"] == gpu and d["iommu-group"] == group and d["bound"] is False
      and set(members) == set(os.listdir(f"/sys/kernel/iommu_groups/{group}/devices"))
      and members[aud]["driver"] == "snd_hda_intel"
      and members[gpu]["driver"] == "bochs-drm" and d["vendor"] == "1234")
sys.exit(0 if ok else 1)
PY
ktap_result $? "pt show $GPU: the kernel's group matches /sys/kernel/iommu_groups, not bound"
run pt show 0000:00:1f.7
[ $rc != 0 ] && has "$T/err" "no PCI device"
ktap_result $? "pt show of a nonexistent device: error, no PCI device"

# --- refusals ----------------------------------------------------------------

# 14: the chipset group holds devices the host uses.
run pt assign $SATA
[ $rc = 1 ] && has "$T/err" "refusing $SATA" &&
	has "$T/err" "$LPC is a chipset ISA/LPC bridge (class 0x060100, lpc_ich)" &&
	originals && no_state
ktap_result $? "pt assign $SATA: refused, the group holds the host's LPC bridge"

# 15: splitting the pair is refused, even with force.
run pt assign $GPU only force
[ $rc = 1 ] && has "$T/err" "$AUD is in the same IOMMU group" &&
	has "$T/err" "would stay bound to snd_hda_intel" && originals && no_state
ktap_result $? "pt assign $GPU only: refused, the audio function would stay behind"

# 16: the console's device needs force.
run pt assign $GPU
[ $rc = 1 ] && has "$T/err" "force: the host console (fbcon) draws on $GPU" &&
	originals && no_state
ktap_result $? "pt assign $GPU without force: refused, the console draws on it"

# 17-23: a failure at each step (6 sysfs writes for two devices, and the
# udev rule) leaves every original driver bound and no state.
for n in 1 2 3 4 5 6 7; do
	GPUVIRT_PT_FAIL_AT=$n run pt assign $GPU force persistent
	[ $rc = 1 ] && has "$T/err" "failure injected by GPUVIRT_PT_FAIL_AT" &&
		originals && no_state && [ -z "$(ls "$GPUVIRT_PT_UDEV_DIR" 2>/dev/null)" ]
	ktap_result $? "failure injected at step $n of assigning the pair: every driver back, no state, no rule"
done

# --- the pair ------------------------------------------------------------------

run -j pt assign $GPU force
python3 - "$T/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["device"] == "0000:00:05.0" and d["driver"] == "gpuvirt_vfio_pci", d
assert [(m["bdf"], m["from"], m["to"]) for m in d["members"]] == [
    ("0000:00:05.0", "bochs-drm", "gpuvirt_vfio_pci"),
    ("0000:00:05.1", "snd_hda_intel", "gpuvirt_vfio_pci")], d
PY
[ $? = 0 ] && [ $rc = 0 ] && drivers_are $GPU $DRV $AUD $DRV && [ -c /dev/vfio/1 ]
ktap_result $? "pt assign $GPU force: the pair moves together to $DRV"

grep -qx "member $GPU bochs-drm -" "$GPUVIRT_PT_STATE_DIR/$GPU.state" &&
	grep -qx "member $AUD snd_hda_intel -" "$GPUVIRT_PT_STATE_DIR/$GPU.state"
ktap_result $? "the state file remembers both original drivers"

run pt assign $GPU force
[ $rc = 0 ] && has "$T/err" "already assigned" && drivers_are $GPU $DRV $AUD $DRV
ktap_result $? "pt assign again: already assigned, exit 0"

run -j pt check $AUD
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["pt"]; sys.exit(not (d["host_driver"] is False and all(m["driver"] == "gpuvirt_vfio_pci" for m in d["members"])))' "$T/out"
ktap_result $? "pt check after assign: the group is on $DRV, no host driver"

# 28: release through the other member of the group.
run pt release $AUD
[ $rc = 0 ] && originals && no_state
ktap_result $? "pt release $AUD: both functions back to bochs-drm and snd_hda_intel"

# --- the lone device, with QEMU --------------------------------------------------

run pt assign $LONE persistent
rule=$GPUVIRT_PT_UDEV_DIR/61-gpuvirt-pt-$LONE.rules
group=$(basename "$(readlink $PCI/$LONE/iommu_group)")
[ $rc = 0 ] && drivers_are $LONE $DRV && [ -c "/dev/vfio/$group" ] &&
	grep -qx "ACTION==\"add\", SUBSYSTEM==\"pci\", KERNEL==\"$LONE\", ATTR{driver_override}=\"$DRV\", RUN{builtin}+=\"kmod load $DRV\"" "$rule"
ktap_result $? "pt assign $LONE persistent: bound to $DRV, udev rule written"

dbg_is open_count 0 && dbg_is close_count 0 && dbg_is opener none &&
	dbg_is quarantine 0
ktap_result $? "debugfs: no open yet, not quarantined"

"$CTL" -j monitor >"$T/mon" 2>&1 &
MON=$!
vmt_wait_listening $MON || echo "# the monitor is not listening after 60 s"
qemu_open
[ $qrc = 0 ] || sed 's/^/# qemu: /' "$T/qemu"
[ $qrc = 0 ] && dbg_is open_count 1 && dbg_is close_count 1 &&
	dbg_is reset_count 1 && dbg_is failure_count 0 &&
	grep -q "^pid [0-9]* comm qemu-system-x86 closed$" "$DBG/$LONE/opener"
ktap_result $? "QEMU opens $LONE: open and close hooks counted, reset after close, opener recorded"

run -j pt show $LONE
python3 - "$T/out" "$LONE" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["pt"][0]
ok = (d["bdf"] == sys.argv[2] and d["bound"] is True and d["open"] is False
      and d["opens"] == 1 and d["closes"] == 1 and d["resets"] == 1
      and d["failures"] == 0 and d["quarantined"] is False
      and d["opener-comm"] == "qemu-system-x86" and d["opener-pid"] > 0
      and [m["bdf"] for m in d["members"]] == [sys.argv[2]])
sys.exit(0 if ok else 1)
PY
ktap_result $? "pt show $LONE over netlink: bound, the counters and the opener"

echo 1 >"$DBG/$LONE/fail_check"
qemu_open
[ $qrc = 0 ] && dbg_is quarantine 1 && dbg_is failure_count 1 &&
	grep -q "injected" "$DBG/$LONE/quarantine_reason" &&
	vmt_kmsg | grep -q "$LONE: quarantined: post-close check failed"
ktap_result $? "a failed post-close check (fault knob) quarantines the device"
vmt_wait_lines "$T/mon" '"event":"quarantine"' 1
kill $MON 2>/dev/null
wait $MON 2>/dev/null
MON=
python3 - "$T/mon" "$LONE" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
pt = [(e["event"], e["pt"]) for e in ev if "pt" in e]
seq = [k for k, p in pt if p["bdf"] == sys.argv[2]]
opened = [p for k, p in pt if k == "open"]
ok = (seq == ["open", "close", "open", "quarantine"]
      and opened and opened[0]["opener-comm"] == "qemu-system-x86"
      and pt[-1][1]["quarantined"] is True)
if not ok:
    print("# monitor saw:", seq)
sys.exit(0 if ok else 1)
PY
ktap_result $? "monitor: open, close, open and quarantine notifications, in order"

qemu_open
[ $qrc != 0 ] && dbg_is refused_count 1 && dbg_is open_count 2 &&
	vmt_kmsg | grep -q "$LONE: refusing open: quarantined"
ktap_result $? "a quarantined device refuses the next open"

echo 0 >"$DBG/$LONE/quarantine" && qemu_open
[ $qrc = 0 ] && dbg_is quarantine 0 && dbg_is open_count 3 &&
	dbg_is close_count 3
ktap_result $? "after the admin clears the quarantine, QEMU opens it again"

run pt release $LONE
[ $rc = 0 ] && originals && no_state && [ ! -e "$rule" ] && [ ! -e "$DBG/$LONE" ]
ktap_result $? "pt release $LONE: bochs-drm back, state and udev rule gone"

# 35-36: plain vfio-pci on request.
modprobe vfio-pci
run pt assign $LONE driver vfio-pci
[ $rc = 0 ] && drivers_are $LONE vfio-pci
ktap_result $? "pt assign $LONE driver vfio-pci"
run pt release $LONE
[ $rc = 0 ] && originals && no_state
ktap_result $? "pt release $LONE from vfio-pci: bochs-drm back"

rmmod $DRV
ktap_result $? "rmmod $DRV"

vmt_kernel_quiet
ktap_result $? "no kernel warning, BUG or Oops"

ktap_finish
