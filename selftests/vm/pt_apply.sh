#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Passthrough in the declarative config, end to end in the test VM: "apply"
# assigns the lone display behind a root port (01:00.0) to gpuvirt_vfio_pci,
# a second apply does nothing and "assert" agrees; assert notices a member
# unbound or a udev rule removed behind its back, and apply mends them; a
# change of driver releases and assigns again; --prune releases what the
# file leaves out; the display + audio pair (00:05.0, 00:05.1) moves as one
# group when the file names either; bad entries are refused naming the
# field or the reason, with nothing changed; a failure injected with
# GPUVIRT_PT_FAIL_AT part-way through an apply that also creates a
# simulated GPU and a vGPU undoes all of it.
#
# Runs as root in the test VM (selftests/vm-run.sh), whose fixed PCI
# topology it relies on (see the header of selftests/vm-run.sh). State files
# and udev rules go to a mktemp directory. KTAP.

# shellcheck source=selftests/lib/vmtest.sh
. "${GPUVIRT_SRC:-.}/selftests/lib/vmtest.sh" || exit 1
vmt_init
vmt_tmpdir
RUN_LOGS_OUT=1

DRV=gpuvirt_vfio_pci
PCI=/sys/bus/pci/devices
GPU=0000:00:05.0	# bochs-display, with ...
AUD=0000:00:05.1	# ... ich9-intel-hda in the same group
LONE=0000:01:00.0	# bochs-display alone behind root port 00:06.0
U1=5a3c0001-0000-4000-8000-0000000000a1
export GPUVIRT_PT_STATE_DIR=$T/state GPUVIRT_PT_UDEV_DIR=$T/udev
unset GPUVIRT_PT_FAIL_AT
STATE=$GPUVIRT_PT_STATE_DIR
RULE=$GPUVIRT_PT_UDEV_DIR/61-gpuvirt-pt-$LONE.rules

vmt_need_root
vmt_need_ctl
vmt_need_modules gpuvirt gpuvirt_sim gpuvirt_vfio_pci
vmt_need_iommu
vmt_need_pci $GPU $AUD $LONE
vmt_need_unloaded $DRV

vmt_pt_found $GPU $AUD $LONE
modprobe -a bochs snd-hda-intel vfio_pci_core vfio_iommu_type1 vfio mdev \
	2>/dev/null
# A test before us may have left them unbound with the modules loaded.
for d in $GPU $AUD $LONE; do
	[ -e "$PCI/$d/driver" ] || echo $d >/sys/bus/pci/drivers_probe
done 2>/dev/null
declare -A ORIG
vmt_pt_note ORIG $GPU $AUD $LONE
[ "${ORIG[$GPU]}" = bochs-drm ] && [ "${ORIG[$AUD]}" = snd_hda_intel ] &&
	[ "${ORIG[$LONE]}" = bochs-drm ] ||
	vmt_skip "host drivers missing: $GPU ${ORIG[$GPU]}, $AUD ${ORIG[$AUD]}, $LONE ${ORIG[$LONE]}"

cleanup() {
	vmt_remove_mdevs
	vmt_pt_give_back $GPU $AUD $LONE
	vmt_unload $DRV vfio-pci gpuvirt_sim gpuvirt
	vmt_pt_as_found
}
vmt_on_exit cleanup

originals() {
	drivers_are $GPU "${ORIG[$GPU]}" $AUD "${ORIG[$AUD]}" \
		$LONE "${ORIG[$LONE]}"
}
# states_are BDF...: the state files are exactly those of these devices.
states_are() {
	local have want=
	have=$(cd "$STATE" 2>/dev/null && ls)
	[ $# -gt 0 ] && want=$(printf '%s.state\n' "$@")
	[ "$have" = "$want" ] || {
		echo "# state files: \"$have\", not \"$want\""
		return 1
	}
}
no_sim() {
	[ ! -e /sys/bus/gpuvirt_sim/devices/sim0 ] &&
		[ -z "$(ls "$MDEV" 2>/dev/null)" ] || {
		echo "# left: $(ls /sys/bus/gpuvirt_sim/devices "$MDEV" 2>/dev/null)"
		return 1
	}
}
# file NAME: write stdin to $T/NAME.yaml
file() {
	cat >"$T/$1.yaml"
}

vmt_kmsg_mark
ktap_plan 22

vmt_load -k gpuvirt && vmt_load gpuvirt_sim $DRV && modprobe vfio-pci
ktap_result $? "insmod gpuvirt, gpuvirt_sim and $DRV; modprobe vfio-pci"

file lone <<EOF
passthrough:
  - device: $LONE
EOF

# 2: --dry-run prints the step, changes nothing; JSON names its fields.
run apply -f "$T/lone.yaml" --dry-run
[ $rc = 0 ] && lines_are "$T/out" "+ pt $LONE driver $DRV" && originals && states_are
ok=$?
run -j apply -f "$T/lone.yaml" --dry-run
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plan"] == [{"action": "add", "pt": {"device": sys.argv[2],
    "driver": "gpuvirt_vfio_pci", "force": False, "persistent": False}}], d
' "$T/out" $LONE && [ $ok = 0 ] && originals
ktap_result $? "apply --dry-run: prints + pt $LONE driver $DRV, changes nothing"

run assert -f "$T/lone.yaml"
[ $rc = 1 ] && has "$T/out" "+ pt $LONE driver $DRV" &&
	has "$T/err" "differs from $T/lone.yaml in 1 place"
ktap_result $? "assert before apply: exit 1, the assignment is missing"

# 4-6: apply, again, assert.
run apply -f "$T/lone.yaml"
[ $rc = 0 ] && lines_are "$T/out" "+ pt $LONE driver $DRV" && drivers_are $LONE $DRV &&
	drivers_are $GPU bochs-drm $AUD snd_hda_intel && states_are $LONE &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state" &&
	grep -qx "driver $DRV" "$STATE/$LONE.state" && [ ! -e "$RULE" ]
ktap_result $? "apply: $LONE to $DRV, its state file remembers bochs-drm"

run apply -f "$T/lone.yaml"
[ $rc = 0 ] && lines_are "$T/out" "nothing to do" && drivers_are $LONE $DRV &&
	states_are $LONE
ktap_result $? "a second apply: nothing to do"

run assert -f "$T/lone.yaml"
[ $rc = 0 ] && [ ! -s "$T/out" ] && [ ! -s "$T/err" ]
ktap_result $? "assert: the system matches the file"

# 7-8: a member unbound behind the file's back.
echo $LONE >"$PCI/$LONE/driver/unbind"
run assert -f "$T/lone.yaml"
[ $rc = 1 ] && has "$T/out" "- pt $LONE driver $DRV" &&
	has "$T/out" "+ pt $LONE driver $DRV"
ktap_result $? "assert: notices $LONE unbound from $DRV"
run apply -f "$T/lone.yaml"
[ $rc = 0 ] && drivers_are $LONE $DRV && states_are $LONE &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state"
ktap_result $? "apply: binds $LONE again, the original driver still bochs-drm"

# 9-10: persistent, and its udev rule.
file lone_persist <<EOF
passthrough:
  - device: '$LONE'
    driver: gpuvirt_vfio_pci
    persistent: true
EOF
run apply -f "$T/lone_persist.yaml"
[ $rc = 0 ] && lines_are "$T/out" "- pt $LONE driver $DRV" \
	"+ pt $LONE driver $DRV persistent" && drivers_are $LONE $DRV &&
	grep -qx "ACTION==\"add\", SUBSYSTEM==\"pci\", KERNEL==\"$LONE\", ATTR{driver_override}=\"$DRV\", RUN{builtin}+=\"kmod load $DRV\"" "$RULE" &&
	grep -qx "persistent 1" "$STATE/$LONE.state"
ktap_result $? "apply persistent: true: the udev rule is written"
rm -f "$RULE"
run assert -f "$T/lone_persist.yaml"
[ $rc = 1 ] && has "$T/out" "+ pt $LONE driver $DRV persistent"
ok=$?
run apply -f "$T/lone_persist.yaml"
[ $ok = 0 ] && [ $rc = 0 ] && [ -e "$RULE" ] && drivers_are $LONE $DRV
ktap_result $? "assert notices the udev rule gone; apply writes it again"

# 11: a change of driver: release, then assign to vfio-pci.
file lone_vfio <<EOF
passthrough:
  - device: $LONE
    driver: vfio-pci
EOF
run apply -f "$T/lone_vfio.yaml"
[ $rc = 0 ] && lines_are "$T/out" "- pt $LONE driver $DRV persistent" \
	"+ pt $LONE driver vfio-pci" && drivers_are $LONE vfio-pci &&
	grep -qx "driver vfio-pci" "$STATE/$LONE.state" &&
	grep -qx "member $LONE bochs-drm -" "$STATE/$LONE.state" &&
	[ ! -e "$RULE" ]
ktap_result $? "apply driver: vfio-pci: $LONE moves from $DRV to vfio-pci, the rule goes"

# 12-13: a file without the device leaves it; --prune releases it.
file empty <<EOF
passthrough: []
EOF
run apply -f "$T/empty.yaml"
[ $rc = 0 ] && lines_are "$T/out" "nothing to do" && drivers_are $LONE vfio-pci
ktap_result $? "apply of a file without it, no --prune: nothing to do"
run apply -f "$T/empty.yaml" --prune
[ $rc = 0 ] && lines_are "$T/out" "- pt $LONE driver vfio-pci" && originals &&
	states_are
ktap_result $? "apply --prune: $LONE released, bochs-drm back, no state"

# 14-18: bad entries: refused, naming the field or the reason.
file bad_driver <<EOF
passthrough:
  - device: $LONE
    driver: nouveau
EOF
run apply -f "$T/bad_driver.yaml"
[ $rc = 2 ] && has "$T/err" "$T/bad_driver.yaml:3:13: \"driver\" expects one of gpuvirt_vfio_pci, vfio-pci, got \"nouveau\"" &&
	originals && states_are
ktap_result $? "an unknown driver: exit 2, the error names \"driver\" and its line"
file bad_bdf <<EOF
passthrough:
  - device: 0000:01:00.0
  - device: 0000:00:20.0
EOF
run apply -f "$T/bad_bdf.yaml"
[ $rc = 2 ] && has "$T/err" "$T/bad_bdf.yaml:3:13: \"device\" expects a PCI address" &&
	originals && states_are
ktap_result $? "a bad PCI address: exit 2, the error names \"device\" and its line"
file missing <<EOF
passthrough:
  - device: 0000:09:00.0
EOF
run apply -f "$T/missing.yaml"
[ $rc = 1 ] && has "$T/err" "$T/missing.yaml:2: no PCI device 0000:09:00.0" &&
	has "$T/err" "nothing was changed" && originals && states_are
ktap_result $? "a device that does not exist: a conflict, nothing changed"
file console <<EOF
passthrough:
  - device: $LONE
  - device: $GPU
EOF
run apply -f "$T/console.yaml"
[ $rc = 1 ] && has "$T/err" "$T/console.yaml:3: refusing $GPU:" &&
	has "$T/err" "force: the host console (fbcon) draws on $GPU" &&
	has "$T/err" "nothing was changed" && originals && states_are
ktap_result $? "the console's device without force: refused before anything changes"
file split <<EOF
passthrough:
  - device: $GPU
    force: true
  - device: $AUD
    force: true
EOF
run apply -f "$T/split.yaml"
[ $rc = 1 ] && has "$T/err" "$T/split.yaml:4: $AUD is in IOMMU group" &&
	has "$T/err" "with $GPU (line 2)" && originals && states_are
ktap_result $? "two devices of one IOMMU group: refused, naming both"

# 19-20: the pair moves as one group, whichever member the file names.
file pair <<EOF
passthrough:
  - device: $AUD
    force: true
EOF
run apply -f "$T/pair.yaml"
[ $rc = 0 ] && lines_are "$T/out" "+ pt $AUD driver $DRV force" &&
	drivers_are $GPU $DRV $AUD $DRV && states_are $AUD &&
	grep -qx "member $GPU bochs-drm -" "$STATE/$AUD.state"
ok=$?
run assert -f "$T/pair.yaml"
[ $ok = 0 ] && [ $rc = 0 ]
ktap_result $? "apply $AUD force: the display and audio pair move together, assert agrees"
run apply -f "$T/empty.yaml" --prune
[ $rc = 0 ] && lines_are "$T/out" "- pt $AUD driver $DRV" && originals && states_are
ktap_result $? "apply --prune: the pair goes back to bochs-drm and snd_hda_intel"

# 21: a failure injected in the middle of an apply that also makes a GPU
# and a vGPU: the first assignment succeeds (3 sysfs writes and its udev
# rule), the pair's fails at its 5th write (unbinding the audio function);
# all is undone.
file full <<EOF
simulated-gpus:
  - id: 0
    model: h200-141gb
gpus:
  - id: 0
    vgpus:
      - uuid: $U1
        type: H200-35C
passthrough:
  - device: $LONE
    persistent: true
  - device: $GPU
    force: true
EOF
GPUVIRT_PT_FAIL_AT=5 run apply -f "$T/full.yaml"
[ $rc = 1 ] && has "$T/err" "failure injected by GPUVIRT_PT_FAIL_AT" &&
	has "$T/err" "step 4 of 4 failed (+ pt $GPU driver $DRV); undoing the 3 done before it" &&
	has "$T/err" "nothing was changed" && originals && states_are &&
	[ -z "$(ls "$GPUVIRT_PT_UDEV_DIR" 2>/dev/null)" ] && no_sim
ktap_result $? "GPUVIRT_PT_FAIL_AT=5: the pair's failure undoes $LONE, the vGPU and the GPU"

vmt_kernel_quiet
ktap_result $? "no kernel warning, BUG or Oops"

ktap_finish
